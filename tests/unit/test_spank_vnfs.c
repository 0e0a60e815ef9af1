/*
 * test_spank_vnfs.c — the plugin's callbacks (spank/spank_vnfs.c) on the
 * build machine, as each Slurm process calls them.
 *
 * Slurm's SPANK API is stubbed below: one job step whose ids, uid, task pid
 * and environment each test sets, and every slurm_error/slurm_info line
 * kept.  The step's cgroup is stubbed too (vnfs_step_cgroup_place records
 * how it was asked; step_cgroup.c has its own test), and vnfs-helper is a
 * thread answering on a Unix socket the way helper/main.c does.
 * spank_vnfs.c is included, so that each test starts from a zeroed
 * `plugin`, as each new Slurm process does.
 */
#include "spank/spank_vnfs.c"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cmocka.h>

#include "lib/record_json.h"
#include "workload_fixtures.h"

#define MAX_LINES 16
#define MAX_CALLS 8

/* ------------------------------------------------------------ Slurm, stubbed */

static struct {
	spank_context_t context;
	int remote;
	uint32_t job_id, step_id;
	uid_t uid;
	pid_t pid;
	const char *carried_tags;  /* SLURM_SPANK_VNFS_TAGS in the job's environment */
	const char *account;       /* ACCOUNT in the job's environment */
	struct spank_option *options[4];
	unsigned option_count;
	char control_name[64], control_value[VNFS_TAGS_BUFFER]; /* spank_job_control_setenv */
	char lines[MAX_LINES][1024]; /* "error: ...", "info: ...": Slurm's log */
	unsigned line_count;
} slurm;

static void keep_line(const char *level, const char *format, va_list list)
{
	int used;

	if (slurm.line_count == MAX_LINES)
		return;
	used = snprintf(slurm.lines[slurm.line_count], sizeof(slurm.lines[0]), "%s: ", level);
	vsnprintf(slurm.lines[slurm.line_count] + used, sizeof(slurm.lines[0]) - (size_t)used,
		  format, list);
	slurm.line_count++;
}

void slurm_error(const char *format, ...)
{
	va_list list;

	va_start(list, format);
	keep_line("error", format, list);
	va_end(list);
}

void slurm_info(const char *format, ...)
{
	va_list list;

	va_start(list, format);
	keep_line("info", format, list);
	va_end(list);
}

void slurm_debug(const char *format, ...)
{
	va_list list;

	va_start(list, format);
	keep_line("debug", format, list);
	va_end(list);
}

spank_context_t spank_context(void)
{
	return slurm.context;
}

int spank_remote(spank_t spank)
{
	(void)spank;
	return slurm.remote;
}

spank_err_t spank_option_register(spank_t spank, struct spank_option *option)
{
	(void)spank;
	if (slurm.option_count == 4)
		return ESPANK_ERROR;
	slurm.options[slurm.option_count++] = option;
	return ESPANK_SUCCESS;
}

spank_err_t spank_get_item(spank_t spank, spank_item_t item, ...)
{
	spank_err_t status = ESPANK_SUCCESS;
	va_list list;

	(void)spank;
	va_start(list, item);
	switch (item) {
	case S_JOB_ID:
		*va_arg(list, uint32_t *) = slurm.job_id;
		break;
	case S_JOB_STEPID:
		*va_arg(list, uint32_t *) = slurm.step_id;
		break;
	case S_JOB_UID:
		*va_arg(list, uid_t *) = slurm.uid;
		break;
	case S_TASK_PID:
		*va_arg(list, pid_t *) = slurm.pid;
		break;
	default:
		status = ESPANK_BAD_ARG;
		break;
	}
	va_end(list);
	return status;
}

spank_err_t spank_getenv(spank_t spank, const char *name, char *buffer, int size)
{
	const char *value = NULL;

	(void)spank;
	if (!strcmp(name, CARRIED_TAGS))
		value = slurm.carried_tags;
	else if (!strcmp(name, "ACCOUNT"))
		value = slurm.account;
	if (!value)
		return ESPANK_ENV_NOEXIST;
	snprintf(buffer, (size_t)size, "%s", value);
	return ESPANK_SUCCESS;
}

