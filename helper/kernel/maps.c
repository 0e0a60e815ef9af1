/*
 * maps.c — the probes' maps read and written while the helper runs (see
 * probes.h): the cgroup_slots map (cgroup id -> slot), the per-slot counters,
 * the breakdown and unattributed walks, the expiry of unattributed rows,
 * resetting a released slot, the BPF side's health counters.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "helper/kernel/probes_state.h"
#include "lib/containers/containers.h" /* the cgroup2 mount, a cgroup by id */
#include "lib/log.h"

#include "bpf/vnfs.skel.h"

/* ---- the cgroup_slots map: cgroup id -> slot ---- */

/* Called with cgroup_slots_lock held, after cgroup_slots changed. */
static int bump_generation(struct vnfs_probes *probes)
{
	int fd = bpf_map__fd(probes->skeleton->maps.cgroup_slots_generation);
	__u32 key = 0, generation = 0;

	if (bpf_map_lookup_elem(fd, &key, &generation) != 0)
		return -1;
	generation++;
	return bpf_map_update_elem(fd, &key, &generation, BPF_ANY);
}

int vnfs_probes_register_cgroup(struct vnfs_probes *probes, uint64_t cgroup_id, uint32_t slot)
{
	struct vnfs_registration registration = { .slot = slot };
	__u64 key = cgroup_id;
	int status;

	if (!probes || slot >= VNFS_MAX_STEPS || cgroup_id == 0)
		return -1;
	pthread_mutex_lock(&probes->cgroup_slots_lock);
	status = bpf_map_update_elem(bpf_map__fd(probes->skeleton->maps.cgroup_slots), &key,
				     &registration, BPF_ANY);
	if (status == 0)
		status = bump_generation(probes);
	pthread_mutex_unlock(&probes->cgroup_slots_lock);
	return status == 0 ? 0 : -1;
}

int vnfs_probes_unregister_cgroup(struct vnfs_probes *probes, uint64_t cgroup_id)
{
	__u64 key = cgroup_id;
	int status;

	if (!probes)
		return -1;
	pthread_mutex_lock(&probes->cgroup_slots_lock);
	status = bpf_map_delete_elem(bpf_map__fd(probes->skeleton->maps.cgroup_slots), &key);
	if (status == 0)
		status = bump_generation(probes);
	pthread_mutex_unlock(&probes->cgroup_slots_lock);
	return status == 0 ? 0 : -1;
}

int vnfs_probes_registered(struct vnfs_probes *probes, uint64_t cgroup_id, uint32_t *slot)
{
	struct vnfs_registration registration;
	__u64 key = cgroup_id;

	if (!probes ||
	    bpf_map_lookup_elem(bpf_map__fd(probes->skeleton->maps.cgroup_slots), &key,
				&registration) != 0)
		return -1;
	*slot = registration.slot;
	return 0;
}

uint64_t vnfs_probes_step_activity(const struct vnfs_probes *probes, uint32_t slot)
{
	if (!probes || !probes->step_activity || slot >= VNFS_MAX_STEPS)
		return 0;
	return probes->step_activity[slot];
}

int vnfs_probes_read_step_stats(const struct vnfs_probes *probes, uint32_t slot,
				struct vnfs_step_stats *stats)
{
	__u32 key = slot;

	if (!probes || slot >= VNFS_MAX_STEPS)
		return -1;
	return bpf_map_lookup_elem(bpf_map__fd(probes->skeleton->maps.step_stats), &key, stats);
}

/* ---- map walks ---- */

typedef int (*entry_fn)(const void *key, const void *value, void *context);

/* Entries read per batch: a few hundred keep the syscalls per walk low (a
 * 16,384-row map in 64 reads, where one read per entry and one per key
 * made 32,768) and the buffer small (270 KiB for wire_stats). */
#define WALK_BATCH_ENTRIES 256

/* Reads the next batch into keys and values; *count in: room, out: read.
 * 1: more to read, 0: the last batch, -1: an error.  A hash bucket larger
 * than the room (ENOSPC, nothing read) doubles the room and is read again. */
static int read_batch(int fd, uint64_t *position, bool first, unsigned char **keys,
		      size_t key_size, unsigned char **values, size_t value_size, uint32_t *room,
		      uint32_t *count)
{
	uint64_t next = 0;

	for (;;) {
		*count = *room;
		if (bpf_map_lookup_batch(fd, first ? NULL : position, &next, *keys, *values,
					 count, NULL) == 0) {
			*position = next;
			return 1;
		}
		if (errno == ENOENT)
			return 0;
		if (errno != ENOSPC || *count != 0 || *room >= (1u << 16))
			return -1;
		*room *= 2;
		unsigned char *grown_keys = realloc(*keys, key_size * *room);
		if (grown_keys)
			*keys = grown_keys;
		unsigned char *grown_values = realloc(*values, value_size * *room);
		if (grown_values)
			*values = grown_values;
		if (!grown_keys || !grown_values)
			return -1;
	}
}

/* Calls fn for each entry of a hash map, read in batches: an entry deleted
 * during the walk may still be seen once, none is seen twice. */
