/*
 * test_postgresql.c — the PostgreSQL output against a real server that the
 * test starts itself: a throwaway cluster (initdb) in a temporary directory,
 * its unix socket there and no TCP at all (listen_addresses = ''), run as
 * the postgres user when the test runs as root (the server refuses root).
 * The port only names the socket file inside that private directory, so any
 * number is free.  No server is a failure, never a skip.
 *
 * Checked: two helpers (node-a, node-b) writing known records give exactly
 * those rows, once each, byte for byte, a batch written twice or an older
 * one after a newer changing nothing; the server stopped in the middle of a
 * run loses no record and duplicates none; a small spool drops what does
 * not fit, counted exactly, with one log line filling and one draining;
 * row-level security shows a user only their jobs and the admin role all;
 * a fresh database is migrated to the current version, a newer one refused.
 */
#include <errno.h>
#include <pthread.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>
#include <libpq-fe.h>
#include <sqlite3.h>

#include "helper/outputs/postgresql_spool.h"
#include "helper/outputs/sink.h"
#include "helper/outputs/sink_postgresql.h"
#include "lib/config.h"
#include "lib/history/postgresql_schema.h"
#include "lib/history/reader.h"
#include "lib/history/schema.h"
#include "lib/history/statement.h"
#include "lib/log.h"

#define PORT "5432"
#define WAIT_MS (300 * 1000) /* a busy machine: generous, and polled */

static char directory[64]; /* the cluster's, its socket's, the spools' */
static char command_prefix[64]; /* runs a server command as its owner */

/* ---- the server ------------------------------------------------------------ */

static int64_t now_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static void pause_ms(long ms)
{
	struct timespec pause = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&pause, NULL);
}

/* Runs a PostgreSQL program of PG_BINDIR as the cluster's owner. */
static int run_server_program(const char *arguments)
{
	char command[1024];

	snprintf(command, sizeof(command), "%s%s/%s >>%s/programs.log 2>&1", command_prefix,
		 PG_BINDIR, arguments, directory);
	int status = system(command);
	if (status != 0)
		fprintf(stderr, "FAILED (status %d): %s (see %s/programs.log)\n", status, command,
			directory);
	return status;
}

static void conninfo_of(char *out, size_t size, const char *database, const char *user)
{
	snprintf(out, size, "host=%s port=" PORT " dbname=%s user=%s connect_timeout=10",
		 directory, database, user);
}

/* The libpq URI of database for user, as vnfs-report --db takes it. */
static void locator_of(char *out, size_t size, const char *database, const char *user)
{
	snprintf(out, size, "postgresql:///%s?host=%s&port=" PORT "&user=%s", database, directory,
		 user);
}

/* Polls until the server answers (what pg_isready does), never a fixed
 * sleep: on a loaded machine a start may take long. */
static void wait_until_ready(void)
{
	char conninfo[256];
	int64_t deadline = now_ms() + WAIT_MS;

	conninfo_of(conninfo, sizeof(conninfo), "postgres", "postgres");
	while (PQping(conninfo) != PQPING_OK) {
		if (now_ms() > deadline)
			fail_msg("the PostgreSQL server in %s did not become ready", directory);
		pause_ms(50);
	}
}

static void server_start(void)
{
	char arguments[512];

	snprintf(arguments, sizeof(arguments), "pg_ctl -D %s/data -l %s/server.log -w -t 300 start",
		 directory, directory);
	assert_int_equal(run_server_program(arguments), 0);
	wait_until_ready();
}

static void server_stop(void)
{
	char arguments[256];

	snprintf(arguments, sizeof(arguments), "pg_ctl -D %s/data -m fast -w -t 300 stop", directory);
	assert_int_equal(run_server_program(arguments), 0);
}

static PGconn *connect_as(const char *database, const char *user)
{
	char conninfo[256];

	conninfo_of(conninfo, sizeof(conninfo), database, user);
	PGconn *connection = PQconnectdb(conninfo);
	if (PQstatus(connection) != CONNECTION_OK)
		fail_msg("connecting as %s to %s: %s", user, database, PQerrorMessage(connection));
	return connection;
}

static void must_run(PGconn *connection, const char *sql)
{
	PGresult *result = PQexec(connection, sql);
	ExecStatusType status = PQresultStatus(result);

	if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
		fail_msg("%s: %s", sql, PQresultErrorMessage(result));
	PQclear(result);
}

/* The one value sql returns, as text (NULL for SQL NULL), into out. */
static void query_value(PGconn *connection, const char *sql, char *out, size_t size)
{
	PGresult *result = PQexec(connection, sql);

	if (PQresultStatus(result) != PGRES_TUPLES_OK || PQntuples(result) != 1 ||
	    PQnfields(result) != 1)
		fail_msg("%s: %s (%d rows)", sql, PQresultErrorMessage(result), PQntuples(result));
	snprintf(out, size, "%s", PQgetisnull(result, 0, 0) ? "NULL" : PQgetvalue(result, 0, 0));
	PQclear(result);
}

static long query_count(PGconn *connection, const char *sql)
{
	char value[32];

	query_value(connection, sql, value, sizeof(value));
	return strtol(value, NULL, 10);
}

static void create_database(const char *name)
{
	char sql[160];
	char conninfo[256];

	/* A test that failed with the server stopped must not fail the next. */
	conninfo_of(conninfo, sizeof(conninfo), "postgres", "postgres");
	if (PQping(conninfo) == PQPING_NO_RESPONSE)
		server_start();
	PGconn *connection = connect_as("postgres", "postgres");

	snprintf(sql, sizeof(sql), "CREATE DATABASE %s OWNER vnfs_writer", name);
	must_run(connection, sql);
	PQfinish(connection);
}

/* initdb as the cluster's owner, trust on the socket (it is in a directory
 * only that owner and root reach), the roles of docs/INSTALL.md. */
static int start_cluster(void **state)
{
	(void)state;
	snprintf(directory, sizeof(directory), "/tmp/vnfs-pg-XXXXXX");
	if (mkdtemp(directory) == NULL)
		return -1;
	if (geteuid() == 0) {
		struct passwd *owner = getpwnam("postgres");
		if (owner == NULL) {
			fprintf(stderr, "FAIL: no postgres user (install postgresql: scripts/deps)\n");
			return -1;
		}
		if (chown(directory, owner->pw_uid, owner->pw_gid) < 0)
			return -1;
		snprintf(command_prefix, sizeof(command_prefix), "runuser -u postgres -- ");
	}
	char arguments[512];
	snprintf(arguments, sizeof(arguments),
		 "initdb -D %s/data -A trust -U postgres -E UTF8 --no-sync", directory);
	if (run_server_program(arguments) != 0) {
		fprintf(stderr, "FAIL: cannot initdb with %s: is PostgreSQL installed?\n", PG_BINDIR);
		return -1;
	}
	char path[128];
	snprintf(path, sizeof(path), "%s/data/postgresql.conf", directory);
	FILE *conf = fopen(path, "a");
	if (conf == NULL)
		return -1;
	fprintf(conf, "listen_addresses = ''\nunix_socket_directories = '%s'\nport = " PORT
		      "\nfsync = off\nmax_connections = 40\n", directory);
	if (fclose(conf) != 0)
		return -1;
	server_start();
	PGconn *connection = connect_as("postgres", "postgres");
	must_run(connection, "CREATE ROLE vnfs_writer LOGIN");
	must_run(connection, "CREATE ROLE vnfs_admin LOGIN");
	must_run(connection, "CREATE ROLE vnfs_users NOLOGIN");
	must_run(connection, "CREATE ROLE alice LOGIN IN ROLE vnfs_users");
	must_run(connection, "CREATE ROLE bob LOGIN IN ROLE vnfs_users");
	PQfinish(connection);
	return 0;
}

static int stop_cluster(void **state)
{
	char command[128];

	(void)state;
	server_stop();
	snprintf(command, sizeof(command), "rm -rf %s", directory);
	return system(command) == 0 ? 0 : -1;
}

/* ---- the log ------------------------------------------------------------------ */

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_lines[64][VNFS_LOG_LINE_MAX];
static size_t log_count;

