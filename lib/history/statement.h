/*
 * statement.h — a history's queries, on whichever engine holds it: the
 * node's SQLite history or the cluster's PostgreSQL database.  The history
 * reader (reader.c) is written once against this; each engine runs it.
 *
 * The two hold the same tables and columns (lib/history/schema.c,
 * postgresql_schema.c), so most queries are one text for both.  Their SQL is
 * written with SQLite's numbered parameters, ?1 to ?9, which the PostgreSQL
 * engine renumbers as $1.. in order of use (PostgreSQL must infer every
 * parameter's type, so one a query does not use cannot be passed); binding a
 * parameter the query does not use is then a no-op, as an unused one stays
 * NULL in SQLite.  Where the dialects differ (JSON arrays, null-safe
 * equality, the listing's order), the reader keeps a text per dialect.
 *
 * The SQLite engine is built in.  The PostgreSQL engine links libpq, which
 * the helper does not (its PostgreSQL output is a module): a program that
 * reads PostgreSQL calls history_register_postgresql()
 * (postgresql_engine.c) once, as SQLite registers a VFS; until then a
 * postgresql:// locator is refused with a message saying so.
 */
#ifndef VNFS_HISTORY_STATEMENT_H
#define VNFS_HISTORY_STATEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum history_dialect { HISTORY_SQLITE, HISTORY_POSTGRESQL };

struct history_connection;
struct history_statement;

/* What an engine does; each statement and connection knows its engine. */
struct history_engine {
	enum history_dialect dialect;
	/* Opens locator read-only: 0, or -1 with a message naming it. */
	int (*open)(const char *locator, struct history_connection **connection, char *error,
		    size_t error_size);
	/* The schema version the database records (0: no vnfs history). */
	int (*schema_version)(struct history_connection *connection, int *version, char *error,
			      size_t error_size);
	int (*prepare)(struct history_connection *connection, const char *sql,
		       struct history_statement **statement);
	int (*bind_int64)(struct history_statement *statement, int index, int64_t value);
	int (*bind_text)(struct history_statement *statement, int index, const char *text);
	int (*step)(struct history_statement *statement);
	int64_t (*column_int64)(struct history_statement *statement, int column);
	const char *(*column_text)(struct history_statement *statement, int column);
	void (*reset)(struct history_statement *statement);
	void (*clear_bindings)(struct history_statement *statement);
	void (*finalize)(struct history_statement *statement);
	const char *(*message)(struct history_connection *connection);
	void (*close)(struct history_connection *connection);
};

/* The first member of every engine's connection and statement. */
struct history_connection {
	const struct history_engine *engine;
	char name[256]; /* for messages: a path, or a database and host (no password) */
};
struct history_statement {
	const struct history_engine *engine;
};

/* A locator names a PostgreSQL database when it is a libpq URI
 * (postgresql:// or postgres://); anything else is a SQLite file's path.
 * Inline: the configuration's parser (lib/config.c) asks it too. */
static inline bool history_is_postgresql(const char *locator)
{
	return strncmp(locator, "postgresql://", 13) == 0 ||
	       strncmp(locator, "postgres://", 11) == 0;
}

/* The engine for locator's kind: SQLite's, or PostgreSQL's once registered.
 * history_open: 0, or -1 with a message (also when PostgreSQL is asked of a
 * program that did not register it). */
int history_open(const char *locator, struct history_connection **connection, char *error,
		 size_t error_size);
/* Makes engine the one for its dialect's locators (PostgreSQL's only). */
void history_register_engine(const struct history_engine *engine);

/* The engine's calls through the connection or statement.  step: 1 on a
 * row, 0 at the end, -1 on an error (history_message says it).  A NULL
 * column reads as 0 or NULL.  reset ends the current rows and keeps the
 * bindings; clear_bindings makes every parameter NULL again. */
int history_schema_version(struct history_connection *connection, int *version, char *error,
			   size_t error_size);
int history_prepare(struct history_connection *connection, const char *sql,
		    struct history_statement **statement);
int history_bind_int64(struct history_statement *statement, int index, int64_t value);
int history_bind_text(struct history_statement *statement, int index, const char *text);
int history_step(struct history_statement *statement);
int64_t history_column_int64(struct history_statement *statement, int column);
const char *history_column_text(struct history_statement *statement, int column);
void history_reset(struct history_statement *statement);
void history_clear_bindings(struct history_statement *statement);
void history_finalize(struct history_statement *statement);
const char *history_message(struct history_connection *connection);
void history_close(struct history_connection *connection);

/* The engines (sqlite_engine.c; postgresql_engine.c, in
 * lib/libvnfs_history_postgresql.la). */
extern const struct history_engine history_sqlite_engine;
extern const struct history_engine history_postgresql_engine;

/* Registers history_postgresql_engine (postgresql_engine.c). */
void history_register_postgresql(void);

#endif /* VNFS_HISTORY_STATEMENT_H */
