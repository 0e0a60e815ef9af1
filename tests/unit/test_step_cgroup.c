/*
 * test_step_cgroup.c — finding and making a step's cgroup (spank/step_cgroup.c):
 * the /proc parsers on real-world text, and the vnfs-owned directory life
 * cycle on a scratch directory standing in for the cgroup2 mount.
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

#include "lib/record.h"
#include "spank/step_cgroup.h"

static void test_cgroup2_mount(void **state)
{
	char mount_point[VNFS_CGROUP_PATH_MAX];

	(void)state;
	/* Hybrid host: v1 controllers plus cgroup2 on unified. */
	assert_int_equal(vnfs_cgroup2_mount_from_text(
				 "proc /proc proc rw 0 0\n"
				 "tmpfs /sys/fs/cgroup tmpfs rw,mode=755 0 0\n"
				 "cgroup /sys/fs/cgroup/cpu cgroup rw,cpu 0 0\n"
				 "cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n",
				 mount_point, sizeof(mount_point)),
			 0);
	assert_string_equal(mount_point, "/sys/fs/cgroup/unified");
	/* Pure v2, last line without a newline. */
	assert_int_equal(vnfs_cgroup2_mount_from_text(
				 "sysfs /sys sysfs rw 0 0\n"
				 "cgroup2 /sys/fs/cgroup cgroup2 rw,nsdelegate 0 0",
				 mount_point, sizeof(mount_point)),
			 0);
	assert_string_equal(mount_point, "/sys/fs/cgroup");
	/* Escaped space in the mount point. */
	assert_int_equal(vnfs_cgroup2_mount_from_text("none /run/my\\040cg cgroup2 rw 0 0\n",
						      mount_point, sizeof(mount_point)),
			 0);
	assert_string_equal(mount_point, "/run/my cg");
	/* Only v1: none. */
	assert_int_equal(vnfs_cgroup2_mount_from_text(
				 "cgroup /sys/fs/cgroup/cpu cgroup rw,cpu 0 0\n", mount_point,
				 sizeof(mount_point)),
			 -1);
	assert_int_equal(vnfs_cgroup2_mount_from_text("", mount_point, sizeof(mount_point)), -1);
	/* Too small a buffer is a failure, not a cut path. */
	assert_int_equal(vnfs_cgroup2_mount_from_text("cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n",
						      mount_point, 5),
			 -1);
}

static void test_v2_path(void **state)
{
	char path[VNFS_CGROUP_PATH_MAX];
	bool hybrid = true;

	(void)state;
	assert_int_equal(vnfs_cgroup_v2_path_from_text(
				 "0::/system.slice/localhost_slurmstepd.scope/job_3/step_0/user/"
				 "task_0\n",
				 path, sizeof(path), &hybrid),
			 0);
	assert_string_equal(path,
			    "/system.slice/localhost_slurmstepd.scope/job_3/step_0/user/task_0");
	assert_false(hybrid);

	assert_int_equal(vnfs_cgroup_v2_path_from_text(
				 "9:name=systemd:/\n4:memory:/slurm_localhost/uid_0/job_1/step_0\n"
				 "1:cpu:/\n0::/\n",
				 path, sizeof(path), &hybrid),
			 0);
	assert_string_equal(path, "/");
	assert_true(hybrid);

	assert_int_equal(vnfs_cgroup_v2_path_from_text("4:memory:/x\n", path, sizeof(path),
						       &hybrid),
			 -1);
	assert_true(hybrid);
	assert_int_equal(vnfs_cgroup_v2_path_from_text("0::/a/b/c\n", path, 5, &hybrid), -1);
}

static void test_slurm_step_prefix(void **state)
{
	char prefix[VNFS_CGROUP_PATH_MAX];

	(void)state;
	assert_int_equal(vnfs_slurm_step_prefix(
				 "/system.slice/localhost_slurmstepd.scope/job_3/step_0/user/task_0",
				 3, "0", prefix, sizeof(prefix)),
			 0);
	assert_string_equal(prefix, "/system.slice/localhost_slurmstepd.scope/job_3/step_0");
	assert_int_equal(vnfs_slurm_step_prefix("/s.scope/job_12/step_batch/slurm", 12, "batch",
						prefix, sizeof(prefix)),
			 0);
	assert_string_equal(prefix, "/s.scope/job_12/step_batch");
	assert_int_equal(vnfs_slurm_step_prefix("/s.scope/job_12/step_extern", 12, "extern",
						prefix, sizeof(prefix)),
			 0);
	assert_string_equal(prefix, "/s.scope/job_12/step_extern");
	/* job_1 must not match job_12, step_1 not step_10. */
	assert_int_equal(vnfs_slurm_step_prefix("/s.scope/job_12/step_0", 1, "0", prefix,
						sizeof(prefix)),
			 -1);
	assert_int_equal(vnfs_slurm_step_prefix("/s.scope/job_1/step_10/user", 1, "1", prefix,
						sizeof(prefix)),
			 -1);
	assert_int_equal(vnfs_slurm_step_prefix("/s.scope/xjob_1/step_1", 1, "1", prefix,
						sizeof(prefix)),
			 -1);
	assert_int_equal(vnfs_slurm_step_prefix("/", 1, "0", prefix, sizeof(prefix)), -1);
	assert_int_equal(vnfs_slurm_step_prefix("/job_3/step_0", 3, "0", prefix, 5), -1);
}

