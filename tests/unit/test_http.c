/*
 * test_http.c — the HTTP sink against a receiver on 127.0.0.1 (libmicrohttpd)
 * that records every body: each record arrives exactly once, also when the
 * receiver answers 503 twice first; with nothing listening, publish() never
 * blocks and drops are counted once the buffer is full.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>
#include <microhttpd.h>

#include "helper/outputs/sink.h"
#include "lib/record_json.h"
#include "tests/unit/stream_fixtures.h"

#define MAX_REQUESTS 256

/* ---- the receiver ---------------------------------------------------------- */

struct receiver {
	struct MHD_Daemon *daemon;
	uint16_t port;
	pthread_mutex_t lock;
	int fail_first;         /* answer this many requests with 503 */
	int requests;           /* all POSTs seen */
	int accepted;           /* bodies kept (200) */
	char *bodies[MAX_REQUESTS];
	int wrong_headers;      /* requests without our Content-Type or custom header */
};

struct upload {
	char *data;
	size_t length;
};

static enum MHD_Result receive(void *cls, struct MHD_Connection *connection, const char *url,
			       const char *method, const char *version, const char *upload_data,
			       size_t *upload_data_size, void **request_state)
{
	struct receiver *receiver = cls;
	struct upload *upload = *request_state;
	(void)url;
	(void)version;

	if (!upload) {
		upload = calloc(1, sizeof(*upload));
		if (!upload)
			return MHD_NO;
		*request_state = upload;
		return MHD_YES;
	}
	if (*upload_data_size) {
		char *grown = realloc(upload->data, upload->length + *upload_data_size + 1);
		if (!grown)
			return MHD_NO;
		upload->data = grown;
		memcpy(upload->data + upload->length, upload_data, *upload_data_size);
		upload->length += *upload_data_size;
		upload->data[upload->length] = '\0';
		*upload_data_size = 0;
		return MHD_YES;
	}

	unsigned status = MHD_HTTP_OK;
	const char *type = MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
						       MHD_HTTP_HEADER_CONTENT_TYPE);
	const char *custom = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "X-Vnfs-Test");
	pthread_mutex_lock(&receiver->lock);
	receiver->requests++;
	if (strcmp(method, "POST") != 0 || !type || strcmp(type, "application/x-ndjson") != 0 ||
	    !custom || strcmp(custom, "yes") != 0)
		receiver->wrong_headers++;
	if (receiver->fail_first > 0) {
		receiver->fail_first--;
		status = MHD_HTTP_SERVICE_UNAVAILABLE;
	} else if (receiver->accepted < MAX_REQUESTS) {
		receiver->bodies[receiver->accepted++] = upload->data ? upload->data : strdup("");
		upload->data = NULL;
	}
	pthread_mutex_unlock(&receiver->lock);

	struct MHD_Response *response = MHD_create_response_from_buffer(0, (void *)"",
									MHD_RESPMEM_PERSISTENT);
	enum MHD_Result result = MHD_queue_response(connection, status, response);
	MHD_destroy_response(response);
	return result;
}

static void request_done(void *cls, struct MHD_Connection *connection, void **request_state,
			 enum MHD_RequestTerminationCode code)
{
	struct upload *upload = *request_state;
	(void)cls;
	(void)connection;
	(void)code;
	if (upload) {
		free(upload->data);
		free(upload);
	}
	*request_state = NULL;
}

static void receiver_start(struct receiver *receiver, int fail_first)
{
	memset(receiver, 0, sizeof(*receiver));
	pthread_mutex_init(&receiver->lock, NULL);
	receiver->fail_first = fail_first;
	receiver->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO, 0, NULL,
					    NULL, receive, receiver,
					    MHD_OPTION_NOTIFY_COMPLETED, request_done, NULL,
					    MHD_OPTION_END);
	assert_non_null(receiver->daemon);
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(receiver->daemon,
							       MHD_DAEMON_INFO_BIND_PORT);
	assert_non_null(info);
	receiver->port = info->port;
}

static void receiver_stop(struct receiver *receiver)
{
	MHD_stop_daemon(receiver->daemon);
	for (int i = 0; i < receiver->accepted; i++)
		free(receiver->bodies[i]);
	pthread_mutex_destroy(&receiver->lock);
}

/* ---- records ------------------------------------------------------------------ */

static void http_config(struct vnfs_config *config, const char *url, uint32_t batch,
			uint32_t buffer, uint32_t retry_max, uint32_t backoff_ms)
{
	memset(config, 0, sizeof(*config));
	config->http.enabled = true;
	snprintf(config->http.url, sizeof(config->http.url), "%s", url);
	config->http.header_count = 1;
	snprintf(config->http.headers[0], sizeof(config->http.headers[0]), "X-Vnfs-Test: yes");
	config->http.timeout_ms = 2000;
	config->http.batch_records = batch;
	config->http.buffer_records = buffer;
	config->http.retry_max = retry_max;
	config->http.retry_backoff_ms = backoff_ms;
}

