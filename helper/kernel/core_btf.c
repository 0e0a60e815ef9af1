/*
 * core_btf.c — the kernel types the probes' CO-RE relocations read, copied
 * into a BTF of their own (see core_btf.h).
 */
#include "helper/kernel/core_btf.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/btf.h>

/* Copies types from vmlinux and one module at a time into out, each once:
 * the ids already copied are kept per source id. */
struct copier {
	struct btf *out;
	__u32 vmlinux_count; /* ids below this are vmlinux's, in every source */
	__u32 *vmlinux_ids;  /* vmlinux id -> id in out; 0: not copied yet */
	__u32 *module_ids;   /* the module being read: id - vmlinux_count -> id in out */
	__u32 void_pointer;  /* out's `void *`; 0: not made yet */
};

static int copy_type(struct copier *copier, const struct btf *source, __u32 id);

static int copy_pointer(struct copier *copier)
{
	/* libbpf checks only that a pointer member is a pointer, whatever it
	 * points to: copying what it points to would copy half the kernel. */
	if (copier->void_pointer == 0) {
		int id = btf__add_ptr(copier->out, 0);

		if (id < 0)
			return id;
		copier->void_pointer = id;
	}
	return copier->void_pointer;
}

static int copy_array(struct copier *copier, const struct btf *source, const struct btf_type *type)
{
	const struct btf_array *array = btf_array(type);
	int element = copy_type(copier, source, array->type);
	int index = element < 0 ? element : copy_type(copier, source, array->index_type);

	return index < 0 ? index : btf__add_array(copier->out, index, element, array->nelems);
}

/* A struct or union: its members' types first, as btf__add_field() adds to
 * the type added last. */
static int copy_composite(struct copier *copier, const struct btf *source,
			  const struct btf_type *type, const char *name)
{
	const struct btf_member *member = btf_members(type);
	__u16 count = btf_vlen(type);
	int *member_types = calloc(count ? count : 1, sizeof(*member_types));
	int id = -ENOMEM;

	if (!member_types)
		return -ENOMEM;
	for (__u16 i = 0; i < count; i++) {
		member_types[i] = copy_type(copier, source, member[i].type);
		if (member_types[i] < 0) {
			id = member_types[i];
			goto out;
		}
	}
	id = btf_is_struct(type) ? btf__add_struct(copier->out, name, type->size)
				 : btf__add_union(copier->out, name, type->size);
	for (__u16 i = 0; i < count && id >= 0; i++) {
		int status = btf__add_field(copier->out, btf__name_by_offset(source, member[i].name_off),
					    member_types[i], btf_member_bit_offset(type, i),
					    btf_member_bitfield_size(type, i));
		if (status < 0)
			id = status;
	}
out:
	free(member_types);
	return id;
}

static int copy_enum(struct copier *copier, const struct btf *source, const struct btf_type *type,
		     const char *name)
{
	int id = btf_is_enum(type) ? btf__add_enum(copier->out, name, type->size)
				   : btf__add_enum64(copier->out, name, type->size, btf_kflag(type));

	for (__u16 i = 0; i < btf_vlen(type) && id >= 0; i++) {
		int status;

		if (btf_is_enum(type)) {
			const struct btf_enum *value = &btf_enum(type)[i];
			__s64 number = btf_kflag(type) ? (__s64)value->val : (__s64)(__u32)value->val;

			status = btf__add_enum_value(copier->out,
						     btf__name_by_offset(source, value->name_off), number);
		} else {
			const struct btf_enum64 *value = &btf_enum64(type)[i];

			status = btf__add_enum64_value(copier->out,
						       btf__name_by_offset(source, value->name_off),
						       btf_enum64_value(value));
		}
		if (status < 0)
			id = status;
	}
	return id;
}

static int copy_kind(struct copier *copier, const struct btf *source, const struct btf_type *type)
{
	const char *name = btf__name_by_offset(source, type->name_off);
	int target;

	switch (btf_kind(type)) {
	case BTF_KIND_INT:
		return btf__add_int(copier->out, name, type->size, btf_int_encoding(type));
	case BTF_KIND_FLOAT:
		return btf__add_float(copier->out, name, type->size);
	case BTF_KIND_PTR:
		return copy_pointer(copier);
	case BTF_KIND_ARRAY:
		return copy_array(copier, source, type);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return copy_composite(copier, source, type, name);
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		return copy_enum(copier, source, type, name);
	case BTF_KIND_FWD:
		return btf__add_fwd(copier->out, name, btf_kflag(type) ? BTF_FWD_UNION : BTF_FWD_STRUCT);
	case BTF_KIND_TYPEDEF:
		target = copy_type(copier, source, type->type);
		return target < 0 ? target : btf__add_typedef(copier->out, name, target);
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
		/* libbpf skips modifiers on both sides. */
		return copy_type(copier, source, type->type);
	default:
		/* A function, variable or section: no member or typedef is one. */
		return -EINVAL;
	}
}

/* Returns the copy's id of source's type id, copying it the first time. */
static int copy_type(struct copier *copier, const struct btf *source, __u32 id)
{
	const struct btf_type *type;
	__u32 *copied;
	int result;

	if (id == 0)
		return 0; /* void */
	copied = id < copier->vmlinux_count ? &copier->vmlinux_ids[id]
					     : &copier->module_ids[id - copier->vmlinux_count];
	if (*copied)
		return *copied;
	type = btf__type_by_id(source, id);
	if (!type)
		return -EINVAL;
	result = copy_kind(copier, source, type);
	if (result > 0)
		*copied = result;
	return result;
}

/* The index in names[] of name's essential part ("rpc_task" of
 * "rpc_task___new"), or -1. */
