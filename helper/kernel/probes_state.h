/*
 * probes_state.h — what the three files of the probes (probes.c: plan, load,
 * attach, report; pins.c: the bpffs pins; maps.c: reading and writing the
 * maps) share: the state of one loaded instance.  Nothing outside
 * helper/kernel/ includes it; the rest of the helper sees probes.h.
 */
#ifndef VNFS_PROBES_STATE_H
#define VNFS_PROBES_STATE_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "helper/kernel/hooks.h"
#include "helper/kernel/core_btf.h"
#include "helper/kernel/kernel_btf.h"
#include "helper/kernel/probes.h"

struct bpf_link;
struct bpf_program;
struct bpf_prog_load_opts;
struct vnfs_bpf;

#define REASON_SIZE 160
#define MAX_ATTEMPTS 4
/* Arguments the kprobe programs can read (PT_REGS_PARM1..5). */
#define KPROBE_ARGUMENTS 5

/* The step_activity map as mmapped (a whole number of pages). */
#define STEP_ACTIVITY_MAPPING_SIZE (sizeof(__u64) * VNFS_MAX_STEPS)
_Static_assert(STEP_ACTIVITY_MAPPING_SIZE % 4096 == 0, "step_activity fills whole pages");

/* The unattributed_entries map as mmapped: one page (the kernel rounds an
 * mmapable array up to whole pages). */
#define UNATTRIBUTED_ENTRIES_MAPPING_SIZE 4096

/* An unattributed row as the last expiry pass saw it: its calls, and since
 * when they have not moved. */
struct watched_row {
	struct vnfs_unattributed_key key;
	uint64_t calls;
	int64_t still_since_ms;
};

/* The kprobe.multi links (kprobe_multi.c). */
enum { KPROBE_MULTI_ENTRY, KPROBE_MULTI_EXIT, KPROBE_MULTI_LINKS };

/* Indices of the pinned abi map. */
enum { ABI_VERSION, ABI_STEP_STATS_SIZE };

/* The environment capture's programs, each on a scheduler tracepoint and
 * pinned as links/<tracepoint>-<end>: a task forked joins its parent's job
 * (attached first, so that no child of a captured task is missed), a
 * program started is judged by its environment. */
enum environment_program { ENVIRONMENT_INHERIT, ENVIRONMENT_CAPTURE, ENVIRONMENT_PROGRAMS };
struct environment_pin {
	const char *tracepoint;
	const char *end;
};
extern const struct environment_pin environment_pins[ENVIRONMENT_PROGRAMS];

/* The wire-level programs (bpf/wire.bpf.c; wire_probes.c), each pinned
 * as links/wire-<name>. */
enum wire_program {
	WIRE_NOTE_OPEN_CONTEXT,
	WIRE_INITIATE_READ,
	WIRE_INITIATE_WRITE,
	WIRE_INITIATE_COMMIT,
	WIRE_TASK_BEGIN,
	WIRE_TASK_END,
	WIRE_PROGRAMS,
};

struct hook_state {
	const struct vnfs_hook *hook;
	struct vnfs_hook_config config;
	bool absent;                /* the kernel's nfs BTF has no such function */
	__u32 btf_id;               /* fentry/fexit target: the FUNC type id */
	int btf_object_fd;          /* and where it is (0: vmlinux); see kernel_btf */
	bool has_prototype;         /* config comes from BTF, not the fallback */
	bool reused;                /* links pinned by a previous helper */
	bool at_once;               /* attached by the kprobe.multi links (kprobe_multi.c) */
	enum vnfs_attach_method plan;
	enum vnfs_attach_method method;
	struct bpf_link *entry_link;
	struct bpf_link *exit_link;
	char note[REASON_SIZE];     /* absence, or how the prototype was read */
	char fentry_error[REASON_SIZE];
	char kprobe_error[REASON_SIZE];
};

