/*
 * times.c — reading sacct's time forms and writing times, durations and
 * sizes the way sacct shows them.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "lib/job_report/times.h"

#define TIME_FORMS "YYYY-MM-DD[THH:MM[:SS]], HH:MM[:SS] or now[-N{minutes,hours,days,weeks}]"

int64_t report_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t report_monotonic_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const struct {
	const char *name;
	int64_t seconds;
} units[] = {
	{ "seconds", 1 }, { "second", 1 }, { "sec", 1 }, { "s", 1 },
	{ "minutes", 60 }, { "minute", 60 }, { "min", 60 }, { "m", 60 },
	{ "hours", 3600 }, { "hour", 3600 }, { "h", 3600 },
	{ "days", 86400 }, { "day", 86400 }, { "d", 86400 },
	{ "weeks", 604800 }, { "week", 604800 }, { "w", 604800 },
};

static int parse_relative(const char *text, int64_t now_ms, int64_t *time_ms)
{
	if (strncasecmp(text, "now", 3) != 0)
		return -1;
	const char *rest = text + 3;
	if (*rest == '\0') {
		*time_ms = now_ms;
		return 0;
	}
	if (*rest != '-' && *rest != '+')
		return -1;
	int sign = *rest == '-' ? -1 : 1;
	rest++;
	if (!isdigit((unsigned char)*rest))
		return -1;
	char *end;
	errno = 0;
	long long count = strtoll(rest, &end, 10);
	if (errno != 0 || count > 100L * 365 * 86400)
		return -1;
	int64_t seconds = 1;
	if (*end != '\0') {
		size_t i;
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (strcasecmp(end, units[i].name) == 0)
				break;
		if (i == sizeof(units) / sizeof(units[0]))
			return -1;
		seconds = units[i].seconds;
	}
	*time_ms = now_ms + sign * (int64_t)count * seconds * 1000;
	return 0;
}

/* Whole text matched by format, with every field in range. */
static int parse_absolute(const char *text, int64_t now_ms, int64_t *time_ms)
{
	int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, consumed = -1;
	size_t length = strlen(text);
	bool have_date = true;

	if (sscanf(text, "%4d-%2d-%2dT%2d:%2d:%2d%n", &year, &month, &day, &hour, &minute,
		   &second, &consumed) == 6 && (size_t)consumed == length) {
	} else if (consumed = -1, second = 0,
		   sscanf(text, "%4d-%2d-%2dT%2d:%2d%n", &year, &month, &day, &hour, &minute,
			  &consumed) == 5 && (size_t)consumed == length) {
	} else if (consumed = -1, hour = minute = 0,
		   sscanf(text, "%4d-%2d-%2d%n", &year, &month, &day, &consumed) == 3 &&
			   (size_t)consumed == length) {
	} else if (consumed = -1, have_date = false,
		   sscanf(text, "%2d:%2d:%2d%n", &hour, &minute, &second, &consumed) == 3 &&
			   (size_t)consumed == length) {
	} else if (consumed = -1, second = 0,
		   sscanf(text, "%2d:%2d%n", &hour, &minute, &consumed) == 2 &&
			   (size_t)consumed == length) {
	} else {
		return -1;
	}
	/* sscanf accepts signs and spaces: allow only digits and separators. */
	for (const char *c = text; *c != '\0'; c++)
		if (!isdigit((unsigned char)*c) && *c != '-' && *c != ':' && *c != 'T')
			return -1;

	struct tm tm = { 0 };
	if (have_date) {
		tm.tm_year = year - 1900;
		tm.tm_mon = month - 1;
		tm.tm_mday = day;
	} else {
		time_t now = (time_t)(now_ms / 1000);
		if (localtime_r(&now, &tm) == NULL)
			return -1;
	}
	tm.tm_hour = hour;
	tm.tm_min = minute;
	tm.tm_sec = second;
	tm.tm_isdst = -1;
	if (month < 0 || (have_date && (month < 1 || month > 12 || day < 1 || day > 31 ||
					year < 1970)) ||
	    hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59)
		return -1;
	struct tm normalized = tm;
	time_t seconds = mktime(&normalized);
	if (seconds == (time_t)-1 || (have_date && normalized.tm_mday != day))
		return -1; /* 2026-02-30 */
	*time_ms = (int64_t)seconds * 1000;
	return 0;
}

int report_parse_time(const char *text, int64_t now_ms, int64_t *time_ms, char *error,
		      size_t error_size)
{
	if (parse_relative(text, now_ms, time_ms) == 0 ||
	    parse_absolute(text, now_ms, time_ms) == 0)
		return 0;
	snprintf(error, error_size, "invalid time '%s': use %s", text, TIME_FORMS);
	return -1;
}

void report_format_time(int64_t time_ms, char *buf, size_t size)
{
	time_t seconds = (time_t)(time_ms / 1000);
	struct tm tm;
	if (localtime_r(&seconds, &tm) == NULL ||
	    strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		snprintf(buf, size, "Unknown");
}

void report_format_elapsed(int64_t elapsed_ms, char *buf, size_t size)
{
	if (elapsed_ms < 0)
		elapsed_ms = 0;
	int64_t seconds = elapsed_ms / 1000;
	int64_t days = seconds / 86400;
	seconds %= 86400;
	if (days > 0)
		snprintf(buf, size, "%" PRId64 "-%02d:%02d:%02d", days, (int)(seconds / 3600),
			 (int)(seconds / 60 % 60), (int)(seconds % 60));
	else
		snprintf(buf, size, "%02d:%02d:%02d", (int)(seconds / 3600),
			 (int)(seconds / 60 % 60), (int)(seconds % 60));
}

/* bytes in the largest power of 1024 it reaches, two decimals unless
 * exact: "8M" for a table, or with spelled_unit "8 MiB" for a sentence
 * (and under 1 KiB "512" or "512 B"). */
static void format_scaled(uint64_t bytes, bool spelled_unit, char *buf, size_t size)
{
	static const char letters[] = "KMGTPE";
	const char *space = spelled_unit ? " " : "";
	const char *binary = spelled_unit ? "iB" : "";
	if (bytes < 1024) {
		snprintf(buf, size, "%" PRIu64 "%s", bytes, spelled_unit ? " B" : "");
		return;
	}
	int unit = 0;
	uint64_t divisor = 1024;
	while (unit < 5 && bytes / divisor >= 1024) {
		divisor *= 1024;
		unit++;
	}
	if (bytes % divisor == 0)
		snprintf(buf, size, "%" PRIu64 "%s%c%s", bytes / divisor, space, letters[unit],
			 binary);
	else
		snprintf(buf, size, "%.2f%s%c%s", (double)bytes / (double)divisor, space,
			 letters[unit], binary);
}

void report_format_bytes(uint64_t bytes, char *buf, size_t size)
{
	format_scaled(bytes, false, buf, size);
}

void report_format_size(uint64_t bytes, char *buf, size_t size)
{
	format_scaled(bytes, true, buf, size);
}

void report_format_duration(uint64_t ns, char *buf, size_t size)
{
	if (ns < 1000)
		snprintf(buf, size, "%" PRIu64 "ns", ns);
	else if (ns < 1000000)
		snprintf(buf, size, "%.2fus", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, size, "%.2fms", (double)ns / 1e6);
	else
		snprintf(buf, size, "%.2fs", (double)ns / 1e9);
}
