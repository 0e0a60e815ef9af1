#!/usr/bin/env bash
# dashboards.sh — the Grafana dashboards against real data: vnfs-helper
# ($VNFS_BUILD) exports the counters of NFS workloads run in registered
# cgroups, a real Prometheus scrapes it every second, and every query of
# every panel of contrib/grafana/*.json runs through Prometheus's HTTP API
# with the template variables filled in the way Grafana fills them.  Each
# query must return series; the totals panels must show exactly what the
# workloads did (bytes written per job, per process, errors, jobs at once),
# and the server view's RPC panels at least the bytes that had to cross the
# wire (WRITE and READ payloads, the unregistered shell's WRITEs).
#
# The jobs (NFS v4.2):
#   2001 root      writer: 8 x 1 MiB writes + fsync, creates, renames, ...
#   2002 vnfstest  6 MiB or more written 1 MiB a round by nfs-workload  } in the
#   2003 vnfstest  4 MiB or more written 1 MiB a round by "checkpointer" } same rounds
#   2004 vnfstest  reader: 4 MiB in 4 KiB reads, one open of a missing file
# with quiet gaps between the phases longer than the rate window, and two
# Kubernetes pods (root's, registered by vnfs-register) beside 2002 and 2003:
#   ml/resnet-7f9c    container trainer: 2 x 1 MiB writes + fsync, paced
#   data/etl-5d8b     container loader:  3 x 1 MiB writes + fsync, paced
source /vnfs/src/tests/guest/lib/guest.sh

BUILD=${VNFS_BUILD:-/vnfs/src}
HELPER=$BUILD/vnfs-helper
SEND=$BUILD/tests/tools/vnfs-send
REGISTER=$BUILD/vnfs-register
WORKLOAD=$BUILD/tests/tools/nfs-workload
RUN=/run/vnfs-dashboards
SOCKET=$RUN/vnfs.sock
CGROUP=${VNFS_CGROUP2_MOUNT:-/sys/fs/cgroup}/vnfs-dashboards
PROMETHEUS=http://127.0.0.1:9090
MIB=1048576
# What Grafana puts in $__rate_interval for a 1 s scrape interval
# (4 x scrape interval), and the gap between phases that keeps one phase's
# I/O out of the next phase's rate windows.
RATE_INTERVAL=4s
QUIET=8

mkdir -p $RUN /tmp/prometheus
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
tag_labels = PROJECT_NAME
CONF
cat > $RUN/prometheus.yml <<CONF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: vnfs
    static_configs:
      - targets: ['127.0.0.1:9716']
CONF

# ---------------------------------------------------------------- services
# Prometheus takes long to start under emulation: it starts first and comes
# up while the helper loads its probes and the NFS server starts.
mark dashboards_start
prometheus --config.file=$RUN/prometheus.yml --storage.tsdb.path=/tmp/prometheus \
	--web.listen-address=127.0.0.1:9090 --log.level=warn > "$VNFS_OUT/prometheus.log" 2>&1 &
PROMETHEUS_PID=$!
"$HELPER" --config $RUN/vnfs.conf > "$VNFS_OUT/helper.log" 2>&1 &
HELPER_PID=$!
if ! until_ok 150 grep -q 'ready:' "$VNFS_OUT/helper.log"; then
	fail "vnfs-helper ready within 150 s"
	tail -n 30 "$VNFS_OUT/helper.log"
	guest_done
	exit 1
fi
pass "vnfs-helper ready"

guest_start_nfs
mount_dir=$(nfs_mount_of 4.2)
guest_mount_nfs 4.2 "$mount_dir"
work=$mount_dir/dashboards
mkdir -p "$work/writer" "$work/reader" && chmod 1777 "$work" "$work/writer" "$work/reader"
# The reader's file is written, then evicted from the cache, by an
# unregistered shell: it counts for no job.
"$WORKLOAD" write "$work/reader/data" 4 > /dev/null
chmod 0644 "$work/reader/data"
guest_drop_caches
cp "$WORKLOAD" /tmp/checkpointer
# The containers' programs have names of their own, so that the process
# panels' nfs-workload rows stay job 2001's and 2002's alone.
cp "$WORKLOAD" /tmp/trainer
cp "$WORKLOAD" /tmp/loader
mark nfs_up

if ! until_ok 90 curl -sf $PROMETHEUS/-/ready; then
	fail "Prometheus ready within 90 s"
	tail -n 30 "$VNFS_OUT/prometheus.log"
	guest_done
	exit 1
