/*
 * sink_sqlite.c — the local history database (docs/SCHEMA.md).
 *
 * Every interval the steps whose counters moved are upserted in one
 * transaction; a finished job is written once more, final, when the helper
 * reports it.  The collector must never wait on us, so the busy timeout is
 * short: when another process holds the database (an administrator's sqlite3
 * shell, a backup) or the disk is full, the interval is given up and counted.
 * Nothing is lost by that, because counters are cumulative and the next
 * interval writes them all again; finished jobs, which are written only once,
 * are kept in a small queue and retried before anything else.
 *
 * The schema and its migrations are lib/history/schema.c's, shared with the
 * readers; the database is migrated up to it on open.
 *
 * The history holds every user's jobs, so the database and its -wal and -shm
 * files are 0640, root's, of [helper] admin_group: a user cannot read other
 * users' jobs from it, nor hold a read transaction that stops checkpoints.
 * An administrator's reader still can, and the write-ahead log then grows
 * with every write; past [sqlite] wal_limit running steps' samples wait
 * (superseded anyway by the next, cumulative, ones) until a checkpoint
 * succeeds, so the log stays bounded whatever a reader does.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "helper/outputs/sink.h"
#include "lib/job_report/times.h" /* report_now_ms: the wall clock, in ms */
#include "lib/history/schema.h"
#include "lib/log.h"
#include "lib/record_json.h" /* vnfs_owned_job: a finished job kept to retry */

#define BUSY_TIMEOUT_MS 50          /* the longest a write may wait for a lock */
#define RETENTION_PERIOD_MS (3600 * 1000LL)
#define MAX_PENDING_JOBS 64         /* finished jobs kept for retry */
#define FINGERPRINT_BUCKETS 2048
/* Page cache of the writer, in KiB (negative: SQLite's unit then is KiB).
 * Upserts touch a few pages per step, the interior B-tree pages stay hot,
 * and the operating system caches the file anyway: SQLite's default of
 * 2 MiB was an eighth of the helper's memory and saved no measurable time.
 * 512 KiB to 128 KiB: 0.38 MiB less resident, and an interval of 1,000
 * changed steps 28-31 -> 37 ms of CPU on the build host (bench_history),
 * once every write_interval (30 s): 0.03 % of a core. */
#define CACHE_SIZE "-128"

enum statement {
	BEGIN,
	COMMIT,
	ROLLBACK,
	UPSERT_OPERATION_NAME,
	UPSERT_JOB,
	UPSERT_STEP,
	DELETE_TAGS,
	INSERT_TAG,
	UPSERT_STEP_OPERATION,
	UPSERT_PROCESS,
	UPSERT_MOUNT,
	UPSERT_WIRE,
	DELETE_EXPIRED,
	STATEMENTS
};

static const char *const statement_sql[STATEMENTS] = {
	[BEGIN] = "BEGIN IMMEDIATE",
	[COMMIT] = "COMMIT",
	[ROLLBACK] = "ROLLBACK",
	[UPSERT_OPERATION_NAME] = "INSERT INTO operations (name, class) VALUES (?1, ?2) "
				  "ON CONFLICT (name) DO UPDATE SET class = excluded.class",
	/* A job row never goes back from finished to running. */
	[UPSERT_JOB] =
		"INSERT INTO jobs (source, job, node, job_id, uid, user, start_time_ms,"
		" end_time_ms, sample_time_ms, finished)"
		" VALUES (?9, ?10, ?2, ?1, ?3, ?4, ?5, ?6, ?7, ?8) "
		"ON CONFLICT (source, job, node) DO UPDATE SET uid = excluded.uid,"
		" user = excluded.user,"
		" start_time_ms = min(jobs.start_time_ms, excluded.start_time_ms),"
		" end_time_ms = excluded.end_time_ms,"
		" sample_time_ms = max(jobs.sample_time_ms, excluded.sample_time_ms),"
		" finished = excluded.finished "
		"WHERE jobs.finished = 0 OR excluded.finished = 1",
	[UPSERT_STEP] =
		"INSERT INTO steps (source, job, node, part, job_id, step_id, uid, user,"
		" cgroup_id, cgroup_path, start_time_ms, end_time_ms, sample_time_ms, finished,"
		" read_size_histogram, write_size_histogram) VALUES (?14, ?15, ?2, ?16, ?1, ?3,"
		" ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) "
		"ON CONFLICT (source, job, node, part) DO UPDATE SET uid = excluded.uid,"
		" user = excluded.user, cgroup_id = excluded.cgroup_id,"
		" cgroup_path = excluded.cgroup_path, start_time_ms = excluded.start_time_ms,"
		" end_time_ms = excluded.end_time_ms, sample_time_ms = excluded.sample_time_ms,"
		" finished = excluded.finished,"
		" read_size_histogram = excluded.read_size_histogram,"
		" write_size_histogram = excluded.write_size_histogram "
		"WHERE steps.finished = 0 OR excluded.finished = 1 "
		"RETURNING id",
	[DELETE_TAGS] = "DELETE FROM step_tags WHERE step = ?1",
	[INSERT_TAG] = "INSERT INTO step_tags (step, name, value) VALUES (?1, ?2, ?3)",
	[UPSERT_STEP_OPERATION] =
		"INSERT INTO step_operations (step, operation, count, errors, time_ns, bytes,"
		" p50_ns, p99_ns, latency_histogram) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) "
		"ON CONFLICT (step, operation) DO UPDATE SET count = excluded.count,"
		" errors = excluded.errors, time_ns = excluded.time_ns, bytes = excluded.bytes,"
		" p50_ns = excluded.p50_ns, p99_ns = excluded.p99_ns,"
		" latency_histogram = excluded.latency_histogram",
	[UPSERT_PROCESS] =
		"INSERT INTO step_processes (step, comm, read_ops, read_bytes, write_ops,"
		" write_bytes, other_ops) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) "
		"ON CONFLICT (step, comm) DO UPDATE SET read_ops = excluded.read_ops,"
		" read_bytes = excluded.read_bytes, write_ops = excluded.write_ops,"
		" write_bytes = excluded.write_bytes, other_ops = excluded.other_ops",
	[UPSERT_MOUNT] =
		"INSERT INTO step_mounts (step, device, mount_point, source, version, rsize,"
		" wsize, ops, errors, time_ns, read_bytes, write_bytes) VALUES (?1, ?2, ?3, ?4,"
		" ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) "
		"ON CONFLICT (step, device) DO UPDATE SET mount_point = excluded.mount_point,"
		" source = excluded.source, version = excluded.version, rsize = excluded.rsize,"
		" wsize = excluded.wsize, ops = excluded.ops, errors = excluded.errors,"
		" time_ns = excluded.time_ns, read_bytes = excluded.read_bytes,"
		" write_bytes = excluded.write_bytes",
	/* The counters in vnfs_wire_counters' order, then the histograms in
	 * vnfs_wire_histograms' (lib/record.h). */
	[UPSERT_WIRE] =
		"INSERT INTO step_wire (step, device, mount_point, version, procedure, rpcs,"
		" transmissions, major_timeouts, bytes_sent, bytes_received, backlog_ns, rtt_ns,"
		" execute_ns, errors, error_kinds, backlog_histogram, rtt_histogram,"
		" execute_histogram) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12,"
		" ?13, ?14, ?15, ?16, ?17, ?18) "
		"ON CONFLICT (step, device, version, procedure) DO UPDATE SET"
		" mount_point = excluded.mount_point, rpcs = excluded.rpcs,"
		" transmissions = excluded.transmissions,"
		" major_timeouts = excluded.major_timeouts, bytes_sent = excluded.bytes_sent,"
		" bytes_received = excluded.bytes_received, backlog_ns = excluded.backlog_ns,"
		" rtt_ns = excluded.rtt_ns, execute_ns = excluded.execute_ns,"
		" errors = excluded.errors, error_kinds = excluded.error_kinds,"
		" backlog_histogram = excluded.backlog_histogram,"
		" rtt_histogram = excluded.rtt_histogram,"
		" execute_histogram = excluded.execute_histogram",
	[DELETE_EXPIRED] = "DELETE FROM jobs WHERE finished = 1 AND end_time_ms < ?1",
};

