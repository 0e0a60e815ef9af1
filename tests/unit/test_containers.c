/*
 * test_containers.c — lib/containers/containers.c: a cgroup id's path in a
 * real cgroup2 hierarchy, systemd's cgroupsPath form, and a container
 * identified from a state directory laid out as containerd's and CRI-O's
 * are, and a podman and a Docker container from their engines' records,
 * trusted only when root's and naming the very cgroup.
 *
 * Runs as root (the suite does) with a cgroup2 hierarchy mounted: without
 * one the test fails, it does not skip.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/containers/containers.h"
#include "lib/containers/docker_state.h"
#include "lib/containers/storage_names.h"
#include "lib/containers/oci_state.h"
#include "docker_fixtures.h"
#include "oci_config_fixtures.h"

#define SYSTEMD_POD_SLICE                                                            \
	"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1c4b9f0e_5a3d_4b8e_" \
	"9f1a_2b3c4d5e6f70.slice"
#define SYSTEMD_CONTAINER SYSTEMD_POD_SLICE "/cri-containerd-" FIXTURE_CONTAINER_ID ".scope"
#define CRIO_CONTAINER                                                            \
	"/kubepods/burstable/pod5d1b7e7c0a8f0e8d3c1b3e8a6b5f5d0e/crio-" FIXTURE_CONTAINER_ID

/* The cgroup2 mount's directory, or the test fails. */
static void cgroup2_mount(char *path, size_t size)
{
	if (vnfs_cgroup2_mount(path, size) < 0)
		fail_msg("no cgroup2 hierarchy is mounted: this test needs one");
}

static void make_path(const char *path)
{
	char partial[4096];

	for (const char *slash = strchr(path + 1, '/');; slash = strchr(slash + 1, '/')) {
		size_t length = slash != NULL ? (size_t)(slash - path) : strlen(path);

		snprintf(partial, sizeof(partial), "%.*s", (int)length, path);
		if (mkdir(partial, 0755) != 0)
			assert_int_equal(access(partial, F_OK), 0);
		if (slash == NULL)
			return;
	}
}

/* A cgroup made in the real hierarchy: its id is its directory's inode,
 * and that id's path is the path made. */
static void test_path_of_id(void **state)
{
	char mount[512], relative[256], made[1024], path[1024], error[256];
	struct stat status;
	int root;

	(void)state;
	cgroup2_mount(mount, sizeof(mount));
	snprintf(relative, sizeof(relative), "/vnfs-test-%d/kubepods/besteffort", (int)getpid());
	snprintf(made, sizeof(made), "%s%s", mount, relative);
	make_path(made);
	assert_int_equal(stat(made, &status), 0);
	root = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(root >= 0);
	assert_int_equal(vnfs_cgroup_path_of_id(root, status.st_ino, path, sizeof(path), error,
						sizeof(error)),
			 0);
	assert_string_equal(path, relative);
	/* Too small a buffer is a message, not a cut path. */
	assert_int_equal(vnfs_cgroup_path_of_id(root, status.st_ino, path, 8, error, sizeof(error)),
			 -1);
	assert_int_equal(rmdir(made), 0);
	*strrchr(made, '/') = '\0';
	assert_int_equal(rmdir(made), 0);
	*strrchr(made, '/') = '\0';
	assert_int_equal(rmdir(made), 0);
	/* A cgroup gone has no path. */
	assert_int_equal(vnfs_cgroup_path_of_id(root, status.st_ino, path, sizeof(path), error,
						sizeof(error)),
			 -1);
	close(root);
}

static void test_cgroups_path_forms(void **state)
{
	(void)state;
	assert_true(vnfs_cgroups_path_names(
		"kubepods-besteffort-pod1c4b9f0e_5a3d_4b8e_9f1a_2b3c4d5e6f70.slice:cri-containerd:"
		FIXTURE_CONTAINER_ID,
		SYSTEMD_CONTAINER));
	/* Guaranteed pods sit right under kubepods.slice. */
	assert_true(vnfs_cgroups_path_names("kubepods-podabc.slice:crio:x",
					    "/kubepods.slice/kubepods-podabc.slice/crio-x.scope"));
	assert_true(vnfs_cgroups_path_names("-.slice:docker:x", "/docker-x.scope"));
	assert_true(vnfs_cgroups_path_names(CRIO_CONTAINER, CRIO_CONTAINER));
	assert_false(vnfs_cgroups_path_names(CRIO_CONTAINER, CRIO_CONTAINER "/x"));
	assert_false(vnfs_cgroups_path_names("kubepods-podabc.slice:crio:x",
					     "/kubepods-podabc.slice/crio-x.scope"));
	assert_false(vnfs_cgroups_path_names("kubepods.slice:crio", "/kubepods.slice/crio-.scope"));
	assert_false(vnfs_cgroups_path_names("kubepods:crio:x", "/kubepods/crio-x.scope"));
	assert_false(vnfs_cgroups_path_names("a.slice:b:c:d", "/a.slice/b-c:d.scope"));
	assert_false(vnfs_cgroups_path_names("", "/"));
}

