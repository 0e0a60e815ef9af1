/*
 * docker_state.c — a Docker container's name, environment and cgroup
 * parent in dockerd's config.v2.json and hostconfig.json (see
 * docker_state.h).
 */
#include "lib/containers/docker_state.h"

#include <stdbool.h>
#include <string.h>

#include <json-c/json.h>

#include "lib/containers/runtime_json.h"
#include "lib/log.h"
#include "lib/tags.h"

/* config.v2.json's deepest: State.Health.Log[i], MountPoints.<dir>.Spec.
 * BindOptions, NetworkSettings.Networks.<name>.IPAMConfig; 16 leaves room. */
#define DOCKER_STATE_DEPTH_MAX 16

/* Where a member is, for messages: the file, and the object it is in. */
#define IN_CONFIG VNFS_DOCKER_CONFIG_FILE ": "
#define IN_CONFIG_CONFIG VNFS_DOCKER_CONFIG_FILE ": Config."
#define IN_HOST_CONFIG VNFS_DOCKER_HOST_CONFIG_FILE ": "

/* object's member key of type, as vnfs_runtime_json_member, but null is
 * absent too (Go writes a nil slice or map as null). */
static int get_member(struct json_object *object, const char *where, const char *key,
		      enum json_type type, struct json_object **member, char *error,
		      size_t error_size)
{
	if (json_object_object_get_ex(object, key, member) && *member == NULL)
		return 0;
	return vnfs_runtime_json_member(object, where, key, type, member, error, error_size);
}

/* A string member without NUL in it: 1 with *value, 0 when absent or
 * null, -1. */
static int get_string(struct json_object *object, const char *where, const char *key,
		      const char **value, char *error, size_t error_size)
{
	struct json_object *member;

	if (json_object_object_get_ex(object, key, &member) && member == NULL)
		return 0;
	return vnfs_runtime_json_string(object, where, key, value, error, error_size);
}

/* Whether the record's "ID" is id: the whole string, so that "<id>\u0000x"
 * is not id.  Returns 1, 0, or -1 when there is no ID. */
static int same_id(struct json_object *document, const char *id, char *error,
		   size_t error_size)
{
	struct json_object *member;
	int found = get_member(document, IN_CONFIG, "ID", json_type_string,
			       &member, error, error_size);

	if (found == 0)
		return vnfs_fail(error, error_size, IN_CONFIG "no ID");
	if (found < 0)
		return -1;
	return (size_t)json_object_get_string_len(member) == strlen(id) &&
	       strcmp(json_object_get_string(member), id) == 0;
}

/* "Name", "/trainer-d": the name after dockerd's '/', checked. */
static int read_name(struct json_object *document, struct vnfs_docker_container *container,
		     char *error, size_t error_size)
{
	const char *name;
	int found = get_string(document, IN_CONFIG, "Name", &name, error,
			       error_size);

	if (found == 0)
		return vnfs_fail(error, error_size, IN_CONFIG "no Name");
	if (found < 0)
		return -1;
	if (name[0] == '/')
		name++;
	if (!vnfs_container_name_valid(name) || strlen(name) >= sizeof(container->name))
		return vnfs_fail(error, error_size,
				 IN_CONFIG "its Name is not a container name (a "
				 "letter or digit, then letters, digits, '_', '.' or '-', at most "
				 "%d)",
				 VNFS_CONTAINER_NAME_MAX);
	memcpy(container->name, name, strlen(name) + 1);
	return 0;
}

/* One Config.Env entry, "NAME=value" or "NAME" (unset): it replaces what
 * an earlier entry gave each wanted name it is. */
static void take_env_entry(struct json_object *entry, const char *const *names,
			   struct vnfs_docker_container *container)
{
	const char *text = json_object_get_string(entry);
	size_t length = (size_t)json_object_get_string_len(entry);
	const char *equals = memchr(text, '=', length);
	size_t name_length = equals != NULL ? (size_t)(equals - text) : length;
	size_t value_length = equals != NULL ? length - name_length - 1 : 0;

