/*
 * spank_vnfs.c — the Slurm SPANK plugin: registers every job step's cgroup
 * with vnfs-helper, adds --vnfs-tags and --vnfs-report, and asks for the job
 * report at job end.  The callbacks, the plugin's state between them (struct
 * plugin_state) and the requests to the helper live here; the decisions are
 * in plugin_args.c, step_cgroup.c and step_report.c.
 *
 * Where each callback runs (Slurm 22.05, see docs/SPANK.md):
 *   option callbacks   srun/sbatch/salloc (remote=0): validate, resolve tags;
 *                      slurmstepd (remote=1, twice): keep the value
 *   init_post_opt      srun/sbatch/salloc: hand resolved tags to the job;
 *                      slurmstepd: register the extern step (it has no tasks)
 *   local_user_init    srun: remember job and step for the report
 *   task_post_fork     slurmstepd, root, task held before exec: place, register
 *   task_init          the task, as the user, just before exec: stop it if
 *                      post_fork could not account the step
 *   exit               slurmstepd: unregister, remove vnfs cgroups;
 *                      srun: print the --vnfs-report summary
 *   job_epilog         slurmd's epilog, root: FINISH (final report files)
 *
 * A registration failure is logged in task_post_fork and returned as an
 * error from each task's task_init: Slurm ignores errors of an `optional`
 * plugin (the step runs, the log has our one line) and, for a `required`
 * one, ends the task with exit code 1 before it executes anything, which is
 * the administrator's choice (see accounted_step.unaccounted below for why
 * not task_post_fork).
 */
#include <json-c/json.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "lib/escape.h"
#include "lib/log.h"
#include "lib/client.h"
#include "lib/record.h"
#include "spank/plugin_args.h"
#include "spank/step_cgroup.h"
#include "spank/step_report.h"

SPANK_PLUGIN(vnfs, 1);

/*
 * Resolved tags travel from srun/sbatch/salloc to the nodes as
 * SLURM_SPANK_VNFS_TAGS in the job's environment: sbatch and salloc export
 * their job control variables (spank_job_control_setenv) under that name, and
 * srun sets it in its own environment, which it passes on to the step.
 * INHERITED_OPTION is how Slurm hands an allocation's option to an srun
 * inside it (SLURM_SPANK__SLURM_SPANK_OPTION_<plugin>_<option>).
 */
#define TAGS_VARIABLE "VNFS_TAGS"
#define CARRIED_TAGS "SLURM_SPANK_" TAGS_VARIABLE
#define INHERITED_OPTION "SLURM_SPANK__SLURM_SPANK_OPTION_vnfs_vnfs_tags"
#define REMOVE_WAIT_MS 2000

/*
 * Everything the plugin remembers between callbacks, in one struct.  Slurm
 * loads the plugin once in each process it runs (srun, sbatch, salloc,
 * slurmstepd, slurmd's prolog and epilog), and each of those processes is
 * one SPANK context, so a single instance, `plugin` below, is this process's
 * state.  Each function takes a pointer to the part of it it uses; only
 * Slurm's entry points name `plugin`, and the option callbacks do because
 * struct spank_option's callback gets the option's value and nothing else
 * (no user pointer).
 */

/* --vnfs-tags and --vnfs-report, as the option callbacks got them. */
struct user_options {
	char tags[VNFS_TAGS_BUFFER];   /* resolved locally, or the remote optarg */
	bool tags_given;
	enum vnfs_report_mode report_mode;
	bool report_given;
};

/* srun: the step whose summary --vnfs-report prints at its end. */
struct reported_step {
	uint32_t job_id, step_id;
	bool known;
};

/* slurmstepd: this step's cgroup and its registration with the helper. */
struct accounted_step {
	struct vnfs_step_cgroup cgroup;
	bool cgroup_known;
	uint32_t job_id, step_id;      /* as registered */
	bool registered;
	bool registration_failed;      /* once per step: later tasks do not retry */
	/*
	 * Set by task_post_fork when the step cannot be accounted; read by
	 * every task in task_init.  An error returned from task_post_fork
	 * itself would make a `required` plugin abort the launch in a way
	 * Slurm 22.05 reports badly: srun prints "Slurmd could not execve job"
	 * and still exits 0, and a batch step that cannot launch drains the
	 * node.  An error from task_init, which runs in the task just before
	 * exec, makes Slurm end that task with exit code 1 instead: srun exits
	 * 1, a batch job fails with exit code 1.
	 *
	 * slurmstepd forks every task (held on a pipe) before task_post_fork
	 * runs in slurmstepd, so the verdict cannot travel in the tasks'
	 * memory: it lives in one shared anonymous page mapped in
	 * slurm_spank_init, before the fork.  slurmstepd releases the tasks
	 * only after task_post_fork returned for all of them, so one failing
	 * task makes the whole step stop.  Without the page (mmap failed)
	 * task_post_fork returns the error as before.
	 */
	atomic_bool *unaccounted;
};

