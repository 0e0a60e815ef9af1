/*
 * test_collector.c — the collector on a host, with no kernel: a fake
 * counter source (helper/kernel/counters.h) holding the counters each test sets
 * per interval, a real registry and real ended steps in a temporary
 * STATE_DIR, report files in a temporary report_dir, and a sink that copies
 * what it is handed.  Asserts an interval's records (each step its own
 * counts), that a slot whose activity did not move is not copied again and
 * the breakdowns not walked again, the process and mount rows of each step,
 * a FINISH's job summary, report file and released slots (the other job's
 * untouched), an ended step whose cgroup is empty leaving its slot and
 * still reported at its job's FINISH, and a job abandoned past the grace
 * period finished by the collector.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "workload_fixtures.h"
#include "helper/collect/collector.h"
#include "helper/kernel/counters.h"
#include "helper/steps/registry.h"
#include "helper/outputs/sink.h"
#include "lib/record_json.h"

#define T0 1700000000000 /* ms: the registrations' time */
#define MIB 1048576u

/* ---- the fake counter source ------------------------------------------- */

/* Slots the fake keeps counters for; the registry gives the lowest free
 * slots first, so a test's few steps are below it. */
#define FAKE_SLOTS 8
#define FAKE_ROWS 8

struct fake_source {
	uint64_t activity[FAKE_SLOTS];
	struct vnfs_step_stats stats[FAKE_SLOTS];
	uint64_t registered[FAKE_SLOTS]; /* cgroup id per slot, 0: none */
	struct {
		struct vnfs_breakdown_key key;
		struct vnfs_breakdown_stats stats;
	} rows[FAKE_ROWS];          /* breakdown rows {slot, device, comm} */
	size_t row_count;
	struct {
		struct vnfs_unattributed_key key;
		struct vnfs_unattributed_stats stats;
	} unattributed[FAKE_ROWS];
	size_t unattributed_count;
	struct {
		struct vnfs_wire_key key;
		struct vnfs_wire_stats stats;
		char procedure[VNFS_WIRE_PROCEDURE_NAME_MAX];
	} wire[FAKE_ROWS];          /* RPC rows, as wire_stats holds them */
	size_t wire_count;
	uint64_t forgotten[FAKE_ROWS]; /* forget_wire's owner ids */
	size_t forgotten_count;
	uint64_t health[VNFS_HEALTH_COUNTERS];
	/* The kernel's missed returns, as kprobe_profile lists them. */
	struct { const char *function; uint64_t missed; } missed_returns[4];
	size_t missed_return_count;
	bool missed_returns_unreadable;

	/* What the collector asked. */
	unsigned stats_reads[FAKE_SLOTS];
	unsigned breakdown_walks, unattributed_walks;
	uint64_t unregistered[FAKE_ROWS];
	size_t unregistered_count;
	uint32_t resets[FAKE_ROWS];
	size_t reset_count;
};

static uint64_t fake_step_activity(void *context, uint32_t slot)
{
	struct fake_source *fake = context;

	return slot < FAKE_SLOTS ? fake->activity[slot] : 0;
}

static int fake_read_step_stats(void *context, uint32_t slot, struct vnfs_step_stats *stats)
{
	struct fake_source *fake = context;

	if (slot >= FAKE_SLOTS) {
		errno = ENOENT;
		return -1;
	}
	fake->stats_reads[slot]++;
	*stats = fake->stats[slot];
	return 0;
}

static int fake_for_each_breakdown(void *context, vnfs_breakdown_fn fn, void *fn_context)
{
	struct fake_source *fake = context;
	int status = 0;

	fake->breakdown_walks++;
	for (size_t i = 0; status == 0 && i < fake->row_count; i++)
		status = fn(&fake->rows[i].key, &fake->rows[i].stats, fn_context);
	return status;
}

static int fake_for_each_unattributed(void *context, vnfs_unattributed_fn fn, void *fn_context)
{
	struct fake_source *fake = context;
	int status = 0;

	fake->unattributed_walks++;
	for (size_t i = 0; status == 0 && i < fake->unattributed_count; i++)
		status = fn(&fake->unattributed[i].key, &fake->unattributed[i].stats, fn_context);
	return status;
}

static int fake_for_each_wire(void *context, vnfs_wire_fn fn, void *fn_context)
{
	struct fake_source *fake = context;
	int status = 0;

	for (size_t i = 0; status == 0 && i < fake->wire_count; i++)
		status = fn(&fake->wire[i].key, &fake->wire[i].stats, fake->wire[i].procedure,
			    fn_context);
	return status;
}

static int fake_forget_wire(void *context, uint64_t owner_id)
{
	struct fake_source *fake = context;

	assert_true(fake->forgotten_count < FAKE_ROWS);
	fake->forgotten[fake->forgotten_count++] = owner_id;
	return 0;
}

static int fake_read_health(void *context, uint64_t counters[VNFS_HEALTH_COUNTERS])
{
	struct fake_source *fake = context;

	memcpy(counters, fake->health, sizeof(fake->health));
	return 0;
}

static int fake_for_each_missed_return(void *context, vnfs_missed_return_fn fn, void *fn_context)
{
	struct fake_source *fake = context;
	int result = 0;

	for (size_t i = 0; i < fake->missed_return_count && result == 0; i++)
		result = fn(fake->missed_returns[i].function, fake->missed_returns[i].missed,
			    fn_context);
	return fake->missed_returns_unreadable ? -1 : result;
}

/* read by fentry, write by kprobe, the rest not hooked. */
static enum vnfs_attach_method fake_attach_method(void *context, enum vnfs_operation operation)
{
	(void)context;
	if (operation == VNFS_OP_READ)
		return VNFS_ATTACH_FENTRY;
	return operation == VNFS_OP_WRITE ? VNFS_ATTACH_KPROBE : VNFS_ATTACH_NONE;
}

