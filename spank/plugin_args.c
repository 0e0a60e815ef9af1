/*
 * plugin_args.c — the plugstack.conf arguments of spank_vnfs.so and the
 * validation of its options.  No Slurm calls: see plugin_args.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/escape.h"
#include "spank/plugin_args.h"

void vnfs_plugin_args_defaults(struct vnfs_plugin_args *args)
{
	memset(args, 0, sizeof(*args));
	snprintf(args->socket_path, sizeof(args->socket_path), "%s", VNFS_DEFAULT_SOCKET);
	args->timeout_ms = VNFS_PLUGIN_DEFAULT_TIMEOUT_MS;
	args->report = VNFS_REPORT_NONE;
	args->cgroup = VNFS_CGROUP_AUTO;
}

int vnfs_report_mode_parse(const char *text, enum vnfs_report_mode *mode)
{
	if (!strcmp(text, "brief") || !strcmp(text, ""))
		*mode = VNFS_REPORT_BRIEF;
	else if (!strcmp(text, "full"))
		*mode = VNFS_REPORT_FULL;
	else if (!strcmp(text, "none"))
		*mode = VNFS_REPORT_NONE;
	else
		return -1;
	return 0;
}

const char *vnfs_report_mode_name(enum vnfs_report_mode mode)
{
	switch (mode) {
	case VNFS_REPORT_BRIEF: return "brief";
	case VNFS_REPORT_FULL: return "full";
	case VNFS_REPORT_NONE: return "none";
	}
	return "?";
}

const char *vnfs_cgroup_mode_name(enum vnfs_cgroup_mode mode)
{
	switch (mode) {
	case VNFS_CGROUP_AUTO: return "auto";
	case VNFS_CGROUP_SLURM: return "slurm";
	case VNFS_CGROUP_VNFS: return "vnfs";
	}
	return "?";
}

/* Copies value into a fixed buffer; a path that does not fit is an error, never truncated. */
static int copy_path(char *out, size_t size, const char *key, const char *value, bool absolute,
		     char *error, size_t error_size)
{
	size_t length = strlen(value);

	if (length == 0 || (absolute && value[0] != '/')) {
		snprintf(error, error_size, "%s: '%s' is not an absolute path", key, value);
		return -1;
	}
	if (length >= size) {
		snprintf(error, error_size, "%s: path of %zu bytes exceeds %zu", key, length,
			 size - 1);
		return -1;
	}
	memcpy(out, value, length + 1);
	return 0;
}

static int parse_timeout(struct vnfs_plugin_args *args, const char *value, char *error,
			 size_t error_size)
{
	char *end;
	long number;

	errno = 0;
	number = strtol(value, &end, 10);
	if (errno || end == value || *end || number < 1 || number > VNFS_PLUGIN_MAX_TIMEOUT_MS) {
		snprintf(error, error_size, "timeout_ms: '%s' is not a number from 1 to %d", value,
			 VNFS_PLUGIN_MAX_TIMEOUT_MS);
		return -1;
	}
	args->timeout_ms = (int)number;
	return 0;
}

/* envs=A,B,C: names of job environment variables captured as tags. */
static int parse_envs(struct vnfs_plugin_args *args, const char *value, char *error,
		      size_t error_size)
{
	const char *name = value;

	args->env_count = 0;
	while (*name) {
		size_t length = strcspn(name, ",");
		char copy[VNFS_TAG_NAME_MAX + 2];

		snprintf(copy, sizeof(copy), "%.*s",
			 (int)(length < sizeof(copy) ? length : sizeof(copy) - 1), name);
		if (length > VNFS_TAG_NAME_MAX || !vnfs_tag_name_valid(copy)) {
			snprintf(error, error_size,
				 "envs: '%.*s' is not an environment variable name (letters, digits "
				 "and '_', not starting with a digit, at most %d)",
				 (int)(length > 80 ? 80 : length), name, VNFS_TAG_NAME_MAX);
			return -1;
		}
		if (args->env_count == VNFS_MAX_TAGS) {
			snprintf(error, error_size, "envs: more than %d names", VNFS_MAX_TAGS);
			return -1;
		}
		memcpy(args->envs[args->env_count++], copy, length + 1);
		name += length;
		if (*name == ',' && *++name == '\0') {
			snprintf(error, error_size, "envs: '%s' ends with ','", value);
			return -1;
		}
	}
	return 0;
}

static int parse_socket(struct vnfs_plugin_args *args, const char *value, char *error,
			size_t error_size)
{
	return copy_path(args->socket_path, sizeof(args->socket_path), "socket", value, true,
			 error, error_size);
}

