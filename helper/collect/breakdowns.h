/*
 * breakdowns.h — a step's processes and mounts, from the breakdown rows of a
 * counter source (helper/kernel/counters.h).  The kernel counts per {slot,
 * device, process name}; a record shows per process name (summed over its
 * mounts) and per mount (summed over its processes).  Grouping is record
 * shaping, so it is the collector's, not the source's: a source only hands
 * over its rows, in any order.
 */
#ifndef VNFS_BREAKDOWNS_H
#define VNFS_BREAKDOWNS_H

#include "helper/kernel/counters.h"
#include "lib/record.h"

/* The groups: a step's slot and process name, a step's slot and mount. */
struct vnfs_process_key {
	__u32 slot;
	char comm[VNFS_COMM_LEN];
};

struct vnfs_mount_key {
	__u32 slot;
	__u32 device; /* st_dev */
};

/* A nonzero return stops the walk and is the walk's return. */
typedef int (*vnfs_process_fn)(const struct vnfs_process_key *key,
			       const struct vnfs_process_stats *stats, void *context);
typedef int (*vnfs_mount_fn)(const struct vnfs_mount_key *key,
			     const struct vnfs_mount_stats *stats, void *context);

/*
 * Reads source's breakdown rows once, then calls process_fn once per
 * {slot, process name} and mount_fn once per {slot, device}, each with the
 * sums of its rows, slots ascending in each walk (so that each record gets
 * a contiguous range).  Returns 0, a callback's nonzero return, or -1 when
 * the rows cannot be read or held.
 */
int vnfs_breakdowns_walk(const struct vnfs_counter_source *source, vnfs_process_fn process_fn,
			 void *process_context, vnfs_mount_fn mount_fn, void *mount_context);

#endif /* VNFS_BREAKDOWNS_H */