static int for_each_entry(int fd, size_t key_size, size_t value_size, entry_fn fn,
			  void *context)
{
	uint32_t room = WALK_BATCH_ENTRIES, count = 0;
	unsigned char *keys = malloc(key_size * room), *values = malloc(value_size * room);
	uint64_t position = 0;
	int more = 1, status = 0;

	if (!keys || !values)
		status = -1;
	for (bool first = true; status == 0 && more == 1; first = false) {
		more = read_batch(fd, &position, first, &keys, key_size, &values, value_size, &room,
				  &count);
		if (more < 0)
			status = -1;
		for (uint32_t i = 0; status == 0 && i < count; i++)
			status = fn(keys + i * key_size, values + i * value_size, context);
	}
	free(keys);
	free(values);
	return status;
}

/* breakdown_stats rows as the callback of a counter source sees them. */
struct breakdown_walk {
	vnfs_breakdown_fn fn;
	void *context;
};

static int call_breakdown(const void *key, const void *value, void *context)
{
	const struct breakdown_walk *walk = context;

	return walk->fn(key, value, walk->context);
}

int vnfs_probes_for_each_breakdown(struct vnfs_probes *probes, vnfs_breakdown_fn fn,
				   void *context)
{
	struct breakdown_walk walk = { fn, context };

	return for_each_entry(bpf_map__fd(probes->skeleton->maps.breakdown_stats),
			      sizeof(struct vnfs_breakdown_key), sizeof(struct vnfs_breakdown_stats),
			      call_breakdown, &walk);
}

static int64_t monotonic_ms(void);
static int cgroup_root(struct vnfs_probes *probes);

/*
 * The entries of a map that match, collected during a walk and acted on
 * after it (deleting while walking would restart get_next_key): the key,
 * and the value when value_size is not 0, of each.
 */
struct matching_entries {
	bool (*matches)(const void *key, const void *value, void *context);
	void *context;
	size_t key_size, value_size;
	size_t count, capacity;
	unsigned char *entries;
};

static int collect_matching_entry(const void *key, const void *value, void *context)
{
	struct matching_entries *collected = context;
	size_t size = collected->key_size + collected->value_size;

	if (!collected->matches(key, value, collected->context))
		return 0;
	if (collected->count == collected->capacity) {
		size_t capacity = collected->capacity ? 2 * collected->capacity : 64;
		unsigned char *entries = realloc(collected->entries, capacity * size);

		if (!entries)
			return -1;
		collected->entries = entries;
		collected->capacity = capacity;
	}
	memcpy(collected->entries + collected->count * size, key, collected->key_size);
	memcpy(collected->entries + collected->count * size + collected->key_size, value,
	       collected->value_size);
	collected->count++;
	return 0;
}

/* Walks the map of fd (whose values are read whole: value_size, or the
 * map's own value size for keys only).  Returns 0 or -1; the caller frees
 * collected->entries either way. */
static int collect_matching_entries(int fd, struct matching_entries *collected)
{
	struct bpf_map_info info = { 0 };
	__u32 length = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &length) != 0)
		return -1;
	return for_each_entry(fd, collected->key_size, info.value_size, collect_matching_entry,
			      collected);
}

static const void *matching_key(const struct matching_entries *collected, size_t i)
{
	return collected->entries + i * (collected->key_size + collected->value_size);
}

static const void *matching_value(const struct matching_entries *collected, size_t i)
{
	return (const unsigned char *)matching_key(collected, i) + collected->key_size;
}



/* The procedure names the kernel side noted (a few dozen), read once per walk. */
struct wire_walk {
	vnfs_wire_fn fn;
	void *context;
	size_t name_count;
	struct {
		struct vnfs_wire_procedure procedure;
		char name[VNFS_WIRE_PROCEDURE_NAME_MAX + 1];
	} names[VNFS_MAX_WIRE_PROCEDURES];
};

static int note_procedure_name(const void *key, const void *value, void *context)
{
	struct wire_walk *walk = context;

	if (walk->name_count == sizeof(walk->names) / sizeof(walk->names[0]))
		return 0;
	memcpy(&walk->names[walk->name_count].procedure, key, sizeof(struct vnfs_wire_procedure));
	memcpy(walk->names[walk->name_count].name, value, VNFS_WIRE_PROCEDURE_NAME_MAX);
	walk->names[walk->name_count].name[VNFS_WIRE_PROCEDURE_NAME_MAX] = '\0';
	walk->name_count++;
	return 0;
}

static int call_wire(const void *key, const void *value, void *context)
{
	const struct vnfs_wire_key *wire_key = key;
	struct wire_walk *walk = context;
	const char *name = "";

	for (size_t i = 0; i < walk->name_count; i++)
		if (walk->names[i].procedure.version == wire_key->version &&
		    walk->names[i].procedure.procedure == wire_key->procedure)
			name = walk->names[i].name;
	return walk->fn(wire_key, value, name, walk->context);
}

static void expire_wire_rows(struct vnfs_probes *probes);

/* Whether a walk at now looks for rows to expire: at next_ms, set a
 * VNFS_UNATTRIBUTED_EXPIRY_PERIOD_MS after the last look, or sooner, a
 * VNFS_FULL_BOUND_EXPIRY_PERIOD_MS after it, while the rows kept under
 * owners' ids (*entries) are at their bound: a new owner's calls then go to
 * a shared row, so room given back soon is worth a look's cost. */
static bool expiry_due(int64_t now, int64_t next_ms, const __u64 *entries, __u64 bound)
{
	bool full = entries && __atomic_load_n(entries, __ATOMIC_RELAXED) >= bound;

	return now >= next_ms ||
	       (full && now >= next_ms - VNFS_UNATTRIBUTED_EXPIRY_PERIOD_MS +
				       VNFS_FULL_BOUND_EXPIRY_PERIOD_MS);
}

