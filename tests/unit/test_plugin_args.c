/*
 * test_plugin_args.c — the plugstack.conf arguments of spank_vnfs.so and the
 * --vnfs-tags / --vnfs-report validation, through the same functions the
 * plugin calls (spank/plugin_args.c, lib/tags.c), with exact messages.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spank/plugin_args.h"

static int parse(struct vnfs_plugin_args *args, char *error, size_t size, int argc, ...)
{
	char *argv[16];
	va_list list;

	assert_true(argc <= 16);
	va_start(list, argc);
	for (int i = 0; i < argc; i++)
		argv[i] = va_arg(list, char *);
	va_end(list);
	error[0] = '\0';
	return vnfs_plugin_args_parse(args, argc, argv, error, size);
}

static void test_defaults(void **state)
{
	struct vnfs_plugin_args args;
	char error[512];

	(void)state;
	assert_int_equal(parse(&args, error, sizeof(error), 0), 0);
	assert_string_equal(args.socket_path, "/run/vnfs/vnfs.sock");
	assert_int_equal(args.timeout_ms, 2000);
	assert_int_equal(args.report, VNFS_REPORT_NONE);
	assert_int_equal(args.cgroup, VNFS_CGROUP_AUTO);
	assert_int_equal(args.env_count, 0);
	assert_string_equal(args.report_dir, "");
	assert_string_equal(args.cgroup_root, "");
}

static void test_every_argument(void **state)
{
	struct vnfs_plugin_args args;
	char error[512];

	(void)state;
	assert_int_equal(parse(&args, error, sizeof(error), 7, "socket=/run/x/h.sock",
			       "envs=PROJECT,SLURM_JOB_ACCOUNT", "timeout_ms=150", "report=full",
			       "report_dir=/var/lib/vnfs/reports", "cgroup=vnfs",
			       "cgroup_root=/sys/fs/cgroup/unified"),
			 0);
	assert_string_equal(error, "");
	assert_string_equal(args.socket_path, "/run/x/h.sock");
	assert_int_equal(args.env_count, 2);
	assert_string_equal(args.envs[0], "PROJECT");
	assert_string_equal(args.envs[1], "SLURM_JOB_ACCOUNT");
	assert_int_equal(args.timeout_ms, 150);
	assert_int_equal(args.report, VNFS_REPORT_FULL);
	assert_string_equal(args.report_dir, "/var/lib/vnfs/reports");
	assert_int_equal(args.cgroup, VNFS_CGROUP_VNFS);
	assert_string_equal(args.cgroup_root, "/sys/fs/cgroup/unified");

	assert_int_equal(parse(&args, error, sizeof(error), 3, "report=brief", "cgroup=slurm",
			       "report=none"),
			 0);
	assert_int_equal(args.report, VNFS_REPORT_NONE);
	assert_int_equal(args.cgroup, VNFS_CGROUP_SLURM);
	assert_int_equal(parse(&args, error, sizeof(error), 2, "cgroup=auto", "report=brief"), 0);
	assert_int_equal(args.cgroup, VNFS_CGROUP_AUTO);
	assert_int_equal(args.report, VNFS_REPORT_BRIEF);
}

static void test_unknown_argument(void **state)
{
	struct vnfs_plugin_args args;
	char error[512];

	(void)state;
	assert_int_equal(parse(&args, error, sizeof(error), 2, "socket=/a", "sockt=/run/x"), -1);
	assert_string_equal(error, "unknown argument 'sockt=/run/x' (known: socket= envs= "
				   "timeout_ms= report= report_dir= cgroup= cgroup_root=)");
	assert_int_equal(parse(&args, error, sizeof(error), 1, "strict"), -1);
	assert_string_equal(error, "unknown argument 'strict' (known: socket= envs= timeout_ms= "
				   "report= report_dir= cgroup= cgroup_root=)");
	/* A known name without '=' is not that argument. */
	assert_int_equal(parse(&args, error, sizeof(error), 1, "socket"), -1);
	assert_non_null(strstr(error, "unknown argument 'socket'"));
}

