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
#include <sqlite3.h>

#include "lib/history/schema.h"
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
 * order: SQLite sorts by the two collations this reader defines (see
 * add_collations).
 */
#define STEP_COLUMNS                                                              \
	"SELECT id, step_id, uid, user, cgroup_id, cgroup_path, start_time_ms,"  \
	" end_time_ms, sample_time_ms, finished, read_size_histogram,"            \
	" write_size_histogram"
#define STEP_IDENTITY_COLUMN 12 /* source, job, part */

/* "'slurm',...,NULL": the sources this vnfs knows, for an IN list. */
#define SOURCE_NAME_SQL(constant, name, job_label, part_label, job_noun, part_noun) "'" name "',"
#define KNOWN_SOURCES VNFS_WORKLOAD_SOURCES(SOURCE_NAME_SQL) "NULL"

static const struct schema_queries {
	const char *known_jobs;    /* the condition that a jobs row's source is known */
	const char *job_columns;   /* a jobs row's identity: (job_id) or (source, job) */
	const char *selected_jobs; /* the condition that it is among ?1, a JSON array */
	const char *job_order;     /* the listing's order */
	const char *steps_of_job;  /* the steps of job ?1 (of source ?3) on node ?2 */
	const char *other_job;     /* the condition that a steps row is not of job ?3, ?5 */
} schema_queries[VNFS_HISTORY_SCHEMA_VERSION + 1] = {
	/* All Slurm's: ?1 holds job numbers, ?3 is a number or NULL. */
	[1] = {
		"1",
		"job_id",
		"AND job_id IN (SELECT value FROM json_each(?1)) ",
		"job_id, node",
		STEP_COLUMNS " FROM steps WHERE job_id = ?1 AND node = ?2",
		"steps.job_id IS NOT ?3",
	},
	/* ?1 holds [source, job] pairs; ?3 and ?5 are the source and job, or NULL. */
	/* A newer writer's source is not listed, as read_operations skips its operations. */
#define IDENTITY_QUERIES                                                          \
	{                                                                         \
		"source IN (" KNOWN_SOURCES ")",                                  \
		"source, job",                                                    \
		"AND (source, job) IN (SELECT json_extract(value, '$[0]'),"       \
		" json_extract(value, '$[1]') FROM json_each(?1)) ",              \
		"source COLLATE vnfs_source, job COLLATE vnfs_text, node",        \
		STEP_COLUMNS ", source, job, part FROM steps"                     \
		" WHERE source = ?3 AND job = ?1 AND node = ?2",                  \
		"NOT (steps.source IS ?3 AND steps.job IS ?5)",                   \
	}
	[2] = IDENTITY_QUERIES,
	/* Version 3 adds step_wire (read_wire), nothing these queries read. */
	[3] = IDENTITY_QUERIES,
#undef IDENTITY_QUERIES
};
_Static_assert(VNFS_HISTORY_OLDEST_READ_VERSION == 1 && VNFS_HISTORY_SCHEMA_VERSION == 3,
	       "every schema read has its queries above");

/* The first version with step_wire: older ones read with no wire rows. */
#define WIRE_VERSION 3

struct reader {
	sqlite3 *db;
	int version;               /* of the schema, OLDEST_READ_VERSION.. */
	sqlite3_stmt *steps, *operations, *processes, *mounts, *tags;
	sqlite3_stmt *wire;        /* NULL before WIRE_VERSION */
	const char *path;
	char *error;
	size_t error_size;
};

static int sql_error(struct reader *reader, const char *what)
{
	snprintf(reader->error, reader->error_size, "%s: %s: %s", reader->path, what,
		 sqlite3_errmsg(reader->db));
	return -1;
}

static int prepare(struct reader *reader, const char *sql, sqlite3_stmt **statement)
{
	if (sqlite3_prepare_v2(reader->db, sql, -1, statement, NULL) != SQLITE_OK)
		return sql_error(reader, "preparing a query");
	return 0;
}