/*
 * What was last written for a step.  Counters only grow, so a step whose
 * fingerprint is unchanged has nothing new and is not rewritten: with a
 * thousand idle steps an interval costs nothing.
 */
struct fingerprint {
	uint64_t count, errors, time_ns, bytes;
	uint64_t process_count, mount_count, tag_count;
	/* Every RPC that ends adds to its row's rpcs, so their sum moves
	 * whenever a wire row does, also when no VFS call did (writeback). */
	uint64_t wire_count, rpcs;
	int64_t end_time_ms;
	bool finished;
};

struct fingerprint_entry {
	struct fingerprint_entry *next;
	uint64_t generation;        /* last interval that saw the step */
	struct fingerprint written;
	/* Each operation's count as last written; NULL until one was not 0,
	 * so that a thousand idle steps do not hold 176 zeros each. */
	uint64_t *operation_counts;
	/* The step's workload, as its source and "job\0part\0": a thousand
	 * steps of a few bytes each, not of VNFS_WORKLOAD_*_MAX. */
	enum vnfs_workload_source source;
	char identity[];
};

struct sqlite_sink {
	/* publish and job_finished may come from different threads (the
	 * collector's, the socket server's at FINISH): one at a time. */
	pthread_mutex_t lock;
	sqlite3 *db;
	char path[VNFS_PATH_MAX];
	uint32_t retention_days;
	/* Running steps' rows are rewritten at most this often: every interval
	 * would cost a transaction per second for nothing vnfs-report needs (it
	 * asks the helper about running jobs); finished jobs never wait. */
	int64_t write_interval_ms;
	int64_t last_interval_write_ms;
	sqlite3_stmt *statements[STATEMENTS];
	int64_t last_retention_ms;
	uint64_t generation;
	struct fingerprint_entry *fingerprints[FINGERPRINT_BUCKETS];
	/* Finished jobs whose final write failed, deep copies to write again. */
	struct vnfs_owned_job *pending[MAX_PENDING_JOBS];
	size_t pending_count;
	uint64_t dropped;
	uint64_t wal_limit_bytes;
	bool wal_over_limit;        /* for logging state changes */
	gid_t admin_gid;            /* (gid_t)-1: root's group */
	uint64_t lost_jobs;         /* finished jobs pushed out of the queue */
	uint64_t failed_writes;     /* consecutive, for logging state changes */
};

/* ---- helpers ------------------------------------------------------------ */

/* "[0,3,5]": the JSON array of a histogram without trailing empty buckets. */
static void histogram_text(const __u64 *buckets, size_t count, char *out, size_t size)
{
	while (count > 0 && buckets[count - 1] == 0)
		count--;
	size_t used = (size_t)snprintf(out, size, "[");
	for (size_t b = 0; b < count && used < size; b++)
		used += (size_t)snprintf(out + used, size - used, "%s%" PRIu64, b > 0 ? "," : "",
					 (uint64_t)buckets[b]);
	if (used < size)
		snprintf(out + used, size - used, "]");
}

static void bind_u64(sqlite3_stmt *statement, int index, uint64_t value)
{
	/* SQLite integers are signed: values past 2^63 keep their bits. */
	sqlite3_bind_int64(statement, index, (sqlite3_int64)value);
}

static void bind_text(sqlite3_stmt *statement, int index, const char *text)
{
	sqlite3_bind_text(statement, index, text, -1, SQLITE_TRANSIENT);
}

static void bind_time_or_null(sqlite3_stmt *statement, int index, int64_t time_ms)
{
	if (time_ms != 0)
		sqlite3_bind_int64(statement, index, time_ms);
	else
		sqlite3_bind_null(statement, index);
}

/* Runs a statement that returns no rows, and resets it. */
static int run(struct sqlite_sink *sink, enum statement which)
{
	sqlite3_stmt *statement = sink->statements[which];
	int rc = sqlite3_step(statement);
	sqlite3_reset(statement);
	sqlite3_clear_bindings(statement);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
}

