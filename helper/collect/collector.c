/*
 * collector.c — counters (helper/kernel/counters.h) -> records -> sinks.
 *
 * A step's counters (7.4 KiB) are copied from the source only when the
 * slot's activity moved, which for the probes is one load from the mmapped
 * step_activity array: a thousand idle steps cost a thousand loads and no
 * memory, where mapping step_stats cost its whole 7.4 MiB in every helper.
 * The breakdown rows (process, mount, unattributed) are walked at most once
 * per collection and bucketed by slot, so each record gets a contiguous
 * range.
 */
#include "helper/collect/collector.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "helper/collect/breakdowns.h"
#include "helper/outputs/report_writer.h"
#include "lib/escape.h"
#include "lib/log.h"
#include "lib/record_json.h"

/* A kept step that a slot holds too (the helper stopped between keeping it
 * and releasing the slot) is the slot's: it will be kept again. */
static void forget_kept_twice(const struct vnfs_step *step, uint32_t slot, void *context)
{
	(void)slot;
	vnfs_ended_steps_remove_step(context, &step->workload);
}

/* The ended steps a previous helper kept.  Without its directory they are
 * kept in memory only: counting goes on, and the log says what is lost at
 * a restart. */
static void open_ended_steps(struct vnfs_collector *collector)
{
	char error[512];

	if (vnfs_ended_steps_open(&collector->ended, collector->config->helper.state_dir, error,
				  sizeof(error)) != 0) {
		vnfs_error("ended steps: %s: kept in memory only, lost if the helper restarts",
			   error);
		/* In memory only: cannot fail. */
		(void)vnfs_ended_steps_open(&collector->ended, NULL, error, sizeof(error));
	}
	vnfs_registry_visit(collector->steps->registry, forget_kept_twice, &collector->ended, NULL);
	if (collector->ended.count > 0)
		vnfs_info("ended steps: %zu read back, waiting for their jobs to finish",
			  collector->ended.count);
}

int vnfs_collector_init(struct vnfs_collector *collector, const struct vnfs_config *config,
			struct vnfs_steps *steps, const char *node, char *error,
			size_t error_size)
{
	memset(collector, 0, sizeof(*collector));
	if (vnfs_report_writer_start(&collector->report_writer, config->helper.admin_gid, error,
				     error_size) != 0)
		return -1;
	collector->config = config;
	collector->steps = steps;
	snprintf(collector->node, sizeof(collector->node), "%s", node);
	collector->snapshot = calloc(VNFS_COLLECTOR_MAX_RECORDS, sizeof(*collector->snapshot));
	collector->records = calloc(VNFS_COLLECTOR_MAX_RECORDS, sizeof(*collector->records));
	collector->counters = calloc(VNFS_MAX_STEPS, sizeof(*collector->counters));
	if (collector->snapshot == NULL || collector->records == NULL ||
	    collector->counters == NULL || pthread_mutex_init(&collector->lock, NULL) != 0 ||
	    vnfs_mounts_init(&collector->mounts, NULL) != 0) {
		snprintf(error, error_size, "collector: out of memory");
		vnfs_report_writer_stop(collector->report_writer);
		collector->report_writer = NULL;
		free(collector->snapshot);
		free(collector->records);
		free(collector->counters);
		return -1;
	}
	open_ended_steps(collector);
	collector->health.max_slots = VNFS_MAX_STEPS;
	for (int op = 0; op < VNFS_OP_COUNT; op++)
		collector->health.attach_method[op] =
			steps->source.attach_method(steps->source.context,
						    (enum vnfs_operation)op);
	return 0;
}

int vnfs_collector_add_sink(struct vnfs_collector *collector, const struct vnfs_sink *sink)
{
	if (collector->sink_count == VNFS_MAX_SINKS)
		return -1;
	collector->sinks[collector->sink_count++] = *sink;
	return 0;
}

void vnfs_collector_destroy(struct vnfs_collector *collector)
{
	/* What is queued is written first: a stop loses no report. */
	vnfs_report_writer_stop(collector->report_writer);
	collector->report_writer = NULL;
	for (unsigned i = 0; i < collector->sink_count; i++)
		collector->sinks[i].close(collector->sinks[i].state);
	vnfs_mounts_destroy(&collector->mounts);
	pthread_mutex_destroy(&collector->lock);
	vnfs_ended_steps_close(&collector->ended);
	vnfs_kept_tags_destroy(&collector->kept_tags);
	free(collector->snapshot);
	free(collector->records);
	/* Also called for a collector never initialised (a failed start). */
	for (uint32_t slot = 0; collector->counters != NULL && slot < VNFS_MAX_STEPS; slot++)
		free(collector->counters[slot].copy);
	free(collector->counters);
	free(collector->processes);
	free(collector->process_slots);
	free(collector->mounts_seen);
	free(collector->mount_slots);
	free(collector->unattributed);
	free(collector->wire);
	free(collector->wire_slots);
	free(collector->wire_sorted);
	free(collector->wire_sorted_slots);
	free(collector->wire_order);
	free(collector->wire_steps);
	free(collector->node_wire);
}

/* Grows *array (of element_size) to hold one more; 0 or -1 (out of memory). */
static int reserve(void **array, size_t element_size, size_t count, size_t *capacity)
{
	void *grown;
	size_t wanted;

	if (count < *capacity)
		return 0;
	wanted = *capacity ? *capacity * 2 : 64;
	grown = realloc(*array, wanted * element_size);
	if (grown == NULL)
		return -1;
	*array = grown;
	*capacity = wanted;
	return 0;
}

