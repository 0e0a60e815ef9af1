/*
 * client.h — one request/reply exchange with vnfs-helper, for the SPANK
 * plugin and vnfs-report.
 */
#ifndef VNFS_CLIENT_H
#define VNFS_CLIENT_H

#include <stddef.h>

#include "protocol.h"
#include "reply.h"

/* vnfs_client_call: the helper answered, but with no reply of the
 * request's type (another protocol version, a bug): worth saying, where an
 * unreachable helper or a refusal may be expected. */
#define VNFS_CLIENT_UNREADABLE (-2)

/* vnfs_client_call: nothing listens at the socket path (no such socket, or
 * one a helper left when it stopped: connection refused), which means the
 * helper is not running, where other failures mean a helper that is unwell.
 * vnfs-report says so instead of showing no running job without a word. */
#define VNFS_CLIENT_NOT_RUNNING (-3)

/*
 * Connects to socket_path, sends request, waits at most timeout_ms in all
 * for the reply and decodes it (lib/reply.h) as the reply to request's type.
 * Returns 0 with *reply holding the helper's ok:true answer (the caller
 * frees it with vnfs_reply_free).  Otherwise *reply is empty (freeing it is
 * harmless) and error holds a message: VNFS_CLIENT_NOT_RUNNING when nothing
 * listens at socket_path, -1 when the helper could not be reached otherwise,
 * timed out, or answered ok:false (then reply->ok is false and error is its
 * message), VNFS_CLIENT_UNREADABLE when its reply does not decode.
 */
int vnfs_client_call(const char *socket_path, const struct vnfs_request *request,
		     int timeout_ms, struct vnfs_reply *reply, char *error, size_t error_size);

#endif /* VNFS_CLIENT_H */
