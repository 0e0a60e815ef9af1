/*
 * sources.c — step records from the helper's socket (see sources.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/client.h"
#include "lib/record_json.h"
#include "report/sources.h"

/* Whether -j names job (a Slurm job: the helper's LIST has their numbers). */
static bool selected_job(const struct report_filter *filter, uint32_t job_id)
{
	struct vnfs_workload job, selected;
	if (filter->job_count == 0)
		return true;
	vnfs_workload_of_slurm_job(&job, job_id);
	for (size_t i = 0; i < filter->job_count; i++) {
		report_selection_workload(&filter->jobs[i], &selected);
		if (vnfs_workload_same_job(&selected, &job))
			return true;
	}
	return false;
}

/* Moves the steps of job (a decoded reply's) into set. */
static int take_job(struct report_set *set, struct vnfs_owned_job *job, char *error,
		    size_t error_size)
{
	for (size_t i = 0; i < job->step_count; i++) {
		if (report_set_take(set, &job->steps[i]) < 0) {
			snprintf(error, error_size, "out of memory");
			return -1;
		}
	}
	return 0;
}

/* QUERY job_id.  Returns 1 with its steps added, 0 when the helper refused
 * (the job is not there, or not the caller's) or could not be asked, -1
 * with a message in error when its reply does not read. */
static int query_job(struct report_set *set, const char *socket_path, uint32_t job_id,
		     int timeout_ms, char *error, size_t error_size)
{
	struct vnfs_request query;
	struct vnfs_reply answer;
	char message[512];
	int result;

	memset(&query, 0, sizeof(query));
	query.type = VNFS_REQUEST_QUERY;
	vnfs_workload_of_slurm_job(&query.workload, job_id);
	result = vnfs_client_call(socket_path, &query, timeout_ms, &answer, message,
				  sizeof(message));
	if (result == VNFS_CLIENT_UNREADABLE)
		snprintf(error, error_size, "%s", message);
	if (result < 0)
		return result == VNFS_CLIENT_UNREADABLE ? -1 : 0;
	result = take_job(set, &answer.job, error, error_size) < 0 ? -1 : 1;
	vnfs_reply_free(&answer);
	return result;
}

int report_load_live(struct report_set *set, const char *socket_path,
		     const struct report_filter *filter, int timeout_ms, char *error,
		     size_t error_size)
{
	struct vnfs_request request;
	memset(&request, 0, sizeof(request));
	request.type = VNFS_REQUEST_LIST;
	struct vnfs_reply reply;
	if (vnfs_client_call(socket_path, &request, timeout_ms, &reply, error, error_size) < 0)
		return -1;

	/* LIST names the steps the caller may see; QUERY each job once. */
	uint32_t done[REPORT_MAX_SELECTED_JOBS];
	size_t done_count = 0;
	int result = 0;
	for (size_t i = 0; i < reply.entry_count; i++) {
		uint32_t job_id;
		bool seen = false;
		/* MERGE: report rows by workload */
		if (vnfs_workload_slurm_job_id(&reply.entries[i].workload, &job_id) < 0)
			continue;
		for (size_t d = 0; d < done_count && !seen; d++)
			seen = done[d] == job_id;
		if (seen || !selected_job(filter, job_id) || done_count == REPORT_MAX_SELECTED_JOBS)
			continue;
		done[done_count++] = job_id;
		/* A job that ended between LIST and QUERY is simply gone. */
		if (query_job(set, socket_path, job_id, timeout_ms, error, error_size) < 0)
			result = -1;
	}
	vnfs_reply_free(&reply);
	return result;
}

/* The job JSON (vnfs_job_to_json) of the steps of one job in set (not empty). */
int report_load_history_listing(struct report_set *set, const char *socket_path,
				const struct report_filter *filter, int timeout_ms,
				bool *truncated, char *error, size_t error_size)
{
	struct vnfs_request request;
	struct vnfs_reply answer;
	int result = 0;

	*truncated = false;
	memset(&request, 0, sizeof(request));
	request.type = VNFS_REQUEST_HISTORY;
	request.has_since = filter->has_start;
	request.since_ms = filter->start_ms;
	request.has_until = filter->has_end;
	request.until_ms = filter->end_ms;
	if (vnfs_client_call(socket_path, &request, timeout_ms, &answer, error, error_size) < 0)
		return -1;
	for (size_t i = 0; result == 0 && i < answer.job_count; i++)
		result = take_job(set, &answer.jobs[i], error, error_size);
	*truncated = answer.truncated;
	vnfs_reply_free(&answer);
	return result;
}

int report_load_queried_job(struct report_set *set, const char *socket_path,
			    const struct vnfs_workload *job, int timeout_ms, char *error,
			    size_t error_size)
{
	uint32_t job_id;
	/* QUERY names a job by Slurm's number (lib/protocol.h), so far. */
	if (vnfs_workload_slurm_job_id(job, &job_id) < 0) {
		snprintf(error, error_size,
			 "the helper answers only about Slurm's jobs so far, not %s jobs",
			 vnfs_workload_source_name(job->source) != NULL
				 ? vnfs_workload_source_name(job->source)
				 : "unknown");
		return -1;
	}
	return query_job(set, socket_path, job_id, timeout_ms, error, error_size);
}
