/*
 * registry.c — job steps, their slots, and their journal on disk.
 *
 * Slots are handed out lowest-free-first, so a node that runs few steps keeps
 * touching the same few pages of the step_stats map.
 *
 * Persistence is STATE_DIR/registry.journal, JSON lines: each line is the new
 * content of one slot, {"slot":3,"state":"running","job":42,...} (the same
 * object registry.json held per step), or {"slot":3,"state":"free"} when it
 * is released; a later line for a slot replaces an earlier one.  Each change
 * appends its lines with one write() before the call returns, so before the
 * socket thread replies: a step whose REGISTER was acknowledged is in the
 * kernel's page cache, and a helper killed with -9 right after finds it on
 * restart.  Appends are not fsynced: what they must survive is the helper's
 * death, not the machine's, and a power cut also empties the BPF maps whose
 * slots they describe.  The compaction is (see compact): a rename that
 * reaches the disk before the new file's data would lose every step.
 *
 * Why a journal: the file used to be rewritten whole (temp file + rename) on
 * every change, serialising every step with json-c each time: O(steps) per
 * change, on average 1.1 ms per registration over 1,000 on the build host
 * (98 % of it in json-c) and 24-35 ms in the emulated test guest, most of a
 * REGISTER's time there (tests/bench/bench_registry).  Coalescing the
 * rewrites (mark dirty, write on the collector's tick) would leave a window
 * where an acknowledged step is not on disk, which is exactly what a kill -9
 * restart must not lose; making the acknowledgement wait for the tick would
 * add up to an interval to every srun.  Appending one line costs one step's
 * serialisation and one write() whatever the number of steps: 3-4 us here,
 * 44 us in the guest.
 *
 * The journal is rewritten compact (one line per slot in use, a temporary
 * file of a unique name, fsync, rename, fsync of the directory, so it is
 * always either the old file or the new one) when it holds
 * VNFS_REGISTRY_JOURNAL_SLACK records more than twice the steps in use, at
 * every load, and whenever an append failed (disk full: the partial line is
 * cut off and the next change rewrites the whole file, which holds the state
 * as it is then).  A file whose last write was cut short ends in a partial
 * line: load drops that one record with a log line and keeps all before it.
 *
 * A registry.json left by an older helper (one JSON array) is read when there
 * is no journal yet, written out as a journal and then removed; if the helper
 * dies in between, the journal, already complete, wins at the next start.
 */
#include "helper/steps/registry.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "lib/escape.h"
#include "lib/log.h"
#include "lib/protocol.h" /* the workload's JSON form */

#define JOURNAL_NAME "registry.journal"
#define LEGACY_NAME "registry.json"

static const char *const state_names[] = {
	[VNFS_STEP_FREE] = "free",
	[VNFS_STEP_RUNNING] = "running",
	[VNFS_STEP_ENDED] = "ended",
	[VNFS_STEP_FINISHED] = "finished",
};

/* A growing text buffer for the lines of one write. */
struct text {
	char *data;
	size_t length;
	size_t capacity;
};

static int text_append(struct text *text, const char *data, size_t length)
{
	if (text->length + length > text->capacity) {
		size_t capacity = text->capacity ? text->capacity : 1024;
		char *bigger;

		while (capacity < text->length + length)
			capacity *= 2;
		bigger = realloc(text->data, capacity);
		if (bigger == NULL)
			return -1;
		text->data = bigger;
		text->capacity = capacity;
	}
	memcpy(text->data + text->length, data, length);
	text->length += length;
	return 0;
}

/* ---- kept steps -------------------------------------------------------- */

/*
 * A step as its slot keeps it: what the lookups compare in fixed fields,
 * and its names (job, part, cgroup path) and tags packed in one allocation
 * of exactly their bytes.  A struct vnfs_step has room for the longest of
 * each (1.9 KiB, mostly empty): a thousand steps kept so took 1.9 MiB, now
 * about 0.2 MiB (docs/PERFORMANCE.md, "The helper's memory").
 */
struct vnfs_kept_step {
	enum vnfs_step_state state;
	enum vnfs_workload_source source;
	uint32_t uid;
	uint16_t tag_count;
	uint16_t tag_bytes;
	uint64_t cgroup_id;
	int64_t start_time_ms;
	int64_t end_time_ms;
	char *names; /* "job\0part\0cgroup path\0", then tag_bytes of packed tags */
};

static const char *kept_job(const struct vnfs_kept_step *kept)
{
	return kept->names;
}

static const char *kept_part(const struct vnfs_kept_step *kept)
{
	return kept_job(kept) + strlen(kept_job(kept)) + 1;
}

static bool kept_of_job(const struct vnfs_kept_step *kept, const struct vnfs_workload *workload)
{
	return kept->state != VNFS_STEP_FREE &&
	       vnfs_workload_of_job(workload, kept->source, kept_job(kept));
}

