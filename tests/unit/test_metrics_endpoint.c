/*
 * test_metrics_endpoint.c — /metrics secured: HTTP basic auth against bcrypt
 * and yescrypt hashes, TLS, and the connection limits, through the real
 * endpoint (helper/outputs/sink_prometheus.c), the real libmicrohttpd and a real
 * libcurl client on loopback.  vnfs.conf files are real files loaded by the
 * real parser, so config errors are checked as the administrator sees them.
 * The TLS certificate is made at test time by openssl (a self-signed P-256
 * certificate for IP 127.0.0.1), the hashes by libxcrypt with fresh salts.
 */
#include <arpa/inet.h>
#include <crypt.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "lib/config.h"
#include "helper/outputs/metrics.h"
#include "helper/outputs/sink.h"
#include "helper/outputs/sink_prometheus.h"

#define IDLE_MAX 16

struct fixture {
	char directory[64];
	char conf[128], cert[128], key[128]; /* directory/vnfs.conf, cert.pem, key.pem */
	char alice_hash[CRYPT_OUTPUT_SIZE];  /* bcrypt ($2b$05$) of "wonderland" */
	char bob_hash[CRYPT_OUTPUT_SIZE];    /* yescrypt ($y$) of "builder" */
	struct vnfs_config config;
	struct vnfs_sink sink;
	bool sink_open;
	char error[1024];
	int idle[IDLE_MAX];                  /* connections held open, or -1 */
};

struct reply {
	CURLcode code;
	long status;                 /* 0: no HTTP response at all */
	char body[4096];
	size_t body_length;
	char authenticate[256];      /* WWW-Authenticate, or "" */
};

/* Fixture ----------------------------------------------------------------- */

static void make_hash(const char *prefix, unsigned long cost, const char *password,
		      char *out, size_t size)
{
	char setting[CRYPT_GENSALT_OUTPUT_SIZE];
	struct crypt_data *data = calloc(1, sizeof(*data));

	assert_non_null(data);
	/* NULL random bytes: libxcrypt takes them from the kernel. */
	assert_non_null(crypt_gensalt_rn(prefix, cost, NULL, 0, setting, sizeof(setting)));
	assert_true(strncmp(setting, prefix, strlen(prefix)) == 0);
	const char *hash = crypt_rn(password, setting, data, (int)sizeof(*data));
	assert_non_null(hash);
	assert_true(strlen(hash) < size);
	strcpy(out, hash);
	free(data);
}

