/*
 * protocol.c — encoding and strict decoding of the helper's requests, and
 * the strict JSON reading replies share (lib/reply.c; see protocol.h,
 * docs/PROTOCOL.md).
 *
 * Decoding is deliberately unforgiving: the peer is either our own code or
 * someone probing a root daemon, so anything not exactly a request of this
 * version (unknown field, wrong type, number out of range, trailing bytes) is
 * refused with a message precise enough to find the mistake from a log line.
 */
#include "lib/log.h"
#include "lib/protocol.h"

#include <json-c/json.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/record.h"

/* Bytes of a client-supplied name (field, type, tag) shown in a message. */
#define SHOWN_MAX 40

/* Requests are flat objects with one nested object (tags): deeper is junk. */
#define MAX_NESTING 3

enum field {
	FIELD_VERSION,
	FIELD_TYPE,
	FIELD_SOURCE,
	FIELD_JOB,
	FIELD_STEP,
	FIELD_PART,
	FIELD_UID,
	FIELD_CGROUP_ID,
	FIELD_CGROUP_PATH,
	FIELD_TAGS,
	FIELD_REPORT_DIR,
	FIELD_SINCE,
	FIELD_UNTIL,
	FIELD_COUNT
};

static const char *const field_names[FIELD_COUNT] = {
	[FIELD_VERSION] = "v",
	[FIELD_TYPE] = "type",
	[FIELD_SOURCE] = "source",
	[FIELD_JOB] = "job",
	[FIELD_STEP] = "step",
	[FIELD_PART] = "part",
	[FIELD_UID] = "uid",
	[FIELD_CGROUP_ID] = "cgroup_id",
	[FIELD_CGROUP_PATH] = "cgroup_path",
	[FIELD_TAGS] = "tags",
	[FIELD_REPORT_DIR] = "report_dir",
	[FIELD_SINCE] = "since",
	[FIELD_UNTIL] = "until",
};

#define BIT(field) (1u << (field))
#define COMMON_FIELDS (BIT(FIELD_VERSION) | BIT(FIELD_TYPE))
/* A workload in either form (see protocol.h); a job without a part. */
#define WORKLOAD_FIELDS (BIT(FIELD_SOURCE) | BIT(FIELD_JOB) | BIT(FIELD_STEP) | BIT(FIELD_PART))
#define JOB_FIELDS (BIT(FIELD_SOURCE) | BIT(FIELD_JOB))

/* Which fields each request may and must carry. */
static const struct request_shape {
	const char *name;
	unsigned allowed;
	unsigned required;
} shapes[VNFS_REQUEST_TYPES] = {
	[VNFS_REQUEST_REGISTER] = {
		"register",
		COMMON_FIELDS | WORKLOAD_FIELDS | BIT(FIELD_UID) | BIT(FIELD_CGROUP_ID) |
			BIT(FIELD_CGROUP_PATH) | BIT(FIELD_TAGS),
		COMMON_FIELDS | BIT(FIELD_JOB) | BIT(FIELD_UID),
	},
	[VNFS_REQUEST_UNREGISTER] = {
		"unregister",
		COMMON_FIELDS | WORKLOAD_FIELDS,
		COMMON_FIELDS | BIT(FIELD_JOB),
	},
	[VNFS_REQUEST_FINISH] = {
		"finish",
		COMMON_FIELDS | JOB_FIELDS | BIT(FIELD_REPORT_DIR),
		COMMON_FIELDS | BIT(FIELD_JOB),
	},
	[VNFS_REQUEST_QUERY] = {
		"query",
		COMMON_FIELDS | WORKLOAD_FIELDS,
		COMMON_FIELDS | BIT(FIELD_JOB),
	},
	[VNFS_REQUEST_LIST] = { "list", COMMON_FIELDS, COMMON_FIELDS },
	[VNFS_REQUEST_STATUS] = { "status", COMMON_FIELDS, COMMON_FIELDS },
	[VNFS_REQUEST_HISTORY] = {
		"history",
		COMMON_FIELDS | BIT(FIELD_SINCE) | BIT(FIELD_UNTIL),
		COMMON_FIELDS,
	},
};

