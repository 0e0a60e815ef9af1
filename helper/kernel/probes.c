/*
 * probes.c — loads bpf/vnfs.bpf.c onto the running kernel's NFS client and
 * gives the helper access to its maps (see probes.h).
 *
 * Start-up, per hooked function of hooks.c:
 *   1. find its prototype in the kernel's BTF (vmlinux or an nfs* module) and
 *      derive the hook configuration from it: which argument holds the object
 *      that names the mount, whether the result is an int, a long, a pointer;
 *   2. plan an attach method: fentry/fexit (auto, fentry) or kprobe/kretprobe
 *      (kprobe, or auto where fentry failed or no BTF prototype exists);
 *   3. load the object and attach.  Loading is per object, so a failure sends
 *      the affected functions to their next method and the object is loaded
 *      again; every round only moves functions down the list, so it ends.
 * What was tried and why it failed is kept per function: when nothing
 * attaches, that is the error message.
 *
 * The pins are pins.c's, the maps while running maps.c's; the state they
 * share is probes_state.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <mntent.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "helper/kernel/probes_state.h"
#include "lib/log.h"

/* After bpf/vnfs.h (through probes.h): the skeleton uses its structs. */
#include "bpf/vnfs.skel.h"
#include "bpf/vnfs-legacy.skel.h"
#include "bpf/vnfs.core_types.h"
#include "bpf/vnfs-legacy.core_types.h"

/* The legacy build is opened through vnfs.skel.h's skeleton (open_skeleton),
 * whose views of the global sections must then fit it too: the two builds
 * differ only in code, never in their globals. */
_Static_assert(sizeof(struct vnfs_bpf__rodata) == sizeof(struct vnfs_legacy_bpf__rodata),
	       "bpf/vnfs.bpf.c: the legacy build's read-only globals differ");
_Static_assert(sizeof(struct vnfs_bpf__data) == sizeof(struct vnfs_legacy_bpf__data),
	       "bpf/vnfs.bpf.c: the legacy build's globals differ");
_Static_assert(offsetof(struct vnfs_bpf__rodata, page_shift) ==
		       offsetof(struct vnfs_legacy_bpf__rodata, page_shift),
	       "bpf/vnfs.bpf.c: the legacy build's read-only globals differ");

/* The program the kernel refused in the current load, as libbpf names it in
 * its warning ("prog 'NAME': failed to load: -13"): empty when none was
 * named.  Only the thread that loads the probes writes it (see attempt()). */
static char refused_program[64];

static void note_refused_program(const char *line)
{
	const char *name = strstr(line, "prog '"), *end;

	if (!name || !strstr(line, "': failed to load"))
		return;
	name += strlen("prog '");
	end = strchr(name, '\'');
	if (end && (size_t)(end - name) < sizeof(refused_program))
		snprintf(refused_program, sizeof(refused_program), "%.*s", (int)(end - name), name);
}

static int libbpf_to_log(enum libbpf_print_level level, const char *format, va_list arguments)
{
	char *text = NULL, *line, *saveptr = NULL;

	/* Failed attempts are expected (fallback), so libbpf's warnings go to
	 * debug level; the outcome is logged by this module.  The verifier log
	 * of a rejected program (many lines in one warning) shows with log_level
	 * = debug.  libbpf's own debug chatter (four lines per CO-RE relocation)
	 * is dropped: formatting it costs more than the load itself. */
	if (level == LIBBPF_DEBUG)
		return 0;
	if (vasprintf(&text, format, arguments) < 0)
		return 0;
	for (line = strtok_r(text, "\n", &saveptr); line; line = strtok_r(NULL, "\n", &saveptr)) {
		note_refused_program(line);
		vnfs_debug("libbpf: %s", line);
	}
	free(text);
	return 0;
}

static double milliseconds(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec * 1e3 + now.tv_nsec / 1e6;
}

/* ---- planning ---- */

/* Where no BTF describes the NFS client (before 5.11): which hooked
 * functions the kernel has, from /proc/kallsyms, so that a function of
 * another version is "not in this kernel" rather than a kprobe refused.
 * Returns false when the list names no NFS client function (the module
 * not loaded, or the list unreadable): then every function is tried. */
static bool kallsyms_find(bool present[])
{
	char line[512], name[256];
	bool any = false;
	FILE *symbols;

	memset(present, 0, vnfs_hook_count * sizeof(present[0]));
	symbols = fopen("/proc/kallsyms", "re");
	if (!symbols)
		return false;
	while (fgets(line, sizeof(line), symbols)) {
		/* "ADDRESS TYPE NAME [MODULE]": only text symbols. */
		if (sscanf(line, "%*s %*[tT] %255s", name) != 1 || name[0] != 'n')
			continue;
		for (size_t i = 0; i < vnfs_hook_count; i++)
			if (strcmp(name, vnfs_hooks[i].function) == 0)
				any = present[i] = true;
	}
	fclose(symbols);
	return any;
}

/* Whether the running kernel is older than major.minor (uname's release). */
static bool kernel_before(int major, int minor)
{
	struct utsname name;
	int running_major, running_minor;

	if (uname(&name) != 0 || sscanf(name.release, "%d.%d", &running_major, &running_minor) != 2)
		return false;
	return running_major < major || (running_major == major && running_minor < minor);
}

/* The kernel types the probes relocate against, for libbpf (core_btf.h). */
static void copy_core_types(struct vnfs_probes *probes)
{
	const char *const *names = probes->legacy_kernel ? vnfs_legacy_bpf_core_types
							 : vnfs_bpf_core_types;
	size_t count = probes->legacy_kernel
			       ? sizeof(vnfs_legacy_bpf_core_types) / sizeof(*vnfs_legacy_bpf_core_types)
			       : sizeof(vnfs_bpf_core_types) / sizeof(*vnfs_bpf_core_types);
	double started = milliseconds();
	char note[128];

	if (core_btf_write(&probes->core_btf, &probes->kernel_btf, names, count, note,
			   sizeof(note)) == 0)
		vnfs_info("CO-RE: relocating against %zu kernel types, copied in %.0f ms",
			  probes->core_btf.types, milliseconds() - started);
	else
		vnfs_info("CO-RE: libbpf searches the kernel's BTF itself (%s)", note);
}