static void capture_log(enum vnfs_log_priority priority, const char *line)
{
	(void)priority;
	pthread_mutex_lock(&log_lock);
	if (log_count < 64)
		snprintf(log_lines[log_count++], VNFS_LOG_LINE_MAX, "%s", line);
	pthread_mutex_unlock(&log_lock);
	fprintf(stderr, "log: %s\n", line);
}

static unsigned log_lines_with(const char *text)
{
	unsigned count = 0;

	pthread_mutex_lock(&log_lock);
	for (size_t i = 0; i < log_count; i++)
		count += strstr(log_lines[i], text) != NULL;
	pthread_mutex_unlock(&log_lock);
	return count;
}

static void log_reset(void)
{
	pthread_mutex_lock(&log_lock);
	log_count = 0;
	pthread_mutex_unlock(&log_lock);
}

/* ---- records ------------------------------------------------------------------ */

/* A process name no SQL may see spliced in (a user names their programs):
 * it arrives byte for byte, or the statement was built from it. */
#define HOSTILE_NAME "it's'); DROP TABLE jobs; --"

struct step_fixture {
	struct vnfs_step_record record;
	struct vnfs_step_stats stats;
	struct vnfs_tag_list tags;
	struct vnfs_process_record process;
	struct vnfs_mount_record mount;
	struct vnfs_wire_record wire;
};

/* Step step_id of Slurm job job_id on node, owned by user, its counters
 * scaled by sample (1, 2, ...) at sample_time_ms. */
static void step_fixture(struct step_fixture *fixture, uint32_t job_id, uint32_t step_id,
			 const char *node, const char *user, uint32_t uid, uint64_t sample,
			 int64_t sample_time_ms)
{
	char error[128];

	memset(fixture, 0, sizeof(*fixture));
	struct vnfs_step_record *record = &fixture->record;
	vnfs_record_identify_slurm(record, job_id, step_id);
	record->uid = uid;
	snprintf(record->user, sizeof(record->user), "%s", user);
	snprintf(record->node, sizeof(record->node), "%s", node);
	record->cgroup_id = 4242;
	snprintf(record->cgroup_path, sizeof(record->cgroup_path), "/slurm/job_%u", job_id);
	vnfs_tags_init(&fixture->tags);
	assert_int_equal(vnfs_tags_set(&fixture->tags, "project", "nfs-study", error,
				       sizeof(error)),
			 0);
	record->tags = &fixture->tags;
	record->start_time_ms = 1700000000000;
	record->sample_time_ms = sample_time_ms;
	fixture->stats.operations[VNFS_OP_READ].count = 10 * sample;
	fixture->stats.operations[VNFS_OP_READ].bytes = 40960 * sample;
	fixture->stats.operations[VNFS_OP_READ].time_ns = 1000 * sample;
	fixture->stats.operations[VNFS_OP_READ].latency_histogram[3] = 10 * sample;
	fixture->stats.operations[VNFS_OP_OPEN].count = sample;
	fixture->stats.operations[VNFS_OP_OPEN].latency_histogram[2] = sample;
	record->stats = &fixture->stats;
	snprintf(fixture->process.comm, sizeof(fixture->process.comm), "%s", HOSTILE_NAME);
	fixture->process.stats.read_ops = 10 * sample;
	fixture->process.stats.read_bytes = 40960 * sample;
	record->process_count = 1;
	record->processes = &fixture->process;
	fixture->mount.device = 53;
	snprintf(fixture->mount.mount_point, sizeof(fixture->mount.mount_point), "/mnt/nfs");
	snprintf(fixture->mount.source, sizeof(fixture->mount.source), "server:/export");
	snprintf(fixture->mount.version, sizeof(fixture->mount.version), "4.2");
	fixture->mount.stats.ops = 11 * sample;
	fixture->mount.stats.read_bytes = 40960 * sample;
	record->mount_count = 1;
	record->mounts = &fixture->mount;
	fixture->wire.device = 53;
	snprintf(fixture->wire.mount_point, sizeof(fixture->wire.mount_point), "/mnt/nfs");
	fixture->wire.version = 4;
	snprintf(fixture->wire.procedure, sizeof(fixture->wire.procedure), "READ");
	fixture->wire.stats.rpcs = 2 * sample;
	fixture->wire.stats.bytes_received = 41000 * sample;
	record->wire_count = 1;
	record->wire = &fixture->wire;
}

static void publish_steps(struct vnfs_sink *sink, const struct step_fixture *fixtures,
			  size_t count, int64_t time_ms)
{
	struct vnfs_step_record records[8];

	assert_true(count <= 8);
	for (size_t i = 0; i < count; i++)
		records[i] = fixtures[i].record;
	struct vnfs_interval interval = {
		.time_ms = time_ms,
		.node = count > 0 ? records[0].node : "",
		.step_count = count,
		.steps = records,
	};
	sink->publish(sink->state, &interval);
}

/* The job of one finished step. */
static void finish_job(struct vnfs_sink *sink, struct step_fixture *fixture, int64_t end_ms)
{
	fixture->record.finished = true;
	fixture->record.end_time_ms = end_ms;
	fixture->record.sample_time_ms = end_ms;
	struct vnfs_job job;
	vnfs_job_of_steps(&job, &fixture->record.workload, fixture->record.node,
			  &fixture->record, 1);
	sink->job_finished(sink->state, &job);
}

/* ---- the sink -------------------------------------------------------------------- */

static void open_sink(struct vnfs_sink *sink, const char *database, const char *spool_name,
		      uint64_t spool_max_bytes)
{
	static struct vnfs_config config;
	char error[512];

	vnfs_config_defaults(&config);
	config.postgresql.enabled = true;
	conninfo_of(config.postgresql.conninfo, sizeof(config.postgresql.conninfo), database,
		    "vnfs_writer");
	snprintf(config.postgresql.spool_dir, sizeof(config.postgresql.spool_dir), "%s/%s",
		 directory, spool_name);
	config.postgresql.batch_records = 10;
	config.postgresql.buffer_records = 1000;
	config.postgresql.spool_max_bytes = spool_max_bytes;
	config.postgresql.retry_interval_ms = 100;
	if (vnfs_sink_postgresql_open(sink, &config, error, sizeof(error)) != 0)
		fail_msg("open: %s", error);
}

static void counters_of(const struct vnfs_sink *sink, struct vnfs_postgresql_counters *counters)
{
	vnfs_sink_postgresql_counters(sink->state, counters);
}

/* Waits until every queued record is written and the spool is empty. */
static void wait_until_written(const struct vnfs_sink *sink, uint64_t records)
{
	struct vnfs_postgresql_counters counters;
	int64_t deadline = now_ms() + WAIT_MS;

	for (;;) {
		counters_of(sink, &counters);
		if (counters.written >= records && counters.spool_bytes == 0)
			return;
		if (now_ms() > deadline)
			fail_msg("written %llu of %llu records, spool %llu bytes",
				 (unsigned long long)counters.written, (unsigned long long)records,
				 (unsigned long long)counters.spool_bytes);
		pause_ms(20);
	}
}

/* Waits until the worker has handled the first records queued: each
 * written or spooled (with the server down, nothing is replayed). */
static void wait_until_spooled(const struct vnfs_sink *sink, uint64_t records)
{
	struct vnfs_postgresql_counters counters;
	int64_t deadline = now_ms() + WAIT_MS;

	for (;;) {
		counters_of(sink, &counters);
		if (counters.written + counters.spooled >= records)
			return;
		if (now_ms() > deadline)
			fail_msg("written %llu + spooled %llu of %llu records",
				 (unsigned long long)counters.written,
				 (unsigned long long)counters.spooled, (unsigned long long)records);
		pause_ms(20);
	}
}

/* ---- the tests ---------------------------------------------------------------------- */

