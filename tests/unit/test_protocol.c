/*
 * test_protocol.c — lib/protocol.c: every request survives encode → decode,
 * and every kind of bad message is refused with its exact message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/protocol.h"
#include "lib/record.h"
#include "workload_fixtures.h"

#define MAX VNFS_DEFAULT_MAX_MESSAGE

/*
 * Decodes text from a heap copy of exactly its length (no terminating NUL),
 * so AddressSanitizer catches any read past the end.
 */
static int decode(const char *text, struct vnfs_request *request, char *error, size_t size)
{
	size_t length = strlen(text);
	char *copy = malloc(length ? length : 1);
	int result;

	assert_non_null(copy);
	memcpy(copy, text, length);
	result = vnfs_request_decode(copy, length, MAX, request, error, size);
	free(copy);
	return result;
}

/* Asserts that text is refused with exactly message. */
static void assert_refused(const char *text, const char *message)
{
	struct vnfs_request request;
	char error[512];

	error[0] = '\0';
	if (decode(text, &request, error, sizeof(error)) != -1)
		fail_msg("accepted: %s", text);
	assert_string_equal(error, message);
}

static void round_trip(const struct vnfs_request *original, struct vnfs_request *decoded)
{
	char error[512] = "";
	char *line = vnfs_request_encode(original);

	assert_non_null(line);
	assert_int_equal(line[strlen(line) - 1], '\n');
	assert_null(memchr(line, '\n', strlen(line) - 1));
	if (decode(line, decoded, error, sizeof(error)) != 0)
		fail_msg("%s: %s", line, error);
	free(line);
}

static void assert_encodes_to(const struct vnfs_request *request, const char *expected)
{
	char *line = vnfs_request_encode(request);

	assert_non_null(line);
	assert_string_equal(line, expected);
	free(line);
}

static void test_type_names(void **state)
{
	(void)state;
	assert_string_equal(vnfs_request_type_name(VNFS_REQUEST_REGISTER), "register");
	assert_string_equal(vnfs_request_type_name(VNFS_REQUEST_UNREGISTER), "unregister");
	assert_string_equal(vnfs_request_type_name(VNFS_REQUEST_FINISH), "finish");
	assert_string_equal(vnfs_request_type_name(VNFS_REQUEST_QUERY), "query");
	assert_string_equal(vnfs_request_type_name(VNFS_REQUEST_LIST), "list");
	assert_string_equal(vnfs_request_type_name(VNFS_REQUEST_STATUS), "status");
	assert_string_equal(vnfs_request_type_name(VNFS_REQUEST_HISTORY), "history");
	assert_null(vnfs_request_type_name(VNFS_REQUEST_TYPES));
	assert_null(vnfs_request_type_name((enum vnfs_request_type)-1));
}

static void test_register_round_trip(void **state)
{
	struct vnfs_request request = { 0 }, decoded;
	char error[256];

	(void)state;
	request.type = VNFS_REQUEST_REGISTER;
	vnfs_workload_of_slurm_step(&request.workload, 42, VNFS_STEP_BATCH);
	request.uid = 1001;
	request.cgroup_id = 1234;
	strcpy(request.cgroup_path, "/sys/fs/cgroup/system.slice/slurmstepd.scope/job_42/step_batch");
	vnfs_tags_init(&request.tags);
	assert_int_equal(vnfs_tags_set(&request.tags, "PROJECT_NAME", "alpha", error, sizeof(error)), 0);
	assert_int_equal(vnfs_tags_set(&request.tags, "RUN", "", error, sizeof(error)), 0);

	assert_encodes_to(&request,
			  "{\"v\":1,\"type\":\"register\",\"job\":42,\"step\":4294967291,\"uid\":1001,"
			  "\"cgroup_id\":1234,\"cgroup_path\":\"/sys/fs/cgroup/system.slice/"
			  "slurmstepd.scope/job_42/step_batch\",\"tags\":{\"PROJECT_NAME\":\"alpha\","
			  "\"RUN\":\"\"}}\n");
	round_trip(&request, &decoded);
	assert_int_equal(decoded.type, VNFS_REQUEST_REGISTER);
	assert_slurm_step(&decoded.workload, 42, VNFS_STEP_BATCH);
	assert_int_equal(decoded.uid, 1001);
	assert_int_equal(decoded.cgroup_id, 1234);
	assert_string_equal(decoded.cgroup_path, request.cgroup_path);
	assert_int_equal(decoded.tags.count, 2);
	assert_int_equal(decoded.tags.used, request.tags.used);
	assert_memory_equal(decoded.tags.buffer, request.tags.buffer, request.tags.used);
	assert_string_equal(decoded.report_dir, "");
}

