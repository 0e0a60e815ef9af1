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
#include "lib/job_report/wire.h"

const char *const report_rule_names[REPORT_RULE_COUNT] = {
	[REPORT_RULE_METADATA_BOUND] = "metadata-bound",
	[REPORT_RULE_SMALL_READS] = "small-reads",
	[REPORT_RULE_SMALL_WRITES] = "small-writes",
	[REPORT_RULE_ERRORS] = "many-errors",
	[REPORT_RULE_SLOW] = "slow",
	[REPORT_RULE_SLOW_SERVER] = "slow-server",
	[REPORT_RULE_CLIENT_BOUND] = "client-bound",
	[REPORT_RULE_RETRANSMISSIONS] = "retransmissions",
	[REPORT_RULE_REREADS] = "rereads",
	[REPORT_RULE_SYNC_WRITES] = "sync-writes",
};

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

/* ---- the wire rules ---------------------------------------------------- */

/*
 * The server is slow: a class's mean RTT (send to reply, so the server's
 * time and the network's, none of the client's queueing) over the limit,
 * with enough RPCs for a mean to mean something.
 */
static const struct server_limit {
	const char *procedure; /* NULL: every metadata procedure together */
	uint64_t rtt_ns;
	uint64_t min_rpcs;
} server_limits[] = {
	/* A 1 MiB READ or WRITE takes about 1 ms on 10 Gb/s and a server
	 * answers from memory well under that: 10 ms on average is a server
	 * going to disk for most of them, or queueing. */
	{ "READ", 10000000ull, REPORT_WIRE_MIN_RPCS },
	{ "WRITE", 10000000ull, REPORT_WIRE_MIN_RPCS },
	/* A COMMIT waits for the server's stable storage by design: a few ms
	 * is normal, 10 ms on average is a slow disk or a deep queue. */
	{ "COMMIT", 10000000ull, REPORT_WIRE_MIN_RPCS },
	/* GETATTR, LOOKUP, ACCESS carry no data and take 0.1 to 0.5 ms on a
	 * LAN: 2 ms on average is a server busy with something else. */
	{ NULL, 2000000ull, REPORT_WIRE_MIN_RPCS },
};

static void slow_server(const struct report_row *row, const struct server_limit *limit,
			struct findings *findings)
{
	struct vnfs_wire_stats sum;
	if (limit->procedure != NULL)
		report_wire_procedure(row, limit->procedure, &sum);
	else
		report_wire_metadata(row, &sum);
	uint64_t rtt = report_wire_mean_ns(sum.rtt_ns, sum.rpcs);
	if (sum.rpcs < limit->min_rpcs || rtt <= limit->rtt_ns)
		return;
	char rtt_text[32], limit_text[32];
	report_format_duration(rtt, rtt_text, sizeof(rtt_text));
	report_format_duration(limit->rtt_ns, limit_text, sizeof(limit_text));
	add(findings, REPORT_RULE_SLOW_SERVER,
	    "the server is slow: %s RPCs took %s on average from send to reply (%" PRIu64
	    " RPCs; the limits are %s and %" PRIu64 " RPCs)",
	    limit->procedure != NULL ? limit->procedure : "metadata", rtt_text, (uint64_t)sum.rpcs,
	    limit_text, limit->min_rpcs);
}

static void client_bound(const struct report_row *row, struct findings *findings)
{
	struct vnfs_wire_stats sum;
	report_wire_total(row, &sum);
	uint64_t backlog = report_wire_mean_ns(sum.backlog_ns, sum.rpcs);
	uint64_t rtt = report_wire_mean_ns(sum.rtt_ns, sum.rpcs);
	if (sum.rpcs < REPORT_WIRE_MIN_RPCS || backlog <= rtt || backlog <= REPORT_CLIENT_BACKLOG_NS)
		return;
	char backlog_text[32], rtt_text[32], limit_text[32];
	report_format_duration(backlog, backlog_text, sizeof(backlog_text));
	report_format_duration(rtt, rtt_text, sizeof(rtt_text));
	report_format_duration(REPORT_CLIENT_BACKLOG_NS, limit_text, sizeof(limit_text));
	add(findings, REPORT_RULE_CLIENT_BOUND,
	    "the client is the bottleneck: RPCs waited %s on average in the client's queue "
	    "before their first send, more than their %s round trip (%" PRIu64 " RPCs; the "
	    "limit is %s and the round trip); more RPCs were in flight than the transport "
	    "takes at once",
	    backlog_text, rtt_text, (uint64_t)sum.rpcs, limit_text);
}

