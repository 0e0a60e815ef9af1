/*
 * test_workload.c — lib/workload.c: the source table, Slurm's identities
 * both ways, the text rule for untrusted ids with its exact messages, and
 * the order reports use (sacct's step order, a total order over any text).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "lib/record.h"
#include "lib/workload.h"

static void test_source_table(void **state)
{
	enum vnfs_workload_source source = VNFS_SOURCE_COUNT;

	(void)state;
	assert_int_equal(VNFS_SOURCE_COUNT, 8);
	assert_string_equal(vnfs_workload_source_name(VNFS_SOURCE_KUBERNETES), "kubernetes");
	assert_string_equal(vnfs_workload_job_label(VNFS_SOURCE_KUBERNETES), "pod");
	assert_string_equal(vnfs_workload_part_label(VNFS_SOURCE_KUBERNETES), "container");
	assert_int_equal(vnfs_workload_source_parse("kubernetes", &source), 0);
	assert_int_equal(source, VNFS_SOURCE_KUBERNETES);
	assert_string_equal(vnfs_workload_source_name(VNFS_SOURCE_SLURM), "slurm");
	assert_string_equal(vnfs_workload_job_label(VNFS_SOURCE_SLURM), "job_id");
	assert_string_equal(vnfs_workload_part_label(VNFS_SOURCE_SLURM), "step_id");
	assert_null(vnfs_workload_source_name(VNFS_SOURCE_COUNT));
	assert_null(vnfs_workload_job_label((enum vnfs_workload_source)-1));
	assert_int_equal(vnfs_workload_source_parse("slurm", &source), 0);
	assert_int_equal(source, VNFS_SOURCE_SLURM);
	assert_int_equal(vnfs_workload_source_parse("Slurm", &source), -1);
	assert_int_equal(vnfs_workload_source_parse("", &source), -1);
}

static void test_slurm_both_ways(void **state)
{
	static const struct {
		uint32_t step_id;
		const char *part;
	} steps[] = {
		{ 0, "0" },
		{ 7, "7" },
		{ VNFS_STEP_BATCH, "batch" },
		{ VNFS_STEP_EXTERN, "extern" },
		{ VNFS_STEP_INTERACTIVE, "interactive" },
		{ 4294967290u - 1, "4294967289" },
	};
	struct vnfs_workload workload;
	uint32_t job_id, step_id;

	(void)state;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		vnfs_workload_of_slurm_step(&workload, 4294967295u, steps[i].step_id);
		assert_int_equal(workload.source, VNFS_SOURCE_SLURM);
		assert_string_equal(workload.job, "4294967295");
		assert_string_equal(workload.part, steps[i].part);
		assert_int_equal(vnfs_workload_slurm_ids(&workload, &job_id, &step_id), 0);
		assert_int_equal(job_id, 4294967295u);
		assert_int_equal(step_id, steps[i].step_id);
	}
	vnfs_workload_of_slurm_job(&workload, 42);
	assert_int_equal(workload.source, VNFS_SOURCE_SLURM);
	assert_string_equal(workload.job, "42");
	assert_string_equal(workload.part, "");
	/* Text that no Slurm step has is not read as one. */
	snprintf(workload.job, sizeof(workload.job), "batch");
	assert_int_equal(vnfs_workload_slurm_ids(&workload, &job_id, &step_id), -1);
	snprintf(workload.job, sizeof(workload.job), "4294967296");
	assert_int_equal(vnfs_workload_slurm_ids(&workload, &job_id, &step_id), -1);
	snprintf(workload.job, sizeof(workload.job), "42");
	snprintf(workload.part, sizeof(workload.part), "0x1");
	assert_int_equal(vnfs_workload_slurm_ids(&workload, &job_id, &step_id), -1);
	snprintf(workload.part, sizeof(workload.part), "1");
	assert_int_equal(vnfs_workload_slurm_ids(&workload, &job_id, &step_id), 0);
	assert_int_equal(job_id, 42);
	assert_int_equal(step_id, 1);
}

