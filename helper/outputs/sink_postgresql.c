/*
 * sink_postgresql.c — the cluster-wide history in PostgreSQL (libpq), a
 * module (sink_module.c).  docs/OUTPUTS.md describes it, docs/SCHEMA.md its
 * tables (lib/history/postgresql_schema.c).
 *
 * publish() and job_finished() only turn records into lines
 * (postgresql_spool.h) and queue them, at most buffer_records; beyond that a
 * record is dropped and counted.  One worker thread, which owns the
 * connection and the spool, takes up to batch_records lines at a time and
 * writes them in one transaction of upserts, so that a batch written twice
 * (its COMMIT's answer lost, then replayed) leaves every row once: steps and
 * jobs are updated only by a sample at least as new as theirs, samples are
 * inserted or left.
 *
 * While the server cannot be reached, or a batch fails, the batch is
 * appended to <spool_dir>/records.jsonl, at most spool_max_bytes; beyond that
 * records are dropped and counted, with one log line when the spool fills
 * and one when it has drained.  Once connected, the spool is replayed oldest
 * first, before any newer batch, and then emptied; a spool left by a helper
 * that stopped is replayed the same way after the next start.
 *
 * The connection string may hold a password: it is never logged, only the
 * user, host, port and database libpq parsed out of it.
 */
#include "helper/outputs/sink_postgresql.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "helper/outputs/postgresql_spool.h"
#include "helper/outputs/sink.h"
#include "lib/history/postgresql_schema.h"
#include "lib/log.h"

#define SPOOL_FILE "records.jsonl"
/* libpq waits this long for a server that does not answer, unless the
 * connection string says otherwise: the worker, not the collector, waits. */
#define CONNECT_TIMEOUT_S "10"
#define MAX_PARAMETERS 20
#define HISTOGRAM_TEXT_MAX (VNFS_LATENCY_BUCKETS * 21 + 4)

struct postgresql {
	/* Set at open, read-only afterwards. */
	char conninfo[sizeof(((struct vnfs_config *)0)->postgresql.conninfo)];
	char where[320];              /* user@host:port/dbname: no password */
	char spool_dir[PATH_MAX];
	uint32_t batch_records;
	uint32_t buffer_records;
	uint64_t spool_max_bytes;
	int64_t retry_interval_ms;

	/* The queue, under lock: a ring of buffer_records lines. */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	char **queue;
	size_t *queue_lengths;
	size_t queue_head, queue_count;
	bool stopping;
	bool queue_full_reported;     /* one warning per full spell */

	/* The worker's alone. */
	pthread_t worker;
	bool worker_started;
	PGconn *connection;
	bool migrated;                /* once per process: migrations ran */
	int64_t next_attempt_ms;      /* monotonic: no connection before this */
	bool failure_reported;        /* one warning per failing spell */
	int spool_dir_fd;
	int spool_fd;
	off_t spool_read_offset;      /* replayed up to here */
	bool spool_full_reported;     /* one warning per full spell */
	uint64_t dropped_while_full;
	bool unreadable_reported;
	struct vnfs_spool_lines batch;

	atomic_uint_fast64_t queued, spooled, written, dropped, spool_bytes;
};

/* ---- small helpers --------------------------------------------------------- */

static int64_t monotonic_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* "[0,3,5]": a histogram without trailing empty buckets, as the SQLite
 * history writes it (sink_sqlite.c), so one query reads both. */
static void histogram_text(const __u64 *buckets, size_t count, char *out, size_t size)
{
	size_t used = 0;

	while (count > 0 && buckets[count - 1] == 0)
		count--;
	used += (size_t)snprintf(out, size, "[");
	for (size_t bucket = 0; bucket < count && used < size; bucket++)
		used += (size_t)snprintf(out + used, size - used, "%s%" PRIu64,
					 bucket > 0 ? "," : "", (uint64_t)buckets[bucket]);
	if (used < size)
		snprintf(out + used, size - used, "]");
}

/* {"timeout":0,...}: every kind in vnfs_wire_error_names's order. */
static void error_kinds_text(const struct vnfs_wire_stats *stats, char *out, size_t size)
{
	size_t used = 0;

	for (int kind = 0; kind < VNFS_WIRE_ERRORS && used < size; kind++)
		used += (size_t)snprintf(out + used, size - used, "%s\"%s\":%" PRIu64,
					 kind > 0 ? "," : "{", vnfs_wire_error_names[kind],
					 (uint64_t)stats->error_kinds[kind]);
	if (used < size)
		snprintf(out + used, size - used, "%s}", used == 0 ? "{" : "");
}

/* ---- parameterised statements --------------------------------------------- */

/* Every value travels as a parameter (PQexecParams): names, tags and
 * process names are users' text and never part of the SQL. */
struct parameters {
	int count;
	const char *values[MAX_PARAMETERS];
	char numbers[MAX_PARAMETERS][24];
};

static void add_text(struct parameters *parameters, const char *text)
{
	parameters->values[parameters->count++] = text;
}

static void add_number(struct parameters *parameters, int64_t number)
{
	char *slot = parameters->numbers[parameters->count];

	snprintf(slot, sizeof(parameters->numbers[0]), "%" PRId64, number);
	parameters->values[parameters->count++] = slot;
}

/* Counters are unsigned, bigint is signed: a value past 2^63 keeps its
 * bits, as in the SQLite history. */
static void add_counter(struct parameters *parameters, uint64_t counter)
{
	add_number(parameters, (int64_t)counter);
}

static void add_null(struct parameters *parameters)
{
	parameters->values[parameters->count++] = NULL;
}

static void add_time_or_null(struct parameters *parameters, int64_t time_ms)
{
	if (time_ms != 0)
		add_number(parameters, time_ms);
	else
		add_null(parameters);
}

/* One of Slurm's numbers: NULL for a workload of another source. */
static void add_slurm_number(struct parameters *parameters, const struct vnfs_workload *workload,
			     uint32_t number)
{
	if (workload->source == VNFS_SOURCE_SLURM)
		add_number(parameters, number);
	else
		add_null(parameters);
}

/* Runs sql with parameters.  Returns the result when it succeeded (the
 * caller clears it), else NULL with the server's message kept for the log. */
static int prepared_index(const char *sql);