static struct fingerprint fingerprint_of(const struct vnfs_step_record *record)
{
	struct fingerprint f = { .process_count = record->process_count,
				 .mount_count = record->mount_count,
				 .tag_count = vnfs_tags_count(record->tags),
				 .wire_count = record->wire_count,
				 .end_time_ms = record->end_time_ms,
				 .finished = record->finished };
	for (int op = 0; op < VNFS_OP_COUNT && record->stats != NULL; op++) {
		f.count += record->stats->operations[op].count;
		f.errors += record->stats->operations[op].errors;
		f.time_ns += record->stats->operations[op].time_ns;
		f.bytes += record->stats->operations[op].bytes;
	}
	for (size_t i = 0; i < record->wire_count; i++)
		f.rpcs += record->wire[i].stats.rpcs;
	return f;
}

static bool same_fingerprint(const struct fingerprint *a, const struct fingerprint *b)
{
	return a->count == b->count && a->errors == b->errors && a->time_ns == b->time_ns &&
	       a->bytes == b->bytes && a->process_count == b->process_count &&
	       a->mount_count == b->mount_count && a->tag_count == b->tag_count &&
	       a->wire_count == b->wire_count && a->rpcs == b->rpcs &&
	       a->end_time_ms == b->end_time_ms && a->finished == b->finished;
}

/* FNV-1a over the workload's texts: only spreads the buckets; entries are
 * told apart by their identity, compared whole. */
static size_t fingerprint_bucket(const struct vnfs_workload *workload)
{
	uint64_t hash = 14695981039346656037ull ^ (uint64_t)workload->source;

	for (const char *c = workload->job; *c != '\0'; c++)
		hash = (hash ^ (unsigned char)*c) * 1099511628211ull;
	hash = (hash ^ '.') * 1099511628211ull;
	for (const char *c = workload->part; *c != '\0'; c++)
		hash = (hash ^ (unsigned char)*c) * 1099511628211ull;
	return (size_t)(hash % FINGERPRINT_BUCKETS);
}

static bool fingerprint_of_workload(const struct fingerprint_entry *entry,
				    const struct vnfs_workload *workload)
{
	return entry->source == workload->source && strcmp(entry->identity, workload->job) == 0 &&
	       strcmp(entry->identity + strlen(workload->job) + 1, workload->part) == 0;
}

static struct fingerprint_entry **fingerprint_slot(struct sqlite_sink *sink,
						   const struct vnfs_workload *workload)
{
	struct fingerprint_entry **link = &sink->fingerprints[fingerprint_bucket(workload)];
	while (*link != NULL && !fingerprint_of_workload(*link, workload))
		link = &(*link)->next;
	return link;
}

/* A new entry for workload, never written; NULL when out of memory. */
static struct fingerprint_entry *new_fingerprint(const struct vnfs_workload *workload)
{
	size_t job_length = strlen(workload->job), part_length = strlen(workload->part);
	struct fingerprint_entry *entry = calloc(1, sizeof(*entry) + job_length + part_length + 2);

	if (entry == NULL)
		return NULL;
	entry->source = workload->source;
	memcpy(entry->identity, workload->job, job_length + 1);
	memcpy(entry->identity + job_length + 1, workload->part, part_length + 1);
	entry->written.count = UINT64_MAX; /* never written */
	return entry;
}

static void free_fingerprint(struct fingerprint_entry *entry)
{
	free(entry->operation_counts);
	free(entry);
}

/* Forgets steps that no interval mentions any more (their slots are gone). */
static void forget_stale_fingerprints(struct sqlite_sink *sink)
{
	for (size_t b = 0; b < FINGERPRINT_BUCKETS; b++) {
		struct fingerprint_entry **link = &sink->fingerprints[b];
		while (*link != NULL) {
			struct fingerprint_entry *entry = *link;
			if (entry->generation != sink->generation) {
				*link = entry->next;
				free_fingerprint(entry);
			} else {
				link = &entry->next;
			}
		}
	}
}

/* Notes each operation's count as written for record, its fingerprint
 * noted already, once any is not 0 (out of memory: none noted, and the next
 * write writes every operation again). */
static void remember_operation_counts(struct fingerprint_entry *entry,
				      const struct vnfs_step_record *record)
{
	if (entry->operation_counts == NULL) {
		if (record->stats == NULL || entry->written.count == 0)
			return;
		entry->operation_counts = calloc(VNFS_OP_COUNT, sizeof(*entry->operation_counts));
		if (entry->operation_counts == NULL)
			return;
	}
	for (int op = 0; op < VNFS_OP_COUNT && record->stats != NULL; op++)
		entry->operation_counts[op] = record->stats->operations[op].count;
}

/* ---- writing ------------------------------------------------------------ */

/* Binds the workload's identity at index (source), index + 1 (job) and,
 * with_part, index + 2 (part); Slurm's numbers are bound by the caller. */
static void bind_workload(sqlite3_stmt *statement, int index,
			  const struct vnfs_workload *workload, bool with_part)
{
	bind_text(statement, index, vnfs_workload_source_name(workload->source));
	bind_text(statement, index + 1, workload->job);
	if (with_part)
		bind_text(statement, index + 2, workload->part);
}

/* One of Slurm's numbers beside the identity (docs/SCHEMA.md): NULL for a
 * workload of another source. */
static void bind_slurm_number(sqlite3_stmt *statement, int index,
			      const struct vnfs_workload *workload, uint32_t number)
{
	if (workload->source == VNFS_SOURCE_SLURM)
		sqlite3_bind_int64(statement, index, number);
	else
		sqlite3_bind_null(statement, index);
}

/* A job row, of the job of the step record step (its identity and numbers). */
static int write_job_row(struct sqlite_sink *sink, const struct vnfs_step_record *step,
			 const char *node, uint32_t uid, const char *user, int64_t start_ms,
			 int64_t end_ms, int64_t sample_ms, bool finished)
{
	sqlite3_stmt *s = sink->statements[UPSERT_JOB];
	bind_workload(s, 9, &step->workload, false);
	bind_slurm_number(s, 1, &step->workload, step->job_id);
	bind_text(s, 2, node);
	sqlite3_bind_int64(s, 3, uid);
	bind_text(s, 4, user);
	sqlite3_bind_int64(s, 5, start_ms);
	bind_time_or_null(s, 6, end_ms);
	sqlite3_bind_int64(s, 7, sample_ms);
	sqlite3_bind_int(s, 8, finished ? 1 : 0);
	return run(sink, UPSERT_JOB);
}

