/*
 * sink_kafka.c — records to a Kafka topic (librdkafka producer).
 *
 * Every step record of an interval and every finished job becomes one JSON
 * message (lib/record_json.c plus "type": "step" or "job"), keyed by the job
 * id so a job's records stay in one partition, in order.  publish() only
 * hands copies to librdkafka's queue (RD_KAFKA_MSG_F_COPY, never
 * RD_KAFKA_MSG_F_BLOCK): when the queue holds queue_limit messages
 * (queue.buffering.max.messages) a record is dropped and counted, so a slow
 * or dead cluster never holds up the collector.  A small thread polls for
 * delivery reports; a failed delivery is counted as dropped too.  close()
 * flushes for at most KAFKA_CLOSE_FLUSH_MS, then purges what is left (and
 * counts it).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <json-c/json.h>
#include <librdkafka/rdkafka.h>

#include "helper/outputs/sink.h"
#include "lib/log.h"
#include "lib/record_json.h"

#define KAFKA_CLOSE_FLUSH_MS 5000
#define KAFKA_POLL_MS 100

struct kafka {
	rd_kafka_t *producer;
	char topic[250];
	pthread_t poller;
	bool poller_started;
	atomic_bool stopping;
	atomic_uint_fast64_t dropped;
	atomic_bool queue_full_reported; /* one warning per full spell */
	atomic_bool failure_reported;    /* one warning per failing spell */
};

static void on_delivery(rd_kafka_t *producer, const rd_kafka_message_t *message, void *opaque)
{
	struct kafka *kafka = opaque;
	(void)producer;

	if (message->err) {
		atomic_fetch_add(&kafka->dropped, 1);
		if (!atomic_exchange(&kafka->failure_reported, true))
			vnfs_warning("kafka: delivery to %s failed: %s (counting the failures "
				     "as dropped until one succeeds)", kafka->topic,
				     rd_kafka_err2str(message->err));
	} else {
		if (atomic_exchange(&kafka->failure_reported, false))
			vnfs_info("kafka: delivering to %s again", kafka->topic);
		atomic_store(&kafka->queue_full_reported, false);
	}
}

/*
 * librdkafka's own log lines (syslog levels) into ours.  Its errors (a
 * broker down, a failed connection) are the cluster's trouble, not the
 * helper's: warnings.
 */
static void on_log(const rd_kafka_t *producer, int level, const char *facility, const char *line)
{
	(void)producer;
	enum vnfs_log_priority priority = level <= LOG_WARNING ? VNFS_LOG_PRIORITY_WARNING :
					  level <= LOG_INFO ? VNFS_LOG_PRIORITY_INFO :
					  VNFS_LOG_PRIORITY_DEBUG;
	vnfs_log(priority, "kafka: %s: %s", facility, line);
}

static void *poll_deliveries(void *argument)
{
	struct kafka *kafka = argument;

	while (!atomic_load(&kafka->stopping))
		rd_kafka_poll(kafka->producer, KAFKA_POLL_MS);
	return NULL;
}

/* Keyed by the workload's job ("42" for Slurm, as before), so that one
 * job's records stay in one partition, in order. */
