/*
 * test_config.c — vnfs.conf parsing: defaults, the shipped example file, every
 * value type accepted and rejected with its exact message, lists, the kafka
 * property pass-through, and the file-level errors (missing, unreadable,
 * malformed or overlong line, a key or a section given twice).  Each test writes real files in its own mkdtemp
 * directory and loads them with the real parser and the real libinih.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/config.h"

/* Well-formed crypt(3) hashes (of "secret"; the parser checks only their form). */
#define BCRYPT_TAIL "abcdefghijklmnopqrstuuFJ1nIkDNrGr8rEBDqVcdpXQVQqYKkZa"
#define BCRYPT_HASH "$2b$05$" BCRYPT_TAIL
#define YESCRYPT_HASH "$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o.9agCG9G317fhZg9SqC.5i5rd.RhAtQ7"

struct fixture {
	char directory[64];
	char path[128];          /* directory/vnfs.conf */
	struct vnfs_config config;
	char error[1024];
};

static int setup(void **state)
{
	struct fixture *fixture = calloc(1, sizeof(*fixture));

	if (!fixture)
		return -1;
	snprintf(fixture->directory, sizeof(fixture->directory), "/tmp/vnfs-test-config.XXXXXX");
	if (!mkdtemp(fixture->directory)) {
		free(fixture);
		return -1;
	}
	snprintf(fixture->path, sizeof(fixture->path), "%s/vnfs.conf", fixture->directory);
	*state = fixture;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fixture = *state;

	unlink(fixture->path);
	int result = rmdir(fixture->directory);
	free(fixture);
	return result;
}

static void write_config(struct fixture *fixture, const char *text)
{
	FILE *file = fopen(fixture->path, "w");

	assert_non_null(file);
	assert_int_equal(fputs(text, file) >= 0, 1);
	assert_int_equal(fclose(file), 0);
}

/* Loads text; on failure *config must be left exactly as it was. */
static int load_text(struct fixture *fixture, const char *text)
{
	struct vnfs_config before;

	write_config(fixture, text);
	memcpy(&before, &fixture->config, sizeof(before));
	fixture->error[0] = '\0';
	int result = vnfs_config_load(&fixture->config, fixture->path, false, fixture->error,
				      sizeof(fixture->error));
	if (result != 0)
		assert_memory_equal(&before, &fixture->config, sizeof(before));
	return result;
}

static void assert_defaults(const struct vnfs_config *config)
{
	assert_string_equal(config->report.history, "");
	assert_string_equal(config->helper.socket_path, "/run/vnfs/vnfs.sock");
	assert_int_equal(config->helper.socket_mode, 0666);
	assert_int_equal(config->helper.interval_ms, 1000);
	assert_string_equal(config->helper.state_dir, "/var/lib/vnfs");
	assert_string_equal(config->helper.pin_dir, "/sys/fs/bpf/vnfs");
	assert_string_equal(config->helper.report_dir, "/var/lib/vnfs/reports");
	assert_string_equal(config->helper.node_name, "");
	assert_int_equal(config->helper.log_target, VNFS_LOG_STDERR);
	assert_int_equal(config->helper.log_level, VNFS_LOG_INFO);
	assert_int_equal(config->helper.probe_mode, VNFS_PROBE_AUTO);
	assert_int_equal(config->helper.finished_job_grace_s, 300);
	assert_int_equal(config->helper.max_message_bytes, 65536);
	assert_int_equal(config->helper.max_steps_per_job, 256);
	assert_int_equal(config->helper.max_steps_per_user, 512);

	assert_true(config->sqlite.enabled);
	assert_string_equal(config->sqlite.path, "/var/lib/vnfs/history.db");
	assert_int_equal(config->sqlite.retention_days, 90);
	assert_int_equal(config->sqlite.write_interval_s, 30);

	assert_true(config->prometheus.enabled);
	assert_string_equal(config->prometheus.listen_address, "127.0.0.1");
	assert_int_equal(config->prometheus.port, 9716);
	assert_int_equal(config->prometheus.grace_period_s, 300);
	assert_int_equal(config->prometheus.max_series, 200000);
	assert_int_equal(config->prometheus.tag_label_count, 0);
	assert_int_equal(config->prometheus.max_connections, 64);
	assert_int_equal(config->prometheus.max_connections_per_address, 8);
	assert_int_equal(config->prometheus.connection_timeout_s, 30);
	assert_string_equal(config->prometheus.tls_cert_file, "");
	assert_string_equal(config->prometheus.tls_key_file, "");
	assert_int_equal(config->prometheus.tls_cert_file_line, 0);
	assert_int_equal(config->prometheus.basic_auth_user_count, 0);

	assert_false(config->jsonlog.enabled);
	assert_string_equal(config->jsonlog.path, "/var/log/vnfs/vnfs.jsonl");
	assert_int_equal(config->jsonlog.max_bytes, 100 * 1024 * 1024);
	assert_int_equal(config->jsonlog.keep, 5);

	assert_false(config->kafka.enabled);
	assert_string_equal(config->kafka.brokers, "");
	assert_string_equal(config->kafka.topic, "vnfs");
	assert_int_equal(config->kafka.queue_limit, 100000);
	assert_int_equal(config->kafka.property_count, 0);

	assert_false(config->http.enabled);
	assert_string_equal(config->http.url, "");
	assert_int_equal(config->http.header_count, 0);
	assert_int_equal(config->http.timeout_ms, 5000);
	assert_int_equal(config->http.batch_records, 500);
	assert_int_equal(config->http.buffer_records, 100000);
	assert_int_equal(config->http.retry_max, 5);
	assert_int_equal(config->http.retry_backoff_ms, 1000);
}