static void test_two_nodes_write_each_row_once(void **state)
{
	struct vnfs_sink node_a, node_b;
	struct step_fixture a[2], b[1];
	char value[256];

	(void)state;
	create_database("vnfs_nodes");
	open_sink(&node_a, "vnfs_nodes", "spool-a", 1 << 20);
	open_sink(&node_b, "vnfs_nodes", "spool-b", 1 << 20);

	/* Job 101 runs on both nodes, job 102 on node-a alone. */
	step_fixture(&a[0], 101, 0, "node-a", "alice", 1000, 1, 1700000001000);
	step_fixture(&a[1], 102, 0, "node-a", "bob", 1001, 1, 1700000001000);
	step_fixture(&b[0], 101, 0, "node-b", "alice", 1000, 1, 1700000001000);
	publish_steps(&node_a, a, 2, 1700000001000);
	publish_steps(&node_b, b, 1, 1700000001000);
	step_fixture(&a[0], 101, 0, "node-a", "alice", 1000, 2, 1700000002000);
	step_fixture(&a[1], 102, 0, "node-a", "bob", 1001, 2, 1700000002000);
	step_fixture(&b[0], 101, 0, "node-b", "alice", 1000, 2, 1700000002000);
	/* Written twice, as a replayed batch is: no second row. */
	publish_steps(&node_a, a, 2, 1700000002000);
	publish_steps(&node_a, a, 2, 1700000002000);
	publish_steps(&node_b, b, 1, 1700000002000);
	/* An older sample after a newer one (a late replay) changes no row. */
	step_fixture(&b[0], 101, 0, "node-b", "alice", 1000, 1, 1700000001000);
	publish_steps(&node_b, b, 1, 1700000001000);
	step_fixture(&a[0], 101, 0, "node-a", "alice", 1000, 3, 1700000003000);
	finish_job(&node_a, &a[0], 1700000003000);
	/* A job whose end precedes the last interval that read it: still final. */
	finish_job(&node_a, &a[1], 1700000001500);

	wait_until_written(&node_a, 8);
	wait_until_written(&node_b, 3);
	assert_int_equal(node_a.dropped(node_a.state), 0);
	assert_int_equal(node_b.dropped(node_b.state), 0);
	node_a.close(node_a.state);
	node_b.close(node_b.state);

	PGconn *db = connect_as("vnfs_nodes", "vnfs_admin");
	assert_int_equal(query_count(db, "SELECT count(*) FROM jobs"), 3);
	query_value(db,
		    "SELECT string_agg(job || '@' || node || ':' || finished || ':' ||"
		    " coalesce(end_time_ms::text, '-'), ',' ORDER BY job, node) FROM jobs",
		    value, sizeof(value));
	assert_string_equal(value, "101@node-a:1:1700000003000,101@node-b:0:-,"
				   "102@node-a:1:1700000001500");
	assert_int_equal(query_count(db, "SELECT count(*) FROM steps"), 3);
	assert_int_equal(query_count(db, "SELECT count(*) FROM steps WHERE finished = 1"), 2);
	/* Samples: node-a's 101 at 1, 2 and its end; 102 at 1, 2 and its end;
	 * node-b's 101 at 1 and 2: one row each, however often they were sent. */
	assert_int_equal(query_count(db, "SELECT count(*) FROM step_samples"), 8);
	assert_int_equal(query_count(db, "SELECT count(*) FROM (SELECT 1 FROM step_samples GROUP BY"
					 " source, job, node, part, sample_time_ms"
					 " HAVING count(*) > 1) AS twice"),
			 0);
	query_value(db,
		    "SELECT string_agg(node || ':' || job || ':' || o.bytes || ':' || o.count || ':'"
		    " || o.latency_histogram, ',' ORDER BY node, job) FROM step_operations o"
		    " JOIN steps s ON s.id = o.step WHERE o.operation = 'read'",
		    value, sizeof(value));
	assert_string_equal(value, "node-a:101:122880:30:[0,0,0,30],node-a:102:81920:20:[0,0,0,20],"
				   "node-b:101:81920:20:[0,0,0,20]");
	query_value(db, "SELECT sample_time_ms FROM steps WHERE node = 'node-b'", value,
		    sizeof(value));
	assert_string_equal(value, "1700000002000");
	query_value(db,
		    "SELECT string_agg(DISTINCT value, ',') FROM step_tags WHERE name = 'project'",
		    value, sizeof(value));
	assert_string_equal(value, "nfs-study");
	assert_int_equal(query_count(db, "SELECT count(*) FROM step_tags"), 3);
	query_value(db, "SELECT string_agg(DISTINCT comm, ',') FROM step_processes", value,
		    sizeof(value));
	assert_string_equal(value, HOSTILE_NAME);
	assert_int_equal(query_count(db, "SELECT count(*) FROM step_processes"), 3);
	assert_int_equal(query_count(db, "SELECT count(*) FROM step_mounts WHERE source ="
					 " 'server:/export' AND version = '4.2'"),
			 3);
	query_value(db,
		    "SELECT string_agg(w.rpcs || ':' || w.bytes_received, ',' ORDER BY node, job)"
		    " FROM step_wire w JOIN steps s ON s.id = w.step",
		    value, sizeof(value));
	assert_string_equal(value, "6:123000,4:82000,4:82000");
	query_value(db,
		    "SELECT read_count || ':' || read_bytes || ':' || metadata_count || ':' || rpcs"
		    " || ':' || bytes_received || ':' || finished FROM step_samples WHERE"
		    " node = 'node-a' AND job = '101' AND sample_time_ms = 1700000003000",
		    value, sizeof(value));
	assert_string_equal(value, "30:122880:3:6:123000:1");
	PQfinish(db);
}

/* Publishes count intervals of three steps; the server is stopped from
 * interval stop_at to start_at. */
static void test_outage_loses_and_duplicates_nothing(void **state)
{
	enum { INTERVALS = 60, STEPS = 3, STOP_AT = 15, START_AT = 40 };
	struct vnfs_sink sink;
	struct step_fixture steps[STEPS];
	struct vnfs_postgresql_counters counters;

	(void)state;
	create_database("vnfs_outage");
	open_sink(&sink, "vnfs_outage", "spool-outage", 64 << 20);
	for (int interval = 1; interval <= INTERVALS; interval++) {
		int64_t time_ms = 1700000000000 + interval * 1000;
		if (interval == STOP_AT) {
			wait_until_written(&sink, (uint64_t)(interval - 1) * STEPS);
			server_stop();
		}
		if (interval == START_AT) {
			wait_until_spooled(&sink, (uint64_t)(interval - 1) * STEPS);
			server_start();
		}
		for (int s = 0; s < STEPS; s++)
			step_fixture(&steps[s], 300 + (uint32_t)s, 0, "node-a", "alice", 1000,
				     (uint64_t)interval, time_ms);
		publish_steps(&sink, steps, STEPS, time_ms);
		pause_ms(10);
	}
	wait_until_written(&sink, INTERVALS * STEPS);
	counters_of(&sink, &counters);
	assert_int_equal(sink.dropped(sink.state), 0);
	sink.close(sink.state);

	PGconn *db = connect_as("vnfs_outage", "vnfs_admin");
	long received = query_count(db, "SELECT count(*) FROM step_samples");
	long keys = query_count(db, "SELECT count(*) FROM (SELECT DISTINCT source, job, node, part,"
				    " sample_time_ms FROM step_samples) AS keys");
	printf("outage: records sent %llu, spooled %llu, written %llu (replays count again), "
	       "received %ld, distinct keys %ld\n",
	       (unsigned long long)counters.queued, (unsigned long long)counters.spooled,
	       (unsigned long long)counters.written, received, keys);
	assert_int_equal(counters.queued, INTERVALS * STEPS);
	/* Every record of the stopped intervals went through the spool; those
	 * published after the restart may too, until the sink's next attempt
	 * to connect (retry_interval) succeeds: how many depends on the
	 * machine's speed (75 in one run, 108 in one under ASan). */
	assert_true(counters.spooled >= (START_AT - STOP_AT) * STEPS);
	assert_true(counters.spooled <= (INTERVALS - STOP_AT + 1) * STEPS);
	assert_int_equal(received, INTERVALS * STEPS);
	assert_int_equal(keys, INTERVALS * STEPS);
	assert_int_equal(query_count(db, "SELECT count(*) FROM steps"), STEPS);
	assert_int_equal(query_count(db, "SELECT count(*) FROM jobs"), STEPS);
	/* The steps hold the last interval's counters. */
	assert_int_equal(query_count(db, "SELECT count(*) FROM step_operations WHERE"
					 " operation = 'read' AND count = 600"),
			 STEPS);
	PQfinish(db);
}

