/*
 * test_tags.c — lib/tags.c: the validation rules, the packed list, and the
 * exact messages a user sees for each kind of bad --vnfs-tags.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/tags.h"

/* A fake job environment for NAME lookups: a NULL-terminated name/value list. */
static const char *lookup_in(const char *name, void *context)
{
	const char *const *environment = context;

	for (size_t i = 0; environment[i] != NULL; i += 2) {
		if (strcmp(environment[i], name) == 0)
			return environment[i + 1];
	}
	return NULL;
}

static void test_name_and_value_rules(void **state)
{
	char long_name[VNFS_TAG_NAME_MAX + 2];
	char long_value[VNFS_TAG_VALUE_MAX + 2];

	(void)state;
	assert_true(vnfs_tag_name_valid("PROJECT_NAME"));
	assert_true(vnfs_tag_name_valid("_x9"));
	assert_false(vnfs_tag_name_valid(""));
	assert_false(vnfs_tag_name_valid("9LIVES"));
	assert_false(vnfs_tag_name_valid("MY NAME"));
	assert_false(vnfs_tag_name_valid("A-B"));
	memset(long_name, 'N', VNFS_TAG_NAME_MAX);
	long_name[VNFS_TAG_NAME_MAX] = '\0';
	assert_true(vnfs_tag_name_valid(long_name));
	long_name[VNFS_TAG_NAME_MAX] = 'N';
	long_name[VNFS_TAG_NAME_MAX + 1] = '\0';
	assert_false(vnfs_tag_name_valid(long_name));

	assert_true(vnfs_tag_value_valid(""));
	assert_true(vnfs_tag_value_valid("alpha-1.2_x:y@z+%"));
	assert_false(vnfs_tag_value_valid("a b"));
	assert_false(vnfs_tag_value_valid("a\"b"));
	assert_false(vnfs_tag_value_valid("a/b"));
	assert_false(vnfs_tag_value_valid("a\nb"));
	memset(long_value, 'v', VNFS_TAG_VALUE_MAX);
	long_value[VNFS_TAG_VALUE_MAX] = '\0';
	assert_true(vnfs_tag_value_valid(long_value));
	long_value[VNFS_TAG_VALUE_MAX] = 'v';
	long_value[VNFS_TAG_VALUE_MAX + 1] = '\0';
	assert_false(vnfs_tag_value_valid(long_value));
}

static void test_set_get_find_format(void **state)
{
	struct vnfs_tag_list list;
	char error[256], text[64];
	const char *name, *value;

	(void)state;
	vnfs_tags_init(&list);
	assert_int_equal(list.count, 0);
	assert_false(vnfs_tags_get(&list, 0, &name, &value));
	assert_string_equal(vnfs_tags_format(&list, text, sizeof(text)), "");

	assert_int_equal(vnfs_tags_set(&list, "A", "1", error, sizeof(error)), 0);
	assert_int_equal(vnfs_tags_set(&list, "BB", "", error, sizeof(error)), 0);
	assert_int_equal(vnfs_tags_set(&list, "C", "three", error, sizeof(error)), 0);
	assert_int_equal(list.count, 3);
	assert_int_equal(list.used, strlen("A.1.BB..C.three."));

	assert_true(vnfs_tags_get(&list, 1, &name, &value));
	assert_string_equal(name, "BB");
	assert_string_equal(value, "");
	assert_false(vnfs_tags_get(&list, 3, &name, &value));
	assert_string_equal(vnfs_tags_find(&list, "C"), "three");
	assert_null(vnfs_tags_find(&list, "c"));
	assert_string_equal(vnfs_tags_format(&list, text, sizeof(text)), "A=1,BB=,C=three");
}

static void test_later_name_replaces_in_place(void **state)
{
	struct vnfs_tag_list list;
	char error[256], text[64];

	(void)state;
	vnfs_tags_init(&list);
	assert_int_equal(vnfs_tags_parse(&list, "A=1,B=2,C=3", NULL, NULL, error, sizeof(error)), 0);
	assert_int_equal(vnfs_tags_set(&list, "B", "longer-value", error, sizeof(error)), 0);
	assert_int_equal(list.count, 3);
	assert_string_equal(vnfs_tags_format(&list, text, sizeof(text)), "A=1,B=longer-value,C=3");
	assert_int_equal(vnfs_tags_set(&list, "B", "", error, sizeof(error)), 0);
	assert_string_equal(vnfs_tags_format(&list, text, sizeof(text)), "A=1,B=,C=3");
	assert_int_equal(list.used, strlen("A.1.B..C.3."));
	assert_int_equal(vnfs_tags_parse(&list, "A=x,A=y", NULL, NULL, error, sizeof(error)), 0);
	assert_string_equal(vnfs_tags_format(&list, text, sizeof(text)), "A=y,B=,C=3");
}

