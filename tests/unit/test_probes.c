/*
 * test_probes.c — the BPF loader on the build machine's own kernel.
 *
 * This kind of machine has no NFS client, refuses fentry programs and has no
 * kprobes (docs/PROBES.md), so vnfs_probes_open must fail there, and its
 * message must name every hooked function with what was tried for it.  The
 * guest suite tests/guest/suites/probes.sh covers the success side on a
 * kernel with an NFS client.  Pin handling (bpffs check, ABI replacement,
 * cleanup after a failed start) runs against a private bpffs mount.
 * Must run as root: loading BPF and mounting bpffs need it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <bpf/bpf.h>

#include "helper/kernel/hooks.h"
#include "helper/kernel/probes.h"
#include "lib/log.h"

#define ERROR_SIZE 8192

static char logged[16384];

static void capture_log(enum vnfs_log_priority priority, const char *line)
{
	size_t length = strlen(logged);

	(void)priority;
	snprintf(logged + length, sizeof(logged) - length, "%s\n", line);
}

/* The logged line about one function ("cannot probe name (operation): ..."),
 * which must be a line of its own. */
static const char *function_line(const char *log, const char *function, char *line, size_t size)
{
	char prefix[96];
	const char *start, *end;

	snprintf(prefix, sizeof(prefix), "cannot probe %s (", function);
	for (start = strstr(log, prefix); start != NULL; start = strstr(start + 1, prefix))
		if (start == log || start[-1] == '\n')
			break;
	if (!start)
		return NULL;
	end = strchr(start, '\n');
	snprintf(line, size, "%.*s", (int)(end ? end - start : (ptrdiff_t)strlen(start)), start);
	return line;
}

static bool kernel_can_probe_nfs(void)
{
	return access("/sys/kernel/btf/nfs", F_OK) == 0;
}

static int require_root(void **state)
{
	(void)state;
	if (geteuid() != 0) {
		fprintf(stderr, "test_probes must run as root (BPF loading)\n");
		return -1;
	}
	if (kernel_can_probe_nfs()) {
		fprintf(stderr, "this kernel has an NFS client with BTF: the refusal tests do "
				"not apply here; run tests/guest/suites/probes.sh instead\n");
		return -1;
	}
	return 0;
}

static void test_every_operation_has_a_hook(void **state)
{
	(void)state;
	for (int operation = 0; operation < VNFS_OP_COUNT; operation++) {
		size_t hooks = 0;

		for (size_t i = 0; i < vnfs_hook_count; i++)
			if (vnfs_hooks[i].operation == (enum vnfs_operation)operation)
				hooks++;
		if (hooks == 0)
			fail_msg("operation %s has no hooked function", vnfs_operation_names[operation]);
	}
}

static void test_hooks_are_consistent(void **state)
{
	(void)state;
	assert_true(vnfs_hook_count <= VNFS_MAX_HOOKS);
	for (size_t i = 0; i < vnfs_hook_count; i++) {
		const struct vnfs_hook *hook = &vnfs_hooks[i];

		for (size_t j = i + 1; j < vnfs_hook_count; j++)
			assert_string_not_equal(hook->function, vnfs_hooks[j].function);
		assert_true(hook->object_kind == VNFS_OBJECT_NONE ||
			    vnfs_object_struct_name(hook->object_kind) != NULL);
		/* An atomic open needs its struct file to tell whether it opened. */
		if (hook->flags & VNFS_HOOK_COUNT_IF_OPENED)
			assert_int_not_equal(hook->fallback_file_argument,
					     hook->fallback_object_argument);
		/* Page fills carry their bytes in their object. */
		if (hook->flags & VNFS_HOOK_BYTES_FROM_OBJECT) {
			assert_int_equal(hook->operation, VNFS_OP_MMAP_READ);
			assert_true(hook->object_kind == VNFS_OBJECT_READAHEAD ||
				    hook->object_kind == VNFS_OBJECT_FOLIO ||
				    hook->object_kind == VNFS_OBJECT_PAGE);
		}
		/* ... or in a page count argument of their own. */
		if (hook->flags & VNFS_HOOK_BYTES_FROM_PAGES) {
			assert_int_equal(hook->operation, VNFS_OP_MMAP_READ);
			assert_int_not_equal(hook->fallback_file_argument,
					     hook->fallback_object_argument);
		}
		/* Only inode operations take the mount's idmap first. */
		if (hook->fallback_idmap_first)
			assert_int_equal(hook->fallback_object_argument, 1);
	}
	assert_string_equal(vnfs_object_struct_name(VNFS_OBJECT_KIOCB), "kiocb");
	assert_string_equal(vnfs_object_struct_name(VNFS_OBJECT_READAHEAD), "readahead_control");
	assert_null(vnfs_object_struct_name(VNFS_OBJECT_NONE));
}