static void copy_column(sqlite3_stmt *statement, int column, char *buf, size_t size)
{
	const unsigned char *text = sqlite3_column_text(statement, column);
	snprintf(buf, size, "%s", text != NULL ? (const char *)text : "");
}

/* "[0,3,5]" (the sink's form) into buckets. */
static int parse_histogram(const unsigned char *text, __u64 *buckets, size_t count)
{
	memset(buckets, 0, count * sizeof(*buckets));
	if (text == NULL)
		return -1;
	struct json_object *array = json_tokener_parse((const char *)text);
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

static int read_operations(struct reader *reader, sqlite3_int64 step,
			   struct vnfs_step_stats *stats)
{
	sqlite3_stmt *s = reader->operations;
	sqlite3_bind_int64(s, 1, step);
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int op = operation_index((const char *)sqlite3_column_text(s, 0));
		if (op < 0)
			continue; /* an operation this vnfs does not know: newer writer */
		struct vnfs_operation_stats *o = &stats->operations[op];
		o->count = (uint64_t)sqlite3_column_int64(s, 1);
		o->errors = (uint64_t)sqlite3_column_int64(s, 2);
		o->time_ns = (uint64_t)sqlite3_column_int64(s, 3);
		o->bytes = (uint64_t)sqlite3_column_int64(s, 4);
		if (parse_histogram(sqlite3_column_text(s, 5), o->latency_histogram,
				    VNFS_LATENCY_BUCKETS) < 0) {
			sqlite3_reset(s);
			snprintf(reader->error, reader->error_size,
				 "%s: step row %lld: bad latency histogram", reader->path,
				 (long long)step);
			return -1;
		}
	}
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : sql_error(reader, "reading operations");
}

static int read_processes(struct reader *reader, sqlite3_int64 step,
			  struct vnfs_step_record *record)
{
	sqlite3_stmt *s = reader->processes;
	sqlite3_bind_int64(s, 1, step);
	struct vnfs_process_record *processes = NULL;
	size_t count = 0;
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct vnfs_process_record *grown = realloc(processes, (count + 1) * sizeof(*grown));
		if (grown == NULL) {
			rc = SQLITE_NOMEM;
			break;
		}
		processes = grown;
		struct vnfs_process_record *p = &processes[count++];
		memset(p, 0, sizeof(*p));
		copy_column(s, 0, p->comm, sizeof(p->comm));
		p->stats.read_ops = (uint64_t)sqlite3_column_int64(s, 1);
		p->stats.read_bytes = (uint64_t)sqlite3_column_int64(s, 2);
		p->stats.write_ops = (uint64_t)sqlite3_column_int64(s, 3);
		p->stats.write_bytes = (uint64_t)sqlite3_column_int64(s, 4);
		p->stats.other_ops = (uint64_t)sqlite3_column_int64(s, 5);
	}
	sqlite3_reset(s);
	record->processes = processes;
	record->process_count = count;
	return rc == SQLITE_DONE ? 0 : sql_error(reader, "reading processes");
}

static int read_mounts(struct reader *reader, sqlite3_int64 step, struct vnfs_step_record *record)
{
	sqlite3_stmt *s = reader->mounts;
	sqlite3_bind_int64(s, 1, step);
	struct vnfs_mount_record *mounts = NULL;
	size_t count = 0;
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct vnfs_mount_record *grown = realloc(mounts, (count + 1) * sizeof(*grown));
		if (grown == NULL) {
			rc = SQLITE_NOMEM;
			break;
		}
		mounts = grown;
		struct vnfs_mount_record *m = &mounts[count++];
		memset(m, 0, sizeof(*m));
		m->device = (uint32_t)sqlite3_column_int64(s, 0);
		copy_column(s, 1, m->mount_point, sizeof(m->mount_point));
		copy_column(s, 2, m->source, sizeof(m->source));
		copy_column(s, 3, m->version, sizeof(m->version));
		m->rsize = (uint32_t)sqlite3_column_int64(s, 4);
		m->wsize = (uint32_t)sqlite3_column_int64(s, 5);
		m->stats.ops = (uint64_t)sqlite3_column_int64(s, 6);
		m->stats.errors = (uint64_t)sqlite3_column_int64(s, 7);
		m->stats.time_ns = (uint64_t)sqlite3_column_int64(s, 8);
		m->stats.read_bytes = (uint64_t)sqlite3_column_int64(s, 9);
		m->stats.write_bytes = (uint64_t)sqlite3_column_int64(s, 10);
	}
	sqlite3_reset(s);
	record->mounts = mounts;
	record->mount_count = count;
	return rc == SQLITE_DONE ? 0 : sql_error(reader, "reading mounts");
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
 * read_operations leaves out an operation).  Returns 0, or -1.
 */
