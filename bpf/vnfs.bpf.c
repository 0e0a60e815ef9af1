// SPDX-License-Identifier: GPL-2.0
/*
 * vnfs.bpf.c — the kernel side: probes on the NFS client's file, inode and
 * address-space operations that count every call per job step.
 *
 * The programs are generic.  The helper (helper/kernel/probes.c) picks, per hooked
 * kernel function, one numbered hook slot and fills hook_config[slot] from
 * the function's BTF prototype before loading: which operation it counts,
 * which argument holds the object that tells the mount apart, how to read
 * the result.  Each slot has four programs (fentry, fexit, kprobe,
 * kretprobe); the helper loads the fentry/fexit pair where the kernel allows
 * it and the kprobe pair otherwise.  Nothing here names a kernel function.
 *
 * A call is attributed to the job step whose cgroup is the nearest
 * registered ancestor of the calling task's cgroup (see resolve_slot).  All
 * hooks run in the calling task, never in rpciod or writeback workers, so
 * the current cgroup is the caller's.  A counted call first waits in the
 * task's storage and moves to the shared counters with up to 15 others
 * (count_call, drain_pending).  The shared counters are updated with atomic
 * adds: per-CPU copies would multiply the map memory by the number of CPUs
 * (docs/PROBES.md has the arithmetic).
 *
 * Built twice (bpf/local.am).  Kernels before 5.11 (Debian's 5.10) have no
 * task storage, no BTF pointer to the current task and no pointer
 * arguments to global functions, and their nfs module has no BTF, so only
 * the kprobe programs can load there.  For them this file is built again
 * with VNFS_LEGACY_KERNEL: a task's state lives in a hash map by thread id,
 * deleted at its exit, the subprograms are static, and environment jobs
 * (which need task storage and bpf_loop) are left out.  The helper picks
 * the build by what the kernel has (helper/kernel/probes.c).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "vnfs.h"
#include "log2_bucket.h"

char LICENSE[] SEC("license") = "GPL";

#define ECHILD 10 /* errno, which vmlinux.h does not carry */

/* Filled by the helper before load (read-only afterwards, so the verifier
 * sees each program's configuration as constants and prunes the rest). */
const volatile struct vnfs_hook_config hook_config[VNFS_MAX_HOOKS] = {};
const volatile __u32 page_shift = 12;
/* enum vnfs_cost_cut, for the benchmark.  Read-only data: the verifier knows
 * its value and removes the tests of LEFT_OUT() with the branches they close,
 * so at VNFS_CUT_NONE the programs are what they would be without it. */
const volatile __u32 cost_cut = VNFS_CUT_NONE;
#define LEFT_OUT(part) (cost_cut >= (part))

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VNFS_MAX_REGISTERED_CGROUPS);
	__type(key, __u64);
	__type(value, struct vnfs_registration);
} cgroup_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_slots_generation SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, VNFS_MAX_CACHED_CGROUPS);
	__type(key, __u64);
	__type(value, struct vnfs_cached_slot);
} cgroup_cache SEC(".maps");

/* step_stats[slot]: read by the helper one slot at a time
 * (bpf_map_lookup_elem), never mapped: a mapping made all 7.4 MiB resident
 * in the helper (docs/PERFORMANCE.md), so it is not BPF_F_MMAPABLE. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, VNFS_MAX_STEPS);
	__type(key, __u32);
	__type(value, struct vnfs_step_stats);
} step_stats SEC(".maps");

/* step_activity[slot]: calls moved into step_stats[slot], bumped after
 * them.  The helper maps this small array and copies a step's counters only
 * when its activity moved, so idle steps cost it neither reads nor memory. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, VNFS_MAX_STEPS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
} step_activity SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VNFS_MAX_BREAKDOWN_ENTRIES);
	__type(key, struct vnfs_breakdown_key);
	__type(value, struct vnfs_breakdown_stats);
} breakdown_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VNFS_MAX_UNATTRIBUTED_ENTRIES);
	__type(key, struct vnfs_unattributed_key);
	__type(value, struct vnfs_unattributed_stats);
} unattributed_stats SEC(".maps");

/* breakdown_entries[slot]: rows the slot's step created in breakdown_stats,
 * held to VNFS_MAX_BREAKDOWN_ENTRIES_PER_STEP (see vnfs.h); zeroed by the
 * helper with the slot's rows when the slot is reset. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, VNFS_MAX_STEPS);
	__type(key, __u32);
	__type(value, __u64);
} breakdown_entries SEC(".maps");

/* unattributed_entries[0]: rows of their own in unattributed_stats, held to
 * VNFS_MAX_UNATTRIBUTED_NAMED_ENTRIES.  The helper maps it and lowers it
 * with an atomic subtraction when it folds rows away (an update through the
 * syscall would overwrite what a probe adds meanwhile). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
} unattributed_entries SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, VNFS_HEALTH_COUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} health SEC(".maps");

#ifdef VNFS_LEGACY_KERNEL
/* Preallocated: 5.10's verifier answers a tracing program that uses a hash
 * allocating at run time with a kernel WARNING ("trace type BPF program
 * uses run-time allocation"), which taints the kernel and panics a node
 * booted with panic_on_warn.  A preallocated element comes from a free
 * list, safe in any context the probes run in. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VNFS_LEGACY_MAX_TASKS);
	__type(key, __u32); /* thread id */
	__type(value, struct vnfs_task_state);
} task_state SEC(".maps");

/* Subprograms the verifier checks with their caller's arguments: 5.10 takes
 * only scalars and the context as a global function's arguments. */
#define SUBPROGRAM static __noinline
#else
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct vnfs_task_state);
} task_state SEC(".maps");

/* Global: the verifier checks each once, on its own (see drain_call). */
#define SUBPROGRAM __noinline
#endif

/* The calls a task's state holds before they move to the shared maps.  In
 * the legacy build one: its subprograms are static, so the verifier walks
 * each pending call's paths anew, and 16 took it past its million
 * instructions.  There the helper keeps pending_limit at 1, so every call
 * moves out as it ends. */
#ifdef VNFS_LEGACY_KERNEL
#define PENDING_BATCH 1
#else
#define PENDING_BATCH VNFS_PENDING_CALLS
#endif

/* A new thread's state in the legacy build.  In both: the helper opens
 * either build with one skeleton, so their globals must be the same. */
const struct vnfs_task_state task_state_zero = {};

/* new_cgroups: the id of each cgroup2 directory as it is made, for the
 * helper's discovery (helper/discover/): a container's cgroup is made
 * when its runtime creates it, while the runtime's state describing it
 * exists, however briefly the container then lives. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, VNFS_NEW_CGROUPS_RING_BYTES);
} new_cgroups SEC(".maps");

/* Environment jobs (see vnfs.h): the variables listed, filled by the helper. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VNFS_ENVIRONMENT_MAX_JOB_VARIABLES * 2 +
				    VNFS_ENVIRONMENT_MAX_TAG_VARIABLES);
	__type(key, char[VNFS_ENVIRONMENT_NAME_MAX]);
	__type(value, struct vnfs_environment_variable);
} environment_variables SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VNFS_MAX_ENVIRONMENT_JOBS);
	__type(key, __u64);
	__type(value, struct vnfs_environment_job);
} environment_jobs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VNFS_MAX_ENVIRONMENT_JOBS);
	__type(key, struct vnfs_environment_job_key);
	__type(value, __u64);
} environment_job_numbers SEC(".maps");

/* [0]: the last number given to a job (a map, not a global, so that it is
 * pinned with the jobs and a restarted helper's kernel side goes on from it). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} environment_job_counter SEC(".maps");

#ifdef VNFS_LEGACY_KERNEL
/* Never used there (no environment jobs), but named by code that is. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct vnfs_task_job);
} task_jobs SEC(".maps");
#else
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct vnfs_task_job);
} task_jobs SEC(".maps");
#endif

/* What capture_environment reads an environment into: too big for the
 * stack, one per CPU (the program runs to its end on one). */
struct environment_scratch {
	char chunk[VNFS_ENVIRONMENT_CHUNK];
	char name[VNFS_ENVIRONMENT_NAME_MAX];
	__u32 name_length; /* of name; see note_variable */
	__u32 jobs_found;  /* bit i: values[i] holds job variable i's value */
	__u32 parts_found; /* bit i: parts[i] holds its part variable's */
	char values[VNFS_ENVIRONMENT_MAX_JOB_VARIABLES][VNFS_ENVIRONMENT_VALUE_MAX];
	char parts[VNFS_ENVIRONMENT_MAX_JOB_VARIABLES][VNFS_ENVIRONMENT_VALUE_MAX];
	struct vnfs_environment_job job; /* the job named, tags included */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct environment_scratch);
} environment_scratch SEC(".maps");

