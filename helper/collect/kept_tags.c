/*
 * kept_tags.c — a hash table of tag lists, swept by generation (see
 * kept_tags.h).
 */
#include "helper/collect/kept_tags.h"

#include <stdlib.h>
#include <string.h>

struct vnfs_kept_tag_list {
	struct vnfs_kept_tag_list *next;
	uint64_t hash;
	uint64_t generation; /* the last snapshot that used it */
	struct vnfs_tag_list list;
};

/* FNV-1a over the count and the packed pairs. */
static uint64_t hash_of(const struct vnfs_tag_list *list)
{
	uint64_t hash = 14695981039346656037ull ^ list->count;

	for (unsigned i = 0; i < list->used; i++) {
		hash ^= (unsigned char)list->buffer[i];
		hash *= 1099511628211ull;
	}
	return hash;
}

void vnfs_kept_tags_init(struct vnfs_kept_tags *kept)
{
	memset(kept, 0, sizeof(*kept));
}

void vnfs_kept_tags_begin(struct vnfs_kept_tags *kept)
{
	kept->generation++;
}

const struct vnfs_tag_list *vnfs_kept_tags_use(struct vnfs_kept_tags *kept,
					       const struct vnfs_tag_list *list)
{
	struct vnfs_kept_tag_list **bucket, *entry;
	uint64_t hash;

	if (vnfs_tags_count(list) == 0)
		return vnfs_tags_none();
	hash = hash_of(list);
	bucket = &kept->buckets[hash % VNFS_KEPT_TAGS_BUCKETS];
	for (entry = *bucket; entry != NULL; entry = entry->next) {
		if (entry->hash == hash && vnfs_tags_equal(&entry->list, list)) {
			entry->generation = kept->generation;
			return &entry->list;
		}
	}
	entry = malloc(sizeof(*entry));
	if (entry == NULL)
		return NULL;
	entry->hash = hash;
	entry->generation = kept->generation;
	entry->list = *list;
	entry->next = *bucket;
	*bucket = entry;
	kept->count++;
	return &entry->list;
}

/* Frees the lists last used by a snapshot older than keep (UINT64_MAX:
 * every list). */
static void free_older(struct vnfs_kept_tags *kept, uint64_t keep)
{
	for (size_t b = 0; b < VNFS_KEPT_TAGS_BUCKETS; b++) {
		struct vnfs_kept_tag_list **link = &kept->buckets[b];

		while (*link != NULL) {
			struct vnfs_kept_tag_list *entry = *link;

			if (entry->generation >= keep) {
				link = &entry->next;
				continue;
			}
			*link = entry->next;
			free(entry);
			kept->count--;
		}
	}
}

void vnfs_kept_tags_sweep(struct vnfs_kept_tags *kept)
{
	free_older(kept, kept->generation);
}

void vnfs_kept_tags_destroy(struct vnfs_kept_tags *kept)
{
	free_older(kept, UINT64_MAX);
}
