/*
 * test_prometheus.c — the /metrics text (exact samples, escaping, grace
 * period, series cap, promtool) and the endpoint served by libmicrohttpd.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "helper/outputs/metrics.h"

#define LABELS "job_id=\"42\",step_id=\"batch\",user=\"alice\",tag_project=\"p1\""

static void test_config(struct vnfs_config *config)
{
	memset(config, 0, sizeof(*config));
	config->prometheus.enabled = true;
	snprintf(config->prometheus.listen_address, sizeof(config->prometheus.listen_address),
		 "127.0.0.1");
	config->prometheus.port = 0;
	config->prometheus.grace_period_s = 60;
	config->prometheus.max_series = 0;
	config->prometheus.tag_label_count = 2;
	snprintf(config->prometheus.tag_labels[0], sizeof(config->prometheus.tag_labels[0]),
		 "PROJECT");
	snprintf(config->prometheus.tag_labels[1], sizeof(config->prometheus.tag_labels[1]),
		 "Queue");
}

/* A running step that only read: 7 reads, one failed. */
static void reading_step(struct vnfs_step_record *step, struct vnfs_step_stats *stats,
			 uint32_t job_id, uint32_t step_id)
{
	char error[128];

	memset(step, 0, sizeof(*step));
	memset(stats, 0, sizeof(*stats));
	step->stats = stats;
	vnfs_record_identify_slurm(step, job_id, step_id);
	step->uid = 1000;
	snprintf(step->user, sizeof(step->user), "alice");
	static struct vnfs_tag_list project_p1; /* every reading step's */

	vnfs_tags_init(&project_p1);
	assert_int_equal(vnfs_tags_set(&project_p1, "PROJECT", "p1", error, sizeof(error)), 0);
	step->tags = &project_p1;
	step->start_time_ms = 1000;
	step->sample_time_ms = 2000;

	struct vnfs_operation_stats *read = &stats->operations[VNFS_OP_READ];
	read->count = 7;
	read->errors = 1;
	read->time_ns = 1500;
	read->bytes = 4096;
	read->latency_histogram[9] = 2;  /* [512, 1024) ns */
	read->latency_histogram[10] = 3; /* [1024, 2048) ns */
	read->latency_histogram[35] = 2; /* >= 2^35 ns */
	stats->request_size_histogram[VNFS_DIRECTION_READ][12] = 7; /* 4 KiB */
}

static void assert_contains(const char *text, const char *line)
{
	if (!strstr(text, line))
		fail_msg("missing from the exposition:\n%s", line);
}

static void assert_lacks(const char *text, const char *line)
{
	if (strstr(text, line))
		fail_msg("unexpected in the exposition:\n%s", line);
}

static char *render(struct vnfs_metrics *metrics, const struct vnfs_interval *interval)
{
	char *text = NULL;
	size_t length = 0;

	vnfs_metrics_update(metrics, interval);
	assert_int_equal(vnfs_metrics_render(metrics, interval, &text, &length), 0);
	assert_non_null(text);
	assert_int_equal(strlen(text), length);
	return text;
}