/* openssl req: a throwaway self-signed certificate for 127.0.0.1. */
static void make_certificate(const struct fixture *fixture)
{
	char command[1024];

	snprintf(command, sizeof(command),
		 "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
		 "-keyout '%s' -out '%s' -days 2 -subj /CN=127.0.0.1 "
		 "-addext subjectAltName=IP:127.0.0.1 2>/dev/null",
		 fixture->key, fixture->cert);
	int status = system(command);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static int setup(void **state)
{
	struct fixture *fixture = calloc(1, sizeof(*fixture));

	if (!fixture)
		return -1;
	snprintf(fixture->directory, sizeof(fixture->directory),
		 "/tmp/vnfs-test-endpoint.XXXXXX");
	if (!mkdtemp(fixture->directory)) {
		free(fixture);
		return -1;
	}
	snprintf(fixture->conf, sizeof(fixture->conf), "%s/vnfs.conf", fixture->directory);
	snprintf(fixture->cert, sizeof(fixture->cert), "%s/cert.pem", fixture->directory);
	snprintf(fixture->key, sizeof(fixture->key), "%s/key.pem", fixture->directory);
	for (int i = 0; i < IDLE_MAX; i++)
		fixture->idle[i] = -1;
	make_certificate(fixture);
	make_hash("$2b$", 5, "wonderland", fixture->alice_hash, sizeof(fixture->alice_hash));
	make_hash("$y$", 0, "builder", fixture->bob_hash, sizeof(fixture->bob_hash));
	*state = fixture;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fixture = *state;

	for (int i = 0; i < IDLE_MAX; i++) {
		if (fixture->idle[i] >= 0)
			close(fixture->idle[i]);
	}
	if (fixture->sink_open)
		fixture->sink.close(fixture->sink.state);
	unlink(fixture->conf);
	unlink(fixture->cert);
	unlink(fixture->key);
	int result = rmdir(fixture->directory);
	free(fixture);
	return result;
}

/*
 * Writes vnfs.conf: the [prometheus] lines given (printf format), after a
 * [helper] interval long enough that every scrape is answered at once
 * (no waiting for a rendering), and loads it with the real parser.
 */
static void __attribute__((format(printf, 2, 3)))
load_config(struct fixture *fixture, const char *format, ...)
{
	FILE *file = fopen(fixture->conf, "w");
	va_list arguments;

	assert_non_null(file);
	assert_true(fputs("[helper]\ninterval = 60s\n[prometheus]\nlisten = 127.0.0.1:9716\n", file) >= 0);
	va_start(arguments, format);
	assert_true(vfprintf(file, format, arguments) >= 0);
	va_end(arguments);
	assert_int_equal(fclose(file), 0);
	fixture->error[0] = '\0';
	int result = vnfs_config_load(&fixture->config, fixture->conf, false, fixture->error,
				      sizeof(fixture->error));
	assert_string_equal(fixture->error, "");
	assert_int_equal(result, 0);
	fixture->config.prometheus.port = 0; /* any free port; the file cannot say 0 */
}

static int open_sink(struct fixture *fixture)
{
	fixture->error[0] = '\0';
	int result = vnfs_sink_prometheus_open(&fixture->sink, &fixture->config, fixture->error,
					       sizeof(fixture->error));
	fixture->sink_open = result == 0;
	return result;
}

static uint16_t port_of(const struct fixture *fixture)
{
	return vnfs_sink_prometheus_port(&fixture->sink);
}

/* libcurl client ---------------------------------------------------------- */

static size_t collect_body(char *data, size_t size, size_t count, void *user)
{
	struct reply *reply = user;
	size_t length = size * count;
	size_t room = sizeof(reply->body) - 1 - reply->body_length;
	size_t kept = length < room ? length : room;

	memcpy(reply->body + reply->body_length, data, kept);
	reply->body_length += kept;
	reply->body[reply->body_length] = '\0';
	return length;
}

static size_t collect_header(char *data, size_t size, size_t count, void *user)
{
	static const char name[] = "WWW-Authenticate:";
	struct reply *reply = user;
	size_t length = size * count;

	if (length > sizeof(name) && strncasecmp(data, name, sizeof(name) - 1) == 0)
		snprintf(reply->authenticate, sizeof(reply->authenticate), "%.*s",
			 (int)(length - sizeof(name) + 1), data + sizeof(name) - 1);
	reply->authenticate[strcspn(reply->authenticate, "\r\n")] = '\0';
	return length;
}

/*
 * One GET with a fresh handle (so no connection is reused: each request
 * counts against the limits, and is closed when it returns).  from: the
 * local address to connect from; userpwd: "name:password" or NULL; ca: the
 * certificate to trust for https, or NULL for the system's.
 */
static struct reply fetch(const char *url, const char *from, const char *userpwd, const char *ca)
{
	struct reply reply = { .code = CURLE_FAILED_INIT };
	CURL *curl = curl_easy_init();

	assert_non_null(curl);
	assert_int_equal(curl_easy_setopt(curl, CURLOPT_URL, url), CURLE_OK);
	assert_int_equal(curl_easy_setopt(curl, CURLOPT_INTERFACE, from), CURLE_OK);
	assert_int_equal(curl_easy_setopt(curl, CURLOPT_TIMEOUT, 10L), CURLE_OK);
	assert_int_equal(curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L), CURLE_OK);
	assert_int_equal(curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect_body), CURLE_OK);
	assert_int_equal(curl_easy_setopt(curl, CURLOPT_WRITEDATA, &reply), CURLE_OK);
	assert_int_equal(curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, collect_header), CURLE_OK);
	assert_int_equal(curl_easy_setopt(curl, CURLOPT_HEADERDATA, &reply), CURLE_OK);
	if (userpwd) {
		assert_int_equal(curl_easy_setopt(curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC),
				 CURLE_OK);
		assert_int_equal(curl_easy_setopt(curl, CURLOPT_USERPWD, userpwd), CURLE_OK);
	}
	if (ca)
		assert_int_equal(curl_easy_setopt(curl, CURLOPT_CAINFO, ca), CURLE_OK);
	reply.code = curl_easy_perform(curl);
	assert_int_equal(curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &reply.status), CURLE_OK);
	curl_easy_cleanup(curl);
	return reply;
}