int vnfs_probes_for_each_wire(struct vnfs_probes *probes, vnfs_wire_fn fn, void *context)
{
	struct wire_walk *walk = calloc(1, sizeof(*walk));
	int64_t now = monotonic_ms();
	int status;

	if (!walk)
		return -1;
	walk->fn = fn;
	walk->context = context;
	status = for_each_entry(bpf_map__fd(probes->skeleton->maps.wire_procedure_names),
				sizeof(struct vnfs_wire_procedure), VNFS_WIRE_PROCEDURE_NAME_MAX,
				note_procedure_name, walk);
	if (status == 0)
		status = for_each_entry(bpf_map__fd(probes->skeleton->maps.wire_stats),
					sizeof(struct vnfs_wire_key),
					sizeof(struct vnfs_wire_stats), call_wire, walk);
	for (size_t i = 0; status == 0 && i < probes->wire_expired_count; i++)
		status = call_wire(&probes->wire_expired[i].key, &probes->wire_expired[i].stats, walk);
	free(walk);
	/* After the walk, as for the VFS rows: their RPCs show in the
	 * expired sums from the next walk on. */
	if (status == 0 && expiry_due(now, probes->next_wire_expiry_ms,
				      probes->wire_unattributed_entries,
				      VNFS_MAX_WIRE_UNATTRIBUTED_NAMED)) {
		probes->next_wire_expiry_ms = now + VNFS_UNATTRIBUTED_EXPIRY_PERIOD_MS;
		expire_wire_rows(probes);
	}
	return status;
}

/* An unattributed row's owner no longer is: its cgroup removed, or its
 * environment job gone from the kernel's jobs. */
static bool wire_owner_gone(struct vnfs_probes *probes, uint64_t owner_id)
{
	__u64 number = owner_id & ~VNFS_ENVIRONMENT_JOB_BIT;
	struct vnfs_environment_job job;

	if (VNFS_IS_ENVIRONMENT_JOB(owner_id))
		return bpf_map_lookup_elem(bpf_map__fd(probes->skeleton->maps.environment_jobs),
					   &number, &job) != 0 && errno == ENOENT;
	return vnfs_cgroup_gone(cgroup_root(probes), owner_id);
}

/* Adds a deleted row's counts into the expired sums (its key with owner 0). */
static int keep_expired(struct vnfs_probes *probes, const struct vnfs_wire_key *key,
			const struct vnfs_wire_stats *stats)
{
	struct vnfs_wire_key summed = *key;
	struct wire_expired_row *grown;

	summed.owner_id = 0;
	for (size_t i = 0; i < probes->wire_expired_count; i++) {
		if (memcmp(&probes->wire_expired[i].key, &summed, sizeof(summed)) == 0) {
			vnfs_wire_stats_add(&probes->wire_expired[i].stats, stats);
			return 0;
		}
	}
	grown = realloc(probes->wire_expired,
			(probes->wire_expired_count + 1) * sizeof(*probes->wire_expired));
	if (!grown)
		return -1;
	probes->wire_expired = grown;
	grown[probes->wire_expired_count].key = summed;
	grown[probes->wire_expired_count++].stats = *stats;
	return 0;
}

/* A row of no workload kept under an owner's id (bpf/wire.h). */
static bool owned_unattributed(const struct vnfs_wire_key *key)
{
	return key->owner_kind == VNFS_WIRE_UNATTRIBUTED && key->owner_id != 0;
}

static bool row_of_owner(const void *key, const void *value, void *owner_id)
{
	(void)value;
	return owned_unattributed(key) &&
	       ((const struct vnfs_wire_key *)key)->owner_id == *(const uint64_t *)owner_id;
}

static bool row_of_gone_owner(const void *key, const void *value, void *probes)
{
	(void)value;
	return owned_unattributed(key) &&
	       wire_owner_gone(probes, ((const struct vnfs_wire_key *)key)->owner_id);
}

/* Deletes such a row, giving its room back (an atomic subtraction: an
 * update through the syscall would overwrite what the programs add
 * meanwhile).  Returns 0, or -1 when it could not be deleted. */
static int delete_owned_row(struct vnfs_probes *probes, int fd, const struct vnfs_wire_key *key)
{
	if (bpf_map_delete_elem(fd, key) != 0)
		return errno == ENOENT ? 0 : -1;
	if (probes->wire_unattributed_entries)
		__atomic_fetch_sub(probes->wire_unattributed_entries, 1, __ATOMIC_RELAXED);
	return 0;
}

/* Rows kept under an owner that is gone will never be a workload's: their
 * room is given back (the bound of VNFS_MAX_WIRE_UNATTRIBUTED_NAMED) and
 * their counts go on in the expired sums, so the node's totals never go
 * down. */
static void expire_wire_rows(struct vnfs_probes *probes)
{
	struct matching_entries gone = { .matches = row_of_gone_owner, .context = probes,
					 .key_size = sizeof(struct vnfs_wire_key),
					 .value_size = sizeof(struct vnfs_wire_stats) };
	int fd = bpf_map__fd(probes->skeleton->maps.wire_stats);

	if (collect_matching_entries(fd, &gone) != 0)
		vnfs_warning("looking for RPC rows of gone cgroups failed: tried again in %d s",
			     VNFS_UNATTRIBUTED_EXPIRY_PERIOD_MS / 1000);
	for (size_t i = 0; i < gone.count; i++) {
		const struct vnfs_wire_key *key = matching_key(&gone, i);

		if (keep_expired(probes, key, matching_value(&gone, i)) != 0)
			break; /* out of memory: the row stays, counted, and is tried again */
		(void)delete_owned_row(probes, fd, key);
	}
	free(gone.entries);
}