static void test_bad_values(void **state)
{
	struct vnfs_plugin_args args;
	char error[512], long_path[300];

	(void)state;
	assert_int_equal(parse(&args, error, sizeof(error), 1, "timeout_ms=0"), -1);
	assert_string_equal(error, "timeout_ms: '0' is not a number from 1 to 60000");
	assert_int_equal(parse(&args, error, sizeof(error), 1, "timeout_ms=12ms"), -1);
	assert_string_equal(error, "timeout_ms: '12ms' is not a number from 1 to 60000");
	assert_int_equal(parse(&args, error, sizeof(error), 1, "timeout_ms=60001"), -1);
	assert_string_equal(error, "timeout_ms: '60001' is not a number from 1 to 60000");
	assert_int_equal(parse(&args, error, sizeof(error), 1, "timeout_ms="), -1);
	assert_string_equal(error, "timeout_ms: '' is not a number from 1 to 60000");
	assert_int_equal(parse(&args, error, sizeof(error), 1, "timeout_ms=60000"), 0);
	assert_int_equal(args.timeout_ms, 60000);

	assert_int_equal(parse(&args, error, sizeof(error), 1, "report=verbose"), -1);
	assert_string_equal(error, "report: 'verbose' is not brief, full or none");
	assert_int_equal(parse(&args, error, sizeof(error), 1, "report="), -1);
	assert_string_equal(error, "report: '' is not brief, full or none");
	assert_int_equal(parse(&args, error, sizeof(error), 1, "cgroup=v1"), -1);
	assert_string_equal(error, "cgroup: 'v1' is not auto, slurm or vnfs");

	assert_int_equal(parse(&args, error, sizeof(error), 1, "socket=run/h.sock"), -1);
	assert_string_equal(error, "socket: 'run/h.sock' is not an absolute path");
	assert_int_equal(parse(&args, error, sizeof(error), 1, "report_dir="), -1);
	assert_string_equal(error, "report_dir: '' is not an absolute path");
	assert_int_equal(parse(&args, error, sizeof(error), 1, "cgroup_root=cg"), -1);
	assert_string_equal(error, "cgroup_root: 'cg' is not an absolute path");

	/* 108 bytes do not fit sun_path with its NUL; 107 do. */
	memset(long_path, 'a', sizeof(long_path));
	long_path[0] = '/';
	memcpy(long_path, "socket=/", 8);
	long_path[7 + 108] = '\0';
	assert_int_equal(parse(&args, error, sizeof(error), 1, long_path), -1);
	assert_string_equal(error, "socket: path of 108 bytes exceeds 107");
	long_path[7 + 107] = '\0';
	assert_int_equal(parse(&args, error, sizeof(error), 1, long_path), 0);
	assert_int_equal(strlen(args.socket_path), 107);
}

static void test_envs(void **state)
{
	struct vnfs_plugin_args args;
	char error[512], many[40 * 8];

	(void)state;
	assert_int_equal(parse(&args, error, sizeof(error), 1, "envs=A,MY VAR"), -1);
	assert_string_equal(error, "envs: 'MY VAR' is not an environment variable name (letters, "
				   "digits and '_', not starting with a digit, at most 64)");
	assert_int_equal(parse(&args, error, sizeof(error), 1, "envs=A,,B"), -1);
	assert_string_equal(error, "envs: '' is not an environment variable name (letters, digits "
				   "and '_', not starting with a digit, at most 64)");
	assert_int_equal(parse(&args, error, sizeof(error), 1, "envs=A,"), -1);
	assert_string_equal(error, "envs: 'A,' ends with ','");
	assert_int_equal(parse(&args, error, sizeof(error), 1, "envs=9LIVES"), -1);
	assert_non_null(strstr(error, "envs: '9LIVES' is not"));

	/* envs= empty means none. */
	assert_int_equal(parse(&args, error, sizeof(error), 1, "envs="), 0);
	assert_int_equal(args.env_count, 0);

	/* 33 names: one too many. */
	strcpy(many, "envs=");
	for (int i = 0; i < 33; i++)
		sprintf(many + strlen(many), "%sV%d", i ? "," : "", i);
	assert_int_equal(parse(&args, error, sizeof(error), 1, many), -1);
	assert_string_equal(error, "envs: more than 32 names");
	*strrchr(many, ',') = '\0';
	assert_int_equal(parse(&args, error, sizeof(error), 1, many), 0);
	assert_int_equal(args.env_count, 32);
	assert_string_equal(args.envs[31], "V31");
}

static void test_report_mode(void **state)
{
	enum vnfs_report_mode mode = VNFS_REPORT_NONE;

	(void)state;
	assert_int_equal(vnfs_report_mode_parse("", &mode), 0);
	assert_int_equal(mode, VNFS_REPORT_BRIEF);
	assert_int_equal(vnfs_report_mode_parse("full", &mode), 0);
	assert_int_equal(mode, VNFS_REPORT_FULL);
	assert_int_equal(vnfs_report_mode_parse("none", &mode), 0);
	assert_int_equal(mode, VNFS_REPORT_NONE);
	assert_int_equal(vnfs_report_mode_parse("brief", &mode), 0);
	assert_int_equal(mode, VNFS_REPORT_BRIEF);
	assert_int_equal(vnfs_report_mode_parse("Brief", &mode), -1);
	assert_int_equal(mode, VNFS_REPORT_BRIEF);
	assert_string_equal(vnfs_report_mode_name(VNFS_REPORT_FULL), "full");
	assert_string_equal(vnfs_cgroup_mode_name(VNFS_CGROUP_VNFS), "vnfs");
}