static void test_parse_looks_up_names(void **state)
{
	const char *environment[] = { "PROJECT_NAME", "alpha", "EMPTY", "", NULL };
	struct vnfs_tag_list list;
	char error[256], text[128];

	(void)state;
	vnfs_tags_init(&list);
	assert_int_equal(vnfs_tags_parse(&list, "PROJECT_NAME,EMPTY,RUN=7", lookup_in, environment,
					 error, sizeof(error)),
			 0);
	assert_string_equal(vnfs_tags_format(&list, text, sizeof(text)),
			    "PROJECT_NAME=alpha,EMPTY=,RUN=7");
}

static void test_parse_value_may_contain_equals_sign_error(void **state)
{
	struct vnfs_tag_list list;
	char error[256];

	(void)state;
	vnfs_tags_init(&list);
	assert_int_equal(vnfs_tags_parse(&list, "A=b=c", NULL, NULL, error, sizeof(error)), -1);
	assert_string_equal(error, "tag 'A': character '=' is not allowed in a value "
				   "(a value is letters, digits and . _ : @ + % -)");
}

static void test_unset_name_is_named(void **state)
{
	const char *environment[] = { "OTHER", "x", NULL };
	struct vnfs_tag_list list;
	char error[256];

	(void)state;
	vnfs_tags_init(&list);
	assert_int_equal(vnfs_tags_parse(&list, "OTHER,PROJECT_NAME", lookup_in, environment, error,
					 sizeof(error)),
			 -1);
	assert_string_equal(error, "tag 'PROJECT_NAME': $PROJECT_NAME is not set in the job's "
				   "environment (use PROJECT_NAME=VALUE to set it)");
	/* A failed parse leaves the list as it was: OTHER was not added. */
	assert_int_equal(list.count, 0);

	/* No lookup function at all: every bare name is unset. */
	assert_int_equal(vnfs_tags_parse(&list, "HOME", NULL, NULL, error, sizeof(error)), -1);
	assert_string_equal(error, "tag 'HOME': $HOME is not set in the job's environment "
				   "(use HOME=VALUE to set it)");
}

static void test_bad_names(void **state)
{
	struct vnfs_tag_list list;
	char error[256];

	(void)state;
	vnfs_tags_init(&list);
	assert_int_equal(vnfs_tags_parse(&list, "MY NAME=x", NULL, NULL, error, sizeof(error)), -1);
	assert_string_equal(error, "tag 'MY NAME': a name is letters, digits and '_' "
				   "(not starting with a digit)");
	assert_int_equal(vnfs_tags_parse(&list, "MY NAME", NULL, NULL, error, sizeof(error)), -1);
	assert_string_equal(error, "tag 'MY NAME': a name is letters, digits and '_' "
				   "(not starting with a digit)");
	assert_int_equal(vnfs_tags_parse(&list, "1ST=x", NULL, NULL, error, sizeof(error)), -1);
	assert_string_equal(error, "tag '1ST': a name is letters, digits and '_' "
				   "(not starting with a digit)");
	assert_int_equal(vnfs_tags_parse(&list, "=x", NULL, NULL, error, sizeof(error)), -1);
	assert_string_equal(error, "empty tag name: a name is letters, digits and '_' "
				   "(not starting with a digit)");
	assert_int_equal(vnfs_tags_set(&list, "A\nB\x01\xc3\xa9", "x", error, sizeof(error)), -1);
	/* Every byte but printable ASCII as \xNN: no tag name holds others. */
	assert_string_equal(error, "tag 'A\\x0aB\\x01\\xc3\\xa9': a name is letters, digits and '_' "
				   "(not starting with a digit)");
	assert_int_equal(vnfs_tags_set(&list, "\x1b[2J\xff", "x", error, sizeof(error)), -1);
	assert_string_equal(error, "tag '\\x1b[2J\\xff': a name is letters, digits and '_' "
				   "(not starting with a digit)");
	assert_int_equal(vnfs_tags_set(&list, "A.B", "x", error, sizeof(error)), -1);
	assert_string_equal(error, "tag 'A.B': a name is letters, digits and '_' "
				   "(not starting with a digit)");
}

static void test_long_name(void **state)
{
	struct vnfs_tag_list list;
	char name[101], error[256];

	(void)state;
	vnfs_tags_init(&list);
	memset(name, 'N', 100);
	name[100] = '\0';
	assert_int_equal(vnfs_tags_set(&list, name, "x", error, sizeof(error)), -1);
	assert_string_equal(error, "tag 'NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN...': name of 100 "
				   "characters exceeds the limit of 64");
}

