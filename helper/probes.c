/*
 * probes.c — loads bpf/vnfs.bpf.c onto the running kernel's NFS client and
 * gives the helper access to its maps (see probes.h).
 *
 * Start-up, per hooked function of helper/hooks.c:
 *   1. find its prototype in the kernel's BTF (vmlinux or an nfs* module) and
 *      derive the hook configuration from it: which argument holds the object
 *      that names the mount, whether the result is an int, a long, a pointer;
 *   2. plan an attach method: fentry/fexit (auto, fentry) or kprobe/kretprobe
 *      (kprobe, or auto where fentry failed or no BTF prototype exists);
 *   3. load the object and attach.  Loading is per object, so a failure sends
 *      the affected functions to their next method and the object is loaded
 *      again; every round only moves functions down the list, so it ends.
 * What was tried and why it failed is kept per function: when nothing
 * attaches, that is the error message.
 *
 * Pinning: maps go to <pin_dir>/<map name> and links to
 * <pin_dir>/links/<function>-entry|-exit, and a pinned `abi` map records
 * VNFS_ABI_VERSION and sizeof(struct vnfs_step_stats).  A helper finding pins
 * of its own ABI reuses the maps and the links (the old programs never stop
 * counting); pins of another ABI are removed first.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <mntent.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "helper/hooks.h"
#include "helper/kernel_btf.h"
#include "helper/probes.h"
#include "lib/log.h"

/* After bpf/vnfs.h (through probes.h): the skeleton uses its structs. */
#include "bpf/vnfs.skel.h"

#define REASON_SIZE 160
#define MAX_ATTEMPTS 4
/* Arguments the kprobe programs can read (PT_REGS_PARM1..5). */
#define KPROBE_ARGUMENTS 5

/* The step_activity map as mmapped (a whole number of pages). */
#define STEP_ACTIVITY_MAPPING_SIZE (sizeof(__u64) * VNFS_MAX_STEPS)
_Static_assert(STEP_ACTIVITY_MAPPING_SIZE % 4096 == 0, "step_activity fills whole pages");

/* include/linux/exportfs.h, not in the UAPI headers: the file handle type
 * of a kernfs node, whose 64-bit id is a cgroup2 cgroup's id. */
#define FILEID_KERNFS 0xfe

/* The unattributed_entries map as mmapped: one page (the kernel rounds an
 * mmapable array up to whole pages). */
#define UNATTRIBUTED_ENTRIES_MAPPING_SIZE 4096

/* An unattributed row as the last expiry pass saw it: its calls, and since
 * when they have not moved. */
struct watched_row {
	struct vnfs_unattributed_key key;
	uint64_t calls;
	int64_t still_since_ms;
};

/* Indices of the pinned abi map. */
enum { ABI_VERSION, ABI_STEP_STATS_SIZE };

struct hook_state {
	const struct vnfs_hook *hook;
	struct vnfs_hook_config config;
	bool absent;                /* the kernel's nfs BTF has no such function */
	__u32 btf_id;               /* fentry/fexit target: the FUNC type id */
	int btf_object_fd;          /* and where it is (0: vmlinux); see kernel_btf */
	bool has_prototype;         /* config comes from BTF, not the fallback */
	bool reused;                /* links pinned by a previous helper */
	enum vnfs_attach_method plan;
	enum vnfs_attach_method method;
	struct bpf_link *entry_link;
	struct bpf_link *exit_link;
	char note[REASON_SIZE];     /* absence, or how the prototype was read */
	char fentry_error[REASON_SIZE];
	char kprobe_error[REASON_SIZE];
};

struct vnfs_probes {
	struct vnfs_bpf *skeleton;
	struct hook_state hooks[VNFS_MAX_HOOKS];
	size_t hook_count;
	enum vnfs_probe_mode mode;
	bool pin;
	char pin_dir[PATH_MAX];
	struct bpf_link *exit_drain_link; /* drain_at_exit on sched_process_exit */
	volatile __u64 *step_activity; /* mmapped step_activity map */
	__u64 *unattributed_entries;   /* mmapped read-write: [0] rows of their own */
	struct watched_row *watched;   /* unattributed rows at the last expiry pass */
	size_t watched_count;
	int64_t next_expiry_ms;        /* when the walk next looks for rows to expire */
	int cgroup_root_fd;            /* cgroup2 root for open_by_handle_at, -1 none */
	bool cgroup_root_tried;
	pthread_mutex_t registry_lock;
	struct kernel_btf kernel_btf; /* while opening: the targets' BTF objects */
};

static int libbpf_to_log(enum libbpf_print_level level, const char *format, va_list arguments)
{
	char *text = NULL, *line, *saveptr = NULL;

	/* Failed attempts are expected (fallback), so libbpf's warnings go to
	 * debug level; the outcome is logged by this module.  The verifier log
	 * of a rejected program (many lines in one warning) shows with log_level
	 * = debug.  libbpf's own debug chatter (four lines per CO-RE relocation)
	 * is dropped: formatting it costs more than the load itself. */
	if (level == LIBBPF_DEBUG)
		return 0;
	if (vasprintf(&text, format, arguments) < 0)
		return 0;
	for (line = strtok_r(text, "\n", &saveptr); line; line = strtok_r(NULL, "\n", &saveptr))
		vnfs_debug("libbpf: %s", line);
	free(text);
	return 0;
}

static double milliseconds(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec * 1e3 + now.tv_nsec / 1e6;
}

static const char *method_name(enum vnfs_attach_method method)
{
	switch (method) {
	case VNFS_ATTACH_FENTRY: return "fentry";
	case VNFS_ATTACH_KPROBE: return "kprobe";
	case VNFS_ATTACH_NONE: break;
	}
	return "none";
}

/* ------------------------------------------------------------------ BTF */

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

/* Fills state->config from the function's BTF prototype.  Returns 0, or -1
 * with the reason in state->note when the prototype cannot be used. */
static int config_from_prototype(struct hook_state *state, const struct btf *btf, __u32 id)
{
	const struct vnfs_hook *hook = state->hook;
	const char *wanted = vnfs_object_struct_name(hook->object_kind);
	const struct btf_type *function = btf__type_by_id(btf, id);
	const struct btf_type *prototype, *result;
	const struct btf_param *parameters;
	int object_argument = -1, file_argument = -1, dentry_argument = -1;

	prototype = function ? btf__type_by_id(btf, function->type) : NULL;
	if (!prototype || !btf_is_func_proto(prototype)) {
		snprintf(state->note, sizeof(state->note), "its BTF has no prototype");
		return -1;
	}
	parameters = btf_params(prototype);
	for (int i = 0; i < btf_vlen(prototype); i++) {
		const char *name = pointed_struct_name(btf, parameters[i].type);

		if (!name)
			continue;
		if (wanted && object_argument < 0 && strcmp(name, wanted) == 0)
			object_argument = i;
		if (file_argument < 0 && strcmp(name, "file") == 0)
			file_argument = i;
		if (dentry_argument < 0 && strcmp(name, "dentry") == 0)
			dentry_argument = i;
	}

	state->config.operation = hook->operation;
	state->config.flags = hook->flags;
	state->config.object_kind = hook->object_kind;
	if (prototype->type == 0) {
		state->config.result_kind = VNFS_RESULT_VOID;
	} else {
		result = skip_modifiers(btf, prototype->type);
		if (result && btf_is_ptr(result)) {
			state->config.result_kind = VNFS_RESULT_POINTER;
		} else if (result && (btf_is_int(result) || btf_is_any_enum(result))) {
			state->config.result_kind = VNFS_RESULT_INT;
			if (result->size == 4)
				state->config.flags |= VNFS_HOOK_RESULT_32BIT;
		} else {
			snprintf(state->note, sizeof(state->note), "its result type is not supported");
			return -1;
		}
	}
	if (hook->flags & VNFS_HOOK_COUNT_IF_OPENED) {
		if (file_argument < 0) {
			snprintf(state->note, sizeof(state->note), "no struct file * argument");
			return -1;
		}
		state->config.file_argument = file_argument;
	}
	if (hook->flags & VNFS_HOOK_NEGATIVE_IS_ERROR) {
		if (dentry_argument < 0) {
			snprintf(state->note, sizeof(state->note), "no struct dentry * argument");
			return -1;
		}
		/* nfs_lookup(dir, dentry, unsigned int flags): the flags follow
		 * the dentry in every version so far. */
		state->config.file_argument = dentry_argument;
		state->config.lookup_flags_argument = dentry_argument + 1;
	}
	if (wanted && object_argument < 0) {
		/* Still counted, only without its mount. */
		vnfs_warning("%s: no struct %s * argument: its calls count without their mount",
			     hook->function, wanted);
		state->config.object_kind = VNFS_OBJECT_NONE;
	} else if (wanted) {
		state->config.object_argument = object_argument;
	}
	if ((hook->flags & VNFS_HOOK_BYTES_FROM_OBJECT) &&
	    state->config.object_kind == VNFS_OBJECT_NONE) {
		snprintf(state->note, sizeof(state->note), "no struct %s * argument for its bytes",
			 wanted ? wanted : "?");
		return -1;
	}
	state->has_prototype = true;
	return 0;
}

