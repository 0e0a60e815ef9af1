/*
 * test_discovery.c — the helper finding containers by itself (Kubernetes',
 * podman's, Docker's: helper/discover/discovery.h), on this host's real
 * cgroup2 hierarchy and a real containerd-like state directory, with a
 * counter source that hands out unattributed rows and records what is
 * registered and folded.
 *
 * The cgroups are made under a directory of their own in the hierarchy,
 * given to the discovery as its mount: the paths it sees then start at
 * /kubepods.slice, as on a node.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "helper/discover/discovery.h"
#include "tests/unit/docker_fixtures.h"
#include "tests/unit/oci_config_fixtures.h"

#define POD_SLICE                                                         \
	"/kubepods.slice/kubepods-besteffort.slice/"                      \
	"kubepods-besteffort-pod1c4b9f0e_5a3d_4b8e_9f1a_2b3c4d5e6f70.slice"
#define CONTAINER_SCOPE POD_SLICE "/cri-containerd-" FIXTURE_CONTAINER_ID ".scope"
#define PLAIN_CGROUP "/user.slice/user-1000.slice/session-4.scope"

/* ---- a counter source of rows, recording what it is asked ---- */

struct fake_source {
	struct vnfs_unattributed_key rows[4];
	size_t row_count;
	uint64_t registered_cgroup;
	uint32_t registered_slot;
	int registrations;
	uint64_t folded_cgroup;
	uint32_t folded_slot;
	int folds;
	uint64_t made[2]; /* cgroups made since the last for_each_new_cgroup */
	size_t made_count;
};

static int fake_for_each_new_cgroup(void *context, vnfs_new_cgroup_fn fn, void *fn_context)
{
	struct fake_source *fake = context;

	for (size_t i = 0; i < fake->made_count; i++)
		if (fn(fake->made[i], fn_context) != 0)
			return -1;
	fake->made_count = 0;
	return 0;
}

static int fake_for_each_unattributed(void *context, vnfs_unattributed_fn fn, void *fn_context)
{
	struct fake_source *fake = context;
	struct vnfs_unattributed_stats stats = { 0 };

	for (size_t i = 0; i < fake->row_count; i++)
		if (fn(&fake->rows[i], &stats, fn_context) != 0)
			return -1;
	return 0;
}

static int fake_register_cgroup(void *context, uint64_t cgroup_id, uint32_t slot)
{
	struct fake_source *fake = context;

	fake->registered_cgroup = cgroup_id;
	fake->registered_slot = slot;
	fake->registrations++;
	return 0;
}

/* The kernel side deletes a folded cgroup's rows: so does the fake. */
static int fake_fold_unattributed(void *context, uint64_t cgroup_id, uint32_t slot,
				  uint64_t *calls)
{
	struct fake_source *fake = context;
	size_t kept = 0;

	fake->folded_cgroup = cgroup_id;
	fake->folded_slot = slot;
	fake->folds++;
	*calls = 0;
	for (size_t i = 0; i < fake->row_count; i++) {
		if (fake->rows[i].cgroup_id == cgroup_id)
			*calls += 7;
		else
			fake->rows[kept++] = fake->rows[i];
	}
	fake->row_count = kept;
	return 0;
}

/* ---- the finishing side ---- */

struct finished {
	int count;
	struct vnfs_workload job;
};

static int record_finish(void *context, const struct vnfs_workload *job, int64_t now_ms,
			 char *error, size_t error_size)
{
	struct finished *finished = context;

	(void)now_ms;
	(void)error;
	(void)error_size;
	finished->count++;
	finished->job = *job;
	return 0;
}

/* ---- fixture ---- */

struct fixture {
	char top[512];      /* our directory in the cgroup2 hierarchy */
	char state_dir[64]; /* the runtime's state directory */
	uint64_t container_id, plain_id;
	struct vnfs_registry registry;
	struct vnfs_steps steps;
	struct fake_source fake;
	struct vnfs_config config;
	struct vnfs_runtime_state_dir runtime;
	struct finished finished;
	struct vnfs_discovery discovery;
};

/* Makes every directory of path under top; returns the last one's id. */
static uint64_t make_cgroup(const char *top, const char *path)
{
	char partial[1024];
	struct stat status;

	for (const char *slash = strchr(path + 1, '/');; slash = strchr(slash + 1, '/')) {
		size_t length = slash != NULL ? (size_t)(slash - path) : strlen(path);

		snprintf(partial, sizeof(partial), "%s%.*s", top, (int)length, path);
		if (mkdir(partial, 0755) != 0)
			assert_int_equal(errno, EEXIST);
		if (slash == NULL)
			break;
	}
	assert_int_equal(stat(partial, &status), 0);
	return status.st_ino;
}

