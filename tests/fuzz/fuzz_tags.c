/*
 * fuzz_tags.c — libFuzzer target for vnfs_tags_parse, the parser of
 * --vnfs-tags (typed by any user, read again on the node from the job).
 *
 * Input: the tag list text, then optionally a NUL and the job's environment
 * as NUL-separated NAME=VALUE entries (what a NAME without =VALUE is looked
 * up in).  Beyond the sanitizers it checks what tags.h promises:
 *   - a refusal says why, leaves the list as it was, and its message is
 *     harmless on a terminal and in a log line (it goes to the user's
 *     terminal and to slurmd.log, so a control character from the user must
 *     not reach either: DESIGN 12);
 *   - an accepted list holds only valid names and values, within the bounds,
 *     each findable by name, and formatting it and parsing the text again
 *     gives the same list.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/tags.h"
#include "tests/fuzz/fuzz_support.h"



/* Says what failed (the message's bytes other than printable ASCII, and the
 * backslash, as \xNN), then aborts. */
static void fail(const char *what, const char *message)
{
	fprintf(stderr, "fuzz_tags: %s: '", what);
	for (const unsigned char *c = (const unsigned char *)message; *c; c++)
		fprintf(stderr, *c < 0x20 || *c >= 0x7f || *c == '\\' ? "\\x%02x" : "%c", *c);
	fprintf(stderr, "'\n");
	abort();
}

/*
 * Is message safe on a terminal and in a log line (the log rule of
 * lib/escape.h)?  Well-formed UTF-8 without C0 or C1 controls, DEL, line or
 * paragraph separators, or the bidirectional format characters that reorder
 * what a terminal shows.
 */
static bool harmless(const char *message)
{
	const unsigned char *s = (const unsigned char *)message;

	while (*s) {
		uint32_t code;
		size_t length;

		if (s[0] < 0x80) {
			if (s[0] < 0x20 || s[0] == 0x7f)
				return false;
			s++;
			continue;
		}
		if (s[0] >= 0xc2 && s[0] <= 0xdf)
			length = 2, code = s[0] & 0x1f;
		else if (s[0] >= 0xe0 && s[0] <= 0xef)
			length = 3, code = s[0] & 0x0f;
		else if (s[0] >= 0xf0 && s[0] <= 0xf4)
			length = 4, code = s[0] & 0x07;
		else
			return false;
		for (size_t i = 1; i < length; i++) {
			if ((s[i] & 0xc0) != 0x80)
				return false;
			code = code << 6 | (s[i] & 0x3f);
		}
		if ((length == 3 && code < 0x800) || (length == 4 && code < 0x10000) ||
		    (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff)
			return false; /* overlong, surrogate, beyond Unicode */
		if ((code >= 0x80 && code <= 0x9f) || code == 0x200e || code == 0x200f ||
		    code == 0x2028 || code == 0x2029 || (code >= 0x202a && code <= 0x202e) ||
		    (code >= 0x2066 && code <= 0x2069))
			return false;
		s += length;
	}
	return true;
}

static void check_message(const char *error)
{
	if (error[0] == '\0')
		fail("a refusal without a message", error);
	if (!harmless(error))
		fail("a message unsafe for a terminal or a log", error);
}

static bool same_list(const struct vnfs_tag_list *a, const struct vnfs_tag_list *b)
{
	return a->count == b->count && a->used == b->used &&
	       memcmp(a->buffer, b->buffer, a->used) == 0;
}

static void check_list(const struct vnfs_tag_list *list)
{
	const char *name, *value;
	unsigned count = 0;

	if (list->count > VNFS_MAX_TAGS || list->used > VNFS_TAGS_BUFFER)
		abort();
	for (unsigned i = 0; vnfs_tags_get(list, i, &name, &value); i++) {
		if (!vnfs_tag_name_valid(name) || !vnfs_tag_value_valid(value))
			abort();
		/* Names are unique: the first entry with this name is this one. */
		if (vnfs_tags_find(list, name) != value)
			abort();
		count++;
	}
	if (count != list->count)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size + 1);
	struct fuzz_environment environment = { 0 };
	struct vnfs_tag_list *list = malloc(sizeof(*list));
	struct vnfs_tag_list *before = malloc(sizeof(*before));
	struct vnfs_tag_list *again = malloc(sizeof(*again));
	char error[512] = "";
	char formatted[2 * VNFS_TAGS_BUFFER];

	if (copy == NULL || list == NULL || before == NULL || again == NULL)
		abort();
	memcpy(copy, data, size);
	copy[size] = '\0';
	for (char *entry = copy + strlen(copy); entry < copy + size &&
	     environment.count < FUZZ_ENVIRONMENT_MAX; entry += strlen(entry)) {
		entry++; /* past the NUL that ended the previous part */
		environment.entries[environment.count++] = entry;
	}

	/* Parsing appends to what the list holds: start from one tag, as the
	 * plugin does after the administrator's envs= tags. */
	vnfs_tags_init(list);
	if (vnfs_tags_set(list, "SITE", "fuzz", error, sizeof(error)) != 0)
		abort();
	*before = *list;
	if (vnfs_tags_parse(list, copy, fuzz_environment_lookup, &environment, error, sizeof(error)) != 0) {
		check_message(error);
		if (!same_list(list, before))
			abort();
	} else {
		check_list(list);
		vnfs_tags_format(list, formatted, sizeof(formatted));
		vnfs_tags_init(again);
		if (vnfs_tags_parse(again, formatted, NULL, NULL, error, sizeof(error)) != 0 ||
		    !same_list(list, again))
			abort();
	}

	/* The same text through a tiny error buffer: messages are cut, never
	 * overflow. */
	{
		char tiny[8];

		vnfs_tags_init(again);
		(void)vnfs_tags_parse(again, copy, fuzz_environment_lookup, &environment, tiny, sizeof(tiny));
	}
	free(again);
	free(before);
	free(list);
	free(copy);
	return 0;
}
