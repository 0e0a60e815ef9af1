/*
 * test_core_btf.c — the copy of the kernel types the probes relocate
 * against (helper/kernel/core_btf.c), made from the build machine's own
 * kernel BTF (/sys/kernel/btf/vmlinux: this test fails without it).
 *
 * Every type the probes' relocations name must come out with the layout
 * libbpf reads (sizes, members, their offsets and bitfields, enum values,
 * what members embed), pointers as pointers to void, and nothing else of
 * the kernel's.  The guest suites relocate the real probes against it and
 * count every call exactly (probes.sh, helper.sh, wire.sh).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <bpf/btf.h>

#include "helper/kernel/core_btf.h"
#include "bpf/vnfs.core_types.h"

#define NAME_COUNT (sizeof(vnfs_bpf_core_types) / sizeof(*vnfs_bpf_core_types))

static __u32 skip_modifiers(const struct btf *btf, __u32 id)
{
	const struct btf_type *type = btf__type_by_id(btf, id);

	while (id != 0 && btf_is_mod(type)) {
		id = type->type;
		type = btf__type_by_id(btf, id);
	}
	return id;
}

static const char *name_of(const struct btf *btf, const struct btf_type *type)
{
	return btf__name_by_offset(btf, type->name_off);
}

/* Asserts that the copy's type copy_id reads as the kernel's kernel_id
 * does for libbpf. */
static void assert_same_layout(const struct btf *kernel, __u32 kernel_id, const struct btf *copy,
			       __u32 copy_id)
{
	const struct btf_type *expected, *actual;

	kernel_id = skip_modifiers(kernel, kernel_id);
	copy_id = skip_modifiers(copy, copy_id);
	if (kernel_id == 0) {
		assert_int_equal(copy_id, 0);
		return;
	}
	expected = btf__type_by_id(kernel, kernel_id);
	actual = btf__type_by_id(copy, copy_id);
	assert_non_null(actual);
	assert_int_equal(btf_kind(actual), btf_kind(expected));
	if (btf_is_ptr(expected)) {
		assert_int_equal(actual->type, 0); /* void * */
		return;
	}
	assert_string_equal(name_of(copy, actual), name_of(kernel, expected));
	assert_int_equal(btf_vlen(actual), btf_vlen(expected));
	if (btf_is_int(expected)) {
		assert_int_equal(actual->size, expected->size);
		assert_int_equal(btf_int_encoding(actual), btf_int_encoding(expected));
	} else if (btf_is_array(expected)) {
		assert_int_equal(btf_array(actual)->nelems, btf_array(expected)->nelems);
		assert_same_layout(kernel, btf_array(expected)->type, copy, btf_array(actual)->type);
	} else if (btf_is_composite(expected)) {
		assert_int_equal(actual->size, expected->size);
		for (__u16 i = 0; i < btf_vlen(expected); i++) {
			assert_string_equal(btf__name_by_offset(copy, btf_members(actual)[i].name_off),
					    btf__name_by_offset(kernel, btf_members(expected)[i].name_off));
			assert_int_equal(btf_member_bit_offset(actual, i),
					 btf_member_bit_offset(expected, i));
			assert_int_equal(btf_member_bitfield_size(actual, i),
					 btf_member_bitfield_size(expected, i));
			assert_same_layout(kernel, btf_members(expected)[i].type, copy,
					   btf_members(actual)[i].type);
		}
	} else if (btf_is_enum(expected)) {
		assert_int_equal(actual->size, expected->size);
		for (__u16 i = 0; i < btf_vlen(expected); i++) {
			assert_string_equal(btf__name_by_offset(copy, btf_enum(actual)[i].name_off),
					    btf__name_by_offset(kernel, btf_enum(expected)[i].name_off));
			assert_int_equal(btf_enum(actual)[i].val, btf_enum(expected)[i].val);
		}
	} else if (btf_is_enum64(expected)) {
		assert_int_equal(actual->size, expected->size);
		for (__u16 i = 0; i < btf_vlen(expected); i++)
			assert_true(btf_enum64_value(&btf_enum64(actual)[i]) ==
				    btf_enum64_value(&btf_enum64(expected)[i]));
	} else if (btf_is_typedef(expected)) {
		assert_same_layout(kernel, expected->type, copy, actual->type);
	} else if (btf_is_fwd(expected)) {
		assert_int_equal(btf_kflag(actual), btf_kflag(expected));
	}
}

static int compare_names(const void *key, const void *element)
{
	return strcmp(*(const char *const *)key, *(const char *const *)element);
}

/* The first type of btf named name, of kind (and size, for a struct or
 * union), or 0. */
static __u32 find_named(const struct btf *btf, const char *name, __u16 kind, __u32 size)
{
	for (__u32 id = 1; id < btf__type_cnt(btf); id++) {
		const struct btf_type *type = btf__type_by_id(btf, id);

		if (btf_kind(type) == kind && strcmp(name_of(btf, type), name) == 0 &&
		    (!btf_is_composite(type) || type->size == size))
			return id;
	}
	return 0;
}

