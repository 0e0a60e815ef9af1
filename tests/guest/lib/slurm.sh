# tests/guest/lib/slurm.sh — a single-node Slurm 22.05 (munged, slurmctld,
# slurmd) inside the test guest, for suites that source it after guest.sh.
#
#   slurm_start MODE PLUGSTACK_LINE...   configure and start; MODE is
#       v2         pure cgroup v2 guest, Slurm's cgroup/v2, proctrack/cgroup
#       hybrid     guest booted with --cgroup hybrid: Slurm's cgroup/v1,
#                  proctrack/cgroup; cgroup2 (no controllers) at /sys/fs/cgroup/unified
#       v1         guest booted with --cgroup v1: as hybrid, but no cgroup2 is
#                  mounted until spank_vnfs mounts one at /run/vnfs/cgroup2
#       linuxproc  proctrack/linuxproc: Slurm makes no per-step cgroups
#   slurm_set_plugstack LINE...          rewrite plugstack.conf (srun and
#                                        slurmstepd read it at every step)
#   slurm_restart_slurmd                 slurmd looks for job_prolog/epilog
#                                        symbols only when it starts
#   slurm_stop
#   slurm_start_munge                    munged alone (a suite that starts the rest itself)
#   slurm_plugin_path                    the built spank_vnfs.so
#   SLURM_EXTRA_CONF                     lines appended to slurm.conf
#   SLURM_NODE_LINES                     NodeName= and PartitionName= lines
#                                        (default: one node, $SLURM_NODE)
#   SLURM_PER_NODE                       "" (one slurmd), or "-%n": each slurmd's
#                                        spool, pid and log file by node name
#   SLURM_ACCOUNTING_STORAGE             AccountingStorageType (default none)
#
# All state is on tmpfs under $SLURM_STATE (/run/slurm); clients need
# SLURM_CONF, which slurm_start exports.  Pitfalls (docs: notes on Slurm in
# the guest): slurmd must start only once slurmctld answers; Slurm 22.05's
# cgroup/v2 needs IgnoreSystemd=yes without systemd, a system.slice, and io
# and pids enabled too (it splits cgroup.controllers on ' ' only, so the last
# controller name keeps its newline); slurmd initialises a cgroup plugin even
# with proctrack/linuxproc, so every mode writes a cgroup.conf.

SLURM_STATE=/run/slurm
SLURM_NODE=localhost
SLURM_NODE_CPUS=2
SLURM_CONF=$SLURM_STATE/etc/slurm.conf
export SLURM_CONF

# slurm_plugin_path: where libtool put the plugin in the build tree.
slurm_plugin_path() {
	echo "${VNFS_BUILD:-/vnfs/src}/spank/.libs/spank_vnfs.so"
}

