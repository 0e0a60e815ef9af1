/*
 * vnfs.h — the ABI between the BPF programs (vnfs.bpf.c) and the helper.
 *
 * It owns the layout of every map: keys, values and their sizes.  The helper
 * reads the maps with these structs and pins them across restarts, so any
 * change to a struct here, or to a map's definition in vnfs.bpf.c (type,
 * entries, flags), must bump VNFS_ABI_VERSION: a helper that finds pinned
 * maps of another version replaces them instead of misreading them or, for
 * a definition libbpf finds different, failing to load.
 *
 * Counting model.  The helper gives each registered job step a slot (an index
 * into step_stats).  A task's cgroup id resolves to a slot through the
 * cgroup_slots map (cgroup id -> slot) and its nearest registered ancestor; the answer
 * is cached per cgroup id and invalidated by bumping cgroup_slots_generation.
 * Counters are cumulative for the life of a slot: the helper computes deltas.
 * Each move of calls into step_stats[slot] then adds their number to
 * step_activity[slot] (a __u64 array the helper maps): the helper copies a
 * step's counters only when that moved.
 *
 * A task first writes its calls into its own task storage (pending calls)
 * and moves them into the shared maps in batches: when VNFS_PENDING_CALLS are
 * waiting, when the oldest waited VNFS_PENDING_MAX_AGE_NS, after a call of
 * VNFS_PENDING_DRAIN_BYTES or VNFS_PENDING_DRAIN_NS, when the task's step,
 * cgroup or name changes, and when it exits (everything it calls from then
 * on goes straight through).  A call then touches no shared map: the shared
 * counters' cache lines, and under emulation their page-table walks, were
 * half of what the probes cost (docs/PERFORMANCE.md).
 *
 * Included by BPF C (after vmlinux.h) and by user space.
 */
#ifndef VNFS_ABI_H
#define VNFS_ABI_H

/* What a step's counters look like (step_stats values), the slot count and
 * the bounds records mirror: part of this ABI, in a header of their own so
 * that what reads records (lib/, the plugin) sees nothing else of it. */
#include "step_stats.h"
/* The wire-level counters' keys and values (bpf/wire.bpf.c). */
#include "wire.h"

#ifndef __bpf__
#include <linux/types.h>
#endif

/* 5: breakdown_entries, unattributed_entries, the "[other]" rows and three
 * health counters (per-step and overall bounds on the rows, issue 13).
 * 6: step_stats is no longer BPF_F_MMAPABLE (nothing maps it), and the
 * map of registered cgroups is cgroup_slots (was "registry", the helper's
 * step registry's name too; pins are found by name).  A map's
 * flags are part of its definition: libbpf reuses a pinned map only if
 * type, sizes and flags all match, so a v6 helper must replace v5 pins. */
/* 7: unattributed_stats counts errors, bytes and time per operation (was:
 * count per operation, errors and bytes in all), so that a row can be
 * folded into a step that identifies its cgroup late; the new_cgroups ring
 * and its health counter (issue 15). */
/* 8: environment jobs: the environment_variables, environment_jobs,
 * environment_job_numbers, environment_job_counter and task_jobs maps, the
 * task state's counting_id, two health counters (issue 15). */
/* 9: the wire-level maps (wire.h: wire_stats, wire_entries,
 * wire_procedure_names, wire_owners, open_context_owners,
 * rpc_client_devices) and a health counter (issue 17). */
/* 10: a health counter, VNFS_HEALTH_WIRE_UNATTRIBUTED_OTHER (issue 17). */
/* 11: the legacy build's task_state preallocated, 16,384 threads; the
 * task state's data_serial; a health counter, VNFS_HEALTH_MISSED_EXIT. */
#define VNFS_ABI_VERSION 11

