/*
 * hooks.h — the kernel NFS client functions vnfs hooks, one table.
 *
 * Each entry names a function, the operation its calls count as, the kind of
 * object among its arguments that identifies the mount, and how its result is
 * read.  The argument positions are found at start-up in the function's BTF
 * prototype (helper/kernel/probes.c), so a signature change between kernels does
 * not shift them; the positions here are Linux 6.1's and are used only on
 * the kprobe path when the running kernel has no BTF for the function.
 */
#ifndef VNFS_HOOKS_H
#define VNFS_HOOKS_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/vnfs.h"

struct vnfs_hook {
	const char *function;
	enum vnfs_operation operation;
	enum vnfs_object_kind object_kind;
	uint32_t flags;                  /* VNFS_HOOK_* (not RESULT_32BIT: from BTF) */
	uint8_t fallback_object_argument; /* Linux 6.1 prototype, for kernels */
	uint8_t fallback_file_argument;   /* without BTF for the function */
	enum vnfs_result_kind fallback_result_kind;
	bool fallback_result_32bit;
	/* Its first argument is the mount's idmap (struct user_namespace * from
	 * Linux 5.12, struct mnt_idmap * from 6.3): before 5.12, where the
	 * fallback serves (no BTF for modules before 5.11), every argument sits
	 * one place earlier. */
	bool fallback_idmap_first;
};

extern const struct vnfs_hook vnfs_hooks[];
extern const size_t vnfs_hook_count;

/* The C name of the struct an object kind points to ("kiocb"), or NULL. */
const char *vnfs_object_struct_name(enum vnfs_object_kind kind);

/* The configuration of a hook from its table row's fallback (the Linux 6.1
 * prototype, or the one before 5.12 when before_idmaps), for a kernel whose
 * BTF does not describe the function. */
void vnfs_hook_fallback_config(const struct vnfs_hook *hook, bool before_idmaps,
			       struct vnfs_hook_config *config);

#endif /* VNFS_HOOKS_H */
