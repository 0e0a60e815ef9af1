/*
 * kernel_btf.c — finds the hooked functions and the RPC programs' targets
 * in the kernel's BTF (see kernel_btf.h).
 *
 * Why not libbpf's lookup by name: bpf_program__set_attach_target() and the
 * loader's own resolution scan vmlinux's 100,000+ types linearly for every
 * program, then every module's; under emulation that was about 330 ms per
 * program, most of the helper's start-up.  Here each BTF is walked once and
 * each FUNC or TYPEDEF name is looked up among the sorted wanted names.
 */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>

#include "helper/kernel/kernel_btf.h"
#include "lib/log.h"

/* Which of the kernel's BTF objects are read here. */
enum module_role { MODULE_UNUSED, MODULE_NFS_CLIENT, MODULE_SUNRPC };

/* BTF object `id`'s fd, and its role; -1 for an object of no use here. */
static int module_fd(__u32 id, enum module_role *role)
{
	struct bpf_btf_info info;
	__u32 length = sizeof(info);
	char name[64] = "";
	int fd = bpf_btf_get_fd_by_id(id);

	*role = MODULE_UNUSED;
	if (fd < 0)
		return -1;
	memset(&info, 0, sizeof(info));
	info.name = (__u64)(uintptr_t)name;
	info.name_len = sizeof(name);
	if (bpf_obj_get_info_by_fd(fd, &info, &length) == 0 && info.kernel_btf) {
		if (strncmp(name, "nfs", 3) == 0 && strcmp(name, "nfsd") != 0)
			*role = MODULE_NFS_CLIENT;
		else if (strcmp(name, "sunrpc") == 0)
			*role = MODULE_SUNRPC;
	}
	if (*role == MODULE_UNUSED) {
		close(fd);
		return -1;
	}
	return fd;
}

int kernel_btf_load(struct kernel_btf *kernel)
{
	__u32 id = 0;

	memset(kernel, 0, sizeof(*kernel));
	kernel->vmlinux = btf__load_vmlinux_btf();
	if (!kernel->vmlinux)
		return -1;
	while (kernel->module_count < KERNEL_BTF_MAX_MODULES && bpf_btf_get_next_id(id, &id) == 0) {
		enum module_role role;
		int fd = module_fd(id, &role);
		struct btf *module;

		if (fd < 0)
			continue;
		module = btf__load_from_kernel_by_id_split(id, kernel->vmlinux);
		if (!module) {
			close(fd);
			continue;
		}
		kernel->modules[kernel->module_count] = module;
		kernel->module_fds[kernel->module_count++] = fd;
		if (role == MODULE_NFS_CLIENT)
			kernel->nfs_client_modules++;
	}
	return 0;
}

void kernel_btf_drop_types(struct kernel_btf *kernel)
{
	/* Split module BTFs refer to vmlinux's: they go first. */
	for (size_t i = 0; i < kernel->module_count; i++) {
		btf__free(kernel->modules[i]);
		kernel->modules[i] = NULL;
	}
	btf__free(kernel->vmlinux);
	kernel->vmlinux = NULL;
}

void kernel_btf_free(struct kernel_btf *kernel)
{
	kernel_btf_drop_types(kernel);
	for (size_t i = 0; i < kernel->module_count; i++)
		close(kernel->module_fds[i]);
	memset(kernel, 0, sizeof(*kernel));
}

struct wanted {
	const char *name;
	__u16 kind;
	size_t index;
};

static int compare_wanted(const void *left, const void *right)
{
	return strcmp(((const struct wanted *)left)->name, ((const struct wanted *)right)->name);
}

/* Marks the wanted types btf defines, looking at its types from first_id on
 * (for a module: its own, not vmlinux's). */
