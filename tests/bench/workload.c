/*
 * workload.c — the benchmark's timed loops on one NFS file.
 *
 *   bench_workload [-n ITERATIONS] [-r REPEATS] [-d DIRECTORY] [-k FILES]
 *                  [-p PROCESSES] [-l LOOP]... FILE
 *
 * Loops (the first three by default, in this order):
 *   stat        stat(FILE): a cached getattr, no RPC with default mount options
 *   pread       4 KiB pread at offset 0 of FILE, cached: no RPC either
 *   open_close  open(FILE, O_RDONLY) + close: lookup, access, open, flush, close
 *   exec        fork + exec of /bin/true + wait: what capturing a process's
 *               job at exec is measured against (only when asked for by -l)
 * and the data loader's, what a training job's input pipeline does (only when
 * asked for by -l; a call is one file, or one 128 KiB of the mapping):
 *   loader_warm      open + one 128 KiB read + close of each of DIRECTORY's
 *                    FILES files (loader-0000, ...), all in the page cache
 *   loader_cold      the same after dropping the caches (so each file is
 *                    looked up, opened and read over the wire)
 *   mmap_cold        FILE mapped whole after dropping the caches (its own
 *                    pages too, evict_file) and read one byte per page (page
 *                    faults: readahead over the wire)
 *   loader_parallel  loader_cold in PROCESSES processes (default 4), file i
 *                    read by process i % PROCESSES, timed from the first fork
 *                    to the last exit
 *
 * The cached loops issue no RPCs, so they measure the client-side cost of a
 * call, where probe overhead shows most.  Each loop first runs a tenth of its
 * iterations untimed (fills the caches, settles the delegation), then times
 * REPEATS (default 1) runs of ITERATIONS calls each with CLOCK_MONOTONIC and
 * prints one line.  A data-loader run is one pass over its files (ITERATIONS
 * does not apply; loader_warm's untimed pass fills the cache, the cold loops
 * drop it before each run, which needs root).  Each loop prints:
 *
 *   LOOP BEST_NS_PER_OP MEDIAN_NS_PER_OP CALLS REPEATS
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_ITERATIONS 20000
#define MAX_REPEATS 100
#define PREAD_BYTES 4096
#define TRIVIAL_PROGRAM "/bin/true"
/* A data loader's sample: one file, read whole in one call. */
#define LOADER_FILE_BYTES (128 * 1024)
#define DEFAULT_LOADER_FILES 256
#define MAX_LOADER_FILES 100000
#define DEFAULT_PROCESSES 4
#define MAX_PROCESSES 64
#define DROP_CACHES "/proc/sys/vm/drop_caches"

enum loop {
	LOOP_STAT,
	LOOP_PREAD,
	LOOP_OPEN_CLOSE,
	LOOP_EXEC,
	LOOP_LOADER_WARM,
	LOOP_LOADER_COLD,
	LOOP_MMAP_COLD,
	LOOP_LOADER_PARALLEL,
	LOOP_COUNT
};

static const char *const loop_names[LOOP_COUNT] = {
	"stat", "pread", "open_close", "exec",
	"loader_warm", "loader_cold", "mmap_cold", "loader_parallel",
};

/* The loops run when none is named: those on FILE. */
#define DEFAULT_LOOPS 3

struct target {
	const char *path;
	int fd; /* open for the pread loop */
	char buffer[PREAD_BYTES];
	const char *directory; /* the data loader's files */
	long files;
	long processes;
	char *sample; /* LOADER_FILE_BYTES */
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
	case LOOP_LOADER_WARM: /* passes over files, not calls (time_data_loader_run) */
	case LOOP_LOADER_COLD:
	case LOOP_MMAP_COLD:
	case LOOP_LOADER_PARALLEL:
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

/* ---- the data loader: a run is one pass over its files ---- */

static bool is_data_loader(enum loop loop)
{
	return loop >= LOOP_LOADER_WARM;
}

/* Empties the page, dentry and inode caches (of the client and of the
 * guest's own NFS server alike), so the next reads go over the wire. */
static int drop_caches(void)
{
	int fd = open(DROP_CACHES, O_WRONLY);
	ssize_t written;

	sync();
	if (fd < 0) {
		fprintf(stderr, "bench_workload: %s: %s (the cold loops need root)\n", DROP_CACHES,
			strerror(errno));
		return -1;
	}
	written = write(fd, "3", 1);
	if (written != 1)
		fprintf(stderr, "bench_workload: %s: %s\n", DROP_CACHES,
			written < 0 ? strerror(errno) : "short write");
	close(fd);
	return written == 1 ? 0 : -1;
}

/*
 * FILE's pages out of the client's page cache, every one.  drop_caches
 * leaves a folio still in some CPU's LRU batch (the batch holds a
 * reference), so pages of the last run can stay cached: the likely reason
 * a short run once faulted in 32 KiB less than the 2 x 2 MiB mapped.
 * POSIX_FADV_DONTNEED drains every CPU's batch when a folio was held and
 * tries again.
 */
static int evict_file(const struct target *target)
{
	int error = posix_fadvise(target->fd, 0, 0, POSIX_FADV_DONTNEED);

	if (error != 0)
		fprintf(stderr, "bench_workload: fadvise %s: %s\n", target->path, strerror(error));
	return error == 0 ? 0 : -1;
}

/* One sample: open, one read of LOADER_FILE_BYTES, close. */
static int read_sample(const struct target *target, long index)
{
	char path[PATH_MAX];
	ssize_t bytes;
	int fd;

	if (snprintf(path, sizeof(path), "%s/loader-%04ld", target->directory, index) >=
	    (int)sizeof(path)) {
		fprintf(stderr, "bench_workload: %s: path too long\n", target->directory);
		return -1;
	}
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "bench_workload: %s: %s\n", path, strerror(errno));
		return -1;
	}
	bytes = read(fd, target->sample, LOADER_FILE_BYTES);
	if (bytes != LOADER_FILE_BYTES)
		fprintf(stderr, "bench_workload: %s: %s\n", path,
			bytes < 0 ? strerror(errno) : "short read (each file needs 128 KiB)");
	if (close(fd) != 0 && bytes == LOADER_FILE_BYTES) {
		fprintf(stderr, "bench_workload: close %s: %s\n", path, strerror(errno));
		return -1;
	}
	return bytes == LOADER_FILE_BYTES ? 0 : -1;
}