/* Grouped rows arrive with their slots ascending (helper/collect/breakdowns.h), so
 * appending keeps each step's rows together for first_of_slot(). */
static int add_process(const struct vnfs_process_key *key, const struct vnfs_process_stats *stats,
		       void *context)
{
	struct vnfs_collector *collector = context;
	size_t capacity = collector->process_capacity;
	size_t position;

	if (reserve((void **)&collector->processes, sizeof(*collector->processes),
		    collector->process_count, &capacity) != 0 ||
	    reserve((void **)&collector->process_slots, sizeof(*collector->process_slots),
		    collector->process_count, &collector->process_capacity) != 0)
		return -ENOMEM;
	collector->process_capacity = capacity;
	position = collector->process_count++;
	/* The kernel's bytes become the one canonical text every output starts from. */
	vnfs_process_name_text(key->comm, collector->processes[position].comm,
			       sizeof(collector->processes[position].comm));
	collector->processes[position].stats = *stats;
	collector->process_slots[position] = key->slot;
	return 0;
}

struct mount_context {
	struct vnfs_collector *collector;
	int64_t now_ms;
};

static int add_mount(const struct vnfs_mount_key *key, const struct vnfs_mount_stats *stats,
		     void *context)
{
	struct mount_context *mount_context = context;
	struct vnfs_collector *collector = mount_context->collector;
	size_t capacity = collector->mount_capacity;
	size_t position;

	if (reserve((void **)&collector->mounts_seen, sizeof(*collector->mounts_seen),
		    collector->mount_count, &capacity) != 0 ||
	    reserve((void **)&collector->mount_slots, sizeof(*collector->mount_slots),
		    collector->mount_count, &collector->mount_capacity) != 0)
		return -ENOMEM;
	collector->mount_capacity = capacity;
	position = collector->mount_count++;
	memset(&collector->mounts_seen[position], 0, sizeof(collector->mounts_seen[position]));
	collector->mounts_seen[position].device = key->device;
	collector->mounts_seen[position].stats = *stats;
	vnfs_mounts_describe(&collector->mounts, &collector->mounts_seen[position],
			     mount_context->now_ms);
	collector->mount_slots[position] = key->slot;
	return 0;
}

static int add_unattributed(const struct vnfs_unattributed_key *key,
			    const struct vnfs_unattributed_stats *stats, void *context)
{
	struct vnfs_collector *collector = context;
	struct vnfs_unattributed_record *record;

	if (reserve((void **)&collector->unattributed, sizeof(*collector->unattributed),
		    collector->unattributed_count, &collector->unattributed_capacity) != 0)
		return -ENOMEM;
	record = &collector->unattributed[collector->unattributed_count++];
	record->cgroup_id = key->cgroup_id;
	record->uid = key->uid;
	vnfs_process_name_text(key->comm, record->comm, sizeof(record->comm));
	record->stats = *stats;
	return 0;
}

/* A wire row as records and outputs see it: its procedure's name made text,
 * its mount's path. */
static void describe_wire_row(struct vnfs_collector *collector, const struct vnfs_wire_key *key,
			      const struct vnfs_wire_stats *stats, const char *procedure,
			      int64_t now_ms, struct vnfs_wire_record *row)
{
	struct vnfs_mount_record mount = { .device = key->device };

	memset(row, 0, sizeof(*row));
	row->device = key->device;
	row->version = key->version;
	/* The kernel's bytes become text like every name that reaches an output. */
	vnfs_text_from_bytes(procedure, strnlen(procedure, VNFS_WIRE_PROCEDURE_NAME_MAX),
			     row->procedure, sizeof(row->procedure));
	if (row->procedure[0] == '\0')
		snprintf(row->procedure, sizeof(row->procedure), "%u", key->procedure);
	if (key->device != 0) {
		vnfs_mounts_describe(&collector->mounts, &mount, now_ms);
		snprintf(row->mount_point, sizeof(row->mount_point), "%s", mount.mount_point);
	}
	row->stats = *stats;
}

/* A row of no workload: the node's. */
static int add_node_wire(struct vnfs_collector *collector, const struct vnfs_wire_key *key,
			 const struct vnfs_wire_stats *stats, const char *procedure, int64_t now_ms)
{
	struct vnfs_node_wire_record *node_row;

	if (reserve((void **)&collector->node_wire, sizeof(*collector->node_wire),
		    collector->node_wire_count, &collector->node_wire_capacity) != 0)
		return -ENOMEM;
	node_row = &collector->node_wire[collector->node_wire_count++];
	node_row->owner = key->owner_kind == VNFS_WIRE_BACKGROUND ? VNFS_WIRE_BACKGROUND
								   : VNFS_WIRE_UNATTRIBUTED;
	describe_wire_row(collector, key, stats, procedure, now_ms, &node_row->row);
	return 0;
}

static int compare_wire_steps(const void *left, const void *right)
{
	const struct vnfs_wire_step *x = left, *y = right;

	return x->cgroup_id < y->cgroup_id ? -1 : x->cgroup_id > y->cgroup_id;
}

/* The slot of the live step counted under owner_id, or VNFS_SLOT_NONE. */
static uint32_t wire_owner_slot(const struct vnfs_collector *collector, uint64_t owner_id)
{
	struct vnfs_wire_step wanted = { .cgroup_id = owner_id }, *found;

	found = bsearch(&wanted, collector->wire_steps, collector->live_count,
			sizeof(*collector->wire_steps), compare_wire_steps);
	return found ? found->slot : VNFS_SLOT_NONE;
}