static long find_name(const char *name, const char *const *names, size_t count)
{
	const char *flavour = strstr(name, "___");
	size_t length = flavour ? (size_t)(flavour - name) : strlen(name);
	size_t low = 0, high = count;

	while (low < high) {
		size_t middle = low + (high - low) / 2;
		int order = strncmp(name, names[middle], length);

		if (order == 0 && names[middle][length] != '\0')
			order = -1; /* names[middle] is longer: it sorts after */
		if (order == 0)
			return (long)middle;
		if (order < 0)
			high = middle;
		else
			low = middle + 1;
	}
	return -1;
}

static bool is_named_kind(const struct btf_type *type)
{
	return type->name_off != 0 && (btf_is_composite(type) || btf_is_any_enum(type) ||
				       btf_is_typedef(type) || btf_is_fwd(type) ||
				       btf_is_int(type) || btf_is_float(type));
}

/* Copies source's types from first_id on whose names are listed, but for
 * those skip[] marks; marks each name copied in found[] if given.  Returns
 * 0 or a negative error. */
static int copy_named(struct copier *copier, const struct btf *source, __u32 first_id,
		      const char *const *names, size_t count, const bool *skip, bool *found)
{
	__u32 type_count = btf__type_cnt(source);

	for (__u32 id = first_id; id < type_count; id++) {
		const struct btf_type *type = btf__type_by_id(source, id);
		long index;
		int copied;

		if (!is_named_kind(type))
			continue;
		index = find_name(btf__name_by_offset(source, type->name_off), names, count);
		if (index < 0 || (skip && skip[index]))
			continue;
		copied = copy_type(copier, source, id);
		if (copied < 0)
			return copied;
		if (found)
			found[index] = true;
	}
	return 0;
}

/* The types of a module's BTF for the names vmlinux lacks, as libbpf
 * looks in modules only for those. */
static int copy_from_module(struct copier *copier, const struct btf *module,
			    const char *const *names, size_t count, const bool *in_vmlinux)
{
	__u32 own = btf__type_cnt(module) - copier->vmlinux_count;
	int status;

	copier->module_ids = calloc(own ? own : 1, sizeof(*copier->module_ids));
	if (!copier->module_ids)
		return -ENOMEM;
	status = copy_named(copier, module, copier->vmlinux_count, names, count, in_vmlinux, NULL);
	free(copier->module_ids);
	copier->module_ids = NULL;
	return status;
}

/* vmlinux's types of the names listed, then the modules' (the NFS client's
 * and sunrpc) of the names vmlinux lacks. */
static int copy_all(struct copier *copier, const struct kernel_btf *kernel,
		    const char *const *names, size_t count, bool *in_vmlinux)
{
	int status = copy_named(copier, kernel->vmlinux, 1, names, count, NULL, in_vmlinux);

	for (size_t i = 0; i < kernel->module_count && status == 0; i++)
		status = copy_from_module(copier, kernel->modules[i], names, count, in_vmlinux);
	return status;
}

/* The copy's bytes into a memfd, named for libbpf by core->path. */
static int write_memfd(struct core_btf *core, const struct btf *copy, char *note, size_t note_size)
{
	__u32 size = 0;
	const void *data = btf__raw_data(copy, &size);
	int fd;

	if (!data) {
		snprintf(note, note_size, "cannot encode the copy: %s", strerror(errno));
		return -1;
	}
	fd = memfd_create("vnfs-core-btf", MFD_CLOEXEC);
	if (fd < 0) {
		snprintf(note, note_size, "memfd_create: %s", strerror(errno));
		return -1;
	}
	for (__u32 written = 0; written < size;) {
		ssize_t result = write(fd, (const char *)data + written, size - written);

		if (result < 0 && errno == EINTR)
			continue;
		if (result <= 0) {
			snprintf(note, note_size, "cannot write the copy: %s", strerror(errno));
			close(fd);
			return -1;
		}
		written += result;
	}
	core->fd = fd;
	snprintf(core->path, sizeof(core->path), "/proc/self/fd/%d", fd);
	return 0;
}

int core_btf_write(struct core_btf *core, const struct kernel_btf *kernel,
		   const char *const *names, size_t count, char *note, size_t note_size)
{
	struct copier copier = { 0 };
	bool *in_vmlinux = NULL;
	int status = -1;

	memset(core, 0, sizeof(*core));
	core->fd = -1;
	if (!kernel->vmlinux) {
		snprintf(note, note_size, "the kernel has no BTF");
		return -1;
	}
	copier.vmlinux_count = btf__type_cnt(kernel->vmlinux);
	copier.vmlinux_ids = calloc(copier.vmlinux_count, sizeof(*copier.vmlinux_ids));
	copier.out = btf__new_empty();
	in_vmlinux = calloc(count ? count : 1, sizeof(*in_vmlinux));
	if (!copier.vmlinux_ids || !copier.out || !in_vmlinux) {
		snprintf(note, note_size, "out of memory");
		goto out;
	}
	status = copy_all(&copier, kernel, names, count, in_vmlinux);
	if (status < 0) {
		snprintf(note, note_size, "cannot copy a type: %s", strerror(-status));
		status = -1;
		goto out;
	}
	status = write_memfd(core, copier.out, note, note_size);
	if (status == 0)
		core->types = btf__type_cnt(copier.out) - 1;
out:
	btf__free(copier.out);
	free(copier.vmlinux_ids);
	free(in_vmlinux);
	return status;
}

void core_btf_close(struct core_btf *core)
{
	if (core->fd >= 0)
		close(core->fd);
	core->fd = -1;
	core->path[0] = '\0';
}
