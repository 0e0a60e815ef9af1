/*
 * fuzz_mountinfo.c — libFuzzer target for helper/collect/mounts.c, the helper's
 * reader of /proc/self/mountinfo (mount points and sources are chosen by
 * whoever mounts, which with user namespaces or automounters need not be
 * root; both may hold any byte, escaped as \ooo by the kernel).
 *
 * The input is written to a file that stands for mountinfo; the table is
 * read through vnfs_mounts_describe as the collector does, and each line is
 * also parsed alone with vnfs_mounts_parse_line.  Checked beyond the
 * sanitizers: every field of a parsed record is NUL-terminated within its
 * array, and every device the table knows is described with the record its
 * first line gave.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helper/collect/mounts.h"
#include "tests/fuzz/fuzz_support.h"

static const char *path;

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	path = fuzz_scratch_file("mounts", "mountinfo");
	return 0;
}

#define TERMINATED(field) (memchr((field), '\0', sizeof(field)) != NULL)

static void check_record(const struct vnfs_mount_record *record)
{
	if (!TERMINATED(record->mount_point) || !TERMINATED(record->source) ||
	    !TERMINATED(record->version))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Static (135 KB): fresh pages for it every run would cost more than the
	 * parsing; init clears it, and ASan guards globals too. */
	static struct vnfs_mounts mounts_storage;
	struct vnfs_mounts *mounts = &mounts_storage;
	struct vnfs_mount_record *record = malloc(sizeof(*record));
	char *text = malloc(size + 1);
	FILE *file;

	if (record == NULL || text == NULL)
		abort();
	file = fopen(path, "we");
	if (file == NULL || (size > 0 && fwrite(data, size, 1, file) != 1) || fclose(file) != 0)
		abort();

	/* Line by line, as a test would. */
	memcpy(text, data, size);
	text[size] = '\0';
	for (char *line = text; line < text + size;) {
		size_t length = strcspn(line, "\n");

		line[length] = '\0';
		if (vnfs_mounts_parse_line(line, record) == 0)
			check_record(record);
		line += length + 1;
	}

	/* The whole file, as the collector reads it: an unknown device makes it
	 * read the table, then every known device must be found. */
	if (vnfs_mounts_init(mounts, path) != 0)
		abort();
	memset(record, 0, sizeof(*record));
	record->device = 0xffffffffu;
	vnfs_mounts_describe(mounts, record, 0);
	check_record(record);
	if (mounts->count > VNFS_MAX_KNOWN_MOUNTS)
		abort();
	for (unsigned i = 0; i < mounts->count; i++) {
		const struct vnfs_mount_record *known = &mounts->known[i];

		check_record(known);
		memset(record, 0, sizeof(*record));
		record->device = known->device;
		vnfs_mounts_describe(mounts, record, 1);
		if (strcmp(record->mount_point, known->mount_point) != 0 ||
		    strcmp(record->source, known->source) != 0 ||
		    strcmp(record->version, known->version) != 0 || record->rsize != known->rsize ||
		    record->wsize != known->wsize)
			abort();
		/* The first line with a device wins: no later entry has it. */
		for (unsigned j = i + 1; j < mounts->count; j++)
			if (mounts->known[j].device == known->device)
				abort();
	}
	vnfs_mounts_destroy(mounts);
	free(text);
	free(record);
	return 0;
}
