/*
 * main.c — vnfs-helper: command line, start-up order, the main loop.
 *
 * Start-up: configuration, the instance lock, then the BPF probes (refusing
 * to run when nothing attaches, and then leaving nothing behind), then the
 * persisted registry reconciled with the pinned cgroup_slots map
 * (helper/steps/steps.c) while the sinks open, then the socket,
 * whose requests helper/control/requests.c carries out.  The main thread then only waits
 * on a timerfd (collect every interval) and a signalfd (SIGTERM/SIGINT stop,
 * SIGHUP reloads); the socket server has its own thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "helper/collect/collector.h"
#include "helper/control/requests.h"
#include "helper/control/server.h"
#include "helper/discover/discovery.h"
#include "helper/discover/environment_jobs.h"
#include "helper/kernel/probes.h"
#include "helper/outputs/sink.h"
#include "helper/outputs/sink_module.h"
#include "helper/steps/registry.h"
#include "helper/steps/steps.h"
#include "lib/job_report/times.h" /* report_now_ms: the wall clock, in ms */
#include "lib/config.h"
#include "lib/log.h"

struct helper {
	struct vnfs_config config;
	struct vnfs_registry registry;
	struct vnfs_probes *probes;
	struct vnfs_steps steps;      /* every change of a step (registry + probes) */
	struct vnfs_collector collector;
	struct vnfs_discovery discovery; /* containers nobody registered */
	struct vnfs_environment_jobs environment_jobs; /* jobs environments name */
	struct vnfs_requests requests; /* what the socket server's requests reach */
	struct vnfs_server *server;
	char node[65];
	int instance_lock;      /* flock'd STATE_DIR/helper.lock, for life */
	bool made_state_dir;    /* by this start: a failed start removes them */
	bool made_instance_lock;
	unsigned cost_cut;      /* enum vnfs_cost_cut: VNFS_BENCH_COST_CUT, benchmark only */
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: vnfs-helper [OPTION]...\n"
		"Per-job NFS I/O accounting for Slurm: loads the BPF probes, keeps the\n"
		"job step registry, and feeds the configured outputs.  Runs in the\n"
		"foreground (for systemd); logs to stderr or syslog.\n\n"
		"  -c, --config FILE         configuration (default %s)\n"
		"      --check-config FILE   validate FILE and exit (0 valid, 1 not)\n"
		"      --probes MODE         auto, fentry or kprobe (overrides the config)\n"
		"      --unload              remove the pinned BPF programs and maps, and exit\n"
		"  -V, --version             print the version and exit\n"
		"  -h, --help                this text\n\n"
		"Signals: SIGTERM/SIGINT stop (the probes stay pinned and keep counting\n"
		"until the next start), SIGHUP reloads the configuration.\n",
		VNFS_DEFAULT_CONFIG_PATH);
}

typedef int (*sink_open_fn)(struct vnfs_sink *, const struct vnfs_config *, char *, size_t);

/* The outputs, opened on a thread of their own once the probes are
 * attached (a helper that cannot count must not create a database or take a
 * port), while the registry loads: opening them (a database to create or
 * migrate, an HTTP server to start) needs nothing from it. */
struct opened_sinks {
	const struct vnfs_config *config;
	pthread_t thread;
	bool threaded;  /* opened on thread; else already, on the caller's */
	unsigned count;
	struct vnfs_sink sinks[VNFS_MAX_SINKS];
	const char *names[VNFS_MAX_SINKS];
};

/* Opens output name with open, or from its module (sink_module.c) when open
 * is NULL. */
static void open_sink(struct opened_sinks *opened, bool enabled, const char *name,
		      sink_open_fn open)
{
	struct vnfs_sink *sink;
	char error[512];
	int status;

	if (!enabled)
		return;
	if (opened->count == VNFS_MAX_SINKS) {
		vnfs_error("output %s disabled: too many outputs", name);
		return;
	}
	sink = &opened->sinks[opened->count];
	status = open != NULL ? open(sink, opened->config, error, sizeof(error))
			      : vnfs_sink_module_open(name, sink, opened->config, error, sizeof(error));
	if (status != 0) {
		/* A broken output must not stop accounting or the other outputs. */
		vnfs_error("output %s disabled: %s", name, error);
		return;
	}
	opened->names[opened->count++] = name;
}

static void *open_sinks(void *argument);

