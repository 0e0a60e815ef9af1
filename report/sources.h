/*
 * sources.h — the helper's socket as a source of vnfs-report's step records:
 * running jobs, live, and the finished jobs the helper reads from its
 * history for users who may not read it.  The other sources are lib/'s: the
 * local SQLite history (lib/history/reader.h) and the report files every
 * node writes into report_dir/<job>/ (lib/job_report/files.h).  Each source
 * adds what it has to a report_set (lib/job_report/rows.h), which keeps the
 * latest sample of each job, step and node.
 */
#ifndef VNFS_REPORT_SOURCES_H
#define VNFS_REPORT_SOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/job_report/filter.h"
#include "lib/job_report/rows.h"

/*
 * Adds the finished jobs in filter's time range as the helper at socket_path
 * answers a HISTORY request: the caller's own (SO_PEERCRED), from the history
 * the caller may not read.  *truncated: the helper had more than one reply
 * holds.  Returns 0, or -1 with a message.
 */
int report_load_history_listing(struct report_set *set, const char *socket_path,
				const struct report_filter *filter, int timeout_ms,
				bool *truncated, char *error, size_t error_size);

/*
 * Adds job (its part ignored) as the helper at socket_path answers a QUERY
 * for it (live, or from its history once finished): how a user, who may
 * not read the history file, reads their finished jobs.
 * Returns 1 when added, 0 when the helper has nothing the caller may see or
 * cannot be asked, -1 with a message when its reply does not read
 * (lib/reply.h).
 */
int report_load_queried_job(struct report_set *set, const char *socket_path,
			    const struct vnfs_workload *job, int timeout_ms, char *error,
			    size_t error_size);

/* report_load_live: nothing listens at the socket (lib/client.h's
 * VNFS_CLIENT_NOT_RUNNING): the helper is not running. */
#define REPORT_HELPER_NOT_RUNNING (-2)

/*
 * Adds the running jobs the helper at socket_path holds (the selected ones,
 * or all it lets the caller see).  Returns 0; REPORT_HELPER_NOT_RUNNING; or
 * -1 when the helper could not be asked otherwise or a reply did not read.
 * Both failures leave a message in error.
 */
int report_load_live(struct report_set *set, const char *socket_path,
		     const struct report_filter *filter, int timeout_ms, char *error,
		     size_t error_size);

#endif /* VNFS_REPORT_SOURCES_H */
