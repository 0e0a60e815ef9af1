#!/bin/sh
# check_configure_summary.sh — the summary configure prints at its end shows
# the paths things will be installed to (/usr/local/lib/systemd/system), not
# the unexpanded variables make would expand later (${prefix}/lib/...).
# configure's messages are in config.log, in the build tree make check runs in.
log=config.log
[ -f "$log" ] || { echo "FAIL: no $log in $(pwd)"; exit 1; }
# From the summary's first line to its last.
summary=$(sed -n '/^  vnfs [0-9]/,/^    documentation:/p' "$log")
[ -n "$summary" ] || { echo "FAIL: no configure summary in $log"; exit 1; }
status=0
for key in "programs:" "configuration:" "SPANK plugins:" "systemd units:" "documentation:"; do
	line=$(printf '%s\n' "$summary" | grep -F "    $key")
	[ -n "$line" ] || { echo "FAIL: the summary has no '$key' line"; status=1; continue; }
	case $line in
	*'$'*) echo "FAIL: unexpanded path in the configure summary: $line"; status=1 ;;
	*"$key"*" /"*) ;;
	*) echo "FAIL: not an absolute path in the configure summary: $line"; status=1 ;;
	esac
done
[ $status = 0 ] && echo "PASS: the configure summary shows expanded, absolute paths"
exit $status
