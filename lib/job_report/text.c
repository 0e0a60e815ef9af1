/*
 * text.c — the long report.  Latencies are estimated from the log2
 * histograms (vnfs_histogram_quantile), so p50 and p99 are within a factor
 * of two of the truth and say so in docs/REPORT.md; counts, bytes and total
 * times are exact.
 *
 * Every string printed comes through shown(): user, node, tag, process and
 * mount names and the findings' text came from users or from a report file
 * that may hold anything, and are escaped for the terminal (lib/escape.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lib/escape.h"
#include "lib/job_report/fields.h"
#include "lib/job_report/text.h"
#include "lib/job_report/times.h"

/* Room for the longest string of a row (a tag list) once escaped. */
#define SHOWN_MAX (VNFS_TAGS_BUFFER * VNFS_ESCAPE_GROWTH)

static const char *shown(const char *text, char *buffer, size_t size)
{
	return vnfs_escape_string(VNFS_ESCAPE_TERMINAL, text, buffer, size);
}

static void print_header(FILE *out, const struct report_row *job, const struct report_row *steps,
			 size_t step_count, int64_t now_ms)
{
	char start[40], end[40], elapsed[40], tags[VNFS_TAGS_BUFFER];
	report_field_text(report_field_index("Start"), job, false, now_ms, start, sizeof(start));
	report_field_text(report_field_index("End"), job, false, now_ms, end, sizeof(end));
	report_field_text(report_field_index("Elapsed"), job, false, now_ms, elapsed,
			  sizeof(elapsed));
	vnfs_tags_format(&job->tags, tags, sizeof(tags));

	/* The job's name even for a step shown alone (-j 42.0): "Job 42". */
	struct vnfs_workload whole = job->workload;
	whole.part[0] = '\0';
	char text[SHOWN_MAX], id[REPORT_ID_MAX], shown_id[REPORT_ID_MAX * VNFS_ESCAPE_GROWTH];
	fprintf(out, "Job %s  user %s (%u)  %s\n",
		shown(report_workload_id(&whole, id, sizeof(id)), shown_id, sizeof(shown_id)),
		shown(job->user, text, sizeof(text)), job->uid,
		job->running ? "RUNNING" : "COMPLETED");
	fprintf(out, "Nodes:   %s\n", shown(job->nodes, text, sizeof(text)));
	fprintf(out, "Tags:    %s\n", tags[0] != '\0' ? shown(tags, text, sizeof(text)) : "(none)");
	fprintf(out, "Start:   %s  End: %s  Elapsed: %s\n", start, end, elapsed);
	fprintf(out, "Steps:  ");
	for (size_t i = 0; i < step_count; i++) {
		fprintf(out, "%s%s", i > 0 ? ", " : " ",
			shown(report_row_id(&steps[i], id, sizeof(id)), text, sizeof(text)));
	}
	fprintf(out, "%s\n\n", step_count == 0 ? " (none)" : "");
}

static void print_operations(FILE *out, const struct vnfs_step_stats *stats)
{
	bool any = false;
	fprintf(out, "%-12s %10s %8s %12s %10s %10s %10s %10s\n", "Operation", "Count", "Errors",
		"Total time", "Avg", "p50", "p99", "Bytes");
	for (int op = 0; op < VNFS_OP_COUNT; op++) {
		const struct vnfs_operation_stats *s = &stats->operations[op];
		if (s->count == 0 && s->errors == 0)
			continue;
		any = true;
		char total[32], average[32], p50[32], p99[32], bytes[32];
		report_format_duration(s->time_ns, total, sizeof(total));
		report_format_duration(s->count > 0 ? s->time_ns / s->count : 0, average,
				       sizeof(average));
		report_format_duration(vnfs_histogram_quantile(s->latency_histogram,
							       VNFS_LATENCY_BUCKETS, 0.50),
				       p50, sizeof(p50));
		report_format_duration(vnfs_histogram_quantile(s->latency_histogram,
							       VNFS_LATENCY_BUCKETS, 0.99),
				       p99, sizeof(p99));
		report_format_bytes(s->bytes, bytes, sizeof(bytes));
		fprintf(out, "%-12s %10" PRIu64 " %8" PRIu64 " %12s %10s %10s %10s %10s\n",
			vnfs_operation_names[op], (uint64_t)s->count, (uint64_t)s->errors, total, average,
			p50, p99, bytes);
	}
	if (!any)
		fprintf(out, "(no NFS operations)\n");
	fputc('\n', out);
}

