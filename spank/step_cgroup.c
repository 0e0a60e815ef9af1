/*
 * step_cgroup.c — finding Slurm's cgroup v2 step directory, or creating,
 * filling and removing a vnfs-owned one.  See step_cgroup.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/paths.h"
#include "lib/record.h"
#include "spank/step_cgroup.h"

#define VNFS_CGROUP_DIR "vnfs"

/* /proc/self/mounts escapes space, tab, newline and backslash as \ooo. */
static void unescape_mount_field(char *field)
{
	char *out = field;

	for (const char *in = field; *in; out++) {
		if (in[0] == '\\' && in[1] >= '0' && in[1] <= '3' && in[2] >= '0' && in[2] <= '7' &&
		    in[3] >= '0' && in[3] <= '7') {
			*out = (char)((in[1] - '0') * 64 + (in[2] - '0') * 8 + (in[3] - '0'));
			in += 4;
		} else {
			*out = *in++;
		}
	}
	*out = '\0';
}

int vnfs_cgroup2_mount_from_text(const char *mounts, char *mount_point, size_t size)
{
	const char *line = mounts;

	while (*line) {
		size_t length = strcspn(line, "\n");
		char device[64], directory[VNFS_CGROUP_PATH_MAX], type[32];

		if (length < VNFS_CGROUP_PATH_MAX + 128) {
			char copy[VNFS_CGROUP_PATH_MAX + 128];

			memcpy(copy, line, length);
			copy[length] = '\0';
			if (sscanf(copy, "%63s %511s %31s", device, directory, type) == 3 &&
			    !strcmp(type, "cgroup2")) {
				unescape_mount_field(directory);
				if (strlen(directory) >= size)
					return -1;
				memcpy(mount_point, directory, strlen(directory) + 1);
				return 0;
			}
		}
		line += length;
		if (*line == '\n')
			line++;
	}
	return -1;
}

int vnfs_cgroup_v2_path_from_text(const char *proc_cgroup, char *path, size_t size,
				  bool *hybrid)
{
	const char *line = proc_cgroup;
	int found = -1;

	*hybrid = false;
	while (*line) {
		size_t length = strcspn(line, "\n");

		if (length >= 3 && !strncmp(line, "0::", 3)) {
			if (length - 3 >= size)
				return -1;
			memcpy(path, line + 3, length - 3);
			path[length - 3] = '\0';
			found = 0;
		} else if (length > 0) {
			*hybrid = true;
		}
		line += length;
		if (*line == '\n')
			line++;
	}
	return found;
}

int vnfs_slurm_step_prefix(const char *cgroup_path, uint32_t job_id, const char *step_name,
			   char *prefix, size_t size)
{
	char pair[96];
	size_t pair_length;
	const char *at = cgroup_path;

	pair_length = (size_t)snprintf(pair, sizeof(pair), "/job_%u/step_%s", job_id, step_name);
	while ((at = strstr(at, pair)) != NULL) {
		char after = at[pair_length];

		if (after == '/' || after == '\0') {
			size_t length = (size_t)(at - cgroup_path) + pair_length;

			if (length >= size)
				return -1;
			memcpy(prefix, cgroup_path, length);
			prefix[length] = '\0';
			return 0;
		}
		at += pair_length;
	}
	return -1;
}

/* Reads a small kernel text file whole.  Returns 0, or -1 with errno set. */
static int read_text(const char *path, char *buffer, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t used = 0;

	if (fd < 0)
		return -1;
	while (used < size - 1) {
		ssize_t got = read(fd, buffer + used, size - 1 - used);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int saved = errno;

			close(fd);
			errno = saved;
			return -1;
		}
		if (got == 0)
			break;
		used += (size_t)got;
	}
	buffer[used] = '\0';
	close(fd);
	return 0;
}

/* Reads /proc/self/mounts into mounts and finds the first cgroup2 mount:
 * 0, 1 when none is mounted, -1 with a message in error. */
static int find_mounted(char *mounts, size_t mounts_size, struct vnfs_step_cgroup *cgroup,
			char *error, size_t error_size)
{
	if (read_text("/proc/self/mounts", mounts, mounts_size) < 0) {
		snprintf(error, error_size, "cannot read /proc/self/mounts: %s", strerror(errno));
		return -1;
	}
	return vnfs_cgroup2_mount_from_text(mounts, cgroup->root, sizeof(cgroup->root)) < 0;
}

/*
 * A node with cgroup v1 only (RHEL 8 in its default legacy mode) has the v2
 * hierarchy in its kernel but mounted nowhere.  Every task is in it all the
 * same (in its root), and the BPF side identifies steps by it, so vnfs mounts
 * it for its own step cgroups.  It has no controllers (they belong to v1) and
 * changes nothing for Slurm.  Steps starting together take a lock so that
 * only one mounts it.
 */
