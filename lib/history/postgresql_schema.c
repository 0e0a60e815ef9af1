/*
 * postgresql_schema.c — the PostgreSQL history's migrations (see
 * postgresql_schema.h, docs/SCHEMA.md).
 *
 * The tables and columns are the SQLite history's (lib/history/schema.c,
 * version 3), so that one query reads both where the two dialects agree:
 * the same names, the same _ms integers, the same JSON-text histograms,
 * "user" (quoted: a reserved word in PostgreSQL, and accepted so by SQLite).
 * The column lists are not generated from one shared definition: SQLite's
 * schema is a chain of migrations whose text is fixed once released (a
 * database at version 2 must be rebuilt by exactly migration 2 -> 3), so
 * there is no single current list to derive both from without rewriting
 * released migrations; tests/unit/test_postgresql.c checks instead that the
 * two schemas have the same columns in the same order.
 *
 * Beyond SQLite's: node is part of every job and step key (and so of every
 * child row's, through steps.id), because many helpers share one database;
 * step_samples keeps one row per step and interval, for time series; and
 * row-level security lets each user's own role read only their jobs.
 */
#include "lib/history/postgresql_schema.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "lib/log.h"

/* pg_advisory_xact_lock's key for migrating: "vnfs" in ASCII. */
#define MIGRATION_LOCK_KEY "1986946675"

/* The tables a user's role reads only their own rows of: their "user"
 * column, or their step's (a child row is visible when its step is). */
#define OWN_ROWS_POLICY(table, condition)                                                  \
	"ALTER TABLE " table " ENABLE ROW LEVEL SECURITY;\n"                                \
	"CREATE POLICY " table "_writer ON " table " TO " VNFS_POSTGRESQL_WRITER_ROLE        \
	" USING (true) WITH CHECK (true);\n"                                                 \
	"CREATE POLICY " table "_admin ON " table " FOR SELECT TO " VNFS_POSTGRESQL_ADMIN_ROLE \
	" USING (true);\n"                                                                   \
	"CREATE POLICY " table "_own ON " table " FOR SELECT TO " VNFS_POSTGRESQL_USERS_ROLE   \
	" USING (" condition ");\n"                                                          \
	"GRANT SELECT ON " table " TO " VNFS_POSTGRESQL_ADMIN_ROLE ", "                       \
	VNFS_POSTGRESQL_USERS_ROLE ";\n"                                                     \
	"GRANT SELECT, INSERT, UPDATE, DELETE ON " table " TO " VNFS_POSTGRESQL_WRITER_ROLE ";\n"

#define OWN_USER "\"user\" = session_user::text"
#define OWN_STEP "EXISTS (SELECT 1 FROM steps WHERE steps.id = step)"

