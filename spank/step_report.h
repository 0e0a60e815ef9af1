/*
 * step_report.h — the step summary srun prints on the user's terminal with
 * --vnfs-report, formatted from the helper's QUERY reply.  Pure: the reply
 * is read back with lib/record_json.c, the same reader vnfs-report uses.
 */
#ifndef VNFS_STEP_REPORT_H
#define VNFS_STEP_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "spank/plugin_args.h"

struct json_object;

/*
 * Formats step step_id of the reply's "job" object ("steps": [...]) as one
 * line (brief) or a per-operation table (full) into out.  Returns 0, or -1
 * with a message in error when the reply does not hold the step.
 */
int vnfs_step_report_format(const struct json_object *reply, uint32_t step_id,
			    enum vnfs_report_mode mode, char *out, size_t size, char *error,
			    size_t error_size);

#endif /* VNFS_STEP_REPORT_H */