static void config_from_fallback(struct hook_state *state)
{
	const struct vnfs_hook *hook = state->hook;

	state->config.operation = hook->operation;
	state->config.flags = hook->flags;
	if (hook->fallback_result_32bit)
		state->config.flags |= VNFS_HOOK_RESULT_32BIT;
	state->config.object_kind = hook->object_kind;
	state->config.object_argument = hook->fallback_object_argument;
	state->config.file_argument = hook->fallback_file_argument;
	state->config.lookup_flags_argument = hook->fallback_file_argument + 1;
	state->config.result_kind = hook->fallback_result_kind;
}

/* Plans every function's first attach method from the kernel's BTF. */
static void plan_hooks(struct vnfs_probes *probes)
{
	struct kernel_function found[VNFS_MAX_HOOKS];
	bool btf_has_nfs;

	if (kernel_btf_load(&probes->kernel_btf) != 0)
		vnfs_warning("the kernel has no BTF (/sys/kernel/btf/vmlinux): kprobes only");
	btf_has_nfs = kernel_btf_find(&probes->kernel_btf, vnfs_hooks, vnfs_hook_count, found);
	probes->hook_count = vnfs_hook_count;
	for (size_t i = 0; i < vnfs_hook_count; i++) {
		struct hook_state *state = &probes->hooks[i];

		state->hook = &vnfs_hooks[i];
		if (found[i].btf) {
			if (config_from_prototype(state, found[i].btf, found[i].id) != 0) {
				state->absent = true;
				continue;
			}
			state->btf_id = found[i].id;
			state->btf_object_fd = found[i].object_fd;
		} else if (btf_has_nfs) {
			state->absent = true;
			snprintf(state->note, sizeof(state->note), "not in this kernel");
			continue;
		} else {
			config_from_fallback(state);
			snprintf(state->fentry_error, sizeof(state->fentry_error),
				 "no BTF describes it (nfs module not loaded?)");
		}
		if (probes->mode == VNFS_PROBE_KPROBE) {
			snprintf(state->fentry_error, sizeof(state->fentry_error),
				 "not tried (probe mode kprobe)");
			state->plan = VNFS_ATTACH_KPROBE;
		} else if (state->has_prototype) {
			state->plan = VNFS_ATTACH_FENTRY;
		} else {
			state->plan = probes->mode == VNFS_PROBE_AUTO ? VNFS_ATTACH_KPROBE
								      : VNFS_ATTACH_NONE;
		}
		if (state->plan == VNFS_ATTACH_NONE)
			snprintf(state->kprobe_error, sizeof(state->kprobe_error),
				 "not tried (probe mode fentry)");
	}
	kernel_btf_drop_types(&probes->kernel_btf);
}

/* After fentry failed for a function: its next method per the mode. */
static void fentry_failed(struct vnfs_probes *probes, struct hook_state *state, const char *format,
			  ...)
{
	va_list arguments;

	va_start(arguments, format);
	vsnprintf(state->fentry_error, sizeof(state->fentry_error), format, arguments);
	va_end(arguments);
	if (probes->mode == VNFS_PROBE_AUTO) {
		state->plan = VNFS_ATTACH_KPROBE;
	} else {
		state->plan = VNFS_ATTACH_NONE;
		snprintf(state->kprobe_error, sizeof(state->kprobe_error),
			 "not tried (probe mode fentry)");
	}
}

static void kprobe_failed(struct hook_state *state, const char *format, ...)
{
	va_list arguments;

	va_start(arguments, format);
	vsnprintf(state->kprobe_error, sizeof(state->kprobe_error), format, arguments);
	va_end(arguments);
	state->plan = VNFS_ATTACH_NONE;
}

/* ------------------------------------------------------------- pinning */

static int join_path(char *buffer, size_t size, const char *directory, const char *name)
{
	int length = snprintf(buffer, size, "%s/%s", directory, name);

	return length < 0 || (size_t)length >= size ? -1 : 0;
}

static int link_pin_path(char *buffer, size_t size, const char *pin_dir, const char *function,
			 const char *end)
{
	int length = snprintf(buffer, size, "%s/links/%s-%s", pin_dir, function, end);

	return length < 0 || (size_t)length >= size ? -1 : 0;
}

/* Removes the files of directory (not recursive) and the directory. */
static int remove_directory(const char *directory, char *error, size_t error_size)
{
	char path[PATH_MAX];
	struct dirent *entry;
	DIR *handle = opendir(directory);

	if (!handle)
		return errno == ENOENT ? 0 : -1;
	while ((entry = readdir(handle))) {
		if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
			continue;
		if (join_path(path, sizeof(path), directory, entry->d_name) != 0 ||
		    unlink(path) != 0) {
			snprintf(error, error_size, "cannot remove %s/%s: %s", directory,
				 entry->d_name, strerror(errno));
			closedir(handle);
			return -1;
		}
	}
	closedir(handle);
	if (rmdir(directory) != 0 && errno != ENOENT) {
		snprintf(error, error_size, "cannot remove %s: %s", directory, strerror(errno));
		return -1;
	}
	return 0;
}

int vnfs_probes_unpin(const char *pin_dir, char *error, size_t error_size)
{
	char links[PATH_MAX];

	if (!pin_dir)
		pin_dir = VNFS_DEFAULT_PIN_DIR;
	if (join_path(links, sizeof(links), pin_dir, "links") != 0) {
		snprintf(error, error_size, "pin directory path too long: %s", pin_dir);
		return -1;
	}
	if (remove_directory(links, error, error_size) != 0)
		return -1;
	return remove_directory(pin_dir, error, error_size);
}

static bool directory_is_empty(const char *directory)
{
	struct dirent *entry;
	bool empty = true;
	DIR *handle = opendir(directory);

	if (!handle)
		return true;
	while (empty && (entry = readdir(handle)))
		empty = strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0;
	closedir(handle);
	return empty;
}

/* Checks that pin_dir's parent is a BPF file system, mounting one at
 * /sys/fs/bpf if that is the parent and nothing is mounted there. */
static int check_bpffs(const char *pin_dir, char *error, size_t error_size)
{
	struct statfs file_system;
	char parent[PATH_MAX];
	char *slash;

	snprintf(parent, sizeof(parent), "%s", pin_dir);
	slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = '\0';
	if (statfs(parent, &file_system) == 0 && file_system.f_type != BPF_FS_MAGIC &&
	    strcmp(parent, "/sys/fs/bpf") == 0) {
		/* The usual place, where systemd mounts it; without systemd
		 * nobody may have. */
		if (mount("bpf", parent, "bpf", 0, NULL) == 0)
			vnfs_info("mounted a BPF file system at %s", parent);
	}
	if (statfs(parent, &file_system) != 0 || file_system.f_type != BPF_FS_MAGIC) {
		snprintf(error, error_size,
			 "%s is not on a BPF file system (mount one: mount -t bpf bpf %s)",
			 pin_dir, parent);
		return -1;
	}
	return 0;
}

/* Makes pin_dir and pin_dir/links. */
static int make_pin_dir(const char *pin_dir, char *error, size_t error_size)
{
	char links[PATH_MAX];

	if (join_path(links, sizeof(links), pin_dir, "links") != 0) {
		snprintf(error, error_size, "pin directory path too long: %s", pin_dir);
		return -1;
	}
	if ((mkdir(pin_dir, 0700) != 0 && errno != EEXIST) ||
	    (mkdir(links, 0700) != 0 && errno != EEXIST)) {
		snprintf(error, error_size, "cannot create %s: %s", links, strerror(errno));
		return -1;
	}
	return 0;
}

/* Checks the pins left by an earlier helper; removes them unless they have
 * this helper's ABI.  Returns 1 when pins of this ABI exist, 0 when there are
 * none (any more), -1 on error. */
static int check_pinned_abi(const char *pin_dir, char *error, size_t error_size)
{
	__u32 key, version = 0, step_stats_size = 0;
	char path[PATH_MAX];
	int fd;

	if (join_path(path, sizeof(path), pin_dir, "abi") != 0) {
		snprintf(error, error_size, "pin directory path too long: %s", pin_dir);
		return -1;
	}
	fd = bpf_obj_get(path);
	if (fd < 0 && directory_is_empty(pin_dir))
		return 0;
	if (fd >= 0) {
		key = ABI_VERSION;
		if (bpf_map_lookup_elem(fd, &key, &version) != 0)
			version = 0;
		key = ABI_STEP_STATS_SIZE;
		if (bpf_map_lookup_elem(fd, &key, &step_stats_size) != 0)
			step_stats_size = 0;
		close(fd);
		if (version == VNFS_ABI_VERSION && step_stats_size == sizeof(struct vnfs_step_stats))
			return 1;
	}
	vnfs_warning("pinned maps have ABI v%u, this helper v%u: replacing", version,
		     VNFS_ABI_VERSION);
	if (vnfs_probes_unpin(pin_dir, error, error_size) != 0)
		return -1;
	return 0;
}