static void test_defaults(void **state)
{
	struct fixture *fixture = *state;

	memset(&fixture->config, 0x5a, sizeof(fixture->config));
	vnfs_config_defaults(&fixture->config);
	assert_defaults(&fixture->config);
	assert_string_equal(fixture->config.source_path, "");
}

/* The shipped etc/vnfs.conf lists every key with its default and changes nothing. */
static void test_example_file_is_defaults(void **state)
{
	struct fixture *fixture = *state;
	const char *example = VNFS_SOURCE_DIR "/etc/vnfs.conf";
	struct vnfs_config defaults;

	int result = vnfs_config_load(&fixture->config, example, false, fixture->error,
				      sizeof(fixture->error));
	assert_string_equal(fixture->error, "");
	assert_int_equal(result, 0);
	assert_string_equal(fixture->config.source_path, example);
	assert_defaults(&fixture->config);

	vnfs_config_defaults(&defaults);
	snprintf(defaults.source_path, sizeof(defaults.source_path), "%s", example);
	assert_memory_equal(&defaults, &fixture->config, sizeof(defaults));
}

static void test_missing_file(void **state)
{
	struct fixture *fixture = *state;
	char expected[256];

	fixture->config.helper.interval_ms = 12345;
	assert_int_equal(vnfs_config_load(&fixture->config, fixture->path, false, fixture->error,
					  sizeof(fixture->error)), -1);
	snprintf(expected, sizeof(expected), "%s: cannot open: No such file or directory",
		 fixture->path);
	assert_string_equal(fixture->error, expected);
	assert_int_equal(fixture->config.helper.interval_ms, 12345);

	/* missing_ok: the defaults, from no file. */
	fixture->error[0] = '\0';
	assert_int_equal(vnfs_config_load(&fixture->config, fixture->path, true, fixture->error,
					  sizeof(fixture->error)), 0);
	assert_string_equal(fixture->error, "");
	assert_defaults(&fixture->config);
	assert_string_equal(fixture->config.source_path, "");
}

static void test_unreadable_file(void **state)
{
	struct fixture *fixture = *state;
	char expected[256];

	/* A directory opens but cannot be read. */
	assert_int_equal(vnfs_config_load(&fixture->config, fixture->directory, true,
					  fixture->error, sizeof(fixture->error)), -1);
	snprintf(expected, sizeof(expected), "%s: cannot read: Is a directory",
		 fixture->directory);
	assert_string_equal(fixture->error, expected);
}

static void test_every_type_accepted(void **state)
{
	struct fixture *fixture = *state;
	struct vnfs_config *config = &fixture->config;

	int result = load_text(fixture,
		"; a comment\n"
		"[helper]\n"
		"socket = /tmp/x.sock\n"
		"socket_mode = 660\n"
		"interval = 500ms\n"
		"state_dir = /srv/vnfs\n"
		"pin_dir = /sys/fs/bpf/other\n"
		"report_dir = /srv/reports\n"
		"node_name = node-01.cluster_a\n"
		"log = syslog\n"
		"log_level = debug\n"
		"probes = kprobe\n"
		"finished_job_grace = 2m\n"
		"max_message_bytes = 1M\n"
		"[sqlite]\n"
		"enabled = no\n"
		"path = /srv/h.db\n"
		"retention_days = 0\n"
		"[prometheus]\n"
		"enabled = OFF\n"
		"listen = [::1]:9100\n"
		"grace_period = 1h\n"
		"max_series = 1\n"
		"tag_labels = PROJECT_NAME, EXPERIMENT\n"
		"[jsonlog]\n"
		"enabled = on\n"
		"path = /srv/log.jsonl\n"
		"max_size = 1g\n"
		"keep = 0\n"
		"[kafka]\n"
		"topic = vnfs.io-stats_1\n"
		"queue_limit = 10\n"
		"[http]\n"
		"url = http://collector:8080/in\n"
		"timeout = 100ms\n"
		"batch_records = 1\n"
		"buffer_records = 10000000\n"
		"retry_max = 0\n"
		"retry_backoff = 10m\n"
		"[report]\n"
		"history = postgresql://db.example.org/vnfs?sslmode=verify-full\n");
	assert_string_equal(fixture->error, "");
	assert_int_equal(result, 0);

	assert_string_equal(config->helper.socket_path, "/tmp/x.sock");
	assert_int_equal(config->helper.socket_mode, 0660);
	assert_int_equal(config->helper.interval_ms, 500);
	assert_string_equal(config->helper.state_dir, "/srv/vnfs");
	assert_string_equal(config->helper.pin_dir, "/sys/fs/bpf/other");
	assert_string_equal(config->helper.report_dir, "/srv/reports");
	assert_string_equal(config->helper.node_name, "node-01.cluster_a");
	assert_int_equal(config->helper.log_target, VNFS_LOG_SYSLOG);
	assert_int_equal(config->helper.log_level, VNFS_LOG_DEBUG);
	assert_int_equal(config->helper.probe_mode, VNFS_PROBE_KPROBE);
	assert_int_equal(config->helper.finished_job_grace_s, 120);
	assert_int_equal(config->helper.max_message_bytes, 1048576);
	assert_false(config->sqlite.enabled);
	assert_string_equal(config->sqlite.path, "/srv/h.db");
	assert_int_equal(config->sqlite.retention_days, 0);
	assert_false(config->prometheus.enabled);
	assert_string_equal(config->prometheus.listen_address, "::1");
	assert_int_equal(config->prometheus.port, 9100);
	assert_int_equal(config->prometheus.grace_period_s, 3600);
	assert_int_equal(config->prometheus.max_series, 1);
	assert_int_equal(config->prometheus.tag_label_count, 2);
	assert_string_equal(config->prometheus.tag_labels[0], "PROJECT_NAME");
	assert_string_equal(config->prometheus.tag_labels[1], "EXPERIMENT");
	assert_true(config->jsonlog.enabled);
	assert_string_equal(config->jsonlog.path, "/srv/log.jsonl");
	assert_int_equal(config->jsonlog.max_bytes, 1024ull * 1024 * 1024);
	assert_int_equal(config->jsonlog.keep, 0);
	assert_string_equal(config->kafka.topic, "vnfs.io-stats_1");
	assert_int_equal(config->kafka.queue_limit, 10);
	assert_string_equal(config->http.url, "http://collector:8080/in");
	assert_int_equal(config->http.timeout_ms, 100);
	assert_int_equal(config->http.batch_records, 1);
	assert_int_equal(config->http.buffer_records, 10000000);
	assert_int_equal(config->http.retry_max, 0);
	assert_int_equal(config->http.retry_backoff_ms, 600000);
	assert_string_equal(config->report.history,
			    "postgresql://db.example.org/vnfs?sslmode=verify-full");
	assert_string_equal(config->source_path, fixture->path);
	/* A path, and postgres:// (libpq's other spelling), are histories too. */
	assert_int_equal(load_text(fixture, "[report]\nhistory = /srv/h.db\n"), 0);
	assert_string_equal(config->report.history, "/srv/h.db");
	assert_int_equal(load_text(fixture, "[report]\nhistory = postgres:///vnfs\n"), 0);
	assert_string_equal(config->report.history, "postgres:///vnfs");
}

