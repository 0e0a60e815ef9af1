/*
 * report_files.h — the files the helper leaves for a finished job, one pair
 * per node: report_dir/<job>/<node>.json (vnfs_job_to_json, which
 * vnfs-report merges across nodes) and <node>.txt (the long report).
 */
#ifndef VNFS_REPORT_FILES_H
#define VNFS_REPORT_FILES_H

#include <stddef.h>

#include "lib/record.h"

/*
 * Writes both files atomically (temporary file, then rename), creating
 * report_dir and report_dir/<job> (0755) as needed; files are 0644.  When run
 * as root, the job directory and files are given to the job's owner so the
 * user can read and remove them.  Returns 0, or -1 with a message in error.
 */
int vnfs_report_write_files(const struct vnfs_job *job, const char *report_dir, char *error,
			    size_t error_size);

#endif /* VNFS_REPORT_FILES_H */
