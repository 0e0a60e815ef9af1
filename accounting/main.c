/*
 * main.c — vnfs-accounting: stores a finished Slurm job's NFS summary,
 * merged over all its nodes, in the job's SystemComment in Slurm's
 * accounting (lib/slurm_accounting/summary.h), so that sacct shows it and
 * vnfs-report answers from any node.  man/vnfs-accounting.8 documents it.
 *
 * slurmctld runs it as EpilogSlurmctld when a job ends, with the job and
 * its nodes in SLURM_JOB_ID and SLURM_JOB_NODELIST.  It then detaches at
 * once: the nodes' report files may take a while to arrive, slurmdbd may
 * not hold the job's record yet, and neither should keep the job
 * completing.  Run by hand (-j), it stays in the foreground and says what
 * it did.
 *
 * The report files come from report_dir, which the nodes and the
 * controller share, read with the same distrust as vnfs-report reads them
 * (lib/job_report/files.h).  A node whose report has not come within
 * [slurm_accounting] wait is counted as missing: nodes=R/E says so.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/config.h"
#include "lib/job_report/files.h"
#include "lib/job_report/findings.h"
#include "lib/job_report/rows.h"
#include "lib/job_report/times.h"
#include "lib/log.h"
#include "lib/slurm_accounting/slurm.h"
#include "lib/slurm_accounting/summary.h"
#include "accounting/slurmdb_store.h"

/* sacct's: a command line that cannot be run is told from a run that failed. */
enum { EXIT_STORED = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

/* Between two looks at report_dir, and two tries of slurmdbd. */
#define POLL_INTERVAL_MS 1000

struct options {
	const char *config_path;
	bool config_given;
	const char *job_id;       /* -j, or SLURM_JOB_ID */
	const char *node_list;    /* -N, or SLURM_JOB_NODELIST */
	bool foreground;          /* -j given, or -f */
	bool print_only;          /* --print: the line on stdout, nothing stored */
	long wait_s;              /* -w; -1: the config's */
	struct vnfs_config config;
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: vnfs-accounting [OPTION]...\n"
		"Store a finished Slurm job's NFS summary, merged over its nodes, in the\n"
		"job's SystemComment in Slurm's accounting (sacct -o SystemComment shows it;\n"
		"vnfs-report -j reads it from any node).\n"
		"\n"
		"Run by slurmctld as EpilogSlurmctld, it takes the job from SLURM_JOB_ID and\n"
		"SLURM_JOB_NODELIST and goes on in the background; run by hand, give -j and -N.\n"
		"\n"
		"  -j, --jobs=ID          the job (default: $SLURM_JOB_ID)\n"
		"  -N, --nodelist=LIST    its nodes, as Slurm writes them, e.g. node[1-4]\n"
		"                         (default: $SLURM_JOB_NODELIST)\n"
		"  -w, --wait=SECONDS     wait at most this long for every node's report\n"
		"                         (default: [slurm_accounting] wait)\n"
		"  -f, --foreground       stay in the foreground (the default with -j)\n"
		"      --print            print the summary line instead of storing it\n"
		"      --config=FILE      vnfs.conf to read (default: %s)\n"
		"  -h, --help             this text\n"
		"  -V, --version          the version\n"
		"\n"
		"Exit status: 0 stored (or gone to the background), 1 not stored, 2 bad usage.\n"
		"See vnfs-accounting(8).\n",
		VNFS_DEFAULT_CONFIG_PATH);
}

