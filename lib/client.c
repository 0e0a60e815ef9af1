/*
 * client.c — one request/reply exchange with vnfs-helper over its Unix
 * socket, for the SPANK plugin and vnfs-report.
 *
 * The plugin runs inside slurmstepd and srun, so this must never hang a job
 * or kill its process: every wait is a poll() against one deadline for the
 * whole call (a helper that accepts and then stalls still times out), sends
 * use MSG_NOSIGNAL (a helper that died mid-call is an error, not SIGPIPE), and
 * the reply is read into a bounded buffer.
 */
#include "lib/client.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* Replies carry whole jobs (QUERY) or every job (LIST): far bigger than a
 * request may be, yet still bounded so a broken helper cannot exhaust us. */
#define MAX_REPLY_BYTES (16u * 1024 * 1024)

/* send_all: the helper closed the connection, maybe after saying why. */
#define HELPER_HUNG_UP (-2)

struct call {
	const char *socket_path;
	int timeout_ms;
	int64_t deadline_ms; /* CLOCK_MONOTONIC; -1 = no deadline */
	char *error;
	size_t error_size;
};

static int64_t now_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* Milliseconds left for poll(), or 0 when the deadline has passed. */
static int remaining_ms(const struct call *call)
{
	int64_t left;

	if (call->deadline_ms < 0)
		return -1;
	left = call->deadline_ms - now_ms();
	return left > 0 ? (int)left : 0;
}

static int fail_timeout(const struct call *call, const char *while_doing)
{
	snprintf(call->error, call->error_size,
		 "vnfs-helper at %s did not answer within %d ms (%s)", call->socket_path,
		 call->timeout_ms, while_doing);
	return -1;
}

static int fail_errno(const struct call *call, const char *what, int error_number)
{
	snprintf(call->error, call->error_size, "%s vnfs-helper at %s: %s", what,
		 call->socket_path, strerror(error_number));
	return -1;
}

/* Waits for events on fd until the deadline.  1 ready, 0 timed out, -1 error. */
static int wait_for(const struct call *call, int fd, short events)
{
	struct pollfd poll_fd = { .fd = fd, .events = events };

	for (;;) {
		int ready = poll(&poll_fd, 1, remaining_ms(call));

		if (ready > 0)
			return 1;
		if (ready == 0)
			return 0;
		if (errno != EINTR)
			return -1;
	}
}

/* The connected socket, or -1 or VNFS_CLIENT_NOT_RUNNING with the message. */
static int connect_socket(const struct call *call)
{
	struct sockaddr_un address = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(call->socket_path) >= sizeof(address.sun_path)) {
		snprintf(call->error, call->error_size,
			 "cannot reach vnfs-helper at %s: the path is longer than %zu bytes",
			 call->socket_path, sizeof(address.sun_path) - 1);
		return -1;
	}
	memcpy(address.sun_path, call->socket_path, strlen(call->socket_path) + 1);

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return fail_errno(call, "cannot create a socket for", errno);

	/* A Unix socket connects at once or fails with EAGAIN when the
	 * helper's backlog is full; then retry until the deadline. */
	while (connect(fd, (struct sockaddr *)&address, sizeof(address)) < 0) {
		int saved = errno;

		if (saved == EINTR)
			continue;
		if (saved == EAGAIN && remaining_ms(call) != 0) {
			struct timespec pause = { .tv_nsec = 5 * 1000000 };

			nanosleep(&pause, NULL);
			continue;
		}
		close(fd);
		if (saved == EAGAIN)
			return fail_timeout(call, "its connection queue is full");
		fail_errno(call, "cannot reach", saved);
		return saved == ENOENT || saved == ECONNREFUSED ? VNFS_CLIENT_NOT_RUNNING : -1;
	}
	return fd;
}

static int send_all(const struct call *call, int fd, const char *data, size_t length)
{
	while (length > 0) {
		ssize_t sent = send(fd, data, length, MSG_NOSIGNAL);

		if (sent > 0) {
			data += sent;
			length -= (size_t)sent;
			continue;
		}
		if (sent < 0 && errno == EINTR)
			continue;
		if (sent < 0 && (errno == EPIPE || errno == ECONNRESET)) {
			fail_errno(call, "cannot send to", errno);
			return HELPER_HUNG_UP;
		}
		if (sent < 0 && errno != EAGAIN)
			return fail_errno(call, "cannot send to", errno);
		switch (wait_for(call, fd, POLLOUT)) {
		case 0:
			return fail_timeout(call, "sending the request");
		case -1:
			return fail_errno(call, "cannot send to", errno);
		}
	}
	return 0;
}