/* promtool check metrics must accept the text (exit 0, no lint findings). */
static void assert_promtool_accepts(const char *text)
{
	char path[] = "/tmp/vnfs-test-metrics-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	size_t length = strlen(text);
	assert_int_equal(write(fd, text, length), (ssize_t)length);
	assert_int_equal(close(fd), 0);

	char command[256];
	snprintf(command, sizeof(command), "promtool check metrics < %s", path);
	int status = system(command);
	unlink(path);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_exact_samples(void **unused)
{
	(void)unused;
	struct vnfs_config config;
	char error[256] = "";
	test_config(&config);
	struct vnfs_metrics *metrics = vnfs_metrics_new(&config, error, sizeof(error));
	assert_non_null(metrics);

	struct vnfs_step_record step;
	struct vnfs_step_stats stats;
	reading_step(&step, &stats, 42, VNFS_STEP_BATCH);
	struct vnfs_process_record process = { .stats = { .read_ops = 7, .read_bytes = 4096 } };
	/* The collector gives the canonical text of the kernel's bytes. */
	vnfs_process_name_text("a\"b\\c\n\xff", process.comm, sizeof(process.comm));
	struct vnfs_mount_record second = { .device = 53, .stats = { .ops = 1 } };
	struct vnfs_mount_record mount = { .device = (0u << 20) | 52, .stats = { .ops = 9,
		.errors = 1, .time_ns = 2000000001, .read_bytes = 4096 } };
	snprintf(mount.mount_point, sizeof(mount.mount_point), "/mnt/nfs");
	snprintf(second.mount_point, sizeof(second.mount_point), "/mnt/\"x\"\\\xe2\x82");
	snprintf(mount.source, sizeof(mount.source), "server:/export");
	snprintf(mount.version, sizeof(mount.version), "4.2");
	step.process_count = 1;
	step.processes = &process;
	struct vnfs_mount_record mounts[2] = { mount, second };
	snprintf(mounts[1].source, sizeof(mounts[1].source), "server:/export");
	snprintf(mounts[1].version, sizeof(mounts[1].version), "4.2");
	step.mount_count = 2;
	step.mounts = mounts;

	struct vnfs_unattributed_record stray = { .cgroup_id = 77, .uid = 0 };
	snprintf(stray.comm, sizeof(stray.comm), "rsync");
	stray.stats.operations[VNFS_OP_GETATTR].count = 5;
	stray.stats.operations[VNFS_OP_GETATTR].errors = 2;
	stray.stats.operations[VNFS_OP_READ].count = 1;
	stray.stats.operations[VNFS_OP_READ].bytes = 10;

	struct vnfs_helper_health health = { .collections = 12, .last_collection_ns = 2500000,
		.active_slots = 1, .max_slots = 1024 };
	health.counters[VNFS_HEALTH_BREAKDOWN_FULL] = 3;
	health.counters[VNFS_HEALTH_UNMATCHED_EXIT] = 4;
	health.counters[VNFS_HEALTH_BREAKDOWN_OTHER] = 137;
	health.counters[VNFS_HEALTH_UNATTRIBUTED_EXPIRED] = 3072;
	health.counters[VNFS_HEALTH_WIRE_UNATTRIBUTED_OTHER] = 41;
	for (int op = 0; op < VNFS_OP_COUNT; op++)
		health.attach_method[op] = VNFS_ATTACH_FENTRY;
	health.attach_method[VNFS_OP_MMAP_READ] = VNFS_ATTACH_KPROBE;
	health.missed_returns.count = 2;
	snprintf(health.missed_returns.functions[0].function,
		 sizeof(health.missed_returns.functions[0].function), "nfs_file_read");
	health.missed_returns.functions[0].missed = 6;
	snprintf(health.missed_returns.functions[1].function,
		 sizeof(health.missed_returns.functions[1].function), "nfs_getattr");

	struct vnfs_interval interval = { .time_ms = 2000, .node = "n1", .step_count = 1,
		.steps = &step, .unattributed_count = 1, .unattributed = &stray, .health = &health };
	char *text = render(metrics, &interval);

	assert_contains(text, "# TYPE vnfs_operations_total counter\n");
	assert_contains(text, "\nvnfs_operations_total{" LABELS ",tag_queue=\"\",op=\"read\"} 7\n");
	assert_contains(text, "\nvnfs_operation_errors_total{" LABELS ",tag_queue=\"\",op=\"read\"} 1\n");
	assert_lacks(text, ",op=\"write\"");
	assert_contains(text, "# TYPE vnfs_operation_duration_seconds histogram\n");
	const char *bucket = "\nvnfs_operation_duration_seconds_bucket{" LABELS ",tag_queue=\"\",op=\"read\"";
	char line[512];
	snprintf(line, sizeof(line), "%s,le=\"0.000001024\"} 2\n", bucket);
	assert_contains(text, line);
	snprintf(line, sizeof(line), "%s,le=\"0.000004096\"} 5\n", bucket);
	assert_contains(text, line);
	snprintf(line, sizeof(line), "%s,le=\"17.179869184\"} 5\n", bucket);
	assert_contains(text, line);
	snprintf(line, sizeof(line), "%s,le=\"+Inf\"} 7\n", bucket);
	assert_contains(text, line);
	assert_lacks(text, "le=\"0.000000512\"");
	assert_contains(text, "\nvnfs_operation_duration_seconds_sum{" LABELS
			",tag_queue=\"\",op=\"read\"} 0.0000015\n");
	assert_contains(text, "\nvnfs_operation_duration_seconds_count{" LABELS
			",tag_queue=\"\",op=\"read\"} 7\n");
	assert_contains(text, "\nvnfs_read_bytes_total{" LABELS ",tag_queue=\"\"} 4096\n");
	assert_contains(text, "\nvnfs_write_bytes_total{" LABELS ",tag_queue=\"\"} 0\n");
	assert_contains(text, "\nvnfs_mmap_read_bytes_total{" LABELS ",tag_queue=\"\"} 0\n");

	const char *size = "\nvnfs_request_size_bytes_bucket{" LABELS ",tag_queue=\"\",direction=\"read\"";
	snprintf(line, sizeof(line), "%s,le=\"4095\"} 0\n", size);
	assert_contains(text, line);
	snprintf(line, sizeof(line), "%s,le=\"8191\"} 7\n", size);
	assert_contains(text, line);
	snprintf(line, sizeof(line), "%s,le=\"+Inf\"} 7\n", size);
	assert_contains(text, line);
	assert_contains(text, "\nvnfs_request_size_bytes_sum{" LABELS
			",tag_queue=\"\",direction=\"read\"} 4096\n");
	assert_lacks(text, "direction=\"write\"");

	/* comm a"b\x5cc\x0a\xff (canonical), with the format's \\ and \" escapes. */
	assert_contains(text, "\nvnfs_process_read_operations_total{" LABELS
			",tag_queue=\"\",comm=\"a\\\"b\\\\x5cc\\\\x0a\\\\xff\"} 7\n");
	assert_contains(text, "\nvnfs_process_read_bytes_total{" LABELS
			",tag_queue=\"\",comm=\"a\\\"b\\\\x5cc\\\\x0a\\\\xff\"} 4096\n");
	/* A path that is not UTF-8: its canonical text, then the format's escapes. */
	assert_contains(text, "\nvnfs_mount_operations_total{" LABELS
			",tag_queue=\"\",mount=\"/mnt/\\\"x\\\"\\\\x5c\\\\xe2\\\\x82\","
			"server=\"server:/export\",version=\"4.2\"} 1\n");
	assert_contains(text, "\nvnfs_mount_operations_total{" LABELS
			",tag_queue=\"\",mount=\"/mnt/nfs\",server=\"server:/export\",version=\"4.2\"} 9\n");
	assert_contains(text, "\nvnfs_mount_operation_duration_seconds_total{" LABELS
			",tag_queue=\"\",mount=\"/mnt/nfs\",server=\"server:/export\",version=\"4.2\"} 2.000000001\n");

	assert_contains(text, "\nvnfs_unattributed_operations_total{cgroup_id=\"77\",uid=\"0\","
			"comm=\"rsync\",op=\"getattr\"} 5\n");
	assert_contains(text, "\nvnfs_unattributed_operation_errors_total{cgroup_id=\"77\",uid=\"0\","
			"comm=\"rsync\"} 2\n");

	assert_contains(text, "\nvnfs_helper_attach_method{op=\"mmap_read\",method=\"kprobe\"} 1\n");
	assert_contains(text, "\nvnfs_helper_attach_method{op=\"read\",method=\"fentry\"} 1\n");
	assert_contains(text, "\nvnfs_helper_collections_total 12\n");
	assert_contains(text, "\nvnfs_helper_collection_duration_seconds 0.0025\n");
	assert_contains(text, "\nvnfs_helper_slots{state=\"used\"} 1\n");
	assert_contains(text, "\nvnfs_helper_slots{state=\"free\"} 1023\n");
	assert_contains(text, "\nvnfs_helper_map_full_total{map=\"breakdown_stats\"} 3\n");
	assert_contains(text, "\nvnfs_helper_unmatched_exits_total 4\n");
	assert_contains(text, "\n# TYPE vnfs_helper_kernel_missed_returns_total counter\n"
			      "vnfs_helper_kernel_missed_returns_total{function=\"nfs_file_read\"} 6\n"
			      "vnfs_helper_kernel_missed_returns_total{function=\"nfs_getattr\"} 0\n");
	assert_contains(text, "\nvnfs_helper_bounded_total{bound=\"step_other_calls\"} 137\n");
	assert_contains(text, "\nvnfs_helper_bounded_total{bound=\"unattributed_other_calls\"} 0\n");
	assert_contains(text, "\nvnfs_helper_bounded_total{bound=\"unattributed_expired_rows\"} 3072\n");
	assert_contains(text, "\nvnfs_helper_bounded_total{bound=\"unattributed_other_rpcs\"} 41\n");
	assert_contains(text, "\nvnfs_helper_active_steps 1\n");
	/* 21 for the read operation and bytes, 18 request size, 5 process, 10 mount, 4 stray */
	assert_contains(text, "\nvnfs_helper_series 59\n");
	/* No step with RPCs: the per-RPC families are not even announced. */
	assert_lacks(text, "vnfs_rpc");
	assert_contains(text, "\nvnfs_helper_series_capped_total 0\n");

	assert_promtool_accepts(text);
	free(text);
	vnfs_metrics_free(metrics);
}

/* The wire rows of reading_step's step: READ on /mnt/nfs (two kinds of
 * error), a procedure named with a quote, backslash and newline on a mount
 * not learned, and a WRITE row without RPCs. */
static void wire_rows(struct vnfs_wire_record wire[3])
{
	memset(wire, 0, 3 * sizeof(wire[0]));
	wire[0].device = 52;
	snprintf(wire[0].mount_point, sizeof(wire[0].mount_point), "/mnt/nfs");
	wire[0].version = 4;
	snprintf(wire[0].procedure, sizeof(wire[0].procedure), "READ");
	struct vnfs_wire_stats *read = &wire[0].stats;
	read->rpcs = 10;
	read->transmissions = 12;
	read->major_timeouts = 1;
	read->bytes_sent = 1000;
	read->bytes_received = 40960;
	read->backlog_ns = 3000;
	read->rtt_ns = 5000000;
	read->execute_ns = 6000000;
	read->errors = 2;
	read->error_kinds[VNFS_WIRE_ERROR_TIMEOUT] = 1;
	read->error_kinds[VNFS_WIRE_ERROR_IO] = 1;
	read->rtt_histogram[18] = 10;     /* [262144, 524288) ns */
	read->backlog_histogram[10] = 10; /* [1024, 2048) ns */
	read->execute_histogram[19] = 10;

	wire[1].version = 3; /* device 0, no mount point: not learned */
	snprintf(wire[1].procedure, sizeof(wire[1].procedure), "GE\"T\\X\nR");
	struct vnfs_wire_stats *odd = &wire[1].stats;
	odd->rpcs = 3;
	odd->transmissions = 3;
	odd->bytes_sent = 300;
	odd->bytes_received = 200;
	odd->rtt_ns = 1500;
	odd->execute_ns = 2000;
	odd->rtt_histogram[10] = 3;
	odd->backlog_histogram[0] = 3;
	odd->execute_histogram[10] = 3;

	wire[2] = wire[0];
	snprintf(wire[2].procedure, sizeof(wire[2].procedure), "WRITE");
	memset(&wire[2].stats, 0, sizeof(wire[2].stats));
	wire[2].stats.bytes_sent = 5; /* no RPC ended: not shown */
}

#define READ_LABELS LABELS ",tag_queue=\"\",mount=\"/mnt/nfs\",procedure=\"READ\""
#define ODD_LABELS LABELS ",tag_queue=\"\",mount=\"device 0:0\",procedure=\"GE\\\"T\\\\X\\nR\""

static void test_wire_samples(void **unused)
{
	(void)unused;
	struct vnfs_config config;
	char error[256] = "";
	test_config(&config);
	struct vnfs_metrics *metrics = vnfs_metrics_new(&config, error, sizeof(error));
	assert_non_null(metrics);

	struct vnfs_step_record step;
	struct vnfs_step_stats stats;
	struct vnfs_wire_record wire[3];
	reading_step(&step, &stats, 42, VNFS_STEP_BATCH);
	wire_rows(wire);
	step.wire = wire;
	step.wire_count = 3;
	struct vnfs_interval interval = { .time_ms = 2000, .step_count = 1, .steps = &step };
	char *text = render(metrics, &interval);

	assert_contains(text, "# TYPE vnfs_rpcs_total counter\n");
	assert_contains(text, "\nvnfs_rpcs_total{" READ_LABELS "} 10\n");
	assert_contains(text, "\nvnfs_rpcs_total{" ODD_LABELS "} 3\n");
	assert_contains(text, "\nvnfs_rpc_retransmissions_total{" READ_LABELS "} 2\n");
	assert_contains(text, "\nvnfs_rpc_retransmissions_total{" ODD_LABELS "} 0\n");
	assert_contains(text, "\nvnfs_rpc_major_timeouts_total{" READ_LABELS "} 1\n");
	assert_contains(text, "\nvnfs_rpc_major_timeouts_total{" ODD_LABELS "} 0\n");
	assert_contains(text, "\nvnfs_rpc_sent_bytes_total{" READ_LABELS "} 1000\n");
	assert_contains(text, "\nvnfs_rpc_sent_bytes_total{" ODD_LABELS "} 300\n");
	assert_contains(text, "\nvnfs_rpc_received_bytes_total{" READ_LABELS "} 40960\n");
	assert_contains(text, "\nvnfs_rpc_received_bytes_total{" ODD_LABELS "} 200\n");
	assert_contains(text, "\nvnfs_rpc_execute_seconds_total{" READ_LABELS "} 0.006\n");
	assert_contains(text, "\nvnfs_rpc_execute_seconds_total{" ODD_LABELS "} 0.000002\n");
	/* Only the kinds that occurred. */
	assert_contains(text, "# TYPE vnfs_rpc_errors_total counter\n");
	assert_contains(text, "\nvnfs_rpc_errors_total{" READ_LABELS ",kind=\"timeout\"} 1\n");
	assert_contains(text, "\nvnfs_rpc_errors_total{" READ_LABELS ",kind=\"io\"} 1\n");
	assert_lacks(text, ",kind=\"stale\"");
	assert_lacks(text, "vnfs_rpc_errors_total{" ODD_LABELS);

	assert_contains(text, "# TYPE vnfs_rpc_rtt_seconds histogram\n");
	assert_contains(text, "\nvnfs_rpc_rtt_seconds_bucket{" READ_LABELS ",le=\"0.000262144\"} 0\n");
	assert_contains(text, "\nvnfs_rpc_rtt_seconds_bucket{" READ_LABELS ",le=\"0.001048576\"} 10\n");
	assert_contains(text, "\nvnfs_rpc_rtt_seconds_bucket{" READ_LABELS ",le=\"+Inf\"} 10\n");
	assert_contains(text, "\nvnfs_rpc_rtt_seconds_sum{" READ_LABELS "} 0.005\n");
	assert_contains(text, "\nvnfs_rpc_rtt_seconds_count{" READ_LABELS "} 10\n");
	assert_contains(text, "\nvnfs_rpc_rtt_seconds_bucket{" ODD_LABELS ",le=\"0.000001024\"} 0\n");
	assert_contains(text, "\nvnfs_rpc_rtt_seconds_bucket{" ODD_LABELS ",le=\"0.000004096\"} 3\n");
	assert_contains(text, "\nvnfs_rpc_rtt_seconds_sum{" ODD_LABELS "} 0.0000015\n");
	assert_contains(text, "\nvnfs_rpc_rtt_seconds_count{" ODD_LABELS "} 3\n");
	assert_contains(text, "# TYPE vnfs_rpc_backlog_seconds histogram\n");
	assert_contains(text, "\nvnfs_rpc_backlog_seconds_bucket{" READ_LABELS ",le=\"0.000001024\"} 0\n");
	assert_contains(text, "\nvnfs_rpc_backlog_seconds_bucket{" READ_LABELS ",le=\"0.000004096\"} 10\n");
	assert_contains(text, "\nvnfs_rpc_backlog_seconds_sum{" READ_LABELS "} 0.000003\n");
	assert_contains(text, "\nvnfs_rpc_backlog_seconds_count{" READ_LABELS "} 10\n");
	assert_contains(text, "\nvnfs_rpc_backlog_seconds_bucket{" ODD_LABELS ",le=\"0.000001024\"} 3\n");
	assert_contains(text, "\nvnfs_rpc_backlog_seconds_sum{" ODD_LABELS "} 0\n");
	/* A row without RPCs is absent from every family. */
	assert_lacks(text, "procedure=\"WRITE\"");
	/* The reading step's 39, READ's 8 + 32, the odd procedure's 6 + 32. */
	assert_contains(text, "\nvnfs_helper_series 117\n");
	assert_promtool_accepts(text);
	free(text);
	vnfs_metrics_free(metrics);

	/* 60: the per-RPC counters fit (53), their histograms do not (64 cut). */
	config.prometheus.max_series = 60;
	metrics = vnfs_metrics_new(&config, error, sizeof(error));
	assert_non_null(metrics);
	text = render(metrics, &interval);
	assert_contains(text, "\nvnfs_helper_series 53\n");
	assert_contains(text, "\nvnfs_helper_series_capped_total 64\n");
	assert_contains(text, "\nvnfs_rpcs_total{" ODD_LABELS "} 3\n");
	assert_contains(text, "\nvnfs_rpc_errors_total{" READ_LABELS ",kind=\"io\"} 1\n");
	assert_lacks(text, "vnfs_rpc_rtt_seconds");
	assert_lacks(text, "vnfs_rpc_backlog_seconds");
	assert_promtool_accepts(text);
	free(text);
	vnfs_metrics_free(metrics);
}

/* Rows a record keeps apart but whose label sets are the same (another
 * device at the same mount point) are one series, their sum; an ended
 * step's rows are rendered from the renderer's copy. */
static void test_wire_same_labels_summed(void **unused)
{
	(void)unused;
	struct vnfs_config config;
	char error[256] = "";
	test_config(&config);
	struct vnfs_metrics *metrics = vnfs_metrics_new(&config, error, sizeof(error));
	assert_non_null(metrics);

	struct vnfs_step_record step;
	struct vnfs_step_stats stats;
	struct vnfs_wire_record wire[3];
	reading_step(&step, &stats, 42, VNFS_STEP_BATCH);
	wire_rows(wire);
	wire[2] = wire[0];
	wire[2].device = 60;
	wire[2].stats.error_kinds[VNFS_WIRE_ERROR_TIMEOUT] = 0;
	wire[2].stats.error_kinds[VNFS_WIRE_ERROR_STALE] = 4;
	step.wire = wire;
	step.wire_count = 3;
	step.end_time_ms = 2000;
	step.finished = true;
	struct vnfs_interval interval = { .time_ms = 2000, .step_count = 1, .steps = &step };
	char *text = render(metrics, &interval);
	free(text);

	/* The collector forgot it; its rows are gone from the caller's memory. */
	memset(wire, 0xa5, sizeof(wire));
	interval = (struct vnfs_interval){ .time_ms = 3000 };
	text = render(metrics, &interval);
	assert_contains(text, "\nvnfs_rpcs_total{" READ_LABELS "} 20\n");
	const char *first = strstr(text, "\nvnfs_rpcs_total{" READ_LABELS);
	assert_null(strstr(first + 1, "\nvnfs_rpcs_total{" READ_LABELS));
	assert_contains(text, "\nvnfs_rpc_retransmissions_total{" READ_LABELS "} 4\n");
	assert_contains(text, "\nvnfs_rpc_errors_total{" READ_LABELS ",kind=\"timeout\"} 1\n");
	assert_contains(text, "\nvnfs_rpc_errors_total{" READ_LABELS ",kind=\"stale\"} 4\n");
	assert_contains(text, "\nvnfs_rpc_errors_total{" READ_LABELS ",kind=\"io\"} 2\n");
	assert_contains(text, "\nvnfs_rpc_rtt_seconds_bucket{" READ_LABELS ",le=\"+Inf\"} 20\n");
	assert_contains(text, "\nvnfs_rpc_rtt_seconds_sum{" READ_LABELS "} 0.01\n");
	assert_contains(text, "\nvnfs_rpcs_total{" ODD_LABELS "} 3\n");
	assert_promtool_accepts(text);
	free(text);
	vnfs_metrics_free(metrics);
}

/* The node's RPCs of no workload: by owner, mount and procedure; rows
 * without RPCs and rows of a workload left out, rows of one label set
 * summed, label values escaped, the families announced only with rows. */
static void node_wire_rows(struct vnfs_node_wire_record node[6])
{
	memset(node, 0, 6 * sizeof(node[0]));
	node[0].owner = VNFS_WIRE_BACKGROUND;
	node[0].row.device = 52;
	snprintf(node[0].row.mount_point, sizeof(node[0].row.mount_point), "/mnt/nfs");
	node[0].row.version = 4;
	snprintf(node[0].row.procedure, sizeof(node[0].row.procedure), "RENEW");
	node[0].row.stats.rpcs = 5;
	node[0].row.stats.transmissions = 7;
	node[0].row.stats.bytes_sent = 500;
	node[0].row.stats.bytes_received = 300;

	node[1] = node[0]; /* no RPC ended: not shown */
	snprintf(node[1].row.procedure, sizeof(node[1].row.procedure), "SEQUENCE");
	memset(&node[1].row.stats, 0, sizeof(node[1].row.stats));
	node[1].row.stats.bytes_sent = 9;

	node[2].owner = VNFS_WIRE_UNATTRIBUTED; /* device 0: mount not learned */
	node[2].row.version = 3;
	snprintf(node[2].row.procedure, sizeof(node[2].row.procedure), "GETATTR");
	node[2].row.stats.rpcs = 2;
	node[2].row.stats.transmissions = 3;
	node[2].row.stats.bytes_sent = 200;
	node[2].row.stats.bytes_received = 100;

	node[3] = node[2]; /* the same label set from a v4 client: summed */
	node[3].row.version = 4;
	node[3].row.stats.rpcs = 1;
	node[3].row.stats.transmissions = 2;
	node[3].row.stats.bytes_sent = 10;
	node[3].row.stats.bytes_received = 20;

	node[4].owner = VNFS_WIRE_BACKGROUND;
	node[4].row.device = 53;
	snprintf(node[4].row.mount_point, sizeof(node[4].row.mount_point), "/mnt/a\"b\\");
	node[4].row.version = 4;
	snprintf(node[4].row.procedure, sizeof(node[4].row.procedure), "SEQUENCE");
	node[4].row.stats.rpcs = 1;
	node[4].row.stats.transmissions = 1;
	node[4].row.stats.bytes_sent = 124;
	node[4].row.stats.bytes_received = 88;

	node[5] = node[0]; /* a workload's row has no place here */
	node[5].owner = VNFS_WIRE_WORKLOAD;
	snprintf(node[5].row.procedure, sizeof(node[5].row.procedure), "WRITE");
}

#define RENEW_LABELS "owner=\"background\",mount=\"/mnt/nfs\",procedure=\"RENEW\""
#define NODE_GETATTR_LABELS "owner=\"unattributed\",mount=\"device 0:0\",procedure=\"GETATTR\""
#define ODD_MOUNT_LABELS "owner=\"background\",mount=\"/mnt/a\\\"b\\\\\",procedure=\"SEQUENCE\""

static void test_node_wire_samples(void **unused)
{
	(void)unused;
	struct vnfs_config config;
	char error[256] = "";
	test_config(&config);
	struct vnfs_metrics *metrics = vnfs_metrics_new(&config, error, sizeof(error));
	assert_non_null(metrics);

	struct vnfs_node_wire_record node[6];
	node_wire_rows(node);
	struct vnfs_interval interval = { .time_ms = 2000, .node_wire_count = 6, .node_wire = node };
	char *text = render(metrics, &interval);

	assert_contains(text, "# HELP vnfs_node_rpcs_total NFS RPCs of no job step that ended, "
			      "by owner (background: the mount's own, unattributed: processes in "
			      "no step), mount and procedure.\n# TYPE vnfs_node_rpcs_total counter\n");
	assert_contains(text, "# TYPE vnfs_node_rpc_retransmissions_total counter\n");
	assert_contains(text, "# TYPE vnfs_node_rpc_sent_bytes_total counter\n");
	assert_contains(text, "# TYPE vnfs_node_rpc_received_bytes_total counter\n");
	/* In the order of their label text. */
	assert_contains(text, "# TYPE vnfs_node_rpcs_total counter\n"
			      "vnfs_node_rpcs_total{" ODD_MOUNT_LABELS "} 1\n"
			      "vnfs_node_rpcs_total{" RENEW_LABELS "} 5\n"
			      "vnfs_node_rpcs_total{" NODE_GETATTR_LABELS "} 3\n# HELP ");
	assert_contains(text, "\nvnfs_node_rpc_retransmissions_total{" RENEW_LABELS "} 2\n");
	assert_contains(text, "\nvnfs_node_rpc_retransmissions_total{" NODE_GETATTR_LABELS "} 2\n");
	assert_contains(text, "\nvnfs_node_rpc_retransmissions_total{" ODD_MOUNT_LABELS "} 0\n");
	assert_contains(text, "\nvnfs_node_rpc_sent_bytes_total{" RENEW_LABELS "} 500\n");
	assert_contains(text, "\nvnfs_node_rpc_sent_bytes_total{" NODE_GETATTR_LABELS "} 210\n");
	assert_contains(text, "\nvnfs_node_rpc_sent_bytes_total{" ODD_MOUNT_LABELS "} 124\n");
	assert_contains(text, "\nvnfs_node_rpc_received_bytes_total{" RENEW_LABELS "} 300\n");
	assert_contains(text, "\nvnfs_node_rpc_received_bytes_total{" NODE_GETATTR_LABELS "} 120\n");
	assert_contains(text, "\nvnfs_node_rpc_received_bytes_total{" ODD_MOUNT_LABELS "} 88\n");
	assert_lacks(text, "mount=\"/mnt/nfs\",procedure=\"SEQUENCE\""); /* node[1] */
	assert_lacks(text, "procedure=\"WRITE\"");
	assert_lacks(text, "owner=\"workload\"");
	/* Three label sets, four series each. */
	assert_contains(text, "\nvnfs_helper_series 12\n");
	assert_promtool_accepts(text);
	free(text);

	/* No row with RPCs: not even announced. */
	interval.node_wire = &node[1];
	interval.node_wire_count = 1;
	text = render(metrics, &interval);
	assert_lacks(text, "vnfs_node_rpc");
	assert_contains(text, "\nvnfs_helper_series 0\n");
	free(text);
	vnfs_metrics_free(metrics);

	/* max_series 5: the first label set's four series, the rest cut. */
	config.prometheus.max_series = 5;
	metrics = vnfs_metrics_new(&config, error, sizeof(error));
	assert_non_null(metrics);
	interval.node_wire = node;
	interval.node_wire_count = 6;
	text = render(metrics, &interval);
	assert_contains(text, "\nvnfs_node_rpcs_total{" ODD_MOUNT_LABELS "} 1\n");
	assert_lacks(text, "vnfs_node_rpcs_total{" RENEW_LABELS);
	assert_lacks(text, "vnfs_node_rpc_sent_bytes_total{" NODE_GETATTR_LABELS);
	assert_contains(text, "\nvnfs_helper_series 4\n");
	assert_contains(text, "\nvnfs_helper_series_capped_total 8\n");
	assert_promtool_accepts(text);
	free(text);
	vnfs_metrics_free(metrics);
}

/* Every operation in use, two steps, no health: still valid for promtool. */
static void test_promtool_every_operation(void **unused)
{
	(void)unused;
	struct vnfs_config config;
	char error[256] = "";
	test_config(&config);
	struct vnfs_metrics *metrics = vnfs_metrics_new(&config, error, sizeof(error));
	assert_non_null(metrics);

	struct vnfs_step_record steps[3];
	struct vnfs_step_stats stats[3];
	for (int s = 0; s < 3; s++) {
		reading_step(&steps[s], &stats[s], 7, (uint32_t)s);
		for (int op = 0; op < VNFS_OP_COUNT; op++) {
			for (int b = 0; b < VNFS_LATENCY_BUCKETS; b++)
				stats[s].operations[op].latency_histogram[b] = b == op;
			stats[s].operations[op].count = 1;
		}
		stats[s].request_size_histogram[VNFS_DIRECTION_WRITE][31] = 1;
	}
	steps[1].end_time_ms = 1900; /* ended, within grace */
	/* A Kubernetes container: its source's label names, in the same families. */
	struct vnfs_workload container;
	assert_int_equal(vnfs_workload_set(&container, VNFS_SOURCE_KUBERNETES, "ml/resnet-7f9c",
					   "trainer", error, sizeof(error)),
			 0);
	vnfs_record_identify(&steps[2], &container);
	struct vnfs_interval interval = { .time_ms = 2000, .step_count = 3, .steps = steps };
	char *text = render(metrics, &interval);
	assert_contains(text, "\nvnfs_operations_total{pod=\"ml/resnet-7f9c\",container=\"trainer\","
			"user=\"alice\",tag_project=\"p1\",tag_queue=\"\",op=\"listxattr\"} 1\n");

	assert_contains(text, "\nvnfs_operations_total{job_id=\"7\",step_id=\"1\",user=\"alice\","
			"tag_project=\"p1\",tag_queue=\"\",op=\"listxattr\"} 1\n");
	assert_contains(text, "\nvnfs_helper_active_steps 2\n");
	assert_promtool_accepts(text);
	free(text);
	vnfs_metrics_free(metrics);
}

static bool has_step(const char *text, uint32_t job_id)
{
	char needle[64];
	snprintf(needle, sizeof(needle), "vnfs_read_bytes_total{job_id=\"%u\",", job_id);
	return strstr(text, needle) != NULL;
}

static void test_grace_period(void **unused)
{
	(void)unused;
	struct vnfs_config config;
	char error[256] = "";
	test_config(&config);
	struct vnfs_metrics *metrics = vnfs_metrics_new(&config, error, sizeof(error));
	assert_non_null(metrics);

	struct vnfs_step_record running, ended;
	struct vnfs_step_stats running_stats, ended_stats;
	reading_step(&running, &running_stats, 1, 0);
	reading_step(&ended, &ended_stats, 2, 0);
	ended.end_time_ms = 10000;
	ended.finished = true;

	/* Both in the interval. */
	struct vnfs_step_record both[2] = { running, ended };
	struct vnfs_interval interval = { .time_ms = 10000, .step_count = 2, .steps = both };
	char *text = render(metrics, &interval);
	assert_true(has_step(text, 1));
	assert_true(has_step(text, 2));
	free(text);

	/* The collector forgot the ended step: its last counts stay until 70 s. */
	interval = (struct vnfs_interval){ .time_ms = 69999, .step_count = 1, .steps = &running };
	text = render(metrics, &interval);
	assert_true(has_step(text, 1));
	assert_true(has_step(text, 2));
	free(text);

	interval.time_ms = 70000;
	text = render(metrics, &interval);
	assert_true(has_step(text, 1));
	assert_false(has_step(text, 2));
	free(text);

	/* A job that finished between intervals shows up through job_finished. */
	struct vnfs_step_record final;
	struct vnfs_step_stats final_stats;
	reading_step(&final, &final_stats, 3, VNFS_STEP_EXTERN);
	final.end_time_ms = 71000;
	final.finished = true;
	struct vnfs_job job = { .job_id = 3, .end_time_ms = 71000, .step_count = 1, .steps = &final };
	vnfs_workload_of_slurm_job(&job.workload, job.job_id);
	vnfs_metrics_job_finished(metrics, &job);
	final_stats.operations[VNFS_OP_READ].bytes = 1; /* the sink kept its own copy */
	interval.time_ms = 72000;
	text = render(metrics, &interval);
	assert_contains(text, "\nvnfs_read_bytes_total{job_id=\"3\",step_id=\"extern\",user=\"alice\","
			"tag_project=\"p1\",tag_queue=\"\"} 4096\n");
	assert_contains(text, "\nvnfs_helper_active_steps 1\n");
	free(text);
	/* Job 3 requeued: the same ids run again within the grace period; the
	 * running step's series replace the ended one's (never both). */
	struct vnfs_step_record requeued;
	struct vnfs_step_stats requeued_stats;
	reading_step(&requeued, &requeued_stats, 3, VNFS_STEP_EXTERN);
	requeued_stats.operations[VNFS_OP_READ].bytes = 5;
	struct vnfs_step_record again[2] = { running, requeued };
	interval = (struct vnfs_interval){ .time_ms = 73000, .step_count = 2, .steps = again };
	text = render(metrics, &interval);
	assert_contains(text, "\nvnfs_read_bytes_total{job_id=\"3\",step_id=\"extern\",user=\"alice\","
			"tag_project=\"p1\",tag_queue=\"\"} 5\n");
	const char *first = strstr(text, "vnfs_read_bytes_total{job_id=\"3\"");
	assert_non_null(first);
	assert_null(strstr(first + 1, "vnfs_read_bytes_total{job_id=\"3\""));
	free(text);

	interval = (struct vnfs_interval){ .time_ms = 131000, .step_count = 1, .steps = &running };
	text = render(metrics, &interval);
	assert_false(has_step(text, 3));
	free(text);
	vnfs_metrics_free(metrics);
}

/*
 * Three reading steps (5 core series and 34 histogram series each), step 100
 * with processes p0 p1 p2 and mount /a, step 101 with process q0 and mounts
 * /b0 /b1, step 102 with neither, and one unattributed record (4 series):
 * 156 series in all.  In the order max_series spends them: core 15 (always),
 * histograms to 117, unattributed to 121, mounts in turns (/a, /b0, /b1) to
 * 136, processes in turns (p0, q0, p1, p2) to 156.
 */
struct capped_interval {
	struct vnfs_step_record steps[3];
	struct vnfs_step_stats stats[3];
	struct vnfs_process_record processes[4];
	struct vnfs_mount_record mounts[3];
	struct vnfs_unattributed_record stray;
	struct vnfs_interval interval;
};

static void capped_interval_init(struct capped_interval *c)
{
	static const char *const process_names[4] = { "p0", "p1", "p2", "q0" };
	static const char *const mount_points[3] = { "/a", "/b0", "/b1" };

	memset(c, 0, sizeof(*c));
	for (int s = 0; s < 3; s++)
		reading_step(&c->steps[s], &c->stats[s], 100 + (uint32_t)s, 0);
	for (int p = 0; p < 4; p++) {
		snprintf(c->processes[p].comm, sizeof(c->processes[p].comm), "%s", process_names[p]);
		c->processes[p].stats.read_ops = 1;
	}
	for (int m = 0; m < 3; m++) {
		c->mounts[m].device = 50 + (uint32_t)m;
		snprintf(c->mounts[m].mount_point, sizeof(c->mounts[m].mount_point), "%s",
			 mount_points[m]);
	}
	c->steps[0].processes = &c->processes[0];
	c->steps[0].process_count = 3;
	c->steps[0].mounts = &c->mounts[0];
	c->steps[0].mount_count = 1;
	c->steps[1].processes = &c->processes[3];
	c->steps[1].process_count = 1;
	c->steps[1].mounts = &c->mounts[1];
	c->steps[1].mount_count = 2;
	c->stray.cgroup_id = 77;
	snprintf(c->stray.comm, sizeof(c->stray.comm), "rsync");
	c->stray.stats.operations[VNFS_OP_GETATTR].count = 5;
	c->interval = (struct vnfs_interval){ .time_ms = 2000, .step_count = 3, .steps = c->steps,
		.unattributed_count = 1, .unattributed = &c->stray };
}

/* Renders c under max_series and checks the series shown and cut. */
static char *render_capped(struct vnfs_metrics **metrics, const struct capped_interval *c,
			   uint32_t max_series, const char *series_line, const char *capped_line)
{
	struct vnfs_config config;
	char error[256] = "";

	test_config(&config);
	config.prometheus.max_series = max_series;
	*metrics = vnfs_metrics_new(&config, error, sizeof(error));
	assert_non_null(*metrics);
	char *text = render(*metrics, &c->interval);
	assert_contains(text, series_line);
	assert_contains(text, capped_line);
	/* Whatever the limit, every step's totals are there. */
	for (uint32_t job = 100; job <= 102; job++) {
		char line[128];
		snprintf(line, sizeof(line), "\nvnfs_operations_total{job_id=\"%u\",", job);
		assert_contains(text, line);
		assert_true(has_step(text, job));
	}
	return text;
}

static void test_series_cap(void **unused)
{
	(void)unused;
	struct capped_interval c;
	struct vnfs_metrics *metrics;
	char *text;

	capped_interval_init(&c);
	/* No limit: all 156. */
	text = render_capped(&metrics, &c, 0, "\nvnfs_helper_series 156\n",
			     "\nvnfs_helper_series_capped_total 0\n");
	free(text);
	vnfs_metrics_free(metrics);

	/* Below the core: the core still, and nothing else (141 cut). */
	text = render_capped(&metrics, &c, 10, "\nvnfs_helper_series 15\n",
			     "\nvnfs_helper_series_capped_total 141\n");
	assert_lacks(text, "vnfs_operation_duration_seconds_bucket{");
	assert_lacks(text, "vnfs_unattributed_operations_total{");
	assert_lacks(text, ",mount=\"");
	assert_lacks(text, "vnfs_process_read_operations_total{");
	assert_int_equal(vnfs_metrics_series_capped(metrics), 141);
	assert_promtool_accepts(text);
	free(text);
	vnfs_metrics_free(metrics);

	/* 60: step 100's histograms fit (49); once step 101's do not, everything
	 * less important is cut too, step 102's histograms included (107 cut). */
	text = render_capped(&metrics, &c, 60, "\nvnfs_helper_series 49\n",
			     "\nvnfs_helper_series_capped_total 107\n");
	assert_contains(text, "\nvnfs_operation_duration_seconds_bucket{job_id=\"100\",");
	assert_lacks(text, "vnfs_operation_duration_seconds_bucket{job_id=\"101\",");
	assert_lacks(text, "vnfs_request_size_bytes_bucket{job_id=\"102\",");
	assert_lacks(text, "vnfs_unattributed_operations_total{");
	assert_lacks(text, ",mount=\"");
	free(text);
	vnfs_metrics_free(metrics);

	/* 140: histograms, unattributed and every mount (136); no process (20 cut). */
	text = render_capped(&metrics, &c, 140, "\nvnfs_helper_series 136\n",
			     "\nvnfs_helper_series_capped_total 20\n");
	assert_contains(text, "vnfs_request_size_bytes_bucket{job_id=\"102\",");
	assert_contains(text, "\nvnfs_unattributed_operations_total{cgroup_id=\"77\",");
	assert_contains(text, ",mount=\"/a\",");
	assert_contains(text, ",mount=\"/b1\",");
	assert_lacks(text, "vnfs_process_read_operations_total{");
	free(text);
	vnfs_metrics_free(metrics);

	/* 150: processes in turns, so step 101's q0 comes before step 100's p1
	 * (146 shown, p1 and p2 cut: 10), and the cut adds up over renderings. */
	text = render_capped(&metrics, &c, 150, "\nvnfs_helper_series 146\n",
			     "\nvnfs_helper_series_capped_total 10\n");
	assert_contains(text, ",comm=\"p0\"} 1\n");
	assert_contains(text, ",comm=\"q0\"} 1\n");
	assert_lacks(text, ",comm=\"p1\"");
	assert_lacks(text, ",comm=\"p2\"");
	assert_promtool_accepts(text);
	free(text);
	text = render(metrics, &c.interval);
	assert_contains(text, "\nvnfs_helper_series_capped_total 20\n");
	free(text);
	assert_int_equal(vnfs_metrics_series_capped(metrics), 20);
	vnfs_metrics_free(metrics);
}

static void test_bad_configuration(void **unused)
{
	(void)unused;
	struct vnfs_config config;
	char error[256] = "";
	struct vnfs_sink sink;

	test_config(&config);
	snprintf(config.prometheus.tag_labels[1], sizeof(config.prometheus.tag_labels[1]), "project");
	assert_int_equal(vnfs_sink_prometheus_open(&sink, &config, error, sizeof(error)), -1);
	assert_string_equal(error, "prometheus: tag_labels: 'PROJECT' and 'project' both become "
			    "label tag_project");

	test_config(&config);
	snprintf(config.prometheus.listen_address, sizeof(config.prometheus.listen_address),
		 "localhost:9716");
	assert_int_equal(vnfs_sink_prometheus_open(&sink, &config, error, sizeof(error)), -1);
	assert_string_equal(error, "prometheus: listen_address 'localhost:9716' is not an IPv4 or "
			    "IPv6 address");

	test_config(&config);
	snprintf(config.prometheus.tag_labels[0], sizeof(config.prometheus.tag_labels[0]), "1x");
	assert_int_equal(vnfs_sink_prometheus_open(&sink, &config, error, sizeof(error)), -1);
	assert_string_equal(error, "prometheus: tag_labels: '1x' is not a tag name");
}

/* ---- the endpoint ------------------------------------------------------------ */

/* One HTTP/1.0 exchange; returns the whole response (malloc'd, NUL added). */
static char *http_exchange_length(uint16_t port, const char *request, size_t *length_out)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	struct sockaddr_in address = { .sin_family = AF_INET, .sin_port = htons(port) };
	address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&address, sizeof(address)), 0);
	size_t length = strlen(request);
	assert_int_equal(write(fd, request, length), (ssize_t)length);

	size_t capacity = 65536, used = 0;
	char *response = malloc(capacity);
	assert_non_null(response);
	for (;;) {
		if (capacity - used < 4096) {
			capacity *= 2;
			response = realloc(response, capacity);
			assert_non_null(response);
		}
		ssize_t got = read(fd, response + used, capacity - used - 1);
		assert_true(got >= 0);
		if (got == 0)
			break;
		used += (size_t)got;
	}
	response[used] = '\0';
	close(fd);
	*length_out = used;
	return response;
}

