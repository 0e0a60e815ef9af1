/*
 * fuzz_prometheus_render.c — libFuzzer target for helper/outputs/metrics.c, the
 * renderer of /metrics.
 *
 * The renderer parses nothing, but what it writes carries bytes users chose:
 * process names (any bytes, via prctl), mount points and servers, tags.  The
 * input is consumed as a description of what the collector could hand it:
 * the prometheus settings (tag labels, max_series, grace period), steps with
 * tags, counters, processes named by raw bytes, mounts and wire rows (mount
 * points often alike, procedures named by raw bytes), unattributed
 * processes, the node's wire rows (background and unattributed RPCs, an
 * owner of any value) and the helper's health; then intervals are noted and rendered
 * as the sink does (steps running, then gone and kept for the grace period).
 *
 * Checked beyond the sanitizers: every rendering is well-formed exposition
 * text (docs/METRICS.md; the Prometheus text format): "# HELP"/"# TYPE"
 * lines and samples "name{label="value",...} number", where a label value
 * holds no raw newline or double quote and no backslash but \\, \" and \n,
 * and the whole text is valid UTF-8; and no per-RPC series (vnfs_rpc* and
 * vnfs_node_rpc*: name and label set) appears twice, as wire rows of one
 * label set are summed
 * (the steps of an interval are made distinct for it, as the collector's
 * are; a step's process names and mounts are not, and other families are
 * not checked).  One user's process name breaking a line, or two series of
 * one label set, would make Prometheus refuse the scrape of every job on the
 * node.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/config.h"
#include "helper/outputs/metrics.h"
#include "lib/record.h"

#define MAX_STEPS 8
#define MAX_PROCESSES 4
#define MAX_MOUNTS 3
#define MAX_WIRE 5
#define MAX_UNATTRIBUTED 3
#define MAX_NODE_WIRE 6

/* A realistic epoch (2026): times come from the helper's clock, not from a
 * user, so they are fuzzed as offsets within days of it. */
#define BASE_TIME_MS 1795000000000ll

struct input {
	const uint8_t *data;
	size_t size;
};

static uint8_t take_byte(struct input *in)
{
	uint8_t byte;

	if (in->size == 0)
		return 0;
	byte = in->data[0];
	in->data++;
	in->size--;
	return byte;
}

/* bytes little-endian bytes as a number (a short count usually: cheap to
 * reach, while 8 bytes reach the extremes that overflow sums). */
static uint64_t take_number(struct input *in, unsigned bytes)
{
	uint64_t value = 0;

	for (unsigned i = 0; i < bytes; i++)
		value |= (uint64_t)take_byte(in) << (8 * i);
	return value;
}

/* A length byte, then up to that many raw bytes (capped at size - 1, so the
 * field stays NUL-terminated unless terminated is false). */
static void take_text(struct input *in, char *out, size_t size, bool terminated)
{
	size_t length = take_byte(in);
	size_t cap = terminated ? size - 1 : size;

	if (length > cap)
		length = cap;
	if (length > in->size)
		length = in->size;
	memset(out, 0, size);
	memcpy(out, in->data, length);
	in->data += length;
	in->size -= length;
}

static const char *const label_tags[] = { "PROJECT", "RUN", "account", "SLURM_JOB_PARTITION" };
#define LABEL_TAGS (sizeof(label_tags) / sizeof(label_tags[0]))

/*
 * Tags either as the real path makes them (vnfs_tags_set: valid names and
 * values only) or packed straight into the list with raw bytes, keeping only
 * its structure (names and values NUL-terminated, within the buffer): the
 * renderer must stay safe even if a value that tags.h forbids reached it.
 */