/* Map capacities (VNFS_MAX_STEPS and VNFS_MAX_BREAKDOWN_ENTRIES: step_stats.h). */
#define VNFS_MAX_REGISTERED_CGROUPS (2 * VNFS_MAX_STEPS)
#define VNFS_MAX_CACHED_CGROUPS 8192
#define VNFS_MAX_UNATTRIBUTED_ENTRIES 4096
/* new_cgroups: bytes of the ring of cgroup2 ids made (8 bytes each and an
 * 8-byte header: 4,096 ids between two reads of the helper). */
#define VNFS_NEW_CGROUPS_RING_BYTES (64 * 1024)

/*
 * Rows one step may create in breakdown_stats (process name x mount).  Names
 * are the user's to choose (prctl(PR_SET_NAME) in a loop), and the map is
 * shared by every step of the node: without a bound one step fills it and
 * every other step loses its breakdown.  64 is four times the map's average
 * share (16,384 / 1,024 steps) and more than a real step shows (a few tools
 * on a few mounts); 256 steps must all be at the bound to fill the map.
 * Beyond it, a step's calls of a new name go to its row {slot, device,
 * VNFS_OTHER_COMM}: its totals still add up, per process and per mount.
 * Counted per slot in breakdown_entries; several tasks of one step creating
 * rows at the same instant on different CPUs may each pass the check, so
 * the bound can be passed by at most one row per CPU.
 */
#define VNFS_MAX_BREAKDOWN_ENTRIES_PER_STEP 64

/*
 * Unattributed rows {cgroup, uid, comm} of their own the node may hold (any
 * user can make them: a task in no registered cgroup that renames itself).
 * Beyond it, a call of a new row goes to its uid's row {0, uid,
 * VNFS_OTHER_COMM}: per uid the totals still add up.  The rest of the map
 * (1,024 rows) is for those per-uid rows and the helper's {0, uid,
 * VNFS_EXPIRED_COMM} rows, into which it folds rows whose cgroup is gone or
 * that did not move for VNFS_UNATTRIBUTED_IDLE_MS (helper/kernel/probes.c); it
 * then lowers unattributed_entries[0], the count of rows of their own.
 */
#define VNFS_MAX_UNATTRIBUTED_NAMED_ENTRIES (VNFS_MAX_UNATTRIBUTED_ENTRIES - 1024)

/* Process names of the rows above.  Cgroup id 0 is no cgroup's (the root's
 * is 1), so the unattributed ones never meet a task's own row; a process
 * that names itself "[other]" shares its step's [other] row. */
#define VNFS_OTHER_COMM "[other]"
#define VNFS_EXPIRED_COMM "[expired]"
_Static_assert(sizeof(VNFS_EXPIRED_COMM) <= 16 && sizeof(VNFS_OTHER_COMM) <= 16,
	       "the marker names fit a comm (VNFS_COMM_LEN)");
_Static_assert(VNFS_MAX_UNATTRIBUTED_NAMED_ENTRIES < VNFS_MAX_UNATTRIBUTED_ENTRIES,
	       "room is left for the [other] and [expired] rows");

/* cgroup levels searched for a registered ancestor (level 0 is the root). */
#define VNFS_MAX_CGROUP_DEPTH 16

/* Slot value cached for a cgroup that has no registered ancestor. */
#define VNFS_SLOT_NONE 0xffffffffu


/* Calls a task keeps before moving them to the shared maps (see above); a
 * power of two (the BPF side bounds an index with a mask). */
#define VNFS_PENDING_CALLS 16
/* Kernels before 5.11 (the VNFS_LEGACY_KERNEL build of vnfs.bpf.c): the
 * threads that may hold a task state at once, each from its first NFS call
 * to its exit; past it a call is not counted (VNFS_HEALTH_TASK_STATE_FAILED).
 * The map is preallocated, about 976 bytes a thread: 16.0 MB. */
#define VNFS_LEGACY_MAX_TASKS 16384
_Static_assert((VNFS_PENDING_CALLS & (VNFS_PENDING_CALLS - 1)) == 0,
	       "VNFS_PENDING_CALLS must be a power of two");