static char *http_exchange(uint16_t port, const char *request)
{
	size_t length;
	return http_exchange_length(port, request, &length);
}

/* The body of a gzip response, inflated (malloc'd, NUL-terminated). */
static char *gunzip_body(const char *response, size_t length)
{
	const char *body = strstr(response, "\r\n\r\n");
	assert_non_null(body);
	body += 4;
	size_t capacity = 1 << 20;
	char *plain = malloc(capacity);
	assert_non_null(plain);
	z_stream stream = { 0 };
	assert_int_equal(inflateInit2(&stream, 15 + 16), Z_OK);
	stream.next_in = (Bytef *)body;
	stream.avail_in = (uInt)(length - (size_t)(body - response));
	stream.next_out = (Bytef *)plain;
	stream.avail_out = (uInt)capacity - 1;
	assert_int_equal(inflate(&stream, Z_FINISH), Z_STREAM_END);
	plain[stream.total_out] = '\0';
	inflateEnd(&stream);
	return plain;
}

static void test_endpoint(void **unused)
{
	(void)unused;
	struct vnfs_config config;
	char error[256] = "";
	struct vnfs_sink sink;
	test_config(&config);
	assert_int_equal(vnfs_sink_prometheus_open(&sink, &config, error, sizeof(error)), 0);
	assert_string_equal(sink.name, "prometheus");
	uint16_t port = vnfs_sink_prometheus_port(&sink);
	assert_true(port > 0);

	/* Before the first interval: the helper's own metrics only. */
	char *response = http_exchange(port, "GET /metrics HTTP/1.0\r\n\r\n");
	assert_true(strncmp(response, "HTTP/1.0 200", 12) == 0 || strncmp(response, "HTTP/1.1 200", 12) == 0);
	assert_contains(response, "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n");
	assert_contains(response, "\r\n\r\n# HELP ");
	assert_lacks(response, "vnfs_operations_total{");
	free(response);

	struct vnfs_helper_health health = { .sink_count = 2, .sink_names = { "prometheus", "kafka" },
		.sink_dropped = { 0, 5 } };
	struct vnfs_step_record step;
	struct vnfs_step_stats stats;
	reading_step(&step, &stats, 42, VNFS_STEP_BATCH);
	struct vnfs_interval interval = { .time_ms = 2000, .step_count = 1, .steps = &step,
		.health = &health };
	sink.publish(sink.state, &interval);
	response = http_exchange(port, "GET /metrics HTTP/1.0\r\n\r\n");
	assert_contains(response, "\nvnfs_operations_total{" LABELS ",tag_queue=\"\",op=\"read\"} 7\n");
	assert_contains(response, "\nvnfs_helper_dropped_records_total{sink=\"kafka\"} 5\n");
	free(response);

	/* The same text gzipped for a client that takes gzip (Prometheus does). */
	size_t length;
	char *zipped = http_exchange_length(port, "GET /metrics HTTP/1.0\r\n"
					    "Accept-Encoding: deflate, gzip\r\n\r\n", &length);
	assert_contains(zipped, "Content-Encoding: gzip\r\n");
	char *inflated = gunzip_body(zipped, length);
	response = http_exchange(port, "GET /metrics HTTP/1.0\r\n\r\n");
	assert_lacks(response, "Content-Encoding");
	assert_string_equal(inflated, strstr(response, "\r\n\r\n") + 4);
	free(inflated);
	free(zipped);
	free(response);
	response = http_exchange(port, "GET /metrics HTTP/1.0\r\nAccept-Encoding: gzip;q=0\r\n\r\n");
	assert_lacks(response, "Content-Encoding");
	free(response);

	response = http_exchange(port, "GET /other HTTP/1.0\r\n\r\n");
	assert_contains(response, " 404 ");
	free(response);
	response = http_exchange(port, "POST /metrics HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc");
	assert_contains(response, " 405 ");
	assert_contains(response, "Allow: GET, HEAD\r\n");
	free(response);
	response = http_exchange(port, "GET / HTTP/1.0\r\n\r\n");
	assert_contains(response, "/metrics");
	free(response);

	assert_int_equal(sink.dropped(sink.state), 0);
	sink.close(sink.state);
}