static enum vnfs_attach_method link_method(const struct bpf_link *link)
{
	struct bpf_link_info info;
	__u32 length = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_link__fd(link), &info, &length) != 0)
		return VNFS_ATTACH_NONE;
	if (info.type == BPF_LINK_TYPE_TRACING)
		return VNFS_ATTACH_FENTRY;
	return VNFS_ATTACH_KPROBE;
}

/* Takes over the links a previous helper pinned for this function. */
static void reuse_pinned_links(struct vnfs_probes *probes, struct hook_state *state)
{
	char entry_path[PATH_MAX], exit_path[PATH_MAX];
	struct bpf_link *entry_link, *exit_link;

	if (link_pin_path(entry_path, sizeof(entry_path), probes->pin_dir, state->hook->function,
			  "entry") != 0 ||
	    link_pin_path(exit_path, sizeof(exit_path), probes->pin_dir, state->hook->function,
			  "exit") != 0)
		return;
	entry_link = bpf_link__open(entry_path);
	exit_link = bpf_link__open(exit_path);
	if (entry_link && exit_link && link_method(entry_link) != VNFS_ATTACH_NONE) {
		state->entry_link = entry_link;
		state->exit_link = exit_link;
		state->method = link_method(entry_link);
		state->reused = true;
		state->plan = VNFS_ATTACH_NONE;
		return;
	}
	/* Half a pair (or none): start this function afresh. */
	bpf_link__destroy(entry_link);
	bpf_link__destroy(exit_link);
	unlink(entry_path);
	unlink(exit_path);
}

/* The drain at task exit is pinned beside the hooks' links. */
#define EXIT_DRAIN_TRACEPOINT "sched_process_exit"
#define EXIT_DRAIN_PIN_END "drain"

static void reuse_pinned_exit_drain(struct vnfs_probes *probes)
{
	char path[PATH_MAX];

	if (link_pin_path(path, sizeof(path), probes->pin_dir, EXIT_DRAIN_TRACEPOINT,
			  EXIT_DRAIN_PIN_END) != 0)
		return;
	probes->exit_drain_link = bpf_link__open(path);
}

/* Removes pinned links of functions this helper does not hook (any more). */
static void remove_foreign_links(const struct vnfs_probes *probes)
{
	char links[PATH_MAX], path[PATH_MAX];
	struct dirent *entry;
	DIR *handle;

	if (join_path(links, sizeof(links), probes->pin_dir, "links") != 0 ||
	    !(handle = opendir(links)))
		return;
	while ((entry = readdir(handle))) {
		bool known = entry->d_name[0] == '.' ||
			     strcmp(entry->d_name, EXIT_DRAIN_TRACEPOINT "-" EXIT_DRAIN_PIN_END) == 0;

		for (size_t i = 0; !known && i < probes->hook_count; i++) {
			const char *function = probes->hooks[i].hook->function;
			size_t length = strlen(function);

			known = strncmp(entry->d_name, function, length) == 0 &&
				(strcmp(entry->d_name + length, "-entry") == 0 ||
				 strcmp(entry->d_name + length, "-exit") == 0);
		}
		if (!known && join_path(path, sizeof(path), links, entry->d_name) == 0) {
			vnfs_info("removing the pinned link %s: no longer hooked", entry->d_name);
			unlink(path);
		}
	}
	closedir(handle);
}

static void pin_links(struct vnfs_probes *probes, struct hook_state *state)
{
	char entry_path[PATH_MAX], exit_path[PATH_MAX];

	if (link_pin_path(entry_path, sizeof(entry_path), probes->pin_dir, state->hook->function,
			  "entry") != 0 ||
	    link_pin_path(exit_path, sizeof(exit_path), probes->pin_dir, state->hook->function,
			  "exit") != 0 ||
	    bpf_link__pin(state->entry_link, entry_path) != 0 ||
	    bpf_link__pin(state->exit_link, exit_path) != 0)
		vnfs_warning("%s: cannot pin its links (%s): a restart of the helper will "
			     "miss its calls while it is down", state->hook->function,
			     strerror(errno));
}

/* ------------------------------------------------------------- loading */

static struct bpf_program *hook_program(struct vnfs_bpf *skeleton, const char *kind, size_t index)
{
	char name[32];

	snprintf(name, sizeof(name), "%s_%zu", kind, index);
	return bpf_object__find_program_by_name(skeleton->obj, name);
}

static void destroy_link_pair(struct hook_state *state)
{
	bpf_link__destroy(state->entry_link);
	bpf_link__destroy(state->exit_link);
	state->entry_link = NULL;
	state->exit_link = NULL;
}

static void release_attempt(struct vnfs_probes *probes)
{
	for (size_t i = 0; i < probes->hook_count; i++)
		if (!probes->hooks[i].reused) {
			destroy_link_pair(&probes->hooks[i]);
			probes->hooks[i].method = VNFS_ATTACH_NONE;
		}
	vnfs_bpf__destroy(probes->skeleton);
	probes->skeleton = NULL;
}

static unsigned int page_shift(void)
{
	long page_size = sysconf(_SC_PAGESIZE);
	unsigned int shift = 0;

	while (page_size > 1) {
		page_size >>= 1;
		shift++;
	}
	return shift;
}

static int set_pin_paths(struct vnfs_probes *probes)
{
	char path[PATH_MAX];
	struct bpf_map *map;

	bpf_object__for_each_map(map, probes->skeleton->obj) {
		if (bpf_map__is_internal(map))
			continue;
		if (join_path(path, sizeof(path), probes->pin_dir, bpf_map__name(map)) != 0 ||
		    bpf_map__set_pin_path(map, path) != 0)
			return -1;
	}
	return 0;
}

/* The fentry/fexit programs are in sections of their own (bpf/vnfs.h) so
 * that loading them goes through set_attach_btf_id(), which gives the kernel
 * the target found by kernel_btf, instead of libbpf's resolution by name.
 * libbpf's handlers are process-wide, and libbpf 1.1 frees its handler table
 * when the last one is unregistered but keeps using it (double free on the
 * next registration): they are registered once and stay, and the probes
 * being loaded are found through loading_probes. */
static const struct vnfs_probes *loading_probes;

static int set_attach_btf_id(struct bpf_program *program, struct bpf_prog_load_opts *options,
			     long cookie)
{
	const struct vnfs_probes *probes = loading_probes;
	const char *index = strrchr(bpf_program__name(program), '_');
	unsigned long hook = index ? strtoul(index + 1, NULL, 10) : VNFS_MAX_HOOKS;

	(void)cookie;
	if (!probes || hook >= probes->hook_count || probes->hooks[hook].btf_id == 0)
		return -EINVAL;
	options->attach_btf_id = probes->hooks[hook].btf_id;
	options->attach_btf_obj_fd = probes->hooks[hook].btf_object_fd;
	return 0;
}

static int section_handlers_status = -1;

static void register_section_handlers_once(void)
{
	LIBBPF_OPTS(libbpf_prog_handler_opts, options,
		    .prog_prepare_load_fn = set_attach_btf_id);

	if (libbpf_register_prog_handler(VNFS_FENTRY_SECTION, BPF_PROG_TYPE_TRACING,
					 BPF_TRACE_FENTRY, &options) >= 0 &&
	    libbpf_register_prog_handler(VNFS_FEXIT_SECTION, BPF_PROG_TYPE_TRACING,
					 BPF_TRACE_FEXIT, &options) >= 0)
		section_handlers_status = 0;
}

static int register_section_handlers(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, register_section_handlers_once);
	return section_handlers_status;
}

/* Sets every hook slot's programs for this attempt's plan.  Returns -1 only
 * when the object cannot be prepared at all. */
