/*
 * fuzz_oci_state.c — libFuzzer target for lib/containers/oci_state.c, which
 * reads the state an OCI runtime hands vnfs-register --oci-hook on its
 * standard input (the container's id and bundle come from whoever
 * described the container).
 *
 * Checked beyond the sanitizers: every refusal says why; an accepted state
 * has terminated text, an absolute bundle, a known status and a pid for
 * any status but stopped.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/containers/oci_state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vnfs_oci_state state;
	char error[512] = "";

	if (vnfs_oci_state_parse((const char *)data, size, &state, error, sizeof(error)) < 0) {
		if (error[0] == '\0')
			abort();
		return 0;
	}
	if (memchr(state.id, '\0', sizeof(state.id)) == NULL ||
	    memchr(state.bundle, '\0', sizeof(state.bundle)) == NULL || state.bundle[0] != '/' ||
	    state.status > VNFS_OCI_STATUS_STOPPED ||
	    (state.status != VNFS_OCI_STATUS_STOPPED && state.pid <= 0))
		abort();
	return 0;
}
