/*
 * server.c — the helper's Unix socket server (see server.h for the contract
 * and the authorization rules, docs/PROTOCOL.md for the wire format).
 *
 * One thread, one poll() over the listening socket, a wake-up pipe and at
 * most max_clients non-blocking connections.  Nothing a client does can stall
 * it: every connection has a deadline (to deliver its request, then to take
 * its reply), input is bounded by max_message_bytes, and sends never block,
 * so a slow or malicious client only ever loses its own connection.
 *
 * Root is always served (docs/SECURITY.md).  A quarter of the connections
 * is kept for root, and one user other than root holds at most
 * max_clients_per_user of the rest, so nobody can fill the socket and turn
 * slurmstepd's REGISTER away.  REGISTER and UNREGISTER are answered on this
 * thread: they touch only the registry and a BPF map, never a file a user
 * can stall or the collector's lock.  Everything that waits on the
 * collector or on file, database or network I/O goes to a worker thread:
 * FINISH (final read, report files, outputs) to root's finisher, QUERY, LIST
 * and STATUS to the readers' worker.  Each connection has at most one request
 * in a worker, so a worker's queue never holds more than max_clients.
 */
#include "helper/control/server.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"

#define DEFAULT_CLIENT_TIMEOUT_MS 5000
#define DEFAULT_MAX_CLIENTS 64
#define DEFAULT_MAX_CLIENTS_PER_USER 8
#define LISTEN_BACKLOG 128
#define INITIAL_INPUT_BYTES 4096
/* After accept() fails for lack of descriptors, stop polling the listening
 * socket this long: it stays readable and would otherwise spin the thread. */
#define ACCEPT_PAUSE_MS 100
/* poll_fds[0] the wake-up pipe, [1] the listening socket, [2] the workers'
 * done pipe; the connections follow. */
#define FIXED_POLL_FDS 3

struct connection {
	int fd;                 /* -1: the entry is free */
	uint64_t serial;        /* unique per accepted connection: a late reply
				 * never reaches a newer one in the same entry */
	struct vnfs_peer peer;
	char *input;            /* grows up to max_message_bytes + 1 */
	size_t input_capacity;
	size_t input_used;
	size_t input_scanned;   /* bytes already searched for '\n' */
	char *output;           /* the reply being sent, '\n'-terminated */
	size_t output_length;
	size_t output_sent;
	int64_t deadline_ms;    /* to deliver a request, or to take the reply */
	bool close_when_sent;   /* after an error reply for bad input */
	bool peer_closed;       /* the client shut down its side */
	bool awaiting_worker;   /* its request is with a worker thread */
};

/* Which thread answers a request type (see the top of this file). */
enum answerer { ANSWER_INLINE, ANSWER_FINISHER, ANSWER_READER, ANSWERER_COUNT };

static const enum answerer answerer_of[VNFS_REQUEST_TYPES] = {
	[VNFS_REQUEST_REGISTER] = ANSWER_INLINE,
	[VNFS_REQUEST_UNREGISTER] = ANSWER_INLINE,
	[VNFS_REQUEST_FINISH] = ANSWER_FINISHER,
	[VNFS_REQUEST_QUERY] = ANSWER_READER,
	[VNFS_REQUEST_LIST] = ANSWER_READER,
	[VNFS_REQUEST_STATUS] = ANSWER_READER,
	[VNFS_REQUEST_HISTORY] = ANSWER_READER,
};

/* A request handed to a worker, and later its reply handed back. */
struct work {
	struct vnfs_request *request;
	struct vnfs_peer peer;
	unsigned connection;    /* index in the server's connections */
	uint64_t serial;        /* that connection's serial when it asked */
	char *reply;            /* the encoded reply line */
};

/* A bounded queue of struct work, with its own lock. */
struct work_queue {
	pthread_mutex_t lock;
	struct work *items;
	unsigned capacity, head, count;
};

struct worker {
	struct vnfs_server *server;
	pthread_t thread;
	bool started;
	pthread_cond_t wake;
	bool stopping;          /* under queue.lock */
	struct work_queue queue;
};

struct vnfs_server {
	struct vnfs_server_options options;
	char socket_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	dev_t socket_device;    /* what we bound, so stop never unlinks a successor's */
	ino_t socket_inode;
	int listen_fd;
	int wake_fds[2];        /* stop writes a byte to wake the thread */
	int done_fds[2];        /* a worker writes a byte when a reply is ready */
	unsigned root_reserved; /* connections only root may take */
	uint64_t next_serial;
	struct worker workers[ANSWERER_COUNT]; /* [ANSWER_INLINE] unused */
	struct work_queue done; /* replies from the workers */
	pthread_t thread;
	vnfs_request_handler handler;
	void *context;
	struct connection *connections;
	struct pollfd *poll_fds;
	/* poll_fds[i + FIXED_POLL_FDS] watches connections[polled_connections[i]] */
	unsigned *polled_connections;
	int64_t accept_paused_until_ms;
};