/* migrations[i] takes the schema from version i to i + 1. */
static const char *const migrations[] = {
	/* 0 -> 1 */
	"DO $$ BEGIN\n"
	"  IF (SELECT count(*) FROM pg_roles WHERE rolname IN ('" VNFS_POSTGRESQL_WRITER_ROLE
	"', '" VNFS_POSTGRESQL_ADMIN_ROLE "', '" VNFS_POSTGRESQL_USERS_ROLE "')) < 3 THEN\n"
	"    RAISE EXCEPTION 'the roles " VNFS_POSTGRESQL_WRITER_ROLE ", " VNFS_POSTGRESQL_ADMIN_ROLE
	" and " VNFS_POSTGRESQL_USERS_ROLE " must exist before the schema is created"
	" (docs/INSTALL.md)';\n"
	"  END IF;\n"
	"END $$;\n"
	"CREATE TABLE vnfs_schema (\n"
	"  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),\n"
	"  version integer NOT NULL\n"
	");\n"
	"INSERT INTO vnfs_schema (version) VALUES (0);\n"
	"GRANT SELECT ON vnfs_schema TO " VNFS_POSTGRESQL_ADMIN_ROLE ", " VNFS_POSTGRESQL_USERS_ROLE
	", " VNFS_POSTGRESQL_WRITER_ROLE ";\n"
	"CREATE TABLE operations (\n"
	"  name text PRIMARY KEY,\n"
	"  class text NOT NULL\n"
	");\n"
	"GRANT SELECT ON operations TO " VNFS_POSTGRESQL_ADMIN_ROLE ", " VNFS_POSTGRESQL_USERS_ROLE
	";\n"
	"GRANT SELECT, INSERT, UPDATE ON operations TO " VNFS_POSTGRESQL_WRITER_ROLE ";\n"
	"CREATE TABLE jobs (\n"
	"  source text NOT NULL,\n"
	"  job text NOT NULL,\n"
	"  node text NOT NULL,\n"
	"  job_id bigint,\n"
	"  uid bigint NOT NULL,\n"
	"  \"user\" text NOT NULL,\n"
	"  start_time_ms bigint NOT NULL,\n"
	"  end_time_ms bigint,\n"
	"  sample_time_ms bigint NOT NULL,\n"
	"  finished integer NOT NULL DEFAULT 0,\n"
	"  PRIMARY KEY (source, job, node)\n"
	");\n"
	"CREATE INDEX jobs_by_start ON jobs (start_time_ms);\n"
	"CREATE INDEX jobs_by_end ON jobs (end_time_ms);\n"
	"CREATE INDEX jobs_by_user ON jobs (\"user\", start_time_ms);\n"
	"CREATE INDEX jobs_by_job_id ON jobs (job_id);\n"
	"CREATE TABLE steps (\n"
	"  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,\n"
	"  source text NOT NULL,\n"
	"  job text NOT NULL,\n"
	"  node text NOT NULL,\n"
	"  part text NOT NULL,\n"
	"  job_id bigint,\n"
	"  step_id bigint,\n"
	"  uid bigint NOT NULL,\n"
	"  \"user\" text NOT NULL,\n"
	"  cgroup_id bigint NOT NULL,\n"
	"  cgroup_path text NOT NULL,\n"
	"  start_time_ms bigint NOT NULL,\n"
	"  end_time_ms bigint,\n"
	"  sample_time_ms bigint NOT NULL,\n"
	"  finished integer NOT NULL,\n"
	"  read_size_histogram text NOT NULL,\n"
	"  write_size_histogram text NOT NULL,\n"
	"  UNIQUE (source, job, node, part),\n"
	"  FOREIGN KEY (source, job, node) REFERENCES jobs (source, job, node) ON DELETE CASCADE\n"
	");\n"
	"CREATE INDEX steps_by_sample ON steps (node, sample_time_ms);\n"
	"CREATE INDEX steps_by_user ON steps (\"user\");\n"
	"CREATE TABLE step_tags (\n"
	"  step bigint NOT NULL REFERENCES steps (id) ON DELETE CASCADE,\n"
	"  name text NOT NULL,\n"
	"  value text NOT NULL,\n"
	"  PRIMARY KEY (step, name)\n"
	");\n"
	"CREATE TABLE step_operations (\n"
	"  step bigint NOT NULL REFERENCES steps (id) ON DELETE CASCADE,\n"
	"  operation text NOT NULL REFERENCES operations (name),\n"
	"  count bigint NOT NULL,\n"
	"  errors bigint NOT NULL,\n"
	"  time_ns bigint NOT NULL,\n"
	"  bytes bigint NOT NULL,\n"
	"  p50_ns bigint NOT NULL,\n"
	"  p99_ns bigint NOT NULL,\n"
	"  latency_histogram text NOT NULL,\n"
	"  PRIMARY KEY (step, operation)\n"
	");\n"
	"CREATE TABLE step_processes (\n"
	"  step bigint NOT NULL REFERENCES steps (id) ON DELETE CASCADE,\n"
	"  comm text NOT NULL,\n"
	"  read_ops bigint NOT NULL,\n"
	"  read_bytes bigint NOT NULL,\n"
	"  write_ops bigint NOT NULL,\n"
	"  write_bytes bigint NOT NULL,\n"
	"  other_ops bigint NOT NULL,\n"
	"  PRIMARY KEY (step, comm)\n"
	");\n"
	"CREATE TABLE step_mounts (\n"
	"  step bigint NOT NULL REFERENCES steps (id) ON DELETE CASCADE,\n"
	"  device bigint NOT NULL,\n"
	"  mount_point text NOT NULL,\n"
	"  source text NOT NULL,\n"
	"  version text NOT NULL,\n"
	"  rsize bigint NOT NULL,\n"
	"  wsize bigint NOT NULL,\n"
	"  ops bigint NOT NULL,\n"
	"  errors bigint NOT NULL,\n"
	"  time_ns bigint NOT NULL,\n"
	"  read_bytes bigint NOT NULL,\n"
	"  write_bytes bigint NOT NULL,\n"
	"  PRIMARY KEY (step, device)\n"
	");\n"
	"CREATE TABLE step_wire (\n"
	"  step bigint NOT NULL REFERENCES steps (id) ON DELETE CASCADE,\n"
	"  device bigint NOT NULL,\n"
	"  mount_point text NOT NULL,\n"
	"  version integer NOT NULL,\n"
	"  procedure text NOT NULL,\n"
	"  rpcs bigint NOT NULL,\n"
	"  transmissions bigint NOT NULL,\n"
	"  major_timeouts bigint NOT NULL,\n"
	"  bytes_sent bigint NOT NULL,\n"
	"  bytes_received bigint NOT NULL,\n"
	"  backlog_ns bigint NOT NULL,\n"
	"  rtt_ns bigint NOT NULL,\n"
	"  execute_ns bigint NOT NULL,\n"
	"  errors bigint NOT NULL,\n"
	"  error_kinds text NOT NULL,\n"
	"  backlog_histogram text NOT NULL,\n"
	"  rtt_histogram text NOT NULL,\n"
	"  execute_histogram text NOT NULL,\n"
	"  PRIMARY KEY (step, device, version, procedure)\n"
	");\n"
	/* One row per step and interval: the cumulative counters at
	 * sample_time_ms, for time series (a rate is the difference of two
	 * rows).  Keyed by the step's identity, not steps.id, so that a sample
	 * stands on its own and a replayed one is recognised by its key. */
	"CREATE TABLE step_samples (\n"
	"  source text NOT NULL,\n"
	"  job text NOT NULL,\n"
	"  node text NOT NULL,\n"
	"  part text NOT NULL,\n"
	"  sample_time_ms bigint NOT NULL,\n"
	"  uid bigint NOT NULL,\n"
	"  \"user\" text NOT NULL,\n"
	"  finished integer NOT NULL,\n"
	"  read_count bigint NOT NULL,\n"
	"  read_bytes bigint NOT NULL,\n"
	"  write_count bigint NOT NULL,\n"
	"  write_bytes bigint NOT NULL,\n"
	"  metadata_count bigint NOT NULL,\n"
	"  errors bigint NOT NULL,\n"
	"  time_ns bigint NOT NULL,\n"
	"  rpcs bigint NOT NULL,\n"
	"  bytes_sent bigint NOT NULL,\n"
	"  bytes_received bigint NOT NULL,\n"
	"  PRIMARY KEY (source, job, node, part, sample_time_ms)\n"
	");\n"
	"CREATE INDEX step_samples_by_time ON step_samples (sample_time_ms);\n"
	OWN_ROWS_POLICY("jobs", OWN_USER)
	OWN_ROWS_POLICY("steps", OWN_USER)
	OWN_ROWS_POLICY("step_samples", OWN_USER)
	OWN_ROWS_POLICY("step_tags", OWN_STEP)
	OWN_ROWS_POLICY("step_operations", OWN_STEP)
	OWN_ROWS_POLICY("step_processes", OWN_STEP)
	OWN_ROWS_POLICY("step_mounts", OWN_STEP)
	OWN_ROWS_POLICY("step_wire", OWN_STEP),
};

