/*
 * sources.h — where vnfs-report's step records come from: the local SQLite
 * history (finished jobs, and running ones as last written), the helper's
 * socket (running jobs, live), and the report files every node writes into
 * report_dir/<job>/ (a job's other nodes).  Each source adds what it has to a
 * report_set; the set keeps the latest sample of each job, step and node.
 */
#ifndef VNFS_REPORT_SOURCES_H
#define VNFS_REPORT_SOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/findings.h"
#include "report/jobs.h"

#define REPORT_MAX_SELECTED_JOBS 1024

struct report_selection {
	uint32_t job_id;
	bool has_step;
	uint32_t step_id;
};

/* What the user asked for; every source and the final rows obey it. */
struct report_filter {
	size_t job_count;            /* -j: 0 = any job */
	struct report_selection jobs[REPORT_MAX_SELECTED_JOBS];
	bool has_uid;                /* -u, or not root: only this owner */
	uint32_t uid;
	char user_name[33];          /* -u NAME unknown to this node: match the name */
	bool has_start;              /* -S: jobs still running at or after */
	int64_t start_ms;
	bool has_end;                /* -E: jobs started at or before */
	int64_t end_ms;
};

/*
 * Parses "42,43.0,44.batch" into filter->jobs.  Returns 0, or -1 with a
 * message in error.
 */
int report_parse_jobs(const char *text, struct report_filter *filter, char *error,
		      size_t error_size);

/* Whether a job row (not a step row) passes the owner and time filters. */
bool report_filter_job(const struct report_filter *filter, const struct report_row *job);

/* Whether a row is selected by -j (a job row for "42", a step row for "42.0"). */
bool report_filter_selects(const struct report_filter *filter, const struct report_row *row);

/*
 * The SQLite history at path, one job at a time, so that listings of any
 * size hold one job in memory: open (ready on the first job matching filter,
 * in job order; -1 with a message in error when the database is missing,
 * unreadable or of an unknown schema), peek at the next job's id, read all
 * that job's steps (every node) into set, close.  read_job returns 1 when it
 * read a job, 0 at the end, -1 with a message in error.
 */
struct report_database;
int report_database_open(struct report_database **database, const char *path,
			 const struct report_filter *filter, char *error, size_t error_size);
bool report_database_peek(const struct report_database *database, uint32_t *job_id);
int report_database_read_job(struct report_database *database, struct report_set *set,
			     char *error, size_t error_size);
void report_database_close(struct report_database *database);

/*
 * The helper's answer to a QUERY for a job no longer running: the job as this
 * node's history at path holds it, in the JSON of vnfs_job_to_json, with its
 * owner in *owner_uid (the socket server shows it to that user and root
 * only).  NULL with a message when the history has no such job.
 */
struct json_object *report_history_job(const char *path, uint32_t job_id, uint32_t *owner_uid,
				       char *error, size_t error_size);

/*
 * The helper's answer to a HISTORY request: the jobs of the history at path
 * that filter selects (its owner and time range), in job order, as an array
 * of vnfs_job_to_json objects holding at most max_steps steps in all;
 * *truncated tells that more jobs matched.  NULL with a message when the
 * history cannot be read.
 */
struct json_object *report_history_jobs(const char *path, const struct report_filter *filter,
					size_t max_steps, bool *truncated, char *error,
					size_t error_size);

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
 * Adds job_id as the helper at socket_path answers a QUERY for it (live, or
 * from its history once finished): how a user, who may not read the history
 * file, reads their finished jobs.  Returns 1 when added, 0 when the helper
 * has nothing the caller may see or cannot be asked, -1 with a message when
 * its reply does not read (lib/reply.h).
 */
int report_load_queried_job(struct report_set *set, const char *socket_path, uint32_t job_id,
			    int timeout_ms, char *error, size_t error_size);

/*
 * Fills baseline from the history at path: for each operation, the median
 * p99 over the steps of the last REPORT_BASELINE_WINDOW_MS before now_ms on
 * the given nodes ("a,b"), leaving out job exclude_job.  Returns 0, or -1.
 */
int report_load_baseline(const char *path, const char *nodes, uint32_t exclude_job,
			 int64_t now_ms, struct report_baseline *baseline, char *error,
			 size_t error_size);

/*
 * Adds the running jobs the helper at socket_path holds (the selected ones,
 * or all it lets the caller see).  Returns 0, or -1 with a message in error
 * when the helper could not be asked.
 */
int report_load_live(struct report_set *set, const char *socket_path,
		     const struct report_filter *filter, int timeout_ms, char *error,
		     size_t error_size);

/*
 * Adds every report_dir/<job_id>/<node>.json.  A missing directory is no
 * error.  The directory may hold anything (see sources.c): an entry that is
 * not a regular file, is over the bounds of report_files.h (bytes, JSON
 * objects, values; all the directory's files together get one file's
 * worth), cannot be parsed, or holds records of another job or (unless root
 * owns the file) of another user than the file's owner is skipped, and so
 * is the directory itself when it is a symlink.  Files the caller may not read (another
 * user's, mode 0640) are skipped silently.  Returns 0, or -1 after reading
 * all the others, with one message per skipped file in error ("; " between
 * them, as many as fit).
 */
int report_load_files(struct report_set *set, const char *report_dir, uint32_t job_id,
		      char *error, size_t error_size);

/*
 * Reads the steps of one report file (vnfs_job_to_json), the entry name of
 * the job directory open as dir_fd (directory: its path, for messages),
 * into set, under the rules above: all of its records or none.  Returns 0
 * when they were added, 1 when the caller may not read the file, -1 with a
 * message in error when it was skipped.
 */
int report_load_job_file(struct report_set *set, int dir_fd, const char *directory,
			 const char *name, uint32_t job_id, char *error, size_t error_size);

#endif /* VNFS_REPORT_SOURCES_H */