struct fixture {
	struct kernel_btf kernel;
	struct core_btf core;
	struct btf *copy;
};

static int setup(void **state)
{
	static struct fixture fixture;
	char note[128] = "";

	memset(&fixture, 0, sizeof(fixture));
	fixture.core.fd = -1;
	if (kernel_btf_load(&fixture.kernel) != 0) {
		fprintf(stderr, "test_core_btf: this machine's kernel has no BTF "
			"(/sys/kernel/btf/vmlinux): %s\n", strerror(errno));
		return -1;
	}
	if (core_btf_write(&fixture.core, &fixture.kernel, vnfs_bpf_core_types, NAME_COUNT, note,
			   sizeof(note)) != 0) {
		fprintf(stderr, "test_core_btf: core_btf_write: %s\n", note);
		return -1;
	}
	/* What libbpf does with it (btf_custom_path). */
	fixture.copy = btf__parse(fixture.core.path, NULL);
	if (!fixture.copy) {
		fprintf(stderr, "test_core_btf: libbpf cannot parse %s: %s\n", fixture.core.path,
			strerror(errno));
		return -1;
	}
	*state = &fixture;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fixture = *state;

	if (!fixture)
		return 0;
	btf__free(fixture->copy);
	core_btf_close(&fixture->core);
	kernel_btf_free(&fixture->kernel);
	return 0;
}

/* Every kernel type a relocation names is in the copy, laid out the same. */
static void test_each_named_type_is_copied_with_its_layout(void **state)
{
	struct fixture *fixture = *state;
	const struct btf *vmlinux = fixture->kernel.vmlinux;
	size_t compared = 0;

	for (__u32 id = 1; id < btf__type_cnt(vmlinux); id++) {
		const struct btf_type *type = btf__type_by_id(vmlinux, id);
		const char *name = name_of(vmlinux, type);
		__u32 copied;

		if (!btf_is_composite(type) && !btf_is_any_enum(type))
			continue;
		if (!name[0] || !bsearch(&name, vnfs_bpf_core_types, NAME_COUNT,
					 sizeof(*vnfs_bpf_core_types), compare_names))
			continue;
		copied = find_named(fixture->copy, name, btf_kind(type), type->size);
		if (copied == 0)
			fail_msg("%s of the kernel's BTF (id %u) is not in the copy", name, id);
		assert_same_layout(vmlinux, id, fixture->copy, copied);
		compared++;
	}
	/* task_struct, file, inode, ...: what any kernel with BTF has. */
	assert_true(compared >= 15);
}

/* Members embedded by value are copied; what pointers point to is not:
 * the copy is a few hundred types, not the kernel's 100,000. */
static void test_pointers_are_not_followed(void **state)
{
	struct fixture *fixture = *state;
	__u32 kernel_types = btf__type_cnt(fixture->kernel.vmlinux);

	assert_int_equal(btf__type_cnt(fixture->copy), fixture->core.types + 1);
	assert_true(fixture->core.types > 0);
	assert_true(fixture->core.types * 20 < kernel_types);
	for (__u32 id = 1; id < btf__type_cnt(fixture->copy); id++) {
		const struct btf_type *type = btf__type_by_id(fixture->copy, id);

		assert_false(btf_is_func(type) || btf_is_func_proto(type) || btf_is_var(type) ||
			     btf_is_datasec(type) || btf_is_mod(type));
		if (btf_is_ptr(type))
			assert_int_equal(type->type, 0);
	}
}

/* A name the kernel does not have (a newer kernel's type) is left out, as
 * libbpf would find no candidate for it either. */
static void test_a_name_the_kernel_lacks_is_left_out(void **state)
{
	struct fixture *fixture = *state;
	static const char *const names[] = { "vnfs_no_such_kernel_type" };
	struct core_btf core;
	char note[128] = "";

	assert_int_equal(core_btf_write(&core, &fixture->kernel, names, 1, note, sizeof(note)), 0);
	assert_true(core.fd >= 0);
	assert_int_equal(core.types, 0);
	core_btf_close(&core);
	assert_int_equal(core.fd, -1);
}

/* Without the kernel's BTF there is nothing to copy: libbpf is left to
 * say so itself. */
static void test_no_kernel_btf_is_an_error_with_a_reason(void **state)
{
	struct kernel_btf none;
	struct core_btf core;
	char note[128] = "";

	(void)state;
	memset(&none, 0, sizeof(none));
	assert_int_equal(core_btf_write(&core, &none, vnfs_bpf_core_types, NAME_COUNT, note,
					sizeof(note)),
			 -1);
	assert_int_equal(core.fd, -1);
	assert_string_equal(note, "the kernel has no BTF");
	core_btf_close(&core);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_named_type_is_copied_with_its_layout),
		cmocka_unit_test(test_pointers_are_not_followed),
		cmocka_unit_test(test_a_name_the_kernel_lacks_is_left_out),
		cmocka_unit_test(test_no_kernel_btf_is_an_error_with_a_reason),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
