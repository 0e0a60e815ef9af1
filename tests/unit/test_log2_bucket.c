/*
 * test_log2_bucket.c — bpf/log2_bucket.h, the histogram bucket every
 * counted call takes, against floor(log2(value)) by a plain loop: 0, every
 * power of two and its neighbours, the largest value, and a million values
 * of every magnitude, for the latency and the request size buckets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <linux/types.h>

#include "bpf/log2_bucket.h"
#include "bpf/step_stats.h"

/* floor(log2(value)), 0 for 0, clamped: what the buckets mean (step_stats.h). */
static __u32 reference(__u64 value, __u32 buckets)
{
	__u32 bucket = 0;

	while (value > 1) {
		value >>= 1;
		bucket++;
	}
	return bucket < buckets ? bucket : buckets - 1;
}

static void expect(__u64 value, __u32 buckets)
{
	__u32 got = log2_bucket(value, buckets), want = reference(value, buckets);

	if (got != want)
		fail_msg("log2_bucket(%llu, %u) = %u, expected %u", (unsigned long long)value, buckets,
			 got, want);
}

static void test_zero_and_one_are_bucket_0(void **state)
{
	(void)state;
	assert_int_equal(log2_bucket(0, VNFS_LATENCY_BUCKETS), 0);
	assert_int_equal(log2_bucket(1, VNFS_LATENCY_BUCKETS), 0);
	assert_int_equal(log2_bucket(2, VNFS_LATENCY_BUCKETS), 1);
	assert_int_equal(log2_bucket(3, VNFS_LATENCY_BUCKETS), 1);
	assert_int_equal(log2_bucket(131072, VNFS_SIZE_BUCKETS), 17);
}

static void test_every_power_of_two_and_its_neighbours(void **state)
{
	(void)state;
	for (int n = 0; n < 64; n++) {
		__u64 power = 1ull << n;

		for (__u32 buckets = 1; buckets <= 64; buckets++) {
			expect(power, buckets);
			expect(power - 1, buckets);
			expect(power + 1, buckets);
			expect(power | (power - 1), buckets); /* all bits up to n */
		}
	}
}

static void test_largest_values_are_clamped(void **state)
{
	(void)state;
	assert_int_equal(log2_bucket(UINT64_MAX, 64), 63);
	assert_int_equal(log2_bucket(UINT64_MAX, VNFS_LATENCY_BUCKETS), VNFS_LATENCY_BUCKETS - 1);
	assert_int_equal(log2_bucket(1ull << 40, VNFS_SIZE_BUCKETS), VNFS_SIZE_BUCKETS - 1);
}

/* xorshift64: values of every magnitude, the same on every run. */
static __u64 next_value(__u64 *seed)
{
	*seed ^= *seed << 13;
	*seed ^= *seed >> 7;
	*seed ^= *seed << 17;
	return *seed >> (*seed & 63); /* a random number of leading zeros */
}

static void test_a_million_values(void **state)
{
	__u64 seed = 0x9e3779b97f4a7c15ull;

	(void)state;
	for (int i = 0; i < 1000000; i++) {
		__u64 value = next_value(&seed);

		expect(value, VNFS_LATENCY_BUCKETS);
		expect(value, VNFS_SIZE_BUCKETS);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zero_and_one_are_bucket_0),
		cmocka_unit_test(test_every_power_of_two_and_its_neighbours),
		cmocka_unit_test(test_largest_values_are_clamped),
		cmocka_unit_test(test_a_million_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
