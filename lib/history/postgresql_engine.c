/*
 * postgresql_engine.c — the cluster's PostgreSQL history as a history
 * engine (statement.h), for vnfs-report.  Each query is prepared once on
 * the server and run with text parameters; its rows are read whole (the
 * reader runs the next query before it leaves the listing, and libpq runs
 * one query at a time on a connection).  The session is read-only, and a
 * user's own role sees only their rows (row-level security,
 * postgresql_schema.c).  Messages name the database and host, never the
 * locator, which may hold a password.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "lib/history/postgresql_schema.h"
#include "lib/history/statement.h"

#define MAX_PARAMETERS 9 /* ?1 to ?9 (statement.h) */

struct postgresql_connection {
	struct history_connection base;
	PGconn *connection;
	unsigned statements; /* prepared so far: names them */
	char message[512];
};

struct postgresql_statement {
	struct history_statement base;
	struct postgresql_connection *owner;
	char name[32];
	int position[MAX_PARAMETERS + 1]; /* ?N's $ number, 0 when unused */
	int parameter_count;
	char *values[MAX_PARAMETERS];     /* by $ number - 1; NULL is SQL NULL */
	PGresult *result;
	int row, rows;                    /* the current row, of rows */
};

static struct postgresql_connection *connection_of(struct history_connection *connection)
{
	return (struct postgresql_connection *)connection;
}

static struct postgresql_statement *statement_of(struct history_statement *statement)
{
	return (struct postgresql_statement *)statement;
}

/* The first line of a server or libpq message into the connection's. */
static void keep_message(struct postgresql_connection *connection, const char *message)
{
	size_t length = strcspn(message, "\n");
	snprintf(connection->message, sizeof(connection->message), "%.*s", (int)length, message);
}

static int postgresql_open(const char *locator, struct history_connection **out, char *error,
			   size_t error_size)
{
	struct postgresql_connection *connection = calloc(1, sizeof(*connection));
	PGresult *result;

	if (connection == NULL) {
		snprintf(error, error_size, "out of memory");
		return -1;
	}
	connection->base.engine = &history_postgresql_engine;
	connection->connection = PQconnectdb(locator);
	if (PQstatus(connection->connection) != CONNECTION_OK) {
		keep_message(connection, connection->connection != NULL
						 ? PQerrorMessage(connection->connection)
						 : "out of memory");
		snprintf(error, error_size, "history database postgresql: %s", connection->message);
		PQfinish(connection->connection);
		free(connection);
		return -1;
	}
	snprintf(connection->base.name, sizeof(connection->base.name),
		 "postgresql database %s on %s", PQdb(connection->connection),
		 PQhost(connection->connection));
	result = PQexec(connection->connection,
			"SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY");
	if (PQresultStatus(result) != PGRES_COMMAND_OK) {
		keep_message(connection, PQresultErrorMessage(result));
		snprintf(error, error_size, "history database %s: %s", connection->base.name,
			 connection->message);
		PQclear(result);
		PQfinish(connection->connection);
		free(connection);
		return -1;
	}
	PQclear(result);
	*out = &connection->base;
	return 0;
}

static int postgresql_schema_version(struct history_connection *connection, int *version,
				     char *error, size_t error_size)
{
	return vnfs_postgresql_schema_version(connection_of(connection)->connection, version,
					      error, error_size);
}

/*
 * sql with ?N as $k, k counting the distinct N in order of first use, into
 * out; position[N] = k.  Quoted text ('...', "...") is copied as it is.
 * Returns the number of parameters, or -1 (N out of range, out too small).
 */
static int renumber(const char *sql, char *out, size_t size, int position[])
{
	int count = 0;
	size_t used = 0;
	char quote = 0;

	for (const char *c = sql; *c != '\0'; c++) {
		if (quote == 0 && *c == '?' && isdigit((unsigned char)c[1])) {
			int index = 0;
			while (isdigit((unsigned char)c[1]) && index <= MAX_PARAMETERS)
				index = index * 10 + (*++c - '0');
			if (index < 1 || index > MAX_PARAMETERS)
				return -1;
			if (position[index] == 0)
				position[index] = ++count;
			used += (size_t)snprintf(out + used, used < size ? size - used : 0, "$%d",
						 position[index]);
			continue;
		}
		if (quote == 0 && (*c == '\'' || *c == '"'))
			quote = *c;
		else if (quote != 0 && *c == quote)
			quote = 0;
		if (used + 1 < size)
			out[used] = *c;
		used++;
	}
	if (used >= size)
		return -1;
	out[used] = '\0';
	return count;
}

static int postgresql_prepare(struct history_connection *base, const char *sql,
			      struct history_statement **out)
{
	struct postgresql_connection *connection = connection_of(base);
	struct postgresql_statement *statement = calloc(1, sizeof(*statement));
	char text[4096];
	PGresult *result;

