#!/usr/bin/env bash
# helper.sh — vnfs-helper end to end on the real kernel NFS client: steps
# registered through the real socket, known workloads in their cgroups, exact
# per-operation counts read back with QUERY, on NFS v3, v4.0, v4.1 and v4.2.
# Also: unattributed I/O, process and mount breakdowns, kill -9 and restart
# in the middle of a job, socket security and malformed input, the Kafka and
# HTTP outputs loaded from their modules and delivering to real receivers,
# and the PostgreSQL output writing to a real server that vnfs-report --db
# reads back as the job's owner; the same exact counts against NFS-Ganesha
# on v3 and v4.1.
#
# helper.sh [all]   everything, on the default kernel (scripts/check guest-helper)
# helper.sh counts  what depends on the kernel: the method of each operation,
#                   the exact counts on nfsd's four versions, the unattributed
#                   writes (the kernel matrix's suites, kernel.sh)
source /vnfs/src/tests/guest/lib/guest.sh

mode=${1:-all}
case $mode in
all|counts) ;;
*) fail "helper.sh: unknown mode '$mode' (all or counts)"; exit 1 ;;
esac

BUILD=${VNFS_BUILD:-/vnfs/src}
HELPER=$BUILD/vnfs-helper
SEND=$BUILD/tests/tools/vnfs-send
WORKLOAD=$BUILD/tests/tools/nfs-workload
RUN=/run/vnfs-helper-test
SOCKET=$RUN/vnfs.sock
CGROUP=${VNFS_CGROUP2_MOUNT:-/sys/fs/cgroup}/vnfs-test
MIB=1048576

mkdir -p $RUN
cat > $RUN/vnfs.conf <<CONF
[helper]
socket = $SOCKET
state_dir = $RUN/state
report_dir = $RUN/reports
interval = 1s
[sqlite]
path = $RUN/history.db
[prometheus]
listen = 127.0.0.1:9716
# Loaded from its module (nothing listens on port 9: every POST fails).
[http]
enabled = true
url = http://127.0.0.1:9/vnfs
CONF
# The Kafka and HTTP outputs are modules; these are the build's.
export VNFS_MODULE_DIR=$BUILD/.libs

HELPER_PID= HELPER_STARTS=0
ready_or_gone() { grep -q 'ready:' "$1" || ! kill -0 "$2" 2> /dev/null; }
start_helper() { # start_helper [extra args]: waits for "ready:" in its own log
	local started=$EPOCHREALTIME log
	HELPER_STARTS=$((HELPER_STARTS + 1))
	log=$VNFS_OUT/helper-$HELPER_STARTS.log
	"$HELPER" --config $RUN/vnfs.conf "$@" > "$log" 2>&1 &
	HELPER_PID=$!
	# Ready, or gone (a refused start fails at once).  The bound is for a
	# hang: on 5.10, whose verifier walks every kprobe program's static
	# subprograms, a start took 17 to 83 s beside three other guests.
	until_ok 300 ready_or_gone "$log" "$HELPER_PID"
	if ! grep -q 'ready:' "$log"; then
		fail "helper start $HELPER_STARTS: not ready (exited, or still starting after 300 s)"
		tail -n 30 "$log"
		return 1
	fi
	echo "helper start $HELPER_STARTS: ready after $(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.2f", b-a}') s"
}

