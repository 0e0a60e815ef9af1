/*
 * filter.c — parsing -j's job list and applying the filter to rows (see
 * filter.h).
 */
#include "lib/job_report/filter.h"

#include <stdio.h>
#include <string.h>

/* "42", "42.0", "42.batch" into a Slurm selection.  Returns 0, or -1. */
static int parse_slurm(char *item, struct report_selection *selection, char *error,
		       size_t error_size)
{
	uint32_t job_id, step_id;
	char *dot = strchr(item, '.');
	if (dot != NULL)
		*dot = '\0';
	if (vnfs_step_parse(item, &job_id) < 0 || item[0] < '0' || item[0] > '9') {
		snprintf(error, error_size,
			 "invalid job '%.40s': use a job id, or job.step (e.g. 42, 42.0, "
			 "42.batch)", item);
		return -1;
	}
	if (dot == NULL) {
		vnfs_workload_of_slurm_job(&selection->workload, job_id);
	} else {
		if (vnfs_step_parse(dot + 1, &step_id) < 0) {
			snprintf(error, error_size,
				 "invalid step '%.40s' of job %u: use a number, batch, extern "
				 "or interactive", dot + 1, job_id);
			return -1;
		}
		vnfs_workload_of_slurm_step(&selection->workload, job_id, step_id);
	}
	return 0;
}

/* "SOURCE:JOB" into a selection of that source's whole job.  Returns 0, or -1. */
static int parse_sourced(char *item, char *colon, struct report_selection *selection,
			 char *error, size_t error_size)
{
	enum vnfs_workload_source source;
	char message[256];
	*colon = '\0';
	if (vnfs_workload_source_parse(item, &source) < 0) {
		snprintf(error, error_size, "invalid job '%.40s:%.40s': no workload source '%.40s' "
			 "(known: %s)", item, colon + 1, item, VNFS_WORKLOAD_SOURCE_NAME_LIST);
		return -1;
	}
	if (source == VNFS_SOURCE_SLURM)
		return parse_slurm(colon + 1, selection, error, error_size);
	if (vnfs_workload_set(&selection->workload, source, colon + 1, "", message,
			      sizeof(message)) < 0) {
		snprintf(error, error_size, "invalid job '%.40s:%.40s': %s", item, colon + 1,
			 message);
		return -1;
	}
	return 0;
}

int report_parse_jobs(const char *text, struct report_filter *filter, char *error,
		      size_t error_size)
{
	char copy[8192];
	if (snprintf(copy, sizeof(copy), "%s", text) >= (int)sizeof(copy)) {
		snprintf(error, error_size, "job list too long");
		return -1;
	}
	char *save = NULL;
	for (char *item = strtok_r(copy, ",", &save); item != NULL;
	     item = strtok_r(NULL, ",", &save)) {
		struct report_selection selection = { 0 };
		char *colon = strchr(item, ':');
		if ((colon != NULL ? parse_sourced(item, colon, &selection, error, error_size)
				   : parse_slurm(item, &selection, error, error_size)) < 0)
			return -1;
		if (filter->job_count == REPORT_MAX_SELECTED_JOBS) {
			snprintf(error, error_size, "more than %d jobs selected",
				 REPORT_MAX_SELECTED_JOBS);
			return -1;
		}
		filter->jobs[filter->job_count++] = selection;
	}
	if (filter->job_count == 0) {
		snprintf(error, error_size, "empty job list");
		return -1;
	}
	return 0;
}

bool report_filter_job(const struct report_filter *filter, const struct report_row *job)
{
	if (filter->has_uid && job->uid != filter->uid)
		return false;
	if (filter->user_name[0] != '\0' && strcmp(job->user, filter->user_name) != 0)
		return false;
	if (filter->has_end && job->start_time_ms > filter->end_ms)
		return false;
	if (filter->has_start && !job->running && job->end_time_ms < filter->start_ms)
		return false;
	return true;
}

bool report_filter_selects(const struct report_filter *filter, const struct report_row *row)
{
	if (filter->job_count == 0)
		return true;
	for (size_t i = 0; i < filter->job_count; i++) {
		const struct vnfs_workload *selected = &filter->jobs[i].workload;
		if (!vnfs_workload_same_job(selected, &row->workload))
			continue;
		/* "42" is the job and its steps; "42.0" only that step, like sacct. */
		if (selected->part[0] == '\0' ||
		    (row->is_step && strcmp(row->workload.part, selected->part) == 0))
			return true;
	}
	return false;
}
