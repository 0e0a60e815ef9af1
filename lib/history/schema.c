/*
 * schema.c — the history's migrations and the statements every program that
 * opens the history shares (see schema.h, docs/SCHEMA.md).
 */
#include "lib/history/schema.h"

#include <stdio.h>

#include <sqlite3.h>

#include "lib/log.h"
#include "lib/record.h"

/* migrations[i] takes the schema from user_version i to i + 1. */
static const char *const migrations[] = {
	/* 0 -> 1 */
	"CREATE TABLE operations (\n"
	"  name TEXT PRIMARY KEY,\n"
	"  class TEXT NOT NULL\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE jobs (\n"
	"  job_id INTEGER NOT NULL,\n"
	"  node TEXT NOT NULL,\n"
	"  uid INTEGER NOT NULL,\n"
	"  user TEXT NOT NULL,\n"
	"  start_time_ms INTEGER NOT NULL,\n"
	"  end_time_ms INTEGER,\n"
	"  sample_time_ms INTEGER NOT NULL,\n"
	"  finished INTEGER NOT NULL DEFAULT 0,\n"
	"  PRIMARY KEY (job_id, node)\n"
	");\n"
	"CREATE INDEX jobs_by_start ON jobs (start_time_ms);\n"
	"CREATE INDEX jobs_by_end ON jobs (end_time_ms);\n"
	"CREATE INDEX jobs_by_uid ON jobs (uid, start_time_ms);\n"
	"CREATE TABLE steps (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  job_id INTEGER NOT NULL,\n"
	"  node TEXT NOT NULL,\n"
	"  step_id INTEGER NOT NULL,\n"
	"  uid INTEGER NOT NULL,\n"
	"  user TEXT NOT NULL,\n"
	"  cgroup_id INTEGER NOT NULL,\n"
	"  cgroup_path TEXT NOT NULL,\n"
	"  start_time_ms INTEGER NOT NULL,\n"
	"  end_time_ms INTEGER,\n"
	"  sample_time_ms INTEGER NOT NULL,\n"
	"  finished INTEGER NOT NULL,\n"
	"  read_size_histogram TEXT NOT NULL,\n"
	"  write_size_histogram TEXT NOT NULL,\n"
	"  UNIQUE (job_id, node, step_id),\n"
	"  FOREIGN KEY (job_id, node) REFERENCES jobs (job_id, node) ON DELETE CASCADE\n"
	");\n"
	"CREATE INDEX steps_by_sample ON steps (node, sample_time_ms);\n"
	"CREATE TABLE step_tags (\n"
	"  step INTEGER NOT NULL REFERENCES steps (id) ON DELETE CASCADE,\n"
	"  name TEXT NOT NULL,\n"
	"  value TEXT NOT NULL,\n"
	"  PRIMARY KEY (step, name)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE step_operations (\n"
	"  step INTEGER NOT NULL REFERENCES steps (id) ON DELETE CASCADE,\n"
	"  operation TEXT NOT NULL REFERENCES operations (name),\n"
	"  count INTEGER NOT NULL,\n"
	"  errors INTEGER NOT NULL,\n"
	"  time_ns INTEGER NOT NULL,\n"
	"  bytes INTEGER NOT NULL,\n"
	"  p50_ns INTEGER NOT NULL,\n"
	"  p99_ns INTEGER NOT NULL,\n"
	"  latency_histogram TEXT NOT NULL,\n"
	"  PRIMARY KEY (step, operation)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE step_processes (\n"
	"  step INTEGER NOT NULL REFERENCES steps (id) ON DELETE CASCADE,\n"
	"  comm TEXT NOT NULL,\n"
	"  read_ops INTEGER NOT NULL,\n"
	"  read_bytes INTEGER NOT NULL,\n"
	"  write_ops INTEGER NOT NULL,\n"
	"  write_bytes INTEGER NOT NULL,\n"
	"  other_ops INTEGER NOT NULL,\n"
	"  PRIMARY KEY (step, comm)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE step_mounts (\n"
	"  step INTEGER NOT NULL REFERENCES steps (id) ON DELETE CASCADE,\n"
	"  device INTEGER NOT NULL,\n"
	"  mount_point TEXT NOT NULL,\n"
	"  source TEXT NOT NULL,\n"
	"  version TEXT NOT NULL,\n"
	"  rsize INTEGER NOT NULL,\n"
	"  wsize INTEGER NOT NULL,\n"
	"  ops INTEGER NOT NULL,\n"
	"  errors INTEGER NOT NULL,\n"
	"  time_ns INTEGER NOT NULL,\n"
	"  read_bytes INTEGER NOT NULL,\n"
	"  write_bytes INTEGER NOT NULL,\n"
	"  PRIMARY KEY (step, device)\n"
	") WITHOUT ROWID;\n",

	/*
	 * 1 -> 2: jobs and steps are keyed by the workload's identity
	 * (lib/workload.h): source, job and, for a step, part, as text.
	 * Slurm's numbers stay beside them (job_id, step_id; NULL for other
	 * sources), so that Slurm's rows keep every column they had.  SQLite
	 * cannot change a key in place: the two tables are rebuilt (with
	 * foreign keys off, see vnfs_history_migrate), keeping every step's
	 * id, so that the rows of step_tags, step_operations, step_processes
	 * and step_mounts stay theirs.
	 */
	"CREATE TABLE jobs_v2 (\n"
	"  source TEXT NOT NULL,\n"
	"  job TEXT NOT NULL,\n"
	"  node TEXT NOT NULL,\n"
	"  job_id INTEGER,\n"
	"  uid INTEGER NOT NULL,\n"
	"  user TEXT NOT NULL,\n"
	"  start_time_ms INTEGER NOT NULL,\n"
	"  end_time_ms INTEGER,\n"
	"  sample_time_ms INTEGER NOT NULL,\n"
	"  finished INTEGER NOT NULL DEFAULT 0,\n"
	"  PRIMARY KEY (source, job, node)\n"
	");\n"
	"INSERT INTO jobs_v2 SELECT 'slurm', CAST(job_id AS TEXT), node, job_id, uid, user,\n"
	"  start_time_ms, end_time_ms, sample_time_ms, finished FROM jobs;\n"
	"CREATE TABLE steps_v2 (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  source TEXT NOT NULL,\n"
	"  job TEXT NOT NULL,\n"
	"  node TEXT NOT NULL,\n"
	"  part TEXT NOT NULL,\n"
	"  job_id INTEGER,\n"
	"  step_id INTEGER,\n"
	"  uid INTEGER NOT NULL,\n"
	"  user TEXT NOT NULL,\n"
	"  cgroup_id INTEGER NOT NULL,\n"
	"  cgroup_path TEXT NOT NULL,\n"
	"  start_time_ms INTEGER NOT NULL,\n"
	"  end_time_ms INTEGER,\n"
	"  sample_time_ms INTEGER NOT NULL,\n"
	"  finished INTEGER NOT NULL,\n"
	"  read_size_histogram TEXT NOT NULL,\n"
	"  write_size_histogram TEXT NOT NULL,\n"
	"  UNIQUE (source, job, node, part),\n"
	"  FOREIGN KEY (source, job, node) REFERENCES jobs (source, job, node)"
	" ON DELETE CASCADE\n"
	");\n"
	"INSERT INTO steps_v2 SELECT id, 'slurm', CAST(job_id AS TEXT), node,\n"
	"  CASE step_id WHEN 4294967291 THEN 'batch' WHEN 4294967292 THEN 'extern'\n"
	"    WHEN 4294967290 THEN 'interactive' WHEN 4294967293 THEN 'pending'\n"
	"    ELSE CAST(step_id AS TEXT) END,\n"
	"  job_id, step_id, uid, user, cgroup_id, cgroup_path, start_time_ms, end_time_ms,\n"
	"  sample_time_ms, finished, read_size_histogram, write_size_histogram FROM steps;\n"
	"DROP TABLE steps;\n"
	"DROP TABLE jobs;\n"
	"ALTER TABLE jobs_v2 RENAME TO jobs;\n"
	"ALTER TABLE steps_v2 RENAME TO steps;\n"
	"CREATE INDEX jobs_by_start ON jobs (start_time_ms);\n"
	"CREATE INDEX jobs_by_end ON jobs (end_time_ms);\n"
	"CREATE INDEX jobs_by_uid ON jobs (uid, start_time_ms);\n"
	"CREATE INDEX jobs_by_job_id ON jobs (job_id);\n"
	"CREATE INDEX steps_by_sample ON steps (node, sample_time_ms);\n",

	/*
	 * 2 -> 3: a step's RPCs (lib/record.h, vnfs_wire_record), one row per
	 * mount, NFS version and procedure; a new table, no row of the others
	 * changes.  The counters are vnfs_wire_stats's under its JSON names
	 * (docs/JSON.md); error_kinds is a JSON object of every kind
	 * (vnfs_wire_error_names), the histograms JSON arrays as
	 * step_operations.latency_histogram.
	 */
	"CREATE TABLE step_wire (\n"
	"  step INTEGER NOT NULL REFERENCES steps (id) ON DELETE CASCADE,\n"
	"  device INTEGER NOT NULL,\n"
	"  mount_point TEXT NOT NULL,\n"
	"  version INTEGER NOT NULL,\n"
	"  procedure TEXT NOT NULL,\n"
	"  rpcs INTEGER NOT NULL,\n"
	"  transmissions INTEGER NOT NULL,\n"
	"  major_timeouts INTEGER NOT NULL,\n"
	"  bytes_sent INTEGER NOT NULL,\n"
	"  bytes_received INTEGER NOT NULL,\n"
	"  backlog_ns INTEGER NOT NULL,\n"
	"  rtt_ns INTEGER NOT NULL,\n"
	"  execute_ns INTEGER NOT NULL,\n"
	"  errors INTEGER NOT NULL,\n"
	"  error_kinds TEXT NOT NULL,\n"
	"  backlog_histogram TEXT NOT NULL,\n"
	"  rtt_histogram TEXT NOT NULL,\n"
	"  execute_histogram TEXT NOT NULL,\n"
	"  PRIMARY KEY (step, device, version, procedure)\n"
	") WITHOUT ROWID;\n",
};