/* Removes path and every directory above it up to top. */
static void remove_cgroup(const char *top, const char *path)
{
	char full[1024];

	snprintf(full, sizeof(full), "%s%s", top, path);
	while (strlen(full) > strlen(top)) {
		if (rmdir(full) != 0)
			assert_int_equal(errno, ENOENT);
		*strrchr(full, '/') = '\0';
	}
}

static void write_state(struct fixture *f)
{
	char path[512];
	FILE *out;

	snprintf(f->state_dir, sizeof(f->state_dir), "/tmp/vnfs-test-discovery-XXXXXX");
	assert_non_null(mkdtemp(f->state_dir));
	snprintf(path, sizeof(path), "%s/%s", f->state_dir, FIXTURE_CONTAINER_ID);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/%s/config.json", f->state_dir, FIXTURE_CONTAINER_ID);
	out = fopen(path, "w");
	assert_non_null(out);
	assert_true(fputs(containerd_container, out) >= 0);
	assert_int_equal(fclose(out), 0);
}

static int set_up(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char mount[256], error[256];

	assert_non_null(f);
	if (vnfs_cgroup2_mount(mount, sizeof(mount)) != 0)
		fail_msg("no cgroup2 hierarchy is mounted: this test needs one");
	snprintf(f->top, sizeof(f->top), "%s/vnfs-test-discovery-%d", mount, (int)getpid());
	assert_int_equal(mkdir(f->top, 0755), 0);
	f->container_id = make_cgroup(f->top, CONTAINER_SCOPE);
	f->plain_id = make_cgroup(f->top, PLAIN_CGROUP);
	write_state(f);

	assert_int_equal(vnfs_registry_init(&f->registry, NULL, error, sizeof(error)), 0);
	struct vnfs_counter_source source = {
		.context = &f->fake,
		.for_each_unattributed = fake_for_each_unattributed,
		.register_cgroup = fake_register_cgroup,
		.fold_unattributed = fake_fold_unattributed,
		.for_each_new_cgroup = fake_for_each_new_cgroup,
	};
	vnfs_steps_init(&f->steps, &f->registry, &source);
	f->fake.rows[0] = (struct vnfs_unattributed_key){ .cgroup_id = f->container_id,
							  .uid = 1000, .comm = "python" };
	f->fake.rows[1] = (struct vnfs_unattributed_key){ .cgroup_id = f->container_id,
							  .uid = 1000, .comm = "dd" };
	f->fake.rows[2] = (struct vnfs_unattributed_key){ .cgroup_id = f->plain_id,
							  .uid = 1000, .comm = "bash" };
	f->fake.rows[3] = (struct vnfs_unattributed_key){ .cgroup_id = 0, .uid = 1000,
							  .comm = VNFS_EXPIRED_COMM };
	f->fake.row_count = 4;

	f->config.containers.discover = true;
	f->config.containers.tag_variable_count = 3;
	snprintf(f->config.containers.tag_variables[0], 65, "JOB_ID");
	snprintf(f->config.containers.tag_variables[1], 65, "PROJECT");
	snprintf(f->config.containers.tag_variables[2], 65, "NOT_SET");
	f->runtime = (struct vnfs_runtime_state_dir){ VNFS_RUNTIME_CONTAINERD, f->state_dir,
						      "config.json",
						      VNFS_OCI_ANNOTATIONS_CONTAINERD, NULL };
	assert_int_equal(vnfs_discovery_init(&f->discovery, &f->config, &f->steps, record_finish,
					     &f->finished, &f->runtime, 1, f->top),
			 0);
	assert_true(f->discovery.enabled);
	*state = f;
	return 0;
}

static int tear_down(void **state)
{
	struct fixture *f = *state;
	char command[128];

	vnfs_discovery_destroy(&f->discovery);
	vnfs_registry_destroy(&f->registry);
	remove_cgroup(f->top, CONTAINER_SCOPE);
	remove_cgroup(f->top, PLAIN_CGROUP);
	assert_int_equal(rmdir(f->top), 0);
	snprintf(command, sizeof(command), "rm -rf '%s'", f->state_dir);
	assert_int_equal(system(command), 0);
	free(f);
	return 0;
}