struct scraper {
	uint16_t port;
	int complete;
};

static void *scrape_repeatedly(void *argument)
{
	struct scraper *scraper = argument;
	for (int i = 0; i < 40; i++) {
		char *response = http_exchange(scraper->port, "GET /metrics HTTP/1.1\r\nHost: x\r\n"
					       "Connection: close\r\n\r\n");
		size_t length = strlen(response);
		const char *tail = "vnfs_helper_series_capped_total 0\n";
		if (length > strlen(tail) && strcmp(response + length - strlen(tail), tail) == 0)
			scraper->complete++;
		free(response);
	}
	return NULL;
}

/* Scrapes during publishing always see one whole exposition. */
static void test_scrapes_while_publishing(void **unused)
{
	(void)unused;
	struct vnfs_config config;
	char error[256] = "";
	struct vnfs_sink sink;
	test_config(&config);
	assert_int_equal(vnfs_sink_prometheus_open(&sink, &config, error, sizeof(error)), 0);

	enum { STEPS = 50 };
	struct vnfs_step_record *steps = calloc(STEPS, sizeof(*steps));
	struct vnfs_step_stats *stats = calloc(STEPS, sizeof(*stats));
	assert_non_null(steps);
	assert_non_null(stats);
	for (uint32_t s = 0; s < STEPS; s++)
		reading_step(&steps[s], &stats[s], 500 + s, s);

	struct scraper scraper = { .port = vnfs_sink_prometheus_port(&sink) };
	pthread_t thread;
	assert_int_equal(pthread_create(&thread, NULL, scrape_repeatedly, &scraper), 0);
	for (int i = 0; i < 200; i++) {
		struct vnfs_interval interval = { .time_ms = 2000 + i, .step_count = (size_t)(i % STEPS),
			.steps = steps };
		sink.publish(sink.state, &interval);
	}
	assert_int_equal(pthread_join(thread, NULL), 0);
	assert_int_equal(scraper.complete, 40);
	free(steps);
	free(stats);
	sink.close(sink.state);
}

