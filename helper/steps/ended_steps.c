/*
 * ended_steps.c — the ended steps kept out of their slots (ended_steps.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "helper/steps/ended_steps.h"
#include "lib/log.h"
#include "lib/record_json.h"

#define DIRECTORY_NAME "ended"

/*
 * A kept step's file: "42.0.json" for a Slurm step (what every helper
 * wrote).  Another source's job and part are text a user may influence, so
 * they name no file: its cgroup and start do, numbers that one step owns.
 */
#define FILE_NAME_MAX 96
#define FILE_LABEL_MAX (FILE_NAME_MAX + VNFS_WORKLOAD_DESCRIPTION_MAX + 16)
static void file_name(const struct vnfs_step_record *record, char *name, size_t size)
{
	uint32_t job_id, step_id;

	if (vnfs_workload_slurm_ids(&record->workload, &job_id, &step_id) == 0)
		snprintf(name, size, "%u.%u.json", job_id, step_id);
	else
		snprintf(name, size, "%s-%llu-%lld.json",
			 vnfs_workload_source_name(record->workload.source),
			 (unsigned long long)record->cgroup_id, (long long)record->start_time_ms);
}

/* A kept step's file in a message: "ended/42.4294967292.json (job 42 step
 * extern)", the step as a name where the file name has its number. */
static const char *file_label(const char *name, char *label, size_t size)
{
	struct vnfs_workload workload;
	char description[VNFS_WORKLOAD_DESCRIPTION_MAX];
	unsigned job_id, step_id;
	int end = 0;

	if (sscanf(name, "%u.%u.json%n", &job_id, &step_id, &end) != 2 || name[end] != '\0') {
		snprintf(label, size, "%s/%s", DIRECTORY_NAME, name);
		return label;
	}
	vnfs_workload_of_slurm_step(&workload, job_id, step_id);
	snprintf(label, size, "%s/%s (%s)", DIRECTORY_NAME, name,
		 vnfs_workload_describe(&workload, description, sizeof(description)));
	return label;
}

/* Appends record (already owning its arrays) to the steps kept.  The array
 * doubles when full: grown by one step at a time, a node's 4,096 kept steps
 * (1.4 KiB each) cost realloc 4,096 copies of up to 5.6 MiB wherever it
 * cannot grow in place (41 s of the unit test under AddressSanitizer). */
static int append(struct vnfs_ended_steps *ended, const struct vnfs_step_record *record)
{
	struct vnfs_step_record *grown;
	size_t capacity;

	if (ended->count == VNFS_ENDED_STEPS_MAX)
		return -1;
	if (ended->count == ended->capacity) {
		capacity = ended->capacity ? 2 * ended->capacity : 16;
		if (capacity > VNFS_ENDED_STEPS_MAX)
			capacity = VNFS_ENDED_STEPS_MAX;
		grown = realloc(ended->steps, capacity * sizeof(*grown));
		if (grown == NULL)
			return -1;
		ended->steps = grown;
		ended->capacity = capacity;
	}
	ended->steps[ended->count++] = *record;
	return 0;
}

/* Writes data as name in the directory: a temporary file (no user writes
 * here, and one helper runs at a time, so a fixed name), fsync, rename, fsync
 * of the directory. */
static int write_file(int directory_fd, const char *name, const char *data, char *error,
		      size_t error_size)
{
	char temporary[FILE_NAME_MAX + 8];
	size_t length = strlen(data), written = 0;
	int fd;

	snprintf(temporary, sizeof(temporary), "%s.tmp", name);
	fd = openat(directory_fd, temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0)
		goto failed;
	while (written < length) {
		ssize_t chunk = write(fd, data + written, length - written);
		if (chunk < 0 && errno == EINTR)
			continue;
		if (chunk <= 0)
			goto failed;
		written += (size_t)chunk;
	}
	if (fsync(fd) != 0)
		goto failed;
	if (close(fd) != 0) {
		fd = -1;
		goto failed;
	}
	fd = -1;
	if (renameat(directory_fd, temporary, directory_fd, name) != 0 || fsync(directory_fd) != 0)
		goto failed;
	return 0;
failed:
	snprintf(error, error_size, "%s/%s: %s", DIRECTORY_NAME, name, strerror(errno));
	if (fd >= 0)
		close(fd);
	unlinkat(directory_fd, temporary, 0);
	return -1;
}

