/*
 * probe-driver.c — drives helper/kernel/probes.c for the guest suite
 * tests/guest/suites/probes.sh: opens the probes, registers cgroups in
 * slots, runs a workload command, then prints every counter as text lines
 * the suite parses.  No logic of its own beyond that: what is tested is the
 * loader and the BPF programs.
 *
 *   probe-driver [--mode auto|fentry|kprobe] [--pin-dir DIR] [--keep-pins]
 *                [--kprobe-calls-in-flight N]
 *                [--register CGROUP_DIR=SLOT]... [--unregister CGROUP_DIR]...
 *                [--reset SLOT]... [--show SLOT]... [--expire-idle-ms MS]
 *                [-- COMMAND ARG...]
 *
 * Without --pin-dir nothing is pinned and the probes go when it exits.
 * --kprobe-calls-in-flight is the helper's key of that name (default: its
 * default).  With
 * --pin-dir the pins are removed at exit unless --keep-pins (restart tests).
 * Output lines (after the workload):
 *   method OPERATION fentry|kprobe|none
 *   hook LINE-OF-vnfs_probes_describe
 *   op SLOT OPERATION count errors time_ns bytes latency_samples
 *   size SLOT read|write BUCKET COUNT
 *   process SLOT COMM read_ops read_bytes write_ops write_bytes other_ops
 *   mount SLOT MAJOR:MINOR ops errors time_ns read_bytes write_bytes
 *   unattributed CGROUP_ID UID COMM OPERATION COUNT   (one per nonzero op)
 *   unattributed_bytes CGROUP_ID UID COMM errors read_bytes write_bytes
 *   health INDEX VALUE
 *   missed_return FUNCTION MISSED   (the kernel's count, per return probe
 *                                    made in tracefs)
 *   expired GONE IDLE FAILED   (with --expire-idle-ms: what the expiry of
 *                               unattributed rows did, after the workload)
 *   timing open|close MILLISECONDS
 * Slots named by --register, --reset or --show are printed.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helper/collect/breakdowns.h"
#include "helper/kernel/hooks.h"
#include "helper/kernel/probes.h"
#include "lib/config.h"
#include "lib/log.h"

#define MAX_CGROUPS 16

struct cgroup_slot {
	char path[512];
	uint64_t cgroup_id;
	uint32_t slot;
};

static bool slot_in_use[VNFS_MAX_STEPS];

static double now_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec * 1e3 + now.tv_nsec / 1e6;
}

static int parse_slot(const char *text, uint32_t *slot)
{
	unsigned long value;
	char *end;

	errno = 0;
	value = strtoul(text, &end, 10);
	if (errno || *end || end == text || value >= VNFS_MAX_STEPS)
		return -1;
	*slot = (uint32_t)value;
	return 0;
}

static int cgroup_id_of(const char *path, uint64_t *cgroup_id)
{
	struct stat status;

	if (stat(path, &status) != 0 || !S_ISDIR(status.st_mode)) {
		fprintf(stderr, "probe-driver: %s: not a cgroup directory\n", path);
		return -1;
	}
	*cgroup_id = status.st_ino;
	return 0;
}

static int parse_registration(const char *argument, struct cgroup_slot *registration)
{
	const char *equals = strrchr(argument, '=');

	if (!equals || equals == argument || (size_t)(equals - argument) >= sizeof(registration->path))
		return -1;
	snprintf(registration->path, sizeof(registration->path), "%.*s",
		 (int)(equals - argument), argument);
	if (parse_slot(equals + 1, &registration->slot) != 0)
		return -1;
	return cgroup_id_of(registration->path, &registration->cgroup_id);
}

static int run_workload(char **command)
{
	int status;
	pid_t child = fork();

	if (child < 0)
		return -1;
	if (child == 0) {
		execvp(command[0], command);
		fprintf(stderr, "probe-driver: %s: %s\n", command[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(child, &status, 0) != child)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int print_process(const struct vnfs_process_key *key, const struct vnfs_process_stats *stats,
			 void *context)
{
	(void)context;
	if (!slot_in_use[key->slot])
		return 0;
	printf("process %u %.*s %llu %llu %llu %llu %llu\n", key->slot, VNFS_COMM_LEN, key->comm,
	       (unsigned long long)stats->read_ops, (unsigned long long)stats->read_bytes,
	       (unsigned long long)stats->write_ops, (unsigned long long)stats->write_bytes,
	       (unsigned long long)stats->other_ops);
	return 0;
}

static int print_mount(const struct vnfs_mount_key *key, const struct vnfs_mount_stats *stats,
		       void *context)
{
	(void)context;
	if (!slot_in_use[key->slot])
		return 0;
	/* The kernel's internal dev_t: major in the top 12 bits. */
	printf("mount %u %u:%u %llu %llu %llu %llu %llu\n", key->slot, key->device >> 20,
	       key->device & 0xfffff, (unsigned long long)stats->ops,
	       (unsigned long long)stats->errors, (unsigned long long)stats->time_ns,
	       (unsigned long long)stats->read_bytes, (unsigned long long)stats->write_bytes);
	return 0;
}

