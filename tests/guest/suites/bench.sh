#!/usr/bin/env bash
# bench.sh [short|long|costs [VARIANT,...]] — the probe-overhead benchmark and the helper's
# resource measurements, in one guest boot (docs/PERFORMANCE.md).
#
# Variants, attached one at a time on the functions vnfs hooks:
#   none              no probes
#   floor             empty fentry/fexit programs (bench_loader floor)
#   timing            fentry/fexit that only time each call (bench_loader timing):
#                     the least any design that times calls adds
#   attributing       timing, and each call counted (count, errors, bytes,
#                     time) into its workload's row, found by cgroup id
#                     (bench_loader attributing): the least any design that
#                     attributes calls to workloads adds (long and costs modes)
#   vnfs-fentry       vnfs-helper --probes fentry
#   vnfs-kprobe       vnfs-helper --probes kprobe
#   vnfs-no-rpcs      vnfs-helper --probes fentry with count_rpcs = false: what
#                     the RPC counters add to the loops (an open makes an
#                     NFS open context, which their program notes)
#   collector-design  the vNFS-collector design (bench_loader collector-design)
#   vnfs-cut-N        vnfs-no-rpcs with the last N parts of its counting path
#                     left out (N 1 to 7, VNFS_BENCH_COST_CUT, enum
#                     vnfs_cost_cut in bpf/vnfs.h): what each part costs
# Each round runs every probe variant, in an order rotated by one per round:
# attach, the three loops of bench_workload on one cached NFSv4.2 file,
# detach; and the loops without probes ("none") before the first variant and
# after each one.  A variant's added time is its time minus the mean of the
# two "none" runs around it, so a slow drift of the host (other guests, other
# builds) cancels out.  The workload always runs in the same cgroup,
# registered with the helper in the vnfs variants, so what is measured is the
# attributed path.  The table holds per loop the median ns/op of each variant,
# the median added time, and the ratios the budgets are stated in.
#
# Capture at exec: what following jobs named by their environment adds to a
# fork + exec + exit of /bin/true, with the helper's exec programs and
# without, after the rounds (see "capture at exec" below).
#
# The helper itself: start to "ready:" at every start, and, in the last
# round's vnfs-fentry attach, its RSS and CPU at a 1 s interval with 1,000
# registered idle steps (100 in short mode), then with 10 of them doing I/O.
#
# Each attach times every loop in several runs (bench_workload -r) and keeps
# the best: other work on the machine only ever adds time.  The table is the
# median over rounds of those.  The NFS client's RPC count over each loop
# (/proc/self/mountstats) is kept too: the cached loops must issue none.
#
# long (scripts/bench): 5 runs of 4,000 calls per loop, 5 rounds, 60 s CPU
# windows, the history written every 30 s (the default), and the budgets are
# checks.  short (scripts/check): 3 runs of 1,000 calls, 1 round, 100 idle
# steps, 5 s windows, the history written every 5 s (the first write is
# waited for); the checks are only
# that every variant ran and produced numbers, since ratios of so few rounds
# are noisy: they are printed, not judged.
# costs: only the programs' own time (below), 4,000 calls per loop, of timing,
# vnfs-no-rpcs and the seven vnfs-cut-N, and the table of what each part of
# a counted call costs; long mode measures those too, after its rounds.
# A comma-separated VARIANT list runs only those (for working on one of them).
source /vnfs/src/tests/guest/lib/guest.sh

mode=${1:-short}
case $mode in
short) iterations=1000 repeats=3 rounds=1 cpu_window=5 idle_steps=100 write_interval=5s
	exec_iterations=50 exec_repeats=2 exec_rounds=1 ;;
long) iterations=4000 repeats=5 rounds=5 cpu_window=60 idle_steps=1000 write_interval=30s
	exec_iterations=100 exec_repeats=3 exec_rounds=2 ;;
costs) iterations=4000 repeats=1 rounds=0 write_interval=30s ;;
*) fail "bench.sh: unknown mode '$mode' (short, long or costs)"; guest_done; exit 1 ;;
esac

# "none" runs before the first probe variant and after each (see the rounds).
PROBE_VARIANTS=(floor timing attributing vnfs-fentry vnfs-no-rpcs vnfs-kprobe collector-design)
# The short run (scripts/check) leaves out vnfs-no-rpcs, a round's longest
# attach after vnfs-fentry, and attributing, a bound only the long run
# judges by: asked for by name, they run there too.
[ "$mode" = short ] && PROBE_VARIANTS=(floor timing vnfs-fentry vnfs-kprobe collector-design)
# The cuts, from the last part of a counted call to the entry's (bpf/vnfs.h).
COST_CUT_VARIANTS=(vnfs-cut-1 vnfs-cut-2 vnfs-cut-3 vnfs-cut-4 vnfs-cut-5 vnfs-cut-6 vnfs-cut-7)
COST_CUT_PARTS=("breakdown rows" "histograms" "drain to the step's counters" "pending call"
	"workload lookup" "exit: result, bytes, duration" "entry: device and object")
[ "$mode" = costs ] && PROBE_VARIANTS=(timing attributing vnfs-no-rpcs "${COST_CUT_VARIANTS[@]}")
ALL_PROBE_VARIANTS=${#PROBE_VARIANTS[@]}
if [ -n "${2:-}" ]; then
	IFS=, read -r -a PROBE_VARIANTS <<< "$2"
	for variant in "${PROBE_VARIANTS[@]}"; do
		case $variant in
		floor|timing|attributing|vnfs-fentry|vnfs-no-rpcs|vnfs-kprobe|collector-design|vnfs-cut-[1-7]) ;;
		*) fail "bench.sh: unknown variant '$variant'"; guest_done; exit 1 ;;
		esac
	done
fi
VARIANTS=(none "${PROBE_VARIANTS[@]}")
LOOPS=(stat pread open_close)
BUSY_STEPS=10

WORK=/run/vnfs-bench
# The helpers' and loaders' logs, in tmpfs while they run, kept in the
# results at the end (bench_done): written to the results share (9p), each
# line of a start waited on the host: under the instruction clock its
# probes were ready in 908-932 ms logging there, 873-885 in tmpfs
# (docs/PERFORMANCE.md, "2026-12-07").
LOGS=$WORK/logs
SOCKET=$WORK/vnfs.sock
CONFIG=$WORK/vnfs.conf
CGROUP=${VNFS_CGROUP2_MOUNT:-/sys/fs/cgroup}/vnfs-bench
WORKLOAD_CGROUP=$CGROUP/workload
WORKLOAD_JOB=900
RAW=$VNFS_OUT/bench-raw.txt
TABLE=$VNFS_OUT/bench-table.txt
RESOURCES=$VNFS_OUT/bench-resources.txt
STARTS=$VNFS_OUT/bench-helper-starts.txt

