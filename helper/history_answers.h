/*
 * history_answers.h — the helper's answers from its SQLite history, for the
 * users who may not read the history file themselves (docs/SECURITY.md):
 * a QUERY of a job no longer running here, and HISTORY.  Each call opens a
 * read-only connection of its own (lib/history/reader.h), so it runs on the
 * socket server's readers' thread without touching the SQLite sink's.
 */
#ifndef VNFS_HISTORY_ANSWERS_H
#define VNFS_HISTORY_ANSWERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/job_report/filter.h"

struct json_object;

/*
 * The helper's answer to a QUERY for a job no longer running: the job as this
 * node's history at path holds it, in the JSON of vnfs_job_to_json, with its
 * owner in *owner_uid (the socket server shows it to that user and root
 * only).  NULL with a message when the history has no such job.
 */
struct json_object *vnfs_history_answer_job(const char *path, uint32_t job_id, uint32_t *owner_uid,
				       char *error, size_t error_size);

/*
 * The helper's answer to a HISTORY request: the jobs of the history at path
 * that filter selects (its owner and time range), in job order, as an array
 * of vnfs_job_to_json objects holding at most max_steps steps in all;
 * *truncated tells that more jobs matched.  NULL with a message when the
 * history cannot be read.
 */
struct json_object *vnfs_history_answer_jobs(const char *path, const struct report_filter *filter,
					size_t max_steps, bool *truncated, char *error,
					size_t error_size);

#endif /* VNFS_HISTORY_ANSWERS_H */
