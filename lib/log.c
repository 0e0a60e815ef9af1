/*
 * log.c — the one logging call (see log.h): stderr with a level prefix,
 * syslog, or a sink the caller installs (the SPANK plugin's Slurm logger).
 *
 * Several threads log (the socket server, the collector, the sinks), so the
 * settings are atomics and each line is formatted whole before it is written
 * in a single call: lines never interleave mid-way.
 *
 * Lines carry user bytes (tags, paths, process names, request fields), so
 * every line is escaped here with the log rule (lib/escape.h) before it goes
 * anywhere: no caller can forget it, and a newline or an ESC in a user's
 * string can neither forge a log line nor reach an administrator's terminal.
 */
#include "lib/log.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "lib/escape.h"

#define LOG_LINE_MAX VNFS_LOG_LINE_MAX

static const char *log_ident = "vnfs";
static _Atomic int log_threshold = VNFS_LOG_PRIORITY_INFO;
static _Atomic int log_to_syslog;
static _Atomic(vnfs_log_sink_fn) log_sink;
/* Under systemd, stderr goes to the journal, which reads "<N>" as the level
 * and knows the program's name already. */
static _Atomic int log_journal_prefix;

static const char *const priority_names[] = {
	[VNFS_LOG_PRIORITY_ERROR] = "error",
	[VNFS_LOG_PRIORITY_WARNING] = "warning",
	[VNFS_LOG_PRIORITY_INFO] = "info",
	[VNFS_LOG_PRIORITY_DEBUG] = "debug",
};

static const int syslog_priorities[] = {
	[VNFS_LOG_PRIORITY_ERROR] = LOG_ERR,
	[VNFS_LOG_PRIORITY_WARNING] = LOG_WARNING,
	[VNFS_LOG_PRIORITY_INFO] = LOG_INFO,
	[VNFS_LOG_PRIORITY_DEBUG] = LOG_DEBUG,
};

/* systemd sets JOURNAL_STREAM=DEVICE:INODE of the stream it gave us; a
 * stderr redirected elsewhere since then no longer matches. */
static bool stderr_is_journal(void)
{
	const char *stream = getenv("JOURNAL_STREAM");
	unsigned long long device, inode;
	struct stat status;

	if (stream == NULL || sscanf(stream, "%llu:%llu", &device, &inode) != 2 ||
	    fstat(STDERR_FILENO, &status) < 0)
		return false;
	return status.st_dev == (dev_t)device && status.st_ino == (ino_t)inode;
}

void vnfs_log_setup(const char *ident, enum vnfs_log_priority threshold, int use_syslog)
{
	if (ident != NULL)
		log_ident = ident;
	atomic_store(&log_threshold, (int)threshold);
	atomic_store(&log_journal_prefix, stderr_is_journal());
	if (use_syslog && !atomic_load(&log_to_syslog))
		openlog(log_ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	else if (!use_syslog && atomic_load(&log_to_syslog))
		closelog();
	atomic_store(&log_to_syslog, use_syslog != 0);
}

void vnfs_log_set_sink(vnfs_log_sink_fn sink)
{
	atomic_store(&log_sink, sink);
}

/* Ends a line vsnprintf cut at size - 1 bytes with the cut mark; returns
 * its length. */
static int mark_cut(char *formatted, size_t size)
{
	size_t mark = sizeof(VNFS_LOG_CUT_MARK) - 1;

	memcpy(formatted + size - 1 - mark, VNFS_LOG_CUT_MARK, mark);
	return (int)size - 1;
}

void vnfs_log(enum vnfs_log_priority priority, const char *format, ...)
{
	vnfs_log_sink_fn sink = atomic_load(&log_sink);
	char formatted[LOG_LINE_MAX], line[LOG_LINE_MAX * VNFS_ESCAPE_GROWTH];
	int length;
	va_list args;

	if ((unsigned)priority > VNFS_LOG_PRIORITY_DEBUG)
		priority = VNFS_LOG_PRIORITY_ERROR;
	if ((int)priority > atomic_load(&log_threshold))
		return;
	va_start(args, format);
	length = vsnprintf(formatted, sizeof(formatted), format, args);
	va_end(args);
	if (length < 0)
		length = 0; /* an encoding error: log the empty line rather than nothing */
	else if ((size_t)length >= sizeof(formatted))
		length = mark_cut(formatted, sizeof(formatted));
	vnfs_escape(VNFS_ESCAPE_LOG, formatted, (size_t)length, line, sizeof(line));

	if (sink != NULL)
		sink(priority, line);
	else if (atomic_load(&log_to_syslog))
		syslog(syslog_priorities[priority], "%s", line);
	else if (atomic_load(&log_journal_prefix))
		fprintf(stderr, "<%d>%s\n", syslog_priorities[priority], line);
	else
		fprintf(stderr, "%s: %s: %s\n", log_ident, priority_names[priority], line);
}

int vnfs_fail(char *error, size_t error_size, const char *format, ...)
{
	va_list arguments;

	va_start(arguments, format);
	vsnprintf(error, error_size, format, arguments);
	va_end(arguments);
	return -1;
}
