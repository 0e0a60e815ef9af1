#!/bin/sh
# check_plugin_symbols.sh — spank_vnfs.so must load in srun and slurmstepd:
# its only unresolved names may be Slurm's API (slurm_*, spank_*), provided
# by the process that loads it, and versioned ones from its linked libraries
# (libc, json-c).  Anything else (a libvnfs source missing from the plugin, a
# sanitizer hook) would make dlopen fail on every node.  Exports must be
# Slurm's entry points only.
plugin=${1:-spank/.libs/spank_vnfs.so}
[ -f "$plugin" ] || { echo "FAIL: $plugin not built"; exit 1; }
status=0
unexpected=$(nm -D --undefined-only "$plugin" | awk '$1 == "U" && $2 !~ /@/ && $2 !~ /^(slurm_|spank_)/ { print $2 }')
if [ -n "$unexpected" ]; then
	echo "FAIL: unresolved names that no Slurm process provides:" $unexpected
	status=1
fi
exported=$(nm -D --defined-only "$plugin" | awk '{ print $3 }' | grep -Ev '^(slurm_spank_[a-z_]+|plugin_(name|type|version)|spank_plugin_version)$')
if [ -n "$exported" ]; then
	echo "FAIL: exports beyond Slurm's entry points:" $exported
	status=1
fi
for symbol in slurm_spank_init slurm_spank_task_post_fork slurm_spank_exit slurm_spank_job_epilog plugin_name; do
	nm -D --defined-only "$plugin" | grep -q " $symbol\$" || { echo "FAIL: $symbol not exported"; status=1; }
done
[ $status = 0 ] && echo "PASS: $plugin resolves only Slurm's API and exports only its entry points"
exit $status
