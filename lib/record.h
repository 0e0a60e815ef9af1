/*
 * record.h — what the collector hands to every output (sink).
 *
 * The collector reads the BPF maps each interval and turns them into one
 * vnfs_step_record per known job step; every sink receives the same
 * vnfs_interval, and a vnfs_job once when a job has finished and its final
 * counts were read.  Counters are cumulative since the step was registered;
 * a sink that wants rates computes them.  Records are only valid during the
 * call: a sink that keeps anything copies it.
 */
#ifndef VNFS_RECORD_H
#define VNFS_RECORD_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/vnfs.h"
#include "tags.h"

/* Slurm's special step ids (slurm.h, 22.05); vnfs_step_name() spells them. */
#define VNFS_STEP_PENDING 0xfffffffdu
#define VNFS_STEP_EXTERN 0xfffffffcu
#define VNFS_STEP_BATCH 0xfffffffbu
#define VNFS_STEP_INTERACTIVE 0xfffffffau

struct vnfs_process_record {
	char comm[VNFS_COMM_LEN];
	struct vnfs_process_stats stats;
};

struct vnfs_mount_record {
	__u32 device;              /* st_dev of the NFS superblock */
	char mount_point[256];     /* "/mnt/nfs" ("" if no longer mounted) */
	char source[256];          /* "server:/export" */
	char version[8];           /* "3", "4.0", "4.1", "4.2" */
	struct vnfs_mount_stats stats;
};

struct vnfs_step_record {
	uint32_t job_id;
	uint32_t step_id;
	uint32_t uid;
	char user[33];             /* resolved from uid, or the number */
	char node[65];
	uint64_t cgroup_id;
	char cgroup_path[256];
	struct vnfs_tag_list tags;
	int64_t start_time_ms;     /* registration, unix epoch ms */
	int64_t end_time_ms;       /* unregistration, 0 while running */
	int64_t sample_time_ms;    /* when these counters were read */
	bool finished;
	struct vnfs_step_stats stats;
	size_t process_count;
	const struct vnfs_process_record *processes;
	size_t mount_count;
	const struct vnfs_mount_record *mounts;
};

struct vnfs_unattributed_record {
	uint64_t cgroup_id;
	uint32_t uid;
	char comm[VNFS_COMM_LEN];
	struct vnfs_unattributed_stats stats;
};

/* How one operation's probes are attached (self-metrics, STATUS). */
enum vnfs_attach_method { VNFS_ATTACH_NONE, VNFS_ATTACH_FENTRY, VNFS_ATTACH_KPROBE };

struct vnfs_helper_health {
	uint64_t collections;            /* intervals collected so far */
	uint64_t last_collection_ns;     /* duration of the last collection */
	uint64_t counters[VNFS_HEALTH_COUNTERS]; /* from the BPF health map */
	uint32_t active_slots;
	uint32_t max_slots;
	enum vnfs_attach_method attach_method[VNFS_OP_COUNT];
};

struct vnfs_interval {
	int64_t time_ms;
	const char *node;
	size_t step_count;
	const struct vnfs_step_record *steps;
	size_t unattributed_count;
	const struct vnfs_unattributed_record *unattributed;
	const struct vnfs_helper_health *health;
};

struct vnfs_job {
	uint32_t job_id;
	uint32_t uid;
	const char *user;
	const char *node;
	int64_t start_time_ms;
	int64_t end_time_ms;
	size_t step_count;
	const struct vnfs_step_record *steps; /* final counts, finished == true */
};

/* "0", "batch", "extern", "interactive", ...: into buf, returns buf. */
const char *vnfs_step_name(uint32_t step_id, char *buf, size_t size);

#endif /* VNFS_RECORD_H */
