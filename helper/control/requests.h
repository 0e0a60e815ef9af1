/*
 * requests.h — what each request of the socket (lib/protocol.h) does in the
 * helper: REGISTER and UNREGISTER change steps (helper/steps/steps.h),
 * FINISH, QUERY, LIST and STATUS ask the collector, HISTORY and the QUERY of
 * a finished job read the history (history_answers.h).  The socket server
 * (server.h) decodes, authorizes and encodes; this fills the typed reply,
 * and the owner of a QUERY'd job, which the server shows to that user and
 * root only.
 */
#ifndef VNFS_REQUESTS_H
#define VNFS_REQUESTS_H

#include "helper/collect/collector.h"
#include "helper/control/server.h"
#include "helper/steps/steps.h"
#include "lib/config.h"

struct vnfs_requests {
	const struct vnfs_config *config; /* the live configuration (reloads in place) */
	struct vnfs_steps *steps;
	struct vnfs_collector *collector;
};

/* The server's handler (vnfs_request_handler), context a struct vnfs_requests. */
int vnfs_requests_handle(void *context, const struct vnfs_request *request,
			 const struct vnfs_peer *peer, struct vnfs_answer *answer);

#endif /* VNFS_REQUESTS_H */
