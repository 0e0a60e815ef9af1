/*
 * test_slurm_accounting.c — a job's summary in Slurm's accounting: made
 * from two nodes' real report files, written, found among other tools'
 * lines of a SystemComment, read back, merged; sacct's answer read; and
 * the command runner with real programs (sh, sleep, Slurm's own scontrol
 * with a minimal slurm.conf).  sacct and sacctmgr against a real slurmdbd
 * are tested in the guest (tests/guest/suites/accounting.sh).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/job_report/fields.h"
#include "lib/job_report/files.h"
#include "lib/job_report/findings.h"
#include "lib/job_report/rows.h"
#include "lib/job_report/text.h"
#include "lib/slurm_accounting/command.h"
#include "lib/slurm_accounting/slurm.h"
#include "lib/slurm_accounting/summary.h"
#include "tests/unit/history_fixtures.h"

#define START 1795000000000LL
#define MIB (1024ull * 1024)

static char directory[64];

static int setup(void **state)
{
	(void)state;
	snprintf(directory, sizeof(directory), "/tmp/vnfs-test-accounting.XXXXXX");
	return mkdtemp(directory) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	char command[128];
	snprintf(command, sizeof(command), "rm -rf '%s'", directory);
	return system(command) == 0 ? 0 : -1;
}

/* Writes job 42's report file for step's node, as the helper does at job end. */
static void write_report(struct history_step *step, const char *node)
{
	struct vnfs_job job;
	char error[512], report_dir[128];
	history_step_finish(step, START + 60000);
	job = (struct vnfs_job){ .job_id = 42, .uid = 65534, .user = "nobody", .node = node,
				 .start_time_ms = START, .end_time_ms = START + 60000,
				 .step_count = 1, .steps = &step->record };
	vnfs_workload_of_slurm_job(&job.workload, 42);
	snprintf(report_dir, sizeof(report_dir), "%s/reports", directory);
	assert_int_equal(vnfs_report_write_files(&job, report_dir, error, sizeof(error)), 0);
}

/* Job 42's summary as vnfs-accounting makes it, expecting the nodes given. */
static void summarize_job(const char *const *expected, size_t count,
			  struct vnfs_accounting_summary *summary)
{
	struct report_set set;
	struct report_row *rows = NULL;
	size_t row_count = 0;
	struct vnfs_workload job;
	char error[512], report_dir[128];
	snprintf(report_dir, sizeof(report_dir), "%s/reports", directory);
	vnfs_workload_of_slurm_job(&job, 42);
	report_set_init(&set);
	int loaded = report_load_node_files(&set, report_dir, &job, expected, count, error,
					    sizeof(error));
	if (loaded < 0)
		fail_msg("%s", error);
	assert_int_equal(report_build_rows(&set, &rows, &row_count), 0);
	assert_int_equal(row_count, 2); /* the job, and its step 0 on both nodes */
	struct report_finding findings[REPORT_MAX_FINDINGS];
	size_t found = report_findings(&rows[0], NULL, findings, REPORT_MAX_FINDINGS);
	vnfs_accounting_summarize(&rows[0], findings, found, expected, count, summary);
	report_rows_free(rows, row_count);
	report_set_free(&set);
}

