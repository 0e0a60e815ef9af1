/*
 * runtime_json.c — the strict JSON reader of the files container runtimes
 * write (see runtime_json.h).
 */
#include "lib/containers/runtime_json.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/log.h"

static bool json_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Where the document ended, only whitespace may follow. */
static int check_trailing(const char *text, size_t length, size_t end, const char *file,
			  char *error, size_t error_size)
{
	for (size_t i = end; i < length; i++)
		if (!json_space(text[i]))
			return vnfs_fail(error, error_size,
					 "%s: unexpected data after the document at byte %zu", file,
					 i);
	return 0;
}

/* Whether the string that starts at text[start] (a quote) holds the escape
 * \u0000; *end is set past its closing quote (or to length). */
static bool string_holds_nul(const char *text, size_t length, size_t start, size_t *end)
{
	bool nul = false;
	size_t i = start + 1;

	while (i < length && text[i] != text[start]) {
		if (text[i] == '\\') {
			nul = nul || (i + 5 < length && memcmp(text + i + 1, "u0000", 5) == 0);
			i++; /* the escaped character, which may be a quote */
		}
		i++;
	}
	*end = i + 1;
	return nul;
}

/*
 * Whether an object key holds the escape \u0000.  json-c cuts keys at a
 * NUL, so "k\u0000x" would stand for "k", and written after it, replace
 * it: text a Go runtime keeps apart (from a user's pass-through annotation)
 * would overwrite the runtime's own.  Values keep their length and are
 * checked where they are read.  Both quotes count: json-c 0.16 takes '...'.
 */
static bool key_holds_nul(const char *text, size_t length)
{
	for (size_t i = 0; i < length; i++) {
		size_t end;

		if (text[i] != '"' && text[i] != '\'')
			continue;
		if (string_holds_nul(text, length, i, &end)) {
			while (end < length && json_space(text[end]))
				end++;
			if (end < length && text[end] == ':')
				return true;
		}
		i = end - 1;
	}
	return false;
}

struct json_object *vnfs_runtime_json_parse(const char *text, size_t length, const char *file,
					    size_t size_max, int depth_max, enum json_type type,
					    char *error, size_t error_size)
{
	struct json_tokener *tokener;
	struct json_object *document;
	enum json_tokener_error status;
	size_t end;

	if (length > size_max) {
		vnfs_fail(error, error_size, "%s: %zu bytes, more than the %zu allowed", file, length,
			  size_max);
		return NULL;
	}
	if (key_holds_nul(text, length)) {
		vnfs_fail(error, error_size,
			  "%s: an object key holds \\u0000 (json-c would cut the key there)", file);
		return NULL;
	}
	tokener = json_tokener_new_ex(depth_max);
	if (tokener == NULL) {
		vnfs_fail(error, error_size, "%s: out of memory", file);
		return NULL;
	}
	json_tokener_set_flags(tokener, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	document = json_tokener_parse_ex(tokener, text, (int)length);
	status = json_tokener_get_error(tokener);
	end = json_tokener_get_parse_end(tokener);
	json_tokener_free(tokener);
	if (document == NULL) {
		vnfs_fail(error, error_size, "%s: invalid JSON at byte %zu: %s", file, end,
			  status == json_tokener_continue ? "the document is truncated"
							  : json_tokener_error_desc(status));
		return NULL;
	}
	if (check_trailing(text, length, end, file, error, error_size) < 0) {
		json_object_put(document);
		return NULL;
	}
	if (!json_object_is_type(document, type)) {
		vnfs_fail(error, error_size, "%s: the document is not %s", file,
			  type == json_type_array ? "an array" : "an object");
		json_object_put(document);
		return NULL;
	}
	return document;
}

/* ---- the file ---- */

static bool single_component(const char *name)
{
	return name[0] != '\0' && strchr(name, '/') == NULL && strcmp(name, ".") != 0 &&
	       strcmp(name, "..") != 0;
}

/* Reads all of fd (size bytes expected) into a new buffer. */
static int read_all(int fd, const char *name, size_t size, char **text, size_t *length,
		    char *error, size_t error_size)
{
	char *buffer = malloc(size + 1);
	size_t used = 0;

	if (buffer == NULL)
		return vnfs_fail(error, error_size, "%s: out of memory", name);
	/* One byte more than fstat said, to see a file that grew meanwhile. */
	while (used < size + 1) {
		ssize_t got = read(fd, buffer + used, size + 1 - used);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int saved = errno;

			free(buffer);
			return vnfs_fail(error, error_size, "%s: cannot read: %s", name,
					 strerror(saved));
		}
		if (got == 0)
			break;
		used += (size_t)got;
	}
	if (used > size) {
		free(buffer);
		return vnfs_fail(error, error_size, "%s: grew while being read", name);
	}
	buffer[used] = '\0';
	*text = buffer;
	*length = used;
	return 0;
}

int vnfs_runtime_file_read(int directory_fd, const char *name, size_t size_max, char **text,
			   size_t *length, char *error, size_t error_size)
{
	struct stat status;
	int fd, result;

	if (!single_component(name))
		return vnfs_fail(error, error_size, "'%s' is not one file name", name);
	/* O_NOFOLLOW: a link is refused, not followed; O_NONBLOCK: a FIFO put
	 * there does not hang the helper in open(). */
	fd = openat(directory_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return vnfs_fail(error, error_size, "%s: cannot open: %s", name, strerror(errno));
	if (fstat(fd, &status) < 0) {
		result = vnfs_fail(error, error_size, "%s: cannot stat: %s", name, strerror(errno));
	} else if (!S_ISREG(status.st_mode)) {
		result = vnfs_fail(error, error_size, "%s: not a regular file", name);
	} else if ((uintmax_t)status.st_size > size_max) {
		result = vnfs_fail(error, error_size, "%s: %lld bytes, more than the %zu allowed",
				   name, (long long)status.st_size, size_max);
	} else {
		result = read_all(fd, name, (size_t)status.st_size, text, length, error,
				  error_size);
	}
	close(fd);
	return result;
}


int vnfs_runtime_json_member(struct json_object *object, const char *where, const char *key,
			     enum json_type type, struct json_object **member, char *error,
			     size_t error_size)
{
	if (!json_object_object_get_ex(object, key, member))
		return 0;
	if (!json_object_is_type(*member, type))
		return vnfs_fail(error, error_size, "%s%s is not %s", where, key,
				 type == json_type_string ? "a string"
				 : type == json_type_array ? "an array"
							   : "an object");
	return 1;
}

int vnfs_runtime_json_string(struct json_object *object, const char *where, const char *key,
			     const char **value, char *error, size_t error_size)
{
	struct json_object *member;
	int found = vnfs_runtime_json_member(object, where, key, json_type_string, &member, error,
					     error_size);

	if (found <= 0)
		return found;
	*value = json_object_get_string(member);
	if (strlen(*value) != (size_t)json_object_get_string_len(member))
		return vnfs_fail(error, error_size, "%s%s holds a NUL character", where, key);
	return 1;
}
