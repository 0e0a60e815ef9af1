/*
 * test_jsonlog.c — the JSON lines log: line format, rotation across many
 * files without losing or repeating a record, deletion of the oldest file,
 * job lines, and a clear error for a path that cannot be opened.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "helper/outputs/sink.h"
#include "lib/record_json.h"

struct fixture {
	char directory[64];
	char path[VNFS_PATH_MAX];
};

static int setup(void **state)
{
	struct fixture *fixture = calloc(1, sizeof(*fixture));
	if (!fixture)
		return -1;
	snprintf(fixture->directory, sizeof(fixture->directory), "/tmp/vnfs-jsonlog-XXXXXX");
	if (!mkdtemp(fixture->directory))
		return -1;
	snprintf(fixture->path, sizeof(fixture->path), "%s/vnfs.jsonl", fixture->directory);
	*state = fixture;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fixture = *state;
	char command[128];
	snprintf(command, sizeof(command), "rm -rf '%s'", fixture->directory);
	int status = system(command);
	free(fixture);
	return status == 0 ? 0 : -1;
}

static void log_config(struct vnfs_config *config, const char *path, uint64_t max_bytes,
		       uint32_t keep)
{
	memset(config, 0, sizeof(*config));
	config->jsonlog.enabled = true;
	snprintf(config->jsonlog.path, sizeof(config->jsonlog.path), "%s", path);
	config->jsonlog.max_bytes = max_bytes;
	config->jsonlog.keep = keep;
}

static void make_step(struct vnfs_step_record *step, struct vnfs_step_stats *stats, uint32_t job_id)
{
	memset(step, 0, sizeof(*step));
	memset(stats, 0, sizeof(*stats));
	vnfs_record_identify_slurm(step, job_id, 0);
	step->uid = 1000;
	snprintf(step->user, sizeof(step->user), "alice");
	snprintf(step->node, sizeof(step->node), "n1");
	step->tags = vnfs_tags_none();
	step->start_time_ms = 1700000000000;
	step->sample_time_ms = 1700000001000;
	step->stats = stats;
	stats->operations[VNFS_OP_WRITE].count = job_id;
	stats->operations[VNFS_OP_WRITE].bytes = 4096ull * job_id;
	stats->operations[VNFS_OP_WRITE].latency_histogram[12] = job_id;
}

/* Publishes jobs first..last, `per_interval` steps per interval. */
static void publish_jobs(struct vnfs_sink *sink, uint32_t first, uint32_t last, uint32_t per_interval)
{
	struct vnfs_step_record steps[8];
	struct vnfs_step_stats stats[8];
	assert_true(per_interval <= 8);

	for (uint32_t job = first; job <= last;) {
		size_t count = 0;
		for (; count < per_interval && job <= last; count++, job++)
			make_step(&steps[count], &stats[count], job);
		struct vnfs_interval interval = { .time_ms = 1700000001000, .step_count = count,
			.steps = steps };
		sink->publish(sink->state, &interval);
	}
}

/* Reads one file's lines, checking each; appends the job ids to ids. */
static void read_file(const char *path, uint64_t max_bytes, uint32_t *ids, size_t *count,
		      size_t capacity)
{
	FILE *file = fopen(path, "r");
	assert_non_null(file);
	struct stat status;
	assert_int_equal(fstat(fileno(file), &status), 0);
	assert_true((uint64_t)status.st_size <= max_bytes);

	char *line = NULL;
	size_t line_capacity = 0;
	ssize_t length;
	while ((length = getline(&line, &line_capacity, file)) > 0) {
		assert_int_equal(line[length - 1], '\n');
		struct json_object *object = json_tokener_parse(line);
		assert_non_null(object);
		struct json_object *type;
		assert_true(json_object_object_get_ex(object, "type", &type));
		assert_string_equal(json_object_get_string(type), "step");

		/* The rest is exactly a step record as lib/record_json.c reads it. */
		json_object_object_del(object, "type");
		struct vnfs_step_record record;
		char error[256] = "";
		if (vnfs_step_record_from_json(object, &record, error, sizeof(error)) != 0)
			fail_msg("%s: %s", path, error);
		assert_int_equal(record.stats->operations[VNFS_OP_WRITE].count, record.job_id);
		assert_int_equal(record.stats->operations[VNFS_OP_WRITE].bytes, 4096ull * record.job_id);
		assert_true(*count < capacity);
		ids[(*count)++] = record.job_id;
		vnfs_step_record_free_arrays(&record);
		json_object_put(object);
	}
	free(line);
	fclose(file);
}

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

static void test_rotation_keeps_every_record(void **state)
{
	struct fixture *fixture = *state;
	enum { JOBS = 600, MAX_BYTES = 16384, KEEP = 200 };
	struct vnfs_config config;
	struct vnfs_sink sink;
	char error[256] = "";

	log_config(&config, fixture->path, MAX_BYTES, KEEP);
	assert_int_equal(vnfs_sink_jsonlog_open(&sink, &config, error, sizeof(error)), 0);
	assert_string_equal(sink.name, "jsonlog");
	publish_jobs(&sink, 1, JOBS, 7);
	assert_int_equal(sink.dropped(sink.state), 0);
	sink.close(sink.state);

	/* Oldest file first: path.N ... path.1, path. */
	uint32_t rotated = 0;
	char name[VNFS_PATH_MAX + 16];
	for (;;) {
		snprintf(name, sizeof(name), "%s.%u", fixture->path, rotated + 1);
		if (!exists(name))
			break;
		rotated++;
	}
	assert_true(rotated >= 20); /* many rotations, or the test proves little */
	assert_true(rotated < KEEP);

	static uint32_t ids[JOBS + 1];
	size_t count = 0;
	for (uint32_t index = rotated; index >= 1; index--) {
		snprintf(name, sizeof(name), "%s.%u", fixture->path, index);
		read_file(name, MAX_BYTES, ids, &count, JOBS + 1);
	}
	read_file(fixture->path, MAX_BYTES, ids, &count, JOBS + 1);

	/* Every record once, in order: none lost, none repeated. */
	assert_int_equal(count, JOBS);
	for (size_t i = 0; i < count; i++)
		assert_int_equal(ids[i], i + 1);
}

