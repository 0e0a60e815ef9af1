/*
 * metrics.c — renders vnfs's counters in the Prometheus text format.
 *
 * One rendering is up to tens of megabytes for a thousand steps and must
 * take under 50 ms, so text is assembled with memcpy and hand-formatted
 * integers (no printf per sample), each step's label set is escaped once and
 * reused by every sample, the buffer asks for huge pages, and histograms
 * expose a fixed subset of the kernel's log2 buckets.  Samples of one family
 * are contiguous, as the format requires.
 *
 * Ended steps (end_time_ms set) keep their last counts here for
 * grace_period_s, even after the collector forgets them, so a short job's
 * final numbers are still scraped.
 *
 * max_series bounds the per-step and unattributed series by cutting the least
 * important first, and counts what it cut: every step's core counters
 * (operations, errors, bytes) are always shown, then come, while the budget
 * lasts, the steps' histograms, the unattributed series, the node's RPCs of
 * no workload (vnfs_node_rpc*), the per-mount series, the per-RPC counters (mount x procedure), the per-RPC histograms
 * and last the per-process series (the most numerous, and their names are
 * chosen by users).  Once one series is cut every less important one is cut
 * too, so a series never appears while a more important one is missing.
 *
 * The per-RPC series (vnfs_rpc_*) are labelled by mount and procedure only:
 * rows a record keeps apart (another device at the same mount point, a v3
 * and a v4 client whose mount was not learned) but that would have the same
 * label set are summed, as the same label set twice would make Prometheus
 * reject the whole scrape.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "helper/outputs/metrics.h"
#include "lib/escape.h"

/* Ended steps remembered at most; beyond it the earliest-ended is forgotten. */
#define RETAINED_STEPS_MAX VNFS_MAX_STEPS

/*
 * Exposed histogram bounds.  Kernel bucket i holds [2^i, 2^(i+1)), so the
 * cumulative count through bucket i is exactly "observations < 2^(i+1)".
 * Latency: every other power of two from 2^10 ns (1.024 us) to 2^34 ns
 * (17.2 s), a factor of 4 per bucket: 13 buckets + +Inf.  Request size:
 * every power of two from 1 KiB to 16 MiB; sizes are integers, so the bound
 * is written 2^(i+1) - 1 (a 4096-byte request is in le="8191", not "4095").
 */
#define LATENCY_FIRST_INDEX 9
#define LATENCY_LAST_INDEX 33
#define LATENCY_INDEX_STEP 2
#define LATENCY_EXPOSED (((LATENCY_LAST_INDEX - LATENCY_FIRST_INDEX) / LATENCY_INDEX_STEP) + 1)
#define SIZE_FIRST_INDEX 9
#define SIZE_LAST_INDEX 23
#define SIZE_EXPOSED (SIZE_LAST_INDEX - SIZE_FIRST_INDEX + 1)
#define BOUND_TEXT 24

_Static_assert(LATENCY_LAST_INDEX < VNFS_LATENCY_BUCKETS, "latency bounds beyond the map");
_Static_assert(SIZE_LAST_INDEX < VNFS_SIZE_BUCKETS, "size bounds beyond the map");

static const char *const direction_names[VNFS_DIRECTIONS] = {
	[VNFS_DIRECTION_READ] = "read",
	[VNFS_DIRECTION_WRITE] = "write",
};


struct vnfs_metrics {
	uint32_t grace_period_ms;
	uint32_t max_series; /* 0: no bound */
	size_t tag_label_count;
	char tag_names[VNFS_CONFIG_MAX_LIST][VNFS_TAG_NAME_MAX + 1];
	char tag_label_names[VNFS_CONFIG_MAX_LIST][VNFS_TAG_NAME_MAX + 8];

	/* Steps kept past their end for the grace period, each a copy owning
	 * its arrays (vnfs_step_record_copy). */
	struct vnfs_step_record *retained;
	size_t retained_count;
	size_t retained_capacity;

	uint64_t series_capped;
	size_t last_length; /* capacity hint for the next rendering */

	/* Formatted once: bounds of the exposed buckets, ",op=..." labels. */
	char latency_bounds[LATENCY_EXPOSED][BOUND_TEXT];
	char size_bounds[SIZE_EXPOSED][BOUND_TEXT];
	char operation_labels[VNFS_OP_COUNT][48];
	size_t operation_label_lengths[VNFS_OP_COUNT];
	char direction_labels[VNFS_DIRECTIONS][32];
};

/* ---- text assembly ---------------------------------------------------- */

struct text {
	char *data;
	size_t length;
	size_t capacity;
	bool failed;
};

/*
 * A rendering writes tens of megabytes into fresh memory; faulting it in
 * 4 KiB at a time was half the cost of a rendering.  Where transparent huge
 * pages are on "madvise", ask for them over the whole 2 MiB chunks of the
 * buffer (advice only: failure changes nothing).
 */
static void prefer_huge_pages(char *data, size_t size)
{
	const uintptr_t huge = 2u << 20;
	uintptr_t start = ((uintptr_t)data + huge - 1) & ~(huge - 1);
	uintptr_t end = ((uintptr_t)data + size) & ~(huge - 1);

	if (end > start)
		madvise((void *)start, end - start, MADV_HUGEPAGE);
}

static bool text_reserve(struct text *text, size_t more)
{
	if (text->failed)
		return false;
	if (text->length + more <= text->capacity)
		return true;
	size_t capacity = text->capacity ? text->capacity : 4096;
	while (capacity < text->length + more)
		capacity *= 2;
	char *data = realloc(text->data, capacity);
	if (!data) {
		text->failed = true;
		return false;
	}
	text->data = data;
	text->capacity = capacity;
	prefer_huge_pages(data, capacity);
	return true;
}

static inline void append(struct text *text, const char *bytes, size_t size)
{
	if (text->length + size > text->capacity && !text_reserve(text, size))
		return;
	memcpy(text->data + text->length, bytes, size);
	text->length += size;
}

static inline void append_string(struct text *text, const char *string)
{
	append(text, string, strlen(string));
}

static inline void append_u64(struct text *text, uint64_t value)
{
	char digits[20];
	size_t count = 0;

	do {
		digits[sizeof(digits) - ++count] = (char)('0' + value % 10);
		value /= 10;
	} while (value);
	append(text, digits + sizeof(digits) - count, count);
}

/* Nanoseconds as exact decimal seconds: 1500 -> "0.0000015". */
static void append_seconds(struct text *text, uint64_t nanoseconds)
{
	char fraction[10];
	uint64_t rest = nanoseconds % 1000000000u;
	int digits = 9;

	append_u64(text, nanoseconds / 1000000000u);
	if (rest == 0)
		return;
	while (rest % 10 == 0) {
		rest /= 10;
		digits--;
	}
	fraction[0] = '.';
	for (int i = digits; i >= 1; i--) {
		fraction[i] = (char)('0' + rest % 10);
		rest /= 10;
	}
	append(text, fraction, (size_t)digits + 1);
}

static void append_piece(void *context, const char *bytes, size_t length)
{
	append(context, bytes, length);
}

/*
 * A label value as the text format wants it (lib/escape.h): backslash,
 * double quote and newline escaped, and valid UTF-8, which Prometheus
 * requires.  Process names are canonical text already; a path or any other
 * value that is not valid UTF-8 is written in its canonical form, so the
 * series stays distinct and readable instead of a lossy '?'.
 */
static void append_label_value(struct text *text, const char *value, size_t size)
{
	vnfs_prometheus_label_write(value, strnlen(value, size), append_piece, text);
}

static void append_header(struct text *text, const char *name, const char *type,
			  const char *help)
{
	append_string(text, "# HELP ");
	append_string(text, name);
	append(text, " ", 1);
	append_string(text, help);
	append_string(text, "\n# TYPE ");
	append_string(text, name);
	append(text, " ", 1);
	append_string(text, type);
	append(text, "\n", 1);
}

/* Starts "name{labels" (the caller adds more labels, then a value). */
static inline void sample_begin(struct text *text, const char *name, size_t name_length,
				const char *labels, size_t labels_length)
{
	append(text, name, name_length);
	append(text, "{", 1);
	append(text, labels, labels_length);
}

static inline void sample_end(struct text *text, uint64_t value)
{
	append(text, "} ", 2);
	append_u64(text, value);
	append(text, "\n", 1);
}

/* ---- steps to render ---------------------------------------------------- */

struct step_view {
	const struct vnfs_step_record *record;
	size_t labels_offset; /* into the label arena */
	size_t labels_length;
	/* What max_series lets through beyond the core counters. */
	bool histograms;
	size_t mount_count;   /* the first mount_count of record->mounts */
	size_t process_count; /* the first process_count of record->processes */
	/* Its RPCs: wire_group_count groups from render->wire_groups[wire_first]
	 * (label sets in render order); the first wire_shown have counters, the
	 * first wire_histograms_shown histograms. */
	size_t wire_first;
	size_t wire_group_count;
	size_t wire_shown;
	size_t wire_histograms_shown;
};