struct state_dir {
	char top[64];     /* the runtime's state directory */
	char config[512]; /* <top>/<id>/<file> */
};

/* top/<id>/<file> holding text, every directory root's and 0700. */
static void make_state(struct state_dir *dir, const char *file, const char *text)
{
	char path[512];
	FILE *out;

	snprintf(dir->top, sizeof(dir->top), "/tmp/vnfs-test-state-XXXXXX");
	assert_non_null(mkdtemp(dir->top));
	snprintf(dir->config, sizeof(dir->config), "%s/%s/%s", dir->top, FIXTURE_CONTAINER_ID,
		 file);
	snprintf(path, sizeof(path), "%s", dir->config);
	*strrchr(path, '/') = '\0';
	make_path(path);
	out = fopen(dir->config, "w");
	assert_non_null(out);
	assert_true(fputs(text, out) >= 0);
	assert_int_equal(fclose(out), 0);
}

static void remove_state(const struct state_dir *dir)
{
	char command[128];

	snprintf(command, sizeof(command), "rm -rf '%s'", dir->top);
	assert_int_equal(system(command), 0);
}

static void test_containerd_container(void **state)
{
	struct state_dir dir;
	struct vnfs_runtime_state_dir table;
	struct vnfs_workload workload;
	char error[256] = "";

	(void)state;
	make_state(&dir, "config.json", containerd_container);
	table = (struct vnfs_runtime_state_dir){ VNFS_RUNTIME_CONTAINERD, dir.top, "config.json",
						 VNFS_OCI_ANNOTATIONS_CONTAINERD, NULL };
	assert_int_equal(vnfs_identify_container(SYSTEMD_CONTAINER, &table, 1, NULL, 0, &workload, NULL, error,
						 sizeof(error)),
			 1);
	assert_int_equal(workload.source, VNFS_SOURCE_KUBERNETES);
	assert_string_equal(workload.job, "analysis/writer-7d9c5b8f4-x2kqz");
	assert_string_equal(workload.part, "writer");

	/* A cgroup named after the container elsewhere is not it: its config
	 * names the systemd one. */
	assert_int_equal(vnfs_identify_container("/kubepods/besteffort/pod" FIXTURE_POD_UID "/"
						 FIXTURE_CONTAINER_ID,
						 &table, 1, NULL, 0, &workload, NULL, error, sizeof(error)),
			 0);
	/* Not a container, or a runtime whose state is not this one's. */
	assert_int_equal(vnfs_identify_container("/system.slice/slurmstepd.scope/job_42/step_0",
						 &table, 1, NULL, 0, &workload, NULL, error, sizeof(error)),
			 0);
	assert_int_equal(vnfs_identify_container("/machine.slice/libpod-" FIXTURE_CONTAINER_ID
						 ".scope",
						 &table, 1, NULL, 0, &workload, NULL, error, sizeof(error)),
			 0);
	table.runtime = VNFS_RUNTIME_CRIO;
	assert_int_equal(vnfs_identify_container(SYSTEMD_CONTAINER, &table, 1, NULL, 0, &workload, NULL, error,
						 sizeof(error)),
			 0);
	remove_state(&dir);
	/* The container gone: its state is too. */
	table.runtime = VNFS_RUNTIME_CONTAINERD;
	assert_int_equal(vnfs_identify_container(SYSTEMD_CONTAINER, &table, 1, NULL, 0, &workload, NULL, error,
						 sizeof(error)),
			 0);
}

static void test_crio_container_in_a_subdirectory(void **state)
{
	struct state_dir dir;
	struct vnfs_runtime_state_dir table;
	struct vnfs_workload workload;
	char error[256] = "";

	(void)state;
	make_state(&dir, "userdata/config.json", crio_container);
	table = (struct vnfs_runtime_state_dir){ VNFS_RUNTIME_CRIO, dir.top, "userdata/config.json",
						 VNFS_OCI_ANNOTATIONS_CRIO, NULL };
	assert_int_equal(vnfs_identify_container(CRIO_CONTAINER, &table, 1, NULL, 0, &workload, NULL, error,
						 sizeof(error)),
			 1);
	assert_string_equal(workload.job, "kube-system/indexer-0");
	assert_string_equal(workload.part, "indexer");
	remove_state(&dir);
}

/* A state directory someone else may write, or a link in place of the
 * container's directory, is refused: its config is nobody's word. */
