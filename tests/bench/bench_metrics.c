/*
 * bench_metrics.c — how long one /metrics rendering takes for N steps
 * (default 1,000) with every operation in use (or the first OPERATIONS
 * only), 4 process names and 2 mounts each: the budget is 50 ms for 1,000
 * steps.  Prints the median and worst of 20 renderings and the size of the
 * text.  Usage: bench_metrics [steps [operations]].
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "helper/outputs/metrics.h"

#define RENDERINGS 20
#define PROCESSES_PER_STEP 4
#define MOUNTS_PER_STEP 2

static double clock_ms(clockid_t clock)
{
	struct timespec now;
	clock_gettime(clock, &now);
	return (double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6;
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void fill_step(struct vnfs_step_record *step, struct vnfs_step_stats *stats_storage,
		      uint32_t index, int operations,
		      const struct vnfs_process_record *processes,
		      const struct vnfs_mount_record *mounts)
{
	char error[128];

	vnfs_record_identify_slurm(step, 1000000 + index, index % 4);
	step->uid = 1000 + index % 50;
	snprintf(step->user, sizeof(step->user), "user%u", index % 50);
	static struct vnfs_tag_list tags; /* the same for every step */

	vnfs_tags_init(&tags);
	if (vnfs_tags_set(&tags, "PROJECT", "climate-model", error, sizeof(error)) != 0) {
		fprintf(stderr, "%s\n", error);
		exit(1);
	}
	step->tags = &tags;
	step->start_time_ms = 1;
	step->sample_time_ms = 2;
	step->stats = stats_storage;
	for (int op = 0; op < operations; op++) {
		struct vnfs_operation_stats *stats = &stats_storage->operations[op];
		stats->count = 123456789ull + index + (uint64_t)op;
		stats->errors = index % 7;
		stats->time_ns = 98765432123ull + index;
		stats->bytes = 4096ull * stats->count;
		for (int b = 0; b < VNFS_LATENCY_BUCKETS; b++)
			stats->latency_histogram[b] = (uint64_t)(b + 1) * 1000 + index;
	}
	for (int d = 0; d < VNFS_DIRECTIONS; d++)
		for (int b = 0; b < VNFS_SIZE_BUCKETS; b++)
			stats_storage->request_size_histogram[d][b] = (uint64_t)b * 10 + index;
	step->process_count = PROCESSES_PER_STEP;
	step->processes = processes;
	step->mount_count = MOUNTS_PER_STEP;
	step->mounts = mounts;
}

int main(int argc, char **argv)
{
	size_t step_count = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
	int operations = argc > 2 ? atoi(argv[2]) : VNFS_OP_COUNT;
	if (operations < 0 || operations > VNFS_OP_COUNT) {
		fprintf(stderr, "operations: 0 to %d\n", VNFS_OP_COUNT);
		return 2;
	}
	struct vnfs_config config;
	char error[256];

	memset(&config, 0, sizeof(config));
	config.prometheus.grace_period_s = 300;
	config.prometheus.tag_label_count = 1;
	snprintf(config.prometheus.tag_labels[0], sizeof(config.prometheus.tag_labels[0]), "PROJECT");
	struct vnfs_metrics *metrics = vnfs_metrics_new(&config, error, sizeof(error));
	if (!metrics) {
		fprintf(stderr, "%s\n", error);
		return 1;
	}

	struct vnfs_process_record processes[PROCESSES_PER_STEP] = { 0 };
	for (int p = 0; p < PROCESSES_PER_STEP; p++) {
		snprintf(processes[p].comm, sizeof(processes[p].comm), "python3.%d", p);
		processes[p].stats = (struct vnfs_process_stats){ 1000, 4096000, 2000, 8192000, 300 };
	}
	struct vnfs_mount_record mounts[MOUNTS_PER_STEP] = { 0 };
	for (int m = 0; m < MOUNTS_PER_STEP; m++) {
		mounts[m].device = 50 + (unsigned)m;
		snprintf(mounts[m].mount_point, sizeof(mounts[m].mount_point), "/scratch%d", m);
		snprintf(mounts[m].source, sizeof(mounts[m].source), "nfs%d.example.org:/export", m);
		snprintf(mounts[m].version, sizeof(mounts[m].version), "4.2");
		mounts[m].stats = (struct vnfs_mount_stats){ 5000, 2, 123456789, 4096000, 8192000 };
	}
	struct vnfs_step_record *steps = calloc(step_count ? step_count : 1, sizeof(*steps));
	struct vnfs_step_stats *stats = calloc(step_count ? step_count : 1, sizeof(*stats));
	if (!steps || !stats) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	for (size_t s = 0; s < step_count; s++)
		fill_step(&steps[s], &stats[s], (uint32_t)s, operations, processes, mounts);

	struct vnfs_helper_health health = { .collections = 1, .max_slots = VNFS_MAX_STEPS,
		.active_slots = (uint32_t)step_count };
	struct vnfs_interval interval = { .time_ms = 3, .node = "node1", .step_count = step_count,
		.steps = steps, .health = &health };

	vnfs_metrics_update(metrics, &interval);
	/* Wall time is what a scrape waits; CPU time is the rendering's own
	 * cost, which other load on the machine does not inflate. */
	double times[RENDERINGS], cpu_times[RENDERINGS];
	size_t length = 0;
	for (int i = 0; i < RENDERINGS; i++) {
		char *text;
		double start = clock_ms(CLOCK_MONOTONIC);
		double cpu_start = clock_ms(CLOCK_THREAD_CPUTIME_ID);
		if (vnfs_metrics_render(metrics, &interval, &text, &length) != 0) {
			fprintf(stderr, "rendering failed\n");
			return 1;
		}
		times[i] = clock_ms(CLOCK_MONOTONIC) - start;
		cpu_times[i] = clock_ms(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
		free(text);
	}
	qsort(times, RENDERINGS, sizeof(times[0]), compare_doubles);
	qsort(cpu_times, RENDERINGS, sizeof(cpu_times[0]), compare_doubles);
	printf("bench_metrics: %zu steps x %d operations: median %.1f ms (CPU %.1f ms), "
	       "worst %.1f ms, %.1f MiB of text (budget 50 ms)\n",
	       step_count, operations, times[RENDERINGS / 2], cpu_times[RENDERINGS / 2],
	       times[RENDERINGS - 1],
	       (double)length / (1024.0 * 1024.0));
	free(steps);
	free(stats);
	vnfs_metrics_free(metrics);
	return 0;
}
