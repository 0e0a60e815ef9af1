/*
 * slurmdb_store.h — sets a job's SystemComment in slurmdbd through Slurm's
 * accounting API (libslurm's slurmdb_job_modify), as `sacctmgr modify job`
 * does, but without sacctmgr's changes to the text: Slurm 22.05's sacctmgr
 * lowercases every comment it sets (fixed in 23.02), which would change a
 * job's tags and other tools' lines.
 */
#ifndef VNFS_ACCOUNTING_SLURMDB_STORE_H
#define VNFS_ACCOUNTING_SLURMDB_STORE_H

#include <stddef.h>
#include <stdint.h>

/* What accounting_store_comment found. */
enum accounting_store_result {
	ACCOUNTING_STORED,
	ACCOUNTING_NO_SUCH_JOB,   /* slurmdbd has no record of the job (yet) */
	ACCOUNTING_FAILED,        /* could not ask: a message says why */
};

/*
 * Sets job_id's SystemComment to comment.  slurmdbd 22.05 puts the text
 * into its SQL between single quotes without escaping it, so quotes become
 * '`' (as sacctmgr makes them) and backslashes '/': a line of another tool
 * may change so, never the query.  Reads slurm.conf (SLURM_CONF) once.
 */
enum accounting_store_result accounting_store_comment(uint32_t job_id, const char *comment,
						      char *error, size_t error_size);

/* Slurm's own clean-up, at exit. */
void accounting_store_finish(void);

#endif /* VNFS_ACCOUNTING_SLURMDB_STORE_H */
