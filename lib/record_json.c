/*
 * record_json.c — the JSON of a step record and of a finished job, and the
 * strict reader for step records (docs/JSON.md).
 *
 * Every per-operation key comes from the VNFS_OPERATIONS list, so a new
 * operation appears in the JSON without touching this file.  The reader
 * trusts nothing: it checks every type, range and length and rejects keys it
 * does not know, so a report file or a reply from another version is refused
 * with a message rather than misread.  Histograms are written without their
 * trailing empty buckets (a step that only did cached getattrs has a handful
 * of buckets, not 36) and read back with the missing buckets as zero.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "lib/record_json.h"
#include "lib/protocol.h" /* the workload's JSON form */

static const char *const direction_names[VNFS_DIRECTIONS] = {
	[VNFS_DIRECTION_READ] = "read",
	[VNFS_DIRECTION_WRITE] = "write",
};

/* ---- writing ---------------------------------------------------------- */

/* "2026-11-29T17:09:16.123Z": UTC so the text means the same everywhere. */
static void format_time(int64_t time_ms, char *buf, size_t size)
{
	int64_t seconds = time_ms / 1000;
	int64_t millis = time_ms % 1000;
	if (millis < 0) {
		millis += 1000;
		seconds -= 1;
	}
	time_t t = (time_t)seconds;
	struct tm tm;
	if (gmtime_r(&t, &tm) == NULL) {
		snprintf(buf, size, "1970-01-01T00:00:00.000Z");
		return;
	}
	snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)millis);
}

static void add_u64(struct json_object *object, const char *key, uint64_t value)
{
	json_object_object_add(object, key, json_object_new_uint64(value));
}

/*
 * Every string enters JSON here.  json-c escapes quotes and controls but
 * copies invalid UTF-8 as is, and one such string makes the whole document
 * invalid: a strict receiver (Kafka consumer, HTTP endpoint) then refuses a
 * batch with every user's records.  So a key or value that is not valid
 * UTF-8 is written in its canonical form (lib/escape.h); process names are
 * canonical already.  The longest strings of a record are 255 bytes.
 */
#define JSON_TEXT_MAX (255 * VNFS_ESCAPE_GROWTH + 1)

static void add_string(struct json_object *object, const char *key, const char *value)
{
	char key_text[JSON_TEXT_MAX], value_text[JSON_TEXT_MAX];

	json_object_object_add(object, vnfs_json_text(key, key_text, sizeof(key_text)),
			       json_object_new_string(vnfs_json_text(value, value_text,
								     sizeof(value_text))));
}

static void add_time(struct json_object *object, const char *key, int64_t time_ms)
{
	char text[128]; /* room for any int the format could print */
	format_time(time_ms, text, sizeof(text));
	add_string(object, key, text);
}

static struct json_object *histogram_to_json(const __u64 *buckets, size_t count)
{
	while (count > 0 && buckets[count - 1] == 0)
		count--;
	struct json_object *array = json_object_new_array_ext((int)count);
	for (size_t b = 0; b < count; b++)
		json_object_array_add(array, json_object_new_uint64(buckets[b]));
	return array;
}

static void add_stats(struct json_object *object, const struct vnfs_step_stats *stats)
{
	struct json_object *operations = json_object_new_object();
	for (int op = 0; op < VNFS_OP_COUNT; op++) {
		const struct vnfs_operation_stats *s = &stats->operations[op];
		struct json_object *entry = json_object_new_object();
		add_u64(entry, "count", s->count);
		add_u64(entry, "errors", s->errors);
		add_u64(entry, "time_ns", s->time_ns);
		add_u64(entry, "bytes", s->bytes);
		json_object_object_add(entry, "latency_histogram",
				       histogram_to_json(s->latency_histogram,
							 VNFS_LATENCY_BUCKETS));
		json_object_object_add(operations, vnfs_operation_names[op], entry);
	}
	json_object_object_add(object, "operations", operations);

	struct json_object *sizes = json_object_new_object();
	for (int direction = 0; direction < VNFS_DIRECTIONS; direction++)
		json_object_object_add(sizes, direction_names[direction],
				       histogram_to_json(stats->request_size_histogram[direction],
							 VNFS_SIZE_BUCKETS));
	json_object_object_add(object, "request_size_histogram", sizes);
}

static struct json_object *processes_to_json(const struct vnfs_process_record *processes,
					     size_t count)
{
	struct json_object *array = json_object_new_array_ext((int)count);
	for (size_t i = 0; i < count; i++) {
		const struct vnfs_process_record *p = &processes[i];
		struct json_object *entry = json_object_new_object();
		char comm[sizeof(p->comm)];
		snprintf(comm, sizeof(comm), "%.*s", (int)sizeof(comm) - 1, p->comm);
		add_string(entry, "comm", comm);
		add_u64(entry, "read_ops", p->stats.read_ops);
		add_u64(entry, "read_bytes", p->stats.read_bytes);
		add_u64(entry, "write_ops", p->stats.write_ops);
		add_u64(entry, "write_bytes", p->stats.write_bytes);
		add_u64(entry, "other_ops", p->stats.other_ops);
		json_object_array_add(array, entry);
	}
	return array;
}

