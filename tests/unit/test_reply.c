/*
 * test_reply.c — lib/reply.c and the job reader of lib/record_json.c: every
 * reply type survives encode → decode with its exact values and exact text,
 * and every kind of bad reply (truncated, wrong type per field, unknown or
 * missing field, wrong version) is refused with its exact message.
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

#include "lib/reply.h"
#include "tests/unit/record_assertions.h"

/* ---- a job of two steps, every kind of field set ----------------------- */

struct sample {
	struct vnfs_step_stats stats[2];
	struct vnfs_tag_list tags[2];
	struct vnfs_process_record processes[2];
	struct vnfs_mount_record mount;
	struct vnfs_step_record steps[2];
	struct vnfs_job job;
};

static struct sample *new_sample(void)
{
	struct sample *sample = calloc(1, sizeof(*sample));
	char error[128];

	assert_non_null(sample);
	for (int i = 0; i < 2; i++) {
		struct vnfs_step_record *step = &sample->steps[i];

		vnfs_record_identify_slurm(step, 4242, i == 0 ? 0 : VNFS_STEP_BATCH);
		step->uid = 1001;
		snprintf(step->user, sizeof(step->user), "alice");
		snprintf(step->node, sizeof(step->node), "node7");
		step->cgroup_id = 9000 + (uint64_t)i;
		snprintf(step->cgroup_path, sizeof(step->cgroup_path), "/slurm/job_4242/step_%d", i);
		vnfs_tags_init(&sample->tags[i]);
		assert_int_equal(vnfs_tags_set(&sample->tags[i], "PROJECT", "alpha-7", error,
					       sizeof(error)),
				 0);
		step->tags = &sample->tags[i];
		step->start_time_ms = 1795000000123 + i;
		step->end_time_ms = i == 0 ? 1795000060456 : 0;
		step->sample_time_ms = 1795000070789;
		step->finished = i == 0;
		step->stats = &sample->stats[i];
		sample->stats[i].operations[VNFS_OP_READ].count = 10 + (uint64_t)i;
		sample->stats[i].operations[VNFS_OP_READ].bytes = UINT64_MAX - (uint64_t)i;
		sample->stats[i].operations[VNFS_OP_READ].latency_histogram[3] = 7;
		sample->stats[i].request_size_histogram[VNFS_DIRECTION_WRITE][5] = 2;
	}
	snprintf(sample->processes[0].comm, sizeof(sample->processes[0].comm), "python3");
	sample->processes[0].stats.read_ops = 5;
	snprintf(sample->processes[1].comm, sizeof(sample->processes[1].comm), "dd");
	sample->processes[1].stats.write_bytes = 1 << 20;
	sample->steps[0].processes = sample->processes;
	sample->steps[0].process_count = 2;
	sample->mount.device = 44;
	snprintf(sample->mount.mount_point, sizeof(sample->mount.mount_point), "/home");
	snprintf(sample->mount.source, sizeof(sample->mount.source), "nfs1:/export/home");
	snprintf(sample->mount.version, sizeof(sample->mount.version), "4.2");
	sample->mount.rsize = 1048576;
	sample->mount.stats.ops = 99;
	sample->steps[1].mounts = &sample->mount;
	sample->steps[1].mount_count = 1;
	vnfs_job_of_steps(&sample->job, &sample->steps[0].workload, "node7", sample->steps, 2);
	return sample;
}

static void assert_job_is_sample(const struct vnfs_owned_job *owned, const struct vnfs_job *job)
{
	assert_int_equal(owned->job_id, 4242);
	assert_int_equal(owned->workload.source, VNFS_SOURCE_SLURM);
	assert_string_equal(owned->workload.job, "4242");
	assert_string_equal(owned->workload.part, "");
	assert_int_equal(owned->uid, 1001);
	assert_string_equal(owned->user, "alice");
	assert_string_equal(owned->node, "node7");
	assert_int_equal(owned->start_time_ms, 1795000000123);
	assert_int_equal(owned->end_time_ms, 1795000060456);
	assert_int_equal(owned->step_count, 2);
	for (size_t i = 0; i < 2; i++)
		assert_same_record(&owned->steps[i], &job->steps[i]);
}

