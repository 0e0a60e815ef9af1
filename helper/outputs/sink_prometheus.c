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
 *
 * Securing it (docs/METRICS.md, "Securing /metrics"), configured as
 * Prometheus exporters are: TLS from a PEM certificate and key read at
 * start; HTTP basic auth against crypt(3) hashes (bcrypt, yescrypt), checked
 * with libxcrypt before any other answer, even 404; and per-address,
 * overall and idle-time bounds on connections, so that one slow or hostile
 * client cannot hold every slot and starve Prometheus's scrapes.
 */
#include <arpa/inet.h>
#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>
#include <zlib.h>

#include "helper/outputs/metrics.h"
#include "helper/outputs/sink.h"
#include "helper/outputs/sink_prometheus.h"
#include "lib/log.h"

#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define LAZY_BELOW_MS 2000
#define REALM "vnfs"
#define TLS_FILE_MAX (1024 * 1024) /* a PEM chain is a few KiB; refuse anything odd */
#define USER_NAME_MAX 64
/* vnfs.conf's defaults, for a config built by hand with zeros (tests):
 * libmicrohttpd would take 0 as "refuse all", "no limit", "no timeout". */
#define DEFAULT_CONNECTION_LIMIT 64
#define DEFAULT_PER_ADDRESS_LIMIT 8
#define DEFAULT_CONNECTION_TIMEOUT_S 30

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

/* One [prometheus] basic_auth_users entry, split. */
struct basic_auth_user {
	char name[USER_NAME_MAX + 1];
	char hash[VNFS_BASIC_AUTH_ENTRY_MAX];
};

struct prometheus {
	struct vnfs_metrics *metrics;
	struct MHD_Daemon *daemon;
	uint16_t port;
	uint32_t interval_ms;
	bool lazy; /* render only when a scrape asks */
	size_t user_count; /* 0: no authentication */
	struct basic_auth_user users[VNFS_CONFIG_MAX_LIST];
	char *tls_cert, *tls_key; /* PEM text; NULL: plain HTTP */
	size_t tls_key_length;

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

/* Basic auth ---------------------------------------------------------------- */

/* Equal strings, in a time that depends on their lengths only (a hash's
 * length is public: it is fixed by its method). */
static bool constant_time_equal(const char *a, const char *b)
{
	size_t length = strlen(a);
	volatile unsigned char difference = 0;

	if (length != strlen(b))
		return false;
	for (size_t i = 0; i < length; i++)
		difference |= (unsigned char)(a[i] ^ b[i]);
	return difference == 0;
}

static const struct basic_auth_user *find_user(const struct prometheus *prometheus,
					       const char *name)
{
	for (size_t i = 0; i < prometheus->user_count; i++) {
		if (strcmp(prometheus->users[i].name, name) == 0)
			return &prometheus->users[i];
	}
	return NULL;
}

/*
 * Does password match the user's hash?  An unknown name is hashed too, with
 * the first user's setting, so that the time taken does not tell which
 * names exist.  crypt_rn fails closed (NULL), never with a guessable "*0".
 */
static bool password_valid(const struct prometheus *prometheus, const char *name,
			   const char *password)
{
	const struct basic_auth_user *user = find_user(prometheus, name);
	const char *setting = user ? user->hash : prometheus->users[0].hash;
	/* 32 KiB: on the heap, not on a connection thread's stack. */
	struct crypt_data *data = calloc(1, sizeof(*data));

	if (!data)
		return false;
	const char *computed = crypt_rn(password, setting, data, (int)sizeof(*data));
	bool valid = computed && constant_time_equal(computed, setting) && user;
	explicit_bzero(data, sizeof(*data)); /* holds the password's derivations */
	free(data);
	return valid;
}

static bool authorized(const struct prometheus *prometheus, struct MHD_Connection *connection)
{
	char *password = NULL;

	if (prometheus->user_count == 0)
		return true;
	char *name = MHD_basic_auth_get_username_password(connection, &password);
	bool valid = name && password && password_valid(prometheus, name, password);
	if (password) {
		explicit_bzero(password, strlen(password));
		MHD_free(password);
	}
	if (name)
		MHD_free(name);
	return valid;
}

/* 401 with WWW-Authenticate: Basic realm="vnfs", which Prometheus answers. */
static enum MHD_Result queue_unauthorized(struct MHD_Connection *connection)
{
	static const char body[] = "vnfs-helper: authentication required\n";
	struct MHD_Response *response = MHD_create_response_from_buffer(
		strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);