static void produce(struct kafka *kafka, struct json_object *object, const char *type,
		    const struct vnfs_workload *workload)
{
	if (!object) {
		atomic_fetch_add(&kafka->dropped, 1);
		return;
	}
	json_object_object_add(object, "type", json_object_new_string(type));
	size_t length;
	const char *value = json_object_to_json_string_length(
		object, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &length);
	const char *key = workload->job;
	size_t key_length = strlen(key);

	rd_kafka_resp_err_t error = rd_kafka_producev(
		kafka->producer, RD_KAFKA_V_TOPIC(kafka->topic),
		RD_KAFKA_V_KEY(key, key_length),
		RD_KAFKA_V_VALUE((void *)value, length),
		RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
	json_object_put(object);
	if (error == RD_KAFKA_RESP_ERR_NO_ERROR)
		return;

	atomic_fetch_add(&kafka->dropped, 1);
	if (error != RD_KAFKA_RESP_ERR__QUEUE_FULL)
		vnfs_warning("kafka: cannot queue a record for %s: %s", kafka->topic,
			     rd_kafka_err2str(error));
	else if (!atomic_exchange(&kafka->queue_full_reported, true))
		vnfs_warning("kafka: queue full (queue_limit); dropping records until %s takes some",
			     kafka->topic);
}

static void kafka_publish(void *state, const struct vnfs_interval *interval)
{
	struct kafka *kafka = state;

	for (size_t i = 0; i < interval->step_count; i++)
		produce(kafka, vnfs_step_record_to_json(&interval->steps[i]), "step",
			&interval->steps[i].workload);
}

static void kafka_job_finished(void *state, const struct vnfs_job *job)
{
	struct kafka *kafka = state;
	produce(kafka, vnfs_job_to_json(job), "job", &job->workload);
}

static uint64_t kafka_dropped(void *state)
{
	struct kafka *kafka = state;
	return atomic_load(&kafka->dropped);
}

static void kafka_close(void *state)
{
	struct kafka *kafka = state;

	if (!kafka)
		return;
	if (kafka->poller_started) {
		atomic_store(&kafka->stopping, true);
		pthread_join(kafka->poller, NULL);
	}
	if (kafka->producer) {
		if (rd_kafka_flush(kafka->producer, KAFKA_CLOSE_FLUSH_MS) != RD_KAFKA_RESP_ERR_NO_ERROR) {
			/* Purged messages come back as failed deliveries: counted. */
			rd_kafka_purge(kafka->producer, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
			rd_kafka_poll(kafka->producer, 0);
			vnfs_warning("kafka: %s: gave up on undelivered records after %d ms (%llu dropped in all)",
				     kafka->topic, KAFKA_CLOSE_FLUSH_MS,
				     (unsigned long long)atomic_load(&kafka->dropped));
		}
		rd_kafka_destroy(kafka->producer);
	}
	free(kafka);
}

static int set_property(rd_kafka_conf_t *conf, const char *name, const char *value,
			const char *config_name, char *error, size_t error_size)
{
	char reason[512];

	if (rd_kafka_conf_set(conf, name, value, reason, sizeof(reason)) == RD_KAFKA_CONF_OK)
		return 0;
	snprintf(error, error_size, "kafka: %s = '%s': %s", config_name, value, reason);
	return -1;
}

static rd_kafka_conf_t *build_conf(struct kafka *kafka, const struct vnfs_config *config,
				   char *error, size_t error_size)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char limit[16], config_name[160];

	if (!conf) {
		snprintf(error, error_size, "kafka: out of memory");
		return NULL;
	}
	snprintf(limit, sizeof(limit), "%u", config->kafka.queue_limit);
	if (set_property(conf, "client.id", "vnfs-helper", "client.id", error, error_size) != 0 ||
	    set_property(conf, "bootstrap.servers", config->kafka.brokers, "brokers", error,
			 error_size) != 0 ||
	    (config->kafka.queue_limit &&
	     set_property(conf, "queue.buffering.max.messages", limit, "queue_limit", error,
			  error_size) != 0))
		goto fail;
	for (size_t i = 0; i < config->kafka.property_count; i++) {
		const struct vnfs_key_value *property = &config->kafka.properties[i];
		snprintf(config_name, sizeof(config_name), "property.%s", property->key);
		if (set_property(conf, property->key, property->value, config_name, error,
				 error_size) != 0)
			goto fail;
	}
	rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
	rd_kafka_conf_set_log_cb(conf, on_log);
	rd_kafka_conf_set_opaque(conf, kafka);
	return conf;
fail:
	rd_kafka_conf_destroy(conf);
	return NULL;
}

int vnfs_sink_kafka_open(struct vnfs_sink *sink, const struct vnfs_config *config,
			 char *error, size_t error_size)
{
	if (config->kafka.brokers[0] == '\0' || config->kafka.topic[0] == '\0') {
		snprintf(error, error_size, "kafka: brokers and topic must both be set");
		return -1;
	}
	struct kafka *kafka = calloc(1, sizeof(*kafka));
	if (!kafka) {
		snprintf(error, error_size, "kafka: out of memory");
		return -1;
	}
	snprintf(kafka->topic, sizeof(kafka->topic), "%s", config->kafka.topic);
	atomic_init(&kafka->stopping, false);
	atomic_init(&kafka->dropped, 0);
	atomic_init(&kafka->queue_full_reported, false);
	atomic_init(&kafka->failure_reported, false);

	rd_kafka_conf_t *conf = build_conf(kafka, config, error, error_size);
	if (!conf)
		goto fail;
	char reason[512];
	kafka->producer = rd_kafka_new(RD_KAFKA_PRODUCER, conf, reason, sizeof(reason));
	if (!kafka->producer) {
		rd_kafka_conf_destroy(conf); /* still ours when rd_kafka_new fails */
		snprintf(error, error_size, "kafka: cannot create the producer: %s", reason);
		goto fail;
	}
	int thread_error = pthread_create(&kafka->poller, NULL, poll_deliveries, kafka);
	if (thread_error) {
		snprintf(error, error_size, "kafka: cannot start the delivery thread: %s",
			 strerror(thread_error));
		goto fail;
	}
	kafka->poller_started = true;

	*sink = (struct vnfs_sink){
		.name = "kafka",
		.state = kafka,
		.publish = kafka_publish,
		.job_finished = kafka_job_finished,
		.dropped = kafka_dropped,
		.close = kafka_close,
	};
	return 0;
fail:
	kafka_close(kafka);
	return -1;
}
