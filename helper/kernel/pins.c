/*
 * pins.c — the probes' pins on bpffs, so that counting survives the helper:
 * maps at <pin_dir>/<map name>, links at <pin_dir>/links/<function>-entry|
 * -exit (and the drain at task exit), and a pinned `abi` map recording
 * VNFS_ABI_VERSION and sizeof(struct vnfs_step_stats).  A helper finding
 * pins of its own ABI reuses the maps and the links (the old programs never
 * stop counting); pins of another ABI are removed first.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "helper/kernel/probes_state.h"
#include "lib/log.h"

/* After bpf/vnfs.h (through probes.h): the skeleton uses its structs. */
#include "bpf/vnfs.skel.h"

static int join_path(char *buffer, size_t size, const char *directory, const char *name)
{
	int length = snprintf(buffer, size, "%s/%s", directory, name);

	return length < 0 || (size_t)length >= size ? -1 : 0;
}

int pins_link_path(char *buffer, size_t size, const char *pin_dir, const char *function,
			 const char *end)
{
	int length = snprintf(buffer, size, "%s/links/%s-%s", pin_dir, function, end);

	return length < 0 || (size_t)length >= size ? -1 : 0;
}

/* Removes the files of directory (not recursive), counted in *removed, and
 * the directory. */
static int remove_directory(const char *directory, size_t *removed, char *error,
			    size_t error_size)
{
	char path[PATH_MAX];
	struct dirent *entry;
	DIR *handle = opendir(directory);

	if (!handle) {
		if (errno == ENOENT)
			return 0;
		snprintf(error, error_size, "cannot open %s: %s", directory, strerror(errno));
		return -1;
	}
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
		(*removed)++;
	}
	closedir(handle);
	if (rmdir(directory) != 0 && errno != ENOENT) {
		snprintf(error, error_size, "cannot remove %s: %s", directory, strerror(errno));
		return -1;
	}
	return 0;
}

int vnfs_probes_unpin(const char *pin_dir, size_t *removed, char *error, size_t error_size)
{
	char links[PATH_MAX];
	size_t ignored = 0;

	if (!removed)
		removed = &ignored;
	*removed = 0;
	if (!pin_dir)
		pin_dir = VNFS_DEFAULT_PIN_DIR;
	if (join_path(links, sizeof(links), pin_dir, "links") != 0) {
		snprintf(error, error_size, "pin directory path too long: %s", pin_dir);
		return -1;
	}
	if (remove_directory(links, removed, error, error_size) != 0 ||
	    remove_directory(pin_dir, removed, error, error_size) != 0)
		return -1;
	/* The kprobe path's return events outlive their links: with the pins
	 * gone, nothing holds them once the kernel has let go of the links. */
	kretprobe_events_remove(true);
	return 0;
}

/* Entries of directory but . and .. (0 when it cannot be read). */
static size_t count_entries(const char *directory)
{
	struct dirent *entry;
	size_t count = 0;
	DIR *handle = opendir(directory);

	if (!handle)
		return 0;
	while ((entry = readdir(handle)))
		count += strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0;
	closedir(handle);
	return count;
}

static bool directory_is_empty(const char *directory)
{
	return count_entries(directory) == 0;
}

/* Checks that pin_dir's parent is a BPF file system, mounting one at
 * /sys/fs/bpf if that is the parent and nothing is mounted there (noted in
 * probes->mounted_bpffs). */
