/*
 * bench_registry.c — where a REGISTER's time goes on the helper's side,
 * without probes (they cannot attach everywhere): the registry alone, and
 * the registry behind the real socket server with one connection per step,
 * as the SPANK plugin makes them.
 *
 *   bench_registry [-n STEPS] [-d STATE_DIR]
 *
 * Prints, for STEPS registrations into an empty persisted registry in
 * STATE_DIR (default: a new directory under /tmp, removed afterwards):
 *   registry     vnfs_registry_add alone, mean and max µs per step
 *   end+release  vnfs_registry_end then vnfs_registry_release of each
 *   socket       REGISTER through vnfs_server + vnfs_client_call, per step
 *   load         vnfs_registry_load of what the socket run left
 * and the size of the state files.  The socket handler does what
 * handle_register in helper/control/requests.c does, less the BPF map update and the
 * log line.
 */
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "helper/steps/registry.h"
#include "helper/control/server.h"
#include "lib/log.h"
#include "lib/client.h"

struct timing {
	double total_us;
	double max_us;
};

static double now_us(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)now.tv_sec * 1e6 + (double)now.tv_nsec / 1e3;
}

static void account(struct timing *timing, double started_us)
{
	double spent = now_us() - started_us;

	timing->total_us += spent;
	if (spent > timing->max_us)
		timing->max_us = spent;
}

static void report(const char *what, const struct timing *timing, unsigned count)
{
	printf("%-12s %5u steps: %9.1f us per step (max %9.1f us), %8.1f ms in all\n", what, count,
	       timing->total_us / count, timing->max_us, timing->total_us / 1000);
}

static struct vnfs_step make_step(uint32_t job, uint32_t step_id)
{
	struct vnfs_step step = { 0 };
	char error[256];

	vnfs_workload_of_slurm_step(&step.workload, job, step_id);
	/* Each job its own user's: one user may hold max_steps_per_user (512). */
	step.uid = job;
	step.cgroup_id = 100000 + (uint64_t)job * 1000 + step_id;
	step.start_time_ms = 1700000000000;
	snprintf(step.cgroup_path, sizeof(step.cgroup_path),
		 "/sys/fs/cgroup/system.slice/slurmstepd.scope/job_%u/step_%u", job, step_id);
	vnfs_tags_init(&step.tags);
	if (vnfs_tags_set(&step.tags, "PROJECT_NAME", "alpha", error, sizeof(error)) != 0)
		fprintf(stderr, "bench_registry: %s\n", error);
	return step;
}

static int handle(void *context, const struct vnfs_request *request,
		  const struct vnfs_peer *peer, struct vnfs_answer *answer)
{
	struct vnfs_registry *registry = context;
	struct vnfs_step step = { 0 };
	char error[512];
	uint32_t slot;

	(void)peer;
	if (request->type != VNFS_REQUEST_REGISTER) {
		vnfs_reply_fail(&answer->reply, "only REGISTER here");
		return 0;
	}
	step.workload = request->workload;
	step.uid = request->uid;
	step.cgroup_id = request->cgroup_id;
	step.tags = request->tags;
	step.start_time_ms = 1700000000000;
	snprintf(step.cgroup_path, sizeof(step.cgroup_path), "%s", request->cgroup_path);
	if (vnfs_registry_add(registry, &step, &slot, error, sizeof(error)) != 0)
		vnfs_reply_fail(&answer->reply, "%s", error);
	else
		answer->reply.slot = slot;
	return 0;
}

static int run_registry(const char *state_dir, unsigned count)
{
	struct vnfs_registry *registry = malloc(sizeof(*registry));
	struct timing adding = { 0 }, ending = { 0 };
	char error[512];
	uint32_t slot;

	if (registry == NULL || vnfs_registry_init(registry, state_dir, error, sizeof(error)) != 0) {
		fprintf(stderr, "bench_registry: %s\n", registry ? error : "out of memory");
		free(registry);
		return -1;
	}
	for (unsigned i = 0; i < count; i++) {
		struct vnfs_step step = make_step(1 + i / 100, i % 100);
		double started = now_us();

		if (vnfs_registry_add(registry, &step, &slot, error, sizeof(error)) != 0) {
			fprintf(stderr, "bench_registry: step %u: %s\n", i, error);
			break;
		}
		account(&adding, started);
	}
	for (unsigned i = 0; i < count; i++) {
		double started = now_us();
		struct vnfs_workload workload;
		int ended;

		vnfs_workload_of_slurm_step(&workload, 1 + i / 100, i % 100);
		ended = vnfs_registry_end(registry, &workload, 1700000001000);

		if (ended >= 0)
			vnfs_registry_release(registry, (uint32_t)ended);
		account(&ending, started);
	}
	report("registry", &adding, count);
	report("end+release", &ending, count);
	vnfs_registry_destroy(registry);
	free(registry);
	return 0;
}