static int mount_cgroup2(char *mounts, size_t mounts_size, struct vnfs_step_cgroup *cgroup,
			 char *error, size_t error_size)
{
	int lock, status;

	if ((mkdir(VNFS_RUN_DIR, 0755) < 0 && errno != EEXIST) ||
	    (mkdir(VNFS_CGROUP2_MOUNT, 0755) < 0 && errno != EEXIST)) {
		snprintf(error, error_size, "no cgroup2 hierarchy is mounted and %s cannot be made: %s",
			 VNFS_CGROUP2_MOUNT, strerror(errno));
		return -1;
	}
	lock = open(VNFS_CGROUP2_MOUNT ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock < 0 || flock(lock, LOCK_EX) < 0) {
		snprintf(error, error_size, "cannot lock %s.lock: %s", VNFS_CGROUP2_MOUNT,
			 strerror(errno));
		if (lock >= 0)
			close(lock);
		return -1;
	}
	status = find_mounted(mounts, mounts_size, cgroup, error, error_size);
	if (status == 1) {
		status = 0;
		if (mount("cgroup2", VNFS_CGROUP2_MOUNT, "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC,
			  NULL) < 0) {
			snprintf(error, error_size,
				 "no cgroup2 hierarchy is mounted and mounting one at %s failed: %s "
				 "(mount one, or set cgroup_root=)",
				 VNFS_CGROUP2_MOUNT, strerror(errno));
			status = -1;
		} else {
			snprintf(cgroup->root, sizeof(cgroup->root), "%s", VNFS_CGROUP2_MOUNT);
			vnfs_info("no cgroup2 hierarchy was mounted: mounted one at %s for the "
				  "steps' cgroups", VNFS_CGROUP2_MOUNT);
		}
	}
	close(lock);
	return status;
}

static int find_root(const char *cgroup_root, struct vnfs_step_cgroup *cgroup, char *error,
		     size_t error_size)
{
	const size_t mounts_size = 1 << 20;
	char *mounts;
	int status;

	if (cgroup_root && *cgroup_root) {
		snprintf(cgroup->root, sizeof(cgroup->root), "%s", cgroup_root);
		return 0;
	}
	mounts = malloc(mounts_size);
	if (!mounts) {
		snprintf(error, error_size, "out of memory reading /proc/self/mounts");
		return -1;
	}
	status = find_mounted(mounts, mounts_size, cgroup, error, error_size);
	if (status == 1)
		status = mount_cgroup2(mounts, mounts_size, cgroup, error, error_size);
	free(mounts);
	return status;
}

static int make_directory(const char *path, char *error, size_t error_size)
{
	if (mkdir(path, 0755) == 0 || errno == EEXIST)
		return 0;
	snprintf(error, error_size, "cannot create %s: %s", path, strerror(errno));
	return -1;
}

/*
 * mkdir vnfs/job_J/step_S.  Another step of the same job may be removing the
 * job directory at this moment, so a vanished parent is made again.
 */
static int make_owned_directory(struct vnfs_step_cgroup *cgroup, uint32_t job_id,
				const char *step_name, char *error, size_t error_size)
{
	char path[VNFS_CGROUP_PATH_MAX * 2];

	snprintf(cgroup->relative, sizeof(cgroup->relative), "/%s/job_%u/step_%s",
		 VNFS_CGROUP_DIR, job_id, step_name);
	for (int attempt = 0; attempt < 3; attempt++) {
		snprintf(path, sizeof(path), "%s/%s", cgroup->root, VNFS_CGROUP_DIR);
		if (make_directory(path, error, error_size) < 0)
			return -1;
		snprintf(path, sizeof(path), "%s/%s/job_%u", cgroup->root, VNFS_CGROUP_DIR, job_id);
		if (make_directory(path, error, error_size) < 0)
			return -1;
		snprintf(path, sizeof(path), "%s%s", cgroup->root, cgroup->relative);
		if (mkdir(path, 0755) == 0 || errno == EEXIST) {
			cgroup->owned = true;
			return 0;
		}
		if (errno != ENOENT)
			break;
	}
	snprintf(error, error_size, "cannot create %s: %s", path, strerror(errno));
	return -1;
}

