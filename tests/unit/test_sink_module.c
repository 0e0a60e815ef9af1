/*
 * test_sink_module.c — loading the Kafka, HTTP and PostgreSQL outputs as modules: the
 * modules of this build (BUILT_MODULE_DIR) load, resolve everything they
 * need and open their sink; a missing module or entry point is an error
 * that names the file.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "helper/outputs/sink_module.h"

static void use_module_dir(const char *directory)
{
	assert_int_equal(setenv("VNFS_MODULE_DIR", directory, 1), 0);
}

static void test_module_dir_is_installed_unless_overridden(void **state)
{
	(void)state;
	assert_int_equal(unsetenv("VNFS_MODULE_DIR"), 0);
	assert_string_equal(vnfs_sink_module_dir(), VNFS_MODULE_DIR);
	use_module_dir("");
	assert_string_equal(vnfs_sink_module_dir(), VNFS_MODULE_DIR);
	use_module_dir("/somewhere/else");
	assert_string_equal(vnfs_sink_module_dir(), "/somewhere/else");
}

#if defined(HAVE_CURL) || defined(HAVE_KAFKA) || defined(HAVE_POSTGRESQL)
/* Opens output name from this build's module, checks the sink it made, and
 * closes it. */
static void open_built_module(const char *name, const struct vnfs_config *config)
{
	struct vnfs_sink sink;
	char error[512] = "";

	use_module_dir(BUILT_MODULE_DIR);
	assert_int_equal(vnfs_sink_module_open(name, &sink, config, error, sizeof(error)), 0);
	assert_string_equal(error, "");
	assert_string_equal(sink.name, name);
	assert_non_null(sink.publish);
	assert_non_null(sink.job_finished);
	assert_int_equal(sink.dropped(sink.state), 0);
	sink.close(sink.state);
}
#endif

#ifdef HAVE_CURL
static void test_http_module_opens_its_sink(void **state)
{
	struct vnfs_config config;

	(void)state;
	memset(&config, 0, sizeof(config));
	config.http.enabled = true;
	snprintf(config.http.url, sizeof(config.http.url), "http://127.0.0.1:9/vnfs");
	config.http.timeout_ms = 1000;
	config.http.batch_records = 10;
	config.http.buffer_records = 100;
	open_built_module("http", &config);
}

/* The module's own checks still speak: a bad configuration is refused. */
static void test_http_module_reports_its_own_errors(void **state)
{
	struct vnfs_config config;
	struct vnfs_sink sink;
	char error[512] = "";

	(void)state;
	memset(&config, 0, sizeof(config));
	use_module_dir(BUILT_MODULE_DIR);
	assert_int_equal(vnfs_sink_module_open("http", &sink, &config, error, sizeof(error)), -1);
	assert_string_equal(error, "http: buffer_records and batch_records must be at least 1");
}

/* A file that loads but is not the module asked for. */
static void test_module_without_entry_point(void **state)
{
	char directory[] = "/tmp/vnfs-modules-XXXXXX", link[PATH_MAX], expected[PATH_MAX + 64];
	struct vnfs_config config;
	struct vnfs_sink sink;
	char error[512] = "";

	(void)state;
	memset(&config, 0, sizeof(config));
	assert_non_null(mkdtemp(directory));
	snprintf(link, sizeof(link), "%s/sink_other.so", directory);
	assert_int_equal(symlink(BUILT_MODULE_DIR "/sink_http.so", link), 0);
	use_module_dir(directory);
	assert_int_equal(vnfs_sink_module_open("other", &sink, &config, error, sizeof(error)), -1);
	snprintf(expected, sizeof(expected), "%s defines no vnfs_sink_other_open", link);
	assert_string_equal(error, expected);
	assert_int_equal(unlink(link), 0);
	assert_int_equal(rmdir(directory), 0);
}
#endif