spank_err_t spank_job_control_setenv(spank_t spank, const char *name, const char *value,
				     int overwrite)
{
	(void)spank;
	(void)overwrite;
	snprintf(slurm.control_name, sizeof(slurm.control_name), "%s", name);
	snprintf(slurm.control_value, sizeof(slurm.control_value), "%s", value);
	return ESPANK_SUCCESS;
}

/* ---------------------------------------------------- the step's cgroup, stubbed */

static struct {
	unsigned place_count;
	enum vnfs_cgroup_mode modes[MAX_CALLS];
	pid_t pids[MAX_CALLS];
	bool no_slurm_directory;   /* cgroup=slurm fails, as without cgroup/v2 */
	unsigned remove_count;
} cgroups;

int vnfs_step_cgroup_place(enum vnfs_cgroup_mode mode, const char *cgroup_root, pid_t pid,
			   uint32_t job_id, uint32_t step_id, struct vnfs_step_cgroup *cgroup,
			   char *error, size_t error_size)
{
	char step_name[32];

	(void)cgroup_root;
	if (cgroups.place_count < MAX_CALLS) {
		cgroups.modes[cgroups.place_count] = mode;
		cgroups.pids[cgroups.place_count] = pid;
	}
	cgroups.place_count++;
	if (mode == VNFS_CGROUP_SLURM && cgroups.no_slurm_directory) {
		snprintf(error, error_size, "cgroup=slurm, but the task is not in a Slurm cgroup v2 "
			 "step directory");
		return -1;
	}
	memset(cgroup, 0, sizeof(*cgroup));
	snprintf(cgroup->root, sizeof(cgroup->root), "/sys/fs/cgroup");
	snprintf(cgroup->relative, sizeof(cgroup->relative), "/system.slice/job_%u/step_%s",
		 job_id, vnfs_step_name(step_id, step_name, sizeof(step_name)));
	cgroup->id = 4242;
	return 0;
}

int vnfs_step_cgroup_remove(const struct vnfs_step_cgroup *cgroup, int wait_ms, char *error,
			    size_t error_size)
{
	(void)cgroup;
	(void)wait_ms;
	(void)error;
	(void)error_size;
	cgroups.remove_count++;
	return 0;
}

/* ------------------------------------------------------ vnfs-helper, a thread */

static struct {
	char directory[64], socket_path[96];
	int listener;
	pthread_t thread;
	const char *register_error;  /* REGISTER answered ok:false with this */
	pthread_mutex_t lock;
	unsigned request_count;
	struct vnfs_request requests[MAX_CALLS];
} helper = { .lock = PTHREAD_MUTEX_INITIALIZER };

/*
 * The reply line helper/main.c gives each request this test sends, written
 * out as the wire has it (docs/PROTOCOL.md), not with lib's encoders: the
 * test checks the plugin against the protocol, not against itself.  QUERY
 * and FINISH: job 7 with step 0, which read 8192 bytes in 2 calls.  Returns
 * a malloc'd line.
 */
static char *answer(const struct vnfs_request *request)
{
	static struct vnfs_step_stats stats;
	struct vnfs_step_record step = { .job_id = 7, .step_id = 0, .uid = 1000,
					 .start_time_ms = 1000, .sample_time_ms = 2000,
					 .stats = &stats };
	struct json_object *job_json;
	struct vnfs_job job;
	char *line = NULL;
	int length = -1;

	vnfs_record_identify_slurm(&step, 7, 0);
	switch (request->type) {
	case VNFS_REQUEST_REGISTER:
		if (helper.register_error)
			length = asprintf(&line, "{\"v\":1,\"ok\":false,\"error\":\"%s\"}\n",
					  helper.register_error);
		else
			length = asprintf(&line, "{\"v\":1,\"ok\":true,\"slot\":3}\n");
		break;
	case VNFS_REQUEST_QUERY:
	case VNFS_REQUEST_FINISH:
		stats.operations[VNFS_OP_READ].count = 2;
		stats.operations[VNFS_OP_READ].bytes = 8192;
		vnfs_job_of_steps(&job, &step.workload, "n1", &step, 1);
		job_json = vnfs_job_to_json(&job);
		length = asprintf(&line, "{\"v\":1,\"ok\":true,\"job\":%s}\n",
				  json_object_to_json_string_ext(job_json, JSON_C_TO_STRING_PLAIN));
		json_object_put(job_json);
		break;
	default:
		length = asprintf(&line, "{\"v\":1,\"ok\":true}\n");
		break;
	}
	return length < 0 ? NULL : line;
}

