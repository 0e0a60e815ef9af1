/*
 * registry.h — the job steps the helper knows: which cgroup belongs to which
 * workload (lib/workload.h: a Slurm job step first), the step's slot in the
 * BPF maps, its owner and tags.
 *
 * The registry owns slot allocation (slot = index into step_stats) and its
 * persistence: every change is appended to STATE_DIR/registry.journal before
 * the call returns (so before the socket's reply), and a helper restarted
 * even after kill -9 reattaches to the pinned maps and continues the same
 * steps' counts.  It is shared by the socket thread (register, unregister,
 * finish, query) and the collector thread, behind one mutex.
 */
#ifndef VNFS_REGISTRY_H
#define VNFS_REGISTRY_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "bpf/vnfs.h"
#include "lib/tags.h"
#include "lib/workload.h"

enum vnfs_step_state {
	VNFS_STEP_FREE,     /* slot unused */
	VNFS_STEP_RUNNING,  /* registered, counting */
	VNFS_STEP_ENDED,    /* unregistered: its tasks are gone, counts kept */
	VNFS_STEP_FINISHED, /* its job finished: final read pending, then released */
};

struct vnfs_step {
	enum vnfs_step_state state;
	struct vnfs_workload workload; /* its job and part: the registry's key */
	uint32_t uid;
	uint64_t cgroup_id;
	char cgroup_path[256];
	struct vnfs_tag_list tags;
	int64_t start_time_ms;
	int64_t end_time_ms;
};

/* The journal is rewritten compact when it holds more than 2 x used + this
 * many records: a rewrite costs O(used) and comes at most once per this many
 * changes, so a change costs O(1) amortized and the file stays small. */
#define VNFS_REGISTRY_JOURNAL_SLACK 1024

/* Steps (running or ended) one job, and one uid, may hold at once on a node
 * unless vnfs_registry_set_limits says otherwise ([helper] max_steps_per_job
 * and max_steps_per_user): without them one job of a thousand sruns holds
 * every slot until it finishes and every other user's steps are refused. */
#define VNFS_REGISTRY_DEFAULT_MAX_STEPS_PER_JOB 256
#define VNFS_REGISTRY_DEFAULT_MAX_STEPS_PER_USER 512

struct vnfs_kept_step;

struct vnfs_registry {
	pthread_mutex_t lock;
	char journal_path[300];    /* "" = not persisted (tests) */
	char legacy_path[300];     /* registry.json of helpers before the journal */
	int journal_fd;            /* open for appending; -1: rewrite it whole next */
	uint32_t journal_records;  /* lines in the journal, live or overridden */
	uint64_t journal_bytes;    /* its length after the last complete record */
	uint32_t used;             /* slots not FREE */
	uint64_t generation;       /* bumped by every change */
	uint32_t max_steps_per_job;  /* running + ended steps of one job */
	uint32_t max_steps_per_user; /* running + ended steps of one uid */
	/* VNFS_MAX_STEPS of them, index = slot, each step kept in the bytes
	 * it takes (registry.c): a struct vnfs_step is 1.9 KiB, most of it
	 * room for the longest names and tags, and a thousand of them were
	 * most of the helper's memory. */
	struct vnfs_kept_step *slots;
};

/* Empty registry persisted under state_dir (NULL: in memory only).  The
 * first change rewrites the journal whole unless vnfs_registry_load ran.
 * Returns 0, or -1 with a message: the registry then still works in memory
 * unless even its slots could not be allocated (slots NULL). */
int vnfs_registry_init(struct vnfs_registry *registry, const char *state_dir, char *error,
		       size_t error_size);
/* The per-job and per-uid limits of vnfs_registry_add (the defaults above
 * until called); 0 leaves a limit as it is.  Steps already registered stay,
 * whatever the new limits. */
void vnfs_registry_set_limits(struct vnfs_registry *registry, uint32_t max_steps_per_job,
			      uint32_t max_steps_per_user);
