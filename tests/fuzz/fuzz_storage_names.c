/*
 * fuzz_storage_names.c — libFuzzer target for lib/containers/storage_names.c,
 * which reads containers/storage's containers.json, whose container names
 * began as users' `podman run --name`, in a root daemon.
 *
 * The input is the file's text, searched for a fixed id.  Checked beyond
 * the sanitizers: every refusal says why and leaves no name; a name found
 * is a valid container name, terminated in its buffer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/containers/storage_names.h"
#include "lib/workload.h"

#define ID "a4ab434a7d0a9e33a94e6c2990bf41c2740521d6eeeb6dfda37c603f7b9738c2"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[VNFS_CONTAINER_NAME_MAX + 1], error[512] = "";
	int result = vnfs_storage_container_name((const char *)data, size, ID, name, sizeof(name),
						 error, sizeof(error));

	if (result < 0 && (error[0] == '\0' || name[0] != '\0'))
		abort();
	if (result == 0 && name[0] != '\0')
		abort();
	if (result == 1 &&
	    (memchr(name, '\0', sizeof(name)) == NULL || !vnfs_container_name_valid(name)))
		abort();
	return 0;
}