static const struct vnfs_step_stats no_stats;

/* A record without counters (none read yet) renders as zeros. */
static const struct vnfs_step_stats *step_stats(const struct vnfs_step_record *record)
{
	return record->stats ? record->stats : &no_stats;
}

static bool step_has_ended(const struct vnfs_step_record *record)
{
	return record->finished || record->end_time_ms != 0;
}

static int64_t step_end_ms(const struct vnfs_step_record *record)
{
	return record->end_time_ms ? record->end_time_ms : record->sample_time_ms;
}

/* kept becomes a copy of record, its old arrays freed. */
static int retained_copy(struct vnfs_step_record *kept, const struct vnfs_step_record *record)
{
	struct vnfs_step_record copy;

	if (vnfs_step_record_copy(&copy, record) != 0)
		return -1;
	vnfs_step_record_free_arrays(kept);
	*kept = copy;
	return 0;
}

static void retained_remove(struct vnfs_metrics *metrics, size_t index)
{
	vnfs_step_record_free_arrays(&metrics->retained[index]);
	memmove(&metrics->retained[index], &metrics->retained[index + 1],
		(metrics->retained_count - index - 1) * sizeof(metrics->retained[0]));
	metrics->retained_count--;
}

/* Remembers (or refreshes) an ended step's last counts. */
static void retain_step(struct vnfs_metrics *metrics, const struct vnfs_step_record *record)
{
	struct vnfs_step_record *kept = NULL;

	for (size_t i = 0; i < metrics->retained_count; i++) {
		struct vnfs_step_record *step = &metrics->retained[i];
		if (vnfs_workload_equal(&step->workload, &record->workload)) {
			kept = step;
			break;
		}
	}
	if (!kept) {
		if (metrics->retained_count == RETAINED_STEPS_MAX) {
			size_t earliest = 0;
			for (size_t i = 1; i < metrics->retained_count; i++)
				if (step_end_ms(&metrics->retained[i]) <
				    step_end_ms(&metrics->retained[earliest]))
					earliest = i;
			retained_remove(metrics, earliest);
		}
		if (metrics->retained_count == metrics->retained_capacity) {
			size_t capacity = metrics->retained_capacity ? 2 * metrics->retained_capacity : 16;
			struct vnfs_step_record *grown = realloc(metrics->retained,
								 capacity * sizeof(*grown));
			if (!grown)
				return; /* out of memory: its series end early */
			metrics->retained = grown;
			metrics->retained_capacity = capacity;
		}
		kept = &metrics->retained[metrics->retained_count];
		memset(kept, 0, sizeof(*kept));
		metrics->retained_count++;
	} else if (kept->sample_time_ms == record->sample_time_ms &&
		   kept->finished == record->finished) {
		return; /* the same reading again */
	}
	if (retained_copy(kept, record) != 0) {
		/* Out of memory: forget it rather than keep half a record. */
		retained_remove(metrics, (size_t)(kept - metrics->retained));
	}
}

static bool grace_expired(const struct vnfs_metrics *metrics, const struct vnfs_step_record *record,
			  int64_t now_ms)
{
	return step_end_ms(record) + (int64_t)metrics->grace_period_ms <= now_ms;
}

static void expire_retained(struct vnfs_metrics *metrics, int64_t now_ms)
{
	for (size_t i = 0; i < metrics->retained_count;) {
		if (grace_expired(metrics, &metrics->retained[i], now_ms))
			retained_remove(metrics, i);
		else
			i++;
	}
}

/* ---- series accounting --------------------------------------------------- */

static bool operation_used(const struct vnfs_operation_stats *stats)
{
	return stats->count != 0 || stats->errors != 0;
}

static uint64_t direction_total(const struct vnfs_step_stats *stats, int direction)
{
	uint64_t total = 0;
	for (int b = 0; b < VNFS_SIZE_BUCKETS; b++)
		total += stats->request_size_histogram[direction][b];
	return total;
}

#define BYTES_FAMILIES 3
#define PROCESS_FAMILIES 5
#define MOUNT_FAMILIES 5
#define UNATTRIBUTED_FIXED_FAMILIES 3

/* Operations total and errors per operation in use, and the bytes families. */
static size_t core_series(const struct vnfs_step_record *record)
{
	size_t series = BYTES_FAMILIES;

	for (int op = 0; op < VNFS_OP_COUNT; op++)
		if (operation_used(&step_stats(record)->operations[op]))
			series += 2;
	return series;
}

/* Buckets, +Inf, _sum and _count of each duration and size histogram. */
static size_t histogram_series(const struct vnfs_step_record *record)
{
	size_t series = 0;

	for (int op = 0; op < VNFS_OP_COUNT; op++)
		if (operation_used(&step_stats(record)->operations[op]))
			series += LATENCY_EXPOSED + 3;
	for (int direction = 0; direction < VNFS_DIRECTIONS; direction++)
		if (direction_total(step_stats(record), direction))
			series += SIZE_EXPOSED + 3;
	return series;
}

static size_t unattributed_series(const struct vnfs_unattributed_record *record)
{
	size_t series = UNATTRIBUTED_FIXED_FAMILIES;
	for (int op = 0; op < VNFS_OP_COUNT; op++)
		if (record->stats.operations[op].count)
			series++;
	return series;
}

/* Per mount and procedure: rpcs, retransmissions, major timeouts, bytes sent
 * and received, execution time; an error series per kind that occurred; the
 * round-trip and backlog histograms. */
#define WIRE_COUNTER_FAMILIES 6
/* Per owner, mount and procedure of the node's rows: rpcs, bytes sent and
 * received, retransmissions. */
#define NODE_WIRE_FAMILIES 4
#define WIRE_HISTOGRAM_SERIES (2 * (LATENCY_EXPOSED + 3))

static size_t wire_counter_series(const struct vnfs_wire_stats *stats)
{
	size_t series = WIRE_COUNTER_FAMILIES;
	for (int kind = 0; kind < VNFS_WIRE_ERRORS; kind++)
		if (stats->error_kinds[kind])
			series++;
	return series;
}

/* ---- label sets ------------------------------------------------------------ */

/* The value of a mount label: its mount point, or "device 0:52" for one no
 * longer (or not yet) known by its mount point, which keeps series apart. */
static void append_mount_value(struct text *text, __u32 device, const char *mount_point,
			       size_t size)
{
	if (mount_point[0]) {
		append_label_value(text, mount_point, size);
	} else {
		append_string(text, "device ");
		append_u64(text, device >> 20);
		append(text, ":", 1);
		append_u64(text, device & 0xfffff);
	}
}

/* ",mount=...,procedure=..." of a wire row: the procedure is the kernel's
 * p_name, bytes like any other, escaped like any other label value. */
static void append_wire_labels(struct text *text, const struct vnfs_wire_record *row)
{
	append(text, ",mount=\"", 8);
	append_mount_value(text, row->device, row->mount_point, sizeof(row->mount_point));
	append(text, "\",procedure=\"", 13);
	append_label_value(text, row->procedure, sizeof(row->procedure));
	append(text, "\"", 1);
}

/* A step's labels: its workload's job and part under its source's label
 * names (lib/workload.h: Slurm's job_id and step_id), its user, the tags. */
static void append_step_labels(const struct vnfs_metrics *metrics, struct text *text,
			       const struct vnfs_step_record *record)
{
	const struct vnfs_workload *workload = &record->workload;

	append_string(text, vnfs_workload_job_label(workload->source));
	append(text, "=\"", 2);
	append_label_value(text, workload->job, sizeof(workload->job));
	append(text, "\",", 2);
	append_string(text, vnfs_workload_part_label(workload->source));
	append(text, "=\"", 2);
	append_label_value(text, workload->part, sizeof(workload->part));
	append_string(text, "\",user=\"");
	append_label_value(text, record->user, sizeof(record->user));
	append(text, "\"", 1);
	for (size_t i = 0; i < metrics->tag_label_count; i++) {
		const char *value = vnfs_tags_find(record->tags, metrics->tag_names[i]);

		append(text, ",", 1);
		append_string(text, metrics->tag_label_names[i]);
		append(text, "=\"", 2);
		if (value)
			append_label_value(text, value, VNFS_TAG_VALUE_MAX + 1);
		append(text, "\"", 1);
	}
}

/* ---- families ---------------------------------------------------------------- */

/* A step's wire rows of one label set (mount, procedure): rows rows from
 * render->wire_rows[first], summed when more than one. */
struct wire_group {
	size_t first;
	size_t rows;
	size_t labels_offset; /* ",mount=...,procedure=..." in the label arena */
	size_t labels_length;
	size_t counter_series;
};

