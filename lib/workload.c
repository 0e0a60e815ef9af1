/*
 * workload.c — the workload identity's table, checks and order (see
 * workload.h).
 */
#include "lib/workload.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "lib/record.h"

static const struct {
	const char *name, *job_label, *part_label, *job_noun, *part_noun;
} sources[VNFS_SOURCE_COUNT] = {
#define VNFS_WORKLOAD_SOURCE_ROW(constant, name, job_label, part_label, job_noun, part_noun) \
	[VNFS_SOURCE_##constant] = { name, job_label, part_label, job_noun, part_noun },
	VNFS_WORKLOAD_SOURCES(VNFS_WORKLOAD_SOURCE_ROW)
#undef VNFS_WORKLOAD_SOURCE_ROW
};

bool vnfs_workload_part_may_restart(const struct vnfs_workload *workload)
{
	return workload->source == VNFS_SOURCE_KUBERNETES && workload->part[0] != '\0';
}

/* Bytes of a user's text quoted in a message. */
#define SHOWN_MAX 40

const char *vnfs_workload_source_name(enum vnfs_workload_source source)
{
	return (unsigned)source < VNFS_SOURCE_COUNT ? sources[source].name : NULL;
}

const char *vnfs_workload_job_label(enum vnfs_workload_source source)
{
	return (unsigned)source < VNFS_SOURCE_COUNT ? sources[source].job_label : NULL;
}

const char *vnfs_workload_part_label(enum vnfs_workload_source source)
{
	return (unsigned)source < VNFS_SOURCE_COUNT ? sources[source].part_label : NULL;
}

int vnfs_workload_source_parse(const char *name, enum vnfs_workload_source *source)
{
	for (int i = 0; i < VNFS_SOURCE_COUNT; i++) {
		if (strcmp(sources[i].name, name) == 0) {
			*source = (enum vnfs_workload_source)i;
			return 0;
		}
	}
	return -1;
}

static bool allowed_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c != '\0' && strchr("._-:@+/[]=,%#~", c) != NULL);
}

bool vnfs_workload_text_valid(const char *text, size_t max)
{
	size_t length = 0;

	for (; text[length] != '\0'; length++)
		if (length + 1 >= max || !allowed_byte((unsigned char)text[length]))
			return false;
	return length > 0;
}

/* What may be shown of a user's text in a message: its allowed prefix. */
static int shown_length(const char *text)
{
	int length = 0;

	while (length < SHOWN_MAX && allowed_byte((unsigned char)text[length]))
		length++;
	return length;
}

static int check_text(const char *what, const char *text, size_t max, bool may_be_empty,
		      char *error, size_t error_size)
{
	if (may_be_empty && text[0] == '\0')
		return 0;
	if (vnfs_workload_text_valid(text, max))
		return 0;
	if (text[0] == '\0')
		snprintf(error, error_size, "the workload's %s is empty", what);
	else if (strnlen(text, max) >= max)
		snprintf(error, error_size, "the workload's %s is longer than %zu bytes", what,
			 max - 1);
	else
		snprintf(error, error_size,
			 "the workload's %s '%.*s...' holds a byte other than letters, digits "
			 "and ._-:@+/[]=,%%#~", what, shown_length(text), text);
	return -1;
}