/* A step's wire row, or the node's (background, unattributed).  An
 * unattributed row kept under a step's own id holds its RPCs from before
 * it was identified: the step's. */
static int add_wire(const struct vnfs_wire_key *key, const struct vnfs_wire_stats *stats,
		    const char *procedure, void *context)
{
	struct mount_context *mount_context = context;
	struct vnfs_collector *collector = mount_context->collector;
	size_t capacity = collector->wire_capacity, position;
	uint32_t slot = key->slot;

	if (key->owner_kind == VNFS_WIRE_UNATTRIBUTED && key->owner_id != 0)
		slot = wire_owner_slot(collector, key->owner_id);
	else if (key->owner_kind != VNFS_WIRE_WORKLOAD)
		slot = VNFS_SLOT_NONE;
	if (slot >= VNFS_MAX_STEPS)
		return add_node_wire(collector, key, stats, procedure, mount_context->now_ms);
	if (reserve((void **)&collector->wire, sizeof(*collector->wire), collector->wire_count,
		    &capacity) != 0 ||
	    reserve((void **)&collector->wire_slots, sizeof(*collector->wire_slots),
		    collector->wire_count, &collector->wire_capacity) != 0)
		return -ENOMEM;
	collector->wire_capacity = capacity;
	position = collector->wire_count++;
	describe_wire_row(collector, key, stats, procedure, mount_context->now_ms,
			  &collector->wire[position]);
	collector->wire_slots[position] = slot;
	return 0;
}

/* *array reallocated to count elements.  Returns 0, or -1 (left as it was). */
static int resize(void **array, size_t element_size, size_t count)
{
	void *resized = realloc(*array, count * element_size);

	if (resized == NULL)
		return -1;
	*array = resized;
	return 0;
}

/* By slot, then mount, version and procedure: a step's rows together
 * (first_of_slot), the rows of one procedure side by side to merge. */
static int compare_wire_order(const void *left, const void *right, void *context)
{
	const struct vnfs_collector *sorting = context;
	size_t x = *(const size_t *)left, y = *(const size_t *)right;
	const struct vnfs_wire_record *a = &sorting->wire[x], *b = &sorting->wire[y];
	uint32_t slot_a = sorting->wire_slots[x], slot_b = sorting->wire_slots[y];

	if (slot_a != slot_b)
		return slot_a < slot_b ? -1 : 1;
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->version != b->version)
		return a->version < b->version ? -1 : 1;
	return strcmp(a->procedure, b->procedure);
}

/* Sorts the rows (compare_wire_order) and adds up those of one step and
 * procedure on one mount: its RPCs from before and after it was
 * identified.  Returns 0, or -1 out of memory (the rows are then left). */
static int sort_and_merge_wire(struct vnfs_collector *collector)
{
	size_t count = collector->wire_count, merged = 0, capacity = collector->wire_capacity;
	struct vnfs_wire_record *rows;
	uint32_t *slots;

	if (count < 2)
		return 0;
	/* As large as the rows' own arrays, which they replace. */
	if (resize((void **)&collector->wire_sorted, sizeof(*collector->wire_sorted), capacity) != 0 ||
	    resize((void **)&collector->wire_sorted_slots, sizeof(*collector->wire_sorted_slots),
		   capacity) != 0 ||
	    resize((void **)&collector->wire_order, sizeof(*collector->wire_order), capacity) != 0)
		return -1;
	for (size_t i = 0; i < count; i++)
		collector->wire_order[i] = i;
	qsort_r(collector->wire_order, count, sizeof(*collector->wire_order), compare_wire_order,
		collector);
	for (size_t i = 0; i < count; i++) {
		size_t from = collector->wire_order[i];

		if (merged > 0 && collector->wire_sorted_slots[merged - 1] == collector->wire_slots[from] &&
		    collector->wire_sorted[merged - 1].device == collector->wire[from].device &&
		    collector->wire_sorted[merged - 1].version == collector->wire[from].version &&
		    strcmp(collector->wire_sorted[merged - 1].procedure,
			   collector->wire[from].procedure) == 0) {
			vnfs_wire_stats_add(&collector->wire_sorted[merged - 1].stats,
					    &collector->wire[from].stats);
			continue;
		}
		collector->wire_sorted[merged] = collector->wire[from];
		collector->wire_sorted_slots[merged++] = collector->wire_slots[from];
	}
	rows = collector->wire;
	collector->wire = collector->wire_sorted;
	collector->wire_sorted = rows;
	slots = collector->wire_slots;
	collector->wire_slots = collector->wire_sorted_slots;
	collector->wire_sorted_slots = slots;
	collector->wire_count = merged;
	return 0;
}

/* The live steps by cgroup id, for add_wire.  Returns 0 or -1. */
static int index_wire_steps(struct vnfs_collector *collector)
{
	struct vnfs_wire_step *steps = realloc(collector->wire_steps,
					       (collector->live_count + 1) * sizeof(*steps));

	if (steps == NULL)
		return -1;
	collector->wire_steps = steps;
	for (uint32_t i = 0; i < collector->live_count; i++) {
		steps[i].cgroup_id = collector->records[i].cgroup_id;
		steps[i].slot = collector->snapshot[i].slot;
	}
	qsort(steps, collector->live_count, sizeof(*steps), compare_wire_steps);
	return 0;
}

/* The RPC rows move without any step's activity (a flusher's writeback):
 * read every interval, as the unattributed rows are. */
