/*
 * test_registry.c — slot allocation, release, reuse, full, idempotent
 * re-registration, the per-job and per-user step limits, and persistence in
 * real files under a temp directory: a restart, a kill -9 (a forked child
 * kills itself), one appended line per change, compaction (one whole file,
 * no temporary left), a tail cut short, corrupt lines, a failed write, and
 * the migration of an older helper's registry.json.
 */
#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "workload_fixtures.h"
#include "helper/steps/registry.h"
#include "lib/log.h"

static struct vnfs_step make_step(uint32_t job, uint32_t step_id, uint64_t cgroup)
{
	struct vnfs_step step = { 0 };

	vnfs_workload_of_slurm_step(&step.workload, job, step_id);
	step.uid = 1000 + job;
	step.cgroup_id = cgroup;
	step.start_time_ms = 1700000000000;
	snprintf(step.cgroup_path, sizeof(step.cgroup_path), "/sys/fs/cgroup/job_%u/step_%u", job,
		 step_id);
	vnfs_tags_init(&step.tags);
	return step;
}

/* The step in slot, as the registry gives it out. */
static struct vnfs_step slot_step(struct vnfs_registry *registry, uint32_t slot)
{
	struct vnfs_step step;

	vnfs_registry_get(registry, slot, &step);
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
	step = slot_step(registry, 1);
	assert_slurm_job_id(&step.workload, 43);
	assert_int_equal(slot_step(registry, 1).state, VNFS_STEP_RUNNING);
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

/* A container that restarted (Kubernetes gives it a new cgroup, the same
 * pod and name) runs again in its slot; a Slurm step, another owner, or a
 * container still running in its first cgroup does not. */
static void test_restarted_container_runs_again(void **state)
{
	struct vnfs_registry *registry = new_registry(NULL);
	struct vnfs_step step = make_step(42, 0, 100), slurm = make_step(43, 0, 300);
	uint32_t slot, again;
	char error[256];

	(void)state;
	assert_int_equal(vnfs_workload_set(&step.workload, VNFS_SOURCE_KUBERNETES, "ml/resnet-7f9c",
					   "trainer", error, sizeof(error)),
			 0);
	assert_int_equal(vnfs_registry_add(registry, &step, &slot, error, sizeof(error)), 0);
	step.cgroup_id = 101;
	assert_int_equal(vnfs_registry_add(registry, &step, &again, error, sizeof(error)), -1);
	assert_string_equal(error, "kubernetes pod ml/resnet-7f9c container trainer is already "
				   "registered (cgroup 100, running)");
	assert_int_equal(vnfs_registry_end(registry, &step.workload, 1700000005000), (int)slot);
	step.uid++;
	assert_int_equal(vnfs_registry_add(registry, &step, &again, error, sizeof(error)), -1);
	step.uid--;
	snprintf(step.cgroup_path, sizeof(step.cgroup_path), "/kubepods/besteffort/pod1/c2");
	assert_int_equal(vnfs_registry_add(registry, &step, &again, error, sizeof(error)), 1);
	assert_int_equal(again, slot);
	assert_int_equal(registry->used, 1);
	assert_int_equal(slot_step(registry, slot).state, VNFS_STEP_RUNNING);
	assert_int_equal(slot_step(registry, slot).cgroup_id, 101);
	assert_string_equal(slot_step(registry, slot).cgroup_path, "/kubepods/besteffort/pod1/c2");
	assert_int_equal(slot_step(registry, slot).end_time_ms, 0);
	assert_int_equal(slot_step(registry, slot).start_time_ms, 1700000000000);

	assert_int_equal(vnfs_registry_add(registry, &slurm, &slot, error, sizeof(error)), 0);
	assert_int_equal(vnfs_registry_end(registry, &slurm.workload, 1700000005000), (int)slot);
	slurm.cgroup_id = 301;
	assert_int_equal(vnfs_registry_add(registry, &slurm, &again, error, sizeof(error)), -1);
	assert_string_equal(error, "job 43 step 0 is already registered (cgroup 300, ended)");
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

/* Registers steps first..first+count-1 of job for uid: each must succeed. */
static void add_steps(struct vnfs_registry *registry, uint32_t job, uint32_t uid, uint32_t first,
		      uint32_t count)
{
	struct vnfs_step step;
	uint32_t slot;
	char error[256];

	for (uint32_t i = first; i < first + count; i++) {
		step = make_step(job, i, (uint64_t)job * 10000 + i);
		step.uid = uid;
		assert_int_equal(vnfs_registry_add(registry, &step, &slot, error, sizeof(error)), 0);
	}
}

/* One more step of job for uid: refused with message, nothing changed. */
static void assert_refused(struct vnfs_registry *registry, uint32_t job, uint32_t uid,
			   uint32_t step_id, const char *message)
{
	struct vnfs_step step = make_step(job, step_id, (uint64_t)job * 10000 + step_id);
	uint32_t used = registry->used, slot = 12345;
	char error[256];

	step.uid = uid;
	assert_int_equal(vnfs_registry_add(registry, &step, &slot, error, sizeof(error)), -1);
	assert_string_equal(error, message);
	assert_int_equal(slot, 12345);
	assert_int_equal(registry->used, used);
}

/* Issue 13: one job of ~1,100 sruns took all 1,024 slots.  256 steps of a
 * job are accepted, ended ones still count, the 257th is refused; another
 * user's job still registers; a released ended step makes room again. */
static void test_steps_per_job_are_limited(void **state)
{
	struct vnfs_registry *registry = new_registry(NULL);
	struct vnfs_step step;
	uint32_t slot;
	char error[256];

	(void)state;
	assert_int_equal(registry->max_steps_per_job, 256);
	assert_int_equal(registry->max_steps_per_user, 512);
	add_steps(registry, 42, 1042, 0, 256);
	assert_int_equal(registry->used, 256);
	for (uint32_t i = 0; i < 100; i++)
		assert_int_equal(vnfs_registry_end(registry, slurm_step(42, i), 5000), (int)i);
	assert_refused(registry, 42, 1042, 256,
		       "job 42 already holds 256 steps on this node (max_steps_per_job)");
	/* A retried REGISTER of a running step is not a new step. */
	step = make_step(42, 200, 42 * 10000 + 200);
	step.uid = 1042;
	assert_int_equal(vnfs_registry_add(registry, &step, &slot, error, sizeof(error)), 0);
	assert_int_equal(slot, 200);

	step = make_step(43, 0, 999);
	assert_int_equal(vnfs_registry_add(registry, &step, &slot, error, sizeof(error)), 0);
	assert_int_equal(slot, 256);
	assert_int_equal(registry->used, 257);

	/* Only an ended step of that {job, step} is released early. */
	assert_int_equal(vnfs_registry_release_ended(registry, 200, slurm_step(42, 200)), -1); /* running */
	assert_int_equal(vnfs_registry_release_ended(registry, 7, slurm_step(42, 8)), -1);     /* other step */
	assert_int_equal(vnfs_registry_release_ended(registry, VNFS_MAX_STEPS, slurm_step(42, 7)), -1);
	assert_int_equal(registry->used, 257);
	assert_int_equal(vnfs_registry_release_ended(registry, 7, slurm_step(42, 7)), 0);
	assert_int_equal(slot_step(registry, 7).state, VNFS_STEP_FREE);
	assert_int_equal(registry->used, 256);
	add_steps(registry, 42, 1042, 256, 1);
	assert_string_equal(slot_step(registry, 7).workload.part, "256");
	assert_refused(registry, 42, 1042, 257,
		       "job 42 already holds 256 steps on this node (max_steps_per_job)");

	/* Finished steps wait only for their final read: they hold no place. */
	assert_int_equal(vnfs_registry_finish_job(registry, slurm_job(42), 6000), 256);
	add_steps(registry, 42, 1042, 1000, 1);
	free_registry(registry);
}

/* 512 steps of one uid over two jobs are accepted, the 513th is refused;
 * another uid still registers.  vnfs_registry_set_limits lowers both. */
static void test_steps_per_user_are_limited(void **state)
{
	struct vnfs_registry *registry = new_registry(NULL);

	(void)state;
	add_steps(registry, 50, 5000, 0, 256);
	add_steps(registry, 51, 5000, 0, 256);
	assert_int_equal(registry->used, 512);
	assert_refused(registry, 52, 5000, 0,
		       "user 5000 already holds 512 steps on this node (max_steps_per_user)");
	add_steps(registry, 53, 6000, 0, 1);
	assert_int_equal(registry->used, 513);

	vnfs_registry_set_limits(registry, 2, 0); /* 0: the user limit stays */
	assert_int_equal(registry->max_steps_per_job, 2);
	assert_int_equal(registry->max_steps_per_user, 512);
	add_steps(registry, 53, 6000, 1, 1);
	assert_refused(registry, 53, 6000, 2,
		       "job 53 already holds 2 steps on this node (max_steps_per_job)");
	vnfs_registry_set_limits(registry, 10, 3);
	add_steps(registry, 54, 6000, 0, 1);
	assert_refused(registry, 55, 6000, 0,
		       "user 6000 already holds 3 steps on this node (max_steps_per_user)");
	assert_int_equal(registry->used, 515);
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

	assert_int_equal(vnfs_registry_end(registry, slurm_step(42, 1), 5000), 1);
	assert_int_equal(slot_step(registry, 1).state, VNFS_STEP_ENDED);
	assert_int_equal(slot_step(registry, 1).end_time_ms, 5000);
	assert_int_equal(vnfs_registry_end(registry, slurm_step(42, 7), 5000), -1);

	assert_int_equal(vnfs_registry_finish_job(registry, slurm_job(42), 6000), 2);
	assert_int_equal(slot_step(registry, 0).state, VNFS_STEP_FINISHED);
	assert_int_equal(slot_step(registry, 0).end_time_ms, 6000);
	assert_int_equal(slot_step(registry, 1).end_time_ms, 5000); /* its own end kept */
	assert_int_equal(slot_step(registry, 2).state, VNFS_STEP_RUNNING);
	assert_int_equal(vnfs_registry_finish_job(registry, slurm_job(44), 6000), 0);
	free_registry(registry);
}

/* ---- persistence ------------------------------------------------------ */

/* Log lines, captured: the registry reports what it drops only there. */
static char logged[8][1024];
static unsigned logged_count;

static void capture_log(enum vnfs_log_priority priority, const char *line)
{
	(void)priority;
	if (logged_count < 8)
		snprintf(logged[logged_count], sizeof(logged[0]), "%s", line);
	logged_count++;
}

static void start_capturing_log(void)
{
	logged_count = 0;
	vnfs_log_set_sink(capture_log);
}

static void make_directory(char *directory)
{
	strcpy(directory, "/tmp/vnfs-registry-XXXXXX");
	assert_non_null(mkdtemp(directory));
}

static void remove_directory(const char *directory)
{
	DIR *listing = opendir(directory);
	struct dirent *entry;
	char path[600];

	assert_non_null(listing);
	while ((entry = readdir(listing)) != NULL) {
		if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", directory, entry->d_name);
		assert_int_equal(unlink(path), 0);
	}
	closedir(listing);
	assert_int_equal(rmdir(directory), 0);
}

static void state_file(char *path, size_t size, const char *directory, const char *name)
{
	snprintf(path, size, "%s/%s", directory, name);
}

/* The whole file, NUL-terminated (freed by the caller). */
static char *read_text(const char *path)
{
	FILE *file = fopen(path, "r");
	char *text;
	long length;

	assert_non_null(file);
	assert_int_equal(fseek(file, 0, SEEK_END), 0);
	length = ftell(file);
	assert_true(length >= 0);
	rewind(file);
	text = malloc((size_t)length + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)length, file), (size_t)length);
	text[length] = '\0';
	fclose(file);
	return text;
}

