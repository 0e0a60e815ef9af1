/*
 * registry.c — job steps, their slots, and registry.json.
 *
 * Slots are handed out lowest-free-first, so a node that runs few steps keeps
 * touching the same few pages of the step_stats map.  Persistence is a JSON
 * array of steps rewritten whole on every change: registrations are rare
 * (per step, not per I/O) and a thousand steps is about 300 KiB.
 */
#include "helper/registry.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "lib/log.h"

static const char *const state_names[] = {
	[VNFS_STEP_FREE] = "free",
	[VNFS_STEP_RUNNING] = "running",
	[VNFS_STEP_ENDED] = "ended",
	[VNFS_STEP_FINISHED] = "finished",
};

int vnfs_registry_init(struct vnfs_registry *registry, const char *state_dir, char *error,
		       size_t error_size)
{
	memset(registry, 0, sizeof(*registry));
	if (pthread_mutex_init(&registry->lock, NULL) != 0) {
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
	if ((size_t)snprintf(registry->state_path, sizeof(registry->state_path), "%s/registry.json",
			     state_dir) >= sizeof(registry->state_path)) {
		snprintf(error, error_size, "state directory path too long: %s", state_dir);
		return -1;
	}
	return 0;
}

void vnfs_registry_destroy(struct vnfs_registry *registry)
{
	pthread_mutex_destroy(&registry->lock);
}

static struct json_object *step_to_json(const struct vnfs_step *step, uint32_t slot)
{
	struct json_object *object = json_object_new_object();
	struct json_object *tags = json_object_new_object();
	const char *name, *value;

	json_object_object_add(object, "slot", json_object_new_int64(slot));
	json_object_object_add(object, "state", json_object_new_string(state_names[step->state]));
	json_object_object_add(object, "job", json_object_new_int64(step->job_id));
	json_object_object_add(object, "step", json_object_new_int64(step->step_id));
	json_object_object_add(object, "uid", json_object_new_int64(step->uid));
	json_object_object_add(object, "cgroup_id", json_object_new_uint64(step->cgroup_id));
	json_object_object_add(object, "cgroup_path", json_object_new_string(step->cgroup_path));
	json_object_object_add(object, "start_ms", json_object_new_int64(step->start_time_ms));
	json_object_object_add(object, "end_ms", json_object_new_int64(step->end_time_ms));
	for (unsigned i = 0; vnfs_tags_get(&step->tags, i, &name, &value); i++)
		json_object_object_add(tags, name, json_object_new_string(value));
	json_object_object_add(object, "tags", tags);
	return object;
}

/* Writes registry.json; called with the lock held.  A failure is logged, not
 * fatal: counting goes on, only a restart would lose the registrations. */
static void persist(struct vnfs_registry *registry)
{
	char temporary[320];
	struct json_object *array;
	const char *text;
	int fd;

	if (registry->state_path[0] == '\0')
		return;
	array = json_object_new_array();
	for (uint32_t slot = 0; slot < VNFS_MAX_STEPS; slot++)
		if (registry->steps[slot].state != VNFS_STEP_FREE)
			json_object_array_add(array, step_to_json(&registry->steps[slot], slot));
	text = json_object_to_json_string_ext(array, JSON_C_TO_STRING_PLAIN);
	snprintf(temporary, sizeof(temporary), "%s.tmp", registry->state_path);
	fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		vnfs_error("cannot write %s: %s", temporary, strerror(errno));
	} else {
		size_t length = strlen(text);
		/* No fsync: the file only has to survive a helper restart, not a
		 * power cut, after which the BPF maps it describes are gone too. */
		bool ok = write(fd, text, length) == (ssize_t)length;
		if (close(fd) != 0 || !ok || rename(temporary, registry->state_path) != 0) {
			vnfs_error("cannot save %s: %s", registry->state_path, strerror(errno));
			unlink(temporary);
		}
	}
	json_object_put(array);
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

static int step_from_json(struct json_object *object, struct vnfs_step *step, uint32_t *slot,
			  char *error, size_t error_size)
{
	struct json_object *field;
	uint64_t value;
	const char *state;

	memset(step, 0, sizeof(*step));
	vnfs_tags_init(&step->tags);
	if (json_uint(object, "slot", VNFS_MAX_STEPS - 1, &value) != 0)
		goto bad;
	*slot = (uint32_t)value;
	if (json_uint(object, "job", UINT32_MAX, &value) != 0)
		goto bad;
	step->job_id = (uint32_t)value;
	if (json_uint(object, "step", UINT32_MAX, &value) != 0)
		goto bad;
	step->step_id = (uint32_t)value;
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
	if (!json_object_object_get_ex(object, "state", &field))
		goto bad;
	state = json_object_get_string(field);
	for (int s = VNFS_STEP_RUNNING; s <= VNFS_STEP_FINISHED; s++)
		if (strcmp(state, state_names[s]) == 0)
			step->state = (enum vnfs_step_state)s;
	if (step->state == VNFS_STEP_FREE)
		goto bad;
	if (json_object_object_get_ex(object, "cgroup_path", &field))
		snprintf(step->cgroup_path, sizeof(step->cgroup_path), "%s", json_object_get_string(field));
	if (json_object_object_get_ex(object, "tags", &field) && json_object_is_type(field, json_type_object)) {
		json_object_object_foreach(field, name, tag_value) {
			if (vnfs_tags_set(&step->tags, name, json_object_get_string(tag_value), error,
					  error_size) != 0)
				return -1;
		}
	}
	return 0;
bad:
	snprintf(error, error_size, "malformed step entry %s",
		 json_object_to_json_string_ext(object, JSON_C_TO_STRING_PLAIN));
	return -1;
}

int vnfs_registry_load(struct vnfs_registry *registry, char *error, size_t error_size)
{
	struct json_object *array;
	size_t count;
	char message[512];

	if (registry->state_path[0] == '\0' || access(registry->state_path, F_OK) != 0)
		return 0;
	array = json_object_from_file(registry->state_path);
	if (array == NULL || !json_object_is_type(array, json_type_array)) {
		snprintf(error, error_size, "%s is not a JSON array of steps: starting empty",
			 registry->state_path);
		json_object_put(array);
		return -1;
	}
	count = json_object_array_length(array);
	pthread_mutex_lock(&registry->lock);
	for (size_t i = 0; i < count; i++) {
		struct vnfs_step step;
		uint32_t slot;

		if (step_from_json(json_object_array_get_idx(array, i), &step, &slot, message,
				   sizeof(message)) != 0 || registry->steps[slot].state != VNFS_STEP_FREE) {
			vnfs_error("%s: entry %zu dropped: %s", registry->state_path, i, message);
			continue;
		}
		registry->steps[slot] = step;
		registry->used++;
	}
	pthread_mutex_unlock(&registry->lock);
	json_object_put(array);
	return 0;
}

static int find_step(const struct vnfs_registry *registry, uint32_t job_id, uint32_t step_id)
{
	for (uint32_t slot = 0; slot < VNFS_MAX_STEPS; slot++) {
		const struct vnfs_step *step = &registry->steps[slot];

		if (step->state != VNFS_STEP_FREE && step->job_id == job_id && step->step_id == step_id)
			return (int)slot;
	}
	return -1;
}

int vnfs_registry_add(struct vnfs_registry *registry, const struct vnfs_step *step, uint32_t *slot,
		      char *error, size_t error_size)
{
	int existing, result = -1;

	pthread_mutex_lock(&registry->lock);
	existing = find_step(registry, step->job_id, step->step_id);
	if (existing >= 0) {
		const struct vnfs_step *known = &registry->steps[existing];

		if (known->cgroup_id == step->cgroup_id && known->state == VNFS_STEP_RUNNING) {
			*slot = (uint32_t)existing;
			result = 0;
		} else {
			snprintf(error, error_size,
				 "job %u step %u is already registered (cgroup %" PRIu64 ", %s)",
				 step->job_id, step->step_id, known->cgroup_id, state_names[known->state]);
		}
		goto out;
	}
	for (uint32_t free_slot = 0; free_slot < VNFS_MAX_STEPS; free_slot++) {
		if (registry->steps[free_slot].state != VNFS_STEP_FREE)
			continue;
		registry->steps[free_slot] = *step;
		registry->steps[free_slot].state = VNFS_STEP_RUNNING;
		registry->used++;
		*slot = free_slot;
		persist(registry);
		result = 0;
		goto out;
	}
	snprintf(error, error_size, "no free slot: %u steps are registered on this node",
		 VNFS_MAX_STEPS);
out:
	pthread_mutex_unlock(&registry->lock);
	return result;
}

int vnfs_registry_end(struct vnfs_registry *registry, uint32_t job_id, uint32_t step_id,
		      int64_t now_ms)
{
	int slot;

	pthread_mutex_lock(&registry->lock);
	slot = find_step(registry, job_id, step_id);
	if (slot >= 0 && registry->steps[slot].state == VNFS_STEP_RUNNING) {
		registry->steps[slot].state = VNFS_STEP_ENDED;
		registry->steps[slot].end_time_ms = now_ms;
		persist(registry);
	}
	pthread_mutex_unlock(&registry->lock);
	return slot;
}

int vnfs_registry_finish_job(struct vnfs_registry *registry, uint32_t job_id, int64_t now_ms)
{
	int steps = 0;

	pthread_mutex_lock(&registry->lock);
	for (uint32_t slot = 0; slot < VNFS_MAX_STEPS; slot++) {
		struct vnfs_step *step = &registry->steps[slot];

		if (step->state == VNFS_STEP_FREE || step->job_id != job_id)
			continue;
		if (step->end_time_ms == 0)
			step->end_time_ms = now_ms;
		step->state = VNFS_STEP_FINISHED;
		steps++;
	}
	if (steps > 0)
		persist(registry);
	pthread_mutex_unlock(&registry->lock);
	return steps;
}

void vnfs_registry_release(struct vnfs_registry *registry, uint32_t slot)
{
	if (slot >= VNFS_MAX_STEPS)
		return;
	pthread_mutex_lock(&registry->lock);
	if (registry->steps[slot].state != VNFS_STEP_FREE) {
		memset(&registry->steps[slot], 0, sizeof(registry->steps[slot]));
		registry->used--;
		persist(registry);
	}
	pthread_mutex_unlock(&registry->lock);
}

uint32_t vnfs_registry_snapshot(struct vnfs_registry *registry, struct vnfs_step *steps,
				uint32_t *slots, uint32_t capacity)
{
	uint32_t count = 0;

	pthread_mutex_lock(&registry->lock);
	for (uint32_t slot = 0; slot < VNFS_MAX_STEPS && count < capacity; slot++) {
		if (registry->steps[slot].state == VNFS_STEP_FREE)
			continue;
		steps[count] = registry->steps[slot];
		slots[count] = slot;
		count++;
	}
	pthread_mutex_unlock(&registry->lock);
	return count;
}