static void serve_one(int connection)
{
	struct vnfs_request request;
	char line[VNFS_DEFAULT_MAX_MESSAGE], error[256], *newline, *reply;
	size_t used = 0;
	ssize_t got;

	while (used < sizeof(line) && (got = read(connection, line + used,
						  sizeof(line) - used)) > 0) {
		used += (size_t)got;
		if (memchr(line, '\n', used))
			break;
	}
	newline = memchr(line, '\n', used);
	if (newline)
		used = (size_t)(newline - line);
	if (vnfs_request_decode(line, used, sizeof(line), &request, error, sizeof(error)) < 0) {
		fprintf(stderr, "fake helper: %s\n", error);
		return;
	}
	pthread_mutex_lock(&helper.lock);
	if (helper.request_count < MAX_CALLS)
		helper.requests[helper.request_count] = request;
	helper.request_count++;
	pthread_mutex_unlock(&helper.lock);
	reply = answer(&request);
	if (!reply || write(connection, reply, strlen(reply)) < 0)
		fprintf(stderr, "fake helper: cannot answer: %s\n", strerror(errno));
	free(reply);
}

static void *serve(void *unused)
{
	int connection;

	(void)unused;
	/* shutdown() of the listener ends accept() with an error. */
	while ((connection = accept(helper.listener, NULL, NULL)) >= 0) {
		serve_one(connection);
		close(connection);
	}
	return NULL;
}

static int start_helper(void **state)
{
	struct sockaddr_un address = { .sun_family = AF_UNIX };

	(void)state;
	memset(&plugin, 0, sizeof(plugin));
	memset(&slurm, 0, sizeof(slurm));
	memset(&cgroups, 0, sizeof(cgroups));
	slurm.context = S_CTX_REMOTE;
	slurm.remote = 1;
	slurm.job_id = 7;
	slurm.uid = 1000;
	slurm.pid = 1234;
	helper.register_error = NULL;
	helper.request_count = 0;
	snprintf(helper.directory, sizeof(helper.directory), "/tmp/vnfs-test-spank-XXXXXX");
	if (!mkdtemp(helper.directory))
		return -1;
	snprintf(helper.socket_path, sizeof(helper.socket_path), "%s/vnfs.sock", helper.directory);
	snprintf(address.sun_path, sizeof(address.sun_path), "%s", helper.socket_path);
	helper.listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (helper.listener < 0 ||
	    bind(helper.listener, (struct sockaddr *)&address, sizeof(address)) < 0 ||
	    listen(helper.listener, 8) < 0 ||
	    pthread_create(&helper.thread, NULL, serve, NULL) != 0)
		return -1;
	return 0;
}

static int stop_helper(void **state)
{
	(void)state;
	shutdown(helper.listener, SHUT_RDWR);
	pthread_join(helper.thread, NULL);
	close(helper.listener);
	unlink(helper.socket_path);
	rmdir(helper.directory);
	/* What a test's slurmstepd left mapped (exit not called). */
	if (plugin.step.unaccounted)
		munmap(plugin.step.unaccounted, sizeof(*plugin.step.unaccounted));
	unsetenv(CARRIED_TAGS);
	return 0;
}

/* ------------------------------------------------------------------ helpers */

/* The plugstack.conf line: socket=<the fake helper's> and extra. */
struct plugstack {
	char socket[200];
	char *argv[4];
	int argc;
};

static void plugstack_line(struct plugstack *line, const char *socket_path, const char *first,
			   const char *second)
{
	snprintf(line->socket, sizeof(line->socket), "socket=%s", socket_path);
	line->argc = 0;
	line->argv[line->argc++] = line->socket;
	if (first)
		line->argv[line->argc++] = (char *)first;
	if (second)
		line->argv[line->argc++] = (char *)second;
}

static struct spank_option *registered_option(const char *name)
{
	for (unsigned i = 0; i < slurm.option_count; i++)
		if (!strcmp(slurm.options[i]->name, name))
			return slurm.options[i];
	fail_msg("option %s not registered", name);
	return NULL;
}

