/*
 * container_cgroup.c — the cgroup naming patterns of kubelet, the container
 * runtimes and systemd, as tables, and a matcher for them.  See
 * container_cgroup.h.
 *
 * A pattern is written as the directory names it expects, with three
 * placeholders:
 *   %s  a pod uid as kubelet's systemd driver spells it: dashes turned into
 *       '_' (systemd reads '-' in a unit name as a level of slices)
 *   %d  a pod uid as the cgroupfs driver spells it, with its dashes
 *   %i  a container id, 64 lowercase hex digits
 * Either uid may also be 32 hex digits: a static pod's uid, which kubelet
 * makes from a hash of the manifest.  Anything else in a pattern is literal.
 *
 * A match says only what the directory's name claims.  Where a user may
 * create cgroups (delegation, rootless podman) the name proves nothing; the
 * identity the helper trusts comes from the runtime's own state (the OCI
 * config in a root-owned directory), found by the id read here.
 */
#include <string.h>

#include "lib/containers/container_cgroup.h"

enum cgroup_driver { DRIVER_SYSTEMD, DRIVER_CGROUPFS };

/* Kubelet's pod levels: the directories from the cgroup root down to one
 * pod's (kubelet's default cgroup root, "/"). */
#define POD_LEVEL_DEPTH_MAX 3
struct pod_level {
	enum cgroup_driver driver;
	enum vnfs_pod_qos qos;
	const char *components[POD_LEVEL_DEPTH_MAX + 1]; /* NULL-terminated */
};

static const struct pod_level pod_levels[] = {
	/* Guaranteed pods sit right under kubepods: they have no QoS level. */
	{DRIVER_SYSTEMD, VNFS_QOS_GUARANTEED, {"kubepods.slice", "kubepods-pod%s.slice", NULL}},
	{DRIVER_SYSTEMD, VNFS_QOS_BURSTABLE,
	 {"kubepods.slice", "kubepods-burstable.slice", "kubepods-burstable-pod%s.slice", NULL}},
	{DRIVER_SYSTEMD, VNFS_QOS_BESTEFFORT,
	 {"kubepods.slice", "kubepods-besteffort.slice", "kubepods-besteffort-pod%s.slice", NULL}},
	{DRIVER_CGROUPFS, VNFS_QOS_GUARANTEED, {"kubepods", "pod%d", NULL}},
	{DRIVER_CGROUPFS, VNFS_QOS_BURSTABLE, {"kubepods", "burstable", "pod%d", NULL}},
	{DRIVER_CGROUPFS, VNFS_QOS_BESTEFFORT, {"kubepods", "besteffort", "pod%d", NULL}},
};

/* A container's own directory. */
struct leaf {
	const char *name;                    /* the pattern */
	enum vnfs_container_runtime runtime;
	bool monitor;                        /* conmon: the runtime's, not a container */
};

/* Inside a pod's directory, per driver. */
struct pod_leaf {
	enum cgroup_driver driver;
	struct leaf leaf;
};

static const struct pod_leaf pod_leaves[] = {
	/* The systemd driver makes a scope named by the runtime. */
	{DRIVER_SYSTEMD, {"cri-containerd-%i.scope", VNFS_RUNTIME_CONTAINERD, false}},
	{DRIVER_SYSTEMD, {"crio-%i.scope", VNFS_RUNTIME_CRIO, false}},
	{DRIVER_SYSTEMD, {"crio-conmon-%i.scope", VNFS_RUNTIME_CRIO, true}},
	{DRIVER_SYSTEMD, {"docker-%i.scope", VNFS_RUNTIME_DOCKER, false}},
	/* With cgroupfs containerd and dockershim use the bare id, which does
	 * not say whose it is; CRI-O still prefixes its own. */
	{DRIVER_CGROUPFS, {"%i", VNFS_RUNTIME_UNKNOWN, false}},
	{DRIVER_CGROUPFS, {"crio-%i", VNFS_RUNTIME_CRIO, false}},
	{DRIVER_CGROUPFS, {"crio-conmon-%i", VNFS_RUNTIME_CRIO, true}},
};

/* Containers outside Kubernetes: the directory above the container's, and
 * the container's.  A NULL parent is any: podman's and docker's
 * --cgroup-parent put a container under any directory, nested or not
 * (docker's default /docker/<id> and /system.slice/docker-<id>.scope
 * among them).  Tried in order, after the pod levels: a bare id under
 * kubepods is Kubernetes' cgroupfs container, not docker's; no two leaves
 * match one name. */
struct standalone {
	const char *parent;
	struct leaf leaf;
};

