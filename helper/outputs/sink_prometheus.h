/*
 * sink_prometheus.h — what the tests and the fuzz target see of the /metrics
 * endpoint besides its constructor (sink.h) and port (metrics.h).
 */
#ifndef VNFS_SINK_PROMETHEUS_H
#define VNFS_SINK_PROMETHEUS_H

#include "helper/outputs/sink.h"

/*
 * Connections libmicrohttpd holds now (accepted and not yet closed): tests
 * wait on it to know that connections they opened were accepted, or ended.
 */
unsigned vnfs_sink_prometheus_connections(const struct vnfs_sink *sink);

#endif /* VNFS_SINK_PROMETHEUS_H */
