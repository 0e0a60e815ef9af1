/*
 * sink_jsonlog.c — the JSON lines log: one line per step per interval
 * ({..., "type":"step"}) and one per finished job ({..., "type":"job"}),
 * in the JSON of lib/record_json.c.
 *
 * Rotation by size: a line that would take the file past max_bytes first
 * moves path to path.1, path.1 to path.2, ... path.(keep-1) to path.keep
 * (the old path.keep is gone), so a file never exceeds max_bytes unless a
 * single line does, and lines are never split between files.  An interval's
 * lines go out in one write() per file and are fdatasync()ed before
 * publish() returns; a file is synced before it is rotated.  A line that
 * cannot be written is counted as dropped and the file is reopened at the
 * next interval, as it is when someone else moved or deleted it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "helper/outputs/sink.h"
#include "lib/log.h"
#include "lib/record_json.h"

#define FILE_MODE 0640

struct jsonlog {
	char path[VNFS_PATH_MAX];
	uint64_t max_bytes; /* 0: never rotate */
	uint32_t keep;
	int fd;
	uint64_t file_size;

	/* Lines of the current call not yet written. */
	char *pending;
	size_t pending_length;
	size_t pending_capacity;
	uint64_t pending_lines;

	atomic_uint_fast64_t dropped;
	bool failing; /* a failure was logged; the next success says so */
};

static int open_log(struct jsonlog *log, char *error, size_t error_size)
{
	struct stat status;

	log->fd = open(log->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, FILE_MODE);
	if (log->fd < 0) {
		snprintf(error, error_size, "jsonlog: cannot open %s: %s", log->path, strerror(errno));
		return -1;
	}
	if (fstat(log->fd, &status) != 0) {
		snprintf(error, error_size, "jsonlog: cannot stat %s: %s", log->path, strerror(errno));
		close(log->fd);
		log->fd = -1;
		return -1;
	}
	log->file_size = (uint64_t)status.st_size;
	return 0;
}

static void report_failure(struct jsonlog *log, const char *what)
{
	if (!log->failing)
		vnfs_warning("jsonlog: %s; dropping lines until it works again", what);
	log->failing = true;
}

static void drop_pending(struct jsonlog *log)
{
	atomic_fetch_add(&log->dropped, log->pending_lines);
	log->pending_length = 0;
	log->pending_lines = 0;
}

/* Writes the pending lines in one go (short writes continue). */
static int write_pending(struct jsonlog *log)
{
	char what[VNFS_PATH_MAX + 64];
	size_t written = 0;

	if (log->pending_lines == 0)
		return 0;
	if (log->fd < 0) {
		if (open_log(log, what, sizeof(what)) != 0) {
			report_failure(log, what);
			drop_pending(log);
			return -1;
		}
	}
	while (written < log->pending_length) {
		ssize_t result = write(log->fd, log->pending + written, log->pending_length - written);
		if (result < 0 && errno == EINTR)
			continue;
		if (result <= 0) {
			snprintf(what, sizeof(what), "cannot write %s: %s", log->path,
				 result < 0 ? strerror(errno) : "no progress");
			report_failure(log, what);
			/* Lines already out stay out; the rest are lost.  A partial line
			 * is not worth guessing about: reopen and start clean. */
			close(log->fd);
			log->fd = -1;
			drop_pending(log);
			return -1;
		}
		written += (size_t)result;
	}
	log->file_size += log->pending_length;
	log->pending_length = 0;
	log->pending_lines = 0;
	if (log->failing) {
		vnfs_info("jsonlog: writing %s again", log->path);
		log->failing = false;
	}
	return 0;
}

static void rotated_name(const struct jsonlog *log, uint32_t index, char *out, size_t size)
{
	if (index == 0)
		snprintf(out, size, "%s", log->path);
	else
		snprintf(out, size, "%s.%u", log->path, index);
}

static void rotate(struct jsonlog *log)
{
	char from[VNFS_PATH_MAX + 16], to[VNFS_PATH_MAX + 16], what[VNFS_PATH_MAX * 2 + 64];

	if (log->fd >= 0) {
		if (fdatasync(log->fd) != 0)
			vnfs_warning("jsonlog: fdatasync %s: %s", log->path, strerror(errno));
		close(log->fd);
		log->fd = -1;
	}
	if (log->keep == 0) {
		if (unlink(log->path) != 0 && errno != ENOENT)
			vnfs_warning("jsonlog: cannot remove %s: %s", log->path, strerror(errno));
	}
	for (uint32_t index = log->keep; index >= 1; index--) {
		rotated_name(log, index - 1, from, sizeof(from));
		rotated_name(log, index, to, sizeof(to));
		if (rename(from, to) != 0 && errno != ENOENT)
			vnfs_warning("jsonlog: cannot rename %s to %s: %s", from, to, strerror(errno));
	}
	if (open_log(log, what, sizeof(what)) != 0)
		report_failure(log, what);
}