/* Never used here: the helper stores {VNFS_ABI_VERSION, sizeof(struct
 * vnfs_step_stats)} in it so that a later helper can tell whether the
 * pinned maps have its layout. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u32);
} abi SEC(".maps");

/* Pre-6.6 kernels keep a large folio's order in its own byte. */
struct folio___with_order {
	unsigned char _folio_order;
} __attribute__((preserve_access_index));

/* Linux 6.17 on; not in bpf/vmlinux's kernel. */
struct vm_area_desc___vnfs {
	struct file *file;
} __attribute__((preserve_access_index));

static __always_inline void health_add_n(__u32 counter, __u64 events)
{
	__u64 *value = bpf_map_lookup_elem(&health, &counter);

	if (value)
		__sync_fetch_and_add(value, events);
}

static __always_inline void health_add(__u32 counter)
{
	health_add_n(counter, 1);
}

/* New rows' first values, in .rodata rather than on the stack: the
 * verifier allows the programs 512 bytes of stack for all nested calls. */
const struct vnfs_unattributed_stats unattributed_zero = {};
const struct vnfs_breakdown_stats breakdown_zero = {};

/* Finds key in map or inserts zero for it; a full map is a health event. */
static __always_inline void *lookup_or_insert(void *map, const void *key, const void *zero,
					      __u32 full_counter)
{
	void *value = bpf_map_lookup_elem(map, key);

	if (value)
		return value;
	bpf_map_update_elem(map, key, zero, BPF_NOEXIST);
	value = bpf_map_lookup_elem(map, key);
	if (!value)
		health_add(full_counter);
	return value;
}

/*
 * Inserts a new row for key in map and counts it in *created (the rows made
 * so far under one bound, which the caller checked).  Returns the row, or
 * NULL when the map is full (a health event).  The count moves only for a
 * row this call inserted; another CPU inserting the same key first is found
 * by the lookup.  The check and the insert are not one atomic step (BPF's
 * fetch-and-add needs a newer instruction set than this build targets), so
 * CPUs racing at the bound may each add one row.
 */
static __always_inline void *insert_counted(void *map, const void *key, const void *zero,
					    __u64 *created, __u32 full_counter)
{
	void *value;

	if (bpf_map_update_elem(map, key, zero, BPF_NOEXIST) == 0)
		__sync_fetch_and_add(created, 1);
	value = bpf_map_lookup_elem(map, key);
	if (!value)
		health_add(full_counter);
	return value;
}

/* The process name of the rows that take what is beyond a bound. */
static __always_inline void set_other_comm(char *comm)
{
	__builtin_memset(comm, 0, VNFS_COMM_LEN);
	__builtin_memcpy(comm, VNFS_OTHER_COMM, sizeof(VNFS_OTHER_COMM));
}

#ifdef VNFS_LEGACY_KERNEL
/* struct cgroup before 6.1 kept its ancestors' ids, itself included. */
struct cgroup___with_ancestor_ids {
	int level;
	__u64 ancestor_ids[];
} __attribute__((preserve_access_index));

/* bpf_get_current_ancestor_cgroup_id, which tracing programs have only
 * since 5.14: the id of the current task's cgroup2 ancestor at level, 0
 * above its own level. */
static __always_inline __u64 current_ancestor_cgroup_id(int level)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct cgroup___with_ancestor_ids *cgroup;
	__u64 id = 0;

	cgroup = (void *)BPF_CORE_READ(task, cgroups, dfl_cgrp);
	if (!cgroup || level > BPF_CORE_READ(cgroup, level))
		return 0;
	bpf_probe_read_kernel(&id, sizeof(id),
			      (void *)cgroup +
				      bpf_core_field_offset(struct cgroup___with_ancestor_ids,
							    ancestor_ids) +
				      level * sizeof(__u64));
	return id;
}
#else
#define current_ancestor_cgroup_id bpf_get_current_ancestor_cgroup_id
#endif

/* The id of the nearest registered ancestor (or the cgroup itself), 0 for
 * none: the deepest level is tried first, so a registered task sub-cgroup
 * beats its registered step.  Level 0 is the root, never registered.  A
 * global function, so that the verifier checks it once on its own and its
 * caller sees one unknown id, not one path per level the walk can stop at.
 * Not unrolled: every fexit program carries a copy, and the kernel's time
 * to load them grows with their size. */
__noinline __u64 registered_ancestor_id(void)
{
#pragma clang loop unroll(disable)
	for (int level = VNFS_MAX_CGROUP_DEPTH; level >= 1; level--) {
		/* 0 above the task's own depth: found in no registered cgroup. */
		__u64 cgroup_id = current_ancestor_cgroup_id(level);

		if (cgroup_id != 0 && bpf_map_lookup_elem(&cgroup_slots, &cgroup_id))
			return cgroup_id;
	}
	return 0;
}

/* The slot registered_ancestor_id's cgroup has (a slot beyond step_stats
 * counts as unattributed), or VNFS_SLOT_NONE. */
static __always_inline __u32 registered_slot(__u64 registered_id)
{
	struct vnfs_registration *registration;

	if (registered_id == 0)
		return VNFS_SLOT_NONE;
	registration = bpf_map_lookup_elem(&cgroup_slots, &registered_id);
	return registration ? registration->slot : VNFS_SLOT_NONE;
}

static __always_inline __u32 registered_ancestor_slot(void)
{
	return registered_slot(registered_ancestor_id());
}

static __always_inline __u32 cgroup_slots_generation_now(void)
{
	__u32 zero = 0, *generation = bpf_map_lookup_elem(&cgroup_slots_generation, &zero);

	return generation ? *generation : 0;
}

/* The step slot of the calling task's cgroup under cgroup_slots generation
 * generation (VNFS_SLOT_NONE for none) and the registered cgroup that gives
 * it.  The ancestor walk costs up to VNFS_MAX_CGROUP_DEPTH lookups, so its
 * answer is cached per cgroup for the task's siblings (and the task keeps
 * the slot in its state, see count_call). */
static __always_inline struct vnfs_cached_slot resolve_cgroup(__u64 cgroup_id, __u32 generation)
{
	struct vnfs_cached_slot *cached, fresh = { .generation = generation };

	cached = bpf_map_lookup_elem(&cgroup_cache, &cgroup_id);
	if (cached && cached->generation == generation)
		return *cached;
	fresh.registered_id = registered_ancestor_id();
	fresh.slot = registered_slot(fresh.registered_id);
	if (bpf_map_update_elem(&cgroup_cache, &cgroup_id, &fresh, BPF_ANY))
		health_add(VNFS_HEALTH_CACHE_FULL);
	return fresh;
}

static __always_inline __u32 resolve_slot(__u64 cgroup_id, __u32 generation)
{
	return resolve_cgroup(cgroup_id, generation).slot;
}

static __always_inline struct super_block *object_super_block(__u32 kind, __u64 object)
{
	switch (kind) {
	case VNFS_OBJECT_FILE:
		return BPF_CORE_READ((struct file *)object, f_inode, i_sb);
	case VNFS_OBJECT_KIOCB:
		return BPF_CORE_READ((struct kiocb *)object, ki_filp, f_inode, i_sb);
	case VNFS_OBJECT_INODE:
		return BPF_CORE_READ((struct inode *)object, i_sb);
	case VNFS_OBJECT_DENTRY:
		return BPF_CORE_READ((struct dentry *)object, d_sb);
	case VNFS_OBJECT_PATH:
		return BPF_CORE_READ((struct path *)object, dentry, d_sb);
	case VNFS_OBJECT_READAHEAD:
		return BPF_CORE_READ((struct readahead_control *)object, mapping, host, i_sb);
	case VNFS_OBJECT_FOLIO:
		return BPF_CORE_READ((struct folio *)object, mapping, host, i_sb);
	case VNFS_OBJECT_MMAP_DESC:
		/* Each kind's reads must relocate on kernels that lack it too: the
		 * kprobe.multi program verifies every kind (kprobe_multi_entry). */
		if (!bpf_core_field_exists(struct vm_area_desc___vnfs, file))
			return NULL;
		return BPF_CORE_READ((struct vm_area_desc___vnfs *)object, file, f_inode, i_sb);
	case VNFS_OBJECT_PAGE:
		return BPF_CORE_READ((struct page *)object, mapping, host, i_sb);
	}
	return NULL;
}

