/*
 * docker_state.h — a plain Docker container's identity, from the records
 * dockerd keeps of it (DESIGN.md, decision 11: podman and docker
 * containers outside Kubernetes are identified by name and id).
 *
 * dockerd keeps each container in <data-root>/containers/<id>/ (data-root
 * /var/lib/docker by default; root's, 0710), in two files that only root
 * writes:
 *   config.v2.json   {"ID": "<64 hex>", "Name": "/trainer-d",
 *                     "Config": {"Env": ["JOB_NAME=resnet", ...], ...}, ...}
 *   hostconfig.json  {"CgroupParent": "" | "/vnfs-docker" | "foo.slice", ...}
 * Both are read as runtime_json.h says (Go's encoding/json wrote them).
 * Read here:
 *   - "ID": required; the whole string (a NUL inside is not the id it
 *     starts with) must be the id of the directory, or the record is not
 *     that container's (0, not identified: dockerd never writes another
 *     id there, so nothing of the file is believed).
 *   - "Name": required; dockerd's leading '/' taken off, then the engine's
 *     own rule (vnfs_container_name_valid): the name began as a user's
 *     `docker run --name`, so one that breaks the rule refuses the record.
 *   - "Config"."Env": optional (null: none); entries "NAME=value".  For
 *     each variable the caller asks for, the last entry counts, as in
 *     dockerd's own merge of `docker run -e` over the image's environment
 *     (it writes one entry per name); an entry "NAME" without '=' leaves
 *     it unset; a value holding a NUL or too long for
 *     VNFS_OCI_ENV_VALUE_SIZE is REFUSED, not cut.
 *   - hostconfig's "CgroupParent": optional ("" when absent: the default),
 *     printable ASCII without space, shorter than
 *     VNFS_CONTAINER_CGROUP_PATH_MAX.  Which cgroup it means is
 *     vnfs_docker_cgroup_names' (containers.h).
 * A member of the wrong JSON type, or any other breach, refuses the
 * record with a message naming the file.
 */
#ifndef VNFS_DOCKER_STATE_H
#define VNFS_DOCKER_STATE_H

#include <stddef.h>

#include "lib/containers/container_cgroup.h"
#include "lib/containers/oci_config.h"
#include "lib/workload.h"

/* The files, in <data-root>/containers/<id>/. */
#define VNFS_DOCKER_CONFIG_FILE "config.v2.json"
#define VNFS_DOCKER_HOST_CONFIG_FILE "hostconfig.json"
/* Either's size at most: real ones are 2-10 KB (a health check's log, many
 * mounts or labels make more). */
#define VNFS_DOCKER_STATE_SIZE_MAX (1024 * 1024)

struct vnfs_docker_container {
	char name[VNFS_CONTAINER_NAME_MAX + 1];                 /* without the '/' */
	char cgroup_parent[VNFS_CONTAINER_CGROUP_PATH_MAX];     /* "" for the default */
	size_t env_count;                                       /* = the names asked for */
	struct vnfs_oci_env_value env[VNFS_OCI_ENV_WANTED_MAX]; /* env[i] is env_names[i] */
};

/*
 * The container id (64 lowercase hex) of config.v2.json's text (config,
 * config_length bytes) and hostconfig.json's (host_config,
 * host_config_length bytes), with the variables env_names (env_count of
 * them, at most VNFS_OCI_ENV_WANTED_MAX) asked for.  Returns 1 with
 * *container, 0 when the record's ID is not id, -1 with a message in error
 * naming the file; *container is cleared unless 1.
 */
int vnfs_docker_container_parse(const char *config, size_t config_length,
				const char *host_config, size_t host_config_length,
				const char *id, const char *const *env_names, size_t env_count,
				struct vnfs_docker_container *container, char *error,
				size_t error_size);

#endif /* VNFS_DOCKER_STATE_H */