static void read_wire(struct vnfs_collector *collector, int64_t now_ms)
{
	const struct vnfs_counter_source *source = &collector->steps->source;
	struct mount_context mount_context = { collector, now_ms };

	collector->wire_count = 0;
	collector->node_wire_count = 0;
	if (source->for_each_wire == NULL)
		return;
	if (index_wire_steps(collector) != 0) {
		vnfs_warning("out of memory: no RPC counters this interval");
		return;
	}
	if (source->for_each_wire(source->context, add_wire, &mount_context) != 0)
		vnfs_warning("reading the RPC counters failed: incomplete this interval");
	if (sort_and_merge_wire(collector) != 0) {
		vnfs_warning("out of memory: no steps' RPC counters this interval");
		collector->wire_count = 0;
	}
}

/* The sum of every slot's step_activity.  A drain adds to the rows before
 * it bumps its slot's activity, and only the helper's own release of a slot
 * (a registry change) lowers one: so the same sum under the same registry
 * means the rows are what was read last. */
static uint64_t total_activity(const struct vnfs_collector *collector)
{
	uint64_t total = 0;

	for (uint32_t slot = 0; slot < VNFS_MAX_STEPS; slot++)
		total += collector->steps->source.step_activity(collector->steps->source.context, slot);
	return total;
}

/* Process and mount rows, read again only when some step counted calls
 * since: walking a 16,384-entry hash map every interval was a good part of
 * what a thousand idle steps cost.  Unattributed rows, which move without
 * any step's activity, are read every time. */
static void read_breakdowns(struct vnfs_collector *collector, int64_t now_ms)
{
	const struct vnfs_counter_source *source = &collector->steps->source;
	struct mount_context mount_context = { collector, now_ms };
	uint64_t activity;

	collector->unattributed_count = 0;
	activity = total_activity(collector);
	if (!collector->breakdowns_valid || activity != collector->breakdowns_activity ||
	    collector->snapshot_generation != collector->breakdowns_generation) {
		collector->process_count = 0;
		collector->mount_count = 0;
		collector->breakdowns_valid =
			vnfs_breakdowns_walk(source, add_process, collector, add_mount,
					     &mount_context) == 0;
		if (!collector->breakdowns_valid)
			vnfs_warning("reading the process and mount breakdowns failed: they are "
				     "incomplete this interval");
		collector->breakdowns_activity = activity;
		collector->breakdowns_generation = collector->snapshot_generation;
	}
	if (source->for_each_unattributed(source->context, add_unattributed, collector) != 0)
		vnfs_warning("reading unattributed counters failed: incomplete this interval");
	read_wire(collector, now_ms);
}

/* First index in the sorted slots array whose slot is >= slot. */
static size_t first_of_slot(const uint32_t *slots, size_t count, uint32_t slot)
{
	size_t low = 0, high = count;

	while (low < high) {
		size_t middle = low + (high - low) / 2;

		if (slots[middle] < slot)
			low = middle + 1;
		else
			high = middle;
	}
	return low;
}

/* Called with the collector's lock held.  A name is looked up once per uid
 * while it stays in the cache; a renamed user shows the old name until the
 * entry is replaced, which is fine for accounting. */
static void user_name(struct vnfs_collector *collector, uint32_t uid, char *name, size_t size)
{
	const size_t slots = sizeof(collector->user_names) / sizeof(collector->user_names[0]);
	struct passwd entry, *found = NULL;
	char buffer[1024];
	unsigned slot;

	for (slot = 0; slot < slots; slot++) {
		if (collector->user_names[slot].used && collector->user_names[slot].uid == uid) {
			snprintf(name, size, "%s", collector->user_names[slot].name);
			return;
		}
	}
	if (getpwuid_r(uid, &entry, buffer, sizeof(buffer), &found) == 0 && found != NULL)
		snprintf(name, size, "%s", found->pw_name);
	else
		snprintf(name, size, "%u", uid);
	slot = collector->next_user_name++ % slots;
	collector->user_names[slot].used = true;
	collector->user_names[slot].uid = uid;
	snprintf(collector->user_names[slot].name, sizeof(collector->user_names[slot].name), "%s", name);
}

static const struct vnfs_step_stats empty_stats;

/*
 * The counters of slot: copied from step_stats when its activity moved since
 * the last copy, and once more at the next call (a copy can overlap a drain
 * on another CPU; the next one sees that drain whole), or when forced (a
 * job's final read).  A slot that has counted nothing has no copy.
 */
static const struct vnfs_step_stats *step_counters(struct vnfs_collector *collector,
						   uint32_t slot, bool force)
{
	const struct vnfs_counter_source *source = &collector->steps->source;
	struct vnfs_slot_counters *counters = &collector->counters[slot];
	uint64_t activity = source->step_activity(source->context, slot);
	bool moved = activity != counters->activity;

	if (activity == 0 && counters->copy == NULL)
		return &empty_stats;
	if (!moved && !counters->settling && !force)
		return counters->copy;
	if (counters->copy == NULL && (counters->copy = malloc(sizeof(*counters->copy))) == NULL) {
		vnfs_error("slot %u: out of memory for its counters: reported as zero", slot);
		return &empty_stats;
	}
	if (source->read_step_stats(source->context, slot, counters->copy) != 0) {
		vnfs_warning("slot %u: reading step_stats failed (%s): counts are an interval late",
			     slot, strerror(errno));
		return counters->copy;
	}
	counters->activity = activity;
	counters->settling = moved;
	return counters->copy;
}