/* Doubles the reply buffer, up to MAX_REPLY_BYTES; -1 with the error set
 * past that or out of memory (the buffer is then unchanged). */
static int grow_reply_buffer(const struct call *call, char **buffer, size_t *capacity)
{
	char *bigger;

	if (*capacity >= MAX_REPLY_BYTES) {
		snprintf(call->error, call->error_size, "reply from vnfs-helper at %s exceeds %u bytes",
			 call->socket_path, MAX_REPLY_BYTES);
		return -1;
	}
	bigger = realloc(*buffer, *capacity * 2);
	if (bigger == NULL)
		return fail_errno(call, "out of memory talking to", ENOMEM);
	*buffer = bigger;
	*capacity *= 2;
	return 0;
}

/* Reads up to the first '\n' into a malloc'd, NUL-terminated *line. */
static int receive_line(const struct call *call, int fd, char **line, size_t *length)
{
	size_t capacity = 4096, used = 0;
	char *buffer = malloc(capacity);

	if (buffer == NULL)
		return fail_errno(call, "out of memory talking to", ENOMEM);
	for (;;) {
		ssize_t received;
		int ready;

		if (used + 1 >= capacity && grow_reply_buffer(call, &buffer, &capacity) != 0)
			break;
		received = recv(fd, buffer + used, capacity - used - 1, 0);
		if (received > 0) {
			char *newline = memchr(buffer + used, '\n', (size_t)received);

			used += (size_t)received;
			if (newline == NULL)
				continue;
			*newline = '\0';
			*line = buffer;
			*length = (size_t)(newline - buffer);
			return 0;
		}
		if (received == 0) {
			snprintf(call->error, call->error_size,
				 "vnfs-helper at %s closed the connection without answering",
				 call->socket_path);
			break;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN) {
			fail_errno(call, "cannot read from", errno);
			break;
		}
		ready = wait_for(call, fd, POLLIN);
		if (ready > 0)
			continue;
		if (ready == 0)
			fail_timeout(call, "waiting for the reply");
		else
			fail_errno(call, "cannot read from", errno);
		break;
	}
	free(buffer);
	return -1;
}

/* Decodes a reply line into *reply (ok:true) or an error message. */
static int interpret_reply(const struct call *call, const char *line, size_t length,
			   enum vnfs_request_type type, struct vnfs_reply *reply)
{
	char message[512];

	if (vnfs_reply_decode(line, length, type, reply, message, sizeof(message)) < 0) {
		snprintf(call->error, call->error_size,
			 "vnfs-helper at %s sent no %s reply of protocol version %d: %s",
			 call->socket_path, vnfs_request_type_name(type), VNFS_PROTOCOL_VERSION,
			 message);
		return VNFS_CLIENT_UNREADABLE;
	}
	if (!reply->ok) {
		snprintf(call->error, call->error_size, "%s", reply->error);
		vnfs_reply_free(reply);
		reply->ok = false; /* what tells a refusal from a helper not reached */
		return -1;
	}
	return 0;
}

int vnfs_client_call(const char *socket_path, const struct vnfs_request *request,
		     int timeout_ms, struct vnfs_reply *reply, char *error, size_t error_size)
{
	struct call call = {
		.socket_path = socket_path,
		.timeout_ms = timeout_ms,
		.deadline_ms = timeout_ms > 0 ? now_ms() + timeout_ms : -1,
		.error = error,
		.error_size = error_size,
	};
	char *message, *line = NULL;
	size_t length = 0;
	int fd, result;

	vnfs_reply_init(reply, request->type);
	message = vnfs_request_encode(request);
	if (message == NULL) {
		snprintf(error, error_size, "cannot encode the %s request",
			 vnfs_request_type_name(request->type) ? vnfs_request_type_name(request->type)
							       : "(invalid)");
		return -1;
	}
	fd = connect_socket(&call);
	if (fd < 0) {
		free(message);
		return fd; /* -1 or VNFS_CLIENT_NOT_RUNNING */
	}
	result = send_all(&call, fd, message, strlen(message));
	free(message);
	if (result == HELPER_HUNG_UP) {
		/* A helper that refuses a client (too many connections) replies
		 * and closes before reading: its reason beats "Broken pipe". */
		char send_error[256];

		snprintf(send_error, sizeof(send_error), "%s", error);
		result = receive_line(&call, fd, &line, &length);
		if (result < 0)
			snprintf(error, error_size, "%s", send_error);
	} else if (result == 0) {
		result = receive_line(&call, fd, &line, &length);
	}
	close(fd);
	if (result == 0)
		result = interpret_reply(&call, line, length, request->type, reply);
	free(line);
	return result;
}