struct waiting_scrape {
	uint16_t port;
	char *response;
	atomic_bool done;
};

static void *scrape_once(void *argument)
{
	struct waiting_scrape *scrape = argument;
	scrape->response = http_exchange(scrape->port, "GET /metrics HTTP/1.0\r\n\r\n");
	atomic_store(&scrape->done, true);
	return NULL;
}

static int64_t monotonic_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* A scrape of sink's port, served while the collector goes on publishing
 * interval every 50 ms; returns its response. */
static char *scrape_while_publishing(struct vnfs_sink *sink, const struct vnfs_interval *interval)
{
	struct waiting_scrape scrape = { .port = vnfs_sink_prometheus_port(sink) };
	pthread_t thread;

	atomic_init(&scrape.done, false);
	assert_int_equal(pthread_create(&thread, NULL, scrape_once, &scrape), 0);
	while (!atomic_load(&scrape.done)) {
		usleep(50000);
		sink->publish(sink->state, interval);
	}
	assert_int_equal(pthread_join(thread, NULL), 0);
	return scrape.response;
}

/* Intervals nobody scrapes are not rendered; a scrape gets the next one.
 * The interval is long enough (0.5 s, still lazy) that the sharing can be
 * decided on most tries; a try on which the machine was too slow to decide
 * it (the second scrape was answered more than an interval after the first
 * one asked) is made again (up to 5). */
