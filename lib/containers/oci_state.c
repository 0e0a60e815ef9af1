/*
 * oci_state.c — reading the state an OCI runtime hands its hooks (see
 * oci_state.h), with the protocol's strict JSON reader.
 */
#include "lib/containers/oci_state.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "lib/log.h"
#include "lib/protocol.h"

/* The state is flat but for its annotations: deeper is junk. */
#define STATE_DEPTH_MAX 3

static const struct {
	const char *name;
	enum vnfs_oci_status status;
} statuses[] = {
	{ "creating", VNFS_OCI_STATUS_CREATING },
	{ "created", VNFS_OCI_STATUS_CREATED },
	{ "running", VNFS_OCI_STATUS_RUNNING },
	{ "stopped", VNFS_OCI_STATUS_STOPPED },
};

static struct json_object *member(struct json_object *object, const char *name)
{
	struct json_object *value = NULL;

	json_object_object_get_ex(object, name, &value);
	return value;
}

static int read_status(struct json_object *object, struct vnfs_oci_state *state, char *error,
		       size_t error_size)
{
	char text[16];

	if (vnfs_protocol_get_text(member(object, "status"), "status", text, sizeof(text), error,
				   error_size) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
		if (strcmp(text, statuses[i].name) == 0) {
			state->status = statuses[i].status;
			return 0;
		}
	}
	return vnfs_fail(error, error_size,
			 "field 'status' must be creating, created, running or stopped");
}

/* The process, but for a stopped container: a pid from 1 up. */
static int read_pid(struct json_object *object, struct vnfs_oci_state *state, char *error,
		    size_t error_size)
{
	struct json_object *value = member(object, "pid");
	uint32_t pid = 0;

	if (value == NULL && state->status == VNFS_OCI_STATUS_STOPPED)
		return 0;
	if (vnfs_protocol_get_uint32(value, "pid", &pid, error, error_size) < 0)
		return -1;
	if ((pid == 0 || pid > 0x7fffffff) && state->status != VNFS_OCI_STATUS_STOPPED)
		return vnfs_fail(error, error_size, "field 'pid' must name a process");
	state->pid = (pid_t)pid;
	return 0;
}

int vnfs_oci_state_parse(const char *text, size_t length, struct vnfs_oci_state *state,
			 char *error, size_t error_size)
{
	struct json_object *object;
	int result = -1;

	memset(state, 0, sizeof(*state));
	if (length > VNFS_OCI_STATE_SIZE_MAX)
		return vnfs_fail(error, error_size, "the state is %zu bytes, more than %d", length,
				 VNFS_OCI_STATE_SIZE_MAX);
	object = vnfs_protocol_parse(text, length, STATE_DEPTH_MAX, error, error_size);
	if (object == NULL)
		return -1;
	if (!json_object_is_type(object, json_type_object))
		vnfs_fail(error, error_size, "the state must be a JSON object");
	else if (vnfs_protocol_get_text(member(object, "id"), "id", state->id, sizeof(state->id),
					error, error_size) == 0 &&
		 read_status(object, state, error, error_size) == 0 &&
		 read_pid(object, state, error, error_size) == 0 &&
		 vnfs_protocol_get_text(member(object, "bundle"), "bundle", state->bundle,
					sizeof(state->bundle), error, error_size) == 0) {
		if (state->bundle[0] != '/')
			vnfs_fail(error, error_size, "field 'bundle' must be an absolute path");
		else
			result = 0;
	}
	json_object_put(object);
	if (result < 0)
		memset(state, 0, sizeof(*state));
	return result;
}