static PGresult *execute(struct postgresql *postgresql, const char *sql,
			 const struct parameters *parameters, char *error, size_t error_size)
{
	int prepared = prepared_index(sql);
	char name[24]; /* "vnfs_" and any int */
	PGresult *result;

	/* The writes are prepared once per connection (prepare_statements):
	 * the server then skips parsing and planning them every time. */
	if (prepared >= 0) {
		snprintf(name, sizeof(name), "vnfs_%d", prepared);
		result = PQexecPrepared(postgresql->connection, name, parameters->count,
					parameters->values, NULL, NULL, 0);
	} else {
		result = PQexecParams(postgresql->connection, sql, parameters->count, NULL,
				      parameters->values, NULL, NULL, 0);
	}
	ExecStatusType status = PQresultStatus(result);

	if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK)
		return result;
	snprintf(error, error_size, "%s",
		 result != NULL ? PQresultErrorMessage(result)
				: PQerrorMessage(postgresql->connection));
	PQclear(result);
	return NULL;
}

static int run(struct postgresql *postgresql, const char *sql,
	       const struct parameters *parameters, char *error, size_t error_size)
{
	PGresult *result = execute(postgresql, sql, parameters, error, error_size);

	PQclear(result);
	return result != NULL ? 0 : -1;
}

/* ---- writing rows ---------------------------------------------------------- */

/*
 * Which record a row keeps, for jobs and steps alike: a finished one over a
 * running one whatever their sample times (a step's end may precede the
 * last interval that read it), never a running one over a finished one,
 * and between two of one state the newer (or, for a replay, the same)
 * sample.  So a batch replayed after newer ones changes nothing.
 */
#define KEEP_NEWER(table)                                                        \
	"WHERE CASE WHEN excluded.finished <> " table ".finished"                 \
	" THEN excluded.finished = 1"                                            \
	" ELSE excluded.sample_time_ms >= " table ".sample_time_ms END"

static const char upsert_job_sql[] =
	"INSERT INTO jobs (source, job, node, job_id, uid, \"user\", start_time_ms,"
	" end_time_ms, sample_time_ms, finished) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) "
	"ON CONFLICT (source, job, node) DO UPDATE SET uid = excluded.uid,"
	" \"user\" = excluded.\"user\","
	" start_time_ms = least(jobs.start_time_ms, excluded.start_time_ms),"
	" end_time_ms = excluded.end_time_ms,"
	" sample_time_ms = greatest(jobs.sample_time_ms, excluded.sample_time_ms),"
	" finished = excluded.finished " KEEP_NEWER("jobs");

static const char upsert_step_sql[] =
	"INSERT INTO steps (source, job, node, part, job_id, step_id, uid, \"user\", cgroup_id,"
	" cgroup_path, start_time_ms, end_time_ms, sample_time_ms, finished,"
	" read_size_histogram, write_size_histogram) VALUES ($1, $2, $3, $4, $5, $6, $7, $8,"
	" $9, $10, $11, $12, $13, $14, $15, $16) "
	"ON CONFLICT (source, job, node, part) DO UPDATE SET uid = excluded.uid,"
	" \"user\" = excluded.\"user\", cgroup_id = excluded.cgroup_id,"
	" cgroup_path = excluded.cgroup_path, start_time_ms = excluded.start_time_ms,"
	" end_time_ms = excluded.end_time_ms, sample_time_ms = excluded.sample_time_ms,"
	" finished = excluded.finished, read_size_histogram = excluded.read_size_histogram,"
	" write_size_histogram = excluded.write_size_histogram " KEEP_NEWER("steps")
	" RETURNING id";

/* Tags are fixed at registration: a tag written again keeps its row. */
static const char upsert_tag_sql[] =
	"INSERT INTO step_tags (step, name, value) VALUES ($1, $2, $3) "
	"ON CONFLICT (step, name) DO UPDATE SET value = excluded.value";

static const char upsert_operation_sql[] =
	"INSERT INTO step_operations (step, operation, count, errors, time_ns, bytes, p50_ns,"
	" p99_ns, latency_histogram) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) "
	"ON CONFLICT (step, operation) DO UPDATE SET count = excluded.count,"
	" errors = excluded.errors, time_ns = excluded.time_ns, bytes = excluded.bytes,"
	" p50_ns = excluded.p50_ns, p99_ns = excluded.p99_ns,"
	" latency_histogram = excluded.latency_histogram";

static const char upsert_process_sql[] =
	"INSERT INTO step_processes (step, comm, read_ops, read_bytes, write_ops, write_bytes,"
	" other_ops) VALUES ($1, $2, $3, $4, $5, $6, $7) "
	"ON CONFLICT (step, comm) DO UPDATE SET read_ops = excluded.read_ops,"
	" read_bytes = excluded.read_bytes, write_ops = excluded.write_ops,"
	" write_bytes = excluded.write_bytes, other_ops = excluded.other_ops";

static const char upsert_mount_sql[] =
	"INSERT INTO step_mounts (step, device, mount_point, source, version, rsize, wsize, ops,"
	" errors, time_ns, read_bytes, write_bytes) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9,"
	" $10, $11, $12) "
	"ON CONFLICT (step, device) DO UPDATE SET mount_point = excluded.mount_point,"
	" source = excluded.source, version = excluded.version, rsize = excluded.rsize,"
	" wsize = excluded.wsize, ops = excluded.ops, errors = excluded.errors,"
	" time_ns = excluded.time_ns, read_bytes = excluded.read_bytes,"
	" write_bytes = excluded.write_bytes";

/* The counters in vnfs_wire_counters' order, then error_kinds and the
 * histograms in vnfs_wire_histograms' (lib/record.h). */
static const char upsert_wire_sql[] =
	"INSERT INTO step_wire (step, device, mount_point, version, procedure, rpcs,"
	" transmissions, major_timeouts, bytes_sent, bytes_received, backlog_ns, rtt_ns,"
	" execute_ns, errors, error_kinds, backlog_histogram, rtt_histogram, execute_histogram)"
	" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,"
	" $18) "
	"ON CONFLICT (step, device, version, procedure) DO UPDATE SET"
	" mount_point = excluded.mount_point, rpcs = excluded.rpcs,"
	" transmissions = excluded.transmissions, major_timeouts = excluded.major_timeouts,"
	" bytes_sent = excluded.bytes_sent, bytes_received = excluded.bytes_received,"
	" backlog_ns = excluded.backlog_ns, rtt_ns = excluded.rtt_ns,"
	" execute_ns = excluded.execute_ns, errors = excluded.errors,"
	" error_kinds = excluded.error_kinds, backlog_histogram = excluded.backlog_histogram,"
	" rtt_histogram = excluded.rtt_histogram, execute_histogram = excluded.execute_histogram";

