/*
 * test_container_cgroup.c — what cgroup paths say about containers
 * (lib/containers/container_cgroup.c): every pattern with the exact fields
 * it yields, and near-misses of each, which must not be containers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/containers/container_cgroup.h"

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define SHORT_ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde"
#define UPPERCASE_ID "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef"
#define NOT_HEX_ID "g123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define UID "1c4b9f0e-5a3d-4b8e-9f1a-2b3c4d5e6f70"
#define UID_SYSTEMD "1c4b9f0e_5a3d_4b8e_9f1a_2b3c4d5e6f70"
#define STATIC_UID "5d1b7e7c0a8f0e8d3c1b3e8a6b5f5d0e"

#define BURSTABLE_SLICE "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" \
	UID_SYSTEMD ".slice"
#define BESTEFFORT_SLICE "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" \
	UID_SYSTEMD ".slice"
#define GUARANTEED_SLICE "/kubepods.slice/kubepods-pod" UID_SYSTEMD ".slice"

struct expected {
	const char *path;
	enum vnfs_container_kind kind;
	enum vnfs_container_runtime runtime;
	bool kubernetes;
	enum vnfs_pod_qos qos;
	const char *pod_uid;
	const char *container_id;
};

static const struct expected recognized[] = {
	/* Kubernetes, systemd driver. */
	{BURSTABLE_SLICE "/cri-containerd-" ID ".scope", VNFS_CGROUP_CONTAINER,
	 VNFS_RUNTIME_CONTAINERD, true, VNFS_QOS_BURSTABLE, UID, ID},
	{BESTEFFORT_SLICE "/crio-" ID ".scope", VNFS_CGROUP_CONTAINER, VNFS_RUNTIME_CRIO, true,
	 VNFS_QOS_BESTEFFORT, UID, ID},
	{GUARANTEED_SLICE "/docker-" ID ".scope", VNFS_CGROUP_CONTAINER, VNFS_RUNTIME_DOCKER, true,
	 VNFS_QOS_GUARANTEED, UID, ID},
	{GUARANTEED_SLICE "/cri-containerd-" ID ".scope", VNFS_CGROUP_CONTAINER,
	 VNFS_RUNTIME_CONTAINERD, true, VNFS_QOS_GUARANTEED, UID, ID},
	{"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" STATIC_UID
	 ".slice/cri-containerd-" ID ".scope",
	 VNFS_CGROUP_CONTAINER, VNFS_RUNTIME_CONTAINERD, true, VNFS_QOS_BURSTABLE, STATIC_UID, ID},
	/* Pod levels. */
	{BURSTABLE_SLICE, VNFS_CGROUP_POD, VNFS_RUNTIME_UNKNOWN, true, VNFS_QOS_BURSTABLE, UID, ""},
	{BESTEFFORT_SLICE, VNFS_CGROUP_POD, VNFS_RUNTIME_UNKNOWN, true, VNFS_QOS_BESTEFFORT, UID,
	 ""},
	{GUARANTEED_SLICE, VNFS_CGROUP_POD, VNFS_RUNTIME_UNKNOWN, true, VNFS_QOS_GUARANTEED, UID,
	 ""},
	{"/kubepods/burstable/pod" UID, VNFS_CGROUP_POD, VNFS_RUNTIME_UNKNOWN, true,
	 VNFS_QOS_BURSTABLE, UID, ""},
	{"/kubepods/pod" UID, VNFS_CGROUP_POD, VNFS_RUNTIME_UNKNOWN, true, VNFS_QOS_GUARANTEED, UID,
	 ""},
	/* Kubernetes, cgroupfs driver. */
	{"/kubepods/besteffort/pod" UID "/" ID, VNFS_CGROUP_CONTAINER, VNFS_RUNTIME_UNKNOWN, true,
	 VNFS_QOS_BESTEFFORT, UID, ID},
	{"/kubepods/burstable/pod" UID "/" ID, VNFS_CGROUP_CONTAINER, VNFS_RUNTIME_UNKNOWN, true,
	 VNFS_QOS_BURSTABLE, UID, ID},
	{"/kubepods/pod" UID "/" ID, VNFS_CGROUP_CONTAINER, VNFS_RUNTIME_UNKNOWN, true,
	 VNFS_QOS_GUARANTEED, UID, ID},
	{"/kubepods/pod" STATIC_UID "/" ID, VNFS_CGROUP_CONTAINER, VNFS_RUNTIME_UNKNOWN, true,
	 VNFS_QOS_GUARANTEED, STATIC_UID, ID},
	{"/kubepods/burstable/pod" UID "/crio-" ID, VNFS_CGROUP_CONTAINER, VNFS_RUNTIME_CRIO, true,
	 VNFS_QOS_BURSTABLE, UID, ID},
	/* podman. */
	{"/machine.slice/libpod-" ID ".scope", VNFS_CGROUP_CONTAINER, VNFS_RUNTIME_PODMAN, false,
	 VNFS_QOS_NONE, "", ID},
	{"/libpod_parent/libpod-" ID, VNFS_CGROUP_CONTAINER, VNFS_RUNTIME_PODMAN, false,
	 VNFS_QOS_NONE, "", ID},
	{"/libpod-" ID, VNFS_CGROUP_CONTAINER, VNFS_RUNTIME_PODMAN, false, VNFS_QOS_NONE, "", ID},
	/* podman under a kubepods-like parent (the guest suites do this) is podman's. */
	{"/kubepods/besteffort/pod" UID "/libpod-" ID, VNFS_CGROUP_CONTAINER, VNFS_RUNTIME_PODMAN,
	 false, VNFS_QOS_NONE, "", ID},
	/* docker outside Kubernetes: the defaults of both drivers, then under
	 * any --cgroup-parent, nested or not (Docker's records say which is
	 * the container's: containers.h). */
	{"/docker/" ID, VNFS_CGROUP_CONTAINER, VNFS_RUNTIME_DOCKER, false, VNFS_QOS_NONE, "", ID},
	{"/system.slice/docker-" ID ".scope", VNFS_CGROUP_CONTAINER, VNFS_RUNTIME_DOCKER, false,
	 VNFS_QOS_NONE, "", ID},
	{"/vnfs-docker/" ID, VNFS_CGROUP_CONTAINER, VNFS_RUNTIME_DOCKER, false, VNFS_QOS_NONE, "",
	 ID},
	{"/a/b/" ID, VNFS_CGROUP_CONTAINER, VNFS_RUNTIME_DOCKER, false, VNFS_QOS_NONE, "", ID},
	{"/x/docker/" ID, VNFS_CGROUP_CONTAINER, VNFS_RUNTIME_DOCKER, false, VNFS_QOS_NONE, "", ID},
	{"/" ID, VNFS_CGROUP_CONTAINER, VNFS_RUNTIME_DOCKER, false, VNFS_QOS_NONE, "", ID},
	{"/foo.slice/foo-bar.slice/docker-" ID ".scope", VNFS_CGROUP_CONTAINER,
	 VNFS_RUNTIME_DOCKER, false, VNFS_QOS_NONE, "", ID},
	{"/machine.slice/docker-" ID ".scope", VNFS_CGROUP_CONTAINER, VNFS_RUNTIME_DOCKER, false,
	 VNFS_QOS_NONE, "", ID},
	/* A bare id in a systemd pod's slice is no Kubernetes leaf there: what
	 * is left is docker's claim, under that slice as its parent. */
	{BURSTABLE_SLICE "/" ID, VNFS_CGROUP_CONTAINER, VNFS_RUNTIME_DOCKER, false, VNFS_QOS_NONE,
	 "", ID},
};