static struct json_object *mounts_to_json(const struct vnfs_mount_record *mounts, size_t count)
{
	struct json_object *array = json_object_new_array_ext((int)count);
	for (size_t i = 0; i < count; i++) {
		const struct vnfs_mount_record *m = &mounts[i];
		struct json_object *entry = json_object_new_object();
		add_u64(entry, "device", m->device);
		add_string(entry, "mount_point", m->mount_point);
		add_string(entry, "source", m->source);
		add_string(entry, "version", m->version);
		add_u64(entry, "rsize", m->rsize);
		add_u64(entry, "wsize", m->wsize);
		add_u64(entry, "ops", m->stats.ops);
		add_u64(entry, "errors", m->stats.errors);
		add_u64(entry, "time_ns", m->stats.time_ns);
		add_u64(entry, "read_bytes", m->stats.read_bytes);
		add_u64(entry, "write_bytes", m->stats.write_bytes);
		json_object_array_add(array, entry);
	}
	return array;
}

static struct json_object *wire_to_json(const struct vnfs_wire_record *rows, size_t count)
{
	struct json_object *array = json_object_new_array_ext((int)count);

	for (size_t i = 0; i < count; i++) {
		const struct vnfs_wire_record *row = &rows[i];
		struct vnfs_wire_stats stats = row->stats;
		struct json_object *entry = json_object_new_object();
		struct json_object *kinds = json_object_new_object();

		add_u64(entry, "device", row->device);
		add_string(entry, "mount_point", row->mount_point);
		add_u64(entry, "version", row->version);
		add_string(entry, "procedure", row->procedure);
		for (size_t c = 0; c < VNFS_WIRE_COUNTERS; c++)
			add_u64(entry, vnfs_wire_counters[c].name,
				*vnfs_wire_field(&stats, &vnfs_wire_counters[c]));
		for (int kind = 0; kind < VNFS_WIRE_ERRORS; kind++)
			add_u64(kinds, vnfs_wire_error_names[kind], stats.error_kinds[kind]);
		json_object_object_add(entry, "error_kinds", kinds);
		for (size_t h = 0; h < VNFS_WIRE_HISTOGRAMS; h++)
			json_object_object_add(
				entry, vnfs_wire_histograms[h].name,
				histogram_to_json(vnfs_wire_field(&stats, &vnfs_wire_histograms[h]),
						  VNFS_LATENCY_BUCKETS));
		json_object_array_add(array, entry);
	}
	return array;
}

/*
 * A Slurm step's record is written as before the identity was general
 * ("job": 42, "step": "0"), so that every reader of today's files and
 * streams keeps reading them; any other workload in the protocol's general
 * form ("source", "job" and "part" as text: lib/protocol.h).  A Slurm job
 * likewise: "job": 42.
 */
static void add_identity(struct json_object *object, const struct vnfs_workload *workload)
{
	uint32_t job_id, step_id;

	if (workload->part[0] == '\0' && vnfs_workload_slurm_job_id(workload, &job_id) == 0) {
		add_u64(object, "job", job_id);
	} else if (vnfs_workload_slurm_ids(workload, &job_id, &step_id) == 0) {
		add_u64(object, "job", job_id);
		add_string(object, "step", workload->part);
	} else {
		(void)vnfs_protocol_add_workload(object, workload);
	}
}

struct json_object *vnfs_step_record_to_json(const struct vnfs_step_record *record)
{
	struct json_object *object = json_object_new_object();

	add_identity(object, &record->workload);
	add_u64(object, "uid", record->uid);
	add_string(object, "user", record->user);
	add_string(object, "node", record->node);
	add_u64(object, "cgroup_id", record->cgroup_id);
	add_string(object, "cgroup_path", record->cgroup_path);

	struct json_object *tags = json_object_new_object();
	const char *name, *value;
	for (unsigned i = 0; vnfs_tags_get(record->tags, i, &name, &value); i++)
		add_string(tags, name, value);
	json_object_object_add(object, "tags", tags);

	add_time(object, "start_time", record->start_time_ms);
	if (record->end_time_ms != 0)
		add_time(object, "end_time", record->end_time_ms);
	else
		json_object_object_add(object, "end_time", NULL);
	add_time(object, "sample_time", record->sample_time_ms);
	json_object_object_add(object, "finished", json_object_new_boolean(record->finished));

	static const struct vnfs_step_stats no_stats;
	add_stats(object, record->stats != NULL ? record->stats : &no_stats);
	json_object_object_add(object, "processes",
			       processes_to_json(record->processes, record->process_count));
	json_object_object_add(object, "mounts",
			       mounts_to_json(record->mounts, record->mount_count));
	json_object_object_add(object, "wire", wire_to_json(record->wire, record->wire_count));
	return object;
}

/* ---- job totals --------------------------------------------------------- */

static int compare_process(const void *a, const void *b)
{
	const struct vnfs_process_record *x = a, *y = b;
	return strncmp(x->comm, y->comm, sizeof(x->comm));
}

static int compare_mount(const void *a, const void *b)
{
	const struct vnfs_mount_record *x = a, *y = b;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return strcmp(x->mount_point, y->mount_point);
}

/* All steps' processes, merged by name (sorted), into a new array. */
static struct vnfs_process_record *merge_processes(const struct vnfs_job *job, size_t *count)
{
	size_t total = 0;
	for (size_t s = 0; s < job->step_count; s++)
		total += job->steps[s].process_count;
	*count = 0;
	if (total == 0)
		return NULL;
	struct vnfs_process_record *all = calloc(total, sizeof(*all));
	if (all == NULL)
		return NULL;
	size_t n = 0;
	for (size_t s = 0; s < job->step_count; s++)
		for (size_t p = 0; p < job->steps[s].process_count; p++)
			all[n++] = job->steps[s].processes[p];
	qsort(all, n, sizeof(*all), compare_process);

