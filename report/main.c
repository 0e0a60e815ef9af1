/*
 * main.c — vnfs-report: the sacct of NFS I/O.  Options, where the data comes
 * from (the helper for running jobs, SQLite for the node's history, report
 * files for a job's other nodes), which rows pass the filter, and the four
 * outputs (table, -p/-P, --json, -l).  man/vnfs-report.1 documents it.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "lib/config.h"
#include "lib/history/reader.h"
#include "lib/history/statement.h"
#include "lib/job_report/fields.h"
#include "lib/job_report/files.h"
#include "lib/job_report/text.h"
#include "lib/job_report/times.h"
#include "lib/protocol.h"
#include "lib/record_json.h"
#include "report/accounting.h"
#include "report/sources.h"

/* How long to wait for the helper's answer unless --timeout says: Slurm's
 * MessageTimeout default.  A busy node's helper answers in milliseconds;
 * the bound is for one that hangs (stopped, or stuck in the kernel). */
#define HELPER_TIMEOUT_DEFAULT_SECONDS 10
#define HELPER_TIMEOUT_MAX_SECONDS 3600

/* sacct's: a command line that cannot be run is told from a run that failed. */
enum { EXIT_REPORTED = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

/* What parse_options found: run the report, or exit with the status. */
enum parsed { PARSED_RUN, PARSED_DONE, PARSED_USAGE_ERROR, PARSED_FAILED };

enum output { OUTPUT_TABLE, OUTPUT_JSON, OUTPUT_LONG };

/* How the helper answered the request for running jobs. */
enum live_status { LIVE_NOT_ASKED, LIVE_ANSWERED, LIVE_NOT_RUNNING, LIVE_UNWELL };

struct options {
	struct report_filter filter;
	struct report_format format;
	enum report_layout layout;
	enum output output;
	bool header;
	bool allocations;
	const char *config_path;
	bool config_given;
	char socket_path[VNFS_PATH_MAX];
	char database_path[VNFS_PATH_MAX];
	bool database_given;
	char report_dir[VNFS_PATH_MAX];
	bool report_dir_given;
	char sacct[VNFS_PATH_MAX];   /* [slurm_accounting] sacct; "": not asked */
	int helper_timeout_ms;       /* --timeout */
	const char *format_text;
	const char *user_text;
	const char *start_text;
	const char *end_text;
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: vnfs-report [OPTION]...\n"
		"Per-job NFS I/O accounting, like sacct: running jobs live from vnfs-helper,\n"
		"finished jobs from the node's history, other nodes from report files, and\n"
		"Slurm jobs named with -j that none of them has from Slurm's accounting.\n"
		"\n"
		"  -j, --jobs LIST        jobs or job steps: 42,43.0,44.batch,slurm:45\n"
		"  -u, --user USER        only USER's jobs (name or uid; root only for others)\n"
		"  -S, --starttime TIME   jobs running at or after TIME (default: midnight,\n"
		"                         unless -j is given)\n"
		"  -E, --endtime TIME     jobs started at or before TIME\n"
		"                         TIME: YYYY-MM-DD[THH:MM[:SS]], HH:MM[:SS], now,\n"
		"                         now-N{seconds,minutes,hours,days,weeks}\n"
		"  -o, --format LIST      fields to show: JobID,ReadBytes%%12,... (-e lists them)\n"
		"  -X, --allocations      jobs only, not their steps\n"
		"  -p, --parsable         '|' after every field, raw numbers\n"
		"  -P, --parsable2        '|' between fields, raw numbers\n"
		"  -n, --noheader         no header line\n"
		"  -l, --long             the long report: per operation, processes, mounts,\n"
		"                         findings\n"
		"      --json             the jobs as JSON\n"
		"  -e, --helpformat       list the fields\n"
		"      --config PATH      vnfs.conf to read paths from (default %s)\n"
		"      --socket PATH      the helper's socket (default from vnfs.conf)\n"
		"      --database, --db PATH|URI\n"
		"                         the history: a SQLite file, or the cluster's\n"
		"                         PostgreSQL database, postgresql://... (default\n"
		"                         from vnfs.conf)\n"
		"      --report-dir DIR   per-job report files (default from vnfs.conf)\n"
		"      --timeout SECONDS  how long to wait for vnfs-helper's answer\n"
		"                         (default %d)\n"
		"  -h, --help             this help\n"
		"  -V, --version          the version\n"
		"\n"
		"Exit status: 0 when the report was printed (also with no job), 1 when it\n"
		"could not be, 2 on a bad option or value.\n"
		"The numbers and findings: " VNFS_DOCDIR "/REPORT.md\n"
		"The JSON of --json:       " VNFS_DOCDIR "/JSON.md\n",
		VNFS_DEFAULT_CONFIG_PATH, HELPER_TIMEOUT_DEFAULT_SECONDS);
}