/* A sample is the step's counters at one time: written once, left after. */
static const char insert_sample_sql[] =
	"INSERT INTO step_samples (source, job, node, part, sample_time_ms, uid, \"user\","
	" finished, read_count, read_bytes, write_count, write_bytes, metadata_count, errors,"
	" time_ns, rpcs, bytes_sent, bytes_received) VALUES ($1, $2, $3, $4, $5, $6, $7, $8,"
	" $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) "
	"ON CONFLICT (source, job, node, part, sample_time_ms) DO NOTHING";

_Static_assert(VNFS_WIRE_COUNTERS + 9 <= MAX_PARAMETERS, "step_wire's parameters fit");

/* The statements prepared on every connection, named vnfs_<index>. */
static const char *const prepared_statements[] = {
	upsert_job_sql,     upsert_step_sql,  upsert_tag_sql,  upsert_operation_sql,
	upsert_process_sql, upsert_mount_sql, upsert_wire_sql, insert_sample_sql,
};
#define PREPARED_COUNT ((int)(sizeof(prepared_statements) / sizeof(prepared_statements[0])))

static int prepared_index(const char *sql)
{
	for (int i = 0; i < PREPARED_COUNT; i++)
		if (prepared_statements[i] == sql)
			return i;
	return -1;
}

static int prepare_statements(PGconn *connection, char *error, size_t error_size)
{
	char name[24]; /* "vnfs_" and any int */

	for (int i = 0; i < PREPARED_COUNT; i++) {
		snprintf(name, sizeof(name), "vnfs_%d", i);
		PGresult *result = PQprepare(connection, name, prepared_statements[i], 0, NULL);
		int ok = PQresultStatus(result) == PGRES_COMMAND_OK;
		if (!ok)
			snprintf(error, error_size, "preparing %s: %s", name,
				 result != NULL ? PQresultErrorMessage(result)
						: PQerrorMessage(connection));
		PQclear(result);
		if (!ok)
			return -1;
	}
	return 0;
}

static int write_job_row(struct postgresql *postgresql, const struct vnfs_workload *workload,
			 uint32_t job_id, const char *node, uint32_t uid, const char *user,
			 int64_t start_ms, int64_t end_ms, int64_t sample_ms, bool finished,
			 char *error, size_t error_size)
{
	struct parameters parameters = { 0 };

	add_text(&parameters, vnfs_workload_source_name(workload->source));
	add_text(&parameters, workload->job);
	add_text(&parameters, node);
	add_slurm_number(&parameters, workload, job_id);
	add_number(&parameters, uid);
	add_text(&parameters, user);
	add_number(&parameters, start_ms);
	add_time_or_null(&parameters, end_ms);
	add_number(&parameters, sample_ms);
	add_number(&parameters, finished ? 1 : 0);
	return run(postgresql, upsert_job_sql, &parameters, error, error_size);
}

static int write_operations(struct postgresql *postgresql, const char *step,
			    const struct vnfs_step_stats *stats, char *error, size_t error_size)
{
	char histogram[HISTOGRAM_TEXT_MAX];

	for (int op = 0; op < VNFS_OP_COUNT; op++) {
		const struct vnfs_operation_stats *o = &stats->operations[op];
		struct parameters parameters = { 0 };

		/* An operation never done has no row, as in the SQLite history. */
		if (o->count == 0 && o->errors == 0)
			continue;
		histogram_text(o->latency_histogram, VNFS_LATENCY_BUCKETS, histogram,
			       sizeof(histogram));
		add_text(&parameters, step);
		add_text(&parameters, vnfs_operation_names[op]);
		add_counter(&parameters, o->count);
		add_counter(&parameters, o->errors);
		add_counter(&parameters, o->time_ns);
		add_counter(&parameters, o->bytes);
		add_counter(&parameters, vnfs_histogram_quantile(o->latency_histogram,
								 VNFS_LATENCY_BUCKETS, 0.50));
		add_counter(&parameters, vnfs_histogram_quantile(o->latency_histogram,
								 VNFS_LATENCY_BUCKETS, 0.99));
		add_text(&parameters, histogram);
		if (run(postgresql, upsert_operation_sql, &parameters, error, error_size) < 0)
			return -1;
	}
	return 0;
}

static int write_tags(struct postgresql *postgresql, const char *step,
		      const struct vnfs_step_record *record, char *error, size_t error_size)
{
	const char *name, *value;

	for (unsigned i = 0; vnfs_tags_get(record->tags, i, &name, &value); i++) {
		struct parameters parameters = { 0 };
		add_text(&parameters, step);
		add_text(&parameters, name);
		add_text(&parameters, value);
		if (run(postgresql, upsert_tag_sql, &parameters, error, error_size) < 0)
			return -1;
	}
	return 0;
}

static int write_processes(struct postgresql *postgresql, const char *step,
			   const struct vnfs_step_record *record, char *error, size_t error_size)
{
	for (size_t i = 0; i < record->process_count; i++) {
		const struct vnfs_process_record *p = &record->processes[i];
		struct parameters parameters = { 0 };
		add_text(&parameters, step);
		add_text(&parameters, p->comm);
		add_counter(&parameters, p->stats.read_ops);
		add_counter(&parameters, p->stats.read_bytes);
		add_counter(&parameters, p->stats.write_ops);
		add_counter(&parameters, p->stats.write_bytes);
		add_counter(&parameters, p->stats.other_ops);
		if (run(postgresql, upsert_process_sql, &parameters, error, error_size) < 0)
			return -1;
	}
	return 0;
}

static int write_mounts(struct postgresql *postgresql, const char *step,
			const struct vnfs_step_record *record, char *error, size_t error_size)
{
	for (size_t i = 0; i < record->mount_count; i++) {
		const struct vnfs_mount_record *m = &record->mounts[i];
		struct parameters parameters = { 0 };
		add_text(&parameters, step);
		add_number(&parameters, m->device);
		add_text(&parameters, m->mount_point);
		add_text(&parameters, m->source);
		add_text(&parameters, m->version);
		add_number(&parameters, m->rsize);
		add_number(&parameters, m->wsize);
		add_counter(&parameters, m->stats.ops);
		add_counter(&parameters, m->stats.errors);
		add_counter(&parameters, m->stats.time_ns);
		add_counter(&parameters, m->stats.read_bytes);
		add_counter(&parameters, m->stats.write_bytes);
		if (run(postgresql, upsert_mount_sql, &parameters, error, error_size) < 0)
			return -1;
	}
	return 0;
}

