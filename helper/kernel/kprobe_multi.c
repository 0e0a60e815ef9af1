/*
 * kprobe_multi.c — the functions planned for kprobes attached all at once
 * (bpf/vnfs.bpf.c's kprobe_multi_entry and kretprobe_multi_exit, each
 * function's hook slot as its cookie) where the kernel can: kprobe.multi
 * links are 5.18's and need a kernel built with fprobe (Debian's 6.1 is
 * not, its 6.12 is).  One link for every entry and one for every exit are
 * two ftrace updates, where a kprobe pair per function is two updates per
 * function, each of which walks every traceable function of the kernel;
 * and the two programs are verified once (docs/PERFORMANCE.md, "Helper
 * start, 2026-12-06, later": ready in 855 ms on 6.12 under the instruction
 * clock, 2,277 by fentry).  Each call costs more than by fentry, so mode
 * auto keeps fentry.
 *
 * It is all or nothing: the kernel refuses the whole link if it refuses
 * one function.  Then, or when the kernel refuses the programs, the
 * functions go back to a kprobe pair each, in another round (probes.c).
 *
 * The two links are pinned as links/kprobe-multi-<set>-entry and -exit,
 * <set> a hash of the hook slots and functions they cover: a helper
 * started again takes them over only for the same set, since the programs
 * behind them know the slots by the configuration they were loaded with.
 */
#include "helper/kernel/probes_state.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "lib/log.h"
#include "bpf/vnfs.skel.h"

#define PIN_PREFIX "kprobe-multi-" /* bpffs refuses dots in names (EPERM) */

/* A kernel built with fprobe has the kprobe.multi link's type in its BTF;
 * one without refuses the link (EOPNOTSUPP) only once the programs are
 * loaded, a round too late. */
bool kprobe_multi_possible(const struct vnfs_probes *probes)
{
	return !probes->legacy_kernel && probes->kernel_btf.vmlinux &&
	       btf__find_by_name_kind(probes->kernel_btf.vmlinux, "bpf_kprobe_multi_link",
				      BTF_KIND_STRUCT) > 0;
}

/* The set: every function planned for kprobes. */
static bool in_the_set(const struct hook_state *state)
{
	return state->plan == VNFS_ATTACH_KPROBE;
}

/* The set's size and its hash, FNV-1a over "slot:function;" of each
 * function in it, kept for the pins' names. */
static size_t take_the_set(struct vnfs_probes *probes)
{
	uint64_t hash = 14695981039346656037ull;
	size_t count = 0;
	char text[96];

	for (size_t i = 0; i < probes->hook_count; i++) {
		if (!in_the_set(&probes->hooks[i]))
			continue;
		count++;
		snprintf(text, sizeof(text), "%zu:%s;", i, probes->hooks[i].hook->function);
		for (const char *c = text; *c; c++)
			hash = (hash ^ (unsigned char)*c) * 1099511628211ull;
	}
	probes->kprobe_multi_set = hash;
	return count;
}

/* links/kprobe-multi-<set>-<end> */
static int pin_path(char *buffer, size_t size, const struct vnfs_probes *probes, const char *end)
{
	char set[sizeof(PIN_PREFIX) + 16];

	snprintf(set, sizeof(set), PIN_PREFIX "%016" PRIx64, probes->kprobe_multi_set);
	return pins_link_path(buffer, size, probes->pin_dir, set, end);
}

static const char *const pin_ends[KPROBE_MULTI_LINKS] = {
	[KPROBE_MULTI_ENTRY] = "entry",
	[KPROBE_MULTI_EXIT] = "exit",
};

void kprobe_multi_prepare(struct vnfs_probes *probes)
{
	bool wanted = probes->kprobe_multi && !probes->kprobe_multi_links[KPROBE_MULTI_ENTRY] && take_the_set(probes) > 0;

	bpf_program__set_autoload(probes->skeleton->progs.kprobe_multi_entry, wanted);
	bpf_program__set_autoload(probes->skeleton->progs.kretprobe_multi_exit, wanted);
}

/* The refused program is one of the two (or one libbpf did not name, with
 * the two in the load): the functions go back to a pair each.  Returns false
 * for any other name. */