static int fake_unregister_cgroup(void *context, uint64_t cgroup_id)
{
	struct fake_source *fake = context;

	assert_true(fake->unregistered_count < FAKE_ROWS);
	fake->unregistered[fake->unregistered_count++] = cgroup_id;
	for (uint32_t slot = 0; slot < FAKE_SLOTS; slot++) {
		if (fake->registered[slot] == cgroup_id) {
			fake->registered[slot] = 0;
			return 0;
		}
	}
	return -1;
}

/* Drops the slot's rows from an array of rows with a key.slot. */
#define DROP_ROWS_OF_SLOT(rows, count, slot)                         \
	do {                                                         \
		size_t kept = 0;                                     \
		for (size_t i = 0; i < (count); i++)                 \
			if ((rows)[i].key.slot != (slot))            \
				(rows)[kept++] = (rows)[i];          \
		(count) = kept;                                      \
	} while (0)

static int fake_reset_slot(void *context, uint32_t slot)
{
	struct fake_source *fake = context;

	assert_true(fake->reset_count < FAKE_ROWS);
	fake->resets[fake->reset_count++] = slot;
	if (slot >= FAKE_SLOTS)
		return -1;
	memset(&fake->stats[slot], 0, sizeof(fake->stats[slot]));
	fake->activity[slot] = 0;
	DROP_ROWS_OF_SLOT(fake->rows, fake->row_count, slot);
	return 0;
}

static int fake_register_cgroup(void *context, uint64_t cgroup_id, uint32_t slot)
{
	struct fake_source *fake = context;

	if (slot >= FAKE_SLOTS || fake->registered[slot] != 0)
		return -1;
	fake->registered[slot] = cgroup_id;
	return 0;
}

static int fake_registered(void *context, uint64_t cgroup_id, uint32_t *slot)
{
	struct fake_source *fake = context;

	for (uint32_t i = 0; i < FAKE_SLOTS; i++) {
		if (fake->registered[i] == cgroup_id) {
			*slot = i;
			return 0;
		}
	}
	return -1;
}

static struct vnfs_counter_source fake_source(struct fake_source *fake)
{
	return (struct vnfs_counter_source){
		.context = fake,
		.step_activity = fake_step_activity,
		.read_step_stats = fake_read_step_stats,
		.for_each_breakdown = fake_for_each_breakdown,
		.for_each_unattributed = fake_for_each_unattributed,
		.for_each_wire = fake_for_each_wire,
		.forget_wire = fake_forget_wire,
		.read_health = fake_read_health,
		.for_each_missed_return = fake_for_each_missed_return,
		.attach_method = fake_attach_method,
		.register_cgroup = fake_register_cgroup,
		.registered = fake_registered,
		.unregister_cgroup = fake_unregister_cgroup,
		.reset_slot = fake_reset_slot,
	};
}

/* calls writes of size bytes each into slot, as the kernel side counts
 * them: counters first, then the activity. */
static void fake_count_writes(struct fake_source *fake, uint32_t slot, uint64_t calls,
			      uint64_t size)
{
	assert_true(slot < FAKE_SLOTS);
	fake->stats[slot].operations[VNFS_OP_WRITE].count += calls;
	fake->stats[slot].operations[VNFS_OP_WRITE].bytes += calls * size;
	fake->activity[slot] += calls;
}

/* The same, caught half-way: a drain on another CPU has added its calls to
 * the counters and not yet moved the activity. */
static void fake_count_writes_half_way(struct fake_source *fake, uint32_t slot, uint64_t calls,
				       uint64_t size)
{
	fake_count_writes(fake, slot, calls, size);
	fake->activity[slot] -= calls;
}

/* A breakdown row, as the kernel counts it: per slot, mount and process
 * name.  Rows come in any order, as the source's contract says. */
static void fake_add_row(struct fake_source *fake, uint32_t slot, uint32_t device,
			 const char *comm, uint64_t write_ops, uint64_t write_bytes,
			 uint64_t other_ops)
{
	size_t i = fake->row_count++;

	assert_true(i < FAKE_ROWS);
	memset(&fake->rows[i], 0, sizeof(fake->rows[i]));
	fake->rows[i].key.slot = slot;
	fake->rows[i].key.device = device;
	strncpy(fake->rows[i].key.comm, comm, sizeof(fake->rows[i].key.comm));
	fake->rows[i].stats.write_ops = write_ops;
	fake->rows[i].stats.write_bytes = write_bytes;
	fake->rows[i].stats.other_ops = other_ops;
}

/* ---- the recording sink ------------------------------------------------- */

#define RECORDED_STEPS 8
#define RECORDED_JOBS 4

/* A step record copied whole: a record is valid only during the call. */
struct recorded_step {
	struct vnfs_step_record record; /* its pointers point below */
	struct vnfs_tag_list tags;
	struct vnfs_step_stats stats;
	struct vnfs_process_record processes[FAKE_ROWS];
	struct vnfs_mount_record mounts[FAKE_ROWS];
	struct vnfs_wire_record wire[FAKE_ROWS];
};

struct recorded_job {
	uint32_t job_id, uid;
	int64_t start_time_ms, end_time_ms;
	size_t step_count;
	struct recorded_step steps[RECORDED_STEPS];
};

struct recording_sink {
	unsigned publishes;
	/* The last interval published. */
	int64_t time_ms;
	char node[65];
	size_t step_count;
	struct recorded_step steps[RECORDED_STEPS];
	size_t unattributed_count;
	struct vnfs_unattributed_record unattributed[FAKE_ROWS];
	size_t node_wire_count;
	struct vnfs_node_wire_record node_wire[FAKE_ROWS];
	struct vnfs_helper_health health;
	/* Every job finished, in order. */
	unsigned jobs_finished;
	struct recorded_job jobs[RECORDED_JOBS];
	bool closed;
};

