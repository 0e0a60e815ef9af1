/*
 * reply.c — encoding and strict decoding of the helper's replies (reply.h).
 *
 * The decoder is as strict as the request decoder: the version, every field
 * a reply of its type must have, each of its type, and no other field.
 * Unknown fields are refused, not skipped, although the peer is our own root
 * helper rather than a stranger: the plugin, vnfs-report and the helper ship
 * together, a reply that grows a field is a new protocol version ("v"), and
 * a client that skipped what it does not know would go on reading a reply
 * whose other fields may have changed meaning too.  A refusal names the field,
 * so a version skew shows in one log line instead of as wrong numbers.
 */
#include "lib/reply.h"

#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/escape.h"
#include "lib/log.h"
#include "lib/record.h"

/* A job's JSON is reply -> jobs -> job -> steps -> step -> operations ->
 * operation -> histogram: 8 deep.  Room for that, no more. */
#define REPLY_MAX_NESTING 10

void vnfs_reply_init(struct vnfs_reply *reply, enum vnfs_request_type type)
{
	memset(reply, 0, sizeof(*reply));
	reply->type = type;
	reply->ok = true;
}

void vnfs_reply_free(struct vnfs_reply *reply)
{
	enum vnfs_request_type type = reply->type;

	vnfs_owned_job_free(&reply->job);
	free(reply->entries);
	json_object_put(reply->status);
	for (size_t i = 0; i < reply->job_count; i++)
		vnfs_owned_job_free(&reply->jobs[i]);
	free(reply->jobs);
	vnfs_reply_init(reply, type);
}

void vnfs_reply_fail(struct vnfs_reply *reply, const char *format, ...)
{
	va_list args;

	vnfs_reply_free(reply);
	reply->ok = false;
	va_start(args, format);
	vsnprintf(reply->error, sizeof(reply->error), format, args);
	va_end(args);
}

/* ---- encoding ----------------------------------------------------------- */

/* json-c's add only fails on allocation; value NULL is one that failed. */
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

static struct json_object *job_json(const struct vnfs_owned_job *owned)
{
	struct vnfs_job view;

	vnfs_owned_job_view(owned, &view);
	return vnfs_job_to_json(&view);
}

static struct json_object *entry_json(const struct vnfs_list_entry *entry)
{
	struct json_object *object = json_object_new_object();
	char step[24], user[sizeof(entry->user) * VNFS_ESCAPE_GROWTH];
	bool ok;

	if (object == NULL)
		return NULL;
	ok = add_field(object, "job", json_object_new_int64(entry->job_id)) &&
	     add_field(object, "step", json_object_new_string(
					       vnfs_step_name(entry->step_id, step, sizeof(step)))) &&
	     add_field(object, "uid", json_object_new_int64(entry->uid)) &&
	     add_field(object, "user", json_object_new_string(
					       vnfs_json_text(entry->user, user, sizeof(user)))) &&
	     add_field(object, "running", json_object_new_boolean(entry->running));
	if (!ok) {
		json_object_put(object);
		return NULL;
	}
	return object;
}

/* An array of count items, each made by make from items + i * size. */
static struct json_object *array_json(const void *items, size_t count, size_t size,
				      struct json_object *(*make)(const void *item))
{
	struct json_object *array = json_object_new_array_ext((int)count);

	for (size_t i = 0; array != NULL && i < count; i++) {
		struct json_object *item = make((const char *)items + i * size);

		if (item == NULL || json_object_array_add(array, item) < 0) {
			json_object_put(item);
			json_object_put(array);
			array = NULL;
		}
	}
	return array;
}

static struct json_object *any_job_json(const void *item)
{
	return job_json(item);
}

static struct json_object *any_entry_json(const void *item)
{
	return entry_json(item);
}

