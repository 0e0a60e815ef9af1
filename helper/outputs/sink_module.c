/*
 * sink_module.c — the outputs built as modules (Kafka, HTTP), loaded only
 * when the configuration enables them.
 *
 * Linked in, their libraries (librdkafka, libcurl, and the TLS, Kerberos,
 * LDAP and SSH libraries those pull in) were loaded and relocated at every
 * start of every helper, enabled or not: about 3 MiB of its resident memory
 * (docs/PERFORMANCE.md).  A module is <module dir>/sink_<name>.so and
 * defines vnfs_sink_<name>_open (sink.h).  It logs through the helper, which
 * exports its symbols for that (-export-dynamic): a module's own copy of
 * lib/log.c would not know the helper's log settings.  A loaded module stays
 * loaded: its library threads may outlive a failed open.
 */
#include "helper/outputs/sink_module.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*sink_open_fn)(struct vnfs_sink *, const struct vnfs_config *, char *, size_t);

const char *vnfs_sink_module_dir(void)
{
	const char *directory = getenv("VNFS_MODULE_DIR");

	return directory != NULL && directory[0] != '\0' ? directory : VNFS_MODULE_DIR;
}

int vnfs_sink_module_open(const char *name, struct vnfs_sink *sink,
			  const struct vnfs_config *config, char *error, size_t error_size)
{
	char path[PATH_MAX], symbol[64];
	sink_open_fn open_sink;
	void *module;

	if (snprintf(path, sizeof(path), "%s/sink_%s.so", vnfs_sink_module_dir(), name) >=
		    (int)sizeof(path) ||
	    snprintf(symbol, sizeof(symbol), "vnfs_sink_%s_open", name) >= (int)sizeof(symbol)) {
		snprintf(error, error_size, "module name too long: %s", name);
		return -1;
	}
	module = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (module == NULL) {
		snprintf(error, error_size, "cannot load its module: %s", dlerror());
		return -1;
	}
	/* POSIX's way from a data pointer to a function pointer. */
	*(void **)&open_sink = dlsym(module, symbol);
	if (open_sink == NULL) {
		snprintf(error, error_size, "%s defines no %s", path, symbol);
		return -1;
	}
	return open_sink(sink, config, error, error_size);
}
