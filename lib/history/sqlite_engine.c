/*
 * sqlite_engine.c — the node's SQLite history as a history engine
 * (statement.h): opened read-only, with the two collations of the
 * listing's order (reader.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "lib/history/schema.h"
#include "lib/history/statement.h"
#include "lib/workload.h"

struct sqlite_connection {
	struct history_connection base;
	sqlite3 *db;
};

struct sqlite_statement {
	struct history_statement base;
	sqlite3_stmt *statement;
};

static sqlite3 *db_of(struct history_connection *connection)
{
	return ((struct sqlite_connection *)connection)->db;
}

static sqlite3_stmt *statement_of(struct history_statement *statement)
{
	return ((struct sqlite_statement *)statement)->statement;
}

/*
 * A member of the administrators' group may read the history (0640) but not
 * write its directory.  While the helper runs, its -wal and -shm exist and a
 * read-only reader shares them.  Once the helper closed the database SQLite
 * removed both, and a reader would have to create the -shm: it cannot, so
 * the database, whole in its main file then, is opened as immutable.
 */
static int open_read_only(const char *path, sqlite3 **db)
{
	char wal[PATH_MAX + 8], uri[3 * PATH_MAX + 32];
	int status = sqlite3_open_v2(path, db, SQLITE_OPEN_READONLY, NULL);
	size_t used;

	snprintf(wal, sizeof(wal), "%s-wal", path);
	if (status != SQLITE_CANTOPEN || access(wal, F_OK) == 0 || errno != ENOENT)
		return status;
	/* In a URI '%', '?' and '#' of the path must be escaped. */
	used = (size_t)snprintf(uri, sizeof(uri), "file:");
	for (const char *c = path; *c != '\0' && used + 4 < sizeof(uri); c++)
		used += (size_t)(strchr("%?#", *c) != NULL
					 ? snprintf(uri + used, sizeof(uri) - used, "%%%02X",
						    (unsigned char)*c)
					 : snprintf(uri + used, sizeof(uri) - used, "%c", *c));
	snprintf(uri + used, sizeof(uri) - used, "?immutable=1");
	sqlite3_close(*db);
	*db = NULL;
	return sqlite3_open_v2(uri, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
}

/*
 * The collations of the listing's order (vnfs_workload_compare): vnfs_source
 * by the sources' order in VNFS_WORKLOAD_SOURCES (names this vnfs does not
 * know after them, by bytes), vnfs_text as job ids compare.  SQLite passes
 * text without its NUL; longer text than a job id holds cannot be in the
 * history (the writer checked it) and compares by bytes.
 */
static int copy_text(char *buf, size_t size, const void *text, int length)
{
	if (length < 0 || (size_t)length >= size)
		return -1;
	memcpy(buf, text, (size_t)length);
	buf[length] = '\0';
	return 0;
}

static int compare_bytes(int a_length, const void *a, int b_length, const void *b)
{
	int order = memcmp(a, b, (size_t)(a_length < b_length ? a_length : b_length));
	return order != 0 ? order : (a_length > b_length) - (a_length < b_length);
}

static int collate_source(void *unused, int a_length, const void *a, int b_length,
			  const void *b)
{
	char a_name[64], b_name[64];
	enum vnfs_workload_source a_source, b_source;
	(void)unused;
	bool a_known = copy_text(a_name, sizeof(a_name), a, a_length) == 0 &&
		       vnfs_workload_source_parse(a_name, &a_source) == 0;
	bool b_known = copy_text(b_name, sizeof(b_name), b, b_length) == 0 &&
		       vnfs_workload_source_parse(b_name, &b_source) == 0;
	if (a_known && b_known)
		return (a_source > b_source) - (a_source < b_source);
	if (a_known != b_known)
		return a_known ? -1 : 1;
	return compare_bytes(a_length, a, b_length, b);
}

static int collate_text(void *unused, int a_length, const void *a, int b_length, const void *b)
{
	char a_text[VNFS_WORKLOAD_JOB_MAX], b_text[VNFS_WORKLOAD_JOB_MAX];
	(void)unused;
	if (copy_text(a_text, sizeof(a_text), a, a_length) < 0 ||
	    copy_text(b_text, sizeof(b_text), b, b_length) < 0)
		return compare_bytes(a_length, a, b_length, b);
	return vnfs_workload_compare_text(a_text, b_text);
}

static int sqlite_open(const char *path, struct history_connection **out, char *error,
		       size_t error_size)
{
	struct sqlite_connection *connection = calloc(1, sizeof(*connection));
	struct stat st;

	if (connection == NULL) {
		snprintf(error, error_size, "out of memory");
		return -1;
	}
	connection->base.engine = &history_sqlite_engine;
	snprintf(connection->base.name, sizeof(connection->base.name), "%s", path);
	if (stat(path, &st) < 0) {
		snprintf(error, error_size, "history database %s: %s", path, strerror(errno));
		free(connection);
		return -1;
	}
	if (open_read_only(path, &connection->db) != SQLITE_OK ||
	    sqlite3_create_collation(connection->db, "vnfs_source", SQLITE_UTF8, NULL,
				     collate_source) != SQLITE_OK ||
	    sqlite3_create_collation(connection->db, "vnfs_text", SQLITE_UTF8, NULL,
				     collate_text) != SQLITE_OK) {
		snprintf(error, error_size, "history database %s: %s", path,
			 connection->db != NULL ? sqlite3_errmsg(connection->db) : "cannot open");
		sqlite3_close(connection->db);
		free(connection);
		return -1;
	}
	sqlite3_busy_timeout(connection->db, 2000);
	*out = &connection->base;
	return 0;
}

static int sqlite_schema_version(struct history_connection *connection, int *version,
				 char *error, size_t error_size)
{
	if (vnfs_history_schema_version(db_of(connection), version) == 0)
		return 0;
	snprintf(error, error_size, "history database %s: %s", connection->name,
		 sqlite3_errmsg(db_of(connection)));
	return -1;
}

static int sqlite_prepare(struct history_connection *connection, const char *sql,
			  struct history_statement **out)
{
	struct sqlite_statement *statement = calloc(1, sizeof(*statement));

	if (statement == NULL)
		return -1;
	statement->base.engine = &history_sqlite_engine;
	if (sqlite3_prepare_v2(db_of(connection), sql, -1, &statement->statement, NULL) !=
	    SQLITE_OK) {
		free(statement);
		return -1;
	}
	*out = &statement->base;
	return 0;
}

static int sqlite_bind_int64(struct history_statement *statement, int index, int64_t value)
{
	return sqlite3_bind_int64(statement_of(statement), index, value) == SQLITE_OK ? 0 : -1;
}

static int sqlite_bind_text(struct history_statement *statement, int index, const char *text)
{
	return sqlite3_bind_text(statement_of(statement), index, text, -1, SQLITE_TRANSIENT) ==
			       SQLITE_OK
		       ? 0
		       : -1;
}

static int sqlite_step(struct history_statement *statement)
{
	int rc = sqlite3_step(statement_of(statement));
	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

static int64_t sqlite_column_int64(struct history_statement *statement, int column)
{
	return sqlite3_column_int64(statement_of(statement), column);
}

static const char *sqlite_column_text(struct history_statement *statement, int column)
{
	return (const char *)sqlite3_column_text(statement_of(statement), column);
}

static void sqlite_reset(struct history_statement *statement)
{
	sqlite3_reset(statement_of(statement));
}

static void sqlite_clear_bindings(struct history_statement *statement)
{
	sqlite3_clear_bindings(statement_of(statement));
}

static void sqlite_finalize(struct history_statement *statement)
{
	sqlite3_finalize(statement_of(statement));
	free(statement);
}

static const char *sqlite_message(struct history_connection *connection)
{
	return sqlite3_errmsg(db_of(connection));
}

static void sqlite_close(struct history_connection *connection)
{
	sqlite3_close(db_of(connection));
	free(connection);
}

const struct history_engine history_sqlite_engine = {
	.dialect = HISTORY_SQLITE,
	.open = sqlite_open,
	.schema_version = sqlite_schema_version,
	.prepare = sqlite_prepare,
	.bind_int64 = sqlite_bind_int64,
	.bind_text = sqlite_bind_text,
	.step = sqlite_step,
	.column_int64 = sqlite_column_int64,
	.column_text = sqlite_column_text,
	.reset = sqlite_reset,
	.clear_bindings = sqlite_clear_bindings,
	.finalize = sqlite_finalize,
	.message = sqlite_message,
	.close = sqlite_close,
};