static int prepare_programs(struct vnfs_probes *probes)
{
	struct vnfs_bpf *skeleton = probes->skeleton;

	bpf_program__set_autoload(skeleton->progs.drain_at_exit, probes->exit_drain_link == NULL);
	for (size_t i = 0; i < VNFS_MAX_HOOKS; i++) {
		struct bpf_program *fentry = hook_program(skeleton, "fentry", i);
		struct bpf_program *fexit = hook_program(skeleton, "fexit", i);
		struct bpf_program *kprobe = hook_program(skeleton, "kprobe", i);
		struct bpf_program *kretprobe = hook_program(skeleton, "kretprobe", i);
		struct hook_state *state = i < probes->hook_count ? &probes->hooks[i] : NULL;

		if (!fentry || !fexit || !kprobe || !kretprobe)
			return -1;
		bpf_program__set_autoload(fentry, false);
		bpf_program__set_autoload(fexit, false);
		bpf_program__set_autoload(kprobe, false);
		bpf_program__set_autoload(kretprobe, false);
		if (!state || state->plan == VNFS_ATTACH_NONE)
			continue;
		skeleton->rodata->hook_config[i] = state->config;
		if (state->plan == VNFS_ATTACH_FENTRY) {
			bpf_program__set_autoload(fentry, true);
			bpf_program__set_autoload(fexit, true);
			continue;
		}
		if (state->plan != VNFS_ATTACH_KPROBE)
			continue;
		if (state->config.object_argument >= KPROBE_ARGUMENTS)
			skeleton->rodata->hook_config[i].object_kind = VNFS_OBJECT_NONE;
		bpf_program__set_autoload(kprobe, true);
		bpf_program__set_autoload(kretprobe, true);
	}
	return 0;
}

static bool any_planned(const struct vnfs_probes *probes, enum vnfs_attach_method method)
{
	for (size_t i = 0; i < probes->hook_count; i++)
		if (probes->hooks[i].plan == method)
			return true;
	return false;
}

/* Attaches one function's planned pair.  Returns false when fentry failed
 * and the object must be reloaded with the function's next method. */
static bool attach_hook(struct vnfs_probes *probes, struct hook_state *state, size_t index)
{
	struct vnfs_bpf *skeleton = probes->skeleton;
	const char *function = state->hook->function;

	if (state->plan == VNFS_ATTACH_FENTRY) {
		state->entry_link = bpf_program__attach_trace(hook_program(skeleton, "fentry", index));
		if (state->entry_link)
			state->exit_link =
				bpf_program__attach_trace(hook_program(skeleton, "fexit", index));
		if (state->entry_link && state->exit_link) {
			state->method = VNFS_ATTACH_FENTRY;
			return true;
		}
		fentry_failed(probes, state, "attach failed: %s", strerror(errno));
		destroy_link_pair(state);
		return state->plan == VNFS_ATTACH_NONE;
	}
	if (state->plan != VNFS_ATTACH_KPROBE)
		return true;
	state->entry_link = bpf_program__attach_kprobe(hook_program(skeleton, "kprobe", index),
						       false, function);
	if (state->entry_link)
		state->exit_link = bpf_program__attach_kprobe(
			hook_program(skeleton, "kretprobe", index), true, function);
	if (state->entry_link && state->exit_link) {
		state->method = VNFS_ATTACH_KPROBE;
		return true;
	}
	kprobe_failed(state, "attach failed: %s", strerror(errno));
	destroy_link_pair(state);
	return true;
}

/* One round: open, configure, load, attach.  Returns 0 when the round
 * settled every function (attached or given up), 1 when another round is
 * needed, -1 on an error unrelated to the kernel's refusals. */
static int attempt(struct vnfs_probes *probes, char *error, size_t error_size)
{
	bool settled = true;
	int result, status;
	double started;

	started = milliseconds();
	if (register_section_handlers() != 0) {
		snprintf(error, error_size, "cannot register the probes' section handlers");
		return -1;
	}
	probes->skeleton = vnfs_bpf__open();
	vnfs_debug("open round: %.0f ms", milliseconds() - started);
	if (!probes->skeleton) {
		snprintf(error, error_size, "cannot open the BPF object: %s", strerror(errno));
		return -1;
	}
	probes->skeleton->rodata->page_shift = page_shift();
	started = milliseconds();
	status = prepare_programs(probes);
	vnfs_debug("attach targets set in %.0f ms", milliseconds() - started);
	if (status != 0 || (probes->pin && set_pin_paths(probes) != 0)) {
		snprintf(error, error_size, "the embedded BPF object does not match this helper");
		release_attempt(probes);
		return -1;
	}
	started = milliseconds();
	loading_probes = probes;
	result = vnfs_bpf__load(probes->skeleton);
	loading_probes = NULL;
	vnfs_debug("load round: %.0f ms", milliseconds() - started);
	if (result != 0) {
		bool fentry_planned = any_planned(probes, VNFS_ATTACH_FENTRY);

		/* Which program the kernel refused is not reported per program:
		 * every function of the refused kind moves on. */
		for (size_t i = 0; i < probes->hook_count; i++) {
			struct hook_state *state = &probes->hooks[i];

			if (fentry_planned && state->plan == VNFS_ATTACH_FENTRY)
				fentry_failed(probes, state, "load failed: %s", strerror(-result));
			else if (!fentry_planned && state->plan == VNFS_ATTACH_KPROBE)
				kprobe_failed(state, "load failed: %s", strerror(-result));
		}
		release_attempt(probes);
		return fentry_planned || any_planned(probes, VNFS_ATTACH_KPROBE) ? 1 : 0;
	}
	started = milliseconds();
	for (size_t i = 0; i < probes->hook_count; i++)
		if (!attach_hook(probes, &probes->hooks[i], i))
			settled = false;
	vnfs_debug("attach round: %.0f ms", milliseconds() - started);
	if (!settled) {
		release_attempt(probes);
		return 1;
	}
	return 0;
}

/* ------------------------------------------------------------- reports */

static bool any_attached(const struct vnfs_probes *probes)
{
	for (size_t i = 0; i < probes->hook_count; i++)
		if (probes->hooks[i].method != VNFS_ATTACH_NONE)
			return true;
	return false;
}

/* Appends to buffer at *length, keeping it terminated and never overflowing. */
static void append(char *buffer, size_t size, size_t *length, const char *format, ...)
{
	va_list arguments;
	int written;

	if (*length + 1 >= size)
		return;
	va_start(arguments, format);
	written = vsnprintf(buffer + *length, size - *length, format, arguments);
	va_end(arguments);
	if (written < 0)
		return;
	*length += (size_t)written < size - *length ? (size_t)written : size - *length - 1;
}

static void describe_failures(const struct vnfs_probes *probes, char *error, size_t error_size)
{
	size_t length = 0;

	append(error, error_size, &length,
	       "no NFS client function could be probed (tried per function):");
	for (size_t i = 0; i < probes->hook_count; i++) {
		const struct hook_state *state = &probes->hooks[i];

		if (state->absent)
			append(error, error_size, &length, "\n  %s: %s", state->hook->function,
			       state->note);
		else
			append(error, error_size, &length, "\n  %s: fentry: %s; kprobe: %s",
			       state->hook->function,
			       state->fentry_error[0] ? state->fentry_error : "not tried",
			       state->kprobe_error[0] ? state->kprobe_error : "not tried");
	}
}

/* A kprobe where fentry was tried and failed (mode auto). */
static bool fell_back(const struct vnfs_probes *probes, const struct hook_state *state)
{
	return probes->mode == VNFS_PROBE_AUTO && state->method == VNFS_ATTACH_KPROBE &&
	       state->fentry_error[0];
}

size_t vnfs_probes_describe(const struct vnfs_probes *probes, char *buffer, size_t size)
{
	size_t length = 0;

	if (size > 0)
		buffer[0] = '\0';
	for (size_t i = 0; i < probes->hook_count; i++) {
		const struct hook_state *state = &probes->hooks[i];

		if (state->method != VNFS_ATTACH_NONE)
			append(buffer, size, &length, "%s: %s%s%s%s\n", state->hook->function,
			       method_name(state->method), state->reused ? " (reused)" : "",
			       fell_back(probes, state) ? " after fentry: " : "",
			       fell_back(probes, state) ? state->fentry_error : "");
		else if (state->absent)
			append(buffer, size, &length, "%s: skipped (%s)\n", state->hook->function,
			       state->note);
		else
			append(buffer, size, &length, "%s: none (fentry: %s; kprobe: %s)\n",
			       state->hook->function, state->fentry_error, state->kprobe_error);
	}
	return length;
}