/* What the registry holds of the step in slot. */
struct seen_step {
	bool found;
	struct vnfs_step step;
	uint32_t slot;
};

static void remember_step(const struct vnfs_step *step, uint32_t slot, void *context)
{
	struct seen_step *seen = context;

	seen->found = true;
	seen->step = *step;
	seen->slot = slot;
}

static struct seen_step only_step(struct fixture *f)
{
	struct seen_step seen = { 0 };

	assert_int_equal(vnfs_registry_visit(&f->registry, remember_step, &seen, NULL), 1);
	return seen;
}

/* ---- tests ---- */

/* A container's cgroup among the unattributed rows is registered as its
 * pod's container, with its variables as tags, and its rows folded into
 * its slot once; the session's cgroup and the [expired] row are left. */
static void test_container_registered_and_folded(void **state)
{
	struct fixture *f = *state;
	struct seen_step seen;
	const char *value;

	vnfs_discovery_run(&f->discovery, 1000);
	seen = only_step(f);
	assert_int_equal(seen.step.state, VNFS_STEP_RUNNING);
	assert_int_equal(seen.step.workload.source, VNFS_SOURCE_KUBERNETES);
	assert_string_equal(seen.step.workload.job, "analysis/writer-7d9c5b8f4-x2kqz");
	assert_string_equal(seen.step.workload.part, "writer");
	assert_int_equal(seen.step.uid, 1000);
	assert_int_equal(seen.step.cgroup_id, f->container_id);
	assert_string_equal(seen.step.cgroup_path, CONTAINER_SCOPE);
	assert_int_equal(seen.step.start_time_ms, 1000);
	value = vnfs_tags_find(&seen.step.tags, "JOB_ID");
	assert_non_null(value);
	assert_string_equal(value, "run-17"); /* the first entry, as getenv() sees */
	value = vnfs_tags_find(&seen.step.tags, "PROJECT");
	assert_non_null(value);
	assert_string_equal(value, "climate");
	assert_null(vnfs_tags_find(&seen.step.tags, "NOT_SET"));

	assert_int_equal(f->fake.registrations, 1);
	assert_int_equal(f->fake.registered_cgroup, f->container_id);
	assert_int_equal(f->fake.registered_slot, seen.slot);
	assert_int_equal(f->fake.folds, 1);
	assert_int_equal(f->fake.folded_cgroup, f->container_id);
	assert_int_equal(f->fake.folded_slot, seen.slot);
	assert_int_equal(f->discovery.containers_registered, 1);
	assert_int_equal(f->discovery.calls_folded, 14);
	assert_int_equal(f->fake.row_count, 2); /* the session's and [expired] */

	/* Judged once: the session's cgroup is not looked at again, the
	 * container is not registered or folded twice. */
	vnfs_discovery_run(&f->discovery, 2000);
	assert_int_equal(f->fake.registrations, 1);
	assert_int_equal(f->fake.folds, 1);
	assert_int_equal(f->discovery.judged_count, 1);
	assert_int_equal(f->discovery.judged[0].id, f->plain_id);
	assert_int_equal(f->discovery.judged[0].verdict, VNFS_DISCOVERY_NOT_CONTAINER);
	assert_int_equal(f->finished.count, 0);
}

/* The container's cgroup gone: its step ended, its pod not finished while
 * the pod's cgroup stays; then the pod's goes and the pod finishes, once. */
static void test_ends_follow_the_cgroups(void **state)
{
	struct fixture *f = *state;
	char scope[1024];

	vnfs_discovery_run(&f->discovery, 1000);
	snprintf(scope, sizeof(scope), "%s%s", f->top, CONTAINER_SCOPE);
	assert_int_equal(rmdir(scope), 0);
	vnfs_discovery_run(&f->discovery, 5000);
	assert_int_equal(only_step(f).step.state, VNFS_STEP_ENDED);
	assert_int_equal(only_step(f).step.end_time_ms, 5000);
	assert_int_equal(f->finished.count, 0);
	assert_int_equal(f->discovery.pod_count, 1);

	remove_cgroup(f->top, POD_SLICE);
	vnfs_discovery_run(&f->discovery, 6000);
	assert_int_equal(f->finished.count, 1);
	assert_int_equal(f->finished.job.source, VNFS_SOURCE_KUBERNETES);
	assert_string_equal(f->finished.job.job, "analysis/writer-7d9c5b8f4-x2kqz");
	assert_string_equal(f->finished.job.part, "");
	assert_int_equal(f->discovery.pods_finished, 1);
	vnfs_discovery_run(&f->discovery, 7000);
	assert_int_equal(f->finished.count, 1);
	assert_int_equal(f->discovery.pod_count, 0);
}

