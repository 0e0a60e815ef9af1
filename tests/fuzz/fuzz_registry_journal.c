/*
 * fuzz_registry_journal.c — libFuzzer target for the registry's journal
 * loader (helper/steps/registry.c): what a restarted helper reads back from
 * STATE_DIR/registry.journal, whatever a crash, a full disk or an older
 * version left there.
 *
 * The input is written as the journal of a fresh state directory, then
 * vnfs_registry_init + vnfs_registry_load run as at start (load also
 * rewrites the journal compact: the real path).  Checked beyond the
 * sanitizers: the loaded steps are consistent (used = steps not free, each
 * with valid tags), and loading the compacted journal again gives the same
 * steps, i.e. compaction loses and invents nothing.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helper/steps/registry.h"
#include "lib/log.h"

static char directory[64];

/* Empties the state directory (the journal, its compaction's temp file, a
 * legacy registry.json) so every input starts from nothing. */
static void empty_directory(void)
{
	DIR *dir = opendir(directory);
	struct dirent *entry;
	char file[sizeof(directory) + 256 + 2];

	if (dir == NULL)
		return;
	while ((entry = readdir(dir)) != NULL) {
		if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
			continue;
		snprintf(file, sizeof(file), "%s/%s", directory, entry->d_name);
		unlink(file);
	}
	closedir(dir);
}

static void remove_directory(void)
{
	empty_directory();
	rmdir(directory);
}

/* The loader logs every dropped line; a million inputs' worth of that is
 * noise, and its formatting is still exercised. */
static void quiet(enum vnfs_log_priority priority, const char *line)
{
	(void)priority;
	(void)line;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR"); /* run-fuzz points it at a tmpfs */

	(void)argc;
	(void)argv;
	snprintf(directory, sizeof(directory), "%s/vnfs-fuzz-registry.XXXXXX",
		 tmp != NULL && strlen(tmp) < 32 ? tmp : "/tmp");
	if (mkdtemp(directory) == NULL)
		abort();
	atexit(remove_directory);
	vnfs_log_set_sink(quiet);
	return 0;
}

/* Each step loaded is one the helper could have written. */
static void check_step(const struct vnfs_step *step, uint32_t slot, void *context)
{
	const char *name, *value;
	unsigned count = 0;

	(void)slot;
	(void)context;
	if (step->state == VNFS_STEP_FREE || step->state > VNFS_STEP_FINISHED ||
	    memchr(step->cgroup_path, '\0', sizeof(step->cgroup_path)) == NULL ||
	    step->tags.count > VNFS_MAX_TAGS || step->tags.used > VNFS_TAGS_BUFFER)
		abort();
	for (unsigned i = 0; vnfs_tags_get(&step->tags, i, &name, &value); i++, count++)
		if (!vnfs_tag_name_valid(name) || !vnfs_tag_value_valid(value))
			abort();
	if (count != step->tags.count)
		abort();
}

static void check_registry(struct vnfs_registry *registry)
{
	if (vnfs_registry_visit(registry, check_step, NULL, NULL) != vnfs_registry_used(registry))
		abort();
}

static bool same_step(const struct vnfs_step *a, const struct vnfs_step *b)
{
	if (a->state != b->state)
		return false;
	if (a->state == VNFS_STEP_FREE)
		return true;
	return vnfs_workload_equal(&a->workload, &b->workload) && a->uid == b->uid &&
	       a->cgroup_id == b->cgroup_id && strcmp(a->cgroup_path, b->cgroup_path) == 0 &&
	       a->start_time_ms == b->start_time_ms && a->end_time_ms == b->end_time_ms &&
	       a->tags.count == b->tags.count && a->tags.used == b->tags.used &&
	       memcmp(a->tags.buffer, b->tags.buffer, a->tags.used) == 0;
}

/* The reloaded registry holds each step of the first in the same slot. */
static void check_reloaded(const struct vnfs_step *step, uint32_t slot, void *context)
{
	struct vnfs_step reloaded;

	vnfs_registry_get(context, slot, &reloaded);
	if (!same_step(step, &reloaded))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vnfs_registry registry_storage, reloaded_storage;
	struct vnfs_registry *registry = &registry_storage;
	struct vnfs_registry *reloaded = &reloaded_storage;
	char journal[sizeof(directory) + 32];
	char error[512] = "";
	FILE *file;

	empty_directory();
	snprintf(journal, sizeof(journal), "%s/registry.journal", directory);
	file = fopen(journal, "we");
	if (file == NULL || (size > 0 && fwrite(data, size, 1, file) != 1) || fclose(file) != 0)
		abort();

	if (vnfs_registry_init(registry, directory, error, sizeof(error)) != 0)
		abort();
	if (vnfs_registry_load(registry, error, sizeof(error)) != 0) {
		if (error[0] == '\0')
			abort();
	} else {
		check_registry(registry);
		/* The helper restarted again: it reads the compacted journal. */
		if (vnfs_registry_init(reloaded, directory, error, sizeof(error)) != 0 ||
		    vnfs_registry_load(reloaded, error, sizeof(error)) != 0)
			abort();
		if (reloaded->used != registry->used)
			abort();
		vnfs_registry_visit(registry, check_reloaded, reloaded, NULL);
		vnfs_registry_destroy(reloaded);
	}
	vnfs_registry_destroy(registry);
	return 0;
}
