// SPDX-License-Identifier: GPL-2.0
/*
 * wire.bpf.c — the wire-level programs: each NFS RPC the client ends, with
 * its mountstats counters, for the workload that owns it (bpf/wire.h says
 * whose an RPC is and why).  Part of vnfs.bpf.c's object (included at its
 * end), not an object of its own: the owner of an RPC is found through the
 * same maps the VFS programs count with (cgroup_slots, task_jobs,
 * task_state), which one object shares without pinning tricks.
 *
 * Cost: the programs run once per RPC (tens of microseconds at the least,
 * a network round trip) and once per open context, never per VFS call.
 */

/* The sunrpc and nfs modules' types, which vmlinux.h has only on a kernel
 * with them built in: the fields read, under a ___vnfs flavour so that they
 * never collide with vmlinux.h's, relocated by CO-RE against the modules'
 * BTF. */
struct rpc_procinfo___vnfs {
	u32 p_statidx;
	const char *p_name;
} __attribute__((preserve_access_index));

struct rpc_message___vnfs {
	const struct rpc_procinfo___vnfs *rpc_proc;
} __attribute__((preserve_access_index));

struct rpc_clnt___vnfs {
	u32 cl_prog;
	u32 cl_vers;
	struct rpc_clnt___vnfs *cl_parent;
} __attribute__((preserve_access_index));

struct rpc_rqst___vnfs {
	size_t rq_xmit_bytes_sent;
	size_t rq_reply_bytes_recvd;
	int rq_ntrans;
} __attribute__((preserve_access_index));

struct rpc_task___vnfs {
	int tk_status;
	struct rpc_message___vnfs tk_msg;
	struct rpc_clnt___vnfs *tk_client;
	struct rpc_rqst___vnfs *tk_rqstp;
	unsigned short tk_timeouts;
} __attribute__((preserve_access_index));

struct nfs_open_context___vnfs {
	int error;
	unsigned int mode; /* fmode_t */
} __attribute__((preserve_access_index));

struct nfs_pgio_args___vnfs {
	struct nfs_open_context___vnfs *context;
} __attribute__((preserve_access_index));

struct nfs_pgio_header___vnfs {
	struct inode *inode;
	struct rpc_task___vnfs task;
	struct nfs_pgio_args___vnfs args;
} __attribute__((preserve_access_index));

struct nfs_commit_data___vnfs {
	struct rpc_task___vnfs task;
	struct inode *inode;
	struct nfs_open_context___vnfs *context;
} __attribute__((preserve_access_index));

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VNFS_MAX_WIRE_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct vnfs_wire_key);
	__type(value, struct vnfs_wire_stats);
} wire_stats SEC(".maps");

/* wire_unattributed_entries[0]: rows of no workload with an owner's id,
 * held to VNFS_MAX_WIRE_UNATTRIBUTED_NAMED.  The helper maps it and lowers
 * it with an atomic subtraction when it deletes such rows. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
} wire_unattributed_entries SEC(".maps");

/* wire_entries[slot]: rows the slot's step made in wire_stats, held to
 * VNFS_MAX_WIRE_ENTRIES_PER_STEP; zeroed with the slot's rows. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, VNFS_MAX_STEPS);
	__type(key, __u32);
	__type(value, __u64);
} wire_entries SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VNFS_MAX_WIRE_PROCEDURES);
	__type(key, struct vnfs_wire_procedure);
	__type(value, char[VNFS_WIRE_PROCEDURE_NAME_MAX]);
} wire_procedure_names SEC(".maps");

/* rpc_task address -> its owner, from its start to its end. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, VNFS_MAX_WIRE_TASKS);
	__type(key, __u64);
	__type(value, struct vnfs_wire_owner);
} wire_owners SEC(".maps");

/* nfs_open_context address -> the workload of the task that made it.  A
 * context freed and another made at its address overwrites the entry. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, VNFS_MAX_OPEN_CONTEXTS);
	__type(key, __u64);
	__type(value, struct vnfs_wire_owner);
} open_context_owners SEC(".maps");

/* rpc_clnt address -> the st_dev of its mount. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, VNFS_MAX_RPC_CLIENTS);
	__type(key, __u64);
	__type(value, __u32);
} rpc_client_devices SEC(".maps");

#define PF_KTHREAD 0x00200000 /* include/linux/sched.h */

/* Whose the current task's requests are: its cgroup's workload (through
 * the VFS programs' cache of cgroups), else its environment job's, else
 * nobody's (a user process) or the mount's (a kernel thread). */