static int parse_options(int argc, char **argv, struct options *options)
{
	enum { OPTION_CONFIG = 256, OPTION_PRINT };
	static const struct option long_options[] = {
		{ "jobs", required_argument, NULL, 'j' },
		{ "nodelist", required_argument, NULL, 'N' },
		{ "wait", required_argument, NULL, 'w' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "print", no_argument, NULL, OPTION_PRINT },
		{ "config", required_argument, NULL, OPTION_CONFIG },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	options->config_path = VNFS_DEFAULT_CONFIG_PATH;
	options->wait_s = -1;
	while ((c = getopt_long(argc, argv, "j:N:w:fhV", long_options, NULL)) != -1) {
		switch (c) {
		case 'j': options->job_id = optarg; options->foreground = true; break;
		case 'N': options->node_list = optarg; break;
		case 'w':
			errno = 0;
			options->wait_s = strtol(optarg, &end, 10);
			if (errno != 0 || end == optarg || *end != '\0' || options->wait_s < 0 ||
			    options->wait_s > 86400) {
				fprintf(stderr, "vnfs-accounting: --wait: '%s' is not a number of "
						"seconds from 0 to 86400\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'f': options->foreground = true; break;
		case OPTION_PRINT: options->print_only = true; options->foreground = true; break;
		case OPTION_CONFIG:
			options->config_path = optarg;
			options->config_given = true;
			break;
		case 'h': usage(stdout); exit(EXIT_STORED);
		case 'V': printf("vnfs-accounting %s\n", PACKAGE_VERSION); exit(EXIT_STORED);
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "vnfs-accounting: unexpected argument '%s' (see --help)\n",
			argv[optind]);
		return EXIT_USAGE;
	}
	if (options->job_id == NULL)
		options->job_id = getenv("SLURM_JOB_ID");
	if (options->node_list == NULL)
		options->node_list = getenv("SLURM_JOB_NODELIST");
	if (options->job_id == NULL || options->node_list == NULL) {
		fprintf(stderr, "vnfs-accounting: no job given: use -j ID -N NODES, or run it as "
				"slurm.conf's EpilogSlurmctld\n");
		return EXIT_USAGE;
	}
	if (!vnfs_slurm_job_id_valid(options->job_id)) {
		fprintf(stderr, "vnfs-accounting: '%s' is not a Slurm job id (a number)\n",
			options->job_id);
		return EXIT_USAGE;
	}
	return 0;
}

static void sleep_ms(int64_t ms)
{
	struct timespec pause = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };
	while (nanosleep(&pause, &pause) < 0 && errno == EINTR)
		;
}

/* How many of the nodes have a report file for the job (report_dir/<job>/<node>.json). */
static size_t reports_present(const char *report_dir, const char *job_id, char *const *nodes,
			      size_t count)
{
	size_t present = 0;
	for (size_t i = 0; i < count; i++) {
		char path[PATH_MAX];
		struct stat st;
		if (snprintf(path, sizeof(path), "%s/%s/%s.json", report_dir, job_id, nodes[i]) <
			    (int)sizeof(path) &&
		    lstat(path, &st) == 0 && S_ISREG(st.st_mode))
			present++;
	}
	return present;
}

/* Waits until every node has reported or the deadline passes. */
static void wait_for_reports(const struct options *options, char *const *nodes, size_t count,
			     int64_t deadline)
{
	const char *report_dir = options->config.helper.report_dir;
	size_t present;
	while ((present = reports_present(report_dir, options->job_id, nodes, count)) < count &&
	       report_monotonic_ms() < deadline)
		sleep_ms(POLL_INTERVAL_MS);
	if (present < count)
		vnfs_warning("job %s: %zu of %zu nodes have a report in %s after %ld s; storing "
			     "what they have",
			     options->job_id, present, count, report_dir, (long)options->wait_s);
}

/* The job's summary from the nodes' report files.  Returns 0, or -1 (said). */
static int summarize(const struct options *options, char *const *nodes, size_t count,
		     struct vnfs_accounting_summary *summary)
{
	struct report_set set;
	struct report_row *rows = NULL;
	size_t row_count = 0;
	struct vnfs_workload job = { .source = VNFS_SOURCE_SLURM };
	char error[2048];
	int rc = -1;

	snprintf(job.job, sizeof(job.job), "%s", options->job_id);
	report_set_init(&set);
	if (report_load_node_files(&set, options->config.helper.report_dir, &job,
				   (const char *const *)nodes, count, error, sizeof(error)) < 0)
		vnfs_warning("job %s: skipping a report file: %s", options->job_id, error);
	if (report_build_rows(&set, &rows, &row_count) < 0) {
		vnfs_error("job %s: out of memory", options->job_id);
		goto out;
	}
	struct report_finding findings[REPORT_MAX_FINDINGS];
	size_t finding_count = row_count > 0 ? report_findings(&rows[0], NULL, findings,
								REPORT_MAX_FINDINGS)
					     : 0;
	vnfs_accounting_summarize(row_count > 0 ? &rows[0] : NULL, findings, finding_count,
				  (const char *const *)nodes, count, summary);
	rc = 0;
out:
	report_rows_free(rows, row_count);
	report_set_free(&set);
	return rc;
}

/* One try: the job's SystemComment with line as its vnfs line.  Returns 0,
 * or -1 with a message (slurmdbd may not hold the job yet). */
static int store_once(const struct options *options, const struct vnfs_slurm_commands *commands,
		      const char *line, char *error, size_t error_size)
{
	struct vnfs_slurm_job_entry entry;
	int found = vnfs_slurm_read_job(commands, options->job_id, &entry, error, error_size);
	if (found <= 0)
		return found == 0 ? vnfs_fail(error, error_size, "Slurm's accounting has no job %s yet",
					      options->job_id)
				  : -1;
	size_t size = entry.system_comment_length + strlen(line) + 2;
	char *comment = malloc(size);
	int rc = -1;
	if (comment == NULL)
		vnfs_fail(error, error_size, "out of memory");
	else if (vnfs_accounting_merge_comment(entry.system_comment, line, comment, size) < 0 ||
		 strlen(comment) > VNFS_SLURM_COMMENT_MAX)
		vnfs_fail(error, error_size, "its SystemComment with vnfs's line would be over %d "
			  "bytes", VNFS_SLURM_COMMENT_MAX);
	else if (accounting_store_comment((uint32_t)strtoul(options->job_id, NULL, 10), comment,
					  error, error_size) == ACCOUNTING_STORED)
		rc = 0;
	free(comment);
	vnfs_slurm_job_entry_free(&entry);
	return rc;
}

/* Stores the line, trying again until slurmdbd holds the job or the
 * deadline passes.  Returns 0, or -1 (said). */
static int store(const struct options *options, const struct vnfs_slurm_commands *commands,
		 const char *line, int64_t deadline)
{
	char error[1024];
	while (store_once(options, commands, line, error, sizeof(error)) < 0) {
		if (report_monotonic_ms() >= deadline) {
			vnfs_error("job %s: summary not stored: %s", options->job_id, error);
			return -1;
		}
		sleep_ms(POLL_INTERVAL_MS);
	}
	return 0;
}

/* Leaves slurmctld: the parent returns at once, the child goes on with
 * its messages in syslog.  Returns 1 in the parent, 0 in the child, -1. */
static int detach(void)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid > 0 ? 1 : -1;
	setsid();
	int null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		if (null > STDERR_FILENO)
			close(null);
	}
	vnfs_log_setup("vnfs-accounting", VNFS_LOG_PRIORITY_INFO, 1);
	return 0;
}

