/*
 * sink_prometheus.c — the /metrics endpoint (libmicrohttpd).
 *
 * publish() renders the interval on the collector's thread and swaps the
 * new text in under a mutex; libmicrohttpd's own thread answers scrapes
 * with whatever text is current.  A scrape therefore never touches collector
 * state and never waits for a rendering: each exposition is reference
 * counted, so a slow scraper keeps its copy alive while newer ones replace it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "helper/metrics.h"
#include "helper/sink.h"
#include "lib/log.h"

#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define CONNECTION_LIMIT 64
#define CONNECTION_TIMEOUT_S 30

static const char index_page[] =
	"vnfs-helper: per-job NFS I/O metrics are at /metrics\n";

struct exposition {
	atomic_size_t references;
	size_t length;
	char *text;
};

struct prometheus {
	struct vnfs_metrics *metrics;
	struct MHD_Daemon *daemon;
	uint16_t port;
	pthread_mutex_t lock; /* guards current */
	struct exposition *current;
	atomic_uint_fast64_t failed_renderings;
};

static void exposition_release(void *cls)
{
	struct exposition *exposition = cls;

	if (exposition && atomic_fetch_sub(&exposition->references, 1) == 1) {
		free(exposition->text);
		free(exposition);
	}
}

static struct exposition *exposition_acquire(struct prometheus *prometheus)
{
	pthread_mutex_lock(&prometheus->lock);
	struct exposition *exposition = prometheus->current;
	atomic_fetch_add(&exposition->references, 1);
	pthread_mutex_unlock(&prometheus->lock);
	return exposition;
}

/* Renders and installs a new exposition; the old one lives on while served. */
static int install(struct prometheus *prometheus, const struct vnfs_interval *interval)
{
	struct exposition *exposition = malloc(sizeof(*exposition));

	if (!exposition)
		return -1;
	if (vnfs_metrics_render(prometheus->metrics, interval, &exposition->text,
				&exposition->length) != 0) {
		free(exposition);
		return -1;
	}
	atomic_init(&exposition->references, 1);

	pthread_mutex_lock(&prometheus->lock);
	struct exposition *old = prometheus->current;
	prometheus->current = exposition;
	pthread_mutex_unlock(&prometheus->lock);
	exposition_release(old);
	return 0;
}

static enum MHD_Result queue_static(struct MHD_Connection *connection, unsigned status,
				    const char *body, const char *allow)
{
	struct MHD_Response *response =
		MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
	if (!response)
		return MHD_NO;
	if (MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE,
				    "text/plain; charset=utf-8") != MHD_YES ||
	    (allow && MHD_add_response_header(response, MHD_HTTP_HEADER_ALLOW, allow) != MHD_YES)) {
		MHD_destroy_response(response);
		return MHD_NO;
	}
	enum MHD_Result result = MHD_queue_response(connection, status, response);
	MHD_destroy_response(response);
	return result;
}

static enum MHD_Result queue_metrics(struct prometheus *prometheus,
				     struct MHD_Connection *connection)
{
	struct exposition *exposition = exposition_acquire(prometheus);
	struct MHD_Response *response = MHD_create_response_from_buffer_with_free_callback_cls(
		exposition->length, exposition->text, exposition_release, exposition);

