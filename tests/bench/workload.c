/*
 * workload.c — the benchmark's timed loops on one NFS file.
 *
 *   bench_workload [-n ITERATIONS] [-r REPEATS] [-l LOOP]... FILE
 *
 * Loops (the first three by default, in this order):
 *   stat        stat(FILE): a cached getattr, no RPC with default mount options
 *   pread       4 KiB pread at offset 0 of FILE, cached: no RPC either
 *   open_close  open(FILE, O_RDONLY) + close: lookup, access, open, flush, close
 *   exec        fork + exec of /bin/true + wait: what capturing a process's
 *               job at exec is measured against (only when asked for by -l)
 *
 * The cached loops issue no RPCs, so they measure the client-side cost of a
 * call, where probe overhead shows most.  Each loop first runs a tenth of its
 * iterations untimed (fills the caches, settles the delegation), then times
 * REPEATS (default 1) runs of ITERATIONS calls each with CLOCK_MONOTONIC and
 * prints one line:
 *
 *   LOOP BEST_NS_PER_OP MEDIAN_NS_PER_OP ITERATIONS REPEATS
 *
 * e.g. "stat 8123.4 8301.0 4000 5".  Interference from other work on the
 * machine only ever adds time, so the best run is the least disturbed one.
 * Any failed call stops the loop with an error naming it and the program
 * exits 1: a benchmark of failing calls would measure the error path.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_ITERATIONS 20000
#define MAX_REPEATS 100
#define PREAD_BYTES 4096
#define TRIVIAL_PROGRAM "/bin/true"

enum loop { LOOP_STAT, LOOP_PREAD, LOOP_OPEN_CLOSE, LOOP_EXEC, LOOP_COUNT };

static const char *const loop_names[LOOP_COUNT] = { "stat", "pread", "open_close", "exec" };

/* The loops run when none is named: those on FILE. */
#define DEFAULT_LOOPS 3

struct target {
	const char *path;
	int fd; /* open for the pread loop */
	char buffer[PREAD_BYTES];
};

static int64_t now_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

/* One call of the loop: 0, -1 with errno set, or SHORT_READ. */
#define SHORT_READ (-2)

/* A trivial program started and waited for: 0, or -1 (ECHILD when it did
 * not exit 0). */
static int run_trivial_program(void)
{
	char *const arguments[] = { TRIVIAL_PROGRAM, NULL };
	int status;
	pid_t child = fork();

	if (child < 0)
		return -1;
	if (child == 0) {
		execv(TRIVIAL_PROGRAM, arguments);
		_exit(127);
	}
	if (waitpid(child, &status, 0) != child)
		return -1;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	errno = ECHILD;
	return -1;
}

static int run_once(enum loop loop, struct target *target)
{
	struct stat status;
	ssize_t bytes;
	int fd;

	switch (loop) {
	case LOOP_STAT:
		return stat(target->path, &status);
	case LOOP_PREAD:
		bytes = pread(target->fd, target->buffer, PREAD_BYTES, 0);
		if (bytes == PREAD_BYTES)
			return 0;
		return bytes >= 0 ? SHORT_READ : -1;
	case LOOP_OPEN_CLOSE:
		fd = open(target->path, O_RDONLY);
		if (fd < 0)
			return -1;
		return close(fd);
	case LOOP_EXEC:
		return run_trivial_program();
	case LOOP_COUNT:
		break;
	}
	errno = EINVAL;
	return -1;
}

static int run_calls(enum loop loop, struct target *target, long calls)
{
	for (long i = 0; i < calls; i++) {
		int result = run_once(loop, target);

		if (result == SHORT_READ) {
			fprintf(stderr, "bench_workload: %s: short read (the file needs at least %d bytes)\n",
				target->path, PREAD_BYTES);
			return -1;
		}
		if (result != 0) {
			fprintf(stderr, "bench_workload: %s %s (call %ld): %s\n", loop_names[loop],
				target->path, i + 1, strerror(errno));
			return -1;
		}
	}
	return 0;
}

