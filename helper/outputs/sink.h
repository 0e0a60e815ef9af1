/*
 * sink.h — the interface every output implements.
 *
 * The collector calls publish() once per interval and job_finished() once per
 * finished job, never two calls at once (they may come from the collector
 * thread or, for a job's final read, the socket thread), and must never wait
 * on an output: a sink
 * that talks to something slow (Kafka, HTTP, a locked database) queues into a
 * bounded buffer, does the slow part elsewhere, and counts what it dropped.
 */
#ifndef VNFS_SINK_H
#define VNFS_SINK_H

#include <stdint.h>

#include "helper/kernel/counters.h" /* enum vnfs_attach_method */
#include "helper/kernel/kprobe_profile.h" /* KPROBE_PROFILE_EVENT_SIZE */
#include "lib/config.h"
#include "lib/record.h"

/* What only the helper and its outputs share: the helper's health (with how
 * each operation's probes are attached, helper/kernel/counters.h), the
 * unattributed rows, and the interval every sink is handed.  Not in lib/: the plugin and vnfs-report have no use for them. */

#define VNFS_MAX_SINKS 8

/* Room for the kprobed functions' counts of missed returns: 28 hooked
 * functions and the RPC counters' open-context note today. */
#define VNFS_MAX_MISSED_RETURN_FUNCTIONS 64

/* Per kprobed function, the calls whose return the kernel did not report
 * (helper/kernel/probes.h): none where the return probes are not tracefs
 * events (fentry, kprobe.multi, kprobe_calls_in_flight = 0). */
struct vnfs_missed_returns {
	unsigned count;
	struct vnfs_missed_return {
		char function[KPROBE_PROFILE_EVENT_SIZE];
		uint64_t missed;
	} functions[VNFS_MAX_MISSED_RETURN_FUNCTIONS];
};

struct vnfs_helper_health {
	uint64_t collections;            /* intervals collected so far */
	uint64_t last_collection_ns;     /* duration of the last collection */
	uint64_t counters[VNFS_HEALTH_COUNTERS]; /* from the BPF health map */
	uint32_t active_slots;
	uint32_t max_slots;
	enum vnfs_attach_method attach_method[VNFS_OP_COUNT];
	struct vnfs_missed_returns missed_returns;
	/* Records each output failed to deliver (its dropped()), for
	 * vnfs_helper_dropped_records_total{sink}. */
	unsigned sink_count;
	const char *sink_names[VNFS_MAX_SINKS];
	uint64_t sink_dropped[VNFS_MAX_SINKS];
};

/* A row of unattributed_stats: calls from a task in no registered cgroup
 * (/metrics only; no step owns them, so no record or report has them). */
struct vnfs_unattributed_record {
	uint64_t cgroup_id;
	uint32_t uid;
	char comm[VNFS_PROCESS_NAME_TEXT_MAX]; /* canonical text, as in vnfs_process_record */
	struct vnfs_unattributed_stats stats;
};

/* A wire row of no workload (bpf/wire.h): the mount's background RPCs or an
 * unattributed process's (/metrics only, as the unattributed rows). */
struct vnfs_node_wire_record {
	enum vnfs_wire_owner_kind owner; /* VNFS_WIRE_BACKGROUND or VNFS_WIRE_UNATTRIBUTED */
	struct vnfs_wire_record row;
};

struct vnfs_interval {
	int64_t time_ms;
	const char *node;
	size_t step_count;
	const struct vnfs_step_record *steps;
	size_t unattributed_count;
	const struct vnfs_unattributed_record *unattributed;
	size_t node_wire_count;
	const struct vnfs_node_wire_record *node_wire;
	const struct vnfs_helper_health *health;
};

struct vnfs_sink {
	const char *name;          /* "sqlite", "prometheus", "jsonlog", ... */
	void *state;
	void (*publish)(void *state, const struct vnfs_interval *interval);
	void (*job_finished)(void *state, const struct vnfs_job *job);
	/* Records this sink failed to deliver since it opened (self-metric). */
	uint64_t (*dropped)(void *state);
	void (*close)(void *state);
};

/*
 * Constructors: each returns 0 and fills *sink, or -1 with a message in
 * error.  Called only for sinks enabled in the configuration.  Kafka's,
 * HTTP's and PostgreSQL's are defined in their modules and reached through
 * sink_module.h.
 */
int vnfs_sink_sqlite_open(struct vnfs_sink *sink, const struct vnfs_config *config,
			  char *error, size_t error_size);
int vnfs_sink_prometheus_open(struct vnfs_sink *sink, const struct vnfs_config *config,
			      char *error, size_t error_size);
int vnfs_sink_jsonlog_open(struct vnfs_sink *sink, const struct vnfs_config *config,
			   char *error, size_t error_size);
int vnfs_sink_kafka_open(struct vnfs_sink *sink, const struct vnfs_config *config,
			 char *error, size_t error_size);
int vnfs_sink_http_open(struct vnfs_sink *sink, const struct vnfs_config *config,
			char *error, size_t error_size);
int vnfs_sink_postgresql_open(struct vnfs_sink *sink, const struct vnfs_config *config,
			      char *error, size_t error_size);

#endif /* VNFS_SINK_H */
