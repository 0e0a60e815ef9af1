/*
 * test_escape.c — lib/escape.c: the canonical text of hostile process names
 * (ESC, newline, quotes, backslash, 0xff, truncated and overlong UTF-8, C1
 * and bidirectional controls), its reverse, the terminal, parsable, JSON and
 * Prometheus rules, and cutting at whole characters and escapes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "lib/escape.h"

struct sample {
	const char *bytes;
	size_t length;
	const char *canonical;
};

#define SAMPLE(bytes, canonical) { bytes, sizeof(bytes) - 1, canonical }

static const struct sample samples[] = {
	SAMPLE("python3", "python3"),
	SAMPLE("\x1b[2J\x1b[Hroot", "\\x1b[2J\\x1b[Hroot"),
	SAMPLE("a\nb\r\tc", "a\\x0ab\\x0d\\x09c"),
	SAMPLE("say \"hi\"", "say \"hi\""),
	SAMPLE("a\\x41", "a\\x5cx41"),
	SAMPLE("\xff", "\\xff"),
	SAMPLE("ab\xc3", "ab\\xc3"),                 /* truncated 2-byte sequence */
	SAMPLE("\xe2\x82", "\\xe2\\x82"),            /* truncated 3-byte sequence */
	SAMPLE("\xc3\xa9t\xc3\xa9", "\xc3\xa9t\xc3\xa9"), /* "été" is printable */
	SAMPLE("\xe6\x97\xa5\xe6\x9c\xac", "\xe6\x97\xa5\xe6\x9c\xac"),
	SAMPLE("del\x7f", "del\\x7f"),
	SAMPLE("\xc2\x9b" "31m", "\\xc2\\x9b31m"),   /* C1 CSI */
	SAMPLE("txt\xe2\x80\xae" "exe", "txt\\xe2\\x80\\xaeexe"), /* right-to-left override */
	SAMPLE("\xc0\xaf", "\\xc0\\xaf"),            /* overlong '/' */
	SAMPLE("\xed\xa0\x80", "\\xed\\xa0\\x80"),   /* a surrogate */
	SAMPLE("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"), /* beyond U+10FFFF */
	SAMPLE("\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"), /* an emoji */
	SAMPLE("a\0b", "a\\x00b"),
	SAMPLE("a|b", "a|b"),
};

#define SAMPLE_COUNT (sizeof(samples) / sizeof(samples[0]))

static void test_canonical(void **state)
{
	char out[VNFS_PROCESS_NAME_TEXT_MAX];

	(void)state;
	for (size_t i = 0; i < SAMPLE_COUNT; i++) {
		size_t length = vnfs_text_from_bytes(samples[i].bytes, samples[i].length, out,
						     sizeof(out));

		assert_string_equal(out, samples[i].canonical);
		assert_int_equal(length, strlen(samples[i].canonical));
		assert_true(vnfs_utf8_valid(out, length));
	}
}

static void test_reversible(void **state)
{
	char canonical[VNFS_PROCESS_NAME_TEXT_MAX], bytes[32];
	size_t length;

	(void)state;
	for (size_t i = 0; i < SAMPLE_COUNT; i++) {
		vnfs_text_from_bytes(samples[i].bytes, samples[i].length, canonical,
				     sizeof(canonical));
		assert_int_equal(vnfs_bytes_from_text(canonical, bytes, sizeof(bytes), &length), 0);
		assert_int_equal(length, samples[i].length);
		assert_memory_equal(bytes, samples[i].bytes, length);
	}
	/* Only the canonical spelling is accepted back. */
	assert_int_equal(vnfs_bytes_from_text("a\\", bytes, sizeof(bytes), &length), -1);
	assert_int_equal(vnfs_bytes_from_text("\\x4", bytes, sizeof(bytes), &length), -1);
	assert_int_equal(vnfs_bytes_from_text("\\X41", bytes, sizeof(bytes), &length), -1);
	assert_int_equal(vnfs_bytes_from_text("\\x4G", bytes, sizeof(bytes), &length), -1);
	assert_int_equal(vnfs_bytes_from_text("\\x4A", bytes, sizeof(bytes), &length), -1);
	assert_int_equal(vnfs_bytes_from_text("abc", bytes, 2, &length), -1);
}

static void test_process_name(void **state)
{
	char comm[VNFS_PROCESS_NAME_BYTES], out[VNFS_PROCESS_NAME_TEXT_MAX];

	(void)state;
	/* The worst name: 15 bytes that are each escaped, 61 bytes with the NUL. */
	memset(comm, 0xff, sizeof(comm));
	comm[15] = '\0';
	assert_int_equal(vnfs_process_name_text(comm, out, sizeof(out)), 60);
	assert_string_equal(out, "\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff"
				 "\\xff\\xff\\xff");
	/* A comm is read up to its NUL, and never past 15 bytes. */
	memcpy(comm, "dd\0garbage\x1b\x1b\x1b\x1b\x1b", sizeof(comm));
	assert_int_equal(vnfs_process_name_text(comm, out, sizeof(out)), 2);
	assert_string_equal(out, "dd");
	memcpy(comm, "0123456789abcdef", sizeof(comm));
	assert_int_equal(vnfs_process_name_text(comm, out, sizeof(out)), 15);
	assert_string_equal(out, "0123456789abcde");
}

