#!/usr/bin/env bash
# demo.sh — what an administrator sees: a real Slurm cluster of one node with
# the vnfs plugin and helper, real NFS, a real Prometheus; jobs of two users
# with different tags, one streaming data, one metadata-heavy; then their
# end-of-step summaries, vnfs-report, and the metrics in Prometheus.
# Everything printed for the user also goes to $VNFS_OUT/demo.txt, which
# scripts/demo shows.  The checks make sure the demo shows real numbers.
source /vnfs/src/tests/guest/lib/guest.sh
source /vnfs/src/tests/guest/lib/slurm.sh

BUILD=${VNFS_BUILD:-/vnfs/src}
RUN=/run/vnfs-demo
SOCKET=$RUN/vnfs.sock
USER_NAME=${VNFS_TEST_USER:-vnfstest}
DEMO=$VNFS_OUT/demo.txt
MIB=1048576
: > "$DEMO"

show() { # show TITLE COMMAND...: run, print with a title, keep in demo.txt
	{ printf '\n$ %s\n' "$1"; "${@:2}" 2>&1; } | tee -a "$DEMO"
}

mkdir -p $RUN/reports
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

guest_start_nfs || exit 1
guest_mount_all_nfs || exit 1
NFS=$(nfs_mount_of 4.2)
mkdir -p "$NFS/alpha" "$NFS/beta" && chown "$USER_NAME" "$NFS/beta"

"$BUILD/vnfs-helper" --config $RUN/vnfs.conf > "$VNFS_OUT/helper.log" 2>&1 &
until_ok 60 grep -q 'ready:' "$VNFS_OUT/helper.log" || { fail "vnfs-helper did not start"; cat "$VNFS_OUT/helper.log"; exit 1; }
pass "vnfs-helper ready"

cat > $RUN/prometheus.yml <<PROM
global: { scrape_interval: 1s, evaluation_interval: 1s }
scrape_configs:
  - job_name: vnfs
    static_configs: [ { targets: ['127.0.0.1:9716'] } ]
PROM
prometheus --config.file=$RUN/prometheus.yml --storage.tsdb.path=$RUN/prometheus \
	--web.listen-address=127.0.0.1:9090 > "$VNFS_OUT/prometheus.log" 2>&1 &

SLURM_EXTRA_CONF=PrologFlags=contain
slurm_start v2 "optional $(slurm_plugin_path) socket=$SOCKET report_dir=$RUN/reports envs=SITE_ACCOUNT" || exit 1
cd /tmp || exit 1
export SITE_ACCOUNT=physics

# Job 1 (root): streams 64 MiB to NFS.  Job 2 (an ordinary user): a
# metadata-heavy step that creates, stats and deletes 300 small files.
show "PROJECT_NAME=alpha srun --vnfs-tags=PROJECT_NAME --vnfs-report=brief dd if=/dev/zero of=$NFS/alpha/data bs=1M count=64 conv=fsync" \
	env PROJECT_NAME=alpha srun -J stream --vnfs-tags=PROJECT_NAME --vnfs-report=brief \
	dd if=/dev/zero of="$NFS/alpha/data" bs=1M count=64 conv=fsync status=none
small_files='for i in $(seq 300); do echo x > f$i; done; ls -l > /dev/null; for i in $(seq 300); do stat f$i > /dev/null; done; rm -f f*'
show "srun --vnfs-tags=PROJECT_NAME=beta,EXPERIMENT=untar --vnfs-report=full sh -c '<create, stat, delete 300 files>'   (as $USER_NAME)" \
	as_user "$USER_NAME" srun -J metadata --chdir="$NFS/beta" --vnfs-tags=PROJECT_NAME=beta,EXPERIMENT=untar \
	--vnfs-report=full sh -c "$small_files"

# The epilog tells the helper each job finished: wait for both jobs' report
# files and their finished rows in the history.
finished_rows() { sqlite3 $RUN/history.db "SELECT count(DISTINCT job_id) FROM steps WHERE finished = 1 AND job_id IN (1, 2)"; }
both_finished() { test -s "$RUN/reports/1/$(hostname).json" -a -s "$RUN/reports/2/$(hostname).json" && [ "$(finished_rows)" = 2 ]; }
check "both jobs finished: their report files and history rows" until_ok 60 both_finished
show "vnfs-report -S now-1hours" "$BUILD/vnfs-report" --config $RUN/vnfs.conf -S now-1hours
show "vnfs-report -l -j 2" "$BUILD/vnfs-report" --config $RUN/vnfs.conf -l -j 2
written=$("$BUILD/vnfs-report" --config $RUN/vnfs.conf -j 1 -X -n -P -o WriteBytes)
check_eq "job 1 wrote exactly 64 MiB" "$written" $((64 * MIB))
# The brief line counts as the report's columns do.
brief=$(grep -m1 '^vnfs: job 1 step 0:' "$DEMO")
check_eq "job 1's brief line and vnfs-report agree on its metadata calls" \
	"$(sed -n 's/.*, \([0-9]*\) metadata calls,.*/\1/p' <<< "$brief")" \
	"$("$BUILD/vnfs-report" --config $RUN/vnfs.conf -j 1.0 -n -P -o MetaOps)"
check_eq "job 1's brief line and vnfs-report agree on its write calls" \
	"$(sed -n 's/.*write [0-9]* bytes (\([0-9]*\) calls).*/\1/p' <<< "$brief")" \
	"$("$BUILD/vnfs-report" --config $RUN/vnfs.conf -j 1.0 -n -P -o WriteOps)"

query='sum by (job_id, user, tag_project_name) (vnfs_write_bytes_total) > 0'
until_ok 20 bash -c "curl -s 'http://127.0.0.1:9090/api/v1/query' --data-urlencode 'query=$query' | jq -e '.data.result | length >= 1' > /dev/null"
show "Prometheus: $query" bash -c "curl -s http://127.0.0.1:9090/api/v1/query --data-urlencode 'query=$query' | jq -r '.data.result[] | \"\(.metric.job_id)  \(.metric.user)  \(.metric.tag_project_name)  \(.value[1]) bytes\"'"
show "curl -s 127.0.0.1:9716/metrics | grep '^vnfs_helper_attach_method' | head -5" \
	bash -c "curl -s 127.0.0.1:9716/metrics | grep '^vnfs_helper_attach_method' | head -5"

# What the demo leaves on the host to look at: the history (a consistent
# copy, in rollback-journal mode so that it needs no -wal or -shm file),
# the report files and a /metrics snapshot, made here, read back with no
# helper, then copied to $VNFS_OUT/data, which scripts/demo names with the
# commands to try on them.
DATA=$RUN/data
mkdir -p "$DATA"
check "the history copied" sqlite3 $RUN/history.db ".backup '$DATA/history.db'"
check "... in rollback-journal mode" bash -c "[ \"\$(sqlite3 '$DATA/history.db' 'PRAGMA journal_mode=DELETE')\" = delete ]"
check "the report files copied" cp -r $RUN/reports "$DATA/reports"
check "a /metrics snapshot" bash -c "curl -sf 127.0.0.1:9716/metrics > '$DATA/metrics.txt'"
check_eq "the copies answer vnfs-report with no helper: job 1's 64 MiB" \
	"$("$BUILD/vnfs-report" --socket /nonexistent/vnfs.sock --database "$DATA/history.db" \
		--report-dir "$DATA/reports" -j 1 -X -n -P -o WriteBytes)" $((64 * MIB))
check "the copies are on the host" cp -r "$DATA" "$VNFS_OUT/data"
chmod -R a+rX "$VNFS_OUT/data"
slurm_stop
guest_done