fi
pass "Prometheus ready"
check "Prometheus scrapes the helper" until_ok 30 bash -c \
	"curl -sfG $PROMETHEUS/api/v1/query --data-urlencode 'query=up{job=\"vnfs\"} == 1' | jq -e '.data.result | length == 1'"
mark services_up

# ----------------------------------------------------------------- the jobs
promql() { # promql QUERY [TIME]: the instant query's JSON
	curl -sfG "$PROMETHEUS/api/v1/query" --data-urlencode "query=$1" ${2:+--data-urlencode "time=$2"}
}
send() { "$SEND" "$SOCKET" "$1"; }
register() { # register JOB UID TAG
	mkdir -p "$CGROUP/job$1" &&
		send "{\"v\":1,\"type\":\"register\",\"job\":$1,\"step\":0,\"uid\":$2,\"cgroup_path\":\"$CGROUP/job$1\",\"tags\":{\"PROJECT_NAME\":\"$3\"}}" |
		grep -q '"ok":true'
}
in_job() { # in_job JOB USER COMMAND...: COMMAND as USER inside the job's cgroup
	local job=$1 user=$2
	shift 2
	bash -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' _ "$CGROUP/job$job" \
		setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --init-groups -- "$@"
}
# register_container POD CONTAINER: a Kubernetes container in the cgroup
# $CGROUP/pod-CONTAINER, registered as a runtime's hook would.
register_container() {
	mkdir -p "$CGROUP/pod-$2" &&
		"$REGISTER" --socket $SOCKET --source kubernetes --job "$1" --part "$2" \
			--cgroup "$CGROUP/pod-$2" > /dev/null
}
in_container() { # in_container CONTAINER COMMAND...: COMMAND as root inside the container's cgroup
	local container=$1
	shift
	bash -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' _ "$CGROUP/pod-$container" "$@"
}
user=$VNFS_TEST_USER
user_id=$(id -u "$user")

check "register job 2001 (root)" register 2001 0 climate
check "register job 2002 ($user)" register 2002 "$user_id" genome
check "register job 2003 ($user)" register 2003 "$user_id" genome
check "register job 2004 ($user)" register 2004 "$user_id" genome
check "register pod ml/resnet-7f9c's container trainer" register_container ml/resnet-7f9c trainer
check "register pod data/etl-5d8b's container loader" register_container data/etl-5d8b loader
sleep 2
start_time=$(date +%s)