static int write_wire(struct postgresql *postgresql, const char *step,
		      const struct vnfs_step_record *record, char *error, size_t error_size)
{
	char error_kinds[VNFS_WIRE_ERRORS * 40 + 4];
	char histograms[VNFS_WIRE_HISTOGRAMS][HISTOGRAM_TEXT_MAX];

	for (size_t i = 0; i < record->wire_count; i++) {
		const struct vnfs_wire_record *w = &record->wire[i];
		struct parameters parameters = { 0 };
		add_text(&parameters, step);
		add_number(&parameters, w->device);
		add_text(&parameters, w->mount_point);
		add_number(&parameters, w->version);
		add_text(&parameters, w->procedure);
		for (int c = 0; c < VNFS_WIRE_COUNTERS; c++)
			add_counter(&parameters, *vnfs_wire_value(&w->stats, &vnfs_wire_counters[c]));
		error_kinds_text(&w->stats, error_kinds, sizeof(error_kinds));
		add_text(&parameters, error_kinds);
		for (int h = 0; h < VNFS_WIRE_HISTOGRAMS; h++) {
			histogram_text(vnfs_wire_value(&w->stats, &vnfs_wire_histograms[h]),
				       VNFS_LATENCY_BUCKETS, histograms[h], sizeof(histograms[h]));
			add_text(&parameters, histograms[h]);
		}
		if (run(postgresql, upsert_wire_sql, &parameters, error, error_size) < 0)
			return -1;
	}
	return 0;
}

/* The step's totals at its sample time (docs/SCHEMA.md, step_samples). */
static int write_sample(struct postgresql *postgresql, const struct vnfs_step_record *record,
			const struct vnfs_step_stats *stats, char *error, size_t error_size)
{
	uint64_t metadata = 0, errors = 0, time_ns = 0, rpcs = 0, sent = 0, received = 0;
	struct parameters parameters = { 0 };

	for (int op = 0; op < VNFS_OP_COUNT; op++) {
		if (vnfs_operation_is_metadata[op])
			metadata += stats->operations[op].count;
		errors += stats->operations[op].errors;
		time_ns += stats->operations[op].time_ns;
	}
	for (size_t i = 0; i < record->wire_count; i++) {
		rpcs += record->wire[i].stats.rpcs;
		sent += record->wire[i].stats.bytes_sent;
		received += record->wire[i].stats.bytes_received;
	}
	add_text(&parameters, vnfs_workload_source_name(record->workload.source));
	add_text(&parameters, record->workload.job);
	add_text(&parameters, record->node);
	add_text(&parameters, record->workload.part);
	add_number(&parameters, record->sample_time_ms);
	add_number(&parameters, record->uid);
	add_text(&parameters, record->user);
	add_number(&parameters, record->finished ? 1 : 0);
	add_counter(&parameters, stats->operations[VNFS_OP_READ].count);
	add_counter(&parameters, stats->operations[VNFS_OP_READ].bytes);
	add_counter(&parameters, stats->operations[VNFS_OP_WRITE].count);
	add_counter(&parameters, stats->operations[VNFS_OP_WRITE].bytes);
	add_counter(&parameters, metadata);
	add_counter(&parameters, errors);
	add_counter(&parameters, time_ns);
	add_counter(&parameters, rpcs);
	add_counter(&parameters, sent);
	add_counter(&parameters, received);
	return run(postgresql, insert_sample_sql, &parameters, error, error_size);
}

/* The step row; its id into step (empty when the row already holds a newer
 * or final sample, whose breakdowns are then left as they are). */
static int write_step_row(struct postgresql *postgresql, const struct vnfs_step_record *record,
			  const struct vnfs_step_stats *stats, char *step, size_t step_size,
			  char *error, size_t error_size)
{
	char read_sizes[VNFS_SIZE_BUCKETS * 21 + 4], write_sizes[VNFS_SIZE_BUCKETS * 21 + 4];
	struct parameters parameters = { 0 };

	histogram_text(stats->request_size_histogram[VNFS_DIRECTION_READ], VNFS_SIZE_BUCKETS,
		       read_sizes, sizeof(read_sizes));
	histogram_text(stats->request_size_histogram[VNFS_DIRECTION_WRITE], VNFS_SIZE_BUCKETS,
		       write_sizes, sizeof(write_sizes));
	add_text(&parameters, vnfs_workload_source_name(record->workload.source));
	add_text(&parameters, record->workload.job);
	add_text(&parameters, record->node);
	add_text(&parameters, record->workload.part);
	add_slurm_number(&parameters, &record->workload, record->job_id);
	add_slurm_number(&parameters, &record->workload, record->step_id);
	add_number(&parameters, record->uid);
	add_text(&parameters, record->user);
	add_counter(&parameters, record->cgroup_id);
	add_text(&parameters, record->cgroup_path);
	add_number(&parameters, record->start_time_ms);
	add_time_or_null(&parameters, record->end_time_ms);
	add_number(&parameters, record->sample_time_ms);
	add_number(&parameters, record->finished ? 1 : 0);
	add_text(&parameters, read_sizes);
	add_text(&parameters, write_sizes);
	PGresult *result = execute(postgresql, upsert_step_sql, &parameters, error, error_size);
	if (result == NULL)
		return -1;
	snprintf(step, step_size, "%s", PQntuples(result) == 1 ? PQgetvalue(result, 0, 0) : "");
	PQclear(result);
	return 0;
}

/* A step record: its job's row (the steps' foreign key needs it), its own
 * row and breakdowns, and its sample. */
static int write_step(struct postgresql *postgresql, const struct vnfs_step_record *record,
		      char *error, size_t error_size)
{
	static const struct vnfs_step_stats no_stats;
	const struct vnfs_step_stats *stats = record->stats != NULL ? record->stats : &no_stats;
	char step[24];

	if (write_job_row(postgresql, &record->workload, record->job_id, record->node,
			  record->uid, record->user, record->start_time_ms, 0,
			  record->sample_time_ms, false, error, error_size) < 0 ||
	    write_step_row(postgresql, record, stats, step, sizeof(step), error, error_size) < 0)
		return -1;
	if (step[0] != '\0' &&
	    (write_operations(postgresql, step, stats, error, error_size) < 0 ||
	     write_tags(postgresql, step, record, error, error_size) < 0 ||
	     write_processes(postgresql, step, record, error, error_size) < 0 ||
	     write_mounts(postgresql, step, record, error, error_size) < 0 ||
	     write_wire(postgresql, step, record, error, error_size) < 0))
		return -1;
	return write_sample(postgresql, record, stats, error, error_size);
}

