/*
 * counters.h — where the collector reads counters from, and where a step's
 * cgroup is given a slot and gives it back (helper/steps/steps.c).
 *
 * The collector turns counters into records; it does not know where they
 * are kept.  A counter source is the one way it reaches them: per slot, a
 * count of calls that moves whenever the slot's counters move, and the
 * counters themselves; the process, mount and unattributed rows; the health
 * counters; how each operation is attached; and, when a step is done with
 * its slot, the release of the slot.  helper/kernel/maps.c's source reads the BPF
 * maps (vnfs_probes_counter_source); tests/unit/test_collector.c's hands
 * out counters a test set, so that the collector runs on a host without a
 * kernel NFS client.
 *
 * The collector calls a source under its own lock only, never two calls at
 * once (a REGISTER reaches the probes directly from the socket thread:
 * helper/kernel/maps.c locks its registry map itself).  Slots are below
 * VNFS_MAX_STEPS.  The layout of every key and value
 * is bpf/vnfs.h's and lib/record.h's.
 */
#ifndef VNFS_COUNTERS_H
#define VNFS_COUNTERS_H

#include <stdint.h>

#include "bpf/vnfs.h"
#include "lib/record.h"

/* How one operation's probes are attached (the outputs' self-metrics, STATUS). */
enum vnfs_attach_method { VNFS_ATTACH_NONE, VNFS_ATTACH_FENTRY, VNFS_ATTACH_KPROBE };

/* "none", "fentry", "kprobe": the one spelling of a method, in /metrics and
 * STATUS alike; "none" for a value out of range. */
static inline const char *vnfs_attach_method_name(enum vnfs_attach_method method)
{
	static const char *const names[] = {
		[VNFS_ATTACH_NONE] = "none",
		[VNFS_ATTACH_FENTRY] = "fentry",
		[VNFS_ATTACH_KPROBE] = "kprobe",
	};

	if ((unsigned)method >= sizeof(names) / sizeof(names[0]))
		return names[VNFS_ATTACH_NONE];
	return names[method];
}

/* The walks call fn per row; a nonzero return from fn stops the walk and is
 * the walk's return. */
typedef int (*vnfs_breakdown_fn)(const struct vnfs_breakdown_key *key,
				 const struct vnfs_breakdown_stats *stats, void *context);
typedef int (*vnfs_unattributed_fn)(const struct vnfs_unattributed_key *key,
				    const struct vnfs_unattributed_stats *stats, void *context);

/* A row's totals over its operations (vnfs.h keeps them per operation).
 * Read bytes are those of read and mmap_read: what the process brought in. */
enum vnfs_unattributed_total {
	VNFS_UNATTRIBUTED_CALLS,
	VNFS_UNATTRIBUTED_ERRORS,
	VNFS_UNATTRIBUTED_READ_BYTES,
	VNFS_UNATTRIBUTED_WRITE_BYTES,
};

static inline uint64_t vnfs_unattributed_total(const struct vnfs_unattributed_stats *stats,
					       enum vnfs_unattributed_total total)
{
	uint64_t sum = 0;

	for (int op = 0; op < VNFS_OP_COUNT; op++) {
		const struct vnfs_unattributed_operation *operation = &stats->operations[op];

		if (total == VNFS_UNATTRIBUTED_CALLS)
			sum += operation->count;
		else if (total == VNFS_UNATTRIBUTED_ERRORS)
			sum += operation->errors;
		else if ((total == VNFS_UNATTRIBUTED_WRITE_BYTES) == (op == VNFS_OP_WRITE))
			sum += operation->bytes;
	}
	return sum;
}

/* Called per wire row (bpf/wire.h) with its procedure's name as the kernel
 * spells it ("" if not known), NUL-terminated. */
typedef int (*vnfs_wire_fn)(const struct vnfs_wire_key *key, const struct vnfs_wire_stats *stats,
			    const char *procedure, void *context);

/* Called per environment job (bpf/vnfs.h) with its number; nonzero stops
 * the walk. */
typedef int (*vnfs_environment_job_fn)(uint64_t number, const struct vnfs_environment_job *job,
				       void *context);

/* Called per cgroup2 directory made, with its id; nonzero stops the walk. */
typedef int (*vnfs_new_cgroup_fn)(uint64_t cgroup_id, void *context);

/* Called per kprobed function with the calls whose return the kernel did
 * not report, as the kernel counts them; nonzero stops the walk. */
typedef int (*vnfs_missed_return_fn)(const char *function, uint64_t missed, void *context);

struct vnfs_counter_source {
	void *context; /* passed to every operation */

	/*
	 * Calls counted into slot so far.  It moves after the slot's counters
	 * and its process and mount rows moved (never before), and only
	 * reset_slot lowers it: so the same value twice means nothing was
	 * counted in between, and the collector copies the counters again only
	 * when it moved.  0 for a slot that counted nothing.
	 */
	uint64_t (*step_activity)(void *context, uint32_t slot);

