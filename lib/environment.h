/*
 * environment.h — jobs named by their processes' environment (DESIGN.md,
 * decision 11): which variables name a job, which scheduler each means, and
 * the workload a captured value is.
 *
 * The kernel captures the values at exec (bpf/vnfs.h, "Environment jobs");
 * the helper turns each job it captured into a workload with
 * vnfs_environment_workload (helper/discover/environment_jobs.h).  Values
 * come from users, who choose their environment: they are checked here as
 * any identity text is (lib/workload.h), and a job is always its uid's.
 */
#ifndef VNFS_ENVIRONMENT_H
#define VNFS_ENVIRONMENT_H

#include <stdbool.h>
#include <stddef.h>

#include "bpf/vnfs.h"
#include "lib/workload.h"

/* The job variables of the schedulers vnfs knows, and what each names: a
 * variable not listed here names a job of source "environment". */
#define VNFS_ENVIRONMENT_KNOWN_VARIABLES(X) \
	X("LSB_JOBID", LSF)                 \
	X("JOB_ID", GRID_ENGINE)            \
	X("PBS_JOBID", PBS)                 \
	X("FLUX_JOB_ID", FLUX)              \
	X("SLURM_JOB_ID", SLURM)

/* [environment] job_variables when vnfs.conf does not say: Grid Engine's
 * array tasks are parts of their job.  Not SLURM_JOB_ID: where the SPANK
 * plugin runs it registers Slurm's steps, and a prolog's environment,
 * which names the job and step too, would claim a step's identity before
 * the plugin could; a node without the plugin lists
 * SLURM_JOB_ID:SLURM_STEP_ID. */
#define VNFS_ENVIRONMENT_DEFAULT_JOB_VARIABLES \
	"LSB_JOBID, JOB_ID:SGE_TASK_ID, PBS_JOBID, FLUX_JOB_ID"

/* A job variable as listed: NAME, or NAME:PART_NAME. */
struct vnfs_environment_job_variable {
	char name[VNFS_ENVIRONMENT_NAME_MAX];
	char part[VNFS_ENVIRONMENT_NAME_MAX]; /* "" for none */
};

/* Whether name can be listed: a shell variable's name ([A-Za-z_][A-Za-z0-9_]*)
 * of at most VNFS_ENVIRONMENT_NAME_MAX - 1 bytes. */
bool vnfs_environment_name_valid(const char *name);

/* Parses "NAME" or "NAME:PART".  Returns 0, or -1 with a message. */
int vnfs_environment_job_variable_parse(const char *text,
					struct vnfs_environment_job_variable *variable,
					char *error, size_t error_size);

/* The source a job variable names (VNFS_ENVIRONMENT_KNOWN_VARIABLES, else
 * VNFS_SOURCE_ENVIRONMENT). */
enum vnfs_workload_source vnfs_environment_source(const char *name);

/*
 * The workload of a job that variable named with value, part being its part
 * variable's value ("" when it has none or the environment had none).
 * Grid Engine's "undefined" task (not an array job) is no part; a Slurm
 * step is spelled as vnfs_workload_of_slurm_step spells it, and a Slurm job
 * without a step is refused (the SPANK plugin registers Slurm's own).
 * Returns 0, or -1 with a message.
 */
int vnfs_environment_workload(const char *variable, const char *value, const char *part,
			      struct vnfs_workload *workload, char *error, size_t error_size);

#endif /* VNFS_ENVIRONMENT_H */
