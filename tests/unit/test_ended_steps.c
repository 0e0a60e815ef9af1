/*
 * test_ended_steps.c — ended steps kept out of their slots: a step kept is
 * read back whole by a new helper from STATE_DIR/ended, a finished job's
 * steps and files go, a file that cannot be read is left in place and the
 * rest still load, the bounds hold, and a directory others can write is
 * refused.  Real files in a temporary directory.
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

#include "workload_fixtures.h"
#include "helper/steps/ended_steps.h"
#include "lib/log.h"

struct fixture {
	char state_dir[64];
	struct vnfs_step_stats stats;
	struct vnfs_process_record process;
	struct vnfs_mount_record mount;
};

static int setup(void **state)
{
	struct fixture *fixture = calloc(1, sizeof(*fixture));

	if (fixture == NULL)
		return -1;
	snprintf(fixture->state_dir, sizeof(fixture->state_dir), "/tmp/vnfs-ended-XXXXXX");
	if (mkdtemp(fixture->state_dir) == NULL)
		return -1;
	fixture->stats.operations[VNFS_OP_WRITE].count = 8;
	fixture->stats.operations[VNFS_OP_WRITE].bytes = 8388608;
	snprintf(fixture->process.comm, sizeof(fixture->process.comm), "trainer");
	fixture->process.stats.write_ops = 8;
	fixture->process.stats.write_bytes = 8388608;
	fixture->mount.device = 53;
	snprintf(fixture->mount.mount_point, sizeof(fixture->mount.mount_point), "/mnt/nfs");
	snprintf(fixture->mount.source, sizeof(fixture->mount.source), "server:/export");
	snprintf(fixture->mount.version, sizeof(fixture->mount.version), "4.2");
	fixture->mount.stats.ops = 8;
	fixture->mount.stats.write_bytes = 8388608;
	*state = fixture;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fixture = *state;
	char command[128];

	snprintf(command, sizeof(command), "rm -rf %s", fixture->state_dir);
	if (system(command) != 0)
		return -1;
	free(fixture);
	return 0;
}

static struct vnfs_step_record step(const struct fixture *fixture, uint32_t job_id,
				    uint32_t step_id, uint32_t uid)
{
	struct vnfs_step_record record = {
		.uid = uid,
		.cgroup_id = 4242,
		.start_time_ms = 1700000000000,
		.end_time_ms = 1700000060000,
		.sample_time_ms = 1700000061000,
		.stats = &fixture->stats,
		.process_count = 1,
		.processes = &fixture->process,
		.mount_count = 1,
		.mounts = &fixture->mount,
	};

	vnfs_record_identify_slurm(&record, job_id, step_id);
	snprintf(record.user, sizeof(record.user), "alice");
	snprintf(record.node, sizeof(record.node), "node1");
	snprintf(record.cgroup_path, sizeof(record.cgroup_path), "/sys/fs/cgroup/job%u", job_id);
	return record;
}

static bool file_exists(const struct fixture *fixture, const char *name)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/ended/%s", fixture->state_dir, name);
	return access(path, F_OK) == 0;
}

static void test_kept_step_is_read_back_whole(void **state)
{
	struct fixture *fixture = *state;
	struct vnfs_ended_steps ended, restarted;
	struct vnfs_step_record record = step(fixture, 42, 3, 1000);
	char error[512];

	assert_int_equal(vnfs_ended_steps_open(&ended, fixture->state_dir, error, sizeof(error)), 0);
	assert_int_equal(vnfs_ended_steps_add(&ended, &record, error, sizeof(error)), 0);
	fixture->stats.operations[VNFS_OP_WRITE].count = 99; /* the kept copy is its own */
	assert_int_equal(ended.steps[0].stats->operations[VNFS_OP_WRITE].count, 8);
	assert_true(file_exists(fixture, "42.3.json"));
	vnfs_ended_steps_close(&ended);

	assert_int_equal(vnfs_ended_steps_open(&restarted, fixture->state_dir, error, sizeof(error)),
			 0);
	assert_int_equal(restarted.count, 1);
	const struct vnfs_step_record *back = &restarted.steps[0];
	assert_int_equal(back->job_id, 42);
	assert_int_equal(back->step_id, 3);
	assert_int_equal(back->uid, 1000);
	assert_string_equal(back->user, "alice");
	assert_string_equal(back->cgroup_path, "/sys/fs/cgroup/job42");
	assert_int_equal(back->end_time_ms, 1700000060000);
	assert_int_equal(back->stats->operations[VNFS_OP_WRITE].count, 8);
	assert_int_equal(back->stats->operations[VNFS_OP_WRITE].bytes, 8388608);
	assert_int_equal(back->process_count, 1);
	assert_string_equal(back->processes[0].comm, "trainer");
	assert_int_equal(back->processes[0].stats.write_bytes, 8388608);
	assert_int_equal(back->mount_count, 1);
	assert_string_equal(back->mounts[0].mount_point, "/mnt/nfs");
	assert_int_equal(back->mounts[0].stats.write_bytes, 8388608);
	vnfs_ended_steps_close(&restarted);
}

