/*
 * timing.h — map layout of the benchmark's timing-only probes
 * (timing.bpf.c) and of their attributing variant, shared with their loader
 * (tests/bench/bench-loader.c), which sums the calls at the end to show the
 * probes really fired.
 */
#ifndef VNFS_BENCH_TIMING_H
#define VNFS_BENCH_TIMING_H

#ifndef __bpf__
#include <linux/types.h>
#endif

/* timing_totals[0], one copy per CPU. */
struct timing_total {
	__u64 calls;
	__u64 time_ns;
};

/* The attributing variant: workloads it can tell apart (rows of
 * attributed_workloads), each with a row per operation in attributed_totals. */
#define ATTRIBUTED_WORKLOADS 1024

/* What the attributing variant knows of each hooked function, set by the
 * loader from vnfs's table (helper/kernel/hooks.c) before loading. */
struct attributed_hook {
	__u8 operation;         /* enum vnfs_operation */
	__u8 result_kind;       /* enum vnfs_result_kind */
	__u8 result_32bit;      /* an INT result is a 32-bit int */
	__u8 bytes_from_result; /* a positive result is the bytes moved */
};

/* attributed_totals[workload * VNFS_OP_COUNT + operation], one copy per CPU. */
struct attributed_total {
	__u64 calls;
	__u64 errors;
	__u64 bytes;
	__u64 time_ns;
};

#endif /* VNFS_BENCH_TIMING_H */
