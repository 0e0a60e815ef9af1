/*
 * findings.h — the rules the long report applies to a job, each a fixed
 * threshold documented in docs/REPORT.md.  A finding names what was seen and
 * the number that crossed the line, so a user can check it.
 */
#ifndef VNFS_JOB_REPORT_FINDINGS_H
#define VNFS_JOB_REPORT_FINDINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/job_report/rows.h"

/* metadata-bound: metadata operations took more than this share of the
 * job's NFS time, over at least this many metadata calls. */
#define REPORT_METADATA_TIME_SHARE 0.50
#define REPORT_METADATA_MIN_OPS 1000

/* small I/O: the average request is under 1/REPORT_SMALL_IO_DIVISOR of the
 * mount's rsize (reads) or wsize (writes), over at least this many calls;
 * a mount whose size is unknown counts as REPORT_DEFAULT_IO_SIZE. */
#define REPORT_SMALL_IO_DIVISOR 8
#define REPORT_SMALL_IO_MIN_OPS 100
#define REPORT_DEFAULT_IO_SIZE (1024u * 1024u)

/* many errors: more than this share of all operations failed, or more than
 * REPORT_ERRORS_MAX did. */
#define REPORT_ERROR_SHARE 0.01
#define REPORT_ERRORS_MAX 100

/* slow: an operation's p99 is more than REPORT_BASELINE_FACTOR times the
 * median p99 of the same operation in the node's steps of the last
 * REPORT_BASELINE_WINDOW_MS, judged only with at least
 * REPORT_BASELINE_MIN_CALLS calls (job and each baseline step) and
 * REPORT_BASELINE_MIN_STEPS baseline steps. */
#define REPORT_BASELINE_FACTOR 4
#define REPORT_BASELINE_MIN_CALLS 100
#define REPORT_BASELINE_MIN_STEPS 5
#define REPORT_BASELINE_WINDOW_MS (24 * 3600 * 1000LL)

/*
 * The wire rules (the job's RPCs, bpf/wire.h), each judged over the job's
 * RPCs summed over its mounts; the "slow server" limits per class are the
 * table in findings.c.
 *
 * client-bound: RPCs waited longer on average in the client's queue
 * (backlog: before their first send) than on the server and the network
 * (RTT), and more than REPORT_CLIENT_BACKLOG_NS: under 1 ms of queueing is
 * not worth a finding whatever the RTT.
 */
#define REPORT_CLIENT_BACKLOG_NS 1000000ull
#define REPORT_WIRE_MIN_RPCS 20
/* re-reads: the READ replies carried more than REPORT_REREAD_FACTOR times
 * the bytes read through the VFS, and more than REPORT_REREAD_MIN_BYTES
 * (readahead past the end of small files is not worth a finding). */
#define REPORT_REREAD_FACTOR 1.5
#define REPORT_REREAD_MIN_BYTES (16ull << 20)
/* synchronous writes: at least REPORT_SYNC_MIN_COMMITS COMMITs (one per
 * closed file is normal) and fewer than REPORT_SYNC_WRITES_PER_COMMIT
 * WRITEs per COMMIT. */
#define REPORT_SYNC_MIN_COMMITS 20
#define REPORT_SYNC_WRITES_PER_COMMIT 4

enum report_rule {
	REPORT_RULE_METADATA_BOUND,
	REPORT_RULE_SMALL_READS,
	REPORT_RULE_SMALL_WRITES,
	REPORT_RULE_ERRORS,
	REPORT_RULE_SLOW,
	REPORT_RULE_SLOW_SERVER,  /* one per READ, WRITE, COMMIT, and metadata */
	REPORT_RULE_CLIENT_BOUND,
	REPORT_RULE_RETRANSMISSIONS,
	REPORT_RULE_REREADS,
	REPORT_RULE_SYNC_WRITES,
	REPORT_RULE_COUNT
};

/* Each rule's short name ("metadata-bound", "small-writes"), as the job's
 * summary in Slurm's accounting lists its findings (lib/slurm_accounting). */
extern const char *const report_rule_names[REPORT_RULE_COUNT];

struct report_finding {
	enum report_rule rule;
	char text[320];
};

/* Per operation: the median of the baseline steps' p99 (steps == 0: none). */
struct report_baseline {
	uint64_t p99_ns[VNFS_OP_COUNT];
	uint32_t steps[VNFS_OP_COUNT];
};

/* 4 rules of VFS calls, slow per operation, and 8 of the wire. */
#define REPORT_MAX_FINDINGS (4 + VNFS_OP_COUNT + 8)

/* Applies every rule to row (baseline may be NULL: no latency rule).
 * Returns how many findings were written to out (at most max). */
size_t report_findings(const struct report_row *row, const struct report_baseline *baseline,
		       struct report_finding *out, size_t max);

#endif /* VNFS_JOB_REPORT_FINDINGS_H */