#ifdef HAVE_KAFKA
static void test_kafka_module_opens_its_sink(void **state)
{
	struct vnfs_config config;

	(void)state;
	memset(&config, 0, sizeof(config));
	config.kafka.enabled = true;
	snprintf(config.kafka.brokers, sizeof(config.kafka.brokers), "127.0.0.1:9");
	snprintf(config.kafka.topic, sizeof(config.kafka.topic), "vnfs-test");
	config.kafka.queue_limit = 100;
	open_built_module("kafka", &config);
}
#endif

#ifdef HAVE_POSTGRESQL
/* The writer thread connects later, in the background: opening needs no
 * server, and closing does not wait for one. */
static void test_postgresql_module_opens_its_sink(void **state)
{
	static struct vnfs_config config;
	char directory[] = "/tmp/vnfs-module-XXXXXX";
	char command[64];

	(void)state;
	assert_non_null(mkdtemp(directory));
	memset(&config, 0, sizeof(config));
	config.postgresql.enabled = true;
	snprintf(config.postgresql.conninfo, sizeof(config.postgresql.conninfo),
		 "host=/nonexistent/vnfs dbname=vnfs user=vnfs_writer");
	snprintf(config.postgresql.spool_dir, sizeof(config.postgresql.spool_dir), "%s/spool",
		 directory);
	config.postgresql.batch_records = 10;
	config.postgresql.buffer_records = 100;
	config.postgresql.spool_max_bytes = 1 << 20;
	config.postgresql.retry_interval_ms = 1000;
	open_built_module("postgresql", &config);
	snprintf(command, sizeof(command), "rm -rf %s", directory);
	assert_int_equal(system(command), 0);
}

/* A connection string libpq refuses is named, and its password is not. */
static void test_postgresql_module_hides_the_password(void **state)
{
	static struct vnfs_config config;
	struct vnfs_sink sink;
	char error[512] = "";

	(void)state;
	memset(&config, 0, sizeof(config));
	config.postgresql.enabled = true;
	snprintf(config.postgresql.conninfo, sizeof(config.postgresql.conninfo),
		 "host=db password=SECRET-42 colour=blue");
	snprintf(config.postgresql.spool_dir, sizeof(config.postgresql.spool_dir), "/nonexistent");
	config.postgresql.batch_records = 10;
	config.postgresql.buffer_records = 100;
	use_module_dir(BUILT_MODULE_DIR);
	assert_int_equal(vnfs_sink_module_open("postgresql", &sink, &config, error, sizeof(error)),
			 -1);
	assert_string_equal(error, "postgresql: conninfo cannot be parsed: "
				   "invalid connection option \"colour\"");
	assert_null(strstr(error, "SECRET"));
}
#endif

static void test_missing_module_names_the_file(void **state)
{
	struct vnfs_config config;
	struct vnfs_sink sink;
	char error[512] = "";
	const char *expected = "cannot load its module: /nonexistent/vnfs/sink_http.so: "
			       "cannot open shared object file";

	(void)state;
	memset(&config, 0, sizeof(config));
	use_module_dir("/nonexistent/vnfs");
	assert_int_equal(vnfs_sink_module_open("http", &sink, &config, error, sizeof(error)), -1);
	assert_memory_equal(error, expected, strlen(expected));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_module_dir_is_installed_unless_overridden),
#ifdef HAVE_CURL
		cmocka_unit_test(test_http_module_opens_its_sink),
		cmocka_unit_test(test_http_module_reports_its_own_errors),
		cmocka_unit_test(test_module_without_entry_point),
#endif
#ifdef HAVE_KAFKA
		cmocka_unit_test(test_kafka_module_opens_its_sink),
#endif
#ifdef HAVE_POSTGRESQL
		cmocka_unit_test(test_postgresql_module_opens_its_sink),
		cmocka_unit_test(test_postgresql_module_hides_the_password),
#endif
		cmocka_unit_test(test_missing_module_names_the_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