static void take_tags(struct input *in, struct vnfs_tag_list *tags)
{
	uint8_t mode = take_byte(in);
	unsigned count = mode % 5;
	char error[256];

	vnfs_tags_init(tags);
	for (unsigned i = 0; i < count; i++) {
		char name[VNFS_TAG_NAME_MAX + 1], value[VNFS_TAG_VALUE_MAX + 1];
		uint8_t choice = take_byte(in);

		if (choice < 0x80)
			strcpy(name, label_tags[choice % LABEL_TAGS]);
		else
			take_text(in, name, sizeof(name), true);
		take_text(in, value, sizeof(value), true);
		if (mode & 0x80) {
			size_t name_size = strlen(name) + 1, value_size = strlen(value) + 1;

			if (tags->used + name_size + value_size > VNFS_TAGS_BUFFER ||
			    tags->count == VNFS_MAX_TAGS)
				break;
			memcpy(tags->buffer + tags->used, name, name_size);
			memcpy(tags->buffer + tags->used + name_size, value, value_size);
			tags->used += (unsigned)(name_size + value_size);
			tags->count++;
		} else {
			(void)vnfs_tags_set(tags, name, value, error, sizeof(error));
		}
	}
}

static void take_stats(struct input *in, struct vnfs_step_stats *stats)
{
	unsigned changes = take_byte(in) % 16;

	memset(stats, 0, sizeof(*stats));
	for (unsigned i = 0; i < changes; i++) {
		uint8_t where = take_byte(in);
		uint8_t what = take_byte(in);
		uint64_t value = take_number(in, (what & 0x80) ? 8 : 2);

		if (where >= 0xf0) {
			stats->request_size_histogram[where & 1][what % VNFS_SIZE_BUCKETS] = value;
			continue;
		}
		struct vnfs_operation_stats *op = &stats->operations[where % VNFS_OP_COUNT];
		switch (what % 5) {
		case 0: op->count = value; break;
		case 1: op->errors = value; break;
		case 2: op->time_ns = value; break;
		case 3: op->bytes = value; break;
		default: op->latency_histogram[(what >> 3) % VNFS_LATENCY_BUCKETS] = value; break;
		}
	}
}

static const char *const wire_mounts[] = { "", "/mnt/nfs", "/scratch" };
static const char *const wire_procedures[] = { "READ", "WRITE", "GETATTR" };
#define WIRE_CHOICES 3

/* A wire row: mount points and procedures from short lists, so rows of one
 * label set (another device, another version) come often, or raw bytes (the
 * procedure not NUL-terminated when full: the kernel's p_name, bounded by
 * the renderer); a few counters and histogram buckets. */
static void take_wire(struct input *in, struct vnfs_wire_record *row)
{
	uint8_t choice = take_byte(in);
	unsigned changes;

	memset(row, 0, sizeof(*row));
	row->device = (uint32_t)take_number(in, (choice & 1) ? 4 : 1);
	row->version = (choice & 2) ? 4 : 3;
	if (choice & 4)
		take_text(in, row->mount_point, sizeof(row->mount_point), true);
	else
		strcpy(row->mount_point, wire_mounts[(choice >> 4) % WIRE_CHOICES]);
	if (choice & 8)
		take_text(in, row->procedure, sizeof(row->procedure), false);
	else
		strcpy(row->procedure, wire_procedures[(choice >> 6) % WIRE_CHOICES]);
	row->stats.rpcs = take_number(in, 1);
	row->stats.transmissions = take_number(in, 1);
	changes = take_byte(in) % 8;
	for (unsigned i = 0; i < changes; i++) {
		uint8_t what = take_byte(in);
		uint64_t value = take_number(in, (what & 0x80) ? 8 : 2);
		unsigned bucket = (what >> 3) % VNFS_LATENCY_BUCKETS;

		switch (what % 8) {
		case 0: row->stats.major_timeouts = value; break;
		case 1: row->stats.bytes_sent = value; break;
		case 2: row->stats.bytes_received = value; break;
		case 3: row->stats.rtt_ns = value; break;
		case 4: row->stats.execute_ns = value; break;
		case 5: row->stats.error_kinds[(what >> 3) % VNFS_WIRE_ERRORS] = value; break;
		case 6: row->stats.rtt_histogram[bucket] = value; break;
		default: row->stats.backlog_histogram[bucket] = value; break;
		}
	}
}