static void test_summary_of_two_nodes(void **state)
{
	(void)state;
	struct history_step node1, node2;
	char error[512];
	history_step_init(&node1, 42, 0, 65534, "nobody", "node1", START, 1);
	write_report(&node1, "node1");
	/* node2 did twice as much, and 200 small writes of 4 KiB: a finding. */
	history_step_init(&node2, 42, 0, 65534, "nobody", "node2", START, 2);
	history_set_operation(&node2, VNFS_OP_WRITE, 200, 0, 4096, 12);
	write_report(&node2, "node2");
	/* A file of a node the job did not run on (an earlier run of a
	 * requeued job) is not the job's: not merged. */
	struct history_step stale;
	history_step_init(&stale, 42, 0, 65534, "nobody", "node9", START, 5);
	write_report(&stale, "node9");

	const char *expected[] = { "node1", "node2", "node3" };
	struct vnfs_accounting_summary summary;
	summarize_job(expected, 3, &summary);
	assert_int_equal(summary.nodes_reported, 2);
	assert_int_equal(summary.nodes_expected, 3);
	assert_string_equal(summary.missing, "node3");
	/* Reads: 10 x 1 MiB on node1, 20 x 1 MiB on node2. */
	assert_int_equal(summary.operations[VNFS_OP_READ].count, 30);
	assert_int_equal(summary.operations[VNFS_OP_READ].bytes, 30 * MIB);
	assert_int_equal(summary.operations[VNFS_OP_READ].time_ns,
			 node1.stats.operations[VNFS_OP_READ].time_ns +
				 node2.stats.operations[VNFS_OP_READ].time_ns);
	/* Writes: 5 x 1 MiB on node1, 200 x 4 KiB on node2. */
	assert_int_equal(summary.operations[VNFS_OP_WRITE].count, 205);
	assert_int_equal(summary.operations[VNFS_OP_WRITE].bytes, 5 * MIB + 200 * 4096);
	assert_int_equal(summary.operations[VNFS_OP_GETATTR].count, 60);
	assert_int_equal(summary.finding_count, 1);
	assert_int_equal(summary.findings[0], REPORT_RULE_SMALL_WRITES);

	char line[VNFS_ACCOUNTING_LINE_MAX], expected_line[1024];
	assert_int_equal(vnfs_accounting_format(&summary, line, sizeof(line)), 0);
	snprintf(expected_line, sizeof(expected_line),
		 "vnfs1 nodes=2/3 missing=node3 tags=PROJECT_NAME=alpha read=30:%llu:%llu:0 "
		 "write=205:%llu:%llu:0",
		 30 * MIB, (unsigned long long)summary.operations[VNFS_OP_READ].time_ns,
		 5 * MIB + 200 * 4096,
		 (unsigned long long)summary.operations[VNFS_OP_WRITE].time_ns);
	assert_memory_equal(line, expected_line, strlen(expected_line));
	assert_non_null(strstr(line, " getattr=60:0:"));
	assert_non_null(strstr(line, " open=6:0:"));
	assert_string_equal(strrchr(line, ' '), " findings=small-writes");

	/* Read back, it is the same summary. */
	struct vnfs_accounting_summary back;
	assert_int_equal(vnfs_accounting_parse(line, strlen(line), &back, error, sizeof(error)), 1);
	assert_memory_equal(back.operations, summary.operations, sizeof(back.operations));
	assert_int_equal(back.nodes_reported, 2);
	assert_int_equal(back.nodes_expected, 3);
	assert_string_equal(back.missing, "node3");
	assert_int_equal(back.finding_count, 1);
	assert_int_equal(back.findings[0], REPORT_RULE_SMALL_WRITES);
	assert_string_equal(vnfs_tags_find(&back.tags, "PROJECT_NAME"), "alpha");

	/* A row from it has the job's sums for vnfs-report's fields. */
	struct report_row row;
	struct vnfs_workload workload;
	vnfs_workload_of_slurm_job(&workload, 42);
	vnfs_accounting_row(&back, &workload, "nobody", 65534, "node[1-3]", START, START + 60000,
			    &row);
	assert_int_equal(row.stats.operations[VNFS_OP_READ].count, 30);
	assert_int_equal(row.stats.operations[VNFS_OP_WRITE].bytes, 5 * MIB + 200 * 4096);
	assert_int_equal(report_metadata_ops(&row.stats), 3 * (20 + 2 + 2)); /* getattr, open, close */
	assert_string_equal(row.nodes, "node[1-3]");
	assert_false(row.is_step);

	/* vnfs-report's fields: sums exact, quantiles unknown (empty), as is
	 * the long report's ("-"), with the findings of the job's end. */
	struct report_format format;
	char cell[64];
	assert_int_equal(report_parse_format("WriteBytes,WriteP99,MetaP99,ReadOps", &format, error,
					     sizeof(error)), 0);
	report_field_text(format.columns[0].field, &row, true, 0, cell, sizeof(cell));
	assert_string_equal(cell, "6062080");
	report_field_text(format.columns[1].field, &row, true, 0, cell, sizeof(cell));
	assert_string_equal(cell, "");
	report_field_text(format.columns[2].field, &row, true, 0, cell, sizeof(cell));
	assert_string_equal(cell, "");
	report_field_text(format.columns[3].field, &row, true, 0, cell, sizeof(cell));
	assert_string_equal(cell, "30");
	char *text = NULL;
	size_t text_size = 0;
	FILE *out = open_memstream(&text, &text_size);
	assert_non_null(out);
	report_print_long_summary(out, &row, "Slurm's accounting", back.findings,
				  back.finding_count, START + 60000);
	assert_int_equal(fclose(out), 0);
	assert_non_null(strstr(text, "\nread                 30        0 "));
	assert_non_null(strstr(text, "        -          -        30M\n"));
	assert_non_null(strstr(text, "Findings at the job's end (Slurm's accounting)\n  - small-writes\n"));
	free(text);
}

