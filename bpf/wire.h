/*
 * wire.h — the ABI of the wire-level counters (wire.bpf.c): what the NFS
 * client sent to the server for each workload, per mount and NFS procedure,
 * as /proc/self/mountstats counts it per mount (DESIGN.md, decision 13).
 * Part of the BPF ABI (vnfs.h includes it): any change here must bump
 * VNFS_ABI_VERSION there.
 *
 * Where the numbers come from.  The kernel's RPC layer ends every task of an
 * rpc_clnt with rpc_count_iostats_metrics(), which adds the task into the
 * mount's per-procedure counters and then fires the rpc_stats_latency
 * tracepoint with the same backlog, round-trip and execution times.  The
 * program on that tracepoint reads the task the way that function does
 * (rq_ntrans, tk_timeouts, rq_xmit_bytes_sent, rq_reply_bytes_recvd,
 * tk_status), so a workload's counts and the mount's are the same sums.
 *
 * Whose an RPC is (its owner) is settled when the task starts, not when it
 * ends: the end runs in rpciod, whose cgroup is nobody's.
 *   - READ, WRITE and COMMIT built from pages (nfs_initiate_read, _write,
 *     _commit tracepoints) belong to the workload that opened the file the
 *     pages were read or written through: the open context the request
 *     carries, whose opener the program on alloc_nfs_open_context recorded.
 *     So writeback by a flusher thread after the writer exited, readahead
 *     and memory-mapped faults go to the job that did the I/O.
 *   - Any other RPC belongs to the workload of the task that starts it
 *     (rpc_task_begin runs in that task): GETATTR, LOOKUP, OPEN, CLOSE, ...
 *   - An RPC a kernel thread starts with no open context (the NFSv4 state
 *     manager's lease renewal, SEQUENCE, DELEGRETURN of a recalled
 *     delegation, ...) is the mount's background.
 * A workload is a step slot as for VFS calls (the nearest registered cgroup,
 * or the environment job); an owner of no workload is "unattributed".  The
 * slot is checked again when the RPC ends: if the cgroup that gave it is no
 * longer registered under it, the RPC is unattributed, never another step's.
 * An unattributed RPC's row is kept under what its task is counted under
 * (its cgroup, or its environment job's id): a workload the helper
 * identifies later (a container, an environment job, both registered
 * within an interval of their start) takes those rows as its own, so its
 * first RPCs are not lost.
 *
 * Which mount: the superblock of the pages' inode for READ/WRITE/COMMIT;
 * otherwise the rpc_clnt's, learned from those requests and from the VFS
 * call the starting task is inside (bpf/vnfs.bpf.c's task state).  An NFSv4
 * mount's lease upkeep runs on the server's shared rpc_clnt (the mount's
 * client's parent, which mountstats sums into every mount of that server):
 * it goes to the first mount of that server seen.  Device 0: not learned.
 */
#ifndef VNFS_WIRE_H
#define VNFS_WIRE_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#include "step_stats.h"

/* Rows of wire_stats on a node, and per step (a step's procedures x
 * mounts: NFSv4.2 has about 70 procedures, a step uses 10-20).  Every step
 * of a full node (VNFS_MAX_STEPS) may hold 16 rows; the map is allocated as
 * rows are made (BPF_F_NO_PREALLOC: about 1 KiB a row), not 16 MiB up
 * front.  Beyond a step's bound its RPCs of a new row are counted in the
 * health counter VNFS_HEALTH_WIRE_FULL only. */
#define VNFS_MAX_WIRE_ENTRIES (16 * VNFS_MAX_STEPS)
#define VNFS_MAX_WIRE_ENTRIES_PER_STEP 64
/* Rows of no workload with an owner's id (late binding, see vnfs_wire_key):
 * any user can make them (a process in a cgroup of its own), so they are
 * held to a quarter of the map; beyond it a new one goes to its mount's
 * row of id 0. */
#define VNFS_MAX_WIRE_UNATTRIBUTED_NAMED (VNFS_MAX_WIRE_ENTRIES / 4)
/* Procedures whose names are kept (wire_procedure_names): NFSv3's 22 and
 * NFSv4's about 70, with room for kernels to come. */
#define VNFS_MAX_WIRE_PROCEDURES 512
/* RPCs in flight whose owner is kept (wire_owners), open contexts whose
 * opener is (open_context_owners), rpc_clnts whose mount is (LRU maps: a
 * forgotten one costs an RPC its owner or mount, never a wrong one). */
#define VNFS_MAX_WIRE_TASKS 16384
#define VNFS_MAX_OPEN_CONTEXTS 16384
#define VNFS_MAX_RPC_CLIENTS 1024

/* The RPC program of NFS; other programs' clients (NFSACL, lockd) are not
 * in mountstats and are not counted. */
