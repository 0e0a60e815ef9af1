/*
 * reader.c — the SQLite history read back into step records (see reader.h).
 * Every statement here reads the tables lib/history/schema.c creates.
 */
#include "lib/history/reader.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "lib/history/postgresql_schema.h"
#include "lib/history/schema.h"
#include "lib/history/statement.h"
#include "lib/record_json.h"

static int operation_index(const char *name)
{
	for (int op = 0; op < VNFS_OP_COUNT; op++)
		if (strcmp(vnfs_operation_names[op], name) == 0)
			return op;
	return -1;
}

/*
 * What differs between the schemas read: a version-1 history knows only
 * Slurm's numbers; from version 2 jobs and steps are keyed by the
 * workload's identity (lib/workload.h, lib/history/schema.c), which the
 * step query returns after the columns both share.  From version 2 the jobs
 * of every source this vnfs knows are listed, in vnfs_workload_compare's
 * order: SQLite sorts by the two collations its engine defines
 * (sqlite_engine.c), PostgreSQL by an expression of the same order.  The
 * PostgreSQL history (postgresql_schema.c) has the tables and columns of
 * SQLite's version 3; its dialect differs in JSON arrays, null-safe
 * equality and the order.  "user" is quoted: in PostgreSQL a bare user is
 * the session's role.
 */
#define STEP_COLUMNS                                                              \
	"SELECT id, step_id, uid, \"user\", cgroup_id, cgroup_path, start_time_ms," \
	" end_time_ms, sample_time_ms, finished, read_size_histogram,"            \
	" write_size_histogram"
#define STEP_IDENTITY_COLUMN 12 /* source, job, part */
#define STEPS_OF_JOB                                                              \
	STEP_COLUMNS ", source, job, part FROM steps"                             \
	" WHERE source = ?3 AND job = ?1 AND node = ?2"

/* "'slurm',...,NULL": the sources this vnfs knows, for an IN list. */
#define SOURCE_NAME_SQL(constant, name, job_label, part_label, job_noun, part_noun) "'" name "',"
#define KNOWN_SOURCES VNFS_WORKLOAD_SOURCES(SOURCE_NAME_SQL) "NULL"

struct schema_queries {
	const char *known_jobs;    /* the condition that a jobs row's source is known */
	const char *job_columns;   /* a jobs row's identity: (job_id) or (source, job) */
	const char *selected_jobs; /* the condition that it is among ?1, a JSON array */
	const char *job_order;     /* the listing's order */
	const char *steps_of_job;  /* the steps of job ?1 (of source ?3) on node ?2 */
	const char *other_job;     /* the condition that a steps row is not of job ?3, ?5 */
	const char *listed_nodes;  /* the nodes of ?1, a JSON array of names */
	bool numbered_jobs;        /* jobs are Slurm's numbers (version 1) */
	bool has_wire;             /* step_wire exists (SQLite's version 3 on) */
};

static const struct schema_queries sqlite_queries[VNFS_HISTORY_SCHEMA_VERSION + 1] = {
	/* All Slurm's: ?1 holds job numbers, ?3 is a number or NULL. */
	[1] = {
		.known_jobs = "1",
		.job_columns = "job_id",
		.selected_jobs = "AND job_id IN (SELECT value FROM json_each(?1)) ",
		.job_order = "job_id, node",
		.steps_of_job = STEP_COLUMNS " FROM steps WHERE job_id = ?1 AND node = ?2",
		.other_job = "steps.job_id IS NOT ?3",
		.listed_nodes = "SELECT value FROM json_each(?1)",
		.numbered_jobs = true,
	},
	/* ?1 holds [source, job] pairs; ?3 and ?5 are the source and job, or NULL. */
	/* A newer writer's source is not listed, as take_operation skips its operations. */
#define IDENTITY_QUERIES(wire)                                                    \
	{                                                                         \
		.known_jobs = "source IN (" KNOWN_SOURCES ")",                    \
		.job_columns = "source, job",                                     \
		.selected_jobs = "AND (source, job) IN (SELECT json_extract(value, '$[0]')," \
				 " json_extract(value, '$[1]') FROM json_each(?1)) ", \
		.job_order = "source COLLATE vnfs_source, job COLLATE vnfs_text, node", \
		.steps_of_job = STEPS_OF_JOB,                                     \
		.other_job = "NOT (steps.source IS ?3 AND steps.job IS ?5)",      \
		.listed_nodes = "SELECT value FROM json_each(?1)",                \
		.has_wire = wire,                                                 \
	}
	[2] = IDENTITY_QUERIES(false),
	/* Version 3 adds step_wire (take_wire_row). */
	[3] = IDENTITY_QUERIES(true),
#undef IDENTITY_QUERIES
};
_Static_assert(VNFS_HISTORY_OLDEST_READ_VERSION == 1 && VNFS_HISTORY_SCHEMA_VERSION == 3,
	       "every schema read has its queries above");

