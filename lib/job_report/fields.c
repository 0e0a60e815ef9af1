/*
 * fields.c — vnfs-report's columns.  One table names every field once: its
 * header, default width, alignment and the function that computes it; the
 * format parser, the header, the rows and --helpformat all read that table.
 *
 * Numbers: the aligned table shows sizes in powers of 1024 (8M, 1.50G) and
 * latencies with a unit (1.57ms); -p and -P show raw integers (bytes,
 * nanoseconds) so scripts never parse units.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/escape.h"
#include "lib/job_report/fields.h"
#include "lib/job_report/times.h"

typedef void (*field_fn)(const struct report_row *row, bool raw, int64_t now_ms, char *buf,
			 size_t size);

struct field {
	const char *name;
	int width;
	bool left;       /* left-aligned (text); numbers are right-aligned */
	field_fn text;
};

static void put_count(uint64_t value, char *buf, size_t size)
{
	snprintf(buf, size, "%" PRIu64, value);
}

static void put_bytes(uint64_t value, bool raw, char *buf, size_t size)
{
	if (raw)
		put_count(value, buf, size);
	else
		report_format_bytes(value, buf, size);
}

static void put_latency(uint64_t ns, bool raw, char *buf, size_t size)
{
	if (raw)
		put_count(ns, buf, size);
	else
		report_format_duration(ns, buf, size);
}

static const struct vnfs_operation_stats *op(const struct report_row *row, int operation)
{
	return &row->stats.operations[operation];
}

static void field_job_id(const struct report_row *row, bool raw, int64_t now, char *buf,
			 size_t size)
{
	(void)raw, (void)now;
	report_row_id(row, buf, size);
}

static void field_user(const struct report_row *row, bool raw, int64_t now, char *buf,
		       size_t size)
{
	(void)raw, (void)now;
	snprintf(buf, size, "%s", row->user);
}

static void field_tags(const struct report_row *row, bool raw, int64_t now, char *buf,
		       size_t size)
{
	(void)raw, (void)now;
	vnfs_tags_format(&row->tags, buf, size);
}

static void field_nodes(const struct report_row *row, bool raw, int64_t now, char *buf,
			size_t size)
{
	(void)raw, (void)now;
	snprintf(buf, size, "%s", row->nodes);
}

static void field_start(const struct report_row *row, bool raw, int64_t now, char *buf,
			size_t size)
{
	(void)raw, (void)now;
	report_format_time(row->start_time_ms, buf, size);
}

static void field_end(const struct report_row *row, bool raw, int64_t now, char *buf,
		      size_t size)
{
	(void)raw, (void)now;
	if (row->running || row->end_time_ms == 0)
		snprintf(buf, size, "Unknown");
	else
		report_format_time(row->end_time_ms, buf, size);
}

static void field_elapsed(const struct report_row *row, bool raw, int64_t now, char *buf,
			  size_t size)
{
	(void)raw;
	int64_t end = row->running || row->end_time_ms == 0 ? now : row->end_time_ms;
	report_format_elapsed(end - row->start_time_ms, buf, size);
}

static void field_read_bytes(const struct report_row *row, bool raw, int64_t now, char *buf,
			     size_t size)
{
	(void)now;
	put_bytes(op(row, VNFS_OP_READ)->bytes, raw, buf, size);
}

static void field_write_bytes(const struct report_row *row, bool raw, int64_t now, char *buf,
			      size_t size)
{
	(void)now;
	put_bytes(op(row, VNFS_OP_WRITE)->bytes, raw, buf, size);
}

static void field_read_ops(const struct report_row *row, bool raw, int64_t now, char *buf,
			   size_t size)
{
	(void)raw, (void)now;
	put_count(op(row, VNFS_OP_READ)->count, buf, size);
}

static void field_write_ops(const struct report_row *row, bool raw, int64_t now, char *buf,
			    size_t size)
{
	(void)raw, (void)now;
	put_count(op(row, VNFS_OP_WRITE)->count, buf, size);
}