static bool kept_is(const struct vnfs_kept_step *kept, const struct vnfs_workload *workload)
{
	return kept->state != VNFS_STEP_FREE &&
	       vnfs_workload_is(workload, kept->source, kept_job(kept), kept_part(kept));
}

/* step, in the bytes it takes, into *kept (whose names it does not free).
 * Returns 0, or -1 when out of memory (*kept unchanged). */
static int keep(struct vnfs_kept_step *kept, const struct vnfs_step *step)
{
	size_t job = strlen(step->workload.job) + 1, part = strlen(step->workload.part) + 1;
	size_t path = strlen(step->cgroup_path) + 1;
	char *names = malloc(job + part + path + step->tags.used);

	if (names == NULL)
		return -1;
	memcpy(names, step->workload.job, job);
	memcpy(names + job, step->workload.part, part);
	memcpy(names + job + part, step->cgroup_path, path);
	memcpy(names + job + part + path, step->tags.buffer, step->tags.used);
	*kept = (struct vnfs_kept_step){
		.state = step->state,
		.source = step->workload.source,
		.uid = step->uid,
		.tag_count = (uint16_t)step->tags.count,
		.tag_bytes = (uint16_t)step->tags.used,
		.cgroup_id = step->cgroup_id,
		.start_time_ms = step->start_time_ms,
		.end_time_ms = step->end_time_ms,
		.names = names,
	};
	return 0;
}
_Static_assert(VNFS_TAGS_BUFFER <= UINT16_MAX && VNFS_MAX_TAGS <= UINT16_MAX,
	       "a kept step counts its tags in 16 bits");

/* The step kept, whole again.  Every visit of the registry does this for
 * each step, and the discovery and the environment jobs visit it every
 * interval: the names are copied by the lengths they have (they came from
 * a struct vnfs_step, so they fit), not formatted, and the room past each
 * string's end and past the tags' used bytes is left as it was, not
 * cleared (1.9 KiB a step: 0.1 % of a core under emulation with 1,000
 * steps; every reader stops at the end). */
static void unpack(const struct vnfs_kept_step *kept, struct vnfs_step *step)
{
	const char *job = kept_job(kept), *part, *path;
	size_t job_size, part_size, path_size;

	if (kept->state == VNFS_STEP_FREE) {
		memset(step, 0, sizeof(*step));
		return;
	}
	step->state = kept->state;
	job_size = strlen(job) + 1;
	part = job + job_size;
	part_size = strlen(part) + 1;
	path = part + part_size;
	path_size = strlen(path) + 1;
	step->workload.source = kept->source;
	memcpy(step->workload.job, job, job_size);
	memcpy(step->workload.part, part, part_size);
	step->uid = kept->uid;
	step->cgroup_id = kept->cgroup_id;
	memcpy(step->cgroup_path, path, path_size);
	step->tags.count = kept->tag_count;
	step->tags.used = kept->tag_bytes;
	memcpy(step->tags.buffer, path + path_size, kept->tag_bytes);
	step->start_time_ms = kept->start_time_ms;
	step->end_time_ms = kept->end_time_ms;
}

/* Empties a slot. */
static void forget(struct vnfs_kept_step *kept)
{
	free(kept->names);
	memset(kept, 0, sizeof(*kept));
}

int vnfs_registry_init(struct vnfs_registry *registry, const char *state_dir, char *error,
		       size_t error_size)
{
	memset(registry, 0, sizeof(*registry));
	registry->journal_fd = -1;
	registry->max_steps_per_job = VNFS_REGISTRY_DEFAULT_MAX_STEPS_PER_JOB;
	registry->max_steps_per_user = VNFS_REGISTRY_DEFAULT_MAX_STEPS_PER_USER;
	registry->slots = calloc(VNFS_MAX_STEPS, sizeof(*registry->slots));
	if (registry->slots == NULL) {
		snprintf(error, error_size, "out of memory for the registry");
		return -1;
	}
	if (pthread_mutex_init(&registry->lock, NULL) != 0) {
		free(registry->slots);
		registry->slots = NULL;
		snprintf(error, error_size, "cannot initialise the registry lock");
		return -1;
	}
	if (state_dir == NULL)
		return 0;
	if (mkdir(state_dir, 0755) != 0 && errno != EEXIST) {
		snprintf(error, error_size, "cannot create state directory %s: %s", state_dir,
			 strerror(errno));
		return -1;
	}
	if ((size_t)snprintf(registry->journal_path, sizeof(registry->journal_path), "%s/%s",
			     state_dir, JOURNAL_NAME) >= sizeof(registry->journal_path) ||
	    (size_t)snprintf(registry->legacy_path, sizeof(registry->legacy_path), "%s/%s",
			     state_dir, LEGACY_NAME) >= sizeof(registry->legacy_path)) {
		registry->journal_path[0] = '\0';
		snprintf(error, error_size, "state directory path too long: %s", state_dir);
		return -1;
	}
	return 0;
}