static void test_untrusted_state_is_refused(void **state)
{
	struct state_dir dir;
	struct vnfs_runtime_state_dir table;
	struct vnfs_workload workload;
	char error[512] = "", path[600], moved[600];

	(void)state;
	make_state(&dir, "config.json", containerd_container);
	table = (struct vnfs_runtime_state_dir){ VNFS_RUNTIME_CONTAINERD, dir.top, "config.json",
						 VNFS_OCI_ANNOTATIONS_CONTAINERD, NULL };
	snprintf(path, sizeof(path), "%s/%s", dir.top, FIXTURE_CONTAINER_ID);
	assert_int_equal(chmod(path, 0777), 0);
	assert_int_equal(vnfs_identify_container(SYSTEMD_CONTAINER, &table, 1, NULL, 0, &workload, NULL, error,
						 sizeof(error)),
			 -1);
	assert_non_null(strstr(error, "owned by uid 0 with mode 777: a runtime's state must be "
				      "root's and written by no one else"));
	assert_int_equal(chmod(path, 0700), 0);
	assert_int_equal(chown(path, 1000, 0), 0);
	assert_int_equal(vnfs_identify_container(SYSTEMD_CONTAINER, &table, 1, NULL, 0, &workload, NULL, error,
						 sizeof(error)),
			 -1);
	assert_non_null(strstr(error, "owned by uid 1000"));
	assert_int_equal(chown(path, 0, 0), 0);
	snprintf(moved, sizeof(moved), "%s/elsewhere", dir.top);
	assert_int_equal(rename(path, moved), 0);
	assert_int_equal(symlink(moved, path), 0);
	assert_int_equal(vnfs_identify_container(SYSTEMD_CONTAINER, &table, 1, NULL, 0, &workload, NULL, error,
						 sizeof(error)),
			 -1);
	remove_state(&dir);
}

/* The directories above the state count too: one others may write without
 * the sticky bit (its entries could be swapped), or a link on the way, and
 * the state is not believed; /tmp's sticky 1777 is fine (make_state's). */
static void test_untrusted_path_to_state_is_refused(void **state)
{
	struct state_dir dir;
	struct vnfs_runtime_state_dir table;
	struct vnfs_workload workload;
	char error[512] = "", parent[128], link[128], linked[192];

	(void)state;
	make_state(&dir, "config.json", containerd_container);
	table = (struct vnfs_runtime_state_dir){ VNFS_RUNTIME_CONTAINERD, dir.top, "config.json",
						 VNFS_OCI_ANNOTATIONS_CONTAINERD, NULL };
	assert_int_equal(vnfs_identify_container(SYSTEMD_CONTAINER, &table, 1, NULL, 0, &workload,
						 NULL, error, sizeof(error)),
			 1);
	/* Nested one level deeper, under a world-writable, not sticky parent. */
	snprintf(parent, sizeof(parent), "%s-parent", dir.top);
	assert_int_equal(mkdir(parent, 0777), 0);
	assert_int_equal(chmod(parent, 0777), 0);
	snprintf(linked, sizeof(linked), "%s/state", parent);
	assert_int_equal(rename(dir.top, linked), 0);
	table.directory = linked;
	assert_int_equal(vnfs_identify_container(SYSTEMD_CONTAINER, &table, 1, NULL, 0, &workload,
						 NULL, error, sizeof(error)),
			 -1);
	assert_non_null(strstr(error, "with mode 777: a runtime's state must be root's"));
	assert_int_equal(chmod(parent, 01777), 0);
	assert_int_equal(vnfs_identify_container(SYSTEMD_CONTAINER, &table, 1, NULL, 0, &workload,
						 NULL, error, sizeof(error)),
			 1);
	/* A link on the way. */
	assert_int_equal(chmod(parent, 0755), 0);
	snprintf(link, sizeof(link), "%s-link", dir.top);
	assert_int_equal(symlink(parent, link), 0);
	snprintf(linked, sizeof(linked), "%s/state", link);
	table.directory = linked;
	assert_int_equal(vnfs_identify_container(SYSTEMD_CONTAINER, &table, 1, NULL, 0, &workload,
						 NULL, error, sizeof(error)),
			 -1);
	assert_int_equal(unlink(link), 0);
	snprintf(linked, sizeof(linked), "%s/state", parent);
	assert_int_equal(rename(linked, dir.top), 0);
	assert_int_equal(rmdir(parent), 0);
	remove_state(&dir);
}

static void expect_state_refused(const char *text, const char *message)
{
	struct vnfs_oci_state state;
	char error[256] = "";

	assert_int_equal(vnfs_oci_state_parse(text, strlen(text), &state, error, sizeof(error)), -1);
	assert_string_equal(error, message);
	assert_string_equal(state.id, "");
}