struct render {
	struct vnfs_metrics *metrics;
	struct text out;
	struct text arena; /* label sets of the steps and of their wire groups */
	struct step_view *steps;
	size_t step_count;
	size_t unattributed_count; /* the first ones of the interval's, as max_series allows */
	const struct vnfs_wire_record **wire_rows; /* grouped, groups in label order */
	size_t wire_row_count;
	struct wire_group *wire_groups;
	size_t wire_group_count;
	/* The node's wire rows (background, unattributed) grouped the same
	 * way, labels "owner=...,mount=...,procedure=..." in the arena; the
	 * first node_wire_shown groups as max_series allows. */
	const struct vnfs_wire_record **node_rows;
	size_t node_row_count;
	struct wire_group *node_groups;
	size_t node_group_count;
	size_t node_wire_shown;
};

#define STEP_LABELS(render, view) ((render)->arena.data + (view)->labels_offset), (view)->labels_length

static void render_operation_counter(struct render *render, const char *name, const char *help,
				     bool errors)
{
	size_t name_length = strlen(name);

	append_header(&render->out, name, "counter", help);
	for (size_t s = 0; s < render->step_count; s++) {
		const struct step_view *view = &render->steps[s];
		for (int op = 0; op < VNFS_OP_COUNT; op++) {
			const struct vnfs_operation_stats *stats = &step_stats(view->record)->operations[op];
			if (!operation_used(stats))
				continue;
			sample_begin(&render->out, name, name_length, STEP_LABELS(render, view));
			append(&render->out, render->metrics->operation_labels[op],
			       render->metrics->operation_label_lengths[op]);
			sample_end(&render->out, errors ? stats->errors : stats->count);
		}
	}
}

/* Which kernel buckets a histogram family exposes, and how it is named. */
struct histogram_shape {
	const char *bucket_name;
	const char *sum_name;
	const char *count_name;
	int first_index; /* kernel bucket of the first exposed bound */
	int last_index;
	int index_step;
	bool sum_in_seconds; /* the sum is nanoseconds, written as seconds */
};

static const struct histogram_shape latency_shape = {
	"vnfs_operation_duration_seconds_bucket", "vnfs_operation_duration_seconds_sum",
	"vnfs_operation_duration_seconds_count",
	LATENCY_FIRST_INDEX, LATENCY_LAST_INDEX, LATENCY_INDEX_STEP, true,
};

static const struct histogram_shape size_shape = {
	"vnfs_request_size_bytes_bucket", "vnfs_request_size_bytes_sum",
	"vnfs_request_size_bytes_count",
	SIZE_FIRST_INDEX, SIZE_LAST_INDEX, 1, false,
};

static void histogram_sample(struct render *render, const struct step_view *view,
			     const char *name, const char *extra_label, size_t extra_length)
{
	sample_begin(&render->out, name, strlen(name), STEP_LABELS(render, view));
	append(&render->out, extra_label, extra_length);
}

/* One histogram series: the exposed cumulative buckets, +Inf, _sum, _count. */
static void append_histogram(struct render *render, const struct step_view *view,
			     const struct histogram_shape *shape, const char (*bounds)[BOUND_TEXT],
			     const char *extra_label, size_t extra_length, const __u64 *buckets,
			     int bucket_count, uint64_t sum)
{
	struct text *out = &render->out;
	uint64_t cumulative = 0;
	int exposed = 0;

	for (int b = 0; b < bucket_count; b++) {
		cumulative += buckets[b];
		if (b < shape->first_index || b > shape->last_index ||
		    (b - shape->first_index) % shape->index_step)
			continue;
		histogram_sample(render, view, shape->bucket_name, extra_label, extra_length);
		append(out, ",le=\"", 5);
		append_string(out, bounds[exposed++]);
		append(out, "\"", 1);
		sample_end(out, cumulative);
	}
	histogram_sample(render, view, shape->bucket_name, extra_label, extra_length);
	append(out, ",le=\"+Inf\"", 10);
	sample_end(out, cumulative);

	histogram_sample(render, view, shape->sum_name, extra_label, extra_length);
	append(out, "} ", 2);
	if (shape->sum_in_seconds)
		append_seconds(out, sum);
	else
		append_u64(out, sum);
	append(out, "\n", 1);

	histogram_sample(render, view, shape->count_name, extra_label, extra_length);
	sample_end(out, cumulative);
}

static void render_duration_histogram(struct render *render)
{
	const struct vnfs_metrics *metrics = render->metrics;

	append_header(&render->out, "vnfs_operation_duration_seconds", "histogram",
		      "Time NFS client operations of the step took.");
	for (size_t s = 0; s < render->step_count; s++) {
		const struct step_view *view = &render->steps[s];
		if (!view->histograms)
			continue;
		for (int op = 0; op < VNFS_OP_COUNT; op++) {
			const struct vnfs_operation_stats *stats = &step_stats(view->record)->operations[op];
			if (operation_used(stats))
				append_histogram(render, view, &latency_shape, metrics->latency_bounds,
						 metrics->operation_labels[op],
						 metrics->operation_label_lengths[op],
						 stats->latency_histogram, VNFS_LATENCY_BUCKETS,
						 stats->time_ns);
		}
	}
}

static void render_bytes(struct render *render, const char *name, const char *help,
			 enum vnfs_operation op)
{
	size_t name_length = strlen(name);

	append_header(&render->out, name, "counter", help);
	for (size_t s = 0; s < render->step_count; s++) {
		const struct step_view *view = &render->steps[s];
		sample_begin(&render->out, name, name_length, STEP_LABELS(render, view));
		sample_end(&render->out, step_stats(view->record)->operations[op].bytes);
	}
}

static void render_size_histogram(struct render *render)
{
	static const enum vnfs_operation direction_operation[VNFS_DIRECTIONS] = {
		[VNFS_DIRECTION_READ] = VNFS_OP_READ,
		[VNFS_DIRECTION_WRITE] = VNFS_OP_WRITE,
	};
	const struct vnfs_metrics *metrics = render->metrics;

	append_header(&render->out, "vnfs_request_size_bytes", "histogram",
		      "Sizes of the step's read and write requests.");
	for (size_t s = 0; s < render->step_count; s++) {
		const struct step_view *view = &render->steps[s];
		const struct vnfs_step_stats *stats = step_stats(view->record);
		if (!view->histograms)
			continue;
		for (int direction = 0; direction < VNFS_DIRECTIONS; direction++) {
			if (direction_total(stats, direction))
				append_histogram(render, view, &size_shape, metrics->size_bounds,
						 metrics->direction_labels[direction],
						 strlen(metrics->direction_labels[direction]),
						 stats->request_size_histogram[direction],
						 VNFS_SIZE_BUCKETS,
						 stats->operations[direction_operation[direction]].bytes);
		}
	}
}

enum process_field { PROCESS_READ_OPS, PROCESS_READ_BYTES, PROCESS_WRITE_OPS, PROCESS_WRITE_BYTES,
		     PROCESS_OTHER_OPS };

static uint64_t process_value(const struct vnfs_process_stats *stats, enum process_field field)
{
	switch (field) {
	case PROCESS_READ_OPS: return stats->read_ops;
	case PROCESS_READ_BYTES: return stats->read_bytes;
	case PROCESS_WRITE_OPS: return stats->write_ops;
	case PROCESS_WRITE_BYTES: return stats->write_bytes;
	case PROCESS_OTHER_OPS: return stats->other_ops;
	}
	return 0;
}

static void render_process_family(struct render *render, const char *name, const char *help,
				  enum process_field field)
{
	size_t name_length = strlen(name);
	struct text *out = &render->out;

	append_header(out, name, "counter", help);
	for (size_t s = 0; s < render->step_count; s++) {
		const struct step_view *view = &render->steps[s];
		for (size_t p = 0; p < view->process_count; p++) {
			const struct vnfs_process_record *process = &view->record->processes[p];
			sample_begin(out, name, name_length, STEP_LABELS(render, view));
			append(out, ",comm=\"", 7);
			append_label_value(out, process->comm, sizeof(process->comm));
			append(out, "\"", 1);
			sample_end(out, process_value(&process->stats, field));
		}
	}
}

static const struct {
	const char *name, *help;
	enum process_field field;
} process_families[] = {
	{ "vnfs_process_read_operations_total", "Read operations of the step, by process name.",
	  PROCESS_READ_OPS },
	{ "vnfs_process_read_bytes_total", "Bytes read by the step, by process name.",
	  PROCESS_READ_BYTES },
	{ "vnfs_process_write_operations_total", "Write operations of the step, by process name.",
	  PROCESS_WRITE_OPS },
	{ "vnfs_process_write_bytes_total", "Bytes written by the step, by process name.",
	  PROCESS_WRITE_BYTES },
	{ "vnfs_process_other_operations_total",
	  "Operations other than read and write of the step, by process name.", PROCESS_OTHER_OPS },
};

enum mount_field { MOUNT_OPS, MOUNT_ERRORS, MOUNT_TIME, MOUNT_READ_BYTES, MOUNT_WRITE_BYTES };