/* A fixed environment instead of the process's, for the lookups. */
static const char *fake_environment(const char *name, void *context)
{
	const char *const *pairs = context;

	for (int i = 0; pairs[i]; i += 2)
		if (!strcmp(pairs[i], name))
			return pairs[i + 1];
	return NULL;
}

static void test_resolve_tags(void **state)
{
	const char *environment[] = { "PROJECT_NAME", "alpha", "RUN", "7", NULL };
	char resolved[VNFS_TAGS_BUFFER], error[768];

	(void)state;
	assert_int_equal(vnfs_plugin_resolve_tags("PROJECT_NAME", fake_environment, environment,
						  resolved, sizeof(resolved), error, sizeof(error)),
			 0);
	assert_string_equal(resolved, "PROJECT_NAME=alpha");
	assert_int_equal(vnfs_plugin_resolve_tags("PROJECT_NAME,RUN,STAGE=train",
						  fake_environment, environment, resolved,
						  sizeof(resolved), error, sizeof(error)),
			 0);
	assert_string_equal(resolved, "PROJECT_NAME=alpha,RUN=7,STAGE=train");
	/* A later NAME replaces an earlier one. */
	assert_int_equal(vnfs_plugin_resolve_tags("STAGE=a,STAGE=b", fake_environment, environment,
						  resolved, sizeof(resolved), error, sizeof(error)),
			 0);
	assert_string_equal(resolved, "STAGE=b");
}

static void test_resolve_tags_errors(void **state)
{
	const char *environment[] = { "PROJECT_NAME", "alpha", "BAD", "a b", NULL };
	char resolved[VNFS_TAGS_BUFFER], error[768], *text;
	size_t size;

	(void)state;
	/* The messages come from lib/tags.c; the plugin prefixes the option. */
	assert_int_equal(vnfs_plugin_resolve_tags("MY NAME=x", fake_environment, environment,
						  resolved, sizeof(resolved), error, sizeof(error)),
			 -1);
	assert_string_equal(error, "--vnfs-tags: tag 'MY NAME': a name is letters, digits and "
				   "'_' (not starting with a digit)");

	assert_int_equal(vnfs_plugin_resolve_tags("UNSET_VARIABLE", fake_environment, environment,
						  resolved, sizeof(resolved), error, sizeof(error)),
			 -1);
	assert_string_equal(error, "--vnfs-tags: tag 'UNSET_VARIABLE': $UNSET_VARIABLE is not set "
				   "in the job's environment (use UNSET_VARIABLE=VALUE to set it)");

	assert_int_equal(vnfs_plugin_resolve_tags("BAD", fake_environment, environment, resolved,
						  sizeof(resolved), error, sizeof(error)),
			 -1);
	assert_string_equal(error, "--vnfs-tags: tag 'BAD': character ' ' is not allowed in a "
				   "value (a value is letters, digits and . _ : @ + % -) (value "
				   "taken from $BAD)");

	/* 65 tags: over VNFS_MAX_TAGS. */
	size = 65 * 8 + 1;
	text = calloc(1, size);
	assert_non_null(text);
	for (int i = 0; i < 65; i++)
		sprintf(text + strlen(text), "%sT%d=v", i ? "," : "", i);
	assert_int_equal(vnfs_plugin_resolve_tags(text, fake_environment, environment, resolved,
						  sizeof(resolved), error, sizeof(error)),
			 -1);
	assert_string_equal(error, "--vnfs-tags: too many tags: at most 32 are allowed");
	free(text);

	/* A 10 KiB value. */
	size = 10 * 1024 + 8;
	text = malloc(size);
	assert_non_null(text);
	strcpy(text, "BIG=");
	memset(text + 4, 'x', 10 * 1024);
	text[4 + 10 * 1024] = '\0';
	assert_int_equal(vnfs_plugin_resolve_tags(text, fake_environment, environment, resolved,
						  sizeof(resolved), error, sizeof(error)),
			 -1);
	assert_string_equal(error,
			    "--vnfs-tags: tag 'BIG': value of 10240 characters exceeds the limit of 256");
	free(text);

	/* The canonical text must fit whole or not at all. */
	assert_int_equal(vnfs_plugin_resolve_tags("PROJECT_NAME", fake_environment, environment,
						  resolved, 10, error, sizeof(error)),
			 -1);
	assert_string_equal(error, "--vnfs-tags: the tags take more than 9 bytes");
}