/* The state a runtime hands its hooks: what each field may be. */
static void test_oci_state(void **state)
{
	static const char creating[] =
		"{\"ociVersion\":\"1.0.2\",\"id\":\"" FIXTURE_CONTAINER_ID "\",\"status\":"
		"\"creating\",\"pid\":4242,\"bundle\":\"/run/bundles/x\",\"annotations\":"
		"{\"io.kubernetes.cri.container-type\":\"container\"}}";
	struct vnfs_oci_state parsed;
	char error[256];

	(void)state;
	assert_int_equal(vnfs_oci_state_parse(creating, strlen(creating), &parsed, error,
					      sizeof(error)),
			 0);
	assert_string_equal(parsed.id, FIXTURE_CONTAINER_ID);
	assert_int_equal(parsed.status, VNFS_OCI_STATUS_CREATING);
	assert_int_equal(parsed.pid, 4242);
	assert_string_equal(parsed.bundle, "/run/bundles/x");
	static const char stopped[] = "{\"id\":\"a\",\"status\":\"stopped\",\"bundle\":\"/b\"}";
	assert_int_equal(vnfs_oci_state_parse(stopped, strlen(stopped), &parsed, error,
					      sizeof(error)),
			 0);
	assert_int_equal(parsed.status, VNFS_OCI_STATUS_STOPPED);
	assert_int_equal(parsed.pid, 0);

	expect_state_refused("{\"id\":\"a\",\"status\":\"creating\",\"bundle\":\"/b\"}",
			     "field 'pid' must be an integer from 0 to 4294967295");
	expect_state_refused("{\"id\":\"a\",\"status\":\"creating\",\"pid\":0,"
			     "\"bundle\":\"/b\"}",
			     "field 'pid' must name a process");
	expect_state_refused("{\"id\":\"a\",\"status\":\"paused\",\"pid\":1,\"bundle\":\"/b\"}",
			     "field 'status' must be creating, created, running or stopped");
	expect_state_refused("{\"id\":\"a\",\"status\":\"created\",\"pid\":1,\"bundle\":\"b\"}",
			     "field 'bundle' must be an absolute path");
	expect_state_refused("{\"id\":7,\"status\":\"created\",\"pid\":1,\"bundle\":\"/b\"}",
			     "field 'id' must be a string");
	expect_state_refused("[1]", "the state must be a JSON object");
	expect_state_refused("{\"id\":\"a\"", "truncated JSON: the message ends before the "
						"object is complete");
}

/* containers/storage's containers.json: the listed container's first name;
 * an unlisted one; and refusals, each saying why. */
static void test_storage_names(void **state)
{
	char name[VNFS_CONTAINER_NAME_MAX + 1], error[256];
	static const struct {
		const char *text;
		const char *message;
	} refused[] = {
		{ "{}", "containers.json: the document is not an array" },
		{ "[1]", "containers.json: entry 0 has no id" },
		{ "[{\"id\":\"" FIXTURE_PODMAN_ID "\"}]", "containers.json: entry 0 has no names" },
		{ "[{\"id\":\"" FIXTURE_PODMAN_ID "\",\"names\":[]}]",
		  "containers.json: entry 0 has no names" },
		{ "[{\"id\":\"" FIXTURE_PODMAN_ID "\",\"names\":[7]}]",
		  "containers.json: entry 0: names[0] is not a string" },
		{ "[{\"id\":\"" FIXTURE_PODMAN_ID "\",\"names\":[\"a b\"]}]",
		  "containers.json: entry 0: its name is not a container name (a letter or "
		  "digit, then letters, digits, '_', '.' or '-', at most 128)" },
		{ "[{\"id\":\"" FIXTURE_PODMAN_ID "\",\"names\":[\"a\\u0000b\"]}]",
		  "containers.json: entry 0: its name is not a container name (a letter or "
		  "digit, then letters, digits, '_', '.' or '-', at most 128)" },
		{ "[] x", "containers.json: invalid JSON at byte 3: unexpected character" },
	};

	(void)state;
	assert_int_equal(vnfs_storage_container_name(podman_containers_json,
						     strlen(podman_containers_json),
						     FIXTURE_PODMAN_ID, name, sizeof(name), error,
						     sizeof(error)),
			 1);
	assert_string_equal(name, "trainer-7");
	assert_int_equal(vnfs_storage_container_name(podman_containers_json,
						     strlen(podman_containers_json),
						     FIXTURE_CONTAINER_ID, name, sizeof(name), error,
						     sizeof(error)),
			 0);
	assert_string_equal(name, "");
	/* An id with a NUL inside is not the id it starts with. */
	assert_int_equal(vnfs_storage_container_name(
				 "[{\"id\":\"" FIXTURE_PODMAN_ID "\\u0000x\",\"names\":[\"a\"]}]",
				 strlen("[{\"id\":\"" FIXTURE_PODMAN_ID "\\u0000x\",\"names\":[\"a\"]}]"),
				 FIXTURE_PODMAN_ID, name, sizeof(name), error, sizeof(error)),
			 0);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		assert_int_equal(vnfs_storage_container_name(refused[i].text,
							     strlen(refused[i].text),
							     FIXTURE_PODMAN_ID, name, sizeof(name),
							     error, sizeof(error)),
				 -1);
		assert_string_equal(error, refused[i].message);
		assert_string_equal(name, "");
	}
}

/* A podman container outside Kubernetes: named by its store, its short id
 * the part, its variables as tags; a cgroup named after it elsewhere, or a
 * store that does not list it, is not it. */