void vnfs_registry_set_limits(struct vnfs_registry *registry, uint32_t max_steps_per_job,
			      uint32_t max_steps_per_user)
{
	pthread_mutex_lock(&registry->lock);
	if (max_steps_per_job > 0)
		registry->max_steps_per_job = max_steps_per_job;
	if (max_steps_per_user > 0)
		registry->max_steps_per_user = max_steps_per_user;
	pthread_mutex_unlock(&registry->lock);
}

void vnfs_registry_destroy(struct vnfs_registry *registry)
{
	if (registry->journal_fd >= 0)
		close(registry->journal_fd);
	registry->journal_fd = -1;
	for (uint32_t slot = 0; registry->slots != NULL && slot < VNFS_MAX_STEPS; slot++)
		free(registry->slots[slot].names);
	free(registry->slots);
	registry->slots = NULL;
	pthread_mutex_destroy(&registry->lock);
}

/* ---- records ----------------------------------------------------------- */

static struct json_object *step_to_json(const struct vnfs_step *step, uint32_t slot)
{
	char cgroup_text[sizeof(step->cgroup_path) * VNFS_ESCAPE_GROWTH];
	struct json_object *object = json_object_new_object();
	struct json_object *tags;
	const char *name, *value;

	if (object == NULL)
		return NULL;
	json_object_object_add(object, "slot", json_object_new_int64(slot));
	json_object_object_add(object, "state", json_object_new_string(state_names[step->state]));
	if (step->state == VNFS_STEP_FREE)
		return object;
	/* Slurm's steps as numbers, as every helper before wrote them. */
	if (!vnfs_protocol_add_workload(object, &step->workload)) {
		json_object_put(object);
		return NULL;
	}
	json_object_object_add(object, "uid", json_object_new_int64(step->uid));
	json_object_object_add(object, "cgroup_id", json_object_new_uint64(step->cgroup_id));
	json_object_object_add(object, "cgroup_path", json_object_new_string(vnfs_json_text(
		step->cgroup_path, cgroup_text, sizeof(cgroup_text))));
	json_object_object_add(object, "start_ms", json_object_new_int64(step->start_time_ms));
	json_object_object_add(object, "end_ms", json_object_new_int64(step->end_time_ms));
	tags = json_object_new_object();
	for (unsigned i = 0; vnfs_tags_get(&step->tags, i, &name, &value); i++)
		json_object_object_add(tags, name, json_object_new_string(value));
	json_object_object_add(object, "tags", tags);
	return object;
}

/* Appends slot's record, one line, to text. */
static int append_record(struct text *text, const struct vnfs_registry *registry, uint32_t slot)
{
	struct json_object *object;
	struct vnfs_step step;
	const char *line;
	int status = -1;

	unpack(&registry->slots[slot], &step);
	object = step_to_json(&step, slot);
	if (object == NULL)
		return -1;
	line = json_object_to_json_string_ext(object, JSON_C_TO_STRING_PLAIN);
	if (line != NULL && text_append(text, line, strlen(line)) == 0 &&
	    text_append(text, "\n", 1) == 0)
		status = 0;
	json_object_put(object);
	return status;
}

static int json_uint(struct json_object *object, const char *key, uint64_t max, uint64_t *out)
{
	struct json_object *field;

	if (!json_object_object_get_ex(object, key, &field) || !json_object_is_type(field, json_type_int))
		return -1;
	*out = json_object_get_uint64(field);
	if (json_object_get_int64(field) < 0 || *out > max)
		return -1;
	return 0;
}

static int state_from_json(struct json_object *object, enum vnfs_step_state *state)
{
	struct json_object *field;
	const char *name;

	if (!json_object_object_get_ex(object, "state", &field) ||
	    !json_object_is_type(field, json_type_string))
		return -1;
	name = json_object_get_string(field);
	for (int s = VNFS_STEP_FREE; s <= VNFS_STEP_FINISHED; s++) {
		if (strcmp(name, state_names[s]) == 0) {
			*state = (enum vnfs_step_state)s;
			return 0;
		}
	}
	return -1;
}

