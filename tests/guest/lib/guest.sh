#!/bin/bash
# tests/guest/lib/guest.sh — the guest side of the test bed, in bash.
#
# Two roles:
#  * sourced by every suite (`source /vnfs/src/tests/guest/lib/guest.sh`):
#    check helpers, timeline marks, the NFS server and mounts, as_user;
#  * executed by /init as the guest driver (`guest.sh --driver`, PID 1): runs
#    the suite named on the kernel command line as a child process, guards it
#    with a watchdog, and prints the one final result line before powering off.
#
# Checks are recorded as lines in $VNFS_STATE/checks (tmpfs, appended with
# O_APPEND), so checks made in subshells and background jobs count too; the
# driver derives the result from that file, never from the suite's exit alone.
#
# Environment set by the driver for the suite:
#   VNFS_SRC            source tree (9p share), /vnfs/src
#   VNFS_BUILD          where built programs are: /vnfs/build with --build, else /vnfs/src
#   VNFS_OUT            results directory on the host (9p share), /vnfs/out
#   VNFS_STATE          guest-local state of the test bed, /run/vnfs
#   VNFS_SUITE          the suite's path relative to VNFS_SRC
#   VNFS_CGROUP_MODE    v2, hybrid or v1 (runner --cgroup)
#   VNFS_CGROUP2_MOUNT  where cgroup2 is mounted: /sys/fs/cgroup or /sys/fs/cgroup/unified;
#                       v1: where spank_vnfs mounts it (/run/vnfs/cgroup2)
#   VNFS_TEST_USER      an unprivileged user that exists in the guest: vnfstest
#   VNFS_GUEST_CLOCK    host (the guest's clock follows the host's) or instructions
#                       (runner --accel icount: it advances with the instructions run)
# Suites should not use `set -e`: a failed check returns 1 and would end them.

if [[ ${BASH_SOURCE[0]} != "$0" ]] && [ -n "${_vnfs_guest_lib_loaded:-}" ]; then
	return 0
fi
_vnfs_guest_lib_loaded=1

# The NFS versions guest_mount_all_nfs mounts, each at $(nfs_mount_of V).
NFS_VERSIONS="3 4.0 4.1 4.2"
# The server's export root (tmpfs; fsid=0, so NFSv4 sees it as "/").
NFS_EXPORT_ROOT=/srv/export
# NFS-Ganesha, the second server (guest_start_nfs --with-ganesha): the
# versions it is mounted with, each at $(ganesha_mount_of V), and its export.
GANESHA_VERSIONS="3 4.1"
GANESHA_EXPORT=/srv/ganesha

# ------------------------------------------------------------------ basics

# guest_uptime: seconds since the guest kernel started, e.g. 12.34.
guest_uptime() {
	local uptime _
	read -r uptime _ < /proc/uptime
	echo "$uptime"
}

# say MESSAGE...: a timestamped line on the console.
say() {
	echo "[guest $(guest_uptime)] $*"
}