static void test_cut_whole(void **state)
{
	char out[8];

	(void)state;
	/* Room for 5 bytes: one escape, never "\x1b\x". */
	assert_int_equal(vnfs_escape(VNFS_ESCAPE_CANONICAL, "\x1b\x1b", 2, out, 6), 4);
	assert_string_equal(out, "\\x1b");
	/* Never half of "é"; and nothing after a cut, not even what would fit. */
	assert_int_equal(vnfs_escape(VNFS_ESCAPE_TERMINAL, "a\xc3\xa9", 3, out, 3), 1);
	assert_string_equal(out, "a");
	assert_int_equal(vnfs_escape(VNFS_ESCAPE_TERMINAL, "abc\x1b" "d", 5, out, 6), 3);
	assert_string_equal(out, "abc");
	assert_int_equal(vnfs_escape(VNFS_ESCAPE_TERMINAL, "abc", 3, out, 1), 0);
	assert_string_equal(out, "");
	assert_int_equal(vnfs_escape(VNFS_ESCAPE_TERMINAL, "abc", 3, out, 0), 0);
}

static void test_terminal_and_parsable(void **state)
{
	char out[128], canonical[VNFS_PROCESS_NAME_TEXT_MAX];

	(void)state;
	assert_string_equal(vnfs_escape_string(VNFS_ESCAPE_TERMINAL, "\x1b]0;owned\x07 a\\b|c",
					       out, sizeof(out)),
			    "\\x1b]0;owned\\x07 a\\b|c");
	assert_string_equal(vnfs_escape_string(VNFS_ESCAPE_PARSABLE, "a|b\nc\xff", out,
					       sizeof(out)),
			    "a\\x7cb\\x0ac\\xff");
	assert_string_equal(vnfs_escape_string(VNFS_ESCAPE_LOG, "tag\n\xe2\x80\xae\xc3\xa9",
					       out, sizeof(out)),
			    "tag\\x0a\\xe2\\x80\\xae\xc3\xa9");
	/* Canonical text is shown exactly as it is. */
	for (size_t i = 0; i < SAMPLE_COUNT; i++) {
		vnfs_text_from_bytes(samples[i].bytes, samples[i].length, canonical,
				     sizeof(canonical));
		assert_string_equal(vnfs_escape_string(VNFS_ESCAPE_TERMINAL, canonical, out,
						       sizeof(out)),
				    canonical);
	}
}

static void test_json_text(void **state)
{
	const char *valid = "ok \x1b \"q\" \xc3\xa9";
	char buffer[64];

	(void)state;
	/* Valid UTF-8 is json-c's to escape: the same pointer comes back. */
	assert_ptr_equal(vnfs_json_text(valid, buffer, sizeof(buffer)), valid);
	assert_string_equal(vnfs_json_text("bad\xff\\\x1b", buffer, sizeof(buffer)),
			    "bad\\xff\\x5c\\x1b");
}

struct collected {
	char text[256];
	size_t length;
};

static void collect(void *context, const char *bytes, size_t length)
{
	struct collected *collected = context;

	assert_true(collected->length + length < sizeof(collected->text));
	memcpy(collected->text + collected->length, bytes, length);
	collected->length += length;
	collected->text[collected->length] = '\0';
}

static void test_prometheus_label(void **state)
{
	struct collected label = { .length = 0 };

	(void)state;
	vnfs_prometheus_label_write("a\"b\\c\nd", 7, collect, &label);
	assert_string_equal(label.text, "a\\\"b\\\\c\\nd");
	/* Not UTF-8: its canonical text, escaped for the format. */
	label.length = 0;
	vnfs_prometheus_label_write("x\xff\"\\", 4, collect, &label);
	assert_string_equal(label.text, "x\\\\xff\\\"\\\\x5c");
}

static void test_quote_prefix(void **state)
{
	char out[40 * VNFS_ESCAPE_GROWTH + 4], text[51];

	(void)state;
	memset(text, 'A', 50);
	text[50] = '\0';
	assert_string_equal(vnfs_quote_prefix(text, 40, out, sizeof(out)),
			    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA...");
	assert_string_equal(vnfs_quote_prefix("a\nb", 40, out, sizeof(out)), "a\\x0ab");
	assert_string_equal(vnfs_quote_prefix("\x1b\x1b\x1b", 2, out, sizeof(out)),
			    "\\x1b\\x1b...");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_canonical),
		cmocka_unit_test(test_reversible),
		cmocka_unit_test(test_process_name),
		cmocka_unit_test(test_cut_whole),
		cmocka_unit_test(test_terminal_and_parsable),
		cmocka_unit_test(test_json_text),
		cmocka_unit_test(test_prometheus_label),
		cmocka_unit_test(test_quote_prefix),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