/* A finished job: its steps' final records, then its row, final. */
static int write_job(struct postgresql *postgresql, const struct vnfs_owned_job *job,
		     char *error, size_t error_size)
{
	for (size_t i = 0; i < job->step_count; i++)
		if (write_step(postgresql, &job->steps[i], error, error_size) < 0)
			return -1;
	return write_job_row(postgresql, &job->workload, job->job_id, job->node, job->uid,
			     job->user, job->start_time_ms, job->end_time_ms, job->end_time_ms,
			     true, error, error_size);
}

/* ---- the connection -------------------------------------------------------- */

static int register_operations(struct postgresql *postgresql, char *error, size_t error_size)
{
	for (int op = 0; op < VNFS_OP_COUNT; op++) {
		struct parameters parameters = { 0 };
		add_text(&parameters, vnfs_operation_names[op]);
		add_text(&parameters, vnfs_operation_is_metadata[op] ? "META" : "DATA");
		if (run(postgresql,
			"INSERT INTO operations (name, class) VALUES ($1, $2) "
			"ON CONFLICT (name) DO UPDATE SET class = excluded.class",
			&parameters, error, error_size) < 0)
			return -1;
	}
	return 0;
}

/* Logs a failure once per failing spell: the first since the last success. */
static void note_failure(struct postgresql *postgresql, const char *what, const char *why)
{
	if (postgresql->failure_reported)
		return;
	postgresql->failure_reported = true;
	/* libpq's messages run over lines (a caret under the SQL): the first. */
	vnfs_warning("postgresql: %s %s failed: %.*s; keeping records in %s/" SPOOL_FILE
		     " (at most %" PRIu64 " bytes) and retrying every %" PRId64 " ms",
		     what, postgresql->where, (int)strcspn(why, "\n"), why, postgresql->spool_dir,
		     postgresql->spool_max_bytes, postgresql->retry_interval_ms);
}

static void note_success(struct postgresql *postgresql)
{
	if (!postgresql->failure_reported)
		return;
	postgresql->failure_reported = false;
	vnfs_info("postgresql: writing to %s again", postgresql->where);
}

static void disconnect(struct postgresql *postgresql)
{
	PQfinish(postgresql->connection);
	postgresql->connection = NULL;
}

/* Connects (and migrates, the first time) unless connected already, or a
 * failed attempt was too recent, or the sink is closing (which must not wait
 * for a server: what is left goes to the spool).  Returns whether connected. */
static bool connected(struct postgresql *postgresql, bool closing)
{
	/* Keywords before dbname are defaults: expand_dbname lets the
	 * configured string override them. */
	const char *const keywords[] = { "connect_timeout", "application_name", "dbname", NULL };
	const char *const values[] = { CONNECT_TIMEOUT_S, "vnfs-helper", postgresql->conninfo,
				       NULL };
	char error[1024];

	if (postgresql->connection != NULL && PQstatus(postgresql->connection) == CONNECTION_OK)
		return true;
	if (postgresql->connection != NULL)
		disconnect(postgresql);
	if (closing || monotonic_ms() < postgresql->next_attempt_ms)
		return false;
	postgresql->next_attempt_ms = monotonic_ms() + postgresql->retry_interval_ms;
	postgresql->connection = PQconnectdbParams(keywords, values, 1);
	if (postgresql->connection == NULL) {
		note_failure(postgresql, "connecting to", "out of memory");
		return false;
	}
	if (PQstatus(postgresql->connection) != CONNECTION_OK) {
		note_failure(postgresql, "connecting to", PQerrorMessage(postgresql->connection));
		disconnect(postgresql);
		return false;
	}
	if (!postgresql->migrated) {
		if (vnfs_postgresql_migrate(postgresql->connection, error, sizeof(error)) < 0 ||
		    register_operations(postgresql, error, sizeof(error)) < 0) {
			note_failure(postgresql, "preparing the schema of", error);
			disconnect(postgresql);
			return false;
		}
		postgresql->migrated = true;
	}
	if (prepare_statements(postgresql->connection, error, sizeof(error)) < 0) {
		note_failure(postgresql, "preparing statements on", error);
		disconnect(postgresql);
		return false;
	}
	return true;
}

/*
 * Writes lines in one transaction.  A line that does not parse (only a
 * damaged spool holds one) is dropped and counted, not written.  Returns 0
 * when committed, or -1 (the caller keeps the lines): whether a failed
 * COMMIT was applied is unknown, and the upserts make a second write of
 * the same lines harmless either way.
 */
static int write_lines(struct postgresql *postgresql, const struct vnfs_spool_lines *lines)
{
	static const struct parameters none;
	char error[1024];
	uint64_t records = 0;

	if (run(postgresql, "BEGIN", &none, error, sizeof(error)) < 0)
		goto fail;
	for (size_t i = 0; i < lines->count; i++) {
		struct vnfs_spool_record record;
		if (vnfs_spool_record_parse(lines->lines[i], lines->lengths[i], &record, error,
					    sizeof(error)) < 0) {
			atomic_fetch_add(&postgresql->dropped, 1);
			if (!postgresql->unreadable_reported)
				vnfs_warning("postgresql: %s/" SPOOL_FILE ": dropping a record "
					     "that does not read back: %s",
					     postgresql->spool_dir, error);
			postgresql->unreadable_reported = true;
			continue;
		}
		int status = record.type == VNFS_SPOOL_STEP
				     ? write_step(postgresql, &record.step, error, sizeof(error))
				     : write_job(postgresql, &record.job, error, sizeof(error));
		vnfs_spool_record_free(&record);
		if (status < 0)
			goto rollback;
		records++;
	}
	if (run(postgresql, "COMMIT", &none, error, sizeof(error)) < 0)
		goto fail;
	atomic_fetch_add(&postgresql->written, records);
	note_success(postgresql);
	return 0;
rollback:
	PQclear(PQexec(postgresql->connection, "ROLLBACK"));
fail:
	note_failure(postgresql, "writing to", error);
	/* Not again before retry_interval, whatever the reason. */
	postgresql->next_attempt_ms = monotonic_ms() + postgresql->retry_interval_ms;
	if (PQstatus(postgresql->connection) != CONNECTION_OK)
		disconnect(postgresql);
	return -1;
}

/* ---- the spool ------------------------------------------------------------- */

static int write_all(int fd, const char *data, size_t size)
{
	while (size > 0) {
		ssize_t written = write(fd, data, size);
		if (written < 0 && errno == EINTR)
			continue;
		if (written <= 0)
			return -1;
		data += written;
		size -= (size_t)written;
	}
	return 0;
}

/* Appends lines to the spool, each whole or not at all, while it has room;
 * the rest is dropped and counted. */
