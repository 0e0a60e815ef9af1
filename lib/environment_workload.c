/*
 * environment_workload.c — the workload of a captured environment job (see
 * environment.h).  Apart from environment.c, which vnfs.conf's parser links
 * alone, because this needs the workload identity's code.
 */
#include "lib/environment.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A Slurm job and step from SLURM_JOB_ID and SLURM_STEP_ID, as numbers. */
static int slurm_workload(const char *value, const char *part, struct vnfs_workload *workload,
			  char *error, size_t error_size)
{
	uint32_t numbers[2];
	const char *texts[2] = { value, part };

	for (int i = 0; i < 2; i++) {
		char *end;
		unsigned long long number;

		errno = 0;
		number = strtoull(texts[i], &end, 10);
		if (!isdigit((unsigned char)texts[i][0]) || *end != '\0' || errno != 0 ||
		    number > UINT32_MAX) {
			snprintf(error, error_size, i == 0 ? "a Slurm job id is a number"
							   : "a Slurm job without a step number "
							     "(SLURM_STEP_ID) is not a step");
			return -1;
		}
		numbers[i] = (uint32_t)number;
	}
	vnfs_workload_of_slurm_step(workload, numbers[0], numbers[1]);
	return 0;
}

int vnfs_environment_workload(const char *variable, const char *value, const char *part,
			      struct vnfs_workload *workload, char *error, size_t error_size)
{
	enum vnfs_workload_source source = vnfs_environment_source(variable);

	if (source == VNFS_SOURCE_SLURM)
		return slurm_workload(value, part, workload, error, error_size);
	if (source == VNFS_SOURCE_GRID_ENGINE && strcmp(part, "undefined") == 0)
		part = ""; /* SGE_TASK_ID of a job that is no array */
	return vnfs_workload_set(workload, source, value, part, error, error_size);
}