/* Decodes one record; a "free" record leaves step zeroed (state FREE). */
static int step_from_json(struct json_object *object, struct vnfs_step *step, uint32_t *slot,
			  char *error, size_t error_size)
{
	struct json_object *field;
	uint64_t value;

	memset(step, 0, sizeof(*step));
	vnfs_tags_init(&step->tags);
	if (!json_object_is_type(object, json_type_object))
		goto bad;
	if (json_uint(object, "slot", VNFS_MAX_STEPS - 1, &value) != 0)
		goto bad;
	*slot = (uint32_t)value;
	if (state_from_json(object, &step->state) != 0)
		goto bad;
	if (step->state == VNFS_STEP_FREE)
		return 0;
	if (vnfs_protocol_get_workload(object, &step->workload, error, error_size) != 0 ||
	    step->workload.part[0] == '\0')
		goto bad; /* every step registered has a part */
	if (json_uint(object, "uid", UINT32_MAX, &value) != 0)
		goto bad;
	step->uid = (uint32_t)value;
	if (json_uint(object, "cgroup_id", UINT64_MAX, &step->cgroup_id) != 0)
		goto bad;
	if (json_uint(object, "start_ms", INT64_MAX, &value) != 0)
		goto bad;
	step->start_time_ms = (int64_t)value;
	if (json_uint(object, "end_ms", INT64_MAX, &value) != 0)
		goto bad;
	step->end_time_ms = (int64_t)value;
	if (json_object_object_get_ex(object, "cgroup_path", &field)) {
		/* The helper writes only UTF-8 paths (lib/protocol.c refuses others). */
		if (!json_object_is_type(field, json_type_string) ||
		    !vnfs_utf8_valid(json_object_get_string(field),
				     (size_t)json_object_get_string_len(field)))
			goto bad;
		snprintf(step->cgroup_path, sizeof(step->cgroup_path), "%s", json_object_get_string(field));
	}
	if (json_object_object_get_ex(object, "tags", &field) && json_object_is_type(field, json_type_object)) {
		json_object_object_foreach(field, name, tag_value) {
			/* Only strings were written: a null or a number is damage. */
			if (!json_object_is_type(tag_value, json_type_string))
				goto bad;
			if (vnfs_tags_set(&step->tags, name, json_object_get_string(tag_value), error,
					  error_size) != 0)
				return -1;
		}
	}
	return 0;
bad:
	snprintf(error, error_size, "malformed step entry %.200s",
		 json_object_to_json_string_ext(object, JSON_C_TO_STRING_PLAIN));
	return -1;
}

/* Puts a decoded record in its slot; called with the lock held. */
static void apply_record(struct vnfs_registry *registry, const struct vnfs_step *step,
			 uint32_t slot)
{
	bool was_used = registry->slots[slot].state != VNFS_STEP_FREE;
	bool is_used = step->state != VNFS_STEP_FREE;
	struct vnfs_kept_step kept = { .state = VNFS_STEP_FREE };

	if (is_used && keep(&kept, step) != 0) {
		vnfs_error("registry: out of memory: slot %u left free", slot);
		is_used = false;
	}
	forget(&registry->slots[slot]);
	registry->slots[slot] = kept;
	registry->generation++;
	if (is_used && !was_used)
		registry->used++;
	else if (!is_used && was_used)
		registry->used--;
}

/* ---- writing ----------------------------------------------------------- */

static int write_all(int fd, const char *data, size_t length)
{
	while (length > 0) {
		ssize_t written = write(fd, data, length);

		if (written < 0 && errno == EINTR)
			continue;
		if (written <= 0) {
			if (written == 0)
				errno = EIO;
			return -1;
		}
		data += written;
		length -= (size_t)written;
	}
	return 0;
}

/* The directory of the journal (for its fsync and its stale temporary
 * files) into directory; -1 when the path does not fit. */
static int journal_directory(const struct vnfs_registry *registry, char *directory, size_t size)
{
	char *slash;

	if ((size_t)snprintf(directory, size, "%s", registry->journal_path) >= size)
		return -1;
	slash = strrchr(directory, '/');
	if (slash == NULL)
		snprintf(directory, size, ".");
	else if (slash == directory)
		slash[1] = '\0';
	else
		*slash = '\0';
	return 0;
}

/* Flushes the journal's directory entry after a rename: until then a power
 * cut may bring back the old name, or none.  Logged, not fatal: the rename is
 * done and the new file is the journal either way. */
static void sync_journal_directory(const struct vnfs_registry *registry)
{
	char directory[sizeof(registry->journal_path)];
	int fd;

	if (journal_directory(registry, directory, sizeof(directory)) != 0) {
		vnfs_error("cannot flush the directory of %s: path too long", registry->journal_path);
		return;
	}
	fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		vnfs_error("cannot open %s to flush it: %s", directory, strerror(errno));
		return;
	}
	if (fsync(fd) != 0)
		vnfs_error("cannot flush %s: %s: the compacted %s may not survive a power cut",
			   directory, strerror(errno), JOURNAL_NAME);
	if (close(fd) != 0)
		vnfs_error("cannot close %s: %s", directory, strerror(errno));
}

/* Removes temporary (logged); for the paths where it must not stay. */
static void remove_temporary(const char *temporary)
{
	if (unlink(temporary) != 0 && errno != ENOENT)
		vnfs_error("cannot remove %s: %s", temporary, strerror(errno));
}

/*
 * Writes text to a new file next to the journal, under a name of its own
 * (mkostemp: two helpers started by mistake, or a crashed compaction's
 * leftover, never share or truncate it), and flushes it to disk.  Returns
 * its descriptor, or -1 (logged) with the file removed.
 */
