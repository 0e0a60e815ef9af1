/*
 * environment_jobs.h — the jobs processes' environments name (LSF, Grid
 * Engine, PBS, Flux, Slurm without its plugin, any variable the admin
 * lists): registered as workloads, ended and finished when their last task
 * is gone (DESIGN.md, decision 11).
 *
 * The kernel does the capture (bpf/vnfs.h, "Environment jobs"): each exec
 * of a task in no registered cgroup whose environment names a job makes the
 * task, and every task it then forks, that job's; the calls of a job not
 * registered yet wait in unattributed rows under its id.  Each pass here
 * registers the jobs the kernel captured since the last (their workload
 * from lib/environment.h, their tags from the tag variables' values), folds
 * those rows into them, each call exactly once, and ends each job whose
 * tasks are all gone.  A job whose steps all came from environments, none
 * of them running, is finished: final read, summary record, history row
 * and report files, as a FINISH gives a Slurm job.
 *
 * Runs on the main thread between intervals, before the collector's read,
 * as the discovery does (helper/discover/discovery.h).
 */
#ifndef VNFS_ENVIRONMENT_JOBS_H
#define VNFS_ENVIRONMENT_JOBS_H

#include <stdbool.h>
#include <stdint.h>

#include "helper/discover/discovery.h"
#include "helper/steps/steps.h"
#include "lib/config.h"

/* Jobs refused (identity text that is not one, a registry refusal) whose
 * refusal is remembered, so that the log names each once. */
#define VNFS_ENVIRONMENT_MAX_REFUSED 256

struct vnfs_environment_pass;

struct vnfs_environment_jobs {
	bool enabled;
	struct vnfs_steps *steps;
	vnfs_finish_job_fn finish_job;
	void *finish_context;
	const struct vnfs_config *config; /* the variables' names */
	int cgroup_root_fd;               /* to name a job's first cgroup; -1 none */
	/* What a pass copies out (the kernel's jobs, the registry's steps),
	 * allocated once: a pass touches only the pages of what it copies. */
	struct vnfs_environment_pass *pass;
	uint64_t refused[VNFS_ENVIRONMENT_MAX_REFUSED];
	size_t refused_count;
	/* Counts since start, for the log. */
	uint64_t jobs_registered;
	uint64_t calls_folded;
	uint64_t jobs_finished;
};

/* Sets jobs up for the counter source of steps (config must outlive jobs);
 * disabled when config lists no job variable or the source captures none.
 * Returns 0, or -1 when out of memory. */
int vnfs_environment_jobs_init(struct vnfs_environment_jobs *jobs,
				const struct vnfs_config *config, struct vnfs_steps *steps,
				vnfs_finish_job_fn finish_job, void *finish_context);
void vnfs_environment_jobs_destroy(struct vnfs_environment_jobs *jobs);

/* One pass at now_ms: register the new jobs, end and finish the gone. */
void vnfs_environment_jobs_run(struct vnfs_environment_jobs *jobs, int64_t now_ms);

#endif /* VNFS_ENVIRONMENT_JOBS_H */
