/*
 * escape.c — the escaping rules of escape.h.
 *
 * One classifier decides what is printable; every rule is that classifier
 * plus the one or two bytes its destination gives a meaning (the backslash
 * of the canonical form, the '|' of parsable output).  The text is handed on
 * in pieces: a run of printable characters that holds no backslash, or one
 * piece that starts with a backslash (an escape, or a lone backslash).  A
 * writer into a fixed buffer may cut a run between characters but keeps a
 * backslash piece whole, so a cut text never ends in half an escape or half
 * a character.
 */
#include "lib/escape.h"

#include <stdint.h>
#include <string.h>

#include "bpf/step_stats.h" /* VNFS_COMM_LEN */

_Static_assert(VNFS_PROCESS_NAME_BYTES == VNFS_COMM_LEN, "comm size differs from the kernel's");
_Static_assert(VNFS_PROCESS_NAME_TEXT_MAX >= (VNFS_PROCESS_NAME_BYTES - 1) * VNFS_ESCAPE_GROWTH + 1,
	       "canonical process names do not fit");

size_t vnfs_utf8_sequence_length(const char *text, size_t available)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t length;

	if (available == 0)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		length = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		length = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		length = 4;
	else
		return 0; /* a continuation byte, an overlong lead (c0, c1) or beyond U+10FFFF */
	if (length > available)
		return 0; /* truncated */
	for (size_t i = 1; i < length; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
		return 0; /* overlong, surrogate or beyond U+10FFFF */
	return length;
}

bool vnfs_utf8_valid(const char *text, size_t length)
{
	for (size_t i = 0; i < length;) {
		size_t sequence = vnfs_utf8_sequence_length(text + i, length - i);

		if (sequence == 0)
			return false;
		i += sequence;
	}
	return true;
}

static uint32_t code_point(const unsigned char *s, size_t length)
{
	static const unsigned char lead_mask[] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
	uint32_t value = s[0] & lead_mask[length];

	for (size_t i = 1; i < length; i++)
		value = (value << 6) | (s[i] & 0x3f);
	return value;
}

/*
 * Characters that are valid but change how a terminal shows the rest of the
 * line: C1 controls (U+009B is CSI on some terminals), the line and
 * paragraph separators, and the bidirectional controls that let a name
 * display reversed ("Trojan Source").
 */
static bool is_hidden_format_character(uint32_t value)
{
	return (value >= 0x80 && value <= 0x9f) || value == 0x061c || value == 0x200e ||
	       value == 0x200f || (value >= 0x2028 && value <= 0x202e) ||
	       (value >= 0x2066 && value <= 0x2069);
}

/* Length of the printable character at s, or 0 if its first byte is escaped. */
static size_t printable_length(const char *text, size_t available)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t length = vnfs_utf8_sequence_length(text, available);

	if (length == 0)
		return 0;
	if (length == 1)
		return (s[0] < 0x20 || s[0] == 0x7f) ? 0 : 1;
	return is_hidden_format_character(code_point(s, length)) ? 0 : length;
}

/* Bytes that have a meaning where the rule's text goes, beyond non-printables. */
static bool rule_escapes(enum vnfs_escape_rule rule, char c)
{
	switch (rule) {
	case VNFS_ESCAPE_CANONICAL: return c == '\\';
	case VNFS_ESCAPE_PARSABLE: return c == '|';
	case VNFS_ESCAPE_TERMINAL:
	case VNFS_ESCAPE_LOG: return false;
	}
	return false;
}

static void write_escaped_byte(unsigned char byte, vnfs_escape_write_fn write, void *context)
{
	static const char hex[] = "0123456789abcdef";
	char escape[VNFS_ESCAPE_GROWTH] = { '\\', 'x', hex[byte >> 4], hex[byte & 0x0f] };

	write(context, escape, sizeof(escape));
}

void vnfs_escape_write(enum vnfs_escape_rule rule, const char *text, size_t length,
		       vnfs_escape_write_fn write, void *context)
{
	size_t run_start = 0, i = 0;

	while (i < length) {
		size_t character = printable_length(text + i, length - i);

		if (character != 0 && text[i] != '\\' && !rule_escapes(rule, text[i])) {
			i += character;
			continue;
		}
		if (i > run_start)
			write(context, text + run_start, i - run_start);
		if (character != 0 && !rule_escapes(rule, text[i]))
			write(context, "\\", 1); /* a literal backslash: its own piece */
		else
			write_escaped_byte((unsigned char)text[i], write, context);
		i++;
		run_start = i;
	}
	if (i > run_start)
		write(context, text + run_start, i - run_start);
}

