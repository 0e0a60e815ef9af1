/*
 * accounting.h — Slurm's accounting as vnfs-report's last source: the
 * summary vnfs-accounting left in a finished job's SystemComment
 * (lib/slurm_accounting/summary.h), for a Slurm job named with -j that no
 * other source has, as on a login node with no helper and no history.
 * Slurm decides what the caller may see (sacct's PrivateData).
 */
#ifndef VNFS_REPORT_ACCOUNTING_H
#define VNFS_REPORT_ACCOUNTING_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include "lib/job_report/rows.h"
#include "lib/slurm_accounting/summary.h"
#include "lib/workload.h"

/* A job as Slurm's accounting has it. */
struct report_accounting_job {
	struct report_row row;       /* the job row (no steps) */
	struct vnfs_accounting_summary summary;
};

/*
 * Asks sacct (an absolute path) for job.  Returns 1 with *found filled, 0
 * when the accounting has no such job or no vnfs summary of it, -1 with a
 * message in error.
 */
int report_load_accounting_job(const char *sacct, const struct vnfs_workload *job,
			       struct report_accounting_job *found, char *error,
			       size_t error_size);

/* "2 of 3 nodes reported (missing: node3)", or "" when all did. */
const char *report_accounting_partial(const struct vnfs_accounting_summary *summary, char *out,
				      size_t size);

/* The long report (-l) of such a job: its operations, the findings of the
 * job's end (judged on the processes, mounts and RPCs the accounting does
 * not keep), and how many of its nodes reported. */
void report_print_accounting_long(FILE *out, const struct report_accounting_job *job,
				  int64_t now_ms);

/* The job for --json: its identity, times, sums per operation, nodes and
 * findings, with "source": "slurm_accounting".  NULL when out of memory. */
struct json_object *report_accounting_json(const struct report_accounting_job *job);

#endif /* VNFS_REPORT_ACCOUNTING_H */
