/*
 * report_writer.h — the thread that writes finished jobs' report files.
 *
 * report_dir may be on NFS, and an NFS server that stops answering leaves a
 * write() in the kernel for as long as it stays away.  So no file I/O happens
 * under the collector's lock or on the socket thread: the collector renders
 * a job's files (CPU only, lib/job_report/files.h) and queues them here; this
 * thread writes them, one job at a time.  A FINISH waits for its own files
 * on root's finisher thread (so its reply still means "written"), a job
 * finished by the collector's grace rule does not wait.  While report_dir
 * hangs, registration, queries and collection go on; only FINISH replies and
 * the queued files wait, and at most VNFS_REPORT_QUEUE_MAX jobs are held.
 */
#ifndef VNFS_REPORT_WRITER_H
#define VNFS_REPORT_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/job_report/files.h"

/* Jobs whose files may wait for a stalled report_dir: beyond it the oldest
 * stay queued and new ones are dropped with an error log line. */
#define VNFS_REPORT_QUEUE_MAX 256

struct vnfs_report_writer;
struct vnfs_report_ticket;

/* Starts the thread; files are given to admin_gid ((gid_t)-1: none). */
int vnfs_report_writer_start(struct vnfs_report_writer **writer, gid_t admin_gid, char *error,
			     size_t error_size);

/* Where and for whom a job's files go. */
struct vnfs_report_destination {
	const char *report_dir;
	const struct vnfs_workload *job; /* its part ignored */
	uint32_t owner_uid;
	const char *node;
};

/*
 * Queues files (taken: emptied here, freed by the writer).  Never blocks on
 * I/O: callable under the collector's lock.  With ticket non-NULL, *ticket
 * is what vnfs_report_writer_wait waits on.  Returns 0, or -1 with a message
 * when the queue is full (the files are dropped).
 */
int vnfs_report_writer_submit(struct vnfs_report_writer *writer, struct vnfs_report_files *files,
			      const struct vnfs_report_destination *destination,
			      struct vnfs_report_ticket **ticket, char *error, size_t error_size);

/* Waits until the ticket's files are written (or failed), then frees it.
 * Returns 0, or -1 with the writer's message in error. */
int vnfs_report_writer_wait(struct vnfs_report_writer *writer, struct vnfs_report_ticket *ticket,
			    char *error, size_t error_size);

/* Writes what is queued, then stops the thread.  NULL is allowed. */
void vnfs_report_writer_stop(struct vnfs_report_writer *writer);

#endif /* VNFS_REPORT_WRITER_H */