static void test_full_spool_drops_and_says_so(void **state)
{
	enum { RECORDS = 5, FITTING = 3 };
	struct vnfs_sink sink;
	struct step_fixture steps[RECORDS];
	struct vnfs_postgresql_counters counters;

	(void)state;
	create_database("vnfs_full");
	/* Records of one length (same digits everywhere), so the bound fits
	 * exactly FITTING of them. */
	for (int i = 0; i < RECORDS; i++)
		step_fixture(&steps[i], 400 + (uint32_t)i, 0, "node-a", "alice", 1000, 1,
			     1700000001000);
	char *line = vnfs_spool_step_line(&steps[0].record);
	assert_non_null(line);
	uint64_t line_bytes = strlen(line) + 1;
	free(line);

	server_stop();
	log_reset();
	open_sink(&sink, "vnfs_full", "spool-full", FITTING * line_bytes + line_bytes / 2);
	publish_steps(&sink, steps, RECORDS, 1700000001000);
	int64_t deadline = now_ms() + WAIT_MS;
	do {
		counters_of(&sink, &counters);
		if (now_ms() > deadline)
			fail_msg("spooled %llu, dropped %llu", (unsigned long long)counters.spooled,
				 (unsigned long long)counters.dropped);
		pause_ms(20);
	} while (counters.spooled + counters.dropped < RECORDS);
	assert_int_equal(counters.spooled, FITTING);
	assert_int_equal(sink.dropped(sink.state), RECORDS - FITTING);
	assert_int_equal(counters.spool_bytes, FITTING * line_bytes);
	char full_line[512];
	snprintf(full_line, sizeof(full_line), "the spool %s/spool-full is full (spool_max_bytes = %llu"
		 " bytes)", directory, (unsigned long long)(FITTING * line_bytes + line_bytes / 2));
	assert_int_equal(log_lines_with(full_line), 1);
	assert_int_equal(log_lines_with("raise [postgresql] spool_max_bytes"), 1);
	assert_int_equal(log_lines_with("has drained"), 0);

	server_start();
	wait_until_written(&sink, FITTING);
	assert_int_equal(log_lines_with("has drained"), 1);
	assert_int_equal(log_lines_with("is full"), 1);
	assert_int_equal(sink.dropped(sink.state), RECORDS - FITTING);
	sink.close(sink.state);
	PGconn *db = connect_as("vnfs_full", "vnfs_admin");
	assert_int_equal(query_count(db, "SELECT count(*) FROM step_samples"), FITTING);
	/* The first records fitted; the last two were dropped. */
	char value[128];
	query_value(db, "SELECT string_agg(job, ',' ORDER BY job) FROM steps", value, sizeof(value));
	assert_string_equal(value, "400,401,402");
	PQfinish(db);
}

/* A helper stopped with records in its spool, the last append cut short (a
 * crash): the next one cuts off the torn line and replays the rest. */
static void test_restart_replays_the_spool(void **state)
{
	struct vnfs_sink sink;
	struct step_fixture steps[2];

	(void)state;
	create_database("vnfs_restart");
	server_stop();
	open_sink(&sink, "vnfs_restart", "spool-restart", 1 << 20);
	step_fixture(&steps[0], 500, 0, "node-a", "alice", 1000, 1, 1700000001000);
	step_fixture(&steps[1], 501, 0, "node-a", "bob", 1001, 1, 1700000001000);
	publish_steps(&sink, steps, 2, 1700000001000);
	sink.close(sink.state); /* no server: both go to the spool */
	char path[160];
	snprintf(path, sizeof(path), "%s/spool-restart/records.jsonl", directory);
	struct stat status;
	assert_int_equal(stat(path, &status), 0);
	assert_true(status.st_size > 0);
	assert_int_equal(status.st_mode & 0777, 0600);
	FILE *spool = fopen(path, "a");
	assert_non_null(spool);
	assert_true(fputs("{\"type\":\"st", spool) >= 0);
	assert_int_equal(fclose(spool), 0);
	snprintf(path, sizeof(path), "%s/spool-restart", directory);
	assert_int_equal(stat(path, &status), 0);
	assert_int_equal(status.st_mode & 0777, 0700);

	server_start();
	log_reset();
	open_sink(&sink, "vnfs_restart", "spool-restart", 1 << 20);
	assert_int_equal(log_lines_with("records.jsonl: cut off 11 bytes of a record"), 1);
	wait_until_written(&sink, 2);
	assert_int_equal(sink.dropped(sink.state), 0);
	sink.close(sink.state);
	PGconn *db = connect_as("vnfs_restart", "vnfs_admin");
	assert_int_equal(query_count(db, "SELECT count(*) FROM step_samples"), 2);
	PQfinish(db);
}

static void test_users_see_only_their_jobs(void **state)
{
	struct vnfs_sink sink;
	struct step_fixture steps[2];
	char value[64];

	(void)state;
	create_database("vnfs_rls");
	open_sink(&sink, "vnfs_rls", "spool-rls", 1 << 20);
	step_fixture(&steps[0], 601, 0, "node-a", "alice", 1000, 1, 1700000001000);
	step_fixture(&steps[1], 602, 0, "node-a", "bob", 1001, 1, 1700000001000);
	publish_steps(&sink, steps, 2, 1700000001000);
	wait_until_written(&sink, 2);
	sink.close(sink.state);

	PGconn *alice = connect_as("vnfs_rls", "alice");
	query_value(alice, "SELECT string_agg(job, ',') FROM jobs", value, sizeof(value));
	assert_string_equal(value, "601");
	query_value(alice, "SELECT string_agg(DISTINCT s.\"user\", ',') FROM step_operations o"
			   " JOIN steps s ON s.id = o.step", value, sizeof(value));
	assert_string_equal(value, "alice");
	/* Not even a count of bob's rows, through any table. */
	assert_int_equal(query_count(alice, "SELECT count(*) FROM step_operations"), 2);
	assert_int_equal(query_count(alice, "SELECT count(*) FROM step_samples"), 1);
	assert_int_equal(query_count(alice, "SELECT count(*) FROM step_tags"), 1);
	PGresult *result = PQexec(alice, "DELETE FROM jobs");
	assert_int_equal(PQresultStatus(result), PGRES_FATAL_ERROR); /* no DELETE grant */
	PQclear(result);
	PQfinish(alice);

	PGconn *bob = connect_as("vnfs_rls", "bob");
	query_value(bob, "SELECT string_agg(job, ',') FROM jobs", value, sizeof(value));
	assert_string_equal(value, "602");
	assert_int_equal(query_count(bob, "SELECT count(*) FROM step_wire"), 1);
	PQfinish(bob);

	PGconn *admin = connect_as("vnfs_rls", "vnfs_admin");
	query_value(admin, "SELECT string_agg(job, ',' ORDER BY job) FROM jobs", value,
		    sizeof(value));
	assert_string_equal(value, "601,602");
	assert_int_equal(query_count(admin, "SELECT count(*) FROM step_operations"), 4);
	PQfinish(admin);
}

static void test_migrations(void **state)
{
	char error[512];
	int version = -1;

	(void)state;
	create_database("vnfs_fresh");
	PGconn *db = connect_as("vnfs_fresh", "vnfs_writer");
	assert_int_equal(vnfs_postgresql_schema_version(db, &version, error, sizeof(error)), 0);
	assert_int_equal(version, 0);
	if (vnfs_postgresql_migrate(db, error, sizeof(error)) != 0)
		fail_msg("%s", error);
	assert_int_equal(vnfs_postgresql_schema_version(db, &version, error, sizeof(error)), 0);
	assert_int_equal(version, VNFS_POSTGRESQL_SCHEMA_VERSION);
	/* Again: nothing to do, no error. */
	assert_int_equal(vnfs_postgresql_migrate(db, error, sizeof(error)), 0);
	assert_null(vnfs_postgresql_migration(VNFS_POSTGRESQL_SCHEMA_VERSION));

	/* A newer vnfs migrated it further: refused, named, and left alone. */
	must_run(db, "UPDATE vnfs_schema SET version = version + 1");
	assert_int_equal(vnfs_postgresql_migrate(db, error, sizeof(error)), -1);
	char expected[256];
	snprintf(expected, sizeof(expected),
		 "postgresql: database vnfs_fresh: schema version %d is newer than this vnfs "
		 "understands (%d)",
		 VNFS_POSTGRESQL_SCHEMA_VERSION + 1, VNFS_POSTGRESQL_SCHEMA_VERSION);
	assert_non_null(strstr(error, expected));
	assert_int_equal(vnfs_postgresql_schema_version(db, &version, error, sizeof(error)), 0);
	assert_int_equal(version, VNFS_POSTGRESQL_SCHEMA_VERSION + 1);
	PQfinish(db);
}

