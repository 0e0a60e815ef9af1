/*
 * files.c — a finished job's report files: writing them (the helper) and
 * reading them back, from a directory that may hold anything (vnfs-report);
 * see files.h.
 *
 * A reader (vnfs-report on another node, a user's cat) must never see half a
 * file, so each is written to a temporary name in the same directory and
 * renamed over the final one.  The long report has no latency baseline: the
 * helper writes it at FINISH without querying its own history.
 *
 * The helper is root and the job's owner is not.  Older versions gave the
 * job directory to the owner and then chowned the temporary file by path:
 * the owner swapped it for a symlink and root chowned whatever it pointed
 * to.  So every directory level is opened with O_NOFOLLOW and checked on
 * its descriptor, the job directory stays root's, every file is created with
 * O_EXCL and changed only through its own descriptor, and nothing is ever
 * looked up by path once a directory is open.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "lib/escape.h"
#include "lib/job_report/files.h"
#include "lib/job_report/rows.h"
#include "lib/record_json.h"
#include "lib/job_report/text.h"
#include "lib/job_report/times.h"

#define REPORT_DIR_MODE 0711    /* users may enter, not list the job ids */
#define PARENT_DIR_MODE 0755    /* missing parents of report_dir, as mkdir -p */
#define JOB_DIR_MODE 0755       /* a user may list their job's node files */
#define FILE_MODE 0640          /* the owner and the administrator group */

/* ".<node>.json.tmp.<16 hex digits>" must fit in NAME_MAX. */
#define MAX_NODE_NAME (NAME_MAX - 32)

/* ---- rendering ------------------------------------------------------------ */