static bool add_reply_fields(struct json_object *object, const struct vnfs_reply *reply)
{
	switch (reply->type) {
	case VNFS_REQUEST_REGISTER:
		return add_field(object, "slot", json_object_new_int64(reply->slot));
	case VNFS_REQUEST_UNREGISTER:
		return true;
	case VNFS_REQUEST_FINISH:
	case VNFS_REQUEST_QUERY:
		return add_field(object, "job", job_json(&reply->job));
	case VNFS_REQUEST_LIST:
		return add_field(object, "jobs", array_json(reply->entries, reply->entry_count,
							    sizeof(*reply->entries),
							    any_entry_json));
	case VNFS_REQUEST_STATUS:
		return add_field(object, "status", reply->status != NULL
							   ? json_object_get(reply->status)
							   : json_object_new_object());
	case VNFS_REQUEST_HISTORY:
		return add_field(object, "jobs", array_json(reply->jobs, reply->job_count,
							    sizeof(*reply->jobs), any_job_json)) &&
		       add_field(object, "truncated", json_object_new_boolean(reply->truncated));
	default:
		return false;
	}
}

/* The object as one line with '\n' (consumed), or NULL. */
static char *line_of(struct json_object *object, bool filled)
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

static char *error_line(const char *message)
{
	struct json_object *object = json_object_new_object();

	if (object == NULL)
		return NULL;
	return line_of(object, add_field(object, "v", json_object_new_int(VNFS_PROTOCOL_VERSION)) &&
				       add_field(object, "ok", json_object_new_boolean(0)) &&
				       add_field(object, "error", json_object_new_string(message)));
}

char *vnfs_reply_encode(const struct vnfs_reply *reply)
{
	struct json_object *object;

	if (vnfs_request_type_name(reply->type) == NULL)
		return NULL;
	if (!reply->ok)
		return error_line(reply->error);
	object = json_object_new_object();
	if (object == NULL)
		return NULL;
	return line_of(object, add_field(object, "v", json_object_new_int(VNFS_PROTOCOL_VERSION)) &&
				       add_field(object, "ok", json_object_new_boolean(1)) &&
				       add_reply_fields(object, reply));
}

char *vnfs_reply_encode_error(const char *format, ...)
{
	char message[1024];
	va_list args;

	va_start(args, format);
	vsnprintf(message, sizeof(message), format, args);
	va_end(args);
	return error_line(message);
}

/* ---- decoding ----------------------------------------------------------- */

/* The fields an ok reply to each request type has, besides v and ok: all of
 * them required (NULL-terminated). */
static const char *const reply_fields[VNFS_REQUEST_TYPES][3] = {
	[VNFS_REQUEST_REGISTER] = { "slot" },
	[VNFS_REQUEST_UNREGISTER] = { NULL },
	[VNFS_REQUEST_FINISH] = { "job" },
	[VNFS_REQUEST_QUERY] = { "job" },
	[VNFS_REQUEST_LIST] = { "jobs" },
	[VNFS_REQUEST_STATUS] = { "status" },
	[VNFS_REQUEST_HISTORY] = { "jobs", "truncated" },
};

static const char *const error_fields[] = { "error", NULL };

static bool listed(const char *const *names, const char *key)
{
	for (size_t i = 0; names[i] != NULL; i++)
		if (strcmp(names[i], key) == 0)
			return true;
	return false;
}

/* object has v, ok and exactly the fields named. */
static int check_fields(struct json_object *object, const char *const *fields, const char *what,
			char *error, size_t error_size)
{
	json_object_object_foreach(object, key, value) {
		(void)value;
		if (strcmp(key, "v") != 0 && strcmp(key, "ok") != 0 && !listed(fields, key))
			return vnfs_fail(error, error_size, "unknown field '%.40s' in %s", key, what);
	}
	for (size_t i = 0; fields[i] != NULL; i++)
		if (!json_object_object_get_ex(object, fields[i], NULL))
			return vnfs_fail(error, error_size, "missing field '%s' in %s", fields[i], what);
	return 0;
}