bool kprobe_multi_refused(struct vnfs_probes *probes, const char *program, int result)
{
	if (!probes->kprobe_multi ||
	    !bpf_program__autoload(probes->skeleton->progs.kprobe_multi_entry) ||
	    (program[0] && strcmp(program, "kprobe_multi_entry") != 0 &&
	     strcmp(program, "kretprobe_multi_exit") != 0))
		return false;
	vnfs_warning("the kernel refused %s (%s): a kprobe pair for each function instead",
		     program[0] ? program : "a program libbpf did not name", strerror(-result));
	probes->kprobe_multi = false;
	return true;
}

static void mark_attached(struct vnfs_probes *probes, bool reused)
{
	for (size_t i = 0; i < probes->hook_count; i++) {
		struct hook_state *state = &probes->hooks[i];

		if (!in_the_set(state))
			continue;
		state->method = VNFS_ATTACH_KPROBE;
		state->at_once = true;
		state->reused = reused;
		if (reused)
			state->plan = VNFS_ATTACH_NONE; /* nothing left to load or attach */
	}
	probes->kprobe_multi_reused = reused;
}

/* struct bpf_link_info as a kprobe.multi link fills it (uapi/linux/bpf.h:
 * addrs 6.6, cookies 6.9), which the build's kernel headers may predate:
 * the union after the three ids is 8-byte aligned. */
struct kprobe_multi_link_info {
	__u32 type;
	__u32 id;
	__u32 prog_id;
	__u64 addresses __attribute__((aligned(8))); /* where the kernel writes them */
	__u32 count;
	__u32 flags;
	__u64 missed;
	__u64 cookies; /* where the kernel writes them */
};
_Static_assert(offsetof(struct kprobe_multi_link_info, addresses) == 16 &&
		       offsetof(struct kprobe_multi_link_info, cookies) == 40,
	       "struct bpf_link_info's kprobe_multi layout");

/* The exit link for the functions the entry link found: by the addresses
 * the kernel reports for it, with their cookies (6.9 on), which spares the
 * kernel a second walk of every kernel and module symbol to find them by
 * name (170 ms of a start in the instruction-clock guest); by name where it
 * reports none. */
static struct bpf_link *attach_exits(struct vnfs_probes *probes, const struct bpf_link *entry,
				     struct bpf_kprobe_multi_opts *options)
{
	struct kprobe_multi_link_info info;
	__u64 addresses[VNFS_MAX_HOOKS], cookies[VNFS_MAX_HOOKS];
	unsigned long found[VNFS_MAX_HOOKS];
	__u32 length = sizeof(info);
	bool all = true;

	memset(&info, 0, sizeof(info));
	memset(addresses, 0, sizeof(addresses));
	info.addresses = (uintptr_t)addresses;
	info.cookies = (uintptr_t)cookies;
	info.count = options->cnt;
	if (bpf_obj_get_info_by_fd(bpf_link__fd(entry), &info, &length) == 0 &&
	    info.type == BPF_LINK_TYPE_KPROBE_MULTI && info.count == options->cnt) {
		for (size_t i = 0; i < options->cnt; i++) {
			found[i] = addresses[i];
			all = all && addresses[i] != 0 && cookies[i] < VNFS_MAX_HOOKS;
		}
		if (all) {
			options->syms = NULL;
			options->addrs = found;
			options->cookies = cookies;
		}
	}
	options->retprobe = true;
	return bpf_program__attach_kprobe_multi_opts(probes->skeleton->progs.kretprobe_multi_exit,
						     NULL, options);
}

/* Returns false when the kernel refused the links: the functions then take
 * a kprobe pair each, in another round. */
