/*
 * test_record_json.c — the JSON of step records and jobs: exact output, exact
 * round trip, and a precise error for every kind of bad input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "lib/record_json.h"
#include "tests/unit/record_assertions.h"
#include "tests/unit/history_fixtures.h"

#define PLAIN (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
#define START_MS 1795000000123LL /* 2026-11-18T11:06:40.123Z */

static struct json_object *parse(const char *text)
{
	struct json_object *object = json_tokener_parse(text);
	assert_non_null(object);
	return object;
}

static void test_step_names(void **state)
{
	(void)state;
	char buf[16];
	uint32_t id;

	assert_string_equal(vnfs_step_name(0, buf, sizeof(buf)), "0");
	assert_string_equal(vnfs_step_name(17, buf, sizeof(buf)), "17");
	assert_string_equal(vnfs_step_name(VNFS_STEP_BATCH, buf, sizeof(buf)), "batch");
	assert_string_equal(vnfs_step_name(VNFS_STEP_EXTERN, buf, sizeof(buf)), "extern");
	assert_string_equal(vnfs_step_name(VNFS_STEP_INTERACTIVE, buf, sizeof(buf)),
			    "interactive");
	assert_string_equal(vnfs_step_name(VNFS_STEP_PENDING, buf, sizeof(buf)), "pending");

	assert_int_equal(vnfs_step_parse("batch", &id), 0);
	assert_int_equal(id, VNFS_STEP_BATCH);
	assert_int_equal(vnfs_step_parse("4294967295", &id), 0);
	assert_int_equal(id, UINT32_MAX);
	assert_int_equal(vnfs_step_parse("12", &id), 0);
	assert_int_equal(id, 12);
	assert_int_equal(vnfs_step_parse("4294967296", &id), -1);
	assert_int_equal(vnfs_step_parse("-1", &id), -1);
	assert_int_equal(vnfs_step_parse("1x", &id), -1);
	assert_int_equal(vnfs_step_parse("", &id), -1);
	assert_int_equal(vnfs_step_parse("Batch", &id), -1);
}

static void test_quantile(void **state)
{
	(void)state;
	__u64 buckets[VNFS_LATENCY_BUCKETS] = { 0 };

	assert_int_equal(vnfs_histogram_quantile(buckets, VNFS_LATENCY_BUCKETS, 0.5), 0);
	/* 10 calls in [1024, 2048): the 5th is halfway, the 10th at the top. */
	buckets[10] = 10;
	assert_int_equal(vnfs_histogram_quantile(buckets, VNFS_LATENCY_BUCKETS, 0.5), 1536);
	assert_int_equal(vnfs_histogram_quantile(buckets, VNFS_LATENCY_BUCKETS, 0.99), 2048);
	/* 99 fast calls and one slow one: p99 is still fast, p100 is slow. */
	memset(buckets, 0, sizeof(buckets));
	buckets[3] = 99;
	buckets[30] = 1;
	assert_int_equal(vnfs_histogram_quantile(buckets, VNFS_LATENCY_BUCKETS, 0.99), 16);
	assert_int_equal(vnfs_histogram_quantile(buckets, VNFS_LATENCY_BUCKETS, 1.0),
			 2147483648ull);
	/* bucket 0 holds [0, 2) */
	memset(buckets, 0, sizeof(buckets));
	buckets[0] = 4;
	assert_int_equal(vnfs_histogram_quantile(buckets, VNFS_LATENCY_BUCKETS, 0.5), 1);
}