/* How long the oldest pending call may wait while its task keeps calling. */
#define VNFS_PENDING_MAX_AGE_NS 1000000000ull
/* A call that moved at least this many bytes, or took at least this long,
 * moves the calls pending at once: a drain costs a few hundred nanoseconds,
 * nothing beside such a call, and a task that goes idle after it (a
 * checkpoint written, then hours of compute) would otherwise keep it out of
 * the live counters until its next call or its exit.  What a task can hold
 * back is then at most VNFS_PENDING_CALLS - 1 cheap calls. */
#define VNFS_PENDING_DRAIN_BYTES (1024 * 1024)
#define VNFS_PENDING_DRAIN_NS 1000000ull

/* For the benchmark only (docs/PERFORMANCE.md, "What each part of a call
 * costs"): the parts of a counted call the programs leave out, each level
 * one more, from the last to run back to the entry, so that the difference
 * between two levels is one part's cost, measured on vnfs's own programs.
 * The helper sets it (rodata cost_cut) from the environment variable
 * VNFS_BENCH_COST_CUT; production runs VNFS_CUT_NONE.  At any level above
 * VNFS_CUT_HISTOGRAMS the counts are incomplete. */
enum vnfs_cost_cut {
	VNFS_CUT_NONE,        /* everything */
	VNFS_CUT_BREAKDOWN,   /* no process and mount breakdown rows */
	VNFS_CUT_HISTOGRAMS,  /* nor latency and request size histograms */
	VNFS_CUT_DRAIN,       /* nor moving pending calls to the step's counters */
	VNFS_CUT_PENDING,     /* nor keeping the call pending: its workload looked up only */
	VNFS_CUT_ATTRIBUTION, /* nor the workload: the exit classifies and times the call */
	VNFS_CUT_EXIT,        /* nor that: the exit finds the task state and the depth */
	VNFS_CUT_ENTRY,       /* and the entry keeps only the start time (no device, object) */
	VNFS_CUT_LEVELS
};

/* The probes attached per hooked kernel function (see helper/kernel/probes.c). */
#define VNFS_MAX_HOOKS 40

/* Expands PROGRAMS(0) ... PROGRAMS(39): a BPF object defines one set of
 * programs per hook slot, since each program has one target. */
#define VNFS_FOR_EACH_HOOK_SLOT(PROGRAMS)                                              \
	PROGRAMS(0) PROGRAMS(1) PROGRAMS(2) PROGRAMS(3) PROGRAMS(4) PROGRAMS(5) PROGRAMS(6) \
	PROGRAMS(7) PROGRAMS(8) PROGRAMS(9) PROGRAMS(10) PROGRAMS(11) PROGRAMS(12)      \
	PROGRAMS(13) PROGRAMS(14) PROGRAMS(15) PROGRAMS(16) PROGRAMS(17) PROGRAMS(18)   \
	PROGRAMS(19) PROGRAMS(20) PROGRAMS(21) PROGRAMS(22) PROGRAMS(23) PROGRAMS(24)   \
	PROGRAMS(25) PROGRAMS(26) PROGRAMS(27) PROGRAMS(28) PROGRAMS(29) PROGRAMS(30)   \
	PROGRAMS(31) PROGRAMS(32) PROGRAMS(33) PROGRAMS(34) PROGRAMS(35) PROGRAMS(36)   \
	PROGRAMS(37) PROGRAMS(38) PROGRAMS(39)
_Static_assert(VNFS_MAX_HOOKS == 40, "VNFS_FOR_EACH_HOOK_SLOT must expand VNFS_MAX_HOOKS slots");

/* ELF sections of the fentry/fexit programs.  Not libbpf's "fentry" and
 * "fexit": the helper registers its own handlers for these, which give the
 * kernel each program's target by BTF id (libbpf would look it up by name,
 * program by program, which dominated start-up under emulation).  A hook
 * slot's programs are in VNFS_FENTRY_SECTION or VNFS_FEXIT_SECTION, their
 * target chosen at run time; the RPC programs (wire.bpf.c) name theirs:
 * VNFS_FEXIT_SECTION "/<function>", VNFS_TP_BTF_SECTION "/<tracepoint>". */