/* Operations whose count moved since written_counts (NULL: all of them). */
static int write_operations(struct sqlite_sink *sink, sqlite3_int64 step,
			    const struct vnfs_step_stats *stats, const uint64_t *written_counts)
{
	char histogram[VNFS_LATENCY_BUCKETS * 21 + 4];
	sqlite3_stmt *s = sink->statements[UPSERT_STEP_OPERATION];
	for (int op = 0; op < VNFS_OP_COUNT; op++) {
		const struct vnfs_operation_stats *o = &stats->operations[op];
		/* An operation never done has no row: counters only grow. */
		if (o->count == 0 && o->errors == 0)
			continue;
		/* Every call adds to count, so an equal count means nothing new. */
		if (written_counts != NULL && written_counts[op] == o->count)
			continue;
		histogram_text(o->latency_histogram, VNFS_LATENCY_BUCKETS, histogram,
			       sizeof(histogram));
		sqlite3_bind_int64(s, 1, step);
		bind_text(s, 2, vnfs_operation_names[op]);
		bind_u64(s, 3, o->count);
		bind_u64(s, 4, o->errors);
		bind_u64(s, 5, o->time_ns);
		bind_u64(s, 6, o->bytes);
		bind_u64(s, 7, vnfs_histogram_quantile(o->latency_histogram,
						       VNFS_LATENCY_BUCKETS, 0.50));
		bind_u64(s, 8, vnfs_histogram_quantile(o->latency_histogram,
						       VNFS_LATENCY_BUCKETS, 0.99));
		bind_text(s, 9, histogram);
		int rc = run(sink, UPSERT_STEP_OPERATION);
		if (rc != SQLITE_OK)
			return rc;
	}
	return SQLITE_OK;
}

static int write_tags(struct sqlite_sink *sink, sqlite3_int64 step,
		      const struct vnfs_step_record *record)
{
	int rc;
	sqlite3_bind_int64(sink->statements[DELETE_TAGS], 1, step);
	if ((rc = run(sink, DELETE_TAGS)) != SQLITE_OK)
		return rc;
	const char *name, *value;
	for (unsigned i = 0; vnfs_tags_get(record->tags, i, &name, &value); i++) {
		sqlite3_stmt *s = sink->statements[INSERT_TAG];
		sqlite3_bind_int64(s, 1, step);
		bind_text(s, 2, name);
		bind_text(s, 3, value);
		if ((rc = run(sink, INSERT_TAG)) != SQLITE_OK)
			return rc;
	}
	return SQLITE_OK;
}

/* The columns: step, device, mount_point, version, procedure, the counters,
 * error_kinds, the histograms. */
#define WIRE_FIRST_COUNTER 6
#define WIRE_ERROR_KINDS (WIRE_FIRST_COUNTER + VNFS_WIRE_COUNTERS)

/* {"timeout":0,"delay":1,...}: every kind, in vnfs_wire_error_names's
 * order (plain ASCII names: nothing to escape).  Returns 0, or -1 when it
 * does not fit. */
static int error_kinds_text(const struct vnfs_wire_stats *stats, char *out, size_t size)
{
	size_t used = 0;
	int n;

	for (int kind = 0; kind < VNFS_WIRE_ERRORS; kind++) {
		n = snprintf(out + used, size - used, "%s\"%s\":%" PRIu64, kind > 0 ? "," : "{",
			     vnfs_wire_error_names[kind], (uint64_t)stats->error_kinds[kind]);
		if (n < 0 || (size_t)n >= size - used)
			return -1;
		used += (size_t)n;
	}
	n = snprintf(out + used, size - used, "%s}", used == 0 ? "{" : "");
	return n < 0 || (size_t)n >= size - used ? -1 : 0;
}

/* Binds one wire row of step to UPSERT_WIRE.  Returns SQLite's code. */
static int bind_wire_row(sqlite3_stmt *s, sqlite3_int64 step, const struct vnfs_wire_record *w,
			 const char *error_kinds,
			 char histograms[][VNFS_LATENCY_BUCKETS * 21 + 4])
{
	int rc = sqlite3_bind_int64(s, 1, step);

	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(s, 2, w->device);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(s, 3, w->mount_point, -1, SQLITE_TRANSIENT);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int(s, 4, w->version);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(s, 5, w->procedure, -1, SQLITE_TRANSIENT);
	for (int c = 0; c < VNFS_WIRE_COUNTERS && rc == SQLITE_OK; c++)
		/* SQLite integers are signed: values past 2^63 keep their bits. */
		rc = sqlite3_bind_int64(s, WIRE_FIRST_COUNTER + c,
					(sqlite3_int64)*vnfs_wire_value(&w->stats, &vnfs_wire_counters[c]));
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(s, WIRE_ERROR_KINDS, error_kinds, -1, SQLITE_TRANSIENT);
	for (int h = 0; h < VNFS_WIRE_HISTOGRAMS && rc == SQLITE_OK; h++)
		rc = sqlite3_bind_text(s, WIRE_ERROR_KINDS + 1 + h, histograms[h], -1,
				       SQLITE_TRANSIENT);
	return rc;
}

/* The step's wire rows, upserted as its mounts are: a row the record no
 * longer carries stays as last written. */
static int write_wire(struct sqlite_sink *sink, sqlite3_int64 step,
		      const struct vnfs_step_record *record)
{
	sqlite3_stmt *s = sink->statements[UPSERT_WIRE];
	char error_kinds[VNFS_WIRE_ERRORS * 40 + 4];
	char histograms[VNFS_WIRE_HISTOGRAMS][VNFS_LATENCY_BUCKETS * 21 + 4];

	for (size_t i = 0; i < record->wire_count; i++) {
		const struct vnfs_wire_record *w = &record->wire[i];
		if (error_kinds_text(&w->stats, error_kinds, sizeof(error_kinds)) < 0)
			return SQLITE_TOOBIG; /* cannot happen: the buffer holds 20 digits a kind */
		for (int h = 0; h < VNFS_WIRE_HISTOGRAMS; h++)
			histogram_text(vnfs_wire_value(&w->stats, &vnfs_wire_histograms[h]),
				       VNFS_LATENCY_BUCKETS, histograms[h], sizeof(histograms[h]));
		int rc = bind_wire_row(s, step, w, error_kinds, histograms);
		if (rc != SQLITE_OK) {
			sqlite3_reset(s);
			sqlite3_clear_bindings(s);
			return rc;
		}
		if ((rc = run(sink, UPSERT_WIRE)) != SQLITE_OK)
			return rc;
	}
	return SQLITE_OK;
}

