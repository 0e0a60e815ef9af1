/*
 * summary.c — the vnfs line of a job's SystemComment: made from a job row,
 * written, found among other tools' lines, read back (a parser of text that
 * any administrator, and so any tool with Slurm's admin rights, may have
 * written: tests/fuzz/fuzz_accounting_summary.c), and turned into a row.
 */
#include "lib/slurm_accounting/summary.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/escape.h"
#include "lib/log.h"

/* ---- making it ---- */

static bool node_reported(const struct report_row *job, const char *node)
{
	for (size_t i = 0; i < job->record_count; i++)
		if (strcmp(job->records[i]->node, node) == 0)
			return true;
	return false;
}

/* Appends ",name" (or "name") to missing while the whole name fits. */
static void name_missing(char *missing, size_t size, const char *node)
{
	size_t used = strlen(missing);
	size_t need = strlen(node) + (used > 0 ? 1 : 0);
	if (used + need < size)
		snprintf(missing + used, size - used, "%s%s", used > 0 ? "," : "", node);
}

void vnfs_accounting_summarize(const struct report_row *job, const struct report_finding *findings,
			       size_t finding_count, const char *const *expected,
			       size_t expected_count, struct vnfs_accounting_summary *summary)
{
	memset(summary, 0, sizeof(*summary));
	vnfs_tags_init(&summary->tags);
	summary->nodes_expected = (uint32_t)expected_count;
	for (size_t i = 0; i < expected_count; i++) {
		if (job != NULL && node_reported(job, expected[i]))
			summary->nodes_reported++;
		else
			name_missing(summary->missing, sizeof(summary->missing), expected[i]);
	}
	if (job == NULL)
		return;
	summary->tags = job->tags;
	for (int op = 0; op < VNFS_OP_COUNT; op++) {
		const struct vnfs_operation_stats *from = &job->stats.operations[op];
		summary->operations[op] = (struct vnfs_accounting_operation){
			.count = from->count, .bytes = from->bytes,
			.time_ns = from->time_ns, .errors = from->errors };
	}
	/* A rule that fires more than once (slow, per operation) is named once. */
	for (size_t i = 0; i < finding_count; i++) {
		bool named = false;
		for (size_t j = 0; j < summary->finding_count; j++)
			named |= summary->findings[j] == findings[i].rule;
		if (!named && summary->finding_count < VNFS_ACCOUNTING_MAX_FINDINGS)
			summary->findings[summary->finding_count++] = findings[i].rule;
	}
}

/* ---- writing it ---- */

struct line {
	char *text;
	size_t size;
	size_t used;
	bool overflow;
};

__attribute__((format(printf, 2, 3))) static void put(struct line *line, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	int n = vsnprintf(line->text + line->used, line->size - line->used, format, args);
	va_end(args);
	if (n < 0 || (size_t)n >= line->size - line->used)
		line->overflow = true;
	else
		line->used += (size_t)n;
}

int vnfs_accounting_format(const struct vnfs_accounting_summary *summary, char *text, size_t size)
{
	struct line line = { .text = text, .size = size };
	if (size == 0)
		return -1;
	put(&line, "%s nodes=%" PRIu32 "/%" PRIu32, VNFS_ACCOUNTING_FORMAT,
	    summary->nodes_reported, summary->nodes_expected);
	if (summary->missing[0] != '\0')
		put(&line, " missing=%s", summary->missing);
	if (summary->tags.count > 0) {
		char tags[VNFS_TAGS_BUFFER + VNFS_MAX_TAGS];
		put(&line, " tags=%s", vnfs_tags_format(&summary->tags, tags, sizeof(tags)));
	}
	for (int op = 0; op < VNFS_OP_COUNT; op++) {
		const struct vnfs_accounting_operation *o = &summary->operations[op];
		if (vnfs_accounting_operation_empty(o))
			continue;
		put(&line, " %s=%" PRIu64 ":%" PRIu64 ":%" PRIu64 ":%" PRIu64,
		    vnfs_operation_names[op], o->count, o->bytes, o->time_ns, o->errors);
	}
	for (size_t i = 0; i < summary->finding_count; i++)
		put(&line, "%s%s", i == 0 ? " findings=" : ",",
		    report_rule_names[summary->findings[i]]);
	return line.overflow ? -1 : 0;
}