static void test_collect_tags(void **state)
{
	const char *environment[] = { "PROJECT", "p1", "ACCOUNT", "bad value", "QUEUE", "gpu",
				      NULL };
	const char *argv[] = { "envs=PROJECT,ACCOUNT,QUEUE,MISSING" };
	struct vnfs_plugin_args args;
	struct vnfs_tag_list tags;
	char warning[512], error[768], text[VNFS_TAGS_BUFFER];

	(void)state;
	assert_int_equal(vnfs_plugin_args_parse(&args, 1, (char *const *)argv, error,
						sizeof(error)),
			 0);
	assert_int_equal(vnfs_plugin_collect_tags(&args, fake_environment, environment,
						  "QUEUE=cpu,RUN=3", &tags, warning,
						  sizeof(warning), error, sizeof(error)),
			 0);
	/* The administrator's QUEUE wins over the user's; MISSING is skipped. */
	assert_string_equal(vnfs_tags_format(&tags, text, sizeof(text)),
			    "PROJECT=p1,QUEUE=gpu,RUN=3");
	assert_string_equal(warning, "envs: tag 'ACCOUNT': character ' ' is not allowed in a "
				     "value (a value is letters, digits and . _ : @ + % -): left out; "
				     "--vnfs-tags: QUEUE ignored: the administrator sets this tag "
				     "(plugstack.conf envs=)");

	/* No user tags and only good variables: no warning. */
	environment[3] = "acct1";
	assert_int_equal(vnfs_plugin_collect_tags(&args, fake_environment, environment, NULL,
						  &tags, warning, sizeof(warning), error,
						  sizeof(error)),
			 0);
	assert_string_equal(vnfs_tags_format(&tags, text, sizeof(text)),
			    "PROJECT=p1,ACCOUNT=acct1,QUEUE=gpu");
	assert_string_equal(warning, "");

	/* An envs= name is the administrator's even where the variable is unset
	 * or its value was left out: a charge-back account cannot be replaced. */
	environment[3] = "bad value";
	assert_int_equal(vnfs_plugin_collect_tags(&args, fake_environment, environment,
						  "ACCOUNT=mine,MISSING=1,QUEUE=cpu,RUN=3", &tags,
						  warning, sizeof(warning), error, sizeof(error)),
			 0);
	assert_string_equal(vnfs_tags_format(&tags, text, sizeof(text)),
			    "PROJECT=p1,QUEUE=gpu,RUN=3");
	assert_string_equal(warning, "envs: tag 'ACCOUNT': character ' ' is not allowed in a "
				     "value (a value is letters, digits and . _ : @ + % -): left out; "
				     "--vnfs-tags: ACCOUNT, MISSING, QUEUE ignored: the administrator "
				     "sets these tags (plugstack.conf envs=)");
	environment[3] = "acct1";
	assert_int_equal(vnfs_plugin_collect_tags(&args, fake_environment, environment,
						  "ACCOUNT=mine", &tags, warning, sizeof(warning),
						  error, sizeof(error)),
			 0);
	assert_string_equal(vnfs_tags_format(&tags, text, sizeof(text)),
			    "PROJECT=p1,ACCOUNT=acct1,QUEUE=gpu");
	assert_string_equal(warning, "--vnfs-tags: ACCOUNT ignored: the administrator sets this "
				     "tag (plugstack.conf envs=)");

	/* The same warning where the user typed the tags, nothing without a clash. */
	assert_string_equal(vnfs_plugin_ignored_tags_warning(&args, "QUEUE=cpu,RUN=3,ACCOUNT=x",
							     text, sizeof(text)),
			    "--vnfs-tags: QUEUE, ACCOUNT ignored: the administrator sets these "
			    "tags (plugstack.conf envs=)");
	assert_string_equal(vnfs_plugin_ignored_tags_warning(&args, "RUN=3", text, sizeof(text)),
			    "");
	assert_string_equal(vnfs_plugin_ignored_tags_warning(&args, "", text, sizeof(text)), "");

	/* Corrupt carried text is refused, not half-used. */
	assert_int_equal(vnfs_plugin_collect_tags(&args, fake_environment, environment,
						  "A=1,B C=2", &tags, warning, sizeof(warning),
						  error, sizeof(error)),
			 -1);
	assert_string_equal(error, "--vnfs-tags: tag 'B C': a name is letters, digits and '_' "
				   "(not starting with a digit)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_every_argument),
		cmocka_unit_test(test_unknown_argument),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_envs),
		cmocka_unit_test(test_report_mode),
		cmocka_unit_test(test_resolve_tags),
		cmocka_unit_test(test_resolve_tags_errors),
		cmocka_unit_test(test_collect_tags),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