static void assert_recognized(const struct expected *expected)
{
	struct vnfs_container_cgroup result;

	memset(&result, 0x5a, sizeof(result)); /* every field must be set */
	assert_int_equal(vnfs_container_cgroup_parse(expected->path, &result), expected->kind);
	assert_int_equal(result.kind, expected->kind);
	assert_int_equal(result.runtime, expected->runtime);
	assert_int_equal(result.kubernetes, expected->kubernetes);
	assert_false(result.monitor);
	assert_int_equal(result.qos, expected->qos);
	assert_string_equal(result.pod_uid, expected->pod_uid);
	assert_string_equal(result.container_id, expected->container_id);
}

static void test_recognized_patterns(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(recognized) / sizeof(recognized[0]); i++) {
		print_message("%s\n", recognized[i].path);
		assert_recognized(&recognized[i]);
	}
}

static void assert_not_container(const char *path, bool monitor)
{
	struct vnfs_container_cgroup result;

	print_message("%.200s\n", path);
	memset(&result, 0x5a, sizeof(result));
	assert_int_equal(vnfs_container_cgroup_parse(path, &result), VNFS_CGROUP_NOT_CONTAINER);
	assert_int_equal(result.kind, VNFS_CGROUP_NOT_CONTAINER);
	assert_int_equal(result.runtime, VNFS_RUNTIME_UNKNOWN);
	assert_false(result.kubernetes);
	assert_int_equal(result.monitor, monitor);
	assert_int_equal(result.qos, VNFS_QOS_NONE);
	assert_string_equal(result.pod_uid, "");
	assert_string_equal(result.container_id, "");
}