static void test_ten_kib_value(void **state)
{
	struct vnfs_tag_list list;
	size_t length = 10 * 1024;
	char *text = malloc(length + 16);
	char error[256];
	const char *environment[] = { "BIG", NULL, NULL };

	(void)state;
	assert_non_null(text);
	vnfs_tags_init(&list);
	strcpy(text, "BIG=");
	memset(text + 4, 'v', length);
	text[4 + length] = '\0';
	assert_int_equal(vnfs_tags_parse(&list, text, NULL, NULL, error, sizeof(error)), -1);
	assert_string_equal(error, "tag 'BIG': value of 10240 characters exceeds the limit of 256");

	/* The same value from the environment says where it came from. */
	environment[1] = text + 4;
	assert_int_equal(vnfs_tags_parse(&list, "BIG", lookup_in, environment, error, sizeof(error)),
			 -1);
	assert_string_equal(error, "tag 'BIG': value of 10240 characters exceeds the limit of 256 "
				   "(value taken from $BIG)");
	assert_int_equal(vnfs_tags_set(&list, "BIG", text + 4, error, sizeof(error)), -1);
	assert_string_equal(error, "tag 'BIG': value of 10240 characters exceeds the limit of 256");
	assert_int_equal(list.count, 0);
	free(text);
}

static void test_bad_value_characters(void **state)
{
	struct vnfs_tag_list list;
	char error[256];
	const char *environment[] = { "PATHLIKE", "/home/me", NULL };

	(void)state;
	vnfs_tags_init(&list);
	assert_int_equal(vnfs_tags_parse(&list, "A=x y", NULL, NULL, error, sizeof(error)), -1);
	assert_string_equal(error, "tag 'A': character ' ' is not allowed in a value "
				   "(a value is letters, digits and . _ : @ + % -)");
	assert_int_equal(vnfs_tags_parse(&list, "PATHLIKE", lookup_in, environment, error,
					 sizeof(error)),
			 -1);
	assert_string_equal(error, "tag 'PATHLIKE': character '/' is not allowed in a value "
				   "(a value is letters, digits and . _ : @ + % -) "
				   "(value taken from $PATHLIKE)");
	assert_int_equal(vnfs_tags_set(&list, "Q", "it's", error, sizeof(error)), -1);
	assert_string_equal(error, "tag 'Q': character ''' is not allowed in a value "
				   "(a value is letters, digits and . _ : @ + % -)");
}

static void test_empty_items(void **state)
{
	struct vnfs_tag_list list;
	char error[256];

	(void)state;
	vnfs_tags_init(&list);
	assert_int_equal(vnfs_tags_parse(&list, "", NULL, NULL, error, sizeof(error)), -1);
	assert_string_equal(error, "empty tag list: expected NAME or NAME=VALUE, comma-separated");
	assert_int_equal(vnfs_tags_parse(&list, "A=1,,B=2", NULL, NULL, error, sizeof(error)), -1);
	assert_string_equal(error,
			    "empty tag in 'A=1,,B=2': expected NAME or NAME=VALUE, comma-separated");
	assert_int_equal(vnfs_tags_parse(&list, "A=1,", NULL, NULL, error, sizeof(error)), -1);
	assert_string_equal(error, "empty tag in 'A=1,': expected NAME or NAME=VALUE, comma-separated");
	assert_int_equal(list.count, 0);
}

/* The list is the user's bytes: quoted escaped, and only its first 40. */
static void test_empty_item_quotes_little(void **state)
{
	struct vnfs_tag_list list;
	char error[512], text[256];

	(void)state;
	vnfs_tags_init(&list);
	assert_int_equal(vnfs_tags_parse(&list, "A=1\n,\x1b[2J,,B", NULL, NULL, error,
					 sizeof(error)),
			 -1);
	/* The ESC sequence and newline are not names: the first bad item is reported. */
	assert_string_equal(error, "tag 'A': character 0x0a is not allowed in a value "
				   "(a value is letters, digits and . _ : @ + % -)");
	assert_int_equal(vnfs_tags_parse(&list, "A=1,,\x1b[2J\n", NULL, NULL, error,
					 sizeof(error)),
			 -1);
	assert_string_equal(error, "empty tag in 'A=1,,\\x1b[2J\\x0a': expected NAME or "
				   "NAME=VALUE, comma-separated");
	memset(text, 'x', 200);
	memcpy(text, "A=1,,", 5);
	text[200] = '\0';
	assert_int_equal(vnfs_tags_parse(&list, text, NULL, NULL, error, sizeof(error)), -1);
	assert_string_equal(error, "empty tag in 'A=1,,xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...': "
				   "expected NAME or NAME=VALUE, comma-separated");
	assert_int_equal(list.count, 0);
}