/* Slurm's special steps, accepted by name as well as by number. */
static const struct {
	const char *name;
	uint32_t id;
} step_names[] = {
	{ "batch", VNFS_STEP_BATCH },
	{ "extern", VNFS_STEP_EXTERN },
	{ "interactive", VNFS_STEP_INTERACTIVE },
};

const char *vnfs_request_type_name(enum vnfs_request_type type)
{
	if ((unsigned)type >= VNFS_REQUEST_TYPES)
		return NULL;
	return shapes[type].name;
}

/*
 * Copies a client-supplied name into out for a message: cut at SHOWN_MAX,
 * anything but printable ASCII as '?', so that a hostile key can neither
 * forge log lines nor put broken UTF-8 into a reply.
 */
static const char *shown(const char *text, size_t length, char *out, size_t size)
{
	size_t n = 0;

	for (size_t i = 0; i < length && n + 4 < size && i < SHOWN_MAX; i++) {
		unsigned char c = (unsigned char)text[i];

		out[n++] = (c < 0x20 || c >= 0x7f) ? '?' : (char)c;
	}
	if (length > SHOWN_MAX && n + 4 < size) {
		memcpy(out + n, "...", 3);
		n += 3;
	}
	out[n] = '\0';
	return out;
}

/* "a register request", "an unregister request". */
static const char *article(const char *noun)
{
	return strchr("aeiou", noun[0]) ? "an" : "a";
}

static int field_index(const char *key)
{
	for (int i = 0; i < FIELD_COUNT; i++) {
		if (strcmp(key, field_names[i]) == 0)
			return i;
	}
	return -1;
}

/* "job, step, uid" for the allowed fields of a shape, in out. */
static const char *allowed_list(unsigned allowed, char *out, size_t size)
{
	size_t used = 0;

	out[0] = '\0';
	for (int i = FIELD_TYPE + 1; i < FIELD_COUNT && used < size; i++) {
		if (allowed & BIT(i))
			used += (size_t)snprintf(out + used, size - used, "%s%s",
						 used ? ", " : "", field_names[i]);
	}
	if (used == 0)
		snprintf(out, size, "only v and type");
	return out;
}

/* An integer field within [0, max]; json-c saturates bigger numbers at
 * UINT64_MAX, so max must stay below that to catch them. */
static int get_unsigned(struct json_object *value, const char *name, uint64_t max,
			uint64_t *out, char *error, size_t error_size)
{
	int64_t signed_value;
	uint64_t unsigned_value;

	if (!json_object_is_type(value, json_type_int))
		return vnfs_fail(error, error_size, "field '%s' must be an integer from 0 to %llu",
			    name, (unsigned long long)max);
	signed_value = json_object_get_int64(value);
	unsigned_value = json_object_get_uint64(value);
	if (signed_value < 0 || unsigned_value > max)
		return vnfs_fail(error, error_size, "field '%s' must be an integer from 0 to %llu",
			    name, (unsigned long long)max);
	*out = unsigned_value;
	return 0;
}

int vnfs_protocol_get_uint32(struct json_object *value, const char *name, uint32_t *out,
			     char *error, size_t error_size)
{
	uint64_t wide;

	if (get_unsigned(value, name, UINT32_MAX, &wide, error, error_size) < 0)
		return -1;
	*out = (uint32_t)wide;
	return 0;
}

static int get_step(struct json_object *value, uint32_t *out, char *error, size_t error_size)
{
	const char *text;

	if (!json_object_is_type(value, json_type_string))
		return vnfs_protocol_get_uint32(value, "step", out, error, error_size);
	text = json_object_get_string(value);
	for (size_t i = 0; i < sizeof(step_names) / sizeof(step_names[0]); i++) {
		if ((size_t)json_object_get_string_len(value) == strlen(step_names[i].name) &&
		    strcmp(text, step_names[i].name) == 0) {
			*out = step_names[i].id;
			return 0;
		}
	}
	return vnfs_fail(error, error_size,
		    "field 'step' must be an integer from 0 to 4294967295 or one of "
		    "\"batch\", \"extern\", \"interactive\"");
}

