/*
 * test_sink_sqlite.c — the SQLite history sink against a real database in a
 * temporary directory: schema migration, exact rows after intervals and a
 * finished job, a step's RPCs (step_wire) written and read back, skipping
 * unchanged steps, retention, and a database locked by another connection.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "helper/outputs/sink.h"
#include "lib/history/reader.h"
#include "lib/history/schema.h"
#include "tests/unit/history_fixtures.h"

struct fixture {
	char directory[64];
	char path[128];
	struct vnfs_config config;
};

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (f == NULL)
		return -1;
	snprintf(f->directory, sizeof(f->directory), "/tmp/vnfs-test-sqlite.XXXXXX");
	if (mkdtemp(f->directory) == NULL)
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/db/history.db", f->directory);
	snprintf(f->config.sqlite.path, sizeof(f->config.sqlite.path), "%s", f->path);
	f->config.sqlite.enabled = true;
	f->config.sqlite.retention_days = 0;
	f->config.sqlite.wal_limit_bytes = 16 * 1024 * 1024;
	f->config.helper.admin_gid = (gid_t)-1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char command[200];
	/* test_disk_full's tmpfs, should it have failed before unmounting. */
	snprintf(command, sizeof(command), "%s/small", f->directory);
	umount2(command, MNT_DETACH);
	snprintf(command, sizeof(command), "rm -rf '%s'", f->directory);
	int rc = system(command);
	free(f);
	return rc == 0 ? 0 : -1;
}

static sqlite3 *open_db(const char *path)
{
	sqlite3 *db = NULL;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	return db;
}