#define VNFS_FENTRY_SECTION "vnfs.fentry"
#define VNFS_FEXIT_SECTION "vnfs.fexit"
#define VNFS_TP_BTF_SECTION "vnfs.tp_btf"


/*
 * Environment jobs (DESIGN.md, decision 11).  A task in no registered
 * cgroup whose environment names a job, through one of the variables the
 * helper lists in environment_variables ([environment] job_variables),
 * belongs to that job from its exec on, and so does every task it forks.
 * The kernel reads the environment as the new program starts
 * (capture_environment in vnfs.bpf.c), before the program can make a call:
 * nothing is read from /proc afterwards, so a process that execs, does its
 * I/O and exits at once is counted as exactly as a long one.
 *
 * Each job {uid, variable, value, part} the node sees gets a number from
 * the kernel (environment_job_counter), and that number with
 * VNFS_ENVIRONMENT_JOB_BIT set stands where a cgroup id stands: as a key of
 * cgroup_slots once the helper registers the job, and in the unattributed
 * rows of its calls until then, which the helper folds into the job as it
 * folds a late-identified cgroup's.  Cgroup ids (kernfs node ids: inode
 * number and generation) never have bit 63 set.  The uid is part of a job's
 * key, so a user who names another user's job in an environment makes a job
 * of their own, never adds to the other's.
 */
#define VNFS_ENVIRONMENT_JOB_BIT (1ull << 63)
/* Whether a counting id (a key of cgroup_slots, an unattributed row's
 * cgroup_id) is an environment job's rather than a cgroup's. */
#define VNFS_IS_ENVIRONMENT_JOB(id) (((id) & VNFS_ENVIRONMENT_JOB_BIT) != 0)
#define VNFS_MAX_ENVIRONMENT_JOBS 1024
/* Variables the helper may list: job variables (LSB_JOBID, ...), each with
 * at most one part variable (SGE_TASK_ID beside JOB_ID), and tag variables.
 * A job variable's index is its priority: when an environment names jobs
 * through several, the first listed wins. */
#define VNFS_ENVIRONMENT_MAX_JOB_VARIABLES 8
#define VNFS_ENVIRONMENT_MAX_TAG_VARIABLES 8
/* Bytes of a variable's name and of a value kept, with their NUL.  A value
 * longer than that is not read (a job id cut short would name another). */
#define VNFS_ENVIRONMENT_NAME_MAX 32
#define VNFS_ENVIRONMENT_VALUE_MAX 64
/* Strings of an environment looked at, and the bytes of one read at once
 * (a longer string is skipped a chunk at a time: it cannot be a listed
 * variable with a value that fits). */
#define VNFS_ENVIRONMENT_MAX_STRINGS 4096
#define VNFS_ENVIRONMENT_CHUNK 128
_Static_assert(VNFS_ENVIRONMENT_NAME_MAX + VNFS_ENVIRONMENT_VALUE_MAX <= VNFS_ENVIRONMENT_CHUNK,
	       "a listed variable with a value that fits is read in one chunk");

/* environment_variables: a name, NUL-padded to VNFS_ENVIRONMENT_NAME_MAX
 * bytes -> what it is. */
enum vnfs_environment_role {
	VNFS_ENVIRONMENT_JOB = 1,  /* index: the job variable */
	VNFS_ENVIRONMENT_PART,     /* index: the job variable it is the part of */
	VNFS_ENVIRONMENT_TAG,      /* index: the tag variable */
};

struct vnfs_environment_variable {
	__u8 role;  /* enum vnfs_environment_role */
	__u8 index;
	__u16 pad;
};

/* environment_job_numbers: this -> the job's number. */
struct vnfs_environment_job_key {
	__u32 uid;
	__u32 variable; /* index of the job variable that named it */
	char value[VNFS_ENVIRONMENT_VALUE_MAX];
	char part[VNFS_ENVIRONMENT_VALUE_MAX]; /* "" without a part variable */
};

