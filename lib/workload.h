/*
 * workload.h — who made an NFS call: a workload's identity, general across
 * schedulers and runtimes (DESIGN.md, decision 11).
 *
 * A workload is named by three things: its source (the scheduler or runtime
 * that started it: Slurm, Kubernetes), the id of its job as text ("42" for Slurm;
 * a pod, an LSF or PBS job in the sources to come), and its part of that
 * job (a Slurm step, "0" or "batch"; a container).  Its owner's uid and its
 * tags travel beside it in every request, record and row.  Text, because
 * most schedulers' ids are not numbers ("1234[5].pbs01", a pod's uid); the
 * numbers Slurm uses stay available through vnfs_workload_slurm_ids().
 *
 * Adding a source is one row in VNFS_WORKLOAD_SOURCES and one module that
 * learns its workloads; the outputs name a workload by the row's labels.
 * Identity text may come from users (an environment variable, a container
 * annotation, a scheduler hook), so every setter checks it against
 * vnfs_workload_text_valid(), and outputs still escape it where it goes.
 */
#ifndef VNFS_WORKLOAD_H
#define VNFS_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Every source, once: its constant, its name (in records, the history, the
 * protocol), the names of its job and part in reports and metrics labels
 * (Slurm's are today's job_id and step_id, which stay as they are), and the
 * words for them in messages ("sge job 77 task 3").
 */
#define VNFS_WORKLOAD_SOURCES(X)                                                     \
	/* constant     name           job label    part label      job    part */   \
	X(SLURM,       "slurm",       "job_id",    "step_id",      "job", "step")      \
	/* a pod, "namespace/name", and one of its containers */                      \
	X(KUBERNETES,  "kubernetes",  "pod",       "container",    "pod", "container") \
	/* a podman or docker container: its name, its short id */                    \
	X(CONTAINER,   "container",   "container", "container_id", "",    "id")        \
	/* jobs their processes' environment names (lib/environment.h) */             \
	X(LSF,         "lsf",         "job_id",    "index",        "job", "index")     \
	X(GRID_ENGINE, "sge",         "job_id",    "task_id",      "job", "task")      \
	X(PBS,         "pbs",         "job_id",    "index",        "job", "index")     \
	X(FLUX,        "flux",        "job_id",    "part",         "job", "part")      \
	/* a job variable the admin added: its value, its part's */                   \
	X(ENVIRONMENT, "environment", "job",       "part",         "job", "part")

enum vnfs_workload_source {
#define VNFS_WORKLOAD_SOURCE_ENUM(constant, name, job_label, part_label, job_noun, part_noun) \
	VNFS_SOURCE_##constant,
	VNFS_WORKLOAD_SOURCES(VNFS_WORKLOAD_SOURCE_ENUM)
#undef VNFS_WORKLOAD_SOURCE_ENUM
	VNFS_SOURCE_COUNT
};

/* Bytes of a job id and of a part, with the NUL: a Kubernetes
 * "namespace/pod" is at most 63 + 1 + 253 bytes. */
#define VNFS_WORKLOAD_JOB_MAX 320
#define VNFS_WORKLOAD_PART_MAX 256

struct vnfs_workload {
	enum vnfs_workload_source source;
	char job[VNFS_WORKLOAD_JOB_MAX];   /* never empty once set */
	char part[VNFS_WORKLOAD_PART_MAX]; /* "" when the job has no parts */
};

/*
 * Whether the workload's part may run again after it ended: Kubernetes
 * restarts a container (its restartPolicy) in a new cgroup, in the same pod,
 * by the same name, and counts its restarts as one container.  Its ended
 * step then keeps its slot until the pod finishes, so that the restart runs
 * on in it (helper/steps/registry.h).
 */
bool vnfs_workload_part_may_restart(const struct vnfs_workload *workload);

/* "slurm, kubernetes, ...": every source's name, for messages and help. */
#define VNFS_WORKLOAD_SOURCE_NAME_ITEM(constant, name, job_label, part_label, job_noun, \
					       part_noun)                                   \
	", " name
#define VNFS_WORKLOAD_SOURCE_NAME_LIST \
	(VNFS_WORKLOAD_SOURCES(VNFS_WORKLOAD_SOURCE_NAME_ITEM) + sizeof(", ") - 1)

/* "slurm", ...; NULL for an out-of-range source. */
const char *vnfs_workload_source_name(enum vnfs_workload_source source);
/* The labels of a source's job and part ("job_id", "step_id"). */
const char *vnfs_workload_job_label(enum vnfs_workload_source source);
const char *vnfs_workload_part_label(enum vnfs_workload_source source);
/* The source named name.  Returns 0, or -1 when no source has that name. */
int vnfs_workload_source_parse(const char *name, enum vnfs_workload_source *source);

/*
 * Whether text may name a job or a part: 1 to max - 1 bytes of letters,
 * digits and ._-:@+/[]=,%#~ — what scheduler ids, pod and container names
 * are made of, and nothing that a label, a path, a shell or a terminal
 * treats specially (no space, quote, backslash, control or non-ASCII byte).
 */