	if (!response)
		return MHD_NO;
	if (MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE,
				    "text/plain; charset=utf-8") != MHD_YES) {
		MHD_destroy_response(response);
		return MHD_NO;
	}
	enum MHD_Result result = MHD_queue_basic_auth_fail_response(connection, REALM, response);
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
	/* Before anything else, so that a stranger learns nothing, not even a 404. */
	if (!authorized(prometheus, connection))
		return queue_unauthorized(connection);
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

/* Start-time setup -------------------------------------------------------- */

/* "FILE:LINE: [prometheus] KEY", as config.c words its errors. */
static void key_location(const struct vnfs_config *config, const char *key, unsigned line,
			 char *out, size_t size)
{
	if (config->source_path[0] && line)
		snprintf(out, size, "%s:%u: [prometheus] %s", config->source_path, line, key);
	else if (config->source_path[0])
		snprintf(out, size, "%s: [prometheus] %s", config->source_path, key);
	else
		snprintf(out, size, "[prometheus] %s", key);
}

/* Splits the configured name:hash entries; config.c checked their form, this
 * checks that this libxcrypt can compute each hash. */
static int load_users(struct prometheus *prometheus, const struct vnfs_config *config,
		      char *error, size_t error_size)
{
	if (config->prometheus.basic_auth_user_count > VNFS_CONFIG_MAX_LIST) {
		snprintf(error, error_size, "prometheus: basic_auth_users: more than %d users",
			 VNFS_CONFIG_MAX_LIST);
		return -1;
	}
	for (size_t i = 0; i < config->prometheus.basic_auth_user_count; i++) {
		const char *entry = config->prometheus.basic_auth_users[i];
		struct basic_auth_user *user = &prometheus->users[i];
		size_t name_length = strcspn(entry, ":");

		if (entry[name_length] != ':' || name_length > USER_NAME_MAX ||
		    strlen(entry + name_length + 1) >= sizeof(user->hash)) {
			snprintf(error, error_size, "prometheus: basic_auth_users: bad entry %zu", i + 1);
			return -1;
		}
		memcpy(user->name, entry, name_length);
		user->name[name_length] = '\0';
		strcpy(user->hash, entry + name_length + 1);
		if (crypt_checksalt(user->hash) != CRYPT_SALT_OK) {
			char where[VNFS_PATH_MAX + 64];
			key_location(config, "basic_auth_users", 0, where, sizeof(where));
			snprintf(error, error_size,
				 "%s: user '%s': this system's libxcrypt cannot check that hash "
				 "(its method is disabled or unknown here)", where, user->name);
			return -1;
		}
	}
	prometheus->user_count = config->prometheus.basic_auth_user_count;
	return 0;
}

/* The reason a file cannot be used, or 0; its size in *size. */
static int check_small_file(int fd, size_t *size)
{
	struct stat status;

	if (fstat(fd, &status) != 0)
		return errno;
	if (!S_ISREG(status.st_mode))
		return EINVAL;
	if (status.st_size > TLS_FILE_MAX)
		return EFBIG;
	if (status.st_size == 0)
		return ENODATA;
	*size = (size_t)status.st_size;
	return 0;
}

/* Reads a whole small file (a PEM certificate or key) into a string; on
 * failure -1 with errno (EINVAL: not a regular file, ENODATA: empty). */
static int read_small_file(const char *path, char **text, size_t *length)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	size_t size = 0, used = 0;