int vnfs_probes_forget_wire(struct vnfs_probes *probes, uint64_t owner_id)
{
	struct matching_entries rows = { .matches = row_of_owner, .context = &owner_id,
					 .key_size = sizeof(struct vnfs_wire_key) };
	int fd, status;

	if (!probes || owner_id == 0)
		return -1;
	fd = bpf_map__fd(probes->skeleton->maps.wire_stats);
	status = collect_matching_entries(fd, &rows);
	for (size_t i = 0; status == 0 && i < rows.count; i++)
		status = delete_owned_row(probes, fd, matching_key(&rows, i));
	free(rows.entries);
	return status;
}

struct unattributed_walk {
	vnfs_unattributed_fn fn;
	void *context;
};

static int call_unattributed(const void *key, const void *value, void *walk)
{
	const struct unattributed_walk *unattributed_walk = walk;

	return unattributed_walk->fn(key, value, unattributed_walk->context);
}

static int64_t monotonic_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

int vnfs_probes_for_each_unattributed(struct vnfs_probes *probes, vnfs_unattributed_fn fn,
				      void *context)
{
	struct unattributed_walk walk = { fn, context };
	struct vnfs_unattributed_expiry expired;
	int64_t now = monotonic_ms();
	int status;

	status = for_each_entry(bpf_map__fd(probes->skeleton->maps.unattributed_stats),
				sizeof(struct vnfs_unattributed_key),
				sizeof(struct vnfs_unattributed_stats), call_unattributed, &walk);
	/* After the walk: the caller saw the rows once more as they were, and
	 * sees their calls in the [expired] rows from the next walk on. */
	if (status == 0 && expiry_due(now, probes->next_expiry_ms, probes->unattributed_entries,
				      VNFS_MAX_UNATTRIBUTED_NAMED_ENTRIES)) {
		probes->next_expiry_ms = now + VNFS_UNATTRIBUTED_EXPIRY_PERIOD_MS;
		if (vnfs_probes_expire_unattributed(probes, now, VNFS_UNATTRIBUTED_IDLE_MS,
						    &expired) != 0)
			vnfs_warning("looking for unattributed rows to expire failed: tried again in "
				     "%d s", VNFS_UNATTRIBUTED_EXPIRY_PERIOD_MS / 1000);
	}
	return status;
}

/* ---- unattributed row expiry ---- */

/* Every row of unattributed_stats, read whole. */
struct unattributed_row {
	struct vnfs_unattributed_key key;
	struct vnfs_unattributed_stats stats;
};

struct unattributed_rows {
	struct unattributed_row *rows;
	size_t count, capacity;
};

static int collect_unattributed(const void *key, const void *value, void *context)
{
	struct unattributed_rows *collected = context;

	if (collected->count == collected->capacity) {
		size_t capacity = collected->capacity ? 2 * collected->capacity : 64;
		struct unattributed_row *rows = realloc(collected->rows, capacity * sizeof(*rows));

		if (!rows)
			return -1;
		collected->rows = rows;
		collected->capacity = capacity;
	}
	memcpy(&collected->rows[collected->count].key, key, sizeof(struct vnfs_unattributed_key));
	memcpy(&collected->rows[collected->count].stats, value,
	       sizeof(struct vnfs_unattributed_stats));
	collected->count++;
	return 0;
}

static int by_unattributed_key(const void *left, const void *right)
{
	return memcmp(left, right, sizeof(struct vnfs_unattributed_key));
}

_Static_assert(offsetof(struct unattributed_row, key) == 0, "rows sort by their key");
_Static_assert(offsetof(struct watched_row, key) == 0, "watched rows sort by their key");

static bool has_comm(const struct vnfs_unattributed_key *key, const char *comm)
{
	return key->cgroup_id == 0 && strncmp(key->comm, comm, VNFS_COMM_LEN) == 0;
}

/* The cgroup2 hierarchy the probes' cgroup ids come from (wherever it is
 * mounted: /sys/fs/cgroup, .../unified on hybrid systems), or -1. */
static int cgroup_root(struct vnfs_probes *probes)
{
	char mount[1024];

	if (probes->cgroup_root_tried)
		return probes->cgroup_root_fd;
	probes->cgroup_root_tried = true;
	if (vnfs_cgroup2_mount(mount, sizeof(mount)) == 0)
		probes->cgroup_root_fd = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (probes->cgroup_root_fd < 0)
		vnfs_warning("no cgroup2 hierarchy found: unattributed rows expire only when idle");
	return probes->cgroup_root_fd;
}

static void add_unattributed_stats(struct vnfs_unattributed_stats *total,
				   const struct vnfs_unattributed_stats *part)
{
	for (int op = 0; op < VNFS_OP_COUNT; op++) {
		total->operations[op].count += part->operations[op].count;
		total->operations[op].errors += part->operations[op].errors;
		total->operations[op].bytes += part->operations[op].bytes;
		total->operations[op].time_ns += part->operations[op].time_ns;
	}
}

/* Adds 1 to a health counter the probes never write (no race with them). */
static void helper_health_add(struct vnfs_probes *probes, __u32 counter)
{
	int fd = bpf_map__fd(probes->skeleton->maps.health);
	__u64 value = 0;

	if (bpf_map_lookup_elem(fd, &counter, &value) != 0)
		return;
	value++;
	if (bpf_map_update_elem(fd, &counter, &value, BPF_ANY) != 0)
		vnfs_debug("cannot count an expired row: %s", strerror(errno));
}

