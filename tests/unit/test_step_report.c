/*
 * test_step_report.c — the --vnfs-report summary (spank/step_report.c) of a
 * job as a QUERY reply decodes it (lib/reply.c, tested in test_reply.c),
 * exact text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/record_json.h"
#include "spank/step_report.h"

struct fixture {
	struct vnfs_step_stats stats[2];
	struct vnfs_tag_list tags[2];
	struct vnfs_step_record steps[2];
	struct vnfs_job job;
};

/* A job 77 with step 0 (an 8 MiB write and some metadata) and the batch step. */
static int setup(void **state)
{
	struct fixture *fixture = calloc(1, sizeof(*fixture));
	struct vnfs_job *job;
	char error[256];

	assert_non_null(fixture);
	for (int i = 0; i < 2; i++) {
		struct vnfs_step_record *step = &fixture->steps[i];

		step->job_id = 77;
		step->step_id = i == 0 ? 0 : VNFS_STEP_BATCH;
		step->uid = 1001;
		snprintf(step->user, sizeof(step->user), "vnfstest");
		snprintf(step->node, sizeof(step->node), "node1");
		step->cgroup_id = 1000 + (uint64_t)i;
		snprintf(step->cgroup_path, sizeof(step->cgroup_path), "/vnfs/job_77/step_%d", i);
		vnfs_tags_init(&fixture->tags[i]);
		assert_int_equal(vnfs_tags_set(&fixture->tags[i], "PROJECT_NAME", "alpha", error,
					       sizeof(error)),
				 0);
		step->tags = &fixture->tags[i];
		step->start_time_ms = 1700000000000;
		step->end_time_ms = 1700000005000;
		step->sample_time_ms = 1700000005000;
		step->finished = true;
		step->stats = &fixture->stats[i];
	}
	fixture->stats[0].operations[VNFS_OP_WRITE].count = 8;
	fixture->stats[0].operations[VNFS_OP_WRITE].bytes = 8388608;
	fixture->stats[0].operations[VNFS_OP_WRITE].time_ns = 40000000;
	fixture->stats[0].operations[VNFS_OP_OPEN].count = 1;
	fixture->stats[0].operations[VNFS_OP_OPEN].time_ns = 2500000;
	fixture->stats[0].operations[VNFS_OP_FSYNC].count = 1;
	fixture->stats[0].operations[VNFS_OP_FSYNC].time_ns = 7500000;
	fixture->stats[0].operations[VNFS_OP_LOOKUP].count = 3;
	fixture->stats[0].operations[VNFS_OP_LOOKUP].errors = 2;
	fixture->stats[1].operations[VNFS_OP_READ].count = 9;
	fixture->stats[1].operations[VNFS_OP_READ].bytes = 8388608;

	job = &fixture->job;
	job->job_id = 77;
	job->uid = 1001;
	job->user = "vnfstest";
	job->node = "node1";
	job->start_time_ms = 1700000000000;
	job->end_time_ms = 1700000005000;
	job->step_count = 2;
	job->steps = fixture->steps;
	*state = fixture;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fixture = *state;

	free(fixture);
	return 0;
}

static void test_brief(void **state)
{
	struct fixture *fixture = *state;
	char out[4096], error[256];

	assert_int_equal(vnfs_step_report_format(&fixture->job, 0, VNFS_REPORT_BRIEF, out,
						 sizeof(out), error, sizeof(error)),
			 0);
	assert_string_equal(out, "vnfs: job 77 step 0: read 0 bytes (0 calls), write 8388608 "
				 "bytes (8 calls), 4 metadata calls, 1 fsync calls, 2 errors, 0.050 s in NFS calls\n");
	assert_int_equal(vnfs_step_report_format(&fixture->job, VNFS_STEP_BATCH,
						 VNFS_REPORT_BRIEF, out, sizeof(out), error,
						 sizeof(error)),
			 0);
	assert_string_equal(out, "vnfs: job 77 step batch: read 8388608 bytes (9 calls), write 0 "
				 "bytes (0 calls), 0 metadata calls, 0 fsync calls, 0 errors, 0.000 s in NFS calls\n");
}

static void test_full(void **state)
{
	struct fixture *fixture = *state;
	char out[4096], error[256];

	assert_int_equal(vnfs_step_report_format(&fixture->job, 0, VNFS_REPORT_FULL, out,
						 sizeof(out), error, sizeof(error)),
			 0);
	assert_string_equal(out,
			    "vnfs: job 77 step 0: read 0 bytes (0 calls), write 8388608 bytes "
			    "(8 calls), 4 metadata calls, 1 fsync calls, 2 errors, 0.050 s in NFS calls\n"
			    "vnfs: tags: PROJECT_NAME=alpha\n"
			    "vnfs: operation           calls   errors       time_s            bytes\n"
			    "vnfs: write                   8        0     0.040000          8388608\n"
			    "vnfs: open                    1        0     0.002500                0\n"
			    "vnfs: fsync                   1        0     0.007500                0\n"
			    "vnfs: lookup                  3        2     0.000000                0\n");
}

static void test_none_prints_nothing(void **state)
{
	struct fixture *fixture = *state;
	char out[64] = "x", error[256];

	assert_int_equal(vnfs_step_report_format(&fixture->job, 0, VNFS_REPORT_NONE, out,
						 sizeof(out), error, sizeof(error)),
			 0);
	assert_string_equal(out, "");
}

static void test_small_buffer_is_cut_not_overrun(void **state)
{
	struct fixture *fixture = *state;
	char out[40], error[256];

	memset(out, 'z', sizeof(out));
	assert_int_equal(vnfs_step_report_format(&fixture->job, 0, VNFS_REPORT_FULL, out, 20,
						 error, sizeof(error)),
			 0);
	assert_string_equal(out, "vnfs: job 77 step 0");
	assert_int_equal(out[20], 'z');
}

static void test_missing_step(void **state)
{
	struct fixture *fixture = *state;
	struct vnfs_job empty = { .job_id = 77 };
	vnfs_workload_of_slurm_job(&empty.workload, empty.job_id);
	char out[256], error[256];

	assert_int_equal(vnfs_step_report_format(&fixture->job, 5, VNFS_REPORT_BRIEF, out,
						 sizeof(out), error, sizeof(error)),
			 -1);
	assert_string_equal(error, "the helper's reply has no step 5");
	assert_string_equal(out, "");
	assert_int_equal(vnfs_step_report_format(&empty, 0, VNFS_REPORT_BRIEF, out, sizeof(out),
						 error, sizeof(error)),
			 -1);
	assert_string_equal(error, "the helper's reply has no step 0");
}

/* A step without counters (a reply decoded elsewhere always has them). */
static void test_step_without_counters(void **state)
{
	struct fixture *fixture = *state;
	char out[256] = "x", error[256] = "";

	fixture->steps[0].stats = NULL;
	assert_int_equal(vnfs_step_report_format(&fixture->job, 0, VNFS_REPORT_BRIEF, out,
						 sizeof(out), error, sizeof(error)),
			 -1);
	assert_string_equal(error, "the helper's reply has no counters");
	assert_string_equal(out, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_brief, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_none_prints_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_small_buffer_is_cut_not_overrun, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_missing_step, setup, teardown),
		cmocka_unit_test_setup_teardown(test_step_without_counters, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