# program NAME: the built program, from the build share or the source tree
# (in-tree build), or tests/guest/bin/ (copied there for a quick run).
program() {
	local candidate
	for candidate in "${VNFS_BUILD:-/vnfs/src}/$1" "$VNFS_SRC/$1" "$VNFS_SRC/tests/guest/bin/${1##*/}"; do
		[ -x "$candidate" ] && { echo "$candidate"; return 0; }
	done
	echo "bench.sh: $1 is not built (looked in ${VNFS_BUILD:-/vnfs/src}, $VNFS_SRC, tests/guest/bin)" >&2
	echo "/nonexistent/$1"
	return 1
}
LOADER=$(program tests/bench/bench_loader)
WORKLOAD=$(program tests/bench/bench_workload)
STEPS=$(program tests/bench/bench_steps)
HELPER=$(program vnfs-helper)
check "benchmark programs are built" test -x "$LOADER" -a -x "$WORKLOAD" -a -x "$STEPS"
# The helper's own measurements run with the full variant list only.
uses_helper=0 measure_helper=0
[[ " ${VARIANTS[*]} " == *" vnfs-"* ]] && uses_helper=1
[ ${#PROBE_VARIANTS[@]} = "$ALL_PROBE_VARIANTS" ] && [ "$mode" != costs ] && measure_helper=1
[ $uses_helper = 1 ] && check "vnfs-helper is built" test -x "$HELPER"

# elapsed_ms START_EPOCHREALTIME: milliseconds since then.
elapsed_ms() {
	local now=${EPOCHREALTIME/./} start=${1/./}
	echo $(( (now - start) / 1000 ))
}

# in_cgroup DIR COMMAND...: runs COMMAND inside cgroup DIR.
in_cgroup() {
	bash -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' _ "$@"
}

mkdir -p "$WORK" "$LOGS" "$WORKLOAD_CGROUP" || { fail "bench.sh: cannot create $WORK and $WORKLOAD_CGROUP"; guest_done; exit 1; }
bench_done() {
	cp -a "$LOGS"/. "$VNFS_OUT"/ || fail "bench.sh: cannot keep the logs of $LOGS"
	guest_done
}
cat > "$CONFIG" <<CONF
[helper]
socket = $SOCKET
state_dir = $WORK/state
pin_dir = /sys/fs/bpf/vnfs-bench
report_dir = $WORK/reports
interval = 1s
[sqlite]
path = $WORK/history.db
write_interval = $write_interval
[prometheus]
listen = 127.0.0.1:9716
CONF
: > "$RAW"
: > "$STARTS"
NO_RPCS_CONFIG=$WORK/vnfs-no-rpcs.conf
sed 's/^\[helper\]$/[helper]\ncount_rpcs = false/' "$CONFIG" > "$NO_RPCS_CONFIG"

# ------------------------------------------------------------ the variants

loader_pid= helper_pid= attach_count=0

# wait_for_line FILE PATTERN PID: until a line of FILE matches PATTERN (an
# extended regular expression; 180 s), or PID died.  Bash builtins only: a
# grep and a sleep forked every 20 ms took the guest's one vCPU from the
# start they timed (guest.sh's pause is a read that times out; its pipe is
# made here, by a fork, not during the first start timed).
pause 0
wait_for_line() {
	local file=$1 pattern=$2 pid=$3 deadline=$((SECONDS + 180)) line
	while :; do
		if [ -r "$file" ]; then
			while IFS= read -r line; do
				[[ $line =~ $pattern ]] && return 0
			done < "$file"
		fi
		kill -0 "$pid" 2> /dev/null || return 1
		[ $SECONDS -lt $deadline ] || return 1
		pause 0.02
	done
}

# settle_ftrace: until no kernel function has an ftrace hook left, 60 s at
# most.  The previous variant's links go after its process exits, in a
# kernel worker, one trampoline at a time, each waiting for an RCU-tasks
# grace period with ftrace's lock held: a start measured meanwhile waits on
# them (4.4-6.1 s of a kprobe.multi attach on 6.12 under the instruction
# clock, where they take 5.9-6.2 s after a fentry helper).  A start is timed
# on a settled kernel, as at boot.
settle_ftrace() {
	local deadline=$((SECONDS + 60))
	while [ -n "$(head -c 1 /sys/kernel/tracing/enabled_functions)" ]; do
		[ $SECONDS -lt $deadline ] || { echo "bench: ftrace hooks still in place after 60 s"; return 1; }
		sleep 0.05
	done
}

# start_helper MODE LOG [CONFIG [CUT]]: a fresh helper (no state, no pins) in
# probe MODE, with CONFIG (default $CONFIG) and the benchmark's cut level CUT
# (default none), on a settled kernel; appends "MODE MILLISECONDS PROBES
# AFTER_EXEC" to $STARTS: from exec to its "ready:" line as seen here, the
# helper's own count of its probes' load and attach ("probes ready in N
# ms"), and its own from exec to ready ("N ms after exec", 10 ms steps).
# Under the instruction clock an exec's waits on 9p (the binary, its
# libraries) jump the clock to the next timer (docs/PERFORMANCE.md), which
# the second figure leaves out.
start_helper() {
	local probe_mode=$1 log=$2 config=${3:-$CONFIG} cut=${4:-} started
	"$HELPER" --config "$config" --unload > /dev/null 2>&1
	rm -rf "$WORK/state" "$WORK/history.db"
	settle_ftrace || return 1
	started=$EPOCHREALTIME
	VNFS_BENCH_COST_CUT=$cut "$HELPER" --config "$config" --probes "$probe_mode" > "$log" 2>&1 &
	helper_pid=$!
	wait_for_line "$log" 'ready:' "$helper_pid" || return 1
	echo "$probe_mode $(elapsed_ms "$started") $(sed -n 's/.*info: probes ready in \([0-9]*\) ms$/\1/p' "$log" | head -n 1) $(sed -n 's/.*info: ready: .*, \([0-9]*\) ms after exec$/\1/p' "$log" | head -n 1)" >> "$STARTS"
	start_hwm=$(status_kib "$helper_pid" VmHWM)
	start_rss=$(status_kib "$helper_pid" VmRSS)
}

# stop_helper: SIGTERM, then remove the pins (the helper leaves its probes
# attached on purpose, for restarts).
stop_helper() {
	local status=0 exit_status
	[ -n "$helper_pid" ] || return 0
	kill -TERM "$helper_pid"
	wait "$helper_pid"
	exit_status=$?
	[ $exit_status = 0 ] || { echo "vnfs-helper exited with status $exit_status on SIGTERM"; status=1; }
	helper_pid=
	"$HELPER" --config "$CONFIG" --unload || status=1
	return $status
}

# attach VARIANT: returns once its probes are live.
attach() {
	local variant=$1 log
	attach_count=$((attach_count + 1))
	log=$LOGS/bench-attach-$attach_count-$variant.log
	case $variant in
	none) return 0 ;;
	floor|timing|attributing|collector-design)
		local arguments=("$variant")
		[ "$variant" = attributing ] && arguments+=("$WORKLOAD_CGROUP")
		"$LOADER" "${arguments[@]}" > "$log" 2>&1 &
		loader_pid=$!
		wait_for_line "$log" '^READY' "$loader_pid" || { cat "$log"; return 1; }
		;;
	vnfs-fentry|vnfs-kprobe|vnfs-no-rpcs|vnfs-cut-*)
		if [ "$variant" = vnfs-no-rpcs ]; then
			start_helper fentry "$log" "$NO_RPCS_CONFIG"
		elif [[ $variant == vnfs-cut-* ]]; then
			start_helper fentry "$log" "$NO_RPCS_CONFIG" "${variant#vnfs-cut-}"
		else
			start_helper "${variant#vnfs-}" "$log"
		fi || { tail -n 20 "$log"; return 1; }
		"$STEPS" -s "$SOCKET" -j $WORKLOAD_JOB "$WORKLOAD_CGROUP" > /dev/null || return 1
		;;
	esac
}

# detach VARIANT: stops it and waits until its probes are gone, the
# kernel's teardown of their trampolines included (settle_ftrace): the next
# loop must not share the vCPU with it.
detach() {
	local variant=$1 status=0
	case $variant in
	floor|timing|attributing|collector-design)
		kill -TERM "$loader_pid" && wait "$loader_pid" || status=1
		loader_pid=
		;;
	vnfs-fentry|vnfs-kprobe|vnfs-no-rpcs|vnfs-cut-*)
		stop_helper || status=1
		;;
	esac
	settle_ftrace || status=1
	return $status
}

# check_cut_stated VARIANT: the helper of a vnfs-cut-N attach said it runs
# with cut N (from 3 on nothing reaches the step's counters to check).
check_cut_stated() {
	check "$1: the helper ran with cut ${1#vnfs-cut-} and said so" \
		grep -q "warning: benchmark cut ${1#vnfs-cut-} of the counting path" \
		"$LOGS/bench-attach-$attach_count-$1.log"
}

query_workload_job() {
	"$(program tests/tools/vnfs-send)" "$SOCKET" "{\"v\":1,\"type\":\"query\",\"job\":$WORKLOAD_JOB}"
}

# rpc_count MOUNTPOINT: RPCs the NFS client has sent for MOUNTPOINT so far.
rpc_count() {
	awk -v mountpoint="$1" '
		$1 == "device" { inside = ($5 == mountpoint); per_operation = 0; next }
		inside && /per-op statistics/ { per_operation = 1; next }
		inside && per_operation && $1 ~ /^[A-Z_0-9]+:$/ { total += $2 }
		END { print total + 0 }' /proc/self/mountstats
}

# ----------------------------------------------- the helper's resources

# cpu_ticks PID: utime + stime of PID, in clock ticks.
cpu_ticks() {
	awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}

# status_kib PID FIELD: VmRSS or VmHWM of PID in KiB.
status_kib() {
	awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"
}

# rss_breakdown PID: its resident KiB by kind of mapping, one line, from
# /proc/PID/smaps: the mmapped BPF maps (step_activity, the globals), heap,
# other anonymous memory (thread stacks, allocator arenas), its own binary
# (the embedded BPF object included) and the shared libraries.
rss_breakdown() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / { name = $6 }
		/^Rss:/ {
			if (name == "anon_inode:bpf-map") kind = "bpf_maps"
			else if (name == "[heap]") kind = "heap"
			else if (name == "" || name ~ /^\[/) kind = "anonymous"
			else if (name ~ /vnfs-helper$/) kind = "binary"
			else kind = "libraries"
			rss[kind] += $2
		}
		END { printf "bpf_maps %d heap %d anonymous %d binary %d libraries %d\n",
			rss["bpf_maps"], rss["heap"], rss["anonymous"], rss["binary"], rss["libraries"] }' \
		"/proc/$1/smaps"
}

# cpu_hundredths PID SECONDS: CPU use of PID over SECONDS, in 1/100 % of a core.
cpu_hundredths() {
	local pid=$1 seconds=$2 ticks_before ticks_after started hz
	hz=$(getconf CLK_TCK)
	ticks_before=$(cpu_ticks "$pid") started=$EPOCHREALTIME
	sleep "$seconds"
	ticks_after=$(cpu_ticks "$pid")
	awk -v t=$((ticks_after - ticks_before)) -v hz="$hz" -v ms="$(elapsed_ms "$started")" \
		'BEGIN { printf "%d\n", t / hz / (ms / 1000) * 10000 + 0.5 }'
}

