/*
 * bench-loader.c — attaches one of the benchmark's reference probe sets to
 * the kernel NFS client and keeps it attached until SIGTERM or SIGINT.
 *
 *   bench_loader floor             empty fentry/fexit (bpf/bench/floor.bpf.c)
 *   bench_loader timing            fentry/fexit that only time each call
 *                                  (bpf/bench/timing.bpf.c)
 *   bench_loader attributing CGROUP
 *                                  the same, and each call counted into the
 *                                  row of its task's cgroup, CGROUP's the
 *                                  only one (timing.bpf.c's `attribute`)
 *   bench_loader collector-design  kprobe/kretprobe re-implementation of the
 *                                  vNFS-collector (collector_design.bpf.c)
 *
 * All hook the functions of vnfs's own table (helper/kernel/hooks.c), so the
 * benchmark compares designs on exactly the functions vnfs hooks.  A function
 * the running kernel lacks is left out with a line, as vnfs leaves it out.  When
 * everything is attached the loader prints "READY ..." on stdout; the
 * benchmark suite waits for that line, runs its loops, then stops the loader.
 * The timing, attributing and collector-design variants print how many calls
 * they counted (the attributing one: in CGROUP's row) before they exit, so a
 * run whose probes never fired, or attributed nothing, shows.  Each phase
 * prints its duration: under emulation attaching and detaching cost far more
 * than the calls measured.
 */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bpf/vnfs.h"
#include "bpf/bench/collector_design.h"
#include "bpf/bench/collector_design.skel.h"
#include "bpf/bench/floor.skel.h"
#include "bpf/bench/timing.h"
#include "bpf/bench/timing.skel.h"
#include "helper/kernel/hooks.h"
#include "helper/kernel/kernel_btf.h"

/* One hooked function: its entry and exit probes. */
struct hooked_function {
	const char *name;
	/* floor, timing: programs loaded per function, attached by a link fd */
	__u32 btf_id;
	int btf_fd; /* 0: vmlinux */
	int program_fds[2];
	int link_fds[2];
	/* collector design: kprobe programs attached by name */
	struct bpf_program *programs[2];
	struct bpf_link *links[2];
};

struct hooks {
	struct hooked_function functions[VNFS_MAX_HOOKS];
	size_t count;
	size_t attached;
	bool kprobes;
};

static long long now_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static int print_libbpf_warnings(enum libbpf_print_level level, const char *format, va_list args)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, format, args);
}

static void hooks_init(struct hooks *hooks, bool kprobes)
{
	memset(hooks, 0, sizeof(*hooks));
	hooks->kprobes = kprobes;
	for (size_t i = 0; i < vnfs_hook_count && i < VNFS_MAX_HOOKS; i++) {
		struct hooked_function *function = &hooks->functions[hooks->count++];

		function->name = vnfs_hooks[i].function;
		function->btf_fd = -1;
		for (int side = 0; side < 2; side++)
			function->program_fds[side] = function->link_fds[side] = -1;
	}
}

/* ------------------------------------------ the fentry/fexit targets */

/* Finds each function's BTF target the way the helper does (kernel_btf); a
 * function the running kernel lacks keeps btf_fd -1 and is left out, with a
 * line, as the helper leaves it out. */
static int find_targets(struct hooks *hooks, struct kernel_btf *kernel)
{
	struct kernel_function found[VNFS_MAX_HOOKS];

	if (kernel_btf_load(kernel) != 0) {
		fprintf(stderr, "bench_loader: no kernel BTF: %s\n", strerror(errno));
		return -1;
	}
	kernel_btf_find(kernel, vnfs_hooks, hooks->count, found);
	for (size_t i = 0; i < hooks->count; i++) {
		if (!found[i].btf) {
			fprintf(stderr, "bench_loader: %s: not in this kernel, left out\n",
				hooks->functions[i].name);
			continue;
		}
		hooks->functions[i].btf_id = found[i].id;
		hooks->functions[i].btf_fd = found[i].object_fd;
	}
	return 0;
}

