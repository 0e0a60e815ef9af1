/*
 * kprobe_profile.h — one line of tracefs's kprobe_profile, the kernel's own
 * count of each kprobe event's hits and misses.
 *
 * The kernel prints one line per kprobe event of every group,
 * "  <event> <hits> <missed>", the event's name without its group.  For a
 * return probe, missed counts the calls whose return the kernel did not
 * report (more calls in flight than the event's room, or a probe hit
 * inside another).  kretprobe_events.c reads it for its own group's
 * events, so that the helper can tell, per function, what the return
 * probes lost (vnfs_helper_kernel_missed_returns_total).
 *
 * The file is the kernel's, readable by root only; the parser still takes
 * nothing on trust (tests/fuzz/fuzz_kprobe_profile.c).
 */
#ifndef VNFS_KPROBE_PROFILE_H
#define VNFS_KPROBE_PROFILE_H

#include <stdint.h>

/* The kernel's longest event name (MAX_EVENT_NAME_LEN) with its NUL. */
#define KPROBE_PROFILE_EVENT_SIZE 64

struct kprobe_profile_line {
	char event[KPROBE_PROFILE_EVENT_SIZE];
	uint64_t hits;
	uint64_t missed;
};

/* Parses one line, with or without its newline: 0, or -1 when it is not
 * blanks, an event name made of letters, digits and '_' (not starting
 * with a digit, shorter than KPROBE_PROFILE_EVENT_SIZE), and two decimal
 * counts that fit 64 bits, separated by blanks.  Events of other groups
 * with other names (a '.' from a tool's naming) are not ours: -1 too. */
int kprobe_profile_parse_line(const char *line, struct kprobe_profile_line *parsed);

#endif /* VNFS_KPROBE_PROFILE_H */