static const uint32_t step_ids[] = { 0, 1, 2, VNFS_STEP_BATCH, VNFS_STEP_EXTERN,
				     VNFS_STEP_INTERACTIVE, VNFS_STEP_PENDING, 0xfffffff0u };

struct scenario {
	struct vnfs_step_record steps[MAX_STEPS];
	struct vnfs_tag_list tags[MAX_STEPS]; /* steps[i].tags points to tags[i] */
	struct vnfs_step_stats stats[MAX_STEPS];
	struct vnfs_process_record processes[MAX_STEPS][MAX_PROCESSES];
	struct vnfs_mount_record mounts[MAX_STEPS][MAX_MOUNTS];
	struct vnfs_wire_record wire[MAX_STEPS][MAX_WIRE];
	struct vnfs_unattributed_record unattributed[MAX_UNATTRIBUTED];
	struct vnfs_node_wire_record node_wire[MAX_NODE_WIRE];
	struct vnfs_helper_health health;
	struct vnfs_interval interval;
};

static void take_step(struct input *in, struct scenario *s, size_t i)
{
	struct vnfs_step_record *step = &s->steps[i];
	uint8_t flags = take_byte(in);

	memset(step, 0, sizeof(*step));
	step->job_id = (uint32_t)take_number(in, (flags & 1) ? 4 : 1);
	step->step_id = step_ids[take_byte(in) % (sizeof(step_ids) / sizeof(step_ids[0]))];
	vnfs_record_identify_slurm(step, step->job_id, step->step_id);
	step->uid = (uint32_t)take_number(in, 2);
	take_text(in, step->user, sizeof(step->user), true);
	take_text(in, step->node, sizeof(step->node), true);
	step->cgroup_id = take_number(in, 2);
	take_tags(in, &s->tags[i]);
	step->tags = &s->tags[i];
	step->start_time_ms = BASE_TIME_MS + (int64_t)take_number(in, 3);
	step->sample_time_ms = step->start_time_ms + (int64_t)take_number(in, 3);
	if (flags & 2)
		step->end_time_ms = step->sample_time_ms;
	step->finished = (flags & 4) != 0;
	if (!(flags & 8)) {
		take_stats(in, &s->stats[i]);
		step->stats = &s->stats[i];
	}
	step->process_count = take_byte(in) % (MAX_PROCESSES + 1);
	for (size_t p = 0; p < step->process_count; p++) {
		struct vnfs_process_record *process = &s->processes[i][p];

		/* Raw bytes, not NUL-terminated when full: the renderer bounds it. */
		take_text(in, process->comm, sizeof(process->comm), false);
		process->stats.read_ops = take_number(in, 1);
		process->stats.read_bytes = take_number(in, 2);
		process->stats.write_ops = take_number(in, 1);
		process->stats.write_bytes = take_number(in, 2);
		process->stats.other_ops = take_number(in, 1);
	}
	step->processes = step->process_count ? s->processes[i] : NULL;
	step->mount_count = take_byte(in) % (MAX_MOUNTS + 1);
	for (size_t m = 0; m < step->mount_count; m++) {
		struct vnfs_mount_record *mount = &s->mounts[i][m];

		mount->device = (uint32_t)take_number(in, 4);
		take_text(in, mount->mount_point, sizeof(mount->mount_point), true);
		take_text(in, mount->source, sizeof(mount->source), true);
		take_text(in, mount->version, sizeof(mount->version), true);
		mount->stats.ops = take_number(in, 2);
		mount->stats.errors = take_number(in, 1);
		mount->stats.time_ns = take_number(in, (flags & 16) ? 8 : 3);
		mount->stats.read_bytes = take_number(in, 2);
		mount->stats.write_bytes = take_number(in, 2);
	}
	step->mounts = step->mount_count ? s->mounts[i] : NULL;
	step->wire_count = take_byte(in) % (MAX_WIRE + 1);
	for (size_t w = 0; w < step->wire_count; w++)
		take_wire(in, &s->wire[i][w]);
	step->wire = step->wire_count ? s->wire[i] : NULL;
}

