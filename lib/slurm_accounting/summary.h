/*
 * summary.h — a finished job's NFS summary as vnfs keeps it in Slurm's
 * accounting: one line of the job's SystemComment, merged over all the
 * nodes the job ran on.
 *
 *   vnfs1 nodes=2/2 tags=PROJECT=climate read=3:3145728:1250000:0 write=8:8388608:4000000:0
 *         open=2:0:50000:0 findings=small-writes
 *
 * (one line).  "vnfs1" names the format; then space-separated KEY=VALUE:
 *   nodes=R/E      R of the job's E nodes had a report; R < E says the
 *                  numbers lack the others (missing= names the first few)
 *   tags=...       the job's tags (lib/tags.h: no space or comma in them)
 *   OP=C:B:T:E     an operation of bpf/operations.h with calls, bytes, time
 *                  in ns and errors, summed over the nodes; operations with
 *                  nothing counted are left out
 *   findings=...   the rules of the long report that fired (report_rule_names)
 * Numbers are raw and exact, so sums can be checked and sacct's output
 * read by scripts; a reader ignores keys it does not know (a newer vnfs may
 * add some).
 *
 * Why SystemComment: AdminComment is taken whole by other tools (Princeton's
 * jobstats writes "JS1:<base64>" over it), Comment belongs to the user, and
 * SystemComment may be changed by administrators only, after the job ended
 * too.  Slurm's burst-buffer plugins also write there, so vnfs replaces only
 * its own line and keeps every other (vnfs_accounting_merge_comment).
 */
#ifndef VNFS_SLURM_ACCOUNTING_SUMMARY_H
#define VNFS_SLURM_ACCOUNTING_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/job_report/findings.h"
#include "lib/job_report/rows.h"
#include "lib/record.h"
#include "lib/tags.h"

#define VNFS_ACCOUNTING_FORMAT "vnfs1"
/* Any summary fits: every operation's four 20-digit numbers, every tag. */
#define VNFS_ACCOUNTING_LINE_MAX 8192
/* The most findings kept, in the long report's order. */
#define VNFS_ACCOUNTING_MAX_FINDINGS 4
/* The missing nodes named (nodes=R/E counts them all). */
#define VNFS_ACCOUNTING_MISSING_MAX 256

struct vnfs_accounting_operation {
	uint64_t count;
	uint64_t bytes;
	uint64_t time_ns;
	uint64_t errors;
};

/* Nothing counted: left out of the line (and of vnfs-report's JSON). */
static inline bool vnfs_accounting_operation_empty(const struct vnfs_accounting_operation *o)
{
	return o->count == 0 && o->bytes == 0 && o->time_ns == 0 && o->errors == 0;
}

struct vnfs_accounting_summary {
	uint32_t nodes_reported;
	uint32_t nodes_expected;
	char missing[VNFS_ACCOUNTING_MISSING_MAX]; /* "node3,node7" */
	struct vnfs_tag_list tags;
	struct vnfs_accounting_operation operations[VNFS_OP_COUNT];
	size_t finding_count;
	enum report_rule findings[VNFS_ACCOUNTING_MAX_FINDINGS];
};

/*
 * The summary of a job row (its sums over the nodes that reported) and its
 * findings; expected are the job's nodes (from Slurm), of which those with
 * no record in the row are the missing ones.
 */
void vnfs_accounting_summarize(const struct report_row *job, const struct report_finding *findings,
			       size_t finding_count, const char *const *expected,
			       size_t expected_count, struct vnfs_accounting_summary *summary);

/* The summary's line, without '\n'.  Returns 0, or -1 when size is too small. */
int vnfs_accounting_format(const struct vnfs_accounting_summary *summary, char *line, size_t size);

/*
 * Finds the vnfs line in a SystemComment (any number of lines, other tools'
 * among them; length bytes, not NUL-terminated) and reads it.  Returns 1
 * when read, 0 when the comment has no vnfs line, -1 with a message in error
 * when it has one that does not read (error is safe to print).
 */
int vnfs_accounting_parse(const char *comment, size_t length,
			  struct vnfs_accounting_summary *summary, char *error, size_t error_size);

/*
 * The SystemComment with line as its vnfs line: every line of existing that
 * is not vnfs's kept as it was, in order, and line last.  existing may be
 * NULL or "".  Returns 0, or -1 when size is too small.
 */
int vnfs_accounting_merge_comment(const char *existing, const char *line, char *out, size_t size);

/*
 * A job row for vnfs-report's fields, from a summary and what sacct says of
 * the job: the operations' sums (no latency histogram, process or mount is
 * kept in the accounting), the tags, and the given identity and times.
 */
void vnfs_accounting_row(const struct vnfs_accounting_summary *summary,
			 const struct vnfs_workload *job, const char *user, uint32_t uid,
			 const char *nodes, int64_t start_time_ms, int64_t end_time_ms,
			 struct report_row *row);

#endif /* VNFS_SLURM_ACCOUNTING_SUMMARY_H */