/* Plans every function's first attach method from the kernel's BTF. */
static void plan_hooks(struct vnfs_probes *probes)
{
	struct kernel_wanted wanted[KERNEL_BTF_MAX_WANTED];
	struct kernel_function found[KERNEL_BTF_MAX_WANTED];
	bool in_kallsyms[VNFS_MAX_HOOKS], kallsyms_has_nfs = false;
	bool btf_has_nfs;
	size_t wanted_count;

	if (kernel_btf_load(&probes->kernel_btf) != 0)
		vnfs_warning("the kernel has no BTF (/sys/kernel/btf/vmlinux): kprobes only");
	/* The hooked functions and the RPC programs' targets, in one pass. */
	wanted_count = kernel_btf_want_hooks(vnfs_hooks, vnfs_hook_count, wanted);
	wanted_count += wire_probes_wanted(probes, wanted + wanted_count);
	btf_has_nfs = kernel_btf_find_wanted(&probes->kernel_btf, wanted, wanted_count, found);
	wire_probes_found(probes, found + vnfs_hook_count);
	if (!btf_has_nfs)
		kallsyms_has_nfs = kallsyms_find(in_kallsyms);
	probes->hook_count = vnfs_hook_count;
	for (size_t i = 0; i < vnfs_hook_count; i++) {
		struct hook_state *state = &probes->hooks[i];

		state->hook = &vnfs_hooks[i];
		if (found[i].btf) {
			if (kernel_btf_hook_config(state->hook, found[i].btf, found[i].id, &state->config,
						   state->note, sizeof(state->note)) != 0) {
				state->absent = true;
				continue;
			}
			state->has_prototype = true;
			state->btf_id = found[i].id;
			state->btf_object_fd = found[i].object_fd;
		} else if (btf_has_nfs || (kallsyms_has_nfs && !in_kallsyms[i])) {
			state->absent = true;
			snprintf(state->note, sizeof(state->note), "not in this kernel");
			continue;
		} else {
			vnfs_hook_fallback_config(state->hook, kernel_before(5, 12), &state->config);
			snprintf(state->fentry_error, sizeof(state->fentry_error),
				 "no BTF describes it (nfs module not loaded?)");
		}
		if (probes->mode == VNFS_PROBE_KPROBE) {
			snprintf(state->fentry_error, sizeof(state->fentry_error),
				 "not tried (probe mode kprobe)");
			state->plan = VNFS_ATTACH_KPROBE;
		} else if (state->has_prototype) {
			state->plan = VNFS_ATTACH_FENTRY;
		} else {
			state->plan = probes->mode == VNFS_PROBE_AUTO ? VNFS_ATTACH_KPROBE
								      : VNFS_ATTACH_NONE;
		}
		if (state->plan == VNFS_ATTACH_NONE)
			snprintf(state->kprobe_error, sizeof(state->kprobe_error),
				 "not tried (probe mode fentry)");
	}
	probes->kprobe_multi = probes->mode != VNFS_PROBE_FENTRY && kprobe_multi_possible(probes);
	probes->kprobe_cookies = probes->mode != VNFS_PROBE_FENTRY && kprobe_cookies_possible(probes);
	copy_core_types(probes);
	kernel_btf_drop_types(&probes->kernel_btf);
}

/* After fentry failed for a function: its next method per the mode. */
static void fentry_failed(struct vnfs_probes *probes, struct hook_state *state, const char *format,
			  ...)
{
	va_list arguments;

	va_start(arguments, format);
	vsnprintf(state->fentry_error, sizeof(state->fentry_error), format, arguments);
	va_end(arguments);
	if (probes->mode == VNFS_PROBE_AUTO) {
		state->plan = VNFS_ATTACH_KPROBE;
	} else {
		state->plan = VNFS_ATTACH_NONE;
		snprintf(state->kprobe_error, sizeof(state->kprobe_error),
			 "not tried (probe mode fentry)");
	}
}

static void kprobe_failed(struct hook_state *state, const char *format, ...)
{
	va_list arguments;

	va_start(arguments, format);
	vsnprintf(state->kprobe_error, sizeof(state->kprobe_error), format, arguments);
	va_end(arguments);
	state->plan = VNFS_ATTACH_NONE;
}

/* ------------------------------------------------------------- loading */

static struct bpf_program *hook_program(struct vnfs_bpf *skeleton, const char *kind, size_t index)
{
	char name[32];

	snprintf(name, sizeof(name), "%s_%zu", kind, index);
	return bpf_object__find_program_by_name(skeleton->obj, name);
}

static void destroy_link_pair(struct hook_state *state)
{
	bpf_link__destroy(state->entry_link);
	bpf_link__destroy(state->exit_link);
	state->entry_link = NULL;
	state->exit_link = NULL;
}

static void release_attempt(struct vnfs_probes *probes)
{
	if (!probes->kprobe_multi_reused)
		kprobe_multi_release(probes, false);
	for (size_t i = 0; i < probes->hook_count; i++)
		if (!probes->hooks[i].reused) {
			destroy_link_pair(&probes->hooks[i]);
			probes->hooks[i].method = VNFS_ATTACH_NONE;
		}
	vnfs_bpf__destroy(probes->skeleton);
	probes->skeleton = NULL;
}

static unsigned int page_shift(void)
{
	long page_size = sysconf(_SC_PAGESIZE);
	unsigned int shift = 0;

	while (page_size > 1) {
		page_size >>= 1;
		shift++;
	}
	return shift;
}

/* The fentry/fexit programs, and the RPC programs, are in sections of their
 * own (bpf/vnfs.h) so that loading them goes through set_attach_btf_id(),
 * which gives the kernel the target found by kernel_btf, instead of
 * libbpf's resolution by name (wire_probes.c gives the RPC programs').
 * libbpf's handlers are process-wide, and libbpf 1.1 frees its handler table
 * when the last one is unregistered but keeps using it (double free on the
 * next registration): they are registered once and stay, and the probes
 * being loaded are found through loading_probes. */
static const struct vnfs_probes *loading_probes;

static int set_attach_btf_id(struct bpf_program *program, struct bpf_prog_load_opts *options,
			     long cookie)
{
	const struct vnfs_probes *probes = loading_probes;
	const char *index = strrchr(bpf_program__name(program), '_');
	unsigned long hook = index ? strtoul(index + 1, NULL, 10) : VNFS_MAX_HOOKS;

	(void)cookie;
	if (probes && strchr(bpf_program__section_name(program), '/'))
		return wire_probes_set_target(probes, program, options);
	if (!probes || hook >= probes->hook_count || probes->hooks[hook].btf_id == 0)
		return -EINVAL;
	options->attach_btf_id = probes->hooks[hook].btf_id;
	options->attach_btf_obj_fd = probes->hooks[hook].btf_object_fd;
	return 0;
}