static int64_t query_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *statement;
	if (sqlite3_prepare_v2(db, sql, -1, &statement, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	assert_int_equal(sqlite3_step(statement), SQLITE_ROW);
	int64_t value = sqlite3_column_int64(statement, 0);
	sqlite3_finalize(statement);
	return value;
}

/* The first column of every row, joined with '|'. */
static void query_text(sqlite3 *db, const char *sql, char *out, size_t size)
{
	sqlite3_stmt *statement;
	if (sqlite3_prepare_v2(db, sql, -1, &statement, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	size_t used = 0;
	out[0] = '\0';
	while (sqlite3_step(statement) == SQLITE_ROW && used < size) {
		const unsigned char *text = sqlite3_column_text(statement, 0);
		used += (size_t)snprintf(out + used, size - used, "%s%s", used > 0 ? "|" : "",
					 text != NULL ? (const char *)text : "NULL");
	}
	sqlite3_finalize(statement);
}

static void open_sink(struct fixture *f, struct vnfs_sink *sink)
{
	char error[256] = "";
	if (vnfs_sink_sqlite_open(sink, &f->config, error, sizeof(error)) != 0)
		fail_msg("open: %s", error);
	assert_string_equal(sink->name, "sqlite");
}

static void publish(struct vnfs_sink *sink, struct history_step *steps, size_t count,
		    struct vnfs_step_record *records)
{
	for (size_t i = 0; i < count; i++)
		records[i] = steps[i].record;
	struct vnfs_interval interval = { .time_ms = records[0].sample_time_ms,
					  .node = records[0].node,
					  .step_count = count,
					  .steps = records };
	sink->publish(sink->state, &interval);
}

static void test_migration_from_empty(void **state)
{
	struct fixture *f = *state;
	struct vnfs_sink sink;
	open_sink(f, &sink);
	sink.close(sink.state);

	sqlite3 *db = open_db(f->path);
	char text[512];
	assert_int_equal(query_int(db, "PRAGMA user_version"), 3);
	query_text(db, "PRAGMA journal_mode", text, sizeof(text));
	assert_string_equal(text, "wal");
	query_text(db, "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name", text,
		   sizeof(text));
	assert_string_equal(text, "jobs|operations|step_mounts|step_operations|step_processes|"
				  "step_tags|step_wire|steps");
	assert_int_equal(query_int(db, "SELECT count(*) FROM operations"), VNFS_OP_COUNT);
	query_text(db, "SELECT class FROM operations WHERE name IN ('read', 'getattr') "
		       "ORDER BY name",
		   text, sizeof(text));
	assert_string_equal(text, "META|DATA");

	/* A second open finds version 3 and changes nothing. */
	open_sink(f, &sink);
	sink.close(sink.state);
	assert_int_equal(query_int(db, "PRAGMA user_version"), 3);

	/* A database from a newer vnfs is refused, not misread. */
	assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 9", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	char error[256] = "";
	assert_int_equal(vnfs_sink_sqlite_open(&sink, &f->config, error, sizeof(error)), -1);
	char expected[300];
	snprintf(expected, sizeof(expected),
		 "sqlite: %s: schema version 9 is newer than this vnfs understands (3)", f->path);
	assert_string_equal(error, expected);
}

/*
 * A history of schema version 1, as a helper before the general workload
 * identity left it: job 42 (a batch step and step 0, with a tag, an
 * operation, a process and a mount) and job 43.
 */
static void make_version_1_history(const struct fixture *f)
{
	char directory[160];
	sqlite3 *db = NULL;

	snprintf(directory, sizeof(directory), "%s/db", f->directory);
	assert_int_equal(mkdir(directory, 0700), 0);
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, vnfs_history_migration(0), NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(
		sqlite3_exec(db,
			     "PRAGMA user_version = 1;"
			     "INSERT INTO operations VALUES ('write', 'DATA');"
			     "INSERT INTO jobs VALUES (42, 'node1', 1001, 'alice', 1000, 9000,"
			     " 9000, 1);"
			     "INSERT INTO jobs VALUES (43, 'node1', 1002, 'bob', 2000, NULL,"
			     " 5000, 0);"
			     "INSERT INTO steps VALUES (7, 42, 'node1', 4294967291, 1001, 'alice',"
			     " 77, '/sys/fs/cgroup/job_42/step_batch', 1000, 9000, 9000, 1,"
			     " '[]', '[]');"
			     "INSERT INTO steps VALUES (8, 42, 'node1', 0, 1001, 'alice', 78,"
			     " '/sys/fs/cgroup/job_42/step_0', 1500, 8000, 9000, 1, '[]',"
			     " '[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,8]');"
			     "INSERT INTO steps VALUES (9, 43, 'node1', 0, 1002, 'bob', 79,"
			     " '/sys/fs/cgroup/job_43/step_0', 2000, NULL, 5000, 0, '[]', '[]');"
			     "INSERT INTO step_tags VALUES (8, 'PROJECT_NAME', 'alpha');"
			     "INSERT INTO step_operations VALUES (8, 'write', 8, 0, 4000, 8388608,"
			     " 256, 512, '[0,0,0,0,0,0,0,0,8]');"
			     "INSERT INTO step_processes VALUES (8, 'dd', 0, 0, 8, 8388608, 0);"
			     "INSERT INTO step_mounts VALUES (8, 53, '/mnt/nfs', 'server:/export',"
			     " '4.2', 1048576, 1048576, 8, 0, 4000, 0, 8388608);",
			     NULL, NULL, NULL),
		SQLITE_OK);
	sqlite3_close(db);
}

/* What the reader finds of job 42, the same before and after the migration. */
static void expect_job_42(const struct fixture *f)
{
	struct report_filter *filter = calloc(1, sizeof(*filter));
	struct report_database *database = NULL;
	struct report_set set;
	char error[512] = "";
	const struct vnfs_step_record *step;

	assert_non_null(filter);
	filter->job_count = 1;
	vnfs_workload_of_slurm_job(&filter->jobs[0].workload, 42);
	report_set_init(&set);
	if (report_database_open(&database, f->path, filter, error, sizeof(error)) < 0)
		fail_msg("open: %s", error);
	assert_int_equal(report_database_read_job(database, &set, error, sizeof(error)), 1);
	assert_int_equal(report_database_read_job(database, &set, error, sizeof(error)), 0);
	assert_int_equal(set.count, 2);
	step = set.records[0].step_id == 0 ? &set.records[0] : &set.records[1];
	assert_int_equal(step->workload.source, VNFS_SOURCE_SLURM);
	assert_string_equal(step->workload.job, "42");
	assert_string_equal(step->workload.part, "0");
	assert_int_equal(step->job_id, 42);
	assert_int_equal(step->uid, 1001);
	assert_string_equal(step->user, "alice");
	assert_string_equal(step->cgroup_path, "/sys/fs/cgroup/job_42/step_0");
	assert_int_equal(step->start_time_ms, 1500);
	assert_int_equal(step->end_time_ms, 8000);
	assert_true(step->finished);
	assert_int_equal(step->stats->operations[VNFS_OP_WRITE].count, 8);
	assert_int_equal(step->stats->operations[VNFS_OP_WRITE].bytes, 8388608);
	assert_int_equal(step->stats->operations[VNFS_OP_WRITE].latency_histogram[8], 8);
	assert_int_equal(step->stats->request_size_histogram[VNFS_DIRECTION_WRITE][20], 8);
	assert_string_equal(vnfs_tags_find(step->tags, "PROJECT_NAME"), "alpha");
	assert_int_equal(step->process_count, 1);
	assert_string_equal(step->processes[0].comm, "dd");
	assert_int_equal(step->processes[0].stats.write_bytes, 8388608);
	assert_int_equal(step->mount_count, 1);
	assert_string_equal(step->mounts[0].source, "server:/export");
	assert_int_equal(step->mounts[0].stats.write_bytes, 8388608);
	step = step == &set.records[0] ? &set.records[1] : &set.records[0];
	assert_string_equal(step->workload.part, "batch");
	assert_int_equal(step->step_id, VNFS_STEP_BATCH);
	report_database_close(database);
	report_set_free(&set);
	free(filter);
}

static void test_version_1_history_read_then_migrated(void **state)
{
	struct fixture *f = *state;
	struct vnfs_sink sink;
	struct history_step steps[1];
	struct vnfs_step_record records[1];
	char text[512];
	sqlite3 *db;

	make_version_1_history(f);
	/* vnfs-report reads a history no helper has migrated yet. */
	expect_job_42(f);

	/* The helper migrates it: every row kept, keyed by identity now. */
	open_sink(f, &sink);
	db = open_db(f->path);
	assert_int_equal(query_int(db, "PRAGMA user_version"), 3);
	assert_int_equal(query_int(db, "SELECT count(*) FROM step_wire"), 0);
	query_text(db, "SELECT source || ':' || job || ':' || job_id FROM jobs ORDER BY job", text,
		   sizeof(text));
	assert_string_equal(text, "slurm:42:42|slurm:43:43");
	query_text(db,
		   "SELECT id || ':' || job || '.' || part || ':' || step_id FROM steps ORDER BY id",
		   text, sizeof(text));
	assert_string_equal(text, "7:42.batch:4294967291|8:42.0:0|9:43.0:0");
	assert_int_equal(query_int(db, "SELECT count(*) FROM step_operations WHERE step = 8"), 1);
	assert_int_equal(query_int(db, "SELECT count(*) FROM step_tags WHERE step = 8"), 1);
	query_text(db, "SELECT name FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL"
		       " ORDER BY name", text, sizeof(text));
	assert_string_equal(text, "jobs_by_end|jobs_by_job_id|jobs_by_start|jobs_by_uid|"
				  "steps_by_sample");
	expect_job_42(f);

	/* Job 43's step 0 written again lands on its migrated row. */
	history_step_init(&steps[0], 43, 0, 1002, "bob", "node1", 2000, 1);
	publish(&sink, steps, 1, records);
	assert_int_equal(query_int(db, "SELECT count(*) FROM steps WHERE job = '43'"), 1);
	assert_int_equal(query_int(db, "SELECT id FROM steps WHERE job = '43'"), 9);
	assert_int_equal(query_int(db, "SELECT sample_time_ms FROM steps WHERE id = 9"),
			 2000 + 60000);
	sink.close(sink.state);

	/* The rebuilt tables cascade as the old ones did. */
	assert_int_equal(sqlite3_exec(db, "PRAGMA foreign_keys = ON;"
					  "DELETE FROM jobs WHERE job = '42'", NULL, NULL, NULL),
			 SQLITE_OK);
	assert_int_equal(query_int(db, "SELECT count(*) FROM steps"), 1);
	assert_int_equal(query_int(db, "SELECT count(*) FROM step_operations WHERE step = 8"), 0);
	assert_int_equal(query_int(db, "SELECT count(*) FROM step_mounts WHERE step = 8"), 0);
	assert_int_equal(query_int(db, "SELECT count(*) FROM step_tags WHERE step = 8"), 0);
	/* history_step_init gives a step five operations. */
	assert_int_equal(query_int(db, "SELECT count(*) FROM step_operations WHERE step = 9"), 5);
	sqlite3_close(db);
}

static void test_intervals_then_finished(void **state)
{
	struct fixture *f = *state;
	struct vnfs_sink sink;
	struct history_step steps[2];
	struct vnfs_step_record records[2];
	const int64_t start = 1795000000000LL;

	open_sink(f, &sink);
	history_step_init(&steps[0], 42, VNFS_STEP_BATCH, 1001, "alice", "node1", start, 1);
	history_step_init(&steps[1], 42, 0, 1001, "alice", "node1", start + 500, 1);
	publish(&sink, steps, 2, records);

	/* A later interval: step 0 did twice as much, the batch step nothing. */
	history_step_init(&steps[1], 42, 0, 1001, "alice", "node1", start + 500, 2);
	steps[1].record.sample_time_ms = start + 120000;
	publish(&sink, steps, 2, records);

	sqlite3 *db = open_db(f->path);
	char text[1024];
	assert_int_equal(query_int(db, "SELECT count(*) FROM jobs"), 1);
	assert_int_equal(query_int(db, "SELECT finished FROM jobs WHERE job_id = 42"), 0);
	assert_int_equal(query_int(db, "SELECT end_time_ms IS NULL FROM jobs"), 1);
	assert_int_equal(query_int(db, "SELECT start_time_ms FROM jobs"), start);
	assert_int_equal(query_int(db, "SELECT sample_time_ms FROM jobs"), start + 120000);
	query_text(db, "SELECT step_id || ':' || sample_time_ms FROM steps ORDER BY step_id", text,
		   sizeof(text));
	assert_string_equal(text, "0:1795000120000|4294967291:1795000060000");
	query_text(db,
		   "SELECT operation || '=' || count || '/' || errors || '/' || time_ns || '/' ||"
		   " bytes || '/' || p50_ns || '/' || p99_ns || '/' || latency_histogram"
		   " FROM step_operations JOIN steps ON steps.id = step"
		   " WHERE step_id = 0 ORDER BY operation",
		   text, sizeof(text));
	assert_string_equal(text,
			    "close=4/0/24576/0/6144/8192/[0,0,0,0,0,0,0,0,0,0,0,0,4]|"
			    "getattr=40/0/983040/0/24576/32768/"
			    "[0,0,0,0,0,0,0,0,0,0,0,0,0,0,40]|"
			    "open=4/0/393216/0/98304/131072/"
			    "[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,4]|"
			    "read=20/0/31457280/20971520/1572864/2097152/"
			    "[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,20]|"
			    "write=10/0/31457280/10485760/3145728/4194304/"
			    "[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,10]");
	query_text(db,
		   "SELECT comm || '=' || read_ops || '/' || read_bytes || '/' || write_ops || '/' ||"
		   " write_bytes || '/' || other_ops FROM step_processes JOIN steps"
		   " ON steps.id = step WHERE step_id = 0 ORDER BY comm",
		   text, sizeof(text));
	assert_string_equal(text, "dd=0/0/10/10485760/0|python3=20/20971520/0/0/48");
	query_text(db,
		   "SELECT device || ' ' || mount_point || ' ' || source || ' ' || version || ' ' ||"
		   " rsize || ' ' || wsize || ' ' || ops FROM step_mounts ORDER BY step", text,
		   sizeof(text));
	assert_string_equal(text, "42 /mnt/nfs server:/export 4.2 1048576 1048576 39|"
				  "42 /mnt/nfs server:/export 4.2 1048576 1048576 78");
	query_text(db, "SELECT name || '=' || value FROM step_tags", text, sizeof(text));
	assert_string_equal(text, "PROJECT_NAME=alpha|PROJECT_NAME=alpha");
	query_text(db, "SELECT read_size_histogram FROM steps WHERE step_id = 0", text,
		   sizeof(text));
	assert_string_equal(text, "[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,20]");

	/* The job ends: final counts, end times, finished. */
	history_step_finish(&steps[0], start + 130000);
	history_step_finish(&steps[1], start + 125000);
	history_set_operation(&steps[1], VNFS_OP_UNLINK, 3, 1, 0, 15);
	records[0] = steps[0].record;
	records[1] = steps[1].record;
	struct vnfs_job job = { .job_id = 42, .uid = 1001, .user = "alice", .node = "node1",
				.start_time_ms = start, .end_time_ms = start + 131000,
				.step_count = 2, .steps = records };
	vnfs_workload_of_slurm_job(&job.workload, job.job_id);
	sink.job_finished(sink.state, &job);

	assert_int_equal(query_int(db, "SELECT finished FROM jobs"), 1);
	assert_int_equal(query_int(db, "SELECT end_time_ms FROM jobs"), start + 131000);
	query_text(db, "SELECT finished || ':' || end_time_ms FROM steps ORDER BY step_id", text,
		   sizeof(text));
	assert_string_equal(text, "1:1795000125000|1:1795000130000");
	query_text(db,
		   "SELECT count || '/' || errors FROM step_operations WHERE operation = 'unlink'",
		   text, sizeof(text));
	assert_string_equal(text, "3/1");
	assert_int_equal(query_int(db, "SELECT count(*) FROM step_operations"), 11);

	/* A late interval with running records cannot undo the final state. */
	history_step_init(&steps[1], 42, 0, 1001, "alice", "node1", start + 500, 9);
	publish(&sink, &steps[1], 1, records);
	assert_int_equal(query_int(db, "SELECT finished FROM jobs"), 1);
	assert_int_equal(query_int(db, "SELECT count FROM step_operations JOIN steps ON id = step"
				       " WHERE step_id = 0 AND operation = 'read'"),
			 20);
	assert_int_equal(sink.dropped(sink.state), 0);
	sqlite3_close(db);
	sink.close(sink.state);
}

static void test_unchanged_steps_not_rewritten(void **state)
{
	struct fixture *f = *state;
	struct vnfs_sink sink;
	struct history_step step;
	struct vnfs_step_record record;

	open_sink(f, &sink);
	history_step_init(&step, 5, 0, 1001, "alice", "node1", 1795000000000LL, 1);
	publish(&sink, &step, 1, &record);
	sqlite3 *db = open_db(f->path);
	assert_int_equal(sqlite3_exec(db, "UPDATE steps SET sample_time_ms = 7", NULL, NULL, NULL),
			 SQLITE_OK);

	/* Same counters, later sample: nothing to write. */
	step.record.sample_time_ms += 1000;
	publish(&sink, &step, 1, &record);
	assert_int_equal(query_int(db, "SELECT sample_time_ms FROM steps"), 7);

	/* One more getattr: written. */
	step.stats.operations[VNFS_OP_GETATTR].count++;
	publish(&sink, &step, 1, &record);
	assert_int_equal(query_int(db, "SELECT sample_time_ms FROM steps"),
			 1795000000000LL + 61000);
	assert_int_equal(query_int(db, "SELECT count FROM step_operations WHERE operation = "
				       "'getattr'"),
			 21);
	sqlite3_close(db);
	sink.close(sink.state);
}

/* write_interval: running steps' rows at most that often, a finished job at
 * once.  Interval times are the collector's, so the test sets them. */
static void test_running_steps_written_per_write_interval(void **state)
{
	struct fixture *f = *state;
	const int64_t start = 1795000000000LL;
	struct vnfs_sink sink;
	struct history_step step;
	struct vnfs_step_record record;

	f->config.sqlite.write_interval_s = 30;
	open_sink(f, &sink);
	history_step_init(&step, 7, 0, 1001, "alice", "node1", start, 1);
	step.record.sample_time_ms = start + 1000;
	publish(&sink, &step, 1, &record);
	sqlite3 *db = open_db(f->path);
	assert_int_equal(query_int(db, "SELECT sample_time_ms FROM steps"), start + 1000);

	/* 29 s later, with new counts: not yet. */
	step.stats.operations[VNFS_OP_GETATTR].count++;
	step.record.sample_time_ms = start + 30000;
	publish(&sink, &step, 1, &record);
	assert_int_equal(query_int(db, "SELECT sample_time_ms FROM steps"), start + 1000);
	assert_int_equal(query_int(db, "SELECT count FROM step_operations WHERE operation = "
				       "'getattr'"),
			 20);

	/* 30 s after the last write: written. */
	step.record.sample_time_ms = start + 31000;
	publish(&sink, &step, 1, &record);
	assert_int_equal(query_int(db, "SELECT sample_time_ms FROM steps"), start + 31000);
	assert_int_equal(query_int(db, "SELECT count FROM step_operations WHERE operation = "
				       "'getattr'"),
			 21);

	/* The job finishes 1 s later: written at once. */
	step.stats.operations[VNFS_OP_GETATTR].count++;
	history_step_finish(&step, start + 32000);
	struct vnfs_job job = { .job_id = 7, .uid = 1001, .user = "alice", .node = "node1",
				.start_time_ms = start, .end_time_ms = start + 32000,
				.step_count = 1, .steps = &step.record };
	vnfs_workload_of_slurm_job(&job.workload, job.job_id);
	sink.job_finished(sink.state, &job);
	assert_int_equal(query_int(db, "SELECT finished FROM jobs WHERE job_id = 7"), 1);
	assert_int_equal(query_int(db, "SELECT count FROM step_operations WHERE operation = "
				       "'getattr'"),
			 22);
	assert_int_equal(sink.dropped(sink.state), 0);
	sqlite3_close(db);
	sink.close(sink.state);
}

static void finish_job(struct vnfs_sink *sink, uint32_t job_id, int64_t start, int64_t end)
{
	struct history_step step;
	history_step_init(&step, job_id, 0, 1001, "alice", "node1", start, 1);
	history_step_finish(&step, end);
	struct vnfs_job job = { .job_id = job_id, .uid = 1001, .user = "alice", .node = "node1",
				.start_time_ms = start, .end_time_ms = end,
				.step_count = 1, .steps = &step.record };
	vnfs_workload_of_slurm_job(&job.workload, job.job_id);
	sink->job_finished(sink->state, &job);
}

static void test_retention(void **state)
{
	struct fixture *f = *state;
	struct vnfs_sink sink;
	const int64_t day = 86400 * 1000LL;
	int64_t now = now_ms();

	open_sink(f, &sink);
	finish_job(&sink, 1, now - 11 * day, now - 10 * day);   /* expired */
	finish_job(&sink, 2, now - 7 * day, now - 6 * day);     /* kept */
	struct history_step running;
	struct vnfs_step_record record;
	history_step_init(&running, 3, 0, 1001, "alice", "node1", now - 30 * day, 1);
	publish(&sink, &running, 1, &record);                    /* running: kept */
	sink.close(sink.state);

	sqlite3 *db = open_db(f->path);
	assert_int_equal(query_int(db, "SELECT count(*) FROM jobs"), 3);
	assert_int_equal(query_int(db, "SELECT count(*) FROM step_operations"), 15);

	f->config.sqlite.retention_days = 7;
	open_sink(f, &sink);
	char text[64];
	query_text(db, "SELECT job_id FROM jobs ORDER BY job_id", text, sizeof(text));
	assert_string_equal(text, "2|3");
	/* The job's rows go with it. */
	query_text(db, "SELECT DISTINCT job_id FROM steps ORDER BY job_id", text, sizeof(text));
	assert_string_equal(text, "2|3");
	assert_int_equal(query_int(db, "SELECT count(*) FROM step_operations"), 10);
	assert_int_equal(query_int(db, "SELECT count(*) FROM step_processes"), 4);
	assert_int_equal(query_int(db, "SELECT count(*) FROM step_mounts"), 2);
	assert_int_equal(query_int(db, "SELECT count(*) FROM step_tags"), 2);
	sqlite3_close(db);
	sink.close(sink.state);
}

static void test_locked_database(void **state)
{
	struct fixture *f = *state;
	struct vnfs_sink sink;
	struct history_step steps[2];
	struct vnfs_step_record records[2];
	const int64_t start = 1795000000000LL;

	open_sink(f, &sink);
	sqlite3 *other = open_db(f->path);
	assert_int_equal(sqlite3_exec(other, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);

	history_step_init(&steps[0], 8, 0, 1001, "alice", "node1", start, 1);
	history_step_init(&steps[1], 8, 1, 1001, "alice", "node1", start, 1);
	int64_t before = now_ms();
	publish(&sink, steps, 2, records);
	int64_t took = now_ms() - before;
	assert_true(took < 1000);
	assert_int_equal(sink.dropped(sink.state), 2);

	/* A job finishing while locked waits in the retry queue. */
	before = now_ms();
	finish_job(&sink, 9, start, start + 5000);
	assert_true(now_ms() - before < 1000);
	assert_int_equal(sink.dropped(sink.state), 2);

	assert_int_equal(sqlite3_exec(other, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(query_int(other, "SELECT count(*) FROM jobs"), 0);

	/* Unlocked: the next interval writes everything, the queued job first. */
	publish(&sink, steps, 2, records);
	char text[64];
	query_text(other, "SELECT job_id || ':' || finished FROM jobs ORDER BY job_id", text,
		   sizeof(text));
	assert_string_equal(text, "8:0|9:1");
	assert_int_equal(query_int(other, "SELECT count(*) FROM steps WHERE job_id = 8"), 2);
	assert_int_equal(sink.dropped(sink.state), 2);
	sqlite3_close(other);
	sink.close(sink.state);
}

/*
 * A full disk (a 1 MiB tmpfs): the sink keeps going, queues finished jobs
 * it cannot write, drops (and counts) what does not fit in the queue, and
 * writes the queue once there is room: every job is either in the database
 * or counted as dropped.
 */
static void test_disk_full(void **state)
{
	struct fixture *f = *state;
	char mount_point[128];
	snprintf(mount_point, sizeof(mount_point), "%s/small", f->directory);
	assert_int_equal(mkdir(mount_point, 0755), 0);
	if (mount("tmpfs", mount_point, "tmpfs", 0, "size=1m") != 0)
		fail_msg("cannot mount a tmpfs on %s (the unit tests run as root): %s", mount_point,
			 strerror(errno));
	snprintf(f->config.sqlite.path, sizeof(f->config.sqlite.path), "%s/history.db",
		 mount_point);

	struct vnfs_sink sink;
	open_sink(f, &sink);
	const uint32_t jobs = 1000;
	for (uint32_t job = 1; job <= jobs; job++)
		finish_job(&sink, job, 1795000000000LL, 1795000060000LL);
	uint64_t dropped = sink.dropped(sink.state);
	assert_true(dropped > 0); /* 1000 jobs need about 2 MiB */
	sqlite3 *full = open_db(f->config.sqlite.path);
	int64_t written_while_full = query_int(full, "SELECT count(*) FROM jobs");
	sqlite3_close(full);
	assert_true(written_while_full > 0);
	assert_true(written_while_full + (int64_t)dropped < jobs); /* the rest are queued */

	/* Room again: the next interval writes the queued jobs first. */
	assert_int_equal(mount("tmpfs", mount_point, "tmpfs", MS_REMOUNT, "size=64m"), 0);
	struct vnfs_interval empty = { .time_ms = 1795000070000LL, .node = "node1" };
	sink.publish(sink.state, &empty);
	sqlite3 *db = open_db(f->config.sqlite.path);
	assert_int_equal(query_int(db, "SELECT count(*) FROM jobs WHERE finished = 1") + dropped,
			 jobs);
	/* The queue held the newest 64 of those that failed. */
	assert_int_equal(query_int(db, "SELECT max(job_id) FROM jobs"), jobs);
	char text[64];
	query_text(db, "PRAGMA integrity_check", text, sizeof(text));
	assert_string_equal(text, "ok");
	sqlite3_close(db);
	sink.close(sink.state);
	assert_int_equal(umount(mount_point), 0);
}

static void test_bad_path(void **state)
{
	struct fixture *f = *state;
	struct vnfs_sink sink;
	char error[256] = "";
	snprintf(f->config.sqlite.path, sizeof(f->config.sqlite.path), "/proc/vnfs/no/history.db");
	assert_int_equal(vnfs_sink_sqlite_open(&sink, &f->config, error, sizeof(error)), -1);
	assert_string_equal(error, "sqlite: cannot create /proc/vnfs/no: No such file or directory");
	f->config.sqlite.path[0] = '\0';
	assert_int_equal(vnfs_sink_sqlite_open(&sink, &f->config, error, sizeof(error)), -1);
	assert_string_equal(error, "sqlite: no database path configured");
}

/* The history holds every user's jobs: root's and the admin group's only. */
static void test_files_are_not_world_readable(void **state)
{
	struct fixture *f = *state;
	struct vnfs_sink sink;
	struct history_step steps[1];
	struct vnfs_step_record records[1];
	const char *suffixes[] = { "", "-wal", "-shm" };
	char path[160];
	struct stat status;

	f->config.helper.admin_gid = 65534;
	open_sink(f, &sink);
	history_step_init(&steps[0], 8, 0, 1001, "alice", "node1", 1795000000000LL, 1);
	publish(&sink, steps, 1, records);
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s%s", f->path, suffixes[i]);
		assert_int_equal(lstat(path, &status), 0);
		assert_int_equal(status.st_mode & 07777, 0640);
		if (geteuid() == 0) {
			assert_int_equal(status.st_uid, 0);
			assert_int_equal(status.st_gid, 65534);
		}
	}
	sink.close(sink.state);
}

static off_t wal_size(const struct fixture *f)
{
	char path[160];
	struct stat status;

	snprintf(path, sizeof(path), "%s-wal", f->path);
	return stat(path, &status) == 0 ? status.st_size : 0;
}

/*
 * A reader holding a transaction stops every checkpoint: without a bound the
 * log grew by every interval (103 MB in the guest).  With wal_limit = 1 MiB,
 * 40 intervals of 50 changing steps leave it under 1 MiB plus one interval's
 * writes; the steps' samples wait (counted), and once the reader ends the
 * next interval checkpoints, truncates the log and writes the latest sample.
 */
static void test_wal_bounded_under_a_reader(void **state)
{
	enum { STEPS = 50, INTERVALS = 40 };
	struct fixture *f = *state;
	struct vnfs_sink sink;
	static struct history_step steps[STEPS];
	static struct vnfs_step_record records[STEPS];
	const int64_t start = 1795000000000LL;
	off_t largest = 0, one_interval;
	uint64_t waited;

	f->config.sqlite.wal_limit_bytes = 1024 * 1024;
	open_sink(f, &sink);
	for (int i = 0; i < STEPS; i++)
		history_step_init(&steps[i], 8, (uint32_t)i, 1001, "alice", "node1", start, 1);
	publish(&sink, steps, STEPS, records);
	one_interval = wal_size(f);
	assert_true(one_interval > 0);

	sqlite3 *reader = open_db(f->path);
	assert_int_equal(sqlite3_exec(reader, "BEGIN; SELECT count(*) FROM steps;", NULL, NULL,
				      NULL), SQLITE_OK);
	for (int round = 2; round < INTERVALS + 2; round++) {
		for (int i = 0; i < STEPS; i++) {
			history_step_init(&steps[i], 8, (uint32_t)i, 1001, "alice", "node1", start,
					  (uint64_t)round);
			steps[i].record.sample_time_ms = start + 60000 + round * 1000;
		}
		publish(&sink, steps, STEPS, records);
		if (wal_size(f) > largest)
			largest = wal_size(f);
	}
	waited = sink.dropped(sink.state);
	print_message("one interval %lld bytes, largest %lld, waited %llu\n", (long long)one_interval, (long long)largest, (unsigned long long)waited);
	assert_true(largest <= 1024 * 1024 + one_interval);
	assert_true(waited > 0);
	assert_int_equal(waited % STEPS, 0);
	assert_int_equal(sqlite3_exec(reader, "COMMIT", NULL, NULL, NULL), SQLITE_OK);

	publish(&sink, steps, STEPS, records);
	assert_true(wal_size(f) <= 1024 * 1024);
	assert_int_equal(sink.dropped(sink.state), waited);
	char sql[128];
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM steps WHERE job_id = 8 AND "
		 "sample_time_ms = %lld", (long long)(start + 60000 + (INTERVALS + 1) * 1000));
	assert_int_equal(query_int(reader, sql), STEPS);
	sqlite3_close(reader);
	sink.close(sink.state);
}

/* The jobs the reader lists for filter, "job:records|...", in its order. */
static void list_jobs(const struct fixture *f, const struct report_filter *filter, char *out,
		      size_t size)
{
	struct report_database *database = NULL;
	struct vnfs_workload next;
	char error[512] = "";
	size_t used = 0;
	out[0] = '\0';
	if (report_database_open(&database, f->path, filter, error, sizeof(error)) < 0)
		fail_msg("open: %s", error);
	while (report_database_next(database, &next)) {
		struct report_set set;
		report_set_init(&set);
		assert_string_equal(next.part, "");
		assert_int_equal(report_database_read_job(database, &set, error, sizeof(error)), 1);
		for (size_t i = 0; i < set.count; i++)
			assert_true(vnfs_workload_same_job(&set.records[i].workload, &next));
		/* "42:3" for Slurm's job 42 of 3 steps, "kubernetes:ns/pod:1" */
		used += (size_t)snprintf(out + used, size - used, "%s%s%s%s:%zu",
					 used > 0 ? "|" : "",
					 next.source == VNFS_SOURCE_SLURM
						 ? "" : vnfs_workload_source_name(next.source),
					 next.source == VNFS_SOURCE_SLURM ? "" : ":", next.job,
					 set.count);
		report_set_free(&set);
	}
	report_database_close(database);
}

/*
 * A version-2 history is listed by (source, job): every known source's
 * jobs, in vnfs_workload_compare's order (9 before 10), selected by
 * [source, job] pairs; a source this vnfs does not know (a newer writer's)
 * is not listed.
 */
static void test_listing_by_workload(void **state)
{
	static const uint32_t jobs[] = { 100, 10, 42, 9 };
	struct fixture *f = *state;
	struct vnfs_sink sink;
	struct history_step steps[2];
	struct vnfs_step_record records[2];
	struct report_filter *filter = calloc(1, sizeof(*filter));
	char text[512];
	uint32_t job_id = 0;
	sqlite3 *db;

	assert_non_null(filter);
	open_sink(f, &sink);
	for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
		history_step_init(&steps[0], jobs[i], 0, 1001, "alice", "node1", 1000, 1);
		history_step_init(&steps[1], jobs[i], VNFS_STEP_BATCH, 1001, "alice", "node1", 1000,
				  1);
		publish(&sink, steps, jobs[i] == 42 ? 2 : 1, records);
	}
	history_step_init(&steps[0], 42, 0, 1001, "alice", "node2", 1000, 1);
	publish(&sink, steps, 1, records);
	/* A Kubernetes pod's container, through the same sink. */
	struct vnfs_workload container;
	assert_int_equal(vnfs_workload_set(&container, VNFS_SOURCE_KUBERNETES, "ml/resnet-7f9c",
					   "trainer", text, sizeof(text)),
			 0);
	history_step_init(&steps[0], 0, 0, 1002, "bob", "node1", 1000, 1);
	vnfs_record_identify(&steps[0].record, &container);
	publish(&sink, steps, 1, records);
	sink.close(sink.state);
	db = open_db(f->path);
	assert_int_equal(sqlite3_exec(db,
				      "INSERT INTO jobs (source, job, node, uid, user,"
				      " start_time_ms, sample_time_ms) VALUES ('nosuch', '42',"
				      " 'node1', 1001, 'alice', 1000, 2000)",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	assert_int_equal(query_int(db, "SELECT count(*) FROM jobs WHERE source = 'slurm'"), 5);
	/* Slurm's numbers are NULL beside another source's identity. */
	assert_int_equal(query_int(db, "SELECT count(*) FROM steps WHERE source = 'kubernetes'"
				       " AND job = 'ml/resnet-7f9c' AND part = 'trainer'"
				       " AND job_id IS NULL AND step_id IS NULL"),
			 1);
	assert_int_equal(query_int(db, "SELECT count(*) FROM jobs WHERE source = 'kubernetes'"
				       " AND job_id IS NULL"),
			 1);
	sqlite3_close(db);

	list_jobs(f, filter, text, sizeof(text));
	assert_string_equal(text, "9:1|10:1|42:3|100:1|kubernetes:ml/resnet-7f9c:1");
	filter->job_count = 1;
	filter->jobs[0].workload = container;
	filter->jobs[0].workload.part[0] = '\0';
	list_jobs(f, filter, text, sizeof(text));
	assert_string_equal(text, "kubernetes:ml/resnet-7f9c:1");
	memset(filter, 0, sizeof(*filter));

	/* Selected as workloads: Slurm's 42 and 100 (steps select their job), not 7. */
	filter->job_count = 3;
	vnfs_workload_of_slurm_step(&filter->jobs[0].workload, 100, 0);
	vnfs_workload_of_slurm_job(&filter->jobs[1].workload, 7);
	vnfs_workload_of_slurm_job(&filter->jobs[2].workload, 42);
	list_jobs(f, filter, text, sizeof(text));
	assert_string_equal(text, "42:3|100:1");
	/* Another source's "42" is not Slurm's. */
	filter->job_count = 1;
	filter->jobs[0].workload.source = VNFS_SOURCE_COUNT;
	list_jobs(f, filter, text, sizeof(text));
	assert_string_equal(text, "");
	memset(filter, 0, sizeof(*filter));
	filter->job_count = 1;
	vnfs_workload_of_slurm_job(&filter->jobs[0].workload, 10);
	list_jobs(f, filter, text, sizeof(text));
	assert_string_equal(text, "10:1");

	/* The first job of the listing, by its workload. */
	struct report_database *database = NULL;
	struct vnfs_workload first;
	char error[512];
	memset(filter, 0, sizeof(*filter));
	assert_int_equal(report_database_open(&database, f->path, filter, error, sizeof(error)), 0);
	assert_true(report_database_next(database, &first));
	assert_int_equal(vnfs_workload_slurm_job_id(&first, &job_id), 0);
	assert_int_equal(job_id, 9);
	report_database_close(database);
	free(filter);
}

/*
 * Two wire rows of a step on mount 42 (NFSv4): READ, 10 x scale RPCs with
 * a timeout and a delay, and WRITE, 5 x scale with three other errors, a
 * byte count past 2^63 and times in the last latency bucket.
 */
static void wire_rows_init(struct vnfs_wire_record rows[2], uint64_t scale)
{
	memset(rows, 0, 2 * sizeof(rows[0]));
	for (int i = 0; i < 2; i++) {
		rows[i].device = 42;
		snprintf(rows[i].mount_point, sizeof(rows[i].mount_point), "/mnt/nfs");
		rows[i].version = 4;
	}
	struct vnfs_wire_stats *read = &rows[0].stats, *write = &rows[1].stats;
	snprintf(rows[0].procedure, sizeof(rows[0].procedure), "READ");
	read->rpcs = 10 * scale;
	read->transmissions = 11 * scale;
	read->major_timeouts = 1;
	read->bytes_sent = 10 * scale * 236;
	read->bytes_received = 10 * scale * 1048676;
	read->backlog_ns = 10 * scale * 1536;
	read->rtt_ns = 10 * scale * 1572864;
	read->execute_ns = 10 * scale * 3145728;
	read->errors = 2;
	read->error_kinds[VNFS_WIRE_ERROR_TIMEOUT] = 1;
	read->error_kinds[VNFS_WIRE_ERROR_DELAY] = 1;
	read->backlog_histogram[10] = 10 * scale;
	read->rtt_histogram[20] = 10 * scale;
	read->execute_histogram[21] = 10 * scale;

	snprintf(rows[1].procedure, sizeof(rows[1].procedure), "WRITE");
	write->rpcs = 5 * scale;
	write->transmissions = 5 * scale;
	write->bytes_sent = UINT64_MAX - 5 * scale;
	write->bytes_received = 5 * scale * 120;
	write->backlog_ns = 7;
	write->rtt_ns = 5 * scale * (1ull << 34);
	write->execute_ns = 5 * scale * (3ull << 34);
	write->errors = 3;
	write->error_kinds[VNFS_WIRE_ERROR_OTHER] = 3;
	write->backlog_histogram[0] = 4 * scale;
	write->backlog_histogram[2] = scale;
	write->rtt_histogram[34] = 5 * scale;
	write->execute_histogram[VNFS_LATENCY_BUCKETS - 1] = 5 * scale;
}

static void assert_wire_equal(const struct vnfs_wire_record *got,
			      const struct vnfs_wire_record *want)
{
	assert_int_equal(got->device, want->device);
	assert_string_equal(got->mount_point, want->mount_point);
	assert_int_equal(got->version, want->version);
	assert_string_equal(got->procedure, want->procedure);
	assert_int_equal(got->stats.rpcs, want->stats.rpcs);
	assert_int_equal(got->stats.transmissions, want->stats.transmissions);
	assert_int_equal(got->stats.major_timeouts, want->stats.major_timeouts);
	assert_int_equal(got->stats.bytes_sent, want->stats.bytes_sent);
	assert_int_equal(got->stats.bytes_received, want->stats.bytes_received);
	assert_int_equal(got->stats.backlog_ns, want->stats.backlog_ns);
	assert_int_equal(got->stats.rtt_ns, want->stats.rtt_ns);
	assert_int_equal(got->stats.execute_ns, want->stats.execute_ns);
	assert_int_equal(got->stats.errors, want->stats.errors);
	for (int kind = 0; kind < VNFS_WIRE_ERRORS; kind++)
		assert_int_equal(got->stats.error_kinds[kind], want->stats.error_kinds[kind]);
	for (int b = 0; b < VNFS_LATENCY_BUCKETS; b++) {
		assert_int_equal(got->stats.backlog_histogram[b], want->stats.backlog_histogram[b]);
		assert_int_equal(got->stats.rtt_histogram[b], want->stats.rtt_histogram[b]);
		assert_int_equal(got->stats.execute_histogram[b], want->stats.execute_histogram[b]);
	}
	/* Nothing else in the row: the whole struct, padding of the texts included. */
	assert_memory_equal(got, want, sizeof(*got));
}

/* Every step of Slurm's job job_id, read back through the reader into set. */
static void read_slurm_job(const struct fixture *f, uint32_t job_id, struct report_set *set)
{
	struct report_filter *filter = calloc(1, sizeof(*filter));
	struct report_database *database = NULL;
	char error[512] = "";

	assert_non_null(filter);
	filter->job_count = 1;
	vnfs_workload_of_slurm_job(&filter->jobs[0].workload, job_id);
	report_set_init(set);
	if (report_database_open(&database, f->path, filter, error, sizeof(error)) < 0)
		fail_msg("open: %s", error);
	if (report_database_read_job(database, set, error, sizeof(error)) != 1)
		fail_msg("read: %s", error);
	assert_int_equal(report_database_read_job(database, set, error, sizeof(error)), 0);
	report_database_close(database);
	free(filter);
}

/* The one step of job job_id in the history, its RPCs compared with want. */
static void expect_wire(const struct fixture *f, uint32_t job_id,
			const struct vnfs_wire_record *want, size_t count)
{
	struct report_set set;

	read_slurm_job(f, job_id, &set);
	assert_int_equal(set.count, 1);
	assert_int_equal(set.records[0].wire_count, count);
	if (count == 0)
		assert_null(set.records[0].wire);
	for (size_t i = 0; i < count; i++)
		assert_wire_equal(&set.records[0].wire[i], &want[i]);
	report_set_free(&set);
}

/*
 * A step's RPCs go to step_wire with its mounts: upserted at every write of
 * the step (also when only RPCs moved, as writeback's do), final at FINISH,
 * deleted with the job; the reader gives them back exactly.
 */
static void test_wire_rows_written_and_read_back(void **state)
{
	struct fixture *f = *state;
	struct vnfs_sink sink;
	struct history_step step;
	struct vnfs_step_record record;
	struct vnfs_wire_record wire[2], expected[2];
	const int64_t start = 1795000000000LL;
	char text[1024];

	open_sink(f, &sink);
	history_step_init(&step, 50, 0, 1001, "alice", "node1", start, 1);
	wire_rows_init(wire, 1);
	step.record.wire = wire;
	step.record.wire_count = 2;
	publish(&sink, &step, 1, &record);

	sqlite3 *db = open_db(f->path);
	query_text(db,
		   "SELECT device || ' ' || mount_point || ' ' || version || ' ' || procedure"
		   " || ' ' || rpcs || ' ' || transmissions || ' ' || major_timeouts || ' ' ||"
		   " bytes_sent || ' ' || bytes_received || ' ' || backlog_ns || ' ' || rtt_ns"
		   " || ' ' || execute_ns || ' ' || errors || ' ' || error_kinds || ' ' ||"
		   " backlog_histogram || ' ' || rtt_histogram || ' ' || execute_histogram"
		   " FROM step_wire JOIN steps ON steps.id = step WHERE job = '50'"
		   " ORDER BY procedure",
		   text, sizeof(text));
	assert_string_equal(
		text,
		"42 /mnt/nfs 4 READ 10 11 1 2360 10486760 15360 15728640 31457280 2"
		" {\"timeout\":1,\"delay\":1,\"stale\":0,\"access\":0,\"noent\":0,\"io\":0,"
		"\"other\":0} [0,0,0,0,0,0,0,0,0,0,10]"
		" [0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,10]"
		" [0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,10]|"
		"42 /mnt/nfs 4 WRITE 5 5 0 -6 600 7 85899345920 257698037760 3"
		" {\"timeout\":0,\"delay\":0,\"stale\":0,\"access\":0,\"noent\":0,\"io\":0,"
		"\"other\":3} [4,0,1]"
		" [0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,5]"
		" [0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,5]");
	wire_rows_init(expected, 1);
	expect_wire(f, 50, expected, 2);

	/* Only RPCs moved (pages written back after the writer's calls): written. */
	wire_rows_init(wire, 2);
	step.record.sample_time_ms = start + 61000;
	publish(&sink, &step, 1, &record);
	assert_int_equal(query_int(db, "SELECT sample_time_ms FROM steps WHERE job = '50'"),
			 start + 61000);
	query_text(db, "SELECT procedure || '=' || rpcs FROM step_wire ORDER BY procedure", text,
		   sizeof(text));
	assert_string_equal(text, "READ=20|WRITE=10");
	wire_rows_init(expected, 2);
	expect_wire(f, 50, expected, 2);

	/* Unchanged: not rewritten. */
	assert_int_equal(sqlite3_exec(db, "UPDATE step_wire SET rpcs = 7", NULL, NULL, NULL),
			 SQLITE_OK);
	step.record.sample_time_ms = start + 62000;
	publish(&sink, &step, 1, &record);
	query_text(db, "SELECT procedure || '=' || rpcs FROM step_wire ORDER BY procedure", text,
		   sizeof(text));
	assert_string_equal(text, "READ=7|WRITE=7");

	/* The job finishes: the final rows, whatever was written before. */
	wire_rows_init(wire, 3);
	history_step_finish(&step, start + 70000);
	struct vnfs_job job = { .job_id = 50, .uid = 1001, .user = "alice", .node = "node1",
				.start_time_ms = start, .end_time_ms = start + 70000,
				.step_count = 1, .steps = &step.record };
	vnfs_workload_of_slurm_job(&job.workload, job.job_id);
	sink.job_finished(sink.state, &job);
	assert_int_equal(query_int(db, "SELECT finished FROM jobs WHERE job = '50'"), 1);
	query_text(db, "SELECT procedure || '=' || rpcs FROM step_wire ORDER BY procedure", text,
		   sizeof(text));
	assert_string_equal(text, "READ=30|WRITE=15");
	wire_rows_init(expected, 3);
	expect_wire(f, 50, expected, 2);
	assert_int_equal(sink.dropped(sink.state), 0);
	sink.close(sink.state);

	/* The rows go with their job. */
	assert_int_equal(sqlite3_exec(db, "PRAGMA foreign_keys = ON;"
					  "DELETE FROM jobs WHERE job = '50'", NULL, NULL, NULL),
			 SQLITE_OK);
	assert_int_equal(query_int(db, "SELECT count(*) FROM step_wire"), 0);
	sqlite3_close(db);
}

/* A finished job queued for retry keeps its own copy of its RPCs: the
 * collector's arrays are gone by the time it is written. */
static void test_finished_job_wire_queued(void **state)
{
	struct fixture *f = *state;
	struct vnfs_sink sink;
	struct history_step step;
	struct vnfs_wire_record wire[2], expected[2];
	const int64_t start = 1795000000000LL;

	open_sink(f, &sink);
	sqlite3 *other = open_db(f->path);
	assert_int_equal(sqlite3_exec(other, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
	history_step_init(&step, 51, 0, 1001, "alice", "node1", start, 1);
	history_step_finish(&step, start + 5000);
	wire_rows_init(wire, 4);
	step.record.wire = wire;
	step.record.wire_count = 2;
	struct vnfs_job job = { .job_id = 51, .uid = 1001, .user = "alice", .node = "node1",
				.start_time_ms = start, .end_time_ms = start + 5000,
				.step_count = 1, .steps = &step.record };
	vnfs_workload_of_slurm_job(&job.workload, job.job_id);
	sink.job_finished(sink.state, &job);
	memset(wire, 0xa5, sizeof(wire));
	assert_int_equal(sqlite3_exec(other, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(query_int(other, "SELECT count(*) FROM jobs"), 0);

	struct vnfs_interval empty = { .time_ms = start + 6000, .node = "node1" };
	sink.publish(sink.state, &empty);
	assert_int_equal(query_int(other, "SELECT finished FROM jobs WHERE job = '51'"), 1);
	wire_rows_init(expected, 4);
	expect_wire(f, 51, expected, 2);
	assert_int_equal(sink.dropped(sink.state), 0);
	sqlite3_close(other);
	sink.close(sink.state);
}

/*
 * A history of schema version 2, as a helper before RPCs were counted left
 * it: job 42's step 0 (row 5, with an operation and a mount) and its batch
 * step (row 6).
 */
static void make_version_2_history(const struct fixture *f)
{
	char directory[160];
	sqlite3 *db = NULL;

	snprintf(directory, sizeof(directory), "%s/db", f->directory);
	assert_int_equal(mkdir(directory, 0700), 0);
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, vnfs_history_migration(0), NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, vnfs_history_migration(1), NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(
		sqlite3_exec(db,
			     "PRAGMA user_version = 2;"
			     "INSERT INTO operations VALUES ('write', 'DATA');"
			     "INSERT INTO jobs VALUES ('slurm', '42', 'node1', 42, 1001, 'alice',"
			     " 1000, 9000, 9000, 1);"
			     "INSERT INTO steps VALUES (5, 'slurm', '42', 'node1', '0', 42, 0,"
			     " 1001, 'alice', 78, '/sys/fs/cgroup/job_42/step_0', 1500, 8000,"
			     " 9000, 1, '[]', '[]');"
			     "INSERT INTO steps VALUES (6, 'slurm', '42', 'node1', 'batch', 42,"
			     " 4294967291, 1001, 'alice', 77, '/sys/fs/cgroup/job_42/step_batch',"
			     " 1000, 9000, 9000, 1, '[]', '[]');"
			     "INSERT INTO step_operations VALUES (5, 'write', 8, 0, 4000, 8388608,"
			     " 256, 512, '[0,0,0,0,0,0,0,0,8]');"
			     "INSERT INTO step_mounts VALUES (5, 53, '/mnt/nfs', 'server:/export',"
			     " '4.2', 1048576, 1048576, 8, 0, 4000, 0, 8388608);",
			     NULL, NULL, NULL),
		SQLITE_OK);
	sqlite3_close(db);
}

/* Job 42 of make_version_2_history as the reader gives it: no RPCs. */
static void expect_version_2_job(const struct fixture *f)
{
	struct report_set set;

	read_slurm_job(f, 42, &set);
	assert_int_equal(set.count, 2);
	for (size_t i = 0; i < set.count; i++) {
		const struct vnfs_step_record *step = &set.records[i];
		assert_int_equal(step->wire_count, 0);
		assert_null(step->wire);
		if (strcmp(step->workload.part, "0") != 0) {
			assert_string_equal(step->workload.part, "batch");
			continue;
		}
		assert_int_equal(step->stats->operations[VNFS_OP_WRITE].count, 8);
		assert_int_equal(step->mount_count, 1);
		assert_int_equal(step->mounts[0].device, 53);
		assert_int_equal(step->mounts[0].stats.write_bytes, 8388608);
	}
	report_set_free(&set);
}

static void test_version_2_history_read_then_migrated(void **state)
{
	struct fixture *f = *state;
	struct vnfs_sink sink;
	struct history_step step;
	struct vnfs_step_record record;
	struct vnfs_wire_record wire[2];
	char text[256];

	make_version_2_history(f);
	/* vnfs-report reads it as it is: steps without RPCs. */
	expect_version_2_job(f);

	/* The helper migrates it to 3: every row kept, step_wire empty. */
	open_sink(f, &sink);
	sqlite3 *db = open_db(f->path);
	assert_int_equal(query_int(db, "PRAGMA user_version"), 3);
	query_text(db, "SELECT id || ':' || job || '.' || part FROM steps ORDER BY id", text,
		   sizeof(text));
	assert_string_equal(text, "5:42.0|6:42.batch");
	assert_int_equal(query_int(db, "SELECT count(*) FROM jobs"), 1);
	assert_int_equal(query_int(db, "SELECT count(*) FROM step_operations WHERE step = 5"), 1);
	assert_int_equal(query_int(db, "SELECT count(*) FROM step_mounts WHERE step = 5"), 1);
	assert_int_equal(query_int(db, "SELECT count(*) FROM step_wire"), 0);
	expect_version_2_job(f);

	/* A step of another job gets its RPCs beside the migrated rows. */
	history_step_init(&step, 43, 0, 1002, "bob", "node1", 2000, 1);
	wire_rows_init(wire, 1);
	step.record.wire = wire;
	step.record.wire_count = 2;
	publish(&sink, &step, 1, &record);
	sink.close(sink.state);
	assert_int_equal(query_int(db, "SELECT count(*) FROM step_wire JOIN steps ON id = step"
				       " WHERE job = '43'"),
			 2);
	expect_wire(f, 43, wire, 2);
	expect_version_2_job(f);
	sqlite3_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_migration_from_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_version_1_history_read_then_migrated, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_intervals_then_finished, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unchanged_steps_not_rewritten, setup, teardown),
		cmocka_unit_test_setup_teardown(test_running_steps_written_per_write_interval, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_retention, setup, teardown),
		cmocka_unit_test_setup_teardown(test_locked_database, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disk_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_files_are_not_world_readable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wal_bounded_under_a_reader, setup, teardown),
		cmocka_unit_test_setup_teardown(test_listing_by_workload, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wire_rows_written_and_read_back, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_finished_job_wire_queued, setup, teardown),
		cmocka_unit_test_setup_teardown(test_version_2_history_read_then_migrated, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