static struct reply fetch_path(const struct fixture *fixture, const char *scheme,
			       const char *path, const char *from, const char *userpwd)
{
	char url[128];

	snprintf(url, sizeof(url), "%s://127.0.0.1:%u%s", scheme, port_of(fixture), path);
	return fetch(url, from, userpwd, strcmp(scheme, "https") == 0 ? fixture->cert : NULL);
}

static void assert_unauthorized(const struct reply *reply)
{
	assert_int_equal(reply->code, CURLE_OK);
	assert_int_equal(reply->status, 401);
	assert_string_equal(reply->authenticate, " Basic realm=\"vnfs\"");
	assert_string_equal(reply->body, "vnfs-helper: authentication required\n");
}

/* The connection was closed without an answer: curl saw nothing (52) or a
 * reset (56), depending on whether its request was still unread. */
static void assert_no_response(const struct reply *reply)
{
	assert_true(reply->code == CURLE_GOT_NOTHING || reply->code == CURLE_RECV_ERROR);
	assert_int_equal(reply->status, 0);
}

static void assert_metrics(const struct reply *reply)
{
	assert_int_equal(reply->code, CURLE_OK);
	assert_int_equal(reply->status, 200);
	assert_non_null(strstr(reply->body, "# TYPE vnfs_helper_"));
}

/* Basic auth ----------------------------------------------------------------- */

static void test_basic_auth(void **state)
{
	struct fixture *fixture = *state;

	load_config(fixture, "basic_auth_users = alice:%s\nbasic_auth_users = bob:%s\n",
		    fixture->alice_hash, fixture->bob_hash);
	assert_int_equal(open_sink(fixture), 0);

	struct reply reply = fetch_path(fixture, "http", "/metrics", "127.0.0.1", NULL);
	assert_unauthorized(&reply);
	reply = fetch_path(fixture, "http", "/metrics", "127.0.0.1", "alice:wonderlanD");
	assert_unauthorized(&reply);
	reply = fetch_path(fixture, "http", "/metrics", "127.0.0.1", "alice:");
	assert_unauthorized(&reply);
	/* Bob's password is not Alice's, and a stranger's name gets the same 401. */
	reply = fetch_path(fixture, "http", "/metrics", "127.0.0.1", "alice:builder");
	assert_unauthorized(&reply);
	reply = fetch_path(fixture, "http", "/metrics", "127.0.0.1", "mallory:wonderland");
	assert_unauthorized(&reply);
	/* Nothing is answered before authentication, not even "not found". */
	reply = fetch_path(fixture, "http", "/nowhere", "127.0.0.1", NULL);
	assert_unauthorized(&reply);

	reply = fetch_path(fixture, "http", "/metrics", "127.0.0.1", "alice:wonderland");
	assert_metrics(&reply);
	reply = fetch_path(fixture, "http", "/metrics", "127.0.0.1", "bob:builder");
	assert_metrics(&reply);
	reply = fetch_path(fixture, "http", "/nowhere", "127.0.0.1", "bob:builder");
	assert_int_equal(reply.status, 404);
}