static void test_renders_on_demand(void **unused)
{
	(void)unused;
	const int interval_ms = 500;
	struct vnfs_config config;
	char error[256] = "";
	struct vnfs_sink sink;
	test_config(&config);
	config.helper.interval_ms = interval_ms;
	assert_int_equal(vnfs_sink_prometheus_open(&sink, &config, error, sizeof(error)), 0);
	uint16_t port = vnfs_sink_prometheus_port(&sink);

	struct vnfs_step_record step;
	struct vnfs_step_stats stats;
	reading_step(&step, &stats, 1, 0);
	struct vnfs_interval interval = { .time_ms = 2000, .step_count = 1, .steps = &step };
	sink.publish(sink.state, &interval); /* the first interval is always rendered */
	usleep((interval_ms + 100) * 1000);
	vnfs_record_identify_slurm(&step, 2, step.step_id);
	sink.publish(sink.state, &interval); /* nobody asked: not rendered */

	/* The scrape finds job 1's text too old and waits for the next
	 * interval; the collector goes on publishing job 3 until it is served. */
	vnfs_record_identify_slurm(&step, 3, step.step_id);
	bool decided = false;
	for (int try = 0; try < 5 && !decided; try++) {
		int64_t asked_ms = monotonic_ms();
		char *response = scrape_while_publishing(&sink, &interval);
		assert_true(has_step(response, 3));
		assert_false(has_step(response, 1));
		assert_false(has_step(response, 2));
		free(response);

		/* Its rendering was made after asked_ms: a scrape asking within
		 * one interval of that shares it, with no publish() to wait for. */
		char *again = http_exchange(port, "GET /metrics HTTP/1.0\r\n\r\n");
		/* Judged by the server before it answered: before now. */
		decided = monotonic_ms() - asked_ms <= interval_ms;
		if (decided)
			assert_true(has_step(again, 3));
		free(again);
		if (!decided)
			usleep((interval_ms + 100) * 1000); /* a stale text, to be asked for */
	}
	assert_true(decided);

	/* An interval later nobody has asked again: the text is let go, and a
	 * scrape that then gets no rendering in time (the collector is stuck)
	 * is told so rather than served stale numbers. */
	usleep((interval_ms + 100) * 1000);
	sink.publish(sink.state, &interval);
	char *stuck = http_exchange(port, "GET /metrics HTTP/1.0\r\n\r\n");
	assert_contains(stuck, " 503 ");
	assert_contains(stuck, "the collector produced no metrics in time");
	free(stuck);
	sink.close(sink.state);
}

