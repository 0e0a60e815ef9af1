/*
 * files.h — the files the helper leaves for a finished job, one pair
 * per node: report_dir/<job>/<node>.json (vnfs_job_to_json, which
 * vnfs-report merges across nodes) and <node>.txt (the long report).
 *
 * <job> is a Slurm job's number ("42"), and for another source
 * "SOURCE-JOB", the job's text with each '%' written "%25" and each '/'
 * "%2F" (vnfs_workload_text_valid allows both): a job's text comes from
 * users, and this way it can neither leave report_dir nor name another
 * job's directory (Slurm's names are all digits, the others start with a
 * source's name).  A job whose name would be longer than NAME_MAX has no
 * report files.
 *
 * The helper runs as root and the job's owner is not trusted (DESIGN.md,
 * decision 12), so report_dir and report_dir/<job> belong to root and no
 * user can write in them: the helper never creates, chowns or follows
 * anything in a directory a user controls.  The files themselves are given
 * to the owner (and the administrator group) by descriptor, mode 0640.
 *
 * Writing is split in two so that the helper can render under its collector
 * lock (CPU only) and do the slow, possibly stalled file I/O outside it.
 */
#ifndef VNFS_JOB_REPORT_FILES_H
#define VNFS_JOB_REPORT_FILES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/record.h"

/*
 * The largest report file vnfs-report reads, and so the largest the helper
 * writes, in bytes and in JSON values.  json-c builds every value as an
 * object of its own (a JSON object with its hash table is some 600 bytes),
 * so it is the count of values, far more than the bytes, that sets what a
 * hostile file costs the reader: 16 MiB of "{}," took 27 s and 3.7 GB.
 * Both are counted before anything is parsed (vnfs_report_json_measure).
 *
 * A step's record is about 25 JSON objects and, with the sparse histograms
 * the helper writes, 300 to 500 values: the bounds hold a job of 500 to 650
 * steps on one node (max_steps_per_job is 256 by default), while a file at
 * both bounds costs about 0.1 s of CPU and 50 MB to read (wall time on a
 * host busy with other work: up to 0.7 s).  The bytes bound only
 * stops huge strings and /dev/zero-like files.
 */
#define VNFS_REPORT_FILE_MAX_BYTES (16u * 1024 * 1024)
#define VNFS_REPORT_FILE_MAX_TEXT "16 MiB" /* the same, for messages */
#define VNFS_REPORT_FILE_MAX_OBJECTS 16384u
#define VNFS_REPORT_FILE_MAX_VALUES 262144u

/* An upper bound of the JSON objects and of all values (objects too) in a text. */
struct vnfs_report_json_size {
	size_t objects;
	size_t values;
};

/*
 * Counts text's objects ('{') and values (',' '{' '[' outside strings, plus
 * one) without parsing it: linear, no allocation, an upper bound for any
 * text json-c accepts (exact when no array or object is empty).
 */
void vnfs_report_json_measure(const char *text, size_t length, struct vnfs_report_json_size *size);

/*
 * Whether a text of length bytes and that size is within the bounds above.
 * Returns 0, or -1 with what is over (e.g. "20000 JSON objects, more than
 * 16384") in why.
 */
int vnfs_report_json_check(size_t length, const struct vnfs_report_json_size *size, char *why,
			   size_t why_size);

/* A job's two files, rendered and not yet written. */
struct vnfs_report_files {
	char *json;          /* one line, '\n'-terminated (malloc'd) */
	size_t json_length;
	char *text;          /* the long report (malloc'd) */
	size_t text_length;
};

/*
 * Renders job into files (CPU and memory only, no I/O).  Returns 0, or -1
 * with a message in error (files then holds nothing to free).
 */
int vnfs_report_render(const struct vnfs_job *job, struct vnfs_report_files *files, char *error,
		       size_t error_size);

/*
 * Writes files as report_dir/<job>/<node>.json and .txt (job: the
 * workload's job, its part ignored; see above for <job>): each to a new
 * temporary file in the job directory, mode 0640, owned (when run as root)
 * by owner_uid and admin_gid ((gid_t)-1: the group is left as created),
 * flushed to disk, then renamed into place.  Missing directories are
 * created: report_dir 0711 (users cannot list the job ids), its missing
 * parents 0755, the job directory 0755, all root's.  No level is followed
 * through a symlink; report_dir and the job directory must be owned by root
 * and writable by no group or other, the levels above them too unless
 * sticky (/tmp).  Anything else is refused with a message naming the path,
 * never repaired: a job directory an older helper gave to the job's owner
 * must be removed by hand.  Returns 0, or -1 with a message in error.
 */
int vnfs_report_store(const struct vnfs_report_files *files, const char *report_dir,
		      const struct vnfs_workload *job, uint32_t owner_uid, gid_t admin_gid,
		      const char *node, char *error, size_t error_size);

/* Frees what vnfs_report_render allocated; files is left empty. */
void vnfs_report_files_free(struct vnfs_report_files *files);

/*
 * Render and store in one call, with no administrator group: for callers
 * that hold no lock.  The job's directory is job->workload's, or Slurm's
 * job->job_id while the workload is unset (its job "").  Returns 0, or -1
 * with a message in error.
 */
int vnfs_report_write_files(const struct vnfs_job *job, const char *report_dir, char *error,
			    size_t error_size);

/* ---- reading them back (vnfs-report) ---- */

struct report_set;
struct json_object;

/*
 * Adds the steps of a job object (vnfs_job_to_json) to set, all or none;
 * origin names where it came from in a message.  Returns 0, or -1 with a
 * message in error (text of the input in it made safe for a terminal).
 */
int report_add_job_json(struct report_set *set, struct json_object *job, const char *origin,
			char *error, size_t error_size);

/*
 * Adds every report_dir/<job>/<node>.json of job's job (its part ignored).
 * A missing directory is no
 * error.  The directory may hold anything (see files.c): an entry that is
 * not a regular file, is over the bounds above (bytes, JSON
 * objects, values; all the directory's files together get one file's
 * worth), cannot be parsed, or holds records of another job or (unless root
 * owns the file) of another user than the file's owner is skipped, and so
 * is the directory itself when it is a symlink.  Files the caller may not read (another
 * user's, mode 0640) are skipped silently.  Returns 0, or -1 after reading
 * all the others, with one message per skipped file in error ("; " between
 * them, as many as fit).
 */
int report_load_files(struct report_set *set, const char *report_dir,
		      const struct vnfs_workload *job, char *error, size_t error_size);

/*
 * Adds report_dir/<job>/<node>.json of each node named (the job's nodes as
 * its scheduler lists them; a node with no file is skipped silently), under
 * the rules above, but each file with a budget of its own: vnfs-accounting
 * merges a job of many nodes whole, where vnfs-report bounds what a whole
 * directory costs it.  Returns 0, or -1 after reading the others, with one
 * message per skipped file in error.
 */
int report_load_node_files(struct report_set *set, const char *report_dir,
			   const struct vnfs_workload *job, const char *const *nodes,
			   size_t node_count, char *error, size_t error_size);

/*
 * Reads the steps of one report file (vnfs_job_to_json), the entry name of
 * the job directory open as dir_fd (directory: its path, for messages),
 * into set, under the rules above: all of its records or none.  Returns 0
 * when they were added, 1 when the caller may not read the file, -1 with a
 * message in error when it was skipped.
 */
int report_load_job_file(struct report_set *set, int dir_fd, const char *directory,
			 const char *name, const struct vnfs_workload *job, char *error,
			 size_t error_size);

#endif /* VNFS_JOB_REPORT_FILES_H */