/*
 * Moves row's counts into its uid's [expired] row and deletes it.  The row
 * is read again first: what a probe added since the walk goes along (a probe
 * adding between that read and the delete would be lost; the row is idle or
 * its cgroup gone, so none should).  Returns 0, or -1 with nothing changed.
 */
static int fold_into_expired(struct vnfs_probes *probes, const struct unattributed_row *row)
{
	int fd = bpf_map__fd(probes->skeleton->maps.unattributed_stats);
	struct vnfs_unattributed_key expired_key = { .uid = row->key.uid };
	struct vnfs_unattributed_stats current, before = { 0 }, after;

	memcpy(expired_key.comm, VNFS_EXPIRED_COMM, sizeof(VNFS_EXPIRED_COMM));
	if (bpf_map_lookup_elem(fd, &row->key, &current) != 0)
		return -1;
	if (bpf_map_lookup_elem(fd, &expired_key, &before) != 0 && errno != ENOENT)
		return -1;
	after = before;
	add_unattributed_stats(&after, &current);
	if (bpf_map_update_elem(fd, &expired_key, &after, BPF_ANY) != 0)
		return -1; /* full: the row stays as it is */
	if (bpf_map_delete_elem(fd, &row->key) != 0) {
		if (bpf_map_update_elem(fd, &expired_key, &before, BPF_ANY) != 0)
			vnfs_error("unattributed uid %u: a row is counted twice (its [expired] row "
				   "could not be restored: %s)", row->key.uid, strerror(errno));
		return -1;
	}
	/* One row of its own fewer: room for a new one (see vnfs.h). */
	if (row->key.cgroup_id != 0 && probes->unattributed_entries)
		__atomic_fetch_sub(probes->unattributed_entries, 1, __ATOMIC_RELAXED);
	helper_health_add(probes, VNFS_HEALTH_UNATTRIBUTED_EXPIRED);
	return 0;
}

/* What the last pass knew of key, or NULL. */
static const struct watched_row *find_watched(const struct vnfs_probes *probes,
					      const struct vnfs_unattributed_key *key)
{
	return bsearch(key, probes->watched, probes->watched_count, sizeof(*probes->watched),
		       by_unattributed_key);
}

/* Decides for one row: 1 when it is to expire (*gone says why), else 0
 * with its watch entry filled in. */
static int should_expire(struct vnfs_probes *probes, const struct unattributed_row *row,
			 int64_t now_ms, int64_t idle_ms, struct watched_row *watch, bool *gone)
{
	const struct watched_row *before = find_watched(probes, &row->key);

	watch->key = row->key;
	watch->calls = vnfs_unattributed_total(&row->stats, VNFS_UNATTRIBUTED_CALLS);
	watch->still_since_ms =
		before && before->calls == watch->calls ? before->still_since_ms : now_ms;
	*gone = false;
	if (has_comm(&row->key, VNFS_EXPIRED_COMM))
		return 0; /* where the others go */
	/* An environment job's rows wait for the helper to register it: those
	 * of a job it could not register go once idle. */
	if (!VNFS_IS_ENVIRONMENT_JOB(row->key.cgroup_id))
		*gone = vnfs_cgroup_gone(cgroup_root(probes), row->key.cgroup_id);
	return *gone || now_ms - watch->still_since_ms >= idle_ms;
}

int vnfs_probes_expire_unattributed(struct vnfs_probes *probes, int64_t now_ms, int64_t idle_ms,
				    struct vnfs_unattributed_expiry *result)
{
	struct unattributed_rows collected = { 0 };
	struct watched_row *watched;
	size_t kept = 0;
	bool gone;

	memset(result, 0, sizeof(*result));
	if (!probes || for_each_entry(bpf_map__fd(probes->skeleton->maps.unattributed_stats),
				      sizeof(struct vnfs_unattributed_key),
				      sizeof(struct vnfs_unattributed_stats), collect_unattributed,
				      &collected) != 0) {
		free(collected.rows);
		return -1;
	}
	watched = calloc(collected.count ? collected.count : 1, sizeof(*watched));
	if (!watched) {
		free(collected.rows);
		return -1;
	}
	for (size_t i = 0; i < collected.count; i++) {
		const struct unattributed_row *row = &collected.rows[i];

		if (!should_expire(probes, row, now_ms, idle_ms, &watched[kept], &gone)) {
			kept++;
		} else if (fold_into_expired(probes, row) == 0) {
			result->gone += gone;
			result->idle += !gone;
		} else {
			result->failed++;
			kept++;
		}
	}
	qsort(watched, kept, sizeof(*watched), by_unattributed_key);
	free(probes->watched);
	probes->watched = watched;
	probes->watched_count = kept;
	free(collected.rows);
	if (result->gone + result->idle > 0)
		vnfs_info("unattributed: %u rows folded into their uid's %s row (%u of removed "
			  "cgroups, %u idle)", result->gone + result->idle, VNFS_EXPIRED_COMM,
			  result->gone, result->idle);
	if (result->failed > 0)
		vnfs_warning("unattributed: %u rows to expire could not be folded (map full?): "
			     "kept", result->failed);
	return 0;
}

static bool entry_of_slot(const void *key, const void *value, void *slot)
{
	uint32_t key_slot;

	(void)value;
	memcpy(&key_slot, key, sizeof(key_slot)); /* the key starts with the slot */
	return key_slot == *(const uint32_t *)slot;
}