static void test_too_many_tags(void **state)
{
	struct vnfs_tag_list list;
	char error[256], name[16];
	char text[65 * 8] = "";
	size_t used = 0;

	(void)state;
	vnfs_tags_init(&list);
	for (int i = 0; i < 65; i++)
		used += (size_t)snprintf(text + used, sizeof(text) - used, "%sT%d=%d", i ? "," : "", i, i);
	assert_int_equal(vnfs_tags_parse(&list, text, NULL, NULL, error, sizeof(error)), -1);
	assert_string_equal(error, "too many tags: at most 32 are allowed");
	assert_int_equal(list.count, 0);

	for (int i = 0; i < VNFS_MAX_TAGS; i++) {
		snprintf(name, sizeof(name), "T%d", i);
		assert_int_equal(vnfs_tags_set(&list, name, "v", error, sizeof(error)), 0);
	}
	assert_int_equal(list.count, VNFS_MAX_TAGS);
	assert_int_equal(vnfs_tags_set(&list, "T32", "v", error, sizeof(error)), -1);
	assert_string_equal(error, "too many tags: at most 32 are allowed");
	/* Replacing an existing name is still fine at the limit. */
	assert_int_equal(vnfs_tags_set(&list, "T0", "w", error, sizeof(error)), 0);
	assert_string_equal(vnfs_tags_find(&list, "T0"), "w");
}

static void test_buffer_bound(void **state)
{
	struct vnfs_tag_list list;
	char name[VNFS_TAG_NAME_MAX + 1], value[VNFS_TAG_VALUE_MAX + 1], error[256], expected[64];
	const unsigned entry = VNFS_TAG_NAME_MAX + VNFS_TAG_VALUE_MAX + 2;
	unsigned added = 0;

	(void)state;
	vnfs_tags_init(&list);
	snprintf(expected, sizeof(expected), "tags exceed %d bytes in total", VNFS_TAGS_BUFFER);
	memset(value, 'v', VNFS_TAG_VALUE_MAX);
	value[VNFS_TAG_VALUE_MAX] = '\0';
	/* Longest names and values until the packed buffer is full. */
	for (;;) {
		memset(name, 'A' + (int)added, VNFS_TAG_NAME_MAX);
		name[VNFS_TAG_NAME_MAX] = '\0';
		if (vnfs_tags_set(&list, name, value, error, sizeof(error)) < 0)
			break;
		added++;
	}
	assert_int_equal(added, VNFS_TAGS_BUFFER / entry);
	assert_string_equal(error, expected);
	assert_int_equal(list.count, added);
	assert_int_equal(list.used, added * entry);
	/* Growing an existing value past the buffer is refused too. */
	assert_int_equal(vnfs_tags_set(&list, "S", "", error, sizeof(error)), 0);
	assert_int_equal(vnfs_tags_set(&list, "S", value, error, sizeof(error)), -1);
	assert_string_equal(error, expected);
	assert_string_equal(vnfs_tags_find(&list, "S"), "");
}

static void test_format_truncates_whole_tags(void **state)
{
	struct vnfs_tag_list list;
	char error[256], text[12];

	(void)state;
	vnfs_tags_init(&list);
	assert_int_equal(vnfs_tags_parse(&list, "A=1,B=22,C=333", NULL, NULL, error, sizeof(error)), 0);
	assert_string_equal(vnfs_tags_format(&list, text, sizeof(text)), "A=1,B=22");
	assert_string_equal(vnfs_tags_format(&list, text, 4), "A=1");
	assert_string_equal(vnfs_tags_format(&list, text, 3), "");
	text[0] = 'x';
	vnfs_tags_format(&list, text, 0);
	assert_int_equal(text[0], 'x');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_and_value_rules),
		cmocka_unit_test(test_set_get_find_format),
		cmocka_unit_test(test_later_name_replaces_in_place),
		cmocka_unit_test(test_parse_looks_up_names),
		cmocka_unit_test(test_parse_value_may_contain_equals_sign_error),
		cmocka_unit_test(test_unset_name_is_named),
		cmocka_unit_test(test_bad_names),
		cmocka_unit_test(test_long_name),
		cmocka_unit_test(test_ten_kib_value),
		cmocka_unit_test(test_bad_value_characters),
		cmocka_unit_test(test_empty_items),
		cmocka_unit_test(test_empty_item_quotes_little),
		cmocka_unit_test(test_too_many_tags),
		cmocka_unit_test(test_buffer_bound),
		cmocka_unit_test(test_format_truncates_whole_tags),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