/* "open: fentry (nfs_file_open, nfs4_file_open, nfs_atomic_open)" */
static void log_operation(const struct vnfs_probes *probes, enum vnfs_operation operation)
{
	static const enum vnfs_attach_method methods[] = { VNFS_ATTACH_FENTRY,
							   VNFS_ATTACH_KPROBE };
	char line[512];
	size_t length = 0;

	append(line, sizeof(line), &length, "%s:", vnfs_operation_names[operation]);
	for (size_t m = 0; m < sizeof(methods) / sizeof(methods[0]); m++) {
		const char *separator = " (";
		bool any = false;

		for (size_t i = 0; i < probes->hook_count; i++) {
			const struct hook_state *state = &probes->hooks[i];

			if (state->hook->operation != operation || state->method != methods[m])
				continue;
			if (!any)
				append(line, sizeof(line), &length, " %s", method_name(methods[m]));
			append(line, sizeof(line), &length, "%s%s", separator, state->hook->function);
			separator = ", ";
			any = true;
		}
		if (any)
			append(line, sizeof(line), &length, ")");
	}
	if (vnfs_probes_attach_method(probes, operation) == VNFS_ATTACH_NONE) {
		append(line, sizeof(line), &length, " not attached");
		for (size_t i = 0; i < probes->hook_count; i++) {
			const struct hook_state *state = &probes->hooks[i];

			if (state->hook->operation == operation)
				append(line, sizeof(line), &length, " [%s: %s]",
				       state->hook->function,
				       state->absent ? state->note : state->kprobe_error);
		}
		vnfs_warning("%s", line);
		return;
	}
	vnfs_info("%s", line);
	for (size_t i = 0; i < probes->hook_count; i++) {
		const struct hook_state *state = &probes->hooks[i];

		if (state->hook->operation == operation && state->absent)
			vnfs_info("  %s skipped: %s", state->hook->function, state->note);
		else if (state->hook->operation == operation && fell_back(probes, state))
			vnfs_info("  %s: kprobe because fentry: %s", state->hook->function,
				  state->fentry_error);
	}
}

enum vnfs_attach_method vnfs_probes_attach_method(const struct vnfs_probes *probes,
						  enum vnfs_operation operation)
{
	enum vnfs_attach_method method = VNFS_ATTACH_NONE;

	if (!probes)
		return VNFS_ATTACH_NONE;
	for (size_t i = 0; i < probes->hook_count; i++) {
		const struct hook_state *state = &probes->hooks[i];

		if (state->hook->operation != operation || state->method == VNFS_ATTACH_NONE)
			continue;
		if (state->method == VNFS_ATTACH_KPROBE)
			return VNFS_ATTACH_KPROBE;
		method = state->method;
	}
	return method;
}

/* ------------------------------------------------------------ open/close */

/* Tasks keep their calls pending (bpf/vnfs.h) only once the drain at task
 * exit runs: without it, what a task had pending when it exited would be
 * lost, so the probes then move every call out at once. */
static void attach_exit_drain(struct vnfs_probes *probes)
{
	char path[PATH_MAX];

	if (!probes->exit_drain_link) {
		probes->exit_drain_link = bpf_program__attach_raw_tracepoint(
			probes->skeleton->progs.drain_at_exit, EXIT_DRAIN_TRACEPOINT);
		if (!probes->exit_drain_link) {
			vnfs_warning("cannot attach the drain at task exit (%s): calls are "
				     "counted one at a time", strerror(errno));
			return;
		}
		/* The hooks stay attached after the helper exits (pinned): an
		 * exit drain that goes with the helper would leave them keeping
		 * calls nobody moves out of an exiting task. */
		if (probes->pin &&
		    (link_pin_path(path, sizeof(path), probes->pin_dir, EXIT_DRAIN_TRACEPOINT,
				   EXIT_DRAIN_PIN_END) != 0 ||
		     bpf_link__pin(probes->exit_drain_link, path) != 0)) {
			vnfs_warning("cannot pin the drain at task exit (%s): calls are counted "
				     "one at a time", strerror(errno));
			bpf_link__destroy(probes->exit_drain_link);
			probes->exit_drain_link = NULL;
			return;
		}
	}
	probes->skeleton->data->pending_limit = VNFS_PENDING_CALLS;
}

static int finish_open(struct vnfs_probes *probes, char *error, size_t error_size)
{
	struct vnfs_bpf *skeleton = probes->skeleton;
	__u32 key, value;
	void *mapping;

	if (probes->pin) {
		key = ABI_VERSION;
		value = VNFS_ABI_VERSION;
		if (bpf_map_update_elem(bpf_map__fd(skeleton->maps.abi), &key, &value, BPF_ANY) != 0)
			goto map_error;
		key = ABI_STEP_STATS_SIZE;
		value = sizeof(struct vnfs_step_stats);
		if (bpf_map_update_elem(bpf_map__fd(skeleton->maps.abi), &key, &value, BPF_ANY) != 0)
			goto map_error;
		for (size_t i = 0; i < probes->hook_count; i++)
			if (!probes->hooks[i].reused && probes->hooks[i].method != VNFS_ATTACH_NONE)
				pin_links(probes, &probes->hooks[i]);
	}
	mapping = mmap(NULL, STEP_ACTIVITY_MAPPING_SIZE, PROT_READ, MAP_SHARED,
		       bpf_map__fd(skeleton->maps.step_activity), 0);
	if (mapping == MAP_FAILED) {
		snprintf(error, error_size, "cannot map step_activity: %s", strerror(errno));
		return -1;
	}
	probes->step_activity = mapping;
	mapping = mmap(NULL, UNATTRIBUTED_ENTRIES_MAPPING_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		       bpf_map__fd(skeleton->maps.unattributed_entries), 0);
	if (mapping == MAP_FAILED) {
		snprintf(error, error_size, "cannot map unattributed_entries: %s", strerror(errno));
		return -1;
	}
	probes->unattributed_entries = mapping;
	return 0;
map_error:
	snprintf(error, error_size, "cannot write the pinned abi map: %s", strerror(errno));
	return -1;
}

/* The BPF object embedded in the helper (about 1.2 MiB of its read-only
 * data) is read only to load the probes: once they are loaded its pages are
 * handed back.  They are clean pages of the executable, read again from the
 * file should anything touch them later. */
static void release_embedded_object(void)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), start, first, end;
	size_t size = 0;

	start = (uintptr_t)vnfs_bpf__elf_bytes(&size);
	first = (start + page - 1) & ~(page - 1);
	end = (start + size) & ~(page - 1);
	if (end > first && madvise((void *)first, end - first, MADV_DONTNEED) != 0)
		vnfs_debug("cannot release the embedded BPF object's pages: %s", strerror(errno));
}

int vnfs_probes_open(struct vnfs_probes **result, const struct vnfs_probes_options *options,
		     char *error, size_t error_size)
{
	struct vnfs_probes *probes;
	bool had_pins = false;
	int round = 0, status;
	double started;

	*result = NULL;
	probes = calloc(1, sizeof(*probes));
	if (!probes) {
		snprintf(error, error_size, "out of memory");
		return -1;
	}
	pthread_mutex_init(&probes->registry_lock, NULL);
	probes->cgroup_root_fd = -1;
	probes->mode = options->mode;
	probes->pin = options->pin;
	snprintf(probes->pin_dir, sizeof(probes->pin_dir), "%s",
		 options->pin_dir ? options->pin_dir : VNFS_DEFAULT_PIN_DIR);
	libbpf_set_print(libbpf_to_log);

	started = milliseconds();
	plan_hooks(probes);
	vnfs_debug("BTF prototypes read in %.0f ms", milliseconds() - started);
	if (probes->pin) {
		if (check_bpffs(probes->pin_dir, error, error_size) != 0)
			goto fail;
		status = check_pinned_abi(probes->pin_dir, error, error_size);
		if (status < 0 || make_pin_dir(probes->pin_dir, error, error_size) != 0)
			goto fail;
		had_pins = status == 1;
		if (had_pins) {
			for (size_t i = 0; i < probes->hook_count; i++)
				if (!probes->hooks[i].absent)
					reuse_pinned_links(probes, &probes->hooks[i]);
			reuse_pinned_exit_drain(probes);
			remove_foreign_links(probes);
		}
	}
	do {
		status = attempt(probes, error, error_size);
	} while (status == 1 && ++round < MAX_ATTEMPTS);
	kernel_btf_free(&probes->kernel_btf);
	if (status < 0)
		goto fail;
	if (status == 1) {
		snprintf(error, error_size, "the probes did not settle in %d rounds", MAX_ATTEMPTS);
		goto fail;
	}
	if (!any_attached(probes)) {
		describe_failures(probes, error, error_size);
		goto fail;
	}
	attach_exit_drain(probes);
	if (finish_open(probes, error, error_size) != 0)
		goto fail;
	for (int operation = 0; operation < VNFS_OP_COUNT; operation++)
		log_operation(probes, operation);
	vnfs_info("probes ready in %.0f ms", milliseconds() - started);
	release_embedded_object();
	*result = probes;
	return 0;
fail:
	if (probes->pin && !had_pins) {
		char ignored[256];

		/* Nothing of ours may keep counting after a failed start. */
		for (size_t i = 0; i < probes->hook_count; i++)
			destroy_link_pair(&probes->hooks[i]);
		bpf_link__destroy(probes->exit_drain_link);
		probes->exit_drain_link = NULL;
		vnfs_bpf__destroy(probes->skeleton);
		probes->skeleton = NULL;
		if (vnfs_probes_unpin(probes->pin_dir, ignored, sizeof(ignored)) != 0)
			vnfs_warning("%s", ignored);
	}
	vnfs_probes_close(probes);
	return -1;
}