	if (fd < 0)
		return -1;
	int problem = check_small_file(fd, &size);
	char *buffer = problem ? NULL : malloc(size + 1);
	if (!problem && !buffer)
		problem = ENOMEM;
	while (!problem && used < size) {
		ssize_t got = read(fd, buffer + used, size - used);
		if (got < 0 && errno != EINTR)
			problem = errno;
		else if (got == 0)
			break; /* shrank while read: use what is there */
		else if (got > 0)
			used += (size_t)got;
	}
	close(fd);
	if (!problem && used == 0)
		problem = ENODATA;
	if (problem) {
		free(buffer);
		errno = problem;
		return -1;
	}
	buffer[used] = '\0';
	*text = buffer;
	*length = used;
	return 0;
}

static int read_tls_file(const struct vnfs_config *config, const char *key, const char *path,
			 unsigned line, char **text, size_t *length, char *error, size_t error_size)
{
	char where[VNFS_PATH_MAX + 64];

	if (read_small_file(path, text, length) == 0)
		return 0;
	int saved = errno;
	key_location(config, key, line, where, sizeof(where));
	snprintf(error, error_size, "%s: cannot read '%s': %s", where, path,
		 saved == EINVAL ? "not a regular file"
		 : saved == ENODATA ? "the file is empty"
		 : saved == EFBIG ? "larger than 1 MiB, not a PEM file" : strerror(saved));
	return -1;
}

/* Reads the certificate and key at start: a broken file stops the helper
 * here, with its key's line, not at the first scrape. */
static int load_tls(struct prometheus *prometheus, const struct vnfs_config *config,
		    char *error, size_t error_size)
{
	const char *cert = config->prometheus.tls_cert_file, *key = config->prometheus.tls_key_file;
	size_t cert_length;

	if (cert[0] == '\0' && key[0] == '\0')
		return 0;
	const char *given = cert[0] ? "tls_cert_file" : "tls_key_file";
	unsigned given_line = cert[0] ? config->prometheus.tls_cert_file_line
				      : config->prometheus.tls_key_file_line;
	char where[VNFS_PATH_MAX + 64];
	key_location(config, given, given_line, where, sizeof(where));
	if (cert[0] == '\0' || key[0] == '\0') {
		snprintf(error, error_size, "%s: TLS needs %s as well (or neither)", where,
			 cert[0] ? "tls_key_file" : "tls_cert_file");
		return -1;
	}
	if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		snprintf(error, error_size,
			 "%s: this libmicrohttpd was built without TLS support; install one built "
			 "with GnuTLS (Debian's is), or remove tls_cert_file and tls_key_file", where);
		return -1;
	}
	if (read_tls_file(config, "tls_cert_file", cert, config->prometheus.tls_cert_file_line,
			  &prometheus->tls_cert, &cert_length, error, error_size) != 0 ||
	    read_tls_file(config, "tls_key_file", key, config->prometheus.tls_key_file_line,
			  &prometheus->tls_key, &prometheus->tls_key_length, error, error_size) != 0)
		return -1;
	return 0;
}

static bool address_is_loopback(const struct sockaddr *address)
{
	if (address->sa_family == AF_INET) {
		const struct sockaddr_in *ipv4 = (const struct sockaddr_in *)address;
		return (ntohl(ipv4->sin_addr.s_addr) >> 24) == 127;
	}
	const struct sockaddr_in6 *ipv6 = (const struct sockaddr_in6 *)address;
	return IN6_IS_ADDR_LOOPBACK(&ipv6->sin6_addr) ||
	       (IN6_IS_ADDR_V4MAPPED(&ipv6->sin6_addr) && ipv6->sin6_addr.s6_addr[12] == 127);
}

/* Job ids, users and tags are not for every host that can reach the port. */
static void warn_exposure(const struct prometheus *prometheus, const struct vnfs_config *config,
			  const struct sockaddr *address)
{
	const char *listen = config->prometheus.listen_address;

	if (address_is_loopback(address))
		return;
	if (prometheus->user_count == 0)
		vnfs_warning("prometheus: /metrics on %s without authentication: any host that "
			     "reaches port %u reads every job (set basic_auth_users, tls_cert_file "
			     "and tls_key_file; docs/METRICS.md)", listen, config->prometheus.port);
	else if (!prometheus->tls_cert)
		vnfs_warning("prometheus: basic auth without TLS on %s: passwords cross the "
			     "network in clear text (set tls_cert_file and tls_key_file)", listen);
}

