/*
 * test_log.c — lib/log.c: the threshold, the sink override, escaped user
 * bytes, and the stderr line format (plain, and with the journal's "<N>"
 * level prefix).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/log.h"

static char captured[8][256];
static enum vnfs_log_priority captured_priority[8];
static int captured_count;

static void capture(enum vnfs_log_priority priority, const char *line)
{
	if (captured_count < 8) {
		captured_priority[captured_count] = priority;
		snprintf(captured[captured_count], sizeof(captured[0]), "%s", line);
	}
	captured_count++;
}

static void test_threshold_and_sink(void **state)
{
	(void)state;
	captured_count = 0;
	vnfs_log_setup("test", VNFS_LOG_PRIORITY_WARNING, 0);
	vnfs_log_set_sink(capture);
	vnfs_error("disk %s is %d%% full", "sda", 99);
	vnfs_warning("slow");
	vnfs_info("dropped");
	vnfs_debug("dropped too");
	vnfs_log_set_sink(NULL);
	assert_int_equal(captured_count, 2);
	assert_string_equal(captured[0], "disk sda is 99% full");
	assert_int_equal(captured_priority[0], VNFS_LOG_PRIORITY_ERROR);
	assert_string_equal(captured[1], "slow");
	assert_int_equal(captured_priority[1], VNFS_LOG_PRIORITY_WARNING);

	captured_count = 0;
	vnfs_log_setup("test", VNFS_LOG_PRIORITY_DEBUG, 0);
	vnfs_log_set_sink(capture);
	vnfs_debug("now %s", "shown");
	vnfs_log_set_sink(NULL);
	assert_int_equal(captured_count, 1);
	assert_string_equal(captured[0], "now shown");
}

/* User bytes in a line: a newline cannot forge a second line, nor ESC or
 * invalid UTF-8 reach a terminal; printable UTF-8 and backslashes stay. */
static void test_lines_escaped(void **state)
{
	(void)state;
	captured_count = 0;
	vnfs_log_setup("test", VNFS_LOG_PRIORITY_INFO, 0);
	vnfs_log_set_sink(capture);
	vnfs_error("tag %s from %s", "A=1\nvnfs-helper: error: forged",
		   "\x1b[2J\xff\xc3 \\x41 \xc3\xa9\t\x7f");
	vnfs_log_set_sink(NULL);
	assert_int_equal(captured_count, 1);
	assert_string_equal(captured[0], "tag A=1\\x0avnfs-helper: error: forged from "
					 "\\x1b[2J\\xff\\xc3 \\x41 \xc3\xa9\\x09\\x7f");
}

static char long_line[VNFS_LOG_LINE_MAX * 2];

static void capture_long(enum vnfs_log_priority priority, const char *line)
{
	(void)priority;
	snprintf(long_line, sizeof(long_line), "%s", line);
}

/* A line too long for the log is cut, and says so at its end; one that
 * just fits is whole. */
static void test_long_line_marked_cut(void **state)
{
	char text[VNFS_LOG_LINE_MAX + 100];
	size_t mark = strlen(VNFS_LOG_CUT_MARK);

	(void)state;
	memset(text, 'a', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\0';
	vnfs_log_setup("test", VNFS_LOG_PRIORITY_INFO, 0);
	vnfs_log_set_sink(capture_long);
	vnfs_error("%s", text);
	assert_int_equal(strlen(long_line), VNFS_LOG_LINE_MAX - 1);
	assert_string_equal(long_line + VNFS_LOG_LINE_MAX - 1 - mark, VNFS_LOG_CUT_MARK);
	assert_int_equal(long_line[VNFS_LOG_LINE_MAX - 2 - mark], 'a');

	text[VNFS_LOG_LINE_MAX - 1] = '\0';
	vnfs_error("%s", text);
	vnfs_log_set_sink(NULL);
	assert_string_equal(long_line, text);
}

/*
 * Logs two lines with stderr redirected into a pipe and returns what came
 * out.  journal: "match" sets JOURNAL_STREAM to the pipe itself (as systemd
 * does for the journal's stream), another value sets it verbatim.
 */
static void stderr_lines(const char *journal, char *out, size_t size)
{
	int pipe_fds[2], saved = dup(STDERR_FILENO);
	struct stat status;
	char stream[64];
	ssize_t length;

	assert_int_equal(pipe(pipe_fds), 0);
	assert_true(saved >= 0);
	fflush(stderr);
	assert_int_equal(dup2(pipe_fds[1], STDERR_FILENO), STDERR_FILENO);
	assert_int_equal(fstat(STDERR_FILENO, &status), 0);
	snprintf(stream, sizeof(stream), "%llu:%llu", (unsigned long long)status.st_dev,
		 (unsigned long long)status.st_ino);
	if (journal == NULL)
		unsetenv("JOURNAL_STREAM");
	else
		setenv("JOURNAL_STREAM", strcmp(journal, "match") == 0 ? stream : journal, 1);
	vnfs_log_setup("vnfs-helper", VNFS_LOG_PRIORITY_INFO, 0);
	vnfs_info("ready on %s", "/run/vnfs/vnfs.sock");
	vnfs_warning("late");
	fflush(stderr);
	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	close(pipe_fds[1]);
	length = read(pipe_fds[0], out, size - 1);
	close(pipe_fds[0]);
	assert_true(length > 0);
	out[length] = '\0';
	unsetenv("JOURNAL_STREAM");
	vnfs_log_setup("test_log", VNFS_LOG_PRIORITY_INFO, 0);
}

static void test_stderr_format(void **state)
{
	const char *plain = "vnfs-helper: info: ready on /run/vnfs/vnfs.sock\n"
			    "vnfs-helper: warning: late\n";
	char text[512];

	(void)state;
	stderr_lines(NULL, text, sizeof(text));
	assert_string_equal(text, plain);
	/* stderr is the journal's stream: the journal reads the level. */
	stderr_lines("match", text, sizeof(text));
	assert_string_equal(text, "<6>ready on /run/vnfs/vnfs.sock\n<4>late\n");
	/* Inherited from a unit but redirected since: plain lines. */
	stderr_lines("8:1234", text, sizeof(text));
	assert_string_equal(text, plain);
	stderr_lines("garbage", text, sizeof(text));
	assert_string_equal(text, plain);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threshold_and_sink),
		cmocka_unit_test(test_lines_escaped),
		cmocka_unit_test(test_long_line_marked_cut),
		cmocka_unit_test(test_stderr_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