static int write_breakdowns(struct sqlite_sink *sink, sqlite3_int64 step,
			    const struct vnfs_step_record *record)
{
	int rc;
	for (size_t i = 0; i < record->process_count; i++) {
		const struct vnfs_process_record *p = &record->processes[i];
		/* The canonical text (lib/escape.h), whole: it may be longer than comm. */
		char comm[VNFS_PROCESS_NAME_TEXT_MAX];
		snprintf(comm, sizeof(comm), "%s", p->comm);
		sqlite3_stmt *s = sink->statements[UPSERT_PROCESS];
		sqlite3_bind_int64(s, 1, step);
		bind_text(s, 2, comm);
		bind_u64(s, 3, p->stats.read_ops);
		bind_u64(s, 4, p->stats.read_bytes);
		bind_u64(s, 5, p->stats.write_ops);
		bind_u64(s, 6, p->stats.write_bytes);
		bind_u64(s, 7, p->stats.other_ops);
		if ((rc = run(sink, UPSERT_PROCESS)) != SQLITE_OK)
			return rc;
	}
	for (size_t i = 0; i < record->mount_count; i++) {
		const struct vnfs_mount_record *m = &record->mounts[i];
		sqlite3_stmt *s = sink->statements[UPSERT_MOUNT];
		sqlite3_bind_int64(s, 1, step);
		sqlite3_bind_int64(s, 2, m->device);
		bind_text(s, 3, m->mount_point);
		bind_text(s, 4, m->source);
		bind_text(s, 5, m->version);
		sqlite3_bind_int64(s, 6, m->rsize);
		sqlite3_bind_int64(s, 7, m->wsize);
		bind_u64(s, 8, m->stats.ops);
		bind_u64(s, 9, m->stats.errors);
		bind_u64(s, 10, m->stats.time_ns);
		bind_u64(s, 11, m->stats.read_bytes);
		bind_u64(s, 12, m->stats.write_bytes);
		if ((rc = run(sink, UPSERT_MOUNT)) != SQLITE_OK)
			return rc;
	}
	return write_wire(sink, step, record);
}

/*
 * One step and its breakdowns.  Tags are fixed at registration, so they are
 * rewritten only when with_tags says the step is new to us; the job row
 * only when the previous step written was of another job.
 */
static int write_step(struct sqlite_sink *sink, const struct vnfs_step_record *record,
		      bool with_tags, bool with_job, const uint64_t *written_counts)
{
	static const struct vnfs_step_stats no_stats;
	const struct vnfs_step_stats *stats = record->stats != NULL ? record->stats : &no_stats;
	char read_sizes[VNFS_SIZE_BUCKETS * 21 + 4], write_sizes[VNFS_SIZE_BUCKETS * 21 + 4];
	histogram_text(stats->request_size_histogram[VNFS_DIRECTION_READ],
		       VNFS_SIZE_BUCKETS, read_sizes, sizeof(read_sizes));
	histogram_text(stats->request_size_histogram[VNFS_DIRECTION_WRITE],
		       VNFS_SIZE_BUCKETS, write_sizes, sizeof(write_sizes));

	int rc = SQLITE_OK;
	if (with_job)
		rc = write_job_row(sink, record, record->node, record->uid, record->user,
				   record->start_time_ms, 0, record->sample_time_ms, false);
	if (rc != SQLITE_OK)
		return rc;

	sqlite3_stmt *s = sink->statements[UPSERT_STEP];
	bind_workload(s, 14, &record->workload, true);
	bind_slurm_number(s, 1, &record->workload, record->job_id);
	bind_text(s, 2, record->node);
	bind_slurm_number(s, 3, &record->workload, record->step_id);
	sqlite3_bind_int64(s, 4, record->uid);
	bind_text(s, 5, record->user);
	bind_u64(s, 6, record->cgroup_id);
	bind_text(s, 7, record->cgroup_path);
	sqlite3_bind_int64(s, 8, record->start_time_ms);
	bind_time_or_null(s, 9, record->end_time_ms);
	sqlite3_bind_int64(s, 10, record->sample_time_ms);
	sqlite3_bind_int(s, 11, record->finished ? 1 : 0);
	bind_text(s, 12, read_sizes);
	bind_text(s, 13, write_sizes);
	rc = sqlite3_step(s);
	sqlite3_int64 step = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	if (rc == SQLITE_ROW)
		rc = sqlite3_step(s); /* finish the statement: RETURNING runs to DONE */
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc != SQLITE_DONE)
		return rc;
	if (step == 0)
		return SQLITE_OK; /* already final: a late running record changes nothing */

	if ((rc = write_operations(sink, step, stats, written_counts)) != SQLITE_OK)
		return rc;
	if (with_tags && (rc = write_tags(sink, step, record)) != SQLITE_OK)
		return rc;
	return write_breakdowns(sink, step, record);
}

static int write_finished_job(struct sqlite_sink *sink, const struct vnfs_job *job)
{
	int rc = SQLITE_OK;
	for (size_t i = 0; i < job->step_count && rc == SQLITE_OK; i++)
		rc = write_step(sink, &job->steps[i], true, true, NULL);
	if (rc != SQLITE_OK || job->step_count == 0)
		return rc;
	return write_job_row(sink, &job->steps[0], job->node != NULL ? job->node : "", job->uid,
			     job->user != NULL ? job->user : "", job->start_time_ms,
			     job->end_time_ms, job->end_time_ms, true);
}

/* ---- the retry queue ---------------------------------------------------- */

static void pending_free(struct vnfs_owned_job *pending)
{
	if (pending == NULL)
		return;
	vnfs_owned_job_free(pending);
	free(pending);
}

static struct vnfs_owned_job *pending_copy(const struct vnfs_job *job)
{
	struct vnfs_owned_job *pending = malloc(sizeof(*pending));