# history_steps: steps of the idle jobs (2000 and up) in the history database.
history_steps() {
	sqlite3 "$WORK/history.db" "SELECT count(*) FROM steps WHERE job_id >= 2000" 2> /dev/null
}

# measure_resources: with the running helper, registers $idle_steps steps,
# waits for their first history write (the helper writes SQLite every
# write_interval: 30 s, 5 s in short mode) and measures what that one-off
# cost, then its CPU and memory idle, then with $BUSY_STEPS of them doing
# I/O.  Sets register_cpu_ms, idle_cpu busy_cpu (1/100 % of a core), idle_rss
# busy_rss busy_hwm (KiB), resource_start_hwm (VmHWM when it became ready:
# the peak of loading probes) and resource_start_rss (VmRSS then).
measure_resources() {
	local step job started ticks_before busy_file busy_pids=() idle_dirs=()
	for ((step = 0; step < idle_steps; step++)); do idle_dirs+=("$CGROUP/idle/step_$step"); done
	mkdir -p "${idle_dirs[@]}"
	started=$EPOCHREALTIME ticks_before=$(cpu_ticks "$helper_pid")
	# Jobs of 100 steps, each of its own user (uid = job id): a node's
	# 1,000 workloads belong to several users, and one user may hold only
	# max_steps_per_user (512) of them.  Tagged as a site's jobs are: the
	# user's project and the partition plugstack.conf adds to every job.
	for ((job = 0; job < idle_steps / 100; job++)); do
		"$STEPS" -s "$SOCKET" -j $((2000 + job)) -u $((2000 + job)) \
			-t "PROJECT_NAME=project-$job,SLURM_JOB_PARTITION=gpu" \
			"${idle_dirs[@]:job * 100:100}" > /dev/null || break
	done
	check "$idle_steps idle steps registered ($(elapsed_ms "$started") ms)" [ "$job" = $((idle_steps / 100)) ]
	until [ "$(history_steps)" = "$idle_steps" ] || [ "$(elapsed_ms "$started")" -gt 60000 ]; do
		sleep 0.5
	done
	check_eq "the idle steps reached the history database" "$(history_steps)" "$idle_steps"
	sleep 2
	register_cpu_ms=$(( ($(cpu_ticks "$helper_pid") - ticks_before) * 1000 / $(getconf CLK_TCK) ))
	register_s=$(( $(elapsed_ms "$started") / 1000 ))
	idle_cpu=$(cpu_hundredths "$helper_pid" "$cpu_window")
	idle_rss=$(status_kib "$helper_pid" VmRSS)
	idle_rss_parts=$(rss_breakdown "$helper_pid")

	for ((step = 0; step < BUSY_STEPS; step++)); do
		busy_file=$MOUNTPOINT/bench/busy-$step
		dd if=/dev/zero of="$busy_file" bs=64k count=1 status=none
		in_cgroup "${idle_dirs[step]}" bash -c "while :; do dd if=/dev/zero of='$busy_file' bs=64k count=4 conv=fsync status=none; '$WORKLOAD' -n 200 '$busy_file' > /dev/null; sleep 0.2; done" &
		busy_pids+=($!)
	done
	sleep 2
	busy_cpu=$(cpu_hundredths "$helper_pid" "$cpu_window")
	busy_rss=$(status_kib "$helper_pid" VmRSS)
	busy_hwm=$(status_kib "$helper_pid" VmHWM)
	resource_start_hwm=$start_hwm resource_start_rss=$start_rss
	# cgroup.kill: the loops' children too, or they would disturb what follows.
	for ((step = 0; step < BUSY_STEPS; step++)); do echo 1 > "${idle_dirs[step]}/cgroup.kill"; done
	wait "${busy_pids[@]}" 2> /dev/null
	mark bench-resources
}

# run_variant ROUND VARIANT: attach, the loops, detach.  Appends to $RAW
# "round variant loop best_ns median_ns rpcs sequence" per loop, where
# sequence numbers the variant runs of the whole benchmark.
sequence=0
run_variant() {
	local round=$1 variant=$2 loop line name best median rpcs_before rpcs
	local attach_started=$EPOCHREALTIME loops_started detach_started
	if ! attach "$variant"; then
		fail "round $round: $variant did not attach"
		detach "$variant"
		return 1
	fi
	loops_started=$EPOCHREALTIME
	sequence=$((sequence + 1))
	for loop in "${LOOPS[@]}"; do
		rpcs_before=$(rpc_count "$MOUNTPOINT")
		line=$(in_cgroup "$WORKLOAD_CGROUP" "$WORKLOAD" -n "$iterations" -r "$repeats" -l "$loop" "$FILE")
		[ $? = 0 ] || fail "round $round: $variant: bench_workload -l $loop failed"
		rpcs=$(( $(rpc_count "$MOUNTPOINT") - rpcs_before ))
		read -r name best median _ <<< "$line"
		[ "$name" = "$loop" ] && echo "$round $variant $loop $best $median $rpcs $sequence" >> "$RAW"
	done
	case $variant in
	vnfs-fentry|vnfs-kprobe|vnfs-no-rpcs|vnfs-cut-*)
		query_workload_job > "$VNFS_OUT/bench-query-$attach_count.json" ||
			fail "round $round: $variant: QUERY of job $WORKLOAD_JOB failed" ;;
	esac
	# The helper's resources are measured once, in the last round, while it
	# is attached anyway (each attach costs tens of seconds under emulation).
	[ "$variant" = vnfs-fentry ] && [ "$round" = "$rounds" ] && [ $measure_helper = 1 ] &&
		measure_resources
	detach_started=$EPOCHREALTIME
	if ! detach "$variant"; then
		fail "round $round: $variant did not detach cleanly"
		return 1
	fi
	case $variant in
	timing|attributing|collector-design)
		# attributing: those in the workload's row, so attributed
		calls=$(awk '$1 == "counted" { print $2 }' "$LOGS/bench-attach-$attach_count-$variant.log")
		check_ge "round $round: $variant counted the workload's calls" "${calls:-0}" \
			$((iterations * repeats)) ;;
	vnfs-fentry|vnfs-kprobe|vnfs-no-rpcs|vnfs-cut-[12])
		# One nfs_getattr per stat: the warm-up tenth plus the timed runs.
		getattr=$(jq -r '[.job.steps[].operations.getattr.count] | add' \
			"$VNFS_OUT/bench-query-$attach_count.json" 2> /dev/null)
		check_eq "round $round: $variant counted every stat of the loop as job $WORKLOAD_JOB's getattr" \
			"$getattr" $((iterations / 10 + 1 + iterations * repeats)) ;;
	esac
	[[ $variant == vnfs-cut-* ]] && check_cut_stated "$variant"
	say "round $round: $variant: attach $(( ${loops_started/./} / 1000 - ${attach_started/./} / 1000 )) ms," \
		"loops $(( ${detach_started/./} / 1000 - ${loops_started/./} / 1000 )) ms, detach $(elapsed_ms "$detach_started") ms"
}

# ------------------------------------------------------------ the table

# median_table [RAW]: from RAW (default $RAW), one line per loop and variant:
# "loop variant median_ns median_added_ns runs median_rpcs".  A run's added
# time is its time minus the mean of the "none" runs just before and after it.
median_table() {
	awk '
		function median(list,    values, n, i, j, swap) {
			n = split(list, values, " ")
			for (i = 2; i <= n; i++)
				for (j = i; j > 1 && values[j - 1] + 0 > values[j] + 0; j--) {
					swap = values[j]; values[j] = values[j - 1]; values[j - 1] = swap
				}
			return (n % 2) ? values[(n + 1) / 2] : (values[n / 2] + values[n / 2 + 1]) / 2
		}
		{
			loop = $3; variant = $2; key = loop " " variant
			if (!(key in times)) keys[++k] = key
			times[key] = times[key] " " $4; rpcs[key] = rpcs[key] " " $6; count[key]++
			if (variant == "none") none[loop, $7] = $4
			else { samples[++n] = key; sample_value[n] = $4; sample_sequence[n] = $7 }
		}
		END {
			for (i = 1; i <= n; i++) {
				split(samples[i], part, " ")
				before = (part[1] SUBSEP sample_sequence[i] - 1) in none
				after = (part[1] SUBSEP sample_sequence[i] + 1) in none
				if (!before && !after) continue
				base = before && after ? (none[part[1], sample_sequence[i] - 1] + none[part[1], sample_sequence[i] + 1]) / 2 : \
					before ? none[part[1], sample_sequence[i] - 1] : none[part[1], sample_sequence[i] + 1]
				added[samples[i]] = added[samples[i]] " " (sample_value[i] - base)
			}
			for (i = 1; i <= k; i++) {
				split(keys[i], part, " ")
				printf "%s %s %.1f %s %d %d\n", part[1], part[2], median(times[keys[i]]),
					part[2] == "none" ? "0.0" : (keys[i] in added) ? sprintf("%.1f", median(added[keys[i]])) : "n/a",
					count[keys[i]], median(rpcs[keys[i]])
			}
		}' "${1:-$RAW}"
}

