/*
 * rows.h — what vnfs-report reports on: step records gathered from every
 * source (the helper's socket, SQLite, report files of other nodes), reduced
 * to one sample per job, step and node, and summed into rows: one per job
 * and one per step, each over all the nodes it ran on.
 */
#ifndef VNFS_JOB_REPORT_ROWS_H
#define VNFS_JOB_REPORT_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/record.h"

/* Step records; each owns its stats, processes, mounts and wire rows (malloc'd). */
struct report_set {
	struct vnfs_step_record *records;
	size_t count;
	size_t capacity;
};

void report_set_init(struct report_set *set);
void report_set_free(struct report_set *set);

/*
 * A record whose workload was never set (its job is "") is taken for
 * Slurm's job_id.step_id: producers that know only Slurm's numbers need not
 * learn the identity.  Rows are then keyed by the workload alone.
 */

/* Adds a deep copy of record.  Returns 0, or -1 when out of memory. */
int report_set_add(struct report_set *set, const struct vnfs_step_record *record);

/* Adds record and takes over its arrays (as vnfs_step_record_from_json
 * filled them); record is left empty.  Returns 0, or -1 (arrays freed). */
int report_set_take(struct report_set *set, struct vnfs_step_record *record);

/* One output row: a whole job, or one of its steps, over all its nodes. */
struct report_row {
	struct vnfs_workload workload; /* a job row's part is "", a step row's its own */
	bool is_step;
	uint32_t uid;
	char user[33];
	char nodes[512];             /* "node1,node2", sorted */
	struct vnfs_tag_list tags;   /* union over the records, first value wins */
	int64_t start_time_ms;       /* earliest */
	int64_t end_time_ms;         /* latest; 0 while running */
	int64_t sample_time_ms;      /* latest */
	bool running;                /* some record is not finished */
	struct vnfs_step_stats stats;
	size_t process_count;
	struct vnfs_process_record *processes; /* merged by name, most bytes first */
	size_t mount_count;
	struct vnfs_mount_record *mounts;      /* merged by source and mount point */
	size_t wire_count;                     /* 0 in records older than RPC counting */
	struct vnfs_wire_record *wire;         /* merged by mount point, version and
						* procedure; by mount point, most RPCs first */
	size_t record_count;         /* the set's records this row sums */
	const struct vnfs_step_record **records;
};

/*
 * Sorts the set (dropping all but the latest sample of each workload and
 * node) and builds rows in vnfs_workload_compare's order: each job, then its
 * parts (a Slurm job's steps: batch, extern, interactive, then by number).
 * Jobs of different sources never share a row, whatever their text.
 * Returns 0, or -1 when out of memory.
 */
int report_build_rows(struct report_set *set, struct report_row **rows, size_t *count);
void report_rows_free(struct report_row *rows, size_t count);

/*
 * A workload as reports name it: Slurm's bare, "42" or "42.batch" (as sacct
 * does), another source's with its name before a colon, "SOURCE:JOB" or
 * "SOURCE:JOB.PART" (what -j reads back, lib/job_report/filter.h).  Into
 * buf (REPORT_ID_MAX bytes hold any), returns buf.
 */
#define REPORT_ID_MAX (VNFS_WORKLOAD_JOB_MAX + VNFS_WORKLOAD_PART_MAX + 32)
const char *report_workload_id(const struct vnfs_workload *workload, char *buf, size_t size);

/* The row's workload as above: its job's for a job row. */
const char *report_row_id(const struct report_row *row, char *buf, size_t size);

/* Sums over the operations of a class, from bpf/operations.h. */
uint64_t report_metadata_ops(const struct vnfs_step_stats *stats);
uint64_t report_metadata_time_ns(const struct vnfs_step_stats *stats);
uint64_t report_total_time_ns(const struct vnfs_step_stats *stats);
uint64_t report_total_ops(const struct vnfs_step_stats *stats);
uint64_t report_total_errors(const struct vnfs_step_stats *stats);

/* Whether an operation's latency quantiles can be told: a call counted with
 * its histogram empty comes from a summary that keeps none (Slurm's
 * accounting); none counted is a quantile of 0, as ever. */
bool report_latency_known(const struct vnfs_operation_stats *stats);
/* The same for the metadata operations together. */
bool report_metadata_latency_known(const struct vnfs_step_stats *stats);

/* The q-quantile of the merged latency histograms of the metadata operations. */
uint64_t report_metadata_quantile(const struct vnfs_step_stats *stats, double q);

#endif /* VNFS_JOB_REPORT_ROWS_H */
