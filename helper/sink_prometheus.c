/*
 * sink_prometheus.c — the /metrics endpoint (libmicrohttpd).
 *
 * Rendering happens only on the collector's thread, in publish(), and the
 * new text is swapped in under a mutex; libmicrohttpd's threads answer
 * scrapes with the current text and never touch collector state.  Each
 * exposition is reference counted, so a slow scraper keeps its copy alive
 * while newer ones replace it, and is gzipped at most once, by the first
 * scrape that accepts gzip (Prometheus does).
 *
 * A rendering of 1,000 busy steps costs tens of milliseconds, too much to
 * spend every second when Prometheus scrapes every 15 s or more.  So with
 * an interval under LAZY_BELOW_MS, publish() renders only when a scrape has
 * asked since the last rendering: a scrape that finds the text older than
 * one interval raises a flag and waits (at most two intervals and a second,
 * well inside Prometheus's scrape timeout) for the next publish() to render
 * it.  Scrapes within one interval of a rendering share it; after that
 * publish() frees the text, so its megabytes are held only around scrapes.
 * With longer intervals every interval is rendered and kept, and scrapes
 * never wait.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>
#include <zlib.h>

#include "helper/metrics.h"
#include "helper/sink.h"
#include "lib/log.h"

#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define CONNECTION_LIMIT 64
#define CONNECTION_TIMEOUT_S 30
#define LAZY_BELOW_MS 2000

static const char index_page[] =
	"vnfs-helper: per-job NFS I/O metrics are at /metrics\n";

struct exposition {
	atomic_size_t references;
	size_t length;
	char *text;
	/* Its gzip form, made by the first scrape that accepts gzip. */
	pthread_mutex_t compress_lock;
	bool compress_tried;
	unsigned char *compressed;
	size_t compressed_length;
};

struct prometheus {
	struct vnfs_metrics *metrics;
	struct MHD_Daemon *daemon;
	uint16_t port;
	uint32_t interval_ms;
	bool lazy; /* render only when a scrape asks */

	pthread_mutex_t lock; /* guards what follows */
	pthread_cond_t rendered;
	struct exposition *current;
	struct timespec rendered_at; /* CLOCK_MONOTONIC; zero: never for an interval */
	uint64_t generation;         /* renderings installed so far */
	bool wanted;                 /* a scrape waits for a fresh rendering */
	bool stopping;

	atomic_uint_fast64_t failed_renderings;
};

static uint64_t elapsed_ms(const struct timespec *since)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)((now.tv_sec - since->tv_sec) * 1000 +
			  (now.tv_nsec - since->tv_nsec) / 1000000L);
}

static void exposition_release(void *cls)
{
	struct exposition *exposition = cls;

	if (exposition && atomic_fetch_sub(&exposition->references, 1) == 1) {
		pthread_mutex_destroy(&exposition->compress_lock);
		free(exposition->compressed);
		free(exposition->text);
		free(exposition);
	}
}

/* Asks publish() for a rendering and waits for it (lock held), within bounds. */
static void wait_for_rendering(struct prometheus *prometheus)
{
	uint64_t generation = prometheus->generation;
	uint64_t wait_ms = 2 * (uint64_t)prometheus->interval_ms + 1000;
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += (time_t)(wait_ms / 1000);
	until.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	prometheus->wanted = true;
	while (prometheus->generation == generation && !prometheus->stopping)
		if (pthread_cond_timedwait(&prometheus->rendered, &prometheus->lock, &until) ==
		    ETIMEDOUT)
			break;
}

/*
 * The text to serve: the current one if a rendering is at most one interval
 * old, else the one the next publish() renders (or, if none comes in time,
 * the current one after all; NULL if publish() already let it go).
 */
static struct exposition *exposition_acquire(struct prometheus *prometheus)
{
	pthread_mutex_lock(&prometheus->lock);
	bool fresh = !prometheus->lazy || (prometheus->generation > 0 &&
		     elapsed_ms(&prometheus->rendered_at) <= prometheus->interval_ms);
	if (!fresh)
		wait_for_rendering(prometheus);
	struct exposition *exposition = prometheus->current;
	if (exposition)
		atomic_fetch_add(&exposition->references, 1);
	pthread_mutex_unlock(&prometheus->lock);
	return exposition;
}

/*
 * Renders and installs a new exposition (interval NULL: the helper-only text
 * served before the first interval); the old one lives on while served.
 */
static int install(struct prometheus *prometheus, const struct vnfs_interval *interval)
{
	struct exposition *exposition = calloc(1, sizeof(*exposition));

	if (!exposition)
		return -1;
	if (pthread_mutex_init(&exposition->compress_lock, NULL) != 0) {
		free(exposition);
		return -1;
	}
	if (vnfs_metrics_render(prometheus->metrics, interval, &exposition->text,
				&exposition->length) != 0) {
		pthread_mutex_destroy(&exposition->compress_lock);
		free(exposition);
		return -1;
	}
	atomic_init(&exposition->references, 1);

	pthread_mutex_lock(&prometheus->lock);
	struct exposition *old = prometheus->current;
	prometheus->current = exposition;
	if (interval) {
		clock_gettime(CLOCK_MONOTONIC, &prometheus->rendered_at);
		prometheus->generation++;
		prometheus->wanted = false;
		pthread_cond_broadcast(&prometheus->rendered);
	}
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

/* Does the client take gzip ("gzip" listed in Accept-Encoding, not with q=0)? */
static bool accepts_gzip(struct MHD_Connection *connection)
{
	const char *value = MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
							 MHD_HTTP_HEADER_ACCEPT_ENCODING);
	char list[256];

	if (!value)
		return false;
	snprintf(list, sizeof(list), "%s", value);
	char *saveptr = NULL;
	for (char *token = strtok_r(list, ",", &saveptr); token; token = strtok_r(NULL, ",", &saveptr)) {
		token += strspn(token, " \t");
		size_t name_length = strcspn(token, " \t;");
		if (name_length != 4 || strncasecmp(token, "gzip", 4) != 0)
			continue;
		const char *quality = strstr(token, "q=");
		return !quality || strtod(quality + 2, NULL) > 0.0;
	}
	return false;
}