static const char *const sink_names[] = { "sqlite", "prometheus", "jsonlog", "kafka", "http" };

static void take_scenario(struct input *in, struct scenario *s, int64_t now_ms)
{
	uint8_t flags = take_byte(in);

	memset(&s->interval, 0, sizeof(s->interval));
	s->interval.time_ms = now_ms;
	s->interval.node = "node1";
	size_t steps = take_byte(in) % (MAX_STEPS + 1);
	s->interval.step_count = 0;
	for (size_t i = 0; i < steps; i++) {
		size_t at = s->interval.step_count;
		bool again = false;

		take_step(in, s, at);
		/* The collector has one record per workload. */
		for (size_t j = 0; j < at && !again; j++)
			again = vnfs_workload_equal(&s->steps[j].workload, &s->steps[at].workload);
		if (!again)
			s->interval.step_count++;
	}
	s->interval.steps = s->steps;
	s->interval.unattributed_count = take_byte(in) % (MAX_UNATTRIBUTED + 1);
	for (size_t i = 0; i < s->interval.unattributed_count; i++) {
		struct vnfs_unattributed_record *u = &s->unattributed[i];

		memset(u, 0, sizeof(*u));
		u->cgroup_id = take_number(in, 2);
		u->uid = (uint32_t)take_number(in, 2);
		take_text(in, u->comm, sizeof(u->comm), false);
		for (unsigned n = take_byte(in) % 4; n > 0; n--) {
			struct vnfs_unattributed_operation *operation =
				&u->stats.operations[take_byte(in) % VNFS_OP_COUNT];

			operation->count = take_number(in, 2);
			operation->errors = take_number(in, 1);
			operation->bytes = take_number(in, 2);
			operation->time_ns = take_number(in, 2);
		}
	}
	s->interval.unattributed = s->unattributed;
	/* The node's rows: background or unattributed, and now and then an
	 * owner that has no place there (a workload's, or out of range), which
	 * the renderer leaves out. */
	s->interval.node_wire_count = take_byte(in) % (MAX_NODE_WIRE + 1);
	for (size_t i = 0; i < s->interval.node_wire_count; i++) {
		struct vnfs_node_wire_record *node = &s->node_wire[i];
		uint8_t owner = take_byte(in);

		memset(node, 0, sizeof(*node));
		take_wire(in, &node->row);
		if (owner < 0xf0)
			node->owner = (owner & 1) ? VNFS_WIRE_BACKGROUND : VNFS_WIRE_UNATTRIBUTED;
		else
			node->owner = (enum vnfs_wire_owner_kind)(owner % 4);
	}
	s->interval.node_wire = s->interval.node_wire_count ? s->node_wire : NULL;
	if (flags & 1) {
		struct vnfs_helper_health *health = &s->health;

		memset(health, 0, sizeof(*health));
		health->collections = take_number(in, 2);
		health->last_collection_ns = take_number(in, 4);
		for (int c = 0; c < VNFS_HEALTH_COUNTERS; c++)
			health->counters[c] = take_number(in, 1);
		health->active_slots = (uint32_t)take_number(in, 2);
		health->max_slots = (uint32_t)take_number(in, 2);
		for (int op = 0; op < VNFS_OP_COUNT; op++)
			health->attach_method[op] = (enum vnfs_attach_method)(take_byte(in) % 4);
		health->sink_count = take_byte(in) % (VNFS_MAX_SINKS + 2);
		for (unsigned i = 0; i < health->sink_count && i < VNFS_MAX_SINKS; i++) {
			health->sink_names[i] = sink_names[i % (sizeof(sink_names) / sizeof(sink_names[0]))];
			health->sink_dropped[i] = take_number(in, 2);
		}
		s->interval.health = health;
	}
}