bool kprobe_multi_attach(struct vnfs_probes *probes)
{
	LIBBPF_OPTS(bpf_kprobe_multi_opts, options);
	const char *functions[VNFS_MAX_HOOKS];
	__u64 slots[VNFS_MAX_HOOKS];
	struct bpf_link *entry = NULL, *exit = NULL;
	struct timespec started, finished;
	size_t count = 0;

	if (!probes->kprobe_multi || probes->kprobe_multi_links[KPROBE_MULTI_ENTRY])
		return true;
	for (size_t i = 0; i < probes->hook_count; i++) {
		if (!in_the_set(&probes->hooks[i]))
			continue;
		functions[count] = probes->hooks[i].hook->function;
		slots[count++] = i;
	}
	if (count == 0)
		return true;
	take_the_set(probes);
	clock_gettime(CLOCK_MONOTONIC, &started);
	options.syms = functions;
	options.cookies = slots;
	options.cnt = count;
	entry = bpf_program__attach_kprobe_multi_opts(probes->skeleton->progs.kprobe_multi_entry,
						      NULL, &options);
	if (entry)
		exit = attach_exits(probes, entry, &options);
	if (!entry || !exit) {
		vnfs_warning("the kernel refused to attach the %zu kprobed functions at once (%s): "
			     "a kprobe pair for each instead", count, strerror(errno));
		bpf_link__destroy(entry);
		probes->kprobe_multi = false;
		return false;
	}
	probes->kprobe_multi_links[KPROBE_MULTI_ENTRY] = entry;
	probes->kprobe_multi_links[KPROBE_MULTI_EXIT] = exit;
	mark_attached(probes, false);
	clock_gettime(CLOCK_MONOTONIC, &finished);
	vnfs_info("kprobes: %zu functions attached at once (kprobe.multi) in %.0f ms", count,
		  (finished.tv_sec - started.tv_sec) * 1e3 +
			  (finished.tv_nsec - started.tv_nsec) / 1e6);
	return true;
}

/* Lets the links go; detach removes their pins too. */
void kprobe_multi_release(struct vnfs_probes *probes, bool detach)
{
	char path[PATH_MAX];

	for (int i = 0; i < KPROBE_MULTI_LINKS; i++) {
		if (!probes->kprobe_multi_links[i])
			continue;
		if (detach && probes->pin && pin_path(path, sizeof(path), probes, pin_ends[i]) == 0)
			unlink(path);
		bpf_link__destroy(probes->kprobe_multi_links[i]);
		probes->kprobe_multi_links[i] = NULL;
	}
	for (size_t i = 0; i < probes->hook_count; i++)
		if (probes->hooks[i].at_once) {
			probes->hooks[i].at_once = false;
			probes->hooks[i].method = VNFS_ATTACH_NONE;
			probes->hooks[i].reused = false;
		}
	probes->kprobe_multi_reused = false;
}

/* Before the first round: a previous helper's links for the same set are
 * taken over (the set's functions then need no attach), any other set's
 * removed, which detaches them. */
void kprobe_multi_reuse_pinned(struct vnfs_probes *probes)
{
	char entry_path[PATH_MAX], exit_path[PATH_MAX];
	struct bpf_link *entry, *exit;

	if (!probes->kprobe_multi || take_the_set(probes) == 0 ||
	    pin_path(entry_path, sizeof(entry_path), probes, pin_ends[KPROBE_MULTI_ENTRY]) != 0 ||
	    pin_path(exit_path, sizeof(exit_path), probes, pin_ends[KPROBE_MULTI_EXIT]) != 0)
		return;
	entry = bpf_link__open(entry_path);
	exit = bpf_link__open(exit_path);
	if (entry && exit) {
		probes->kprobe_multi_links[KPROBE_MULTI_ENTRY] = entry;
		probes->kprobe_multi_links[KPROBE_MULTI_EXIT] = exit;
		mark_attached(probes, true);
		return;
	}
	bpf_link__destroy(entry);
	bpf_link__destroy(exit);
}

/* Whether a pinned link is this start's pair (kept); another set's goes
 * with the other pins of functions no longer hooked so. */
bool kprobe_multi_pin_named(const struct vnfs_probes *probes, const char *name)
{
	char path[PATH_MAX];

	for (int i = 0; i < KPROBE_MULTI_LINKS && probes->kprobe_multi_links[i]; i++)
		if (pin_path(path, sizeof(path), probes, pin_ends[i]) == 0 &&
		    strcmp(strrchr(path, '/') + 1, name) == 0)
			return true;
	return false;
}

/* After a start: the links attached now pinned. */
void kprobe_multi_pin(struct vnfs_probes *probes)
{
	char path[PATH_MAX];

	if (!probes->kprobe_multi_links[KPROBE_MULTI_ENTRY] || probes->kprobe_multi_reused)
		return;
	for (int i = 0; i < KPROBE_MULTI_LINKS; i++)
		if (pin_path(path, sizeof(path), probes, pin_ends[i]) != 0 ||
		    bpf_link__pin(probes->kprobe_multi_links[i], path) != 0) {
			vnfs_warning("cannot pin the kprobes attached at once (%s): a restart of "
				     "the helper will miss their calls while it is down",
				     strerror(errno));
			return;
		}
}