static __always_inline void current_owner(struct vnfs_wire_owner *owner)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct vnfs_cached_slot cgroup;
	struct vnfs_task_job *job;
	__u64 id;

	__u64 cgroup_id = bpf_get_current_cgroup_id();

	owner->id = 0;
	owner->slot = VNFS_SLOT_NONE;
	if (task->flags & PF_KTHREAD) {
		owner->kind = VNFS_WIRE_BACKGROUND;
		return;
	}
	owner->kind = VNFS_WIRE_UNATTRIBUTED;
	cgroup = resolve_cgroup(cgroup_id, cgroup_slots_generation_now());
	owner->slot = cgroup.slot;
	id = cgroup.registered_id;
	if (owner->slot == VNFS_SLOT_NONE) {
		id = cgroup_id; /* as its VFS calls are counted (count_call) */
		job = bpf_task_storage_get(&task_jobs, task, NULL, 0);
		if (job && job->number != 0) {
			struct vnfs_registration *registration;

			id = VNFS_ENVIRONMENT_JOB_BIT | job->number;
			registration = bpf_map_lookup_elem(&cgroup_slots, &id);
			if (registration)
				owner->slot = registration->slot;
		}
	}
	owner->id = id;
	if (owner->slot != VNFS_SLOT_NONE)
		owner->kind = VNFS_WIRE_WORKLOAD;
}

/* The slot an owner's RPC is counted in when it ends: the one it had,
 * while the cgroup (or job) that gave it still holds it. */
static __always_inline __u32 owner_slot_now(const struct vnfs_wire_owner *owner)
{
	struct vnfs_registration *registration;
	__u64 id = owner->id;

	if (owner->kind != VNFS_WIRE_WORKLOAD)
		return VNFS_SLOT_NONE;
	registration = bpf_map_lookup_elem(&cgroup_slots, &id);
	if (registration && registration->slot == owner->slot)
		return owner->slot;
	return VNFS_SLOT_NONE;
}

/* Remembers the mount of client (and of its parent, an NFSv4 server's
 * shared client, when not known yet). */
static __always_inline void learn_client_device(struct rpc_clnt___vnfs *client, __u32 device)
{
	struct rpc_clnt___vnfs *parent;
	__u64 key = (__u64)client;

	if (!client || device == 0 || bpf_map_lookup_elem(&rpc_client_devices, &key))
		return;
	bpf_map_update_elem(&rpc_client_devices, &key, &device, BPF_ANY);
	parent = BPF_CORE_READ(client, cl_parent);
	key = (__u64)parent;
	if (parent && parent != client && !bpf_map_lookup_elem(&rpc_client_devices, &key))
		bpf_map_update_elem(&rpc_client_devices, &key, &device, BPF_NOEXIST);
}

/* Stores key's owner in an LRU map of owners, where existing is key's
 * entry (or NULL).  An entry already there (the address of a freed task or
 * context, reused) is written in place: an update makes a new element and
 * frees the old, under the LRU's locks, which cost more under emulation
 * than the rest of the program together. */
static __always_inline void store_owner(void *owners, __u64 *key, struct vnfs_wire_owner *existing,
					const struct vnfs_wire_owner *owner)
{
	if (existing)
		*existing = *owner;
	else
		bpf_map_update_elem(owners, key, owner, BPF_ANY);
}

static __always_inline void set_owner(void *owners, __u64 *key, const struct vnfs_wire_owner *owner)
{
	store_owner(owners, key, bpf_map_lookup_elem(owners, key), owner);
}

/* A page I/O request is about to start as the rpc_task at task: its owner
 * is its open context's opener when ask_opener (and one was noted), else the
 * task that starts it; its mount is its inode's. */
static __always_inline void initiate_page_io(__u64 task, struct inode *inode,
					     struct nfs_open_context___vnfs *context,
					     bool ask_opener)
{
	struct vnfs_wire_owner owner, *opener = NULL;
	__u64 key = (__u64)context;

	if (ask_opener && context)
		opener = bpf_map_lookup_elem(&open_context_owners, &key);
	if (opener)
		owner = *opener;
	else
		current_owner(&owner);
	owner.device = inode->i_sb->s_dev;
	owner.state = VNFS_WIRE_TASK_INITIATED;
	owner.starter = bpf_get_current_pid_tgid();
	set_owner(&wire_owners, &task, &owner);
}

/* The tracepoints' arguments are typed (tp_btf): their fields are read in
 * place, as the verifier allows, not through bpf_probe_read_kernel calls,
 * which under emulation were most of what the programs cost per RPC.
 * Since Linux 6.12 the verifier takes a tracepoint's pointer arguments as
 * possibly NULL and refuses a read before a test, so every program tests
 * its own first, on every kernel. */
