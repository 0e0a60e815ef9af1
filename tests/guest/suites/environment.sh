#!/usr/bin/env bash
# environment.sh — jobs named by their processes' environment (LSF, Grid
# Engine, PBS, Flux), and one a PBS prologue registers with vnfs-register,
# counted exactly on NFS v4.2: two jobs started by one plain shell
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

mark pbs-flux
# PBS job 1234.pbs01, as the test user (2 MiB, then a brief process of one
# stat), and Flux job ƒ2NpVKsDb, its id in F58 as Flux's shell sets it
# (1 MiB, as root), at the same time: vnfs spells the Flux id with Flux's
# ASCII prefix, f2NpVKsDb.
FLUX_ID=$'\xc6\x92'2NpVKsDb
as_user "$VNFS_TEST_USER" env PBS_JOBID=1234.pbs01 bash -c "
	$WORKLOAD write $mount_dir/env/pbs-a 2 > /dev/null &&
	$WORKLOAD brief $mount_dir/env/pbs-a 1 > /dev/null" &
pbs=$!
env FLUX_JOB_ID="$FLUX_ID" $WORKLOAD write $mount_dir/env/flux-a 1 > /dev/null
check_eq "the Flux job ran" $? 0
wait $pbs; check_eq "the PBS job ran" $? 0

# A job a prologue registers (vnfs-register, as a PBS hook calls it): its
# cgroup is PBS job 5678.pbs01's, tagged by the hook.  Its process's
# environment names another job: the cgroup's registration comes first.
REGISTER=$BUILD/vnfs-register
CGROUP=${VNFS_CGROUP2_MOUNT:-/sys/fs/cgroup}/vnfs-environment/pbs-5678
mkdir -p "$CGROUP"
check "vnfs-register registers PBS job 5678.pbs01's cgroup" \
	"$REGISTER" --socket $SOCKET --source pbs --job 5678.pbs01 --uid "$(id -u "$VNFS_TEST_USER")" \
	--cgroup "$CGROUP" --tag PROJECT_NAME=glacier
bash -c 'echo $$ > "$1/cgroup.procs" && exec setpriv --reuid="$2" --regid="$3" --init-groups -- \
	env PBS_JOBID=9999.pbs01 "$4" write "$5" 3' _ "$CGROUP" "$(id -u "$VNFS_TEST_USER")" \
	"$(id -g "$VNFS_TEST_USER")" "$WORKLOAD" $mount_dir/env/pbs-prologue > /dev/null
check_eq "the registered job's process ran" $? 0
check_eq "vnfs-register --end" \
	"$("$REGISTER" --socket $SOCKET --end --source pbs --job 5678.pbs01)" "ended pbs job 5678.pbs01"
check_eq "vnfs-register --finish" \
	"$("$REGISTER" --socket $SOCKET --finish --source pbs --job 5678.pbs01)" "finished pbs job 5678.pbs01"
rmdir "$CGROUP" "${CGROUP%/*}"

finished_three() { [ "$(history "SELECT count(*) FROM steps WHERE finished = 1 AND source IN ('pbs', 'flux')")" = 3 ]; }
until_ok 30 finished_three
check_eq "three more jobs finished in the history (two PBS, one Flux)" \
	"$(history "SELECT count(*) FROM steps WHERE finished = 1 AND source IN ('pbs', 'flux')")" 3
pbs_report=$(report pbs:1234.pbs01)
flux_report=$(report "flux:$FLUX_ID")
prologue_report=$(report pbs:5678.pbs01)
echo "$pbs_report" > $VNFS_OUT/report-pbs.json
echo "$flux_report" > $VNFS_OUT/report-flux.json
echo "$prologue_report" > $VNFS_OUT/report-pbs-prologue.json
check_eq "pbs job 1234.pbs01: write bytes, exactly" \
	"$(jq '.jobs[0].operations.write.bytes' <<< "$pbs_report")" $((2 * MIB))
check_eq "pbs job 1234.pbs01: write calls, exactly" \
	"$(jq '.jobs[0].operations.write.count' <<< "$pbs_report")" 2
check_eq "pbs job 1234.pbs01: the brief process's stat, exactly" \
	"$(jq '.jobs[0].operations.getattr.count' <<< "$pbs_report")" 1
check_eq "pbs job 1234.pbs01: owned by the test user" \
	"$(history "SELECT uid FROM steps WHERE source = 'pbs' AND job = '1234.pbs01'")" "$(id -u "$VNFS_TEST_USER")"
check_eq "flux job: spelled with Flux's ASCII prefix in the history" \
	"$(history "SELECT job FROM steps WHERE source = 'flux'")" f2NpVKsDb
check_eq "flux job f2NpVKsDb (asked for as ƒ2NpVKsDb): write bytes, exactly" \
	"$(jq '.jobs[0].operations.write.bytes' <<< "$flux_report")" $MIB
check_eq "pbs job 5678.pbs01 (registered by its prologue): write bytes, exactly" \
	"$(jq '.jobs[0].operations.write.bytes' <<< "$prologue_report")" $((3 * MIB))
check_eq "pbs job 5678.pbs01: write calls, exactly" \
	"$(jq '.jobs[0].operations.write.count' <<< "$prologue_report")" 3
check_eq "pbs job 5678.pbs01: its hook's tag" \
	"$(history "SELECT t.name || '=' || t.value FROM step_tags t JOIN steps s ON s.id = t.step WHERE s.source = 'pbs' AND job = '5678.pbs01'")" "PROJECT_NAME=glacier"
check_eq "the environment's job 9999.pbs01 is not one: its process was the registered cgroup's" \
	"$(history "SELECT count(*) FROM steps WHERE job = '9999.pbs01'")" 0

kill $HELPER_PID; wait $HELPER_PID
guest_done
