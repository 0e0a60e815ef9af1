/*
 * slurm.c — sacct and scontrol, as vnfs uses them.  What they
 * print is read as untrusted text: a job's comment is written by tools and
 * administrators vnfs does not know, so it is bounded and kept as bytes,
 * never as a format.
 */
#include "lib/slurm_accounting/slurm.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/escape.h"
#include "lib/log.h"
#include "lib/slurm_accounting/command.h"

/* sacct's answer: one job's line with its comment, and the header of a
 * requeued job's other lines, bounded. */
#define SACCT_ANSWER_MAX (VNFS_SLURM_COMMENT_MAX + 4096)
/* scontrol's: a node name per line; 64 Ki nodes of 64 bytes. */
#define HOSTNAMES_ANSWER_MAX (4u << 20)

bool vnfs_slurm_job_id_valid(const char *job_id)
{
	size_t n = strlen(job_id);
	return n > 0 && n <= 10 && strspn(job_id, "0123456789") == n &&
	       strtoull(job_id, NULL, 10) <= UINT32_MAX;
}

/* A time sacct printed as seconds ("Unknown", "None": 0). */
static int64_t seconds_to_ms(const char *text)
{
	char *end;
	long long seconds = strtoll(text, &end, 10);
	if (end == text || *end != '\0' || seconds <= 0 || seconds > INT64_MAX / 1000)
		return 0;
	return (int64_t)seconds * 1000;
}

/* Copies the next '|'-ended field of *cursor (before end) into out; false
 * when there is no '|' before the line ends. */
static bool next_field(const char **cursor, const char *end, char *out, size_t size)
{
	const char *start = *cursor;
	const char *bar = start;
	while (bar < end && *bar != '|' && *bar != '\n')
		bar++;
	if (bar == end || *bar != '|')
		return false;
	size_t n = (size_t)(bar - start);
	if (n >= size)
		n = size - 1;
	memcpy(out, start, n);
	out[n] = '\0';
	*cursor = bar + 1;
	return true;
}

int vnfs_slurm_parse_job(const char *answer, size_t length, const char *job_id,
			 struct vnfs_slurm_job_entry *entry, char *error, size_t error_size)
{
	char id[64], start[32], end_time[32];
	const char *cursor = answer, *end = answer + length;

	memset(entry, 0, sizeof(*entry));
	if (length == 0)
		return 0;
	if (!next_field(&cursor, end, id, sizeof(id)) ||
	    !next_field(&cursor, end, entry->user, sizeof(entry->user)) ||
	    !next_field(&cursor, end, start, sizeof(start)) ||
	    !next_field(&cursor, end, end_time, sizeof(end_time)) ||
	    !next_field(&cursor, end, entry->nodes, sizeof(entry->nodes)))
		return vnfs_fail(error, error_size,
				 "sacct's answer for job %s does not read (not 6 fields)", job_id);
	entry->start_time_ms = seconds_to_ms(start);
	entry->end_time_ms = seconds_to_ms(end_time);
	size_t comment_length = (size_t)(end - cursor);
	while (comment_length > 0 && cursor[comment_length - 1] == '\n')
		comment_length--;
	if (comment_length > VNFS_SLURM_COMMENT_MAX)
		return vnfs_fail(error, error_size, "job %s's SystemComment is over %d bytes", job_id,
				 VNFS_SLURM_COMMENT_MAX);
	if ((entry->system_comment = malloc(comment_length + 1)) == NULL)
		return vnfs_fail(error, error_size, "out of memory");
	memcpy(entry->system_comment, cursor, comment_length);
	entry->system_comment[comment_length] = '\0';
	entry->system_comment_length = comment_length;
	return 1;
}

/* The first line of what a failed command said, for a message. */
static const char *said(const struct vnfs_command_output *output, char *out, size_t size)
{
	const char *line = output->error_line[0] != '\0' ? output->error_line : output->text;
	char first[256];
	snprintf(first, sizeof(first), "%.*s", (int)strcspn(line, "\n"), line);
	return vnfs_escape_string(VNFS_ESCAPE_LOG, first, out, size);
}