static void assert_request(unsigned index, enum vnfs_request_type type, uint32_t step_id)
{
	assert_true(helper.request_count > index);
	assert_int_equal(helper.requests[index].type, type);
	assert_slurm_step(&helper.requests[index].workload, 7, step_id);
}

/* -------------------------------------------------------------------- tests */

static void test_bad_plugstack_line_is_said_once(void **state)
{
	char *argv[] = { "sockt=/run/x.sock" };

	(void)state;
	assert_int_equal(slurm_spank_init(NULL, 1, argv), -1);
	/* The options are registered all the same, so jobs that use them run. */
	assert_int_equal(slurm.option_count, 2);
	assert_int_equal(slurm_spank_task_post_fork(NULL, 1, argv), -1);
	assert_int_equal(slurm_spank_exit(NULL, 1, argv), -1);
	assert_int_equal(slurm.line_count, 1);
	assert_string_equal(slurm.lines[0],
			    "error: vnfs: plugstack.conf: unknown argument 'sockt=/run/x.sock' "
			    "(known: socket= envs= timeout_ms= report= report_dir= cgroup= "
			    "cgroup_root=) (vnfs is off)");
	assert_int_equal(helper.request_count, 0);
}

/* slurmstepd: every task placed, the step registered once, unregistered at
 * exit; the helper hears exactly that. */
static void test_step_is_registered_once_and_unregistered_at_exit(void **state)
{
	struct plugstack line;
	const char *prefix = "info: vnfs: job 7 step 0 registered: cgroup "
			     "/sys/fs/cgroup/system.slice/job_7/step_0 (id 4242, Slurm's own) in ";

	(void)state;
	plugstack_line(&line, helper.socket_path, "cgroup=auto", NULL);
	assert_int_equal(slurm_spank_init(NULL, line.argc, line.argv), 0);
	assert_non_null(plugin.step.unaccounted);
	assert_int_equal(slurm_spank_init_post_opt(NULL, line.argc, line.argv), 0);
	assert_int_equal(slurm_spank_task_post_fork(NULL, line.argc, line.argv), 0);
	slurm.pid = 1235;
	assert_int_equal(slurm_spank_task_post_fork(NULL, line.argc, line.argv), 0);
	assert_int_equal(slurm_spank_task_init(NULL, line.argc, line.argv), 0);

	assert_int_equal(cgroups.place_count, 2);
	assert_int_equal(cgroups.modes[0], VNFS_CGROUP_AUTO);
	assert_int_equal(cgroups.pids[0], 1234);
	assert_int_equal(cgroups.modes[1], VNFS_CGROUP_AUTO);
	assert_int_equal(cgroups.pids[1], 1235);
	assert_int_equal(helper.request_count, 1);
	assert_request(0, VNFS_REQUEST_REGISTER, 0);
	assert_int_equal(helper.requests[0].uid, 1000);
	assert_int_equal(helper.requests[0].cgroup_id, 4242);
	assert_string_equal(helper.requests[0].cgroup_path, "/system.slice/job_7/step_0");
	assert_int_equal(helper.requests[0].tags.count, 0);
	assert_int_equal(slurm.line_count, 1);
	assert_memory_equal(slurm.lines[0], prefix, strlen(prefix));
	assert_string_equal(slurm.lines[0] + strlen(slurm.lines[0]) - 3, " ms");

	assert_int_equal(slurm_spank_exit(NULL, line.argc, line.argv), 0);
	assert_int_equal(helper.request_count, 2);
	assert_request(1, VNFS_REQUEST_UNREGISTER, 0);
	assert_int_equal(cgroups.remove_count, 1);
	assert_null(plugin.step.unaccounted);
	assert_int_equal(slurm.line_count, 1);
}

/* No helper: one line says why, once for the step, and every task's
 * task_init returns the error (which stops a `required` step). */