static int print_unattributed(const struct vnfs_unattributed_key *key,
			      const struct vnfs_unattributed_stats *stats, void *context)
{
	(void)context;
	for (int operation = 0; operation < VNFS_OP_COUNT; operation++)
		if (stats->operations[operation].count)
			printf("unattributed %llu %u %.*s %s %llu\n",
			       (unsigned long long)key->cgroup_id, key->uid, VNFS_COMM_LEN,
			       key->comm, vnfs_operation_names[operation],
			       (unsigned long long)stats->operations[operation].count);
	printf("unattributed_bytes %llu %u %.*s %llu %llu %llu\n",
	       (unsigned long long)key->cgroup_id, key->uid, VNFS_COMM_LEN, key->comm,
	       (unsigned long long)vnfs_unattributed_total(stats, VNFS_UNATTRIBUTED_ERRORS),
	       (unsigned long long)vnfs_unattributed_total(stats, VNFS_UNATTRIBUTED_READ_BYTES),
	       (unsigned long long)vnfs_unattributed_total(stats, VNFS_UNATTRIBUTED_WRITE_BYTES));
	return 0;
}

static void print_slot(const struct vnfs_probes *probes, uint32_t slot)
{
	static struct vnfs_step_stats copy;
	const struct vnfs_step_stats *stats = &copy;
	static const char *const directions[VNFS_DIRECTIONS] = { "read", "write" };

	if (vnfs_probes_read_step_stats(probes, slot, &copy) != 0) {
		printf("error slot %u: cannot read step_stats: %s\n", slot, strerror(errno));
		return;
	}
	printf("activity %u %llu\n", slot,
	       (unsigned long long)vnfs_probes_step_activity(probes, slot));
	for (int operation = 0; operation < VNFS_OP_COUNT; operation++) {
		const struct vnfs_operation_stats *counters = &stats->operations[operation];
		unsigned long long samples = 0;

		for (int bucket = 0; bucket < VNFS_LATENCY_BUCKETS; bucket++)
			samples += counters->latency_histogram[bucket];
		printf("op %u %s %llu %llu %llu %llu %llu\n", slot, vnfs_operation_names[operation],
		       (unsigned long long)counters->count, (unsigned long long)counters->errors,
		       (unsigned long long)counters->time_ns, (unsigned long long)counters->bytes,
		       samples);
	}
	for (int direction = 0; direction < VNFS_DIRECTIONS; direction++)
		for (int bucket = 0; bucket < VNFS_SIZE_BUCKETS; bucket++)
			if (stats->request_size_histogram[direction][bucket])
				printf("size %u %s %d %llu\n", slot, directions[direction], bucket,
				       (unsigned long long)stats->request_size_histogram[direction][bucket]);
}

static int print_missed_return(const char *function, uint64_t missed, void *context)
{
	(void)context;
	printf("missed_return %s %llu\n", function, (unsigned long long)missed);
	return 0;
}

