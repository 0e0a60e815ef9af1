/*
 * history_fixtures.c — synthetic step records with known numbers (see the
 * header for exactly what each holds).
 */
#include <stdio.h>
#include <string.h>

#include "tests/unit/history_fixtures.h"

void history_set_operation(struct history_step *step, enum vnfs_operation operation,
			   uint64_t count, uint64_t errors, uint64_t bytes_each, int bucket)
{
	struct vnfs_operation_stats *stats = &step->stats.operations[operation];
	memset(stats, 0, sizeof(*stats));
	stats->count = count;
	stats->errors = errors;
	stats->bytes = count * bytes_each;
	stats->time_ns = count * (3ull << bucket) / 2;
	stats->latency_histogram[bucket] = count;
}

void history_step_init(struct history_step *step, uint32_t job_id, uint32_t step_id,
		       uint32_t uid, const char *user, const char *node, int64_t start_ms,
		       uint64_t scale)
{
	struct vnfs_step_record *r = &step->record;
	char step_name[16];

	memset(step, 0, sizeof(*step));
	vnfs_record_identify_slurm(r, job_id, step_id);
	r->uid = uid;
	snprintf(r->user, sizeof(r->user), "%s", user);
	snprintf(r->node, sizeof(r->node), "%s", node);
	r->cgroup_id = 1000u + job_id * 16u + (step_id & 0xf);
	snprintf(r->cgroup_path, sizeof(r->cgroup_path),
		 "/sys/fs/cgroup/system.slice/slurmstepd.scope/job_%u/step_%s", job_id,
		 vnfs_step_name(step_id, step_name, sizeof(step_name)));
	vnfs_tags_init(&step->tags);
	char error[128];
	if (vnfs_tags_set(&step->tags, "PROJECT_NAME", "alpha", error, sizeof(error)) < 0)
		fprintf(stderr, "fixture: %s\n", error);
	r->tags = &step->tags;
	r->start_time_ms = start_ms;
	r->end_time_ms = 0;
	r->sample_time_ms = start_ms + 60000;
	r->finished = false;
	r->stats = &step->stats;

	const uint64_t mib = 1 << 20;
	history_set_operation(step, VNFS_OP_READ, 10 * scale, 0, mib, 20);
	history_set_operation(step, VNFS_OP_WRITE, 5 * scale, 0, mib, 21);
	history_set_operation(step, VNFS_OP_GETATTR, 20 * scale, 0, 0, 14);
	history_set_operation(step, VNFS_OP_OPEN, 2 * scale, 0, 0, 16);
	history_set_operation(step, VNFS_OP_CLOSE, 2 * scale, 0, 0, 12);
	step->stats.request_size_histogram[VNFS_DIRECTION_READ][20] = 10 * scale;
	step->stats.request_size_histogram[VNFS_DIRECTION_WRITE][20] = 5 * scale;

	snprintf(step->processes[0].comm, VNFS_COMM_LEN, "python3");
	step->processes[0].stats = (struct vnfs_process_stats){
		.read_ops = 10 * scale, .read_bytes = 10 * scale * mib, .other_ops = 24 * scale };
	snprintf(step->processes[1].comm, VNFS_COMM_LEN, "dd");
	step->processes[1].stats = (struct vnfs_process_stats){
		.write_ops = 5 * scale, .write_bytes = 5 * scale * mib };
	r->processes = step->processes;
	r->process_count = 2;

	struct vnfs_mount_record *m = &step->mounts[0];
	m->device = 42;
	snprintf(m->mount_point, sizeof(m->mount_point), "/mnt/nfs");
	snprintf(m->source, sizeof(m->source), "server:/export");
	snprintf(m->version, sizeof(m->version), "4.2");
	m->rsize = 1048576;
	m->wsize = 1048576;
	m->stats = (struct vnfs_mount_stats){ .ops = 39 * scale, .errors = 0,
					       .time_ns = 0, .read_bytes = 10 * scale * mib,
					       .write_bytes = 5 * scale * mib };
	for (int op = 0; op < VNFS_OP_COUNT; op++)
		m->stats.time_ns += step->stats.operations[op].time_ns;
	r->mounts = step->mounts;
	r->mount_count = 1;
}

void history_step_finish(struct history_step *step, int64_t end_ms)
{
	step->record.end_time_ms = end_ms;
	step->record.sample_time_ms = end_ms;
	step->record.finished = true;
}
