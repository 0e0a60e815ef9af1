/*
 * kernel_btf.h — where the hooked NFS client functions, and the RPC
 * programs' targets, are in the running kernel's BTF: their prototypes (to
 * configure each hook) and the {BTF object, type id} pair the kernel wants
 * when an fentry/fexit or BTF tracepoint program is loaded for one of them.
 * The types the probes relocate against are copied from the same BTF
 * (core_btf.h).
 *
 * Used by the helper's loader (probes.c) and by the benchmark's loader, so
 * that both attach to the same functions the same way.
 */
#ifndef VNFS_KERNEL_BTF_H
#define VNFS_KERNEL_BTF_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#include "helper/kernel/hooks.h"

#define KERNEL_BTF_MAX_MODULES 16

struct btf;

/* vmlinux's BTF and that of every loaded NFS client module (nfs, nfsv3,
 * nfsv4, ...; not nfsd) and of sunrpc (whose types and tracepoints the RPC
 * programs read), each module with its kernel object's fd. */
struct kernel_btf {
	struct btf *vmlinux; /* NULL: the kernel has no BTF */
	struct btf *modules[KERNEL_BTF_MAX_MODULES];
	int module_fds[KERNEL_BTF_MAX_MODULES];
	size_t module_count;
	size_t nfs_client_modules; /* of module_count: the NFS client's */
};

struct kernel_function {
	const struct btf *btf; /* NULL: no BTF describes it */
	__u32 id;              /* its FUNC type in btf */
	int object_fd;         /* 0 for vmlinux, else the module's BTF fd */
};

/* Loads what the kernel has; a missing piece only means fewer functions
 * found.  Returns -1 (errno set) when the kernel has no BTF at all. */
int kernel_btf_load(struct kernel_btf *kernel);

/* A type wanted by name and kind: a function (BTF_KIND_FUNC) or a BTF
 * tracepoint ("btf_trace_<tracepoint>", BTF_KIND_TYPEDEF). */
struct kernel_wanted {
	const char *name;
	__u16 kind;
};

#define KERNEL_BTF_MAX_WANTED (VNFS_MAX_HOOKS + 16)

/* Fills found[i] for wanted[i], i < count (at most KERNEL_BTF_MAX_WANTED),
 * in one pass over each BTF: the modules' when the NFS client is a module,
 * else vmlinux's.  Returns true when some BTF describes the NFS client, so
 * that a function it lacks is truly absent from this kernel. */
bool kernel_btf_find_wanted(const struct kernel_btf *kernel, const struct kernel_wanted *wanted,
			    size_t count, struct kernel_function *found);
/* The hooked functions as wanted[i] for hooks[i] (FUNC types), i < count (at
 * most VNFS_MAX_HOOKS); returns how many. */
size_t kernel_btf_want_hooks(const struct vnfs_hook *hooks, size_t count,
			     struct kernel_wanted *wanted);
/* The same for the hooked functions: found[i] for hooks[i], i < count (at
 * most VNFS_MAX_HOOKS). */
bool kernel_btf_find(const struct kernel_btf *kernel, const struct vnfs_hook *hooks,
		     size_t count, struct kernel_function *found);

/* Frees the types but keeps the module fds, which attaching still needs
 * (found[].btf dangle after).  The parsed vmlinux BTF is several MiB, and
 * libbpf parses its own copy while it loads the programs: one at a time. */
void kernel_btf_drop_types(struct kernel_btf *kernel);
/* Frees the types and closes the module fds. */
void kernel_btf_free(struct kernel_btf *kernel);

/*
 * Derives how to read a hooked function's arguments and result from its
 * BTF prototype (FUNC type id in btf): which argument holds the object that
 * names the mount, the struct file or dentry, whether the result is void,
 * an int (32-bit or not) or a pointer.  Returns 0, or -1 with why the
 * prototype cannot be used in note ("no struct file * argument").
 */
int kernel_btf_hook_config(const struct vnfs_hook *hook, const struct btf *btf, __u32 id,
			   struct vnfs_hook_config *config, char *note, size_t note_size);

#endif /* VNFS_KERNEL_BTF_H */
