/*
 * mounts.h — which NFS mount a superblock device number belongs to.
 *
 * The BPF side keys per-mount counters by the superblock's s_dev (the
 * kernel's internal encoding, MAJOR << 20 | MINOR); this module maps it to
 * the mount point, "server:/export" and the negotiated NFS version, from
 * /proc/self/mountinfo, re-read only when an unknown device shows up.
 */
#ifndef VNFS_MOUNTS_H
#define VNFS_MOUNTS_H

#include <pthread.h>
#include <stdint.h>

#include "lib/record.h"

#define VNFS_MAX_KNOWN_MOUNTS 256

struct vnfs_mounts {
	pthread_mutex_t lock;
	char mountinfo_path[128];
	int64_t last_read_ms;
	unsigned count;
	/* VNFS_MAX_KNOWN_MOUNTS (stats unused), calloc'd: a node's few
	 * mounts touch a page or two of the 144 KiB, not all of it. */
	struct vnfs_mount_record *known;
};

/* Returns 0, or -1 (out of memory, or the lock). */
int vnfs_mounts_init(struct vnfs_mounts *mounts, const char *mountinfo_path);
void vnfs_mounts_destroy(struct vnfs_mounts *mounts);

/* Fills record's mount_point, source and version for record->device; an
 * unknown device (unmounted since) leaves them "" and the source "unknown". */
void vnfs_mounts_describe(struct vnfs_mounts *mounts, struct vnfs_mount_record *record,
			  int64_t now_ms);

/* Parses one mountinfo line; 0 when it is an NFS mount (for tests). */
int vnfs_mounts_parse_line(const char *line, struct vnfs_mount_record *record);

#endif /* VNFS_MOUNTS_H */