/* Loads the floor's two programs once per function, each with its target. */
static int floor_load(struct hooks *hooks)
{
	static const enum bpf_attach_type attach_types[2] = { BPF_TRACE_FENTRY, BPF_TRACE_FEXIT };
	struct floor_bpf *floor = floor_bpf__open();
	struct bpf_program *programs[2];
	int status = 0;

	if (!floor) {
		fprintf(stderr, "bench_loader: cannot open the floor object: %s\n", strerror(errno));
		return -1;
	}
	programs[0] = floor->progs.floor_entry;
	programs[1] = floor->progs.floor_exit;
	for (size_t i = 0; i < hooks->count && status == 0; i++) {
		struct hooked_function *function = &hooks->functions[i];

		if (function->btf_fd < 0)
			continue;
		for (int side = 0; side < 2; side++) {
			LIBBPF_OPTS(bpf_prog_load_opts, options,
				    .expected_attach_type = attach_types[side],
				    .attach_btf_id = function->btf_id,
				    .attach_btf_obj_fd = function->btf_fd);

			function->program_fds[side] = bpf_prog_load(
				BPF_PROG_TYPE_TRACING, bpf_program__name(programs[side]), "GPL",
				bpf_program__insns(programs[side]),
				bpf_program__insn_cnt(programs[side]), &options);
			if (function->program_fds[side] < 0) {
				fprintf(stderr, "bench_loader: %s: loading %s failed: %s\n",
					function->name, bpf_program__name(programs[side]),
					strerror(errno));
				status = -1;
				break;
			}
		}
	}
	floor_bpf__destroy(floor);
	return status;
}

static int floor_start(struct hooks *hooks)
{
	struct kernel_btf kernel;
	long long started = now_ms();
	int status;

	hooks_init(hooks, false);
	if (find_targets(hooks, &kernel) != 0)
		return -1;
	printf("targets found in %lld ms\n", now_ms() - started);
	status = floor_load(hooks);
	kernel_btf_free(&kernel);
	return status;
}

/* ------------------------------------------------------ timing only */

/* The timing programs are numbered per hooked function, as vnfs's are, and
 * in sections of their own so that loading goes through set_timing_target(),
 * which gives the kernel the target found by kernel_btf. */
static const struct hooks *timing_hooks;

static int set_timing_target(struct bpf_program *program, struct bpf_prog_load_opts *options,
			     long cookie)
{
	const char *index = strrchr(bpf_program__name(program), '_');
	unsigned long slot = index ? strtoul(index + 1, NULL, 10) : VNFS_MAX_HOOKS;

	(void)cookie;
	if (!timing_hooks || slot >= timing_hooks->count || timing_hooks->functions[slot].btf_fd < 0)
		return -EINVAL;
	options->attach_btf_id = timing_hooks->functions[slot].btf_id;
	options->attach_btf_obj_fd = timing_hooks->functions[slot].btf_fd;
	return 0;
}

static int register_timing_sections(void)
{
	LIBBPF_OPTS(libbpf_prog_handler_opts, options, .prog_prepare_load_fn = set_timing_target);

	if (libbpf_register_prog_handler("bench.fentry", BPF_PROG_TYPE_TRACING, BPF_TRACE_FENTRY,
					 &options) < 0 ||
	    libbpf_register_prog_handler("bench.fexit", BPF_PROG_TYPE_TRACING, BPF_TRACE_FEXIT,
					 &options) < 0) {
		fprintf(stderr, "bench_loader: cannot register the timing sections\n");
		return -1;
	}
	return 0;
}

static struct bpf_program *timing_program(struct timing_bpf *timing, int side, size_t slot)
{
	char name[64];

	snprintf(name, sizeof(name), "timing_%s_%zu", side == 0 ? "entry" : "exit", slot);
	return bpf_object__find_program_by_name(timing->obj, name);
}

/* Loads the pair of each function the kernel has; the loader keeps its own
 * copies of their descriptors, which detach_all closes. */
static int timing_load(struct timing_bpf *timing, struct hooks *hooks)
{
	int error;

	for (size_t slot = 0; slot < VNFS_MAX_HOOKS; slot++) {
		bool wanted = slot < hooks->count && hooks->functions[slot].btf_fd >= 0;

		for (int side = 0; side < 2; side++)
			bpf_program__set_autoload(timing_program(timing, side, slot), wanted);
	}
	timing_hooks = hooks;
	error = timing_bpf__load(timing);
	timing_hooks = NULL;
	if (error) {
		fprintf(stderr, "bench_loader: loading the timing programs failed: %s\n",
			strerror(-error));
		return -1;
	}
	for (size_t slot = 0; slot < hooks->count; slot++) {
		if (hooks->functions[slot].btf_fd < 0)
			continue;
		for (int side = 0; side < 2; side++) {
			int fd = dup(bpf_program__fd(timing_program(timing, side, slot)));

			if (fd < 0) {
				perror("bench_loader: dup");
				return -1;
			}
			hooks->functions[slot].program_fds[side] = fd;
		}
	}
	return 0;
}