/* ---- the property: well-formed exposition text ---------------------------- */

/* The checker is not what is fuzzed: without coverage instrumentation it
 * costs a fraction of the time (it reads every byte of every rendering) and
 * does not steer the fuzzer towards its own branches. */
#define CHECKER __attribute__((no_sanitize("coverage")))

CHECKER static bool name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}

CHECKER static bool name_char(char c)
{
	return name_start(c) || (c >= '0' && c <= '9');
}

CHECKER static const char *skip_name(const char *at, bool metric)
{
	if (!name_start(*at) || (!metric && *at == ':'))
		abort();
	while (name_char(*at) && (metric || *at != ':'))
		at++;
	return at;
}

/* One sample line, line..end (no newline inside by construction). */
CHECKER static void check_sample(const char *line, const char *end)
{
	const char *at = skip_name(line, true);

	if (*at == '{') {
		at++;
		while (*at != '}') {
			at = skip_name(at, false);
			if (at[0] != '=' || at[1] != '"')
				abort();
			at += 2;
			/* The value: to the first unescaped quote on this line. */
			while (at < end && *at != '"') {
				if (*at == '\\') {
					if (at + 1 >= end || (at[1] != '\\' && at[1] != '"' && at[1] != 'n'))
						abort();
					at++;
				}
				at++;
			}
			if (at >= end)
				abort(); /* the value did not end on its line */
			at++;
			if (*at == ',')
				at++;
			else if (*at != '}')
				abort();
		}
		at++;
	}
	if (*at != ' ' || at + 1 >= end)
		abort();
	for (at++; at < end; at++)
		if (!((*at >= '0' && *at <= '9') || *at == '.' || *at == 'e' || *at == '+' ||
		      *at == '-'))
			abort();
}

CHECKER static bool utf8_valid(const unsigned char *s, size_t length)
{
	for (size_t i = 0; i < length;) {
		size_t n;

		if (s[i] < 0x80)
			n = 1;
		else if (s[i] >= 0xc2 && s[i] <= 0xdf)
			n = 2;
		else if (s[i] >= 0xe0 && s[i] <= 0xef)
			n = 3;
		else if (s[i] >= 0xf0 && s[i] <= 0xf4)
			n = 4;
		else
			return false;
		if (i + n > length)
			return false;
		for (size_t k = 1; k < n; k++)
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
		if ((s[i] == 0xe0 && s[i + 1] < 0xa0) || (s[i] == 0xed && s[i + 1] >= 0xa0) ||
		    (s[i] == 0xf0 && s[i + 1] < 0x90) || (s[i] == 0xf4 && s[i + 1] >= 0x90))
			return false;
		i += n;
	}
	return true;
}

CHECKER static void check_exposition(const char *text, size_t length)
{
	if (text[length] != '\0' || strlen(text) != length || length == 0 ||
	    text[length - 1] != '\n' || !utf8_valid((const unsigned char *)text, length))
		abort();
	for (const char *line = text; line < text + length;) {
		const char *end = strchr(line, '\n');

		if (strncmp(line, "# HELP ", 7) == 0 || strncmp(line, "# TYPE ", 7) == 0) {
			const char *after = skip_name(line + 7, true);

			if (*after != ' ')
				abort();
		} else {
			check_sample(line, end);
		}
		line = end + 1;
	}
}

struct series_key {
	const char *at;
	size_t length;
};

CHECKER static int series_compare(const void *a, const void *b)
{
	const struct series_key *x = a, *y = b;
	int order = memcmp(x->at, y->at, x->length < y->length ? x->length : y->length);

	if (order == 0 && x->length != y->length)
		order = x->length < y->length ? -1 : 1;
	return order;
}