static void expect_refused(const char *job, const char *part, const char *message)
{
	struct vnfs_workload workload;
	char error[256] = "";

	vnfs_workload_of_slurm_step(&workload, 42, 0);
	assert_int_equal(vnfs_workload_set(&workload, VNFS_SOURCE_SLURM, job, part, error,
					   sizeof(error)),
			 -1);
	assert_string_equal(error, message);
	/* Unchanged by the refusal. */
	assert_string_equal(workload.job, "42");
	assert_string_equal(workload.part, "0");
}

static void test_untrusted_text(void **state)
{
	struct vnfs_workload workload;
	char error[256] = "", longest[VNFS_WORKLOAD_JOB_MAX], too_long[VNFS_WORKLOAD_JOB_MAX + 1];

	(void)state;
	/* What scheduler ids and pod names look like (Slurm, the only source
	 * yet, takes only its own spelling: below). */
	assert_true(vnfs_workload_text_valid("1234[5].pbs01", VNFS_WORKLOAD_JOB_MAX));
	assert_true(vnfs_workload_text_valid("train-0", VNFS_WORKLOAD_PART_MAX));
	assert_int_equal(vnfs_workload_set(&workload, VNFS_SOURCE_SLURM, "42", "batch", error,
					   sizeof(error)),
			 0);
	assert_string_equal(workload.job, "42");
	assert_string_equal(workload.part, "batch");
	assert_true(vnfs_workload_text_valid("ml-team/resnet-7f9c:gpu@node1+2=a,b%c#d~e", 64));
	assert_int_equal(vnfs_workload_set(&workload, VNFS_SOURCE_SLURM, "77", "", error,
					   sizeof(error)),
			 0);
	assert_string_equal(workload.part, "");

	memset(longest, 'a', sizeof(longest) - 1);
	longest[sizeof(longest) - 1] = '\0';
	assert_true(vnfs_workload_text_valid(longest, VNFS_WORKLOAD_JOB_MAX));
	memset(too_long, 'a', sizeof(too_long) - 1);
	too_long[sizeof(too_long) - 1] = '\0';
	assert_false(vnfs_workload_text_valid(too_long, VNFS_WORKLOAD_JOB_MAX));

	expect_refused("", "0", "the workload's job is empty");
	expect_refused(too_long, "0", "the workload's job is longer than 319 bytes");
	expect_refused("42 43", "0",
		       "the workload's job '42...' holds a byte other than letters, digits and "
		       "._-:@+/[]=,%#~");
	expect_refused("42", "a\x1b[2J",
		       "the workload's part 'a...' holds a byte other than letters, digits and "
		       "._-:@+/[]=,%#~");
	expect_refused("j\xc3\xa9", "0",
		       "the workload's job 'j...' holds a byte other than letters, digits and "
		       "._-:@+/[]=,%#~");
	expect_refused("$(reboot)", "0",
		       "the workload's job '...' holds a byte other than letters, digits and "
		       "._-:@+/[]=,%#~");
	/* One Slurm step, one spelling. */
	expect_refused("1234[5].pbs01", "0", "a Slurm job id must be a number from 0 to 4294967295");
	expect_refused("batch", "0", "a Slurm job id must be a number from 0 to 4294967295");
	expect_refused("4294967296", "0", "a Slurm job id must be a number from 0 to 4294967295");
	expect_refused("42", "train-0", "a Slurm step must be a number or batch, extern, interactive");
	expect_refused("042", "0", "Slurm job 042 step 0 is spelled 42.0");
	expect_refused("42", "00", "Slurm job 42 step 00 is spelled 42.0");
	expect_refused("+42", "", "a Slurm job id must be a number from 0 to 4294967295");
	for (const char *c = " \"'\\`$;&|<>*?!(){}\t\n"; *c != '\0'; c++) {
		char text[4] = { 'a', *c, 'b', '\0' };

		assert_false(vnfs_workload_text_valid(text, 64));
	}
	assert_int_equal(vnfs_workload_set(&workload, VNFS_SOURCE_COUNT, "1", "", error,
					   sizeof(error)),
			 -1);
	assert_string_equal(error, "unknown workload source 8");
}