int vnfs_protocol_get_text(struct json_object *value, const char *name, char *out, size_t size,
			   char *error, size_t error_size)
{
	const char *text;
	size_t length;

	if (!json_object_is_type(value, json_type_string))
		return vnfs_fail(error, error_size, "field '%s' must be a string", name);
	text = json_object_get_string(value);
	length = (size_t)json_object_get_string_len(value);
	if (length >= size)
		return vnfs_fail(error, error_size, "field '%s' is %zu bytes, longer than %zu", name,
			    length, size - 1);
	if (strlen(text) != length)
		return vnfs_fail(error, error_size, "field '%s' contains a NUL character", name);
	/* Text goes into JSON, the journal and logs: text, not arbitrary bytes. */
	if (!vnfs_utf8_valid(text, length))
		return vnfs_fail(error, error_size, "field '%s' is not valid UTF-8", name);
	memcpy(out, text, length + 1);
	return 0;
}

/* An absolute path of at most size - 1 bytes, without NUL or ".." parts. */
static int get_path(struct json_object *value, const char *name, char *out, size_t size,
		    char *error, size_t error_size)
{
	size_t length;

	if (vnfs_protocol_get_text(value, name, out, size, error, error_size) < 0)
		return -1;
	length = strlen(out);
	if (out[0] != '/') {
		out[0] = '\0';
		return vnfs_fail(error, error_size, "field '%s' must be an absolute path", name);
	}
	if (strstr(out, "/../") || (length >= 3 && strcmp(out + length - 3, "/..") == 0)) {
		out[0] = '\0';
		return vnfs_fail(error, error_size, "field '%s' must not contain '..'", name);
	}
	return 0;
}

static int get_tags(struct json_object *value, struct vnfs_tag_list *tags, char *error,
		    size_t error_size)
{
	char name_shown[SHOWN_MAX + 8];

	if (!json_object_is_type(value, json_type_object))
		return vnfs_fail(error, error_size,
			    "field 'tags' must be an object of NAME: \"value\" strings");
	json_object_object_foreach(value, name, tag_value) {
		const char *text;

		shown(name, strlen(name), name_shown, sizeof(name_shown));
		if (!json_object_is_type(tag_value, json_type_string))
			return vnfs_fail(error, error_size, "tag '%s' must have a string value",
				    name_shown);
		text = json_object_get_string(tag_value);
		if (strlen(text) != (size_t)json_object_get_string_len(tag_value))
			return vnfs_fail(error, error_size, "tag '%s': value contains a NUL character",
				    name_shown);
		if (vnfs_tags_set(tags, name, text, error, error_size) < 0)
			return -1;
	}
	return 0;
}

/* The workload's fields as an object holds them (see protocol.h): what
 * "job" must be depends on whether "source" is there. */
struct workload_fields {
	/* Present or not; a JSON null is present, with a NULL value. */
	bool has_source, has_step, has_part;
	struct json_object *source, *job, *step, *part;
};

/* Slurm's numbers form: {"job": 42, "step": 0}. */
static int decode_slurm_numbers(const struct workload_fields *fields,
				struct vnfs_workload *workload, char *error, size_t error_size)
{
	uint32_t job_id, step_id;

	if (fields->has_part)
		return vnfs_fail(error, error_size,
				 "field 'part' needs field 'source' (with Slurm's numbers, "
				 "give 'step')");
	if (vnfs_protocol_get_uint32(fields->job, "job", &job_id, error, error_size) < 0)
		return -1;
	if (!fields->has_step) {
		vnfs_workload_of_slurm_job(workload, job_id);
		return 0;
	}
	if (get_step(fields->step, &step_id, error, error_size) < 0)
		return -1;
	vnfs_workload_of_slurm_step(workload, job_id, step_id);
	return 0;
}

