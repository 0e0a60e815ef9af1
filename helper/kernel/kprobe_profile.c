/*
 * kprobe_profile.c — parses a line of tracefs's kprobe_profile
 * (kprobe_profile.h).
 */
#include "helper/kernel/kprobe_profile.h"

#include <stdbool.h>
#include <string.h>

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_name_character(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_';
}

static const char *skip_blanks(const char *text)
{
	while (is_blank(*text))
		text++;
	return text;
}

/* Reads a decimal count at text into *value: past its last digit, or NULL
 * when there is none or it does not fit 64 bits. */
static const char *read_count(const char *text, uint64_t *value)
{
	const char *start = text;
	uint64_t count = 0;

	for (; is_digit(*text); text++) {
		unsigned digit = (unsigned)(*text - '0');

		if (count > (UINT64_MAX - digit) / 10)
			return NULL;
		count = count * 10 + digit;
	}
	if (text == start)
		return NULL;
	*value = count;
	return text;
}

int kprobe_profile_parse_line(const char *line, struct kprobe_profile_line *parsed)
{
	const char *name = skip_blanks(line), *end = name;
	uint64_t hits, missed;
	size_t length;

	while (is_name_character(*end))
		end++;
	length = (size_t)(end - name);
	if (length == 0 || length >= sizeof(parsed->event) || is_digit(name[0]) || !is_blank(*end))
		return -1;
	end = read_count(skip_blanks(end), &hits);
	if (!end || !is_blank(*end))
		return -1;
	end = read_count(skip_blanks(end), &missed);
	if (!end)
		return -1;
	end = skip_blanks(end);
	if (*end == '\n')
		end++;
	if (*end != '\0')
		return -1;
	memcpy(parsed->event, name, length);
	parsed->event[length] = '\0';
	parsed->hits = hits;
	parsed->missed = missed;
	return 0;
}
