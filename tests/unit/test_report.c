/*
 * test_report.c — vnfs-report against a real history database (filled by the
 * real SQLite sink) and real report files, run as a subprocess exactly as a
 * user would; and its parts (time forms, findings, baseline, report files)
 * called directly.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "helper/control/server.h"
#include "helper/outputs/sink.h"
#include "lib/history/reader.h"
#include "lib/job_report/fields.h"
#include "lib/job_report/filter.h"
#include "lib/job_report/files.h"
#include "lib/job_report/findings.h"
#include "lib/job_report/rows.h"
#include "lib/job_report/text.h"
#include "lib/job_report/times.h"
#include "lib/job_report/wire.h"
#include "lib/record_json.h"
#include "report/sources.h"
#include "tests/unit/history_fixtures.h"

#define START 1795000000000LL /* 2026-11-18T11:06:40Z */
#define DAY (86400 * 1000LL)

static char directory[64];
static char database[128];
static char report_dir[128];
static char config_path[128];

/* ---- the fixture database ------------------------------------------------- */

static void finish(struct vnfs_sink *sink, struct history_step *steps, size_t count,
		   int64_t start, int64_t end)
{
	struct vnfs_step_record records[4];
	for (size_t i = 0; i < count; i++) {
		history_step_finish(&steps[i], end);
		records[i] = steps[i].record;
	}
	struct vnfs_job job = { .job_id = records[0].job_id, .uid = records[0].uid,
				.user = records[0].user, .node = records[0].node,
				.start_time_ms = start, .end_time_ms = end,
				.step_count = count, .steps = records };
	vnfs_workload_of_slurm_job(&job.workload, job.job_id);
	sink->job_finished(sink->state, &job);
}

/*
 * job 100  alice  node1: batch (x1) and step 0 (x1); node2 (report file):
 *                 step 0 (x3); 2026-11-18 11:06:40 to 11:08:50
 * job 101  bob    node1: step 0 (x2); 2026-11-19 11:06:40, one hour
 * job 102  alice  node1: step 0 (x1), running since 2026-11-20 11:06:40
 */
static int setup_history(void **state)
{
	(void)state;
	snprintf(directory, sizeof(directory), "/tmp/vnfs-test-report.XXXXXX");
	if (mkdtemp(directory) == NULL)
		return -1;
	snprintf(database, sizeof(database), "%s/history.db", directory);
	snprintf(report_dir, sizeof(report_dir), "%s/reports", directory);
	snprintf(config_path, sizeof(config_path), "%s/vnfs.conf", directory);
	FILE *config_file = fopen(config_path, "w");
	if (config_file == NULL || fclose(config_file) != 0)
		return -1;
	setenv("TZ", "UTC", 1);
	tzset();

	struct vnfs_config config = { 0 };
	snprintf(config.sqlite.path, sizeof(config.sqlite.path), "%s", database);
	struct vnfs_sink sink;
	char error[256];
	if (vnfs_sink_sqlite_open(&sink, &config, error, sizeof(error)) != 0) {
		fprintf(stderr, "%s\n", error);
		return -1;
	}
	struct history_step steps[2];
	history_step_init(&steps[0], 100, VNFS_STEP_BATCH, 1001, "alice", "node1", START, 1);
	history_step_init(&steps[1], 100, 0, 1001, "alice", "node1", START + 1000, 1);
	finish(&sink, steps, 2, START, START + 130000);

	history_step_init(&steps[0], 101, 0, 1002, "bob", "node1", START + DAY, 2);
	finish(&sink, steps, 1, START + DAY, START + DAY + 3600000);

	history_step_init(&steps[0], 102, 0, 1001, "alice", "node1", START + 2 * DAY, 1);
	struct vnfs_interval interval = { .time_ms = START + 2 * DAY, .node = "node1",
					  .step_count = 1, .steps = &steps[0].record };
	sink.publish(sink.state, &interval);
	sink.close(sink.state);

	/* The job's other node left its report file. */
	history_step_init(&steps[0], 100, 0, 1001, "alice", "node2", START + 2000, 3);
	history_step_finish(&steps[0], START + 129000);
	struct vnfs_job job = { .job_id = 100, .uid = 1001, .user = "alice", .node = "node2",
				.start_time_ms = START + 2000, .end_time_ms = START + 129000,
				.step_count = 1, .steps = &steps[0].record };
	vnfs_workload_of_slurm_job(&job.workload, job.job_id);
	if (vnfs_report_write_files(&job, report_dir, error, sizeof(error)) != 0) {
		fprintf(stderr, "%s\n", error);
		return -1;
	}
	return 0;
}

static int teardown_history(void **state)
{
	(void)state;
	char command[128];
	snprintf(command, sizeof(command), "rm -rf '%s'", directory);
	return system(command) == 0 ? 0 : -1;
}

/* ---- running vnfs-report ------------------------------------------------ */

struct run {
	int status;
	char out[1 << 18];
	char err[4096];
};

static void read_file(const char *path, char *buf, size_t size)
{
	FILE *file = fopen(path, "r");
	assert_non_null(file);
	size_t n = fread(buf, 1, size - 1, file);
	buf[n] = '\0';
	assert_true(feof(file)); /* the whole output fitted */
	fclose(file);
}

static char socket_name[32] = "none.sock"; /* in directory; the live test serves one */
static const char *run_as = "";              /* the non-root test sets a setpriv prefix */

/* Runs vnfs-report with exactly these arguments. */
static void report_alone(struct run *run, const char *arguments)
{
	char command[2048], out_path[128], err_path[128];
	snprintf(out_path, sizeof(out_path), "%s/out", directory);
	snprintf(err_path, sizeof(err_path), "%s/err", directory);
	snprintf(command, sizeof(command), "TZ=UTC %s%s %s >%s 2>%s", run_as, VNFS_REPORT_PROGRAM,
		 arguments, out_path, err_path);
	int status = system(command);
	assert_true(WIFEXITED(status));
	run->status = WEXITSTATUS(status);
	read_file(out_path, run->out, sizeof(run->out));
	read_file(err_path, run->err, sizeof(run->err));
}

/* Runs vnfs-report with the fixture's paths and the given arguments. */
static void report(struct run *run, const char *arguments)
{
	char command[1536];
	snprintf(command, sizeof(command), "--config %s --socket %s/%s --database %s --report-dir %s %s",
		 config_path, directory, socket_name, database, report_dir, arguments);
	report_alone(run, command);
}

static struct run run; /* too big for the stack */

/* What vnfs-report says, once, with no helper at the socket. */
static const char *helper_down_note(const char *socket_file)
{
	static char note[512];
	snprintf(note, sizeof(note),
		 "vnfs-report: vnfs-helper is not running (no answer at %s/%s): running jobs are "
		 "not shown\n",
		 directory, socket_file);
	return note;
}

/* All a run that works says on stderr: that the helper is down, unless
 * the live test serves one. */
static const char *quiet_err(void)
{
	return strcmp(socket_name, "none.sock") == 0 ? helper_down_note(socket_name) : "";
}

static void expect(const char *arguments, const char *out)
{
	report(&run, arguments);
	assert_string_equal(run.err, quiet_err());
	assert_string_equal(run.out, out);
	assert_int_equal(run.status, 0);
}

/* A run that fails (exit status 1) after the helper was asked. */
static void expect_failure(const char *arguments, const char *err)
{
	char expected[2048];
	report(&run, arguments);
	snprintf(expected, sizeof(expected), "%s%s", quiet_err(), err);
	assert_string_equal(run.err, expected);
	assert_string_equal(run.out, "");
	assert_int_equal(run.status, 1);
}

/* A command line that cannot be run: said, exit status 2 (sacct's), before
 * any source is asked. */
static void expect_usage_error(const char *arguments, const char *err)
{
	report(&run, arguments);
	assert_string_equal(run.err, err);
	assert_string_equal(run.out, "");
	assert_int_equal(run.status, 2);
}

/* Slurm's job job_id as a workload (the report functions take workloads). */
static const struct vnfs_workload *slurm_job(uint32_t job_id)
{
	static struct vnfs_workload job;
	vnfs_workload_of_slurm_job(&job, job_id);
	return &job;
}

static void test_jobs_parsable(void **state)
{
	(void)state;
	expect("-j 100 -o JobID,User,Nodes,ReadOps,WriteOps,ReadBytes,MetaOps,State -p",
	       "JobID|User|Nodes|ReadOps|WriteOps|ReadBytes|MetaOps|State|\n"
	       "100|alice|node1,node2|50|25|52428800|120|COMPLETED|\n"
	       "100.batch|alice|node1|10|5|10485760|24|COMPLETED|\n"
	       "100.0|alice|node1,node2|40|20|41943040|96|COMPLETED|\n");
	expect("-j 100.0,101 -P -n -o JobID,ReadOps,TopProcess,Mounts,Tags",
	       "100.0|40|python3|/mnt/nfs|PROJECT_NAME=alpha\n"
	       "101|20|python3|/mnt/nfs|PROJECT_NAME=alpha\n"
	       "101.0|20|python3|/mnt/nfs|PROJECT_NAME=alpha\n");
	expect("-j 101.0 -P -o AvgReadSize,AvgWriteSize,ReadP50,ReadP99,WriteP50,WriteP99,"
	       "MetaP99,Errors,MmapReadBytes",
	       "AvgReadSize|AvgWriteSize|ReadP50|ReadP99|WriteP50|WriteP99|MetaP99|Errors|"
	       "MmapReadBytes\n"
	       "1048576|1048576|1572864|2097152|3145728|4194304|131072|0|0\n");
}

static void test_table_widths(void **state)
{
	(void)state;
	expect("-j 101 -X -o JobID%8,User,ReadBytes,Elapsed,Start,End,ReadP99",
	       "JobID         User  ReadBytes    Elapsed               Start                 End "
	       "   ReadP99\n"
	       "-------- --------- ---------- ---------- ------------------- ------------------- "
	       "----------\n"
	       "101            bob        20M   01:00:00 2026-11-19T11:06:40 2026-11-19T12:06:40 "
	       "    2.10ms\n");
	/* Too long for its column: cut, with '+' marking the cut (like sacct). */
	expect("-j 100 -X -n -o JobID%2,Tags%8,Nodes%20", "1+ PROJECT+ node1,node2         \n");
}

