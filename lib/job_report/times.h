/*
 * times.h — the time forms vnfs-report reads (-S/-E, like sacct) and writes
 * (Start, End, Elapsed, durations and sizes).
 */
#ifndef VNFS_JOB_REPORT_TIMES_H
#define VNFS_JOB_REPORT_TIMES_H

#include <stddef.h>
#include <stdint.h>

/*
 * Parses, in local time: YYYY-MM-DD[THH:MM[:SS]], HH:MM[:SS] (today),
 * now, now{+|-}N[seconds|minutes|hours|days|weeks] (seconds by default;
 * singular forms and s/m/h/d/w also accepted).  now_ms is "now".  Returns 0,
 * or -1 with a message in error.
 */
int report_parse_time(const char *text, int64_t now_ms, int64_t *time_ms, char *error,
		      size_t error_size);

/* "2026-11-29T17:09:16" in local time, like sacct. */
void report_format_time(int64_t time_ms, char *buf, size_t size);

/* "00:02:10", "1-02:03:04" ([D-]HH:MM:SS, like sacct's Elapsed). */
void report_format_elapsed(int64_t elapsed_ms, char *buf, size_t size);

/* "512", "8M", "1.50G": powers of 1024, two decimals unless exact. */
void report_format_bytes(uint64_t bytes, char *buf, size_t size);

/* The same number in a sentence, with its unit: "512 B", "8 MiB",
 * "1.50 GiB" (a finding's "the average write is 2" said nothing). */
void report_format_size(uint64_t bytes, char *buf, size_t size);

/* "830ns", "24.58us", "1.57ms", "2.10s". */
void report_format_duration(uint64_t ns, char *buf, size_t size);

/* The wall clock in ms since the epoch. */
int64_t report_now_ms(void);

/* Milliseconds of CLOCK_MONOTONIC, for deadlines (never steps back). */
int64_t report_monotonic_ms(void);

#endif /* VNFS_JOB_REPORT_TIMES_H */