/* A scratch directory plays the cgroup2 mount for the directory life cycle. */
static void test_owned_directory_life_cycle(void **state)
{
	char root[] = "/tmp/vnfs-test-cgroup-XXXXXX", path[1024], error[768];
	struct vnfs_step_cgroup cgroup, second;
	struct stat status;

	(void)state;
	assert_non_null(mkdtemp(root));
	/* No task to move (the extern step): only the directory is made. */
	assert_int_equal(vnfs_step_cgroup_place(VNFS_CGROUP_VNFS, root, 0, 42, VNFS_STEP_BATCH,
						&cgroup, error, sizeof(error)),
			 0);
	assert_string_equal(cgroup.root, root);
	assert_string_equal(cgroup.relative, "/vnfs/job_42/step_batch");
	assert_true(cgroup.owned);
	snprintf(path, sizeof(path), "%s/vnfs/job_42/step_batch", root);
	assert_int_equal(stat(path, &status), 0);
	assert_true(S_ISDIR(status.st_mode));
	assert_int_equal(cgroup.id, (uint64_t)status.st_ino);

	/* A second step of the job shares the job directory. */
	assert_int_equal(vnfs_step_cgroup_place(VNFS_CGROUP_VNFS, root, 0, 42, 0, &second, error,
						sizeof(error)),
			 0);
	assert_string_equal(second.relative, "/vnfs/job_42/step_0");
	assert_int_not_equal(second.id, cgroup.id);

	/* Placing again is idempotent (every task of a step calls it). */
	assert_int_equal(vnfs_step_cgroup_place(VNFS_CGROUP_VNFS, root, 0, 42, 0, &second, error,
						sizeof(error)),
			 0);

	assert_int_equal(vnfs_step_cgroup_remove(&cgroup, 100, error, sizeof(error)), 0);
	assert_int_equal(stat(path, &status), -1);
	snprintf(path, sizeof(path), "%s/vnfs/job_42", root);
	assert_int_equal(stat(path, &status), 0); /* step_0 still there */
	assert_int_equal(vnfs_step_cgroup_remove(&second, 100, error, sizeof(error)), 0);
	assert_int_equal(stat(path, &status), -1);
	/* Removing twice is fine: the step is gone either way. */
	assert_int_equal(vnfs_step_cgroup_remove(&second, 100, error, sizeof(error)), 0);

	/* A non-empty step directory (a plain directory never empties itself). */
	assert_int_equal(vnfs_step_cgroup_place(VNFS_CGROUP_VNFS, root, 0, 7, 1, &cgroup, error,
						sizeof(error)),
			 0);
	snprintf(path, sizeof(path), "%s/vnfs/job_7/step_1/leftover", root);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(vnfs_step_cgroup_remove(&cgroup, 30, error, sizeof(error)), -1);
	snprintf(path, sizeof(path), "cannot remove %s/vnfs/job_7/step_1: Directory not empty",
		 root);
	assert_string_equal(error, path);
	snprintf(path, sizeof(path), "%s/vnfs/job_7/step_1/leftover", root);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(vnfs_step_cgroup_remove(&cgroup, 30, error, sizeof(error)), 0);

	snprintf(path, sizeof(path), "%s/vnfs", root);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(rmdir(root), 0);
}

static void test_moving_into_a_plain_directory_fails_clearly(void **state)
{
	char root[] = "/tmp/vnfs-test-cgroup-XXXXXX", path[1024], error[768], expected[1024];
	struct vnfs_step_cgroup cgroup;

	(void)state;
	assert_non_null(mkdtemp(root));
	/* No cgroup.procs in a plain directory: the move must fail, with the path. */
	assert_int_equal(vnfs_step_cgroup_place(VNFS_CGROUP_VNFS, root, getpid(), 5, 0, &cgroup,
						error, sizeof(error)),
			 -1);
	snprintf(expected, sizeof(expected),
		 "cannot move task %d into %s/vnfs/job_5/step_0/cgroup.procs: "
		 "No such file or directory",
		 (int)getpid(), root);
	assert_string_equal(error, expected);
	snprintf(path, sizeof(path), "%s/vnfs/job_5/step_0", root);
	assert_int_equal(rmdir(path), 0);
	snprintf(path, sizeof(path), "%s/vnfs/job_5", root);
	assert_int_equal(rmdir(path), 0);
	snprintf(path, sizeof(path), "%s/vnfs", root);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(rmdir(root), 0);
}

static void test_slurm_mode_outside_a_slurm_step(void **state)
{
	char error[768], path[VNFS_CGROUP_PATH_MAX], text[4096];
	struct vnfs_step_cgroup cgroup;
	bool hybrid;
	FILE *file;
	size_t length;

	(void)state;
	/* This test process is in no job_9/step_0 directory. */
	assert_int_equal(vnfs_step_cgroup_place(VNFS_CGROUP_SLURM, "/tmp", getpid(), 9, 0,
						&cgroup, error, sizeof(error)),
			 -1);
	file = fopen("/proc/self/cgroup", "r");
	assert_non_null(file);
	length = fread(text, 1, sizeof(text) - 1, file);
	fclose(file);
	text[length] = '\0';
	if (vnfs_cgroup_v2_path_from_text(text, path, sizeof(path), &hybrid) < 0) {
		char expected[64];

		snprintf(expected, sizeof(expected), "/proc/%d/cgroup has no cgroup v2 line",
			 (int)getpid());
		assert_string_equal(error, expected);
	} else {
		char expected[1024];

		snprintf(expected, sizeof(expected),
			 "cgroup=slurm, but the task is not in a Slurm cgroup v2 step directory "
			 "(.../job_9/step_0; its cgroup: %s%s)",
			 path, hybrid ? ", cgroup v1 in use" : "");
		assert_string_equal(error, expected);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cgroup2_mount),
		cmocka_unit_test(test_v2_path),
		cmocka_unit_test(test_slurm_step_prefix),
		cmocka_unit_test(test_owned_directory_life_cycle),
		cmocka_unit_test(test_moving_into_a_plain_directory_fails_clearly),
		cmocka_unit_test(test_slurm_mode_outside_a_slurm_step),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
