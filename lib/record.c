/*
 * record.c — small facts about step records every output shares: how a
 * Slurm step id is spelled, how step counters add up, and how a quantile is
 * read from a log2 histogram.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/record.h"

static const struct {
	uint32_t step_id;
	const char *name;
} special_steps[] = {
	{ VNFS_STEP_BATCH, "batch" },
	{ VNFS_STEP_EXTERN, "extern" },
	{ VNFS_STEP_INTERACTIVE, "interactive" },
	{ VNFS_STEP_PENDING, "pending" },
};

void vnfs_job_of_steps(struct vnfs_job *job, const struct vnfs_workload *workload,
		       const char *node, const struct vnfs_step_record *steps, size_t count)
{
	memset(job, 0, sizeof(*job));
	job->workload = *workload;
	job->workload.part[0] = '\0';
	(void)vnfs_workload_slurm_job_id(&job->workload, &job->job_id); /* 0 if not Slurm's */
	job->node = node;
	job->steps = steps;
	job->step_count = count;
	for (size_t i = 0; i < count; i++) {
		if (i == 0 || steps[i].start_time_ms < job->start_time_ms)
			job->start_time_ms = steps[i].start_time_ms;
		if (steps[i].end_time_ms > job->end_time_ms)
			job->end_time_ms = steps[i].end_time_ms;
		job->uid = steps[i].uid;
		job->user = steps[i].user;
	}
}

void vnfs_record_identify(struct vnfs_step_record *record, const struct vnfs_workload *workload)
{
	record->workload = *workload;
	record->job_id = 0;
	record->step_id = 0;
	(void)vnfs_workload_slurm_ids(workload, &record->job_id, &record->step_id);
}

void vnfs_record_identify_slurm(struct vnfs_step_record *record, uint32_t job_id,
				uint32_t step_id)
{
	record->job_id = job_id;
	record->step_id = step_id;
	vnfs_workload_of_slurm_step(&record->workload, job_id, step_id);
}

const char *vnfs_step_name(uint32_t step_id, char *buf, size_t size)
{
	for (size_t i = 0; i < sizeof(special_steps) / sizeof(special_steps[0]); i++) {
		if (special_steps[i].step_id == step_id) {
			snprintf(buf, size, "%s", special_steps[i].name);
			return buf;
		}
	}
	snprintf(buf, size, "%u", step_id);
	return buf;
}

int vnfs_step_parse(const char *text, uint32_t *step_id)
{
	for (size_t i = 0; i < sizeof(special_steps) / sizeof(special_steps[0]); i++) {
		if (strcmp(text, special_steps[i].name) == 0) {
			*step_id = special_steps[i].step_id;
			return 0;
		}
	}
	/* Plain decimal only: no sign, no spaces, no hex, nothing after. */
	if (text[0] < '0' || text[0] > '9')
		return -1;
	char *end;
	errno = 0;
	unsigned long long value = strtoull(text, &end, 10);
	if (errno != 0 || *end != '\0' || value > UINT32_MAX)
		return -1;
	*step_id = (uint32_t)value;
	return 0;
}

void vnfs_step_stats_add(struct vnfs_step_stats *sum, const struct vnfs_step_stats *add)
{
	for (int op = 0; op < VNFS_OP_COUNT; op++) {
		struct vnfs_operation_stats *to = &sum->operations[op];
		const struct vnfs_operation_stats *from = &add->operations[op];

		to->count += from->count;
		to->errors += from->errors;
		to->time_ns += from->time_ns;
		to->bytes += from->bytes;
		for (int b = 0; b < VNFS_LATENCY_BUCKETS; b++)
			to->latency_histogram[b] += from->latency_histogram[b];
	}
	for (int direction = 0; direction < VNFS_DIRECTIONS; direction++)
		for (int b = 0; b < VNFS_SIZE_BUCKETS; b++)
			sum->request_size_histogram[direction][b] +=
				add->request_size_histogram[direction][b];
}

const char *const vnfs_wire_error_names[VNFS_WIRE_ERRORS + 1] = {
	[VNFS_WIRE_ERROR_TIMEOUT] = "timeout", [VNFS_WIRE_ERROR_DELAY] = "delay",
	[VNFS_WIRE_ERROR_STALE] = "stale",     [VNFS_WIRE_ERROR_ACCESS] = "access",
	[VNFS_WIRE_ERROR_NOENT] = "noent",     [VNFS_WIRE_ERROR_IO] = "io",
	[VNFS_WIRE_ERROR_OTHER] = "other",
};

