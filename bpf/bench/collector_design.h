/*
 * collector_design.h — map layout of the benchmark's re-implementation of the
 * vNFS-collector design (collector_design.bpf.c), shared with its loader
 * (tests/bench/bench-loader.c), which sums the stats at the end to show the
 * probes really counted.
 */
#ifndef VNFS_BENCH_COLLECTOR_DESIGN_H
#define VNFS_BENCH_COLLECTOR_DESIGN_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#include "../operations.h"

/* The public tool's BCC maps use BCC's default size. */
#define COLLECTOR_DESIGN_MAX_ENTRIES 10240

struct collector_design_key {
	__u32 pid; /* thread id */
	__u32 tgid;
	__u32 uid;
	__u32 device;
	char comm[16];
};

struct collector_design_operation {
	__u64 count;
	__u64 bytes;
	__u64 time_ns;
};

struct collector_design_stats {
	struct collector_design_operation operations[VNFS_OP_COUNT];
};

#endif /* VNFS_BENCH_COLLECTOR_DESIGN_H */
