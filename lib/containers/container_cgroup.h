/*
 * container_cgroup.h — what a cgroup v2 path says about a container
 * (DESIGN.md, decision 11: Kubernetes pods and containers as workload
 * sources).
 *
 * The helper learns a container's cgroup before it learns the container's
 * name: a cgroup-creation event or /proc/PID/cgroup gives a path such as
 * "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid>.slice/
 * cri-containerd-<id>.scope".  Kubelet, the runtimes and systemd name these
 * directories by fixed patterns, one per cgroup driver and runtime, so the
 * path alone tells the pod's uid, its QoS class and the container's id; the
 * names (namespace, pod, container) come later from the runtime's OCI config
 * (oci_config.h).
 *
 * Cgroup directory names are chosen by whoever may create them, which with
 * cgroup delegation includes users, so the parser is strict: a path matches
 * one of the patterns in container_cgroup.c's tables exactly (lowercase hex
 * of the exact length, no component after the container's) or it is not a
 * container.  It never reads the file system and never fails otherwise.
 */
#ifndef VNFS_CONTAINER_CGROUP_H
#define VNFS_CONTAINER_CGROUP_H

#include <stdbool.h>
#include <stddef.h>

/* Longer paths are not containers' (the kernel's PATH_MAX, with the NUL). */
#define VNFS_CONTAINER_CGROUP_PATH_MAX 4096
/* A pod uid with its NUL: "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0" (36), or
 * a static pod's 32 hex digits (kubelet names those by a hash). */
#define VNFS_POD_UID_SIZE 37
/* A container id with its NUL: 64 lowercase hex digits. */
#define VNFS_CONTAINER_ID_LENGTH 64
#define VNFS_CONTAINER_ID_SIZE (VNFS_CONTAINER_ID_LENGTH + 1)

enum vnfs_container_kind {
	VNFS_CGROUP_NOT_CONTAINER, /* no pattern matched, or a runtime's monitor */
	VNFS_CGROUP_POD,           /* a Kubernetes pod's own level, above its containers */
	VNFS_CGROUP_CONTAINER,     /* one container */
};

/* Every runtime, once: its constant and its name in messages. */
#define VNFS_CONTAINER_RUNTIMES(X)                                                       \
	X(UNKNOWN, "unknown") /* Kubernetes' cgroupfs driver names containers by id only */ \
	X(CONTAINERD, "containerd")                                                         \
	X(CRIO, "cri-o")                                                                    \
	X(DOCKER, "docker")                                                                 \
	X(PODMAN, "podman")

enum vnfs_container_runtime {
#define VNFS_CONTAINER_RUNTIME_ENUM(constant, name) VNFS_RUNTIME_##constant,
	VNFS_CONTAINER_RUNTIMES(VNFS_CONTAINER_RUNTIME_ENUM)
#undef VNFS_CONTAINER_RUNTIME_ENUM
	VNFS_RUNTIME_COUNT
};

/* Kubernetes' QoS classes, as kubelet spells them in cgroup names; NONE
 * outside Kubernetes. */
#define VNFS_POD_QOS_CLASSES(X) \
	X(NONE, "")             \
	X(GUARANTEED, "guaranteed") \
	X(BURSTABLE, "burstable")   \
	X(BESTEFFORT, "besteffort")

enum vnfs_pod_qos {
#define VNFS_POD_QOS_ENUM(constant, name) VNFS_QOS_##constant,
	VNFS_POD_QOS_CLASSES(VNFS_POD_QOS_ENUM)
#undef VNFS_POD_QOS_ENUM
	VNFS_QOS_COUNT
};

struct vnfs_container_cgroup {
	enum vnfs_container_kind kind;
	enum vnfs_container_runtime runtime;  /* UNKNOWN for a pod */
	bool kubernetes;                      /* under kubelet's kubepods hierarchy */
	bool monitor;                         /* conmon's cgroup (kind NOT_CONTAINER) */
	enum vnfs_pod_qos qos;                /* NONE outside Kubernetes */
	char pod_uid[VNFS_POD_UID_SIZE];      /* dashed lowercase, or "" */
	char container_id[VNFS_CONTAINER_ID_SIZE]; /* 64 lowercase hex, or "" */
};

/*
 * What path (relative to the cgroup2 mount, starting with '/') says.  Sets
 * every field of *result (all zero and "" unless a pattern matched; for a
 * runtime's monitor only monitor is set) and returns result->kind.  path
 * need not be terminated within VNFS_CONTAINER_CGROUP_PATH_MAX bytes: a
 * longer one is not a container.
 */
enum vnfs_container_kind vnfs_container_cgroup_parse(const char *path,
						     struct vnfs_container_cgroup *result);

/*
 * Whether text is a pod uid as Kubernetes writes it: 8-4-4-4-12 lowercase
 * hex with dashes, or 32 lowercase hex digits (a static pod's uid is a hash
 * of its manifest).  Shared with oci_config.c, so the two sources of a uid
 * agree on its spelling.
 */
bool vnfs_pod_uid_valid(const char *text);

/* Whether text is a container id: exactly 64 lowercase hex digits. */
bool vnfs_container_id_valid(const char *text);

/* "containerd", ...; "guaranteed", ... ("" for NONE); "not a container",
 * "pod", "container".  NULL when out of range. */
const char *vnfs_container_runtime_name(enum vnfs_container_runtime runtime);
const char *vnfs_pod_qos_name(enum vnfs_pod_qos qos);
const char *vnfs_container_kind_name(enum vnfs_container_kind kind);

#endif /* VNFS_CONTAINER_CGROUP_H */
