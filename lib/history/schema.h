/*
 * schema.h — the SQLite history's schema, stated once: the migrations that
 * build it (schema.c), its version, and the few statements both its writer
 * (helper/outputs/sink_sqlite.c) and its readers (lib/history/reader.c) run on it.
 * A change of the schema appends a migration to schema.c and raises
 * VNFS_HISTORY_SCHEMA_VERSION; a _Static_assert there keeps the two equal.
 * docs/SCHEMA.md describes the tables.
 */
#ifndef VNFS_HISTORY_SCHEMA_H
#define VNFS_HISTORY_SCHEMA_H

#include <stddef.h>

#define VNFS_HISTORY_SCHEMA_VERSION 3

/* The oldest schema the readers still read (lib/history/reader.c): a
 * database the helper has not migrated yet, or an archived copy. */
#define VNFS_HISTORY_OLDEST_READ_VERSION 1

struct sqlite3;

/* Runs sql (one or more statements).  Returns 0, or -1 with
 * "sqlite: <path>: <what SQLite said>" in error. */
int vnfs_history_exec(struct sqlite3 *db, const char *sql, const char *path, char *error,
		      size_t error_size);

/* PRAGMA user_version into *version.  Returns 0, or -1 (SQLite's message
 * then in sqlite3_errmsg(db)). */
int vnfs_history_schema_version(struct sqlite3 *db, int *version);

/*
 * Takes the database at path (open read-write in db) up to
 * VNFS_HISTORY_SCHEMA_VERSION, one migration per transaction, so a crash
 * leaves it at some whole version.  A database of a newer schema is refused.
 * Foreign keys are off afterwards when a migration ran (the caller turns
 * them on).  Returns 0, or -1 with a message in error.
 */
int vnfs_history_migrate(struct sqlite3 *db, const char *path, char *error, size_t error_size);

/* The SQL that takes the schema from from_version to from_version + 1, or
 * NULL: for tests that build a database of an older version. */
const char *vnfs_history_migration(int from_version);

#endif /* VNFS_HISTORY_SCHEMA_H */