static void test_unreachable_helper_stops_every_task(void **state)
{
	struct plugstack line;
	char missing[96], expected[512];

	(void)state;
	snprintf(missing, sizeof(missing), "%s/none.sock", helper.directory);
	plugstack_line(&line, missing, NULL, NULL);
	assert_int_equal(slurm_spank_init(NULL, line.argc, line.argv), 0);
	assert_int_equal(slurm_spank_task_post_fork(NULL, line.argc, line.argv), 0);
	assert_int_equal(slurm_spank_task_post_fork(NULL, line.argc, line.argv), 0);
	assert_int_equal(slurm_spank_task_init(NULL, line.argc, line.argv), -1);
	assert_int_equal(slurm_spank_task_init(NULL, line.argc, line.argv), -1);
	assert_int_equal(slurm.line_count, 1);
	snprintf(expected, sizeof(expected),
		 "error: vnfs: job 7 step 0 is not accounted: registration with %s failed: "
		 "cannot reach vnfs-helper at %s: No such file or directory", missing, missing);
	assert_string_equal(slurm.lines[0], expected);
	assert_int_equal(slurm_spank_exit(NULL, line.argc, line.argv), 0);
	assert_int_equal(slurm.line_count, 1);
	assert_int_equal(helper.request_count, 0);
}

/* The helper's own refusal is the reason given, and nothing is unregistered. */
static void test_refused_registration_gives_the_helpers_reason(void **state)
{
	struct plugstack line;
	char expected[512];

	(void)state;
	helper.register_error = "job 7 step 0: the BPF registry is full";
	plugstack_line(&line, helper.socket_path, NULL, NULL);
	assert_int_equal(slurm_spank_init(NULL, line.argc, line.argv), 0);
	assert_int_equal(slurm_spank_task_post_fork(NULL, line.argc, line.argv), 0);
	assert_int_equal(slurm_spank_task_init(NULL, line.argc, line.argv), -1);
	snprintf(expected, sizeof(expected),
		 "error: vnfs: job 7 step 0 is not accounted: registration with %s failed: "
		 "job 7 step 0: the BPF registry is full", helper.socket_path);
	assert_int_equal(slurm.line_count, 1);
	assert_string_equal(slurm.lines[0], expected);
	assert_int_equal(slurm_spank_exit(NULL, line.argc, line.argv), 0);
	assert_int_equal(helper.request_count, 1);
}

/* The extern step is registered from init_post_opt in Slurm's own cgroup
 * with cgroup=auto: probed and placed as cgroup=slurm, without changing the
 * configured mode for anything else. */
static void test_extern_step_is_placed_as_cgroup_slurm(void **state)
{
	struct plugstack line;

	(void)state;
	slurm.step_id = VNFS_STEP_EXTERN;
	slurm.pid = 0;
	plugstack_line(&line, helper.socket_path, "cgroup=auto", NULL);
	assert_int_equal(slurm_spank_init(NULL, line.argc, line.argv), 0);
	assert_int_equal(slurm_spank_init_post_opt(NULL, line.argc, line.argv), 0);
	assert_int_equal(cgroups.place_count, 2);
	assert_int_equal(cgroups.modes[0], VNFS_CGROUP_SLURM);
	assert_int_equal(cgroups.modes[1], VNFS_CGROUP_SLURM);
	assert_int_equal(cgroups.pids[1], 0);
	assert_int_equal(plugin.args.cgroup, VNFS_CGROUP_AUTO);
	assert_int_equal(helper.request_count, 1);
	assert_request(0, VNFS_REQUEST_REGISTER, VNFS_STEP_EXTERN);
	/* Its placeholder task is not placed again. */
	assert_int_equal(slurm_spank_task_post_fork(NULL, line.argc, line.argv), 0);
	assert_int_equal(cgroups.place_count, 2);
	assert_int_equal(slurm_spank_exit(NULL, line.argc, line.argv), 0);
	assert_request(1, VNFS_REQUEST_UNREGISTER, VNFS_STEP_EXTERN);
}