static void copy_step(struct recorded_step *copy, const struct vnfs_step_record *record)
{
	assert_true(record->process_count <= FAKE_ROWS && record->mount_count <= FAKE_ROWS);
	assert_non_null(record->stats);
	copy->record = *record;
	vnfs_tags_init(&copy->tags);
	if (record->tags != NULL)
		copy->tags = *record->tags;
	copy->record.tags = &copy->tags;
	copy->stats = *record->stats;
	copy->record.stats = &copy->stats;
	if (record->process_count > 0)
		memcpy(copy->processes, record->processes,
		       record->process_count * sizeof(*record->processes));
	copy->record.processes = copy->processes;
	if (record->mount_count > 0)
		memcpy(copy->mounts, record->mounts, record->mount_count * sizeof(*record->mounts));
	copy->record.mounts = copy->mounts;
	assert_true(record->wire_count <= FAKE_ROWS);
	if (record->wire_count > 0)
		memcpy(copy->wire, record->wire, record->wire_count * sizeof(*record->wire));
	copy->record.wire = copy->wire;
}

static void recording_publish(void *state, const struct vnfs_interval *interval)
{
	struct recording_sink *sink = state;

	assert_true(interval->step_count <= RECORDED_STEPS);
	assert_true(interval->unattributed_count <= FAKE_ROWS);
	sink->publishes++;
	sink->time_ms = interval->time_ms;
	snprintf(sink->node, sizeof(sink->node), "%s", interval->node);
	sink->step_count = interval->step_count;
	for (size_t i = 0; i < interval->step_count; i++)
		copy_step(&sink->steps[i], &interval->steps[i]);
	sink->unattributed_count = interval->unattributed_count;
	if (interval->unattributed_count > 0)
		memcpy(sink->unattributed, interval->unattributed,
		       interval->unattributed_count * sizeof(*interval->unattributed));
	assert_true(interval->node_wire_count <= FAKE_ROWS);
	sink->node_wire_count = interval->node_wire_count;
	if (interval->node_wire_count > 0)
		memcpy(sink->node_wire, interval->node_wire,
		       interval->node_wire_count * sizeof(*interval->node_wire));
	sink->health = *interval->health;
}

static void recording_job_finished(void *state, const struct vnfs_job *job)
{
	struct recording_sink *sink = state;
	struct recorded_job *copy;

	assert_true(sink->jobs_finished < RECORDED_JOBS);
	assert_true(job->step_count <= RECORDED_STEPS);
	copy = &sink->jobs[sink->jobs_finished++];
	copy->job_id = job->job_id;
	copy->uid = job->uid;
	copy->start_time_ms = job->start_time_ms;
	copy->end_time_ms = job->end_time_ms;
	copy->step_count = job->step_count;
	for (size_t i = 0; i < job->step_count; i++)
		copy_step(&copy->steps[i], &job->steps[i]);
}

static void recording_close(void *state)
{
	struct recording_sink *sink = state;

	sink->closed = true;
}

static const struct vnfs_step_record *find_step(const struct recorded_step *steps, size_t count,
						uint32_t job_id, uint32_t step_id)
{
	for (size_t i = 0; i < count; i++)
		if (steps[i].record.job_id == job_id && steps[i].record.step_id == step_id)
			return &steps[i].record;
	fail_msg("job %u step %u is not among the %zu records", job_id, step_id, count);
	return NULL;
}

/* The state of the step in slot, as the registry gives it out. */
static enum vnfs_step_state registry_state(struct vnfs_registry *registry, uint32_t slot)
{
	struct vnfs_step step;

	vnfs_registry_get(registry, slot, &step);
	return step.state;
}

/* ---- the fixture -------------------------------------------------------- */

struct fixture {
	char directory[64]; /* STATE_DIR, report_dir and the cgroups, below it */
	char state_dir[96];
	struct vnfs_config config;
	struct vnfs_registry *registry;
	struct vnfs_steps steps;
	struct fake_source fake;
	struct recording_sink sink;
	struct vnfs_collector collector;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct vnfs_counter_source source;
	struct vnfs_sink sink = {
		.name = "recording",
		.publish = recording_publish,
		.job_finished = recording_job_finished,
		.close = recording_close,
	};
	char error[512];

