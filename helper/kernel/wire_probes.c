/*
 * wire_probes.c — the wire-level programs' life (bpf/wire.bpf.c): whether
 * this kernel can run them, loading them with the rest, attaching and
 * pinning their links, taking over a previous helper's.  RPCs per workload
 * are an addition: a kernel that cannot count them still counts every VFS
 * call, and says so once.
 */
#include "helper/kernel/probes_state.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>

#include "lib/log.h"
#include "bpf/vnfs.skel.h"

/* Each program with the name of its pin (links/wire-<name>). */
const char *const wire_pin_names[WIRE_PROGRAMS] = {
	[WIRE_NOTE_OPEN_CONTEXT] = "open-context",
	[WIRE_INITIATE_READ] = "initiate-read",
	[WIRE_INITIATE_WRITE] = "initiate-write",
	[WIRE_INITIATE_COMMIT] = "initiate-commit",
	[WIRE_TASK_BEGIN] = "task-begin",
	[WIRE_TASK_END] = "task-end",
};

#define WIRE_PIN_FUNCTION "wire"

/* Each program's section (bpf/wire.bpf.c) and the type that names its
 * target in the kernel's BTF: found with the hooked functions, in the same
 * pass (plan_hooks), and given to the kernel at load, as for the hooks
 * (libbpf would look each one up by name, walking vmlinux's BTF and then
 * loading and walking every module's: 0.35 s of the helper's start in the
 * guest).  A program whose section is not its entry's here is refused at
 * load. */
#define TRACEPOINT(name) { VNFS_TP_BTF_SECTION "/" #name, { "btf_trace_" #name, BTF_KIND_TYPEDEF } }
#define FUNCTION_EXIT(name) { VNFS_FEXIT_SECTION "/" #name, { #name, BTF_KIND_FUNC } }
static const struct wire_target {
	const char *section;
	struct kernel_wanted btf;
} wire_targets[WIRE_PROGRAMS] = {
	[WIRE_NOTE_OPEN_CONTEXT] = FUNCTION_EXIT(alloc_nfs_open_context),
	[WIRE_INITIATE_READ] = TRACEPOINT(nfs_initiate_read),
	[WIRE_INITIATE_WRITE] = TRACEPOINT(nfs_initiate_write),
	[WIRE_INITIATE_COMMIT] = TRACEPOINT(nfs_initiate_commit),
	[WIRE_TASK_BEGIN] = TRACEPOINT(rpc_task_begin),
	[WIRE_TASK_END] = TRACEPOINT(rpc_stats_latency),
};
#undef TRACEPOINT
#undef FUNCTION_EXIT

/* Each program as this round loads it: the open-context note on the kprobe
 * path when no function takes fentry (wire_probes_prepare). */
static struct bpf_program *wire_program(const struct vnfs_probes *probes, enum wire_program program)
{
	struct vnfs_bpf *skeleton = probes->skeleton;

	switch (program) {
	case WIRE_NOTE_OPEN_CONTEXT:
		return probes->wire_note_on_return ? skeleton->progs.wire_note_open_context_on_return
						   : skeleton->progs.wire_note_open_context;
	case WIRE_INITIATE_READ:
		return skeleton->progs.wire_initiate_read;
	case WIRE_INITIATE_WRITE:
		return skeleton->progs.wire_initiate_write;
	case WIRE_INITIATE_COMMIT:
		return skeleton->progs.wire_initiate_commit;
	case WIRE_TASK_BEGIN:
		return skeleton->progs.wire_task_begin;
	case WIRE_TASK_END:
		return skeleton->progs.wire_task_end;
	case WIRE_PROGRAMS:
		break;
	}
	return NULL;
}

/* The programs' targets are in the nfs and sunrpc modules' BTF: without
 * it (module BTF is 5.11's; the modules not loaded yet) they cannot load. */
bool wire_probes_possible(void)
{
	return access("/sys/kernel/btf/nfs", R_OK) == 0 &&
	       access("/sys/kernel/btf/sunrpc", R_OK) == 0;
}

/* Appends the programs' targets to wanted (room for WIRE_PROGRAMS);
 * returns how many. */
size_t wire_probes_wanted(const struct vnfs_probes *probes, struct kernel_wanted *wanted)
{
	if (!probes->count_wire)
		return 0;
	for (int i = 0; i < WIRE_PROGRAMS; i++)
		wanted[i] = wire_targets[i].btf;
	return WIRE_PROGRAMS;
}

/* Keeps where each target is (found[i] for wire_probes_wanted's i); a
 * kernel that lacks one counts no RPC per workload. */
void wire_probes_found(struct vnfs_probes *probes, const struct kernel_function *found)
{
	for (int i = 0; probes->count_wire && i < WIRE_PROGRAMS; i++) {
		if (!found[i].btf) {
			vnfs_warning("this kernel has no %s (the RPC counter %s's target): RPCs "
				     "are not counted per workload", wire_targets[i].btf.name,
				     wire_pin_names[i]);
			probes->count_wire = false;
			break;
		}
		probes->wire_targets[i].btf_id = found[i].id;
		probes->wire_targets[i].btf_object_fd = found[i].object_fd;
	}
}