static void write_text(const char *path, const char *text, const char *mode)
{
	FILE *file = fopen(path, mode);

	assert_non_null(file);
	assert_int_equal(fputs(text, file) >= 0, 1);
	assert_int_equal(fclose(file), 0);
}

static unsigned count_lines(const char *path)
{
	char *text = read_text(path);
	unsigned lines = 0;

	for (char *c = text; *c; c++)
		lines += *c == '\n';
	free(text);
	return lines;
}

/* A fresh registry on directory, loaded as the helper does at start. */
static struct vnfs_registry *open_registry(const char *directory)
{
	struct vnfs_registry *registry = new_registry(directory);
	char error[256];

	assert_int_equal(vnfs_registry_load(registry, error, sizeof(error)), 0);
	return registry;
}

static void add_tagged_step(struct vnfs_registry *registry, uint32_t job, uint32_t step_id,
			    uint32_t expected_slot)
{
	struct vnfs_step step = make_step(job, step_id, 10000 + job * 100 + step_id);
	char error[256], value[32];
	uint32_t slot;

	snprintf(value, sizeof(value), "p%u-%u", job, step_id);
	assert_int_equal(vnfs_tags_set(&step.tags, "PROJECT_NAME", value, error, sizeof(error)), 0);
	assert_int_equal(vnfs_registry_add(registry, &step, &slot, error, sizeof(error)), 0);
	assert_int_equal(slot, expected_slot);
}

