/*
 * postgresql_spool.h — the PostgreSQL output's records as text lines, and
 * the reader of its spool file (postgresql_spool.c).
 *
 * A record the output queues is one JSON line: {"type":"step","record":...}
 * or {"type":"job","record":...}, the record as lib/record_json.c writes it.
 * The same line is what a batch keeps in memory, what the spool file holds
 * while the server is away, and what the writer parses back before writing:
 * one form, so a replayed record is written exactly as a live one.  The
 * reader reads a file the helper wrote, but a damaged or planted file must
 * not crash a root daemon: it is fuzzed (tests/fuzz/fuzz_postgresql_spool.c).
 */
#ifndef VNFS_POSTGRESQL_SPOOL_H
#define VNFS_POSTGRESQL_SPOOL_H

#include <stddef.h>
#include <stdio.h>

#include "lib/record.h"
#include "lib/record_json.h"

/* The longest line the reader accepts: a step record with every process,
 * mount and wire row is about 400 KiB of JSON. */
#define VNFS_SPOOL_LINE_MAX (4u * 1024 * 1024)

enum vnfs_spool_record_type { VNFS_SPOOL_STEP, VNFS_SPOOL_JOB };

/* A record read back: step (its arrays malloc'd) or job (owned). */
struct vnfs_spool_record {
	enum vnfs_spool_record_type type;
	struct vnfs_step_record step;
	struct vnfs_owned_job job;
};

/* The line of a step record or a job (malloc'd, NUL-terminated, no newline),
 * or NULL when out of memory. */
char *vnfs_spool_step_line(const struct vnfs_step_record *record);
char *vnfs_spool_job_line(const struct vnfs_job *job);

/* Parses one line (length bytes, no newline needed) into *record.  Returns
 * 0 (free with vnfs_spool_record_free), or -1 with why in error (*record is
 * then empty). */
int vnfs_spool_record_parse(const char *line, size_t length, struct vnfs_spool_record *record,
			    char *error, size_t error_size);
void vnfs_spool_record_free(struct vnfs_spool_record *record);

/* Lines read from a spool file, each malloc'd without its newline. */
struct vnfs_spool_lines {
	size_t count;
	size_t capacity;
	char **lines;
	size_t *lengths;
};

/*
 * Reads up to max_lines whole lines from file's position into lines
 * (appending).  A last line without its newline is a write the helper did
 * not finish (it stopped mid-append): it is not read, and the position is
 * left before it.  A line longer than VNFS_SPOOL_LINE_MAX is skipped and
 * counted in *skipped.  Returns the lines read (0 at the end), or -1 (out
 * of memory or a read error; errno says which).
 */
long vnfs_spool_read_lines(FILE *file, size_t max_lines, struct vnfs_spool_lines *lines,
			   size_t *skipped);

/* Frees every line and empties lines (its arrays are kept for reuse when
 * keep_arrays). */
void vnfs_spool_lines_clear(struct vnfs_spool_lines *lines, int keep_arrays);

/* Appends line (taking it) to lines.  Returns 0, or -1 (out of memory:
 * line is freed). */
int vnfs_spool_lines_push(struct vnfs_spool_lines *lines, char *line, size_t length);

#endif /* VNFS_POSTGRESQL_SPOOL_H */
