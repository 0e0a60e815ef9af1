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
 * operation -> histogram: 8 deep.  Room for that and two more, not for junk
 * nested without end. */
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

static struct json_object *job_json(const struct vnfs_owned_job *owned)
{
	struct vnfs_job view;

	vnfs_owned_job_view(owned, &view);
	return vnfs_job_to_json(&view);
}

/* A LIST entry names a Slurm step as it always has, {"job": 42, "step":
 * "batch"} (the step as text: what people read with jq), and any other
 * workload in the general form. */
static bool add_entry_workload(struct json_object *object, const struct vnfs_workload *workload)
{
	uint32_t job_id, step_id;

	if (vnfs_workload_slurm_ids(workload, &job_id, &step_id) < 0)
		return vnfs_protocol_add_workload(object, workload);
	return vnfs_protocol_add(object, "job", json_object_new_int64(job_id)) &&
	       vnfs_protocol_add(object, "step", json_object_new_string(workload->part));
}

static struct json_object *entry_json(const struct vnfs_list_entry *entry)
{
	struct json_object *object = json_object_new_object();
	char user_text[sizeof(entry->user)];
	const char *user = vnfs_json_text(entry->user, user_text, sizeof(user_text));
	bool ok;

	if (object == NULL)
		return NULL;
	ok = add_entry_workload(object, &entry->workload) &&
	     vnfs_protocol_add(object, "uid", json_object_new_int64(entry->uid)) &&
	     vnfs_protocol_add(object, "user", json_object_new_string(user)) &&
	     vnfs_protocol_add(object, "running", json_object_new_boolean(entry->running));
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
		return vnfs_protocol_add(object, "slot", json_object_new_int64(reply->slot));
	case VNFS_REQUEST_UNREGISTER:
		return true;
	case VNFS_REQUEST_FINISH:
	case VNFS_REQUEST_QUERY:
		return vnfs_protocol_add(object, "job", job_json(&reply->job));
	case VNFS_REQUEST_LIST:
		return vnfs_protocol_add(object, "jobs",
					 array_json(reply->entries, reply->entry_count,
						    sizeof(*reply->entries), any_entry_json));
	case VNFS_REQUEST_STATUS:
		return vnfs_protocol_add(object, "status",
					 reply->status != NULL ? json_object_get(reply->status)
							       : json_object_new_object());
	case VNFS_REQUEST_HISTORY:
		return vnfs_protocol_add(object, "jobs",
					 array_json(reply->jobs, reply->job_count,
						    sizeof(*reply->jobs), any_job_json)) &&
		       vnfs_protocol_add(object, "truncated",
					 json_object_new_boolean(reply->truncated));
	default:
		return false;
	}
}

/* {"v":1,"ok":ok}, or NULL when out of memory. */
static struct json_object *reply_object(bool ok)
{
	struct json_object *object = json_object_new_object();

	if (object != NULL &&
	    (!vnfs_protocol_add(object, "v", json_object_new_int(VNFS_PROTOCOL_VERSION)) ||
	     !vnfs_protocol_add(object, "ok", json_object_new_boolean(ok)))) {
		json_object_put(object);
		object = NULL;
	}
	return object;
}

/* The message as JSON text (lib/escape.h) and cut to what a decoder takes,
 * so that any message the helper makes reaches the client. */
static char *error_line(const char *message)
{
	struct json_object *object = reply_object(false);
	char text[sizeof(((struct vnfs_reply *)0)->error)];

	if (object == NULL)
		return NULL;
	return vnfs_protocol_line(object, vnfs_protocol_add(object, "error", json_object_new_string(
						  vnfs_json_text(message, text, sizeof(text)))));
}