/* A $2y$ hash (as htpasswd -B writes) is bcrypt too. */
static void test_basic_auth_2y(void **state)
{
	struct fixture *fixture = *state;
	char hash[CRYPT_OUTPUT_SIZE];

	strcpy(hash, fixture->alice_hash);
	hash[2] = 'y';
	load_config(fixture, "basic_auth_users = alice:%s\n", hash);
	assert_int_equal(open_sink(fixture), 0);
	struct reply reply = fetch_path(fixture, "http", "/metrics", "127.0.0.1", "alice:wonderland");
	assert_metrics(&reply);
	reply = fetch_path(fixture, "http", "/metrics", "127.0.0.1", "alice:wonderlan");
	assert_unauthorized(&reply);
}

/* Without users, no authentication is asked for (the default, on loopback). */
static void test_no_users_no_auth(void **state)
{
	struct fixture *fixture = *state;

	load_config(fixture, "%s", "");
	assert_int_equal(open_sink(fixture), 0);
	struct reply reply = fetch_path(fixture, "http", "/metrics", "127.0.0.1", NULL);
	assert_metrics(&reply);
	assert_string_equal(reply.authenticate, "");
}

/* TLS ---------------------------------------------------------------------- */

static void test_tls(void **state)
{
	struct fixture *fixture = *state;
	char url[128];

	load_config(fixture, "tls_cert_file = %s\ntls_key_file = %s\nbasic_auth_users = alice:%s\n",
		    fixture->cert, fixture->key, fixture->alice_hash);
	assert_int_equal(open_sink(fixture), 0);

	/* The handshake with the test certificate (verified: peer and host). */
	struct reply reply = fetch_path(fixture, "https", "/metrics", "127.0.0.1", "alice:wonderland");
	assert_metrics(&reply);
	reply = fetch_path(fixture, "https", "/metrics", "127.0.0.1", NULL);
	assert_unauthorized(&reply);
	reply = fetch_path(fixture, "https", "/metrics", "127.0.0.1", "alice:wrong");
	assert_unauthorized(&reply);

	/* Plain HTTP to the TLS port: the TLS layer drops it, no HTTP answer at all. */
	reply = fetch_path(fixture, "http", "/metrics", "127.0.0.1", "alice:wonderland");
	assert_no_response(&reply);

	/* The certificate served is the test's: trusting only the system's CAs,
	 * curl refuses it. */
	snprintf(url, sizeof(url), "https://127.0.0.1:%u/metrics", port_of(fixture));
	reply = fetch(url, "127.0.0.1", "alice:wonderland", NULL);
	assert_int_equal(reply.code, CURLE_PEER_FAILED_VERIFICATION);
	assert_int_equal(reply.status, 0);
}

/* Without tls_* keys the port speaks plain HTTP only: https fails. */
static void test_https_to_plain_port_fails(void **state)
{
	struct fixture *fixture = *state;

	load_config(fixture, "%s", "");
	assert_int_equal(open_sink(fixture), 0);
	struct reply reply = fetch_path(fixture, "https", "/metrics", "127.0.0.1", NULL);
	assert_int_equal(reply.code, CURLE_SSL_CONNECT_ERROR);
	assert_int_equal(reply.status, 0);
}

static void write_file(const char *path, const char *text)
{
	FILE *file = fopen(path, "w");

	assert_non_null(file);
	assert_true(fputs(text, file) >= 0);
	assert_int_equal(fclose(file), 0);
}

