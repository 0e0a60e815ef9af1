/*
 * record.h — a job step's accounting as every program sees it: the
 * collector makes one vnfs_step_record per known step each interval and
 * hands it to every output (helper/outputs/sink.h), and a vnfs_job once a job has
 * finished and its final counts were read; the SPANK plugin and vnfs-report
 * read the same records back from JSON (record_json.h) or the history.
 * Counters are cumulative since the step was registered; a reader that
 * wants rates computes them.
 *
 * A record does not own what it points to (tags, stats, processes, mounts,
 * RPC rows): the collector's records are valid during the call that hands
 * them over, and a sink that keeps one copies it (vnfs_step_record_copy);
 * vnfs_step_record_from_json allocates them too, and
 * vnfs_step_record_free_arrays frees them.
 */
#ifndef VNFS_RECORD_H
#define VNFS_RECORD_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/step_stats.h"
#include "bpf/wire.h"
#include "escape.h"
#include "tags.h"
#include "workload.h"

/* Slurm's special step ids (slurm.h, 22.05); vnfs_step_name() spells them. */
#define VNFS_STEP_PENDING 0xfffffffdu
#define VNFS_STEP_EXTERN 0xfffffffcu
#define VNFS_STEP_BATCH 0xfffffffbu
#define VNFS_STEP_INTERACTIVE 0xfffffffau

/* The breakdowns as the helper reports them, summed from breakdown_stats
 * (bpf/vnfs.h): per step and process name, per step and mount. */
#define VNFS_MAX_PROCESS_ENTRIES VNFS_MAX_BREAKDOWN_ENTRIES
#define VNFS_MAX_MOUNT_ENTRIES VNFS_MAX_BREAKDOWN_ENTRIES

struct vnfs_process_stats {
	__u64 read_ops;
	__u64 read_bytes;
	__u64 write_ops;
	__u64 write_bytes;
	__u64 other_ops;
};

struct vnfs_mount_stats {
	__u64 ops;
	__u64 errors;
	__u64 time_ns;
	__u64 read_bytes;
	__u64 write_bytes;
};

/* comm of a record is the name's canonical text (lib/escape.h), made where
 * the kernel's bytes enter the record (vnfs_process_name_text): valid UTF-8
 * with every other byte as \xNN, so no output receives raw user bytes. */
struct vnfs_process_record {
	char comm[VNFS_PROCESS_NAME_TEXT_MAX];
	struct vnfs_process_stats stats;
};

struct vnfs_mount_record {
	__u32 device;              /* st_dev of the NFS superblock */
	char mount_point[256];     /* "/mnt/nfs" ("" if no longer mounted) */
	char source[256];          /* "server:/export" */
	char version[8];           /* "3", "4.0", "4.1", "4.2" */
	uint32_t rsize;            /* negotiated rsize/wsize in bytes, 0 = unknown */
	uint32_t wsize;
	struct vnfs_mount_stats stats;
};

/* A step's RPCs to one mount for one NFS procedure, summed by the collector
 * from the wire_stats rows of its slot (bpf/wire.h: what is counted and
 * whose an RPC is).  Rows a record may carry: a job's steps merged. */
#define VNFS_MAX_WIRE_RECORDS VNFS_MAX_WIRE_ENTRIES

struct vnfs_wire_record {
	__u32 device;                 /* st_dev of the mount, 0 if not learned */
	char mount_point[256];        /* as vnfs_mount_record's, "" if unknown */
	uint16_t version;             /* the rpc_clnt's NFS version: 3 or 4 */
	char procedure[VNFS_WIRE_PROCEDURE_NAME_MAX]; /* "READ", as mountstats */
	struct vnfs_wire_stats stats;
};

/* "timeout", "delay", ...: indexed by enum vnfs_wire_error, NULL after the
 * last (lib/record.c). */
extern const char *const vnfs_wire_error_names[VNFS_WIRE_ERRORS + 1];

/* A wire row's counters and histograms by name (the JSON key and the
 * history's column) and place in vnfs_wire_stats, in the one order every
 * reader and writer uses (lib/record.c). */
struct vnfs_wire_field {
	const char *name;
	size_t offset;
};
#define VNFS_WIRE_COUNTERS 9
#define VNFS_WIRE_HISTOGRAMS 3
extern const struct vnfs_wire_field vnfs_wire_counters[VNFS_WIRE_COUNTERS];
extern const struct vnfs_wire_field vnfs_wire_histograms[VNFS_WIRE_HISTOGRAMS];

/* The counter (or first bucket) of stats at field's offset, to fill or to
 * read. */
static inline __u64 *vnfs_wire_field(struct vnfs_wire_stats *stats,
				     const struct vnfs_wire_field *field)
{
	return (__u64 *)((char *)stats + field->offset);
}