	/* No break: a name asked for twice gets this value twice. */
	for (size_t i = 0; i < container->env_count; i++) {
		struct vnfs_oci_env_value *slot = &container->env[i];

		if (strlen(names[i]) != name_length || memcmp(text, names[i], name_length) != 0)
			continue;
		memset(slot, 0, sizeof(*slot)); /* UNSET, "" */
		if (equals != NULL && (value_length >= sizeof(slot->value) ||
				       memchr(equals + 1, '\0', value_length) != NULL)) {
			slot->status = VNFS_OCI_ENV_REFUSED;
		} else if (equals != NULL) {
			slot->status = VNFS_OCI_ENV_SET;
			memcpy(slot->value, equals + 1, value_length);
		}
	}
}

/* Config.Env's entries, each a string. */
static int read_env(struct json_object *document, const char *const *names,
		    struct vnfs_docker_container *container, char *error, size_t error_size)
{
	struct json_object *config, *env;
	int found = get_member(document, IN_CONFIG, "Config", json_type_object, &config, error,
			       error_size);

	if (found > 0)
		found = get_member(config, IN_CONFIG_CONFIG, "Env", json_type_array, &env, error,
				   error_size);
	if (found <= 0)
		return found;
	for (size_t i = 0; i < json_object_array_length(env); i++) {
		struct json_object *entry = json_object_array_get_idx(env, i);

		if (!json_object_is_type(entry, json_type_string))
			return vnfs_fail(error, error_size,
					 IN_CONFIG_CONFIG "Env[%zu] is not a string",
					 i);
		take_env_entry(entry, names, container);
	}
	return 0;
}

/* CgroupParent: printable ASCII without space (a log line that shows it
 * shows all of it), shorter than a cgroup path. */
static int read_cgroup_parent(struct json_object *document,
			      struct vnfs_docker_container *container, char *error,
			      size_t error_size)
{
	const char *parent;
	int found = get_string(document, IN_HOST_CONFIG, "CgroupParent", &parent, error,
			       error_size);
	bool printable = true;

	if (found <= 0)
		return found;
	for (const char *at = parent; *at != '\0'; at++)
		printable = printable && *at > ' ' && *at <= '~';
	if (!printable || strlen(parent) >= sizeof(container->cgroup_parent))
		return vnfs_fail(error, error_size,
				 IN_HOST_CONFIG "CgroupParent (%zu bytes) is not "
				 "printable ASCII without spaces, shorter than %d bytes",
				 strlen(parent), VNFS_CONTAINER_CGROUP_PATH_MAX);
	memcpy(container->cgroup_parent, parent, strlen(parent) + 1);
	return 0;
}

/* What config.v2.json says, once its ID is id's: 1, 0, or -1. */
static int read_config(struct json_object *document, const char *id, const char *const *names,
		       struct vnfs_docker_container *container, char *error, size_t error_size)
{
	int same = same_id(document, id, error, error_size);

	if (same <= 0)
		return same;
	if (read_name(document, container, error, error_size) < 0 ||
	    read_env(document, names, container, error, error_size) < 0)
		return -1;
	return 1;
}

int vnfs_docker_container_parse(const char *config, size_t config_length,
				const char *host_config, size_t host_config_length,
				const char *id, const char *const *env_names, size_t env_count,
				struct vnfs_docker_container *container, char *error,
				size_t error_size)
{
	struct json_object *document, *host_document;
	int result = -1;

	memset(container, 0, sizeof(*container));
	if (vnfs_oci_env_names_check(env_names, env_count, error, error_size) < 0)
		return -1;
	container->env_count = env_count;
	document = vnfs_runtime_json_parse(config, config_length, VNFS_DOCKER_CONFIG_FILE,
					   VNFS_DOCKER_STATE_SIZE_MAX, DOCKER_STATE_DEPTH_MAX,
					   json_type_object, error, error_size);
	host_document = document == NULL
				? NULL
				: vnfs_runtime_json_parse(host_config, host_config_length,
							  VNFS_DOCKER_HOST_CONFIG_FILE,
							  VNFS_DOCKER_STATE_SIZE_MAX,
							  DOCKER_STATE_DEPTH_MAX, json_type_object,
							  error, error_size);
	if (host_document != NULL) {
		result = read_config(document, id, env_names, container, error, error_size);
		if (result == 1 &&
		    read_cgroup_parent(host_document, container, error, error_size) < 0)
			result = -1;
	}
	if (host_document != NULL)
		json_object_put(host_document);
	if (document != NULL)
		json_object_put(document);
	if (result != 1)
		memset(container, 0, sizeof(*container));
	return result;
}