static int section_handlers_status = -1;

static void register_section_handlers_once(void)
{
	LIBBPF_OPTS(libbpf_prog_handler_opts, options,
		    .prog_prepare_load_fn = set_attach_btf_id);

	if (libbpf_register_prog_handler(VNFS_FENTRY_SECTION, BPF_PROG_TYPE_TRACING,
					 BPF_TRACE_FENTRY, &options) >= 0 &&
	    libbpf_register_prog_handler(VNFS_FEXIT_SECTION, BPF_PROG_TYPE_TRACING,
					 BPF_TRACE_FEXIT, &options) >= 0 &&
	    libbpf_register_prog_handler(VNFS_FEXIT_SECTION "/", BPF_PROG_TYPE_TRACING,
					 BPF_TRACE_FEXIT, &options) >= 0 &&
	    libbpf_register_prog_handler(VNFS_TP_BTF_SECTION "/", BPF_PROG_TYPE_TRACING,
					 BPF_TRACE_RAW_TP, &options) >= 0)
		section_handlers_status = 0;
}

static int register_section_handlers(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, register_section_handlers_once);
	return section_handlers_status;
}

static bool environment_capture_reused(const struct vnfs_probes *probes)
{
	return probes->environment_links[ENVIRONMENT_INHERIT] &&
	       probes->environment_links[ENVIRONMENT_CAPTURE];
}

static bool any_planned(const struct vnfs_probes *probes, enum vnfs_attach_method method)
{
	for (size_t i = 0; i < probes->hook_count; i++)
		if (probes->hooks[i].plan == method)
			return true;
	return false;
}

/* Sets every hook slot's programs for this attempt's plan.  Returns -1 only
 * when the object cannot be prepared at all. */
static int prepare_programs(struct vnfs_probes *probes)
{
	struct vnfs_bpf *skeleton = probes->skeleton;

	bpf_program__set_autoload(skeleton->progs.drain_at_exit, probes->exit_drain_link == NULL);
	bpf_program__set_autoload(skeleton->progs.fold_unattributed, probes->can_fold);
	bpf_program__set_autoload(skeleton->progs.inherit_environment_job,
				  probes->capture_environment &&
					  !probes->environment_links[ENVIRONMENT_INHERIT]);
	bpf_program__set_autoload(skeleton->progs.capture_environment,
				  probes->capture_environment &&
					  !probes->environment_links[ENVIRONMENT_CAPTURE]);
	wire_probes_prepare(probes, any_planned(probes, VNFS_ATTACH_FENTRY));
	kprobe_multi_prepare(probes);
	kprobe_cookies_prepare(probes, any_planned(probes, VNFS_ATTACH_KPROBE));
	for (size_t i = 0; i < VNFS_MAX_HOOKS; i++) {
		struct bpf_program *fentry = hook_program(skeleton, "fentry", i);
		struct bpf_program *fexit = hook_program(skeleton, "fexit", i);
		struct bpf_program *kprobe = hook_program(skeleton, "kprobe", i);
		struct bpf_program *kretprobe = hook_program(skeleton, "kretprobe", i);
		struct hook_state *state = i < probes->hook_count ? &probes->hooks[i] : NULL;

		if (!fentry || !fexit || !kprobe || !kretprobe)
			return -1;
		bpf_program__set_autoload(fentry, false);
		bpf_program__set_autoload(fexit, false);
		bpf_program__set_autoload(kprobe, false);
		bpf_program__set_autoload(kretprobe, false);
		if (!state || state->plan == VNFS_ATTACH_NONE)
			continue;
		skeleton->rodata->hook_config[i] = state->config;
		if (state->plan == VNFS_ATTACH_FENTRY) {
			bpf_program__set_autoload(fentry, true);
			bpf_program__set_autoload(fexit, true);
			continue;
		}
		if (state->plan != VNFS_ATTACH_KPROBE)
			continue;
		if (state->config.object_argument >= KPROBE_ARGUMENTS)
			skeleton->rodata->hook_config[i].object_kind = VNFS_OBJECT_NONE;
		bpf_program__set_autoload(kprobe, !probes->kprobe_multi && !kprobe_cookies_used(probes));
		bpf_program__set_autoload(kretprobe,
					  !probes->kprobe_multi && !kprobe_cookies_used(probes));
	}
	return 0;
}

/* One end of a kprobe pair, its link carrying cookie. */
static struct bpf_link *attach_kprobe(struct vnfs_probes *probes, struct bpf_program *program,
				      const char *function, __u64 cookie, bool retprobe)
{
	LIBBPF_OPTS(bpf_kprobe_opts, options, .bpf_cookie = cookie);

	if (retprobe)
		return kretprobe_attach(probes, program, function, cookie);
	return bpf_program__attach_kprobe_opts(program, function, &options);
}

/* A function's kprobe pair: the generic programs, told the slot by the
 * cookie (kprobe_cookies.c), or the slot's own. */
static void attach_kprobe_pair(struct vnfs_probes *probes, struct hook_state *state, size_t index)
{
	struct vnfs_bpf *skeleton = probes->skeleton;
	struct bpf_program *on_entry = hook_program(skeleton, "kprobe", index);
	struct bpf_program *on_return = hook_program(skeleton, "kretprobe", index);
	__u64 cookie = 0;

	if (kprobe_cookies_used(probes)) {
		on_entry = skeleton->progs.kprobe_cookie_entry;
		on_return = skeleton->progs.kretprobe_cookie_exit;
		cookie = index;
	}
	state->entry_link = attach_kprobe(probes, on_entry, state->hook->function, cookie, false);
	if (state->entry_link)
		state->exit_link = attach_kprobe(probes, on_return, state->hook->function, cookie, true);
}

/* Attaches one function's planned pair.  Returns false when fentry failed
 * and the object must be reloaded with the function's next method. */