struct plugin_state {
	struct vnfs_plugin_args args;  /* the plugstack.conf line */
	bool args_error_logged;        /* a bad line is said once per process */
	struct user_options options;
	struct reported_step reported;
	struct accounted_step step;
};

static struct plugin_state plugin;

static int tags_option(int value, const char *optarg, int remote);
static int report_option(int value, const char *optarg, int remote);

/* Not const: spank_option_register takes a non-const pointer. */
static struct spank_option tags_spank_option = {
	"vnfs-tags", "NAME[=VALUE][,...]",
	"Tag this job's NFS I/O accounting; NAME alone takes $NAME from the environment", 1, 0,
	tags_option
};
static struct spank_option report_spank_option = {
	"vnfs-report", "brief|full|none",
	"Print this step's NFS I/O summary when it ends (default brief)", 2, 0, report_option
};

/* Parsed in every callback: prolog/epilog contexts get no slurm_spank_init. */
static int load_arguments(struct plugin_state *state, int argc, char **argv)
{
	char error[512];

	if (vnfs_plugin_args_parse(&state->args, argc, argv, error, sizeof(error)) == 0)
		return 0;
	if (!state->args_error_logged)
		slurm_error("vnfs: plugstack.conf: %s (vnfs is off)", error);
	state->args_error_logged = true;
	return -1;
}

static double milliseconds_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - start->tv_sec) * 1e3 + (now.tv_nsec - start->tv_nsec) / 1e6;
}

static const char *getenv_lookup(const char *name, void *context)
{
	(void)context;
	return getenv(name);
}

/*
 * The job's environment in slurmstepd.  A value too long for the buffer is
 * returned cut but still longer than any valid tag, so validation rejects it
 * instead of recording a wrong value.
 */
struct job_environment {
	spank_t spank;
	char value[VNFS_TAG_VALUE_MAX * 4 + 1];
};

static const char *job_environment_lookup(const char *name, void *context)
{
	struct job_environment *environment = context;
	spank_err_t status = spank_getenv(environment->spank, name, environment->value,
					  sizeof(environment->value));

	if (status != ESPANK_SUCCESS && status != ESPANK_NOSPACE)
		return NULL;
	environment->value[sizeof(environment->value) - 1] = '\0';
	return environment->value;
}

/*
 * srun/sbatch/salloc: validate and resolve --vnfs-tags where the user typed
 * it, into options->tags.  An srun inside an sbatch/salloc allocation gets
 * the allocation's option again through the environment: it keeps the tags
 * resolved when the allocation was made, and its own --vnfs-tags adds to
 * them.
 */
static int resolve_typed_tags(const struct vnfs_plugin_args *args, struct user_options *options,
			      const char *optarg)
{
	const char *carried = getenv(CARRIED_TAGS), *inherited_option = getenv(INHERITED_OPTION);
	bool in_tagged_allocation = carried && inherited_option;
	char error[768], *text = NULL;
	int status;

	if (in_tagged_allocation && strcmp(inherited_option, optarg) &&
	    asprintf(&text, "%s,%s", carried, optarg) < 0) {
		slurm_error("vnfs: --vnfs-tags: out of memory");
		return -1;
	}
	if (in_tagged_allocation && !text)
		optarg = carried;
	status = vnfs_plugin_resolve_tags(text ? text : optarg, getenv_lookup, NULL, options->tags,
					  sizeof(options->tags), error, sizeof(error));
	free(text);
	if (status < 0) {
		slurm_error("vnfs: %s", error);
		return -1;
	}
	/* Said where the user typed the option (slurm_spank_init loaded the
	 * arguments), not only in slurmd.log. */
	if (vnfs_plugin_ignored_tags_warning(args, options->tags, error, sizeof(error))[0])
		slurm_info("vnfs: %s", error);
	/* srun passes its environment to the step: this is how the tags travel. */
	if (setenv(CARRIED_TAGS, options->tags, 1) < 0) {
		slurm_error("vnfs: cannot pass the tags to the job: out of memory");
		return -1;
	}
	return 0;
}