static size_t find_in(const struct btf *btf, __u32 first_id, int object_fd,
		      const struct wanted *sorted, size_t count, struct kernel_function *found)
{
	__u32 type_count = btf__type_cnt(btf);
	size_t matched = 0;

	for (__u32 id = first_id; id < type_count; id++) {
		const struct btf_type *type = btf__type_by_id(btf, id);
		struct wanted key, *match;

		if (!btf_is_func(type) && !btf_is_typedef(type))
			continue;
		key.name = btf__name_by_offset(btf, type->name_off);
		if (!key.name)
			continue;
		match = bsearch(&key, sorted, count, sizeof(*sorted), compare_wanted);
		if (!match || match->kind != btf_kind(type) || found[match->index].btf)
			continue;
		found[match->index] = (struct kernel_function){
			.btf = btf, .id = id, .object_fd = object_fd,
		};
		matched++;
	}
	return matched;
}

bool kernel_btf_find_wanted(const struct kernel_btf *kernel, const struct kernel_wanted *wanted,
			    size_t count, struct kernel_function *found)
{
	struct wanted sorted[KERNEL_BTF_MAX_WANTED];
	size_t matched = 0;

	if (count > KERNEL_BTF_MAX_WANTED)
		count = KERNEL_BTF_MAX_WANTED;
	memset(found, 0, count * sizeof(*found));
	if (!kernel->vmlinux)
		return false;
	for (size_t i = 0; i < count; i++)
		sorted[i] = (struct wanted){ .name = wanted[i].name, .kind = wanted[i].kind, .index = i };
	qsort(sorted, count, sizeof(sorted[0]), compare_wanted);
	/* A modular NFS client is described by its modules (and sunrpc's)
	 * only. */
	for (size_t i = 0; i < kernel->module_count; i++)
		matched += find_in(kernel->modules[i], btf__type_cnt(kernel->vmlinux),
				   kernel->module_fds[i], sorted, count, found);
	if (kernel->nfs_client_modules > 0)
		return true;
	matched += find_in(kernel->vmlinux, 1, 0, sorted, count, found);
	return matched > 0;
}

size_t kernel_btf_want_hooks(const struct vnfs_hook *hooks, size_t count,
			     struct kernel_wanted *wanted)
{
	if (count > VNFS_MAX_HOOKS)
		count = VNFS_MAX_HOOKS;
	for (size_t i = 0; i < count; i++)
		wanted[i] = (struct kernel_wanted){ .name = hooks[i].function, .kind = BTF_KIND_FUNC };
	return count;
}

bool kernel_btf_find(const struct kernel_btf *kernel, const struct vnfs_hook *hooks,
		     size_t count, struct kernel_function *found)
{
	struct kernel_wanted wanted[VNFS_MAX_HOOKS];

	count = kernel_btf_want_hooks(hooks, count, wanted);
	return kernel_btf_find_wanted(kernel, wanted, count, found);
}

static const struct btf_type *skip_modifiers(const struct btf *btf, __u32 id)
{
	const struct btf_type *type = btf__type_by_id(btf, id);

	while (type && (btf_is_mod(type) || btf_is_typedef(type)))
		type = btf__type_by_id(btf, type->type);
	return type;
}

/* The struct name a parameter points to ("kiocb"), or NULL. */
static const char *pointed_struct_name(const struct btf *btf, __u32 type_id)
{
	const struct btf_type *type = skip_modifiers(btf, type_id);

	if (!type || !btf_is_ptr(type))
		return NULL;
	type = skip_modifiers(btf, type->type);
	if (!type || !btf_is_struct(type))
		return NULL;
	return btf__name_by_offset(btf, type->name_off);
}

/* How the exit reads the prototype's result (config->result_kind, and the
 * 32-bit flag for an int); -1 for a result it cannot read. */
static int set_result_kind(const struct btf *btf, const struct btf_type *prototype,
			   struct vnfs_hook_config *config)
{
	const struct btf_type *result;

	if (prototype->type == 0) {
		config->result_kind = VNFS_RESULT_VOID;
		return 0;
	}
	result = skip_modifiers(btf, prototype->type);
	if (result && btf_is_ptr(result)) {
		config->result_kind = VNFS_RESULT_POINTER;
		return 0;
	}
	if (result && (btf_is_int(result) || btf_is_any_enum(result))) {
		config->result_kind = VNFS_RESULT_INT;
		if (result->size == 4)
			config->flags |= VNFS_HOOK_RESULT_32BIT;
		return 0;
	}
	return -1;
}