static void test_user_and_times(void **state)
{
	(void)state;
	expect("-u 1002 -S 2026-11-01 -X -P -n -o JobID,User", "101|bob\n");
	expect("-u alice -S 2026-11-01 -X -P -n -o JobID,State,End",
	       "100|COMPLETED|2026-11-18T11:08:50\n102|RUNNING|Unknown\n");
	expect("-S 2026-11-19T00:00 -E 2026-11-19T23:59:59 -X -P -n -o JobID", "101\n");
	expect("-S 2026-11-18T11:08:51 -E 2026-11-20 -X -P -n -o JobID", "101\n");
	/* Jobs still running pass any start; the finished ones ended long ago. */
	expect("-S now-1hours -X -P -n -o JobID", "102\n");
	/* No -j and no -S: since midnight, which excludes the old finished jobs. */
	expect("-X -P -n -o JobID", "102\n");
}

static void test_json(void **state)
{
	(void)state;
	report(&run, "-j 100 --json");
	assert_int_equal(run.status, 0);
	assert_string_equal(run.err, quiet_err());
	struct json_object *top = json_tokener_parse(run.out), *jobs, *job, *value, *operations;
	assert_non_null(top);
	assert_true(json_object_object_get_ex(top, "jobs", &jobs));
	assert_int_equal(json_object_array_length(jobs), 1);
	job = json_object_array_get_idx(jobs, 0);
	assert_true(json_object_object_get_ex(job, "job", &value));
	assert_int_equal(json_object_get_int64(value), 100);
	assert_true(json_object_object_get_ex(job, "node", &value));
	assert_string_equal(json_object_get_string(value), "node1,node2");
	assert_true(json_object_object_get_ex(job, "state", &value));
	assert_string_equal(json_object_get_string(value), "COMPLETED");
	assert_true(json_object_object_get_ex(job, "operations", &operations));
	assert_true(json_object_object_get_ex(operations, "read", &value));
	assert_true(json_object_object_get_ex(value, "count", &value));
	assert_int_equal(json_object_get_int64(value), 50);
	assert_true(json_object_object_get_ex(job, "steps", &value));
	assert_int_equal(json_object_array_length(value), 3); /* batch, 0@node1, 0@node2 */
	json_object_put(top);
}

static void test_long(void **state)
{
	(void)state;
	expect("-j 101 -l",
	       "Job 101  user bob (1002)  COMPLETED\n"
	       "Nodes:   node1\n"
	       "Tags:    PROJECT_NAME=alpha\n"
	       "Start:   2026-11-19T11:06:40  End: 2026-11-19T12:06:40  Elapsed: 01:00:00\n"
	       "Steps:   101.0\n"
	       "\n"
	       "Operation         Count   Errors   Total time        Avg        p50        p99"
	       "      Bytes\n"
	       "read                 20        0      31.46ms     1.57ms     1.57ms     2.10ms"
	       "        20M\n"
	       "write                10        0      31.46ms     3.15ms     3.15ms     4.19ms"
	       "        10M\n"
	       "open                  4        0     393.22us    98.30us    98.30us   131.07us"
	       "          0\n"
	       "close                 4        0      24.58us     6.14us     6.14us     8.19us"
	       "          0\n"
	       "getattr              40        0     983.04us    24.58us    24.58us    32.77us"
	       "          0\n"
	       "\n"
	       "Process            Read ops Read bytes  Write ops Write bytes  Other ops\n"
	       "python3                  20        20M          0           0         48\n"
	       "dd                        0          0         10         10M          0\n"
	       "\n"
	       "Mounts\n"
	       "  /mnt/nfs (server:/export, NFSv4.2, rsize 1M, wsize 1M): 78 ops, 0 errors, "
	       "64.32ms, read 20M, written 10M\n"
	       "\n"
	       "Findings\n"
	       "  none\n");
}

static void test_errors(void **state)
{
	(void)state;
	expect_usage_error("-o JobID,Foo",
		       "vnfs-report: unknown field 'Foo'; valid fields: JobID User Tags Nodes Start "
		       "End Elapsed ReadBytes WriteBytes ReadOps WriteOps MetaOps Errors "
		       "AvgReadSize AvgWriteSize ReadP50 ReadP99 WriteP50 WriteP99 MetaP99 "
		       "MmapReadBytes TopProcess Mounts State\n");
	expect_usage_error("-o JobID%0", "vnfs-report: bad width '0' for field JobID: use 1 to 1000\n");
	expect_usage_error("-S yesterday",
		       "vnfs-report: -S: invalid time 'yesterday': use YYYY-MM-DD[THH:MM[:SS]], "
		       "HH:MM[:SS] or now[-N{minutes,hours,days,weeks}]\n");
	expect_usage_error("-E 2026-02-30", "vnfs-report: -E: invalid time '2026-02-30': use "
					"YYYY-MM-DD[THH:MM[:SS]], HH:MM[:SS] or "
					"now[-N{minutes,hours,days,weeks}]\n");
	expect_usage_error("-j 12x", "vnfs-report: invalid job '12x': use a job id, or job.step "
				 "(e.g. 42, 42.0, 42.batch)\n");
	expect_usage_error("-j 12.bat", "vnfs-report: invalid step 'bat' of job 12: use a number, "
				    "batch, extern or interactive\n");
	expect_usage_error("-u 'no user'", "vnfs-report: invalid user 'no user'\n");
	expect_usage_error("-X extra", "vnfs-report: unexpected argument 'extra' (see --help)\n");
	expect_usage_error("--timeout 0", "vnfs-report: invalid --timeout '0': seconds, 1 to 3600\n");
	expect_usage_error("--timeout 3601",
			   "vnfs-report: invalid --timeout '3601': seconds, 1 to 3600\n");
	expect_usage_error("--timeout 2s", "vnfs-report: invalid --timeout '2s': seconds, 1 to 3600\n");
	/* getopt's own message, then the usage, as vnfs-helper's bad option. */
	report(&run, "--bogus");
	assert_int_equal(run.status, 2);
	assert_string_equal(run.out, "");
	assert_non_null(strstr(run.err, "unrecognized option '--bogus'\nUsage: vnfs-report"));
	report(&run, "-j");
	assert_int_equal(run.status, 2);
	assert_non_null(strstr(run.err, "option requires an argument -- 'j'\nUsage: vnfs-report"));
	report(&run, "--help");
	assert_int_equal(run.status, 0);
	assert_string_equal(run.err, "");
	assert_non_null(strstr(run.out, "2 on a bad option or value"));
	expect("-u nosuchuser -S 2026-11-01 -X -P -n -o JobID", "");

	char arguments[256], message[512];
	snprintf(arguments, sizeof(arguments), "--database %s/missing.db", directory);
	snprintf(message, sizeof(message),
		 "vnfs-report: history database %s/missing.db: No such file or directory\n",
		 directory);
	expect_failure(arguments, message);
}

/* -e lists and exits: no source is asked, so nothing on stderr. */
static void expect_listed(const char *arguments, const char *out)
{
	report(&run, arguments);
	assert_string_equal(run.err, "");
	assert_string_equal(run.out, out);
	assert_int_equal(run.status, 0);
}

static void test_helpformat(void **state)
{
	(void)state;
	expect_listed("-e", "JobID           User            Tags            Nodes           Start\n"
		     "End             Elapsed         ReadBytes       WriteBytes      ReadOps\n"
		     "WriteOps        MetaOps         Errors          AvgReadSize     AvgWriteSize\n"
		     "ReadP50         ReadP99         WriteP50        WriteP99        MetaP99\n"
		     "MmapReadBytes   TopProcess      Mounts          State\n");
}

/* ---- a node without helper, or without history --------------------------- */

/* A config file in directory naming the history path (and nothing else). */
static void write_config(const char *name, const char *history, char *path, size_t size)
{
	snprintf(path, size, "%s/%s", directory, name);
	FILE *file = fopen(path, "w");
	assert_non_null(file);
	/* Slurm's accounting is asked in the guest (accounting.sh), where a
	 * slurmdbd runs: here no sacct, as on a node without Slurm. */
	assert_true(fprintf(file, "[sqlite]\npath = %s\n[slurm_accounting]\nsacct =\n", history) > 0);
	assert_int_equal(fclose(file), 0);
}

/*
 * No helper and an empty history: the header, exit 0, and one line saying
 * why no running job is there (it said nothing).  A history that does not
 * exist is no error when report files are read (--report-dir: a login
 * node), and stays one otherwise.
 */