	if (pending != NULL && vnfs_owned_job_copy(pending, job) != 0) {
		free(pending);
		return NULL;
	}
	return pending;
}

static void pending_push(struct sqlite_sink *sink, const struct vnfs_job *job)
{
	if (sink->pending_count == MAX_PENDING_JOBS) {
		/* The oldest goes: count it, keep the newest; log the first and
		 * every 100th, not every job of a long outage. */
		if (sink->lost_jobs++ % 100 == 0)
			vnfs_warning("sqlite: %s: retry queue full, job %u's history is lost (%" PRIu64
				     " jobs lost so far)",
				     sink->path, sink->pending[0]->job_id, sink->lost_jobs);
		sink->dropped += sink->pending[0]->step_count;
		pending_free(sink->pending[0]);
		memmove(&sink->pending[0], &sink->pending[1],
			(MAX_PENDING_JOBS - 1) * sizeof(sink->pending[0]));
		sink->pending_count--;
	}
	struct vnfs_owned_job *copy = pending_copy(job);
	if (copy == NULL) {
		vnfs_warning("sqlite: out of memory keeping job %u for retry", job->job_id);
		sink->dropped += job->step_count;
		return;
	}
	sink->pending[sink->pending_count++] = copy;
}

/* ---- transactions ------------------------------------------------------- */

static void note_failure(struct sqlite_sink *sink, const char *what, int rc)
{
	/* Logged when the trouble starts, then every 100th time, not every second. */
	if (sink->failed_writes % 100 == 0)
		vnfs_warning("sqlite: %s: %s failed: %s (%s); will retry (%" PRIu64
			     " failed so far)",
			     sink->path, what, sqlite3_errstr(rc), sqlite3_errmsg(sink->db),
			     sink->failed_writes + 1);
	sink->failed_writes++;
}

static void note_success(struct sqlite_sink *sink)
{
	if (sink->failed_writes > 0)
		vnfs_info("sqlite: %s: writing again after %" PRIu64 " failed attempts", sink->path,
			  sink->failed_writes);
	sink->failed_writes = 0;
}

static int begin(struct sqlite_sink *sink)
{
	return run(sink, BEGIN);
}

static int commit_or_rollback(struct sqlite_sink *sink, int rc)
{
	if (rc == SQLITE_OK)
		rc = run(sink, COMMIT);
	if (rc != SQLITE_OK && !sqlite3_get_autocommit(sink->db))
		run(sink, ROLLBACK);
	return rc;
}

/* Retries queued finished jobs, oldest first; stops at the first failure. */
static void flush_pending(struct sqlite_sink *sink)
{
	while (sink->pending_count > 0) {
		struct vnfs_job job;
		vnfs_owned_job_view(sink->pending[0], &job);
		int rc = begin(sink);
		if (rc == SQLITE_OK)
			rc = write_finished_job(sink, &job);
		rc = commit_or_rollback(sink, rc);
		if (rc != SQLITE_OK) {
			note_failure(sink, "writing a finished job", rc);
			return;
		}
		note_success(sink);
		pending_free(sink->pending[0]);
		memmove(&sink->pending[0], &sink->pending[1],
			(sink->pending_count - 1) * sizeof(sink->pending[0]));
		sink->pending_count--;
	}
}

static void apply_retention(struct sqlite_sink *sink, int64_t now)
{
	if (sink->retention_days == 0 || now - sink->last_retention_ms < RETENTION_PERIOD_MS)
		return;
	int64_t cutoff = now - (int64_t)sink->retention_days * 86400 * 1000;
	sqlite3_bind_int64(sink->statements[DELETE_EXPIRED], 1, cutoff);
	int rc = run(sink, DELETE_EXPIRED);
	if (rc != SQLITE_OK) {
		note_failure(sink, "deleting expired jobs", rc);
		return;
	}
	sink->last_retention_ms = now;
	int deleted = sqlite3_changes(sink->db);
	if (deleted > 0)
		vnfs_info("sqlite: %s: removed %d jobs older than %u days", sink->path, deleted,
			  sink->retention_days);
}

static uint64_t wal_bytes(const struct sqlite_sink *sink)
{
	char path[VNFS_PATH_MAX + 8];
	struct stat status;

	snprintf(path, sizeof(path), "%s-wal", sink->path);
	return stat(path, &status) == 0 ? (uint64_t)status.st_size : 0;
}

/*
 * False while the write-ahead log is over its limit and a checkpoint cannot
 * bring it back (a reader holds a transaction): the interval then waits.
 * A checkpoint waits at most the busy timeout for readers.
 */