/* The slot's copy goes with it (its next step starts from zero). */
static void release_counters(struct vnfs_collector *collector, uint32_t slot)
{
	free(collector->counters[slot].copy);
	memset(&collector->counters[slot], 0, sizeof(collector->counters[slot]));
}

/* The slot of record's step goes back (helper/steps/steps.c), its copy of the
 * counters with it, so that the slot's next step starts clean; with
 * only_if_ended, only while the registry still holds that step, ended. */
static int give_back_slot(struct vnfs_collector *collector, uint32_t slot,
			  const struct vnfs_step_record *record, bool only_if_ended)
{
	int status = vnfs_steps_release(collector->steps, slot, record, only_if_ended);

	release_counters(collector, slot);
	return status;
}

/* The parts of a step's record that change only with the registry, but the
 * user name: visited under the registry's lock (vnfs_registry_visit). */
static void snapshot_step(const struct vnfs_step *step, uint32_t slot, void *context)
{
	struct vnfs_collector *collector = context;
	uint32_t index = collector->step_count++;
	struct vnfs_step_record *record = &collector->records[index];

	collector->snapshot[index].slot = slot;
	collector->snapshot[index].state = step->state;
	memset(record, 0, sizeof(*record));
	vnfs_record_identify(record, &step->workload);
	record->uid = step->uid;
	snprintf(record->node, sizeof(record->node), "%s", collector->node);
	record->cgroup_id = step->cgroup_id;
	snprintf(record->cgroup_path, sizeof(record->cgroup_path), "%s", step->cgroup_path);
	record->tags = vnfs_kept_tags_use(&collector->kept_tags, &step->tags);
	if (record->tags == NULL) {
		vnfs_warning("out of memory for the tags of cgroup %s: published without them",
			     step->cgroup_path);
		record->tags = vnfs_tags_none();
	}
	record->start_time_ms = step->start_time_ms;
	record->end_time_ms = step->end_time_ms;
	record->finished = step->state == VNFS_STEP_FINISHED;
	record->stats = &empty_stats;
}

/* The parts that change every interval: the sample time, the counters and
 * the step's rows of this interval's breakdowns. */
static void refresh_record(struct vnfs_collector *collector, uint32_t slot,
			   struct vnfs_step_record *record, int64_t now_ms)
{
	size_t first, last;

	record->sample_time_ms = now_ms;
	record->stats = step_counters(collector, slot, false);
	first = first_of_slot(collector->process_slots, collector->process_count, slot);
	last = first_of_slot(collector->process_slots, collector->process_count, slot + 1);
	record->processes = collector->processes + first;
	record->process_count = last - first;
	first = first_of_slot(collector->mount_slots, collector->mount_count, slot);
	last = first_of_slot(collector->mount_slots, collector->mount_count, slot + 1);
	record->mounts = collector->mounts_seen + first;
	record->mount_count = last - first;
	first = first_of_slot(collector->wire_slots, collector->wire_count, slot);
	last = first_of_slot(collector->wire_slots, collector->wire_count, slot + 1);
	record->wire = collector->wire + first;
	record->wire_count = last - first;
}

/* Snapshot of the registry and the records' fixed parts, made again only
 * when the registry or the ended steps changed: copying and formatting a
 * thousand idle steps every interval was most of the helper's CPU.  The
 * ended steps' records follow, as they are kept.  Returns the step count. */
static uint32_t refresh_snapshot(struct vnfs_collector *collector)
{
	if (collector->snapshot_valid &&
	    vnfs_registry_generation(collector->steps->registry) == collector->snapshot_generation)
		return collector->step_count;
	collector->step_count = 0;
	vnfs_kept_tags_begin(&collector->kept_tags);
	vnfs_registry_visit(collector->steps->registry, snapshot_step, collector,
			    &collector->snapshot_generation);
	vnfs_kept_tags_sweep(&collector->kept_tags);
	for (uint32_t i = 0; i < collector->step_count; i++)
		user_name(collector, collector->records[i].uid, collector->records[i].user,
			  sizeof(collector->records[i].user));
	collector->live_count = collector->step_count;
	for (size_t i = 0; i < collector->ended.count; i++) {
		uint32_t index = collector->step_count++;

		collector->snapshot[index].slot = VNFS_SLOT_NONE;
		collector->snapshot[index].state = VNFS_STEP_ENDED;
		collector->records[index] = collector->ended.steps[i];
	}
	collector->snapshot_valid = true;
	return collector->step_count;
}

/* Snapshot + breakdowns + records for every step; returns the step count. */
static uint32_t read_all(struct vnfs_collector *collector, int64_t now_ms)
{
	uint32_t count = refresh_snapshot(collector);

	read_breakdowns(collector, now_ms);
	for (uint32_t i = 0; i < collector->live_count; i++)
		refresh_record(collector, collector->snapshot[i].slot, &collector->records[i], now_ms);
	return count;
}

/* The records of workload, a whole job when its part is "" (a contiguous
 * copy, since slots of a job need not be adjacent); returns how many.
 * steps must hold VNFS_COLLECTOR_MAX_RECORDS. */
static uint32_t select_job(const struct vnfs_collector *collector, uint32_t count,
			   const struct vnfs_workload *workload, struct vnfs_step_record *steps,
			   uint32_t *slots)
{
	bool whole_job = workload->part[0] == '\0';
	uint32_t selected = 0;

	for (uint32_t i = 0; i < count; i++) {
		const struct vnfs_step_record *record = &collector->records[i];

		if (whole_job ? !vnfs_workload_same_job(&record->workload, workload)
			      : !vnfs_workload_equal(&record->workload, workload))
			continue;
		steps[selected] = *record;
		if (slots != NULL)
			slots[selected] = collector->snapshot[i].slot;
		selected++;
	}
	return selected;
}

