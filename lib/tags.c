/*
 * tags.c — validation, storage and parsing of job tags (see tags.h for the
 * rules and why they are what they are).
 *
 * A list is one fixed buffer of "name\0value\0" pairs: no allocation, so it
 * can live inside a request or a registry slot and be copied with memcpy.
 * Every error message names the tag and the rule it broke, because it is
 * shown to the user who typed --vnfs-tags.
 */
#include "lib/tags.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_RULE "a name is letters, digits and '_' (not starting with a digit)"
#define VALUE_RULE "a value is letters, digits and . _ : @ + % -"

/* Tag names and lists shown in messages are cut here, so that a 10 KiB name
 * cannot fill the error buffer and hide the rule that follows it. */
#define SHOWN_NAME_MAX 40
/* Room for SHOWN_NAME_MAX bytes escaped as \xNN, and "...". */
#define SHOWN_TEXT_SIZE (SHOWN_NAME_MAX * 4 + 4)

static bool is_letter(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_value_char(char c)
{
	return is_letter(c) || is_digit(c) || (c != '\0' && strchr("._:@+%-", c) != NULL);
}

void vnfs_tags_init(struct vnfs_tag_list *list)
{
	list->count = 0;
	list->used = 0;
	list->buffer[0] = '\0';
}

const struct vnfs_tag_list *vnfs_tags_none(void)
{
	static const struct vnfs_tag_list none;

	return &none;
}

unsigned vnfs_tags_count(const struct vnfs_tag_list *list)
{
	return list != NULL ? list->count : 0;
}

bool vnfs_tags_equal(const struct vnfs_tag_list *a, const struct vnfs_tag_list *b)
{
	return vnfs_tags_count(a) == vnfs_tags_count(b) &&
	       (vnfs_tags_count(a) == 0 ||
		(a->used == b->used && memcmp(a->buffer, b->buffer, a->used) == 0));
}

const struct vnfs_tag_list *vnfs_tags_copy(const struct vnfs_tag_list *list)
{
	struct vnfs_tag_list *copy;

	if (vnfs_tags_count(list) == 0)
		return vnfs_tags_none();
	copy = malloc(sizeof(*copy));
	if (copy != NULL)
		*copy = *list;
	return copy;
}

void vnfs_tags_free(const struct vnfs_tag_list *list)
{
	if (list != vnfs_tags_none())
		free((void *)list);
}

static bool name_chars_valid(const char *name, size_t length)
{
	if (length == 0 || is_digit(name[0]))
		return false;
	for (size_t i = 0; i < length; i++) {
		if (!is_letter(name[i]) && !is_digit(name[i]) && name[i] != '_')
			return false;
	}
	return true;
}

bool vnfs_tag_name_valid(const char *name)
{
	size_t length = strnlen(name, VNFS_TAG_NAME_MAX + 1);

	return length <= VNFS_TAG_NAME_MAX && name_chars_valid(name, length);
}

bool vnfs_tag_value_valid(const char *value)
{
	size_t length = strnlen(value, VNFS_TAG_VALUE_MAX + 1);

	if (length > VNFS_TAG_VALUE_MAX)
		return false;
	for (size_t i = 0; i < length; i++) {
		if (!is_value_char(value[i]))
			return false;
	}
	return true;
}

/*
 * At most SHOWN_NAME_MAX bytes of what the user typed, for a message, and
 * "..." if there was more.  Messages end up in slurmd.log, the helper's log
 * and on terminals, so every byte but printable ASCII is written as \xNN:
 * the log rule of lib/escape.h, stricter for the non-ASCII characters no tag
 * may hold anyway.  (Self-contained: test_config links tags.c alone.)
 */
static const char *quote_prefix(const char *text, size_t length, char *out, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	size_t count = length < SHOWN_NAME_MAX ? length : SHOWN_NAME_MAX;
	size_t used = 0;

	for (size_t i = 0; i < count && used + 5 <= size; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c >= 0x20 && c < 0x7f) {
			out[used++] = (char)c;
			continue;
		}
		out[used++] = '\\';
		out[used++] = 'x';
		out[used++] = hex[c >> 4];
		out[used++] = hex[c & 0x0f];
	}
	snprintf(out + used, size - used, "%s", length > SHOWN_NAME_MAX ? "..." : "");
	return out;
}

/* Writes "tag 'NAME'" for the start of a message, NAME quoted as above. */
static void format_tag_label(char *label, size_t size, const char *name, size_t name_length)
{
	char shown[SHOWN_TEXT_SIZE];

	snprintf(label, size, "tag '%s'", quote_prefix(name, name_length, shown, sizeof(shown)));
}