static void test_helper_down(void **state)
{
	(void)state;
	char empty[128], absent[128], config[128], arguments[1024], err[2048];
	snprintf(empty, sizeof(empty), "%s/empty.db", directory);
	snprintf(absent, sizeof(absent), "%s/absent.db", directory);

	struct vnfs_config sink_config = { 0 };
	snprintf(sink_config.sqlite.path, sizeof(sink_config.sqlite.path), "%s", empty);
	struct vnfs_sink sink;
	char error[256];
	assert_int_equal(vnfs_sink_sqlite_open(&sink, &sink_config, error, sizeof(error)), 0);
	sink.close(sink.state);
	write_config("empty.conf", empty, config, sizeof(config));
	snprintf(arguments, sizeof(arguments), "--config %s --socket %s/down.sock -P", config,
		 directory);
	report_alone(&run, arguments);
	assert_string_equal(run.err, helper_down_note("down.sock"));
	assert_string_equal(run.out, "JobID|User|Tags|Elapsed|ReadBytes|WriteBytes|ReadOps|"
				     "WriteOps|MetaOps|Errors|State\n");
	assert_int_equal(run.status, 0);

	/* A login node: no helper, no history, the report files of job 100. */
	write_config("absent.conf", absent, config, sizeof(config));
	snprintf(arguments, sizeof(arguments),
		 "--config %s --socket %s/down.sock --report-dir %s -j 100 -P -n "
		 "-o JobID,Nodes,ReadOps",
		 config, directory, report_dir);
	report_alone(&run, arguments);
	snprintf(err, sizeof(err),
		 "%svnfs-report: note: no history database at %s: finished jobs are shown from "
		 "their report files in %s only\n",
		 helper_down_note("down.sock"), absent, report_dir);
	assert_string_equal(run.err, err);
	assert_string_equal(run.out, "100|node2|30\n100.0|node2|30\n");
	assert_int_equal(run.status, 0);

	/* Without --report-dir the history is what there is to read. */
	snprintf(arguments, sizeof(arguments), "--config %s --socket %s/down.sock -j 100", config,
		 directory);
	report_alone(&run, arguments);
	snprintf(err, sizeof(err),
		 "%svnfs-report: history database %s: No such file or directory (without one, "
		 "--report-dir DIR reads the report files alone)\n",
		 helper_down_note("down.sock"), absent);
	assert_string_equal(run.err, err);
	assert_string_equal(run.out, "");
	assert_int_equal(run.status, 1);

	/* With a sacct to ask that cannot answer, still the history's error,
	 * and why the accounting did not stand in for it. */
	char sacct_config[128];
	snprintf(sacct_config, sizeof(sacct_config), "%s/no-sacct.conf", directory);
	FILE *file = fopen(sacct_config, "w");
	assert_non_null(file);
	assert_true(fprintf(file, "[sqlite]\npath = %s\n[slurm_accounting]\nsacct = %s/no-sacct\n",
			    absent, directory) > 0);
	assert_int_equal(fclose(file), 0);
	snprintf(arguments, sizeof(arguments), "--config %s --socket %s/down.sock -j 100",
		 sacct_config, directory);
	report_alone(&run, arguments);
	snprintf(err, sizeof(err),
		 "%svnfs-report: history database %s: No such file or directory (without one, "
		 "--report-dir DIR reads the report files alone)\n"
		 "vnfs-report: and Slurm's accounting has nothing readable on job 100: cannot run "
		 "%s/no-sacct: No such file or directory\n",
		 helper_down_note("down.sock"), absent, directory);
	assert_string_equal(run.err, err);
	assert_int_equal(run.status, 1);
}

/* ---- live from a helper ------------------------------------------------- */

/*
 * A helper's socket (the real server) that holds job 500 (new) and job 102,
 * which the database also has, with a later sample: x5 instead of x1.
 */
static int live_job(uint32_t job_id, uint64_t scale, struct vnfs_owned_job *copy)
{
	struct history_step step;
	history_step_init(&step, job_id, 0, 1001, "alice", "node1", START + 2 * DAY, scale);
	step.record.sample_time_ms = START + 2 * DAY + 600000;
	struct vnfs_job job = { .job_id = job_id, .uid = 1001, .user = "alice", .node = "node1",
				.start_time_ms = START + 2 * DAY, .step_count = 1,
				.steps = &step.record };
	vnfs_workload_of_slurm_job(&job.workload, job.job_id);
	return vnfs_owned_job_copy(copy, &job);
}

static int live_handler(void *context, const struct vnfs_request *request,
			const struct vnfs_peer *peer, struct vnfs_answer *answer)
{
	(void)context, (void)peer;
	struct vnfs_reply *reply = &answer->reply;
	if (request->type == VNFS_REQUEST_LIST) {
		reply->entries = calloc(2, sizeof(*reply->entries));
		if (reply->entries == NULL)
			return -1;
		for (uint32_t job_id = 102; job_id <= 500; job_id += 398)
		{
			struct vnfs_list_entry *entry = &reply->entries[reply->entry_count++];

			*entry = (struct vnfs_list_entry){ .uid = 1001, .user = "alice",
							   .running = true };
			vnfs_workload_of_slurm_step(&entry->workload, job_id, 0);
		}
		return 0;
	}
	uint32_t job_id = 0;
	(void)vnfs_workload_slurm_job_id(&request->workload, &job_id);
	if (request->type == VNFS_REQUEST_QUERY && (job_id == 500 || job_id == 102)) {
		answer->owner_known = true;
		answer->owner_uid = 1001;
		return live_job(job_id, job_id == 500 ? 1 : 5, &reply->job);
	}
	vnfs_reply_fail(reply, "job %u is not running on this node", job_id);
	return 0;
}

/* A helper that takes the connection and never answers (stopped, or stuck
 * in the kernel): --timeout bounds the wait, and the report says so and
 * goes on from the history. */
static void test_helper_silent(void **state)
{
	(void)state;
	struct sockaddr_un address = { .sun_family = AF_UNIX };
	char arguments[512];
	int listener = socket(AF_UNIX, SOCK_STREAM, 0);

	assert_true(listener >= 0);
	snprintf(address.sun_path, sizeof(address.sun_path), "%s/silent.sock", directory);
	assert_int_equal(bind(listener, (struct sockaddr *)&address, sizeof(address)), 0);
	assert_int_equal(listen(listener, 4), 0);
	snprintf(arguments, sizeof(arguments), "--socket %s --timeout 1 -X -P -n -o JobID,ReadOps",
		 address.sun_path);
	report(&run, arguments);
	assert_int_equal(run.status, 0);
	assert_string_equal(run.out, "102|10\n");
	assert_non_null(strstr(run.err, "did not answer within 1000 ms"));
	close(listener);
	unlink(address.sun_path);
}

static void test_live(void **state)
{
	(void)state;
	char path[128], error[256];
	snprintf(socket_name, sizeof(socket_name), "helper.sock");
	snprintf(path, sizeof(path), "%s/%s", directory, socket_name);
	struct vnfs_server_options options = { .socket_path = path, .socket_mode = 0666 };
	struct vnfs_server *server = NULL;
	if (vnfs_server_start(&server, &options, live_handler, NULL, error, sizeof(error)) != 0)
		fail_msg("server: %s", error);

	expect("-j 500 -P -n -o JobID,User,ReadOps,State,End",
	       "500|alice|10|RUNNING|Unknown\n500.0|alice|10|RUNNING|Unknown\n");
	/* Job 102 is live and in the history: the later sample, not the sum. */
	expect("-j 102 -X -P -n -o JobID,ReadOps", "102|50\n");
	expect("-X -P -n -o JobID,ReadOps", "102|50\n500|10\n");

	vnfs_server_stop(server);
	snprintf(socket_name, sizeof(socket_name), "none.sock");
	/* A helper gone: said once (expect), the history's last write of 102. */
	expect("-X -P -n -o JobID,ReadOps", "102|10\n");
}

/* A user sees their own jobs only, from the history and the report files. */
/* The database and its -wal and -shm, as the helper's admin_group makes them. */
static void set_history_group(const char *history, gid_t group)
{
	const char *suffixes[] = { "", "-wal", "-shm" };
	char path[320];

	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s%s", history, suffixes[i]);
		assert_true(chown(path, 0, group) == 0 || errno == ENOENT);
	}
}

static void test_non_root(void **state)
{
	(void)state;
	assert_int_equal(geteuid(), 0); /* the unit tests run as root */
	char history[300], note[1024];

	assert_int_equal(chmod(directory, 0755), 0);
	snprintf(history, sizeof(history), "%s/history.db", directory);
	/* No helper here: the listing it would give (HISTORY) is said to be
	 * missing, not shown empty without a word. */
	snprintf(note, sizeof(note),
		 "%svnfs-report: note: the history %s is readable by root and the administrators' "
		 "group only, and the helper that reads it for you is not running: showing your "
		 "jobs as their report files have them\n",
		 helper_down_note("none.sock"), history);
	/* The history is every user's: closed to users (0640, root's). */
	run_as = "setpriv --reuid=1001 --regid=1001 --clear-groups ";
	report(&run, "-S 2026-11-01 -X -P -n -o JobID,User,ReadOps");
	assert_string_equal(run.err, note);
	assert_string_equal(run.out, "");
	assert_int_equal(run.status, 0);
	/* A refusal, not a usage error: exit status 1, before any source. */
	report(&run, "-u 1002");
	assert_string_equal(run.err, "vnfs-report: only root may see other users' jobs\n");
	assert_int_equal(run.status, 1);
	/* A member of the administrators' group reads it; the tool still shows
	 * a user their own jobs unless asked otherwise. */
	set_history_group(history, 1001);
	expect("-S 2026-11-01 -X -P -n -o JobID,User,ReadOps", "100|alice|50\n102|alice|10\n");
	expect("-u alice -S 2026-11-01 -X -P -n -o JobID", "100\n102\n");
	run_as = "setpriv --reuid=1002 --regid=1002 --clear-groups ";
	report(&run, "-S 2026-11-01 -X -P -n -o JobID,User");
	assert_string_equal(run.err, note);
	assert_string_equal(run.out, "");
	run_as = "";
	set_history_group(history, 0);
	assert_int_equal(chmod(directory, 0700), 0);
}

/* ---- the parts ---------------------------------------------------------- */