static int run(struct options *options)
{
	const struct vnfs_slurm_commands commands = {
		.sacct = options->config.slurm_accounting.sacct,
		.scontrol = options->config.slurm_accounting.scontrol,
	};
	char error[1024];
	char **nodes = NULL;
	size_t node_count = 0;
	if (vnfs_slurm_expand_nodes(&commands, options->node_list, &nodes, &node_count, error,
				    sizeof(error)) < 0) {
		vnfs_error("job %s: its nodes: %s", options->job_id, error);
		return EXIT_FAILED;
	}
	if (options->wait_s < 0)
		options->wait_s = options->config.slurm_accounting.wait_s;
	int64_t deadline = report_monotonic_ms() + options->wait_s * 1000;
	wait_for_reports(options, nodes, node_count, deadline);

	struct vnfs_accounting_summary summary;
	char line[VNFS_ACCOUNTING_LINE_MAX];
	int status = EXIT_FAILED;
	if (summarize(options, nodes, node_count, &summary) < 0)
		goto out;
	if (vnfs_accounting_format(&summary, line, sizeof(line)) < 0) {
		vnfs_error("job %s: its summary is over %d bytes", options->job_id,
			   VNFS_ACCOUNTING_LINE_MAX);
		goto out;
	}
	if (options->print_only) {
		puts(line);
		status = EXIT_STORED;
		goto out;
	}
	/* slurmdbd may get the job's end record after this program started:
	 * give it the same wait again, counted from now. */
	if (store(options, &commands, line, report_monotonic_ms() + options->wait_s * 1000) == 0) {
		vnfs_info("job %s: stored %s", options->job_id, line);
		status = EXIT_STORED;
	}
out:
	free(nodes);
	return status;
}

int main(int argc, char **argv)
{
	struct options *options = calloc(1, sizeof(*options));
	char error[1024];
	if (options == NULL) {
		fprintf(stderr, "vnfs-accounting: out of memory\n");
		return EXIT_FAILED;
	}
	int status = parse_options(argc, argv, options);
	if (status != 0)
		goto out;
	vnfs_config_defaults(&options->config);
	if (vnfs_config_load(&options->config, options->config_path, !options->config_given,
			     error, sizeof(error)) < 0) {
		fprintf(stderr, "vnfs-accounting: %s\n", error);
		status = EXIT_FAILED;
		goto out;
	}
	vnfs_log_setup("vnfs-accounting", VNFS_LOG_PRIORITY_INFO, 0);
	if (!options->foreground) {
		int detached = detach();
		if (detached != 0) {
			status = detached > 0 ? EXIT_STORED : EXIT_FAILED;
			goto out;
		}
	}
	status = run(options);
	accounting_store_finish();
out:
	free(options);
	return status;
}