/* A step at every bound: the longest job, part and cgroup path, and tags
 * filling their whole buffer. */
static struct vnfs_step largest_step(void)
{
	struct vnfs_step step = make_step(1, 0, 77);
	char name[VNFS_TAG_NAME_MAX + 1], value[VNFS_TAG_VALUE_MAX + 1], error[256];

	char job[VNFS_WORKLOAD_JOB_MAX] = { 0 }, part[VNFS_WORKLOAD_PART_MAX] = { 0 };

	memset(job, 'j', sizeof(job) - 1);
	memset(part, 'p', sizeof(part) - 1);
	assert_int_equal(vnfs_workload_set(&step.workload, VNFS_SOURCE_ENVIRONMENT, job, part, error,
					   sizeof(error)), 0);
	memset(step.cgroup_path, 'c', sizeof(step.cgroup_path) - 1);
	step.cgroup_path[0] = '/';
	for (unsigned i = 0; step.tags.used < VNFS_TAGS_BUFFER; i++) {
		size_t room = VNFS_TAGS_BUFFER - step.tags.used;

		snprintf(name, sizeof(name), "T%u", i);
		if (room < strlen(name) + 2)
			break;
		room -= strlen(name) + 2; /* the name's and the value's terminators */
		memset(value, 'a' + i % 26, sizeof(value));
		value[room < VNFS_TAG_VALUE_MAX ? room : VNFS_TAG_VALUE_MAX] = '\0';
		assert_int_equal(vnfs_tags_set(&step.tags, name, value, error, sizeof(error)), 0);
	}
	return step;
}

/* The registry keeps each step in the bytes it takes: one at every bound
 * comes back byte for byte, from memory and from its journal. */
static void test_largest_step_kept_whole(void **state)
{
	char directory[64], error[256];
	struct vnfs_step step = largest_step(), kept;
	struct vnfs_registry *registry;
	uint32_t slot;

	(void)state;
	assert_int_equal(step.tags.used, VNFS_TAGS_BUFFER);
	make_directory(directory);
	for (int reopened = 0; reopened < 2; reopened++) {
		registry = open_registry(directory);
		if (!reopened)
			assert_int_equal(vnfs_registry_add(registry, &step, &slot, error,
							   sizeof(error)), 0);
		kept = slot_step(registry, 0);
		assert_int_equal(kept.state, VNFS_STEP_RUNNING);
		assert_true(vnfs_workload_equal(&kept.workload, &step.workload));
		assert_int_equal(kept.workload.source, VNFS_SOURCE_ENVIRONMENT);
		assert_string_equal(kept.cgroup_path, step.cgroup_path);
		assert_int_equal(kept.tags.count, step.tags.count);
		assert_int_equal(kept.tags.used, VNFS_TAGS_BUFFER);
		assert_memory_equal(kept.tags.buffer, step.tags.buffer, VNFS_TAGS_BUFFER);
		assert_true(kept.cgroup_id == 77 && kept.uid == 1001);
		free_registry(registry);
	}
	remove_directory(directory);
}

/* The step add_tagged_step put in slot is there, in state. */
static void assert_tagged_step(struct vnfs_registry *registry, uint32_t slot, uint32_t job,
			       uint32_t step_id, enum vnfs_step_state state)
{
	const struct vnfs_step kept = slot_step(registry, slot), *step = &kept;
	char value[32], path[64];

	snprintf(value, sizeof(value), "p%u-%u", job, step_id);
	snprintf(path, sizeof(path), "/sys/fs/cgroup/job_%u/step_%u", job, step_id);
	assert_int_equal(step->state, state);
	assert_slurm_step(&step->workload, job, step_id);
	assert_int_equal(step->uid, 1000 + job);
	assert_true(step->cgroup_id == 10000 + job * 100 + step_id);
	assert_true(step->start_time_ms == 1700000000000);
	assert_string_equal(step->cgroup_path, path);
	assert_int_equal(step->tags.count, 1);
	assert_string_equal(vnfs_tags_find(&step->tags, "PROJECT_NAME"), value);
}

/* What vnfs_registry_visit showed, in order. */
struct visited {
	uint32_t count;
	uint32_t slots[4];
	struct vnfs_step steps[4];
};

static void visit_step(const struct vnfs_step *step, uint32_t slot, void *context)
{
	struct visited *visited = context;

	assert_true(visited->count < 4);
	visited->slots[visited->count] = slot;
	visited->steps[visited->count] = *step;
	visited->count++;
}

static void test_persisted_registry_survives_restart(void **state)
{
	char directory[64];
	struct vnfs_registry *registry, *restarted;
	struct visited visited = { .count = 0 };
	struct vnfs_step step;
	uint32_t slot;
	char error[256];

	(void)state;
	make_directory(directory);
	registry = new_registry(directory);
	step = make_step(42, 0, 100);
	assert_int_equal(vnfs_tags_set(&step.tags, "PROJECT_NAME", "alpha", error, sizeof(error)), 0);
	assert_int_equal(vnfs_registry_add(registry, &step, &slot, error, sizeof(error)), 0);
	step = make_step(43, 0xfffffffbu, 101);
	assert_int_equal(vnfs_registry_add(registry, &step, &slot, error, sizeof(error)), 0);
	assert_int_equal(vnfs_registry_end(registry, slurm_step(43, 0xfffffffbu), 7000), 1);
	free_registry(registry);

	restarted = new_registry(directory);
	assert_int_equal(vnfs_registry_load(restarted, error, sizeof(error)), 0);
	assert_int_equal(vnfs_registry_visit(restarted, visit_step, &visited, NULL), 2);
	assert_int_equal(visited.count, 2);
	assert_int_equal(visited.slots[0], 0);
	assert_slurm_job_id(&visited.steps[0].workload, 42);
	assert_int_equal(visited.steps[0].uid, 1042);
	assert_true(visited.steps[0].cgroup_id == 100);
	assert_string_equal(visited.steps[0].cgroup_path, "/sys/fs/cgroup/job_42/step_0");
	assert_string_equal(vnfs_tags_find(&visited.steps[0].tags, "PROJECT_NAME"), "alpha");
	assert_int_equal(visited.steps[0].state, VNFS_STEP_RUNNING);
	assert_int_equal(visited.slots[1], 1);
	assert_string_equal(visited.steps[1].workload.part, "batch");
	assert_int_equal(visited.steps[1].state, VNFS_STEP_ENDED);
	assert_int_equal(visited.steps[1].end_time_ms, 7000);
	free_registry(restarted);
	remove_directory(directory);
}