/* The attributing variant: what each function's call is and how its result
 * reads, from vnfs's table (the Linux 6.1 prototypes, the benchmark's). */
static void describe_attributed_hooks(struct timing_bpf *timing, const struct hooks *hooks)
{
	timing->rodata->attribute = true;
	for (size_t slot = 0; slot < hooks->count; slot++)
		vnfs_hook_fallback_config(&vnfs_hooks[slot], false, &timing->rodata->hook_config[slot]);
}

/* Timing only: the attributing variant's maps at one entry each, so that
 * making them (720 KiB per CPU for the totals) is not part of (T)'s start. */
static int leave_attribution_out(struct timing_bpf *timing)
{
	if (bpf_map__set_max_entries(timing->maps.attributed_workloads, 1) != 0 ||
	    bpf_map__set_max_entries(timing->maps.attributed_totals, 1) != 0) {
		fprintf(stderr, "bench_loader: cannot size the attributing maps down\n");
		return -1;
	}
	return 0;
}

/* The attributing variant's one workload, CGROUP's, in row 0: a cgroup v2
 * directory's inode number is the id bpf_get_current_cgroup_id() gives. */
static int attribute_to(struct timing_bpf *timing, const char *cgroup)
{
	struct stat status;
	__u64 cgroup_id;
	__u32 row = 0;

	if (stat(cgroup, &status) != 0) {
		fprintf(stderr, "bench_loader: %s: %s\n", cgroup, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(status.st_mode)) {
		fprintf(stderr, "bench_loader: %s: not a cgroup directory\n", cgroup);
		return -1;
	}
	cgroup_id = status.st_ino;
	if (bpf_map_update_elem(bpf_map__fd(timing->maps.attributed_workloads), &cgroup_id, &row,
				BPF_NOEXIST) != 0) {
		fprintf(stderr, "bench_loader: cannot enter %s's cgroup: %s\n", cgroup,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* Loads the timing programs; with cgroup, attributing to it. */
static int timing_start(struct timing_bpf **timing, struct hooks *hooks, const char *cgroup)
{
	struct kernel_btf kernel;
	int status;

	hooks_init(hooks, false);
	if (register_timing_sections() != 0 || find_targets(hooks, &kernel) != 0)
		return -1;
	*timing = timing_bpf__open();
	if (!*timing) {
		fprintf(stderr, "bench_loader: cannot open the timing object: %s\n", strerror(errno));
		kernel_btf_free(&kernel);
		return -1;
	}
	if (cgroup)
		describe_attributed_hooks(*timing, hooks);
	status = cgroup ? 0 : leave_attribution_out(*timing);
	if (status == 0)
		status = timing_load(*timing, hooks);
	kernel_btf_free(&kernel);
	if (status == 0 && cgroup)
		status = attribute_to(*timing, cgroup);
	return status;
}

/* The calls counted in keys 0 to keys - 1 of a per-CPU array, summed over
 * the CPUs: each value (struct timing_total, struct attributed_total) starts
 * with its calls. */
_Static_assert(offsetof(struct timing_total, calls) == 0 &&
		       offsetof(struct attributed_total, calls) == 0,
	       "per_cpu_calls reads the calls first");
_Static_assert(sizeof(struct timing_total) % 8 == 0 && sizeof(struct attributed_total) % 8 == 0,
	       "the kernel rounds each CPU's value up to 8 bytes");

static unsigned long long per_cpu_calls(int map, __u32 keys, size_t value_size)
{
	int cpus = libbpf_num_possible_cpus();
	unsigned long long calls = 0;
	unsigned char *values;

	if (cpus <= 0 || !(values = calloc((size_t)cpus, value_size)))
		return 0;
	for (__u32 key = 0; key < keys; key++)
		if (bpf_map_lookup_elem(map, &key, values) == 0)
			for (int cpu = 0; cpu < cpus; cpu++)
				calls += *(__u64 *)(values + (size_t)cpu * value_size);
	free(values);
	return calls;
}

/* The calls timed; the attributing variant's, those in the workload's row
 * (row 0). */
static unsigned long long timing_calls(struct timing_bpf *timing, bool attributing)
{
	if (attributing)
		return per_cpu_calls(bpf_map__fd(timing->maps.attributed_totals), VNFS_OP_COUNT,
				     sizeof(struct attributed_total));
	return per_cpu_calls(bpf_map__fd(timing->maps.timing_totals), 1,
			     sizeof(struct timing_total));
}

/* ------------------------------------------- the collector design */

static int collector_start(struct collector_design_bpf **collector, struct hooks *hooks)
{
	int error;

	hooks_init(hooks, true);
	*collector = collector_design_bpf__open();
	if (!*collector) {
		fprintf(stderr, "bench_loader: cannot open the collector object: %s\n",
			strerror(errno));
		return -1;
	}
	for (unsigned slot = 0; slot < VNFS_MAX_HOOKS; slot++) {
		struct bpf_program *entry, *exit_program;
		char name[64];

		snprintf(name, sizeof(name), "collector_entry_%u", slot);
		entry = bpf_object__find_program_by_name((*collector)->obj, name);
		snprintf(name, sizeof(name), "collector_return_%u", slot);
		exit_program = bpf_object__find_program_by_name((*collector)->obj, name);
		if (slot < hooks->count) {
			const struct vnfs_hook *hook = &vnfs_hooks[slot];
			struct vnfs_hook_config *config = &(*collector)->rodata->hook_config[slot];

			config->operation = hook->operation;
			config->flags = hook->flags;
			config->object_kind = hook->object_kind;
			config->object_argument = hook->fallback_object_argument;
			config->result_kind = hook->fallback_result_kind;
			hooks->functions[slot].programs[0] = entry;
			hooks->functions[slot].programs[1] = exit_program;
			continue;
		}
		bpf_program__set_autoload(entry, false);
		bpf_program__set_autoload(exit_program, false);
	}
	error = collector_design_bpf__load(*collector);
	if (error) {
		fprintf(stderr, "bench_loader: loading the collector programs failed: %s\n",
			strerror(-error));
		return -1;
	}
	return 0;
}

/* Sums every operation's count over the stats hash: proof the probes fired. */
static unsigned long long collector_calls(struct collector_design_bpf *collector)
{
	struct collector_design_key key, next;
	struct collector_design_stats value;
	unsigned long long calls = 0;
	int map = bpf_map__fd(collector->maps.stats);
	void *previous = NULL;

	while (bpf_map_get_next_key(map, previous, &next) == 0) {
		if (bpf_map_lookup_elem(map, &next, &value) == 0)
			for (int operation = 0; operation < VNFS_OP_COUNT; operation++)
				calls += value.operations[operation].count;
		key = next;
		previous = &key;
	}
	return calls;
}

/* ---------------------------------------------- attach and detach */

struct hook_job {
	struct hooked_function *function;
	bool kprobes;
};

static void *attach_function(void *argument)
{
	struct hook_job *job = argument;
	struct hooked_function *function = job->function;

	for (int side = 0; side < 2; side++) {
		if (job->kprobes)
			function->links[side] = bpf_program__attach_kprobe(
				function->programs[side], side == 1, function->name);
		else if (function->program_fds[side] >= 0)
			function->link_fds[side] = bpf_link_create(
				function->program_fds[side], 0,
				side == 0 ? BPF_TRACE_FENTRY : BPF_TRACE_FEXIT, NULL);
	}
	return NULL;
}

static bool function_attached(const struct hooked_function *function, bool kprobes)
{
	if (kprobes)
		return function->links[0] && function->links[1];
	return function->link_fds[0] >= 0 && function->link_fds[1] >= 0;
}

static void *detach_function(void *argument)
{
	struct hooked_function *function = argument;

	for (int side = 0; side < 2; side++) {
		bpf_link__destroy(function->links[side]);
		function->links[side] = NULL;
		if (function->link_fds[side] >= 0)
			close(function->link_fds[side]);
		function->link_fds[side] = -1;
	}
	return NULL;
}

/* Attaching and detaching each wait for the kernel to patch the function and
 * for an RCU-tasks grace period, a second or more under emulation: one after
 * the other, 30 functions take minutes.  One thread per function lets the
 * waits overlap. */
static void for_each_function_in_parallel(struct hooks *hooks, void *(*work)(void *),
					  bool attaching)
{
	struct hook_job jobs[VNFS_MAX_HOOKS];
	pthread_t threads[VNFS_MAX_HOOKS];
	bool threaded[VNFS_MAX_HOOKS];

	for (size_t i = 0; i < hooks->count; i++) {
		void *argument = &hooks->functions[i];

		if (attaching) {
			jobs[i].function = &hooks->functions[i];
			jobs[i].kprobes = hooks->kprobes;
			argument = &jobs[i];
		}
		threaded[i] = pthread_create(&threads[i], NULL, work, argument) == 0;
		if (!threaded[i])
			work(argument);
	}
	for (size_t i = 0; i < hooks->count; i++)
		if (threaded[i])
			pthread_join(threads[i], NULL);
}

/* A function counts as hooked with both its probes or not at all. */
static void attach_all(struct hooks *hooks)
{
	for_each_function_in_parallel(hooks, attach_function, true);
	hooks->attached = 0;
	for (size_t i = 0; i < hooks->count; i++) {
		struct hooked_function *function = &hooks->functions[i];

		if (function_attached(function, hooks->kprobes)) {
			hooks->attached++;
			continue;
		}
		if (hooks->kprobes || function->program_fds[0] >= 0)
			fprintf(stderr, "bench_loader: %s: attach failed, left out\n", function->name);
		detach_function(function);
	}
}

static void detach_all(struct hooks *hooks)
{
	for_each_function_in_parallel(hooks, detach_function, false);
	for (size_t i = 0; i < hooks->count; i++) {
		for (int side = 0; side < 2; side++) {
			if (hooks->functions[i].program_fds[side] >= 0)
				close(hooks->functions[i].program_fds[side]);
			hooks->functions[i].program_fds[side] = -1;
		}
	}
	hooks->attached = 0;
}

/* ---------------------------------------------------------- main */

static int wait_for_stop(void)
{
	sigset_t signals;
	int signal_number;

	sigemptyset(&signals);
	sigaddset(&signals, SIGTERM);
	sigaddset(&signals, SIGINT);
	return sigwait(&signals, &signal_number) == 0 ? 0 : -1;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: bench_loader floor|timing|collector-design\n"
		     "       bench_loader attributing CGROUP\n"
		     "Attaches the benchmark's reference probes to the functions vnfs hooks,\n"
		     "prints READY, and detaches on SIGTERM or SIGINT.\n");
}

int main(int argc, char **argv)
{
	struct collector_design_bpf *collector = NULL;
	struct timing_bpf *timing = NULL;
	static struct hooks hooks;
	long long started = now_ms();
	bool attributing = argc >= 2 && strcmp(argv[1], "attributing") == 0;
	sigset_t signals;
	int status = 1;

	if (argc != (attributing ? 3 : 2)) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return 0;
	}
	/* Blocked before anything attaches (and so in every thread), so a
	 * SIGTERM sent right after READY waits for sigwait instead of killing
	 * us with the probes attached. */
	sigemptyset(&signals);
	sigaddset(&signals, SIGTERM);
	sigaddset(&signals, SIGINT);
	if (sigprocmask(SIG_BLOCK, &signals, NULL) != 0) {
		perror("bench_loader: sigprocmask");
		return 1;
	}
	libbpf_set_print(print_libbpf_warnings);
	hooks_init(&hooks, false);

	if (strcmp(argv[1], "floor") == 0) {
		if (floor_start(&hooks) != 0)
			goto out;
	} else if (strcmp(argv[1], "timing") == 0 || attributing) {
		if (timing_start(&timing, &hooks, attributing ? argv[2] : NULL) != 0)
			goto out;
	} else if (strcmp(argv[1], "collector-design") == 0) {
		if (collector_start(&collector, &hooks) != 0)
			goto out;
	} else {
		fprintf(stderr, "bench_loader: unknown variant '%s'\n", argv[1]);
		usage(stderr);
		status = 2;
		goto out;
	}
	printf("loaded in %lld ms\n", now_ms() - started);
	attach_all(&hooks);
	if (hooks.attached == 0) {
		fprintf(stderr, "bench_loader: %s: no function could be hooked\n", argv[1]);
		goto out;
	}
	printf("READY %s: %zu functions hooked, %lld ms after start\n", argv[1], hooks.attached,
	       now_ms() - started);
	fflush(stdout);
	if (wait_for_stop() != 0) {
		perror("bench_loader: sigwait");
		goto out;
	}
	if (collector)
		printf("counted %llu calls\n", collector_calls(collector));
	if (timing)
		printf("counted %llu calls\n", timing_calls(timing, attributing));
	started = now_ms();
	detach_all(&hooks);
	printf("detached in %lld ms\n", now_ms() - started);
	status = 0;
out:
	detach_all(&hooks);
	collector_design_bpf__destroy(collector);
	timing_bpf__destroy(timing);
	return status;
}