#define FMODE_WRITE 0x2 /* include/linux/fs.h */

/* A READ is started by the reader's own task (readahead, a fault,
 * O_DIRECT), which owns it.  Only in a kernel thread (a loop device's
 * worker reading its backing file) is the opener asked, and only for a
 * context that can write, the only kind noted: a note at a read-only
 * context's address is a freed writer's, never this reader's. */
SEC(VNFS_TP_BTF_SECTION "/nfs_initiate_read")
int BPF_PROG(wire_initiate_read, struct nfs_pgio_header___vnfs *header)
{
	struct nfs_open_context___vnfs *context;
	struct task_struct *task = bpf_get_current_task_btf();
	bool ask_opener;

	if (!header)
		return 0;
	context = header->args.context;
	ask_opener = (task->flags & PF_KTHREAD) && context && (context->mode & FMODE_WRITE);
	initiate_page_io((__u64)&header->task, header->inode, context, ask_opener);
	return 0;
}

/* Writes and commits are the opener's: a flusher thread, or any task under
 * memory pressure, may send them long after the writer has gone. */
SEC(VNFS_TP_BTF_SECTION "/nfs_initiate_write")
int BPF_PROG(wire_initiate_write, struct nfs_pgio_header___vnfs *header)
{
	if (!header)
		return 0;
	initiate_page_io((__u64)&header->task, header->inode, header->args.context, true);
	return 0;
}

SEC(VNFS_TP_BTF_SECTION "/nfs_initiate_commit")
int BPF_PROG(wire_initiate_commit, struct nfs_commit_data___vnfs *data)
{
	if (!data)
		return 0;
	initiate_page_io((__u64)&data->task, data->inode, data->context, true);
	return 0;
}

/* An open context is made in the task that opens the file (or, for an
 * NFSv4 delegation or state recovery, reuses an opener's).  Only one that
 * can write is noted: its pages may be written back by a flusher thread,
 * or by any task under memory pressure, long after.  Reads never ask a
 * read-only context's opener (wire_initiate_read), so the opens of a
 * read-only loop (a data loader's) cost no map access at all, and a note a
 * freed writer left at a read-only context's address is never read: the
 * next writer made at that address overwrites it. */
static __always_inline void note_open_context(struct nfs_open_context___vnfs *context)
{
	struct vnfs_wire_owner owner = {};
	__u64 key = (__u64)context;

	current_owner(&owner);
	set_owner(&open_context_owners, &key, &owner);
}

static __always_inline bool is_error_pointer(const void *pointer)
{
	return (long)pointer <= 0 && (long)pointer > -4096; /* NULL or ERR_PTR */
}

SEC(VNFS_FEXIT_SECTION "/alloc_nfs_open_context")
int BPF_PROG(wire_note_open_context, struct dentry *dentry, unsigned int mode, struct file *file,
	     struct nfs_open_context___vnfs *context)
{
	if ((mode & FMODE_WRITE) && !is_error_pointer(context))
		note_open_context(context);
	return 0;
}

/* The same on the kprobe path (probe mode kprobe), where it is one more
 * ftrace update rather than the helper's only BPF trampoline (28-144 ms to
 * attach on Debian's 6.1, docs/PERFORMANCE.md).  A return probe has no
 * arguments: the context keeps the mode it was made with. */
SEC("kretprobe")
int BPF_KRETPROBE(wire_note_open_context_on_return, struct nfs_open_context___vnfs *context)
{
	if (!is_error_pointer(context) && (BPF_CORE_READ(context, mode) & FMODE_WRITE))
		note_open_context(context);
	return 0;
}

/* The mount of an RPC with no pages: its client's, else that of the VFS
 * call the task is inside (whose device the VFS programs recorded). */
static __always_inline __u32 client_device(struct rpc_clnt___vnfs *client)
{
	__u64 key = (__u64)client;
	__u32 *known = bpf_map_lookup_elem(&rpc_client_devices, &key);
	struct vnfs_task_state *state;
	__u32 device = 0;

	if (known)
		return *known;
	state = current_task_state(false);
	if (!state)
		return 0;
	for (__u32 operation = 0; operation < VNFS_OP_COUNT; operation++) {
		if (state->depth[operation] > 0 && state->device[operation] != 0) {
			device = state->device[operation];
			break;
		}
	}
	/* Learnt once, after the loop: with the map updates inside it, the
	 * verifier went through 19,243 instructions for wire_task_begin and
	 * 7,043 for wire_task_end (100 and 33 ms of the helper's start under
	 * the instruction-counting clock), 6,175 and 3,334 without. */
	learn_client_device(client, device);
	return device;
}

