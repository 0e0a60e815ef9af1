/*
 * postgresql_schema.h — the cluster-wide history's schema in PostgreSQL,
 * stated once: the migrations that build it (postgresql_schema.c) and its
 * version.  The PostgreSQL output (helper/outputs/sink_postgresql.c) runs
 * them on its first connection; docs/SCHEMA.md describes the tables and
 * docs/INSTALL.md the roles they expect.
 *
 * A change of the schema appends a migration and raises
 * VNFS_POSTGRESQL_SCHEMA_VERSION; a _Static_assert keeps the two equal.
 */
#ifndef VNFS_POSTGRESQL_SCHEMA_H
#define VNFS_POSTGRESQL_SCHEMA_H

#include <stddef.h>

#define VNFS_POSTGRESQL_SCHEMA_VERSION 1

/* The roles the schema's grants and row-level security name; they must
 * exist before the first migration (docs/INSTALL.md). */
#define VNFS_POSTGRESQL_WRITER_ROLE "vnfs_writer"
#define VNFS_POSTGRESQL_ADMIN_ROLE "vnfs_admin"
#define VNFS_POSTGRESQL_USERS_ROLE "vnfs_users"

struct pg_conn;

/*
 * Takes the database of connection up to VNFS_POSTGRESQL_SCHEMA_VERSION, one
 * migration per transaction under an advisory lock, so that helpers
 * connecting at once migrate it once and a failure leaves it at some whole
 * version.  A database of a newer schema is refused.  Returns 0, or -1 with
 * "postgresql: <what>" in error.
 */
int vnfs_postgresql_migrate(struct pg_conn *connection, char *error, size_t error_size);

/* The schema version recorded in the database (0: none yet) into
 * *version.  Returns 0, or -1 with a message in error. */
int vnfs_postgresql_schema_version(struct pg_conn *connection, int *version, char *error,
				   size_t error_size);

/* The SQL that takes the schema from from_version to from_version + 1, or
 * NULL (for tests). */
const char *vnfs_postgresql_migration(int from_version);

#endif /* VNFS_POSTGRESQL_SCHEMA_H */