#define VNFS_NFS_PROGRAM 100003

/* A procedure's name as the kernel spells it (rpc_procinfo.p_name). */
#define VNFS_WIRE_PROCEDURE_NAME_MAX 24

enum vnfs_wire_owner_kind {
	VNFS_WIRE_WORKLOAD,     /* slot: the step's */
	VNFS_WIRE_UNATTRIBUTED, /* a process of no workload (slot VNFS_SLOT_NONE) */
	VNFS_WIRE_BACKGROUND,   /* a kernel thread, no open context */
	VNFS_WIRE_OWNER_KINDS,
};

/* Error statuses an RPC ended with (tk_status < 0), by kind. */
enum vnfs_wire_error {
	VNFS_WIRE_ERROR_TIMEOUT, /* ETIMEDOUT, EIO of a soft mount's timeout: no answer */
	VNFS_WIRE_ERROR_DELAY,   /* EJUKEBOX (NFS3ERR_JUKEBOX, NFS4ERR_DELAY): retry later */
	VNFS_WIRE_ERROR_STALE,   /* ESTALE: the file handle is no longer valid */
	VNFS_WIRE_ERROR_ACCESS,  /* EACCES, EPERM */
	VNFS_WIRE_ERROR_NOENT,   /* ENOENT: a name looked up that is not there */
	VNFS_WIRE_ERROR_IO,      /* EIO */
	VNFS_WIRE_ERROR_OTHER,
	VNFS_WIRE_ERRORS,
};

/* wire_stats key. */
struct vnfs_wire_key {
	__u32 slot;      /* VNFS_SLOT_NONE unless owner_kind is VNFS_WIRE_WORKLOAD */
	__u32 device;    /* st_dev of the mount, 0 if not learned */
	__u16 version;   /* NFS version of the rpc_clnt: 3 or 4 */
	__u16 procedure; /* rpc_procinfo.p_statidx: mountstats' row */
	__u32 owner_kind;
	/* VNFS_WIRE_UNATTRIBUTED: the owner's id (vnfs_wire_owner), 0 past
	 * VNFS_MAX_WIRE_UNATTRIBUTED_NAMED; 0 for the other kinds. */
	__u64 owner_id;
};

_Static_assert(sizeof(struct vnfs_wire_key) == 24,
	       "no padding in the key: the kernel compares hash keys as bytes");

/* wire_stats value: mountstats' per-op line, and its times as histograms
 * (nanoseconds, log2 buckets as in step_stats.h). */
struct vnfs_wire_stats {
	__u64 rpcs;           /* tasks ended ("ops") */
	__u64 transmissions;  /* sends, at least one per RPC ("trans") */
	__u64 major_timeouts; /* "timeouts" */
	__u64 bytes_sent;
	__u64 bytes_received;
	__u64 backlog_ns;     /* queued before the first send ("queue") */
	__u64 rtt_ns;         /* send to reply of the last send ("rtt") */
	__u64 execute_ns;     /* start to end ("execute") */
	__u64 errors;         /* ended with an error status ("errors") */
	__u64 error_kinds[VNFS_WIRE_ERRORS];
	__u64 backlog_histogram[VNFS_LATENCY_BUCKETS];
	__u64 rtt_histogram[VNFS_LATENCY_BUCKETS];
	__u64 execute_histogram[VNFS_LATENCY_BUCKETS];
};

/* wire_procedure_names key -> the name (NUL-padded). */
struct vnfs_wire_procedure {
	__u16 version;
	__u16 procedure;
};

/* Who an RPC, an open context or an rpc_clnt's mount is counted for. */
struct vnfs_wire_owner {
	/* VNFS_WIRE_WORKLOAD: the cgroup_slots key that gave slot;
	 * VNFS_WIRE_UNATTRIBUTED: what the task is counted under (its cgroup
	 * id, or its environment job's, VNFS_ENVIRONMENT_JOB_BIT | number), by
	 * which a workload identified later finds the rows; 0 for a kernel
	 * thread's. */
	__u64 id;
	__u32 slot;
	__u32 kind;          /* enum vnfs_wire_owner_kind */
	__u32 device;        /* wire_owners only: the mount, 0 if not known */
	__u32 state;         /* wire_owners only: enum vnfs_wire_task_state */
	__u64 starter;       /* wire_owners only: pid_tgid that set it */
};

/* An RPC's owner is set by the page I/O tracepoints (INITIATED, by the task
 * that then runs it) or by rpc_task_begin (BEGUN); an entry of another task
 * at the same address is stale and ignored. */
enum vnfs_wire_task_state {
	VNFS_WIRE_TASK_INITIATED = 1,
	VNFS_WIRE_TASK_BEGUN,
};

#endif /* VNFS_WIRE_H */