static void render_mount_family(struct render *render, const char *name, const char *help,
				enum mount_field field)
{
	size_t name_length = strlen(name);
	struct text *out = &render->out;

	append_header(out, name, "counter", help);
	for (size_t s = 0; s < render->step_count; s++) {
		const struct step_view *view = &render->steps[s];
		for (size_t m = 0; m < view->mount_count; m++) {
			const struct vnfs_mount_record *mount = &view->record->mounts[m];
			const struct vnfs_mount_stats *stats = &mount->stats;

			sample_begin(out, name, name_length, STEP_LABELS(render, view));
			append(out, ",mount=\"", 8);
			/* No longer mounted: the device keeps the series unique. */
			append_mount_value(out, mount->device, mount->mount_point,
					   sizeof(mount->mount_point));
			append(out, "\",server=\"", 10);
			append_label_value(out, mount->source, sizeof(mount->source));
			append(out, "\",version=\"", 11);
			append_label_value(out, mount->version, sizeof(mount->version));
			append(out, "\"", 1);
			switch (field) {
			case MOUNT_OPS: sample_end(out, stats->ops); break;
			case MOUNT_ERRORS: sample_end(out, stats->errors); break;
			case MOUNT_READ_BYTES: sample_end(out, stats->read_bytes); break;
			case MOUNT_WRITE_BYTES: sample_end(out, stats->write_bytes); break;
			case MOUNT_TIME:
				append(out, "} ", 2);
				append_seconds(out, stats->time_ns);
				append(out, "\n", 1);
				break;
			}
		}
	}
}

static const struct {
	const char *name, *help;
	enum mount_field field;
} mount_families[] = {
	{ "vnfs_mount_operations_total", "NFS operations of the step, by mount.", MOUNT_OPS },
	{ "vnfs_mount_operation_errors_total", "NFS operations of the step that failed, by mount.",
	  MOUNT_ERRORS },
	{ "vnfs_mount_operation_duration_seconds_total",
	  "Time the step's NFS operations took, by mount.", MOUNT_TIME },
	{ "vnfs_mount_read_bytes_total", "Bytes the step read, by mount.", MOUNT_READ_BYTES },
	{ "vnfs_mount_write_bytes_total", "Bytes the step wrote, by mount.", MOUNT_WRITE_BYTES },
};

/* ---- per-RPC families ------------------------------------------------------- */

#define WIRE_LABELS(render, group) ((render)->arena.data + (group)->labels_offset), (group)->labels_length

/* The counters of a group of rows (grouped in rows): its row's, or the sum
 * of its rows into sum. */
static const struct vnfs_wire_stats *rows_stats(const struct vnfs_wire_record *const *rows,
						const struct wire_group *group,
						struct vnfs_wire_stats *sum)
{
	if (group->rows == 1)
		return &rows[group->first]->stats;
	memset(sum, 0, sizeof(*sum));
	for (size_t r = 0; r < group->rows; r++)
		vnfs_wire_stats_add(sum, &rows[group->first + r]->stats);
	return sum;
}

/* The counters of a step's wire group. */
static const struct vnfs_wire_stats *group_stats(const struct render *render,
						 const struct wire_group *group,
						 struct vnfs_wire_stats *sum)
{
	return rows_stats(render->wire_rows, group, sum);
}

enum wire_field { WIRE_RPCS, WIRE_RETRANSMISSIONS, WIRE_MAJOR_TIMEOUTS, WIRE_SENT_BYTES,
		  WIRE_RECEIVED_BYTES, WIRE_EXECUTE };

static void render_wire_family(struct render *render, const char *name, const char *help,
			       enum wire_field field)
{
	size_t name_length = strlen(name);
	struct text *out = &render->out;
	struct vnfs_wire_stats sum;

	append_header(out, name, "counter", help);
	for (size_t s = 0; s < render->step_count; s++) {
		const struct step_view *view = &render->steps[s];
		for (size_t g = 0; g < view->wire_shown; g++) {
			const struct wire_group *group = &render->wire_groups[view->wire_first + g];
			const struct vnfs_wire_stats *stats = group_stats(render, group, &sum);

			sample_begin(out, name, name_length, STEP_LABELS(render, view));
			append(out, WIRE_LABELS(render, group));
			switch (field) {
			case WIRE_RPCS: sample_end(out, stats->rpcs); break;
			case WIRE_RETRANSMISSIONS:
				/* At least one send per RPC; an RPC that ended
				 * before its first send had none. */
				sample_end(out, stats->transmissions > stats->rpcs ?
						stats->transmissions - stats->rpcs : 0);
				break;
			case WIRE_MAJOR_TIMEOUTS: sample_end(out, stats->major_timeouts); break;
			case WIRE_SENT_BYTES: sample_end(out, stats->bytes_sent); break;
			case WIRE_RECEIVED_BYTES: sample_end(out, stats->bytes_received); break;
			case WIRE_EXECUTE:
				append(out, "} ", 2);
				append_seconds(out, stats->execute_ns);
				append(out, "\n", 1);
				break;
			}
		}
	}
}

static const struct {
	const char *name, *help;
	enum wire_field field;
} wire_families[] = {
	{ "vnfs_rpcs_total",
	  "NFS RPCs of the step that ended, by mount and procedure (mountstats' ops).", WIRE_RPCS },
	{ "vnfs_rpc_retransmissions_total",
	  "Sends of the step's RPCs beyond the first of each, by mount and procedure.",
	  WIRE_RETRANSMISSIONS },
	{ "vnfs_rpc_major_timeouts_total", "Major timeouts of the step's RPCs, by mount and procedure.",
	  WIRE_MAJOR_TIMEOUTS },
	{ "vnfs_rpc_sent_bytes_total",
	  "Bytes the step's RPCs sent, RPC headers included, by mount and procedure.",
	  WIRE_SENT_BYTES },
	{ "vnfs_rpc_received_bytes_total",
	  "Bytes of the replies to the step's RPCs, RPC headers included, by mount and procedure.",
	  WIRE_RECEIVED_BYTES },
	{ "vnfs_rpc_execute_seconds_total",
	  "Time the step's RPCs took from start to end, by mount and procedure.", WIRE_EXECUTE },
};

/* Only the kinds that occurred: seven series per row that failed nothing
 * would be most of the per-RPC series (docs/METRICS.md). */
static void render_wire_errors(struct render *render)
{
	static const char name[] = "vnfs_rpc_errors_total";
	struct text *out = &render->out;
	struct vnfs_wire_stats sum;

	append_header(out, name, "counter",
		      "The step's RPCs that ended with an error status, by mount, procedure and kind.");
	for (size_t s = 0; s < render->step_count; s++) {
		const struct step_view *view = &render->steps[s];
		for (size_t g = 0; g < view->wire_shown; g++) {
			const struct wire_group *group = &render->wire_groups[view->wire_first + g];
			const struct vnfs_wire_stats *stats = group_stats(render, group, &sum);

			for (int kind = 0; kind < VNFS_WIRE_ERRORS; kind++) {
				if (!stats->error_kinds[kind])
					continue;
				sample_begin(out, name, sizeof(name) - 1, STEP_LABELS(render, view));
				append(out, WIRE_LABELS(render, group));
				append(out, ",kind=\"", 7);
				append_string(out, vnfs_wire_error_names[kind]);
				append(out, "\"", 1);
				sample_end(out, stats->error_kinds[kind]);
			}
		}
	}
}

static const struct histogram_shape rtt_shape = {
	"vnfs_rpc_rtt_seconds_bucket", "vnfs_rpc_rtt_seconds_sum", "vnfs_rpc_rtt_seconds_count",
	LATENCY_FIRST_INDEX, LATENCY_LAST_INDEX, LATENCY_INDEX_STEP, true,
};

static const struct histogram_shape backlog_shape = {
	"vnfs_rpc_backlog_seconds_bucket", "vnfs_rpc_backlog_seconds_sum",
	"vnfs_rpc_backlog_seconds_count",
	LATENCY_FIRST_INDEX, LATENCY_LAST_INDEX, LATENCY_INDEX_STEP, true,
};

static void render_wire_histogram(struct render *render, const char *name, const char *help,
				  const struct histogram_shape *shape, bool rtt)
{
	struct vnfs_wire_stats sum;

	append_header(&render->out, name, "histogram", help);
	for (size_t s = 0; s < render->step_count; s++) {
		const struct step_view *view = &render->steps[s];
		for (size_t g = 0; g < view->wire_histograms_shown; g++) {
			const struct wire_group *group = &render->wire_groups[view->wire_first + g];
			const struct vnfs_wire_stats *stats = group_stats(render, group, &sum);

			append_histogram(render, view, shape, render->metrics->latency_bounds,
					 WIRE_LABELS(render, group),
					 rtt ? stats->rtt_histogram : stats->backlog_histogram,
					 VNFS_LATENCY_BUCKETS, rtt ? stats->rtt_ns : stats->backlog_ns);
		}
	}
}