static char *json_line(const struct vnfs_job *job, size_t *length)
{
	/* One line, as every other vnfs JSON output (jq makes it readable). */
	struct json_object *json = vnfs_job_to_json(job);
	if (json == NULL)
		return NULL;
	const char *json_text = json_object_to_json_string_ext(
		json, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	char *line = NULL;
	int line_length = json_text != NULL ? asprintf(&line, "%s\n", json_text) : -1;
	json_object_put(json);
	if (line_length < 0)
		return NULL;
	*length = (size_t)line_length;
	return line;
}

/* The job's workload: its own, or Slurm's job_id when the producer set only
 * the number (as lib/job_report/rows.h takes such records). */
static void job_workload(const struct vnfs_job *job, struct vnfs_workload *workload)
{
	if (job->workload.job[0] != '\0') {
		*workload = job->workload;
		workload->part[0] = '\0';
	} else {
		vnfs_workload_of_slurm_job(workload, job->job_id);
	}
}

/* "42", "source:job" as messages name a job. */
static const char *job_text(const struct vnfs_workload *job, char *buf, size_t size)
{
	struct vnfs_workload whole = *job;
	whole.part[0] = '\0';
	return report_workload_id(&whole, buf, size);
}

static char *long_text(const struct vnfs_job *job, size_t *length)
{
	struct vnfs_workload workload;
	char id[REPORT_ID_MAX];
	job_workload(job, &workload);
	job_text(&workload, id, sizeof(id));
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
		fprintf(out, "Job %s: no steps were recorded\n", id);
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

/* ---- bounds ---------------------------------------------------------------- */

void vnfs_report_json_measure(const char *text, size_t length, struct vnfs_report_json_size *size)
{
	/* Not a parser: only strings are told apart, so that their commas and
	 * braces are not counted. */
	bool in_string = false, escaped = false;
	size->objects = 0;
	size->values = 1;
	for (size_t i = 0; i < length; i++) {
		char c = text[i];
		if (in_string) {
			if (escaped)
				escaped = false;
			else if (c == '\\')
				escaped = true;
			else if (c == '"')
				in_string = false;
			continue;
		}
		if (c == '"')
			in_string = true;
		else if (c == '{')
			size->objects++, size->values++;
		else if (c == '[' || c == ',')
			size->values++;
	}
}

int vnfs_report_json_check(size_t length, const struct vnfs_report_json_size *size, char *why,
			   size_t why_size)
{
	if (length > VNFS_REPORT_FILE_MAX_BYTES)
		snprintf(why, why_size, "%zu bytes, more than %s", length,
			 VNFS_REPORT_FILE_MAX_TEXT);
	else if (size->objects > VNFS_REPORT_FILE_MAX_OBJECTS)
		snprintf(why, why_size, "%zu JSON objects, more than %u", size->objects,
			 VNFS_REPORT_FILE_MAX_OBJECTS);
	else if (size->values > VNFS_REPORT_FILE_MAX_VALUES)
		snprintf(why, why_size, "%zu JSON values, more than %u", size->values,
			 VNFS_REPORT_FILE_MAX_VALUES);
	else
		return 0;
	return -1;
}

void vnfs_report_files_free(struct vnfs_report_files *files)
{
	free(files->json);
	free(files->text);
	memset(files, 0, sizeof(*files));
}

int vnfs_report_render(const struct vnfs_job *job, struct vnfs_report_files *files, char *error,
		       size_t error_size)
{
	struct vnfs_workload workload;
	char id[REPORT_ID_MAX];
	job_workload(job, &workload);
	job_text(&workload, id, sizeof(id));
	memset(files, 0, sizeof(*files));
	files->json = json_line(job, &files->json_length);
	if (files->json == NULL) {
		snprintf(error, error_size, "job %s: out of memory rendering the JSON report", id);
		return -1;
	}
	/* A file vnfs-report would refuse to read is not worth writing. */
	struct vnfs_report_json_size size;
	char why[128];
	vnfs_report_json_measure(files->json, files->json_length, &size);
	if (vnfs_report_json_check(files->json_length, &size, why, sizeof(why)) < 0) {
		snprintf(error, error_size, "job %s: JSON report not written: %s (vnfs-report "
			 "would not read it)", id, why);
		vnfs_report_files_free(files);
		return -1;
	}
	files->text = long_text(job, &files->text_length);
	if (files->text == NULL) {
		snprintf(error, error_size, "job %s: out of memory rendering the text report", id);
		vnfs_report_files_free(files);
		return -1;
	}
	return 0;
}

/* ---- directories ---------------------------------------------------------- */

/*
 * Whether a directory is ours alone: owned by root (or by the user running
 * a test) and writable by nobody else.  A sticky directory such as /tmp is
 * acceptable above report_dir: others may add entries there but not rename
 * or remove ours, and whatever they add is checked in turn.
 */
static int check_directory(int fd, const char *path, size_t path_length, bool allow_sticky,
			   bool is_job_dir, char *error, size_t error_size)
{
	struct stat st;
	if (fstat(fd, &st) < 0) {
		snprintf(error, error_size, "%.*s: %s", (int)path_length, path, strerror(errno));
		return -1;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		if (is_job_dir)
			snprintf(error, error_size,
				 "%.*s is owned by uid %u, not root (left by an older vnfs-helper?): "
				 "remove it so the helper can create it owned by root",
				 (int)path_length, path, (unsigned)st.st_uid);
		else
			snprintf(error, error_size,
				 "%.*s is owned by uid %u, not root: the helper writes only under "
				 "directories no user controls", (int)path_length, path,
				 (unsigned)st.st_uid);
		return -1;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 &&
	    !(allow_sticky && (st.st_mode & S_ISVTX) != 0)) {
		snprintf(error, error_size,
			 "%.*s is writable by group or others (mode %04o): the helper writes only "
			 "under directories no user controls", (int)path_length, path,
			 (unsigned)(st.st_mode & 07777));
		return -1;
	}
	return 0;
}

/* Why name in parent could not be opened as a directory (errno as left). */
static void describe_open_failure(int parent, const char *name, const char *path,
				  size_t path_length, char *error, size_t error_size)
{
	int saved = errno;
	struct stat st;
	if ((saved == ELOOP || saved == ENOTDIR) &&
	    fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		snprintf(error, error_size, "%.*s is %s: refused, the helper follows no link there",
			 (int)path_length, path,
			 S_ISLNK(st.st_mode) ? "a symbolic link" : "not a directory");
		return;
	}
	snprintf(error, error_size, "%.*s: %s", (int)path_length, path, strerror(saved));
}

/*
 * Opens name in parent as a directory, never through a symlink, creating it
 * with exactly mode when missing (fchmod: the umask must not change it).
 * *created tells whether it was made here.  Returns the descriptor, or -1.
 */
static int open_directory(int parent, const char *name, const char *path, size_t path_length,
			  mode_t mode, bool *created, char *error, size_t error_size)
{
	const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	*created = false;
	int fd = openat(parent, name, flags);
	if (fd < 0 && errno == ENOENT) {
		if (mkdirat(parent, name, mode) == 0)
			*created = true;
		else if (errno != EEXIST) {
			snprintf(error, error_size, "cannot create %.*s: %s", (int)path_length, path,
				 strerror(errno));
			return -1;
		}
		fd = openat(parent, name, flags);
	}
	if (fd < 0) {
		describe_open_failure(parent, name, path, path_length, error, error_size);
		return -1;
	}
	if (*created && fchmod(fd, mode) < 0) {
		snprintf(error, error_size, "%.*s: chmod failed: %s", (int)path_length, path,
			 strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Opens report_dir one level at a time from / (or the working directory),
 * creating what is missing, like mkdir -p but without following any link
 * and checking each level on its descriptor.  Returns the descriptor of
 * report_dir itself, or -1 with a message in error.
 */
static int open_report_dir(const char *report_dir, char *error, size_t error_size)
{
	const bool absolute = report_dir[0] == '/';
	int fd = open(absolute ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(error, error_size, "%s: %s", absolute ? "/" : ".", strerror(errno));
		return -1;
	}
	if (check_directory(fd, absolute ? "/" : ".", 1, true, false, error, error_size) < 0)
		goto fail;
	const char *at = report_dir;
	while (*at != '\0') {
		while (*at == '/')
			at++;
		const char *end = strchrnul(at, '/');
		size_t length = (size_t)(end - at);
		const char *rest = end;
		while (*rest == '/')
			rest++;
		const bool last = *rest == '\0';
		size_t path_length = (size_t)(end - report_dir);
		char name[NAME_MAX + 1];
		if (length == 0)
			break;
		if (length > NAME_MAX) {
			snprintf(error, error_size, "%.*s: name too long", (int)path_length, report_dir);
			goto fail;
		}
		memcpy(name, at, length);
		name[length] = '\0';
		at = rest;
		/* Refused rather than resolved: the last name must be report_dir itself. */
		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
			snprintf(error, error_size,
				 "report directory %s: '.' and '..' are not allowed in it", report_dir);
			goto fail;
		}
		bool created;
		int child = open_directory(fd, name, report_dir, path_length,
					   last ? REPORT_DIR_MODE : PARENT_DIR_MODE, &created, error,
					   error_size);
		close(fd);
		fd = child;
		if (fd < 0)
			return -1;
		if (check_directory(fd, report_dir, path_length, !last, false, error, error_size) < 0)
			goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

/*
 * The name of a job's directory in report_dir (see files.h): Slurm's job
 * number, or "SOURCE-JOB" with the job's '%' and '/' written "%25" and
 * "%2F", so that no job text can leave report_dir or name another job's
 * directory.  Returns 0, or -1 with a message when job is no job or its
 * name would be longer than a file name may be.
 */
static int job_directory_name(const struct vnfs_workload *job, char *name, size_t size,
			      char *error, size_t error_size)
{
	char id[REPORT_ID_MAX];
	uint32_t job_id;
	size_t used;

	if (job->source == VNFS_SOURCE_SLURM) {
		/* Only the number as Slurm writes it: "007" is not job 7's directory. */
		if (vnfs_workload_slurm_job_id(job, &job_id) < 0)
			goto invalid;
		snprintf(name, size, "%u", job_id);
		if (strcmp(name, job->job) != 0)
			goto invalid;
		return 0;
	}
	if (vnfs_workload_source_name(job->source) == NULL ||
	    !vnfs_workload_text_valid(job->job, sizeof(job->job)))
		goto invalid;
	used = (size_t)snprintf(name, size, "%s-", vnfs_workload_source_name(job->source));
	for (const char *c = job->job; *c != '\0' && used < size; c++)
		used += (size_t)(*c == '/' || *c == '%'
					 ? snprintf(name + used, size - used, "%%%02X",
						    (unsigned char)*c)
					 : snprintf(name + used, size - used, "%c", *c));
	if (used < size && used <= NAME_MAX)
		return 0;
	snprintf(error, error_size, "job %.80s...: too long to name a report directory",
		 job_text(job, id, sizeof(id)));
	return -1;
invalid:
	if (vnfs_workload_source_name(job->source) != NULL)
		snprintf(error, error_size, "%s job '%.80s' cannot name a report directory",
			 vnfs_workload_source_name(job->source),
			 vnfs_workload_text_valid(job->job, sizeof(job->job)) ? job->job : "");
	else
		snprintf(error, error_size, "job of an unknown source (%d) cannot name a report "
			 "directory", (int)job->source);
	return -1;
}

/* report_dir/<job>, root's and no one else's: see the header. */
static int open_job_dir(int report_fd, const char *report_dir, const char *name, char *error,
			size_t error_size)
{
	char path[PATH_MAX];
	int path_length = snprintf(path, sizeof(path), "%s/%s", report_dir, name);
	if (path_length < 0 || (size_t)path_length >= sizeof(path)) {
		snprintf(error, error_size, "report directory path too long");
		return -1;
	}
	bool created;
	int fd = open_directory(report_fd, name, path, (size_t)path_length, JOB_DIR_MODE, &created,
				error, error_size);
	if (fd < 0)
		return -1;
	if (check_directory(fd, path, (size_t)path_length, false, true, error, error_size) < 0) {
		close(fd);
		return -1;
	}
	/* The new entry in report_dir must survive a crash as well as the files. */
	if (created && fsync(report_fd) < 0) {
		snprintf(error, error_size, "%s: fsync failed: %s", report_dir, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* ---- files ------------------------------------------------------------------ */

/*
 * Creates a new temporary file next to final_name, never reusing or
 * following an existing entry (O_EXCL).  The name starts with '.', so
 * readers listing *.json never see it.  Returns the descriptor, or -1.
 */
static int create_temporary(int dir_fd, const char *final_name, char *name, size_t size)
{
	static atomic_uint sequence;
	for (int attempt = 0; attempt < 64; attempt++) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		unsigned long long unique = ((unsigned long long)getpid() << 40) ^
					    ((unsigned long long)atomic_fetch_add(&sequence, 1)
					     << 24) ^ (unsigned long long)now.tv_nsec;
		snprintf(name, size, ".%s.tmp.%016llx", final_name, unique);
		int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

static int write_all(int fd, const char *data, size_t length)
{
	size_t written = 0;
	while (written < length) {
		ssize_t n = write(fd, data + written, length - written);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		written += (size_t)n;
	}
	return 0;
}

/* Fills a temporary file and gives it its final mode and owner; by descriptor. */
static const char *fill_file(int fd, const char *data, size_t length, uint32_t owner_uid,
			     gid_t admin_gid)
{
	if (write_all(fd, data, length) < 0)
		return "write";
	if (fchmod(fd, FILE_MODE) < 0)
		return "chmod";
	/* Only root may give files away; tests run as any user too. */
	if (geteuid() == 0 && fchown(fd, (uid_t)owner_uid, admin_gid) < 0)
		return "chown";
	if (fsync(fd) < 0)
		return "fsync";
	return NULL;
}

static int store_file(int dir_fd, const char *directory, const char *final_name,
		      const char *data, size_t length, uint32_t owner_uid, gid_t admin_gid,
		      char *error, size_t error_size)
{
	char temporary[NAME_MAX + 1];
	int fd = create_temporary(dir_fd, final_name, temporary, sizeof(temporary));
	if (fd < 0) {
		snprintf(error, error_size, "%s/%s: cannot create a temporary file: %s", directory,
			 final_name, strerror(errno));
		return -1;
	}
	const char *what = fill_file(fd, data, length, owner_uid, admin_gid);
	int saved = errno;
	if (close(fd) < 0 && what == NULL) {
		what = "close";
		saved = errno;
	}
	/* rename replaces whatever final_name is, a planted symlink too, never its target. */
	if (what == NULL && renameat(dir_fd, temporary, dir_fd, final_name) < 0) {
		what = "rename";
		saved = errno;
	}
	if (what == NULL)
		return 0;
	snprintf(error, error_size, "%s/%s: %s failed: %s", directory, final_name, what,
		 strerror(saved));
	unlinkat(dir_fd, temporary, 0);
	return -1;
}

/* The node name becomes a file name: nothing that could leave the directory. */
static bool safe_file_name(const char *name)
{
	return name != NULL && name[0] != '\0' && name[0] != '.' && strchr(name, '/') == NULL &&
	       strlen(name) <= MAX_NODE_NAME;
}

static int store_both(const struct vnfs_report_files *files, int job_fd, const char *directory,
		      uint32_t owner_uid, gid_t admin_gid, const char *node, char *error,
		      size_t error_size)
{
	char name[NAME_MAX + 1];
	snprintf(name, sizeof(name), "%s.json", node);
	if (store_file(job_fd, directory, name, files->json, files->json_length, owner_uid,
		       admin_gid, error, error_size) < 0)
		return -1;
	snprintf(name, sizeof(name), "%s.txt", node);
	if (store_file(job_fd, directory, name, files->text, files->text_length, owner_uid,
		       admin_gid, error, error_size) < 0)
		return -1;
	/* The renames themselves are durable only once the directory is. */
	if (fsync(job_fd) < 0) {
		snprintf(error, error_size, "%s: fsync failed: %s", directory, strerror(errno));
		return -1;
	}
	return 0;
}

int vnfs_report_store(const struct vnfs_report_files *files, const char *report_dir,
		      const struct vnfs_workload *job, uint32_t owner_uid, gid_t admin_gid,
		      const char *node, char *error, size_t error_size)
{
	char name[NAME_MAX + 1], id[REPORT_ID_MAX];
	if (report_dir == NULL || report_dir[0] == '\0') {
		snprintf(error, error_size, "no report directory configured");
		return -1;
	}
	if (!safe_file_name(node)) {
		snprintf(error, error_size, "node name '%.80s' cannot name a file",
			 node != NULL ? node : "");
		return -1;
	}
	if (files->json == NULL || files->text == NULL) {
		snprintf(error, error_size, "job %s: nothing rendered to store",
			 job_text(job, id, sizeof(id)));
		return -1;
	}
	if (job_directory_name(job, name, sizeof(name), error, error_size) < 0)
		return -1;
	int report_fd = open_report_dir(report_dir, error, error_size);
	if (report_fd < 0)
		return -1;
	int job_fd = open_job_dir(report_fd, report_dir, name, error, error_size);
	close(report_fd);
	if (job_fd < 0)
		return -1;
	char directory[PATH_MAX];
	snprintf(directory, sizeof(directory), "%s/%s", report_dir, name);
	int rc = store_both(files, job_fd, directory, owner_uid, admin_gid, node, error,
			    error_size);
	close(job_fd);
	return rc;
}

int vnfs_report_write_files(const struct vnfs_job *job, const char *report_dir, char *error,
			    size_t error_size)
{
	/* Checked before rendering, so that a bad configuration costs nothing. */
	if (report_dir == NULL || report_dir[0] == '\0') {
		snprintf(error, error_size, "no report directory configured");
		return -1;
	}
	if (!safe_file_name(job->node)) {
		snprintf(error, error_size, "node name '%.80s' cannot name a file",
			 job->node != NULL ? job->node : "");
		return -1;
	}
	struct vnfs_report_files files;
	struct vnfs_workload workload;
	job_workload(job, &workload);
	if (vnfs_report_render(job, &files, error, error_size) < 0)
		return -1;
	int rc = vnfs_report_store(&files, report_dir, &workload, job->uid, (gid_t)-1,
				   job->node, error, error_size);
	vnfs_report_files_free(&files);
	return rc;
}

/* ---- reading them back ---- */

int report_add_job_json(struct report_set *set, struct json_object *job, const char *origin,
			char *error, size_t error_size)
{
	struct json_object *steps;
	if (!json_object_is_type(job, json_type_object) ||
	    !json_object_object_get_ex(job, "steps", &steps) ||
	    !json_object_is_type(steps, json_type_array)) {
		snprintf(error, error_size, "%s: not a vnfs job (no \"steps\" array)", origin);
		return -1;
	}
	for (size_t i = 0; i < json_object_array_length(steps); i++) {
		struct vnfs_step_record record;
		char message[256], safe[256 * VNFS_ESCAPE_GROWTH];
		if (vnfs_step_record_from_json(json_object_array_get_idx(steps, i), &record, message,
					       sizeof(message)) < 0) {
			/* The message may quote the input (an unknown field's name). */
			snprintf(error, error_size, "%s: steps[%zu]: %s", origin, i,
				 vnfs_escape_string(VNFS_ESCAPE_TERMINAL, message, safe,
						    sizeof(safe)));
			return -1;
		}
		if (report_set_take(set, &record) < 0) {
			snprintf(error, error_size, "out of memory");
			return -1;
		}
	}
	return 0;
}

/*
 * A job directory may hold anything: an older helper gave it to the job's
 * owner, and on a shared filesystem other hosts write there too.  So every
 * entry is looked at without following it (a FIFO would block the reader, a
 * symlink to /dev/zero fill its memory), only regular files of bounded size
 * are read, through a descriptor opened relative to the directory, and a
 * file's records are taken only if they belong to the directory's job and,
 * unless root wrote the file, to the file's owner.  Anything else is
 * skipped with a message naming the file and the reason; the others are
 * still read.
 */

/*
 * Entries of one job directory looked at, at most: one per node (Slurm's
 * largest clusters have tens of thousands), and a bound on the time a
 * directory stuffed with junk can cost.
 */
#define REPORT_MAX_DIRECTORY_ENTRIES 65536

/*
 * What all the files of one job directory may cost together, in JSON
 * objects and values (files.h has the costs): as much as one file,
 * so that vnfs-report spends well under a second on a directory whatever it
 * holds.  That is 500 to 650 step records over all the job's nodes; the
 * files past it are skipped, each with a message.
 */
#define REPORT_JOB_MAX_OBJECTS ((size_t)VNFS_REPORT_FILE_MAX_OBJECTS)
#define REPORT_JOB_MAX_VALUES ((size_t)VNFS_REPORT_FILE_MAX_VALUES)

/*
 * What each file costs the budget at least, in values: opening and reading
 * a file costs about as much as parsing 64 values, so a directory of many
 * tiny files is bounded too (to 4,096 files read).  Every real report file
 * holds several hundred values.
 */
#define REPORT_FILE_MIN_VALUES 64

/* What the files of a job directory not read yet may still cost. */
struct report_budget {
	size_t objects;
	size_t values;
};

/* Text from a file (its name, a user name) made harmless on a terminal. */
static const char *printable(const char *text, char *out, size_t size)
{
	return vnfs_escape_string(VNFS_ESCAPE_TERMINAL, text, out, size);
}

/* Adds one message to error, after those already there ("; " between). */
__attribute__((format(printf, 3, 4))) static void add_message(char *error, size_t error_size,
							      const char *format, ...)
{
	size_t used = strnlen(error, error_size);
	if (used + 3 >= error_size)
		return;
	if (used > 0) {
		memcpy(error + used, "; ", 3);
		used += 2;
	}
	va_list arguments;
	va_start(arguments, format);
	vsnprintf(error + used, error_size - used, format, arguments);
	va_end(arguments);
}

/* The name of uid on this node, or false when it has none. */
static bool user_name(uid_t uid, char *name, size_t size)
{
	struct passwd entry, *found = NULL;
	char buffer[4096];
	if (getpwuid_r(uid, &entry, buffer, sizeof(buffer), &found) != 0 || found == NULL)
		return false;
	snprintf(name, size, "%s", found->pw_name);
	return true;
}

/*
 * Whether a file's records may be shown as what they say: all of the
 * directory's job, and, in a file root did not write, all of the file's
 * owner (by uid, and by name where this node knows the uid; a writer that
 * could not resolve the name wrote the number).
 */
static int check_records(const struct report_set *records, const struct vnfs_workload *job,
			 const struct stat *st, const char *origin, char *error, size_t error_size)
{
	char held[REPORT_ID_MAX], wanted[REPORT_ID_MAX];
	char owner[64], number[16], safe[sizeof(records->records[0].user) * VNFS_ESCAPE_GROWTH];
	bool known = st->st_uid != 0 && user_name(st->st_uid, owner, sizeof(owner));
	snprintf(number, sizeof(number), "%u", (unsigned)st->st_uid);
	for (size_t i = 0; i < records->count; i++) {
		const struct vnfs_step_record *r = &records->records[i];
		if (!vnfs_workload_same_job(&r->workload, job)) {
			snprintf(error, error_size, "%s: holds a record of job %s, not of job %s",
				 origin, job_text(&r->workload, held, sizeof(held)),
				 job_text(job, wanted, sizeof(wanted)));
			return -1;
		}
		if (st->st_uid == 0)
			continue;
		if (r->uid != st->st_uid) {
			snprintf(error, error_size,
				 "%s: holds a record of uid %u but is owned by uid %u", origin, r->uid,
				 (unsigned)st->st_uid);
			return -1;
		}
		if (known && strcmp(r->user, owner) != 0 && strcmp(r->user, number) != 0) {
			snprintf(error, error_size,
				 "%s: holds a record of user '%s' but is owned by %s (uid %u)", origin,
				 printable(r->user, safe, sizeof(safe)), owner, (unsigned)st->st_uid);
			return -1;
		}
	}
	return 0;
}

/* What an entry is when it is not a regular file, or NULL when it is one. */
static const char *unreadable_kind(const struct stat *st)
{
	if (S_ISLNK(st->st_mode))
		return "a symbolic link";
	if (S_ISFIFO(st->st_mode))
		return "a FIFO";
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
		return "a device";
	if (S_ISSOCK(st->st_mode))
		return "a socket";
	if (S_ISDIR(st->st_mode))
		return "a directory";
	if (!S_ISREG(st->st_mode))
		return "not a regular file";
	return NULL;
}

/*
 * Reads the whole of a regular file of at most VNFS_REPORT_FILE_MAX_BYTES
 * from fd (expected_size as fstat saw it) into a malloc'd buffer.  It reads
 * one byte more than it expects, and on to one byte past the limit if the
 * file grew since fstat, so such a file is caught too.  Returns the
 * buffer, or NULL with why in *why.
 */
static char *read_bounded(int fd, size_t expected_size, size_t *length, const char **why)
{
	const size_t limit = (size_t)VNFS_REPORT_FILE_MAX_BYTES + 1;
	size_t capacity = expected_size < limit ? expected_size + 1 : limit, used = 0;
	char *buffer = malloc(capacity);
	while (buffer != NULL) {
		if (used == capacity) {
			if (capacity == limit)
				break;
			char *grown = realloc(buffer, limit);
			if (grown == NULL)
				break;
			buffer = grown;
			capacity = limit;
		}
		ssize_t n = read(fd, buffer + used, capacity - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			*why = strerror(errno);
			free(buffer);
			return NULL;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	if (buffer == NULL || (used == capacity && capacity < limit)) {
		*why = "out of memory";
		free(buffer);
		return NULL;
	}
	if (used > VNFS_REPORT_FILE_MAX_BYTES) {
		*why = "larger than " VNFS_REPORT_FILE_MAX_TEXT " now";
		free(buffer);
		return NULL;
	}
	*length = used;
	return buffer;
}

/* The one JSON value text holds (whitespace around it allowed), or NULL. */
static struct json_object *parse_whole(const char *text, size_t length, const char **why)
{
	if (length == 0) {
		*why = "empty";
		return NULL;
	}
	struct json_tokener *tokener = json_tokener_new();
	if (tokener == NULL) {
		*why = "out of memory";
		return NULL;
	}
	struct json_object *value = json_tokener_parse_ex(tokener, text, (int)length);
	enum json_tokener_error status = json_tokener_get_error(tokener);
	size_t end = json_tokener_get_parse_end(tokener);
	json_tokener_free(tokener);
	if (value == NULL || status != json_tokener_success) {
		*why = status == json_tokener_continue ? "cut short" : json_tokener_error_desc(status);
		json_object_put(value);
		return NULL;
	}
	while (end < length && (text[end] == ' ' || text[end] == '\n' || text[end] == '\t' ||
				text[end] == '\r'))
		end++;
	if (end != length) {
		*why = "text after the JSON value";
		json_object_put(value);
		return NULL;
	}
	return value;
}

/*
 * Opens name in dir_fd if it is a regular file we may read; fills st.
 * Returns the descriptor, -1 with a message in error, or -2 when the caller
 * may not read it (another user's report).
 */
static int open_job_file(int dir_fd, const char *name, const char *origin, struct stat *st,
			 char *error, size_t error_size)
{
	/* Looked at first, so that a FIFO or a device is never even opened. */
	if (fstatat(dir_fd, name, st, AT_SYMLINK_NOFOLLOW) < 0) {
		snprintf(error, error_size, "%s: %s", origin, strerror(errno));
		return -1;
	}
	const char *kind = unreadable_kind(st);
	if (kind != NULL) {
		snprintf(error, error_size, "%s: is %s, not a report file: skipped", origin, kind);
		return -1;
	}
	/* O_NONBLOCK and O_NOFOLLOW: whatever replaced it since, open cannot block or follow. */
	int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == EACCES)
		return -2;
	if (fd < 0) {
		snprintf(error, error_size, "%s: %s", origin,
			 errno == ELOOP ? "is a symbolic link, not a report file: skipped"
					: strerror(errno));
		return -1;
	}
	if (fstat(fd, st) < 0) {
		snprintf(error, error_size, "%s: %s", origin, strerror(errno));
		close(fd);
		return -1;
	}
	kind = unreadable_kind(st);
	if (kind != NULL) {
		snprintf(error, error_size, "%s: is %s, not a report file: skipped", origin, kind);
		close(fd);
		return -1;
	}
	if ((uint64_t)st->st_size > VNFS_REPORT_FILE_MAX_BYTES) {
		snprintf(error, error_size, "%s: is %lld bytes, larger than %s: skipped", origin,
			 (long long)st->st_size, VNFS_REPORT_FILE_MAX_TEXT);
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Whether text may be parsed: within one file's bounds and what is left of
 * the directory's budget, which it then takes.  Counted, not parsed, so a
 * text that is over costs nothing more.
 */
static int spend_budget(const char *text, size_t length, struct report_budget *budget,
			const char *origin, char *error, size_t error_size)
{
	struct vnfs_report_json_size size;
	char why[128];
	vnfs_report_json_measure(text, length, &size);
	if (vnfs_report_json_check(length, &size, why, sizeof(why)) < 0) {
		snprintf(error, error_size, "%s: %s: skipped", origin, why);
		return -1;
	}
	if (size.values < REPORT_FILE_MIN_VALUES)
		size.values = REPORT_FILE_MIN_VALUES;
	if (size.objects > budget->objects || size.values > budget->values) {
		snprintf(error, error_size,
			 "%s: skipped, the files read before it took what one job directory may "
			 "hold (%zu JSON objects, %zu values)", origin, REPORT_JOB_MAX_OBJECTS,
			 REPORT_JOB_MAX_VALUES);
		return -1;
	}
	budget->objects -= size.objects;
	budget->values -= size.values;
	return 0;
}

/* The records of an open report file, into records (all or none). */
static int read_job_file(int fd, size_t size, const char *origin, struct report_budget *budget,
			 struct report_set *records, char *error, size_t error_size)
{
	const char *why = NULL;
	size_t length = 0;
	char *text = read_bounded(fd, size, &length, &why);
	if (text == NULL) {
		snprintf(error, error_size, "%s: %s: skipped", origin, why);
		return -1;
	}
	if (spend_budget(text, length, budget, origin, error, error_size) < 0) {
		free(text);
		return -1;
	}
	struct json_object *job = parse_whole(text, length, &why);
	free(text);
	if (job == NULL) {
		snprintf(error, error_size, "%s: not JSON (%s): skipped", origin, why);
		return -1;
	}
	int rc = report_add_job_json(records, job, origin, error, error_size);
	json_object_put(job);
	return rc;
}

/* Moves every record of from into to; from is left empty. */
static int move_records(struct report_set *to, struct report_set *from)
{
	int rc = 0;
	for (size_t i = 0; i < from->count; i++)
		if (report_set_take(to, &from->records[i]) < 0)
			rc = -1;
	report_set_free(from);
	return rc;
}

static int load_job_file(struct report_set *set, int dir_fd, const char *directory,
			 const char *name, const struct vnfs_workload *job,
			 struct report_budget *budget,
			 char *error, size_t error_size)
{
	char safe[(NAME_MAX + 1) * VNFS_ESCAPE_GROWTH], origin[PATH_MAX + sizeof(safe)];
	snprintf(origin, sizeof(origin), "%s/%s", directory, printable(name, safe, sizeof(safe)));
	struct stat st;
	int fd = open_job_file(dir_fd, name, origin, &st, error, error_size);
	if (fd < 0)
		return fd == -2 ? 1 : -1;
	struct report_set records;
	report_set_init(&records);
	int rc = read_job_file(fd, (size_t)st.st_size, origin, budget, &records, error,
			       error_size);
	close(fd);
	if (rc == 0)
		rc = check_records(&records, job, &st, origin, error, error_size);
	if (rc == 0 && move_records(set, &records) < 0) {
		snprintf(error, error_size, "out of memory");
		rc = -1;
	}
	report_set_free(&records);
	return rc;
}

int report_load_job_file(struct report_set *set, int dir_fd, const char *directory,
			 const char *name, const struct vnfs_workload *job, char *error,
			 size_t error_size)
{
	struct report_budget budget = { REPORT_JOB_MAX_OBJECTS, REPORT_JOB_MAX_VALUES };
	return load_job_file(set, dir_fd, directory, name, job, &budget, error, error_size);
}

static bool has_suffix(const char *name, const char *suffix)
{
	size_t length = strlen(name), suffix_length = strlen(suffix);
	return length > suffix_length && strcmp(name + length - suffix_length, suffix) == 0;
}

/* report_dir/<name> as an open directory stream, or NULL (*missing when there is none). */
static DIR *open_job_directory(const char *report_dir, const char *name, const char *directory,
			       bool *missing, char *error, size_t error_size)
{
	*missing = false;
	/* O_PATH: users may search report_dir (0711) but not list it. */
	int report_fd = open(report_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (report_fd < 0) {
		*missing = errno == ENOENT || errno == ENOTDIR;
		snprintf(error, error_size, "%s: %s", report_dir, strerror(errno));
		return NULL;
	}
	int fd = openat(report_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK |
					       O_CLOEXEC);
	int saved = errno;
	struct stat st;
	if (fd < 0 && (saved == ELOOP || saved == ENOTDIR) &&
	    fstatat(report_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		snprintf(error, error_size, "%s: is %s, not a job directory: skipped", directory,
			 S_ISLNK(st.st_mode) ? "a symbolic link" : "not a directory");
	else if (fd < 0)
		snprintf(error, error_size, "%s: %s", directory, strerror(saved));
	close(report_fd);
	*missing = fd < 0 && saved == ENOENT;
	if (fd < 0)
		return NULL;
	DIR *dir = fdopendir(fd);
	if (dir == NULL) {
		snprintf(error, error_size, "%s: %s", directory, strerror(errno));
		close(fd);
	}
	return dir;
}

/*
 * job's directory of report_dir, open, and its path in directory.  NULL
 * with *status 0 when the job has none (no node wrote a report for it, or it
 * cannot name one), or -1 with a message in error.
 */
static DIR *open_report_directory(const char *report_dir, const struct vnfs_workload *job,
				  char *directory, size_t directory_size, int *status,
				  char *error, size_t error_size)
{
	char name[NAME_MAX + 1];
	bool missing = true;
	DIR *dir = NULL;
	if (job_directory_name(job, name, sizeof(name), error, error_size) == 0) {
		snprintf(directory, directory_size, "%s/%s", report_dir, name);
		dir = open_job_directory(report_dir, name, directory, &missing, error, error_size);
	}
	*status = dir == NULL && !missing ? -1 : 0;
	if (*status == 0)
		error[0] = '\0';
	return dir;
}

int report_load_files(struct report_set *set, const char *report_dir,
		      const struct vnfs_workload *job, char *error, size_t error_size)
{
	char directory[4096];
	int result;
	DIR *dir = open_report_directory(report_dir, job, directory, sizeof(directory), &result,
					 error, error_size);
	if (dir == NULL)
		return result;
	size_t entries = 0;
	struct report_budget budget = { REPORT_JOB_MAX_OBJECTS, REPORT_JOB_MAX_VALUES };
	size_t not_read = 0;
	struct dirent *entry;
	while ((entry = readdir(dir)) != NULL) {
		if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
			continue;
		if (++entries > REPORT_MAX_DIRECTORY_ENTRIES) {
			add_message(error, error_size, "%s: more than %d entries: the rest skipped",
				    directory, REPORT_MAX_DIRECTORY_ENTRIES);
			result = -1;
			break;
		}
		if (entry->d_name[0] == '.' || !has_suffix(entry->d_name, ".json"))
			continue;
		/* Spent: the rest are counted, not even looked at. */
		if (budget.values < REPORT_FILE_MIN_VALUES || budget.objects == 0) {
			not_read++;
			continue;
		}
		char message[PATH_MAX + 1024];
		/* 1: not ours to read (another user's data, mode 0640): nothing to say. */
		if (load_job_file(set, dirfd(dir), directory, entry->d_name, job, &budget,
				  message, sizeof(message)) < 0) {
			add_message(error, error_size, "%s", message);
			result = -1; /* keep reading the other nodes */
		}
	}
	closedir(dir);
	if (not_read > 0) {
		add_message(error, error_size,
			    "%s: %zu more .json files not read: the files read before them took "
			    "what one job directory may hold (%zu JSON objects, %zu values)",
			    directory, not_read, REPORT_JOB_MAX_OBJECTS, REPORT_JOB_MAX_VALUES);
		result = -1;
	}
	return result;
}

int report_load_node_files(struct report_set *set, const char *report_dir,
			   const struct vnfs_workload *job, const char *const *nodes,
			   size_t node_count, char *error, size_t error_size)
{
	char directory[4096];
	int result;
	DIR *dir = open_report_directory(report_dir, job, directory, sizeof(directory), &result,
					 error, error_size);
	if (dir == NULL)
		return result;
	for (size_t i = 0; i < node_count; i++) {
		char file[NAME_MAX + 1], message[PATH_MAX + 1024];
		struct stat st;
		struct report_budget budget = { REPORT_JOB_MAX_OBJECTS, REPORT_JOB_MAX_VALUES };
		/* A node that has not reported has no file: not an error here. */
		if (strchr(nodes[i], '/') != NULL ||
		    snprintf(file, sizeof(file), "%s.json", nodes[i]) >= (int)sizeof(file) ||
		    (fstatat(dirfd(dir), file, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT))
			continue;
		if (load_job_file(set, dirfd(dir), directory, file, job, &budget, message,
				  sizeof(message)) < 0) {
			add_message(error, error_size, "%s", message);
			result = -1;
		}
	}
	closedir(dir);
	return result;
}

/* ---- the helper --------------------------------------------------------------- */