static int check_name(const char *name, size_t length, char *error, size_t error_size)
{
	char label[SHOWN_TEXT_SIZE + 16];

	format_tag_label(label, sizeof(label), name, length);
	if (length == 0) {
		snprintf(error, error_size, "empty tag name: %s", NAME_RULE);
		return -1;
	}
	if (length > VNFS_TAG_NAME_MAX) {
		snprintf(error, error_size, "%s: name of %zu characters exceeds the limit of %d",
			 label, length, VNFS_TAG_NAME_MAX);
		return -1;
	}
	if (!name_chars_valid(name, length)) {
		snprintf(error, error_size, "%s: %s", label, NAME_RULE);
		return -1;
	}
	return 0;
}

static int check_value(const char *name, const char *value, char *error, size_t error_size)
{
	char label[SHOWN_TEXT_SIZE + 16];
	size_t length = strlen(value);

	format_tag_label(label, sizeof(label), name, strlen(name));
	if (length > VNFS_TAG_VALUE_MAX) {
		snprintf(error, error_size, "%s: value of %zu characters exceeds the limit of %d",
			 label, length, VNFS_TAG_VALUE_MAX);
		return -1;
	}
	for (size_t i = 0; i < length; i++) {
		unsigned char c = (unsigned char)value[i];

		if (is_value_char(value[i]))
			continue;
		if (c >= 0x20 && c < 0x7f)
			snprintf(error, error_size, "%s: character '%c' is not allowed in a value (%s)",
				 label, c, VALUE_RULE);
		else
			snprintf(error, error_size,
				 "%s: character 0x%02x is not allowed in a value (%s)", label, c,
				 VALUE_RULE);
		return -1;
	}
	return 0;
}

/* Offset of the entry for name in the buffer, or -1. */
static long find_entry(const struct vnfs_tag_list *list, const char *name)
{
	unsigned offset = 0;

	for (unsigned i = 0; i < list->count; i++) {
		const char *entry_name = list->buffer + offset;
		size_t name_length = strlen(entry_name);
		size_t value_length = strlen(entry_name + name_length + 1);

		if (strcmp(entry_name, name) == 0)
			return (long)offset;
		offset += (unsigned)(name_length + value_length + 2);
	}
	return -1;
}

/* Replaces the value of the entry at offset in place, shifting what follows. */
static int replace_value(struct vnfs_tag_list *list, unsigned offset, const char *value,
			 char *error, size_t error_size)
{
	char *old_value = list->buffer + offset + strlen(list->buffer + offset) + 1;
	size_t old_size = strlen(old_value) + 1;
	size_t new_size = strlen(value) + 1;
	size_t tail_start = (size_t)(old_value - list->buffer) + old_size;
	size_t new_used = list->used - old_size + new_size;

	if (new_used > VNFS_TAGS_BUFFER) {
		snprintf(error, error_size, "tags exceed %d bytes in total", VNFS_TAGS_BUFFER);
		return -1;
	}
	memmove(old_value + new_size, list->buffer + tail_start, list->used - tail_start);
	memcpy(old_value, value, new_size);
	list->used = (unsigned)new_used;
	return 0;
}

int vnfs_tags_set(struct vnfs_tag_list *list, const char *name, const char *value,
		  char *error, size_t error_size)
{
	long existing;
	size_t name_size, value_size;

	if (check_name(name, strlen(name), error, error_size) < 0 ||
	    check_value(name, value, error, error_size) < 0)
		return -1;

	existing = find_entry(list, name);
	if (existing >= 0)
		return replace_value(list, (unsigned)existing, value, error, error_size);

	if (list->count >= VNFS_MAX_TAGS) {
		snprintf(error, error_size, "too many tags: at most %d are allowed", VNFS_MAX_TAGS);
		return -1;
	}
	name_size = strlen(name) + 1;
	value_size = strlen(value) + 1;
	if (list->used + name_size + value_size > VNFS_TAGS_BUFFER) {
		snprintf(error, error_size, "tags exceed %d bytes in total", VNFS_TAGS_BUFFER);
		return -1;
	}
	memcpy(list->buffer + list->used, name, name_size);
	memcpy(list->buffer + list->used + name_size, value, value_size);
	list->used += (unsigned)(name_size + value_size);
	list->count++;
	return 0;
}

