/*
 * fuzz_oci_config.c — libFuzzer target for lib/containers/oci_config.c's
 * parser of config.json, whose annotations and environment began as a
 * user's pod spec and which a root daemon reads.
 *
 * The input is the file's text, parsed with each annotation family and a
 * few environment names asked for.  Checked beyond the sanitizers: a
 * refused config leaves nothing set; an accepted one has only validated
 * text (NUL-terminated in its array, the characters of its rule), a
 * container type that agrees with kubernetes, and workload text exactly
 * when it is Kubernetes'; EITHER's answer is one of the two families'.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/containers/oci_config.h"
#include "lib/workload.h"

#define TERMINATED(field) (memchr((field), '\0', sizeof(field)) != NULL)

static const char *const env_names[] = {"JOB_ID", "SLURM_JOB_ID", "POD_NAME", "A", "JOB_ID"};
#define ENV_COUNT (sizeof(env_names) / sizeof(env_names[0]))

/* Whether text is only of the given characters, and not empty. */
static bool only(const char *text, const char *allowed)
{
	return text[0] != '\0' && strspn(text, allowed) == strlen(text);
}

#define LABEL_CHARACTERS "abcdefghijklmnopqrstuvwxyz0123456789-"

static void check_kubernetes(const struct vnfs_oci_config *config)
{
	char job[VNFS_WORKLOAD_JOB_MAX], part[VNFS_WORKLOAD_PART_MAX], error[256];
	int status = vnfs_oci_workload_text(config, job, sizeof(job), part, sizeof(part), error,
					    sizeof(error));

	if (!config->kubernetes) {
		if (status != -1 || config->namespace[0] != '\0' || config->pod_name[0] != '\0' ||
		    config->pod_uid[0] != '\0' || config->container_name[0] != '\0' ||
		    config->container_type != VNFS_CONTAINER_TYPE_NONE)
			abort();
		return;
	}
	if (status != 0 || !vnfs_workload_text_valid(job, sizeof(job)) ||
	    (part[0] != '\0' && !vnfs_workload_text_valid(part, sizeof(part))) ||
	    !only(config->namespace, LABEL_CHARACTERS) ||
	    !only(config->pod_name, LABEL_CHARACTERS ".") ||
	    (config->pod_uid[0] != '\0' && !vnfs_pod_uid_valid(config->pod_uid)))
		abort();
	switch (config->container_type) {
	case VNFS_CONTAINER_TYPE_SANDBOX:
		if (config->container_name[0] != '\0' || part[0] != '\0')
			abort();
		break;
	case VNFS_CONTAINER_TYPE_CONTAINER:
		if (!only(config->container_name, LABEL_CHARACTERS) ||
		    strcmp(part, config->container_name) != 0)
			abort();
		break;
	default:
		abort();
	}
}

static void check_config(const struct vnfs_oci_config *config)
{
	if (!TERMINATED(config->namespace) || !TERMINATED(config->pod_name) ||
	    !TERMINATED(config->pod_uid) || !TERMINATED(config->container_name) ||
	    !TERMINATED(config->cgroups_path) || config->env_count != ENV_COUNT)
		abort();
	check_kubernetes(config);
	for (const char *at = config->cgroups_path; *at != '\0'; at++)
		if (*at <= ' ' || *at > '~')
			abort();
	for (size_t i = 0; i < config->env_count; i++) {
		const struct vnfs_oci_env_value *value = &config->env[i];

		if (!TERMINATED(value->value) || value->status > VNFS_OCI_ENV_REFUSED ||
		    (value->status != VNFS_OCI_ENV_SET && value->value[0] != '\0'))
			abort();
	}
	/* A name asked for twice has one value. */
	if (memcmp(&config->env[0], &config->env[ENV_COUNT - 1], sizeof(config->env[0])) != 0)
		abort();
}

static void check_cleared(const struct vnfs_oci_config *config)
{
	static const struct vnfs_oci_config cleared;

	if (memcmp(config, &cleared, sizeof(cleared)) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Static: 14 KB each, and the parser clears them itself. */
	static struct vnfs_oci_config configs[3];
	static const enum vnfs_oci_annotations families[3] = {
		VNFS_OCI_ANNOTATIONS_CONTAINERD, VNFS_OCI_ANNOTATIONS_CRIO,
		VNFS_OCI_ANNOTATIONS_EITHER};
	int status[3];
	char error[512];

	for (int i = 0; i < 3; i++) {
		memset(&configs[i], 0x5a, sizeof(configs[i]));
		status[i] = vnfs_oci_config_parse((const char *)data, size, families[i], env_names,
						  ENV_COUNT, &configs[i], error, sizeof(error));
		if (status[i] == 0)
			check_config(&configs[i]);
		else if (status[i] == -1 && TERMINATED(error) && error[0] != '\0')
			check_cleared(&configs[i]);
		else
			abort();
	}
	/* EITHER reads both families: when it accepts, the family it chose
	 * gives the same answer (and with no namespace, both do). */
	if (status[2] == 0) {
		bool containerd = status[0] == 0 &&
				  memcmp(&configs[0], &configs[2], sizeof(configs[2])) == 0;
		bool crio = status[1] == 0 &&
			    memcmp(&configs[1], &configs[2], sizeof(configs[2])) == 0;

		if (configs[2].kubernetes ? !(containerd || crio) : !(containerd && crio))
			abort();
	}
	return 0;
}
