/*
 * steps.h — the one owner of a step's life on the node.
 *
 * A step has two halves: its entry in the registry (helper/steps/registry.h: the
 * persisted step, its slot, its state) and its cgroup's entry in the
 * counter source (helper/kernel/counters.h: the BPF map that makes the kernel
 * count the cgroup's calls into the slot).  Every change of a step goes
 * through here, so the halves never disagree:
 *   register  registry slot, then the cgroup's entry; neither if either fails
 *   end       the registry marks it ended (its counts are still read)
 *   release   the cgroup's entry removed, the slot's counters zeroed, then
 *             the registry's entry freed: the slot is clean before a new
 *             REGISTER can take it
 *   restore   after a restart, the persisted steps whose entries the pinned
 *             map lost are entered again
 *
 * Locks: the registry has its own lock and the counter source locks its map
 * (helper/kernel/maps.c), each held only inside one call, never one inside
 * the other; the collector calls release under its own lock, the socket
 * server register and end under none.  So no call here can wait on a lock
 * another thread holds while waiting on one of ours.
 */
#ifndef VNFS_STEPS_H
#define VNFS_STEPS_H

#include <stddef.h>
#include <stdint.h>

#include "helper/kernel/counters.h"
#include "helper/steps/registry.h"

struct vnfs_steps {
	struct vnfs_registry *registry;
	struct vnfs_counter_source source; /* the counting side of every slot */
};

void vnfs_steps_init(struct vnfs_steps *steps, struct vnfs_registry *registry,
		     const struct vnfs_counter_source *source);

/*
 * REGISTER: step (its cgroup_id resolved) gets a slot and its cgroup counts
 * into it.  Returns 0 with *slot, or -1 with a message in error (the
 * registry's refusal, or a full BPF map), nothing kept.
 */
int vnfs_steps_register(struct vnfs_steps *steps, const struct vnfs_step *step, uint32_t *slot,
			char *error, size_t error_size);

/* UNREGISTER: the step ended at now_ms.  Returns 0, or -1 when the registry
 * holds no such step. */
int vnfs_steps_end(struct vnfs_steps *steps, const struct vnfs_workload *step, int64_t now_ms);

/*
 * The step of record (its workload and cgroup) leaves slot, its final read
 * made.  Its registry entry is freed; with only_if_ended, only while the
 * slot still holds that step, ended (a kept ended step, moved out between
 * intervals): returns -1 when it changed meanwhile, and 0 otherwise.
 */
int vnfs_steps_release(struct vnfs_steps *steps, uint32_t slot,
		       const struct vnfs_step_record *record, bool only_if_ended);

/*
 * After a start: every step the registry restored from STATE_DIR counts
 * into its slot again where the pinned map lost it (an ABI change replaced
 * the maps); the others continue as they were.  Logs what it did.
 */
void vnfs_steps_restore(struct vnfs_steps *steps);

#endif /* VNFS_STEPS_H */
