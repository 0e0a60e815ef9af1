/*
 * server.h — the helper's Unix socket server: accepts the SPANK plugin's and
 * vnfs-report's connections, decodes requests (lib/protocol.h), enforces who
 * may ask what, and hands each request to one handler on its own thread.
 *
 * Authorization (docs/PROTOCOL.md) is the server's job, from SO_PEERCRED:
 *   REGISTER, UNREGISTER, FINISH   only from uid 0; others never reach the handler.
 *   QUERY    the handler names the job's owner in its answer (owner_known,
 *            owner_uid); when the caller is neither root nor that owner, the
 *            server answers VNFS_QUERY_NOT_HERE_FORMAT, the same as for a job
 *            that is not here (and an ok answer without an owner fails closed).
 *   LIST     the handler gets the peer and lists only what it may see.
 *   STATUS   anyone.
 *
 * Threads: REGISTER and UNREGISTER are handled on the socket thread; FINISH
 * on root's finisher thread; QUERY, LIST and STATUS on the readers' thread.
 * The handler must therefore be safe to call from three threads at once.
 */
#ifndef VNFS_SERVER_H
#define VNFS_SERVER_H

#include <stddef.h>
#include <sys/types.h>

#include "lib/protocol.h"
#include "lib/reply.h"

struct vnfs_server;

/* What a caller other than root hears of a job that is not here and of a job
 * of another user alike, so nobody learns which jobs run on the node. */
#define VNFS_QUERY_NOT_HERE_FORMAT "%s is not running on this node" /* "job 42" */

struct vnfs_peer {
	pid_t pid;
	uid_t uid;
	gid_t gid;
};

/* What a handler answers: the reply, and for QUERY who owns the job (for
 * the server's check, never sent: the reply has no such field). */
struct vnfs_answer {
	struct vnfs_reply reply;  /* vnfs_reply_init'd for the request's type */
	bool owner_known;
	uint32_t owner_uid;
};

/* Called from the server thread for each decoded request; fills answer
 * (the server encodes and frees its reply) and returns 0, or returns -1 when
 * it has no answer at all (the caller then hears of an internal error).
 * Authorization is the server's job, not the handler's (but LIST filters by
 * peer, see above). */
typedef int (*vnfs_request_handler)(void *context, const struct vnfs_request *request,
				    const struct vnfs_peer *peer, struct vnfs_answer *answer);

struct vnfs_server_options {
	const char *socket_path;    /* its directory is created (0755) if missing */
	unsigned socket_mode;       /* e.g. 0666: users may QUERY their own jobs */
	size_t max_message_bytes;   /* request bound; 0 = VNFS_DEFAULT_MAX_MESSAGE */
	int client_timeout_ms;      /* to send a request / take a reply; <= 0 = 5000 */
	unsigned max_clients;       /* connections at once; 0 = 64; a quarter kept for root */
	unsigned max_clients_per_user; /* of them, one uid other than root's; 0 = 8 */
};

/*
 * Binds the socket (removing a stale one; refusing if another helper answers
 * on it) and starts the server thread.  Returns 0, or -1 with a message in
 * error.  options is copied.
 */
int vnfs_server_start(struct vnfs_server **server, const struct vnfs_server_options *options,
		      vnfs_request_handler handler, void *context, char *error, size_t error_size);

/* Stops the thread (joins it), closes every connection, unlinks the socket.
 * NULL is allowed. */
void vnfs_server_stop(struct vnfs_server *server);

#endif /* VNFS_SERVER_H */