static void test_times(void **state)
{
	(void)state;
	int64_t t;
	char error[256], buf[64];
	const int64_t now = START + 123;

	assert_int_equal(report_parse_time("2026-11-18", now, &t, error, sizeof(error)), 0);
	assert_int_equal(t, 1795000000000LL - (11 * 3600 + 6 * 60 + 40) * 1000LL);
	assert_int_equal(report_parse_time("2026-11-18T11:06:40", now, &t, error, sizeof(error)),
			 0);
	assert_int_equal(t, START);
	assert_int_equal(report_parse_time("2026-11-18T11:06", now, &t, error, sizeof(error)), 0);
	assert_int_equal(t, START - 40000);
	assert_int_equal(report_parse_time("11:06:40", now, &t, error, sizeof(error)), 0);
	assert_int_equal(t, START);
	assert_int_equal(report_parse_time("now", now, &t, error, sizeof(error)), 0);
	assert_int_equal(t, now);
	assert_int_equal(report_parse_time("now-90", now, &t, error, sizeof(error)), 0);
	assert_int_equal(t, now - 90000);
	assert_int_equal(report_parse_time("now-2hours", now, &t, error, sizeof(error)), 0);
	assert_int_equal(t, now - 7200000);
	assert_int_equal(report_parse_time("now-3days", now, &t, error, sizeof(error)), 0);
	assert_int_equal(t, now - 3 * DAY);
	assert_int_equal(report_parse_time("now+1week", now, &t, error, sizeof(error)), 0);
	assert_int_equal(t, now + 7 * DAY);
	assert_int_equal(report_parse_time("now-5minutes", now, &t, error, sizeof(error)), 0);
	assert_int_equal(t, now - 300000);
	assert_int_equal(report_parse_time("now-5fortnights", now, &t, error, sizeof(error)), -1);
	assert_int_equal(report_parse_time("2026-13-01", now, &t, error, sizeof(error)), -1);
	assert_int_equal(report_parse_time("2026-11-18T24:00", now, &t, error, sizeof(error)), -1);
	assert_int_equal(report_parse_time(" 2026-11-18", now, &t, error, sizeof(error)), -1);
	assert_int_equal(report_parse_time("2026-11-18T11:06:40Z", now, &t, error, sizeof(error)),
			 -1);

	report_format_time(START, buf, sizeof(buf));
	assert_string_equal(buf, "2026-11-18T11:06:40");
	report_format_elapsed(59999, buf, sizeof(buf));
	assert_string_equal(buf, "00:00:59");
	report_format_elapsed(DAY + 2 * 3600000 + 3 * 60000 + 4000, buf, sizeof(buf));
	assert_string_equal(buf, "1-02:03:04");
	report_format_bytes(1023, buf, sizeof(buf));
	assert_string_equal(buf, "1023");
	report_format_bytes(8 << 20, buf, sizeof(buf));
	assert_string_equal(buf, "8M");
	report_format_bytes(1536, buf, sizeof(buf));
	assert_string_equal(buf, "1.50K");
	report_format_bytes(3ull << 40, buf, sizeof(buf));
	assert_string_equal(buf, "3T");
	report_format_size(2, buf, sizeof(buf));
	assert_string_equal(buf, "2 B");
	report_format_size(1536, buf, sizeof(buf));
	assert_string_equal(buf, "1.50 KiB");
	report_format_size(8 << 20, buf, sizeof(buf));
	assert_string_equal(buf, "8 MiB");
	report_format_size(3ull << 40, buf, sizeof(buf));
	assert_string_equal(buf, "3 TiB");
	report_format_duration(999, buf, sizeof(buf));
	assert_string_equal(buf, "999ns");
	report_format_duration(24576, buf, sizeof(buf));
	assert_string_equal(buf, "24.58us");
	report_format_duration(2500000000ull, buf, sizeof(buf));
	assert_string_equal(buf, "2.50s");
}

/* One job row from one fixture step, changed by the caller first. */
static size_t findings_of(struct history_step *step, const struct report_baseline *baseline,
			  struct report_finding *findings)
{
	struct report_set set;
	struct report_row *rows;
	size_t count;
	report_set_init(&set);
	assert_int_equal(report_set_add(&set, &step->record), 0);
	assert_int_equal(report_build_rows(&set, &rows, &count), 0);
	assert_int_equal(count, 2);
	size_t found = report_findings(&rows[0], baseline, findings, REPORT_MAX_FINDINGS);
	report_rows_free(rows, count);
	report_set_free(&set);
	return found;
}

static void test_findings(void **state)
{
	(void)state;
	struct history_step step;
	struct report_finding findings[REPORT_MAX_FINDINGS];
	struct report_baseline baseline = { 0 };

	/* The plain fixture: nothing to say. */
	history_step_init(&step, 7, 0, 1001, "alice", "node1", START, 1);
	assert_int_equal(findings_of(&step, &baseline, findings), 0);

	/* 5000 slow getattrs: metadata takes most of the time. */
	history_set_operation(&step, VNFS_OP_GETATTR, 5000, 0, 0, 20);
	assert_int_equal(findings_of(&step, NULL, findings), 1);
	assert_int_equal(findings[0].rule, REPORT_RULE_METADATA_BOUND);
	assert_string_equal(findings[0].text,
			    "metadata-bound: metadata operations took 99.6% of the NFS time (5004 "
			    "calls, over 50% and 1000 calls); most in getattr (5000 calls, 7.86s)");

	/* 999 metadata calls are too few to judge. */
	history_set_operation(&step, VNFS_OP_GETATTR, 995, 0, 0, 20);
	assert_int_equal(findings_of(&step, NULL, findings), 0);

	/* 4 KiB reads on a 1 MiB rsize mount; 64 KiB writes with wsize unknown (1 MiB). */
	history_step_init(&step, 7, 0, 1001, "alice", "node1", START, 1);
	history_set_operation(&step, VNFS_OP_READ, 1000, 0, 4096, 12);
	history_set_operation(&step, VNFS_OP_WRITE, 100, 0, 65536, 14);
	step.mounts[0].wsize = 0;
	assert_int_equal(findings_of(&step, NULL, findings), 2);
	assert_int_equal(findings[0].rule, REPORT_RULE_SMALL_READS);
	assert_string_equal(findings[0].text,
			    "small reads: the average read is 4 KiB over 1000 calls, under 1/8 of "
			    "the mount's rsize (1 MiB); larger requests would need fewer round "
			    "trips");
	assert_int_equal(findings[1].rule, REPORT_RULE_SMALL_WRITES);
	assert_string_equal(findings[1].text,
			    "small writes: the average write is 64 KiB over 100 calls, under 1/8 of "
			    "the mount's wsize (1 MiB); larger requests would need fewer round "
			    "trips");
	/* Under 1 KiB the size still says its unit (it printed "is 2"), and a
	 * size between powers has two decimals, as the tables show it. */
	history_set_operation(&step, VNFS_OP_READ, 1000, 0, 1536, 12);
	history_set_operation(&step, VNFS_OP_WRITE, 100, 0, 2, 14);
	step.mounts[0].rsize = 65536 * 3;
	assert_int_equal(findings_of(&step, NULL, findings), 2);
	assert_string_equal(findings[0].text,
			    "small reads: the average read is 1.50 KiB over 1000 calls, under 1/8 "
			    "of the mount's rsize (192 KiB); larger requests would need fewer round "
			    "trips");
	assert_string_equal(findings[1].text,
			    "small writes: the average write is 2 B over 100 calls, under 1/8 of "
			    "the mount's wsize (1 MiB); larger requests would need fewer round "
			    "trips");
	step.mounts[0].rsize = 1024 * 1024;
	/* 128 KiB is exactly 1/8 of 1 MiB: not small. */
	history_set_operation(&step, VNFS_OP_READ, 1000, 0, 131072, 12);
	history_set_operation(&step, VNFS_OP_WRITE, 99, 0, 4096, 14);
	assert_int_equal(findings_of(&step, NULL, findings), 0);

	/* Errors: 150 failed opens (over 100), then 5 % of few calls. */
	history_step_init(&step, 7, 0, 1001, "alice", "node1", START, 1);
	history_set_operation(&step, VNFS_OP_OPEN, 200, 150, 0, 16);
	assert_int_equal(findings_of(&step, NULL, findings), 1);
	assert_int_equal(findings[0].rule, REPORT_RULE_ERRORS);
	assert_string_equal(findings[0].text,
			    "many errors: 150 of 237 operations failed (63.29%; the limits are 1% "
			    "and 100 failed operations); most in open (150 failed calls)");
	history_set_operation(&step, VNFS_OP_OPEN, 2, 0, 0, 16);
	history_set_operation(&step, VNFS_OP_LOOKUP, 1000, 10, 0, 4);
	assert_int_equal(findings_of(&step, NULL, findings), 0); /* 10 of 1039: under 1 % */
	history_set_operation(&step, VNFS_OP_LOOKUP, 1000, 11, 0, 4);
	assert_int_equal(findings_of(&step, NULL, findings), 1);
	assert_string_equal(findings[0].text,
			    "many errors: 11 of 1039 operations failed (1.06%; the limits are 1% and "
			    "100 failed operations); most in lookup (11 failed calls)");

	/* Latency: getattr p99 32.77us against a baseline median of 8 us. */
	history_step_init(&step, 7, 0, 1001, "alice", "node1", START, 1);
	history_set_operation(&step, VNFS_OP_GETATTR, 200, 0, 0, 14);
	baseline.p99_ns[VNFS_OP_GETATTR] = 8000;
	baseline.steps[VNFS_OP_GETATTR] = 5;
	assert_int_equal(findings_of(&step, &baseline, findings), 1);
	assert_int_equal(findings[0].rule, REPORT_RULE_SLOW);
	assert_string_equal(findings[0].text,
			    "slow getattr: p99 32.60us is 4.1x the node's median p99 of 8.00us over "
			    "the last 24 h (5 steps; the limit is 4x)");
	baseline.steps[VNFS_OP_GETATTR] = 4; /* too few to judge */
	assert_int_equal(findings_of(&step, &baseline, findings), 0);
	baseline.steps[VNFS_OP_GETATTR] = 5;
	baseline.p99_ns[VNFS_OP_GETATTR] = 8151; /* p99 32604 is exactly 4x: not over */
	assert_int_equal(findings_of(&step, &baseline, findings), 0);
}


/* ---- the wire section and its findings ------------------------------------ */

