/*
 * test_kept_tags.c — the collector's one copy of each distinct tag list:
 * equal lists share it, a sweep frees what the snapshot did not use.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "helper/collect/kept_tags.h"

static struct vnfs_tag_list list_of(const char *text)
{
	struct vnfs_tag_list list;
	char error[128];

	vnfs_tags_init(&list);
	assert_int_equal(vnfs_tags_parse(&list, text, NULL, NULL, error, sizeof(error)), 0);
	return list;
}

/* Two jobs' steps: each job's lists are one copy, its tags intact. */
static void test_equal_lists_share_one_copy(void **state)
{
	struct vnfs_tag_list a = list_of("PROJECT_NAME=alpha,QUEUE=gpu");
	struct vnfs_tag_list a_again = list_of("PROJECT_NAME=alpha,QUEUE=gpu");
	struct vnfs_tag_list b = list_of("PROJECT_NAME=beta,QUEUE=gpu");
	struct vnfs_tag_list none;
	struct vnfs_kept_tags kept;
	const struct vnfs_tag_list *first, *second, *other;

	(void)state;
	vnfs_tags_init(&none);
	vnfs_kept_tags_init(&kept);
	vnfs_kept_tags_begin(&kept);
	first = vnfs_kept_tags_use(&kept, &a);
	second = vnfs_kept_tags_use(&kept, &a_again);
	other = vnfs_kept_tags_use(&kept, &b);
	assert_ptr_equal(vnfs_kept_tags_use(&kept, &none), vnfs_tags_none());
	vnfs_kept_tags_sweep(&kept);
	assert_ptr_equal(first, second);
	assert_ptr_not_equal(first, &a);
	assert_ptr_not_equal(first, other);
	assert_int_equal(kept.count, 2);
	assert_string_equal(vnfs_tags_find(first, "PROJECT_NAME"), "alpha");
	assert_string_equal(vnfs_tags_find(other, "PROJECT_NAME"), "beta");
	assert_true(vnfs_tags_equal(first, &a));
	vnfs_kept_tags_destroy(&kept);
	assert_int_equal(kept.count, 0);
}

/* A snapshot keeps what it used again, in place, and frees the rest. */
static void test_sweep_frees_what_a_snapshot_left(void **state)
{
	struct vnfs_tag_list a = list_of("PROJECT_NAME=alpha");
	struct vnfs_tag_list b = list_of("PROJECT_NAME=beta");
	struct vnfs_kept_tags kept;
	const struct vnfs_tag_list *kept_a;

	(void)state;
	vnfs_kept_tags_init(&kept);
	vnfs_kept_tags_begin(&kept);
	kept_a = vnfs_kept_tags_use(&kept, &a);
	assert_non_null(vnfs_kept_tags_use(&kept, &b));
	vnfs_kept_tags_sweep(&kept);
	assert_int_equal(kept.count, 2);

	vnfs_kept_tags_begin(&kept);
	assert_ptr_equal(vnfs_kept_tags_use(&kept, &a), kept_a);
	vnfs_kept_tags_sweep(&kept);
	assert_int_equal(kept.count, 1);
	assert_string_equal(vnfs_tags_find(kept_a, "PROJECT_NAME"), "alpha");

	vnfs_kept_tags_begin(&kept);
	vnfs_kept_tags_sweep(&kept);
	assert_int_equal(kept.count, 0);
	vnfs_kept_tags_destroy(&kept);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_equal_lists_share_one_copy),
		cmocka_unit_test(test_sweep_frees_what_a_snapshot_left),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