/* Option callbacks get no user pointer: they reach `plugin` by name. */
static int tags_option(int value, const char *optarg, int remote)
{
	struct user_options *options = &plugin.options;

	(void)value;
	if (!optarg)
		optarg = "";
	if (remote) {
		/* Runs twice in slurmstepd: only remember the value. */
		snprintf(options->tags, sizeof(options->tags), "%s", optarg);
	} else if (resolve_typed_tags(&plugin.args, options, optarg) < 0) {
		return -1;
	}
	options->tags_given = true;
	return 0;
}

static int report_option(int value, const char *optarg, int remote)
{
	struct user_options *options = &plugin.options;
	char quoted[64 * VNFS_ESCAPE_GROWTH];

	(void)value;
	(void)remote;
	if (vnfs_report_mode_parse(optarg ? optarg : "", &options->report_mode) < 0) {
		/* The user's bytes, bounded and escaped for the log. */
		slurm_error("vnfs: --vnfs-report: '%s' is not brief, full or none",
			    vnfs_quote_prefix(optarg ? optarg : "", 40, quoted, sizeof(quoted)));
		return -1;
	}
	options->report_given = true;
	return 0;
}

static bool in_slurmstepd(spank_t spank)
{
	return spank_context() == S_CTX_REMOTE && spank_remote(spank);
}

/*
 * The tags the step is registered with: the administrator's envs= variables
 * and, if the step has --vnfs-tags, the text resolved where the user typed
 * it (CARRIED_TAGS).  Should that be missing (a client without the plugin
 * launched the step), NAME-only tags are resolved in the job's environment.
 */
static int step_tags(const struct plugin_state *state, spank_t spank,
		     struct vnfs_tag_list *tags)
{
	struct job_environment *environment = calloc(1, sizeof(*environment));
	char carried[VNFS_TAGS_BUFFER], warning[512], error[768];
	const struct user_options *options = &state->options;
	const char *user_text = options->tags_given ? options->tags : "";
	char *resolved = NULL;
	int status = -1;

	if (!environment) {
		slurm_error("vnfs: out of memory");
		return -1;
	}
	environment->spank = spank;
	if (options->tags_given &&
	    spank_getenv(spank, CARRIED_TAGS, carried, sizeof(carried)) == ESPANK_SUCCESS) {
		user_text = carried;
	} else if (*user_text) {
		resolved = malloc(VNFS_TAGS_BUFFER);
		if (!resolved ||
		    vnfs_plugin_resolve_tags(user_text, job_environment_lookup, environment,
					     resolved, VNFS_TAGS_BUFFER, error, sizeof(error)) < 0) {
			slurm_error("vnfs: %s", resolved ? error : "out of memory");
			goto out;
		}
		user_text = resolved;
	}
	if (vnfs_plugin_collect_tags(&state->args, job_environment_lookup, environment, user_text,
				     tags, warning, sizeof(warning), error, sizeof(error)) < 0) {
		slurm_error("vnfs: %s", error);
		goto out;
	}
	if (warning[0])
		slurm_info("vnfs: %s", warning);
	status = 0;
out:
	free(resolved);
	free(environment);
	return status;
}

/* REGISTER {job, step, uid, cgroup, tags}; waits for the helper's answer. */
static int register_step(struct plugin_state *state, spank_t spank, uint32_t job_id,
			 uint32_t step_id)
{
	const struct vnfs_plugin_args *args = &state->args;
	struct accounted_step *step = &state->step;
	struct vnfs_request *request = calloc(1, sizeof(*request));
	struct vnfs_reply reply;
	char error[512], step_name[32];
	uid_t uid = 0;
	int status = -1;

	vnfs_step_name(step_id, step_name, sizeof(step_name));
	if (!request) {
		slurm_error("vnfs: out of memory");
		return -1;
	}
	if (spank_get_item(spank, S_JOB_UID, &uid) != ESPANK_SUCCESS)
		slurm_info("vnfs: job %u step %s: the job's uid is not available", job_id,
			   step_name);
	request->type = VNFS_REQUEST_REGISTER;
	vnfs_workload_of_slurm_step(&request->workload, job_id, step_id);
	request->uid = (uint32_t)uid;
	request->cgroup_id = step->cgroup.id;
	if (strlen(step->cgroup.relative) >= sizeof(request->cgroup_path)) {
		slurm_error("vnfs: job %u step %s is not accounted: cgroup path %s is too long",
			    job_id, step_name, step->cgroup.relative);
		goto out;
	}
	memcpy(request->cgroup_path, step->cgroup.relative, strlen(step->cgroup.relative) + 1);
	if (step_tags(state, spank, &request->tags) < 0)
		goto out;
	if (vnfs_client_call(args->socket_path, request, args->timeout_ms, &reply,
			     error, sizeof(error)) < 0) {
		slurm_error("vnfs: job %u step %s is not accounted: registration with %s failed: %s",
			    job_id, step_name, args->socket_path, error);
		goto out;
	}
	vnfs_reply_free(&reply);
	step->registered = true;
	step->job_id = job_id;
	step->step_id = step_id;
	status = 0;
out:
	free(request);
	return status;
}

