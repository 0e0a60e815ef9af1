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
void vnfs_step_record_free_arrays(struct vnfs_step_record *record);

#endif /* VNFS_RECORD_JSON_H */