/* environment_jobs: a job's number -> the job.  live_tasks counts the
 * tasks (threads included) that belong to it: each exec that names it and
 * each fork of one of them adds one, each exit takes one away.  The helper
 * finishes a job whose count is back to 0 (helper/discover/). */
struct vnfs_environment_job {
	struct vnfs_environment_job_key key;
	__s64 live_tasks;
	__u64 cgroup_id;     /* the cgroup of the exec that named it first */
	__u32 tags_found;    /* bit i: tags[i] is the value of tag variable i */
	__u32 pad;
	char tags[VNFS_ENVIRONMENT_MAX_TAG_VARIABLES][VNFS_ENVIRONMENT_VALUE_MAX];
};

/* task_jobs (task storage): the job a task belongs to, 0 for none. */
struct vnfs_task_job {
	__u64 number;
};

/* cgroup_slots: cgroup id -> the slot of the step it belongs to. */
struct vnfs_registration {
	__u32 slot;
	__u32 flags;
};

/* cgroup_cache: cgroup id -> resolved slot, valid while generation matches,
 * and the registered cgroup (or itself) that gave it, 0 for none: an RPC's
 * owner is checked against it when the RPC ends (bpf/wire.h). */
struct vnfs_cached_slot {
	__u32 slot;
	__u32 generation;
	__u64 registered_id;
};

/* breakdown_stats: {slot, device, comm} -> what the tasks of one process
 * name did on one mount (device = superblock s_dev, which the helper maps
 * to a mount point and server:/export).  One map, not one per dimension, so
 * that a call costs one hash update; the helper sums it per process name and
 * per mount (helper/kernel/probes.c).  read_* include mmap_read. */
struct vnfs_breakdown_key {
	__u32 slot;
	__u32 device;
	char comm[VNFS_COMM_LEN];
};

struct vnfs_breakdown_stats {
	__u64 read_ops;
	__u64 read_bytes;
	__u64 write_ops;
	__u64 write_bytes;
	__u64 other_ops;
	__u64 errors;
	__u64 time_ns;
};

/* unattributed_stats: operations of tasks in no registered cgroup, kept per
 * {leaf cgroup id, uid, comm} so the node total adds up and leaks show.  A
 * task of an environment job has its job's id (VNFS_ENVIRONMENT_JOB_BIT |
 * number) in cgroup_id, until the helper registers the job. */
struct vnfs_unattributed_key {
	__u64 cgroup_id;
	__u32 uid;
	char comm[VNFS_COMM_LEN];
	__u32 pad;
};

/* Per operation, as a step counts it but for the histograms: a cgroup the
 * helper identifies only after its first calls (a container it discovers,
 * helper/discover/) gets these rows folded into its step exactly as they
 * were counted (fold_unattributed below). */
struct vnfs_unattributed_operation {
	__u64 count;
	__u64 errors;
	__u64 bytes;   /* read, write, mmap_read only */
	__u64 time_ns; /* sum of the timed calls' durations */
};

struct vnfs_unattributed_stats {
	struct vnfs_unattributed_operation operations[VNFS_OP_COUNT];
};

/*
 * The context of fold_unattributed, a BPF_PROG_TYPE_SYSCALL program the
 * helper runs (BPF_PROG_TEST_RUN) to add one unattributed row to a step:
 * in the kernel, with the same atomic adds the probes use, because the step
 * counts its cgroup's new calls meanwhile and a read-modify-write of the
 * map value from user space would lose some of them.  The row's calls go
 * to step_stats[slot] (no latency or size histogram: the row has none), to
 * the breakdown row {slot, device 0 (mount unknown), comm}, and to
 * step_activity[slot].
 */
struct vnfs_unattributed_fold {
	__u32 slot;
	__u32 pad;
	char comm[VNFS_COMM_LEN];
	struct vnfs_unattributed_stats stats;
};

