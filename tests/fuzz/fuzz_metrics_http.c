/*
 * fuzz_metrics_http.c — libFuzzer target for the /metrics endpoint: every
 * input is sent as raw bytes (request line, headers, Authorization values,
 * URLs, bodies, pipelined requests) to the real endpoint of
 * helper/outputs/sink_prometheus.c, through its listening socket on 127.0.0.1 (the
 * path production takes), and the whole response is read back.
 *
 * A TCP connection per input rather than MHD_add_connection on a
 * socketpair: the same accept, per-address accounting and socket options as
 * a real scraper's, for little more time per input.
 *
 * The endpoint is opened once, with basic auth (a bcrypt and a yescrypt
 * user) so that the credential path is fuzzed too, and the connection
 * limits.  Properties checked on every input, besides the sanitizers':
 * whatever came back starts with an HTTP/1.x status line, and no 200 is
 * ever answered to an input without an Authorization header (no way past
 * the authentication).
 *
 * Build (clang), as tests/fuzz/run-fuzz builds its targets, whose line
 * for this one would be
 *   fuzz_metrics_http|tests/fuzz/fuzz_metrics_http.c helper/outputs/sink_prometheus.c
 *   helper/outputs/metrics.c lib/escape.c lib/log.c lib/tags.c lib/operations.c
 *   lib/record.c|libmicrohttpd zlib libxcrypt|metrics_http.dict|
 *   corpus-metrics_http|16384
 * or by hand, from the top directory:
 *   clang -g -O1 -std=c11 -D_GNU_SOURCE -DPACKAGE_VERSION='"fuzz"' \
 *     -Wall -Wextra -Werror \
 *     -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
 *     -I. $(pkg-config --cflags libmicrohttpd zlib libxcrypt) \
 *     tests/fuzz/fuzz_metrics_http.c helper/outputs/sink_prometheus.c helper/outputs/metrics.c \
 *     lib/escape.c lib/log.c lib/tags.c lib/operations.c lib/record.c \
 *     $(pkg-config --libs libmicrohttpd zlib libxcrypt) -lpthread -lm \
 *     -o fuzz_metrics_http
 * Run (WORKDIR: an empty directory, grown as the corpus):
 *   ./fuzz_metrics_http -max_total_time=60 -timeout=10 -max_len=16384 \
 *     -dict=tests/fuzz/metrics_http.dict WORKDIR tests/fuzz/corpus-metrics_http
 */
#include <arpa/inet.h>
#include <crypt.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/config.h"
#include "helper/outputs/sink.h"
#include "helper/outputs/metrics.h"
#include "helper/outputs/sink_prometheus.h"
#include "lib/log.h"

#define INPUT_MAX 16384      /* well inside loopback TCP buffers: writing never blocks */
#define RESPONSE_MAX (1 << 20)

static struct vnfs_sink sink;
static struct sockaddr_in endpoint; /* 127.0.0.1 and the endpoint's port */
static char *response;

static void die(const char *what)
{
	fprintf(stderr, "fuzz_metrics_http: %s\n", what);
	abort();
}

/* What failed, why, and after how many inputs (a leak shows as a count). */
static void die_errno(const char *what, unsigned inputs)
{
	fprintf(stderr, "fuzz_metrics_http: %s failed after %u inputs: %s\n", what, inputs,
		strerror(errno));
	abort();
}

/* A user "NAME:HASH" entry, hashed here with a fresh salt. */
static void add_user(struct vnfs_config *config, const char *name, const char *prefix,
		     unsigned long cost, const char *password)
{
	char setting[CRYPT_GENSALT_OUTPUT_SIZE];
	struct crypt_data data;

	memset(&data, 0, sizeof(data));
	if (!crypt_gensalt_rn(prefix, cost, NULL, 0, setting, sizeof(setting)))
		die("crypt_gensalt_rn failed");
	const char *hash = crypt_rn(password, setting, &data, (int)sizeof(data));
	size_t slot = config->prometheus.basic_auth_user_count++;
	if (!hash || (size_t)snprintf(config->prometheus.basic_auth_users[slot],
				      sizeof(config->prometheus.basic_auth_users[slot]), "%s:%s",
				      name, hash) >= sizeof(config->prometheus.basic_auth_users[slot]))
		die("cannot hash a password");
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct vnfs_config config;
	char error[512];

	(void)argc;
	(void)argv;
	/* The endpoint's own warnings (malformed requests) would flood the output. */
	vnfs_log_setup("fuzz_metrics_http", VNFS_LOG_PRIORITY_ERROR, 0);
	memset(&config, 0, sizeof(config));
	config.helper.interval_ms = 60000; /* scrapes never wait for a rendering */
	config.prometheus.enabled = true;
	snprintf(config.prometheus.listen_address, sizeof(config.prometheus.listen_address),
		 "127.0.0.1");
	config.prometheus.port = 0;
	config.prometheus.max_series = 1000;
	config.prometheus.max_connections = 64;
	config.prometheus.max_connections_per_address = 64;
	config.prometheus.connection_timeout_s = 5;
	/* Cost 4: the cheapest bcrypt, so that inputs with credentials stay fast. */
	add_user(&config, "alice", "$2b$", 4, "wonderland");
	add_user(&config, "bob", "$y$", 1, "builder");
	if (vnfs_sink_prometheus_open(&sink, &config, error, sizeof(error)) != 0)
		die(error);
	endpoint.sin_family = AF_INET;
	endpoint.sin_port = htons(vnfs_sink_prometheus_port(&sink));
	endpoint.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	response = malloc(RESPONSE_MAX + 1);
	if (!response)
		die("out of memory");
	return 0;
}