struct buffer_writer {
	char *out;
	size_t size;
	size_t used;
	bool full; /* once a piece did not fit, later ones are dropped too */
};

static void buffer_write(void *context, const char *bytes, size_t length)
{
	struct buffer_writer *buffer = context;
	size_t room = buffer->size - 1 - buffer->used;

	if (buffer->full)
		return;
	if (length > room) {
		buffer->full = true;
		if (bytes[0] == '\\')
			return; /* an escape is kept whole or left out */
		length = room;
		while (length > 0 && ((unsigned char)bytes[length] & 0xc0) == 0x80)
			length--; /* not inside a character */
	}
	memcpy(buffer->out + buffer->used, bytes, length);
	buffer->used += length;
}

size_t vnfs_escape(enum vnfs_escape_rule rule, const char *text, size_t length, char *out,
		   size_t out_size)
{
	struct buffer_writer buffer = { .out = out, .size = out_size };

	if (out_size == 0)
		return 0;
	vnfs_escape_write(rule, text, length, buffer_write, &buffer);
	out[buffer.used] = '\0';
	return buffer.used;
}

const char *vnfs_escape_string(enum vnfs_escape_rule rule, const char *text, char *out,
			       size_t out_size)
{
	vnfs_escape(rule, text, strlen(text), out, out_size);
	return out;
}

const char *vnfs_quote_prefix(const char *text, size_t limit, char *out, size_t out_size)
{
	size_t length = strnlen(text, limit + 1);
	size_t used;

	if (out_size == 0)
		return out;
	used = vnfs_escape(VNFS_ESCAPE_LOG, text, length > limit ? limit : length, out, out_size);
	if (length > limit && used + 3 < out_size)
		memcpy(out + used, "...", 4);
	return out;
}

size_t vnfs_text_from_bytes(const char *bytes, size_t length, char *out, size_t out_size)
{
	return vnfs_escape(VNFS_ESCAPE_CANONICAL, bytes, length, out, out_size);
}

size_t vnfs_process_name_text(const char *comm, char *out, size_t out_size)
{
	/* The kernel NUL-terminates comm; strnlen also stops a full 16 bytes. */
	return vnfs_text_from_bytes(comm, strnlen(comm, VNFS_PROCESS_NAME_BYTES - 1), out,
				    out_size);
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int vnfs_bytes_from_text(const char *text, char *out, size_t out_size, size_t *length)
{
	size_t used = 0;

	for (size_t i = 0; text[i] != '\0'; i++) {
		char byte = text[i];

		if (byte == '\\') {
			int high = text[i + 1] == 'x' ? hex_value(text[i + 2]) : -1;
			int low = high >= 0 ? hex_value(text[i + 3]) : -1;

			if (low < 0)
				return -1;
			byte = (char)(high << 4 | low);
			i += 3;
		}
		if (used == out_size)
			return -1;
		out[used++] = byte;
	}
	*length = used;
	return 0;
}

const char *vnfs_json_text(const char *text, char *buffer, size_t size)
{
	size_t length = strlen(text);

	if (vnfs_utf8_valid(text, length))
		return text;
	vnfs_escape(VNFS_ESCAPE_CANONICAL, text, length, buffer, size);
	return buffer;
}

struct prometheus_writer {
	vnfs_escape_write_fn write;
	void *context;
};

/* The exposition format's own escapes, over text that is already valid UTF-8. */
static void prometheus_write(void *context, const char *bytes, size_t length)
{
	const struct prometheus_writer *next = context;
	size_t run_start = 0;

	for (size_t i = 0; i < length; i++) {
		const char *escape = bytes[i] == '\\' ? "\\\\" : bytes[i] == '"' ? "\\\"" :
				     bytes[i] == '\n' ? "\\n" : NULL;

		if (escape == NULL)
			continue;
		if (i > run_start)
			next->write(next->context, bytes + run_start, i - run_start);
		next->write(next->context, escape, 2);
		run_start = i + 1;
	}
	if (length > run_start)
		next->write(next->context, bytes + run_start, length - run_start);
}

void vnfs_prometheus_label_write(const char *value, size_t length, vnfs_escape_write_fn write,
				 void *context)
{
	struct prometheus_writer next = { write, context };

	if (vnfs_utf8_valid(value, length))
		prometheus_write(&next, value, length);
	else
		vnfs_escape_write(VNFS_ESCAPE_CANONICAL, value, length, prometheus_write, &next);
}