char *vnfs_reply_encode(const struct vnfs_reply *reply)
{
	struct json_object *object;

	if (vnfs_request_type_name(reply->type) == NULL)
		return NULL;
	if (!reply->ok)
		return error_line(reply->error);
	object = reply_object(true);
	if (object == NULL)
		return NULL;
	return vnfs_protocol_line(object, add_reply_fields(object, reply));
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

/* object has exactly the fields named (and v and ok, if it is the reply). */
/* object holds every one of fields, maybe some of optional (NULL: none),
 * and nothing else (but v and ok in a reply). */
static int check_fields(struct json_object *object, bool reply, const char *const *fields,
			const char *const *optional, const char *what, char *error,
			size_t error_size)
{
	json_object_object_foreach(object, key, value) {
		(void)value;
		if (!(reply && (strcmp(key, "v") == 0 || strcmp(key, "ok") == 0)) &&
		    !listed(fields, key) && !(optional != NULL && listed(optional, key)))
			return vnfs_fail(error, error_size, "unknown field '%.40s' in %s", key, what);
	}
	for (size_t i = 0; fields[i] != NULL; i++)
		if (!json_object_object_get_ex(object, fields[i], NULL))
			return vnfs_fail(error, error_size, "missing field '%s' in %s", fields[i], what);
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

static struct json_object *field(struct json_object *object, const char *name)
{
	struct json_object *value = NULL;

	json_object_object_get_ex(object, name, &value);
	return value;
}

static int decode_entry_workload(struct json_object *object, struct vnfs_workload *workload,
				 char *error, size_t error_size)
{
	char step[24];
	uint32_t job_id, step_id;

	if (json_object_object_get_ex(object, "source", NULL))
		return vnfs_protocol_get_workload(object, workload, error, error_size);
	if (vnfs_protocol_get_uint32(field(object, "job"), "job", &job_id, error, error_size) < 0 ||
	    vnfs_protocol_get_text(field(object, "step"), "step", step, sizeof(step), error,
				   error_size) < 0)
		return -1;
	if (vnfs_step_parse(step, &step_id) < 0)
		return vnfs_fail(error, error_size, "field 'step' must be a step, not '%s'", step);
	vnfs_workload_of_slurm_step(workload, job_id, step_id);
	return 0;
}

static int decode_entry(const struct json_object *value, void *item, char *error,
			size_t error_size)
{
	static const char *const keys[] = { "job", "uid", "user", "running", NULL };
	static const char *const workload_keys[] = { "source", "step", "part", NULL };
	struct json_object *object = (struct json_object *)value;
	struct vnfs_list_entry *entry = item;

	if (!json_object_is_type(object, json_type_object))
		return vnfs_fail(error, error_size, "an entry must be an object");
	if (check_fields(object, false, keys, workload_keys, "a list entry", error, error_size) < 0 ||
	    decode_entry_workload(object, &entry->workload, error, error_size) < 0 ||
	    vnfs_protocol_get_uint32(field(object, "uid"), "uid", &entry->uid, error,
				     error_size) < 0 ||
	    vnfs_protocol_get_text(field(object, "user"), "user", entry->user,
				   sizeof(entry->user), error, error_size) < 0 ||
	    get_bool(field(object, "running"), "running", &entry->running, error, error_size) < 0)
		return -1;
	return 0;
}

static int decode_owned_job(const struct json_object *value, void *item, char *error,
			    size_t error_size)
{
	return vnfs_job_from_json(value, item, error, error_size);
}

/*
 * The array in field "jobs", each element read by decode into an item of
 * item_size: returns the calloc'd items (NULL for none) with *count set as
 * they are read (so that what was read is freed on a failure), and *failed.
 */
static void *decode_array(struct json_object *object, size_t item_size,
			  int (*decode)(const struct json_object *, void *, char *, size_t),
			  size_t *count, bool *failed, char *error, size_t error_size)
{
	struct json_object *array = field(object, "jobs");
	char *items = NULL;
	size_t length;
	char message[256];

	*count = 0;
	*failed = true;
	if (!json_object_is_type(array, json_type_array)) {
		vnfs_fail(error, error_size, "field 'jobs' must be an array");
		return NULL;
	}
	length = json_object_array_length(array);
	if (length > 0 && (items = calloc(length, item_size)) == NULL) {
		vnfs_fail(error, error_size, "out of memory");
		return NULL;
	}
	for (size_t i = 0; i < length; i++) {
		if (decode(json_object_array_get_idx(array, i), items + i * item_size, message,
			   sizeof(message)) < 0) {
			vnfs_fail(error, error_size, "jobs[%zu]: %s", i, message);
			return items;
		}
		*count = i + 1;
	}
	*failed = false;
	return items;
}

static int decode_entries(struct json_object *object, struct vnfs_reply *reply, char *error,
			  size_t error_size)
{
	bool failed;

	reply->entries = decode_array(object, sizeof(*reply->entries), decode_entry,
				      &reply->entry_count, &failed, error, error_size);
	return failed ? -1 : 0;
}

static int decode_jobs(struct json_object *object, struct vnfs_reply *reply, char *error,
		       size_t error_size)
{
	bool failed;

	reply->jobs = decode_array(object, sizeof(*reply->jobs), decode_owned_job,
				   &reply->job_count, &failed, error, error_size);
	if (failed)
		return -1;
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
		return vnfs_protocol_get_uint32(field(object, "slot"), "slot", &reply->slot, error,
						error_size);
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
		if (check_fields(object, true, error_fields, NULL, "an error reply", error, error_size) < 0)
			return -1;
		return vnfs_protocol_get_text(field(object, "error"), "error", reply->error,
					      sizeof(reply->error), error, error_size);
	}
	snprintf(what, sizeof(what), "a reply to %s", type_name);
	if (check_fields(object, true, reply_fields[reply->type], NULL, what, error, error_size) < 0)
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
