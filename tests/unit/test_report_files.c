/*
 * test_report_files.c — the per-job report files against a hostile job
 * owner: what the helper (root) writes, and what vnfs-report reads back from
 * a directory that may hold anything.  Real files in a temporary directory,
 * no mocks.  The ownership checks need root (CI runs the unit tests as
 * root); run as another user, those assertions are left out.
 *
 * Every test that could hang on a regression (a FIFO, /dev/zero, an
 * endless merge) runs under alarm(), so that it fails instead.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "lib/record_json.h"
#include "lib/job_report/rows.h"
#include "lib/job_report/files.h"
#include "lib/job_report/files.h"
#include "lib/job_report/filter.h"
#include "tests/unit/history_fixtures.h"

#define START 1795000000000LL /* 2026-11-18T11:06:40Z */
#define NOBODY 65534          /* a uid and gid that exist everywhere, not root */
#define GUARD_SECONDS 5       /* SIGALRM kills a test that would hang */

static char directory[64];   /* this test's temporary directory */
static char report_dir[128]; /* directory/reports, created by the writer */

static bool as_root(void)
{
	return geteuid() == 0;
}

static int setup(void **state)
{
	(void)state;
	snprintf(directory, sizeof(directory), "/tmp/vnfs-test-report-files.XXXXXX");
	if (mkdtemp(directory) == NULL)
		return -1;
	snprintf(report_dir, sizeof(report_dir), "%s/reports", directory);
	setenv("TZ", "UTC", 1);
	tzset();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char command[128];
	snprintf(command, sizeof(command), "rm -rf '%s'", directory);
	return system(command) == 0 ? 0 : -1;
}

/* ---- fixtures ------------------------------------------------------------ */

/* directory/<relative> into buf, returned. */
static const char *path_of(char *buf, size_t size, const char *format, ...)
	__attribute__((format(printf, 3, 4)));
static const char *path_of(char *buf, size_t size, const char *format, ...)
{
	va_list arguments;
	va_start(arguments, format);
	int used = snprintf(buf, size, "%s/", directory);
	vsnprintf(buf + used, size - (size_t)used, format, arguments);
	va_end(arguments);
	return buf;
}

static void write_text(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);
	assert_true(fd >= 0);
	size_t length = strlen(text);
	assert_int_equal(write(fd, text, length), (ssize_t)length);
	assert_int_equal(fchmod(fd, mode), 0);
	assert_int_equal(close(fd), 0);
}

static void read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	ssize_t n = read(fd, buf, size - 1);
	assert_true(n >= 0);
	buf[n] = '\0';
	assert_int_equal(close(fd), 0);
}

static size_t count_entries(const char *path)
{
	DIR *dir = opendir(path);
	assert_non_null(dir);
	size_t count = 0;
	struct dirent *entry;
	while ((entry = readdir(dir)) != NULL)
		if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0)
			count++;
	closedir(dir);
	return count;
}

/* Slurm's job job_id as a workload (the report functions take workloads). */
static const struct vnfs_workload *slurm_job(uint32_t job_id)
{
	static struct vnfs_workload job;
	vnfs_workload_of_slurm_job(&job, job_id);
	return &job;
}

/* A finished one-step job of uid/user on node. */
static void make_job(struct history_step *step, struct vnfs_job *job, uint32_t job_id,
		     uint32_t uid, const char *user, const char *node)
{
	history_step_init(step, job_id, 0, uid, user, node, START, 1);
	history_step_finish(step, START + 60000);
	*job = (struct vnfs_job){ .job_id = job_id, .uid = uid, .user = user, .node = node,
				  .start_time_ms = START, .end_time_ms = START + 60000,
				  .step_count = 1, .steps = &step->record };
	vnfs_workload_of_slurm_job(&job->workload, job_id);
}

/* Renders job and stores it in dir for its owner and the group admin_gid. */
static int store_in(const char *dir, const struct vnfs_job *job, gid_t admin_gid, char *error,
		    size_t error_size)
{
	struct vnfs_report_files files;
	assert_int_equal(vnfs_report_render(job, &files, error, error_size), 0);
	int rc = vnfs_report_store(&files, dir, slurm_job(job->job_id), job->uid, admin_gid,
				   job->node, error, error_size);
	vnfs_report_files_free(&files);
	return rc;
}

static int store(const struct vnfs_job *job, gid_t admin_gid, char *error, size_t error_size)
{
	return store_in(report_dir, job, admin_gid, error, error_size);
}

/* The job's JSON line exactly as the writer renders it. */
static char *job_json(const struct vnfs_job *job)
{
	struct vnfs_report_files files;
	char error[256];
	assert_int_equal(vnfs_report_render(job, &files, error, sizeof(error)), 0);
	char *json = strdup(files.json);
	assert_non_null(json);
	vnfs_report_files_free(&files);
	return json;
}

/* A root-only file somewhere else, that a planted symlink points to. */
static void make_secret(const char *path)
{
	write_text(path, "root's secret\n", 0600);
}

