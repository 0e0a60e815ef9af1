/*
 * step_report.c — formatting --vnfs-report=brief|full from a QUERY reply.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/record_json.h"
#include "spank/step_report.h"

/* Appends to out without ever overflowing; the text is cut at size. */
struct text {
	char *out;
	size_t size, used;
};

static void append(struct text *text, const char *format, ...)
	__attribute__((format(printf, 2, 3)));

static void append(struct text *text, const char *format, ...)
{
	va_list list;
	int written;

	if (text->used + 1 >= text->size)
		return;
	va_start(list, format);
	written = vsnprintf(text->out + text->used, text->size - text->used, format, list);
	va_end(list);
	if (written < 0)
		return;
	text->used += (size_t)written;
	if (text->used >= text->size)
		text->used = text->size - 1;
}

/* The job's step record for step_id, or NULL. */
static const struct vnfs_step_record *find_step(const struct vnfs_job *job, uint32_t step_id)
{
	for (size_t i = 0; i < job->step_count; i++)
		if (job->steps[i].step_id == step_id)
			return &job->steps[i];
	return NULL;
}

/* The brief line counts calls as vnfs-report's default columns do
 * (ReadOps, WriteOps, MetaOps: lib/operations.c's classes), and names the
 * data calls that are neither (fsync, and memory-mapped reads when there
 * were any), so that its numbers are the report's. */
static void format_brief(const struct vnfs_step_record *record, struct text *text)
{
	const struct vnfs_operation_stats *operations = record->stats->operations;
	uint64_t metadata_calls = 0, errors = 0, time_ns = 0;
	char step[32];

	for (int op = 0; op < VNFS_OP_COUNT; op++) {
		if (vnfs_operation_is_metadata[op])
			metadata_calls += operations[op].count;
		errors += operations[op].errors;
		time_ns += operations[op].time_ns;
	}
	append(text,
	       "vnfs: job %u step %s: read %llu bytes (%llu calls), write %llu bytes (%llu calls), "
	       "%llu metadata calls, %llu fsync calls, ",
	       record->job_id, vnfs_step_name(record->step_id, step, sizeof(step)),
	       (unsigned long long)operations[VNFS_OP_READ].bytes,
	       (unsigned long long)operations[VNFS_OP_READ].count,
	       (unsigned long long)operations[VNFS_OP_WRITE].bytes,
	       (unsigned long long)operations[VNFS_OP_WRITE].count,
	       (unsigned long long)metadata_calls,
	       (unsigned long long)operations[VNFS_OP_FSYNC].count);
	if (operations[VNFS_OP_MMAP_READ].bytes > 0)
		append(text, "%llu bytes read through mmap, ",
		       (unsigned long long)operations[VNFS_OP_MMAP_READ].bytes);
	append(text, "%llu errors, %.3f s in NFS calls\n", (unsigned long long)errors,
	       time_ns / 1e9);
}

static void format_full(const struct vnfs_step_record *record, struct text *text)
{
	const char *name, *value;

	format_brief(record, text);
	if (vnfs_tags_count(record->tags)) {
		append(text, "vnfs: tags:");
		for (unsigned i = 0; vnfs_tags_get(record->tags, i, &name, &value); i++)
			append(text, " %s=%s", name, value);
		append(text, "\n");
	}
	append(text, "vnfs: %-12s %12s %8s %12s %16s\n", "operation", "calls", "errors", "time_s",
	       "bytes");
	for (int op = 0; op < VNFS_OP_COUNT; op++) {
		const struct vnfs_operation_stats *stats = &record->stats->operations[op];

		if (!stats->count)
			continue;
		append(text, "vnfs: %-12s %12llu %8llu %12.6f %16llu\n", vnfs_operation_names[op],
		       (unsigned long long)stats->count, (unsigned long long)stats->errors,
		       stats->time_ns / 1e9, (unsigned long long)stats->bytes);
	}
}

int vnfs_step_report_format(const struct vnfs_job *job, uint32_t step_id,
			    enum vnfs_report_mode mode, char *out, size_t size, char *error,
			    size_t error_size)
{
	const struct vnfs_step_record *record = find_step(job, step_id);
	struct text text = { out, size, 0 };
	char name[32];

	if (size)
		out[0] = '\0';
	if (!record) {
		snprintf(error, error_size, "the helper's reply has no step %s",
			 vnfs_step_name(step_id, name, sizeof(name)));
		return -1;
	}
	if (!record->stats) {
		snprintf(error, error_size, "the helper's reply has no counters");
		return -1;
	}
	if (mode == VNFS_REPORT_FULL)
		format_full(record, &text);
	else if (mode == VNFS_REPORT_BRIEF)
		format_brief(record, &text);
	return 0;
}
