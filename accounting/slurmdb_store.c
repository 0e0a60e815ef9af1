/*
 * slurmdb_store.c — one job's SystemComment through libslurm (see
 * slurmdb_store.h).  Slurm frees what it allocates with its own allocator,
 * so every structure given to it here is this file's and freed here: no
 * slurmdb_destroy_* is called on them.
 */
#include "accounting/slurmdb_store.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurmdb.h>

#include "lib/log.h"

static bool slurm_ready;

/* The comment as slurmdbd can take it between single quotes. */
static char *sql_safe_copy(const char *comment)
{
	char *copy = strdup(comment);
	for (char *c = copy; c != NULL && *c != '\0'; c++) {
		if (*c == '\'' || *c == '"')
			*c = '`';
		else if (*c == '\\')
			*c = '/';
	}
	return copy;
}

/* The condition "this job, every step": sacctmgr's "where jobid=N". */
static List job_step_list(uint32_t job_id)
{
	slurm_selected_step_t *step = calloc(1, sizeof(*step));
	if (step == NULL)
		return NULL;
	*step = (slurm_selected_step_t){
		.array_task_id = NO_VAL,
		.het_job_offset = NO_VAL,
		.step_id = { .job_id = job_id, .step_het_comp = NO_VAL, .step_id = NO_VAL },
	};
	List steps = slurm_list_create(free);
	slurm_list_append(steps, step);
	return steps;
}

/* Asks slurmdbd to change the job; the caller commits. */
static enum accounting_store_result modify(void *connection, uint32_t job_id, char *comment,
					   char *error, size_t error_size)
{
	slurmdb_job_cond_t condition = {
		.db_flags = SLURMDB_JOB_FLAG_NOTSET,
		.flags = JOBCOND_FLAG_NO_DEFAULT_USAGE,
		.step_list = job_step_list(job_id),
	};
	/* The values slurmdb_create_job_rec gives, so that nothing but the
	 * comment counts as a change. */
	slurmdb_job_rec_t change = {
		.array_task_id = NO_VAL,
		.derived_ec = NO_VAL,
		.state = JOB_PENDING,
		.requid = -1,
		.lft = NO_VAL,
		.resvid = NO_VAL,
		.system_comment = comment,
	};
	if (condition.step_list == NULL) {
		vnfs_fail(error, error_size, "out of memory");
		return ACCOUNTING_FAILED;
	}
	errno = 0;
	List modified = slurmdb_job_modify(connection, &condition, &change);
	int failure = errno;
	enum accounting_store_result result = ACCOUNTING_STORED;
	if (modified == NULL && failure == SLURM_NO_CHANGE_IN_DATA) {
		result = ACCOUNTING_NO_SUCH_JOB;
		vnfs_fail(error, error_size, "slurmdbd has no record of job %u", job_id);
	} else if (modified == NULL) {
		result = ACCOUNTING_FAILED;
		vnfs_fail(error, error_size, "slurmdbd refused to change job %u: %s", job_id,
			  slurm_strerror(failure));
	} else if (slurm_list_count(modified) == 0) {
		result = ACCOUNTING_NO_SUCH_JOB;
		vnfs_fail(error, error_size, "slurmdbd has no record of job %u", job_id);
	}
	if (modified != NULL)
		slurm_list_destroy(modified);
	slurm_list_destroy(condition.step_list);
	return result;
}

enum accounting_store_result accounting_store_comment(uint32_t job_id, const char *comment,
						      char *error, size_t error_size)
{
	if (!slurm_ready) {
		slurm_init(NULL);
		slurm_ready = true;
	}
	char *safe = sql_safe_copy(comment);
	if (safe == NULL) {
		vnfs_fail(error, error_size, "out of memory");
		return ACCOUNTING_FAILED;
	}
	uint16_t flags = 0;
	void *connection = slurmdb_connection_get(&flags);
	if (connection == NULL) {
		vnfs_fail(error, error_size, "cannot reach slurmdbd: %s",
			  slurm_strerror(slurm_get_errno()));
		free(safe);
		return ACCOUNTING_FAILED;
	}
	enum accounting_store_result result = modify(connection, job_id, safe, error, error_size);
	if (result == ACCOUNTING_STORED && slurmdb_connection_commit(connection, true) != SLURM_SUCCESS) {
		vnfs_fail(error, error_size, "slurmdbd did not commit the change of job %u", job_id);
		result = ACCOUNTING_FAILED;
	}
	slurmdb_connection_close(&connection);
	free(safe);
	return result;
}

void accounting_store_finish(void)
{
	if (slurm_ready)
		slurm_fini();
	slurm_ready = false;
}
