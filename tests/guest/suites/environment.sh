#!/usr/bin/env bash
# environment.sh — jobs named by their processes' environment (LSF, Grid
# Engine), counted exactly on NFS v4.2: two jobs started by one plain shell
# in one cgroup, each with short-lived children, one child whose
# environment no longer names the job, and one process that does its I/O
# and exits at once; a process naming no job stays unattributed.  The
# kernel captures each job at exec; the helper registers it, folds its
# first calls in, and finishes it when its last task is gone.
source /vnfs/src/tests/guest/lib/guest.sh

BUILD=${VNFS_BUILD:-/vnfs/src}
HELPER=$BUILD/vnfs-helper
SEND=$BUILD/tests/tools/vnfs-send
WORKLOAD=$BUILD/tests/tools/nfs-workload
RUN=/run/vnfs-environment
SOCKET=$RUN/vnfs.sock
MIB=1048576

mkdir -p $RUN
chmod 1777 $RUN
cat > $RUN/vnfs.conf <<CONF
[helper]
socket = $SOCKET
state_dir = $RUN/state
report_dir = $RUN/reports
interval = 1s
[sqlite]
path = $RUN/history.db
[prometheus]
listen = 127.0.0.1:9718
[environment]
tag_variables = PROJECT_NAME
CONF
"$HELPER" --config $RUN/vnfs.conf > $VNFS_OUT/helper.log 2>&1 &
HELPER_PID=$!
until_ok 60 grep -q 'ready:' $VNFS_OUT/helper.log || { fail "helper not ready"; tail $VNFS_OUT/helper.log; exit 1; }
check "the environment capture is attached (no warning about it)" \
	bash -c "! grep -q 'environment capture\|no bpf_loop' $VNFS_OUT/helper.log"

guest_start_nfs || exit 1
mount_dir=$(nfs_mount_of 4.2)
guest_mount_nfs 4.2 "$mount_dir" || exit 1
mkdir -p "$mount_dir/env"
chmod 1777 "$mount_dir/env"
cd /

query() { "$SEND" "$SOCKET" "{\"v\":1,\"type\":\"query\",\"source\":\"$1\",\"job\":\"$2\"}"; }
history() { sqlite3 $RUN/history.db "$1"; }

mark environment
# LSF job 4242, as the test user: 2 MiB, then three short children of 1 MiB
# each, one more whose environment drops LSB_JOBID (still the job's: it is
# a child of the job), and a brief process of 3 stats of the file just
# written (its attributes cached: no RPC to wait for).
as_user "$VNFS_TEST_USER" env LSB_JOBID=4242 PROJECT_NAME=climate bash -c "
	$WORKLOAD write $mount_dir/env/lsf-a 2 > /dev/null &&
	for i in 1 2 3; do $WORKLOAD write $mount_dir/env/lsf-b\$i 1 > /dev/null; done &&
	env -u LSB_JOBID $WORKLOAD write $mount_dir/env/lsf-c 1 > /dev/null &&
	$WORKLOAD brief $mount_dir/env/lsf-c 3 > $RUN/brief-lsf.txt" &
lsf=$!
# Grid Engine job 77, array task 3, as root, at the same time, in the same
# cgroup: 1 MiB, two short children of 1 MiB, a brief process of 2 stats.
env JOB_ID=77 SGE_TASK_ID=3 PROJECT_NAME=ocean bash -c "
	$WORKLOAD write $mount_dir/env/sge-a 1 > /dev/null &&
	for i in 1 2; do $WORKLOAD write $mount_dir/env/sge-b\$i 1 > /dev/null; done &&
	$WORKLOAD brief $mount_dir/env/sge-b2 2 > $RUN/brief-sge.txt" &