/* A decimal job id: vnfs_workload_compare_text's numbers. */
#define DECIMAL_JOB "job ~ '^[0-9]+$'"

static const struct schema_queries postgresql_queries[VNFS_POSTGRESQL_SCHEMA_VERSION + 1] = {
	[1] = {
		.known_jobs = "source IN (" KNOWN_SOURCES ")",
		.job_columns = "source, job",
		.selected_jobs = "AND (source, job) IN (SELECT value ->> 0, value ->> 1"
				 " FROM json_array_elements(CAST(?1 AS json))) ",
		/* vnfs_workload_compare: sources in their order; decimal ids
		 * first, by value (the digits after leading zeros, shorter
		 * first), then with fewer leading zeros; other ids by bytes. */
		.job_order = "array_position(ARRAY[" KNOWN_SOURCES "]::text[], source),"
			     " source COLLATE \"C\", NOT (" DECIMAL_JOB "),"
			     " CASE WHEN " DECIMAL_JOB " THEN length(ltrim(job, '0')) ELSE 0 END,"
			     " CASE WHEN " DECIMAL_JOB " THEN ltrim(job, '0') ELSE job END"
			     " COLLATE \"C\", length(job), node COLLATE \"C\"",
		.steps_of_job = STEPS_OF_JOB,
		.other_job = "NOT (steps.source IS NOT DISTINCT FROM ?3"
			     " AND steps.job IS NOT DISTINCT FROM ?5)",
		.listed_nodes = "SELECT json_array_elements_text(CAST(?1 AS json))",
		.has_wire = true,
	},
};
_Static_assert(VNFS_POSTGRESQL_SCHEMA_VERSION == 1,
	       "every PostgreSQL schema read has its queries above");

struct reader {
	struct history_connection *connection;
	const struct schema_queries *queries;
	struct history_statement *steps, *operations, *processes, *mounts, *tags;
	struct history_statement *wire; /* NULL without step_wire */
	const char *path;
	char *error;
	size_t error_size;
};

static int sql_error(struct reader *reader, const char *what)
{
	snprintf(reader->error, reader->error_size, "%s: %s: %s", reader->path, what,
		 history_message(reader->connection));
	return -1;
}

static int prepare(struct reader *reader, const char *sql, struct history_statement **statement)
{
	if (history_prepare(reader->connection, sql, statement) < 0)
		return sql_error(reader, "preparing a query");
	return 0;
}

static void copy_column(struct history_statement *statement, int column, char *buf, size_t size)
{
	const char *text = history_column_text(statement, column);
	snprintf(buf, size, "%s", text != NULL ? text : "");
}

/* "[0,3,5]" (the sink's form) into buckets. */
static int parse_histogram(const char *text, __u64 *buckets, size_t count)
{
	memset(buckets, 0, count * sizeof(*buckets));
	if (text == NULL)
		return -1;
	struct json_object *array = json_tokener_parse(text);
	int rc = -1;
	if (json_object_is_type(array, json_type_array) &&
	    json_object_array_length(array) <= count) {
		rc = 0;
		for (size_t b = 0; b < json_object_array_length(array); b++) {
			struct json_object *value = json_object_array_get_idx(array, b);
			if (!json_object_is_type(value, json_type_int)) {
				rc = -1;
				break;
			}
			buckets[b] = json_object_get_uint64(value);
		}
	}
	json_object_put(array);
	return rc;
}

/*
 * Each row of statement s, bound to step, handed to take (0, or -1 with a
 * message); what names the rows in an error.  The statement is reset
 * whatever happens.  Returns 0, or -1.
 */
typedef int take_row_fn(struct reader *reader, struct history_statement *s, int64_t step,
			void *into);

static int for_each_row(struct reader *reader, struct history_statement *s, int64_t step,
			const char *what, take_row_fn *take, void *into)
{
	int rc;

	if (history_bind_int64(s, 1, step) < 0)
		return sql_error(reader, what);
	while ((rc = history_step(s)) == 1) {
		if (take(reader, s, step, into) < 0) {
			history_reset(s);
			return -1;
		}
	}
	history_reset(s);
	return rc == 0 ? 0 : sql_error(reader, what);
}

/* array of count elements of size, grown by one zeroed element: the new
 * array, or NULL with "out of memory" said (array is then unchanged). */
static void *grown_by_one(struct reader *reader, const void *array, size_t count, size_t size)
{
	char *grown = realloc((void *)array, (count + 1) * size);
	if (grown == NULL) {
		snprintf(reader->error, reader->error_size, "out of memory");
		return NULL;
	}
	memset(grown + count * size, 0, size);
	return grown;
}

