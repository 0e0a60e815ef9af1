/*
 * stream-receiver — test tool: the far ends of the helper's streaming
 * outputs, so a guest suite can check what the real helper, with its Kafka
 * and HTTP modules loaded, delivers.
 *
 *   stream-receiver --kafka TOPIC --http PORT
 *
 * --kafka starts a one-broker Kafka cluster (librdkafka's mock cluster: real
 * brokers speaking the Kafka protocol on loopback TCP, in this process), with
 * TOPIC created, and consumes TOPIC from its start.  --http listens on
 * 127.0.0.1:PORT (libmicrohttpd) and answers every POST with 204.  Prints on
 * stdout, one line each, flushed:
 *
 *   kafka-brokers HOST:PORT   the bootstrap address for the helper's config
 *   ready                     both ends are listening
 *   kafka KEY VALUE           each message consumed (VALUE is one JSON line)
 *   http LINE                 each line of each POSTed body (NDJSON)
 *
 * Runs until SIGTERM or SIGINT.
 */
#include <arpa/inet.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define POST_BODY_LIMIT (4 * 1024 * 1024)

static pthread_mutex_t output_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool stopping;

/* Lines from two threads: each printed whole. */
static void print_line(const char *kind, const char *text, size_t length)
{
	pthread_mutex_lock(&output_lock);
	printf("%s %.*s\n", kind, (int)length, text);
	fflush(stdout);
	pthread_mutex_unlock(&output_lock);
}

/* ------------------------------------------------------------ Kafka */

struct kafka_end {
	rd_kafka_t *cluster_handle; /* the mock cluster lives in a client handle */
	rd_kafka_mock_cluster_t *cluster;
	rd_kafka_t *consumer;
	char topic[256];
	pthread_t thread;
	bool thread_started;
};

static int kafka_start_cluster(struct kafka_end *kafka)
{
	char error[256];
	rd_kafka_conf_t *conf = rd_kafka_conf_new();

	kafka->cluster_handle = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof(error));
	if (!kafka->cluster_handle) {
		rd_kafka_conf_destroy(conf);
		fprintf(stderr, "stream-receiver: kafka: %s\n", error);
		return -1;
	}
	kafka->cluster = rd_kafka_mock_cluster_new(kafka->cluster_handle, 1);
	if (!kafka->cluster ||
	    rd_kafka_mock_topic_create(kafka->cluster, kafka->topic, 1, 1) != RD_KAFKA_RESP_ERR_NO_ERROR) {
		fprintf(stderr, "stream-receiver: kafka: cannot start the mock cluster\n");
		return -1;
	}
	return 0;
}

static int kafka_start_consumer(struct kafka_end *kafka)
{
	char error[256];
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	rd_kafka_topic_partition_list_t *partitions;
	int status = 0;

	if (rd_kafka_conf_set(conf, "bootstrap.servers", rd_kafka_mock_cluster_bootstraps(kafka->cluster),
			      error, sizeof(error)) != RD_KAFKA_CONF_OK ||
	    rd_kafka_conf_set(conf, "group.id", "stream-receiver", error, sizeof(error)) !=
		    RD_KAFKA_CONF_OK) {
		rd_kafka_conf_destroy(conf);
		fprintf(stderr, "stream-receiver: kafka: %s\n", error);
		return -1;
	}
	kafka->consumer = rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof(error));
	if (!kafka->consumer) {
		rd_kafka_conf_destroy(conf);
		fprintf(stderr, "stream-receiver: kafka: %s\n", error);
		return -1;
	}
	rd_kafka_poll_set_consumer(kafka->consumer);
	partitions = rd_kafka_topic_partition_list_new(1);
	rd_kafka_topic_partition_list_add(partitions, kafka->topic, 0)->offset =
		RD_KAFKA_OFFSET_BEGINNING;
	if (rd_kafka_assign(kafka->consumer, partitions) != RD_KAFKA_RESP_ERR_NO_ERROR) {
		fprintf(stderr, "stream-receiver: kafka: cannot assign %s\n", kafka->topic);
		status = -1;
	}
	rd_kafka_topic_partition_list_destroy(partitions);
	return status;
}

static void *kafka_consume(void *argument)
{
	struct kafka_end *kafka = argument;

	while (!atomic_load(&stopping)) {
		rd_kafka_message_t *message = rd_kafka_consumer_poll(kafka->consumer, 200);
		char line[64 * 1024];
		int length;

		if (!message)
			continue;
		if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
			length = snprintf(line, sizeof(line), "%.*s %.*s", (int)message->key_len,
					  (const char *)message->key, (int)message->len,
					  (const char *)message->payload);
			if (length > 0)
				print_line("kafka", line, strnlen(line, sizeof(line)));
		}
		rd_kafka_message_destroy(message);
	}
	return NULL;
}

static void kafka_stop(struct kafka_end *kafka)
{
	if (kafka->thread_started)
		pthread_join(kafka->thread, NULL);
	if (kafka->consumer) {
		rd_kafka_consumer_close(kafka->consumer);
		rd_kafka_destroy(kafka->consumer);
	}
	if (kafka->cluster)
		rd_kafka_mock_cluster_destroy(kafka->cluster);
	if (kafka->cluster_handle)
		rd_kafka_destroy(kafka->cluster_handle);
}