static void assert_secret_untouched(const char *path)
{
	struct stat st;
	char text[64];
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_uid, geteuid());
	assert_int_equal(st.st_gid, getegid());
	read_text(path, text, sizeof(text));
	assert_string_equal(text, "root's secret\n");
}

static void assert_mode_owner(const char *path, mode_t mode, uid_t uid, gid_t gid)
{
	struct stat st;
	assert_int_equal(lstat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, mode);
	if (as_root()) {
		assert_int_equal(st.st_uid, uid);
		assert_int_equal(st.st_gid, gid);
	}
}

/* ---- the writer ---------------------------------------------------------- */

static void test_modes_and_owners(void **state)
{
	(void)state;
	struct history_step step;
	struct vnfs_job job;
	char error[512], path[256];
	make_job(&step, &job, 7, NOBODY, "nobody", "node1");
	/* A report_dir two levels below what exists: its parent is made too. */
	char deep[160];
	snprintf(deep, sizeof(deep), "%s/var/reports", directory);
	assert_int_equal(store_in(deep, &job, NOBODY, error, sizeof(error)), 0);

	assert_mode_owner(path_of(path, sizeof(path), "var"), 0755, 0, 0);
	assert_mode_owner(deep, 0711, 0, 0);
	assert_mode_owner(path_of(path, sizeof(path), "var/reports/7"), 0755, 0, 0);
	assert_mode_owner(path_of(path, sizeof(path), "var/reports/7/node1.json"), 0640, NOBODY,
			  NOBODY);
	assert_mode_owner(path_of(path, sizeof(path), "var/reports/7/node1.txt"), 0640, NOBODY,
			  NOBODY);
	/* Only the two files: the temporary ones were renamed away. */
	assert_int_equal(count_entries(path_of(path, sizeof(path), "var/reports/7")), 2);

	/* The JSON is the job's, exactly as rendered. */
	char text[16384];
	char *json = job_json(&job);
	read_text(path_of(path, sizeof(path), "var/reports/7/node1.json"), text, sizeof(text));
	assert_string_equal(text, json);
	free(json);

	/* Without an administrator group, the group stays root's. */
	make_job(&step, &job, 8, NOBODY, "nobody", "node1");
	assert_int_equal(store_in(deep, &job, (gid_t)-1, error, sizeof(error)), 0);
	assert_mode_owner(path_of(path, sizeof(path), "var/reports/8/node1.json"), 0640, NOBODY,
			  0);

	/* Storing again replaces both files and leaves nothing else. */
	assert_int_equal(store_in(deep, &job, (gid_t)-1, error, sizeof(error)), 0);
	assert_int_equal(count_entries(path_of(path, sizeof(path), "var/reports/8")), 2);
}

static void test_wrapper_and_bad_arguments(void **state)
{
	(void)state;
	struct history_step step;
	struct vnfs_job job;
	char error[512], path[256];
	make_job(&step, &job, 9, NOBODY, "nobody", "node1");
	assert_int_equal(vnfs_report_write_files(&job, report_dir, error, sizeof(error)), 0);
	assert_mode_owner(path_of(path, sizeof(path), "reports/9/node1.txt"), 0640, NOBODY, 0);

	job.node = "../etc";
	assert_int_equal(vnfs_report_write_files(&job, report_dir, error, sizeof(error)), -1);
	assert_string_equal(error, "node name '../etc' cannot name a file");
	job.node = ".hidden";
	assert_int_equal(vnfs_report_write_files(&job, report_dir, error, sizeof(error)), -1);
	assert_string_equal(error, "node name '.hidden' cannot name a file");
	job.node = "node1";
	assert_int_equal(vnfs_report_write_files(&job, "", error, sizeof(error)), -1);
	assert_string_equal(error, "no report directory configured");

	char dotted[160];
	snprintf(dotted, sizeof(dotted), "%s/../x", report_dir);
	assert_int_equal(vnfs_report_write_files(&job, dotted, error, sizeof(error)), -1);
	char expected[256];
	snprintf(expected, sizeof(expected),
		 "report directory %s: '.' and '..' are not allowed in it", dotted);
	assert_string_equal(error, expected);
	snprintf(dotted, sizeof(dotted), "%s/.", report_dir);
	assert_int_equal(vnfs_report_write_files(&job, dotted, error, sizeof(error)), -1);
	snprintf(expected, sizeof(expected),
		 "report directory %s: '.' and '..' are not allowed in it", dotted);
	assert_string_equal(error, expected);
}