static void test_register_extremes_round_trip(void **state)
{
	struct vnfs_request request = { 0 }, decoded;

	(void)state;
	request.type = VNFS_REQUEST_REGISTER;
	vnfs_workload_of_slurm_step(&request.workload, UINT32_MAX, UINT32_MAX);
	request.uid = UINT32_MAX;
	request.cgroup_id = INT64_MAX;
	vnfs_tags_init(&request.tags);
	round_trip(&request, &decoded);
	assert_slurm_step(&decoded.workload, UINT32_MAX, UINT32_MAX);
	assert_int_equal(decoded.uid, UINT32_MAX);
	assert_true(decoded.cgroup_id == (uint64_t)INT64_MAX);
	assert_string_equal(decoded.cgroup_path, "");
	assert_int_equal(decoded.tags.count, 0);

	/* cgroup_id 0 with a path: the helper resolves the path. */
	request.cgroup_id = 0;
	strcpy(request.cgroup_path, "/job_1");
	round_trip(&request, &decoded);
	assert_true(decoded.cgroup_id == 0);
	assert_string_equal(decoded.cgroup_path, "/job_1");
}

static void test_other_requests_round_trip(void **state)
{
	struct vnfs_request request = { 0 }, decoded;

	(void)state;
	request.type = VNFS_REQUEST_UNREGISTER;
	vnfs_workload_of_slurm_step(&request.workload, 42, 0);
	assert_encodes_to(&request, "{\"v\":1,\"type\":\"unregister\",\"job\":42,\"step\":0}\n");
	round_trip(&request, &decoded);
	assert_int_equal(decoded.type, VNFS_REQUEST_UNREGISTER);
	assert_slurm_step(&decoded.workload, 42, 0);

	memset(&request, 0, sizeof(request));
	request.type = VNFS_REQUEST_FINISH;
	vnfs_workload_of_slurm_job(&request.workload, 7);
	assert_encodes_to(&request, "{\"v\":1,\"type\":\"finish\",\"job\":7}\n");
	strcpy(request.report_dir, "/var/lib/vnfs/reports");
	assert_encodes_to(&request, "{\"v\":1,\"type\":\"finish\",\"job\":7,"
				    "\"report_dir\":\"/var/lib/vnfs/reports\"}\n");
	round_trip(&request, &decoded);
	assert_int_equal(decoded.type, VNFS_REQUEST_FINISH);
	assert_slurm_job(&decoded.workload, 7);
	assert_string_equal(decoded.report_dir, "/var/lib/vnfs/reports");

	memset(&request, 0, sizeof(request));
	request.type = VNFS_REQUEST_QUERY;
	vnfs_workload_of_slurm_job(&request.workload, 9);
	assert_encodes_to(&request, "{\"v\":1,\"type\":\"query\",\"job\":9}\n");
	round_trip(&request, &decoded);
	assert_int_equal(decoded.type, VNFS_REQUEST_QUERY);
	assert_slurm_job(&decoded.workload, 9);
	vnfs_workload_of_slurm_step(&request.workload, 9, 3);
	round_trip(&request, &decoded);
	assert_slurm_step(&decoded.workload, 9, 3);

	memset(&request, 0, sizeof(request));
	request.type = VNFS_REQUEST_LIST;
	assert_encodes_to(&request, "{\"v\":1,\"type\":\"list\"}\n");
	round_trip(&request, &decoded);
	assert_int_equal(decoded.type, VNFS_REQUEST_LIST);

	request.type = VNFS_REQUEST_STATUS;
	assert_encodes_to(&request, "{\"v\":1,\"type\":\"status\"}\n");
	round_trip(&request, &decoded);
	assert_int_equal(decoded.type, VNFS_REQUEST_STATUS);

	request.type = VNFS_REQUEST_HISTORY;
	assert_encodes_to(&request, "{\"v\":1,\"type\":\"history\"}\n");
	round_trip(&request, &decoded);
	assert_int_equal(decoded.type, VNFS_REQUEST_HISTORY);
	assert_false(decoded.has_since);
	assert_false(decoded.has_until);
	request.has_since = true;
	request.since_ms = 1795000000000;
	request.has_until = true;
	request.until_ms = 1795086400000;
	assert_encodes_to(&request, "{\"v\":1,\"type\":\"history\",\"since\":1795000000000,"
				    "\"until\":1795086400000}\n");
	round_trip(&request, &decoded);
	assert_true(decoded.has_since);
	assert_int_equal(decoded.since_ms, 1795000000000);
	assert_true(decoded.has_until);
	assert_int_equal(decoded.until_ms, 1795086400000);

	request.type = VNFS_REQUEST_TYPES;
	assert_null(vnfs_request_encode(&request));
}