__attribute__((format(printf, 1, 2))) static void complain(const char *format, ...)
{
	va_list args;
	va_start(args, format);
	fputs("vnfs-report: ", stderr);
	vfprintf(stderr, format, args);
	fputc('\n', stderr);
	va_end(args);
}

static int resolve_user(const char *text, struct report_filter *filter)
{
	struct passwd *pw = getpwnam(text);
	if (pw != NULL) {
		filter->uid = pw->pw_uid;
		filter->has_uid = true;
		return 0;
	}
	uint32_t uid;
	if (vnfs_step_parse(text, &uid) == 0 && text[0] >= '0' && text[0] <= '9') {
		filter->uid = uid;
		filter->has_uid = true;
		return 0;
	}
	/* Not known here (a login node without the compute nodes' users): match
	 * the name the helper recorded. */
	if (vnfs_tag_value_valid(text) && strlen(text) < sizeof(filter->user_name) &&
	    strchr(text, ':') == NULL) {
		snprintf(filter->user_name, sizeof(filter->user_name), "%s", text);
		return 0;
	}
	complain("invalid user '%s'", text);
	return -1;
}

/* Starts of today, in local time (sacct's default -S). */
static int64_t midnight(int64_t now_ms)
{
	time_t now = (time_t)(now_ms / 1000);
	struct tm tm;
	localtime_r(&now, &tm);
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	tm.tm_isdst = -1;
	return (int64_t)mktime(&tm) * 1000;
}

static int load_config(struct options *options)
{
	struct vnfs_config *config = calloc(1, sizeof(*config));
	char error[512];
	if (config == NULL)
		return -1;
	vnfs_config_defaults(config);
	if (vnfs_config_load(config, options->config_path, !options->config_given, error,
			     sizeof(error)) < 0) {
		complain("%s", error);
		free(config);
		return -1;
	}
	if (options->socket_path[0] == '\0')
		snprintf(options->socket_path, sizeof(options->socket_path), "%s",
			 config->helper.socket_path);
	if (options->database_path[0] == '\0')
		snprintf(options->database_path, sizeof(options->database_path), "%s",
			 config->report.history[0] != '\0' ? config->report.history
							   : config->sqlite.path);
	if (options->report_dir[0] == '\0')
		snprintf(options->report_dir, sizeof(options->report_dir), "%s",
			 config->helper.report_dir);
	snprintf(options->sacct, sizeof(options->sacct), "%s", config->slurm_accounting.sacct);
	free(config);
	return 0;
}

static int copy_path(char *to, const char *from, const char *what)
{
	if (snprintf(to, VNFS_PATH_MAX, "%s", from) >= VNFS_PATH_MAX) {
		complain("%s path too long (at most %d bytes)", what, VNFS_PATH_MAX - 1);
		return -1;
	}
	return 0;
}

/* -S, -E and -u into the filter, and the caller's own uid for anyone but
 * root.  Returns PARSED_RUN, or another with the message said: a bad value
 * is the command line's error, another user's jobs asked for by a user is
 * a refusal (PARSED_FAILED). */
static enum parsed apply_filter_options(struct options *options)
{
	struct report_filter *filter = &options->filter;
	int64_t now = report_now_ms();
	char error[1024];

	if (options->start_text != NULL) {
		if (report_parse_time(options->start_text, now, &filter->start_ms, error,
				      sizeof(error)) < 0) {
			complain("-S: %s", error);
			return PARSED_USAGE_ERROR;
		}
		filter->has_start = true;
	} else if (filter->job_count == 0) {
		filter->start_ms = midnight(now);
		filter->has_start = true;
	}
	if (options->end_text != NULL) {
		if (report_parse_time(options->end_text, now, &filter->end_ms, error,
				      sizeof(error)) < 0) {
			complain("-E: %s", error);
			return PARSED_USAGE_ERROR;
		}
		filter->has_end = true;
	}
	if (options->user_text != NULL && resolve_user(options->user_text, filter) < 0)
		return PARSED_USAGE_ERROR;
	/* The helper enforces this on its socket; the history file is ours to guard. */
	if (getuid() != 0) {
		if (filter->has_uid && filter->uid != getuid()) {
			complain("only root may see other users' jobs");
			return PARSED_FAILED;
		}
		filter->has_uid = true;
		filter->uid = getuid();
	}
	return PARSED_RUN;
}

