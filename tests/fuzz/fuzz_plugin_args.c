/*
 * fuzz_plugin_args.c — libFuzzer target for spank/plugin_args.c: the
 * plugstack.conf arguments of spank_vnfs.so and the --vnfs-tags value as the
 * plugin resolves it on the submit host and on the node.
 *
 * Input: lines (split on NUL or newline).  A line starting with '$' is an
 * environment entry ("$NAME=VALUE", the job's environment for lookups); the
 * last other line is the --vnfs-tags value; the lines before it are the
 * plugstack.conf arguments (argv).  Checked beyond the sanitizers:
 *   - a refusal says why;
 *   - accepted arguments are within what plugin_args.h promises (absolute
 *     paths that fit, timeout in range, valid envs= names);
 *   - tags the resolver accepted are accepted again by vnfs_plugin_collect_tags
 *     (unless envs= values and they are too many together), and its result
 *     is what plugin_args.h says: envs= values, then the user's tags except
 *     those named like an envs= variable (the administrator's names win).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spank/plugin_args.h"
#include "tests/fuzz/fuzz_support.h"

#define MAX_LINES 64


static void check_path(const char *path, size_t size)
{
	size_t length = strnlen(path, size);

	if (length == size || (length > 0 && path[0] != '/'))
		abort();
}

static void check_args(const struct vnfs_plugin_args *args)
{
	check_path(args->socket_path, sizeof(args->socket_path));
	if (args->socket_path[0] == '\0')
		abort();
	check_path(args->report_dir, sizeof(args->report_dir));
	check_path(args->cgroup_root, sizeof(args->cgroup_root));
	if (args->timeout_ms < 1 || args->timeout_ms > VNFS_PLUGIN_MAX_TIMEOUT_MS)
		abort();
	if (args->env_count > VNFS_MAX_TAGS)
		abort();
	for (unsigned i = 0; i < args->env_count; i++)
		if (!vnfs_tag_name_valid(args->envs[i]))
			abort();
	if (strcmp(vnfs_report_mode_name(args->report), "?") == 0 ||
	    strcmp(vnfs_cgroup_mode_name(args->cgroup), "?") == 0)
		abort();
}

static bool is_env_name(const struct vnfs_plugin_args *args, const char *name)
{
	for (unsigned i = 0; i < args->env_count; i++)
		if (strcmp(args->envs[i], name) == 0)
			return true;
	return false;
}

/* Could envs= values and the user's tags exceed the list's bounds together? */
static bool too_many(const struct vnfs_plugin_args *args, struct fuzz_environment *environment,
		     const struct vnfs_tag_list *user)
{
	size_t count = user->count, bytes = user->used;

	for (unsigned i = 0; i < args->env_count; i++) {
		const char *value = fuzz_environment_lookup(args->envs[i], environment);

		if (value != NULL) {
			count++;
			bytes += strlen(args->envs[i]) + strlen(value) + 2;
		}
	}
	return count > VNFS_MAX_TAGS || bytes > VNFS_TAGS_BUFFER;
}

/*
 * plugin_args.h: the administrator's envs= names win.  A user tag named like
 * one is ignored (the envs= value, if any, stays); every other user tag is in
 * the result with its value; nothing else is but envs= values.
 */
static void check_collected(const struct vnfs_plugin_args *args,
			    struct fuzz_environment *environment, const struct vnfs_tag_list *user,
			    const struct vnfs_tag_list *tags)
{
	const char *name, *value, *found;

	for (unsigned i = 0; vnfs_tags_get(user, i, &name, &value); i++) {
		found = vnfs_tags_find(tags, name);
		if (is_env_name(args, name)) {
			const char *admin = fuzz_environment_lookup(name, environment);

			if (found != NULL && (admin == NULL || strcmp(found, admin) != 0))
				abort();
		} else if (found == NULL || strcmp(found, value) != 0) {
			abort();
		}
	}
	for (unsigned i = 0; vnfs_tags_get(tags, i, &name, &value); i++) {
		const char *admin = fuzz_environment_lookup(name, environment);

		if (is_env_name(args, name) ? admin == NULL || strcmp(admin, value) != 0
					    : vnfs_tags_find(user, name) == NULL)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size + 1);
	char *argv[MAX_LINES];
	int argc = 0;
	const char *user_tags = NULL;
	struct fuzz_environment environment = { 0 };
	struct vnfs_plugin_args *args = malloc(sizeof(*args));
	struct vnfs_tag_list *tags = malloc(sizeof(*tags));
	struct vnfs_tag_list *direct = malloc(sizeof(*direct));
	char error[512] = "", warning[512];
	char resolved[VNFS_TAGS_BUFFER];
	enum vnfs_report_mode mode;

	if (copy == NULL || args == NULL || tags == NULL || direct == NULL)
		abort();
	memcpy(copy, data, size);
	copy[size] = '\0';
	for (char *line = copy; line <= copy + size;) {
		size_t length = strcspn(line, "\n");

		line[length] = '\0';
		if (line[0] == '$') {
			if (environment.count < FUZZ_ENVIRONMENT_MAX)
				environment.entries[environment.count++] = line + 1;
		} else if (argc < MAX_LINES) {
			argv[argc++] = line;
		}
		line += length + 1;
	}
	if (argc > 0)
		user_tags = argv[--argc];

	if (vnfs_plugin_args_parse(args, argc, argv, error, sizeof(error)) != 0) {
		if (error[0] == '\0')
			abort();
		vnfs_plugin_args_defaults(args);
	} else {
		check_args(args);
	}
	if (user_tags != NULL && vnfs_report_mode_parse(user_tags, &mode) == 0 &&
	    strcmp(vnfs_report_mode_name(mode), "?") == 0)
		abort();

	/* As the plugin does on the node: resolve the user's text against the
	 * job's environment, then build the step's tags from the canonical form. */
	error[0] = '\0';
	if (user_tags != NULL &&
	    vnfs_plugin_resolve_tags(user_tags, fuzz_environment_lookup, &environment, resolved, sizeof(resolved),
				     error, sizeof(error)) == 0) {
		vnfs_tags_init(direct);
		if (resolved[0] != '\0' &&
		    vnfs_tags_parse(direct, resolved, NULL, NULL, error, sizeof(error)) != 0)
			abort();
		if (vnfs_plugin_collect_tags(args, fuzz_environment_lookup, &environment, resolved, tags, warning,
					     sizeof(warning), error, sizeof(error)) != 0) {
			/* Allowed only when envs= values and the user's tags are
			 * too many together. */
			if (error[0] == '\0' || !too_many(args, &environment, direct))
				abort();
		} else {
			check_collected(args, &environment, direct, tags);
		}
	} else if (user_tags != NULL && error[0] == '\0') {
		abort();
	}

	/* Without the user's tags: only envs= values, any refusal is a warning. */
	if (vnfs_plugin_collect_tags(args, fuzz_environment_lookup, &environment, NULL, tags, warning,
				     sizeof(warning), error, sizeof(error)) != 0)
		abort();
	free(direct);
	free(tags);
	free(args);
	free(copy);
	return 0;
}
