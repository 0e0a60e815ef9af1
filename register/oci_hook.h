/*
 * oci_hook.h — vnfs-register --oci-hook (see oci_hook.c).
 */
#ifndef VNFS_REGISTER_OCI_HOOK_H
#define VNFS_REGISTER_OCI_HOOK_H

/* Reads the OCI state on standard input and tells the helper at
 * socket_path what it means for the container.  Returns the exit status:
 * 0 done (or nothing to do), 1 with a message on standard error. */
int vnfs_register_oci_hook(const char *socket_path, int timeout_ms);

#endif /* VNFS_REGISTER_OCI_HOOK_H */
