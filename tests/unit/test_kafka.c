/*
 * test_kafka.c — the Kafka sink against librdkafka's mock cluster: every
 * record produced is consumed back exactly once, keyed by its job; with the
 * cluster gone, publish() stays fast and the queue bound and failed
 * deliveries are counted; bad properties are named in the error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include "helper/outputs/sink.h"
#include "lib/record_json.h"
#include "tests/unit/stream_fixtures.h"

#define TOPIC "vnfs-test"
#define PARTITIONS 2

struct cluster {
	rd_kafka_t *handle; /* the mock cluster lives inside a client handle */
	rd_kafka_mock_cluster_t *mock;
	char bootstraps[256];
};

static void cluster_start(struct cluster *cluster)
{
	char error[256];
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	assert_int_equal(rd_kafka_conf_set(conf, "log_level", "3", error, sizeof(error)),
			 RD_KAFKA_CONF_OK);
	cluster->handle = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof(error));
	assert_non_null(cluster->handle);
	cluster->mock = rd_kafka_mock_cluster_new(cluster->handle, 1);
	assert_non_null(cluster->mock);
	snprintf(cluster->bootstraps, sizeof(cluster->bootstraps), "%s",
		 rd_kafka_mock_cluster_bootstraps(cluster->mock));
	assert_int_equal(rd_kafka_mock_topic_create(cluster->mock, TOPIC, PARTITIONS, 1),
			 RD_KAFKA_RESP_ERR_NO_ERROR);
}

static void cluster_stop(struct cluster *cluster)
{
	if (cluster->mock)
		rd_kafka_mock_cluster_destroy(cluster->mock);
	if (cluster->handle)
		rd_kafka_destroy(cluster->handle);
	cluster->mock = NULL;
	cluster->handle = NULL;
}

static void kafka_config(struct vnfs_config *config, const char *brokers, uint32_t queue_limit)
{
	memset(config, 0, sizeof(*config));
	config->kafka.enabled = true;
	snprintf(config->kafka.brokers, sizeof(config->kafka.brokers), "%s", brokers);
	snprintf(config->kafka.topic, sizeof(config->kafka.topic), TOPIC);
	config->kafka.queue_limit = queue_limit;
	config->kafka.property_count = 2;
	snprintf(config->kafka.properties[0].key, sizeof(config->kafka.properties[0].key), "linger.ms");
	snprintf(config->kafka.properties[0].value, sizeof(config->kafka.properties[0].value), "5");
	snprintf(config->kafka.properties[1].key, sizeof(config->kafka.properties[1].key), "log_level");
	snprintf(config->kafka.properties[1].value, sizeof(config->kafka.properties[1].value), "3");
}

/* The field each record is checked by. */
static void make_step(struct vnfs_step_record *step, struct vnfs_step_stats *stats, uint32_t job_id,
		      uint32_t step_id)
{
	stream_step_init(step, stats, job_id, step_id);
	stats->operations[VNFS_OP_OPEN].count = 100u * job_id + step_id;
}

/* Publishes `jobs` intervals of `steps` steps (job j, steps 0..steps-1); returns the slowest call in ms. */
static double publish_jobs(struct vnfs_sink *sink, uint32_t first_job, uint32_t jobs, uint32_t steps)
{
	struct vnfs_step_record records[16];
	struct vnfs_step_stats stats[16];
	double slowest = 0;

	assert_true(steps <= 16);
	for (uint32_t j = 0; j < jobs; j++) {
		for (uint32_t s = 0; s < steps; s++)
			make_step(&records[s], &stats[s], first_job + j, s);
		struct vnfs_interval interval = { .time_ms = 1700000001000, .step_count = steps,
			.steps = records };
		double start = monotonic_ms();
		sink->publish(sink->state, &interval);
		double took = monotonic_ms() - start;
		if (took > slowest)
			slowest = took;
	}
	return slowest;
}