/*
 * The helper's restart guarantee: every change acknowledged (the call
 * returned) is on disk, with nothing done at exit.  A child registers, ends
 * and finishes steps, then is killed with SIGKILL; its parent reads back.
 */
static void test_acknowledged_changes_survive_kill_9(void **state)
{
	enum { STEPS = 60 };
	char directory[64];
	struct vnfs_registry *restarted;
	pid_t child;
	int status;

	(void)state;
	make_directory(directory);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct vnfs_registry *registry = malloc(sizeof(*registry));
		char error[256];
		uint32_t slot;

		if (registry == NULL || vnfs_registry_init(registry, directory, error,
							    sizeof(error)) != 0 ||
		    vnfs_registry_load(registry, error, sizeof(error)) != 0)
			_exit(3);
		for (uint32_t i = 0; i < STEPS; i++) {
			struct vnfs_step step = make_step(7 + i / 10, i % 10, 10000 + (7 + i / 10) * 100 + i % 10);
			char value[32];

			snprintf(value, sizeof(value), "p%u-%u", 7 + i / 10, i % 10);
			if (vnfs_tags_set(&step.tags, "PROJECT_NAME", value, error, sizeof(error)) != 0 ||
			    vnfs_registry_add(registry, &step, &slot, error, sizeof(error)) != 0 ||
			    slot != i)
				_exit(4);
		}
		if (vnfs_registry_end(registry, slurm_step(7, 3), 9000) != 3 ||
		    vnfs_registry_finish_job(registry, slurm_job(8), 9500) != 10)
			_exit(5);
		vnfs_registry_release(registry, 59);
		raise(SIGKILL);
		_exit(6);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);

	restarted = open_registry(directory);
	assert_int_equal(restarted->used, STEPS - 1);
	for (uint32_t i = 0; i < STEPS - 1; i++) {
		uint32_t job = 7 + i / 10, step_id = i % 10;
		enum vnfs_step_state expected = job == 8 ? VNFS_STEP_FINISHED
				   : job == 7 && step_id == 3 ? VNFS_STEP_ENDED : VNFS_STEP_RUNNING;

		assert_tagged_step(restarted, i, job, step_id, expected);
		assert_true(slot_step(restarted, i).end_time_ms ==
			    (job == 8 ? 9500 : expected == VNFS_STEP_ENDED ? 9000 : 0));
	}
	assert_int_equal(slot_step(restarted, 59).state, VNFS_STEP_FREE);
	free_registry(restarted);
	remove_directory(directory);
}

/* Each change appends its own lines; the file is never rewritten for it. */
static void test_each_change_appends_its_lines(void **state)
{
	char directory[64], journal[320], *text;
	struct vnfs_registry *registry, *restarted;

	(void)state;
	make_directory(directory);
	state_file(journal, sizeof(journal), directory, "registry.journal");
	registry = open_registry(directory);
	assert_int_equal(count_lines(journal), 0);
	add_tagged_step(registry, 42, 0, 0);
	add_tagged_step(registry, 42, 1, 1);
	add_tagged_step(registry, 43, 0, 2);
	text = read_text(journal);
	assert_string_equal(text,
		"{\"slot\":0,\"state\":\"running\",\"job\":42,\"step\":0,\"uid\":1042,"
		"\"cgroup_id\":14200,\"cgroup_path\":\"\\/sys\\/fs\\/cgroup\\/job_42\\/step_0\","
		"\"start_ms\":1700000000000,\"end_ms\":0,\"tags\":{\"PROJECT_NAME\":\"p42-0\"}}\n"
		"{\"slot\":1,\"state\":\"running\",\"job\":42,\"step\":1,\"uid\":1042,"
		"\"cgroup_id\":14201,\"cgroup_path\":\"\\/sys\\/fs\\/cgroup\\/job_42\\/step_1\","
		"\"start_ms\":1700000000000,\"end_ms\":0,\"tags\":{\"PROJECT_NAME\":\"p42-1\"}}\n"
		"{\"slot\":2,\"state\":\"running\",\"job\":43,\"step\":0,\"uid\":1043,"
		"\"cgroup_id\":14300,\"cgroup_path\":\"\\/sys\\/fs\\/cgroup\\/job_43\\/step_0\","
		"\"start_ms\":1700000000000,\"end_ms\":0,\"tags\":{\"PROJECT_NAME\":\"p43-0\"}}\n");
	free(text);
	assert_int_equal(vnfs_registry_end(registry, slurm_step(42, 1), 5000), 1);
	assert_int_equal(count_lines(journal), 4);
	assert_int_equal(vnfs_registry_finish_job(registry, slurm_job(42), 6000), 2);
	assert_int_equal(count_lines(journal), 6);
	vnfs_registry_release(registry, 0);
	assert_int_equal(count_lines(journal), 7);
	text = read_text(journal);
	assert_non_null(strstr(text, "\n{\"slot\":0,\"state\":\"free\"}\n"));
	assert_string_equal(strstr(text, "\n{\"slot\":0,\"state\":\"free\"}\n"),
			    "\n{\"slot\":0,\"state\":\"free\"}\n");
	free(text);
	/* Nothing but the journal: no temp file, no registry.json. */
	assert_int_equal(access(journal, F_OK), 0);
	free_registry(registry);

	restarted = open_registry(directory);
	assert_int_equal(restarted->used, 2);
	assert_int_equal(slot_step(restarted, 0).state, VNFS_STEP_FREE);
	assert_tagged_step(restarted, 1, 42, 1, VNFS_STEP_FINISHED);
	assert_int_equal(slot_step(restarted, 1).end_time_ms, 5000);
	assert_tagged_step(restarted, 2, 43, 0, VNFS_STEP_RUNNING);
	/* Loading rewrote it compact: one line per step in use. */
	assert_int_equal(count_lines(journal), 2);
	assert_int_equal(restarted->journal_records, 2);
	free_registry(restarted);
	remove_directory(directory);
}

