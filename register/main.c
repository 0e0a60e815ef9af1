/*
 * vnfs-register — a scheduler's hook (an LSF or PBS prolog, a flux-shell
 * plugin, an OCI hook, a site's own launcher) tells vnfs-helper that a
 * cgroup belongs to a workload, that the workload's part ended, or that
 * its job finished: the REGISTER, UNREGISTER and FINISH requests the SPANK
 * plugin sends for Slurm, for any source (DESIGN.md, decision 11).
 *
 * Root only, as the helper enforces; a hook must not fail its job because
 * vnfs is down, so every failure is a message and an exit status the hook
 * may ignore, never a wait beyond --timeout.
 */
#include <errno.h>
#include <stdbool.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/client.h"
#include "lib/paths.h"
#include "lib/protocol.h"
#include "lib/tags.h"
#include "lib/workload.h"
#include "register/oci_hook.h"

/* Exit statuses: as vnfs-report's and sacct's. */
enum { EXIT_DONE = 0, EXIT_REFUSED = 1, EXIT_USAGE = 2 };

struct options {
	bool oci_hook; /* --oci-hook: the request comes from the runtime's state */
	enum vnfs_request_type type;
	const char *source, *job, *part;
	const char *socket_path;
	int timeout_ms;
	struct vnfs_request request;
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: vnfs-register --source NAME --job JOB [--part PART] --cgroup PATH\n"
		"                     [--uid UID] [--tag NAME=VALUE]...\n"
		"       vnfs-register --end --source NAME --job JOB [--part PART]\n"
		"       vnfs-register --finish --source NAME --job JOB [--report-dir DIR]\n"
		"       vnfs-register --oci-hook   (as a container runtime's hook)\n"
		"Tells vnfs-helper that the cgroup PATH belongs to a workload (a job, or one\n"
		"part of it), that the part ended, or that the job finished.  Root only.\n"
		"\n"
		"  --source NAME       the workload's source: %s\n"
		"  --job JOB           its job: 42 (Slurm), namespace/pod (Kubernetes),\n"
		"                      1234.pbs01 (PBS), the scheduler's id of it\n"
		"  --part PART         its part: a Slurm step (0, batch), a container, an\n"
		"                      array task\n"
		"  --cgroup PATH       the cgroup v2 directory whose tasks are the workload's\n"
		"  --uid UID           the workload's owner, who may read its counts (default 0)\n"
		"  --tag NAME=VALUE    a tag, as srun --vnfs-tags gives them (repeatable)\n"
		"  --end               the part ended: its final counts are read\n"
		"  --finish            the job finished: its report is written, its slots freed\n"
		"  --report-dir DIR    with --finish: where its report files go\n"
		"  --oci-hook          an OCI createRuntime or poststop hook: register or end the\n"
		"                      Kubernetes container whose state is on standard input\n"
		"  --socket PATH       the helper's socket (default " VNFS_DEFAULT_SOCKET ")\n"
		"  --timeout MS        give up after MS milliseconds (default 5000)\n"
		"  -h, --help          this text\n"
		"\n"
		"Exit status: 0 done, 1 the helper refused or could not be reached, 2 usage.\n",
		VNFS_WORKLOAD_SOURCE_NAME_LIST);
}

static int bad_usage(const char *format, const char *value)
{
	fprintf(stderr, "vnfs-register: ");
	fprintf(stderr, format, value);
	fprintf(stderr, " (see --help)\n");
	return -1;
}

/* An unsigned decimal of at most max.  Returns 0, or -1. */
static int parse_number(const char *text, unsigned long long max, unsigned long long *value)
{
	char *end;

	errno = 0;
	if (text[0] < '0' || text[0] > '9')
		return -1;
	*value = strtoull(text, &end, 10);
	return errno != 0 || *end != '\0' || *value > max ? -1 : 0;
}

static int add_tag(struct vnfs_request *request, char *text)
{
	char *equals = strchr(text, '='), error[256];

	if (equals != NULL)
		*equals = '\0';
	if (vnfs_tags_set(&request->tags, text, equals != NULL ? equals + 1 : "", error,
			  sizeof(error)) < 0)
		return bad_usage("--tag: %s", error);
	return 0;
}

