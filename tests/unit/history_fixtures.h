/*
 * history_fixtures.h — synthetic step records with known numbers, shared by
 * the record JSON, SQLite sink and vnfs-report tests and the benchmark.
 */
#ifndef VNFS_HISTORY_FIXTURES_H
#define VNFS_HISTORY_FIXTURES_H

#include "lib/record.h"

/* A step record and the arrays it points into. */
struct history_step {
	struct vnfs_step_record record;
	struct vnfs_step_stats stats;   /* record.stats points here */
	struct vnfs_tag_list tags;      /* and record.tags here */
	struct vnfs_process_record processes[2];
	struct vnfs_mount_record mounts[1];
};

/*
 * A step that did, times scale: read 10 x 1 MiB (latency bucket 20), write
 * 5 x 1 MiB (bucket 21), getattr 20 (bucket 14), open 2 (bucket 16), close 2
 * (bucket 12); processes "python3" (the reads) and "dd" (the writes); one
 * NFSv4.2 mount with rsize = wsize = 1 MiB; tag PROJECT_NAME=alpha.  Each call
 * takes 1.5 x 2^bucket ns.  start_ms is the registration time; the step ran
 * 60 s and is not finished.
 */
void history_step_init(struct history_step *step, uint32_t job_id, uint32_t step_id,
		       uint32_t uid, const char *user, const char *node, int64_t start_ms,
		       uint64_t scale);

/* Replaces one operation: count calls, all in latency bucket, each moving
 * bytes_each bytes, errors of them failed. */
void history_set_operation(struct history_step *step, enum vnfs_operation operation,
			   uint64_t count, uint64_t errors, uint64_t bytes_each, int bucket);

/* Marks the step ended at end_ms. */
void history_step_finish(struct history_step *step, int64_t end_ms);

#endif /* VNFS_HISTORY_FIXTURES_H */
