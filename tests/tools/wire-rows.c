/*
 * wire-rows — test tool: the kernel's RPC rows (the pinned wire_stats map,
 * bpf/wire.h), one line each, for guest suites to compare with mountstats:
 *
 *   wire-rows PINNED_WIRE_STATS
 *
 * prints "slot device version procedure owner_kind owner_id rpcs
 * transmissions major_timeouts bytes_sent bytes_received errors" per row.
 * Read in batches, with the structs of bpf/wire.h: bpftool's JSON of a
 * flood's 4,600 rows (each value 1,056 bytes as hex strings) is 31 MB, and
 * parsing it took minutes in the emulated guest.  Its own reader, not the
 * helper's (helper/kernel/maps.c): the suites check the helper against it.
 * Exit status: 0 the rows printed, 1 an error (named on stderr).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "bpf/wire.h"

#define BATCH 256

static void print_row(const struct vnfs_wire_key *key, const struct vnfs_wire_stats *stats)
{
	printf("%" PRIu32 " %" PRIu32 " %u %u %" PRIu32 " %llu %llu %llu %llu %llu %llu %llu\n",
	       key->slot, key->device, (unsigned)key->version, (unsigned)key->procedure,
	       key->owner_kind, (unsigned long long)key->owner_id,
	       (unsigned long long)stats->rpcs, (unsigned long long)stats->transmissions,
	       (unsigned long long)stats->major_timeouts, (unsigned long long)stats->bytes_sent,
	       (unsigned long long)stats->bytes_received, (unsigned long long)stats->errors);
}

int main(int argc, char **argv)
{
	static struct vnfs_wire_key keys[BATCH];
	static struct vnfs_wire_stats values[BATCH];
	uint64_t position = 0, next = 0;
	int fd, status;

	if (argc != 2) {
		fprintf(stderr, "usage: wire-rows PINNED_WIRE_STATS\n");
		return 1;
	}
	fd = bpf_obj_get(argv[1]);
	if (fd < 0) {
		fprintf(stderr, "wire-rows: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	for (int first = 1;; first = 0) {
		__u32 count = BATCH;

		status = bpf_map_lookup_batch(fd, first ? NULL : &position, &next, keys, values,
					      &count, NULL);
		if (status != 0 && errno != ENOENT) {
			fprintf(stderr, "wire-rows: reading %s: %s\n", argv[1], strerror(errno));
			return 1;
		}
		for (__u32 i = 0; i < count; i++)
			print_row(&keys[i], &values[i]);
		if (status != 0)
			break;
		position = next;
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
