/*
 * fuzz_docker_state.c — libFuzzer target for lib/containers/docker_state.c,
 * which reads dockerd's config.v2.json and hostconfig.json, whose name and
 * environment began as users' `docker run --name -e`, in a root daemon.
 *
 * The input is both files' text: config.v2.json, then a NUL byte, then
 * hostconfig.json (no NUL: hostconfig is "{}"), read for a fixed id and a
 * few variables.  Checked beyond the sanitizers: every refusal says why
 * and leaves the container cleared; a container read has a valid name,
 * terminated in its buffer, a printable parent, and each variable SET only
 * with a terminated value, the others with none.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/containers/docker_state.h"
#include "lib/workload.h"

#define ID "c0ffee5a8e2b4d7f9a1c3e5b7d9f1a3c5e7b9d1f3a5c7e9b1d3f5a7c9e1b3d5f"
#define TERMINATED(field) (memchr((field), '\0', sizeof(field)) != NULL)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool cleared(const struct vnfs_docker_container *container)
{
	return container->name[0] == '\0' && container->cgroup_parent[0] == '\0' &&
	       container->env_count == 0;
}

static void check_read(const struct vnfs_docker_container *container, size_t wanted)
{
	if (!TERMINATED(container->name) || !vnfs_container_name_valid(container->name) ||
	    !TERMINATED(container->cgroup_parent) || container->env_count != wanted)
		abort();
	for (const char *at = container->cgroup_parent; *at != '\0'; at++)
		if (*at <= ' ' || *at > '~')
			abort();
	for (size_t i = 0; i < container->env_count; i++) {
		const struct vnfs_oci_env_value *env = &container->env[i];

		if (!TERMINATED(env->value) ||
		    (env->status != VNFS_OCI_ENV_SET && env->value[0] != '\0'))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const wanted[] = { "JOB_NAME", "PROJECT", "PATH" };
	static struct vnfs_docker_container container; /* 12 KiB */
	const char *text = (const char *)data;
	const char *nul = memchr(text, '\0', size);
	size_t config_length = nul != NULL ? (size_t)(nul - text) : size;
	const char *host_config = nul != NULL ? nul + 1 : "{}";
	size_t host_config_length = nul != NULL ? size - config_length - 1 : 2;
	char error[512] = "";
	int result = vnfs_docker_container_parse(text, config_length, host_config,
						 host_config_length, ID, wanted, 3, &container,
						 error, sizeof(error));

	if (result < 0 && (error[0] == '\0' || !cleared(&container)))
		abort();
	if (result == 0 && !cleared(&container))
		abort();
	if (result == 1)
		check_read(&container, 3);
	if (result < -1 || result > 1)
		abort();
	return 0;
}
