/*
 * test_server.c — helper/control/server.c and lib/client.c together, over real Unix
 * sockets in a temporary directory, with the server's real thread: the ok
 * path, authorization by SO_PEERCRED (a forked child drops to uid 65534),
 * bad and oversized input, idle and slow clients, too many clients, stale
 * sockets, and the client's own errors and timeouts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <json-c/json.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "workload_fixtures.h"
#include "helper/control/server.h"
#include "lib/client.h"

#define NOBODY 65534
#define BIG_REPLY_BYTES (4u * 1024 * 1024)
/* How long a test waits for what must come (a reply, a close): a bound on
 * a hang, never on speed, so that a loaded machine (valgrind beside two
 * benchmark guests ran a status call past 1 s) changes a test's time, not
 * its verdict. */
#define HANG_BOUND_MS 30000

struct fixture {
	char directory[64];
	char socket_path[128];
	struct vnfs_server *server;
	pthread_mutex_t lock;
	unsigned calls;
	struct vnfs_peer last_peer;
	enum vnfs_request_type last_type;
	/* While holding, FINISH of job HELD_FINISH_JOB and QUERY of job
	 * HELD_QUERY_JOB wait in the handler: a report_dir on a stalled server,
	 * a query stuck behind the collector. */
	bool holding;
	unsigned held;             /* handlers waiting now */
	pthread_cond_t changed;
	bool big_status;           /* the next STATUS answers BIG_REPLY_BYTES more */
};

#define HELD_FINISH_JOB 500
#define HELD_QUERY_JOB 501

/* ---- the handler: a small fake registry of jobs --------------------- */

/* A job of no steps owned by uid, and the owner named to the server. */
static void owned_job(struct vnfs_answer *answer, uint32_t job_id, uint32_t uid)
{
	answer->reply.job.job_id = job_id;
	vnfs_workload_of_slurm_job(&answer->reply.job.workload, job_id);
	answer->reply.job.uid = uid;
	answer->owner_known = true;
	answer->owner_uid = uid;
}

/* The Slurm job a request names (the fixtures' requests all name one). */
static uint32_t request_job(const struct vnfs_request *request)
{
	uint32_t job_id = 0;

	(void)vnfs_workload_slurm_job_id(&request->workload, &job_id);
	return job_id;
}

static void answer_query(const struct vnfs_request *request, struct vnfs_answer *answer)
{
	switch (request_job(request)) {
	case 42:
	case 43:
		owned_job(answer, request_job(request), request_job(request) == 42 ? 1001 : NOBODY);
		break;
	case 44: /* a buggy handler that forgot the owner */
		answer->reply.job.job_id = 44;
		vnfs_workload_of_slurm_job(&answer->reply.job.workload, 44);
		break;
	default:
		vnfs_reply_fail(&answer->reply, "job %u is not known", request_job(request));
	}
}

/* One step, of job 1, the peer's. */
static int answer_list(const struct vnfs_peer *peer, struct vnfs_reply *reply)
{
	reply->entries = calloc(1, sizeof(*reply->entries));
	if (reply->entries == NULL)
		return -1;
	reply->entries[0] = (struct vnfs_list_entry){ .uid = peer->uid, .user = "peer",
						      .running = true };
	vnfs_workload_of_slurm_step(&reply->entries[0].workload, 1, 0);
	reply->entry_count = 1;
	return 0;
}

/* {"state":"running"}, and once after a test asked for it a BIG_REPLY_BYTES
 * "blob" too: a reply too big for the socket buffers, cheap to make. */
static int answer_status(bool big, struct vnfs_reply *reply)
{
	char *blob;

	reply->status = json_tokener_parse("{\"state\":\"running\"}");
	if (reply->status == NULL)
		return -1;
	if (!big)
		return 0;
	blob = malloc(BIG_REPLY_BYTES + 1);
	if (blob == NULL)
		return -1;
	memset(blob, 'x', BIG_REPLY_BYTES);
	blob[BIG_REPLY_BYTES] = '\0';
	json_object_object_add(reply->status, "blob", json_object_new_string(blob));
	free(blob);
	return 0;
}

static int handler(void *context, const struct vnfs_request *request,
		   const struct vnfs_peer *peer, struct vnfs_answer *answer)
{
	struct fixture *fixture = context;
	bool big_status;

	pthread_mutex_lock(&fixture->lock);
	fixture->calls++;
	fixture->last_peer = *peer;
	fixture->last_type = request->type;
	big_status = request->type == VNFS_REQUEST_STATUS && fixture->big_status;
	if (big_status)
		fixture->big_status = false;
	if ((request->type == VNFS_REQUEST_FINISH && request_job(request) == HELD_FINISH_JOB) ||
	    (request->type == VNFS_REQUEST_QUERY && request_job(request) == HELD_QUERY_JOB)) {
		fixture->held++;
		pthread_cond_broadcast(&fixture->changed);
		while (fixture->holding)
			pthread_cond_wait(&fixture->changed, &fixture->lock);
		fixture->held--;
		pthread_mutex_unlock(&fixture->lock);
		owned_job(answer, request_job(request), 0);
		return 0;
	}
	pthread_mutex_unlock(&fixture->lock);

	switch (request->type) {
	case VNFS_REQUEST_REGISTER:
		answer->reply.slot = request_job(request);
		return 0;
	case VNFS_REQUEST_UNREGISTER:
		return 0;
	case VNFS_REQUEST_FINISH:
		return -1; /* the server must cope with a handler that fails */
	case VNFS_REQUEST_QUERY:
		answer_query(request, answer);
		return 0;
	case VNFS_REQUEST_LIST:
		return answer_list(peer, &answer->reply);
	case VNFS_REQUEST_STATUS:
		return answer_status(big_status, &answer->reply);
	default:
		return -1;
	}
}

/* ---- fixtures ------------------------------------------------------- */

static int start_server(struct fixture *fixture, size_t max_message, int timeout_ms,
			unsigned max_clients, unsigned max_clients_per_user)
{
	struct vnfs_server_options options = {
		.socket_path = fixture->socket_path,
		.socket_mode = 0666,
		.max_message_bytes = max_message,
		.client_timeout_ms = timeout_ms,
		.max_clients = max_clients,
		.max_clients_per_user = max_clients_per_user,
	};
	char error[256];
	mode_t saved_umask = umask(077); /* the modes must not depend on it */
	int result = vnfs_server_start(&fixture->server, &options, handler, fixture, error,
				       sizeof(error));

	umask(saved_umask);
	if (result < 0) {
		print_error("vnfs_server_start: %s\n", error);
		return -1;
	}
	return 0;
}