static int print_everything(struct vnfs_probes *probes)
{
	struct vnfs_counter_source source;
	uint64_t health[VNFS_HEALTH_COUNTERS];
	char description[8192];
	char *line, *saveptr = NULL;

	for (int operation = 0; operation < VNFS_OP_COUNT; operation++) {
		enum vnfs_attach_method method = vnfs_probes_attach_method(probes, operation);

		printf("method %s %s\n", vnfs_operation_names[operation],
		       vnfs_attach_method_name(method));
	}
	vnfs_probes_describe(probes, description, sizeof(description));
	for (line = strtok_r(description, "\n", &saveptr); line;
	     line = strtok_r(NULL, "\n", &saveptr))
		printf("hook %s\n", line);
	/* Which operation each function counts, for scripts/probes-table. */
	for (size_t i = 0; i < vnfs_hook_count; i++)
		printf("hooked %s %s\n", vnfs_hooks[i].function,
		       vnfs_operation_names[vnfs_hooks[i].operation]);
	for (uint32_t slot = 0; slot < VNFS_MAX_STEPS; slot++)
		if (slot_in_use[slot])
			print_slot(probes, slot);
	source = vnfs_probes_counter_source(probes);
	if (vnfs_breakdowns_walk(&source, print_process, NULL, print_mount, NULL) != 0 ||
	    vnfs_probes_for_each_unattributed(probes, print_unattributed, NULL) != 0 ||
	    vnfs_probes_read_health(probes, health) != 0) {
		fprintf(stderr, "probe-driver: reading the maps failed: %s\n", strerror(errno));
		return -1;
	}
	for (int index = 0; index < VNFS_HEALTH_COUNTERS; index++)
		printf("health %d %llu\n", index, (unsigned long long)health[index]);
	if (vnfs_probes_for_each_missed_return(probes, print_missed_return, NULL) != 0) {
		fprintf(stderr, "probe-driver: reading kprobe_profile failed: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* One expiry pass over the unattributed rows, as the helper's walk makes
 * every minute, with the suite's idle time. */
static int expire_unattributed(struct vnfs_probes *probes, long idle_ms)
{
	struct vnfs_unattributed_expiry expired;

	if (vnfs_probes_expire_unattributed(probes, (int64_t)now_ms(), idle_ms, &expired) != 0) {
		fprintf(stderr, "probe-driver: expiring unattributed rows failed: %s\n",
			strerror(errno));
		return -1;
	}
	printf("expired %u %u %u\n", expired.gone, expired.idle, expired.failed);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: probe-driver [--mode auto|fentry|kprobe] [--pin-dir DIR] "
			"[--keep-pins] [--kprobe-calls-in-flight N] [--register CGROUP_DIR=SLOT]... [--unregister CGROUP_DIR]... "
			"[--reset SLOT]... [--show SLOT]... [--expire-idle-ms MS] "
			"[-- COMMAND ARG...]\n");
}

int main(int argc, char **argv)
{
	static const struct option long_options[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "keep-pins", no_argument, NULL, 'k' },
		{ "kprobe-calls-in-flight", required_argument, NULL, 'c' },
		{ "register", required_argument, NULL, 'r' },
		{ "unregister", required_argument, NULL, 'u' },
		{ "reset", required_argument, NULL, 's' },
		{ "show", required_argument, NULL, 'w' },
		{ "expire-idle-ms", required_argument, NULL, 'e' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	struct vnfs_probes_options options = { .mode = VNFS_PROBE_AUTO };
	static struct vnfs_config defaults;
	struct cgroup_slot registrations[MAX_CGROUPS], unregistrations[MAX_CGROUPS];
	size_t registration_count = 0, unregistration_count = 0;
	uint32_t resets[MAX_CGROUPS], shown;
	double started, opened, closing;
	size_t reset_count = 0;
	bool keep_pins = false, verbose = false, expire = false;
	long expire_idle_ms = 0;
	char *end;
	struct vnfs_probes *probes;
	char error[8192];
	int option, status = 0;

	vnfs_config_defaults(&defaults);
	options.kprobe_calls_in_flight = defaults.helper.kprobe_calls_in_flight;
	while ((option = getopt_long(argc, argv, "+", long_options, NULL)) != -1) {
		switch (option) {
		case 'm':
			if (strcmp(optarg, "auto") == 0)
				options.mode = VNFS_PROBE_AUTO;
			else if (strcmp(optarg, "fentry") == 0)
				options.mode = VNFS_PROBE_FENTRY;
			else if (strcmp(optarg, "kprobe") == 0)
				options.mode = VNFS_PROBE_KPROBE;
			else
				return usage(), 2;
			break;
		case 'p':
			options.pin_dir = optarg;
			options.pin = true;
			break;
		case 'k':
			keep_pins = true;
			break;
		case 'c':
			errno = 0;
			options.kprobe_calls_in_flight = (unsigned)strtoul(optarg, &end, 10);
			if (errno || *end || end == optarg)
				return usage(), 2;
			break;
		case 'r':
			if (registration_count == MAX_CGROUPS ||
			    parse_registration(optarg, &registrations[registration_count]) != 0)
				return usage(), 2;
			slot_in_use[registrations[registration_count++].slot] = true;
			break;
		case 'u':
			if (unregistration_count == MAX_CGROUPS ||
			    cgroup_id_of(optarg, &unregistrations[unregistration_count++].cgroup_id) != 0)
				return usage(), 2;
			break;
		case 's':
			if (reset_count == MAX_CGROUPS || parse_slot(optarg, &resets[reset_count]) != 0)
				return usage(), 2;
			slot_in_use[resets[reset_count++]] = true;
			break;
		case 'w':
			if (parse_slot(optarg, &shown) != 0)
				return usage(), 2;
			slot_in_use[shown] = true;
			break;
		case 'e':
			errno = 0;
			expire_idle_ms = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || expire_idle_ms < 0)
				return usage(), 2;
			expire = true;
			break;
		case 'v':
			verbose = true;
			break;
		default:
			return usage(), 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	vnfs_log_setup("probe-driver", verbose ? VNFS_LOG_PRIORITY_DEBUG : VNFS_LOG_PRIORITY_INFO,
		       0);
	started = now_ms();
	if (vnfs_probes_open(&probes, &options, error, sizeof(error)) != 0) {
		fprintf(stderr, "probe-driver: %s\n", error);
		return 1;
	}
	opened = now_ms();
	for (size_t i = 0; i < registration_count; i++)
		if (vnfs_probes_register_cgroup(probes, registrations[i].cgroup_id,
						registrations[i].slot) != 0) {
			fprintf(stderr, "probe-driver: cannot register %s\n", registrations[i].path);
			status = 1;
		}
	for (size_t i = 0; i < unregistration_count; i++)
		if (vnfs_probes_unregister_cgroup(probes, unregistrations[i].cgroup_id) != 0) {
			fprintf(stderr, "probe-driver: cannot unregister a cgroup\n");
			status = 1;
		}
	for (size_t i = 0; i < reset_count; i++)
		if (vnfs_probes_reset_slot(probes, resets[i]) != 0) {
			fprintf(stderr, "probe-driver: cannot reset slot %u\n", resets[i]);
			status = 1;
		}
	if (optind < argc) {
		int workload = run_workload(argv + optind);

		if (workload != 0) {
			fprintf(stderr, "probe-driver: the workload exited with %d\n", workload);
			status = 1;
		}
	}
	if (expire && expire_unattributed(probes, expire_idle_ms) != 0)
		status = 1;
	if (print_everything(probes) != 0)
		status = 1;
	closing = now_ms();
	vnfs_probes_close(probes);
	printf("timing open %.0f\ntiming close %.0f\n", opened - started, now_ms() - closing);
	if (options.pin && !keep_pins &&
	    vnfs_probes_unpin(options.pin_dir, NULL, error, sizeof(error)) != 0) {
		fprintf(stderr, "probe-driver: %s\n", error);
		status = 1;
	}
	return status;
}