/* Lets go of a link without detaching it when it is pinned. */
static void release_link(struct bpf_link *link, bool pinned)
{
	if (!link)
		return;
	if (pinned) {
		/* destroy() would detach (a perf link is even disabled): keep the
		 * kernel object, close only our descriptor. */
		bpf_link__disconnect(link);
		close(bpf_link__fd(link));
	}
	bpf_link__destroy(link);
}

void vnfs_probes_close(struct vnfs_probes *probes)
{
	if (!probes)
		return;
	for (size_t i = 0; i < probes->hook_count; i++) {
		release_link(probes->hooks[i].entry_link, probes->pin);
		release_link(probes->hooks[i].exit_link, probes->pin);
	}
	release_link(probes->exit_drain_link, probes->pin);
	if (probes->step_activity)
		munmap((void *)probes->step_activity, STEP_ACTIVITY_MAPPING_SIZE);
	if (probes->unattributed_entries)
		munmap(probes->unattributed_entries, UNATTRIBUTED_ENTRIES_MAPPING_SIZE);
	if (probes->cgroup_root_fd >= 0)
		close(probes->cgroup_root_fd);
	free(probes->watched);
	vnfs_bpf__destroy(probes->skeleton);
	kernel_btf_free(&probes->kernel_btf);
	pthread_mutex_destroy(&probes->registry_lock);
	free(probes);
}

/* ------------------------------------------------------------- registry */

/* Called with registry_lock held, after the registry changed. */
static int bump_generation(struct vnfs_probes *probes)
{
	int fd = bpf_map__fd(probes->skeleton->maps.registry_generation);
	__u32 key = 0, generation = 0;

	if (bpf_map_lookup_elem(fd, &key, &generation) != 0)
		return -1;
	generation++;
	return bpf_map_update_elem(fd, &key, &generation, BPF_ANY);
}

int vnfs_probes_register_cgroup(struct vnfs_probes *probes, uint64_t cgroup_id, uint32_t slot)
{
	struct vnfs_registration registration = { .slot = slot };
	__u64 key = cgroup_id;
	int status;

	if (!probes || slot >= VNFS_MAX_STEPS || cgroup_id == 0)
		return -1;
	pthread_mutex_lock(&probes->registry_lock);
	status = bpf_map_update_elem(bpf_map__fd(probes->skeleton->maps.registry), &key,
				     &registration, BPF_ANY);
	if (status == 0)
		status = bump_generation(probes);
	pthread_mutex_unlock(&probes->registry_lock);
	return status == 0 ? 0 : -1;
}

int vnfs_probes_unregister_cgroup(struct vnfs_probes *probes, uint64_t cgroup_id)
{
	__u64 key = cgroup_id;
	int status;

	if (!probes)
		return -1;
	pthread_mutex_lock(&probes->registry_lock);
	status = bpf_map_delete_elem(bpf_map__fd(probes->skeleton->maps.registry), &key);
	if (status == 0)
		status = bump_generation(probes);
	pthread_mutex_unlock(&probes->registry_lock);
	return status == 0 ? 0 : -1;
}

int vnfs_probes_registered(struct vnfs_probes *probes, uint64_t cgroup_id, uint32_t *slot)
{
	struct vnfs_registration registration;
	__u64 key = cgroup_id;

	if (!probes ||
	    bpf_map_lookup_elem(bpf_map__fd(probes->skeleton->maps.registry), &key,
				&registration) != 0)
		return -1;
	*slot = registration.slot;
	return 0;
}

uint64_t vnfs_probes_step_activity(const struct vnfs_probes *probes, uint32_t slot)
{
	if (!probes || !probes->step_activity || slot >= VNFS_MAX_STEPS)
		return 0;
	return probes->step_activity[slot];
}

int vnfs_probes_read_step_stats(const struct vnfs_probes *probes, uint32_t slot,
				struct vnfs_step_stats *stats)
{
	__u32 key = slot;

	if (!probes || slot >= VNFS_MAX_STEPS)
		return -1;
	return bpf_map_lookup_elem(bpf_map__fd(probes->skeleton->maps.step_stats), &key, stats);
}

/* ------------------------------------------------------------- map walks */

typedef int (*entry_fn)(const void *key, const void *value, void *context);

/* Calls fn for each entry of a hash map.  Entries deleted during the walk are
 * skipped. */
static int for_each_entry(int fd, size_t key_size, size_t value_size, entry_fn fn,
			  void *context)
{
	unsigned char *key = malloc(key_size), *next = malloc(key_size);
	unsigned char *value = malloc(value_size);
	bool first = true;
	int status = 0;

	if (!key || !next || !value) {
		status = -1;
		goto out;
	}
	while (bpf_map_get_next_key(fd, first ? NULL : key, next) == 0) {
		first = false;
		memcpy(key, next, key_size);
		if (bpf_map_lookup_elem(fd, key, value) != 0) {
			if (errno == ENOENT)
				continue;
			status = -1;
			goto out;
		}
		status = fn(key, value, context);
		if (status != 0)
			goto out;
	}
	if (errno != ENOENT)
		status = -1;
out:
	free(key);
	free(next);
	free(value);
	return status;
}

/* breakdown_stats read whole, for summing per process name or per mount. */
struct breakdown_entry {
	struct vnfs_breakdown_key key;
	struct vnfs_breakdown_stats stats;
};

struct breakdown_entries {
	struct breakdown_entry *entries;
	size_t count, capacity;
};

static int collect_breakdown(const void *key, const void *value, void *context)
{
	struct breakdown_entries *collected = context;

	if (collected->count == collected->capacity) {
		size_t capacity = collected->capacity ? 2 * collected->capacity : 64;
		struct breakdown_entry *entries =
			realloc(collected->entries, capacity * sizeof(*entries));

		if (!entries)
			return -1;
		collected->entries = entries;
		collected->capacity = capacity;
	}
	memcpy(&collected->entries[collected->count].key, key, sizeof(struct vnfs_breakdown_key));
	memcpy(&collected->entries[collected->count].stats, value,
	       sizeof(struct vnfs_breakdown_stats));
	collected->count++;
	return 0;
}

/* Reads every entry (the caller frees collected->entries). */
static int read_breakdown(struct vnfs_probes *probes, struct breakdown_entries *collected)
{
	memset(collected, 0, sizeof(*collected));
	if (for_each_entry(bpf_map__fd(probes->skeleton->maps.breakdown_stats),
			   sizeof(struct vnfs_breakdown_key), sizeof(struct vnfs_breakdown_stats),
			   collect_breakdown, collected) != 0) {
		free(collected->entries);
		collected->entries = NULL;
		return -1;
	}
	return 0;
}

static int compare_slots(__u32 left, __u32 right)
{
	return left < right ? -1 : left > right;
}

static int by_slot_and_comm(const void *left, const void *right)
{
	const struct vnfs_breakdown_key *a = left, *b = right;

	return a->slot != b->slot ? compare_slots(a->slot, b->slot)
				  : strncmp(a->comm, b->comm, VNFS_COMM_LEN);
}

static int by_slot_and_device(const void *left, const void *right)
{
	const struct vnfs_breakdown_key *a = left, *b = right;

	return a->slot != b->slot ? compare_slots(a->slot, b->slot)
				  : compare_slots(a->device, b->device);
}

static void add_breakdown(struct vnfs_breakdown_stats *total,
			  const struct vnfs_breakdown_stats *part)
{
	total->read_ops += part->read_ops;
	total->read_bytes += part->read_bytes;
	total->write_ops += part->write_ops;
	total->write_bytes += part->write_bytes;
	total->other_ops += part->other_ops;
	total->errors += part->errors;
	total->time_ns += part->time_ns;
}

_Static_assert(offsetof(struct breakdown_entry, key) == 0, "sorting compares the key first");

typedef int (*group_fn)(const struct vnfs_breakdown_key *key,
			const struct vnfs_breakdown_stats *total, void *context);

/* Sorts the entries with compare and calls fn once per run of equal ones,
 * with their sum. */
static int for_each_group(struct breakdown_entries *collected,
			  int (*compare)(const void *, const void *), group_fn fn, void *context)
{
	int status = 0;

	qsort(collected->entries, collected->count, sizeof(*collected->entries), compare);
	for (size_t first = 0, next; status == 0 && first < collected->count; first = next) {
		struct vnfs_breakdown_stats total = { 0 };

		for (next = first; next < collected->count &&
				   compare(&collected->entries[next], &collected->entries[first]) == 0;
		     next++)
			add_breakdown(&total, &collected->entries[next].stats);
		status = fn(&collected->entries[first].key, &total, context);
	}
	return status;
}

struct process_walk {
	vnfs_process_fn fn;
	void *context;
};

