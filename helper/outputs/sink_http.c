/*
 * sink_http.c — records POSTed to an HTTP collector as NDJSON (libcurl).
 *
 * publish() turns each step record (and job_finished() each job) into one
 * JSON line (lib/record_json.c plus "type": "step" or "job") and appends it
 * to a bounded queue of buffer_records lines; a full queue drops the new
 * line and counts it.  A sender thread takes up to batch_records lines at a
 * time and POSTs them as one body (Content-Type: application/x-ndjson, plus
 * the configured headers), each request bounded by timeout_ms.  A failed
 * request (no connection, timeout, 5xx, 408, 429) is retried up to
 * retry_max times, waiting retry_backoff_ms, then twice that, and so on; any
 * other answer outside 2xx, or running out of retries, drops the batch and
 * counts its lines.  close() keeps sending for at most HTTP_CLOSE_BOUND_MS
 * (a request in flight then is aborted) and counts what is left as dropped.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <json-c/json.h>

#include "helper/outputs/sink.h"
#include "lib/log.h"
#include "lib/record_json.h"

#define HTTP_CLOSE_BOUND_MS 5000
#define HTTP_MAX_BACKOFF_MS 60000

struct http {
	char url[512];
	uint32_t timeout_ms;
	uint32_t batch_records;
	uint32_t retry_max;
	uint32_t retry_backoff_ms;
	CURL *curl;
	struct curl_slist *headers;

	pthread_mutex_t lock; /* guards the queue and closing */
	pthread_cond_t wake;
	char **queue;         /* ring of capacity lines */
	char **batch;         /* the sender's lines in flight (batch_records) */
	size_t capacity;
	size_t head;
	size_t count;
	bool closing;
	struct timespec close_deadline;

	pthread_t sender;
	bool sender_started;
	bool failing; /* sender thread only: a failure was logged */
	atomic_uint_fast64_t dropped;
	atomic_uint_fast64_t overflowed; /* part of dropped: the queue was full */
};

static struct timespec deadline_after(uint64_t milliseconds)
{
	struct timespec when;
	clock_gettime(CLOCK_MONOTONIC, &when);
	when.tv_sec += (time_t)(milliseconds / 1000);
	when.tv_nsec += (long)(milliseconds % 1000) * 1000000L;
	if (when.tv_nsec >= 1000000000L) {
		when.tv_sec++;
		when.tv_nsec -= 1000000000L;
	}
	return when;
}

/* Milliseconds until when (0 if past). */
static uint64_t remaining_ms(const struct timespec *when)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	int64_t ms = (int64_t)(when->tv_sec - now.tv_sec) * 1000 +
		     (when->tv_nsec - now.tv_nsec) / 1000000L;
	return ms > 0 ? (uint64_t)ms : 0;
}

/* ---- the collector's side --------------------------------------------- */

