/*
 * storage_names.c — a container's name in containers/storage's
 * containers.json (see storage_names.h).
 */
#include "lib/containers/storage_names.h"

#include <string.h>

#include <json-c/json.h>

#include "lib/containers/runtime_json.h"
#include "lib/log.h"
#include "lib/workload.h"

/* [ { "id", "names": [ ... ], "flags": { ... } } ]: deeper is not this file. */
#define STORAGE_NAMES_DEPTH_MAX 4

static struct json_object *member(struct json_object *object, const char *key)
{
	struct json_object *value = NULL;

	json_object_object_get_ex(object, key, &value);
	return value;
}

/* The first name of entry (the container's), checked, into name. */
static int entry_name(struct json_object *entry, size_t index, char *name, size_t size,
		      char *error, size_t error_size)
{
	struct json_object *names = member(entry, "names"), *first;
	const char *text;

	if (!json_object_is_type(names, json_type_array) || json_object_array_length(names) == 0)
		return vnfs_fail(error, error_size, "containers.json: entry %zu has no names", index);
	first = json_object_array_get_idx(names, 0);
	if (!json_object_is_type(first, json_type_string))
		return vnfs_fail(error, error_size,
				 "containers.json: entry %zu: names[0] is not a string", index);
	text = json_object_get_string(first);
	if ((size_t)json_object_get_string_len(first) != strlen(text) ||
	    !vnfs_container_name_valid(text) || strlen(text) >= size)
		return vnfs_fail(error, error_size,
				 "containers.json: entry %zu: its name is not a container name "
				 "(a letter or digit, then letters, digits, '_', '.' or '-', at "
				 "most %d)",
				 index, VNFS_CONTAINER_NAME_MAX);
	memcpy(name, text, strlen(text) + 1);
	return 1;
}

int vnfs_storage_container_name(const char *text, size_t length, const char *id, char *name,
				size_t size, char *error, size_t error_size)
{
	struct json_object *document;
	int result = 0;

	name[0] = '\0';
	document = vnfs_runtime_json_parse(text, length, "containers.json",
					   VNFS_STORAGE_NAMES_SIZE_MAX, STORAGE_NAMES_DEPTH_MAX,
					   json_type_array, error, error_size);
	if (document == NULL)
		return -1;
	for (size_t i = 0; i < json_object_array_length(document) && result == 0; i++) {
		struct json_object *entry = json_object_array_get_idx(document, i);
		struct json_object *entry_id = member(entry, "id");

		if (!json_object_is_type(entry, json_type_object) ||
		    !json_object_is_type(entry_id, json_type_string)) {
			result = vnfs_fail(error, error_size,
					   "containers.json: entry %zu has no id", i);
			break;
		}
		/* The whole id, NUL included: "abc\u0000..." is not "abc". */
		if ((size_t)json_object_get_string_len(entry_id) == strlen(id) &&
		    strcmp(json_object_get_string(entry_id), id) == 0)
			result = entry_name(entry, i, name, size, error, error_size);
	}
	json_object_put(document);
	if (result < 0)
		name[0] = '\0';
	return result;
}
