/*
 * sources.c — reading step records from SQLite, the helper and report files
 * (see sources.h).  The SQLite reader is the inverse of helper/sink_sqlite.c
 * and reads schema version 1 only: a database of another version is refused
 * with a message, never misread.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>
#include <sqlite3.h>

#include "lib/escape.h"
#include "lib/history_schema.h"
#include "lib/client.h"
#include "lib/record_json.h"
#include "report/report_files.h"
#include "report/sources.h"


static int operation_index(const char *name)
{
	for (int op = 0; op < VNFS_OP_COUNT; op++)
		if (strcmp(vnfs_operation_names[op], name) == 0)
			return op;
	return -1;
}

/* ---- the filter ----------------------------------------------------------- */

int report_parse_jobs(const char *text, struct report_filter *filter, char *error,
		      size_t error_size)
{
	char copy[8192];
	if (snprintf(copy, sizeof(copy), "%s", text) >= (int)sizeof(copy)) {
		snprintf(error, error_size, "job list too long");
		return -1;
	}
	char *save = NULL;
	for (char *item = strtok_r(copy, ",", &save); item != NULL;
	     item = strtok_r(NULL, ",", &save)) {
		struct report_selection selection = { 0 };
		char *dot = strchr(item, '.');
		if (dot != NULL)
			*dot = '\0';
		if (vnfs_step_parse(item, &selection.job_id) < 0 || item[0] < '0' || item[0] > '9') {
			snprintf(error, error_size,
				 "invalid job '%.40s': use a job id, or job.step (e.g. 42, 42.0, "
				 "42.batch)", item);
			return -1;
		}
		if (dot != NULL) {
			if (vnfs_step_parse(dot + 1, &selection.step_id) < 0) {
				snprintf(error, error_size,
					 "invalid step '%.40s' of job %u: use a number, batch, extern "
					 "or interactive", dot + 1, selection.job_id);
				return -1;
			}
			selection.has_step = true;
		}
		if (filter->job_count == REPORT_MAX_SELECTED_JOBS) {
			snprintf(error, error_size, "more than %d jobs selected",
				 REPORT_MAX_SELECTED_JOBS);
			return -1;
		}
		filter->jobs[filter->job_count++] = selection;
	}
	if (filter->job_count == 0) {
		snprintf(error, error_size, "empty job list");
		return -1;
	}
	return 0;
}

bool report_filter_job(const struct report_filter *filter, const struct report_row *job)
{
	if (filter->has_uid && job->uid != filter->uid)
		return false;
	if (filter->user_name[0] != '\0' && strcmp(job->user, filter->user_name) != 0)
		return false;
	if (filter->has_end && job->start_time_ms > filter->end_ms)
		return false;
	if (filter->has_start && !job->running && job->end_time_ms < filter->start_ms)
		return false;
	return true;
}

bool report_filter_selects(const struct report_filter *filter, const struct report_row *row)
{
	if (filter->job_count == 0)
		return true;
	for (size_t i = 0; i < filter->job_count; i++) {
		const struct report_selection *s = &filter->jobs[i];
		if (s->job_id != row->job_id)
			continue;
		/* "42" is the job and its steps; "42.0" only that step, like sacct. */
		if (!s->has_step || (row->is_step && row->step_id == s->step_id))
			return true;
	}
	return false;
}

/* ---- SQLite --------------------------------------------------------------- */