static bool attach_hook(struct vnfs_probes *probes, struct hook_state *state, size_t index)
{
	struct vnfs_bpf *skeleton = probes->skeleton;

	if (state->plan == VNFS_ATTACH_FENTRY) {
		state->entry_link = bpf_program__attach_trace(hook_program(skeleton, "fentry", index));
		if (state->entry_link)
			state->exit_link =
				bpf_program__attach_trace(hook_program(skeleton, "fexit", index));
		if (state->entry_link && state->exit_link) {
			state->method = VNFS_ATTACH_FENTRY;
			return true;
		}
		fentry_failed(probes, state, "attach failed: %s", strerror(errno));
		destroy_link_pair(state);
		return state->plan == VNFS_ATTACH_NONE;
	}
	if (state->plan != VNFS_ATTACH_KPROBE || state->at_once)
		return true;
	attach_kprobe_pair(probes, state, index);
	if (state->entry_link && state->exit_link) {
		state->method = VNFS_ATTACH_KPROBE;
		return true;
	}
	kprobe_failed(state, "attach failed: %s", strerror(errno));
	destroy_link_pair(state);
	return true;
}

/* Attaching a function waits on the kernel (an ftrace update, and for the
 * second program on a trampoline, RCU-tasks grace periods): a few threads
 * let the waits of different functions overlap (on the guest's one vCPU,
 * 759-767 ms for the 28 functions against 789-1,060 ms one after the other;
 * docs/PERFORMANCE.md).  Each thread takes the next function; attach_hook
 * touches only that function's state. */
#define ATTACH_THREADS 4

struct attach_work {
	struct vnfs_probes *probes;
	size_t next;   /* the next function to take (atomic) */
	bool unsettled; /* some function needs another round (atomic) */
};

static void *attach_worker(void *argument)
{
	struct attach_work *work = argument;

	for (;;) {
		size_t i = __atomic_fetch_add(&work->next, 1, __ATOMIC_RELAXED);

		if (i >= work->probes->hook_count)
			return NULL;
		if (!attach_hook(work->probes, &work->probes->hooks[i], i))
			__atomic_store_n(&work->unsettled, true, __ATOMIC_RELAXED);
	}
}

/* Attaches every function's programs per its plan.  Returns whether the
 * round settled them all (attached, or given up for good). */
static bool attach_hooks(struct vnfs_probes *probes)
{
	struct attach_work work = { .probes = probes };
	pthread_t threads[ATTACH_THREADS];
	size_t started = 0;

	if (!kprobe_multi_attach(probes))
		return false;
	while (started < ATTACH_THREADS &&
	       pthread_create(&threads[started], NULL, attach_worker, &work) == 0)
		started++;
	if (started == 0)
		attach_worker(&work); /* no thread to be had: this one does it all */
	for (size_t i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	return !work.unsettled;
}

static bool refused_name_starts(const char *prefix)
{
	return strncmp(refused_program, prefix, strlen(prefix)) == 0;
}

/* Whether the refused program may be the part whose names start with
 * prefix: named so, or unnamed, when each optional part (environment
 * capture, RPC counters, fold) is taken for it in turn. */
static bool refused_may_be(const char *prefix)
{
	return !refused_program[0] || refused_name_starts(prefix);
}

/* A hook slot's program refused (fentry_N, fexit_N, kprobe_N, kretprobe_N):
 * that function moves to its next method.  Returns false for any other name. */
static bool refused_hook(struct vnfs_probes *probes, int result)
{
	const char *index = strrchr(refused_program, '_');
	unsigned long hook;
	char *end;

	if (!index || !(refused_name_starts("fentry_") || refused_name_starts("fexit_") ||
			refused_name_starts("kprobe_") || refused_name_starts("kretprobe_")))
		return false;
	hook = strtoul(index + 1, &end, 10);
	if (*end != '\0' || hook >= probes->hook_count)
		return false;
	if (refused_program[0] == 'f')
		fentry_failed(probes, &probes->hooks[hook], "load failed: %s", strerror(-result));
	else
		kprobe_failed(&probes->hooks[hook], "load failed: %s", strerror(-result));
	return true;
}

/* The load failed: the refused part goes, and another round is needed
 * (returns 1) unless nothing is left to try (0). */
static int refused(struct vnfs_probes *probes, int result)
{
	bool fentry_planned = any_planned(probes, VNFS_ATTACH_FENTRY);

	if (probes->capture_environment && !environment_capture_reused(probes) &&
	    (refused_may_be("capture_environment") || refused_may_be("inherit_environment"))) {
		vnfs_warning("the kernel refused the environment capture (%s): processes are "
			     "attributed by cgroup only", strerror(-result));
		probes->capture_environment = false;
	} else if (probes->count_wire && !wire_probes_reused(probes) && refused_may_be("wire_")) {
		vnfs_warning("the kernel refused the RPC counters (%s%s%s): RPCs are not counted "
			     "per workload", strerror(-result), refused_program[0] ? ", in " : "",
			     refused_program);
		probes->count_wire = false;
	} else if (probes->can_fold && refused_may_be("fold_unattributed")) {
		/* A program no hook needs: loaded again without it, the hooks are
		 * judged on their own. */
		vnfs_warning("the kernel refused the program that folds a late-identified "
			     "cgroup's first calls into its workload (%s): they stay "
			     "unattributed", strerror(-result));
		probes->can_fold = false;
	} else if (kprobe_multi_refused(probes, refused_program, result)) {
		/* the kprobed functions take a pair each in the next round */
	} else if (kprobe_cookies_refused(probes, refused_program, result)) {
		/* and their own programs in the next round */
	} else if (!refused_hook(probes, result)) {
		/* Unnamed (or a name of no part): every function of the refused
		 * kind moves on. */
		for (size_t i = 0; i < probes->hook_count; i++) {
			struct hook_state *state = &probes->hooks[i];

			if (fentry_planned && state->plan == VNFS_ATTACH_FENTRY)
				fentry_failed(probes, state, "load failed: %s", strerror(-result));
			else if (!fentry_planned && state->plan == VNFS_ATTACH_KPROBE)
				kprobe_failed(state, "load failed: %s", strerror(-result));
		}
	}
	release_attempt(probes);
	return any_planned(probes, VNFS_ATTACH_FENTRY) || any_planned(probes, VNFS_ATTACH_KPROBE) ? 1 : 0;
}

/* The object for this kernel: vnfs.bpf.c's legacy build where it has no
 * task storage (before 5.11; see bpf/vnfs.bpf.c), opened with the same
 * skeleton (same programs, maps and globals) from the other build's bytes. */
static struct vnfs_bpf *open_skeleton(const struct vnfs_probes *probes)
{
	LIBBPF_OPTS(bpf_object_open_opts, options,
		    .btf_custom_path = probes->core_btf.fd >= 0 ? probes->core_btf.path : NULL);
	struct vnfs_bpf *skeleton;
	size_t size;
	int status;

	if (!probes->legacy_kernel)
		return vnfs_bpf__open_opts(&options);
	skeleton = calloc(1, sizeof(*skeleton));
	if (!skeleton)
		return NULL;
	status = vnfs_bpf__create_skeleton(skeleton);
	if (status == 0) {
		skeleton->skeleton->data = (void *)vnfs_legacy_bpf__elf_bytes(&size);
		skeleton->skeleton->data_sz = size;
		status = bpf_object__open_skeleton(skeleton->skeleton, &options);
	}
	if (status != 0) {
		vnfs_bpf__destroy(skeleton);
		errno = -status;
		return NULL;
	}
	return skeleton;
}

/* At debug level, what the verifier walked: the programs' instructions it
 * processed (kernel 5.16 on; 0 before), the measure of its share of the start
 * (docs/PERFORMANCE.md, "Helper start to ready, by part"). */
static void log_verification(const struct vnfs_probes *probes)
{
	const char *largest = "none";
	unsigned long long total = 0, largest_count = 0;
	struct bpf_program *program;
	unsigned int loaded = 0;

	bpf_object__for_each_program(program, probes->skeleton->obj) {
		struct bpf_prog_info info = { 0 };
		__u32 length = sizeof(info);
		int fd = bpf_program__fd(program);

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &length) != 0)
			continue;
		loaded++;
		total += info.verified_insns;
		if (info.verified_insns > largest_count) {
			largest_count = info.verified_insns;
			largest = bpf_program__name(program);
		}
	}
	vnfs_debug("verifier: %u programs, %llu instructions processed, the most %llu (%s)", loaded,
		   total, largest_count, largest);
}