check "job 2001: writer workload" in_job 2001 root "$WORKLOAD" writer "$work/writer"
sleep $QUIET
# Jobs 2002 and 2003 write 1 MiB at a time, in rounds: a round's writes go
# out together and the next round waits until Prometheus has scraped them.
# A percentile panel and "jobs at once" need rate() to see both jobs grow
# within one window; a round in which it did is what ends the writing (at
# least 6 MiB for 2002 and 4 MiB for 2003), so that data is produced, not
# hoped for from a timing window on a loaded machine.
mkfifo $RUN/pace2002 $RUN/pace2003 $RUN/pace-trainer $RUN/pace-loader
# The pods' containers write in the same rounds, 1 MiB each until they have
# written 2 and 3 MiB: every write of theirs too waits until Prometheus has
# scraped the one before, so that rate() and the p99 latency panel see
# their counters grow across scrapes, whatever the machine's load.  They
# are root's, as job 2001 is, but start a quiet gap after it (see
# vnfs-users-jobs below).
in_container trainer /tmp/trainer paced-write "$work/pod-trainer" < $RUN/pace-trainer > /dev/null &
trainer=$!
in_container loader /tmp/loader paced-write "$work/pod-loader" < $RUN/pace-loader > /dev/null &
loader=$!
in_job 2002 "$user" "$WORKLOAD" paced-write "$work/job2002" < $RUN/pace2002 > /dev/null &
first=$!
in_job 2003 "$user" /tmp/checkpointer paced-write "$work/job2003" < $RUN/pace2003 > /dev/null &
second=$!
exec 5> $RUN/pace2002 6> $RUN/pace2003 7> $RUN/pace-trainer 8> $RUN/pace-loader
written2002=0 written2003=0 written_trainer=0 written_loader=0 both_grew=no
# scraped_totals MIB2002 MIB2003 MIB_TRAINER MIB_LOADER: Prometheus has all four totals
scraped_totals() {
	promql "sum(vnfs_write_bytes_total{job_id=\"2002\"}) == $(($1 * MIB)) and on() sum(vnfs_write_bytes_total{job_id=\"2003\"}) == $(($2 * MIB)) and on() (sum(vnfs_write_bytes_total{container=\"trainer\"}) or on() vector(0)) == $(($3 * MIB)) and on() (sum(vnfs_write_bytes_total{container=\"loader\"}) or on() vector(0)) == $(($4 * MIB))" |
		jq -e '.data.result | length == 1'
}
# both_growing SECONDS: rate() over the last SECONDS sees both jobs' writes
# grow.  The window reaches back to the previous round's writes: the scrape
# that showed them is in it, and so is the one that shows this round's, so
# it holds two samples of each job with a rise between them however far
# apart a loaded machine's scrapes come (a fixed 3 s window once saw none
# in 30 rounds, beside three other busy processes).
both_growing() {
	promql "count(sum by (job_id) (rate(vnfs_operation_duration_seconds_count{job_id=~\"2002|2003\", op=\"write\"}[${1}s])) > 0) == 2" |
		jq -e '.data.result | length == 1'
}
previous_round_at=
for round in $(seq 1 30); do
	[ $written2002 -ge 6 ] && [ $written2003 -ge 4 ] && [ $both_grew = yes ] && break
	round_at=$(date +%s)
	echo >&5 && written2002=$((written2002 + 1))
	if [ $written2003 -lt 4 ] || [ $both_grew = no ]; then
		echo >&6 && written2003=$((written2003 + 1))
	fi
	[ $written_trainer -lt 2 ] && echo >&7 && written_trainer=$((written_trainer + 1))
	[ $written_loader -lt 3 ] && echo >&8 && written_loader=$((written_loader + 1))
	until_ok 60 scraped_totals $written2002 $written2003 $written_trainer $written_loader ||
		{ fail "round $round: Prometheus scraped $written2002, $written2003, $written_trainer and $written_loader MiB of job 2002, job 2003, trainer and loader within 60 s"
		promql 'sum by (job_id, container) (vnfs_write_bytes_total{job_id=~"2002|2003"} or vnfs_write_bytes_total{container=~"trainer|loader"})' | jq -M -c '.data.result'
		break; }
	if [ -n "$previous_round_at" ]; then
		both_growing $(( $(date +%s) - previous_round_at + 1 )) && both_grew=yes
	fi
	previous_round_at=$round_at
done
exec 5>&- 6>&- 7>&- 8>&-
echo "paced writers: job 2002 wrote $written2002 MiB, job 2003 $written2003 MiB"
check_eq "rate() saw jobs 2002 and 2003 write within one window" $both_grew yes
wait $first
check_eq "job 2002: paced writer (at the same time as 2003)" $? 0
wait $second
check_eq "job 2003: paced writer 'checkpointer' (at the same time as 2002)" $? 0
wait $trainer
check_eq "pod ml/resnet-7f9c: container trainer wrote 2 MiB (beside 2002 and 2003)" $? 0
wait $loader
check_eq "pod data/etl-5d8b: container loader wrote 3 MiB (beside 2002 and 2003)" $? 0
sleep $QUIET
check "job 2004: reader workload" in_job 2004 "$user" "$WORKLOAD" reader "$work/reader/data" "$work/reader"
mark workloads_done

# Prometheus has the final counts once the last job's bytes are scraped.
check "Prometheus has job 2004's 4 MiB read" until_ok 30 bash -c \
	"curl -sfG $PROMETHEUS/api/v1/query --data-urlencode 'query=sum(vnfs_read_bytes_total{job_id=\"2004\"}) == $((4 * MIB))' | jq -e '.data.result | length == 1'"