static int64_t now_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* ---- connections ---------------------------------------------------- */

static void connection_close(struct connection *connection)
{
	if (connection->fd >= 0)
		close(connection->fd);
	free(connection->input);
	free(connection->output);
	memset(connection, 0, sizeof(*connection));
	connection->fd = -1;
}

/* Queues reply (a line with '\n', consumed; NULL: none could be made) as
 * the connection's output. */
static void queue_reply(struct vnfs_server *server, struct connection *connection, char *reply)
{
	if (reply == NULL) {
		vnfs_error("socket: cannot make a reply for pid %ld: out of memory",
			   (long)connection->peer.pid);
		connection->close_when_sent = true;
		return;
	}
	connection->output = reply;
	connection->output_length = strlen(reply);
	connection->output_sent = 0;
	connection->deadline_ms = now_ms() + server->options.client_timeout_ms;
}

/*
 * Says why, in one line, to a client about to be dropped, without waiting:
 * if its socket buffer is full it simply does not get the explanation.
 */
static void send_parting_error(int fd, const char *message)
{
	char *line = vnfs_reply_encode_error("%s", message);

	if (line != NULL && send(fd, line, strlen(line), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		vnfs_debug("socket: could not tell a client '%s': %s", message, strerror(errno));
	free(line);
}

/* ---- authorization and dispatch ------------------------------------- */

static const char *root_only_action(enum vnfs_request_type type)
{
	switch (type) {
	case VNFS_REQUEST_REGISTER:
		return "register steps";
	case VNFS_REQUEST_UNREGISTER:
		return "unregister steps";
	case VNFS_REQUEST_FINISH:
		return "finish jobs";
	default:
		return NULL;
	}
}

/*
 * A non-root caller only sees a job it owns: the handler names the owner in
 * its answer and this decides, so no handler can forget the check.  A job
 * that is not here and a job of another user get the same answer, so nobody
 * learns which jobs run on the node (root gets the handler's own message).
 */
static void enforce_owner(struct vnfs_answer *answer, const struct vnfs_request *request,
			  const struct vnfs_peer *peer)
{
	struct vnfs_reply *reply = &answer->reply;
	struct vnfs_workload job = request->workload;
	char name[VNFS_WORKLOAD_DESCRIPTION_MAX];

	if (peer->uid == 0)
		return;
	/* The job, not the step: a step of a job that is here is no secret
	 * worth a second message. */
	job.part[0] = '\0';
	vnfs_workload_describe(&job, name, sizeof(name));
	if (!reply->ok) {
		vnfs_reply_fail(reply, VNFS_QUERY_NOT_HERE_FORMAT, name);
		return;
	}
	if (!answer->owner_known) {
		vnfs_error("socket: the answer to query %s has no owner uid: refused to uid %u",
			   name, (unsigned)peer->uid);
		vnfs_reply_fail(reply, "internal error: %s has no recorded owner", name);
		return;
	}
	if (answer->owner_uid != (uint32_t)peer->uid) {
		vnfs_debug("socket: uid %u asked for %s of uid %u: answered as not here",
			   (unsigned)peer->uid, name, (unsigned)answer->owner_uid);
		vnfs_reply_fail(reply, VNFS_QUERY_NOT_HERE_FORMAT, name);
	}
}

/* The handler's reply to an authorized request, encoded, on whichever thread
 * runs it (a big reply is serialized on a worker, not the socket thread). */
static char *respond(struct vnfs_server *server, const struct vnfs_request *request,
		     const struct vnfs_peer *peer)
{
	struct vnfs_answer *answer = malloc(sizeof(*answer));
	char *line;

	if (answer == NULL)
		return vnfs_reply_encode_error("internal error: out of memory");
	memset(answer, 0, sizeof(*answer));
	vnfs_reply_init(&answer->reply, request->type);
	if (server->handler(server->context, request, peer, answer) < 0) {
		vnfs_error("socket: no reply to the %s request", vnfs_request_type_name(request->type));
		vnfs_reply_fail(&answer->reply, "internal error: the helper produced no reply");
	}
	if (request->type == VNFS_REQUEST_QUERY)
		enforce_owner(answer, request, peer);
	line = vnfs_reply_encode(&answer->reply);
	vnfs_reply_free(&answer->reply);
	free(answer);
	return line;
}

/* Decodes and authorizes one request; NULL with *reply set when refused. */
static struct vnfs_request *admit(struct vnfs_server *server, struct connection *connection,
				  const char *line, size_t length, char **reply)
{
	struct vnfs_request *request = malloc(sizeof(*request));
	const char *action;
	char error[512];

	if (request == NULL) {
		connection->close_when_sent = true;
		*reply = vnfs_reply_encode_error("internal error: out of memory");
		return NULL;
	}
	if (vnfs_request_decode(line, length, server->options.max_message_bytes, request, error,
				sizeof(error)) < 0) {
		vnfs_debug("socket: bad request from pid %ld uid %u: %s",
			   (long)connection->peer.pid, (unsigned)connection->peer.uid, error);
		free(request);
		connection->close_when_sent = true;
		*reply = vnfs_reply_encode_error("%s", error);
		return NULL;
	}
	action = root_only_action(request->type);
	if (action != NULL && connection->peer.uid != 0) {
		char name[VNFS_WORKLOAD_DESCRIPTION_MAX];

		vnfs_info("socket: refused %s for %s from uid %u (pid %ld)",
			  vnfs_request_type_name(request->type),
			  vnfs_workload_describe(&request->workload, name, sizeof(name)),
			  (unsigned)connection->peer.uid, (long)connection->peer.pid);
		free(request);
		*reply = vnfs_reply_encode_error("permission denied: only root may %s", action);
		return NULL;
	}
	return request;
}

/* ---- work queues and workers ---------------------------------------- */

static int work_queue_init(struct work_queue *queue, unsigned capacity)
{
	queue->items = calloc(capacity, sizeof(*queue->items));
	queue->capacity = capacity;
	queue->head = queue->count = 0;
	if (queue->items == NULL)
		return -1;
	if (pthread_mutex_init(&queue->lock, NULL) != 0) {
		free(queue->items);
		queue->items = NULL;
		return -1;
	}
	return 0;
}

/* Lock held.  Never full: each connection has at most one request out. */
static bool work_queue_push(struct work_queue *queue, const struct work *work)
{
	if (queue->count == queue->capacity)
		return false;
	queue->items[(queue->head + queue->count++) % queue->capacity] = *work;
	return true;
}

/* Lock held. */
static bool work_queue_pop(struct work_queue *queue, struct work *work)
{
	if (queue->count == 0)
		return false;
	*work = queue->items[queue->head];
	queue->head = (queue->head + 1) % queue->capacity;
	queue->count--;
	return true;
}

/* Frees what is left (at stop) and the queue itself. */
static void work_queue_destroy(struct work_queue *queue)
{
	struct work work;

	if (queue->items == NULL)
		return;
	while (work_queue_pop(queue, &work)) {
		free(work.request);
		free(work.reply);
	}
	free(queue->items);
	queue->items = NULL;
	pthread_mutex_destroy(&queue->lock);
}

/* Hands a finished work back to the socket thread and wakes it. */
static void post_reply(struct vnfs_server *server, struct work *work)
{
	char byte = 0;
	bool posted;

	free(work->request);
	work->request = NULL;
	pthread_mutex_lock(&server->done.lock);
	posted = work_queue_push(&server->done, work);
	pthread_mutex_unlock(&server->done.lock);
	if (!posted) { /* cannot happen: at most one work per connection */
		vnfs_error("socket: no room for a reply: dropped");
		free(work->reply);
		return;
	}
	/* The pipe is non-blocking: a full pipe already has a wake-up in it. */
	while (write(server->done_fds[1], &byte, 1) < 0 && errno == EINTR)
		;
}

static void *worker_thread(void *argument)
{
	struct worker *worker = argument;
	struct work work;

	for (;;) {
		pthread_mutex_lock(&worker->queue.lock);
		while (!worker->stopping && worker->queue.count == 0)
			pthread_cond_wait(&worker->wake, &worker->queue.lock);
		if (worker->stopping) {
			pthread_mutex_unlock(&worker->queue.lock);
			return NULL;
		}
		work_queue_pop(&worker->queue, &work);
		pthread_mutex_unlock(&worker->queue.lock);
		work.reply = respond(worker->server, work.request, &work.peer);
		post_reply(worker->server, &work);
	}
}

static bool worker_submit(struct worker *worker, const struct work *work)
{
	bool queued;

	pthread_mutex_lock(&worker->queue.lock);
	queued = work_queue_push(&worker->queue, work);
	if (queued)
		pthread_cond_signal(&worker->wake);
	pthread_mutex_unlock(&worker->queue.lock);
	return queued;
}

/* Answers one request: here for root's control requests, else through the
 * worker that owns its type (the reply then comes back in deliver_replies). */
static void answer(struct vnfs_server *server, struct connection *connection, const char *line,
		   size_t length)
{
	char *reply = NULL;
	struct vnfs_request *request = admit(server, connection, line, length, &reply);
	enum answerer answerer;
	struct work work;

	if (request == NULL) {
		queue_reply(server, connection, reply);
		return;
	}
	answerer = answerer_of[request->type];
	if (answerer == ANSWER_INLINE) {
		queue_reply(server, connection, respond(server, request, &connection->peer));
		free(request);
		return;
	}
	work = (struct work){
		.request = request,
		.peer = connection->peer,
		.connection = (unsigned)(connection - server->connections),
		.serial = connection->serial,
	};
	if (!worker_submit(&server->workers[answerer], &work)) {
		free(request);
		connection->close_when_sent = true;
		queue_reply(server, connection,
			    vnfs_reply_encode_error("internal error: the helper is busy"));
		return;
	}
	connection->awaiting_worker = true;
	/* The worker always answers; a client that gives up hangs up, which
	 * poll reports, and its reply is then dropped. */
	connection->deadline_ms = INT64_MAX;
}

static int start_worker(struct vnfs_server *server, struct worker *worker, char *error,
			size_t error_size)
{
	int result;

	worker->server = server;
	if (work_queue_init(&worker->queue, server->options.max_clients) < 0 ||
	    pthread_cond_init(&worker->wake, NULL) != 0)
		return vnfs_fail(error, error_size, "out of memory for a worker thread");
	result = pthread_create(&worker->thread, NULL, worker_thread, worker);
	if (result != 0)
		return vnfs_fail(error, error_size, "cannot start a worker thread: %s",
				 strerror(result));
	worker->started = true;
	return 0;
}

/* Joins the worker.  One stuck in a handler (a report_dir on a hung NFS
 * server) holds the stop until it returns, as any thread in the kernel would. */
static void stop_worker(struct worker *worker)
{
	if (worker->queue.items == NULL)
		return;
	if (worker->started) {
		pthread_mutex_lock(&worker->queue.lock);
		worker->stopping = true;
		pthread_cond_signal(&worker->wake);
		pthread_mutex_unlock(&worker->queue.lock);
		pthread_join(worker->thread, NULL);
		worker->started = false;
	}
	pthread_cond_destroy(&worker->wake);
	work_queue_destroy(&worker->queue);
}

/* ---- reading and writing -------------------------------------------- */

/* Writes what the socket takes now.  Returns false if the connection closed. */
static bool flush_output(struct vnfs_server *server, struct connection *connection)
{
	while (connection->output_sent < connection->output_length) {
		ssize_t sent = send(connection->fd, connection->output + connection->output_sent,
				    connection->output_length - connection->output_sent,
				    MSG_NOSIGNAL | MSG_DONTWAIT);

		if (sent > 0) {
			connection->output_sent += (size_t)sent;
			continue;
		}
		if (sent < 0 && errno == EINTR)
			continue;
		if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return true;
		vnfs_debug("socket: pid %ld went away before its reply: %s",
			   (long)connection->peer.pid, sent < 0 ? strerror(errno) : "closed");
		connection_close(connection);
		return false;
	}
	free(connection->output);
	connection->output = NULL;
	connection->output_length = connection->output_sent = 0;
	if (connection->close_when_sent) {
		connection_close(connection);
		return false;
	}
	/* Waiting for the next request now: a fresh deadline to deliver it. */
	connection->deadline_ms = now_ms() + server->options.client_timeout_ms;
	return true;
}

/* Takes one complete line off the front of the input, if there is one. */
static bool take_line(struct connection *connection, char **line, size_t *length)
{
	char *newline = memchr(connection->input + connection->input_scanned, '\n',
			       connection->input_used - connection->input_scanned);

	if (newline == NULL) {
		connection->input_scanned = connection->input_used;
		return false;
	}
	*line = connection->input;
	*length = (size_t)(newline - connection->input);
	return true;
}

static void drop_line(struct connection *connection, size_t length)
{
	size_t consumed = length + 1;

	memmove(connection->input, connection->input + consumed,
		connection->input_used - consumed);
	connection->input_used -= consumed;
	connection->input_scanned = 0;
}

/*
 * Answers the requests that have arrived, one at a time: the next is only
 * looked at once the previous reply is fully sent.
 */
static void process_input(struct vnfs_server *server, struct connection *connection)
{
	while (connection->fd >= 0 && connection->output == NULL && !connection->awaiting_worker &&
	       !connection->close_when_sent) {
		char *line;
		size_t length;

		if (take_line(connection, &line, &length)) {
			answer(server, connection, line, length);
			drop_line(connection, length);
			if (connection->awaiting_worker)
				return;
		} else if (connection->input_used > server->options.max_message_bytes) {
			connection->close_when_sent = true;
			queue_reply(server, connection,
				    vnfs_reply_encode_error("message exceeds %zu bytes",
						     server->options.max_message_bytes));
		} else if (connection->peer_closed) {
			if (connection->input_used == 0) {
				connection_close(connection);
				return;
			}
			connection->close_when_sent = true;
			queue_reply(server, connection,
				    vnfs_reply_encode_error("truncated message: the connection was shut "
						     "down before the closing newline"));
		} else {
			return;
		}
		if (connection->output == NULL) { /* could not queue: out of memory */
			connection_close(connection);
			return;
		}
		if (!flush_output(server, connection))
			return;
	}
}

/* Replies the workers finished: each goes to its connection if that is
 * still the one that asked, and is dropped otherwise. */
static void deliver_replies(struct vnfs_server *server)
{
	char bytes[64];
	struct work work;

	while (read(server->done_fds[0], bytes, sizeof(bytes)) > 0)
		;
	for (;;) {
		struct connection *connection;
		bool taken;

		pthread_mutex_lock(&server->done.lock);
		taken = work_queue_pop(&server->done, &work);
		pthread_mutex_unlock(&server->done.lock);
		if (!taken)
			return;
		connection = &server->connections[work.connection];
		if (connection->fd < 0 || connection->serial != work.serial ||
		    !connection->awaiting_worker) {
			free(work.reply);
			continue;
		}
		connection->awaiting_worker = false;
		queue_reply(server, connection, work.reply);
		if (connection->output == NULL)
			connection_close(connection);
		else if (flush_output(server, connection))
			process_input(server, connection);
	}
}

static bool grow_input(struct vnfs_server *server, struct connection *connection)
{
	size_t limit = server->options.max_message_bytes + 1;
	size_t capacity = connection->input_capacity ? connection->input_capacity * 2
						     : INITIAL_INPUT_BYTES;
	char *bigger;

	if (capacity > limit)
		capacity = limit;
	bigger = realloc(connection->input, capacity);
	if (bigger == NULL)
		return false;
	connection->input = bigger;
	connection->input_capacity = capacity;
	return true;
}

static void read_input(struct vnfs_server *server, struct connection *connection)
{
	size_t limit = server->options.max_message_bytes + 1;

	while (connection->input_used < limit) {
		ssize_t received;

		if (connection->input_used == connection->input_capacity &&
		    !grow_input(server, connection)) {
			vnfs_error("socket: out of memory reading a request");
			connection_close(connection);
			return;
		}
		received = recv(connection->fd, connection->input + connection->input_used,
				connection->input_capacity - connection->input_used, MSG_DONTWAIT);
		if (received > 0) {
			connection->input_used += (size_t)received;
			continue;
		}
		if (received == 0) {
			connection->peer_closed = true;
			break;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			break;
		vnfs_debug("socket: reading from pid %ld: %s", (long)connection->peer.pid,
			   strerror(errno));
		connection_close(connection);
		return;
	}
	process_input(server, connection);
}

static void handle_events(struct vnfs_server *server, struct connection *connection,
			  short revents)
{
	if (connection->awaiting_worker) {
		if (revents & (POLLERR | POLLHUP | POLLNVAL))
			connection_close(connection); /* gave up: its reply is dropped */
		return;
	}
	if (connection->output != NULL) {
		if ((revents & (POLLOUT | POLLERR | POLLHUP)) && flush_output(server, connection))
			process_input(server, connection);
		return;
	}
	if (revents & POLLIN)
		read_input(server, connection);
	else if (revents & (POLLERR | POLLHUP | POLLNVAL))
		connection_close(connection);
}

static void expire(struct vnfs_server *server, struct connection *connection, int64_t now)
{
	if (connection->fd < 0 || now < connection->deadline_ms)
		return;
	if (connection->output != NULL) {
		vnfs_info("socket: pid %ld did not take its reply within %d ms: disconnected",
			  (long)connection->peer.pid, server->options.client_timeout_ms);
	} else {
		char message[128];

		snprintf(message, sizeof(message), "timed out: no complete request within %d ms",
			 server->options.client_timeout_ms);
		send_parting_error(connection->fd, message);
		vnfs_debug("socket: pid %ld sent no request within %d ms: disconnected",
			   (long)connection->peer.pid, server->options.client_timeout_ms);
	}
	connection_close(connection);
}

/* ---- accepting ------------------------------------------------------ */

static struct connection *free_connection(struct vnfs_server *server)
{
	for (unsigned i = 0; i < server->options.max_clients; i++) {
		if (server->connections[i].fd < 0)
			return &server->connections[i];
	}
	return NULL;
}

/*
 * Why a new connection from uid is turned away, or NULL to take it: the
 * socket is full; or, for anyone but root, the share not kept for root is
 * full, or uid already holds its own share.
 */
static const char *refusal(const struct vnfs_server *server, uid_t uid, char *message,
			   size_t size)
{
	unsigned total = 0, not_root = 0, of_uid = 0;

	for (unsigned i = 0; i < server->options.max_clients; i++) {
		const struct connection *connection = &server->connections[i];

		if (connection->fd < 0)
			continue;
		total++;
		not_root += connection->peer.uid != 0;
		of_uid += connection->peer.uid == uid;
	}
	if (total >= server->options.max_clients ||
	    (uid != 0 && not_root >= server->options.max_clients - server->root_reserved)) {
		snprintf(message, size, "too many clients (%u connected): try again later", total);
		return message;
	}
	if (uid != 0 && of_uid >= server->options.max_clients_per_user) {
		snprintf(message, size,
			 "too many connections from uid %u (at most %u at once): try again later",
			 (unsigned)uid, server->options.max_clients_per_user);
		return message;
	}
	return NULL;
}

static void accept_one(struct vnfs_server *server, int fd)
{
	struct ucred credentials;
	socklen_t size = sizeof(credentials);
	struct connection *connection;
	char message[128];

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size) < 0) {
		vnfs_warning("socket: cannot read the peer's credentials: %s", strerror(errno));
		close(fd);
		return;
	}
	if (refusal(server, credentials.uid, message, sizeof(message)) != NULL ||
	    (connection = free_connection(server)) == NULL) {
		send_parting_error(fd, message);
		/* debug, not warning: a flood of these must not flood the log */
		vnfs_debug("socket: refused pid %ld uid %u: %s", (long)credentials.pid,
			   (unsigned)credentials.uid, message);
		close(fd);
		return;
	}
	connection->fd = fd;
	connection->serial = ++server->next_serial;
	connection->peer.pid = credentials.pid;
	connection->peer.uid = credentials.uid;
	connection->peer.gid = credentials.gid;
	connection->deadline_ms = now_ms() + server->options.client_timeout_ms;
}

static void accept_all(struct vnfs_server *server)
{
	for (;;) {
		int fd = accept4(server->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd >= 0) {
			accept_one(server, fd);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			vnfs_warning("socket: accept: %s", strerror(errno));
			server->accept_paused_until_ms = now_ms() + ACCEPT_PAUSE_MS;
		}
		return;
	}
}

/* ---- the thread ----------------------------------------------------- */

/* Fills the poll set; returns how many entries, and the poll timeout. */
static nfds_t build_poll_set(struct vnfs_server *server, int64_t now, int *timeout_ms)
{
	nfds_t count = FIXED_POLL_FDS;
	int64_t nearest = INT64_MAX;

	server->poll_fds[0] = (struct pollfd){ .fd = server->wake_fds[0], .events = POLLIN };
	server->poll_fds[1] = (struct pollfd){ .fd = server->listen_fd, .events = POLLIN };
	server->poll_fds[2] = (struct pollfd){ .fd = server->done_fds[0], .events = POLLIN };
	if (now < server->accept_paused_until_ms) {
		server->poll_fds[1].fd = -1;
		nearest = server->accept_paused_until_ms;
	}
	for (unsigned i = 0; i < server->options.max_clients; i++) {
		struct connection *connection = &server->connections[i];

		if (connection->fd < 0)
			continue;
		/* Waiting on a worker: only a hang-up matters (always reported). */
		server->poll_fds[count] = (struct pollfd){
			.fd = connection->fd,
			.events = connection->awaiting_worker ? 0
				  : connection->output ? POLLOUT : POLLIN,
		};
		server->polled_connections[count - FIXED_POLL_FDS] = i;
		count++;
		if (connection->deadline_ms < nearest)
			nearest = connection->deadline_ms;
	}
	if (nearest == INT64_MAX)
		*timeout_ms = -1;
	else if (nearest <= now)
		*timeout_ms = 0;
	else
		*timeout_ms = nearest - now > INT_MAX ? INT_MAX : (int)(nearest - now);
	return count;
}

static void *server_thread(void *argument)
{
	struct vnfs_server *server = argument;

	for (;;) {
		int timeout_ms;
		nfds_t count = build_poll_set(server, now_ms(), &timeout_ms);
		int ready = poll(server->poll_fds, count, timeout_ms);
		int64_t now;

		if (ready < 0) {
			if (errno != EINTR) {
				vnfs_error("socket: poll: %s", strerror(errno));
				return NULL;
			}
			continue;
		}
		if (server->poll_fds[0].revents != 0)
			break; /* vnfs_server_stop */
		if (server->poll_fds[2].revents & POLLIN)
			deliver_replies(server);
		if (server->poll_fds[1].revents & POLLIN)
			accept_all(server);
		for (nfds_t i = FIXED_POLL_FDS; i < count; i++) {
			struct connection *connection =
				&server->connections[server->polled_connections[i - FIXED_POLL_FDS]];

			if (server->poll_fds[i].revents != 0 &&
			    connection->fd == server->poll_fds[i].fd)
				handle_events(server, connection, server->poll_fds[i].revents);
		}
		now = now_ms();
		for (unsigned i = 0; i < server->options.max_clients; i++)
			expire(server, &server->connections[i], now);
	}
	return NULL;
}

/* ---- the socket ----------------------------------------------------- */

/* mkdir -p of the socket's directory, 0755 for what it creates. */
static int make_parent_directories(const char *socket_path, char *error, size_t error_size)
{
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;

	snprintf(path, sizeof(path), "%s", socket_path);
	for (slash = strchr(path + 1, '/'); slash != NULL; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(path, 0755) == 0) {
			/* Whatever the umask: users must reach the socket to QUERY. */
			if (chmod(path, 0755) < 0)
				return vnfs_fail(error, error_size, "cannot set the mode of %s: %s", path,
					    strerror(errno));
		} else if (errno != EEXIST) {
			return vnfs_fail(error, error_size, "cannot create directory %s for the socket: %s",
				    path, strerror(errno));
		}
		*slash = '/';
	}
	return 0;
}