/* A wire row with every RPC alike: each took backlog, rtt and execute us. */
static void wire_row(struct vnfs_wire_record *w, const char *mount_point, const char *procedure,
		     uint64_t rpcs, uint64_t sent_each, uint64_t received_each, uint64_t backlog_us,
		     uint64_t rtt_us, uint64_t execute_us)
{
	memset(w, 0, sizeof(*w));
	w->device = 42;
	snprintf(w->mount_point, sizeof(w->mount_point), "%s", mount_point);
	w->version = 4;
	snprintf(w->procedure, sizeof(w->procedure), "%s", procedure);
	w->stats.rpcs = rpcs;
	w->stats.transmissions = rpcs;
	w->stats.bytes_sent = rpcs * sent_each;
	w->stats.bytes_received = rpcs * received_each;
	w->stats.backlog_ns = rpcs * backlog_us * 1000;
	w->stats.rtt_ns = rpcs * rtt_us * 1000;
	w->stats.execute_ns = rpcs * execute_us * 1000;
}

enum { WIRE_READ, WIRE_WRITE, WIRE_COMMIT, WIRE_GETATTR, WIRE_LOOKUP, WIRE_SCRATCH, WIRE_ROWS };

/*
 * Step 7.0 of the fixture (10 MiB read, 5 MiB written through the VFS) with
 * its RPCs: on /mnt/nfs 40 READs of 1 MiB, 20 slow WRITEs of 256 KiB, 2 of
 * them sent twice, 20 COMMITs, 100 GETATTRs (3 failed: 2 stale, 1 noent),
 * no LOOKUP; on /mnt/scratch 30 ACCESSes.
 */
static void wire_step(struct history_step *step, struct vnfs_wire_record *wire)
{
	const uint64_t mib = 1 << 20;
	history_step_init(step, 7, 0, 1001, "alice", "node1", START, 1);
	wire_row(&wire[WIRE_READ], "/mnt/nfs", "READ", 40, 200, mib, 10, 500, 600);
	wire_row(&wire[WIRE_WRITE], "/mnt/nfs", "WRITE", 20, mib / 4, 100, 20, 12000, 12100);
	wire[WIRE_WRITE].stats.transmissions = 22;
	wire_row(&wire[WIRE_COMMIT], "/mnt/nfs", "COMMIT", 20, 150, 100, 5, 3000, 3010);
	wire_row(&wire[WIRE_GETATTR], "/mnt/nfs", "GETATTR", 100, 180, 240, 2, 300, 310);
	wire[WIRE_GETATTR].stats.errors = 3;
	wire[WIRE_GETATTR].stats.error_kinds[VNFS_WIRE_ERROR_STALE] = 2;
	wire[WIRE_GETATTR].stats.error_kinds[VNFS_WIRE_ERROR_NOENT] = 1;
	wire_row(&wire[WIRE_LOOKUP], "/mnt/nfs", "LOOKUP", 0, 0, 0, 0, 0, 0);
	wire_row(&wire[WIRE_SCRATCH], "/mnt/scratch", "ACCESS", 30, 160, 120, 1, 250, 260);
	step->record.wire = wire;
	step->record.wire_count = WIRE_ROWS;
}

/* The long report of the step's job from "RPCs to" (or "Findings") on. */
static void wire_text(struct history_step *step, const char *from, char *text, size_t size)
{
	struct report_set set;
	struct report_row *rows;
	size_t count;
	report_set_init(&set);
	assert_int_equal(report_set_add(&set, &step->record), 0);
	assert_int_equal(report_build_rows(&set, &rows, &count), 0);
	char *buffer = NULL;
	size_t length = 0;
	FILE *out = open_memstream(&buffer, &length);
	assert_non_null(out);
	report_print_long(out, &rows[0], &rows[1], 1, NULL, START);
	assert_int_equal(fclose(out), 0);
	const char *at = strstr(buffer, from);
	snprintf(text, size, "%s", at != NULL ? at : "");
	free(buffer);
	report_rows_free(rows, count);
	report_set_free(&set);
}

static void test_wire_section(void **state)
{
	(void)state;
	struct history_step step;
	struct vnfs_wire_record wire[WIRE_ROWS];
	static char text[8192];

	/* Two mounts: a table each, procedures with RPCs only, most first. */
	wire_step(&step, wire);
	wire_text(&step, "RPCs to", text, sizeof(text));
	const char *tables =
		"RPCs to /mnt/nfs (NFSv4)\n"
		"Procedure          RPCs  Retrans Timeouts       Sent   Received    Backlog"
		"        RTT    Execute  Errors\n"
		"GETATTR             100        0        0     17.58K     23.44K     2.00us"
		"   300.00us   310.00us  3 (stale)\n"
		"READ                 40        0        0      7.81K        40M    10.00us"
		"   500.00us   600.00us  0\n"
		"COMMIT               20        0        0      2.93K      1.95K     5.00us"
		"     3.00ms     3.01ms  0\n"
		"WRITE                20        2        0         5M      1.95K    20.00us"
		"    12.00ms    12.10ms  0\n"
		"\n"
		"RPCs to /mnt/scratch (NFSv4)\n"
		"Procedure          RPCs  Retrans Timeouts       Sent   Received    Backlog"
		"        RTT    Execute  Errors\n"
		"ACCESS               30        0        0      4.69K      3.52K     1.00us"
		"   250.00us   260.00us  0\n"
		"\n";
	const char *cache =
		"Cache (wire bytes per VFS byte)\n"
		"  read 10 MiB through the VFS, 40 MiB came over the wire in READ RPCs: 4.00x\n"
		"  wrote 5 MiB through the VFS, 5 MiB went over the wire in WRITE RPCs: 1.00x\n"
		"\n";
	char expected[8192];
	snprintf(expected, sizeof(expected),
		 "%s%s"
		 "Findings\n"
		 "  - the server is slow: WRITE RPCs took 12.00ms on average from send to reply "
		 "(20 RPCs; the limits are 10.00ms and 20 RPCs)\n"
		 "  - the network drops requests: 2 retransmissions and 0 major timeouts over 210 "
		 "RPCs (0.95%% resent; the limit is 0); most in WRITE (2 retransmissions, 0 major "
		 "timeouts)\n"
		 "  - re-reads data the cache does not keep: 40 MiB came over the wire in READ "
		 "replies for 10 MiB read through the VFS (4.00x; the limits are 1.5x and 16 MiB)\n"
		 "  - writes are flushed synchronously: 20 COMMITs for 20 WRITEs (1.00 WRITEs per "
		 "COMMIT; the limits are 20 COMMITs and under 4 WRITEs per COMMIT); fsync, O_SYNC "
		 "or close after little data makes the server write to disk each time\n"
		 "  (no latency baseline: the node's history was not available)\n",
		 tables, cache);
	assert_string_equal(text, expected);

	/* Two steps on two nodes: one row per mount point and procedure, summed
	 * (the devices differ between nodes). */
	struct history_step other;
	struct vnfs_wire_record other_wire[WIRE_ROWS];
	wire_step(&other, other_wire);
	snprintf(other.record.node, sizeof(other.record.node), "node2");
	for (size_t i = 0; i < WIRE_ROWS; i++)
		other_wire[i].device = 77;
	struct report_set set;
	struct report_row *rows;
	size_t count;
	report_set_init(&set);
	assert_int_equal(report_set_add(&set, &step.record), 0);
	assert_int_equal(report_set_add(&set, &other.record), 0);
	assert_int_equal(report_build_rows(&set, &rows, &count), 0);
	assert_int_equal(rows[0].wire_count, WIRE_ROWS);
	assert_string_equal(rows[0].wire[0].procedure, "GETATTR");
	assert_int_equal(rows[0].wire[0].stats.rpcs, 200);
	assert_int_equal(rows[0].wire[0].stats.error_kinds[VNFS_WIRE_ERROR_STALE], 4);
	assert_int_equal(report_wire_mount_count(&rows[0]), 2);
	report_rows_free(rows, count);
	report_set_free(&set);

	/* Read back from a report file's JSON, the rows own their wire rows. */
	history_step_finish(&step, START + 1000);
	struct vnfs_job job = { .job_id = 7, .uid = 1001, .user = "alice", .node = "node1",
				.start_time_ms = START, .end_time_ms = START + 1000,
				.step_count = 1, .steps = &step.record };
	vnfs_workload_of_slurm_job(&job.workload, 7);
	struct json_object *json = vnfs_job_to_json(&job);
	assert_non_null(json);
	char error[256];
	report_set_init(&set);
	assert_int_equal(report_add_job_json(&set, json, "test", error, sizeof(error)), 0);
	json_object_put(json);
	assert_int_equal(report_build_rows(&set, &rows, &count), 0);
	assert_int_equal(rows[0].wire_count, WIRE_ROWS);
	assert_string_equal(rows[0].wire[WIRE_ROWS - 1].procedure, "ACCESS");
	assert_int_equal(rows[0].wire[WIRE_ROWS - 1].stats.rtt_ns, 30 * 250000ull);
	report_rows_free(rows, count);
	report_set_free(&set);

	/* mmap'ed reads are VFS reads too; with no VFS writes there is no ratio. */
	step.stats.operations[VNFS_OP_MMAP_READ].bytes = 6 << 20;
	step.stats.operations[VNFS_OP_WRITE].bytes = 0;
	wire_text(&step, "Cache", text, sizeof(text));
	assert_non_null(strstr(text, "  read 16 MiB through the VFS, 40 MiB came over the wire in "
				     "READ RPCs: 2.50x\n"
				     "  wrote 0 B through the VFS, 5 MiB went over the wire in WRITE "
				     "RPCs: no VFS bytes to compare\n\n"));

	/* Records before RPC counting, and RPC rows all empty: no section. */
	step.record.wire_count = 0;
	wire_text(&step, "Mounts", text, sizeof(text));
	assert_null(strstr(text, "RPCs to"));
	assert_null(strstr(text, "Cache"));
	step.record.wire = &wire[WIRE_LOOKUP];
	step.record.wire_count = 1;
	wire_text(&step, "Mounts", text, sizeof(text));
	assert_null(strstr(text, "RPCs to"));
	assert_string_equal(strstr(text, "Findings"),
			    "Findings\n  none\n"
			    "  (no latency baseline: the node's history was not available)\n");
}

