// SPDX-License-Identifier: GPL-2.0
/*
 * collector_design.bpf.c — for the benchmark only: a re-implementation of the
 * public vNFS-collector's probe design, the reference vnfs's budget is set
 * against (docs/PERFORMANCE.md).
 *
 * The design: a kprobe and a kretprobe on each hooked NFS client function;
 * the entry stores its start time in a hash keyed by the thread id; the
 * return looks it up, deletes it, and adds count, bytes and time to a stats
 * hash keyed by {pid, tgid, uid, comm, device}.  Reproduced as it is,
 * including its cost model (two hash updates and a delete per call, a
 * per-thread key that nested calls overwrite), not improved: the point is to
 * measure it.  The functions are the ones vnfs hooks; the loader fills
 * hook_config per numbered slot from helper/kernel/hooks.c.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "vnfs.h"
#include "collector_design.h"

char LICENSE[] SEC("license") = "GPL";

const volatile struct vnfs_hook_config hook_config[VNFS_MAX_HOOKS] = {};

struct call_start {
	__u64 start_ns;
	__u32 device;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, COLLECTOR_DESIGN_MAX_ENTRIES);
	__type(key, __u32);
	__type(value, struct call_start);
} call_starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, COLLECTOR_DESIGN_MAX_ENTRIES);
	__type(key, struct collector_design_key);
	__type(value, struct collector_design_stats);
} stats SEC(".maps");

/* Too big for the BPF stack: the first insert of a key copies this. */
static const struct collector_design_stats zero_stats;

/* The argument by index.  The registers are read at fixed offsets first: an
 * index into pt_regs would be ctx arithmetic, which the verifier refuses. */
static __always_inline __u64 argument(struct pt_regs *ctx, __u32 index)
{
	__u64 first = PT_REGS_PARM1(ctx), second = PT_REGS_PARM2(ctx), third = PT_REGS_PARM3(ctx);
	__u64 fourth = PT_REGS_PARM4(ctx), fifth = PT_REGS_PARM5(ctx);

	asm volatile("" : "+r"(first), "+r"(second), "+r"(third), "+r"(fourth), "+r"(fifth));
	switch (index) {
	case 0: return first;
	case 1: return second;
	case 2: return third;
	case 3: return fourth;
	case 4: return fifth;
	}
	return 0;
}

/* The device of the mount the call is about, read through the argument the
 * way the collector reads its file/inode arguments. */
static __always_inline __u32 object_device(__u32 kind, __u64 object)
{
	struct super_block *super_block = NULL;

	if (!object)
		return 0;
	switch (kind) {
	case VNFS_OBJECT_FILE:
		super_block = BPF_CORE_READ((struct file *)object, f_inode, i_sb);
		break;
	case VNFS_OBJECT_KIOCB:
		super_block = BPF_CORE_READ((struct kiocb *)object, ki_filp, f_inode, i_sb);
		break;
	case VNFS_OBJECT_INODE:
		super_block = BPF_CORE_READ((struct inode *)object, i_sb);
		break;
	case VNFS_OBJECT_DENTRY:
		super_block = BPF_CORE_READ((struct dentry *)object, d_sb);
		break;
	case VNFS_OBJECT_PATH:
		super_block = BPF_CORE_READ((struct path *)object, dentry, d_sb);
		break;
	}
	return super_block ? BPF_CORE_READ(super_block, s_dev) : 0;
}

static __always_inline void call_entry(struct pt_regs *ctx, __u32 hook)
{
	__u32 thread = (__u32)bpf_get_current_pid_tgid();
	struct call_start start = { 0 };

	start.device = object_device(hook_config[hook].object_kind,
				     argument(ctx, hook_config[hook].object_argument));
	start.start_ns = bpf_ktime_get_ns();
	bpf_map_update_elem(&call_starts, &thread, &start, BPF_ANY);
}

static __always_inline void call_return(struct pt_regs *ctx, __u32 hook)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 thread = (__u32)pid_tgid, operation = hook_config[hook].operation;
	struct collector_design_key key = { 0 };
	struct collector_design_stats *value;
	struct call_start *start;
	__u64 duration_ns;
	long result;

	if (operation >= VNFS_OP_COUNT)
		return;
	start = bpf_map_lookup_elem(&call_starts, &thread);
	if (!start)
		return;
	duration_ns = bpf_ktime_get_ns() - start->start_ns;
	key.device = start->device;
	bpf_map_delete_elem(&call_starts, &thread);

	key.pid = thread;
	key.tgid = pid_tgid >> 32;
	key.uid = (__u32)bpf_get_current_uid_gid();
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	value = bpf_map_lookup_elem(&stats, &key);
	if (!value) {
		bpf_map_update_elem(&stats, &key, &zero_stats, BPF_NOEXIST);
		value = bpf_map_lookup_elem(&stats, &key);
		if (!value)
			return;
	}
	__sync_fetch_and_add(&value->operations[operation].count, 1);
	__sync_fetch_and_add(&value->operations[operation].time_ns, duration_ns);
	result = PT_REGS_RC(ctx);
	if ((operation == VNFS_OP_READ || operation == VNFS_OP_WRITE) && result > 0)
		__sync_fetch_and_add(&value->operations[operation].bytes, result);
}

/* The kprobe and kretprobe of hook slot N; the loader attaches them by name. */
#define COLLECTOR_PROGRAMS(N)                         \
	SEC("kprobe")                                 \
	int collector_entry_##N(struct pt_regs *ctx)  \
	{                                             \
		call_entry(ctx, N);                   \
		return 0;                             \
	}                                             \
	SEC("kretprobe")                              \
	int collector_return_##N(struct pt_regs *ctx) \
	{                                             \
		call_return(ctx, N);                  \
		return 0;                             \
	}

VNFS_FOR_EACH_HOOK_SLOT(COLLECTOR_PROGRAMS)