static void test_step_json_exact(void **state)
{
	(void)state;
	struct history_step step;
	history_step_init(&step, 42, 0, 1001, "alice", "node1", START_MS, 1);
	struct json_object *object = vnfs_step_record_to_json(&step.record);
	struct json_object *value;

	assert_true(json_object_object_get_ex(object, "job", &value));
	assert_int_equal(json_object_get_int64(value), 42);
	assert_true(json_object_object_get_ex(object, "step", &value));
	assert_string_equal(json_object_get_string(value), "0");
	assert_true(json_object_object_get_ex(object, "start_time", &value));
	assert_string_equal(json_object_get_string(value), "2026-11-18T11:06:40.123Z");
	assert_true(json_object_object_get_ex(object, "sample_time", &value));
	assert_string_equal(json_object_get_string(value), "2026-11-18T11:07:40.123Z");
	assert_true(json_object_object_get_ex(object, "end_time", &value));
	assert_null(value);
	assert_true(json_object_object_get_ex(object, "tags", &value));
	assert_string_equal(json_object_to_json_string_ext(value, PLAIN),
			    "{\"PROJECT_NAME\":\"alpha\"}");

	struct json_object *operations;
	assert_true(json_object_object_get_ex(object, "operations", &operations));
	assert_int_equal(json_object_object_length(operations), VNFS_OP_COUNT);
	assert_true(json_object_object_get_ex(operations, "getattr", &value));
	assert_string_equal(json_object_to_json_string_ext(value, PLAIN),
			    "{\"count\":20,\"errors\":0,\"time_ns\":491520,\"bytes\":0,"
			    "\"latency_histogram\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,20]}");
	assert_true(json_object_object_get_ex(operations, "rmdir", &value));
	assert_string_equal(json_object_to_json_string_ext(value, PLAIN),
			    "{\"count\":0,\"errors\":0,\"time_ns\":0,\"bytes\":0,"
			    "\"latency_histogram\":[]}");
	assert_true(json_object_object_get_ex(object, "processes", &value));
	assert_string_equal(json_object_to_json_string_ext(value, PLAIN),
			    "[{\"comm\":\"python3\",\"read_ops\":10,\"read_bytes\":10485760,"
			    "\"write_ops\":0,\"write_bytes\":0,\"other_ops\":24},"
			    "{\"comm\":\"dd\",\"read_ops\":0,\"read_bytes\":0,\"write_ops\":5,"
			    "\"write_bytes\":5242880,\"other_ops\":0}]");
	assert_true(json_object_object_get_ex(object, "mounts", &value));
	assert_string_equal(json_object_to_json_string_ext(value, PLAIN),
			    "[{\"device\":42,\"mount_point\":\"/mnt/nfs\",\"source\":"
			    "\"server:/export\",\"version\":\"4.2\",\"rsize\":1048576,"
			    "\"wsize\":1048576,\"ops\":39,\"errors\":0,\"time_ns\":32157696,"
			    "\"read_bytes\":10485760,\"write_bytes\":5242880}]");
	json_object_put(object);
}

static void round_trip(const struct vnfs_step_record *record)
{
	struct json_object *object = vnfs_step_record_to_json(record);
	/* Through text, as a reader on another node would get it. */
	struct json_object *reparsed = parse(json_object_to_json_string(object));
	struct vnfs_step_record back;
	char error[256] = "";
	assert_int_equal(vnfs_step_record_from_json(reparsed, &back, error, sizeof(error)), 0);
	assert_string_equal(error, "");
	assert_same_record(record, &back);
	vnfs_step_record_free_arrays(&back);
	json_object_put(reparsed);
	json_object_put(object);
}

/* Parses text as a strict receiver does: strict JSON, strict UTF-8. */
static struct json_object *parse_strict(const char *text)
{
	struct json_tokener *tokener = json_tokener_new();
	struct json_object *object;