static int take_operation(struct reader *reader, struct history_statement *s, int64_t step,
			  void *into)
{
	struct vnfs_step_stats *stats = into;
	int op = operation_index(history_column_text(s, 0) ? history_column_text(s, 0) : "");
	if (op < 0)
		return 0; /* an operation this vnfs does not know: newer writer */
	struct vnfs_operation_stats *o = &stats->operations[op];
	o->count = (uint64_t)history_column_int64(s, 1);
	o->errors = (uint64_t)history_column_int64(s, 2);
	o->time_ns = (uint64_t)history_column_int64(s, 3);
	o->bytes = (uint64_t)history_column_int64(s, 4);
	if (parse_histogram(history_column_text(s, 5), o->latency_histogram,
			    VNFS_LATENCY_BUCKETS) < 0) {
		snprintf(reader->error, reader->error_size,
			 "%s: step row %lld: bad latency histogram", reader->path, (long long)step);
		return -1;
	}
	return 0;
}

static int take_process(struct reader *reader, struct history_statement *s, int64_t step,
			void *into)
{
	struct vnfs_step_record *record = into;
	struct vnfs_process_record *processes =
		grown_by_one(reader, record->processes, record->process_count, sizeof(*processes));
	(void)step;
	if (processes == NULL)
		return -1;
	record->processes = processes;
	struct vnfs_process_record *p = &processes[record->process_count++];
	copy_column(s, 0, p->comm, sizeof(p->comm));
	p->stats.read_ops = (uint64_t)history_column_int64(s, 1);
	p->stats.read_bytes = (uint64_t)history_column_int64(s, 2);
	p->stats.write_ops = (uint64_t)history_column_int64(s, 3);
	p->stats.write_bytes = (uint64_t)history_column_int64(s, 4);
	p->stats.other_ops = (uint64_t)history_column_int64(s, 5);
	return 0;
}

static int take_mount(struct reader *reader, struct history_statement *s, int64_t step,
		      void *into)
{
	struct vnfs_step_record *record = into;
	struct vnfs_mount_record *mounts =
		grown_by_one(reader, record->mounts, record->mount_count, sizeof(*mounts));
	(void)step;
	if (mounts == NULL)
		return -1;
	record->mounts = mounts;
	struct vnfs_mount_record *m = &mounts[record->mount_count++];
	m->device = (uint32_t)history_column_int64(s, 0);
	copy_column(s, 1, m->mount_point, sizeof(m->mount_point));
	copy_column(s, 2, m->source, sizeof(m->source));
	copy_column(s, 3, m->version, sizeof(m->version));
	m->rsize = (uint32_t)history_column_int64(s, 4);
	m->wsize = (uint32_t)history_column_int64(s, 5);
	m->stats.ops = (uint64_t)history_column_int64(s, 6);
	m->stats.errors = (uint64_t)history_column_int64(s, 7);
	m->stats.time_ns = (uint64_t)history_column_int64(s, 8);
	m->stats.read_bytes = (uint64_t)history_column_int64(s, 9);
	m->stats.write_bytes = (uint64_t)history_column_int64(s, 10);
	return 0;
}

/* step_wire's columns in the wire query: the counters after procedure and
 * the histograms after error_kinds, in vnfs_wire_counters' and
 * vnfs_wire_histograms' order (lib/record.h). */
#define WIRE_FIRST_COUNTER 4 /* after device, mount_point, version, procedure */
#define WIRE_ERROR_KINDS (WIRE_FIRST_COUNTER + VNFS_WIRE_COUNTERS)
#define WIRE_QUERY                                                                \
	"SELECT device, mount_point, version, procedure, rpcs, transmissions,"   \
	" major_timeouts, bytes_sent, bytes_received, backlog_ns, rtt_ns,"        \
	" execute_ns, errors, error_kinds, backlog_histogram, rtt_histogram,"     \
	" execute_histogram FROM step_wire WHERE step = ?1"                       \
	" ORDER BY device, version, procedure"

/*
 * error_kinds, {"timeout":0,...} (the sink's form): the kinds this vnfs
 * knows; one missing reads as 0, one it does not know is left out (as
 * take_operation leaves out an operation).  Returns 0, or -1.
 */
static int parse_error_kinds(const char *text, struct vnfs_wire_stats *stats)
{
	memset(stats->error_kinds, 0, sizeof(stats->error_kinds));
	if (text == NULL)
		return -1;
	struct json_object *object = json_tokener_parse(text);
	int rc = json_object_is_type(object, json_type_object) ? 0 : -1;
	for (int kind = 0; kind < VNFS_WIRE_ERRORS && rc == 0; kind++) {
		struct json_object *value;
		if (!json_object_object_get_ex(object, vnfs_wire_error_names[kind], &value))
			continue;
		if (!json_object_is_type(value, json_type_int))
			rc = -1;
		else
			stats->error_kinds[kind] = json_object_get_uint64(value);
	}
	json_object_put(object);
	return rc;
}