# value_of SUMMARY LOOP VARIANT FIELD: FIELD 3 = median, 4 = added.
value_of() {
	awk -v l="$2" -v v="$3" -v f="$4" '$1 == l && $2 == v { print $f }' <<< "$1"
}

# ratio A B: A / B with two decimals, or n/a when B is not positive.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b <= 0) print "n/a"; else printf "%.2f", a / b }'
}

print_table() {
	local summary=$1 loop variant
	printf 'ns per call: median over %d rounds of the best of %d runs of %d calls\n' \
		"$rounds" "$repeats" "$iterations"
	echo "(\"none\": over all its runs, before the first variant and after each)"
	echo "(a guest under emulation: compare the variants, do not quote the absolute times)"
	if [ "${VNFS_GUEST_CLOCK:-host}" = instructions ]; then
		echo "(guest clock: instructions, QEMU -icount: a ns is an instruction's time, the same whatever the host's load)"
	else
		echo "(guest clock: the host's: other work on the host moves every figure)"
	fi
	echo "added: median of (variant - mean of the \"none\" runs just before and after it)"
	echo "RPCs: NFS RPCs the client sent during one attach's loop (median)"
	printf '%-12s' loop; printf ' %17s' "${VARIANTS[@]}"; echo
	for loop in "${LOOPS[@]}"; do
		printf '%-12s' "$loop"
		for variant in "${VARIANTS[@]}"; do printf ' %17s' "$(value_of "$summary" "$loop" "$variant" 3)"; done
		echo
		printf '%-12s' "  added"
		for variant in "${VARIANTS[@]}"; do printf ' %17s' "$(value_of "$summary" "$loop" "$variant" 4)"; done
		echo
		printf '%-12s' "  RPCs"
		for variant in "${VARIANTS[@]}"; do printf ' %17s' "$(value_of "$summary" "$loop" "$variant" 6)"; done
		echo
	done
	echo
	echo "ratios of added time: (1) vnfs-fentry, (2) vnfs-kprobe, (3) collector-design, (F) floor,"
	echo "(T) timing only: the least a design that times each call adds,"
	echo "(A) attributing: the least a design that attributes each call to its workload adds"
	echo "budget: (1)/(3) <= 0.25 (and, below, vnfs's programs' own time <= 1.3 x (T)'s)"
	printf '%-12s %9s %9s %9s %9s %9s %9s %9s %9s\n' loop "(1)/(3)" "(2)/(3)" "(1)/(F)" "(T)/(F)" \
		"(1)/(T)" "(T)/(3)" "(A)/(3)" "(1)/(A)"
	for loop in "${LOOPS[@]}"; do
		local fentry kprobe collector floor timing attributing
		fentry=$(value_of "$summary" "$loop" vnfs-fentry 4)
		kprobe=$(value_of "$summary" "$loop" vnfs-kprobe 4)
		collector=$(value_of "$summary" "$loop" collector-design 4)
		floor=$(value_of "$summary" "$loop" floor 4)
		timing=$(value_of "$summary" "$loop" timing 4)
		attributing=$(value_of "$summary" "$loop" attributing 4)
		printf '%-12s %9s %9s %9s %9s %9s %9s %9s %9s\n' "$loop" "$(ratio "$fentry" "$collector")" \
			"$(ratio "$kprobe" "$collector")" "$(ratio "$fentry" "$floor")" \
			"$(ratio "$timing" "$floor")" "$(ratio "$fentry" "$timing")" "$(ratio "$timing" "$collector")" \
			"$(ratio "$attributing" "$collector")" "$(ratio "$fentry" "$attributing")"
	done
	echo "the RPC counters' share: vnfs-fentry's added time minus vnfs-no-rpcs' (ns per call)"
	for loop in "${LOOPS[@]}"; do
		printf '%-12s %9s\n' "$loop" "$(awk -v a="$(value_of "$summary" "$loop" vnfs-fentry 4)" \
			-v b="$(value_of "$summary" "$loop" vnfs-no-rpcs 4)" \
			'BEGIN { if (a == "" || b == "" || a == "n/a" || b == "n/a") print "n/a"; else printf "%.1f", a - b }')"
	done
}

# --------------------------------------------------------- NFS and file

guest_start_nfs || { bench_done; exit 1; }
nfsd_started=$SECONDS
MOUNTPOINT=$(nfs_mount_of 4.2)
guest_mount_nfs 4.2 "$MOUNTPOINT" || { bench_done; exit 1; }
FILE=$MOUNTPOINT/bench/file
mkdir -p "${FILE%/*}"
check "64 KiB test file on NFSv4.2" dd if=/dev/urandom of="$FILE" bs=64k count=1 conv=fsync status=none
cat "$FILE" > /dev/null
# Page the programs in from the 9p share, so no variant pays for it.
[ $uses_helper = 1 ] && "$HELPER" --version > /dev/null; "$LOADER" --help > /dev/null; "$WORKLOAD" -h > /dev/null
# Opens get a read delegation (no OPEN RPC per open) only after nfsd's
# grace period (10 s, set by guest_start_nfs).
while [ $((SECONDS - nfsd_started)) -lt 12 ]; do sleep 0.5; done
mark bench-setup