/* The sink connects and migrates as it opens, before any record: the
 * first records do not queue behind the migration, and a server that
 * cannot be reached is said at start. */
static void test_open_migrates_at_once(void **state)
{
	struct vnfs_postgresql_counters counters;
	struct vnfs_sink sink;
	char error[512];
	int version = 0;

	(void)state;
	create_database("vnfs_at_once");
	open_sink(&sink, "vnfs_at_once", "spool-at-once", 1 << 20);
	PGconn *db = connect_as("vnfs_at_once", "vnfs_writer");
	int64_t deadline = now_ms() + WAIT_MS;
	while (version != VNFS_POSTGRESQL_SCHEMA_VERSION) {
		if (vnfs_postgresql_schema_version(db, &version, error, sizeof(error)) != 0)
			version = 0; /* the schema table may not be there yet */
		if (version != VNFS_POSTGRESQL_SCHEMA_VERSION && now_ms() > deadline)
			fail_msg("schema version %d, not %d, with no record sent", version,
				 VNFS_POSTGRESQL_SCHEMA_VERSION);
		pause_ms(20);
	}
	counters_of(&sink, &counters);
	assert_int_equal(counters.queued, 0);
	sink.close(sink.state);
	PQfinish(db);
}

/* A node's worth of steps: 2 intervals of 500 steps, each with its
 * operations, tag, process, mount and RPC rows; the time it takes over the
 * local socket is printed (a figure for docs/OUTPUTS.md, not a bound). */
static void test_throughput(void **state)
{
	enum { STEPS = 500, INTERVALS = 2 };
	static struct step_fixture fixtures[STEPS];
	static struct vnfs_step_record records[STEPS];
	struct vnfs_sink sink;

	(void)state;
	create_database("vnfs_throughput");
	open_sink(&sink, "vnfs_throughput", "spool-throughput", 64 << 20);
	/* The time includes connecting and migrating (the first record starts them). */
	int64_t start = now_ms();
	for (int interval = 1; interval <= INTERVALS; interval++) {
		int64_t time_ms = 1700000000000 + interval * 1000;
		for (int s = 0; s < STEPS; s++) {
			step_fixture(&fixtures[s], 1000 + (uint32_t)s, 0, "node-a", "alice", 1000,
				     (uint64_t)interval, time_ms);
			records[s] = fixtures[s].record;
		}
		struct vnfs_interval batch = { .time_ms = time_ms, .node = "node-a",
					       .step_count = STEPS, .steps = records };
		sink.publish(sink.state, &batch);
	}
	wait_until_written(&sink, STEPS * INTERVALS);
	int64_t elapsed = now_ms() - start;
	sink.close(sink.state);
	printf("throughput: %d step records in %lld ms (%.0f records/s, unix socket, fsync off)\n",
	       STEPS * INTERVALS, (long long)elapsed,
	       elapsed > 0 ? STEPS * INTERVALS * 1000.0 / (double)elapsed : 0.0);
	PGconn *db = connect_as("vnfs_throughput", "vnfs_admin");
	assert_int_equal(query_count(db, "SELECT count(*) FROM step_samples"), STEPS * INTERVALS);
	assert_int_equal(query_count(db, "SELECT count(*) FROM step_operations WHERE count = 20"),
			 STEPS);
	PQfinish(db);

	/* And read back whole, as vnfs-report --db does (one query per job, and
	 * five per step: its operations, processes, mounts, RPCs and tags). */
	struct report_filter filter = { 0 };
	struct report_database *reader;
	struct vnfs_workload job;
	char locator[256], error[512];
	size_t jobs = 0;
	uint64_t bytes = 0;

	locator_of(locator, sizeof(locator), "vnfs_throughput", "vnfs_admin");
	start = now_ms();
	if (report_database_open(&reader, locator, &filter, error, sizeof(error)) < 0)
		fail_msg("open: %s", error);
	while (report_database_next(reader, &job)) {
		struct report_set set;
		report_set_init(&set);
		assert_int_equal(report_database_read_job(reader, &set, error, sizeof(error)), 1);
		for (size_t i = 0; i < set.count; i++)
			bytes += set.records[i].stats->operations[VNFS_OP_READ].bytes;
		report_set_free(&set);
		jobs++;
	}
	report_database_close(reader);
	elapsed = now_ms() - start;
	printf("read back: %zu jobs of one step in %lld ms (%.0f jobs/s)\n", jobs,
	       (long long)elapsed, elapsed > 0 ? (double)jobs * 1000.0 / (double)elapsed : 0.0);
	assert_int_equal(jobs, STEPS);
	assert_int_equal(bytes, (uint64_t)STEPS * 40960 * INTERVALS);
}

/* The tables both histories have, column for column, in the same order:
 * one query reads both (postgresql_schema.c says why they are not made from
 * one list). */
static void test_columns_match_the_sqlite_history(void **state)
{
	static const char *const tables[] = { "operations", "jobs", "steps", "step_tags",
					      "step_operations", "step_processes", "step_mounts",
					      "step_wire" };
	char error[512], sql[256], sqlite_columns[1024], postgresql_columns[1024];
	sqlite3 *sqlite;

	(void)state;
	assert_int_equal(sqlite3_open(":memory:", &sqlite), SQLITE_OK);
	if (vnfs_history_migrate(sqlite, ":memory:", error, sizeof(error)) != 0)
		fail_msg("%s", error);
	create_database("vnfs_columns");
	PGconn *db = connect_as("vnfs_columns", "vnfs_writer");
	if (vnfs_postgresql_migrate(db, error, sizeof(error)) != 0)
		fail_msg("%s", error);
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		sqlite3_stmt *statement;
		size_t used = 0;
		snprintf(sql, sizeof(sql), "SELECT name FROM pragma_table_info('%s') ORDER BY cid",
			 tables[t]);
		assert_int_equal(sqlite3_prepare_v2(sqlite, sql, -1, &statement, NULL), SQLITE_OK);
		sqlite_columns[0] = '\0';
		while (sqlite3_step(statement) == SQLITE_ROW)
			used += (size_t)snprintf(sqlite_columns + used, sizeof(sqlite_columns) - used,
						 "%s%s", used > 0 ? "," : "",
						 (const char *)sqlite3_column_text(statement, 0));
		sqlite3_finalize(statement);
		snprintf(sql, sizeof(sql),
			 "SELECT string_agg(column_name, ',' ORDER BY ordinal_position) FROM"
			 " information_schema.columns WHERE table_name = '%s'",
			 tables[t]);
		query_value(db, sql, postgresql_columns, sizeof(postgresql_columns));
		assert_string_equal(postgresql_columns, sqlite_columns);
	}
	PQfinish(db);
	sqlite3_close(sqlite);
}

