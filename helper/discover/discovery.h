/*
 * discovery.h — the workloads the helper finds by itself: Kubernetes pods
 * and containers, and podman and Docker containers, that nobody registered
 * (DESIGN.md, decision 11).
 *
 * A task in no registered cgroup is counted per cgroup id as unattributed
 * (bpf/vnfs.h).  Each interval the discovery looks at the cgroups of those
 * rows it has not judged yet: a cgroup the container runtime's own state
 * names as a Kubernetes container, podman's store as a podman container,
 * or dockerd's records as a Docker container (lib/containers/containers.h:
 * root-owned state that names this very cgroup), is registered as that
 * container, and the calls it made before are folded into it, each
 * exactly once (vnfs_counter_source.fold_unattributed).  So a container is accounted
 * from its first call, as if its runtime had registered it, without a
 * hook, an API server or kubelet.
 *
 * A container's cgroup is also judged as it is made (the counter source
 * tells of each, bpf/vnfs.bpf.c's note_new_cgroup): identified while its
 * runtime's state exists, it is registered at its first calls, however
 * briefly it lived, even if its runtime removed it before the interval.
 *
 * Its end is seen the same way: a Kubernetes step whose cgroup is gone has
 * ended, and a pod whose own cgroup (the parent of its containers') is gone
 * and none of whose steps runs has finished: its final read, summary
 * record, history row and report files, as a FINISH gives a Slurm job.  A
 * podman or Docker container is a job of its own: it finishes when its
 * cgroup goes.
 * Steps of source Kubernetes that a hook registered (vnfs-register
 * --oci-hook) are ended and finished the same way when the hook did not.
 *
 * Runs on the main thread between intervals, before the collector's read:
 * it takes no lock of its own and calls the registry and the collector,
 * which take theirs.
 */
#ifndef VNFS_DISCOVERY_H
#define VNFS_DISCOVERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "helper/steps/steps.h"
#include "lib/config.h"
#include "lib/containers/containers.h"

/* Cgroups a pass judges at most (unattributed rows hold at most 4,096). */
#define VNFS_DISCOVERY_MAX_CGROUPS 4096
/* Where it looks: the runtimes' directories it is given, podman's, one per
 * storage driver, under [containers] podman_storage, and Docker's under
 * [containers] docker_data_root. */
#define VNFS_DISCOVERY_MAX_DIRS 16
#define VNFS_DISCOVERY_PODMAN_DIRS 4
#define VNFS_DISCOVERY_DOCKER_DIRS 1
#define VNFS_DISCOVERY_ENGINE_DIRS (VNFS_DISCOVERY_PODMAN_DIRS + VNFS_DISCOVERY_DOCKER_DIRS)
/* Pods whose end is awaited at once. */
#define VNFS_DISCOVERY_MAX_PODS 1024
/* A cgroup whose identification failed (state not to trust, registry full)
 * is tried again after this long, so that the log names it once a minute
 * at most. */
#define VNFS_DISCOVERY_RETRY_MS (60 * 1000)

enum vnfs_discovery_verdict {
	VNFS_DISCOVERY_NOT_CONTAINER, /* no Kubernetes container: stays unattributed */
	VNFS_DISCOVERY_REGISTERED,    /* registered (its rows are gone after the fold) */
	VNFS_DISCOVERY_FAILED,        /* tried again after VNFS_DISCOVERY_RETRY_MS */
};

struct vnfs_discovery_cgroup {
	uint64_t id;
	enum vnfs_discovery_verdict verdict;
	int64_t judged_ms;
};

/* A container identified when its cgroup was made, before any call of its
 * (vnfs_discovery_take_new_cgroups): registered at its first calls, even
 * if its cgroup is gone by then.  Forgotten once registered, or once its
 * cgroup is gone with no call counted. */
struct vnfs_discovery_known {
	uint64_t id;
	struct vnfs_workload workload;
	struct vnfs_tag_list tags;
	char path[256];
};
/* Containers known so at once: a node's worth (kubelet's default is 110
 * pods), many times over. */
#define VNFS_DISCOVERY_MAX_KNOWN 1024
#define VNFS_DISCOVERY_MAX_UNOPENED 256
/* 200 us waits for a cgroup to be openable: 10 ms per take at most. */
#define VNFS_DISCOVERY_WAIT_PER_TAKE 50

/* A pod with a step on this node, whose end is awaited. */
struct vnfs_discovery_pod {
	struct vnfs_workload job; /* part "" */
	char path[256];           /* its cgroup, relative to the cgroup2 mount */
};