/* ---- reading it ---- */

/* Where the vnfs line of comment starts, and its length; NULL: none. */
static const char *find_line(const char *comment, size_t length, size_t *line_length)
{
	const size_t tag = strlen(VNFS_ACCOUNTING_FORMAT);
	for (size_t at = 0; at < length;) {
		const char *start = comment + at;
		const char *end = memchr(start, '\n', length - at);
		size_t n = end != NULL ? (size_t)(end - start) : length - at;
		if (n >= tag && memcmp(start, VNFS_ACCOUNTING_FORMAT, tag) == 0 &&
		    (n == tag || start[tag] == ' ')) {
			*line_length = n;
			return start;
		}
		at += n + 1;
	}
	return NULL;
}

/* A decimal number, all of text; false on anything else or overflow. */
static bool read_number(const char *text, uint64_t *value)
{
	if (text[0] < '0' || text[0] > '9')
		return false;
	errno = 0;
	char *end;
	unsigned long long n = strtoull(text, &end, 10);
	if (errno != 0 || *end != '\0')
		return false;
	*value = n;
	return true;
}

static bool read_nodes(const char *value, struct vnfs_accounting_summary *summary)
{
	char copy[48];
	uint64_t reported, expected;
	if (strlen(value) >= sizeof(copy))
		return false;
	strcpy(copy, value);
	char *slash = strchr(copy, '/');
	if (slash == NULL)
		return false;
	*slash = '\0';
	if (!read_number(copy, &reported) || !read_number(slash + 1, &expected) ||
	    expected > UINT32_MAX || reported > expected)
		return false;
	summary->nodes_reported = (uint32_t)reported;
	summary->nodes_expected = (uint32_t)expected;
	return true;
}

