/*
 * fuzz_support.h — what several libFuzzer targets share: a scratch file in
 * a private temporary directory (for parsers that read a path), and a fake
 * environment of "NAME=VALUE" entries with the lookup the tag code takes.
 * Header-only: each target is one translation unit built by run-fuzz.
 */
#ifndef VNFS_FUZZ_SUPPORT_H
#define VNFS_FUZZ_SUPPORT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Inline, with its storage inside: a target that does not use it gets no
 * unused-function or unused-variable warning. */
struct fuzz_scratch {
	char directory[64];
	char path[128];
};

static inline struct fuzz_scratch *fuzz_scratch(void)
{
	static struct fuzz_scratch scratch;

	return &scratch;
}

static inline void fuzz_remove_scratch(void)
{
	unlink(fuzz_scratch()->path);
	rmdir(fuzz_scratch()->directory);
}

/* Makes $TMPDIR/vnfs-fuzz-TAG.XXXXXX (or under /tmp) and returns the path
 * of FILE in it, removed at exit; aborts when the directory cannot be made. */
static inline const char *fuzz_scratch_file(const char *tag, const char *file)
{
	struct fuzz_scratch *scratch = fuzz_scratch();
	const char *tmp = getenv("TMPDIR");

	snprintf(scratch->directory, sizeof(scratch->directory), "%s/vnfs-fuzz-%s.XXXXXX",
		 tmp != NULL && strlen(tmp) < 32 ? tmp : "/tmp", tag);
	if (mkdtemp(scratch->directory) == NULL)
		abort();
	snprintf(scratch->path, sizeof(scratch->path), "%s/%s", scratch->directory, file);
	atexit(fuzz_remove_scratch);
	return scratch->path;
}

#define FUZZ_ENVIRONMENT_MAX 64

struct fuzz_environment {
	size_t count;
	const char *entries[FUZZ_ENVIRONMENT_MAX];
};

/* The value of NAME in the environment given as context, or NULL. */
static inline const char *fuzz_environment_lookup(const char *name, void *context)
{
	const struct fuzz_environment *environment = context;
	size_t length = strlen(name);

	for (size_t i = 0; i < environment->count; i++) {
		const char *entry = environment->entries[i];

		if (strncmp(entry, name, length) == 0 && entry[length] == '=')
			return entry + length + 1;
	}
	return NULL;
}

#endif /* VNFS_FUZZ_SUPPORT_H */
