/*
 * postgresql_spool.c — record lines and the spool file's reader (see
 * postgresql_spool.h).  No libpq here: the fuzz target links this alone.
 */
#include "helper/outputs/postgresql_spool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <json-c/json.h>

static char *line_of(struct json_object *record, const char *type)
{
	struct json_object *wrapper = json_object_new_object();
	char *line = NULL;

	if (record == NULL || wrapper == NULL) {
		json_object_put(record);
		json_object_put(wrapper);
		return NULL;
	}
	if (json_object_object_add(wrapper, "type", json_object_new_string(type)) == 0 &&
	    json_object_object_add(wrapper, "record", record) == 0) {
		const char *text = json_object_to_json_string_ext(
			wrapper, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
		line = text != NULL ? strdup(text) : NULL;
	} else {
		json_object_put(record); /* not taken by the failed add */
	}
	json_object_put(wrapper);
	return line;
}

char *vnfs_spool_step_line(const struct vnfs_step_record *record)
{
	return line_of(vnfs_step_record_to_json(record), "step");
}

char *vnfs_spool_job_line(const struct vnfs_job *job)
{
	return line_of(vnfs_job_to_json(job), "job");
}

int vnfs_spool_record_parse(const char *line, size_t length, struct vnfs_spool_record *record,
			    char *error, size_t error_size)
{
	struct json_tokener *tokener = json_tokener_new();
	struct json_object *wrapper = NULL, *type, *body;
	int status = -1;

	memset(record, 0, sizeof(*record));
	if (tokener == NULL) {
		snprintf(error, error_size, "out of memory");
		return -1;
	}
	if (length > VNFS_SPOOL_LINE_MAX) {
		snprintf(error, error_size, "line longer than %u bytes", VNFS_SPOOL_LINE_MAX);
		goto done;
	}
	wrapper = json_tokener_parse_ex(tokener, line, (int)length);
	if (wrapper == NULL || json_tokener_get_parse_end(tokener) != length) {
		snprintf(error, error_size, "not one JSON value");
		goto done;
	}
	if (!json_object_is_type(wrapper, json_type_object) ||
	    json_object_object_length(wrapper) != 2 ||
	    !json_object_object_get_ex(wrapper, "type", &type) ||
	    !json_object_is_type(type, json_type_string) ||
	    !json_object_object_get_ex(wrapper, "record", &body)) {
		snprintf(error, error_size, "not an object of exactly \"type\" and \"record\"");
		goto done;
	}
	const char *name = json_object_get_string(type);
	if (strcmp(name, "step") == 0) {
		record->type = VNFS_SPOOL_STEP;
		status = vnfs_step_record_from_json(body, &record->step, error, error_size);
	} else if (strcmp(name, "job") == 0) {
		record->type = VNFS_SPOOL_JOB;
		status = vnfs_job_from_json(body, &record->job, error, error_size);
	} else {
		snprintf(error, error_size, "unknown record type");
	}
done:
	json_object_put(wrapper);
	json_tokener_free(tokener);
	if (status != 0)
		memset(record, 0, sizeof(*record));
	return status;
}

void vnfs_spool_record_free(struct vnfs_spool_record *record)
{
	if (record->type == VNFS_SPOOL_STEP)
		vnfs_step_record_free_arrays(&record->step);
	else
		vnfs_owned_job_free(&record->job);
	memset(record, 0, sizeof(*record));
}

int vnfs_spool_lines_push(struct vnfs_spool_lines *lines, char *line, size_t length)
{
	if (lines->count == lines->capacity) {
		size_t capacity = lines->capacity ? lines->capacity * 2 : 64;
		char **grown_lines = realloc(lines->lines, capacity * sizeof(*grown_lines));
		if (grown_lines == NULL) {
			free(line);
			return -1;
		}
		lines->lines = grown_lines;
		size_t *grown_lengths = realloc(lines->lengths, capacity * sizeof(*grown_lengths));
		if (grown_lengths == NULL) {
			free(line);
			return -1;
		}
		lines->lengths = grown_lengths;
		lines->capacity = capacity;
	}
	lines->lines[lines->count] = line;
	lines->lengths[lines->count] = length;
	lines->count++;
	return 0;
}

void vnfs_spool_lines_clear(struct vnfs_spool_lines *lines, int keep_arrays)
{
	for (size_t i = 0; i < lines->count; i++)
		free(lines->lines[i]);
	lines->count = 0;
	if (keep_arrays)
		return;
	free(lines->lines);
	free(lines->lengths);
	*lines = (struct vnfs_spool_lines){ 0 };
}

long vnfs_spool_read_lines(FILE *file, size_t max_lines, struct vnfs_spool_lines *lines,
			   size_t *skipped)
{
	char *buffer = NULL;
	size_t buffer_size = 0;
	long read_count = 0;

	while ((size_t)read_count < max_lines) {
		off_t start = ftello(file);
		errno = 0;
		ssize_t length = getline(&buffer, &buffer_size, file);
		if (length < 0) {
			if (errno != 0 && !feof(file)) {
				free(buffer);
				return -1;
			}
			break;
		}
		if (buffer[length - 1] != '\n') {
			/* An unfinished append: leave it for whoever appends next
			 * (the writer truncates it away, see sink_postgresql.c). */
			if (start >= 0)
				(void)fseeko(file, start, SEEK_SET);
			break;
		}
		buffer[--length] = '\0';
		if ((size_t)length > VNFS_SPOOL_LINE_MAX || length == 0) {
			(*skipped)++;
			continue;
		}
		char *line = malloc((size_t)length + 1);
		if (line == NULL) {
			free(buffer);
			errno = ENOMEM;
			return -1;
		}
		memcpy(line, buffer, (size_t)length + 1);
		if (vnfs_spool_lines_push(lines, line, (size_t)length) < 0) {
			free(buffer);
			errno = ENOMEM;
			return -1;
		}
		read_count++;
	}
	free(buffer);
	return read_count;
}
