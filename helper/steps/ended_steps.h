/*
 * ended_steps.h — steps whose tasks are all gone, moved out of their BPF
 * slots with their final counts until their job finishes.
 *
 * A step's slot holds its counters while any task of it can still call NFS.
 * Once the step has ended and its cgroup holds no task, the counters no
 * longer move: the collector makes the step's final read, hands the record
 * here, and releases the slot.  A job of a thousand sequential sruns then
 * holds one slot at a time, not a thousand, and its report still has every
 * step.
 *
 * Each step is kept in memory (its counters, process and mount rows, owned
 * here) and in STATE_DIR/ended/<job>.<step>.json, the record JSON of
 * lib/record_json.h, written and fsynced before vnfs_ended_steps_add
 * returns, so before the slot is released: a restarted helper still reports
 * it.  STATE_DIR/ended is root's, mode 0700, and no user writes there.
 *
 * The collector owns one and calls it under its own lock only.
 */
#ifndef VNFS_ENDED_STEPS_H
#define VNFS_ENDED_STEPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/record.h"

/* Steps kept at once on a node, and by one uid: a step beyond them keeps
 * its slot until its job finishes, as every step did before.  A kept step
 * costs about 9 KiB of memory (7.4 KiB of counters, its 1.4 KiB record,
 * its rows): 4,096 of them are about 37 MiB at most. */
#define VNFS_ENDED_STEPS_MAX 4096
#define VNFS_ENDED_STEPS_PER_USER_MAX 2048
/* A kept step's file is refused beyond this size when read back. */
#define VNFS_ENDED_STEP_FILE_MAX (4 * 1024 * 1024)

struct vnfs_ended_steps {
	int directory_fd; /* STATE_DIR/ended; -1: in memory only */
	struct vnfs_step_record *steps; /* each owns its stats and rows */
	size_t count;
	size_t capacity; /* steps allocated */
};

/*
 * Opens STATE_DIR/ended (made 0700 if missing; refused when it is not a
 * directory owned by this user and closed to group and others) and reads
 * back every step kept there.  A file that cannot be read is logged with
 * its name and left in place, never lost.  state_dir NULL or "": in memory
 * only.  Returns 0, or -1 with a message.
 */
int vnfs_ended_steps_open(struct vnfs_ended_steps *ended, const char *state_dir, char *error,
			  size_t error_size);
void vnfs_ended_steps_close(struct vnfs_ended_steps *ended);

/* Whether a step of uid fits (the bounds above). */
bool vnfs_ended_steps_has_room(const struct vnfs_ended_steps *ended, uint32_t uid);
/* Keeps a copy of record (deep: its stats and rows), persisted first.
 * Returns 0, or -1 with a message (no room, out of memory, I/O: then
 * nothing is kept and the step should keep its slot). */
int vnfs_ended_steps_add(struct vnfs_ended_steps *ended, const struct vnfs_step_record *record,
			 char *error, size_t error_size);
/* Drops the kept steps of job (its part ignored: the job finished), files
 * included; returns how many. */
size_t vnfs_ended_steps_remove_job(struct vnfs_ended_steps *ended,
				   const struct vnfs_workload *job);
/* Drops the kept step if there is one (a slot holds it too: a helper
 * stopped between keeping it and releasing the slot). */
void vnfs_ended_steps_remove_step(struct vnfs_ended_steps *ended,
				  const struct vnfs_workload *step);
bool vnfs_ended_steps_has_job(const struct vnfs_ended_steps *ended,
			      const struct vnfs_workload *job);

#endif /* VNFS_ENDED_STEPS_H */
