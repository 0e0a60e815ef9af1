/*
 * discovery.c — containers found by the helper itself (see discovery.h):
 * judging the cgroups of unattributed rows, registering the containers
 * among them with their first calls folded in, ending them and finishing
 * their pods (or themselves, a podman or Docker container) when their
 * cgroups are gone.
 */
#include "helper/discover/discovery.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"

/* Docker's directory under its data root, after the others. */
static void add_docker_dir(struct vnfs_discovery *discovery, const char *data_root)
{
	if (data_root[0] == '\0')
		return;
	if (vnfs_docker_state_dir(data_root, &discovery->dirs[discovery->dir_count],
				  discovery->docker_dir, sizeof(discovery->docker_dir)) != 0) {
		vnfs_warning("[containers] docker_data_root %s: too long a path: Docker "
			     "containers are not identified", data_root);
		return;
	}
	discovery->dir_count++;
}

/* The runtimes' directories given, then podman's under its store, then
 * Docker's. */
static int add_dirs(struct vnfs_discovery *discovery, const struct vnfs_config *config,
		    const struct vnfs_runtime_state_dir *dirs, size_t count)
{
	static const char *const drivers[] = {
#define VNFS_STORAGE_DRIVER_NAME(name) name,
		VNFS_STORAGE_DRIVERS(VNFS_STORAGE_DRIVER_NAME)
#undef VNFS_STORAGE_DRIVER_NAME
	};
	const char *graphroot = config->containers.podman_storage;

	_Static_assert(sizeof(drivers) / sizeof(drivers[0]) == VNFS_DISCOVERY_PODMAN_DIRS,
		       "a directory per storage driver");
	if (count > VNFS_DISCOVERY_MAX_DIRS - VNFS_DISCOVERY_ENGINE_DIRS)
		return -1;
	if (count > 0)
		memcpy(discovery->dirs, dirs, count * sizeof(*dirs));
	discovery->dir_count = count;
	for (size_t i = 0; graphroot[0] != '\0' && i < VNFS_DISCOVERY_PODMAN_DIRS; i++) {
		if (vnfs_podman_state_dir(graphroot, drivers[i], &discovery->dirs[count],
					  discovery->podman_dirs[i],
					  sizeof(discovery->podman_dirs[i])) != 0) {
			vnfs_warning("[containers] podman_storage %s: too long a path: podman "
				     "containers are not identified", graphroot);
			break;
		}
		discovery->dir_count = ++count;
	}
	add_docker_dir(discovery, config->containers.docker_data_root);
	return 0;
}