/*
 * Renders the job's report files and queues them for the writer thread: no
 * file I/O under the lock (report_dir may be on a stalled NFS server).  With
 * ticket, the caller waits for them once it has let go of the lock.
 */
static void queue_report_files(struct vnfs_collector *collector, const struct vnfs_job *job,
			       const char *report_dir, struct vnfs_report_ticket **ticket)
{
	struct vnfs_report_destination destination = {
		.report_dir = report_dir,
		.job = &job->workload,
		.owner_uid = job->uid,
		.node = collector->node,
	};
	struct vnfs_report_files files;
	char error[512], name[VNFS_WORKLOAD_DESCRIPTION_MAX];

	if (vnfs_report_render(job, &files, error, sizeof(error)) != 0 ||
	    vnfs_report_writer_submit(collector->report_writer, &files, &destination, ticket, error,
				      sizeof(error)) != 0)
		vnfs_error("%s: report files not written: %s",
			   vnfs_workload_describe(&job->workload, name, sizeof(name)), error);
}

/* Final read done by the caller: report, sinks, release; with copy, the
 * job's final counts copied there (for FINISH's reply, encoded once the lock
 * is let go).  Returns 0, or -1 when out of memory.  Lock held. */
static int finish_job_locked(struct vnfs_collector *collector,
			     const struct vnfs_workload *finished, uint32_t count,
			     const char *report_dir, struct vnfs_report_ticket **ticket,
			     struct vnfs_owned_job *copy)
{
	struct vnfs_step_record *steps = calloc(VNFS_COLLECTOR_MAX_RECORDS, sizeof(*steps));
	uint32_t *slots = calloc(VNFS_COLLECTOR_MAX_RECORDS, sizeof(*slots));
	struct vnfs_workload job_workload = *finished;
	char name[VNFS_WORKLOAD_DESCRIPTION_MAX];
	int result = -1;
	struct vnfs_job job;
	uint32_t selected;

	job_workload.part[0] = '\0';
	vnfs_workload_describe(&job_workload, name, sizeof(name));
	if (steps == NULL || slots == NULL) {
		vnfs_error("%s: out of memory for its final read", name);
		goto out;
	}
	selected = select_job(collector, count, &job_workload, steps, slots);
	for (uint32_t i = 0; i < selected; i++) {
		steps[i].finished = true;
		if (slots[i] != VNFS_SLOT_NONE) /* an ended step kept has its final counts */
			steps[i].stats = step_counters(collector, slots[i], true);
	}
	vnfs_job_of_steps(&job, &job_workload, collector->node, steps, selected);
	result = copy != NULL ? vnfs_owned_job_copy(copy, &job) : 0;
	if (report_dir[0] != '\0')
		queue_report_files(collector, &job, report_dir, ticket);
	for (unsigned i = 0; i < collector->sink_count; i++)
		collector->sinks[i].job_finished(collector->sinks[i].state, &job);
	for (uint32_t i = 0; i < selected; i++) {
		if (slots[i] == VNFS_SLOT_NONE)
			continue;
		(void)give_back_slot(collector, slots[i], &steps[i], false);
	}
	if (vnfs_ended_steps_remove_job(&collector->ended, &job_workload) > 0)
		collector->snapshot_valid = false;
	vnfs_info("%s finished: %u steps, final counts reported, slots released", name, selected);
out:
	free(steps);
	free(slots);
	return result;
}

/* Adds a function's missed returns to the count (an earlier helper's event
 * for the same function, still held by its pinned link, adds to it). */
static int add_missed_return(const char *function, uint64_t missed, void *context)
{
	struct vnfs_missed_returns *counted = context;
	unsigned i = 0;

	while (i < counted->count && strcmp(counted->functions[i].function, function) != 0)
		i++;
	if (i == counted->count) {
		if (i == VNFS_MAX_MISSED_RETURN_FUNCTIONS)
			return 0;
		snprintf(counted->functions[i].function, sizeof(counted->functions[i].function),
			 "%s", function);
		counted->functions[i].missed = 0;
		counted->count++;
	}
	counted->functions[i].missed += missed;
	return 0;
}

/* The kernel's counts of missed returns; a failed read keeps the last. */
static void update_missed_returns(struct vnfs_collector *collector)
{
	const struct vnfs_counter_source *source = &collector->steps->source;
	struct vnfs_missed_returns counted = { .count = 0 };

	if (source->for_each_missed_return &&
	    source->for_each_missed_return(source->context, add_missed_return, &counted) == 0)
		collector->health.missed_returns = counted;
}

static void update_health(struct vnfs_collector *collector)
{
	struct vnfs_helper_health *health = &collector->health;

	health->active_slots = collector->live_count;
	/* What a failed read could not read keeps its last value. */
	(void)collector->steps->source.read_health(collector->steps->source.context, health->counters);
	update_missed_returns(collector);
	health->sink_count = collector->sink_count;
	for (unsigned i = 0; i < collector->sink_count; i++) {
		health->sink_names[i] = collector->sinks[i].name;
		health->sink_dropped[i] = collector->sinks[i].dropped
						  ? collector->sinks[i].dropped(collector->sinks[i].state)
						  : 0;
	}
}

