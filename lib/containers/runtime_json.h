/*
 * runtime_json.h — reading a JSON file a container runtime wrote (an OCI
 * config.json, containers/storage's containers.json) the way its own Go
 * decoder would, so that a root daemon believes nothing the runtime did
 * not write:
 *   - strict JSON in UTF-8 (json-c checks only the shape of UTF-8
 *     sequences: an overlong form passes), nothing but whitespace after it;
 *   - at most size_max bytes and depth_max levels, refused before parsing;
 *   - no object key holding \u0000: json-c cuts a key at the NUL, so a
 *     user's "name\u0000x" would replace the runtime's "name", which Go
 *     keeps apart;
 *   - the document itself of the type asked for.
 */
#ifndef VNFS_RUNTIME_JSON_H
#define VNFS_RUNTIME_JSON_H

#include <stddef.h>

#include <json-c/json.h>

/* The document of text (length bytes), of type; file names it in messages.
 * NULL with a message in error.  The caller puts it (json_object_put). */
struct json_object *vnfs_runtime_json_parse(const char *text, size_t length, const char *file,
					    size_t size_max, int depth_max, enum json_type type,
					    char *error, size_t error_size);

/*
 * Reads name, one file name in directory_fd, whole into *text (NUL
 * terminated, *length bytes; the caller frees it): a regular file of at
 * most size_max bytes, opened without following a link or blocking on a
 * FIFO, that does not grow while it is read.  Returns 0, or -1 with a
 * message naming the file.
 */
int vnfs_runtime_file_read(int directory_fd, const char *name, size_t size_max, char **text,
			   size_t *length, char *error, size_t error_size);

/*
 * object's member key, of type: 1 with *member, 0 when absent, -1 with a
 * message when it has another type (null included).  where begins the
 * message: the file and the object ("config.json: linux.").
 */
int vnfs_runtime_json_member(struct json_object *object, const char *where, const char *key,
			     enum json_type type, struct json_object **member, char *error,
			     size_t error_size);

/* A string member without NUL in it, as vnfs_runtime_json_member: 1 with
 * *value, 0 when absent, -1 with a message. */
int vnfs_runtime_json_string(struct json_object *object, const char *where, const char *key,
			     const char **value, char *error, size_t error_size);

#endif /* VNFS_RUNTIME_JSON_H */