static void test_symlink_at_file_not_followed(void **state)
{
	(void)state;
	struct history_step step;
	struct vnfs_job job;
	char error[512], path[256], secret[256], secret_txt[256];
	make_job(&step, &job, 10, NOBODY, "nobody", "node1");
	assert_int_equal(store(&job, NOBODY, error, sizeof(error)), 0);

	/* Planted where the next FINISH writes (as an older, user-owned layout allowed). */
	path_of(secret, sizeof(secret), "secret");
	path_of(secret_txt, sizeof(secret_txt), "secret.txt");
	make_secret(secret);
	make_secret(secret_txt);
	path_of(path, sizeof(path), "reports/10/node1.json");
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink(secret, path), 0);
	path_of(path, sizeof(path), "reports/10/node1.txt");
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink(secret_txt, path), 0);

	assert_int_equal(store(&job, NOBODY, error, sizeof(error)), 0);
	assert_secret_untouched(secret);
	assert_secret_untouched(secret_txt);
	/* The links themselves were replaced by the new files. */
	assert_mode_owner(path_of(path, sizeof(path), "reports/10/node1.json"), 0640, NOBODY,
			  NOBODY);
	assert_mode_owner(path_of(path, sizeof(path), "reports/10/node1.txt"), 0640, NOBODY,
			  NOBODY);
}

static void test_symlink_job_dir_refused(void **state)
{
	(void)state;
	struct history_step step;
	struct vnfs_job job;
	char error[512], path[256], secret[256], elsewhere[256], expected[512];
	make_job(&step, &job, 11, NOBODY, "nobody", "node1");
	assert_int_equal(store(&job, NOBODY, error, sizeof(error)), 0); /* makes report_dir */

	/* A link to a directory: nothing is written through it. */
	path_of(elsewhere, sizeof(elsewhere), "elsewhere");
	assert_int_equal(mkdir(elsewhere, 0700), 0);
	path_of(path, sizeof(path), "reports/12");
	assert_int_equal(symlink(elsewhere, path), 0);
	make_job(&step, &job, 12, NOBODY, "nobody", "node1");
	assert_int_equal(store(&job, NOBODY, error, sizeof(error)), -1);
	snprintf(expected, sizeof(expected),
		 "%s/12 is a symbolic link: refused, the helper follows no link there", report_dir);
	assert_string_equal(error, expected);
	assert_int_equal(count_entries(elsewhere), 0);
	assert_mode_owner(elsewhere, 0700, geteuid(), getegid());

	/* A link to a root-only file: neither chowned nor changed. */
	path_of(secret, sizeof(secret), "secret-of-job-13");
	make_secret(secret);
	path_of(path, sizeof(path), "reports/13");
	assert_int_equal(symlink(secret, path), 0);
	make_job(&step, &job, 13, NOBODY, "nobody", "node1");
	assert_int_equal(store(&job, NOBODY, error, sizeof(error)), -1);
	snprintf(expected, sizeof(expected),
		 "%s/13 is a symbolic link: refused, the helper follows no link there", report_dir);
	assert_string_equal(error, expected);
	assert_secret_untouched(secret);

	/* A plain file where the job directory should be. */
	write_text(path_of(path, sizeof(path), "reports/14"), "x", 0644);
	make_job(&step, &job, 14, NOBODY, "nobody", "node1");
	assert_int_equal(store(&job, NOBODY, error, sizeof(error)), -1);
	snprintf(expected, sizeof(expected),
		 "%s/14 is not a directory: refused, the helper follows no link there", report_dir);
	assert_string_equal(error, expected);

	/* A symlinked report_dir itself is refused too. */
	char linked[160];
	snprintf(linked, sizeof(linked), "%s/linked-reports", directory);
	assert_int_equal(symlink(report_dir, linked), 0);
	struct vnfs_report_files files;
	make_job(&step, &job, 15, NOBODY, "nobody", "node1");
	assert_int_equal(vnfs_report_render(&job, &files, error, sizeof(error)), 0);
	assert_int_equal(vnfs_report_store(&files, linked, slurm_job(15), NOBODY, NOBODY, "node1",
					   error, sizeof(error)),
			 -1);
	vnfs_report_files_free(&files);
	snprintf(expected, sizeof(expected),
		 "%s is a symbolic link: refused, the helper follows no link there", linked);
	assert_string_equal(error, expected);
	assert_int_equal(access(path_of(path, sizeof(path), "reports/15"), F_OK), -1);
}

static void test_foreign_job_dir_refused(void **state)
{
	(void)state;
	struct history_step step;
	struct vnfs_job job;
	char error[512], path[256], expected[512];
	make_job(&step, &job, 16, NOBODY, "nobody", "node1");
	assert_int_equal(store(&job, NOBODY, error, sizeof(error)), 0);

	/* Group-writable, root's: someone else could swap entries in it. */
	path_of(path, sizeof(path), "reports/17");
	assert_int_equal(mkdir(path, 0775), 0);
	assert_int_equal(chmod(path, 0775), 0);
	make_job(&step, &job, 17, NOBODY, "nobody", "node1");
	assert_int_equal(store(&job, NOBODY, error, sizeof(error)), -1);
	snprintf(expected, sizeof(expected),
		 "%s/17 is writable by group or others (mode 0775): the helper writes only under "
		 "directories no user controls", report_dir);
	assert_string_equal(error, expected);
	assert_int_equal(count_entries(path), 0);

	if (!as_root())
		return; /* giving a directory away needs root */
	/* Owned by the job's owner, as older versions left it: refused, not taken back. */
	path_of(path, sizeof(path), "reports/18");
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(chown(path, NOBODY, NOBODY), 0);
	make_job(&step, &job, 18, NOBODY, "nobody", "node1");
	assert_int_equal(store(&job, NOBODY, error, sizeof(error)), -1);
	snprintf(expected, sizeof(expected),
		 "%s/18 is owned by uid 65534, not root (left by an older vnfs-helper?): remove it "
		 "so the helper can create it owned by root", report_dir);
	assert_string_equal(error, expected);
	assert_int_equal(count_entries(path), 0);
	assert_mode_owner(path, 0755, NOBODY, NOBODY);
}