static void test_step_names(void **state)
{
	struct vnfs_request request;
	char error[256];

	(void)state;
	assert_int_equal(decode("{\"v\":1,\"type\":\"unregister\",\"job\":1,\"step\":\"batch\"}",
				&request, error, sizeof(error)),
			 0);
	assert_slurm_step(&request.workload, 1, 0xfffffffbu);
	assert_int_equal(decode("{\"v\":1,\"type\":\"unregister\",\"job\":1,\"step\":\"extern\"}",
				&request, error, sizeof(error)),
			 0);
	assert_slurm_step(&request.workload, 1, 0xfffffffcu);
	assert_int_equal(decode("{\"v\":1,\"type\":\"query\",\"job\":1,\"step\":\"interactive\"}",
				&request, error, sizeof(error)),
			 0);
	assert_slurm_step(&request.workload, 1, 0xfffffffau);

	assert_refused("{\"v\":1,\"type\":\"query\",\"job\":1,\"step\":\"Batch\"}",
		       "field 'step' must be an integer from 0 to 4294967295 or one of \"batch\", "
		       "\"extern\", \"interactive\"");
	assert_refused("{\"v\":1,\"type\":\"query\",\"job\":1,\"step\":\"batch\\u0000x\"}",
		       "field 'step' must be an integer from 0 to 4294967295 or one of \"batch\", "
		       "\"extern\", \"interactive\"");
	assert_refused("{\"v\":1,\"type\":\"query\",\"job\":1,\"step\":\"0\"}",
		       "field 'step' must be an integer from 0 to 4294967295 or one of \"batch\", "
		       "\"extern\", \"interactive\"");
}

/* The general form names the same workloads as Slurm's numbers, in one
 * spelling, and never mixes with them. */