/* The directory holds the journal and nothing else: no temporary file. */
static void assert_only_journal(const char *directory)
{
	DIR *listing = opendir(directory);
	struct dirent *entry;
	unsigned files = 0;

	assert_non_null(listing);
	while ((entry = readdir(listing)) != NULL) {
		if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
			continue;
		assert_string_equal(entry->d_name, "registry.journal");
		files++;
	}
	assert_int_equal(closedir(listing), 0);
	assert_int_equal(files, 1);
}

/*
 * One step stays, another is registered and released again and again: the
 * journal grows by two lines a cycle until it holds more than 2 x used +
 * VNFS_REGISTRY_JOURNAL_SLACK records, then is rewritten with one line.
 */
static void test_journal_is_compacted(void **state)
{
	/* The first cycle k after which 1 + 2k records exceed 2 x 1 + SLACK. */
	const uint32_t compacting_cycle = (1 + VNFS_REGISTRY_JOURNAL_SLACK) / 2 + 1;
	char directory[64], journal[320];
	struct vnfs_registry *registry, *restarted;
	uint32_t cycle;

	(void)state;
	make_directory(directory);
	state_file(journal, sizeof(journal), directory, "registry.journal");
	registry = open_registry(directory);
	add_tagged_step(registry, 1, 0, 0);
	for (cycle = 1; cycle < compacting_cycle; cycle++) {
		add_tagged_step(registry, 100 + cycle, 0, 1);
		vnfs_registry_release(registry, 1);
	}
	/* 1 + 2 x 512 = 1025 records: the next release makes 1027 > 2 x 1 + 1024. */
	assert_int_equal(count_lines(journal), 1 + 2 * (compacting_cycle - 1));
	assert_int_equal(registry->journal_records, 1 + 2 * (compacting_cycle - 1));
	add_tagged_step(registry, 100 + cycle, 0, 1);
	vnfs_registry_release(registry, 1);
	assert_int_equal(count_lines(journal), 1);
	assert_int_equal(registry->journal_records, 1);
	assert_only_journal(directory);
	for (cycle = 0; cycle < 87; cycle++) {
		add_tagged_step(registry, 5000 + cycle, 0, 1);
		vnfs_registry_release(registry, 1);
	}
	add_tagged_step(registry, 6000, 3, 1);
	assert_int_equal(count_lines(journal), 1 + 2 * 87 + 1);
	free_registry(registry);

	restarted = open_registry(directory);
	assert_int_equal(restarted->used, 2);
	assert_tagged_step(restarted, 0, 1, 0, VNFS_STEP_RUNNING);
	assert_tagged_step(restarted, 1, 6000, 3, VNFS_STEP_RUNNING);
	assert_int_equal(count_lines(journal), 2);
	free_registry(restarted);
	remove_directory(directory);
}

/*
 * Compaction writes a temporary file of its own name, flushes it, renames
 * it over the journal: the result is the whole state, one line per step,
 * and no temporary file stays.  Temporary files an interrupted compaction
 * left (".tmp" of older helpers, mkostemp names) are removed at load.
 */
static void test_compaction_leaves_one_whole_file(void **state)
{
	static const char expected[] =
		"{\"slot\":0,\"state\":\"running\",\"job\":42,\"step\":0,\"uid\":1042,"
		"\"cgroup_id\":14200,\"cgroup_path\":\"\\/sys\\/fs\\/cgroup\\/job_42\\/step_0\","
		"\"start_ms\":1700000000000,\"end_ms\":0,\"tags\":{\"PROJECT_NAME\":\"p42-0\"}}\n"
		"{\"slot\":2,\"state\":\"ended\",\"job\":43,\"step\":0,\"uid\":1043,"
		"\"cgroup_id\":14300,\"cgroup_path\":\"\\/sys\\/fs\\/cgroup\\/job_43\\/step_0\","
		"\"start_ms\":1700000000000,\"end_ms\":5000,\"tags\":{\"PROJECT_NAME\":\"p43-0\"}}\n";
	char directory[64], journal[320], stale[2][320], *text;
	struct vnfs_registry *registry;

	(void)state;
	make_directory(directory);
	state_file(journal, sizeof(journal), directory, "registry.journal");
	state_file(stale[0], sizeof(stale[0]), directory, "registry.journal.tmp");
	state_file(stale[1], sizeof(stale[1]), directory, "registry.journal.Q7x2Lp");
	write_text(stale[0], "{\"slot\":9,\"state\":\"runn", "w");
	write_text(stale[1], "", "w");
	start_capturing_log();
	registry = open_registry(directory);
	vnfs_log_set_sink(NULL);
	assert_int_equal(logged_count, 2);
	for (unsigned i = 0; i < 2; i++)
		assert_non_null(strstr(logged[i], ", left by an interrupted rewrite"));
	assert_only_journal(directory);
	assert_int_equal(count_lines(journal), 0);

	add_tagged_step(registry, 42, 0, 0);
	add_tagged_step(registry, 42, 1, 1);
	add_tagged_step(registry, 43, 0, 2);
	vnfs_registry_release(registry, 1);
	assert_int_equal(vnfs_registry_end(registry, slurm_step(43, 0), 5000), 2);
	assert_int_equal(count_lines(journal), 5);
	free_registry(registry);

	/* Loading compacts: exactly the two steps in use, whole lines. */
	registry = open_registry(directory);
	text = read_text(journal);
	assert_string_equal(text, expected);
	free(text);
	assert_only_journal(directory);
	assert_int_equal(registry->journal_records, 2);
	/* The open descriptor is the new file: appends land after its lines. */
	add_tagged_step(registry, 44, 0, 1);
	assert_int_equal(count_lines(journal), 3);
	text = read_text(journal);
	assert_memory_equal(text, expected, sizeof(expected) - 1);
	free(text);
	assert_only_journal(directory);
	free_registry(registry);
	remove_directory(directory);
}

/* A crash in the middle of a write leaves a partial last line: that change
 * alone is lost, with a log line; the journal goes on cleanly after it. */
