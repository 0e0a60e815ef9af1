/*
 * storage_names.h — a plain container's name, from the record its engine
 * keeps (DESIGN.md, decision 11: podman and docker containers outside
 * Kubernetes are identified by name and id).
 *
 * Podman (and buildah, CRI-O) keep every container of a store in
 * containers/storage's <graphroot>/<driver>-containers/containers.json:
 *   [{"id": "<64 hex>", "names": ["trainer-7"], "image": "...", ...}, ...]
 * written by root, read here by a root daemon.  A name began as a user's
 * `podman run --name`, so it is checked against the engine's own rule
 * (vnfs_container_name_valid) and refused otherwise; the file is read as
 * its runtime_json.h says.  Entries of other containers are not read
 * beyond their id.
 */
#ifndef VNFS_STORAGE_NAMES_H
#define VNFS_STORAGE_NAMES_H

#include <stddef.h>

/* containers.json's size at most: a few hundred bytes a container. */
#define VNFS_STORAGE_NAMES_SIZE_MAX (16 * 1024 * 1024)

/*
 * The first name of container id (64 lowercase hex) in containers.json's
 * text (length bytes) into name (size bytes).  Returns 1 with the name, 0
 * when the file lists no such container, -1 with a message in error (the
 * document is not containers/storage's, or the name breaks the rule).
 */
int vnfs_storage_container_name(const char *text, size_t length, const char *id, char *name,
				size_t size, char *error, size_t error_size);

#endif /* VNFS_STORAGE_NAMES_H */
