/*
 * fuzz_proc_cgroup.c — libFuzzer target for the text parsers of
 * spank/step_cgroup.c, which run as root in slurmstepd: the v2 line of
 * /proc/PID/cgroup (a task's cgroup path: names inside a delegated subtree
 * are the job owner's choice), the cgroup2 entry of /proc/self/mounts, and
 * the search for Slurm's job_<J>/step_<S> pair in the path.
 *
 * Input: the /proc/PID/cgroup text, then optionally a NUL and the
 * /proc/self/mounts text.  The first bytes also choose the output buffer
 * sizes and the job and step looked for, so truncation paths are reached;
 * the buffers are heap blocks of exactly that size, so ASan sees a byte
 * written past them.  Checked beyond the sanitizers: results are
 * NUL-terminated within the buffer, the path is the last "0::" line's, the
 * mount point is unescaped without growing, and a step prefix is a prefix of
 * the path that ends in the pair.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/record.h"
#include "spank/step_cgroup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t path_size = VNFS_CGROUP_PATH_MAX, mount_size = VNFS_CGROUP_PATH_MAX;
	size_t prefix_size = VNFS_CGROUP_PATH_MAX;
	uint32_t job_id = 7, step_id = 0;
	char *text, *mounts_text, *path, *mount_point, *prefix;
	char step_name[32];
	bool hybrid;

	/* Four bytes of sizes and ids when the input starts with '#' (a line
	 * /proc never has), so seeds that are plain file copies stay readable. */
	if (size >= 5 && data[0] == '#') {
		path_size = 1 + data[1] * 2u;
		mount_size = 1 + data[2] * 2u;
		prefix_size = 1 + data[3] * 2u;
		job_id = data[4] < 0xf0 ? data[4] : 0xfffffff0u + (data[4] & 0x0f);
		step_id = job_id % 5 == 0 ? VNFS_STEP_BATCH : job_id % 3;
		data += 5;
		size -= 5;
	}
	text = malloc(size + 1);
	path = malloc(path_size);
	mount_point = malloc(mount_size);
	prefix = malloc(prefix_size);
	if (text == NULL || path == NULL || mount_point == NULL || prefix == NULL)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	mounts_text = text + strlen(text) + (strlen(text) < size);

	if (vnfs_cgroup_v2_path_from_text(text, path, path_size, &hybrid) == 0) {
		/* The last "0::" line: find it the slow way. */
		const char *last = NULL;

		for (const char *line = text; *line; line += strcspn(line, "\n") + (line[strcspn(line, "\n")] != '\0'))
			if (strncmp(line, "0::", 3) == 0)
				last = line + 3;
		if (last == NULL || memchr(path, '\0', path_size) == NULL ||
		    strlen(path) != strcspn(last, "\n") || strncmp(path, last, strlen(path)) != 0)
			abort();

		vnfs_step_name(step_id, step_name, sizeof(step_name));
		if (vnfs_slurm_step_prefix(path, job_id, step_name, prefix, prefix_size) == 0) {
			char pair[64];
			size_t length = strnlen(prefix, prefix_size);

			snprintf(pair, sizeof(pair), "/job_%u/step_%s", job_id, step_name);
			if (length == prefix_size || strncmp(path, prefix, length) != 0 ||
			    length < strlen(pair) ||
			    strcmp(prefix + length - strlen(pair), pair) != 0 ||
			    (path[length] != '\0' && path[length] != '/'))
				abort();
		}
	}

	if (vnfs_cgroup2_mount_from_text(mounts_text, mount_point, mount_size) == 0) {
		size_t length = strnlen(mount_point, mount_size);

		if (length == mount_size || length > strlen(mounts_text))
			abort();
	}
	free(prefix);
	free(mount_point);
	free(path);
	free(text);
	return 0;
}