static int write_temporary(const struct vnfs_registry *registry, const struct text *text,
			   char *temporary, size_t size)
{
	int fd, saved;

	if ((size_t)snprintf(temporary, size, "%s.XXXXXX", registry->journal_path) >= size) {
		vnfs_error("cannot rewrite %s: path too long", registry->journal_path);
		return -1;
	}
	fd = mkostemp(temporary, O_APPEND | O_CLOEXEC);
	if (fd < 0) {
		vnfs_error("cannot create a file next to %s: %s", registry->journal_path,
			   strerror(errno));
		return -1;
	}
	if (write_all(fd, text->data, text->length) != 0 || fsync(fd) != 0) {
		saved = errno;
		vnfs_error("cannot write %s: %s", temporary, strerror(saved));
		if (close(fd) != 0)
			vnfs_error("cannot close %s: %s", temporary, strerror(errno));
		remove_temporary(temporary);
		return -1;
	}
	return fd;
}

/*
 * Rewrites the journal with one line per slot in use and keeps the new file
 * open for appending; called with the lock held.  The new file is complete
 * on disk (fsync) before it replaces the journal (rename), and the rename is
 * flushed too (fsync of the directory): without that, a power cut after the
 * rename may leave a journal of zero bytes on ext4 and XFS, all of the
 * registry lost instead of its last few changes.  On failure the journal on
 * disk is the previous one, untouched, and the open one stays as it was.
 */
static int compact(struct vnfs_registry *registry)
{
	char temporary[sizeof(registry->journal_path) + 8];
	struct text text = { 0 };
	uint32_t records = 0;
	int fd;

	for (uint32_t slot = 0; slot < VNFS_MAX_STEPS; slot++) {
		if (registry->slots[slot].state == VNFS_STEP_FREE)
			continue;
		if (append_record(&text, registry, slot) != 0) {
			vnfs_error("cannot rewrite %s: out of memory", registry->journal_path);
			free(text.data);
			return -1;
		}
		records++;
	}
	fd = write_temporary(registry, &text, temporary, sizeof(temporary));
	if (fd < 0) {
		free(text.data);
		return -1;
	}
	if (rename(temporary, registry->journal_path) != 0) {
		vnfs_error("cannot save %s: %s", registry->journal_path, strerror(errno));
		if (close(fd) != 0)
			vnfs_error("cannot close %s: %s", temporary, strerror(errno));
		remove_temporary(temporary);
		free(text.data);
		return -1;
	}
	sync_journal_directory(registry);
	free(text.data);
	if (registry->journal_fd >= 0 && close(registry->journal_fd) != 0)
		vnfs_error("cannot close the previous %s: %s", registry->journal_path, strerror(errno));
	registry->journal_fd = fd;
	registry->journal_records = records;
	registry->journal_bytes = text.length;
	return 0;
}

/* Removes what a compaction killed between mkostemp and rename left next to
 * the journal ("registry.journal.XXXXXX"; ".tmp" of older helpers): nothing
 * reads them, and they would pile up one per crash.  Called at load, when
 * no compaction of this helper can be under way. */
static void remove_stale_temporaries(const struct vnfs_registry *registry)
{
	static const char prefix[] = JOURNAL_NAME ".";
	char directory[sizeof(registry->journal_path)];
	struct dirent *entry;
	DIR *listing;

	if (journal_directory(registry, directory, sizeof(directory)) != 0)
		return;
	listing = opendir(directory);
	if (listing == NULL) {
		vnfs_error("cannot list %s: %s", directory, strerror(errno));
		return;
	}
	while ((entry = readdir(listing)) != NULL) {
		if (strncmp(entry->d_name, prefix, sizeof(prefix) - 1) != 0)
			continue;
		if (unlinkat(dirfd(listing), entry->d_name, 0) == 0)
			vnfs_info("registry: removed %s/%s, left by an interrupted rewrite",
				  directory, entry->d_name);
		else
			vnfs_error("cannot remove %s/%s: %s", directory, entry->d_name,
				   strerror(errno));
	}
	if (closedir(listing) != 0)
		vnfs_error("cannot close %s: %s", directory, strerror(errno));
}

/*
 * Records the new content of slots[0..count) on disk; called with the lock
 * held, after the change.  A failure is logged, not fatal: counting goes on,
 * only a restart would lose what was not written.
 */
static void persist(struct vnfs_registry *registry, const uint32_t *slots, uint32_t count)
{
	struct text text = { 0 };

	registry->generation++; /* every change comes through here */
	if (registry->journal_path[0] == '\0')
		return;
	if (registry->journal_fd < 0) {
		/* Never loaded, or the last append failed: write the whole state. */
		compact(registry);
		return;
	}
	for (uint32_t i = 0; i < count; i++) {
		if (append_record(&text, registry, slots[i]) != 0) {
			vnfs_error("cannot append to %s: out of memory", registry->journal_path);
			goto rewrite_next_time;
		}
	}
	if (write_all(registry->journal_fd, text.data, text.length) != 0) {
		vnfs_error("cannot append to %s: %s", registry->journal_path, strerror(errno));
		/* No partial line may stay for the next record to follow. */
		if (ftruncate(registry->journal_fd, (off_t)registry->journal_bytes) != 0)
			vnfs_error("cannot cut %s back to its last complete record: %s",
				   registry->journal_path, strerror(errno));
		goto rewrite_next_time;
	}
	free(text.data);
	registry->journal_records += count;
	registry->journal_bytes += text.length;
	if (registry->journal_records > 2 * registry->used + VNFS_REGISTRY_JOURNAL_SLACK)
		compact(registry);
	return;
rewrite_next_time:
	free(text.data);
	close(registry->journal_fd);
	registry->journal_fd = -1;
}

