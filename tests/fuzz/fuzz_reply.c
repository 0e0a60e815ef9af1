/*
 * fuzz_reply.c — libFuzzer target for vnfs_reply_decode, what the SPANK
 * plugin (inside slurmstepd) and vnfs-report run on every line the helper's
 * socket sends back: whatever answers on that path, a helper of another
 * version or a broken one, must be refused, never misread or crashed on.
 *
 * Input: one byte naming the request type answered ('0' register, '1'
 * unregister, ... '6' history, in enum order; other bytes wrap around), then
 * the reply text.  Checked beyond the sanitizers: a refusal says why and
 * leaves the reply empty; an accepted reply encodes to a line that decodes
 * again, and that encodes to the same line (encode and decode are inverses
 * on everything the decoder accepts).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/reply.h"

static char *reencode(const char *line, enum vnfs_request_type type)
{
	struct vnfs_reply again;
	char error[512] = "";
	char *text;

	if (vnfs_reply_decode(line, strlen(line), type, &again, error, sizeof(error)) < 0)
		abort();
	text = vnfs_reply_encode(&again);
	vnfs_reply_free(&again);
	if (text == NULL)
		abort();
	return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum vnfs_request_type type;
	struct vnfs_reply reply;
	char error[512] = "";
	char *line, *again;

	if (size == 0)
		return 0;
	type = (enum vnfs_request_type)((uint8_t)(data[0] - '0') % VNFS_REQUEST_TYPES);
	if (vnfs_reply_decode((const char *)data + 1, size - 1, type, &reply, error,
			      sizeof(error)) < 0) {
		if (error[0] == '\0' || reply.job.steps != NULL || reply.entries != NULL ||
		    reply.jobs != NULL || reply.status != NULL)
			abort();
		return 0;
	}
	line = vnfs_reply_encode(&reply);
	vnfs_reply_free(&reply);
	if (line == NULL)
		abort();
	again = reencode(line, type);
	if (strcmp(line, again) != 0)
		abort();
	free(again);
	free(line);
	return 0;
}
