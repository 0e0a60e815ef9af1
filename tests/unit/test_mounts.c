/*
 * test_mounts.c — mountinfo parsing (NFS v3 and v4, escapes, non-NFS lines)
 * and device lookup through a real file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "helper/collect/mounts.h"

static const char *const v42_line =
	"41 27 0:53 / /mnt/nfs/v4.2 rw,relatime shared:30 - nfs4 127.0.0.1:/v4.2 "
	"rw,vers=4.2,rsize=1048576,wsize=1048576,namlen=255,hard,proto=tcp\n";
static const char *const v3_line =
	"42 27 0:54 / /mnt/with\\040space rw,relatime - nfs 127.0.0.1:/srv/export/v3 "
	"rw,vers=3,rsize=1048576,wsize=1048576,mountproto=tcp\n";

static void test_parses_nfs4_line(void **state)
{
	struct vnfs_mount_record record;

	(void)state;
	assert_int_equal(vnfs_mounts_parse_line(v42_line, &record), 0);
	assert_int_equal(record.device, (0u << 20) | 53u);
	assert_string_equal(record.mount_point, "/mnt/nfs/v4.2");
	assert_string_equal(record.source, "127.0.0.1:/v4.2");
	assert_string_equal(record.version, "4.2");
	assert_int_equal(record.rsize, 1048576);
	assert_int_equal(record.wsize, 1048576);
}

static void test_parses_nfs3_line_with_escaped_space(void **state)
{
	struct vnfs_mount_record record;

	(void)state;
	assert_int_equal(vnfs_mounts_parse_line(v3_line, &record), 0);
	assert_int_equal(record.device, 54u);
	assert_string_equal(record.mount_point, "/mnt/with space");
	assert_string_equal(record.source, "127.0.0.1:/srv/export/v3");
	assert_string_equal(record.version, "3");
}

static void test_ignores_other_filesystems_and_garbage(void **state)
{
	struct vnfs_mount_record record;

	(void)state;
	assert_int_equal(vnfs_mounts_parse_line("25 1 0:22 / /proc rw - proc proc rw\n", &record), -1);
	assert_int_equal(vnfs_mounts_parse_line("garbage", &record), -1);
	assert_int_equal(vnfs_mounts_parse_line("", &record), -1);
}

static void test_describe_reads_the_file_and_reports_unknown(void **state)
{
	char path[] = "/tmp/vnfs-mountinfo-XXXXXX";
	struct vnfs_mounts mounts;
	struct vnfs_mount_record record = { 0 };
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_true(write(fd, v42_line, strlen(v42_line)) == (ssize_t)strlen(v42_line));
	assert_true(write(fd, v3_line, strlen(v3_line)) == (ssize_t)strlen(v3_line));
	assert_int_equal(close(fd), 0);
	assert_int_equal(vnfs_mounts_init(&mounts, path), 0);

	record.device = 54;
	vnfs_mounts_describe(&mounts, &record, 1000);
	assert_string_equal(record.mount_point, "/mnt/with space");
	assert_string_equal(record.version, "3");

	record.device = 99;
	vnfs_mounts_describe(&mounts, &record, 1500);
	assert_string_equal(record.mount_point, "");
	assert_string_equal(record.source, "unknown");
	vnfs_mounts_destroy(&mounts);
	assert_int_equal(unlink(path), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parses_nfs4_line),
		cmocka_unit_test(test_parses_nfs3_line_with_escaped_space),
		cmocka_unit_test(test_ignores_other_filesystems_and_garbage),
		cmocka_unit_test(test_describe_reads_the_file_and_reports_unknown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
