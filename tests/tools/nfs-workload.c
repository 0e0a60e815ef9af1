/*
 * nfs-workload — test tool: NFS workloads with an exactly known sequence of
 * system calls, so guest suites can assert exact per-operation counts.
 * (Shell tools add stats, opens and probes of their own.)
 *
 *   nfs-workload writer DIR     10 creates, 8 x 1 MiB writes + fsync to one of
 *                               them, 3 renames, 2 mkdir+rmdir, 10 unlinks
 *   nfs-workload reader FILE DIR  FILE read in 4 KiB reads, DIR listed once,
 *                               FILE stat'ed once, DIR/missing opened (ENOENT)
 *   nfs-workload mmap FILE      FILE mapped and every page touched (no read())
 *   nfs-workload write FILE MIB write MIB x 1 MiB then fsync
 *   nfs-workload slow-write FILE MIB MS  like write, sleeping MS ms between writes
 *   nfs-workload brief FILE COUNT  COUNT stats of FILE, then _exit at once: a process
 *                               that does its I/O and is gone within a
 *                               millisecond of main() (prints how long)
 *   nfs-workload paced-write FILE  one 1 MiB write per line read on standard
 *                               input, then fsync at end of input: the test
 *                               decides when each write happens
 *   nfs-workload mapped-write FILE MIB  FILE made MIB MiB long and written
 *                               through a shared mapping whose descriptor was
 *                               closed first, then _exit: the dirty pages
 *                               are written back after the process is gone
 * Prints what it did, one "name=value" per line; exits non-zero on any
 * unexpected result.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024 * 1024)

static char buffer[MIB];

static int fail(const char *what, const char *path)
{
	fprintf(stderr, "nfs-workload: %s %s: %s\n", what, path, strerror(errno));
	return 1;
}

static int write_file(const char *path, int mib, int pause_ms)
{
	struct timespec pause = { pause_ms / 1000, (long)(pause_ms % 1000) * 1000000 };
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	long written = 0;

	if (fd < 0)
		return fail("open", path);
	memset(buffer, 'v', sizeof(buffer));
	for (int i = 0; i < mib; i++) {
		if (write(fd, buffer, MIB) != MIB)
			return fail("write", path);
		written += MIB;
		if (pause_ms > 0)
			nanosleep(&pause, NULL);
	}
	if (fsync(fd) != 0)
		return fail("fsync", path);
	if (close(fd) != 0)
		return fail("close", path);
	printf("write_bytes=%ld\nwrite_calls=%d\n", written, mib);
	return 0;
}

static int paced_write(const char *path)
{
	char line[64];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	long written = 0, calls = 0;

	if (fd < 0)
		return fail("open", path);
	memset(buffer, 'p', sizeof(buffer));
	while (fgets(line, sizeof(line), stdin) != NULL) {
		if (write(fd, buffer, MIB) != MIB)
			return fail("write", path);
		written += MIB;
		calls++;
	}
	if (fsync(fd) != 0)
		return fail("fsync", path);
	if (close(fd) != 0)
		return fail("close", path);
	printf("write_bytes=%ld\nwrite_calls=%ld\n", written, calls);
	return 0;
}

static int writer(const char *dir)
{
	char path[4096], other[4096];

	for (int i = 0; i < 10; i++) {
		snprintf(path, sizeof(path), "%s/file%d", dir, i);
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd < 0)
			return fail("create", path);
		if (i == 0) {
			memset(buffer, 'w', sizeof(buffer));
			for (int j = 0; j < 8; j++)
				if (write(fd, buffer, MIB) != MIB)
					return fail("write", path);
			if (fsync(fd) != 0)
				return fail("fsync", path);
		}
		if (close(fd) != 0)
			return fail("close", path);
	}
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/file%d", dir, i);
		snprintf(other, sizeof(other), "%s/renamed%d", dir, i);
		if (rename(path, other) != 0)
			return fail("rename", path);
	}
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/dir%d", dir, i);
		if (mkdir(path, 0755) != 0)
			return fail("mkdir", path);
		if (rmdir(path) != 0)
			return fail("rmdir", path);
	}
	for (int i = 0; i < 10; i++) {
		snprintf(path, sizeof(path), i < 3 ? "%s/renamed%d" : "%s/file%d", dir, i);
		if (unlink(path) != 0)
			return fail("unlink", path);
	}
	printf("creates=10\nwrite_bytes=%d\nwrite_calls=8\nfsyncs=1\nrenames=3\nmkdirs=2\nrmdirs=2\nunlinks=10\n",
	       8 * MIB);
	return 0;
}

static int reader(const char *file, const char *dir)
{
	char path[4096];
	struct stat status;
	long total = 0, calls = 0;
	ssize_t got;
	int fd = open(file, O_RDONLY);
	DIR *listing;

	if (fd < 0)
		return fail("open", file);
	do {
		got = read(fd, buffer, 4096);
		if (got < 0)
			return fail("read", file);
		total += got;
		calls++;
	} while (got > 0);
	if (close(fd) != 0)
		return fail("close", file);
	listing = opendir(dir);
	if (listing == NULL)
		return fail("opendir", dir);
	while (readdir(listing) != NULL)
		;
	closedir(listing);
	if (stat(file, &status) != 0)
		return fail("stat", file);
	snprintf(path, sizeof(path), "%s/missing", dir);
	if (open(path, O_RDONLY) >= 0 || errno != ENOENT)
		return fail("open of a missing file did not fail with ENOENT", path);
	printf("read_bytes=%ld\nread_calls=%ld\n", total, calls);
	return 0;
}

static int map_and_touch(const char *file)
{
	struct stat status;
	volatile const char *pages;
	unsigned long sum = 0;
	int fd = open(file, O_RDONLY);

	if (fd < 0 || fstat(fd, &status) != 0)
		return fail("open", file);
	pages = mmap(NULL, (size_t)status.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (pages == MAP_FAILED)
		return fail("mmap", file);
	for (off_t offset = 0; offset < status.st_size; offset += 4096)
		sum += (unsigned char)pages[offset];
	munmap((void *)pages, (size_t)status.st_size);
	close(fd);
	printf("mapped_bytes=%lld\nchecksum=%lu\n", (long long)status.st_size, sum);
	return 0;
}

/* The pages are dirtied after close(), whose flush found none, and the
 * process exits without msync(): nothing of it is sent while it lives. */
