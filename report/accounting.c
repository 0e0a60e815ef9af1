/*
 * accounting.c — a finished job from Slurm's accounting (see accounting.h).
 */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/escape.h"
#include "lib/log.h"
#include "lib/job_report/text.h"
#include "lib/slurm_accounting/slurm.h"
#include "report/accounting.h"

/* The uid of a user sacct names: the filter's "only your own jobs" compares
 * uids.  One this node does not know matches no one but root's view. */
static uint32_t uid_of(const char *user)
{
	char buffer[4096];
	struct passwd entry, *found = NULL;
	if (getpwnam_r(user, &entry, buffer, sizeof(buffer), &found) != 0 || found == NULL)
		return UINT32_MAX;
	return found->pw_uid;
}

int report_load_accounting_job(const char *sacct, const struct vnfs_workload *job,
			       struct report_accounting_job *found, char *error,
			       size_t error_size)
{
	const struct vnfs_slurm_commands commands = { .sacct = sacct };
	struct vnfs_slurm_job_entry entry;
	char problem[512];

	int read = vnfs_slurm_read_job(&commands, job->job, &entry, error, error_size);
	if (read <= 0)
		return read;
	int parsed = vnfs_accounting_parse(entry.system_comment, entry.system_comment_length,
					   &found->summary, problem, sizeof(problem));
	if (parsed < 0)
		vnfs_fail(error, error_size, "job %s's SystemComment: %s", job->job, problem);
	if (parsed > 0)
		vnfs_accounting_row(&found->summary, job, entry.user, uid_of(entry.user),
				    entry.nodes, entry.start_time_ms, entry.end_time_ms,
				    &found->row);
	vnfs_slurm_job_entry_free(&entry);
	return parsed;
}

const char *report_accounting_partial(const struct vnfs_accounting_summary *summary, char *out,
				      size_t size)
{
	out[0] = '\0';
	if (summary->nodes_reported < summary->nodes_expected)
		snprintf(out, size, "%u of %u nodes reported%s%s%s", summary->nodes_reported,
			 summary->nodes_expected, summary->missing[0] != '\0' ? " (missing: " : "",
			 summary->missing, summary->missing[0] != '\0' ? ")" : "");
	return out;
}

void report_print_accounting_long(FILE *out, const struct report_accounting_job *job,
				  int64_t now_ms)
{
	const struct vnfs_accounting_summary *summary = &job->summary;
	char partial[VNFS_ACCOUNTING_MISSING_MAX + 64];
	report_print_long_summary(out, &job->row, "Slurm's accounting", summary->findings,
				  summary->finding_count, now_ms);
	if (report_accounting_partial(summary, partial, sizeof(partial))[0] != '\0')
		fprintf(out, "\nNodes: %s; the numbers lack theirs.\n", partial);
	else
		fprintf(out, "\nNodes: all %u reported.\n", summary->nodes_expected);
}

/* Adds key: value as a JSON integer (json-c keeps 64-bit signed; counters stay below). */
static void add_number(struct json_object *object, const char *key, uint64_t value)
{
	json_object_object_add(object, key, json_object_new_int64((int64_t)value));
}

struct json_object *report_accounting_json(const struct report_accounting_job *job)
{
	const struct vnfs_accounting_summary *summary = &job->summary;
	struct json_object *object = json_object_new_object();
	struct json_object *operations = json_object_new_object();
	struct json_object *findings = json_object_new_array();
	struct json_object *tags = json_object_new_object();
	if (object == NULL || operations == NULL || findings == NULL || tags == NULL) {
		json_object_put(object);
		json_object_put(operations);
		json_object_put(findings);
		json_object_put(tags);
		return NULL;
	}
	json_object_object_add(object, "source", json_object_new_string("slurm_accounting"));
	json_object_object_add(object, "job", json_object_new_string(job->row.workload.job));
	json_object_object_add(object, "user", json_object_new_string(job->row.user));
	json_object_object_add(object, "nodes", json_object_new_string(job->row.nodes));
	add_number(object, "nodes_reported", summary->nodes_reported);
	add_number(object, "nodes_expected", summary->nodes_expected);
	json_object_object_add(object, "missing_nodes", json_object_new_string(summary->missing));
	json_object_object_add(object, "start_time_ms", json_object_new_int64(job->row.start_time_ms));
	json_object_object_add(object, "end_time_ms", json_object_new_int64(job->row.end_time_ms));
	const char *name, *value;
	for (unsigned i = 0; vnfs_tags_get(&summary->tags, i, &name, &value); i++)
		json_object_object_add(tags, name, json_object_new_string(value));
	json_object_object_add(object, "tags", tags);
	for (int op = 0; op < VNFS_OP_COUNT; op++) {
		const struct vnfs_accounting_operation *o = &summary->operations[op];
		if (vnfs_accounting_operation_empty(o))
			continue;
		struct json_object *entry = json_object_new_object();
		if (entry == NULL)
			continue;
		add_number(entry, "count", o->count);
		add_number(entry, "bytes", o->bytes);
		add_number(entry, "time_ns", o->time_ns);
		add_number(entry, "errors", o->errors);
		json_object_object_add(operations, vnfs_operation_names[op], entry);
	}
	json_object_object_add(object, "operations", operations);
	for (size_t i = 0; i < summary->finding_count; i++)
		json_object_array_add(findings,
				      json_object_new_string(report_rule_names[summary->findings[i]]));
	json_object_object_add(object, "findings", findings);
	json_object_object_add(object, "state", json_object_new_string("COMPLETED"));
	return object;
}
