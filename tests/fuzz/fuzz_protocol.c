/*
 * fuzz_protocol.c — libFuzzer target for vnfs_request_decode, the code that
 * reads whatever any local user writes to the root helper's socket.
 *
 * Beyond "no crash, no leak, no undefined behaviour" (the sanitizers), it
 * checks two properties: every refusal says why, and every accepted request
 * survives encode → decode unchanged.  Built and run by run-fuzz.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/protocol.h"

static void check_same(const struct vnfs_request *a, const struct vnfs_request *b)
{
	/* The workload's source, job and part, whichever form it came in. */
	if (a->type != b->type || !vnfs_workload_equal(&a->workload, &b->workload) ||
	    a->uid != b->uid ||
	    a->cgroup_id != b->cgroup_id || strcmp(a->cgroup_path, b->cgroup_path) != 0 ||
	    strcmp(a->report_dir, b->report_dir) != 0 || a->tags.count != b->tags.count ||
	    a->tags.used != b->tags.used ||
	    memcmp(a->tags.buffer, b->tags.buffer, a->tags.used) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vnfs_request request, again;
	char error[512] = "";
	char *line;

	if (vnfs_request_decode((const char *)data, size, VNFS_DEFAULT_MAX_MESSAGE, &request,
				error, sizeof(error)) < 0) {
		if (error[0] == '\0')
			abort();
		return 0;
	}
	line = vnfs_request_encode(&request);
	if (line == NULL)
		abort();
	if (vnfs_request_decode(line, strlen(line), VNFS_DEFAULT_MAX_MESSAGE, &again, error,
				sizeof(error)) < 0)
		abort();
	check_same(&request, &again);
	free(line);
	return 0;
}