static int get_uint32(struct json_object *value, const char *name, uint32_t *out, char *error,
		      size_t error_size)
{
	if (!json_object_is_type(value, json_type_int) || json_object_get_int64(value) < 0 ||
	    json_object_get_int64(value) > UINT32_MAX)
		return vnfs_fail(error, error_size, "field '%s' must be an integer from 0 to %u", name,
				 UINT32_MAX);
	*out = (uint32_t)json_object_get_int64(value);
	return 0;
}

static int get_bool(struct json_object *value, const char *name, bool *out, char *error,
		    size_t error_size)
{
	if (!json_object_is_type(value, json_type_boolean))
		return vnfs_fail(error, error_size, "field '%s' must be true or false", name);
	*out = json_object_get_boolean(value);
	return 0;
}

/* A string of at most size - 1 bytes, valid UTF-8 without NUL. */
static int get_text(struct json_object *value, const char *name, char *out, size_t size,
		    char *error, size_t error_size)
{
	const char *text;
	size_t length;

	if (!json_object_is_type(value, json_type_string))
		return vnfs_fail(error, error_size, "field '%s' must be a string", name);
	text = json_object_get_string(value);
	length = (size_t)json_object_get_string_len(value);
	if (length >= size)
		return vnfs_fail(error, error_size, "field '%s' is longer than %zu bytes", name,
				 size - 1);
	if (memchr(text, '\0', length) != NULL || !vnfs_utf8_valid(text, length))
		return vnfs_fail(error, error_size, "field '%s' is not text (NUL or not UTF-8)", name);
	memcpy(out, text, length + 1);
	return 0;
}

static struct json_object *field(struct json_object *object, const char *name)
{
	struct json_object *value = NULL;

	json_object_object_get_ex(object, name, &value);
	return value;
}

static int decode_entry(struct json_object *object, struct vnfs_list_entry *entry, char *error,
			size_t error_size)
{
	static const char *const keys[] = { "job", "step", "uid", "user", "running", NULL };
	char step[24];

	if (!json_object_is_type(object, json_type_object))
		return vnfs_fail(error, error_size, "an entry must be an object");
	if (check_fields(object, keys, "a list entry", error, error_size) < 0 ||
	    get_uint32(field(object, "job"), "job", &entry->job_id, error, error_size) < 0 ||
	    get_text(field(object, "step"), "step", step, sizeof(step), error, error_size) < 0 ||
	    get_uint32(field(object, "uid"), "uid", &entry->uid, error, error_size) < 0 ||
	    get_text(field(object, "user"), "user", entry->user, sizeof(entry->user), error,
		     error_size) < 0 ||
	    get_bool(field(object, "running"), "running", &entry->running, error, error_size) < 0)
		return -1;
	if (vnfs_step_parse(step, &entry->step_id) < 0)
		return vnfs_fail(error, error_size, "field 'step' must be a step, not '%s'", step);
	return 0;
}

/* The array in field name, with room for its items in *items (calloc'd). */
static int get_array(struct json_object *object, const char *name, size_t item_size,
		     void **items, size_t *count, char *error, size_t error_size)
{
	struct json_object *array = field(object, name);

	*items = NULL;
	*count = 0;
	if (!json_object_is_type(array, json_type_array))
		return vnfs_fail(error, error_size, "field '%s' must be an array", name);
	if (json_object_array_length(array) == 0)
		return 0;
	*items = calloc(json_object_array_length(array), item_size);
	if (*items == NULL)
		return vnfs_fail(error, error_size, "out of memory");
	return 0;
}

static int decode_entries(struct json_object *object, struct vnfs_reply *reply, char *error,
			  size_t error_size)
{
	struct json_object *array = field(object, "jobs");
	size_t length;
	char message[256];

	if (get_array(object, "jobs", sizeof(*reply->entries), (void **)&reply->entries, &length,
		      error, error_size) < 0)
		return -1;
	length = json_object_array_length(array);
	for (size_t i = 0; i < length; i++) {
		if (decode_entry(json_object_array_get_idx(array, i), &reply->entries[i], message,
				 sizeof(message)) < 0)
			return vnfs_fail(error, error_size, "jobs[%zu]: %s", i, message);
		reply->entry_count = i + 1;
	}
	return 0;
}

