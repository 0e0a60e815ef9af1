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
# the mount's delta exactly.  Then: two jobs at once, a job identified late,
# a slow server, a soft mount's timeouts, two findings, and (last) a user's
# flood of RPC rows from cgroups of its own.  From v4.2 on the helper runs
# in probe mode kprobe, where the open-context note is a return probe.
source /vnfs/src/tests/guest/lib/guest.sh

BUILD=${VNFS_BUILD:-/vnfs/src}
HELPER=$BUILD/vnfs-helper
WORKLOAD=$BUILD/tests/tools/nfs-workload
REGISTER=$BUILD/vnfs-register
REPORT=$BUILD/vnfs-report
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
[jsonlog]
enabled = true
path = $RUN/records.jsonl
[prometheus]
listen = 127.0.0.1:9716
CONF
"$HELPER" --config $RUN/vnfs.conf > $VNFS_OUT/helper.log 2>&1 &
HELPER_PID=$!
until_ok 180 grep -q 'ready:' $VNFS_OUT/helper.log || { fail "helper not ready"; tail $VNFS_OUT/helper.log; exit 1; }
check "the RPC counters are attached (no warning about them)" \
	bash -c "! grep -q 'RPC' $VNFS_OUT/helper.log"
check "the open-context note is the fexit's: no return probe event on alloc_nfs_open_context" \
	bash -c "! grep -q alloc_nfs_open_context /sys/kernel/tracing/kprobe_events"
# switch_to_kprobes: the helper again, in probe mode kprobe, where the
# open-context note is a return probe (wire_probes.c), not a fexit.  The
# fentry helper's pins are removed first, so that it takes over nothing.
switch_to_kprobes() {
	kill -TERM $HELPER_PID; wait $HELPER_PID
	check "kprobe: the fentry helper's pins removed" \
		"$HELPER" --config $RUN/vnfs.conf --unload > $VNFS_OUT/unload.log 2>&1
	"$HELPER" --config $RUN/vnfs.conf --probes kprobe > $VNFS_OUT/helper-kprobe.log 2>&1 &
	HELPER_PID=$!
	until_ok 180 grep -q 'ready:' $VNFS_OUT/helper-kprobe.log ||
		{ fail "kprobe: helper not ready"; tail $VNFS_OUT/helper-kprobe.log; exit 1; }
	check "kprobe: the RPC counters are attached (no warning about them)" \
		bash -c "! grep -q 'RPC' $VNFS_OUT/helper-kprobe.log"
	check_eq "kprobe: the open-context note is a return probe on alloc_nfs_open_context for 1,024 calls" \
		"$(grep alloc_nfs_open_context /sys/kernel/tracing/kprobe_events | sed -E 's/_[0-9]+ / /')" \
		"r1024:vnfs/alloc_nfs_open_context alloc_nfs_open_context"
}
guest_start_nfs || exit 1
CGROUPS=${VNFS_CGROUP2_MOUNT:-/sys/fs/cgroup}/vnfs-wire
mkdir -p $CGROUPS

