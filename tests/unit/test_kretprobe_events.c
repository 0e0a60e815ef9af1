/*
 * test_kretprobe_events.c — the kernel's count of missed returns, read from
 * tracefs's kprobe_profile (helper/kernel/kprobe_profile.c) for the return
 * probes the helper made (helper/kernel/kretprobe_events.c).
 *
 * This machine's kernel has no kprobes, so the files stand in a scratch
 * directory laid out as tracefs is, with lines as the kernel prints them
 * ("  %-44s %15lu %15lu\n").  The guest suite checks the counts against a
 * real kernel (tests/guest/suites/probes.sh, "returns the kernel does not
 * report": 6 of 16 returns lost with room for 10).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "helper/kernel/kprobe_profile.h"
#include "helper/kernel/probes_state.h"

static void parses(const char *line, const char *event, uint64_t hits, uint64_t missed)
{
	struct kprobe_profile_line parsed;

	assert_int_equal(kprobe_profile_parse_line(line, &parsed), 0);
	assert_string_equal(parsed.event, event);
	assert_int_equal(parsed.hits, hits);
	assert_int_equal(parsed.missed, missed);
}

static void refuses(const char *line)
{
	struct kprobe_profile_line parsed;

	assert_int_equal(kprobe_profile_parse_line(line, &parsed), -1);
}

static void test_lines_as_the_kernel_prints_them(void **state)
{
	(void)state;
	parses("  nfs_file_read_1089                                         26               6\n",
	       "nfs_file_read_1089", 26, 6);
	parses("  p_vfs_read_0 0 0", "p_vfs_read_0", 0, 0);
	parses("\t_x\t18446744073709551615\t18446744073709551615\n", "_x", UINT64_MAX, UINT64_MAX);
	/* 63 bytes: the longest name the kernel makes. */
	parses("a12345678901234567890123456789012345678901234567890123456789012 1 2",
	       "a12345678901234567890123456789012345678901234567890123456789012", 1, 2);
}

static void test_lines_that_are_not_ours_or_not_whole(void **state)
{
	(void)state;
	refuses("");
	refuses("\n");
	refuses("  nfs_file_read_1089 26\n");                   /* a count short */
	refuses("  nfs_file_read_1089 26 6 7\n");               /* one too many */
	refuses("  nfs_file_read_1089 26 -6\n");
	refuses("  nfs_file_read_1089 26 6x\n");
	refuses("  nfs_file_read_1089 18446744073709551616 0\n"); /* over 64 bits */
	refuses("  1nfs 1 1\n");                                 /* not a C name */
	refuses("  nfs.isra.0 1 1\n");
	refuses("  vnfs/nfs_file_read_1 1 1\n");
	refuses("  ../x 1 1\n");
	refuses("a123456789012345678901234567890123456789012345678901234567890123 1 2");
	refuses("  nfs_file_read_1089 26 6\n\n");
}

/* A tracefs of one's own: kprobe_profile and the vnfs group's events. */
struct scratch_tracefs {
	char root[64];
	struct vnfs_probes probes;
};

static void make_event(const struct scratch_tracefs *tracefs, const char *group, const char *event)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/events/%s", tracefs->root, group);
	(void)mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/events/%s/%s", tracefs->root, group, event);
	assert_int_equal(mkdir(path, 0755), 0);
}

static void write_profile(const struct scratch_tracefs *tracefs, const char *text)
{
	char path[PATH_MAX];
	FILE *file;

	snprintf(path, sizeof(path), "%s/kprobe_profile", tracefs->root);
	file = fopen(path, "w");
	assert_non_null(file);
	assert_int_equal(fputs(text, file) >= 0, 1);
	assert_int_equal(fclose(file), 0);
}

static int make_tracefs(void **state)
{
	struct scratch_tracefs *tracefs = calloc(1, sizeof(*tracefs));
	char path[PATH_MAX];

	if (!tracefs)
		return -1;
	/* mkdtemp's template: it replaces the six X with a unique name. */
	snprintf(tracefs->root, sizeof(tracefs->root), "/tmp/vnfs-tracefs-XXXXXX");
	if (!mkdtemp(tracefs->root))
		return -1;
	snprintf(path, sizeof(path), "%s/events", tracefs->root);
	if (mkdir(path, 0755) != 0)
		return -1;
	tracefs->probes.tracefs = tracefs->root;
	*state = tracefs;
	return 0;
}

