/*
 * containers.c — a cgroup's container, Kubernetes' or podman's, from its
 * runtime's own state (see containers.h).
 */
/* open_by_handle_at needs _GNU_SOURCE: configure.ac's AC_USE_SYSTEM_EXTENSIONS */
#include "lib/containers/containers.h"

#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/containers/runtime_json.h"
#include "lib/containers/storage_names.h"
#include "lib/log.h"

/* include/linux/exportfs.h's FILEID_KERNFS, not in the UAPI headers: the
 * file handle type of a kernfs node, whose 64-bit id is a cgroup2 id. */
#define HANDLE_KERNFS 0xfe

const struct vnfs_runtime_state_dir vnfs_runtime_state_dirs[] = {
#define VNFS_RUNTIME_STATE_DIR_ROW(runtime, directory, file, annotations) \
	{ VNFS_RUNTIME_##runtime, directory, file, annotations, NULL },
	VNFS_RUNTIME_STATE_DIRS(VNFS_RUNTIME_STATE_DIR_ROW)
#undef VNFS_RUNTIME_STATE_DIR_ROW
};
const size_t vnfs_runtime_state_dir_count =
	sizeof(vnfs_runtime_state_dirs) / sizeof(vnfs_runtime_state_dirs[0]);

int vnfs_podman_state_dir(const char *graphroot, const char *driver,
			  struct vnfs_runtime_state_dir *dir, char *directory, size_t size)
{
	int written = snprintf(directory, size, "%s/%s-containers", graphroot, driver);

	if (graphroot[0] != '/' || written < 0 || (size_t)written >= size)
		return -1;
	*dir = (struct vnfs_runtime_state_dir){ VNFS_RUNTIME_PODMAN, directory,
						"userdata/config.json",
						VNFS_OCI_ANNOTATIONS_NONE, "containers.json" };
	return 0;
}

int vnfs_cgroup2_mount(char *path, size_t size)
{
	FILE *mounts = setmntent("/proc/self/mounts", "re");
	struct mntent *mount;
	int result = -1;

	while (mounts != NULL && result < 0 && (mount = getmntent(mounts)) != NULL)
		if (strcmp(mount->mnt_type, "cgroup2") == 0 &&
		    (size_t)snprintf(path, size, "%s", mount->mnt_dir) < size)
			result = 0;
	if (mounts != NULL)
		endmntent(mounts);
	return result;
}

int vnfs_cgroup_of_pid(pid_t pid, char *path, size_t size, char *error, size_t error_size)
{
	char name[64], line[VNFS_CONTAINER_CGROUP_PATH_MAX + 8];
	FILE *file;
	int result = -1;

	snprintf(name, sizeof(name), "/proc/%d/cgroup", (int)pid);
	file = fopen(name, "re");
	if (file == NULL) {
		snprintf(error, error_size, "%s: %s", name, strerror(errno));
		return -1;
	}
	while (result < 0 && fgets(line, sizeof(line), file) != NULL) {
		size_t length = strcspn(line, "\n");

		line[length] = '\0';
		if (strncmp(line, "0::/", 4) == 0 && length - 3 < size) {
			memcpy(path, line + 3, length - 2);
			result = 0;
		}
	}
	fclose(file);
	if (result < 0)
		snprintf(error, error_size, "%s: no cgroup v2 path", name);
	return result;
}

/* What /proc/self/fd/fd points to, into path.  Returns 0, or -1. */
static int fd_path(int fd, char *path, size_t size)
{
	char link[64];
	ssize_t length;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	length = readlink(link, path, size);
	if (length < 0 || (size_t)length >= size)
		return -1;
	path[length] = '\0';
	return 0;
}

int vnfs_cgroup_open_by_id(int root_fd, uint64_t id)
{
	union {
		struct file_handle handle;
		char space[sizeof(struct file_handle) + sizeof(uint64_t)];
	} buffer;

	buffer.handle.handle_bytes = sizeof(uint64_t);
	buffer.handle.handle_type = HANDLE_KERNFS;
	memcpy(buffer.handle.f_handle, &id, sizeof(id));
	return open_by_handle_at(root_fd, &buffer.handle, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

bool vnfs_cgroup_gone(int root_fd, uint64_t id)
{
	int fd;

	if (root_fd < 0 || id == 0)
		return false;
	fd = vnfs_cgroup_open_by_id(root_fd, id);
	if (fd >= 0) {
		close(fd);
		return false;
	}
	return errno == ESTALE || errno == ENOENT;
}

int vnfs_cgroup_path_of_id(int root_fd, uint64_t id, char *path, size_t size, char *error,
			   size_t error_size)
{
	char root[VNFS_CONTAINER_CGROUP_PATH_MAX], full[VNFS_CONTAINER_CGROUP_PATH_MAX];
	size_t root_length;
	int fd = vnfs_cgroup_open_by_id(root_fd, id), status;

	if (fd < 0) {
		snprintf(error, error_size, "cgroup %llu: %s", (unsigned long long)id,
			 strerror(errno));
		return -1;
	}
	status = fd_path(root_fd, root, sizeof(root)) == 0 && fd_path(fd, full, sizeof(full)) == 0
			 ? 0
			 : -1;
	close(fd);
	root_length = strlen(root);
	if (status == 0 && (strncmp(full, root, root_length) != 0 ||
			    (full[root_length] != '/' && full[root_length] != '\0')))
		status = -1; /* another mount of the hierarchy, or a path "(deleted)" */
	if (status == 0 && (size_t)snprintf(path, size, "%s",
					    full[root_length] == '\0' ? "/" : full + root_length) >= size)
		status = -1;
	if (status < 0)
		snprintf(error, error_size, "cgroup %llu: its path cannot be told",
			 (unsigned long long)id);
	return status;
}

/*
 * systemd's unit path of a slice: "a-b-c.slice" is /a.slice/a-b.slice/
 * a-b-c.slice, "-.slice" the root.  Returns 0, or -1 when it does not fit
 * or is no slice name.
 */
static int slice_path(const char *slice, size_t length, char *path, size_t size)
{
	size_t used = 0;
	const size_t suffix = sizeof(".slice") - 1;

	path[0] = '\0';
	if (length == suffix + 1 && slice[0] == '-' && strncmp(slice + 1, ".slice", suffix) == 0)
		return 0;
	if (length <= suffix || strncmp(slice + length - suffix, ".slice", suffix) != 0)
		return -1;
	for (size_t end = 0; end < length - suffix; end++) {
		if (slice[end] != '-' && end + 1 != length - suffix)
			continue;
		size_t name_length = slice[end] == '-' ? end : end + 1;
		int written = snprintf(path + used, size - used, "/%.*s.slice", (int)name_length,
				       slice);

		if (written < 0 || (size_t)written >= size - used)
			return -1;
		used += (size_t)written;
	}
	return 0;
}

bool vnfs_cgroups_path_names(const char *cgroups_path, const char *path)
{
	char expected[VNFS_CONTAINER_CGROUP_PATH_MAX];
	const char *first, *second;
	size_t used;

	if (cgroups_path[0] == '/')
		return strcmp(cgroups_path, path) == 0;
	/* "slice:prefix:name", the unit "<prefix>-<name>.scope" in the slice. */
	first = strchr(cgroups_path, ':');
	second = first != NULL ? strchr(first + 1, ':') : NULL;
	if (second == NULL || strchr(second + 1, ':') != NULL ||
	    slice_path(cgroups_path, (size_t)(first - cgroups_path), expected, sizeof(expected)) < 0)
		return false;
	used = strlen(expected);
	if ((size_t)snprintf(expected + used, sizeof(expected) - used, "/%.*s-%s.scope",
			     (int)(second - first - 1), first + 1, second + 1) >=
	    sizeof(expected) - used)
		return false;
	return strcmp(expected, path) == 0;
}

/* A directory of the runtime's state: root's, written by no one else; or,
 * for a directory above the state (ancestor), root's and sticky if others
 * may write it (/tmp: no one else may move root's entries there). */
static int trusted_directory(int fd, const char *what, bool ancestor, char *error,
			     size_t error_size)
{
	struct stat status;

	if (fstat(fd, &status) != 0 || !S_ISDIR(status.st_mode)) {
		snprintf(error, error_size, "%s: not a directory", what);
		return -1;
	}
	if (status.st_uid != 0 || ((status.st_mode & (S_IWGRP | S_IWOTH)) != 0 &&
				   !(ancestor && (status.st_mode & S_ISVTX)))) {
		snprintf(error, error_size,
			 "%s: owned by uid %u with mode %03o: a runtime's state must be root's "
			 "and written by no one else", what, (unsigned)status.st_uid,
			 (unsigned)(status.st_mode & 0777));
		return -1;
	}
	return 0;
}

/*
 * Opens the directory name in at (never through a symbolic link) and
 * checks it is trusted.  Returns the fd, -2 when there is no such directory
 * (not an error: that runtime has no such container), or -1 with a message.
 */
static int open_trusted(int at, const char *name, const char *what, char *error,
			size_t error_size)
{
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT)
		return -2;
	if (fd < 0) {
		snprintf(error, error_size, "%s: %s", what, strerror(errno));
		return -1;
	}
	if (trusted_directory(fd, what, false, error, error_size) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Opens the state directory at the absolute path directory one component at
 * a time from "/", never through a link, each directory above it trusted as
 * an ancestor and itself as state: no one but root can have put it, or
 * anything on the way to it, there.  Returns as open_trusted.
 */
static int open_trusted_path(const char *directory, char *error, size_t error_size)
{
	char path[VNFS_CONTAINER_CGROUP_PATH_MAX], *component, *next;
	int fd, inner;

	if (directory[0] != '/' || (size_t)snprintf(path, sizeof(path), "%s", directory) >=
					   sizeof(path)) {
		snprintf(error, error_size, "%s: not an absolute path that fits", directory);
		return -1;
	}
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || trusted_directory(fd, "/", true, error, error_size) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	for (component = path + 1; *component != '\0'; component = next) {
		bool last;

		next = component + strcspn(component, "/");
		last = *next == '\0' || next[strspn(next, "/")] == '\0';
		if (*next != '\0')
			*next++ = '\0';
		next += strspn(next, "/");
		if (component[0] == '\0')
			continue;
		inner = openat(fd, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (inner < 0) {
			if (errno == ENOENT)
				return -2;
			snprintf(error, error_size, "%s: %s: %s", directory, component,
				 strerror(errno));
			return -1;
		}
		if (trusted_directory(inner, directory, !last, error, error_size) < 0) {
			close(inner);
			return -1;
		}
		fd = inner;
	}
	return fd;
}

/* config.json of container id under dir (file may be "a/b/config.json").
 * Returns 1 with *text, 0 when dir has no such container, -1 with a message. */
static int read_config(const struct vnfs_runtime_state_dir *dir, const char *id, char **text,
		       size_t *length, char *error, size_t error_size)
{
	char file[128], *component, *next;
	int fd = open_trusted_path(dir->directory, error, error_size);
	int status;

	if (fd < 0)
		return fd == -2 ? 0 : -1;
	snprintf(file, sizeof(file), "%s/%s", id, dir->config_file);
	component = file;
	while ((next = strchr(component, '/')) != NULL) {
		int inner;

		*next = '\0';
		inner = open_trusted(fd, component, dir->directory, error, error_size);
		close(fd);
		if (inner < 0)
			return inner == -2 ? 0 : -1;
		fd = inner;
		component = next + 1;
	}
	/* The container's directory without its config (not yet, or no more)
	 * is no container of this runtime's. */
	if (faccessat(fd, component, F_OK, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT) {
		close(fd);
		return 0;
	}
	status = vnfs_oci_config_read(fd, component, text, length, error, error_size);
	close(fd);
	return status < 0 ? -1 : 1;
}

/* The workload of config, when it names the container at path as its own.
 * Returns 1 with *workload, 0 when it does not, -1 with a message. */
static int workload_of_config(const struct vnfs_oci_config *config,
			      const struct vnfs_container_cgroup *cgroup, const char *path,
			      struct vnfs_workload *workload, char *error, size_t error_size)
{
	char job[VNFS_WORKLOAD_JOB_MAX], part[VNFS_WORKLOAD_PART_MAX];

	if (!config->kubernetes || !vnfs_cgroups_path_names(config->cgroups_path, path) ||
	    (config->pod_uid[0] != '\0' && strcmp(config->pod_uid, cgroup->pod_uid) != 0))
		return 0;
	if (vnfs_oci_workload_text(config, job, sizeof(job), part, sizeof(part), error,
				   error_size) < 0 ||
	    vnfs_workload_set(workload, VNFS_SOURCE_KUBERNETES, job, part, error, error_size) < 0)
		return -1;
	return 1;
}

/* The variables of config the caller asked for, as tags: a value that is no
 * tag value (it came from a user's pod spec) is left out, with a warning. */
static void tags_of_config(const struct vnfs_oci_config *config, const char *const *names,
			   const struct vnfs_workload *workload, struct vnfs_tag_list *tags)
{
	char problem[256], name[VNFS_WORKLOAD_DESCRIPTION_MAX];

	vnfs_tags_init(tags);
	for (size_t i = 0; i < config->env_count; i++) {
		if (config->env[i].status == VNFS_OCI_ENV_UNSET)
			continue;
		if (config->env[i].status == VNFS_OCI_ENV_SET &&
		    vnfs_tags_set(tags, names[i], config->env[i].value, problem,
				  sizeof(problem)) == 0)
			continue;
		vnfs_warning("%s: its variable %s is not kept as a tag (%s)",
			     vnfs_workload_describe(workload, name, sizeof(name)), names[i],
			     config->env[i].status == VNFS_OCI_ENV_REFUSED
				     ? "a NUL or too long"
				     : problem);
	}
}

/*
 * The name dir's engine gives container id, from its names file.
 * Returns 1 with *workload (source container, part the short id), 0 when
 * the file does not list it, -1 with a message.
 */
static int workload_of_names(const struct vnfs_runtime_state_dir *dir, const char *id,
			     struct vnfs_workload *workload, char *error, size_t error_size)
{
	char name[VNFS_CONTAINER_NAME_MAX + 1], short_id[VNFS_CONTAINER_SHORT_ID_LENGTH + 1];
	int fd = open_trusted_path(dir->directory, error, error_size);
	char *text = NULL;
	size_t length = 0;
	int result;

	if (fd < 0)
		return fd == -2 ? 0 : -1;
	/* No names file (a store with no container yet): none of its. */
	if (faccessat(fd, dir->names_file, F_OK, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT) {
		close(fd);
		return 0;
	}
	result = vnfs_runtime_file_read(fd, dir->names_file, VNFS_STORAGE_NAMES_SIZE_MAX, &text,
					&length, error, error_size);
	close(fd);
	if (result == 0)
		result = vnfs_storage_container_name(text, length, id, name, sizeof(name), error,
						     error_size);
	free(text);
	if (result != 1)
		return result;
	snprintf(short_id, sizeof(short_id), "%.*s", VNFS_CONTAINER_SHORT_ID_LENGTH, id);
	return vnfs_workload_set(workload, VNFS_SOURCE_CONTAINER, name, short_id, error,
				 error_size) < 0
		       ? -1
		       : 1;
}

/* Whether dir is where the container of cgroup may be described: a
 * Kubernetes runtime's for a container under kubepods (of the runtime its
 * path names, if it names one), a plain engine's of its own runtime for the
 * others. */
static bool may_describe(const struct vnfs_runtime_state_dir *dir,
			 const struct vnfs_container_cgroup *cgroup)
{
	if (cgroup->kubernetes != (dir->names_file == NULL))
		return false;
	return cgroup->runtime == VNFS_RUNTIME_UNKNOWN || dir->runtime == cgroup->runtime;
}

/* The workload of the container of cgroup (at path) in dir, if dir knows
 * it.  Returns 1 with *workload (and *tags), 0, or -1 with a message. */
static int identify_in(const struct vnfs_runtime_state_dir *dir,
		       const struct vnfs_container_cgroup *cgroup, const char *path,
		       const char *const *tag_variables, size_t tag_variable_count,
		       struct vnfs_oci_config *config, struct vnfs_workload *workload,
		       struct vnfs_tag_list *tags, char *error, size_t error_size)
{
	char *text = NULL;
	size_t length = 0;
	int result = read_config(dir, cgroup->container_id, &text, &length, error, error_size);

	if (result == 1 && vnfs_oci_config_parse(text, length, dir->annotations, tag_variables,
						 tag_variable_count, config, error,
						 error_size) < 0)
		result = -1;
	free(text);
	if (result != 1)
		return result;
	if (dir->names_file == NULL)
		result = workload_of_config(config, cgroup, path, workload, error, error_size);
	else if (!vnfs_cgroups_path_names(config->cgroups_path, path))
		result = 0; /* a cgroup named after the container, not its own */
	else
		result = workload_of_names(dir, cgroup->container_id, workload, error, error_size);
	if (result == 1 && tags != NULL)
		tags_of_config(config, tag_variables, workload, tags);
	return result;
}

int vnfs_identify_container(const char *path, const struct vnfs_runtime_state_dir *dirs,
			    size_t count, const char *const *tag_variables,
			    size_t tag_variable_count, struct vnfs_workload *workload,
			    struct vnfs_tag_list *tags, char *error, size_t error_size)
{
	struct vnfs_container_cgroup cgroup;
	struct vnfs_oci_config *config;
	int result = 0;

	if (vnfs_container_cgroup_parse(path, &cgroup) != VNFS_CGROUP_CONTAINER ||
	    (!cgroup.kubernetes && cgroup.runtime != VNFS_RUNTIME_PODMAN))
		return 0;
	config = malloc(sizeof(*config)); /* 10 KiB: not on a collector's stack */
	if (config == NULL) {
		snprintf(error, error_size, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < count && result == 0; i++)
		if (may_describe(&dirs[i], &cgroup))
			result = identify_in(&dirs[i], &cgroup, path, tag_variables,
					     tag_variable_count, config, workload, tags, error,
					     error_size);
	free(config);
	return result;
}