/* With intervals of 2 s and more every interval is rendered; no scrape waits. */
static void test_long_intervals_render_eagerly(void **unused)
{
	(void)unused;
	struct vnfs_config config;
	char error[256] = "";
	struct vnfs_sink sink;
	test_config(&config);
	config.helper.interval_ms = 30000;
	assert_int_equal(vnfs_sink_prometheus_open(&sink, &config, error, sizeof(error)), 0);

	struct vnfs_step_record step;
	struct vnfs_step_stats stats;
	reading_step(&step, &stats, 1, 0);
	struct vnfs_interval interval = { .time_ms = 2000, .step_count = 1, .steps = &step };
	sink.publish(sink.state, &interval);
	vnfs_record_identify_slurm(&step, 2, step.step_id);
	sink.publish(sink.state, &interval);

	struct timespec start, end;
	clock_gettime(CLOCK_MONOTONIC, &start);
	char *response = http_exchange(vnfs_sink_prometheus_port(&sink), "GET /metrics HTTP/1.0\r\n\r\n");
	clock_gettime(CLOCK_MONOTONIC, &end);
	assert_true(has_step(response, 2));
	assert_false(has_step(response, 1));
	/* Served at once, not after waiting for an interval (30 s): the bound
	 * leaves a loaded machine 20 s, and is still short of the interval. */
	assert_true(end.tv_sec - start.tv_sec < 20);
	free(response);
	sink.close(sink.state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_samples),
		cmocka_unit_test(test_promtool_every_operation),
		cmocka_unit_test(test_wire_samples),
		cmocka_unit_test(test_wire_same_labels_summed),
		cmocka_unit_test(test_node_wire_samples),
		cmocka_unit_test(test_grace_period),
		cmocka_unit_test(test_series_cap),
		cmocka_unit_test(test_bad_configuration),
		cmocka_unit_test(test_endpoint),
		cmocka_unit_test(test_scrapes_while_publishing),
		cmocka_unit_test(test_renders_on_demand),
		cmocka_unit_test(test_long_intervals_render_eagerly),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