static void test_records_arrive_exactly_once(void **unused)
{
	(void)unused;
	enum { JOBS = 20, STEPS = 3 };
	struct cluster cluster = { 0 };
	struct vnfs_config config;
	struct vnfs_sink sink;
	char error[512] = "";

	cluster_start(&cluster);
	kafka_config(&config, cluster.bootstraps, 1000);
	if (vnfs_sink_kafka_open(&sink, &config, error, sizeof(error)) != 0)
		fail_msg("%s", error);
	assert_string_equal(sink.name, "kafka");
	publish_jobs(&sink, 1, JOBS, STEPS);

	struct vnfs_step_record final[STEPS];
	struct vnfs_step_stats final_stats[STEPS];
	for (uint32_t s = 0; s < STEPS; s++) {
		make_step(&final[s], &final_stats[s], 7, s);
		final[s].finished = true;
		final[s].end_time_ms = 1700000002000;
	}
	struct vnfs_job job = { .job_id = 7, .uid = 1000, .user = "alice", .node = "n1",
		.start_time_ms = 1700000000000, .end_time_ms = 1700000002000, .step_count = STEPS,
		.steps = final };
	vnfs_workload_of_slurm_job(&job.workload, 7);
	sink.job_finished(sink.state, &job);
	assert_int_equal(sink.dropped(sink.state), 0);
	sink.close(sink.state); /* flushes */

	/* Read the topic back from the beginning. */
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	assert_int_equal(rd_kafka_conf_set(conf, "bootstrap.servers", cluster.bootstraps, error,
					   sizeof(error)), RD_KAFKA_CONF_OK);
	assert_int_equal(rd_kafka_conf_set(conf, "group.id", "vnfs-test", error, sizeof(error)),
			 RD_KAFKA_CONF_OK);
	assert_int_equal(rd_kafka_conf_set(conf, "enable.auto.commit", "false", error, sizeof(error)),
			 RD_KAFKA_CONF_OK);
	rd_kafka_t *consumer = rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof(error));
	assert_non_null(consumer);
	rd_kafka_poll_set_consumer(consumer);
	rd_kafka_topic_partition_list_t *partitions = rd_kafka_topic_partition_list_new(PARTITIONS);
	for (int p = 0; p < PARTITIONS; p++)
		rd_kafka_topic_partition_list_add(partitions, TOPIC, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
	assert_int_equal(rd_kafka_assign(consumer, partitions), RD_KAFKA_RESP_ERR_NO_ERROR);
	rd_kafka_topic_partition_list_destroy(partitions);

	int seen_steps[JOBS + 1][STEPS] = { { 0 } };
	int seen_jobs = 0, messages = 0;
	double deadline = monotonic_ms() + 20000;
	while (messages < JOBS * STEPS + 1 && monotonic_ms() < deadline) {
		rd_kafka_message_t *message = rd_kafka_consumer_poll(consumer, 200);
		if (!message)
			continue;
		if (message->err) {
			rd_kafka_message_destroy(message);
			continue;
		}
		messages++;
		char key[16] = "";
		assert_true(message->key_len < sizeof(key));
		memcpy(key, message->key, message->key_len);

		struct json_tokener *tokener = json_tokener_new();
		struct json_object *object = json_tokener_parse_ex(tokener, message->payload,
								   (int)message->len);
		json_tokener_free(tokener);
		assert_non_null(object);
		struct json_object *value;
		assert_true(json_object_object_get_ex(object, "job", &value));
		uint32_t job_id = (uint32_t)json_object_get_uint64(value);
		char expected_key[16];
		snprintf(expected_key, sizeof(expected_key), "%u", job_id);
		assert_string_equal(key, expected_key);
		assert_true(json_object_object_get_ex(object, "type", &value));

		if (strcmp(json_object_get_string(value), "job") == 0) {
			assert_int_equal(job_id, 7);
			assert_true(json_object_object_get_ex(object, "steps", &value));
			assert_int_equal(json_object_array_length(value), STEPS);
			seen_jobs++;
		} else {
			assert_string_equal(json_object_get_string(value), "step");
			json_object_object_del(object, "type");
			struct vnfs_step_record record;
			if (vnfs_step_record_from_json(object, &record, error, sizeof(error)) != 0)
				fail_msg("%s", error);
			assert_true(record.job_id >= 1 && record.job_id <= JOBS);
			assert_true(record.step_id < STEPS);
			assert_int_equal(record.stats->operations[VNFS_OP_OPEN].count,
					 100u * record.job_id + record.step_id);
			seen_steps[record.job_id][record.step_id]++;
			vnfs_step_record_free_arrays(&record);
		}
		json_object_put(object);
		rd_kafka_message_destroy(message);
	}
	/* Nothing more is coming. */
	rd_kafka_message_t *extra = rd_kafka_consumer_poll(consumer, 500);
	if (extra) {
		assert_int_not_equal(extra->err, RD_KAFKA_RESP_ERR_NO_ERROR);
		rd_kafka_message_destroy(extra);
	}
	rd_kafka_consumer_close(consumer);
	rd_kafka_destroy(consumer);

	assert_int_equal(messages, JOBS * STEPS + 1);
	assert_int_equal(seen_jobs, 1);
	for (int j = 1; j <= JOBS; j++)
		for (int s = 0; s < STEPS; s++)
			assert_int_equal(seen_steps[j][s], 1);
	cluster_stop(&cluster);
}