/* One round: open, configure, load, attach.  Returns 0 when the round
 * settled every function (attached or given up), 1 when another round is
 * needed, -1 on an error unrelated to the kernel's refusals. */
static int attempt(struct vnfs_probes *probes, char *error, size_t error_size)
{
	bool settled;
	int result, status;
	double started;

	started = milliseconds();
	if (register_section_handlers() != 0) {
		snprintf(error, error_size, "cannot register the probes' section handlers");
		return -1;
	}
	probes->skeleton = open_skeleton(probes);
	vnfs_debug("open round: %.0f ms", milliseconds() - started);
	if (!probes->skeleton) {
		snprintf(error, error_size, "cannot open the BPF object: %s", strerror(errno));
		return -1;
	}
	probes->skeleton->rodata->page_shift = page_shift();
	probes->skeleton->rodata->cost_cut = probes->cost_cut;
	started = milliseconds();
	status = prepare_programs(probes);
	vnfs_debug("attach targets set in %.0f ms", milliseconds() - started);
	if (status != 0 || (probes->pin && pins_set_map_paths(probes) != 0)) {
		snprintf(error, error_size, "the embedded BPF object does not match this helper");
		release_attempt(probes);
		return -1;
	}
	started = milliseconds();
	loading_probes = probes;
	refused_program[0] = '\0';
	result = vnfs_bpf__load(probes->skeleton);
	loading_probes = NULL;
	vnfs_debug("load round: %.0f ms", milliseconds() - started);
	if (result != 0) {
		vnfs_debug("the kernel refused %s", refused_program[0] ? refused_program
									: "a program libbpf did not name");
		return refused(probes, result);
	}
	log_verification(probes);
	started = milliseconds();
	settled = attach_hooks(probes);
	vnfs_debug("attach round: %.0f ms", milliseconds() - started);
	if (!settled) {
		release_attempt(probes);
		return 1;
	}
	return 0;
}

/* ------------------------------------------------------------- reports */

static bool any_attached(const struct vnfs_probes *probes)
{
	for (size_t i = 0; i < probes->hook_count; i++)
		if (probes->hooks[i].method != VNFS_ATTACH_NONE)
			return true;
	return false;
}

/* Appends to buffer at *length, keeping it terminated and never overflowing. */
static void append(char *buffer, size_t size, size_t *length, const char *format, ...)
{
	va_list arguments;
	int written;

	if (*length + 1 >= size)
		return;
	va_start(arguments, format);
	written = vsnprintf(buffer + *length, size - *length, format, arguments);
	va_end(arguments);
	if (written < 0)
		return;
	*length += (size_t)written < size - *length ? (size_t)written : size - *length - 1;
}

/* The refusal: one line per function naming each method and why it failed
 * (28 of them do not fit one log line, which lib/log.c cuts at 2 KiB), then
 * a summary in error for the caller's last line. */
static void log_failures(const struct vnfs_probes *probes, char *error, size_t error_size)
{
	size_t absent = 0;

	for (size_t i = 0; i < probes->hook_count; i++) {
		const struct hook_state *state = &probes->hooks[i];
		const char *function = state->hook->function;
		const char *operation = vnfs_operation_names[state->hook->operation];

		if (state->absent) {
			absent++;
			vnfs_error("cannot probe %s (%s): %s", function, operation, state->note);
			continue;
		}
		vnfs_error("cannot probe %s (%s): fentry: %s; kprobe: %s", function, operation,
			   state->fentry_error[0] ? state->fentry_error : "not tried",
			   state->kprobe_error[0] ? state->kprobe_error : "not tried");
	}
	if (absent > 0)
		snprintf(error, error_size,
			 "none of the %zu hooked NFS client functions could be probed (%zu not in "
			 "this kernel; each is named above with why)",
			 probes->hook_count, absent);
	else
		snprintf(error, error_size,
			 "none of the %zu hooked NFS client functions could be probed (each is "
			 "named above with why)",
			 probes->hook_count);
}

/* A kprobe where fentry was tried and failed (mode auto). */
/* Attached by this start to the generic programs (kprobe_cookies.c): the
 * final round's choice, for every function it attached by kprobe. */
static bool by_cookie(const struct vnfs_probes *probes, const struct hook_state *state)
{
	return state->method == VNFS_ATTACH_KPROBE && !state->at_once && !state->reused &&
	       kprobe_cookies_used(probes);
}

static bool fell_back(const struct vnfs_probes *probes, const struct hook_state *state)
{
	return probes->mode == VNFS_PROBE_AUTO && state->method == VNFS_ATTACH_KPROBE &&
	       state->fentry_error[0];
}

