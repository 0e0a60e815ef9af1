/*
 * protocol.h — the wire protocol between the helper and its clients (the
 * SPANK plugin, vnfs-report): the one definition of every message.
 *
 * Transport: a Unix stream socket.  A client writes one JSON object followed
 * by '\n' and reads one JSON object followed by '\n'; a connection may carry
 * several requests in turn.  Every message carries "v": VNFS_PROTOCOL_VERSION
 * and is at most max_message_bytes long (vnfs.conf, default 64 KiB).  The
 * helper answers anything it cannot decode with an error reply and closes the
 * connection.  Replies are lib/reply.h's; lib/client.h makes one exchange.
 * docs/PROTOCOL.md documents the fields with examples.
 */
#ifndef VNFS_PROTOCOL_H
#define VNFS_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tags.h"
#include "workload.h"

#define VNFS_PROTOCOL_VERSION 1
#define VNFS_DEFAULT_MAX_MESSAGE 65536

struct json_object;

enum vnfs_request_type {
	VNFS_REQUEST_REGISTER,   /* root: a step's cgroup belongs to {job, step} */
	VNFS_REQUEST_UNREGISTER, /* root: the step ended (final read, end time) */
	VNFS_REQUEST_FINISH,     /* root: the job ended: report, release slots */
	VNFS_REQUEST_QUERY,      /* a job's (or step's) counters, live */
	VNFS_REQUEST_LIST,       /* jobs the helper holds, visible to the caller */
	VNFS_REQUEST_STATUS,     /* helper health: attach methods, slots, version */
	VNFS_REQUEST_HISTORY,    /* the caller's finished jobs in a time range */
	VNFS_REQUEST_TYPES
};

/*
 * A request names its workload in one of two forms.  Slurm's numbers,
 * {"job": 42, "step": 0} (the plugin's, and every helper's since the
 * first), or the general form, {"source": "slurm", "job": "42", "part":
 * "0"}; both decode to the same workload, and the encoder writes Slurm's
 * workloads in the first form so that an older helper understands a newer
 * plugin.  A Slurm step must have a part; FINISH names a whole job.
 */
struct vnfs_request {
	enum vnfs_request_type type;
	struct vnfs_workload workload; /* all but LIST, STATUS, HISTORY; part "":
				  * the whole job (FINISH; QUERY without a step) */
	uint32_t uid;             /* REGISTER: the job's owner */
	uint64_t cgroup_id;       /* REGISTER: 0 = resolve cgroup_path */
	char cgroup_path[256];    /* REGISTER: absolute path under the cgroup2 mount */
	struct vnfs_tag_list tags; /* REGISTER */
	char report_dir[256];     /* FINISH: "" = the helper's configured one */
	bool has_since;           /* HISTORY: jobs still running at or after since_ms */
	int64_t since_ms;         /*   (unix epoch milliseconds) */
	bool has_until;           /* HISTORY: jobs started at or before until_ms */
	int64_t until_ms;
};

/* A HISTORY reply holds at most this many steps in all; "truncated": true
 * then says there were more (the client narrows the range). */
#define VNFS_HISTORY_MAX_STEPS 1000

/* "register", "unregister", ...; NULL for an out-of-range type. */
const char *vnfs_request_type_name(enum vnfs_request_type type);

/*
 * Decodes one request.  Returns 0, or -1 with a message in error naming the
 * problem ("field 'job' must be an integer from 0 to 4294967295", "unknown
 * request type 'regster'", "message of 70000 bytes exceeds 65536").  Never
 * reads past length; text need not be NUL-terminated.
 */
int vnfs_request_decode(const char *text, size_t length, size_t max_length,
			struct vnfs_request *request, char *error, size_t error_size);

/* Encodes a request as one line (with '\n').  Returns a malloc'd string. */
char *vnfs_request_encode(const struct vnfs_request *request);

/*
 * What requests and replies (lib/reply.c) share.  vnfs_protocol_parse reads
 * one JSON value strictly (RFC 8259, nested at most max_depth deep, only
 * whitespace after it; no NUL, not empty): NULL with a message in error
 * otherwise.  vnfs_protocol_check_version: object's "v" is
 * VNFS_PROTOCOL_VERSION; 0, or -1 with a message.
 */
struct json_object *vnfs_protocol_parse(const char *text, size_t length, int max_depth,
					char *error, size_t error_size);
int vnfs_protocol_check_version(struct json_object *object, char *error, size_t error_size);

/* Field readers, with the messages both sides give: an integer from 0 to
 * UINT32_MAX; text of at most size - 1 bytes, valid UTF-8 without NUL (into
 * out).  0, or -1 with a message naming the field. */
int vnfs_protocol_get_uint32(struct json_object *value, const char *name, uint32_t *out,
			     char *error, size_t error_size);
int vnfs_protocol_get_text(struct json_object *value, const char *name, char *out, size_t size,
			   char *error, size_t error_size);

/*
 * A workload in an object, in either form (see struct vnfs_request): the
 * one JSON spelling of an identity, in requests, replies and the registry's
 * journal.  get reads "source", "job", "step", "part" from object (which
 * others it holds is the caller's check); 0, or -1 with a message.  add
 * writes Slurm's workloads as numbers, any other as text; false when out of
 * memory.
 */
int vnfs_protocol_get_workload(struct json_object *object, struct vnfs_workload *workload,
			       char *error, size_t error_size);
bool vnfs_protocol_add_workload(struct json_object *object, const struct vnfs_workload *workload);

/* Encoding: adds value (consumed; NULL, a failed allocation, is false) to
 * object as name; vnfs_protocol_line gives object (consumed) as one
 * malloc'd line with '\n', or NULL when !filled or out of memory. */
bool vnfs_protocol_add(struct json_object *object, const char *name, struct json_object *value);
char *vnfs_protocol_line(struct json_object *object, bool filled);

#endif /* VNFS_PROTOCOL_H */