/* ------------------------------------------------------------- HTTP */

struct post_body {
	char *data;
	size_t length;
	bool too_large;
};

/* Each line of a complete body, printed once the body is all in. */
static void print_body_lines(const struct post_body *body)
{
	const char *line = body->data, *end = body->data + body->length;

	while (line < end) {
		const char *newline = memchr(line, '\n', (size_t)(end - line));
		size_t length = newline ? (size_t)(newline - line) : (size_t)(end - line);

		if (length > 0)
			print_line("http", line, length);
		line += length + 1;
	}
}

static enum MHD_Result respond(struct MHD_Connection *connection, unsigned int status)
{
	struct MHD_Response *response =
		MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result result;

	if (!response)
		return MHD_NO;
	result = MHD_queue_response(connection, status, response);
	MHD_destroy_response(response);
	return result;
}

static enum MHD_Result on_request(void *closure, struct MHD_Connection *connection,
				  const char *url, const char *method, const char *version,
				  const char *upload, size_t *upload_size, void **request_state)
{
	struct post_body *body = *request_state;
	char *grown;

	(void)closure, (void)url, (void)version;
	if (strcmp(method, "POST") != 0)
		return respond(connection, MHD_HTTP_METHOD_NOT_ALLOWED);
	if (!body) { /* the headers: the body follows in the next calls */
		*request_state = body = calloc(1, sizeof(*body));
		return body ? MHD_YES : MHD_NO;
	}
	if (*upload_size > 0) {
		if (body->length + *upload_size > POST_BODY_LIMIT) {
			body->too_large = true;
		} else if ((grown = realloc(body->data, body->length + *upload_size))) {
			memcpy(grown + body->length, upload, *upload_size);
			body->data = grown;
			body->length += *upload_size;
		} else {
			body->too_large = true;
		}
		*upload_size = 0;
		return MHD_YES;
	}
	if (body->too_large)
		return respond(connection, MHD_HTTP_CONTENT_TOO_LARGE);
	print_body_lines(body);
	return respond(connection, MHD_HTTP_NO_CONTENT);
}

static void on_request_done(void *closure, struct MHD_Connection *connection,
			    void **request_state, enum MHD_RequestTerminationCode code)
{
	struct post_body *body = *request_state;

	(void)closure, (void)connection, (void)code;
	if (body)
		free(body->data);
	free(body);
	*request_state = NULL;
}

static struct MHD_Daemon *http_start(unsigned port)
{
	struct sockaddr_in address = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				       .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct MHD_Daemon *daemon = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, (uint16_t)port, NULL, NULL,
		on_request, NULL, MHD_OPTION_SOCK_ADDR, &address, MHD_OPTION_NOTIFY_COMPLETED,
		on_request_done, NULL, MHD_OPTION_END);

	if (!daemon)
		fprintf(stderr, "stream-receiver: cannot listen on 127.0.0.1:%u\n", port);
	return daemon;
}

/* ------------------------------------------------------------- main */

static int usage(void)
{
	fprintf(stderr, "usage: stream-receiver --kafka TOPIC --http PORT\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct kafka_end kafka = { .thread_started = false };
	struct MHD_Daemon *http = NULL;
	sigset_t signals;
	int signal_number;
	char *end;
	unsigned long port;
	int status = 1;

	if (argc != 5 || strcmp(argv[1], "--kafka") != 0 || strcmp(argv[3], "--http") != 0)
		return usage();
	port = strtoul(argv[4], &end, 10);
	if (*argv[2] == '\0' || strlen(argv[2]) >= sizeof(kafka.topic) || *end != '\0' || port == 0 ||
	    port > 65535)
		return usage();
	snprintf(kafka.topic, sizeof(kafka.topic), "%s", argv[2]);
	/* Blocked before any thread starts, so that only sigwait() sees them. */
	sigemptyset(&signals);
	sigaddset(&signals, SIGTERM);
	sigaddset(&signals, SIGINT);
	if (sigprocmask(SIG_BLOCK, &signals, NULL) != 0) {
		perror("stream-receiver: sigprocmask");
		return 1;
	}
	if (kafka_start_cluster(&kafka) != 0 || kafka_start_consumer(&kafka) != 0)
		goto out;
	if (pthread_create(&kafka.thread, NULL, kafka_consume, &kafka) != 0) {
		fprintf(stderr, "stream-receiver: cannot start the consumer thread\n");
		goto out;
	}
	kafka.thread_started = true;
	http = http_start((unsigned)port);
	if (!http)
		goto out;
	printf("kafka-brokers %s\nready\n", rd_kafka_mock_cluster_bootstraps(kafka.cluster));
	fflush(stdout);
	if (sigwait(&signals, &signal_number) == 0)
		status = 0;
out:
	atomic_store(&stopping, true);
	if (http)
		MHD_stop_daemon(http);
	kafka_stop(&kafka);
	return status;
}