static char *open_must_fail(enum vnfs_probe_mode mode, const char *pin_dir, bool pin)
{
	struct vnfs_probes_options options = { .mode = mode, .pin_dir = pin_dir, .pin = pin };
	struct vnfs_probes *probes = (struct vnfs_probes *)&options;
	char *error = calloc(1, ERROR_SIZE);

	assert_non_null(error);
	logged[0] = '\0';
	vnfs_log_set_sink(capture_log);
	assert_int_equal(vnfs_probes_open(&probes, &options, error, ERROR_SIZE), -1);
	vnfs_log_set_sink(NULL);
	assert_null(probes);
	return error;
}

/* The refusal's summary, and one logged line per hooked function. */
static void assert_refusal(const char *error)
{
	char expected[96], line[512];

	snprintf(expected, sizeof(expected),
		 "none of the %zu hooked NFS client functions could be probed", vnfs_hook_count);
	if (!strstr(error, expected))
		fail_msg("'%s' not in '%s'", expected, error);
	assert_null(strchr(error, '\n'));
	for (size_t i = 0; i < vnfs_hook_count; i++)
		if (!function_line(logged, vnfs_hooks[i].function, line, sizeof(line)))
			fail_msg("%s missing from:\n%s", vnfs_hooks[i].function, logged);
}

static void test_auto_mode_names_fentry_and_kprobe_per_function(void **state)
{
	char *error = open_must_fail(VNFS_PROBE_AUTO, NULL, false);
	char line[512];

	(void)state;
	assert_refusal(error);
	for (size_t i = 0; i < vnfs_hook_count; i++) {
		const char *function = vnfs_hooks[i].function;

		if (!function_line(logged, function, line, sizeof(line)))
			fail_msg("%s missing from:\n%s", function, logged);
		/* No NFS client here: nothing describes the function, so fentry
		 * cannot be tried; the kprobe attach is tried and refused. */
		assert_non_null(strstr(line, "fentry: no BTF describes it"));
		assert_non_null(strstr(line, "kprobe: attach failed: "));
	}
	free(error);
}

static void test_kprobe_mode_does_not_try_fentry(void **state)
{
	char *error = open_must_fail(VNFS_PROBE_KPROBE, NULL, false);
	char line[512];

	(void)state;
	for (size_t i = 0; i < vnfs_hook_count; i++) {
		assert_non_null(function_line(logged, vnfs_hooks[i].function, line, sizeof(line)));
		assert_non_null(strstr(line, "fentry: not tried (probe mode kprobe)"));
		assert_non_null(strstr(line, "kprobe: attach failed: "));
	}
	free(error);
}

static void test_fentry_mode_does_not_try_kprobe(void **state)
{
	char *error = open_must_fail(VNFS_PROBE_FENTRY, NULL, false);
	char line[512];

	(void)state;
	for (size_t i = 0; i < vnfs_hook_count; i++) {
		assert_non_null(function_line(logged, vnfs_hooks[i].function, line, sizeof(line)));
		assert_non_null(strstr(line, "fentry: no BTF describes it"));
		assert_non_null(strstr(line, "kprobe: not tried (probe mode fentry)"));
	}
	free(error);
}

/* A private bpffs for the pinning tests. */
struct bpffs {
	char mount_point[64];
	char pin_dir[96];
};

static int mount_bpffs(void **state)
{
	struct bpffs *bpffs = calloc(1, sizeof(*bpffs));

	if (!bpffs)
		return -1;
	snprintf(bpffs->mount_point, sizeof(bpffs->mount_point), "/tmp/vnfs-test-bpffs-XXXXXX");
	if (!mkdtemp(bpffs->mount_point) ||
	    mount("bpf", bpffs->mount_point, "bpf", 0, NULL) != 0) {
		fprintf(stderr, "cannot mount bpffs: %s\n", strerror(errno));
		free(bpffs);
		return -1;
	}
	snprintf(bpffs->pin_dir, sizeof(bpffs->pin_dir), "%s/vnfs", bpffs->mount_point);
	*state = bpffs;
	return 0;
}

static int unmount_bpffs(void **state)
{
	struct bpffs *bpffs = *state;
	int status = umount(bpffs->mount_point) == 0 && rmdir(bpffs->mount_point) == 0 ? 0 : -1;

	free(bpffs);
	return status;
}

