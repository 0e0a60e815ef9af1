/*
 * slurm.h — a job's entry in Slurm's accounting, read with sacct, and a
 * node list expanded with scontrol: what vnfs asks of Slurm's commands
 * (lib/slurm_accounting/command.h).  The entry is changed through Slurm's
 * API instead (accounting/slurmdb_store.h): sacctmgr changes the text.
 */
#ifndef VNFS_SLURM_ACCOUNTING_SLURM_H
#define VNFS_SLURM_ACCOUNTING_SLURM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The commands, by absolute path ([slurm_accounting] in vnfs.conf). */
struct vnfs_slurm_commands {
	const char *sacct;
	const char *scontrol;
};

/* Whether text is a Slurm job id (digits, as SLURM_JOB_ID, at most
 * 4294967295): nothing else reaches a command line. */
bool vnfs_slurm_job_id_valid(const char *text);

/* What sacct says of a job. */
struct vnfs_slurm_job_entry {
	char user[33];
	int64_t start_time_ms;       /* 0: unknown (never started) */
	int64_t end_time_ms;         /* 0: unknown (still running) */
	char nodes[512];             /* Slurm's list, e.g. "node[1-2]" */
	char *system_comment;        /* "" when none (malloc'd) */
	size_t system_comment_length;
};

/* The largest SystemComment read or written (slurmdbd keeps it as TEXT). */
#define VNFS_SLURM_COMMENT_MAX 65535

/*
 * Reads sacct's answer (-X -n -P -o JobID,User,Start,End,NodeList,
 * SystemComment, times as seconds) for job_id: the first line's fields, and
 * the comment as everything after the fifth '|' up to the end (a comment
 * may hold '|' and newlines; it is the last field for that reason; a
 * requeued job's later lines are not read).  Returns 1 when read, 0 when the
 * answer is empty (the accounting has no such job), -1 with a message.
 */
int vnfs_slurm_parse_job(const char *answer, size_t length, const char *job_id,
			 struct vnfs_slurm_job_entry *entry, char *error, size_t error_size);

/* Runs sacct for job_id and parses it as above; the same returns. */
int vnfs_slurm_read_job(const struct vnfs_slurm_commands *commands, const char *job_id,
			struct vnfs_slurm_job_entry *entry, char *error, size_t error_size);

void vnfs_slurm_job_entry_free(struct vnfs_slurm_job_entry *entry);

/*
 * The node names of a Slurm node list ("node[1-3],gpu7"), as scontrol show
 * hostnames expands it.  *names is one malloc'd array of *count strings
 * (free it with free()).  Returns 0, or -1 with a message.
 */
int vnfs_slurm_expand_nodes(const struct vnfs_slurm_commands *commands, const char *node_list,
			    char ***names, size_t *count, char *error, size_t error_size);

#endif /* VNFS_SLURM_ACCOUNTING_SLURM_H */
