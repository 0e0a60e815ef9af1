/*
 * findings.c — the rules of the long report (thresholds in findings.h,
 * explained in docs/REPORT.md).  Every number in a finding carries its unit
 * (calls, operations, steps, %, a size in B/KiB/MiB, a duration, a factor),
 * since a reader checks it against what they know of the job.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lib/job_report/findings.h"
#include "lib/job_report/times.h"

struct findings {
	struct report_finding *out;
	size_t max;
	size_t count;
};

__attribute__((format(printf, 3, 4))) static void add(struct findings *findings,
						      enum report_rule rule, const char *format,
						      ...)
{
	if (findings->count == findings->max)
		return;
	struct report_finding *finding = &findings->out[findings->count++];
	finding->rule = rule;
	va_list args;
	va_start(args, format);
	vsnprintf(finding->text, sizeof(finding->text), format, args);
	va_end(args);
}

/* The metadata operation that took the most time. */
static int slowest_metadata_operation(const struct vnfs_step_stats *stats)
{
	int best = -1;
	for (int op = 0; op < VNFS_OP_COUNT; op++)
		if (vnfs_operation_is_metadata[op] && (best < 0 || stats->operations[op].time_ns >
							     stats->operations[best].time_ns))
			best = op;
	return best;
}

static void metadata_bound(const struct report_row *row, struct findings *findings)
{
	uint64_t total = report_total_time_ns(&row->stats);
	uint64_t metadata = report_metadata_time_ns(&row->stats);
	uint64_t calls = report_metadata_ops(&row->stats);
	if (total == 0 || calls < REPORT_METADATA_MIN_OPS ||
	    (double)metadata <= REPORT_METADATA_TIME_SHARE * (double)total)
		return;
	int top = slowest_metadata_operation(&row->stats);
	char spent[32];
	report_format_duration(row->stats.operations[top].time_ns, spent, sizeof(spent));
	add(findings, REPORT_RULE_METADATA_BOUND,
	    "metadata-bound: metadata operations took %.1f%% of the NFS time (%" PRIu64
	    " calls, over %.0f%% and %d calls); most in %s (%" PRIu64 " calls, %s)",
	    100.0 * (double)metadata / (double)total, calls, 100 * REPORT_METADATA_TIME_SHARE,
	    REPORT_METADATA_MIN_OPS, vnfs_operation_names[top], (uint64_t)row->stats.operations[top].count,
	    spent);
}

/* The rsize (or wsize) of the mount that moved most of those bytes. */
static uint32_t io_size(const struct report_row *row, bool reads)
{
	uint64_t most = 0;
	uint32_t size = 0;
	for (size_t i = 0; i < row->mount_count; i++) {
		const struct vnfs_mount_record *m = &row->mounts[i];
		uint64_t bytes = reads ? m->stats.read_bytes : m->stats.write_bytes;
		uint32_t candidate = reads ? m->rsize : m->wsize;
		if (candidate != 0 && (size == 0 || bytes > most)) {
			most = bytes;
			size = candidate;
		}
	}
	return size != 0 ? size : REPORT_DEFAULT_IO_SIZE;
}

static void small_io(const struct report_row *row, bool reads, struct findings *findings)
{
	const struct vnfs_operation_stats *stats =
		&row->stats.operations[reads ? VNFS_OP_READ : VNFS_OP_WRITE];
	if (stats->count < REPORT_SMALL_IO_MIN_OPS)
		return;
	uint64_t average = stats->bytes / stats->count;
	uint32_t size = io_size(row, reads);
	if (average * REPORT_SMALL_IO_DIVISOR >= size)
		return;
	char average_text[32], size_text[32];
	report_format_size(average, average_text, sizeof(average_text));
	report_format_size(size, size_text, sizeof(size_text));
	add(findings, reads ? REPORT_RULE_SMALL_READS : REPORT_RULE_SMALL_WRITES,
	    "small %s: the average %s is %s over %" PRIu64 " calls, under 1/%d of the mount's "
	    "%s (%s); larger requests would need fewer round trips",
	    reads ? "reads" : "writes", reads ? "read" : "write", average_text, (uint64_t)stats->count,
	    REPORT_SMALL_IO_DIVISOR, reads ? "rsize" : "wsize", size_text);
}

static void many_errors(const struct report_row *row, struct findings *findings)
{
	uint64_t errors = report_total_errors(&row->stats);
	uint64_t calls = report_total_ops(&row->stats);
	if (errors == 0 || calls == 0)
		return;
	if (errors <= REPORT_ERRORS_MAX && (double)errors <= REPORT_ERROR_SHARE * (double)calls)
		return;
	int top = 0;
	for (int op = 1; op < VNFS_OP_COUNT; op++)
		if (row->stats.operations[op].errors > row->stats.operations[top].errors)
			top = op;
	add(findings, REPORT_RULE_ERRORS,
	    "many errors: %" PRIu64 " of %" PRIu64 " operations failed (%.2f%%; the limits are "
	    "%.0f%% and %d failed operations); most in %s (%" PRIu64 " failed calls)",
	    errors, calls, 100.0 * (double)errors / (double)calls, 100 * REPORT_ERROR_SHARE,
	    REPORT_ERRORS_MAX, vnfs_operation_names[top], (uint64_t)row->stats.operations[top].errors);
}

static void slow_operations(const struct report_row *row, const struct report_baseline *baseline,
			    struct findings *findings)
{
	for (int op = 0; op < VNFS_OP_COUNT; op++) {
		const struct vnfs_operation_stats *stats = &row->stats.operations[op];
		if (stats->count < REPORT_BASELINE_MIN_CALLS ||
		    baseline->steps[op] < REPORT_BASELINE_MIN_STEPS || baseline->p99_ns[op] == 0)
			continue;
		uint64_t p99 = vnfs_histogram_quantile(stats->latency_histogram,
						       VNFS_LATENCY_BUCKETS, 0.99);
		if (p99 <= REPORT_BASELINE_FACTOR * baseline->p99_ns[op])
			continue;
		char job_text[32], base_text[32];
		report_format_duration(p99, job_text, sizeof(job_text));
		report_format_duration(baseline->p99_ns[op], base_text, sizeof(base_text));
		add(findings, REPORT_RULE_SLOW,
		    "slow %s: p99 %s is %.1fx the node's median p99 of %s over the last 24 h "
		    "(%u steps; the limit is %dx)",
		    vnfs_operation_names[op], job_text, (double)p99 / (double)baseline->p99_ns[op],
		    base_text, baseline->steps[op], REPORT_BASELINE_FACTOR);
	}
}

size_t report_findings(const struct report_row *row, const struct report_baseline *baseline,
		       struct report_finding *out, size_t max)
{
	struct findings findings = { .out = out, .max = max };
	metadata_bound(row, &findings);
	small_io(row, true, &findings);
	small_io(row, false, &findings);
	many_errors(row, &findings);
	if (baseline != NULL)
		slow_operations(row, baseline, &findings);
	return findings.count;
}