static void test_wire_findings(void **state)
{
	(void)state;
	struct history_step step;
	struct vnfs_wire_record wire[WIRE_ROWS];
	struct report_finding findings[REPORT_MAX_FINDINGS];

	/* The fixture: a slow server for WRITE, drops, re-reads, synchronous
	 * writes (texts in test_wire_section). */
	wire_step(&step, wire);
	assert_int_equal(findings_of(&step, NULL, findings), 4);
	assert_int_equal(findings[0].rule, REPORT_RULE_SLOW_SERVER);
	assert_int_equal(findings[1].rule, REPORT_RULE_RETRANSMISSIONS);
	assert_int_equal(findings[2].rule, REPORT_RULE_REREADS);
	assert_int_equal(findings[3].rule, REPORT_RULE_SYNC_WRITES);

	/* Each just at its limit: none fires ("more than" is strict). */
	wire[WIRE_WRITE].stats.rtt_ns = 20 * 10000000ull;   /* 10 ms mean exactly */
	wire[WIRE_WRITE].stats.transmissions = 20;          /* nothing resent */
	wire[WIRE_READ].stats.bytes_received = 15ull << 20; /* 1.5x of 10 MiB */
	wire[WIRE_COMMIT].stats.rpcs = 19;                  /* too few COMMITs */
	wire[WIRE_COMMIT].stats.transmissions = 19;
	assert_int_equal(findings_of(&step, NULL, findings), 0);
	wire[WIRE_COMMIT].stats.rpcs = 20;
	wire[WIRE_COMMIT].stats.transmissions = 20;
	wire[WIRE_WRITE].stats.rpcs = 80;                   /* 4 WRITEs per COMMIT */
	wire[WIRE_WRITE].stats.transmissions = 80;
	wire[WIRE_WRITE].stats.rtt_ns = 80 * 1000000ull;
	assert_int_equal(findings_of(&step, NULL, findings), 0);
	/* 16 MiB over the wire for no VFS read at all is not over 16 MiB. */
	step.stats.operations[VNFS_OP_READ].bytes = 0;
	wire[WIRE_READ].stats.bytes_received = 16ull << 20;
	assert_int_equal(findings_of(&step, NULL, findings), 0);
	wire[WIRE_READ].stats.bytes_received = (16ull << 20) + 1;
	assert_int_equal(findings_of(&step, NULL, findings), 1);
	assert_string_equal(findings[0].text,
			    "re-reads data the cache does not keep: 16.00 MiB came over the wire in "
			    "READ replies for 0 B read through the VFS (no VFS reads; the limits "
			    "are 1.5x and 16 MiB)");

	/* A slow server for metadata: GETATTR and ACCESS (another mount) together. */
	wire_step(&step, wire);
	wire[WIRE_WRITE].stats.rtt_ns = 20 * 1000000ull;
	wire[WIRE_WRITE].stats.transmissions = 20;
	wire[WIRE_READ].stats.bytes_received = 10ull << 20;
	wire[WIRE_COMMIT].stats.rpcs = 5;
	wire[WIRE_COMMIT].stats.transmissions = 5;
	assert_int_equal(findings_of(&step, NULL, findings), 0);
	wire[WIRE_GETATTR].stats.rtt_ns = 100 * 2500000ull; /* (250 + 7.5) / 130 ms */
	assert_int_equal(findings_of(&step, NULL, findings), 0);
	wire[WIRE_GETATTR].stats.rtt_ns = 100 * 3000000ull;
	assert_int_equal(findings_of(&step, NULL, findings), 1);
	assert_int_equal(findings[0].rule, REPORT_RULE_SLOW_SERVER);
	assert_string_equal(findings[0].text,
			    "the server is slow: metadata RPCs took 2.37ms on average from send to "
			    "reply (130 RPCs; the limits are 2.00ms and 20 RPCs)");
	/* Too few READs to judge, however slow. */
	wire[WIRE_GETATTR].stats.rtt_ns = 100 * 300000ull;
	wire[WIRE_READ].stats.rpcs = 19;
	wire[WIRE_READ].stats.transmissions = 19;
	wire[WIRE_READ].stats.rtt_ns = 19 * 50000000ull;
	assert_int_equal(findings_of(&step, NULL, findings), 0);
	wire[WIRE_READ].stats.rpcs = 20;
	wire[WIRE_READ].stats.transmissions = 20;
	wire[WIRE_READ].stats.rtt_ns = 20 * 50000000ull;
	assert_int_equal(findings_of(&step, NULL, findings), 1);
	assert_string_equal(findings[0].text,
			    "the server is slow: READ RPCs took 50.00ms on average from send to "
			    "reply (20 RPCs; the limits are 10.00ms and 20 RPCs)");

	/* The client's queue: 1.54 ms of backlog against a longer 1.83 ms RTT
	 * does not fire; against 705 us it does. */
	wire_step(&step, wire);
	wire[WIRE_WRITE].stats.transmissions = 20;
	wire[WIRE_READ].stats.bytes_received = 10ull << 20;
	wire[WIRE_COMMIT].stats.rpcs = 5;
	wire[WIRE_COMMIT].stats.transmissions = 5;
	wire[WIRE_GETATTR].stats.backlog_ns = 100 * 3000000ull;
	assert_int_equal(findings_of(&step, NULL, findings), 1); /* WRITE's server time */
	assert_int_equal(findings[0].rule, REPORT_RULE_SLOW_SERVER);
	wire[WIRE_WRITE].stats.rtt_ns = 20 * 1000000ull;
	assert_int_equal(findings_of(&step, NULL, findings), 1);
	assert_int_equal(findings[0].rule, REPORT_RULE_CLIENT_BOUND);
	assert_string_equal(findings[0].text,
			    "the client is the bottleneck: RPCs waited 1.54ms on average in the "
			    "client's queue before their first send, more than their 705.13us round "
			    "trip (195 RPCs; the limit is 1.00ms and the round trip); more RPCs were "
			    "in flight than the transport takes at once");
	/* Backlog over the RTT but under 1 ms: not worth a finding. */
	wire[WIRE_GETATTR].stats.backlog_ns = 100 * 1000000ull;
	wire[WIRE_GETATTR].stats.rtt_ns = 100 * 1000ull;
	wire[WIRE_WRITE].stats.rtt_ns = 20 * 1000ull;
	wire[WIRE_COMMIT].stats.rtt_ns = 5 * 1000ull;
	wire[WIRE_READ].stats.rtt_ns = 40 * 1000ull;
	wire[WIRE_SCRATCH].stats.rtt_ns = 30 * 1000ull;
	assert_int_equal(findings_of(&step, NULL, findings), 0);

	/* A major timeout alone is a drop. */
	wire_step(&step, wire);
	wire[WIRE_WRITE].stats.rtt_ns = 20 * 1000000ull;
	wire[WIRE_WRITE].stats.transmissions = 20;
	wire[WIRE_READ].stats.bytes_received = 10ull << 20;
	wire[WIRE_COMMIT].stats.rpcs = 5;
	wire[WIRE_COMMIT].stats.transmissions = 5;
	wire[WIRE_GETATTR].stats.major_timeouts = 1;
	assert_int_equal(findings_of(&step, NULL, findings), 1);
	assert_string_equal(findings[0].text,
			    "the network drops requests: 0 retransmissions and 1 major timeouts "
			    "over 195 RPCs (0.00% resent; the limit is 0); most in GETATTR (0 "
			    "retransmissions, 1 major timeouts)");
}

static void test_baseline(void **state)
{
	(void)state;
	char path[128], error[256];
	snprintf(path, sizeof(path), "%s/baseline.db", directory);
	struct vnfs_config config = { 0 };
	snprintf(config.sqlite.path, sizeof(config.sqlite.path), "%s", path);
	struct vnfs_sink sink;
	assert_int_equal(vnfs_sink_sqlite_open(&sink, &config, error, sizeof(error)), 0);

	/* Seven recent jobs on node1 with getattr in buckets 10..16 (p99 2^(b+1)),
	 * one with too few calls, one old, one on node2, and the job itself. */
	int64_t now = report_now_ms();
	struct history_step step;
	for (int i = 0; i < 7; i++) {
		history_step_init(&step, 200 + i, 0, 1001, "alice", "node1", now - 3600000, 1);
		history_set_operation(&step, VNFS_OP_GETATTR, 100, 0, 0, 10 + i);
		finish(&sink, &step, 1, now - 3600000, now - 60000);
	}
	history_step_init(&step, 300, 0, 1001, "alice", "node1", now - 3600000, 1);
	history_set_operation(&step, VNFS_OP_GETATTR, 99, 0, 0, 30);
	finish(&sink, &step, 1, now - 3600000, now - 60000);
	history_step_init(&step, 301, 0, 1001, "alice", "node1", now - 3 * DAY, 1);
	history_set_operation(&step, VNFS_OP_GETATTR, 100, 0, 0, 30);
	finish(&sink, &step, 1, now - 3 * DAY, now - 2 * DAY);
	history_step_init(&step, 302, 0, 1001, "alice", "node2", now - 3600000, 1);
	history_set_operation(&step, VNFS_OP_GETATTR, 100, 0, 0, 30);
	finish(&sink, &step, 1, now - 3600000, now - 60000);
	history_step_init(&step, 303, 0, 1001, "alice", "node1", now - 3600000, 1);
	history_set_operation(&step, VNFS_OP_GETATTR, 100, 0, 0, 30);
	finish(&sink, &step, 1, now - 3600000, now - 60000);
	sink.close(sink.state);

	struct report_baseline baseline;
	assert_int_equal(report_load_baseline(path, "node1", slurm_job(303), now, &baseline, error,
					      sizeof(error)),
			 0);
	assert_int_equal(baseline.steps[VNFS_OP_GETATTR], 7);
	/* p99 of 100 calls in bucket b: 2^b + 2^b * 99/100; the median is b = 13. */
	assert_int_equal(baseline.p99_ns[VNFS_OP_GETATTR], 16302);
	assert_int_equal(baseline.steps[VNFS_OP_READ], 0);
	assert_int_equal(report_load_baseline(path, "node1,node2", slurm_job(303), now, &baseline,
					      error, sizeof(error)),
			 0);
	assert_int_equal(baseline.steps[VNFS_OP_GETATTR], 8);
	assert_int_equal(baseline.p99_ns[VNFS_OP_GETATTR], 16302); /* lower middle of 8 */
	assert_int_equal(report_load_baseline(path, "node1", slurm_job(0), now, &baseline, error,
					      sizeof(error)),
			 0);
	assert_int_equal(baseline.steps[VNFS_OP_GETATTR], 8);
	assert_int_equal(baseline.p99_ns[VNFS_OP_GETATTR], 16302);
}