/* health[index]: events the helper exports as self-metrics. */
enum vnfs_health_counter {
	VNFS_HEALTH_CACHE_FULL,        /* cgroup_cache update failed */
	VNFS_HEALTH_BREAKDOWN_FULL,    /* breakdown_stats had no room */
	VNFS_HEALTH_UNATTRIBUTED_FULL, /* unattributed_stats had no room */
	VNFS_HEALTH_TASK_STATE_FAILED, /* no task state: call not counted */
	VNFS_HEALTH_UNMATCHED_EXIT,    /* exit seen without its entry */
	VNFS_HEALTH_BREAKDOWN_OTHER,   /* calls in a step's [other] row (64 rows made) */
	VNFS_HEALTH_UNATTRIBUTED_OTHER, /* calls in a uid's [other] row (3,072 rows made) */
	VNFS_HEALTH_UNATTRIBUTED_EXPIRED, /* rows the helper folded into [expired] ones */
	VNFS_HEALTH_NEW_CGROUPS_LOST,  /* new_cgroups had no room: a cgroup not told */
	VNFS_HEALTH_ENVIRONMENT_JOBS_FULL, /* an exec named a job environment_jobs had no room for */
	VNFS_HEALTH_ENVIRONMENT_TOO_LONG,  /* a listed variable's value too long to keep */
	VNFS_HEALTH_WIRE_FULL,         /* an RPC ended with no room for its wire_stats row */
	VNFS_HEALTH_WIRE_UNATTRIBUTED_OTHER, /* an RPC of no workload in its mount's row of id 0
					      * (4,096 rows with an owner's id made) */
	VNFS_HEALTH_MISSED_EXIT,       /* a kretprobe's return not reported: call not counted */
	VNFS_HEALTH_COUNTERS
};

/* How a hooked function's arguments and result are read (set by the helper
 * from the function's BTF prototype before the programs load). */
enum vnfs_object_kind {
	VNFS_OBJECT_NONE,   /* no device for the mount breakdown */
	VNFS_OBJECT_FILE,   /* struct file * */
	VNFS_OBJECT_KIOCB,  /* struct kiocb * */
	VNFS_OBJECT_INODE,  /* struct inode * */
	VNFS_OBJECT_DENTRY, /* struct dentry * */
	VNFS_OBJECT_PATH,   /* const struct path * */
	VNFS_OBJECT_READAHEAD, /* struct readahead_control * */
	VNFS_OBJECT_FOLIO,  /* struct folio * (bytes = folio size) */
	VNFS_OBJECT_MMAP_DESC, /* struct vm_area_desc * (Linux 6.17 on) */
	VNFS_OBJECT_PAGE,   /* struct page * (bytes = one page; before 5.19) */
};

enum vnfs_result_kind {
	VNFS_RESULT_INT,     /* int/long: negative is an errno */
	VNFS_RESULT_POINTER, /* pointer: an ERR_PTR is an errno */
	VNFS_RESULT_VOID,
};

/* Flags of vnfs_hook_config.flags. */
#define VNFS_HOOK_BYTES_FROM_RESULT (1u << 0) /* read/write: result = bytes */
#define VNFS_HOOK_COUNT_IF_OPENED (1u << 1)   /* atomic_open: only if it opened */
#define VNFS_HOOK_OUTSIDE_READ (1u << 2)      /* page fill: not inside read/write */
#define VNFS_HOOK_BYTES_FROM_OBJECT (1u << 3) /* page fill: bytes from object */
#define VNFS_HOOK_RESULT_32BIT (1u << 4)      /* INT result is a 32-bit int */
/* lookup: a negative dentry (the server said the name does not exist) is a
 * failed lookup, although nfs_lookup returns success for it; otherwise an
 * open of a missing file on NFSv3 (no atomic_open) shows no error anywhere.
 * Lookups made to create or rename onto a name (LOOKUP_CREATE, LOOKUP_EXCL,
 * LOOKUP_RENAME_TARGET) expect a negative answer and are not errors. */
#define VNFS_HOOK_NEGATIVE_IS_ERROR (1u << 5)
/* atomic_open: an open that created its file is also a create, as NFSv3's
 * ->create then ->open are: NFSv4 creates inside its OPEN.  Needs the
 * struct file (VNFS_HOOK_COUNT_IF_OPENED's). */