/*
 * Does any step show per-RPC counters (or histograms)?  The families are
 * announced only then: counting RPCs is optional (a kernel without the RPC
 * tracepoints, [helper] count_rpcs = false), and a node without it shows
 * none of them.
 */
static bool wire_shown(const struct render *render, bool histograms)
{
	for (size_t s = 0; s < render->step_count; s++)
		if (histograms ? render->steps[s].wire_histograms_shown : render->steps[s].wire_shown)
			return true;
	return false;
}

static void render_step_families(struct render *render)
{
	render_operation_counter(render, "vnfs_operations_total",
				 "NFS client operations of the step, by operation.", false);
	render_operation_counter(render, "vnfs_operation_errors_total",
				 "NFS client operations of the step that returned an error.", true);
	render_duration_histogram(render);
	render_bytes(render, "vnfs_read_bytes_total", "Bytes the step read from NFS with read().",
		     VNFS_OP_READ);
	render_bytes(render, "vnfs_write_bytes_total", "Bytes the step wrote to NFS.",
		     VNFS_OP_WRITE);
	render_bytes(render, "vnfs_mmap_read_bytes_total",
		     "Bytes brought in from NFS for the step outside read() (mmap page faults, splice).",
		     VNFS_OP_MMAP_READ);
	render_size_histogram(render);
	for (size_t i = 0; i < sizeof(process_families) / sizeof(process_families[0]); i++)
		render_process_family(render, process_families[i].name, process_families[i].help,
				      process_families[i].field);
	for (size_t i = 0; i < sizeof(mount_families) / sizeof(mount_families[0]); i++)
		render_mount_family(render, mount_families[i].name, mount_families[i].help,
				    mount_families[i].field);
	if (!wire_shown(render, false))
		return;
	for (size_t i = 0; i < sizeof(wire_families) / sizeof(wire_families[0]); i++)
		render_wire_family(render, wire_families[i].name, wire_families[i].help,
				   wire_families[i].field);
	render_wire_errors(render);
	if (!wire_shown(render, true))
		return;
	render_wire_histogram(render, "vnfs_rpc_rtt_seconds",
			      "Round trip of the step's RPCs (last send to reply), by mount and "
			      "procedure.",
			      &rtt_shape, true);
	render_wire_histogram(render, "vnfs_rpc_backlog_seconds",
			      "Time the step's RPCs waited before their first send, by mount and "
			      "procedure.",
			      &backlog_shape, false);
}

static void append_unattributed_labels(struct text *out, const struct vnfs_unattributed_record *record)
{
	append_string(out, "{cgroup_id=\"");
	append_u64(out, record->cgroup_id);
	append_string(out, "\",uid=\"");
	append_u64(out, record->uid);
	append_string(out, "\",comm=\"");
	append_label_value(out, record->comm, sizeof(record->comm));
	append(out, "\"", 1);
}

static void render_unattributed(struct render *render, const struct vnfs_unattributed_record *records,
				size_t count)
{
	struct text *out = &render->out;
	static const struct {
		const char *name;
		const char *help;
	} fixed[UNATTRIBUTED_FIXED_FAMILIES] = {
		{ "vnfs_unattributed_operation_errors_total",
		  "Failed NFS operations of processes in no registered job step." },
		{ "vnfs_unattributed_read_bytes_total",
		  "Bytes read from NFS by processes in no registered job step." },
		{ "vnfs_unattributed_write_bytes_total",
		  "Bytes written to NFS by processes in no registered job step." },
	};

	append_header(out, "vnfs_unattributed_operations_total", "counter",
		      "NFS operations of processes in no registered job step, by cgroup, uid and process.");
	for (size_t i = 0; i < count; i++) {
		for (int op = 0; op < VNFS_OP_COUNT; op++) {
			if (!records[i].stats.operations[op].count)
				continue;
			append_string(out, "vnfs_unattributed_operations_total");
			append_unattributed_labels(out, &records[i]);
			append_string(out, ",op=\"");
			append_string(out, vnfs_operation_names[op]);
			append(out, "\"", 1);
			sample_end(out, records[i].stats.operations[op].count);
		}
	}
	for (int family = 0; family < UNATTRIBUTED_FIXED_FAMILIES; family++) {
		append_header(out, fixed[family].name, "counter", fixed[family].help);
		for (size_t i = 0; i < count; i++) {
			const struct vnfs_unattributed_stats *stats = &records[i].stats;
			uint64_t values[UNATTRIBUTED_FIXED_FAMILIES] = {
				vnfs_unattributed_total(stats, VNFS_UNATTRIBUTED_ERRORS),
				vnfs_unattributed_total(stats, VNFS_UNATTRIBUTED_READ_BYTES),
				vnfs_unattributed_total(stats, VNFS_UNATTRIBUTED_WRITE_BYTES),
			};
			append_string(out, fixed[family].name);
			append_unattributed_labels(out, &records[i]);
			sample_end(out, values[family]);
		}
	}
}

/*
 * The node's RPCs of no workload (bpf/wire.h): the mounts' background
 * (lease renewal, SEQUENCE, DELEGRETURN by the state manager) and
 * processes in no workload, by owner, mount and procedure.  Announced only
 * when there are such rows: a node without RPC counting shows none.
 */
static void render_node_wire(struct render *render)
{
	static const struct {
		const char *name;
		const char *help;
	} families[NODE_WIRE_FAMILIES] = {
		{ "vnfs_node_rpcs_total",
		  "NFS RPCs of no job step that ended, by owner (background: the mount's own, "
		  "unattributed: processes in no step), mount and procedure." },
		{ "vnfs_node_rpc_retransmissions_total",
		  "Sends of RPCs of no job step beyond the first of each, by owner, mount and "
		  "procedure." },
		{ "vnfs_node_rpc_sent_bytes_total",
		  "Bytes RPCs of no job step sent, RPC headers included, by owner, mount and "
		  "procedure." },
		{ "vnfs_node_rpc_received_bytes_total",
		  "Bytes of the replies to RPCs of no job step, RPC headers included, by owner, "
		  "mount and procedure." },
	};
	struct text *out = &render->out;
	struct vnfs_wire_stats sum;

	if (render->node_wire_shown == 0)
		return;
	for (int family = 0; family < NODE_WIRE_FAMILIES; family++) {
		size_t name_length = strlen(families[family].name);

		append_header(out, families[family].name, "counter", families[family].help);
		for (size_t g = 0; g < render->node_wire_shown; g++) {
			const struct wire_group *group = &render->node_groups[g];
			const struct vnfs_wire_stats *stats =
				rows_stats(render->node_rows, group, &sum);
			uint64_t values[NODE_WIRE_FAMILIES] = {
				stats->rpcs,
				stats->transmissions > stats->rpcs ?
					stats->transmissions - stats->rpcs : 0,
				stats->bytes_sent,
				stats->bytes_received,
			};

			sample_begin(out, families[family].name, name_length, WIRE_LABELS(render, group));
			sample_end(out, values[family]);
		}
	}
}

/* A health counter shown as one label value of a family. */
struct labelled_counter {
	const char *label;
	int counter; /* enum vnfs_health_counter */
};

/* The maps whose updates failed for want of room. */
static const struct labelled_counter full_maps[] = {
	{ "cgroup_cache", VNFS_HEALTH_CACHE_FULL },
	{ "breakdown_stats", VNFS_HEALTH_BREAKDOWN_FULL },
	{ "unattributed_stats", VNFS_HEALTH_UNATTRIBUTED_FULL },
};

/* Where the per-step and per-node row bounds sent calls or rows
 * (docs/PROBES.md, "Bounded per step"). */
static const struct labelled_counter bounded_rows[] = {
	{ "step_other_calls", VNFS_HEALTH_BREAKDOWN_OTHER },
	{ "unattributed_other_calls", VNFS_HEALTH_UNATTRIBUTED_OTHER },
	{ "unattributed_expired_rows", VNFS_HEALTH_UNATTRIBUTED_EXPIRED },
	{ "unattributed_other_rpcs", VNFS_HEALTH_WIRE_UNATTRIBUTED_OTHER },
};

/* One counter family, a sample per entry of counters: name{label="..."}. */
static void render_labelled_counters(struct text *out, const char *name, const char *help,
				     const char *label, const struct labelled_counter *counters,
				     size_t count, const struct vnfs_helper_health *health)
{
	append_header(out, name, "counter", help);
	for (size_t i = 0; i < count; i++) {
		append_string(out, name);
		append(out, "{", 1);
		append_string(out, label);
		append_string(out, "=\"");
		append_string(out, counters[i].label);
		append_string(out, "\"} ");
		append_u64(out, health->counters[counters[i].counter]);
		append(out, "\n", 1);
	}
}

static void render_gauge(struct text *out, const char *name, const char *type, const char *help,
			 uint64_t value)
{
	append_header(out, name, type, help);
	append_string(out, name);
	append(out, " ", 1);
	append_u64(out, value);
	append(out, "\n", 1);
}