/* A job of more steps than a report file may hold is refused before any I/O. */
static void test_too_large_to_write(void **state)
{
	(void)state;
	enum { STEPS = 700 }; /* 29 objects each: over VNFS_REPORT_FILE_MAX_OBJECTS */
	struct history_step *steps = calloc(STEPS, sizeof(*steps));
	struct vnfs_step_record *records = calloc(STEPS, sizeof(*records));
	assert_non_null(steps);
	assert_non_null(records);
	for (uint32_t i = 0; i < STEPS; i++) {
		history_step_init(&steps[i], 31, i, NOBODY, "nobody", "node1", START, 1);
		records[i] = steps[i].record;
	}
	struct vnfs_job job = { .job_id = 31, .uid = NOBODY, .user = "nobody", .node = "node1",
				.start_time_ms = START, .step_count = STEPS, .steps = records };
	vnfs_workload_of_slurm_job(&job.workload, job.job_id);
	struct json_object *json = vnfs_job_to_json(&job);
	const char *text = json_object_to_json_string_ext(json, JSON_C_TO_STRING_PLAIN);
	size_t objects = 0; /* no string of the fixture holds a brace */
	for (const char *c = text; *c != '\0'; c++)
		objects += *c == '{';
	json_object_put(json);
	assert_true(objects > VNFS_REPORT_FILE_MAX_OBJECTS);

	struct vnfs_report_files files;
	char error[512], expected[512];
	assert_int_equal(vnfs_report_render(&job, &files, error, sizeof(error)), -1);
	snprintf(expected, sizeof(expected),
		 "job 31: JSON report not written: %zu JSON objects, more than 16384 (vnfs-report "
		 "would not read it)", objects);
	assert_string_equal(error, expected);
	assert_null(files.json);
	assert_null(files.text);
	free(records);
	free(steps);
}

/* Commas and braces inside strings are not counted; the count is an upper bound. */
static void test_json_measure(void **state)
{
	(void)state;
	struct vnfs_report_json_size size;
	const char *text = "{\"a,{\\\"[\":[1,2],\"b\\\\\":{}}";
	vnfs_report_json_measure(text, strlen(text), &size);
	assert_int_equal(size.objects, 2);
	/* {}, [], 1, 2, {}, and one more for the empty {} (exact when none is empty) */
	assert_int_equal(size.values, 6);
	char why[128];
	assert_int_equal(vnfs_report_json_check(strlen(text), &size, why, sizeof(why)), 0);
	size.values = VNFS_REPORT_FILE_MAX_VALUES + 1;
	assert_int_equal(vnfs_report_json_check(strlen(text), &size, why, sizeof(why)), -1);
	assert_string_equal(why, "262145 JSON values, more than 262144");
	assert_int_equal(vnfs_report_json_check(VNFS_REPORT_FILE_MAX_BYTES + 1, &size, why,
						sizeof(why)),
			 -1);
	assert_string_equal(why, "16777217 bytes, more than 16 MiB");
}

/* ---- the reader ---------------------------------------------------------- */

/* report_dir/<job_id>, root's, made as the writer makes it, with one good file. */
static void make_job_dir(uint32_t job_id)
{
	struct history_step step;
	struct vnfs_job job;
	char error[512];
	make_job(&step, &job, job_id, NOBODY, "nobody", "good");
	assert_int_equal(store(&job, NOBODY, error, sizeof(error)), 0);
}

/* Loads job_id's files; returns the count of records and the messages. */
static int load(uint32_t job_id, struct report_set *set, char *error, size_t error_size)
{
	report_set_init(set);
	error[0] = '\0';
	alarm(GUARD_SECONDS);
	int rc = report_load_files(set, report_dir, slurm_job(job_id), error, error_size);
	alarm(0);
	return rc;
}

static void test_fifo_not_opened(void **state)
{
	(void)state;
	char path[256], error[1024], expected[512];
	struct report_set set;
	make_job_dir(20);
	assert_int_equal(mkfifo(path_of(path, sizeof(path), "reports/20/x.json"), 0644), 0);
	assert_int_equal(load(20, &set, error, sizeof(error)), -1);
	snprintf(expected, sizeof(expected), "%s/20/x.json: is a FIFO, not a report file: skipped",
		 report_dir);
	assert_string_equal(error, expected);
	assert_int_equal(set.count, 1); /* good.json was still read */
	assert_string_equal(set.records[0].node, "good");
	report_set_free(&set);
}