/* A missing node's name is a host name: letters, digits, '.', '-', '_' and ','. */
static bool read_missing(const char *value, struct vnfs_accounting_summary *summary)
{
	if (strlen(value) >= sizeof(summary->missing) ||
	    strspn(value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_,") !=
		    strlen(value))
		return false;
	strcpy(summary->missing, value);
	return true;
}

static bool read_operation(int op, const char *value, struct vnfs_accounting_summary *summary)
{
	char copy[4 * 21 + 4];
	uint64_t numbers[4];
	if (strlen(value) >= sizeof(copy))
		return false;
	strcpy(copy, value);
	char *field = copy;
	for (int i = 0; i < 4; i++) {
		char *colon = strchr(field, ':');
		if ((colon == NULL) != (i == 3))
			return false;
		if (colon != NULL)
			*colon = '\0';
		if (!read_number(field, &numbers[i]))
			return false;
		field = colon != NULL ? colon + 1 : NULL;
	}
	summary->operations[op] = (struct vnfs_accounting_operation){
		.count = numbers[0], .bytes = numbers[1], .time_ns = numbers[2], .errors = numbers[3] };
	return true;
}

static bool read_findings(const char *value, struct vnfs_accounting_summary *summary)
{
	char copy[512];
	if (strlen(value) >= sizeof(copy))
		return false;
	strcpy(copy, value);
	char *saved = NULL;
	for (char *name = strtok_r(copy, ",", &saved); name != NULL;
	     name = strtok_r(NULL, ",", &saved)) {
		int rule = 0;
		while (rule < REPORT_RULE_COUNT && strcmp(report_rule_names[rule], name) != 0)
			rule++;
		if (rule == REPORT_RULE_COUNT) /* a newer vnfs's rule: not ours to name */
			continue;
		if (summary->finding_count < VNFS_ACCOUNTING_MAX_FINDINGS)
			summary->findings[summary->finding_count++] = (enum report_rule)rule;
	}
	return true;
}

static int operation_named(const char *name)
{
	for (int op = 0; op < VNFS_OP_COUNT; op++)
		if (strcmp(vnfs_operation_names[op], name) == 0)
			return op;
	return -1;
}

/* One KEY=VALUE of the line.  Returns false when a known key's value is bad. */
static bool read_field(char *field, struct vnfs_accounting_summary *summary, bool *have_nodes)
{
	char *equals = strchr(field, '=');
	if (equals == NULL)
		return false;
	*equals = '\0';
	const char *key = field, *value = equals + 1;
	int op = operation_named(key);
	if (op >= 0)
		return read_operation(op, value, summary);
	if (strcmp(key, "nodes") == 0)
		return *have_nodes = read_nodes(value, summary);
	if (strcmp(key, "missing") == 0)
		return read_missing(value, summary);
	if (strcmp(key, "findings") == 0)
		return read_findings(value, summary);
	if (strcmp(key, "tags") == 0) {
		char ignored[256];
		vnfs_tags_init(&summary->tags);
		return vnfs_tags_parse(&summary->tags, value, NULL, NULL, ignored,
				       sizeof(ignored)) == 0;
	}
	return true; /* a key of a newer vnfs */
}

int vnfs_accounting_parse(const char *comment, size_t length,
			  struct vnfs_accounting_summary *summary, char *error, size_t error_size)
{
	size_t line_length = 0;
	const char *start = find_line(comment, length, &line_length);
	memset(summary, 0, sizeof(*summary));
	vnfs_tags_init(&summary->tags);
	if (start == NULL)
		return 0;
	if (line_length >= VNFS_ACCOUNTING_LINE_MAX)
		return vnfs_fail(error, error_size, "its vnfs line is %zu bytes, more than %d",
				 line_length, VNFS_ACCOUNTING_LINE_MAX - 1);
	char *line = malloc(line_length + 1);
	if (line == NULL)
		return vnfs_fail(error, error_size, "out of memory");
	memcpy(line, start, line_length);
	line[line_length] = '\0';

	bool have_nodes = false, good = true;
	char *saved = NULL;
	char *field = strtok_r(line + strlen(VNFS_ACCOUNTING_FORMAT), " ", &saved);
	for (; good && field != NULL; field = strtok_r(NULL, " ", &saved)) {
		char shown[40 * VNFS_ESCAPE_GROWTH + 4];
		vnfs_quote_prefix(field, 40, shown, sizeof(shown));
		good = read_field(field, summary, &have_nodes);
		if (!good)
			vnfs_fail(error, error_size, "its vnfs line has a bad field '%s'", shown);
	}
	free(line);
	if (good && !have_nodes)
		return vnfs_fail(error, error_size, "its vnfs line has no nodes=");
	return good ? 1 : -1;
}

/* ---- keeping the others' lines ---- */

int vnfs_accounting_merge_comment(const char *existing, const char *line, char *out, size_t size)
{
	struct line merged = { .text = out, .size = size };
	if (size == 0)
		return -1;
	out[0] = '\0';
	size_t length = existing != NULL ? strlen(existing) : 0;
	size_t ours = 0;
	const char *old = existing != NULL ? find_line(existing, length, &ours) : NULL;
	for (size_t at = 0; at < length;) {
		const char *start = existing + at;
		const char *end = memchr(start, '\n', length - at);
		size_t n = end != NULL ? (size_t)(end - start) : length - at;
		bool is_ours = old != NULL && start == old;
		if (!is_ours && n > 0)
			put(&merged, "%.*s\n", (int)n, start);
		if (is_ours) /* a second vnfs line, if any, goes too */
			old = find_line(start + n, length - at - n, &ours);
		at += n + 1;
	}
	put(&merged, "%s", line);
	return merged.overflow ? -1 : 0;
}

/* ---- a row for vnfs-report ---- */

void vnfs_accounting_row(const struct vnfs_accounting_summary *summary,
			 const struct vnfs_workload *job, const char *user, uint32_t uid,
			 const char *nodes, int64_t start_time_ms, int64_t end_time_ms,
			 struct report_row *row)
{
	memset(row, 0, sizeof(*row));
	row->workload = *job;
	row->workload.part[0] = '\0';
	row->uid = uid;
	snprintf(row->user, sizeof(row->user), "%s", user);
	snprintf(row->nodes, sizeof(row->nodes), "%s", nodes);
	row->tags = summary->tags;
	row->start_time_ms = start_time_ms;
	row->end_time_ms = end_time_ms;
	row->sample_time_ms = end_time_ms;
	for (int op = 0; op < VNFS_OP_COUNT; op++) {
		const struct vnfs_accounting_operation *from = &summary->operations[op];
		row->stats.operations[op].count = from->count;
		row->stats.operations[op].bytes = from->bytes;
		row->stats.operations[op].time_ns = from->time_ns;
		row->stats.operations[op].errors = from->errors;
	}
}