static int run_socket(const char *state_dir, unsigned count)
{
	struct vnfs_registry *registry = malloc(sizeof(*registry));
	struct vnfs_server *server = NULL;
	struct timing calling = { 0 };
	char socket_path[300], error[512];
	struct vnfs_server_options options = { .socket_mode = 0600 };
	double started;
	int status = -1;

	snprintf(socket_path, sizeof(socket_path), "%s/vnfs.sock", state_dir);
	options.socket_path = socket_path;
	if (registry == NULL || vnfs_registry_init(registry, state_dir, error, sizeof(error)) != 0) {
		fprintf(stderr, "bench_registry: %s\n", registry ? error : "out of memory");
		free(registry);
		return -1;
	}
	if (vnfs_server_start(&server, &options, handle, registry, error, sizeof(error)) != 0) {
		fprintf(stderr, "bench_registry: %s\n", error);
		goto out;
	}
	for (unsigned i = 0; i < count; i++) {
		struct vnfs_step step = make_step(1001 + i / 100, i % 100);
		struct vnfs_request request = {
			.type = VNFS_REQUEST_REGISTER,
			.workload = step.workload,
			.uid = step.uid,
			.cgroup_id = step.cgroup_id,
			.tags = step.tags,
		};
		struct vnfs_reply reply;

		snprintf(request.cgroup_path, sizeof(request.cgroup_path), "%s", step.cgroup_path);
		started = now_us();
		if (vnfs_client_call(socket_path, &request, 10000, &reply, error, sizeof(error)) != 0) {
			fprintf(stderr, "bench_registry: REGISTER %u: %s\n", i, error);
			goto out;
		}
		account(&calling, started);
		vnfs_reply_free(&reply);
	}
	report("socket", &calling, count);
	status = 0;
out:
	vnfs_server_stop(server);
	vnfs_registry_destroy(registry);
	free(registry);
	return status;
}

/* What a restarted helper does first: read back what the socket run left. */
static int run_load(const char *state_dir, unsigned count)
{
	struct vnfs_registry *registry = malloc(sizeof(*registry));
	char error[512];
	double started;
	int status = -1;

	if (registry == NULL || vnfs_registry_init(registry, state_dir, error, sizeof(error)) != 0) {
		fprintf(stderr, "bench_registry: %s\n", registry ? error : "out of memory");
		free(registry);
		return -1;
	}
	started = now_us();
	if (vnfs_registry_load(registry, error, sizeof(error)) != 0)
		fprintf(stderr, "bench_registry: load: %s\n", error);
	else
		status = registry->used == count ? 0 : -1;
	printf("load         %5u steps back in %.1f ms\n", registry->used, (now_us() - started) / 1000);
	vnfs_registry_destroy(registry);
	free(registry);
	return status;
}

static void remove_directory(const char *path, bool list)
{
	DIR *directory = opendir(path);
	struct dirent *entry;
	char file[600];
	struct stat status;

	if (directory == NULL)
		return;
	while ((entry = readdir(directory)) != NULL) {
		if (entry->d_name[0] == '.')
			continue;
		snprintf(file, sizeof(file), "%s/%s", path, entry->d_name);
		if (list && stat(file, &status) == 0)
			printf("state file   %s: %lld bytes\n", entry->d_name, (long long)status.st_size);
		unlink(file);
	}
	closedir(directory);
	rmdir(path);
}

int main(int argc, char **argv)
{
	char template[] = "/tmp/vnfs-bench-registry-XXXXXX";
	const char *state_dir = NULL;
	unsigned count = 1000;
	int option, status;

	while ((option = getopt(argc, argv, "n:d:")) != -1) {
		switch (option) {
		case 'n':
			count = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'd':
			state_dir = optarg;
			break;
		default:
			fprintf(stderr, "usage: bench_registry [-n STEPS] [-d STATE_DIR]\n");
			return 2;
		}
	}
	if (count == 0 || count > VNFS_MAX_STEPS) {
		fprintf(stderr, "bench_registry: -n: 1 to %u steps\n", VNFS_MAX_STEPS);
		return 2;
	}
	if (state_dir == NULL && (state_dir = mkdtemp(template)) == NULL) {
		fprintf(stderr, "bench_registry: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	vnfs_log_setup("bench_registry", VNFS_LOG_PRIORITY_WARNING, 0);
	status = run_registry(state_dir, count) == 0 && run_socket(state_dir, count) == 0 &&
		 run_load(state_dir, count) == 0 ? 0 : 1;
	remove_directory(state_dir, true);
	return status;
}