/* ---- helpers ------------------------------------------------------------ */

/* Decodes text from a heap copy of exactly its length (no NUL after it),
 * so AddressSanitizer catches any read past the end. */
static int decode(const char *text, enum vnfs_request_type type, struct vnfs_reply *reply,
		  char *error, size_t size)
{
	size_t length = strlen(text);
	char *copy = malloc(length ? length : 1);
	int result;

	assert_non_null(copy);
	memcpy(copy, text, length);
	result = vnfs_reply_decode(copy, length, type, reply, error, size);
	free(copy);
	return result;
}

/* Encodes reply, checks it is one line, decodes it into *decoded; returns
 * the line (caller frees). */
static char *round_trip(const struct vnfs_reply *reply, struct vnfs_reply *decoded)
{
	char error[512] = "";
	char *line = vnfs_reply_encode(reply);

	assert_non_null(line);
	assert_int_equal(line[strlen(line) - 1], '\n');
	assert_null(memchr(line, '\n', strlen(line) - 1));
	if (decode(line, reply->type, decoded, error, sizeof(error)) != 0)
		fail_msg("%s: %s", line, error);
	assert_true(decoded->ok);
	assert_int_equal(decoded->type, reply->type);
	return line;
}

/* Asserts text is refused as a reply to type, with exactly message, and
 * leaves the reply empty. */
static void assert_refused(enum vnfs_request_type type, const char *text, const char *message)
{
	struct vnfs_reply reply;
	char error[512] = "";

	if (decode(text, type, &reply, error, sizeof(error)) != -1)
		fail_msg("accepted: %s", text);
	assert_string_equal(error, message);
	assert_true(reply.ok);
	assert_int_equal(reply.type, type);
	assert_int_equal(reply.job.step_count, 0);
	assert_null(reply.job.steps);
	assert_null(reply.entries);
	assert_null(reply.jobs);
	assert_null(reply.status);
}

/* The sample job's JSON as text, with the first "from" replaced by "to"
 * ("" by "": as it is). */
static char *sample_job_text(const char *from, const char *to)
{
	struct sample *sample = new_sample();
	struct json_object *json = vnfs_job_to_json(&sample->job);
	const char *text = json_object_to_json_string_ext(json, JSON_C_TO_STRING_PLAIN);
	const char *at = strstr(text, from);
	char *out;

	assert_non_null(at);
	assert_true(asprintf(&out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from)) > 0);
	json_object_put(json);
	free(sample);
	return out;
}

/* The sample job edited (from → to) inside a reply to type made by format
 * (one %s: the job) is refused with exactly message. */
static void assert_edited_job_refused(enum vnfs_request_type type, const char *format,
				      const char *from, const char *to, const char *message)
{
	char *text = sample_job_text(from, to), *reply;

	assert_true(asprintf(&reply, format, text) > 0);
	assert_refused(type, reply, message);
	free(reply);
	free(text);
}

/* ---- round trips --------------------------------------------------------- */

static void test_register_and_unregister(void **state)
{
	struct vnfs_reply reply, decoded;
	char *line;

	(void)state;
	vnfs_reply_init(&reply, VNFS_REQUEST_REGISTER);
	reply.slot = 1023;
	line = round_trip(&reply, &decoded);
	assert_string_equal(line, "{\"v\":1,\"ok\":true,\"slot\":1023}\n");
	assert_int_equal(decoded.slot, 1023);
	free(line);
	vnfs_reply_free(&decoded);

	vnfs_reply_init(&reply, VNFS_REQUEST_UNREGISTER);
	line = round_trip(&reply, &decoded);
	assert_string_equal(line, "{\"v\":1,\"ok\":true}\n");
	free(line);
	vnfs_reply_free(&decoded);
}