# mark NAME: a timeline entry (guest uptime, and the processes started
# since boot: under emulation each costs tens of ms) that the runner prints
# at the end.
mark() {
	local name=${*// /-} now key value processes=
	now=$(guest_uptime)
	while read -r key value _; do
		[ "$key" = processes ] && processes=$value
	done < /proc/stat
	echo "$name $now $processes" >> "${VNFS_OUT:-/vnfs/out}/timeline.txt"
	echo "[guest $now] mark $name"
}

# _vnfs_record PASS|FAIL DESCRIPTION: the one place a check result is kept.
_vnfs_record() {
	local outcome=$1 description=${2//[$'\n\t']/ }
	printf '%s\t%s\n' "$outcome" "$description" >> "${VNFS_STATE:-/run/vnfs}/checks" ||
		echo "guest.sh: could not record the check below" >&2
	echo "$outcome: $description"
}

# pass DESCRIPTION: record a passed check (when the test logic is your own).
pass() {
	_vnfs_record PASS "$1"
}

# fail DESCRIPTION: record a failed check; returns 1.
fail() {
	_vnfs_record FAIL "$1"
	return 1
}

# check DESCRIPTION COMMAND...: runs COMMAND; passes if it exits 0.
# Returns the outcome, so `check ... || return` works.
check() {
	local description=$1 status
	shift
	[ $# -gt 0 ] || { fail "$description (check: no command given)"; return 1; }
	"$@"
	status=$?
	if [ "$status" -eq 0 ]; then
		pass "$description"
	else
		fail "$description (exit status $status)"
	fi
}

# check_eq DESCRIPTION ACTUAL EXPECTED: string equality; a failure shows both.
check_eq() {
	if [ $# -ne 3 ]; then
		fail "$1 (check_eq needs DESCRIPTION ACTUAL EXPECTED, got $# arguments)"
	elif [ "$2" == "$3" ]; then
		pass "$1"
	else
		fail "$1: got '$2', expected '$3'"
	fi
}

_vnfs_is_integer() { [[ $1 =~ ^-?[0-9]+$ ]]; }

# _vnfs_compare DESCRIPTION ACTUAL le|ge LIMIT: integer comparison.
_vnfs_compare() {
	local description=$1 actual=$2 operator=$3 limit=$4 holds=0
	if ! _vnfs_is_integer "$actual" || ! _vnfs_is_integer "$limit"; then
		fail "$description: not integers: got '$actual', limit '$limit'"
		return
	fi
	case $operator in
	le) [ "$actual" -le "$limit" ] && holds=1 ;;
	ge) [ "$actual" -ge "$limit" ] && holds=1 ;;
	esac
	if [ "$holds" = 1 ]; then
		pass "$description"
	elif [ "$operator" = le ]; then
		fail "$description: got $actual, expected <= $limit"
	else
		fail "$description: got $actual, expected >= $limit"
	fi
}

# check_le DESCRIPTION ACTUAL LIMIT: passes if ACTUAL <= LIMIT (integers).
check_le() {
	[ $# -eq 3 ] || { fail "$1 (check_le needs DESCRIPTION ACTUAL LIMIT)"; return; }
	_vnfs_compare "$1" "$2" le "$3"
}

# check_ge DESCRIPTION ACTUAL LIMIT: passes if ACTUAL >= LIMIT (integers).
check_ge() {
	[ $# -eq 3 ] || { fail "$1 (check_ge needs DESCRIPTION ACTUAL LIMIT)"; return; }
	_vnfs_compare "$1" "$2" ge "$3"
}

# kernel_before MAJOR MINOR: true when the guest's kernel is older.
kernel_before() {
	local major minor
	IFS=. read -r major minor _ <<< "$(uname -r)"
	[ "$major" -lt "$1" ] || { [ "$major" -eq "$1" ] && [ "${minor%%[!0-9]*}" -lt "$2" ]; }
}

# until_ok SECONDS COMMAND...: runs COMMAND (output discarded) until it
# succeeds, 0.1 s after the first try, then 0.2, 0.4, 0.8 and every second:
# a quick answer when it comes soon, and a long wait that does not take the
# guest's CPU from what it waits for (each try of a command is a process,
# tens of ms under emulation).  Returns 1 if SECONDS pass first.  Records
# no check.
until_ok() {
	local seconds=$1 deadline now next_ms=100 wait_ms wait
	shift
	[[ $seconds =~ ^[0-9]+$ ]] || { echo "until_ok: bad SECONDS '$seconds'" >&2; return 2; }
	now=${EPOCHREALTIME/./}
	deadline=$(( now + seconds * 1000000 ))
	until "$@" > /dev/null 2>&1; do
		now=${EPOCHREALTIME/./}
		[ "$now" -lt "$deadline" ] || return 1
		wait_ms=$(( (deadline - now) / 1000 < next_ms ? (deadline - now) / 1000 + 1 : next_ms ))
		printf -v wait '%d.%03d' $((wait_ms / 1000)) $((wait_ms % 1000))
		pause "$wait"
		next_ms=$(( next_ms * 2 > 1000 ? 1000 : next_ms * 2 ))
	done
}

# pause SECONDS: sleep(1) without its exec, which costs 50-150 ms of the
# guest's CPU under emulation (/bin/true 114-146 ms, docs/TESTBED.md): a
# read that times out on a pipe this shell holds both ends of.
pause() {
	[ -n "${_vnfs_pause_fd-}" ] || exec {_vnfs_pause_fd}<> <(:)
	read -r -t "$1" -u "$_vnfs_pause_fd" _
	return 0
}

# helper_collections ADDRESS: the intervals the helper whose /metrics is at
# ADDRESS (host:port) has collected.  collected_beyond ADDRESS COUNT: it has
# collected more than COUNT.  A check that something did not happen within
# a pass waits for two more than it saw, so one whole pass ran in between.
helper_collections() {
	curl -sf "http://$1/metrics" | awk '/^vnfs_helper_collections_total / {print $2}'
}
collected_beyond() { [ "$(helper_collections "$1")" -gt "$2" ]; }

# as_user USER COMMAND...: runs COMMAND as USER (name or uid) with that
# user's groups, from the current directory and environment.
as_user() {
	local user=$1 uid gid
	shift
	uid=$(id -u "$user" 2> /dev/null) && gid=$(id -g "$user" 2> /dev/null) ||
		{ echo "as_user: no such user '$user'" >&2; return 2; }
	setpriv --reuid="$uid" --regid="$gid" --init-groups -- "$@"
}

# guest_drop_caches: flush and drop the page, dentry and inode caches, so the
# next read goes to the NFS server.
guest_drop_caches() {
	sync && echo 3 > /proc/sys/vm/drop_caches
}

# ---------------------------------------------------------------------- NFS

# _vnfs_nfs_step DESCRIPTION COMMAND...: a server start-up step; only a
# failure is recorded (infrastructure, not a test result).
_vnfs_nfs_step() {
	local description=$1
	shift
	"$@" || { fail "NFS server: $description failed"; return 1; }
}

# guest_start_nfs: the kernel NFS server on 127.0.0.1, exporting the tmpfs
# $NFS_EXPORT_ROOT (fsid=0: the v4 pseudo-root; the 9p root cannot be
# exported).  nfsdcld runs before rpc.nfsd, so with no clients to reclaim
# nfsd skips its 90 s grace period; grace and lease are cut to 10 s anyway.
# Once per boot: suites sharing one boot (kernel.sh) find it running.
# guest_start_nfs --with-ganesha: NFS-Ganesha too, the second server.
guest_start_nfs() {
	local setting with_ganesha=0
	[ "${1:-}" = --with-ganesha ] && with_ganesha=1
	[ -e "$VNFS_STATE/nfs-server" ] && return 0
	mkdir -p "$NFS_EXPORT_ROOT" /run/rpc_pipefs /run/rpcbind \
		/var/lib/nfs/nfsdcld /var/lib/nfs/sm /var/lib/nfs/sm.bak /var/lib/nfs/v4recovery &&
		touch /var/lib/nfs/etab /var/lib/nfs/rmtab || { fail "NFS server: state directories"; return 1; }
	chown _rpc /run/rpcbind 2> /dev/null
	mountpoint -q /proc/fs/nfsd || _vnfs_nfs_step "mount nfsd" mount -t nfsd nfsd /proc/fs/nfsd || return 1
	mountpoint -q /run/rpc_pipefs ||
		_vnfs_nfs_step "mount rpc_pipefs" mount -t rpc_pipefs sunrpc /run/rpc_pipefs || return 1
	for setting in /proc/fs/nfsd/nfsv4gracetime /proc/fs/nfsd/nfsv4leasetime /proc/sys/fs/nfs/nlm_grace_period; do
		[ -w "$setting" ] && { echo 10 > "$setting" || say "could not set $setting"; }
	done
	_vnfs_nfs_step "rpcbind" rpcbind -w || return 1
	_vnfs_nfs_step "nfsdcld" nfsdcld || return 1
	[ $with_ganesha = 1 ] && { _vnfs_start_ganesha || return 1; }
	_vnfs_nfs_step "exportfs" exportfs -o rw,sync,no_root_squash,no_subtree_check,insecure,fsid=0 \
		"127.0.0.1:$NFS_EXPORT_ROOT" || return 1
	_vnfs_nfs_step "rpc.mountd" rpc.mountd || return 1
	_vnfs_nfs_step "rpc.nfsd" rpc.nfsd 8 || return 1
	: > "$VNFS_STATE/nfs-server"
	mark nfs-server
}

# _vnfs_start_ganesha: NFS-Ganesha (its VFS back end), exporting the tmpfs
# $GANESHA_EXPORT at 127.0.0.2, port 2050, its MOUNT protocol at port
# 20049.  Not 2049: Ganesha binds the wildcard IPv6 address whatever
# Bind_addr says, and nfsd's socket holds that port.  Its clients name both
# ports (guest_mount_ganesha), so rpcbind is not asked; Ganesha's start
# unregisters every NFS and MOUNT program there, hence it starts before
# nfsd and rpc.mountd register theirs.  Graceless: no clients to reclaim.
# Delegations are off (Ganesha's default; nfsd grants them).
_vnfs_start_ganesha() {
	local run=/run/vnfs-ganesha
	mkdir -p "$run" "$GANESHA_EXPORT" /var/lib/nfs/ganesha || { fail "Ganesha: directories"; return 1; }
	cat > "$run/ganesha.conf" <<-CONF || { fail "Ganesha: configuration"; return 1; }
	NFS_CORE_PARAM {
		Bind_addr = 127.0.0.2;
		NFS_Port = 2050;
		MNT_Port = 20049;
		Protocols = 3, 4;
		Enable_NLM = false;
		Enable_RQUOTA = false;
		Enable_UDP = false;
		Plugins_Dir = /usr/lib/x86_64-linux-gnu/ganesha;
	}
	NFSv4 { Graceless = true; Lease_Lifetime = 10; }
	EXPORT {
		Export_Id = 1;
		Path = $GANESHA_EXPORT;
		Pseudo = /ganesha;
		Access_Type = RW;
		Squash = No_Root_Squash;
		Protocols = 3, 4;
		Transports = TCP;
		SecType = sys;
		FSAL { Name = VFS; }
	}
	CONF
	_vnfs_nfs_step "ganesha.nfsd" ganesha.nfsd -f "$run/ganesha.conf" -L "$VNFS_OUT/ganesha.log" \
		-p "$run/ganesha.pid" -N NIV_EVENT || return 1
	until_ok 300 _vnfs_listening 127.0.0.2 2050 ||
		{ fail "Ganesha: not listening at 127.0.0.2:2050 after 300 s (see ganesha.log)"; return 1; }
	until_ok 300 _vnfs_listening 127.0.0.2 20049 ||
		{ fail "Ganesha: MOUNT not listening at 127.0.0.2:20049 after 300 s (see ganesha.log)"; return 1; }
	mark ganesha
}

# _vnfs_listening ADDRESS PORT: something accepts TCP connections there.
_vnfs_listening() { bash -c "exec 3<> /dev/tcp/$1/$2" 2> /dev/null; }

# ganesha_mount_of VERSION: where guest_mount_ganesha mounts VERSION.
ganesha_mount_of() {
	echo "/mnt/ganesha/v$1"
}

# guest_mount_ganesha VERSION: Ganesha's export at $(ganesha_mount_of V),
# ports named (no rpcbind), the version checked as for nfsd.
guest_mount_ganesha() {
	local version=$1 mountpoint
	mountpoint=$(ganesha_mount_of "$version")
	mkdir -p "$mountpoint" || { fail "mkdir $mountpoint"; return 1; }
	case $version in
	3) mount -t nfs -o vers=3,nolock,proto=tcp,port=2050,mountport=20049,mountproto=tcp \
		"127.0.0.2:$GANESHA_EXPORT" "$mountpoint" ;;
	4.0|4.1|4.2) mount -t nfs4 -o "vers=$version,port=2050" 127.0.0.2:/ganesha "$mountpoint" ;;
	*) fail "guest_mount_ganesha: unknown NFS version '$version'"; return 1 ;;
	esac || { fail "mount Ganesha's export with NFS v$version at $mountpoint"; return 1; }
	check_eq "Ganesha: NFS v$version at $mountpoint negotiated vers=$version" \
		"$(nfs_negotiated_version "$mountpoint")" "$version"
}

# nfs_mount_of VERSION: where guest_mount_all_nfs mounts VERSION (3, 4.0, 4.1, 4.2).
nfs_mount_of() {
	echo "/mnt/nfs/v$1"
}

# nfs_export_of VERSION: the server-side directory behind $(nfs_mount_of VERSION).
nfs_export_of() {
	echo "$NFS_EXPORT_ROOT/v$1"
}

# nfs_negotiated_version MOUNTPOINT: the vers= option in /proc/mounts.
nfs_negotiated_version() {
	awk -v mountpoint="$1" '$2 == mountpoint {
		count = split($4, options, ",")
		for (i = 1; i <= count; i++)
			if (options[i] ~ /^vers=/) version = substr(options[i], 6)
	} END { print version }' /proc/mounts
}

