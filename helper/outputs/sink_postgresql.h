/*
 * sink_postgresql.h — what the PostgreSQL output tells beyond sink.h: its
 * counters, for its test and for an operator's debugging.
 */
#ifndef VNFS_SINK_POSTGRESQL_H
#define VNFS_SINK_POSTGRESQL_H

#include <stdint.h>

struct vnfs_postgresql_counters {
	uint64_t queued;      /* records publish() and job_finished() took */
	uint64_t spooled;     /* records appended to the spool file */
	uint64_t written;     /* records in committed transactions (replays count again) */
	uint64_t dropped;     /* records lost: queue or spool full, unreadable spool lines */
	uint64_t spool_bytes; /* the spool file's size now */
};

/* The counters of the sink whose state is state (vnfs_sink.state). */
void vnfs_sink_postgresql_counters(void *state, struct vnfs_postgresql_counters *counters);

#endif /* VNFS_SINK_POSTGRESQL_H */