/* The spool's reader: whole lines only, a torn last line left unread. */
static void test_spool_reader(void **state)
{
	static const char text[] = "{\"a\":1}\n\n{\"b\":2}\n{\"torn";
	struct vnfs_spool_lines lines = { 0 };
	struct vnfs_spool_record record;
	size_t skipped = 0;
	char error[256];

	(void)state;
	FILE *file = fmemopen((void *)text, sizeof(text) - 1, "r");
	assert_non_null(file);
	assert_int_equal(vnfs_spool_read_lines(file, 10, &lines, &skipped), 2);
	assert_int_equal(skipped, 1); /* the empty line */
	assert_string_equal(lines.lines[0], "{\"a\":1}");
	assert_string_equal(lines.lines[1], "{\"b\":2}");
	assert_int_equal(ftello(file), 17);
	fclose(file);
	assert_int_equal(vnfs_spool_record_parse(lines.lines[0], lines.lengths[0], &record, error,
						 sizeof(error)),
			 -1);
	assert_string_equal(error, "not an object of exactly \"type\" and \"record\"");
	vnfs_spool_lines_clear(&lines, 0);

	struct step_fixture fixture;
	step_fixture(&fixture, 7, 1, "node-a", "alice", 1000, 1, 1700000001000);
	char *line = vnfs_spool_step_line(&fixture.record);
	assert_non_null(line);
	assert_int_equal(vnfs_spool_record_parse(line, strlen(line), &record, error, sizeof(error)),
			 0);
	assert_int_equal(record.type, VNFS_SPOOL_STEP);
	assert_string_equal(record.step.workload.job, "7");
	assert_string_equal(vnfs_tags_find(record.step.tags, "project"), "nfs-study");
	assert_string_equal(record.step.processes[0].comm, HOSTILE_NAME);
	assert_int_equal(record.step.stats->operations[VNFS_OP_READ].bytes, 40960);
	vnfs_spool_record_free(&record);
	free(line);
}

/* ---- reading the cluster's history (lib/history/reader.c, vnfs-report) --------- */

#define READ_SAMPLE 10 /* each step's read count, 10 x this: the baseline's 100 calls */

/* The cluster of the reading tests: Slurm jobs 9 (alice, node-a), 10 (bob,
 * node-a) and 101 (alice, on node-a and node-b), and LSF jobs 0042, 42 and
 * abc (alice, node-b), each step with READ_SAMPLE x 10 reads. */
static void write_reading_cluster(const char *database)
{
	static const char *const lsf_jobs[] = { "0042", "42", "abc" };
	struct step_fixture a[3], b[4];
	struct vnfs_sink node_a, node_b;
	char message[256];

	create_database(database);
	open_sink(&node_a, database, "spool-read-a", 1 << 20);
	open_sink(&node_b, database, "spool-read-b", 1 << 20);
	step_fixture(&a[0], 9, 0, "node-a", "alice", 1000, READ_SAMPLE, 1700000001000);
	step_fixture(&a[1], 10, 0, "node-a", "bob", 1001, READ_SAMPLE, 1700000001000);
	step_fixture(&a[2], 101, 0, "node-a", "alice", 1000, READ_SAMPLE, 1700000001000);
	step_fixture(&b[0], 101, 0, "node-b", "alice", 1000, READ_SAMPLE, 1700000001000);
	for (int i = 0; i < 3; i++) {
		step_fixture(&b[1 + i], 0, 0, "node-b", "alice", 1000, READ_SAMPLE, 1700000001000);
		assert_int_equal(vnfs_workload_set(&b[1 + i].record.workload, VNFS_SOURCE_LSF,
						   lsf_jobs[i], "", message, sizeof(message)),
				 0);
	}
	publish_steps(&node_a, a, 3, 1700000001000);
	publish_steps(&node_b, b, 4, 1700000001000);
	wait_until_written(&node_a, 3);
	wait_until_written(&node_b, 4);
	node_a.close(node_a.state);
	node_b.close(node_b.state);
}

/* Every job the reader lists for user, "source:job/records/read bytes" each,
 * checking that they come in vnfs_workload_compare's order. */
static void read_listing(const char *database, const char *user,
			 const struct report_filter *filter, char *out, size_t size)
{
	struct report_database *reader;
	struct vnfs_workload job, previous;
	char locator[256], error[512];
	size_t used = 0;
	bool first = true;

	locator_of(locator, sizeof(locator), database, user);
	if (report_database_open(&reader, locator, filter, error, sizeof(error)) < 0)
		fail_msg("open %s: %s", locator, error);
	out[0] = '\0';
	while (report_database_next(reader, &job)) {
		struct report_set set;
		uint64_t bytes = 0;
		report_set_init(&set);
		if (report_database_read_job(reader, &set, error, sizeof(error)) != 1)
			fail_msg("read: %s", error);
		if (!first && vnfs_workload_compare(&previous, &job) >= 0)
			fail_msg("%s listed after %s", job.job, previous.job);
		first = false;
		previous = job;
		for (size_t i = 0; i < set.count; i++)
			bytes += set.records[i].stats->operations[VNFS_OP_READ].bytes;
		used += (size_t)snprintf(out + used, used < size ? size - used : 0, "%s%s:%s/%zu/%llu",
					 used > 0 ? "," : "", vnfs_workload_source_name(job.source),
					 job.job, set.count, (unsigned long long)bytes);
		report_set_free(&set);
	}
	report_database_close(reader);
}

static void test_reader_lists_and_reads_every_node(void **state)
{
	struct report_filter filter = { 0 };
	char listing[1024], error[256];

	(void)state;
	write_reading_cluster("vnfs_read");
	/* Numbers by value (9 before 10), fewer leading zeros first, then
	 * other ids by bytes; Slurm's before LSF's; job 101 from both nodes. */
	read_listing("vnfs_read", "vnfs_admin", &filter, listing, sizeof(listing));
	assert_string_equal(listing, "slurm:9/1/409600,slurm:10/1/409600,slurm:101/2/819200,"
				     "lsf:42/1/409600,lsf:0042/1/409600,lsf:abc/1/409600");
	/* Row-level security: each user's own role reads their jobs alone. */
	read_listing("vnfs_read", "alice", &filter, listing, sizeof(listing));
	assert_string_equal(listing, "slurm:9/1/409600,slurm:101/2/819200,"
				     "lsf:42/1/409600,lsf:0042/1/409600,lsf:abc/1/409600");
	read_listing("vnfs_read", "bob", &filter, listing, sizeof(listing));
	assert_string_equal(listing, "slurm:10/1/409600");
	/* vnfs-report's filters: -j, -u by uid and by name, -E before every start. */
	static const struct {
		const char *jobs;
		int64_t uid; /* -1: none */
		const char *user, *end_time, *listing;
	} filters[] = {
		{ "101,lsf:abc", -1, "", NULL, "slurm:101/2/819200,lsf:abc/1/409600" },
		{ NULL, 1001, "", NULL, "slurm:10/1/409600" },
		{ NULL, -1, "bob", NULL, "slurm:10/1/409600" },
		{ NULL, -1, "", "2020-09-13", "" },
	};
	for (size_t i = 0; i < sizeof(filters) / sizeof(filters[0]); i++) {
		memset(&filter, 0, sizeof(filter));
		if (filters[i].jobs != NULL)
			assert_int_equal(report_parse_jobs(filters[i].jobs, &filter, error,
							   sizeof(error)),
					 0);
		filter.has_uid = filters[i].uid >= 0;
		filter.uid = filters[i].uid >= 0 ? (uint32_t)filters[i].uid : 0;
		snprintf(filter.user_name, sizeof(filter.user_name), "%s", filters[i].user);
		filter.has_end = filters[i].end_time != NULL;
		filter.end_ms = 1600000000000; /* 2020-09-13 */
		read_listing("vnfs_read", "vnfs_admin", &filter, listing, sizeof(listing));
		assert_string_equal(listing, filters[i].listing);
	}
}

/* The baseline of the long report's findings, from the cluster's history:
 * every other job's steps on the nodes, the job asked about left out. */