static int parse_option(int option, char *value, struct options *options)
{
	struct vnfs_request *request = &options->request;
	unsigned long long number;

	switch (option) {
	case 's': options->source = value; return 0;
	case 'j': options->job = value; return 0;
	case 'p': options->part = value; return 0;
	case 'c':
		if (strlen(value) >= sizeof(request->cgroup_path) || value[0] != '/')
			return bad_usage("--cgroup: '%s' is no absolute path of at most 255 bytes",
					 value);
		snprintf(request->cgroup_path, sizeof(request->cgroup_path), "%s", value);
		return 0;
	case 'u':
		if (parse_number(value, UINT32_MAX, &number) < 0)
			return bad_usage("--uid: '%s' is no uid", value);
		request->uid = (uint32_t)number;
		return 0;
	case 't': return add_tag(request, value);
	case 'e': options->type = VNFS_REQUEST_UNREGISTER; return 0;
	case 'f': options->type = VNFS_REQUEST_FINISH; return 0;
	case 'r':
		if (strlen(value) >= sizeof(request->report_dir) || value[0] != '/')
			return bad_usage("--report-dir: '%s' is no absolute path of at most 255 "
					 "bytes", value);
		snprintf(request->report_dir, sizeof(request->report_dir), "%s", value);
		return 0;
	case 'S': options->socket_path = value; return 0;
	case 'O': options->oci_hook = true; return 0;
	case 'T':
		if (parse_number(value, 600000, &number) < 0 || number == 0)
			return bad_usage("--timeout: '%s' is no number of milliseconds from 1 to "
					 "600000", value);
		options->timeout_ms = (int)number;
		return 0;
	case 'h': usage(stdout); exit(EXIT_DONE);
	default: usage(stderr); return -1;
	}
}

/* The request the options make, checked as the helper will check it. */
static int make_request(struct options *options)
{
	struct vnfs_request *request = &options->request;
	enum vnfs_workload_source source;
	char error[512];

	request->type = options->type;
	if (options->source == NULL || options->job == NULL)
		return bad_usage("%s", "--source and --job are needed");
	if (vnfs_workload_source_parse(options->source, &source) < 0) {
		snprintf(error, sizeof(error), "--source: no workload source '%.64s' (known: %s)",
			 options->source, VNFS_WORKLOAD_SOURCE_NAME_LIST);
		return bad_usage("%s", error);
	}
	if (vnfs_workload_set(&request->workload, source, options->job,
			      options->part != NULL ? options->part : "", error, sizeof(error)) < 0)
		return bad_usage("%s", error);
	if (options->type == VNFS_REQUEST_REGISTER && request->cgroup_path[0] == '\0')
		return bad_usage("%s", "--cgroup is needed to register");
	if (options->type == VNFS_REQUEST_FINISH && options->part != NULL)
		return bad_usage("%s", "--finish is of a whole job: no --part");
	return 0;
}

static int parse_options(int argc, char **argv, struct options *options)
{
	static const struct option long_options[] = {
		{ "source", required_argument, NULL, 's' },
		{ "job", required_argument, NULL, 'j' },
		{ "part", required_argument, NULL, 'p' },
		{ "cgroup", required_argument, NULL, 'c' },
		{ "uid", required_argument, NULL, 'u' },
		{ "tag", required_argument, NULL, 't' },
		{ "end", no_argument, NULL, 'e' },
		{ "finish", no_argument, NULL, 'f' },
		{ "report-dir", required_argument, NULL, 'r' },
		{ "oci-hook", no_argument, NULL, 'O' },
		{ "socket", required_argument, NULL, 'S' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int option;

	options->type = VNFS_REQUEST_REGISTER;
	options->socket_path = VNFS_DEFAULT_SOCKET;
	options->timeout_ms = 5000;
	vnfs_tags_init(&options->request.tags);
	while ((option = getopt_long(argc, argv, "h", long_options, NULL)) != -1)
		if (parse_option(option, optarg, options) < 0)
			return -1;
	if (optind < argc)
		return bad_usage("unexpected argument '%s'", argv[optind]);
	return options->oci_hook ? 0 : make_request(options);
}

int main(int argc, char **argv)
{
	static struct options options; /* a request holds 8 KiB of tags */
	char error[1024], name[VNFS_WORKLOAD_DESCRIPTION_MAX];
	struct vnfs_reply reply;

	if (parse_options(argc, argv, &options) < 0)
		return EXIT_USAGE;
	if (options.oci_hook)
		return vnfs_register_oci_hook(options.socket_path, options.timeout_ms);
	vnfs_workload_describe(&options.request.workload, name, sizeof(name));
	if (vnfs_client_call(options.socket_path, &options.request, options.timeout_ms, &reply,
			     error, sizeof(error)) < 0) {
		fprintf(stderr, "vnfs-register: %s: %s\n", name, error);
		return EXIT_REFUSED;
	}
	if (options.type == VNFS_REQUEST_REGISTER)
		printf("registered %s in slot %u\n", name, (unsigned)reply.slot);
	else
		printf("%s %s\n", options.type == VNFS_REQUEST_FINISH ? "finished" : "ended", name);
	vnfs_reply_free(&reply);
	return EXIT_DONE;
}
