/*
 * rows.c — gathering step records and summing them into report rows.
 *
 * The same job step can arrive from several sources (live from the helper,
 * from SQLite, from a report file) and every source may hold an older
 * sample: counters are cumulative, so the latest sample of each job, step and
 * node is the whole truth and the others are dropped, never added.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/job_report/rows.h"

void report_set_init(struct report_set *set)
{
	memset(set, 0, sizeof(*set));
}

void report_set_free(struct report_set *set)
{
	for (size_t i = 0; i < set->count; i++)
		vnfs_step_record_free_arrays(&set->records[i]);
	free(set->records);
	report_set_init(set);
}

static int grow(struct report_set *set)
{
	if (set->count < set->capacity)
		return 0;
	size_t capacity = set->capacity > 0 ? set->capacity * 2 : 16;
	struct vnfs_step_record *records = realloc(set->records, capacity * sizeof(*records));
	if (records == NULL)
		return -1;
	set->records = records;
	set->capacity = capacity;
	return 0;
}

int report_set_take(struct report_set *set, struct vnfs_step_record *record)
{
	if (grow(set) < 0) {
		vnfs_step_record_free_arrays(record);
		return -1;
	}
	if (record->stats == NULL) {
		struct vnfs_step_stats *stats = calloc(1, sizeof(*stats));
		if (stats == NULL) {
			vnfs_step_record_free_arrays(record);
			return -1;
		}
		record->stats = stats;
	}
	if (record->workload.job[0] == '\0')
		vnfs_workload_of_slurm_step(&record->workload, record->job_id, record->step_id);
	set->records[set->count++] = *record;
	record->tags = vnfs_tags_none();
	record->stats = NULL;
	record->processes = NULL;
	record->mounts = NULL;
	record->wire = NULL;
	record->process_count = 0;
	record->mount_count = 0;
	record->wire_count = 0;
	return 0;
}

int report_set_add(struct report_set *set, const struct vnfs_step_record *record)
{
	struct vnfs_step_record copy;

	if (vnfs_step_record_copy(&copy, record) < 0)
		return -1;
	return report_set_take(set, &copy);
}

/* By workload (vnfs_workload_compare: a Slurm job's steps in sacct's
 * order) and node; the latest sample (finished before running) first. */
static int compare_records(const void *a, const void *b)
{
	const struct vnfs_step_record *x = a, *y = b;
	int by_workload = vnfs_workload_compare(&x->workload, &y->workload);
	if (by_workload != 0)
		return by_workload;
	int by_node = strcmp(x->node, y->node);
	if (by_node != 0)
		return by_node;
	if (x->finished != y->finished)
		return x->finished ? -1 : 1;
	if (x->sample_time_ms != y->sample_time_ms)
		return x->sample_time_ms > y->sample_time_ms ? -1 : 1;
	return 0;
}

static void drop_older_samples(struct report_set *set)
{
	if (set->count == 0)
		return;
	qsort(set->records, set->count, sizeof(*set->records), compare_records);
	size_t kept = 1;
	for (size_t i = 1; i < set->count; i++) {
		struct vnfs_step_record *previous = &set->records[kept - 1];
		struct vnfs_step_record *record = &set->records[i];
		if (vnfs_workload_equal(&record->workload, &previous->workload) &&
		    strcmp(record->node, previous->node) == 0) {
			vnfs_step_record_free_arrays(record);
			continue;
		}
		set->records[kept++] = *record;
	}
	set->count = kept;
}

/* ---- merging into a row ---------------------------------------------- */

static void add_node(struct report_row *row, const char *node)
{
	/* Records arrive sorted by node within a step, not within a job. */
	size_t length = strlen(node);
	/* "" names no node, and strstr finds it everywhere without moving on:
	 * a hostile report file's "node": "" once hung vnfs-report here. */
	if (length == 0)
		return;
	const char *at = row->nodes;
	while ((at = strstr(at, node)) != NULL) {
		bool starts = at == row->nodes || at[-1] == ',';
		bool ends = at[length] == '\0' || at[length] == ',';
		if (starts && ends)
			return;
		at += length;
	}
	size_t used = strlen(row->nodes);
	snprintf(row->nodes + used, sizeof(row->nodes) - used, "%s%s", used > 0 ? "," : "", node);
}

