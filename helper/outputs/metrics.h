/*
 * metrics.h — the Prometheus exposition of vnfs: what /metrics says.
 *
 * metrics.c renders one interval into the text format (docs/METRICS.md lists
 * every family); sink_prometheus.c serves the last rendering over HTTP.  The
 * renderer is separate so tests and the benchmark can drive it without a
 * server.  It keeps the last counts of ended steps for the configured grace
 * period and bounds the number of series.
 */
#ifndef VNFS_METRICS_H
#define VNFS_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/config.h"
#include "helper/outputs/sink.h"
#include "lib/record.h"

struct vnfs_metrics;

/* Returns the renderer, or NULL with a message in error. */
struct vnfs_metrics *vnfs_metrics_new(const struct vnfs_config *config, char *error,
				      size_t error_size);
void vnfs_metrics_free(struct vnfs_metrics *metrics);

/* Keeps the final counts of a finished job's steps for the grace period. */
void vnfs_metrics_job_finished(struct vnfs_metrics *metrics, const struct vnfs_job *job);

/*
 * Takes note of an interval: remembers the steps that ended, forgets those
 * whose grace period is over.  Cheap; called for every interval, rendered
 * or not.
 */
void vnfs_metrics_update(struct vnfs_metrics *metrics, const struct vnfs_interval *interval);

/*
 * Renders interval (after vnfs_metrics_update; NULL: helper metrics only)
 * into a new NUL-terminated malloc'd text.  Returns 0 with *text and *length set, or -1 (out of
 * memory).
 */
int vnfs_metrics_render(struct vnfs_metrics *metrics, const struct vnfs_interval *interval,
			char **text, size_t *length);

/* Series left out of renderings because of max_series, since the start. */
uint64_t vnfs_metrics_series_capped(const struct vnfs_metrics *metrics);

/* The TCP port the Prometheus sink listens on (useful with port = 0 in tests). */
uint16_t vnfs_sink_prometheus_port(const struct vnfs_sink *prometheus);

#endif /* VNFS_METRICS_H */