static void test_extern_step_without_a_slurm_cgroup_is_skipped(void **state)
{
	struct plugstack line;

	(void)state;
	slurm.step_id = VNFS_STEP_EXTERN;
	cgroups.no_slurm_directory = true;
	plugstack_line(&line, helper.socket_path, NULL, NULL);
	assert_int_equal(slurm_spank_init_post_opt(NULL, line.argc, line.argv), 0);
	assert_int_equal(cgroups.place_count, 1);
	assert_int_equal(slurm.line_count, 1);
	assert_string_equal(slurm.lines[0], "info: vnfs: job 7 step extern is not accounted: Slurm "
					    "gives it no cgroup v2 directory here");

	plugstack_line(&line, helper.socket_path, "cgroup=vnfs", NULL);
	assert_int_equal(slurm_spank_init_post_opt(NULL, line.argc, line.argv), 0);
	assert_int_equal(cgroups.place_count, 1);
	assert_int_equal(slurm.line_count, 2);
	assert_string_equal(slurm.lines[1],
			    "info: vnfs: job 7 step extern is not accounted with cgroup=vnfs");
	assert_int_equal(helper.request_count, 0);
}

/* slurmstepd: the option's value as srun resolved it (SLURM_SPANK_VNFS_TAGS),
 * after the administrator's envs= tags. */
static void test_step_is_registered_with_the_carried_tags(void **state)
{
	struct plugstack line;
	char text[VNFS_TAGS_BUFFER];

	(void)state;
	slurm.account = "physics";
	slurm.carried_tags = "PROJECT=p1";
	plugstack_line(&line, helper.socket_path, "envs=ACCOUNT", NULL);
	assert_int_equal(slurm_spank_init(NULL, line.argc, line.argv), 0);
	assert_int_equal(registered_option("vnfs-tags")->cb(1, "PROJECT", 1), 0);
	assert_int_equal(slurm_spank_task_post_fork(NULL, line.argc, line.argv), 0);
	assert_request(0, VNFS_REQUEST_REGISTER, 0);
	vnfs_tags_format(&helper.requests[0].tags, text, sizeof(text));
	assert_string_equal(text, "ACCOUNT=physics,PROJECT=p1");
}

/* srun/sbatch: --vnfs-tags resolved where it is typed, handed to the job. */
static void test_typed_tags_are_resolved_and_handed_to_the_job(void **state)
{
	struct plugstack line;

	(void)state;
	slurm.context = S_CTX_ALLOCATOR;
	slurm.remote = 0;
	plugstack_line(&line, helper.socket_path, NULL, NULL);
	assert_int_equal(setenv("VNFS_TEST_VALUE", "v1", 1), 0);
	assert_int_equal(slurm_spank_init(NULL, line.argc, line.argv), 0);
	assert_int_equal(registered_option("vnfs-tags")->cb(1, "VNFS_TEST_VALUE,RUN=3", 0), 0);
	assert_string_equal(getenv(CARRIED_TAGS), "VNFS_TEST_VALUE=v1,RUN=3");
	assert_int_equal(slurm_spank_init_post_opt(NULL, line.argc, line.argv), 0);
	assert_string_equal(slurm.control_name, TAGS_VARIABLE);
	assert_string_equal(slurm.control_value, "VNFS_TEST_VALUE=v1,RUN=3");
	unsetenv("VNFS_TEST_VALUE");
	assert_int_equal(slurm.line_count, 0);
}

static void test_bad_report_option_is_refused(void **state)
{
	struct plugstack line;

	(void)state;
	slurm.context = S_CTX_LOCAL;
	slurm.remote = 0;
	plugstack_line(&line, helper.socket_path, NULL, NULL);
	assert_int_equal(slurm_spank_init(NULL, line.argc, line.argv), 0);
	assert_int_equal(registered_option("vnfs-report")->cb(2, "loud", 0), -1);
	assert_int_equal(slurm.line_count, 1);
	assert_string_equal(slurm.lines[0],
			    "error: vnfs: --vnfs-report: 'loud' is not brief, full or none");
}

/* srun's exit with stderr in a file: what the user sees on the terminal. */
static void srun_exit(const struct plugstack *line, char *printed, size_t size)
{
	char path[160];
	int saved = dup(2), file;
	ssize_t got;

	snprintf(path, sizeof(path), "%s/stderr", helper.directory);
	file = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(saved >= 0 && file >= 0);
	fflush(stderr);
	assert_int_equal(dup2(file, 2), 2);
	assert_int_equal(slurm_spank_exit(NULL, line->argc, (char **)line->argv), 0);
	fflush(stderr);
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	got = pread(file, printed, size - 1, 0);
	assert_true(got >= 0);
	printed[got] = '\0';
	close(file);
	unlink(path);
}