bool vnfs_workload_text_valid(const char *text, size_t max);

/*
 * Sets *workload from untrusted text.  part may be "" (a job without
 * parts, or a whole job).  A Slurm job and step must be spelled as
 * vnfs_workload_of_slurm_step spells them ("42", "0", "batch"), so that one
 * step has one identity.  Returns 0, or -1 with a message in error naming
 * what is wrong; *workload is then unchanged.
 */
int vnfs_workload_set(struct vnfs_workload *workload, enum vnfs_workload_source source,
		      const char *job, const char *part, char *error, size_t error_size);

/* The workload in a message: "job 42 step 0" and "job 42" for Slurm (the
 * helper's messages of old), "SOURCE JOB-LABEL JOB PART-LABEL PART" for
 * another ("kubernetes pod ml/resnet-7f9c container trainer"). */
#define VNFS_WORKLOAD_DESCRIPTION_MAX (VNFS_WORKLOAD_JOB_MAX + VNFS_WORKLOAD_PART_MAX + 32)
const char *vnfs_workload_describe(const struct vnfs_workload *workload, char *buf, size_t size);

/* A Slurm step's identity: job "42", part "0", "batch", "extern", ... */
void vnfs_workload_of_slurm_step(struct vnfs_workload *workload, uint32_t job_id,
				 uint32_t step_id);

/* A Slurm job's identity: job "42", no part. */
void vnfs_workload_of_slurm_job(struct vnfs_workload *workload, uint32_t job_id);

/* Kubernetes' names (IsDNS1123Label, IsDNS1123Subdomain): a label is 1 to
 * 63 of [a-z0-9-], starting and ending with a letter or digit; a subdomain
 * labels joined by '.', 253 bytes in all. */
#define VNFS_KUBERNETES_LABEL_MAX 63
#define VNFS_KUBERNETES_SUBDOMAIN_MAX 253
bool vnfs_kubernetes_label_valid(const char *text);
bool vnfs_kubernetes_subdomain_valid(const char *text);

/* A podman or docker container's name, as both engines check one: a letter
 * or digit, then letters, digits, '_', '.' or '-' ([a-zA-Z0-9][a-zA-Z0-9_.-]*),
 * here at most VNFS_CONTAINER_NAME_MAX bytes.  Its short id, the part of a
 * CONTAINER workload, is the first VNFS_CONTAINER_SHORT_ID_LENGTH of its 64
 * lowercase hex digits, as `podman ps` shows it: a name is reused from run
 * to run, the id is not. */
#define VNFS_CONTAINER_NAME_MAX 128
#define VNFS_CONTAINER_SHORT_ID_LENGTH 12
bool vnfs_container_name_valid(const char *text);

/* The Slurm numbers back.  Returns 0, or -1 when workload is not a Slurm
 * step (another source, or text that is not Slurm's). */
int vnfs_workload_slurm_ids(const struct vnfs_workload *workload, uint32_t *job_id,
			    uint32_t *step_id);

/* A Slurm job's number (whatever the part).  Returns 0, or -1 when
 * workload is not a Slurm job. */
int vnfs_workload_slurm_job_id(const struct vnfs_workload *workload, uint32_t *job_id);

/* Whether a and b name the same workload, and the same job. */
bool vnfs_workload_equal(const struct vnfs_workload *a, const struct vnfs_workload *b);
bool vnfs_workload_same_job(const struct vnfs_workload *a, const struct vnfs_workload *b);
/* The same comparisons against a workload kept as its parts (the helper's
 * registry keeps names in the bytes they take). */
bool vnfs_workload_of_job(const struct vnfs_workload *workload, enum vnfs_workload_source source,
			  const char *job);
bool vnfs_workload_is(const struct vnfs_workload *workload, enum vnfs_workload_source source,
		      const char *job, const char *part);

/*
 * The order of reports: by source (in VNFS_WORKLOAD_SOURCES' order), then
 * job, then part.  Job ids and parts that are decimal numbers come before
 * other text and compare as numbers (job 9 before job 10); other text
 * compares by bytes.  A job (part "") comes before its parts, and a Slurm
 * job's steps in sacct's order: batch, extern, interactive, pending, then
 * by number.  Returns <0, 0 or >0 like
 * strcmp, 0 only when vnfs_workload_equal().
 */
int vnfs_workload_compare(const struct vnfs_workload *a, const struct vnfs_workload *b);

/* The same order over the source and job only (a's and b's parts ignored). */
int vnfs_workload_compare_job(const struct vnfs_workload *a, const struct vnfs_workload *b);

/* The same order over two parts of one source's job, and over two texts. */
int vnfs_workload_compare_part(enum vnfs_workload_source source, const char *a, const char *b);
int vnfs_workload_compare_text(const char *a, const char *b);

#endif /* VNFS_WORKLOAD_H */