	/* Copies the slot's counters into stats.  They may move during the
	 * copy (each counter is read whole): the collector copies once more at
	 * the next interval.  Returns 0, or -1 with errno set. */
	int (*read_step_stats)(void *context, uint32_t slot, struct vnfs_step_stats *stats);

	/*
	 * Calls fn once per breakdown row {slot, device, process name} with its
	 * counts, in any order (the collector groups them into a step's
	 * processes and mounts, helper/collect/breakdowns.h).  The rows change
	 * only with some slot's step_activity or a reset_slot, so the collector
	 * walks again only then.  Returns 0, fn's nonzero return, or -1 when
	 * the rows cannot be read.
	 */
	int (*for_each_breakdown)(void *context, vnfs_breakdown_fn fn, void *fn_context);

	/* Calls fn per row of calls made in no registered cgroup, in any order.
	 * These move without any step's activity: walked every interval.  The
	 * source may fold idle rows after a walk (helper/kernel/probes.h).  Returns 0,
	 * fn's nonzero return, or -1. */
	int (*for_each_unattributed)(void *context, vnfs_unattributed_fn fn, void *fn_context);
	/* Calls fn per wire row (RPCs per owner, mount and procedure), in any
	 * order; they move with RPCs, not with step_activity: walked every
	 * interval.  NULL in a source that counts no RPCs.  Returns 0, fn's
	 * nonzero return, or -1. */
	int (*for_each_wire)(void *context, vnfs_wire_fn fn, void *fn_context);
	/* Deletes the unattributed wire rows kept under owner_id (bpf/wire.h:
	 * a late-identified workload's first RPCs), once its record took them
	 * for the last time.  NULL in a source that counts no RPCs.  Returns
	 * 0 or -1. */
	int (*forget_wire)(void *context, uint64_t owner_id);

	/* The counting side's health counters (enum vnfs_health_counter).
	 * Returns 0, or -1 (counters then holds what could be read). */
	int (*read_health)(void *context, uint64_t counters[VNFS_HEALTH_COUNTERS]);
	/* Calls fn per function whose returns the kernel counts as missed
	 * (helper/kernel/probes.h); NULL in a source without kprobes.  Returns
	 * 0, fn's nonzero return, or -1. */
	int (*for_each_missed_return)(void *context, vnfs_missed_return_fn fn, void *fn_context);

	/* How the operation is counted: fentry, kprobe, or none (not hooked). */
	enum vnfs_attach_method (*attach_method)(void *context, enum vnfs_operation operation);

	/* A step's cgroup (and every cgroup below it) counts into slot from
	 * now on.  Returns 0, or -1 when the source has no room. */
	int (*register_cgroup)(void *context, uint64_t cgroup_id, uint32_t slot);

	/* 0 and *slot when cgroup_id counts into a slot already (a previous
	 * helper registered it: the pins survived), else -1. */
	int (*registered)(void *context, uint64_t cgroup_id, uint32_t *slot);

	/* A step is done with its slot (final read made): nothing more is
	 * counted for its cgroup.  Returns 0, or -1 when the cgroup was not
	 * registered. */
	int (*unregister_cgroup)(void *context, uint64_t cgroup_id);

	/* Zeroes the slot's counters, activity and rows, after
	 * unregister_cgroup, so that its next step starts from nothing.
	 * Returns 0 or -1. */
	int (*reset_slot)(void *context, uint32_t slot);

	/* Moves the calls counted unattributed for cgroup_id, which counts
	 * into slot from now on, into slot: exactly once, each in one of the
	 * two (helper/kernel/probes.h).  *calls gets how many moved.  Returns
	 * 0, or -1 (the rows stay unattributed). */
	int (*fold_unattributed)(void *context, uint64_t cgroup_id, uint32_t slot,
				 uint64_t *calls);

	/* A file descriptor that polls readable when cgroups were made since
	 * the last for_each_new_cgroup, or -1 when the source does not tell. */
	int (*new_cgroups_fd)(void *context);

	/* Calls fn for each cgroup made since the last call, in the order
	 * they were made.  Returns 0, fn's nonzero return, or -1. */
	int (*for_each_new_cgroup)(void *context, vnfs_new_cgroup_fn fn, void *fn_context);

	/* Calls fn per environment job the kernel captured (NULL: the source
	 * captures none).  Returns 0, fn's nonzero return, or -1. */
	int (*for_each_environment_job)(void *context, vnfs_environment_job_fn fn,
					void *fn_context);

	/* Removes an environment job without tasks (its workload is done).
	 * Returns 0, 1 when a task joined it meanwhile (it stays), or -1. */
	int (*forget_environment_job)(void *context, uint64_t number);
};

#endif /* VNFS_COUNTERS_H */