/* A container a hook registered (vnfs-register, with the cgroup's path from
 * the root of the filesystem, as given): after its end, the pod is not
 * finished while the pod's cgroup stays, and is once that goes. */
static void test_hook_registered_pod_awaited(void **state)
{
	struct fixture *f = *state;
	struct vnfs_step step = {
		.state = VNFS_STEP_RUNNING,
		.workload = { .source = VNFS_SOURCE_KUBERNETES, .job = "ml/resnet-7f9c",
			      .part = "trainer" },
		.cgroup_id = f->container_id,
		.start_time_ms = 500,
	};
	char error[256];
	uint32_t slot;

	f->fake.row_count = 0; /* nothing for discovery to register itself */
	assert_true(strlen(f->top) + strlen(CONTAINER_SCOPE) < sizeof(step.cgroup_path));
	memcpy(step.cgroup_path, f->top, strlen(f->top));
	strcat(step.cgroup_path, CONTAINER_SCOPE);
	assert_int_equal(vnfs_steps_register(&f->steps, &step, &slot, error, sizeof(error)), 0);
	vnfs_discovery_run(&f->discovery, 1000);
	assert_int_equal(f->discovery.pod_count, 1);
	assert_int_equal(vnfs_steps_end(&f->steps, &step.workload, 2000), 0);
	vnfs_discovery_run(&f->discovery, 3000);
	assert_int_equal(f->finished.count, 0);
	assert_int_equal(f->discovery.pod_count, 1);

	remove_cgroup(f->top, CONTAINER_SCOPE);
	vnfs_discovery_run(&f->discovery, 4000);
	assert_int_equal(f->finished.count, 1);
	assert_string_equal(f->finished.job.job, "ml/resnet-7f9c");
	assert_string_equal(f->finished.job.part, "");
}

/* A cgroup named like the container whose runtime state does not name it
 * (the config's cgroupsPath is the systemd one above) is not it. */
static void test_lookalike_cgroup_is_not_the_container(void **state)
{
	struct fixture *f = *state;
	const char *lookalike = "/kubepods/besteffort/pod" FIXTURE_POD_UID "/" FIXTURE_CONTAINER_ID;
	uint64_t id = make_cgroup(f->top, lookalike);

	f->fake.rows[0].cgroup_id = id;
	f->fake.rows[1].cgroup_id = id;
	vnfs_discovery_run(&f->discovery, 1000);
	assert_int_equal(vnfs_registry_used(&f->registry), 0);
	assert_int_equal(f->fake.folds, 0);
	assert_int_equal(f->fake.row_count, 4);
	remove_cgroup(f->top, lookalike);
}

/* [containers] discover = false: nothing is judged or registered. */
static void test_disabled(void **state)
{
	struct fixture *f = *state;

	vnfs_discovery_destroy(&f->discovery);
	f->config.containers.discover = false;
	assert_int_equal(vnfs_discovery_init(&f->discovery, &f->config, &f->steps, record_finish,
					     &f->finished, &f->runtime, 1, f->top),
			 0);
	assert_false(f->discovery.enabled);
	vnfs_discovery_run(&f->discovery, 1000);
	assert_int_equal(vnfs_registry_used(&f->registry), 0);
	assert_int_equal(f->fake.registrations, 0);
}

/* path, a new file, holding text. */
static void write_text(const char *path, const char *text)
{
	FILE *out = fopen(path, "w");

	assert_non_null(out);
	assert_true(fputs(text, out) >= 0);
	assert_int_equal(fclose(out), 0);
}

/* A podman container, under [containers] podman_storage: registered by
 * its store's name and short id, its job finished as soon as its cgroup
 * goes (no pod above it). */
