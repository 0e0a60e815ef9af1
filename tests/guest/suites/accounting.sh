#!/usr/bin/env bash
# accounting.sh — a job's NFS summary in Slurm's own accounting (issue 18),
# end to end with real components: MariaDB, slurmdbd, slurmctld and two
# slurmd, node1 and node2, in one guest (Debian builds Slurm with
# MULTIPLE_SLURMD), each node with a vnfs-helper of its own.
#
#   tests/guest/run --build BUILD tests/guest/suites/accounting.sh
#
# A job on both nodes writes 3 MiB from node1 and 5 MiB from node2; each
# node's helper writes its report file into the shared report_dir; slurmctld
# runs vnfs-accounting as EpilogSlurmctld, which stores the merged summary in
# the job's SystemComment; sacct shows it, and vnfs-report -j prints it on a
# "login node" (a configuration with no helper, no history and no report
# file).  Then: a job whose node2 had no helper says 1 of 2 nodes; another
# tool's SystemComment line and AdminComment (Princeton's jobstats) are kept.
#
# Two nodes in one guest: every slurmd runs in a mount namespace of its own
# in which /run/vnfs-node is that node's directory, as /run/vnfs is on a real
# node, so the plugin of node1's steps reaches node1's helper.  Both helpers
# see every NFS call of the kernel and count those of the cgroups registered
# with them: Slurm's cgroup/v2 gives each node's steps a scope of its own
# (system.slice/<node>_slurmstepd.scope).
source /vnfs/src/tests/guest/lib/guest.sh
source /vnfs/src/tests/guest/lib/slurm.sh

BUILD=${VNFS_BUILD:-/vnfs/src}
PLUGIN=$(slurm_plugin_path)
HELPER=$BUILD/vnfs-helper
ACCOUNTING=$BUILD/vnfs-accounting
REPORT=$BUILD/vnfs-report
WORK=/run/accounting
REPORTS=$WORK/reports           # report_dir, shared by the nodes and the controller
NODE_DIR=/run/vnfs-node         # each slurmd's view: its own node's directory
USER_NAME=${VNFS_TEST_USER:-vnfstest}
MIB=1048576
DB_SOCKET=/run/mysqld/mysqld.sock # libmariadb's default, so slurmdbd's StorageHost=localhost finds it

