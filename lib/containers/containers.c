/*
 * containers.c — a cgroup's container, Kubernetes', podman's or Docker's,
 * from its runtime's own state (see containers.h).
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

#include "lib/containers/docker_state.h"
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

int vnfs_docker_state_dir(const char *data_root, struct vnfs_runtime_state_dir *dir,
			  char *directory, size_t size)
{
	int written = snprintf(directory, size, "%s/containers", data_root);

	if (data_root[0] != '/' || written < 0 || (size_t)written >= size)
		return -1;
	*dir = (struct vnfs_runtime_state_dir){ VNFS_RUNTIME_DOCKER, directory,
						VNFS_DOCKER_CONFIG_FILE, VNFS_OCI_ANNOTATIONS_NONE,
						VNFS_DOCKER_HOST_CONFIG_FILE };
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

/* parent (absolute) without repeated or trailing '/', then "/<id>", into
 * path: filepath.Join's text for dockerd's cgroupfs driver.  Returns 0, or
 * -1 when it does not fit. */
static int joined_path(const char *parent, const char *id, char *path, size_t size)
{
	size_t used = 0;

	for (const char *at = parent; *at != '\0'; at++) {
		if (*at == '/' && (at[1] == '/' || at[1] == '\0'))
			continue;
		if (used + 1 >= size)
			return -1;
		path[used++] = *at;
	}
	return (size_t)snprintf(path + used, size - used, "/%s", id) < size - used ? 0 : -1;
}

