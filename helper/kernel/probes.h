/*
 * probes.h — loading the BPF programs onto the kernel NFS client and reading
 * what they count.
 *
 * probes.c owns the BPF object's life: which functions of the running kernel
 * are hooked and how (fentry/fexit, else kprobe/kretprobe, per function),
 * pinning maps and links under pin_dir so that counting continues while the
 * helper restarts, the map of registered cgroups (cgroup_slots), and access
 * to the maps.  The layout of every map is bpf/vnfs.h.
 */
#ifndef VNFS_PROBES_H
#define VNFS_PROBES_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/vnfs.h"
#include "helper/kernel/counters.h"
#include "lib/config.h"
#include "lib/paths.h"
#include "lib/record.h"


struct vnfs_probes;

struct vnfs_probes_options {
	enum vnfs_probe_mode mode; /* auto: fentry where it works, else kprobe */
	const char *pin_dir;       /* NULL: VNFS_DEFAULT_PIN_DIR */
	bool pin;                  /* pin maps and links (survive a restart) */
	bool capture_environment;  /* follow environment jobs (job variables listed) */
	bool count_wire;           /* count RPCs per workload (bpf/wire.h) */
	unsigned cost_cut;         /* enum vnfs_cost_cut: the benchmark's, else VNFS_CUT_NONE */
	/* kprobe path: calls of one function whose returns are followed at once
	 * (the kretprobe's maxactive); 0: the kernel's default */
	unsigned kprobe_calls_in_flight;
};

/*
 * Loads and attaches the probes.  Logs one line per operation saying how it is
 * attached.  Fails (-1, with a message in error) when no function at all could
 * be attached; it then first logs one error line per hooked function naming
 * every method tried and why it failed, and error sums them up.  With pin,
 * reuses maps and links pinned by an earlier helper of the same ABI, and
 * replaces those of another ABI; a failed start removes the pins it made and
 * unmounts a bpffs it mounted.
 */
int vnfs_probes_open(struct vnfs_probes **probes, const struct vnfs_probes_options *options,
		     char *error, size_t error_size);

/* Frees everything; pinned maps and links stay and keep counting. */
void vnfs_probes_close(struct vnfs_probes *probes);

/* Removes everything pinned under pin_dir (NULL: the default), which detaches
 * the probes, then the kprobe path's return events once the kernel lets go
 * of them; *removed (when not NULL) gets how many pins went.  A missing
 * pin_dir is not an error (0 removed). */
int vnfs_probes_unpin(const char *pin_dir, size_t *removed, char *error, size_t error_size);

/* How the operation's functions are attached: kprobe if any of them fell
 * back to kprobes, fentry if all use fentry, none if none is attached. */
enum vnfs_attach_method vnfs_probes_attach_method(const struct vnfs_probes *probes,
						  enum vnfs_operation operation);

/* Registry: cgroup id -> slot.  Both bump the generation, which makes the
 * BPF side forget the slots it cached for every cgroup.  Return 0 or -1. */
int vnfs_probes_register_cgroup(struct vnfs_probes *probes, uint64_t cgroup_id, uint32_t slot);
int vnfs_probes_unregister_cgroup(struct vnfs_probes *probes, uint64_t cgroup_id);
/* 0 and *slot when cgroup_id is registered (e.g. by the helper before a
 * restart), -1 otherwise. */
int vnfs_probes_registered(struct vnfs_probes *probes, uint64_t cgroup_id, uint32_t *slot);

/* Calls counted into a slot so far (read from a mapping of step_activity,
 * bumped after the counters): a reader copies the counters again only when
 * this moved.  0 for a bad slot. */
uint64_t vnfs_probes_step_activity(const struct vnfs_probes *probes, uint32_t slot);
/* Copies a slot's counters (updated by the kernel while copied; each counter
 * is a single atomic u64).  Returns 0 or -1. */
int vnfs_probes_read_step_stats(const struct vnfs_probes *probes, uint32_t slot,
				struct vnfs_step_stats *stats);

/* Zeroes a slot's counters and activity, deletes its process and mount entries
 * and its wire rows and zeroes its counts of them (VNFS_MAX_BREAKDOWN_ENTRIES_PER_STEP,
 * VNFS_MAX_WIRE_ENTRIES_PER_STEP), for the slot's next step.  Returns 0 or -1. */
int vnfs_probes_reset_slot(struct vnfs_probes *probes, uint32_t slot);

/* The walks below call fn (helper/kernel/counters.h) per entry; a nonzero
 * return from fn stops the walk and is returned, -1 if the map cannot be
 * read.  This one walks breakdown_stats, in the map's order. */
int vnfs_probes_for_each_breakdown(struct vnfs_probes *probes, vnfs_breakdown_fn fn,
				   void *context);
/* Calls fn per unattributed row.  Every VNFS_UNATTRIBUTED_EXPIRY_PERIOD_MS
 * (VNFS_FULL_BOUND_EXPIRY_PERIOD_MS while its bound is full), after the
 * walk, also expires rows (vnfs_probes_expire_unattributed with
 * VNFS_UNATTRIBUTED_IDLE_MS). */
int vnfs_probes_for_each_unattributed(struct vnfs_probes *probes, vnfs_unattributed_fn fn,
				      void *context);

/* Calls fn per wire_stats row, with its procedure's name; as often as the
 * walk above, after the walk, deletes the unattributed rows of gone owners
 * into the expired sums. */
int vnfs_probes_for_each_wire(struct vnfs_probes *probes, vnfs_wire_fn fn, void *context);