/* The general form: {"source": "slurm", "job": "42", "part": "0"}. */
static int decode_general(const struct workload_fields *fields, struct vnfs_workload *workload,
			  char *error, size_t error_size)
{
	char source_name[32], job[VNFS_WORKLOAD_JOB_MAX], part[VNFS_WORKLOAD_PART_MAX] = "";
	char name_shown[SHOWN_MAX + 8];
	enum vnfs_workload_source source;

	if (fields->has_step)
		return vnfs_fail(error, error_size,
				 "field 'step' is Slurm's numbers form: with 'source', give 'part'");
	if (vnfs_protocol_get_text(fields->source, "source", source_name, sizeof(source_name),
				   error, error_size) < 0)
		return -1;
	if (vnfs_workload_source_parse(source_name, &source) < 0)
		return vnfs_fail(error, error_size, "unknown workload source '%s'",
				 shown(source_name, strlen(source_name), name_shown,
				       sizeof(name_shown)));
	if (vnfs_protocol_get_text(fields->job, "job", job, sizeof(job), error, error_size) < 0 ||
	    (fields->has_part && vnfs_protocol_get_text(fields->part, "part", part,
							    sizeof(part), error, error_size) < 0))
		return -1;
	return vnfs_workload_set(workload, source, job, part, error, error_size);
}

int vnfs_protocol_get_workload(struct json_object *object, struct vnfs_workload *workload,
			       char *error, size_t error_size)
{
	struct workload_fields fields = { 0 };

	fields.has_source = json_object_object_get_ex(object, "source", &fields.source);
	fields.has_step = json_object_object_get_ex(object, "step", &fields.step);
	fields.has_part = json_object_object_get_ex(object, "part", &fields.part);
	if (!json_object_object_get_ex(object, "job", &fields.job))
		return vnfs_fail(error, error_size, "missing field 'job'");
	return (fields.has_source ? decode_general : decode_slurm_numbers)(
		&fields, workload, error, error_size);
}

/* The request's workload, once its fields passed the shape's check. */
static int decode_workload(struct json_object *object, struct vnfs_request *request,
			   char *error, size_t error_size)
{
	const char *type = shapes[request->type].name;

	if (vnfs_protocol_get_workload(object, &request->workload, error, error_size) < 0)
		return -1;
	/* A Slurm step is what the plugin registers; other sources may
	 * register a job that has no parts. */
	if ((request->type == VNFS_REQUEST_REGISTER || request->type == VNFS_REQUEST_UNREGISTER) &&
	    request->workload.source == VNFS_SOURCE_SLURM && request->workload.part[0] == '\0')
		return vnfs_fail(error, error_size, "missing field 'step' in %s %s request",
				 article(type), type);
	return 0;
}

static int decode_field(int field, struct json_object *value, struct vnfs_request *request,
			char *error, size_t error_size)
{
	uint64_t wide;

	switch (field) {
	case FIELD_UID:
		return vnfs_protocol_get_uint32(value, "uid", &request->uid, error, error_size);
	case FIELD_CGROUP_ID:
		/* Limited to INT64_MAX: real ids are far smaller, and it keeps the
		 * value exact in every JSON reader. */
		if (get_unsigned(value, "cgroup_id", INT64_MAX, &wide, error, error_size) < 0)
			return -1;
		request->cgroup_id = wide;
		return 0;
	case FIELD_CGROUP_PATH:
		return get_path(value, "cgroup_path", request->cgroup_path,
				sizeof(request->cgroup_path), error, error_size);
	case FIELD_TAGS:
		return get_tags(value, &request->tags, error, error_size);
	case FIELD_REPORT_DIR:
		return get_path(value, "report_dir", request->report_dir,
				sizeof(request->report_dir), error, error_size);
	case FIELD_SINCE:
	case FIELD_UNTIL:
		/* Milliseconds since the epoch, INT64_MAX at most (exact in JSON). */
		if (get_unsigned(value, field_names[field], INT64_MAX, &wide, error, error_size) < 0)
			return -1;
		if (field == FIELD_SINCE) {
			request->has_since = true;
			request->since_ms = (int64_t)wide;
		} else {
			request->has_until = true;
			request->until_ms = (int64_t)wide;
		}
		return 0;
	default:
		return 0; /* v and type are read before the others, the workload after */
	}
}