static int parse_error_kinds(const unsigned char *text, struct vnfs_wire_stats *stats)
{
	memset(stats->error_kinds, 0, sizeof(stats->error_kinds));
	if (text == NULL)
		return -1;
	struct json_object *object = json_tokener_parse((const char *)text);
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

/* One step_wire row the statement is on into row; -1 with a message. */
static int read_wire_row(struct reader *reader, sqlite3_stmt *s, sqlite3_int64 step,
			 struct vnfs_wire_record *row)
{
	sqlite3_int64 device = sqlite3_column_int64(s, 0);
	sqlite3_int64 version = sqlite3_column_int64(s, 2);

	memset(row, 0, sizeof(*row));
	if (device < 0 || device > UINT32_MAX || version < 0 || version > UINT16_MAX) {
		snprintf(reader->error, reader->error_size,
			 "%s: step row %lld: a wire row's device or NFS version is out of range",
			 reader->path, (long long)step);
		return -1;
	}
	row->device = (__u32)device;
	copy_column(s, 1, row->mount_point, sizeof(row->mount_point));
	row->version = (uint16_t)version;
	copy_column(s, 3, row->procedure, sizeof(row->procedure));
	for (int c = 0; c < VNFS_WIRE_COUNTERS; c++)
		*vnfs_wire_field(&row->stats, &vnfs_wire_counters[c]) =
			(uint64_t)sqlite3_column_int64(s, WIRE_FIRST_COUNTER + c);
	if (parse_error_kinds(sqlite3_column_text(s, WIRE_ERROR_KINDS), &row->stats) < 0) {
		snprintf(reader->error, reader->error_size,
			 "%s: step row %lld: bad wire error kinds", reader->path, (long long)step);
		return -1;
	}
	for (int h = 0; h < VNFS_WIRE_HISTOGRAMS; h++) {
		if (parse_histogram(sqlite3_column_text(s, WIRE_ERROR_KINDS + 1 + h),
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

/* The step's RPCs, per mount and procedure: none before WIRE_VERSION. */
static int read_wire(struct reader *reader, sqlite3_int64 step, struct vnfs_step_record *record)
{
	sqlite3_stmt *s = reader->wire;
	struct vnfs_wire_record *rows = NULL;
	size_t count = 0;
	int rc;

	if (s == NULL)
		return 0;
	rc = sqlite3_bind_int64(s, 1, step);
	if (rc != SQLITE_OK)
		return sql_error(reader, "reading RPCs");
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (count == VNFS_MAX_WIRE_RECORDS) {
			sqlite3_reset(s);
			free(rows);
			snprintf(reader->error, reader->error_size,
				 "%s: step row %lld: more than %d wire rows", reader->path,
				 (long long)step, VNFS_MAX_WIRE_RECORDS);
			return -1;
		}
		struct vnfs_wire_record *grown = realloc(rows, (count + 1) * sizeof(*grown));
		if (grown == NULL) {
			rc = SQLITE_NOMEM;
			break;
		}
		rows = grown;
		if (read_wire_row(reader, s, step, &rows[count]) < 0) {
			sqlite3_reset(s);
			free(rows);
			return -1;
		}
		count++;
	}
	sqlite3_reset(s);
	if (rc == SQLITE_NOMEM) {
		free(rows);
		snprintf(reader->error, reader->error_size, "out of memory");
		return -1;
	}
	if (rc != SQLITE_DONE) {
		free(rows);
		return sql_error(reader, "reading RPCs");
	}
	record->wire = rows;
	record->wire_count = count;
	return 0;
}

static int read_tags(struct reader *reader, sqlite3_int64 step, struct vnfs_step_record *record)
{
	sqlite3_stmt *s = reader->tags;
	sqlite3_bind_int64(s, 1, step);
	vnfs_tags_init(&record->tags);
	int rc;
	char ignored[160];
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		vnfs_tags_set(&record->tags, (const char *)sqlite3_column_text(s, 0),
			      (const char *)sqlite3_column_text(s, 1), ignored, sizeof(ignored));
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : sql_error(reader, "reading tags");
}

/*
 * A version-2 step's identity, from its own columns: text the writer took
 * from the registry, checked again like any text read from a file.
 */
static int read_identity(struct reader *reader, sqlite3_stmt *s, sqlite3_int64 step,
			 struct vnfs_step_record *record)
{
	const unsigned char *source = sqlite3_column_text(s, STEP_IDENTITY_COLUMN);
	const unsigned char *job = sqlite3_column_text(s, STEP_IDENTITY_COLUMN + 1);
	const unsigned char *part = sqlite3_column_text(s, STEP_IDENTITY_COLUMN + 2);
	enum vnfs_workload_source parsed;
	char message[256];

	if (source == NULL || job == NULL || part == NULL ||
	    vnfs_workload_source_parse((const char *)source, &parsed) < 0) {
		snprintf(reader->error, reader->error_size,
			 "%s: step row %lld: no workload source this vnfs knows", reader->path,
			 (long long)step);
		return -1;
	}
	if (vnfs_workload_set(&record->workload, parsed, (const char *)job, (const char *)part,
			      message, sizeof(message)) < 0) {
		snprintf(reader->error, reader->error_size, "%s: step row %lld: %s", reader->path,
			 (long long)step, message);
		return -1;
	}
	return 0;
}

/* Every step of one job on one node. */
static int read_job(struct reader *reader, struct report_set *set,
		    const struct vnfs_workload *job, const char *node)
{
	sqlite3_stmt *s = reader->steps;
	uint32_t job_id = 0;
	if (reader->version >= 2) {
		sqlite3_bind_text(s, 1, job->job, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(s, 3, vnfs_workload_source_name(job->source), -1,
				  SQLITE_STATIC);
	} else {
		/* A version-1 history's jobs are Slurm's numbers (read_listed_job). */
		if (vnfs_workload_slurm_job_id(job, &job_id) < 0)
			return 0;
		sqlite3_bind_int64(s, 1, job_id);
	}
	sqlite3_bind_text(s, 2, node, -1, SQLITE_TRANSIENT);
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct vnfs_step_record record = { 0 };
		struct vnfs_step_stats *stats = calloc(1, sizeof(*stats));
		if (stats == NULL) {
			rc = SQLITE_NOMEM;
			break;
		}
		record.stats = stats;
		sqlite3_int64 step = sqlite3_column_int64(s, 0);
		if (reader->version < 2) {
			vnfs_record_identify_slurm(&record, job_id,
						   (uint32_t)sqlite3_column_int64(s, 1));
		} else if (read_identity(reader, s, step, &record) < 0) {
			vnfs_step_record_free_arrays(&record);
			sqlite3_reset(s);
			return -1;
		} else if (vnfs_workload_slurm_ids(&record.workload, &record.job_id,
						   &record.step_id) < 0) {
			record.job_id = 0; /* record.h: Slurm's numbers, 0 for other sources */
			record.step_id = 0;
		}
		record.uid = (uint32_t)sqlite3_column_int64(s, 2);
		copy_column(s, 3, record.user, sizeof(record.user));
		snprintf(record.node, sizeof(record.node), "%s", node);
		record.cgroup_id = (uint64_t)sqlite3_column_int64(s, 4);
		copy_column(s, 5, record.cgroup_path, sizeof(record.cgroup_path));
		record.start_time_ms = sqlite3_column_int64(s, 6);
		record.end_time_ms = sqlite3_column_int64(s, 7); /* NULL reads as 0 */
		record.sample_time_ms = sqlite3_column_int64(s, 8);
		record.finished = sqlite3_column_int(s, 9) != 0;
		if (parse_histogram(sqlite3_column_text(s, 10),
				    stats->request_size_histogram[VNFS_DIRECTION_READ],
				    VNFS_SIZE_BUCKETS) < 0 ||
		    parse_histogram(sqlite3_column_text(s, 11),
				    stats->request_size_histogram[VNFS_DIRECTION_WRITE],
				    VNFS_SIZE_BUCKETS) < 0) {
			vnfs_step_record_free_arrays(&record);
			sqlite3_reset(s);
			snprintf(reader->error, reader->error_size,
				 "%s: step row %lld: bad request size histogram", reader->path,
				 (long long)step);
			return -1;
		}
		if (read_operations(reader, step, stats) < 0 ||
		    read_processes(reader, step, &record) < 0 ||
		    read_mounts(reader, step, &record) < 0 || read_wire(reader, step, &record) < 0 ||
		    read_tags(reader, step, &record) < 0) {
			vnfs_step_record_free_arrays(&record);
			sqlite3_reset(s);
			return -1;
		}
		if (report_set_take(set, &record) < 0) {
			sqlite3_reset(s);
			snprintf(reader->error, reader->error_size, "out of memory");
			return -1;
		}
	}
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return rc == SQLITE_DONE ? 0 : sql_error(reader, "reading steps");
}

/*
 * A member of the administrators' group may read the history (0640) but not
 * write its directory.  While the helper runs, its -wal and -shm exist and a
 * read-only reader shares them.  Once the helper closed the database SQLite
 * removed both, and a reader would have to create the -shm: it cannot, so
 * the database, whole in its main file then, is opened as immutable.
 */
static int open_read_only(const char *path, sqlite3 **db)
{
	char wal[PATH_MAX + 8], uri[3 * PATH_MAX + 32];
	int status = sqlite3_open_v2(path, db, SQLITE_OPEN_READONLY, NULL);
	size_t used;

	snprintf(wal, sizeof(wal), "%s-wal", path);
	if (status != SQLITE_CANTOPEN || access(wal, F_OK) == 0 || errno != ENOENT)
		return status;
	/* In a URI '%', '?' and '#' of the path must be escaped. */
	used = (size_t)snprintf(uri, sizeof(uri), "file:");
	for (const char *c = path; *c != '\0' && used + 4 < sizeof(uri); c++)
		used += (size_t)(strchr("%?#", *c) != NULL
					 ? snprintf(uri + used, sizeof(uri) - used, "%%%02X",
						    (unsigned char)*c)
					 : snprintf(uri + used, sizeof(uri) - used, "%c", *c));
	snprintf(uri + used, sizeof(uri) - used, "?immutable=1");
	sqlite3_close(*db);
	*db = NULL;
	return sqlite3_open_v2(uri, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
}

static int open_history(const char *path, sqlite3 **db, int *schema_version, char *error,
			size_t error_size)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		snprintf(error, error_size, "history database %s: %s", path, strerror(errno));
		return -1;
	}
	if (open_read_only(path, db) != SQLITE_OK) {
		snprintf(error, error_size, "history database %s: %s", path,
			 *db != NULL ? sqlite3_errmsg(*db) : "cannot open");
		sqlite3_close(*db);
		*db = NULL;
		return -1;
	}
	sqlite3_busy_timeout(*db, 2000);
	int version = -1;
	if (vnfs_history_schema_version(*db, &version) < 0)
		version = -1;
	*schema_version = version;
	if (version < VNFS_HISTORY_OLDEST_READ_VERSION || version > VNFS_HISTORY_SCHEMA_VERSION) {
		if (version < 0)
			snprintf(error, error_size, "history database %s: %s", path,
				 sqlite3_errmsg(*db));
		else if (version == 0)
			snprintf(error, error_size,
				 "history database %s: not a vnfs history (schema version 0)", path);
		else
			snprintf(error, error_size,
				 "history database %s: schema version %d, this vnfs reads %d to %d",
				 path, version, VNFS_HISTORY_OLDEST_READ_VERSION,
				 VNFS_HISTORY_SCHEMA_VERSION);
		sqlite3_close(*db);
		*db = NULL;
		return -1;
	}
	return 0;
}

/*
 * The selected jobs as a JSON array, for json_each(): Slurm's numbers for a
 * version-1 history (which holds no other source's), [source, job] pairs
 * from version 2.  NULL when out of memory.
 */
static char *job_list_json(const struct report_filter *filter, int version)
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
		if (version >= 2) {
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

/*
 * The collations of the version-2 listing's order (vnfs_workload_compare):
 * vnfs_source by the sources' order in VNFS_WORKLOAD_SOURCES (names this
 * vnfs does not know after them, by bytes), vnfs_text as job ids compare.
 * SQLite passes text without its NUL; longer text than a job id holds
 * cannot be in the history (the writer checked it) and compares by bytes.
 */
static int copy_text(char *buf, size_t size, const void *text, int length)
{
	if (length < 0 || (size_t)length >= size)
		return -1;
	memcpy(buf, text, (size_t)length);
	buf[length] = '\0';
	return 0;
}

static int compare_bytes(int a_length, const void *a, int b_length, const void *b)
{
	int order = memcmp(a, b, (size_t)(a_length < b_length ? a_length : b_length));
	return order != 0 ? order : (a_length > b_length) - (a_length < b_length);
}

static int collate_source(void *unused, int a_length, const void *a, int b_length,
			  const void *b)
{
	char a_name[64], b_name[64];
	enum vnfs_workload_source a_source, b_source;
	(void)unused;
	bool a_known = copy_text(a_name, sizeof(a_name), a, a_length) == 0 &&
		       vnfs_workload_source_parse(a_name, &a_source) == 0;
	bool b_known = copy_text(b_name, sizeof(b_name), b, b_length) == 0 &&
		       vnfs_workload_source_parse(b_name, &b_source) == 0;
	if (a_known && b_known)
		return (a_source > b_source) - (a_source < b_source);
	if (a_known != b_known)
		return a_known ? -1 : 1;
	return compare_bytes(a_length, a, b_length, b);
}

static int collate_text(void *unused, int a_length, const void *a, int b_length, const void *b)
{
	char a_text[VNFS_WORKLOAD_JOB_MAX], b_text[VNFS_WORKLOAD_JOB_MAX];
	(void)unused;
	if (copy_text(a_text, sizeof(a_text), a, a_length) < 0 ||
	    copy_text(b_text, sizeof(b_text), b, b_length) < 0)
		return compare_bytes(a_length, a, b_length, b);
	return vnfs_workload_compare_text(a_text, b_text);
}

static int add_collations(struct reader *reader)
{
	if (sqlite3_create_collation(reader->db, "vnfs_source", SQLITE_UTF8, NULL,
				     collate_source) != SQLITE_OK ||
	    sqlite3_create_collation(reader->db, "vnfs_text", SQLITE_UTF8, NULL, collate_text) !=
		    SQLITE_OK)
		return sql_error(reader, "defining the listing's order");
	return 0;
}

/* A cursor over the history's (job, node) rows, in job order. */
struct report_database {
	struct reader reader;
	sqlite3_stmt *jobs;
	char *job_list;
	char path[4096];
	char message[512];
	bool has_row;              /* jobs is on a row not read yet: */
	struct vnfs_workload job;  /* its job (part "") */
};

void report_database_close(struct report_database *database)
{
	if (database == NULL)
		return;
	free(database->job_list);
	sqlite3_finalize(database->jobs);
	sqlite3_finalize(database->reader.steps);
	sqlite3_finalize(database->reader.operations);
	sqlite3_finalize(database->reader.processes);
	sqlite3_finalize(database->reader.mounts);
	sqlite3_finalize(database->reader.tags);
	sqlite3_finalize(database->reader.wire);
	sqlite3_close(database->reader.db);
	free(database);
}

/* The job of the jobs row the cursor is on, checked like any text read from a file. */
static int read_listed_job(struct report_database *database)
{
	struct reader *reader = &database->reader;
	sqlite3_stmt *s = database->jobs;
	enum vnfs_workload_source source;
	const unsigned char *name, *job;
	char message[256];

	if (reader->version < 2) {
		vnfs_workload_of_slurm_job(&database->job, (uint32_t)sqlite3_column_int64(s, 0));
		return 0;
	}
	name = sqlite3_column_text(s, 0);
	job = sqlite3_column_text(s, 1);
	if (name == NULL || job == NULL ||
	    vnfs_workload_source_parse((const char *)name, &source) < 0) {
		snprintf(reader->error, reader->error_size,
			 "%s: a jobs row of no workload source this vnfs knows", reader->path);
		return -1;
	}
	if (vnfs_workload_set(&database->job, source, (const char *)job, "", message,
			      sizeof(message)) < 0) {
		snprintf(reader->error, reader->error_size, "%s: a jobs row: %s", reader->path,
			 message);
		return -1;
	}
	return 0;
}

/* The node column of the jobs query: after the identity's. */
static int node_column(const struct report_database *database)
{
	return database->reader.version < 2 ? 1 : 2;
}

static int advance(struct report_database *database)
{
	int rc = sqlite3_step(database->jobs);
	database->has_row = rc == SQLITE_ROW;
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return sql_error(&database->reader, "reading jobs");
	if (database->has_row && read_listed_job(database) < 0) {
		database->has_row = false;
		return -1;
	}
	return 0;
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
	snprintf(database->path, sizeof(database->path), "%s", path);
	struct reader *reader = &database->reader;
	reader->path = database->path;
	reader->error = database->message;
	reader->error_size = sizeof(database->message);
	if (open_history(path, &reader->db, &reader->version, error, error_size) < 0) {
		free(database);
		return -1;
	}

	const struct schema_queries *queries = &schema_queries[reader->version];
	char sql[768];
	snprintf(sql, sizeof(sql), "SELECT %s, node FROM jobs WHERE %s %s%s%s%s%s ORDER BY %s",
		 queries->job_columns, queries->known_jobs,
		 filter->job_count > 0 ? queries->selected_jobs : "",
		 filter->has_uid ? "AND uid = ?2 " : "",
		 filter->user_name[0] != '\0' ? "AND user = ?5 " : "",
		 filter->has_end ? "AND start_time_ms <= ?3 " : "",
		 filter->has_start ? "AND (end_time_ms IS NULL OR end_time_ms >= ?4) " : "",
		 queries->job_order);
	if (add_collations(reader) < 0 || prepare(reader, sql, &database->jobs) < 0 ||
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
	    (reader->version >= WIRE_VERSION && prepare(reader, WIRE_QUERY, &reader->wire) < 0))
		goto fail;

	if (filter->job_count > 0) {
		database->job_list = job_list_json(filter, reader->version);
		if (database->job_list == NULL) {
			snprintf(database->message, sizeof(database->message), "out of memory");
			goto fail;
		}
		sqlite3_bind_text(database->jobs, 1, database->job_list, -1, SQLITE_STATIC);
	}
	if (filter->has_uid)
		sqlite3_bind_int64(database->jobs, 2, filter->uid);
	if (filter->has_end)
		sqlite3_bind_int64(database->jobs, 3, filter->end_ms);
	if (filter->has_start)
		sqlite3_bind_int64(database->jobs, 4, filter->start_ms);
	if (filter->user_name[0] != '\0')
		sqlite3_bind_text(database->jobs, 5, filter->user_name, -1, SQLITE_TRANSIENT);
	if (advance(database) < 0)
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

/* The p99 of every step's operation on nodes (a comma-separated list) in
 * the baseline window, exclude_job's left out, sorted by operation then
 * p99.  Returns the statement, or NULL with a message. */
static sqlite3_stmt *prepare_baseline(sqlite3 *db, int version, const char *path,
				      const char *nodes, const struct vnfs_workload *exclude_job,
				      int64_t now_ms, char *error, size_t error_size)
{
	struct json_object *array = json_object_new_array();
	sqlite3_stmt *s = NULL;
	char copy[512], sql[512], *save = NULL;
	uint32_t job_id;

	snprintf(copy, sizeof(copy), "%s", nodes);
	for (char *node = strtok_r(copy, ",", &save); node != NULL; node = strtok_r(NULL, ",", &save))
		json_object_array_add(array, json_object_new_string(node));
	snprintf(sql, sizeof(sql),
		 "SELECT operation, p99_ns FROM step_operations"
		 " JOIN steps ON steps.id = step_operations.step"
		 " WHERE steps.node IN (SELECT value FROM json_each(?1))"
		 " AND steps.sample_time_ms >= ?2 AND %s"
		 " AND step_operations.count >= ?4"
		 " ORDER BY operation, p99_ns",
		 schema_queries[version].other_job);
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
		snprintf(error, error_size, "%s: %s", path, sqlite3_errmsg(db));
		json_object_put(array);
		return NULL;
	}
	sqlite3_bind_text(s, 1, json_object_to_json_string_ext(array, JSON_C_TO_STRING_PLAIN), -1,
			  SQLITE_TRANSIENT);
	json_object_put(array);
	sqlite3_bind_int64(s, 2, now_ms - REPORT_BASELINE_WINDOW_MS);
	/* No job left out: ?3 (and ?5) stay NULL, which no steps row is. */
	if (exclude_job != NULL && version >= 2) {
		sqlite3_bind_text(s, 3, vnfs_workload_source_name(exclude_job->source), -1,
				  SQLITE_STATIC);
		sqlite3_bind_text(s, 5, exclude_job->job, -1, SQLITE_TRANSIENT);
	} else if (exclude_job != NULL && vnfs_workload_slurm_job_id(exclude_job, &job_id) == 0) {
		sqlite3_bind_int64(s, 3, job_id);
	}
	sqlite3_bind_int64(s, 4, REPORT_BASELINE_MIN_CALLS);
	return s;
}

/* Rows come sorted by operation then p99: collect each operation's run,
 * take its middle.  Returns SQLITE_DONE, SQLITE_NOMEM or SQLite's error. */
static int read_baseline_medians(sqlite3_stmt *s, struct report_baseline *baseline)
{
	uint64_t *values = NULL;
	size_t count = 0, capacity = 0;
	int current = -1, rc;

	while (true) {
		rc = sqlite3_step(s);
		int op = rc == SQLITE_ROW ? operation_index((const char *)sqlite3_column_text(s, 0))
					  : -2;
		if (op != current && current >= 0 && count > 0) {
			baseline->steps[current] = (uint32_t)count;
			baseline->p99_ns[current] = values[(count - 1) / 2];
		}
		if (rc != SQLITE_ROW)
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
				rc = SQLITE_NOMEM;
				break;
			}
			values = grown;
			capacity = grown_capacity;
		}
		values[count++] = (uint64_t)sqlite3_column_int64(s, 1);
	}
	free(values);
	return rc;
}

int report_load_baseline(const char *path, const char *nodes,
			 const struct vnfs_workload *exclude_job, int64_t now_ms,
			 struct report_baseline *baseline, char *error, size_t error_size)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *s;
	int version, rc, result = -1;

	memset(baseline, 0, sizeof(*baseline));
	if (open_history(path, &db, &version, error, error_size) < 0)
		return -1;
	s = prepare_baseline(db, version, path, nodes, exclude_job, now_ms, error, error_size);
	if (s != NULL) {
		rc = read_baseline_medians(s, baseline);
		if (rc == SQLITE_NOMEM)
			snprintf(error, error_size, "out of memory");
		else if (rc != SQLITE_DONE)
			snprintf(error, error_size, "%s: %s", path, sqlite3_errmsg(db));
		else
			result = 0;
	}
	sqlite3_finalize(s);
	sqlite3_close(db);
	return result;
}