/* The device number of the object's superblock: the mount breakdown key. */
static __always_inline __u32 object_device(__u32 kind, __u64 object)
{
	struct super_block *super_block;

	if (!object)
		return 0;
	super_block = object_super_block(kind, object);
	if (!super_block)
		return 0;
	return BPF_CORE_READ(super_block, s_dev);
}

static __always_inline __u64 folio_bytes(struct folio *folio)
{
	unsigned long flags = 0;
	__u32 order = 0;

	/* The flags word opens every struct page and folio, whatever its C
	 * type (unsigned long up to 6.17, memdesc_flags_t after). */
	bpf_probe_read_kernel(&flags, sizeof(flags), folio);
	if (flags & (1ul << bpf_core_enum_value(enum pageflags, PG_head))) {
		if (bpf_core_field_exists(struct folio___with_order, _folio_order))
			order = BPF_CORE_READ((struct folio___with_order *)folio, _folio_order);
		else if (bpf_core_field_exists(folio->_flags_1))
			order = BPF_CORE_READ(folio, _flags_1) & 0xff;
	}
	return (1ull << page_shift) << (order & 31);
}

/* Bytes a page-cache fill brings in, measured at entry: by the time
 * readahead returns it has consumed its readahead_control. */
static __always_inline __u64 object_bytes(__u32 kind, __u64 object)
{
	if (!object)
		return 0;
	if (kind == VNFS_OBJECT_READAHEAD) {
		__u32 pages = BPF_CORE_READ((struct readahead_control *)object, _nr_pages);

		return (__u64)pages << page_shift;
	}
	if (kind == VNFS_OBJECT_FOLIO)
		return folio_bytes((struct folio *)object);
	if (kind == VNFS_OBJECT_PAGE)
		return 1ull << page_shift;
	return 0;
}

/* A page-cache fill inside read() or write() is part of that call's bytes,
 * so only fills outside them (page faults on mapped files) are mmap_read. */
static __always_inline bool inside_data_call(const struct vnfs_task_state *state)
{
	return state->depth[VNFS_OP_READ] > 0 || state->depth[VNFS_OP_WRITE] > 0;
}

/* The calling task: typed where the kernel gives it so (5.11 on), else
 * read only through CO-RE reads (task_exiting). */
static __always_inline struct task_struct *current_task(void)
{
#ifdef VNFS_LEGACY_KERNEL
	return (struct task_struct *)bpf_get_current_task();
#else
	return bpf_get_current_task_btf();
#endif
}