static void test_podman_container(void **state)
{
	struct fixture *f = *state;
	const char *cgroup = "/machine/libpod-" FIXTURE_PODMAN_ID;
	char graphroot[64], path[512];
	struct seen_step seen;
	uint64_t id;

	snprintf(graphroot, sizeof(graphroot), "/tmp/vnfs-test-podman-XXXXXX");
	assert_non_null(mkdtemp(graphroot));
	snprintf(path, sizeof(path), "%s/vfs-containers", graphroot);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/vfs-containers/containers.json", graphroot);
	write_text(path, podman_containers_json);
	snprintf(path, sizeof(path), "%s/vfs-containers/" FIXTURE_PODMAN_ID, graphroot);
	assert_int_equal(mkdir(path, 0700), 0);
	strcat(path, "/userdata");
	assert_int_equal(mkdir(path, 0700), 0);
	strcat(path, "/config.json");
	write_text(path, podman_container);

	vnfs_discovery_destroy(&f->discovery);
	snprintf(f->config.containers.podman_storage, sizeof(f->config.containers.podman_storage),
		 "%s", graphroot);
	assert_int_equal(vnfs_discovery_init(&f->discovery, &f->config, &f->steps, record_finish,
					     &f->finished, &f->runtime, 1, f->top),
			 0);
	assert_int_equal(f->discovery.dir_count, 1 + VNFS_DISCOVERY_PODMAN_DIRS);
	id = make_cgroup(f->top, cgroup);
	f->fake.rows[0].cgroup_id = id;
	f->fake.rows[1].cgroup_id = id;
	vnfs_discovery_run(&f->discovery, 1000);
	seen = only_step(f);
	assert_int_equal(seen.step.workload.source, VNFS_SOURCE_CONTAINER);
	assert_string_equal(seen.step.workload.job, "trainer-7");
	assert_string_equal(seen.step.workload.part, FIXTURE_PODMAN_SHORT_ID);
	assert_int_equal(f->fake.folds, 1);
	assert_int_equal(f->fake.folded_cgroup, id);

	remove_cgroup(f->top, cgroup);
	vnfs_discovery_run(&f->discovery, 2000);
	assert_int_equal(only_step(f).step.state, VNFS_STEP_ENDED);
	assert_int_equal(f->finished.count, 1);
	assert_int_equal(f->finished.job.source, VNFS_SOURCE_CONTAINER);
	assert_string_equal(f->finished.job.job, "trainer-7");
	assert_string_equal(f->finished.job.part, "");
	snprintf(path, sizeof(path), "rm -rf '%s'", graphroot);
	assert_int_equal(system(path), 0);
}

/* A Docker container, under [containers] docker_data_root, in a nested
 * --cgroup-parent: registered by its record's name and short id, its
 * Config.Env's variable as a tag, its job finished as its cgroup goes. */
static void test_docker_container(void **state)
{
	struct fixture *f = *state;
	const char *cgroup = "/vnfs-docker/nested/" FIXTURE_DOCKER_ID;
	char data_root[64], path[512];
	struct seen_step seen;
	uint64_t id;

	snprintf(data_root, sizeof(data_root), "/tmp/vnfs-test-docker-XXXXXX");
	assert_non_null(mkdtemp(data_root));
	snprintf(path, sizeof(path), "%s/containers", data_root);
	assert_int_equal(mkdir(path, 0710), 0);
	strcat(path, "/" FIXTURE_DOCKER_ID);
	assert_int_equal(mkdir(path, 0710), 0);
	strcat(path, "/config.v2.json");
	write_text(path, docker_config_v2);
	strcpy(strrchr(path, '/'), "/hostconfig.json");
	write_text(path, docker_host_config_nested);

	vnfs_discovery_destroy(&f->discovery);
	snprintf(f->config.containers.docker_data_root,
		 sizeof(f->config.containers.docker_data_root), "%s", data_root);
	assert_int_equal(vnfs_discovery_init(&f->discovery, &f->config, &f->steps, record_finish,
					     &f->finished, &f->runtime, 1, f->top),
			 0);
	assert_int_equal(f->discovery.dir_count, 1 + VNFS_DISCOVERY_DOCKER_DIRS);
	id = make_cgroup(f->top, cgroup);
	f->fake.rows[0].cgroup_id = id;
	f->fake.rows[1].cgroup_id = id;
	vnfs_discovery_run(&f->discovery, 1000);
	seen = only_step(f);
	assert_int_equal(seen.step.workload.source, VNFS_SOURCE_CONTAINER);
	assert_string_equal(seen.step.workload.job, "trainer-d");
	assert_string_equal(seen.step.workload.part, FIXTURE_DOCKER_SHORT_ID);
	assert_string_equal(seen.step.cgroup_path, cgroup);
	assert_string_equal(vnfs_tags_find(&seen.step.tags, "PROJECT"), "climate");
	assert_int_equal(f->fake.folds, 1);
	assert_int_equal(f->fake.folded_cgroup, id);

	remove_cgroup(f->top, cgroup);
	vnfs_discovery_run(&f->discovery, 2000);
	assert_int_equal(only_step(f).step.state, VNFS_STEP_ENDED);
	assert_int_equal(f->finished.count, 1);
	assert_int_equal(f->finished.job.source, VNFS_SOURCE_CONTAINER);
	assert_string_equal(f->finished.job.job, "trainer-d");
	snprintf(path, sizeof(path), "rm -rf '%s'", data_root);
	assert_int_equal(system(path), 0);
}

