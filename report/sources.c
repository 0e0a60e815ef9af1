/*
 * sources.c — step records from the helper's socket (see sources.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/client.h"
#include "lib/record_json.h"
#include "report/sources.h"

/* Whether -j names job's job (or names none). */
static bool selected_job(const struct report_filter *filter, const struct vnfs_workload *job)
{
	if (filter->job_count == 0)
		return true;
	for (size_t i = 0; i < filter->job_count; i++) {
		if (vnfs_workload_same_job(&filter->jobs[i].workload, job))
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

int report_load_queried_job(struct report_set *set, const char *socket_path,
			    const struct vnfs_workload *job, int timeout_ms, char *error,
			    size_t error_size)
{
	struct vnfs_request query;
	struct vnfs_reply answer;
	char message[512];
	int result;

	memset(&query, 0, sizeof(query));
	query.type = VNFS_REQUEST_QUERY;
	query.workload = *job;
	query.workload.part[0] = '\0';
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
	int called = vnfs_client_call(socket_path, &request, timeout_ms, &reply, error, error_size);
	if (called < 0)
		return called == VNFS_CLIENT_NOT_RUNNING ? REPORT_HELPER_NOT_RUNNING : -1;

	/* LIST names the steps the caller may see; QUERY each job once. */
	struct vnfs_workload *done = calloc(REPORT_MAX_SELECTED_JOBS, sizeof(*done));
	size_t done_count = 0;
	int result = 0;
	if (done == NULL) {
		vnfs_reply_free(&reply);
		snprintf(error, error_size, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < reply.entry_count; i++) {
		const struct vnfs_workload *job = &reply.entries[i].workload;
		bool seen = false;
		for (size_t d = 0; d < done_count && !seen; d++)
			seen = vnfs_workload_same_job(&done[d], job);
		if (seen || !selected_job(filter, job) || done_count == REPORT_MAX_SELECTED_JOBS)
			continue;
		done[done_count++] = *job;
		/* A job that ended between LIST and QUERY is simply gone. */
		if (report_load_queried_job(set, socket_path, job, timeout_ms, error, error_size) < 0)
			result = -1;
	}
	free(done);
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