static void test_general_workload_form(void **state)
{
	struct vnfs_request request, numbers;
	char error[256];

	(void)state;
	assert_int_equal(decode("{\"v\":1,\"type\":\"unregister\",\"source\":\"slurm\","
				"\"job\":\"42\",\"part\":\"batch\"}",
				&request, error, sizeof(error)),
			 0);
	assert_int_equal(decode("{\"v\":1,\"type\":\"unregister\",\"job\":42,"
				"\"step\":\"batch\"}",
				&numbers, error, sizeof(error)),
			 0);
	assert_true(vnfs_workload_equal(&request.workload, &numbers.workload));
	assert_slurm_step(&request.workload, 42, VNFS_STEP_BATCH);
	/* Written back in Slurm's numbers: what every helper reads. */
	assert_encodes_to(&request, "{\"v\":1,\"type\":\"unregister\",\"job\":42,"
				    "\"step\":4294967291}\n");
	assert_int_equal(decode("{\"v\":1,\"type\":\"query\",\"job\":\"7\","
				"\"source\":\"slurm\"}",
				&request, error, sizeof(error)),
			 0);
	assert_slurm_job(&request.workload, 7);
	assert_int_equal(decode("{\"v\":1,\"type\":\"finish\",\"source\":\"slurm\","
				"\"job\":\"7\"}",
				&request, error, sizeof(error)),
			 0);
	assert_slurm_job(&request.workload, 7);

	assert_refused("{\"v\":1,\"type\":\"query\",\"source\":\"nosuch\",\"job\":\"7\"}",
		       "unknown workload source 'nosuch'");
	assert_refused("{\"v\":1,\"type\":\"query\",\"source\":7,\"job\":\"7\"}",
		       "field 'source' must be a string");
	assert_refused("{\"v\":1,\"type\":\"query\",\"source\":null,\"job\":\"7\"}",
		       "field 'source' must be a string");
	assert_refused("{\"v\":1,\"type\":\"query\",\"job\":7,\"part\":null}",
		       "field 'part' needs field 'source' (with Slurm's numbers, give 'step')");
	assert_refused("{\"v\":1,\"type\":\"query\",\"source\":\"slurm\",\"job\":7}",
		       "field 'job' must be a string");
	assert_refused("{\"v\":1,\"type\":\"query\",\"job\":\"7\"}",
		       "field 'job' must be an integer from 0 to 4294967295");
	assert_refused("{\"v\":1,\"type\":\"query\",\"source\":\"slurm\",\"job\":\"7\","
		       "\"step\":0}",
		       "field 'step' is Slurm's numbers form: with 'source', give 'part'");
	assert_refused("{\"v\":1,\"type\":\"query\",\"job\":7,\"part\":\"0\"}",
		       "field 'part' needs field 'source' (with Slurm's numbers, give 'step')");
	assert_refused("{\"v\":1,\"type\":\"query\",\"source\":\"slurm\",\"job\":\"007\"}",
		       "Slurm job 007 is spelled 7");
	assert_refused("{\"v\":1,\"type\":\"query\",\"source\":\"slurm\",\"job\":\"7\","
		       "\"part\":\"a b\"}",
		       "the workload's part 'a...' holds a byte other than letters, digits and "
		       "._-:@+/[]=,%#~");
	assert_refused("{\"v\":1,\"type\":\"unregister\",\"source\":\"slurm\",\"job\":\"7\"}",
		       "missing field 'step' in an unregister request");
	assert_refused("{\"v\":1,\"type\":\"unregister\",\"job\":7}",
		       "missing field 'step' in an unregister request");
	assert_refused("{\"v\":1,\"type\":\"finish\",\"source\":\"slurm\",\"job\":\"7\","
		       "\"part\":\"0\"}",
		       "unknown field 'part' in a finish request (allowed: source, job, report_dir)");
	assert_refused("{\"v\":1,\"type\":\"list\",\"source\":\"slurm\"}",
		       "unknown field 'source' in a list request (allowed: only v and type)");
}

/* Another source's workload travels in the general form, both ways; a pod
 * may be registered whole (no part). */
