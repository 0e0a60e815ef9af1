/*
 * environment_jobs.c — environment jobs registered, ended and finished (see
 * environment_jobs.h).
 */
#include "helper/discover/environment_jobs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/containers/containers.h"
#include "lib/environment.h"
#include "lib/log.h"

/* A job the kernel holds, as the pass saw it. */
struct seen_job {
	uint64_t number;
	int64_t live_tasks;
};

struct vnfs_environment_pass {
	struct vnfs_environment_jobs *jobs;
	int64_t now_ms;
	struct seen_job seen[VNFS_MAX_ENVIRONMENT_JOBS];
	size_t seen_count;
	/* The registry's environment steps (their cgroup id is a job's). */
	struct vnfs_discovery_step steps[VNFS_MAX_STEPS];
	size_t step_count;
};

int vnfs_environment_jobs_init(struct vnfs_environment_jobs *jobs,
				const struct vnfs_config *config, struct vnfs_steps *steps,
				vnfs_finish_job_fn finish_job, void *finish_context)
{
	const struct vnfs_counter_source *source = &steps->source;
	char mount[1024];

	memset(jobs, 0, sizeof(*jobs));
	jobs->cgroup_root_fd = -1;
	jobs->steps = steps;
	jobs->finish_job = finish_job;
	jobs->finish_context = finish_context;
	jobs->config = config;
	if (config->environment.job_variable_count == 0 ||
	    source->for_each_environment_job == NULL || source->forget_environment_job == NULL)
		return 0;
	jobs->pass = calloc(1, sizeof(*jobs->pass));
	if (jobs->pass == NULL)
		return -1;
	if (vnfs_cgroup2_mount(mount, sizeof(mount)) == 0)
		jobs->cgroup_root_fd = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	jobs->enabled = true;
	return 0;
}

void vnfs_environment_jobs_destroy(struct vnfs_environment_jobs *jobs)
{
	if (jobs->steps == NULL) /* never set up: a start that failed before */
		return;
	if (jobs->cgroup_root_fd >= 0)
		close(jobs->cgroup_root_fd);
	jobs->cgroup_root_fd = -1;
	free(jobs->pass);
	jobs->pass = NULL;
}

/* ---- one job's step ---- */

/* Copies a value the kernel kept (NUL-padded, at most its size). */
static void copy_value(char *destination, const char *value)
{
	memcpy(destination, value, VNFS_ENVIRONMENT_VALUE_MAX);
	destination[VNFS_ENVIRONMENT_VALUE_MAX - 1] = '\0';
}

/* The tags of job: each tag variable's value, named as the variable. */
static int job_tags(const struct vnfs_environment_jobs *jobs,
		    const struct vnfs_environment_job *job, struct vnfs_tag_list *tags, char *error,
		    size_t error_size)
{
	vnfs_tags_init(tags);
	for (size_t i = 0; i < jobs->config->environment.tag_variable_count &&
			   i < VNFS_ENVIRONMENT_MAX_TAG_VARIABLES;
	     i++) {
		char value[VNFS_ENVIRONMENT_VALUE_MAX];

		if (!(job->tags_found & (1u << i)))
			continue;
		copy_value(value, job->tags[i]);
		if (vnfs_tags_set(tags, jobs->config->environment.tag_variables[i], value, error,
				  error_size) != 0)
			return -1;
	}
	return 0;
}

/*
 * The step of environment job number, into *step.  Returns 0, or -1 with a
 * message (its values are no identity, its variable is no longer listed).
 */
static int job_step(const struct vnfs_environment_jobs *jobs, uint64_t number,
		    const struct vnfs_environment_job *job, int64_t now_ms, struct vnfs_step *step,
		    char *error, size_t error_size)
{
	struct vnfs_environment_job_variable variable;
	char value[VNFS_ENVIRONMENT_VALUE_MAX], part[VNFS_ENVIRONMENT_VALUE_MAX], reason[256];

	memset(step, 0, sizeof(*step));
	if (job->key.variable >= jobs->config->environment.job_variable_count ||
	    vnfs_environment_job_variable_parse(
		    jobs->config->environment.job_variables[job->key.variable], &variable, reason,
		    sizeof(reason)) != 0) {
		snprintf(error, error_size, "named by job variable %u, which is listed no more",
			 job->key.variable);
		return -1;
	}
	copy_value(value, job->key.value);
	copy_value(part, job->key.part);
	if (vnfs_environment_workload(variable.name, value, part, &step->workload, reason,
				      sizeof(reason)) != 0) {
		snprintf(error, error_size, "%s: %s", variable.name, reason);
		return -1;
	}
	if (job_tags(jobs, job, &step->tags, error, error_size) != 0)
		return -1;
	step->uid = job->key.uid;
	step->cgroup_id = VNFS_ENVIRONMENT_JOB_BIT | number;
	step->start_time_ms = now_ms;
	/* Where it started, for the record: the cgroup of its first exec. */
	if (vnfs_cgroup_path_of_id(jobs->cgroup_root_fd, job->cgroup_id, step->cgroup_path,
				   sizeof(step->cgroup_path), reason, sizeof(reason)) != 0)
		step->cgroup_path[0] = '\0';
	return 0;
}