static void test_oldest_file_deleted(void **state)
{
	struct fixture *fixture = *state;
	enum { JOBS = 300, MAX_BYTES = 8192, KEEP = 3 };
	struct vnfs_config config;
	struct vnfs_sink sink;
	char error[256] = "";

	log_config(&config, fixture->path, MAX_BYTES, KEEP);
	assert_int_equal(vnfs_sink_jsonlog_open(&sink, &config, error, sizeof(error)), 0);
	publish_jobs(&sink, 1, JOBS, 3);
	sink.close(sink.state);

	char name[VNFS_PATH_MAX + 16];
	snprintf(name, sizeof(name), "%s.%u", fixture->path, KEEP + 1);
	assert_false(exists(name));

	static uint32_t ids[JOBS];
	size_t count = 0;
	for (uint32_t index = KEEP; index >= 1; index--) {
		snprintf(name, sizeof(name), "%s.%u", fixture->path, index);
		assert_true(exists(name));
		read_file(name, MAX_BYTES, ids, &count, JOBS);
	}
	read_file(fixture->path, MAX_BYTES, ids, &count, JOBS);

	/* What is left is the newest records, contiguous, ending with the last. */
	assert_true(count > 10 && count < JOBS);
	for (size_t i = 0; i < count; i++)
		assert_int_equal(ids[i], JOBS - count + 1 + i);
}

static void test_job_line_and_reopen(void **state)
{
	struct fixture *fixture = *state;
	struct vnfs_config config;
	struct vnfs_sink sink;
	char error[256] = "";

	log_config(&config, fixture->path, 0, 0);
	assert_int_equal(vnfs_sink_jsonlog_open(&sink, &config, error, sizeof(error)), 0);
	publish_jobs(&sink, 9, 9, 1);
	struct vnfs_step_record step;
	struct vnfs_step_stats stats;
	make_step(&step, &stats, 9);
	step.finished = true;
	step.end_time_ms = 1700000002000;
	struct vnfs_job job = { .job_id = 9, .uid = 1000, .user = "alice", .node = "n1",
		.start_time_ms = 1700000000000, .end_time_ms = 1700000002000, .step_count = 1,
		.steps = &step };
	vnfs_workload_of_slurm_job(&job.workload, job.job_id);
	sink.job_finished(sink.state, &job);
	sink.close(sink.state);

	/* An existing log is appended to, not truncated. */
	assert_int_equal(vnfs_sink_jsonlog_open(&sink, &config, error, sizeof(error)), 0);
	publish_jobs(&sink, 10, 10, 1);

	/* Moved away by someone else: the next line starts a new file. */
	char moved[VNFS_PATH_MAX + 16];
	snprintf(moved, sizeof(moved), "%s.moved", fixture->path);
	assert_int_equal(rename(fixture->path, moved), 0);
	publish_jobs(&sink, 11, 11, 1);
	sink.close(sink.state);
	FILE *fresh = fopen(fixture->path, "r");
	assert_non_null(fresh);
	char first[32] = "";
	assert_non_null(fgets(first, sizeof(first), fresh));
	assert_true(strncmp(first, "{\"job\":11,", 10) == 0);
	fclose(fresh);
	assert_int_equal(rename(moved, fixture->path), 0);

	FILE *file = fopen(fixture->path, "r");
	assert_non_null(file);
	char *line = NULL;
	size_t capacity = 0;
	const char *expected_types[] = { "step", "job", "step" };
	const uint64_t expected_jobs[] = { 9, 9, 10 };
	int lines = 0;
	while (getline(&line, &capacity, file) > 0) {
		assert_true(lines < 3);
		struct json_object *object = json_tokener_parse(line);
		struct json_object *value;
		assert_non_null(object);
		assert_true(json_object_object_get_ex(object, "type", &value));
		assert_string_equal(json_object_get_string(value), expected_types[lines]);
		assert_true(json_object_object_get_ex(object, "job", &value));
		assert_int_equal(json_object_get_uint64(value), expected_jobs[lines]);
		if (lines == 1) {
			assert_true(json_object_object_get_ex(object, "steps", &value));
			assert_int_equal(json_object_array_length(value), 1);
		}
		json_object_put(object);
		lines++;
	}
	assert_int_equal(lines, 3);
	free(line);
	fclose(file);
}

static void test_unopenable_path(void **state)
{
	struct fixture *fixture = *state;
	struct vnfs_config config;
	struct vnfs_sink sink;
	char error[512] = "", path[VNFS_PATH_MAX], expected[600];

	snprintf(path, sizeof(path), "%s/missing/vnfs.jsonl", fixture->directory);
	log_config(&config, path, 0, 0);
	assert_int_equal(vnfs_sink_jsonlog_open(&sink, &config, error, sizeof(error)), -1);
	snprintf(expected, sizeof(expected), "jsonlog: cannot open %s: No such file or directory", path);
	assert_string_equal(error, expected);

	log_config(&config, "", 0, 0);
	assert_int_equal(vnfs_sink_jsonlog_open(&sink, &config, error, sizeof(error)), -1);
	assert_string_equal(error, "jsonlog: no path configured");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rotation_keeps_every_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_oldest_file_deleted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_job_line_and_reopen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unopenable_path, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