/* A container told as its cgroup was made is known then; its runtime may
 * remove its cgroup (and state) before the next pass: its calls are still
 * its own, registered from what was known, and it ends at once.  A known
 * container gone without a call is forgotten. */
static void test_container_known_as_its_cgroup_is_made(void **state)
{
	struct fixture *f = *state;
	char scope[1024], config[600];
	struct seen_step seen;
	FILE *out;

	f->fake.made[0] = f->container_id;
	f->fake.made[1] = f->plain_id;
	f->fake.made_count = 2;
	f->fake.row_count = 0; /* no call yet */
	vnfs_discovery_take_new_cgroups(&f->discovery);
	assert_int_equal(f->discovery.known_count, 1);
	assert_int_equal(f->discovery.known[0].id, f->container_id);
	assert_string_equal(f->discovery.known[0].workload.part, "writer");

	/* It ran, wrote, exited; its runtime removed its cgroup and state. */
	f->fake.row_count = 2;
	snprintf(scope, sizeof(scope), "%s%s", f->top, CONTAINER_SCOPE);
	assert_int_equal(rmdir(scope), 0);
	snprintf(config, sizeof(config), "%s/%s/config.json", f->state_dir, FIXTURE_CONTAINER_ID);
	assert_int_equal(unlink(config), 0);
	vnfs_discovery_run(&f->discovery, 3000);
	seen = only_step(f);
	assert_string_equal(seen.step.workload.job, "analysis/writer-7d9c5b8f4-x2kqz");
	assert_string_equal(seen.step.cgroup_path, CONTAINER_SCOPE);
	assert_string_equal(vnfs_tags_find(&seen.step.tags, "PROJECT"), "climate");
	assert_int_equal(seen.step.state, VNFS_STEP_ENDED);
	assert_int_equal(f->fake.folds, 1);
	assert_int_equal(f->discovery.calls_folded, 14);
	assert_int_equal(f->discovery.containers_known_early, 1);
	assert_int_equal(f->discovery.known_count, 0);

	/* Known, then gone with no call: forgotten at the next pass. */
	f->fake.made[0] = make_cgroup(f->top, CONTAINER_SCOPE);
	f->fake.made_count = 1;
	out = fopen(config, "w");
	assert_non_null(out);
	assert_true(fputs(containerd_container, out) >= 0);
	assert_int_equal(fclose(out), 0);
	vnfs_discovery_take_new_cgroups(&f->discovery);
	assert_int_equal(f->discovery.known_count, 1);
	remove_cgroup(f->top, CONTAINER_SCOPE);
	vnfs_discovery_run(&f->discovery, 4000);
	assert_int_equal(f->discovery.known_count, 0);

	/* A cgroup told as made that opens nothing (not yet active, or gone
	 * already: the kernel says ESTALE for both) is tried again at the
	 * next wake, and dropped by the next pass. */
	f->fake.made[0] = f->fake.made[0] + 1000000;
	f->fake.made_count = 1;
	vnfs_discovery_take_new_cgroups(&f->discovery);
	assert_int_equal(f->discovery.unopened_count, 1);
	assert_int_equal(f->discovery.waits_left, 0); /* this take's 10 ms spent */
	vnfs_discovery_take_new_cgroups(&f->discovery);
	assert_int_equal(f->discovery.unopened_count, 1);
	vnfs_discovery_run(&f->discovery, 5000);
	assert_int_equal(f->discovery.unopened_count, 0);
	assert_int_equal(f->discovery.known_count, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_container_registered_and_folded, set_up,
						tear_down),
		cmocka_unit_test_setup_teardown(test_ends_follow_the_cgroups, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_lookalike_cgroup_is_not_the_container, set_up,
						tear_down),
		cmocka_unit_test_setup_teardown(test_container_known_as_its_cgroup_is_made, set_up,
						tear_down),
		cmocka_unit_test_setup_teardown(test_podman_container, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_docker_container, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_hook_registered_pod_awaited, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_disabled, set_up, tear_down),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