static int delete_slot_entries(int fd, size_t key_size, uint32_t slot)
{
	struct matching_entries collected = { .matches = entry_of_slot, .context = &slot,
					      .key_size = key_size };
	int status = collect_matching_entries(fd, &collected);

	for (size_t i = 0; status == 0 && i < collected.count; i++)
		if (bpf_map_delete_elem(fd, matching_key(&collected, i)) != 0 && errno != ENOENT)
			status = -1;
	free(collected.entries);
	return status;
}

_Static_assert(offsetof(struct vnfs_breakdown_key, slot) == 0, "slot first in the key");
_Static_assert(offsetof(struct vnfs_wire_key, slot) == 0, "slot first in the key");

int vnfs_probes_reset_slot(struct vnfs_probes *probes, uint32_t slot)
{
	static const struct vnfs_step_stats zero;
	const __u64 no_activity = 0;
	__u32 key = slot;

	if (!probes || slot >= VNFS_MAX_STEPS)
		return -1;
	if (bpf_map_update_elem(bpf_map__fd(probes->skeleton->maps.step_stats), &key, &zero,
				BPF_ANY) != 0 ||
	    bpf_map_update_elem(bpf_map__fd(probes->skeleton->maps.step_activity), &key,
				&no_activity, BPF_ANY) != 0)
		return -1;
	if (delete_slot_entries(bpf_map__fd(probes->skeleton->maps.breakdown_stats),
				sizeof(struct vnfs_breakdown_key), slot) != 0 ||
	    delete_slot_entries(bpf_map__fd(probes->skeleton->maps.wire_stats),
				sizeof(struct vnfs_wire_key), slot) != 0)
		return -1;
	/* After the rows: the slot's next step may make its own 64 of each. */
	if (bpf_map_update_elem(bpf_map__fd(probes->skeleton->maps.wire_entries), &key,
				&no_activity, BPF_ANY) != 0)
		return -1;
	return bpf_map_update_elem(bpf_map__fd(probes->skeleton->maps.breakdown_entries), &key,
				   &no_activity, BPF_ANY);
}

int vnfs_probes_read_health(struct vnfs_probes *probes, uint64_t counters[VNFS_HEALTH_COUNTERS])
{
	int fd;

	if (!probes)
		return -1;
	fd = bpf_map__fd(probes->skeleton->maps.health);
	for (__u32 index = 0; index < VNFS_HEALTH_COUNTERS; index++) {
		__u64 value = 0;

		if (bpf_map_lookup_elem(fd, &index, &value) != 0)
			return -1;
		counters[index] = value;
	}
	return 0;
}

/* ---- folding a late-identified cgroup's unattributed rows ---- */

/*
 * Returns once every BPF program that was running when it was called has
 * finished.  The kernel waits for an RCU grace period (synchronize_rcu)
 * before an update of a map-in-map returns, so that the caller knows no
 * program still uses the old inner map; the probes run under RCU, so that
 * wait covers them too.  The maps are the helper's own, made on first use
 * and never seen by a program.  Returns 0, or -1 with errno.
 */
static int wait_for_running_programs(struct vnfs_probes *probes)
{
	__u32 key = 0, inner;

	if (probes->barrier_fd < 0) {
		LIBBPF_OPTS(bpf_map_create_opts, options);
		int inner_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "vnfs_barrier_in", sizeof(__u32),
					      sizeof(__u32), 1, NULL);

		if (inner_fd < 0)
			return -1;
		options.inner_map_fd = inner_fd;
		probes->barrier_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "vnfs_barrier",
						    sizeof(__u32), sizeof(__u32), 1, &options);
		if (probes->barrier_fd < 0) {
			close(inner_fd);
			return -1;
		}
		probes->barrier_inner_fd = inner_fd;
	}
	inner = (__u32)probes->barrier_inner_fd;
	return bpf_map_update_elem(probes->barrier_fd, &key, &inner, BPF_ANY);
}

/* Keeps the rows of one cgroup id out of a walk of every row. */
struct cgroup_rows {
	uint64_t cgroup_id;
	struct unattributed_rows rows;
};

static int collect_cgroup_row(const void *key, const void *value, void *context)
{
	struct cgroup_rows *wanted = context;
	const struct vnfs_unattributed_key *row_key = key;

	if (row_key->cgroup_id != wanted->cgroup_id)
		return 0;
	return collect_unattributed(key, value, &wanted->rows);
}

/* Runs fold_unattributed (vnfs.bpf.c) on one row.  Returns 0 or -1. */
static int run_fold(struct vnfs_probes *probes, uint32_t slot, const struct unattributed_row *row)
{
	struct vnfs_unattributed_fold fold = { .slot = slot, .stats = row->stats };
	LIBBPF_OPTS(bpf_test_run_opts, run, .ctx_in = &fold, .ctx_size_in = sizeof(fold));

	memcpy(fold.comm, row->key.comm, sizeof(fold.comm));
	if (bpf_prog_test_run_opts(bpf_program__fd(probes->skeleton->progs.fold_unattributed),
				   &run) != 0)
		return -1;
	return run.retval == 0 ? 0 : -1;
}