static void test_value_spellings(void **state)
{
	struct fixture *fixture = *state;
	struct vnfs_config *config = &fixture->config;

	assert_int_equal(load_text(fixture, "[jsonlog]\nenabled = YES\nmax_size = 64k\n"), 0);
	assert_true(config->jsonlog.enabled);
	assert_int_equal(config->jsonlog.max_bytes, 65536);
	assert_int_equal(load_text(fixture, "[jsonlog]\nenabled = 1\nmax_size = 1T\n"), 0);
	assert_true(config->jsonlog.enabled);
	assert_int_equal(config->jsonlog.max_bytes, 1024ull * 1024 * 1024 * 1024);
	assert_int_equal(load_text(fixture, "[jsonlog]\nenabled = False\nmax_size = 65536\n"), 0);
	assert_false(config->jsonlog.enabled);
	assert_int_equal(config->jsonlog.max_bytes, 65536);
	assert_int_equal(load_text(fixture, "[helper]\ninterval = 7\n"), 0);
	assert_int_equal(config->helper.interval_ms, 7000); /* a plain number is seconds */
	assert_int_equal(load_text(fixture, "[helper]\ninterval = 1h\nsocket_mode = 0\n"), 0);
	assert_int_equal(config->helper.interval_ms, 3600000);
	assert_int_equal(config->helper.socket_mode, 0);
	assert_int_equal(load_text(fixture, "[prometheus]\nlisten = 0.0.0.0:65535\n"), 0);
	assert_string_equal(config->prometheus.listen_address, "0.0.0.0");
	assert_int_equal(config->prometheus.port, 65535);
	assert_int_equal(load_text(fixture, "[prometheus]\nlisten = [::]:1\n"), 0);
	assert_string_equal(config->prometheus.listen_address, "::");
	assert_int_equal(config->prometheus.port, 1);
	/* Each load starts from the defaults, not from the previous file. */
	assert_int_equal(load_text(fixture, "[sqlite]\nretention_days = 36500\n"), 0);
	assert_int_equal(config->sqlite.retention_days, 36500);
	assert_int_equal(config->prometheus.port, 9716);
	assert_int_equal(config->helper.interval_ms, 1000);
}

/* A comma list on its line; header, one entry per line, repeats and adds. */
static void test_lists(void **state)
{
	struct fixture *fixture = *state;
	struct vnfs_config *config = &fixture->config;

	int result = load_text(fixture,
		"[prometheus]\n"
		"tag_labels = A, B,C\n"
		"[http]\n"
		"header = Authorization: Bearer abc.def\n"
		"header =\n"
		"header = X-Cluster: hpc1\n");
	assert_string_equal(fixture->error, "");
	assert_int_equal(result, 0);
	assert_int_equal(config->prometheus.tag_label_count, 3);
	assert_string_equal(config->prometheus.tag_labels[0], "A");
	assert_string_equal(config->prometheus.tag_labels[1], "B");
	assert_string_equal(config->prometheus.tag_labels[2], "C");
	assert_int_equal(config->http.header_count, 2);
	assert_string_equal(config->http.headers[0], "Authorization: Bearer abc.def");
	assert_string_equal(config->http.headers[1], "X-Cluster: hpc1");
}