/* The kernel side's health counters that are families of their own (the
 * full maps and the bounds have theirs above). */
static const struct {
	const char *name;
	const char *help;
	int counter; /* enum vnfs_health_counter */
} health_counter_metrics[] = {
	{ "vnfs_helper_uncounted_operations_total",
	  "Operations not counted: the probes could not keep the calling thread's state "
	  "(out of kernel memory; on Linux 5.10, 16,384 threads with NFS calls at once).",
	  VNFS_HEALTH_TASK_STATE_FAILED },
	{ "vnfs_helper_unmatched_exits_total",
	  "Function exits seen without their entry (probes attached mid-call).",
	  VNFS_HEALTH_UNMATCHED_EXIT },
	{ "vnfs_helper_missed_exits_total",
	  "Reads and writes whose return the kernel did not report (probes by kprobe, more "
	  "calls of a function in progress at once than kprobe_calls_in_flight): not counted.",
	  VNFS_HEALTH_MISSED_EXIT },
	{ "vnfs_helper_new_cgroups_lost_total",
	  "Cgroups made while the helper's ring of them was full: containers "
	  "among them are found by their calls instead.",
	  VNFS_HEALTH_NEW_CGROUPS_LOST },
	{ "vnfs_helper_environment_jobs_lost_total",
	  "Execs whose environment named a job the kernel had no room for "
	  "(1,024 at once): their calls stay in their cgroup's.",
	  VNFS_HEALTH_ENVIRONMENT_JOBS_FULL },
	{ "vnfs_helper_environment_values_too_long_total",
	  "Listed environment variables whose value (over 63 bytes) was not kept.",
	  VNFS_HEALTH_ENVIRONMENT_TOO_LONG },
	{ "vnfs_helper_wire_rows_full_total",
	  "RPCs not counted per workload: their step had made 64 wire rows "
	  "(procedure x mount), or the node 16,384.",
	  VNFS_HEALTH_WIRE_FULL },
};

static void render_attach_methods(struct text *out, const struct vnfs_helper_health *health)
{
	append_header(out, "vnfs_helper_attach_method", "gauge",
		      "How each operation's probes are attached (1 for the method in use).");
	for (int op = 0; op < VNFS_OP_COUNT; op++) {
		append_string(out, "vnfs_helper_attach_method{op=\"");
		append_string(out, vnfs_operation_names[op]);
		append_string(out, "\",method=\"");
		append_string(out, vnfs_attach_method_name(health->attach_method[op]));
		append_string(out, "\"} 1\n");
	}
}

static void render_slots(struct text *out, const struct vnfs_helper_health *health)
{
	append_header(out, "vnfs_helper_slots", "gauge", "Step slots in the BPF maps, used and free.");
	append_string(out, "vnfs_helper_slots{state=\"used\"} ");
	append_u64(out, health->active_slots);
	append_string(out, "\nvnfs_helper_slots{state=\"free\"} ");
	append_u64(out, health->max_slots > health->active_slots ?
			health->max_slots - health->active_slots : 0);
	append(out, "\n", 1);
}

/* The family is there whatever the path, so that a rule can test it;
 * samples only for functions whose return probes the kernel counts. */
static void render_missed_returns(struct text *out, const struct vnfs_missed_returns *counted)
{
	append_header(out, "vnfs_helper_kernel_missed_returns_total", "counter",
		      "Calls whose return the kernel did not report, by kprobed function, as the "
		      "kernel counts them (tracefs kprobe_profile): probes by kprobe with more calls "
		      "in progress at once than kprobe_calls_in_flight.");
	for (unsigned i = 0; i < counted->count && i < VNFS_MAX_MISSED_RETURN_FUNCTIONS; i++) {
		append_string(out, "vnfs_helper_kernel_missed_returns_total{function=\"");
		append_label_value(out, counted->functions[i].function,
				   sizeof(counted->functions[i].function));
		append_string(out, "\"} ");
		append_u64(out, counted->functions[i].missed);
		append(out, "\n", 1);
	}
}

/* What the helper knows of its probes and collections (an interval's health). */
static void render_probe_health(struct text *out, const struct vnfs_helper_health *health)
{
	render_attach_methods(out, health);
	render_gauge(out, "vnfs_helper_collections_total", "counter",
		     "Intervals the helper has collected.", health->collections);
	append_header(out, "vnfs_helper_collection_duration_seconds", "gauge",
		      "How long the last collection of the BPF maps took.");
	append_string(out, "vnfs_helper_collection_duration_seconds ");
	append_seconds(out, health->last_collection_ns);
	append(out, "\n", 1);
	render_slots(out, health);
	render_labelled_counters(out, "vnfs_helper_map_full_total",
				 "Updates the BPF programs could not make because a map was full.", "map",
				 full_maps, sizeof(full_maps) / sizeof(full_maps[0]), health);
	for (size_t i = 0; i < sizeof(health_counter_metrics) / sizeof(health_counter_metrics[0]); i++)
		render_gauge(out, health_counter_metrics[i].name, "counter",
			     health_counter_metrics[i].help,
			     health->counters[health_counter_metrics[i].counter]);
	render_missed_returns(out, &health->missed_returns);
	render_labelled_counters(out, "vnfs_helper_bounded_total",
				 "Calls counted in an [other] row, rows folded into [expired] ones, and "
				 "RPCs of no workload in their mount's row of no owner.",
				 "bound", bounded_rows, sizeof(bounded_rows) / sizeof(bounded_rows[0]),
				 health);
}

static void render_dropped_records(struct text *out, const struct vnfs_helper_health *health)
{
	append_header(out, "vnfs_helper_dropped_records_total", "counter",
		      "Records an output failed to deliver, by output.");
	for (unsigned i = 0; i < health->sink_count && i < VNFS_MAX_SINKS; i++) {
		append_string(out, "vnfs_helper_dropped_records_total{sink=\"");
		append_label_value(out, health->sink_names[i] ? health->sink_names[i] : "", 64);
		append_string(out, "\"} ");
		append_u64(out, health->sink_dropped[i]);
		append(out, "\n", 1);
	}
}

static void render_health(struct render *render, const struct vnfs_interval *interval,
			  size_t active_steps, size_t series)
{
	struct text *out = &render->out;
	const struct vnfs_helper_health *health = interval ? interval->health : NULL;

	append_header(out, "vnfs_helper_build_info", "gauge", "The vnfs version, always 1.");
	append_string(out, "vnfs_helper_build_info{version=\"" PACKAGE_VERSION "\"} 1\n");
	if (health)
		render_probe_health(out, health);
	if (interval)
		render_gauge(out, "vnfs_helper_active_steps", "gauge",
			     "Job steps running on this node.", active_steps);
	if (health && health->sink_count)
		render_dropped_records(out, health);
	render_gauge(out, "vnfs_helper_series", "gauge",
		     "Per-step and unattributed series in this exposition.", series);
	render_gauge(out, "vnfs_helper_series_capped_total", "counter",
		     "Series left out of expositions because of max_series, summed over renderings.",
		     render->metrics->series_capped);
}

/* ---- the rendering ------------------------------------------------------------ */

/*
 * Is this ended step's job step running again (a requeued job reuses its
 * job and step ids)?  Then the running one's series win: the same label set
 * twice would make Prometheus reject the whole scrape.
 */
static bool running_again(const struct vnfs_interval *interval, const struct vnfs_step_record *ended)
{
	for (size_t i = 0; interval && i < interval->step_count; i++) {
		const struct vnfs_step_record *record = &interval->steps[i];
		if (vnfs_workload_equal(&record->workload, &ended->workload) &&
		    !step_has_ended(record))
			return true;
	}
	return false;
}

/* A wire row with its label text, while a step's rows are grouped. */
struct wire_key {
	size_t offset; /* of the labels in the scratch text */
	size_t length;
	const char *labels;
	const struct vnfs_wire_record *row;
};

static int wire_labels_compare(const struct wire_key *x, const struct wire_key *y)
{
	int order = memcmp(x->labels, y->labels, x->length < y->length ? x->length : y->length);

	if (order == 0 && x->length != y->length)
		order = x->length < y->length ? -1 : 1;
	return order;
}

static int wire_key_compare(const void *a, const void *b)
{
	const struct wire_key *x = a, *y = b;
	int order = wire_labels_compare(x, y);

	/* Rows of one label set in the record's order: a stable rendering. */
	return order ? order : (x->row > y->row) - (x->row < y->row);
}

/*
 * The wire groups of a step, in the order of their label text: its rows
 * with RPCs (a row without any has nothing to show), those of the same
 * label set together.  scratch and keys (room for the step's rows) are the
 * caller's, reused from step to step.
 */
static int collect_wire(struct render *render, struct step_view *view, struct text *scratch,
			struct wire_key *keys)
{
	const struct vnfs_step_record *record = view->record;
	struct vnfs_wire_stats sum;
	size_t count = 0;