static void test_finish_and_query(void **state)
{
	static const enum vnfs_request_type types[] = { VNFS_REQUEST_FINISH, VNFS_REQUEST_QUERY };
	struct sample *sample = new_sample();

	(void)state;
	for (size_t t = 0; t < 2; t++) {
		struct vnfs_reply reply, decoded;
		struct json_object *job_json = vnfs_job_to_json(&sample->job);
		char *line, *expected, *again;

		vnfs_reply_init(&reply, types[t]);
		assert_int_equal(vnfs_owned_job_copy(&reply.job, &sample->job), 0);
		line = round_trip(&reply, &decoded);
		/* The job is vnfs_job_to_json's, under "job"; no owner key beside it. */
		assert_true(asprintf(&expected, "{\"v\":1,\"ok\":true,\"job\":%s}\n",
				     json_object_to_json_string_ext(
					     job_json, JSON_C_TO_STRING_PLAIN |
							       JSON_C_TO_STRING_NOSLASHESCAPE)) > 0);
		assert_string_equal(line, expected);
		assert_job_is_sample(&decoded.job, &sample->job);
		/* What was decoded encodes to the same text. */
		again = vnfs_reply_encode(&decoded);
		assert_string_equal(again, line);
		free(again);
		free(expected);
		free(line);
		json_object_put(job_json);
		vnfs_reply_free(&reply);
		vnfs_reply_free(&decoded);
		assert_int_equal(decoded.type, types[t]);
		assert_null(decoded.job.steps);
	}
	free(sample);
}

static void test_list(void **state)
{
	struct vnfs_reply reply, decoded;
	char *line, error[256];

	(void)state;
	vnfs_reply_init(&reply, VNFS_REQUEST_LIST);
	line = round_trip(&reply, &decoded);
	assert_string_equal(line, "{\"v\":1,\"ok\":true,\"jobs\":[]}\n");
	assert_int_equal(decoded.entry_count, 0);
	free(line);
	vnfs_reply_free(&decoded);

	reply.entries = calloc(2, sizeof(*reply.entries));
	assert_non_null(reply.entries);
	reply.entry_count = 2;
	reply.entries[0] = (struct vnfs_list_entry){ .uid = 1001, .user = "alice",
						     .running = true };
	vnfs_workload_of_slurm_step(&reply.entries[0].workload, 7, 0);
	reply.entries[1] = (struct vnfs_list_entry){ .uid = 0, .user = "root", .running = false };
	vnfs_workload_of_slurm_step(&reply.entries[1].workload, UINT32_MAX, VNFS_STEP_BATCH);
	line = round_trip(&reply, &decoded);
	assert_string_equal(line, "{\"v\":1,\"ok\":true,\"jobs\":["
				  "{\"job\":7,\"step\":\"0\",\"uid\":1001,\"user\":\"alice\","
				  "\"running\":true},"
				  "{\"job\":4294967295,\"step\":\"batch\",\"uid\":0,\"user\":\"root\","
				  "\"running\":false}]}\n");
	assert_int_equal(decoded.entry_count, 2);
	assert_memory_equal(decoded.entries, reply.entries, 2 * sizeof(*reply.entries));
	free(line);
	vnfs_reply_free(&decoded);

	/* The general form names the same step; a Slurm step in it is one. */
	assert_int_equal(decode("{\"v\":1,\"ok\":true,\"jobs\":[{\"source\":\"slurm\","
				"\"job\":\"7\",\"part\":\"0\",\"uid\":1001,\"user\":\"alice\","
				"\"running\":true}]}",
				VNFS_REQUEST_LIST, &decoded, error, sizeof(error)),
			 0);
	assert_int_equal(decoded.entry_count, 1);
	assert_true(vnfs_workload_equal(&decoded.entries[0].workload, &reply.entries[0].workload));
	vnfs_reply_free(&decoded);
	assert_int_equal(decode("{\"v\":1,\"ok\":true,\"jobs\":[{\"source\":\"slurm\","
				"\"job\":\"7\",\"step\":\"0\",\"uid\":1001,\"user\":\"alice\","
				"\"running\":true}]}",
				VNFS_REQUEST_LIST, &decoded, error, sizeof(error)),
			 -1);
	assert_string_equal(error, "jobs[0]: field 'step' is Slurm's numbers form: with 'source', "
				   "give 'part'");
	vnfs_reply_free(&reply);
}