	assert_non_null(tokener);
	json_tokener_set_flags(tokener, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	object = json_tokener_parse_ex(tokener, text, (int)strlen(text) + 1);
	if (object == NULL)
		fail_msg("strict parser: %s in %s",
			 json_tokener_error_desc(json_tokener_get_error(tokener)), text);
	json_tokener_free(tokener);
	return object;
}

/* python3's json.loads over the bytes decoded as strict UTF-8. */
static void assert_python_accepts(const char *text)
{
	FILE *python = popen("python3 -c 'import json, sys; "
			     "json.loads(sys.stdin.buffer.read().decode(\"utf-8\", \"strict\"))'",
			     "w");

	assert_non_null(python);
	assert_int_equal(fputs(text, python) >= 0, 1);
	assert_int_equal(pclose(python), 0);
}

/*
 * A process name with ESC, newline, quotes, backslash, 0xff and a truncated
 * UTF-8 sequence, in its canonical text as the collector makes it, and paths
 * with raw invalid bytes: the JSON is valid for a strict receiver, and the
 * name reads back as the same canonical text.
 */
static void test_hostile_strings(void **state)
{
	static const char comm[VNFS_PROCESS_NAME_BYTES] = "\x1b[2J\n\"q\"\\\xff\xc3";
	struct history_step step;
	struct vnfs_step_record back;
	char error[256];

	(void)state;
	history_step_init(&step, 42, 0, 1001, "alice", "node1", START_MS, 1);
	vnfs_process_name_text(comm, step.processes[0].comm, sizeof(step.processes[0].comm));
	assert_string_equal(step.processes[0].comm,
			    "\\x1b[2J\\x0a\"q\"\\x5c\\xff\\xc3");
	snprintf(step.record.cgroup_path, sizeof(step.record.cgroup_path),
		 "/sys/fs/cgroup/user\xff\x1b");
	snprintf(step.mounts[0].mount_point, sizeof(step.mounts[0].mount_point), "/mnt/\xe2\x82");

	struct json_object *object = vnfs_step_record_to_json(&step.record);
	const char *text = json_object_to_json_string_ext(object, PLAIN);
	assert_non_null(strstr(text, "\"comm\":\"\\\\x1b[2J\\\\x0a\\\"q\\\"\\\\x5c"
				     "\\\\xff\\\\xc3\""));
	assert_non_null(strstr(text, "\"cgroup_path\":\"/sys/fs/cgroup/user\\\\xff\\\\x1b\""));
	assert_non_null(strstr(text, "\"mount_point\":\"/mnt/\\\\xe2\\\\x82\""));
	assert_python_accepts(text);
	struct json_object *strict = parse_strict(text);

	/* The parser is strict indeed: a raw 0xff is refused. */
	struct json_tokener *tokener = json_tokener_new();
	assert_non_null(tokener);
	json_tokener_set_flags(tokener, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	static const char raw[] = "{\"a\":\"\xff\"}";
	assert_null(json_tokener_parse_ex(tokener, raw, (int)sizeof(raw)));
	json_tokener_free(tokener);

	assert_int_equal(vnfs_step_record_from_json(strict, &back, error, sizeof(error)), 0);
	assert_string_equal(back.processes[0].comm, step.processes[0].comm);
	assert_string_equal(back.cgroup_path, "/sys/fs/cgroup/user\\xff\\x1b");
	assert_string_equal(back.mounts[0].mount_point, "/mnt/\\xe2\\x82");
	vnfs_step_record_free_arrays(&back);
	json_object_put(strict);
	json_object_put(object);
}

static void test_round_trip(void **state)
{
	(void)state;
	struct history_step step;

	history_step_init(&step, 42, VNFS_STEP_BATCH, 1001, "alice", "node1", START_MS, 3);
	round_trip(&step.record);

	/* Finished, extremes of every counter, every bucket used. */
	history_step_finish(&step, START_MS + 3723456);
	vnfs_record_identify_slurm(&step.record, UINT32_MAX, VNFS_STEP_BATCH);
	step.record.uid = 0;
	step.record.cgroup_id = UINT64_MAX;
	for (int op = 0; op < VNFS_OP_COUNT; op++)
		for (int b = 0; b < VNFS_LATENCY_BUCKETS; b++)
			step.stats.operations[op].latency_histogram[b] = (uint64_t)op * 100 + b;
	step.stats.operations[VNFS_OP_READ].bytes = UINT64_MAX;
	step.stats.request_size_histogram[VNFS_DIRECTION_WRITE][VNFS_SIZE_BUCKETS - 1] = 7;
	char error[128];
	assert_int_equal(vnfs_tags_set(&step.tags, "EMPTY", "", error, sizeof(error)), 0);
	round_trip(&step.record);

	/* No processes, no mounts, no tags. */
	step.record.process_count = 0;
	step.record.processes = NULL;
	step.record.mount_count = 0;
	step.record.mounts = NULL;
	vnfs_tags_init(&step.tags);
	round_trip(&step.record);
}

/* vnfs_step_record_copy: the copy equals the record and owns every array
 * (the original can go); a record without stats or rows copies as zero stats
 * and no rows. */
static void test_record_copy(void **state)
{
	(void)state;
	struct history_step step;
	struct vnfs_step_record copy;
	char error[128];

	history_step_init(&step, 42, 0, 1001, "alice", "node1", START_MS, 3);
	assert_int_equal(vnfs_tags_set(&step.tags, "PROJECT", "x", error, sizeof(error)), 0);
	step.stats.operations[VNFS_OP_WRITE].bytes = 8388608;
	assert_int_equal(vnfs_step_record_copy(&copy, &step.record), 0);
	assert_same_record(&copy, &step.record);
	assert_ptr_not_equal(copy.stats, step.record.stats);
	assert_ptr_not_equal(copy.processes, step.record.processes);
	assert_ptr_not_equal(copy.mounts, step.record.mounts);
	assert_ptr_not_equal(copy.tags, step.record.tags);
	memset(&step, 0xa5, sizeof(step)); /* the original gone */
	assert_int_equal(copy.stats->operations[VNFS_OP_WRITE].bytes, 8388608);
	assert_int_equal(copy.process_count, 2);
	assert_string_equal(copy.processes[1].comm, "dd");
	vnfs_step_record_free_arrays(&copy);
	assert_null(copy.stats);
	assert_int_equal(copy.process_count + copy.mount_count + copy.wire_count, 0);

	struct vnfs_step_record bare = { .process_count = 2, .processes = NULL };
	assert_int_equal(vnfs_step_record_copy(&copy, &bare), 0);
	assert_non_null(copy.stats);
	assert_int_equal(copy.stats->operations[VNFS_OP_READ].count, 0);
	assert_int_equal(copy.process_count, 0); /* a count without its rows is none */
	assert_null(copy.processes);
	assert_null(copy.wire);
	vnfs_step_record_free_arrays(&copy);
}

static void test_job_totals(void **state)
{
	(void)state;
	struct history_step steps[2];
	history_step_init(&steps[0], 7, VNFS_STEP_BATCH, 1001, "alice", "node1", START_MS, 1);
	history_step_init(&steps[1], 7, 0, 1001, "alice", "node1", START_MS + 1000, 2);
	snprintf(steps[1].processes[1].comm, VNFS_COMM_LEN, "cp");
	struct vnfs_step_record records[2] = { steps[0].record, steps[1].record };
	struct vnfs_job job = { .job_id = 7, .uid = 1001, .user = "alice", .node = "node1",
				.start_time_ms = START_MS, .end_time_ms = START_MS + 120000,
				.step_count = 2, .steps = records };
	vnfs_workload_of_slurm_job(&job.workload, job.job_id);

	struct json_object *object = vnfs_job_to_json(&job);
	struct json_object *value, *operations, *read;
	assert_true(json_object_object_get_ex(object, "end_time", &value));
	assert_string_equal(json_object_get_string(value), "2026-11-18T11:08:40.123Z");
	assert_true(json_object_object_get_ex(object, "operations", &operations));
	assert_true(json_object_object_get_ex(operations, "read", &read));
	assert_string_equal(json_object_to_json_string_ext(read, PLAIN),
			    "{\"count\":30,\"errors\":0,\"time_ns\":47185920,\"bytes\":31457280,"
			    "\"latency_histogram\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,30]}");
	/* Processes merged by name, sorted: cp (step 0), dd (batch), python3 (both). */
	assert_true(json_object_object_get_ex(object, "processes", &value));
	assert_string_equal(json_object_to_json_string_ext(value, PLAIN),
			    "[{\"comm\":\"cp\",\"read_ops\":0,\"read_bytes\":0,\"write_ops\":10,"
			    "\"write_bytes\":10485760,\"other_ops\":0},"
			    "{\"comm\":\"dd\",\"read_ops\":0,\"read_bytes\":0,\"write_ops\":5,"
			    "\"write_bytes\":5242880,\"other_ops\":0},"
			    "{\"comm\":\"python3\",\"read_ops\":30,\"read_bytes\":31457280,"
			    "\"write_ops\":0,\"write_bytes\":0,\"other_ops\":72}]");
	assert_true(json_object_object_get_ex(object, "mounts", &value));
	assert_int_equal(json_object_array_length(value), 1);
	struct json_object *mount = json_object_array_get_idx(value, 0);
	assert_true(json_object_object_get_ex(mount, "ops", &value));
	assert_int_equal(json_object_get_int64(value), 117);
	assert_true(json_object_object_get_ex(object, "steps", &value));
	assert_int_equal(json_object_array_length(value), 2);

	/* Each step inside reads back exactly. */
	struct vnfs_step_record back;
	char error[256];
	assert_int_equal(vnfs_step_record_from_json(json_object_array_get_idx(value, 1), &back,
						    error, sizeof(error)),
			 0);
	assert_same_record(&records[1], &back);
	vnfs_step_record_free_arrays(&back);
	json_object_put(object);
}

/* Applies edit (a JSON pointer-ish change done by the callback) and expects message. */
static void expect_error(void (*edit)(struct json_object *), const char *message)
{
	struct history_step step;
	history_step_init(&step, 42, 0, 1001, "alice", "node1", START_MS, 1);
	struct json_object *object = vnfs_step_record_to_json(&step.record);
	edit(object);
	struct vnfs_step_record back;
	char error[256] = "";
	assert_int_equal(vnfs_step_record_from_json(object, &back, error, sizeof(error)), -1);
	assert_string_equal(error, message);
	assert_null(back.processes);
	assert_null(back.mounts);
	json_object_put(object);
}

static void edit_missing_job(struct json_object *o) { json_object_object_del(o, "job"); }
static void edit_unknown(struct json_object *o)
{
	json_object_object_add(o, "jbo", json_object_new_int(1));
}
static void edit_job_string(struct json_object *o)
{
	json_object_object_add(o, "job", json_object_new_string("42"));
}
static void edit_job_range(struct json_object *o)
{
	json_object_object_add(o, "job", json_object_new_int64(4294967296LL));
}
static void edit_uid_negative(struct json_object *o)
{
	json_object_object_add(o, "uid", json_object_new_int(-1));
}
static void edit_step(struct json_object *o)
{
	json_object_object_add(o, "step", json_object_new_string("bacth"));
}
static void edit_time(struct json_object *o)
{
	json_object_object_add(o, "start_time", json_object_new_string("2026-02-30T00:00:00.000Z"));
}
static void edit_sample_null(struct json_object *o)
{
	json_object_object_add(o, "sample_time", NULL);
}
static void edit_finished(struct json_object *o)
{
	json_object_object_add(o, "finished", json_object_new_int(1));
}
static void edit_tag(struct json_object *o)
{
	struct json_object *tags;
	json_object_object_get_ex(o, "tags", &tags);
	json_object_object_add(tags, "BAD NAME", json_object_new_string("x"));
}
static void edit_operation_unknown(struct json_object *o)
{
	struct json_object *operations;
	json_object_object_get_ex(o, "operations", &operations);
	json_object_object_add(operations, "reed", json_object_new_object());
}
static void edit_operation_missing(struct json_object *o)
{
	struct json_object *operations;
	json_object_object_get_ex(o, "operations", &operations);
	json_object_object_del(operations, "lookup");
}
static void edit_histogram_long(struct json_object *o)
{
	struct json_object *operations, *read, *histogram;
	json_object_object_get_ex(o, "operations", &operations);
	json_object_object_get_ex(operations, "read", &read);
	histogram = json_object_new_array();
	for (int i = 0; i < VNFS_LATENCY_BUCKETS + 1; i++)
		json_object_array_add(histogram, json_object_new_int(1));
	json_object_object_add(read, "latency_histogram", histogram);
}
static void edit_histogram_value(struct json_object *o)
{
	struct json_object *operations, *write, *histogram;
	json_object_object_get_ex(o, "operations", &operations);
	json_object_object_get_ex(operations, "write", &write);
	histogram = json_object_new_array();
	json_object_array_add(histogram, json_object_new_double(1.5));
	json_object_object_add(write, "latency_histogram", histogram);
}
static void edit_comm_long(struct json_object *o)
{
	struct json_object *processes;
	json_object_object_get_ex(o, "processes", &processes);
	json_object_object_add(json_object_array_get_idx(processes, 1), "comm",
			       json_object_new_string("a-process-name-much-longer-than-the-63-"
						      "bytes-a-canonical-name-can-have"));
}
/* Found by fuzz_record_json: accepted, it no longer fitted once written back escaped. */
static void edit_path_not_utf8(struct json_object *o)
{
	json_object_object_add(o, "cgroup_path", json_object_new_string("/sys/fs/cgroup/\xff\xfe"));
}
static void edit_mount_field(struct json_object *o)
{
	struct json_object *mounts;
	json_object_object_get_ex(o, "mounts", &mounts);
	json_object_object_del(json_object_array_get_idx(mounts, 0), "rsize");
}
static void edit_not_object(struct json_object *o)
{
	json_object_object_add(o, "request_size_histogram", json_object_new_array());
}

/* The general form of a workload (lib/protocol.h) in place of Slurm's. */
static void edit_general_form(struct json_object *o)
{
	json_object_object_del(o, "step");
	json_object_object_add(o, "source", json_object_new_string("slurm"));
	json_object_object_add(o, "job", json_object_new_string("42"));
	json_object_object_add(o, "part", json_object_new_string("batch"));
}
static void edit_general_without_part(struct json_object *o)
{
	edit_general_form(o);
	json_object_object_del(o, "part");
}
static void edit_general_slurm_misspelt(struct json_object *o)
{
	edit_general_form(o);
	json_object_object_add(o, "job", json_object_new_string("0042"));
}

/* A record naming its step in the general form is the same step; a Slurm
 * step's still needs its part, and Slurm's spelling. */
static void test_general_identity(void **state)
{
	struct history_step step;
	struct vnfs_step_record back;
	char error[256] = "";
	uint32_t job_id, step_id;

	(void)state;
	history_step_init(&step, 42, 0, 1001, "alice", "node1", START_MS, 1);
	struct json_object *object = vnfs_step_record_to_json(&step.record);
	edit_general_form(object);
	assert_int_equal(vnfs_step_record_from_json(object, &back, error, sizeof(error)), 0);
	assert_int_equal(vnfs_workload_slurm_ids(&back.workload, &job_id, &step_id), 0);
	assert_int_equal(job_id, 42);
	assert_int_equal(step_id, VNFS_STEP_BATCH);
	assert_int_equal(back.job_id, 42);
	assert_int_equal(back.step_id, VNFS_STEP_BATCH);
	vnfs_step_record_free_arrays(&back);
	json_object_put(object);
	expect_error(edit_general_without_part, "a Slurm step record needs a 'part'");

	/* A Kubernetes container's record: the general form, and back. */
	struct vnfs_workload container;
	assert_int_equal(vnfs_workload_set(&container, VNFS_SOURCE_KUBERNETES, "ml/resnet-7f9c",
					   "trainer", error, sizeof(error)),
			 0);
	vnfs_record_identify(&step.record, &container);
	assert_int_equal(step.record.job_id, 0);
	object = vnfs_step_record_to_json(&step.record);
	struct json_object *value;
	assert_true(json_object_object_get_ex(object, "source", &value));
	assert_string_equal(json_object_get_string(value), "kubernetes");
	assert_true(json_object_object_get_ex(object, "job", &value));
	assert_string_equal(json_object_get_string(value), "ml/resnet-7f9c");
	assert_true(json_object_object_get_ex(object, "part", &value));
	assert_string_equal(json_object_get_string(value), "trainer");
	assert_false(json_object_object_get_ex(object, "step", NULL));
	assert_int_equal(vnfs_step_record_from_json(object, &back, error, sizeof(error)), 0);
	assert_true(vnfs_workload_equal(&back.workload, &container));
	vnfs_step_record_free_arrays(&back);
	json_object_put(object);
	expect_error(edit_general_slurm_misspelt, "Slurm job 0042 step batch is spelled 42.batch");

	/* A job that is one whole (a PBS job its prologue registered, an LSF
	 * job its environment named): its one step has no part, and back. */
	struct vnfs_workload whole;
	assert_int_equal(vnfs_workload_set(&whole, VNFS_SOURCE_PBS, "5678.pbs01", "", error,
					   sizeof(error)),
			 0);
	vnfs_record_identify(&step.record, &whole);
	object = vnfs_step_record_to_json(&step.record);
	assert_false(json_object_object_get_ex(object, "part", NULL)); /* none: left out */
	assert_int_equal(vnfs_step_record_from_json(object, &back, error, sizeof(error)), 0);
	assert_true(vnfs_workload_equal(&back.workload, &whole));
	vnfs_step_record_free_arrays(&back);
	json_object_put(object);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error(edit_missing_job, "missing field 'job'");
	expect_error(edit_unknown, "unknown field 'jbo'");
	expect_error(edit_job_string, "field 'job' must be an integer");
	expect_error(edit_job_range, "field 'job' must be at most 4294967295");
	expect_error(edit_uid_negative, "field 'uid' must not be negative");
	expect_error(edit_step, "field 'step' must be a step number, batch, extern, interactive "
				"or pending, not 'bacth'");
	expect_error(edit_time, "field 'start_time' must be a time like 2026-11-29T17:09:16.123Z");
	expect_error(edit_sample_null, "field 'sample_time' must not be null");
	expect_error(edit_finished, "field 'finished' must be true or false");
	expect_error(edit_tag, "tag 'BAD NAME': a name is letters, digits and '_' (not starting "
			       "with a digit)");
	expect_error(edit_operation_unknown, "unknown operation 'reed'");
	expect_error(edit_operation_missing, "operation 'lookup' missing");
	expect_error(edit_histogram_long, "operations.read: field 'latency_histogram' has 37 "
					  "buckets, at most 36 allowed");
	expect_error(edit_histogram_value,
		     "operations.write: field 'latency_histogram' must be an integer");
	expect_error(edit_comm_long, "processes[1]: field 'comm' is longer than 63 bytes");
	expect_error(edit_path_not_utf8, "field 'cgroup_path' is not valid UTF-8");
	expect_error(edit_mount_field, "mounts[0]: missing field 'rsize'");
	expect_error(edit_not_object, "'request_size_histogram' must be an object");

	struct vnfs_step_record back;
	char error[256];
	struct json_object *array = json_object_new_array();
	assert_int_equal(vnfs_step_record_from_json(array, &back, error, sizeof(error)), -1);
	assert_string_equal(error, "a step record must be an object");
	json_object_put(array);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_step_names),     cmocka_unit_test(test_quantile),
		cmocka_unit_test(test_step_json_exact), cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_job_totals),     cmocka_unit_test(test_errors),
		cmocka_unit_test(test_hostile_strings), cmocka_unit_test(test_general_identity),
		cmocka_unit_test(test_record_copy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