static int parse_report(struct vnfs_plugin_args *args, const char *value, char *error,
			size_t error_size)
{
	if (*value && vnfs_report_mode_parse(value, &args->report) == 0)
		return 0;
	snprintf(error, error_size, "report: '%s' is not brief, full or none", value);
	return -1;
}

static int parse_report_dir(struct vnfs_plugin_args *args, const char *value, char *error,
			    size_t error_size)
{
	return copy_path(args->report_dir, sizeof(args->report_dir), "report_dir", value, true,
			 error, error_size);
}

static int parse_cgroup(struct vnfs_plugin_args *args, const char *value, char *error,
			size_t error_size)
{
	if (!strcmp(value, "auto"))
		args->cgroup = VNFS_CGROUP_AUTO;
	else if (!strcmp(value, "slurm"))
		args->cgroup = VNFS_CGROUP_SLURM;
	else if (!strcmp(value, "vnfs"))
		args->cgroup = VNFS_CGROUP_VNFS;
	else {
		snprintf(error, error_size, "cgroup: '%s' is not auto, slurm or vnfs", value);
		return -1;
	}
	return 0;
}

static int parse_cgroup_root(struct vnfs_plugin_args *args, const char *value, char *error,
			     size_t error_size)
{
	return copy_path(args->cgroup_root, sizeof(args->cgroup_root), "cgroup_root", value, true,
			 error, error_size);
}

/* The plugstack.conf arguments, in the order the unknown-argument message
 * lists them: the one list of their keys. */
static const struct argument {
	const char *key;
	int (*parse)(struct vnfs_plugin_args *args, const char *value, char *error,
		     size_t error_size);
} arguments[] = {
	{ "socket", parse_socket },
	{ "envs", parse_envs },
	{ "timeout_ms", parse_timeout },
	{ "report", parse_report },
	{ "report_dir", parse_report_dir },
	{ "cgroup", parse_cgroup },
	{ "cgroup_root", parse_cgroup_root },
};

#define ARGUMENT_COUNT (sizeof(arguments) / sizeof(arguments[0]))

/* "unknown argument 'x' (known: socket= envs= ...)". */
static int unknown_argument(const char *argument, char *error, size_t error_size)
{
	char known[256];
	size_t used = 0;

	known[0] = '\0';
	for (size_t i = 0; i < ARGUMENT_COUNT && used < sizeof(known); i++)
		used += (size_t)snprintf(known + used, sizeof(known) - used, "%s%s=",
					 i ? " " : "", arguments[i].key);
	snprintf(error, error_size, "unknown argument '%.100s' (known: %s)", argument, known);
	return -1;
}

/* KEY=VALUE; a known key without '=' is not that argument. */
static int parse_one(struct vnfs_plugin_args *args, const char *argument, char *error,
		     size_t error_size)
{
	const char *equals = strchr(argument, '=');

	if (!equals)
		return unknown_argument(argument, error, error_size);
	for (size_t i = 0; i < ARGUMENT_COUNT; i++) {
		const char *key = arguments[i].key;

		if ((size_t)(equals - argument) == strlen(key) &&
		    !strncmp(argument, key, strlen(key)))
			return arguments[i].parse(args, equals + 1, error, error_size);
	}
	return unknown_argument(argument, error, error_size);
}

int vnfs_plugin_args_parse(struct vnfs_plugin_args *args, int argc, char *const argv[],
			   char *error, size_t error_size)
{
	vnfs_plugin_args_defaults(args);
	for (int i = 0; i < argc; i++)
		if (parse_one(args, argv[i], error, error_size) < 0)
			return -1;
	return 0;
}

int vnfs_plugin_resolve_tags(const char *text, vnfs_tag_lookup_fn lookup, void *context,
			     char *resolved, size_t resolved_size, char *error, size_t error_size)
{
	struct vnfs_tag_list *tags = malloc(sizeof(*tags));
	char reason[512];
	int status = -1;

	if (!tags) {
		snprintf(error, error_size, "--vnfs-tags: out of memory");
		return -1;
	}
	vnfs_tags_init(tags);
	if (vnfs_tags_parse(tags, text, lookup, context, reason, sizeof(reason)) < 0) {
		snprintf(error, error_size, "--vnfs-tags: %s", reason);
		goto out;
	}
	/* The canonical form must fit whole: a truncated tag would be a wrong tag. */
	if (resolved_size < (size_t)tags->used + 1) {
		snprintf(error, error_size, "--vnfs-tags: the tags take more than %zu bytes",
			 resolved_size - 1);
		goto out;
	}
	vnfs_tags_format(tags, resolved, resolved_size);
	status = 0;
out:
	free(tags);
	return status;
}