/* The procedure with the most retransmissions and major timeouts. */
static const struct vnfs_wire_record *most_resent(const struct report_row *row)
{
	const struct vnfs_wire_record *top = NULL;
	uint64_t most = 0;
	for (size_t i = 0; i < row->wire_count; i++) {
		const struct vnfs_wire_stats *s = &row->wire[i].stats;
		uint64_t resent = report_wire_retransmissions(s) + s->major_timeouts;
		if (resent > most) {
			most = resent;
			top = &row->wire[i];
		}
	}
	return top;
}

static void retransmissions(const struct report_row *row, struct findings *findings)
{
	struct vnfs_wire_stats sum;
	report_wire_total(row, &sum);
	uint64_t resent = report_wire_retransmissions(&sum);
	const struct vnfs_wire_record *top = most_resent(row);
	if ((resent == 0 && sum.major_timeouts == 0) || top == NULL || sum.rpcs == 0)
		return;
	add(findings, REPORT_RULE_RETRANSMISSIONS,
	    "the network drops requests: %" PRIu64 " retransmissions and %" PRIu64
	    " major timeouts over %" PRIu64 " RPCs (%.2f%% resent; the limit is 0); most in "
	    "%s (%" PRIu64 " retransmissions, %" PRIu64 " major timeouts)",
	    resent, (uint64_t)sum.major_timeouts, (uint64_t)sum.rpcs,
	    100.0 * (double)resent / (double)sum.rpcs, top->procedure,
	    report_wire_retransmissions(&top->stats), (uint64_t)top->stats.major_timeouts);
}

static void rereads(const struct report_row *row, struct findings *findings)
{
	struct vnfs_wire_stats reads;
	report_wire_procedure(row, "READ", &reads);
	uint64_t vfs = report_vfs_read_bytes(row);
	if (reads.bytes_received <= REPORT_REREAD_MIN_BYTES ||
	    (double)reads.bytes_received <= REPORT_REREAD_FACTOR * (double)vfs)
		return;
	char wire_text[32], vfs_text[32], ratio[48], limit_text[32];
	report_format_size(reads.bytes_received, wire_text, sizeof(wire_text));
	report_format_size(vfs, vfs_text, sizeof(vfs_text));
	report_format_size(REPORT_REREAD_MIN_BYTES, limit_text, sizeof(limit_text));
	if (vfs > 0)
		snprintf(ratio, sizeof(ratio), "%.2fx", (double)reads.bytes_received / (double)vfs);
	else
		snprintf(ratio, sizeof(ratio), "no VFS reads");
	add(findings, REPORT_RULE_REREADS,
	    "re-reads data the cache does not keep: %s came over the wire in READ replies for "
	    "%s read through the VFS (%s; the limits are %.1fx and %s)",
	    wire_text, vfs_text, ratio, REPORT_REREAD_FACTOR, limit_text);
}

static void sync_writes(const struct report_row *row, struct findings *findings)
{
	struct vnfs_wire_stats writes, commits;
	report_wire_procedure(row, "WRITE", &writes);
	report_wire_procedure(row, "COMMIT", &commits);
	if (commits.rpcs < REPORT_SYNC_MIN_COMMITS ||
	    writes.rpcs >= REPORT_SYNC_WRITES_PER_COMMIT * commits.rpcs)
		return;
	add(findings, REPORT_RULE_SYNC_WRITES,
	    "writes are flushed synchronously: %" PRIu64 " COMMITs for %" PRIu64
	    " WRITEs (%.2f WRITEs per COMMIT; the limits are %d COMMITs and under %d WRITEs "
	    "per COMMIT); fsync, O_SYNC or close after little data makes the server write to "
	    "disk each time",
	    (uint64_t)commits.rpcs, (uint64_t)writes.rpcs,
	    (double)writes.rpcs / (double)commits.rpcs, REPORT_SYNC_MIN_COMMITS,
	    REPORT_SYNC_WRITES_PER_COMMIT);
}

static void wire_rules(const struct report_row *row, struct findings *findings)
{
	if (!report_wire_any(row))
		return;
	for (size_t i = 0; i < sizeof(server_limits) / sizeof(server_limits[0]); i++)
		slow_server(row, &server_limits[i], findings);
	client_bound(row, findings);
	retransmissions(row, findings);
	rereads(row, findings);
	sync_writes(row, findings);
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
	wire_rules(row, &findings);
	return findings.count;
}