static void test_no_node_reported(void **state)
{
	(void)state;
	const char *expected[] = { "a1", "a2" };
	struct vnfs_accounting_summary summary;
	char line[256];
	vnfs_accounting_summarize(NULL, NULL, 0, expected, 2, &summary);
	assert_int_equal(vnfs_accounting_format(&summary, line, sizeof(line)), 0);
	assert_string_equal(line, "vnfs1 nodes=0/2 missing=a1,a2");
	assert_int_equal(vnfs_accounting_format(&summary, line, 10), -1);

	/* Tags are the users' text: every character a tag value may hold
	 * ([A-Za-z0-9._:@+%-]) comes back as it was, and the line keeps one
	 * field per tag list. */
	char error[256];
	assert_int_equal(vnfs_tags_parse(&summary.tags, "RUN=a.b_c:d@e+f%20-G,EMPTY=", NULL, NULL,
					 error, sizeof(error)), 0);
	assert_int_equal(vnfs_accounting_format(&summary, line, sizeof(line)), 0);
	assert_string_equal(line, "vnfs1 nodes=0/2 missing=a1,a2 tags=RUN=a.b_c:d@e+f%20-G,EMPTY=");
	struct vnfs_accounting_summary back;
	assert_int_equal(vnfs_accounting_parse(line, strlen(line), &back, error, sizeof(error)), 1);
	assert_string_equal(vnfs_tags_find(&back.tags, "RUN"), "a.b_c:d@e+f%20-G");
	assert_string_equal(vnfs_tags_find(&back.tags, "EMPTY"), "");
}

static void test_parse_among_other_lines(void **state)
{
	(void)state;
	struct vnfs_accounting_summary summary;
	char error[256];
	const char *comment = "bb/lua: stage_in done\n"
			      "vnfs10 nodes=9/9\n" /* not ours */
			      "vnfs1 nodes=1/2 missing=gpu7 read=3:3145728:1000:0 future=1 "
			      "findings=many-errors,rule-of-2030\n"
			      "other: x";
	assert_int_equal(vnfs_accounting_parse(comment, strlen(comment), &summary, error,
					       sizeof(error)), 1);
	assert_int_equal(summary.nodes_reported, 1);
	assert_int_equal(summary.nodes_expected, 2);
	assert_string_equal(summary.missing, "gpu7");
	assert_int_equal(summary.operations[VNFS_OP_READ].count, 3);
	assert_int_equal(summary.operations[VNFS_OP_READ].bytes, 3145728);
	assert_int_equal(summary.operations[VNFS_OP_READ].time_ns, 1000);
	assert_int_equal(summary.finding_count, 1);
	assert_int_equal(summary.findings[0], REPORT_RULE_ERRORS);

	const char *none = "JS1:abcdef\nbb: x";
	assert_int_equal(vnfs_accounting_parse(none, strlen(none), &summary, error, sizeof(error)), 0);
	assert_int_equal(vnfs_accounting_parse("", 0, &summary, error, sizeof(error)), 0);

	const char *bad[] = { "vnfs1 nodes=3/2", "vnfs1 read=1:2:3:4", "vnfs1 nodes=1/1 read=1:2:3",
			      "vnfs1 nodes=1/1 read=1:2:3:4:5", "vnfs1 nodes=1/1 read=-1:2:3:4",
			      "vnfs1 nodes=1/1 missing=a\x1b[2J", "vnfs1 nodes=1/1 tags=A=b c",
			      "vnfs1 nodes=1/1 write=99999999999999999999999:0:0:0",
			      "vnfs1 nodes=1/1 nonsense" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		error[0] = '\0';
		assert_int_equal(vnfs_accounting_parse(bad[i], strlen(bad[i]), &summary, error,
						       sizeof(error)), -1);
		assert_true(error[0] != '\0');
		assert_null(strchr(error, '\x1b')); /* safe to print */
	}
}