static void test_reader_baseline_leaves_the_job_out(void **state)
{
	struct report_baseline baseline;
	struct vnfs_workload job;
	char locator[256], error[512], message[256];
	const int64_t now = 1700000002000;

	(void)state;
	write_reading_cluster("vnfs_baseline");
	locator_of(locator, sizeof(locator), "vnfs_baseline", "vnfs_admin");
	vnfs_workload_of_slurm_job(&job, 9);
	assert_int_equal(report_load_baseline(locator, "node-a,node-b", &job, now, &baseline, error,
					      sizeof(error)),
			 0);
	assert_int_equal(baseline.steps[VNFS_OP_READ], 6); /* 7 steps, job 9's left out */
	assert_true(baseline.p99_ns[VNFS_OP_READ] > 0);
	assert_int_equal(baseline.steps[VNFS_OP_OPEN], 0); /* 10 opens: too few calls */
	vnfs_workload_of_slurm_job(&job, 101);
	assert_int_equal(report_load_baseline(locator, "node-a,node-b", &job, now, &baseline, error,
					      sizeof(error)),
			 0);
	assert_int_equal(baseline.steps[VNFS_OP_READ], 5); /* both of 101's */
	assert_int_equal(vnfs_workload_set(&job, VNFS_SOURCE_LSF, "abc", "", message,
					   sizeof(message)),
			 0);
	assert_int_equal(report_load_baseline(locator, "node-a", &job, now, &baseline, error,
					      sizeof(error)),
			 0);
	assert_int_equal(baseline.steps[VNFS_OP_READ], 3); /* node-a's: abc ran on node-b */
	/* Outside the window (a day before now): none. */
	assert_int_equal(report_load_baseline(locator, "node-a,node-b", NULL,
					      now + 2 * REPORT_BASELINE_WINDOW_MS, &baseline, error,
					      sizeof(error)),
			 0);
	assert_int_equal(baseline.steps[VNFS_OP_READ], 0);
	/* One open history answers the same, its query prepared once and run
	 * again for each job (as vnfs-report -l does over its listing). */
	struct report_filter filter = { 0 };
	struct report_database *open_history;
	static const uint32_t jobs[] = { 9, 101, 9 };
	static const uint32_t steps[] = { 6, 5, 6 };
	assert_int_equal(report_database_open(&open_history, locator, &filter, error,
					      sizeof(error)),
			 0);
	for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
		vnfs_workload_of_slurm_job(&job, jobs[i]);
		assert_int_equal(report_database_baseline(open_history, "node-a,node-b", &job, now,
							  &baseline, error, sizeof(error)),
				 0);
		assert_int_equal(baseline.steps[VNFS_OP_READ], steps[i]);
	}
	report_database_close(open_history);
	/* alice's role sees her steps alone: 9, 101 twice, the three LSF jobs. */
	locator_of(locator, sizeof(locator), "vnfs_baseline", "alice");
	assert_int_equal(report_load_baseline(locator, "node-a,node-b", NULL, now, &baseline, error,
					      sizeof(error)),
			 0);
	assert_int_equal(baseline.steps[VNFS_OP_READ], 6);
}

/* Runs vnfs-report with arguments and a vnfs.conf of config_text (its own,
 * whatever this machine has installed), its output into out; fails,
 * showing that output, unless it exits with status. */
static void run_report_configured(const char *config_text, const char *arguments, int status,
				  char *out, size_t size)
{
	char command[2048], path[128];
	FILE *file;
	size_t length;

	snprintf(path, sizeof(path), "%s/vnfs.conf", directory);
	file = fopen(path, "w");
	assert_non_null(file);
	assert_true(fputs(config_text, file) >= 0);
	assert_int_equal(fclose(file), 0);
	snprintf(path, sizeof(path), "%s/report.out", directory);
	snprintf(command, sizeof(command),
		 "TZ=UTC %s --config %s/vnfs.conf --socket %s/no-helper %s > %s 2>&1",
		 VNFS_REPORT_PROGRAM, directory, directory, arguments, path);
	int result = system(command);
	file = fopen(path, "r");
	assert_non_null(file);
	length = fread(out, 1, size - 1, file);
	out[length] = '\0';
	fclose(file);
	if (!WIFEXITED(result) || WEXITSTATUS(result) != status)
		fail_msg("vnfs-report %s: status %d, not %d:\n%s", arguments,
			 WIFEXITED(result) ? WEXITSTATUS(result) : -1, status, out);
}

static void run_report(const char *arguments, int status, char *out, size_t size)
{
	run_report_configured("", arguments, status, out, size);
}

static void test_report_program_reads_the_cluster_history(void **state)
{
	char locator[256], arguments[512], out[4096];

	(void)state;
	write_reading_cluster("vnfs_program");
	/* alice, on a login node with no helper: her jobs, summed over nodes. */
	locator_of(locator, sizeof(locator), "vnfs_program", "alice");
	snprintf(arguments, sizeof(arguments),
		 "--db '%s' -X -P -n -o JobID,User,ReadBytes,ReadOps -S 2023-11-01", locator);
	run_report(arguments, 0, out, sizeof(out));
	assert_non_null(strstr(out, "9|alice|409600|100\n"
				    "101|alice|819200|200\n"
				    "lsf:42|alice|409600|100\n"
				    "lsf:0042|alice|409600|100\n"
				    "lsf:abc|alice|409600|100\n"));
	assert_null(strstr(out, "bob"));
	/* The same from a login node's vnfs.conf: [report] history, no --db. */
	char config_text[512];
	snprintf(config_text, sizeof(config_text), "[report]\nhistory = %s\n", locator);
	run_report_configured(config_text, "-X -P -n -o JobID,ReadBytes -j 101", 0, out,
			      sizeof(out));
	assert_string_equal(out, "101|819200\n");
	/* The long report of a job on two nodes, with its findings' baseline. */
	snprintf(arguments, sizeof(arguments), "--database '%s' -l -j 101", locator);
	run_report(arguments, 0, out, sizeof(out));
	printf("vnfs-report -l -j 101 from the cluster's history, as alice:\n%s", out);
	assert_true(strncmp(out, "Job 101  user alice (1000)  RUNNING\nNodes:   node-a,node-b\n",
			    59) == 0); /* no note that the helper is down: nothing is missing */
	/* bob's job is not alice's to read: no row, and no error. */
	snprintf(arguments, sizeof(arguments), "--db '%s' -X -P -n -o JobID -j 10", locator);
	run_report(arguments, 0, out, sizeof(out));
	assert_null(strstr(out, "10|"));
	/* No server there: exit 1, and the password is never repeated. */
	snprintf(arguments, sizeof(arguments),
		 "--db 'postgresql:///vnfs_program?host=%s/none&user=alice&password=s3cret' -X",
		 directory);
	run_report(arguments, 1, out, sizeof(out));
	assert_non_null(strstr(out, "vnfs-report: history database postgresql: "));
	assert_null(strstr(out, "s3cret"));
	/* Not a vnfs history: said, exit 1. */
	snprintf(arguments, sizeof(arguments), "--db 'postgresql:///postgres?host=%s&port=" PORT
		 "&user=postgres' -X", directory);
	run_report(arguments, 1, out, sizeof(out));
	assert_non_null(strstr(out, "not a vnfs history (schema version 0)"));
}

/* ---- the PostgreSQL dashboard's queries (contrib/grafana/postgresql) ----------- */

#define DASHBOARD_PATH VNFS_SOURCE_DIR "/contrib/grafana/postgresql/vnfs-cluster-history.json"
#define MINUTE_MS 60000
#define SAMPLE_0 1700000040000 /* on a minute: 2023-11-14 22:14:00 UTC */
#define SAMPLE_1 (SAMPLE_0 + MINUTE_MS)
/* The dashboard's time range: SAMPLE_1 in it, SAMPLE_0 before it. */
#define RANGE_FROM "1700000070000"
#define RANGE_TO "1700000160000"

/* Slurm job 201 (alice, node-a, project=nfs-study), sampled at SAMPLE_0 (1)
 * and SAMPLE_1 (3); job 202 (bob, node-b, project=other) at SAMPLE_1 (3);
 * pod ml/trainer's container main (alice, node-b, no tag) at SAMPLE_1 (1).
 * A sample of n has 10n reads of 40960n bytes in 1000n ns, n opens, 2n RPCs. */