static struct fixture *new_fixture(void)
{
	struct fixture *fixture = calloc(1, sizeof(*fixture));

	if (fixture == NULL)
		return NULL;
	strcpy(fixture->directory, "/tmp/vnfs-test-server.XXXXXX");
	if (mkdtemp(fixture->directory) == NULL || chmod(fixture->directory, 0755) < 0) {
		free(fixture);
		return NULL;
	}
	/* Two levels the server has to create. */
	snprintf(fixture->socket_path, sizeof(fixture->socket_path), "%s/run/vnfs/helper.sock",
		 fixture->directory);
	pthread_mutex_init(&fixture->lock, NULL);
	pthread_cond_init(&fixture->changed, NULL);
	return fixture;
}

static int setup_with(void **state, size_t max_message, int timeout_ms, unsigned max_clients)
{
	struct fixture *fixture = new_fixture();

	if (fixture == NULL || start_server(fixture, max_message, timeout_ms, max_clients, 0) < 0)
		return -1;
	*state = fixture;
	return 0;
}

/* The server's deadline for a client to deliver its request or take its
 * reply is HANG_BOUND_MS in every test but those that wait for it to pass:
 * a client held up by a loaded machine is then never cut off early. */
static int setup(void **state)
{
	return setup_with(state, 0, HANG_BOUND_MS, 0);
}

/* Requests of at most 1 KiB, four clients. */
static int setup_small(void **state)
{
	return setup_with(state, 1024, HANG_BOUND_MS, 4);
}

/* A deadline of 300 ms, to see an idle client closed. */
static int setup_short_deadline(void **state)
{
	return setup_with(state, 1024, 300, 4);
}

/* The deadline to take a reply: 1500 ms, to see a slow reader cut off;
 * 30 s, to see others served while one is not (no loaded machine answers
 * a status that late). */
static int setup_slow_reader(void **state)
{
	return setup_with(state, 0, 1500, 8);
}

static int setup_patient_slow_reader(void **state)
{
	return setup_with(state, 0, HANG_BOUND_MS, 8);
}

/* 16 connections, 4 of them kept for root, 8 per user. */
static int setup_shares(void **state)
{
	struct fixture *fixture = new_fixture();

	if (fixture == NULL || start_server(fixture, 0, 5000, 16, 8) < 0)
		return -1;
	*state = fixture;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fixture = *state;
	char path[192];

	vnfs_server_stop(fixture->server);
	snprintf(path, sizeof(path), "%s/run/vnfs", fixture->directory);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/run", fixture->directory);
	rmdir(path);
	rmdir(fixture->directory);
	pthread_mutex_destroy(&fixture->lock);
	pthread_cond_destroy(&fixture->changed);
	free(fixture);
	return 0;
}

/* ---- raw socket helpers --------------------------------------------- */

static int64_t now_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static int raw_connect(const char *path)
{
	struct sockaddr_un address = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(address.sun_path, sizeof(address.sun_path), "%s", path);
	assert_int_equal(connect(fd, (struct sockaddr *)&address, sizeof(address)), 0);
	return fd;
}

static void raw_send(int fd, const char *text, size_t length)
{
	assert_int_equal(send(fd, text, length, MSG_NOSIGNAL), (ssize_t)length);
}

static void raw_send_text(int fd, const char *text)
{
	raw_send(fd, text, strlen(text));
}

/*
 * Reads one line (without '\n') within timeout_ms.  Returns its length, -1
 * on end of file before any byte, -2 on timeout.
 */
static ssize_t raw_read_line(int fd, char *line, size_t size, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;
	size_t used = 0;

	while (used + 1 < size) {
		struct pollfd poll_fd = { .fd = fd, .events = POLLIN };
		int left = (int)(deadline - now_ms());
		ssize_t received;

		if (left <= 0 || poll(&poll_fd, 1, left) == 0)
			return -2;
		received = recv(fd, line + used, 1, 0);
		if (received <= 0)
			return used == 0 ? -1 : (ssize_t)used;
		if (line[used] == '\n') {
			line[used] = '\0';
			return (ssize_t)used;
		}
		used++;
	}
	line[used] = '\0';
	return (ssize_t)used;
}

/* Asserts the server closed fd: EOF (or a reset) within timeout_ms. */
static void assert_closed(int fd, int timeout_ms)
{
	char byte;
	struct pollfd poll_fd = { .fd = fd, .events = POLLIN };

	assert_int_equal(poll(&poll_fd, 1, timeout_ms), 1);
	assert_true(recv(fd, &byte, 1, 0) <= 0);
}

static struct vnfs_request simple_request(enum vnfs_request_type type, uint32_t job)
{
	struct vnfs_request request;

	memset(&request, 0, sizeof(request));
	request.type = type;
	/* A step for the requests that name one, the job for the others. */
	if (type == VNFS_REQUEST_REGISTER || type == VNFS_REQUEST_UNREGISTER)
		vnfs_workload_of_slurm_step(&request.workload, job, 0);
	else
		vnfs_workload_of_slurm_job(&request.workload, job);
	vnfs_tags_init(&request.tags);
	return request;
}

/* ---- tests ---------------------------------------------------------- */

static void test_socket_created_with_mode(void **state)
{
	struct fixture *fixture = *state;
	struct stat status;
	char path[192];

	assert_int_equal(lstat(fixture->socket_path, &status), 0);
	assert_true(S_ISSOCK(status.st_mode));
	assert_int_equal(status.st_mode & 07777, 0666);
	snprintf(path, sizeof(path), "%s/run/vnfs", fixture->directory);
	assert_int_equal(stat(path, &status), 0);
	assert_int_equal(status.st_mode & 07777, 0755);
	snprintf(path, sizeof(path), "%s/run", fixture->directory);
	assert_int_equal(stat(path, &status), 0);
	assert_int_equal(status.st_mode & 07777, 0755);
}

