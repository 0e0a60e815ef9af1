/*
 * config.h — vnfs.conf: the helper's configuration, parsed with inih, and
 * read by vnfs-report too (the socket, the history, report_dir).
 *
 * config.c owns the file format: sections, keys, defaults, units and the
 * error messages.  Every other module reads the parsed struct and never sees
 * the file.  An unknown section or key, or a bad value, is an error naming the
 * file, the line, the key and what is allowed; nothing is silently ignored.
 */
#ifndef VNFS_CONFIG_H
#define VNFS_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/environment.h"

/* SYSCONFDIR comes from configure (--sysconfdir), so an installed helper
 * reads the file `make install` put there. */
#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif
#define VNFS_DEFAULT_CONFIG_PATH SYSCONFDIR "/vnfs/vnfs.conf"
#define VNFS_PATH_MAX 256
#define VNFS_CONFIG_MAX_LIST 32      /* entries in a list-valued key */
#define VNFS_CONFIG_MAX_PROPERTIES 64 /* kafka property.* pass-through */
#define VNFS_BASIC_AUTH_ENTRY_MAX 256 /* "name:hash" of [prometheus] basic_auth_users */

enum vnfs_log_target { VNFS_LOG_STDERR, VNFS_LOG_SYSLOG };
enum vnfs_log_level { VNFS_LOG_ERROR, VNFS_LOG_WARNING, VNFS_LOG_INFO, VNFS_LOG_DEBUG };
enum vnfs_probe_mode { VNFS_PROBE_AUTO, VNFS_PROBE_FENTRY, VNFS_PROBE_KPROBE };
/* Their names, indexed by the enum, NULL-terminated: "auto", "fentry",
 * "kprobe" ([helper] probes, and vnfs-helper --probes). */
extern const char *const vnfs_probe_mode_names[];

struct vnfs_key_value {
	char key[128];
	char value[512];
};

struct vnfs_config {
	char source_path[VNFS_PATH_MAX]; /* the file this came from, or "" */

	struct {
		char socket_path[108];       /* [helper] socket */
		uint32_t socket_mode;        /* [helper] socket_mode (octal), 0666 */
		uint32_t interval_ms;        /* [helper] interval: "1s", "500ms" */
		char state_dir[VNFS_PATH_MAX];  /* registry persistence */
		char pin_dir[VNFS_PATH_MAX];    /* bpffs: /sys/fs/bpf/vnfs */
		char report_dir[VNFS_PATH_MAX]; /* per-job report files */
		char node_name[65];          /* "" = gethostname() */
		enum vnfs_log_target log_target;
		enum vnfs_log_level log_level;
		enum vnfs_probe_mode probe_mode;
		uint32_t kprobe_calls_in_flight; /* a kretprobe's maxactive; 0 = the kernel's */
		bool count_rpcs;             /* RPCs per workload (bpf/wire.h) */
		uint32_t finished_job_grace_s; /* keep a finished job's slots this long */
		uint32_t max_message_bytes;  /* socket request size bound */
		char admin_group[33];        /* may read every user's data; "" = root only */
		gid_t admin_gid;             /* its id, resolved at load; (gid_t)-1 = none */
		uint32_t max_clients;        /* socket connections at once */
		uint32_t max_clients_per_user; /* of them, one non-root uid's */
		uint32_t max_steps_per_job;  /* running + ended steps of one job (slots) */
		uint32_t max_steps_per_user; /* running + ended steps of one uid (slots) */
	} helper;

	struct {
		bool discover;               /* identify containers from their runtime's state */
		size_t tag_variable_count;   /* container environment variables kept as tags */
		char tag_variables[VNFS_CONFIG_MAX_LIST][65];
		char podman_storage[VNFS_PATH_MAX]; /* podman's graphroot; "" = none */
		char docker_data_root[VNFS_PATH_MAX]; /* dockerd's --data-root; "" = none */
	} containers;

	struct {
		/* "NAME" or "NAME:PART" (lib/environment.h); none: nothing captured */
		size_t job_variable_count;
		char job_variables[VNFS_ENVIRONMENT_MAX_JOB_VARIABLES][2 * VNFS_ENVIRONMENT_NAME_MAX];
		size_t tag_variable_count;   /* their values become the job's tags */
		char tag_variables[VNFS_ENVIRONMENT_MAX_TAG_VARIABLES][VNFS_ENVIRONMENT_NAME_MAX];
	} environment;