# guest_mount_nfs VERSION MOUNTPOINT: mounts the export's subdirectory
# v<VERSION> with exactly that protocol version (3 over TCP without NLM,
# or 4.0/4.1/4.2) and checks in /proc/mounts that it was negotiated.
# Already mounted there (an earlier suite of the same boot): nothing to do.
guest_mount_nfs() {
	local version=$1 mountpoint=$2 subdirectory
	[ $# -eq 2 ] || { fail "guest_mount_nfs needs VERSION MOUNTPOINT"; return 1; }
	[ "$(nfs_negotiated_version "$mountpoint")" = "$version" ] && return 0
	subdirectory=v$version
	mkdir -p "$NFS_EXPORT_ROOT/$subdirectory" "$mountpoint" || { fail "mkdir for NFS v$version"; return 1; }
	case $version in
	3) mount -t nfs -o vers=3,nolock,proto=tcp "127.0.0.1:$NFS_EXPORT_ROOT/$subdirectory" "$mountpoint" ;;
	4.0|4.1|4.2) mount -t nfs4 -o "vers=$version" "127.0.0.1:/$subdirectory" "$mountpoint" ;;
	*) fail "guest_mount_nfs: unknown NFS version '$version' (3, 4.0, 4.1 or 4.2)"; return 1 ;;
	esac || { fail "mount NFS v$version at $mountpoint"; return 1; }
	check_eq "NFS v$version at $mountpoint negotiated vers=$version" \
		"$(nfs_negotiated_version "$mountpoint")" "$version"
}