/* The Slurm step names of migration 1 -> 2 (vnfs_step_name's). */
_Static_assert(VNFS_STEP_BATCH == 4294967291u && VNFS_STEP_EXTERN == 4294967292u &&
		       VNFS_STEP_INTERACTIVE == 4294967290u && VNFS_STEP_PENDING == 4294967293u,
	       "migration 1 -> 2 spells Slurm's special steps by these numbers");

#define MIGRATIONS ((int)(sizeof(migrations) / sizeof(migrations[0])))
_Static_assert(MIGRATIONS == VNFS_HISTORY_SCHEMA_VERSION,
	       "the migrations must reach VNFS_HISTORY_SCHEMA_VERSION (schema.h)");

int vnfs_history_exec(sqlite3 *db, const char *sql, const char *path, char *error,
		      size_t error_size)
{
	char *message = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &message) != SQLITE_OK) {
		snprintf(error, error_size, "sqlite: %s: %s", path,
			 message != NULL ? message : sqlite3_errmsg(db));
		sqlite3_free(message);
		return -1;
	}
	return 0;
}

int vnfs_history_schema_version(sqlite3 *db, int *version)
{
	sqlite3_stmt *statement;
	int rc;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &statement, NULL) != SQLITE_OK)
		return -1;
	rc = sqlite3_step(statement);
	if (rc == SQLITE_ROW)
		*version = sqlite3_column_int(statement, 0);
	sqlite3_finalize(statement);
	return rc == SQLITE_ROW ? 0 : -1;
}