struct vnfs_probes {
	struct vnfs_bpf *skeleton;
	struct hook_state hooks[VNFS_MAX_HOOKS];
	size_t hook_count;
	enum vnfs_probe_mode mode;
	bool pin;
	char pin_dir[PATH_MAX];
	/* The bpffs this start mounted (pins.c, check_bpffs), "" none: a
	 * failed start unmounts it. */
	char mounted_bpffs[PATH_MAX];
	size_t mounted_bpffs_entries; /* what it held once mounted */
	struct bpf_link *exit_drain_link; /* drain_at_exit on sched_process_exit */
	/* The kprobed functions attached at once (kprobe_multi.c): whether the
	 * kernel can, the set's hash (its pins' name), the entry and exit links
	 * and whether a previous helper's were taken over. */
	bool kprobe_multi;
	uint64_t kprobe_multi_set;
	struct bpf_link *kprobe_multi_links[KPROBE_MULTI_LINKS];
	bool kprobe_multi_reused;
	/* Otherwise, the generic programs attached function by function with
	 * the slot as cookie (kprobe_cookies.c): whether the kernel can. */
	bool kprobe_cookies;
	/* The environment capture (bpf/vnfs.h, "Environment jobs"): wanted
	 * (job variables listed) and loadable (bpf_loop, 5.17), and its links,
	 * pinned beside the drain's. */
	bool capture_environment;
	struct bpf_link *environment_links[ENVIRONMENT_PROGRAMS];
	/* RPCs per workload: wanted and possible, and their links. */
	bool count_wire;
	struct wire_target_found {
		__u32 btf_id;      /* the program's target (0: not found) */
		int btf_object_fd; /* and where it is; see kernel_btf */
	} wire_targets[WIRE_PROGRAMS];
	struct bpf_link *wire_links[WIRE_PROGRAMS];
	bool wire_note_on_return; /* the open-context note by kretprobe (wire_probes.c) */
	__u64 *wire_unattributed_entries; /* mmapped read-write: [0] rows with an owner's id */
	/* Unattributed wire rows whose owner is gone, deleted from the map and
	 * summed here per mount and procedure (owner_id 0), reported by every
	 * walk after the map's rows; and when the walk next looks for them. */
	struct wire_expired_row { struct vnfs_wire_key key; struct vnfs_wire_stats stats; } *wire_expired;
	size_t wire_expired_count;
	int64_t next_wire_expiry_ms;
	volatile __u64 *step_activity; /* mmapped step_activity map */
	__u64 *unattributed_entries;   /* mmapped read-write: [0] rows of their own */
	struct watched_row *watched;   /* unattributed rows at the last expiry pass */
	size_t watched_count;
	int64_t next_expiry_ms;        /* when the walk next looks for rows to expire */
	int cgroup_root_fd;            /* cgroup2 root for open_by_handle_at, -1 none */
	bool cgroup_root_tried;
	bool can_fold;                 /* fold_unattributed loaded (a syscall program) */
	bool legacy_kernel;            /* no task storage: the legacy build (bpf/vnfs.bpf.c) */
	unsigned cost_cut;             /* enum vnfs_cost_cut (bpf/vnfs.h) */
	/* The kprobe path's return probes (kretprobe_events.c): how many calls
	 * of each function they follow at once, and the tracefs they are made
	 * in; 0 or NULL: libbpf's, with the kernel's default. */
	unsigned kprobe_calls_in_flight;
	const char *tracefs;
	struct bpf_link *new_cgroup_link;  /* note_new_cgroup on cgroup_mkdir, not pinned */
	struct ring_buffer *new_cgroups;   /* its ring, read by vnfs_probes_for_each_new_cgroup */
	vnfs_new_cgroup_fn new_cgroup_fn;  /* that call's fn and context, for the ring's callback */
	void *new_cgroup_context;
	int barrier_fd, barrier_inner_fd; /* see wait_for_running_programs; -1 until made */
	pthread_mutex_t cgroup_slots_lock;
	struct kernel_btf kernel_btf; /* while opening: the targets' BTF objects */
	struct core_btf core_btf;     /* while opening: the types libbpf relocates against */
};