static void test_podman_container(void **state)
{
	const char *path = "/machine/libpod-" FIXTURE_PODMAN_ID;
	struct vnfs_runtime_state_dir table;
	struct vnfs_workload workload;
	struct vnfs_tag_list tags;
	const char *wanted[] = { "JOB_NAME" };
	char graphroot[64], directory[128], file[256], error[256] = "";
	FILE *out;

	(void)state;
	snprintf(graphroot, sizeof(graphroot), "/tmp/vnfs-test-podman-XXXXXX");
	assert_non_null(mkdtemp(graphroot));
	assert_int_equal(vnfs_podman_state_dir(graphroot, "vfs", &table, directory,
					       sizeof(directory)),
			 0);
	snprintf(file, sizeof(file), "%s/" FIXTURE_PODMAN_ID "/userdata", directory);
	make_path(file);
	snprintf(file, sizeof(file), "%s/" FIXTURE_PODMAN_ID "/userdata/config.json", directory);
	out = fopen(file, "w");
	assert_non_null(out);
	assert_true(fputs(podman_container, out) >= 0);
	assert_int_equal(fclose(out), 0);
	assert_int_equal(vnfs_identify_container(path, &table, 1, wanted, 1, &workload, &tags,
						 error, sizeof(error)),
			 0); /* no containers.json yet: not listed */
	snprintf(file, sizeof(file), "%s/containers.json", directory);
	out = fopen(file, "w");
	assert_non_null(out);
	assert_true(fputs(podman_containers_json, out) >= 0);
	assert_int_equal(fclose(out), 0);
	assert_int_equal(vnfs_identify_container(path, &table, 1, wanted, 1, &workload, &tags,
						 error, sizeof(error)),
			 1);
	assert_int_equal(workload.source, VNFS_SOURCE_CONTAINER);
	assert_string_equal(workload.job, "trainer-7");
	assert_string_equal(workload.part, FIXTURE_PODMAN_SHORT_ID);
	assert_string_equal(vnfs_tags_find(&tags, "JOB_NAME"), "x1");
	/* Its name, under another parent: the config names the first one. */
	assert_int_equal(vnfs_identify_container("/user.slice/libpod-" FIXTURE_PODMAN_ID, &table,
						 1, NULL, 0, &workload, NULL, error, sizeof(error)),
			 0);
	/* A Kubernetes runtime's table does not describe podman containers. */
	table.engine_file = NULL;
	assert_int_equal(vnfs_identify_container(path, &table, 1, NULL, 0, &workload, NULL, error,
						 sizeof(error)),
			 0);
	/* A store others may write is not believed. */
	table.engine_file = "containers.json";
	assert_int_equal(chmod(directory, 0777), 0);
	assert_int_equal(vnfs_identify_container(path, &table, 1, NULL, 0, &workload, NULL, error,
						 sizeof(error)),
			 -1);
	snprintf(file, sizeof(file), "rm -rf '%s'", graphroot);
	assert_int_equal(system(file), 0);
}

/* dockerd's cgroups: either driver's, the default parent or CgroupParent;
 * nothing else, however alike. */