static void test_ok_path(void **state)
{
	struct fixture *fixture = *state;
	struct vnfs_request request = simple_request(VNFS_REQUEST_STATUS, 0);
	struct vnfs_reply reply;
	char error[256] = "";

	assert_int_equal(vnfs_client_call(fixture->socket_path, &request, HANG_BOUND_MS, &reply,
					  error, sizeof(error)),
			 0);
	assert_string_equal(error, "");
	assert_true(reply.ok);
	assert_int_equal(reply.type, VNFS_REQUEST_STATUS);
	assert_string_equal(json_object_to_json_string_ext(reply.status, JSON_C_TO_STRING_PLAIN),
			    "{\"state\":\"running\"}");
	vnfs_reply_free(&reply);

	pthread_mutex_lock(&fixture->lock);
	assert_int_equal(fixture->calls, 1);
	assert_int_equal(fixture->last_type, VNFS_REQUEST_STATUS);
	assert_int_equal(fixture->last_peer.pid, getpid());
	assert_int_equal(fixture->last_peer.uid, getuid());
	assert_int_equal(fixture->last_peer.gid, getgid());
	pthread_mutex_unlock(&fixture->lock);
}

static void test_root_registers_and_queries(void **state)
{
	struct fixture *fixture = *state;
	struct vnfs_request request = simple_request(VNFS_REQUEST_REGISTER, 42);
	struct vnfs_reply reply;
	char error[256];

	assert_int_equal(getuid(), 0); /* the suite runs as root */
	vnfs_workload_of_slurm_step(&request.workload, request_job(&request), 0);
	request.uid = 1001;
	request.cgroup_id = 1234;
	assert_int_equal(vnfs_client_call(fixture->socket_path, &request, HANG_BOUND_MS, &reply,
					  error, sizeof(error)),
			 0);
	assert_int_equal(reply.slot, 42);
	vnfs_reply_free(&reply);

	/* Root may read another user's job. */
	request = simple_request(VNFS_REQUEST_QUERY, 42);
	assert_int_equal(vnfs_client_call(fixture->socket_path, &request, HANG_BOUND_MS, &reply,
					  error, sizeof(error)),
			 0);
	assert_int_equal(reply.job.job_id, 42);
	assert_int_equal(reply.job.uid, 1001);
	assert_int_equal(reply.job.step_count, 0);
	vnfs_reply_free(&reply);

	/* An ok:false reply becomes the client's error text. */
	request = simple_request(VNFS_REQUEST_QUERY, 45);
	assert_int_equal(vnfs_client_call(fixture->socket_path, &request, HANG_BOUND_MS, &reply,
					  error, sizeof(error)),
			 -1);
	assert_false(reply.ok); /* refused, as opposed to not reached */
	assert_string_equal(error, "job 45 is not known");

	/* A handler that returns nothing is an internal error, not a crash. */
	request = simple_request(VNFS_REQUEST_FINISH, 42);
	assert_int_equal(vnfs_client_call(fixture->socket_path, &request, HANG_BOUND_MS, &reply,
					  error, sizeof(error)),
			 -1);
	assert_string_equal(error, "internal error: the helper produced no reply");
}

static void test_several_requests_on_one_connection(void **state)
{
	struct fixture *fixture = *state;
	const char two[] = "{\"v\":1,\"type\":\"status\"}\n{\"v\":1,\"type\":\"list\"}\n";
	char line[256];
	int fd = raw_connect(fixture->socket_path);

	raw_send(fd, two, strlen(two));
	assert_int_equal(raw_read_line(fd, line, sizeof(line), HANG_BOUND_MS), 46);
	assert_string_equal(line, "{\"v\":1,\"ok\":true,\"status\":{\"state\":\"running\"}}");
	assert_int_equal(raw_read_line(fd, line, sizeof(line), HANG_BOUND_MS), 84);
	assert_string_equal(line, "{\"v\":1,\"ok\":true,\"jobs\":[{\"job\":1,\"step\":\"0\","
				  "\"uid\":0,\"user\":\"peer\",\"running\":true}]}");
	/* A third, in two pieces. */
	raw_send_text(fd, "{\"v\":1,\"ty");
	raw_send_text(fd, "pe\":\"status\"}\n");
	assert_int_equal(raw_read_line(fd, line, sizeof(line), HANG_BOUND_MS), 46);
	close(fd);
}

static void test_garbage_gets_error_then_close(void **state)
{
	struct fixture *fixture = *state;
	char line[512];
	int fd = raw_connect(fixture->socket_path);

	raw_send_text(fd, "hello\n");
	assert_true(raw_read_line(fd, line, sizeof(line), HANG_BOUND_MS) > 0);
	assert_string_equal(line, "{\"v\":1,\"ok\":false,\"error\":\"invalid JSON at byte 0: "
				  "unexpected character\"}");
	assert_closed(fd, HANG_BOUND_MS);
	close(fd);

	fd = raw_connect(fixture->socket_path);
	raw_send_text(fd, "{\"v\":1,\"type\":\"query\",\"job\":\"x\"}\n");
	assert_true(raw_read_line(fd, line, sizeof(line), HANG_BOUND_MS) > 0);
	assert_string_equal(line, "{\"v\":1,\"ok\":false,\"error\":\"field 'job' must be an "
				  "integer from 0 to 4294967295\"}");
	assert_closed(fd, HANG_BOUND_MS);
	close(fd);

	/* Binary junk with a NUL. */
	fd = raw_connect(fixture->socket_path);
	raw_send(fd, "{\0\xff\n", 4);
	assert_true(raw_read_line(fd, line, sizeof(line), HANG_BOUND_MS) > 0);
	assert_string_equal(line, "{\"v\":1,\"ok\":false,\"error\":\"message contains a NUL byte "
				  "at byte 1\"}");
	assert_closed(fd, HANG_BOUND_MS);
	close(fd);

	/* A half request and a shutdown of the sending side. */
	fd = raw_connect(fixture->socket_path);
	raw_send_text(fd, "{\"v\":1");
	assert_int_equal(shutdown(fd, SHUT_WR), 0);
	assert_true(raw_read_line(fd, line, sizeof(line), HANG_BOUND_MS) > 0);
	assert_string_equal(line, "{\"v\":1,\"ok\":false,\"error\":\"truncated message: the "
				  "connection was shut down before the closing newline\"}");
	assert_closed(fd, HANG_BOUND_MS);
	close(fd);

	/* The server is still fine. */
	struct vnfs_request request = simple_request(VNFS_REQUEST_STATUS, 0);
	struct vnfs_reply reply;
	char error[256];

	assert_int_equal(vnfs_client_call(fixture->socket_path, &request, HANG_BOUND_MS, &reply,
					  error, sizeof(error)),
			 0);
	vnfs_reply_free(&reply);
}

