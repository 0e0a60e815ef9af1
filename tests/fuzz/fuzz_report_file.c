/*
 * fuzz_report_file.c — libFuzzer target for what vnfs-report does with a
 * report file, which anyone who could write in a job directory (an older
 * helper gave it to the job's owner; a shared filesystem) controls: the
 * reader (report_load_files: open, bound, parse, check the records), the
 * merge into rows (report_build_rows) and both printers, the long report
 * and the -p table with every field, written to /dev/null.
 *
 * Each input becomes FUZZ_DIR/<FUZZ_JOB>/node.json, so inputs that name
 * job FUZZ_JOB reach the merge (tests/fuzz/corpus-report/ holds files the
 * writer produced for that job).  Beyond the sanitizers' "no crash, no
 * leak, no undefined behaviour", it checks that a refusal always says why,
 * with no control byte (the message goes to a terminal).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/job_report/fields.h"
#include "lib/job_report/findings.h"
#include "lib/job_report/rows.h"
#include "lib/job_report/files.h"
#include "lib/job_report/filter.h"
#include "lib/job_report/text.h"

#define FUZZ_JOB 4242
#define NOW_MS 1795000000000LL /* fixed, so that a run is reproducible */

static char report_dir[64];
static char file_path[128];
static FILE *devnull;
static struct report_format every_field;
static struct report_baseline baseline;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A -o format naming every field, from the list -e prints (so new fields join in). */
static void build_format(void)
{
	char *names = NULL, *format_text = NULL;
	size_t names_length = 0, format_length = 0;
	FILE *out = open_memstream(&names, &names_length);
	FILE *format = open_memstream(&format_text, &format_length);
	if (out == NULL || format == NULL)
		abort();
	report_print_field_names(out);
	if (fclose(out) != 0)
		abort();
	size_t count = 0;
	char *save = NULL;
	for (char *name = strtok_r(names, " \n", &save); name != NULL && count < REPORT_MAX_COLUMNS;
	     name = strtok_r(NULL, " \n", &save))
		fprintf(format, "%s%s", count++ > 0 ? "," : "", name);
	if (fclose(format) != 0)
		abort();
	char error[1024];
	if (report_parse_format(format_text, &every_field, error, sizeof(error)) < 0) {
		fprintf(stderr, "fuzz_report_file: %s\n", error);
		abort();
	}
	free(names);
	free(format_text);
}

static char job_dir[96];

/* At exit (libFuzzer ends with exit()), so that runs leave nothing in TMPDIR. */
static void remove_work(void)
{
	unlink(file_path);
	rmdir(job_dir);
	rmdir(report_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *tmp = getenv("TMPDIR");
	snprintf(report_dir, sizeof(report_dir), "%s/vnfs-fuzz-report.XXXXXX",
		 tmp != NULL && strlen(tmp) < 32 ? tmp : "/tmp");
	if (mkdtemp(report_dir) == NULL)
		abort();
	snprintf(job_dir, sizeof(job_dir), "%s/%u", report_dir, FUZZ_JOB);
	if (mkdir(job_dir, 0755) != 0 || atexit(remove_work) != 0)
		abort();
	snprintf(file_path, sizeof(file_path), "%s/node.json", job_dir);
	devnull = fopen("/dev/null", "w");
	if (devnull == NULL)
		abort();
	build_format();
	/* A baseline, so that the slow-operation finding is judged too. */
	for (int op = 0; op < VNFS_OP_COUNT; op++) {
		baseline.steps[op] = 10;
		baseline.p99_ns[op] = 1000;
	}
	return 0;
}

static void write_input(const uint8_t *data, size_t size)
{
	int fd = open(file_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		abort();
	size_t written = 0;
	while (written < size) {
		ssize_t n = write(fd, data + written, size - written);
		if (n <= 0)
			abort();
		written += (size_t)n;
	}
	if (close(fd) != 0)
		abort();
}

/* Every job row with its steps, as vnfs-report -l and -p print them. */
static void print_rows(const struct report_row *rows, size_t count)
{
	report_print_header(devnull, &every_field, REPORT_LAYOUT_PARSABLE);
	for (size_t i = 0; i < count; i++) {
		report_print_row(devnull, &every_field, REPORT_LAYOUT_PARSABLE, &rows[i], NOW_MS);
		report_print_row(devnull, &every_field, REPORT_LAYOUT_TABLE, &rows[i], NOW_MS);
		if (rows[i].is_step)
			continue;
		size_t steps = 0;
		while (i + 1 + steps < count && rows[i + 1 + steps].is_step)
			steps++;
		report_print_long(devnull, &rows[i], &rows[i + 1], steps, &baseline, NOW_MS);
		report_print_long(devnull, &rows[i], &rows[i + 1], steps, NULL, NOW_MS);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	write_input(data, size);
	struct report_set set;
	char error[4096] = "";
	struct vnfs_workload job;
	vnfs_workload_of_slurm_job(&job, FUZZ_JOB);
	report_set_init(&set);
	if (report_load_files(&set, report_dir, &job, error, sizeof(error)) < 0 &&
	    error[0] == '\0')
		abort(); /* skipped without saying why */
	for (const char *c = error; *c != '\0'; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			abort(); /* the message goes to a terminal: no control bytes */
	struct report_row *rows = NULL;
	size_t count = 0;
	if (report_build_rows(&set, &rows, &count) < 0)
		abort();
	print_rows(rows, count);
	if (fflush(devnull) != 0)
		abort();
	report_rows_free(rows, count);
	report_set_free(&set);
	return 0;
}