	if (f == NULL)
		return -1;
	snprintf(f->directory, sizeof(f->directory), "/tmp/vnfs-test-collector.XXXXXX");
	if (mkdtemp(f->directory) == NULL)
		return -1;
	snprintf(f->state_dir, sizeof(f->state_dir), "%s/state", f->directory);
	if (mkdir(f->state_dir, 0700) != 0)
		return -1;
	snprintf(f->config.helper.state_dir, sizeof(f->config.helper.state_dir), "%s",
		 f->state_dir);
	snprintf(f->config.helper.report_dir, sizeof(f->config.helper.report_dir), "%s/reports",
		 f->directory);
	f->config.helper.admin_gid = (gid_t)-1;
	f->config.helper.finished_job_grace_s = 60;
	f->registry = malloc(sizeof(*f->registry));
	if (f->registry == NULL ||
	    vnfs_registry_init(f->registry, f->state_dir, error, sizeof(error)) != 0)
		return -1;
	source = fake_source(&f->fake);
	vnfs_steps_init(&f->steps, f->registry, &source);
	if (vnfs_collector_init(&f->collector, &f->config, &f->steps, "node1", error,
				sizeof(error)) != 0) {
		fprintf(stderr, "%s\n", error);
		return -1;
	}
	sink.state = &f->sink;
	if (vnfs_collector_add_sink(&f->collector, &sink) != 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char command[128];
	bool closed;

	vnfs_collector_destroy(&f->collector);
	closed = f->sink.closed;
	vnfs_registry_destroy(f->registry);
	free(f->registry);
	snprintf(command, sizeof(command), "rm -rf '%s'", f->directory);
	if (system(command) != 0 || !closed)
		return -1;
	free(f);
	return 0;
}

/* A cgroup directory whose cgroup.events says populated (1) or not (0);
 * its path into path. */
static void make_cgroup(struct fixture *f, const char *name, int populated, char *path,
			size_t size)
{
	char events[256];
	FILE *file;

	snprintf(path, size, "%s/%s", f->directory, name);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(events, sizeof(events), "%s/cgroup.events", path);
	file = fopen(events, "w");
	assert_non_null(file);
	fprintf(file, "populated %d\nfrozen 0\n", populated);
	assert_int_equal(fclose(file), 0);
}

/* Registers a step as the helper's REGISTER does (helper/steps/steps.c: the
 * registry, then the counting side); returns its slot.  Owner uid
 * 1000 + job. */
static uint32_t register_tagged_step(struct fixture *f, uint32_t job_id, uint32_t step_id,
				     uint64_t cgroup_id, const char *cgroup_path, const char *tags)
{
	struct vnfs_step step = {
		.workload = *slurm_step(job_id, step_id),
		.uid = 1000 + job_id,
		.cgroup_id = cgroup_id,
		.start_time_ms = T0,
	};
	char error[256];
	uint32_t slot;

	snprintf(step.cgroup_path, sizeof(step.cgroup_path), "%s", cgroup_path);
	vnfs_tags_init(&step.tags);
	if (tags[0] != '\0')
		assert_int_equal(vnfs_tags_parse(&step.tags, tags, NULL, NULL, error, sizeof(error)),
				 0);
	assert_int_equal(vnfs_steps_register(&f->steps, &step, &slot, error, sizeof(error)), 0);
	assert_true(slot < FAKE_SLOTS);
	assert_int_equal(f->fake.registered[slot], cgroup_id);
	return slot;
}

static uint32_t register_step(struct fixture *f, uint32_t job_id, uint32_t step_id,
			      uint64_t cgroup_id, const char *cgroup_path)
{
	return register_tagged_step(f, job_id, step_id, cgroup_id, cgroup_path, "");
}

static void assert_writes(const struct vnfs_step_record *record, uint64_t calls, uint64_t bytes)
{
	assert_int_equal(record->stats->operations[VNFS_OP_WRITE].count, calls);
	assert_int_equal(record->stats->operations[VNFS_OP_WRITE].bytes, bytes);
}

static bool file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* ---- the tests ---------------------------------------------------------- */

static void test_interval_holds_each_steps_own_counts(void **state)
{
	struct fixture *f = *state;
	uint32_t slot42 = register_step(f, 42, 0, 4200, "/sys/fs/cgroup/job_42/step_0");
	uint32_t slot43 = register_step(f, 43, 0, 4300, "/sys/fs/cgroup/job_43/step_0");
	const struct vnfs_step_record *record;

	fake_count_writes(&f->fake, slot42, 8, MIB);
	f->fake.health[VNFS_HEALTH_BREAKDOWN_FULL] = 3;
	vnfs_collector_collect(&f->collector, T0 + 10000);

	assert_int_equal(f->sink.publishes, 1);
	assert_int_equal(f->sink.time_ms, T0 + 10000);
	assert_string_equal(f->sink.node, "node1");
	assert_int_equal(f->sink.step_count, 2);
	record = find_step(f->sink.steps, f->sink.step_count, 42, 0);
	assert_writes(record, 8, 8388608);
	assert_int_equal(record->stats->operations[VNFS_OP_READ].count, 0);
	assert_int_equal(record->uid, 1042);
	assert_int_equal(record->cgroup_id, 4200);
	assert_string_equal(record->node, "node1");
	assert_int_equal(record->sample_time_ms, T0 + 10000);
	assert_false(record->finished);
	record = find_step(f->sink.steps, f->sink.step_count, 43, 0);
	for (int op = 0; op < VNFS_OP_COUNT; op++)
		assert_int_equal(record->stats->operations[op].count, 0);
	assert_writes(record, 0, 0);
	assert_int_equal(f->fake.stats_reads[slot43], 0); /* it counted nothing: no copy */

	assert_int_equal(f->sink.health.counters[VNFS_HEALTH_BREAKDOWN_FULL], 3);
	assert_int_equal(f->sink.health.active_slots, 2);
	assert_int_equal(f->sink.health.max_slots, VNFS_MAX_STEPS);
	assert_int_equal(f->sink.health.attach_method[VNFS_OP_READ], VNFS_ATTACH_FENTRY);
	assert_int_equal(f->sink.health.attach_method[VNFS_OP_WRITE], VNFS_ATTACH_KPROBE);
	assert_int_equal(f->sink.health.attach_method[VNFS_OP_OPEN], VNFS_ATTACH_NONE);
	assert_int_equal(f->sink.health.sink_count, 1);
	assert_string_equal(f->sink.health.sink_names[0], "recording");
	assert_int_equal(f->sink.jobs_finished, 0);
}

/* The kernel's missed returns per function: an earlier helper's event for
 * the same function (its pinned link still in use) adds to it; a failed
 * read keeps what the last one found. */
static void test_missed_returns_are_summed_per_function(void **state)
{
	struct fixture *f = *state;
	const struct vnfs_missed_returns *counted = &f->sink.health.missed_returns;

	f->fake.missed_returns[0].function = "nfs_file_read";
	f->fake.missed_returns[0].missed = 6;
	f->fake.missed_returns[1].function = "nfs_getattr";
	f->fake.missed_returns[1].missed = 0;
	f->fake.missed_returns[2].function = "nfs_file_read";
	f->fake.missed_returns[2].missed = 2;
	f->fake.missed_return_count = 3;
	vnfs_collector_collect(&f->collector, T0 + 10000);
	assert_int_equal(counted->count, 2);
	assert_string_equal(counted->functions[0].function, "nfs_file_read");
	assert_int_equal(counted->functions[0].missed, 8);
	assert_string_equal(counted->functions[1].function, "nfs_getattr");
	assert_int_equal(counted->functions[1].missed, 0);

	f->fake.missed_returns[1].missed = 5;
	f->fake.missed_returns_unreadable = true;
	vnfs_collector_collect(&f->collector, T0 + 20000);
	assert_int_equal(counted->count, 2);
	assert_int_equal(counted->functions[1].missed, 0);

	f->fake.missed_returns_unreadable = false;
	f->fake.missed_return_count = 1;
	vnfs_collector_collect(&f->collector, T0 + 30000);
	assert_int_equal(counted->count, 1);
	assert_int_equal(counted->functions[0].missed, 6);
}

/* Each record points to its tags, one copy per distinct list: the two
 * steps of job 42 share theirs, job 43 has its own, job 44 none; a list
 * no step holds any more is freed, and the finished job's tags reach the
 * sinks. */
static void test_records_carry_their_tags_one_copy_per_list(void **state)
{
	struct fixture *f = *state;
	const struct vnfs_step_record *record;
	struct vnfs_owned_job answer;
	char error[256];

	register_tagged_step(f, 42, 0, 4200, "/sys/fs/cgroup/job_42/step_0", "PROJECT_NAME=alpha");
	register_tagged_step(f, 42, 1, 4201, "/sys/fs/cgroup/job_42/step_1", "PROJECT_NAME=alpha");
	register_tagged_step(f, 43, 0, 4300, "/sys/fs/cgroup/job_43/step_0",
			     "PROJECT_NAME=beta,QUEUE=gpu");
	register_step(f, 44, 0, 4400, "/sys/fs/cgroup/job_44/step_0");
	vnfs_collector_collect(&f->collector, T0 + 1000);
	assert_int_equal(f->sink.step_count, 4);
	assert_int_equal(f->collector.kept_tags.count, 2);
	record = find_step(f->sink.steps, f->sink.step_count, 42, 1);
	assert_string_equal(vnfs_tags_find(record->tags, "PROJECT_NAME"), "alpha");
	record = find_step(f->sink.steps, f->sink.step_count, 43, 0);
	assert_int_equal(vnfs_tags_count(record->tags), 2);
	assert_string_equal(vnfs_tags_find(record->tags, "QUEUE"), "gpu");
	record = find_step(f->sink.steps, f->sink.step_count, 44, 0);
	assert_int_equal(vnfs_tags_count(record->tags), 0);

	assert_int_equal(vnfs_collector_finish_job(&f->collector, slurm_job(43), "", T0 + 2000,
						   &answer, error, sizeof(error)),
			 0);
	assert_int_equal(f->sink.jobs_finished, 1);
	assert_string_equal(vnfs_tags_find(f->sink.jobs[0].steps[0].record.tags, "PROJECT_NAME"),
			    "beta");
	assert_int_equal(answer.step_count, 1);
	assert_string_equal(vnfs_tags_find(answer.steps[0].tags, "QUEUE"), "gpu");
	vnfs_owned_job_free(&answer);
	vnfs_collector_collect(&f->collector, T0 + 3000);
	assert_int_equal(f->sink.step_count, 3);
	assert_int_equal(f->collector.kept_tags.count, 1);
}

static void test_slot_is_copied_only_when_its_activity_moved(void **state)
{
	struct fixture *f = *state;
	uint32_t slot42 = register_step(f, 42, 0, 4200, "/sys/fs/cgroup/job_42/step_0");
	uint32_t slot43 = register_step(f, 43, 0, 4300, "/sys/fs/cgroup/job_43/step_0");
	int64_t now = T0 + 10000;

	fake_count_writes(&f->fake, slot42, 8, MIB);
	vnfs_collector_collect(&f->collector, now += 10000);
	assert_int_equal(f->fake.stats_reads[slot42], 1);
	assert_int_equal(f->fake.breakdown_walks, 1);
	assert_int_equal(f->fake.unattributed_walks, 1);
	/* Once more after a change (a copy may have overlapped a drain)... */
	vnfs_collector_collect(&f->collector, now += 10000);
	assert_int_equal(f->fake.stats_reads[slot42], 2);
	/* ...then not again while the activity stands still. */
	vnfs_collector_collect(&f->collector, now += 10000);
	vnfs_collector_collect(&f->collector, now += 10000);
	assert_int_equal(f->fake.stats_reads[slot42], 2);
	assert_writes(find_step(f->sink.steps, f->sink.step_count, 42, 0), 8, 8388608);
	assert_int_equal(f->fake.breakdown_walks, 1);
	assert_int_equal(f->fake.unattributed_walks, 4); /* they move without any activity */

	fake_count_writes(&f->fake, slot42, 2, 4096);
	vnfs_collector_collect(&f->collector, now += 10000);
	assert_int_equal(f->fake.stats_reads[slot42], 3);
	assert_int_equal(f->fake.breakdown_walks, 2);
	assert_writes(find_step(f->sink.steps, f->sink.step_count, 42, 0), 10, 8388608 + 8192);
	vnfs_collector_collect(&f->collector, now += 10000);
	vnfs_collector_collect(&f->collector, now += 10000);
	assert_int_equal(f->fake.stats_reads[slot42], 4);
	assert_int_equal(f->fake.breakdown_walks, 2);

	/* A registration with no activity: the rows are walked again. */
	(void)register_step(f, 44, 0, 4400, "/sys/fs/cgroup/job_44/step_0");
	vnfs_collector_collect(&f->collector, now += 10000);
	assert_int_equal(f->fake.breakdown_walks, 3);
	assert_int_equal(f->fake.stats_reads[slot42], 4);
	assert_int_equal(f->fake.stats_reads[slot43], 0);
	assert_int_equal(f->sink.step_count, 3);
	assert_int_equal(f->sink.publishes, 8);
}

static void test_breakdown_rows_go_to_their_steps(void **state)
{
	struct fixture *f = *state;
	uint32_t slot42 = register_step(f, 42, 0, 4200, "/sys/fs/cgroup/job_42/step_0");
	uint32_t slot43 = register_step(f, 43, 0, 4300, "/sys/fs/cgroup/job_43/step_0");
	const struct vnfs_step_record *record;
	const struct vnfs_unattributed_record *unattributed;

	fake_count_writes(&f->fake, slot42, 8, MIB);
	fake_count_writes(&f->fake, slot43, 1, 4096);
	/* Out of order: the collector groups them, per process and per mount. */
	fake_add_row(&f->fake, slot43, 54, "cp", 0, 0, 3);
	fake_add_row(&f->fake, slot42, 53, "python", 2, 2 * MIB, 0);
	fake_add_row(&f->fake, 7, 53, "ghost", 5, 5, 0); /* a slot no step holds */
	fake_add_row(&f->fake, slot43, 53, "cp", 1, 4096, 0);
	fake_add_row(&f->fake, slot42, 53, "dd", 6, 6 * MIB, 0);
	f->fake.unattributed[0].key.cgroup_id = 77;
	f->fake.unattributed[0].key.uid = 1000;
	strncpy(f->fake.unattributed[0].key.comm, "curl", sizeof(f->fake.unattributed[0].key.comm));
	f->fake.unattributed[0].stats.operations[VNFS_OP_READ].count = 5;
	f->fake.unattributed[0].stats.operations[VNFS_OP_READ].bytes = 5000;
	f->fake.unattributed_count = 1;
	vnfs_collector_collect(&f->collector, T0 + 10000);

	record = find_step(f->sink.steps, f->sink.step_count, 42, 0);
	assert_int_equal(record->process_count, 2);
	assert_string_equal(record->processes[0].comm, "dd");
	assert_int_equal(record->processes[0].stats.write_ops, 6);
	assert_int_equal(record->processes[0].stats.write_bytes, 6 * MIB);
	assert_string_equal(record->processes[1].comm, "python");
	assert_int_equal(record->processes[1].stats.write_bytes, 2 * MIB);
	assert_int_equal(record->mount_count, 1);
	assert_int_equal(record->mounts[0].device, 53);
	assert_int_equal(record->mounts[0].stats.ops, 8);
	assert_int_equal(record->mounts[0].stats.write_bytes, 8 * MIB);

	record = find_step(f->sink.steps, f->sink.step_count, 43, 0);
	assert_int_equal(record->process_count, 1);
	assert_string_equal(record->processes[0].comm, "cp"); /* over both mounts */
	assert_int_equal(record->processes[0].stats.write_ops, 1);
	assert_int_equal(record->processes[0].stats.write_bytes, 4096);
	assert_int_equal(record->processes[0].stats.other_ops, 3);
	assert_int_equal(record->mount_count, 2);
	assert_int_equal(record->mounts[0].device, 53);
	assert_int_equal(record->mounts[0].stats.ops, 1);
	assert_int_equal(record->mounts[0].stats.write_bytes, 4096);
	assert_int_equal(record->mounts[1].device, 54);
	assert_int_equal(record->mounts[1].stats.ops, 3);
	assert_int_equal(record->mounts[1].stats.write_bytes, 0);

	assert_int_equal(f->sink.unattributed_count, 1);
	unattributed = &f->sink.unattributed[0];
	assert_int_equal(unattributed->cgroup_id, 77);
	assert_int_equal(unattributed->uid, 1000);
	assert_string_equal(unattributed->comm, "curl");
	assert_int_equal(unattributed->stats.operations[VNFS_OP_READ].count, 5);
	assert_int_equal(unattributed->stats.operations[VNFS_OP_READ].bytes, 5000);
}

/* A wire row of rpcs RPCs that received 1,000 bytes each. */
static void fake_add_wire(struct fake_source *fake, uint32_t slot, enum vnfs_wire_owner_kind owner,
			  uint64_t owner_id, uint16_t procedure, const char *name, uint64_t rpcs)
{
	assert_true(fake->wire_count < FAKE_ROWS);
	memset(&fake->wire[fake->wire_count], 0, sizeof(fake->wire[0]));
	fake->wire[fake->wire_count].key = (struct vnfs_wire_key){
		.slot = slot, .device = 53, .version = 3, .procedure = procedure,
		.owner_kind = owner, .owner_id = owner_id,
	};
	fake->wire[fake->wire_count].stats.rpcs = rpcs;
	fake->wire[fake->wire_count].stats.transmissions = rpcs;
	fake->wire[fake->wire_count].stats.bytes_received = 1000 * rpcs;
	snprintf(fake->wire[fake->wire_count].procedure, VNFS_WIRE_PROCEDURE_NAME_MAX, "%s", name);
	fake->wire_count++;
}

/* A step's RPC rows are its own and those kept under its cgroup's id before
 * it was identified (bpf/wire.h), merged per mount and procedure; the rest
 * are the node's; its release forgets the rows under its id. */
static void test_wire_rows_go_to_their_steps(void **state)
{
	struct fixture *f = *state;
	uint32_t slot42 = register_step(f, 42, 0, 4200, "/sys/fs/cgroup/job_42/step_0");
	const struct vnfs_step_record *record;

	/* Out of order, as a hash map gives them. */
	fake_add_wire(&f->fake, VNFS_SLOT_NONE, VNFS_WIRE_UNATTRIBUTED, 4200, 7, "WRITE", 2);
	fake_add_wire(&f->fake, slot42, VNFS_WIRE_WORKLOAD, 0, 6, "READ", 5);
	fake_add_wire(&f->fake, VNFS_SLOT_NONE, VNFS_WIRE_BACKGROUND, 0, 1, "GETATTR", 4);
	fake_add_wire(&f->fake, VNFS_SLOT_NONE, VNFS_WIRE_UNATTRIBUTED, 4200, 6, "READ", 3);
	fake_add_wire(&f->fake, VNFS_SLOT_NONE, VNFS_WIRE_UNATTRIBUTED, 999, 6, "READ", 1);
	vnfs_collector_collect(&f->collector, T0 + 10000);

	record = find_step(f->sink.steps, f->sink.step_count, 42, 0);
	assert_int_equal(record->wire_count, 2);
	assert_string_equal(record->wire[0].procedure, "READ");
	assert_int_equal(record->wire[0].device, 53);
	assert_int_equal(record->wire[0].stats.rpcs, 8);
	assert_int_equal(record->wire[0].stats.bytes_received, 8000);
	assert_string_equal(record->wire[1].procedure, "WRITE");
	assert_int_equal(record->wire[1].stats.rpcs, 2);
	assert_int_equal(f->sink.node_wire_count, 2);
	assert_int_equal(f->sink.node_wire[0].owner, VNFS_WIRE_BACKGROUND);
	assert_string_equal(f->sink.node_wire[0].row.procedure, "GETATTR");
	assert_int_equal(f->sink.node_wire[0].row.stats.rpcs, 4);
	assert_int_equal(f->sink.node_wire[1].owner, VNFS_WIRE_UNATTRIBUTED);
	assert_int_equal(f->sink.node_wire[1].row.stats.rpcs, 1);

	vnfs_steps_release(&f->steps, slot42, record, false);
	assert_int_equal(f->fake.forgotten_count, 1);
	assert_int_equal(f->fake.forgotten[0], 4200);
}

/* The step records of report_dir/<job>/node1.json (report_dir is
 * directory/reports), read back; returns how many. */
static size_t read_report_file(struct fixture *f, uint32_t job_id,
			       struct vnfs_step_record *steps, size_t capacity)
{
	struct json_object *report, *array;
	char path[192], error[256];
	size_t count;