/* Starts opening the outputs; on this thread if no other can start. */
static void start_opening_sinks(struct opened_sinks *opened)
{
	int status = pthread_create(&opened->thread, NULL, open_sinks, opened);

	opened->threaded = status == 0;
	if (status != 0) {
		vnfs_warning("cannot start a thread for the outputs (%s): opening them first",
			     strerror(status));
		open_sinks(opened);
	}
}

static void *open_sinks(void *argument)
{
	struct opened_sinks *opened = argument;
	const struct vnfs_config *config = opened->config;

	open_sink(opened, config->sqlite.enabled, "sqlite", vnfs_sink_sqlite_open);
	open_sink(opened, config->prometheus.enabled, "prometheus", vnfs_sink_prometheus_open);
	open_sink(opened, config->jsonlog.enabled, "jsonlog", vnfs_sink_jsonlog_open);
#ifdef HAVE_KAFKA
	open_sink(opened, config->kafka.enabled, "kafka", NULL);
#else
	if (config->kafka.enabled)
		vnfs_error("output kafka is enabled in %s but this build has no Kafka support",
			   config->source_path);
#endif
#ifdef HAVE_CURL
	open_sink(opened, config->http.enabled, "http", NULL);
#else
	if (config->http.enabled)
		vnfs_error("output http is enabled in %s but this build has no HTTP support",
			   config->source_path);
#endif
#ifdef HAVE_POSTGRESQL
	open_sink(opened, config->postgresql.enabled, "postgresql", NULL);
#else
	if (config->postgresql.enabled)
		vnfs_error("output postgresql is enabled in %s but this build has no PostgreSQL "
			   "support", config->source_path);
#endif
	return NULL;
}

/* Waits for the outputs; with a collector, hands them to it, else closes them. */
static void take_sinks(struct opened_sinks *opened, struct vnfs_collector *collector)
{
	int error = opened->threaded ? pthread_join(opened->thread, NULL) : 0;

	if (error != 0) {
		vnfs_error("waiting for the outputs to open: %s", strerror(error));
		return;
	}
	for (unsigned i = 0; i < opened->count; i++) {
		if (collector && vnfs_collector_add_sink(collector, &opened->sinks[i]) == 0) {
			vnfs_info("output %s enabled", opened->names[i]);
			continue;
		}
		if (collector)
			vnfs_error("output %s disabled: too many outputs", opened->names[i]);
		opened->sinks[i].close(opened->sinks[i].state);
	}
}

static int load_config(struct vnfs_config *config, const char *path, bool missing_ok)
{
	char error[1024];

	vnfs_config_defaults(config);
	if (vnfs_config_load(config, path, missing_ok, error, sizeof(error)) != 0) {
		fprintf(stderr, "vnfs-helper: %s\n", error);
		return -1;
	}
	return 0;
}

static void setup_logging(const struct vnfs_config *config)
{
	vnfs_log_setup("vnfs-helper", (enum vnfs_log_priority)config->helper.log_level,
		       config->helper.log_target == VNFS_LOG_SYSLOG);
}

static int arm_timer(int timer, uint32_t interval_ms)
{
	struct itimerspec spec = {
		.it_interval = { interval_ms / 1000, (long)(interval_ms % 1000) * 1000000 },
		.it_value = { interval_ms / 1000, (long)(interval_ms % 1000) * 1000000 },
	};

	return timerfd_settime(timer, 0, &spec, NULL);
}

/* SIGHUP: log level and interval apply at once; other keys need a restart. */
static void reload(struct helper *helper, const char *path, int timer)
{
	struct vnfs_config fresh;

	if (load_config(&fresh, path, false) != 0) {
		vnfs_error("reload: keeping the running configuration");
		return;
	}
	helper->config.helper.log_level = fresh.helper.log_level;
	helper->config.helper.interval_ms = fresh.helper.interval_ms;
	helper->config.helper.finished_job_grace_s = fresh.helper.finished_job_grace_s;
	setup_logging(&helper->config);
	if (arm_timer(timer, helper->config.helper.interval_ms) != 0)
		vnfs_error("reload: cannot re-arm the timer: %s", strerror(errno));
	vnfs_info("reloaded %s: interval %u ms (outputs, socket and probes change on restart)",
		  path, helper->config.helper.interval_ms);
}

/* A pod the discovery saw go (helper/discover/discovery.h), finished as a
 * FINISH request finishes a job: on the main thread, between intervals. */
