/*
 * kretprobe_events.c — the kprobe path's return probes, with room for as
 * many calls in flight as the configuration asks (kprobe_calls_in_flight).
 *
 * A kretprobe follows at most `maxactive` calls of its function at once;
 * past that the kernel does not run its program, and the call's return is
 * lost (docs/PROBES.md, "Known limits").  libbpf 1.1 makes its kretprobes
 * through the perf kprobe PMU, which always takes the kernel's default,
 * max(10, 2 × possible CPUs): too few for NFS calls, which sleep while the
 * server answers (16 readers held in nfs_file_read lost 6 returns in a
 * two-CPU guest).  The tracefs interface takes the count
 * ("r1024:vnfs/nfs_file_read_42 nfs_file_read"), so the return probes are
 * made there, as kprobe events of the group "vnfs", and each program is
 * attached to its event through a perf event: a perf link, pinned like
 * every other link (5.15 on; 5.10's cannot be pinned, as before).
 *
 * Each event is named <function>_<pid of the helper that made it>, so a
 * helper never appends to an event an earlier one left (the kernel would
 * then run the program twice per return).  At start the helper removes
 * the events no link holds any more (left by a helper that was killed);
 * an event held by a pinned link stays, in use, until --unload removes the
 * pins, and then the events.  Each costs the kernel about 64 bytes per
 * call it can follow, allocated when the event is made: 28 functions and
 * the RPC counters' open-context note (wire_probes.c) × 1,024 calls,
 * 1.9 MiB in the guest.
 */
#include "helper/kernel/probes_state.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "helper/kernel/kprobe_profile.h"
#include "lib/log.h"

#define EVENT_GROUP "vnfs"
#define EVENT_NAME_SIZE KPROBE_PROFILE_EVENT_SIZE
/* How long --unload waits for the kernel to let go of the events of the
 * links it unpinned (released after an RCU grace period). */
#define RELEASE_WAIT_MS 5000
#define RELEASE_POLL_MS 10

/* Where tracefs is mounted, as systemd or an older boot mounts it. */
static const char *const tracefs_candidates[] = {
	"/sys/kernel/tracing",
	"/sys/kernel/debug/tracing",
};

const char *kretprobe_events_tracefs(void)
{
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(tracefs_candidates) / sizeof(tracefs_candidates[0]); i++) {
		snprintf(path, sizeof(path), "%s/kprobe_events", tracefs_candidates[i]);
		if (access(path, W_OK) == 0)
			return tracefs_candidates[i];
	}
	return NULL;
}

/* Writes one definition or removal to kprobe_events.  Returns 0, or -1 with
 * errno: ENOENT (no such event), EBUSY (a link still holds it) or the
 * definition's error. */
static int write_kprobe_events(const char *tracefs, const char *line)
{
	char path[PATH_MAX];
	ssize_t written;
	int fd, saved;

	snprintf(path, sizeof(path), "%s/kprobe_events", tracefs);
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -1;
	written = write(fd, line, strlen(line));
	saved = errno;
	close(fd);
	if (written != (ssize_t)strlen(line)) {
		errno = written < 0 ? saved : EIO;
		return -1;
	}
	return 0;
}

static int remove_event(const char *tracefs, const char *event)
{
	char line[NAME_MAX + 16]; /* names read back from the group's directory */

	snprintf(line, sizeof(line), "-:%s/%s", EVENT_GROUP, event);
	return write_kprobe_events(tracefs, line);
}

/* The event's id, which perf_event_open takes as a tracepoint's, or -1. */
static long event_id(const char *tracefs, const char *event)
{
	char path[PATH_MAX], text[32];
	ssize_t length;
	char *end;
	long id;
	int fd;

	snprintf(path, sizeof(path), "%s/events/%s/%s/id", tracefs, EVENT_GROUP, event);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	length = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (length <= 0)
		return -1;
	text[length] = '\0';
	errno = 0;
	id = strtol(text, &end, 10);
	if (errno || end == text || (*end != '\n' && *end) || id <= 0) {
		errno = EINVAL;
		return -1;
	}
	return id;
}