/* Finds or makes the step's cgroup as mode (cgroup=) says, puts pid in it if
 * ours, registers once. */
static int account_step(struct plugin_state *state, spank_t spank, enum vnfs_cgroup_mode mode,
			pid_t pid)
{
	struct accounted_step *step = &state->step;
	uint32_t job_id, step_id;
	char error[768], step_name[32];
	struct timespec start;
	struct vnfs_step_cgroup placed;

	clock_gettime(CLOCK_MONOTONIC, &start);
	if (spank_get_item(spank, S_JOB_ID, &job_id) != ESPANK_SUCCESS ||
	    spank_get_item(spank, S_JOB_STEPID, &step_id) != ESPANK_SUCCESS) {
		slurm_error("vnfs: the job and step ids are not available");
		return -1;
	}
	vnfs_step_name(step_id, step_name, sizeof(step_name));
	if (vnfs_step_cgroup_place(mode, state->args.cgroup_root, pid, job_id, step_id, &placed,
				   error, sizeof(error)) < 0) {
		slurm_error("vnfs: job %u step %s is not accounted: %s", job_id, step_name, error);
		return -1;
	}
	if (!step->cgroup_known) {
		step->cgroup = placed;
		step->cgroup_known = true;
	}
	if (step->registered)
		return 0;
	if (step->registration_failed)
		return -1;
	if (register_step(state, spank, job_id, step_id) < 0) {
		step->registration_failed = true;
		return -1;
	}
	slurm_info("vnfs: job %u step %s registered: cgroup %s%s (id %llu, %s) in %.1f ms", job_id,
		   step_name, step->cgroup.root, step->cgroup.relative,
		   (unsigned long long)step->cgroup.id,
		   step->cgroup.owned ? "created by vnfs" : "Slurm's own",
		   milliseconds_since(&start));
	return 0;
}

/*
 * The extern step (PrologFlags=contain) has no tasks: what runs in it is
 * adopted later (pam_slurm_adopt) into Slurm's own cgroups.  It can only be
 * accounted where Slurm's cgroup/v2 gives it a directory, which slurmstepd
 * itself sits under.  Best effort even with `required`: failing the extern
 * step would fail the job for a step that runs none of its commands.
 */
static int account_extern_step(struct plugin_state *state, spank_t spank, uint32_t job_id)
{
	enum vnfs_cgroup_mode configured = state->args.cgroup;
	struct vnfs_step_cgroup probe;
	char error[768];

	if (configured == VNFS_CGROUP_VNFS) {
		slurm_info("vnfs: job %u step extern is not accounted with cgroup=vnfs", job_id);
		return 0;
	}
	if (configured == VNFS_CGROUP_AUTO &&
	    vnfs_step_cgroup_place(VNFS_CGROUP_SLURM, state->args.cgroup_root, 0, job_id,
				   VNFS_STEP_EXTERN, &probe, error, sizeof(error)) < 0) {
		slurm_info("vnfs: job %u step extern is not accounted: Slurm gives it no cgroup v2 "
			   "directory here", job_id);
		return 0;
	}
	account_step(state, spank, VNFS_CGROUP_SLURM, 0);
	return 0;
}

/* libvnfs logs through vnfs_log(): into Slurm's log, like the plugin itself. */
static void log_to_slurm(enum vnfs_log_priority priority, const char *line)
{
	switch (priority) {
	case VNFS_LOG_PRIORITY_ERROR:
	case VNFS_LOG_PRIORITY_WARNING:
		slurm_error("vnfs: %s", line);
		break;
	case VNFS_LOG_PRIORITY_INFO:
		slurm_info("vnfs: %s", line);
		break;
	default:
		slurm_debug("vnfs: %s", line);
		break;
	}
}