static void spool_append(struct postgresql *postgresql, const struct vnfs_spool_lines *lines)
{
	uint64_t size = atomic_load(&postgresql->spool_bytes);
	uint64_t appended = 0, dropped = 0;

	for (size_t i = 0; i < lines->count; i++) {
		size_t length = lines->lengths[i];
		if (size + length + 1 > postgresql->spool_max_bytes) {
			dropped++;
			continue;
		}
		/* The line and its newline in one write: a crash leaves at most
		 * one unfinished line, which the next start cuts off. */
		lines->lines[i][length] = '\n';
		int status = write_all(postgresql->spool_fd, lines->lines[i], length + 1);
		lines->lines[i][length] = '\0';
		if (status < 0) {
			vnfs_error("postgresql: cannot append to %s/" SPOOL_FILE ": %s",
				   postgresql->spool_dir, strerror(errno));
			/* What a failed write left is cut off, so lines stay whole. */
			if (ftruncate(postgresql->spool_fd, (off_t)size) < 0)
				vnfs_error("postgresql: cannot truncate %s/" SPOOL_FILE ": %s",
					   postgresql->spool_dir, strerror(errno));
			dropped += lines->count - i;
			break;
		}
		size += length + 1;
		appended++;
	}
	if (appended > 0 && fdatasync(postgresql->spool_fd) < 0)
		vnfs_warning("postgresql: fdatasync %s/" SPOOL_FILE ": %s", postgresql->spool_dir,
			     strerror(errno));
	atomic_store(&postgresql->spool_bytes, size);
	atomic_fetch_add(&postgresql->spooled, appended);
	if (dropped == 0)
		return;
	atomic_fetch_add(&postgresql->dropped, dropped);
	postgresql->dropped_while_full += dropped;
	if (!postgresql->spool_full_reported)
		vnfs_warning("postgresql: the spool %s is full (spool_max_bytes = %" PRIu64
			     " bytes): dropping records until the server at %s takes them; "
			     "raise [postgresql] spool_max_bytes to keep more",
			     postgresql->spool_dir, postgresql->spool_max_bytes, postgresql->where);
	postgresql->spool_full_reported = true;
}

static void spool_emptied(struct postgresql *postgresql)
{
	if (ftruncate(postgresql->spool_fd, 0) < 0) {
		vnfs_error("postgresql: cannot empty %s/" SPOOL_FILE ": %s", postgresql->spool_dir,
			   strerror(errno));
		return; /* replayed again later: harmless, the upserts are idempotent */
	}
	atomic_store(&postgresql->spool_bytes, 0);
	postgresql->spool_read_offset = 0;
	if (postgresql->spool_full_reported)
		vnfs_info("postgresql: the spool %s has drained into %s (%" PRIu64
			  " records were dropped while it was full)",
			  postgresql->spool_dir, postgresql->where, postgresql->dropped_while_full);
	postgresql->spool_full_reported = false;
	postgresql->dropped_while_full = 0;
}

/* Replays the spool, oldest first, a batch per transaction, from where the
 * last replay stopped; empties it once all is written. */