/* A job whose steps all ended longer than the grace period ago, and whose
 * FINISH never came (epilog not run, helper down at the time), is finished
 * here so its slots are not held forever. */
static bool job_abandoned(const struct vnfs_collector *collector, uint32_t count,
			  const struct vnfs_workload *job, int64_t now_ms)
{
	int64_t grace_ms = (int64_t)collector->config->helper.finished_job_grace_s * 1000;

	for (uint32_t i = 0; i < count; i++) {
		const struct vnfs_step_record *record = &collector->records[i];

		if (!vnfs_workload_same_job(&record->workload, job))
			continue;
		if (collector->snapshot[i].state == VNFS_STEP_RUNNING ||
		    now_ms - record->end_time_ms < grace_ms)
			return false;
	}
	return true;
}

/* Runs every interval over every step: running steps, the common case, are
 * passed over first, so that a thousand of them cost a thousand tests and no
 * search for the job's other steps. */
static void finish_due_jobs(struct vnfs_collector *collector, uint32_t count, int64_t now_ms)
{
	/* Indexes into records, whose order finishing does not change. */
	uint32_t finished[VNFS_MAX_STEPS];
	uint32_t finished_count = 0;

	for (uint32_t i = 0; i < count; i++) {
		enum vnfs_step_state state = collector->snapshot[i].state;
		struct vnfs_workload job = collector->records[i].workload;
		bool done_already = false;

		if (state == VNFS_STEP_RUNNING)
			continue;
		if (state == VNFS_STEP_ENDED && !job_abandoned(collector, count, &job, now_ms))
			continue;
		for (uint32_t j = 0; j < finished_count && !done_already; j++)
			done_already = vnfs_workload_same_job(&collector->records[finished[j]].workload,
							      &job);
		if (done_already)
			continue;
		finished[finished_count++] = i;
		finish_job_locked(collector, &job, count, collector->config->helper.report_dir,
				  NULL, NULL);
	}
}

/* Whether the cgroup at path holds no task: its cgroup.events says
 * "populated 0", or the cgroup is gone.  Unknown (no cgroup.events, as in a
 * cgroup v1 hierarchy) is not empty. */
static bool cgroup_empty(const char *path)
{
	int directory = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), fd;
	char events[256];
	ssize_t length = -1;

	if (directory < 0)
		return errno == ENOENT;
	fd = openat(directory, "cgroup.events", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		length = read(fd, events, sizeof(events) - 1);
		close(fd);
	}
	close(directory);
	if (length <= 0)
		return false;
	events[length] = '\0';
	return strncmp(events, "populated 0\n", 12) == 0 || strstr(events, "\npopulated 0\n") != NULL;
}

/* Gives the slot of the ended step at index (its final read made) to the
 * ended steps: the source's registration and counters first, so that the
 * slot is clean before a REGISTER can take it.  Returns 0, or -1 (step left
 * as it was). */
static int move_out(struct vnfs_collector *collector, uint32_t index, int64_t now_ms)
{
	uint32_t slot = collector->snapshot[index].slot;
	struct vnfs_step_record record;
	char error[512], name[VNFS_WORKLOAD_DESCRIPTION_MAX];

	refresh_record(collector, slot, &collector->records[index], now_ms);
	record = collector->records[index];
	record.stats = step_counters(collector, slot, true);
	vnfs_workload_describe(&record.workload, name, sizeof(name));
	if (vnfs_ended_steps_add(&collector->ended, &record, error, sizeof(error)) != 0) {
		vnfs_warning("%s: keeps its slot until its job finishes: %s", name, error);
		return -1;
	}
	if (give_back_slot(collector, slot, &record, true) != 0)
		vnfs_warning("%s: changed while its slot was released", name);
	return 0;
}

/* Every ended step whose cgroup holds no task any more leaves its slot: its
 * counters cannot move again.  This interval published them from their
 * slots; from the next one they come from the ended steps.  A Kubernetes
 * container keeps its slot until its pod finishes: it may restart in it. */
static void move_out_ended_steps(struct vnfs_collector *collector, int64_t now_ms)
{
	uint32_t moved = 0;

	refresh_snapshot(collector); /* after finish_due_jobs' releases */
	for (uint32_t i = 0; i < collector->live_count; i++) {
		const struct vnfs_step_record *record = &collector->records[i];

		if (collector->snapshot[i].state != VNFS_STEP_ENDED ||
		    vnfs_workload_part_may_restart(&record->workload) ||
		    !vnfs_ended_steps_has_room(&collector->ended, record->uid) ||
		    !cgroup_empty(record->cgroup_path))
			continue;
		if (move_out(collector, i, now_ms) == 0)
			moved++;
	}
	if (moved > 0) {
		collector->snapshot_valid = false;
		vnfs_debug("%u ended steps left their slots (%zu kept)", moved,
			   collector->ended.count);
	}
}

static uint64_t monotonic_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

void vnfs_collector_collect(struct vnfs_collector *collector, int64_t now_ms)
{
	uint64_t started = monotonic_ns();
	struct vnfs_interval interval;
	uint32_t count;

	pthread_mutex_lock(&collector->lock);
	count = read_all(collector, now_ms);
	update_health(collector);
	interval = (struct vnfs_interval){
		.time_ms = now_ms,
		.node = collector->node,
		.step_count = count,
		.steps = collector->records,
		.unattributed_count = collector->unattributed_count,
		.unattributed = collector->unattributed,
		.node_wire_count = collector->node_wire_count,
		.node_wire = collector->node_wire,
		.health = &collector->health,
	};
	for (unsigned i = 0; i < collector->sink_count; i++)
		collector->sinks[i].publish(collector->sinks[i].state, &interval);
	finish_due_jobs(collector, count, now_ms);
	move_out_ended_steps(collector, now_ms);
	collector->health.collections++;
	collector->health.last_collection_ns = monotonic_ns() - started;
	pthread_mutex_unlock(&collector->lock);
}