# ---------------------------------------------------------- the rounds
# (costs mode has none: it times the programs only, below)
if [ "$mode" != costs ]; then

	for ((round = 1; round <= rounds; round++)); do
		run_variant "$round" none
		for ((i = 0; i < ${#PROBE_VARIANTS[@]}; i++)); do
			run_variant "$round" "${PROBE_VARIANTS[(i + round - 1) % ${#PROBE_VARIANTS[@]}]}"
			run_variant "$round" none
		done
		mark "bench-round-$round"
	done

	# check_every_run RAW ROUNDS "VARIANT..." "LOOP...": every probe variant has
	# ROUNDS lines per loop in RAW, and "none" one before them and one after each.
	check_every_run() {
		local raw=$1 rounds=$2 variant loop expected
		local -a variants=($3) loops=($4)
		for variant in none "${variants[@]}"; do
			expected=$rounds
			[ "$variant" = none ] && expected=$((rounds * (${#variants[@]} + 1)))
			for loop in "${loops[@]}"; do
				check_eq "$variant: $loop measured in every run" \
					"$(awk -v v="$variant" -v l="$loop" '$2 == v && $3 == l' "$raw" | wc -l)" "$expected"
			done
		done
	}
	check_every_run "$RAW" "$rounds" "${PROBE_VARIANTS[*]}" "${LOOPS[*]}"

	summary=$(median_table)
	echo "$summary" > "$VNFS_OUT/bench-summary.txt"
	print_table "$summary" | tee "$TABLE"

	# The budgets need the variants they compare: with a shorter variant list
	# (for working on one of them) they are not judged, and say so, rather
	# than pass on empty numbers.
	if [ "$mode" = long ] && [ $measure_helper = 1 ]; then
		for loop in "${LOOPS[@]}"; do
			fentry=$(value_of "$summary" "$loop" vnfs-fentry 4)
			collector=$(value_of "$summary" "$loop" collector-design 4)
			check "budget $loop: vnfs adds $fentry ns <= 0.25 x collector design's $collector ns" \
				awk -v a="$fentry" -v b="$collector" 'BEGIN { exit !(a != "" && b != "" && a <= 0.25 * b) }'
		done
	elif [ "$mode" = long ]; then
		say "the loops' budgets are not judged: only ${PROBE_VARIANTS[*]} ran"
	fi
	mark bench-probes
fi

# ------------------------------------------------- the programs' own time
# The loops' added time is the trampoline (or kprobe) plus the programs.
# kernel.bpf_stats_enabled makes the kernel sum each program's own run time,
# which splits the two without the noise of a difference of two large
# numbers.  One more attach per variant, after the rounds, so that the
# statistics' own cost (a clock read per run) stays out of the table above.

# program_runs: "ID NAME RUN_TIME_NS RUN_COUNT" of every loaded program.
program_runs() {
	bpftool -j prog show | jq -r '.[] | "\(.id) \(.name // "-") \(.run_time_ns // 0) \(.run_cnt // 0)"'
}

# program_totals [NAME_REGEX]: "RUN_TIME_NS RUN_COUNT" summed over the loaded
# programs (those whose name matches).
program_totals() {
	program_runs | awk -v pattern="${1:-.}" '$2 ~ pattern { time += $3; runs += $4 }
		END { print time + 0, runs + 0 }'
}

# Per loop: the programs' time and runs in all to $PROGRAM_TIMES ("VARIANT
# LOOP RUN_TIME_NS RUN_COUNT CALLS"), and per program to $PROGRAM_PARTS
# ("VARIANT LOOP PROGRAM NS_PER_CALL RUNS_PER_CALL", those that ran): what
# each part of a variant costs a loop call.  Both from one reading before
# the loop and one after.
PROGRAM_TIMES=$VNFS_OUT/bench-program-times.txt
PROGRAM_PARTS=$VNFS_OUT/bench-program-parts.txt
: > "$PROGRAM_TIMES"
: > "$PROGRAM_PARTS"
# Long mode measures the cuts here too (one attach each); costs mode's
# variants are the cuts.
PROGRAM_TIME_VARIANTS=("${PROBE_VARIANTS[@]}")
[ "$mode" = long ] && [ $measure_helper = 1 ] && PROGRAM_TIME_VARIANTS+=("${COST_CUT_VARIANTS[@]}")
sysctl -q kernel.bpf_stats_enabled=1 || fail "bench.sh: kernel.bpf_stats_enabled cannot be set"
for variant in "${PROGRAM_TIME_VARIANTS[@]}"; do
	attach "$variant" || { fail "program time: $variant did not attach"; detach "$variant"; continue; }
	[[ $variant == vnfs-cut-* ]] && check_cut_stated "$variant"
	for loop in "${LOOPS[@]}"; do
		program_runs > "$WORK/programs-before"
		in_cgroup "$WORKLOAD_CGROUP" "$WORKLOAD" -n "$iterations" -l "$loop" "$FILE" > /dev/null ||
			fail "program time: $variant: bench_workload -l $loop failed"
		program_runs | awk -v v="$variant" -v l="$loop" -v n="$iterations" -v parts="$PROGRAM_PARTS" '
			NR == FNR { time[$1] = $3; runs[$1] = $4; next }
			$4 > runs[$1] {
				ran = $3 - time[$1]; count = $4 - runs[$1]
				total_time += ran; total_runs += count
				printf "%s %s %s %.0f %.2f\n", v, l, $2, ran / n, count / n >> parts
			}
			END { print v, l, total_time + 0, total_runs + 0, n }' \
			"$WORK/programs-before" - >> "$PROGRAM_TIMES"
	done
	detach "$variant" || fail "program time: $variant did not detach cleanly"
done
sysctl -q kernel.bpf_stats_enabled=0
{
	echo "program time per call: the BPF programs' own run time (kernel.bpf_stats_enabled)"
	echo "per loop call, ns, and program runs per loop call; one attach, $iterations calls"
	printf '%-12s' loop; printf ' %22s' "${PROGRAM_TIME_VARIANTS[@]}"; echo
	for loop in "${LOOPS[@]}"; do
		printf '%-12s' "$loop"
		for variant in "${PROGRAM_TIME_VARIANTS[@]}"; do
			printf ' %22s' "$(awk -v v="$variant" -v l="$loop" '$1 == v && $2 == l {
				printf "%.0f ns, %.1f runs", $3 / $5, $4 / $5 }' "$PROGRAM_TIMES")"
		done
		echo
	done
	echo
	echo "the helper's programs one by one: ns and runs per loop call"
	awk '$1 ~ /^vnfs-/ { printf "%-14s %-12s %-28s %8s ns %6s runs\n", $1, $2, $3, $4, $5 }' "$PROGRAM_PARTS" |
		sort -k1,1 -k2,2 -k4,4nr
} | tee -a "$TABLE"
# program_ns VARIANT LOOP: the programs' own time per loop call.
program_ns() {
	awk -v v="$1" -v l="$2" '$1 == v && $2 == l { printf "%.0f", $3 / $5 }' "$PROGRAM_TIMES"
}
# The programs' budget (DESIGN.md, "Budgets"): vnfs's programs' own time per
# loop call at most 1.3 x that of timing only (T), the least a design that
# times each call runs.  Program time moves less between runs than a
# difference of two loop times does (docs/PERFORMANCE.md, 04:32 and 04:47).
if [[ " ${PROBE_VARIANTS[*]} " == *" timing "* && " ${PROBE_VARIANTS[*]} " == *" vnfs-fentry "* ]]; then
	{
		echo
		echo "the programs' budget: vnfs-fentry's program time per loop call <= 1.3 x (T)'s;"
		echo "(A) attributing, the least a design attributing each call runs, beside it"
		printf '%-12s %14s %14s %14s %10s %10s %10s\n' loop "(T) ns" "(A) ns" "(1) ns" "(1)/(T)" "(A)/(T)" "(1)/(A)"
		for loop in "${LOOPS[@]}"; do
			printf '%-12s %14s %14s %14s %10s %10s %10s\n' "$loop" "$(program_ns timing "$loop")" \
				"$(program_ns attributing "$loop")" "$(program_ns vnfs-fentry "$loop")" \
				"$(ratio "$(program_ns vnfs-fentry "$loop")" "$(program_ns timing "$loop")")" \
				"$(ratio "$(program_ns attributing "$loop")" "$(program_ns timing "$loop")")" \
				"$(ratio "$(program_ns vnfs-fentry "$loop")" "$(program_ns attributing "$loop")")"
		done
	} | tee -a "$TABLE"
	if [ "$mode" = long ]; then
		for loop in "${LOOPS[@]}"; do
			check "budget $loop: vnfs's programs take $(program_ns vnfs-fentry "$loop") ns <= 1.3 x (T)'s $(program_ns timing "$loop") ns" \
				awk -v a="$(program_ns vnfs-fentry "$loop")" -v b="$(program_ns timing "$loop")" \
				'BEGIN { exit !(a != "" && b > 0 && a <= 1.3 * b) }'
		done
	fi
fi
for variant in "${PROGRAM_TIME_VARIANTS[@]}"; do
	for loop in "${LOOPS[@]}"; do
		check "program time: $variant ran programs during $loop" \
			awk -v v="$variant" -v l="$loop" '$1 == v && $2 == l && $4 > 0 { found = 1 } END { exit !found }' "$PROGRAM_TIMES"
	done
done

# What each part of a counted call costs: the programs' time per loop call
# of each level of cut, and the difference between neighbouring levels,
# from vnfs-no-rpcs (everything but the RPC counters) to vnfs-cut-7 (the
# task state, the depth and the start time), and what that last one costs
# beyond timing only (T).
# cost_row LABEL VARIANT [BASE]: per loop, VARIANT's program time, less
# BASE's when given (n/a where either is missing).
cost_row() {
	local loop
	printf '%-34s' "$1"
	for loop in "${LOOPS[@]}"; do
		printf ' %12s' "$(awk -v a="$(program_ns "$2" "$loop")" \
			-v b="$([ -n "${3:-}" ] && program_ns "$3" "$loop" || echo 0)" \
			'BEGIN { if (a == "" || b == "") print "n/a"; else print a - b }')"
	done
	echo
}
print_cost_parts() {
	local level above
	echo
	echo "what each part of a counted call costs: program time per loop call (ns), between"
	echo "neighbouring levels of vnfs-no-rpcs and vnfs-cut-N (bpf/vnfs.h, enum vnfs_cost_cut)"
	printf '%-34s' part; printf ' %12s' "${LOOPS[@]}"; echo
	for ((level = 1; level <= ${#COST_CUT_VARIANTS[@]}; level++)); do
		above=vnfs-cut-$((level - 1))
		[ $level = 1 ] && above=vnfs-no-rpcs
		cost_row "$level ${COST_CUT_PARTS[level - 1]}" "$above" "vnfs-cut-$level"
	done
	cost_row "vnfs-cut-7 beyond (T)" vnfs-cut-7 timing
	cost_row "(T) timing only" timing
	cost_row "(A) attributing beyond (T)" attributing timing
	cost_row vnfs-no-rpcs vnfs-no-rpcs
}
if [[ " ${PROGRAM_TIME_VARIANTS[*]} " == *" vnfs-cut-7 "* ]]; then
	print_cost_parts | tee -a "$TABLE"
fi
mark bench-program-time
if [ "$mode" = costs ]; then
	bench_done
	exit 0
fi

# ------------------------------------------------------- capture at exec
# What capturing a process's job at exec (docs/PROBES.md, "Environment
# jobs") adds to a fork + exec + exit of a trivial program (/bin/true),
# which every process of a node in no registered cgroup pays.  Variants:
# the helper with [environment] job_variables at their default
# ("vnfs-capture"), in long mode beside the same helper with none listed
# ("vnfs-no-capture": no exec or fork programs), and no probes ("none")
# before the first and after each.  Loops:
#   exec_plain       in a cgroup of no workload, with no job variable: every
#                    string of the environment read, none named
#   exec_job         the same with LSB_JOBID set: the job found and joined,
#                    and the fork that starts each program inherits it
#   exec_registered  (long) in the registered workload cgroup: the capture
#                    returns at its first test
# A fork + exec + exit takes tens of milliseconds in the emulated guest and
# its time moves by 10-20 % between runs, far more than the capture costs:
# the budget (at most 5 % of the loop without probes) is checked on the
# capture programs' own run time per loop call (kernel.bpf_stats_enabled,
# on in the vnfs variants' loops), which that noise does not reach; the
# loops' added times are printed beside it.
EXEC_LOOPS=(exec_plain exec_job)
EXEC_PROBE_VARIANTS=(vnfs-capture)
if [ "$mode" = long ]; then
	EXEC_LOOPS+=(exec_registered)
	EXEC_PROBE_VARIANTS+=(vnfs-no-capture)
fi
EXEC_RAW=$VNFS_OUT/bench-exec-raw.txt
EXEC_PROGRAMS=$VNFS_OUT/bench-exec-programs.txt
PLAIN_CGROUP=$CGROUP/plain
EXEC_JOB=4343
NO_CAPTURE_CONFIG=$WORK/vnfs-no-capture.conf
: > "$EXEC_RAW"
: > "$EXEC_PROGRAMS"
{ cat "$CONFIG"; printf '[environment]\njob_variables =\n'; } > "$NO_CAPTURE_CONFIG"
mkdir -p "$PLAIN_CGROUP" || fail "bench.sh: cannot create $PLAIN_CGROUP"

# exec_loop LOOP: runs the exec loop LOOP; prints bench_workload's line.
exec_loop() {
	local arguments=(-n "$exec_iterations" -r "$exec_repeats" -l exec "$FILE")
	case $1 in
	exec_registered) in_cgroup "$WORKLOAD_CGROUP" env -u LSB_JOBID "$WORKLOAD" "${arguments[@]}" ;;
	exec_plain) in_cgroup "$PLAIN_CGROUP" env -u LSB_JOBID "$WORKLOAD" "${arguments[@]}" ;;
	exec_job) in_cgroup "$PLAIN_CGROUP" env LSB_JOBID=$EXEC_JOB "$WORKLOAD" "${arguments[@]}" ;;
	esac
}

# capture_program_totals: "RUN_TIME_NS RUN_COUNT" of the capture's programs.
capture_program_totals() { program_totals '^(capture|inherit)_environ'; }

# exec_job_known: the helper answers a QUERY of LSF job $EXEC_JOB.
exec_job_known() {
	"$(program tests/tools/vnfs-send)" "$SOCKET" \
		"{\"v\":1,\"type\":\"query\",\"source\":\"lsf\",\"job\":\"$EXEC_JOB\"}" | jq -e '.ok' > /dev/null
}
exec_job_unknown() { ! exec_job_known; }

exec_sequence=0
# run_exec_variant ROUND VARIANT: appends "round variant loop best median 0
# sequence" per loop to $EXEC_RAW, and in the vnfs variants "variant loop
# program_ns program_runs loop_calls" to $EXEC_PROGRAMS.
run_exec_variant() {
	local round=$1 variant=$2 loop line name best median log time_before runs_before time_after runs_after
	attach_count=$((attach_count + 1))
	log=$LOGS/bench-attach-$attach_count-$variant.log
	case $variant in
	vnfs-capture) start_helper fentry "$log" ;;
	vnfs-no-capture) start_helper fentry "$log" "$NO_CAPTURE_CONFIG" ;;
	esac || { fail "exec round $round: $variant did not start"; tail -n 20 "$log"; return 1; }
	if [ "$variant" != none ]; then
		"$STEPS" -s "$SOCKET" -j $WORKLOAD_JOB "$WORKLOAD_CGROUP" > /dev/null ||
			fail "exec round $round: $variant: the workload cgroup is not registered"
		sysctl -q kernel.bpf_stats_enabled=1 || fail "bench.sh: kernel.bpf_stats_enabled cannot be set"
	fi
	exec_sequence=$((exec_sequence + 1))
	for loop in "${EXEC_LOOPS[@]}"; do
		read -r time_before runs_before <<< "$(capture_program_totals)"
		line=$(exec_loop "$loop")
		[ $? = 0 ] || fail "exec round $round: $variant: $loop failed"
		read -r time_after runs_after <<< "$(capture_program_totals)"
		read -r name best median _ <<< "$line"
		[ "$name" = exec ] && echo "$round $variant $loop $best $median 0 $exec_sequence" >> "$EXEC_RAW"
		[ "$variant" = none ] ||
			echo "$variant $loop $((time_after - time_before)) $((runs_after - runs_before))" \
				"$((exec_iterations / 10 + 1 + exec_iterations * exec_repeats))" >> "$EXEC_PROGRAMS"
	done
	[ "$variant" = none ] && return 0
	sysctl -q kernel.bpf_stats_enabled=0
	# One whole interval after the loops: a job the capture found is
	# registered by then.
	until_ok 60 collected_beyond 127.0.0.1:9716 $(($(helper_collections 127.0.0.1:9716) + 1))
	if [ "$variant" = vnfs-capture ]; then
		check "exec round $round: the exec_job loop's processes are LSF job $EXEC_JOB" exec_job_known
	else
		check "exec round $round: without job variables, no LSF job $EXEC_JOB" exec_job_unknown
	fi
	stop_helper || fail "exec round $round: $variant did not stop cleanly"
}

for ((round = 1; round <= exec_rounds; round++)); do
	run_exec_variant "$round" none
	for ((i = 0; i < ${#EXEC_PROBE_VARIANTS[@]}; i++)); do
		run_exec_variant "$round" "${EXEC_PROBE_VARIANTS[(i + round - 1) % ${#EXEC_PROBE_VARIANTS[@]}]}"
		run_exec_variant "$round" none
	done
done
exec_summary=$(median_table "$EXEC_RAW")
echo "$exec_summary" > "$VNFS_OUT/bench-exec-summary.txt"
# capture_ns LOOP: the capture programs' own time per loop call, ns (median
# over the rounds of vnfs-capture).
capture_ns() {
	awk -v l="$1" '$1 == "vnfs-capture" && $2 == l { print $3 / $5 }' "$EXEC_PROGRAMS" | sort -n |
		awk '{ v[NR] = $1 } END { if (NR) printf "%.0f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
{
	echo
	printf 'fork + exec + exit of /bin/true, ns per loop call: median over %d rounds of the best of %d runs of %d\n' \
		"$exec_rounds" "$exec_repeats" "$exec_iterations"
	echo "(the vnfs columns: added to none, by loop time; capture programs: their own run time)"
	printf '%-16s %12s %14s %16s %18s %8s\n' loop none "+vnfs-capture" "+vnfs-no-capture" \
		"capture programs" "of none"
	for loop in "${EXEC_LOOPS[@]}"; do
		none_ns=$(value_of "$exec_summary" "$loop" none 3)
		printf '%-16s %12s %14s %16s %18s %7s%%\n' "$loop" "$none_ns" \
			"$(value_of "$exec_summary" "$loop" vnfs-capture 4)" \
			"$(value_of "$exec_summary" "$loop" vnfs-no-capture 4 | grep . || echo -)" "$(capture_ns "$loop")" \
			"$(awk -v c="$(capture_ns "$loop")" -v n="$none_ns" 'BEGIN { printf "%.2f", 100 * c / n }')"
	done
} | tee -a "$TABLE"
for loop in "${EXEC_LOOPS[@]}"; do
	none_ns=$(value_of "$exec_summary" "$loop" none 3)
	check "budget $loop: the capture's programs take $(capture_ns "$loop") ns <= 5 % of a fork + exec + exit ($none_ns ns)" \
		awk -v c="$(capture_ns "$loop")" -v n="$none_ns" 'BEGIN { exit !(c > 0 && c <= 0.05 * n) }'
done
check "exec_job: the capture's programs ran at every exec and fork (2 runs per loop call or more)" \
	awk '$1 == "vnfs-capture" && $2 == "exec_job" && $4 < 2 * $5 { short = 1 } END { exit short }' "$EXEC_PROGRAMS"
[ "$mode" = long ] && check "vnfs-no-capture: no capture program ran" \
	awk '$1 == "vnfs-no-capture" && $4 != 0 { ran = 1 } END { exit ran }' "$EXEC_PROGRAMS"
check_every_run "$EXEC_RAW" "$exec_rounds" "${EXEC_PROBE_VARIANTS[*]}" "${EXEC_LOOPS[*]}"
mark bench-exec-capture

# ------------------------------------------------------- the data loader
# What vnfs adds where users feel it: a training job's input pipeline,
# timed whole (bench_workload's data-loader loops, one pass over the files a
# run): 128 KiB samples, each its own file, opened, read in one call and
# closed, from the page cache (loader_warm) and after dropping the caches
# (loader_cold: each file looked up, opened and read over the wire); a
# large file mapped and read by page faults, cold (mmap_cold); and
# loader_cold in 4 processes at once (loader_parallel).  Variants: the
# helper (vnfs-fentry) and, in long mode, the collector design, timing only
# (T) and attributing (A), the least any design adds, "none" before the
# first and after each, in an order rotated by round, added time
# against the neighbouring "none" runs as in the rounds above.  Budget (long
# mode): vnfs adds at most 1 % to each loop.  The helper's counts are
# checked exactly: every sample read is one read of 131,072 bytes of job
# $WORKLOAD_JOB, the mapping's pages are its mmap_read bytes.
LOADER_LOOPS=(loader_warm loader_cold mmap_cold loader_parallel)
LOADER_VARIANTS=(vnfs-fentry)
LOADER_RAW=$VNFS_OUT/bench-loader-raw.txt
LOADER_DIRECTORY=$MOUNTPOINT/bench/loader
LOADER_MAPPED=$MOUNTPOINT/bench/loader-mapped
LOADER_PROCESSES=4
case $mode in
short) loader_files=16 loader_mapped_mib=2 loader_rounds=1 loader_repeats=2 ;;
long) loader_files=256 loader_mapped_mib=32 loader_rounds=3 loader_repeats=3
	LOADER_VARIANTS+=(collector-design timing attributing) ;;
esac
: > "$LOADER_RAW"
mkdir -p "$LOADER_DIRECTORY"
for ((file = 0; file < loader_files; file++)); do
	head -c 131072 /dev/urandom > "$(printf '%s/loader-%04d' "$LOADER_DIRECTORY" $file)" || break
done
check_eq "data loader: $loader_files files of 128 KiB on NFSv4.2" "$file" "$loader_files"
check "data loader: a $loader_mapped_mib MiB file to map" \
	dd if=/dev/urandom of="$LOADER_MAPPED" bs=1M count=$loader_mapped_mib conv=fsync status=none

# loader_loop LOOP: bench_workload's line for LOOP, in the workload cgroup.
loader_loop() {
	in_cgroup "$WORKLOAD_CGROUP" "$WORKLOAD" -r $loader_repeats -d "$LOADER_DIRECTORY" \
		-k $loader_files -p $LOADER_PROCESSES -l "$1" "$LOADER_MAPPED"
}

# check_loader_counts ROUND: job $WORKLOAD_JOB's reads are the samples read
# (loader_warm's untimed pass and every timed pass of the three loader
# loops), its mmap_read bytes the mapping's, each cold pass once.
check_loader_counts() {
	local query=$VNFS_OUT/bench-loader-query-$1.json passes=$((1 + 3 * loader_repeats))
	query_workload_job > "$query" || { fail "data loader round $1: QUERY of job $WORKLOAD_JOB failed"; return; }
	check_eq "data loader round $1: job $WORKLOAD_JOB read $((passes * loader_files)) samples" \
		"$(jq '[.job.steps[].operations.read.count] | add' "$query")" $((passes * loader_files))
	check_eq "data loader round $1: ... of exactly $((passes * loader_files * 131072)) bytes" \
		"$(jq '[.job.steps[].operations.read.bytes] | add' "$query")" $((passes * loader_files * 131072))
	check_eq "data loader round $1: the mapping brought in exactly $loader_repeats x $loader_mapped_mib MiB" \
		"$(jq '[.job.steps[].operations.mmap_read.bytes] | add' "$query")" \
		$((loader_repeats * loader_mapped_mib * 1048576))
}

loader_sequence=0
# run_loader_variant ROUND VARIANT: attach, the loops, detach; appends
# "round variant loop best_ns median_ns rpcs sequence" per loop to $LOADER_RAW.
run_loader_variant() {
	local round=$1 variant=$2 loop line name best median rpcs_before
	attach "$variant" || { fail "data loader round $round: $variant did not attach"; detach "$variant"; return 1; }
	loader_sequence=$((loader_sequence + 1))
	for loop in "${LOADER_LOOPS[@]}"; do
		rpcs_before=$(rpc_count "$MOUNTPOINT")
		line=$(loader_loop "$loop") || fail "data loader round $round: $variant: $loop failed"
		read -r name best median _ <<< "$line"
		[ "$name" = "$loop" ] && echo "$round $variant $loop $best $median" \
			"$(( $(rpc_count "$MOUNTPOINT") - rpcs_before )) $loader_sequence" >> "$LOADER_RAW"
	done
	[ "$variant" = vnfs-fentry ] && check_loader_counts "$round"
	detach "$variant" || fail "data loader round $round: $variant did not detach cleanly"
}

for ((round = 1; round <= loader_rounds; round++)); do
	run_loader_variant "$round" none
	for ((i = 0; i < ${#LOADER_VARIANTS[@]}; i++)); do
		run_loader_variant "$round" "${LOADER_VARIANTS[(i + round - 1) % ${#LOADER_VARIANTS[@]}]}"
		run_loader_variant "$round" none
	done
done
check_every_run "$LOADER_RAW" "$loader_rounds" "${LOADER_VARIANTS[*]}" "${LOADER_LOOPS[*]}"
loader_summary=$(median_table "$LOADER_RAW")
echo "$loader_summary" > "$VNFS_OUT/bench-loader-summary.txt"
# loader_percent LOOP VARIANT: its added time in % of none's.
loader_percent() {
	awk -v a="$(value_of "$loader_summary" "$1" "$2" 4)" -v n="$(value_of "$loader_summary" "$1" none 3)" \
		'BEGIN { if (a == "" || a == "n/a" || n <= 0) print "n/a"; else printf "%.2f", 100 * a / n }'
}
{
	echo
	printf 'data loader: ns per sample (mmap_cold: per 128 KiB mapped), median over %d rounds of the best of %d passes\n' \
		"$loader_rounds" "$loader_repeats"
	printf '(%d files of 128 KiB; a %d MiB mapping; loader_parallel in %d processes; budget: vnfs adds <= 1 %%)\n' \
		"$loader_files" "$loader_mapped_mib" $LOADER_PROCESSES
	printf '%-16s %12s' loop none
	for variant in "${LOADER_VARIANTS[@]}"; do printf ' %16s %9s' "$variant" added; done
	echo
	for loop in "${LOADER_LOOPS[@]}"; do
		printf '%-16s %12s' "$loop" "$(value_of "$loader_summary" "$loop" none 3)"
		for variant in "${LOADER_VARIANTS[@]}"; do
			printf ' %16s %8s%%' "$(value_of "$loader_summary" "$loop" "$variant" 3)" \
				"$(loader_percent "$loop" "$variant")"
		done
		echo
		printf '%-16s %12s' "  RPCs" "$(value_of "$loader_summary" "$loop" none 6)"
		for variant in "${LOADER_VARIANTS[@]}"; do
			printf ' %16s %9s' "$(value_of "$loader_summary" "$loop" "$variant" 6)" ""
		done
		echo
	done
} | tee -a "$TABLE"
# The cold loops went over the wire: at least one READ per sample.
for loop in loader_cold loader_parallel; do
	check_ge "data loader: $loop sent RPCs for every sample (none)" \
		"$(value_of "$loader_summary" "$loop" none 6)" "$loader_files"
done
if [ "$mode" = long ]; then
	for loop in "${LOADER_LOOPS[@]}"; do
		check "budget $loop: vnfs adds $(loader_percent "$loop" vnfs-fentry) % <= 1 %" \
			awk -v p="$(loader_percent "$loop" vnfs-fentry)" 'BEGIN { exit !(p != "n/a" && p <= 1) }'
	done
fi
mark bench-data-loader

# ------------------------------------------------------- the RPC counters
# What counting RPCs per workload (docs/PROBES.md, "RPCs") adds where RPCs
# are sent: a 64 MiB buffered write + fsync, and a cold 64 MiB sequential
# read (1 MiB reads, after dropping the caches), in the registered workload
# cgroup, each timed whole.  Variants: the helper counting RPCs
# ("vnfs-rpcs") and the same helper with count_rpcs = false
# ("vnfs-no-rpcs"), in an order rotated by round; the best of the repeats
# per round, the median over rounds.  Budget (long mode): at most 2 %
# added.  The RPC programs' own run time per RPC (bpf_stats) beside it.
WIRE_RAW=$VNFS_OUT/bench-wire-raw.txt
WIRE_PROGRAMS=$VNFS_OUT/bench-wire-programs.txt
NFS_WORKLOAD=$(program tests/tools/nfs-workload)
WIRE_FILE=$MOUNTPOINT/bench/wire-file
case $mode in
short) wire_rounds=1 wire_repeats=2 ;;
long) wire_rounds=3 wire_repeats=3 ;;
esac
: > "$WIRE_RAW"
: > "$WIRE_PROGRAMS"

# wire_loop LOOP: runs it once in the workload cgroup; prints its ms.
wire_loop() {
	local started=$EPOCHREALTIME
	case $1 in
	write64) in_cgroup "$WORKLOAD_CGROUP" "$NFS_WORKLOAD" write "$WIRE_FILE" 64 > /dev/null ;;
	cold_read64) echo 3 > /proc/sys/vm/drop_caches &&
		in_cgroup "$WORKLOAD_CGROUP" dd if="$WIRE_FILE" of=/dev/null bs=1M status=none ;;
	esac || return 1
	elapsed_ms "$started"
}

# wire_program_totals: "RUN_TIME_NS RUN_COUNT" of the RPC programs' ends.
wire_program_totals() {
	bpftool -j prog show | jq -r '[.[] | select((.name // "") | test("^wire_"))] |
		"\(([.[].run_time_ns // 0] | add) // 0) \(([.[] | select(.name == "wire_task_end") | .run_cnt // 0] | add) // 0)"'
}

# run_wire_variant ROUND VARIANT: appends "round variant loop best_ms" per
# loop to $WIRE_RAW, and "variant program_ns rpcs" to $WIRE_PROGRAMS.
run_wire_variant() {
	local round=$1 variant=$2 loop log repeat ms best time_before rpcs_before time_after rpcs_after
	attach_count=$((attach_count + 1))
	log=$LOGS/bench-attach-$attach_count-$variant.log
	case $variant in
	vnfs-rpcs) start_helper fentry "$log" ;;
	vnfs-no-rpcs) start_helper fentry "$log" "$NO_RPCS_CONFIG" ;;
	esac || { fail "wire round $round: $variant did not start"; tail -n 20 "$log"; return 1; }
	"$STEPS" -s "$SOCKET" -j $WORKLOAD_JOB "$WORKLOAD_CGROUP" > /dev/null ||
		fail "wire round $round: $variant: the workload cgroup is not registered"
	sysctl -q kernel.bpf_stats_enabled=1 || fail "bench.sh: kernel.bpf_stats_enabled cannot be set"
	# One untimed run first: the file exists and its server pages are made
	# before either variant is timed.
	wire_loop write64 > /dev/null && wire_loop cold_read64 > /dev/null ||
		fail "wire round $round: $variant: the untimed run failed"
	read -r time_before rpcs_before <<< "$(wire_program_totals)"
	for loop in write64 cold_read64; do
		best=
		for ((repeat = 1; repeat <= wire_repeats; repeat++)); do
			ms=$(wire_loop $loop) || { fail "wire round $round: $variant: $loop failed"; continue; }
			[ -z "$best" ] || [ "$ms" -lt "$best" ] && best=$ms
		done
		[ -n "$best" ] && echo "$round $variant $loop $best" >> "$WIRE_RAW"
	done
	read -r time_after rpcs_after <<< "$(wire_program_totals)"
	[ "$variant" = vnfs-rpcs ] && bpftool -j prog show |
		jq -r '.[] | select((.name // "") | test("^wire_")) | "\(.name) \(.run_time_ns // 0) \(.run_cnt // 0)"' \
			> "$VNFS_OUT/bench-wire-programs-round-$round.txt"
	sysctl -q kernel.bpf_stats_enabled=0
	echo "$variant $((time_after - time_before)) $((rpcs_after - rpcs_before))" >> "$WIRE_PROGRAMS"
	stop_helper || fail "wire round $round: $variant did not stop cleanly"
}

WIRE_VARIANTS=(vnfs-no-rpcs vnfs-rpcs)
for ((round = 1; round <= wire_rounds; round++)); do
	for ((i = 0; i < ${#WIRE_VARIANTS[@]}; i++)); do
		run_wire_variant "$round" "${WIRE_VARIANTS[(i + round - 1) % ${#WIRE_VARIANTS[@]}]}"
	done
done
# wire_ms VARIANT LOOP: the median over rounds of the best run, ms.
wire_ms() {
	awk -v v="$1" -v l="$2" '$2 == v && $3 == l { print $4 }' "$WIRE_RAW" | sort -n |
		awk '{ v[NR] = $1 } END { if (NR) printf "%d", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
wire_rpcs=$(awk '$1 == "vnfs-rpcs" { r += $3 } END { print r + 0 }' "$WIRE_PROGRAMS")
wire_program_ns=$(awk '$1 == "vnfs-rpcs" { t += $2; r += $3 } END { if (r) printf "%.0f", t / r; else print 0 }' "$WIRE_PROGRAMS")
{
	echo
	printf 'RPC counters: ms per loop, median over %d rounds of the best of %d runs\n' "$wire_rounds" "$wire_repeats"
	printf '%-12s %14s %12s %10s\n' loop vnfs-no-rpcs vnfs-rpcs added
	for loop in write64 cold_read64; do
		printf '%-12s %14s %12s %9s%%\n' "$loop" "$(wire_ms vnfs-no-rpcs $loop)" "$(wire_ms vnfs-rpcs $loop)" \
			"$(awk -v a="$(wire_ms vnfs-rpcs $loop)" -v b="$(wire_ms vnfs-no-rpcs $loop)" \
				'BEGIN { if (b) printf "%.2f", 100 * (a - b) / b; else print "-" }')"
	done
	echo "RPC programs' own time: $wire_program_ns ns per RPC over $wire_rpcs RPCs; by program (last round: ns per run, runs):"
	awk '{ printf "  %-24s %8.0f %8d\n", $1, $3 ? $2 / $3 : 0, $3 }' \
		"$VNFS_OUT/bench-wire-programs-round-$wire_rounds.txt"
} | tee -a "$TABLE"
check_ge "vnfs-rpcs: the RPC programs counted the loops' RPCs" "$wire_rpcs" 64
check_eq "vnfs-no-rpcs: no RPC program ran" \
	"$(awk '$1 == "vnfs-no-rpcs" { r += $3 } END { print r + 0 }' "$WIRE_PROGRAMS")" 0
for loop in write64 cold_read64; do
	check "$loop: both variants timed" test -n "$(wire_ms vnfs-rpcs $loop)" -a -n "$(wire_ms vnfs-no-rpcs $loop)"
	[ "$mode" = long ] && check "budget $loop: the RPC counters add at most 2 %" \
		awk -v a="$(wire_ms vnfs-rpcs $loop)" -v b="$(wire_ms vnfs-no-rpcs $loop)" \
		'BEGIN { exit !(b > 0 && a <= 1.02 * b) }'
done
mark bench-rpc-counters

if [ $measure_helper = 0 ]; then
	bench_done
	exit 0
fi
# The helper's budgets (docs/PERFORMANCE.md): start to ready, CPU in 1/100 %
# of a core, RSS at 1,000 steps.
BUDGET_START_MS=1000 BUDGET_CPU_HUNDREDTHS=50 BUDGET_RSS_KIB=12288
# median_start MODE [COLUMN]: the median start-to-ready time of the helper
# in MODE (column 3: its probes' own; 4: exec to ready, its own count).
median_start() {
	awk -v m="$1" -v c="${2:-2}" '$1 == m && $c != "" { print $c }' "$STARTS" | sort -n |
		awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
starts_of() { awk -v m="$1" '$1 == m' "$STARTS" | wc -l; }
start_ms=$(median_start fentry)
kprobe_start_ms=$(median_start kprobe)
{
	echo "helper start to ready, median of each mode's starts ($(starts_of fentry) and $(starts_of kprobe)): fentry $start_ms ms, kprobe $kprobe_start_ms ms (budget $BUDGET_START_MS ms)"
	echo "  from exec, as the helper counts it: fentry $(median_start fentry 4) ms, kprobe $(median_start kprobe 4) ms"
	echo "  of which its probes' load and attach, as the helper counts them: fentry $(median_start fentry 3) ms, kprobe $(median_start kprobe 3) ms"
	printf 'helper CPU, registering %d steps until their first history write (%d s): %d ms\n' \
		$idle_steps "$register_s" "$register_cpu_ms"
	printf 'helper CPU, %d idle steps, %d s: %d.%02d %% of a core (budget %d.%02d %%)\n' \
		$idle_steps "$cpu_window" $((idle_cpu / 100)) $((idle_cpu % 100)) \
		$((BUDGET_CPU_HUNDREDTHS / 100)) $((BUDGET_CPU_HUNDREDTHS % 100))
	printf 'helper CPU, %d steps with %d doing I/O, %d s: %d.%02d %% of a core (budget %d.%02d %%)\n' \
		$idle_steps $BUSY_STEPS "$cpu_window" $((busy_cpu / 100)) $((busy_cpu % 100)) \
		$((BUDGET_CPU_HUNDREDTHS / 100)) $((BUDGET_CPU_HUNDREDTHS % 100))
	echo "helper RSS, $idle_steps idle steps: $idle_rss KiB; $BUSY_STEPS of them doing I/O: $busy_rss KiB (budget $BUDGET_RSS_KIB KiB)"
	echo "helper peak RSS (VmHWM): $busy_hwm KiB over its life; $resource_start_hwm KiB when it became ready, with no step (loading the probes)"
	echo "helper RSS when it became ready, no step: $resource_start_rss KiB"
	echo "helper RSS, idle steps, KiB by mapping: $idle_rss_parts"
} | tee "$RESOURCES"
for value in "$start_ms" "$register_cpu_ms" "$idle_cpu" "$busy_cpu" "$idle_rss" "$busy_rss" \
	"$busy_hwm" "$resource_start_hwm" "$resource_start_rss"; do
	[[ $value =~ ^[0-9]+$ ]] || fail "a resource measurement is missing: '$value'"
done
# In every mode: what the helper holds before any step must leave the steps
# room in the budget.  It was 16.6 MiB, the large tables cleared on the
# heap, until malloc's threshold was fixed (helper/main.c, 2026-12-05).
check_le "helper RSS when ready, no step (KiB), within the 1,000 steps' budget" \
	"$resource_start_rss" $BUDGET_RSS_KIB
if [ "$mode" = long ]; then
	check_le "budget: helper start to ready, fentry probes (ms)" "$start_ms" $BUDGET_START_MS
	check_le "budget: helper CPU with idle steps (1/100 % of a core)" "$idle_cpu" $BUDGET_CPU_HUNDREDTHS
	check_le "budget: helper CPU with $BUSY_STEPS steps doing I/O (1/100 % of a core)" "$busy_cpu" $BUDGET_CPU_HUNDREDTHS
	check_le "budget: helper RSS with $idle_steps idle steps (KiB)" "$idle_rss" $BUDGET_RSS_KIB
	check_le "budget: helper RSS with $BUSY_STEPS of them doing I/O (KiB)" "$busy_rss" $BUDGET_RSS_KIB
fi
bench_done
