/*
 * fuzz_postgresql_spool.c — libFuzzer target for the PostgreSQL output's
 * spool reader (helper/outputs/postgresql_spool.c): the file a root daemon
 * replays after an outage, which a damaged disk or a planted file could
 * hold anything in.
 *
 * The input is the spool file's bytes.  It is read a few lines at a time,
 * as the writer replays it, and every line is parsed as a record.  Checked
 * beyond the sanitizers: lines are whole (no newline inside, as long as
 * said), the reader never reports more than it was asked for, and stops
 * before an unfinished last line; a refused record says why and is left
 * empty; a parsed one is of a known type with a terminated identity.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helper/outputs/postgresql_spool.h"

#define BATCH 3

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_record(const char *line, size_t length)
{
	struct vnfs_spool_record record;
	char error[256] = "";

	if (vnfs_spool_record_parse(line, length, &record, error, sizeof(error)) != 0) {
		if (error[0] == '\0' || record.step.stats != NULL || record.job.steps != NULL)
			abort();
		return;
	}
	if (record.type == VNFS_SPOOL_STEP) {
		if (memchr(record.step.workload.job, '\0', sizeof(record.step.workload.job)) == NULL)
			abort();
	} else if (record.type == VNFS_SPOOL_JOB) {
		if (memchr(record.job.workload.job, '\0', sizeof(record.job.workload.job)) == NULL)
			abort();
	} else {
		abort();
	}
	vnfs_spool_record_free(&record);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vnfs_spool_lines lines = { 0 };
	size_t skipped = 0;
	long count;

	if (size == 0)
		return 0;
	FILE *file = fmemopen((void *)data, size, "r");
	if (file == NULL)
		return 0;
	while ((count = vnfs_spool_read_lines(file, BATCH, &lines, &skipped)) > 0) {
		if (count > BATCH || lines.count != (size_t)count)
			abort();
		for (size_t i = 0; i < lines.count; i++) {
			if (lines.lengths[i] == 0 || strlen(lines.lines[i]) > lines.lengths[i] ||
			    memchr(lines.lines[i], '\n', lines.lengths[i]) != NULL)
				abort();
			check_record(lines.lines[i], lines.lengths[i]);
		}
		vnfs_spool_lines_clear(&lines, 1);
	}
	if (count < 0)
		abort();
	/* What is left unread is an unfinished last line, or nothing. */
	long at = ftell(file);
	if (at < 0 || (size_t)at > size || memchr(data + at, '\n', size - (size_t)at) != NULL)
		abort();
	vnfs_spool_lines_clear(&lines, 0);
	fclose(file);
	return 0;
}
