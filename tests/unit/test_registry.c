/*
 * test_registry.c — slot allocation, release, reuse, full, idempotent
 * re-registration, and persistence across a restart (registry.json).
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

#include "helper/registry.h"

static struct vnfs_step make_step(uint32_t job, uint32_t step_id, uint64_t cgroup)
{
	struct vnfs_step step = { 0 };

	step.job_id = job;
	step.step_id = step_id;
	step.uid = 1000 + job;
	step.cgroup_id = cgroup;
	step.start_time_ms = 1700000000000;
	snprintf(step.cgroup_path, sizeof(step.cgroup_path), "/sys/fs/cgroup/job_%u/step_%u", job,
		 step_id);
	vnfs_tags_init(&step.tags);
	return step;
}

static struct vnfs_registry *new_registry(const char *state_dir)
{
	struct vnfs_registry *registry = malloc(sizeof(*registry));
	char error[256];

	assert_non_null(registry);
	assert_int_equal(vnfs_registry_init(registry, state_dir, error, sizeof(error)), 0);
	return registry;
}

static void free_registry(struct vnfs_registry *registry)
{
	vnfs_registry_destroy(registry);
	free(registry);
}

static void test_slots_are_lowest_free_first_and_reused(void **state)
{
	struct vnfs_registry *registry = new_registry(NULL);
	struct vnfs_step step;
	uint32_t slot;
	char error[256];

	(void)state;
	for (uint32_t i = 0; i < 3; i++) {
		step = make_step(42, i, 100 + i);
		assert_int_equal(vnfs_registry_add(registry, &step, &slot, error, sizeof(error)), 0);
		assert_int_equal(slot, i);
	}
	assert_int_equal(registry->used, 3);
	vnfs_registry_release(registry, 1);
	assert_int_equal(registry->used, 2);
	step = make_step(43, 0, 200);
	assert_int_equal(vnfs_registry_add(registry, &step, &slot, error, sizeof(error)), 0);
	assert_int_equal(slot, 1);
	assert_int_equal(registry->steps[1].job_id, 43);
	assert_int_equal(registry->steps[1].state, VNFS_STEP_RUNNING);
	free_registry(registry);
}

static void test_same_step_again_is_idempotent_other_cgroup_conflicts(void **state)
{
	struct vnfs_registry *registry = new_registry(NULL);
	struct vnfs_step step = make_step(42, 0, 100);
	uint32_t slot, again;
	char error[256];

	(void)state;
	assert_int_equal(vnfs_registry_add(registry, &step, &slot, error, sizeof(error)), 0);
	assert_int_equal(vnfs_registry_add(registry, &step, &again, error, sizeof(error)), 0);
	assert_int_equal(again, slot);
	assert_int_equal(registry->used, 1);
	step.cgroup_id = 101;
	assert_int_equal(vnfs_registry_add(registry, &step, &again, error, sizeof(error)), -1);
	assert_string_equal(error, "job 42 step 0 is already registered (cgroup 100, running)");
	free_registry(registry);
}

static void test_full_registry_refuses_with_message(void **state)
{
	struct vnfs_registry *registry = new_registry(NULL);
	struct vnfs_step step;
	uint32_t slot;
	char error[256];

	(void)state;
	for (uint32_t i = 0; i < VNFS_MAX_STEPS; i++) {
		step = make_step(i, 0, 1000 + i);
		assert_int_equal(vnfs_registry_add(registry, &step, &slot, error, sizeof(error)), 0);
		assert_int_equal(slot, i);
	}
	step = make_step(99999, 0, 5);
	assert_int_equal(vnfs_registry_add(registry, &step, &slot, error, sizeof(error)), -1);
	assert_string_equal(error, "no free slot: 1024 steps are registered on this node");
	vnfs_registry_release(registry, 17);
	assert_int_equal(vnfs_registry_add(registry, &step, &slot, error, sizeof(error)), 0);
	assert_int_equal(slot, 17);
	free_registry(registry);
}

static void test_end_and_finish_move_states(void **state)
{
	struct vnfs_registry *registry = new_registry(NULL);
	struct vnfs_step step;
	uint32_t slot;
	char error[256];

	(void)state;
	step = make_step(42, 0, 100);
	assert_int_equal(vnfs_registry_add(registry, &step, &slot, error, sizeof(error)), 0);
	step = make_step(42, 1, 101);
	assert_int_equal(vnfs_registry_add(registry, &step, &slot, error, sizeof(error)), 0);
	step = make_step(43, 0, 102);
	assert_int_equal(vnfs_registry_add(registry, &step, &slot, error, sizeof(error)), 0);

	assert_int_equal(vnfs_registry_end(registry, 42, 1, 5000), 1);
	assert_int_equal(registry->steps[1].state, VNFS_STEP_ENDED);
	assert_int_equal(registry->steps[1].end_time_ms, 5000);
	assert_int_equal(vnfs_registry_end(registry, 42, 7, 5000), -1);

	assert_int_equal(vnfs_registry_finish_job(registry, 42, 6000), 2);
	assert_int_equal(registry->steps[0].state, VNFS_STEP_FINISHED);
	assert_int_equal(registry->steps[0].end_time_ms, 6000);
	assert_int_equal(registry->steps[1].end_time_ms, 5000); /* its own end kept */
	assert_int_equal(registry->steps[2].state, VNFS_STEP_RUNNING);
	assert_int_equal(vnfs_registry_finish_job(registry, 44, 6000), 0);
	free_registry(registry);
}