	view->wire_first = render->wire_group_count;
	scratch->length = 0;
	for (size_t w = 0; record->wire && w < record->wire_count; w++) {
		const struct vnfs_wire_record *row = &record->wire[w];

		if (row->stats.rpcs == 0)
			continue;
		keys[count].offset = scratch->length;
		append_wire_labels(scratch, row);
		keys[count].length = scratch->length - keys[count].offset;
		keys[count].row = row;
		count++;
	}
	if (scratch->failed)
		return -1;
	for (size_t k = 0; k < count; k++)
		keys[k].labels = scratch->data + keys[k].offset;
	qsort(keys, count, sizeof(*keys), wire_key_compare);

	struct wire_group *group = NULL;
	for (size_t k = 0; k < count; k++) {
		if (k == 0 || wire_labels_compare(&keys[k - 1], &keys[k]) != 0) {
			group = &render->wire_groups[render->wire_group_count++];
			group->first = render->wire_row_count;
			group->rows = 0;
			group->labels_offset = render->arena.length;
			append(&render->arena, keys[k].labels, keys[k].length);
			group->labels_length = keys[k].length;
		}
		render->wire_rows[render->wire_row_count++] = keys[k].row;
		group->rows++;
	}
	view->wire_group_count = render->wire_group_count - view->wire_first;
	for (size_t g = 0; g < view->wire_group_count; g++) {
		group = &render->wire_groups[view->wire_first + g];
		group->counter_series = wire_counter_series(group_stats(render, group, &sum));
	}
	return 0;
}

/* Room for the wire rows of the candidates: all of them, and one step's. */
static int wire_reserve(struct render *render, const struct vnfs_interval *interval,
			struct wire_key **keys)
{
	const struct vnfs_metrics *metrics = render->metrics;
	size_t steps = interval ? interval->step_count : 0;
	size_t total = 0, most = 0;

	for (size_t i = 0; i < steps + metrics->retained_count; i++) {
		const struct vnfs_step_record *record =
			i < steps ? &interval->steps[i] : &metrics->retained[i - steps];
		size_t rows = record->wire ? record->wire_count : 0;

		total += rows;
		if (rows > most)
			most = rows;
	}
	render->wire_rows = malloc((total ? total : 1) * sizeof(*render->wire_rows));
	render->wire_groups = malloc((total ? total : 1) * sizeof(*render->wire_groups));
	*keys = malloc((most ? most : 1) * sizeof(**keys));
	return render->wire_rows && render->wire_groups && *keys ? 0 : -1;
}

/* "owner" of a node wire row, NULL for one that should not be there. */
static const char *node_owner_name(enum vnfs_wire_owner_kind owner)
{
	switch (owner) {
	case VNFS_WIRE_BACKGROUND: return "background";
	case VNFS_WIRE_UNATTRIBUTED: return "unattributed";
	case VNFS_WIRE_WORKLOAD:
	case VNFS_WIRE_OWNER_KINDS: break;
	}
	return NULL;
}

/*
 * The node's wire groups, in the order of their label text: its rows with
 * RPCs, those of one label set (owner, mount, procedure: rows of another
 * device at the same mount point, of both NFS versions on a mount not
 * learned, of several stale slots) together, summed when rendered.
 */
static int collect_node_wire(struct render *render, const struct vnfs_interval *interval)
{
	size_t rows = interval && interval->node_wire ? interval->node_wire_count : 0;
	struct text scratch = { 0 };
	struct wire_key *keys;
	size_t count = 0;
	int result = 0;

	if (rows == 0)
		return 0;
	keys = malloc(rows * sizeof(*keys));
	render->node_rows = malloc(rows * sizeof(*render->node_rows));
	render->node_groups = malloc(rows * sizeof(*render->node_groups));
	if (!keys || !render->node_rows || !render->node_groups) {
		free(keys);
		return -1;
	}
	for (size_t i = 0; i < rows; i++) {
		const struct vnfs_node_wire_record *node = &interval->node_wire[i];
		const char *owner = node_owner_name(node->owner);

		if (!owner || node->row.stats.rpcs == 0)
			continue;
		keys[count].offset = scratch.length;
		append(&scratch, "owner=\"", 7);
		append_string(&scratch, owner);
		append(&scratch, "\"", 1);
		append_wire_labels(&scratch, &node->row);
		keys[count].length = scratch.length - keys[count].offset;
		keys[count].row = &node->row;
		count++;
	}
	if (scratch.failed) {
		result = -1;
		goto done;
	}
	for (size_t k = 0; k < count; k++)
		keys[k].labels = scratch.data + keys[k].offset;
	qsort(keys, count, sizeof(*keys), wire_key_compare);

	struct wire_group *group = NULL;
	for (size_t k = 0; k < count; k++) {
		if (k == 0 || wire_labels_compare(&keys[k - 1], &keys[k]) != 0) {
			group = &render->node_groups[render->node_group_count++];
			group->first = render->node_row_count;
			group->rows = 0;
			group->labels_offset = render->arena.length;
			append(&render->arena, keys[k].labels, keys[k].length);
			group->labels_length = keys[k].length;
			group->counter_series = NODE_WIRE_FAMILIES;
		}
		render->node_rows[render->node_row_count++] = keys[k].row;
		group->rows++;
	}
	if (render->arena.failed)
		result = -1;
done:
	free(scratch.data);
	free(keys);
	return result;
}

/* The views of the steps to render, their label sets, their wire groups,
 * and their core series. */
static int collect_steps(struct render *render, const struct vnfs_interval *interval,
			 size_t *series, size_t *active_steps)
{
	struct vnfs_metrics *metrics = render->metrics;
	size_t candidates = metrics->retained_count + (interval ? interval->step_count : 0);
	const struct vnfs_step_record *record;
	struct text scratch = { 0 };
	struct wire_key *keys = NULL;
	int result = 0;

	render->steps = calloc(candidates ? candidates : 1, sizeof(*render->steps));
	if (!render->steps || wire_reserve(render, interval, &keys) != 0) {
		free(keys);
		return -1;
	}
	for (size_t i = 0; i < candidates; i++) {
		if (interval && i < interval->step_count) {
			record = &interval->steps[i];
			if (step_has_ended(record))
				continue; /* rendered from the retained copy */
			++*active_steps;
		} else {
			record = &metrics->retained[i - (interval ? interval->step_count : 0)];
			if (running_again(interval, record))
				continue;
		}
		/* Never cut: a step's totals are what accounting is for. */
		*series += core_series(record);

		struct step_view *view = &render->steps[render->step_count++];
		view->record = record;
		view->labels_offset = render->arena.length;
		append_step_labels(metrics, &render->arena, record);
		view->labels_length = render->arena.length - view->labels_offset;
		if (collect_wire(render, view, &scratch, keys) != 0) {
			result = -1;
			break;
		}
	}
	free(scratch.data);
	free(keys);
	return result != 0 || render->arena.failed ? -1 : 0;
}

/* max_series, spent in the order of importance (see the top of this file). */
struct series_budget {
	uint32_t limit; /* 0: no bound */
	size_t used;
	bool cutting;   /* something was cut: everything after it is cut too */
	uint64_t cut;
};

static bool budget_take(struct series_budget *budget, size_t cost)
{
	if (budget->cutting || (budget->limit && budget->used + cost > budget->limit)) {
		budget->cutting = true;
		budget->cut += cost;
		return false;
	}
	budget->used += cost;
	return true;
}

static void limit_histograms(struct render *render, struct series_budget *budget)
{
	for (size_t s = 0; s < render->step_count; s++)
		render->steps[s].histograms =
			budget_take(budget, histogram_series(render->steps[s].record));
}

static void limit_unattributed(struct render *render, const struct vnfs_interval *interval,
			       struct series_budget *budget)
{
	for (size_t i = 0; interval && i < interval->unattributed_count; i++)
		if (budget_take(budget, unattributed_series(&interval->unattributed[i])))
			render->unattributed_count++;
}

/* The node's RPC rows come with the unattributed entries: a group's four
 * series whole. */
static void limit_node_wire(struct render *render, struct series_budget *budget)
{
	for (size_t g = 0; g < render->node_group_count; g++)
		if (budget_take(budget, render->node_groups[g].counter_series))
			render->node_wire_shown++;
}

enum breakdown { BREAKDOWN_MOUNTS, BREAKDOWN_WIRE, BREAKDOWN_WIRE_HISTOGRAMS,
		 BREAKDOWN_PROCESSES };

static size_t breakdown_entries(const struct step_view *view, enum breakdown breakdown)
{
	switch (breakdown) {
	case BREAKDOWN_MOUNTS: return view->record->mount_count;
	case BREAKDOWN_WIRE:
	case BREAKDOWN_WIRE_HISTOGRAMS: return view->wire_group_count;
	case BREAKDOWN_PROCESSES: return view->record->process_count;
	}
	return 0;
}