static char *to_line(struct json_object *object, const char *type)
{
	if (!object)
		return NULL;
	json_object_object_add(object, "type", json_object_new_string(type));
	char *line = strdup(json_object_to_json_string_ext(
		object, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(object);
	return line;
}

/* Queues lines (taking ownership); what does not fit is dropped. */
static void enqueue(struct http *http, char **lines, size_t count)
{
	uint64_t overflow = 0, failed = 0;

	pthread_mutex_lock(&http->lock);
	for (size_t i = 0; i < count; i++) {
		if (!lines[i]) {
			failed++;
		} else if (http->count == http->capacity || http->closing) {
			free(lines[i]);
			overflow++;
		} else {
			http->queue[(http->head + http->count) % http->capacity] = lines[i];
			http->count++;
		}
	}
	pthread_cond_signal(&http->wake);
	pthread_mutex_unlock(&http->lock);

	if (overflow && atomic_fetch_add(&http->overflowed, overflow) == 0)
		vnfs_warning("http: buffer of %zu records full; dropping records (counted)",
			     http->capacity);
	atomic_fetch_add(&http->dropped, overflow + failed);
}

static void http_publish(void *state, const struct vnfs_interval *interval)
{
	struct http *http = state;
	char **lines = calloc(interval->step_count ? interval->step_count : 1, sizeof(*lines));

	if (!lines) {
		atomic_fetch_add(&http->dropped, interval->step_count);
		return;
	}
	/* Serialized before taking the lock: the sender never waits on JSON. */
	for (size_t i = 0; i < interval->step_count; i++)
		lines[i] = to_line(vnfs_step_record_to_json(&interval->steps[i]), "step");
	enqueue(http, lines, interval->step_count);
	free(lines);
}

static void http_job_finished(void *state, const struct vnfs_job *job)
{
	struct http *http = state;
	char *line = to_line(vnfs_job_to_json(job), "job");
	enqueue(http, &line, 1);
}

static uint64_t http_dropped(void *state)
{
	struct http *http = state;
	return atomic_load(&http->dropped);
}

/* ---- the sender thread ---------------------------------------------------- */

enum outcome { SENT, RETRY, GIVE_UP };

static enum outcome post(struct http *http, const char *body, size_t length, uint64_t timeout_ms)
{
	char message[CURL_ERROR_SIZE + 64] = "";
	char curl_error[CURL_ERROR_SIZE] = "";
	long status = 0;

	curl_easy_setopt(http->curl, CURLOPT_ERRORBUFFER, curl_error);
	curl_easy_setopt(http->curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(http->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)length);
	curl_easy_setopt(http->curl, CURLOPT_TIMEOUT_MS, (long)(timeout_ms ? timeout_ms : 1));
	CURLcode result = curl_easy_perform(http->curl);
	curl_easy_setopt(http->curl, CURLOPT_ERRORBUFFER, NULL);

	enum outcome outcome;
	if (result != CURLE_OK) {
		snprintf(message, sizeof(message), "%s", curl_error[0] ? curl_error :
			 curl_easy_strerror(result));
		outcome = RETRY;
	} else {
		curl_easy_getinfo(http->curl, CURLINFO_RESPONSE_CODE, &status);
		if (status >= 200 && status < 300)
			outcome = SENT;
		else if (status >= 500 || status == 408 || status == 429)
			outcome = RETRY;
		else
			outcome = GIVE_UP;
		snprintf(message, sizeof(message), "HTTP status %ld", status);
	}
	if (outcome != SENT && !http->failing) {
		vnfs_warning("http: POST %s failed: %s (retrying, then dropping; logged once until "
			     "it works again)", http->url, message);
		http->failing = true;
	} else if (outcome == SENT && http->failing) {
		vnfs_info("http: POST %s works again", http->url);
		http->failing = false;
	}
	return outcome;
}

/* Waits ms or until close() says time is up; returns false if closing ran out. */
static bool backoff(struct http *http, uint64_t ms)
{
	bool out_of_time = false;

	pthread_mutex_lock(&http->lock);
	if (http->closing && remaining_ms(&http->close_deadline) < ms)
		ms = remaining_ms(&http->close_deadline);
	struct timespec until = deadline_after(ms);
	while (remaining_ms(&until) > 0) {
		if (pthread_cond_timedwait(&http->wake, &http->lock, &until) == ETIMEDOUT)
			break;
		if (http->closing && remaining_ms(&http->close_deadline) < remaining_ms(&until))
			until = http->close_deadline;
	}
	out_of_time = http->closing && remaining_ms(&http->close_deadline) == 0;
	pthread_mutex_unlock(&http->lock);
	return !out_of_time;
}

static bool closing_deadline(struct http *http, uint64_t *left_ms)
{
	pthread_mutex_lock(&http->lock);
	bool closing = http->closing;
	*left_ms = closing ? remaining_ms(&http->close_deadline) : UINT64_MAX;
	pthread_mutex_unlock(&http->lock);
	return closing;
}

/* libcurl's progress callback: ends a request in flight once close() is out of time. */
static int abort_when_closed(void *clientp, curl_off_t download_total, curl_off_t downloaded,
			     curl_off_t upload_total, curl_off_t uploaded)
{
	struct http *http = clientp;
	uint64_t left_ms;
	(void)download_total;
	(void)downloaded;
	(void)upload_total;
	(void)uploaded;

	return closing_deadline(http, &left_ms) && left_ms == 0;
}

/* One batch: sent, or dropped after the retries. */
static bool deliver(struct http *http, const char *body, size_t length)
{
	uint64_t wait_ms = http->retry_backoff_ms;

	for (uint32_t attempt = 0;; attempt++) {
		uint64_t left_ms, timeout = http->timeout_ms;
		if (closing_deadline(http, &left_ms)) {
			if (left_ms == 0)
				return false;
			if (left_ms < timeout)
				timeout = left_ms;
		}
		enum outcome outcome = post(http, body, length, timeout);
		if (outcome == SENT)
			return true;
		if (outcome == GIVE_UP || attempt >= http->retry_max)
			return false;
		if (!backoff(http, wait_ms))
			return false;
		wait_ms = wait_ms * 2 > HTTP_MAX_BACKOFF_MS ? HTTP_MAX_BACKOFF_MS : wait_ms * 2;
	}
}

static void *send_batches(void *argument)
{
	struct http *http = argument;
	char **batch = http->batch;

	pthread_mutex_lock(&http->lock);
	for (;;) {
		while (http->count == 0 && !http->closing)
			pthread_cond_wait(&http->wake, &http->lock);
		if (http->count == 0 || (http->closing && remaining_ms(&http->close_deadline) == 0))
			break;

		size_t taken = 0, length = 0;
		while (taken < http->batch_records && http->count > 0) {
			batch[taken] = http->queue[http->head];
			length += strlen(batch[taken]) + 1;
			http->head = (http->head + 1) % http->capacity;
			http->count--;
			taken++;
		}
		pthread_mutex_unlock(&http->lock);

		char *body = malloc(length + 1);
		bool sent = false;
		if (body) {
			size_t offset = 0;
			for (size_t i = 0; i < taken; i++) {
				size_t line_length = strlen(batch[i]);
				memcpy(body + offset, batch[i], line_length);
				body[offset + line_length] = '\n';
				offset += line_length + 1;
			}
			body[offset] = '\0';
			sent = deliver(http, body, length);
			free(body);
		}
		for (size_t i = 0; i < taken; i++)
			free(batch[i]);
		if (!sent)
			atomic_fetch_add(&http->dropped, taken);
		pthread_mutex_lock(&http->lock);
	}
	/* Out of time with lines left: they are dropped. */
	uint64_t left = http->count;
	while (http->count > 0) {
		free(http->queue[http->head]);
		http->head = (http->head + 1) % http->capacity;
		http->count--;
	}
	pthread_mutex_unlock(&http->lock);
	if (left) {
		atomic_fetch_add(&http->dropped, left);
		vnfs_warning("http: %llu records not sent before close", (unsigned long long)left);
	}
	return NULL;
}

/* ---- life cycle ------------------------------------------------------------- */

static void http_close(void *state)
{
	struct http *http = state;

	if (!http)
		return;
	if (http->sender_started) {
		pthread_mutex_lock(&http->lock);
		http->closing = true;
		http->close_deadline = deadline_after(HTTP_CLOSE_BOUND_MS);
		pthread_cond_broadcast(&http->wake);
		pthread_mutex_unlock(&http->lock);
		pthread_join(http->sender, NULL);
	}
	for (size_t i = 0; i < http->count; i++)
		free(http->queue[(http->head + i) % http->capacity]);
	free(http->queue);
	free(http->batch);
	if (http->curl)
		curl_easy_cleanup(http->curl);
	curl_slist_free_all(http->headers);
	pthread_cond_destroy(&http->wake);
	pthread_mutex_destroy(&http->lock);
	free(http);
	curl_global_cleanup();
}

static int add_header(struct http *http, const char *header, char *error, size_t error_size)
{
	const char *colon = strchr(header, ':');

	if (!colon || colon == header || strpbrk(header, "\r\n")) {
		snprintf(error, error_size, "http: header '%s' is not 'Name: value'", header);
		return -1;
	}
	struct curl_slist *list = curl_slist_append(http->headers, header);
	if (!list) {
		snprintf(error, error_size, "http: out of memory");
		return -1;
	}
	http->headers = list;
	return 0;
}

static int setup_curl(struct http *http, const struct vnfs_config *config, char *error,
		      size_t error_size)
{
	CURLU *parsed = curl_url();
	if (!parsed) {
		snprintf(error, error_size, "http: out of memory");
		return -1;
	}
	CURLUcode url_result = curl_url_set(parsed, CURLUPART_URL, config->http.url, 0);
	char *scheme = NULL;
	if (url_result == CURLUE_OK)
		url_result = curl_url_get(parsed, CURLUPART_SCHEME, &scheme, 0);
	bool web = scheme && (strcmp(scheme, "http") == 0 || strcmp(scheme, "https") == 0);
	curl_free(scheme);
	curl_url_cleanup(parsed);
	if (url_result != CURLUE_OK || !web) {
		snprintf(error, error_size, "http: url '%s' is not an http:// or https:// URL",
			 config->http.url);
		return -1;
	}

	if (add_header(http, "Content-Type: application/x-ndjson", error, error_size) != 0)
		return -1;
	for (size_t i = 0; i < config->http.header_count; i++)
		if (add_header(http, config->http.headers[i], error, error_size) != 0)
			return -1;

	http->curl = curl_easy_init();
	if (!http->curl) {
		snprintf(error, error_size, "http: cannot initialise libcurl");
		return -1;
	}
	if (curl_easy_setopt(http->curl, CURLOPT_URL, config->http.url) != CURLE_OK ||
	    curl_easy_setopt(http->curl, CURLOPT_HTTPHEADER, http->headers) != CURLE_OK ||
	    curl_easy_setopt(http->curl, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
	    curl_easy_setopt(http->curl, CURLOPT_USERAGENT, "vnfs-helper/" PACKAGE_VERSION) != CURLE_OK ||
	    curl_easy_setopt(http->curl, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
	    curl_easy_setopt(http->curl, CURLOPT_XFERINFOFUNCTION, abort_when_closed) != CURLE_OK ||
	    curl_easy_setopt(http->curl, CURLOPT_XFERINFODATA, http) != CURLE_OK ||
	    curl_easy_setopt(http->curl, CURLOPT_NOPROGRESS, 0L) != CURLE_OK) {
		snprintf(error, error_size, "http: cannot configure libcurl");
		return -1;
	}
	return 0;
}

int vnfs_sink_http_open(struct vnfs_sink *sink, const struct vnfs_config *config,
			char *error, size_t error_size)
{
	if (config->http.buffer_records == 0 || config->http.batch_records == 0) {
		snprintf(error, error_size, "http: buffer_records and batch_records must be at least 1");
		return -1;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(error, error_size, "http: cannot initialise libcurl");
		return -1;
	}
	struct http *http = calloc(1, sizeof(*http));
	if (!http) {
		curl_global_cleanup();
		snprintf(error, error_size, "http: out of memory");
		return -1;
	}
	snprintf(http->url, sizeof(http->url), "%s", config->http.url);
	http->timeout_ms = config->http.timeout_ms;
	http->batch_records = config->http.batch_records;
	http->retry_max = config->http.retry_max;
	http->retry_backoff_ms = config->http.retry_backoff_ms;
	http->capacity = config->http.buffer_records;
	atomic_init(&http->dropped, 0);
	atomic_init(&http->overflowed, 0);

	pthread_condattr_t attributes;
	pthread_condattr_init(&attributes);
	pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
	pthread_cond_init(&http->wake, &attributes);
	pthread_condattr_destroy(&attributes);
	pthread_mutex_init(&http->lock, NULL);

	http->queue = calloc(http->capacity, sizeof(*http->queue));
	http->batch = calloc(http->batch_records, sizeof(*http->batch));
	if (!http->queue || !http->batch) {
		snprintf(error, error_size, "http: out of memory for %zu records", http->capacity);
		goto fail;
	}
	if (setup_curl(http, config, error, error_size) != 0)
		goto fail;
	int thread_error = pthread_create(&http->sender, NULL, send_batches, http);
	if (thread_error) {
		snprintf(error, error_size, "http: cannot start the sender thread: %s",
			 strerror(thread_error));
		goto fail;
	}
	http->sender_started = true;

	*sink = (struct vnfs_sink){
		.name = "http",
		.state = http,
		.publish = http_publish,
		.job_finished = http_job_finished,
		.dropped = http_dropped,
		.close = http_close,
	};
	return 0;
fail:
	http_close(http);
	return -1;
}
