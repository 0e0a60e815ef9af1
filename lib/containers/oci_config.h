/*
 * oci_config.h — a container's identity from its OCI bundle's config.json
 * (DESIGN.md, decision 11).
 *
 * A CRI runtime writes the Kubernetes names of each container it starts
 * into the container's OCI config as annotations, and keeps the file, owned
 * by root, in its state directory while the container lives (containerd:
 * /run/containerd/io.containerd.runtime.v2.task/k8s.io/<id>/config.json).
 * The helper reads them from there rather than from the API server (see
 * DESIGN.md for why).  Two families of annotations:
 *   containerd  io.kubernetes.cri.sandbox-namespace, .sandbox-name,
 *               .sandbox-uid, .container-name, .container-type
 *   CRI-O       io.kubernetes.pod.namespace, .pod.name, .pod.uid,
 *               io.kubernetes.container.name, io.kubernetes.cri-o.ContainerType
 *
 * The values began as a user's pod spec, and reach a root daemon's records,
 * metrics labels and logs, so each is checked against Kubernetes' own rules
 * (which the API server enforced, but the file is read here, not there) and
 * refused otherwise.  The rules, in the order they apply:
 *   - The document must be strict JSON in UTF-8 (a Go runtime writes
 *     nothing else), at most VNFS_OCI_CONFIG_SIZE_MAX bytes and 16 levels
 *     deep.  json-c checks only the shape of UTF-8 sequences (an overlong
 *     form passes); every field kept is ASCII by its rule but the
 *     environment's values, which the caller checks.
 *   - A field read here with the wrong JSON type, or a string in it holding
 *     a NUL (\u0000), refuses the whole config: the runtime's own Go decoder
 *     would have refused that file, so it is not one a runtime wrote.
 *   - Any object key holding \u0000 refuses the whole config: json-c cuts a
 *     key at the NUL, so a user's pass-through annotation
 *     "io.kubernetes.cri.sandbox-namespace\u0000x" would replace the
 *     runtime's own value, which Go keeps apart from it.
 *   - A key given twice: the last one counts (json-c's rule; a runtime never
 *     writes duplicates).
 *   - Which family is read is the caller's word (it knows whose state
 *     directory the file came from): the other family's keys may be a user's
 *     annotations passed through, and are ignored.  With EITHER, a family is
 *     present when its namespace key is; when both are, they must agree on
 *     every field.  With NONE, no annotation is read (a podman config: any
 *     user may give their container Kubernetes' annotations).
 *   - No namespace: not a Kubernetes container (kubernetes false, names "").
 *     With one: the pod name and container type are required, the container
 *     name too for a container (a sandbox's is not read: CRI-O calls every
 *     sandbox "POD"), the pod uid is optional (containerd before 1.6 wrote
 *     none; the cgroup path has it too).  A missing required field or an
 *     invalid value refuses the whole config.
 *   - Names: namespace and container name are DNS labels (RFC 1123, 1..63 of
 *     [a-z0-9-], alphanumeric at both ends), the pod name a DNS subdomain
 *     (1..253, such labels joined by '.'), the uid as vnfs_pod_uid_valid(),
 *     the type "sandbox" or "container".
 *   - linux.cgroupsPath: optional ("" when absent), printable ASCII without
 *     space, shorter than VNFS_CONTAINER_CGROUP_PATH_MAX.  It is text, not a
 *     path: the systemd driver writes "slice:prefix:id".
 *   - process.env: for each variable the caller asks for, the first entry
 *     "NAME=value" counts (what getenv() in the container sees); a value
 *     holding a NUL or too long for VNFS_OCI_ENV_VALUE_SIZE is REFUSED, not
 *     cut, and a later entry does not replace it.  Values are otherwise
 *     returned as they are: the caller checks them for where they go
 *     (vnfs_tags_set, vnfs_workload_set).
 */
#ifndef VNFS_OCI_CONFIG_H
#define VNFS_OCI_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/containers/container_cgroup.h"
#include "lib/tags.h"

/* The largest config.json read: real ones are 10-30 KB. */
#define VNFS_OCI_CONFIG_SIZE_MAX (1024 * 1024)

/* Kubernetes' limits, with the NUL. */
#define VNFS_K8S_NAMESPACE_SIZE 64
#define VNFS_K8S_POD_NAME_SIZE 254
#define VNFS_K8S_CONTAINER_NAME_SIZE 64