	snprintf(path, sizeof(path), "%s/reports/%u/node1.json", f->directory, job_id);
	report = json_object_from_file(path);
	assert_non_null(report);
	assert_true(json_object_object_get_ex(report, "steps", &array));
	count = json_object_array_length(array);
	assert_true(count <= capacity);
	for (size_t i = 0; i < count; i++)
		assert_int_equal(vnfs_step_record_from_json(json_object_array_get_idx(array, i),
							    &steps[i], error, sizeof(error)),
				 0);
	json_object_put(report);
	return count;
}

static void test_finish_reports_the_job_and_releases_only_its_slots(void **state)
{
	struct fixture *f = *state;
	uint32_t slot0 = register_step(f, 42, 0, 4200, "/sys/fs/cgroup/job_42/step_0");
	uint32_t slot1 = register_step(f, 42, 1, 4201, "/sys/fs/cgroup/job_42/step_1");
	uint32_t slot43 = register_step(f, 43, 0, 4300, "/sys/fs/cgroup/job_43/step_0");
	const struct recorded_job *job;
	struct vnfs_step_record files[4];
	struct vnfs_owned_job answer = { 0 };
	char error[256], path[192];
	size_t count;

	fake_count_writes(&f->fake, slot0, 8, MIB);
	fake_count_writes(&f->fake, slot1, 4, 4096);
	fake_count_writes(&f->fake, slot43, 1, 512);
	vnfs_collector_collect(&f->collector, T0 + 10000);
	vnfs_collector_collect(&f->collector, T0 + 11000); /* every copy settled */
	/* Counted since: the final read has both, the one whose activity has
	 * not moved yet too. */
	fake_count_writes_half_way(&f->fake, slot0, 2, MIB);
	fake_count_writes(&f->fake, slot1, 1, 4096);
	assert_int_equal(vnfs_collector_finish_job(&f->collector, slurm_job(42), "", T0 + 12000, &answer,
						   error, sizeof(error)),
			 0);
	/* FINISH's reply: the job with the same final counts as the summary. */
	assert_int_equal(answer.job_id, 42);
	assert_int_equal(answer.uid, 1042);
	assert_int_equal(answer.step_count, 2);
	for (size_t i = 0; i < answer.step_count; i++) {
		if (answer.steps[i].step_id == 0)
			assert_writes(&answer.steps[i], 10, 10 * MIB);
		else
			assert_writes(&answer.steps[i], 5, 20480);
	}
	vnfs_owned_job_free(&answer);

	assert_int_equal(f->sink.jobs_finished, 1);
	job = &f->sink.jobs[0];
	assert_int_equal(job->job_id, 42);
	assert_int_equal(job->uid, 1042);
	assert_int_equal(job->step_count, 2);
	assert_writes(find_step(job->steps, job->step_count, 42, 0), 10, 10 * MIB);
	assert_writes(find_step(job->steps, job->step_count, 42, 1), 5, 20480);
	assert_true(find_step(job->steps, job->step_count, 42, 0)->finished);
	assert_true(find_step(job->steps, job->step_count, 42, 1)->finished);

	/* Its slots, and only its, given back: cgroups unregistered, then reset. */
	assert_int_equal(f->fake.unregistered_count, 2);
	assert_int_equal(f->fake.unregistered[0], 4200);
	assert_int_equal(f->fake.unregistered[1], 4201);
	assert_int_equal(f->fake.reset_count, 2);
	assert_int_equal(f->fake.resets[0], slot0);
	assert_int_equal(f->fake.resets[1], slot1);
	assert_int_equal(registry_state(f->registry, slot0), VNFS_STEP_FREE);
	assert_int_equal(registry_state(f->registry, slot1), VNFS_STEP_FREE);
	assert_int_equal(registry_state(f->registry, slot43), VNFS_STEP_RUNNING);
	assert_int_equal(f->registry->used, 1);

	/* The report file, written before FINISH returned, has the final counts. */
	count = read_report_file(f, 42, files, 4);
	assert_int_equal(count, 2);
	for (size_t i = 0; i < count; i++) {
		assert_int_equal(files[i].job_id, 42);
		if (files[i].step_id == 0)
			assert_writes(&files[i], 10, 10 * MIB);
		else
			assert_writes(&files[i], 5, 20480);
		vnfs_step_record_free_arrays(&files[i]);
	}
	snprintf(path, sizeof(path), "%s/reports/42/node1.txt", f->directory);
	assert_true(file_exists(path));

	/* The next interval holds the other job alone. */
	vnfs_collector_collect(&f->collector, T0 + 20000);
	assert_int_equal(f->sink.step_count, 1);
	assert_writes(find_step(f->sink.steps, 1, 43, 0), 1, 512);
	assert_int_equal(f->sink.jobs_finished, 1);

	assert_int_equal(vnfs_collector_finish_job(&f->collector, slurm_job(42), "", T0 + 21000, &answer,
						   error, sizeof(error)),
			 -1);
	assert_string_equal(error, "job 42 is not known on this node");
}

static void test_ended_step_with_empty_cgroup_leaves_its_slot(void **state)
{
	struct fixture *f = *state;
	char empty[128], busy[128], empty43[128], kept[192];
	uint32_t slot0, slot1, slot43;
	const struct recorded_job *job;
	struct vnfs_owned_job answer = { 0 };
	char error[256];
	unsigned reads;

	make_cgroup(f, "job_42_step_0", 0, empty, sizeof(empty));
	make_cgroup(f, "job_42_step_1", 1, busy, sizeof(busy));
	make_cgroup(f, "job_43_step_0", 0, empty43, sizeof(empty43));
	slot0 = register_step(f, 42, 0, 4200, empty);
	slot1 = register_step(f, 42, 1, 4201, busy);
	slot43 = register_step(f, 43, 0, 4300, empty43); /* running: stays, empty or not */
	fake_count_writes(&f->fake, slot0, 8, MIB);
	fake_count_writes(&f->fake, slot1, 3, 4096);
	assert_int_equal(vnfs_registry_end(f->registry, slurm_step(42, 0), T0 + 5000), (int)slot0);
	assert_int_equal(vnfs_registry_end(f->registry, slurm_step(42, 1), T0 + 5000), (int)slot1);
	vnfs_collector_collect(&f->collector, T0 + 10000);

	/* Published from its slot, then moved out with its final counts. */
	assert_int_equal(f->sink.step_count, 3);
	assert_writes(find_step(f->sink.steps, 3, 42, 0), 8, 8388608);
	assert_int_equal(f->fake.unregistered_count, 1);
	assert_int_equal(f->fake.unregistered[0], 4200);
	assert_int_equal(f->fake.reset_count, 1);
	assert_int_equal(f->fake.resets[0], slot0);
	assert_int_equal(registry_state(f->registry, slot0), VNFS_STEP_FREE);
	assert_int_equal(registry_state(f->registry, slot1), VNFS_STEP_ENDED);
	assert_int_equal(registry_state(f->registry, slot43), VNFS_STEP_RUNNING);
	assert_int_equal(f->collector.ended.count, 1);
	snprintf(kept, sizeof(kept), "%s/ended/42.0.json", f->state_dir);
	assert_true(file_exists(kept));

	/* From the next interval on it comes from the ended steps, not its slot. */
	reads = f->fake.stats_reads[slot0];
	vnfs_collector_collect(&f->collector, T0 + 20000);
	assert_int_equal(f->fake.stats_reads[slot0], reads);
	assert_int_equal(f->sink.step_count, 3);
	assert_writes(find_step(f->sink.steps, 3, 42, 0), 8, 8388608);
	assert_writes(find_step(f->sink.steps, 3, 42, 1), 3, 12288);

	assert_int_equal(vnfs_collector_finish_job(&f->collector, slurm_job(42), "", T0 + 21000, &answer,
						   error, sizeof(error)),
			 0);
	/* FINISH's reply holds the kept step too. */
	assert_int_equal(answer.step_count, 2);
	vnfs_owned_job_free(&answer);
	assert_int_equal(f->sink.jobs_finished, 1);
	job = &f->sink.jobs[0];
	assert_int_equal(job->step_count, 2);
	assert_writes(find_step(job->steps, 2, 42, 0), 8, 8388608);
	assert_writes(find_step(job->steps, 2, 42, 1), 3, 12288);
	assert_true(find_step(job->steps, 2, 42, 0)->finished);
	assert_int_equal(job->end_time_ms, T0 + 5000);
	/* Only the slot it still held is given back now. */
	assert_int_equal(f->fake.unregistered_count, 2);
	assert_int_equal(f->fake.unregistered[1], 4201);
	assert_int_equal(f->fake.reset_count, 2);
	assert_int_equal(f->fake.resets[1], slot1);
	assert_int_equal(f->collector.ended.count, 0);
	assert_false(file_exists(kept));
	assert_int_equal(f->registry->used, 1);
}

static void test_abandoned_job_is_finished_after_the_grace_period(void **state)
{
	struct fixture *f = *state;
	char busy[128];
	uint32_t slot;

	make_cgroup(f, "job_42_step_0", 1, busy, sizeof(busy));
	slot = register_step(f, 42, 0, 4200, busy);
	fake_count_writes(&f->fake, slot, 8, MIB);
	assert_int_equal(vnfs_registry_end(f->registry, slurm_step(42, 0), T0 + 5000), (int)slot);
	/* grace 60 s: not yet at 59.999 s after the step's end... */
	vnfs_collector_collect(&f->collector, T0 + 5000 + 59999);
	assert_int_equal(f->sink.jobs_finished, 0);
	assert_int_equal(registry_state(f->registry, slot), VNFS_STEP_ENDED);
	/* ...finished at 60 s, with its counts, and its slot given back. */
	vnfs_collector_collect(&f->collector, T0 + 5000 + 60000);
	assert_int_equal(f->sink.jobs_finished, 1);
	assert_int_equal(f->sink.jobs[0].job_id, 42);
	assert_writes(find_step(f->sink.jobs[0].steps, 1, 42, 0), 8, 8388608);
	assert_int_equal(registry_state(f->registry, slot), VNFS_STEP_FREE);
	assert_int_equal(f->fake.unregistered_count, 1);
	assert_int_equal(f->fake.unregistered[0], 4200);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_interval_holds_each_steps_own_counts, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_missed_returns_are_summed_per_function, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_records_carry_their_tags_one_copy_per_list,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_slot_is_copied_only_when_its_activity_moved,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_wire_rows_go_to_their_steps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_breakdown_rows_go_to_their_steps, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_finish_reports_the_job_and_releases_only_its_slots, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ended_step_with_empty_cgroup_leaves_its_slot,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_abandoned_job_is_finished_after_the_grace_period, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
