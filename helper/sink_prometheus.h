/*
 * sink_prometheus.h — what the tests and the fuzz target see of the /metrics
 * endpoint besides its constructor (sink.h) and port (metrics.h).
 */
#ifndef VNFS_SINK_PROMETHEUS_H
#define VNFS_SINK_PROMETHEUS_H

#include <sys/socket.h>

#include "helper/sink.h"

/* Connections libmicrohttpd holds now (accepted and not yet closed). */
unsigned vnfs_sink_prometheus_connections(const struct vnfs_sink *sink);

/*
 * Hands an already connected socket to the endpoint as if it had been
 * accepted from address (the fuzz target feeds requests through a
 * socketpair); the endpoint owns fd from then on, even on failure (-1).
 */
int vnfs_sink_prometheus_add_connection(const struct vnfs_sink *sink, int fd,
					const struct sockaddr *address, socklen_t length);

#endif /* VNFS_SINK_PROMETHEUS_H */