static int reserve_pending(struct jsonlog *log, size_t more)
{
	if (log->pending_length + more <= log->pending_capacity)
		return 0;
	size_t capacity = log->pending_capacity ? log->pending_capacity : 65536;
	while (capacity < log->pending_length + more)
		capacity *= 2;
	char *grown = realloc(log->pending, capacity);
	if (!grown)
		return -1;
	log->pending = grown;
	log->pending_capacity = capacity;
	return 0;
}

/* Queues one record as a line, rotating first if the line would not fit. */
static void add_line(struct jsonlog *log, struct json_object *object, const char *type)
{
	if (!object) {
		atomic_fetch_add(&log->dropped, 1);
		return;
	}
	json_object_object_add(object, "type", json_object_new_string(type));
	size_t length;
	const char *line = json_object_to_json_string_length(
		object, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &length);

	if (log->max_bytes && log->file_size + log->pending_length + length + 1 > log->max_bytes &&
	    log->file_size + log->pending_length > 0) {
		write_pending(log);
		rotate(log);
	}
	if (!line || reserve_pending(log, length + 1) != 0) {
		atomic_fetch_add(&log->dropped, 1);
	} else {
		memcpy(log->pending + log->pending_length, line, length);
		log->pending[log->pending_length + length] = '\n';
		log->pending_length += length + 1;
		log->pending_lines++;
	}
	json_object_put(object);
}

static void finish_call(struct jsonlog *log)
{
	if (write_pending(log) == 0 && log->fd >= 0 && fdatasync(log->fd) != 0)
		vnfs_warning("jsonlog: fdatasync %s: %s", log->path, strerror(errno));
}

/* Someone moved or deleted the file: start a new one at path. */
static void follow_path(struct jsonlog *log)
{
	struct stat by_path, by_fd;

	if (log->fd < 0)
		return;
	if (stat(log->path, &by_path) == 0 && fstat(log->fd, &by_fd) == 0 &&
	    by_path.st_dev == by_fd.st_dev && by_path.st_ino == by_fd.st_ino)
		return;
	vnfs_info("jsonlog: %s was moved or removed; starting a new file", log->path);
	close(log->fd);
	log->fd = -1;
	char what[VNFS_PATH_MAX + 64];
	if (open_log(log, what, sizeof(what)) != 0)
		report_failure(log, what);
}

static void jsonlog_publish(void *state, const struct vnfs_interval *interval)
{
	struct jsonlog *log = state;

	follow_path(log);
	for (size_t i = 0; i < interval->step_count; i++)
		add_line(log, vnfs_step_record_to_json(&interval->steps[i]), "step");
	finish_call(log);
}

static void jsonlog_job_finished(void *state, const struct vnfs_job *job)
{
	struct jsonlog *log = state;

	follow_path(log);
	add_line(log, vnfs_job_to_json(job), "job");
	finish_call(log);
}

static uint64_t jsonlog_dropped(void *state)
{
	struct jsonlog *log = state;
	return atomic_load(&log->dropped);
}

static void jsonlog_close(void *state)
{
	struct jsonlog *log = state;

	if (!log)
		return;
	if (log->fd >= 0) {
		if (fdatasync(log->fd) != 0)
			vnfs_warning("jsonlog: fdatasync %s: %s", log->path, strerror(errno));
		close(log->fd);
	}
	free(log->pending);
	free(log);
}

int vnfs_sink_jsonlog_open(struct vnfs_sink *sink, const struct vnfs_config *config,
			   char *error, size_t error_size)
{
	if (config->jsonlog.path[0] == '\0') {
		snprintf(error, error_size, "jsonlog: no path configured");
		return -1;
	}
	struct jsonlog *log = calloc(1, sizeof(*log));
	if (!log) {
		snprintf(error, error_size, "jsonlog: out of memory");
		return -1;
	}
	snprintf(log->path, sizeof(log->path), "%s", config->jsonlog.path);
	log->max_bytes = config->jsonlog.max_bytes;
	log->keep = config->jsonlog.keep;
	atomic_init(&log->dropped, 0);
	if (open_log(log, error, error_size) != 0) {
		free(log);
		return -1;
	}
	*sink = (struct vnfs_sink){
		.name = "jsonlog",
		.state = log,
		.publish = jsonlog_publish,
		.job_finished = jsonlog_job_finished,
		.dropped = jsonlog_dropped,
		.close = jsonlog_close,
	};
	return 0;
}
