/*
 * core_btf.h — the BTF libbpf relocates the probes against: the few kernel
 * types their CO-RE relocations are rooted at (bpf/core_type_names.c lists
 * them at build time), copied out of the running kernel's BTF, in memory.
 *
 * Why: libbpf looks for each relocated type by walking every type of
 * vmlinux's BTF (100,000 and more), and, for a module's type, loads every
 * module's BTF and walks each.  The probes relocate 26 types; under
 * emulation that was about 0.2 s of the helper's start.  Given this BTF
 * (libbpf's btf_custom_path), libbpf walks a few hundred types instead.
 *
 * What the copy keeps is what relocating against it reads: each named
 * type whole (members, their offsets and bitfields, enum values, sizes)
 * and, recursively, what its members embed; a pointer member becomes a
 * pointer to void, as libbpf only checks that a pointer is one.  Where
 * libbpf would look, it looks the same way: vmlinux first, the modules
 * (here the NFS client's and sunrpc) for a name vmlinux lacks.
 */
#ifndef VNFS_CORE_BTF_H
#define VNFS_CORE_BTF_H

#include <stddef.h>

#include "helper/kernel/kernel_btf.h"

struct core_btf {
	int fd;         /* a memfd holding the BTF; -1: none */
	char path[32];  /* /proc/self/fd/N, for libbpf */
	size_t types;   /* how many types the copy has */
};

/* Writes the copy of the types names[] lists (sorted, as bpf/core_type_names
 * writes them) that kernel has.  Returns 0, or -1 with the reason in note;
 * core->fd is then -1 and libbpf searches the kernel's BTF itself. */
int core_btf_write(struct core_btf *core, const struct kernel_btf *kernel,
		   const char *const *names, size_t count, char *note, size_t note_size);
void core_btf_close(struct core_btf *core);

#endif /* VNFS_CORE_BTF_H */