static void test_kubernetes_workload(void **state)
{
	struct vnfs_request request = { 0 }, decoded;
	char error[256];

	(void)state;
	request.type = VNFS_REQUEST_REGISTER;
	assert_int_equal(vnfs_workload_set(&request.workload, VNFS_SOURCE_KUBERNETES,
					   "ml/resnet-7f9c", "trainer", error, sizeof(error)),
			 0);
	request.uid = 1001;
	request.cgroup_id = 77;
	vnfs_tags_init(&request.tags);
	assert_encodes_to(&request, "{\"v\":1,\"type\":\"register\",\"source\":\"kubernetes\","
				    "\"job\":\"ml/resnet-7f9c\",\"part\":\"trainer\",\"uid\":1001,"
				    "\"cgroup_id\":77,\"tags\":{}}\n");
	round_trip(&request, &decoded);
	assert_true(vnfs_workload_equal(&decoded.workload, &request.workload));
	request.workload.part[0] = '\0';
	round_trip(&request, &decoded);
	assert_int_equal(decoded.workload.source, VNFS_SOURCE_KUBERNETES);
	assert_string_equal(decoded.workload.part, "");
	assert_refused("{\"v\":1,\"type\":\"query\",\"source\":\"kubernetes\",\"job\":\"resnet\"}",
		       "a Kubernetes pod is namespace/name");
	assert_refused("{\"v\":1,\"type\":\"query\",\"source\":\"kubernetes\",\"job\":\"ml/r\","
		       "\"part\":\"Trainer\"}",
		       "a Kubernetes container's name is a DNS label (lowercase letters, digits, "
		       "'-', at most 63)");
}

static void test_whitespace_and_newline_accepted(void **state)
{
	struct vnfs_request request;
	char error[256];

	(void)state;
	assert_int_equal(decode(" {\"type\" : \"status\", \"v\" : 1}\r\n", &request, error,
				sizeof(error)),
			 0);
	assert_int_equal(request.type, VNFS_REQUEST_STATUS);
}

static void test_framing_errors(void **state)
{
	struct vnfs_request request;
	char error[256];
	char *big;

	(void)state;
	assert_refused("", "empty message: expected a JSON object");
	assert_refused(" \n", "empty message: expected a JSON object");
	assert_refused("{\"v\":1,\"type\":\"reg",
		       "truncated JSON: the message ends before the object is complete");
	assert_refused("{\"v\":1,\"type\":\"list\"", "truncated JSON: the message ends before the "
						     "object is complete");
	assert_refused("{\"v\":1,\"type\":\"list\"} x",
		       "unexpected data after the JSON object at byte 22");
	assert_refused("{\"v\":1,\"type\":\"list\"}{}",
		       "unexpected data after the JSON object at byte 21");
	assert_refused("{\"v\":1,,}", "invalid JSON at byte 7: quoted object property name expected");
	assert_refused("[1,2]", "a request must be a JSON object");
	assert_refused("\"list\"", "a request must be a JSON object");
	assert_refused("{\"v\":1,\"type\":\"list\",\"x\":{\"a\":{\"b\":{}}}}",
		       "invalid JSON at byte 35: nesting too deep");

	assert_int_equal(vnfs_request_decode("{\"v\":1,\0\"type\":\"list\"}", 22, MAX, &request,
					     error, sizeof(error)),
			 -1);
	assert_string_equal(error, "message contains a NUL byte at byte 7");

	big = malloc(70000);
	assert_non_null(big);
	memset(big, ' ', 70000);
	assert_int_equal(vnfs_request_decode(big, 70000, MAX, &request, error, sizeof(error)), -1);
	assert_string_equal(error, "message of 70000 bytes exceeds 65536");
	assert_int_equal(vnfs_request_decode("{\"v\":1,\"type\":\"list\"}", 21, 20, &request, error,
					     sizeof(error)),
			 -1);
	assert_string_equal(error, "message of 21 bytes exceeds 20");
	free(big);
}