/* --vnfs-report wins over the site's report=, in both directions. */
static void test_srun_prints_the_report_the_user_asked_for(void **state)
{
	struct plugstack line;
	char printed[1024];

	(void)state;
	slurm.context = S_CTX_LOCAL;
	slurm.remote = 0;
	plugstack_line(&line, helper.socket_path, "report=none", NULL);
	assert_int_equal(slurm_spank_init(NULL, line.argc, line.argv), 0);
	assert_int_equal(registered_option("vnfs-report")->cb(2, "brief", 0), 0);
	assert_int_equal(slurm_spank_local_user_init(NULL, line.argc, line.argv), 0);
	srun_exit(&line, printed, sizeof(printed));
	assert_string_equal(printed, "vnfs: job 7 step 0: read 8192 bytes (2 calls), write 0 bytes "
				     "(0 calls), 0 metadata calls, 0 fsync calls, 0 errors, 0.000 s in NFS calls\n");
	assert_int_equal(helper.request_count, 1);
	assert_request(0, VNFS_REQUEST_QUERY, 0);

	/* A new srun: report=brief, but --vnfs-report=none. */
	memset(&plugin, 0, sizeof(plugin));
	slurm.option_count = 0;
	plugstack_line(&line, helper.socket_path, "report=brief", NULL);
	assert_int_equal(slurm_spank_init(NULL, line.argc, line.argv), 0);
	assert_int_equal(registered_option("vnfs-report")->cb(2, "none", 0), 0);
	assert_int_equal(slurm_spank_local_user_init(NULL, line.argc, line.argv), 0);
	srun_exit(&line, printed, sizeof(printed));
	assert_string_equal(printed, "");
	assert_int_equal(helper.request_count, 1);
	assert_int_equal(slurm.line_count, 0);
}

/* slurmd's epilog: FINISH with report_dir=; a failure is only said. */
static void test_epilog_finishes_the_job(void **state)
{
	struct plugstack line;
	char missing[96], expected[512];

	(void)state;
	slurm.context = S_CTX_JOB_SCRIPT;
	slurm.remote = 0;
	plugstack_line(&line, helper.socket_path, "report_dir=/var/spool/vnfs", NULL);
	assert_int_equal(slurm_spank_job_epilog(NULL, line.argc, line.argv), 0);
	assert_int_equal(helper.request_count, 1);
	assert_int_equal(helper.requests[0].type, VNFS_REQUEST_FINISH);
	assert_slurm_job(&helper.requests[0].workload, 7);
	assert_string_equal(helper.requests[0].report_dir, "/var/spool/vnfs");

	snprintf(missing, sizeof(missing), "%s/none.sock", helper.directory);
	plugstack_line(&line, missing, NULL, NULL);
	assert_int_equal(slurm_spank_job_epilog(NULL, line.argc, line.argv), 0);
	snprintf(expected, sizeof(expected),
		 "error: vnfs: job 7: finishing with the helper failed: cannot reach vnfs-helper "
		 "at %s: No such file or directory", missing);
	assert_int_equal(slurm.line_count, 1);
	assert_string_equal(slurm.lines[0], expected);
}

int main(void)
{
#define TEST(name) cmocka_unit_test_setup_teardown(name, start_helper, stop_helper)
	const struct CMUnitTest tests[] = {
		TEST(test_bad_plugstack_line_is_said_once),
		TEST(test_step_is_registered_once_and_unregistered_at_exit),
		TEST(test_unreachable_helper_stops_every_task),
		TEST(test_refused_registration_gives_the_helpers_reason),
		TEST(test_extern_step_is_placed_as_cgroup_slurm),
		TEST(test_extern_step_without_a_slurm_cgroup_is_skipped),
		TEST(test_step_is_registered_with_the_carried_tags),
		TEST(test_typed_tags_are_resolved_and_handed_to_the_job),
		TEST(test_bad_report_option_is_refused),
		TEST(test_srun_prints_the_report_the_user_asked_for),
		TEST(test_epilog_finishes_the_job),
	};
#undef TEST

	return cmocka_run_group_tests(tests, NULL, NULL);
}
