/*
 * plugin_args.h — what the SPANK plugin is told: the arguments of its
 * plugstack.conf line, the --vnfs-tags and --vnfs-report option values, and
 * the tags captured from the job's environment.
 *
 * Everything here is pure (no Slurm calls), so the exact messages a user or
 * an administrator sees are unit-tested without a cluster.  spank_vnfs.c
 * passes Slurm's lookups in as callbacks.
 */
#ifndef VNFS_PLUGIN_ARGS_H
#define VNFS_PLUGIN_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/paths.h"
#include "lib/tags.h"

#define VNFS_PLUGIN_DEFAULT_TIMEOUT_MS 2000
#define VNFS_PLUGIN_MAX_TIMEOUT_MS 60000
#define VNFS_PLUGIN_PATH_MAX 256
#define VNFS_PLUGIN_SOCKET_MAX 108 /* sizeof sockaddr_un.sun_path */

/* --vnfs-report, and report= as the site's default for it. */
enum vnfs_report_mode { VNFS_REPORT_NONE, VNFS_REPORT_BRIEF, VNFS_REPORT_FULL };

/*
 * cgroup=: auto registers Slurm's own cgroup v2 step directory when the task
 * is in one and creates a vnfs one otherwise; slurm and vnfs force one way.
 */
enum vnfs_cgroup_mode { VNFS_CGROUP_AUTO, VNFS_CGROUP_SLURM, VNFS_CGROUP_VNFS };

struct vnfs_plugin_args {
	char socket_path[VNFS_PLUGIN_SOCKET_MAX];
	unsigned env_count;
	char envs[VNFS_MAX_TAGS][VNFS_TAG_NAME_MAX + 1];
	int timeout_ms;
	enum vnfs_report_mode report;
	char report_dir[VNFS_PLUGIN_PATH_MAX];   /* "" = the helper's own */
	enum vnfs_cgroup_mode cgroup;
	char cgroup_root[VNFS_PLUGIN_PATH_MAX];  /* "" = the cgroup2 mount */
};

void vnfs_plugin_args_defaults(struct vnfs_plugin_args *args);

/*
 * Parses the plugstack.conf arguments ("socket=/run/x.sock", ...) over the
 * defaults.  Returns 0, or -1 with a message naming the argument, e.g.
 * "unknown argument 'sockt=/x' (known: socket= envs= ...)".
 */
int vnfs_plugin_args_parse(struct vnfs_plugin_args *args, int argc, char *const argv[],
			   char *error, size_t error_size);

/* "brief", "full", "none" (and "" = brief, for a bare --vnfs-report). */
int vnfs_report_mode_parse(const char *text, enum vnfs_report_mode *mode);
const char *vnfs_report_mode_name(enum vnfs_report_mode mode);
const char *vnfs_cgroup_mode_name(enum vnfs_cgroup_mode mode);

/*
 * Validates a --vnfs-tags value where the user typed it (srun, sbatch,
 * salloc) and resolves every NAME without a value through lookup (getenv
 * there), so the job carries only "NAME=value,..." to the nodes.  Returns 0
 * with the canonical text in resolved, or -1 with a message in error
 * ("--vnfs-tags: tag 'MY NAME': ...").
 */
int vnfs_plugin_resolve_tags(const char *text, vnfs_tag_lookup_fn lookup, void *context,
			     char *resolved, size_t resolved_size, char *error, size_t error_size);

/*
 * Builds the tags a step is registered with: first the administrator's envs=
 * variables as the job's environment has them (unset ones are skipped), then
 * the user's resolved tags.  The administrator's names win: a user tag named
 * like an envs= variable (set or not) is ignored, and warning says so in one
 * line ("--vnfs-tags: ACCOUNT ignored: the administrator sets this tag
 * (plugstack.conf envs=)").  A bad envs= value is not the user's fault: it is
 * left out and described in warning too (joined with "; "), and 0 is still
 * returned.  Returns -1 only if user_tags is invalid or the tags together are
 * too many (error says why), which cannot happen for text that
 * vnfs_plugin_resolve_tags produced and envs= within its limits.
 */
int vnfs_plugin_collect_tags(const struct vnfs_plugin_args *args, vnfs_tag_lookup_fn lookup,
			     void *context, const char *user_tags, struct vnfs_tag_list *tags,
			     char *warning, size_t warning_size, char *error, size_t error_size);

/*
 * The same one-line warning about user tags named like envs= variables, for
 * where the user typed --vnfs-tags (srun, sbatch, salloc: user_tags is the
 * text vnfs_plugin_resolve_tags produced), so the user sees it at once.
 * Empty if there are none.  Returns warning.
 */
const char *vnfs_plugin_ignored_tags_warning(const struct vnfs_plugin_args *args,
					     const char *user_tags, char *warning,
					     size_t warning_size);

#endif /* VNFS_PLUGIN_ARGS_H */