static void test_status(void **state)
{
	const char status[] = "{\"version\":\"1.0\",\"slots_used\":3,\"attach\":{\"read\":\"fentry\"}}";
	struct vnfs_reply reply, decoded;
	char *line, expected[256];

	(void)state;
	vnfs_reply_init(&reply, VNFS_REQUEST_STATUS);
	reply.status = json_tokener_parse(status);
	assert_non_null(reply.status);
	line = round_trip(&reply, &decoded);
	snprintf(expected, sizeof(expected), "{\"v\":1,\"ok\":true,\"status\":%s}\n", status);
	assert_string_equal(line, expected);
	assert_string_equal(json_object_to_json_string_ext(decoded.status, JSON_C_TO_STRING_PLAIN),
			    status);
	free(line);
	vnfs_reply_free(&reply);
	vnfs_reply_free(&decoded);
}

static void test_history(void **state)
{
	struct sample *sample = new_sample();
	struct vnfs_reply reply, decoded;
	char *line, *again;

	(void)state;
	vnfs_reply_init(&reply, VNFS_REQUEST_HISTORY);
	line = round_trip(&reply, &decoded);
	assert_string_equal(line, "{\"v\":1,\"ok\":true,\"jobs\":[],\"truncated\":false}\n");
	free(line);
	vnfs_reply_free(&decoded);

	reply.jobs = calloc(2, sizeof(*reply.jobs));
	assert_non_null(reply.jobs);
	reply.job_count = 2;
	reply.truncated = true;
	assert_int_equal(vnfs_owned_job_copy(&reply.jobs[0], &sample->job), 0);
	assert_int_equal(vnfs_owned_job_copy(&reply.jobs[1], &sample->job), 0);
	line = round_trip(&reply, &decoded);
	assert_true(decoded.truncated);
	assert_int_equal(decoded.job_count, 2);
	assert_job_is_sample(&decoded.jobs[0], &sample->job);
	assert_job_is_sample(&decoded.jobs[1], &sample->job);
	assert_non_null(strstr(line, "],\"truncated\":true}\n"));
	again = vnfs_reply_encode(&decoded);
	assert_string_equal(again, line);
	free(again);
	free(line);
	vnfs_reply_free(&reply);
	vnfs_reply_free(&decoded);
	free(sample);
}

static void test_error_replies(void **state)
{
	struct vnfs_reply reply, decoded;
	char error[256] = "", *line;

	(void)state;
	vnfs_reply_init(&reply, VNFS_REQUEST_QUERY);
	reply.slot = 3;
	vnfs_reply_fail(&reply, "job %u is not known", 42u);
	assert_false(reply.ok);
	line = vnfs_reply_encode(&reply);
	assert_string_equal(line, "{\"v\":1,\"ok\":false,\"error\":\"job 42 is not known\"}\n");
	/* An ok:false reply is a reply, of any request type. */
	assert_int_equal(decode(line, VNFS_REQUEST_HISTORY, &decoded, error, sizeof(error)), 0);
	assert_false(decoded.ok);
	assert_string_equal(decoded.error, "job 42 is not known");
	free(line);
	vnfs_reply_free(&decoded);

	line = vnfs_reply_encode_error("message exceeds %d bytes", 1024);
	assert_string_equal(line,
			    "{\"v\":1,\"ok\":false,\"error\":\"message exceeds 1024 bytes\"}\n");
	free(line);
}

