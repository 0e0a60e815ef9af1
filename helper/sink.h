/*
 * sink.h — the interface every output implements.
 *
 * The collector calls publish() once per interval and job_finished() once per
 * finished job, never two calls at once (they may come from the collector
 * thread or, for a job's final read, the socket thread), and must never wait
 * on an output: a sink
 * that talks to something slow (Kafka, HTTP, a locked database) queues into a
 * bounded buffer, does the slow part elsewhere, and counts what it dropped.
 */
#ifndef VNFS_SINK_H
#define VNFS_SINK_H

#include <stdint.h>

#include "config.h"
#include "lib/record.h"

struct vnfs_sink {
	const char *name;          /* "sqlite", "prometheus", "jsonlog", ... */
	void *state;
	void (*publish)(void *state, const struct vnfs_interval *interval);
	void (*job_finished)(void *state, const struct vnfs_job *job);
	/* Records this sink failed to deliver since it opened (self-metric). */
	uint64_t (*dropped)(void *state);
	void (*close)(void *state);
};

/*
 * Constructors: each returns 0 and fills *sink, or -1 with a message in
 * error.  Called only for sinks enabled in the configuration.  Kafka's and
 * HTTP's are defined in their modules and reached through sink_module.h.
 */
int vnfs_sink_sqlite_open(struct vnfs_sink *sink, const struct vnfs_config *config,
			  char *error, size_t error_size);
int vnfs_sink_prometheus_open(struct vnfs_sink *sink, const struct vnfs_config *config,
			      char *error, size_t error_size);
int vnfs_sink_jsonlog_open(struct vnfs_sink *sink, const struct vnfs_config *config,
			   char *error, size_t error_size);
int vnfs_sink_kafka_open(struct vnfs_sink *sink, const struct vnfs_config *config,
			 char *error, size_t error_size);
int vnfs_sink_http_open(struct vnfs_sink *sink, const struct vnfs_config *config,
			char *error, size_t error_size);

#endif /* VNFS_SINK_H */