static void test_oversize_gets_error_then_close(void **state)
{
	struct fixture *fixture = *state;
	char big[3000], line[256];
	int fd = raw_connect(fixture->socket_path);

	memset(big, ' ', sizeof(big));
	raw_send(fd, big, sizeof(big));
	assert_true(raw_read_line(fd, line, sizeof(line), HANG_BOUND_MS) > 0);
	assert_string_equal(line, "{\"v\":1,\"ok\":false,\"error\":\"message exceeds 1024 bytes\"}");
	assert_closed(fd, HANG_BOUND_MS);
	close(fd);

	/* Exactly the limit (1024 bytes and its newline) is accepted. */
	memset(big, ' ', 1024);
	memcpy(big, "{\"v\":1,\"type\":\"status\"}", 23);
	big[1024] = '\n';
	fd = raw_connect(fixture->socket_path);
	raw_send(fd, big, 1025);
	assert_true(raw_read_line(fd, line, sizeof(line), HANG_BOUND_MS) > 0);
	assert_string_equal(line, "{\"v\":1,\"ok\":true,\"status\":{\"state\":\"running\"}}");
	close(fd);

	/* A request the client encodes over the limit: error reply via the client. */
	struct vnfs_request request = simple_request(VNFS_REQUEST_REGISTER, 1);
	struct vnfs_reply reply;
	char error[256], name[32];

	vnfs_workload_of_slurm_step(&request.workload, request_job(&request), 0);
	request.cgroup_id = 1;
	for (int i = 0; i < 30; i++) {
		snprintf(name, sizeof(name), "TAG_NUMBER_%d", i);
		assert_int_equal(vnfs_tags_set(&request.tags, name, "some-value-here", error,
					       sizeof(error)),
				 0);
	}
	assert_int_equal(vnfs_client_call(fixture->socket_path, &request, HANG_BOUND_MS, &reply,
					  error, sizeof(error)),
			 -1);
	assert_string_equal(error, "message exceeds 1024 bytes");
}

static void test_idle_client_is_closed(void **state)
{
	struct fixture *fixture = *state;
	char line[256];
	int64_t start = now_ms(), elapsed;
	int fd = raw_connect(fixture->socket_path);

	assert_true(raw_read_line(fd, line, sizeof(line), HANG_BOUND_MS) > 0);
	elapsed = now_ms() - start;
	assert_string_equal(line, "{\"v\":1,\"ok\":false,\"error\":\"timed out: no complete request "
				  "within 300 ms\"}");
	assert_closed(fd, HANG_BOUND_MS);
	close(fd);
	assert_true(elapsed >= 290);

	/* A request that never completes is timed out the same way. */
	start = now_ms();
	fd = raw_connect(fixture->socket_path);
	raw_send_text(fd, "{\"v\":1,");
	assert_true(raw_read_line(fd, line, sizeof(line), HANG_BOUND_MS) > 0);
	assert_true(now_ms() - start >= 290);
	assert_string_equal(line, "{\"v\":1,\"ok\":false,\"error\":\"timed out: no complete request "
				  "within 300 ms\"}");
	assert_closed(fd, HANG_BOUND_MS);
	close(fd);
}

/* Asks for a BIG_REPLY_BYTES reply on a new connection and reads none of
 * it; returns once the server has begun to send it, so that the rest (more
 * than the socket's buffers hold) waits on this client. */
static int connect_slow_reader(struct fixture *fixture)
{
	const char status[] = "{\"v\":1,\"type\":\"status\"}\n";
	int fd = raw_connect(fixture->socket_path);
	struct pollfd first_bytes = { .fd = fd, .events = POLLIN };

	pthread_mutex_lock(&fixture->lock);
	fixture->big_status = true;
	pthread_mutex_unlock(&fixture->lock);
	raw_send(fd, status, strlen(status));
	assert_int_equal(poll(&first_bytes, 1, HANG_BOUND_MS), 1);
	return fd;
}

/*
 * While a client that asked for a big reply reads none of it, another is
 * served.  Decided by order, not by time: the server's deadline for taking
 * the reply is 30 s here, so the slow reader is still connected when the
 * other's answer comes; a server that waited on the slow reader would not
 * answer before that deadline, and the call, bounded at 30 s too, fails.
 */
static void test_others_served_beside_a_slow_reader(void **state)
{
	struct fixture *fixture = *state;
	struct vnfs_request request = simple_request(VNFS_REQUEST_STATUS, 0);
	struct vnfs_reply reply;
	char error[256];
	int fd = connect_slow_reader(fixture);
	struct pollfd hangup = { .fd = fd, .events = POLLRDHUP };

	assert_int_equal(vnfs_client_call(fixture->socket_path, &request, HANG_BOUND_MS, &reply,
					  error, sizeof(error)),
			 0);
	vnfs_reply_free(&reply);
	assert_int_equal(poll(&hangup, 1, 0), 0);
	close(fd);
}

/* A client that asks for a big reply and never reads it is cut off past the
 * deadline to take it (1500 ms here): waited for, not slept past (a loaded
 * machine runs the server's timer late), without reading, which would be
 * taking the reply. */
static void test_slow_reader_is_cut_off(void **state)
{
	struct fixture *fixture = *state;
	char buffer[65536];
	size_t total = 0;
	int fd = connect_slow_reader(fixture);
	struct pollfd hangup = { .fd = fd, .events = POLLRDHUP };

	assert_int_equal(poll(&hangup, 1, HANG_BOUND_MS), 1);
	for (;;) {
		ssize_t received = recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT);

		if (received <= 0) {
			assert_true(received == 0 || errno == ECONNRESET);
			break;
		}
		total += (size_t)received;
	}
	assert_true(total > 0);
	assert_true(total < BIG_REPLY_BYTES);
	close(fd);
}