/* The field each record is checked by. */
static void make_step(struct vnfs_step_record *step, struct vnfs_step_stats *stats, uint32_t job_id,
		      uint32_t step_id)
{
	stream_step_init(step, stats, job_id, step_id);
	stats->operations[VNFS_OP_READ].bytes = 1000u * job_id + step_id;
}

/* One interval with `steps` steps of job `job`; returns how long publish took. */
static double publish_interval(struct vnfs_sink *sink, uint32_t job, uint32_t steps)
{
	struct vnfs_step_record *records = calloc(steps, sizeof(*records));
	struct vnfs_step_stats *stats = calloc(steps, sizeof(*stats));
	assert_non_null(records);
	assert_non_null(stats);
	for (uint32_t s = 0; s < steps; s++)
		make_step(&records[s], &stats[s], job, s);
	struct vnfs_interval interval = { .time_ms = 1700000001000, .step_count = steps,
		.steps = records };
	double start = monotonic_ms();
	sink->publish(sink->state, &interval);
	double took = monotonic_ms() - start;
	free(records);
	free(stats);
	return took;
}

/*
 * Publishes JOBS intervals of STEPS steps and one finished job, closes the
 * sink, and checks the receiver got each record exactly once.
 */
static void deliver_and_check(struct receiver *receiver, uint32_t retry_max)
{
	enum { JOBS = 12, STEPS = 5, BATCH = 7 };
	struct vnfs_config config;
	struct vnfs_sink sink;
	char error[256] = "", url[64];

	snprintf(url, sizeof(url), "http://127.0.0.1:%u/ingest", receiver->port);
	http_config(&config, url, BATCH, 1000, retry_max, 20);
	if (vnfs_sink_http_open(&sink, &config, error, sizeof(error)) != 0)
		fail_msg("%s", error);
	assert_string_equal(sink.name, "http");
	for (uint32_t job = 1; job <= JOBS; job++)
		publish_interval(&sink, job, STEPS);

	struct vnfs_step_record final;
	struct vnfs_step_stats final_stats;
	make_step(&final, &final_stats, 3, 0);
	final.finished = true;
	final.end_time_ms = 1700000002000;
	struct vnfs_job job = { .job_id = 3, .uid = 1000, .user = "alice", .node = "n1",
		.start_time_ms = 1700000000000, .end_time_ms = 1700000002000, .step_count = 1,
		.steps = &final };
	vnfs_workload_of_slurm_job(&job.workload, job.job_id);
	sink.job_finished(sink.state, &job);
	assert_int_equal(sink.dropped(sink.state), 0);
	sink.close(sink.state); /* sends what is queued */

	int seen[JOBS + 1][STEPS] = { { 0 } };
	int jobs_seen = 0, lines = 0;
	pthread_mutex_lock(&receiver->lock);
	assert_int_equal(receiver->wrong_headers, 0);
	for (int b = 0; b < receiver->accepted; b++) {
		int body_lines = 0;
		char *saveptr = NULL;
		for (char *line = strtok_r(receiver->bodies[b], "\n", &saveptr); line;
		     line = strtok_r(NULL, "\n", &saveptr)) {
			body_lines++;
			lines++;
			struct json_object *object = json_tokener_parse(line);
			struct json_object *type;
			assert_non_null(object);
			assert_true(json_object_object_get_ex(object, "type", &type));
			if (strcmp(json_object_get_string(type), "job") == 0) {
				jobs_seen++;
			} else {
				json_object_object_del(object, "type");
				struct vnfs_step_record record;
				if (vnfs_step_record_from_json(object, &record, error, sizeof(error)) != 0)
					fail_msg("%s", error);
				assert_true(record.job_id >= 1 && record.job_id <= JOBS);
				assert_true(record.step_id < STEPS);
				assert_int_equal(record.stats->operations[VNFS_OP_READ].bytes,
						 1000u * record.job_id + record.step_id);
				seen[record.job_id][record.step_id]++;
				vnfs_step_record_free_arrays(&record);
			}
			json_object_put(object);
		}
		assert_true(body_lines >= 1 && body_lines <= BATCH);
	}
	pthread_mutex_unlock(&receiver->lock);
	assert_int_equal(lines, JOBS * STEPS + 1);
	assert_int_equal(jobs_seen, 1);
	for (int j = 1; j <= JOBS; j++)
		for (int s = 0; s < STEPS; s++)
			assert_int_equal(seen[j][s], 1);
}

static void test_every_record_once(void **unused)
{
	(void)unused;
	struct receiver receiver;
	receiver_start(&receiver, 0);
	deliver_and_check(&receiver, 0);
	assert_int_equal(receiver.requests, receiver.accepted);
	receiver_stop(&receiver);
}

static void test_retried_after_503(void **unused)
{
	(void)unused;
	struct receiver receiver;
	receiver_start(&receiver, 2);
	deliver_and_check(&receiver, 3);
	assert_int_equal(receiver.fail_first, 0);
	assert_int_equal(receiver.requests, receiver.accepted + 2);
	receiver_stop(&receiver);
}