const struct vnfs_wire_field vnfs_wire_counters[VNFS_WIRE_COUNTERS] = {
	{ "rpcs", offsetof(struct vnfs_wire_stats, rpcs) },
	{ "transmissions", offsetof(struct vnfs_wire_stats, transmissions) },
	{ "major_timeouts", offsetof(struct vnfs_wire_stats, major_timeouts) },
	{ "bytes_sent", offsetof(struct vnfs_wire_stats, bytes_sent) },
	{ "bytes_received", offsetof(struct vnfs_wire_stats, bytes_received) },
	{ "backlog_ns", offsetof(struct vnfs_wire_stats, backlog_ns) },
	{ "rtt_ns", offsetof(struct vnfs_wire_stats, rtt_ns) },
	{ "execute_ns", offsetof(struct vnfs_wire_stats, execute_ns) },
	{ "errors", offsetof(struct vnfs_wire_stats, errors) },
};

const struct vnfs_wire_field vnfs_wire_histograms[VNFS_WIRE_HISTOGRAMS] = {
	{ "backlog_histogram", offsetof(struct vnfs_wire_stats, backlog_histogram) },
	{ "rtt_histogram", offsetof(struct vnfs_wire_stats, rtt_histogram) },
	{ "execute_histogram", offsetof(struct vnfs_wire_stats, execute_histogram) },
};

/* Every member of vnfs_wire_stats is a __u64 counter that adds. */
_Static_assert(sizeof(struct vnfs_wire_stats) % sizeof(__u64) == 0,
	       "vnfs_wire_stats is made of __u64 counters only");

void vnfs_wire_stats_add(struct vnfs_wire_stats *sum, const struct vnfs_wire_stats *add)
{
	__u64 *to = (__u64 *)sum;
	const __u64 *from = (const __u64 *)add;

	for (size_t i = 0; i < sizeof(*sum) / sizeof(__u64); i++)
		to[i] += from[i];
}

uint64_t vnfs_histogram_quantile(const __u64 *buckets, size_t bucket_count, double q)
{
	uint64_t total = 0;
	for (size_t b = 0; b < bucket_count; b++)
		total += buckets[b];
	if (total == 0 || !(q > 0.0))
		return 0;
	if (q > 1.0)
		q = 1.0;

	uint64_t rank = (uint64_t)ceil(q * (double)total);
	if (rank == 0)
		rank = 1;
	uint64_t below = 0;
	for (size_t b = 0; b < bucket_count; b++) {
		if (buckets[b] == 0 || below + buckets[b] < rank) {
			below += buckets[b];
			continue;
		}
		double low = b == 0 ? 0.0 : ldexp(1.0, (int)b);
		double high = ldexp(1.0, (int)b + 1);
		double fraction = (double)(rank - below) / (double)buckets[b];
		return (uint64_t)(low + (high - low) * fraction);
	}
	return 0; /* not reached: rank <= total */
}

/* ---- copies that own their arrays ---------------------------------------- */

/* count elements of size from from, or NULL for none; *failed when they
 * could not be allocated. */
static void *copy_rows(const void *from, size_t count, size_t size, bool *failed)
{
	void *to;

	if (count == 0 || from == NULL)
		return NULL;
	to = malloc(count * size);
	if (to == NULL)
		*failed = true;
	else
		memcpy(to, from, count * size);
	return to;
}

int vnfs_step_record_copy(struct vnfs_step_record *copy, const struct vnfs_step_record *record)
{
	struct vnfs_step_stats *stats = calloc(1, sizeof(*stats));
	bool failed = stats == NULL;

	*copy = *record;
	if (stats != NULL && record->stats != NULL)
		*stats = *record->stats;
	copy->stats = stats;
	copy->tags = vnfs_tags_copy(record->tags);
	failed |= copy->tags == NULL;
	copy->processes = copy_rows(record->processes, record->process_count,
				    sizeof(*record->processes), &failed);
	copy->mounts = copy_rows(record->mounts, record->mount_count, sizeof(*record->mounts),
				 &failed);
	copy->wire = copy_rows(record->wire, record->wire_count, sizeof(*record->wire), &failed);
	/* A count without its rows is none. */
	copy->process_count = copy->processes ? record->process_count : 0;
	copy->mount_count = copy->mounts ? record->mount_count : 0;
	copy->wire_count = copy->wire ? record->wire_count : 0;
	if (failed) {
		vnfs_step_record_free_arrays(copy);
		return -1;
	}
	return 0;
}

void vnfs_step_record_free_arrays(struct vnfs_step_record *record)
{
	vnfs_tags_free(record->tags);
	record->tags = vnfs_tags_none();
	free((void *)record->stats);
	free((void *)record->processes);
	free((void *)record->mounts);
	free((void *)record->wire);
	record->stats = NULL;
	record->processes = NULL;
	record->process_count = 0;
	record->mounts = NULL;
	record->mount_count = 0;
	record->wire = NULL;
	record->wire_count = 0;
}
