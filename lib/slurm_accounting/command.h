/*
 * command.h — runs one of Slurm's commands (sacct, scontrol) and reads what
 * it prints.  vnfs-report reads Slurm's accounting through sacct, as its
 * user would: it needs no library of Slurm's version, and Slurm applies its
 * own rules of who may see what (PrivateData).
 *
 * The command runs with no shell (argv as given, never a string to split),
 * stdin from /dev/null, and a deadline: a slurmdbd that does not answer
 * costs the caller that long at most, and the command is then killed.
 */
#ifndef VNFS_SLURM_ACCOUNTING_COMMAND_H
#define VNFS_SLURM_ACCOUNTING_COMMAND_H

#include <stdbool.h>
#include <stddef.h>

/* How long one command may take, in milliseconds. */
#define VNFS_COMMAND_TIMEOUT_MS 30000

/* What a command printed and how it ended. */
struct vnfs_command_output {
	char *text;          /* stdout, NUL-terminated (malloc'd; NULL before a run) */
	size_t length;
	bool truncated;      /* it printed more than the caller's bound */
	int exit_status;     /* its exit code, or 128 + signal */
	char error_line[256]; /* the first line it wrote to stderr, or "" */
};

/*
 * Runs argv[0] (an absolute path) with argv, keeping at most max_output
 * bytes of its stdout, for at most timeout_ms.  Returns 0 when it ran to its
 * end (whatever its exit status), or -1 with a message in error: it could
 * not be started, or did not end in time (it was killed).  Free the output
 * with vnfs_command_output_free in both cases.
 */
int vnfs_command_run(const char *const argv[], size_t max_output, int timeout_ms,
		     struct vnfs_command_output *output, char *error, size_t error_size);

void vnfs_command_output_free(struct vnfs_command_output *output);

#endif /* VNFS_SLURM_ACCOUNTING_COMMAND_H */
