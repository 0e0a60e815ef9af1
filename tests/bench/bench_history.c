/*
 * bench_history.c — how fast the history is: fills a fresh SQLite database
 * through the real sink with N finished jobs (two steps each, as the helper
 * writes them at FINISH), times an interval of 1,000 running steps (all
 * changed, then unchanged), and times vnfs-report -j on the full database.
 * docs/SCHEMA.md records the numbers.
 *
 *   bench_history [JOBS [DIRECTORY]]     (default 100000, a new /tmp directory)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "helper/outputs/sink.h"
#include "tests/unit/history_fixtures.h"

#define RUNNING_STEPS 1000
#define REPORT_RUNS 5

static double seconds_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time of this process: what the helper would spend, whatever the load. */
static double cpu_seconds_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct timing {
	double wall;
	double cpu;
};

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int fill(struct vnfs_sink *sink, long jobs, int64_t start)
{
	struct history_step steps[2];
	struct vnfs_step_record records[2];
	for (long i = 0; i < jobs; i++) {
		uint32_t job_id = (uint32_t)(1000 + i);
		int64_t job_start = start + i * 1000;
		history_step_init(&steps[0], job_id, VNFS_STEP_BATCH, 1000 + (uint32_t)(i % 50),
				  "user", "node1", job_start, 1 + (uint64_t)(i % 7));
		history_step_init(&steps[1], job_id, 0, 1000 + (uint32_t)(i % 50), "user", "node1",
				  job_start + 100, 2 + (uint64_t)(i % 5));
		for (int s = 0; s < 2; s++) {
			history_step_finish(&steps[s], job_start + 60000);
			records[s] = steps[s].record;
		}
		struct vnfs_job job = { .job_id = job_id, .uid = records[0].uid, .user = "user",
					.node = "node1", .start_time_ms = job_start,
					.end_time_ms = job_start + 60000, .step_count = 2,
					.steps = records };
		vnfs_workload_of_slurm_job(&job.workload, job_id);
		sink->job_finished(sink->state, &job);
	}
	return 0;
}

/* scale 0: keep the steps, one more read and getattr each (a typical second). */
static struct timing time_interval(struct vnfs_sink *sink, struct history_step *steps,
				   struct vnfs_step_record *records, uint64_t scale)
{
	for (int i = 0; i < RUNNING_STEPS; i++) {
		if (scale == 0) {
			steps[i].stats.operations[VNFS_OP_READ].count++;
			steps[i].stats.operations[VNFS_OP_READ].latency_histogram[20]++;
			steps[i].stats.operations[VNFS_OP_GETATTR].count++;
			steps[i].stats.operations[VNFS_OP_GETATTR].latency_histogram[14]++;
		} else {
			history_step_init(&steps[i], 900000 + (uint32_t)i, 0, 1001, "user", "node1",
					  1795000000000LL, scale);
		}
		records[i] = steps[i].record;
		records[i].stats = &steps[i].stats;
		records[i].processes = steps[i].processes;
		records[i].mounts = steps[i].mounts;
	}
	struct vnfs_interval interval = { .time_ms = 1795000000000LL, .node = "node1",
					  .step_count = RUNNING_STEPS, .steps = records };
	double wall = seconds_now(), cpu = cpu_seconds_now();
	sink->publish(sink->state, &interval);
	return (struct timing){ seconds_now() - wall, cpu_seconds_now() - cpu };
}

static double time_report(const char *database, const char *directory, long job)
{
	char command[1024];
	snprintf(command, sizeof(command),
		 "%s --config /dev/null --socket %s/none.sock --database %s --report-dir %s/reports "
		 "-j %ld -P >/dev/null",
		 VNFS_REPORT_PROGRAM, directory, database, directory, job);
	double runs[REPORT_RUNS];
	for (int i = 0; i < REPORT_RUNS; i++) {
		double begin = seconds_now();
		int status = system(command);
		runs[i] = seconds_now() - begin;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "bench: %s failed\n", command);
			return -1;
		}
	}
	qsort(runs, REPORT_RUNS, sizeof(runs[0]), compare_doubles);
	return runs[REPORT_RUNS / 2];
}