/* A copy owns its storage: changing or freeing the original leaves it. */
static void test_owned_job_copy_is_deep(void **state)
{
	struct sample *sample = new_sample();
	struct vnfs_owned_job copy;
	struct vnfs_job view;

	(void)state;
	assert_int_equal(vnfs_owned_job_copy(&copy, &sample->job), 0);
	assert_ptr_not_equal(copy.steps[0].stats, sample->steps[0].stats);
	assert_ptr_not_equal(copy.steps[0].processes, sample->steps[0].processes);
	assert_ptr_not_equal(copy.steps[1].mounts, sample->steps[1].mounts);
	sample->stats[0].operations[VNFS_OP_READ].count = 0;
	sample->processes[0].stats.read_ops = 0;
	assert_int_equal(copy.steps[0].stats->operations[VNFS_OP_READ].count, 10);
	assert_int_equal(copy.steps[0].processes[0].stats.read_ops, 5);
	vnfs_owned_job_view(&copy, &view);
	assert_int_equal(view.job_id, 4242);
	assert_ptr_equal(view.steps, copy.steps);
	assert_string_equal(view.user, "alice");
	vnfs_owned_job_free(&copy);
	assert_int_equal(copy.step_count, 0);
	assert_null(copy.steps);
	vnfs_owned_job_free(&copy); /* an empty one is fine */
	free(sample);
}

/* ---- refusals --------------------------------------------------------------- */

static void test_framing(void **state)
{
	struct sample *sample = new_sample();
	struct vnfs_reply reply;
	char *line, *cut;

	(void)state;
	assert_refused(VNFS_REQUEST_UNREGISTER, "", "empty message: expected a JSON object");
	assert_refused(VNFS_REQUEST_UNREGISTER, "{\"v\":1,\"ok\":true}\n{",
		       "unexpected data after the JSON object at byte 18");
	assert_refused(VNFS_REQUEST_UNREGISTER, "[1]", "a reply must be a JSON object");
	assert_refused(VNFS_REQUEST_UNREGISTER, "{\"v\":1,\"ok\":tru",
		       "truncated JSON: the message ends before the object is complete");

	/* Every cut of a whole FINISH reply is refused, never half read. */
	vnfs_reply_init(&reply, VNFS_REQUEST_FINISH);
	assert_int_equal(vnfs_owned_job_copy(&reply.job, &sample->job), 0);
	line = vnfs_reply_encode(&reply);
	assert_non_null(line);
	for (size_t length = 1; length + 1 < strlen(line); length += 7) {
		cut = strndup(line, length);
		assert_non_null(cut);
		assert_refused(VNFS_REQUEST_FINISH, cut,
			       "truncated JSON: the message ends before the object is complete");
		free(cut);
	}
	free(line);
	vnfs_reply_free(&reply);
	free(sample);
}

static void test_version_and_ok(void **state)
{
	(void)state;
	assert_refused(VNFS_REQUEST_UNREGISTER, "{\"ok\":true}",
		       "missing field 'v' (the protocol version, 1)");
	assert_refused(VNFS_REQUEST_UNREGISTER, "{\"v\":2,\"ok\":true}",
		       "unsupported protocol version 2 (this side speaks version 1)");
	assert_refused(VNFS_REQUEST_UNREGISTER, "{\"v\":\"1\",\"ok\":true}",
		       "field 'v' must be the integer 1");
	assert_refused(VNFS_REQUEST_UNREGISTER, "{\"v\":1}", "missing field 'ok'");
	assert_refused(VNFS_REQUEST_UNREGISTER, "{\"v\":1,\"ok\":1}",
		       "field 'ok' must be true or false");
	assert_refused(VNFS_REQUEST_UNREGISTER, "{\"v\":1,\"ok\":false}",
		       "missing field 'error' in an error reply");
	assert_refused(VNFS_REQUEST_UNREGISTER, "{\"v\":1,\"ok\":false,\"error\":7}",
		       "field 'error' must be a string");
	assert_refused(VNFS_REQUEST_UNREGISTER,
		       "{\"v\":1,\"ok\":false,\"error\":\"no\",\"slot\":1}",
		       "unknown field 'slot' in an error reply");
}

