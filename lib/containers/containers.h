/*
 * containers.h — from a cgroup id the probes saw to the container it
 * belongs to, Kubernetes', podman's or Docker's (DESIGN.md, decision 11):
 * the one place that puts container_cgroup.h (what the path says) and
 * oci_config.h, storage_names.h and docker_state.h (what the runtime
 * wrote) together.
 *
 * The cgroup's name is not proof: with cgroup delegation a user may create
 * directories named like a container's.  The identity comes from the
 * runtime's own state, a root-owned directory that no one else may write,
 * and only when the config the runtime wrote there names this very cgroup
 * (its cgroupsPath; for Docker, the path its CgroupParent and id make), so
 * that a cgroup a user made and named after someone else's container is
 * not that container.
 */
#ifndef VNFS_CONTAINERS_H
#define VNFS_CONTAINERS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/containers/container_cgroup.h"
#include "lib/containers/oci_config.h"
#include "lib/tags.h"
#include "lib/workload.h"

/*
 * Where each Kubernetes runtime keeps a running container's OCI config:
 * its state directory, the path of config.json inside a container's
 * directory (named by its id), and whose annotations that config holds.
 */
#define VNFS_RUNTIME_STATE_DIRS(X)                                                       \
	X(CONTAINERD, "/run/containerd/io.containerd.runtime.v2.task/k8s.io", "config.json", \
	  VNFS_OCI_ANNOTATIONS_CONTAINERD)                                                   \
	X(CRIO, "/run/containers/storage/overlay-containers", "userdata/config.json",        \
	  VNFS_OCI_ANNOTATIONS_CRIO)

/* The containers/storage drivers whose <graphroot>/<driver>-containers/
 * podman may keep its containers in (vnfs_podman_state_dir). */
#define VNFS_STORAGE_DRIVERS(X) X("overlay") X("vfs") X("btrfs") X("zfs")

struct vnfs_runtime_state_dir {
	enum vnfs_container_runtime runtime;
	const char *directory;   /* absolute */
	const char *config_file; /* relative to <directory>/<container id> */
	enum vnfs_oci_annotations annotations;
	/* A plain container engine's own record of its containers: podman's
	 * containers.json, relative to directory, naming them; Docker's
	 * hostconfig.json, relative to <directory>/<id> (its config_file is
	 * config.v2.json, not an OCI config), naming the cgroup's parent.
	 * NULL for a Kubernetes runtime, whose config names the pod and
	 * container itself. */
	const char *engine_file;
};

/* podman's store, under graphroot (storage.conf's, /var/lib/containers/
 * storage by default), with a driver's directory name (in directory, size
 * bytes: "<graphroot>/vfs-containers").  Returns 0, or -1 when it does not
 * fit. */
int vnfs_podman_state_dir(const char *graphroot, const char *driver,
			  struct vnfs_runtime_state_dir *dir, char *directory, size_t size);

/* Docker's containers, under data_root (dockerd's --data-root,
 * /var/lib/docker by default), in directory (size bytes:
 * "<data_root>/containers").  Returns 0, or -1 when it does not fit. */
int vnfs_docker_state_dir(const char *data_root, struct vnfs_runtime_state_dir *dir,
			  char *directory, size_t size);

/* The table above, in order, and its length. */
extern const struct vnfs_runtime_state_dir vnfs_runtime_state_dirs[];
extern const size_t vnfs_runtime_state_dir_count;

/* Opens the directory of the cgroup whose id is id (its kernfs file
 * handle) under root_fd, the cgroup2 mount; O_RDONLY, O_DIRECTORY.
 * Returns the fd, or -1 with errno (ESTALE or ENOENT: the cgroup is gone). */
int vnfs_cgroup_open_by_id(int root_fd, uint64_t id);

/* Whether the cgroup of id is gone (its id opens nothing: ESTALE or
 * ENOENT); false when it exists or that cannot be told (root_fd < 0, id 0,
 * another error). */