static void test_journal_tail_cut_short(void **state)
{
	char directory[64], journal[320], expected[512], *text;
	struct vnfs_registry *registry, *restarted;

	(void)state;
	make_directory(directory);
	state_file(journal, sizeof(journal), directory, "registry.journal");
	registry = open_registry(directory);
	add_tagged_step(registry, 42, 0, 0);
	add_tagged_step(registry, 42, 1, 1);
	add_tagged_step(registry, 42, 2, 2);
	free_registry(registry);
	write_text(journal, "{\"slot\":3,\"state\":\"running\",\"job\":42,\"st", "a");

	start_capturing_log();
	restarted = open_registry(directory);
	vnfs_log_set_sink(NULL);
	assert_int_equal(logged_count, 1);
	snprintf(expected, sizeof(expected),
		 "%s: line 4, the last, is cut short (a write interrupted by a crash?): that one "
		 "change is lost, the 3 records before it are kept", journal);
	assert_string_equal(logged[0], expected);
	assert_int_equal(restarted->used, 3);
	for (uint32_t i = 0; i < 3; i++)
		assert_tagged_step(restarted, i, 42, i, VNFS_STEP_RUNNING);
	assert_int_equal(slot_step(restarted, 3).state, VNFS_STEP_FREE);
	/* Rewritten without the partial line, so the next record is whole. */
	text = read_text(journal);
	assert_null(strstr(text, "\"st{"));
	assert_int_equal(text[strlen(text) - 1], '\n');
	free(text);
	add_tagged_step(restarted, 42, 3, 3);
	free_registry(restarted);

	restarted = open_registry(directory);
	assert_int_equal(restarted->used, 4);
	assert_tagged_step(restarted, 3, 42, 3, VNFS_STEP_RUNNING);
	free_registry(restarted);

	/* A last record complete but for its newline is whole: it counts. */
	write_text(journal, "{\"slot\":3,\"state\":\"free\"}", "a");
	start_capturing_log();
	restarted = open_registry(directory);
	vnfs_log_set_sink(NULL);
	assert_int_equal(logged_count, 0);
	assert_int_equal(restarted->used, 3);
	assert_int_equal(slot_step(restarted, 3).state, VNFS_STEP_FREE);
	free_registry(restarted);
	remove_directory(directory);
}

/* Lines that are not records are dropped one by one, with a line each; the
 * records around them are kept. */
static void test_corrupt_journal_lines_are_dropped(void **state)
{
	char directory[64], journal[320], expected[1024];
	struct vnfs_registry *registry, *restarted;

	(void)state;
	make_directory(directory);
	state_file(journal, sizeof(journal), directory, "registry.journal");
	registry = open_registry(directory);
	add_tagged_step(registry, 42, 0, 0);
	free_registry(registry);
	write_text(journal,
		   "not json at all\n"
		   "\n"
		   "{\"slot\":1024,\"state\":\"running\",\"job\":1,\"step\":0,\"uid\":0,"
		   "\"cgroup_id\":5,\"start_ms\":0,\"end_ms\":0}\n"
		   "{\"slot\":2,\"state\":\"sleeping\"}\n"
		   "[1,2]\n"
		   "{\"slot\":0,\"state\":\"ended\"} trailing\n"
		   /* found by fuzz_registry_journal: a null tag value crashed the load */
		   "{\"slot\":3,\"state\":\"running\",\"job\":9,\"step\":0,\"uid\":0,"
		   "\"cgroup_id\":5,\"start_ms\":1,\"end_ms\":0,\"tags\":{\"A\":null}}\n",
		   "a");
	write_text(journal,
		   "{\"slot\":1,\"state\":\"running\",\"job\":42,\"step\":1,\"uid\":1042,"
		   "\"cgroup_id\":14201,\"cgroup_path\":\"/sys/fs/cgroup/job_42/step_1\","
		   "\"start_ms\":1700000000000,\"end_ms\":0,\"tags\":{\"PROJECT_NAME\":\"p42-1\"}}\n",
		   "a");

	start_capturing_log();
	restarted = open_registry(directory);
	vnfs_log_set_sink(NULL);
	assert_int_equal(logged_count, 6);
	snprintf(expected, sizeof(expected),
		 "%s: line 2 is not a JSON record: dropped, the other records are kept", journal);
	assert_string_equal(logged[0], expected);
	snprintf(expected, sizeof(expected),
		 "%s: line 4 dropped: malformed step entry {\"slot\":1024,\"state\":\"running\","
		 "\"job\":1,\"step\":0,\"uid\":0,\"cgroup_id\":5,\"start_ms\":0,\"end_ms\":0}",
		 journal);
	assert_string_equal(logged[1], expected);
	snprintf(expected, sizeof(expected),
		 "%s: line 5 dropped: malformed step entry {\"slot\":2,\"state\":\"sleeping\"}",
		 journal);
	assert_string_equal(logged[2], expected);
	snprintf(expected, sizeof(expected), "%s: line 6 dropped: malformed step entry [1,2]",
		 journal);
	assert_string_equal(logged[3], expected);
	snprintf(expected, sizeof(expected),
		 "%s: line 7 is not a JSON record: dropped, the other records are kept", journal);
	assert_string_equal(logged[4], expected);
	snprintf(expected, sizeof(expected),
		 "%s: line 8 dropped: malformed step entry {\"slot\":3,\"state\":\"running\","
		 "\"job\":9,\"step\":0,\"uid\":0,\"cgroup_id\":5,\"start_ms\":1,\"end_ms\":0,"
		 "\"tags\":{\"A\":null}}", journal);
	assert_string_equal(logged[5], expected);
	assert_int_equal(restarted->used, 2);
	assert_tagged_step(restarted, 0, 42, 0, VNFS_STEP_RUNNING);
	assert_tagged_step(restarted, 1, 42, 1, VNFS_STEP_RUNNING);
	assert_int_equal(count_lines(journal), 2);
	free_registry(restarted);
	remove_directory(directory);
}

/* A journal line may name its step in the general form (lib/protocol.h):
 * the same step as Slurm's numbers; a Slurm id spelled another way, or a
 * step without a part, is damage. */