sge=$!
# No job variable: unattributed, in no job.
$WORKLOAD write $mount_dir/env/none 1 > /dev/null
wait $lsf; check_eq "the LSF job ran" $? 0
wait $sge; check_eq "the Grid Engine job ran" $? 0
say "brief processes: $(tr '\n' ' ' < $RUN/brief-lsf.txt) / $(tr '\n' ' ' < $RUN/brief-sge.txt)"
# (Its time is said, not checked: the emulated guest's speed varies with
# the host's load, and the counts below do not depend on it: the job is
# captured at exec, before the program's first instruction.)

# Both jobs' tasks are gone: each is registered, ended and finished by the
# helper's next passes.
finished() { [ "$(history "SELECT count(*) FROM steps WHERE finished = 1 AND source IN ('lsf', 'sge')")" = 2 ]; }
until_ok 30 finished
check_eq "two environment jobs finished in the history" \
	"$(history "SELECT count(*) FROM steps WHERE finished = 1 AND source IN ('lsf', 'sge')")" 2
report() { "$BUILD/vnfs-report" --database $RUN/history.db --socket $SOCKET -j "$1" --json; }
lsf_report=$(report lsf:4242)
sge_report=$(report sge:77)
echo "$lsf_report" > $VNFS_OUT/report-lsf.json
echo "$sge_report" > $VNFS_OUT/report-sge.json
check_eq "lsf job 4242: write bytes, exactly (2 + 3 + 1 MiB)" \
	"$(jq '.jobs[0].operations.write.bytes' <<< "$lsf_report")" $((6 * MIB))
check_eq "lsf job 4242: write calls, exactly" \
	"$(jq '.jobs[0].operations.write.count' <<< "$lsf_report")" 6
check_eq "lsf job 4242: fsync calls, one per writer" \
	"$(jq '.jobs[0].operations.fsync.count' <<< "$lsf_report")" 5
check_eq "lsf job 4242: the brief process's stats, exactly" \
	"$(jq '.jobs[0].operations.getattr.count' <<< "$lsf_report")" 3
check_eq "lsf job 4242: owned by the test user" \
	"$(history "SELECT uid FROM steps WHERE source = 'lsf' AND job = '4242'")" "$(id -u "$VNFS_TEST_USER")"
check_eq "lsf job 4242: tagged by its environment" \
	"$(history "SELECT t.name || '=' || t.value FROM step_tags t JOIN steps s ON s.id = t.step WHERE s.source = 'lsf' AND job = '4242'")" "PROJECT_NAME=climate"
check_eq "sge job 77 task 3: its part" \
	"$(history "SELECT part FROM steps WHERE source = 'sge' AND job = '77'")" 3
check_eq "sge job 77: write bytes, exactly (1 + 2 MiB)" \
	"$(jq '.jobs[0].operations.write.bytes' <<< "$sge_report")" $((3 * MIB))
check_eq "sge job 77: write calls, exactly" \
	"$(jq '.jobs[0].operations.write.count' <<< "$sge_report")" 3
check_eq "sge job 77: the brief process's stats, exactly" \
	"$(jq '.jobs[0].operations.getattr.count' <<< "$sge_report")" 2
check_eq "sge job 77: tagged by its environment" \
	"$(history "SELECT t.name || '=' || t.value FROM step_tags t JOIN steps s ON s.id = t.step WHERE s.source = 'sge' AND job = '77'")" "PROJECT_NAME=ocean"
check_eq "no other job: the writer naming none is in no job" \
	"$(history "SELECT count(*) FROM steps")" 2
metrics=$(curl -s http://127.0.0.1:9718/metrics)
echo "$metrics" > $VNFS_OUT/metrics.txt
check_eq "the writer naming no job: its 1 MiB unattributed" \
	"$(awk '/^vnfs_unattributed_write_bytes_total/ { sum += $2 } END { print sum + 0 }' <<< "$metrics")" \
	"$MIB"
check_eq "the helper logged both jobs finished when their tasks were gone" \
	"$(grep -c 'finished: its tasks are gone' $VNFS_OUT/helper.log)" 2

kill $HELPER_PID; wait $HELPER_PID
guest_done