static void test_too_many_clients(void **state)
{
	struct fixture *fixture = *state;
	const char status[] = "{\"v\":1,\"type\":\"status\"}\n";
	struct vnfs_request request = simple_request(VNFS_REQUEST_STATUS, 0);
	struct vnfs_reply reply;
	char line[256], error[256];
	int fds[4], extra, result = -1;

	/* Fill all four slots; a round trip on each proves the server holds it. */
	for (int i = 0; i < 4; i++) {
		fds[i] = raw_connect(fixture->socket_path);
		raw_send(fds[i], status, strlen(status));
		assert_true(raw_read_line(fds[i], line, sizeof(line), HANG_BOUND_MS) > 0);
	}
	extra = raw_connect(fixture->socket_path);
	assert_true(raw_read_line(extra, line, sizeof(line), HANG_BOUND_MS) > 0);
	assert_string_equal(line, "{\"v\":1,\"ok\":false,\"error\":\"too many clients (4 "
				  "connected): try again later\"}");
	assert_closed(extra, HANG_BOUND_MS);
	close(extra);

	/* The helper hangs up before reading the request, so the client's send
	 * often fails with EPIPE: with SIGPIPE at its default, any send without
	 * MSG_NOSIGNAL would kill this test. */
	signal(SIGPIPE, SIG_DFL);
	for (int i = 0; i < 20; i++) {
		assert_int_equal(vnfs_client_call(fixture->socket_path, &request, HANG_BOUND_MS,
						  &reply, error, sizeof(error)),
				 -1);
		assert_string_equal(error, "too many clients (4 connected): try again later");
	}

	/* Once one leaves, a new client is served. */
	close(fds[0]);
	for (int attempt = 0; attempt < 100 && result != 0; attempt++) {
		result = vnfs_client_call(fixture->socket_path, &request, HANG_BOUND_MS, &reply,
					  error, sizeof(error));
		if (result != 0)
			usleep(10 * 1000);
	}
	assert_int_equal(result, 0);
	vnfs_reply_free(&reply);
	for (int i = 1; i < 4; i++)
		close(fds[i]);
}

struct worker {
	const char *socket_path;
	int calls;
	int failures;
	char first_error[256];
};

static void *work(void *argument)
{
	struct worker *worker = argument;
	struct vnfs_request request = simple_request(VNFS_REQUEST_QUERY, 43);

	for (int i = 0; i < worker->calls; i++) {
		struct vnfs_reply reply;
		char error[256];

		if (vnfs_client_call(worker->socket_path, &request, 5000, &reply, error,
				     sizeof(error)) < 0) {
			if (worker->failures++ == 0)
				snprintf(worker->first_error, sizeof(worker->first_error), "%s", error);
			continue;
		}
		vnfs_reply_free(&reply);
	}
	return NULL;
}

static void test_many_clients(void **state)
{
	struct fixture *fixture = *state;
	enum { WORKERS = 32, CALLS = 25 };
	struct worker workers[WORKERS];
	pthread_t threads[WORKERS];

	for (int i = 0; i < WORKERS; i++) {
		workers[i] = (struct worker){ .socket_path = fixture->socket_path, .calls = CALLS };
		assert_int_equal(pthread_create(&threads[i], NULL, work, &workers[i]), 0);
	}
	for (int i = 0; i < WORKERS; i++) {
		assert_int_equal(pthread_join(threads[i], NULL), 0);
		if (workers[i].failures != 0)
			fail_msg("worker %d: %d failures, first: %s", i, workers[i].failures,
				 workers[i].first_error);
	}
	pthread_mutex_lock(&fixture->lock);
	assert_int_equal(fixture->calls, WORKERS * CALLS);
	pthread_mutex_unlock(&fixture->lock);
}

/* ---- authorization: a child process as uid 65534 -------------------- */

/* One call as the child; writes "rc|error or reply\n" to out. */
static void child_call(FILE *out, const char *socket_path, struct vnfs_request request)
{
	struct vnfs_reply reply;
	char error[256] = "";
	int result = vnfs_client_call(socket_path, &request, HANG_BOUND_MS, &reply, error,
				      sizeof(error));

	if (result != 0)
		fprintf(out, "%d|%s\n", result, error);
	else if (request.type == VNFS_REQUEST_QUERY)
		fprintf(out, "0|job %u of uid %u\n", reply.job.job_id, reply.job.uid);
	else if (request.type == VNFS_REQUEST_LIST)
		fprintf(out, "0|%zu step of uid %u\n", reply.entry_count,
			reply.entry_count ? reply.entries[0].uid : 0);
	else
		fprintf(out, "0|%s\n", json_object_to_json_string_ext(reply.status,
								   JSON_C_TO_STRING_PLAIN));
	vnfs_reply_free(&reply);
}

/*
 * The children that act as other users run as a fresh exec of this program
 * (main's --child), not as a fork of it: a fork copies the heap of a
 * process whose server thread may be in the middle of a reply, and under
 * valgrind the child's exit then reports that thread's block, which only
 * the parent's thread would have freed, as lost.
 */
static char self_path[PATH_MAX];

/* Forks and runs this program as "--child" args...; returns the child. */
static pid_t spawn_child(const char *const *args)
{
	const char *argv[16] = { self_path, "--child" };
	size_t count = 2;
	pid_t child;

	for (; *args != NULL && count < 15; args++)
		argv[count++] = *args;
	argv[count] = NULL;
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		execv(self_path, (char *const *)argv);
		_exit(127);
	}
	return child;
}

static void run_as_nobody(const char *socket_path, int write_fd)
{
	FILE *out = fdopen(write_fd, "w");
	struct vnfs_request request;

	if (out == NULL || setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
	    setresuid(NOBODY, NOBODY, NOBODY) < 0)
		_exit(2);
	request = simple_request(VNFS_REQUEST_REGISTER, 42);
	vnfs_workload_of_slurm_step(&request.workload, request_job(&request), 0);
	request.uid = NOBODY;
	request.cgroup_id = 99;
	child_call(out, socket_path, request);
	request = simple_request(VNFS_REQUEST_UNREGISTER, 42);
	vnfs_workload_of_slurm_step(&request.workload, request_job(&request), 0);
	child_call(out, socket_path, request);
	child_call(out, socket_path, simple_request(VNFS_REQUEST_FINISH, 42));
	child_call(out, socket_path, simple_request(VNFS_REQUEST_QUERY, 42));
	child_call(out, socket_path, simple_request(VNFS_REQUEST_QUERY, 43));
	child_call(out, socket_path, simple_request(VNFS_REQUEST_QUERY, 44));
	child_call(out, socket_path, simple_request(VNFS_REQUEST_QUERY, 45));
	child_call(out, socket_path, simple_request(VNFS_REQUEST_LIST, 0));
	child_call(out, socket_path, simple_request(VNFS_REQUEST_STATUS, 0));
	fclose(out);
	_exit(0);
}