static void test_unknown_and_missing_fields(void **state)
{
	(void)state;
	/* The owner is the server's business: a QUERY reply with it is refused. */
	assert_edited_job_refused(VNFS_REQUEST_QUERY, "{\"v\":1,\"ok\":true,\"job\":%s,\"uid\":1001}",
				  "", "", "unknown field 'uid' in a reply to query");
	assert_refused(VNFS_REQUEST_REGISTER, "{\"v\":1,\"ok\":true}",
		       "missing field 'slot' in a reply to register");
	assert_refused(VNFS_REQUEST_UNREGISTER, "{\"v\":1,\"ok\":true,\"slot\":1}",
		       "unknown field 'slot' in a reply to unregister");
	assert_refused(VNFS_REQUEST_FINISH, "{\"v\":1,\"ok\":true}",
		       "missing field 'job' in a reply to finish");
	assert_refused(VNFS_REQUEST_HISTORY, "{\"v\":1,\"ok\":true,\"jobs\":[]}",
		       "missing field 'truncated' in a reply to history");
	assert_refused(VNFS_REQUEST_STATUS, "{\"v\":1,\"ok\":true}",
		       "missing field 'status' in a reply to status");
	assert_refused(VNFS_REQUEST_LIST,
		       "{\"v\":1,\"ok\":true,\"jobs\":[{\"job\":1,\"step\":\"0\",\"uid\":0,"
		       "\"user\":\"u\",\"running\":true,\"state\":\"R\"}]}",
		       "jobs[0]: unknown field 'state' in a list entry");
	assert_refused(VNFS_REQUEST_LIST,
		       "{\"v\":1,\"ok\":true,\"jobs\":[{\"job\":1,\"step\":\"0\",\"uid\":0,"
		       "\"user\":\"u\"}]}",
		       "jobs[0]: missing field 'running' in a list entry");
	assert_refused(VNFS_REQUEST_LIST,
		       "{\"v\":1,\"ok\":true,\"jobs\":[{\"v\":1,\"job\":1,\"step\":\"0\","
		       "\"uid\":0,\"user\":\"u\",\"running\":true}]}",
		       "jobs[0]: unknown field 'v' in a list entry");

	/* In the job object and in its steps, as strictly. */
	assert_edited_job_refused(VNFS_REQUEST_FINISH, "{\"v\":1,\"ok\":true,\"job\":%s}",
				  "\"node\":\"node7\",", "\"node\":\"node7\",\"cluster\":\"c\",",
				  "job: unknown field 'cluster'");
	assert_edited_job_refused(VNFS_REQUEST_FINISH, "{\"v\":1,\"ok\":true,\"job\":%s}",
				  "\"node\":\"node7\",", "", "job: missing field 'node'");
	assert_edited_job_refused(VNFS_REQUEST_HISTORY,
				  "{\"v\":1,\"ok\":true,\"jobs\":[%s],\"truncated\":false}",
				  "\"steps\":[{\"job\":4242,", "\"steps\":[{\"job\":4242,\"rank\":1,",
				  "jobs[0]: steps[0]: unknown field 'rank'");
}