	size_t merged = 0;
	for (size_t i = 0; i < n; i++) {
		if (merged > 0 && compare_process(&all[merged - 1], &all[i]) == 0) {
			struct vnfs_process_stats *to = &all[merged - 1].stats;
			to->read_ops += all[i].stats.read_ops;
			to->read_bytes += all[i].stats.read_bytes;
			to->write_ops += all[i].stats.write_ops;
			to->write_bytes += all[i].stats.write_bytes;
			to->other_ops += all[i].stats.other_ops;
		} else {
			all[merged++] = all[i];
		}
	}
	*count = merged;
	return all;
}

/* All steps' mounts, merged by device and mount point, into a new array. */
static struct vnfs_mount_record *merge_mounts(const struct vnfs_job *job, size_t *count)
{
	size_t total = 0;
	for (size_t s = 0; s < job->step_count; s++)
		total += job->steps[s].mount_count;
	*count = 0;
	if (total == 0)
		return NULL;
	struct vnfs_mount_record *all = calloc(total, sizeof(*all));
	if (all == NULL)
		return NULL;
	size_t n = 0;
	for (size_t s = 0; s < job->step_count; s++)
		for (size_t m = 0; m < job->steps[s].mount_count; m++)
			all[n++] = job->steps[s].mounts[m];
	qsort(all, n, sizeof(*all), compare_mount);

	size_t merged = 0;
	for (size_t i = 0; i < n; i++) {
		if (merged > 0 && compare_mount(&all[merged - 1], &all[i]) == 0) {
			struct vnfs_mount_stats *to = &all[merged - 1].stats;
			to->ops += all[i].stats.ops;
			to->errors += all[i].stats.errors;
			to->time_ns += all[i].stats.time_ns;
			to->read_bytes += all[i].stats.read_bytes;
			to->write_bytes += all[i].stats.write_bytes;
		} else {
			all[merged++] = all[i];
		}
	}
	*count = merged;
	return all;
}

static int compare_wire(const void *a, const void *b)
{
	const struct vnfs_wire_record *x = a, *y = b;
	int order = strcmp(x->mount_point, y->mount_point);

	if (order == 0)
		order = x->device < y->device ? -1 : x->device > y->device;
	if (order == 0)
		order = x->version < y->version ? -1 : x->version > y->version;
	if (order == 0)
		order = strcmp(x->procedure, y->procedure);
	return order;
}

/* All steps' wire rows, merged by mount and procedure, into a new array. */
static struct vnfs_wire_record *merge_wire(const struct vnfs_job *job, size_t *count)
{
	size_t total = 0, n = 0, merged = 0;
	struct vnfs_wire_record *all;

	for (size_t s = 0; s < job->step_count; s++)
		total += job->steps[s].wire_count;
	*count = 0;
	if (total == 0 || (all = calloc(total, sizeof(*all))) == NULL)
		return NULL;
	for (size_t s = 0; s < job->step_count; s++)
		for (size_t w = 0; w < job->steps[s].wire_count; w++)
			all[n++] = job->steps[s].wire[w];
	qsort(all, n, sizeof(*all), compare_wire);
	for (size_t i = 0; i < n; i++) {
		if (merged > 0 && compare_wire(&all[merged - 1], &all[i]) == 0)
			vnfs_wire_stats_add(&all[merged - 1].stats, &all[i].stats);
		else
			all[merged++] = all[i];
	}
	*count = merged;
	return all;
}

struct json_object *vnfs_job_to_json(const struct vnfs_job *job)
{
	struct json_object *object = json_object_new_object();

	add_identity(object, &job->workload);
	add_u64(object, "uid", job->uid);
	add_string(object, "user", job->user != NULL ? job->user : "");
	add_string(object, "node", job->node != NULL ? job->node : "");
	add_time(object, "start_time", job->start_time_ms);
	if (job->end_time_ms != 0)
		add_time(object, "end_time", job->end_time_ms);
	else
		json_object_object_add(object, "end_time", NULL);

	struct vnfs_step_stats *totals = calloc(1, sizeof(*totals));
	if (totals != NULL) {
		for (size_t s = 0; s < job->step_count; s++)
			if (job->steps[s].stats != NULL)
				vnfs_step_stats_add(totals, job->steps[s].stats);
		add_stats(object, totals);
		free(totals);
	}
	size_t process_count, mount_count;
	struct vnfs_process_record *processes = merge_processes(job, &process_count);
	struct vnfs_mount_record *mounts = merge_mounts(job, &mount_count);
	json_object_object_add(object, "processes", processes_to_json(processes, process_count));
	json_object_object_add(object, "mounts", mounts_to_json(mounts, mount_count));
	free(processes);
	free(mounts);
	size_t wire_count;
	struct vnfs_wire_record *wire = merge_wire(job, &wire_count);
	json_object_object_add(object, "wire", wire_to_json(wire, wire_count));
	free(wire);

	struct json_object *steps = json_object_new_array_ext((int)job->step_count);
	for (size_t s = 0; s < job->step_count; s++)
		json_object_array_add(steps, vnfs_step_record_to_json(&job->steps[s]));
	json_object_object_add(object, "steps", steps);
	return object;
}

/* ---- reading ------------------------------------------------------------ */

/* Where the reader is ("mounts[2].rsize"), for its messages. */
struct reader {
	char *error;
	size_t error_size;
	char path[96];
};