	struct {
		bool enabled;
		char path[VNFS_PATH_MAX];
		uint32_t retention_days;     /* 0 = keep forever */
		uint32_t write_interval_s;   /* running steps' rows, at most this often */
		uint64_t wal_limit_bytes;    /* beyond it, samples wait for a checkpoint */
	} sqlite;

	struct {
		bool enabled;
		char listen_address[64];     /* "127.0.0.1" */
		uint16_t port;               /* 9716 */
		uint32_t grace_period_s;     /* ended jobs' series kept this long */
		uint32_t max_series;         /* cap; beyond it series are dropped and counted */
		size_t tag_label_count;      /* tags exported as labels */
		char tag_labels[VNFS_CONFIG_MAX_LIST][65];
		uint32_t max_connections;    /* scrapes served at once */
		uint32_t max_connections_per_address; /* of them, from one client address */
		uint32_t connection_timeout_s; /* an idle connection is closed after this */
		char tls_cert_file[VNFS_PATH_MAX]; /* PEM; "" = plain HTTP */
		char tls_key_file[VNFS_PATH_MAX];  /* PEM, unencrypted */
		unsigned tls_cert_file_line; /* where they were set, for messages; 0 = default */
		unsigned tls_key_file_line;
		size_t basic_auth_user_count; /* none: no authentication */
		char basic_auth_users[VNFS_CONFIG_MAX_LIST][VNFS_BASIC_AUTH_ENTRY_MAX]; /* name:hash */
	} prometheus;

	struct {
		bool enabled;
		char path[VNFS_PATH_MAX];
		uint64_t max_bytes;          /* rotate when the file reaches this */
		uint32_t keep;               /* rotated files kept */
	} jsonlog;

	struct {
		bool enabled;
		char brokers[512];
		char topic[250];
		uint32_t queue_limit;        /* records buffered before dropping */
		size_t property_count;       /* property.NAME = VALUE pass-through */
		struct vnfs_key_value properties[VNFS_CONFIG_MAX_PROPERTIES];
	} kafka;

	struct {
		bool enabled;
		char url[512];
		size_t header_count;         /* header = Name: value (repeatable) */
		char headers[VNFS_CONFIG_MAX_LIST][512];
		uint32_t timeout_ms;
		uint32_t batch_records;      /* records per POST */
		uint32_t buffer_records;     /* bound of the queue; beyond it drops */
		uint32_t retry_max;
		uint32_t retry_backoff_ms;   /* doubled on every retry */
	} http;

	struct {
		bool enabled;
		char conninfo[1024];         /* libpq keywords or URI; may hold a password */
		uint32_t batch_records;      /* records per transaction */
		uint32_t buffer_records;     /* bound of the in-memory queue; beyond it drops */
		char spool_dir[VNFS_PATH_MAX]; /* batches kept while the server is away */
		uint64_t spool_max_bytes;    /* bound of the spool; beyond it drops */
		uint32_t retry_interval_ms;  /* between connection attempts */
	} postgresql;

	struct {
		/* The history vnfs-report reads: "" for [sqlite] path, or the
		 * cluster's PostgreSQL database, a postgresql:// URI. */
		char history[VNFS_PATH_MAX];
	} report;

	struct {
		/* Slurm's commands, by absolute path (EpilogSlurmctld runs with
		 * no PATH); sacct "" = vnfs-report does not ask the accounting. */
		char sacct[VNFS_PATH_MAX];
		char scontrol[VNFS_PATH_MAX];
		uint32_t wait_s;             /* vnfs-accounting waits this long for every node's report */
	} slurm_accounting;
};

/* Fills *config with the built-in defaults (the values etc/vnfs.conf shows). */
void vnfs_config_defaults(struct vnfs_config *config);

/*
 * Loads path over the defaults.  Returns 0, or -1 with a message in error
 * such as "/etc/vnfs/vnfs.conf:12: [helper] interval: '5x' is not a duration
 * (use e.g. 1s, 500ms)".  A missing file is an error unless missing_ok.
 */
int vnfs_config_load(struct vnfs_config *config, const char *path, bool missing_ok,
		     char *error, size_t error_size);

#endif /* VNFS_CONFIG_H */
