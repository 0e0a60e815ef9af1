/*
 * report_writer.c — a queue of rendered report files and the thread that
 * writes them (see the header for why).
 */
#include "helper/outputs/report_writer.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/config.h"
#include "lib/log.h"

/* One job's files on their way to disk; also what a FINISH waits on. */
struct vnfs_report_ticket {
	struct vnfs_report_ticket *next;
	struct vnfs_report_files files;
	char report_dir[VNFS_PATH_MAX];
	char node[65];
	struct vnfs_workload job;
	char job_name[VNFS_WORKLOAD_DESCRIPTION_MAX]; /* "job 42", for messages */
	uint32_t owner_uid;
	bool waited;            /* a caller waits: it frees the ticket, not the writer */
	bool done;
	int result;
	char error[512];
};

struct vnfs_report_writer {
	pthread_mutex_t lock;
	pthread_cond_t changed;  /* work queued, a waited ticket done, or stopping */
	pthread_t thread;
	gid_t admin_gid;
	bool stopping;
	unsigned queued;
	struct vnfs_report_ticket *head, *tail;
};

static void write_ticket(struct vnfs_report_writer *writer, struct vnfs_report_ticket *ticket)
{
	ticket->result = vnfs_report_store(&ticket->files, ticket->report_dir, &ticket->job,
					   ticket->owner_uid, writer->admin_gid, ticket->node,
					   ticket->error, sizeof(ticket->error));
	if (ticket->result != 0)
		vnfs_error("%s: report files not written: %s", ticket->job_name, ticket->error);
	vnfs_report_files_free(&ticket->files);
}

/* Takes the oldest ticket, or NULL when stopping with nothing left. */
static struct vnfs_report_ticket *next_ticket(struct vnfs_report_writer *writer)
{
	struct vnfs_report_ticket *ticket;

	pthread_mutex_lock(&writer->lock);
	while (writer->head == NULL && !writer->stopping)
		pthread_cond_wait(&writer->changed, &writer->lock);
	ticket = writer->head;
	if (ticket != NULL) {
		writer->head = ticket->next;
		if (writer->head == NULL)
			writer->tail = NULL;
		writer->queued--;
	}
	pthread_mutex_unlock(&writer->lock);
	return ticket;
}

static void *writer_thread(void *argument)
{
	struct vnfs_report_writer *writer = argument;
	struct vnfs_report_ticket *ticket;

	while ((ticket = next_ticket(writer)) != NULL) {
		write_ticket(writer, ticket);
		pthread_mutex_lock(&writer->lock);
		if (ticket->waited) {
			ticket->done = true;
			pthread_cond_broadcast(&writer->changed);
			ticket = NULL;
		}
		pthread_mutex_unlock(&writer->lock);
		free(ticket);
	}
	return NULL;
}

int vnfs_report_writer_start(struct vnfs_report_writer **result, gid_t admin_gid, char *error,
			     size_t error_size)
{
	struct vnfs_report_writer *writer = calloc(1, sizeof(*writer));
	sigset_t all, previous;
	int status;

	*result = NULL;
	if (writer == NULL) {
		snprintf(error, error_size, "report writer: out of memory");
		return -1;
	}
	writer->admin_gid = admin_gid;
	pthread_mutex_init(&writer->lock, NULL);
	pthread_cond_init(&writer->changed, NULL);
	/* Signals belong to the daemon's main loop. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &previous);
	status = pthread_create(&writer->thread, NULL, writer_thread, writer);
	pthread_sigmask(SIG_SETMASK, &previous, NULL);
	if (status != 0) {
		snprintf(error, error_size, "cannot start the report writer: %s", strerror(status));
		pthread_cond_destroy(&writer->changed);
		pthread_mutex_destroy(&writer->lock);
		free(writer);
		return -1;
	}
	*result = writer;
	return 0;
}

int vnfs_report_writer_submit(struct vnfs_report_writer *writer, struct vnfs_report_files *files,
			      const struct vnfs_report_destination *destination,
			      struct vnfs_report_ticket **waiter, char *error, size_t error_size)
{
	struct vnfs_report_ticket *ticket = calloc(1, sizeof(*ticket));
	bool full;

	if (ticket == NULL) {
		vnfs_report_files_free(files);
		snprintf(error, error_size, "out of memory queueing a job's report files");
		return -1;
	}
	ticket->job = *destination->job;
	ticket->job.part[0] = '\0';
	vnfs_workload_describe(&ticket->job, ticket->job_name, sizeof(ticket->job_name));
	ticket->files = *files;
	memset(files, 0, sizeof(*files));
	snprintf(ticket->report_dir, sizeof(ticket->report_dir), "%s", destination->report_dir);
	snprintf(ticket->node, sizeof(ticket->node), "%s", destination->node);
	ticket->owner_uid = destination->owner_uid;
	ticket->waited = waiter != NULL;

	pthread_mutex_lock(&writer->lock);
	full = writer->queued >= VNFS_REPORT_QUEUE_MAX;
	if (!full) {
		if (writer->tail != NULL)
			writer->tail->next = ticket;
		else
			writer->head = ticket;
		writer->tail = ticket;
		writer->queued++;
		pthread_cond_broadcast(&writer->changed);
	}
	pthread_mutex_unlock(&writer->lock);
	if (full) {
		snprintf(error, error_size,
			 "%s: report files dropped: %u jobs' files already wait for %s",
			 ticket->job_name, VNFS_REPORT_QUEUE_MAX, destination->report_dir);
		vnfs_report_files_free(&ticket->files);
		free(ticket);
		return -1;
	}
	if (waiter != NULL)
		*waiter = ticket;
	return 0;
}

int vnfs_report_writer_wait(struct vnfs_report_writer *writer, struct vnfs_report_ticket *ticket,
			    char *error, size_t error_size)
{
	int result;

	pthread_mutex_lock(&writer->lock);
	while (!ticket->done)
		pthread_cond_wait(&writer->changed, &writer->lock);
	pthread_mutex_unlock(&writer->lock);
	result = ticket->result;
	if (result != 0)
		snprintf(error, error_size, "%s", ticket->error);
	free(ticket);
	return result;
}

void vnfs_report_writer_stop(struct vnfs_report_writer *writer)
{
	if (writer == NULL)
		return;
	pthread_mutex_lock(&writer->lock);
	writer->stopping = true;
	pthread_cond_broadcast(&writer->changed);
	pthread_mutex_unlock(&writer->lock);
	pthread_join(writer->thread, NULL);
	pthread_cond_destroy(&writer->changed);
	pthread_mutex_destroy(&writer->lock);
	free(writer);
}
