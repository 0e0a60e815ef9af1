/*
 * breakdowns.c — the breakdown rows of a counter source grouped into each
 * step's processes and mounts (see breakdowns.h).
 */
#include "helper/collect/breakdowns.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The rows read whole, for summing per process name or per mount. */
struct breakdown_entry {
	struct vnfs_breakdown_key key;
	struct vnfs_breakdown_stats stats;
};

struct breakdown_entries {
	struct breakdown_entry *entries;
	size_t count, capacity;
};

static int collect_breakdown(const struct vnfs_breakdown_key *key,
			     const struct vnfs_breakdown_stats *stats, void *context)
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
	collected->entries[collected->count].key = *key;
	collected->entries[collected->count].stats = *stats;
	collected->count++;
	return 0;
}

/* Reads every row (the caller frees collected->entries). */
static int read_breakdown(const struct vnfs_counter_source *source,
			  struct breakdown_entries *collected)
{
	memset(collected, 0, sizeof(*collected));
	if (source->for_each_breakdown(source->context, collect_breakdown, collected) != 0) {
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

	if (collected->count == 0)
		return 0; /* no rows: entries is NULL, which qsort may not be given */
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

int vnfs_breakdowns_walk(const struct vnfs_counter_source *source, vnfs_process_fn process_fn,
			 void *process_context, vnfs_mount_fn mount_fn, void *mount_context)
{
	struct process_walk processes = { process_fn, process_context };
	struct mount_walk mounts = { mount_fn, mount_context };
	struct breakdown_entries collected;
	int status;

	if (read_breakdown(source, &collected) != 0)
		return -1;
	status = for_each_group(&collected, by_slot_and_comm, call_process, &processes);
	if (status == 0)
		status = for_each_group(&collected, by_slot_and_device, call_mount, &mounts);
	free(collected.entries);
	return status;
}