static int check_bpffs(struct vnfs_probes *probes, char *error, size_t error_size)
{
	const char *pin_dir = probes->pin_dir;
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
		if (mount("bpf", parent, "bpf", 0, NULL) == 0) {
			vnfs_info("mounted a BPF file system at %s", parent);
			snprintf(probes->mounted_bpffs, sizeof(probes->mounted_bpffs), "%s",
				 parent);
			/* A new bpffs is not empty: the kernel's preloaded
			 * iterators (maps.debug, progs.debug) are there. */
			probes->mounted_bpffs_entries = count_entries(parent);
		}
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
	if (mkdir(pin_dir, 0700) != 0 && errno != EEXIST) {
		snprintf(error, error_size, "cannot create %s: %s", pin_dir, strerror(errno));
		return -1;
	}
	if (mkdir(links, 0700) != 0 && errno != EEXIST) {
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
	if (vnfs_probes_unpin(pin_dir, NULL, error, error_size) != 0)
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

	if (pins_link_path(entry_path, sizeof(entry_path), probes->pin_dir, state->hook->function,
			  "entry") != 0 ||
	    pins_link_path(exit_path, sizeof(exit_path), probes->pin_dir, state->hook->function,
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

static void reuse_pinned_exit_drain(struct vnfs_probes *probes)
{
	char path[PATH_MAX];

	if (pins_link_path(path, sizeof(path), probes->pin_dir, EXIT_DRAIN_TRACEPOINT,
			  EXIT_DRAIN_PIN_END) != 0)
		return;
	probes->exit_drain_link = bpf_link__open(path);
}

const struct environment_pin environment_pins[ENVIRONMENT_PROGRAMS] = {
	[ENVIRONMENT_INHERIT] = { "sched_process_fork", "inherit" },
	[ENVIRONMENT_CAPTURE] = { "sched_process_exec", "capture" },
};

/* The capture's links, taken over when it is wanted, removed (which
 * detaches them) when it is not. */
static void reuse_pinned_environment_capture(struct vnfs_probes *probes)
{
	char path[PATH_MAX];

	for (int i = 0; i < ENVIRONMENT_PROGRAMS; i++) {
		if (pins_link_path(path, sizeof(path), probes->pin_dir,
				   environment_pins[i].tracepoint, environment_pins[i].end) != 0)
			continue;
		if (probes->capture_environment)
			probes->environment_links[i] = bpf_link__open(path);
		else if (unlink(path) == 0)
			vnfs_info("removing the pinned link %s-%s: no job variables listed",
				  environment_pins[i].tracepoint, environment_pins[i].end);
	}
}

static bool environment_pin_named(const char *name)
{
	char pin[64];

	for (int i = 0; i < ENVIRONMENT_PROGRAMS; i++) {
		snprintf(pin, sizeof(pin), "%s-%s", environment_pins[i].tracepoint,
			 environment_pins[i].end);
		if (strcmp(name, pin) == 0)
			return true;
	}
	return false;
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
			     strcmp(entry->d_name, EXIT_DRAIN_TRACEPOINT "-" EXIT_DRAIN_PIN_END) == 0 ||
			     environment_pin_named(entry->d_name) || wire_pin_named(entry->d_name) ||
			     kprobe_multi_pin_named(probes, entry->d_name);

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

/* Returns 0, or an errno: kprobe links are pinnable from Linux 5.15 on
 * (before, libbpf attaches them through a perf event, not a BPF link). */
static int pin_links(struct vnfs_probes *probes, struct hook_state *state)
{
	char entry_path[PATH_MAX], exit_path[PATH_MAX];

	if (pins_link_path(entry_path, sizeof(entry_path), probes->pin_dir, state->hook->function,
			  "entry") != 0 ||
	    pins_link_path(exit_path, sizeof(exit_path), probes->pin_dir, state->hook->function,
			  "exit") != 0 ||
	    bpf_link__pin(state->entry_link, entry_path) != 0 ||
	    bpf_link__pin(state->exit_link, exit_path) != 0)
		return errno ? errno : EINVAL;
	return 0;
}

/* One line for every function whose links stay unpinned, not one each. */
static void pin_all_links(struct vnfs_probes *probes)
{
	const char *first = NULL;
	size_t unpinned = 0;
	int error = 0;

	for (size_t i = 0; i < probes->hook_count; i++) {
		struct hook_state *state = &probes->hooks[i];

		if (state->reused || state->at_once || state->method == VNFS_ATTACH_NONE)
			continue;
		error = pin_links(probes, state);
		if (error != 0 && unpinned++ == 0)
			first = state->hook->function;
	}
	if (unpinned == 1)
		vnfs_warning("%s: cannot pin its links (%s): a restart of the helper will "
			     "miss its calls while it is down", first, strerror(error));
	else if (unpinned > 1)
		vnfs_warning("the links of %zu hooked functions (%s and others) cannot be pinned "
			     "(%s; kprobe links can be from Linux 5.15 on): a restart of the helper "
			     "will miss their calls while it is down", unpinned, first, strerror(error));
}

int pins_set_map_paths(struct vnfs_probes *probes)
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

/*
 * Before loading: pin_dir checked (on a bpffs) and made, pins of another
 * ABI removed; when pins of this ABI remain (*had_pins), the links of a
 * previous helper are taken over and links of functions no longer hooked
 * removed.  Returns 0, or -1 with a message in error.
 */
int pins_prepare(struct vnfs_probes *probes, bool *had_pins, char *error, size_t error_size)
{
	int status;

	*had_pins = false;
	if (check_bpffs(probes, error, error_size) != 0)
		return -1;
	status = check_pinned_abi(probes->pin_dir, error, error_size);
	if (status < 0 || make_pin_dir(probes->pin_dir, error, error_size) != 0)
		return -1;
	*had_pins = status == 1;
	if (*had_pins) {
		for (size_t i = 0; i < probes->hook_count; i++)
			if (!probes->hooks[i].absent)
				reuse_pinned_links(probes, &probes->hooks[i]);
		reuse_pinned_exit_drain(probes);
		reuse_pinned_environment_capture(probes);
		wire_probes_reuse_pinned(probes);
		kprobe_multi_reuse_pinned(probes);
		remove_foreign_links(probes);
	}
	return 0;
}

/* After a start: the ABI the maps were made for in the abi map, and the
 * links attached now (not reused) pinned.  Returns 0, or -1 with a message. */
int pins_save(struct vnfs_probes *probes, char *error, size_t error_size)
{
	struct vnfs_bpf *skeleton = probes->skeleton;
	__u32 key, value;

	key = ABI_VERSION;
	value = VNFS_ABI_VERSION;
	if (bpf_map_update_elem(bpf_map__fd(skeleton->maps.abi), &key, &value, BPF_ANY) != 0)
		goto map_error;
	key = ABI_STEP_STATS_SIZE;
	value = sizeof(struct vnfs_step_stats);
	if (bpf_map_update_elem(bpf_map__fd(skeleton->maps.abi), &key, &value, BPF_ANY) != 0)
		goto map_error;
	pin_all_links(probes);
	kprobe_multi_pin(probes);
	return 0;
map_error:
	snprintf(error, error_size, "cannot write the pinned abi map: %s", strerror(errno));
	return -1;
}

void pins_unmount_bpffs(struct vnfs_probes *probes)
{
	const char *mount_point = probes->mounted_bpffs;

	if (mount_point[0] == '\0')
		return;
	/* Someone else pinned there since: their pins must stay. */
	if (count_entries(mount_point) != probes->mounted_bpffs_entries)
		vnfs_warning("leaving the BPF file system at %s mounted: it holds pins", mount_point);
	else if (umount(mount_point) != 0)
		vnfs_warning("cannot unmount the BPF file system at %s: %s", mount_point,
			     strerror(errno));
	else
		vnfs_info("unmounted the BPF file system this start mounted at %s", mount_point);
	probes->mounted_bpffs[0] = '\0';
}
