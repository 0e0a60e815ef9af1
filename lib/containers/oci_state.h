/*
 * oci_state.h — the state an OCI runtime hands a hook on its standard input
 * (runtime-spec, "State"): {"ociVersion": ..., "id": ..., "status":
 * "creating", "pid": 4242, "bundle": "/run/.../<id>", "annotations": {...}}.
 *
 * vnfs-register --oci-hook reads it as runc, crun, containerd and CRI-O
 * run hooks: as root, before the container's process runs its command
 * (createRuntime) and after it stopped (poststop).  The text comes from the
 * runtime, but its fields name a container a user described, so it is read
 * strictly and bounded, like every input of vnfs.
 */
#ifndef VNFS_OCI_STATE_H
#define VNFS_OCI_STATE_H

#include <stddef.h>
#include <sys/types.h>

/* A state larger than this is refused: real ones are a few hundred bytes
 * (annotations included, a few KiB). */
#define VNFS_OCI_STATE_SIZE_MAX (64 * 1024)

enum vnfs_oci_status {
	VNFS_OCI_STATUS_CREATING, /* createRuntime, createContainer hooks */
	VNFS_OCI_STATUS_CREATED,  /* startContainer */
	VNFS_OCI_STATUS_RUNNING,  /* poststart */
	VNFS_OCI_STATUS_STOPPED,  /* poststop */
};

struct vnfs_oci_state {
	char id[256];
	enum vnfs_oci_status status;
	pid_t pid;          /* 0 when stopped (the process is gone) */
	char bundle[4096];  /* absolute */
};

/*
 * Reads the state from text (length bytes, no NUL needed).  Returns 0 with
 * *state, or -1 with a message naming the field.  Unknown fields are
 * allowed (the spec may add some), wrong types and oversized text are not.
 */
int vnfs_oci_state_parse(const char *text, size_t length, struct vnfs_oci_state *state,
			 char *error, size_t error_size);

#endif /* VNFS_OCI_STATE_H */
