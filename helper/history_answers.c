/*
 * history_answers.c — jobs read from the history, as the replies carry them
 * (see history_answers.h).
 */
#include "helper/history_answers.h"

#include <stdio.h>
#include <stdlib.h>

#include <json-c/json.h>

#include "lib/history/reader.h"
#include "lib/record_json.h"

static struct json_object *job_json_of_set(const struct report_set *set)
{
	struct vnfs_job job;

	vnfs_job_of_steps(&job, set->records[0].job_id, set->records[0].node, set->records,
			  set->count);
	return vnfs_job_to_json(&job);
}

struct json_object *vnfs_history_answer_job(const char *path, uint32_t job_id, uint32_t *owner_uid,
				       char *error, size_t error_size)
{
	struct report_filter *filter = calloc(1, sizeof(*filter));
	struct report_database *database = NULL;
	struct json_object *json = NULL;
	struct report_set set;

	report_set_init(&set);
	if (filter == NULL) {
		snprintf(error, error_size, "out of memory");
		return NULL;
	}
	filter->job_count = 1;
	filter->jobs[0].job_id = job_id;
	if (report_database_open(&database, path, filter, error, error_size) == 0 &&
	    report_database_read_job(database, &set, error, error_size) == 1 && set.count > 0) {
		*owner_uid = set.records[0].uid;
		json = job_json_of_set(&set);
	} else if (database != NULL) {
		snprintf(error, error_size, "job %u is not in the history", job_id);
	}
	report_database_close(database);
	report_set_free(&set);
	free(filter);
	return json;
}

struct json_object *vnfs_history_answer_jobs(const char *path, const struct report_filter *filter,
					size_t max_steps, bool *truncated, char *error,
					size_t error_size)
{
	struct report_database *database = NULL;
	struct json_object *jobs;
	size_t steps = 0;
	uint32_t next;

	*truncated = false;
	error[0] = '\0';
	if (report_database_open(&database, path, filter, error, error_size) < 0)
		return NULL;
	jobs = json_object_new_array();
	while (jobs != NULL && report_database_peek(database, &next)) {
		struct report_set set;
		int read;

		report_set_init(&set);
		read = report_database_read_job(database, &set, error, error_size);
		if (read < 0) {
			json_object_put(jobs);
			jobs = NULL;
		} else if (read > 0 && set.count > 0 && steps + set.count > max_steps) {
			*truncated = true;
		} else if (read > 0 && set.count > 0) {
			steps += set.count;
			json_object_array_add(jobs, job_json_of_set(&set));
		}
		report_set_free(&set);
		if (*truncated || read == 0)
			break;
	}
	if (jobs == NULL && error[0] == '\0')
		snprintf(error, error_size, "out of memory");
	report_database_close(database);
	return jobs;
}