	if (!response) {
		exposition_release(exposition);
		return MHD_NO;
	}
	if (MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, CONTENT_TYPE) != MHD_YES) {
		MHD_destroy_response(response);
		return MHD_NO;
	}
	enum MHD_Result result = MHD_queue_response(connection, MHD_HTTP_OK, response);
	MHD_destroy_response(response);
	return result;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *connection, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **request_state)
{
	struct prometheus *prometheus = cls;
	(void)version;
	(void)upload_data;

	/* First call per request: headers only.  A body is never expected. */
	if (*request_state == NULL) {
		*request_state = prometheus;
		return MHD_YES;
	}
	if (*upload_data_size != 0) {
		*upload_data_size = 0; /* discard it; answered once it ends */
		return MHD_YES;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return queue_static(connection, MHD_HTTP_METHOD_NOT_ALLOWED,
				    "only GET and HEAD are supported\n", "GET, HEAD");
	if (strcmp(url, "/metrics") == 0)
		return queue_metrics(prometheus, connection);
	if (strcmp(url, "/") == 0)
		return queue_static(connection, MHD_HTTP_OK, index_page, NULL);
	return queue_static(connection, MHD_HTTP_NOT_FOUND, "not found; try /metrics\n", NULL);
}

static void log_from_microhttpd(void *cls, const char *format, va_list arguments)
{
	char line[512];
	(void)cls;

	vsnprintf(line, sizeof(line), format, arguments);
	line[strcspn(line, "\n")] = '\0';
	vnfs_warning("prometheus: %s", line);
}

static int start_daemon(struct prometheus *prometheus, const struct vnfs_config *config,
			char *error, size_t error_size)
{
	const char *address = config->prometheus.listen_address;
	struct sockaddr_in6 ipv6 = { .sin6_family = AF_INET6, .sin6_port = htons(config->prometheus.port) };
	struct sockaddr_in ipv4 = { .sin_family = AF_INET, .sin_port = htons(config->prometheus.port) };
	const struct sockaddr *socket_address;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG;

	if (inet_pton(AF_INET, address, &ipv4.sin_addr) == 1) {
		socket_address = (const struct sockaddr *)&ipv4;
	} else if (inet_pton(AF_INET6, address, &ipv6.sin6_addr) == 1) {
		socket_address = (const struct sockaddr *)&ipv6;
		flags |= MHD_USE_IPv6;
	} else {
		snprintf(error, error_size,
			 "prometheus: listen_address '%s' is not an IPv4 or IPv6 address", address);
		return -1;
	}

	errno = 0;
	prometheus->daemon = MHD_start_daemon(
		flags, config->prometheus.port, NULL, NULL, answer, prometheus,
		MHD_OPTION_SOCK_ADDR, socket_address,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONNECTION_LIMIT,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONNECTION_TIMEOUT_S,
		MHD_OPTION_EXTERNAL_LOGGER, log_from_microhttpd, NULL,
		MHD_OPTION_END);
	if (!prometheus->daemon) {
		snprintf(error, error_size, "prometheus: cannot listen on %s port %u%s%s", address,
			 config->prometheus.port, errno ? ": " : "", errno ? strerror(errno) : "");
		return -1;
	}
	const union MHD_DaemonInfo *info =
		MHD_get_daemon_info(prometheus->daemon, MHD_DAEMON_INFO_BIND_PORT);
	prometheus->port = info ? info->port : config->prometheus.port;
	return 0;
}

static void prometheus_publish(void *state, const struct vnfs_interval *interval)
{
	struct prometheus *prometheus = state;

	if (install(prometheus, interval) != 0) {
		atomic_fetch_add(&prometheus->failed_renderings, 1);
		vnfs_warning("prometheus: out of memory rendering /metrics; serving the previous text");
	}
}

static void prometheus_job_finished(void *state, const struct vnfs_job *job)
{
	struct prometheus *prometheus = state;
	vnfs_metrics_job_finished(prometheus->metrics, job);
}

/* Renderings that failed (the endpoint kept serving the one before). */
static uint64_t prometheus_dropped(void *state)
{
	struct prometheus *prometheus = state;
	return atomic_load(&prometheus->failed_renderings);
}

static void prometheus_close(void *state)
{
	struct prometheus *prometheus = state;

	if (!prometheus)
		return;
	if (prometheus->daemon)
		MHD_stop_daemon(prometheus->daemon);
	exposition_release(prometheus->current);
	vnfs_metrics_free(prometheus->metrics);
	pthread_mutex_destroy(&prometheus->lock);
	free(prometheus);
}

int vnfs_sink_prometheus_open(struct vnfs_sink *sink, const struct vnfs_config *config,
			      char *error, size_t error_size)
{
	struct prometheus *prometheus = calloc(1, sizeof(*prometheus));

	if (!prometheus) {
		snprintf(error, error_size, "prometheus: out of memory");
		return -1;
	}
	int lock_error = pthread_mutex_init(&prometheus->lock, NULL);
	if (lock_error) {
		snprintf(error, error_size, "prometheus: %s", strerror(lock_error));
		free(prometheus);
		return -1;
	}
	atomic_init(&prometheus->failed_renderings, 0);
	prometheus->metrics = vnfs_metrics_new(config, error, error_size);
	if (!prometheus->metrics)
		goto fail;
	/* Until the first interval, scrapes see the helper's own metrics. */
	if (install(prometheus, NULL) != 0) {
		snprintf(error, error_size, "prometheus: out of memory");
		goto fail;
	}
	if (start_daemon(prometheus, config, error, error_size) != 0)
		goto fail;

	*sink = (struct vnfs_sink){
		.name = "prometheus",
		.state = prometheus,
		.publish = prometheus_publish,
		.job_finished = prometheus_job_finished,
		.dropped = prometheus_dropped,
		.close = prometheus_close,
	};
	return 0;
fail:
	prometheus_close(prometheus);
	return -1;
}

void vnfs_sink_prometheus_watch_sinks(struct vnfs_sink *sink, const struct vnfs_sink *sinks,
				      size_t count)
{
	struct prometheus *prometheus = sink->state;
	vnfs_metrics_watch_sinks(prometheus->metrics, sinks, count);
}

uint16_t vnfs_sink_prometheus_port(const struct vnfs_sink *sink)
{
	const struct prometheus *prometheus = sink->state;
	return prometheus->port;
}
