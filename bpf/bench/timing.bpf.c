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
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "vnfs.h"
#include "timing.h"

char LICENSE[] SEC("license") = "GPL";

struct timing_task {
	__u64 start_ns[VNFS_MAX_HOOKS];
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

static __always_inline void timing_entry(__u32 hook)
{
	struct timing_task *task = bpf_task_storage_get(&timing_tasks, bpf_get_current_task_btf(),
							NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (task)
		task->start_ns[hook] = bpf_ktime_get_ns();
}

static __always_inline void timing_exit(__u32 hook)
{
	struct timing_task *task = bpf_task_storage_get(&timing_tasks, bpf_get_current_task_btf(),
							NULL, 0);
	__u32 zero = 0;
	struct timing_total *total;
	__u64 now = bpf_ktime_get_ns();

	if (!task || task->start_ns[hook] == 0)
		return;
	total = bpf_map_lookup_elem(&timing_totals, &zero);
	if (total) {
		total->calls++;
		total->time_ns += now - task->start_ns[hook];
	}
	task->start_ns[hook] = 0;
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
		timing_exit(N);         \
		return 0;               \
	}

VNFS_FOR_EACH_HOOK_SLOT(TIMING_PROGRAMS)