static int persist(const struct vnfs_ended_steps *ended, const struct vnfs_step_record *record,
		   char *error, size_t error_size)
{
	struct json_object *json;
	char name[FILE_NAME_MAX];
	int result;

	if (ended->directory_fd < 0)
		return 0;
	json = vnfs_step_record_to_json(record);
	if (json == NULL) {
		snprintf(error, error_size, "out of memory");
		return -1;
	}
	file_name(record, name, sizeof(name));
	result = write_file(ended->directory_fd, name,
			    json_object_to_json_string_ext(json, JSON_C_TO_STRING_PLAIN), error,
			    error_size);
	json_object_put(json);
	return result;
}

/* The whole file, bounded, or NULL with a message: a regular file only. */
static char *read_file(int directory_fd, const char *name, char *error, size_t error_size)
{
	int fd = openat(directory_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat status;
	char *data = NULL;
	size_t used = 0;

	if (fd < 0 || fstat(fd, &status) != 0) {
		snprintf(error, error_size, "%s", strerror(errno));
		goto out;
	}
	if (!S_ISREG(status.st_mode) || status.st_size > VNFS_ENDED_STEP_FILE_MAX) {
		snprintf(error, error_size, "not a regular file of at most %d bytes",
			 VNFS_ENDED_STEP_FILE_MAX);
		goto out;
	}
	data = malloc((size_t)status.st_size + 1);
	if (data == NULL) {
		snprintf(error, error_size, "out of memory");
		goto out;
	}
	while (used < (size_t)status.st_size) {
		ssize_t chunk = read(fd, data + used, (size_t)status.st_size - used);
		if (chunk < 0 && errno == EINTR)
			continue;
		if (chunk <= 0)
			break;
		used += (size_t)chunk;
	}
	data[used] = '\0';
out:
	if (fd >= 0)
		close(fd);
	return data;
}

/* Reads back one kept step; a file that fails is logged and left. */
static void load_file(struct vnfs_ended_steps *ended, const char *name)
{
	struct vnfs_step_record record;
	struct json_object *json = NULL;
	char error[512] = "", label[FILE_LABEL_MAX];
	char *data = read_file(ended->directory_fd, name, error, sizeof(error));

	if (data == NULL)
		goto failed;
	json = json_tokener_parse(data);
	free(data);
	if (json == NULL || !json_object_is_type(json, json_type_object)) {
		snprintf(error, sizeof(error), "not a JSON object");
		goto failed;
	}
	if (vnfs_step_record_from_json(json, &record, error, sizeof(error)) != 0)
		goto failed;
	if (append(ended, &record) != 0) {
		vnfs_step_record_free_arrays(&record);
		snprintf(error, sizeof(error), "more than %d ended steps kept", VNFS_ENDED_STEPS_MAX);
		goto failed;
	}
	json_object_put(json);
	return;
failed:
	json_object_put(json);
	vnfs_error("%s: not read back, left in place: %s",
		   file_label(name, label, sizeof(label)), error);
}

static bool is_step_file(const char *name)
{
	size_t length = strlen(name);

	return length > 5 && strcmp(name + length - 5, ".json") == 0 && name[0] != '.';
}

static int load(struct vnfs_ended_steps *ended, char *error, size_t error_size)
{
	int fd = dup(ended->directory_fd);
	DIR *directory = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *entry;

	if (directory == NULL) {
		snprintf(error, error_size, "%s: %s", DIRECTORY_NAME, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((entry = readdir(directory)) != NULL)
		if (is_step_file(entry->d_name))
			load_file(ended, entry->d_name);
	closedir(directory);
	return 0;
}

/* STATE_DIR/ended, made if missing, refused unless it is ours alone. */
static int open_directory(const char *state_dir, char *error, size_t error_size)
{
	int parent = open(state_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), fd = -1;
	struct stat status;

	if (parent < 0) {
		snprintf(error, error_size, "%s: %s", state_dir, strerror(errno));
		return -1;
	}
	if (mkdirat(parent, DIRECTORY_NAME, 0700) != 0 && errno != EEXIST)
		snprintf(error, error_size, "%s/%s: %s", state_dir, DIRECTORY_NAME, strerror(errno));
	else if ((fd = openat(parent, DIRECTORY_NAME,
			      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		snprintf(error, error_size, "%s/%s: %s", state_dir, DIRECTORY_NAME, strerror(errno));
	else if (fstat(fd, &status) != 0 || status.st_uid != geteuid() ||
		 (status.st_mode & (S_IWGRP | S_IWOTH | S_IRWXO)) != 0) {
		snprintf(error, error_size,
			 "%s/%s: not a directory of uid %u closed to others: refused", state_dir,
			 DIRECTORY_NAME, (unsigned)geteuid());
		close(fd);
		fd = -1;
	}
	close(parent);
	return fd;
}

int vnfs_ended_steps_open(struct vnfs_ended_steps *ended, const char *state_dir, char *error,
			  size_t error_size)
{
	memset(ended, 0, sizeof(*ended));
	ended->directory_fd = -1;
	if (state_dir == NULL || state_dir[0] == '\0')
		return 0;
	ended->directory_fd = open_directory(state_dir, error, error_size);
	if (ended->directory_fd < 0)
		return -1;
	if (load(ended, error, error_size) != 0) {
		vnfs_ended_steps_close(ended);
		return -1;
	}
	return 0;
}

void vnfs_ended_steps_close(struct vnfs_ended_steps *ended)
{
	for (size_t i = 0; i < ended->count; i++)
		vnfs_step_record_free_arrays(&ended->steps[i]);
	free(ended->steps);
	if (ended->directory_fd >= 0)
		close(ended->directory_fd);
	memset(ended, 0, sizeof(*ended));
	ended->directory_fd = -1;
}

bool vnfs_ended_steps_has_room(const struct vnfs_ended_steps *ended, uint32_t uid)
{
	size_t of_uid = 0;

	if (ended->count >= VNFS_ENDED_STEPS_MAX)
		return false;
	for (size_t i = 0; i < ended->count; i++)
		of_uid += ended->steps[i].uid == uid;
	return of_uid < VNFS_ENDED_STEPS_PER_USER_MAX;
}

int vnfs_ended_steps_add(struct vnfs_ended_steps *ended, const struct vnfs_step_record *record,
			 char *error, size_t error_size)
{
	struct vnfs_step_record copy;

	error[0] = '\0';
	if (!vnfs_ended_steps_has_room(ended, record->uid)) {
		snprintf(error, error_size, "no room for another ended step");
		return -1;
	}
	if (vnfs_step_record_copy(&copy, record) != 0) {
		snprintf(error, error_size, "out of memory");
		return -1;
	}
	if (persist(ended, &copy, error, error_size) != 0 || append(ended, &copy) != 0) {
		if (error[0] == '\0')
			snprintf(error, error_size, "out of memory");
		vnfs_step_record_free_arrays(&copy);
		return -1;
	}
	return 0;
}

/* Drops steps[index] and its file; the last step takes its place. */
static void remove_at(struct vnfs_ended_steps *ended, size_t index)
{
	struct vnfs_step_record *record = &ended->steps[index];
	char name[FILE_NAME_MAX], label[FILE_LABEL_MAX];

	if (ended->directory_fd >= 0) {
		file_name(record, name, sizeof(name));
		if (unlinkat(ended->directory_fd, name, 0) != 0 && errno != ENOENT)
			vnfs_warning("%s: not removed: %s", file_label(name, label, sizeof(label)),
				     strerror(errno));
	}
	vnfs_step_record_free_arrays(record);
	ended->steps[index] = ended->steps[--ended->count];
}

size_t vnfs_ended_steps_remove_job(struct vnfs_ended_steps *ended,
				   const struct vnfs_workload *job)
{
	size_t removed = 0;

	for (size_t i = ended->count; i-- > 0;) {
		if (vnfs_workload_same_job(&ended->steps[i].workload, job)) {
			remove_at(ended, i);
			removed++;
		}
	}
	if (removed > 0 && ended->directory_fd >= 0 && fsync(ended->directory_fd) != 0)
		vnfs_warning("%s: fsync: %s", DIRECTORY_NAME, strerror(errno));
	return removed;
}

void vnfs_ended_steps_remove_step(struct vnfs_ended_steps *ended,
				  const struct vnfs_workload *step)
{
	for (size_t i = ended->count; i-- > 0;)
		if (vnfs_workload_equal(&ended->steps[i].workload, step))
			remove_at(ended, i);
}

bool vnfs_ended_steps_has_job(const struct vnfs_ended_steps *ended,
			      const struct vnfs_workload *job)
{
	for (size_t i = 0; i < ended->count; i++)
		if (vnfs_workload_same_job(&ended->steps[i].workload, job))
			return true;
	return false;
}
