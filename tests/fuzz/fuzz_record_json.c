/*
 * fuzz_record_json.c — libFuzzer target for lib/record_json.c's reader,
 * vnfs_step_record_from_json, which vnfs-report runs on the helper's QUERY
 * replies and on report files (any file under report_dir, whoever wrote it).
 *
 * Input: JSON text, parsed with json-c as vnfs-report does (strict).  A job
 * ({"steps": [...]}, the report file form) has each step read; anything else
 * is read as one step record.  Every step read is then written again
 * (vnfs_step_record_to_json) and read back, and the steps are summed as a
 * job (vnfs_job_to_json), as the helper does for a report file.  Checked
 * beyond the sanitizers: a refusal says why; an accepted record has bounded,
 * NUL-terminated fields and valid tags; and what the writer writes, the
 * reader reads back as the same record (see read_step).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "lib/record_json.h"

#define MAX_STEPS 16

#define TERMINATED(field) (memchr((field), '\0', sizeof(field)) != NULL)

static void check_record(const struct vnfs_step_record *record)
{
	const char *name, *value;

	if (!TERMINATED(record->user) || !TERMINATED(record->node) ||
	    !TERMINATED(record->cgroup_path) || record->stats == NULL ||
	    (record->process_count > 0) != (record->processes != NULL) ||
	    (record->mount_count > 0) != (record->mounts != NULL) ||
	    record->process_count > VNFS_MAX_PROCESS_ENTRIES ||
	    record->mount_count > VNFS_MAX_MOUNT_ENTRIES ||
	    vnfs_tags_count(record->tags) > VNFS_MAX_TAGS)
		abort();
	for (unsigned i = 0; vnfs_tags_get(record->tags, i, &name, &value); i++)
		if (!vnfs_tag_name_valid(name) || !vnfs_tag_value_valid(value))
			abort();
	for (size_t i = 0; i < record->process_count; i++)
		if (!TERMINATED(record->processes[i].comm))
			abort();
	for (size_t i = 0; i < record->mount_count; i++)
		if (!TERMINATED(record->mounts[i].mount_point) ||
		    !TERMINATED(record->mounts[i].source) || !TERMINATED(record->mounts[i].version))
			abort();
}

static void check_same(const struct vnfs_step_record *a, const struct vnfs_step_record *b)
{
	if (a->job_id != b->job_id || a->step_id != b->step_id || a->uid != b->uid ||
	    strcmp(a->user, b->user) != 0 || strcmp(a->node, b->node) != 0 ||
	    a->cgroup_id != b->cgroup_id || strcmp(a->cgroup_path, b->cgroup_path) != 0 ||
	    !vnfs_tags_equal(a->tags, b->tags) ||
	    a->start_time_ms != b->start_time_ms || a->end_time_ms != b->end_time_ms ||
	    a->sample_time_ms != b->sample_time_ms || a->finished != b->finished ||
	    memcmp(a->stats, b->stats, sizeof(*a->stats)) != 0 ||
	    a->process_count != b->process_count || a->mount_count != b->mount_count)
		abort();
	for (size_t i = 0; i < a->process_count; i++)
		if (strcmp(a->processes[i].comm, b->processes[i].comm) != 0 ||
		    memcmp(&a->processes[i].stats, &b->processes[i].stats,
			   sizeof(a->processes[i].stats)) != 0)
			abort();
	for (size_t i = 0; i < a->mount_count; i++) {
		const struct vnfs_mount_record *x = &a->mounts[i], *y = &b->mounts[i];

		if (x->device != y->device || strcmp(x->mount_point, y->mount_point) != 0 ||
		    strcmp(x->source, y->source) != 0 || strcmp(x->version, y->version) != 0 ||
		    x->rsize != y->rsize || x->wsize != y->wsize ||
		    memcmp(&x->stats, &y->stats, sizeof(x->stats)) != 0)
			abort();
	}
}

/* Well-formed UTF-8 (no overlongs, surrogates or code points past U+10FFFF). */
static bool utf8_valid(const char *text)
{
	const unsigned char *s = (const unsigned char *)text;

	while (*s) {
		size_t length;

		if (s[0] < 0x80)
			length = 1;
		else if (s[0] >= 0xc2 && s[0] <= 0xdf)
			length = 2;
		else if (s[0] >= 0xe0 && s[0] <= 0xef)
			length = 3;
		else if (s[0] >= 0xf0 && s[0] <= 0xf4)
			length = 4;
		else
			return false;
		for (size_t i = 1; i < length; i++)
			if ((s[i] & 0xc0) != 0x80)
				return false;
		if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
		    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
			return false;
		s += length;
	}
	return true;
}