/* One step_wire row, the step's RPCs on a mount and procedure. */
static int take_wire_row(struct reader *reader, struct history_statement *s, int64_t step,
			 void *into)
{
	struct vnfs_step_record *record = into;
	int64_t device = history_column_int64(s, 0);
	int64_t version = history_column_int64(s, 2);
	struct vnfs_wire_record *rows, *row;

	if (record->wire_count == VNFS_MAX_WIRE_RECORDS) {
		snprintf(reader->error, reader->error_size, "%s: step row %lld: more than %d wire rows",
			 reader->path, (long long)step, VNFS_MAX_WIRE_RECORDS);
		return -1;
	}
	if (device < 0 || device > UINT32_MAX || version < 0 || version > UINT16_MAX) {
		snprintf(reader->error, reader->error_size,
			 "%s: step row %lld: a wire row's device or NFS version is out of range",
			 reader->path, (long long)step);
		return -1;
	}
	rows = grown_by_one(reader, record->wire, record->wire_count, sizeof(*rows));
	if (rows == NULL)
		return -1;
	record->wire = rows;
	row = &rows[record->wire_count++];
	row->device = (__u32)device;
	copy_column(s, 1, row->mount_point, sizeof(row->mount_point));
	row->version = (uint16_t)version;
	copy_column(s, 3, row->procedure, sizeof(row->procedure));
	for (int c = 0; c < VNFS_WIRE_COUNTERS; c++)
		*vnfs_wire_field(&row->stats, &vnfs_wire_counters[c]) =
			(uint64_t)history_column_int64(s, WIRE_FIRST_COUNTER + c);
	if (parse_error_kinds(history_column_text(s, WIRE_ERROR_KINDS), &row->stats) < 0) {
		snprintf(reader->error, reader->error_size,
			 "%s: step row %lld: bad wire error kinds", reader->path, (long long)step);
		return -1;
	}
	for (int h = 0; h < VNFS_WIRE_HISTOGRAMS; h++) {
		if (parse_histogram(history_column_text(s, WIRE_ERROR_KINDS + 1 + h),
				    vnfs_wire_field(&row->stats, &vnfs_wire_histograms[h]),
				    VNFS_LATENCY_BUCKETS) < 0) {
			snprintf(reader->error, reader->error_size,
				 "%s: step row %lld: bad wire latency histogram", reader->path,
				 (long long)step);
			return -1;
		}
	}
	return 0;
}

static int take_tag(struct reader *reader, struct history_statement *s, int64_t step, void *into)
{
	struct vnfs_tag_list *tags = into;
	const char *name = history_column_text(s, 0), *value = history_column_text(s, 1);
	char ignored[160];
	(void)reader;
	(void)step;
	if (name != NULL && value != NULL)
		vnfs_tags_set(tags, name, value, ignored, sizeof(ignored));
	return 0;
}

/*
 * A version-2 step's identity, from its own columns: text the writer took
 * from the registry, checked again like any text read from a file.
 */
static int read_identity(struct reader *reader, struct history_statement *s, int64_t step,
			 struct vnfs_step_record *record)
{
	const char *source = history_column_text(s, STEP_IDENTITY_COLUMN);
	const char *job = history_column_text(s, STEP_IDENTITY_COLUMN + 1);
	const char *part = history_column_text(s, STEP_IDENTITY_COLUMN + 2);
	enum vnfs_workload_source parsed;
	char message[256];

	if (source == NULL || job == NULL || part == NULL ||
	    vnfs_workload_source_parse(source, &parsed) < 0) {
		snprintf(reader->error, reader->error_size,
			 "%s: step row %lld: no workload source this vnfs knows", reader->path,
			 (long long)step);
		return -1;
	}
	if (vnfs_workload_set(&record->workload, parsed, job, part, message, sizeof(message)) < 0) {
		snprintf(reader->error, reader->error_size, "%s: step row %lld: %s", reader->path,
			 (long long)step, message);
		return -1;
	}
	return 0;
}

/* The step row s is on, with its operations, processes, mounts, RPCs and
 * tags, into record (its stats allocated).  Returns 0, or -1. */
