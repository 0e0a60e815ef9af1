/*
 * wire.c — sums of a report row's wire rows.  The row's wire rows are
 * already merged over steps and nodes (rows.c); these add them up across
 * mounts for the findings, which judge the job, not a mount.
 */
#include <string.h>

#include "lib/job_report/wire.h"

uint64_t report_wire_retransmissions(const struct vnfs_wire_stats *stats)
{
	return stats->transmissions > stats->rpcs ? stats->transmissions - stats->rpcs : 0;
}

uint64_t report_wire_mean_ns(uint64_t sum_ns, uint64_t rpcs)
{
	return rpcs > 0 ? sum_ns / rpcs : 0;
}

int report_wire_top_error(const struct vnfs_wire_stats *stats)
{
	int top = -1;
	for (int kind = 0; kind < VNFS_WIRE_ERRORS; kind++)
		if (stats->error_kinds[kind] > 0 &&
		    (top < 0 || stats->error_kinds[kind] > stats->error_kinds[top]))
			top = kind;
	return top;
}

bool report_wire_is_data(const char *procedure)
{
	return strcmp(procedure, "READ") == 0 || strcmp(procedure, "WRITE") == 0 ||
	       strcmp(procedure, "COMMIT") == 0;
}

void report_wire_procedure(const struct report_row *row, const char *procedure,
			   struct vnfs_wire_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (size_t i = 0; i < row->wire_count; i++)
		if (strcmp(row->wire[i].procedure, procedure) == 0)
			vnfs_wire_stats_add(sum, &row->wire[i].stats);
}

void report_wire_metadata(const struct report_row *row, struct vnfs_wire_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (size_t i = 0; i < row->wire_count; i++)
		if (!report_wire_is_data(row->wire[i].procedure))
			vnfs_wire_stats_add(sum, &row->wire[i].stats);
}

void report_wire_total(const struct report_row *row, struct vnfs_wire_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (size_t i = 0; i < row->wire_count; i++)
		vnfs_wire_stats_add(sum, &row->wire[i].stats);
}

bool report_wire_any(const struct report_row *row)
{
	for (size_t i = 0; i < row->wire_count; i++)
		if (row->wire[i].stats.rpcs > 0)
			return true;
	return false;
}

size_t report_wire_mount_count(const struct report_row *row)
{
	size_t count = 0;
	/* Rows are sorted by mount point (rows.c): count the changes. */
	const char *last = NULL;
	for (size_t i = 0; i < row->wire_count; i++) {
		const struct vnfs_wire_record *w = &row->wire[i];
		if (w->stats.rpcs == 0 || (last != NULL && strcmp(last, w->mount_point) == 0))
			continue;
		last = w->mount_point;
		count++;
	}
	return count;
}

uint64_t report_vfs_read_bytes(const struct report_row *row)
{
	return row->stats.operations[VNFS_OP_READ].bytes +
	       row->stats.operations[VNFS_OP_MMAP_READ].bytes;
}

uint64_t report_vfs_write_bytes(const struct report_row *row)
{
	return row->stats.operations[VNFS_OP_WRITE].bytes;
}