/* A name listed in envs= belongs to the administrator (a charge-back account). */
static bool administrator_names(const struct vnfs_plugin_args *args, const char *name)
{
	for (unsigned i = 0; i < args->env_count; i++)
		if (strcmp(args->envs[i], name) == 0)
			return true;
	return false;
}

/* Adds "; " and text to warning (a one-line message), as far as it fits. */
static void add_warning(char *warning, size_t warning_size, const char *text)
{
	size_t used = strnlen(warning, warning_size);

	if (used + 1 < warning_size)
		snprintf(warning + used, warning_size - used, "%s%s", used ? "; " : "", text);
}

/*
 * The user's tags after the administrator's.  A user tag whose name is an
 * envs= name is left out, whether that variable is set or not: otherwise
 * --vnfs-tags ACCOUNT=other would replace the account the site charges.
 */
static int add_user_tags(const struct vnfs_plugin_args *args, const struct vnfs_tag_list *user,
			 struct vnfs_tag_list *tags, char *ignored, size_t ignored_size,
			 char *error, size_t error_size)
{
	const char *name, *value;
	char reason[512];
	size_t used = 0;

	ignored[0] = '\0';
	for (unsigned i = 0; vnfs_tags_get(user, i, &name, &value); i++) {
		if (administrator_names(args, name)) {
			if (used + 1 < ignored_size)
				used += (size_t)snprintf(ignored + used, ignored_size - used, "%s%s",
							 used ? ", " : "", name);
			continue;
		}
		if (vnfs_tags_set(tags, name, value, reason, sizeof(reason)) < 0) {
			snprintf(error, error_size, "--vnfs-tags: %s", reason);
			return -1;
		}
	}
	return 0;
}

/* The one-line warning about the user's tags that envs= names overrode. */
static const char *ignored_message(const char *ignored, char *message, size_t size)
{
	snprintf(message, size,
		 "--vnfs-tags: %s ignored: the administrator sets %s (plugstack.conf envs=)",
		 ignored, strchr(ignored, ',') ? "these tags" : "this tag");
	return message;
}

int vnfs_plugin_collect_tags(const struct vnfs_plugin_args *args, vnfs_tag_lookup_fn lookup,
			     void *context, const char *user_tags, struct vnfs_tag_list *tags,
			     char *warning, size_t warning_size, char *error, size_t error_size)
{
	struct vnfs_tag_list user;
	char reason[512], ignored[VNFS_TAGS_BUFFER], message[VNFS_TAGS_BUFFER + 96];

	vnfs_tags_init(tags);
	if (warning_size)
		warning[0] = '\0';
	for (unsigned i = 0; i < args->env_count; i++) {
		const char *value = lookup(args->envs[i], context);

		if (!value)
			continue;
		if (vnfs_tags_set(tags, args->envs[i], value, reason, sizeof(reason)) < 0 &&
		    warning_size && !warning[0])
			snprintf(warning, warning_size, "envs: %s: left out", reason);
	}
	if (!user_tags || !*user_tags)
		return 0;
	vnfs_tags_init(&user);
	if (vnfs_tags_parse(&user, user_tags, NULL, NULL, reason, sizeof(reason)) < 0) {
		snprintf(error, error_size, "--vnfs-tags: %s", reason);
		return -1;
	}
	if (add_user_tags(args, &user, tags, ignored, sizeof(ignored), error, error_size) < 0)
		return -1;
	if (ignored[0] && warning_size)
		add_warning(warning, warning_size, ignored_message(ignored, message, sizeof(message)));
	return 0;
}

const char *vnfs_plugin_ignored_tags_warning(const struct vnfs_plugin_args *args,
					     const char *user_tags, char *warning,
					     size_t warning_size)
{
	struct vnfs_tag_list *user = malloc(sizeof(*user)), *kept = malloc(sizeof(*kept));
	char ignored[VNFS_TAGS_BUFFER], reason[512];

	if (warning_size)
		warning[0] = '\0';
	/* Out of memory: no warning; the tags registered are the same either way. */
	if (user && kept && user_tags && *user_tags) {
		vnfs_tags_init(user);
		vnfs_tags_init(kept);
		/* Text that does not parse gets its own error where it is used. */
		if (vnfs_tags_parse(user, user_tags, NULL, NULL, reason, sizeof(reason)) == 0 &&
		    add_user_tags(args, user, kept, ignored, sizeof(ignored), reason,
				  sizeof(reason)) == 0 &&
		    ignored[0] && warning_size)
			ignored_message(ignored, warning, warning_size);
	}
	free(user);
	free(kept);
	return warning;
}