static int read_step(struct reader *reader, struct history_statement *s, uint32_t job_id,
		     const char *node, struct vnfs_step_record *record)
{
	int64_t step = history_column_int64(s, 0);
	struct vnfs_step_stats *stats = calloc(1, sizeof(*stats));
	struct vnfs_tag_list tags;

	if (stats == NULL) {
		snprintf(reader->error, reader->error_size, "out of memory");
		return -1;
	}
	record->stats = stats;
	record->tags = vnfs_tags_none();
	vnfs_tags_init(&tags);
	if (reader->queries->numbered_jobs) {
		vnfs_record_identify_slurm(record, job_id, (uint32_t)history_column_int64(s, 1));
	} else if (read_identity(reader, s, step, record) < 0) {
		return -1;
	} else if (vnfs_workload_slurm_ids(&record->workload, &record->job_id,
					   &record->step_id) < 0) {
		record->job_id = 0; /* record.h: Slurm's numbers, 0 for other sources */
		record->step_id = 0;
	}
	record->uid = (uint32_t)history_column_int64(s, 2);
	copy_column(s, 3, record->user, sizeof(record->user));
	snprintf(record->node, sizeof(record->node), "%s", node);
	record->cgroup_id = (uint64_t)history_column_int64(s, 4);
	copy_column(s, 5, record->cgroup_path, sizeof(record->cgroup_path));
	record->start_time_ms = history_column_int64(s, 6);
	record->end_time_ms = history_column_int64(s, 7); /* NULL reads as 0 */
	record->sample_time_ms = history_column_int64(s, 8);
	record->finished = history_column_int64(s, 9) != 0;
	if (parse_histogram(history_column_text(s, 10),
			    stats->request_size_histogram[VNFS_DIRECTION_READ],
			    VNFS_SIZE_BUCKETS) < 0 ||
	    parse_histogram(history_column_text(s, 11),
			    stats->request_size_histogram[VNFS_DIRECTION_WRITE],
			    VNFS_SIZE_BUCKETS) < 0) {
		snprintf(reader->error, reader->error_size,
			 "%s: step row %lld: bad request size histogram", reader->path,
			 (long long)step);
		return -1;
	}
	if (for_each_row(reader, reader->operations, step, "reading operations", take_operation,
			 stats) < 0 ||
	    for_each_row(reader, reader->processes, step, "reading processes", take_process,
			 record) < 0 ||
	    for_each_row(reader, reader->mounts, step, "reading mounts", take_mount, record) < 0 ||
	    (reader->wire != NULL && for_each_row(reader, reader->wire, step, "reading RPCs",
						  take_wire_row, record) < 0) ||
	    for_each_row(reader, reader->tags, step, "reading tags", take_tag, &tags) < 0)
		return -1;
	record->tags = vnfs_tags_copy(&tags);
	if (record->tags == NULL) {
		record->tags = vnfs_tags_none();
		snprintf(reader->error, reader->error_size, "out of memory");
		return -1;
	}
	return 0;
}

/* Every step of one job on one node. */
static int read_job(struct reader *reader, struct report_set *set,
		    const struct vnfs_workload *job, const char *node)
{
	struct history_statement *s = reader->steps;
	uint32_t job_id = 0;
	int rc;

	if (!reader->queries->numbered_jobs) {
		rc = history_bind_text(s, 1, job->job) |
		     history_bind_text(s, 3, vnfs_workload_source_name(job->source));
	} else {
		/* A version-1 history's jobs are Slurm's numbers (read_listed_job). */
		if (vnfs_workload_slurm_job_id(job, &job_id) < 0)
			return 0;
		rc = history_bind_int64(s, 1, job_id);
	}
	if (rc < 0 || history_bind_text(s, 2, node) < 0)
		return sql_error(reader, "reading steps");
	while ((rc = history_step(s)) == 1) {
		struct vnfs_step_record record = { 0 };
		if (read_step(reader, s, job_id, node, &record) < 0) {
			vnfs_step_record_free_arrays(&record);
			history_reset(s);
			return -1;
		}
		if (report_set_take(set, &record) < 0) {
			history_reset(s);
			snprintf(reader->error, reader->error_size, "out of memory");
			return -1;
		}
	}
	history_reset(s);
	history_clear_bindings(s);
	return rc == 0 ? 0 : sql_error(reader, "reading steps");
}

/*
 * Opens the history at locator and finds the queries of its schema: 0, or
 * -1 with a message naming it (a missing or unknown schema refused, never
 * misread).
 */
static int open_history(const char *locator, struct history_connection **connection,
			const struct schema_queries **queries, char *error, size_t error_size)
{
	int version = -1, oldest = VNFS_HISTORY_OLDEST_READ_VERSION,
	    newest = VNFS_HISTORY_SCHEMA_VERSION;

	if (history_open(locator, connection, error, error_size) < 0)
		return -1;
	bool postgresql = (*connection)->engine->dialect == HISTORY_POSTGRESQL;
	if (postgresql) {
		oldest = 1;
		newest = VNFS_POSTGRESQL_SCHEMA_VERSION;
	}
	const char *name = (*connection)->name;
	if (history_schema_version(*connection, &version, error, error_size) < 0)
		version = -1;
	else if (version == 0)
		snprintf(error, error_size, "history database %s: not a vnfs history (schema version 0)",
			 name);
	else if (version < oldest || version > newest)
		snprintf(error, error_size,
			 "history database %s: schema version %d, this vnfs reads %d to %d", name,
			 version, oldest, newest);
	if (version < oldest || version > newest) {
		history_close(*connection);
		*connection = NULL;
		return -1;
	}
	*queries = postgresql ? &postgresql_queries[version] : &sqlite_queries[version];
	return 0;
}