struct reader {
	sqlite3 *db;
	sqlite3_stmt *steps, *operations, *processes, *mounts, *tags;
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

/* Every step of one job on one node. */
static int read_job(struct reader *reader, struct report_set *set, uint32_t job_id,
		    const char *node)
{
	sqlite3_stmt *s = reader->steps;
	sqlite3_bind_int64(s, 1, job_id);
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
		record.job_id = job_id;
		record.step_id = (uint32_t)sqlite3_column_int64(s, 1);
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
		    read_mounts(reader, step, &record) < 0 || read_tags(reader, step, &record) < 0) {
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

static int open_history(const char *path, sqlite3 **db, char *error, size_t error_size)
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
	sqlite3_stmt *statement;
	int version = -1;
	if (sqlite3_prepare_v2(*db, "PRAGMA user_version", -1, &statement, NULL) == SQLITE_OK) {
		if (sqlite3_step(statement) == SQLITE_ROW)
			version = sqlite3_column_int(statement, 0);
		sqlite3_finalize(statement);
	}
	if (version != VNFS_HISTORY_SCHEMA_VERSION) {
		if (version < 0)
			snprintf(error, error_size, "history database %s: %s", path,
				 sqlite3_errmsg(*db));
		else if (version == 0)
			snprintf(error, error_size,
				 "history database %s: not a vnfs history (schema version 0)", path);
		else
			snprintf(error, error_size,
				 "history database %s: schema version %d, this vnfs-report reads %d",
				 path, version, VNFS_HISTORY_SCHEMA_VERSION);
		sqlite3_close(*db);
		*db = NULL;
		return -1;
	}
	return 0;
}

/* The selected job ids as a JSON array, for json_each(). */
static char *job_list_json(const struct report_filter *filter)
{
	struct json_object *array = json_object_new_array();
	for (size_t i = 0; i < filter->job_count; i++)
		json_object_array_add(array, json_object_new_int64(filter->jobs[i].job_id));
	char *text = strdup(json_object_to_json_string_ext(array, JSON_C_TO_STRING_PLAIN));
	json_object_put(array);
	return text;
}

/* A cursor over the history's (job, node) rows, in job order. */
struct report_database {
	struct reader reader;
	sqlite3_stmt *jobs;
	char *job_list;
	char path[4096];
	char message[512];
	bool has_row;              /* jobs is on a row not read yet */
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
	sqlite3_close(database->reader.db);
	free(database);
}

static int advance(struct report_database *database)
{
	int rc = sqlite3_step(database->jobs);
	database->has_row = rc == SQLITE_ROW;
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return sql_error(&database->reader, "reading jobs");
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
	if (open_history(path, &reader->db, error, error_size) < 0) {
		free(database);
		return -1;
	}

	char sql[512];
	snprintf(sql, sizeof(sql),
		 "SELECT job_id, node FROM jobs WHERE 1 %s%s%s%s%s ORDER BY job_id, node",
		 filter->job_count > 0 ? "AND job_id IN (SELECT value FROM json_each(?1)) " : "",
		 filter->has_uid ? "AND uid = ?2 " : "",
		 filter->user_name[0] != '\0' ? "AND user = ?5 " : "",
		 filter->has_end ? "AND start_time_ms <= ?3 " : "",
		 filter->has_start ? "AND (end_time_ms IS NULL OR end_time_ms >= ?4) " : "");
	if (prepare(reader, sql, &database->jobs) < 0 ||
	    prepare(reader,
		    "SELECT id, step_id, uid, user, cgroup_id, cgroup_path, start_time_ms,"
		    " end_time_ms, sample_time_ms, finished, read_size_histogram,"
		    " write_size_histogram FROM steps WHERE job_id = ?1 AND node = ?2",
		    &reader->steps) < 0 ||
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
	    prepare(reader, "SELECT name, value FROM step_tags WHERE step = ?1", &reader->tags) < 0)
		goto fail;

	if (filter->job_count > 0) {
		database->job_list = job_list_json(filter);
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

bool report_database_peek(const struct report_database *database, uint32_t *job_id)
{
	if (database == NULL || !database->has_row)
		return false;
	*job_id = (uint32_t)sqlite3_column_int64(database->jobs, 0);
	return true;
}

int report_database_read_job(struct report_database *database, struct report_set *set,
			     char *error, size_t error_size)
{
	uint32_t job_id, next;
	if (!report_database_peek(database, &job_id))
		return 0;
	while (report_database_peek(database, &next) && next == job_id) {
		char node[65];
		copy_column(database->jobs, 1, node, sizeof(node));
		if (read_job(&database->reader, set, job_id, node) < 0 || advance(database) < 0) {
			snprintf(error, error_size, "%s", database->message);
			return -1;
		}
	}
	return 1;
}

int report_load_baseline(const char *path, const char *nodes, uint32_t exclude_job,
			 int64_t now_ms, struct report_baseline *baseline, char *error,
			 size_t error_size)
{
	memset(baseline, 0, sizeof(*baseline));
	sqlite3 *db = NULL;
	if (open_history(path, &db, error, error_size) < 0)
		return -1;

	struct json_object *array = json_object_new_array();
	char copy[512];
	snprintf(copy, sizeof(copy), "%s", nodes);
	char *save = NULL;
	for (char *node = strtok_r(copy, ",", &save); node != NULL; node = strtok_r(NULL, ",", &save))
		json_object_array_add(array, json_object_new_string(node));

	sqlite3_stmt *s = NULL;
	int result = -1;
	if (sqlite3_prepare_v2(db,
			       "SELECT operation, p99_ns FROM step_operations"
			       " JOIN steps ON steps.id = step_operations.step"
			       " WHERE steps.node IN (SELECT value FROM json_each(?1))"
			       " AND steps.sample_time_ms >= ?2 AND steps.job_id != ?3"
			       " AND step_operations.count >= ?4"
			       " ORDER BY operation, p99_ns",
			       -1, &s, NULL) != SQLITE_OK) {
		snprintf(error, error_size, "%s: %s", path, sqlite3_errmsg(db));
		goto out;
	}
	sqlite3_bind_text(s, 1, json_object_to_json_string_ext(array, JSON_C_TO_STRING_PLAIN), -1,
			  SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 2, now_ms - REPORT_BASELINE_WINDOW_MS);
	sqlite3_bind_int64(s, 3, exclude_job);
	sqlite3_bind_int64(s, 4, REPORT_BASELINE_MIN_CALLS);

	/* Rows come sorted by operation then p99: collect each run, take its middle. */
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
				free(values);
				snprintf(error, error_size, "out of memory");
				goto out;
			}
			values = grown;
			capacity = grown_capacity;
		}
		values[count++] = (uint64_t)sqlite3_column_int64(s, 1);
	}
	free(values);
	if (rc != SQLITE_DONE) {
		snprintf(error, error_size, "%s: %s", path, sqlite3_errmsg(db));
		goto out;
	}
	result = 0;
out:
	json_object_put(array);
	sqlite3_finalize(s);
	sqlite3_close(db);
	return result;
}