/* ---- reading ----------------------------------------------------------- */

/* Applies one journal line; line_number counts from 1. */
static void load_line(struct vnfs_registry *registry, struct json_tokener *tokener,
		      const char *line, size_t length, unsigned line_number, bool complete)
{
	struct json_object *object;
	struct vnfs_step step;
	uint32_t slot;
	char message[512];

	json_tokener_reset(tokener);
	object = json_tokener_parse_ex(tokener, line, (int)length);
	if (object == NULL || json_tokener_get_parse_end(tokener) != length) {
		if (!complete)
			vnfs_error("%s: line %u, the last, is cut short (a write interrupted by a "
				   "crash?): that one change is lost, the %u records before it are kept",
				   registry->journal_path, line_number, line_number - 1);
		else
			vnfs_error("%s: line %u is not a JSON record: dropped, the other records are "
				   "kept", registry->journal_path, line_number);
	} else if (step_from_json(object, &step, &slot, message, sizeof(message)) != 0) {
		vnfs_error("%s: line %u dropped: %s", registry->journal_path, line_number, message);
	} else {
		apply_record(registry, &step, slot);
	}
	json_object_put(object);
}

/* Returns 1 if there is a journal (read), 0 if not, -1 if it cannot be read. */
static int load_journal(struct vnfs_registry *registry, char *error, size_t error_size)
{
	FILE *file = fopen(registry->journal_path, "re");
	struct json_tokener *tokener;
	char *line = NULL;
	size_t capacity = 0;
	ssize_t length;
	unsigned line_number = 0;

	if (file == NULL) {
		if (errno == ENOENT)
			return 0;
		snprintf(error, error_size, "cannot read %s: %s: starting empty",
			 registry->journal_path, strerror(errno));
		return -1;
	}
	tokener = json_tokener_new();
	if (tokener == NULL) {
		fclose(file);
		snprintf(error, error_size, "cannot read %s: out of memory: starting empty",
			 registry->journal_path);
		return -1;
	}
	json_tokener_set_flags(tokener, JSON_TOKENER_STRICT);
	while ((length = getline(&line, &capacity, file)) > 0) {
		bool complete = line[length - 1] == '\n';

		line_number++;
		if (complete)
			length--;
		if (length == 0)
			continue;
		load_line(registry, tokener, line, (size_t)length, line_number, complete);
	}
	free(line);
	json_tokener_free(tokener);
	if (ferror(file)) {
		vnfs_error("%s: read error after line %u: the rest is lost", registry->journal_path,
			   line_number);
	}
	fclose(file);
	return 1;
}

/* registry.json of older helpers: a JSON array of step records. */
static int load_legacy(struct vnfs_registry *registry, char *error, size_t error_size)
{
	struct json_object *array;
	size_t count;
	char message[512];

	if (access(registry->legacy_path, F_OK) != 0)
		return 0;
	array = json_object_from_file(registry->legacy_path);
	if (array == NULL || !json_object_is_type(array, json_type_array)) {
		snprintf(error, error_size, "%s is not a JSON array of steps: starting empty",
			 registry->legacy_path);
		json_object_put(array);
		return -1;
	}
	count = json_object_array_length(array);
	for (size_t i = 0; i < count; i++) {
		struct vnfs_step step;
		uint32_t slot;

		if (step_from_json(json_object_array_get_idx(array, i), &step, &slot, message,
				   sizeof(message)) != 0) {
			vnfs_error("%s: entry %zu dropped: %s", registry->legacy_path, i, message);
		} else if (step.state == VNFS_STEP_FREE || registry->slots[slot].state != VNFS_STEP_FREE) {
			vnfs_error("%s: entry %zu dropped: slot %u is %s", registry->legacy_path, i,
				   slot, step.state == VNFS_STEP_FREE ? "free" : "taken twice");
		} else {
			apply_record(registry, &step, slot);
		}
	}
	json_object_put(array);
	return 1;
}