/*
 * The selected jobs as a JSON array, for json_each(): Slurm's numbers for a
 * version-1 history (which holds no other source's), [source, job] pairs
 * from version 2.  NULL when out of memory.
 */
static char *job_list_json(const struct report_filter *filter, bool numbered_jobs)
{
	struct json_object *array = json_object_new_array();
	char *text = NULL;
	if (array == NULL)
		return NULL;
	for (size_t i = 0; i < filter->job_count; i++) {
		struct vnfs_workload job = filter->jobs[i].workload;
		uint32_t job_id;
		/* A source without a name has no rows: nothing to select. */
		if (vnfs_workload_source_name(job.source) == NULL)
			continue;
		if (!numbered_jobs) {
			struct json_object *pair = json_object_new_array();
			json_object_array_add(pair, json_object_new_string(
							    vnfs_workload_source_name(job.source)));
			json_object_array_add(pair, json_object_new_string(job.job));
			json_object_array_add(array, pair);
		} else {
			if (vnfs_workload_slurm_job_id(&job, &job_id) == 0)
				json_object_array_add(array, json_object_new_int64(job_id));
		}
	}
	text = strdup(json_object_to_json_string_ext(array, JSON_C_TO_STRING_PLAIN));
	json_object_put(array);
	return text;
}

/* A cursor over the history's (job, node) rows, in job order. */
struct report_database {
	struct reader reader;
	struct history_statement *jobs;
	char message[512];
	bool has_row;              /* jobs is on a row not read yet: */
	struct vnfs_workload job;  /* its job (part "") */
	struct history_statement *baseline; /* prepared at its first use */
};

void report_database_close(struct report_database *database)
{
	if (database == NULL)
		return;
	history_finalize(database->jobs);
	history_finalize(database->baseline);
	history_finalize(database->reader.steps);
	history_finalize(database->reader.operations);
	history_finalize(database->reader.processes);
	history_finalize(database->reader.mounts);
	history_finalize(database->reader.tags);
	history_finalize(database->reader.wire);
	history_close(database->reader.connection);
	free(database);
}

/* The job of the jobs row the cursor is on, checked like any text read from a file. */
static int read_listed_job(struct report_database *database)
{
	struct reader *reader = &database->reader;
	struct history_statement *s = database->jobs;
	enum vnfs_workload_source source;
	const char *name, *job;
	char message[256];

	if (reader->queries->numbered_jobs) {
		vnfs_workload_of_slurm_job(&database->job, (uint32_t)history_column_int64(s, 0));
		return 0;
	}
	name = history_column_text(s, 0);
	job = history_column_text(s, 1);
	if (name == NULL || job == NULL || vnfs_workload_source_parse(name, &source) < 0) {
		snprintf(reader->error, reader->error_size,
			 "%s: a jobs row of no workload source this vnfs knows", reader->path);
		return -1;
	}
	if (vnfs_workload_set(&database->job, source, job, "", message, sizeof(message)) < 0) {
		snprintf(reader->error, reader->error_size, "%s: a jobs row: %s", reader->path,
			 message);
		return -1;
	}
	return 0;
}

/* The node column of the jobs query: after the identity's. */
static int node_column(const struct report_database *database)
{
	return database->reader.queries->numbered_jobs ? 1 : 2;
}

static int advance(struct report_database *database)
{
	int rc = history_step(database->jobs);
	database->has_row = rc == 1;
	if (rc < 0)
		return sql_error(&database->reader, "reading jobs");
	if (database->has_row && read_listed_job(database) < 0) {
		database->has_row = false;
		return -1;
	}
	return 0;
}

/* The listing's query: the jobs rows that filter selects, in job order. */
static void jobs_query(const struct schema_queries *queries, const struct report_filter *filter,
		       char *sql, size_t size)
{
	snprintf(sql, size, "SELECT %s, node FROM jobs WHERE %s %s%s%s%s%s ORDER BY %s",
		 queries->job_columns, queries->known_jobs,
		 filter->job_count > 0 ? queries->selected_jobs : "",
		 filter->has_uid ? "AND uid = ?2 " : "",
		 filter->user_name[0] != '\0' ? "AND \"user\" = ?5 " : "",
		 filter->has_end ? "AND start_time_ms <= ?3 " : "",
		 filter->has_start ? "AND (end_time_ms IS NULL OR end_time_ms >= ?4) " : "",
		 queries->job_order);
}

