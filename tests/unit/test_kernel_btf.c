/*
 * test_kernel_btf.c — a hook's configuration from its function's BTF
 * prototype (kernel_btf_hook_config, helper/kernel/kernel_btf.c): where
 * the exit finds the object that names the mount, the struct file or
 * dentry it reads, how it reads the result, and the refusals, each with
 * the note the helper prints.
 *
 * The prototypes are built here with libbpf's BTF writer, as the NFS
 * client's functions have them in Linux 6.1 (this machine's kernel has no
 * NFS client, so no BTF of it); the guest suites load the real ones on
 * 5.10, 6.1, 6.12 and the newest kernel and count every call exactly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <bpf/btf.h>

#include "helper/kernel/hooks.h"
#include "helper/kernel/kernel_btf.h"
#include "lib/log.h"

/* The BTF a test builds: the types prototypes are made of. */
struct types {
	struct btf *btf;
	int int32, long64, unsigned32, umode;
	int inode, dentry, file, kiocb, iov_iter; /* pointers to each struct */
	int kernel_stat;                          /* the struct itself, by value */
};

static int pointer_to_struct(struct btf *btf, const char *name)
{
	int id = btf__add_struct(btf, name, 0);

	assert_true(id > 0);
	id = btf__add_ptr(btf, id);
	assert_true(id > 0);
	return id;
}

static int setup(void **state)
{
	static struct types types;

	types.btf = btf__new_empty();
	assert_non_null(types.btf);
	types.int32 = btf__add_int(types.btf, "int", 4, BTF_INT_SIGNED);
	types.long64 = btf__add_int(types.btf, "long", 8, BTF_INT_SIGNED);
	types.unsigned32 = btf__add_int(types.btf, "unsigned int", 4, 0);
	types.umode = btf__add_typedef(types.btf, "umode_t", types.unsigned32);
	types.inode = pointer_to_struct(types.btf, "inode");
	types.dentry = pointer_to_struct(types.btf, "dentry");
	types.file = pointer_to_struct(types.btf, "file");
	types.kiocb = pointer_to_struct(types.btf, "kiocb");
	types.iov_iter = pointer_to_struct(types.btf, "iov_iter");
	types.kernel_stat = btf__add_struct(types.btf, "kstat", 8);
	assert_true(types.int32 > 0 && types.long64 > 0 && types.umode > 0 && types.kernel_stat > 0);
	*state = &types;
	return 0;
}

static int teardown(void **state)
{
	struct types *types = *state;

	btf__free(types->btf);
	return 0;
}

/* A function NAME returning result (0: void) with the arguments given,
 * -1 ended; its type id. */
static __u32 add_function(struct types *types, const char *name, int result, ...)
{
	int prototype = btf__add_func_proto(types->btf, result), function, argument;
	char argument_name[16];
	va_list arguments;

	assert_true(prototype > 0);
	va_start(arguments, result);
	for (int i = 0; (argument = va_arg(arguments, int)) >= 0; i++) {
		snprintf(argument_name, sizeof(argument_name), "a%d", i);
		assert_int_equal(btf__add_func_param(types->btf, argument_name, argument), 0);
	}
	va_end(arguments);
	function = btf__add_func(types->btf, name, BTF_FUNC_GLOBAL, prototype);
	assert_true(function > 0);
	return (__u32)function;
}

static const struct vnfs_hook *hook_named(const char *function)
{
	for (size_t i = 0; i < vnfs_hook_count; i++)
		if (strcmp(vnfs_hooks[i].function, function) == 0)
			return &vnfs_hooks[i];
	fail_msg("no hook %s in the table", function);
	return NULL;
}

/* kernel_btf_hook_config for the table's hook named function. */
static int configure(struct types *types, const char *function, __u32 id,
		     struct vnfs_hook_config *config, char *note, size_t note_size)
{
	memset(config, 0xff, sizeof(*config)); /* what it does not set shows */
	note[0] = '\0';
	return kernel_btf_hook_config(hook_named(function), types->btf, id, config, note,
				      note_size);
}

/* nfs_atomic_open(struct inode *dir, struct dentry *, struct file *,
 * unsigned int, umode_t): the directory names the mount, the file tells
 * whether it was opened and created, an int result. */
static void test_atomic_open(void **state)
{
	struct types *types = *state;
	__u32 id = add_function(types, "nfs_atomic_open", types->int32, types->inode,
				types->dentry, types->file, types->unsigned32, types->umode, -1);
	struct vnfs_hook_config config;
	char note[128];

	assert_int_equal(configure(types, "nfs_atomic_open", id, &config, note, sizeof(note)), 0);
	assert_int_equal(config.operation, VNFS_OP_OPEN);
	assert_int_equal(config.object_kind, VNFS_OBJECT_INODE);
	assert_int_equal(config.object_argument, 0);
	assert_int_equal(config.file_argument, 2);
	assert_int_equal(config.result_kind, VNFS_RESULT_INT);
	assert_int_equal(config.flags, VNFS_HOOK_COUNT_IF_OPENED | VNFS_HOOK_CREATE_IF_CREATED |
					       VNFS_HOOK_RESULT_32BIT);
	assert_string_equal(note, "");
}

/* nfs_lookup(struct inode *dir, struct dentry *, unsigned int flags),
 * returning a struct dentry *: the dentry is read for a negative answer,
 * the flags after it for a lookup meant to create. */