static bool refused(const struct vnfs_environment_jobs *jobs, uint64_t number)
{
	for (size_t i = 0; i < jobs->refused_count; i++)
		if (jobs->refused[i] == number)
			return true;
	return false;
}

static void forget_refusal(struct vnfs_environment_jobs *jobs, uint64_t number)
{
	for (size_t i = 0; i < jobs->refused_count; i++)
		if (jobs->refused[i] == number)
			jobs->refused[i] = jobs->refused[--jobs->refused_count];
}

/* Registers job number and folds its first calls in (they wait under its
 * id).  A job that cannot be is logged once and left unattributed. */
static void register_job(struct vnfs_environment_jobs *jobs, uint64_t number,
			 const struct vnfs_environment_job *job, int64_t now_ms)
{
	const struct vnfs_counter_source *source = &jobs->steps->source;
	char error[512], name[VNFS_WORKLOAD_DESCRIPTION_MAX];
	struct vnfs_step step;
	uint64_t calls = 0;
	uint32_t slot;

	if (job_step(jobs, number, job, now_ms, &step, error, sizeof(error)) != 0 ||
	    vnfs_steps_register(jobs->steps, &step, &slot, error, sizeof(error)) != 0) {
		vnfs_warning("environment job %llu (uid %u): not registered: %s; its calls stay "
			     "unattributed",
			     (unsigned long long)number, job->key.uid, error);
		if (jobs->refused_count < VNFS_ENVIRONMENT_MAX_REFUSED)
			jobs->refused[jobs->refused_count++] = number;
		return;
	}
	jobs->jobs_registered++;
	vnfs_workload_describe(&step.workload, name, sizeof(name));
	errno = EOPNOTSUPP;
	if (source->fold_unattributed == NULL ||
	    source->fold_unattributed(source->context, step.cgroup_id, slot, &calls) != 0) {
		vnfs_warning("%s: its calls before it was registered stay unattributed (%s)",
			     name, strerror(errno));
		return;
	}
	jobs->calls_folded += calls;
	vnfs_info("%s: named by its environment; its %llu calls before that are folded into it",
		  name, (unsigned long long)calls);
}

/* ---- the pass ---- */

static int see_job(uint64_t number, const struct vnfs_environment_job *job, void *context)
{
	struct vnfs_environment_pass *pass = context;
	const struct vnfs_counter_source *source = &pass->jobs->steps->source;
	uint32_t slot;

	if (pass->seen_count < VNFS_MAX_ENVIRONMENT_JOBS)
		pass->seen[pass->seen_count++] = (struct seen_job){ number, job->live_tasks };
	if (source->registered(source->context, VNFS_ENVIRONMENT_JOB_BIT | number, &slot) != 0 &&
	    !refused(pass->jobs, number))
		register_job(pass->jobs, number, job, pass->now_ms);
	return 0;
}

static void note_step(const struct vnfs_step *step, uint32_t slot, void *context)
{
	struct vnfs_environment_pass *pass = context;

	(void)slot;
	if (!VNFS_IS_ENVIRONMENT_JOB(step->cgroup_id) || pass->step_count == VNFS_MAX_STEPS)
		return;
	pass->steps[pass->step_count++] = (struct vnfs_discovery_step){
		.workload = step->workload,
		.state = step->state,
		.cgroup_id = step->cgroup_id,
	};
}

/* The seen job of number, or NULL when the kernel holds it no more. */
static const struct seen_job *seen_job(const struct vnfs_environment_pass *pass, uint64_t number)
{
	for (size_t i = 0; i < pass->seen_count; i++)
		if (pass->seen[i].number == number)
			return &pass->seen[i];
	return NULL;
}