# guest_mount_all_nfs: mounts every version in NFS_VERSIONS at $(nfs_mount_of V).
guest_mount_all_nfs() {
	local version status=0
	for version in $NFS_VERSIONS; do
		guest_mount_nfs "$version" "$(nfs_mount_of "$version")" || status=1
	done
	mark nfs-up
	return $status
}

# guest_umount_all_nfs: unmounts every version in NFS_VERSIONS, one check
# each; nothing when the suites share the boot (kernel.sh sets
# VNFS_SHARED_BOOT): the next one uses the same mounts.
guest_umount_all_nfs() {
	local version
	[ -n "${VNFS_SHARED_BOOT:-}" ] && return 0
	for version in $NFS_VERSIONS; do
		check "v$version: umount" umount "$(nfs_mount_of "$version")"
	done
}

# guest_done: the suite's last statement.  Without it the driver counts the
# run as aborted, whatever the checks said.
guest_done() {
	: > "${VNFS_STATE:-/run/vnfs}/completed"
	say "suite reached guest_done"
}

# ------------------------------------------------------------- the driver

# _vnfs_cmdline_value NAME: the value of vnfs.NAME= on the kernel command line.
_vnfs_cmdline_value() {
	local word
	for word in $(< /proc/cmdline); do
		[[ $word == "vnfs.$1="* ]] && { echo "${word#*=}"; return 0; }
	done
	return 1
}

