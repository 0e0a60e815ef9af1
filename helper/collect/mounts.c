/*
 * mounts.c — superblock device -> NFS mount, from /proc/self/mountinfo.
 *
 * The table is re-read when asked about a device it does not know, at most
 * once a second, so a burst of unknown devices (a mount storm, or I/O on a
 * mount that is already gone) cannot turn every collection into a reread.
 */
#include "helper/collect/mounts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REREAD_INTERVAL_MS 1000

int vnfs_mounts_init(struct vnfs_mounts *mounts, const char *mountinfo_path)
{
	memset(mounts, 0, sizeof(*mounts));
	snprintf(mounts->mountinfo_path, sizeof(mounts->mountinfo_path), "%s",
		 mountinfo_path ? mountinfo_path : "/proc/self/mountinfo");
	mounts->last_read_ms = -REREAD_INTERVAL_MS;
	mounts->known = calloc(VNFS_MAX_KNOWN_MOUNTS, sizeof(*mounts->known));
	if (mounts->known == NULL)
		return -1;
	if (pthread_mutex_init(&mounts->lock, NULL) != 0) {
		free(mounts->known);
		mounts->known = NULL;
		return -1;
	}
	return 0;
}

void vnfs_mounts_destroy(struct vnfs_mounts *mounts)
{
	free(mounts->known);
	mounts->known = NULL;
	pthread_mutex_destroy(&mounts->lock);
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *text)
{
	char *out = text;

	for (char *in = text; *in; out++) {
		if (in[0] == '\\' && in[1] >= '0' && in[1] <= '3' && in[2] >= '0' && in[2] <= '7' &&
		    in[3] >= '0' && in[3] <= '7') {
			*out = (char)((in[1] - '0') * 64 + (in[2] - '0') * 8 + (in[3] - '0'));
			in += 4;
		} else {
			*out = *in++;
		}
	}
	*out = '\0';
}

static void version_from_options(const char *options, const char *fstype, char *version,
				 size_t size)
{
	const char *vers = strstr(options, "vers=");

	if (vers != NULL) {
		size_t length = strcspn(vers + 5, ",");

		snprintf(version, size, "%.*s", (int)length, vers + 5);
	} else {
		snprintf(version, size, "%s", strcmp(fstype, "nfs4") == 0 ? "4" : "");
	}
}

/* The value of a numeric mount option such as "rsize=1048576", or 0. */
static uint32_t numeric_option(const char *options, const char *name)
{
	size_t length = strlen(name);

	for (const char *at = options; at != NULL; at = strchr(at, ',')) {
		if (*at == ',')
			at++;
		if (strncmp(at, name, length) == 0 && at[length] == '=')
			return (uint32_t)strtoul(at + length + 1, NULL, 10);
	}
	return 0;
}

int vnfs_mounts_parse_line(const char *line, struct vnfs_mount_record *record)
{
	char mount_point[256], fstype[32], source[256], options[1024];
	unsigned major, minor;
	const char *separator = strstr(line, " - ");

	if (separator == NULL ||
	    sscanf(line, "%*u %*u %u:%u %*s %255s", &major, &minor, mount_point) != 3 ||
	    sscanf(separator + 3, "%31s %255s %1023s", fstype, source, options) != 3)
		return -1;
	if (strcmp(fstype, "nfs") != 0 && strcmp(fstype, "nfs4") != 0)
		return -1;
	memset(record, 0, sizeof(*record));
	record->device = (major << 20) | minor;
	unescape(mount_point);
	unescape(source);
	snprintf(record->mount_point, sizeof(record->mount_point), "%s", mount_point);
	snprintf(record->source, sizeof(record->source), "%s", source);
	version_from_options(options, fstype, record->version, sizeof(record->version));
	record->rsize = numeric_option(options, "rsize");
	record->wsize = numeric_option(options, "wsize");
	return 0;
}

static void reread(struct vnfs_mounts *mounts)
{
	FILE *file = fopen(mounts->mountinfo_path, "re");
	char *line = NULL;
	size_t capacity = 0;

	if (file == NULL)
		return;
	mounts->count = 0;
	while (getline(&line, &capacity, file) > 0 && mounts->count < VNFS_MAX_KNOWN_MOUNTS) {
		struct vnfs_mount_record *record = &mounts->known[mounts->count];
		bool duplicate = false;

		if (vnfs_mounts_parse_line(line, record) != 0)
			continue;
		/* The same superblock mounted twice: keep the first mount point. */
		for (unsigned i = 0; i < mounts->count && !duplicate; i++)
			duplicate = mounts->known[i].device == record->device;
		if (!duplicate)
			mounts->count++;
	}
	free(line);
	fclose(file);
}

static const struct vnfs_mount_record *lookup(const struct vnfs_mounts *mounts, __u32 device)
{
	for (unsigned i = 0; i < mounts->count; i++)
		if (mounts->known[i].device == device)
			return &mounts->known[i];
	return NULL;
}

void vnfs_mounts_describe(struct vnfs_mounts *mounts, struct vnfs_mount_record *record,
			  int64_t now_ms)
{
	const struct vnfs_mount_record *known;

	pthread_mutex_lock(&mounts->lock);
	known = lookup(mounts, record->device);
	if (known == NULL && now_ms - mounts->last_read_ms >= REREAD_INTERVAL_MS) {
		reread(mounts);
		mounts->last_read_ms = now_ms;
		known = lookup(mounts, record->device);
	}
	if (known != NULL) {
		memcpy(record->mount_point, known->mount_point, sizeof(record->mount_point));
		memcpy(record->source, known->source, sizeof(record->source));
		memcpy(record->version, known->version, sizeof(record->version));
		record->rsize = known->rsize;
		record->wsize = known->wsize;
	} else {
		record->mount_point[0] = '\0';
		snprintf(record->source, sizeof(record->source), "unknown");
		record->version[0] = '\0';
	}
	pthread_mutex_unlock(&mounts->lock);
}