static bool record_utf8(const struct vnfs_step_record *record)
{
	if (!utf8_valid(record->user) || !utf8_valid(record->node) ||
	    !utf8_valid(record->cgroup_path))
		return false;
	for (size_t i = 0; i < record->process_count; i++)
		if (!utf8_valid(record->processes[i].comm))
			return false;
	for (size_t i = 0; i < record->mount_count; i++)
		if (!utf8_valid(record->mounts[i].mount_point) ||
		    !utf8_valid(record->mounts[i].source) || !utf8_valid(record->mounts[i].version))
			return false;
	return true;
}

/* Writes record as JSON text (as a reply or a file carries it) and reads it
 * back into *again: what the writer says, the reader must accept. */
static void round_trip(const struct vnfs_step_record *record, struct vnfs_step_record *again)
{
	struct json_object *written = vnfs_step_record_to_json(record);
	const char *text = json_object_to_json_string_ext(written, JSON_C_TO_STRING_PLAIN);
	struct json_object *parsed = json_tokener_parse(text);
	char error[256];

	if (parsed == NULL)
		abort();
	if (vnfs_step_record_from_json(parsed, again, error, sizeof(error)) != 0) {
		fprintf(stderr, "fuzz_record_json: the reader refuses what the writer wrote: %s\n",
			error);
		abort();
	}
	check_record(again);
	json_object_put(parsed);
	json_object_put(written);
}

/*
 * Reads one step, then checks the writer against it: a string that is not
 * valid UTF-8 is written in a canonical form (lib/escape.h) rather than as
 * is, so the first round trip may change such a string, but it must give the
 * same record as the original when everything is valid UTF-8, and a second
 * round trip must change nothing.  Returns 0 when the record was accepted
 * (then *record holds it), -1 otherwise.
 */
static int read_step(const struct json_object *object, struct vnfs_step_record *record)
{
	struct vnfs_step_record once, twice;
	char error[256] = "";

	if (vnfs_step_record_from_json(object, record, error, sizeof(error)) != 0) {
		if (error[0] == '\0' || record->stats != NULL || record->processes != NULL ||
		    record->mounts != NULL)
			abort();
		return -1;
	}
	check_record(record);
	round_trip(record, &once);
	round_trip(&once, &twice);
	check_same(&once, &twice);
	if (record_utf8(record))
		check_same(record, &once);
	vnfs_step_record_free_arrays(&twice);
	vnfs_step_record_free_arrays(&once);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_tokener *tokener = json_tokener_new();
	struct json_object *root, *steps;
	struct vnfs_step_record *records = calloc(MAX_STEPS, sizeof(*records));
	size_t count = 0;

	if (tokener == NULL || records == NULL)
		abort();
	json_tokener_set_flags(tokener, JSON_TOKENER_STRICT);
	root = json_tokener_parse_ex(tokener, (const char *)data, (int)size);
	if (root == NULL) {
		json_tokener_free(tokener);
		free(records);
		return 0;
	}
	if (json_object_is_type(root, json_type_object) &&
	    json_object_object_get_ex(root, "steps", &steps) &&
	    json_object_is_type(steps, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(steps) && count < MAX_STEPS; i++)
			if (read_step(json_object_array_get_idx(steps, i), &records[count]) == 0)
				count++;
	} else if (read_step(root, &records[0]) == 0) {
		count = 1;
	}

	if (count > 0) {
		/* The job these steps would make, as written into a report file. */
		struct vnfs_job job = {
			.workload = records[0].workload,
			.job_id = records[0].job_id,
			.uid = records[0].uid,
			.user = records[0].user,
			.node = records[0].node,
			.start_time_ms = records[0].start_time_ms,
			.end_time_ms = records[count - 1].end_time_ms,
			.step_count = count,
			.steps = records,
		};
		struct json_object *written = vnfs_job_to_json(&job);

		if (written == NULL || json_object_to_json_string(written) == NULL)
			abort();
		json_object_put(written);
	}
	for (size_t i = 0; i < count; i++)
		vnfs_step_record_free_arrays(&records[i]);
	json_object_put(root);
	json_tokener_free(tokener);
	free(records);
	return 0;
}
