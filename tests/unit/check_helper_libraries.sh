#!/bin/sh
# check_helper_libraries.sh — vnfs-helper must not link the optional outputs'
# libraries: Kafka and HTTP are modules loaded only when enabled
# (helper/outputs/sink_module.c), and linked in, librdkafka and libcurl with what they
# pull in cost every helper about 3 MiB of memory (docs/PERFORMANCE.md).
helper=${1:-vnfs-helper}
[ -f "$helper" ] || { echo "FAIL: $helper not built"; exit 1; }
needed=$(readelf -d "$helper" | awk '/\(NEEDED\)/ { gsub(/[][]/, "", $5); print $5 }')
[ -n "$needed" ] || { echo "FAIL: readelf shows no NEEDED entries in $helper"; exit 1; }
linked=$(printf '%s\n' $needed | grep -E '^lib(rdkafka|curl)' | tr '\n' ' ')
if [ -n "$linked" ]; then
	echo "FAIL: $helper links $linked(the Kafka and HTTP outputs must stay modules)"
	exit 1
fi
echo "PASS: $helper links neither librdkafka nor libcurl:" $needed
