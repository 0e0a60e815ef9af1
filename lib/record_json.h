/*
 * record_json.h — the JSON form of step records and job summaries: the one
 * definition shared by QUERY replies, report files, the JSON log, Kafka and
 * HTTP records, and vnfs-report, which reads them back.  docs/JSON.md shows it.
 */
#ifndef VNFS_RECORD_JSON_H
#define VNFS_RECORD_JSON_H

#include "record.h"

struct json_object;

/* New objects (caller puts them). */
struct json_object *vnfs_step_record_to_json(const struct vnfs_step_record *record);
struct json_object *vnfs_job_to_json(const struct vnfs_job *job);

/*
 * Reads back what vnfs_step_record_to_json wrote.  stats, processes and
 * mounts are malloc'd into *record (free with vnfs_step_record_free_arrays;
 * a failed read frees them itself).  Returns 0, or -1 with a message in
 * error.
 */
int vnfs_step_record_from_json(const struct json_object *object, struct vnfs_step_record *record,
			       char *error, size_t error_size);

/*
 * A job that owns its storage: its strings, its step records, and each
 * step's counters, processes and mounts.  What FINISH and QUERY replies carry
 * (lib/reply.h): the helper copies a job out of the collector's storage (so
 * the JSON is built after the collector's lock is let go), a client decodes
 * one from the reply.  vnfs_job (record.h) is the borrowed view of one.
 */
struct vnfs_owned_job {
	struct vnfs_workload workload; /* the job's, without a part */
	uint32_t job_id;
	uint32_t uid;
	char user[33];
	char node[65];
	int64_t start_time_ms;
	int64_t end_time_ms;
	size_t step_count;
	struct vnfs_step_record *steps; /* step_count, each with malloc'd arrays */
};

/* The borrowed view of owned (valid while owned is). */
void vnfs_owned_job_view(const struct vnfs_owned_job *owned, struct vnfs_job *view);

/* A deep copy of job into *owned.  Returns 0, or -1 (out of memory: *owned
 * is then empty). */
int vnfs_owned_job_copy(struct vnfs_owned_job *owned, const struct vnfs_job *job);

/*
 * Reads back what vnfs_job_to_json wrote, as strictly as a step record: every
 * field present and of its type, none unknown; the job's totals, processes
 * and mounts (derived from the steps) are checked but not kept.  Returns 0,
 * or -1 with a message in error (*owned is then empty).
 */
int vnfs_job_from_json(const struct json_object *object, struct vnfs_owned_job *owned,
		       char *error, size_t error_size);

/* Frees what owned holds and empties it; an empty one is fine. */
void vnfs_owned_job_free(struct vnfs_owned_job *owned);

#endif /* VNFS_RECORD_JSON_H */