SEC(VNFS_TP_BTF_SECTION "/rpc_task_begin")
int BPF_PROG(wire_task_begin, struct rpc_task___vnfs *task)
{
	__u64 key = (__u64)task, starter = bpf_get_current_pid_tgid();
	struct vnfs_wire_owner owner, *initiated;
	struct rpc_clnt___vnfs *client;
	__u32 device;

	if (!task)
		return 0;
	client = task->tk_client;
	if (!client || client->cl_prog != VNFS_NFS_PROGRAM)
		return 0;
	initiated = bpf_map_lookup_elem(&wire_owners, &key);
	if (initiated && initiated->state == VNFS_WIRE_TASK_INITIATED &&
	    initiated->starter == starter) {
		initiated->state = VNFS_WIRE_TASK_BEGUN;
		/* The pages' mount is this client's: for its RPCs without pages. */
		learn_client_device(client, initiated->device);
		return 0;
	}
	/* The device before the owner: client_device's loop is then walked by
	 * the verifier once, not once per way current_owner can end (3,006
	 * instructions for this program where it walked 6,176). */
	device = client_device(client);
	current_owner(&owner);
	owner.device = device;
	owner.state = VNFS_WIRE_TASK_BEGUN;
	owner.starter = starter;
	store_owner(&wire_owners, &key, initiated, &owner);
	return 0;
}

static __always_inline __u32 error_kind(int status, __u32 major_timeouts)
{
	switch (-status) {
	case 110: /* ETIMEDOUT */
		return VNFS_WIRE_ERROR_TIMEOUT;
	case 5: /* EIO: a soft mount's timeout, or the server's I/O error */
		return major_timeouts ? VNFS_WIRE_ERROR_TIMEOUT : VNFS_WIRE_ERROR_IO;
	case 528:   /* EJUKEBOX */
	case 10008: /* NFS4ERR_DELAY */
	case 10013: /* NFS4ERR_GRACE */
		return VNFS_WIRE_ERROR_DELAY;
	case 116: /* ESTALE */
		return VNFS_WIRE_ERROR_STALE;
	case 13: /* EACCES */
	case 1:  /* EPERM */
		return VNFS_WIRE_ERROR_ACCESS;
	case 2: /* ENOENT */
		return VNFS_WIRE_ERROR_NOENT;
	}
	return VNFS_WIRE_ERROR_OTHER;
}

/* The name mountstats gives the procedure, kept once per procedure (when
 * a row of it is made). */
static __always_inline void note_procedure_name(const struct vnfs_wire_key *key,
						const struct rpc_procinfo___vnfs *info)
{
	struct vnfs_wire_procedure procedure = { key->version, key->procedure };
	char name[VNFS_WIRE_PROCEDURE_NAME_MAX] = {};

	if (bpf_map_lookup_elem(&wire_procedure_names, &procedure))
		return;
	bpf_probe_read_kernel_str(name, sizeof(name), info->p_name);
	bpf_map_update_elem(&wire_procedure_names, &procedure, name, BPF_NOEXIST);
}

/* A new unattributed row of an owner's id, within the node's bound, or
 * false: the row of id 0 then takes it.  The count is taken before the
 * test, so that CPUs making rows at once never pass the bound together. */
static __always_inline bool unattributed_row_allowed(void)
{
	__u32 zero = 0;
	__u64 *made = bpf_map_lookup_elem(&wire_unattributed_entries, &zero);

	if (!made)
		return false;
	if (__sync_fetch_and_add(made, 1) < VNFS_MAX_WIRE_UNATTRIBUTED_NAMED)
		return true;
	__sync_fetch_and_add(made, -1);
	return false;
}

/* The row of key, made if need be within its step's bound (key's owner_id
 * may become 0: see VNFS_MAX_WIRE_UNATTRIBUTED_NAMED). */