# in_job JOB COMMAND...: COMMAND run in JOB's cgroup.
in_job() { bash -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' _ "$CGROUPS/$1" "${@:2}"; }
node_rows() { "$BUILD/tests/tools/wire-rows" /sys/fs/bpf/vnfs-wire/wire_stats > "$1"; }
# long_report JOB: vnfs-report -l of the running job (live, from the helper).
long_report() { "$REPORT" --config $RUN/vnfs.conf --timeout 120 -j "pbs:$1" -l; }
query() { "$SEND" "$SOCKET" "{\"v\":1,\"type\":\"query\",\"source\":\"pbs\",\"job\":\"$1\"}" | jq .job; }
declare -A holders
# start_job JOB: registered, with a task that stays in its cgroup so that
# the step lives until its counts are read (writeback after its writers'
# exit included).
start_job() {
	mkdir -p "$CGROUPS/$1"
	check "$1: vnfs-register registers it" \
		"$REGISTER" --socket $SOCKET --source pbs --job "$1" --cgroup "$CGROUPS/$1"
	in_job "$1" sleep 600 &
	holders[$1]=$!
}
end_job() {
	kill "${holders[$1]}"; wait "${holders[$1]}" 2> /dev/null
	"$REGISTER" --socket $SOCKET --end --source pbs --job "$1" > /dev/null
	"$REGISTER" --socket $SOCKET --finish --source pbs --job "$1" > /dev/null
}
# snapshot WHEN DIR MOUNTPOINT JOB...: the kernel's rows, the helper's view
# of each running JOB and the mounts' counts, as DIR/node-WHEN.txt,
# DIR/JOB.json and DIR/mountstats-WHEN.txt, taken again until no RPC of no
# workload on the mount ended while they were read (a lease renewal between
# two reads would be in one of them only).  The jobs' own RPCs are over:
# their programs have exited.
snapshot() {
	local when=$1 dir=$2 device tries job
	device=$(stat -c %d "$3")
	shift 3
	for tries in $(seq 1 20); do
		node_rows "$dir/node-$when.txt"
		for job in "$@"; do query "$job" > "$dir/$job.json"; done
		cp /proc/self/mountstats "$dir/mountstats-$when.txt"
		node_rows "$dir/node-$when-check.txt"
		[ "$(python3 $COMPARE --rows $device "$dir/node-$when.txt")" = \
			"$(python3 $COMPARE --rows $device "$dir/node-$when-check.txt")" ] && return 0
	done
	return 1
}
before() { snapshot before "$@"; }
after() { snapshot after "$@"; }
# compare_to_mountstats LABEL DIR MOUNTPOINT JOB...: every procedure's RPCs,
# transmissions, bytes and errors of the jobs plus the mount's background and
# unattributed rows = the mount's mountstats delta.
compare_to_mountstats() {
	local label=$1 dir=$2 mountpoint=$3 job files=()
	shift 3
	for job in "$@"; do files+=("$dir/$job.json"); done
	python3 $COMPARE "$mountpoint" "$(stat -c %d "$mountpoint")" "$dir/mountstats-before.txt" \
		"$dir/mountstats-after.txt" "$dir/node-before.txt" "$dir/node-after.txt" \
		"${files[@]}" > "$dir/compare.txt"
	check_eq "$label: every procedure's RPCs, transmissions, bytes and errors: jobs + background + unattributed = mountstats" \
		"$(tail -1 "$dir/compare.txt")" "mismatches=0"
	sed 's/^/    /' "$dir/compare.txt"
}
# wire JSON PROCEDURE FIELD [DEVICE]: the sum of FIELD over the job's rows
# of PROCEDURE ("" all) on the mount of st_dev DEVICE (all mounts without).
# The device is taken while the mount answers: a soft mount's stat fails
# while its server does not.
wire() {
	local device=${4:-0}
	jq "[.wire[] | select(($device == 0 or .device == $device) and (\"$2\" == \"\" or .procedure == \"$2\")) | .$3] | add // 0" "$1"
}

# The last version on the kprobe path: its mapped pages, written back after
# the writer exited, are the job's by the return probe's note.
for version in 3 4.0 4.1 4.2; do
	[ $version = 4.2 ] && switch_to_kprobes
	mark "v$version"
	mount_dir=$(nfs_mount_of $version)
	guest_mount_nfs $version "$mount_dir" || continue
	job=wire-${version/./-}
	out=$VNFS_OUT/v$version
	mkdir -p $out "$mount_dir/meta"
	device=$(stat -c %d "$mount_dir")
	start_job $job
	check "v$version: a snapshot before, with no RPC ending while it was taken" before $out "$mount_dir"
	in_job $job "$WORKLOAD" mapped-write "$mount_dir/mapped" 64 > /dev/null
	check_eq "v$version: the mapped writer exited" $? 0
	sync
	in_job $job "$WORKLOAD" write "$mount_dir/written" 8 > /dev/null
	echo 3 > /proc/sys/vm/drop_caches
	in_job $job "$WORKLOAD" reader "$mount_dir/mapped" "$mount_dir" > /dev/null
	echo 3 > /proc/sys/vm/drop_caches
	in_job $job "$WORKLOAD" mmap "$mount_dir/written" > /dev/null
	in_job $job "$WORKLOAD" writer "$mount_dir/meta" > /dev/null
	check_eq "v$version: the job's programs ran" $? 0
	check "v$version: a snapshot with no RPC ending while it was taken" after $out "$mount_dir" $job
	compare_to_mountstats "v$version" $out "$mount_dir" $job
	check_ge "v$version: the job's WRITE RPCs sent its 72 MiB, the mapped pages' written back after it exited" \
		"$(wire $out/$job.json WRITE bytes_sent $device)" $((72 * MIB))
	check_ge "v$version: the job's READ RPCs brought its 72 MiB read cold" \
		"$(wire $out/$job.json READ bytes_received $device)" $((72 * MIB))
	check_ge "v$version: the job's COMMITs" "$(wire $out/$job.json COMMIT rpcs $device)" 1
	check_eq "v$version: no retransmissions on loopback" \
		$(( $(wire $out/$job.json "" transmissions) - $(wire $out/$job.json "" rpcs) )) 0
	long_report $job > $out/report.txt
	check "v$version: vnfs-report -l shows the job's READ RPCs" grep -Eq "^READ +[0-9]" $out/report.txt
	check "v$version: ... and what came over the wire for what it read" grep -q "came over the wire" $out/report.txt
	end_job $job
	# The finished job's RPCs in the history and the JSON log: the same
	# rows (its programs were gone before the snapshot).
	rpcs=$(wire $out/$job.json "" rpcs)
	history_rpcs() {
		sqlite3 $RUN/history.db "SELECT coalesce(sum(w.rpcs), 0) FROM step_wire w JOIN steps s ON s.id = w.step
			WHERE s.source = 'pbs' AND s.job = '$job' AND s.finished = 1"
	}
	until_ok 30 test "$(history_rpcs)" -gt 0
	check_eq "v$version: the history's step_wire rows hold the job's $rpcs RPCs" "$(history_rpcs)" "$rpcs"
	check_eq "v$version: the JSON log's job record holds them too" \
		"$(jq -s "[.[] | select(.type == \"job\" and .job == \"$job\") | .wire[].rpcs] | add" $RUN/records.jsonl)" "$rpcs"
done

# Two jobs at once on one mount: each job's RPCs are its own, and both
# plus the background are the mount's.
mark concurrent
mount_dir=$(nfs_mount_of 4.2)
out=$VNFS_OUT/concurrent
mkdir -p $out
device=$(stat -c %d "$mount_dir")
start_job wire-a
start_job wire-b
check "a snapshot before, with no RPC ending while it was taken" before $out "$mount_dir"
in_job wire-a "$WORKLOAD" write "$mount_dir/a" 16 > /dev/null &
writer_a=$!
in_job wire-b "$WORKLOAD" write "$mount_dir/b" 24 > /dev/null &
writer_b=$!
wait $writer_a; check_eq "concurrent: job a's writer ran" $? 0
wait $writer_b; check_eq "concurrent: job b's writer ran" $? 0
check "concurrent: a snapshot with no RPC ending while it was taken" after $out "$mount_dir" wire-a wire-b
compare_to_mountstats concurrent $out "$mount_dir" wire-a wire-b
sent_a=$(wire $out/wire-a.json WRITE bytes_sent $device)
sent_b=$(wire $out/wire-b.json WRITE bytes_sent $device)
check_ge "concurrent: job a's WRITEs sent its 16 MiB" "$sent_a" $((16 * MIB))
check_le "concurrent: ... and not b's (under 17 MiB with the headers)" "$sent_a" $((17 * MIB))
check_ge "concurrent: job b's WRITEs sent its 24 MiB" "$sent_b" $((24 * MIB))
check_le "concurrent: ... and not a's (under 25 MiB with the headers)" "$sent_b" $((25 * MIB))
end_job wire-a
end_job wire-b

# A job the helper identifies only after it started (an LSF job named by
# its process's environment, registered at the helper's next interval): its
# RPCs from before are kept under its id and become its own.  The helper is
# stopped (SIGSTOP) while the job runs, so that every RPC of it comes
# before the job is registered.
mark late-binding
mount_dir=$(nfs_mount_of 4.2)
out=$VNFS_OUT/late
mkdir -p $out "$CGROUPS/plain"
device=$(stat -c %d "$mount_dir")
check "a snapshot before, with no RPC ending while it was taken" before $out "$mount_dir"
kill -STOP $HELPER_PID
bash -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' _ "$CGROUPS/plain" \
	env LSB_JOBID=7777 "$WORKLOAD" write "$mount_dir/late" 4 > /dev/null
check_eq "late: the LSF job's writer ran, with the helper stopped" $? 0
node_rows $out/node-stopped.txt
check_ge "late: its WRITEs were kept under its environment job's id, unregistered" \
	"$(python3 $COMPARE --job-rows $device $out/node-stopped.txt WRITE)" $((4 * MIB))
kill -CONT $HELPER_PID
late_finished() {
	[ "$(sqlite3 $RUN/history.db "SELECT count(*) FROM steps WHERE source = 'lsf' AND job = '7777' AND finished = 1")" = 1 ]
}
check "late: LSF job 7777 registered, ended and finished by the helper" until_ok 30 late_finished
"$REPORT" --config $RUN/vnfs.conf --timeout 120 -j lsf:7777 --json | jq '.jobs[0]' > $out/lsf-7777.json
check "late: a snapshot after, with no RPC ending while it was taken" after $out "$mount_dir"
compare_to_mountstats late $out "$mount_dir" lsf-7777
check_ge "late: the job's WRITE RPCs sent its 4 MiB, those before it was identified included" \
	"$(wire $out/lsf-7777.json WRITE bytes_sent $device)" $((4 * MIB))

# A slow server: 25 ms added to every packet on the loopback, so every
# round trip takes at least 50 ms (the call and its reply).
mark slow-server
mount_dir=$(nfs_mount_of 3)
out=$VNFS_OUT/slow
mkdir -p $out "$mount_dir/slow"
device=$(stat -c %d "$mount_dir")
start_job wire-slow
check "slow: netem delays the loopback by 25 ms" tc qdisc add dev lo root netem delay 25ms
in_job wire-slow "$WORKLOAD" writer "$mount_dir/slow" > /dev/null
check_eq "slow: the job's metadata loop ran" $? 0
tc qdisc del dev lo root
query wire-slow > $out/wire-slow.json
rpcs=$(wire $out/wire-slow.json "" rpcs $device)
check_ge "slow: the job's RPCs" "$rpcs" 40
check_eq "slow: none of them came back within 2^25 ns (33.5 ms)" \
	"$(jq "[.wire[] | .rtt_histogram[0:25] | add // 0] | add" $out/wire-slow.json)" 0
check_ge "slow: their mean round trip, at least 50 ms" \
	$(( $(wire $out/wire-slow.json "" rtt_ns $device) / rpcs )) 50000000
long_report wire-slow > $out/report.txt
check "slow: vnfs-report finds that the server is slow" grep -q "the server is slow" $out/report.txt
end_job wire-slow

# A soft mount whose server stops answering: the job's stat is sent, sent
# again, times out and fails; its RPC and its call both count it.
mark soft-timeout
mount_dir=/mnt/nfs/soft
out=$VNFS_OUT/soft
mkdir -p $out "$mount_dir" "$(nfs_export_of 3)/soft"
echo data > "$(nfs_export_of 3)/soft/file"
check "soft: v3 mounted soft, timeo=5, retrans=1, noac" \
	mount -t nfs -o vers=3,nolock,proto=tcp,soft,timeo=5,retrans=1,noac \
	"127.0.0.1:$(nfs_export_of 3)" "$mount_dir"
device=$(stat -c %d "$mount_dir")
stat "$mount_dir/soft/file" > /dev/null
start_job wire-soft
check "soft: netem drops every packet on the loopback" tc qdisc add dev lo root netem loss 100%
in_job wire-soft stat "$mount_dir/soft/file" > /dev/null 2>&1
check "soft: the job's stat failed" test $? -ne 0
tc qdisc del dev lo root
query wire-soft > $out/wire-soft.json
check_ge "soft: the job's RPCs were retransmitted" \
	$(( $(wire $out/wire-soft.json "" transmissions $device) - $(wire $out/wire-soft.json "" rpcs $device) )) 1
check_ge "soft: major timeouts on the job" "$(wire $out/wire-soft.json "" major_timeouts $device)" 1
check_ge "soft: RPC errors of kind timeout on the job" \
	"$(jq "[.wire[] | .error_kinds.timeout] | add // 0" $out/wire-soft.json)" 1
check_ge "soft: the job's failed calls counted as errors" \
	"$(jq "[.operations[] | .errors] | add" $out/wire-soft.json)" 1
long_report wire-soft > $out/report.txt
check "soft: vnfs-report finds that the network drops requests" grep -q "the network drops requests" $out/report.txt
end_job wire-soft
umount -f "$mount_dir"

# The findings from the RPCs (docs/REPORT.md) on two jobs: one that fsyncs
# after every 512 KiB, so that each flush is two unstable WRITEs and a
# COMMIT ("writes are flushed synchronously"); one that reads 24 MiB cold
# through a mapping, whose READs (a read-only open: the faulting task's)
# are no re-reads, since its faults' bytes are counted as its reads.
mark findings
mount_dir=$(nfs_mount_of 3)
out=$VNFS_OUT/findings
mkdir -p $out "$mount_dir/findings"
device=$(stat -c %d "$mount_dir")
start_job wire-sync
written=0
for i in $(seq 1 25); do
	in_job wire-sync dd if=/dev/zero of="$mount_dir/findings/sync-$i" bs=512k count=1 conv=fsync status=none &&
		written=$((written + 1))
done
check_eq "findings: the job's 25 writes of 512 KiB, each with its fsync" "$written" 25
query wire-sync > $out/wire-sync.json
check_eq "findings: one COMMIT per fsync" "$(wire $out/wire-sync.json COMMIT rpcs $device)" 25
long_report wire-sync > $out/sync-report.txt
check "findings: vnfs-report finds that writes are flushed synchronously (25 COMMITs)" \
	grep -q "writes are flushed synchronously: 25 COMMITs" $out/sync-report.txt
end_job wire-sync
start_job wire-mapped
head -c $((24 * MIB)) /dev/zero > "$mount_dir/findings/mapped"
sync
echo 3 > /proc/sys/vm/drop_caches
in_job wire-mapped "$WORKLOAD" mmap "$mount_dir/findings/mapped" > /dev/null
check_eq "findings: the job read 24 MiB through a mapping" $? 0
query wire-mapped > $out/wire-mapped.json
check_ge "findings: its READ replies brought the 24 MiB" \
	"$(wire $out/wire-mapped.json READ bytes_received $device)" $((24 * MIB))
long_report wire-mapped > $out/mapped-report.txt
check_ge "findings: its mapped reads counted the 24 MiB" \
	"$(jq '.operations.mmap_read.bytes' $out/wire-mapped.json)" $((24 * MIB))
check "findings: ... so vnfs-report finds no re-reads (the wire's bytes 1.00x its reads)" \
	bash -c "grep -q ': 1.00x' $out/mapped-report.txt && ! grep -q 're-reads data' $out/mapped-report.txt"
end_job wire-mapped

# A hostile user's flood of RPC rows (docs/SECURITY.md, "RPC rows"): from
# 400 cgroups of its own, a dozen procedures in each, while a job writes.
# The rows kept under owners' ids stop at exactly 4,096 (the rest go to
# their mount's row of no owner, counted), the job's RPCs are its own, and
# every RPC on the mount is still counted.  Last: the flood's rows hold the
# bound until the helper expires them.
mark flood
mount_dir=$(nfs_mount_of 4.2)
out=$VNFS_OUT/flood
subtree=$CGROUPS/flood
mkdir -p $out "$subtree/start" "$mount_dir/flood"
device=$(stat -c %d "$mount_dir")
# Delegated as systemd delegates a user's service: the directory and its
# interface files.
chown "$VNFS_TEST_USER" "$subtree" "$subtree"/cgroup.{procs,threads,subtree_control} \
	"$subtree/start" "$subtree/start"/cgroup.{procs,threads,subtree_control} "$mount_dir/flood"
# unattributed_rows_kept: the kernel's count of rows kept under owners' ids.
unattributed_rows_kept() {
	bpftool -j map dump pinned /sys/fs/bpf/vnfs-wire/wire_unattributed_entries |
		python3 -c 'import json, sys; print(int.from_bytes(bytes(int(x, 16) for x in json.load(sys.stdin)[0]["value"]), "little"))'
}
# rows_with_owner_ids ROWS: rows of no workload kept under an owner's id.
rows_with_owner_ids() { awk '$5 == 1 && $6 != 0 { n++ } END { print n + 0 }' "$1"; }
bounded() { curl -s http://127.0.0.1:9716/metrics | awk -v b="$1" '$1 == "vnfs_helper_bounded_total{bound=\"" b "\"}" { print $2 }'; }
# flood_node_rpcs: the node's unattributed LINK and RENAME RPCs on the mount
# (procedures only the flood sends), from /metrics.
flood_node_rpcs() {
	curl -s http://127.0.0.1:9716/metrics | awk -v m="$mount_dir" '
		$1 ~ /^vnfs_node_rpcs_total\{/ && index($1, "owner=\"unattributed\"") && index($1, "mount=\"" m "\"") &&
		$1 ~ /procedure="(LINK|RENAME)"/ { total += $2 } END { print total + 0 }'
}
other_before=$(bounded unattributed_other_rpcs)
start_job wire-flood
check "flood: a snapshot before, with no RPC ending while it was taken" before $out "$mount_dir"
in_job wire-flood "$WORKLOAD" write "$mount_dir/flood-job" 8 > /dev/null &
writer=$!
bash -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' _ "$subtree/start" \
	runuser -u "$VNFS_TEST_USER" -- python3 /vnfs/src/tests/guest/lib/rpc_flood.py \
	"$subtree" "$mount_dir/flood" 400 > $out/flood.txt 2>&1
check_eq "flood: the user's 400 owners sent their RPCs" "$(cat $out/flood.txt)" "owners=400"
wait $writer; check_eq "flood: the job's writer ran beside it" $? 0
check "flood: a snapshot after, with no RPC ending while it was taken" after $out "$mount_dir" wire-flood
compare_to_mountstats flood $out "$mount_dir" wire-flood
check_eq "flood: the rows kept under owners' ids stopped at exactly 4,096" "$(unattributed_rows_kept)" 4096
check_eq "flood: ... and the kernel's count of them is their number" "$(rows_with_owner_ids $out/node-after.txt)" 4096
other_counted() { [ "$(bounded unattributed_other_rpcs)" -gt "$other_before" ]; }
until_ok 10 other_counted
check_ge "flood: the RPCs beyond them counted in vnfs_helper_bounded_total{bound=\"unattributed_other_rpcs\"}" \
	$(( $(bounded unattributed_other_rpcs) - other_before )) 1
sent=$(wire $out/wire-flood.json WRITE bytes_sent $device)
check_ge "flood: the job's WRITEs sent its 8 MiB" "$sent" $((8 * MIB))
check_le "flood: ... and none of the flood's (under 9 MiB with the headers)" "$sent" $((9 * MIB))
check_eq "flood: no LINK, RENAME or REMOVE RPC in the job's record" \
	"$(jq '[.wire[] | select(.procedure | test("^(LINK|RENAME|REMOVE)$")) | .rpcs] | add // 0' $out/wire-flood.json)" 0
end_job wire-flood
# The owners gone, their rows go into the node's expired sums (looked for
# every 5 s while the bound is full, every 60 s otherwise): the bound is free
# again and no RPC of theirs is lost.  150 s is a ceiling for a loaded host,
# not a window; the seconds it took are printed.
flooded=$(flood_node_rpcs)
check_ge "flood: the node's unattributed LINK and RENAME RPCs include the flood's 800" "$flooded" 800
rmdir "$subtree"/owner-* "$subtree/start" "$subtree"
bound_free() { [ "$(unattributed_rows_kept)" -lt 4096 ]; }
removed_at=$SECONDS
check "flood: its owners' rows expired, within 150 s" until_ok 150 bound_free
echo "    freed $((SECONDS - removed_at)) s after the owners' cgroups were removed"
check_eq "flood: ... into the node's expired sums, none lost" "$(flood_node_rpcs)" "$flooded"
guest_done