static void test_monitors(void **state)
{
	(void)state;
	assert_not_container(BURSTABLE_SLICE "/crio-conmon-" ID ".scope", true);
	assert_not_container("/kubepods/burstable/pod" UID "/crio-conmon-" ID, true);
	assert_not_container("/machine.slice/libpod-conmon-" ID ".scope", true);
	assert_not_container("/libpod_parent/libpod-conmon-" ID, true);
}

static const char *const near_misses[] = {
	"",
	"/",
	"//",
	"kubepods.slice/kubepods-pod" UID_SYSTEMD ".slice",
	/* Slurm's own and other services. */
	"/system.slice/slurmstepd.scope/job_42/step_0",
	"/system.slice/slurmstepd.scope/job_42/step_0/user/task_0",
	"/user.slice/user-1000.slice/session-3.scope",
	"/kubepods.slice",
	"/kubepods.slice/kubepods-burstable.slice",
	"/kubepods/burstable",
	/* Container ids: one short, one long, uppercase, not hex. */
	BURSTABLE_SLICE "/cri-containerd-" SHORT_ID ".scope",
	BURSTABLE_SLICE "/cri-containerd-" ID "0.scope",
	BURSTABLE_SLICE "/cri-containerd-" UPPERCASE_ID ".scope",
	BURSTABLE_SLICE "/cri-containerd-" NOT_HEX_ID ".scope",
	"/docker/" SHORT_ID,
	"/docker/" ID "0",
	/* Wrong suffixes and prefixes. */
	BURSTABLE_SLICE "/cri-containerd-" ID,
	BURSTABLE_SLICE "/cri-containerd-" ID ".slice",
	BURSTABLE_SLICE "/containerd-" ID ".scope",
	"/kubepods/burstable/pod" UID "/cri-containerd-" ID ".scope",
	/* Components after the container, trailing or doubled slashes, dots. */
	BURSTABLE_SLICE "/cri-containerd-" ID ".scope/init",
	BURSTABLE_SLICE "/cri-containerd-" ID ".scope/",
	"/kubepods/pod" UID "/" ID "/child",
	"/docker/" ID "/nested",
	"/system.slice/docker-" ID ".scope/x",
	"/kubepods//pod" UID "/" ID,
	"/kubepods/./pod" UID "/" ID,
	"/kubepods/../kubepods/pod" UID "/" ID,
	BURSTABLE_SLICE "/",
	/* QoS levels that disagree or do not exist. */
	"/kubepods.slice/kubepods-burstable.slice/kubepods-besteffort-pod" UID_SYSTEMD
	".slice/cri-containerd-" ID ".scope",
	"/kubepods.slice/kubepods-guaranteed.slice/kubepods-guaranteed-pod" UID_SYSTEMD ".slice",
	"/kubepods/guaranteed/pod" UID,
	"/kubepods.slice/kubepods-pod" UID_SYSTEMD ".slice/kubepods-pod" UID_SYSTEMD ".slice",
	/* Bad uids: dashes with systemd, underscores with cgroupfs, uppercase,
	 * short, long, misplaced separators. */
	"/kubepods.slice/kubepods-pod" UID ".slice",
	"/kubepods/pod" UID_SYSTEMD,
	"/kubepods/pod1C4B9F0E-5A3D-4B8E-9F1A-2B3C4D5E6F70",
	"/kubepods/pod1c4b9f0e-5a3d-4b8e-9f1a-2b3c4d5e6f7",
	"/kubepods/pod1c4b9f0e-5a3d-4b8e-9f1a-2b3c4d5e6f700",
	"/kubepods/pod1c4b9f0e5-a3d-4b8e-9f1a-2b3c4d5e6f70",
	"/kubepods/pod1c4b9f0e-5a3d-4b8e-9f1a_2b3c4d5e6f70",
	"/kubepods/pod5d1b7e7c0a8f0e8d3c1b3e8a6b5f5d0",
	"/kubepods/pod",
	/* Standalone containers under the wrong parent. */
	"/system.slice/libpod-" ID ".scope",
	"/machine/libpod-" ID ".scope",
	"/libpod-" ID ".scope",
	/* Look-alikes of docker's under a nested parent: 63 or 65 hex,
	 * uppercase, not hex, a component after the id, a wrong affix. */
	"/a/b/" SHORT_ID,
	"/a/b/" ID "0",
	"/a/b/" UPPERCASE_ID,
	"/a/b/" NOT_HEX_ID,
	"/a/b/" ID "/c",
	"/a/b/docker-" ID,
	"/a/b/docker-" ID ".scope/c",
	"/foo.slice/docker-" SHORT_ID ".scope",
	"/foo.slice/docker-" UPPERCASE_ID ".scope",
	"/foo.slice/Docker-" ID ".scope",
	"/foo.slice/x" ID,
};

