/*
 * stream_fixtures.h — what the tests of the streaming outputs (Kafka, HTTP)
 * share: a minimal step record and a monotonic clock for timing publish().
 */
#ifndef VNFS_STREAM_FIXTURES_H
#define VNFS_STREAM_FIXTURES_H

#include <stdint.h>

#include "lib/record.h"

/* A running step of job_id owned by alice (uid 1000), no tags, zero counters
 * in stats (which the record points to); each test marks what it checks. */
void stream_step_init(struct vnfs_step_record *step, struct vnfs_step_stats *stats,
		      uint32_t job_id, uint32_t step_id);

/* CLOCK_MONOTONIC in milliseconds. */
double monotonic_ms(void);

#endif /* VNFS_STREAM_FIXTURES_H */