int main(int argc, char **argv)
{
	long jobs = argc > 1 ? strtol(argv[1], NULL, 10) : 100000;
	char directory[200];
	if (argc > 2) {
		snprintf(directory, sizeof(directory), "%s", argv[2]);
	} else {
		snprintf(directory, sizeof(directory), "/tmp/vnfs-bench-history.XXXXXX");
		if (mkdtemp(directory) == NULL) {
			perror("mkdtemp");
			return 1;
		}
	}
	if (jobs < 1) {
		fprintf(stderr, "usage: bench_history [JOBS [DIRECTORY]]\n");
		return 1;
	}

	struct vnfs_config config = { 0 };
	snprintf(config.sqlite.path, sizeof(config.sqlite.path), "%s/history.db", directory);
	struct vnfs_sink sink;
	char error[512];
	if (vnfs_sink_sqlite_open(&sink, &config, error, sizeof(error)) != 0) {
		fprintf(stderr, "bench: %s\n", error);
		return 1;
	}

	double begin = seconds_now(), begin_cpu = cpu_seconds_now();
	fill(&sink, jobs, 1795000000000LL - jobs * 1000);
	double fill_seconds = seconds_now() - begin;
	double fill_cpu = cpu_seconds_now() - begin_cpu;

	struct history_step *steps = calloc(RUNNING_STEPS, sizeof(*steps));
	struct vnfs_step_record *records = calloc(RUNNING_STEPS, sizeof(*records));
	if (steps == NULL || records == NULL) {
		fprintf(stderr, "bench: out of memory\n");
		return 1;
	}
	struct timing first_write = time_interval(&sink, steps, records, 1);
	struct timing unchanged = time_interval(&sink, steps, records, 1);
	struct timing typical = time_interval(&sink, steps, records, 0);
	struct timing everything = time_interval(&sink, steps, records, 2);
	uint64_t dropped = sink.dropped(sink.state);
	sink.close(sink.state);
	free(steps);
	free(records);

	struct stat st;
	long long size = stat(config.sqlite.path, &st) == 0 ? (long long)st.st_size : -1;
	double first = time_report(config.sqlite.path, directory, 1000);
	double middle = time_report(config.sqlite.path, directory, 1000 + jobs / 2);
	double last = time_report(config.sqlite.path, directory, 1000 + jobs - 1);

	printf("jobs written:                 %ld (2 steps each, one transaction per job)\n", jobs);
	printf("write time:                   %.2f s wall, %.2f s CPU (%.0f jobs/s, %.1f us CPU "
	       "per job)\n",
	       fill_seconds, fill_cpu, (double)jobs / fill_seconds, fill_cpu * 1e6 / (double)jobs);
	printf("database size:                %.1f MiB (%.0f bytes per job)\n",
	       (double)size / 1048576.0, (double)size / (double)jobs);
	const struct {
		const char *what;
		struct timing timing;
	} intervals[] = {
		{ "new steps", first_write },
		{ "unchanged steps", unchanged },
		{ "+1 read, +1 getattr each", typical },
		{ "every counter changed", everything },
	};
	for (size_t i = 0; i < sizeof(intervals) / sizeof(intervals[0]); i++)
		printf("interval of %d steps, %-26s %8.2f ms wall, %8.2f ms CPU\n", RUNNING_STEPS,
		       intervals[i].what, intervals[i].timing.wall * 1e3,
		       intervals[i].timing.cpu * 1e3);
	printf("dropped records:              %" PRIu64 "\n", dropped);
	printf("vnfs-report -j (median of %d): first %.1f ms, middle %.1f ms, last %.1f ms\n",
	       REPORT_RUNS, first * 1e3, middle * 1e3, last * 1e3);
	printf("database:                     %s\n", config.sqlite.path);
	return first < 0 || middle < 0 || last < 0 ? 1 : 0;
}
