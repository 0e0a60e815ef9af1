/*
 * fields.h — the columns of vnfs-report (-o/--format), like sacct's fields:
 * their names, default widths and how each is computed from a row, and the
 * three output layouts (aligned table, -p and -P).
 */
#ifndef VNFS_JOB_REPORT_FIELDS_H
#define VNFS_JOB_REPORT_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "lib/job_report/rows.h"

#define REPORT_MAX_COLUMNS 64
/* A field's text before escaping (report_print_row escapes every cell). */
#define REPORT_CELL_MAX 1024
#define REPORT_DEFAULT_FORMAT \
	"JobID,User,Tags,Elapsed,ReadBytes,WriteBytes,ReadOps,WriteOps,MetaOps,Errors,State"

struct report_column {
	int field;      /* index into the field table */
	int width;      /* characters in the aligned table */
};

struct report_format {
	size_t count;
	struct report_column columns[REPORT_MAX_COLUMNS];
};

enum report_layout {
	REPORT_LAYOUT_TABLE,     /* aligned, human-readable units */
	REPORT_LAYOUT_PARSABLE,  /* -p: '|' after every field, raw numbers */
	REPORT_LAYOUT_PARSABLE2, /* -P: '|' between fields, raw numbers */
};

/*
 * Parses "JobID,ReadBytes%12,...": names case-insensitive, %N sets the
 * width.  Returns 0, or -1 with a message in error naming the bad field and
 * listing the valid ones.
 */
int report_parse_format(const char *text, struct report_format *format, char *error,
			size_t error_size);

/* The header (and its dashes line in a table). */
void report_print_header(FILE *out, const struct report_format *format,
			 enum report_layout layout);

/*
 * One row.  now_ms is the end of a running row's Elapsed.  Every cell is
 * escaped for the terminal (lib/escape.h), and in -p/-P '|' too, so a field
 * never adds a row or a column.
 */
void report_print_row(FILE *out, const struct report_format *format, enum report_layout layout,
		      const struct report_row *row, int64_t now_ms);

/* -e/--helpformat: every field name, in columns like sacct. */
void report_print_field_names(FILE *out);

/* One field's text, as a layout shows it (the table's before width), unescaped. */
void report_field_text(int field, const struct report_row *row, bool raw, int64_t now_ms,
		       char *buf, size_t size);

/* The field index of name (case-insensitive), or -1. */
int report_field_index(const char *name);

#endif /* VNFS_JOB_REPORT_FIELDS_H */