int vnfs_registry_load(struct vnfs_registry *registry, char *error, size_t error_size)
{
	int journal, legacy = 0, status = 0;

	if (registry->journal_path[0] == '\0')
		return 0;
	pthread_mutex_lock(&registry->lock);
	remove_stale_temporaries(registry);
	journal = load_journal(registry, error, error_size);
	if (journal == 0)
		legacy = load_legacy(registry, error, error_size);
	if (journal < 0 || legacy < 0) {
		status = -1;
		goto out;
	}
	if (compact(registry) != 0)
		goto out; /* logged; the next change tries again */
	if (legacy > 0)
		vnfs_info("registry: %u steps migrated from %s to %s", registry->used,
			  registry->legacy_path, registry->journal_path);
	/* Migrated now, or earlier by a helper that died before removing it:
	 * either way the journal holds all of it. */
	if (unlink(registry->legacy_path) == 0) {
		if (legacy == 0)
			vnfs_info("registry: removed %s, left over from a migration to %s",
				  registry->legacy_path, registry->journal_path);
	} else if (errno != ENOENT) {
		vnfs_error("cannot remove %s (%s): it is ignored while %s exists",
			   registry->legacy_path, strerror(errno), registry->journal_path);
	}
out:
	pthread_mutex_unlock(&registry->lock);
	return status;
}

/* ---- changes ----------------------------------------------------------- */

static int find_step(const struct vnfs_registry *registry, const struct vnfs_workload *workload)
{
	for (uint32_t slot = 0; slot < VNFS_MAX_STEPS; slot++)
		if (kept_is(&registry->slots[slot], workload))
			return (int)slot;
	return -1;
}

/* Running or ended: a step that holds its slot for its job and owner
 * (a finished one is released after its final read, moments later). */
static bool holds_slot(const struct vnfs_kept_step *kept)
{
	return kept->state == VNFS_STEP_RUNNING || kept->state == VNFS_STEP_ENDED;
}

/* 0 when step's job and uid are below their limits, else -1 with the
 * message the REGISTER gets; called with the lock held. */
static int check_limits(const struct vnfs_registry *registry, const struct vnfs_step *step,
			char *error, size_t error_size)
{
	uint32_t of_job = 0, of_user = 0;
	char name[VNFS_WORKLOAD_DESCRIPTION_MAX];
	struct vnfs_workload job = step->workload;

	for (uint32_t slot = 0; slot < VNFS_MAX_STEPS; slot++) {
		const struct vnfs_kept_step *held = &registry->slots[slot];

		if (!holds_slot(held))
			continue;
		of_job += kept_of_job(held, &step->workload);
		of_user += held->uid == step->uid;
	}
	if (of_job >= registry->max_steps_per_job) {
		job.part[0] = '\0';
		snprintf(error, error_size,
			 "%s already holds %u steps on this node (max_steps_per_job)",
			 vnfs_workload_describe(&job, name, sizeof(name)), of_job);
		return -1;
	}
	if (of_user >= registry->max_steps_per_user) {
		snprintf(error, error_size,
			 "user %u already holds %u steps on this node (max_steps_per_user)",
			 step->uid, of_user);
		return -1;
	}
	return 0;
}

/* Whether known, ended, is step's container restarted: the same container
 * of the same owner, in a new cgroup.  A Slurm step or a job named by its
 * environment never comes back once ended. */
static bool container_restarted(const struct vnfs_kept_step *known, const struct vnfs_step *step)
{
	return vnfs_workload_part_may_restart(&step->workload) &&
	       known->state == VNFS_STEP_ENDED && known->uid == step->uid &&
	       known->cgroup_id != step->cgroup_id;
}

/* Makes the ended step in slot run again in step's cgroup.  Returns 0, or
 * -1 when out of memory (the step stays as it was). */
static int reopen(struct vnfs_registry *registry, uint32_t slot, const struct vnfs_step *step)
{
	struct vnfs_kept_step reopened;
	struct vnfs_step known;

	unpack(&registry->slots[slot], &known);
	known.state = VNFS_STEP_RUNNING;
	known.cgroup_id = step->cgroup_id;
	snprintf(known.cgroup_path, sizeof(known.cgroup_path), "%s", step->cgroup_path);
	known.end_time_ms = 0;
	if (keep(&reopened, &known) != 0)
		return -1;
	forget(&registry->slots[slot]);
	registry->slots[slot] = reopened;
	persist(registry, &slot, 1);
	return 0;
}

int vnfs_registry_add(struct vnfs_registry *registry, const struct vnfs_step *step, uint32_t *slot,
		      char *error, size_t error_size)
{
	int existing, result = -1;
	char name[VNFS_WORKLOAD_DESCRIPTION_MAX];

	pthread_mutex_lock(&registry->lock);
	existing = find_step(registry, &step->workload);
	if (existing >= 0) {
		const struct vnfs_kept_step *known = &registry->slots[existing];

		if (known->cgroup_id == step->cgroup_id && known->state == VNFS_STEP_RUNNING) {
			*slot = (uint32_t)existing;
			result = 0;
		} else if (container_restarted(known, step)) {
			*slot = (uint32_t)existing;
			if (reopen(registry, *slot, step) == 0)
				result = 1;
			else
				snprintf(error, error_size, "out of memory");
		} else {
			snprintf(error, error_size,
				 "%s is already registered (cgroup %" PRIu64 ", %s)",
				 vnfs_workload_describe(&step->workload, name, sizeof(name)),
				 known->cgroup_id, state_names[known->state]);
		}
		goto out;
	}
	if (check_limits(registry, step, error, error_size) != 0)
		goto out;
	for (uint32_t free_slot = 0; free_slot < VNFS_MAX_STEPS; free_slot++) {
		if (registry->slots[free_slot].state != VNFS_STEP_FREE)
			continue;
		if (keep(&registry->slots[free_slot], step) != 0) {
			snprintf(error, error_size, "out of memory");
			goto out;
		}
		registry->slots[free_slot].state = VNFS_STEP_RUNNING;
		registry->used++;
		*slot = free_slot;
		persist(registry, slot, 1);
		result = 0;
		goto out;
	}
	snprintf(error, error_size, "no free slot: %u steps are registered on this node",
		 VNFS_MAX_STEPS);
out:
	pthread_mutex_unlock(&registry->lock);
	return result;
}

