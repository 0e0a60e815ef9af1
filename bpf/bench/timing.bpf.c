// SPDX-License-Identifier: GPL-2.0
/*
 * timing.bpf.c — for the benchmark only: the least a probe that times each
 * call can do, to show where the budget's floor stands against it.
 *
 * The issue asks for every call's duration (a total and a latency histogram
 * per operation), so any design keeps a start time per task and call.  This
 * one does only that: at entry, the task's storage and a clock read; at exit,
 * the storage again, a clock read, and a count and a time added to a per-CPU
 * array.  No attribution, bytes, errors, histogram or breakdown, so it is a
 * lower bound for vnfs, not an alternative to it: what it adds over the
 * floor (empty programs, floor.bpf.c) is what timing alone costs.  The
 * loader (tests/bench/bench-loader.c) gives each numbered pair its target.
 *
 * With `attribute` set (the loader's attributing variant, (A)), the exit
 * also does the least that answers "which workload made how many of which
 * call, how long they took, how many bytes they moved, how many failed":
 * the calling task's cgroup id, its workload's row found in the hash of the
 * workloads' cgroups (as any design keyed by cgroup must: cgroup ids are
 * sparse) once per task and cgroup, kept in the task's storage beside the
 * start times, and the call's count, error, bytes and time added to that
 * row for the hook's operation (a per-CPU array: the cheapest exact sum;
 * shared rows with atomic adds, which a 256-CPU node's map budget needs,
 * take the same instructions).  A real design must also notice a workload
 * registered or gone since the row was kept (vnfs compares a generation:
 * a load and a compare); here the one workload stays registered.  No
 * latency or size histogram, no process or mount breakdown, no
 * unattributed calls, no nesting, no open or create classification: still
 * a lower bound for vnfs, which does all of those, and what any design that
 * attributes calls pays beyond (T).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "vnfs.h"
#include "timing.h"

char LICENSE[] SEC("license") = "GPL";

struct timing_task {
	__u64 start_ns[VNFS_MAX_HOOKS];
	/* attributing: the row of the cgroup the task last called from */
	__u64 cgroup_id;
	__u32 row; /* ATTRIBUTED_WORKLOADS: none */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct timing_task);
} timing_tasks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct timing_total);
} timing_totals SEC(".maps");

/* The attributing variant's switch, and each hooked function's operation
 * and result, from vnfs's table (the loader: vnfs_hook_fallback_config). */
const volatile bool attribute = false;
const volatile struct vnfs_hook_config hook_config[VNFS_MAX_HOOKS] = {};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ATTRIBUTED_WORKLOADS);
	__type(key, __u64);   /* cgroup id */
	__type(value, __u32); /* the workload's row */
} attributed_workloads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ATTRIBUTED_WORKLOADS * VNFS_OP_COUNT);
	__type(key, __u32);
	__type(value, struct attributed_total);
} attributed_totals SEC(".maps");

static __always_inline void timing_entry(__u32 hook)
{
	struct timing_task *task = bpf_task_storage_get(&timing_tasks, bpf_get_current_task_btf(),
							NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (task)
		task->start_ns[hook] = bpf_ktime_get_ns();
}

/* The attributing variant's exit: the call into its workload's row. */
static __always_inline void attribute_call(void *ctx, struct timing_task *task, __u32 hook,
					   __u64 duration_ns)
{
	__u64 cgroup_id = bpf_get_current_cgroup_id(), result = 0;
	struct attributed_total *total;
	__u32 index, flags, *row;
	__s64 value;

	if (cgroup_id != task->cgroup_id) {
		row = bpf_map_lookup_elem(&attributed_workloads, &cgroup_id);
		task->row = row ? *row : ATTRIBUTED_WORKLOADS;
		task->cgroup_id = cgroup_id;
	}
	if (task->row >= ATTRIBUTED_WORKLOADS || hook >= VNFS_MAX_HOOKS)
		return;
	index = task->row * VNFS_OP_COUNT + hook_config[hook].operation;
	total = bpf_map_lookup_elem(&attributed_totals, &index);
	if (!total)
		return;
	bpf_get_func_ret(ctx, &result);
	flags = hook_config[hook].flags;
	value = (flags & VNFS_HOOK_RESULT_32BIT) ? (__s64)(__s32)result : (__s64)result;
	total->calls++;
	total->time_ns += duration_ns;
	if (hook_config[hook].result_kind == VNFS_RESULT_INT && value < 0)
		total->errors++;
	else if (hook_config[hook].result_kind == VNFS_RESULT_POINTER && result >= (__u64)-4095)
		total->errors++;
	else if ((flags & VNFS_HOOK_BYTES_FROM_RESULT) && value > 0)
		total->bytes += value;
}

static __always_inline void timing_exit(void *ctx, __u32 hook)
{
	struct timing_task *task = bpf_task_storage_get(&timing_tasks, bpf_get_current_task_btf(),
							NULL, 0);
	__u32 zero = 0;
	struct timing_total *total;
	__u64 now = bpf_ktime_get_ns(), duration_ns;

	if (!task || task->start_ns[hook] == 0)
		return;
	duration_ns = now - task->start_ns[hook];
	task->start_ns[hook] = 0;
	if (attribute) {
		attribute_call(ctx, task, hook, duration_ns);
		return;
	}
	total = bpf_map_lookup_elem(&timing_totals, &zero);
	if (total) {
		total->calls++;
		total->time_ns += duration_ns;
	}
}

#define TIMING_PROGRAMS(N)              \
	SEC("bench.fentry")             \
	int timing_entry_##N(void *ctx) \
	{                               \
		timing_entry(N);        \
		return 0;               \
	}                               \
	SEC("bench.fexit")              \
	int timing_exit_##N(void *ctx)  \
	{                               \
		timing_exit(ctx, N);    \
		return 0;               \
	}

VNFS_FOR_EACH_HOOK_SLOT(TIMING_PROGRAMS)