/* Files first, first + step, ... of the pass. */
static int read_samples(const struct target *target, long first, long step)
{
	for (long index = first; index < target->files; index += step)
		if (read_sample(target, index) != 0)
			return -1;
	return 0;
}

/* The pass in target->processes processes at once: 0 when each read all of
 * its files. */
static int read_samples_in_parallel(const struct target *target)
{
	pid_t children[MAX_PROCESSES];
	long started = 0;
	int status, result = 0;

	for (; started < target->processes; started++) {
		children[started] = fork();
		if (children[started] < 0) {
			fprintf(stderr, "bench_workload: fork: %s\n", strerror(errno));
			result = -1;
			break;
		}
		if (children[started] == 0)
			_exit(read_samples(target, started, target->processes) == 0 ? 0 : 1);
	}
	for (long i = 0; i < started; i++)
		if (waitpid(children[i], &status, 0) != children[i] || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			result = -1;
	return result;
}

/* FILE mapped whole and read one byte per page; *units gets the 128 KiB
 * units the mapping holds (the run's calls). */
static int read_mapping(const struct target *target, long *units)
{
	long page = sysconf(_SC_PAGESIZE);
	volatile unsigned char sum = 0;
	const unsigned char *mapping;
	struct stat status;

	if (fstat(target->fd, &status) != 0 || status.st_size < LOADER_FILE_BYTES) {
		fprintf(stderr, "bench_workload: %s: needs at least 128 KiB to map\n", target->path);
		return -1;
	}
	mapping = mmap(NULL, (size_t)status.st_size, PROT_READ, MAP_SHARED, target->fd, 0);
	if (mapping == MAP_FAILED) {
		fprintf(stderr, "bench_workload: mmap %s: %s\n", target->path, strerror(errno));
		return -1;
	}
	for (off_t offset = 0; offset < status.st_size; offset += page)
		sum += mapping[offset];
	munmap((void *)mapping, (size_t)status.st_size);
	*units = (long)(status.st_size / LOADER_FILE_BYTES);
	return 0;
}

/* One timed data-loader run: *ns gets its time, *calls its files (or the
 * mapping's 128 KiB units). */
static int time_data_loader_run(enum loop loop, const struct target *target, int64_t *ns,
				long *calls)
{
	int64_t start;
	int result;

	if (loop != LOOP_LOADER_WARM && drop_caches() != 0)
		return -1;
	if (loop == LOOP_MMAP_COLD && evict_file(target) != 0)
		return -1;
	*calls = target->files;
	start = now_ns();
	if (loop == LOOP_MMAP_COLD)
		result = read_mapping(target, calls);
	else if (loop == LOOP_LOADER_PARALLEL)
		result = read_samples_in_parallel(target);
	else
		result = read_samples(target, 0, 1);
	*ns = now_ns() - start;
	return result;
}

static int compare_doubles(const void *left, const void *right)
{
	double a = *(const double *)left, b = *(const double *)right;

	return (a > b) - (a < b);
}

/* One timed run: its ns per call and its calls. */
static int time_run(enum loop loop, struct target *target, long iterations, double *ns_per_call,
		    long *calls)
{
	int64_t start, ns;

	if (is_data_loader(loop)) {
		if (time_data_loader_run(loop, target, &ns, calls) != 0)
			return -1;
	} else {
		start = now_ns();
		if (run_calls(loop, target, iterations) != 0)
			return -1;
		ns = now_ns() - start;
		*calls = iterations;
	}
	*ns_per_call = (double)ns / (double)*calls;
	return 0;
}

/* The untimed start: a tenth of the calls, or loader_warm's first pass. */
static int warm_up(enum loop loop, struct target *target, long iterations)
{
	if (loop == LOOP_LOADER_WARM)
		return read_samples(target, 0, 1);
	if (is_data_loader(loop))
		return 0;
	return run_calls(loop, target, iterations / 10 + 1);
}

static int run_loop(enum loop loop, struct target *target, long iterations, long repeats)
{
	double ns_per_op[MAX_REPEATS], median;
	long calls = 0;

	if (warm_up(loop, target, iterations) != 0)
		return -1;
	for (long repeat = 0; repeat < repeats; repeat++)
		if (time_run(loop, target, iterations, &ns_per_op[repeat], &calls) != 0) {
			fprintf(stderr, "bench_workload: %s failed\n", loop_names[loop]);
			return -1;
		}
	qsort(ns_per_op, (size_t)repeats, sizeof(ns_per_op[0]), compare_doubles);
	median = repeats % 2 ? ns_per_op[repeats / 2]
			     : (ns_per_op[repeats / 2 - 1] + ns_per_op[repeats / 2]) / 2;
	printf("%s %.1f %.1f %ld %ld\n", loop_names[loop], ns_per_op[0], median, calls, repeats);
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
	fprintf(out, "usage: bench_workload [-n ITERATIONS] [-r REPEATS] [-d DIRECTORY] [-k FILES]\n"
		     "                      [-p PROCESSES] [-l LOOP]... FILE\n"
		     "Times REPEATS (default 1) runs of ITERATIONS (default %d) calls of each loop\n"
		     "on FILE (at least %d bytes) and prints per loop\n"
		     "\"LOOP BEST_NS_PER_OP MEDIAN_NS_PER_OP CALLS REPEATS\".\n"
		     "Loops: stat pread open_close (the default), exec; the data loader's\n"
		     "loader_warm loader_cold mmap_cold loader_parallel read DIRECTORY's FILES\n"
		     "(default %d) files loader-0000... of 128 KiB, or map FILE, one pass a run\n"
		     "(the cold ones drop the caches first: root); loader_parallel in PROCESSES\n"
		     "(default %d) processes.\n",
		     DEFAULT_ITERATIONS, PREAD_BYTES, DEFAULT_LOADER_FILES, DEFAULT_PROCESSES);
}

/* -OPTION's count into *count: 0, or 2 (a usage error, said). */
static int count_option(char option, const char *argument, long maximum, long *count)
{
	if (parse_count(argument, maximum, count) == 0)
		return 0;
	fprintf(stderr, "bench_workload: -%c: '%s' is not a count from 1 to %ld\n", option, argument,
		maximum);
	return 2;
}

/* Applies one option; 0, or 2 (a usage error, said). */
static int parse_option(int option, const char *argument, long *iterations, long *repeats,
			struct target *target, bool selected[LOOP_COUNT], bool *any_selected)
{
	enum loop loop;

	switch (option) {
	case 'n':
		return count_option('n', argument, 100000000, iterations);
	case 'r':
		return count_option('r', argument, MAX_REPEATS, repeats);
	case 'k':
		return count_option('k', argument, MAX_LOADER_FILES, &target->files);
	case 'p':
		return count_option('p', argument, MAX_PROCESSES, &target->processes);
	case 'd':
		target->directory = argument;
		return 0;
	case 'l':
		if (parse_loop(argument, &loop) == 0) {
			selected[loop] = *any_selected = true;
			return 0;
		}
		fprintf(stderr, "bench_workload: -l: unknown loop '%s' (see -h)\n", argument);
		return 2;
	}
	usage(stderr);
	return 2;
}

int main(int argc, char **argv)
{
	bool selected[LOOP_COUNT] = { false };
	bool any_selected = false, loads_data = false;
	long iterations = DEFAULT_ITERATIONS, repeats = 1;
	struct target target = { .fd = -1, .files = DEFAULT_LOADER_FILES,
				 .processes = DEFAULT_PROCESSES };
	int option, status = 0;

	while ((option = getopt(argc, argv, "n:r:d:k:p:l:h")) != -1) {
		if (option == 'h') {
			usage(stdout);
			return 0;
		}
		status = parse_option(option, optarg, &iterations, &repeats, &target, selected,
				      &any_selected);
		if (status != 0)
			return status;
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	for (int i = LOOP_LOADER_WARM; i < LOOP_COUNT; i++)
		loads_data |= selected[i] && i != LOOP_MMAP_COLD;
	if (loads_data && !target.directory) {
		fprintf(stderr, "bench_workload: the loader loops need -d DIRECTORY\n");
		return 2;
	}
	target.path = argv[optind];
	target.fd = open(target.path, O_RDONLY);
	if (target.fd < 0) {
		fprintf(stderr, "bench_workload: %s: %s\n", target.path, strerror(errno));
		return 1;
	}
	target.sample = malloc(LOADER_FILE_BYTES);
	if (!target.sample) {
		fprintf(stderr, "bench_workload: out of memory\n");
		close(target.fd);
		return 1;
	}
	for (int i = 0; i < LOOP_COUNT && status == 0; i++)
		if (selected[i] || (!any_selected && i < DEFAULT_LOOPS))
			status = run_loop((enum loop)i, &target, iterations, repeats);
	free(target.sample);
	close(target.fd);
	return status == 0 ? 0 : 1;
}