static const struct standalone standalones[] = {
	{"/machine.slice", {"libpod-%i.scope", VNFS_RUNTIME_PODMAN, false}},
	{"/machine.slice", {"libpod-conmon-%i.scope", VNFS_RUNTIME_PODMAN, true}},
	{NULL, {"libpod-%i", VNFS_RUNTIME_PODMAN, false}},
	{NULL, {"libpod-conmon-%i", VNFS_RUNTIME_PODMAN, true}},
	{NULL, {"%i", VNFS_RUNTIME_DOCKER, false}},
	{NULL, {"docker-%i.scope", VNFS_RUNTIME_DOCKER, false}},
};

#define ARRAY_LENGTH(array) (sizeof(array) / sizeof((array)[0]))

/* What the placeholders of one match captured. */
struct captures {
	char pod_uid[VNFS_POD_UID_SIZE];
	char container_id[VNFS_CONTAINER_ID_SIZE];
};

/* One component of the path: not NUL-terminated. */
struct component {
	const char *text;
	size_t length;
};

static bool lowercase_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static bool all_hex(const char *text, size_t length)
{
	for (size_t i = 0; i < length; i++)
		if (!lowercase_hex(text[i]))
			return false;
	return true;
}

/* The dashes of an 8-4-4-4-12 uid. */
static bool uid_separator_at(size_t i)
{
	return i == 8 || i == 13 || i == 18 || i == 23;
}

/*
 * A pod uid at text (length bytes available) spelled with separator between
 * its groups, or as 32 hex digits: its length (36 or 32), with the uid in
 * dashed form in uid; 0 when there is none.
 */
static size_t match_uid(const char *text, size_t length, char separator,
			char uid[VNFS_POD_UID_SIZE])
{
	if (length >= 36 && text[8] == separator) {
		for (size_t i = 0; i < 36; i++) {
			if (uid_separator_at(i) ? text[i] != separator : !lowercase_hex(text[i]))
				return 0;
			uid[i] = uid_separator_at(i) ? '-' : text[i];
		}
		uid[36] = '\0';
		return 36;
	}
	if (length >= 32 && all_hex(text, 32)) {
		memcpy(uid, text, 32);
		uid[32] = '\0';
		return 32;
	}
	return 0;
}

/* The text a placeholder stands for at text: its length, 0 for none. */
static size_t match_placeholder(char placeholder, const char *text, size_t length,
				struct captures *captures)
{
	switch (placeholder) {
	case 's':
		return match_uid(text, length, '_', captures->pod_uid);
	case 'd':
		return match_uid(text, length, '-', captures->pod_uid);
	case 'i':
		if (length < VNFS_CONTAINER_ID_LENGTH || !all_hex(text, VNFS_CONTAINER_ID_LENGTH))
			return 0;
		memcpy(captures->container_id, text, VNFS_CONTAINER_ID_LENGTH);
		captures->container_id[VNFS_CONTAINER_ID_LENGTH] = '\0';
		return VNFS_CONTAINER_ID_LENGTH;
	default:
		return 0;
	}
}

/* Whether the whole component is the pattern, capturing its placeholders. */
static bool match_component(struct component component, const char *pattern,
			    struct captures *captures)
{
	size_t at = 0;

	while (*pattern != '\0') {
		if (pattern[0] == '%') {
			size_t used = match_placeholder(pattern[1], component.text + at,
							component.length - at, captures);

			if (used == 0)
				return false;
			at += used;
			pattern += 2;
		} else {
			if (at == component.length || component.text[at] != *pattern)
				return false;
			at++;
			pattern++;
		}
	}
	return at == component.length;
}

/* The component after *cursor (which is at a '/'), moving *cursor past it;
 * false at the end of the path. */
static bool next_component(const char **cursor, struct component *component)
{
	if (**cursor != '/')
		return false;
	component->text = *cursor + 1;
	component->length = strcspn(component->text, "/");
	*cursor = component->text + component->length;
	return true;
}

/*
 * Whether path is one the kernel would show: "/" then components without
 * empty, "." or ".." ones, no trailing '/'.  Any other byte may be in a
 * cgroup's name; the patterns decide about those.
 */
static bool well_formed(const char *path)
{
	const char *cursor = path;
	struct component component;

	if (path[0] != '/' || path[1] == '\0')
		return false;
	while (next_component(&cursor, &component)) {
		if (component.length == 0 ||
		    (component.length == 1 && component.text[0] == '.') ||
		    (component.length == 2 && component.text[0] == '.' && component.text[1] == '.'))
			return false;
	}
	return true;
}

/* Fills *result from a matched container leaf; a monitor leaves all but
 * its flag zero. */
static void set_leaf(struct vnfs_container_cgroup *result, const struct leaf *leaf,
		     const struct captures *captures)
{
	if (leaf->monitor) {
		memset(result, 0, sizeof(*result));
		result->monitor = true;
		return;
	}
	result->kind = VNFS_CGROUP_CONTAINER;
	result->runtime = leaf->runtime;
	memcpy(result->container_id, captures->container_id, sizeof(result->container_id));
}

