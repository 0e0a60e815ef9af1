/*
 * log.h — one logging call for the helper, vnfs-report and the plugin.
 *
 * The helper logs to stderr (systemd's journal picks it up) or to syslog, as
 * vnfs.conf says; messages below the configured level are dropped before
 * formatting.  The SPANK plugin installs a sink that forwards to Slurm's own
 * log functions, so its lines land in slurmd.log.
 */
#ifndef VNFS_LOG_H
#define VNFS_LOG_H

#include <stdarg.h>
#include <stddef.h>

enum vnfs_log_priority { VNFS_LOG_PRIORITY_ERROR, VNFS_LOG_PRIORITY_WARNING,
			 VNFS_LOG_PRIORITY_INFO, VNFS_LOG_PRIORITY_DEBUG };

/* A formatted line longer than this (with its NUL) is cut before escaping,
 * and its end replaced by VNFS_LOG_CUT_MARK: a cut line says so instead of
 * stopping mid-word as if it were whole.  A message that may be longer (one
 * part per item of a list) is best logged a line per part. */
#define VNFS_LOG_LINE_MAX 2048
#define VNFS_LOG_CUT_MARK " [cut]"

/* Replaces where lines go (NULL: back to stderr). */
typedef void (*vnfs_log_sink_fn)(enum vnfs_log_priority priority, const char *line);

void vnfs_log_setup(const char *ident, enum vnfs_log_priority threshold, int use_syslog);
void vnfs_log_set_sink(vnfs_log_sink_fn sink);
void vnfs_log(enum vnfs_log_priority priority, const char *format, ...)
	__attribute__((format(printf, 2, 3)));

/* Formats a message into error (size bytes) and returns -1, so a function
 * that reports failures through an error buffer can `return vnfs_fail(...)`. */
int vnfs_fail(char *error, size_t error_size, const char *format, ...)
	__attribute__((format(printf, 3, 4)));

#define vnfs_error(...) vnfs_log(VNFS_LOG_PRIORITY_ERROR, __VA_ARGS__)
#define vnfs_warning(...) vnfs_log(VNFS_LOG_PRIORITY_WARNING, __VA_ARGS__)
#define vnfs_info(...) vnfs_log(VNFS_LOG_PRIORITY_INFO, __VA_ARGS__)
#define vnfs_debug(...) vnfs_log(VNFS_LOG_PRIORITY_DEBUG, __VA_ARGS__)

#endif /* VNFS_LOG_H */
