/*
 * step_report.h — the step summary srun prints on the user's terminal with
 * --vnfs-report, formatted from the helper's QUERY reply.  Pure: the reply
 * is decoded by lib/reply.c, the same decoder vnfs-report uses.
 */
#ifndef VNFS_STEP_REPORT_H
#define VNFS_STEP_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "lib/record.h"
#include "spank/plugin_args.h"

/*
 * Formats step step_id of job (the QUERY reply's) as one line (brief) or a
 * per-operation table (full) into out.  Returns 0, or -1 with a message in
 * error when the job does not hold the step or it has no counters.
 */
int vnfs_step_report_format(const struct vnfs_job *job, uint32_t step_id,
			    enum vnfs_report_mode mode, char *out, size_t size, char *error,
			    size_t error_size);

#endif /* VNFS_STEP_REPORT_H */