#define VNFS_HOOK_CREATE_IF_CREATED (1u << 6)
/* NFSv2/v3's atomic_open (nfs_atomic_open_v23, Linux 6.14 on): counted only
 * when it creates (FMODE_CREATED, set before the CREATE is sent, so a
 * refused create counts as an error); the open that follows is ->open's,
 * which finish_open() calls and which counts.  Needs the struct file. */
#define VNFS_HOOK_COUNT_IF_CREATED (1u << 7)
/* nfs_readpages (before 5.18): a page-cache fill whose bytes are its page
 * count argument (file_argument) pages. */
#define VNFS_HOOK_BYTES_FROM_PAGES (1u << 8)
/* The hooks whose exit reads a struct file * or dentry (file_argument), or
 * the page count. */
#define VNFS_HOOK_NEEDS_FILE                                                           \
	(VNFS_HOOK_COUNT_IF_OPENED | VNFS_HOOK_NEGATIVE_IS_ERROR | VNFS_HOOK_COUNT_IF_CREATED | \
	 VNFS_HOOK_BYTES_FROM_PAGES)

struct vnfs_hook_config {
	__u32 operation;      /* enum vnfs_operation */
	__u32 flags;          /* VNFS_HOOK_* */
	__u8 object_kind;     /* enum vnfs_object_kind */
	__u8 object_argument; /* 0-based index of that argument */
	__u8 file_argument;   /* COUNT_IF_OPENED, COUNT_IF_CREATED: index of the struct file *;
				 NEGATIVE_IS_ERROR: of the struct dentry * */
	__u8 result_kind;     /* enum vnfs_result_kind */
	__u8 lookup_flags_argument; /* NEGATIVE_IS_ERROR: index of the lookup flags */
};

/* One counted call, as it waits in its task's storage. */
struct vnfs_pending_call {
	__u8 operation;   /* enum vnfs_operation */
	__u8 error;       /* returned a negative errno */
	__u8 timed;       /* outermost of its operation: duration_ns is set */
	__u8 created;     /* an open that created its file: a create too (untimed) */
	__u32 device;     /* superblock s_dev, 0 when unknown */
	__u64 duration_ns;
	__u64 bytes;
};

/* Per task, in task storage: when each operation in progress started, and
 * the calls not yet moved to the shared maps.  One start per operation so
 * nested hooks (access inside open, getattr inside lookup) never overwrite
 * each other; depth handles the rare same-operation recursion (only the
 * outermost call is timed). */
struct vnfs_task_state {
	/* Whose the pending calls are: the task's cgroup, its step slot as
	 * resolved under cgroup_slots generation slot_generation, and its name.
	 * Any of them changing moves the pending calls out first. */
	__u64 slot_cgroup_id;
	/* What they are counted under: slot_cgroup_id, or, for a task of an
	 * environment job in no registered cgroup, VNFS_ENVIRONMENT_JOB_BIT |
	 * the job's number (its key in cgroup_slots and unattributed rows). */
	__u64 counting_id;
	__u32 slot_generation;
	__u32 slot;
	char comm[VNFS_COMM_LEN];
	__u64 pending_since_ns; /* when the oldest pending call ended */
	__u32 pending_count;
	__u32 pad;
	struct vnfs_pending_call pending[VNFS_PENDING_CALLS];
	__u64 start_ns[VNFS_OP_COUNT];
	__u32 device[VNFS_OP_COUNT];
	__u64 object[VNFS_OP_COUNT]; /* kprobe path: argument kept for the return */
	/* kprobe path, by enum vnfs_direction: the serial of the read or write
	 * system call the outermost read or write entered in (bpf/vnfs.bpf.c,
	 * data_call_serial). */
	__u64 data_serial[VNFS_DIRECTIONS];
	__u8 depth[VNFS_OP_COUNT];
};

#endif /* VNFS_ABI_H */