__attribute__((format(printf, 2, 3))) static int fail(struct reader *reader, const char *format,
						      ...)
{
	char message[160];
	va_list args;
	va_start(args, format);
	vsnprintf(message, sizeof(message), format, args);
	va_end(args);
	if (reader->path[0] != '\0')
		snprintf(reader->error, reader->error_size, "%s: %s", reader->path, message);
	else
		snprintf(reader->error, reader->error_size, "%s", message);
	return -1;
}

/* Every key of object must be one of keys (a NULL-terminated list). */
static int check_keys(struct reader *reader, const struct json_object *object,
		      const char *const *keys)
{
	json_object_object_foreach((struct json_object *)object, key, value) {
		(void)value;
		bool known = false;
		for (size_t i = 0; keys[i] != NULL && !known; i++)
			known = strcmp(keys[i], key) == 0;
		if (!known)
			return fail(reader, "unknown field '%.40s'", key);
	}
	return 0;
}

static int need_object(struct reader *reader, const struct json_object *object,
		       const char *what)
{
	if (!json_object_is_type(object, json_type_object))
		return fail(reader, "%s must be an object", what);
	return 0;
}

static struct json_object *member(struct reader *reader, const struct json_object *object,
				  const char *key)
{
	struct json_object *value;
	if (!json_object_object_get_ex(object, key, &value) || value == NULL) {
		fail(reader, "missing field '%s'", key);
		return NULL;
	}
	return value;
}

static int read_u64_value(struct reader *reader, const struct json_object *value,
			  const char *key, uint64_t max, uint64_t *out)
{
	if (!json_object_is_type(value, json_type_int))
		return fail(reader, "field '%s' must be an integer", key);
	if (json_object_get_int64(value) < 0)
		return fail(reader, "field '%s' must not be negative", key);
	errno = 0;
	uint64_t number = json_object_get_uint64(value);
	if (errno != 0 || number > max)
		return fail(reader, "field '%s' must be at most %" PRIu64, key, max);
	*out = number;
	return 0;
}

static int read_u64(struct reader *reader, const struct json_object *object, const char *key,
		    uint64_t max, uint64_t *out)
{
	struct json_object *value = member(reader, object, key);
	if (value == NULL)
		return -1;
	return read_u64_value(reader, value, key, max, out);
}

/* The __u64 counters of the BPF ABI (unsigned long long, not uint64_t). */
static int read_counter(struct reader *reader, const struct json_object *object,
			const char *key, __u64 *out)
{
	uint64_t value;
	if (read_u64(reader, object, key, UINT64_MAX, &value) < 0)
		return -1;
	*out = value;
	return 0;
}

static int read_u32(struct reader *reader, const struct json_object *object, const char *key,
		    uint32_t *out)
{
	uint64_t value;
	if (read_u64(reader, object, key, UINT32_MAX, &value) < 0)
		return -1;
	*out = (uint32_t)value;
	return 0;
}

static int read_string(struct reader *reader, const struct json_object *object,
		       const char *key, char *buf, size_t size)
{
	struct json_object *value = member(reader, object, key);
	if (value == NULL)
		return -1;
	if (!json_object_is_type(value, json_type_string))
		return fail(reader, "field '%s' must be a string", key);
	size_t length = (size_t)json_object_get_string_len(value);
	const char *text = json_object_get_string(value);
	if (length >= size)
		return fail(reader, "field '%s' is longer than %zu bytes", key, size - 1);
	if (memchr(text, '\0', length) != NULL)
		return fail(reader, "field '%s' contains a NUL byte", key);
	/* JSON is UTF-8 (RFC 8259) and the writer writes nothing else: what is
	 * not came from somewhere else, and written back escaped it could no
	 * longer fit the field (found by fuzz_record_json). */
	if (!vnfs_utf8_valid(text, length))
		return fail(reader, "field '%s' is not valid UTF-8", key);
	memcpy(buf, text, length);
	buf[length] = '\0';
	return 0;
}