static size_t *breakdown_shown(struct step_view *view, enum breakdown breakdown)
{
	switch (breakdown) {
	case BREAKDOWN_MOUNTS: return &view->mount_count;
	case BREAKDOWN_WIRE: return &view->wire_shown;
	case BREAKDOWN_WIRE_HISTOGRAMS: return &view->wire_histograms_shown;
	case BREAKDOWN_PROCESSES: return &view->process_count;
	}
	return &view->process_count;
}

/* The series of a step's entry of a breakdown. */
static size_t breakdown_cost(const struct render *render, const struct step_view *view,
			     enum breakdown breakdown, size_t entry)
{
	switch (breakdown) {
	case BREAKDOWN_MOUNTS: return MOUNT_FAMILIES;
	case BREAKDOWN_WIRE: return render->wire_groups[view->wire_first + entry].counter_series;
	case BREAKDOWN_WIRE_HISTOGRAMS: return WIRE_HISTOGRAM_SERIES;
	case BREAKDOWN_PROCESSES: return PROCESS_FAMILIES;
	}
	return 0;
}

/*
 * Lets a breakdown's entries through in turns: every step's first entry,
 * then every step's second, and so on, so one step with thousands of
 * process names cannot take the whole budget from the other steps.  turns
 * holds the steps that still have entries (step_count places).
 */
static void limit_breakdown(struct render *render, struct series_budget *budget,
			    enum breakdown breakdown, size_t *turns)
{
	size_t waiting = 0;

	for (size_t s = 0; s < render->step_count; s++)
		if (breakdown_entries(&render->steps[s], breakdown) > 0)
			turns[waiting++] = s;
	while (waiting > 0) {
		size_t still = 0;

		for (size_t t = 0; t < waiting; t++) {
			struct step_view *view = &render->steps[turns[t]];
			size_t *shown = breakdown_shown(view, breakdown);

			if (budget_take(budget, breakdown_cost(render, view, breakdown, *shown)))
				++*shown;
			else /* the rest of this step's entries */
				for (size_t e = *shown + 1; e < breakdown_entries(view, breakdown); e++)
					budget->cut += breakdown_cost(render, view, breakdown, e);
			if (!budget->cutting && *shown < breakdown_entries(view, breakdown))
				turns[still++] = turns[t];
		}
		waiting = still;
	}
}

/* Decides what of each step max_series lets through; *series is the core's. */
static int limit_series(struct render *render, const struct vnfs_interval *interval,
			size_t *series)
{
	struct series_budget budget = { .limit = render->metrics->max_series, .used = *series };
	size_t *turns = malloc((render->step_count ? render->step_count : 1) * sizeof(*turns));

	if (!turns)
		return -1;
	limit_histograms(render, &budget);
	limit_unattributed(render, interval, &budget);
	limit_node_wire(render, &budget);
	limit_breakdown(render, &budget, BREAKDOWN_MOUNTS, turns);
	limit_breakdown(render, &budget, BREAKDOWN_WIRE, turns);
	limit_breakdown(render, &budget, BREAKDOWN_WIRE_HISTOGRAMS, turns);
	limit_breakdown(render, &budget, BREAKDOWN_PROCESSES, turns);
	free(turns);
	render->metrics->series_capped += budget.cut;
	*series = budget.used;
	return 0;
}

void vnfs_metrics_update(struct vnfs_metrics *metrics, const struct vnfs_interval *interval)
{
	for (size_t i = 0; i < interval->step_count; i++) {
		const struct vnfs_step_record *record = &interval->steps[i];
		if (step_has_ended(record) && !grace_expired(metrics, record, interval->time_ms))
			retain_step(metrics, record);
	}
	expire_retained(metrics, interval->time_ms);
}

int vnfs_metrics_render(struct vnfs_metrics *metrics, const struct vnfs_interval *interval,
			char **text, size_t *length)
{
	struct render render = { .metrics = metrics };
	size_t series = 0;
	size_t active_steps = 0;

	if (collect_steps(&render, interval, &series, &active_steps) != 0 ||
	    collect_node_wire(&render, interval) != 0 ||
	    limit_series(&render, interval, &series) != 0)
		goto fail;

	text_reserve(&render.out, metrics->last_length + metrics->last_length / 8 + 4096);
	render_step_families(&render);
	render_unattributed(&render, interval ? interval->unattributed : NULL,
			    render.unattributed_count);
	render_node_wire(&render);
	render_health(&render, interval, active_steps, series);
	append(&render.out, "", 1); /* the terminating NUL */
	if (render.out.failed)
		goto fail;

	free(render.steps);
	free(render.arena.data);
	free(render.wire_rows);
	free(render.wire_groups);
	free(render.node_rows);
	free(render.node_groups);
	metrics->last_length = render.out.length;
	*text = render.out.data;
	*length = render.out.length - 1;
	return 0;
fail:
	free(render.steps);
	free(render.arena.data);
	free(render.wire_rows);
	free(render.wire_groups);
	free(render.node_rows);
	free(render.node_groups);
	free(render.out.data);
	return -1;
}

/* ---- life cycle ------------------------------------------------------------------ */

void vnfs_metrics_job_finished(struct vnfs_metrics *metrics, const struct vnfs_job *job)
{
	for (size_t i = 0; i < job->step_count; i++)
		retain_step(metrics, &job->steps[i]);
}

uint64_t vnfs_metrics_series_capped(const struct vnfs_metrics *metrics)
{
	return metrics->series_capped;
}

/* The text of an exact bound, formatted once. */
static void format_bound(char *out, size_t size, uint64_t value, bool seconds)
{
	struct text text = { 0 };

	if (seconds)
		append_seconds(&text, value);
	else
		append_u64(&text, value);
	snprintf(out, size, "%.*s", text.failed ? 0 : (int)text.length, text.data ? text.data : "");
	free(text.data);
}

struct vnfs_metrics *vnfs_metrics_new(const struct vnfs_config *config, char *error,
				      size_t error_size)
{
	struct vnfs_metrics *metrics = calloc(1, sizeof(*metrics));

	if (!metrics) {
		snprintf(error, error_size, "prometheus: out of memory");
		return NULL;
	}
	metrics->grace_period_ms = config->prometheus.grace_period_s * 1000u;
	metrics->max_series = config->prometheus.max_series;
	if (config->prometheus.tag_label_count > VNFS_CONFIG_MAX_LIST) {
		snprintf(error, error_size, "prometheus: more than %d tag labels",
			 VNFS_CONFIG_MAX_LIST);
		goto fail;
	}
	for (size_t i = 0; i < config->prometheus.tag_label_count; i++) {
		const char *name = config->prometheus.tag_labels[i];
		char *label = metrics->tag_label_names[i];

		if (!vnfs_tag_name_valid(name)) {
			snprintf(error, error_size, "prometheus: tag_labels: '%s' is not a tag name",
				 name);
			goto fail;
		}
		snprintf(metrics->tag_names[i], sizeof(metrics->tag_names[i]), "%s", name);
		snprintf(label, sizeof(metrics->tag_label_names[i]), "tag_%s", name);
		for (char *c = label; *c; c++)
			if (*c >= 'A' && *c <= 'Z')
				*c = (char)(*c - 'A' + 'a');
		for (size_t j = 0; j < i; j++) {
			if (strcmp(metrics->tag_label_names[j], label) == 0) {
				snprintf(error, error_size,
					 "prometheus: tag_labels: '%s' and '%s' both become label %s",
					 metrics->tag_names[j], name, label);
				goto fail;
			}
		}
	}
	metrics->tag_label_count = config->prometheus.tag_label_count;

	for (int i = 0; i < LATENCY_EXPOSED; i++)
		format_bound(metrics->latency_bounds[i], sizeof(metrics->latency_bounds[i]),
			     (uint64_t)1 << (LATENCY_FIRST_INDEX + i * LATENCY_INDEX_STEP + 1), true);
	for (int i = 0; i < SIZE_EXPOSED; i++)
		format_bound(metrics->size_bounds[i], sizeof(metrics->size_bounds[i]),
			     ((uint64_t)1 << (SIZE_FIRST_INDEX + i + 1)) - 1, false);
	for (int op = 0; op < VNFS_OP_COUNT; op++) {
		int length = snprintf(metrics->operation_labels[op], sizeof(metrics->operation_labels[op]),
				      ",op=\"%s\"", vnfs_operation_names[op]);
		metrics->operation_label_lengths[op] = (size_t)length;
	}
	for (int direction = 0; direction < VNFS_DIRECTIONS; direction++)
		snprintf(metrics->direction_labels[direction], sizeof(metrics->direction_labels[direction]),
			 ",direction=\"%s\"", direction_names[direction]);
	return metrics;
fail:
	free(metrics);
	return NULL;
}

void vnfs_metrics_free(struct vnfs_metrics *metrics)
{
	if (!metrics)
		return;
	for (size_t i = 0; i < metrics->retained_count; i++)
		vnfs_step_record_free_arrays(&metrics->retained[i]);
	free(metrics->retained);
	free(metrics);
}
