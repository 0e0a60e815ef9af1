/*
 * history_schema.h — the one statement of the SQLite history's schema
 * version: helper/sink_sqlite.c migrates a database up to it (and asserts
 * that its migrations reach exactly it), report/sources.c reads databases of
 * it and names both versions when they differ.  A change of the schema adds
 * a migration and raises this number; docs/SCHEMA.md describes the tables.
 */
#ifndef VNFS_HISTORY_SCHEMA_H
#define VNFS_HISTORY_SCHEMA_H

#define VNFS_HISTORY_SCHEMA_VERSION 1

#endif /* VNFS_HISTORY_SCHEMA_H */