static void send_all(int fd, const uint8_t *data, size_t size)
{
	while (size > 0) {
		ssize_t sent = send(fd, data, size, MSG_NOSIGNAL);
		if (sent < 0 && errno == EINTR)
			continue;
		if (sent <= 0)
			return; /* the endpoint closed early (a rejected request): fine */
		data += sent;
		size -= (size_t)sent;
	}
}

/* Everything the endpoint answers, until it closes the connection. */
static size_t read_all(int fd)
{
	size_t used = 0;

	for (;;) {
		struct pollfd ready = { .fd = fd, .events = POLLIN };
		int polled = poll(&ready, 1, 20000);
		if (polled < 0 && errno == EINTR)
			continue; /* libFuzzer's -timeout alarm */
		if (polled <= 0)
			die("the endpoint neither answered nor closed within 20 s");
		ssize_t got = recv(fd, response + used, RESPONSE_MAX - used, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break; /* closed, or reset as it closed with our bytes unread */
		used += (size_t)got;
		if (used == RESPONSE_MAX)
			die("response over 1 MiB");
	}
	response[used] = '\0';
	return used;
}

/* The connection's thread is gone (so each input is done before the next). */
static void wait_until_idle(void)
{
	struct timespec pause = { .tv_nsec = 100 * 1000 };

	for (int i = 0; i < 200000; i++) {
		if (vnfs_sink_prometheus_connections(&sink) == 0)
			return;
		nanosleep(&pause, NULL);
	}
	die("a connection outlived its client by 20 s");
}

static bool contains_nocase(const uint8_t *data, size_t size, const char *needle)
{
	size_t length = strlen(needle);

	for (size_t i = 0; i + length <= size; i++) {
		size_t j = 0;
		while (j < length && tolower(data[i + j]) == needle[j])
			j++;
		if (j == length)
			return true;
	}
	return false;
}

static void check_response(const uint8_t *data, size_t size, size_t length)
{
	if (length > 0 && strncmp(response, "HTTP/1.", 7) != 0)
		die("a response without an HTTP/1.x status line");
	/* Every status line of a pipelined exchange; bodies are text, so strstr. */
	for (const char *status = response; (status = strstr(status, "HTTP/1.")) != NULL;
	     status++) {
		if (strncmp(status + 8, " 200 ", 5) == 0 &&
		    !contains_nocase(data, size, "authorization"))
			die("200 without an Authorization header");
	}
}

/* connect(), finished when libFuzzer's timer signal interrupted it (EINTR
 * after 137,000 to 253,000 inputs): the connection goes on in the kernel,
 * and its result is the socket's error once it is writable. */
static int connect_endpoint(int fd)
{
	struct pollfd writable = { .fd = fd, .events = POLLOUT };
	int error = 0;
	socklen_t length = sizeof(error);

	if (connect(fd, (const struct sockaddr *)&endpoint, sizeof(endpoint)) == 0)
		return 0;
	if (errno != EINTR)
		return -1;
	while (poll(&writable, 1, 20000) < 0)
		if (errno != EINTR)
			return -1;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0)
		return -1;
	errno = error;
	return error == 0 ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > INPUT_MAX)
		return -1; /* not added to the corpus */
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* Closed with a reset, not left in TIME_WAIT: at 1,600 inputs a second
	 * the waiting sockets used up the ephemeral ports within 16 s, and
	 * connect failed with EADDRNOTAVAIL. */
	const struct linger reset = { .l_onoff = 1, .l_linger = 0 };
	/* The server's side of each closed connection waits 60 s in TIME_WAIT
	 * and keeps its client port from reuse: a different loopback source
	 * address for each input (127.1.0.1 to 127.1.0.250) gives each its own
	 * ports, 250 times as many in all. */
	static unsigned inputs;
	struct sockaddr_in source = { .sin_family = AF_INET };
	source.sin_addr.s_addr = htonl(0x7f010000u | (1 + inputs++ % 250));
	if (fd < 0)
		die_errno("socket", inputs);
	if (setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset)) != 0)
		die_errno("setsockopt SO_LINGER", inputs);
	if (bind(fd, (const struct sockaddr *)&source, sizeof(source)) != 0)
		die_errno("bind to a loopback source address", inputs);
	if (connect_endpoint(fd) != 0)
		die_errno("connect to the endpoint", inputs);
	send_all(fd, data, size);
	/* End of the request: the endpoint answers what it has, then closes. */
	if (shutdown(fd, SHUT_WR) != 0)
		die("shutdown failed");
	size_t length = read_all(fd);
	close(fd);
	check_response(data, size, length);
	wait_until_idle();
	return 0;
}