sleep $QUIET
end_time=$(date +%s)
range_seconds=$((end_time - start_time + 5))
# How many scrapes worked (diagnosis: a scrape slower than its 1 s timeout
# fails, and Prometheus marks every series stale until the next one).
echo "scrapes that worked over the run: $(promql "sum_over_time(up{job=\"vnfs\"}[${range_seconds}s])" "$end_time" |
	jq -r '.data.result[0].value[1]') of $(promql "count_over_time(up{job=\"vnfs\"}[${range_seconds}s])" "$end_time" |
	jq -r '.data.result[0].value[1]')"
mark scraped
echo "queries evaluated over [$start_time, $end_time], \$__range=${range_seconds}s"

# --------------------------------------------------------------- the queries
# Processes are expensive under emulation, so the queries go out in one curl
# run and their answers are read by one jq run: a few processes, not one per
# query.

# fill TEMPLATE SCENARIO: the query with its variables replaced the way
# Grafana replaces them; SCENARIO is "name=value ..." over the defaults.
# Longest names first, so that $job_a is never taken for $job.
variable_order="min_jobs namespace container instance job_id job_a job_b user comm top pod op"
fill() {
	local query=$1 name assignment
	declare -A values=([instance]='.*' [user]='.*' [job_id]='.*' [comm]='.*' [op]='.*'
		[top]=10 [min_jobs]=2 [job_a]=2002 [job_b]=2003
		[namespace]='.*' [pod]='.*' [container]='.*')
	for assignment in $2; do
		values[${assignment%%=*}]=${assignment#*=}
	done
	query=${query//'$__rate_interval'/$RATE_INTERVAL}
	query=${query//'$__range'/${range_seconds}s}
	query=${query//'$__interval'/1s}
	for name in $variable_order; do
		query=${query//"\${$name}"/${values[$name]}}
		query=${query//"\$$name"/${values[$name]}}
	done
	filled=$query
}

declare -A scenarios=(
	[vnfs-job-io]="job_id=2001;job_id=2004;job_id=.+"
	[vnfs-writes-by-process]=";user=$user"
	[vnfs-writes-by-job]=";user=$user"
	[vnfs-users-jobs]=";min_jobs=1"
	[vnfs-compare-jobs]="job_a=2002 job_b=2003"
	[vnfs-operations]="job_id=2004;job_id=2001;job_id=2002"
	[vnfs-kubernetes]=";namespace=ml;pod=data/etl-5d8b;container=trainer;top=1"
	# Job 2004 read (READ RPCs, the cache panels) and failed an open (an
	# RPC error); All has them too.  Not 2001-2003 alone: they read
	# nothing, and the read panels would have no series.
	[vnfs-server-view]="job_id=2004;job_id=.+"
)
dashboards=("$VNFS_SRC"/contrib/grafana/*.json)
check "eight dashboards to run (found ${#dashboards[@]})" test ${#dashboards[@]} -ge 8
for file in "${dashboards[@]}"; do
	uid=$(jq -r .uid "$file")
	[ -n "${scenarios[$uid]+set}" ] || fail "dashboard $uid ($file) has no scenario in this suite"
done

# Every panel query of every dashboard, once per scenario of its dashboard.
keys=() instants=() queries=()
declare -A index_of # "uid|scenario|panel title|refId" -> position in keys
while IFS=$'\t' read -r uid panel ref instant template; do
	IFS=';' read -r -a list <<< "${scenarios[$uid]-}"
	[ ${#list[@]} -gt 0 ] || list=("")
	for scenario in "${list[@]}"; do
		fill "$template" "$scenario"
		index_of["$uid|$scenario|$panel|$ref"]=${#keys[@]}
		keys+=("$uid [${scenario:-defaults}] '$panel' $ref")
		instants+=("$instant")
		queries+=("$filled")
	done
done < <(jq -r '.uid as $uid | .panels[] | select(.type != "row") | .title as $title |
	.targets[] | [$uid, $title, .refId, (.instant | tostring), .expr] | @tsv' "${dashboards[@]}")
check "the dashboards have queries (${#queries[@]} with their scenarios)" test ${#queries[@]} -ge 60

# Instant queries at end_time, like a table or stat; range queries over the
# run at 1 s steps, like a graph.
mapfile -t encoded < <(printf '%s\n' "${queries[@]}" | jq -R -r @uri)
{
	echo 'silent'
	echo 'write-out = "\n"'
	for i in "${!queries[@]}"; do
		if [ "${instants[$i]}" = true ]; then
			echo "url = \"$PROMETHEUS/api/v1/query?query=${encoded[$i]}&time=$end_time\""
		else
			echo "url = \"$PROMETHEUS/api/v1/query_range?query=${encoded[$i]}&start=$start_time&end=$end_time&step=1\""
		fi
	done
} > $RUN/curl.conf
curl -K $RUN/curl.conf > $RUN/responses.jsonl
cp $RUN/responses.jsonl $RUN/curl.conf "$VNFS_OUT/"
mapfile -t responses < $RUN/responses.jsonl
check_eq "Prometheus answered every query" "${#responses[@]}" "${#queries[@]}"
mapfile -t counts < <(jq -R -r '(fromjson? // {status: "unparsable"}) |
	if .status == "success" then .data.result | length else "error: \(.error // .status)" end' $RUN/responses.jsonl)
for i in "${!queries[@]}"; do
	count=${counts[$i]-no answer}
	if [[ $count =~ ^[0-9]+$ ]] && [ "$count" -gt 0 ]; then
		pass "${keys[$i]}: $count series"
	elif [[ $count =~ ^[0-9]+$ ]]; then
		fail "${keys[$i]}: no series for ${queries[$i]}"
	else
		fail "${keys[$i]}: Prometheus: $count: ${queries[$i]}"
	fi
done
mark queries_done

# expect UID SCENARIO PANEL REF SELECTOR VALUE: the one series of that panel
# query whose labels match SELECTOR ("job_id=2001 op=write", or "" for a
# single series) has VALUE (at end_time; for a graph, at its last point).
# expect_series UID SCENARIO PANEL REF COUNT: the query returns COUNT series.
# Both only record; check_expectations evaluates them all in one jq run.
# Fields are separated by the unit separator: a tab is IFS white space, and
# read would merge the empty selector of a single series with its neighbours.
US=$'\x1f'
expectations=()
expect() {
	local position=${index_of["$1|$2|$3|$4"]-none}
	expectations+=("$position$US$5$US$6$US$1 [$2] '$3' $4 {$5}")
}
expect_series() {
	local position=${index_of["$1|$2|$3|$4"]-none}
	expectations+=("$position$US#series$US$5$US$1 [$2] '$3' $4: series")
}
check_expectations() {
	local line actual expected description i=0
	mapfile -t actuals < <(printf '%s\n' "${expectations[@]}" |
		jq -R -r --slurpfile answers <(jq -R 'fromjson? // null' $RUN/responses.jsonl) '
		split("\u001f") as [$position, $selector, $expected, $description] |
		if $position == "none" then "no such panel query"
		else ($answers[$position | tonumber].data.result // []) as $result |
			if $selector == "#series" then $result | length
			else ($selector | split(" ") | map(select(length > 0) | split("=") |
				{key: .[0], value: (.[1:] | join("="))})) as $want |
				[$result[] | select(.metric as $labels | $want | all(.value == $labels[.key])) |
					(.value // .values[-1])[1] | tonumber] |
				if length == 1 then .[0] else "\(length) series match" end
			end
		end')
	for line in "${expectations[@]}"; do
		IFS=$US read -r _ _ expected description <<< "$line"
		check_eq "$description" "${actuals[$i]-}" "$expected"
		i=$((i + 1))
	done
}
# answer UID SCENARIO PANEL REF: the raw answer of a panel query.
answer() {
	local position=${index_of["$1|$2|$3|$4"]-}
	[ -n "$position" ] && echo "${responses[$position]}"
}

# ---------------------------------------------------- what the panels show
expect vnfs-job-io job_id=2001 "Bytes written" A "" $((8 * MIB))
expect vnfs-job-io job_id=2001 "Bytes read" A "" 0
expect vnfs-job-io job_id=2001 "Failed operations" A "" 0
expect vnfs-job-io job_id=2001 "Steps" A "job_id=2001 step_id=0 user=root" $((8 * MIB))
expect vnfs-job-io job_id=2001 "Mounts" A "job_id=2001 mount=$mount_dir" $((8 * MIB))
expect vnfs-job-io job_id=2004 "Bytes read" A "" $((4 * MIB))
expect vnfs-job-io job_id=2004 "Bytes written" A "" 0
# Every error the helper counted for the job (its own QUERY answer): the
# missing file's failed open, and whatever else the kernel reported.
reader_errors=$(send '{"v":1,"type":"query","job":2004}' | jq '[.job.steps[].operations[].errors] | add')
check_ge "job 2004: the helper counted the missing file's error" "${reader_errors:-0}" 1
expect vnfs-job-io job_id=2004 "Failed operations" A "" "$reader_errors"
expect vnfs-job-io job_id=2004 "Steps" B "job_id=2004 step_id=0 user=$user" $((4 * MIB))
# All is job_id=~".+" (generate-dashboards.py): every Slurm job, and not
# the pods, whose series have no job_id (they are vnfs-kubernetes's).
expect vnfs-job-io "job_id=.+" "Bytes written" A "" $(((8 + written2002 + written2003) * MIB))
expect vnfs-job-io "job_id=.+" "Bytes read" A "" $((4 * MIB))
expect_series vnfs-job-io "job_id=.+" "Steps" A 4

expect vnfs-writes-by-process "" "Bytes written by process" A "comm=nfs-workload" $(((8 + written2002) * MIB))
expect vnfs-writes-by-process "" "Bytes written by process" A "comm=checkpointer" $((written2003 * MIB))
expect vnfs-writes-by-process "" "Bytes written by process" B "comm=checkpointer" $written2003
expect vnfs-writes-by-process "" "Bytes written by process and job" A "job_id=2003 comm=checkpointer" $((written2003 * MIB))
expect vnfs-writes-by-process "user=$user" "Bytes written by process" A "comm=nfs-workload" $((written2002 * MIB))

expect vnfs-writes-by-job "" "Bytes written per job" A "job_id=2001 user=root" $((8 * MIB))
expect vnfs-writes-by-job "" "Bytes written per job" A "job_id=2002 user=$user" $((written2002 * MIB))
expect vnfs-writes-by-job "" "Bytes written per job" A "job_id=2003 user=$user" $((written2003 * MIB))
expect vnfs-writes-by-job "" "Bytes written per job" A "job_id=2004 user=$user" 0
expect vnfs-writes-by-job "" "Bytes written per job" B "job_id=2001" 8
expect vnfs-writes-by-job "" "Bytes written per job" C "job_id=2001" 1
expect vnfs-writes-by-job "" "Bytes written per job" B "job_id=2002" $written2002
expect_series vnfs-writes-by-job "user=$user" "Bytes written per job" A 3

# The pods' series have no job_id: this dashboard sees all of root's pods
# as one job (job_id ""), and they ran long after job 2001, so root still
# had at most one job at once.
expect vnfs-users-jobs "" "Most jobs at once, per user" A "user=$user" 2
expect_series vnfs-users-jobs "" "Most jobs at once, per user" A 1
expect vnfs-users-jobs "min_jobs=1" "Most jobs at once, per user" A "user=root" 1
expect vnfs-users-jobs "" "Users with at least \$min_jobs jobs doing I/O now" A "" 0
expect vnfs-users-jobs "" "Jobs of each user" A "user=$user job_id=2002" $((written2002 * MIB))

expect vnfs-compare-jobs "job_a=2002 job_b=2003" "Job A: bytes written" A "" $((written2002 * MIB))
expect vnfs-compare-jobs "job_a=2002 job_b=2003" "Job B: bytes written" A "" $((written2003 * MIB))
expect vnfs-compare-jobs "job_a=2002 job_b=2003" "Operations side by side" A "job_id=2002 op=write" $written2002
expect vnfs-compare-jobs "job_a=2002 job_b=2003" "Operations side by side" A "job_id=2003 op=write" $written2003
expect vnfs-compare-jobs "job_a=2002 job_b=2003" "Operations side by side" B "job_id=2003 op=write" 0

# 1,024 reads of 4 KiB and the one at end of file; NFSv4 opens the missing
# name atomically, so its ENOENT is an open error.
expect vnfs-operations job_id=2004 "Operations in the time range" A "op=read" 1025
expect vnfs-operations job_id=2004 "Operations in the time range" B "op=open" 1
expect vnfs-operations job_id=2004 "Operations in the time range" B "op=read" 0
expect vnfs-operations job_id=2001 "Operations in the time range" A "op=write" 8
expect vnfs-operations job_id=2001 "Operations in the time range" A "op=fsync" 1
expect vnfs-operations job_id=2001 "Operations in the time range" A "op=rename" 3
expect vnfs-operations job_id=2001 "Operations in the time range" A "op=unlink" 10

# The pods, by namespace, pod and container; Slurm's jobs (no pod label)
# are in none of these panels.
k8s=vnfs-kubernetes trainer_row="pod=ml/resnet-7f9c container=trainer user=root"
loader_row="pod=data/etl-5d8b container=loader user=root"
expect $k8s "" "Bytes written" A "" $((5 * MIB))
expect $k8s "" "Bytes read" A "" 0
expect $k8s "" "Failed operations" A "" 0
expect $k8s "" "Namespaces" A "namespace=ml" $((2 * MIB))
expect $k8s "" "Namespaces" A "namespace=data" $((3 * MIB))
expect $k8s "" "Namespaces" B "namespace=data" 0
expect $k8s "" "Namespaces" D "namespace=ml" 0
expect_series $k8s "" "Namespaces" A 2
expect $k8s "" "Pods" A "pod=ml/resnet-7f9c" $((2 * MIB))
expect $k8s "" "Pods" A "pod=data/etl-5d8b" $((3 * MIB))
expect $k8s "" "Pods" D "pod=data/etl-5d8b" 0
expect_series $k8s "" "Pods" A 2
expect $k8s "" "Containers" A "$trainer_row" $((2 * MIB))
expect $k8s "" "Containers" A "$loader_row" $((3 * MIB))
expect $k8s "" "Containers" B "$loader_row" 0
expect_series $k8s "" "Containers" A 2
expect $k8s "" "Operations per pod" A "pod=ml/resnet-7f9c op=write" 2
expect $k8s "" "Operations per pod" A "pod=ml/resnet-7f9c op=fsync" 1
expect $k8s "" "Operations per pod" A "pod=data/etl-5d8b op=write" 3
expect $k8s "" "Operations per pod" A "pod=data/etl-5d8b op=fsync" 1
expect $k8s "" "Operations per pod" B "pod=data/etl-5d8b op=write" 0
expect $k8s "" "Top \$top pods by bytes" A "pod=data/etl-5d8b" $((3 * MIB))
expect $k8s "" "Top \$top pods by bytes" A "pod=ml/resnet-7f9c" $((2 * MIB))
expect_series $k8s top=1 "Top \$top pods by bytes" A 1
expect $k8s top=1 "Top \$top pods by bytes" A "pod=data/etl-5d8b" $((3 * MIB))
expect $k8s namespace=ml "Bytes written" A "" $((2 * MIB))
expect $k8s namespace=ml "Pods" A "pod=ml/resnet-7f9c" $((2 * MIB))
expect_series $k8s namespace=ml "Pods" A 1
expect $k8s pod=data/etl-5d8b "Bytes written" A "" $((3 * MIB))
expect $k8s pod=data/etl-5d8b "Containers" A "$loader_row" $((3 * MIB))
expect_series $k8s pod=data/etl-5d8b "Containers" A 1
expect $k8s container=trainer "Bytes written" A "" $((2 * MIB))
expect $k8s container=trainer "Namespaces" A "namespace=ml" $((2 * MIB))
expect_series $k8s container=trainer "Namespaces" A 1
check_expectations
# Percentiles come from rate(): only a job whose counters grew across
# scrapes has them (2002 did, by the rounds above; 2001 was done within one
# interval).
check "vnfs-operations: job 2002's p99 write latency is a finite positive duration" jq -e \
	'[.data.result[] | select(.metric.op == "write") | .values[][1] | select(. != "NaN") | tonumber] |
	length > 0 and all(. > 0 and . < 20)' \
	<<< "$(answer vnfs-operations job_id=2002 "Latency percentiles" C)"
check "vnfs-operations: the helper reports an attach method for every operation" jq -e \
	'[.data.result[].metric.op] | unique | length >= 20' \
	<<< "$(answer vnfs-operations job_id=2001 "Probe attach method" A)"
# The pods' writes were a scrape apart (the rounds), so rate() saw each
# container's grow.
for container in trainer loader; do
	check "vnfs-kubernetes: container $container's p99 write latency is a finite positive duration" jq -e \
		--arg container $container '[.data.result[] | select(.metric.container == $container) |
		.values[][1] | select(. != "NaN") | tonumber] | length > 0 and all(. > 0 and . < 20)' \
		<<< "$(answer vnfs-kubernetes "" "Write latency p99 per container" A)"
done

# The server view (vnfs-server-view): RPC payloads are at least what the
# jobs moved (headers come on top; a page written twice is sent twice), so
# these are lower bounds, from the totals (last_over_time), not from rate():
# the paced writers fsync only at the end, so their WRITE series may be born
# with their final values and show no rate.
# at_least UID SCENARIO PANEL REF SELECTOR MIN: the series of that instant
# query whose labels match SELECTOR ("procedure=READ|READ_PLUS owner=...":
# each value a regular expression the whole label must match) are at least
# one, and their sum is at least MIN.
at_least() {
	jq -e --arg selector "$5" --argjson min "$6" '
		($selector | split(" ") | map(select(length > 0) | split("=") |
			{key: .[0], value: ("^(" + (.[1:] | join("=")) + ")$")})) as $want |
		[.data.result[] | select(.metric as $labels | $want | all(.value as $re | ($labels[.key] // "") | test($re))) |
			.value[1] | tonumber] | length >= 1 and add >= $min' <<< "$(answer "$1" "$2" "$3" "$4")"
}
server=vnfs-server-view
# An NFSv4.2 client reads with READ_PLUS where the server has it.
check "$server: job 2004's READ replies carried at least its 4 MiB" \
	at_least $server job_id=2004 "Procedures in the time range" C "procedure=READ|READ_PLUS" $((4 * MIB))
check "$server: job 2004 made at least 4 READ RPCs (rsize is at most 1 MiB)" \
	at_least $server job_id=2004 "Procedures in the time range" A "procedure=READ|READ_PLUS" 4
# The file was written and fsynced by an unregistered shell, then evicted
# from the cache: every byte job 2004 read came over the wire, once.
check "$server: job 2004 read from the server 1 to 1.1 byte per byte read (a cold cache)" jq -e \
	'.data.result | length == 1 and (.[0].value[1] | tonumber) >= 1 and (.[0].value[1] | tonumber) < 1.1' \
	<<< "$(answer $server job_id=2004 "Read from the server per byte read" A)"
# The missing file's OPEN ends with NFS4ERR_NOENT (tk_status -ENOENT).
check "$server: job 2004's failed open is an RPC error of kind noent" jq -e \
	'[.data.result[] | select(.metric.kind == "noent")] | length >= 1' \
	<<< "$(answer $server job_id=2004 "Failed RPCs by kind" A)"
check "$server: the jobs' WRITE RPCs sent at least the $((8 + written2002 + written2003)) MiB they wrote" \
	at_least $server "job_id=.+" "Procedures in the time range" B "procedure=WRITE" $(((8 + written2002 + written2003) * MIB))
check "$server: job 2004 made no WRITE RPC" jq -e \
	'[.data.result[] | select(.metric.procedure == "WRITE")] | length == 0' \
	<<< "$(answer $server job_id=2004 "Procedures in the time range" B)"
# The node's RPCs of no job: the reader's 4 MiB file, written by an
# unregistered shell, went out as unattributed WRITEs on the mount.
check "$server: the unregistered shell's WRITE RPCs are the node's, unattributed, at least 4 MiB" \
	at_least $server job_id=2004 "RPCs of no job in the time range" B \
	"owner=unattributed mount=$mount_dir procedure=WRITE" $((4 * MIB))
check "$server: the node's RPCs of no job have only the owners background and unattributed" jq -e \
	'[.data.result[].metric.owner] | unique - ["background", "unattributed"] | length == 0' \
	<<< "$(answer $server job_id=2004 "RPCs of no job in the time range" A)"
# Background RPCs (the state manager's) depend on the kernel and the lease
# time: shown, not required.
echo "background RPCs of the node: $(answer $server job_id=2004 "RPCs of no job in the time range" A |
	jq -r -c '[.data.result[] | select(.metric.owner == "background") | "\(.metric.mount) \(.metric.procedure)=\(.value[1])"]')"

# The Kubernetes dashboard's variables as Grafana gets their values:
# label_values(SELECTOR, LABEL) is LABEL's values among the series SELECTOR
# matches in the time range, and a variable's regex /.../ keeps each value's
# first capture group (values it does not match are left out).
variable_values() { # variable_values NAME SCENARIO: the values, sorted, one line
	local file=$VNFS_SRC/contrib/grafana/vnfs-kubernetes.json definition regex label
	definition=$(jq -r --arg name "$1" '.templating.list[] | select(.name == $name) | .definition' "$file")
	regex=$(jq -r --arg name "$1" '.templating.list[] | select(.name == $name) | .regex' "$file")
	[[ $definition =~ ^label_values\((.*),\ *([a-z_]+)\)$ ]] || { echo "not label_values: $definition"; return; }
	label=${BASH_REMATCH[2]}
	fill "${BASH_REMATCH[1]}" "$2"
	curl -sfG "$PROMETHEUS/api/v1/label/$label/values" --data-urlencode "match[]=$filled" \
		--data-urlencode "start=$start_time" --data-urlencode "end=$end_time" |
		jq -r --arg regex "$regex" '.data[] | if $regex == "" then . else
			($regex | ltrimstr("/") | rtrimstr("/")) as $re | match($re) | .captures[0].string // .string end' |
		sort -u | paste -s -d ' '
}
check_eq "vnfs-kubernetes: the namespace variable's values" "$(variable_values namespace "")" "data ml"
check_eq "vnfs-kubernetes: the pod variable's values in namespace ml" "$(variable_values pod namespace=ml)" \
	"ml/resnet-7f9c"
check_eq "vnfs-kubernetes: the container variable's values" "$(variable_values container "")" "loader trainer"
check_eq "vnfs-kubernetes: the container variable's values in pod data/etl-5d8b" \
	"$(variable_values container pod=data/etl-5d8b)" "loader"

kill -TERM "$HELPER_PID" "$PROMETHEUS_PID"
wait "$HELPER_PID"
check_eq "helper exit status after SIGTERM" $? 0
check "no sanitizer report in the helper log" bash -c "! grep -qE 'Sanitizer|runtime error' $VNFS_OUT/helper.log"
guest_done
