/*
 * reader.h — reading the SQLite history (lib/history/schema.h) back into
 * step records: the inverse of helper/outputs/sink_sqlite.c, for vnfs-report and for
 * the helper's answers from the history (QUERY of a finished job, HISTORY).
 * A database of another schema version is refused with a message naming
 * both versions, never misread.
 */
#ifndef VNFS_HISTORY_READER_H
#define VNFS_HISTORY_READER_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/job_report/filter.h"
#include "lib/job_report/findings.h"
#include "lib/job_report/rows.h"

/*
 * The SQLite history at path, one job at a time, so that listings of any
 * size hold one job in memory: open (ready on the first job matching filter,
 * in vnfs_workload_compare's order, every source's; -1 with a message in
 * error when the database is missing, unreadable or of an unknown schema),
 * look at the next job (next: its workload, part ""), read all that job's
 * steps (every node) into set, close.  read_job returns 1 when it read a
 * job, 0 at the end, -1 with a message in error.  A version-1 history holds
 * only Slurm's jobs; a history before version 3 holds no RPCs (its records
 * have no wire rows).
 */
struct report_database;
int report_database_open(struct report_database **database, const char *path,
			 const struct report_filter *filter, char *error, size_t error_size);
bool report_database_next(const struct report_database *database, struct vnfs_workload *job);
int report_database_read_job(struct report_database *database, struct report_set *set,
			     char *error, size_t error_size);
void report_database_close(struct report_database *database);

/*
 * Fills baseline from the history at path: for each operation, the median
 * p99 over the steps of the last REPORT_BASELINE_WINDOW_MS before now_ms on
 * the given nodes ("a,b"), leaving out the job of exclude_job (its part
 * ignored; NULL leaves out none).  Returns 0, or -1.
 */
int report_load_baseline(const char *path, const char *nodes,
			 const struct vnfs_workload *exclude_job, int64_t now_ms,
			 struct report_baseline *baseline, char *error, size_t error_size);

/* The same from an open history (report_database_open): its connection,
 * and its query prepared once for every job asked about (a PostgreSQL
 * history would otherwise be connected to again for each). */
int report_database_baseline(struct report_database *database, const char *nodes,
			     const struct vnfs_workload *exclude_job, int64_t now_ms,
			     struct report_baseline *baseline, char *error, size_t error_size);

#endif /* VNFS_HISTORY_READER_H */