static void test_merge_keeps_other_tools_lines(void **state)
{
	(void)state;
	char out[512];
	assert_int_equal(vnfs_accounting_merge_comment(NULL, "vnfs1 nodes=1/1", out, sizeof(out)), 0);
	assert_string_equal(out, "vnfs1 nodes=1/1");
	assert_int_equal(vnfs_accounting_merge_comment("", "vnfs1 nodes=1/1", out, sizeof(out)), 0);
	assert_string_equal(out, "vnfs1 nodes=1/1");
	assert_int_equal(vnfs_accounting_merge_comment("bb: staged", "vnfs1 nodes=2/2", out,
						       sizeof(out)), 0);
	assert_string_equal(out, "bb: staged\nvnfs1 nodes=2/2");
	/* Ours replaced, wherever it was; theirs kept in order. */
	assert_int_equal(vnfs_accounting_merge_comment("a\nvnfs1 nodes=0/2\nb\nvnfs1 nodes=1/2",
						       "vnfs1 nodes=2/2", out, sizeof(out)), 0);
	assert_string_equal(out, "a\nb\nvnfs1 nodes=2/2");
	assert_int_equal(vnfs_accounting_merge_comment("vnfs10 x", "vnfs1 nodes=2/2", out,
						       sizeof(out)), 0);
	assert_string_equal(out, "vnfs10 x\nvnfs1 nodes=2/2");
	assert_int_equal(vnfs_accounting_merge_comment("a long line of theirs", "vnfs1 nodes=2/2",
						       out, 20), -1);
}

static void test_sacct_answer(void **state)
{
	(void)state;
	struct vnfs_slurm_job_entry entry;
	char error[256];
	const char *answer = "42|alice|1795000000|1795000060|node[1-2]|bb: x|y\n"
			     "vnfs1 nodes=2/2\n";
	assert_int_equal(vnfs_slurm_parse_job(answer, strlen(answer), "42", &entry, error,
					      sizeof(error)), 1);
	assert_string_equal(entry.user, "alice");
	assert_int_equal(entry.start_time_ms, START);
	assert_int_equal(entry.end_time_ms, START + 60000);
	assert_string_equal(entry.nodes, "node[1-2]");
	assert_string_equal(entry.system_comment, "bb: x|y\nvnfs1 nodes=2/2");
	vnfs_slurm_job_entry_free(&entry);

	const char *running = "43|bob|1795000000|Unknown|n1|\n";
	assert_int_equal(vnfs_slurm_parse_job(running, strlen(running), "43", &entry, error,
					      sizeof(error)), 1);
	assert_int_equal(entry.end_time_ms, 0);
	assert_string_equal(entry.system_comment, "");
	vnfs_slurm_job_entry_free(&entry);

	assert_int_equal(vnfs_slurm_parse_job("", 0, "44", &entry, error, sizeof(error)), 0);
	assert_int_equal(vnfs_slurm_parse_job("44|x\n", 5, "44", &entry, error, sizeof(error)), -1);
	assert_non_null(strstr(error, "job 44"));

	assert_true(vnfs_slurm_job_id_valid("4294967295"));
	assert_false(vnfs_slurm_job_id_valid("4294967296"));
	assert_false(vnfs_slurm_job_id_valid(""));
	assert_false(vnfs_slurm_job_id_valid("-1"));
	/* A job id is digits, or it never reaches sacct's command line. */
	struct vnfs_slurm_commands commands = { .sacct = "/bin/false" };
	assert_int_equal(vnfs_slurm_read_job(&commands, "42 -u root", &entry, error,
					     sizeof(error)), -1);
	assert_non_null(strstr(error, "not a Slurm job id"));
}

