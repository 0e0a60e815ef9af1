/*
 * step_stats.h — a step's counters as the kernel side counts them: the
 * values of the step_stats map, which every record carries (lib/record.h),
 * and the capacities records mirror.  Part of the BPF ABI (vnfs.h includes
 * it): any change here must bump VNFS_ABI_VERSION there.
 *
 * Included by BPF C (after vmlinux.h) and by user space.
 */
#ifndef VNFS_STEP_STATS_H
#define VNFS_STEP_STATS_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#include "operations.h"

/* Job steps tracked at once on a node (slots). */
#define VNFS_MAX_STEPS 1024
/* Rows of breakdown_stats ({slot, mount, process name}) on a node. */
#define VNFS_MAX_BREAKDOWN_ENTRIES (16 * VNFS_MAX_STEPS)

/* Bucket i counts values v with floor(log2(v)) == i (v == 0 in bucket 0);
 * the last bucket also takes everything larger.  Latency in nanoseconds:
 * 2^35 ns is 34 s.  Request size in bytes: 2^31 is 2 GiB. */
#define VNFS_LATENCY_BUCKETS 36
#define VNFS_SIZE_BUCKETS 32

/* A process name as the kernel keeps it (TASK_COMM_LEN). */
#define VNFS_COMM_LEN 16

struct vnfs_operation_stats {
	__u64 count;
	__u64 errors;   /* calls that returned a negative errno */
	__u64 time_ns;  /* sum of call durations */
	__u64 bytes;    /* read, write, mmap_read only */
	__u64 latency_histogram[VNFS_LATENCY_BUCKETS];
};

/* Direction index of request_size_histogram. */
enum vnfs_direction { VNFS_DIRECTION_READ, VNFS_DIRECTION_WRITE, VNFS_DIRECTIONS };

/* step_stats[slot]: everything counted for one job step. */
struct vnfs_step_stats {
	struct vnfs_operation_stats operations[VNFS_OP_COUNT];
	__u64 request_size_histogram[VNFS_DIRECTIONS][VNFS_SIZE_BUCKETS];
};

#endif /* VNFS_STEP_STATS_H */