static void spool_replay(struct postgresql *postgresql, bool closing)
{
	struct vnfs_spool_lines lines = { 0 };
	size_t skipped = 0;

	if (atomic_load(&postgresql->spool_bytes) == 0 || !connected(postgresql, closing))
		return;
	int fd = openat(postgresql->spool_dir_fd, SPOOL_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	FILE *file = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (file == NULL) {
		vnfs_error("postgresql: cannot read %s/" SPOOL_FILE ": %s", postgresql->spool_dir,
			   strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	if (fseeko(file, postgresql->spool_read_offset, SEEK_SET) < 0)
		goto done;
	for (;;) {
		long count = vnfs_spool_read_lines(file, postgresql->batch_records, &lines, &skipped);
		if (count < 0) {
			vnfs_error("postgresql: reading %s/" SPOOL_FILE ": %s",
				   postgresql->spool_dir, strerror(errno));
			break;
		}
		if (count == 0) {
			spool_emptied(postgresql);
			break;
		}
		if (write_lines(postgresql, &lines) < 0)
			break;
		postgresql->spool_read_offset = ftello(file);
		vnfs_spool_lines_clear(&lines, 1);
	}
done:
	atomic_fetch_add(&postgresql->dropped, skipped);
	vnfs_spool_lines_clear(&lines, 0);
	fclose(file);
}

/* A batch: after the spool (oldest first), written, or else spooled. */
static void deliver(struct postgresql *postgresql, bool closing)
{
	spool_replay(postgresql, closing);
	if (atomic_load(&postgresql->spool_bytes) == 0 && connected(postgresql, closing) &&
	    write_lines(postgresql, &postgresql->batch) == 0)
		return;
	spool_append(postgresql, &postgresql->batch);
}

/* ---- the worker ------------------------------------------------------------ */

/* Waits for lines, a replay that is due, or close; takes up to a batch.
 * Returns whether the sink is closing. */
static bool take_batch(struct postgresql *postgresql)
{
	bool closing;

	pthread_mutex_lock(&postgresql->lock);
	for (;;) {
		bool replay_due = atomic_load(&postgresql->spool_bytes) > 0 &&
				  monotonic_ms() >= postgresql->next_attempt_ms;
		if (postgresql->queue_count > 0 || postgresql->stopping || replay_due)
			break;
		int64_t wait_ms = atomic_load(&postgresql->spool_bytes) > 0
					  ? postgresql->next_attempt_ms - monotonic_ms()
					  : 60 * 1000;
		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		wait_ms = wait_ms < 1 ? 1 : wait_ms;
		until.tv_sec += wait_ms / 1000;
		until.tv_nsec += (wait_ms % 1000) * 1000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&postgresql->wake, &postgresql->lock, &until);
	}
	while (postgresql->queue_count > 0 &&
	       postgresql->batch.count < postgresql->batch_records) {
		size_t at = postgresql->queue_head;
		/* The batch's arrays grow once to a batch and are reused; a push
		 * that fails for memory drops the line. */
		if (vnfs_spool_lines_push(&postgresql->batch, postgresql->queue[at],
					  postgresql->queue_lengths[at]) < 0)
			atomic_fetch_add(&postgresql->dropped, 1);
		postgresql->queue[at] = NULL;
		postgresql->queue_head = (at + 1) % postgresql->buffer_records;
		postgresql->queue_count--;
	}
	if (postgresql->batch.count > 0)
		postgresql->queue_full_reported = false;
	closing = postgresql->stopping;
	pthread_mutex_unlock(&postgresql->lock);
	return closing;
}

static void *work(void *argument)
{
	struct postgresql *postgresql = argument;

	/* Connect, and migrate, at once rather than with the first records: a
	 * server that cannot be reached is said at start, and the first
	 * intervals' records do not queue behind the migration. */
	(void)connected(postgresql, false);
	for (;;) {
		bool closing = take_batch(postgresql);
		if (postgresql->batch.count > 0)
			deliver(postgresql, closing);
		else if (closing)
			break;
		else
			spool_replay(postgresql, false);
		/* A replay that could not finish (the file unreadable, say)
		 * waits its interval like a failed connection, never spins. */
		if (atomic_load(&postgresql->spool_bytes) > 0 &&
		    monotonic_ms() >= postgresql->next_attempt_ms)
			postgresql->next_attempt_ms = monotonic_ms() + postgresql->retry_interval_ms;
		vnfs_spool_lines_clear(&postgresql->batch, 1);
	}
	return NULL;
}

/* ---- the collector's side ---------------------------------------------------- */

static void enqueue(struct postgresql *postgresql, char *line)
{
	if (line == NULL) {
		atomic_fetch_add(&postgresql->dropped, 1);
		return;
	}
	size_t length = strlen(line);
	pthread_mutex_lock(&postgresql->lock);
	if (postgresql->queue_count == postgresql->buffer_records) {
		atomic_fetch_add(&postgresql->dropped, 1);
		if (!postgresql->queue_full_reported)
			vnfs_warning("postgresql: the queue holds buffer_records = %" PRIu32
				     " records; dropping records until %s takes some",
				     postgresql->buffer_records, postgresql->where);
		postgresql->queue_full_reported = true;
		pthread_mutex_unlock(&postgresql->lock);
		free(line);
		return;
	}
	size_t at = (postgresql->queue_head + postgresql->queue_count) % postgresql->buffer_records;
	postgresql->queue[at] = line;
	postgresql->queue_lengths[at] = length;
	postgresql->queue_count++;
	atomic_fetch_add(&postgresql->queued, 1);
	pthread_cond_signal(&postgresql->wake);
	pthread_mutex_unlock(&postgresql->lock);
}

static void postgresql_publish(void *state, const struct vnfs_interval *interval)
{
	struct postgresql *postgresql = state;

	for (size_t i = 0; i < interval->step_count; i++)
		enqueue(postgresql, vnfs_spool_step_line(&interval->steps[i]));
}

static void postgresql_job_finished(void *state, const struct vnfs_job *job)
{
	struct postgresql *postgresql = state;

	enqueue(postgresql, vnfs_spool_job_line(job));
}

static uint64_t postgresql_dropped(void *state)
{
	struct postgresql *postgresql = state;

	return atomic_load(&postgresql->dropped);
}

void vnfs_sink_postgresql_counters(void *state, struct vnfs_postgresql_counters *counters)
{
	struct postgresql *postgresql = state;

	counters->queued = atomic_load(&postgresql->queued);
	counters->spooled = atomic_load(&postgresql->spooled);
	counters->written = atomic_load(&postgresql->written);
	counters->dropped = atomic_load(&postgresql->dropped);
	counters->spool_bytes = atomic_load(&postgresql->spool_bytes);
}

/* Writes or spools what is queued (no new connection is attempted), then
 * frees everything. */
static void postgresql_close(void *state)
{
	struct postgresql *postgresql = state;

	if (postgresql == NULL)
		return;
	if (postgresql->worker_started) {
		pthread_mutex_lock(&postgresql->lock);
		postgresql->stopping = true;
		pthread_cond_signal(&postgresql->wake);
		pthread_mutex_unlock(&postgresql->lock);
		pthread_join(postgresql->worker, NULL);
	}
	if (postgresql->connection != NULL)
		disconnect(postgresql);
	for (size_t i = 0; postgresql->queue != NULL && i < postgresql->queue_count; i++)
		free(postgresql->queue[(postgresql->queue_head + i) % postgresql->buffer_records]);
	vnfs_spool_lines_clear(&postgresql->batch, 0);
	if (postgresql->spool_fd >= 0)
		close(postgresql->spool_fd);
	if (postgresql->spool_dir_fd >= 0)
		close(postgresql->spool_dir_fd);
	pthread_cond_destroy(&postgresql->wake);
	pthread_mutex_destroy(&postgresql->lock);
	free(postgresql->queue);
	free(postgresql->queue_lengths);
	free(postgresql);
}

/* ---- opening ---------------------------------------------------------------- */

/* "user@host:port/dbname" from the connection string, never its password;
 * libpq's defaults where it names none.  Refuses a string libpq cannot
 * parse (its message names the bad keyword, not the values). */
static int describe_server(struct postgresql *postgresql, char *error, size_t error_size)
{
	const char *user = "(default user)", *host = "(default host)", *port = "5432",
		   *dbname = "(default database)";
	char *message = NULL;
	PQconninfoOption *options = PQconninfoParse(postgresql->conninfo, &message);

	if (options == NULL) {
		const char *why = message != NULL ? message : "out of memory";
		snprintf(error, error_size, "postgresql: conninfo cannot be parsed: %.*s",
			 (int)strcspn(why, "\n"), why);
		PQfreemem(message);
		return -1;
	}
	for (PQconninfoOption *option = options; option->keyword != NULL; option++) {
		if (option->val == NULL || option->val[0] == '\0')
			continue;
		if (strcmp(option->keyword, "user") == 0)
			user = option->val;
		else if (strcmp(option->keyword, "host") == 0 || strcmp(option->keyword, "hostaddr") == 0)
			host = option->val;
		else if (strcmp(option->keyword, "port") == 0)
			port = option->val;
		else if (strcmp(option->keyword, "dbname") == 0)
			dbname = option->val;
	}
	snprintf(postgresql->where, sizeof(postgresql->where), "%s@%s:%s/%s", user, host, port,
		 dbname);
	PQconninfoFree(options);
	return 0;
}

/* Makes directory (0700, root's) unless it exists; its parent too, 0755. */
static int make_spool_directory(const char *directory, char *error, size_t error_size)
{
	char parent[PATH_MAX];

	snprintf(parent, sizeof(parent), "%s", directory);
	char *slash = strrchr(parent, '/');
	if (slash != NULL && slash != parent) {
		*slash = '\0';
		if (mkdir(parent, 0755) < 0 && errno != EEXIST)
			return vnfs_fail(error, error_size, "postgresql: spool_dir: mkdir %s: %s",
					 parent, strerror(errno));
	}
	if (mkdir(directory, 0700) < 0 && errno != EEXIST)
		return vnfs_fail(error, error_size, "postgresql: spool_dir: mkdir %s: %s",
				 directory, strerror(errno));
	return 0;
}

/* The size of the spool up to its last whole line: what a crash in the
 * middle of an append left after it is cut off, or the next append would
 * join it to a line of its own.  Returns the size kept, or -1. */
static off_t cut_unfinished_line(int fd, off_t size)
{
	char block[4096];
	off_t end = size;

	while (end > 0) {
		off_t start = end > (off_t)sizeof(block) ? end - (off_t)sizeof(block) : 0;
		ssize_t got = pread(fd, block, (size_t)(end - start), start);
		if (got != end - start)
			return -1;
		char *newline = memrchr(block, '\n', (size_t)got);
		if (newline != NULL) {
			end = start + (newline - block) + 1;
			break;
		}
		end = start;
	}
	if (end != size && ftruncate(fd, end) < 0)
		return -1;
	return end;
}

/*
 * Opens spool_dir and its file.  Neither is followed through a symbolic
 * link, and both must be the helper's own and writable by it alone: the
 * spool holds every user's records and is replayed by a root daemon.
 * Nothing is chowned: a directory that is not the helper's is refused.
 */
static int open_spool(struct postgresql *postgresql, char *error, size_t error_size)
{
	struct stat status;

	if (make_spool_directory(postgresql->spool_dir, error, error_size) < 0)
		return -1;
	postgresql->spool_dir_fd =
		open(postgresql->spool_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (postgresql->spool_dir_fd < 0 || fstat(postgresql->spool_dir_fd, &status) < 0)
		return vnfs_fail(error, error_size, "postgresql: spool_dir %s: %s",
				 postgresql->spool_dir, strerror(errno));
	if (status.st_uid != geteuid() || (status.st_mode & 0077) != 0)
		return vnfs_fail(error, error_size,
				 "postgresql: spool_dir %s must be owned by uid %u and mode 0700 "
				 "(it is uid %u, mode %04o)",
				 postgresql->spool_dir, (unsigned)geteuid(), (unsigned)status.st_uid,
				 (unsigned)(status.st_mode & 07777));
	postgresql->spool_fd = openat(postgresql->spool_dir_fd, SPOOL_FILE,
				      O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (postgresql->spool_fd < 0 || fstat(postgresql->spool_fd, &status) < 0)
		return vnfs_fail(error, error_size, "postgresql: %s/" SPOOL_FILE ": %s",
				 postgresql->spool_dir, strerror(errno));
	if (!S_ISREG(status.st_mode) || status.st_uid != geteuid() || status.st_nlink != 1)
		return vnfs_fail(error, error_size,
				 "postgresql: %s/" SPOOL_FILE " is not a regular file of its own",
				 postgresql->spool_dir);
	off_t size = cut_unfinished_line(postgresql->spool_fd, status.st_size);
	if (size < 0)
		return vnfs_fail(error, error_size, "postgresql: %s/" SPOOL_FILE ": %s",
				 postgresql->spool_dir, strerror(errno));
	if (size != status.st_size)
		vnfs_warning("postgresql: %s/" SPOOL_FILE ": cut off %lld bytes of a record "
			     "whose writing was interrupted", postgresql->spool_dir,
			     (long long)(status.st_size - size));
	atomic_store(&postgresql->spool_bytes, (uint64_t)size);
	if (size > 0)
		vnfs_info("postgresql: %s/" SPOOL_FILE " holds %lld bytes of records from before: "
			  "replaying them once %s answers",
			  postgresql->spool_dir, (long long)size, postgresql->where);
	return 0;
}

static int init_lock(struct postgresql *postgresql, char *error, size_t error_size)
{
	pthread_condattr_t attributes;

	if (pthread_mutex_init(&postgresql->lock, NULL) != 0)
		return vnfs_fail(error, error_size, "postgresql: cannot make a lock");
	if (pthread_condattr_init(&attributes) != 0 ||
	    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC) != 0 ||
	    pthread_cond_init(&postgresql->wake, &attributes) != 0) {
		pthread_mutex_destroy(&postgresql->lock);
		return vnfs_fail(error, error_size, "postgresql: cannot make a condition variable");
	}
	pthread_condattr_destroy(&attributes);
	return 0;
}

int vnfs_sink_postgresql_open(struct vnfs_sink *sink, const struct vnfs_config *config,
			      char *error, size_t error_size)
{
	if (config->postgresql.conninfo[0] == '\0')
		return vnfs_fail(error, error_size, "postgresql: conninfo must be set");
	struct postgresql *postgresql = calloc(1, sizeof(*postgresql));
	if (postgresql == NULL)
		return vnfs_fail(error, error_size, "postgresql: out of memory");
	if (init_lock(postgresql, error, error_size) < 0) {
		free(postgresql);
		return -1;
	}
	postgresql->spool_dir_fd = -1;
	postgresql->spool_fd = -1;
	snprintf(postgresql->conninfo, sizeof(postgresql->conninfo), "%s", config->postgresql.conninfo);
	snprintf(postgresql->spool_dir, sizeof(postgresql->spool_dir), "%s", config->postgresql.spool_dir);
	postgresql->batch_records = config->postgresql.batch_records ? config->postgresql.batch_records : 1;
	postgresql->buffer_records = config->postgresql.buffer_records ? config->postgresql.buffer_records : 1;
	postgresql->spool_max_bytes = config->postgresql.spool_max_bytes;
	postgresql->retry_interval_ms = config->postgresql.retry_interval_ms;
	postgresql->queue = calloc(postgresql->buffer_records, sizeof(*postgresql->queue));
	postgresql->queue_lengths =
		calloc(postgresql->buffer_records, sizeof(*postgresql->queue_lengths));
	if (postgresql->queue == NULL || postgresql->queue_lengths == NULL) {
		vnfs_fail(error, error_size, "postgresql: out of memory for %" PRIu32 " records",
			  postgresql->buffer_records);
		goto fail;
	}
	if (describe_server(postgresql, error, error_size) < 0 ||
	    open_spool(postgresql, error, error_size) < 0)
		goto fail;
	int status = pthread_create(&postgresql->worker, NULL, work, postgresql);
	if (status != 0) {
		vnfs_fail(error, error_size, "postgresql: cannot start its thread: %s",
			  strerror(status));
		goto fail;
	}
	postgresql->worker_started = true;
	*sink = (struct vnfs_sink){
		.name = "postgresql",
		.state = postgresql,
		.publish = postgresql_publish,
		.job_finished = postgresql_job_finished,
		.dropped = postgresql_dropped,
		.close = postgresql_close,
	};
	return 0;
fail:
	postgresql_close(postgresql);
	return -1;
}