static void test_symlink_to_dev_zero(void **state)
{
	(void)state;
	char path[256], error[1024], expected[512];
	struct report_set set;
	make_job_dir(21);
	assert_int_equal(symlink("/dev/zero", path_of(path, sizeof(path), "reports/21/z.json")), 0);
	assert_int_equal(load(21, &set, error, sizeof(error)), -1);
	snprintf(expected, sizeof(expected),
		 "%s/21/z.json: is a symbolic link, not a report file: skipped", report_dir);
	assert_string_equal(error, expected);
	assert_int_equal(set.count, 1);
	report_set_free(&set);
}

static void test_oversized_file(void **state)
{
	(void)state;
	char path[256], error[1024], expected[512];
	struct report_set set;
	make_job_dir(22);
	int fd = open(path_of(path, sizeof(path), "reports/22/big.json"), O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, VNFS_REPORT_FILE_MAX_BYTES + 1), 0); /* sparse */
	assert_int_equal(close(fd), 0);
	assert_int_equal(load(22, &set, error, sizeof(error)), -1);
	snprintf(expected, sizeof(expected),
		 "%s/22/big.json: is 16777217 bytes, larger than 16 MiB: skipped", report_dir);
	assert_string_equal(error, expected);
	assert_int_equal(set.count, 1);
	report_set_free(&set);
}

/* Writes a file holding job's JSON into report_dir/<dir_job>/name, owned by uid. */
static void plant_job_file(uint32_t dir_job, const char *name, const struct vnfs_job *job,
			   uid_t uid)
{
	char path[256];
	char *json = job_json(job);
	path_of(path, sizeof(path), "reports/%u/%s", dir_job, name);
	write_text(path, json, 0644);
	free(json);
	if (as_root())
		assert_int_equal(chown(path, uid, (gid_t)-1), 0);
}

static void test_record_of_another_job(void **state)
{
	(void)state;
	char error[1024], expected[512];
	struct report_set set;
	struct history_step step;
	struct vnfs_job job;
	make_job_dir(23);
	/* Even a file root owns may not speak for another job. */
	make_job(&step, &job, 24, NOBODY, "nobody", "other");
	plant_job_file(23, "other.json", &job, 0);
	assert_int_equal(load(23, &set, error, sizeof(error)), -1);
	snprintf(expected, sizeof(expected),
		 "%s/23/other.json: holds a record of job 24, not of job 23", report_dir);
	assert_string_equal(error, expected);
	assert_int_equal(set.count, 1);
	assert_string_equal(set.records[0].node, "good");
	report_set_free(&set);
}

static void test_record_of_another_user(void **state)
{
	(void)state;
	if (!as_root())
		skip(); /* files owned by a uid not ours need root */
	char error[2048], expected[1024];
	struct report_set set;
	struct history_step step;
	struct vnfs_job job;
	make_job_dir(25);
	/* Owned by nobody, naming uid 1001: not shown as 1001's. */
	make_job(&step, &job, 25, 1001, "alice", "n1");
	plant_job_file(25, "n1.json", &job, NOBODY);
	/* Owned by nobody, right uid, another user's name. */
	make_job(&step, &job, 25, NOBODY, "alice", "n2");
	plant_job_file(25, "n2.json", &job, NOBODY);
	/* Root's file may name anyone (the helper writes and gives it away). */
	make_job(&step, &job, 25, 1001, "alice", "n3");
	plant_job_file(25, "n3.json", &job, 0);
	/* The owner's own, by number where the writer could not resolve the name. */
	make_job(&step, &job, 25, NOBODY, "65534", "n4");
	plant_job_file(25, "n4.json", &job, NOBODY);

	assert_int_equal(load(25, &set, error, sizeof(error)), -1);
	/* readdir's order is the filesystem's: each message, and nothing else. */
	char other[512];
	snprintf(expected, sizeof(expected),
		 "%s/25/n1.json: holds a record of uid 1001 but is owned by uid 65534", report_dir);
	assert_non_null(strstr(error, expected));
	snprintf(other, sizeof(other),
		 "%s/25/n2.json: holds a record of user 'alice' but is owned by nobody (uid 65534)",
		 report_dir);
	assert_non_null(strstr(error, other));
	assert_int_equal(strlen(error), strlen(expected) + strlen("; ") + strlen(other));
	assert_int_equal(set.count, 3); /* good, n3, n4 */
	bool seen_n3 = false, seen_n4 = false;
	for (size_t i = 0; i < set.count; i++) {
		seen_n3 |= strcmp(set.records[i].node, "n3") == 0 && set.records[i].uid == 1001;
		seen_n4 |= strcmp(set.records[i].node, "n4") == 0;
	}
	assert_true(seen_n3);
	assert_true(seen_n4);
	report_set_free(&set);
}