/* A rebuilt table must leave every reference whole: any row
 * PRAGMA foreign_key_check reports fails the migration. */
static int check_foreign_keys(sqlite3 *db, const char *path, char *error, size_t error_size)
{
	sqlite3_stmt *statement;
	int rc;

	if (sqlite3_prepare_v2(db, "PRAGMA foreign_key_check", -1, &statement, NULL) != SQLITE_OK) {
		snprintf(error, error_size, "sqlite: %s: %s", path, sqlite3_errmsg(db));
		return -1;
	}
	rc = sqlite3_step(statement);
	if (rc == SQLITE_ROW)
		snprintf(error, error_size, "sqlite: %s: a row of table %s lost its reference",
			 path, (const char *)sqlite3_column_text(statement, 0));
	else if (rc != SQLITE_DONE)
		snprintf(error, error_size, "sqlite: %s: %s", path, sqlite3_errmsg(db));
	sqlite3_finalize(statement);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Migration step (from version step to step + 1) in one transaction. */
static int migrate_once(sqlite3 *db, int step, const char *path, char *error, size_t error_size)
{
	char set_version[48];

	snprintf(set_version, sizeof(set_version), "PRAGMA user_version = %d", step + 1);
	if (vnfs_history_exec(db, "BEGIN IMMEDIATE", path, error, error_size) < 0)
		return -1;
	if (vnfs_history_exec(db, migrations[step], path, error, error_size) < 0 ||
	    check_foreign_keys(db, path, error, error_size) < 0 ||
	    vnfs_history_exec(db, set_version, path, error, error_size) < 0 ||
	    vnfs_history_exec(db, "COMMIT", path, error, error_size) < 0) {
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	vnfs_info("sqlite: %s: schema migrated to version %d", path, step + 1);
	return 0;
}

int vnfs_history_migrate(sqlite3 *db, const char *path, char *error, size_t error_size)
{
	int version;

	if (vnfs_history_schema_version(db, &version) < 0) {
		snprintf(error, error_size, "sqlite: %s: cannot read the schema version: %s", path,
			 sqlite3_errmsg(db));
		return -1;
	}
	if (version > MIGRATIONS) {
		snprintf(error, error_size,
			 "sqlite: %s: schema version %d is newer than this vnfs understands (%d)",
			 path, version, MIGRATIONS);
		return -1;
	}
	/* Rebuilding a table drops the old one, which with foreign keys on
	 * would delete its children first; outside a transaction only. */
	if (version < MIGRATIONS &&
	    vnfs_history_exec(db, "PRAGMA foreign_keys = OFF", path, error, error_size) < 0)
		return -1;
	for (int step = version; step < MIGRATIONS; step++)
		if (migrate_once(db, step, path, error, error_size) < 0)
			return -1;
	return 0;
}

const char *vnfs_history_migration(int from_version)
{
	return from_version >= 0 && from_version < MIGRATIONS ? migrations[from_version] : NULL;
}