static unsigned or_default(uint32_t value, unsigned fallback)
{
	return value ? (unsigned)value : fallback;
}

static int start_daemon(struct prometheus *prometheus, const struct vnfs_config *config,
			char *error, size_t error_size)
{
	const char *address = config->prometheus.listen_address;
	struct sockaddr_in6 ipv6 = { .sin6_family = AF_INET6, .sin6_port = htons(config->prometheus.port) };
	struct sockaddr_in ipv4 = { .sin_family = AF_INET, .sin_port = htons(config->prometheus.port) };
	const struct sockaddr *socket_address;
	/*
	 * A thread per connection: a scrape waiting for its rendering holds up no
	 * other.  MHD_USE_ITC: a connection's thread wakes the listening thread as
	 * it ends, so its slot (and its address's) is free at once, not only after
	 * the next connection was accepted, or refused, against the stale count.
	 */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
			 MHD_USE_AUTO | MHD_USE_ERROR_LOG | MHD_USE_ITC;

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

	/* Only with TLS; otherwise the array is just its END. */
	struct MHD_OptionItem tls_options[] = {
		{ MHD_OPTION_HTTPS_MEM_CERT, 0, prometheus->tls_cert },
		{ MHD_OPTION_HTTPS_MEM_KEY, 0, prometheus->tls_key },
		{ MHD_OPTION_END, 0, NULL },
	};
	if (prometheus->tls_cert)
		flags |= MHD_USE_TLS;
	warn_exposure(prometheus, config, socket_address);

	/*
	 * The per-address limit keeps one client (a stuck scraper, a local user
	 * opening connections) from holding every slot of the overall limit;
	 * the timeout frees slots of clients that connect and say nothing.
	 */
	errno = 0;
	prometheus->daemon = MHD_start_daemon(
		flags, config->prometheus.port, NULL, NULL, answer, prometheus,
		MHD_OPTION_EXTERNAL_LOGGER, log_from_microhttpd, NULL,
		MHD_OPTION_SOCK_ADDR, socket_address,
		MHD_OPTION_CONNECTION_LIMIT,
		or_default(config->prometheus.max_connections, DEFAULT_CONNECTION_LIMIT),
		MHD_OPTION_PER_IP_CONNECTION_LIMIT,
		or_default(config->prometheus.max_connections_per_address, DEFAULT_PER_ADDRESS_LIMIT),
		MHD_OPTION_CONNECTION_TIMEOUT,
		or_default(config->prometheus.connection_timeout_s, DEFAULT_CONNECTION_TIMEOUT_S),
		MHD_OPTION_ARRAY, prometheus->tls_cert ? tls_options : &tls_options[2],
		MHD_OPTION_END);
	if (!prometheus->daemon) {
		snprintf(error, error_size, "prometheus: cannot listen on %s port %u%s%s%s", address,
			 config->prometheus.port, errno ? ": " : "", errno ? strerror(errno) : "",
			 prometheus->tls_cert ? " (with TLS: are tls_cert_file and tls_key_file a "
						"PEM certificate and its unencrypted key? see the "
						"message before)" : "");
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
	if (prometheus->tls_key)
		explicit_bzero(prometheus->tls_key, prometheus->tls_key_length);
	free(prometheus->tls_key);
	free(prometheus->tls_cert);
	explicit_bzero(prometheus->users, sizeof(prometheus->users));
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
	if (load_users(prometheus, config, error, error_size) != 0 ||
	    load_tls(prometheus, config, error, error_size) != 0 ||
	    start_daemon(prometheus, config, error, error_size) != 0)
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

unsigned vnfs_sink_prometheus_connections(const struct vnfs_sink *sink)
{
	const struct prometheus *prometheus = sink->state;
	const union MHD_DaemonInfo *info =
		MHD_get_daemon_info(prometheus->daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
	return info ? info->num_connections : 0;
}
