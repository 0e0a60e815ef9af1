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

#endif /* VNFS_JOB_REPORT_TEXT_H */