/* ---- report files ----------------------------------------------------------- */

static int add_job_object(struct report_set *set, struct json_object *job, const char *origin,
			  char *error, size_t error_size)
{
	struct json_object *steps;
	if (!json_object_is_type(job, json_type_object) ||
	    !json_object_object_get_ex(job, "steps", &steps) ||
	    !json_object_is_type(steps, json_type_array)) {
		snprintf(error, error_size, "%s: not a vnfs job (no \"steps\" array)", origin);
		return -1;
	}
	for (size_t i = 0; i < json_object_array_length(steps); i++) {
		struct vnfs_step_record record;
		char message[256], safe[256 * VNFS_ESCAPE_GROWTH];
		if (vnfs_step_record_from_json(json_object_array_get_idx(steps, i), &record, message,
					       sizeof(message)) < 0) {
			/* The message may quote the input (an unknown field's name). */
			snprintf(error, error_size, "%s: steps[%zu]: %s", origin, i,
				 vnfs_escape_string(VNFS_ESCAPE_TERMINAL, message, safe,
						    sizeof(safe)));
			return -1;
		}
		if (report_set_take(set, &record) < 0) {
			snprintf(error, error_size, "out of memory");
			return -1;
		}
	}
	return 0;
}

/*
 * A job directory may hold anything: an older helper gave it to the job's
 * owner, and on a shared filesystem other hosts write there too.  So every
 * entry is looked at without following it (a FIFO would block the reader, a
 * symlink to /dev/zero fill its memory), only regular files of bounded size
 * are read, through a descriptor opened relative to the directory, and a
 * file's records are taken only if they belong to the directory's job and,
 * unless root wrote the file, to the file's owner.  Anything else is
 * skipped with a message naming the file and the reason; the others are
 * still read.
 */

/*
 * Entries of one job directory looked at, at most: one per node (Slurm's
 * largest clusters have tens of thousands), and a bound on the time a
 * directory stuffed with junk can cost.
 */
#define REPORT_MAX_DIRECTORY_ENTRIES 65536

/*
 * What all the files of one job directory may cost together, in JSON
 * objects and values (report_files.h has the costs): as much as one file,
 * so that vnfs-report spends well under a second on a directory whatever it
 * holds.  That is 500 to 650 step records over all the job's nodes; the
 * files past it are skipped, each with a message.
 */
#define REPORT_JOB_MAX_OBJECTS ((size_t)VNFS_REPORT_FILE_MAX_OBJECTS)
#define REPORT_JOB_MAX_VALUES ((size_t)VNFS_REPORT_FILE_MAX_VALUES)

/*
 * What each file costs the budget at least, in values: opening and reading
 * a file costs about as much as parsing 64 values, so a directory of many
 * tiny files is bounded too (to 4,096 files read).  Every real report file
 * holds several hundred values.
 */