/* slurmstepd, before it forks the tasks: the page of step->unaccounted. */
static void map_unaccounted_page(struct accounted_step *step)
{
	void *page;

	if (step->unaccounted)
		return;
	page = mmap(NULL, sizeof(*step->unaccounted), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		slurm_info("vnfs: no shared page for the tasks (%m): a failed registration "
			   "is returned from task_post_fork");
	else
		step->unaccounted = page;
}

int slurm_spank_init(spank_t spank, int argc, char **argv)
{
	int status = load_arguments(&plugin, argc, argv);
	spank_context_t context = spank_context();

	vnfs_log_set_sink(log_to_slurm);
	if (in_slurmstepd(spank))
		map_unaccounted_page(&plugin.step);

	/* Registered even with bad arguments, so jobs using them still parse. */
	if (context == S_CTX_LOCAL || context == S_CTX_REMOTE || context == S_CTX_ALLOCATOR) {
		if (spank_option_register(spank, &tags_spank_option) != ESPANK_SUCCESS ||
		    spank_option_register(spank, &report_spank_option) != ESPANK_SUCCESS) {
			slurm_error("vnfs: cannot register the --vnfs-tags/--vnfs-report options");
			return -1;
		}
	}
	return status;
}

int slurm_spank_init_post_opt(spank_t spank, int argc, char **argv)
{
	const struct user_options *options = &plugin.options;
	spank_context_t context = spank_context();
	uint32_t job_id, step_id;

	if (load_arguments(&plugin, argc, argv) < 0)
		return -1;
	if ((context == S_CTX_LOCAL || context == S_CTX_ALLOCATOR) && options->tags_given &&
	    spank_job_control_setenv(spank, TAGS_VARIABLE, options->tags, 1) != ESPANK_SUCCESS) {
		slurm_error("vnfs: cannot pass the tags to the job");
		return -1;
	}
	if (in_slurmstepd(spank) &&
	    spank_get_item(spank, S_JOB_ID, &job_id) == ESPANK_SUCCESS &&
	    spank_get_item(spank, S_JOB_STEPID, &step_id) == ESPANK_SUCCESS &&
	    step_id == VNFS_STEP_EXTERN)
		return account_extern_step(&plugin, spank, job_id);
	return 0;
}

int slurm_spank_local_user_init(spank_t spank, int argc, char **argv)
{
	struct reported_step *reported = &plugin.reported;

	(void)argc;
	(void)argv;
	if (spank_get_item(spank, S_JOB_ID, &reported->job_id) == ESPANK_SUCCESS &&
	    spank_get_item(spank, S_JOB_STEPID, &reported->step_id) == ESPANK_SUCCESS)
		reported->known = true;
	return 0;
}

/* Hands the failure to the tasks' task_init (see accounted_step.unaccounted). */
static int step_not_accounted(struct accounted_step *step)
{
	if (!step->unaccounted)
		return -1;
	atomic_store(step->unaccounted, true);
	return 0;
}

int slurm_spank_task_post_fork(spank_t spank, int argc, char **argv)
{
	uint32_t step_id;
	pid_t pid = 0;

	if (load_arguments(&plugin, argc, argv) < 0)
		return -1;
	if (!in_slurmstepd(spank))
		return 0;
	/* The extern step's placeholder task has no pid here: see init_post_opt. */
	if (spank_get_item(spank, S_JOB_STEPID, &step_id) == ESPANK_SUCCESS &&
	    step_id == VNFS_STEP_EXTERN)
		return 0;
	if (spank_get_item(spank, S_TASK_PID, &pid) != ESPANK_SUCCESS || pid <= 0) {
		slurm_error("vnfs: the task's pid is not available");
		return step_not_accounted(&plugin.step);
	}
	if (account_step(&plugin, spank, plugin.args.cgroup, pid) < 0)
		return step_not_accounted(&plugin.step);
	return 0;
}

/* In the task, as the user, before exec: its error stops a `required` step. */
int slurm_spank_task_init(spank_t spank, int argc, char **argv)
{
	const struct accounted_step *step = &plugin.step;

	(void)spank;
	(void)argc;
	(void)argv;
	if (step->unaccounted && atomic_load(step->unaccounted))
		return -1;
	return 0;
}

static void unregister_step(const struct vnfs_plugin_args *args,
			    const struct accounted_step *step)
{
	struct vnfs_request request = { 0 };
	struct vnfs_reply reply;
	char error[512], step_name[32];

	request.type = VNFS_REQUEST_UNREGISTER;
	vnfs_workload_of_slurm_step(&request.workload, step->job_id, step->step_id);
	if (vnfs_client_call(args->socket_path, &request, args->timeout_ms, &reply,
			     error, sizeof(error)) < 0) {
		slurm_error("vnfs: job %u step %s: unregistration failed: %s", step->job_id,
			    vnfs_step_name(step->step_id, step_name, sizeof(step_name)), error);
		return;
	}
	vnfs_reply_free(&reply);
}

/* slurmstepd, at the step's end: unregister, remove our cgroup, unmap. */
static void end_accounted_step(const struct vnfs_plugin_args *args, struct accounted_step *step)
{
	char error[768];

	if (step->registered)
		unregister_step(args, step);
	if (step->cgroup_known &&
	    vnfs_step_cgroup_remove(&step->cgroup, REMOVE_WAIT_MS, error, sizeof(error)) < 0)
		slurm_error("vnfs: %s", error);
	if (step->unaccounted && munmap(step->unaccounted, sizeof(*step->unaccounted)) < 0)
		slurm_error("vnfs: munmap: %m");
	step->unaccounted = NULL;
}

/* srun: the step's summary on the user's terminal. */
static void print_report(const struct vnfs_plugin_args *args,
			 const struct reported_step *reported, enum vnfs_report_mode mode)
{
	struct vnfs_request request = { 0 };
	struct vnfs_reply reply;
	struct vnfs_job job;
	char error[512], *text;
	const size_t text_size = 8192;

	request.type = VNFS_REQUEST_QUERY;
	vnfs_workload_of_slurm_step(&request.workload, reported->job_id, reported->step_id);
	if (vnfs_client_call(args->socket_path, &request, args->timeout_ms, &reply,
			     error, sizeof(error)) < 0) {
		fprintf(stderr, "vnfs: no report for job %u: %s\n", reported->job_id, error);
		return;
	}
	text = malloc(text_size);
	vnfs_owned_job_view(&reply.job, &job);
	if (!text)
		fprintf(stderr, "vnfs: no report: out of memory\n");
	else if (vnfs_step_report_format(&job, reported->step_id, mode, text, text_size, error,
					 sizeof(error)) < 0)
		fprintf(stderr, "vnfs: no report for job %u: %s\n", reported->job_id, error);
	else
		fputs(text, stderr);
	free(text);
	vnfs_reply_free(&reply);
}

int slurm_spank_exit(spank_t spank, int argc, char **argv)
{
	const struct user_options *options = &plugin.options;
	enum vnfs_report_mode mode;

	if (load_arguments(&plugin, argc, argv) < 0)
		return -1;
	if (in_slurmstepd(spank)) {
		end_accounted_step(&plugin.args, &plugin.step);
		return 0;
	}
	if (spank_context() == S_CTX_LOCAL && plugin.reported.known) {
		/* --vnfs-report wins over the site's report= default. */
		mode = options->report_given ? options->report_mode : plugin.args.report;
		if (mode != VNFS_REPORT_NONE)
			print_report(&plugin.args, &plugin.reported, mode);
	}
	return 0;
}

int slurm_spank_job_epilog(spank_t spank, int argc, char **argv)
{
	const struct vnfs_plugin_args *args = &plugin.args;
	struct vnfs_request request = { 0 };
	struct vnfs_reply reply;
	char error[512];
	uint32_t job_id;

	if (load_arguments(&plugin, argc, argv) < 0)
		return -1;
	if (spank_get_item(spank, S_JOB_ID, &job_id) != ESPANK_SUCCESS) {
		slurm_error("vnfs: epilog: the job id is not available");
		return -1;
	}
	request.type = VNFS_REQUEST_FINISH;
	vnfs_workload_of_slurm_job(&request.workload, job_id);
	snprintf(request.report_dir, sizeof(request.report_dir), "%s", args->report_dir);
	if (vnfs_client_call(args->socket_path, &request, args->timeout_ms, &reply,
			     error, sizeof(error)) < 0) {
		/* An epilog error would drain the node: only say it. */
		slurm_error("vnfs: job %u: finishing with the helper failed: %s", job_id, error);
		return 0;
	}
	vnfs_reply_free(&reply);
	return 0;
}