/*
 * One "NAME" or "NAME=VALUE" item of a --vnfs-tags list, length bytes of
 * item (not NUL-terminated: it points into the whole list).
 */
static int parse_item(struct vnfs_tag_list *list, const char *item, size_t length,
		      vnfs_tag_lookup_fn lookup, void *context, char *error, size_t error_size)
{
	const char *equals = memchr(item, '=', length);
	size_t name_length = equals ? (size_t)(equals - item) : length;
	char name[VNFS_TAG_NAME_MAX + 1];
	char value[VNFS_TAG_VALUE_MAX + 1];
	const char *found;

	if (check_name(item, name_length, error, error_size) < 0)
		return -1;
	memcpy(name, item, name_length);
	name[name_length] = '\0';

	if (equals) {
		size_t value_length = length - name_length - 1;

		if (value_length > VNFS_TAG_VALUE_MAX) {
			snprintf(error, error_size,
				 "tag '%s': value of %zu characters exceeds the limit of %d", name,
				 value_length, VNFS_TAG_VALUE_MAX);
			return -1;
		}
		memcpy(value, equals + 1, value_length);
		value[value_length] = '\0';
		return vnfs_tags_set(list, name, value, error, error_size);
	}

	found = lookup ? lookup(name, context) : NULL;
	if (found == NULL) {
		snprintf(error, error_size,
			 "tag '%s': $%s is not set in the job's environment (use %s=VALUE to set it)",
			 name, name, name);
		return -1;
	}
	if (vnfs_tags_set(list, name, found, error, error_size) < 0) {
		/* Say where the bad value came from: the user did not type it. */
		size_t used = strnlen(error, error_size);

		if (used + 1 < error_size)
			snprintf(error + used, error_size - used, " (value taken from $%s)", name);
		return -1;
	}
	return 0;
}

int vnfs_tags_parse(struct vnfs_tag_list *list, const char *text, vnfs_tag_lookup_fn lookup,
		    void *context, char *error, size_t error_size)
{
	/* Work on a copy so that a bad item leaves the list as it was. */
	struct vnfs_tag_list work = *list;
	const char *item = text;

	if (text == NULL || *text == '\0') {
		snprintf(error, error_size, "empty tag list: expected NAME or NAME=VALUE, comma-separated");
		return -1;
	}
	for (;;) {
		const char *comma = strchr(item, ',');
		size_t length = comma ? (size_t)(comma - item) : strlen(item);

		if (length == 0) {
			/* Quote a bounded, escaped prefix: the list is the user's bytes. */
			char shown[SHOWN_TEXT_SIZE];

			snprintf(error, error_size,
				 "empty tag in '%s': expected NAME or NAME=VALUE, comma-separated",
				 quote_prefix(text, strnlen(text, SHOWN_NAME_MAX + 1), shown,
					      sizeof(shown)));
			return -1;
		}
		if (parse_item(&work, item, length, lookup, context, error, error_size) < 0)
			return -1;
		if (comma == NULL)
			break;
		item = comma + 1;
	}
	*list = work;
	return 0;
}

bool vnfs_tags_get(const struct vnfs_tag_list *list, unsigned index, const char **name,
		   const char **value)
{
	unsigned offset = 0;

	if (list == NULL || index >= list->count)
		return false;
	for (unsigned i = 0; i < index; i++) {
		offset += (unsigned)strlen(list->buffer + offset) + 1;
		offset += (unsigned)strlen(list->buffer + offset) + 1;
	}
	*name = list->buffer + offset;
	*value = *name + strlen(*name) + 1;
	return true;
}

const char *vnfs_tags_find(const struct vnfs_tag_list *list, const char *name)
{
	long offset = list != NULL ? find_entry(list, name) : -1;

	if (offset < 0)
		return NULL;
	return list->buffer + offset + strlen(list->buffer + offset) + 1;
}

/* Whole tags only: a cut-off value would read as a different, wrong value. */
const char *vnfs_tags_format(const struct vnfs_tag_list *list, char *out, size_t size)
{
	size_t used = 0;
	const char *name, *value;

	if (size == 0)
		return out;
	out[0] = '\0';
	for (unsigned i = 0; vnfs_tags_get(list, i, &name, &value); i++) {
		size_t needed = (i > 0) + strlen(name) + 1 + strlen(value);

		if (used + needed >= size)
			break;
		used += (size_t)snprintf(out + used, size - used, "%s%s=%s", i > 0 ? "," : "",
					 name, value);
	}
	return out;
}
