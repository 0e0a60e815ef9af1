#!/usr/bin/env bash
# slurm.sh — spank_vnfs.so in a real Slurm 22.05 in the guest, end to end:
# options and their validation, cgroup placement, registration with the real
# vnfs-helper, exact per-job NFS counts, tags, sbatch steps, --vnfs-report,
# the epilog's report file, helper failures (optional and required), and the
# srun latency the plugin adds.
#
#   tests/guest/run --build BUILD tests/guest/suites/slurm.sh v2
#   tests/guest/run --build BUILD --cgroup hybrid tests/guest/suites/slurm.sh hybrid
#   tests/guest/run --build BUILD --cgroup v1 tests/guest/suites/slurm.sh v1
#   tests/guest/run --build BUILD tests/guest/suites/slurm.sh linuxproc
#
# The plugin must come from a build without sanitizers in the plugin (it is
# always built so) and the helper from any build.
source /vnfs/src/tests/guest/lib/guest.sh
source /vnfs/src/tests/guest/lib/slurm.sh

MODE=${1:-v2}
BUILD=${VNFS_BUILD:-/vnfs/src}
PLUGIN=$(slurm_plugin_path)
HELPER=$BUILD/vnfs-helper
SEND=$BUILD/tests/tools/vnfs-send
RUN=/run/vnfs-helper
SOCKET=$RUN/vnfs.sock
REPORTS=$RUN/reports
USER_NAME=${VNFS_TEST_USER:-vnfstest}
NODE_NAME=$(hostname)
PLUGSTACK="optional $PLUGIN socket=$SOCKET timeout_ms=3000 envs=SITE_ACCOUNT"
MIB=1048576