static void test_docker_cgroup_forms(void **state)
{
	static const struct {
		const char *parent;
		const char *path;
		bool names;
	} cases[] = {
		{ "", "/docker/" FIXTURE_DOCKER_ID, true },
		{ "", "/system.slice/docker-" FIXTURE_DOCKER_ID ".scope", true },
		{ "/vnfs-docker", "/vnfs-docker/" FIXTURE_DOCKER_ID, true },
		{ "/a/b", "/a/b/" FIXTURE_DOCKER_ID, true },
		/* filepath.Join's cleaning of the parent. */
		{ "/a//b/", "/a/b/" FIXTURE_DOCKER_ID, true },
		{ "/", "/" FIXTURE_DOCKER_ID, true },
		{ "foo-bar.slice", "/foo.slice/foo-bar.slice/docker-" FIXTURE_DOCKER_ID ".scope", true },
		{ "-.slice", "/docker-" FIXTURE_DOCKER_ID ".scope", true },
		/* A parent hostconfig does not name, or the other driver's form of
		 * a parent that has one form only. */
		{ "", "/vnfs-docker/" FIXTURE_DOCKER_ID, false },
		{ "/vnfs-docker", "/docker/" FIXTURE_DOCKER_ID, false },
		{ "/vnfs-docker", "/system.slice/docker-" FIXTURE_DOCKER_ID ".scope", false },
		{ "/a/b", "/a/" FIXTURE_DOCKER_ID, false },
		{ "/a/b", "/a/b/c/" FIXTURE_DOCKER_ID, false },
		{ "foo-bar.slice", "/foo-bar.slice/docker-" FIXTURE_DOCKER_ID ".scope", false },
		{ "foo-bar.slice", "/system.slice/docker-" FIXTURE_DOCKER_ID ".scope", false },
		{ "foo-bar.slice", "/foo-bar.slice/" FIXTURE_DOCKER_ID, false },
		{ "relative", "/relative/" FIXTURE_DOCKER_ID, false },
		/* Another id, or the id's cgroup with something after it. */
		{ "", "/docker/" FIXTURE_PODMAN_ID, false },
		{ "", "/docker/" FIXTURE_DOCKER_ID "/x", false },
		{ "", "/system.slice/docker-" FIXTURE_DOCKER_ID ".scope/x", false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("'%s' %s\n", cases[i].parent, cases[i].path);
		assert_int_equal(vnfs_docker_cgroup_names(cases[i].parent, FIXTURE_DOCKER_ID,
							  cases[i].path),
				 cases[i].names);
	}
}

static int parse_docker(const char *config, const char *host_config, const char *id,
			struct vnfs_docker_container *container, char *error, size_t error_size)
{
	static const char *const wanted[] = { "JOB_NAME", "UNSET_HERE", "PROJECT", "ABSENT" };

	return vnfs_docker_container_parse(config, strlen(config), host_config,
					   strlen(host_config), id, wanted, 4, container, error,
					   error_size);
}

/* dockerd's config.v2.json and hostconfig.json: the name without its '/',
 * the variables asked for, the parent; another ID is not this container;
 * refusals, each naming the file and saying why. */
static void test_docker_state(void **state)
{
	struct vnfs_docker_container container;
	char error[256] = "";
	static const struct {
		const char *config;
		const char *host_config;
		const char *message;
	} refused[] = {
		{ "[]", "{}", "config.v2.json: the document is not an object" },
		{ "{\"ID\":\"" FIXTURE_DOCKER_ID "\",\"Name\":\"/x\"}", "{",
		  "hostconfig.json: invalid JSON at byte 1: the document is truncated" },
		{ "{\"Name\":\"/trainer-d\"}", "{}", "config.v2.json: no ID" },
		{ "{\"ID\":7}", "{}", "config.v2.json: ID is not a string" },
		{ "{\"ID\":\"" FIXTURE_DOCKER_ID "\"}", "{}", "config.v2.json: no Name" },
		{ "{\"ID\":\"" FIXTURE_DOCKER_ID "\",\"Name\":\"/a b\"}", "{}",
		  "config.v2.json: its Name is not a container name (a letter or digit, then "
		  "letters, digits, '_', '.' or '-', at most 128)" },
		{ "{\"ID\":\"" FIXTURE_DOCKER_ID "\",\"Name\":\"/\"}", "{}",
		  "config.v2.json: its Name is not a container name (a letter or digit, then "
		  "letters, digits, '_', '.' or '-', at most 128)" },
		{ "{\"ID\":\"" FIXTURE_DOCKER_ID "\",\"Name\":\"/a\\u0000b\"}", "{}",
		  "config.v2.json: Name holds a NUL character" },
		{ "{\"ID\":\"" FIXTURE_DOCKER_ID "\",\"Name\":\"/x\",\"Config\":[]}", "{}",
		  "config.v2.json: Config is not an object" },
		{ "{\"ID\":\"" FIXTURE_DOCKER_ID "\",\"Name\":\"/x\",\"Config\":{\"Env\":{}}}", "{}",
		  "config.v2.json: Config.Env is not an array" },
		{ "{\"ID\":\"" FIXTURE_DOCKER_ID "\",\"Name\":\"/x\",\"Config\":{\"Env\":[1]}}", "{}",
		  "config.v2.json: Config.Env[0] is not a string" },
		{ "{\"ID\":\"" FIXTURE_DOCKER_ID "\",\"Name\":\"/x\"}", "{\"CgroupParent\":7}",
		  "hostconfig.json: CgroupParent is not a string" },
		{ "{\"ID\":\"" FIXTURE_DOCKER_ID "\",\"Name\":\"/x\"}",
		  "{\"CgroupParent\":\"/a b\"}",
		  "hostconfig.json: CgroupParent (4 bytes) is not printable ASCII without spaces, "
		  "shorter than 4096 bytes" },
		{ "{\"ID\":\"" FIXTURE_DOCKER_ID "\",\"Name\":\"/x\"} x", "{}",
		  "config.v2.json: invalid JSON at byte 86: unexpected character" },
	};

	(void)state;
	assert_int_equal(parse_docker(docker_config_v2, docker_host_config, FIXTURE_DOCKER_ID,
				      &container, error, sizeof(error)),
			 1);
	assert_string_equal(container.name, "trainer-d");
	assert_string_equal(container.cgroup_parent, "");
	assert_int_equal(container.env_count, 4);
	assert_int_equal(container.env[0].status, VNFS_OCI_ENV_SET);
	assert_string_equal(container.env[0].value, "resnet");
	assert_int_equal(container.env[1].status, VNFS_OCI_ENV_UNSET); /* "UNSET_HERE": no '=' */
	assert_string_equal(container.env[2].value, "climate");
	assert_int_equal(container.env[3].status, VNFS_OCI_ENV_UNSET);
	assert_int_equal(parse_docker(docker_config_v2, docker_host_config_slice,
				      FIXTURE_DOCKER_ID, &container, error, sizeof(error)),
			 1);
	assert_string_equal(container.cgroup_parent, "foo-bar.slice");

	/* The last entry of a name counts; a NUL refuses a value, not the file. */
	static const char env[] =
		"{\"ID\":\"" FIXTURE_DOCKER_ID "\",\"Name\":\"trainer-d\",\"Config\":{\"Env\":["
		"\"JOB_NAME=first\",\"JOB_NAME=last\",\"UNSET_HERE=x\",\"UNSET_HERE\","
		"\"PROJECT=a\\u0000b\"]}}";
	assert_int_equal(parse_docker(env, "{}", FIXTURE_DOCKER_ID, &container, error,
				      sizeof(error)),
			 1);
	assert_string_equal(container.name, "trainer-d"); /* no '/': kept as it is */
	assert_string_equal(container.env[0].value, "last");
	assert_int_equal(container.env[1].status, VNFS_OCI_ENV_UNSET);
	assert_int_equal(container.env[2].status, VNFS_OCI_ENV_REFUSED);

	/* Another container's record, or an ID with more after a NUL. */
	assert_int_equal(parse_docker(docker_config_v2, docker_host_config, FIXTURE_PODMAN_ID,
				      &container, error, sizeof(error)),
			 0);
	assert_string_equal(container.name, "");
	assert_int_equal(parse_docker("{\"ID\":\"" FIXTURE_DOCKER_ID "\\u0000x\",\"Name\":\"/x\"}",
				      "{}", FIXTURE_DOCKER_ID, &container, error, sizeof(error)),
			 0);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		print_message("%s\n", refused[i].message);
		assert_int_equal(parse_docker(refused[i].config, refused[i].host_config,
					      FIXTURE_DOCKER_ID, &container, error,
					      sizeof(error)),
				 -1);
		assert_string_equal(error, refused[i].message);
		assert_string_equal(container.name, "");
	}
}