int vnfs_slurm_read_job(const struct vnfs_slurm_commands *commands, const char *job_id,
			struct vnfs_slurm_job_entry *entry, char *error, size_t error_size)
{
	struct vnfs_command_output output;
	char shown[256 * VNFS_ESCAPE_GROWTH];

	memset(entry, 0, sizeof(*entry));
	if (!vnfs_slurm_job_id_valid(job_id))
		return vnfs_fail(error, error_size, "'%s' is not a Slurm job id",
				 vnfs_quote_prefix(job_id, 20, shown, sizeof(shown)));
	/* Times as seconds since the epoch (strftime's %s), not in the
	 * reader's locale: sacct takes the format from its environment. */
	if (setenv("SLURM_TIME_FORMAT", "%s", 1) < 0)
		return vnfs_fail(error, error_size, "out of memory");
	const char *argv[] = { commands->sacct, "-j", job_id, "-X", "-n", "-P", "-o",
			       "JobID,User,Start,End,NodeList,SystemComment", NULL };
	int rc = -1;
	if (vnfs_command_run(argv, SACCT_ANSWER_MAX, VNFS_COMMAND_TIMEOUT_MS, &output, error,
			     error_size) < 0)
		goto out;
	if (output.exit_status != 0) {
		vnfs_fail(error, error_size, "%s -j %s failed (exit %d): %s", commands->sacct, job_id,
			  output.exit_status, said(&output, shown, sizeof(shown)));
		goto out;
	}
	if (output.truncated) {
		vnfs_fail(error, error_size, "sacct's answer for job %s is over %u bytes", job_id,
			  SACCT_ANSWER_MAX);
		goto out;
	}
	rc = vnfs_slurm_parse_job(output.text, output.length, job_id, entry, error, error_size);
out:
	vnfs_command_output_free(&output);
	return rc;
}

void vnfs_slurm_job_entry_free(struct vnfs_slurm_job_entry *entry)
{
	free(entry->system_comment);
	entry->system_comment = NULL;
}

int vnfs_slurm_expand_nodes(const struct vnfs_slurm_commands *commands, const char *node_list,
			    char ***names_out, size_t *count_out, char *error, size_t error_size)
{
	struct vnfs_command_output output;
	char shown[256 * VNFS_ESCAPE_GROWTH];
	const char *argv[] = { commands->scontrol, "show", "hostnames", node_list, NULL };

	*names_out = NULL;
	*count_out = 0;
	if (vnfs_command_run(argv, HOSTNAMES_ANSWER_MAX, VNFS_COMMAND_TIMEOUT_MS, &output, error,
			     error_size) < 0) {
		vnfs_command_output_free(&output);
		return -1;
	}
	int rc = -1;
	if (output.exit_status != 0 || output.truncated || output.length == 0) {
		vnfs_fail(error, error_size, "%s show hostnames failed (exit %d): %s",
			  commands->scontrol, output.exit_status, said(&output, shown, sizeof(shown)));
		goto out;
	}
	/* One block: the pointers, then the names (output's own bytes, each
	 * '\n' made a NUL). */
	size_t lines = 1;
	for (size_t i = 0; i < output.length; i++)
		lines += output.text[i] == '\n';
	char **names = malloc(lines * sizeof(char *) + output.length + 1);
	if (names == NULL) {
		vnfs_fail(error, error_size, "out of memory");
		goto out;
	}
	char *text = (char *)(names + lines);
	memcpy(text, output.text, output.length + 1);
	size_t count = 0;
	for (char *line = text; *line != '\0';) {
		char *newline = strchr(line, '\n');
		if (newline != NULL)
			*newline = '\0';
		if (*line != '\0')
			names[count++] = line;
		line = newline != NULL ? newline + 1 : line + strlen(line);
	}
	*names_out = names;
	*count_out = count;
	rc = 0;
out:
	vnfs_command_output_free(&output);
	return rc;
}