static void test_general_form_journal_lines(void **state)
{
	char directory[64], journal[320];
	struct vnfs_registry *registry;
	struct vnfs_step kept;

	(void)state;
	make_directory(directory);
	state_file(journal, sizeof(journal), directory, "registry.journal");
	write_text(journal,
		   "{\"slot\":0,\"state\":\"running\",\"source\":\"slurm\",\"job\":\"42\","
		   "\"part\":\"batch\",\"uid\":1042,\"cgroup_id\":5,\"start_ms\":1,\"end_ms\":0}\n"
		   "{\"slot\":1,\"state\":\"running\",\"source\":\"slurm\",\"job\":\"042\","
		   "\"part\":\"0\",\"uid\":1042,\"cgroup_id\":6,\"start_ms\":1,\"end_ms\":0}\n"
		   "{\"slot\":2,\"state\":\"running\",\"source\":\"slurm\",\"job\":\"43\","
		   "\"uid\":1042,\"cgroup_id\":7,\"start_ms\":1,\"end_ms\":0}\n"
		   "{\"slot\":3,\"state\":\"running\",\"source\":\"nosuch\",\"job\":\"43\","
		   "\"part\":\"0\",\"uid\":1042,\"cgroup_id\":8,\"start_ms\":1,\"end_ms\":0}\n",
		   "w");
	start_capturing_log();
	registry = open_registry(directory);
	vnfs_log_set_sink(NULL);
	assert_int_equal(logged_count, 3);
	assert_int_equal(registry->used, 1);
	kept = slot_step(registry, 0);
	assert_slurm_step(&kept.workload, 42, 0xfffffffbu);
	/* The same step in Slurm's numbers is the one already there. */
	assert_int_equal(vnfs_registry_end(registry, slurm_step(42, 0xfffffffbu), 9), 0);
	assert_int_equal(slot_step(registry, 0).state, VNFS_STEP_ENDED);
	free_registry(registry);
	remove_directory(directory);
}

/* A Kubernetes container's step is journaled in the general form and comes
 * back the same after a restart; Kubernetes' "ml/42" is not Slurm's 42. */
static void test_kubernetes_step_persists(void **state)
{
	char directory[64], journal[320], error[256], *text;
	struct vnfs_registry *registry;
	struct vnfs_step step = make_step(42, 0, 4242), kept;
	uint32_t slot;

	(void)state;
	make_directory(directory);
	state_file(journal, sizeof(journal), directory, "registry.journal");
	registry = open_registry(directory);
	assert_int_equal(vnfs_registry_add(registry, &step, &slot, error, sizeof(error)), 0);
	assert_int_equal(vnfs_workload_set(&step.workload, VNFS_SOURCE_KUBERNETES, "ml/42",
					   "trainer", error, sizeof(error)),
			 0);
	step.cgroup_id = 4343;
	assert_int_equal(vnfs_registry_add(registry, &step, &slot, error, sizeof(error)), 0);
	assert_int_equal(slot, 1);
	free_registry(registry);
	text = read_text(journal);
	assert_non_null(strstr(text, "\"source\":\"kubernetes\",\"job\":\"ml\\/42\","
				     "\"part\":\"trainer\"")); /* json-c writes '/' as \/ */
	free(text);
	registry = open_registry(directory);
	assert_int_equal(registry->used, 2);
	kept = slot_step(registry, 1);
	assert_true(vnfs_workload_equal(&kept.workload, &step.workload));
	kept = slot_step(registry, 0);
	assert_slurm_step(&kept.workload, 42, 0);
	/* Finishing Slurm's job 42 leaves the pod's container running. */
	assert_int_equal(vnfs_registry_finish_job(registry, slurm_job(42), 9000), 1);
	assert_int_equal(slot_step(registry, 1).state, VNFS_STEP_RUNNING);
	free_registry(registry);
	remove_directory(directory);
}

/*
 * A write that fails half-way (here: the file size limit, as a full disk
 * would) is cut back to the last whole record, and the next change rewrites
 * the whole journal, the failed change included.  Runs in a child, since
 * the limit and SIGXFSZ apply to the whole process.
 */
static int failed_write_child(const char *directory, const char *journal)
{
	struct vnfs_registry *registry = malloc(sizeof(*registry));
	struct rlimit limit;
	struct stat before, after;
	char error[256];
	uint32_t slot;

	start_capturing_log();
	if (registry == NULL || vnfs_registry_init(registry, directory, error, sizeof(error)) != 0 ||
	    vnfs_registry_load(registry, error, sizeof(error)) != 0)
		return 10;
	for (uint32_t i = 0; i < 2; i++) {
		struct vnfs_step step = make_step(42, i, 10000 + 4200 + i);

		if (vnfs_registry_add(registry, &step, &slot, error, sizeof(error)) != 0)
			return 11;
	}
	if (stat(journal, &before) != 0 || signal(SIGXFSZ, SIG_IGN) == SIG_ERR ||
	    getrlimit(RLIMIT_FSIZE, &limit) != 0)
		return 12;
	rlim_t unlimited = limit.rlim_cur;
	limit.rlim_cur = (rlim_t)before.st_size + 100;
	if (setrlimit(RLIMIT_FSIZE, &limit) != 0)
		return 13;
	struct vnfs_step step = make_step(42, 2, 10000 + 4202);
	if (vnfs_registry_add(registry, &step, &slot, error, sizeof(error)) != 0 || slot != 2)
		return 14; /* counting goes on */
	if (stat(journal, &after) != 0 || after.st_size != before.st_size)
		return 15; /* the 100 bytes that fitted were cut off */
	if (logged_count != 1 || strstr(logged[0], "cannot append to ") == NULL ||
	    strstr(logged[0], "File too large") == NULL) {
		for (unsigned i = 0; i < logged_count && i < 8; i++)
			fprintf(stderr, "child logged: %s\n", logged[i]);
		return 16;
	}
	limit.rlim_cur = unlimited;
	if (setrlimit(RLIMIT_FSIZE, &limit) != 0)
		return 17;
	step = make_step(42, 3, 10000 + 4203);
	if (vnfs_registry_add(registry, &step, &slot, error, sizeof(error)) != 0 || slot != 3)
		return 18;
	if (count_lines(journal) != 4 || registry->journal_records != 4)
		return 19;
	vnfs_registry_destroy(registry);
	free(registry);
	return 0;
}

static void test_failed_append_rewrites_next_time(void **state)
{
	char directory[64], journal[320];
	struct vnfs_registry *restarted;
	pid_t child;
	int status;

	(void)state;
	make_directory(directory);
	state_file(journal, sizeof(journal), directory, "registry.journal");
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(failed_write_child(directory, journal));
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	restarted = open_registry(directory);
	assert_int_equal(restarted->used, 4);
	for (uint32_t i = 0; i < 4; i++) {
		struct vnfs_step kept = slot_step(restarted, i);

		assert_slurm_step(&kept.workload, 42, i);
		assert_true(kept.cgroup_id == 10000 + 4200 + i);
	}
	free_registry(restarted);
	remove_directory(directory);
}