static void test_non_root_is_limited(void **state)
{
	struct fixture *fixture = *state;
	const char *expected =
		"-1|permission denied: only root may register steps\n"
		"-1|permission denied: only root may unregister steps\n"
		"-1|permission denied: only root may finish jobs\n"
		/* not yours and not here: one answer */
		"-1|job 42 is not running on this node\n"
		"0|job 43 of uid 65534\n"
		"-1|internal error: job 44 has no recorded owner\n"
		"-1|job 45 is not running on this node\n"
		"0|1 step of uid 65534\n"
		"0|{\"state\":\"running\"}\n";
	char output[2048], write_fd[16];
	size_t used = 0;
	int pipe_fds[2], status;
	pid_t child;

	assert_int_equal(pipe(pipe_fds), 0);
	snprintf(write_fd, sizeof(write_fd), "%d", pipe_fds[1]);
	child = spawn_child((const char *const[]){ "nobody", fixture->socket_path, write_fd,
						   NULL });
	close(pipe_fds[1]);
	for (;;) {
		ssize_t received = read(pipe_fds[0], output + used, sizeof(output) - 1 - used);

		if (received <= 0)
			break;
		used += (size_t)received;
	}
	output[used] = '\0';
	close(pipe_fds[0]);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_string_equal(output, expected);

	/* Denied requests never reached the handler: 6 of the 9 did. */
	pthread_mutex_lock(&fixture->lock);
	assert_int_equal(fixture->calls, 6);
	assert_int_equal(fixture->last_peer.uid, NOBODY);
	assert_int_equal(fixture->last_peer.gid, NOBODY);
	assert_int_equal(fixture->last_peer.pid, child);
	pthread_mutex_unlock(&fixture->lock);
}

/* ---- starting and stopping ------------------------------------------ */

static void test_stale_and_busy_sockets(void **state)
{
	struct fixture *fixture = *state;
	struct fixture *second = new_fixture();
	struct vnfs_server_options options = { .socket_mode = 0600 };
	struct vnfs_server *server = NULL;
	struct sockaddr_un address = { .sun_family = AF_UNIX };
	char error[256], expected[512], path[100];
	int fd;

	assert_non_null(second);
	/* Someone is listening: refused. */
	options.socket_path = fixture->socket_path;
	assert_int_equal(vnfs_server_start(&server, &options, handler, second, error, sizeof(error)),
			 -1);
	assert_null(server);
	snprintf(expected, sizeof(expected), "another vnfs-helper is already listening on %s",
		 fixture->socket_path);
	assert_string_equal(error, expected);

	/* A socket file nobody listens on (a helper that died): replaced. */
	snprintf(path, sizeof(path), "%s/stale.sock", second->directory);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(address.sun_path, sizeof(address.sun_path), "%s", path);
	assert_int_equal(bind(fd, (struct sockaddr *)&address, sizeof(address)), 0);
	close(fd);
	options.socket_path = path;
	assert_int_equal(vnfs_server_start(&server, &options, handler, second, error, sizeof(error)),
			 0);
	{
		struct vnfs_request request = simple_request(VNFS_REQUEST_STATUS, 0);
		struct vnfs_reply reply;
		struct stat status;

		assert_int_equal(lstat(path, &status), 0);
		assert_int_equal(status.st_mode & 07777, 0600);
		assert_int_equal(vnfs_client_call(path, &request, HANG_BOUND_MS, &reply, error,
						  sizeof(error)),
				 0);
		vnfs_reply_free(&reply);
	}
	vnfs_server_stop(server);
	assert_int_equal(access(path, F_OK), -1); /* stop unlinks the socket */

	/* A regular file is never removed. */
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(vnfs_server_start(&server, &options, handler, second, error, sizeof(error)),
			 -1);
	snprintf(expected, sizeof(expected), "%s exists and is not a socket: not removing it", path);
	assert_string_equal(error, expected);
	assert_int_equal(unlink(path), 0);

	options.socket_path = "relative.sock";
	assert_int_equal(vnfs_server_start(&server, &options, handler, second, error, sizeof(error)),
			 -1);
	assert_string_equal(error, "the socket path must be absolute, not 'relative.sock'");

	rmdir(second->directory);
	pthread_mutex_destroy(&second->lock);
	free(second);
	vnfs_server_stop(NULL);
}

/* ---- the client's own errors ---------------------------------------- */

static void test_client_cannot_reach(void **state)
{
	struct vnfs_request request = simple_request(VNFS_REQUEST_STATUS, 0);
	struct vnfs_reply reply;
	char error[256];

	(void)state;
	assert_int_equal(vnfs_client_call("/nonexistent/vnfs/helper.sock", &request, 500, &reply,
					  error, sizeof(error)),
			 VNFS_CLIENT_NOT_RUNNING);
	assert_true(reply.ok); /* not a refusal: nothing answered */
	assert_int_equal(reply.type, VNFS_REQUEST_STATUS);
	assert_null(reply.status);
	assert_string_equal(error, "cannot reach vnfs-helper at /nonexistent/vnfs/helper.sock: "
				   "No such file or directory");
}

/* The socket a helper left when it stopped (killed, or its unit's
 * RuntimeDirectory kept): nothing listens, so the helper is not running. */
static void test_client_stale_socket(void **state)
{
	struct fixture *fixture = *state;
	struct vnfs_request request = simple_request(VNFS_REQUEST_STATUS, 0);
	struct sockaddr_un address = { .sun_family = AF_UNIX };
	struct vnfs_reply reply;
	char path[100], error[256], expected[512];
	int stale;

	snprintf(path, sizeof(path), "%s/stale.sock", fixture->directory);
	snprintf(address.sun_path, sizeof(address.sun_path), "%s", path);
	stale = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(stale >= 0);
	assert_int_equal(bind(stale, (struct sockaddr *)&address, sizeof(address)), 0);
	assert_int_equal(close(stale), 0); /* never listened: connect is refused */
	assert_int_equal(vnfs_client_call(path, &request, 500, &reply, error, sizeof(error)),
			 VNFS_CLIENT_NOT_RUNNING);
	snprintf(expected, sizeof(expected), "cannot reach vnfs-helper at %s: Connection refused",
		 path);
	assert_string_equal(error, expected);
	assert_int_equal(unlink(path), 0);
}

/* A socket listening at DIRECTORY/name, path set to where: a stand-in for a
 * helper that misbehaves. */
static int listen_at(const struct fixture *fixture, const char *name, char *path, size_t path_size)
{
	struct sockaddr_un address = { .sun_family = AF_UNIX };
	int listener;

	snprintf(path, path_size, "%s/%s", fixture->directory, name);
	snprintf(address.sun_path, sizeof(address.sun_path), "%s", path);
	listener = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(listener >= 0);
	assert_int_equal(bind(listener, (struct sockaddr *)&address, sizeof(address)), 0);
	assert_int_equal(listen(listener, 4), 0);
	return listener;
}

