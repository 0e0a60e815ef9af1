/*
 * fuzz_kprobe_profile.c — libFuzzer target for kprobe_profile_parse_line
 * (helper/kernel/kprobe_profile.c), the helper's reader of tracefs's
 * kprobe_profile.  The file is the kernel's, but the helper runs as root
 * and reads it every interval: it takes nothing on trust.
 *
 * The input, cut at its first NUL, is one line.  Beyond the sanitizers it
 * checks what kprobe_profile.h promises of a parsed line: an event name
 * that is NUL-terminated within its array, not empty, of letters, digits
 * and '_' only, not starting with a digit; and that the line printed again
 * as the kernel prints it parses to the same name and counts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helper/kernel/kprobe_profile.h"

static void check_name(const char *event)
{
	size_t length;

	if (!memchr(event, '\0', KPROBE_PROFILE_EVENT_SIZE))
		abort();
	length = strlen(event);
	if (length == 0 || (event[0] >= '0' && event[0] <= '9') ||
	    strspn(event, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") !=
		    length)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kprobe_profile_line parsed, again;
	char line[512], printed[256];
	size_t length = size < sizeof(line) - 1 ? size : sizeof(line) - 1;

	memcpy(line, data, length);
	line[length] = '\0';
	if (kprobe_profile_parse_line(line, &parsed) != 0)
		return 0;
	check_name(parsed.event);
	snprintf(printed, sizeof(printed), "  %-44s %15llu %15llu\n", parsed.event,
		 (unsigned long long)parsed.hits, (unsigned long long)parsed.missed);
	if (kprobe_profile_parse_line(printed, &again) != 0 ||
	    strcmp(again.event, parsed.event) != 0 || again.hits != parsed.hits ||
	    again.missed != parsed.missed)
		abort();
	return 0;
}