/* An event name the kernel takes: a C identifier, short enough. */
static int event_name(char *buffer, size_t size, const char *function)
{
	if (!isalpha((unsigned char)function[0]) && function[0] != '_')
		return -1;
	for (const char *c = function; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_')
			return -1;
	if ((size_t)snprintf(buffer, size, "%s_%ld", function, (long)getpid()) >= size)
		return -1;
	return 0;
}

/* The function of one of the group's events: its name without "_<pid>".
 * 0, or -1 when the name does not end so (not one the helper made). */
static int event_function(const char *event, char *function, size_t size)
{
	const char *underscore = strrchr(event, '_');
	size_t length;

	if (!underscore || underscore == event || underscore[1] == '\0' ||
	    strspn(underscore + 1, "0123456789") != strlen(underscore + 1))
		return -1;
	length = (size_t)(underscore - event);
	if (length >= size)
		return -1;
	memcpy(function, event, length);
	function[length] = '\0';
	return 0;
}

/* Makes a return probe on function that follows calls_in_flight calls at
 * once and attaches program to it, its link carrying cookie.  NULL with
 * errno on failure, with the event it made removed. */
static struct bpf_link *event_attach(const char *tracefs, struct bpf_program *program,
				     const char *function, unsigned calls_in_flight, __u64 cookie)
{
	LIBBPF_OPTS(bpf_perf_event_opts, options, .bpf_cookie = cookie);
	struct perf_event_attr attr = { .size = sizeof(attr), .type = PERF_TYPE_TRACEPOINT };
	char event[EVENT_NAME_SIZE], line[2 * EVENT_NAME_SIZE + 64];
	struct bpf_link *link;
	int perf_fd, saved;
	long id;

	if (event_name(event, sizeof(event), function) != 0) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	snprintf(line, sizeof(line), "r%u:%s/%s %s", calls_in_flight, EVENT_GROUP, event, function);
	if (write_kprobe_events(tracefs, line) != 0)
		return NULL;
	id = event_id(tracefs, event);
	attr.config = (__u64)id;
	perf_fd = id < 0 ? -1 : (int)syscall(__NR_perf_event_open, &attr, -1, 0, -1,
					     PERF_FLAG_FD_CLOEXEC);
	link = perf_fd < 0 ? NULL : bpf_program__attach_perf_event_opts(program, perf_fd, &options);
	if (link)
		return link; /* the link closes perf_fd */
	saved = errno;
	if (perf_fd >= 0)
		close(perf_fd);
	if (remove_event(tracefs, event) != 0)
		vnfs_warning("cannot remove the kprobe event %s/%s: %s", EVENT_GROUP, event,
			     strerror(errno));
	errno = saved;
	return NULL;
}

struct bpf_link *kretprobe_attach(const struct vnfs_probes *probes, struct bpf_program *program,
				  const char *function, __u64 cookie)
{
	LIBBPF_OPTS(bpf_kprobe_opts, options, .bpf_cookie = cookie, .retprobe = true);
	struct bpf_link *link;

	if (!probes->tracefs)
		return bpf_program__attach_kprobe_opts(program, function, &options);
	link = event_attach(probes->tracefs, program, function, probes->kprobe_calls_in_flight,
			    cookie);
	if (link)
		return link;
	vnfs_warning("%s: cannot make its return probe for %u calls in flight (%s): the "
		     "kernel's default room instead", function, probes->kprobe_calls_in_flight,
		     strerror(errno));
	return bpf_program__attach_kprobe_opts(program, function, &options);
}

static double milliseconds_now(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)now.tv_sec * 1000.0 + (double)now.tv_nsec / 1e6;
}

/* One pass over the group's events: removes each that no link holds.
 * Returns how many are still held, or -1 when the group cannot be read. */
static int remove_unheld_events(const char *tracefs, size_t *removed)
{
	char directory[PATH_MAX];
	struct dirent *entry;
	int held = 0;
	DIR *handle;

	snprintf(directory, sizeof(directory), "%s/events/%s", tracefs, EVENT_GROUP);
	handle = opendir(directory);
	if (!handle)
		return errno == ENOENT ? 0 : -1;
	while ((entry = readdir(handle))) {
		/* The group's directory holds one directory per event, beside its
		 * own enable and filter files. */
		if (entry->d_type != DT_DIR || entry->d_name[0] == '.')
			continue;
		if (remove_event(tracefs, entry->d_name) == 0)
			(*removed)++;
		else if (errno == EBUSY)
			held++;
		else if (errno != ENOENT)
			vnfs_warning("cannot remove the kprobe event %s/%s: %s", EVENT_GROUP,
				     entry->d_name, strerror(errno));
	}
	closedir(handle);
	return held;
}

int kretprobe_events_remove(bool wait_for_release)
{
	const char *tracefs = kretprobe_events_tracefs();
	double deadline = milliseconds_now() + RELEASE_WAIT_MS;
	size_t removed = 0;
	int held;

	if (!tracefs)
		return 0;
	while ((held = remove_unheld_events(tracefs, &removed)) > 0 && wait_for_release &&
	       milliseconds_now() < deadline)
		usleep(RELEASE_POLL_MS * 1000);
	if (removed > 0)
		vnfs_debug("removed %zu kprobe events of %s/", removed, EVENT_GROUP);
	if (held > 0 && wait_for_release)
		vnfs_warning("%d kprobe events of %s/ still in use after %d ms (another helper's "
			     "pins?)", held, EVENT_GROUP, RELEASE_WAIT_MS);
	return held < 0 ? -1 : held;
}

/*
 * kprobe_profile names an event without its group: a line is one of ours
 * when the group's directory has an event of that name.  Events made by an
 * earlier helper whose pinned links this one took over count too: they
 * are the probes in use.
 */
int vnfs_probes_for_each_missed_return(const struct vnfs_probes *probes,
				       vnfs_missed_return_fn fn, void *context)
{
	char path[PATH_MAX], *line = NULL;
	size_t capacity = 0;
	int group, result = 0;
	FILE *profile;

	if (!probes || !probes->tracefs)
		return 0;
	snprintf(path, sizeof(path), "%s/events/%s", probes->tracefs, EVENT_GROUP);
	group = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (group < 0)
		return errno == ENOENT ? 0 : -1; /* no return probe made there */
	snprintf(path, sizeof(path), "%s/kprobe_profile", probes->tracefs);
	profile = fopen(path, "re");
	if (!profile) {
		close(group);
		return -1;
	}
	while (result == 0 && getline(&line, &capacity, profile) > 0) {
		struct kprobe_profile_line parsed;
		char function[EVENT_NAME_SIZE];
		struct stat status;

		if (kprobe_profile_parse_line(line, &parsed) != 0 ||
		    event_function(parsed.event, function, sizeof(function)) != 0 ||
		    fstatat(group, parsed.event, &status, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISDIR(status.st_mode))
			continue;
		result = fn(function, parsed.missed, context);
	}
	free(line);
	fclose(profile);
	close(group);
	return result;
}