static int compare_nodes(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void sort_nodes(struct report_row *row)
{
	char copy[sizeof(row->nodes)];
	char *names[64];
	size_t count = 0;
	snprintf(copy, sizeof(copy), "%s", row->nodes);
	for (char *save = NULL, *name = strtok_r(copy, ",", &save); name != NULL && count < 64;
	     name = strtok_r(NULL, ",", &save))
		names[count++] = name;
	qsort(names, count, sizeof(names[0]), compare_nodes);
	row->nodes[0] = '\0';
	for (size_t i = 0; i < count; i++)
		add_node(row, names[i]);
}

static int merge_processes(struct report_row *row, const struct vnfs_step_record *record)
{
	for (size_t p = 0; p < record->process_count; p++) {
		const struct vnfs_process_record *from = &record->processes[p];
		struct vnfs_process_record *to = NULL;
		for (size_t i = 0; i < row->process_count && to == NULL; i++)
			if (strcmp(row->processes[i].comm, from->comm) == 0)
				to = &row->processes[i];
		if (to == NULL) {
			struct vnfs_process_record *grown = realloc(
				row->processes, (row->process_count + 1) * sizeof(*grown));
			if (grown == NULL)
				return -1;
			row->processes = grown;
			to = &row->processes[row->process_count++];
			memset(to, 0, sizeof(*to));
			snprintf(to->comm, sizeof(to->comm), "%s", from->comm);
		}
		to->stats.read_ops += from->stats.read_ops;
		to->stats.read_bytes += from->stats.read_bytes;
		to->stats.write_ops += from->stats.write_ops;
		to->stats.write_bytes += from->stats.write_bytes;
		to->stats.other_ops += from->stats.other_ops;
	}
	return 0;
}

static int merge_mounts(struct report_row *row, const struct vnfs_step_record *record)
{
	for (size_t m = 0; m < record->mount_count; m++) {
		const struct vnfs_mount_record *from = &record->mounts[m];
		struct vnfs_mount_record *to = NULL;
		/* Devices differ between nodes; the export and mount point do not. */
		for (size_t i = 0; i < row->mount_count && to == NULL; i++)
			if (strcmp(row->mounts[i].source, from->source) == 0 &&
			    strcmp(row->mounts[i].mount_point, from->mount_point) == 0)
				to = &row->mounts[i];
		if (to == NULL) {
			struct vnfs_mount_record *grown =
				realloc(row->mounts, (row->mount_count + 1) * sizeof(*grown));
			if (grown == NULL)
				return -1;
			row->mounts = grown;
			to = &row->mounts[row->mount_count++];
			*to = *from;
			memset(&to->stats, 0, sizeof(to->stats));
		}
		if (to->rsize == 0)
			to->rsize = from->rsize;
		if (to->wsize == 0)
			to->wsize = from->wsize;
		to->stats.ops += from->stats.ops;
		to->stats.errors += from->stats.errors;
		to->stats.time_ns += from->stats.time_ns;
		to->stats.read_bytes += from->stats.read_bytes;
		to->stats.write_bytes += from->stats.write_bytes;
	}
	return 0;
}

/* Devices differ between nodes, so rows are one per mount point and
 * procedure (and version: NFSv3's READ is not NFSv4's). */
static bool same_wire_row(const struct vnfs_wire_record *x, const struct vnfs_wire_record *y)
{
	return x->version == y->version && strcmp(x->mount_point, y->mount_point) == 0 &&
	       strcmp(x->procedure, y->procedure) == 0;
}

static int merge_wire(struct report_row *row, const struct vnfs_step_record *record)
{
	for (size_t w = 0; w < record->wire_count; w++) {
		const struct vnfs_wire_record *from = &record->wire[w];
		struct vnfs_wire_record *to = NULL;
		for (size_t i = 0; i < row->wire_count && to == NULL; i++)
			if (same_wire_row(&row->wire[i], from))
				to = &row->wire[i];
		if (to == NULL) {
			struct vnfs_wire_record *grown =
				realloc(row->wire, (row->wire_count + 1) * sizeof(*grown));
			if (grown == NULL)
				return -1;
			row->wire = grown;
			to = &row->wire[row->wire_count++];
			*to = *from;
			continue;
		}
		vnfs_wire_stats_add(&to->stats, &from->stats);
	}
	return 0;
}

static int add_record(struct report_row *row, const struct vnfs_step_record *record)
{
	if (row->record_count == 0) {
		row->uid = record->uid;
		snprintf(row->user, sizeof(row->user), "%s", record->user);
		row->start_time_ms = record->start_time_ms;
		vnfs_tags_init(&row->tags);
	}
	const struct vnfs_step_record **grown =
		realloc(row->records, (row->record_count + 1) * sizeof(*grown));
	if (grown == NULL)
		return -1;
	row->records = grown;
	row->records[row->record_count++] = record;

	add_node(row, record->node);
	const char *name, *value;
	char ignored[160];
	for (unsigned i = 0; vnfs_tags_get(record->tags, i, &name, &value); i++)
		if (vnfs_tags_find(&row->tags, name) == NULL)
			vnfs_tags_set(&row->tags, name, value, ignored, sizeof(ignored));
	if (record->start_time_ms < row->start_time_ms)
		row->start_time_ms = record->start_time_ms;
	if (!record->finished)
		row->running = true;
	if (record->end_time_ms > row->end_time_ms)
		row->end_time_ms = record->end_time_ms;
	if (record->sample_time_ms > row->sample_time_ms)
		row->sample_time_ms = record->sample_time_ms;
	if (record->stats != NULL)
		vnfs_step_stats_add(&row->stats, record->stats);
	if (merge_processes(row, record) < 0 || merge_mounts(row, record) < 0 ||
	    merge_wire(row, record) < 0)
		return -1;
	return 0;
}

static int compare_processes_by_bytes(const void *a, const void *b)
{
	const struct vnfs_process_record *x = a, *y = b;
	uint64_t bx = x->stats.read_bytes + x->stats.write_bytes;
	uint64_t by = y->stats.read_bytes + y->stats.write_bytes;
	if (bx != by)
		return bx > by ? -1 : 1;
	uint64_t ox = x->stats.read_ops + x->stats.write_ops + x->stats.other_ops;
	uint64_t oy = y->stats.read_ops + y->stats.write_ops + y->stats.other_ops;
	if (ox != oy)
		return ox > oy ? -1 : 1;
	return strcmp(x->comm, y->comm);
}

/* By mount point, then most RPCs first: the order of the wire table. */
static int compare_wire_by_rpcs(const void *a, const void *b)
{
	const struct vnfs_wire_record *x = a, *y = b;
	int by_mount = strcmp(x->mount_point, y->mount_point);
	if (by_mount != 0)
		return by_mount;
	if (x->stats.rpcs != y->stats.rpcs)
		return x->stats.rpcs > y->stats.rpcs ? -1 : 1;
	int by_name = strcmp(x->procedure, y->procedure);
	if (by_name != 0)
		return by_name;
	return (int)x->version - (int)y->version;
}

static void finish_row(struct report_row *row)
{
	if (row->running)
		row->end_time_ms = 0;
	sort_nodes(row);
	if (row->process_count > 1)
		qsort(row->processes, row->process_count, sizeof(*row->processes),
		      compare_processes_by_bytes);
	if (row->wire_count > 1)
		qsort(row->wire, row->wire_count, sizeof(*row->wire), compare_wire_by_rpcs);
}

int report_build_rows(struct report_set *set, struct report_row **rows_out, size_t *count_out)
{
	drop_older_samples(set);
	*rows_out = NULL;
	*count_out = 0;
	if (set->count == 0)
		return 0;

	/* At most one job row and one step row per record. */
	struct report_row *rows = calloc(set->count * 2, sizeof(*rows));
	if (rows == NULL)
		return -1;
	size_t count = 0;
	for (size_t first = 0; first < set->count;) {
		size_t end = first;
		const struct vnfs_workload *first_workload = &set->records[first].workload;
		while (end < set->count &&
		       vnfs_workload_same_job(&set->records[end].workload, first_workload))
			end++;
		struct report_row *job = &rows[count++];
		job->workload = *first_workload;
		job->workload.part[0] = '\0';
		for (size_t i = first; i < end; i++)
			if (add_record(job, &set->records[i]) < 0)
				goto fail;
		finish_row(job);

		for (size_t i = first; i < end;) {
			struct report_row *step = &rows[count++];
			step->workload = set->records[i].workload;
			step->is_step = true;
			for (; i < end &&
			       vnfs_workload_equal(&set->records[i].workload, &step->workload);
			     i++)
				if (add_record(step, &set->records[i]) < 0)
					goto fail;
			finish_row(step);
		}
		first = end;
	}
	*rows_out = rows;
	*count_out = count;
	return 0;
fail:
	report_rows_free(rows, count);
	return -1;
}

void report_rows_free(struct report_row *rows, size_t count)
{
	if (rows == NULL)
		return;
	for (size_t i = 0; i < count; i++) {
		free(rows[i].processes);
		free(rows[i].mounts);
		free(rows[i].wire);
		free(rows[i].records);
	}
	free(rows);
}

const char *report_workload_id(const struct vnfs_workload *workload, char *buf, size_t size)
{
	const char *source = vnfs_workload_source_name(workload->source);
	bool has_part = workload->part[0] != '\0';

	if (workload->source == VNFS_SOURCE_SLURM)
		snprintf(buf, size, "%s%s%s", workload->job, has_part ? "." : "", workload->part);
	else
		snprintf(buf, size, "%s:%s%s%s", source != NULL ? source : "?", workload->job,
			 has_part ? "." : "", workload->part);
	return buf;
}

const char *report_row_id(const struct report_row *row, char *buf, size_t size)
{
	return report_workload_id(&row->workload, buf, size);
}

uint64_t report_metadata_ops(const struct vnfs_step_stats *stats)
{
	uint64_t sum = 0;
	for (int op = 0; op < VNFS_OP_COUNT; op++)
		if (vnfs_operation_is_metadata[op])
			sum += stats->operations[op].count;
	return sum;
}

uint64_t report_metadata_time_ns(const struct vnfs_step_stats *stats)
{
	uint64_t sum = 0;
	for (int op = 0; op < VNFS_OP_COUNT; op++)
		if (vnfs_operation_is_metadata[op])
			sum += stats->operations[op].time_ns;
	return sum;
}

uint64_t report_total_time_ns(const struct vnfs_step_stats *stats)
{
	uint64_t sum = 0;
	for (int op = 0; op < VNFS_OP_COUNT; op++)
		sum += stats->operations[op].time_ns;
	return sum;
}

uint64_t report_total_ops(const struct vnfs_step_stats *stats)
{
	uint64_t sum = 0;
	for (int op = 0; op < VNFS_OP_COUNT; op++)
		sum += stats->operations[op].count;
	return sum;
}

uint64_t report_total_errors(const struct vnfs_step_stats *stats)
{
	uint64_t sum = 0;
	for (int op = 0; op < VNFS_OP_COUNT; op++)
		sum += stats->operations[op].errors;
	return sum;
}

bool report_latency_known(const struct vnfs_operation_stats *stats)
{
	if (stats->count == 0)
		return true;
	for (int bucket = 0; bucket < VNFS_LATENCY_BUCKETS; bucket++)
		if (stats->latency_histogram[bucket] > 0)
			return true;
	return false;
}

bool report_metadata_latency_known(const struct vnfs_step_stats *stats)
{
	for (int op = 0; op < VNFS_OP_COUNT; op++)
		if (vnfs_operation_is_metadata[op] && !report_latency_known(&stats->operations[op]))
			return false;
	return true;
}

uint64_t report_metadata_quantile(const struct vnfs_step_stats *stats, double q)
{
	__u64 merged[VNFS_LATENCY_BUCKETS] = { 0 };
	for (int op = 0; op < VNFS_OP_COUNT; op++)
		if (vnfs_operation_is_metadata[op])
			for (int b = 0; b < VNFS_LATENCY_BUCKETS; b++)
				merged[b] += stats->operations[op].latency_histogram[b];
	return vnfs_histogram_quantile(merged, VNFS_LATENCY_BUCKETS, q);
}