/* registry.json as helpers before the journal wrote it (one array). */
static const char legacy_registry[] =
	"[{\"slot\":0,\"state\":\"running\",\"job\":42,\"step\":0,\"uid\":1042,\"cgroup_id\":14200,"
	"\"cgroup_path\":\"\\/sys\\/fs\\/cgroup\\/job_42\\/step_0\",\"start_ms\":1700000000000,"
	"\"end_ms\":0,\"tags\":{\"PROJECT_NAME\":\"p42-0\"}},"
	"{\"slot\":5,\"state\":\"ended\",\"job\":43,\"step\":4294967291,\"uid\":1043,"
	"\"cgroup_id\":14300,\"cgroup_path\":\"\\/sys\\/fs\\/cgroup\\/job_43\\/step_4294967291\","
	"\"start_ms\":1700000000000,\"end_ms\":7000,\"tags\":{}}]";

static void test_legacy_registry_json_is_migrated(void **state)
{
	char directory[64], journal[320], legacy[320], expected[1024];
	struct vnfs_registry *registry, *restarted;
	struct vnfs_step kept;

	(void)state;
	make_directory(directory);
	state_file(journal, sizeof(journal), directory, "registry.journal");
	state_file(legacy, sizeof(legacy), directory, "registry.json");
	write_text(legacy, legacy_registry, "w");

	start_capturing_log();
	registry = open_registry(directory);
	vnfs_log_set_sink(NULL);
	assert_int_equal(logged_count, 1);
	snprintf(expected, sizeof(expected), "registry: 2 steps migrated from %s to %s", legacy,
		 journal);
	assert_string_equal(logged[0], expected);
	assert_int_equal(registry->used, 2);
	assert_tagged_step(registry, 0, 42, 0, VNFS_STEP_RUNNING);
	assert_int_equal(slot_step(registry, 5).state, VNFS_STEP_ENDED);
	assert_string_equal(slot_step(registry, 5).workload.part, "batch");
	assert_int_equal(slot_step(registry, 5).end_time_ms, 7000);
	assert_int_equal(slot_step(registry, 5).tags.count, 0);
	assert_int_equal(access(legacy, F_OK), -1);
	assert_int_equal(count_lines(journal), 2);
	add_tagged_step(registry, 44, 0, 1);
	free_registry(registry);

	/* A helper that died after writing the journal but before removing
	 * registry.json: the journal is complete and wins. */
	write_text(legacy, legacy_registry, "w");
	start_capturing_log();
	restarted = open_registry(directory);
	vnfs_log_set_sink(NULL);
	assert_int_equal(logged_count, 1);
	snprintf(expected, sizeof(expected),
		 "registry: removed %s, left over from a migration to %s", legacy, journal);
	assert_string_equal(logged[0], expected);
	assert_int_equal(restarted->used, 3);
	assert_tagged_step(restarted, 0, 42, 0, VNFS_STEP_RUNNING);
	assert_tagged_step(restarted, 1, 44, 0, VNFS_STEP_RUNNING);
	kept = slot_step(restarted, 5);
	assert_slurm_job_id(&kept.workload, 43);
	assert_int_equal(access(legacy, F_OK), -1);
	free_registry(restarted);
	remove_directory(directory);
}

static void test_corrupt_legacy_registry_is_reported(void **state)
{
	char directory[64], legacy[320];
	struct vnfs_registry *registry;
	char error[256];

	(void)state;
	make_directory(directory);
	state_file(legacy, sizeof(legacy), directory, "registry.json");
	write_text(legacy, "{\"not\": \"an array\"", "w");
	registry = new_registry(directory);
	assert_int_equal(vnfs_registry_load(registry, error, sizeof(error)), -1);
	assert_non_null(strstr(error, "is not a JSON array of steps: starting empty"));
	assert_int_equal(registry->used, 0);
	free_registry(registry);
	/* Left for the administrator to look at. */
	assert_int_equal(access(legacy, F_OK), 0);
	remove_directory(directory);
}

/* Without a load, the first change writes the whole state: nothing older
 * on disk is mixed in (init alone means "start empty"). */
static void test_registry_not_loaded_starts_a_new_journal(void **state)
{
	char directory[64], journal[320];
	struct vnfs_registry *registry;

	(void)state;
	make_directory(directory);
	state_file(journal, sizeof(journal), directory, "registry.journal");
	registry = open_registry(directory);
	add_tagged_step(registry, 42, 0, 0);
	add_tagged_step(registry, 42, 1, 1);
	free_registry(registry);
	registry = new_registry(directory);
	add_tagged_step(registry, 50, 0, 0);
	assert_int_equal(count_lines(journal), 1);
	add_tagged_step(registry, 50, 1, 1);
	assert_int_equal(count_lines(journal), 2);
	free_registry(registry);
	registry = open_registry(directory);
	assert_int_equal(registry->used, 2);
	assert_tagged_step(registry, 0, 50, 0, VNFS_STEP_RUNNING);
	assert_tagged_step(registry, 1, 50, 1, VNFS_STEP_RUNNING);
	free_registry(registry);
	remove_directory(directory);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slots_are_lowest_free_first_and_reused),
		cmocka_unit_test(test_largest_step_kept_whole),
		cmocka_unit_test(test_same_step_again_is_idempotent_other_cgroup_conflicts),
		cmocka_unit_test(test_restarted_container_runs_again),
		cmocka_unit_test(test_full_registry_refuses_with_message),
		cmocka_unit_test(test_steps_per_job_are_limited),
		cmocka_unit_test(test_steps_per_user_are_limited),
		cmocka_unit_test(test_end_and_finish_move_states),
		cmocka_unit_test(test_persisted_registry_survives_restart),
		cmocka_unit_test(test_acknowledged_changes_survive_kill_9),
		cmocka_unit_test(test_each_change_appends_its_lines),
		cmocka_unit_test(test_journal_is_compacted),
		cmocka_unit_test(test_compaction_leaves_one_whole_file),
		cmocka_unit_test(test_journal_tail_cut_short),
		cmocka_unit_test(test_corrupt_journal_lines_are_dropped),
		cmocka_unit_test(test_general_form_journal_lines),
		cmocka_unit_test(test_kubernetes_step_persists),
		cmocka_unit_test(test_failed_append_rewrites_next_time),
		cmocka_unit_test(test_legacy_registry_json_is_migrated),
		cmocka_unit_test(test_corrupt_legacy_registry_is_reported),
		cmocka_unit_test(test_registry_not_loaded_starts_a_new_journal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