static void test_wrong_types(void **state)
{
	(void)state;
	assert_refused(VNFS_REQUEST_REGISTER, "{\"v\":1,\"ok\":true,\"slot\":\"7\"}",
		       "field 'slot' must be an integer from 0 to 4294967295");
	assert_refused(VNFS_REQUEST_REGISTER, "{\"v\":1,\"ok\":true,\"slot\":-1}",
		       "field 'slot' must be an integer from 0 to 4294967295");
	assert_refused(VNFS_REQUEST_REGISTER, "{\"v\":1,\"ok\":true,\"slot\":4294967296}",
		       "field 'slot' must be an integer from 0 to 4294967295");
	assert_refused(VNFS_REQUEST_REGISTER, "{\"v\":1,\"ok\":true,\"slot\":1.5}",
		       "field 'slot' must be an integer from 0 to 4294967295");
	assert_refused(VNFS_REQUEST_QUERY, "{\"v\":1,\"ok\":true,\"job\":42}",
		       "job: a job must be an object");
	assert_refused(VNFS_REQUEST_LIST, "{\"v\":1,\"ok\":true,\"jobs\":{}}",
		       "field 'jobs' must be an array");
	assert_refused(VNFS_REQUEST_LIST, "{\"v\":1,\"ok\":true,\"jobs\":[7]}",
		       "jobs[0]: an entry must be an object");
	assert_refused(VNFS_REQUEST_LIST,
		       "{\"v\":1,\"ok\":true,\"jobs\":[{\"job\":\"1\",\"step\":\"0\",\"uid\":0,"
		       "\"user\":\"u\",\"running\":true}]}",
		       "jobs[0]: field 'job' must be an integer from 0 to 4294967295");
	assert_refused(VNFS_REQUEST_LIST,
		       "{\"v\":1,\"ok\":true,\"jobs\":[{\"job\":1,\"step\":0,\"uid\":0,"
		       "\"user\":\"u\",\"running\":true}]}",
		       "jobs[0]: field 'step' must be a string");
	assert_refused(VNFS_REQUEST_LIST,
		       "{\"v\":1,\"ok\":true,\"jobs\":[{\"job\":1,\"step\":\"x\",\"uid\":0,"
		       "\"user\":\"u\",\"running\":true}]}",
		       "jobs[0]: field 'step' must be a step, not 'x'");
	assert_refused(VNFS_REQUEST_LIST,
		       "{\"v\":1,\"ok\":true,\"jobs\":[{\"job\":1,\"step\":\"0\",\"uid\":-3,"
		       "\"user\":\"u\",\"running\":true}]}",
		       "jobs[0]: field 'uid' must be an integer from 0 to 4294967295");
	assert_refused(VNFS_REQUEST_LIST,
		       "{\"v\":1,\"ok\":true,\"jobs\":[{\"job\":1,\"step\":\"0\",\"uid\":0,"
		       "\"user\":null,\"running\":true}]}",
		       "jobs[0]: field 'user' must be a string");
	/* A user name as JSON text: 33 bytes, each at most 4 when escaped. */
	{
		char text[512], name[140];

		memset(name, 'u', 132);
		name[132] = '\0';
		snprintf(text, sizeof(text),
			 "{\"v\":1,\"ok\":true,\"jobs\":[{\"job\":1,\"step\":\"0\",\"uid\":0,"
			 "\"user\":\"%s\",\"running\":true}]}", name);
		assert_refused(VNFS_REQUEST_LIST, text,
			       "jobs[0]: field 'user' is 132 bytes, longer than 131");
	}
	assert_refused(VNFS_REQUEST_LIST,
		       "{\"v\":1,\"ok\":true,\"jobs\":[{\"job\":1,\"step\":\"0\",\"uid\":0,"
		       "\"user\":\"u\",\"running\":\"yes\"}]}",
		       "jobs[0]: field 'running' must be true or false");
	assert_refused(VNFS_REQUEST_STATUS, "{\"v\":1,\"ok\":true,\"status\":[]}",
		       "field 'status' must be an object");
	assert_refused(VNFS_REQUEST_HISTORY, "{\"v\":1,\"ok\":true,\"jobs\":[],\"truncated\":0}",
		       "field 'truncated' must be true or false");

	/* A job's field of the wrong type, in a FINISH reply. */
	assert_edited_job_refused(VNFS_REQUEST_FINISH, "{\"v\":1,\"ok\":true,\"job\":%s}",
				  "\"uid\":1001,\"user\":\"alice\",\"node\"",
				  "\"uid\":\"1001\",\"user\":\"alice\",\"node\"",
				  "job: field 'uid' must be an integer");
	/* A total of the wrong type: checked though not kept. */
	assert_edited_job_refused(VNFS_REQUEST_FINISH, "{\"v\":1,\"ok\":true,\"job\":%s}",
				  "\"operations\":{\"read\":{\"count\":21",
				  "\"operations\":{\"read\":{\"count\":true",
				  "job: operations.read: field 'count' must be an integer");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_register_and_unregister),
		cmocka_unit_test(test_finish_and_query),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_history),
		cmocka_unit_test(test_error_replies),
		cmocka_unit_test(test_owned_job_copy_is_deep),
		cmocka_unit_test(test_framing),
		cmocka_unit_test(test_version_and_ok),
		cmocka_unit_test(test_unknown_and_missing_fields),
		cmocka_unit_test(test_wrong_types),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