int vnfs_collector_finish_job(struct vnfs_collector *collector,
			      const struct vnfs_workload *finished, const char *report_dir,
			      int64_t now_ms, struct vnfs_owned_job *job, char *error,
			      size_t error_size)
{
	struct vnfs_report_ticket *ticket = NULL;
	char files_error[512], name[VNFS_WORKLOAD_DESCRIPTION_MAX];
	uint32_t count;
	int result = -1;

	vnfs_workload_describe(finished, name, sizeof(name));
	pthread_mutex_lock(&collector->lock);
	if (vnfs_registry_finish_job(collector->steps->registry, finished, now_ms) == 0 &&
	    !vnfs_ended_steps_has_job(&collector->ended, finished)) {
		snprintf(error, error_size, "%s is not known on this node", name);
	} else {
		count = read_all(collector, now_ms);
		result = finish_job_locked(collector, finished, count,
					   report_dir && report_dir[0]
						   ? report_dir
						   : collector->config->helper.report_dir,
					   &ticket, job);
		if (result < 0)
			snprintf(error, error_size, "%s: final read failed", name);
	}
	pthread_mutex_unlock(&collector->lock);
	/* The reply means the files are there; waiting here, on the FINISH
	 * worker and without the lock, delays nobody else's requests. */
	if (ticket != NULL &&
	    vnfs_report_writer_wait(collector->report_writer, ticket, files_error,
				    sizeof(files_error)) != 0)
		vnfs_debug("%s: FINISH answered without its report files", name);
	return result;
}

int vnfs_collector_query(struct vnfs_collector *collector, const struct vnfs_workload *workload,
			 struct vnfs_owned_job *copy, char *error, size_t error_size)
{
	char name[VNFS_WORKLOAD_DESCRIPTION_MAX];
	struct vnfs_step_record *steps = calloc(VNFS_COLLECTOR_MAX_RECORDS, sizeof(*steps));
	struct vnfs_job job;
	uint32_t count, selected;
	int result = -1;

	if (steps == NULL) {
		snprintf(error, error_size, "out of memory");
		return -1;
	}
	pthread_mutex_lock(&collector->lock);
	count = read_all(collector, (int64_t)time(NULL) * 1000);
	selected = select_job(collector, count, workload, steps, NULL);
	if (selected == 0) {
		snprintf(error, error_size, "%s is not running on this node",
			 vnfs_workload_describe(workload, name, sizeof(name)));
	} else {
		vnfs_job_of_steps(&job, workload, collector->node, steps, selected);
		result = vnfs_owned_job_copy(copy, &job);
		if (result < 0)
			snprintf(error, error_size, "out of memory");
	}
	pthread_mutex_unlock(&collector->lock);
	free(steps);
	return result;
}

int vnfs_collector_list(struct vnfs_collector *collector, uint32_t uid,
			struct vnfs_list_entry **entries, size_t *entry_count)
{
	uint32_t count;
	int result = 0;

	*entries = NULL;
	*entry_count = 0;
	pthread_mutex_lock(&collector->lock);
	count = refresh_snapshot(collector);
	if (count > 0)
		*entries = calloc(count, sizeof(**entries));
	if (count > 0 && *entries == NULL)
		result = -1;
	for (uint32_t i = 0; result == 0 && i < count; i++) {
		const struct vnfs_step_record *record = &collector->records[i];
		struct vnfs_list_entry *entry = &(*entries)[*entry_count];

		if (uid != UINT32_MAX && record->uid != uid)
			continue;
		entry->workload = record->workload;
		entry->uid = record->uid;
		memcpy(entry->user, record->user, sizeof(record->user));
		entry->running = collector->snapshot[i].state == VNFS_STEP_RUNNING;
		(*entry_count)++;
	}
	pthread_mutex_unlock(&collector->lock);
	return result;
}

struct json_object *vnfs_collector_status(struct vnfs_collector *collector)
{
	struct json_object *status = json_object_new_object();
	struct json_object *attach = json_object_new_object();

	pthread_mutex_lock(&collector->lock);
	json_object_object_add(status, "version", json_object_new_string(PACKAGE_VERSION));
	json_object_object_add(status, "node", json_object_new_string(collector->node));
	for (int op = 0; op < VNFS_OP_COUNT; op++)
		json_object_object_add(attach, vnfs_operation_names[op], json_object_new_string(
			vnfs_attach_method_name(collector->health.attach_method[op])));
	json_object_object_add(status, "attach", attach);
	json_object_object_add(status, "slots_used",
			       json_object_new_int64(vnfs_registry_used(collector->steps->registry)));
	json_object_object_add(status, "slots", json_object_new_int64(VNFS_MAX_STEPS));
	json_object_object_add(status, "ended_steps_kept",
			       json_object_new_int64((int64_t)collector->ended.count));
	json_object_object_add(status, "collections",
			       json_object_new_int64((int64_t)collector->health.collections));
	json_object_object_add(status, "last_collection_us",
			       json_object_new_int64((int64_t)collector->health.last_collection_ns / 1000));
	pthread_mutex_unlock(&collector->lock);
	return status;
}
