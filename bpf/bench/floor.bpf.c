// SPDX-License-Identifier: GPL-2.0
/*
 * floor.bpf.c — the benchmark's floor: an empty fentry and an empty fexit.
 *
 * tests/bench/bench-loader loads this pair once per function vnfs hooks
 * (helper/kernel/hooks.c), each copy with its own target, so what they add to an
 * NFS call is the price of the trampoline itself.  No probe design on
 * fentry/fexit can be cheaper; the budget compares vnfs against this floor
 * (docs/PERFORMANCE.md).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("fentry")
int floor_entry(void *ctx)
{
	return 0;
}

SEC("fexit")
int floor_exit(void *ctx)
{
	return 0;
}
