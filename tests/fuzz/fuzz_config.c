/*
 * fuzz_config.c — libFuzzer target for vnfs_config_load (lib/config.c
 * over inih), the reader of vnfs.conf.
 *
 * The input is written to a file and loaded, as the helper does at start and
 * on SIGHUP.  Beyond the sanitizers it checks what config.h promises: a
 * refusal says why (file and line) and leaves the configuration as it was
 * (a reload keeps the running setup); an accepted file gives bounded lists,
 * NUL-terminated strings and valid tag label names; loading the same file
 * twice gives the same configuration.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/config.h"
#include "tests/fuzz/fuzz_support.h"
#include "lib/tags.h"

static const char *path;

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	path = fuzz_scratch_file("config", "vnfs.conf");
	return 0;
}

#define TERMINATED(field) (memchr((field), '\0', sizeof(field)) != NULL)

static void check_config(const struct vnfs_config *config)
{
	if (!TERMINATED(config->source_path) || strcmp(config->source_path, path) != 0 ||
	    !TERMINATED(config->helper.socket_path) || !TERMINATED(config->helper.state_dir) ||
	    !TERMINATED(config->helper.pin_dir) || !TERMINATED(config->helper.report_dir) ||
	    !TERMINATED(config->helper.node_name) || !TERMINATED(config->helper.admin_group) ||
	    !TERMINATED(config->sqlite.path) || !TERMINATED(config->prometheus.listen_address) ||
	    !TERMINATED(config->jsonlog.path) || !TERMINATED(config->kafka.brokers) ||
	    !TERMINATED(config->kafka.topic) || !TERMINATED(config->http.url))
		abort();
	if (config->prometheus.tag_label_count > VNFS_CONFIG_MAX_LIST ||
	    config->kafka.property_count > VNFS_CONFIG_MAX_PROPERTIES ||
	    config->http.header_count > VNFS_CONFIG_MAX_LIST)
		abort();
	for (size_t i = 0; i < config->prometheus.tag_label_count; i++)
		if (!TERMINATED(config->prometheus.tag_labels[i]) ||
		    !vnfs_tag_name_valid(config->prometheus.tag_labels[i]))
			abort();
	for (size_t i = 0; i < config->kafka.property_count; i++)
		if (!TERMINATED(config->kafka.properties[i].key) ||
		    !TERMINATED(config->kafka.properties[i].value))
			abort();
	for (size_t i = 0; i < config->http.header_count; i++)
		if (!TERMINATED(config->http.headers[i]))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Static (about 100 KB each): fresh pages for them every run would cost
	 * more than the parsing; defaults clear them, and ASan guards globals. */
	static struct vnfs_config config_storage, before_storage, again_storage;
	struct vnfs_config *config = &config_storage;
	struct vnfs_config *before = &before_storage;
	struct vnfs_config *again = &again_storage;
	char error[1024] = "";
	FILE *file;

	file = fopen(path, "we");
	if (file == NULL || (size > 0 && fwrite(data, size, 1, file) != 1) || fclose(file) != 0)
		abort();

	vnfs_config_defaults(config);
	*before = *config;
	if (vnfs_config_load(config, path, false, error, sizeof(error)) != 0) {
		/* "PATH:LINE: ..." or "PATH: ...": the message names the file. */
		if (strncmp(error, path, strlen(path)) != 0 || error[strlen(path)] != ':')
			abort();
		if (memcmp(config, before, sizeof(*config)) != 0)
			abort();
	} else {
		check_config(config);
		vnfs_config_defaults(again);
		if (vnfs_config_load(again, path, false, error, sizeof(error)) != 0 ||
		    memcmp(config, again, sizeof(*config)) != 0)
			abort();
	}
	return 0;
}
