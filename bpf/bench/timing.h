/*
 * timing.h — map layout of the benchmark's timing-only probes
 * (timing.bpf.c), shared with their loader (tests/bench/bench-loader.c),
 * which sums the calls at the end to show the probes really fired.
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

#endif /* VNFS_BENCH_TIMING_H */