/* A Kubernetes container's kept step: a file named by numbers it owns
 * (never by its user-chosen names), read back as that container's. */
static void test_kubernetes_step_file(void **state)
{
	struct fixture *fixture = *state;
	struct vnfs_ended_steps ended, restarted;
	struct vnfs_step_record record = step(fixture, 0, 0, 1000);
	struct vnfs_workload container;
	char error[512];

	assert_int_equal(vnfs_workload_set(&container, VNFS_SOURCE_KUBERNETES, "ml/resnet-7f9c",
					   "trainer", error, sizeof(error)),
			 0);
	vnfs_record_identify(&record, &container);
	assert_int_equal(vnfs_ended_steps_open(&ended, fixture->state_dir, error, sizeof(error)), 0);
	assert_int_equal(vnfs_ended_steps_add(&ended, &record, error, sizeof(error)), 0);
	assert_true(file_exists(fixture, "kubernetes-4242-1700000000000.json"));
	vnfs_ended_steps_close(&ended);
	assert_int_equal(vnfs_ended_steps_open(&restarted, fixture->state_dir, error, sizeof(error)),
			 0);
	assert_int_equal(restarted.count, 1);
	assert_true(vnfs_workload_equal(&restarted.steps[0].workload, &container));
	assert_true(vnfs_ended_steps_has_job(&restarted, &container));
	assert_false(vnfs_ended_steps_has_job(&restarted, slurm_job(0)));
	assert_int_equal(vnfs_ended_steps_remove_job(&restarted, &container), 1);
	assert_false(file_exists(fixture, "kubernetes-4242-1700000000000.json"));
	vnfs_ended_steps_close(&restarted);
}

static void test_finished_job_takes_its_steps_and_files(void **state)
{
	struct fixture *fixture = *state;
	struct vnfs_ended_steps ended;
	char error[512];

	assert_int_equal(vnfs_ended_steps_open(&ended, fixture->state_dir, error, sizeof(error)), 0);
	for (uint32_t step_id = 0; step_id < 3; step_id++) {
		struct vnfs_step_record record = step(fixture, 42, step_id, 1000);
		assert_int_equal(vnfs_ended_steps_add(&ended, &record, error, sizeof(error)), 0);
	}
	struct vnfs_step_record other = step(fixture, 43, 0, 1001);
	assert_int_equal(vnfs_ended_steps_add(&ended, &other, error, sizeof(error)), 0);
	assert_true(vnfs_ended_steps_has_job(&ended, slurm_job(42)));
	assert_int_equal(vnfs_ended_steps_remove_job(&ended, slurm_job(42)), 3);
	assert_false(vnfs_ended_steps_has_job(&ended, slurm_job(42)));
	assert_int_equal(ended.count, 1);
	assert_int_equal(ended.steps[0].job_id, 43);
	assert_false(file_exists(fixture, "42.0.json"));
	assert_false(file_exists(fixture, "42.2.json"));
	assert_true(file_exists(fixture, "43.0.json"));
	vnfs_ended_steps_remove_step(&ended, slurm_step(43, 0));
	assert_int_equal(ended.count, 0);
	assert_false(file_exists(fixture, "43.0.json"));
	vnfs_ended_steps_close(&ended);
}