static void test_describe(void **state)
{
	struct vnfs_workload workload;
	char text[VNFS_WORKLOAD_DESCRIPTION_MAX];

	(void)state;
	vnfs_workload_of_slurm_step(&workload, 42, VNFS_STEP_BATCH);
	assert_string_equal(vnfs_workload_describe(&workload, text, sizeof(text)),
			    "job 42 step batch");
	vnfs_workload_of_slurm_job(&workload, 42);
	assert_string_equal(vnfs_workload_describe(&workload, text, sizeof(text)), "job 42");
	assert_int_equal(vnfs_workload_set(&workload, VNFS_SOURCE_KUBERNETES, "ml/resnet-7f9c",
					   "trainer", text, sizeof(text)),
			 0);
	assert_string_equal(vnfs_workload_describe(&workload, text, sizeof(text)),
			    "kubernetes pod ml/resnet-7f9c container trainer");
	workload.part[0] = '\0';
	assert_string_equal(vnfs_workload_describe(&workload, text, sizeof(text)),
			    "kubernetes pod ml/resnet-7f9c");
	assert_int_equal(vnfs_workload_set(&workload, VNFS_SOURCE_GRID_ENGINE, "77", "3", text,
					   sizeof(text)),
			 0);
	assert_string_equal(vnfs_workload_describe(&workload, text, sizeof(text)),
			    "sge job 77 task 3");
}

static void expect_kubernetes_refused(const char *job, const char *part, const char *message)
{
	struct vnfs_workload workload;
	char error[256] = "";

	assert_int_equal(vnfs_workload_set(&workload, VNFS_SOURCE_KUBERNETES, job, part, error,
					   sizeof(error)),
			 -1);
	assert_string_equal(error, message);
}

/* A pod is namespace/name and a container a name, spelled as Kubernetes
 * checks them, so that one pod has one identity; and Kubernetes' "42" is
 * never Slurm's job 42. */
/* A podman or docker container: its name as the engines check one, its
 * short id, described and labelled as the row says. */
static void test_container_identity(void **state)
{
	struct vnfs_workload container;
	char error[256], name[VNFS_WORKLOAD_DESCRIPTION_MAX], longest[VNFS_CONTAINER_NAME_MAX + 2];

	(void)state;
	assert_string_equal(vnfs_workload_source_name(VNFS_SOURCE_CONTAINER), "container");
	assert_string_equal(vnfs_workload_job_label(VNFS_SOURCE_CONTAINER), "container");
	assert_string_equal(vnfs_workload_part_label(VNFS_SOURCE_CONTAINER), "container_id");
	assert_int_equal(vnfs_workload_set(&container, VNFS_SOURCE_CONTAINER, "Trainer_7.b-2",
					   "a4ab434a7d0a", error, sizeof(error)),
			 0);
	assert_string_equal(vnfs_workload_describe(&container, name, sizeof(name)),
			    "container Trainer_7.b-2 id a4ab434a7d0a");
	memset(longest, 'a', VNFS_CONTAINER_NAME_MAX);
	longest[VNFS_CONTAINER_NAME_MAX] = '\0';
	assert_true(vnfs_container_name_valid(longest));
	longest[VNFS_CONTAINER_NAME_MAX] = 'a';
	longest[VNFS_CONTAINER_NAME_MAX + 1] = '\0';
	assert_false(vnfs_container_name_valid(longest));
	assert_false(vnfs_container_name_valid("_x"));
	assert_false(vnfs_container_name_valid("a/b"));
	assert_false(vnfs_container_name_valid(""));
	assert_int_equal(vnfs_workload_set(&container, VNFS_SOURCE_CONTAINER, "-x", "", error,
					   sizeof(error)),
			 -1);
	assert_string_equal(error, "a container's name is a letter or digit, then letters, "
				   "digits, '_', '.' or '-' (at most 128)");
	assert_int_equal(vnfs_workload_set(&container, VNFS_SOURCE_CONTAINER, "x",
					   "A4AB434A7D0A", error, sizeof(error)),
			 -1);
	assert_string_equal(error, "a container's id is 12 lowercase hex digits");
	assert_int_equal(vnfs_workload_set(&container, VNFS_SOURCE_CONTAINER, "x", "a4ab434a7d0",
					   error, sizeof(error)),
			 -1);
}