/* basic_auth_users: a list on one line, the key repeated, both spellings of bcrypt. */
static void test_basic_auth_users(void **state)
{
	struct fixture *fixture = *state;
	struct vnfs_config *config = &fixture->config;

	int result = load_text(fixture,
		"[prometheus]\n"
		"basic_auth_users =\n"
		"basic_auth_users = alice:" BCRYPT_HASH ", bob.b@x-1:$2y$10$" BCRYPT_TAIL "\n"
		"basic_auth_users = carol:" YESCRYPT_HASH "\n"
		"max_connections = 16\n"
		"max_connections_per_address = 2\n"
		"connection_timeout = 5s\n"
		"tls_cert_file = /etc/vnfs/tls/cert.pem\n"
		"tls_key_file = /etc/vnfs/tls/key.pem\n");
	assert_string_equal(fixture->error, "");
	assert_int_equal(result, 0);
	assert_int_equal(config->prometheus.basic_auth_user_count, 3);
	assert_string_equal(config->prometheus.basic_auth_users[0], "alice:" BCRYPT_HASH);
	assert_string_equal(config->prometheus.basic_auth_users[1], "bob.b@x-1:$2y$10$" BCRYPT_TAIL);
	assert_string_equal(config->prometheus.basic_auth_users[2], "carol:" YESCRYPT_HASH);
	assert_int_equal(config->prometheus.max_connections, 16);
	assert_int_equal(config->prometheus.max_connections_per_address, 2);
	assert_int_equal(config->prometheus.connection_timeout_s, 5);
	assert_string_equal(config->prometheus.tls_cert_file, "/etc/vnfs/tls/cert.pem");
	assert_string_equal(config->prometheus.tls_key_file, "/etc/vnfs/tls/key.pem");
	/* The lines the helper names when it cannot read the files. */
	assert_int_equal(config->prometheus.tls_cert_file_line, 8);
	assert_int_equal(config->prometheus.tls_key_file_line, 9);
}

static void test_list_limit(void **state)
{
	struct fixture *fixture = *state;
	char text[512] = "[prometheus]\ntag_labels = T0";
	char expected[256];

	for (int i = 1; i < VNFS_CONFIG_MAX_LIST; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), ",T%d", i);
	strcat(text, "\n");
	assert_int_equal(load_text(fixture, text), 0);
	assert_int_equal(fixture->config.prometheus.tag_label_count, VNFS_CONFIG_MAX_LIST);
	assert_string_equal(fixture->config.prometheus.tag_labels[31], "T31");

	strcpy(text + strlen(text) - 1, ",ONE_MORE\n");
	assert_int_equal(load_text(fixture, text), -1);
	snprintf(expected, sizeof(expected),
		 "%s:2: [prometheus] tag_labels: too many entries (allowed: at most 32)",
		 fixture->path);
	assert_string_equal(fixture->error, expected);
}

static void test_kafka_properties(void **state)
{
	struct fixture *fixture = *state;
	struct vnfs_config *config = &fixture->config;

	int result = load_text(fixture,
		"[kafka]\n"
		"property.compression.codec = zstd\n"
		"property.acks = all\n"
		"property.sasl.password = p=a:s;s\n");
	assert_string_equal(fixture->error, "");
	assert_int_equal(result, 0);
	assert_int_equal(config->kafka.property_count, 3);
	assert_string_equal(config->kafka.properties[0].key, "compression.codec");
	assert_string_equal(config->kafka.properties[0].value, "zstd");
	assert_string_equal(config->kafka.properties[1].key, "acks");
	assert_string_equal(config->kafka.properties[1].value, "all");
	assert_string_equal(config->kafka.properties[2].key, "sasl.password");
	assert_string_equal(config->kafka.properties[2].value, "p=a:s;s");
}

static void test_enabled_sinks(void **state)
{
	struct fixture *fixture = *state;
	char expected[256];

	int result = load_text(fixture,
		"[kafka]\nenabled = true\nbrokers = k1:9092,k2:9092\n"
		"[http]\nenabled = true\nurl = https://c.example.org/vnfs\n");
#if defined(HAVE_KAFKA) && defined(HAVE_CURL)
	assert_string_equal(fixture->error, "");
	assert_int_equal(result, 0);
	assert_true(fixture->config.kafka.enabled);
	assert_string_equal(fixture->config.kafka.brokers, "k1:9092,k2:9092");
	assert_true(fixture->config.http.enabled);
	assert_string_equal(fixture->config.http.url, "https://c.example.org/vnfs");
#elif !defined(HAVE_KAFKA)
	assert_int_equal(result, -1);
	snprintf(expected, sizeof(expected), "%s:2: [kafka] enabled: this vnfs was built "
		 "without Kafka support (configure --with-kafka)", fixture->path);
	assert_string_equal(fixture->error, expected);
#else
	assert_int_equal(result, -1);
	snprintf(expected, sizeof(expected), "%s:5: [http] enabled: this vnfs was built "
		 "without HTTP support (configure --with-curl)", fixture->path);
	assert_string_equal(fixture->error, expected);
#endif
	(void)expected;
}

struct bad_case {
	const char *text;
	const char *message;    /* what follows the file name */
};