size_t vnfs_probes_describe(const struct vnfs_probes *probes, char *buffer, size_t size)
{
	size_t length = 0;

	if (size > 0)
		buffer[0] = '\0';
	for (size_t i = 0; i < probes->hook_count; i++) {
		const struct hook_state *state = &probes->hooks[i];

		if (state->method != VNFS_ATTACH_NONE)
			append(buffer, size, &length, "%s: %s%s%s%s%s%s\n", state->hook->function,
			       vnfs_attach_method_name(state->method),
			       state->at_once ? " (at once)" : "", by_cookie(probes, state) ? " (by cookie)" : "",
			       state->reused ? " (reused)" : "",
			       fell_back(probes, state) ? " after fentry: " : "",
			       fell_back(probes, state) ? state->fentry_error : "");
		else if (state->absent)
			append(buffer, size, &length, "%s: skipped (%s)\n", state->hook->function,
			       state->note);
		else
			append(buffer, size, &length, "%s: none (fentry: %s; kprobe: %s)\n",
			       state->hook->function, state->fentry_error, state->kprobe_error);
	}
	return length;
}

/* "open: fentry (nfs_file_open, nfs4_file_open, nfs_atomic_open)" */
static void log_operation(const struct vnfs_probes *probes, enum vnfs_operation operation)
{
	static const enum vnfs_attach_method methods[] = { VNFS_ATTACH_FENTRY,
							   VNFS_ATTACH_KPROBE };
	char line[512];
	size_t length = 0;

	append(line, sizeof(line), &length, "%s:", vnfs_operation_names[operation]);
	for (size_t m = 0; m < sizeof(methods) / sizeof(methods[0]); m++) {
		const char *separator = " (";
		bool any = false;

		for (size_t i = 0; i < probes->hook_count; i++) {
			const struct hook_state *state = &probes->hooks[i];

			if (state->hook->operation != operation || state->method != methods[m])
				continue;
			if (!any)
				append(line, sizeof(line), &length, " %s", vnfs_attach_method_name(methods[m]));
			append(line, sizeof(line), &length, "%s%s", separator, state->hook->function);
			separator = ", ";
			any = true;
		}
		if (any)
			append(line, sizeof(line), &length, ")");
	}
	if (vnfs_probes_attach_method(probes, operation) == VNFS_ATTACH_NONE) {
		append(line, sizeof(line), &length, " not attached");
		for (size_t i = 0; i < probes->hook_count; i++) {
			const struct hook_state *state = &probes->hooks[i];

			if (state->hook->operation == operation)
				append(line, sizeof(line), &length, " [%s: %s]",
				       state->hook->function,
				       state->absent ? state->note : state->kprobe_error);
		}
		vnfs_warning("%s", line);
		return;
	}
	vnfs_info("%s", line);
	for (size_t i = 0; i < probes->hook_count; i++) {
		const struct hook_state *state = &probes->hooks[i];

		if (state->hook->operation == operation && state->absent)
			vnfs_info("  %s skipped: %s", state->hook->function, state->note);
		else if (state->hook->operation == operation && fell_back(probes, state))
			vnfs_info("  %s: kprobe because fentry: %s", state->hook->function,
				  state->fentry_error);
	}
}

enum vnfs_attach_method vnfs_probes_attach_method(const struct vnfs_probes *probes,
						  enum vnfs_operation operation)
{
	enum vnfs_attach_method method = VNFS_ATTACH_NONE;

	if (!probes)
		return VNFS_ATTACH_NONE;
	for (size_t i = 0; i < probes->hook_count; i++) {
		const struct hook_state *state = &probes->hooks[i];

		if (state->hook->operation != operation || state->method == VNFS_ATTACH_NONE)
			continue;
		if (state->method == VNFS_ATTACH_KPROBE)
			return VNFS_ATTACH_KPROBE;
		method = state->method;
	}
	return method;
}

/* ------------------------------------------------------------ open/close */

/* Tasks keep their calls pending (bpf/vnfs.h) only once the drain at task
 * exit runs: without it, what a task had pending when it exited would be
 * lost, so the probes then move every call out at once. */
static void attach_exit_drain(struct vnfs_probes *probes)
{
	char path[PATH_MAX];

	if (!probes->exit_drain_link) {
		probes->exit_drain_link = bpf_program__attach_raw_tracepoint(
			probes->skeleton->progs.drain_at_exit, EXIT_DRAIN_TRACEPOINT);
		if (!probes->exit_drain_link) {
			vnfs_warning("cannot attach the drain at task exit (%s): calls are "
				     "counted one at a time", strerror(errno));
			return;
		}
		/* The hooks stay attached after the helper exits (pinned): an
		 * exit drain that goes with the helper would leave them keeping
		 * calls nobody moves out of an exiting task. */
		if (probes->pin &&
		    (pins_link_path(path, sizeof(path), probes->pin_dir, EXIT_DRAIN_TRACEPOINT,
				   EXIT_DRAIN_PIN_END) != 0 ||
		     bpf_link__pin(probes->exit_drain_link, path) != 0)) {
			vnfs_warning("cannot pin the drain at task exit (%s): calls are counted "
				     "one at a time", strerror(errno));
			bpf_link__destroy(probes->exit_drain_link);
			probes->exit_drain_link = NULL;
			return;
		}
	}
	/* The legacy build holds one (PENDING_BATCH in bpf/vnfs.bpf.c). */
	probes->skeleton->data->pending_limit = probes->legacy_kernel ? 1 : VNFS_PENDING_CALLS;
}

static struct bpf_link *attach_environment_program(struct vnfs_probes *probes,
						   enum environment_program program)
{
	if (program == ENVIRONMENT_INHERIT)
		return bpf_program__attach_trace(probes->skeleton->progs.inherit_environment_job);
	return bpf_program__attach_raw_tracepoint(probes->skeleton->progs.capture_environment,
						  environment_pins[program].tracepoint);
}

