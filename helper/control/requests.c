/*
 * requests.c — each request's work in the helper (see requests.h).
 */
#include "helper/control/requests.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "helper/control/history_answers.h"
#include "lib/job_report/times.h" /* report_now_ms: the wall clock, in ms */
#include "lib/log.h"

static void handle_register(struct vnfs_requests *requests, const struct vnfs_request *request,
			    struct vnfs_reply *reply)
{
	struct vnfs_step step = { 0 };
	char error[512];
	uint32_t slot;
	struct stat cgroup;

	step.workload = request->workload;
	step.uid = request->uid;
	step.cgroup_id = request->cgroup_id;
	step.tags = request->tags;
	step.start_time_ms = report_now_ms();
	snprintf(step.cgroup_path, sizeof(step.cgroup_path), "%s", request->cgroup_path);
	if (step.cgroup_id == 0) {
		/* The cgroup v2 id is the inode number of its directory. */
		if (stat(request->cgroup_path, &cgroup) != 0 || !S_ISDIR(cgroup.st_mode)) {
			vnfs_reply_fail(reply, "cgroup '%s': %s", request->cgroup_path,
					errno ? strerror(errno) : "not a directory");
			return;
		}
		step.cgroup_id = cgroup.st_ino;
	}
	if (vnfs_steps_register(requests->steps, &step, &slot, error, sizeof(error)) != 0) {
		vnfs_reply_fail(reply, "%s", error);
		return;
	}
	reply->slot = slot;
}

/*
 * A QUERY for a job that no longer runs here is answered from the history, so
 * that users, who may not read history.db (docs/SECURITY.md), still read
 * their finished jobs; the server shows the answer to the owner and root only.
 * Runs on the readers' thread, with a connection of its own to the database.
 * Returns 0 with the job in *job, or -1 when the history has no such job.
 */
static int finished_job(struct vnfs_requests *requests, const struct vnfs_request *request,
			struct vnfs_owned_job *job)
{
	char history_error[512], name[VNFS_WORKLOAD_DESCRIPTION_MAX];

	if (request->workload.part[0] != '\0' || !requests->config->sqlite.enabled)
		return -1;
	if (vnfs_history_answer_job(requests->config->sqlite.path, &request->workload, job,
				    history_error, sizeof(history_error)) < 0) {
		vnfs_debug("query of %s: %s",
			   vnfs_workload_describe(&request->workload, name, sizeof(name)),
			   history_error);
		return -1;
	}
	return 0;
}

static void handle_query(struct vnfs_requests *requests, const struct vnfs_request *request,
			 struct vnfs_answer *answer)
{
	char error[512];

	if (vnfs_collector_query(requests->collector, &request->workload, &answer->reply.job, error,
				 sizeof(error)) < 0 &&
	    finished_job(requests, request, &answer->reply.job) < 0) {
		vnfs_reply_fail(&answer->reply, "%s", error); /* the live error stands */
		return;
	}
	answer->owner_known = true;
	answer->owner_uid = answer->reply.job.uid;
}

/*
 * HISTORY: the caller's jobs (root: everyone's) in the time range, from the
 * history that users may not read themselves.  Readers' thread, with a
 * connection of its own to the database.
 */
static void history_listing(struct vnfs_requests *requests, const struct vnfs_request *request,
			    const struct vnfs_peer *peer, struct vnfs_reply *reply)
{
	struct report_filter *filter;
	char error[512] = "";
	int status;

	if (!requests->config->sqlite.enabled) {
		vnfs_reply_fail(reply, "this node keeps no history ([sqlite] enabled = false)");
		return;
	}
	filter = calloc(1, sizeof(*filter));
	if (filter == NULL) {
		vnfs_reply_fail(reply, "out of memory");
		return;
	}
	filter->has_uid = peer->uid != 0;
	filter->uid = peer->uid;
	filter->has_start = request->has_since;
	filter->start_ms = request->since_ms;
	filter->has_end = request->has_until;
	filter->end_ms = request->until_ms;
	status = vnfs_history_answer_jobs(requests->config->sqlite.path, filter,
					  VNFS_HISTORY_MAX_STEPS, &reply->jobs, &reply->job_count,
					  &reply->truncated, error, sizeof(error));
	free(filter);
	if (status < 0) {
		vnfs_debug("history for uid %u: %s", (unsigned)peer->uid, error);
		vnfs_reply_fail(reply, "the history cannot be read now");
	}
}

int vnfs_requests_handle(void *context, const struct vnfs_request *request,
			 const struct vnfs_peer *peer, struct vnfs_answer *answer)
{
	struct vnfs_requests *requests = context;
	struct vnfs_reply *reply = &answer->reply;
	char error[512], name[VNFS_WORKLOAD_DESCRIPTION_MAX];

	switch (request->type) {
	case VNFS_REQUEST_REGISTER:
		handle_register(requests, request, reply);
		return 0;
	case VNFS_REQUEST_UNREGISTER:
		if (vnfs_steps_end(requests->steps, &request->workload, report_now_ms()) < 0)
			vnfs_reply_fail(reply, "%s is not registered",
					vnfs_workload_describe(&request->workload, name,
							       sizeof(name)));
		return 0;
	case VNFS_REQUEST_FINISH:
		if (vnfs_collector_finish_job(requests->collector, &request->workload,
					      request->report_dir, report_now_ms(), &reply->job, error,
					      sizeof(error)) < 0)
			vnfs_reply_fail(reply, "%s", error);
		return 0;
	case VNFS_REQUEST_QUERY:
		handle_query(requests, request, answer);
		return 0;
	case VNFS_REQUEST_LIST:
		if (vnfs_collector_list(requests->collector, peer->uid == 0 ? UINT32_MAX : peer->uid,
					&reply->entries, &reply->entry_count) < 0)
			vnfs_reply_fail(reply, "out of memory");
		return 0;
	case VNFS_REQUEST_STATUS:
		reply->status = vnfs_collector_status(requests->collector);
		return reply->status != NULL ? 0 : -1;
	case VNFS_REQUEST_HISTORY:
		history_listing(requests, request, peer, reply);
		return 0;
	default:
		return -1;
	}
}
