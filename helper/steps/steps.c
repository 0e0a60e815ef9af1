/*
 * steps.c — registering, ending, releasing and restoring steps (see
 * steps.h).
 */
#include "helper/steps/steps.h"

#include <stdio.h>
#include <stdlib.h>

#include "lib/log.h"

void vnfs_steps_init(struct vnfs_steps *steps, struct vnfs_registry *registry,
		     const struct vnfs_counter_source *source)
{
	steps->registry = registry;
	steps->source = *source;
}

int vnfs_steps_register(struct vnfs_steps *steps, const struct vnfs_step *step, uint32_t *slot,
			char *error, size_t error_size)
{
	const struct vnfs_counter_source *source = &steps->source;
	char name[VNFS_WORKLOAD_DESCRIPTION_MAX];

	int added = vnfs_registry_add(steps->registry, step, slot, error, error_size);

	if (added < 0)
		return -1;
	vnfs_workload_describe(&step->workload, name, sizeof(name));
	if (source->register_cgroup(source->context, step->cgroup_id, *slot) != 0) {
		/* A restarted container keeps what it counted before: ended. */
		if (added == 1)
			(void)vnfs_registry_end(steps->registry, &step->workload, step->start_time_ms);
		else
			vnfs_registry_release(steps->registry, *slot);
		snprintf(error, error_size, "%s: the BPF registry is full", name);
		return -1;
	}
	vnfs_info("%s %s (uid %u, cgroup %llu %s) in slot %u",
		  added == 1 ? "restarted: registered again" : "registered", name, step->uid,
		  (unsigned long long)step->cgroup_id, step->cgroup_path, *slot);
	return 0;
}

int vnfs_steps_end(struct vnfs_steps *steps, const struct vnfs_workload *step, int64_t now_ms)
{
	return vnfs_registry_end(steps->registry, step, now_ms) < 0 ? -1 : 0;
}

int vnfs_steps_release(struct vnfs_steps *steps, uint32_t slot,
		       const struct vnfs_step_record *record, bool only_if_ended)
{
	const struct vnfs_counter_source *source = &steps->source;
	char name[VNFS_WORKLOAD_DESCRIPTION_MAX];

	if (source->unregister_cgroup(source->context, record->cgroup_id) != 0)
		vnfs_warning("%s: cgroup %llu was not in the BPF registry",
			     vnfs_workload_describe(&record->workload, name, sizeof(name)),
			     (unsigned long long)record->cgroup_id);
	(void)source->reset_slot(source->context, slot);
	if (source->forget_wire != NULL)
		(void)source->forget_wire(source->context, record->cgroup_id);
	if (!only_if_ended) {
		vnfs_registry_release(steps->registry, slot);
		return 0;
	}
	return vnfs_registry_release_ended(steps->registry, slot, &record->workload) != 0 ? -1 : 0;
}

/* What restoring needs of a persisted step. */
struct persisted_step {
	uint32_t slot;
	struct vnfs_workload workload;
	uint64_t cgroup_id;
};

struct persisted_steps {
	uint32_t count;
	struct persisted_step steps[VNFS_MAX_STEPS];
};

static void note_persisted_step(const struct vnfs_step *step, uint32_t slot, void *context)
{
	struct persisted_steps *persisted = context;

	persisted->steps[persisted->count++] = (struct persisted_step){
		.slot = slot,
		.workload = step->workload,
		.cgroup_id = step->cgroup_id,
	};
}

void vnfs_steps_restore(struct vnfs_steps *steps)
{
	const struct vnfs_counter_source *source = &steps->source;
	struct persisted_steps *persisted = calloc(1, sizeof(*persisted));
	uint32_t pinned_slot, restored = 0, continued = 0;
	char name[VNFS_WORKLOAD_DESCRIPTION_MAX];

	if (persisted == NULL) {
		vnfs_error("out of memory reconciling the registry");
		return;
	}
	/* Copied out first: the source is not called under the registry's lock. */
	vnfs_registry_visit(steps->registry, note_persisted_step, persisted, NULL);
	for (uint32_t i = 0; i < persisted->count; i++) {
		const struct persisted_step *step = &persisted->steps[i];

		if (source->registered(source->context, step->cgroup_id, &pinned_slot) == 0 &&
		    pinned_slot == step->slot) {
			continued++;
			continue;
		}
		if (source->register_cgroup(source->context, step->cgroup_id, step->slot) == 0)
			restored++;
		else
			vnfs_error("%s: cannot restore its registration",
				   vnfs_workload_describe(&step->workload, name, sizeof(name)));
	}
	if (persisted->count > 0)
		vnfs_info("registry: %u steps continue from the pinned maps, %u registered again",
			  continued, restored);
	free(persisted);
}