/* A "helper" that accepts connections (the kernel does, from the backlog)
 * but never answers: the client must give up on time. */
static void test_client_times_out_on_stalled_helper(void **state)
{
	struct fixture *fixture = *state;
	struct vnfs_request request = simple_request(VNFS_REQUEST_STATUS, 0);
	struct vnfs_reply reply;
	char path[100], error[256], expected[512];
	int listener = listen_at(fixture, "stalled.sock", path, sizeof(path)), accepted;
	int64_t start, elapsed;

	start = now_ms();
	assert_int_equal(vnfs_client_call(path, &request, 300, &reply, error, sizeof(error)), -1);
	elapsed = now_ms() - start;
	snprintf(expected, sizeof(expected),
		 "vnfs-helper at %s did not answer within 300 ms (waiting for the reply)", path);
	assert_string_equal(error, expected);
	assert_true(elapsed >= 290);
	assert_true(elapsed < HANG_BOUND_MS);

	/* One that accepts and hangs up without a word. */
	accepted = accept(listener, NULL, NULL);
	assert_true(accepted >= 0);
	close(accepted);
	{
		pid_t child = fork();
		int status;

		assert_true(child >= 0);
		if (child == 0) {
			int fd = accept(listener, NULL, NULL);
			char buffer[256];

			if (fd >= 0 && read(fd, buffer, sizeof(buffer)) > 0)
				close(fd);
			_exit(0);
		}
		assert_int_equal(vnfs_client_call(path, &request, HANG_BOUND_MS, &reply, error,
						  sizeof(error)),
				 -1);
		snprintf(expected, sizeof(expected),
			 "vnfs-helper at %s closed the connection without answering", path);
		assert_string_equal(error, expected);
		assert_int_equal(waitpid(child, &status, 0), child);
	}
	close(listener);
	unlink(path);
}

/* A "helper" that answers with a line longer than the client keeps (16 MiB
 * with no end): the client gives up with that said, not out of memory. */
static void test_client_refuses_endless_reply(void **state)
{
	struct fixture *fixture = *state;
	struct vnfs_request request = simple_request(VNFS_REQUEST_STATUS, 0);
	struct vnfs_reply reply;
	char path[100], error[256], expected[512];
	int listener = listen_at(fixture, "endless.sock", path, sizeof(path)), status;
	pid_t child;

	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		static char block[64 * 1024];
		int fd = accept(listener, NULL, NULL);
		char request_line[4096];

		memset(block, 'x', sizeof(block));
		if (fd >= 0 && read(fd, request_line, sizeof(request_line)) > 0)
			for (int i = 0; i < 16 * 16; i++) /* 16 MiB, no newline */
				if (send(fd, block, sizeof(block), MSG_NOSIGNAL) < 0)
					break;
		_exit(0);
	}
	assert_int_equal(vnfs_client_call(path, &request, 20000, &reply, error, sizeof(error)), -1);
	snprintf(expected, sizeof(expected), "reply from vnfs-helper at %s exceeds 16777216 bytes",
		 path);
	assert_string_equal(error, expected);
	assert_int_equal(waitpid(child, &status, 0), child);
	close(listener);
	unlink(path);
}

/* ---- root is always served ------------------------------------------ */

/*
 * In a child running as uid: opens count connections, each proven held by a
 * STATUS round trip, and writes one line per connection to out ("held" or
 * the helper's refusal); then holds them until release_fd reads end of file.
 */
static void hold_connections(const char *socket_path, uid_t uid, int count, int out_fd,
			     int release_fd)
{
	const char status[] = "{\"v\":1,\"type\":\"status\"}\n";
	FILE *out = fdopen(out_fd, "w");
	char byte;

	if (out == NULL || setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 ||
	    setresuid(uid, uid, uid) < 0)
		_exit(2);
	for (int i = 0; i < count; i++) {
		struct sockaddr_un address = { .sun_family = AF_UNIX };
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		char line[256];
		ssize_t length;

		snprintf(address.sun_path, sizeof(address.sun_path), "%s", socket_path);
		if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof(address)) < 0)
			_exit(3);
		/* A refused connection may be closed before this arrives. */
		(void)!send(fd, status, sizeof(status) - 1, MSG_NOSIGNAL);
		length = raw_read_line(fd, line, sizeof(line), 4000);
		if (length < 0)
			_exit(4);
		fprintf(out, "%s\n", strstr(line, "\"ok\":true") ? "held" : line);
	}
	fclose(out);
	while (read(release_fd, &byte, 1) > 0)
		;
	_exit(0);
}

/* Starts hold_connections in a child; *release is the pipe end to close. */
static pid_t start_holder(const char *socket_path, uid_t uid, int count, FILE **lines,
			  int *release)
{
	int out[2], release_pipe[2];
	char uid_text[16], count_text[16], out_text[16], release_text[16];
	pid_t child;

	/* The parent's ends close on exec: the child must see the release's
	 * end of file when the parent closes its end. */
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	assert_int_equal(pipe2(release_pipe, O_CLOEXEC), 0);
	assert_int_equal(fcntl(out[1], F_SETFD, 0), 0);
	assert_int_equal(fcntl(release_pipe[0], F_SETFD, 0), 0);
	snprintf(uid_text, sizeof(uid_text), "%u", (unsigned)uid);
	snprintf(count_text, sizeof(count_text), "%d", count);
	snprintf(out_text, sizeof(out_text), "%d", out[1]);
	snprintf(release_text, sizeof(release_text), "%d", release_pipe[0]);
	child = spawn_child((const char *const[]){ "hold", socket_path, uid_text, count_text,
						   out_text, release_text, NULL });
	close(out[1]);
	close(release_pipe[0]);
	*lines = fdopen(out[0], "r");
	assert_non_null(*lines);
	*release = release_pipe[1];
	return child;
}

static void expect_lines(FILE *lines, int held, const char *refusal)
{
	char line[512];

	for (int i = 0; i < held; i++) {
		assert_non_null(fgets(line, sizeof(line), lines));
		assert_string_equal(line, "held\n");
	}
	assert_non_null(fgets(line, sizeof(line), lines));
	assert_string_equal(line, refusal);
	assert_null(fgets(line, sizeof(line), lines));
	fclose(lines);
}

