/*
 * fuzz_container_cgroup.c — libFuzzer target for
 * lib/containers/container_cgroup.c, which reads cgroup paths: names that,
 * with cgroup delegation or rootless podman, a user chooses.
 *
 * The input is one path (cut at its first NUL, as a C string would be).
 * Checked beyond the sanitizers: the result is one of the three kinds with
 * only the fields that kind has; an accepted pod uid and container id have
 * their exact formats and come from the path itself; a second parse gives
 * the same result.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/containers/container_cgroup.h"

#define TERMINATED(field) (memchr((field), '\0', sizeof(field)) != NULL)

/* The uid as the path spells it: dashed (cgroupfs) or with '_' (systemd). */
static void check_uid_in_path(const char *path, const char *uid)
{
	char systemd[VNFS_POD_UID_SIZE];

	if (!vnfs_pod_uid_valid(uid))
		abort();
	memcpy(systemd, uid, sizeof(systemd));
	for (char *at = systemd; *at != '\0'; at++)
		if (*at == '-')
			*at = '_';
	if (strstr(path, uid) == NULL && strstr(path, systemd) == NULL)
		abort();
}

static void check_result(const char *path, const struct vnfs_container_cgroup *result)
{
	if (!TERMINATED(result->pod_uid) || !TERMINATED(result->container_id) ||
	    vnfs_container_runtime_name(result->runtime) == NULL ||
	    vnfs_pod_qos_name(result->qos) == NULL)
		abort();
	switch (result->kind) {
	case VNFS_CGROUP_NOT_CONTAINER:
		if (result->runtime != VNFS_RUNTIME_UNKNOWN || result->kubernetes ||
		    result->qos != VNFS_QOS_NONE || result->pod_uid[0] != '\0' ||
		    result->container_id[0] != '\0')
			abort();
		break;
	case VNFS_CGROUP_POD:
		if (!result->kubernetes || result->qos == VNFS_QOS_NONE || result->monitor ||
		    result->runtime != VNFS_RUNTIME_UNKNOWN || result->container_id[0] != '\0')
			abort();
		check_uid_in_path(path, result->pod_uid);
		break;
	case VNFS_CGROUP_CONTAINER:
		if (result->monitor || !vnfs_container_id_valid(result->container_id) ||
		    strstr(path, result->container_id) == NULL)
			abort();
		if (result->kubernetes) {
			if (result->qos == VNFS_QOS_NONE)
				abort();
			check_uid_in_path(path, result->pod_uid);
		} else if (result->qos != VNFS_QOS_NONE || result->pod_uid[0] != '\0') {
			abort();
		}
		break;
	default:
		abort();
	}
	/* Strict: a path with an empty component or no leading '/' is nothing. */
	if (result->kind != VNFS_CGROUP_NOT_CONTAINER || result->monitor)
		if (path[0] != '/' || strstr(path, "//") != NULL ||
		    path[strlen(path) - 1] == '/' ||
		    strlen(path) >= VNFS_CONTAINER_CGROUP_PATH_MAX)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *path = malloc(size + 1);
	struct vnfs_container_cgroup result, again;

	if (path == NULL)
		abort();
	memcpy(path, data, size);
	path[size] = '\0';
	if (vnfs_container_cgroup_parse(path, &result) != result.kind)
		abort();
	check_result(path, &result);
	vnfs_container_cgroup_parse(path, &again);
	if (memcmp(&result, &again, sizeof(result)) != 0)
		abort();
	free(path);
	return 0;
}
