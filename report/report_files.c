/*
 * report_files.c — writing a finished job's report files (see the header).
 *
 * A reader (vnfs-report on another node, a user's cat) must never see half a
 * file, so each is written to a temporary name in the same directory and
 * renamed over the final one.  The long report has no latency baseline: the
 * helper writes it at FINISH without querying its own history.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "lib/record_json.h"
#include "report/jobs.h"
#include "report/report_files.h"
#include "report/text.h"
#include "report/times.h"

static int make_directory(const char *path, char *error, size_t error_size)
{
	if (mkdir(path, 0755) < 0 && errno != EEXIST) {
		snprintf(error, error_size, "cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* report_dir and its missing parents, like mkdir -p. */
static int make_directories(const char *path, char *error, size_t error_size)
{
	char copy[4096];
	if (snprintf(copy, sizeof(copy), "%s", path) >= (int)sizeof(copy)) {
		snprintf(error, error_size, "report directory path too long");
		return -1;
	}
	for (char *slash = strchr(copy + 1, '/'); slash != NULL; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (make_directory(copy, error, error_size) < 0)
			return -1;
		*slash = '/';
	}
	return make_directory(copy, error, error_size);
}

static int give_to_owner(const char *path, uint32_t uid, char *error, size_t error_size)
{
	if (geteuid() != 0)
		return 0;
	if (chown(path, (uid_t)uid, (gid_t)-1) < 0) {
		snprintf(error, error_size, "cannot give %s to uid %u: %s", path, uid,
			 strerror(errno));
		return -1;
	}
	return 0;
}

static int write_atomically(const char *path, const char *text, size_t length, uint32_t uid,
			    char *error, size_t error_size)
{
	char temporary[4200];
	snprintf(temporary, sizeof(temporary), "%s.tmp.XXXXXX", path);
	int fd = mkstemp(temporary);
	if (fd < 0) {
		snprintf(error, error_size, "cannot create a file next to %s: %s", path,
			 strerror(errno));
		return -1;
	}
	const char *what = NULL;
	size_t written = 0;
	while (written < length && what == NULL) {
		ssize_t n = write(fd, text + written, length - written);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			what = "write";
		else
			written += (size_t)n;
	}
	if (what == NULL && fchmod(fd, 0644) < 0)
		what = "chmod";
	if (what == NULL && fsync(fd) < 0)
		what = "fsync";
	if (close(fd) < 0 && what == NULL)
		what = "close";
	if (what == NULL && give_to_owner(temporary, uid, error, error_size) < 0) {
		unlink(temporary);
		return -1;
	}
	if (what == NULL && rename(temporary, path) < 0)
		what = "rename";
	if (what != NULL) {
		snprintf(error, error_size, "%s: %s failed: %s", path, what, strerror(errno));
		unlink(temporary);
		return -1;
	}
	return 0;
}

/* The node name becomes a file name: nothing that could leave the directory. */
static bool safe_file_name(const char *name)
{
	return name != NULL && name[0] != '\0' && name[0] != '.' && strchr(name, '/') == NULL;
}

static char *long_text(const struct vnfs_job *job, size_t *length)
{
	struct report_set set;
	struct report_row *rows = NULL;
	size_t row_count = 0;
	char *text = NULL;
	report_set_init(&set);
	for (size_t i = 0; i < job->step_count; i++)
		if (report_set_add(&set, &job->steps[i]) < 0)
			goto out;
	if (report_build_rows(&set, &rows, &row_count) < 0)
		goto out;
	FILE *out = open_memstream(&text, length);
	if (out == NULL)
		goto out;
	if (row_count == 0)
		fprintf(out, "Job %u: no steps were recorded\n", job->job_id);
	else
		report_print_long(out, &rows[0], &rows[1], row_count - 1, NULL,
				  job->end_time_ms != 0 ? job->end_time_ms : report_now_ms());
	if (fclose(out) != 0) {
		free(text);
		text = NULL;
	}
out:
	report_rows_free(rows, row_count);
	report_set_free(&set);
	return text;
}

int vnfs_report_write_files(const struct vnfs_job *job, const char *report_dir, char *error,
			    size_t error_size)
{
	if (report_dir == NULL || report_dir[0] == '\0') {
		snprintf(error, error_size, "no report directory configured");
		return -1;
	}
	if (!safe_file_name(job->node)) {
		snprintf(error, error_size, "node name '%s' cannot name a file",
			 job->node != NULL ? job->node : "");
		return -1;
	}
	char directory[4096], path[4200];
	snprintf(directory, sizeof(directory), "%s/%u", report_dir, job->job_id);
	if (make_directories(report_dir, error, error_size) < 0 ||
	    make_directory(directory, error, error_size) < 0 ||
	    give_to_owner(directory, job->uid, error, error_size) < 0)
		return -1;

	/* One line, as every other vnfs JSON output (jq makes it readable). */
	struct json_object *json = vnfs_job_to_json(job);
	const char *json_text = json_object_to_json_string_ext(
		json, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	char *line = NULL;
	int line_length = asprintf(&line, "%s\n", json_text);
	json_object_put(json);
	if (line_length < 0) {
		snprintf(error, error_size, "job %u: out of memory", job->job_id);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s.json", directory, job->node);
	int rc = write_atomically(path, line, (size_t)line_length, job->uid, error, error_size);
	free(line);
	if (rc < 0)
		return -1;

	size_t text_length = 0;
	char *text = long_text(job, &text_length);
	if (text == NULL) {
		snprintf(error, error_size, "job %u: out of memory writing the text report",
			 job->job_id);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s.txt", directory, job->node);
	rc = write_atomically(path, text, text_length, job->uid, error, error_size);
	free(text);
	return rc;
}
