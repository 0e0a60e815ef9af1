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

static struct bpf_program *wire_program(struct vnfs_bpf *skeleton, enum wire_program program)
{
	switch (program) {
	case WIRE_NOTE_OPEN_CONTEXT:
		return skeleton->progs.wire_note_open_context;
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

void wire_probes_prepare(struct vnfs_probes *probes)
{
	for (int i = 0; i < WIRE_PROGRAMS; i++)
		bpf_program__set_autoload(wire_program(probes->skeleton, i),
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

/* Attached in the order an RPC meets them, its end last, so that no RPC
 * ends counted before its start was seen but the few already in flight
 * (counted as background). */
void wire_probes_attach(struct vnfs_probes *probes)
{
	char path[PATH_MAX];

	for (int i = 0; probes->count_wire && i < WIRE_PROGRAMS; i++) {
		if (probes->wire_links[i])
			continue; /* a previous helper's, pinned */
		probes->wire_links[i] = bpf_program__attach(wire_program(probes->skeleton, i));
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