/* For libbpf's prepare-load callback: the target of program, one of these,
 * for the kernel.  Returns 0, or -EINVAL for another program or one whose
 * target was not found. */
int wire_probes_set_target(const struct vnfs_probes *probes, const struct bpf_program *program,
			   struct bpf_prog_load_opts *options)
{
	const char *section = bpf_program__section_name(program);

	for (int i = 0; i < WIRE_PROGRAMS; i++) {
		if (wire_program(probes, i) != program)
			continue;
		if (strcmp(section, wire_targets[i].section) != 0) {
			vnfs_warning("the RPC counter %s is in section %s, not %s "
				     "(helper/kernel/wire_probes.c)", wire_pin_names[i], section,
				     wire_targets[i].section);
			return -EINVAL;
		}
		if (probes->wire_targets[i].btf_id == 0)
			return -EINVAL;
		options->attach_btf_id = probes->wire_targets[i].btf_id;
		options->attach_btf_obj_fd = probes->wire_targets[i].btf_object_fd;
		return 0;
	}
	return -EINVAL;
}

void wire_probes_prepare(struct vnfs_probes *probes, bool fentry_planned)
{
	/* With every function on kprobes, a fexit would be the helper's only
	 * BPF trampoline, which costs more to attach than a kretprobe (an
	 * ftrace update, as each kprobe is): the note takes the kprobe path's
	 * way too.  Where trampolines are made anyway, fexit costs less per
	 * open. */
	probes->wire_note_on_return = !fentry_planned;
	bpf_program__set_autoload(probes->skeleton->progs.wire_note_open_context, false);
	bpf_program__set_autoload(probes->skeleton->progs.wire_note_open_context_on_return, false);
	for (int i = 0; i < WIRE_PROGRAMS; i++)
		bpf_program__set_autoload(wire_program(probes, i),
					  probes->count_wire && !probes->wire_links[i]);
}

bool wire_probes_reused(const struct vnfs_probes *probes)
{
	for (int i = 0; i < WIRE_PROGRAMS; i++)
		if (!probes->wire_links[i])
			return false;
	return true;
}

void wire_probes_release(struct vnfs_probes *probes, bool detach)
{
	char path[PATH_MAX];

	for (int i = 0; i < WIRE_PROGRAMS; i++) {
		if (!probes->wire_links[i])
			continue;
		if (detach && probes->pin &&
		    pins_link_path(path, sizeof(path), probes->pin_dir, WIRE_PIN_FUNCTION,
				   wire_pin_names[i]) == 0)
			unlink(path);
		bpf_link__destroy(probes->wire_links[i]);
		probes->wire_links[i] = NULL;
	}
}

static struct bpf_link *attach_wire_program(struct vnfs_probes *probes, enum wire_program program)
{
	if (program == WIRE_NOTE_OPEN_CONTEXT && probes->wire_note_on_return)
		return kretprobe_attach(probes, wire_program(probes, program),
					wire_targets[program].btf.name, 0);
	return bpf_program__attach_trace(wire_program(probes, program));
}

/* Attached in the order an RPC meets them, its end last, so that no RPC
 * ends counted before its start was seen but the few already in flight
 * (counted as background). */
void wire_probes_attach(struct vnfs_probes *probes)
{
	char path[PATH_MAX];

	for (int i = 0; probes->count_wire && i < WIRE_PROGRAMS; i++) {
		if (probes->wire_links[i])
			continue; /* a previous helper's, pinned */
		probes->wire_links[i] = attach_wire_program(probes, i);
		if (!probes->wire_links[i]) {
			vnfs_warning("cannot attach the RPC counter %s (%s): RPCs are not counted "
				     "per workload", wire_pin_names[i], strerror(errno));
			probes->count_wire = false;
		} else if (probes->pin &&
			   (pins_link_path(path, sizeof(path), probes->pin_dir, WIRE_PIN_FUNCTION,
					   wire_pin_names[i]) != 0 ||
			    bpf_link__pin(probes->wire_links[i], path) != 0)) {
			vnfs_warning("cannot pin the RPC counter %s (%s): RPCs that end while "
				     "the helper restarts are not counted",
				     wire_pin_names[i], strerror(errno));
		}
	}
	if (!probes->count_wire)
		wire_probes_release(probes, true);
}

void wire_probes_reuse_pinned(struct vnfs_probes *probes)
{
	char path[PATH_MAX];

	for (int i = 0; i < WIRE_PROGRAMS; i++) {
		if (pins_link_path(path, sizeof(path), probes->pin_dir, WIRE_PIN_FUNCTION,
				   wire_pin_names[i]) != 0)
			continue;
		if (probes->count_wire)
			probes->wire_links[i] = bpf_link__open(path);
		else if (unlink(path) == 0)
			vnfs_info("removing the pinned link %s-%s: RPCs are not counted",
				  WIRE_PIN_FUNCTION, wire_pin_names[i]);
	}
}

bool wire_pin_named(const char *name)
{
	size_t length = strlen(WIRE_PIN_FUNCTION);

	if (strncmp(name, WIRE_PIN_FUNCTION "-", length + 1) != 0)
		return false;
	for (int i = 0; i < WIRE_PROGRAMS; i++)
		if (strcmp(name + length + 1, wire_pin_names[i]) == 0)
			return true;
	return false;
}
