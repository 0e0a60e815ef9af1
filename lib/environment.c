/*
 * environment.c — the job variables' facts and the workload of a captured
 * job (see environment.h).
 */
#include "lib/environment.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name;
	enum vnfs_workload_source source;
} known_variables[] = {
#define VNFS_ENVIRONMENT_KNOWN_ROW(name, constant) { name, VNFS_SOURCE_##constant },
	VNFS_ENVIRONMENT_KNOWN_VARIABLES(VNFS_ENVIRONMENT_KNOWN_ROW)
#undef VNFS_ENVIRONMENT_KNOWN_ROW
};

bool vnfs_environment_name_valid(const char *name)
{
	size_t length = strlen(name);

	if (length == 0 || length >= VNFS_ENVIRONMENT_NAME_MAX ||
	    isdigit((unsigned char)name[0]))
		return false;
	for (size_t i = 0; i < length; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '_')
			return false;
	return true;
}

static int copy_name(char *destination, const char *name, size_t length, char *error,
		     size_t error_size)
{
	char shown[48];
	int shown_length = length < 40 ? (int)length : 40;

	memcpy(shown, name, (size_t)shown_length);
	shown[shown_length] = '\0';
	if (length >= VNFS_ENVIRONMENT_NAME_MAX) {
		snprintf(error, error_size, "'%s...' is longer than %d characters", shown,
			 VNFS_ENVIRONMENT_NAME_MAX - 1);
		return -1;
	}
	memcpy(destination, name, length);
	destination[length] = '\0';
	if (!vnfs_environment_name_valid(destination)) {
		snprintf(error, error_size,
			 "'%s' is not a variable name (letters, digits and '_', not starting with "
			 "a digit)",
			 shown);
		return -1;
	}
	return 0;
}

int vnfs_environment_job_variable_parse(const char *text,
					struct vnfs_environment_job_variable *variable,
					char *error, size_t error_size)
{
	const char *colon = strchr(text, ':');
	size_t name_length = colon ? (size_t)(colon - text) : strlen(text);
	struct vnfs_environment_job_variable parsed;

	memset(&parsed, 0, sizeof(parsed));

	if (copy_name(parsed.name, text, name_length, error, error_size) != 0)
		return -1;
	if (colon && copy_name(parsed.part, colon + 1, strlen(colon + 1), error, error_size) != 0)
		return -1;
	if (colon && strcmp(parsed.name, parsed.part) == 0) {
		snprintf(error, error_size, "'%s' cannot be its own part", parsed.name);
		return -1;
	}
	*variable = parsed;
	return 0;
}

enum vnfs_workload_source vnfs_environment_source(const char *name)
{
	for (size_t i = 0; i < sizeof(known_variables) / sizeof(known_variables[0]); i++)
		if (strcmp(known_variables[i].name, name) == 0)
			return known_variables[i].source;
	return VNFS_SOURCE_ENVIRONMENT;
}