/* --timeout SECONDS: a whole number from 1 to HELPER_TIMEOUT_MAX_SECONDS. */
static int parse_timeout(const char *text, int *timeout_ms)
{
	char *end;
	long seconds;

	errno = 0;
	seconds = strtol(text, &end, 10);
	if (errno != 0 || end == text || *end != '\0' || seconds < 1 ||
	    seconds > HELPER_TIMEOUT_MAX_SECONDS) {
		complain("invalid --timeout '%s': seconds, 1 to %d", text, HELPER_TIMEOUT_MAX_SECONDS);
		return -1;
	}
	*timeout_ms = (int)seconds * 1000;
	return 0;
}

/* The long options without a short one. */
enum {
	OPTION_JSON = 256,
	OPTION_SOCKET,
	OPTION_DATABASE,
	OPTION_REPORT_DIR,
	OPTION_CONFIG,
	OPTION_TIMEOUT
};

static const struct option long_options[] = {
	{ "jobs", required_argument, NULL, 'j' },
	{ "user", required_argument, NULL, 'u' },
	{ "starttime", required_argument, NULL, 'S' },
	{ "endtime", required_argument, NULL, 'E' },
	{ "format", required_argument, NULL, 'o' },
	{ "allocations", no_argument, NULL, 'X' },
	{ "parsable", no_argument, NULL, 'p' },
	{ "parsable2", no_argument, NULL, 'P' },
	{ "noheader", no_argument, NULL, 'n' },
	{ "long", no_argument, NULL, 'l' },
	{ "json", no_argument, NULL, OPTION_JSON },
	{ "helpformat", no_argument, NULL, 'e' },
	{ "config", required_argument, NULL, OPTION_CONFIG },
	{ "socket", required_argument, NULL, OPTION_SOCKET },
	{ "database", required_argument, NULL, OPTION_DATABASE },
	{ "db", required_argument, NULL, OPTION_DATABASE },
	{ "report-dir", required_argument, NULL, OPTION_REPORT_DIR },
	{ "timeout", required_argument, NULL, OPTION_TIMEOUT },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* One option from getopt_long into options: PARSED_RUN to go on. */
static enum parsed apply_option(int option, const char *argument, struct options *options)
{
	char error[1024];

	switch (option) {
	case 'j':
		if (report_parse_jobs(argument, &options->filter, error, sizeof(error)) < 0) {
			complain("%s", error);
			return PARSED_USAGE_ERROR;
		}
		return PARSED_RUN;
	case 'u': options->user_text = argument; return PARSED_RUN;
	case 'S': options->start_text = argument; return PARSED_RUN;
	case 'E': options->end_text = argument; return PARSED_RUN;
	case 'o': options->format_text = argument; return PARSED_RUN;
	case 'X': options->allocations = true; return PARSED_RUN;
	case 'p': options->layout = REPORT_LAYOUT_PARSABLE; return PARSED_RUN;
	case 'P': options->layout = REPORT_LAYOUT_PARSABLE2; return PARSED_RUN;
	case 'n': options->header = false; return PARSED_RUN;
	case 'l': options->output = OUTPUT_LONG; return PARSED_RUN;
	case OPTION_JSON: options->output = OUTPUT_JSON; return PARSED_RUN;
	case 'e': report_print_field_names(stdout); return PARSED_DONE;
	case OPTION_CONFIG:
		options->config_path = argument;
		options->config_given = true;
		return PARSED_RUN;
	case OPTION_SOCKET:
		return copy_path(options->socket_path, argument, "socket") < 0 ? PARSED_USAGE_ERROR
									     : PARSED_RUN;
	case OPTION_DATABASE:
		options->database_given = true;
		return copy_path(options->database_path, argument, "database") < 0 ? PARSED_USAGE_ERROR
										 : PARSED_RUN;
	case OPTION_REPORT_DIR:
		options->report_dir_given = true;
		return copy_path(options->report_dir, argument, "report directory") < 0
			       ? PARSED_USAGE_ERROR
			       : PARSED_RUN;
	case OPTION_TIMEOUT:
		return parse_timeout(argument, &options->helper_timeout_ms) < 0 ? PARSED_USAGE_ERROR
										  : PARSED_RUN;
	case 'h': usage(stdout); return PARSED_DONE;
	case 'V': printf("vnfs-report %s\n", PACKAGE_VERSION); return PARSED_DONE;
	default: usage(stderr); return PARSED_USAGE_ERROR;
	}
}

/* The command line into options, then vnfs.conf for the paths not given. */
static enum parsed parse_options(int argc, char **argv, struct options *options)
{
	enum parsed parsed;
	char error[1024];
	int option;

	options->config_path = VNFS_DEFAULT_CONFIG_PATH;
	options->header = true;
	options->format_text = REPORT_DEFAULT_FORMAT;
	options->helper_timeout_ms = HELPER_TIMEOUT_DEFAULT_SECONDS * 1000;
	while ((option = getopt_long(argc, argv, "j:u:S:E:o:XpPnlehV", long_options, NULL)) != -1) {
		parsed = apply_option(option, optarg, options);
		if (parsed != PARSED_RUN)
			return parsed;
	}
	if (optind < argc) {
		complain("unexpected argument '%s' (see --help)", argv[optind]);
		return PARSED_USAGE_ERROR;
	}
	if (report_parse_format(options->format_text, &options->format, error, sizeof(error)) < 0) {
		complain("%s", error);
		return PARSED_USAGE_ERROR;
	}
	parsed = apply_filter_options(options);
	if (parsed != PARSED_RUN)
		return parsed;
	return load_config(options) == 0 ? PARSED_RUN : PARSED_FAILED;
}

static int compare_jobs(const void *a, const void *b)
{
	return vnfs_workload_compare_job(a, b);
}

/* Marks the rows to print: a job passes the filter, its steps follow it. */
static size_t select_rows(const struct options *options, const struct report_row *rows,
			  size_t count, bool *selected)
{
	size_t selected_count = 0;
	bool job_passes = false;
	for (size_t i = 0; i < count; i++) {
		if (!rows[i].is_step)
			job_passes = report_filter_job(&options->filter, &rows[i]);
		selected[i] = job_passes && report_filter_selects(&options->filter, &rows[i]) &&
			      !(options->allocations && rows[i].is_step);
		selected_count += selected[i];
	}
	return selected_count;
}

static void print_table(const struct options *options, const struct report_row *rows,
			size_t count, const bool *selected, int64_t now)
{
	for (size_t i = 0; i < count; i++)
		if (selected[i])
			report_print_row(stdout, &options->format, options->layout, &rows[i], now);
}

/* The job row at index job and its selected steps: the records of those steps. */
static struct json_object *job_json(const struct report_row *rows, size_t count, size_t job,
				    const bool *selected)
{
	const struct report_row *row = &rows[job];
	size_t record_count = 0;
	for (size_t i = job + 1; i < count && rows[i].is_step; i++)
		if (selected[i] || selected[job])
			record_count += rows[i].record_count;
	struct vnfs_step_record *records = calloc(record_count + 1, sizeof(*records));
	if (records == NULL)
		return NULL;
	size_t n = 0;
	for (size_t i = job + 1; i < count && rows[i].is_step; i++)
		if (selected[i] || selected[job])
			for (size_t r = 0; r < rows[i].record_count; r++)
				records[n++] = *rows[i].records[r];
	uint32_t job_id = 0; /* Slurm's number; 0 for another source (lib/record.h) */
	if (vnfs_workload_slurm_job_id(&row->workload, &job_id) < 0)
		job_id = 0;
	struct vnfs_job vjob = { .workload = row->workload, .job_id = job_id,
				 .uid = row->uid, .user = row->user,
				 .node = row->nodes, .start_time_ms = row->start_time_ms,
				 .end_time_ms = row->end_time_ms, .step_count = n,
				 .steps = records };
	struct json_object *object = vnfs_job_to_json(&vjob);
	json_object_object_add(object, "state",
			       json_object_new_string(row->running ? "RUNNING" : "COMPLETED"));
	free(records);
	return object;
}

static int add_json(const struct report_row *rows, size_t count, const bool *selected,
		    struct json_object *jobs)
{
	for (size_t i = 0; i < count; i++) {
		if (rows[i].is_step)
			continue;
		bool any = selected[i];
		for (size_t s = i + 1; s < count && rows[s].is_step && !any; s++)
			any = selected[s];
		if (!any)
			continue;
		struct json_object *job = job_json(rows, count, i, selected);
		if (job == NULL) {
			complain("out of memory");
			return -1;
		}
		json_object_array_add(jobs, job);
	}
	return 0;
}

/* history: the open history, which answers every job's baseline over one
 * connection and one prepared query; NULL: the baseline opens the history
 * by its path. */
static void print_long(const struct options *options, struct report_database *history,
		       const struct report_row *rows, size_t count, const bool *selected,
		       int64_t now, bool *first)
{
	bool job_selected = false;
	for (size_t i = 0; i < count; i++) {
		if (!rows[i].is_step)
			job_selected = selected[i];
		/* A job with its steps; a step chosen alone (-j 42.0) on its own. */
		if (!selected[i] || (rows[i].is_step && job_selected))
			continue;
		size_t steps = 0;
		while (!rows[i].is_step && i + 1 + steps < count && rows[i + 1 + steps].is_step)
			steps++;
		struct report_baseline baseline;
		char error[512];
		bool have_baseline =
			(history != NULL ? report_database_baseline(history, rows[i].nodes,
								    &rows[i].workload, now,
								    &baseline, error, sizeof(error))
					 : report_load_baseline(options->database_path, rows[i].nodes,
								&rows[i].workload, now, &baseline,
								error, sizeof(error))) == 0;
		if (!*first)
			printf("\n");
		*first = false;
		report_print_long(stdout, &rows[i], &rows[i + 1], steps,
				  have_baseline ? &baseline : NULL, now);
	}
}

/* Where the output of the jobs so far stands. */
struct output_state {
	int64_t now;
	bool first_long;
	struct report_database *history; /* open while jobs are read from it, or NULL */
	struct json_object *json_jobs;
	/* No history, with Slurm jobs named that Slurm's accounting may have:
	 * the message to give if it has not (""), and whether a job came from it. */
	char history_missing[1100];
	bool history_missing_said;
};

/* Prints (or, for --json, collects) the rows of one job's records. */
static int report_job(const struct options *options, struct report_set *set,
		      struct output_state *state)
{
	struct report_row *rows = NULL;
	size_t count = 0;
	bool *selected = NULL;
	int rc = -1;
	if (report_build_rows(set, &rows, &count) < 0 ||
	    (selected = calloc(count + 1, sizeof(*selected))) == NULL) {
		complain("out of memory");
		goto out;
	}
	select_rows(options, rows, count, selected);
	rc = 0;
	switch (options->output) {
	case OUTPUT_TABLE: print_table(options, rows, count, selected, state->now); break;
	case OUTPUT_JSON: rc = add_json(rows, count, selected, state->json_jobs); break;
	case OUTPUT_LONG:
		print_long(options, state->history, rows, count, selected, state->now,
			   &state->first_long);
		break;
	}
out:
	free(selected);
	report_rows_free(rows, count);
	return rc;
}

static int compare_records_by_job(const void *a, const void *b)
{
	const struct vnfs_step_record *x = a, *y = b;
	return vnfs_workload_compare_job(&x->workload, &y->workload);
}

/* The helper's running jobs, sorted by job.  A helper that does not answer
 * is said, once, here: without it the report lacks the running jobs, and
 * an empty table alone would say there are none. */
static enum live_status load_live(const struct options *options, struct report_set *live)
{
	char error[1024];
	if (options->socket_path[0] == '\0')
		return LIVE_NOT_ASKED;
	int loaded = report_load_live(live, options->socket_path, &options->filter,
				      options->helper_timeout_ms, error, sizeof(error));
	/* The cluster's PostgreSQL history holds running jobs too, as of the
	 * last interval each helper wrote: there, no helper on this node (a
	 * login node) loses nothing but this node's last seconds. */
	if (loaded == REPORT_HELPER_NOT_RUNNING && history_is_postgresql(options->database_path))
		return LIVE_NOT_RUNNING;
	if (loaded == REPORT_HELPER_NOT_RUNNING) {
		complain("vnfs-helper is not running (no answer at %s): running jobs are not shown",
			 options->socket_path);
		return LIVE_NOT_RUNNING;
	}
	if (loaded < 0) {
		complain("live data unavailable: %s", error); /* a helper that is unwell */
		return LIVE_UNWELL;
	}
	if (live->count > 1) /* records may be NULL when the helper holds no job */
		qsort(live->records, live->count, sizeof(*live->records), compare_records_by_job);
	return LIVE_ANSWERED;
}

/* A user outside the administrators' group may not read the history. */
static bool history_closed_to_caller(const char *path)
{
	/* A PostgreSQL history shows each user their own rows: no helper between. */
	if (history_is_postgresql(path))
		return false;
	return geteuid() != 0 && access(path, R_OK) != 0 && errno == EACCES;
}

/*
 * The jobs named with -j that are not running, asked of the helper, which
 * answers from the history it may read and the caller may not, and only
 * about the caller's own jobs (SO_PEERCRED).
 */
static void load_finished_through_helper(const struct options *options, struct report_set *live)
{
	char error[1024];
	bool added = false;

	for (size_t i = 0; i < options->filter.job_count && options->socket_path[0]; i++) {
		struct vnfs_workload job;
		char id[REPORT_ID_MAX];
		bool running = false;
		job = options->filter.jobs[i].workload;
		job.part[0] = '\0';
		for (size_t r = 0; r < live->count && !running; r++)
			running = vnfs_workload_same_job(&live->records[r].workload, &job);
		if (running)
			continue;
		int status = report_load_queried_job(live, options->socket_path, &job,
						     options->helper_timeout_ms, error, sizeof(error));
		if (status < 0)
			complain("job %s from the helper: %s",
				 report_workload_id(&job, id, sizeof(id)), error);
		added = added || status > 0;
	}
	if (added && live->count > 1)
		qsort(live->records, live->count, sizeof(*live->records), compare_records_by_job);
}

/*
 * Without -j: the caller's jobs in the -S/-E range as the helper reads them
 * from the history (HISTORY, SO_PEERCRED: only the caller's own).
 */
static void load_history_through_helper(const struct options *options, struct report_set *live)
{
	char error[1024];
	bool truncated = false;

	if (options->socket_path[0] == '\0')
		return;
	if (report_load_history_listing(live, options->socket_path, &options->filter,
					options->helper_timeout_ms, &truncated, error, sizeof(error)) < 0)
		complain("the history from the helper: %s", error);
	if (truncated)
		complain("note: more jobs than one answer of the helper holds (%d steps): "
			 "narrow the range with -S and -E", VNFS_HISTORY_MAX_STEPS);
	if (live->count > 1)
		qsort(live->records, live->count, sizeof(*live->records), compare_records_by_job);
}

/*
 * Walks the jobs of every source in job order, one job in memory at a time:
 * the history's, the helper's and those named with -j (found perhaps only in
 * report files).  Returns the exit status.
 */
/* Where the jobs come from, each stream sorted by job: the history, the
 * helper's live records, and the jobs -j names (which may be in neither,
 * but in report files). */
struct job_streams {
	struct report_database *database;
	struct report_set live;
	size_t live_index;
	struct vnfs_workload *named; /* their parts dropped */
	size_t named_count, named_index;
};

/* A user who may not read the history: their finished jobs as the helper
 * reads them from it, unless the helper is known to be down (said). */
static void read_history_through_helper(const struct options *options,
					struct job_streams *streams, enum live_status live)
{
	/* Not an error: the history holds every user's jobs (docs/SECURITY.md). */
	if (live == LIVE_NOT_RUNNING) {
		complain("note: the history %s is readable by root and the administrators' group "
			 "only, and the helper that reads it for you is not running: showing your "
			 "jobs as their report files have them", options->database_path);
		return;
	}
	complain("note: the history %s is readable by root and the administrators' group "
		 "only; showing your jobs as the helper and their report files have them",
		 options->database_path);
	if (options->filter.job_count > 0)
		load_finished_through_helper(options, &streams->live);
	else
		load_history_through_helper(options, &streams->live);
}

/* Whether -j names a Slurm job that Slurm's accounting may answer for. */
static bool names_slurm_jobs(const struct options *options)
{
	if (options->sacct[0] == '\0')
		return false;
	for (size_t i = 0; i < options->filter.job_count; i++)
		if (options->filter.jobs[i].workload.source == VNFS_SOURCE_SLURM)
			return true;
	return false;
}

/*
 * Opens the history, or reads it through the helper when the caller may
 * not.  One that does not exist is done without when --report-dir is given
 * (a login node has report files, and neither helper nor history; said)
 * or beside a helper that answered (a node whose helper keeps no history),
 * unless named with --database.  Returns 0, or 1 with the message said.
 */
static int open_history_stream(const struct options *options, struct job_streams *streams,
			       enum live_status live, struct output_state *state)
{
	char error[1024];
	struct stat st;

	if (history_closed_to_caller(options->database_path)) {
		read_history_through_helper(options, streams, live);
		return 0;
	}
	if (report_database_open(&streams->database, options->database_path, &options->filter,
				 error, sizeof(error)) == 0)
		return 0;
	bool missing = !history_is_postgresql(options->database_path) &&
		       stat(options->database_path, &st) < 0 && errno == ENOENT;
	bool may_be_missing = missing && !options->database_given;
	if (may_be_missing && options->report_dir_given) {
		complain("note: no history database at %s: finished jobs are shown from their "
			 "report files in %s only", options->database_path, options->report_dir);
		return 0;
	}
	if (may_be_missing && live == LIVE_ANSWERED)
		return 0;
	/* A login node asked about Slurm jobs: their summaries in Slurm's
	 * accounting may do; said when a job comes from it or does not. */
	if (may_be_missing && names_slurm_jobs(options)) {
		snprintf(state->history_missing, sizeof(state->history_missing), "%s", error);
		return 0;
	}
	if (may_be_missing)
		complain("%s (without one, --report-dir DIR reads the report files alone)", error);
	else
		complain("%s", error);
	return 1;
}

/* The jobs named with -j, their parts dropped, in job order.  Returns 0, or
 * 1 (out of memory, said). */
static int sort_named_jobs(const struct options *options, struct job_streams *streams)
{
	streams->named_count = options->filter.job_count;
	streams->named = calloc(streams->named_count + 1, sizeof(*streams->named));
	if (streams->named == NULL) {
		complain("out of memory");
		return 1;
	}
	for (size_t i = 0; i < streams->named_count; i++) {
		streams->named[i] = options->filter.jobs[i].workload;
		streams->named[i].part[0] = '\0';
	}
	qsort(streams->named, streams->named_count, sizeof(streams->named[0]), compare_jobs);
	return 0;
}

/* The first job (part "") of the three streams; false when all are done. */
static bool next_job(const struct job_streams *streams, struct vnfs_workload *job)
{
	struct vnfs_workload candidate;
	bool any = false;

	if (report_database_next(streams->database, &candidate))
		*job = candidate, any = true;
	const struct vnfs_workload *live_job = streams->live_index < streams->live.count
						       ? &streams->live.records[streams->live_index].workload
						       : NULL;
	if (live_job != NULL && (!any || vnfs_workload_compare_job(live_job, job) < 0)) {
		*job = *live_job, any = true;
		job->part[0] = '\0';
	}
	if (streams->named_index < streams->named_count &&
	    (!any || vnfs_workload_compare_job(&streams->named[streams->named_index], job) < 0))
		*job = streams->named[streams->named_index], any = true;
	return any;
}

/* Takes job's records from every stream into set (and its report files).
 * Returns 0, or 1 with the message said. */
static int gather_job(const struct options *options, struct job_streams *streams,
		      const struct vnfs_workload *job, struct report_set *set)
{
	struct vnfs_workload candidate;
	char error[1024];
	int status = 0;

	if (report_database_next(streams->database, &candidate) &&
	    vnfs_workload_same_job(&candidate, job) &&
	    report_database_read_job(streams->database, set, error, sizeof(error)) < 0) {
		complain("%s", error);
		status = 1;
	}
	for (; streams->live_index < streams->live.count &&
	       vnfs_workload_same_job(&streams->live.records[streams->live_index].workload, job);
	     streams->live_index++)
		if (report_set_add(set, &streams->live.records[streams->live_index]) < 0)
			status = 1;
	while (streams->named_index < streams->named_count &&
	       vnfs_workload_same_job(&streams->named[streams->named_index], job))
		streams->named_index++;
	if (status == 0 && options->report_dir[0] != '\0' &&
	    report_load_files(set, options->report_dir, job, error, sizeof(error)) < 0)
		complain("skipping a report file: %s", error);
	return status;
}

/* A named Slurm job no source had, Slurm's accounting either (loaded 0) or
 * not readably (-1, why in error).  Without a history, it is the history's
 * failure: said, 1.  Else a job of no data, as sacct says nothing of one:
 * only a failure of sacct is said, and 0. */
static int accounting_not_found(const struct vnfs_workload *job, int loaded, const char *error,
				struct output_state *state)
{
	if (state->history_missing[0] == '\0') {
		if (loaded < 0)
			complain("note: Slurm's accounting has nothing readable on job %s: %s",
				 job->job, error);
		return 0;
	}
	if (!state->history_missing_said)
		complain("%s (without one, --report-dir DIR reads the report files alone)",
			 state->history_missing);
	state->history_missing_said = true;
	if (loaded < 0)
		complain("and Slurm's accounting has nothing readable on job %s: %s", job->job,
			 error);
	else
		complain("and Slurm's accounting has no vnfs summary of job %s", job->job);
	return 1;
}

/* A Slurm job named with -j that no other source has, as Slurm's accounting
 * keeps it.  Returns 0, or 1 when it could not be (said). */
static int report_accounting(const struct options *options, const struct vnfs_workload *job,
			     struct output_state *state)
{
	struct report_accounting_job *found = calloc(1, sizeof(*found));
	char error[1024], partial[VNFS_ACCOUNTING_MISSING_MAX + 64];
	if (found == NULL) {
		complain("out of memory");
		return 1;
	}
	int loaded = report_load_accounting_job(options->sacct, job, found, error, sizeof(error));
	if (loaded <= 0) {
		free(found);
		return accounting_not_found(job, loaded, error, state);
	}
	if (state->history_missing[0] != '\0' && !state->history_missing_said)
		complain("note: no history database at %s: jobs are shown from Slurm's accounting",
			 options->database_path);
	state->history_missing_said = true;
	bool selected = false;
	select_rows(options, &found->row, 1, &selected);
	if (selected && report_accounting_partial(&found->summary, partial, sizeof(partial))[0])
		complain("note: job %s: %s: its numbers lack theirs", job->job, partial);
	int status = 0;
	if (selected && options->output == OUTPUT_TABLE)
		print_table(options, &found->row, 1, &selected, state->now);
	if (selected && options->output == OUTPUT_LONG) {
		if (!state->first_long)
			printf("\n");
		state->first_long = false;
		report_print_accounting_long(stdout, found, state->now);
	}
	if (selected && options->output == OUTPUT_JSON) {
		struct json_object *object = report_accounting_json(found);
		if (object == NULL) {
			complain("out of memory");
			status = 1;
		} else {
			json_object_array_add(state->json_jobs, object);
		}
	}
	free(found);
	return status;
}

static int run(const struct options *options, struct output_state *state)
{
	struct job_streams streams = { 0 };
	struct vnfs_workload job;
	int status;

	report_set_init(&streams.live);
	enum live_status live = load_live(options, &streams.live);
	status = open_history_stream(options, &streams, live, state);
	state->history = streams.database;
	if (status == 0)
		status = sort_named_jobs(options, &streams);
	if (status == 0 && options->output == OUTPUT_TABLE && options->header)
		report_print_header(stdout, &options->format, options->layout);
	while (status == 0 && next_job(&streams, &job)) {
		struct report_set set;
		report_set_init(&set);
		status = gather_job(options, &streams, &job, &set);
		if (status == 0 && set.count == 0 && job.source == VNFS_SOURCE_SLURM &&
		    options->sacct[0] != '\0')
			status = report_accounting(options, &job, state);
		else if (status == 0 && report_job(options, &set, state) < 0)
			status = 1;
		report_set_free(&set);
	}
	free(streams.named);
	state->history = NULL;
	report_database_close(streams.database);
	report_set_free(&streams.live);
	return status;
}

int main(int argc, char **argv)
{
	struct options *options = calloc(1, sizeof(*options));
	if (options == NULL) {
		complain("out of memory");
		return EXIT_FAILED;
	}
#ifdef HAVE_POSTGRESQL
	history_register_postgresql();
#endif
	enum parsed parsed = parse_options(argc, argv, options);
	if (parsed != PARSED_RUN) {
		free(options);
		return parsed == PARSED_DONE	      ? EXIT_REPORTED
		       : parsed == PARSED_USAGE_ERROR ? EXIT_USAGE
						      : EXIT_FAILED;
	}

	struct output_state state = { .now = report_now_ms(), .first_long = true };
	if (options->output == OUTPUT_JSON)
		state.json_jobs = json_object_new_array();
	int status = run(options, &state);
	if (status == 0 && options->output == OUTPUT_JSON) {
		struct json_object *top = json_object_new_object();
		json_object_object_add(top, "jobs", state.json_jobs);
		state.json_jobs = NULL;
		puts(json_object_to_json_string_ext(top, JSON_C_TO_STRING_PRETTY |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(top);
	}
	json_object_put(state.json_jobs);
	if (fflush(stdout) != 0) {
		complain("writing the report: %s", strerror(errno));
		status = 1;
	}
	free(options);
	return status;
}