static void test_persisted_registry_survives_restart(void **state)
{
	char directory[] = "/tmp/vnfs-registry-XXXXXX";
	struct vnfs_registry *registry, *restarted;
	struct vnfs_step step, copies[4];
	uint32_t slot, slots[4];
	char error[256], path[320];

	(void)state;
	assert_non_null(mkdtemp(directory));
	registry = new_registry(directory);
	step = make_step(42, 0, 100);
	assert_int_equal(vnfs_tags_set(&step.tags, "PROJECT_NAME", "alpha", error, sizeof(error)), 0);
	assert_int_equal(vnfs_registry_add(registry, &step, &slot, error, sizeof(error)), 0);
	step = make_step(43, 0xfffffffbu, 101);
	assert_int_equal(vnfs_registry_add(registry, &step, &slot, error, sizeof(error)), 0);
	assert_int_equal(vnfs_registry_end(registry, 43, 0xfffffffbu, 7000), 1);
	free_registry(registry);

	restarted = new_registry(directory);
	assert_int_equal(vnfs_registry_load(restarted, error, sizeof(error)), 0);
	assert_int_equal(vnfs_registry_snapshot(restarted, copies, slots, 4), 2);
	assert_int_equal(slots[0], 0);
	assert_int_equal(copies[0].job_id, 42);
	assert_int_equal(copies[0].uid, 1042);
	assert_true(copies[0].cgroup_id == 100);
	assert_string_equal(copies[0].cgroup_path, "/sys/fs/cgroup/job_42/step_0");
	assert_string_equal(vnfs_tags_find(&copies[0].tags, "PROJECT_NAME"), "alpha");
	assert_int_equal(copies[0].state, VNFS_STEP_RUNNING);
	assert_int_equal(slots[1], 1);
	assert_int_equal(copies[1].step_id, 0xfffffffbu);
	assert_int_equal(copies[1].state, VNFS_STEP_ENDED);
	assert_int_equal(copies[1].end_time_ms, 7000);
	free_registry(restarted);

	snprintf(path, sizeof(path), "%s/registry.json", directory);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(directory), 0);
}

static void test_corrupt_registry_file_is_reported(void **state)
{
	char directory[] = "/tmp/vnfs-registry-XXXXXX";
	struct vnfs_registry *registry;
	char error[256], path[320];
	FILE *file;

	(void)state;
	assert_non_null(mkdtemp(directory));
	snprintf(path, sizeof(path), "%s/registry.json", directory);
	file = fopen(path, "w");
	assert_non_null(file);
	fputs("{\"not\": \"an array\"", file);
	fclose(file);
	registry = new_registry(directory);
	assert_int_equal(vnfs_registry_load(registry, error, sizeof(error)), -1);
	assert_non_null(strstr(error, "is not a JSON array of steps: starting empty"));
	assert_int_equal(registry->used, 0);
	free_registry(registry);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(directory), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slots_are_lowest_free_first_and_reused),
		cmocka_unit_test(test_same_step_again_is_idempotent_other_cgroup_conflicts),
		cmocka_unit_test(test_full_registry_refuses_with_message),
		cmocka_unit_test(test_end_and_finish_move_states),
		cmocka_unit_test(test_persisted_registry_survives_restart),
		cmocka_unit_test(test_corrupt_registry_file_is_reported),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
