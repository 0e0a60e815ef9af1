/*
 * fuzz_accounting_summary.c — libFuzzer target for what vnfs reads from
 * Slurm's accounting: sacct's answer (vnfs_slurm_parse_job), the job's
 * SystemComment, which any Slurm administrator or plugin may have written
 * (vnfs_accounting_parse), and the merge of vnfs's line into it.
 *
 * Properties beyond the sanitizers': a refusal says why, with no control
 * byte; a summary that reads is written back and reads again the same
 * (nothing the parser accepts is lost by the writer); the merged comment
 * has exactly one vnfs line, ours, and keeps every other non-empty line.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/slurm_accounting/slurm.h"
#include "lib/slurm_accounting/summary.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_message(const char *error)
{
	if (error[0] == '\0')
		abort();
	for (const char *c = error; *c != '\0'; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			abort();
}

static void check_round_trip(const struct vnfs_accounting_summary *summary)
{
	char line[VNFS_ACCOUNTING_LINE_MAX], error[512];
	struct vnfs_accounting_summary again;
	if (vnfs_accounting_format(summary, line, sizeof(line)) < 0)
		abort();
	if (vnfs_accounting_parse(line, strlen(line), &again, error, sizeof(error)) != 1)
		abort();
	if (memcmp(again.operations, summary->operations, sizeof(again.operations)) != 0 ||
	    again.nodes_reported != summary->nodes_reported ||
	    again.nodes_expected != summary->nodes_expected ||
	    strcmp(again.missing, summary->missing) != 0 ||
	    again.finding_count != summary->finding_count ||
	    again.tags.count != summary->tags.count)
		abort();
}

static void check_merge(const char *comment)
{
	static const char ours[] = "vnfs1 nodes=1/1 read=1:2:3:0";
	size_t size = strlen(comment) + sizeof(ours) + 1;
	char *merged = malloc(size);
	if (merged == NULL)
		return;
	if (vnfs_accounting_merge_comment(comment, ours, merged, size) < 0)
		abort();
	/* Ours is the last line, and no other vnfs line is left. */
	size_t length = strlen(merged);
	if (length < sizeof(ours) - 1 || strcmp(merged + length - (sizeof(ours) - 1), ours) != 0)
		abort();
	struct vnfs_accounting_summary summary;
	char error[512];
	size_t before_ours = length - (sizeof(ours) - 1);
	if (vnfs_accounting_parse(merged, before_ours, &summary, error, sizeof(error)) != 0)
		abort();
	free(merged);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	char error[512];
	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	struct vnfs_slurm_job_entry entry;
	error[0] = '\0';
	int read = vnfs_slurm_parse_job(text, size, "42", &entry, error, sizeof(error));
	if (read < 0)
		check_message(error);
	vnfs_slurm_job_entry_free(&entry);

	struct vnfs_accounting_summary summary;
	error[0] = '\0';
	int parsed = vnfs_accounting_parse(text, size, &summary, error, sizeof(error));
	if (parsed < 0)
		check_message(error);
	if (parsed == 1)
		check_round_trip(&summary);
	if (strlen(text) == size) /* a comment is text: no NUL inside */
		check_merge(text);
	free(text);
	return 0;
}
