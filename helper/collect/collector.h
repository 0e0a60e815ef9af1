/*
 * collector.h — turns counters into records, every interval and on demand.
 *
 * The collector owns the sinks and is the only reader of the counters, which
 * it reaches through a counter source (helper/kernel/counters.h: helper/kernel/maps.c's
 * reads the BPF maps, a host test's hands out snapshots).  Each interval it
 * snapshots the registry (again only when it changed), copies the counters
 * of the slots whose activity moved since the last copy, walks the process
 * and mount rows when any activity or the registry moved and groups them by
 * slot, reads the unattributed rows and the health counters, and hands the
 * same vnfs_interval to every sink.  When a job finishes it does the job's
 * final read, renders its report files for the report writer's thread
 * (helper/outputs/report_writer.h: no file I/O under the lock), tells the sinks,
 * and gives the job's slots back to the source and the registry.  A step that
 * ended and whose cgroup holds no task any more gets its final read at once
 * and leaves its slot for helper/steps/ended_steps.h, where it waits for its job's
 * end.  One mutex serialises all of it, so neither the source nor a sink is
 * ever called twice at once.
 */
#ifndef VNFS_COLLECTOR_H
#define VNFS_COLLECTOR_H

#include <pthread.h>
#include <stdint.h>

#include "helper/collect/kept_tags.h"
#include "helper/collect/mounts.h"
#include "helper/outputs/sink.h"
#include "helper/steps/ended_steps.h"
#include "helper/steps/steps.h"
#include "lib/config.h"
#include "lib/reply.h"

struct vnfs_report_writer;
struct json_object;

/* Records a collector holds at once: a step per slot and the ended ones. */
#define VNFS_COLLECTOR_MAX_RECORDS (VNFS_MAX_STEPS + VNFS_ENDED_STEPS_MAX)

struct vnfs_collector {
	pthread_mutex_t lock;
	const struct vnfs_config *config;
	struct vnfs_steps *steps;       /* the registry and the counter source */
	struct vnfs_mounts mounts;
	char node[65];
	unsigned sink_count;
	struct vnfs_sink sinks[VNFS_MAX_SINKS];
	struct vnfs_helper_health health;
	struct vnfs_report_writer *report_writer; /* owned: report files' I/O */

	/* uid -> user name, so a thousand steps do not re-read the user
	 * database every interval (round-robin replacement). */
	struct {
		bool used;
		uint32_t uid;
		char name[33];
	} user_names[64];
	unsigned next_user_name;

	/* Ended steps out of their slots, with their final counts. */
	struct vnfs_ended_steps ended;

	/* The registry as of snapshot_generation: per step in use, its slot
	 * and state, and a record whose fixed parts (ids, user, tags, cgroup,
	 * times) are made only when the registry changed, so idle steps cost
	 * nothing.  The ended steps follow the registry's (slot
	 * VNFS_SLOT_NONE), from index live_count; snapshot_valid goes false
	 * when they change. */
	struct vnfs_snapshot_step {
		uint32_t slot;
		enum vnfs_step_state state;
	} *snapshot;
	struct vnfs_step_record *records;
	struct vnfs_kept_tags kept_tags; /* what the live steps' records point to */
	uint32_t step_count;
	uint32_t live_count;
	uint64_t snapshot_generation;
	bool snapshot_valid;

	/* Per slot: its counters as last copied from step_stats and the
	 * step_activity they were copied at (see step_counters()). */
	struct vnfs_slot_counters {
		uint64_t activity;
		bool settling;               /* copied on a change: copy once more */
		struct vnfs_step_stats *copy; /* NULL while the slot counted nothing */
	} *counters;

	/* The process and mount rows as read at breakdowns_activity (the sum
	 * of all slots' step_activity) under breakdowns_generation. */
	bool breakdowns_valid;
	uint64_t breakdowns_activity;
	uint64_t breakdowns_generation;

	/* Scratch, reused every interval (grown, never shrunk). */
	struct vnfs_process_record *processes;
	uint32_t *process_slots;
	size_t process_count, process_capacity;
	struct vnfs_mount_record *mounts_seen;
	uint32_t *mount_slots;
	size_t mount_count, mount_capacity;
	struct vnfs_unattributed_record *unattributed;
	size_t unattributed_count, unattributed_capacity;
	/* The steps' wire rows, by slot ascending (wire_slots beside them),
	 * and the same sorted and merged (read_wire swaps them). */
	struct vnfs_wire_record *wire, *wire_sorted;
	uint32_t *wire_slots, *wire_sorted_slots;
	size_t wire_count, wire_capacity;
	/* Scratch: the order of the rows, and the live steps by cgroup id (the
	 * owner of an unattributed row identified since, bpf/wire.h). */
	size_t *wire_order;
	struct vnfs_wire_step { uint64_t cgroup_id; uint32_t slot; } *wire_steps;
	/* The rows of no workload: background and unattributed RPCs. */
	struct vnfs_node_wire_record *node_wire;
	size_t node_wire_count, node_wire_capacity;
};

/* source is copied; its context must outlive the collector. */
int vnfs_collector_init(struct vnfs_collector *collector, const struct vnfs_config *config,
			struct vnfs_steps *steps, const char *node, char *error,
			size_t error_size);
/* Takes ownership of sink (closed by vnfs_collector_destroy). */
int vnfs_collector_add_sink(struct vnfs_collector *collector, const struct vnfs_sink *sink);
void vnfs_collector_destroy(struct vnfs_collector *collector);

/* One interval: publish every step, finish finished jobs. */
void vnfs_collector_collect(struct vnfs_collector *collector, int64_t now_ms);

/* FINISH: final read of the job of finished (its part ignored), report
 * files under report_dir ("" = the configured one), sinks told, slots
 * released.  Returns 0 with the job's final counts in *job
 * (vnfs_owned_job_free), or -1 with a message when the job is unknown. */
int vnfs_collector_finish_job(struct vnfs_collector *collector,
			      const struct vnfs_workload *finished, const char *report_dir,
			      int64_t now_ms, struct vnfs_owned_job *job, char *error,
			      size_t error_size);

/* QUERY: the live job of workload (all its steps when its part is "", or
 * that one) copied into *job (its uid is the owner).  Returns 0, or -1 with
 * a message when unknown. */
int vnfs_collector_query(struct vnfs_collector *collector, const struct vnfs_workload *workload,
			 struct vnfs_owned_job *job, char *error, size_t error_size);

/* LIST: the steps held, into *entries (malloc'd, *entry_count of them); uid
 * UINT32_MAX lists all (root), otherwise only that user's.  Returns 0, or -1
 * when out of memory. */
int vnfs_collector_list(struct vnfs_collector *collector, uint32_t uid,
			struct vnfs_list_entry **entries, size_t *entry_count);

/* STATUS: version, node, attach method per operation, slots, collections. */
struct json_object *vnfs_collector_status(struct vnfs_collector *collector);

#endif /* VNFS_COLLECTOR_H */
