/*
 * bench-steps.c — registers cgroups with vnfs-helper as job steps, the way
 * the SPANK plugin does, for the benchmark: the measured workload must run
 * in a registered cgroup (the attributed path), and the resource measurement
 * needs 1,000 registered steps.
 *
 *   bench_steps [-s SOCKET] [-j JOB] [-f FIRST_STEP] [-u UID] [-t TAGS] CGROUP_DIR...
 *
 * Each directory (which must exist on the cgroup2 mount) becomes step
 * FIRST_STEP + its position of job JOB, tagged with TAGS ("NAME=VALUE,...",
 * as --vnfs-tags takes them) if given.  The cgroup id is the directory's
 * inode number.  Stops at the first refusal, naming the directory and the
 * helper's answer; prints "registered N steps" on success.
 */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/client.h"

#define DEFAULT_SOCKET "/run/vnfs/vnfs.sock"
#define CALL_TIMEOUT_MS 10000

static int parse_u32(const char *text, uint32_t *value)
{
	unsigned long long parsed;
	char *end;

	errno = 0;
	parsed = strtoull(text, &end, 10);
	if (errno != 0 || end == text || *end != '\0' || text[0] == '-' || parsed > UINT32_MAX)
		return -1;
	*value = (uint32_t)parsed;
	return 0;
}

static int register_step(const char *socket_path, uint32_t job, uint32_t step, uint32_t uid,
			 const struct vnfs_tag_list *tags, const char *directory)
{
	struct vnfs_request request = {
		.type = VNFS_REQUEST_REGISTER,
		.uid = uid,
		.tags = *tags,
	};
	struct vnfs_reply reply;
	struct stat status;
	char error[512];

	vnfs_workload_of_slurm_step(&request.workload, job, step);
	if (stat(directory, &status) != 0 || !S_ISDIR(status.st_mode)) {
		fprintf(stderr, "bench_steps: %s: %s\n", directory,
			errno ? strerror(errno) : "not a directory");
		return -1;
	}
	if (strlen(directory) >= sizeof(request.cgroup_path)) {
		fprintf(stderr, "bench_steps: %s: path too long\n", directory);
		return -1;
	}
	strcpy(request.cgroup_path, directory);
	request.cgroup_id = status.st_ino;
	if (vnfs_client_call(socket_path, &request, CALL_TIMEOUT_MS, &reply, error,
			     sizeof(error)) != 0) {
		fprintf(stderr, "bench_steps: job %u step %u (%s): %s\n", job, step, directory,
			error);
		return -1;
	}
	vnfs_reply_free(&reply);
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: bench_steps [-s SOCKET] [-j JOB] [-f FIRST_STEP] [-u UID] [-t TAGS] "
		     "CGROUP_DIR...\n"
		     "Registers each cgroup directory with vnfs-helper as step FIRST_STEP + i of\n"
		     "JOB, tagged NAME=VALUE,... (defaults: socket %s, job 1, first step 0, uid 0,\n"
		     "no tags).\n",
		     DEFAULT_SOCKET);
}

int main(int argc, char **argv)
{
	const char *socket_path = DEFAULT_SOCKET;
	uint32_t job = 1, first_step = 0, uid = 0;
	struct vnfs_tag_list tags;
	char error[256];
	int option;

	vnfs_tags_init(&tags);
	while ((option = getopt(argc, argv, "s:j:f:u:t:h")) != -1) {
		switch (option) {
		case 's':
			socket_path = optarg;
			break;
		case 't':
			if (vnfs_tags_parse(&tags, optarg, NULL, NULL, error, sizeof(error)) != 0) {
				fprintf(stderr, "bench_steps: -t: %s\n", error);
				return 2;
			}
			break;
		case 'j':
		case 'f':
		case 'u':
			if (parse_u32(optarg, option == 'j' ? &job : option == 'f' ? &first_step : &uid)) {
				fprintf(stderr, "bench_steps: -%c: '%s' is not a number from 0 to %u\n",
					option, optarg, UINT32_MAX);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind == argc) {
		usage(stderr);
		return 2;
	}
	if ((uint64_t)first_step + (uint64_t)(argc - optind) > UINT32_MAX) {
		fprintf(stderr, "bench_steps: step numbers would pass %u\n", UINT32_MAX);
		return 2;
	}
	for (int i = optind; i < argc; i++)
		if (register_step(socket_path, job, first_step + (uint32_t)(i - optind), uid, &tags,
				  argv[i]) != 0)
			return 1;
	printf("registered %d steps\n", argc - optind);
	return 0;
}