static __always_inline struct vnfs_task_state *current_task_state(bool create)
{
#ifdef VNFS_LEGACY_KERNEL
	__u32 thread = (__u32)bpf_get_current_pid_tgid();
	struct vnfs_task_state *state = bpf_map_lookup_elem(&task_state, &thread);

	if (state || !create)
		return state;
	bpf_map_update_elem(&task_state, &thread, &task_state_zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&task_state, &thread);
#else
	return bpf_task_storage_get(&task_state, bpf_get_current_task_btf(), NULL,
				    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
#endif
}

/* The state of task, the calling one, which the caller holds already: one
 * helper call fewer than current_task_state where task storage keys it. */
static __always_inline struct vnfs_task_state *task_state_of(struct task_struct *task)
{
#ifdef VNFS_LEGACY_KERNEL
	return current_task_state(false);
#else
	return bpf_task_storage_get(&task_state, task, NULL, 0);
#endif
}

/* The thread's state goes when it exits: in the legacy build's hash map by
 * hand; task storage goes with its task by itself. */
static __always_inline void forget_task_state(void)
{
#ifdef VNFS_LEGACY_KERNEL
	__u32 thread = (__u32)bpf_get_current_pid_tgid();

	bpf_map_delete_elem(&task_state, &thread);
#endif
}

/* Where a read's or a write's serial is kept (operation READ or WRITE). */
static __always_inline __u64 *data_serial_of(struct vnfs_task_state *state, __u32 operation)
{
	return &state->data_serial[operation == VNFS_OP_READ ? VNFS_DIRECTION_READ
							     : VNFS_DIRECTION_WRITE];
}

/* A kretprobe runs for at most maxactive calls of its function in progress
 * at once (the helper's kprobe_calls_in_flight, 1024 by default; the
 * kernel's own default is 10, or twice the CPUs): beyond them the kernel skips
 * the return (counting it in the kprobe's nmissed), so the call's depth
 * stays raised, and every later call of the operation in that thread would
 * look nested in it: untimed and, for a read or a write, with the thread's
 * page fills skipped.  For reads and writes the kernel counts each system
 * call as it returns (task->ioac.syscr, syscw): a call nested in another is
 * made under the same count, one after it under a higher one.  So an entry
 * under another count than the outermost call's finds that call returned
 * unseen: its depth starts anew, and the call it was is counted as missed
 * (it is counted nowhere else).  Other operations keep a raised depth (their
 * later calls untimed, not lost).  fentry passes no serial: fexit sees every
 * return. */
static __always_inline void forget_missed_exit(struct vnfs_task_state *state, __u32 operation,
					       __u64 serial)
{
	if (serial == 0 || operation >= VNFS_OP_COUNT || state->depth[operation] == 0 ||
	    serial == *data_serial_of(state, operation))
		return;
	state->depth[operation] = 0;
	health_add(VNFS_HEALTH_MISSED_EXIT);
}

/* The serial forget_missed_exit compares: one more than the thread's read
 * or write system calls so far, 0 for another operation or a kernel without
 * the counts (CONFIG_TASK_XACCT). */
static __always_inline __u64 data_call_serial(__u32 operation)
{
	struct task_struct *task;

	if (operation != VNFS_OP_READ && operation != VNFS_OP_WRITE)
		return 0;
	task = current_task();
	if (!bpf_core_field_exists(task->ioac.syscr))
		return 0;
	return 1 + (operation == VNFS_OP_READ ? BPF_CORE_READ(task, ioac.syscr)
					      : BPF_CORE_READ(task, ioac.syscw));
}

/* Entry of a hooked call, serial its data_call_serial on the kprobe path (0
 * by fentry).  Returns the task's state when this call is the outermost of
 * its operation, for the caller to record its device and start time; nested
 * calls only count (at their exit), so get NULL. */
static __always_inline struct vnfs_task_state *hook_entry(__u32 hook, __u64 serial)
{
	__u32 operation = hook_config[hook].operation;
	struct vnfs_task_state *state;

	if (operation >= VNFS_OP_COUNT)
		return NULL;
	state = current_task_state(true);
	if (!state) {
		health_add(VNFS_HEALTH_TASK_STATE_FAILED);
		return NULL;
	}
	forget_missed_exit(state, operation, serial);
	if ((hook_config[hook].flags & VNFS_HOOK_OUTSIDE_READ) && inside_data_call(state))
		return NULL;
	if (state->depth[operation]++ > 0)
		return NULL;
	if (serial) /* reads and writes by kprobe; a constant 0 by fentry */
		*data_serial_of(state, operation) = serial;
	return state;
}

/* What the exit needs and may no longer read from its arguments, then the
 * start time, last so that reading the arguments is not part of the call. */
static __always_inline void remember_call(struct vnfs_task_state *state, __u32 hook, __u32 device,
					  __u64 object, __u64 file)
{
	__u32 operation = hook_config[hook].operation;
	__u32 flags = hook_config[hook].flags;

	if (operation >= VNFS_OP_COUNT)
		return;
	if (LEFT_OUT(VNFS_CUT_ENTRY)) {
		state->start_ns[operation] = bpf_ktime_get_ns();
		return;
	}
	state->device[operation] = device;
	if (flags & VNFS_HOOK_BYTES_FROM_OBJECT)
		state->object[operation] = object_bytes(hook_config[hook].object_kind, object);
	else if (flags & VNFS_HOOK_NEEDS_FILE)
		state->object[operation] = file; /* 0 for a lookup meant to create */
	else
		state->object[operation] = 0;
	state->start_ns[operation] = bpf_ktime_get_ns();
}

/* A row for a key not in unattributed_stats yet: its own while the node has
 * fewer than VNFS_MAX_UNATTRIBUTED_NAMED_ENTRIES, else its uid's [other]
 * row (key is changed to that row's). */
static __always_inline struct vnfs_unattributed_stats *
new_unattributed_row(struct vnfs_unattributed_key *key)
{
	__u32 zero = 0;
	__u64 *created = bpf_map_lookup_elem(&unattributed_entries, &zero);

	if (created && *created < VNFS_MAX_UNATTRIBUTED_NAMED_ENTRIES)
		return insert_counted(&unattributed_stats, key, &unattributed_zero, created,
				      VNFS_HEALTH_UNATTRIBUTED_FULL);
	key->cgroup_id = 0;
	set_other_comm(key->comm);
	health_add(VNFS_HEALTH_UNATTRIBUTED_OTHER);
	return lookup_or_insert(&unattributed_stats, key, &unattributed_zero,
				VNFS_HEALTH_UNATTRIBUTED_FULL);
}

/* Global, as registered_ancestor_slot: checked once, not once per path. */
SUBPROGRAM int count_unattributed(__u64 cgroup_id, const struct vnfs_pending_call *call)
{
	struct vnfs_unattributed_key key = { .cgroup_id = cgroup_id };
	struct vnfs_unattributed_operation *operation;
	struct vnfs_unattributed_stats *stats;

	if (!call) /* the verifier cannot know a global function's callers */
		return 0;
	key.uid = (__u32)bpf_get_current_uid_gid();
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	stats = bpf_map_lookup_elem(&unattributed_stats, &key);
	if (!stats)
		stats = new_unattributed_row(&key);
	if (!stats || call->operation >= VNFS_OP_COUNT)
		return 0;
	operation = &stats->operations[call->operation];
	__sync_fetch_and_add(&operation->count, 1);
	if (call->created)
		__sync_fetch_and_add(&stats->operations[VNFS_OP_CREATE].count, 1);
	if (call->error)
		__sync_fetch_and_add(&operation->errors, 1);
	if (call->bytes)
		__sync_fetch_and_add(&operation->bytes, call->bytes);
	if (call->timed)
		__sync_fetch_and_add(&operation->time_ns, call->duration_ns);
	return 0;
}

/* Adds one pending call to its step's counters.  Global, as
 * registered_ancestor_slot, so that its paths do not multiply the ones of
 * the breakdown sum that follows: inlined into drain_call, it saved 10 ns of
 * 3,285 per stat and the helper's start took 46.9 s instead of 1.9 s
 * (instruction clock, 2026-12-05). */
SUBPROGRAM int count_in_step(struct vnfs_step_stats *stats, const struct vnfs_pending_call *call)
{
	struct vnfs_operation_stats *operation;
	__u32 bucket, op;

	if (!stats || !call)
		return 0;
	op = call->operation;
	if (op >= VNFS_OP_COUNT)
		return 0;
	operation = &stats->operations[op];
	__sync_fetch_and_add(&operation->count, 1);
	if (call->created)
		__sync_fetch_and_add(&stats->operations[VNFS_OP_CREATE].count, 1);
	if (call->error)
		__sync_fetch_and_add(&operation->errors, 1);
	if (call->bytes)
		__sync_fetch_and_add(&operation->bytes, call->bytes);
	if (call->timed)
		__sync_fetch_and_add(&operation->time_ns, call->duration_ns);
	if (LEFT_OUT(VNFS_CUT_HISTOGRAMS))
		return 0;
	if (call->timed) {
		bucket = log2_bucket(call->duration_ns, VNFS_LATENCY_BUCKETS);
		__sync_fetch_and_add(&operation->latency_histogram[bucket], 1);
	}
	/* Request size = bytes the call moved (a read at end of file is 0), of
	 * reads and writes only, and its bucket computed for those only: most
	 * calls are metadata, and a log2 costs some twenty instructions. */
	if (call->error || (op != VNFS_OP_READ && op != VNFS_OP_WRITE))
		return 0;
	bucket = log2_bucket(call->bytes, VNFS_SIZE_BUCKETS);
	__sync_fetch_and_add(&stats->request_size_histogram[op == VNFS_OP_READ ? VNFS_DIRECTION_READ
									       : VNFS_DIRECTION_WRITE][bucket],
			     1);
	return 0;
}

/* What a drain adds up for one breakdown row before it touches the hash:
 * the calls a task has pending mostly share one mount. */
struct breakdown_sum {
	__u32 device;
	__u32 used;
	struct vnfs_breakdown_stats stats;
};

/* A row for a key not in breakdown_stats yet: its own while its step has
 * made fewer than VNFS_MAX_BREAKDOWN_ENTRIES_PER_STEP, else the step's
 * [other] row on the same mount (key is changed to that row's). */
static __always_inline struct vnfs_breakdown_stats *
new_breakdown_row(struct vnfs_breakdown_key *key, const struct breakdown_sum *sum)
{
	__u32 slot = key->slot;
	__u64 *created = bpf_map_lookup_elem(&breakdown_entries, &slot);

	if (created && *created < VNFS_MAX_BREAKDOWN_ENTRIES_PER_STEP)
		return insert_counted(&breakdown_stats, key, &breakdown_zero, created,
				      VNFS_HEALTH_BREAKDOWN_FULL);
	set_other_comm(key->comm);
	health_add_n(VNFS_HEALTH_BREAKDOWN_OTHER,
		     sum->stats.read_ops + sum->stats.write_ops + sum->stats.other_ops);
	return lookup_or_insert(&breakdown_stats, key, &breakdown_zero, VNFS_HEALTH_BREAKDOWN_FULL);
}

/* Adds sum to the breakdown row {slot, device, name}.  Global, as
 * registered_ancestor_slot: one copy per program instead of two. */
SUBPROGRAM int flush_breakdown(const struct vnfs_task_state *state, __u32 slot,
			       const struct breakdown_sum *sum)
{
	struct vnfs_breakdown_key key = { .slot = slot };
	struct vnfs_breakdown_stats *stats;

	if (!state || !sum)
		return 0;
	key.device = sum->device;
	__builtin_memcpy(key.comm, state->comm, sizeof(key.comm));
	stats = bpf_map_lookup_elem(&breakdown_stats, &key);
	if (!stats)
		stats = new_breakdown_row(&key, sum);
	if (!stats)
		return 0;
	__sync_fetch_and_add(&stats->read_ops, sum->stats.read_ops);
	__sync_fetch_and_add(&stats->read_bytes, sum->stats.read_bytes);
	__sync_fetch_and_add(&stats->write_ops, sum->stats.write_ops);
	__sync_fetch_and_add(&stats->write_bytes, sum->stats.write_bytes);
	__sync_fetch_and_add(&stats->other_ops, sum->stats.other_ops);
	__sync_fetch_and_add(&stats->errors, sum->stats.errors);
	__sync_fetch_and_add(&stats->time_ns, sum->stats.time_ns);
	return 0;
}

/* read_* include mmap_read: both are data the process brought in. */
static __always_inline void add_to_breakdown(struct vnfs_breakdown_stats *sum,
					     const struct vnfs_pending_call *call)
{
	__u32 op = call->operation;

	if (op == VNFS_OP_READ || op == VNFS_OP_MMAP_READ) {
		sum->read_ops++;
		sum->read_bytes += call->bytes;
	} else if (op == VNFS_OP_WRITE) {
		sum->write_ops++;
		sum->write_bytes += call->bytes;
	} else {
		sum->other_ops++;
	}
	sum->other_ops += call->created; /* its create */
	if (call->error)
		sum->errors++;
	if (call->timed)
		sum->time_ns += call->duration_ns;
}

/* Moves pending call index of the task to its step's counters and to sum,
 * whose row is flushed first when the call is on another mount; without
 * stats (no step any more), to unattributed_stats.  Returns the counts it
 * added to the step beyond the call's own (its create: 0 or 1).  Global, as
 * registered_ancestor_slot: the drain's loop then costs the verifier a few
 * instructions per pending call, where inline each call's paths through this
 * would have multiplied those of the calls before it. */
SUBPROGRAM int drain_call(const struct vnfs_task_state *state, __u32 index, __u32 slot,
			  struct vnfs_step_stats *stats, struct breakdown_sum *sum)
{
	const struct vnfs_pending_call *call;

	if (!state || !sum)
		return 0;
	/* A mask, not a comparison: clang indexes with a copy of index that
	 * a comparison would leave unbounded for the verifier. */
	call = &state->pending[index & (VNFS_PENDING_CALLS - 1)];
	if (!stats)
		return count_unattributed(state->counting_id, call);
	count_in_step(stats, call);
	if (LEFT_OUT(VNFS_CUT_BREAKDOWN))
		return call->created;
	if (sum->used && sum->device != call->device) {
		flush_breakdown(state, slot, sum);
		__builtin_memset(&sum->stats, 0, sizeof(sum->stats));
	}
	sum->device = call->device;
	sum->used = 1;
	add_to_breakdown(&sum->stats, call);
	return call->created; /* the counts it made beyond its own */
}

static __always_inline void mark_activity(__u32 slot, __u32 calls)
{
	__u64 *activity = bpf_map_lookup_elem(&step_activity, &slot);

	if (activity)
		__sync_fetch_and_add(activity, calls);
}

/* The slot the pending calls go to: the one they were counted under, unless
 * cgroup_slots changed since and no longer gives their cgroup that slot (the
 * step ended while a task of it lived on, and the slot may be another
 * step's by now): then they are unattributed, not lost and not misplaced. */
static __always_inline __u32 pending_slot(const struct vnfs_task_state *state)
{
	struct vnfs_registration *registration;
	__u64 cgroup_id = state->slot_cgroup_id, counting_id = state->counting_id;

	if (state->slot_generation == cgroup_slots_generation_now())
		return state->slot;
	registration = bpf_map_lookup_elem(&cgroup_slots, &counting_id);
	if (registration && registration->slot == state->slot)
		return state->slot;
	if (cgroup_id == bpf_get_current_cgroup_id() && registered_ancestor_slot() == state->slot)
		return state->slot;
	return VNFS_SLOT_NONE;
}

/* Moves the task's pending calls to the shared maps: each call into its
 * step's counters, and one breakdown update per run of calls on the same
 * mount (usually one per drain).  Global, as registered_ancestor_slot. */
SUBPROGRAM int drain_pending(struct vnfs_task_state *state)
{
	struct breakdown_sum sum = {};
	struct vnfs_step_stats *stats = NULL;
	__u32 count, counted, slot;

	if (!state)
		return 0;
	count = state->pending_count;
	state->pending_count = 0;
	if (count == 0 || LEFT_OUT(VNFS_CUT_DRAIN))
		return 0;
	slot = pending_slot(state);
	if (slot != VNFS_SLOT_NONE)
		stats = bpf_map_lookup_elem(&step_stats, &slot);
	counted = count;
	for (__u32 i = 0; i < PENDING_BATCH && i < count; i++)
		counted += drain_call(state, i, slot, stats, &sum);
	if (sum.used)
		flush_breakdown(state, slot, &sum);
	if (stats)
		mark_activity(slot, counted);
	return 0;
}

/* Set by the helper once the drain at task exit is attached: until then
 * (and if it cannot be) every call is moved out at once, since calls still
 * pending when a task exits would be lost with its storage. */
__u32 pending_limit = 1;

#define PF_EXITING 0x00000004 /* include/linux/sched.h */

/* The task's name, read in place: comparing it costs two loads, where
 * bpf_get_current_comm() is a helper call that copies. */
static __always_inline bool comm_changed(const struct vnfs_task_state *state,
					 struct task_struct *task)
{
#ifdef VNFS_LEGACY_KERNEL
	__u64 now[2];

	bpf_get_current_comm(now, sizeof(now));
#else
	const __u64 *now = (const __u64 *)task->comm;
#endif
	const __u64 *then = (const __u64 *)state->comm;

	return now[0] != then[0] || now[1] != then[1];
}

static __always_inline bool task_exiting(struct task_struct *task)
{
#ifdef VNFS_LEGACY_KERNEL
	return BPF_CORE_READ(task, flags) & PF_EXITING;
#else
	return task->flags & PF_EXITING;
#endif
}

/* For a task in no registered cgroup: the slot of its environment job,
 * with *counting_id set to the job's id, or VNFS_SLOT_NONE (*counting_id
 * then stays its cgroup's unless it has a job: its calls wait for the
 * helper to register the job, in rows under the job's id). */
static __always_inline __u32 environment_job_slot(struct task_struct *task, __u64 *counting_id)
{
#ifdef VNFS_LEGACY_KERNEL
	return VNFS_SLOT_NONE;
#else
	struct vnfs_task_job *job = bpf_task_storage_get(&task_jobs, task, NULL, 0);
	struct vnfs_registration *registration;
	__u64 id;

	if (!job || job->number == 0)
		return VNFS_SLOT_NONE;
	id = VNFS_ENVIRONMENT_JOB_BIT | job->number;
	*counting_id = id;
	registration = bpf_map_lookup_elem(&cgroup_slots, &id);
	return registration ? registration->slot : VNFS_SLOT_NONE;
#endif
}

/* A call big or slow enough that draining after it costs nothing beside it
 * (see VNFS_PENDING_DRAIN_BYTES in vnfs.h). */
static __always_inline bool costly_call(const struct vnfs_pending_call *call)
{
	return call->bytes >= VNFS_PENDING_DRAIN_BYTES ||
	       (call->timed && call->duration_ns >= VNFS_PENDING_DRAIN_NS);
}

/* Counts a finished call: into the task's pending calls when it belongs to
 * a step, moved to the shared maps when enough are waiting, the oldest is a
 * second old, the call was costly or the task is exiting (its exit drain
 * has run or is past). */
static __always_inline void count_call(struct task_struct *task, struct vnfs_task_state *state,
				       const struct vnfs_pending_call *call, __u64 now)
{
	__u64 cgroup_id = bpf_get_current_cgroup_id();
	__u32 generation = cgroup_slots_generation_now(), index;

	if (cgroup_id != state->slot_cgroup_id || generation != state->slot_generation ||
	    comm_changed(state, task)) {
		drain_pending(state);
		state->slot = resolve_slot(cgroup_id, generation);
		state->slot_cgroup_id = cgroup_id;
		state->counting_id = cgroup_id;
		if (state->slot == VNFS_SLOT_NONE)
			state->slot = environment_job_slot(task, &state->counting_id);
		state->slot_generation = generation;
		bpf_get_current_comm(state->comm, sizeof(state->comm));
	}
	if (LEFT_OUT(VNFS_CUT_PENDING))
		return;
	if (state->slot == VNFS_SLOT_NONE) {
		count_unattributed(state->counting_id, call);
		return;
	}
	index = state->pending_count;
	if (index >= PENDING_BATCH) { /* never: drained when full */
		drain_pending(state);
		index = 0;
	}
	if (index == 0)
		state->pending_since_ns = now;
	state->pending[index] = *call;
	state->pending_count = ++index;
	if (index >= pending_limit || now - state->pending_since_ns >= VNFS_PENDING_MAX_AGE_NS ||
	    costly_call(call) || task_exiting(task)) {
		drain_pending(state);
		/* Past its exit drain: the state this call made goes with it. */
		if (task_exiting(task))
			forget_task_state();
	}
}

static __always_inline bool file_was_opened(__u64 file)
{
	/* finish_open() gives the file its f_op; finish_no_open() leaves it
	 * NULL and the VFS then calls ->open, which is counted there.  (f_op
	 * rather than FMODE_OPENED: that flag's value moved in 6.12.) */
	return file && BPF_CORE_READ((struct file *)file, f_op) != NULL;
}

/* FMODE_CREATED of include/linux/fs.h, a #define that BTF does not carry:
 * 0x100000 in Debian's 6.1 and 6.12 headers alike. */
#define FMODE_CREATED 0x100000u

static __always_inline bool file_was_created(__u64 file)
{
	return file && (BPF_CORE_READ((struct file *)file, f_mode) & FMODE_CREATED);
}

/* nfs_lookup returns the dentry it spliced (or NULL: the argument dentry
 * itself); a dentry without an inode is a name the server does not have. */
static __always_inline bool dentry_is_negative(__u64 dentry)
{
	return dentry && BPF_CORE_READ((struct dentry *)dentry, d_inode) == NULL;
}

/* Exit of a hooked call: classify the result and count it. */
static __always_inline void hook_exit(__u32 hook, __u64 result)
{
	__u32 operation = hook_config[hook].operation;
	__u32 flags = hook_config[hook].flags;
	struct task_struct *task = current_task();
	struct vnfs_task_state *state;
	struct vnfs_pending_call call = { .operation = operation };
	__s64 value = 0;
	__u64 now;
	__u8 depth;

	if (operation >= VNFS_OP_COUNT)
		return;
	state = task_state_of(task);
	if (!state)
		return; /* the entry had no task state and said so */
	if ((flags & VNFS_HOOK_OUTSIDE_READ) && inside_data_call(state))
		return;
	depth = state->depth[operation];
	if (depth == 0) {
		health_add(VNFS_HEALTH_UNMATCHED_EXIT);
		return;
	}
	state->depth[operation] = --depth;
	if (LEFT_OUT(VNFS_CUT_EXIT))
		return;

	switch (hook_config[hook].result_kind) {
	case VNFS_RESULT_INT:
		value = (flags & VNFS_HOOK_RESULT_32BIT) ? (__s64)(__s32)result : (__s64)result;
		/* -ECHILD: "retry in ref-walk mode" (nfs_permission under RCU
		 * path walk); the VFS repeats the call, which counts. */
		if (value == -ECHILD)
			return;
		call.error = value < 0;
		break;
	case VNFS_RESULT_POINTER:
		call.error = result >= (__u64)-4095; /* IS_ERR_VALUE */
		break;
	}
	if ((flags & VNFS_HOOK_COUNT_IF_OPENED) && !call.error &&
	    !file_was_opened(state->object[operation]))
		return;
	if ((flags & VNFS_HOOK_COUNT_IF_CREATED) && !file_was_created(state->object[operation]))
		return;
	if ((flags & VNFS_HOOK_NEGATIVE_IS_ERROR) && !call.error)
		call.error = dentry_is_negative(result ? result : state->object[operation]);
	if ((flags & VNFS_HOOK_BYTES_FROM_RESULT) && value > 0)
		call.bytes = value;
	else if (flags & VNFS_HOOK_BYTES_FROM_OBJECT)
		call.bytes = call.error ? 0 : state->object[operation];
	else if (flags & VNFS_HOOK_BYTES_FROM_PAGES)
		call.bytes = call.error ? 0 : (__u32)state->object[operation] << page_shift;
	call.device = state->device[operation];
	now = bpf_ktime_get_ns();
	if (depth == 0) {
		call.timed = 1;
		call.duration_ns = now - state->start_ns[operation];
	}
	/* One call that counts twice (VNFS_HOOK_CREATE_IF_CREATED): one more
	 * pending call would cost each hook's program its verification. */
	call.created = (flags & VNFS_HOOK_CREATE_IF_CREATED) && !call.error &&
		       file_was_created(state->object[operation]);
	if (LEFT_OUT(VNFS_CUT_ATTRIBUTION))
		return;
	count_call(task, state, &call, now);
}

/* Arguments past the fifth are not read on the kprobe path (the helper
 * leaves object_kind NONE for them).  The _CORE reads keep clang from turning
 * the switch into a variable-offset context access, which the verifier
 * refuses. */
static __always_inline __u64 kprobe_argument(struct pt_regs *ctx, __u32 index)
{
	switch (index) {
	case 0: return PT_REGS_PARM1_CORE(ctx);
	case 1: return PT_REGS_PARM2_CORE(ctx);
	case 2: return PT_REGS_PARM3_CORE(ctx);
	case 3: return PT_REGS_PARM4_CORE(ctx);
	case 4: return PT_REGS_PARM5_CORE(ctx);
	}
	return 0;
}

static __always_inline __u64 fentry_argument(__u64 *ctx, __u32 index)
{
	__u64 value = 0;

	bpf_get_func_arg(ctx, index, &value);
	return value;
}

/* The argument as the pointer its BTF type says it is.  The verifier types
 * a context load only at a fixed offset, and refuses one through a pointer
 * it sees modified, so each case is its own load with the offset in the
 * instruction: in C, clang merges the cases into one load at ctx + 8 * i. */
#define CONTEXT_LOAD(ctx, offset)                                                      \
	({                                                                             \
		void *value_;                                                          \
		asm volatile("%0 = *(u64 *)(%1 + " #offset ")" : "=r"(value_) : "r"(ctx)); \
		value_;                                                                \
	})

static __always_inline void *fentry_typed_argument(__u64 *ctx, __u32 index)
{
	switch (index) {
	case 0: return CONTEXT_LOAD(ctx, 0);
	case 1: return CONTEXT_LOAD(ctx, 8);
	case 2: return CONTEXT_LOAD(ctx, 16);
	case 3: return CONTEXT_LOAD(ctx, 24);
	case 4: return CONTEXT_LOAD(ctx, 32);
	case 5: return CONTEXT_LOAD(ctx, 40);
	}
	return NULL;
}

/* fentry: the verifier knows each argument's type from the target's BTF
 * prototype, so the object is followed with plain loads (a fault reads 0)
 * instead of one bpf_probe_read_kernel() per pointer, which made up most of
 * an entry's cost under emulation.  Page-cache fills keep the CO-RE reads:
 * they are not on the per-call hot path, and their bytes need them anyway. */
static __always_inline __u32 fentry_object_device(__u64 *ctx, __u32 hook)
{
	__u32 kind = hook_config[hook].object_kind;
	struct super_block *super_block = NULL;
	void *object;

	if (kind == VNFS_OBJECT_NONE)
		return 0;
	if (kind == VNFS_OBJECT_READAHEAD || kind == VNFS_OBJECT_FOLIO || kind == VNFS_OBJECT_MMAP_DESC ||
	    kind == VNFS_OBJECT_PAGE)
		return object_device(kind, fentry_argument(ctx, hook_config[hook].object_argument));
	object = fentry_typed_argument(ctx, hook_config[hook].object_argument);
	if (!object)
		return 0;
	switch (kind) {
	case VNFS_OBJECT_FILE:
		super_block = ((struct file *)object)->f_inode->i_sb;
		break;
	case VNFS_OBJECT_KIOCB:
		super_block = ((struct kiocb *)object)->ki_filp->f_inode->i_sb;
		break;
	case VNFS_OBJECT_INODE:
		super_block = ((struct inode *)object)->i_sb;
		break;
	case VNFS_OBJECT_DENTRY:
		super_block = ((struct dentry *)object)->d_sb;
		break;
	case VNFS_OBJECT_PATH:
		super_block = ((struct path *)object)->dentry->d_sb;
		break;
	}
	return super_block ? super_block->s_dev : 0;
}

/* include/linux/namei.h: lookups on the way to creating or renaming onto a
 * name, where "not found" is the expected answer.  These are macros, not in
 * BTF, and recent kernels moved them from 0x0200/0x0400/0x0800 to bits 17-19;
 * both encodings are tested (a false match only spares a lookup the error). */
#define LOOKUP_CREATE_OLD 0x0200
#define LOOKUP_EXCL_OLD 0x0400
#define LOOKUP_RENAME_TARGET_OLD 0x0800
#define LOOKUP_CREATE_NEW (1u << 17)
#define LOOKUP_EXCL_NEW (1u << 18)
#define LOOKUP_RENAME_TARGET_NEW (1u << 19)

static __always_inline bool lookup_creates(__u64 lookup_flags)
{
	return lookup_flags & (LOOKUP_CREATE_OLD | LOOKUP_EXCL_OLD |
			       LOOKUP_RENAME_TARGET_OLD | LOOKUP_CREATE_NEW |
			       LOOKUP_EXCL_NEW | LOOKUP_RENAME_TARGET_NEW);
}

/* The struct file * (or dentry) an exit needs, 0 when it needs none or the
 * lookup is one meant to create. */
#define EXIT_OBJECT(argument_of, ctx, hook)                                                   \
	({                                                                                     \
		__u64 file_ = 0;                                                               \
		if (hook_config[hook].flags & VNFS_HOOK_NEEDS_FILE)                            \
			file_ = argument_of(ctx, hook_config[hook].file_argument);             \
		if ((hook_config[hook].flags & VNFS_HOOK_NEGATIVE_IS_ERROR) &&                 \
		    lookup_creates(argument_of(ctx, hook_config[hook].lookup_flags_argument))) \
			file_ = 0;                                                             \
		file_;                                                                         \
	})

static __always_inline void fentry_common(__u64 *ctx, __u32 hook)
{
	struct vnfs_task_state *state = hook_entry(hook, 0);
	__u64 object = 0;

	if (!state)
		return;
	if (hook_config[hook].flags & VNFS_HOOK_BYTES_FROM_OBJECT)
		object = fentry_argument(ctx, hook_config[hook].object_argument);
	remember_call(state, hook, fentry_object_device(ctx, hook), object,
		      EXIT_OBJECT(fentry_argument, ctx, hook));
}

static __always_inline void fexit_common(__u64 *ctx, __u32 hook)
{
	__u64 result = 0;

	if (hook_config[hook].result_kind != VNFS_RESULT_VOID)
		bpf_get_func_ret(ctx, &result);
	hook_exit(hook, result);
}

static __always_inline void kprobe_common(struct pt_regs *ctx, __u32 hook)
{
	struct vnfs_task_state *state =
		hook_entry(hook, data_call_serial(hook_config[hook].operation));
	__u64 object = 0;

	if (!state)
		return;
	if (hook_config[hook].object_kind != VNFS_OBJECT_NONE)
		object = kprobe_argument(ctx, hook_config[hook].object_argument);
	remember_call(state, hook, object_device(hook_config[hook].object_kind, object), object,
		      EXIT_OBJECT(kprobe_argument, ctx, hook));
}

/* ---- environment jobs (see vnfs.h) ---- */

static __always_inline void add_live_task(__u64 number, __s64 tasks)
{
	struct vnfs_environment_job *job = bpf_map_lookup_elem(&environment_jobs, &number);

	if (job)
		__sync_fetch_and_add(&job->live_tasks, tasks);
}

/* The task leaves its job (it exits, or execs into another's). */
static __always_inline __attribute__((unused)) void leave_environment_job(struct task_struct *task)
{
	struct vnfs_task_job *job = bpf_task_storage_get(&task_jobs, task, NULL, 0);

	if (job && job->number != 0) {
		add_live_task(job->number, -1);
		job->number = 0;
	}
}

/* What one bpf_loop iteration of the scan reads: one string of the
 * environment, or the next chunk of a long one. */
struct environment_scan {
	__u64 start;    /* the environment's first byte (user address) */
	__u64 length;
	__u64 position; /* of the next read */
	__u32 in_long_string; /* position is inside a string longer than a chunk */
	__u32 pad;
	struct environment_scratch *scratch;
};

/* The chunk holds a whole string of length bytes (NUL included): when it
 * is NAME=VALUE with a listed NAME, its value goes where the name's role
 * says.  An environment naming a variable twice keeps the first, as
 * getenv() does. */
static __always_inline void note_variable(struct environment_scratch *scratch, __u32 length)
{
	struct vnfs_environment_variable *variable;
	__u32 name_length = 0, value_length, bit;
	char *destination;

#pragma clang loop unroll(disable)
	for (__u32 i = 0; i < VNFS_ENVIRONMENT_NAME_MAX; i++) {
		char c = scratch->chunk[i];

		if (c == '=' || c == 0)
			break;
		scratch->name[i] = c;
		name_length = i + 1;
	}
	/* Through memory: the verifier then meets one state after the loop
	 * where it met one per name length, each walking the rest of the
	 * function (the capture's verification walked 12,846 instructions,
	 * 4,325 now). */
	scratch->name_length = name_length;
	name_length = *(volatile __u32 *)&scratch->name_length;
	if (name_length == 0 || name_length >= VNFS_ENVIRONMENT_NAME_MAX ||
	    scratch->chunk[name_length & (VNFS_ENVIRONMENT_CHUNK - 1)] != '=')
		return;
	variable = bpf_map_lookup_elem(&environment_variables, scratch->name);
	if (!variable)
		return;
	value_length = length - 1 - (name_length + 1);
	if (value_length >= VNFS_ENVIRONMENT_VALUE_MAX) {
		health_add(VNFS_HEALTH_ENVIRONMENT_TOO_LONG);
		return;
	}
	bit = 1u << (variable->index & 7);
	if (variable->role == VNFS_ENVIRONMENT_JOB && !(scratch->jobs_found & bit)) {
		destination = scratch->values[variable->index & 7];
		scratch->jobs_found |= bit;
	} else if (variable->role == VNFS_ENVIRONMENT_PART && !(scratch->parts_found & bit)) {
		destination = scratch->parts[variable->index & 7];
		scratch->parts_found |= bit;
	} else if (variable->role == VNFS_ENVIRONMENT_TAG && !(scratch->job.tags_found & bit)) {
		destination = scratch->job.tags[variable->index & 7];
		scratch->job.tags_found |= bit;
	} else {
		return;
	}
	__builtin_memset(destination, 0, VNFS_ENVIRONMENT_VALUE_MAX);
	bpf_probe_read_kernel_str(destination, VNFS_ENVIRONMENT_VALUE_MAX,
				  &scratch->chunk[(name_length + 1) & (VNFS_ENVIRONMENT_CHUNK - 1)]);
}

/* One iteration of the scan (bpf_loop's callback): 1 stops it. */
static long scan_environment_string(__u64 index, void *context)
{
	struct environment_scan *scan = context;
	struct environment_scratch *scratch = scan->scratch;
	long length;
	bool whole;

	(void)index;
	if (!scratch || scan->position >= scan->length)
		return 1;
	__builtin_memset(scratch->name, 0, sizeof(scratch->name));
	length = bpf_probe_read_user_str(scratch->chunk, sizeof(scratch->chunk),
					 (const void *)(scan->start + scan->position));
	if (length <= 0)
		return 1;
	/* A read that filled the chunk may have cut its string short: the
	 * rest is read from where the chunk's NUL stands. */
	whole = length < VNFS_ENVIRONMENT_CHUNK;
	if (whole && !scan->in_long_string)
		note_variable(scratch, (__u32)length);
	scan->in_long_string = !whole;
	scan->position += whole ? (__u64)length : VNFS_ENVIRONMENT_CHUNK - 1;
	return 0;
}

/* The number of the job the scratch's job key names, given now if the
 * node has not seen it: the job is entered with this task already among
 * its live tasks, so that the helper never sees it with none.  0 when
 * environment_jobs is full. */
static __always_inline __u64 environment_job_number(struct environment_scratch *scratch,
						    bool *counted)
{
	__u32 zero = 0;
	__u64 *number = bpf_map_lookup_elem(&environment_job_numbers, &scratch->job.key);
	__u64 *counter, fresh;

	*counted = false;
	if (number)
		return *number;
	counter = bpf_map_lookup_elem(&environment_job_counter, &zero);
	if (!counter)
		return 0;
	fresh = __sync_fetch_and_add(counter, 1) + 1;
	scratch->job.live_tasks = 1;
	scratch->job.cgroup_id = bpf_get_current_cgroup_id();
	if (bpf_map_update_elem(&environment_jobs, &fresh, &scratch->job, BPF_NOEXIST) != 0) {
		health_add(VNFS_HEALTH_ENVIRONMENT_JOBS_FULL);
		return 0;
	}
	if (bpf_map_update_elem(&environment_job_numbers, &scratch->job.key, &fresh,
				BPF_NOEXIST) == 0) {
		*counted = true;
		return fresh;
	}
	/* Another CPU entered the same job first (or the map is full). */
	bpf_map_delete_elem(&environment_jobs, &fresh);
	number = bpf_map_lookup_elem(&environment_job_numbers, &scratch->job.key);
	if (!number)
		health_add(VNFS_HEALTH_ENVIRONMENT_JOBS_FULL);
	return number ? *number : 0;
}

/* Makes the task one of job number's (counted: already in its live tasks).
 * Its calls pending under what it was are moved out first. */
static __always_inline void join_environment_job(struct task_struct *task, __u64 number,
						 bool counted)
{
	struct vnfs_task_job *job;
	struct vnfs_task_state *state;

	job = bpf_task_storage_get(&task_jobs, task, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!job) {
		if (counted)
			add_live_task(number, -1);
		health_add(VNFS_HEALTH_TASK_STATE_FAILED);
		return;
	}
	if (job->number == number) {
		if (counted)
			add_live_task(number, -1);
		return;
	}
	if (job->number != 0)
		add_live_task(job->number, -1);
	job->number = number;
	if (!counted)
		add_live_task(number, 1);
	state = bpf_task_storage_get(&task_state, task, NULL, 0);
	if (state) {
		drain_pending(state);
		state->slot_cgroup_id = 0; /* its next call resolves its slot again */
	}
}

/*
 * A program starts: when its task is in no registered cgroup and its
 * environment names a job through a listed variable, the task belongs to
 * that job from now on.  An environment that names none leaves the task in
 * the job it had (its parent's): a job's processes may clear their
 * environment, they stay the job's.  The environment is read from the new
 * program's stack, where exec has just copied it: its pages are present,
 * and the program has not run yet, so nothing it does can come first.
 */
SEC("raw_tp/sched_process_exec")
int capture_environment(void *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct environment_scan scan = {};
	struct environment_scratch *scratch;
	__u32 zero = 0, variable = VNFS_ENVIRONMENT_MAX_JOB_VARIABLES;
	bool counted = false;
	__u64 number;

	if (resolve_slot(bpf_get_current_cgroup_id(), cgroup_slots_generation_now()) !=
	    VNFS_SLOT_NONE)
		return 0; /* its cgroup's workload it is */
	scratch = bpf_map_lookup_elem(&environment_scratch, &zero);
	if (!scratch)
		return 0;
	scratch->jobs_found = scratch->parts_found = scratch->job.tags_found = 0;
	scan.start = task->mm->env_start;
	scan.length = task->mm->env_end - scan.start;
	scan.scratch = scratch;
	bpf_loop(VNFS_ENVIRONMENT_MAX_STRINGS, scan_environment_string, &scan, 0);
	for (__u32 i = 0; i < VNFS_ENVIRONMENT_MAX_JOB_VARIABLES; i++) {
		if (scratch->jobs_found & (1u << i)) {
			variable = i;
			break;
		}
	}
	if (variable >= VNFS_ENVIRONMENT_MAX_JOB_VARIABLES)
		return 0;
	__builtin_memset(&scratch->job.key, 0, sizeof(scratch->job.key));
	scratch->job.key.uid = (__u32)bpf_get_current_uid_gid();
	scratch->job.key.variable = variable;
	__builtin_memcpy(scratch->job.key.value, scratch->values[variable],
			 VNFS_ENVIRONMENT_VALUE_MAX);
	if (scratch->parts_found & (1u << variable))
		__builtin_memcpy(scratch->job.key.part, scratch->parts[variable],
				 VNFS_ENVIRONMENT_VALUE_MAX);
	/* Tag values not found this time must not be an earlier exec's. */
	for (__u32 i = 0; i < VNFS_ENVIRONMENT_MAX_TAG_VARIABLES; i++)
		if (!(scratch->job.tags_found & (1u << i)))
			scratch->job.tags[i][0] = 0;
	number = environment_job_number(scratch, &counted);
	if (number != 0)
		join_environment_job(task, number, counted);
	return 0;
}

/* A task forked (a process or a thread) belongs to its parent's job. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(inherit_environment_job, struct task_struct *parent, struct task_struct *child)
{
	struct vnfs_task_job *job;
	__u64 number;

	if (!child) /* possibly NULL to the verifier since 6.12 (wire.bpf.c) */
		return 0;
	job = bpf_task_storage_get(&task_jobs, bpf_get_current_task_btf(), NULL, 0);
	if (!job || job->number == 0)
		return 0;
	number = job->number;
	job = bpf_task_storage_get(&task_jobs, child, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!job) {
		health_add(VNFS_HEALTH_TASK_STATE_FAILED);
		return 0;
	}
	job->number = number;
	add_live_task(number, 1);
	return 0;
}

/* A task's calls still pending when it exits.  What it calls after this
 * (closing its files) sees PF_EXITING and goes straight through. */
SEC("raw_tp/sched_process_exit")
int drain_at_exit(void *ctx)
{
	struct vnfs_task_state *state = current_task_state(false);

	if (state)
		drain_pending(state);
	forget_task_state();
#ifndef VNFS_LEGACY_KERNEL
	leave_environment_job(bpf_get_current_task_btf());
#endif
	return 0;
}

/* A cgroup made, in the unified hierarchy (id 0; v1 hierarchies' ids
 * are not the probes'): its id to the helper. */
SEC("raw_tp/cgroup_mkdir")
int note_new_cgroup(struct bpf_raw_tracepoint_args *ctx)
{
	struct cgroup *cgroup = (struct cgroup *)ctx->args[0];
	__u64 id;

	if (BPF_CORE_READ(cgroup, root, hierarchy_id) != 0)
		return 0;
	id = BPF_CORE_READ(cgroup, kn, id);
	if (bpf_ringbuf_output(&new_cgroups, &id, sizeof(id), 0) != 0)
		health_add(VNFS_HEALTH_NEW_CGROUPS_LOST);
	return 0;
}

/* Adds one unattributed row to a step (see struct vnfs_unattributed_fold in
 * vnfs.h): run by the helper, never by the kernel's own events. */
SEC("syscall")
int fold_unattributed(struct vnfs_unattributed_fold *fold)
{
	struct vnfs_breakdown_key key = { .device = 0 };
	struct vnfs_breakdown_stats *breakdown;
	struct vnfs_step_stats *stats;
	__u32 slot = fold->slot;
	__u64 calls = 0, *created;

	stats = bpf_map_lookup_elem(&step_stats, &slot);
	if (!stats)
		return -1;
	key.slot = slot;
	__builtin_memcpy(key.comm, fold->comm, sizeof(key.comm));
	breakdown = bpf_map_lookup_elem(&breakdown_stats, &key);
	created = bpf_map_lookup_elem(&breakdown_entries, &slot);
	if (!breakdown && created)
		breakdown = insert_counted(&breakdown_stats, &key, &breakdown_zero, created,
					   VNFS_HEALTH_BREAKDOWN_FULL);
	/* Unrolled: the verifier lets a program read its context only at
	 * constant offsets. */
#pragma clang loop unroll(full)
	for (__u32 op = 0; op < VNFS_OP_COUNT; op++) {
		const struct vnfs_unattributed_operation *row = &fold->stats.operations[op];
		struct vnfs_operation_stats *operation = &stats->operations[op];

		__sync_fetch_and_add(&operation->count, row->count);
		__sync_fetch_and_add(&operation->errors, row->errors);
		__sync_fetch_and_add(&operation->bytes, row->bytes);
		__sync_fetch_and_add(&operation->time_ns, row->time_ns);
		calls += row->count;
		if (!breakdown)
			continue;
		if (op == VNFS_OP_READ || op == VNFS_OP_MMAP_READ) {
			__sync_fetch_and_add(&breakdown->read_ops, row->count);
			__sync_fetch_and_add(&breakdown->read_bytes, row->bytes);
		} else if (op == VNFS_OP_WRITE) {
			__sync_fetch_and_add(&breakdown->write_ops, row->count);
			__sync_fetch_and_add(&breakdown->write_bytes, row->bytes);
		} else {
			__sync_fetch_and_add(&breakdown->other_ops, row->count);
		}
		__sync_fetch_and_add(&breakdown->errors, row->errors);
		__sync_fetch_and_add(&breakdown->time_ns, row->time_ns);
	}
	mark_activity(slot, calls);
	return 0;
}

/* The four programs of hook slot N; the helper sets their targets. */
#define VNFS_HOOK_PROGRAMS(N)                                   \
	SEC(VNFS_FENTRY_SECTION)                                \
	int fentry_##N(__u64 *ctx)                              \
	{                                                       \
		fentry_common(ctx, N);                          \
		return 0;                                       \
	}                                                       \
	SEC(VNFS_FEXIT_SECTION)                                 \
	int fexit_##N(__u64 *ctx)                               \
	{                                                       \
		fexit_common(ctx, N);                           \
		return 0;                                       \
	}                                                       \
	SEC("kprobe")                                           \
	int kprobe_##N(struct pt_regs *ctx)                     \
	{                                                       \
		kprobe_common(ctx, N);                          \
		return 0;                                       \
	}                                                       \
	SEC("kretprobe")                                        \
	int kretprobe_##N(struct pt_regs *ctx)                  \
	{                                                       \
		hook_exit(N, PT_REGS_RC(ctx));                  \
		return 0;                                       \
	}

VNFS_FOR_EACH_HOOK_SLOT(VNFS_HOOK_PROGRAMS)

/* The generic kprobe programs: one entry and one exit program for every
 * kprobed function, each told the function's hook slot by the cookie the
 * helper attached it with (BPF cookies, 5.15).  They are verified once,
 * generic over the slots, where the slots' own programs are verified one by
 * one with their configuration known: 5,182 instructions against about
 * 81,000 for 28 functions, most of a start's verification (docs/
 * PERFORMANCE.md).  Each call costs more, deciding per call what the slot's
 * programs had decided at load, so mode auto keeps fentry. */
static __always_inline void entry_by_cookie(struct pt_regs *ctx)
{
	__u64 hook = bpf_get_attach_cookie(ctx);

	if (hook < VNFS_MAX_HOOKS)
		kprobe_common(ctx, hook);
}

static __always_inline void exit_by_cookie(struct pt_regs *ctx)
{
	__u64 hook = bpf_get_attach_cookie(ctx);

	if (hook < VNFS_MAX_HOOKS)
		hook_exit(hook, PT_REGS_RC(ctx));
}

/* Every kprobed function at once (kprobe.multi, 5.18, where the kernel has
 * fprobe): one attach is one ftrace update for all functions, where a
 * kprobe each is an update each. */
SEC("kprobe.multi")
int kprobe_multi_entry(struct pt_regs *ctx)
{
	entry_by_cookie(ctx);
	return 0;
}

SEC("kretprobe.multi")
int kretprobe_multi_exit(struct pt_regs *ctx)
{
	exit_by_cookie(ctx);
	return 0;
}

/* The same, attached function by function where the kernel has no
 * kprobe.multi (Debian's 6.1): helper/kernel/kprobe_cookies.c. */
SEC("kprobe")
int kprobe_cookie_entry(struct pt_regs *ctx)
{
	entry_by_cookie(ctx);
	return 0;
}

SEC("kretprobe")
int kretprobe_cookie_exit(struct pt_regs *ctx)
{
	exit_by_cookie(ctx);
	return 0;
}

/* The wire-level programs: RPCs per workload (bpf/wire.h). */
#include "wire.bpf.c"
