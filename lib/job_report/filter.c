/*
 * filter.c — parsing -j's job list and applying the filter to rows (see
 * filter.h).
 */
#include "lib/job_report/filter.h"

#include <stdio.h>
#include <string.h>

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
		char *dot = strchr(item, '.');
		if (dot != NULL)
			*dot = '\0';
		if (vnfs_step_parse(item, &selection.job_id) < 0 || item[0] < '0' || item[0] > '9') {
			snprintf(error, error_size,
				 "invalid job '%.40s': use a job id, or job.step (e.g. 42, 42.0, "
				 "42.batch)", item);
			return -1;
		}
		if (dot != NULL) {
			if (vnfs_step_parse(dot + 1, &selection.step_id) < 0) {
				snprintf(error, error_size,
					 "invalid step '%.40s' of job %u: use a number, batch, extern "
					 "or interactive", dot + 1, selection.job_id);
				return -1;
			}
			selection.has_step = true;
		}
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
		const struct report_selection *s = &filter->jobs[i];
		if (s->job_id != row->job_id)
			continue;
		/* "42" is the job and its steps; "42.0" only that step, like sacct. */
		if (!s->has_step || (row->is_step && row->step_id == s->step_id))
			return true;
	}
	return false;
}