/* Binds the listing's parameters (jobs_query).  Returns 0, or -1. */
static int bind_filter(struct report_database *database, const struct report_filter *filter)
{
	struct history_statement *s = database->jobs;
	int rc = 0;

	if (filter->job_count > 0) {
		char *job_list = job_list_json(filter, database->reader.queries->numbered_jobs);
		if (job_list == NULL) {
			snprintf(database->message, sizeof(database->message), "out of memory");
			return -1;
		}
		rc |= history_bind_text(s, 1, job_list);
		free(job_list);
	}
	if (filter->has_uid)
		rc |= history_bind_int64(s, 2, filter->uid);
	if (filter->has_end)
		rc |= history_bind_int64(s, 3, filter->end_ms);
	if (filter->has_start)
		rc |= history_bind_int64(s, 4, filter->start_ms);
	if (filter->user_name[0] != '\0')
		rc |= history_bind_text(s, 5, filter->user_name);
	return rc < 0 ? sql_error(&database->reader, "reading jobs") : 0;
}

int report_database_open(struct report_database **out, const char *path,
			 const struct report_filter *filter, char *error, size_t error_size)
{
	*out = NULL;
	struct report_database *database = calloc(1, sizeof(*database));
	if (database == NULL) {
		snprintf(error, error_size, "out of memory");
		return -1;
	}
	struct reader *reader = &database->reader;
	reader->error = database->message;
	reader->error_size = sizeof(database->message);
	if (open_history(path, &reader->connection, &reader->queries, error, error_size) < 0) {
		free(database);
		return -1;
	}
	/* Messages name the database as its engine does: a password in a
	 * PostgreSQL locator is never repeated. */
	reader->path = reader->connection->name;

	const struct schema_queries *queries = reader->queries;
	char sql[1024];
	jobs_query(queries, filter, sql, sizeof(sql));
	if (prepare(reader, sql, &database->jobs) < 0 ||
	    prepare(reader, queries->steps_of_job, &reader->steps) < 0 ||
	    prepare(reader,
		    "SELECT operation, count, errors, time_ns, bytes, latency_histogram"
		    " FROM step_operations WHERE step = ?1",
		    &reader->operations) < 0 ||
	    prepare(reader,
		    "SELECT comm, read_ops, read_bytes, write_ops, write_bytes, other_ops"
		    " FROM step_processes WHERE step = ?1",
		    &reader->processes) < 0 ||
	    prepare(reader,
		    "SELECT device, mount_point, source, version, rsize, wsize, ops, errors,"
		    " time_ns, read_bytes, write_bytes FROM step_mounts WHERE step = ?1",
		    &reader->mounts) < 0 ||
	    prepare(reader, "SELECT name, value FROM step_tags WHERE step = ?1", &reader->tags) < 0 ||
	    (queries->has_wire && prepare(reader, WIRE_QUERY, &reader->wire) < 0) ||
	    bind_filter(database, filter) < 0 || advance(database) < 0)
		goto fail;
	*out = database;
	return 0;
fail:
	snprintf(error, error_size, "%s", database->message);
	report_database_close(database);
	return -1;
}

bool report_database_next(const struct report_database *database, struct vnfs_workload *job)
{
	if (database == NULL || !database->has_row)
		return false;
	*job = database->job;
	return true;
}


int report_database_read_job(struct report_database *database, struct report_set *set,
			     char *error, size_t error_size)
{
	struct vnfs_workload job, next;
	if (!report_database_next(database, &job))
		return 0;
	while (report_database_next(database, &next) && vnfs_workload_same_job(&next, &job)) {
		char node[65];
		copy_column(database->jobs, node_column(database), node, sizeof(node));
		if (read_job(&database->reader, set, &job, node) < 0 || advance(database) < 0) {
			snprintf(error, error_size, "%s", database->message);
			return -1;
		}
	}
	return 1;
}

/* The p99 of every step's operation on the nodes of ?1 (a JSON array) in
 * the baseline window (from ?2), the job of ?3 and ?5 left out (NULL: none),
 * with at least ?4 calls, sorted by operation then p99: one text whatever
 * the job, so that an open history prepares it once.  Returns 0, or -1
 * with a message. */
static int prepare_baseline(struct history_connection *connection,
			    const struct schema_queries *queries,
			    struct history_statement **statement, char *error, size_t error_size)
{
	char sql[512];

	snprintf(sql, sizeof(sql),
		 "SELECT operation, p99_ns FROM step_operations"
		 " JOIN steps ON steps.id = step_operations.step"
		 " WHERE steps.node IN (%s)"
		 " AND steps.sample_time_ms >= ?2 AND %s"
		 " AND step_operations.count >= ?4"
		 " ORDER BY operation, p99_ns",
		 queries->listed_nodes, queries->other_job);
	if (history_prepare(connection, sql, statement) == 0)
		return 0;
	snprintf(error, error_size, "%s: %s", connection->name, history_message(connection));
	return -1;
}

/* The baseline query's parameters: nodes (comma-separated), the window
 * before now_ms, exclude_job (NULL leaves out none).  Returns 0, or -1. */