static void test_dead_cluster_never_blocks(void **unused)
{
	(void)unused;
	enum { QUEUE_LIMIT = 10, JOBS = 30, STEPS = 4 };
	struct cluster cluster = { 0 };
	struct vnfs_config config;
	struct vnfs_sink sink;
	char error[512] = "";

	/* Brokers that were real and are gone. */
	cluster_start(&cluster);
	kafka_config(&config, cluster.bootstraps, QUEUE_LIMIT);
	cluster_stop(&cluster);
	size_t count = config.kafka.property_count++;
	snprintf(config.kafka.properties[count].key, sizeof(config.kafka.properties[count].key),
		 "message.timeout.ms");
	snprintf(config.kafka.properties[count].value, sizeof(config.kafka.properties[count].value),
		 "1500");
	assert_int_equal(vnfs_sink_kafka_open(&sink, &config, error, sizeof(error)), 0);

	/* A publish() that waited for queue space would have queued every
	 * record once the 1.5 s message timeouts made room, and dropped none:
	 * the exact drop count is the proof.  (Time on a shared machine is
	 * loose; the bound is only a sanity check.) */
	double slowest = publish_jobs(&sink, 1, JOBS, STEPS);
	if (slowest > 10000.0)
		fail_msg("publish took %.0f ms", slowest);
	/* queue_limit accepted, the rest dropped on the spot. */
	assert_int_equal(sink.dropped(sink.state), JOBS * STEPS - QUEUE_LIMIT);

	/* The queued ones time out (message.timeout.ms) and count as dropped too. */
	double deadline = monotonic_ms() + 15000;
	while (sink.dropped(sink.state) < JOBS * STEPS && monotonic_ms() < deadline)
		usleep(50000);
	assert_int_equal(sink.dropped(sink.state), JOBS * STEPS);

	/* And the sink still accepts (and counts) more without blocking. */
	slowest = publish_jobs(&sink, 100, 1, STEPS);
	if (slowest > 10000.0)
		fail_msg("publish took %.0f ms", slowest);
	assert_int_equal(sink.dropped(sink.state), JOBS * STEPS); /* queued: there is room again */

	/* close() flushes for at most 5 s, then purges. */
	double start = monotonic_ms();
	sink.close(sink.state);
	double took = monotonic_ms() - start;
	if (took > 5000.0 + 5000.0)
		fail_msg("close took %.0f ms", took);
}

static void test_bad_properties(void **unused)
{
	(void)unused;
	struct vnfs_config config;
	struct vnfs_sink sink;
	char error[512] = "";

	kafka_config(&config, "127.0.0.1:1", 100);
	snprintf(config.kafka.properties[1].key, sizeof(config.kafka.properties[1].key), "no.such.thing");
	assert_int_equal(vnfs_sink_kafka_open(&sink, &config, error, sizeof(error)), -1);
	assert_string_equal(error, "kafka: property.no.such.thing = '3': No such configuration "
			    "property: \"no.such.thing\"");

	kafka_config(&config, "127.0.0.1:1", 100);
	snprintf(config.kafka.properties[0].value, sizeof(config.kafka.properties[0].value), "soon");
	assert_int_equal(vnfs_sink_kafka_open(&sink, &config, error, sizeof(error)), -1);
	assert_true(strncmp(error, "kafka: property.linger.ms = 'soon': ", 36) == 0);

	kafka_config(&config, "", 100);
	assert_int_equal(vnfs_sink_kafka_open(&sink, &config, error, sizeof(error)), -1);
	assert_string_equal(error, "kafka: brokers and topic must both be set");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_records_arrive_exactly_once),
		cmocka_unit_test(test_dead_cluster_never_blocks),
		cmocka_unit_test(test_bad_properties),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