/* Environment variables one parse may ask for, and a value's size with its
 * NUL (a tag value's limit). */
#define VNFS_OCI_ENV_WANTED_MAX 32
#define VNFS_OCI_ENV_VALUE_SIZE (VNFS_TAG_VALUE_MAX + 1)

/* Whose annotations to read (see the rules above). */
enum vnfs_oci_annotations {
	VNFS_OCI_ANNOTATIONS_CONTAINERD,
	VNFS_OCI_ANNOTATIONS_CRIO,
	VNFS_OCI_ANNOTATIONS_EITHER,
	/* No Kubernetes names at all (kubernetes false): a podman or docker
	 * config, whose annotations are its user's to choose. */
	VNFS_OCI_ANNOTATIONS_NONE,
};

enum vnfs_container_type {
	VNFS_CONTAINER_TYPE_NONE,      /* not a Kubernetes container */
	VNFS_CONTAINER_TYPE_SANDBOX,   /* the pod's sandbox ("pause") */
	VNFS_CONTAINER_TYPE_CONTAINER, /* one of the pod's containers */
};

enum vnfs_oci_env_status {
	VNFS_OCI_ENV_UNSET,   /* no entry for the name */
	VNFS_OCI_ENV_SET,     /* value holds the first entry's value */
	VNFS_OCI_ENV_REFUSED, /* the first entry's value holds a NUL or is too long */
};

struct vnfs_oci_env_value {
	enum vnfs_oci_env_status status;
	char value[VNFS_OCI_ENV_VALUE_SIZE]; /* "" unless SET */
};

struct vnfs_oci_config {
	bool kubernetes;                                    /* a namespace was found */
	char namespace[VNFS_K8S_NAMESPACE_SIZE];
	char pod_name[VNFS_K8S_POD_NAME_SIZE];
	char pod_uid[VNFS_POD_UID_SIZE];                    /* "" when not written */
	char container_name[VNFS_K8S_CONTAINER_NAME_SIZE]; /* "" for a sandbox */
	enum vnfs_container_type container_type;
	char cgroups_path[VNFS_CONTAINER_CGROUP_PATH_MAX];  /* "" when absent */
	size_t env_count;                                   /* = the names asked for */
	struct vnfs_oci_env_value env[VNFS_OCI_ENV_WANTED_MAX]; /* env[i] is env_names[i] */
};

/*
 * Reads the identity out of config.json's text (length bytes, no NUL
 * needed).  env_names (env_count of them, at most VNFS_OCI_ENV_WANTED_MAX,
 * each an environment name as vnfs_tag_name_valid() has it) are the
 * variables whose values the caller wants.  Returns 0 with *config set, or
 * -1 with a message in error (naming the field) and *config cleared.
 */
int vnfs_oci_config_parse(const char *text, size_t length, enum vnfs_oci_annotations family,
			  const char *const *env_names, size_t env_count,
			  struct vnfs_oci_config *config, char *error, size_t error_size);

/*
 * Reads the file name (one component: no '/') in the directory
 * directory_fd, without following a symbolic link, without waiting on a
 * FIFO or device, only if it is a regular file of at most
 * VNFS_OCI_CONFIG_SIZE_MAX bytes.  Returns 0 with *text (malloc'd,
 * NUL-terminated, the caller frees it) and *length, or -1 with a message in
 * error.
 */
int vnfs_oci_config_read(int directory_fd, const char *name, char **text, size_t *length,
			 char *error, size_t error_size);

/*
 * A Kubernetes container's workload text: job "<namespace>/<pod name>",
 * part "<container name>" ("" for a sandbox, which is the pod's as the
 * pod's own cgroup level is).  The source is the caller's (the Kubernetes
 * row of VNFS_WORKLOAD_SOURCES, for vnfs_workload_set).  Returns 0, or -1
 * with a message in error when config is not a Kubernetes container or a
 * text does not fit.
 */
int vnfs_oci_workload_text(const struct vnfs_oci_config *config, char *job, size_t job_size,
			   char *part, size_t part_size, char *error, size_t error_size);

/* Whether names (count of them) may be asked for: at most
 * VNFS_OCI_ENV_WANTED_MAX, each a tag name.  Returns 0, or -1 with a
 * message.  Shared with docker_state.c, which reads Config.Env. */
int vnfs_oci_env_names_check(const char *const *names, size_t count, char *error,
			     size_t error_size);

#endif /* VNFS_OCI_CONFIG_H */
