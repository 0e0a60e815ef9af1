/*
 * escape.h — one escaping rule per destination for bytes that came from a
 * user or the kernel (process names, paths, tags, request fields).
 *
 * A process name (the kernel's 16-byte comm) is whatever bytes a user chose
 * with prctl(PR_SET_NAME): ESC sequences, newlines, invalid UTF-8.  Such
 * names are turned into one canonical text where they enter a record, and
 * every output then applies its own rule to all the text it writes:
 *
 *   canonical  printable UTF-8 as is; every other byte (C0 and C1 controls,
 *              DEL, bidirectional and line-separator format characters,
 *              bytes of invalid or truncated UTF-8) and the backslash itself
 *              as \xNN (lowercase hex).  Valid UTF-8, reversible
 *              (vnfs_bytes_from_text), and harmless on a terminal.
 *   terminal   vnfs-report and the helper's <node>.txt: the canonical rule
 *              without the backslash (canonical text passes unchanged, and
 *              anything else, even a hostile report file, becomes harmless).
 *   parsable   -p/-P: the terminal rule, and the delimiter '|' as \x7c, so a
 *              field can never add a column or a row.
 *   log        every log line: the terminal rule.
 *   JSON       a string that is valid UTF-8 as is (json-c escapes quotes and
 *              controls), anything else in its canonical form.
 *   Prometheus a label value: the JSON choice, then \\, \" and \n as the
 *              text exposition format wants.
 *
 * Buffer versions always NUL-terminate and cut only between whole characters
 * and whole escapes, so a cut text is still well formed.
 */
#ifndef VNFS_ESCAPE_H
#define VNFS_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>

/* The kernel's comm: 16 bytes including the terminating NUL. */
#define VNFS_PROCESS_NAME_BYTES 16
/* Its canonical text: 15 bytes of \xNN each and the NUL (61), rounded up. */
#define VNFS_PROCESS_NAME_TEXT_MAX 64
/* One input byte becomes at most this many output bytes (\xNN). */
#define VNFS_ESCAPE_GROWTH 4

enum vnfs_escape_rule {
	VNFS_ESCAPE_CANONICAL,
	VNFS_ESCAPE_TERMINAL,
	VNFS_ESCAPE_PARSABLE,
	VNFS_ESCAPE_LOG,
};

/* Receives the escaped text in pieces (runs of characters or one escape). */
typedef void (*vnfs_escape_write_fn)(void *context, const char *bytes, size_t length);

/* Length (1-4) of the well-formed UTF-8 sequence at bytes, or 0. */
size_t vnfs_utf8_sequence_length(const char *bytes, size_t available);

/* Is text (length bytes) well-formed UTF-8 throughout? */
bool vnfs_utf8_valid(const char *text, size_t length);

/* Writes length bytes of text under rule through write. */
void vnfs_escape_write(enum vnfs_escape_rule rule, const char *text, size_t length,
		       vnfs_escape_write_fn write, void *context);

/* The same into out (out_size bytes, NUL-terminated); returns the length. */
size_t vnfs_escape(enum vnfs_escape_rule rule, const char *text, size_t length, char *out,
		   size_t out_size);

/* The NUL-terminated text under rule into out, returned for use in printf. */
const char *vnfs_escape_string(enum vnfs_escape_rule rule, const char *text, char *out,
			       size_t out_size);

/*
 * For a message that quotes what a user typed: at most limit bytes of text,
 * escaped with the log rule, and "..." if text was longer.  out should hold
 * limit * VNFS_ESCAPE_GROWTH + 4.  Returns out.
 */
const char *vnfs_quote_prefix(const char *text, size_t limit, char *out, size_t out_size);

/* The canonical text of bytes from the kernel (= vnfs_escape CANONICAL). */
size_t vnfs_text_from_bytes(const char *bytes, size_t length, char *out, size_t out_size);

/*
 * The canonical text of a comm (up to VNFS_PROCESS_NAME_BYTES, ending at its
 * first NUL) into out, which should hold VNFS_PROCESS_NAME_TEXT_MAX.
 */
size_t vnfs_process_name_text(const char *comm, char *out, size_t out_size);

/*
 * The reverse of the canonical rule: the bytes text stands for into out
 * (not NUL-terminated).  Returns 0 with *length set, or -1 if text holds a
 * backslash that does not start \xNN or out is too small.
 */
int vnfs_bytes_from_text(const char *text, char *out, size_t out_size, size_t *length);

/*
 * The JSON rule: text itself if it is valid UTF-8, else its canonical form
 * in buffer (cut to size).  Returns what to put into JSON.
 */
const char *vnfs_json_text(const char *text, char *buffer, size_t size);

/* A Prometheus label value (the JSON rule, then \\ \" \n) through write. */
void vnfs_prometheus_label_write(const char *value, size_t length, vnfs_escape_write_fn write,
				 void *context);

#endif /* VNFS_ESCAPE_H */
