/*
 * kept_tags.h — one copy of each distinct tag list the collector's records
 * point to.
 *
 * A record points to its tags (lib/record.h).  The collector's records are
 * made again from the registry whenever it changes, and a node's steps
 * mostly share a few lists (every step of a job, every pod of a
 * deployment, the tags plugstack.conf adds to every job): kept once each,
 * a thousand tagged steps cost a few KiB, not a thousand copies of the
 * longest list's room (1 KiB each).  Each snapshot uses the lists it needs
 * between vnfs_kept_tags_begin and vnfs_kept_tags_sweep; the sweep frees
 * the others.  Not locked: the collector's lock covers it.
 */
#ifndef VNFS_KEPT_TAGS_H
#define VNFS_KEPT_TAGS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/tags.h"

#define VNFS_KEPT_TAGS_BUCKETS 256

struct vnfs_kept_tag_list;

struct vnfs_kept_tags {
	struct vnfs_kept_tag_list *buckets[VNFS_KEPT_TAGS_BUCKETS];
	uint64_t generation; /* of the snapshot being made */
	size_t count;        /* lists kept */
};

void vnfs_kept_tags_init(struct vnfs_kept_tags *kept);
void vnfs_kept_tags_destroy(struct vnfs_kept_tags *kept);

/* A new snapshot: the lists it does not use are freed by the next sweep. */
void vnfs_kept_tags_begin(struct vnfs_kept_tags *kept);
/* The kept list equal to list, made if there is none (vnfs_tags_none() for
 * an empty one); NULL when out of memory.  It lives until a sweep after a
 * begin that did not use it. */
const struct vnfs_tag_list *vnfs_kept_tags_use(struct vnfs_kept_tags *kept,
					       const struct vnfs_tag_list *list);
/* Frees the lists this snapshot did not use. */
void vnfs_kept_tags_sweep(struct vnfs_kept_tags *kept);

#endif /* VNFS_KEPT_TAGS_H */