static void test_failed_start_leaves_no_pins(void **state)
{
	struct bpffs *bpffs = *state;
	char *error = open_must_fail(VNFS_PROBE_AUTO, bpffs->pin_dir, true);
	struct stat status;

	assert_refusal(error);
	assert_int_equal(stat(bpffs->pin_dir, &status), -1);
	assert_int_equal(errno, ENOENT);
	free(error);
}

/* Pins an abi map at pin_dir/abi as a helper of ABI version leaves it. */
static void pin_abi_marker(const char *pin_dir, __u32 version, __u32 step_stats_size)
{
	char path[160];
	__u32 key, value;
	int fd;

	assert_int_equal(mkdir(pin_dir, 0700), 0);
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "abi", sizeof(__u32), sizeof(__u32), 2, NULL);
	assert_true(fd >= 0);
	key = 0;
	value = version;
	assert_int_equal(bpf_map_update_elem(fd, &key, &value, BPF_ANY), 0);
	key = 1;
	value = step_stats_size;
	assert_int_equal(bpf_map_update_elem(fd, &key, &value, BPF_ANY), 0);
	snprintf(path, sizeof(path), "%s/abi", pin_dir);
	assert_int_equal(bpf_obj_pin(fd, path), 0);
	close(fd);
}

/* Opens over pin_dir's pins (failing: no NFS client here) and checks that
 * the helper said `expected` and removed every pin, and pin_dir itself. */
static void assert_pins_replaced(const char *pin_dir, const char *expected)
{
	char path[160];
	char *error;

	error = open_must_fail(VNFS_PROBE_AUTO, pin_dir, true);
	assert_non_null(strstr(logged, expected));
	snprintf(path, sizeof(path), "%s/abi", pin_dir);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(access(pin_dir, F_OK), -1);
	free(error);
}

static void test_pins_of_another_abi_are_replaced(void **state)
{
	struct bpffs *bpffs = *state;
	char expected[128];

	pin_abi_marker(bpffs->pin_dir, 999, 0);
	snprintf(expected, sizeof(expected), "pinned maps have ABI v999, this helper v%d: replacing",
		 VNFS_ABI_VERSION);
	assert_pins_replaced(bpffs->pin_dir, expected);
}

static void test_pin_dir_must_be_on_bpffs(void **state)
{
	char directory[] = "/tmp/vnfs-test-pins-XXXXXX", pin_dir[64];
	char *error;

	(void)state;
	assert_non_null(mkdtemp(directory));
	snprintf(pin_dir, sizeof(pin_dir), "%s/vnfs", directory);
	error = open_must_fail(VNFS_PROBE_AUTO, pin_dir, true);
	assert_non_null(strstr(error, "is not on a BPF file system"));
	assert_non_null(strstr(error, directory));
	assert_int_equal(rmdir(directory), 0);
	free(error);
}

static void test_unpin_of_missing_dir_succeeds(void **state)
{
	struct bpffs *bpffs = *state;
	char error[256] = "";
	size_t removed = 99;

	assert_int_equal(vnfs_probes_unpin(bpffs->pin_dir, &removed, error, sizeof(error)), 0);
	assert_string_equal(error, "");
	assert_int_equal(removed, 0);
}

