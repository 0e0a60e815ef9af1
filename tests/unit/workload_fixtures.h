/*
 * workload_fixtures.h — Slurm identities as unit tests write them:
 * slurm_step(42, 0) where the code under test takes a workload, and
 * assertions on them.  Header-only: include it after <cmocka.h>.
 */
#ifndef VNFS_TESTS_WORKLOAD_FIXTURES_H
#define VNFS_TESTS_WORKLOAD_FIXTURES_H

#include <stdint.h>

#include "lib/workload.h"

/* Each call returns its own identity, valid for the next 15 calls: enough
 * for the arguments of one call under test. */
static inline const struct vnfs_workload *slurm_workload(uint32_t job_id, uint32_t step_id,
							 int whole_job)
{
	static struct vnfs_workload identities[16];
	static unsigned next;
	struct vnfs_workload *identity = &identities[next++ % 16];

	if (whole_job)
		vnfs_workload_of_slurm_job(identity, job_id);
	else
		vnfs_workload_of_slurm_step(identity, job_id, step_id);
	return identity;
}

#define slurm_step(job_id, step_id) slurm_workload((job_id), (step_id), 0)
#define slurm_job(job_id) slurm_workload((job_id), 0, 1)

/* workload is Slurm's job_id, step step_id. */
static inline void assert_slurm_step(const struct vnfs_workload *workload, uint32_t job_id,
				     uint32_t step_id)
{
	uint32_t job, step;

	assert_int_equal(vnfs_workload_slurm_ids(workload, &job, &step), 0);
	assert_int_equal(job, job_id);
	assert_int_equal(step, step_id);
}

/* workload is of Slurm's job job_id (a step of it, or the whole job). */
static inline void assert_slurm_job_id(const struct vnfs_workload *workload, uint32_t job_id)
{
	uint32_t job;

	assert_int_equal(vnfs_workload_slurm_job_id(workload, &job), 0);
	assert_int_equal(job, job_id);
}

/* workload is Slurm's whole job job_id. */
static inline void assert_slurm_job(const struct vnfs_workload *workload, uint32_t job_id)
{
	assert_slurm_job_id(workload, job_id);
	assert_string_equal(workload->part, "");
}

#endif /* VNFS_TESTS_WORKLOAD_FIXTURES_H */