/* Environment jobs are followed from here on: forks first, then execs. */
static void attach_environment_capture(struct vnfs_probes *probes)
{
	char path[PATH_MAX];

	for (int i = 0; probes->capture_environment && i < ENVIRONMENT_PROGRAMS; i++) {
		if (probes->environment_links[i])
			continue; /* a previous helper's, pinned */
		probes->environment_links[i] = attach_environment_program(probes, i);
		if (!probes->environment_links[i]) {
			vnfs_warning("cannot attach the environment capture to %s (%s): processes "
				     "are attributed by cgroup only",
				     environment_pins[i].tracepoint, strerror(errno));
			probes->capture_environment = false;
		} else if (probes->pin &&
			   (pins_link_path(path, sizeof(path), probes->pin_dir,
					   environment_pins[i].tracepoint,
					   environment_pins[i].end) != 0 ||
			    bpf_link__pin(probes->environment_links[i], path) != 0)) {
			vnfs_warning("cannot pin the environment capture's link on %s (%s): "
				     "tasks forked while the helper restarts join no job",
				     environment_pins[i].tracepoint, strerror(errno));
		}
	}
	if (probes->capture_environment)
		return;
	for (int i = 0; i < ENVIRONMENT_PROGRAMS; i++) {
		if (probes->environment_links[i] && probes->pin &&
		    pins_link_path(path, sizeof(path), probes->pin_dir,
				   environment_pins[i].tracepoint, environment_pins[i].end) == 0)
			unlink(path);
		bpf_link__destroy(probes->environment_links[i]);
		probes->environment_links[i] = NULL;
	}
}

/* The ring's callback: one id to the caller of vnfs_probes_for_each_new_cgroup. */
static int take_new_cgroup(void *context, void *data, size_t size)
{
	struct vnfs_probes *probes = context;
	uint64_t id;

	if (size != sizeof(id) || probes->new_cgroup_fn == NULL)
		return 0;
	memcpy(&id, data, sizeof(id));
	return probes->new_cgroup_fn(id, probes->new_cgroup_context);
}

/* Tells the helper of each cgroup as it is made (discovery): without it a
 * container is found only by its calls, at the next interval. */
static void attach_new_cgroup_notes(struct vnfs_probes *probes)
{
	probes->new_cgroup_link = bpf_program__attach_raw_tracepoint(
		probes->skeleton->progs.note_new_cgroup, "cgroup_mkdir");
	if (probes->new_cgroup_link != NULL)
		probes->new_cgroups = ring_buffer__new(
			bpf_map__fd(probes->skeleton->maps.new_cgroups), take_new_cgroup, probes, NULL);
	if (probes->new_cgroups != NULL)
		return;
	vnfs_warning("cannot follow cgroups as they are made (%s): containers are found by "
		     "their calls, once an interval", strerror(errno));
	bpf_link__destroy(probes->new_cgroup_link);
	probes->new_cgroup_link = NULL;
}

static int finish_open(struct vnfs_probes *probes, char *error, size_t error_size)
{
	struct vnfs_bpf *skeleton = probes->skeleton;
	void *mapping;

	if (probes->pin && pins_save(probes, error, error_size) != 0)
		return -1;
	mapping = mmap(NULL, STEP_ACTIVITY_MAPPING_SIZE, PROT_READ, MAP_SHARED,
		       bpf_map__fd(skeleton->maps.step_activity), 0);
	if (mapping == MAP_FAILED) {
		snprintf(error, error_size, "cannot map step_activity: %s", strerror(errno));
		return -1;
	}
	probes->step_activity = mapping;
	mapping = mmap(NULL, UNATTRIBUTED_ENTRIES_MAPPING_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		       bpf_map__fd(skeleton->maps.unattributed_entries), 0);
	if (mapping == MAP_FAILED) {
		snprintf(error, error_size, "cannot map unattributed_entries: %s", strerror(errno));
		return -1;
	}
	probes->unattributed_entries = mapping;
	mapping = mmap(NULL, UNATTRIBUTED_ENTRIES_MAPPING_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		       bpf_map__fd(skeleton->maps.wire_unattributed_entries), 0);
	if (mapping == MAP_FAILED) {
		snprintf(error, error_size, "cannot map wire_unattributed_entries: %s",
			 strerror(errno));
		return -1;
	}
	probes->wire_unattributed_entries = mapping;
	return 0;
}

/* The BPF object embedded in the helper (about 1.2 MiB of its read-only
 * data) is read only to load the probes: once they are loaded its pages are
 * handed back.  They are clean pages of the executable, read again from the
 * file should anything touch them later. */
static void release_embedded_object(void)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), start, first, end;
	size_t size = 0;

	start = (uintptr_t)vnfs_bpf__elf_bytes(&size);
	first = (start + page - 1) & ~(page - 1);
	end = (start + size) & ~(page - 1);
	if (end > first && madvise((void *)first, end - first, MADV_DONTNEED) != 0)
		vnfs_debug("cannot release the embedded BPF object's pages: %s", strerror(errno));
}

/* A new vnfs_probes with what this kernel offers decided from options
 * (each feature it lacks said once), or NULL when out of memory. */
static struct vnfs_probes *probes_new(const struct vnfs_probes_options *options)
{
	struct vnfs_probes *probes = calloc(1, sizeof(*probes));

	if (!probes)
		return NULL;
	pthread_mutex_init(&probes->cgroup_slots_lock, NULL);
	probes->cgroup_root_fd = -1;
	probes->barrier_fd = probes->barrier_inner_fd = -1;
	/* Without syscall programs (before 5.14) a cgroup identified late keeps
	 * its first calls unattributed; everything else works the same. */
	probes->can_fold = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SYSCALL, NULL) == 1;
	probes->mode = options->mode;
	probes->pin = options->pin;
	probes->cost_cut = options->cost_cut;
	probes->kprobe_calls_in_flight = options->kprobe_calls_in_flight;
	probes->tracefs = probes->kprobe_calls_in_flight ? kretprobe_events_tracefs() : NULL;
	if (probes->kprobe_calls_in_flight && !probes->tracefs)
		vnfs_info("no tracefs mounted (/sys/kernel/tracing): any kretprobe follows the "
			  "kernel's default number of calls in flight, not %u",
			  probes->kprobe_calls_in_flight);
	if (probes->cost_cut != VNFS_CUT_NONE)
		vnfs_warning("benchmark cut %u of the counting path (VNFS_BENCH_COST_CUT): calls "
			     "are not all counted", probes->cost_cut);
	probes->legacy_kernel = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) != 1;
	if (probes->legacy_kernel)
		vnfs_info("this kernel has no task storage (5.11): the probes keep their "
			  "per-thread state in a hash map (bpf/vnfs.bpf.c's legacy build)");
	/* bpf_loop, with which the capture reads an environment, is 5.17's. */
	probes->capture_environment =
		options->capture_environment &&
		libbpf_probe_bpf_helper(BPF_PROG_TYPE_RAW_TRACEPOINT, BPF_FUNC_loop, NULL) == 1;
	if (options->capture_environment && !probes->capture_environment)
		vnfs_warning("this kernel has no bpf_loop (5.17): environment jobs are not "
			     "captured, processes are attributed by cgroup only");
	probes->count_wire = options->count_wire && wire_probes_possible();
	if (options->count_wire && !probes->count_wire)
		vnfs_warning("this kernel has no BTF for the nfs and sunrpc modules (or they are "
			     "not loaded): RPCs are not counted per workload");
	snprintf(probes->pin_dir, sizeof(probes->pin_dir), "%s",
		 options->pin_dir ? options->pin_dir : VNFS_DEFAULT_PIN_DIR);
	return probes;
}