int vnfs_probes_fold_unattributed(struct vnfs_probes *probes, uint64_t cgroup_id, uint32_t slot,
				  uint64_t *calls)
{
	struct cgroup_rows wanted = { .cgroup_id = cgroup_id };
	int fd, status = 0;

	*calls = 0;
	if (!probes || !probes->can_fold || slot >= VNFS_MAX_STEPS) {
		errno = EOPNOTSUPP;
		return -1;
	}
	/* After it, a probe that had found the cgroup in no step has counted
	 * its call: the rows below are whole, and nothing adds to them again. */
	if (wait_for_running_programs(probes) != 0)
		return -1;
	fd = bpf_map__fd(probes->skeleton->maps.unattributed_stats);
	if (for_each_entry(fd, sizeof(struct vnfs_unattributed_key),
			   sizeof(struct vnfs_unattributed_stats), collect_cgroup_row, &wanted) != 0) {
		free(wanted.rows.rows);
		return -1;
	}
	for (size_t i = 0; i < wanted.rows.count && status == 0; i++) {
		const struct unattributed_row *row = &wanted.rows.rows[i];

		/* Added first, deleted after: a helper killed in between leaves
		 * the calls in the step and in the node's unattributed rows too,
		 * never in neither. */
		if (run_fold(probes, slot, row) != 0) {
			status = -1;
			break;
		}
		*calls += vnfs_unattributed_total(&row->stats, VNFS_UNATTRIBUTED_CALLS);
		if (bpf_map_delete_elem(fd, &row->key) != 0) {
			vnfs_error("cgroup %llu: an unattributed row folded into slot %u could not "
				   "be deleted: %s (its calls show twice)",
				   (unsigned long long)cgroup_id, slot, strerror(errno));
			continue;
		}
		if (probes->unattributed_entries)
			__atomic_fetch_sub(probes->unattributed_entries, 1, __ATOMIC_RELAXED);
	}
	free(wanted.rows.rows);
	return status;
}

/* ---- environment jobs ---- */

/* Lists one variable (its name NUL-padded, as the probes look it up); a
 * name listed twice keeps its first role. */
static int list_variable(int fd, const char *name, const struct vnfs_environment_variable *role,
			 const char *key_name)
{
	char key[VNFS_ENVIRONMENT_NAME_MAX] = { 0 };

	snprintf(key, sizeof(key), "%s", name);
	if (bpf_map_update_elem(fd, key, role, BPF_NOEXIST) == 0)
		return 0;
	if (errno != EEXIST)
		return -1;
	vnfs_warning("[environment] %s: %s is listed already: its first role is kept", key_name,
		     name);
	return 0;
}

int vnfs_probes_list_environment_variables(struct vnfs_probes *probes,
					   const struct vnfs_config *config)
{
	int fd = bpf_map__fd(probes->skeleton->maps.environment_variables);
	char next[VNFS_ENVIRONMENT_NAME_MAX];
	int status = 0;

	/* What an earlier helper listed goes first (the map is pinned). */
	while (bpf_map_get_next_key(fd, NULL, next) == 0)
		if (bpf_map_delete_elem(fd, next) != 0)
			return -1;
	for (size_t i = 0; i < config->environment.job_variable_count && status == 0; i++) {
		struct vnfs_environment_job_variable variable;
		struct vnfs_environment_variable job = { .role = VNFS_ENVIRONMENT_JOB, .index = i };
		struct vnfs_environment_variable part = { .role = VNFS_ENVIRONMENT_PART, .index = i };
		char reason[160];

		if (vnfs_environment_job_variable_parse(config->environment.job_variables[i],
							&variable, reason, sizeof(reason)) != 0)
			return -1; /* the config checked it */
		status = list_variable(fd, variable.name, &job, "job_variables");
		if (status == 0 && variable.part[0] != '\0')
			status = list_variable(fd, variable.part, &part, "job_variables");
	}
	for (size_t i = 0; i < config->environment.tag_variable_count && status == 0; i++) {
		struct vnfs_environment_variable tag = { .role = VNFS_ENVIRONMENT_TAG, .index = i };

		status = list_variable(fd, config->environment.tag_variables[i], &tag,
				       "tag_variables");
	}
	return status;
}

struct environment_job_walk {
	vnfs_environment_job_fn fn;
	void *context;
};

static int call_environment_job(const void *key, const void *value, void *context)
{
	const struct environment_job_walk *walk = context;
	uint64_t number;

	memcpy(&number, key, sizeof(number));
	return walk->fn(number, value, walk->context);
}

int vnfs_probes_for_each_environment_job(struct vnfs_probes *probes, vnfs_environment_job_fn fn,
					 void *context)
{
	struct environment_job_walk walk = { fn, context };

	if (!probes)
		return -1;
	return for_each_entry(bpf_map__fd(probes->skeleton->maps.environment_jobs), sizeof(__u64),
			      sizeof(struct vnfs_environment_job), call_environment_job, &walk);
}

int vnfs_probes_forget_environment_job(struct vnfs_probes *probes, uint64_t number)
{
	int jobs = bpf_map__fd(probes->skeleton->maps.environment_jobs);
	int numbers = bpf_map__fd(probes->skeleton->maps.environment_job_numbers);
	struct vnfs_environment_job job;
	__u64 key = number;

	if (bpf_map_lookup_elem(jobs, &key, &job) != 0)
		return errno == ENOENT ? 0 : -1;
	/* First no exec may find the job any more; then, once every program
	 * that found it before has run (it has joined by then), is it still
	 * without tasks? */
	if (bpf_map_delete_elem(numbers, &job.key) != 0 && errno != ENOENT)
		return -1;
	if (wait_for_running_programs(probes) != 0 || bpf_map_lookup_elem(jobs, &key, &job) != 0)
		return -1;
	if (job.live_tasks > 0) {
		/* Joined meanwhile: it goes on, found again by its next execs. */
		if (bpf_map_update_elem(numbers, &job.key, &key, BPF_NOEXIST) != 0)
			vnfs_warning("environment job %llu came back, but another job of its "
				     "name was made meanwhile",
				     (unsigned long long)number);
		return 1;
	}
	return bpf_map_delete_elem(jobs, &key) == 0 || errno == ENOENT ? 0 : -1;
}

