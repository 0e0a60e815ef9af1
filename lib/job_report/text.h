/*
 * text.h — the long, human report of one job (vnfs-report -l and the
 * <node>.txt report file): totals, the per-operation table, processes,
 * mounts, the RPCs (wire) with the cache line, and findings.
 */
#ifndef VNFS_JOB_REPORT_TEXT_H
#define VNFS_JOB_REPORT_TEXT_H

#include <stdint.h>
#include <stdio.h>

#include "lib/job_report/findings.h"
#include "lib/job_report/rows.h"

/* job is a job row; steps its step rows (may be 0); baseline may be NULL. */
void report_print_long(FILE *out, const struct report_row *job, const struct report_row *steps,
		       size_t step_count, const struct report_baseline *baseline, int64_t now_ms);

/*
 * The long report of a job known only by its sums per operation (Slurm's
 * accounting, named in source): the header and the operations, quantiles
 * "-", and the findings its writer found then, by rule name, since the
 * processes, mounts and RPCs they were judged on are not kept.
 */
void report_print_long_summary(FILE *out, const struct report_row *job, const char *source,
			       const enum report_rule *findings, size_t finding_count,
			       int64_t now_ms);

#endif /* VNFS_JOB_REPORT_TEXT_H */