	if (statement == NULL) {
		keep_message(connection, "out of memory");
		return -1;
	}
	statement->base.engine = &history_postgresql_engine;
	statement->owner = connection;
	statement->parameter_count = renumber(sql, text, sizeof(text), statement->position);
	if (statement->parameter_count < 0) {
		keep_message(connection, "a query's parameters or length are out of range");
		free(statement);
		return -1;
	}
	snprintf(statement->name, sizeof(statement->name), "vnfs_reader_%u",
		 connection->statements++);
	result = PQprepare(connection->connection, statement->name, text,
			   statement->parameter_count, NULL);
	if (PQresultStatus(result) != PGRES_COMMAND_OK) {
		keep_message(connection, PQresultErrorMessage(result));
		PQclear(result);
		free(statement);
		return -1;
	}
	PQclear(result);
	*out = &statement->base;
	return 0;
}

/* Sets ?index's value (a copy of text, or NULL); a parameter the query does
 * not use is no-op.  Returns 0, or -1. */
static int set_value(struct postgresql_statement *statement, int index, const char *text)
{
	if (index < 1 || index > MAX_PARAMETERS)
		return -1;
	int position = statement->position[index];
	if (position == 0)
		return 0;
	char *copy = NULL;
	if (text != NULL && (copy = strdup(text)) == NULL)
		return -1;
	free(statement->values[position - 1]);
	statement->values[position - 1] = copy;
	return 0;
}

static int postgresql_bind_int64(struct history_statement *statement, int index, int64_t value)
{
	char text[24];
	snprintf(text, sizeof(text), "%" PRId64, value);
	return set_value(statement_of(statement), index, text);
}

static int postgresql_bind_text(struct history_statement *statement, int index, const char *text)
{
	return set_value(statement_of(statement), index, text);
}

static int postgresql_step(struct history_statement *base)
{
	struct postgresql_statement *statement = statement_of(base);

	if (statement->result == NULL) {
		statement->result = PQexecPrepared(
			statement->owner->connection, statement->name, statement->parameter_count,
			(const char *const *)statement->values, NULL, NULL, 0);
		if (PQresultStatus(statement->result) != PGRES_TUPLES_OK) {
			keep_message(statement->owner,
				     statement->result != NULL
					     ? PQresultErrorMessage(statement->result)
					     : PQerrorMessage(statement->owner->connection));
			PQclear(statement->result);
			statement->result = NULL;
			return -1;
		}
		statement->rows = PQntuples(statement->result);
		statement->row = -1;
	}
	if (statement->row + 1 >= statement->rows)
		return 0;
	statement->row++;
	return 1;
}

static int64_t postgresql_column_int64(struct history_statement *base, int column)
{
	const char *text = base->engine->column_text(base, column);
	return text != NULL ? strtoll(text, NULL, 10) : 0;
}

static const char *postgresql_column_text(struct history_statement *base, int column)
{
	struct postgresql_statement *statement = statement_of(base);

	if (statement->result == NULL || statement->row < 0 || statement->row >= statement->rows ||
	    column >= PQnfields(statement->result) ||
	    PQgetisnull(statement->result, statement->row, column))
		return NULL;
	return PQgetvalue(statement->result, statement->row, column);
}

static void postgresql_reset(struct history_statement *base)
{
	struct postgresql_statement *statement = statement_of(base);
	PQclear(statement->result);
	statement->result = NULL;
}

static void postgresql_clear_bindings(struct history_statement *base)
{
	struct postgresql_statement *statement = statement_of(base);
	for (int i = 0; i < MAX_PARAMETERS; i++) {
		free(statement->values[i]);
		statement->values[i] = NULL;
	}
}

static void postgresql_finalize(struct history_statement *base)
{
	postgresql_reset(base);
	postgresql_clear_bindings(base);
	free(base);
}

static const char *postgresql_message(struct history_connection *connection)
{
	return connection_of(connection)->message;
}

static void postgresql_close(struct history_connection *connection)
{
	PQfinish(connection_of(connection)->connection);
	free(connection);
}

const struct history_engine history_postgresql_engine = {
	.dialect = HISTORY_POSTGRESQL,
	.open = postgresql_open,
	.schema_version = postgresql_schema_version,
	.prepare = postgresql_prepare,
	.bind_int64 = postgresql_bind_int64,
	.bind_text = postgresql_bind_text,
	.step = postgresql_step,
	.column_int64 = postgresql_column_int64,
	.column_text = postgresql_column_text,
	.reset = postgresql_reset,
	.clear_bindings = postgresql_clear_bindings,
	.finalize = postgresql_finalize,
	.message = postgresql_message,
	.close = postgresql_close,
};

void history_register_postgresql(void)
{
	history_register_engine(&history_postgresql_engine);
}
