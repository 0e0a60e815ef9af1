/*
 * filter.h — which jobs a report is about (vnfs-report's -j, -u, -S, -E; the
 * helper's HISTORY request): the one filter that every source of step
 * records (lib/history/reader.h, report files, the helper's socket) and the
 * final rows obey.
 */
#ifndef VNFS_JOB_REPORT_FILTER_H
#define VNFS_JOB_REPORT_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/job_report/rows.h"

#define REPORT_MAX_SELECTED_JOBS 1024

/* A job or one part of it, as -j names it. */
struct report_selection {
	struct vnfs_workload workload; /* part "": the whole job, its parts too */
};

/* What the user asked for; every source and the final rows obey it. */
struct report_filter {
	size_t job_count;            /* -j: 0 = any job */
	struct report_selection jobs[REPORT_MAX_SELECTED_JOBS];
	bool has_uid;                /* -u, or not root: only this owner */
	uint32_t uid;
	char user_name[33];          /* -u NAME unknown to this node: match the name */
	bool has_start;              /* -S: jobs still running at or after */
	int64_t start_ms;
	bool has_end;                /* -E: jobs started at or before */
	int64_t end_ms;
};

/*
 * Parses a comma-separated list into filter->jobs: Slurm's jobs and steps
 * as sacct names them ("42,43.0,44.batch"), and any source's job as
 * SOURCE:JOB ("slurm:42" is "42"; "slurm:42.0" a step).  Another source's
 * JOB is the whole text after the colon (its ids may hold dots), checked
 * like any workload text (vnfs_workload_set).  Returns 0, or -1 with a
 * message in error.
 */
int report_parse_jobs(const char *text, struct report_filter *filter, char *error,
		      size_t error_size);

/* Whether a job row (not a step row) passes the owner and time filters. */
bool report_filter_job(const struct report_filter *filter, const struct report_row *job);

/* Whether a row is selected by -j (a job row for "42", a step row for "42.0"): by
 * workload, never by text alone (another source's job "42" is not Slurm's). */
bool report_filter_selects(const struct report_filter *filter, const struct report_row *row);

#endif /* VNFS_JOB_REPORT_FILTER_H */