bool vnfs_cgroup_gone(int root_fd, uint64_t id);

/*
 * The path, relative to the cgroup2 mount and starting with '/', of the
 * cgroup whose id (its directory's kernfs file handle) is id; root_fd is
 * the mount's directory.  Returns 0, or -1 with a message (the cgroup is
 * gone, or the path does not fit in size).
 */
int vnfs_cgroup_path_of_id(int root_fd, uint64_t id, char *path, size_t size, char *error,
			   size_t error_size);

/* The cgroup2 hierarchy's mount point (/sys/fs/cgroup, or .../unified on
 * a hybrid host) into path.  Returns 0, or -1 when none is mounted. */
int vnfs_cgroup2_mount(char *path, size_t size);

/* The cgroup v2 path (relative to the mount) of process pid, from
 * /proc/PID/cgroup's "0::" line.  Returns 0, or -1 with a message. */
int vnfs_cgroup_of_pid(pid_t pid, char *path, size_t size, char *error, size_t error_size);

/*
 * What cgroupsPath a runtime writes for the cgroup at path: path itself
 * with the cgroupfs driver ("/kubepods/besteffort/pod<uid>/<id>"), or
 * systemd's "slice:prefix:id" ("kubepods-besteffort-pod<uid>.slice:
 * cri-containerd:<id>") for a path that ends in "<prefix>-<id>.scope"
 * under the slices that name implies.  Returns whether the two name the
 * same cgroup.
 */
bool vnfs_cgroups_path_names(const char *cgroups_path, const char *path);

/*
 * Whether path is the cgroup dockerd makes for container id under
 * cgroup_parent (hostconfig.json's CgroupParent, "" for the default):
 *   cgroupfs driver  "<CgroupParent or /docker>/<id>", an absolute parent
 *                    cleaned as Go's filepath.Join does of repeated and
 *                    trailing '/';
 *   systemd driver   "<slice path of CgroupParent or system.slice>/
 *                    docker-<id>.scope", a parent that is a slice's name.
 * The driver is not in the container's records, so either form counts; a
 * parent names at most one of them.  A daemon-wide default parent
 * (dockerd --cgroup-parent) is not read: its containers are not matched.
 */
bool vnfs_docker_cgroup_names(const char *cgroup_parent, const char *id, const char *path);

/*
 * The workload of the container whose cgroup is at path:
 *   - a Kubernetes container, or pod: source Kubernetes, job
 *     "namespace/pod", part the container's name, "" for the pod's sandbox;
 *     looked for in the Kubernetes runtimes' directories of dirs, the
 *     runtime the path names first, all of them when it names none
 *     (Kubernetes' cgroupfs driver);
 *   - a podman container outside Kubernetes: source container, job its
 *     name, part its short id; looked for in the podman directories of dirs;
 *   - a Docker container outside Kubernetes: the same, from its
 *     config.v2.json and hostconfig.json in the Docker directories of dirs,
 *     when its ID is the cgroup's and vnfs_docker_cgroup_names has the
 *     cgroup as its own.
 * Into *workload, and, when tags is not NULL, the variables of its
 * environment named in tag_variables (tag_variable_count of them, at most
 * VNFS_OCI_ENV_WANTED_MAX, tag names) that it sets, as tags (a value that
 * is no tag value is left out, with a warning).  dirs holds count
 * directories.  Returns 1 when identified, 0 when path is no container, or
 * is one that no runtime's state names as its own (a cgroup made to look
 * like a container, a container already gone, a record whose ID is
 * another's), -1
 * with a message when a state directory or file is not one to trust or
 * read.
 */
int vnfs_identify_container(const char *path, const struct vnfs_runtime_state_dir *dirs,
			    size_t count, const char *const *tag_variables,
			    size_t tag_variable_count, struct vnfs_workload *workload,
			    struct vnfs_tag_list *tags, char *error, size_t error_size);

#endif /* VNFS_CONTAINERS_H */