#define REPORT_FILE_MIN_VALUES 64

/* What the files of a job directory not read yet may still cost. */
struct report_budget {
	size_t objects;
	size_t values;
};

/* Text from a file (its name, a user name) made harmless on a terminal. */
static const char *printable(const char *text, char *out, size_t size)
{
	return vnfs_escape_string(VNFS_ESCAPE_TERMINAL, text, out, size);
}

/* Adds one message to error, after those already there ("; " between). */
__attribute__((format(printf, 3, 4))) static void add_message(char *error, size_t error_size,
							      const char *format, ...)
{
	size_t used = strnlen(error, error_size);
	if (used + 3 >= error_size)
		return;
	if (used > 0) {
		memcpy(error + used, "; ", 3);
		used += 2;
	}
	va_list arguments;
	va_start(arguments, format);
	vsnprintf(error + used, error_size - used, format, arguments);
	va_end(arguments);
}

/* The name of uid on this node, or false when it has none. */
static bool user_name(uid_t uid, char *name, size_t size)
{
	struct passwd entry, *found = NULL;
	char buffer[4096];
	if (getpwuid_r(uid, &entry, buffer, sizeof(buffer), &found) != 0 || found == NULL)
		return false;
	snprintf(name, size, "%s", found->pw_name);
	return true;
}

/*
 * Whether a file's records may be shown as what they say: all of the
 * directory's job, and, in a file root did not write, all of the file's
 * owner (by uid, and by name where this node knows the uid; a writer that
 * could not resolve the name wrote the number).
 */
static int check_records(const struct report_set *records, uint32_t job_id,
			 const struct stat *st, const char *origin, char *error, size_t error_size)
{
	char owner[64], number[16], safe[sizeof(records->records[0].user) * VNFS_ESCAPE_GROWTH];
	bool known = st->st_uid != 0 && user_name(st->st_uid, owner, sizeof(owner));
	snprintf(number, sizeof(number), "%u", (unsigned)st->st_uid);
	for (size_t i = 0; i < records->count; i++) {
		const struct vnfs_step_record *r = &records->records[i];
		if (r->job_id != job_id) {
			snprintf(error, error_size, "%s: holds a record of job %u, not of job %u",
				 origin, r->job_id, job_id);
			return -1;
		}
		if (st->st_uid == 0)
			continue;
		if (r->uid != st->st_uid) {
			snprintf(error, error_size,
				 "%s: holds a record of uid %u but is owned by uid %u", origin, r->uid,
				 (unsigned)st->st_uid);
			return -1;
		}
		if (known && strcmp(r->user, owner) != 0 && strcmp(r->user, number) != 0) {
			snprintf(error, error_size,
				 "%s: holds a record of user '%s' but is owned by %s (uid %u)", origin,
				 printable(r->user, safe, sizeof(safe)), owner, (unsigned)st->st_uid);
			return -1;
		}
	}
	return 0;
}

/* What an entry is when it is not a regular file, or NULL when it is one. */
static const char *unreadable_kind(const struct stat *st)
{
	if (S_ISLNK(st->st_mode))
		return "a symbolic link";
	if (S_ISFIFO(st->st_mode))
		return "a FIFO";
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
		return "a device";
	if (S_ISSOCK(st->st_mode))
		return "a socket";
	if (S_ISDIR(st->st_mode))
		return "a directory";
	if (!S_ISREG(st->st_mode))
		return "not a regular file";
	return NULL;
}

/*
 * Reads the whole of a regular file of at most VNFS_REPORT_FILE_MAX_BYTES
 * from fd (expected_size as fstat saw it) into a malloc'd buffer.  It reads
 * one byte more than it expects, and on to one byte past the limit if the
 * file grew since fstat, so such a file is caught too.  Returns the
 * buffer, or NULL with why in *why.
 */