static void test_command_runner(void **state)
{
	(void)state;
	struct vnfs_command_output output;
	char error[256];
	const char *echo[] = { "/bin/sh", "-c", "printf 'a|b\\n'; echo oops >&2; exit 3", NULL };
	assert_int_equal(vnfs_command_run(echo, 100, 5000, &output, error, sizeof(error)), 0);
	assert_string_equal(output.text, "a|b\n");
	assert_int_equal(output.exit_status, 3);
	assert_string_equal(output.error_line, "oops");
	assert_false(output.truncated);
	vnfs_command_output_free(&output);

	/* Output past the bound is counted, not kept. */
	const char *big[] = { "/bin/sh", "-c", "head -c 100000 /dev/zero", NULL };
	assert_int_equal(vnfs_command_run(big, 1000, 5000, &output, error, sizeof(error)), 0);
	assert_int_equal(output.length, 1000);
	assert_true(output.truncated);
	assert_int_equal(output.exit_status, 0);
	vnfs_command_output_free(&output);

	/* A command that does not end is killed at the deadline. */
	const char *sleeper[] = { "/bin/sleep", "30", NULL };
	assert_int_equal(vnfs_command_run(sleeper, 100, 300, &output, error, sizeof(error)), -1);
	assert_non_null(strstr(error, "did not finish"));
	assert_int_equal(output.exit_status, 128 + 9);
	vnfs_command_output_free(&output);

	const char *missing[] = { "/nonexistent/sacct", NULL };
	assert_int_equal(vnfs_command_run(missing, 100, 300, &output, error, sizeof(error)), -1);
	assert_non_null(strstr(error, "cannot run /nonexistent/sacct"));
	vnfs_command_output_free(&output);
}

static void test_expand_nodes_with_scontrol(void **state)
{
	(void)state;
	char conf[128], error[256];
	snprintf(conf, sizeof(conf), "%s/slurm.conf", directory);
	FILE *file = fopen(conf, "w");
	assert_non_null(file);
	fputs("ClusterName=test\nSlurmctldHost=localhost\n", file);
	assert_int_equal(fclose(file), 0);
	setenv("SLURM_CONF", conf, 1);
	struct vnfs_slurm_commands commands = { .scontrol = "/usr/bin/scontrol" };
	char **names = NULL;
	size_t count = 0;
	assert_int_equal(vnfs_slurm_expand_nodes(&commands, "node[1-3],gpu07", &names, &count,
						 error, sizeof(error)), 0);
	assert_int_equal(count, 4);
	assert_string_equal(names[0], "node1");
	assert_string_equal(names[2], "node3");
	assert_string_equal(names[3], "gpu07");
	free(names);
	assert_int_equal(vnfs_slurm_expand_nodes(&commands, "", &names, &count, error,
						 sizeof(error)), -1);
	unsetenv("SLURM_CONF");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary_of_two_nodes),
		cmocka_unit_test(test_no_node_reported),
		cmocka_unit_test(test_parse_among_other_lines),
		cmocka_unit_test(test_merge_keeps_other_tools_lines),
		cmocka_unit_test(test_sacct_answer),
		cmocka_unit_test(test_command_runner),
		cmocka_unit_test(test_expand_nodes_with_scontrol),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