send() { "$SEND" "$SOCKET" "$1"; }
register() { # register JOB STEP UID CGROUP_DIR [TAGS_JSON]
	send "{\"v\":1,\"type\":\"register\",\"job\":$1,\"step\":$2,\"uid\":$3,\"cgroup_path\":\"$4\",\"tags\":${5:-{\}}}" > /dev/null
}
query() { send "{\"v\":1,\"type\":\"query\",\"job\":$1}"; }
# A QUERY answer's figures, all read by one jq (under emulation a jq costs
# 250-600 ms of the guest's CPU, and the checks of one job read about 30):
# answer_facts JSON fills facts[] with "op|OPERATION|FIELD" (each numeric
# field, summed over the job's steps), "errors|all" (every operation's),
# "user|first" and "tag|NAME" (the first step's), "process_write_bytes|COMM"
# and "mount_write_bytes|MOUNT_POINT" (summed over the steps).
declare -A facts
facts_of=
answer_facts() {
	[ "$1" == "$facts_of" ] && return 0
	local kind key value
	facts=()
	while IFS=$'\t' read -r kind key value; do
		facts[$kind|$key]=$value
	done < <(jq -r '
		([.job.steps[].operations | to_entries[]] | group_by(.key)[] | .[0].key as $op |
			(.[0].value | to_entries[] | select(.value | type == "number") | .key) as $field |
			["op", "\($op)|\($field)", ([.[].value[$field]] | add)]),
		["errors", "all", ([.job.steps[].operations[].errors] | add)],
		["user", "first", .job.steps[0].user],
		(.job.steps[0].tags // {} | to_entries[] | ["tag", .key, .value]),
		([.job.steps[].processes[]?] | group_by(.comm)[] |
			["process_write_bytes", .[0].comm, ([.[].write_bytes] | add)]),
		([.job.steps[].mounts[]?] | group_by(.mount_point)[] |
			["mount_write_bytes", .[0].mount_point, ([.[].write_bytes] | add)])
		| @tsv' <<< "$1")
	facts_of=$1
}
# fact JSON KEY: one of them ("null" if the answer has none).  Call
# answer_facts in the shell first: in a $(...) the reading is lost.
fact() {
	answer_facts "$1"
	echo "${facts[$2]-null}"
}
# op JSON OP FIELD: a job total of one operation field, summed over its steps
op() { fact "$1" "op|$2|$3"; }
in_cgroup() { # in_cgroup DIR COMMAND...: run COMMAND inside cgroup DIR
	mkdir -p "$1"
	bash -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' _ "$@"
}

mark helper_start
check "helper refuses a bad config with file, line and key" \
	bash -c "printf '[helper]\nintervall = 1s\n' > /tmp/bad.conf; ! $HELPER --check-config /tmp/bad.conf 2> /tmp/bad.err && grep -q '/tmp/bad.conf:2: \[helper\] intervall' /tmp/bad.err"
start_helper || exit 1
status=$(send '{"v":1,"type":"status"}')
echo "status: $status"
check "the enabled HTTP output is loaded from its module" \
	bash -c "grep -q 'output http enabled' $VNFS_OUT/helper-1.log && grep -q '/sink_http.so\$' /proc/$HELPER_PID/maps"
check "the Kafka output, not enabled, is not loaded, nor is librdkafka" \
	bash -c "! grep -E -q 'sink_kafka.so|librdkafka' /proc/$HELPER_PID/maps"
# Each operation by fentry where the nfs module has BTF (from 5.11 on), by
# kprobe before; the method logged at start and exported per operation.
method=kprobe
[ -e /sys/kernel/btf/nfs ] && method=fentry
# (The methods are exported from the first collection on, a second after start.)
methods_exported() {
	curl -s http://127.0.0.1:9716/metrics > $VNFS_OUT/metrics-start.txt &&
		grep -q '^vnfs_helper_attach_method' $VNFS_OUT/metrics-start.txt
}
check "the attach methods are exported" until_ok 60 methods_exported
declare -A attached
while IFS=$'\t' read -r operation how; do attached[$operation]=$how; done < <(
	jq -r '.status.attach | to_entries[] | [.key, .value] | @tsv' <<< "$status")
for operation in read write open close getattr lookup mkdir rename unlink readdir fsync mmap_read; do
	check_eq "operation $operation attached by $method" "${attached[$operation]-none}" $method
	check "operation $operation: its method logged at start" \
		grep -q "^vnfs-helper: info: $operation: $method (" $VNFS_OUT/helper-1.log
	check "operation $operation: its method exported" \
		grep -qx "vnfs_helper_attach_method{op=\"$operation\",method=\"$method\"} 1" $VNFS_OUT/metrics-start.txt
done

# exact_counts LABEL VERSION MOUNT_DIR JOB: a writer job JOB and a reader
# job JOB+1 on one mount, their exact counts checked through QUERY.
exact_counts() {
	local label=$1 version=$2 mount_dir=$3 writer_job=$4 reader_job=$(($4 + 1))
	local work=$mount_dir/helper-$4 writer reader
	mkdir -p "$work/w" "$work/r"
	# Files the reader uses are written and then evicted from the cache by an
	# unregistered shell: they show up only as unattributed.
	"$WORKLOAD" write "$work/r/data" 4 > /dev/null
	"$WORKLOAD" write "$work/r/mapped" 1 > /dev/null
	guest_drop_caches

	mkdir -p "$CGROUP/job$writer_job" "$CGROUP/job$reader_job"
	register $writer_job 0 0 "$CGROUP/job$writer_job" '{"PROJECT_NAME":"alpha"}'
	check "$label: job $writer_job registered" [ $? = 0 ]
	register $reader_job 0 "$(id -u vnfstest)" "$CGROUP/job$reader_job" '{"PROJECT_NAME":"beta"}'
	check "$label: job $reader_job registered" [ $? = 0 ]

	# The writer runs in a task sub-cgroup: the nearest registered ancestor counts.
	in_cgroup "$CGROUP/job$writer_job/task_0" "$WORKLOAD" writer "$work/w" > $VNFS_OUT/writer-$writer_job.txt
	check "$label: writer workload ran" [ $? = 0 ]
	in_cgroup "$CGROUP/job$reader_job" "$WORKLOAD" reader "$work/r/data" "$work/r" > $VNFS_OUT/reader-$reader_job.txt
	check "$label: reader workload ran" [ $? = 0 ]
	in_cgroup "$CGROUP/job$reader_job" "$WORKLOAD" mmap "$work/r/mapped" > /dev/null
	check "$label: mmap workload ran" [ $? = 0 ]
	in_cgroup "$CGROUP/unregistered" "$WORKLOAD" write "$work/stray" 1 > /dev/null

	writer=$(query $writer_job)
	reader=$(query $reader_job)
	echo "$writer" > $VNFS_OUT/query-$writer_job.json
	echo "$reader" > $VNFS_OUT/query-$reader_job.json

	# Exact: the kernel calls these hooks once per system call.  (The
	# answer is read here, in this shell: a $(...) below reads it again
	# in its subshell unless it is known already.)
	answer_facts "$writer"
	check_eq "$label job $writer_job write bytes" "$(op "$writer" write bytes)" $((8 * MIB))
	check_eq "$label job $writer_job write calls" "$(op "$writer" write count)" 8
	check_eq "$label job $writer_job fsync" "$(op "$writer" fsync count)" 1
	check_eq "$label job $writer_job rename" "$(op "$writer" rename count)" 3
	check_eq "$label job $writer_job mkdir" "$(op "$writer" mkdir count)" 2
	check_eq "$label job $writer_job rmdir" "$(op "$writer" rmdir count)" 2
	check_eq "$label job $writer_job unlink" "$(op "$writer" unlink count)" 10
	check_eq "$label job $writer_job close" "$(op "$writer" close count)" 10
	check_eq "$label job $writer_job read bytes" "$(op "$writer" read bytes)" 0
	check_eq "$label job $writer_job errors" "$(fact "$writer" "errors|all")" 0
	# NFSv3 creates with CREATE and then opens; NFSv4 creates through OPEN,
	# which counts as both, so every version gives the same counts.
	check_eq "$label job $writer_job create" "$(op "$writer" create count)" 10
	check_eq "$label job $writer_job open" "$(op "$writer" open count)" 10
	check_eq "$label job $writer_job tag" "$(fact "$writer" "tag|PROJECT_NAME")" alpha
	check_eq "$label job $writer_job: nfs-workload in its process breakdown" \
		"$(fact "$writer" "process_write_bytes|nfs-workload")" $((8 * MIB))
	check_eq "$label job $writer_job: mount breakdown names $mount_dir and adds up" \
		"$(fact "$writer" "mount_write_bytes|$mount_dir")" $((8 * MIB))

	answer_facts "$reader"
	check_eq "$label job $reader_job read bytes" "$(op "$reader" read bytes)" $((4 * MIB))
	# 1,024 reads of 4 KiB and the one at end of file that returns 0.
	check_eq "$label job $reader_job read calls" "$(op "$reader" read count)" 1025
	check_eq "$label job $reader_job mmap_read bytes" "$(op "$reader" mmap_read bytes)" $MIB
	check_eq "$label job $reader_job write bytes" "$(op "$reader" write bytes)" 0
	check_ge "$label job $reader_job readdir" "$(op "$reader" readdir count)" 1
	# stat() always calls getattr; the open of a cached name may add more.
	check_ge "$label job $reader_job getattr" "$(op "$reader" getattr count)" 1
	# The missing name: an open error where NFSv4 opens atomically, a lookup
	# that found nothing on NFSv3.
	if [ "$version" = 3 ]; then
		check_eq "$label job $reader_job lookup errors (missing file)" "$(op "$reader" lookup errors)" 1
	else
		check_eq "$label job $reader_job open errors (missing file)" "$(op "$reader" open errors)" 1
	fi
	check_eq "$label job $reader_job user" "$(fact "$reader" "user|first")" vnfstest
}

if [ "$mode" = all ]; then guest_start_nfs --with-ganesha; else guest_start_nfs; fi
guest_mount_all_nfs
mark nfs_up

job_base=42
for version in $NFS_VERSIONS; do
	exact_counts "v$version" "$version" "$(nfs_mount_of "$version")" $job_base
	job_base=$((job_base + 100))
done
# The same jobs against NFS-Ganesha, the second server, on v3 and v4.1: the
# client's functions are called once per system call whatever the server,
# so the same exact counts hold (measured: every operation's count and
# errors equal nfsd's, job by job, access's 130 and lookup's 17 included).
# What differs is below them: Ganesha grants no delegations and offers
# 1 MiB reads and writes where nfsd offers 256 KiB here, so the RPCs on the
# wire differ (guest-wire counts those, against nfsd).
if [ "$mode" = all ]; then
	job_base=842
	for version in $GANESHA_VERSIONS; do
		guest_mount_ganesha "$version"
		exact_counts "Ganesha v$version" "$version" "$(ganesha_mount_of "$version")" $job_base
		job_base=$((job_base + 100))
	done
	mark ganesha_done
fi
# Unattributed: the stray writes of the unregistered cgroup, 1 MiB per version.
unregistered_id=$(stat -c %i "$CGROUP/unregistered")
mark workloads_done
unattributed_exported() {
	curl -s http://127.0.0.1:9716/metrics > $VNFS_OUT/metrics.txt &&
		grep -q "vnfs_unattributed_operations_total{.*cgroup_id=\"$unregistered_id\"" $VNFS_OUT/metrics.txt
}
check "unattributed writes of cgroup $unregistered_id are exported" until_ok 30 unattributed_exported
# Nothing the workloads did was lost on the way: every call had its
# thread's state, every exit its entry, every map room.
exported() { awk -v series="$1" '$1 == series { print $2 }' $VNFS_OUT/metrics.txt; }
check_eq "no call uncounted for want of its thread's state" \
	"$(exported vnfs_helper_uncounted_operations_total)" 0
check_eq "no exit seen without its entry" "$(exported vnfs_helper_unmatched_exits_total)" 0
check_eq "no return the kernel did not report" "$(exported vnfs_helper_missed_exits_total)" 0
# The kernel's own count: a sample per return probe the helper made in
# tracefs (kprobes; none where every function is by fentry), each 0.
return_events=$(grep -c '^r[0-9]*:vnfs/' /sys/kernel/tracing/kprobe_events)
check_eq "the kernel's count of missed returns: a sample per return probe in tracefs ($return_events)" \
	"$(grep -c '^vnfs_helper_kernel_missed_returns_total{function="' $VNFS_OUT/metrics.txt)" "$return_events"
check_eq "the kernel's count: no return missed" \
	"$(awk '$1 ~ /^vnfs_helper_kernel_missed_returns_total[{]/ && $2 != 0' $VNFS_OUT/metrics.txt | wc -l)" 0
for map in cgroup_cache breakdown_stats unattributed_stats; do
	check_eq "no update refused by a full $map" \
		"$(exported "vnfs_helper_map_full_total{map=\"$map\"}")" 0
done

if [ "$mode" = counts ]; then
	kill -TERM "$HELPER_PID"
	wait "$HELPER_PID"
	check_eq "helper exit status after SIGTERM" $? 0
	guest_umount_all_nfs
	guest_done
	exit 0
fi

# Security: a non-root client cannot register, finish, or read another's job.
denied=$(as_user vnfstest "$SEND" "$SOCKET" '{"v":1,"type":"register","job":9,"step":0,"uid":1,"cgroup_path":"/sys/fs/cgroup"}')
check "non-root register denied" grep -q 'permission denied' <<< "$denied"
denied=$(as_user vnfstest "$SEND" "$SOCKET" '{"v":1,"type":"finish","job":42}')
check "non-root finish denied" grep -q 'permission denied' <<< "$denied"
denied=$(as_user vnfstest "$SEND" "$SOCKET" '{"v":1,"type":"query","job":42}')
# Not yours and not here get one answer: nobody learns which jobs run here.
check_eq "non-root query of root's job answered as a job not here" "$denied" \
	'{"v":1,"ok":false,"error":"job 42 is not running on this node"}'
own=$(as_user vnfstest "$SEND" "$SOCKET" '{"v":1,"type":"query","job":43}')
check "non-root query of own job allowed" grep -q '"ok":true' <<< "$own"

# Malformed input gets an error reply; the helper survives all of it.
check "garbage gets an error reply" bash -c "'$SEND' '$SOCKET' 'not json' | grep -q '\"ok\":false'"
check "unknown type gets an error reply" bash -c "'$SEND' '$SOCKET' '{\"v\":1,\"type\":\"regster\"}' | grep -q 'unknown request type'"
check "oversized message gets an error reply" bash -c "'$SEND' '$SOCKET' --bytes 200000 | grep -q '\"ok\":false'"
check "helper still alive after bad input" kill -0 "$HELPER_PID"

# Live counts: a call waits in its task with at most 15 others, for at most
# a second while the task keeps calling (docs/PROBES.md, "Pending calls"), so
# a running job's counts move before it ends; once it ended they are exact.
# The writer writes 1 MiB per line it reads, 0.4 s apart at least, until
# its first writes show: they must once a second has passed between its
# calls (a few writes; 50 at most, a minute of a stalled helper); it waits
# for the next line meanwhile, so it is still running when they do.  Then
# one write more, and the end: every write counted.
mkdir -p "$CGROUP/job501"
register 501 0 0 "$CGROUP/job501"
mkfifo $RUN/pace501
in_cgroup "$CGROUP/job501" "$WORKLOAD" paced-write "$(nfs_mount_of 4.2)/live" < $RUN/pace501 > /dev/null &
workload_pid=$!
exec 9> $RUN/pace501
sent=0 live_writes=0
while [ $sent -lt 50 ] && [ "$live_writes" -lt 1 ]; do
	echo >&9
	sent=$((sent + 1))
	sleep 0.4
	live_writes=$(op "$(query 501)" write count)
	[[ $live_writes =~ ^[0-9]+$ ]] || live_writes=0
done
check "job 501 still writing when queried" kill -0 $workload_pid
echo "job 501: $live_writes of $sent writes counted while it ran"
check "job 501's writes show while it runs (1 to $sent of the $sent made)" \
	[ "$live_writes" -ge 1 -a "$live_writes" -le "$sent" ]
echo >&9
sent=$((sent + 1))
exec 9>&-
wait $workload_pid
check "job 501's workload succeeded" [ $? = 0 ]
check_eq "job 501 write calls once it ended" "$(op "$(query 501)" write count)" $sent

# Restart: kill -9 in the middle of a job's I/O; the final counts are exact.
mkdir -p "$CGROUP/job500"
register 500 0 0 "$CGROUP/job500"
in_cgroup "$CGROUP/job500" "$WORKLOAD" slow-write "$(nfs_mount_of 4.2)/restart" 12 150 > /dev/null &
workload_pid=$!
sleep 0.8
kill -9 "$HELPER_PID"
wait "$HELPER_PID" 2> /dev/null
start_helper
wait $workload_pid
check "workload across the restart succeeded" [ $? = 0 ]
restarted=$(query 500)
check_eq "job 500 write bytes across kill -9 and restart" "$(op "$restarted" write bytes)" $((12 * MIB))
check_eq "job 500 write calls across kill -9 and restart" "$(op "$restarted" write count)" 12

# FINISH: report files and slots released.
finished=$(send '{"v":1,"type":"finish","job":42}')
check "finish job 42" grep -q '"ok":true' <<< "$finished"
check "report file for job 42 exists" test -s $RUN/reports/42/$(hostname).json
check_eq "report file has job 42's exact write bytes" \
	"$(jq '[.steps[].operations.write.bytes] | add' $RUN/reports/42/$(hostname).json)" $((8 * MIB))
check "job 42 no longer held" bash -c "'$SEND' '$SOCKET' '{\"v\":1,\"type\":\"list\"}' | jq -e '[.jobs[] | select(.job == 42)] | length == 0' > /dev/null"
# Once finished, QUERY answers from the history: every step final, the same bytes.
from_history=$(query 42)
check "job 42 answered from the history, every step finished" \
	jq -e '.job.steps | length > 0 and all(.finished)' <<< "$from_history"
check_eq "job 42's write bytes from the history" "$(op "$from_history" write bytes)" $((8 * MIB))

# Another source's workload, registered by vnfs-register as a scheduler's or
# runtime's hook would: a Kubernetes pod's container, counted, queried,
# exported, finished and reported by its own identity, beside Slurm's jobs.
mark kubernetes
REGISTER=$BUILD/vnfs-register POD=ml/resnet-7f9c
mkdir -p "$CGROUP/pod-trainer"
registered=$("$REGISTER" --socket $SOCKET --source kubernetes --job $POD --part trainer \
	--cgroup "$CGROUP/pod-trainer" --tag PROJECT_NAME=gamma)
check_eq "vnfs-register registers the container (exit status)" $? 0
check "vnfs-register names it" \
	grep -qx "registered kubernetes pod $POD container trainer in slot [0-9]*" <<< "$registered"
"$REGISTER" --socket $SOCKET --source kubernetes --job resnet --cgroup "$CGROUP/pod-trainer" \
	2> $VNFS_OUT/register-bad.err
check_eq "vnfs-register: a pod not namespace/name is a usage error" $? 2
check "... and says why" grep -q 'a Kubernetes pod is namespace/name' $VNFS_OUT/register-bad.err
as_user vnfstest "$REGISTER" --socket $SOCKET --source kubernetes --job ml/other --part x \
	--cgroup "$CGROUP/pod-trainer" 2> $VNFS_OUT/register-user.err
check_eq "vnfs-register as a user: refused by the helper" $? 1
check "... permission denied" grep -q 'permission denied' $VNFS_OUT/register-user.err
in_cgroup "$CGROUP/pod-trainer" "$WORKLOAD" write "$(nfs_mount_of 4.2)/pod-trainer" 3 > /dev/null
check "the container's workload ran" [ $? = 0 ]
pod=$(send "{\"v\":1,\"type\":\"query\",\"source\":\"kubernetes\",\"job\":\"$POD\"}")
echo "$pod" > $VNFS_OUT/query-pod.json
check_eq "pod $POD write bytes" "$(op "$pod" write bytes)" $((3 * MIB))
check_eq "pod $POD write calls" "$(op "$pod" write count)" 3
check_eq "pod $POD fsync" "$(op "$pod" fsync count)" 1
check_eq "pod $POD: one container, trainer" "$(jq -c '[.job.steps[] | [.source, .job, .part]]' <<< "$pod")" \
	"[[\"kubernetes\",\"$POD\",\"trainer\"]]"
# metric_has LINE_START: the exposition has a sample line starting so
metric_has() { curl -s http://127.0.0.1:9716/metrics | grep -q "^$1"; }
until_ok 10 metric_has "vnfs_write_bytes_total{pod=\"$POD\",container=\"trainer\",user=\"root\"} $((3 * MIB))\$"
check "the container's series carry pod and container labels, with its bytes" \
	metric_has "vnfs_write_bytes_total{pod=\"$POD\",container=\"trainer\",user=\"root\"} $((3 * MIB))\$"
check_eq "vnfs-register --end" "$("$REGISTER" --socket $SOCKET --end --source kubernetes --job $POD --part trainer)" \
	"ended kubernetes pod $POD container trainer"
# The pod's own cgroup is still there: a whole discovery pass after the end
# leaves it for its hook to finish.
check "a whole interval was collected since the end" \
	until_ok 60 collected_beyond 127.0.0.1:9716 $(($(helper_collections 127.0.0.1:9716) + 1))
check_eq "vnfs-register --finish" "$("$REGISTER" --socket $SOCKET --finish --source kubernetes --job $POD)" \
	"finished kubernetes pod $POD"
check_eq "the history holds the container by its identity, Slurm's numbers NULL" \
	"$(sqlite3 $RUN/history.db "SELECT count(*) FROM steps WHERE source = 'kubernetes' AND job = '$POD' AND part = 'trainer' AND job_id IS NULL AND finished = 1")" 1
check_eq "vnfs-report -j kubernetes:$POD" \
	"$("$BUILD/vnfs-report" --database $RUN/history.db --socket $SOCKET -j kubernetes:$POD -X -P -n -o JobID,User)" \
	"kubernetes:$POD|root"
check_eq "vnfs-report --json: the pod's write bytes" \
	"$("$BUILD/vnfs-report" --database $RUN/history.db --socket $SOCKET -j kubernetes:$POD --json | jq '.jobs[0].operations.write.bytes')" \
	$((3 * MIB))
check "Slurm's job 42 is not the pod" bash -c "! '$BUILD/vnfs-report' --database $RUN/history.db -j 42 -P -n -o JobID | grep -q kubernetes"

kill -TERM "$HELPER_PID"
wait "$HELPER_PID"
check_eq "helper exit status after SIGTERM" $? 0
check "no sanitizer report in the helper logs" bash -c "! grep -qE 'Sanitizer|runtime error' $VNFS_OUT/helper-*.log"
# The module logs through the helper (its name, its settings), not through a
# copy of the logger of its own.
check "the HTTP module's warning comes through the helper's log" \
	grep -q '^vnfs-helper: warning: http: POST http://127.0.0.1:9/vnfs failed' $VNFS_OUT/helper-1.log

# The streaming outputs, delivered: the helper loads both modules and sends
# to a real Kafka broker (librdkafka's mock cluster, over loopback TCP) and
# to an HTTP endpoint, both in tests/tools/stream-receiver.
mark streams
RECEIVER_OUT=$VNFS_OUT/stream-receiver.out
"$BUILD/tests/tools/stream-receiver" --kafka vnfs --http 9780 > "$RECEIVER_OUT" 2> "$VNFS_OUT/stream-receiver.err" &
receiver_pid=$!
until_ok 20 grep -q '^ready' "$RECEIVER_OUT" || fail "stream-receiver did not start"
brokers=$(awk '$1 == "kafka-brokers" { print $2 }' "$RECEIVER_OUT")
sed -i 's|^url = http://127.0.0.1:9/vnfs$|url = http://127.0.0.1:9780/vnfs|' $RUN/vnfs.conf
printf '[kafka]\nenabled = true\nbrokers = %s\ntopic = vnfs\n' "$brokers" >> $RUN/vnfs.conf
start_helper
check "the enabled Kafka output is loaded from its module, with librdkafka" \
	bash -c "grep -q '/sink_kafka.so\$' /proc/$HELPER_PID/maps && grep -q librdkafka /proc/$HELPER_PID/maps"
mkdir -p "$CGROUP/job600"
register 600 0 0 "$CGROUP/job600"
in_cgroup "$CGROUP/job600" "$WORKLOAD" write "$(nfs_mount_of 4.2)/streams" 2 > /dev/null
check "job 600's workload succeeded" [ $? = 0 ]
# stream_records KIND TYPE: the JSON of every TYPE record of job 600 that KIND delivered
stream_records() {
	case $1 in
	kafka) awk '$1 == "kafka" && $2 == "600" { sub(/^kafka 600 /, ""); print }' "$RECEIVER_OUT" ;;
	http) awk '$1 == "http" { sub(/^http /, ""); print }' "$RECEIVER_OUT" ;;
	esac | jq -c --arg type "$2" 'select(.job == 600 and .type == $type)'
}
# Both have an interval's step record with the whole workload before FINISH.
whole_step_streamed() {
	local kind
	for kind in kafka http; do
		[ "$(stream_records $kind step | jq -s 'map(.operations.write.bytes) | max')" = $((2 * MIB)) ] ||
			return 1
	done
}
check "kafka and http delivered a step record of job 600's whole workload" until_ok 30 whole_step_streamed
check "finish job 600" bash -c "'$SEND' '$SOCKET' '{\"v\":1,\"type\":\"finish\",\"job\":600}' | grep -q '\"ok\":true'"
# has_job_record KIND: KIND has delivered job 600's record
has_job_record() { [ -n "$(stream_records "$1" job)" ]; }
for kind in kafka http; do
	until_ok 30 has_job_record $kind
	job_records=$(stream_records $kind job)
	check_eq "$kind: one job record for job 600" "$(grep -c . <<< "$job_records")" 1
	check_eq "$kind: job 600's write bytes" "$(jq '.operations.write.bytes' <<< "$job_records")" $((2 * MIB))
	check_eq "$kind: job 600's write calls" "$(jq '.operations.write.count' <<< "$job_records")" 2
	# RPCs are counted where the sunrpc module has BTF (5.11 on).
	if [ -e /sys/kernel/btf/sunrpc ]; then
		check_ge "$kind: job 600's record carries its WRITE RPCs, its 2 MiB sent" \
			"$(jq '[.wire[]? | select(.procedure == "WRITE") | .bytes_sent] | add // 0' <<< "$job_records")" $((2 * MIB))
	else
		check_eq "$kind: job 600's record has no RPC rows (no BTF for sunrpc: not counted)" \
			"$(jq '[.wire[]?] | length' <<< "$job_records")" 0
	fi
	check_eq "$kind: job 600's last step record has its write bytes" \
		"$(stream_records $kind step | jq -s 'map(.operations.write.bytes) | max')" $((2 * MIB))
	check_eq "$kind: no record dropped" \
		"$(curl -s http://127.0.0.1:9716/metrics | awk -v s="vnfs_helper_dropped_records_total{sink=\"$kind\"}" '$1 == s { print $2 }')" 0
done
check_eq "Kafka and HTTP carried the same RPC rows of job 600" \
	"$(stream_records kafka job | jq -c .wire)" "$(stream_records http job | jq -c .wire)"
kill -TERM "$HELPER_PID"
wait "$HELPER_PID"
check_eq "helper exit status after SIGTERM, with Kafka and HTTP" $? 0
# Both flush at SIGTERM: every record the helper made reached both ends.
# HTTP's arrived before the helper exited; Kafka's were acknowledged by the
# receiver's broker, and its consumer reads them when it next runs, which a
# loaded machine delays (20 of 689 still unread 10 s later, beside three
# other guests): the bound is for a consumer that never catches up.
records_of() { awk -v k="$1" '$1 == k' "$RECEIVER_OUT" | wc -l; }
same_record_counts() { [ "$(records_of kafka)" = "$(records_of http)" ]; }
until_ok 120 same_record_counts
check_eq "Kafka and HTTP received the same number of records" "$(records_of kafka)" "$(records_of http)"
kill -TERM $receiver_pid
wait $receiver_pid
check_eq "stream-receiver exit status" $? 0

# The cluster's history: a real PostgreSQL server set up as docs/INSTALL.md
# says (the three roles, a user's login role, the database owned by the
# writer), the helper's PostgreSQL output loaded from its module and writing
# job 700's records, and vnfs-report --db reading them back as the job's
# owner, through their own role: only their job, its exact bytes.
mark postgresql
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
PG_DIR=$RUN/postgresql
as_postgres() { runuser -u postgres -- "$@"; }
# sql ROLE SQL: one value (or rows), unaligned, as ROLE in the vnfs database.
sql() { psql -X -q -t -A -h $PG_DIR -d vnfs -U "$1" -c "$2"; }
mkdir -p $PG_DIR && chown postgres: $PG_DIR
check "initdb of the history's server" \
	as_postgres "$PG_BIN/initdb" -D $PG_DIR/data -A trust -U postgres -E UTF8 --no-sync \
	> $VNFS_OUT/postgresql-initdb.log 2>&1
mark postgresql-initdb-done
printf "listen_addresses = ''\nunix_socket_directories = '%s'\nfsync = off\n" $PG_DIR \
	>> $PG_DIR/data/postgresql.conf
# Its log in its own directory (the results' share is not the postgres user's).
check "the server starts" \
	as_postgres "$PG_BIN/pg_ctl" -D $PG_DIR/data -l $PG_DIR/server.log -w -t 300 start
check "its roles and database, as docs/INSTALL.md makes them" \
	psql -X -q -h $PG_DIR -d postgres -U postgres -c "CREATE ROLE vnfs_writer LOGIN" \
	-c "CREATE ROLE vnfs_admin LOGIN" -c "CREATE ROLE vnfs_users NOLOGIN" \
	-c "CREATE ROLE $VNFS_TEST_USER LOGIN IN ROLE vnfs_users" \
	-c "CREATE DATABASE vnfs OWNER vnfs_writer"
mark postgresql-server-up
# Kafka and HTTP off (their receiver is gone); PostgreSQL on.  Every
# interval sends every step's record (docs/OUTPUTS.md), 15 here with the
# earlier sections' steps, and under emulation on a busy host the writer
# takes fewer than that a second: at a 1 s interval the records queued
# ahead of job 700's finished one grew by the second, and it once came
# after the check's 60 s (24 s after the finish in another run).  At 10 s
# at most one interval's records are, so the checks wait on a known, small
# amount of work (3 s, measured, a third of the interval); their deadlines
# only catch a writer that hangs.  (30 s left the last check waiting 26 s
# for the first collection.)
sed -i 's/^enabled = true$/enabled = false/; s/^interval = 1s$/interval = 10s/' $RUN/vnfs.conf
printf '[postgresql]\nenabled = true\nconninfo = host=%s dbname=vnfs user=vnfs_writer\nspool_dir = %s/spool\nretry_interval = 1s\n' \
	$PG_DIR $RUN >> $RUN/vnfs.conf
start_helper
check "the enabled PostgreSQL output is loaded from its module, with libpq" \
	bash -c "grep -q '/sink_postgresql.so\$' /proc/$HELPER_PID/maps && grep -q libpq /proc/$HELPER_PID/maps"
check "the helper migrated the schema" until_ok 300 grep -q 'schema migrated to version 1' \
	"$VNFS_OUT/helper-$HELPER_STARTS.log"
test_uid=$(id -u $VNFS_TEST_USER)
mkdir -p "$CGROUP/job700" "$CGROUP/job701"
register 700 0 "$test_uid" "$CGROUP/job700"
register 701 0 0 "$CGROUP/job701"
in_cgroup "$CGROUP/job700" "$WORKLOAD" write "$(nfs_mount_of 4.2)/history-700" 3 > /dev/null
check "job 700's workload succeeded" [ $? = 0 ]
in_cgroup "$CGROUP/job701" "$WORKLOAD" write "$(nfs_mount_of 4.2)/history-701" 1 > /dev/null
check "job 701's workload succeeded" [ $? = 0 ]
for job in 700 701; do
	check "finish job $job" bash -c "'$SEND' '$SOCKET' '{\"v\":1,\"type\":\"finish\",\"job\":$job}' | grep -q '\"ok\":true'"
done
# written JOB: the job's finished row is in the database.
written() { [ "$(sql vnfs_admin "SELECT finished FROM jobs WHERE job = '$1'")" = 1 ]; }
both_written() { written 700 && written 701; }
check "jobs 700 and 701 are written, finished" until_ok 300 both_written
mark postgresql-written
check_eq "job 700 has one step row, its write bytes" \
	"$(sql vnfs_admin "SELECT count(*) || ':' || sum(o.bytes) FROM steps s JOIN step_operations o ON o.step = s.id WHERE s.job = '700' AND o.operation = 'write'")" \
	"1:$((3 * MIB))"
check_eq "no sample of job 700 written twice" \
	"$(sql vnfs_admin "SELECT count(*) FROM (SELECT 1 FROM step_samples WHERE job = '700' GROUP BY source, job, node, part, sample_time_ms HAVING count(*) > 1) AS twice")" 0
report_as_owner() {
	as_user $VNFS_TEST_USER "$BUILD/vnfs-report" --config $RUN/vnfs.conf --socket $RUN/no-helper \
		--db "postgresql:///vnfs?host=$PG_DIR&user=$VNFS_TEST_USER" "$@"
}
check_eq "vnfs-report --db, as job 700's owner: its exact bytes and calls" \
	"$(report_as_owner -j 700 -X -P -n -o JobID,User,WriteBytes,WriteOps 2> $VNFS_OUT/report-db.err)" \
	"700|$VNFS_TEST_USER|$((3 * MIB))|3"
# (Their jobs of the earlier sections come from their report files.)
owners_jobs=$(report_as_owner -S now-1days -X -P -n -o JobID 2>> $VNFS_OUT/report-db.err)
echo "vnfs-report --db -S now-1days as $VNFS_TEST_USER: $(echo $owners_jobs)"
check "vnfs-report --db, as job 700's owner: their job 700 listed" grep -qx 700 <<< "$owners_jobs"
check "vnfs-report --db, as job 700's owner: root's job 701 is not theirs to see" \
	bash -c "! grep -qx 701 <<< '$owners_jobs'"
check_eq "root's job 701 is in the database" "$(sql vnfs_admin "SELECT count(*) FROM jobs WHERE job = '701'")" 1
# The outputs' counters are exported from the first collection on.
check "a collection ran at the 10 s interval" until_ok 300 collected_beyond 127.0.0.1:9716 0
check_eq "no PostgreSQL record dropped" \
	"$(curl -s http://127.0.0.1:9716/metrics | awk '$1 == "vnfs_helper_dropped_records_total{sink=\"postgresql\"}" { print $2 }')" 0
kill -TERM "$HELPER_PID"
wait "$HELPER_PID"
check_eq "helper exit status after SIGTERM, with PostgreSQL" $? 0
as_postgres "$PG_BIN/pg_ctl" -D $PG_DIR/data -m fast -w stop > /dev/null
cp $PG_DIR/server.log $VNFS_OUT/postgresql.log
guest_done