/* <data_root>/containers/<id>/ with config and host_config in it, every
 * directory root's and 0700 (dockerd's are 0710). */
static void make_docker_record(const char *data_root, const char *config,
			       const char *host_config)
{
	char path[256];
	FILE *out;

	snprintf(path, sizeof(path), "%s/containers/" FIXTURE_DOCKER_ID, data_root);
	make_path(path);
	snprintf(path, sizeof(path), "%s/containers/" FIXTURE_DOCKER_ID "/config.v2.json",
		 data_root);
	assert_non_null(out = fopen(path, "w"));
	assert_true(fputs(config, out) >= 0);
	assert_int_equal(fclose(out), 0);
	snprintf(path, sizeof(path), "%s/containers/" FIXTURE_DOCKER_ID "/hostconfig.json",
		 data_root);
	assert_non_null(out = fopen(path, "w"));
	assert_true(fputs(host_config, out) >= 0);
	assert_int_equal(fclose(out), 0);
}

static int identify_docker(const char *path, const struct vnfs_runtime_state_dir *table,
			   struct vnfs_workload *workload, struct vnfs_tag_list *tags,
			   char *error, size_t error_size)
{
	static const char *const wanted[] = { "JOB_NAME" };

	return vnfs_identify_container(path, table, 1, wanted, 1, workload, tags, error,
				       error_size);
}

/* A Docker container outside Kubernetes: named by its record, its short id
 * the part, its variables as tags, under the default parent or its own; a
 * cgroup under a parent its hostconfig does not name is not it. */