static void write_dashboard_cluster(const char *database)
{
	struct step_fixture a, b[2];
	struct vnfs_sink node_a, node_b;
	char message[256];

	create_database(database);
	open_sink(&node_a, database, "spool-dashboard-a", 1 << 20);
	open_sink(&node_b, database, "spool-dashboard-b", 1 << 20);
	step_fixture(&a, 201, 0, "node-a", "alice", 1000, 1, SAMPLE_0);
	publish_steps(&node_a, &a, 1, SAMPLE_0);
	step_fixture(&a, 201, 0, "node-a", "alice", 1000, 3, SAMPLE_1);
	publish_steps(&node_a, &a, 1, SAMPLE_1);
	step_fixture(&b[0], 202, 0, "node-b", "bob", 1001, 3, SAMPLE_1);
	vnfs_tags_init(&b[0].tags);
	assert_int_equal(vnfs_tags_set(&b[0].tags, "project", "other", message,
				       sizeof(message)),
			 0);
	step_fixture(&b[1], 0, 0, "node-b", "alice", 1000, 1, SAMPLE_1);
	vnfs_tags_init(&b[1].tags);
	assert_int_equal(vnfs_workload_set(&b[1].record.workload, VNFS_SOURCE_KUBERNETES,
					   "ml/trainer", "main", message, sizeof(message)),
			 0);
	publish_steps(&node_b, b, 2, SAMPLE_1);
	wait_until_written(&node_a, 2);
	wait_until_written(&node_b, 2);
	node_a.close(node_a.state);
	node_b.close(node_b.state);
}

/* sql with Grafana's variables as it fills them in: the time range in ms,
 * ${name:sqlstring} as quoted, escaped values (every value of an "All").
 * Fails on a variable it does not know. */
static void fill_variables(const char *sql, char *out, size_t size)
{
	static const struct {
		const char *variable, *value;
	} values[] = {
		{ "$__from", RANGE_FROM },
		{ "$__to", RANGE_TO },
		{ "${user:sqlstring}", "'alice','bob'" },
		{ "${tag:sqlstring}", "'project'" },
		{ "${namespace:sqlstring}", "'ml'" },
	};
	size_t used = 0;

	while (*sql != '\0' && used + 1 < size) {
		size_t i = 0;
		while (i < sizeof(values) / sizeof(values[0]) &&
		       strncmp(sql, values[i].variable, strlen(values[i].variable)) != 0)
			i++;
		if (i < sizeof(values) / sizeof(values[0])) {
			used += (size_t)snprintf(out + used, size - used, "%s", values[i].value);
			sql += strlen(values[i].variable);
			continue;
		}
		if (*sql == '$' && sql[1] != '\0' && strchr("_{abcdefghijklmnopqrstuvwxyz", sql[1]))
			fail_msg("an unknown variable in the dashboard's SQL: %.40s", sql);
		out[used++] = *sql++;
	}
	assert_true(used + 1 < size);
	out[used] = '\0';
}

/* The rows of sql as vnfs_admin (Grafana's role), "a|b;c|d". */
static void dashboard_rows(PGconn *connection, const char *sql, char *out, size_t size)
{
	char filled[8192];
	size_t used = 0;

	fill_variables(sql, filled, sizeof(filled));
	PGresult *result = PQexec(connection, filled);
	if (PQresultStatus(result) != PGRES_TUPLES_OK)
		fail_msg("%s\n%s", PQresultErrorMessage(result), filled);
	out[0] = '\0';
	for (int row = 0; row < PQntuples(result); row++)
		for (int column = 0; column < PQnfields(result); column++)
			used += (size_t)snprintf(out + used, used < size ? size - used : 0, "%s%s",
						 column > 0 ? "|" : row > 0 ? ";" : "",
						 PQgetvalue(result, row, column));
	PQclear(result);
	assert_true(used < size);
}

static void test_dashboard_queries(void **state)
{
	/* Every query of the dashboard and what it answers; a query without an
	 * answer here fails the test, so a new panel comes with its check. */
	static const struct {
		const char *name, *rows;
	} answers[] = {
		{ "variable user", "alice;bob" },
		{ "variable tag", "project" },
		{ "variable namespace", "ml" },
		/* 201's 2 samples' worth, 202's 3 and the pod's 1: 6 x 40960 B in a minute. */
		{ "Bytes per second, all nodes",
		  "2023-11-14 22:15:00+00|4096.0000000000000000|0.00000000000000000000" },
		{ "Heaviest jobs", "202|bob|1|122880|0|3|0|3000|6;201|alice|1|81920|0|2|0|2000|4;"
				   "kubernetes:ml/trainer|alice|1|40960|0|1|0|1000|2" },
		{ "By user", "alice|2|122880|0|3|3000;bob|1|122880|0|3|3000" },
		{ "By the tag's value",
		  "other|1|1|122880|0|3000;nfs-study|1|1|81920|0|2000;(none)|1|1|40960|0|1000" },
		{ "Kubernetes pods", "ml|trainer|1|1|40960|0|1000" },
	};
	size_t checked = 0;
	char name[128], rows[2048];

	(void)state;
	write_dashboard_cluster("vnfs_dashboard");
	struct json_object *dashboard = json_object_from_file(DASHBOARD_PATH);
	assert_non_null(dashboard);
	PGconn *grafana = connect_as("vnfs_dashboard", "vnfs_admin");
	must_run(grafana, "SET TIME ZONE 'UTC'");
	struct json_object *variables, *panels, *list;
	assert_true(json_object_object_get_ex(dashboard, "templating", &variables));
	assert_true(json_object_object_get_ex(variables, "list", &list));
	assert_true(json_object_object_get_ex(dashboard, "panels", &panels));
	size_t queries = json_object_array_length(list) + json_object_array_length(panels);
	for (size_t i = 0; i < queries; i++) {
		bool variable = i < json_object_array_length(list);
		struct json_object *item = json_object_array_get_idx(
			variable ? list : panels, variable ? i : i - json_object_array_length(list));
		struct json_object *field, *targets;
		const char *sql = NULL;
		if (variable) {
			if (json_object_object_get_ex(item, "definition", &field))
				sql = json_object_get_string(field);
			snprintf(name, sizeof(name), "variable %s",
				 json_object_get_string(json_object_object_get(item, "name")));
		} else {
			assert_true(json_object_object_get_ex(item, "targets", &targets));
			assert_int_equal(json_object_array_length(targets), 1);
			assert_true(json_object_object_get_ex(
				json_object_array_get_idx(targets, 0), "rawSql", &field));
			sql = json_object_get_string(field);
			snprintf(name, sizeof(name), "%s",
				 json_object_get_string(json_object_object_get(item, "title")));
		}
		if (sql == NULL)
			continue; /* the data source variable */
		size_t a = 0;
		while (a < sizeof(answers) / sizeof(answers[0]) && strcmp(answers[a].name, name) != 0)
			a++;
		if (a == sizeof(answers) / sizeof(answers[0]))
			fail_msg("no expected answer for the dashboard's query '%s'", name);
		dashboard_rows(grafana, sql, rows, sizeof(rows));
		if (strcmp(rows, answers[a].rows) != 0)
			fail_msg("%s: '%s', expected '%s'", name, rows, answers[a].rows);
		checked++;
	}
	assert_int_equal(checked, sizeof(answers) / sizeof(answers[0]));
	PQfinish(grafana);
	json_object_put(dashboard);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spool_reader),
		cmocka_unit_test(test_migrations),
		cmocka_unit_test(test_open_migrates_at_once),
		cmocka_unit_test(test_columns_match_the_sqlite_history),
		cmocka_unit_test(test_two_nodes_write_each_row_once),
		cmocka_unit_test(test_users_see_only_their_jobs),
		cmocka_unit_test(test_full_spool_drops_and_says_so),
		cmocka_unit_test(test_restart_replays_the_spool),
		cmocka_unit_test(test_outage_loses_and_duplicates_nothing),
		cmocka_unit_test(test_throughput),
		cmocka_unit_test(test_reader_lists_and_reads_every_node),
		cmocka_unit_test(test_reader_baseline_leaves_the_job_out),
		cmocka_unit_test(test_report_program_reads_the_cluster_history),
		cmocka_unit_test(test_dashboard_queries),
	};

	history_register_postgresql();
	vnfs_log_setup("test_postgresql", VNFS_LOG_PRIORITY_INFO, 0);
	vnfs_log_set_sink(capture_log);
	setvbuf(stdout, NULL, _IONBF, 0);
	return cmocka_run_group_tests(tests, start_cluster, stop_cluster);
}
