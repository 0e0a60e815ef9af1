/*
 * sink_module.h — loading the outputs built as modules (see sink_module.c).
 */
#ifndef VNFS_SINK_MODULE_H
#define VNFS_SINK_MODULE_H

#include <stddef.h>

#include "lib/config.h"
#include "helper/outputs/sink.h"

/* Where modules are looked for: $VNFS_MODULE_DIR when set (tests, a build
 * tree), else the directory they were installed in. */
const char *vnfs_sink_module_dir(void);

/* Loads <module dir>/sink_<name>.so and opens the sink with its
 * vnfs_sink_<name>_open.  Returns 0, or -1 with a message in error. */
int vnfs_sink_module_open(const char *name, struct vnfs_sink *sink,
			  const struct vnfs_config *config, char *error, size_t error_size);

#endif /* VNFS_SINK_MODULE_H */