int vnfs_registry_end(struct vnfs_registry *registry, const struct vnfs_workload *step_workload,
		      int64_t now_ms)
{
	int slot;

	pthread_mutex_lock(&registry->lock);
	slot = find_step(registry, step_workload);
	if (slot >= 0 && registry->slots[slot].state == VNFS_STEP_RUNNING) {
		uint32_t changed = (uint32_t)slot;

		registry->slots[slot].state = VNFS_STEP_ENDED;
		registry->slots[slot].end_time_ms = now_ms;
		persist(registry, &changed, 1);
	}
	pthread_mutex_unlock(&registry->lock);
	return slot;
}

int vnfs_registry_finish_job(struct vnfs_registry *registry, const struct vnfs_workload *job,
			     int64_t now_ms)
{
	uint32_t changed[VNFS_MAX_STEPS];
	int steps = 0;

	pthread_mutex_lock(&registry->lock);
	for (uint32_t slot = 0; slot < VNFS_MAX_STEPS; slot++) {
		struct vnfs_kept_step *step = &registry->slots[slot];

		if (!kept_of_job(step, job))
			continue;
		if (step->end_time_ms == 0)
			step->end_time_ms = now_ms;
		step->state = VNFS_STEP_FINISHED;
		changed[steps++] = slot;
	}
	if (steps > 0)
		persist(registry, changed, (uint32_t)steps);
	pthread_mutex_unlock(&registry->lock);
	return steps;
}

void vnfs_registry_release(struct vnfs_registry *registry, uint32_t slot)
{
	if (slot >= VNFS_MAX_STEPS)
		return;
	pthread_mutex_lock(&registry->lock);
	if (registry->slots[slot].state != VNFS_STEP_FREE) {
		forget(&registry->slots[slot]);
		registry->used--;
		persist(registry, &slot, 1);
	}
	pthread_mutex_unlock(&registry->lock);
}

int vnfs_registry_release_ended(struct vnfs_registry *registry, uint32_t slot,
				const struct vnfs_workload *step_workload)
{
	const struct vnfs_kept_step *step;
	int result = -1;

	if (slot >= VNFS_MAX_STEPS)
		return -1;
	pthread_mutex_lock(&registry->lock);
	step = &registry->slots[slot];
	if (step->state == VNFS_STEP_ENDED && kept_is(step, step_workload)) {
		forget(&registry->slots[slot]);
		registry->used--;
		persist(registry, &slot, 1);
		result = 0;
	}
	pthread_mutex_unlock(&registry->lock);
	return result;
}

uint32_t vnfs_registry_used(struct vnfs_registry *registry)
{
	uint32_t used;

	pthread_mutex_lock(&registry->lock);
	used = registry->used;
	pthread_mutex_unlock(&registry->lock);
	return used;
}

uint64_t vnfs_registry_generation(struct vnfs_registry *registry)
{
	uint64_t generation;

	pthread_mutex_lock(&registry->lock);
	generation = registry->generation;
	pthread_mutex_unlock(&registry->lock);
	return generation;
}

uint32_t vnfs_registry_visit(struct vnfs_registry *registry, vnfs_step_visit_fn visit,
			     void *context, uint64_t *generation)
{
	uint32_t count = 0;

	pthread_mutex_lock(&registry->lock);
	if (generation)
		*generation = registry->generation;
	for (uint32_t slot = 0; slot < VNFS_MAX_STEPS; slot++) {
		struct vnfs_step step;

		if (registry->slots[slot].state == VNFS_STEP_FREE)
			continue;
		unpack(&registry->slots[slot], &step);
		visit(&step, slot, context);
		count++;
	}
	pthread_mutex_unlock(&registry->lock);
	return count;
}

void vnfs_registry_get(struct vnfs_registry *registry, uint32_t slot, struct vnfs_step *step)
{
	memset(step, 0, sizeof(*step));
	if (slot >= VNFS_MAX_STEPS)
		return;
	pthread_mutex_lock(&registry->lock);
	unpack(&registry->slots[slot], step);
	pthread_mutex_unlock(&registry->lock);
}
