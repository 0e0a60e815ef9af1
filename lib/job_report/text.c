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
#include "lib/job_report/wire.h"

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
		if (!report_latency_known(s)) {
			snprintf(p50, sizeof(p50), "-");
			snprintf(p99, sizeof(p99), "-");
		}
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

/* "0", or "12 (timeout)": the count and the kind most of them were. */
static void error_cell(const struct vnfs_wire_stats *s, char *buf, size_t size)
{
	int top = report_wire_top_error(s);
	if (s->errors == 0 || top < 0)
		snprintf(buf, size, "%" PRIu64, (uint64_t)s->errors);
	else
		snprintf(buf, size, "%" PRIu64 " (%s)", (uint64_t)s->errors,
			 vnfs_wire_error_names[top]);
}

static void print_wire_row(FILE *out, const struct vnfs_wire_record *w)
{
	const struct vnfs_wire_stats *s = &w->stats;
	char sent[32], received[32], backlog[32], rtt[32], execute[32], errors[64];
	char name[sizeof(w->procedure) * VNFS_ESCAPE_GROWTH];
	report_format_bytes(s->bytes_sent, sent, sizeof(sent));
	report_format_bytes(s->bytes_received, received, sizeof(received));
	report_format_duration(report_wire_mean_ns(s->backlog_ns, s->rpcs), backlog,
			       sizeof(backlog));
	report_format_duration(report_wire_mean_ns(s->rtt_ns, s->rpcs), rtt, sizeof(rtt));
	report_format_duration(report_wire_mean_ns(s->execute_ns, s->rpcs), execute,
			       sizeof(execute));
	error_cell(s, errors, sizeof(errors));
	fprintf(out, "%-12s %10" PRIu64 " %8" PRIu64 " %8" PRIu64 " %10s %10s %10s %10s %10s  %s\n",
		shown(w->procedure, name, sizeof(name)), (uint64_t)s->rpcs,
		report_wire_retransmissions(s), (uint64_t)s->major_timeouts, sent, received,
		backlog, rtt, execute, errors);
}

/* The rows of one mount point (rows are sorted by it): from first, returns
 * the index past them.  Only procedures with RPCs, most RPCs first. */
static size_t print_wire_mount(FILE *out, const struct report_row *job, size_t first)
{
	const char *mount_point = job->wire[first].mount_point;
	char shown_mount[sizeof(job->wire[first].mount_point) * VNFS_ESCAPE_GROWTH];
	fprintf(out, "RPCs to %s (NFSv%u)\n",
		mount_point[0] != '\0' ? shown(mount_point, shown_mount, sizeof(shown_mount))
				       : "an unknown mount",
		(unsigned)job->wire[first].version);
	fprintf(out, "%-12s %10s %8s %8s %10s %10s %10s %10s %10s  %s\n", "Procedure", "RPCs",
		"Retrans", "Timeouts", "Sent", "Received", "Backlog", "RTT", "Execute", "Errors");
	size_t end = first;
	for (; end < job->wire_count && strcmp(job->wire[end].mount_point, mount_point) == 0;
	     end++)
		if (job->wire[end].stats.rpcs > 0)
			print_wire_row(out, &job->wire[end]);
	fputc('\n', out);
	return end;
}

/* One line per direction: what the job asked the VFS for against what
 * crossed the wire.  Over 1.00x the cache did not keep what was read
 * (or readahead fetched more than was read); under it the cache served. */
static void print_cache_line(FILE *out, const char *verb, uint64_t vfs, const char *direction,
			     uint64_t wire, const char *procedure)
{
	char vfs_text[32], wire_text[32];
	report_format_size(vfs, vfs_text, sizeof(vfs_text));
	report_format_size(wire, wire_text, sizeof(wire_text));
	fprintf(out, "  %s %s through the VFS, %s %s the wire in %s RPCs: ", verb, vfs_text,
		wire_text, direction, procedure);
	if (vfs > 0)
		fprintf(out, "%.2fx\n", (double)wire / (double)vfs);
	else
		fprintf(out, "no VFS bytes to compare\n");
}

static void print_cache(FILE *out, const struct report_row *job)
{
	struct vnfs_wire_stats reads, writes;
	report_wire_procedure(job, "READ", &reads);
	report_wire_procedure(job, "WRITE", &writes);
	fprintf(out, "Cache (wire bytes per VFS byte)\n");
	print_cache_line(out, "read", report_vfs_read_bytes(job), "came over", reads.bytes_received,
			 "READ");
	print_cache_line(out, "wrote", report_vfs_write_bytes(job), "went over", writes.bytes_sent,
			 "WRITE");
	fputc('\n', out);
}

/* The wire section: a table per mount point, then the cache lines.  None
 * for a job whose records predate RPC counting (or that sent no RPC). */
static void print_wire(FILE *out, const struct report_row *job)
{
	if (!report_wire_any(job))
		return;
	for (size_t i = 0; i < job->wire_count;) {
		size_t next = i;
		bool any = false;
		for (; next < job->wire_count &&
		       strcmp(job->wire[next].mount_point, job->wire[i].mount_point) == 0;
		     next++)
			any = any || job->wire[next].stats.rpcs > 0;
		i = any ? print_wire_mount(out, job, i) : next;
	}
	print_cache(out, job);
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

void report_print_long_summary(FILE *out, const struct report_row *job, const char *source,
			       const enum report_rule *findings, size_t finding_count,
			       int64_t now_ms)
{
	print_header(out, job, NULL, 0, now_ms);
	print_operations(out, &job->stats);
	fprintf(out, "Findings at the job's end (%s)\n", source);
	if (finding_count == 0)
		fprintf(out, "  none\n");
	for (size_t i = 0; i < finding_count; i++)
		fprintf(out, "  - %s\n", report_rule_names[findings[i]]);
}

void report_print_long(FILE *out, const struct report_row *job, const struct report_row *steps,
		       size_t step_count, const struct report_baseline *baseline, int64_t now_ms)
{
	print_header(out, job, steps, step_count, now_ms);
	print_operations(out, &job->stats);
	print_processes(out, job);
	print_mounts(out, job);
	print_wire(out, job);
	print_findings(out, job, baseline);
}