static void test_report_files(void **state)
{
	(void)state;
	char path[256], error[256];
	struct stat st;

	/* Written by setup for node2: report_dir 0711 and the job dir 0755, both root's;
	 * files 0640, given to the user (tests/unit/test_report_files.c has the rest). */
	assert_int_equal(stat(report_dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0711);
	assert_int_equal(st.st_uid, 0);
	snprintf(path, sizeof(path), "%s/100", report_dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(st.st_uid, 0);
	snprintf(path, sizeof(path), "%s/100/node2.json", report_dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_int_equal(st.st_uid, 1001);
	snprintf(path, sizeof(path), "%s/100/node2.txt", report_dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_int_equal(st.st_uid, 1001);
	char text[8192];
	read_file(path, text, sizeof(text));
	assert_non_null(strstr(text, "Job 100  user alice (1001)  COMPLETED\nNodes:   node2\n"));
	assert_non_null(strstr(text, "read                 30        0"));

	/* The JSON reads back into exactly the step that was written. */
	struct report_set set;
	report_set_init(&set);
	snprintf(path, sizeof(path), "%s/100", report_dir);
	int dir_fd = open(path, O_RDONLY | O_DIRECTORY);
	assert_true(dir_fd >= 0);
	assert_int_equal(report_load_job_file(&set, dir_fd, path, "node2.json", slurm_job(100),
					      error, sizeof(error)),
			 0);
	assert_int_equal(close(dir_fd), 0);
	assert_int_equal(set.count, 1);
	struct history_step expected;
	history_step_init(&expected, 100, 0, 1001, "alice", "node2", START + 2000, 3);
	history_step_finish(&expected, START + 129000);
	assert_memory_equal(set.records[0].stats, &expected.stats, sizeof(expected.stats));
	assert_int_equal(set.records[0].end_time_ms, START + 129000);
	report_set_free(&set);

	/* Rewriting replaces atomically and leaves no temporary file behind. */
	struct vnfs_job job = { .job_id = 100, .uid = 1001, .user = "alice", .node = "node2",
				.start_time_ms = START, .end_time_ms = START + 1,
				.step_count = 1, .steps = &expected.record };
	vnfs_workload_of_slurm_job(&job.workload, job.job_id);
	assert_int_equal(vnfs_report_write_files(&job, report_dir, error, sizeof(error)), 0);
	char command[256];
	snprintf(command, sizeof(command), "test $(ls -A %s/100 | wc -l) -eq 2", report_dir);
	assert_int_equal(system(command), 0);

	/* A node name that would leave the directory is refused. */
	job.node = "../etc";
	assert_int_equal(vnfs_report_write_files(&job, report_dir, error, sizeof(error)), -1);
	assert_string_equal(error, "node name '../etc' cannot name a file");
	job.node = "node2";
	assert_int_equal(vnfs_report_write_files(&job, "", error, sizeof(error)), -1);
	assert_string_equal(error, "no report directory configured");
}

static void test_bad_report_file(void **state)
{
	(void)state;
	char bad_dir[128], path[256], error[512];
	snprintf(bad_dir, sizeof(bad_dir), "%s/bad", directory);
	assert_int_equal(mkdir(bad_dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/1", bad_dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/1/bad.json", bad_dir);
	FILE *file = fopen(path, "w");
	assert_non_null(file);
	fputs("{\"steps\":[{\"job\":1}]}", file);
	fclose(file);
	struct report_set set;
	report_set_init(&set);
	assert_int_equal(report_load_files(&set, bad_dir, slurm_job(1), error, sizeof(error)), -1);
	char expected[512];
	snprintf(expected, sizeof(expected), "%s: steps[0]: missing field 'step'", path);
	assert_string_equal(error, expected);
	assert_int_equal(set.count, 0);
	report_set_free(&set);
}

/* ---- hostile names (escaping for the terminal and -p/-P) ------------------ */

/* Prints row under format in layout (and, if long_report, the long report) to a string. */
static char *printed(const struct report_row *row, const char *format_text,
		     enum report_layout layout, bool long_report)
{
	struct report_format format;
	char error[512], *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	assert_non_null(out);
	if (long_report) {
		report_print_long(out, row, NULL, 0, NULL, START);
	} else {
		assert_int_equal(report_parse_format(format_text, &format, error, sizeof(error)), 0);
		report_print_header(out, &format, layout);
		report_print_row(out, &format, layout, row, START);
	}
	assert_int_equal(fclose(out), 0);
	return text;
}

/*
 * A process name with '|' and a newline (canonical text, as the collector
 * makes it) and a user, node and mount read back from a hostile report file
 * (anything at all): -p/-P keep one row of the same columns, and no control
 * byte reaches the terminal.
 */
static void test_hostile_names(void **state)
{
	(void)state;
	struct report_row *row = calloc(1, sizeof(*row));
	struct vnfs_process_record process = { .stats = { .read_ops = 1 } };
	struct vnfs_mount_record mount = { .device = 52 };
	char *text;

	assert_non_null(row);
	vnfs_text_from_bytes("a|b\nc\x1b", 6, process.comm, sizeof(process.comm));
	snprintf(mount.mount_point, sizeof(mount.mount_point), "/mnt/\x1b]0;pwn\x07");
	snprintf(mount.source, sizeof(mount.source), "srv:/\xff");
	vnfs_workload_of_slurm_job(&row->workload, 7);
	snprintf(row->user, sizeof(row->user), "bob\x1b[31m");
	snprintf(row->nodes, sizeof(row->nodes), "node1\n7|eve|forged");
	vnfs_tags_init(&row->tags);
	row->start_time_ms = START;
	row->end_time_ms = START + 1000;
	row->process_count = 1;
	row->processes = &process;
	row->mount_count = 1;
	row->mounts = &mount;

	text = printed(row, "JobID,User,Nodes,TopProcess,Mounts", REPORT_LAYOUT_PARSABLE, false);
	assert_string_equal(text, "JobID|User|Nodes|TopProcess|Mounts|\n"
				  "7|bob\\x1b[31m|node1\\x0a7\\x7ceve\\x7cforged|a\\x7cb\\x0ac\\x1b|"
				  "/mnt/\\x1b]0;pwn\\x07|\n");
	free(text);
	text = printed(row, "TopProcess,JobID", REPORT_LAYOUT_PARSABLE2, false);
	assert_string_equal(text, "TopProcess|JobID\na\\x7cb\\x0ac\\x1b|7\n");
	free(text);
	/* The table: '|' is no delimiter there; a cut never splits an escape. */
	text = printed(row, "TopProcess%6,User%13", REPORT_LAYOUT_TABLE, false);
	assert_string_equal(text, "TopPr+          User\n"
				  "------ -------------\n"
				  "a|b+     bob\\x1b[31m\n");
	free(text);

	text = printed(row, NULL, REPORT_LAYOUT_TABLE, true);
	assert_non_null(strstr(text, "Job 7  user bob\\x1b[31m (0)  COMPLETED\n"
				     "Nodes:   node1\\x0a7|eve|forged\n"));
	assert_non_null(strstr(text, "\na|b\\x0ac\\x1b              1 "));
	assert_non_null(strstr(text, "\n  /mnt/\\x1b]0;pwn\\x07 (srv:/\\xff, NFSv?, "));
	for (const char *c = text; *c; c++)
		assert_true(*c == '\n' || ((unsigned char)*c >= 0x20 && (unsigned char)*c < 0x7f));
	free(text);
	free(row);
}

/* A record of workload on node, sampled at sample_ms, with reads read calls. */
static struct vnfs_step_record workload_record(const struct vnfs_workload *workload,
					       const char *node, int64_t sample_ms, uint64_t reads)
{
	static struct vnfs_step_stats stats[16];
	static size_t next;
	struct vnfs_step_record record = { .workload = *workload, .uid = 1001,
					   .start_time_ms = START, .sample_time_ms = sample_ms,
					   .finished = true, .end_time_ms = sample_ms };
	uint32_t step_id;
	struct vnfs_step_stats *counted = &stats[next++ % 16];
	memset(counted, 0, sizeof(*counted));
	counted->operations[VNFS_OP_READ].count = reads;
	record.stats = counted;
	if (vnfs_workload_slurm_ids(workload, &record.job_id, &step_id) == 0)
		record.step_id = step_id;
	snprintf(record.user, sizeof(record.user), "alice");
	snprintf(record.node, sizeof(record.node), "%s", node);
	return record;
}

/*
 * Rows are keyed by the workload: sacct's step order, the latest sample per
 * node, and a job of another source never merged with Slurm's job of the
 * same text.  Only Slurm is in VNFS_WORKLOAD_SOURCES so far, so the other
 * source is the first value past it, which lib/workload.c names "?" here.
 */
static void test_rows_by_workload(void **state)
{
	(void)state;
	static const uint32_t steps[] = { 10, 2, VNFS_STEP_EXTERN, VNFS_STEP_BATCH };
	struct report_set set;
	struct report_row *rows = NULL;
	struct vnfs_workload workload;
	size_t count = 0;
	char id[REPORT_ID_MAX];
	report_set_init(&set);

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		vnfs_workload_of_slurm_step(&workload, 42, steps[i]);
		struct vnfs_step_record record = workload_record(&workload, "node1", START, 1);
		assert_int_equal(report_set_add(&set, &record), 0);
	}
	/* Step 0 on node2: the later sample is the whole truth, the older dropped. */
	vnfs_workload_of_slurm_step(&workload, 42, 0);
	struct vnfs_step_record older = workload_record(&workload, "node2", START + 1000, 5);
	struct vnfs_step_record later = workload_record(&workload, "node2", START + 2000, 7);
	older.finished = false;
	later.finished = false;
	assert_int_equal(report_set_add(&set, &older), 0);
	assert_int_equal(report_set_add(&set, &later), 0);
	vnfs_workload_of_slurm_step(&workload, 9, 0);
	struct vnfs_step_record nine = workload_record(&workload, "node1", START, 100);
	assert_int_equal(report_set_add(&set, &nine), 0);
	/* Another source's job "42", step "0": its own rows, after Slurm's. */
	vnfs_workload_of_slurm_step(&workload, 42, 0);
	workload.source = VNFS_SOURCE_COUNT;
	struct vnfs_step_record other = workload_record(&workload, "node1", START, 1000);
	assert_int_equal(report_set_add(&set, &other), 0);
	/* A Kubernetes pod's container: after Slurm's jobs, before the unknown. */
	assert_int_equal(vnfs_workload_set(&workload, VNFS_SOURCE_KUBERNETES, "ml/resnet-7f9c",
					   "trainer", id, sizeof(id)),
			 0);
	struct vnfs_step_record container = workload_record(&workload, "node1", START, 300);
	assert_int_equal(report_set_add(&set, &container), 0);
	/* A producer that set only Slurm's numbers: job 9's batch step. */
	struct vnfs_step_record numbers_only = nine;
	memset(&numbers_only.workload, 0, sizeof(numbers_only.workload));
	numbers_only.step_id = VNFS_STEP_BATCH;
	assert_int_equal(report_set_add(&set, &numbers_only), 0);

	assert_int_equal(report_build_rows(&set, &rows, &count), 0);
	static const char *const expected[] = { "9",        "9.batch",  "9.0",    "42",
						"42.batch", "42.extern", "42.0",  "42.2",
						"42.10",    "kubernetes:ml/resnet-7f9c",
						"kubernetes:ml/resnet-7f9c.trainer", "?:42", "?:42.0" };
	assert_int_equal(count, sizeof(expected) / sizeof(expected[0]));
	for (size_t i = 0; i < count; i++)
		assert_string_equal(report_row_id(&rows[i], id, sizeof(id)), expected[i]);
	assert_false(rows[3].is_step);
	assert_string_equal(rows[3].workload.part, "");
	assert_true(rows[6].is_step);
	/* Slurm's job 42: four steps on node1 and step 0's latest sample on node2. */
	assert_int_equal(rows[3].record_count, 5);
	assert_int_equal(rows[3].stats.operations[VNFS_OP_READ].count, 4 + 7);
	assert_string_equal(rows[3].nodes, "node1,node2");
	assert_true(rows[3].running);
	assert_int_equal(rows[6].stats.operations[VNFS_OP_READ].count, 7);
	assert_int_equal(rows[9].stats.operations[VNFS_OP_READ].count, 300);
	assert_int_equal(rows[10].stats.operations[VNFS_OP_READ].count, 300);
	assert_int_equal(rows[11].record_count, 1);
	assert_int_equal(rows[11].stats.operations[VNFS_OP_READ].count, 1000);
	assert_int_equal(rows[11].workload.source, VNFS_SOURCE_COUNT);
	assert_int_equal(rows[0].stats.operations[VNFS_OP_READ].count, 200);

	/* -j 42 is Slurm's job 42 and its steps, not the other source's "42". */
	struct report_filter *filter = calloc(1, sizeof(*filter));
	char error[256];
	assert_non_null(filter);
	assert_int_equal(report_parse_jobs("42", filter, error, sizeof(error)), 0);
	for (size_t i = 0; i < count; i++)
		assert_int_equal(report_filter_selects(filter, &rows[i]), i >= 3 && i <= 8);
	memset(filter, 0, sizeof(*filter));
	assert_int_equal(report_parse_jobs("slurm:42.0,9", filter, error, sizeof(error)), 0);
	for (size_t i = 0; i < count; i++)
		assert_int_equal(report_filter_selects(filter, &rows[i]), i <= 2 || i == 6);
	/* -j kubernetes:NAMESPACE/POD is the pod and its containers. */
	memset(filter, 0, sizeof(*filter));
	assert_int_equal(report_parse_jobs("kubernetes:ml/resnet-7f9c", filter, error,
					   sizeof(error)),
			 0);
	for (size_t i = 0; i < count; i++)
		assert_int_equal(report_filter_selects(filter, &rows[i]), i == 9 || i == 10);
	assert_int_equal(report_parse_jobs("kubernetes:resnet", filter, error, sizeof(error)), -1);
	free(filter);
	report_rows_free(rows, count);
	report_set_free(&set);
}

/* -j's syntax: Slurm's as sacct's, and SOURCE:JOB for any source. */
static void test_parse_jobs(void **state)
{
	(void)state;
	struct report_filter *filter = calloc(1, sizeof(*filter));
	struct report_filter *plain = calloc(1, sizeof(*plain));
	struct vnfs_workload expected;
	char error[256];
	assert_non_null(filter);
	assert_non_null(plain);

	assert_int_equal(report_parse_jobs("slurm:42,slurm:43.batch,slurm:007", filter, error,
					   sizeof(error)),
			 0);
	assert_int_equal(report_parse_jobs("42,43.batch,7", plain, error, sizeof(error)), 0);
	assert_int_equal(filter->job_count, 3);
	assert_int_equal(plain->job_count, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_true(
			vnfs_workload_equal(&filter->jobs[i].workload, &plain->jobs[i].workload));
	}
	vnfs_workload_of_slurm_job(&expected, 42);
	assert_true(vnfs_workload_equal(&filter->jobs[0].workload, &expected));
	vnfs_workload_of_slurm_step(&expected, 43, VNFS_STEP_BATCH);
	assert_true(vnfs_workload_equal(&filter->jobs[1].workload, &expected));
	assert_string_equal(filter->jobs[2].workload.job, "7");

	memset(filter, 0, sizeof(*filter));
	assert_int_equal(report_parse_jobs("42,nosuch:42", filter, error, sizeof(error)), -1);
	assert_string_equal(error, "invalid job 'nosuch:42': no workload source 'nosuch' "
				   "(known: slurm, kubernetes, container, lsf, sge, pbs, flux, environment)");
	memset(filter, 0, sizeof(*filter));
	assert_int_equal(report_parse_jobs("slurm:4x", filter, error, sizeof(error)), -1);
	assert_string_equal(error, "invalid job '4x': use a job id, or job.step (e.g. 42, 42.0, "
				   "42.batch)");
	memset(filter, 0, sizeof(*filter));
	assert_int_equal(report_parse_jobs("slurm:42.bat", filter, error, sizeof(error)), -1);
	assert_string_equal(error, "invalid step 'bat' of job 42: use a number, batch, extern or "
				   "interactive");
	memset(filter, 0, sizeof(*filter));
	assert_int_equal(report_parse_jobs(":42", filter, error, sizeof(error)), -1);
	assert_string_equal(error, "invalid job ':42': no workload source '' (known: slurm, kubernetes, container, lsf, sge, pbs, flux, environment)");
	free(filter);
	free(plain);
}

/* vnfs-report -j slurm:JOB prints what -j JOB does; a bad source is named. */
static void test_source_selection(void **state)
{
	(void)state;
	expect("-j slurm:100.0,101 -P -n -o JobID,ReadOps,TopProcess,Mounts,Tags",
	       "100.0|40|python3|/mnt/nfs|PROJECT_NAME=alpha\n"
	       "101|20|python3|/mnt/nfs|PROJECT_NAME=alpha\n"
	       "101.0|20|python3|/mnt/nfs|PROJECT_NAME=alpha\n");
	/* A step shown alone is headed by its job, as before. */
	report(&run, "-j slurm:100.0 -l");
	assert_int_equal(run.status, 0);
	assert_string_equal(run.err, quiet_err());
	assert_int_equal(strncmp(run.out, "Job 100  user alice (1001)  COMPLETED\n", 38), 0);
	assert_non_null(strstr(run.out, "\nSteps:   (none)\n"));
	expect_usage_error("-j nosuch:42", "vnfs-report: invalid job 'nosuch:42': no workload source "
				       "'nosuch' (known: slurm, kubernetes, container, lsf, sge, pbs, flux, environment)\n");
	expect_usage_error("-j slurm:4x", "vnfs-report: invalid job '4x': use a job id, or job.step "
				      "(e.g. 42, 42.0, 42.batch)\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jobs_parsable),  cmocka_unit_test(test_table_widths),
		cmocka_unit_test(test_user_and_times), cmocka_unit_test(test_json),
		cmocka_unit_test(test_long),           cmocka_unit_test(test_errors),
		cmocka_unit_test(test_helpformat),     cmocka_unit_test(test_helper_down),
		cmocka_unit_test(test_live),
		cmocka_unit_test(test_helper_silent),
		cmocka_unit_test(test_non_root),
		cmocka_unit_test(test_times),
		cmocka_unit_test(test_findings),       cmocka_unit_test(test_baseline),
		cmocka_unit_test(test_wire_section),   cmocka_unit_test(test_wire_findings),
		cmocka_unit_test(test_report_files),   cmocka_unit_test(test_bad_report_file),
		cmocka_unit_test(test_hostile_names),
		cmocka_unit_test(test_rows_by_workload),
		cmocka_unit_test(test_parse_jobs),
		cmocka_unit_test(test_source_selection),
	};
	return cmocka_run_group_tests(tests, setup_history, teardown_history);
}