/* Every per-RPC sample's name and labels (the line up to its value) differ. */
CHECKER static void check_unique(const char *text, size_t length)
{
	struct series_key *keys = malloc((length / 2 + 1) * sizeof(*keys));
	size_t count = 0;

	if (keys == NULL)
		abort();
	for (const char *line = text; line < text + length;) {
		const char *end = strchr(line, '\n');
		const char *value = end;

		if (strncmp(line, "vnfs_rpc", 8) == 0 || strncmp(line, "vnfs_node_rpc", 13) == 0) {
			while (value > line && value[-1] != ' ')
				value--;
			keys[count].at = line;
			keys[count].length = (size_t)(value - line);
			count++;
		}
		line = end + 1;
	}
	qsort(keys, count, sizeof(*keys), series_compare);
	for (size_t i = 1; i < count; i++)
		if (series_compare(&keys[i - 1], &keys[i]) == 0) {
			abort();
		}
	free(keys);
}

static void render_and_check(struct vnfs_metrics *metrics, const struct vnfs_interval *interval)
{
	char *text = NULL;
	size_t length = 0;

	if (vnfs_metrics_render(metrics, interval, &text, &length) != 0)
		abort(); /* only when out of memory, which the fuzzer's limits avoid */
	check_exposition(text, length);
	check_unique(text, length);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	/* Static: the configuration is large and only its defaults and a few
	 * prometheus keys matter; faulting in fresh pages for it every run
	 * would be a good part of the run. */
	static struct vnfs_config config_storage;
	struct vnfs_config *config = &config_storage;
	struct scenario *scenario = malloc(sizeof(*scenario));
	struct vnfs_metrics *metrics;
	char error[256] = "";
	uint8_t settings;
	int64_t now_ms;

	if (scenario == NULL)
		abort();
	vnfs_config_defaults(config);
	settings = take_byte(&in);
	config->prometheus.tag_label_count = settings % (LABEL_TAGS + 1);
	for (size_t i = 0; i < config->prometheus.tag_label_count; i++)
		strcpy(config->prometheus.tag_labels[i], label_tags[(i + (settings >> 4)) % LABEL_TAGS]);
	config->prometheus.max_series = (settings & 8) ? (uint32_t)take_number(&in, 2) : 0;
	config->prometheus.grace_period_s = take_byte(&in);
	metrics = vnfs_metrics_new(config, error, sizeof(error));
	if (metrics == NULL)
		abort(); /* the labels above are valid and distinct */

	/* An interval with the steps running (or some ended), noted and rendered. */
	now_ms = BASE_TIME_MS + (int64_t)take_number(&in, 3);
	take_scenario(&in, scenario, now_ms);
	vnfs_metrics_update(metrics, &scenario->interval);
	render_and_check(metrics, &scenario->interval);
	if (take_byte(&in) & 1) {
		struct vnfs_job job = {
			.job_id = scenario->interval.step_count ? scenario->steps[0].job_id : 1,
			.user = "user",
			.node = "node1",
			.start_time_ms = now_ms,
			.end_time_ms = now_ms,
			.step_count = scenario->interval.step_count,
			.steps = scenario->steps,
		};
		vnfs_workload_of_slurm_job(&job.workload, job.job_id);
		vnfs_metrics_job_finished(metrics, &job);
	}

	/* Later, with other steps: the ended ones are rendered from the renderer's
	 * own copies until their grace period is over. */
	now_ms += (int64_t)take_number(&in, 2) * 100;
	take_scenario(&in, scenario, now_ms);
	vnfs_metrics_update(metrics, &scenario->interval);
	render_and_check(metrics, &scenario->interval);
	render_and_check(metrics, NULL);

	vnfs_metrics_free(metrics);
	free(scenario);
	return 0;
}