static void field_meta_ops(const struct report_row *row, bool raw, int64_t now, char *buf,
			   size_t size)
{
	(void)raw, (void)now;
	put_count(report_metadata_ops(&row->stats), buf, size);
}

static void field_errors(const struct report_row *row, bool raw, int64_t now, char *buf,
			 size_t size)
{
	(void)raw, (void)now;
	put_count(report_total_errors(&row->stats), buf, size);
}

static void average_size(const struct vnfs_operation_stats *stats, bool raw, char *buf,
			 size_t size)
{
	put_bytes(stats->count > 0 ? stats->bytes / stats->count : 0, raw, buf, size);
}

static void field_avg_read_size(const struct report_row *row, bool raw, int64_t now, char *buf,
				size_t size)
{
	(void)now;
	average_size(op(row, VNFS_OP_READ), raw, buf, size);
}

static void field_avg_write_size(const struct report_row *row, bool raw, int64_t now,
				 char *buf, size_t size)
{
	(void)now;
	average_size(op(row, VNFS_OP_WRITE), raw, buf, size);
}

/* An unknown quantile (report_latency_known) is an empty cell, as sacct
 * leaves a field it has no value for. */
static void quantile(const struct report_row *row, int operation, double q, bool raw,
		     char *buf, size_t size)
{
	if (!report_latency_known(op(row, operation))) {
		snprintf(buf, size, "%s", "");
		return;
	}
	put_latency(vnfs_histogram_quantile(op(row, operation)->latency_histogram,
					    VNFS_LATENCY_BUCKETS, q),
		    raw, buf, size);
}

static void field_read_p50(const struct report_row *row, bool raw, int64_t now, char *buf,
			   size_t size)
{
	(void)now;
	quantile(row, VNFS_OP_READ, 0.50, raw, buf, size);
}

static void field_read_p99(const struct report_row *row, bool raw, int64_t now, char *buf,
			   size_t size)
{
	(void)now;
	quantile(row, VNFS_OP_READ, 0.99, raw, buf, size);
}

static void field_write_p50(const struct report_row *row, bool raw, int64_t now, char *buf,
			    size_t size)
{
	(void)now;
	quantile(row, VNFS_OP_WRITE, 0.50, raw, buf, size);
}

static void field_write_p99(const struct report_row *row, bool raw, int64_t now, char *buf,
			    size_t size)
{
	(void)now;
	quantile(row, VNFS_OP_WRITE, 0.99, raw, buf, size);
}

static void field_meta_p99(const struct report_row *row, bool raw, int64_t now, char *buf,
			   size_t size)
{
	(void)now;
	if (!report_metadata_latency_known(&row->stats)) {
		snprintf(buf, size, "%s", "");
		return;
	}
	put_latency(report_metadata_quantile(&row->stats, 0.99), raw, buf, size);
}

static void field_mmap_read_bytes(const struct report_row *row, bool raw, int64_t now,
				  char *buf, size_t size)
{
	(void)now;
	put_bytes(op(row, VNFS_OP_MMAP_READ)->bytes, raw, buf, size);
}

static void field_top_process(const struct report_row *row, bool raw, int64_t now, char *buf,
			      size_t size)
{
	(void)raw, (void)now;
	snprintf(buf, size, "%s", row->process_count > 0 ? row->processes[0].comm : "");
}

static void field_mounts(const struct report_row *row, bool raw, int64_t now, char *buf,
			 size_t size)
{
	(void)raw, (void)now;
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < row->mount_count && used < size; i++) {
		const struct vnfs_mount_record *m = &row->mounts[i];
		used += (size_t)snprintf(buf + used, size - used, "%s%s", i > 0 ? "," : "",
					 m->mount_point[0] != '\0' ? m->mount_point : m->source);
	}
}

static void field_state(const struct report_row *row, bool raw, int64_t now, char *buf,
			size_t size)
{
	(void)raw, (void)now;
	snprintf(buf, size, "%s", row->running ? "RUNNING" : "COMPLETED");
}

