/*
 * history_answers.c — jobs read from the history, as the replies carry them
 * (see history_answers.h).
 */
#include "helper/control/history_answers.h"

#include <stdio.h>
#include <stdlib.h>

#include "lib/history/reader.h"

/* The job of set's steps (one job, this node's), copied into *job. */
static int own_job_of_set(const struct report_set *set, struct vnfs_owned_job *job)
{
	struct vnfs_job view;

	vnfs_job_of_steps(&view, &set->records[0].workload, set->records[0].node, set->records,
			  set->count);
	return vnfs_owned_job_copy(job, &view);
}

int vnfs_history_answer_job(const char *path, const struct vnfs_workload *workload,
			    struct vnfs_owned_job *job, char *error, size_t error_size)
{
	char name[VNFS_WORKLOAD_DESCRIPTION_MAX];
	struct report_filter *filter = calloc(1, sizeof(*filter));
	struct report_database *database = NULL;
	struct report_set set;
	int result = -1;

	report_set_init(&set);
	if (filter == NULL) {
		snprintf(error, error_size, "out of memory");
		return -1;
	}
	filter->job_count = 1;
	filter->jobs[0].workload = *workload;
	filter->jobs[0].workload.part[0] = '\0';
	if (report_database_open(&database, path, filter, error, error_size) == 0 &&
	    report_database_read_job(database, &set, error, error_size) == 1 && set.count > 0) {
		result = own_job_of_set(&set, job);
		if (result < 0)
			snprintf(error, error_size, "out of memory");
	} else if (database != NULL) {
		snprintf(error, error_size, "%s is not in the history",
			 vnfs_workload_describe(workload, name, sizeof(name)));
	}
	report_database_close(database);
	report_set_free(&set);
	free(filter);
	return result;
}

static void free_jobs(struct vnfs_owned_job *jobs, size_t count)
{
	for (size_t i = 0; i < count; i++)
		vnfs_owned_job_free(&jobs[i]);
	free(jobs);
}

/* Appends the job of set to *jobs.  Returns 0, or -1 (out of memory). */
static int add_job(struct vnfs_owned_job **jobs, size_t *count, const struct report_set *set)
{
	struct vnfs_owned_job *grown = realloc(*jobs, (*count + 1) * sizeof(*grown));

	if (grown == NULL)
		return -1;
	*jobs = grown;
	if (own_job_of_set(set, &grown[*count]) < 0)
		return -1;
	(*count)++;
	return 0;
}

int vnfs_history_answer_jobs(const char *path, const struct report_filter *filter,
			     size_t max_steps, struct vnfs_owned_job **jobs, size_t *count,
			     bool *truncated, char *error, size_t error_size)
{
	struct report_database *database = NULL;
	size_t steps = 0;
	struct vnfs_workload next;
	int status = 0;

	*jobs = NULL;
	*count = 0;
	*truncated = false;
	if (report_database_open(&database, path, filter, error, error_size) < 0)
		return -1;
	while (status == 0 && !*truncated && report_database_next(database, &next)) {
		struct report_set set;
		int read;

		report_set_init(&set);
		read = report_database_read_job(database, &set, error, error_size);
		if (read < 0) {
			status = -1;
		} else if (read > 0 && set.count > 0 && steps + set.count > max_steps) {
			*truncated = true;
		} else if (read > 0 && set.count > 0 && add_job(jobs, count, &set) < 0) {
			snprintf(error, error_size, "out of memory");
			status = -1;
		} else if (read > 0) {
			steps += set.count;
		}
		report_set_free(&set);
		if (read == 0)
			break;
	}
	report_database_close(database);
	if (status < 0) {
		free_jobs(*jobs, *count);
		*jobs = NULL;
		*count = 0;
	}
	return status;
}