static void test_version_and_type_errors(void **state)
{
	(void)state;
	assert_refused("{\"type\":\"list\"}", "missing field 'v' (the protocol version, 1)");
	assert_refused("{\"v\":\"1\",\"type\":\"list\"}", "field 'v' must be the integer 1");
	assert_refused("{\"v\":1.0,\"type\":\"list\"}", "field 'v' must be the integer 1");
	assert_refused("{\"v\":2,\"type\":\"list\"}",
		       "unsupported protocol version 2 (this side speaks version 1)");
	assert_refused("{\"v\":18446744073709551617,\"type\":\"list\"}",
		       "unsupported protocol version 18446744073709551615 (this side speaks version 1)");
	assert_refused("{\"v\":1}", "missing field 'type' (the request type)");
	assert_refused("{\"v\":1,\"type\":3}", "field 'type' must be a string");
	assert_refused("{\"v\":1,\"type\":\"regster\"}", "unknown request type 'regster'");
	assert_refused("{\"v\":1,\"type\":\"list\\u0000\"}", "unknown request type 'list?'");
	assert_refused("{\"v\":1,\"type\":\"a\\nb\"}", "unknown request type 'a?b'");
	assert_refused("{\"v\":1,\"type\":\"r\u00e9gster\"}", "unknown request type 'r??gster'");
	assert_refused("{\"v\":1,\"type\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}",
		       "unknown request type 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'");
}

static void test_unknown_and_missing_fields(void **state)
{
	(void)state;
	assert_refused("{\"v\":1,\"type\":\"query\",\"jbo\":1}",
		       "unknown field 'jbo' in a query request (allowed: source, job, step, part)");
	assert_refused("{\"v\":1,\"type\":\"list\",\"job\":1}",
		       "unknown field 'job' in a list request (allowed: only v and type)");
	assert_refused("{\"v\":1,\"type\":\"finish\",\"job\":1,\"step\":0}",
		       "unknown field 'step' in a finish request (allowed: source, job, report_dir)");
	assert_refused("{\"v\":1,\"type\":\"register\",\"job\":1,\"step\":0,\"uid\":0,\"cgroup\":1}",
		       "unknown field 'cgroup' in a register request (allowed: source, job, step, "
		       "part, uid, cgroup_id, cgroup_path, tags)");
	assert_refused("{\"v\":1,\"type\":\"query\"}", "missing field 'job' in a query request");
	assert_refused("{\"v\":1,\"type\":\"unregister\",\"job\":1}",
		       "missing field 'step' in an unregister request");
	assert_refused("{\"v\":1,\"type\":\"register\",\"job\":1,\"step\":0,\"cgroup_id\":5}",
		       "missing field 'uid' in a register request");
	assert_refused("{\"v\":1,\"type\":\"register\",\"job\":1,\"step\":0,\"uid\":5}",
		       "a register request needs a non-zero 'cgroup_id' or a 'cgroup_path'");
	assert_refused("{\"v\":1,\"type\":\"register\",\"job\":1,\"step\":0,\"uid\":5,\"cgroup_id\":0}",
		       "a register request needs a non-zero 'cgroup_id' or a 'cgroup_path'");
}

static void test_wrong_types(void **state)
{
	(void)state;
	assert_refused("{\"v\":1,\"type\":\"query\",\"job\":\"42\"}",
		       "field 'job' must be an integer from 0 to 4294967295");
	assert_refused("{\"v\":1,\"type\":\"query\",\"job\":4.2}",
		       "field 'job' must be an integer from 0 to 4294967295");
	assert_refused("{\"v\":1,\"type\":\"query\",\"job\":1e3}",
		       "field 'job' must be an integer from 0 to 4294967295");
	assert_refused("{\"v\":1,\"type\":\"query\",\"job\":true}",
		       "field 'job' must be an integer from 0 to 4294967295");
	assert_refused("{\"v\":1,\"type\":\"query\",\"job\":null}",
		       "field 'job' must be an integer from 0 to 4294967295");
	assert_refused("{\"v\":1,\"type\":\"query\",\"job\":1,\"step\":[0]}",
		       "field 'step' must be an integer from 0 to 4294967295");
	assert_refused("{\"v\":1,\"type\":\"finish\",\"job\":1,\"report_dir\":5}",
		       "field 'report_dir' must be a string");
	assert_refused("{\"v\":1,\"type\":\"register\",\"job\":1,\"step\":0,\"uid\":0,"
		       "\"cgroup_id\":1,\"tags\":[\"A\"]}",
		       "field 'tags' must be an object of NAME: \"value\" strings");
	assert_refused("{\"v\":1,\"type\":\"register\",\"job\":1,\"step\":0,\"uid\":0,"
		       "\"cgroup_id\":1,\"tags\":{\"A\":1}}",
		       "tag 'A' must have a string value");
}