static bool is_leap(int year)
{
	return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

/* Exactly the form format_time writes. */
static int parse_time(const char *text, int64_t *time_ms)
{
	int year, month, day, hour, minute, second, millis, consumed = -1;
	if (strlen(text) != 24 ||
	    sscanf(text, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ%n", &year, &month, &day, &hour, &minute,
		   &second, &millis, &consumed) != 7 ||
	    consumed != 24)
		return -1;
	static const int month_days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	if (year < 1970 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 ||
	    second > 60 || millis < 0 || hour < 0 || minute < 0 || second < 0)
		return -1;
	int days_in_month = month_days[month - 1] + (month == 2 && is_leap(year) ? 1 : 0);
	if (day > days_in_month)
		return -1;
	struct tm tm = { .tm_year = year - 1900, .tm_mon = month - 1, .tm_mday = day,
			 .tm_hour = hour, .tm_min = minute, .tm_sec = second };
	time_t seconds = timegm(&tm);
	*time_ms = (int64_t)seconds * 1000 + millis;
	return 0;
}

static int read_time(struct reader *reader, const struct json_object *object, const char *key,
		     bool nullable, int64_t *time_ms)
{
	struct json_object *value;
	if (!json_object_object_get_ex(object, key, &value))
		return fail(reader, "missing field '%s'", key);
	if (value == NULL) {
		if (!nullable)
			return fail(reader, "field '%s' must not be null", key);
		*time_ms = 0;
		return 0;
	}
	if (!json_object_is_type(value, json_type_string) ||
	    parse_time(json_object_get_string(value), time_ms) < 0)
		return fail(reader, "field '%s' must be a time like 2026-11-29T17:09:16.123Z", key);
	return 0;
}

static int read_histogram(struct reader *reader, const struct json_object *object,
			  const char *key, __u64 *buckets, size_t bucket_count)
{
	struct json_object *array = member(reader, object, key);
	if (array == NULL)
		return -1;
	if (!json_object_is_type(array, json_type_array))
		return fail(reader, "field '%s' must be an array", key);
	size_t length = json_object_array_length(array);
	if (length > bucket_count)
		return fail(reader, "field '%s' has %zu buckets, at most %zu allowed", key, length,
			    bucket_count);
	memset(buckets, 0, bucket_count * sizeof(*buckets));
	for (size_t b = 0; b < length; b++) {
		uint64_t value;
		if (read_u64_value(reader, json_object_array_get_idx(array, b), key, UINT64_MAX,
				   &value) < 0)
			return -1;
		buckets[b] = value;
	}
	return 0;
}

static int read_operation(struct reader *reader, const struct json_object *object,
			  struct vnfs_operation_stats *stats)
{
	static const char *const keys[] = { "count", "errors", "time_ns", "bytes",
					    "latency_histogram", NULL };
	if (need_object(reader, object, "an operation") < 0 || check_keys(reader, object, keys) < 0)
		return -1;
	uint64_t count, errors, time_ns, bytes;
	if (read_u64(reader, object, "count", UINT64_MAX, &count) < 0 ||
	    read_u64(reader, object, "errors", UINT64_MAX, &errors) < 0 ||
	    read_u64(reader, object, "time_ns", UINT64_MAX, &time_ns) < 0 ||
	    read_u64(reader, object, "bytes", UINT64_MAX, &bytes) < 0 ||
	    read_histogram(reader, object, "latency_histogram", stats->latency_histogram,
			   VNFS_LATENCY_BUCKETS) < 0)
		return -1;
	stats->count = count;
	stats->errors = errors;
	stats->time_ns = time_ns;
	stats->bytes = bytes;
	return 0;
}

static int read_stats(struct reader *reader, const struct json_object *object,
		      struct vnfs_step_stats *stats)
{
	size_t path_length = strlen(reader->path);
	struct json_object *operations = member(reader, object, "operations");
	if (operations == NULL || need_object(reader, operations, "'operations'") < 0)
		return -1;
	json_object_object_foreach(operations, key, value) {
		(void)value;
		bool known = false;
		for (int op = 0; op < VNFS_OP_COUNT && !known; op++)
			known = strcmp(vnfs_operation_names[op], key) == 0;
		if (!known)
			return fail(reader, "unknown operation '%.40s'", key);
	}
	for (int op = 0; op < VNFS_OP_COUNT; op++) {
		struct json_object *entry;
		if (!json_object_object_get_ex(operations, vnfs_operation_names[op], &entry))
			return fail(reader, "operation '%s' missing", vnfs_operation_names[op]);
		snprintf(reader->path + path_length, sizeof(reader->path) - path_length,
			 "%soperations.%s", path_length > 0 ? "." : "", vnfs_operation_names[op]);
		if (read_operation(reader, entry, &stats->operations[op]) < 0)
			return -1;
		reader->path[path_length] = '\0';
	}

	static const char *const direction_keys[] = { "read", "write", NULL };
	struct json_object *sizes = member(reader, object, "request_size_histogram");
	if (sizes == NULL || need_object(reader, sizes, "'request_size_histogram'") < 0 ||
	    check_keys(reader, sizes, direction_keys) < 0)
		return -1;
	for (int direction = 0; direction < VNFS_DIRECTIONS; direction++)
		if (read_histogram(reader, sizes, direction_names[direction],
				   stats->request_size_histogram[direction],
				   VNFS_SIZE_BUCKETS) < 0)
			return -1;
	return 0;
}

static int read_tags(struct reader *reader, const struct json_object *object,
		     struct vnfs_tag_list *tags)
{
	struct json_object *value = member(reader, object, "tags");
	if (value == NULL || need_object(reader, value, "'tags'") < 0)
		return -1;
	vnfs_tags_init(tags);
	json_object_object_foreach(value, name, tag_value) {
		if (!json_object_is_type(tag_value, json_type_string))
			return fail(reader, "tag '%.64s' must be a string", name);
		char message[200];
		if (vnfs_tags_set(tags, name, json_object_get_string(tag_value), message,
				  sizeof(message)) < 0)
			return fail(reader, "%s", message);
	}
	return 0;
}

static int read_processes(struct reader *reader, const struct json_object *object,
			  struct vnfs_step_record *record)
{
	static const char *const keys[] = { "comm", "read_ops", "read_bytes", "write_ops",
					    "write_bytes", "other_ops", NULL };
	struct json_object *array = member(reader, object, "processes");
	if (array == NULL)
		return -1;
	if (!json_object_is_type(array, json_type_array))
		return fail(reader, "field 'processes' must be an array");
	size_t count = json_object_array_length(array);
	if (count > VNFS_MAX_PROCESS_ENTRIES)
		return fail(reader, "%zu processes, at most %d allowed", count,
			    VNFS_MAX_PROCESS_ENTRIES);
	if (count == 0)
		return 0;
	struct vnfs_process_record *processes = calloc(count, sizeof(*processes));
	if (processes == NULL)
		return fail(reader, "out of memory");
	record->processes = processes;
	record->process_count = count;
	for (size_t i = 0; i < count; i++) {
		struct json_object *entry = json_object_array_get_idx(array, i);
		struct vnfs_process_stats *s = &processes[i].stats;
		snprintf(reader->path, sizeof(reader->path), "processes[%zu]", i);
		if (need_object(reader, entry, "a process") < 0 ||
		    check_keys(reader, entry, keys) < 0 ||
		    read_string(reader, entry, "comm", processes[i].comm,
				sizeof(processes[i].comm)) < 0 ||
		    read_counter(reader, entry, "read_ops", &s->read_ops) < 0 ||
		    read_counter(reader, entry, "read_bytes", &s->read_bytes) < 0 ||
		    read_counter(reader, entry, "write_ops", &s->write_ops) < 0 ||
		    read_counter(reader, entry, "write_bytes", &s->write_bytes) < 0 ||
		    read_counter(reader, entry, "other_ops", &s->other_ops) < 0)
			return -1;
	}
	reader->path[0] = '\0';
	return 0;
}

static int read_mounts(struct reader *reader, const struct json_object *object,
		       struct vnfs_step_record *record)
{
	static const char *const keys[] = { "device", "mount_point", "source", "version",
					    "rsize", "wsize", "ops", "errors", "time_ns",
					    "read_bytes", "write_bytes", NULL };
	struct json_object *array = member(reader, object, "mounts");
	if (array == NULL)
		return -1;
	if (!json_object_is_type(array, json_type_array))
		return fail(reader, "field 'mounts' must be an array");
	size_t count = json_object_array_length(array);
	if (count > VNFS_MAX_MOUNT_ENTRIES)
		return fail(reader, "%zu mounts, at most %d allowed", count, VNFS_MAX_MOUNT_ENTRIES);
	if (count == 0)
		return 0;
	struct vnfs_mount_record *mounts = calloc(count, sizeof(*mounts));
	if (mounts == NULL)
		return fail(reader, "out of memory");
	record->mounts = mounts;
	record->mount_count = count;
	for (size_t i = 0; i < count; i++) {
		struct json_object *entry = json_object_array_get_idx(array, i);
		struct vnfs_mount_record *m = &mounts[i];
		snprintf(reader->path, sizeof(reader->path), "mounts[%zu]", i);
		if (need_object(reader, entry, "a mount") < 0 ||
		    check_keys(reader, entry, keys) < 0 ||
		    read_u32(reader, entry, "device", &m->device) < 0 ||
		    read_string(reader, entry, "mount_point", m->mount_point,
				sizeof(m->mount_point)) < 0 ||
		    read_string(reader, entry, "source", m->source, sizeof(m->source)) < 0 ||
		    read_string(reader, entry, "version", m->version, sizeof(m->version)) < 0 ||
		    read_u32(reader, entry, "rsize", &m->rsize) < 0 ||
		    read_u32(reader, entry, "wsize", &m->wsize) < 0 ||
		    read_counter(reader, entry, "ops", &m->stats.ops) < 0 ||
		    read_counter(reader, entry, "errors", &m->stats.errors) < 0 ||
		    read_counter(reader, entry, "time_ns", &m->stats.time_ns) < 0 ||
		    read_counter(reader, entry, "read_bytes", &m->stats.read_bytes) < 0 ||
		    read_counter(reader, entry, "write_bytes", &m->stats.write_bytes) < 0)
			return -1;
	}
	reader->path[0] = '\0';
	return 0;
}

static int read_wire_row(struct reader *reader, const struct json_object *entry,
			 struct vnfs_wire_record *row)
{
	static const char *const keys[] = {
		"device", "mount_point", "version", "procedure", "rpcs", "transmissions",
		"major_timeouts", "bytes_sent", "bytes_received", "backlog_ns", "rtt_ns",
		"execute_ns", "errors", "error_kinds", "backlog_histogram", "rtt_histogram",
		"execute_histogram", NULL
	};
	struct json_object *kinds;
	uint32_t version;

	if (need_object(reader, entry, "a wire row") < 0 || check_keys(reader, entry, keys) < 0 ||
	    read_u32(reader, entry, "device", &row->device) < 0 ||
	    read_string(reader, entry, "mount_point", row->mount_point,
			sizeof(row->mount_point)) < 0 ||
	    read_u32(reader, entry, "version", &version) < 0 ||
	    read_string(reader, entry, "procedure", row->procedure, sizeof(row->procedure)) < 0)
		return -1;
	if (version > UINT16_MAX)
		return fail(reader, "field 'version' must be an NFS version, not %u", version);
	row->version = (uint16_t)version;
	for (size_t c = 0; c < VNFS_WIRE_COUNTERS; c++)
		if (read_counter(reader, entry, vnfs_wire_counters[c].name,
				 vnfs_wire_field(&row->stats, &vnfs_wire_counters[c])) < 0)
			return -1;
	for (size_t h = 0; h < VNFS_WIRE_HISTOGRAMS; h++)
		if (read_histogram(reader, entry, vnfs_wire_histograms[h].name,
				   vnfs_wire_field(&row->stats, &vnfs_wire_histograms[h]),
				   VNFS_LATENCY_BUCKETS) < 0)
			return -1;
	kinds = member(reader, entry, "error_kinds");
	if (kinds == NULL)
		return -1;
	if (need_object(reader, kinds, "error kinds") < 0 ||
	    check_keys(reader, kinds, vnfs_wire_error_names) < 0)
		return -1;
	for (int kind = 0; kind < VNFS_WIRE_ERRORS; kind++)
		if (read_counter(reader, kinds, vnfs_wire_error_names[kind],
				 &row->stats.error_kinds[kind]) < 0)
			return -1;
	return 0;
}

/* "wire": absent in records written before RPCs were counted (none then). */
static int read_wire(struct reader *reader, const struct json_object *object,
		     struct vnfs_step_record *record)
{
	struct json_object *array;
	struct vnfs_wire_record *rows;
	size_t count;

	if (!json_object_object_get_ex(object, "wire", &array))
		return 0;
	if (!json_object_is_type(array, json_type_array))
		return fail(reader, "field 'wire' must be an array");
	count = json_object_array_length(array);
	if (count > VNFS_MAX_WIRE_RECORDS)
		return fail(reader, "%zu wire rows, at most %d allowed", count,
			    VNFS_MAX_WIRE_RECORDS);
	if (count == 0)
		return 0;
	rows = calloc(count, sizeof(*rows));
	if (rows == NULL)
		return fail(reader, "out of memory");
	record->wire = rows;
	record->wire_count = count;
	for (size_t i = 0; i < count; i++) {
		snprintf(reader->path, sizeof(reader->path), "wire[%zu]", i);
		if (read_wire_row(reader, json_object_array_get_idx(array, i), &rows[i]) < 0)
			return -1;
	}
	reader->path[0] = '\0';
	return 0;
}

/* A step's identity in either form (add_identity). */
static int read_step_identity(struct reader *reader, const struct json_object *object,
			      struct vnfs_step_record *record)
{
	struct vnfs_workload workload;
	char step[16], message[256];
	uint32_t job_id, step_id;

	if (json_object_object_get_ex(object, "source", NULL)) {
		if (vnfs_protocol_get_workload((struct json_object *)object, &workload, message,
					       sizeof(message)) < 0)
			return fail(reader, "%s", message);
		/* A Slurm step has its step; another source's job may be one
		 * whole (an LSF job, a pod a hook registered whole): part "". */
		if (workload.source == VNFS_SOURCE_SLURM && workload.part[0] == '\0')
			return fail(reader, "a Slurm step record needs a 'part'");
	} else {
		if (read_u32(reader, object, "job", &job_id) < 0 ||
		    read_string(reader, object, "step", step, sizeof(step)) < 0)
			return -1;
		if (vnfs_step_parse(step, &step_id) < 0)
			return fail(reader, "field 'step' must be a step number, batch, extern, "
					    "interactive or pending, not '%s'", step);
		vnfs_workload_of_slurm_step(&workload, job_id, step_id);
	}
	vnfs_record_identify(record, &workload);
	return 0;
}

/* A job's identity in either form; a job has no part. */
static int read_job_identity(struct reader *reader, const struct json_object *object,
			     struct vnfs_owned_job *owned)
{
	char message[256];

	if (!json_object_object_get_ex(object, "source", NULL)) {
		if (read_u32(reader, object, "job", &owned->job_id) < 0)
			return -1;
		vnfs_workload_of_slurm_job(&owned->workload, owned->job_id);
		return 0;
	}
	if (vnfs_protocol_get_workload((struct json_object *)object, &owned->workload, message,
				       sizeof(message)) < 0)
		return fail(reader, "%s", message);
	owned->job_id = 0;
	return 0;
}

/* The record's tags, into a list it owns (vnfs_step_record_free_arrays). */
static int read_owned_tags(struct reader *reader, const struct json_object *object,
			   struct vnfs_step_record *record)
{
	struct vnfs_tag_list tags;

	if (read_tags(reader, object, &tags) < 0)
		return -1;
	record->tags = vnfs_tags_copy(&tags);
	return record->tags != NULL ? 0 : fail(reader, "out of memory");
}

static int read_step(struct reader *reader, const struct json_object *object,
		     struct vnfs_step_record *record)
{
	static const char *const keys[] = {
		"source", "job", "step", "part", "uid", "user", "node", "cgroup_id", "cgroup_path",
		"tags", "start_time", "end_time", "sample_time", "finished", "operations",
		"request_size_histogram", "processes", "mounts", "wire", NULL
	};
	if (need_object(reader, object, "a step record") < 0 || check_keys(reader, object, keys) < 0 ||
	    read_step_identity(reader, object, record) < 0)
		return -1;
	if (read_u32(reader, object, "uid", &record->uid) < 0 ||
	    read_string(reader, object, "user", record->user, sizeof(record->user)) < 0 ||
	    read_string(reader, object, "node", record->node, sizeof(record->node)) < 0 ||
	    read_u64(reader, object, "cgroup_id", UINT64_MAX, &record->cgroup_id) < 0 ||
	    read_string(reader, object, "cgroup_path", record->cgroup_path,
			sizeof(record->cgroup_path)) < 0 ||
	    read_owned_tags(reader, object, record) < 0 ||
	    read_time(reader, object, "start_time", false, &record->start_time_ms) < 0 ||
	    read_time(reader, object, "end_time", true, &record->end_time_ms) < 0 ||
	    read_time(reader, object, "sample_time", false, &record->sample_time_ms) < 0)
		return -1;

	struct json_object *finished = member(reader, object, "finished");
	if (finished == NULL)
		return -1;
	if (!json_object_is_type(finished, json_type_boolean))
		return fail(reader, "field 'finished' must be true or false");
	record->finished = json_object_get_boolean(finished);

	struct vnfs_step_stats *stats = calloc(1, sizeof(*stats));
	if (stats == NULL)
		return fail(reader, "out of memory");
	record->stats = stats;
	if (read_stats(reader, object, stats) < 0 ||
	    read_processes(reader, object, record) < 0 || read_mounts(reader, object, record) < 0 ||
	    read_wire(reader, object, record) < 0)
		return -1;
	return 0;
}

int vnfs_step_record_from_json(const struct json_object *object, struct vnfs_step_record *record,
			       char *error, size_t error_size)
{
	struct reader reader = { .error = error, .error_size = error_size };
	memset(record, 0, sizeof(*record));
	if (read_step(&reader, object, record) < 0) {
		vnfs_step_record_free_arrays(record);
		return -1;
	}
	return 0;
}

/* ---- jobs that own their steps ------------------------------------------ */

void vnfs_owned_job_view(const struct vnfs_owned_job *owned, struct vnfs_job *view)
{
	*view = (struct vnfs_job){
		.workload = owned->workload,
		.job_id = owned->job_id,
		.uid = owned->uid,
		.user = owned->user,
		.node = owned->node,
		.start_time_ms = owned->start_time_ms,
		.end_time_ms = owned->end_time_ms,
		.step_count = owned->step_count,
		.steps = owned->steps,
	};
}

int vnfs_owned_job_copy(struct vnfs_owned_job *owned, const struct vnfs_job *job)
{
	memset(owned, 0, sizeof(*owned));
	owned->workload = job->workload;
	owned->job_id = job->job_id;
	owned->uid = job->uid;
	snprintf(owned->user, sizeof(owned->user), "%s", job->user != NULL ? job->user : "");
	snprintf(owned->node, sizeof(owned->node), "%s", job->node != NULL ? job->node : "");
	owned->start_time_ms = job->start_time_ms;
	owned->end_time_ms = job->end_time_ms;
	if (job->step_count == 0)
		return 0;
	owned->steps = calloc(job->step_count, sizeof(*owned->steps));
	if (owned->steps == NULL)
		return -1;
	for (size_t i = 0; i < job->step_count; i++) {
		if (vnfs_step_record_copy(&owned->steps[i], &job->steps[i]) < 0) {
			vnfs_owned_job_free(owned);
			return -1;
		}
		owned->step_count = i + 1;
	}
	return 0;
}

void vnfs_owned_job_free(struct vnfs_owned_job *owned)
{
	for (size_t i = 0; i < owned->step_count; i++)
		vnfs_step_record_free_arrays(&owned->steps[i]);
	free(owned->steps);
	memset(owned, 0, sizeof(*owned));
}

/* The job's totals, processes and mounts: derived from its steps, so only
 * checked (a reader that misses a malformed total would take a broken job). */
static int check_job_totals(struct reader *reader, const struct json_object *object)
{
	struct vnfs_step_stats *totals = calloc(1, sizeof(*totals));
	struct vnfs_step_record scratch;
	int result;

	if (totals == NULL)
		return fail(reader, "out of memory");
	memset(&scratch, 0, sizeof(scratch));
	result = read_stats(reader, object, totals) < 0 ||
				 read_processes(reader, object, &scratch) < 0 ||
				 read_mounts(reader, object, &scratch) < 0 ||
				 read_wire(reader, object, &scratch) < 0
			 ? -1
			 : 0;
	vnfs_step_record_free_arrays(&scratch);
	free(totals);
	return result;
}

static int read_job_steps(struct reader *reader, const struct json_object *object,
			  struct vnfs_owned_job *owned)
{
	struct json_object *array = member(reader, object, "steps");
	size_t count;

	if (array == NULL)
		return -1;
	if (!json_object_is_type(array, json_type_array))
		return fail(reader, "field 'steps' must be an array");
	count = json_object_array_length(array);
	if (count == 0)
		return 0;
	owned->steps = calloc(count, sizeof(*owned->steps));
	if (owned->steps == NULL)
		return fail(reader, "out of memory");
	for (size_t i = 0; i < count; i++) {
		char message[200];

		if (vnfs_step_record_from_json(json_object_array_get_idx(array, i), &owned->steps[i],
					       message, sizeof(message)) < 0)
			return fail(reader, "steps[%zu]: %s", i, message);
		owned->step_count = i + 1;
	}
	return 0;
}

static int read_job(struct reader *reader, const struct json_object *object,
		    struct vnfs_owned_job *owned)
{
	static const char *const keys[] = {
		"source", "job", "uid", "user", "node", "start_time", "end_time", "operations",
		"request_size_histogram", "processes", "mounts", "wire", "steps", NULL
	};

	if (need_object(reader, object, "a job") < 0 || check_keys(reader, object, keys) < 0 ||
	    read_job_identity(reader, object, owned) < 0 ||
	    read_u32(reader, object, "uid", &owned->uid) < 0 ||
	    read_string(reader, object, "user", owned->user, sizeof(owned->user)) < 0 ||
	    read_string(reader, object, "node", owned->node, sizeof(owned->node)) < 0 ||
	    read_time(reader, object, "start_time", false, &owned->start_time_ms) < 0 ||
	    read_time(reader, object, "end_time", true, &owned->end_time_ms) < 0 ||
	    check_job_totals(reader, object) < 0)
		return -1;
	return read_job_steps(reader, object, owned);
}

int vnfs_job_from_json(const struct json_object *object, struct vnfs_owned_job *owned,
		       char *error, size_t error_size)
{
	struct reader reader = { .error = error, .error_size = error_size };

	memset(owned, 0, sizeof(*owned));
	if (read_job(&reader, object, owned) < 0) {
		vnfs_owned_job_free(owned);
		return -1;
	}
	return 0;
}
