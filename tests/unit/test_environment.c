/*
 * test_environment.c — lib/environment.h: job variables as listed, and the
 * workload a captured job is.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "lib/environment.h"

static void test_job_variable_parse(void **state)
{
	struct vnfs_environment_job_variable variable;
	char error[256];

	(void)state;
	assert_int_equal(vnfs_environment_job_variable_parse("JOB_ID:SGE_TASK_ID", &variable,
							     error, sizeof(error)), 0);
	assert_string_equal(variable.name, "JOB_ID");
	assert_string_equal(variable.part, "SGE_TASK_ID");
	assert_int_equal(vnfs_environment_job_variable_parse("LSB_JOBID", &variable, error,
							     sizeof(error)), 0);
	assert_string_equal(variable.part, "");
	assert_int_equal(vnfs_environment_job_variable_parse("9LIVES", &variable, error,
							     sizeof(error)), -1);
	assert_string_equal(error, "'9LIVES' is not a variable name (letters, digits and '_', "
				   "not starting with a digit)");
	assert_int_equal(vnfs_environment_job_variable_parse("A:A", &variable, error,
							     sizeof(error)), -1);
	assert_string_equal(error, "'A' cannot be its own part");
	assert_int_equal(vnfs_environment_job_variable_parse(
				 "A_NAME_OF_THIRTY_TWO_CHARACTERS_", &variable, error, sizeof(error)),
			 -1);
	assert_string_equal(error, "'A_NAME_OF_THIRTY_TWO_CHARACTERS_...' is longer than 31 "
				   "characters");
	assert_int_equal(vnfs_environment_job_variable_parse("JOB:", &variable, error,
							     sizeof(error)), -1);
}

static void test_workloads(void **state)
{
	struct vnfs_workload workload;
	char error[256];

	(void)state;
	assert_int_equal(vnfs_environment_workload("LSB_JOBID", "4242", "", &workload, error,
						   sizeof(error)), 0);
	assert_int_equal(workload.source, VNFS_SOURCE_LSF);
	assert_string_equal(workload.job, "4242");
	assert_int_equal(vnfs_environment_workload("JOB_ID", "77", "undefined", &workload, error,
						   sizeof(error)), 0);
	assert_int_equal(workload.source, VNFS_SOURCE_GRID_ENGINE);
	assert_string_equal(workload.part, "");
	assert_int_equal(vnfs_environment_workload("PBS_JOBID", "12[3].pbs01", "", &workload,
						   error, sizeof(error)), 0);
	assert_int_equal(workload.source, VNFS_SOURCE_PBS);
	/* Flux's F58 id, as its shell sets it ("ƒ" in UTF-8), is spelled with
	 * Flux's ASCII prefix "f"; so is one given so already. */
	assert_int_equal(vnfs_environment_workload("FLUX_JOB_ID", "\xc6\x92" "2NpVKsDb", "",
						   &workload, error, sizeof(error)), 0);
	assert_int_equal(workload.source, VNFS_SOURCE_FLUX);
	assert_string_equal(workload.job, "f2NpVKsDb");
	assert_int_equal(vnfs_environment_workload("FLUX_JOB_ID", "f2NpVKsDb", "", &workload,
						   error, sizeof(error)), 0);
	assert_string_equal(workload.job, "f2NpVKsDb");
	/* Another source's job keeps its bytes, and is refused for them. */
	assert_int_equal(vnfs_environment_workload("LSB_JOBID", "\xc6\x92" "2", "", &workload,
						   error, sizeof(error)), -1);
	assert_int_equal(vnfs_environment_workload("SCHEDID", "x7", "", &workload, error,
						   sizeof(error)), 0);
	assert_int_equal(workload.source, VNFS_SOURCE_ENVIRONMENT);
	/* A user's value that is no identity text is refused, not cut. */
	assert_int_equal(vnfs_environment_workload("LSB_JOBID", "42; rm -rf /", "", &workload,
						   error, sizeof(error)), -1);
	/* Slurm: a step in Slurm's spelling, a job without one refused. */
	assert_int_equal(vnfs_environment_workload("SLURM_JOB_ID", "42", "4294967291", &workload,
						   error, sizeof(error)), 0);
	assert_int_equal(workload.source, VNFS_SOURCE_SLURM);
	assert_string_equal(workload.part, "batch");
	assert_int_equal(vnfs_environment_workload("SLURM_JOB_ID", "42", "", &workload, error,
						   sizeof(error)), -1);
	assert_string_equal(error, "a Slurm job without a step number (SLURM_STEP_ID) is not a "
				   "step");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_job_variable_parse),
		cmocka_unit_test(test_workloads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