static void print_processes(FILE *out, const struct report_row *job)
{
	if (job->process_count == 0)
		return;
	fprintf(out, "%-16s %10s %10s %10s %11s %10s\n", "Process", "Read ops", "Read bytes",
		"Write ops", "Write bytes", "Other ops");
	for (size_t i = 0; i < job->process_count; i++) {
		const struct vnfs_process_record *p = &job->processes[i];
		char read[32], written[32], name[sizeof(p->comm) * VNFS_ESCAPE_GROWTH];
		report_format_bytes(p->stats.read_bytes, read, sizeof(read));
		report_format_bytes(p->stats.write_bytes, written, sizeof(written));
		fprintf(out, "%-16s %10" PRIu64 " %10s %10" PRIu64 " %11s %10" PRIu64 "\n",
			shown(p->comm, name, sizeof(name)),
			(uint64_t)p->stats.read_ops, read, (uint64_t)p->stats.write_ops, written,
			(uint64_t)p->stats.other_ops);
	}
	fputc('\n', out);
}

static void print_mounts(FILE *out, const struct report_row *job)
{
	if (job->mount_count == 0)
		return;
	fprintf(out, "Mounts\n");
	for (size_t i = 0; i < job->mount_count; i++) {
		const struct vnfs_mount_record *m = &job->mounts[i];
		char rsize[32] = "unknown", wsize[32] = "unknown", read[32], written[32], time[32];
		char mount_point[sizeof(m->mount_point) * VNFS_ESCAPE_GROWTH];
		char source[sizeof(m->source) * VNFS_ESCAPE_GROWTH];
		char version[sizeof(m->version) * VNFS_ESCAPE_GROWTH];
		if (m->rsize != 0)
			report_format_bytes(m->rsize, rsize, sizeof(rsize));
		if (m->wsize != 0)
			report_format_bytes(m->wsize, wsize, sizeof(wsize));
		report_format_bytes(m->stats.read_bytes, read, sizeof(read));
		report_format_bytes(m->stats.write_bytes, written, sizeof(written));
		report_format_duration(m->stats.time_ns, time, sizeof(time));
		fprintf(out,
			"  %s (%s, NFSv%s, rsize %s, wsize %s): %" PRIu64 " ops, %" PRIu64
			" errors, %s, read %s, written %s\n",
			m->mount_point[0] != '\0' ? shown(m->mount_point, mount_point,
							   sizeof(mount_point))
						   : "(unmounted)",
			shown(m->source, source, sizeof(source)),
			m->version[0] != '\0' ? shown(m->version, version, sizeof(version)) : "?",
			rsize, wsize,
			(uint64_t)m->stats.ops, (uint64_t)m->stats.errors, time, read, written);
	}
	fputc('\n', out);
}

static void print_findings(FILE *out, const struct report_row *job,
			   const struct report_baseline *baseline)
{
	struct report_finding findings[REPORT_MAX_FINDINGS];
	size_t count = report_findings(job, baseline, findings, REPORT_MAX_FINDINGS);
	fprintf(out, "Findings\n");
	if (count == 0)
		fprintf(out, "  none\n");
	for (size_t i = 0; i < count; i++) {
		char text[sizeof(findings[i].text) * VNFS_ESCAPE_GROWTH];
		fprintf(out, "  - %s\n", shown(findings[i].text, text, sizeof(text)));
	}
	if (baseline == NULL)
		fprintf(out, "  (no latency baseline: the node's history was not available)\n");
}

void report_print_long(FILE *out, const struct report_row *job, const struct report_row *steps,
		       size_t step_count, const struct report_baseline *baseline, int64_t now_ms)
{
	print_header(out, job, steps, step_count, now_ms);
	print_operations(out, &job->stats);
	print_processes(out, job);
	print_mounts(out, job);
	print_findings(out, job, baseline);
}