static void test_near_misses(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(near_misses) / sizeof(near_misses[0]); i++)
		assert_not_container(near_misses[i], false);
}

/* A path as long as the limit allows, then one byte longer (whose NUL is
 * past the limit, where the parser must not look). */
static void test_path_length(void **state)
{
	const char tail[] = "/libpod-" ID;
	char *path = malloc(VNFS_CONTAINER_CGROUP_PATH_MAX + 1);
	size_t length = VNFS_CONTAINER_CGROUP_PATH_MAX - 1;
	struct vnfs_container_cgroup result;

	(void)state;
	assert_non_null(path);
	memset(path, 'a', length);
	path[0] = '/';
	memcpy(path + length - (sizeof(tail) - 1), tail, sizeof(tail));
	assert_int_equal(vnfs_container_cgroup_parse(path, &result), VNFS_CGROUP_CONTAINER);
	assert_string_equal(result.container_id, ID);

	memset(path, 'a', length + 1);
	path[0] = '/';
	memcpy(path + length + 1 - (sizeof(tail) - 1), tail, sizeof(tail));
	assert_int_equal(vnfs_container_cgroup_parse(path, &result), VNFS_CGROUP_NOT_CONTAINER);
	assert_string_equal(result.container_id, "");
	free(path);
}

static void test_validators_and_names(void **state)
{
	(void)state;
	assert_true(vnfs_pod_uid_valid(UID));
	assert_true(vnfs_pod_uid_valid(STATIC_UID));
	assert_false(vnfs_pod_uid_valid(UID_SYSTEMD));
	assert_false(vnfs_pod_uid_valid(UID "0"));
	assert_false(vnfs_pod_uid_valid("1C4B9F0E-5A3D-4B8E-9F1A-2B3C4D5E6F70"));
	assert_false(vnfs_pod_uid_valid(STATIC_UID "0"));
	assert_false(vnfs_pod_uid_valid(""));
	assert_true(vnfs_container_id_valid(ID));
	assert_false(vnfs_container_id_valid(ID "0"));
	assert_false(vnfs_container_id_valid(STATIC_UID));

	assert_string_equal(vnfs_container_runtime_name(VNFS_RUNTIME_UNKNOWN), "unknown");
	assert_string_equal(vnfs_container_runtime_name(VNFS_RUNTIME_CONTAINERD), "containerd");
	assert_string_equal(vnfs_container_runtime_name(VNFS_RUNTIME_CRIO), "cri-o");
	assert_string_equal(vnfs_container_runtime_name(VNFS_RUNTIME_DOCKER), "docker");
	assert_string_equal(vnfs_container_runtime_name(VNFS_RUNTIME_PODMAN), "podman");
	assert_null(vnfs_container_runtime_name(VNFS_RUNTIME_COUNT));
	assert_string_equal(vnfs_pod_qos_name(VNFS_QOS_NONE), "");
	assert_string_equal(vnfs_pod_qos_name(VNFS_QOS_GUARANTEED), "guaranteed");
	assert_string_equal(vnfs_pod_qos_name(VNFS_QOS_BURSTABLE), "burstable");
	assert_string_equal(vnfs_pod_qos_name(VNFS_QOS_BESTEFFORT), "besteffort");
	assert_null(vnfs_pod_qos_name(VNFS_QOS_COUNT));
	assert_string_equal(vnfs_container_kind_name(VNFS_CGROUP_NOT_CONTAINER), "not a container");
	assert_string_equal(vnfs_container_kind_name(VNFS_CGROUP_POD), "pod");
	assert_string_equal(vnfs_container_kind_name(VNFS_CGROUP_CONTAINER), "container");
	assert_null(vnfs_container_kind_name((enum vnfs_container_kind)3));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recognized_patterns),
		cmocka_unit_test(test_monitors),
		cmocka_unit_test(test_near_misses),
		cmocka_unit_test(test_path_length),
		cmocka_unit_test(test_validators_and_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