static void test_hostile_names_and_text(void **state)
{
	(void)state;
	char path[256], error[2048], expected[512];
	struct report_set set;
	make_job_dir(26);
	/* A name that would clear the terminal is shown harmless. */
	write_text(path_of(path, sizeof(path), "reports/26/a\033[2J.json"), "{\"steps\":[]} x",
		   0644);
	assert_int_equal(load(26, &set, error, sizeof(error)), -1);
	snprintf(expected, sizeof(expected),
		 "%s/26/a\\x1b[2J.json: not JSON (text after the JSON value): skipped", report_dir);
	assert_string_equal(error, expected);
	report_set_free(&set);
	assert_int_equal(unlink(path), 0);

	write_text(path, "{\"steps\":[", 0644);
	assert_int_equal(load(26, &set, error, sizeof(error)), -1);
	snprintf(expected, sizeof(expected), "%s/26/a\\x1b[2J.json: not JSON (cut short): skipped",
		 report_dir);
	assert_string_equal(error, expected);
	report_set_free(&set);
	assert_int_equal(unlink(path), 0);

	/* A message quoting the file's content (an unknown field) is escaped too. */
	write_text(path, "{\"steps\":[{\"\\u001b]0;owned\\u0007\":1}]}", 0644);
	assert_int_equal(load(26, &set, error, sizeof(error)), -1);
	snprintf(expected, sizeof(expected),
		 "%s/26/a\\x1b[2J.json: steps[0]: unknown field '\\x1b]0;owned\\x07'", report_dir);
	assert_string_equal(error, expected);
	report_set_free(&set);
	assert_int_equal(unlink(path), 0);

	/* A directory named like a report file. */
	assert_int_equal(mkdir(path_of(path, sizeof(path), "reports/26/d.json"), 0755), 0);
	assert_int_equal(load(26, &set, error, sizeof(error)), -1);
	snprintf(expected, sizeof(expected),
		 "%s/26/d.json: is a directory, not a report file: skipped", report_dir);
	assert_string_equal(error, expected);
	assert_int_equal(set.count, 1);
	report_set_free(&set);

	/* A job directory that is a symlink is not listed. */
	assert_int_equal(symlink(path_of(path, sizeof(path), "reports/26"),
				 path_of(expected, sizeof(expected), "reports/27")),
			 0);
	assert_int_equal(load(27, &set, error, sizeof(error)), -1);
	snprintf(expected, sizeof(expected),
		 "%s/27: is a symbolic link, not a job directory: skipped", report_dir);
	assert_string_equal(error, expected);
	assert_int_equal(set.count, 0);
	report_set_free(&set);

	/* No directory at all: nothing, and no error. */
	assert_int_equal(load(28, &set, error, sizeof(error)), 0);
	assert_int_equal(set.count, 0);
	report_set_free(&set);
}

/* "{\"steps\":[{},{},...]}" with count objects in the array. */
static void write_objects(const char *path, size_t count)
{
	FILE *file = fopen(path, "w");
	assert_non_null(file);
	fputs("{\"steps\":[", file);
	for (size_t i = 0; i < count; i++)
		fputs(i > 0 ? ",{}" : "{}", file);
	fputs("]}", file);
	assert_int_equal(fclose(file), 0);
}

static void test_too_many_values(void **state)
{
	(void)state;
	char path[256], error[2048], expected[512];
	struct report_set set;
	make_job_dir(32);
	write_objects(path_of(path, sizeof(path), "reports/32/objects.json"), 20000);
	assert_int_equal(load(32, &set, error, sizeof(error)), -1);
	snprintf(expected, sizeof(expected),
		 "%s/32/objects.json: 20001 JSON objects, more than 16384: skipped", report_dir);
	assert_string_equal(error, expected);
	assert_int_equal(set.count, 1);
	report_set_free(&set);
	assert_int_equal(unlink(path), 0);

	FILE *file = fopen(path_of(path, sizeof(path), "reports/32/numbers.json"), "w");
	assert_non_null(file);
	fputs("{\"steps\":[0", file);
	for (int i = 1; i < 300000; i++)
		fputs(",0", file);
	fputs("]}", file);
	assert_int_equal(fclose(file), 0);
	assert_int_equal(load(32, &set, error, sizeof(error)), -1);
	snprintf(expected, sizeof(expected),
		 "%s/32/numbers.json: 300002 JSON values, more than 262144: skipped", report_dir);
	assert_string_equal(error, expected);
	assert_int_equal(set.count, 1);
	report_set_free(&set);
}

/* Files each within bounds, together over what one job directory may cost. */
static void test_directory_budget(void **state)
{
	(void)state;
	char path[256], error[2048], expected[512];
	struct report_set set;
	assert_int_equal(mkdir(path_of(path, sizeof(path), "reports/33"), 0755), 0);
	write_objects(path_of(path, sizeof(path), "reports/33/p.json"), 9000);
	write_objects(path_of(path, sizeof(path), "reports/33/q.json"), 9000);
	assert_int_equal(load(33, &set, error, sizeof(error)), -1);
	assert_int_equal(set.count, 0);
	report_set_free(&set);
	/* Whichever readdir gives first is parsed (and has no valid step), the other not. */
	const char *budget = ": skipped, the files read before it took what one job directory "
			     "may hold (16384 JSON objects, 262144 values)";
	const char *parsed = ": steps[0]: missing field 'job'";
	const char *first = strstr(error, "/33/p.json: steps") != NULL ? "p" : "q";
	const char *second = first[0] == 'p' ? "q" : "p";
	snprintf(expected, sizeof(expected), "%s/33/%s.json%s; %s/33/%s.json%s", report_dir, first,
		 parsed, report_dir, second, budget);
	assert_string_equal(error, expected);
}