static const struct field fields[] = {
	{ "JobID", 12, true, field_job_id },
	{ "User", 9, false, field_user },
	{ "Tags", 24, true, field_tags },
	{ "Nodes", 15, true, field_nodes },
	{ "Start", 19, false, field_start },
	{ "End", 19, false, field_end },
	{ "Elapsed", 10, false, field_elapsed },
	{ "ReadBytes", 10, false, field_read_bytes },
	{ "WriteBytes", 10, false, field_write_bytes },
	{ "ReadOps", 10, false, field_read_ops },
	{ "WriteOps", 10, false, field_write_ops },
	{ "MetaOps", 10, false, field_meta_ops },
	{ "Errors", 8, false, field_errors },
	{ "AvgReadSize", 11, false, field_avg_read_size },
	{ "AvgWriteSize", 12, false, field_avg_write_size },
	{ "ReadP50", 10, false, field_read_p50 },
	{ "ReadP99", 10, false, field_read_p99 },
	{ "WriteP50", 10, false, field_write_p50 },
	{ "WriteP99", 10, false, field_write_p99 },
	{ "MetaP99", 10, false, field_meta_p99 },
	{ "MmapReadBytes", 13, false, field_mmap_read_bytes },
	{ "TopProcess", 15, true, field_top_process },
	{ "Mounts", 24, true, field_mounts },
	{ "State", 10, false, field_state },
};

#define FIELD_COUNT ((int)(sizeof(fields) / sizeof(fields[0])))

int report_field_index(const char *name)
{
	for (int i = 0; i < FIELD_COUNT; i++)
		if (strcasecmp(fields[i].name, name) == 0)
			return i;
	return -1;
}

static void list_fields(char *buf, size_t size)
{
	size_t used = 0;
	buf[0] = '\0';
	for (int i = 0; i < FIELD_COUNT && used < size; i++)
		used += (size_t)snprintf(buf + used, size - used, "%s%s", i > 0 ? " " : "",
					 fields[i].name);
}

int report_parse_format(const char *text, struct report_format *format, char *error,
			size_t error_size)
{
	char copy[1024];
	if (snprintf(copy, sizeof(copy), "%s", text) >= (int)sizeof(copy)) {
		snprintf(error, error_size, "format list too long");
		return -1;
	}
	format->count = 0;
	char *save = NULL;
	for (char *item = strtok_r(copy, ",", &save); item != NULL;
	     item = strtok_r(NULL, ",", &save)) {
		char *percent = strchr(item, '%');
		int width = -1;
		if (percent != NULL) {
			*percent = '\0';
			char *end;
			long value = strtol(percent + 1, &end, 10);
			if (percent[1] == '\0' || *end != '\0' || value < 1 || value > 1000) {
				snprintf(error, error_size,
					 "bad width '%.20s' for field %.40s: use 1 to 1000",
					 percent + 1, item);
				return -1;
			}
			width = (int)value;
		}
		int field = report_field_index(item);
		if (field < 0) {
			char valid[512];
			list_fields(valid, sizeof(valid));
			snprintf(error, error_size, "unknown field '%.40s'; valid fields: %s", item,
				 valid);
			return -1;
		}
		if (format->count == REPORT_MAX_COLUMNS) {
			snprintf(error, error_size, "more than %d fields", REPORT_MAX_COLUMNS);
			return -1;
		}
		format->columns[format->count++] = (struct report_column){
			.field = field, .width = width > 0 ? width : fields[field].width };
	}
	if (format->count == 0) {
		snprintf(error, error_size, "empty format: name at least one field");
		return -1;
	}
	return 0;
}

/*
 * Where to cut text to at most limit bytes: never inside a UTF-8 character
 * or a \xNN escape, which would leave a broken character or a "\x1" that
 * reads as something else.
 */
