/*
 * reply.h — the helper's replies, one typed shape per request type, with
 * an encoder (the helper's socket server) and a strict decoder (the clients:
 * the SPANK plugin, vnfs-report) that are each other's inverse.
 *
 * On the wire (docs/PROTOCOL.md) a reply is one JSON object and '\n':
 *   {"v":1,"ok":true, ...the fields of its type...}
 *   {"v":1,"ok":false,"error":"..."}
 * The fields of an ok reply, by the request it answers:
 *   REGISTER    "slot": the registry slot the step got
 *   UNREGISTER  none
 *   FINISH      "job": the job's final counts (vnfs_job_to_json)
 *   QUERY       "job": the job (or one step of it) as counted now, or as the
 *               history holds it once finished
 *   LIST        "jobs": one entry per step the caller may see,
 *               {job, step, uid, user, running}
 *               (another source's: source, job, part for job, step)
 *   STATUS      "status": the helper's health (an object, see below)
 *   HISTORY     "jobs": finished jobs (vnfs_job_to_json), "truncated": more
 *               matched than one reply holds (VNFS_HISTORY_MAX_STEPS)
 */
#ifndef VNFS_REPLY_H
#define VNFS_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "escape.h"
#include "protocol.h"
#include "record_json.h"

struct json_object;

/* One step of a LIST reply.  user is the record's (33 bytes at most), or
 * decoded its JSON text, which may be longer (lib/escape.h). */
struct vnfs_list_entry {
	struct vnfs_workload workload;
	uint32_t uid;
	char user[33 * VNFS_ESCAPE_GROWTH];
	bool running;    /* false: ended, kept until its job finishes */
};

struct vnfs_reply {
	enum vnfs_request_type type;  /* of the request answered */
	bool ok;
	char error[1024];             /* !ok: why, for the caller's message */

	uint32_t slot;                /* REGISTER */
	struct vnfs_owned_job job;    /* FINISH, QUERY */
	size_t entry_count;           /* LIST */
	struct vnfs_list_entry *entries;
	/* STATUS: kept a JSON object, checked to be one.  Nothing in C reads
	 * its fields (people and scripts do, through jq), and its keys come
	 * from tables elsewhere (operation names, attach methods): a struct
	 * would be a second definition of them with no reader. */
	struct json_object *status;
	size_t job_count;             /* HISTORY */
	struct vnfs_owned_job *jobs;
	bool truncated;
};

/* An empty ok reply to a request of type (what UNREGISTER answers). */
void vnfs_reply_init(struct vnfs_reply *reply, enum vnfs_request_type type);

/* Makes reply an error reply (freeing what it held) with the message. */
void vnfs_reply_fail(struct vnfs_reply *reply, const char *format, ...)
	__attribute__((format(printf, 2, 3)));

/* Frees what reply holds and leaves it empty (of the same type). */
void vnfs_reply_free(struct vnfs_reply *reply);

/* The reply as one line (with '\n'): a malloc'd string, NULL when out of
 * memory or the reply's type is out of range. */
char *vnfs_reply_encode(const struct vnfs_reply *reply);

/* An error reply as one line (with '\n'), malloc'd; NULL when out of memory. */
char *vnfs_reply_encode_error(const char *format, ...) __attribute__((format(printf, 1, 2)));

/*
 * Decodes one reply to a request of type from text (length bytes, no NUL
 * needed, a trailing '\n' allowed).  Returns 0 with *reply filled (ok or
 * not: an ok:false reply is a reply; its message is in reply->error), or -1
 * with a message in error when the text is no reply of that type (then
 * *reply is empty).  The caller frees *reply with vnfs_reply_free.
 */
int vnfs_reply_decode(const char *text, size_t length, enum vnfs_request_type type,
		      struct vnfs_reply *reply, char *error, size_t error_size);

#endif /* VNFS_REPLY_H */
