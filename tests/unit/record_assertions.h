/*
 * record_assertions.h — cmocka assertions on step records that several unit
 * tests share (test_record_json.c, test_reply.c).  Header-only: include it
 * after <cmocka.h>.
 */
#ifndef VNFS_TESTS_RECORD_ASSERTIONS_H
#define VNFS_TESTS_RECORD_ASSERTIONS_H

#include "lib/record.h"

/* a and b hold the same values, field by field (their arrays' contents, not
 * their addresses). */
static inline void assert_same_record(const struct vnfs_step_record *a,
				      const struct vnfs_step_record *b)
{
	assert_int_equal(a->workload.source, b->workload.source);
	assert_string_equal(a->workload.job, b->workload.job);
	assert_string_equal(a->workload.part, b->workload.part);
	assert_int_equal(a->job_id, b->job_id);
	assert_int_equal(a->step_id, b->step_id);
	assert_int_equal(a->uid, b->uid);
	assert_string_equal(a->user, b->user);
	assert_string_equal(a->node, b->node);
	assert_int_equal(a->cgroup_id, b->cgroup_id);
	assert_string_equal(a->cgroup_path, b->cgroup_path);
	assert_true(vnfs_tags_equal(a->tags, b->tags));
	assert_int_equal(a->start_time_ms, b->start_time_ms);
	assert_int_equal(a->end_time_ms, b->end_time_ms);
	assert_int_equal(a->sample_time_ms, b->sample_time_ms);
	assert_int_equal(a->finished, b->finished);
	assert_memory_equal(a->stats, b->stats, sizeof(*a->stats));
	assert_int_equal(a->process_count, b->process_count);
	for (size_t i = 0; i < a->process_count; i++) {
		assert_string_equal(a->processes[i].comm, b->processes[i].comm);
		assert_memory_equal(&a->processes[i].stats, &b->processes[i].stats,
				    sizeof(a->processes[i].stats));
	}
	assert_int_equal(a->mount_count, b->mount_count);
	for (size_t i = 0; i < a->mount_count; i++) {
		assert_int_equal(a->mounts[i].device, b->mounts[i].device);
		assert_string_equal(a->mounts[i].mount_point, b->mounts[i].mount_point);
		assert_string_equal(a->mounts[i].source, b->mounts[i].source);
		assert_string_equal(a->mounts[i].version, b->mounts[i].version);
		assert_int_equal(a->mounts[i].rsize, b->mounts[i].rsize);
		assert_int_equal(a->mounts[i].wsize, b->mounts[i].wsize);
		assert_memory_equal(&a->mounts[i].stats, &b->mounts[i].stats,
				    sizeof(a->mounts[i].stats));
	}
}

#endif /* VNFS_TESTS_RECORD_ASSERTIONS_H */