static int call_process(const struct vnfs_breakdown_key *key,
			const struct vnfs_breakdown_stats *total, void *context)
{
	const struct process_walk *walk = context;
	struct vnfs_process_key process = { .slot = key->slot };
	struct vnfs_process_stats stats = {
		.read_ops = total->read_ops, .read_bytes = total->read_bytes,
		.write_ops = total->write_ops, .write_bytes = total->write_bytes,
		.other_ops = total->other_ops,
	};

	memcpy(process.comm, key->comm, VNFS_COMM_LEN);
	return walk->fn(&process, &stats, walk->context);
}

struct mount_walk {
	vnfs_mount_fn fn;
	void *context;
};

static int call_mount(const struct vnfs_breakdown_key *key,
		      const struct vnfs_breakdown_stats *total, void *context)
{
	const struct mount_walk *walk = context;
	struct vnfs_mount_key mount = { .slot = key->slot, .device = key->device };
	struct vnfs_mount_stats stats = {
		.ops = total->read_ops + total->write_ops + total->other_ops,
		.errors = total->errors, .time_ns = total->time_ns,
		.read_bytes = total->read_bytes, .write_bytes = total->write_bytes,
	};

	return walk->fn(&mount, &stats, walk->context);
}

int vnfs_probes_for_each_breakdown(struct vnfs_probes *probes, vnfs_process_fn process_fn,
				   void *process_context, vnfs_mount_fn mount_fn,
				   void *mount_context)
{
	struct process_walk processes = { process_fn, process_context };
	struct mount_walk mounts = { mount_fn, mount_context };
	struct breakdown_entries collected;
	int status;

	if (read_breakdown(probes, &collected) != 0)
		return -1;
	status = for_each_group(&collected, by_slot_and_comm, call_process, &processes);
	if (status == 0)
		status = for_each_group(&collected, by_slot_and_device, call_mount, &mounts);
	free(collected.entries);
	return status;
}

struct unattributed_walk {
	vnfs_unattributed_fn fn;
	void *context;
};

static int call_unattributed(const void *key, const void *value, void *walk)
{
	const struct unattributed_walk *unattributed_walk = walk;

	return unattributed_walk->fn(key, value, unattributed_walk->context);
}

static int64_t monotonic_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

int vnfs_probes_for_each_unattributed(struct vnfs_probes *probes, vnfs_unattributed_fn fn,
				      void *context)
{
	struct unattributed_walk walk = { fn, context };
	struct vnfs_unattributed_expiry expired;
	int64_t now = monotonic_ms();
	int status;

	status = for_each_entry(bpf_map__fd(probes->skeleton->maps.unattributed_stats),
				sizeof(struct vnfs_unattributed_key),
				sizeof(struct vnfs_unattributed_stats), call_unattributed, &walk);
	/* After the walk: the caller saw the rows once more as they were, and
	 * sees their calls in the [expired] rows from the next walk on. */
	if (status == 0 && now >= probes->next_expiry_ms) {
		probes->next_expiry_ms = now + VNFS_UNATTRIBUTED_EXPIRY_PERIOD_MS;
		if (vnfs_probes_expire_unattributed(probes, now, VNFS_UNATTRIBUTED_IDLE_MS,
						    &expired) != 0)
			vnfs_warning("looking for unattributed rows to expire failed: tried again in "
				     "%d s", VNFS_UNATTRIBUTED_EXPIRY_PERIOD_MS / 1000);
	}
	return status;
}

/* ------------------------------------------------ unattributed row expiry */

/* Every row of unattributed_stats, read whole. */
struct unattributed_row {
	struct vnfs_unattributed_key key;
	struct vnfs_unattributed_stats stats;
};

struct unattributed_rows {
	struct unattributed_row *rows;
	size_t count, capacity;
};

static int collect_unattributed(const void *key, const void *value, void *context)
{
	struct unattributed_rows *collected = context;

	if (collected->count == collected->capacity) {
		size_t capacity = collected->capacity ? 2 * collected->capacity : 64;
		struct unattributed_row *rows = realloc(collected->rows, capacity * sizeof(*rows));

		if (!rows)
			return -1;
		collected->rows = rows;
		collected->capacity = capacity;
	}
	memcpy(&collected->rows[collected->count].key, key, sizeof(struct vnfs_unattributed_key));
	memcpy(&collected->rows[collected->count].stats, value,
	       sizeof(struct vnfs_unattributed_stats));
	collected->count++;
	return 0;
}

static int by_unattributed_key(const void *left, const void *right)
{
	return memcmp(left, right, sizeof(struct vnfs_unattributed_key));
}

_Static_assert(offsetof(struct unattributed_row, key) == 0, "rows sort by their key");
_Static_assert(offsetof(struct watched_row, key) == 0, "watched rows sort by their key");

static uint64_t unattributed_calls(const struct vnfs_unattributed_stats *stats)
{
	uint64_t calls = 0;

	for (int operation = 0; operation < VNFS_OP_COUNT; operation++)
		calls += stats->count[operation];
	return calls;
}

static bool has_comm(const struct vnfs_unattributed_key *key, const char *comm)
{
	return key->cgroup_id == 0 && strncmp(key->comm, comm, VNFS_COMM_LEN) == 0;
}

/* The cgroup2 hierarchy the probes' cgroup ids come from (wherever it is
 * mounted: /sys/fs/cgroup, .../unified on hybrid systems), or -1. */
static int cgroup_root(struct vnfs_probes *probes)
{
	struct mntent *mount;
	FILE *mounts;

	if (probes->cgroup_root_tried)
		return probes->cgroup_root_fd;
	probes->cgroup_root_tried = true;
	mounts = setmntent("/proc/self/mounts", "re");
	while (mounts && probes->cgroup_root_fd < 0 && (mount = getmntent(mounts)) != NULL)
		if (strcmp(mount->mnt_type, "cgroup2") == 0)
			probes->cgroup_root_fd =
				open(mount->mnt_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mounts)
		endmntent(mounts);
	if (probes->cgroup_root_fd < 0)
		vnfs_warning("no cgroup2 hierarchy found: unattributed rows expire only when idle");
	return probes->cgroup_root_fd;
}

/* 1 when the cgroup of id no longer exists, 0 when it does or that cannot
 * be told.  A cgroup2 id is the file handle of its directory (kernfs). */