static int move_pid(const struct vnfs_step_cgroup *cgroup, pid_t pid, char *error,
		    size_t error_size)
{
	char path[VNFS_CGROUP_PATH_MAX * 2 + 32], text[32];
	int length = snprintf(text, sizeof(text), "%d", (int)pid);
	int fd;

	snprintf(path, sizeof(path), "%s%s/cgroup.procs", cgroup->root, cgroup->relative);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, text, (size_t)length) != length) {
		snprintf(error, error_size, "cannot move task %d into %s: %s", (int)pid, path,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static int read_task_cgroup(pid_t pid, char *path, size_t size, bool *hybrid, char *error,
			    size_t error_size)
{
	char file[64], text[4096];

	if (pid > 0)
		snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)pid);
	else
		snprintf(file, sizeof(file), "/proc/self/cgroup");
	if (read_text(file, text, sizeof(text)) < 0) {
		snprintf(error, error_size, "cannot read %s: %s", file, strerror(errno));
		return -1;
	}
	if (vnfs_cgroup_v2_path_from_text(text, path, size, hybrid) < 0) {
		snprintf(error, error_size, "%s has no cgroup v2 line", file);
		return -1;
	}
	return 0;
}

int vnfs_step_cgroup_place(enum vnfs_cgroup_mode mode, const char *cgroup_root, pid_t pid,
			   uint32_t job_id, uint32_t step_id, struct vnfs_step_cgroup *cgroup,
			   char *error, size_t error_size)
{
	char task_path[VNFS_CGROUP_PATH_MAX], step_name[32], full[VNFS_CGROUP_PATH_MAX * 2];
	bool hybrid = false, have_path;
	struct stat status;

	memset(cgroup, 0, sizeof(*cgroup));
	vnfs_step_name(step_id, step_name, sizeof(step_name));
	if (find_root(cgroup_root, cgroup, error, error_size) < 0)
		return -1;
	/* Without a v2 line the task can still be placed in a vnfs cgroup. */
	have_path = read_task_cgroup(pid, task_path, sizeof(task_path), &hybrid, error,
				     error_size) == 0;
	if (!have_path && mode != VNFS_CGROUP_VNFS && mode != VNFS_CGROUP_AUTO)
		return -1;
	if (mode != VNFS_CGROUP_VNFS && have_path &&
	    vnfs_slurm_step_prefix(task_path, job_id, step_name, cgroup->relative,
				   sizeof(cgroup->relative)) == 0) {
		/* Slurm's own step directory. */
	} else if (mode == VNFS_CGROUP_SLURM) {
		snprintf(error, error_size,
			 "cgroup=slurm, but the task is not in a Slurm cgroup v2 step "
			 "directory (.../job_%u/step_%s; its cgroup: %s%s)",
			 job_id, step_name, have_path ? task_path : "none",
			 hybrid ? ", cgroup v1 in use" : "");
		return -1;
	} else {
		if (make_owned_directory(cgroup, job_id, step_name, error, error_size) < 0)
			return -1;
		/* Without a task (extern step) there is nothing to move yet. */
		if (pid > 0 && move_pid(cgroup, pid, error, error_size) < 0)
			return -1;
	}
	snprintf(full, sizeof(full), "%s%s", cgroup->root, cgroup->relative);
	if (stat(full, &status) < 0) {
		snprintf(error, error_size, "cannot stat %s: %s", full, strerror(errno));
		return -1;
	}
	cgroup->id = (uint64_t)status.st_ino;
	return 0;
}

static void sleep_ms(int milliseconds)
{
	struct timespec delay = { milliseconds / 1000, (long)(milliseconds % 1000) * 1000000L };

	while (nanosleep(&delay, &delay) < 0 && errno == EINTR)
		;
}

int vnfs_step_cgroup_remove(const struct vnfs_step_cgroup *cgroup, int wait_ms, char *error,
			    size_t error_size)
{
	char path[VNFS_CGROUP_PATH_MAX * 2];
	char *slash;
	int waited = 0;

	if (!cgroup->owned)
		return 0;
	snprintf(path, sizeof(path), "%s%s", cgroup->root, cgroup->relative);
	/* Exited tasks leave the cgroup a moment after slurmstepd sees them gone. */
	while (rmdir(path) < 0) {
		if (errno == ENOENT)
			break;
		if (errno != EBUSY || waited >= wait_ms) {
			snprintf(error, error_size, "cannot remove %s: %s", path, strerror(errno));
			return -1;
		}
		sleep_ms(10);
		waited += 10;
	}
	/* The job directory goes with its last step; other steps keep it busy. */
	slash = strrchr(path, '/');
	if (slash) {
		*slash = '\0';
		if (rmdir(path) < 0 && errno != ENOTEMPTY && errno != EBUSY && errno != ENOENT) {
			snprintf(error, error_size, "cannot remove %s: %s", path, strerror(errno));
			return -1;
		}
	}
	return 0;
}
