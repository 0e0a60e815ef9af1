/*
 * command.c — runs a Slurm command with posix_spawn and reads its stdout
 * and stderr together through poll(), so that neither pipe can fill and
 * stall the command while the other is read.
 */
#include "lib/slurm_accounting/command.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/job_report/times.h"
#include "lib/log.h"

extern char **environ;

/* Starts argv with stdout and stderr on new pipes.  Returns its pid, or -1. */
static pid_t spawn_with_pipes(const char *const argv[], int *out_fd, int *err_fd, char *error,
			      size_t error_size)
{
	int out[2] = { -1, -1 }, err[2] = { -1, -1 };
	posix_spawn_file_actions_t actions;
	pid_t pid = -1;

	/* posix_spawn says when exec fails, but not everywhere (under
	 * valgrind the child just exits 127): look first, for a clear message. */
	if (access(argv[0], X_OK) < 0) {
		vnfs_fail(error, error_size, "cannot run %s: %s", argv[0], strerror(errno));
		return -1;
	}
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
		vnfs_fail(error, error_size, "%s: pipe: %s", argv[0], strerror(errno));
		goto close_pipes;
	}
	int rc = posix_spawn_file_actions_init(&actions);
	if (rc == 0)
		rc = posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	if (rc == 0)
		rc = posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
	if (rc == 0)
		rc = posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
	if (rc == 0)
		rc = posix_spawn(&pid, argv[0], &actions, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&actions);
	if (rc != 0) {
		vnfs_fail(error, error_size, "cannot run %s: %s", argv[0], strerror(rc));
		pid = -1;
		goto close_pipes;
	}
	close(out[1]);
	close(err[1]);
	*out_fd = out[0];
	*err_fd = err[0];
	return pid;
close_pipes:
	for (int i = 0; i < 2; i++) {
		if (out[i] >= 0)
			close(out[i]);
		if (err[i] >= 0)
			close(err[i]);
	}
	return -1;
}

/* Reads what is ready on fd into text (bounded); returns 0 at end of file. */
static ssize_t read_some(int fd, char *text, size_t *length, size_t max, bool *truncated)
{
	char chunk[4096];
	ssize_t got = read(fd, chunk, sizeof(chunk));
	if (got <= 0)
		return got < 0 && (errno == EINTR || errno == EAGAIN) ? 1 : 0;
	size_t room = max - *length;
	size_t keep = (size_t)got < room ? (size_t)got : room;
	memcpy(text + *length, chunk, keep);
	*length += keep;
	if (keep < (size_t)got)
		*truncated = true;
	return got;
}

/* Reads both pipes until both end or the deadline passes.  Returns 0 or -1 (late). */
static int read_until_end(int out_fd, int err_fd, struct vnfs_command_output *output,
			  size_t max_output, char *stderr_text, size_t *stderr_length,
			  size_t stderr_max, int64_t deadline)
{
	struct pollfd fds[2] = { { .fd = out_fd, .events = POLLIN },
				 { .fd = err_fd, .events = POLLIN } };
	bool stderr_truncated = false;
	while (fds[0].fd >= 0 || fds[1].fd >= 0) {
		int64_t left = deadline - report_monotonic_ms();
		if (left <= 0)
			return -1;
		int ready = poll(fds, 2, (int)left);
		if (ready < 0 && errno != EINTR)
			return -1;
		if (ready <= 0)
			continue;
		if (fds[0].fd >= 0 && fds[0].revents != 0 &&
		    read_some(out_fd, output->text, &output->length, max_output,
			      &output->truncated) == 0)
			fds[0].fd = -1;
		if (fds[1].fd >= 0 && fds[1].revents != 0 &&
		    read_some(err_fd, stderr_text, stderr_length, stderr_max,
			      &stderr_truncated) == 0)
			fds[1].fd = -1;
	}
	return 0;
}

/* Waits for pid, killing it first when it is late.  Returns its status code. */
static int reap(pid_t pid, bool kill_first)
{
	int status = 0;
	if (kill_first)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 128 + SIGKILL;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

int vnfs_command_run(const char *const argv[], size_t max_output, int timeout_ms,
		     struct vnfs_command_output *output, char *error, size_t error_size)
{
	char stderr_text[sizeof(output->error_line)];
	size_t stderr_length = 0;
	int out_fd = -1, err_fd = -1;

	memset(output, 0, sizeof(*output));
	if ((output->text = malloc(max_output + 1)) == NULL)
		return vnfs_fail(error, error_size, "out of memory");
	output->text[0] = '\0';
	pid_t pid = spawn_with_pipes(argv, &out_fd, &err_fd, error, error_size);
	if (pid < 0)
		return -1;
	int64_t deadline = report_monotonic_ms() + timeout_ms;
	int late = read_until_end(out_fd, err_fd, output, max_output, stderr_text, &stderr_length,
				  sizeof(stderr_text) - 1, deadline);
	close(out_fd);
	close(err_fd);
	output->exit_status = reap(pid, late < 0);
	output->text[output->length] = '\0';
	stderr_text[stderr_length] = '\0';
	stderr_text[strcspn(stderr_text, "\n")] = '\0';
	memcpy(output->error_line, stderr_text, stderr_length + 1);
	if (late < 0)
		return vnfs_fail(error, error_size, "%s did not finish within %d s (killed)", argv[0],
				 timeout_ms / 1000);
	return 0;
}

void vnfs_command_output_free(struct vnfs_command_output *output)
{
	free(output->text);
	output->text = NULL;
	output->length = 0;
}