/* Where a prototype takes the pointers a hook may read: the first argument
 * of each struct, -1 where it has none. */
struct pointer_arguments {
	int object; /* struct <object_struct> *, when the hook names one */
	int file;
	int dentry;
};

static struct pointer_arguments find_pointer_arguments(const struct btf *btf,
							const struct btf_type *prototype,
							const char *object_struct)
{
	const struct btf_param *parameters = btf_params(prototype);
	struct pointer_arguments found = { -1, -1, -1 };

	for (int i = 0; i < btf_vlen(prototype); i++) {
		const char *name = pointed_struct_name(btf, parameters[i].type);

		if (!name)
			continue;
		if (object_struct && found.object < 0 && strcmp(name, object_struct) == 0)
			found.object = i;
		if (found.file < 0 && strcmp(name, "file") == 0)
			found.file = i;
		if (found.dentry < 0 && strcmp(name, "dentry") == 0)
			found.dentry = i;
	}
	return found;
}

/* The argument places the hook's flags need, into config; -1 with note
 * when the prototype lacks one the hook cannot count without. */
static int place_arguments(const struct vnfs_hook *hook, struct pointer_arguments found,
			   struct vnfs_hook_config *config, char *note, size_t note_size)
{
	const char *wanted = vnfs_object_struct_name(hook->object_kind);

	if (hook->flags & (VNFS_HOOK_COUNT_IF_OPENED | VNFS_HOOK_COUNT_IF_CREATED)) {
		if (found.file < 0) {
			snprintf(note, note_size, "no struct file * argument");
			return -1;
		}
		config->file_argument = found.file;
	}
	if (hook->flags & VNFS_HOOK_NEGATIVE_IS_ERROR) {
		if (found.dentry < 0) {
			snprintf(note, note_size, "no struct dentry * argument");
			return -1;
		}
		/* nfs_lookup(dir, dentry, unsigned int flags): the flags follow
		 * the dentry in every version so far. */
		config->file_argument = found.dentry;
		config->lookup_flags_argument = found.dentry + 1;
	}
	if ((hook->flags & VNFS_HOOK_BYTES_FROM_OBJECT) && (!wanted || found.object < 0)) {
		snprintf(note, note_size, "no struct %s * argument for its bytes",
			 wanted ? wanted : "?");
		return -1;
	}
	if (wanted && found.object < 0) {
		/* Still counted, only without its mount. */
		vnfs_warning("%s: no struct %s * argument: its calls count without their mount",
			     hook->function, wanted);
		config->object_kind = VNFS_OBJECT_NONE;
	} else if (wanted) {
		config->object_argument = found.object;
	}
	if (hook->flags & VNFS_HOOK_BYTES_FROM_PAGES)
		config->file_argument = hook->fallback_file_argument; /* the one prototype it had */
	return 0;
}

int kernel_btf_hook_config(const struct vnfs_hook *hook, const struct btf *btf, __u32 id,
			   struct vnfs_hook_config *config, char *note, size_t note_size)
{
	const struct btf_type *function = btf__type_by_id(btf, id);
	const struct btf_type *prototype;

	prototype = function ? btf__type_by_id(btf, function->type) : NULL;
	if (!prototype || !btf_is_func_proto(prototype)) {
		snprintf(note, note_size, "its BTF has no prototype");
		return -1;
	}
	config->operation = hook->operation;
	config->flags = hook->flags;
	config->object_kind = hook->object_kind;
	if (set_result_kind(btf, prototype, config) != 0) {
		snprintf(note, note_size, "its result type is not supported");
		return -1;
	}
	return place_arguments(hook,
			       find_pointer_arguments(btf, prototype,
						      vnfs_object_struct_name(hook->object_kind)),
			       config, note, note_size);
}
