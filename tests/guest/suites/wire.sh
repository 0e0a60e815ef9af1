#!/usr/bin/env bash
# wire.sh — what each job cost the server: its NFS RPCs per procedure, as
# the helper reports them (QUERY's "wire"), against the mount's own counts
# in /proc/self/mountstats, on NFS v3, v4.0, v4.1 and v4.2.  Per version one
# job, registered with vnfs-register, writes 64 MiB through a shared mapping
# and exits before any of it is sent (root's sync writes it back, from the
# flusher: the pages' open context says whose it is), writes 8 MiB and
# fsyncs, reads 64 MiB cold (readahead), reads 8 MiB through a mapping, and
# runs a metadata loop.  Every procedure's RPCs, transmissions, bytes and
# errors of the job plus the mount's background and unattributed rows equal
# the mount's delta exactly.
source /vnfs/src/tests/guest/lib/guest.sh

BUILD=${VNFS_BUILD:-/vnfs/src}
HELPER=$BUILD/vnfs-helper
WORKLOAD=$BUILD/tests/tools/nfs-workload
REGISTER=$BUILD/vnfs-register
SEND=$BUILD/tests/tools/vnfs-send
COMPARE=/vnfs/src/tests/guest/lib/wire_compare.py
RUN=/run/vnfs-wire
SOCKET=$RUN/vnfs.sock
PINS=$RUN/pins
MIB=1048576
mkdir -p $RUN
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
cat > $RUN/vnfs.conf <<CONF
[helper]
socket = $SOCKET
state_dir = $RUN/state
report_dir = $RUN/reports
pin_dir = /sys/fs/bpf/vnfs-wire
interval = 1s
[sqlite]
path = $RUN/history.db
CONF
"$HELPER" --config $RUN/vnfs.conf > $VNFS_OUT/helper.log 2>&1 &
until_ok 60 grep -q 'ready:' $VNFS_OUT/helper.log || { fail "helper not ready"; tail $VNFS_OUT/helper.log; exit 1; }
check "the RPC counters are attached (no warning about them)" \
	bash -c "! grep -q 'RPC' $VNFS_OUT/helper.log"
guest_start_nfs || exit 1
CGROUPS=${VNFS_CGROUP2_MOUNT:-/sys/fs/cgroup}/vnfs-wire
mkdir -p $CGROUPS

in_job() { bash -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' _ "$CGROUPS/$job" "$@"; }
node_rows() { bpftool -j map dump pinned /sys/fs/bpf/vnfs-wire/wire_stats > "$1"; }
query() { "$SEND" "$SOCKET" "{\"v\":1,\"type\":\"query\",\"source\":\"pbs\",\"job\":\"$1\"}" | jq .job; }
# The helper's view, the mount's and the kernel's rows, taken again until
# nothing moved while they were read (a lease renewal may end between two).
snapshot_after() {
	local tries
	for tries in 1 2 3 4 5 6 7 8 9 10; do
		node_rows $out/node-after.json
		query $job > $out/job.json
		cp /proc/self/mountstats $out/mountstats-after.txt
		node_rows $out/node-after-check.json
		cmp -s $out/node-after.json $out/node-after-check.json && return 0
		sleep 1
	done
	return 1
}

for version in 3 4.0 4.1 4.2; do
	mark "v$version"
	mount_dir=$(nfs_mount_of $version)
	guest_mount_nfs $version "$mount_dir" || continue
	job=wire-${version/./-}
	out=$VNFS_OUT/v$version
	mkdir -p $CGROUPS/$job $out "$mount_dir/meta"
	device=$(stat -c %d "$mount_dir")
	check "v$version: vnfs-register registers $job" \
		"$REGISTER" --socket $SOCKET --source pbs --job $job --cgroup $CGROUPS/$job
	# A task that stays in the cgroup, so that the step lives until its
	# counts are read, writeback after its writer's exit included.
	in_job sleep 600 &
	holder=$!
	node_rows $out/node-before.json
	cp /proc/self/mountstats $out/mountstats-before.txt
	in_job "$WORKLOAD" mapped-write "$mount_dir/mapped" 64 > /dev/null
	check_eq "v$version: the mapped writer exited" $? 0
	sync
	in_job "$WORKLOAD" write "$mount_dir/written" 8 > /dev/null
	echo 3 > /proc/sys/vm/drop_caches
	in_job "$WORKLOAD" reader "$mount_dir/mapped" "$mount_dir" > /dev/null
	echo 3 > /proc/sys/vm/drop_caches
	in_job "$WORKLOAD" mmap "$mount_dir/written" > /dev/null
	in_job "$WORKLOAD" writer "$mount_dir/meta" > /dev/null
	check_eq "v$version: the job's programs ran" $? 0
	check "v$version: a snapshot with no RPC ending while it was taken" snapshot_after
	python3 $COMPARE "$mount_dir" "$device" $out/mountstats-before.txt $out/mountstats-after.txt \
		$out/node-before.json $out/node-after.json $out/job.json > $out/compare.txt
	check_eq "v$version: every procedure's RPCs, transmissions, bytes and errors: job + background + unattributed = mountstats" \
		"$(tail -1 $out/compare.txt)" "mismatches=0"
	sed 's/^/    /' $out/compare.txt
	wire() { jq "[.wire[] | select(.device == $device and .procedure == \"$1\") | .$2] | add // 0" $out/job.json; }
	check_ge "v$version: the job's WRITE RPCs sent its 72 MiB, the mapped pages' written back after it exited" \
		"$(wire WRITE bytes_sent)" $((72 * MIB))
	check_ge "v$version: the job's READ RPCs brought its 72 MiB read cold" \
		"$(wire READ bytes_received)" $((72 * MIB))
	check_ge "v$version: the job's COMMITs" "$(wire COMMIT rpcs)" 1
	check_eq "v$version: no retransmissions on loopback" \
		"$(jq "[.wire[] | .transmissions - .rpcs] | add" $out/job.json)" 0
	kill $holder; wait $holder 2> /dev/null
	"$REGISTER" --socket $SOCKET --end --source pbs --job $job > /dev/null
	"$REGISTER" --socket $SOCKET --finish --source pbs --job $job > /dev/null
done
guest_done