static int cut_length(const char *text, int limit)
{
	int cut = limit;

	while (cut > 0 && ((unsigned char)text[cut] & 0xc0) == 0x80)
		cut--;
	for (int back = 1; back < VNFS_ESCAPE_GROWTH && back <= cut; back++)
		if (text[cut - back] == '\\' && text[cut - back + 1] == 'x')
			return cut - back;
	return cut;
}

/* sacct's cell: padded to width, or cut with a '+' marking the cut. */
static void print_cell(FILE *out, const char *text, int width, bool left)
{
	int length = (int)strlen(text);
	if (length > width) {
		int cut = cut_length(text, width - 1);
		int padding = width - 1 - cut; /* a cut shortened to a whole escape */

		if (left)
			fprintf(out, "%.*s+%*s", cut, text, padding, "");
		else
			fprintf(out, "%*s%.*s+", padding, "", cut, text);
	} else if (left)
		fprintf(out, "%-*s", width, text);
	else
		fprintf(out, "%*s", width, text);
}

static void print_cells(FILE *out, const struct report_format *format,
			enum report_layout layout, const char *const *texts)
{
	for (size_t i = 0; i < format->count; i++) {
		const struct report_column *column = &format->columns[i];
		if (layout == REPORT_LAYOUT_TABLE) {
			if (i > 0)
				fputc(' ', out);
			print_cell(out, texts[i], column->width, fields[column->field].left);
		} else {
			fputs(texts[i], out);
			if (layout == REPORT_LAYOUT_PARSABLE || i + 1 < format->count)
				fputc('|', out);
		}
	}
	fputc('\n', out);
}

void report_print_header(FILE *out, const struct report_format *format,
			 enum report_layout layout)
{
	const char *names[REPORT_MAX_COLUMNS];
	for (size_t i = 0; i < format->count; i++)
		names[i] = fields[format->columns[i].field].name;
	print_cells(out, format, layout, names);
	if (layout != REPORT_LAYOUT_TABLE)
		return;
	for (size_t i = 0; i < format->count; i++) {
		if (i > 0)
			fputc(' ', out);
		for (int c = 0; c < format->columns[i].width; c++)
			fputc('-', out);
	}
	fputc('\n', out);
}

void report_field_text(int field, const struct report_row *row, bool raw, int64_t now_ms,
		       char *buf, size_t size)
{
	if (field < 0 || field >= FIELD_COUNT) {
		snprintf(buf, size, "?");
		return;
	}
	fields[field].text(row, raw, now_ms, buf, size);
}

/*
 * Every cell is escaped here, whatever field it holds: tags, user and node
 * names, process names and paths come from users or from report files that
 * may hold anything, and a control byte would reach the administrator's
 * terminal, a newline or a '|' would forge a row or a column of -p/-P.
 */
void report_print_row(FILE *out, const struct report_format *format, enum report_layout layout,
		      const struct report_row *row, int64_t now_ms)
{
	static char cells[REPORT_MAX_COLUMNS][REPORT_CELL_MAX * VNFS_ESCAPE_GROWTH];
	char text[REPORT_CELL_MAX];
	const char *texts[REPORT_MAX_COLUMNS];
	bool raw = layout != REPORT_LAYOUT_TABLE;
	enum vnfs_escape_rule rule = raw ? VNFS_ESCAPE_PARSABLE : VNFS_ESCAPE_TERMINAL;

	for (size_t i = 0; i < format->count; i++) {
		report_field_text(format->columns[i].field, row, raw, now_ms, text, sizeof(text));
		texts[i] = vnfs_escape_string(rule, text, cells[i], sizeof(cells[i]));
	}
	print_cells(out, format, layout, texts);
}

void report_print_field_names(FILE *out)
{
	for (int i = 0; i < FIELD_COUNT; i++) {
		bool last_in_line = i % 5 == 4 || i + 1 == FIELD_COUNT;
		fprintf(out, last_in_line ? "%s\n" : "%-16s", fields[i].name);
	}
}
