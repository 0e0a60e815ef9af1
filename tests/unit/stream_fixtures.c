/*
 * stream_fixtures.c — see stream_fixtures.h.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tests/unit/stream_fixtures.h"

void stream_step_init(struct vnfs_step_record *step, struct vnfs_step_stats *stats,
		      uint32_t job_id, uint32_t step_id)
{
	memset(step, 0, sizeof(*step));
	memset(stats, 0, sizeof(*stats));
	vnfs_record_identify_slurm(step, job_id, step_id);
	step->uid = 1000;
	snprintf(step->user, sizeof(step->user), "alice");
	step->tags = vnfs_tags_none();
	step->start_time_ms = 1700000000000;
	step->sample_time_ms = 1700000001000;
	step->stats = stats;
}

double monotonic_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6;
}