/* The gzip form of the text (made once per exposition), or NULL. */
static const unsigned char *compressed_text(struct exposition *exposition, size_t *length)
{
	pthread_mutex_lock(&exposition->compress_lock);
	if (!exposition->compress_tried) {
		exposition->compress_tried = true;
		z_stream stream = { 0 };
		/* Level 1: most of the gain for little CPU on such repetitive text. */
		if (exposition->length <= UINT_MAX &&
		    deflateInit2(&stream, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK) {
			uLong bound = deflateBound(&stream, (uLong)exposition->length);
			unsigned char *buffer = malloc(bound);
			stream.next_in = (Bytef *)exposition->text;
			stream.avail_in = (uInt)exposition->length;
			stream.next_out = buffer;
			stream.avail_out = (uInt)bound;
			if (buffer && bound <= UINT_MAX && deflate(&stream, Z_FINISH) == Z_STREAM_END) {
				unsigned char *fitted = realloc(buffer, stream.total_out);
				exposition->compressed = fitted ? fitted : buffer;
				exposition->compressed_length = stream.total_out;
			} else {
				free(buffer);
			}
			deflateEnd(&stream);
		}
	}
	pthread_mutex_unlock(&exposition->compress_lock);
	*length = exposition->compressed_length;
	return exposition->compressed;
}

static enum MHD_Result queue_metrics(struct prometheus *prometheus,
				     struct MHD_Connection *connection)
{
	struct exposition *exposition = exposition_acquire(prometheus);
	if (!exposition)
		return queue_static(connection, MHD_HTTP_SERVICE_UNAVAILABLE,
				    "vnfs-helper: the collector produced no metrics in time\n", NULL);
	const void *body = exposition->text;
	size_t length = exposition->length;
	bool gzip = accepts_gzip(connection);

	if (gzip) {
		const unsigned char *compressed = compressed_text(exposition, &length);
		if (compressed) {
			body = compressed;
		} else { /* out of memory: plain text will do */
			gzip = false;
			length = exposition->length;
		}
	}
	struct MHD_Response *response = MHD_create_response_from_buffer_with_free_callback_cls(
		length, (void *)body, exposition_release, exposition);

	if (!response) {
		exposition_release(exposition);
		return MHD_NO;
	}
	if (MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, CONTENT_TYPE) != MHD_YES ||
	    MHD_add_response_header(response, MHD_HTTP_HEADER_VARY, "Accept-Encoding") != MHD_YES ||
	    (gzip && MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip") !=
			     MHD_YES)) {
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
	/* A thread per connection: a scrape waiting for its rendering holds up no other. */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
			 MHD_USE_AUTO | MHD_USE_ERROR_LOG;

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
		MHD_OPTION_EXTERNAL_LOGGER, log_from_microhttpd, NULL,
		MHD_OPTION_SOCK_ADDR, socket_address,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONNECTION_LIMIT,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONNECTION_TIMEOUT_S,
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

	vnfs_metrics_update(prometheus->metrics, interval);
	pthread_mutex_lock(&prometheus->lock);
	bool wanted = !prometheus->lazy || prometheus->wanted || prometheus->generation == 0;
	struct exposition *expired = NULL;
	if (!wanted && prometheus->current && prometheus->generation > 0 &&
	    elapsed_ms(&prometheus->rendered_at) > prometheus->interval_ms) {
		/* Served and past sharing: megabytes nobody will read again. */
		expired = prometheus->current;
		prometheus->current = NULL;
	}
	pthread_mutex_unlock(&prometheus->lock);
	exposition_release(expired);
	if (!wanted)
		return;
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
	pthread_mutex_lock(&prometheus->lock);
	prometheus->stopping = true; /* waiting scrapes get the current text now */
	pthread_cond_broadcast(&prometheus->rendered);
	pthread_mutex_unlock(&prometheus->lock);
	if (prometheus->daemon)
		MHD_stop_daemon(prometheus->daemon);
	exposition_release(prometheus->current);
	vnfs_metrics_free(prometheus->metrics);
	pthread_cond_destroy(&prometheus->rendered);
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
	pthread_condattr_t attributes;
	pthread_condattr_init(&attributes);
	pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
	int lock_error = pthread_mutex_init(&prometheus->lock, NULL);
	int condition_error = pthread_cond_init(&prometheus->rendered, &attributes);
	pthread_condattr_destroy(&attributes);
	if (lock_error || condition_error) {
		snprintf(error, error_size, "prometheus: %s",
			 strerror(lock_error ? lock_error : condition_error));
		free(prometheus);
		return -1;
	}
	prometheus->interval_ms = config->helper.interval_ms ? config->helper.interval_ms : 1000;
	prometheus->lazy = prometheus->interval_ms < LAZY_BELOW_MS;
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

uint16_t vnfs_sink_prometheus_port(const struct vnfs_sink *sink)
{
	const struct prometheus *prometheus = sink->state;
	return prometheus->port;
}