save_logs() {
	slurm_save_logs
	cp "$WORK"/*.log "$WORK"/*.txt "$WORK"/syslog "$VNFS_OUT/" 2> /dev/null
	for node in node1 node2; do cp "$WORK/$node/helper.log" "$VNFS_OUT/helper-$node.log" 2> /dev/null; done
}
trap save_logs EXIT

for program in "$PLUGIN" "$HELPER" "$ACCOUNTING" "$REPORT"; do
	check "built: $program" test -x "$program" || exit 1
done
for program in mariadb-install-db mariadbd slurmdbd sacctmgr sacct; do
	check "installed: $program (scripts/deps)" command -v "$program" || exit 1
done

# ------------------------------------------------------------------ set-up
mark setup
guest_start_nfs || exit 1
guest_mount_all_nfs || exit 1
M42=$(nfs_mount_of 4.2)
mkdir -p "$(nfs_export_of 4.2)/u" && chown "$USER_NAME" "$(nfs_export_of 4.2)/u"
mkdir -p "$WORK" "$REPORTS" "$NODE_DIR" /run/mysqld "$SLURM_STATE"/{etc,munge,ctld,spool,log,run}
chmod 755 "$SLURM_STATE" "$SLURM_STATE/munge"

# The detached vnfs-accounting logs to syslog: keep its lines.
busybox syslogd -n -O "$WORK/syslog" &
SYSLOGD_PID=$!

# MariaDB, as Debian installs it, on tmpfs.
mariadb-install-db --no-defaults --user=root --datadir="$WORK/mysql" \
	--auth-root-authentication-method=socket --skip-test-db > "$WORK/mariadb-install.log" 2>&1 ||
	{ fail "mariadb-install-db"; tail -n 20 "$WORK/mariadb-install.log"; exit 1; }
mariadbd --no-defaults --user=root --datadir="$WORK/mysql" --socket=$DB_SOCKET \
	--skip-networking --innodb-buffer-pool-size=32M --innodb-lock-wait-timeout=900 \
	--log-error="$WORK/mariadb.log" --pid-file="$WORK/mariadb.pid" &
MARIADB_PID=$!
check "MariaDB answers" until_ok 120 mariadb --no-defaults -S $DB_SOCKET -u root -e 'SELECT 1' || exit 1
mark mariadb-up

slurm_start_munge || exit 1

cat > "$SLURM_STATE/etc/slurmdbd.conf" << EOF
AuthType=auth/munge
AuthInfo=socket=$SLURM_STATE/munge/munge.socket
DbdHost=localhost
DbdPort=16819
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=root
StorageLoc=slurm_acct_db
LogFile=$SLURM_STATE/log/slurmdbd.log
PidFile=$SLURM_STATE/run/slurmdbd.pid
DebugLevel=info
# Users see their own jobs only: the rule vnfs-report relies on (sacct runs as its caller).
PrivateData=jobs
EOF
chmod 600 "$SLURM_STATE/etc/slurmdbd.conf"
SLURM_CONF=$SLURM_STATE/etc/slurm.conf
export SLURM_CONF
SLURM_PER_NODE=-%n
SLURM_ACCOUNTING_STORAGE=accounting_storage/slurmdbd
SLURM_NODE_LINES="NodeName=node1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=16831 CPUs=$SLURM_NODE_CPUS RealMemory=500 State=UNKNOWN
NodeName=node2 NodeHostname=localhost NodeAddr=127.0.0.1 Port=16832 CPUs=$SLURM_NODE_CPUS RealMemory=500 State=UNKNOWN
PartitionName=debug Nodes=node1,node2 Default=YES MaxTime=INFINITE State=UP"
# Slurm 22.05 takes the munge socket for slurmdbd connections from
# AccountingStoragePass, not AuthInfo.
SLURM_EXTRA_CONF="AccountingStorageHost=localhost
AccountingStoragePort=16819
AccountingStoragePass=$SLURM_STATE/munge/munge.socket
EpilogSlurmctld=$WORK/epilog-slurmctld
PrivateData=jobs"
_slurm_conf proctrack/cgroup > "$SLURM_CONF"
_slurm_cgroup_conf v2 > "$SLURM_STATE/etc/cgroup.conf" || { fail "cgroup set-up"; exit 1; }
slurm_set_plugstack "optional $PLUGIN socket=$NODE_DIR/vnfs.sock timeout_ms=3000"

# The controller's vnfs.conf, and slurmctld's EpilogSlurmctld: a program
# run with no argument and no PATH, so a two-line wrapper names the config
# (and, here, Slurm's: this test's slurm.conf is not at the default path).
cat > "$WORK/controller.conf" << EOF
[helper]
report_dir = $REPORTS
[slurm_accounting]
wait = 300s
EOF
cat > "$WORK/epilog-slurmctld" << EOF
#!/bin/sh
SLURM_CONF=$SLURM_CONF exec $ACCOUNTING --config $WORK/controller.conf
EOF
chmod 755 "$WORK/epilog-slurmctld"

# slurmdbd reads the slurmdbd.conf beside $SLURM_CONF.
slurmdbd > "$WORK/slurmdbd.log" 2>&1 ||
	{ fail "slurmdbd did not start"; cat "$WORK/slurmdbd.log"; exit 1; }
dbd_up() { timeout 10 sacctmgr -n -P list cluster > /dev/null 2>&1; }
check "slurmdbd answers (it created its schema in MariaDB)" until_ok 180 dbd_up ||
	{ sacctmgr -n -P list cluster; exit 1; }
check "the cluster is added to the accounting" sacctmgr -i add cluster vnfs
check "an account for the test's users" sacctmgr -i add account research Cluster=vnfs
check "root and $USER_NAME in it" sacctmgr -i add user root,"$USER_NAME" Account=research
mark slurmdbd-up

slurmctld -f "$SLURM_CONF" -c -i || { fail "slurmctld did not start"; exit 1; }
check "slurmctld answers" until_ok 60 _slurm_ctld_up || exit 1

# ---- each node: its directory, its helper, its slurmd in its own view
start_helper() { # start_helper NODE
	local node=$1 dir=$WORK/$1
	mkdir -p "$dir"
	cat > "$dir/vnfs.conf" << EOF
[helper]
socket = $dir/vnfs.sock
state_dir = $dir/state
pin_dir = /sys/fs/bpf/vnfs-$node
report_dir = $REPORTS
node_name = $node
interval = 1s
finished_job_grace = 2s
[sqlite]
path = $dir/history.db
[prometheus]
enabled = false
EOF
	"$HELPER" --config "$dir/vnfs.conf" >> "$dir/helper.log" 2>&1 &
	eval "HELPER_PID_$node=\$!"
	until_ok 120 grep -q 'ready:' "$dir/helper.log" ||
		{ fail "$node: helper not ready within 120 s"; tail -n 20 "$dir/helper.log"; return 1; }
}
stop_helper() { # stop_helper NODE
	local pid_variable=HELPER_PID_$1
	kill "${!pid_variable}" && wait "${!pid_variable}"
}
start_slurmd() { # start_slurmd NODE
	unshare --mount --propagation private sh -c \
		"mount --bind $WORK/$1 $NODE_DIR && exec slurmd -f $SLURM_CONF -N $1 -c" ||
		{ fail "$1: slurmd did not start"; return 1; }
}
node_idle() { [ "$(timeout 5 sinfo -h -n "$1" -o %T 2> /dev/null)" = idle ]; }
for node in node1 node2; do
	start_helper $node || exit 1
	start_slurmd $node || exit 1
done
for node in node1 node2; do
	check "$node is idle" until_ok 60 node_idle $node || { tail -n 20 "$SLURM_STATE/log/slurmd-$node.log"; exit 1; }
done
mark cluster-up
cd /tmp || exit 1

# system_comment JOB: the job's SystemComment as sacct shows it
system_comment() { sacct -j "$1" -X -n -P -o SystemComment 2> /dev/null; }
# summary_field JOB KEY: one KEY=VALUE of the vnfs line of the job's SystemComment
summary_field() { system_comment "$1" | grep '^vnfs1 ' | tr ' ' '\n' | sed -n "s/^$2=//p"; }
has_summary() { system_comment "$1" | grep -q '^vnfs1 '; }

# ---- a job on both nodes: 3 MiB from node1, 5 MiB from node2
mark two-node-job
output=$(as_user "$USER_NAME" srun -N2 --vnfs-tags=PROJECT_NAME=climate bash -c \
	'echo "job=$SLURM_JOB_ID node=$SLURMD_NODENAME"; dd if=/dev/zero of='"$M42"'/u/part.$SLURMD_NODENAME bs=1M count=$((SLURM_NODEID == 0 ? 3 : 5)) conv=fsync status=none' \
	2> "$WORK/two-node.err")
check_eq "the job on two nodes: srun exits 0" "$?" 0
cat "$WORK/two-node.err"
job=$(sed -n 's/^job=\([0-9]*\) .*/\1/p' <<< "$output" | head -n 1)
check_eq "its tasks ran on node1 and node2" "$(sed -n 's/.* node=//p' <<< "$output" | sort | tr '\n' ' ')" "node1 node2 "
for node in node1 node2; do
	check "$node's helper wrote its report of job $job" until_ok 60 test -s "$REPORTS/$job/$node.json"
done
check_eq "node1's report: 3 MiB written" "$(jq -r '.operations.write.bytes' "$REPORTS/$job/node1.json")" $((3 * MIB))
check_eq "node2's report: 5 MiB written" "$(jq -r '.operations.write.bytes' "$REPORTS/$job/node2.json")" $((5 * MIB))

# EpilogSlurmctld went to the background; it stores once both reports are
# there and slurmdbd holds the job.  Its own bound is 300 s.
check "EpilogSlurmctld stored job $job's summary in its SystemComment" until_ok 330 has_summary "$job"
system_comment "$job" > "$VNFS_OUT/system-comment-$job.txt"
check_eq "sacct: nodes 2 of 2 reported" "$(summary_field "$job" nodes)" 2/2
check_eq "sacct: the job's tag" "$(summary_field "$job" tags)" PROJECT_NAME=climate
check_eq "sacct: exactly 8 MiB written in 8 calls, over both nodes" \
	"$(summary_field "$job" write | cut -d: -f1,2,4)" "8:$((8 * MIB)):0"
check_eq "sacct: 2 fsyncs, one per node" "$(summary_field "$job" fsync | cut -d: -f1)" 2
check_eq "sacct: no missing node" "$(summary_field "$job" missing)" ""
check "vnfs-accounting said so in syslog" grep -q "vnfs-accounting.*job $job: stored vnfs1 nodes=2/2" "$WORK/syslog"

# ---- vnfs-report on a login node: no helper, no history, no report file
mark login-node
mkdir -p "$WORK/login"
cat > "$WORK/login/vnfs.conf" << EOF
[helper]
socket = $WORK/login/no-helper.sock
report_dir = $WORK/login/reports
[sqlite]
path = $WORK/login/history.db
EOF
chmod -R a+rX "$WORK/login"
login_report() { as_user "$1" "$REPORT" --config "$WORK/login/vnfs.conf" "${@:2}"; }
line=$(login_report "$USER_NAME" -j "$job" -n -P -o JobID,User,Nodes,Tags,WriteBytes,WriteOps,State 2> "$WORK/login.err")
check_eq "vnfs-report -j $job on the login node exits 0" "$?" 0
check_eq "vnfs-report -j $job prints the summary from Slurm's accounting" "$line" \
	"$job|$USER_NAME|node[1-2]|PROJECT_NAME=climate|$((8 * MIB))|8|COMPLETED"
cat "$WORK/login.err"
check "... and says where the numbers come from" \
	grep -q "no history database at $WORK/login/history.db: jobs are shown from Slurm's accounting" "$WORK/login.err"
check_eq "vnfs-report --json: write bytes" \
	"$(login_report "$USER_NAME" -j "$job" --json 2> /dev/null | jq '.jobs[0].operations.write.bytes')" $((8 * MIB))
check_eq "vnfs-report --json: nodes 2 of 2, source slurm_accounting" \
	"$(login_report "$USER_NAME" -j "$job" --json 2> /dev/null | jq -r '.jobs[0] | "\(.nodes_reported)/\(.nodes_expected) \(.source)"')" \
	"2/2 slurm_accounting"
login_report "$USER_NAME" -j "$job" -l > "$WORK/login-long.txt" 2> /dev/null
check "vnfs-report -l: all 2 nodes reported" grep -q "^Nodes: all 2 reported" "$WORK/login-long.txt"
check "vnfs-report -l: the write line, with no latency quantile kept" \
	grep -Eq "^write +8 +0 .* - +- +8M$" "$WORK/login-long.txt"
check "vnfs-report -l: the findings of the job's end" \
	grep -q "^Findings at the job's end (Slurm's accounting)" "$WORK/login-long.txt"
# Another user is shown nothing of it: Slurm hides the job (PrivateData=jobs),
# and vnfs-report shows a user their own jobs only.
check_eq "sacct shows job $job to its owner" \
	"$(as_user "$USER_NAME" sacct -j "$job" -X -n -P -o JobID 2> /dev/null)" "$job"
check_eq "sacct hides job $job from another user" \
	"$(as_user nobody sacct -j "$job" -X -n -P -o JobID 2> /dev/null)" ""
check_eq "another user's vnfs-report -j $job shows no row" \
	"$(login_report nobody -j "$job" -n -P -o JobID 2> /dev/null)" ""

# ---- a node whose helper is down: the summary says 1 of 2
mark missing-node
stop_helper node2
output=$(as_user "$USER_NAME" srun -N2 bash -c \
	'echo "job=$SLURM_JOB_ID"; dd if=/dev/zero of='"$M42"'/u/half.$SLURMD_NODENAME bs=1M count=$((SLURM_NODEID == 0 ? 3 : 5)) conv=fsync status=none' \
	2> "$WORK/missing.err")
check_eq "a job with node2's helper down still exits 0" "$?" 0
partial=$(sed -n 's/^job=//p' <<< "$output" | head -n 1)
check "node1 reported job $partial" until_ok 60 test -s "$REPORTS/$partial/node1.json"
check "node2 did not" test ! -e "$REPORTS/$partial/node2.json"
# By hand, as an administrator would, waiting 3 s for node2 (the epilog's
# own copy waits its 300 s in the background and stores the same).
check_eq "vnfs-accounting -j $partial -w 3 exits 0" \
	"$(SLURM_CONF=$SLURM_CONF "$ACCOUNTING" --config "$WORK/controller.conf" -j "$partial" -N 'node[1-2]' -w 3 > "$WORK/by-hand.out" 2>&1; echo $?)" 0
cat "$WORK/by-hand.out"
check_eq "sacct: 1 of 2 nodes reported" "$(summary_field "$partial" nodes)" 1/2
check_eq "sacct: node2 missing" "$(summary_field "$partial" missing)" node2
check_eq "sacct: node1's 3 MiB only" "$(summary_field "$partial" write | cut -d: -f1,2)" "3:$((3 * MIB))"
login_report "$USER_NAME" -j "$partial" -n -P -o WriteBytes > "$WORK/partial.out" 2> "$WORK/partial.err"
check_eq "vnfs-report prints node1's bytes" "$(cat "$WORK/partial.out")" $((3 * MIB))
check "vnfs-report says the job lacks a node" \
	grep -q "note: job $partial: 1 of 2 nodes reported (missing: node2): its numbers lack theirs" "$WORK/partial.err"
start_helper node2 || exit 1

# ---- other tools' comments are kept
mark coexist
# (Lowercase: Slurm 22.05's sacctmgr lowercases every comment it sets, the
# reason vnfs-accounting sets its own through the API.)
check "an AdminComment of jobstats' form" sacctmgr -i modify job where jobid="$job" set AdminComment=js1:h4siaaaa
check "a SystemComment of a burst-buffer plugin" sacctmgr -i modify job where jobid="$job" set "SystemComment=bb/lua: staged in"
check_eq "vnfs-accounting -j $job again exits 0" \
	"$(SLURM_CONF=$SLURM_CONF "$ACCOUNTING" --config "$WORK/controller.conf" -j "$job" -N 'node[1-2]' -w 30 > /dev/null 2>&1; echo $?)" 0
check_eq "the other tool's line is kept, vnfs's after it" \
	"$(system_comment "$job" | cut -c1-16)" "bb/lua: staged i
vnfs1 nodes=2/2 "
check_eq "AdminComment is untouched" "$(sacct -j "$job" -X -n -P -o AdminComment)" js1:h4siaaaa
check_eq "the tag keeps its case" "$(summary_field "$job" tags)" PROJECT_NAME=climate
check_eq "the merged numbers are unchanged" "$(summary_field "$job" write | cut -d: -f1,2)" "8:$((8 * MIB))"

# ---- usage
check_eq "vnfs-accounting with no job: exit 2" \
	"$(env -u SLURM_JOB_ID -u SLURM_JOB_NODELIST "$ACCOUNTING" --config "$WORK/controller.conf" > /dev/null 2>&1; echo $?)" 2
check_eq "a job id that is not a number: exit 2" \
	"$("$ACCOUNTING" --config "$WORK/controller.conf" -j '1;id' -N node1 -w 0 > "$WORK/bad-id.out" 2>&1; echo $?)" 2
check "... and says why" grep -q "'1;id' is not a Slurm job id (a number)" "$WORK/bad-id.out"

# ------------------------------------------------------------------ end
mark stop
for node in node1 node2; do
	pid_file=$SLURM_STATE/run/slurmd-$node.pid
	[ -s "$pid_file" ] && kill "$(< "$pid_file")"
	stop_helper $node
done
[ -s "$SLURM_STATE/run/slurmctld.pid" ] && kill "$(< "$SLURM_STATE/run/slurmctld.pid")"
[ -s "$SLURM_STATE/run/slurmdbd.pid" ] && kill "$(< "$SLURM_STATE/run/slurmdbd.pid")"
kill "$MARIADB_PID" "$SYSLOGD_PID" 2> /dev/null
check "no sanitizer report in the helpers' logs" bash -c "! grep -qE 'Sanitizer|runtime error' $WORK/node*/helper.log"
save_logs
guest_done