/* Deletes the unattributed wire rows kept under owner_id (a workload's
 * cgroup or environment job, once its own record holds them and it is
 * released), so that they take no room.  Returns 0 or -1. */
int vnfs_probes_forget_wire(struct vnfs_probes *probes, uint64_t owner_id);

/* An unattributed row whose calls have not moved for this long is folded
 * away: a name storm's rows stop taking room once it is over, and a task
 * that calls again gets a new row.  Long enough that a row of a periodic
 * job (cron every few minutes) keeps its own. */
#define VNFS_UNATTRIBUTED_IDLE_MS (15 * 60 * 1000)
/* How often the walk above looks for rows to expire: each look reads the
 * whole map and asks the kernel once per row whether its cgroup exists. */
#define VNFS_UNATTRIBUTED_EXPIRY_PERIOD_MS (60 * 1000)
/* ... and how often while the rows kept under owners' ids are at their
 * bound: a hostile user who holds it full costs the helper one look per 5 s
 * (a read of the map and a question to the kernel per row), and the room
 * gone cgroups held comes back within it. */
#define VNFS_FULL_BOUND_EXPIRY_PERIOD_MS (5 * 1000)

struct vnfs_unattributed_expiry {
	uint32_t gone;   /* rows folded: their cgroup no longer exists */
	uint32_t idle;   /* rows folded: no call for idle_ms */
	uint32_t failed; /* rows to fold that stayed (the [expired] row had no room) */
};

/*
 * Folds every unattributed row whose cgroup no longer exists, or whose calls
 * have not moved for idle_ms (as seen by the calls of this function, at
 * monotonic times now_ms), into its uid's {0, uid, VNFS_EXPIRED_COMM} row,
 * and deletes it: nothing counted is lost, and the per-uid sums stay.  Each
 * folded row counts in the health counter VNFS_HEALTH_UNATTRIBUTED_EXPIRED.
 * The [expired] rows themselves never expire.  Returns 0 or -1.
 */
int vnfs_probes_expire_unattributed(struct vnfs_probes *probes, int64_t now_ms, int64_t idle_ms,
				    struct vnfs_unattributed_expiry *result);

/*
 * Moves every unattributed row of cgroup_id into slot, which the cgroup
 * counts into already (vnfs_probes_register_cgroup): for a cgroup the helper
 * identified after its first calls.  It first waits until no probe that saw
 * the cgroup in no step is still running, so that every call is counted
 * exactly once: in the rows moved, or in the slot.  The calls keep their
 * counts, errors, bytes and time per operation, not their place in the
 * latency and size histograms (the rows have none), and go to the
 * breakdown row of their process name on device 0 (their mount is not
 * known).  *calls gets how many calls moved.  Returns 0, or -1 with errno
 * (EOPNOTSUPP: this kernel runs no BPF_PROG_TYPE_SYSCALL program, 5.14+).
 */
int vnfs_probes_fold_unattributed(struct vnfs_probes *probes, uint64_t cgroup_id, uint32_t slot,
				  uint64_t *calls);

/* The cgroups made since the last call (the new_cgroups ring), each to fn
 * in the order made; a fd that polls readable when there are some (-1 when
 * the helper could not follow them).  Return 0, or -1. */
/* Environment jobs (bpf/vnfs.h): the variables the probes look for in
 * each environment, from [environment] (replacing an earlier helper's).
 * Returns 0, or -1 with errno. */
int vnfs_probes_list_environment_variables(struct vnfs_probes *probes,
					   const struct vnfs_config *config);
/* Calls fn per environment job the kernel holds. */
int vnfs_probes_for_each_environment_job(struct vnfs_probes *probes, vnfs_environment_job_fn fn,
					 void *context);
/* Removes a job without tasks, so that an exec naming it again makes a new
 * one.  Returns 0 when removed (or not there), 1 when a task joined it
 * meanwhile (it stays), -1 on an error. */
int vnfs_probes_forget_environment_job(struct vnfs_probes *probes, uint64_t number);

int vnfs_probes_new_cgroups_fd(const struct vnfs_probes *probes);
int vnfs_probes_for_each_new_cgroup(struct vnfs_probes *probes, vnfs_new_cgroup_fn fn,
				    void *context);

/* The BPF side's health counters (enum vnfs_health_counter). */
int vnfs_probes_read_health(struct vnfs_probes *probes, uint64_t counters[VNFS_HEALTH_COUNTERS]);

/* Calls fn per kprobed function whose return probe is a tracefs event
 * (the kprobe path with kprobe_calls_in_flight, kretprobe_events.c), with
 * the calls whose return the kernel did not report, as the kernel counts
 * them (kprobe_profile).  Nothing on other paths.  Returns 0, fn's
 * nonzero return, or -1 when the counts cannot be read. */
int vnfs_probes_for_each_missed_return(const struct vnfs_probes *probes,
				       vnfs_missed_return_fn fn, void *context);

/* The collector's counter source (helper/kernel/counters.h): the functions above,
 * on probes, which must outlive it. */
struct vnfs_counter_source vnfs_probes_counter_source(struct vnfs_probes *probes);

/* One line per hooked function, "nfs_file_read: fentry", "nfs3_listxattr:
 * skipped (not in this kernel)": for `vnfs-helper --status`-style output and tests. */
size_t vnfs_probes_describe(const struct vnfs_probes *probes, char *buffer, size_t size);

#endif /* VNFS_PROBES_H */
