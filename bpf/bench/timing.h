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

/* attributed_totals[workload * VNFS_OP_COUNT + operation], one copy per CPU. */
struct attributed_total {
	__u64 calls;
	__u64 errors;
	__u64 bytes;
	__u64 time_ns;
};

#endif /* VNFS_BENCH_TIMING_H */