save_logs() { slurm_save_logs; cp "$RUN"/*.log "$VNFS_OUT/" 2> /dev/null; }
trap save_logs EXIT

check "plugin built at $PLUGIN" test -f "$PLUGIN" || exit 1
check "the plugin does not need the sanitizer runtime (slurmstepd has none)" \
	bash -c "! ldd '$PLUGIN' | grep -q 'libasan\|libubsan'"

# ------------------------------------------------------------------ set-up
guest_start_nfs || exit 1
guest_mount_all_nfs || exit 1
for version in 3 4.2; do
	mkdir -p "$(nfs_export_of $version)/u" && chown "$USER_NAME" "$(nfs_export_of $version)/u"
done
mkdir -p "$RUN" "$REPORTS"
# Every job gets an extern step; only Slurm's cgroup/v2 gives it a directory.
SLURM_EXTRA_CONF=PrologFlags=contain
slurm_start "$MODE" "$PLUGSTACK" || exit 1
cd /tmp || exit 1

# job_count: how many jobs slurmctld knows (MinJobAge keeps ended ones).
job_count() { scontrol show jobs 2> /dev/null | grep -c '^JobId='; }
# cgroup2 where vnfs creates its own cgroups in this guest
CGROUP2=${VNFS_CGROUP2_MOUNT:-/sys/fs/cgroup}

# ------------------------------------------------- without the helper
mark options
help=$(srun --help 2>&1)
check "srun --help lists --vnfs-tags" grep -q -- '--vnfs-tags=NAME\[=VALUE\]\[,...\]' <<< "$help"
check "srun --help lists --vnfs-report" grep -q -- '--vnfs-report=brief|full|none' <<< "$help"
check "sbatch --help lists --vnfs-tags" bash -c "sbatch --help 2>&1 | grep -q -- --vnfs-tags"

refused() { # refused DESCRIPTION EXPECTED_MESSAGE TAGS: srun fails before allocation
	local before after output status
	before=$(job_count)
	output=$(srun --vnfs-tags="$3" true 2>&1)
	status=$?
	after=$(job_count)
	check "$1: srun exits non-zero" test "$status" -ne 0
	check_eq "$1: message" "$(grep 'vnfs:' <<< "$output")" "srun: error: vnfs: $2"
	check_eq "$1: refused before allocation (no new job)" "$after" "$before"
}
refused "space in a tag name" \
	"--vnfs-tags: tag 'MY NAME': a name is letters, digits and '_' (not starting with a digit)" \
	"MY NAME=x"
refused "unset variable" \
	"--vnfs-tags: tag 'VNFS_UNSET': \$VNFS_UNSET is not set in the job's environment (use VNFS_UNSET=VALUE to set it)" \
	VNFS_UNSET
many=$(for i in $(seq 65); do printf 'T%d=v,' "$i"; done)
refused "65 tags" "--vnfs-tags: too many tags: at most 32 are allowed" "${many%,}"
refused "10 KiB value" \
	"--vnfs-tags: tag 'BIG': value of 10240 characters exceeds the limit of 256" \
	"BIG=$(head -c 10240 /dev/zero | tr '\0' x)"
output=$(srun --vnfs-report=loud true 2>&1)
check "--vnfs-report=loud is refused" test $? -ne 0
check_eq "--vnfs-report=loud message" "$(grep 'vnfs:' <<< "$output")" \
	"srun: error: vnfs: --vnfs-report: 'loud' is not brief, full or none"

mark no-helper
if [ "$MODE" = v1 ]; then
	check "v1: no cgroup2 is mounted before the first step" \
		test "$(awk '$3 == "cgroup2"' /proc/mounts)" = ""
fi
output=$(srun bash -c 'echo "job=$SLURM_JOB_ID"; cat /proc/self/cgroup' 2> /tmp/no-helper.err)
status=$?
job=$(sed -n 's/^job=//p' <<< "$output")
check_eq "no helper: srun still exits 0" "$status" 0
check_eq "no helper: one warning line on the user's terminal" "$(grep -c 'vnfs:' /tmp/no-helper.err)" 1
check_eq "no helper: the warning says why" "$(grep 'vnfs:' /tmp/no-helper.err)" \
	"slurmstepd-$SLURM_NODE: error: vnfs: job $job step 0 is not accounted: registration with $SOCKET failed: cannot reach vnfs-helper at $SOCKET: No such file or directory"
v2_line=$(grep '^0::' <<< "$output")
case $MODE in
v2) check "v2: the task is in Slurm's own step cgroup ($v2_line)" \
	grep -Eq "^0::/system.slice/${SLURM_NODE}_slurmstepd.scope/job_$job/step_0/" <<< "$v2_line" ;;
*) check_eq "$MODE: the task is in the vnfs cgroup" "$v2_line" "0::/vnfs/job_$job/step_0" ;;
esac
if [ "$MODE" != v2 ]; then
	check "the vnfs job cgroup is gone after the step" until_ok 5 test ! -e "$CGROUP2/vnfs/job_$job"
fi
if [ "$MODE" = v1 ]; then
	check_eq "v1: the plugin mounted cgroup2 at $CGROUP2, once" \
		"$(awk '$3 == "cgroup2" { print $2 }' /proc/mounts)" "$CGROUP2"
	check_eq "v1: slurmd.log says so, once" \
		"$(grep -c "vnfs: no cgroup2 hierarchy was mounted: mounted one at $CGROUP2 for the steps' cgroups" "$SLURM_STATE/log/slurmd.log")" 1
fi

# ------------------------------------------------------------ the helper
cat > "$RUN/vnfs.conf" <<CONF
[helper]
socket = $SOCKET
state_dir = $RUN/state
report_dir = $REPORTS
interval = 1s
finished_job_grace = 2s
[sqlite]
path = $RUN/history.db
CONF
HELPER_PID=
start_helper() {
	"$HELPER" --config "$RUN/vnfs.conf" >> "$RUN/helper.log" 2>&1 &
	HELPER_PID=$!
	until_ok 60 grep -q 'ready:' "$RUN/helper.log" || { fail "helper not ready within 60 s"; tail -n 20 "$RUN/helper.log"; return 1; }
}
stop_helper() {
	kill "$HELPER_PID" && wait "$HELPER_PID"
	HELPER_PID=
}
mark helper
start_helper || exit 1
slurm_restart_slurmd || exit 1   # slurmd looks for the epilog symbol at start

# Ended jobs are checked in their report file (the epilog's FINISH wrote it).
report_file() { echo "$REPORTS/$1/$NODE_NAME.json"; }
# file_step_field FILE STEP OPERATION FIELD
file_step_field() {
	jq -r --arg s "$2" --arg o "$3" --arg f "$4" '.steps[] | select(.step == $s) | .operations[$o][$f]' "$1" 2> /dev/null
}

# ---- 8 MiB with a tag, as the test user, --vnfs-report=brief
mark tagged-write
M42=$(nfs_mount_of 4.2)
output=$(PROJECT_NAME=alpha as_user "$USER_NAME" srun --vnfs-tags=PROJECT_NAME --vnfs-report=brief \
	bash -c 'echo "job=$SLURM_JOB_ID"; dd if=/dev/zero of='"$M42"'/u/eight bs=1M count=8 conv=fsync status=none' \
	2> /tmp/tagged.err)
check_eq "tagged 8 MiB write: srun exits 0" "$?" 0
job=$(sed -n 's/^job=//p' <<< "$output")
cat /tmp/tagged.err
check_eq "--vnfs-report=brief prints the step's bytes" \
	"$(grep -o 'write [0-9]* bytes ([0-9]* calls)' /tmp/tagged.err)" "write 8388608 bytes (8 calls)"
check "epilog wrote $(report_file "$job")" until_ok 15 test -s "$(report_file "$job")"
file=$(report_file "$job")
check_eq "job $job step 0: 8,388,608 bytes written" "$(file_step_field "$file" 0 write bytes)" 8388608
check_eq "job $job step 0: tag PROJECT_NAME=alpha" \
	"$(jq -r '.steps[] | select(.step == "0") | .tags.PROJECT_NAME' "$file" 2> /dev/null)" alpha
check_eq "job $job: registered with the user's uid" "$(jq -r '.uid' "$file" 2> /dev/null)" "$(id -u "$USER_NAME")"
extern_path=$(jq -r '.steps[] | select(.step == "extern") | .cgroup_path' "$file" 2> /dev/null)
if [ "$MODE" = v2 ]; then
	check_eq "job $job: the extern step is registered with Slurm's directory" "$extern_path" \
		"/system.slice/${SLURM_NODE}_slurmstepd.scope/job_$job/step_extern"
else
	check_eq "job $job: no extern step without Slurm's cgroup/v2" "$extern_path" ""
fi
check_eq "report file: job total 8,388,608 bytes written" \
	"$(jq -r '.operations.write.bytes' "$(report_file "$job")" 2> /dev/null)" 8388608
check_eq "report file: tag PROJECT_NAME=alpha" \
	"$(jq -r '.steps[] | select(.step == "0") | .tags.PROJECT_NAME' "$(report_file "$job")" 2> /dev/null)" alpha
# Released: no longer held (LIST); a QUERY would answer it from the history.
released() { "$SEND" "$SOCKET" '{"v":1,"type":"list"}' 2> /dev/null | jq -e --argjson job "$1" '.ok and ([.jobs[] | select(.job == $job)] | length == 0)' > /dev/null; }
check "after FINISH and the grace period the job is released" until_ok 15 released "$job"

# ---- two concurrent jobs, root on NFS v3 and the user on v4.2, gated
mark concurrent
gate=/tmp/gate; rm -rf "$gate"; mkdir -m 1777 "$gate"
gated() { # gated MIB FILE: wait for the gate, then write
	echo "bash -c 'echo job=\$SLURM_JOB_ID; touch $gate/ready.\$SLURM_JOB_ID; until [ -e $gate/go ]; do sleep 0.05; done; dd if=/dev/zero of=$2 bs=1M count=$1 conv=fsync status=none'"
}
eval "srun $(gated 3 "$(nfs_mount_of 3)/u/root3")" > /tmp/root.out 2>&1 &
root_srun=$!
eval "as_user $USER_NAME srun $(gated 5 "$M42/u/user5")" > /tmp/user.out 2>&1 &
user_srun=$!
check "both jobs running before either writes" until_ok 60 bash -c "[ \$(ls $gate | grep -c ready) -eq 2 ]"
touch "$gate/go"
wait "$root_srun"; check_eq "root job exits 0" "$?" 0
wait "$user_srun"; check_eq "user job exits 0" "$?" 0
root_job=$(sed -n 's/^job=//p' /tmp/root.out)
user_job=$(sed -n 's/^job=//p' /tmp/user.out)
for job in "$root_job" "$user_job"; do
	check "epilog wrote $(report_file "$job")" until_ok 15 test -s "$(report_file "$job")"
done
check_eq "root job $root_job: exactly 3 MiB written" "$(file_step_field "$(report_file "$root_job")" 0 write bytes)" $((3 * MIB))
check_eq "user job $user_job: exactly 5 MiB written" "$(file_step_field "$(report_file "$user_job")" 0 write bytes)" $((5 * MIB))
check_eq "root job $root_job: only the v3 mount" \
	"$(jq -r '[.mounts[] | select(.write_bytes > 0) | .version] | join(",")' "$(report_file "$root_job")" 2> /dev/null)" 3
check_eq "user job $user_job: only the v4.2 mount" \
	"$(jq -r '[.mounts[] | select(.write_bytes > 0) | .version] | join(",")' "$(report_file "$user_job")" 2> /dev/null)" 4.2

# ---- sbatch: the batch step and two sruns, tags inherited and added
mark sbatch
cat > /tmp/two-steps.sh <<EOF
#!/bin/bash
dd if=/dev/zero of=$M42/u/batch bs=64k count=8 conv=fsync status=none
srun dd if=/dev/zero of=$M42/u/step0 bs=1M count=1 conv=fsync status=none
srun --vnfs-tags=STAGE=two dd if=/dev/zero of=$M42/u/step1 bs=1M count=2 conv=fsync status=none
EOF
chmod 755 /tmp/two-steps.sh
job=$(PROJECT_NAME=beta SITE_ACCOUNT=acct7 as_user "$USER_NAME" sbatch --parsable -o /tmp/two-steps.out \
	--vnfs-tags=PROJECT_NAME /tmp/two-steps.sh)
check "sbatch job $job finished" slurm_wait_job_done "$job" 60
check "epilog wrote $(report_file "$job")" until_ok 15 test -s "$(report_file "$job")"
file=$(report_file "$job")
for pair in batch:524288 0:1048576 1:2097152; do
	step=${pair%%:*}
	check_eq "sbatch job: step $step written bytes" \
		"$(jq -r --arg s "$step" '.steps[] | select(.step == $s) | .operations.write.bytes' "$file" 2> /dev/null)" "${pair#*:}"
done
check_eq "sbatch job: job total = sum of its steps" "$(jq -r '.operations.write.bytes' "$file" 2> /dev/null)" $((524288 + 1048576 + 2097152))
check_eq "sbatch job: batch step tags (admin envs= and the user's)" \
	"$(jq -c '.steps[] | select(.step == "batch") | .tags' "$file" 2> /dev/null)" '{"SITE_ACCOUNT":"acct7","PROJECT_NAME":"beta"}'
check_eq "sbatch job: step 0 inherits the job's tags" \
	"$(jq -c '.steps[] | select(.step == "0") | .tags' "$file" 2> /dev/null)" '{"SITE_ACCOUNT":"acct7","PROJECT_NAME":"beta"}'
check_eq "sbatch job: step 1 adds its own tag" \
	"$(jq -c '.steps[] | select(.step == "1") | .tags' "$file" 2> /dev/null)" '{"SITE_ACCOUNT":"acct7","PROJECT_NAME":"beta","STAGE":"two"}'

slots_used() { "$SEND" "$SOCKET" '{"v":1,"type":"status"}' | jq -r .status.slots_used; }
slots_free() { [ "$(slots_used)" = 0 ]; }
check "all jobs finished: every slot released" until_ok 15 slots_free
echo "slots used now: $(slots_used)"

# ---- --vnfs-report=full
output=$(srun --vnfs-report=full dd if=/dev/zero of="$M42/u/full" bs=1M count=2 conv=fsync status=none 2>&1)
echo "$output"
check "--vnfs-report=full prints the write row" \
	grep -Eq '^vnfs: write +2 +0 +[0-9.]+ +2097152$' <<< "$output"

# ---- srun latency added by the plugin: steps of one allocation, without
# and with the plugin interleaved (srun and slurmstepd read plugstack.conf at
# every step), so scheduling noise stays out of the comparison.
mark latency
save_logs
cat > /tmp/latency.sh <<EOF
#!/bin/bash
source /vnfs/src/tests/guest/lib/guest.sh
source /vnfs/src/tests/guest/lib/slurm.sh
step_ms() {
	local start=\$EPOCHREALTIME
	timeout 60 srun true > /tmp/latency.out 2>&1 || return 1
	awk -v a="\$start" -v b="\$EPOCHREALTIME" 'BEGIN{printf "%.1f", (b - a) * 1000}'
}
for round in \$(seq 10); do
	slurm_set_plugstack
	without=\$(step_ms) || { echo "FAILED without plugin, round \$round"; break; }
	slurm_set_plugstack "$PLUGSTACK"
	with=\$(step_ms) || { echo "FAILED with plugin, round \$round"; break; }
	echo "\$without \$with"
done
EOF
chmod 755 /tmp/latency.sh
timeout 300 salloc -N1 /tmp/latency.sh > /tmp/latency.txt 2> /tmp/latency.err
slurm_set_plugstack "$PLUGSTACK"
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
if grep -q FAILED /tmp/latency.txt || [ "$(wc -l < /tmp/latency.txt)" -ne 10 ]; then
	fail "srun latency: $(tr '\n' ' ' < /tmp/latency.txt) $(tr '\n' ' ' < /tmp/latency.err)"
else
	without_ms=$(awk '{print $1}' /tmp/latency.txt | median)
	with_ms=$(awk '{print $2}' /tmp/latency.txt | median)
	{
		echo "mode $MODE: srun true as a step of one allocation, 10 interleaved rounds, ms (without with)"
		cat /tmp/latency.txt
		echo "median without plugin: $without_ms ms, with plugin: $with_ms ms"
	} | tee "$VNFS_OUT/srun-latency.txt"
	pass "srun step latency measured: without $without_ms ms, with $with_ms ms (median of 10)"
fi
grep -o 'registered: .* in [0-9.]* ms' "$SLURM_STATE/log/slurmd.log" | sed 's/.* in //' | tr '\n' ' ' |
	sed 's/^/registration times seen in slurmd.log: /' | tee -a "$VNFS_OUT/srun-latency.txt"
echo

# ---- required with the helper up runs normally; with the helper stopped,
# optional runs with one warning and required stops the step (exit code 1)
mark helper-down
slurm_set_plugstack "required $PLUGIN socket=$SOCKET timeout_ms=3000"
output=$(srun -n2 echo RAN 2> /tmp/required-up.err)
check_eq "helper up, required, 2 tasks: srun exits 0" "$?" 0
check_eq "helper up, required, 2 tasks: both ran" "$output" "RAN
RAN"
check_eq "helper up, required: nothing from vnfs or spank on stderr" \
	"$(grep -c 'vnfs\|spank' /tmp/required-up.err)" 0
slurm_set_plugstack "$PLUGSTACK"
stop_helper
# Two tasks: the step is registered once, so it fails once.
output=$(srun -n2 echo RAN 2> /tmp/down.err)
check_eq "helper down, optional: srun exits 0" "$?" 0
check_eq "helper down, optional: both tasks ran" "$output" "RAN
RAN"
check_eq "helper down, optional: one warning line" "$(grep -c 'vnfs:' /tmp/down.err)" 1
check_eq "helper down, optional: Slurm says nothing more" \
	"$(grep -v 'vnfs:' /tmp/down.err | grep -vc '^srun: job [0-9]* \(queued\|has been allocated\)')" 0
slurm_set_plugstack "required $PLUGIN socket=$SOCKET timeout_ms=3000"
latest_job() { scontrol show jobs 2> /dev/null | sed -n 's/^JobId=\([0-9]*\) .*/\1/p' | sort -n | tail -n 1; }
output=$(srun -n2 bash -c 'echo RAN; touch /tmp/required.ran' 2> /tmp/required.err)
status=$?
job=$(latest_job)
cat /tmp/required.err
check_eq "helper down, required: srun exits 1" "$status" 1
check_eq "helper down, required: the program did not run" "$output" ""
check "helper down, required: the program did not run (no file)" test ! -e /tmp/required.ran
check_eq "helper down, required: one vnfs line, saying which step and why" "$(grep 'vnfs:' /tmp/required.err)" \
	"slurmstepd-$SLURM_NODE: error: vnfs: job $job step 0 is not accounted: registration with $SOCKET failed: cannot reach vnfs-helper at $SOCKET: No such file or directory"
check_eq "helper down, required: Slurm names the required plugin that stopped each task" \
	"$(grep -c "^slurmstepd-$SLURM_NODE: error: spank: required plugin spank_vnfs.so: task_init() failed with rc=-1\$" /tmp/required.err)" 2
check_eq "helper down, required: srun reports exit code 1" \
	"$(grep -c "^srun: error: $SLURM_NODE: tasks 0-1: Exited with exit code 1\$" /tmp/required.err)" 1
check_eq "helper down, required: no 'could not execve' (the launch itself succeeded)" \
	"$(grep -c 'could not execve' /tmp/required.err)" 0
if [ "$MODE" != v2 ]; then
	check "helper down, required: the vnfs job cgroup is gone after the step" \
		until_ok 5 test ! -e "$CGROUP2/vnfs/job_$job"
fi

# The batch step stops the same way: the job fails with exit code 1 and the
# node stays in service.
printf '#!/bin/bash\ntouch /tmp/required-batch.ran\n' > /tmp/required-batch.sh
chmod 755 /tmp/required-batch.sh
rm -f /tmp/required-batch.ran /tmp/required-batch.out
job=$(sbatch --parsable -o /tmp/required-batch.out /tmp/required-batch.sh)
check "helper down, required: sbatch job $job ended" slurm_wait_job_done "$job" 60
cat /tmp/required-batch.out
check_eq "helper down, required: batch job $job FAILED" "$(slurm_job_state "$job")" FAILED
check_eq "helper down, required: batch job $job exit code 1" \
	"$(scontrol show job "$job" 2> /dev/null | sed -n 's/.* ExitCode=\([0-9:]*\).*/\1/p')" 1:0
check "helper down, required: the batch script did not run" test ! -e /tmp/required-batch.ran
check_eq "helper down, required: the job's output file says why" "$(grep 'vnfs:' /tmp/required-batch.out)" \
	"slurmstepd-$SLURM_NODE: error: vnfs: job $job step batch is not accounted: registration with $SOCKET failed: cannot reach vnfs-helper at $SOCKET: No such file or directory"
check "helper down, required: the node is not drained" until_ok 30 slurm_node_idle
sinfo -h -n "$SLURM_NODE" -o '%T %E'
slurm_set_plugstack "$PLUGSTACK"

save_logs
slurm_stop
guest_done