/* Closes the journal.  Writes nothing: everything was written when it
 * changed, so destroying and being killed leave the same file. */
void vnfs_registry_destroy(struct vnfs_registry *registry);

/*
 * Reads the persisted registry: the journal, or, when there is none yet,
 * the registry.json an older helper wrote (migrated into a journal, then
 * removed).  A missing file is an empty registry.  Records that cannot be
 * read (a tail cut short by a crash, a malformed line) are dropped with an
 * error log line naming them; everything before and after is kept.  The
 * journal is then rewritten compact.  Returns -1 with a message only when
 * nothing could be read (the registry then starts empty).
 */
int vnfs_registry_load(struct vnfs_registry *registry, char *error, size_t error_size);

/*
 * The calls below take the lock themselves.  vnfs_registry_add gives the step
 * a slot; registering the same workload again with the same cgroup returns
 * the same slot (slurmstepd may retry), with another cgroup it is an error,
 * but for a container that restarted (vnfs_workload_part_may_restart): an
 * ended Kubernetes container, registered again by the same uid in a new
 * cgroup, runs again in its slot, its counts going on from where they were
 * (a container's restarts are one container to Kubernetes, and to its
 * users).
 * A new step is refused when its job already holds max_steps_per_job running
 * or ended steps ("job 42 already holds 256 steps on this node
 * (max_steps_per_job)"), or its uid max_steps_per_user.
 * Returns 0, 1 when it reopened an ended container, or -1 with a message
 * (no free slot, a limit, conflict).
 */
int vnfs_registry_add(struct vnfs_registry *registry, const struct vnfs_step *step, uint32_t *slot,
		      char *error, size_t error_size);
/* RUNNING -> ENDED.  Returns the slot, or -1 when the step is unknown. */
int vnfs_registry_end(struct vnfs_registry *registry, const struct vnfs_workload *step,
		      int64_t now_ms);
/* Every step of job (its part ignored) -> FINISHED.  Returns how many steps
 * the job had. */
int vnfs_registry_finish_job(struct vnfs_registry *registry, const struct vnfs_workload *job,
			     int64_t now_ms);
/* FINISHED -> FREE (any state, in fact: the caller knows the slot is done). */
void vnfs_registry_release(struct vnfs_registry *registry, uint32_t slot);
/*
 * ENDED -> FREE, for a collector that has made an ended step's final read
 * (its tasks are gone, so its counters no longer move) before the job
 * finishes: the slot, and its place in the job's and the uid's limits, go
 * back at once.  Frees the slot only if it still holds that ENDED step;
 * returns 0 then, -1 otherwise (nothing changed).
 */
int vnfs_registry_release_ended(struct vnfs_registry *registry, uint32_t slot,
				const struct vnfs_workload *step);

/* Calls visit for each step in use (slots ascending) under the registry's
 * lock, for a reader to copy what it needs: visit must be quick (no I/O, no
 * other lock; registrations wait for it).  Returns how many steps it saw;
 * *generation (if not NULL) gets the generation they are. */
typedef void (*vnfs_step_visit_fn)(const struct vnfs_step *step, uint32_t slot, void *context);
uint32_t vnfs_registry_visit(struct vnfs_registry *registry, vnfs_step_visit_fn visit,
			     void *context, uint64_t *generation);
/* Changes with every change of the registry: a reader holding a snapshot of
 * the same generation holds the registry as it is. */
uint64_t vnfs_registry_generation(struct vnfs_registry *registry);
/* The step in slot, copied into *step (state VNFS_STEP_FREE when the slot
 * is free or out of range). */
void vnfs_registry_get(struct vnfs_registry *registry, uint32_t slot, struct vnfs_step *step);
/* Slots in use now (STATUS). */
uint32_t vnfs_registry_used(struct vnfs_registry *registry);

#endif /* VNFS_REGISTRY_H */