static void test_unreadable_file_is_left_and_the_rest_load(void **state)
{
	struct fixture *fixture = *state;
	struct vnfs_ended_steps ended;
	struct vnfs_step_record record = step(fixture, 7, 0, 1000);
	char error[512], path[160];
	FILE *file;

	assert_int_equal(vnfs_ended_steps_open(&ended, fixture->state_dir, error, sizeof(error)), 0);
	assert_int_equal(vnfs_ended_steps_add(&ended, &record, error, sizeof(error)), 0);
	vnfs_ended_steps_close(&ended);
	snprintf(path, sizeof(path), "%s/ended/8.0.json", fixture->state_dir);
	file = fopen(path, "w");
	assert_non_null(file);
	fputs("{\"job\": 8, \"step\": ", file); /* cut short by a crash */
	fclose(file);
	snprintf(path, sizeof(path), "%s/ended/9.0.json", fixture->state_dir);
	assert_int_equal(mkfifo(path, 0600), 0); /* never opened for long */

	assert_int_equal(vnfs_ended_steps_open(&ended, fixture->state_dir, error, sizeof(error)), 0);
	assert_int_equal(ended.count, 1);
	assert_int_equal(ended.steps[0].job_id, 7);
	assert_true(file_exists(fixture, "8.0.json"));
	assert_true(file_exists(fixture, "9.0.json"));
	vnfs_ended_steps_close(&ended);
}

static char logged[1024];

static void capture_log(enum vnfs_log_priority priority, const char *line)
{
	size_t length = strlen(logged);

	(void)priority;
	snprintf(logged + length, sizeof(logged) - length, "%s\n", line);
}

/* The file of Slurm's extern step has its number in its name; the log says
 * which step it is by name. */
static void test_extern_step_file_is_logged_by_name(void **state)
{
	struct fixture *fixture = *state;
	struct vnfs_ended_steps ended;
	char error[512], path[160], name[64];
	FILE *file;

	snprintf(name, sizeof(name), "12.%u.json", (unsigned)VNFS_STEP_EXTERN);
	snprintf(path, sizeof(path), "%s/ended", fixture->state_dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/ended/%s", fixture->state_dir, name);
	file = fopen(path, "w");
	assert_non_null(file);
	fputs("{", file);
	fclose(file);
	logged[0] = '\0';
	vnfs_log_set_sink(capture_log);
	assert_int_equal(vnfs_ended_steps_open(&ended, fixture->state_dir, error, sizeof(error)), 0);
	vnfs_log_set_sink(NULL);
	vnfs_ended_steps_close(&ended);
	assert_non_null(strstr(logged, name));
	if (!strstr(logged, "(job 12 step extern): not read back"))
		fail_msg("the extern step is not named in: %s", logged);
}

static void test_bounds_per_user_and_node(void **state)
{
	struct fixture *fixture = *state;
	struct vnfs_ended_steps ended;
	char error[512];

	/* In memory: the bounds, without thousands of files. */
	assert_int_equal(vnfs_ended_steps_open(&ended, NULL, error, sizeof(error)), 0);
	for (uint32_t i = 0; i < VNFS_ENDED_STEPS_PER_USER_MAX; i++) {
		struct vnfs_step_record record = step(fixture, 100, i, 1000);
		assert_int_equal(vnfs_ended_steps_add(&ended, &record, error, sizeof(error)), 0);
	}
	struct vnfs_step_record over = step(fixture, 100, 99999, 1000);
	assert_false(vnfs_ended_steps_has_room(&ended, 1000));
	assert_int_equal(vnfs_ended_steps_add(&ended, &over, error, sizeof(error)), -1);
	assert_string_equal(error, "no room for another ended step");
	for (uint32_t i = 0; i < VNFS_ENDED_STEPS_MAX - VNFS_ENDED_STEPS_PER_USER_MAX; i++) {
		struct vnfs_step_record record = step(fixture, 200, i, 1001);
		assert_int_equal(vnfs_ended_steps_add(&ended, &record, error, sizeof(error)), 0);
	}
	assert_int_equal(ended.count, VNFS_ENDED_STEPS_MAX);
	assert_false(vnfs_ended_steps_has_room(&ended, 1002));
	vnfs_ended_steps_close(&ended);
}

static void test_directory_others_can_write_is_refused(void **state)
{
	struct fixture *fixture = *state;
	struct vnfs_ended_steps ended;
	char error[512], path[160];

	snprintf(path, sizeof(path), "%s/ended", fixture->state_dir);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(chmod(path, 0777), 0);
	assert_int_equal(vnfs_ended_steps_open(&ended, fixture->state_dir, error, sizeof(error)),
			 -1);
	assert_non_null(strstr(error, "closed to others: refused"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_kept_step_is_read_back_whole, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kubernetes_step_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_finished_job_takes_its_steps_and_files, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_unreadable_file_is_left_and_the_rest_load, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_extern_step_file_is_logged_by_name, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bounds_per_user_and_node, setup, teardown),
		cmocka_unit_test_setup_teardown(test_directory_others_can_write_is_refused, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