static char *read_bounded(int fd, size_t expected_size, size_t *length, const char **why)
{
	const size_t limit = (size_t)VNFS_REPORT_FILE_MAX_BYTES + 1;
	size_t capacity = expected_size < limit ? expected_size + 1 : limit, used = 0;
	char *buffer = malloc(capacity);
	while (buffer != NULL) {
		if (used == capacity) {
			if (capacity == limit)
				break;
			char *grown = realloc(buffer, limit);
			if (grown == NULL)
				break;
			buffer = grown;
			capacity = limit;
		}
		ssize_t n = read(fd, buffer + used, capacity - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			*why = strerror(errno);
			free(buffer);
			return NULL;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	if (buffer == NULL || (used == capacity && capacity < limit)) {
		*why = "out of memory";
		free(buffer);
		return NULL;
	}
	if (used > VNFS_REPORT_FILE_MAX_BYTES) {
		*why = "larger than " VNFS_REPORT_FILE_MAX_TEXT " now";
		free(buffer);
		return NULL;
	}
	*length = used;
	return buffer;
}

/* The one JSON value text holds (whitespace around it allowed), or NULL. */
static struct json_object *parse_whole(const char *text, size_t length, const char **why)
{
	if (length == 0) {
		*why = "empty";
		return NULL;
	}
	struct json_tokener *tokener = json_tokener_new();
	if (tokener == NULL) {
		*why = "out of memory";
		return NULL;
	}
	struct json_object *value = json_tokener_parse_ex(tokener, text, (int)length);
	enum json_tokener_error status = json_tokener_get_error(tokener);
	size_t end = json_tokener_get_parse_end(tokener);
	json_tokener_free(tokener);
	if (value == NULL || status != json_tokener_success) {
		*why = status == json_tokener_continue ? "cut short" : json_tokener_error_desc(status);
		json_object_put(value);
		return NULL;
	}
	while (end < length && (text[end] == ' ' || text[end] == '\n' || text[end] == '\t' ||
				text[end] == '\r'))
		end++;
	if (end != length) {
		*why = "text after the JSON value";
		json_object_put(value);
		return NULL;
	}
	return value;
}

/*
 * Opens name in dir_fd if it is a regular file we may read; fills st.
 * Returns the descriptor, -1 with a message in error, or -2 when the caller
 * may not read it (another user's report).
 */
static int open_job_file(int dir_fd, const char *name, const char *origin, struct stat *st,
			 char *error, size_t error_size)
{
	/* Looked at first, so that a FIFO or a device is never even opened. */
	if (fstatat(dir_fd, name, st, AT_SYMLINK_NOFOLLOW) < 0) {
		snprintf(error, error_size, "%s: %s", origin, strerror(errno));
		return -1;
	}
	const char *kind = unreadable_kind(st);
	if (kind != NULL) {
		snprintf(error, error_size, "%s: is %s, not a report file: skipped", origin, kind);
		return -1;
	}
	/* O_NONBLOCK and O_NOFOLLOW: whatever replaced it since, open cannot block or follow. */
	int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == EACCES)
		return -2;
	if (fd < 0) {
		snprintf(error, error_size, "%s: %s", origin,
			 errno == ELOOP ? "is a symbolic link, not a report file: skipped"
					: strerror(errno));
		return -1;
	}
	if (fstat(fd, st) < 0) {
		snprintf(error, error_size, "%s: %s", origin, strerror(errno));
		close(fd);
		return -1;
	}
	kind = unreadable_kind(st);
	if (kind != NULL) {
		snprintf(error, error_size, "%s: is %s, not a report file: skipped", origin, kind);
		close(fd);
		return -1;
	}
	if ((uint64_t)st->st_size > VNFS_REPORT_FILE_MAX_BYTES) {
		snprintf(error, error_size, "%s: is %lld bytes, larger than %s: skipped", origin,
			 (long long)st->st_size, VNFS_REPORT_FILE_MAX_TEXT);
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Whether text may be parsed: within one file's bounds and what is left of
 * the directory's budget, which it then takes.  Counted, not parsed, so a
 * text that is over costs nothing more.
 */
static int spend_budget(const char *text, size_t length, struct report_budget *budget,
			const char *origin, char *error, size_t error_size)
{
	struct vnfs_report_json_size size;
	char why[128];
	vnfs_report_json_measure(text, length, &size);
	if (vnfs_report_json_check(length, &size, why, sizeof(why)) < 0) {
		snprintf(error, error_size, "%s: %s: skipped", origin, why);
		return -1;
	}
	if (size.values < REPORT_FILE_MIN_VALUES)
		size.values = REPORT_FILE_MIN_VALUES;
	if (size.objects > budget->objects || size.values > budget->values) {
		snprintf(error, error_size,
			 "%s: skipped, the files read before it took what one job directory may "
			 "hold (%zu JSON objects, %zu values)", origin, REPORT_JOB_MAX_OBJECTS,
			 REPORT_JOB_MAX_VALUES);
		return -1;
	}
	budget->objects -= size.objects;
	budget->values -= size.values;
	return 0;
}

/* The records of an open report file, into records (all or none). */
static int read_job_file(int fd, size_t size, const char *origin, struct report_budget *budget,
			 struct report_set *records, char *error, size_t error_size)
{
	const char *why = NULL;
	size_t length = 0;
	char *text = read_bounded(fd, size, &length, &why);
	if (text == NULL) {
		snprintf(error, error_size, "%s: %s: skipped", origin, why);
		return -1;
	}
	if (spend_budget(text, length, budget, origin, error, error_size) < 0) {
		free(text);
		return -1;
	}
	struct json_object *job = parse_whole(text, length, &why);
	free(text);
	if (job == NULL) {
		snprintf(error, error_size, "%s: not JSON (%s): skipped", origin, why);
		return -1;
	}
	int rc = add_job_object(records, job, origin, error, error_size);
	json_object_put(job);
	return rc;
}

/* Moves every record of from into to; from is left empty. */
static int move_records(struct report_set *to, struct report_set *from)
{
	int rc = 0;
	for (size_t i = 0; i < from->count; i++)
		if (report_set_take(to, &from->records[i]) < 0)
			rc = -1;
	report_set_free(from);
	return rc;
}

static int load_job_file(struct report_set *set, int dir_fd, const char *directory,
			 const char *name, uint32_t job_id, struct report_budget *budget,
			 char *error, size_t error_size)
{
	char safe[(NAME_MAX + 1) * VNFS_ESCAPE_GROWTH], origin[PATH_MAX + sizeof(safe)];
	snprintf(origin, sizeof(origin), "%s/%s", directory, printable(name, safe, sizeof(safe)));
	struct stat st;
	int fd = open_job_file(dir_fd, name, origin, &st, error, error_size);
	if (fd < 0)
		return fd == -2 ? 1 : -1;
	struct report_set records;
	report_set_init(&records);
	int rc = read_job_file(fd, (size_t)st.st_size, origin, budget, &records, error,
			       error_size);
	close(fd);
	if (rc == 0)
		rc = check_records(&records, job_id, &st, origin, error, error_size);
	if (rc == 0 && move_records(set, &records) < 0) {
		snprintf(error, error_size, "out of memory");
		rc = -1;
	}
	report_set_free(&records);
	return rc;
}

int report_load_job_file(struct report_set *set, int dir_fd, const char *directory,
			 const char *name, uint32_t job_id, char *error, size_t error_size)
{
	struct report_budget budget = { REPORT_JOB_MAX_OBJECTS, REPORT_JOB_MAX_VALUES };
	return load_job_file(set, dir_fd, directory, name, job_id, &budget, error, error_size);
}

static bool has_suffix(const char *name, const char *suffix)
{
	size_t length = strlen(name), suffix_length = strlen(suffix);
	return length > suffix_length && strcmp(name + length - suffix_length, suffix) == 0;
}

/* report_dir/<job_id> as an open directory stream, or NULL (*missing when there is none). */
static DIR *open_job_directory(const char *report_dir, uint32_t job_id, const char *directory,
			       bool *missing, char *error, size_t error_size)
{
	*missing = false;
	/* O_PATH: users may search report_dir (0711) but not list it. */
	int report_fd = open(report_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (report_fd < 0) {
		*missing = errno == ENOENT || errno == ENOTDIR;
		snprintf(error, error_size, "%s: %s", report_dir, strerror(errno));
		return NULL;
	}
	char name[16];
	snprintf(name, sizeof(name), "%u", job_id);
	int fd = openat(report_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK |
					       O_CLOEXEC);
	int saved = errno;
	struct stat st;
	if (fd < 0 && (saved == ELOOP || saved == ENOTDIR) &&
	    fstatat(report_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		snprintf(error, error_size, "%s: is %s, not a job directory: skipped", directory,
			 S_ISLNK(st.st_mode) ? "a symbolic link" : "not a directory");
	else if (fd < 0)
		snprintf(error, error_size, "%s: %s", directory, strerror(saved));
	close(report_fd);
	*missing = fd < 0 && saved == ENOENT;
	if (fd < 0)
		return NULL;
	DIR *dir = fdopendir(fd);
	if (dir == NULL) {
		snprintf(error, error_size, "%s: %s", directory, strerror(errno));
		close(fd);
	}
	return dir;
}

int report_load_files(struct report_set *set, const char *report_dir, uint32_t job_id,
		      char *error, size_t error_size)
{
	char directory[4096];
	snprintf(directory, sizeof(directory), "%s/%u", report_dir, job_id);
	bool missing;
	DIR *dir = open_job_directory(report_dir, job_id, directory, &missing, error, error_size);
	if (dir == NULL)
		return missing ? 0 : -1; /* no node wrote a report for this job */
	error[0] = '\0';
	int result = 0;
	size_t entries = 0;
	struct report_budget budget = { REPORT_JOB_MAX_OBJECTS, REPORT_JOB_MAX_VALUES };
	size_t not_read = 0;
	struct dirent *entry;
	while ((entry = readdir(dir)) != NULL) {
		if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
			continue;
		if (++entries > REPORT_MAX_DIRECTORY_ENTRIES) {
			add_message(error, error_size, "%s: more than %d entries: the rest skipped",
				    directory, REPORT_MAX_DIRECTORY_ENTRIES);
			result = -1;
			break;
		}
		if (entry->d_name[0] == '.' || !has_suffix(entry->d_name, ".json"))
			continue;
		/* Spent: the rest are counted, not even looked at. */
		if (budget.values < REPORT_FILE_MIN_VALUES || budget.objects == 0) {
			not_read++;
			continue;
		}
		char message[PATH_MAX + 1024];
		/* 1: not ours to read (another user's data, mode 0640): nothing to say. */
		if (load_job_file(set, dirfd(dir), directory, entry->d_name, job_id, &budget,
				  message, sizeof(message)) < 0) {
			add_message(error, error_size, "%s", message);
			result = -1; /* keep reading the other nodes */
		}
	}
	closedir(dir);
	if (not_read > 0) {
		add_message(error, error_size,
			    "%s: %zu more .json files not read: the files read before them took "
			    "what one job directory may hold (%zu JSON objects, %zu values)",
			    directory, not_read, REPORT_JOB_MAX_OBJECTS, REPORT_JOB_MAX_VALUES);
		result = -1;
	}
	return result;
}

/* ---- the helper --------------------------------------------------------------- */

static bool selected_job(const struct report_filter *filter, uint32_t job_id)
{
	if (filter->job_count == 0)
		return true;
	for (size_t i = 0; i < filter->job_count; i++)
		if (filter->jobs[i].job_id == job_id)
			return true;
	return false;
}

/* Moves the steps of job (a decoded reply's) into set. */
static int take_job(struct report_set *set, struct vnfs_owned_job *job, char *error,
		    size_t error_size)
{
	for (size_t i = 0; i < job->step_count; i++) {
		if (report_set_take(set, &job->steps[i]) < 0) {
			snprintf(error, error_size, "out of memory");
			return -1;
		}
	}
	return 0;
}

/* QUERY job_id.  Returns 1 with its steps added, 0 when the helper refused
 * (the job is not there, or not the caller's) or could not be asked, -1
 * with a message in error when its reply does not read. */
static int query_job(struct report_set *set, const char *socket_path, uint32_t job_id,
		     int timeout_ms, char *error, size_t error_size)
{
	struct vnfs_request query;
	struct vnfs_reply answer;
	char message[512];
	int result;

	memset(&query, 0, sizeof(query));
	query.type = VNFS_REQUEST_QUERY;
	query.job_id = job_id;
	result = vnfs_client_call(socket_path, &query, timeout_ms, &answer, message,
				  sizeof(message));
	if (result == VNFS_CLIENT_UNREADABLE)
		snprintf(error, error_size, "%s", message);
	if (result < 0)
		return result == VNFS_CLIENT_UNREADABLE ? -1 : 0;
	result = take_job(set, &answer.job, error, error_size) < 0 ? -1 : 1;
	vnfs_reply_free(&answer);
	return result;
}

int report_load_live(struct report_set *set, const char *socket_path,
		     const struct report_filter *filter, int timeout_ms, char *error,
		     size_t error_size)
{
	struct vnfs_request request;
	memset(&request, 0, sizeof(request));
	request.type = VNFS_REQUEST_LIST;
	struct vnfs_reply reply;
	if (vnfs_client_call(socket_path, &request, timeout_ms, &reply, error, error_size) < 0)
		return -1;

	/* LIST names the steps the caller may see; QUERY each job once. */
	uint32_t done[REPORT_MAX_SELECTED_JOBS];
	size_t done_count = 0;
	int result = 0;
	for (size_t i = 0; i < reply.entry_count; i++) {
		uint32_t job_id = reply.entries[i].job_id;
		bool seen = false;
		for (size_t d = 0; d < done_count && !seen; d++)
			seen = done[d] == job_id;
		if (seen || !selected_job(filter, job_id) || done_count == REPORT_MAX_SELECTED_JOBS)
			continue;
		done[done_count++] = job_id;
		/* A job that ended between LIST and QUERY is simply gone. */
		if (query_job(set, socket_path, job_id, timeout_ms, error, error_size) < 0)
			result = -1;
	}
	vnfs_reply_free(&reply);
	return result;
}

/* The job JSON (vnfs_job_to_json) of the steps of one job in set (not empty). */
static struct json_object *job_json_of_set(const struct report_set *set)
{
	struct vnfs_job job;

	vnfs_job_of_steps(&job, set->records[0].job_id, set->records[0].node, set->records,
			  set->count);
	return vnfs_job_to_json(&job);
}

struct json_object *report_history_job(const char *path, uint32_t job_id, uint32_t *owner_uid,
				       char *error, size_t error_size)
{
	struct report_filter *filter = calloc(1, sizeof(*filter));
	struct report_database *database = NULL;
	struct json_object *json = NULL;
	struct report_set set;

	report_set_init(&set);
	if (filter == NULL) {
		snprintf(error, error_size, "out of memory");
		return NULL;
	}
	filter->job_count = 1;
	filter->jobs[0].job_id = job_id;
	if (report_database_open(&database, path, filter, error, error_size) == 0 &&
	    report_database_read_job(database, &set, error, error_size) == 1 && set.count > 0) {
		*owner_uid = set.records[0].uid;
		json = job_json_of_set(&set);
	} else if (database != NULL) {
		snprintf(error, error_size, "job %u is not in the history", job_id);
	}
	report_database_close(database);
	report_set_free(&set);
	free(filter);
	return json;
}

struct json_object *report_history_jobs(const char *path, const struct report_filter *filter,
					size_t max_steps, bool *truncated, char *error,
					size_t error_size)
{
	struct report_database *database = NULL;
	struct json_object *jobs;
	size_t steps = 0;
	uint32_t next;

	*truncated = false;
	error[0] = '\0';
	if (report_database_open(&database, path, filter, error, error_size) < 0)
		return NULL;
	jobs = json_object_new_array();
	while (jobs != NULL && report_database_peek(database, &next)) {
		struct report_set set;
		int read;

		report_set_init(&set);
		read = report_database_read_job(database, &set, error, error_size);
		if (read < 0) {
			json_object_put(jobs);
			jobs = NULL;
		} else if (read > 0 && set.count > 0 && steps + set.count > max_steps) {
			*truncated = true;
		} else if (read > 0 && set.count > 0) {
			steps += set.count;
			json_object_array_add(jobs, job_json_of_set(&set));
		}
		report_set_free(&set);
		if (*truncated || read == 0)
			break;
	}
	if (jobs == NULL && error[0] == '\0')
		snprintf(error, error_size, "out of memory");
	report_database_close(database);
	return jobs;
}

int report_load_history_listing(struct report_set *set, const char *socket_path,
				const struct report_filter *filter, int timeout_ms,
				bool *truncated, char *error, size_t error_size)
{
	struct vnfs_request request;
	struct vnfs_reply answer;
	int result = 0;

	*truncated = false;
	memset(&request, 0, sizeof(request));
	request.type = VNFS_REQUEST_HISTORY;
	request.has_since = filter->has_start;
	request.since_ms = filter->start_ms;
	request.has_until = filter->has_end;
	request.until_ms = filter->end_ms;
	if (vnfs_client_call(socket_path, &request, timeout_ms, &answer, error, error_size) < 0)
		return -1;
	for (size_t i = 0; result == 0 && i < answer.job_count; i++)
		result = take_job(set, &answer.jobs[i], error, error_size);
	*truncated = answer.truncated;
	vnfs_reply_free(&answer);
	return result;
}

int report_load_queried_job(struct report_set *set, const char *socket_path, uint32_t job_id,
			    int timeout_ms, char *error, size_t error_size)
{
	return query_job(set, socket_path, job_id, timeout_ms, error, error_size);
}