/* Each unusable file is named with its key and the line that set it. */
static void test_tls_file_errors(void **state)
{
	struct fixture *fixture = *state;
	char expected[1024], missing[160];

	snprintf(missing, sizeof(missing), "%s/missing.pem", fixture->directory);
	load_config(fixture, "tls_cert_file = %s\ntls_key_file = %s\n", missing, fixture->key);
	assert_int_equal(open_sink(fixture), -1);
	snprintf(expected, sizeof(expected),
		 "%s:5: [prometheus] tls_cert_file: cannot read '%s': No such file or directory",
		 fixture->conf, missing);
	assert_string_equal(fixture->error, expected);

	load_config(fixture, "tls_cert_file = %s\n\ntls_key_file = %s\n", fixture->cert,
		    fixture->directory);
	assert_int_equal(open_sink(fixture), -1);
	snprintf(expected, sizeof(expected),
		 "%s:7: [prometheus] tls_key_file: cannot read '%s': not a regular file",
		 fixture->conf, fixture->directory);
	assert_string_equal(fixture->error, expected);

	write_file(missing, "");
	load_config(fixture, "tls_cert_file = %s\ntls_key_file = %s\n", fixture->cert, missing);
	assert_int_equal(open_sink(fixture), -1);
	snprintf(expected, sizeof(expected),
		 "%s:6: [prometheus] tls_key_file: cannot read '%s': the file is empty",
		 fixture->conf, missing);
	assert_string_equal(fixture->error, expected);

	/* Readable but not PEM: libmicrohttpd (GnuTLS) refuses to start. */
	write_file(missing, "not a certificate\n");
	load_config(fixture, "tls_cert_file = %s\ntls_key_file = %s\n", missing, fixture->key);
	assert_int_equal(open_sink(fixture), -1);
	assert_string_equal(fixture->error,
			    "prometheus: cannot listen on 127.0.0.1 port 0 (with TLS: are "
			    "tls_cert_file and tls_key_file a PEM certificate and its unencrypted "
			    "key? see the message before)");
	assert_int_equal(unlink(missing), 0);

	/* Only one of the two: vnfs.conf is refused (and a hand-made config too). */
	FILE *file = fopen(fixture->conf, "w");
	assert_non_null(file);
	assert_true(fprintf(file, "[prometheus]\ntls_key_file = %s\n", fixture->key) > 0);
	assert_int_equal(fclose(file), 0);
	assert_int_equal(vnfs_config_load(&fixture->config, fixture->conf, false, fixture->error,
					  sizeof(fixture->error)), -1);
	snprintf(expected, sizeof(expected),
		 "%s:2: [prometheus] tls_key_file: TLS needs tls_cert_file as well (or neither)",
		 fixture->conf);
	assert_string_equal(fixture->error, expected);
	fixture->config.prometheus.tls_cert_file[0] = '\0';
	snprintf(fixture->config.prometheus.tls_key_file,
		 sizeof(fixture->config.prometheus.tls_key_file), "%s", fixture->key);
	fixture->config.prometheus.tls_key_file_line = 2;
	assert_int_equal(open_sink(fixture), -1);
	assert_string_equal(fixture->error, expected);
}

/* Connection limits ---------------------------------------------------------- */

/* A TCP connection from `from` that sends nothing: a stuck or hostile client. */
static int connect_idle(uint16_t port, const char *from)
{
	struct sockaddr_in local = { .sin_family = AF_INET };
	struct sockaddr_in server = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(inet_pton(AF_INET, from, &local.sin_addr), 1);
	assert_int_equal(inet_pton(AF_INET, "127.0.0.1", &server.sin_addr), 1);
	assert_int_equal(bind(fd, (struct sockaddr *)&local, sizeof(local)), 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&server, sizeof(server)), 0);
	return fd;
}

/* Waits (up to 5 s) until libmicrohttpd holds exactly `count` connections. */
static void wait_for_connections(const struct fixture *fixture, unsigned count)
{
	struct timespec pause = { .tv_nsec = 10 * 1000 * 1000 };

	for (int i = 0; i < 500; i++) {
		if (vnfs_sink_prometheus_connections(&fixture->sink) == count)
			return;
		nanosleep(&pause, NULL);
	}
	assert_int_equal(vnfs_sink_prometheus_connections(&fixture->sink), count);
}