_vnfs_poweroff() {
	sleep 0.2  # let the serial console drain the last lines
	/bin/busybox poweroff -n -f
	echo 'GUEST FAIL: poweroff failed'
	while :; do sleep 60; done
}

# _vnfs_check_kernel_log DMESG_FILE: one check in every suite, that the
# kernel warned of nothing while it ran.  A WARN or a BUG trap starts with
# the "cut here" line (its message follows), taints the kernel, and on a
# node booted with panic_on_warn is a panic: whatever the suite counted,
# vnfs must not cause one (5.10's verifier warned of the legacy build's run-
# time allocated hash at every start, until 2026-12-06).  Other "BUG:" and
# "Oops:" lines count too, but for lockup reports: an emulated CPU starved
# of host CPU reports those, and a guest that stays wedged is the runner's
# to diagnose.
_vnfs_check_kernel_log() {
	local log=$1 warning
	warning=$(awk -v cut_here='------------[ cut here ]------------' '
		message { print; exit }
		index($0, cut_here) { message = 1; next }
		/(BUG|Oops): / && !/lockup/ { print; exit }' "$log")
	if [ -z "$warning" ]; then
		pass "the kernel logged no WARNING or BUG"
	else
		fail "the kernel warned: ${warning#*] } (dmesg.txt)"
	fi
}

# _vnfs_report [EXTRA_FAILURE]: prints the result once (whoever gets the lock
# first: the EXIT trap or the watchdog) and powers off.
_vnfs_report() {
	local extra_failure=${1:-} line passed=0 failed=0 lines=() result=()
	mkdir "$VNFS_STATE/reported" 2> /dev/null || { while :; do sleep 60; done; }
	[ -n "$extra_failure" ] && fail "$extra_failure" > /dev/null
	dmesg > "$VNFS_OUT/dmesg.txt" 2>&1
	_vnfs_check_kernel_log "$VNFS_OUT/dmesg.txt"
	# Few forks from here: each costs tens of ms under emulation.
	mapfile -t lines < "$VNFS_STATE/checks"
	for line in "${lines[@]}"; do
		case $line in
		PASS*) passed=$((passed + 1)) ;;
		FAIL*) failed=$((failed + 1)) ;;
		esac
	done
	[ -e "$VNFS_STATE/completed" ] && result+=("GUEST SUITE COMPLETED")
	result+=("GUEST RESULT: $passed passed, $failed failed")
	if [ ${#lines[@]} -gt 0 ]; then printf '%s\n' "${lines[@]}"; fi > "$VNFS_OUT/checks.txt"
	printf '%s\n' "${result[@]}" > "$VNFS_OUT/result.txt"
	[ -n "$extra_failure" ] && echo "GUEST FAIL: $extra_failure"
	printf '%s\n' "${result[@]}"
	_vnfs_poweroff
}

# _vnfs_watchdog SECONDS DEADLINE: powers the guest off with a failure when
# the suite is still running at host time DEADLINE (epoch seconds, read from
# the emulated RTC, which follows the host clock) or, without an RTC, at
# guest uptime SECONDS.  PID 1 ignores signals, so nothing else would stop a
# hung suite.
_vnfs_watchdog() {
	local seconds=$1 deadline=$2 rtc=/sys/class/rtc/rtc0/since_epoch now uptime watchdog_pid=$BASHPID
	if [ -n "$deadline" ] && read -r now < "$rtc" 2> /dev/null; then
		while [ "$now" -lt "$deadline" ]; do
			sleep 1
			read -r now < "$rtc" || break
		done
	else
		uptime=$(guest_uptime)
		uptime=${uptime%.*}
		[ "$seconds" -gt "$uptime" ] && sleep $(( seconds - uptime ))
	fi
	echo "---- processes at watchdog time:"
	ps -eo pid,ppid,stat,etime,args | awk -v self="$watchdog_pid" '$2 != self && $NF !~ /^\[.*\]$/' | tail -n 40
	_vnfs_report "watchdog: suite still running at the deadline, ${seconds} s after boot (hung?)"
}

_vnfs_finish() {
	local status=${_vnfs_suite_status:-255}
	[ -n "${_vnfs_watchdog_pid:-}" ] && kill "$_vnfs_watchdog_pid" 2> /dev/null
	mark suite-done > /dev/null
	if [ ! -e "$VNFS_STATE/completed" ]; then
		_vnfs_report "suite aborted: $VNFS_SUITE exited with status $status before guest_done"
	elif [ "$status" -ne 0 ]; then
		_vnfs_report "suite exited with status $status after guest_done"
	else
		_vnfs_report
	fi
}

guest_driver() {
	local suite encoded watchdog deadline arguments=()
	export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	export HOME=/root USER=root LOGNAME=root SHELL=/bin/bash LC_ALL=C TERM=dumb
	export VNFS_SRC=/vnfs/src VNFS_OUT=/vnfs/out VNFS_STATE=/run/vnfs
	export VNFS_BUILD=$VNFS_SRC VNFS_TEST_USER=vnfstest
	[ -d /vnfs/build ] && VNFS_BUILD=/vnfs/build
	# World-writable: checks made through as_user count too.
	mkdir -p "$VNFS_STATE" && : > "$VNFS_STATE/checks" && chmod 0666 "$VNFS_STATE/checks" || {
		echo "GUEST FAIL: driver: cannot create $VNFS_STATE"
		echo "GUEST RESULT: 0 passed, 1 failed"
		_vnfs_poweroff
	}
	_vnfs_suite_status=255
	trap _vnfs_finish EXIT
	mark userland

	suite=$(_vnfs_cmdline_value suite) || { _vnfs_suite_status=2; fail "driver: no vnfs.suite= on the kernel command line"; exit; }
	export VNFS_SUITE=$suite
	VNFS_CGROUP_MODE=$(_vnfs_cmdline_value cgroup) || VNFS_CGROUP_MODE=v2
	export VNFS_CGROUP_MODE
	if [ "$VNFS_CGROUP_MODE" = hybrid ]; then
		export VNFS_CGROUP2_MOUNT=/sys/fs/cgroup/unified
	elif [ "$VNFS_CGROUP_MODE" = v1 ]; then
		export VNFS_CGROUP2_MOUNT=/run/vnfs/cgroup2
	else
		export VNFS_CGROUP2_MOUNT=/sys/fs/cgroup
	fi
	VNFS_GUEST_CLOCK=$(_vnfs_cmdline_value clock) || VNFS_GUEST_CLOCK=host
	export VNFS_GUEST_CLOCK
	if encoded=$(_vnfs_cmdline_value args) && [ -n "$encoded" ]; then
		mapfile -d '' arguments < <(base64 -d <<< "$encoded")
	fi
	watchdog=$(_vnfs_cmdline_value watchdog) || watchdog=240
	[[ $watchdog =~ ^[0-9]+$ ]] || watchdog=240
	deadline=$(_vnfs_cmdline_value deadline) || deadline=
	[[ $deadline =~ ^[0-9]+$ ]] || deadline=
	_vnfs_watchdog "$watchdog" "$deadline" &
	_vnfs_watchdog_pid=$!

	say "kernel $(uname -r), cgroup $VNFS_CGROUP_MODE, clock $VNFS_GUEST_CLOCK, suite $suite ${arguments[*]}"
	cd "$VNFS_SRC" || exit
	bash "$VNFS_SRC/$suite" "${arguments[@]}" < /dev/null &
	wait $!
	_vnfs_suite_status=$?
	exit
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	if [ "${1:-}" = --driver ] && [ $$ = 1 ]; then
		guest_driver
	fi
	echo "guest.sh: source this from a guest suite; only /init runs it (--driver, as PID 1)" >&2
	exit 2
fi
if [ ! -d "${VNFS_STATE:-/run/vnfs}" ]; then
	echo "guest.sh: warning: not inside a vnfs guest (no ${VNFS_STATE:-/run/vnfs})" >&2
fi