/*
 * A socket file left by a helper that died is removed; one that still
 * answers belongs to a running helper, and taking it over would orphan that
 * helper's clients, so that is an error.
 */
static int remove_stale_socket(const char *path, char *error, size_t error_size)
{
	struct sockaddr_un address = { .sun_family = AF_UNIX };
	struct stat status;
	int fd, connected, saved;

	if (lstat(path, &status) < 0) {
		if (errno == ENOENT)
			return 0;
		return vnfs_fail(error, error_size, "cannot check %s: %s", path, strerror(errno));
	}
	if (!S_ISSOCK(status.st_mode))
		return vnfs_fail(error, error_size, "%s exists and is not a socket: not removing it",
			    path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return vnfs_fail(error, error_size, "socket: %s", strerror(errno));
	memcpy(address.sun_path, path, strlen(path) + 1);
	connected = connect(fd, (struct sockaddr *)&address, sizeof(address));
	saved = errno;
	close(fd);
	if (connected == 0 || saved == EAGAIN)
		return vnfs_fail(error, error_size, "another vnfs-helper is already listening on %s",
			    path);
	if (saved != ECONNREFUSED)
		return vnfs_fail(error, error_size, "cannot check whether %s is in use: %s", path,
			    strerror(saved));
	if (unlink(path) < 0 && errno != ENOENT)
		return vnfs_fail(error, error_size, "cannot remove the stale socket %s: %s", path,
			    strerror(errno));
	vnfs_info("socket: removed the stale socket %s", path);
	return 0;
}

static int open_listening_socket(struct vnfs_server *server, char *error, size_t error_size)
{
	struct sockaddr_un address = { .sun_family = AF_UNIX };
	const char *path = server->socket_path;
	struct stat status;
	int fd;

	if (make_parent_directories(path, error, error_size) < 0 ||
	    remove_stale_socket(path, error, error_size) < 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return vnfs_fail(error, error_size, "socket: %s", strerror(errno));
	/* Linux gives a bound socket file the mode of the socket's inode (less
	 * the umask): set it first, so the file is never more open than asked. */
	if (fchmod(fd, server->options.socket_mode) < 0)
		vnfs_debug("socket: fchmod before bind: %s", strerror(errno));
	memcpy(address.sun_path, path, strlen(path) + 1);
	if (bind(fd, (struct sockaddr *)&address, sizeof(address)) < 0 ||
	    chmod(path, server->options.socket_mode) < 0 || listen(fd, LISTEN_BACKLOG) < 0 ||
	    stat(path, &status) < 0) {
		int saved = errno;

		close(fd);
		unlink(path);
		return vnfs_fail(error, error_size, "cannot listen on %s: %s", path, strerror(saved));
	}
	server->socket_device = status.st_dev;
	server->socket_inode = status.st_ino;
	server->listen_fd = fd;
	return 0;
}

/* Only the socket file this server created: a newer helper may own the path. */
static void remove_own_socket(const struct vnfs_server *server)
{
	struct stat status;

	if (lstat(server->socket_path, &status) == 0 && status.st_dev == server->socket_device &&
	    status.st_ino == server->socket_inode)
		unlink(server->socket_path);
}

static int apply_defaults(struct vnfs_server *server, const struct vnfs_server_options *options,
			  char *error, size_t error_size)
{
	server->options = *options;
	if (options->socket_path == NULL || options->socket_path[0] != '/')
		return vnfs_fail(error, error_size, "the socket path must be absolute, not '%s'",
			    options->socket_path ? options->socket_path : "");
	if (strlen(options->socket_path) >= sizeof(server->socket_path))
		return vnfs_fail(error, error_size, "socket path %s is longer than %zu bytes",
			    options->socket_path, sizeof(server->socket_path) - 1);
	memcpy(server->socket_path, options->socket_path, strlen(options->socket_path) + 1);
	server->options.socket_path = server->socket_path;
	if (server->options.max_message_bytes == 0)
		server->options.max_message_bytes = VNFS_DEFAULT_MAX_MESSAGE;
	if (server->options.max_message_bytes > INT_MAX - 1)
		server->options.max_message_bytes = INT_MAX - 1;
	if (server->options.client_timeout_ms <= 0)
		server->options.client_timeout_ms = DEFAULT_CLIENT_TIMEOUT_MS;
	if (server->options.max_clients == 0)
		server->options.max_clients = DEFAULT_MAX_CLIENTS;
	if (server->options.max_clients_per_user == 0)
		server->options.max_clients_per_user = DEFAULT_MAX_CLIENTS_PER_USER;
	server->root_reserved = server->options.max_clients / 4;
	if (server->root_reserved == 0)
		server->root_reserved = 1;
	return 0;
}

static void close_pipe(int fds[2])
{
	for (int i = 0; i < 2; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

/* After the socket thread: the workers may still post replies until joined. */
static void destroy(struct vnfs_server *server)
{
	for (int i = 0; i < ANSWERER_COUNT; i++)
		stop_worker(&server->workers[i]);
	work_queue_destroy(&server->done);
	if (server->connections != NULL) {
		for (unsigned i = 0; i < server->options.max_clients; i++)
			connection_close(&server->connections[i]);
	}
	if (server->listen_fd >= 0) {
		close(server->listen_fd);
		remove_own_socket(server);
	}
	close_pipe(server->wake_fds);
	close_pipe(server->done_fds);
	free(server->connections);
	free(server->poll_fds);
	free(server->polled_connections);
	free(server);
}

/* The threads take no signals: they belong to the daemon's main loop. */
static int start_threads(struct vnfs_server *server, char *error, size_t error_size)
{
	sigset_t all, previous;
	int result = 0;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &previous);
	for (int i = ANSWER_INLINE + 1; i < ANSWERER_COUNT && result == 0; i++)
		result = start_worker(server, &server->workers[i], error, error_size);
	if (result == 0) {
		result = pthread_create(&server->thread, NULL, server_thread, server);
		if (result != 0)
			vnfs_fail(error, error_size, "cannot start the socket thread: %s",
				  strerror(result));
	}
	pthread_sigmask(SIG_SETMASK, &previous, NULL);
	return result == 0 ? 0 : -1;
}

int vnfs_server_start(struct vnfs_server **result, const struct vnfs_server_options *options,
		      vnfs_request_handler handler, void *context, char *error, size_t error_size)
{
	struct vnfs_server *server = calloc(1, sizeof(*server));

	*result = NULL;
	if (server == NULL)
		return vnfs_fail(error, error_size, "out of memory");
	server->listen_fd = -1;
	server->wake_fds[0] = server->wake_fds[1] = -1;
	server->done_fds[0] = server->done_fds[1] = -1;
	server->handler = handler;
	server->context = context;
	if (apply_defaults(server, options, error, error_size) < 0) {
		destroy(server);
		return -1;
	}
	server->connections = calloc(server->options.max_clients, sizeof(*server->connections));
	server->poll_fds = calloc(server->options.max_clients + FIXED_POLL_FDS,
				  sizeof(*server->poll_fds));
	server->polled_connections = calloc(server->options.max_clients,
					    sizeof(*server->polled_connections));
	if (server->connections == NULL || server->poll_fds == NULL ||
	    server->polled_connections == NULL ||
	    work_queue_init(&server->done, server->options.max_clients) < 0) {
		destroy(server);
		return vnfs_fail(error, error_size, "out of memory for %u clients",
			    options->max_clients);
	}
	for (unsigned i = 0; i < server->options.max_clients; i++)
		server->connections[i].fd = -1;
	if (pipe2(server->wake_fds, O_CLOEXEC | O_NONBLOCK) < 0 ||
	    pipe2(server->done_fds, O_CLOEXEC | O_NONBLOCK) < 0) {
		vnfs_fail(error, error_size, "pipe: %s", strerror(errno));
		destroy(server);
		return -1;
	}
	if (open_listening_socket(server, error, error_size) < 0 ||
	    start_threads(server, error, error_size) < 0) {
		destroy(server);
		return -1;
	}
	vnfs_info("socket: listening on %s (mode %04o, at most %u clients, %u of them kept for "
		  "root, %u per user)", server->socket_path, server->options.socket_mode,
		  server->options.max_clients, server->root_reserved,
		  server->options.max_clients_per_user);
	*result = server;
	return 0;
}

void vnfs_server_stop(struct vnfs_server *server)
{
	char byte = 0;

	if (server == NULL)
		return;
	while (write(server->wake_fds[1], &byte, 1) < 0 && errno == EINTR)
		;
	pthread_join(server->thread, NULL);
	destroy(server);
}