static const struct bad_case bad_cases[] = {
	/* unknown key, section; a key before any section */
	{ "[helper]\n\n\nintervall = 1s\n",
	  ":4: [helper] intervall: unknown key (keys in [helper]: socket, socket_mode, interval, "
	  "state_dir, pin_dir, report_dir, node_name, log, log_level, probes, "
	  "kprobe_calls_in_flight, count_rpcs, finished_job_grace, max_message_bytes, "
	  "admin_group, max_clients, max_clients_per_user, max_steps_per_job, "
	  "max_steps_per_user)" },
	{ "[kafka]\nproperty = x\n",
	  ":2: [kafka] property: unknown key (keys in [kafka]: enabled, brokers, topic, "
	  "queue_limit, property.NAME)" },
	{ "[promethus]\nlisten = 127.0.0.1:9716\n",
	  ":2: [promethus] listen: unknown section (sections: helper, containers, environment, sqlite, prometheus, "
	  "jsonlog, kafka, http, postgresql, report, slurm_accounting)" },
	{ "interval = 1s\n",
	  ":1: interval: key outside a section (sections: helper, containers, environment, sqlite, prometheus, jsonlog, "
	  "kafka, http, postgresql, report, slurm_accounting)" },
	/* a history vnfs-report reads */
	{ "[report]\nhistory = db.example.org/vnfs\n",
	  ":2: [report] history: 'db.example.org/vnfs' is not a history (allowed: empty for "
	  "[sqlite] path, an absolute path, or a postgresql:// URI)" },
	{ "[report]\nhistory = host=db dbname=vnfs\n",
	  ":2: [report] history: 'host=db dbname=vnfs' is not a history (allowed: empty for "
	  "[sqlite] path, an absolute path, or a postgresql:// URI)" },
	/* bool */
	{ "[sqlite]\nenabled = maybe\n",
	  ":2: [sqlite] enabled: 'maybe' is not a boolean (allowed: true, false, yes, no, on, "
	  "off, 1, 0)" },
	{ "[sqlite]\nenabled =\n",
	  ":2: [sqlite] enabled: '' is not a boolean (allowed: true, false, yes, no, on, off, 1, "
	  "0)" },
	/* duration */
	{ "# comment\n\n[helper]\n\n\n\ninterval = 5x\n",
	  ":7: [helper] interval: '5x' is not a duration (use e.g. 1s, 500ms, 2m)" },
	{ "[helper]\ninterval = 1.5s\n",
	  ":2: [helper] interval: '1.5s' is not a duration (use e.g. 1s, 500ms, 2m)" },
	{ "[helper]\ninterval = -1s\n",
	  ":2: [helper] interval: '-1s' is not a duration (use e.g. 1s, 500ms, 2m)" },
	{ "[helper]\ninterval = 99999999999999999999s\n",
	  ":2: [helper] interval: '99999999999999999999s' is not a duration (use e.g. 1s, 500ms, 2m)" },
	{ "[helper]\ninterval = 50ms\n",
	  ":2: [helper] interval: '50ms' is out of range (allowed: 100ms to 1h)" },
	{ "[helper]\ninterval = 61m\n",
	  ":2: [helper] interval: '61m' is out of range (allowed: 100ms to 1h)" },
	{ "[helper]\nfinished_job_grace = 1500ms\n",
	  ":2: [helper] finished_job_grace: '1500ms' is not a whole number of seconds (use e.g. "
	  "30s, 5m)" },
	{ "[prometheus]\ngrace_period = 8d\n",
	  ":2: [prometheus] grace_period: '8d' is out of range (allowed: 0s to 7d)" },
	/* uint */
	{ "[prometheus]\nmax_series = 0\n",
	  ":2: [prometheus] max_series: '0' is out of range (allowed: 1 to 100000000)" },
	{ "[sqlite]\nretention_days = -1\n",
	  ":2: [sqlite] retention_days: '-1' is not a whole number (use e.g. 90)" },
	{ "[sqlite]\nretention_days = 99999999999999999999999\n",
	  ":2: [sqlite] retention_days: '99999999999999999999999' is not a whole number (use "
	  "e.g. 90)" },
	{ "[http]\nretry_max = 5 times\n",
	  ":2: [http] retry_max: '5 times' is not a whole number (use e.g. 5)" },
	/* size */
	{ "[jsonlog]\nmax_size = 10X\n",
	  ":2: [jsonlog] max_size: '10X' is not a size (use e.g. 4096, 64K, 100M, 1G)" },
	{ "[jsonlog]\nmax_size = 10MB\n",
	  ":2: [jsonlog] max_size: '10MB' is not a size (use e.g. 4096, 64K, 100M, 1G)" },
	{ "[jsonlog]\nmax_size = 1K\n",
	  ":2: [jsonlog] max_size: '1K' is out of range (allowed: 64K to 1T)" },
	{ "[helper]\nmax_message_bytes = 4095\n",
	  ":2: [helper] max_message_bytes: '4095' is out of range (allowed: 4K to 16M)" },
	{ "[helper]\nmax_steps_per_job = 0\n",
	  ":2: [helper] max_steps_per_job: '0' is out of range (allowed: 1 to 1024)" },
	{ "[helper]\nmax_steps_per_user = 1025\n",
	  ":2: [helper] max_steps_per_user: '1025' is out of range (allowed: 1 to 1024)" },
	{ "[helper]\nkprobe_calls_in_flight = 4097\n",
	  ":2: [helper] kprobe_calls_in_flight: '4097' is out of range (allowed: 0 to 4096)" },
	{ "[helper]\nkprobe_calls_in_flight = -1\n",
	  ":2: [helper] kprobe_calls_in_flight: '-1' is not a whole number (use e.g. 1024)" },
	/* octal mode */
	{ "[helper]\nsocket_mode = 0999\n",
	  ":2: [helper] socket_mode: '0999' is not an octal mode (use e.g. 0666, 0660)" },
	{ "[helper]\nsocket_mode = 1777\n",
	  ":2: [helper] socket_mode: '1777' is out of range (allowed: 0000 to 0777)" },
	/* enum */
	{ "[helper]\nlog = file\n",
	  ":2: [helper] log: unknown value 'file' (allowed: stderr, syslog)" },
	{ "[helper]\nlog_level = Info\n",
	  ":2: [helper] log_level: unknown value 'Info' (allowed: error, warning, info, debug)" },
	{ "[helper]\nprobes = tracepoint\n",
	  ":2: [helper] probes: unknown value 'tracepoint' (allowed: auto, fentry, kprobe)" },
	/* bounded strings and names */
	{ "[helper]\nnode_name = xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n",
	  ":2: [helper] node_name: value of 70 characters is too long (allowed: at most 64)" },
	{ "[helper]\nnode_name = \"\"\n",
	  ":2: [helper] node_name: '\"\"' is not a name (allowed: letters, digits, '.', '_' and '-')" },
	{ "[kafka]\ntopic =\n", ":2: [kafka] topic: must not be empty" },
	{ "[helper]\nsocket = /run/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.sock\n",
	  ":2: [helper] socket: value of 117 characters is too long (allowed: at most 107)" },
	/* path */
	{ "[sqlite]\npath = history.db\n",
	  ":2: [sqlite] path: 'history.db' is not an absolute path (allowed: a path starting with /)" },
	{ "[helper]\nstate_dir =\n",
	  ":2: [helper] state_dir: '' is not an absolute path (allowed: a path starting with /)" },
	/* listen */
	{ "[prometheus]\nlisten = localhost:9716\n",
	  ":2: [prometheus] listen: 'localhost:9716' is not an address:port (use e.g. "
	  "127.0.0.1:9716, [::1]:9716, 0.0.0.0:9716)" },
	{ "[prometheus]\nlisten = ::1:9716\n",
	  ":2: [prometheus] listen: '::1:9716' is not an address:port (use e.g. 127.0.0.1:9716, "
	  "[::1]:9716, 0.0.0.0:9716)" },
	{ "[prometheus]\nlisten = 127.0.0.1\n",
	  ":2: [prometheus] listen: '127.0.0.1' is not an address:port (use e.g. 127.0.0.1:9716, "
	  "[::1]:9716, 0.0.0.0:9716)" },
	{ "[prometheus]\nlisten = [::1]9716\n",
	  ":2: [prometheus] listen: '[::1]9716' is not an address:port (use e.g. 127.0.0.1:9716, "
	  "[::1]:9716, 0.0.0.0:9716)" },
	{ "[prometheus]\nlisten = [127.0.0.1]:9716\n",
	  ":2: [prometheus] listen: '[127.0.0.1]:9716' is not an address:port (use e.g. "
	  "127.0.0.1:9716, [::1]:9716, 0.0.0.0:9716)" },
	{ "[prometheus]\nlisten = 127.0.0.1:http\n",
	  ":2: [prometheus] listen: '127.0.0.1:http' is not an address:port (use e.g. "
	  "127.0.0.1:9716, [::1]:9716, 0.0.0.0:9716)" },
	{ "[prometheus]\nlisten = 127.0.0.1:0\n",
	  ":2: [prometheus] listen: '127.0.0.1:0' has no valid port (allowed: 1 to 65535)" },
	{ "[prometheus]\nlisten = [::1]:65536\n",
	  ":2: [prometheus] listen: '[::1]:65536' has no valid port (allowed: 1 to 65535)" },
	/* tag labels */
	{ "[prometheus]\ntag_labels = PROJECT, MY-TAG\n",
	  ":2: [prometheus] tag_labels: 'MY-TAG' is not a tag name (allowed: letters, digits and "
	  "'_', not starting with a digit, at most 64 characters)" },
	{ "[prometheus]\ntag_labels = 1ST\n",
	  ":2: [prometheus] tag_labels: '1ST' is not a tag name (allowed: letters, digits and "
	  "'_', not starting with a digit, at most 64 characters)" },
	{ "[prometheus]\ntag_labels = A,,B\n",
	  ":2: [prometheus] tag_labels: '' is not a tag name (allowed: letters, digits and '_', "
	  "not starting with a digit, at most 64 characters)" },
	{ "[prometheus]\ntag_labels = A, B, A\n",
	  ":2: [prometheus] tag_labels: 'A' is listed twice" },
	/* [prometheus] connection limits, TLS and basic auth */
	{ "[prometheus]\nmax_connections = 1\n",
	  ":2: [prometheus] max_connections: '1' is out of range (allowed: 2 to 4096)" },
	{ "[prometheus]\nmax_connections_per_address = 0\n",
	  ":2: [prometheus] max_connections_per_address: '0' is out of range (allowed: 1 to 4096)" },
	{ "[prometheus]\nconnection_timeout = 0s\n",
	  ":2: [prometheus] connection_timeout: '0s' is out of range (allowed: 1s to 1h)" },
	{ "[prometheus]\ntls_cert_file = cert.pem\n",
	  ":2: [prometheus] tls_cert_file: 'cert.pem' is not an absolute path (allowed: a path "
	  "starting with /)" },
	{ "[prometheus]\n\ntls_cert_file = /etc/vnfs/cert.pem\n",
	  ":3: [prometheus] tls_cert_file: TLS needs tls_key_file as well (or neither)" },
	{ "[prometheus]\ntls_cert_file =\ntls_key_file = /k.pem\n",
	  ":3: [prometheus] tls_key_file: TLS needs tls_cert_file as well (or neither)" },
	{ "[prometheus]\nbasic_auth_users = alice\n",
	  ":2: [prometheus] basic_auth_users: 'alice' is not NAME:HASH (NAME: 1 to 64 letters, "
	  "digits, '.', '_', '@', '-')" },
	{ "[prometheus]\nbasic_auth_users = :" BCRYPT_HASH "\n",
	  ":2: [prometheus] basic_auth_users: ':" BCRYPT_HASH "' is not NAME:HASH (NAME: 1 to "
	  "64 letters, digits, '.', '_', '@', '-')" },
	{ "[prometheus]\nbasic_auth_users = alice:secret\n",
	  ":2: [prometheus] basic_auth_users: user 'alice': the hash is not bcrypt ($2b$, $2y$) "
	  "or yescrypt ($y$) in crypt(3) form (make one with htpasswd -nBC 10 alice)" },
	{ "[prometheus]\nbasic_auth_users = alice:$1$abcdefgh$0123456789abcdefghijkl\n",
	  ":2: [prometheus] basic_auth_users: user 'alice': the hash is not bcrypt ($2b$, $2y$) "
	  "or yescrypt ($y$) in crypt(3) form (make one with htpasswd -nBC 10 alice)" },
	{ "[prometheus]\nbasic_auth_users = alice:$2b$03$" BCRYPT_TAIL "\n",
	  ":2: [prometheus] basic_auth_users: user 'alice': the hash is not bcrypt ($2b$, $2y$) "
	  "or yescrypt ($y$) in crypt(3) form (make one with htpasswd -nBC 10 alice)" },
	{ "[prometheus]\nbasic_auth_users = alice:" BCRYPT_HASH "x\n",
	  ":2: [prometheus] basic_auth_users: user 'alice': the hash is not bcrypt ($2b$, $2y$) "
	  "or yescrypt ($y$) in crypt(3) form (make one with htpasswd -nBC 10 alice)" },
	{ "[prometheus]\nbasic_auth_users = bob:$y$j9T$salt\n",
	  ":2: [prometheus] basic_auth_users: user 'bob': the hash is not bcrypt ($2b$, $2y$) "
	  "or yescrypt ($y$) in crypt(3) form (make one with htpasswd -nBC 10 bob)" },
	{ "[prometheus]\nbasic_auth_users = alice:" BCRYPT_HASH "\n"
	  "basic_auth_users = alice:" YESCRYPT_HASH "\n",
	  ":3: [prometheus] basic_auth_users: user 'alice' is listed twice" },
	/* url, header, property */
	{ "[http]\nurl = ftp://collector/vnfs\n",
	  ":2: [http] url: 'ftp://collector/vnfs' is not a URL (use e.g. "
	  "https://collector.example.org/vnfs)" },
	{ "[http]\nurl = https://a b/\n",
	  ":2: [http] url: 'https://a b/' is not a URL (use e.g. https://collector.example.org/vnfs)" },
	{ "[http]\nheader = Authorization Bearer x\n",
	  ":2: [http] header: 'Authorization Bearer x' is not a header (use e.g. Authorization: "
	  "Bearer TOKEN)" },
	{ "[http]\nheader = : value\n",
	  ":2: [http] header: ': value' is not a header (use e.g. Authorization: Bearer TOKEN)" },
	{ "[kafka]\nproperty. = x\n",
	  ":2: [kafka] property.: 'property.' is not a property name (use e.g. "
	  "property.compression.codec)" },
	{ "[kafka]\nproperty.a/b = x\n",
	  ":2: [kafka] property.a/b: 'property.a/b' is not a property name (use e.g. "
	  "property.compression.codec)" },
	/* an enabled sink without what it needs (kafka and http are built here) */
#if defined(HAVE_KAFKA)
	{ "[kafka]\nenabled = true\ntopic = t\n",
	  ":2: [kafka] enabled: kafka is enabled but brokers is not set (use e.g. brokers = "
	  "kafka1:9092,kafka2:9092)" },
	{ "[kafka]\nbrokers =\nenabled = yes\n",
	  ":3: [kafka] enabled: kafka is enabled but brokers is not set (use e.g. brokers = "
	  "kafka1:9092,kafka2:9092)" },
#endif
#if defined(HAVE_CURL)
	{ "[http]\n\nenabled = on\n",
	  ":3: [http] enabled: http is enabled but url is not set (use e.g. url = "
	  "https://collector.example.org/vnfs)" },
#endif
	/* a key given twice: scalars, comma lists and property.NAME alike */
	{ "[helper]\ninterval = 1s\nsocket_mode = 0660\ninterval = 2s\n",
	  ":4: [helper] interval: given twice (first at line 2)" },
	{ "[prometheus]\ntag_labels = A\ntag_labels = B\n",
	  ":3: [prometheus] tag_labels: given twice (first at line 2)" },
	{ "[environment]\njob_variables = LSB_JOBID\n\njob_variables =\n",
	  ":4: [environment] job_variables: given twice (first at line 2)" },
	{ "[kafka]\nproperty.acks = all\nproperty.linger.ms = 5\nproperty.acks = 1\n",
	  ":4: [kafka] property.acks: given twice (first at line 2)" },
	/* ... and an indented line, which inih reads as the key above continued */
	{ "[helper]\ninterval = 1s\n  2s\n",
	  ":3: [helper] interval: given twice (first at line 2); an indented line continues the "
	  "key above it" },
	{ "[helper]\ninterval = 1s\n\t[helper]\n",
	  ":3: [helper] interval: given twice (first at line 2); an indented line continues the "
	  "key above it" },
	/* a section given twice, with or without keys, reported at its second header */
	{ "[helper]\ninterval = 1s\n[sqlite]\npath = /a.db\n[helper]\nsocket_mode = 0660\n",
	  ":5: [helper]: section given twice (first at line 1); put its keys in one section" },
	{ "[sqlite]\n[helper]\n[sqlite] ; again\n",
	  ":3: [sqlite]: section given twice (first at line 1); put its keys in one section" },
	{ "  [helper]\n[helper]\n",
	  ":2: [helper]: section given twice (first at line 1); put its keys in one section" },
	{ "\xEF\xBB\xBF[http]\n[http]\n",
	  ":2: [http]: section given twice (first at line 1); put its keys in one section" },
	{ "[helper]\n[helper]\ngarbage\n",
	  ":2: [helper]: section given twice (first at line 1); put its keys in one section" },
	/* an unknown section is named as such, at its first key, however often given */
	{ "[promethus]\n[promethus]\nlisten = 127.0.0.1:9716\n",
	  ":3: [promethus] listen: unknown section (sections: helper, containers, environment, "
	  "sqlite, prometheus, jsonlog, kafka, http, postgresql, report, slurm_accounting)" },
	/* lines inih cannot parse, quoted */
	{ "[helper]\ninterval = 1s\nthis is not a key\n",
	  ":3: 'this is not a key': not a key = value line" },
	{ "[helper]\ninterval 1s\n", ":2: 'interval 1s': not a key = value line" },
	{ "[helper\ninterval = 1s\n", ":1: '[helper': a section header needs its closing ']'" },
	{ "[sqlite]\n  [helper \r\n",
	  ":2: '[helper': a section header needs its closing ']'" },
	{ "[helper ; comment]\n",
	  ":1: '[helper ; comment]': a section header needs its closing ']'" },
	{ "[helper]\ngarbage\nintervall = 1\n", ":2: 'garbage': not a key = value line" },
	{ "[helper]\ngarbage\n[helper]\n", ":2: 'garbage': not a key = value line" },
	{ "[helper]\nintervall = 1\ngarbage\n",
	  ":2: [helper] intervall: unknown key (keys in [helper]: socket, socket_mode, interval, "
	  "state_dir, pin_dir, report_dir, node_name, log, log_level, probes, "
	  "kprobe_calls_in_flight, count_rpcs, finished_job_grace, max_message_bytes, "
	  "admin_group, max_clients, max_clients_per_user, max_steps_per_job, "
	  "max_steps_per_user)" },
	/* the first bad value is reported, not a later one */
	{ "[helper]\nlog = a\nlog = b\n",
	  ":2: [helper] log: unknown value 'a' (allowed: stderr, syslog)" },
};