static int compare_doubles(const void *left, const void *right)
{
	double a = *(const double *)left, b = *(const double *)right;

	return (a > b) - (a < b);
}

static int run_loop(enum loop loop, struct target *target, long iterations, long repeats)
{
	double ns_per_op[MAX_REPEATS], median;
	int64_t start;

	if (run_calls(loop, target, iterations / 10 + 1) != 0)
		return -1;
	for (long repeat = 0; repeat < repeats; repeat++) {
		start = now_ns();
		if (run_calls(loop, target, iterations) != 0)
			return -1;
		ns_per_op[repeat] = (double)(now_ns() - start) / (double)iterations;
	}
	qsort(ns_per_op, (size_t)repeats, sizeof(ns_per_op[0]), compare_doubles);
	median = repeats % 2 ? ns_per_op[repeats / 2]
			     : (ns_per_op[repeats / 2 - 1] + ns_per_op[repeats / 2]) / 2;
	printf("%s %.1f %.1f %ld %ld\n", loop_names[loop], ns_per_op[0], median, iterations,
	       repeats);
	fflush(stdout);
	return 0;
}

static int parse_loop(const char *name, enum loop *loop)
{
	for (int i = 0; i < LOOP_COUNT; i++) {
		if (strcmp(name, loop_names[i]) == 0) {
			*loop = (enum loop)i;
			return 0;
		}
	}
	return -1;
}

/* A count from 1 to maximum, or -1. */
static int parse_count(const char *text, long maximum, long *count)
{
	char *end;
	long value;

	errno = 0;
	value = strtol(text, &end, 10);
	if (errno != 0 || end == text || *end != '\0' || value < 1 || value > maximum)
		return -1;
	*count = value;
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: bench_workload [-n ITERATIONS] [-r REPEATS] [-l stat|pread|open_close|exec]... FILE\n"
		     "Times REPEATS (default 1) runs of ITERATIONS (default %d) calls of each loop\n"
		     "on FILE (at least %d bytes) and prints per loop\n"
		     "\"LOOP BEST_NS_PER_OP MEDIAN_NS_PER_OP ITERATIONS REPEATS\".\n",
		     DEFAULT_ITERATIONS, PREAD_BYTES);
}

int main(int argc, char **argv)
{
	bool selected[LOOP_COUNT] = { false };
	bool any_selected = false;
	long iterations = DEFAULT_ITERATIONS, repeats = 1;
	struct target target = { .fd = -1 };
	int option, status = 0;
	enum loop loop;

	while ((option = getopt(argc, argv, "n:r:l:h")) != -1) {
		switch (option) {
		case 'n':
			if (parse_count(optarg, 100000000, &iterations) != 0) {
				fprintf(stderr, "bench_workload: -n: '%s' is not a count from 1 to 100000000\n",
					optarg);
				return 2;
			}
			break;
		case 'r':
			if (parse_count(optarg, MAX_REPEATS, &repeats) != 0) {
				fprintf(stderr, "bench_workload: -r: '%s' is not a count from 1 to %d\n",
					optarg, MAX_REPEATS);
				return 2;
			}
			break;
		case 'l':
			if (parse_loop(optarg, &loop) != 0) {
				fprintf(stderr, "bench_workload: -l: unknown loop '%s' (stat, pread, open_close, exec)\n",
					optarg);
				return 2;
			}
			selected[loop] = any_selected = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	target.path = argv[optind];
	target.fd = open(target.path, O_RDONLY);
	if (target.fd < 0) {
		fprintf(stderr, "bench_workload: %s: %s\n", target.path, strerror(errno));
		return 1;
	}
	for (int i = 0; i < LOOP_COUNT && status == 0; i++)
		if (selected[i] || (!any_selected && i < DEFAULT_LOOPS))
			status = run_loop((enum loop)i, &target, iterations, repeats);
	close(target.fd);
	return status == 0 ? 0 : 1;
}