static int remove_tracefs(void **state)
{
	struct scratch_tracefs *tracefs = *state;
	char command[128];

	snprintf(command, sizeof(command), "rm -rf '%s'", tracefs->root);
	free(tracefs);
	return system(command) == 0 ? 0 : -1;
}

struct seen {
	char text[512];
	int calls;
};

static int note(const char *function, uint64_t missed, void *context)
{
	struct seen *seen = context;
	size_t length = strlen(seen->text);

	snprintf(seen->text + length, sizeof(seen->text) - length, "%s=%llu ", function,
		 (unsigned long long)missed);
	seen->calls++;
	return 0;
}

static void test_only_the_groups_events_are_counted(void **state)
{
	struct scratch_tracefs *tracefs = *state;
	struct seen seen = { .calls = 0 };

	make_event(tracefs, "vnfs", "nfs_file_read_1089");
	make_event(tracefs, "vnfs", "nfs_file_write_1089");
	make_event(tracefs, "vnfs", "nfs_getattr_977"); /* an earlier helper's, pinned */
	make_event(tracefs, "vnfs", "no_pid_at_the_end");
	make_event(tracefs, "kprobes", "vfs_read_1089"); /* another tool's */
	write_profile(tracefs,
		      "  vfs_read_1089                                        400              9\n"
		      "  nfs_file_read_1089                                    26              6\n"
		      "  garbage that is not a line\n"
		      "  nfs_file_write_1089                                    3              0\n"
		      "  no_pid_at_the_end                                      5              5\n"
		      "  nfs_getattr_977                                       12              1\n"
		      "  nfs_readdir_1089                                       7              7\n");
	assert_int_equal(vnfs_probes_for_each_missed_return(&tracefs->probes, note, &seen), 0);
	assert_string_equal(seen.text, "nfs_file_read=6 nfs_file_write=0 nfs_getattr=1 ");
	assert_int_equal(seen.calls, 3);
}

static int stop_at_first(const char *function, uint64_t missed, void *context)
{
	(void)function;
	(void)missed;
	(*(int *)context)++;
	return 7;
}

static void test_a_nonzero_return_stops_the_walk(void **state)
{
	struct scratch_tracefs *tracefs = *state;
	int calls = 0;

	make_event(tracefs, "vnfs", "nfs_file_read_5");
	make_event(tracefs, "vnfs", "nfs_file_write_5");
	write_profile(tracefs, "  nfs_file_read_5 1 0\n  nfs_file_write_5 1 0\n");
	assert_int_equal(vnfs_probes_for_each_missed_return(&tracefs->probes, stop_at_first, &calls),
			 7);
	assert_int_equal(calls, 1);
}

static void test_no_group_no_tracefs_nothing_to_count(void **state)
{
	struct scratch_tracefs *tracefs = *state;
	struct seen seen = { .calls = 0 };
	struct vnfs_probes without_tracefs = { .tracefs = NULL };

	write_profile(tracefs, "  nfs_file_read_5 1 1\n");
	assert_int_equal(vnfs_probes_for_each_missed_return(&tracefs->probes, note, &seen), 0);
	assert_int_equal(vnfs_probes_for_each_missed_return(&without_tracefs, note, &seen), 0);
	assert_int_equal(seen.calls, 0);
}

static void test_an_unreadable_profile_is_an_error(void **state)
{
	struct scratch_tracefs *tracefs = *state;
	struct seen seen = { .calls = 0 };

	make_event(tracefs, "vnfs", "nfs_file_read_5");
	assert_int_equal(vnfs_probes_for_each_missed_return(&tracefs->probes, note, &seen), -1);
	assert_int_equal(seen.calls, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_as_the_kernel_prints_them),
		cmocka_unit_test(test_lines_that_are_not_ours_or_not_whole),
		cmocka_unit_test_setup_teardown(test_only_the_groups_events_are_counted, make_tracefs,
						remove_tracefs),
		cmocka_unit_test_setup_teardown(test_a_nonzero_return_stops_the_walk, make_tracefs,
						remove_tracefs),
		cmocka_unit_test_setup_teardown(test_no_group_no_tracefs_nothing_to_count,
						make_tracefs, remove_tracefs),
		cmocka_unit_test_setup_teardown(test_an_unreadable_profile_is_an_error, make_tracefs,
						remove_tracefs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