static int decode_jobs(struct json_object *object, struct vnfs_reply *reply, char *error,
		       size_t error_size)
{
	struct json_object *array = field(object, "jobs");
	size_t length;
	char message[256];

	if (get_array(object, "jobs", sizeof(*reply->jobs), (void **)&reply->jobs, &length, error,
		      error_size) < 0)
		return -1;
	length = json_object_array_length(array);
	for (size_t i = 0; i < length; i++) {
		if (vnfs_job_from_json(json_object_array_get_idx(array, i), &reply->jobs[i], message,
				       sizeof(message)) < 0)
			return vnfs_fail(error, error_size, "jobs[%zu]: %s", i, message);
		reply->job_count = i + 1;
	}
	return get_bool(field(object, "truncated"), "truncated", &reply->truncated, error,
			error_size);
}

static int decode_job(struct json_object *object, struct vnfs_reply *reply, char *error,
		      size_t error_size)
{
	char message[256];

	if (vnfs_job_from_json(field(object, "job"), &reply->job, message, sizeof(message)) < 0)
		return vnfs_fail(error, error_size, "job: %s", message);
	return 0;
}

static int decode_ok_fields(struct json_object *object, struct vnfs_reply *reply, char *error,
			    size_t error_size)
{
	struct json_object *status;

	switch (reply->type) {
	case VNFS_REQUEST_REGISTER:
		return get_uint32(field(object, "slot"), "slot", &reply->slot, error, error_size);
	case VNFS_REQUEST_FINISH:
	case VNFS_REQUEST_QUERY:
		return decode_job(object, reply, error, error_size);
	case VNFS_REQUEST_LIST:
		return decode_entries(object, reply, error, error_size);
	case VNFS_REQUEST_STATUS:
		status = field(object, "status");
		if (!json_object_is_type(status, json_type_object))
			return vnfs_fail(error, error_size, "field 'status' must be an object");
		reply->status = json_object_get(status);
		return 0;
	case VNFS_REQUEST_HISTORY:
		return decode_jobs(object, reply, error, error_size);
	default:
		return 0;
	}
}

static int decode_object(struct json_object *object, struct vnfs_reply *reply, char *error,
			 size_t error_size)
{
	const char *type_name = vnfs_request_type_name(reply->type);
	struct json_object *ok = field(object, "ok");
	char what[40];

	if (!json_object_is_type(object, json_type_object))
		return vnfs_fail(error, error_size, "a reply must be a JSON object");
	if (vnfs_protocol_check_version(object, error, error_size) < 0)
		return -1;
	if (ok == NULL)
		return vnfs_fail(error, error_size, "missing field 'ok'");
	if (get_bool(ok, "ok", &reply->ok, error, error_size) < 0)
		return -1;
	if (!reply->ok) {
		if (check_fields(object, error_fields, "an error reply", error, error_size) < 0)
			return -1;
		return get_text(field(object, "error"), "error", reply->error, sizeof(reply->error),
				error, error_size);
	}
	snprintf(what, sizeof(what), "a reply to %s", type_name);
	if (check_fields(object, reply_fields[reply->type], what, error, error_size) < 0)
		return -1;
	return decode_ok_fields(object, reply, error, error_size);
}

int vnfs_reply_decode(const char *text, size_t length, enum vnfs_request_type type,
		      struct vnfs_reply *reply, char *error, size_t error_size)
{
	struct json_object *object;
	int result;

	vnfs_reply_init(reply, type);
	if (vnfs_request_type_name(type) == NULL)
		return vnfs_fail(error, error_size, "no request type %d", (int)type);
	object = vnfs_protocol_parse(text, length, REPLY_MAX_NESTING, error, error_size);
	if (object == NULL)
		return -1;
	result = decode_object(object, reply, error, error_size);
	json_object_put(object);
	if (result < 0)
		vnfs_reply_free(reply);
	return result;
}