/* Many tiny files: each costs the budget 64 values, so 4,096 are read and the rest counted. */
static void test_many_tiny_files(void **state)
{
	(void)state;
	char path[256], error[2048], expected[512];
	struct report_set set;
	assert_int_equal(mkdir(path_of(path, sizeof(path), "reports/34"), 0755), 0);
	for (int i = 0; i < 5000; i++)
		write_text(path_of(path, sizeof(path), "reports/34/n%04d.json", i),
			   "{\"steps\":[]}", 0644);
	assert_int_equal(load(34, &set, error, sizeof(error)), -1);
	snprintf(expected, sizeof(expected),
		 "%s/34: 904 more .json files not read: the files read before them took what one "
		 "job directory may hold (16384 JSON objects, 262144 values)", report_dir);
	assert_string_equal(error, expected);
	assert_int_equal(set.count, 0);
	report_set_free(&set);
}

/*
 * Records naming no node once made add_node spin forever: strstr finds ""
 * at every position and the search never moved on.
 */
static void test_empty_node_names(void **state)
{
	(void)state;
	char path[256], error[1024];
	struct history_step steps[3];
	history_step_init(&steps[0], 29, 0, NOBODY, "nobody", "n1", START, 1);
	history_step_init(&steps[1], 29, 1, NOBODY, "nobody", "", START, 1);
	history_step_init(&steps[2], 29, 2, NOBODY, "nobody", "", START, 1);
	struct vnfs_step_record records[3] = { steps[0].record, steps[1].record,
					       steps[2].record };
	struct vnfs_job job = { .job_id = 29, .uid = NOBODY, .user = "nobody", .node = "n1",
				.start_time_ms = START, .step_count = 3, .steps = records };
	vnfs_workload_of_slurm_job(&job.workload, job.job_id);
	assert_int_equal(mkdir(report_dir, 0711) == 0 || errno == EEXIST, 1);
	assert_int_equal(mkdir(path_of(path, sizeof(path), "reports/29"), 0755), 0);
	plant_job_file(29, "n1.json", &job, 0);

	struct report_set set;
	assert_int_equal(load(29, &set, error, sizeof(error)), 0);
	assert_string_equal(error, "");
	assert_int_equal(set.count, 3);
	struct report_row *rows = NULL;
	size_t count = 0;
	alarm(GUARD_SECONDS);
	assert_int_equal(report_build_rows(&set, &rows, &count), 0);
	alarm(0);
	assert_int_equal(count, 4); /* the job and its three steps */
	assert_string_equal(rows[0].nodes, "n1");
	assert_string_equal(rows[1].nodes, "n1");
	assert_string_equal(rows[2].nodes, "");
	assert_string_equal(rows[3].nodes, "");
	report_rows_free(rows, count);
	report_set_free(&set);
}

/* Everything above in one directory: read in well under a second. */
static void test_hostile_directory_is_quick(void **state)
{
	(void)state;
	char path[256], error[4096];
	struct report_set set;
	make_job_dir(30);
	assert_int_equal(mkfifo(path_of(path, sizeof(path), "reports/30/f.json"), 0644), 0);
	assert_int_equal(symlink("/dev/zero", path_of(path, sizeof(path), "reports/30/z.json")), 0);
	assert_int_equal(symlink("/dev/urandom", path_of(path, sizeof(path), "reports/30/r.json")),
			 0);
	int fd = open(path_of(path, sizeof(path), "reports/30/big.json"), O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 1LL << 40), 0); /* 1 TiB, sparse */
	assert_int_equal(close(fd), 0);
	struct timespec start, end;
	assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &start), 0);
	assert_int_equal(load(30, &set, error, sizeof(error)), -1);
	assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &end), 0);
	double seconds = (double)(end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;
	assert_true(seconds < 0.2);
	assert_int_equal(set.count, 1);
	assert_non_null(strstr(error, "big.json: is 1099511627776 bytes, larger than 16 MiB"));
	assert_non_null(strstr(error, "f.json: is a FIFO"));
	assert_non_null(strstr(error, "z.json: is a symbolic link"));
	assert_non_null(strstr(error, "r.json: is a symbolic link"));
	report_set_free(&set);
}

/*
 * A job's directory is named by its workload: Slurm's number, as before,
 * whether the job carries its workload or only Slurm's job_id; text that is
 * no Slurm number, or a source without a name, names none.  (Another
 * source's SOURCE-JOB encoding waits for a second source in
 * VNFS_WORKLOAD_SOURCES.)
 */