#define MIGRATIONS ((int)(sizeof(migrations) / sizeof(migrations[0])))
_Static_assert(MIGRATIONS == VNFS_POSTGRESQL_SCHEMA_VERSION,
	       "the migrations must reach VNFS_POSTGRESQL_SCHEMA_VERSION (postgresql_schema.h)");

static void first_line_of(const char *message, const char *what, char *error,
			  size_t error_size);

/* Runs sql (no parameters: the migrations' constant text only).  Returns 0,
 * or -1 with the server's message in error. */
static int run(PGconn *connection, const char *sql, const char *what, char *error,
	       size_t error_size)
{
	PGresult *result = PQexec(connection, sql);
	ExecStatusType status = PQresultStatus(result);
	int ok = status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;

	if (!ok)
		first_line_of(result != NULL ? PQresultErrorMessage(result) : PQerrorMessage(connection),
			      what, error, error_size);
	PQclear(result);
	return ok ? 0 : -1;
}

/* The server's message, its first line only (a log line is one line). */
static void first_line_of(const char *message, const char *what, char *error, size_t error_size)
{
	size_t length = strcspn(message, "\n");

	snprintf(error, error_size, "postgresql: %s: %.*s", what, (int)length, message);
}

/* The one value of sql as text into out ("" for NULL).  Returns 0 or -1. */
static int query_value(PGconn *connection, const char *sql, char *out, size_t size,
		       char *error, size_t error_size)
{
	PGresult *result = PQexec(connection, sql);

	if (PQresultStatus(result) != PGRES_TUPLES_OK || PQntuples(result) != 1) {
		first_line_of(PQresultStatus(result) == PGRES_TUPLES_OK ? "vnfs_schema has no row"
			      : result != NULL ? PQresultErrorMessage(result)
					       : PQerrorMessage(connection),
			      "cannot read the schema version", error, error_size);
		PQclear(result);
		return -1;
	}
	snprintf(out, size, "%s", PQgetvalue(result, 0, 0));
	PQclear(result);
	return 0;
}