static void end_holder(pid_t child, int release)
{
	int status;

	close(release);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_root_is_served_while_users_hold_connections(void **state)
{
	struct fixture *fixture = *state;
	struct vnfs_request request = simple_request(VNFS_REQUEST_REGISTER, 42);
	struct vnfs_reply replies[4];
	char error[256];
	FILE *lines;
	int release_nobody, release_other;
	pid_t nobody, other;

	/* One user: 8 connections, the 9th is refused by the per-user share. */
	nobody = start_holder(fixture->socket_path, NOBODY, 9, &lines, &release_nobody);
	expect_lines(lines, 8, "{\"v\":1,\"ok\":false,\"error\":\"too many connections from "
			       "uid 65534 (at most 8 at once): try again later\"}\n");
	/* Another: 4 more fill the 12 not kept for root; the 5th is refused. */
	other = start_holder(fixture->socket_path, NOBODY - 1, 5, &lines, &release_other);
	expect_lines(lines, 4, "{\"v\":1,\"ok\":false,\"error\":\"too many clients (12 "
			       "connected): try again later\"}\n");
	/* Root still has its four: each REGISTER answered, ok. */
	vnfs_workload_of_slurm_step(&request.workload, request_job(&request), 0);
	request.uid = 1001;
	request.cgroup_id = 99;
	for (int i = 0; i < 4; i++)
		assert_int_equal(vnfs_client_call(fixture->socket_path, &request, HANG_BOUND_MS, &replies[i],
						  error, sizeof(error)),
				 0);
	for (int i = 0; i < 4; i++)
		vnfs_reply_free(&replies[i]);
	/* The second child inherited the first one's release pipe: it goes first. */
	end_holder(other, release_other);
	end_holder(nobody, release_nobody);
}

struct background_call {
	const char *socket_path;
	struct vnfs_request request;
	pthread_t thread;
	int result;
	char error[256];
};

static void *call_in_background(void *argument)
{
	struct background_call *call = argument;
	struct vnfs_reply reply;

	call->result = vnfs_client_call(call->socket_path, &call->request, HANG_BOUND_MS, &reply,
					call->error, sizeof(call->error));
	vnfs_reply_free(&reply);
	return NULL;
}

/*
 * A FINISH stuck in its handler (report_dir on a stalled NFS server) and a
 * user's QUERY stuck behind the collector do not delay root's REGISTER: it is
 * answered while both still wait (with the old single thread it timed out).
 */
static void test_register_does_not_wait_for_finish_or_queries(void **state)
{
	struct fixture *fixture = *state;
	struct background_call finish = { .socket_path = fixture->socket_path };
	struct background_call query = { .socket_path = fixture->socket_path };
	struct vnfs_request request = simple_request(VNFS_REQUEST_REGISTER, 42);
	struct vnfs_reply reply;
	char error[256];

	fixture->holding = true;
	finish.request = simple_request(VNFS_REQUEST_FINISH, HELD_FINISH_JOB);
	query.request = simple_request(VNFS_REQUEST_QUERY, HELD_QUERY_JOB);
	assert_int_equal(pthread_create(&finish.thread, NULL, call_in_background, &finish), 0);
	assert_int_equal(pthread_create(&query.thread, NULL, call_in_background, &query), 0);
	pthread_mutex_lock(&fixture->lock);
	while (fixture->held < 2)
		pthread_cond_wait(&fixture->changed, &fixture->lock);
	pthread_mutex_unlock(&fixture->lock);

	vnfs_workload_of_slurm_step(&request.workload, request_job(&request), 0);
	request.uid = 1001;
	request.cgroup_id = 99;
	assert_int_equal(vnfs_client_call(fixture->socket_path, &request, HANG_BOUND_MS, &reply,
					  error, sizeof(error)),
			 0);
	vnfs_reply_free(&reply);
	pthread_mutex_lock(&fixture->lock);
	assert_int_equal(fixture->held, 2); /* both still waiting */
	fixture->holding = false;
	pthread_cond_broadcast(&fixture->changed);
	pthread_mutex_unlock(&fixture->lock);
	pthread_join(finish.thread, NULL);
	pthread_join(query.thread, NULL);
	assert_int_equal(finish.result, 0);
	assert_int_equal(query.result, 0);
}

/* main's --child: what a spawn_child child does, by its first argument. */
static int run_child(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[2], "nobody") == 0)
		run_as_nobody(argv[3], atoi(argv[4]));
	if (argc == 8 && strcmp(argv[2], "hold") == 0)
		hold_connections(argv[3], (uid_t)strtoul(argv[4], NULL, 10), atoi(argv[5]),
				 atoi(argv[6]), atoi(argv[7]));
	fprintf(stderr, "test_server: unknown child '%s'\n", argc > 2 ? argv[2] : "");
	return 126;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "--child") == 0)
		return run_child(argc, argv);
	if (realpath(argv[0], self_path) == NULL) {
		perror("test_server: realpath of argv[0]");
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_socket_created_with_mode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ok_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_root_registers_and_queries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_several_requests_on_one_connection, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_garbage_gets_error_then_close, setup, teardown),
		cmocka_unit_test_setup_teardown(test_oversize_gets_error_then_close, setup_small,
						teardown),
		cmocka_unit_test_setup_teardown(test_idle_client_is_closed, setup_short_deadline,
						teardown),
		cmocka_unit_test_setup_teardown(test_others_served_beside_a_slow_reader,
						setup_patient_slow_reader, teardown),
		cmocka_unit_test_setup_teardown(test_slow_reader_is_cut_off, setup_slow_reader,
						teardown),
		cmocka_unit_test_setup_teardown(test_too_many_clients, setup_small, teardown),
		cmocka_unit_test_setup_teardown(test_many_clients, setup, teardown),
		cmocka_unit_test_setup_teardown(test_non_root_is_limited, setup, teardown),
		cmocka_unit_test_setup_teardown(test_root_is_served_while_users_hold_connections,
						setup_shares, teardown),
		cmocka_unit_test_setup_teardown(test_register_does_not_wait_for_finish_or_queries,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_and_busy_sockets, setup, teardown),
		cmocka_unit_test(test_client_cannot_reach),
		cmocka_unit_test_setup_teardown(test_client_stale_socket, setup, teardown),
		cmocka_unit_test_setup_teardown(test_client_times_out_on_stalled_helper, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_client_refuses_endless_reply, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