static void test_job_directory_names(void **state)
{
	(void)state;
	struct history_step step;
	struct vnfs_job job;
	struct vnfs_report_files files;
	struct vnfs_workload workload;
	struct report_set set;
	char error[512], path[256];

	make_job(&step, &job, 63, NOBODY, "nobody", "node1");
	vnfs_workload_of_slurm_job(&job.workload, 63);
	assert_int_equal(vnfs_report_write_files(&job, report_dir, error, sizeof(error)), 0);
	assert_mode_owner(path_of(path, sizeof(path), "reports/63/node1.json"), 0640, NOBODY, 0);
	assert_int_equal(count_entries(path_of(path, sizeof(path), "reports/63")), 2);
	make_job(&step, &job, 64, NOBODY, "nobody", "node1"); /* job_id only */
	assert_int_equal(vnfs_report_write_files(&job, report_dir, error, sizeof(error)), 0);
	assert_mode_owner(path_of(path, sizeof(path), "reports/64/node1.json"), 0640, NOBODY, 0);
	assert_int_equal(load(63, &set, error, sizeof(error)), 0);
	assert_int_equal(set.count, 1);
	assert_string_equal(set.records[0].workload.job, "63");
	report_set_free(&set);

	assert_int_equal(vnfs_report_render(&job, &files, error, sizeof(error)), 0);
	vnfs_workload_of_slurm_job(&workload, 65);
	snprintf(workload.job, sizeof(workload.job), "../65");
	assert_int_equal(vnfs_report_store(&files, report_dir, &workload, NOBODY, (gid_t)-1,
					   "node1", error, sizeof(error)),
			 -1);
	assert_string_equal(error, "slurm job '../65' cannot name a report directory");
	snprintf(workload.job, sizeof(workload.job), "063");
	assert_int_equal(vnfs_report_store(&files, report_dir, &workload, NOBODY, (gid_t)-1,
					   "node1", error, sizeof(error)),
			 -1);
	assert_string_equal(error, "slurm job '063' cannot name a report directory");
	workload.source = VNFS_SOURCE_COUNT;
	snprintf(workload.job, sizeof(workload.job), "65");
	assert_int_equal(vnfs_report_store(&files, report_dir, &workload, NOBODY, (gid_t)-1,
					   "node1", error, sizeof(error)),
			 -1);
	assert_string_equal(error, "job of an unknown source (8) cannot name a report "
				   "directory");
	vnfs_report_files_free(&files);
	assert_int_equal(access(path_of(path, sizeof(path), "reports/65"), F_OK), -1);
	assert_int_equal(access(path_of(path, sizeof(path), "65"), F_OK), -1);
	/* Such a job has no files to read: nothing, and nothing to say. */
	report_set_init(&set);
	assert_int_equal(report_load_files(&set, report_dir, &workload, error, sizeof(error)), 0);
	assert_string_equal(error, "");
	assert_int_equal(set.count, 0);

	/* A Kubernetes pod's files: a directory named by source and escaped job,
	 * read back as that pod's. */
	make_job(&step, &job, 66, NOBODY, "nobody", "node1");
	assert_int_equal(vnfs_workload_set(&workload, VNFS_SOURCE_KUBERNETES, "ml/resnet-7f9c",
					   "trainer", error, sizeof(error)),
			 0);
	vnfs_record_identify(&step.record, &workload);
	vnfs_job_of_steps(&job, &workload, "node1", &step.record, 1);
	assert_int_equal(vnfs_report_write_files(&job, report_dir, error, sizeof(error)), 0);
	assert_mode_owner(path_of(path, sizeof(path), "reports/kubernetes-ml%%2Fresnet-7f9c/node1.json"),
			  0640, NOBODY, 0);
	report_set_init(&set);
	assert_int_equal(report_load_files(&set, report_dir, &job.workload, error, sizeof(error)), 0);
	assert_int_equal(set.count, 1);
	assert_true(vnfs_workload_equal(&set.records[0].workload, &workload));
	report_set_free(&set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_modes_and_owners),
		cmocka_unit_test(test_wrapper_and_bad_arguments),
		cmocka_unit_test(test_symlink_at_file_not_followed),
		cmocka_unit_test(test_symlink_job_dir_refused),
		cmocka_unit_test(test_foreign_job_dir_refused),
		cmocka_unit_test(test_too_large_to_write),
		cmocka_unit_test(test_json_measure),
		cmocka_unit_test(test_fifo_not_opened),
		cmocka_unit_test(test_symlink_to_dev_zero),
		cmocka_unit_test(test_oversized_file),
		cmocka_unit_test(test_record_of_another_job),
		cmocka_unit_test(test_record_of_another_user),
		cmocka_unit_test(test_hostile_names_and_text),
		cmocka_unit_test(test_too_many_values),
		cmocka_unit_test(test_directory_budget),
		cmocka_unit_test(test_many_tiny_files),
		cmocka_unit_test(test_empty_node_names),
		cmocka_unit_test(test_hostile_directory_is_quick),
		cmocka_unit_test(test_job_directory_names),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