/* ---- cgroups made ---- */

int vnfs_probes_new_cgroups_fd(const struct vnfs_probes *probes)
{
	return probes && probes->new_cgroups ? ring_buffer__epoll_fd(probes->new_cgroups) : -1;
}

int vnfs_probes_for_each_new_cgroup(struct vnfs_probes *probes, vnfs_new_cgroup_fn fn,
				    void *context)
{
	int consumed;

	if (!probes || !probes->new_cgroups)
		return 0;
	probes->new_cgroup_fn = fn;
	probes->new_cgroup_context = context;
	consumed = ring_buffer__consume(probes->new_cgroups);
	probes->new_cgroup_fn = NULL;
	probes->new_cgroup_context = NULL;
	return consumed < 0 ? -1 : 0;
}

/* ---- the collector's counter source ---- */

/* The collector's view of the functions above (helper/kernel/counters.h): each
 * takes the probes as the source's context. */

static uint64_t source_step_activity(void *probes, uint32_t slot)
{
	return vnfs_probes_step_activity(probes, slot);
}

static int source_read_step_stats(void *probes, uint32_t slot, struct vnfs_step_stats *stats)
{
	return vnfs_probes_read_step_stats(probes, slot, stats);
}

static int source_for_each_breakdown(void *probes, vnfs_breakdown_fn fn, void *context)
{
	return vnfs_probes_for_each_breakdown(probes, fn, context);
}

static int source_for_each_unattributed(void *probes, vnfs_unattributed_fn fn, void *context)
{
	return vnfs_probes_for_each_unattributed(probes, fn, context);
}

static int source_for_each_wire(void *probes, vnfs_wire_fn fn, void *context)
{
	return vnfs_probes_for_each_wire(probes, fn, context);
}

static int source_forget_wire(void *probes, uint64_t owner_id)
{
	return vnfs_probes_forget_wire(probes, owner_id);
}

static int source_read_health(void *probes, uint64_t counters[VNFS_HEALTH_COUNTERS])
{
	return vnfs_probes_read_health(probes, counters);
}

static int source_for_each_missed_return(void *probes, vnfs_missed_return_fn fn, void *context)
{
	return vnfs_probes_for_each_missed_return(probes, fn, context);
}

static enum vnfs_attach_method source_attach_method(void *probes, enum vnfs_operation operation)
{
	return vnfs_probes_attach_method(probes, operation);
}

static int source_register_cgroup(void *probes, uint64_t cgroup_id, uint32_t slot)
{
	return vnfs_probes_register_cgroup(probes, cgroup_id, slot);
}

static int source_registered(void *probes, uint64_t cgroup_id, uint32_t *slot)
{
	return vnfs_probes_registered(probes, cgroup_id, slot);
}

static int source_unregister_cgroup(void *probes, uint64_t cgroup_id)
{
	return vnfs_probes_unregister_cgroup(probes, cgroup_id);
}

static int source_reset_slot(void *probes, uint32_t slot)
{
	return vnfs_probes_reset_slot(probes, slot);
}

static int source_fold_unattributed(void *probes, uint64_t cgroup_id, uint32_t slot,
				    uint64_t *calls)
{
	return vnfs_probes_fold_unattributed(probes, cgroup_id, slot, calls);
}

static int source_for_each_environment_job(void *probes, vnfs_environment_job_fn fn,
					   void *context)
{
	return vnfs_probes_for_each_environment_job(probes, fn, context);
}

static int source_forget_environment_job(void *probes, uint64_t number)
{
	return vnfs_probes_forget_environment_job(probes, number);
}

static int source_new_cgroups_fd(void *probes)
{
	return vnfs_probes_new_cgroups_fd(probes);
}

static int source_for_each_new_cgroup(void *probes, vnfs_new_cgroup_fn fn, void *context)
{
	return vnfs_probes_for_each_new_cgroup(probes, fn, context);
}

struct vnfs_counter_source vnfs_probes_counter_source(struct vnfs_probes *probes)
{
	return (struct vnfs_counter_source){
		.context = probes,
		.step_activity = source_step_activity,
		.read_step_stats = source_read_step_stats,
		.for_each_breakdown = source_for_each_breakdown,
		.for_each_wire = source_for_each_wire,
		.forget_wire = source_forget_wire,
		.for_each_unattributed = source_for_each_unattributed,
		.read_health = source_read_health,
		.for_each_missed_return = source_for_each_missed_return,
		.attach_method = source_attach_method,
		.register_cgroup = source_register_cgroup,
		.registered = source_registered,
		.unregister_cgroup = source_unregister_cgroup,
		.reset_slot = source_reset_slot,
		.fold_unattributed = source_fold_unattributed,
		.new_cgroups_fd = source_new_cgroups_fd,
		.for_each_new_cgroup = source_for_each_new_cgroup,
		.for_each_environment_job = source_for_each_environment_job,
		.forget_environment_job = source_forget_environment_job,
	};
}