static int mapped_write(const char *path, int mib)
{
	size_t size = (size_t)mib * MIB;
	char *pages;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		return fail("open", path);
	if (ftruncate(fd, (off_t)size) != 0)
		return fail("ftruncate", path);
	pages = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pages == MAP_FAILED)
		return fail("mmap", path);
	if (close(fd) != 0)
		return fail("close", path);
	memset(pages, 'm', size);
	printf("mapped_written_bytes=%zu\n", size);
	fflush(stdout);
	_exit(0);
}

/* COUNT stats, timed from main() to the last: printed, then _exit (no
 * atexit work, no stdio flush beyond the one line). */
static int brief(const char *path, int count)
{
	struct timespec start, end;
	struct stat status;
	char line[64];
	int length;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (int i = 0; i < count; i++)
		if (stat(path, &status) != 0)
			return fail("stat", path);
	clock_gettime(CLOCK_MONOTONIC, &end);
	length = snprintf(line, sizeof(line), "stat_calls=%d\nelapsed_us=%ld\n", count,
			  (long)((end.tv_sec - start.tv_sec) * 1000000 +
				 (end.tv_nsec - start.tv_nsec) / 1000));
	if (write(STDOUT_FILENO, line, (size_t)length) != length)
		return 1;
	_exit(0);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "writer") == 0)
		return writer(argv[2]);
	if (argc == 4 && strcmp(argv[1], "reader") == 0)
		return reader(argv[2], argv[3]);
	if (argc == 3 && strcmp(argv[1], "mmap") == 0)
		return map_and_touch(argv[2]);
	if (argc == 4 && strcmp(argv[1], "write") == 0)
		return write_file(argv[2], atoi(argv[3]), 0);
	if (argc == 5 && strcmp(argv[1], "slow-write") == 0)
		return write_file(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc == 3 && strcmp(argv[1], "paced-write") == 0)
		return paced_write(argv[2]);
	if (argc == 4 && strcmp(argv[1], "brief") == 0)
		return brief(argv[2], atoi(argv[3]));
	if (argc == 4 && strcmp(argv[1], "mapped-write") == 0)
		return mapped_write(argv[2], atoi(argv[3]));
	fprintf(stderr, "usage: nfs-workload writer DIR | reader FILE DIR | mmap FILE | "
			"write FILE MIB | slow-write FILE MIB MS | paced-write FILE | "
			"brief FILE COUNT | mapped-write FILE MIB\n");
	return 2;
}
