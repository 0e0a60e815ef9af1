/*
 * step_cgroup.h — the cgroup v2 directory that identifies a job step.
 *
 * With Slurm's cgroup/v2 plugin every step already has its own directory
 * (.../job_<J>/step_<S>) and the plugin only finds it.  With cgroup/v1 (a
 * hybrid host) or proctrack/linuxproc Slurm makes none in the v2 hierarchy,
 * so the plugin creates <cgroup2 mount>/vnfs/job_<J>/step_<S>, moves each
 * task into it before the task executes, and removes it when the step ends.
 * A node that mounts no cgroup2 at all gets one at VNFS_CGROUP2_MOUNT.
 * The directory's inode number is the cgroup id the BPF side sees.
 *
 * The text parsers are pure and unit-tested; the rest touches the real
 * cgroup filesystem.
 */
#ifndef VNFS_STEP_CGROUP_H
#define VNFS_STEP_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/paths.h"
#include "spank/plugin_args.h"

#define VNFS_CGROUP_PATH_MAX 512

/* Where the plugin mounts the cgroup2 hierarchy on a node that mounts none
 * (cgroup v1 only): see mount_cgroup2 in step_cgroup.c. */
#define VNFS_CGROUP2_MOUNT VNFS_RUN_DIR "/cgroup2"

struct vnfs_step_cgroup {
	char root[VNFS_CGROUP_PATH_MAX];      /* the cgroup2 mount, "/sys/fs/cgroup" */
	char relative[VNFS_CGROUP_PATH_MAX];  /* under root: "/vnfs/job_1/step_0" */
	uint64_t id;                          /* st_ino of root + relative */
	bool owned;                           /* created by vnfs: remove at step end */
};

/* From /proc/self/mounts text: the first cgroup2 mount point.  0 or -1. */
int vnfs_cgroup2_mount_from_text(const char *mounts, char *mount_point, size_t size);

/*
 * From /proc/<pid>/cgroup text: the v2 path (the "0::" line) into path.
 * Returns 0, or -1 if there is no v2 line.  *hybrid is set when v1
 * hierarchies are listed too.
 */
int vnfs_cgroup_v2_path_from_text(const char *proc_cgroup, char *path, size_t size,
				  bool *hybrid);

/*
 * The prefix of cgroup_path ending in the component pair "job_<job>/step_<step
 * name>" (Slurm's cgroup/v2 layout), e.g. "/system.slice/x.scope/job_7/step_0"
 * from ".../job_7/step_0/user/task_0".  Returns 0, or -1 if absent.
 */
int vnfs_slurm_step_prefix(const char *cgroup_path, uint32_t job_id, const char *step_name,
			   char *prefix, size_t size);

/*
 * Finds or makes the cgroup of the step the task pid belongs to (see the top
 * of this file), moving pid into a vnfs-owned one when that is the way.  Safe
 * to call for every task of a step: the directory is made once, each task is
 * moved.  pid 0 is no task: the caller's own cgroup is looked at and nothing
 * is moved (the extern step, from its slurmstepd).  Returns 0, or -1 with a
 * message in error.
 */
int vnfs_step_cgroup_place(enum vnfs_cgroup_mode mode, const char *cgroup_root, pid_t pid,
			   uint32_t job_id, uint32_t step_id, struct vnfs_step_cgroup *cgroup,
			   char *error, size_t error_size);

/*
 * Removes a vnfs-owned step directory (and its job directory once empty),
 * retrying while the kernel still lists exiting tasks (EBUSY), for at most
 * wait_ms.  Returns 0, or -1 with a message in error.
 */
int vnfs_step_cgroup_remove(const struct vnfs_step_cgroup *cgroup, int wait_ms, char *error,
			    size_t error_size);

#endif /* VNFS_STEP_CGROUP_H */