/* Refused: accepted and closed at once, so no HTTP response. */
static void assert_refused(const struct reply *reply)
{
	assert_no_response(reply);
}

static void test_per_address_limit(void **state)
{
	struct fixture *fixture = *state;

	load_config(fixture, "max_connections_per_address = 4\nmax_connections = 16\n");
	assert_int_equal(open_sink(fixture), 0);
	for (int i = 0; i < 4; i++)
		fixture->idle[i] = connect_idle(port_of(fixture), "127.0.0.1");
	wait_for_connections(fixture, 4);

	/* 127.0.0.1 holds its four: another address still scrapes... */
	struct reply reply = fetch_path(fixture, "http", "/metrics", "127.0.0.2", NULL);
	assert_metrics(&reply);
	wait_for_connections(fixture, 4);
	/* ...and a fifth connection from 127.0.0.1 is refused. */
	reply = fetch_path(fixture, "http", "/metrics", "127.0.0.1", NULL);
	assert_refused(&reply);

	/* One of its connections closed: 127.0.0.1 is served again. */
	assert_int_equal(close(fixture->idle[0]), 0);
	fixture->idle[0] = -1;
	wait_for_connections(fixture, 3);
	reply = fetch_path(fixture, "http", "/metrics", "127.0.0.1", NULL);
	assert_metrics(&reply);
}

static void test_overall_limit(void **state)
{
	struct fixture *fixture = *state;

	load_config(fixture, "max_connections_per_address = 2\nmax_connections = 4\n");
	assert_int_equal(open_sink(fixture), 0);
	fixture->idle[0] = connect_idle(port_of(fixture), "127.0.0.1");
	fixture->idle[1] = connect_idle(port_of(fixture), "127.0.0.1");
	fixture->idle[2] = connect_idle(port_of(fixture), "127.0.0.3");
	wait_for_connections(fixture, 3);
	struct reply reply = fetch_path(fixture, "http", "/metrics", "127.0.0.2", NULL);
	assert_metrics(&reply);
	/* That scrape's connection gone, so that the four counted next are the idle ones. */
	wait_for_connections(fixture, 3);

	fixture->idle[3] = connect_idle(port_of(fixture), "127.0.0.3");
	wait_for_connections(fixture, 4);
	reply = fetch_path(fixture, "http", "/metrics", "127.0.0.2", NULL);
	assert_refused(&reply);
}

/* An idle connection is closed after connection_timeout, freeing its slot. */
static void test_connection_timeout(void **state)
{
	struct fixture *fixture = *state;
	char byte;

	load_config(fixture, "max_connections_per_address = 1\nconnection_timeout = 1s\n");
	assert_int_equal(open_sink(fixture), 0);
	fixture->idle[0] = connect_idle(port_of(fixture), "127.0.0.1");
	wait_for_connections(fixture, 1);
	struct reply reply = fetch_path(fixture, "http", "/metrics", "127.0.0.1", NULL);
	assert_refused(&reply);

	struct timeval limit = { .tv_sec = 5 };
	assert_int_equal(setsockopt(fixture->idle[0], SOL_SOCKET, SO_RCVTIMEO, &limit,
				    sizeof(limit)), 0);
	time_t start = time(NULL);
	assert_int_equal(recv(fixture->idle[0], &byte, 1, 0), 0); /* closed by the helper */
	assert_true(time(NULL) - start <= 3);
	wait_for_connections(fixture, 0);
	reply = fetch_path(fixture, "http", "/metrics", "127.0.0.1", NULL);
	assert_metrics(&reply);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_basic_auth, setup, teardown),
		cmocka_unit_test_setup_teardown(test_basic_auth_2y, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_users_no_auth, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_https_to_plain_port_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tls_file_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_per_address_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overall_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connection_timeout, setup, teardown),
	};

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return 1;
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return failed;
}