/* After a failed start that found no pins of an earlier helper: nothing of
 * this start may keep counting, so its links, programs and pins go. */
static void remove_failed_start(struct vnfs_probes *probes)
{
	char ignored[256];

	for (size_t i = 0; i < probes->hook_count; i++)
		destroy_link_pair(&probes->hooks[i]);
	kprobe_multi_release(probes, false);
	bpf_link__destroy(probes->exit_drain_link);
	probes->exit_drain_link = NULL;
	for (int i = 0; i < ENVIRONMENT_PROGRAMS; i++) {
		bpf_link__destroy(probes->environment_links[i]);
		probes->environment_links[i] = NULL;
	}
	wire_probes_release(probes, false);
	vnfs_bpf__destroy(probes->skeleton);
	probes->skeleton = NULL;
	if (vnfs_probes_unpin(probes->pin_dir, NULL, ignored, sizeof(ignored)) != 0)
		vnfs_warning("%s", ignored);
	pins_unmount_bpffs(probes);
}

int vnfs_probes_open(struct vnfs_probes **result, const struct vnfs_probes_options *options,
		     char *error, size_t error_size)
{
	struct vnfs_probes *probes;
	bool had_pins = false;
	int round = 0, status;
	double started, phase;

	*result = NULL;
	probes = probes_new(options);
	if (!probes) {
		snprintf(error, error_size, "out of memory");
		return -1;
	}
	libbpf_set_print(libbpf_to_log);

	started = milliseconds();
	plan_hooks(probes);
	vnfs_debug("BTF prototypes read in %.0f ms", milliseconds() - started);
	phase = milliseconds();
	if (probes->pin && pins_prepare(probes, &had_pins, error, error_size) != 0)
		goto fail;
	kretprobe_events_remove(false); /* a killed helper's, unless pinned */
	vnfs_debug("pins and return events looked over in %.0f ms", milliseconds() - phase);
	do {
		status = attempt(probes, error, error_size);
	} while (status == 1 && ++round < MAX_ATTEMPTS);
	kernel_btf_free(&probes->kernel_btf);
	core_btf_close(&probes->core_btf);
	if (status < 0)
		goto fail;
	if (status == 1) {
		snprintf(error, error_size, "the probes did not settle in %d rounds", MAX_ATTEMPTS);
		goto fail;
	}
	if (!any_attached(probes)) {
		log_failures(probes, error, error_size);
		goto fail;
	}
	phase = milliseconds();
	attach_exit_drain(probes);
	attach_environment_capture(probes);
	wire_probes_attach(probes);
	attach_new_cgroup_notes(probes);
	vnfs_debug("the other programs attached in %.0f ms", milliseconds() - phase);
	phase = milliseconds();
	if (finish_open(probes, error, error_size) != 0)
		goto fail;
	vnfs_debug("pinned and mapped in %.0f ms", milliseconds() - phase);
	for (int operation = 0; operation < VNFS_OP_COUNT; operation++)
		log_operation(probes, operation);
	vnfs_info("probes ready in %.0f ms", milliseconds() - started);
	release_embedded_object();
	*result = probes;
	return 0;
fail:
	if (probes->pin && !had_pins)
		remove_failed_start(probes);
	vnfs_probes_close(probes);
	return -1;
}

/* Lets go of a link without detaching it when it is pinned. */
static void release_link(struct bpf_link *link, bool pinned)
{
	if (!link)
		return;
	if (pinned) {
		/* destroy() would detach (a perf link is even disabled): keep the
		 * kernel object, close only our descriptor. */
		bpf_link__disconnect(link);
		close(bpf_link__fd(link));
	}
	bpf_link__destroy(link);
}

void vnfs_probes_close(struct vnfs_probes *probes)
{
	if (!probes)
		return;
	for (size_t i = 0; i < probes->hook_count; i++) {
		release_link(probes->hooks[i].entry_link, probes->pin);
		release_link(probes->hooks[i].exit_link, probes->pin);
	}
	for (int i = 0; i < KPROBE_MULTI_LINKS; i++)
		release_link(probes->kprobe_multi_links[i], probes->pin);
	release_link(probes->exit_drain_link, probes->pin);
	for (int i = 0; i < ENVIRONMENT_PROGRAMS; i++)
		release_link(probes->environment_links[i], probes->pin);
	for (int i = 0; i < WIRE_PROGRAMS; i++)
		release_link(probes->wire_links[i], probes->pin);
	kretprobe_events_remove(false); /* unless pinned links hold them */
	ring_buffer__free(probes->new_cgroups);
	bpf_link__destroy(probes->new_cgroup_link);
	if (probes->step_activity)
		munmap((void *)probes->step_activity, STEP_ACTIVITY_MAPPING_SIZE);
	if (probes->unattributed_entries)
		munmap(probes->unattributed_entries, UNATTRIBUTED_ENTRIES_MAPPING_SIZE);
	if (probes->wire_unattributed_entries)
		munmap(probes->wire_unattributed_entries, UNATTRIBUTED_ENTRIES_MAPPING_SIZE);
	if (probes->cgroup_root_fd >= 0)
		close(probes->cgroup_root_fd);
	if (probes->barrier_fd >= 0)
		close(probes->barrier_fd);
	if (probes->barrier_inner_fd >= 0)
		close(probes->barrier_inner_fd);
	free(probes->watched);
	free(probes->wire_expired);
	vnfs_bpf__destroy(probes->skeleton);
	kernel_btf_free(&probes->kernel_btf);
	core_btf_close(&probes->core_btf);
	pthread_mutex_destroy(&probes->cgroup_slots_lock);
	free(probes);
}