/* Whether the kernel is done with job number: none of its tasks is left,
 * and it is removed (an exec naming it again makes a new one). */
static bool job_done(struct vnfs_environment_pass *pass, uint64_t number)
{
	const struct vnfs_counter_source *source = &pass->jobs->steps->source;
	const struct seen_job *seen = seen_job(pass, number);

	if (seen == NULL)
		return true; /* removed by a pass that stopped before ending its step */
	if (seen->live_tasks > 0)
		return false;
	return source->forget_environment_job(source->context, number) == 0;
}

/* Whether job has a step still running, or one not from an environment
 * (a Slurm job's own steps: its FINISH is the plugin's to give). */
static bool job_held(const struct vnfs_environment_pass *pass, const struct vnfs_workload *job)
{
	for (size_t i = 0; i < pass->step_count; i++)
		if (vnfs_workload_same_job(&pass->steps[i].workload, job) &&
		    pass->steps[i].state == VNFS_STEP_RUNNING)
			return true;
	return job->source == VNFS_SOURCE_SLURM;
}

static void finish(struct vnfs_environment_jobs *jobs, const struct vnfs_workload *job,
		   int64_t now_ms)
{
	char error[512], name[VNFS_WORKLOAD_DESCRIPTION_MAX];

	vnfs_workload_describe(job, name, sizeof(name));
	if (jobs->finish_job(jobs->finish_context, job, now_ms, error, sizeof(error)) < 0) {
		vnfs_debug("%s: its tasks are gone; not finished: %s", name, error);
		return;
	}
	jobs->jobs_finished++;
	vnfs_info("%s finished: its tasks are gone", name);
}

/* Ends each running step whose job's tasks are gone, then finishes the
 * jobs it left with no running step. */
static void end_gone_jobs(struct vnfs_environment_pass *pass)
{
	char name[VNFS_WORKLOAD_DESCRIPTION_MAX];

	for (size_t i = 0; i < pass->step_count; i++) {
		struct vnfs_discovery_step *step = &pass->steps[i];

		if (step->state != VNFS_STEP_RUNNING ||
		    !job_done(pass, step->cgroup_id & ~VNFS_ENVIRONMENT_JOB_BIT) ||
		    vnfs_steps_end(pass->jobs->steps, &step->workload, pass->now_ms) != 0)
			continue;
		step->state = VNFS_STEP_ENDED;
		vnfs_info("%s ended: its tasks are gone",
			  vnfs_workload_describe(&step->workload, name, sizeof(name)));
	}
	for (size_t i = 0; i < pass->step_count; i++) {
		struct vnfs_workload job = pass->steps[i].workload;

		job.part[0] = '\0';
		if (pass->steps[i].state != VNFS_STEP_ENDED || job_held(pass, &job))
			continue;
		finish(pass->jobs, &job, pass->now_ms);
		/* Once per job: its other steps are finished with it. */
		for (size_t j = i; j < pass->step_count; j++)
			if (vnfs_workload_same_job(&pass->steps[j].workload, &job))
				pass->steps[j].state = VNFS_STEP_FINISHED;
	}
}

/* Removes the jobs without tasks that were never registered. */
static void forget_refused(struct vnfs_environment_pass *pass)
{
	const struct vnfs_counter_source *source = &pass->jobs->steps->source;

	for (size_t i = 0; i < pass->seen_count; i++) {
		uint64_t number = pass->seen[i].number;

		if (pass->seen[i].live_tasks <= 0 && refused(pass->jobs, number) &&
		    source->forget_environment_job(source->context, number) == 0)
			forget_refusal(pass->jobs, number);
	}
}

void vnfs_environment_jobs_run(struct vnfs_environment_jobs *jobs, int64_t now_ms)
{
	const struct vnfs_counter_source *source = &jobs->steps->source;
	struct vnfs_environment_pass *pass = jobs->pass;

	if (!jobs->enabled)
		return;
	pass->jobs = jobs;
	pass->now_ms = now_ms;
	pass->seen_count = pass->step_count = 0;
	if (source->for_each_environment_job(source->context, see_job, pass) != 0) {
		/* Without all of them, a job missing would look ended. */
		vnfs_warning("environment jobs: cannot read the kernel's: %s", strerror(errno));
		return;
	}
	/* Copied out first: nothing is called under the registry's lock. */
	vnfs_registry_visit(jobs->steps->registry, note_step, pass, NULL);
	end_gone_jobs(pass);
	forget_refused(pass);
}