static void test_out_of_range(void **state)
{
	(void)state;
	assert_refused("{\"v\":1,\"type\":\"query\",\"job\":-1}",
		       "field 'job' must be an integer from 0 to 4294967295");
	assert_refused("{\"v\":1,\"type\":\"query\",\"job\":4294967296}",
		       "field 'job' must be an integer from 0 to 4294967295");
	assert_refused("{\"v\":1,\"type\":\"query\",\"job\":99999999999999999999}",
		       "field 'job' must be an integer from 0 to 4294967295");
	assert_refused("{\"v\":1,\"type\":\"unregister\",\"job\":1,\"step\":-2}",
		       "field 'step' must be an integer from 0 to 4294967295");
	assert_refused("{\"v\":1,\"type\":\"register\",\"job\":1,\"step\":0,\"uid\":-1,\"cgroup_id\":1}",
		       "field 'uid' must be an integer from 0 to 4294967295");
	assert_refused("{\"v\":1,\"type\":\"register\",\"job\":1,\"step\":0,\"uid\":1,"
		       "\"cgroup_id\":9223372036854775808}",
		       "field 'cgroup_id' must be an integer from 0 to 9223372036854775807");
	assert_refused("{\"v\":1,\"type\":\"register\",\"job\":1,\"step\":0,\"uid\":1,"
		       "\"cgroup_id\":99999999999999999999999}",
		       "field 'cgroup_id' must be an integer from 0 to 9223372036854775807");
	assert_refused("{\"v\":1,\"type\":\"register\",\"job\":1,\"step\":0,\"uid\":1,"
		       "\"cgroup_id\":-9223372036854775809}",
		       "field 'cgroup_id' must be an integer from 0 to 9223372036854775807");
	assert_refused("{\"v\":1,\"type\":\"history\",\"since\":-1}",
		       "field 'since' must be an integer from 0 to 9223372036854775807");
	assert_refused("{\"v\":1,\"type\":\"history\",\"until\":\"yesterday\"}",
		       "field 'until' must be an integer from 0 to 9223372036854775807");
	assert_refused("{\"v\":1,\"type\":\"history\",\"job\":1}",
		       "unknown field 'job' in a history request (allowed: since, until)");
}

