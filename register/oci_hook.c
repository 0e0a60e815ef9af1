/*
 * oci_hook.c — vnfs-register --oci-hook: a Kubernetes container registered
 * by its runtime's own hook, before its process runs its command, so that
 * its first NFS call is already its own (no late binding to fold).
 *
 * Configured as an OCI hook (runc, crun; containerd and CRI-O pass hooks
 * through): createRuntime registers the container (the pod's sandbox as the
 * pod itself, part ""), poststop unregisters it, and the sandbox's poststop
 * finishes the pod.  The runtime gives the hook the container's state on
 * standard input (lib/containers/oci_state.h); the identity comes from the
 * bundle's config.json (lib/containers/oci_config.h), and the cgroup from
 * the container's process, checked against the config's cgroupsPath.
 */
#include "register/oci_hook.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/client.h"
#include "lib/containers/containers.h"
#include "lib/containers/oci_config.h"
#include "lib/containers/oci_state.h"

/* Standard input, at most VNFS_OCI_STATE_SIZE_MAX bytes (one more is too
 * many).  Returns the bytes read, or -1. */
static ssize_t read_state(char *text, size_t size)
{
	size_t used = 0;

	while (used < size) {
		ssize_t got = read(STDIN_FILENO, text + used, size - used);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -1;
		if (got == 0)
			break;
		used += (size_t)got;
	}
	return (ssize_t)used;
}

/* The bundle's config, parsed.  Returns 0, or -1 with a message. */
static int read_bundle(const struct vnfs_oci_state *state, struct vnfs_oci_config *config,
		       char *error, size_t error_size)
{
	int bundle = open(state->bundle, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	char *text = NULL;
	size_t length = 0;
	int result;

	if (bundle < 0) {
		snprintf(error, error_size, "bundle %.300s: %s", state->bundle, strerror(errno));
		return -1;
	}
	result = vnfs_oci_config_read(bundle, "config.json", &text, &length, error, error_size);
	close(bundle);
	if (result == 0)
		result = vnfs_oci_config_parse(text, length, VNFS_OCI_ANNOTATIONS_EITHER, NULL, 0,
					       config, error, error_size);
	free(text);
	return result;
}

/* The container's cgroup, as an absolute path, when its process is where
 * its config says.  Returns 0, or -1 with a message. */
static int container_cgroup(const struct vnfs_oci_state *state,
			    const struct vnfs_oci_config *config, char *path, size_t size,
			    char *error, size_t error_size)
{
	char relative[VNFS_CONTAINER_CGROUP_PATH_MAX], mount[1024];

	if (vnfs_cgroup_of_pid(state->pid, relative, sizeof(relative), error, error_size) < 0)
		return -1;
	if (!vnfs_cgroups_path_names(config->cgroups_path, relative)) {
		snprintf(error, error_size,
			 "its process is in cgroup %.200s, which its cgroupsPath %.200s does not "
			 "name", relative, config->cgroups_path);
		return -1;
	}
	if (vnfs_cgroup2_mount(mount, sizeof(mount)) < 0) {
		snprintf(error, error_size, "no cgroup2 hierarchy is mounted");
		return -1;
	}
	if ((size_t)snprintf(path, size, "%s%s", mount, relative) >= size) {
		snprintf(error, error_size, "its cgroup's path is longer than %zu bytes", size - 1);
		return -1;
	}
	return 0;
}

/* The request the hook makes of the helper for state; type LIST (none)
 * when there is nothing to say (a container started, already counted). */
static int make_request(const struct vnfs_oci_state *state, const struct vnfs_oci_config *config,
			struct vnfs_request *request, char *error, size_t error_size)
{
	char job[VNFS_WORKLOAD_JOB_MAX], part[VNFS_WORKLOAD_PART_MAX];
	bool sandbox = config->container_type == VNFS_CONTAINER_TYPE_SANDBOX;

	if (vnfs_oci_workload_text(config, job, sizeof(job), part, sizeof(part), error,
				   error_size) < 0 ||
	    vnfs_workload_set(&request->workload, VNFS_SOURCE_KUBERNETES, job, part, error,
			      error_size) < 0)
		return -1;
	vnfs_tags_init(&request->tags);
	switch (state->status) {
	case VNFS_OCI_STATUS_CREATING:
		request->type = VNFS_REQUEST_REGISTER;
		return container_cgroup(state, config, request->cgroup_path,
					sizeof(request->cgroup_path), error, error_size);
	case VNFS_OCI_STATUS_STOPPED:
		/* The sandbox outlives the pod's containers: its end is the pod's. */
		request->type = sandbox ? VNFS_REQUEST_FINISH : VNFS_REQUEST_UNREGISTER;
		return 0;
	default:
		request->type = VNFS_REQUEST_LIST;
		return 0;
	}
}

int vnfs_register_oci_hook(const char *socket_path, int timeout_ms)
{
	static char text[VNFS_OCI_STATE_SIZE_MAX + 1];
	static struct vnfs_request request;
	struct vnfs_oci_config *config = calloc(1, sizeof(*config));
	struct vnfs_oci_state state;
	char error[1024], name[VNFS_WORKLOAD_DESCRIPTION_MAX];
	struct vnfs_reply reply;
	ssize_t length = read_state(text, sizeof(text));
	int status = 1;

	if (config == NULL || length < 0 ||
	    vnfs_oci_state_parse(text, (size_t)length, &state, error, sizeof(error)) < 0) {
		fprintf(stderr, "vnfs-register: --oci-hook: the state on standard input: %s\n",
			config == NULL ? "out of memory" : length < 0 ? strerror(errno) : error);
		free(config);
		return 1;
	}
	if (read_bundle(&state, config, error, sizeof(error)) < 0) {
		fprintf(stderr, "vnfs-register: container %s: %s\n", state.id, error);
	} else if (!config->kubernetes) {
		printf("container %s is no Kubernetes container: nothing to register\n", state.id);
		status = 0;
	} else if (make_request(&state, config, &request, error, sizeof(error)) < 0) {
		fprintf(stderr, "vnfs-register: container %s: %s\n", state.id, error);
	} else if (request.type == VNFS_REQUEST_LIST) {
		status = 0; /* nothing to say at this point of its life */
	} else if (vnfs_client_call(socket_path, &request, timeout_ms, &reply, error,
				    sizeof(error)) < 0) {
		fprintf(stderr, "vnfs-register: container %s (%s): %s\n", state.id,
			vnfs_workload_describe(&request.workload, name, sizeof(name)), error);
	} else {
		printf("%s %s\n", vnfs_request_type_name(request.type),
		       vnfs_workload_describe(&request.workload, name, sizeof(name)));
		vnfs_reply_free(&reply);
		status = 0;
	}
	free(config);
	return status;
}