int vnfs_postgresql_schema_version(PGconn *connection, int *version, char *error,
				   size_t error_size)
{
	char value[32];

	/* Before the first migration there is no vnfs_schema to read. */
	if (query_value(connection, "SELECT to_regclass('vnfs_schema') IS NOT NULL", value,
			sizeof(value), error, error_size) < 0)
		return -1;
	if (strcmp(value, "t") != 0) {
		*version = 0;
		return 0;
	}
	if (query_value(connection, "SELECT version FROM vnfs_schema", value, sizeof(value),
			error, error_size) < 0)
		return -1;
	*version = atoi(value);
	return 0;
}

/*
 * One round: in a transaction holding the migration lock, reads the version
 * and, below the current one, runs the next migration.  *done says the
 * schema is current.  Another helper may have migrated while this one
 * waited for the lock: the version is read under it.
 */
static int migrate_round(PGconn *connection, bool *done, char *error, size_t error_size)
{
	char set_version[80];
	int version;

	if (run(connection, "BEGIN", "begin", error, error_size) < 0)
		return -1;
	if (run(connection, "SELECT pg_advisory_xact_lock(" MIGRATION_LOCK_KEY ")",
		"taking the migration lock", error, error_size) < 0 ||
	    vnfs_postgresql_schema_version(connection, &version, error, error_size) < 0)
		goto fail;
	if (version > MIGRATIONS) {
		snprintf(error, error_size,
			 "postgresql: database %s: schema version %d is newer than this vnfs "
			 "understands (%d); upgrade vnfs on this node",
			 PQdb(connection), version, MIGRATIONS);
		goto fail;
	}
	*done = version == MIGRATIONS;
	if (*done)
		return run(connection, "COMMIT", "commit", error, error_size);
	snprintf(set_version, sizeof(set_version), "UPDATE vnfs_schema SET version = %d",
		 version + 1);
	char what[64];
	snprintf(what, sizeof(what), "migration %d -> %d", version, version + 1);
	if (run(connection, migrations[version], what, error, error_size) < 0 ||
	    run(connection, set_version, what, error, error_size) < 0 ||
	    run(connection, "COMMIT", what, error, error_size) < 0)
		goto fail;
	vnfs_info("postgresql: database %s: schema migrated to version %d", PQdb(connection),
		  version + 1);
	return 0;
fail:
	PQclear(PQexec(connection, "ROLLBACK"));
	return -1;
}

int vnfs_postgresql_migrate(PGconn *connection, char *error, size_t error_size)
{
	bool done = false;

	for (int round = 0; round <= MIGRATIONS && !done; round++)
		if (migrate_round(connection, &done, error, error_size) < 0)
			return -1;
	if (!done) {
		snprintf(error, error_size, "postgresql: the schema did not reach version %d",
			 MIGRATIONS);
		return -1;
	}
	return 0;
}

const char *vnfs_postgresql_migration(int from_version)
{
	return from_version >= 0 && from_version < MIGRATIONS ? migrations[from_version] : NULL;
}