/*
 * Timing on a shared machine (or under valgrind) is loose, so what proves
 * publish() does not wait on the network is what it leaves behind: the drop
 * count right after it returns, and a bound far below the time the network
 * would have made it wait.
 */
#define PUBLISH_BOUND_MS 10000.0

/* Nothing listens: every connection is refused at once. */
static void test_unreachable_never_blocks(void **unused)
{
	(void)unused;
	enum { BUFFER = 10, STEPS = 100 };
	struct vnfs_config config;
	struct vnfs_sink sink;
	char error[256] = "";

	http_config(&config, "http://127.0.0.1:1/ingest", 5, BUFFER, 1, 100);
	assert_int_equal(vnfs_sink_http_open(&sink, &config, error, sizeof(error)), 0);

	assert_true(publish_interval(&sink, 1, STEPS) < PUBLISH_BOUND_MS);
	/* The buffer took BUFFER lines; the rest were dropped on the spot. */
	assert_int_equal(sink.dropped(sink.state), STEPS - BUFFER);

	/* The buffered ones fail (with one retry after 100 ms) and are dropped too. */
	double deadline = monotonic_ms() + 30000;
	while (sink.dropped(sink.state) < STEPS && monotonic_ms() < deadline)
		usleep(20000);
	assert_int_equal(sink.dropped(sink.state), STEPS);

	/* Still accepting, still counting. */
	assert_true(publish_interval(&sink, 2, STEPS) < PUBLISH_BOUND_MS);
	assert_true(sink.dropped(sink.state) >= 2 * STEPS - BUFFER);
	sink.close(sink.state);
}

/*
 * A server that accepts connections and never answers, and a request
 * timeout of 10 minutes: a publish() that waited on it would hang; close()
 * must still end within its bound by aborting the request in flight.
 */
static void test_silent_server_never_blocks(void **unused)
{
	(void)unused;
	enum { BUFFER = 10, BATCH = 5, STEPS = 100 };
	struct vnfs_config config;
	struct vnfs_sink sink;
	char error[256] = "", url[64];

	int listener = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(listener >= 0);
	struct sockaddr_in address = { .sin_family = AF_INET };
	address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(listener, (struct sockaddr *)&address, sizeof(address)), 0);
	assert_int_equal(listen(listener, 64), 0); /* the kernel completes connections; nobody reads */
	socklen_t length = sizeof(address);
	assert_int_equal(getsockname(listener, (struct sockaddr *)&address, &length), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/ingest", ntohs(address.sin_port));

	http_config(&config, url, BATCH, BUFFER, 0, 100);
	config.http.timeout_ms = 600000;
	assert_int_equal(vnfs_sink_http_open(&sink, &config, error, sizeof(error)), 0);

	assert_true(publish_interval(&sink, 1, STEPS) < PUBLISH_BOUND_MS);
	assert_int_equal(sink.dropped(sink.state), STEPS - BUFFER);
	/* The sender took one batch once it connects: the connection waits in
	 * the listener's backlog, which makes the listener readable. */
	struct pollfd connection = { .fd = listener, .events = POLLIN };
	assert_int_equal(poll(&connection, 1, 30000), 1);

	/* The sender holds BATCH lines in flight, so BATCH fit again. */
	assert_true(publish_interval(&sink, 2, STEPS) < PUBLISH_BOUND_MS);
	assert_int_equal(sink.dropped(sink.state), 2 * STEPS - BUFFER - BATCH);

	double start = monotonic_ms();
	sink.close(sink.state);
	double took = monotonic_ms() - start;
	if (took > 5000.0 + 3000.0)
		fail_msg("close took %.0f ms", took);
	close(listener);
}

static void test_bad_configuration(void **unused)
{
	(void)unused;
	struct vnfs_config config;
	struct vnfs_sink sink;
	char error[256] = "";

	http_config(&config, "ftp://example.org/x", 5, 10, 0, 10);
	assert_int_equal(vnfs_sink_http_open(&sink, &config, error, sizeof(error)), -1);
	assert_string_equal(error, "http: url 'ftp://example.org/x' is not an http:// or https:// URL");

	http_config(&config, "http://127.0.0.1:1/", 5, 10, 0, 10);
	snprintf(config.http.headers[0], sizeof(config.http.headers[0]), "Authorization Bearer x");
	assert_int_equal(vnfs_sink_http_open(&sink, &config, error, sizeof(error)), -1);
	assert_string_equal(error, "http: header 'Authorization Bearer x' is not 'Name: value'");

	http_config(&config, "http://127.0.0.1:1/", 5, 0, 0, 10);
	assert_int_equal(vnfs_sink_http_open(&sink, &config, error, sizeof(error)), -1);
	assert_string_equal(error, "http: buffer_records and batch_records must be at least 1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_record_once),
		cmocka_unit_test(test_retried_after_503),
		cmocka_unit_test(test_unreachable_never_blocks),
		cmocka_unit_test(test_silent_server_never_blocks),
		cmocka_unit_test(test_bad_configuration),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