# _slurm_alive PID: exists and is not a zombie (kill -0 succeeds on zombies).
_slurm_alive() {
	[ -r "/proc/$1/status" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2> /dev/null
}

_slurm_cgroup_conf() {
	local mode=$1
	if [ "${VNFS_CGROUP_MODE:-v2}" != v2 ]; then
		printf '%s\n' CgroupPlugin=cgroup/v1 CgroupAutomount=yes ConstrainCores=no \
			ConstrainRAMSpace=no ConstrainDevices=no
		return
	fi
	# Pure v2 (also for linuxproc: slurmd autodetects and initialises v2).
	mkdir -p /sys/fs/cgroup/system.slice || return 1
	echo "+cpuset +cpu +io +memory +pids" > /sys/fs/cgroup/cgroup.subtree_control || return 1
	echo "+cpuset +cpu +io +memory +pids" > /sys/fs/cgroup/system.slice/cgroup.subtree_control ||
		return 1
	printf '%s\n' CgroupPlugin=cgroup/v2 IgnoreSystemd=yes CgroupAutomount=yes \
		ConstrainCores=no ConstrainRAMSpace=no ConstrainDevices=no
	: "$mode"
}

_slurm_conf() {
	local proctrack=$1
	cat <<EOF
ClusterName=vnfs
SlurmctldHost=$SLURM_NODE
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SLURM_STATE/munge/munge.socket
StateSaveLocation=$SLURM_STATE/ctld
SlurmdSpoolDir=$SLURM_STATE/spool${SLURM_PER_NODE:-}
SlurmctldPidFile=$SLURM_STATE/run/slurmctld.pid
SlurmdPidFile=$SLURM_STATE/run/slurmd${SLURM_PER_NODE:-}.pid
SlurmctldLogFile=$SLURM_STATE/log/slurmctld.log
SlurmdLogFile=$SLURM_STATE/log/slurmd${SLURM_PER_NODE:-}.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=$proctrack
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=${SLURM_ACCOUNTING_STORAGE:-accounting_storage/none}
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
Epilog=/bin/true
PlugStackConfig=$SLURM_STATE/etc/plugstack.conf
# The nodes have SLURM_NODE_CPUS CPUs whatever the guest has: the suites run
# two jobs at once and srun -n2, and scripts/check boots most guests with
# one vCPU.  config_overrides keeps slurmd from draining a node whose
# hardware has fewer (TaskPlugin=task/none binds no task to a CPU).
SlurmdParameters=config_overrides
KillWait=5
MinJobAge=300
${SLURM_NODE_LINES:-NodeName=$SLURM_NODE NodeAddr=127.0.0.1 CPUs=$SLURM_NODE_CPUS RealMemory=500 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP}
${SLURM_EXTRA_CONF:-}
EOF
}

# slurm_set_plugstack LINE...: one plugstack.conf line per argument.
slurm_set_plugstack() {
	if [ $# -gt 0 ]; then printf '%s\n' "$@"; else :; fi > "$SLURM_STATE/etc/plugstack.conf"
}

_slurm_ctld_up() { timeout 5 scontrol ping 2> /dev/null | grep -q 'is UP'; }
slurm_node_idle() { [ "$(timeout 5 sinfo -h -n "$SLURM_NODE" -o %T 2> /dev/null)" = idle ]; }

_slurm_start_slurmd() {
	slurmd -f "$SLURM_CONF" -N "$SLURM_NODE" -c || { fail "slurm: slurmd did not start"; return 1; }
	until_ok 60 slurm_node_idle || {
		fail "slurm: node not idle within 60 s"
		tail -n 20 "$SLURM_STATE/log/slurmd.log"
		return 1
	}
}

# slurm_start_munge: a munge key and munged, for Slurm's daemons and clients.
slurm_start_munge() {
	mungekey --create --keyfile="$SLURM_STATE/munge/munge.key" 2> /dev/null
	chmod 600 "$SLURM_STATE/munge/munge.key"
	munged --key-file="$SLURM_STATE/munge/munge.key" --socket="$SLURM_STATE/munge/munge.socket" \
		--log-file="$SLURM_STATE/munge/munged.log" --pid-file="$SLURM_STATE/munge/munged.pid" \
		--seed-file="$SLURM_STATE/munge/munged.seed" || { fail "slurm: munged did not start"; return 1; }
}

# slurm_start MODE PLUGSTACK_LINE...
slurm_start() {
	local mode=$1 proctrack
	shift
	case $mode in
	v2) [ "${VNFS_CGROUP_MODE:-v2}" = v2 ] || { fail "slurm: mode v2 needs a --cgroup v2 guest"; return 1; }
		proctrack=proctrack/cgroup ;;
	hybrid) [ "${VNFS_CGROUP_MODE:-}" = hybrid ] ||
			{ fail "slurm: mode hybrid needs a --cgroup hybrid guest"; return 1; }
		proctrack=proctrack/cgroup ;;
	v1) [ "${VNFS_CGROUP_MODE:-}" = v1 ] ||
			{ fail "slurm: mode v1 needs a --cgroup v1 guest"; return 1; }
		proctrack=proctrack/cgroup ;;
	linuxproc) proctrack=proctrack/linuxproc ;;
	*) fail "slurm: unknown mode '$mode' (v2, hybrid, v1 or linuxproc)"; return 1 ;;
	esac
	mkdir -p "$SLURM_STATE"/{etc,munge,ctld,spool,log,run} || return 1
	chmod 755 "$SLURM_STATE" "$SLURM_STATE/munge"
	_slurm_conf "$proctrack" > "$SLURM_CONF"
	_slurm_cgroup_conf "$mode" > "$SLURM_STATE/etc/cgroup.conf" ||
		{ fail "slurm: cgroup set-up for $mode"; return 1; }
	slurm_set_plugstack "$@"

	slurm_start_munge || return 1
	slurmctld -f "$SLURM_CONF" -c -i || { fail "slurm: slurmctld did not start"; return 1; }
	until_ok 60 _slurm_ctld_up || { fail "slurm: slurmctld not answering within 60 s"; return 1; }
	_slurm_start_slurmd || return 1
	mark "slurm-$mode-up"
}

# slurm_restart_slurmd: after a plugin change that slurmd must notice.
slurm_restart_slurmd() {
	_slurm_stop_daemon slurmd "$SLURM_STATE/run/slurmd.pid"
	_slurm_start_slurmd
}

_slurm_stop_daemon() {
	local name=$1 pid_file=$2 pid
	[ -s "$pid_file" ] || return 0
	pid=$(< "$pid_file")
	_slurm_alive "$pid" && kill -TERM "$pid"
	until_ok 10 bash -c "! [ -r /proc/$pid/status ] || grep -q '^State:[[:space:]]*Z' /proc/$pid/status" ||
		say "slurm: $name ($pid) still running after 10 s"
	rm -f "$pid_file"
}

slurm_stop() {
	_slurm_stop_daemon slurmd "$SLURM_STATE/run/slurmd.pid"
	_slurm_stop_daemon slurmctld "$SLURM_STATE/run/slurmctld.pid"
	_slurm_stop_daemon munged "$SLURM_STATE/munge/munged.pid"
}

# slurm_save_logs: copies the daemons' logs and config into $VNFS_OUT/slurm.
slurm_save_logs() {
	mkdir -p "$VNFS_OUT/slurm" && cp -r "$SLURM_STATE/log" "$SLURM_STATE/etc" "$VNFS_OUT/slurm/" 2> /dev/null
}

# slurm_wait_job_done JOB SECONDS: until the job has left the queue.
slurm_wait_job_done() {
	until_ok "$2" bash -c "[ -z \"\$(squeue -h -j $1 -o %i 2> /dev/null)\" ]"
}

# slurm_job_state JOB: COMPLETED, FAILED, ... (while slurmctld remembers it).
slurm_job_state() {
	scontrol show job "$1" 2> /dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'
}