static int cgroup_is_gone(struct vnfs_probes *probes, uint64_t id)
{
	union {
		struct file_handle handle;
		char space[sizeof(struct file_handle) + sizeof(uint64_t)];
	} buffer;
	int root = cgroup_root(probes), fd;

	if (root < 0 || id == 0)
		return 0;
	buffer.handle.handle_bytes = sizeof(uint64_t);
	buffer.handle.handle_type = FILEID_KERNFS;
	memcpy(buffer.handle.f_handle, &id, sizeof(id));
	fd = open_by_handle_at(root, &buffer.handle, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno == ESTALE || errno == ENOENT;
}

static void add_unattributed_stats(struct vnfs_unattributed_stats *total,
				   const struct vnfs_unattributed_stats *part)
{
	for (int operation = 0; operation < VNFS_OP_COUNT; operation++)
		total->count[operation] += part->count[operation];
	total->errors += part->errors;
	total->read_bytes += part->read_bytes;
	total->write_bytes += part->write_bytes;
}

/* Adds 1 to a health counter the probes never write (no race with them). */
static void helper_health_add(struct vnfs_probes *probes, __u32 counter)
{
	int fd = bpf_map__fd(probes->skeleton->maps.health);
	__u64 value = 0;

	if (bpf_map_lookup_elem(fd, &counter, &value) != 0)
		return;
	value++;
	if (bpf_map_update_elem(fd, &counter, &value, BPF_ANY) != 0)
		vnfs_debug("cannot count an expired row: %s", strerror(errno));
}

/*
 * Moves row's counts into its uid's [expired] row and deletes it.  The row
 * is read again first: what a probe added since the walk goes along (a probe
 * adding between that read and the delete would be lost; the row is idle or
 * its cgroup gone, so none should).  Returns 0, or -1 with nothing changed.
 */
static int fold_into_expired(struct vnfs_probes *probes, const struct unattributed_row *row)
{
	int fd = bpf_map__fd(probes->skeleton->maps.unattributed_stats);
	struct vnfs_unattributed_key expired_key = { .uid = row->key.uid };
	struct vnfs_unattributed_stats current, before = { 0 }, after;

	memcpy(expired_key.comm, VNFS_EXPIRED_COMM, sizeof(VNFS_EXPIRED_COMM));
	if (bpf_map_lookup_elem(fd, &row->key, &current) != 0)
		return -1;
	if (bpf_map_lookup_elem(fd, &expired_key, &before) != 0 && errno != ENOENT)
		return -1;
	after = before;
	add_unattributed_stats(&after, &current);
	if (bpf_map_update_elem(fd, &expired_key, &after, BPF_ANY) != 0)
		return -1; /* full: the row stays as it is */
	if (bpf_map_delete_elem(fd, &row->key) != 0) {
		if (bpf_map_update_elem(fd, &expired_key, &before, BPF_ANY) != 0)
			vnfs_error("unattributed uid %u: a row is counted twice (its [expired] row "
				   "could not be restored: %s)", row->key.uid, strerror(errno));
		return -1;
	}
	/* One row of its own fewer: room for a new one (see vnfs.h). */
	if (row->key.cgroup_id != 0 && probes->unattributed_entries)
		__atomic_fetch_sub(probes->unattributed_entries, 1, __ATOMIC_RELAXED);
	helper_health_add(probes, VNFS_HEALTH_UNATTRIBUTED_EXPIRED);
	return 0;
}

/* What the last pass knew of key, or NULL. */
static const struct watched_row *find_watched(const struct vnfs_probes *probes,
					      const struct vnfs_unattributed_key *key)
{
	return bsearch(key, probes->watched, probes->watched_count, sizeof(*probes->watched),
		       by_unattributed_key);
}

/* Decides for one row: 1 when it is to expire (*gone says why), else 0
 * with its watch entry filled in. */
static int should_expire(struct vnfs_probes *probes, const struct unattributed_row *row,
			 int64_t now_ms, int64_t idle_ms, struct watched_row *watch, bool *gone)
{
	const struct watched_row *before = find_watched(probes, &row->key);

	watch->key = row->key;
	watch->calls = unattributed_calls(&row->stats);
	watch->still_since_ms =
		before && before->calls == watch->calls ? before->still_since_ms : now_ms;
	*gone = false;
	if (has_comm(&row->key, VNFS_EXPIRED_COMM))
		return 0; /* where the others go */
	*gone = cgroup_is_gone(probes, row->key.cgroup_id) == 1;
	return *gone || now_ms - watch->still_since_ms >= idle_ms;
}

int vnfs_probes_expire_unattributed(struct vnfs_probes *probes, int64_t now_ms, int64_t idle_ms,
				    struct vnfs_unattributed_expiry *result)
{
	struct unattributed_rows collected = { 0 };
	struct watched_row *watched;
	size_t kept = 0;
	bool gone;

	memset(result, 0, sizeof(*result));
	if (!probes || for_each_entry(bpf_map__fd(probes->skeleton->maps.unattributed_stats),
				      sizeof(struct vnfs_unattributed_key),
				      sizeof(struct vnfs_unattributed_stats), collect_unattributed,
				      &collected) != 0) {
		free(collected.rows);
		return -1;
	}
	watched = calloc(collected.count ? collected.count : 1, sizeof(*watched));
	if (!watched) {
		free(collected.rows);
		return -1;
	}
	for (size_t i = 0; i < collected.count; i++) {
		const struct unattributed_row *row = &collected.rows[i];

		if (!should_expire(probes, row, now_ms, idle_ms, &watched[kept], &gone)) {
			kept++;
		} else if (fold_into_expired(probes, row) == 0) {
			result->gone += gone;
			result->idle += !gone;
		} else {
			result->failed++;
			kept++;
		}
	}
	qsort(watched, kept, sizeof(*watched), by_unattributed_key);
	free(probes->watched);
	probes->watched = watched;
	probes->watched_count = kept;
	free(collected.rows);
	if (result->gone + result->idle > 0)
		vnfs_info("unattributed: %u rows folded into their uid's %s row (%u of removed "
			  "cgroups, %u idle)", result->gone + result->idle, VNFS_EXPIRED_COMM,
			  result->gone, result->idle);
	if (result->failed > 0)
		vnfs_warning("unattributed: %u rows to expire could not be folded (map full?): "
			     "kept", result->failed);
	return 0;
}

/* Keys of one slot collected during a walk, deleted after it (deleting
 * while walking would restart get_next_key). */
struct slot_keys {
	uint32_t slot;
	size_t key_size;
	size_t count;
	size_t capacity;
	unsigned char *keys;
};

static int collect_slot_key(const void *key, const void *value, void *context)
{
	struct slot_keys *collected = context;
	uint32_t slot;

	(void)value;
	memcpy(&slot, key, sizeof(slot)); /* the key starts with the slot */
	if (slot != collected->slot)
		return 0;
	if (collected->count == collected->capacity) {
		size_t capacity = collected->capacity ? 2 * collected->capacity : 64;
		unsigned char *keys = realloc(collected->keys, capacity * collected->key_size);

		if (!keys)
			return -1;
		collected->keys = keys;
		collected->capacity = capacity;
	}
	memcpy(collected->keys + collected->count++ * collected->key_size, key,
	       collected->key_size);
	return 0;
}

static int delete_slot_entries(int fd, size_t key_size, size_t value_size, uint32_t slot)
{
	struct slot_keys collected = { .slot = slot, .key_size = key_size };
	int status = for_each_entry(fd, key_size, value_size, collect_slot_key, &collected);

	for (size_t i = 0; status == 0 && i < collected.count; i++)
		if (bpf_map_delete_elem(fd, collected.keys + i * key_size) != 0 && errno != ENOENT)
			status = -1;
	free(collected.keys);
	return status;
}

_Static_assert(offsetof(struct vnfs_breakdown_key, slot) == 0, "slot first in the key");

int vnfs_probes_reset_slot(struct vnfs_probes *probes, uint32_t slot)
{
	static const struct vnfs_step_stats zero;
	const __u64 no_activity = 0;
	__u32 key = slot;

	if (!probes || slot >= VNFS_MAX_STEPS)
		return -1;
	if (bpf_map_update_elem(bpf_map__fd(probes->skeleton->maps.step_stats), &key, &zero,
				BPF_ANY) != 0 ||
	    bpf_map_update_elem(bpf_map__fd(probes->skeleton->maps.step_activity), &key,
				&no_activity, BPF_ANY) != 0)
		return -1;
	if (delete_slot_entries(bpf_map__fd(probes->skeleton->maps.breakdown_stats),
				sizeof(struct vnfs_breakdown_key), sizeof(struct vnfs_breakdown_stats),
				slot) != 0)
		return -1;
	/* After the rows: the slot's next step may make its own 64. */
	return bpf_map_update_elem(bpf_map__fd(probes->skeleton->maps.breakdown_entries), &key,
				   &no_activity, BPF_ANY);
}

int vnfs_probes_read_health(struct vnfs_probes *probes, uint64_t counters[VNFS_HEALTH_COUNTERS])
{
	int fd;

	if (!probes)
		return -1;
	fd = bpf_map__fd(probes->skeleton->maps.health);
	for (__u32 index = 0; index < VNFS_HEALTH_COUNTERS; index++) {
		__u64 value = 0;

		if (bpf_map_lookup_elem(fd, &index, &value) != 0)
			return -1;
		counters[index] = value;
	}
	return 0;
}

/* -------------------------------------------------------- counter source */

/* The collector's view of the functions above (helper/counters.h): each
 * takes the probes as the source's context. */

static uint64_t source_step_activity(void *probes, uint32_t slot)
{
	return vnfs_probes_step_activity(probes, slot);
}

static int source_read_step_stats(void *probes, uint32_t slot, struct vnfs_step_stats *stats)
{
	return vnfs_probes_read_step_stats(probes, slot, stats);
}

static int source_for_each_breakdown(void *probes, vnfs_process_fn process_fn,
				     void *process_context, vnfs_mount_fn mount_fn,
				     void *mount_context)
{
	return vnfs_probes_for_each_breakdown(probes, process_fn, process_context, mount_fn,
					      mount_context);
}

static int source_for_each_unattributed(void *probes, vnfs_unattributed_fn fn, void *context)
{
	return vnfs_probes_for_each_unattributed(probes, fn, context);
}

static int source_read_health(void *probes, uint64_t counters[VNFS_HEALTH_COUNTERS])
{
	return vnfs_probes_read_health(probes, counters);
}

static enum vnfs_attach_method source_attach_method(void *probes, enum vnfs_operation operation)
{
	return vnfs_probes_attach_method(probes, operation);
}

static int source_unregister_cgroup(void *probes, uint64_t cgroup_id)
{
	return vnfs_probes_unregister_cgroup(probes, cgroup_id);
}

static int source_reset_slot(void *probes, uint32_t slot)
{
	return vnfs_probes_reset_slot(probes, slot);
}

struct vnfs_counter_source vnfs_probes_counter_source(struct vnfs_probes *probes)
{
	return (struct vnfs_counter_source){
		.context = probes,
		.step_activity = source_step_activity,
		.read_step_stats = source_read_step_stats,
		.for_each_breakdown = source_for_each_breakdown,
		.for_each_unattributed = source_for_each_unattributed,
		.read_health = source_read_health,
		.attach_method = source_attach_method,
		.unregister_cgroup = source_unregister_cgroup,
		.reset_slot = source_reset_slot,
	};
}
