/*
 * wire.h — what a job's RPCs say (the wire rows of its records, bpf/wire.h):
 * sums by procedure over a row's mounts, means, and the bytes the job moved
 * through the VFS to set them against (the cache line of the long report,
 * and the findings about the server, the network and the cache).
 */
#ifndef VNFS_JOB_REPORT_WIRE_H
#define VNFS_JOB_REPORT_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/job_report/rows.h"

/* Sends beyond the first of each RPC (0 if a row has fewer sends than
 * RPCs, which only a broken record has). */
uint64_t report_wire_retransmissions(const struct vnfs_wire_stats *stats);

/* sum_ns / rpcs, 0 without RPCs. */
uint64_t report_wire_mean_ns(uint64_t sum_ns, uint64_t rpcs);

/* The error kind (enum vnfs_wire_error) most errors were, or -1 without errors. */
int report_wire_top_error(const struct vnfs_wire_stats *stats);

/* READ, WRITE and COMMIT move data; every other procedure is metadata. */
bool report_wire_is_data(const char *procedure);

/* Sums of row's wire rows over all its mounts: of one procedure (as
 * mountstats names it), of the metadata procedures, of all. */
void report_wire_procedure(const struct report_row *row, const char *procedure,
			   struct vnfs_wire_stats *sum);
void report_wire_metadata(const struct report_row *row, struct vnfs_wire_stats *sum);
void report_wire_total(const struct report_row *row, struct vnfs_wire_stats *sum);

/* Whether row has a wire row with RPCs: the wire section is shown. */
bool report_wire_any(const struct report_row *row);

/* Mount points (distinct) of row's wire rows with RPCs. */
size_t report_wire_mount_count(const struct report_row *row);

/* Bytes the job read through the VFS (read() and mmap/splice reads) and
 * wrote (write()): what the page cache was asked for. */
uint64_t report_vfs_read_bytes(const struct report_row *row);
uint64_t report_vfs_write_bytes(const struct report_row *row);

#endif /* VNFS_JOB_REPORT_WIRE_H */