static int finish_discovered_job(void *collector, const struct vnfs_workload *job,
				 int64_t now_ms, char *error, size_t error_size)
{
	struct vnfs_owned_job finished = { 0 };
	int result = vnfs_collector_finish_job(collector, job, NULL, now_ms, &finished, error,
					       error_size);

	vnfs_owned_job_free(&finished);
	return result;
}

/* The signals the main loop takes through its signalfd.  They are blocked
 * before any thread starts, so every thread inherits the mask and none of
 * them can be killed by a SIGTERM meant for the loop. */
static void control_signals(sigset_t *signals)
{
	sigemptyset(signals);
	sigaddset(signals, SIGTERM);
	sigaddset(signals, SIGINT);
	sigaddset(signals, SIGHUP);
}

static int run(struct helper *helper, const char *config_path)
{
	sigset_t signals;
	int timer, signal_fd;
	bool running = true, failed = false;

	control_signals(&signals);
	signal_fd = signalfd(-1, &signals, SFD_CLOEXEC);
	timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (signal_fd < 0 || timer < 0 || arm_timer(timer, helper->config.helper.interval_ms) != 0) {
		vnfs_error("cannot set up the main loop: %s", strerror(errno));
		if (timer >= 0)
			close(timer);
		if (signal_fd >= 0)
			close(signal_fd);
		return -1;
	}
	while (running) {
		/* The third: cgroups made, which discovery judges at once, while
		 * a short-lived container's runtime state still exists. */
		struct pollfd fds[3] = { { signal_fd, POLLIN, 0 }, { timer, POLLIN, 0 },
					 { vnfs_discovery_fd(&helper->discovery), POLLIN, 0 } };
		struct signalfd_siginfo info;
		uint64_t expirations;

		if (poll(fds, fds[2].fd >= 0 ? 3 : 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			vnfs_error("poll: %s", strerror(errno));
			failed = true;
			break;
		}
		if (fds[2].revents & POLLIN)
			vnfs_discovery_take_new_cgroups(&helper->discovery);
		if (fds[1].revents & POLLIN) {
			if (read(timer, &expirations, sizeof(expirations)) == sizeof(expirations)) {
				vnfs_environment_jobs_run(&helper->environment_jobs,
							  report_now_ms());
				vnfs_discovery_run(&helper->discovery, report_now_ms());
				vnfs_collector_collect(&helper->collector, report_now_ms());
			}
		}
		if ((fds[0].revents & POLLIN) && read(signal_fd, &info, sizeof(info)) == sizeof(info)) {
			if (info.ssi_signo == SIGHUP) {
				reload(helper, config_path, timer);
			} else {
				vnfs_info("signal %u: stopping (probes stay pinned)", info.ssi_signo);
				running = false;
			}
		}
	}
	/* A last collection so the outputs hold the counts up to the stop. */
	vnfs_collector_collect(&helper->collector, report_now_ms());
	close(timer);
	close(signal_fd);
	return failed ? -1 : 0;
}

/*
 * One helper per state directory, decided before anything is written: the
 * registry journal is compacted at load, and two helpers doing that at once
 * (or one doing it under a running one) would lose steps.  The kernel drops
 * the lock when the process dies, however it dies.
 */
static void instance_lock_path(const struct helper *helper, char *path, size_t size)
{
	snprintf(path, size, "%s/helper.lock", helper->config.helper.state_dir);
}

/* Opens the lock file, noting whether this start made it. */
static int open_instance_lock(struct helper *helper, const char *path)
{
	const int flags = O_RDWR | O_NOFOLLOW | O_CLOEXEC;

	helper->instance_lock = open(path, flags | O_CREAT | O_EXCL, 0600);
	helper->made_instance_lock = helper->instance_lock >= 0;
	if (helper->instance_lock < 0 && errno == EEXIST)
		helper->instance_lock = open(path, flags);
	return helper->instance_lock;
}

/* A failed start removes the lock file it made (see forget_first_writes):
 * a lock taken on a file no longer at path locks nothing.  Returns whether
 * fd is still path's file. */
static bool lock_still_at(int fd, const char *path)
{
	struct stat held, named;

	return fstat(fd, &held) == 0 && lstat(path, &named) == 0 && held.st_dev == named.st_dev &&
	       held.st_ino == named.st_ino;
}

/* Returns 0 locked, 1 to try again (the file was replaced), -1 refused. */
static int lock_instance_once(struct helper *helper, const char *path)
{
	const char *state_dir = helper->config.helper.state_dir;

	if (open_instance_lock(helper, path) < 0) {
		vnfs_error("cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	if (flock(helper->instance_lock, LOCK_EX | LOCK_NB) != 0) {
		/* Made by this start but locked by another since: theirs now. */
		helper->made_instance_lock = false;
		vnfs_error(errno == EWOULDBLOCK
				   ? "another vnfs-helper is running with state directory %s (it holds %s)"
				   : "cannot lock %s: %s",
			   state_dir, errno == EWOULDBLOCK ? path : strerror(errno));
		return -1;
	}
	if (lock_still_at(helper->instance_lock, path))
		return 0;
	close(helper->instance_lock);
	helper->instance_lock = -1;
	helper->made_instance_lock = false;
	return 1;
}

static int take_instance_lock(struct helper *helper)
{
	const char *state_dir = helper->config.helper.state_dir;
	char path[VNFS_PATH_MAX + 16];
	int status = 1;

	helper->made_state_dir = mkdir(state_dir, 0755) == 0;
	if (!helper->made_state_dir && errno != EEXIST) {
		vnfs_error("cannot create state directory %s: %s", state_dir, strerror(errno));
		return -1;
	}
	instance_lock_path(helper, path, sizeof(path));
	for (int tries = 0; status == 1 && tries < 3; tries++)
		status = lock_instance_once(helper, path);
	if (status == 1)
		vnfs_error("cannot lock %s: other helpers keep replacing it", path);
	return status == 0 ? 0 : -1;
}

/* A start that failed before the probes attached leaves nothing behind:
 * the lock file and state directory go if it made them.  The lock file is
 * removed while still held, so a helper that opened it meanwhile finds its
 * lock stale (lock_still_at) rather than sharing it. */
static void forget_first_writes(struct helper *helper)
{
	const char *state_dir = helper->config.helper.state_dir;
	char path[VNFS_PATH_MAX + 16];

	instance_lock_path(helper, path, sizeof(path));
	if (helper->made_instance_lock && unlink(path) != 0)
		vnfs_warning("cannot remove %s: %s", path, strerror(errno));
	if (helper->instance_lock >= 0)
		close(helper->instance_lock);
	helper->instance_lock = -1;
	if (helper->made_state_dir && rmdir(state_dir) != 0)
		vnfs_warning("cannot remove %s: %s", state_dir, strerror(errno));
	helper->made_instance_lock = helper->made_state_dir = false;
}

/* Lock, then probes: nothing else is written before the probes attach. */
static int start_probes(struct helper *helper)
{
	struct vnfs_probes_options probe_options = {
		.mode = helper->config.helper.probe_mode,
		.pin_dir = helper->config.helper.pin_dir,
		.pin = true,
		.capture_environment = helper->config.environment.job_variable_count > 0,
		.count_wire = helper->config.helper.count_rpcs,
		.kprobe_calls_in_flight = helper->config.helper.kprobe_calls_in_flight,
		.cost_cut = helper->cost_cut,
	};
	char error[1024];

	if (take_instance_lock(helper) != 0) {
		forget_first_writes(helper);
		return -1;
	}
	if (vnfs_probes_open(&helper->probes, &probe_options, error, sizeof(error)) != 0) {
		vnfs_error("cannot attach to the kernel NFS client: %s", error);
		forget_first_writes(helper);
		return -1;
	}
	if (probe_options.capture_environment &&
	    vnfs_probes_list_environment_variables(helper->probes, &helper->config) != 0)
		vnfs_error("cannot list the environment's job variables for the probes: %s",
			   strerror(errno));
	return 0;
}

/* The registry of steps, with what the state directory kept (an error
 * there is logged and the helper goes on empty); -1 only when not even an
 * empty registry could be made. */
static int start_registry(struct helper *helper)
{
	char error[4096];

	if (vnfs_registry_init(&helper->registry, helper->config.helper.state_dir, error,
			       sizeof(error)) != 0 ||
	    vnfs_registry_load(&helper->registry, error, sizeof(error)) != 0)
		vnfs_error("%s", error);
	if (helper->registry.slots == NULL) /* out of memory: not even in memory */
		return -1;
	vnfs_registry_set_limits(&helper->registry, helper->config.helper.max_steps_per_job,
				 helper->config.helper.max_steps_per_user);
	return 0;
}

/* What finds workloads no one registers: containers, environment jobs. */
static int start_discovery(struct helper *helper)
{
	if (vnfs_discovery_init(&helper->discovery, &helper->config, &helper->steps,
				finish_discovered_job, &helper->collector, vnfs_runtime_state_dirs,
				vnfs_runtime_state_dir_count, NULL) != 0) {
		vnfs_error("out of memory setting up container discovery");
		return -1;
	}
	if (vnfs_environment_jobs_init(&helper->environment_jobs, &helper->config, &helper->steps,
				       finish_discovered_job, &helper->collector) != 0) {
		vnfs_error("out of memory setting up environment jobs");
		return -1;
	}
	return 0;
}

static int start_server(struct helper *helper)
{
	struct vnfs_server_options options = {
		.socket_path = helper->config.helper.socket_path,
		.socket_mode = helper->config.helper.socket_mode,
		.max_message_bytes = helper->config.helper.max_message_bytes,
		.client_timeout_ms = 5000,
		.max_clients = helper->config.helper.max_clients,
		.max_clients_per_user = helper->config.helper.max_clients_per_user,
	};
	char error[4096];

	if (vnfs_server_start(&helper->server, &options, vnfs_requests_handle, &helper->requests,
			      error, sizeof(error)) != 0) {
		vnfs_error("%s", error);
		return -1;
	}
	return 0;
}

/* Where a start's time went, in ms of CLOCK_MONOTONIC from start(): logged
 * at debug level with the ready line (docs/PERFORMANCE.md). */
struct start_times {
	int64_t began, probes, registry, outputs, ready;
};

/* How long ago this process began (its fork, the exec right after), in
 * ms, from its start time in /proc/self/stat (clock ticks since boot,
 * 10 ms steps); -1 if unknown.  It counts what start() cannot see: loading
 * the program and its libraries. */
static int64_t process_age_ms(void)
{
	char line[1024], *after_name;
	unsigned long long start_ticks;
	long ticks_per_second = sysconf(_SC_CLK_TCK);
	struct timespec now;
	FILE *stat = fopen("/proc/self/stat", "re");
	bool have_line;

	if (!stat)
		return -1;
	have_line = fgets(line, sizeof(line), stat) != NULL;
	fclose(stat);
	/* The command name (field 2) may hold spaces and parentheses: the
	 * fields are counted from its last ')'.  Field 22 is the start time. */
	after_name = have_line ? strrchr(line, ')') : NULL;
	if (!after_name || ticks_per_second <= 0 || clock_gettime(CLOCK_BOOTTIME, &now) != 0 ||
	    sscanf(after_name + 1,
		   " %*c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu",
		   &start_ticks) != 1)
		return -1;
	return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 -
	       (int64_t)(start_ticks * 1000 / (unsigned long long)ticks_per_second);
}

static void log_start_times(const struct start_times *times)
{
	vnfs_debug("start: probes %" PRId64 " ms, then the registry %" PRId64 " ms, the outputs "
		   "%" PRId64 " ms more, discovery and the socket %" PRId64 " ms",
		   times->probes - times->began, times->registry - times->probes,
		   times->outputs - times->registry, times->ready - times->outputs);
}

static int start(struct helper *helper)
{
	struct opened_sinks opened = { .config = &helper->config };
	struct start_times times = { .began = report_monotonic_ms() };
	struct vnfs_counter_source counters;
	char error[4096], after_exec[48] = "";
	int64_t age;

	if (start_probes(helper) != 0)
		return -1;
	times.probes = report_monotonic_ms();
	start_opening_sinks(&opened);
	if (start_registry(helper) != 0) {
		take_sinks(&opened, NULL);
		return -1;
	}
	counters = vnfs_probes_counter_source(helper->probes);
	vnfs_steps_init(&helper->steps, &helper->registry, &counters);
	helper->requests = (struct vnfs_requests){
		.config = &helper->config,
		.steps = &helper->steps,
		.collector = &helper->collector,
	};
	vnfs_steps_restore(&helper->steps);
	if (vnfs_collector_init(&helper->collector, &helper->config, &helper->steps, helper->node,
				error, sizeof(error)) != 0) {
		vnfs_error("%s", error);
		take_sinks(&opened, NULL);
		return -1;
	}
	times.registry = report_monotonic_ms();
	take_sinks(&opened, &helper->collector);
	times.outputs = report_monotonic_ms();
	if (start_discovery(helper) != 0 || start_server(helper) != 0)
		return -1;
	/* Loading the probes parsed the BPF object and the kernel's BTF on the
	 * heap; freed, that memory stays resident under what was allocated
	 * after it until handed back. */
	malloc_trim(0);
	times.ready = report_monotonic_ms();
	log_start_times(&times);
	age = process_age_ms();
	if (age >= 0)
		snprintf(after_exec, sizeof(after_exec), ", %" PRId64 " ms after exec", age);
	vnfs_info("ready: socket %s, interval %u ms, node %s%s", helper->config.helper.socket_path,
		  helper->config.helper.interval_ms, helper->node, after_exec);
	return 0;
}

static void stop(struct helper *helper)
{
	if (helper->server != NULL)
		vnfs_server_stop(helper->server);
	vnfs_discovery_destroy(&helper->discovery);
	vnfs_environment_jobs_destroy(&helper->environment_jobs);
	vnfs_collector_destroy(&helper->collector);
	vnfs_registry_destroy(&helper->registry);
	if (helper->probes != NULL)
		vnfs_probes_close(helper->probes);
	if (helper->instance_lock >= 0)
		close(helper->instance_lock);
}

static int parse_probe_mode(const char *text, enum vnfs_probe_mode *mode)
{
	for (int i = 0; vnfs_probe_mode_names[i] != NULL; i++) {
		if (strcmp(text, vnfs_probe_mode_names[i]) == 0) {
			*mode = (enum vnfs_probe_mode)i;
			return 0;
		}
	}
	return -1;
}

/* The helper's heap is a few MiB spread over a wider range (registry,
 * records, thread arenas).  With transparent huge pages set to "always", the
 * default of Debian and RHEL kernels, every 2 MiB of that range it touched
 * became resident whole: 10 of the 11 MiB its heap held with 1,000 steps
 * (docs/PERFORMANCE.md).  Failing only costs memory, so it is a warning. */
static void keep_memory_small(void)
{
	if (prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0)
		vnfs_warning("cannot turn off transparent huge pages for the helper: %s",
			     strerror(errno));
	/* The large tables (the registry, the records, the container and
	 * environment job tables: 1-10 MiB each) are sized for the most a node
	 * may hold and touched as they fill: mapped on their own, their
	 * untouched pages cost nothing.  glibc's default threshold for that
	 * rises to the largest block ever freed, and libbpf frees the kernel's
	 * BTF (4 MiB) after loading the probes: the tables smaller than that,
	 * made after it, then came from the heap, where calloc clears every
	 * page, and 6 MiB of zeros stayed resident (massif and smaps in the
	 * guest, 2026-12-05).
	 * A fixed threshold (the default's start) keeps them mapped. */
	if (mallopt(M_MMAP_THRESHOLD, 128 * 1024) != 1)
		vnfs_debug("cannot fix malloc's mmap threshold (not glibc's allocator?)");
}

/* Exit statuses (man/vnfs-helper.8, EXIT STATUS). */
enum { EXIT_USAGE = 2 };

/* What the command line asks for, checked whole before anything runs. */
struct command_line {
	const char *config_path;
	bool config_given;
	const char *check_config; /* --check-config FILE */
	const char *probe_mode;   /* --probes MODE, checked */
	bool unload, help, version;
	unsigned cost_cut;        /* VNFS_BENCH_COST_CUT, checked */
};

static int usage_error(const char *format, const char *argument)
{
	fprintf(stderr, "vnfs-helper: ");
	fprintf(stderr, format, argument);
	fprintf(stderr, "\nTry 'vnfs-helper --help'.\n");
	return -1;
}

/* The benchmark's cuts of the counting path (bpf/vnfs.h, enum
 * vnfs_cost_cut; docs/PERFORMANCE.md): an environment variable, not an
 * option or a key, since no node should run with one. */
#define COST_CUT_VARIABLE "VNFS_BENCH_COST_CUT"

/* text: NULL or empty for none.  Returns 0, or -1 after saying what is wrong. */
static int parse_cost_cut(const char *text, unsigned *cut)
{
	char *end;
	unsigned long value;

	*cut = VNFS_CUT_NONE;
	if (!text || text[0] == '\0')
		return 0;
	errno = 0;
	value = strtoul(text, &end, 10);
	if (errno != 0 || *end != '\0' || text[0] < '0' || text[0] > '9' || value >= VNFS_CUT_LEVELS) {
		fprintf(stderr, "vnfs-helper: %s: '%s' is not a cut level, 0 to %d\n", COST_CUT_VARIABLE,
			text, VNFS_CUT_LEVELS - 1);
		return -1;
	}
	*cut = (unsigned)value;
	return 0;
}

/* Returns 0, or -1 after saying what is wrong (a usage error). */
static int parse_command_line(int argc, char **argv, struct command_line *command)
{
	enum { OPTION_CHECK_CONFIG = 256, OPTION_PROBES, OPTION_UNLOAD };
	static const struct option options[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check-config", required_argument, NULL, OPTION_CHECK_CONFIG },
		{ "probes", required_argument, NULL, OPTION_PROBES },
		{ "unload", no_argument, NULL, OPTION_UNLOAD },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum vnfs_probe_mode mode;
	int option;

	*command = (struct command_line){ .config_path = VNFS_DEFAULT_CONFIG_PATH };
	while ((option = getopt_long(argc, argv, "c:Vh", options, NULL)) != -1) {
		switch (option) {
		case 'c':
			command->config_path = optarg;
			command->config_given = true;
			break;
		case OPTION_CHECK_CONFIG: command->check_config = optarg; break;
		case OPTION_PROBES: command->probe_mode = optarg; break;
		case OPTION_UNLOAD: command->unload = true; break;
		case 'V': command->version = true; break;
		case 'h': command->help = true; break;
		default: /* getopt said what */
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (command->check_config && command->unload)
		return usage_error("%s", "--check-config and --unload cannot be combined");
	if (command->probe_mode && parse_probe_mode(command->probe_mode, &mode) != 0)
		return usage_error("--probes: '%s' is not auto, fentry or kprobe", command->probe_mode);
	return parse_cost_cut(getenv(COST_CUT_VARIABLE), &command->cost_cut);
}

/* --unload: says whether there was anything to remove. */
static int unload(const struct vnfs_config *config)
{
	const char *pin_dir = config->helper.pin_dir;
	char error[1024];
	size_t removed;

	if (vnfs_probes_unpin(pin_dir, &removed, error, sizeof(error)) != 0) {
		vnfs_error("%s", error);
		return 1;
	}
	if (removed == 0)
		vnfs_info("nothing pinned under %s", pin_dir);
	else
		vnfs_info("removed the pinned probes and maps under %s (%zu pins)", pin_dir, removed);
	return 0;
}

static void name_node(struct helper *helper)
{
	if (helper->config.helper.node_name[0] != '\0')
		snprintf(helper->node, sizeof(helper->node), "%s", helper->config.helper.node_name);
	else if (gethostname(helper->node, sizeof(helper->node) - 1) != 0)
		snprintf(helper->node, sizeof(helper->node), "localhost");
}

/* Exits 0, 1 on a runtime error, EXIT_USAGE on a usage error. */
int main(int argc, char **argv)
{
	static struct helper helper = { .instance_lock = -1 }; /* large: off the stack */
	struct command_line command;
	sigset_t signals;
	int status;

	if (parse_command_line(argc, argv, &command) != 0)
		return EXIT_USAGE;
	if (command.help) {
		usage(stdout);
		return 0;
	}
	if (command.version) {
		printf("vnfs-helper %s\n", PACKAGE_VERSION);
		return 0;
	}
	if (command.check_config) {
		if (load_config(&helper.config, command.check_config, false) != 0)
			return 1;
		printf("%s: valid\n", command.check_config);
		return 0;
	}
	/* The default file may be absent (built-in defaults); a named one may not. */
	if (load_config(&helper.config, command.config_path, !command.config_given) != 0)
		return 1;
	if (command.probe_mode)
		parse_probe_mode(command.probe_mode, &helper.config.helper.probe_mode);
	helper.cost_cut = command.cost_cut;
	setup_logging(&helper.config);
	if (command.unload)
		return unload(&helper.config);
	name_node(&helper);
	keep_memory_small();
	control_signals(&signals);
	if (pthread_sigmask(SIG_BLOCK, &signals, NULL) != 0) {
		vnfs_error("cannot block the control signals");
		return 1;
	}
	status = start(&helper) == 0 && run(&helper, command.config_path) == 0 ? 0 : 1;
	stop(&helper);
	return status;
}