static void test_bad_values(void **state)
{
	struct fixture *fixture = *state;
	char expected[1024];

	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		vnfs_config_defaults(&fixture->config);
		fixture->config.helper.interval_ms = 4242; /* must survive the failed load */
		int result = load_text(fixture, bad_cases[i].text);
		snprintf(expected, sizeof(expected), "%s%s", fixture->path, bad_cases[i].message);
		assert_string_equal(fixture->error, expected);
		assert_int_equal(result, -1);
		assert_int_equal(fixture->config.helper.interval_ms, 4242);
	}
}

/* A line longer than inih's buffer is an error, not silently split in two. */
static void test_overlong_line(void **state)
{
	struct fixture *fixture = *state;
	char text[512], expected[256];
	int prefix = snprintf(text, sizeof(text), "[helper]\nnode_name = ");

	/* 197 characters is the longest line; the value is then too long for node_name. */
	memset(text + prefix, 'x', 197 - 12);
	strcpy(text + prefix + 197 - 12, "\n");
	assert_int_equal(load_text(fixture, text), -1);
	snprintf(expected, sizeof(expected),
		 "%s:2: [helper] node_name: value of 185 characters is too long (allowed: at most 64)",
		 fixture->path);
	assert_string_equal(fixture->error, expected);

	strcpy(text + prefix + 197 - 12, "y\n[helper]\nbad = key\n");
	assert_int_equal(load_text(fixture, text), -1);
	snprintf(expected, sizeof(expected), "%s:2: line is longer than 197 characters",
		 fixture->path);
	assert_string_equal(fixture->error, expected);
}

static void test_path_too_long(void **state)
{
	struct fixture *fixture = *state;
	char path[VNFS_PATH_MAX + 8], expected[VNFS_PATH_MAX + 128];

	memset(path, 'p', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	assert_int_equal(vnfs_config_load(&fixture->config, path, true, fixture->error,
					  sizeof(fixture->error)), -1);
	snprintf(expected, sizeof(expected), "%s: path is too long (at most 255 characters)", path);
	assert_string_equal(fixture->error, expected);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_example_file_is_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unreadable_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_every_type_accepted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_value_spellings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lists, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_basic_auth_users, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kafka_properties, setup, teardown),
		cmocka_unit_test_setup_teardown(test_enabled_sinks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overlong_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_path_too_long, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
