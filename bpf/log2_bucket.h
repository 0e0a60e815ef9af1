/*
 * bpf/log2_bucket.h — the histogram bucket of a value: floor(log2(value)),
 * 0 for 0, clamped to the last bucket (the buckets of step_stats.h and
 * wire.h).  Included by the BPF programs and by tests/unit/test_log2_bucket.c,
 * which checks it against a plain loop; the includer provides __u8, __u32 and
 * __u64 (vmlinux.h, or <linux/types.h>).
 *
 * Every counted call takes one or two of these, so it is written for the
 * fewest instructions without a branch: the value's bits below its highest
 * are set, which leaves 2^(n+1) - 1; minus itself shifted by one, 2^n alone;
 * times a de Bruijn constant, whose top six bits are then different for each
 * n, and a table of 64 bytes gives n back.  About twenty instructions where
 * a six-step binary search took forty; and no branch per step, which would
 * give the verifier one path per bucket through every caller.
 */
#ifndef VNFS_LOG2_BUCKET_H
#define VNFS_LOG2_BUCKET_H

#define LOG2_DE_BRUIJN 0x07EDD5E59A4E28C2ull

/* n at index (2^n * LOG2_DE_BRUIJN) >> 58. */
static const __u8 log2_of_index[64] = {
	63, 0,  58, 1,  59, 47, 53, 2,  60, 39, 48, 27, 54, 33, 42, 3,
	61, 51, 37, 40, 49, 18, 28, 20, 55, 30, 34, 11, 43, 14, 22, 4,
	62, 57, 46, 52, 38, 26, 32, 41, 50, 36, 17, 19, 29, 10, 13, 21,
	56, 45, 25, 31, 35, 16, 9,  12, 44, 24, 15, 8,  23, 7,  6,  5,
};

static inline __attribute__((always_inline)) __u32 log2_bucket(__u64 value, __u32 buckets)
{
	__u64 bucket; /* 64 bits: the clamp then tests the register it bounds */

	value |= 1; /* 0 goes where 1 does */
	value |= value >> 1;
	value |= value >> 2;
	value |= value >> 4;
	value |= value >> 8;
	value |= value >> 16;
	value |= value >> 32;
	value -= value >> 1;
	bucket = log2_of_index[(value * LOG2_DE_BRUIJN) >> 58];
	/* Opaque to clang, which would otherwise fold the clamp into what it
	 * knows of the table and leave the verifier a loaded byte, 0 to 255,
	 * to index a histogram with. */
	__asm__ __volatile__("" : "+r"(bucket));
	return bucket < buckets ? bucket : buckets - 1;
}

#endif /* VNFS_LOG2_BUCKET_H */