static int bind_baseline(struct history_statement *s, const struct schema_queries *queries,
			 const char *nodes, const struct vnfs_workload *exclude_job, int64_t now_ms)
{
	struct json_object *array = json_object_new_array();
	char copy[512], *save = NULL;
	uint32_t job_id;
	int rc;

	snprintf(copy, sizeof(copy), "%s", nodes);
	for (char *node = strtok_r(copy, ",", &save); node != NULL; node = strtok_r(NULL, ",", &save))
		json_object_array_add(array, json_object_new_string(node));
	rc = history_bind_text(s, 1, json_object_to_json_string_ext(array, JSON_C_TO_STRING_PLAIN));
	json_object_put(array);
	rc |= history_bind_int64(s, 2, now_ms - REPORT_BASELINE_WINDOW_MS);
	/* No job left out: ?3 (and ?5) stay NULL, which no steps row is. */
	if (exclude_job != NULL && !queries->numbered_jobs) {
		rc |= history_bind_text(s, 3, vnfs_workload_source_name(exclude_job->source));
		rc |= history_bind_text(s, 5, exclude_job->job);
	} else if (exclude_job != NULL && vnfs_workload_slurm_job_id(exclude_job, &job_id) == 0) {
		rc |= history_bind_int64(s, 3, job_id);
	}
	rc |= history_bind_int64(s, 4, REPORT_BASELINE_MIN_CALLS);
	return rc < 0 ? -1 : 0;
}

/* Rows come sorted by operation then p99: collect each operation's run,
 * take its middle.  Returns 0, 1 when out of memory, or -1 on an error of
 * the query. */
static int read_baseline_medians(struct history_statement *s, struct report_baseline *baseline)
{
	uint64_t *values = NULL;
	size_t count = 0, capacity = 0;
	int current = -1, rc;

	while (true) {
		rc = history_step(s);
		const char *name = rc == 1 ? history_column_text(s, 0) : NULL;
		int op = rc == 1 ? operation_index(name != NULL ? name : "") : -2;
		if (op != current && current >= 0 && count > 0) {
			baseline->steps[current] = (uint32_t)count;
			baseline->p99_ns[current] = values[(count - 1) / 2];
		}
		if (rc != 1)
			break;
		if (op != current)
			count = 0;
		current = op;
		if (op < 0)
			continue;
		if (count == capacity) {
			size_t grown_capacity = capacity > 0 ? capacity * 2 : 64;
			uint64_t *grown = realloc(values, grown_capacity * sizeof(*grown));
			if (grown == NULL) {
				rc = 2;
				break;
			}
			values = grown;
			capacity = grown_capacity;
		}
		values[count++] = (uint64_t)history_column_int64(s, 1);
	}
	free(values);
	return rc == 2 ? 1 : rc;
}

/* The baseline from connection, *statement prepared at its first use and
 * left ready for the next.  Returns 0, or -1 with a message. */
static int load_baseline(struct history_connection *connection,
			 const struct schema_queries *queries, struct history_statement **statement,
			 const char *nodes, const struct vnfs_workload *exclude_job, int64_t now_ms,
			 struct report_baseline *baseline, char *error, size_t error_size)
{
	int rc;

	memset(baseline, 0, sizeof(*baseline));
	if (*statement == NULL &&
	    prepare_baseline(connection, queries, statement, error, error_size) < 0)
		return -1;
	rc = bind_baseline(*statement, queries, nodes, exclude_job, now_ms) < 0
		     ? -1
		     : read_baseline_medians(*statement, baseline);
	history_reset(*statement);
	history_clear_bindings(*statement);
	if (rc == 1)
		snprintf(error, error_size, "out of memory");
	else if (rc < 0)
		snprintf(error, error_size, "%s: %s", connection->name, history_message(connection));
	return rc == 0 ? 0 : -1;
}

int report_load_baseline(const char *path, const char *nodes,
			 const struct vnfs_workload *exclude_job, int64_t now_ms,
			 struct report_baseline *baseline, char *error, size_t error_size)
{
	struct history_connection *connection = NULL;
	struct history_statement *statement = NULL;
	const struct schema_queries *queries;
	int rc;

	memset(baseline, 0, sizeof(*baseline));
	if (open_history(path, &connection, &queries, error, error_size) < 0)
		return -1;
	rc = load_baseline(connection, queries, &statement, nodes, exclude_job, now_ms, baseline,
			   error, error_size);
	history_finalize(statement);
	history_close(connection);
	return rc;
}

int report_database_baseline(struct report_database *database, const char *nodes,
			     const struct vnfs_workload *exclude_job, int64_t now_ms,
			     struct report_baseline *baseline, char *error, size_t error_size)
{
	return load_baseline(database->reader.connection, database->reader.queries,
			     &database->baseline, nodes, exclude_job, now_ms, baseline, error,
			     error_size);
}