static void test_kubernetes_identity(void **state)
{
	struct vnfs_workload pod, slurm;
	char error[256], longest_label[VNFS_KUBERNETES_LABEL_MAX + 2];
	uint32_t job_id, step_id;

	(void)state;
	assert_int_equal(vnfs_workload_set(&pod, VNFS_SOURCE_KUBERNETES, "kube-system/etcd.node-1",
					   "", error, sizeof(error)),
			 0);
	assert_int_equal(vnfs_workload_slurm_ids(&pod, &job_id, &step_id), -1);
	memset(longest_label, 'a', VNFS_KUBERNETES_LABEL_MAX);
	longest_label[VNFS_KUBERNETES_LABEL_MAX] = '\0';
	assert_true(vnfs_kubernetes_label_valid(longest_label));
	longest_label[VNFS_KUBERNETES_LABEL_MAX] = 'a';
	longest_label[VNFS_KUBERNETES_LABEL_MAX + 1] = '\0';
	assert_false(vnfs_kubernetes_label_valid(longest_label));
	assert_false(vnfs_kubernetes_label_valid("-a"));
	assert_false(vnfs_kubernetes_label_valid("a-"));
	assert_false(vnfs_kubernetes_label_valid("A"));
	assert_false(vnfs_kubernetes_subdomain_valid("a..b"));
	assert_true(vnfs_kubernetes_subdomain_valid("a.b-c.d"));

	expect_kubernetes_refused("resnet", "", "a Kubernetes pod is namespace/name");
	expect_kubernetes_refused("ml/Resnet", "",
				  "a Kubernetes pod is namespace/name, a DNS label and a DNS "
				  "subdomain (lowercase letters, digits, '-' and '.')");
	expect_kubernetes_refused("ml/a/b", "",
				  "a Kubernetes pod is namespace/name, a DNS label and a DNS "
				  "subdomain (lowercase letters, digits, '-' and '.')");
	expect_kubernetes_refused("ml/resnet", "Trainer",
				  "a Kubernetes container's name is a DNS label (lowercase "
				  "letters, digits, '-', at most 63)");
	expect_kubernetes_refused("ml/resnet", "a b",
				  "the workload's part 'a...' holds a byte other than letters, "
				  "digits and ._-:@+/[]=,%#~");

	/* Another source's job of the same text is another job, and orders after
	 * every Slurm job. */
	assert_int_equal(vnfs_workload_set(&pod, VNFS_SOURCE_KUBERNETES, "ml/42", "", error,
					   sizeof(error)),
			 0);
	vnfs_workload_of_slurm_job(&slurm, 42);
	snprintf(slurm.job, sizeof(slurm.job), "ml/42");
	assert_false(vnfs_workload_same_job(&pod, &slurm));
	vnfs_workload_of_slurm_job(&slurm, 4294967295u);
	assert_true(vnfs_workload_compare(&slurm, &pod) < 0);
}

static void test_order_and_equality(void **state)
{
	struct vnfs_workload a, b;

	(void)state;
	vnfs_workload_of_slurm_step(&a, 9, 0);
	vnfs_workload_of_slurm_step(&b, 10, 0);
	assert_true(vnfs_workload_compare(&a, &b) < 0);
	assert_true(vnfs_workload_compare(&b, &a) > 0);
	assert_false(vnfs_workload_same_job(&a, &b));
	vnfs_workload_of_slurm_step(&b, 9, 10);
	assert_true(vnfs_workload_same_job(&a, &b));
	assert_false(vnfs_workload_equal(&a, &b));
	assert_true(vnfs_workload_compare(&a, &b) < 0);
	vnfs_workload_of_slurm_step(&b, 9, 0);
	assert_true(vnfs_workload_equal(&a, &b));
	assert_int_equal(vnfs_workload_compare(&a, &b), 0);
	/* Leading zeros do not make a number larger; text orders by bytes. */
	snprintf(a.job, sizeof(a.job), "007");
	snprintf(b.job, sizeof(b.job), "10");
	assert_true(vnfs_workload_compare(&a, &b) < 0);
	snprintf(a.job, sizeof(a.job), "pod-b");
	snprintf(b.job, sizeof(b.job), "pod-a");
	assert_true(vnfs_workload_compare(&a, &b) > 0);
	snprintf(b.job, sizeof(b.job), "10");
	assert_true(vnfs_workload_compare(&a, &b) > 0); /* "p" > "1" */
}

