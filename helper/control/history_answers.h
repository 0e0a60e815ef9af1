/*
 * history_answers.h — the helper's answers from its SQLite history, for the
 * users who may not read the history file themselves (docs/SECURITY.md):
 * a QUERY of a job no longer running here, and HISTORY.  Each call opens a
 * read-only connection of its own (lib/history/reader.h), so it runs on the
 * socket server's readers' thread without touching the SQLite sink's.  The
 * jobs come as the typed replies carry them (lib/reply.h).
 */
#ifndef VNFS_HISTORY_ANSWERS_H
#define VNFS_HISTORY_ANSWERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/job_report/filter.h"
#include "lib/record_json.h"

/*
 * A QUERY for a job no longer running: the job of workload as this node's
 * history at path holds it, into *job (its uid is the owner the socket
 * server shows it to, with root).  Returns 0, or -1 with a message when the
 * history has no such job or cannot be read (*job then empty).
 */
int vnfs_history_answer_job(const char *path, const struct vnfs_workload *workload,
			    struct vnfs_owned_job *job, char *error, size_t error_size);

/*
 * HISTORY: the jobs of the history at path that filter selects (its owner
 * and time range), in job order, holding at most max_steps steps in all,
 * into *jobs (malloc'd, *count of them; free each with vnfs_owned_job_free,
 * then the array); *truncated tells that more jobs matched.  Returns 0, or
 * -1 with a message when the history cannot be read (nothing then kept).
 */
int vnfs_history_answer_jobs(const char *path, const struct report_filter *filter,
			     size_t max_steps, struct vnfs_owned_job **jobs, size_t *count,
			     bool *truncated, char *error, size_t error_size);

#endif /* VNFS_HISTORY_ANSWERS_H */
