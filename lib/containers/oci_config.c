/*
 * oci_config.c — a container's identity from its OCI config.json: the
 * document, the two annotation families as a table, Kubernetes' name rules,
 * the environment, and a safe read of the file.  See oci_config.h for the
 * rules.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "lib/containers/oci_config.h"
#include "lib/containers/runtime_json.h"
#include "lib/log.h"
#include "lib/tags.h"
#include "lib/workload.h"

/* An OCI config nests 5 or 6 levels (linux.resources.devices[] objects,
 * seccomp's syscalls[].args[]); deeper is junk, refused before it costs. */
#define OCI_DEPTH_MAX 16
/* Where a member is, in messages. */
#define IN_CONFIG "config.json: "

/* The identity's fields, in the order they are checked. */
enum identity_field {
	FIELD_NAMESPACE,
	FIELD_POD_NAME,
	FIELD_POD_UID,
	FIELD_CONTAINER_NAME,
	FIELD_CONTAINER_TYPE,
	FIELD_COUNT
};

/* Each family's annotation keys, by field. */
struct annotation_family {
	const char *name; /* in messages */
	const char *keys[FIELD_COUNT];
};

static const struct annotation_family families[] = {
	[VNFS_OCI_ANNOTATIONS_CONTAINERD] = {"containerd",
					     {"io.kubernetes.cri.sandbox-namespace",
					      "io.kubernetes.cri.sandbox-name",
					      "io.kubernetes.cri.sandbox-uid",
					      "io.kubernetes.cri.container-name",
					      "io.kubernetes.cri.container-type"}},
	[VNFS_OCI_ANNOTATIONS_CRIO] = {"CRI-O",
				       {"io.kubernetes.pod.namespace", "io.kubernetes.pod.name",
					"io.kubernetes.pod.uid", "io.kubernetes.container.name",
					"io.kubernetes.cri-o.ContainerType"}},
};

/* One family's values: pointers into the parsed document, NULL when absent. */
struct identity {
	const struct annotation_family *family;
	const char *values[FIELD_COUNT];
};

/* cgroupsPath: printable ASCII without space, so a log line or label that
 * shows it shows all of it. */
static bool cgroups_path_valid(const char *text)
{
	for (const char *at = text; *at != '\0'; at++)
		if (*at <= ' ' || *at > '~')
			return false;
	return true;
}

/* One family's values from the annotations object. */
static int read_family(struct json_object *annotations, const struct annotation_family *family,
		       struct identity *identity, char *error, size_t error_size)
{
	identity->family = family;
	for (int field = 0; field < FIELD_COUNT; field++) {
		identity->values[field] = NULL;
		if (annotations != NULL &&
		    vnfs_runtime_json_string(annotations, IN_CONFIG "annotations.",
					     family->keys[field], &identity->values[field], error,
					     error_size) < 0)
			return -1;
	}
	return 0;
}