static bool label_character(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

/* RFC 1123's label, without its length limit: [a-z0-9]([-a-z0-9]*[a-z0-9])? */
static bool label_shape_valid(const char *text, size_t length)
{
	if (length == 0 || text[0] == '-' || text[length - 1] == '-')
		return false;
	for (size_t i = 0; i < length; i++)
		if (!label_character(text[i]))
			return false;
	return true;
}

/* A DNS label as Kubernetes checks one (IsDNS1123Label). */
bool vnfs_kubernetes_label_valid(const char *text)
{
	size_t length = strlen(text);

	return length <= VNFS_KUBERNETES_LABEL_MAX && label_shape_valid(text, length);
}

/* A DNS subdomain as Kubernetes checks one (IsDNS1123Subdomain): labels of
 * any length joined by '.', 253 bytes in all. */
bool vnfs_kubernetes_subdomain_valid(const char *text)
{
	size_t length = strlen(text);

	if (length > VNFS_KUBERNETES_SUBDOMAIN_MAX)
		return false;
	for (const char *label = text;; label++) {
		size_t label_length = strcspn(label, ".");

		if (!label_shape_valid(label, label_length))
			return false;
		label += label_length;
		if (*label == '\0')
			return true;
	}
}

bool vnfs_container_name_valid(const char *text)
{
	size_t length = strlen(text);

	if (length == 0 || length > VNFS_CONTAINER_NAME_MAX || !isalnum((unsigned char)text[0]))
		return false;
	for (size_t i = 0; i < length; i++)
		if (!isalnum((unsigned char)text[i]) && !strchr("_.-", text[i]))
			return false;
	return true;
}

/* A plain container's identity: its name, and its short id or "" for
 * the container as a job. */
static int check_container(const char *job, const char *part, char *error, size_t error_size)
{
	if (!vnfs_container_name_valid(job)) {
		snprintf(error, error_size,
			 "a container's name is a letter or digit, then letters, digits, '_', '.' "
			 "or '-' (at most %d)",
			 VNFS_CONTAINER_NAME_MAX);
		return -1;
	}
	if (part[0] != '\0' && (strlen(part) != VNFS_CONTAINER_SHORT_ID_LENGTH ||
				strspn(part, "0123456789abcdef") != VNFS_CONTAINER_SHORT_ID_LENGTH)) {
		snprintf(error, error_size, "a container's id is %d lowercase hex digits",
			 VNFS_CONTAINER_SHORT_ID_LENGTH);
		return -1;
	}
	return 0;
}

/* A Kubernetes identity is spelled as Kubernetes checks it: the job
 * "namespace/name" (a DNS label, a DNS subdomain), the part a container's
 * name (a DNS label) or "" for the whole pod. */
static int check_kubernetes(const char *job, const char *part, char *error, size_t error_size)
{
	char namespace[VNFS_KUBERNETES_LABEL_MAX + 2];
	const char *slash = strchr(job, '/');
	size_t namespace_length = slash != NULL ? (size_t)(slash - job) : 0;

	if (slash == NULL || namespace_length >= sizeof(namespace)) {
		snprintf(error, error_size, "a Kubernetes pod is namespace/name");
		return -1;
	}
	memcpy(namespace, job, namespace_length);
	namespace[namespace_length] = '\0';
	if (!vnfs_kubernetes_label_valid(namespace) || !vnfs_kubernetes_subdomain_valid(slash + 1)) {
		snprintf(error, error_size,
			 "a Kubernetes pod is namespace/name, a DNS label and a DNS subdomain "
			 "(lowercase letters, digits, '-' and '.')");
		return -1;
	}
	if (part[0] != '\0' && !vnfs_kubernetes_label_valid(part)) {
		snprintf(error, error_size,
			 "a Kubernetes container's name is a DNS label (lowercase letters, digits, "
			 "'-', at most 63)");
		return -1;
	}
	return 0;
}

/*
 * A Slurm identity is Slurm's numbers spelled one way: "42", not "042" or
 * "+42"; a step "0", "batch", ..., not "00".  Two spellings of one step
 * would be two workloads, so the text must be what the numbers give back.
 */
static int check_slurm(const char *job, const char *part, char *error, size_t error_size)
{
	struct vnfs_workload canonical;
	uint32_t job_id, step_id = 0;

	if (job[0] < '0' || job[0] > '9' || vnfs_step_parse(job, &job_id) < 0) {
		snprintf(error, error_size, "a Slurm job id must be a number from 0 to 4294967295");
		return -1;
	}
	if (part[0] != '\0' && vnfs_step_parse(part, &step_id) < 0) {
		snprintf(error, error_size,
			 "a Slurm step must be a number or batch, extern, interactive");
		return -1;
	}
	vnfs_workload_of_slurm_step(&canonical, job_id, step_id);
	if (strcmp(canonical.job, job) != 0 ||
	    (part[0] != '\0' && strcmp(canonical.part, part) != 0)) {
		if (part[0] == '\0')
			snprintf(error, error_size, "Slurm job %s is spelled %s", job, canonical.job);
		else
			snprintf(error, error_size, "Slurm job %s step %s is spelled %s.%s", job,
				 part, canonical.job, canonical.part);
		return -1;
	}
	return 0;
}

/*
 * Flux prints a job id in F58 with the prefix U+0192 ("ƒ", two bytes in
 * UTF-8) and sets FLUX_JOB_ID so; with FLUX_F58_FORCE_ASCII the prefix is
 * "f", and every Flux command takes either.  vnfs spells it with the "f":
 * one spelling of one job, in the bytes a workload may hold.  Returns job,
 * or ascii holding its ASCII spelling.
 */
#define FLUX_F58_PREFIX "\xc6\x92"
static const char *flux_ascii_spelling(const char *job, char *ascii, size_t size)
{
	if (strncmp(job, FLUX_F58_PREFIX, strlen(FLUX_F58_PREFIX)) != 0)
		return job;
	if ((size_t)snprintf(ascii, size, "f%s", job + strlen(FLUX_F58_PREFIX)) >= size)
		return job; /* too long either way: check_text says so */
	return ascii;
}

int vnfs_workload_set(struct vnfs_workload *workload, enum vnfs_workload_source source,
		      const char *job, const char *part, char *error, size_t error_size)
{
	char flux_job[VNFS_WORKLOAD_JOB_MAX];

	if ((unsigned)source >= VNFS_SOURCE_COUNT) {
		snprintf(error, error_size, "unknown workload source %d", (int)source);
		return -1;
	}
	if (source == VNFS_SOURCE_FLUX)
		job = flux_ascii_spelling(job, flux_job, sizeof(flux_job));
	if (check_text("job", job, VNFS_WORKLOAD_JOB_MAX, false, error, error_size) < 0 ||
	    check_text("part", part, VNFS_WORKLOAD_PART_MAX, true, error, error_size) < 0)
		return -1;
	if (source == VNFS_SOURCE_SLURM && check_slurm(job, part, error, error_size) < 0)
		return -1;
	if (source == VNFS_SOURCE_KUBERNETES && check_kubernetes(job, part, error, error_size) < 0)
		return -1;
	if (source == VNFS_SOURCE_CONTAINER && check_container(job, part, error, error_size) < 0)
		return -1;
	workload->source = source;
	snprintf(workload->job, sizeof(workload->job), "%s", job);
	snprintf(workload->part, sizeof(workload->part), "%s", part);
	return 0;
}

const char *vnfs_workload_describe(const struct vnfs_workload *workload, char *buf, size_t size)
{
	const char *source = vnfs_workload_source_name(workload->source), *job_noun;
	bool has_part = workload->part[0] != '\0';

	if (source == NULL || workload->source == VNFS_SOURCE_SLURM) {
		/* Slurm's messages as they always were: "job 42 step 0". */
		snprintf(buf, size, "job %s%s%s", workload->job, has_part ? " step " : "",
			 workload->part);
		return buf;
	}
	/* "container trainer-7 id ...": a container's job noun is its source's. */
	job_noun = sources[workload->source].job_noun;
	snprintf(buf, size, "%s%s%s %s%s%s%s%s", source, job_noun[0] ? " " : "", job_noun,
		 workload->job, has_part ? " " : "",
		 has_part ? sources[workload->source].part_noun : "", has_part ? " " : "",
		 workload->part);
	return buf;
}

void vnfs_workload_of_slurm_step(struct vnfs_workload *workload, uint32_t job_id,
				 uint32_t step_id)
{
	workload->source = VNFS_SOURCE_SLURM;
	snprintf(workload->job, sizeof(workload->job), "%u", job_id);
	vnfs_step_name(step_id, workload->part, sizeof(workload->part));
}

void vnfs_workload_of_slurm_job(struct vnfs_workload *workload, uint32_t job_id)
{
	workload->source = VNFS_SOURCE_SLURM;
	snprintf(workload->job, sizeof(workload->job), "%u", job_id);
	workload->part[0] = '\0';
}

int vnfs_workload_slurm_job_id(const struct vnfs_workload *workload, uint32_t *job_id)
{
	/* vnfs_step_parse reads "batch" too: a job id must be a number. */
	if (workload->source != VNFS_SOURCE_SLURM || workload->job[0] < '0' ||
	    workload->job[0] > '9' || vnfs_step_parse(workload->job, job_id) < 0)
		return -1;
	return 0;
}

int vnfs_workload_slurm_ids(const struct vnfs_workload *workload, uint32_t *job_id,
			    uint32_t *step_id)
{
	if (vnfs_workload_slurm_job_id(workload, job_id) < 0 ||
	    vnfs_step_parse(workload->part, step_id) < 0)
		return -1;
	return 0;
}

bool vnfs_workload_of_job(const struct vnfs_workload *workload, enum vnfs_workload_source source,
			  const char *job)
{
	return workload->source == source && strcmp(workload->job, job) == 0;
}

bool vnfs_workload_is(const struct vnfs_workload *workload, enum vnfs_workload_source source,
		      const char *job, const char *part)
{
	return vnfs_workload_of_job(workload, source, job) && strcmp(workload->part, part) == 0;
}

bool vnfs_workload_same_job(const struct vnfs_workload *a, const struct vnfs_workload *b)
{
	return vnfs_workload_of_job(a, b->source, b->job);
}

bool vnfs_workload_equal(const struct vnfs_workload *a, const struct vnfs_workload *b)
{
	return vnfs_workload_is(a, b->source, b->job, b->part);
}

static bool decimal(const char *text)
{
	if (text[0] == '\0')
		return false;
	for (; *text != '\0'; text++)
		if (*text < '0' || *text > '9')
			return false;
	return true;
}

/*
 * Decimal texts first, by value (longer is larger once leading zeros are
 * gone; "7" before "007" when the values tie), anything else after them by
 * bytes.  A total order, and 0 only for equal texts, so that sorting user
 * text can neither cycle ("2" < "10" < "1x" < "2" in a mixed order) nor
 * interleave two texts of one value.
 */
int vnfs_workload_compare_text(const char *a, const char *b)
{
	const char *a_value = a, *b_value = b;
	size_t a_length, b_length;
	int order;

	if (decimal(a) != decimal(b))
		return decimal(a) ? -1 : 1;
	if (!decimal(a))
		return strcmp(a, b);
	while (a_value[0] == '0' && a_value[1] != '\0')
		a_value++;
	while (b_value[0] == '0' && b_value[1] != '\0')
		b_value++;
	a_length = strlen(a_value);
	b_length = strlen(b_value);
	if (a_length != b_length)
		return a_length < b_length ? -1 : 1;
	order = strcmp(a_value, b_value);
	if (order != 0)
		return order;
	a_length = strlen(a);
	b_length = strlen(b);
	return a_length != b_length ? (a_length < b_length ? -1 : 1) : 0;
}

/*
 * Where a part stands among its job's parts before the text order: Slurm's
 * named steps come first, in sacct's order (batch, extern, interactive,
 * pending), then the numbered ones.  Other sources' parts have no names
 * of their own.
 */
static int part_rank(enum vnfs_workload_source source, const char *part)
{
	static const char *const slurm_first[] = { "batch", "extern", "interactive",
						   "pending" };
	const int last = (int)(sizeof(slurm_first) / sizeof(slurm_first[0]));

	if (source != VNFS_SOURCE_SLURM)
		return 0;
	for (int rank = 0; rank < last; rank++)
		if (strcmp(part, slurm_first[rank]) == 0)
			return rank;
	return last;
}

int vnfs_workload_compare_part(enum vnfs_workload_source source, const char *a, const char *b)
{
	int a_rank = part_rank(source, a), b_rank = part_rank(source, b);

	/* The whole job ("") before its parts. */
	if ((a[0] == '\0') != (b[0] == '\0'))
		return a[0] == '\0' ? -1 : 1;
	if (a_rank != b_rank)
		return a_rank < b_rank ? -1 : 1;
	return vnfs_workload_compare_text(a, b);
}

int vnfs_workload_compare_job(const struct vnfs_workload *a, const struct vnfs_workload *b)
{
	if (a->source != b->source)
		return a->source < b->source ? -1 : 1;
	return vnfs_workload_compare_text(a->job, b->job);
}

int vnfs_workload_compare(const struct vnfs_workload *a, const struct vnfs_workload *b)
{
	int order = vnfs_workload_compare_job(a, b);

	return order != 0 ? order : vnfs_workload_compare_part(a->source, a->part, b->part);
}