int vnfs_discovery_init(struct vnfs_discovery *discovery, const struct vnfs_config *config,
			struct vnfs_steps *steps, vnfs_finish_job_fn finish_job,
			void *finish_context, const struct vnfs_runtime_state_dir *dirs,
			size_t count, const char *cgroup_mount)
{
	char mount[1024];

	memset(discovery, 0, sizeof(*discovery));
	discovery->cgroup_root_fd = -1;
	discovery->steps = steps;
	discovery->finish_job = finish_job;
	discovery->finish_context = finish_context;
	if (add_dirs(discovery, config, dirs, count) != 0)
		return -1;
	for (size_t i = 0; i < config->containers.tag_variable_count; i++)
		discovery->tag_variables[i] = config->containers.tag_variables[i];
	discovery->tag_variable_count = config->containers.tag_variable_count;
	if (!config->containers.discover)
		return 0;
	if (cgroup_mount == NULL && vnfs_cgroup2_mount(mount, sizeof(mount)) == 0)
		cgroup_mount = mount;
	if (cgroup_mount != NULL) {
		discovery->cgroup_root_fd =
			open(cgroup_mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		snprintf(discovery->cgroup_mount, sizeof(discovery->cgroup_mount), "%s",
			 cgroup_mount);
	}
	if (discovery->cgroup_root_fd < 0) {
		vnfs_warning("no cgroup2 hierarchy: containers are not discovered ([containers] "
			     "discover)");
		return 0;
	}
	discovery->pods = calloc(VNFS_DISCOVERY_MAX_PODS, sizeof(*discovery->pods));
	discovery->known = calloc(VNFS_DISCOVERY_MAX_KNOWN, sizeof(*discovery->known));
	discovery->followed = calloc(VNFS_MAX_STEPS, sizeof(*discovery->followed));
	if (discovery->pods == NULL || discovery->known == NULL || discovery->followed == NULL) {
		free(discovery->pods);
		free(discovery->known);
		free(discovery->followed);
		close(discovery->cgroup_root_fd);
		discovery->cgroup_root_fd = -1;
		return -1;
	}
	discovery->enabled = true;
	return 0;
}

void vnfs_discovery_destroy(struct vnfs_discovery *discovery)
{
	if (discovery->steps == NULL) /* never set up: a start that failed before */
		return;
	if (discovery->cgroup_root_fd >= 0)
		close(discovery->cgroup_root_fd);
	free(discovery->judged);
	free(discovery->pods);
	free(discovery->known);
	free(discovery->followed);
	memset(discovery, 0, sizeof(*discovery));
	discovery->cgroup_root_fd = -1;
}

/* ---- the cgroups of unattributed rows ---- */

/* A cgroup some unattributed row counts, and the uid of its first row. */
struct seen_cgroup {
	uint64_t id;
	uint32_t uid;
};

struct seen_cgroups {
	struct seen_cgroup *cgroups;
	size_t count;
};

static int note_row(const struct vnfs_unattributed_key *key,
		    const struct vnfs_unattributed_stats *stats, void *context)
{
	struct seen_cgroups *seen = context;

	(void)stats;
	/* Id 0 holds the per-uid [other] and [expired] rows: no cgroup's;
	 * an environment job's id is none either (environment_jobs.h). */
	if (key->cgroup_id == 0 || VNFS_IS_ENVIRONMENT_JOB(key->cgroup_id) ||
	    seen->count == VNFS_DISCOVERY_MAX_CGROUPS)
		return 0;
	seen->cgroups[seen->count++] = (struct seen_cgroup){ key->cgroup_id, key->uid };
	return 0;
}

static int by_id(const void *left, const void *right)
{
	uint64_t a = *(const uint64_t *)left, b = *(const uint64_t *)right;

	return a < b ? -1 : a > b;
}

_Static_assert(offsetof(struct seen_cgroup, id) == 0, "seen cgroups sort by id");
_Static_assert(offsetof(struct vnfs_discovery_cgroup, id) == 0, "judged cgroups sort by id");

/* The distinct cgroups of the unattributed rows, sorted; the first row's
 * uid with each.  Returns how many, or -1 when the rows cannot be read. */
static long seen_cgroups(struct vnfs_discovery *discovery, struct seen_cgroups *seen)
{
	const struct vnfs_counter_source *source = &discovery->steps->source;
	size_t kept = 0;

	if (source->for_each_unattributed(source->context, note_row, seen) != 0)
		return -1;
	qsort(seen->cgroups, seen->count, sizeof(*seen->cgroups), by_id);
	for (size_t i = 0; i < seen->count; i++)
		if (kept == 0 || seen->cgroups[kept - 1].id != seen->cgroups[i].id)
			seen->cgroups[kept++] = seen->cgroups[i];
	seen->count = kept;
	return (long)kept;
}

static const struct vnfs_discovery_cgroup *last_verdict(const struct vnfs_discovery *discovery,
							uint64_t id)
{
	if (discovery->judged_count == 0) /* judged is NULL before the first pass */
		return NULL;
	return bsearch(&id, discovery->judged, discovery->judged_count,
		       sizeof(*discovery->judged), by_id);
}

/* ---- registering a container ---- */

/*
 * path relative to the cgroup2 mount.  Discovery registers its containers
 * so; a hook's REGISTER gives the path from the filesystem's root, under
 * the mount, and a parent read from that as it is would look gone.
 */
static const char *under_mount(const struct vnfs_discovery *discovery, const char *path)
{
	size_t length = strlen(discovery->cgroup_mount);

	if (length > 1 && strncmp(path, discovery->cgroup_mount, length) == 0 &&
	    path[length] == '/')
		return path + length;
	return path;
}

/* Remembers the pod of a container at path (its cgroup's parent), once.
 * From the path, not the cgroup's id: the container may be gone already. */
static void await_pod(struct vnfs_discovery *discovery, const struct vnfs_workload *container,
		      const char *path)
{
	struct vnfs_discovery_pod pod = { .job = *container };
	const char *slash;

	pod.job.part[0] = '\0';
	path = under_mount(discovery, path);
	slash = strrchr(path, '/');
	if (slash == NULL || slash == path || (size_t)(slash - path) >= sizeof(pod.path))
		return;
	memcpy(pod.path, path, (size_t)(slash - path));
	for (size_t i = 0; i < discovery->pod_count; i++)
		if (vnfs_workload_compare(&discovery->pods[i].job, &pod.job) == 0)
			return;
	if (discovery->pod_count == VNFS_DISCOVERY_MAX_PODS) {
		vnfs_warning("%s: more than %d pods awaited at once: it is not finished when its "
			     "cgroup goes", pod.job.job, VNFS_DISCOVERY_MAX_PODS);
		return;
	}
	discovery->pods[discovery->pod_count++] = pod;
}

/* Registers the container of step (identified) and folds its first calls
 * in.  Returns its verdict. */
static enum vnfs_discovery_verdict register_container(struct vnfs_discovery *discovery,
						      const struct vnfs_step *step)
{
	const struct vnfs_counter_source *source = &discovery->steps->source;
	char error[512], name[VNFS_WORKLOAD_DESCRIPTION_MAX];
	uint64_t calls = 0;
	uint32_t slot;

	vnfs_workload_describe(&step->workload, name, sizeof(name));
	if (vnfs_steps_register(discovery->steps, step, &slot, error, sizeof(error)) != 0) {
		vnfs_warning("discovered %s, not registered: %s", name, error);
		return VNFS_DISCOVERY_FAILED;
	}
	discovery->containers_registered++;
	if (step->workload.source == VNFS_SOURCE_KUBERNETES)
		await_pod(discovery, &step->workload, step->cgroup_path);
	errno = EOPNOTSUPP; /* a source that cannot fold */
	if (source->fold_unattributed == NULL ||
	    source->fold_unattributed(source->context, step->cgroup_id, slot, &calls) != 0) {
		vnfs_warning("%s: its calls before it was discovered stay unattributed (%s)", name,
			     strerror(errno));
		return VNFS_DISCOVERY_REGISTERED;
	}
	discovery->calls_folded += calls;
	vnfs_info("discovered %s: its %llu calls before that are folded into it", name,
		  (unsigned long long)calls);
	return VNFS_DISCOVERY_REGISTERED;
}

/* The container known since its cgroup was made, or NULL. */
static struct vnfs_discovery_known *known_container(struct vnfs_discovery *discovery,
						    uint64_t id)
{
	for (size_t i = 0; i < discovery->known_count; i++)
		if (discovery->known[i].id == id)
			return &discovery->known[i];
	return NULL;
}

static void forget_known(struct vnfs_discovery *discovery, struct vnfs_discovery_known *known)
{
	*known = discovery->known[--discovery->known_count];
}

/*
 * The container whose cgroup is at path (the cgroup of id), into *step.
 * Returns 1, 0 when it is no container, or -1 (logged: its state is not
 * to trust or read).
 */
static int identify(struct vnfs_discovery *discovery, const char *path, struct vnfs_step *step)
{
	char error[512];
	int identified;

	if (strlen(path) >= sizeof(step->cgroup_path))
		return 0;
	identified = vnfs_identify_container(path, discovery->dirs, discovery->dir_count,
					     discovery->tag_variables,
					     discovery->tag_variable_count, &step->workload,
					     &step->tags, error, sizeof(error));
	if (identified < 0)
		vnfs_warning("cgroup %s: not identified: %s", path, error);
	if (identified == 1)
		snprintf(step->cgroup_path, sizeof(step->cgroup_path), "%s", path);
	return identified;
}

/* Judges one cgroup not judged before.  Returns its verdict. */
static enum vnfs_discovery_verdict judge(struct vnfs_discovery *discovery,
					 const struct seen_cgroup *cgroup, int64_t now_ms)
{
	struct vnfs_step step = { .uid = cgroup->uid, .cgroup_id = cgroup->id,
				  .start_time_ms = now_ms };
	struct vnfs_discovery_known *known = known_container(discovery, cgroup->id);
	char path[VNFS_CONTAINER_CGROUP_PATH_MAX], error[512];
	enum vnfs_discovery_verdict verdict;
	int identified;

	if (known != NULL) {
		/* Identified as it was made: its cgroup may be gone by now. */
		step.workload = known->workload;
		step.tags = known->tags;
		snprintf(step.cgroup_path, sizeof(step.cgroup_path), "%s", known->path);
		verdict = register_container(discovery, &step);
		if (verdict == VNFS_DISCOVERY_REGISTERED)
			discovery->containers_known_early++;
		forget_known(discovery, known);
		return verdict;
	}
	/* Gone (its rows expire with the others): no container, for good. */
	if (vnfs_cgroup_path_of_id(discovery->cgroup_root_fd, cgroup->id, path, sizeof(path),
				   error, sizeof(error)) != 0)
		return VNFS_DISCOVERY_NOT_CONTAINER;
	identified = identify(discovery, path, &step);
	if (identified < 0)
		return VNFS_DISCOVERY_FAILED;
	return identified == 0 ? VNFS_DISCOVERY_NOT_CONTAINER : register_container(discovery, &step);
}

/* ---- cgroups as they are made ---- */

/* The path of the cgroup of id, made a moment ago.  The tracepoint fires
 * before the kernel activates the cgroup's directory, and until then its
 * id opens nothing (ESTALE): tried again every 200 us while this take's
 * waits last.  Returns 0, -1 when it cannot be opened (yet), -2 when it is
 * gone or has no path. */
static int path_of_made(struct vnfs_discovery *discovery, uint64_t id, char *path, size_t size)
{
	struct timespec pause = { 0, 200 * 1000 };
	char error[512];

	for (;;) {
		if (vnfs_cgroup_path_of_id(discovery->cgroup_root_fd, id, path, size, error,
					   sizeof(error)) == 0)
			return 0;
		if (errno != ESTALE)
			return -2;
		if (discovery->waits_left == 0)
			return -1;
		discovery->waits_left--;
		nanosleep(&pause, NULL);
	}
}

/* Judges a cgroup just made: a container is remembered until its first
 * calls.  Returns 1 when it could not be opened yet (try again later). */
static int judge_made(struct vnfs_discovery *discovery, uint64_t id)
{
	struct vnfs_discovery_known *known;
	char path[VNFS_CONTAINER_CGROUP_PATH_MAX], name[VNFS_WORKLOAD_DESCRIPTION_MAX];
	struct vnfs_step step = { .cgroup_id = id };
	int found = path_of_made(discovery, id, path, sizeof(path));

	if (found == -1)
		return 1;
	/* Gone already, or no container (most cgroups made: pods' levels,
	 * services, sessions): nothing to remember. */
	if (found != 0 || identify(discovery, path, &step) != 1 ||
	    known_container(discovery, id) != NULL)
		return 0;
	if (discovery->known_count == VNFS_DISCOVERY_MAX_KNOWN) {
		vnfs_warning("%s: %d containers known and not yet registered: it is found by its "
			     "calls instead", vnfs_workload_describe(&step.workload, name,
								     sizeof(name)),
			     VNFS_DISCOVERY_MAX_KNOWN);
		return 0;
	}
	known = &discovery->known[discovery->known_count++];
	*known = (struct vnfs_discovery_known){ .id = id, .workload = step.workload,
						.tags = step.tags };
	snprintf(known->path, sizeof(known->path), "%s", step.cgroup_path);
	vnfs_info("cgroup %s made: %s, registered at its first call", path,
		  vnfs_workload_describe(&step.workload, name, sizeof(name)));
	return 0;
}

static int note_new_cgroup(uint64_t id, void *context)
{
	struct vnfs_discovery *discovery = context;

	if (judge_made(discovery, id) == 1 &&
	    discovery->unopened_count < VNFS_DISCOVERY_MAX_UNOPENED)
		discovery->unopened[discovery->unopened_count++] = id;
	return 0;
}

/* The cgroups made that could not be opened yet, tried again; with
 * drop_unopened (a pass, an interval after), those still unopenable go. */
static void retry_unopened(struct vnfs_discovery *discovery, bool drop_unopened)
{
	size_t kept = 0;

	for (size_t i = 0; i < discovery->unopened_count; i++)
		if (judge_made(discovery, discovery->unopened[i]) == 1 && !drop_unopened)
			discovery->unopened[kept++] = discovery->unopened[i];
	discovery->unopened_count = kept;
}

void vnfs_discovery_take_new_cgroups(struct vnfs_discovery *discovery)
{
	const struct vnfs_counter_source *source;

	if (!discovery->enabled)
		return;
	discovery->waits_left = VNFS_DISCOVERY_WAIT_PER_TAKE;
	retry_unopened(discovery, false);
	source = &discovery->steps->source;
	if (source->for_each_new_cgroup != NULL &&
	    source->for_each_new_cgroup(source->context, note_new_cgroup, discovery) != 0)
		vnfs_warning("reading the cgroups made failed: containers among them are found "
			     "by their calls");
}

int vnfs_discovery_fd(const struct vnfs_discovery *discovery)
{
	const struct vnfs_counter_source *source;

	if (!discovery->enabled)
		return -1;
	source = &discovery->steps->source;
	return source->new_cgroups_fd ? source->new_cgroups_fd(source->context) : -1;
}

/* Forgets the known containers whose cgroup is gone without a call: none
 * will come (a cgroup's id is never reused). */
static void forget_gone_known(struct vnfs_discovery *discovery)
{
	for (size_t i = 0; i < discovery->known_count;) {
		if (vnfs_cgroup_gone(discovery->cgroup_root_fd, discovery->known[i].id))
			forget_known(discovery, &discovery->known[i]);
		else
			i++;
	}
}

/* Judges the cgroups of this pass's unattributed rows that the last pass
 * did not (or failed to, a while ago), and keeps the verdicts. */
static void judge_new_cgroups(struct vnfs_discovery *discovery, int64_t now_ms)
{
	struct seen_cgroups seen = { calloc(VNFS_DISCOVERY_MAX_CGROUPS, sizeof(*seen.cgroups)), 0 };
	struct vnfs_discovery_cgroup *judged;

	if (seen.cgroups == NULL || seen_cgroups(discovery, &seen) < 0) {
		free(seen.cgroups);
		return; /* the collector logs unreadable rows */
	}
	judged = calloc(seen.count ? seen.count : 1, sizeof(*judged));
	if (judged == NULL) {
		free(seen.cgroups);
		return;
	}
	for (size_t i = 0; i < seen.count; i++) {
		const struct vnfs_discovery_cgroup *before =
			last_verdict(discovery, seen.cgroups[i].id);

		if (before != NULL && (before->verdict != VNFS_DISCOVERY_FAILED ||
				       now_ms - before->judged_ms < VNFS_DISCOVERY_RETRY_MS)) {
			judged[i] = *before;
			continue;
		}
		judged[i] = (struct vnfs_discovery_cgroup){
			.id = seen.cgroups[i].id,
			.verdict = judge(discovery, &seen.cgroups[i], now_ms),
			.judged_ms = now_ms,
		};
	}
	free(discovery->judged);
	discovery->judged = judged; /* in id order, as seen */
	discovery->judged_count = seen.count;
	free(seen.cgroups);
}

/* ---- ends ---- */

struct followed_steps {
	struct vnfs_discovery_step *steps;
	size_t count;
};

static void note_followed_step(const struct vnfs_step *step, uint32_t slot, void *context)
{
	struct followed_steps *found = context;

	(void)slot;
	if ((step->workload.source != VNFS_SOURCE_KUBERNETES &&
	     step->workload.source != VNFS_SOURCE_CONTAINER) ||
	    found->count == VNFS_MAX_STEPS)
		return;
	found->steps[found->count++] = (struct vnfs_discovery_step){
		.workload = step->workload,
		.state = step->state,
		.cgroup_id = step->cgroup_id,
	};
	snprintf(found->steps[found->count - 1].cgroup_path,
		 sizeof(found->steps[found->count - 1].cgroup_path), "%s", step->cgroup_path);
}

/* 1 when the directory at path (relative to the cgroup2 mount) is gone. */
static int path_gone(const struct vnfs_discovery *discovery, const char *path)
{
	struct stat status;

	if (path[0] != '/' || path[1] == '\0')
		return 0;
	return fstatat(discovery->cgroup_root_fd, path + 1, &status, AT_SYMLINK_NOFOLLOW) != 0 &&
	       errno == ENOENT;
}

/* Finishes job now (its cgroup is gone and it runs no step). */
static void finish(struct vnfs_discovery *discovery, const struct vnfs_workload *job,
		   int64_t now_ms)
{
	char error[512], name[VNFS_WORKLOAD_DESCRIPTION_MAX];

	vnfs_workload_describe(job, name, sizeof(name));
	/* A pod its hooks finished already is known no more: not news. */
	if (discovery->finish_job(discovery->finish_context, job, now_ms, error,
				  sizeof(error)) < 0) {
		vnfs_debug("%s: its cgroup is gone; not finished: %s", name, error);
		return;
	}
	discovery->pods_finished++;
	vnfs_info("%s finished: its cgroup is gone", name);
}

/* Ends each running step whose cgroup is gone, and finishes a plain
 * container's job with it; remembers the pods of the others (after a
 * restart, the registry's are awaited again). */
static void end_gone_steps(struct vnfs_discovery *discovery, struct followed_steps *found,
			   int64_t now_ms)
{
	char name[VNFS_WORKLOAD_DESCRIPTION_MAX];

	for (size_t i = 0; i < found->count; i++) {
		struct vnfs_discovery_step *step = &found->steps[i];
		bool kubernetes = step->workload.source == VNFS_SOURCE_KUBERNETES;

		if (step->state != VNFS_STEP_RUNNING)
			continue;
		if (kubernetes && step->workload.part[0] != '\0')
			await_pod(discovery, &step->workload, step->cgroup_path);
		if (!vnfs_cgroup_gone(discovery->cgroup_root_fd, step->cgroup_id) ||
		    vnfs_steps_end(discovery->steps, &step->workload, now_ms) != 0)
			continue;
		vnfs_info("%s ended: its cgroup is gone",
			  vnfs_workload_describe(&step->workload, name, sizeof(name)));
		step->state = VNFS_STEP_ENDED;
		if (!kubernetes) {
			struct vnfs_workload job = step->workload;

			job.part[0] = '\0';
			finish(discovery, &job, now_ms);
		}
	}
}

static bool pod_running(const struct followed_steps *found, const struct vnfs_workload *job)
{
	for (size_t i = 0; i < found->count; i++)
		if (found->steps[i].state == VNFS_STEP_RUNNING &&
		    vnfs_workload_same_job(&found->steps[i].workload, job))
			return true;
	return false;
}

/* Finishes each awaited pod whose cgroup is gone and that runs no step. */
static void finish_gone_pods(struct vnfs_discovery *discovery,
			     const struct followed_steps *found, int64_t now_ms)
{
	size_t kept = 0;

	for (size_t i = 0; i < discovery->pod_count; i++) {
		struct vnfs_discovery_pod *pod = &discovery->pods[i];

		if (pod_running(found, &pod->job) || path_gone(discovery, pod->path) != 1)
			discovery->pods[kept++] = *pod;
		else
			finish(discovery, &pod->job, now_ms);
	}
	discovery->pod_count = kept;
}

static void follow_ends(struct vnfs_discovery *discovery, int64_t now_ms)
{
	struct followed_steps found = { discovery->followed, 0 };

	/* Copied out first: nothing is called under the registry's lock. */
	vnfs_registry_visit(discovery->steps->registry, note_followed_step, &found, NULL);
	end_gone_steps(discovery, &found, now_ms);
	finish_gone_pods(discovery, &found, now_ms);
}

void vnfs_discovery_run(struct vnfs_discovery *discovery, int64_t now_ms)
{
	if (!discovery->enabled)
		return;
	/* First: a container made and gone since the last look is known. */
	vnfs_discovery_take_new_cgroups(discovery);
	discovery->waits_left = 0;
	retry_unopened(discovery, true);
	judge_new_cgroups(discovery, now_ms);
	forget_gone_known(discovery);
	follow_ends(discovery, now_ms);
}