/* The order vnfs-report prints: sacct's step order, and a total order over any text. */
static void test_report_order(void **state)
{
	static const uint32_t steps[] = { VNFS_STEP_BATCH, VNFS_STEP_EXTERN,
					  VNFS_STEP_INTERACTIVE, VNFS_STEP_PENDING, 0, 2, 10 };
	const size_t count = sizeof(steps) / sizeof(steps[0]);
	struct vnfs_workload a, b;
	uint32_t job_id = 0;

	(void)state;
	for (size_t i = 0; i < count; i++) {
		for (size_t j = 0; j < count; j++) {
			vnfs_workload_of_slurm_step(&a, 42, steps[i]);
			vnfs_workload_of_slurm_step(&b, 42, steps[j]);
			int order = vnfs_workload_compare(&a, &b);
			assert_true(i < j ? order < 0 : i > j ? order > 0 : order == 0);
		}
	}
	/* A job's own row (part "") comes before its parts. */
	vnfs_workload_of_slurm_job(&a, 42);
	vnfs_workload_of_slurm_step(&b, 42, VNFS_STEP_BATCH);
	assert_true(vnfs_workload_compare(&a, &b) < 0);
	/* Jobs compare without their parts. */
	vnfs_workload_of_slurm_step(&a, 9, 10);
	vnfs_workload_of_slurm_step(&b, 9, VNFS_STEP_BATCH);
	assert_int_equal(vnfs_workload_compare_job(&a, &b), 0);
	vnfs_workload_of_slurm_job(&b, 10);
	assert_true(vnfs_workload_compare_job(&a, &b) < 0);
	/* Numbers before other text, so that no three texts go round in a circle. */
	assert_true(vnfs_workload_compare_text("2", "10") < 0);
	assert_true(vnfs_workload_compare_text("10", "1x") < 0);
	assert_true(vnfs_workload_compare_text("2", "1x") < 0);
	/* Equal values of different texts still have an order: 0 means equal text. */
	assert_true(vnfs_workload_compare_text("7", "007") < 0);
	assert_true(vnfs_workload_compare_text("007", "7") > 0);
	assert_int_equal(vnfs_workload_compare_text("pod-a", "pod-a"), 0);
	/* A source's parts have no names of their own but Slurm's. */
	assert_true(vnfs_workload_compare_part(VNFS_SOURCE_SLURM, "batch", "0") < 0);
	assert_true(vnfs_workload_compare_part(VNFS_SOURCE_COUNT, "batch", "0") > 0);

	/* A Slurm job's number, whatever its part. */
	vnfs_workload_of_slurm_step(&a, 77, VNFS_STEP_EXTERN);
	assert_int_equal(vnfs_workload_slurm_job_id(&a, &job_id), 0);
	assert_int_equal(job_id, 77);
	vnfs_workload_of_slurm_job(&a, 78);
	assert_int_equal(vnfs_workload_slurm_job_id(&a, &job_id), 0);
	assert_int_equal(job_id, 78);
	snprintf(a.job, sizeof(a.job), "batch");
	assert_int_equal(vnfs_workload_slurm_job_id(&a, &job_id), -1);
	snprintf(a.job, sizeof(a.job), "78");
	a.source = VNFS_SOURCE_COUNT;
	assert_int_equal(vnfs_workload_slurm_job_id(&a, &job_id), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_source_table),
		cmocka_unit_test(test_slurm_both_ways),
		cmocka_unit_test(test_untrusted_text),
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_kubernetes_identity),
		cmocka_unit_test(test_container_identity),
		cmocka_unit_test(test_order_and_equality),
		cmocka_unit_test(test_report_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