/* Finishes job (its final read, records, report files: the collector's
 * vnfs_collector_finish_job in the helper).  Returns 0, or -1 with a
 * message. */
typedef int (*vnfs_finish_job_fn)(void *context, const struct vnfs_workload *job,
				  int64_t now_ms, char *error, size_t error_size);

/* A step of a source the discovery follows (Kubernetes, container),
 * copied out of the registry each pass. */
struct vnfs_discovery_step {
	struct vnfs_workload workload;
	enum vnfs_step_state state;
	uint64_t cgroup_id;
	char cgroup_path[256];
};

struct vnfs_discovery {
	bool enabled;
	struct vnfs_steps *steps;
	vnfs_finish_job_fn finish_job;
	void *finish_context;
	struct vnfs_runtime_state_dir dirs[VNFS_DISCOVERY_MAX_DIRS];
	size_t dir_count;
	char podman_dirs[VNFS_DISCOVERY_PODMAN_DIRS][VNFS_PATH_MAX + 32];
	char docker_dir[VNFS_PATH_MAX + 16];
	const char *tag_variables[VNFS_CONFIG_MAX_LIST];
	size_t tag_variable_count;
	int cgroup_root_fd; /* the cgroup2 mount, -1 without one */
	char cgroup_mount[1024]; /* its path, for paths given from the filesystem's root */
	struct vnfs_discovery_cgroup *judged; /* the last pass's, sorted by id */
	size_t judged_count;
	struct vnfs_discovery_pod *pods;
	size_t pod_count;
	/* VNFS_MAX_STEPS of them, for each pass: allocated once, so that a
	 * pass's copy touches only the pages of the steps it holds (a buffer
	 * allocated each pass would settle on the heap, zeroed whole). */
	struct vnfs_discovery_step *followed;
	struct vnfs_discovery_known *known; /* VNFS_DISCOVERY_MAX_KNOWN of them */
	size_t known_count;
	/* Cgroups told as made before the kernel let them be opened by id (it
	 * activates a cgroup's directory just after the tracepoint): tried
	 * again at each wake, dropped by the next pass if still unopenable. */
	uint64_t unopened[VNFS_DISCOVERY_MAX_UNOPENED];
	size_t unopened_count;
	/* Waits for such a cgroup left in this take: a user making and
	 * removing cgroups in a loop (removed ones open nothing either) costs
	 * the main thread at most VNFS_DISCOVERY_WAIT_PER_TAKE of them. */
	unsigned waits_left;
	/* Counts since start, for STATUS and the log. */
	uint64_t containers_registered;
	uint64_t containers_known_early; /* of them, identified as their cgroup was made */
	uint64_t calls_folded;
	uint64_t pods_finished; /* and podman containers */
};

/*
 * Sets discovery up from config ([containers] discover, tag_variables,
 * podman_storage, docker_data_root; the names are read from config, which
 * must outlive discovery), finishing pods with finish_job(finish_context,
 * ...), looking in dirs (count of them, at most VNFS_DISCOVERY_MAX_DIRS
 * less VNFS_DISCOVERY_ENGINE_DIRS)
 * for the Kubernetes runtimes' state, under the
 * cgroup2 hierarchy mounted at cgroup_mount (NULL: the system's).  Disabled
 * by the config or without a cgroup2 hierarchy (logged).  Returns 0, or -1
 * when out of memory.
 */
int vnfs_discovery_init(struct vnfs_discovery *discovery, const struct vnfs_config *config,
			struct vnfs_steps *steps, vnfs_finish_job_fn finish_job,
			void *finish_context, const struct vnfs_runtime_state_dir *dirs,
			size_t count, const char *cgroup_mount);
void vnfs_discovery_destroy(struct vnfs_discovery *discovery);

/* One pass at now_ms (the wall clock's milliseconds, as records have it):
 * identify new cgroups, end the steps whose cgroup is gone, finish the pods
 * whose cgroup is gone. */
void vnfs_discovery_run(struct vnfs_discovery *discovery, int64_t now_ms);

/* The cgroups made since the last call (the counter source's
 * for_each_new_cgroup): each that is a container is identified now, while
 * its runtime's state exists, and registered at its first calls.  Called
 * whenever the source's new_cgroups_fd polls readable, and by each pass. */
void vnfs_discovery_take_new_cgroups(struct vnfs_discovery *discovery);

/* The fd to poll for vnfs_discovery_take_new_cgroups, or -1. */
int vnfs_discovery_fd(const struct vnfs_discovery *discovery);

#endif /* VNFS_DISCOVERY_H */