int vnfs_protocol_check_version(struct json_object *object, char *error, size_t error_size)
{
	struct json_object *value;

	if (!json_object_object_get_ex(object, "v", &value))
		return vnfs_fail(error, error_size, "missing field 'v' (the protocol version, %d)",
			    VNFS_PROTOCOL_VERSION);
	if (!json_object_is_type(value, json_type_int))
		return vnfs_fail(error, error_size, "field 'v' must be the integer %d",
			    VNFS_PROTOCOL_VERSION);
	if (json_object_get_int64(value) != VNFS_PROTOCOL_VERSION ||
	    json_object_get_uint64(value) != VNFS_PROTOCOL_VERSION)
		return vnfs_fail(error, error_size,
			    "unsupported protocol version %s (this side speaks version %d)",
			    json_object_to_json_string(value), VNFS_PROTOCOL_VERSION);
	return 0;
}

static int decode_type(struct json_object *object, enum vnfs_request_type *type, char *error,
		       size_t error_size)
{
	struct json_object *value;
	const char *text;
	size_t length;
	char type_shown[SHOWN_MAX + 8];

	if (!json_object_object_get_ex(object, "type", &value))
		return vnfs_fail(error, error_size, "missing field 'type' (the request type)");
	if (!json_object_is_type(value, json_type_string))
		return vnfs_fail(error, error_size, "field 'type' must be a string");
	text = json_object_get_string(value);
	length = (size_t)json_object_get_string_len(value);
	for (int i = 0; i < VNFS_REQUEST_TYPES; i++) {
		if (length == strlen(shapes[i].name) && strcmp(text, shapes[i].name) == 0) {
			*type = (enum vnfs_request_type)i;
			return 0;
		}
	}
	return vnfs_fail(error, error_size, "unknown request type '%s'",
		    shown(text, length, type_shown, sizeof(type_shown)));
}

static int decode_object(struct json_object *object, struct vnfs_request *request, char *error,
			 size_t error_size)
{
	const struct request_shape *shape;
	unsigned present = 0;
	char text[160];

	if (!json_object_is_type(object, json_type_object))
		return vnfs_fail(error, error_size, "a request must be a JSON object");
	if (vnfs_protocol_check_version(object, error, error_size) < 0 ||
	    decode_type(object, &request->type, error, error_size) < 0)
		return -1;
	shape = &shapes[request->type];

	json_object_object_foreach(object, key, value) {
		int field = field_index(key);

		if (field < 0 || !(shape->allowed & BIT(field))) {
			char key_shown[SHOWN_MAX + 8];

			return vnfs_fail(error, error_size,
				    "unknown field '%s' in %s %s request (allowed: %s)",
				    shown(key, strlen(key), key_shown, sizeof(key_shown)),
				    article(shape->name), shape->name, allowed_list(shape->allowed, text, sizeof(text)));
		}
		present |= BIT(field);
		if (decode_field(field, value, request, error, error_size) < 0)
			return -1;
	}

	for (int field = 0; field < FIELD_COUNT; field++) {
		if ((shape->required & BIT(field)) && !(present & BIT(field)))
			return vnfs_fail(error, error_size, "missing field '%s' in %s %s request",
				    field_names[field], article(shape->name), shape->name);
	}
	if ((present & BIT(FIELD_JOB)) && decode_workload(object, request, error, error_size) < 0)
		return -1;
	if (request->type == VNFS_REQUEST_REGISTER && request->cgroup_id == 0 &&
	    request->cgroup_path[0] == '\0')
		return vnfs_fail(error, error_size,
			    "a register request needs a non-zero 'cgroup_id' or a 'cgroup_path'");
	return 0;
}

/* Where the JSON value ended, only whitespace may follow (a client's '\n'). */
static int check_trailing(const char *text, size_t length, size_t end, char *error,
			  size_t error_size)
{
	for (size_t i = end; i < length; i++) {
		if (text[i] != ' ' && text[i] != '\t' && text[i] != '\r' && text[i] != '\n')
			return vnfs_fail(error, error_size,
				    "unexpected data after the JSON object at byte %zu", i);
	}
	return 0;
}

