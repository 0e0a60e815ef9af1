/*
 * sources.c — step records from the helper's socket (see sources.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "lib/job_report/files.h"
#include "lib/protocol.h"
#include "report/sources.h"

static bool selected_job(const struct report_filter *filter, uint32_t job_id)
{
	if (filter->job_count == 0)
		return true;
	for (size_t i = 0; i < filter->job_count; i++)
		if (filter->jobs[i].job_id == job_id)
			return true;
	return false;
}

int report_load_live(struct report_set *set, const char *socket_path,
		     const struct report_filter *filter, int timeout_ms, char *error,
		     size_t error_size)
{
	struct vnfs_request request;
	memset(&request, 0, sizeof(request));
	request.type = VNFS_REQUEST_LIST;
	struct json_object *reply = NULL;
	if (vnfs_client_call(socket_path, &request, timeout_ms, &reply, error, error_size) < 0)
		return -1;

	/* LIST names the steps the caller may see; QUERY each job once. */
	struct json_object *jobs;
	uint32_t done[REPORT_MAX_SELECTED_JOBS];
	size_t done_count = 0;
	int result = 0;
	if (!json_object_object_get_ex(reply, "jobs", &jobs) ||
	    !json_object_is_type(jobs, json_type_array)) {
		snprintf(error, error_size, "vnfs-helper at %s: LIST reply without \"jobs\"",
			 socket_path);
		json_object_put(reply);
		return -1;
	}
	for (size_t i = 0; i < json_object_array_length(jobs); i++) {
		struct json_object *entry = json_object_array_get_idx(jobs, i), *job_value;
		if (!json_object_object_get_ex(entry, "job", &job_value))
			continue;
		uint32_t job_id = (uint32_t)json_object_get_int64(job_value);
		bool seen = false;
		for (size_t d = 0; d < done_count && !seen; d++)
			seen = done[d] == job_id;
		if (seen || !selected_job(filter, job_id) || done_count == REPORT_MAX_SELECTED_JOBS)
			continue;
		done[done_count++] = job_id;

		struct vnfs_request query;
		memset(&query, 0, sizeof(query));
		query.type = VNFS_REQUEST_QUERY;
		query.job_id = job_id;
		struct json_object *answer = NULL, *job;
		char message[512];
		/* A job that ended between LIST and QUERY is simply gone. */
		if (vnfs_client_call(socket_path, &query, timeout_ms, &answer, message,
				     sizeof(message)) < 0)
			continue;
		if (json_object_object_get_ex(answer, "job", &job) &&
		    report_add_job_json(set, job, socket_path, error, error_size) < 0)
			result = -1;
		json_object_put(answer);
	}
	json_object_put(reply);
	return result;
}

/* The job JSON (vnfs_job_to_json) of the steps of one job in set (not empty). */
int report_load_history_listing(struct report_set *set, const char *socket_path,
				const struct report_filter *filter, int timeout_ms,
				bool *truncated, char *error, size_t error_size)
{
	struct vnfs_request request;
	struct json_object *answer = NULL, *jobs, *flag;
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
	if (!json_object_object_get_ex(answer, "jobs", &jobs) ||
	    !json_object_is_type(jobs, json_type_array)) {
		snprintf(error, error_size, "%s: a history reply without a \"jobs\" array",
			 socket_path);
		result = -1;
	}
	for (size_t i = 0; result == 0 && i < json_object_array_length(jobs); i++)
		result = report_add_job_json(set, json_object_array_get_idx(jobs, i), socket_path, error,
					error_size);
	if (json_object_object_get_ex(answer, "truncated", &flag))
		*truncated = json_object_get_boolean(flag);
	json_object_put(answer);
	return result;
}

int report_load_queried_job(struct report_set *set, const char *socket_path, uint32_t job_id,
			    int timeout_ms, char *error, size_t error_size)
{
	struct vnfs_request query;
	struct json_object *answer = NULL, *job;
	char message[512];
	int result = 0;

	memset(&query, 0, sizeof(query));
	query.type = VNFS_REQUEST_QUERY;
	query.job_id = job_id;
	if (vnfs_client_call(socket_path, &query, timeout_ms, &answer, message,
			     sizeof(message)) < 0)
		return 0; /* not running, not in the history, or not the caller's */
	if (json_object_object_get_ex(answer, "job", &job))
		result = report_add_job_json(set, job, socket_path, error, error_size) < 0 ? -1 : 1;
	json_object_put(answer);
	return result;
}