static void test_lookup(void **state)
{
	struct types *types = *state;
	__u32 id = add_function(types, "nfs_lookup", types->dentry, types->inode, types->dentry,
				types->unsigned32, -1);
	struct vnfs_hook_config config;
	char note[128];

	assert_int_equal(configure(types, "nfs_lookup", id, &config, note, sizeof(note)), 0);
	assert_int_equal(config.object_argument, 0);
	assert_int_equal(config.file_argument, 1);
	assert_int_equal(config.lookup_flags_argument, 2);
	assert_int_equal(config.result_kind, VNFS_RESULT_POINTER);
	assert_int_equal(config.flags, VNFS_HOOK_NEGATIVE_IS_ERROR);
}

/* nfs_file_read(struct kiocb *, struct iov_iter *) returning ssize_t: a
 * 64-bit result, the bytes it moved. */
static void test_file_read(void **state)
{
	struct types *types = *state;
	__u32 id = add_function(types, "nfs_file_read", types->long64, types->kiocb,
				types->iov_iter, -1);
	struct vnfs_hook_config config;
	char note[128];

	assert_int_equal(configure(types, "nfs_file_read", id, &config, note, sizeof(note)), 0);
	assert_int_equal(config.operation, VNFS_OP_READ);
	assert_int_equal(config.object_kind, VNFS_OBJECT_KIOCB);
	assert_int_equal(config.object_argument, 0);
	assert_int_equal(config.result_kind, VNFS_RESULT_INT);
	assert_int_equal(config.flags & VNFS_HOOK_RESULT_32BIT, 0);
}

/* nfs_readahead(struct readahead_control *) returns nothing. */
static void test_void_result(void **state)
{
	struct types *types = *state;
	int control = pointer_to_struct(types->btf, "readahead_control");
	__u32 id = add_function(types, "nfs_readahead", 0, control, -1);
	struct vnfs_hook_config config;
	char note[128];

	assert_int_equal(configure(types, "nfs_readahead", id, &config, note, sizeof(note)), 0);
	assert_int_equal(config.result_kind, VNFS_RESULT_VOID);
	assert_int_equal(config.object_argument, 0);
}

static char last_warning[256];

static void keep_warning(enum vnfs_log_priority priority, const char *line)
{
	if (priority == VNFS_LOG_PRIORITY_WARNING)
		snprintf(last_warning, sizeof(last_warning), "%s", line);
}

/* A hook whose object is not among the arguments still counts, without
 * its mount, and says so; one that takes its bytes from it cannot. */
static void test_object_missing(void **state)
{
	struct types *types = *state;
	__u32 open = add_function(types, "nfs_file_open", types->int32, types->inode, -1);
	__u32 read = add_function(types, "nfs_file_read", types->long64, types->iov_iter, -1);
	struct vnfs_hook_config config;
	char note[128];

	vnfs_log_set_sink(keep_warning);
	last_warning[0] = '\0';
	assert_int_equal(configure(types, "nfs_file_open", open, &config, note, sizeof(note)), 0);
	assert_int_equal(config.object_kind, VNFS_OBJECT_NONE);
	assert_non_null(strstr(last_warning, "nfs_file_open: no struct file * argument: its calls "
					      "count without their mount"));
	vnfs_log_set_sink(NULL);

	/* nfs_file_read's bytes come from its result: it too counts. */
	assert_int_equal(configure(types, "nfs_file_read", read, &config, note, sizeof(note)), 0);
	assert_int_equal(config.object_kind, VNFS_OBJECT_NONE);
}

/* The refusals, each with the note the helper prints for the function. */
static void test_refusals(void **state)
{
	struct types *types = *state;
	__u32 no_file = add_function(types, "nfs_atomic_open", types->int32, types->inode,
				     types->dentry, -1);
	__u32 no_dentry = add_function(types, "nfs_lookup", types->dentry, types->inode, -1);
	__u32 by_value = add_function(types, "nfs_file_release", types->kernel_stat, types->inode,
				      types->file, -1);
	/* nfs_read_folio(struct file *, struct folio *) counts the folio's bytes. */
	__u32 no_folio = add_function(types, "nfs_read_folio", types->int32, types->file, -1);
	struct vnfs_hook_config config;
	char note[128];

	assert_int_equal(configure(types, "nfs_atomic_open", no_file, &config, note, sizeof(note)),
			 -1);
	assert_string_equal(note, "no struct file * argument");
	assert_int_equal(configure(types, "nfs_lookup", no_dentry, &config, note, sizeof(note)), -1);
	assert_string_equal(note, "no struct dentry * argument");
	assert_int_equal(configure(types, "nfs_file_release", by_value, &config, note, sizeof(note)),
			 -1);
	assert_string_equal(note, "its result type is not supported");
	/* Refused, and not first announced as counted without its mount. */
	vnfs_log_set_sink(keep_warning);
	last_warning[0] = '\0';
	assert_int_equal(configure(types, "nfs_read_folio", no_folio, &config, note, sizeof(note)),
			 -1);
	assert_string_equal(note, "no struct folio * argument for its bytes");
	assert_string_equal(last_warning, "");
	vnfs_log_set_sink(NULL);
	/* An id that is no function: a pointer's. */
	assert_int_equal(configure(types, "nfs_file_release", (__u32)types->file, &config, note,
				   sizeof(note)),
			 -1);
	assert_string_equal(note, "its BTF has no prototype");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_atomic_open), cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_file_read),   cmocka_unit_test(test_void_result),
		cmocka_unit_test(test_object_missing), cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