/*
 * Where the value ends when read leniently, or 0 if it does not parse.  The
 * strict tokener reports data after the object as a bare "unexpected
 * character"; this tells that case apart for a clearer message.
 */
static size_t lenient_end(const char *text, size_t length, int max_depth)
{
	struct json_tokener *tokener = json_tokener_new_ex(max_depth);
	struct json_object *object;
	size_t end = 0;

	if (tokener == NULL)
		return 0;
	object = json_tokener_parse_ex(tokener, text, (int)length);
	if (object != NULL)
		end = json_tokener_get_parse_end(tokener);
	json_object_put(object);
	json_tokener_free(tokener);
	return end;
}

static struct json_object *parse_json(const char *text, size_t length, int max_depth,
				      char *error, size_t error_size)
{
	struct json_tokener *tokener = json_tokener_new_ex(max_depth);
	struct json_object *object;
	enum json_tokener_error status;
	size_t end;

	if (tokener == NULL) {
		vnfs_fail(error, error_size, "out of memory");
		return NULL;
	}
	json_tokener_set_flags(tokener, JSON_TOKENER_STRICT);
	object = json_tokener_parse_ex(tokener, text, (int)length);
	status = json_tokener_get_error(tokener);
	end = json_tokener_get_parse_end(tokener);
	json_tokener_free(tokener);
	if (object != NULL) {
		if (check_trailing(text, length, end, error, error_size) == 0)
			return object;
		json_object_put(object);
		return NULL;
	}
	if (status == json_tokener_continue) {
		vnfs_fail(error, error_size,
		     "truncated JSON: the message ends before the object is complete");
	} else {
		size_t lenient = lenient_end(text, length, max_depth);

		if (lenient > 0 && lenient <= end &&
		    check_trailing(text, length, lenient, error, error_size) < 0)
			return NULL;
		vnfs_fail(error, error_size, "invalid JSON at byte %zu: %s", end,
		     json_tokener_error_desc(status));
	}
	return NULL;
}

static bool only_whitespace(const char *text, size_t length)
{
	for (size_t i = 0; i < length; i++) {
		if (text[i] != ' ' && text[i] != '\t' && text[i] != '\r' && text[i] != '\n')
			return false;
	}
	return true;
}

struct json_object *vnfs_protocol_parse(const char *text, size_t length, int max_depth,
				       char *error, size_t error_size)
{
	const char *nul;

	if (length > INT_MAX) {
		vnfs_fail(error, error_size, "message of %zu bytes exceeds %d", length, INT_MAX);
		return NULL;
	}
	if (only_whitespace(text, length)) {
		vnfs_fail(error, error_size, "empty message: expected a JSON object");
		return NULL;
	}
	nul = memchr(text, '\0', length);
	if (nul != NULL) {
		vnfs_fail(error, error_size, "message contains a NUL byte at byte %zu",
			  (size_t)(nul - text));
		return NULL;
	}
	return parse_json(text, length, max_depth, error, error_size);
}

int vnfs_request_decode(const char *text, size_t length, size_t max_length,
			struct vnfs_request *request, char *error, size_t error_size)
{
	struct json_object *object;
	int result;

	memset(request, 0, sizeof(*request));
	vnfs_tags_init(&request->tags);
	if (length > max_length || length > INT_MAX)
		return vnfs_fail(error, error_size, "message of %zu bytes exceeds %zu", length,
			    max_length < INT_MAX ? max_length : (size_t)INT_MAX);
	object = vnfs_protocol_parse(text, length, MAX_NESTING, error, error_size);
	if (object == NULL)
		return -1;
	result = decode_object(object, request, error, error_size);
	json_object_put(object);
	if (result < 0) {
		memset(request, 0, sizeof(*request));
		vnfs_tags_init(&request->tags);
	}
	return result;
}

/* json-c's add only fails on allocation; one check at the end catches it. */
static bool add_field(struct json_object *object, const char *name, struct json_object *value)
{
	if (value == NULL)
		return false;
	if (json_object_object_add(object, name, value) < 0) {
		json_object_put(value);
		return false;
	}
	return true;
}