static bool same_text(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/*
 * The family to believe, into *identity: the caller's, or with EITHER the
 * one whose namespace is there (both: they must agree).  *found is whether
 * the chosen family names a namespace.
 */
static int choose_family(struct json_object *annotations, enum vnfs_oci_annotations wanted,
			 struct identity *identity, bool *found, char *error, size_t error_size)
{
	struct identity other;

	if (wanted != VNFS_OCI_ANNOTATIONS_EITHER) {
		if (read_family(annotations, &families[wanted], identity, error, error_size) < 0)
			return -1;
		*found = identity->values[FIELD_NAMESPACE] != NULL;
		return 0;
	}
	if (read_family(annotations, &families[VNFS_OCI_ANNOTATIONS_CONTAINERD], identity, error,
			error_size) < 0 ||
	    read_family(annotations, &families[VNFS_OCI_ANNOTATIONS_CRIO], &other, error,
			error_size) < 0)
		return -1;
	*found = true;
	if (identity->values[FIELD_NAMESPACE] == NULL) {
		*identity = other;
		*found = other.values[FIELD_NAMESPACE] != NULL;
		return 0;
	}
	if (other.values[FIELD_NAMESPACE] == NULL)
		return 0;
	for (int field = 0; field < FIELD_COUNT; field++)
		if (!same_text(identity->values[field], other.values[field]))
			return vnfs_fail(error, error_size,
					 "config.json: the containerd and CRI-O annotations "
					 "disagree (%s, %s)",
					 families[VNFS_OCI_ANNOTATIONS_CONTAINERD].keys[field],
					 families[VNFS_OCI_ANNOTATIONS_CRIO].keys[field]);
	return 0;
}

/* A required or optional name: copied when valid. */
static int take_name(const struct identity *identity, enum identity_field field, bool required,
		     bool (*valid)(const char *), const char *rule, char *out, size_t size,
		     char *error, size_t error_size)
{
	const char *value = identity->values[field];
	const char *key = identity->family->keys[field];

	if (value == NULL) {
		if (!required)
			return 0;
		return vnfs_fail(error, error_size,
				 "config.json: annotation %s is missing (%s annotations name a "
				 "namespace)",
				 key, identity->family->name);
	}
	if (strlen(value) >= size || !valid(value))
		return vnfs_fail(error, error_size,
				 "config.json: annotation %s (%zu bytes) is not %s", key,
				 strlen(value), rule);
	memcpy(out, value, strlen(value) + 1);
	return 0;
}

static int take_container_type(const struct identity *identity,
			       enum vnfs_container_type *type, char *error, size_t error_size)
{
	const char *value = identity->values[FIELD_CONTAINER_TYPE];
	const char *key = identity->family->keys[FIELD_CONTAINER_TYPE];

	if (value == NULL)
		return vnfs_fail(error, error_size, "config.json: annotation %s is missing", key);
	if (strcmp(value, "sandbox") == 0)
		*type = VNFS_CONTAINER_TYPE_SANDBOX;
	else if (strcmp(value, "container") == 0)
		*type = VNFS_CONTAINER_TYPE_CONTAINER;
	else
		return vnfs_fail(error, error_size,
				 "config.json: annotation %s is neither \"sandbox\" nor "
				 "\"container\"",
				 key);
	return 0;
}

#define LABEL_RULE "a DNS label (1 to 63 of a-z, 0-9 and '-', alphanumeric at both ends)"
#define SUBDOMAIN_RULE "a DNS subdomain (1 to 253 bytes of DNS labels joined by '.')"

/* The Kubernetes names of the chosen family, checked, into config. */
static int take_identity(const struct identity *identity, struct vnfs_oci_config *config,
			 char *error, size_t error_size)
{
	if (take_name(identity, FIELD_NAMESPACE, true, vnfs_kubernetes_label_valid, LABEL_RULE,
		      config->namespace, sizeof(config->namespace), error, error_size) < 0 ||
	    take_name(identity, FIELD_POD_NAME, true, vnfs_kubernetes_subdomain_valid, SUBDOMAIN_RULE,
		      config->pod_name, sizeof(config->pod_name), error, error_size) < 0 ||
	    take_name(identity, FIELD_POD_UID, false, vnfs_pod_uid_valid,
		      "a pod uid (8-4-4-4-12 or 32 lowercase hex digits)", config->pod_uid,
		      sizeof(config->pod_uid), error, error_size) < 0 ||
	    take_container_type(identity, &config->container_type, error, error_size) < 0)
		return -1;
	if (config->container_type == VNFS_CONTAINER_TYPE_CONTAINER &&
	    take_name(identity, FIELD_CONTAINER_NAME, true, vnfs_kubernetes_label_valid, LABEL_RULE,
		      config->container_name, sizeof(config->container_name), error,
		      error_size) < 0)
		return -1;
	config->kubernetes = true;
	return 0;
}

static int read_annotations(struct json_object *document, enum vnfs_oci_annotations family,
			    struct vnfs_oci_config *config, char *error, size_t error_size)
{
	struct json_object *annotations = NULL;
	struct identity identity;
	bool found;

	if ((unsigned)family > VNFS_OCI_ANNOTATIONS_NONE)
		return vnfs_fail(error, error_size, "unknown annotation family %d", (int)family);
	if (family == VNFS_OCI_ANNOTATIONS_NONE)
		return 0;
	if (vnfs_runtime_json_member(document, IN_CONFIG, "annotations", json_type_object,
				     &annotations, error, error_size) < 0 ||
	    choose_family(annotations, family, &identity, &found, error, error_size) < 0)
		return -1;
	return found ? take_identity(&identity, config, error, error_size) : 0;
}

static int read_cgroups_path(struct json_object *document, struct vnfs_oci_config *config,
			     char *error, size_t error_size)
{
	struct json_object *linux_section;
	const char *path;
	int found = vnfs_runtime_json_member(document, IN_CONFIG, "linux", json_type_object,
					     &linux_section, error, error_size);

	if (found > 0)
		found = vnfs_runtime_json_string(linux_section, IN_CONFIG "linux.", "cgroupsPath",
						 &path, error, error_size);
	if (found <= 0)
		return found;
	if (strlen(path) >= sizeof(config->cgroups_path) || !cgroups_path_valid(path))
		return vnfs_fail(error, error_size,
				 "config.json: linux.cgroupsPath (%zu bytes) is not printable "
				 "ASCII without spaces, shorter than %d bytes",
				 strlen(path), VNFS_CONTAINER_CGROUP_PATH_MAX);
	memcpy(config->cgroups_path, path, strlen(path) + 1);
	return 0;
}

/* One "NAME=value" entry: the value of each wanted name not yet seen. */
static void take_env_entry(struct json_object *entry, const char *const *names,
			   struct vnfs_oci_config *config)
{
	const char *text = json_object_get_string(entry);
	size_t length = (size_t)json_object_get_string_len(entry);
	const char *equals = memchr(text, '=', length);

	if (equals == NULL)
		return;
	for (size_t i = 0; i < config->env_count; i++) {
		struct vnfs_oci_env_value *slot = &config->env[i];
		size_t name_length = strlen(names[i]);
		size_t value_length;

		if (slot->status != VNFS_OCI_ENV_UNSET || (size_t)(equals - text) != name_length ||
		    memcmp(text, names[i], name_length) != 0)
			continue;
		value_length = length - name_length - 1;
		if (value_length >= sizeof(slot->value) || memchr(equals + 1, '\0', value_length)) {
			slot->status = VNFS_OCI_ENV_REFUSED;
		} else {
			slot->status = VNFS_OCI_ENV_SET;
			memcpy(slot->value, equals + 1, value_length);
			slot->value[value_length] = '\0';
		}
		/* No return: a name asked for twice gets this first value twice. */
	}
}

static int read_env(struct json_object *document, const char *const *names,
		    struct vnfs_oci_config *config, char *error, size_t error_size)
{
	struct json_object *process, *env;
	int found = vnfs_runtime_json_member(document, IN_CONFIG, "process", json_type_object,
					     &process, error, error_size);

	if (found > 0)
		found = vnfs_runtime_json_member(process, IN_CONFIG "process.", "env",
						 json_type_array, &env, error, error_size);
	if (found <= 0)
		return found;
	for (size_t i = 0; i < json_object_array_length(env); i++) {
		struct json_object *entry = json_object_array_get_idx(env, i);

		if (!json_object_is_type(entry, json_type_string))
			return vnfs_fail(error, error_size,
					 "config.json: process.env[%zu] is not a string", i);
		take_env_entry(entry, names, config);
	}
	return 0;
}

int vnfs_oci_env_names_check(const char *const *names, size_t count, char *error,
			     size_t error_size)
{
	if (count > VNFS_OCI_ENV_WANTED_MAX)
		return vnfs_fail(error, error_size,
				 "%zu environment variables asked for, at most %d", count,
				 VNFS_OCI_ENV_WANTED_MAX);
	for (size_t i = 0; i < count; i++)
		if (!vnfs_tag_name_valid(names[i]))
			return vnfs_fail(error, error_size,
					 "environment variable %zu: a name is letters, digits and "
					 "'_' (not starting with a digit)",
					 i);
	return 0;
}

int vnfs_oci_config_parse(const char *text, size_t length, enum vnfs_oci_annotations family,
			  const char *const *env_names, size_t env_count,
			  struct vnfs_oci_config *config, char *error, size_t error_size)
{
	struct json_object *document;
	int status = -1;

	memset(config, 0, sizeof(*config));
	if (vnfs_oci_env_names_check(env_names, env_count, error, error_size) < 0)
		return -1;
	document = vnfs_runtime_json_parse(text, length, "config.json", VNFS_OCI_CONFIG_SIZE_MAX,
					   OCI_DEPTH_MAX, json_type_object, error, error_size);
	if (document == NULL)
		return -1;
	config->env_count = env_count;
	if (read_annotations(document, family, config, error, error_size) == 0 &&
	    read_cgroups_path(document, config, error, error_size) == 0 &&
	    read_env(document, env_names, config, error, error_size) == 0)
		status = 0;
	json_object_put(document);
	if (status < 0)
		memset(config, 0, sizeof(*config));
	return status;
}

/* name is one directory entry: no '/', not "", "." or "..". */
int vnfs_oci_config_read(int directory_fd, const char *name, char **text, size_t *length,
			 char *error, size_t error_size)
{
	return vnfs_runtime_file_read(directory_fd, name, VNFS_OCI_CONFIG_SIZE_MAX, text, length,
				      error, error_size);
}

int vnfs_oci_workload_text(const struct vnfs_oci_config *config, char *job, size_t job_size,
			   char *part, size_t part_size, char *error, size_t error_size)
{
	int written;

	if (!config->kubernetes)
		return vnfs_fail(error, error_size, "not a Kubernetes container");
	written = snprintf(job, job_size, "%s/%s", config->namespace, config->pod_name);
	if (written < 0 || (size_t)written >= job_size ||
	    strlen(config->container_name) >= part_size)
		return vnfs_fail(error, error_size, "the workload's text does not fit");
	memcpy(part, config->container_name, strlen(config->container_name) + 1);
	/* The names' rules are narrower than a workload's: this holds by
	 * construction, and is checked so that a change to either shows. */
	if (!vnfs_workload_text_valid(job, job_size) ||
	    (part[0] != '\0' && !vnfs_workload_text_valid(part, part_size)))
		return vnfs_fail(error, error_size, "the workload's text is not valid");
	return 0;
}