static void test_unpin_removes_links_and_maps(void **state)
{
	struct bpffs *bpffs = *state;
	char path[160], error[256] = "";
	size_t removed = 0;
	int fd;

	assert_int_equal(mkdir(bpffs->pin_dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/links", bpffs->pin_dir);
	assert_int_equal(mkdir(path, 0700), 0);
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "cgroup_slots", sizeof(__u32), sizeof(__u32), 1, NULL);
	assert_true(fd >= 0);
	snprintf(path, sizeof(path), "%s/cgroup_slots", bpffs->pin_dir);
	assert_int_equal(bpf_obj_pin(fd, path), 0);
	snprintf(path, sizeof(path), "%s/links/nfs_file_read-entry", bpffs->pin_dir);
	assert_int_equal(bpf_obj_pin(fd, path), 0); /* any object will do */
	close(fd);

	assert_int_equal(vnfs_probes_unpin(bpffs->pin_dir, &removed, error, sizeof(error)), 0);
	assert_int_equal(removed, 2);
	assert_int_equal(access(bpffs->pin_dir, F_OK), -1);
	assert_int_equal(errno, ENOENT);
}

static void test_null_probes_are_refused(void **state)
{
	struct vnfs_unattributed_expiry expired;
	struct vnfs_step_stats stats;
	uint32_t slot = 7;

	(void)state;
	assert_int_equal(vnfs_probes_register_cgroup(NULL, 1, 0), -1);
	assert_int_equal(vnfs_probes_unregister_cgroup(NULL, 1), -1);
	assert_int_equal(vnfs_probes_registered(NULL, 1, &slot), -1);
	assert_int_equal(slot, 7);
	assert_int_equal(vnfs_probes_step_activity(NULL, 0), 0);
	assert_int_equal(vnfs_probes_read_step_stats(NULL, 0, &stats), -1);
	assert_int_equal(vnfs_probes_attach_method(NULL, VNFS_OP_READ), VNFS_ATTACH_NONE);
	assert_int_equal(vnfs_probes_reset_slot(NULL, 0), -1);
	memset(&expired, 0xff, sizeof(expired));
	assert_int_equal(vnfs_probes_expire_unattributed(NULL, 0, 0, &expired), -1);
	assert_int_equal(expired.gone + expired.idle + expired.failed, 0);
	vnfs_probes_close(NULL);
}

/* Pins of ABI 4 (no bound on the breakdown and unattributed rows, no
 * breakdown_entries map) are replaced, not reused: the programs need maps
 * the old pins lack. */
static void test_pins_of_abi_4_are_replaced(void **state)
{
	struct bpffs *bpffs = *state;

	assert_int_equal(VNFS_ABI_VERSION, 11);
	/* sizeof(struct vnfs_step_stats) unchanged: the version alone tells. */
	pin_abi_marker(bpffs->pin_dir, 4, sizeof(struct vnfs_step_stats));
	assert_pins_replaced(bpffs->pin_dir, "pinned maps have ABI v4, this helper v11: replacing");
}

/*
 * Pins of ABI 5, the one before, whose step_stats was BPF_F_MMAPABLE, are
 * replaced, not reused: libbpf reuses a pinned map only if its flags match
 * the object's, so reusing them would fail the load on every restart after
 * an upgrade.  Its step_stats pin goes with the rest.
 */
static void test_pins_of_abi_5_are_replaced(void **state)
{
	struct bpffs *bpffs = *state;
	LIBBPF_OPTS(bpf_map_create_opts, mmapable, .map_flags = BPF_F_MMAPABLE);
	char path[160];
	int fd;

	assert_int_equal(VNFS_ABI_VERSION, 11);
	pin_abi_marker(bpffs->pin_dir, 5, sizeof(struct vnfs_step_stats));
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "step_stats", sizeof(__u32),
			    sizeof(struct vnfs_step_stats), VNFS_MAX_STEPS, &mmapable);
	assert_true(fd >= 0);
	snprintf(path, sizeof(path), "%s/step_stats", bpffs->pin_dir);
	assert_int_equal(bpf_obj_pin(fd, path), 0);
	close(fd);
	assert_pins_replaced(bpffs->pin_dir, "pinned maps have ABI v5, this helper v11: replacing");
	assert_int_equal(access(path, F_OK), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_operation_has_a_hook),
		cmocka_unit_test(test_hooks_are_consistent),
		cmocka_unit_test(test_null_probes_are_refused),
		cmocka_unit_test(test_auto_mode_names_fentry_and_kprobe_per_function),
		cmocka_unit_test(test_kprobe_mode_does_not_try_fentry),
		cmocka_unit_test(test_fentry_mode_does_not_try_kprobe),
		cmocka_unit_test(test_pin_dir_must_be_on_bpffs),
		cmocka_unit_test_setup_teardown(test_failed_start_leaves_no_pins, mount_bpffs,
						unmount_bpffs),
		cmocka_unit_test_setup_teardown(test_pins_of_another_abi_are_replaced, mount_bpffs,
						unmount_bpffs),
		cmocka_unit_test_setup_teardown(test_pins_of_abi_4_are_replaced, mount_bpffs,
						unmount_bpffs),
		cmocka_unit_test_setup_teardown(test_pins_of_abi_5_are_replaced, mount_bpffs,
						unmount_bpffs),
		cmocka_unit_test_setup_teardown(test_unpin_of_missing_dir_succeeds, mount_bpffs,
						unmount_bpffs),
		cmocka_unit_test_setup_teardown(test_unpin_removes_links_and_maps, mount_bpffs,
						unmount_bpffs),
	};

	vnfs_log_setup("test_probes", VNFS_LOG_PRIORITY_INFO, 0);
	return cmocka_run_group_tests(tests, require_root, NULL);
}