/* The drain at task exit: a raw tracepoint, pinned as links/<this>-drain. */
#define EXIT_DRAIN_TRACEPOINT "sched_process_exit"
#define EXIT_DRAIN_PIN_END "drain"

/* ---- pins.c ---- */
int pins_prepare(struct vnfs_probes *probes, bool *had_pins, char *error, size_t error_size);
/* After a failed start: unmounts the bpffs pins_prepare mounted, if nothing
 * is pinned on it any more. */
void pins_unmount_bpffs(struct vnfs_probes *probes);
int pins_set_map_paths(struct vnfs_probes *probes);
int pins_save(struct vnfs_probes *probes, char *error, size_t error_size);
int pins_link_path(char *buffer, size_t size, const char *pin_dir, const char *function,
		   const char *end);

/* ---- kprobe_multi.c ---- */
bool kprobe_multi_possible(const struct vnfs_probes *probes);
void kprobe_multi_prepare(struct vnfs_probes *probes);
bool kprobe_multi_refused(struct vnfs_probes *probes, const char *program, int result);
bool kprobe_multi_attach(struct vnfs_probes *probes);
/* Lets the links go; detach removes their pins too. */
void kprobe_multi_release(struct vnfs_probes *probes, bool detach);
void kprobe_multi_reuse_pinned(struct vnfs_probes *probes);
bool kprobe_multi_pin_named(const struct vnfs_probes *probes, const char *name);
void kprobe_multi_pin(struct vnfs_probes *probes);

/* ---- kprobe_cookies.c ---- */
bool kprobe_cookies_possible(const struct vnfs_probes *probes);
/* Whether this round's kprobed functions take the generic programs. */
bool kprobe_cookies_used(const struct vnfs_probes *probes);
/* The two programs loaded when some function is planned for kprobes. */
void kprobe_cookies_prepare(struct vnfs_probes *probes, bool kprobes_planned);
bool kprobe_cookies_refused(struct vnfs_probes *probes, const char *program, int result);

/* ---- kretprobe_events.c ---- */
/* Where tracefs is mounted (writable kprobe_events), NULL if nowhere. */
const char *kretprobe_events_tracefs(void);
/* A return probe on function running program, its link carrying cookie:
 * made in tracefs with room for the configured calls in flight, else by
 * libbpf with the kernel's default room.  NULL with errno on failure. */
struct bpf_link *kretprobe_attach(const struct vnfs_probes *probes, struct bpf_program *program,
				  const char *function, __u64 cookie);
/* Removes the group's events that no link holds; with wait_for_release,
 * waits a while for those of links just unpinned.  Returns how many are
 * still held, or -1 when they cannot be listed. */
int kretprobe_events_remove(bool wait_for_release);

/* ---- wire_probes.c ---- */
bool wire_probes_possible(void);
size_t wire_probes_wanted(const struct vnfs_probes *probes, struct kernel_wanted *wanted);
void wire_probes_found(struct vnfs_probes *probes, const struct kernel_function *found);
int wire_probes_set_target(const struct vnfs_probes *probes, const struct bpf_program *program,
			   struct bpf_prog_load_opts *options);
/* The programs this round loads; fentry_planned: whether any function
 * takes fentry (else the open-context note takes a kretprobe). */
void wire_probes_prepare(struct vnfs_probes *probes, bool fentry_planned);
bool wire_probes_reused(const struct vnfs_probes *probes);
void wire_probes_attach(struct vnfs_probes *probes);
/* Lets the links go; detach removes their pins too. */
void wire_probes_release(struct vnfs_probes *probes, bool detach);
void wire_probes_reuse_pinned(struct vnfs_probes *probes);
bool wire_pin_named(const char *name);

#endif /* VNFS_PROBES_STATE_H */