static bool wal_has_room(struct sqlite_sink *sink)
{
	uint64_t size = wal_bytes(sink);

	if (size > sink->wal_limit_bytes) {
		sqlite3_wal_checkpoint_v2(sink->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
		size = wal_bytes(sink);
	}
	bool room = size <= sink->wal_limit_bytes;
	if (room != !sink->wal_over_limit) {
		if (room)
			vnfs_info("sqlite: %s: checkpointed, samples written again", sink->path);
		else
			vnfs_warning("sqlite: %s: the write-ahead log holds %" PRIu64 " bytes, over "
				     "wal_limit, and a reader holds a transaction: running steps' "
				     "samples wait until it ends", sink->path, size);
	}
	sink->wal_over_limit = !room;
	return room;
}

/* The steps of an interval whose counters moved since they were last
 * written, in the interval's order (a job's steps together). */
struct changed_steps {
	size_t count;
	const struct vnfs_step_record **records;
	struct fingerprint_entry **entries;
	struct fingerprint *fingerprints; /* what entries[i] gets on commit */
};

static int changed_steps_init(struct changed_steps *changed, size_t capacity)
{
	changed->count = 0;
	changed->records = calloc(capacity + 1, sizeof(*changed->records));
	changed->entries = calloc(capacity + 1, sizeof(*changed->entries));
	changed->fingerprints = calloc(capacity + 1, sizeof(*changed->fingerprints));
	return changed->records && changed->entries && changed->fingerprints ? 0 : -1;
}

static void changed_steps_free(struct changed_steps *changed)
{
	free(changed->records);
	free(changed->entries);
	free(changed->fingerprints);
}

/* Marks every step of interval seen in this generation and lists those that
 * changed.  SQLITE_NOMEM when a new step's fingerprint cannot be kept. */
static int find_changed_steps(struct sqlite_sink *sink, const struct vnfs_interval *interval,
			      struct changed_steps *changed)
{
	for (size_t i = 0; i < interval->step_count; i++) {
		const struct vnfs_step_record *record = &interval->steps[i];
		struct fingerprint_entry **link = fingerprint_slot(sink, &record->workload);

		if (*link == NULL) {
			*link = new_fingerprint(&record->workload);
			if (*link == NULL)
				return SQLITE_NOMEM;
		}
		(*link)->generation = sink->generation;
		struct fingerprint now = fingerprint_of(record);
		if (same_fingerprint(&now, &(*link)->written))
			continue;
		changed->records[changed->count] = record;
		changed->entries[changed->count] = *link;
		changed->fingerprints[changed->count++] = now;
	}
	return SQLITE_OK;
}

/* Writes the changed steps in one transaction. */
static int write_changed_steps(struct sqlite_sink *sink, const struct changed_steps *changed)
{
	int rc = begin(sink);

	for (size_t i = 0; i < changed->count && rc == SQLITE_OK; i++) {
		const struct fingerprint *written = &changed->entries[i]->written;
		bool never_written = written->count == UINT64_MAX;
		bool new_tags = never_written || written->tag_count != changed->fingerprints[i].tag_count;
		bool new_job = i == 0 || !vnfs_workload_same_job(&changed->records[i - 1]->workload,
								 &changed->records[i]->workload);

		rc = write_step(sink, changed->records[i], new_tags, new_job,
				never_written ? NULL : changed->entries[i]->operation_counts);
	}
	return commit_or_rollback(sink, rc);
}

static void publish_locked(struct sqlite_sink *sink, const struct vnfs_interval *interval)
{
	struct changed_steps changed;
	int rc;

	flush_pending(sink);
	apply_retention(sink, report_now_ms());
	if (interval->time_ms - sink->last_interval_write_ms < sink->write_interval_ms)
		return;
	if (!wal_has_room(sink)) {
		sink->dropped += interval->step_count;
		return;
	}
	sink->last_interval_write_ms = interval->time_ms;

	/* Which steps changed; their new fingerprints apply only on commit. */
	sink->generation++;
	if (changed_steps_init(&changed, interval->step_count) != 0) {
		changed_steps_free(&changed);
		sink->dropped += interval->step_count;
		return;
	}
	rc = find_changed_steps(sink, interval, &changed);
	if (rc == SQLITE_OK && changed.count > 0)
		rc = write_changed_steps(sink, &changed);
	if (rc != SQLITE_OK) {
		/* Superseded by the next interval's cumulative counters. */
		note_failure(sink, "writing an interval", rc);
		sink->dropped += changed.count;
	} else if (changed.count > 0) {
		note_success(sink);
		for (size_t i = 0; i < changed.count; i++) {
			changed.entries[i]->written = changed.fingerprints[i];
			remember_operation_counts(changed.entries[i], changed.records[i]);
		}
	}
	changed_steps_free(&changed);
	forget_stale_fingerprints(sink);
}

static void sqlite_publish(void *state, const struct vnfs_interval *interval)
{
	struct sqlite_sink *sink = state;
	pthread_mutex_lock(&sink->lock);
	publish_locked(sink, interval);
	pthread_mutex_unlock(&sink->lock);
}

static void job_finished_locked(struct sqlite_sink *sink, const struct vnfs_job *job)
{
	flush_pending(sink);
	if (sink->pending_count > 0) {
		pending_push(sink, job); /* keep the order jobs finished in */
		return;
	}
	int rc = begin(sink);
	if (rc == SQLITE_OK)
		rc = write_finished_job(sink, job);
	rc = commit_or_rollback(sink, rc);
	if (rc != SQLITE_OK) {
		note_failure(sink, "writing a finished job", rc);
		pending_push(sink, job);
		return;
	}
	note_success(sink);
}

static void sqlite_job_finished(void *state, const struct vnfs_job *job)
{
	struct sqlite_sink *sink = state;
	pthread_mutex_lock(&sink->lock);
	job_finished_locked(sink, job);
	pthread_mutex_unlock(&sink->lock);
}

static uint64_t sqlite_dropped(void *state)
{
	struct sqlite_sink *sink = state;
	pthread_mutex_lock(&sink->lock);
	uint64_t dropped = sink->dropped;
	pthread_mutex_unlock(&sink->lock);
	return dropped;
}

static void sqlite_close(void *state)
{
	struct sqlite_sink *sink = state;
	if (sink == NULL)
		return;
	flush_pending(sink);
	if (sink->pending_count > 0)
		vnfs_warning("sqlite: %s: %zu finished jobs could not be written at close",
			     sink->path, sink->pending_count);
	for (size_t i = 0; i < sink->pending_count; i++)
		pending_free(sink->pending[i]);
	for (size_t b = 0; b < FINGERPRINT_BUCKETS; b++) {
		while (sink->fingerprints[b] != NULL) {
			struct fingerprint_entry *next = sink->fingerprints[b]->next;
			free_fingerprint(sink->fingerprints[b]);
			sink->fingerprints[b] = next;
		}
	}
	for (int i = 0; i < STATEMENTS; i++)
		sqlite3_finalize(sink->statements[i]);
	sqlite3_close(sink->db);
	pthread_mutex_destroy(&sink->lock);
	free(sink);
}

/* ---- opening ------------------------------------------------------------ */

static int register_operations(struct sqlite_sink *sink, char *error, size_t error_size)
{
	for (int op = 0; op < VNFS_OP_COUNT; op++) {
		sqlite3_stmt *s = sink->statements[UPSERT_OPERATION_NAME];
		bind_text(s, 1, vnfs_operation_names[op]);
		bind_text(s, 2, vnfs_operation_is_metadata[op] ? "META" : "DATA");
		int rc = run(sink, UPSERT_OPERATION_NAME);
		if (rc != SQLITE_OK) {
			snprintf(error, error_size, "sqlite: %s: %s", sink->path,
				 sqlite3_errmsg(sink->db));
			return -1;
		}
	}
	return 0;
}

/* The database's directory (one level, 0755) so a fresh node just works. */
static int make_parent_directory(const char *path, char *error, size_t error_size)
{
	char directory[VNFS_PATH_MAX];
	snprintf(directory, sizeof(directory), "%s", path);
	char *slash = strrchr(directory, '/');
	if (slash == NULL || slash == directory)
		return 0;
	*slash = '\0';
	if (mkdir(directory, 0755) < 0 && errno != EEXIST) {
		snprintf(error, error_size, "sqlite: cannot create %s: %s", directory,
			 strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Opens path (created when missing and create is set) without following a
 * link, and makes it 0640, root's, of admin_gid, on the descriptor.  SQLite
 * gives a -wal or -shm file it creates the database's mode and owner.
 * Returns 0 (also when path is missing and create is not set), or -1.
 */
static int restrict_file(const char *path, bool create, gid_t admin_gid, char *error,
			 size_t error_size)
{
	int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | (create ? O_CREAT : 0), 0600);
	struct stat status;
	const char *what = NULL;

	if (fd < 0 && errno == ENOENT && !create)
		return 0;
	if (fd < 0)
		what = "open";
	else if (fstat(fd, &status) != 0)
		what = "fstat";
	else if (!S_ISREG(status.st_mode))
		what = "(not a regular file) open";
	else if (geteuid() == 0 && fchown(fd, 0, admin_gid == (gid_t)-1 ? 0 : admin_gid) != 0)
		what = "fchown";
	else if (fchmod(fd, 0640) != 0)
		what = "fchmod";
	if (fd >= 0)
		close(fd);
	if (what != NULL) {
		snprintf(error, error_size, "sqlite: %s: %s failed: %s", path, what,
			 strerror(errno));
		return -1;
	}
	return 0;
}

static int restrict_database_files(const struct sqlite_sink *sink, char *error,
				   size_t error_size)
{
	static const char *const suffixes[] = { "-wal", "-shm" };
	char path[VNFS_PATH_MAX + 8];

	if (restrict_file(sink->path, true, sink->admin_gid, error, error_size) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", sink->path, suffixes[i]);
		if (restrict_file(path, false, sink->admin_gid, error, error_size) < 0)
			return -1;
	}
	return 0;
}

/* After each checkpoint the log is cut back to this, not left at its peak. */
static int set_journal_size_limit(struct sqlite_sink *sink, char *error, size_t error_size)
{
	char sql[64];

	snprintf(sql, sizeof(sql), "PRAGMA journal_size_limit = %" PRIu64, sink->wal_limit_bytes);
	return vnfs_history_exec(sink->db, sql, sink->path, error, error_size);
}

static int open_database(struct sqlite_sink *sink, char *error, size_t error_size)
{
	const char *path = sink->path;

	if (make_parent_directory(sink->path, error, error_size) < 0 ||
	    restrict_database_files(sink, error, error_size) < 0)
		return -1;
	int rc = sqlite3_open_v2(sink->path, &sink->db,
				 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
				 NULL);
	if (rc != SQLITE_OK) {
		snprintf(error, error_size, "sqlite: cannot open %s: %s", sink->path,
			 sink->db != NULL ? sqlite3_errmsg(sink->db) : sqlite3_errstr(rc));
		return -1;
	}
	/* Readers (vnfs-report) share the node with us: WAL lets them read
	 * while we write; the generous open-time timeout covers a migration
	 * racing another opener, the short one afterwards protects the
	 * collector. */
	sqlite3_busy_timeout(sink->db, 2000);
	if (vnfs_history_exec(sink->db, "PRAGMA journal_mode = WAL", path, error, error_size) < 0 ||
	    vnfs_history_exec(sink->db, "PRAGMA synchronous = NORMAL", path, error, error_size) < 0 ||
	    set_journal_size_limit(sink, error, error_size) < 0 ||
	    vnfs_history_exec(sink->db, "PRAGMA cache_size = " CACHE_SIZE, path, error,
			      error_size) < 0 ||
	    vnfs_history_migrate(sink->db, path, error, error_size) < 0 ||
	    vnfs_history_exec(sink->db, "PRAGMA foreign_keys = ON", path, error, error_size) < 0)
		return -1;
	for (int i = 0; i < STATEMENTS; i++) {
		if (sqlite3_prepare_v3(sink->db, statement_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
				       &sink->statements[i], NULL) != SQLITE_OK) {
			snprintf(error, error_size, "sqlite: %s: preparing a statement: %s",
				 sink->path, sqlite3_errmsg(sink->db));
			return -1;
		}
	}
	if (register_operations(sink, error, error_size) < 0)
		return -1;
	apply_retention(sink, report_now_ms());
	sqlite3_busy_timeout(sink->db, BUSY_TIMEOUT_MS);
	return 0;
}

int vnfs_sink_sqlite_open(struct vnfs_sink *sink, const struct vnfs_config *config,
			  char *error, size_t error_size)
{
	if (config->sqlite.path[0] == '\0') {
		snprintf(error, error_size, "sqlite: no database path configured");
		return -1;
	}
	struct sqlite_sink *state = calloc(1, sizeof(*state));
	if (state == NULL) {
		snprintf(error, error_size, "sqlite: out of memory");
		return -1;
	}
	pthread_mutex_init(&state->lock, NULL);
	snprintf(state->path, sizeof(state->path), "%s", config->sqlite.path);
	state->retention_days = config->sqlite.retention_days;
	state->write_interval_ms = (int64_t)config->sqlite.write_interval_s * 1000;
	state->wal_limit_bytes = config->sqlite.wal_limit_bytes;
	state->admin_gid = config->helper.admin_gid;
	state->last_interval_write_ms = INT64_MIN / 2;
	state->last_retention_ms = INT64_MIN / 2;
	if (open_database(state, error, error_size) < 0) {
		sqlite_close(state);
		return -1;
	}
	*sink = (struct vnfs_sink){ .name = "sqlite",
				    .state = state,
				    .publish = sqlite_publish,
				    .job_finished = sqlite_job_finished,
				    .dropped = sqlite_dropped,
				    .close = sqlite_close };
	return 0;
}