static __always_inline struct vnfs_wire_stats *wire_row(struct vnfs_wire_key *key,
							const struct rpc_procinfo___vnfs *info)
{
	static const struct vnfs_wire_stats zero = {};
	struct vnfs_wire_stats *row = bpf_map_lookup_elem(&wire_stats, key);
	__u32 slot = key->slot;
	__u64 *entries;

	if (row)
		return row;
	note_procedure_name(key, info);
	if (key->owner_id != 0 && !unattributed_row_allowed()) {
		health_add(VNFS_HEALTH_WIRE_UNATTRIBUTED_OTHER);
		key->owner_id = 0;
		row = bpf_map_lookup_elem(&wire_stats, key);
		if (row)
			return row;
	}
	if (slot != VNFS_SLOT_NONE) {
		entries = bpf_map_lookup_elem(&wire_entries, &slot);
		if (!entries || *entries >= VNFS_MAX_WIRE_ENTRIES_PER_STEP) {
			health_add(VNFS_HEALTH_WIRE_FULL);
			return NULL;
		}
		__sync_fetch_and_add(entries, 1);
	}
	/* Not made (another CPU made it first, or the map is full): not counted. */
	if (bpf_map_update_elem(&wire_stats, key, &zero, BPF_NOEXIST)) {
		__u32 zero_index = 0;

		if (slot != VNFS_SLOT_NONE)
			entries = bpf_map_lookup_elem(&wire_entries, &slot);
		else if (key->owner_id != 0)
			entries = bpf_map_lookup_elem(&wire_unattributed_entries, &zero_index);
		else
			entries = NULL;
		if (entries)
			__sync_fetch_and_add(entries, -1);
	}
	row = bpf_map_lookup_elem(&wire_stats, key);
	if (!row)
		health_add(VNFS_HEALTH_WIRE_FULL);
	return row;
}

/* An RPC ended (rpc_count_iostats_metrics, after it added the task into
 * the mount's counters): the same sums, into its owner's row. */
SEC(VNFS_TP_BTF_SECTION "/rpc_stats_latency")
int BPF_PROG(wire_task_end, struct rpc_task___vnfs *task, s64 backlog, s64 rtt, s64 execute)
{
	const struct rpc_procinfo___vnfs *info;
	struct rpc_rqst___vnfs *request;
	struct rpc_clnt___vnfs *client;
	struct vnfs_wire_key wire_key = {};
	struct vnfs_wire_owner *owner;
	struct vnfs_wire_stats *row;
	__u64 key = (__u64)task;
	__u32 timeouts;
	int status, transmissions;

	if (!task)
		return 0;
	client = task->tk_client;
	info = task->tk_msg.rpc_proc;
	request = task->tk_rqstp;
	if (!client || !info || !request || client->cl_prog != VNFS_NFS_PROGRAM)
		return 0;
	wire_key.version = client->cl_vers;
	wire_key.procedure = info->p_statidx;
	owner = bpf_map_lookup_elem(&wire_owners, &key);
	if (owner) {
		wire_key.slot = owner_slot_now(owner);
		wire_key.owner_kind = owner->kind;
		/* A step that ended meanwhile: its record is final, the RPC the
		 * node's under the step's cgroup (kept until it is released). */
		if (owner->kind == VNFS_WIRE_WORKLOAD && wire_key.slot == VNFS_SLOT_NONE)
			wire_key.owner_kind = VNFS_WIRE_UNATTRIBUTED;
		if (wire_key.owner_kind == VNFS_WIRE_UNATTRIBUTED)
			wire_key.owner_id = owner->id;
		wire_key.device = owner->device ? owner->device : client_device(client);
		bpf_map_delete_elem(&wire_owners, &key);
	} else {
		/* begun before the programs were attached */
		wire_key.slot = VNFS_SLOT_NONE;
		wire_key.owner_kind = VNFS_WIRE_BACKGROUND;
		wire_key.device = client_device(client);
	}
	row = wire_row(&wire_key, info);
	if (!row)
		return 0;
	transmissions = request->rq_ntrans;
	timeouts = task->tk_timeouts;
	status = task->tk_status;
	__sync_fetch_and_add(&row->rpcs, 1);
	__sync_fetch_and_add(&row->transmissions, transmissions > 1 ? transmissions : 1);
	__sync_fetch_and_add(&row->major_timeouts, timeouts);
	__sync_fetch_and_add(&row->bytes_sent, request->rq_xmit_bytes_sent);
	__sync_fetch_and_add(&row->bytes_received, request->rq_reply_bytes_recvd);
	__sync_fetch_and_add(&row->backlog_ns, backlog);
	__sync_fetch_and_add(&row->rtt_ns, rtt);
	__sync_fetch_and_add(&row->execute_ns, execute);
	__sync_fetch_and_add(&row->backlog_histogram[log2_bucket(backlog, VNFS_LATENCY_BUCKETS)], 1);
	__sync_fetch_and_add(&row->rtt_histogram[log2_bucket(rtt, VNFS_LATENCY_BUCKETS)], 1);
	__sync_fetch_and_add(&row->execute_histogram[log2_bucket(execute, VNFS_LATENCY_BUCKETS)], 1);
	if (status < 0) {
		__u32 kind = error_kind(status, timeouts);

		__sync_fetch_and_add(&row->errors, 1);
		if (kind < VNFS_WIRE_ERRORS)
			__sync_fetch_and_add(&row->error_kinds[kind], 1);
	}
	return 0;
}