static void test_docker_container(void **state)
{
	const char *path = "/docker/" FIXTURE_DOCKER_ID;
	struct vnfs_runtime_state_dir table;
	struct vnfs_workload workload;
	struct vnfs_tag_list tags;
	char data_root[64], directory[128], command[256], error[512] = "";

	(void)state;
	snprintf(data_root, sizeof(data_root), "/tmp/vnfs-test-docker-XXXXXX");
	assert_non_null(mkdtemp(data_root));
	assert_int_equal(chmod(data_root, 0700), 0);
	assert_int_equal(vnfs_docker_state_dir(data_root, &table, directory, sizeof(directory)),
			 0);
	assert_int_equal(vnfs_docker_state_dir("relative", &table, directory, sizeof(directory)),
			 -1);
	assert_int_equal(vnfs_docker_state_dir(data_root, &table, directory, sizeof(directory)),
			 0);
	assert_int_equal(table.runtime, VNFS_RUNTIME_DOCKER);
	/* No containers directory yet, then no such container: not identified. */
	assert_int_equal(identify_docker(path, &table, &workload, &tags, error, sizeof(error)), 0);
	make_docker_record(data_root, docker_config_v2, docker_host_config);
	assert_int_equal(identify_docker(path, &table, &workload, &tags, error, sizeof(error)), 1);
	assert_int_equal(workload.source, VNFS_SOURCE_CONTAINER);
	assert_string_equal(workload.job, "trainer-d");
	assert_string_equal(workload.part, FIXTURE_DOCKER_SHORT_ID);
	assert_string_equal(vnfs_tags_find(&tags, "JOB_NAME"), "resnet");
	assert_int_equal(identify_docker("/system.slice/docker-" FIXTURE_DOCKER_ID ".scope", &table,
					 &workload, &tags, error, sizeof(error)),
			 1);
	/* Its id under a parent its hostconfig does not name (a cgroup a user
	 * made and named after it) is not it. */
	assert_int_equal(identify_docker("/vnfs-docker/nested/" FIXTURE_DOCKER_ID, &table,
					 &workload, &tags, error, sizeof(error)),
			 0);
	/* A nested parent of its own. */
	make_docker_record(data_root, docker_config_v2, docker_host_config_nested);
	assert_int_equal(identify_docker("/vnfs-docker/nested/" FIXTURE_DOCKER_ID, &table,
					 &workload, &tags, error, sizeof(error)),
			 1);
	assert_string_equal(workload.job, "trainer-d");
	assert_int_equal(identify_docker(path, &table, &workload, &tags, error, sizeof(error)), 0);
	/* A podman or Kubernetes table does not describe it. */
	table.runtime = VNFS_RUNTIME_PODMAN;
	assert_int_equal(identify_docker("/vnfs-docker/nested/" FIXTURE_DOCKER_ID, &table,
					 &workload, &tags, error, sizeof(error)),
			 0);
	table.runtime = VNFS_RUNTIME_DOCKER;

	/* A record whose ID is another's names no cgroup of this id: not
	 * identified, as if it had none (dockerd never writes one there). */
	make_docker_record(data_root, "{\"ID\":\"" FIXTURE_PODMAN_ID "\",\"Name\":\"/other\"}",
			   docker_host_config);
	assert_int_equal(identify_docker(path, &table, &workload, &tags, error, sizeof(error)), 0);
	/* A malformed record: an error naming the file. */
	make_docker_record(data_root, "{\"ID\":", docker_host_config);
	assert_int_equal(identify_docker(path, &table, &workload, &tags, error, sizeof(error)), -1);
	assert_non_null(strstr(error, "/containers/" FIXTURE_DOCKER_ID ": config.v2.json: "
				      "invalid JSON"));
	make_docker_record(data_root, docker_config_v2, docker_host_config);

	/* The container's files gone (being made or removed): not identified. */
	snprintf(command, sizeof(command), "%s/" FIXTURE_DOCKER_ID "/hostconfig.json", directory);
	assert_int_equal(unlink(command), 0);
	assert_int_equal(identify_docker(path, &table, &workload, &tags, error, sizeof(error)), 0);
	make_docker_record(data_root, docker_config_v2, docker_host_config);

	/* A containers directory others may write is not believed. */
	assert_int_equal(chmod(directory, 0770), 0);
	assert_int_equal(identify_docker(path, &table, &workload, &tags, error, sizeof(error)), -1);
	assert_non_null(strstr(error, "with mode 770: a runtime's state must be root's"));
	assert_int_equal(chmod(directory, 0710), 0);
	assert_int_equal(identify_docker(path, &table, &workload, &tags, error, sizeof(error)), 1);

	/* A link in place of the container's directory is not followed. */
	char real[256], link[256];
	snprintf(link, sizeof(link), "%s/" FIXTURE_DOCKER_ID, directory);
	snprintf(real, sizeof(real), "%s/elsewhere", data_root);
	assert_int_equal(rename(link, real), 0);
	assert_int_equal(symlink(real, link), 0);
	assert_int_equal(identify_docker(path, &table, &workload, &tags, error, sizeof(error)), -1);
	print_message("%s\n", error);
	assert_non_null(strstr(error, "Not a directory"));
	assert_int_equal(unlink(link), 0);
	/* And the directory gone with its container: not identified. */
	assert_int_equal(identify_docker(path, &table, &workload, &tags, error, sizeof(error)), 0);

	snprintf(command, sizeof(command), "rm -rf '%s'", data_root);
	assert_int_equal(system(command), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_of_id),
		cmocka_unit_test(test_cgroups_path_forms),
		cmocka_unit_test(test_containerd_container),
		cmocka_unit_test(test_crio_container_in_a_subdirectory),
		cmocka_unit_test(test_untrusted_state_is_refused),
		cmocka_unit_test(test_untrusted_path_to_state_is_refused),
		cmocka_unit_test(test_oci_state),
		cmocka_unit_test(test_storage_names),
		cmocka_unit_test(test_podman_container),
		cmocka_unit_test(test_docker_cgroup_forms),
		cmocka_unit_test(test_docker_state),
		cmocka_unit_test(test_docker_container),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
