/*
 * tags.h — job tags: NAME=VALUE pairs the user attaches with --vnfs-tags and
 * the administrator adds with envs= in plugstack.conf.
 *
 * Tags end up as Prometheus label values, JSON strings, SQL values and parts
 * of file names, so they are validated once, here, against rules safe for all
 * of them, and bounded so a job cannot blow up the helper's memory:
 *   name   1..VNFS_TAG_NAME_MAX of [A-Za-z_][A-Za-z0-9_]*  (an environment name)
 *   value  0..VNFS_TAG_VALUE_MAX of [A-Za-z0-9._:@+%-]
 *   count  at most VNFS_MAX_TAGS, names unique (a later NAME replaces an earlier)
 * The list is stored packed ("name\0value\0..." in one buffer): one block
 * to copy, compare, hash and keep in the bytes it takes (the registry's
 * kept steps; the collector keeps one copy of each distinct list).
 */
#ifndef VNFS_TAGS_H
#define VNFS_TAGS_H

#include <stdbool.h>
#include <stddef.h>

#define VNFS_MAX_TAGS 32
#define VNFS_TAG_NAME_MAX 64
#define VNFS_TAG_VALUE_MAX 256
#define VNFS_TAGS_BUFFER 1024

struct vnfs_tag_list {
	unsigned count;
	unsigned used;                     /* bytes of buffer in use */
	char buffer[VNFS_TAGS_BUFFER];     /* name\0value\0 ... */
};

/* Lookup function for NAME without =VALUE (getenv-like; NULL = unset). */
typedef const char *(*vnfs_tag_lookup_fn)(const char *name, void *context);

void vnfs_tags_init(struct vnfs_tag_list *list);
/* An empty list that lives for the whole program. */
const struct vnfs_tag_list *vnfs_tags_none(void);
/* How many tags list holds (NULL, as every reader here, reads as none). */
unsigned vnfs_tags_count(const struct vnfs_tag_list *list);
/* Whether a and b hold the same tags in the same order. */
bool vnfs_tags_equal(const struct vnfs_tag_list *a, const struct vnfs_tag_list *b);
/* A copy of list for a record that owns its tags (lib/record.h), freed with
 * vnfs_tags_free: vnfs_tags_none() when list is empty, nothing allocated;
 * NULL when out of memory. */
const struct vnfs_tag_list *vnfs_tags_copy(const struct vnfs_tag_list *list);
/* Frees what vnfs_tags_copy made; vnfs_tags_none() and NULL are let be. */
void vnfs_tags_free(const struct vnfs_tag_list *list);
bool vnfs_tag_name_valid(const char *name);
bool vnfs_tag_value_valid(const char *value);

/* Adds or replaces one tag.  Returns 0, or -1 with a message in error. */
int vnfs_tags_set(struct vnfs_tag_list *list, const char *name, const char *value,
		  char *error, size_t error_size);

/*
 * Parses "NAME[=VALUE][,NAME[=VALUE]...]" into list (appending).  A NAME
 * without a value is looked up with lookup(name, context); unset is an error.
 * Returns 0, or -1 with a message naming the offending tag, e.g.
 * "tag 'MY NAME': a name is letters, digits and '_' (not starting with a digit)".
 */
int vnfs_tags_parse(struct vnfs_tag_list *list, const char *text, vnfs_tag_lookup_fn lookup,
		    void *context, char *error, size_t error_size);

/* The i-th tag (0 <= i < count); returns false past the end. */
bool vnfs_tags_get(const struct vnfs_tag_list *list, unsigned index, const char **name,
		   const char **value);

/* The value of name, or NULL. */
const char *vnfs_tags_find(const struct vnfs_tag_list *list, const char *name);

/* "A=1,B=2" into out (truncated safely); returns out. */
const char *vnfs_tags_format(const struct vnfs_tag_list *list, char *out, size_t size);

#endif /* VNFS_TAGS_H */