bool vnfs_docker_cgroup_names(const char *cgroup_parent, const char *id, const char *path)
{
	char cgroups_path[VNFS_CONTAINER_CGROUP_PATH_MAX];
	int written;

	/* The cgroupsPath dockerd writes to the container's OCI config, per
	 * driver (daemon/oci_linux.go), and the cgroup that names. */
	if (cgroup_parent[0] == '\0' || cgroup_parent[0] == '/') {
		if (joined_path(cgroup_parent[0] != '\0' ? cgroup_parent : "/docker", id,
				cgroups_path, sizeof(cgroups_path)) == 0 &&
		    vnfs_cgroups_path_names(cgroups_path, path))
			return true;
	}
	if (cgroup_parent[0] == '/')
		return false;
	written = snprintf(cgroups_path, sizeof(cgroups_path), "%s:docker:%s",
			   cgroup_parent[0] != '\0' ? cgroup_parent : "system.slice", id);
	return written > 0 && (size_t)written < sizeof(cgroups_path) &&
	       vnfs_cgroups_path_names(cgroups_path, path);
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

/* The variables the caller asked for (env, count of them, env[i] names[i]'s,
 * from an OCI config or Docker's record), as tags: a value that is no tag
 * value (it came from a user's pod spec or `docker run -e`) is left out,
 * with a warning. */
static void tags_of_env(const struct vnfs_oci_env_value *env, size_t count,
			const char *const *names, const struct vnfs_workload *workload,
			struct vnfs_tag_list *tags)
{
	char problem[256], name[VNFS_WORKLOAD_DESCRIPTION_MAX];

	vnfs_tags_init(tags);
	for (size_t i = 0; i < count; i++) {
		if (env[i].status == VNFS_OCI_ENV_UNSET)
			continue;
		if (env[i].status == VNFS_OCI_ENV_SET &&
		    vnfs_tags_set(tags, names[i], env[i].value, problem, sizeof(problem)) == 0)
			continue;
		vnfs_warning("%s: its variable %s is not kept as a tag (%s)",
			     vnfs_workload_describe(workload, name, sizeof(name)), names[i],
			     env[i].status == VNFS_OCI_ENV_REFUSED ? "a NUL or too long" : problem);
	}
}

/* A plain container's workload: source container, job its name, part its
 * short id.  Returns 1, or -1 with a message. */
static int workload_of_container(const char *name, const char *id,
				 struct vnfs_workload *workload, char *error, size_t error_size)
{
	char short_id[VNFS_CONTAINER_SHORT_ID_LENGTH + 1];

	snprintf(short_id, sizeof(short_id), "%.*s", VNFS_CONTAINER_SHORT_ID_LENGTH, id);
	return vnfs_workload_set(workload, VNFS_SOURCE_CONTAINER, name, short_id, error,
				 error_size) < 0
		       ? -1
		       : 1;
}

/*
 * The name dir's engine gives container id, from its names file.
 * Returns 1 with *workload (source container, part the short id), 0 when
 * the file does not list it, -1 with a message.
 */
static int workload_of_names(const struct vnfs_runtime_state_dir *dir, const char *id,
			     struct vnfs_workload *workload, char *error, size_t error_size)
{
	char name[VNFS_CONTAINER_NAME_MAX + 1];
	int fd = open_trusted_path(dir->directory, error, error_size);
	char *text = NULL;
	size_t length = 0;
	int result;

	if (fd < 0)
		return fd == -2 ? 0 : -1;
	/* No names file (a store with no container yet): none of its. */
	if (faccessat(fd, dir->engine_file, F_OK, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT) {
		close(fd);
		return 0;
	}
	result = vnfs_runtime_file_read(fd, dir->engine_file, VNFS_STORAGE_NAMES_SIZE_MAX, &text,
					&length, error, error_size);
	close(fd);
	if (result == 0)
		result = vnfs_storage_container_name(text, length, id, name, sizeof(name), error,
						     error_size);
	free(text);
	return result != 1 ? result : workload_of_container(name, id, workload, error, error_size);
}

/* One of Docker's files of a container (the directory container_fd): 1
 * with *text, 0 when it is gone (a container being made or removed), -1
 * with a message naming the file. */
static int read_docker_file(int container_fd, const char *file, char **text, size_t *length,
			    char *error, size_t error_size)
{
	if (faccessat(container_fd, file, F_OK, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT)
		return 0;
	return vnfs_runtime_file_read(container_fd, file, VNFS_DOCKER_STATE_SIZE_MAX, text,
				      length, error, error_size) < 0
		       ? -1
		       : 1;
}

/* Docker's record of container id in dir, both files read and parsed.
 * Returns 1 with *container, 0 when there is none (or it is another's),
 * -1 with a message. */
static int read_docker_record(const struct vnfs_runtime_state_dir *dir, const char *id,
			      const char *const *tag_variables, size_t tag_variable_count,
			      struct vnfs_docker_container *container, char *error,
			      size_t error_size)
{
	char *config = NULL, *host_config = NULL;
	size_t config_length = 0, host_config_length = 0;
	int fd = open_trusted_path(dir->directory, error, error_size), inner, result;

	if (fd < 0)
		return fd == -2 ? 0 : -1;
	inner = open_trusted(fd, id, dir->directory, error, error_size);
	close(fd);
	if (inner < 0)
		return inner == -2 ? 0 : -1; /* a message of its own, naming the directory */
	result = read_docker_file(inner, dir->config_file, &config, &config_length, error,
				  error_size);
	if (result == 1)
		result = read_docker_file(inner, dir->engine_file, &host_config,
					  &host_config_length, error, error_size);
	close(inner);
	if (result == 1)
		result = vnfs_docker_container_parse(config, config_length, host_config,
						     host_config_length, id, tag_variables,
						     tag_variable_count, container, error,
						     error_size);
	free(config);
	free(host_config);
	/* The files' messages name the file alone: where it is, too. */
	if (result < 0) {
		char problem[512];

		snprintf(problem, sizeof(problem), "%s", error);
		vnfs_fail(error, error_size, "%s/%s: %s", dir->directory, id, problem);
	}
	return result;
}

/* The Docker container of cgroup (at path) in dir, when its record names
 * this cgroup as its own.  Returns 1 with *workload (and *tags), 0, -1. */
static int identify_docker(const struct vnfs_runtime_state_dir *dir,
			   const struct vnfs_container_cgroup *cgroup, const char *path,
			   const char *const *tag_variables, size_t tag_variable_count,
			   struct vnfs_workload *workload, struct vnfs_tag_list *tags,
			   char *error, size_t error_size)
{
	/* 12 KiB: not on a collector's stack */
	struct vnfs_docker_container *container = malloc(sizeof(*container));
	int result;

	if (container == NULL)
		return vnfs_fail(error, error_size, "out of memory");
	result = read_docker_record(dir, cgroup->container_id, tag_variables, tag_variable_count,
				    container, error, error_size);
	/* A cgroup named after the container, not the one dockerd made. */
	if (result == 1 &&
	    !vnfs_docker_cgroup_names(container->cgroup_parent, cgroup->container_id, path))
		result = 0;
	if (result == 1)
		result = workload_of_container(container->name, cgroup->container_id, workload,
					       error, error_size);
	if (result == 1 && tags != NULL)
		tags_of_env(container->env, container->env_count, tag_variables, workload, tags);
	free(container);
	return result;
}

/* Whether dir is where the container of cgroup may be described: a
 * Kubernetes runtime's for a container under kubepods (of the runtime its
 * path names, if it names one), a plain engine's of its own runtime for the
 * others. */
static bool may_describe(const struct vnfs_runtime_state_dir *dir,
			 const struct vnfs_container_cgroup *cgroup)
{
	if (cgroup->kubernetes != (dir->engine_file == NULL))
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
	if (dir->engine_file == NULL)
		result = workload_of_config(config, cgroup, path, workload, error, error_size);
	else if (!vnfs_cgroups_path_names(config->cgroups_path, path))
		result = 0; /* a cgroup named after the container, not its own */
	else
		result = workload_of_names(dir, cgroup->container_id, workload, error, error_size);
	if (result == 1 && tags != NULL)
		tags_of_env(config->env, config->env_count, tag_variables, workload, tags);
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
	    (!cgroup.kubernetes && cgroup.runtime != VNFS_RUNTIME_PODMAN &&
	     cgroup.runtime != VNFS_RUNTIME_DOCKER))
		return 0;
	config = malloc(sizeof(*config)); /* 10 KiB: not on a collector's stack */
	if (config == NULL) {
		snprintf(error, error_size, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < count && result == 0; i++) {
		if (!may_describe(&dirs[i], &cgroup))
			continue;
		/* Docker's records are its own, not an OCI config. */
		result = dirs[i].runtime == VNFS_RUNTIME_DOCKER
				 ? identify_docker(&dirs[i], &cgroup, path, tag_variables,
						   tag_variable_count, workload, tags, error,
						   error_size)
				 : identify_in(&dirs[i], &cgroup, path, tag_variables,
					       tag_variable_count, config, workload, tags, error,
					       error_size);
	}
	free(config);
	return result;
}