/* The leaf of a pod's container: whether one of the driver's matches. */
static bool match_pod_leaf(enum cgroup_driver driver, struct component component,
			   struct vnfs_container_cgroup *result, struct captures *captures)
{
	for (size_t i = 0; i < ARRAY_LENGTH(pod_leaves); i++) {
		if (pod_leaves[i].driver == driver &&
		    match_component(component, pod_leaves[i].leaf.name, captures)) {
			set_leaf(result, &pod_leaves[i].leaf, captures);
			return true;
		}
	}
	return false;
}

/* Whether path is under the pod level, and is it or one container in it. */
static bool match_pod_level(const char *path, const struct pod_level *level,
			    struct vnfs_container_cgroup *result)
{
	struct captures captures = {{0}, {0}};
	const char *cursor = path;
	struct component component;

	for (const char *const *pattern = level->components; *pattern != NULL; pattern++)
		if (!next_component(&cursor, &component) ||
		    !match_component(component, *pattern, &captures))
			return false;
	result->kubernetes = true;
	result->qos = level->qos;
	memcpy(result->pod_uid, captures.pod_uid, sizeof(result->pod_uid));
	if (*cursor == '\0') {
		result->kind = VNFS_CGROUP_POD;
		return true;
	}
	if (next_component(&cursor, &component) && *cursor == '\0' &&
	    match_pod_leaf(level->driver, component, result, &captures))
		return true;
	memset(result, 0, sizeof(*result));
	return false;
}

/* Whether path is a container outside Kubernetes. */
static bool match_standalone(const char *path, struct vnfs_container_cgroup *result)
{
	const char *slash = strrchr(path, '/');
	size_t parent_length = (size_t)(slash - path);
	struct component leaf = {slash + 1, strlen(slash + 1)};

	for (size_t i = 0; i < ARRAY_LENGTH(standalones); i++) {
		const struct standalone *row = &standalones[i];
		struct captures captures = {{0}, {0}};

		if (row->parent != NULL && (strlen(row->parent) != parent_length ||
					    memcmp(row->parent, path, parent_length) != 0))
			continue;
		if (match_component(leaf, row->leaf.name, &captures)) {
			set_leaf(result, &row->leaf, &captures);
			return true;
		}
	}
	return false;
}

enum vnfs_container_kind vnfs_container_cgroup_parse(const char *path,
						     struct vnfs_container_cgroup *result)
{
	memset(result, 0, sizeof(*result));
	if (strnlen(path, VNFS_CONTAINER_CGROUP_PATH_MAX) >= VNFS_CONTAINER_CGROUP_PATH_MAX ||
	    !well_formed(path))
		return result->kind;
	for (size_t i = 0; i < ARRAY_LENGTH(pod_levels); i++)
		if (match_pod_level(path, &pod_levels[i], result))
			return result->kind;
	match_standalone(path, result);
	return result->kind;
}

bool vnfs_pod_uid_valid(const char *text)
{
	char uid[VNFS_POD_UID_SIZE];
	size_t length = strnlen(text, VNFS_POD_UID_SIZE);

	return (length == 36 || length == 32) && match_uid(text, length, '-', uid) == length;
}

bool vnfs_container_id_valid(const char *text)
{
	return strnlen(text, VNFS_CONTAINER_ID_SIZE) == VNFS_CONTAINER_ID_LENGTH &&
	       all_hex(text, VNFS_CONTAINER_ID_LENGTH);
}

static const char *const runtime_names[] = {
#define VNFS_CONTAINER_RUNTIME_NAME(constant, name) name,
	VNFS_CONTAINER_RUNTIMES(VNFS_CONTAINER_RUNTIME_NAME)
#undef VNFS_CONTAINER_RUNTIME_NAME
};

static const char *const qos_names[] = {
#define VNFS_POD_QOS_NAME(constant, name) name,
	VNFS_POD_QOS_CLASSES(VNFS_POD_QOS_NAME)
#undef VNFS_POD_QOS_NAME
};

static const char *const kind_names[] = {"not a container", "pod", "container"};

const char *vnfs_container_runtime_name(enum vnfs_container_runtime runtime)
{
	return (unsigned)runtime < ARRAY_LENGTH(runtime_names) ? runtime_names[runtime] : NULL;
}

const char *vnfs_pod_qos_name(enum vnfs_pod_qos qos)
{
	return (unsigned)qos < ARRAY_LENGTH(qos_names) ? qos_names[qos] : NULL;
}

const char *vnfs_container_kind_name(enum vnfs_container_kind kind)
{
	return (unsigned)kind < ARRAY_LENGTH(kind_names) ? kind_names[kind] : NULL;
}