static void test_paths(void **state)
{
	char text[512];
	char path[300];

	(void)state;
	memset(path, 'p', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	snprintf(text, sizeof(text),
		 "{\"v\":1,\"type\":\"register\",\"job\":1,\"step\":0,\"uid\":1,\"cgroup_path\":\"%s\"}",
		 path);
	assert_refused(text, "field 'cgroup_path' is 299 bytes, longer than 255");
	path[256] = '\0';
	snprintf(text, sizeof(text), "{\"v\":1,\"type\":\"finish\",\"job\":1,\"report_dir\":\"%s\"}",
		 path);
	assert_refused(text, "field 'report_dir' is 256 bytes, longer than 255");
	path[255] = '\0';
	snprintf(text, sizeof(text), "{\"v\":1,\"type\":\"finish\",\"job\":1,\"report_dir\":\"%s\"}",
		 path);
	{
		struct vnfs_request request;
		char error[256];

		assert_int_equal(decode(text, &request, error, sizeof(error)), 0);
		assert_string_equal(request.report_dir, path);
	}
	assert_refused("{\"v\":1,\"type\":\"register\",\"job\":1,\"step\":0,\"uid\":1,"
		       "\"cgroup_path\":\"job_1/step_0\"}",
		       "field 'cgroup_path' must be an absolute path");
	assert_refused("{\"v\":1,\"type\":\"register\",\"job\":1,\"step\":0,\"uid\":1,"
		       "\"cgroup_path\":\"/a/../../etc\"}",
		       "field 'cgroup_path' must not contain '..'");
	assert_refused("{\"v\":1,\"type\":\"register\",\"job\":1,\"step\":0,\"uid\":1,"
		       "\"cgroup_path\":\"/sys/fs/cgroup/\xff\"}",
		       "field 'cgroup_path' is not valid UTF-8");
	assert_refused("{\"v\":1,\"type\":\"finish\",\"job\":1,\"report_dir\":\"/tmp/..\"}",
		       "field 'report_dir' must not contain '..'");
	assert_refused("{\"v\":1,\"type\":\"finish\",\"job\":1,\"report_dir\":\"/tmp\\u0000/x\"}",
		       "field 'report_dir' contains a NUL character");
	assert_refused("{\"v\":1,\"type\":\"finish\",\"job\":1,\"report_dir\":\"\"}",
		       "field 'report_dir' must be an absolute path");
}

static void test_invalid_tags(void **state)
{
	char text[4096];
	size_t used;

	(void)state;
	assert_refused("{\"v\":1,\"type\":\"register\",\"job\":1,\"step\":0,\"uid\":0,"
		       "\"cgroup_id\":1,\"tags\":{\"MY NAME\":\"x\"}}",
		       "tag 'MY NAME': a name is letters, digits and '_' (not starting with a digit)");
	assert_refused("{\"v\":1,\"type\":\"register\",\"job\":1,\"step\":0,\"uid\":0,"
		       "\"cgroup_id\":1,\"tags\":{\"A\":\"x;rm -rf\"}}",
		       "tag 'A': character ';' is not allowed in a value (a value is letters, "
		       "digits and . _ : @ + % -)");
	assert_refused("{\"v\":1,\"type\":\"register\",\"job\":1,\"step\":0,\"uid\":0,"
		       "\"cgroup_id\":1,\"tags\":{\"A\":\"x\\u0000y\"}}",
		       "tag 'A': value contains a NUL character");

	used = (size_t)snprintf(text, sizeof(text), "{\"v\":1,\"type\":\"register\",\"job\":1,"
						    "\"step\":0,\"uid\":0,\"cgroup_id\":1,\"tags\":{");
	for (int i = 0; i < 33; i++)
		used += (size_t)snprintf(text + used, sizeof(text) - used, "%s\"T%d\":\"v\"",
					 i ? "," : "", i);
	snprintf(text + used, sizeof(text) - used, "}}");
	assert_refused(text, "too many tags: at most 32 are allowed");
}

static void test_failed_decode_leaves_clean_request(void **state)
{
	struct vnfs_request request;
	char error[256];

	(void)state;
	memset(&request, 0xff, sizeof(request));
	assert_int_equal(decode("{\"v\":1,\"type\":\"query\",\"job\":5,\"step\":\"x\"}", &request,
				error, sizeof(error)),
			 -1);
	assert_string_equal(request.workload.job, ""); /* no workload at all */
	assert_string_equal(request.workload.part, "");
	assert_int_equal(request.tags.count, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_type_names),
		cmocka_unit_test(test_register_round_trip),
		cmocka_unit_test(test_register_extremes_round_trip),
		cmocka_unit_test(test_other_requests_round_trip),
		cmocka_unit_test(test_step_names),
		cmocka_unit_test(test_general_workload_form),
		cmocka_unit_test(test_kubernetes_workload),
		cmocka_unit_test(test_whitespace_and_newline_accepted),
		cmocka_unit_test(test_framing_errors),
		cmocka_unit_test(test_version_and_type_errors),
		cmocka_unit_test(test_unknown_and_missing_fields),
		cmocka_unit_test(test_wrong_types),
		cmocka_unit_test(test_out_of_range),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_invalid_tags),
		cmocka_unit_test(test_failed_decode_leaves_clean_request),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