static inline const __u64 *vnfs_wire_value(const struct vnfs_wire_stats *stats,
					   const struct vnfs_wire_field *field)
{
	return (const __u64 *)((const char *)stats + field->offset);
}

/* Adds every counter and histogram of add into sum. */
void vnfs_wire_stats_add(struct vnfs_wire_stats *sum, const struct vnfs_wire_stats *add);

struct vnfs_step_record {
	/* Whose record: the workload's identity (lib/workload.h), set with
	 * vnfs_record_identify_slurm() for a Slurm step, which also sets
	 * job_id and step_id, Slurm's numbers (0 for any other source). */
	struct vnfs_workload workload;
	uint32_t job_id;
	uint32_t step_id;
	uint32_t uid;
	char user[33];             /* resolved from uid, or the number */
	char node[65];
	uint64_t cgroup_id;
	char cgroup_path[256];
	/* vnfs_tags_none() when it has none (NULL reads the same to every
	 * reader of lib/tags.h): a record holding its list by value was 1 KiB
	 * larger (the longest list's room), and the helper holds a record per
	 * workload, pointing to one copy of each distinct list
	 * (helper/collect/kept_tags.h). */
	const struct vnfs_tag_list *tags;
	int64_t start_time_ms;     /* registration, unix epoch ms */
	int64_t end_time_ms;       /* unregistration, 0 while running */
	int64_t sample_time_ms;    /* when these counters were read */
	bool finished;
	/* Points into storage the producer owns (the collector's copy of a
	 * slot's counters, a kept ended step's, a parsed record's): records are
	 * copied as structs, their 7.4 KiB of counters never, so a thousand
	 * steps cost no 7 KiB copies per interval. */
	const struct vnfs_step_stats *stats;
	size_t process_count;
	const struct vnfs_process_record *processes;
	size_t mount_count;
	const struct vnfs_mount_record *mounts;
	size_t wire_count;           /* its RPCs, per mount and procedure */
	const struct vnfs_wire_record *wire;
};

struct vnfs_job {
	struct vnfs_workload workload; /* its steps', without their part */
	uint32_t job_id;               /* Slurm's, as in the steps */
	uint32_t uid;
	const char *user;
	const char *node;
	int64_t start_time_ms;
	int64_t end_time_ms;
	size_t step_count;
	const struct vnfs_step_record *steps; /* final counts, finished == true */
};

/* A deep copy: *copy is record with tags, stats and rows of its own (stats
 * always, zero when record has none; a row array only when it has rows), to
 * free with vnfs_step_record_free_arrays.  Returns 0, or -1 out of memory,
 * with nothing allocated and copy holding no arrays. */
int vnfs_step_record_copy(struct vnfs_step_record *copy, const struct vnfs_step_record *record);
/* Frees what a copy (or vnfs_step_record_from_json) allocated; record is
 * left with none. */
void vnfs_step_record_free_arrays(struct vnfs_step_record *record);

/* Makes record the record of workload (with Slurm's numbers for a Slurm
 * step, 0 for any other). */
void vnfs_record_identify(struct vnfs_step_record *record, const struct vnfs_workload *workload);

/* Makes record the record of Slurm's job_id, step step_id. */
void vnfs_record_identify_slurm(struct vnfs_step_record *record, uint32_t job_id,
				uint32_t step_id);

/* The job of workload (its part ignored) from count of its steps as node
 * saw them: its owner from the steps, its start the earliest and its end
 * the latest of theirs.  The one rule for QUERY, FINISH, report files and
 * HISTORY. */
void vnfs_job_of_steps(struct vnfs_job *job, const struct vnfs_workload *workload,
		       const char *node, const struct vnfs_step_record *steps, size_t count);

/* Operation names ("read", "open", ...) and classes, indexed by enum
 * vnfs_operation: derived from bpf/operations.h in lib/operations.c. */
extern const char *const vnfs_operation_names[VNFS_OP_COUNT];
extern const bool vnfs_operation_is_metadata[VNFS_OP_COUNT];

/* "0", "batch", "extern", "interactive", ...: into buf, returns buf. */
const char *vnfs_step_name(uint32_t step_id, char *buf, size_t size);

/* The reverse of vnfs_step_name ("7", "batch", ...).  Returns 0, or -1. */
int vnfs_step_parse(const char *text, uint32_t *step_id);

/* Adds every counter and histogram of add into sum. */
void vnfs_step_stats_add(struct vnfs_step_stats *sum, const struct vnfs_step_stats *add);

/*
 * The q-quantile (0 < q <= 1) of a log2 histogram (bucket i holds [2^i,
 * 2^(i+1)), bucket 0 holds [0, 2)), interpolated linearly inside the bucket
 * that holds the rank ceil(q * total).  0 for an empty histogram.
 */
uint64_t vnfs_histogram_quantile(const __u64 *buckets, size_t bucket_count, double q);

#endif /* VNFS_RECORD_H */