bool vnfs_protocol_add(struct json_object *object, const char *name, struct json_object *value)
{
	return add_field(object, name, value);
}

char *vnfs_protocol_line(struct json_object *object, bool filled)
{
	const char *json = NULL;
	char *line = NULL;

	if (filled)
		json = json_object_to_json_string_ext(object, JSON_C_TO_STRING_PLAIN |
								      JSON_C_TO_STRING_NOSLASHESCAPE);
	if (json != NULL && asprintf(&line, "%s\n", json) < 0)
		line = NULL;
	json_object_put(object);
	return line;
}

bool vnfs_protocol_add_workload(struct json_object *object, const struct vnfs_workload *workload)
{
	const char *source = vnfs_workload_source_name(workload->source);
	uint32_t job_id, step_id = 0;
	bool ok;

	if (vnfs_workload_slurm_job_id(workload, &job_id) == 0 &&
	    (workload->part[0] == '\0' || vnfs_step_parse(workload->part, &step_id) == 0)) {
		ok = add_field(object, "job", json_object_new_int64(job_id));
		if (workload->part[0] != '\0')
			ok = ok && add_field(object, "step", json_object_new_int64(step_id));
		return ok;
	}
	ok = source != NULL && add_field(object, "source", json_object_new_string(source));
	ok = ok && add_field(object, "job", json_object_new_string(workload->job));
	if (workload->part[0] != '\0')
		ok = ok && add_field(object, "part", json_object_new_string(workload->part));
	return ok;
}

static bool add_request_fields(struct json_object *object, const struct vnfs_request *request)
{
	bool ok = true;
	const char *name, *value;

	switch (request->type) {
	case VNFS_REQUEST_REGISTER:
		ok = ok && vnfs_protocol_add_workload(object, &request->workload);
		ok = ok && add_field(object, "uid", json_object_new_int64(request->uid));
		ok = ok && add_field(object, "cgroup_id", json_object_new_uint64(request->cgroup_id));
		if (request->cgroup_path[0] != '\0')
			ok = ok && add_field(object, "cgroup_path",
					     json_object_new_string(request->cgroup_path));
		if (ok) {
			struct json_object *tags = json_object_new_object();

			for (unsigned i = 0; ok && vnfs_tags_get(&request->tags, i, &name, &value); i++)
				ok = tags && add_field(tags, name, json_object_new_string(value));
			ok = ok && add_field(object, "tags", tags);
			if (!ok && tags)
				json_object_put(tags);
		}
		break;
	case VNFS_REQUEST_UNREGISTER:
		ok = ok && vnfs_protocol_add_workload(object, &request->workload);
		break;
	case VNFS_REQUEST_FINISH:
		ok = ok && vnfs_protocol_add_workload(object, &request->workload);
		if (request->report_dir[0] != '\0')
			ok = ok && add_field(object, "report_dir",
					     json_object_new_string(request->report_dir));
		break;
	case VNFS_REQUEST_QUERY:
		ok = ok && vnfs_protocol_add_workload(object, &request->workload);
		break;
	case VNFS_REQUEST_HISTORY:
		if (request->has_since)
			ok = ok && add_field(object, "since", json_object_new_int64(request->since_ms));
		if (request->has_until)
			ok = ok && add_field(object, "until", json_object_new_int64(request->until_ms));
		break;
	default:
		break;
	}
	return ok;
}

char *vnfs_request_encode(const struct vnfs_request *request)
{
	const char *type_name = vnfs_request_type_name(request->type);
	struct json_object *object;
	bool ok;

	if (type_name == NULL)
		return NULL;
	object = json_object_new_object();
	if (object == NULL)
		return NULL;
	ok = add_field(object, "v", json_object_new_int(VNFS_PROTOCOL_VERSION)) &&
	     add_field(object, "type", json_object_new_string(type_name)) &&
	     add_request_fields(object, request);
	return vnfs_protocol_line(object, ok);
}
