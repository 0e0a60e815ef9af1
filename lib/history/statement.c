/*
 * statement.c — a history's queries on its engine (see statement.h): which
 * engine a locator names, and the calls passed on to it.
 */
#include "lib/history/statement.h"

#include <stdio.h>
#include <string.h>

/* PostgreSQL's engine once a program registered it (statement.h). */
static const struct history_engine *postgresql_engine;

void history_register_engine(const struct history_engine *engine)
{
	if (engine->dialect == HISTORY_POSTGRESQL)
		postgresql_engine = engine;
}

int history_open(const char *locator, struct history_connection **connection, char *error,
		 size_t error_size)
{
	*connection = NULL;
	if (!history_is_postgresql(locator))
		return history_sqlite_engine.open(locator, connection, error, error_size);
	if (postgresql_engine == NULL) {
		snprintf(error, error_size,
			 "history database postgresql: this vnfs was built without PostgreSQL "
			 "support (configure --with-postgresql)");
		return -1;
	}
	return postgresql_engine->open(locator, connection, error, error_size);
}

int history_schema_version(struct history_connection *connection, int *version, char *error,
			   size_t error_size)
{
	return connection->engine->schema_version(connection, version, error, error_size);
}

int history_prepare(struct history_connection *connection, const char *sql,
		    struct history_statement **statement)
{
	*statement = NULL;
	return connection->engine->prepare(connection, sql, statement);
}

int history_bind_int64(struct history_statement *statement, int index, int64_t value)
{
	return statement->engine->bind_int64(statement, index, value);
}

int history_bind_text(struct history_statement *statement, int index, const char *text)
{
	return statement->engine->bind_text(statement, index, text);
}

int history_step(struct history_statement *statement)
{
	return statement->engine->step(statement);
}

int64_t history_column_int64(struct history_statement *statement, int column)
{
	return statement->engine->column_int64(statement, column);
}

const char *history_column_text(struct history_statement *statement, int column)
{
	return statement->engine->column_text(statement, column);
}

void history_reset(struct history_statement *statement)
{
	statement->engine->reset(statement);
}

void history_clear_bindings(struct history_statement *statement)
{
	statement->engine->clear_bindings(statement);
}

void history_finalize(struct history_statement *statement)
{
	if (statement != NULL)
		statement->engine->finalize(statement);
}

const char *history_message(struct history_connection *connection)
{
	return connection->engine->message(connection);
}

void history_close(struct history_connection *connection)
{
	if (connection != NULL)
		connection->engine->close(connection);
}
