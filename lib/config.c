/*
 * config.c — vnfs.conf: sections, keys, defaults, units and error messages.
 *
 * inih splits the file into (section, key, value); everything after that is
 * driven by one table, config_keys[], which says for every key where its value
 * lives in struct vnfs_config, how it is parsed, what range it may take and
 * what its default is.  Defaults are written as text and go through the same
 * parsers as the file, so the built-in values and etc/vnfs.conf cannot drift
 * apart without the unit test noticing.
 *
 * A key is given once, and a section has one header: a second one is an error
 * naming both lines, since which of two values a reader meant cannot be told.
 * The two keys that take one entry per line (header, basic_auth_users) repeat.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

#include "lib/config.h"
#include "lib/history/statement.h"
#include "lib/paths.h"
#include "lib/tags.h"

/* The parsers store enums through an int; the enums must be int-sized. */
_Static_assert(sizeof(enum vnfs_log_target) == sizeof(int), "enum size");
_Static_assert(sizeof(enum vnfs_log_level) == sizeof(int), "enum size");
_Static_assert(sizeof(enum vnfs_probe_mode) == sizeof(int), "enum size");

struct config_key;

/*
 * A parser turns one value into its field, or writes why it cannot into
 * problem ("'5x' is not a duration (use e.g. 1s, 500ms, 2m)"); the caller
 * prefixes the file, line, section and key.  name is the key as written,
 * which differs from key->name only for the kafka property.NAME prefix.
 */
typedef int (*config_parser)(const struct config_key *key, const char *name, const char *value,
			     char *config_base, char *problem, size_t problem_size);

struct config_key {
	const char *section;
	const char *name;          /* "property." matches as a prefix */
	config_parser parse;
	size_t offset;             /* of the field in struct vnfs_config */
	size_t size;               /* of the field, or of one list entry */
	size_t aux_offset;         /* list: its count; listen: the port */
	bool list;                 /* the file's entries replace the default's */
	bool repeats;              /* may be given on several lines, each adding entries */
	uint64_t min, max;         /* range in the field's unit; list: max entries */
	const char *const *choices; /* enum: names in enum order, NULL-terminated */
	const char *default_text;  /* parsed by vnfs_config_defaults() */
	const char *required_when; /* a bool key of the section: when true, this must be set */
	const char *example;       /* shown when a required key is missing */
};

struct config_section {
	const char *name;
	bool built;                /* false: the sink was configured out */
	const char *configure_hint;
};

static const struct config_section config_sections[] = {
	{ "helper", true, NULL },
	{ "containers", true, NULL },
	{ "environment", true, NULL },
	{ "sqlite", true, NULL },
	{ "prometheus", true, NULL },
	{ "jsonlog", true, NULL },
#ifdef HAVE_KAFKA
	{ "kafka", true, NULL },
#else
	{ "kafka", false, "this vnfs was built without Kafka support (configure --with-kafka)" },
#endif
#ifdef HAVE_CURL
	{ "http", true, NULL },
#else
	{ "http", false, "this vnfs was built without HTTP support (configure --with-curl)" },
#endif
#ifdef HAVE_POSTGRESQL
	{ "postgresql", true, NULL },
#else
	{ "postgresql", false,
	  "this vnfs was built without PostgreSQL support (configure --with-postgresql)" },
#endif
	{ "report", true, NULL },
	{ "slurm_accounting", true, NULL },
};
#define SECTION_COUNT (sizeof(config_sections) / sizeof(config_sections[0]))

static const char *const log_targets[] = { "stderr", "syslog", NULL };
static const char *const log_levels[] = { "error", "warning", "info", "debug", NULL };
const char *const vnfs_probe_mode_names[] = {
	[VNFS_PROBE_AUTO] = "auto",
	[VNFS_PROBE_FENTRY] = "fentry",
	[VNFS_PROBE_KPROBE] = "kprobe",
	NULL,
};

#define MS_PER_SECOND 1000u
#define SECONDS_PER_DAY 86400u
#define KIB 1024ull
#define MIB (1024ull * KIB)
#define GIB (1024ull * MIB)
#define TIB (1024ull * GIB)

#define DECLARE_PARSER(function) \
	static int function(const struct config_key *, const char *, const char *, char *, \
			    char *, size_t)
DECLARE_PARSER(parse_string);
DECLARE_PARSER(parse_name);
DECLARE_PARSER(parse_group);
DECLARE_PARSER(parse_path);
DECLARE_PARSER(parse_history_locator);
DECLARE_PARSER(parse_optional_path);
DECLARE_PARSER(parse_url);
DECLARE_PARSER(parse_bool);
DECLARE_PARSER(parse_uint);
DECLARE_PARSER(parse_duration_ms);
DECLARE_PARSER(parse_duration_s);
DECLARE_PARSER(parse_size);
DECLARE_PARSER(parse_mode);
DECLARE_PARSER(parse_enum);
DECLARE_PARSER(parse_listen);
DECLARE_PARSER(parse_tag_list);
DECLARE_PARSER(parse_variable_list);
DECLARE_PARSER(parse_header_list);
DECLARE_PARSER(parse_property);
DECLARE_PARSER(parse_basic_auth_list);

#define FIELD(member) .offset = offsetof(struct vnfs_config, member), \
		      .size = sizeof(((struct vnfs_config *)0)->member)
#define LIST(member, count) .list = true, .offset = offsetof(struct vnfs_config, member), \
		      .size = sizeof(((struct vnfs_config *)0)->member[0]), \
		      .aux_offset = offsetof(struct vnfs_config, count), \
		      .max = sizeof(((struct vnfs_config *)0)->member) / \
			     sizeof(((struct vnfs_config *)0)->member[0])

/* Every key of vnfs.conf, in the order etc/vnfs.conf and docs/CONFIG.md show them. */
static const struct config_key config_keys[] = {
	{ "helper", "socket", parse_path, FIELD(helper.socket_path),
	  .default_text = VNFS_DEFAULT_SOCKET },
	{ "helper", "socket_mode", parse_mode, FIELD(helper.socket_mode), .max = 0777,
	  .default_text = "0666" },
	{ "helper", "interval", parse_duration_ms, FIELD(helper.interval_ms),
	  .min = 100, .max = 3600 * MS_PER_SECOND, .default_text = "1s" },
	{ "helper", "state_dir", parse_path, FIELD(helper.state_dir),
	  .default_text = VNFS_DEFAULT_STATE_DIR },
	{ "helper", "pin_dir", parse_path, FIELD(helper.pin_dir),
	  .default_text = VNFS_DEFAULT_PIN_DIR },
	{ "helper", "report_dir", parse_path, FIELD(helper.report_dir),
	  .default_text = VNFS_DEFAULT_REPORT_DIR },
	{ "helper", "node_name", parse_name, FIELD(helper.node_name), .default_text = "" },
	{ "helper", "log", parse_enum, FIELD(helper.log_target), .choices = log_targets,
	  .default_text = "stderr" },
	{ "helper", "log_level", parse_enum, FIELD(helper.log_level), .choices = log_levels,
	  .default_text = "info" },
	{ "helper", "probes", parse_enum, FIELD(helper.probe_mode), .choices = vnfs_probe_mode_names,
	  .default_text = "auto" },
	/* The kernel refuses more than 4096 (KRETPROBE_MAXACTIVE_MAX). */
	{ "helper", "kprobe_calls_in_flight", parse_uint, FIELD(helper.kprobe_calls_in_flight),
	  .max = 4096, .default_text = "1024" },
	{ "helper", "count_rpcs", parse_bool, FIELD(helper.count_rpcs), .default_text = "true" },
	{ "helper", "finished_job_grace", parse_duration_s, FIELD(helper.finished_job_grace_s),
	  .max = 7 * SECONDS_PER_DAY, .default_text = "300s" },
	{ "helper", "max_message_bytes", parse_size, FIELD(helper.max_message_bytes),
	  .min = 4 * KIB, .max = 16 * MIB, .default_text = "65536" },
	{ "helper", "admin_group", parse_group, FIELD(helper.admin_group),
	  .aux_offset = offsetof(struct vnfs_config, helper.admin_gid), .default_text = "" },
	{ "helper", "max_clients", parse_uint, FIELD(helper.max_clients),
	  .min = 8, .max = 4096, .default_text = "64" },
	{ "helper", "max_clients_per_user", parse_uint, FIELD(helper.max_clients_per_user),
	  .min = 1, .max = 4096, .default_text = "8" },
	{ "helper", "max_steps_per_job", parse_uint, FIELD(helper.max_steps_per_job),
	  .min = 1, .max = 1024 /* VNFS_MAX_STEPS */, .default_text = "256" },
	{ "helper", "max_steps_per_user", parse_uint, FIELD(helper.max_steps_per_user),
	  .min = 1, .max = 1024 /* VNFS_MAX_STEPS */, .default_text = "512" },

	{ "containers", "discover", parse_bool, FIELD(containers.discover),
	  .default_text = "true" },
	{ "containers", "tag_variables", parse_tag_list,
	  LIST(containers.tag_variables, containers.tag_variable_count), .default_text = "" },
	{ "containers", "podman_storage", parse_optional_path, FIELD(containers.podman_storage),
	  .default_text = "/var/lib/containers/storage" },
	{ "containers", "docker_data_root", parse_optional_path,
	  FIELD(containers.docker_data_root), .default_text = "/var/lib/docker" },

	{ "environment", "job_variables", parse_variable_list,
	  LIST(environment.job_variables, environment.job_variable_count),
	  .default_text = VNFS_ENVIRONMENT_DEFAULT_JOB_VARIABLES },
	{ "environment", "tag_variables", parse_variable_list,
	  LIST(environment.tag_variables, environment.tag_variable_count), .default_text = "" },

	{ "sqlite", "enabled", parse_bool, FIELD(sqlite.enabled), .default_text = "true" },
	{ "sqlite", "path", parse_path, FIELD(sqlite.path),
	  .default_text = VNFS_DEFAULT_HISTORY_PATH },
	{ "sqlite", "retention_days", parse_uint, FIELD(sqlite.retention_days),
	  .max = 36500, .default_text = "90" },
	{ "sqlite", "write_interval", parse_duration_s, FIELD(sqlite.write_interval_s),
	  .max = 3600, .default_text = "30s" },
	{ "sqlite", "wal_limit", parse_size, FIELD(sqlite.wal_limit_bytes),
	  .min = MIB, .max = 64 * GIB, .default_text = "16M" },

	{ "prometheus", "enabled", parse_bool, FIELD(prometheus.enabled), .default_text = "true" },
	{ "prometheus", "listen", parse_listen, FIELD(prometheus.listen_address),
	  .aux_offset = offsetof(struct vnfs_config, prometheus.port),
	  .default_text = "127.0.0.1:9716" },
	{ "prometheus", "grace_period", parse_duration_s, FIELD(prometheus.grace_period_s),
	  .max = 7 * SECONDS_PER_DAY, .default_text = "300s" },
	{ "prometheus", "max_series", parse_uint, FIELD(prometheus.max_series),
	  .min = 1, .max = 100000000, .default_text = "200000" },
	{ "prometheus", "tag_labels", parse_tag_list,
	  LIST(prometheus.tag_labels, prometheus.tag_label_count), .default_text = "" },
	{ "prometheus", "max_connections", parse_uint, FIELD(prometheus.max_connections),
	  .min = 2, .max = 4096, .default_text = "64" },
	{ "prometheus", "max_connections_per_address", parse_uint,
	  FIELD(prometheus.max_connections_per_address), .min = 1, .max = 4096,
	  .default_text = "8" },
	{ "prometheus", "connection_timeout", parse_duration_s,
	  FIELD(prometheus.connection_timeout_s), .min = 1, .max = 3600, .default_text = "30s" },
	{ "prometheus", "tls_cert_file", parse_optional_path, FIELD(prometheus.tls_cert_file),
	  .default_text = "" },
	{ "prometheus", "tls_key_file", parse_optional_path, FIELD(prometheus.tls_key_file),
	  .default_text = "" },
	{ "prometheus", "basic_auth_users", parse_basic_auth_list,
	  LIST(prometheus.basic_auth_users, prometheus.basic_auth_user_count),
	  .repeats = true, .default_text = "" },

	{ "jsonlog", "enabled", parse_bool, FIELD(jsonlog.enabled), .default_text = "false" },
	{ "jsonlog", "path", parse_path, FIELD(jsonlog.path),
	  .default_text = "/var/log/vnfs/vnfs.jsonl" },
	{ "jsonlog", "max_size", parse_size, FIELD(jsonlog.max_bytes),
	  .min = 64 * KIB, .max = TIB, .default_text = "100M" },
	{ "jsonlog", "keep", parse_uint, FIELD(jsonlog.keep), .max = 1000, .default_text = "5" },

	{ "kafka", "enabled", parse_bool, FIELD(kafka.enabled), .default_text = "false" },
	{ "kafka", "brokers", parse_string, FIELD(kafka.brokers), .default_text = "",
	  .required_when = "enabled", .example = "brokers = kafka1:9092,kafka2:9092" },
	{ "kafka", "topic", parse_name, FIELD(kafka.topic), .min = 1, .default_text = "vnfs" },
	{ "kafka", "queue_limit", parse_uint, FIELD(kafka.queue_limit),
	  .min = 1, .max = 10000000, .default_text = "100000" },
	{ "kafka", "property.", parse_property, FIELD(kafka.properties[0]),
	  .aux_offset = offsetof(struct vnfs_config, kafka.property_count),
	  .max = VNFS_CONFIG_MAX_PROPERTIES },

	{ "http", "enabled", parse_bool, FIELD(http.enabled), .default_text = "false" },
	{ "http", "url", parse_url, FIELD(http.url), .default_text = "",
	  .required_when = "enabled", .example = "url = https://collector.example.org/vnfs" },
	{ "http", "header", parse_header_list, LIST(http.headers, http.header_count),
	  .repeats = true, .default_text = "" },
	{ "http", "timeout", parse_duration_ms, FIELD(http.timeout_ms),
	  .min = 100, .max = 600 * MS_PER_SECOND, .default_text = "5s" },
	{ "http", "batch_records", parse_uint, FIELD(http.batch_records),
	  .min = 1, .max = 100000, .default_text = "500" },
	{ "http", "buffer_records", parse_uint, FIELD(http.buffer_records),
	  .min = 1, .max = 10000000, .default_text = "100000" },
	{ "http", "retry_max", parse_uint, FIELD(http.retry_max), .max = 100,
	  .default_text = "5" },
	{ "http", "retry_backoff", parse_duration_ms, FIELD(http.retry_backoff_ms),
	  .min = 10, .max = 600 * MS_PER_SECOND, .default_text = "1s" },

	{ "postgresql", "enabled", parse_bool, FIELD(postgresql.enabled), .default_text = "false" },
	{ "postgresql", "conninfo", parse_string, FIELD(postgresql.conninfo), .default_text = "",
	  .required_when = "enabled",
	  .example = "conninfo = host=db.example.org dbname=vnfs user=vnfs_writer" },
	{ "postgresql", "batch_records", parse_uint, FIELD(postgresql.batch_records),
	  .min = 1, .max = 100000, .default_text = "500" },
	{ "postgresql", "buffer_records", parse_uint, FIELD(postgresql.buffer_records),
	  .min = 1, .max = 10000000, .default_text = "100000" },
	{ "postgresql", "spool_dir", parse_path, FIELD(postgresql.spool_dir),
	  .default_text = "/var/spool/vnfs/postgresql" },
	{ "postgresql", "spool_max_bytes", parse_size, FIELD(postgresql.spool_max_bytes),
	  .min = 64 * KIB, .max = TIB, .default_text = "1G" },
	{ "postgresql", "retry_interval", parse_duration_ms, FIELD(postgresql.retry_interval_ms),
	  .min = 100, .max = 3600 * MS_PER_SECOND, .default_text = "10s" },

	{ "report", "history", parse_history_locator, FIELD(report.history), .default_text = "" },

	{ "slurm_accounting", "sacct", parse_optional_path, FIELD(slurm_accounting.sacct),
	  .default_text = "/usr/bin/sacct" },
	{ "slurm_accounting", "scontrol", parse_path, FIELD(slurm_accounting.scontrol),
	  .default_text = "/usr/bin/scontrol" },
	{ "slurm_accounting", "wait", parse_duration_s, FIELD(slurm_accounting.wait_s),
	  .max = SECONDS_PER_DAY, .default_text = "300s" },
};
#define KEY_COUNT (sizeof(config_keys) / sizeof(config_keys[0]))

static bool key_is_prefix(const struct config_key *key)
{
	size_t length = strlen(key->name);

	return length > 0 && key->name[length - 1] == '.';
}

/* Formatting helpers for messages ---------------------------------------- */

static int problem_at(char *problem, size_t size, const char *format, ...)
	__attribute__((format(printf, 3, 4)));

/* Writes a problem text and returns -1, so parsers can `return problem_at(...)`. */
static int problem_at(char *problem, size_t size, const char *format, ...)
{
	va_list arguments;

	va_start(arguments, format);
	vsnprintf(problem, size, format, arguments);
	va_end(arguments);
	return -1;
}

/* The largest unit that divides value exactly: 300000 ms -> "5m". */
static void format_duration(uint64_t milliseconds, char *out, size_t size)
{
	static const struct { const char *suffix; uint64_t ms; } units[] = {
		{ "d", SECONDS_PER_DAY * 1000ull }, { "h", 3600000 }, { "m", 60000 },
		{ "s", 1000 }, { "ms", 1 },
	};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (milliseconds != 0 && milliseconds % units[i].ms == 0) {
			snprintf(out, size, "%" PRIu64 "%s", milliseconds / units[i].ms,
				 units[i].suffix);
			return;
		}
	}
	snprintf(out, size, "0s");
}

static void format_size(uint64_t bytes, char *out, size_t size)
{
	static const struct { const char *suffix; uint64_t bytes; } units[] = {
		{ "T", TIB }, { "G", GIB }, { "M", MIB }, { "K", KIB },
	};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (bytes != 0 && bytes % units[i].bytes == 0) {
			snprintf(out, size, "%" PRIu64 "%s", bytes / units[i].bytes,
				 units[i].suffix);
			return;
		}
	}
	snprintf(out, size, "%" PRIu64, bytes);
}

/* Field access ------------------------------------------------------------ */

static void store_unsigned(char *field, size_t size, uint64_t value)
{
	switch (size) {
	case sizeof(uint16_t): {
		uint16_t narrow = (uint16_t)value;
		memcpy(field, &narrow, sizeof(narrow));
		break;
	}
	case sizeof(uint32_t): {
		uint32_t narrow = (uint32_t)value;
		memcpy(field, &narrow, sizeof(narrow));
		break;
	}
	default:
		memcpy(field, &value, sizeof(value));
		break;
	}
}

/* A decimal number without sign or spaces; end is where the digits stop. */
static bool parse_digits(const char *text, uint64_t *value, const char **end)
{
	char *stop;

	if (!isdigit((unsigned char)text[0]))
		return false;
	errno = 0;
	unsigned long long parsed = strtoull(text, &stop, 10);
	if (errno == ERANGE)
		return false;
	*value = parsed;
	*end = stop;
	return true;
}

static int check_range(const struct config_key *key, const char *value, uint64_t number,
		       void (*format)(uint64_t, char *, size_t), uint64_t unit,
		       char *problem, size_t problem_size)
{
	char low[32], high[32];

	if (number >= key->min && number <= key->max)
		return 0;
	if (format) {
		format(key->min * unit, low, sizeof(low));
		format(key->max * unit, high, sizeof(high));
	} else {
		snprintf(low, sizeof(low), "%" PRIu64, key->min);
		snprintf(high, sizeof(high), "%" PRIu64, key->max);
	}
	return problem_at(problem, problem_size, "'%s' is out of range (allowed: %s to %s)",
			  value, low, high);
}

/* Parsers ------------------------------------------------------------------ */

static int store_bounded_string(const struct config_key *key, const char *value, char *field,
				char *problem, size_t problem_size)
{
	size_t length = strlen(value);

	if (length >= key->size)
		return problem_at(problem, problem_size,
				  "value of %zu characters is too long (allowed: at most %zu)",
				  length, key->size - 1);
	memcpy(field, value, length + 1);
	return 0;
}

static int parse_string(const struct config_key *key, const char *name, const char *value,
			char *base, char *problem, size_t problem_size)
{
	(void)name;
	return store_bounded_string(key, value, base + key->offset, problem, problem_size);
}

/* Host and topic names: safe in file names, labels and Kafka topics. */
static int parse_name(const struct config_key *key, const char *name, const char *value,
		      char *base, char *problem, size_t problem_size)
{
	(void)name;
	for (const char *c = value; *c; c++) {
		if (!isalnum((unsigned char)*c) && *c != '.' && *c != '_' && *c != '-')
			return problem_at(problem, problem_size,
					  "'%s' is not a name (allowed: letters, digits, '.', '_' and '-')",
					  value);
	}
	if (strlen(value) < key->min)
		return problem_at(problem, problem_size, "must not be empty");
	return store_bounded_string(key, value, base + key->offset, problem, problem_size);
}

/* A group name, resolved now so that a typo is an error naming its line. */
static int parse_group(const struct config_key *key, const char *name, const char *value,
		       char *base, char *problem, size_t problem_size)
{
	gid_t *gid = (gid_t *)(base + key->aux_offset);
	struct group entry, *found = NULL;
	char buffer[4096];
	int status;

	if (parse_name(key, name, value, base, problem, problem_size) < 0)
		return -1;
	*gid = (gid_t)-1;
	if (value[0] == '\0')
		return 0;
	status = getgrnam_r(value, &entry, buffer, sizeof(buffer), &found);
	if (status != 0 || found == NULL)
		return problem_at(problem, problem_size, "'%s' is not a group on this node%s%s",
				  value, status != 0 ? ": " : "", status != 0 ? strerror(status) : "");
	*gid = found->gr_gid;
	return 0;
}

static int parse_path(const struct config_key *key, const char *name, const char *value,
		      char *base, char *problem, size_t problem_size)
{
	(void)name;
	if (value[0] != '/')
		return problem_at(problem, problem_size,
				  "'%s' is not an absolute path (allowed: a path starting with /)",
				  value);
	return store_bounded_string(key, value, base + key->offset, problem, problem_size);
}

/* The history vnfs-report reads: "" (the [sqlite] path), an absolute path,
 * or a PostgreSQL URI (lib/history/statement.h). */
static int parse_history_locator(const struct config_key *key, const char *name,
				 const char *value, char *base, char *problem, size_t problem_size)
{
	(void)name;
	if (value[0] == '\0' || value[0] == '/' || history_is_postgresql(value))
		return store_bounded_string(key, value, base + key->offset, problem, problem_size);
	return problem_at(problem, problem_size,
			  "'%s' is not a history (allowed: empty for [sqlite] path, an absolute "
			  "path, or a postgresql:// URI)",
			  value);
}

/* A path, or "" for none (tls_cert_file = ). */
static int parse_optional_path(const struct config_key *key, const char *name, const char *value,
			       char *base, char *problem, size_t problem_size)
{
	if (value[0] == '\0') {
		base[key->offset] = '\0';
		return 0;
	}
	return parse_path(key, name, value, base, problem, problem_size);
}

static int parse_url(const struct config_key *key, const char *name, const char *value,
		     char *base, char *problem, size_t problem_size)
{
	(void)name;
	bool has_scheme = strncmp(value, "http://", 7) == 0 || strncmp(value, "https://", 8) == 0;

	for (const char *c = value; *c; c++) {
		if (isspace((unsigned char)*c) || iscntrl((unsigned char)*c))
			has_scheme = false;
	}
	if (value[0] != '\0' && !has_scheme)
		return problem_at(problem, problem_size,
				  "'%s' is not a URL (use e.g. https://collector.example.org/vnfs)",
				  value);
	return store_bounded_string(key, value, base + key->offset, problem, problem_size);
}

static int parse_bool(const struct config_key *key, const char *name, const char *value,
		      char *base, char *problem, size_t problem_size)
{
	static const char *const truths[] = { "true", "yes", "on", "1" };
	static const char *const falsehoods[] = { "false", "no", "off", "0" };
	bool *field = (bool *)(base + key->offset);

	(void)name;
	for (size_t i = 0; i < sizeof(truths) / sizeof(truths[0]); i++) {
		if (strcasecmp(value, truths[i]) == 0) {
			*field = true;
			return 0;
		}
		if (strcasecmp(value, falsehoods[i]) == 0) {
			*field = false;
			return 0;
		}
	}
	return problem_at(problem, problem_size,
			  "'%s' is not a boolean (allowed: true, false, yes, no, on, off, 1, 0)",
			  value);
}

static int parse_uint(const struct config_key *key, const char *name, const char *value,
		      char *base, char *problem, size_t problem_size)
{
	uint64_t number;
	const char *end;

	(void)name;
	if (!parse_digits(value, &number, &end) || *end != '\0')
		return problem_at(problem, problem_size,
				  "'%s' is not a whole number (use e.g. %s)", value,
				  key->default_text);
	if (check_range(key, value, number, NULL, 1, problem, problem_size) < 0)
		return -1;
	store_unsigned(base + key->offset, key->size, number);
	return 0;
}

/* "500ms", "1s", "2m", "1h", "7d"; a plain number is seconds.  Result in ms. */
static bool duration_to_ms(const char *text, uint64_t *milliseconds)
{
	static const struct { const char *suffix; uint64_t ms; } units[] = {
		{ "ms", 1 }, { "s", 1000 }, { "", 1000 }, { "m", 60000 }, { "h", 3600000 },
		{ "d", SECONDS_PER_DAY * 1000ull },
	};
	uint64_t number;
	const char *suffix;

	if (!parse_digits(text, &number, &suffix))
		return false;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(suffix, units[i].suffix) != 0)
			continue;
		if (number > UINT64_MAX / units[i].ms)
			return false;
		*milliseconds = number * units[i].ms;
		return true;
	}
	return false;
}

static int parse_duration(const struct config_key *key, const char *value, uint64_t unit_ms,
			  char *base, char *problem, size_t problem_size)
{
	uint64_t milliseconds;

	if (!duration_to_ms(value, &milliseconds))
		return problem_at(problem, problem_size,
				  "'%s' is not a duration (use e.g. 1s, 500ms, 2m)", value);
	if (milliseconds % unit_ms != 0)
		return problem_at(problem, problem_size,
				  "'%s' is not a whole number of seconds (use e.g. 30s, 5m)", value);
	if (check_range(key, value, milliseconds / unit_ms, format_duration, unit_ms, problem,
			problem_size) < 0)
		return -1;
	store_unsigned(base + key->offset, key->size, milliseconds / unit_ms);
	return 0;
}

static int parse_duration_ms(const struct config_key *key, const char *name, const char *value,
			     char *base, char *problem, size_t problem_size)
{
	(void)name;
	return parse_duration(key, value, 1, base, problem, problem_size);
}

static int parse_duration_s(const struct config_key *key, const char *name, const char *value,
			    char *base, char *problem, size_t problem_size)
{
	(void)name;
	return parse_duration(key, value, MS_PER_SECOND, base, problem, problem_size);
}

/* "4096", "64K", "100M", "1G", "1T" (binary units, either case). */
static int parse_size(const struct config_key *key, const char *name, const char *value,
		      char *base, char *problem, size_t problem_size)
{
	static const struct { char suffix; uint64_t bytes; } units[] = {
		{ '\0', 1 }, { 'K', KIB }, { 'M', MIB }, { 'G', GIB }, { 'T', TIB },
	};
	uint64_t number, bytes = 0;
	const char *suffix;
	bool valid = false;

	(void)name;
	if (parse_digits(value, &number, &suffix) && (suffix[0] == '\0' || suffix[1] == '\0')) {
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			if (toupper((unsigned char)suffix[0]) != units[i].suffix)
				continue;
			valid = number <= UINT64_MAX / units[i].bytes;
			bytes = number * units[i].bytes;
			break;
		}
	}
	if (!valid)
		return problem_at(problem, problem_size,
				  "'%s' is not a size (use e.g. 4096, 64K, 100M, 1G)", value);
	if (check_range(key, value, bytes, format_size, 1, problem, problem_size) < 0)
		return -1;
	store_unsigned(base + key->offset, key->size, bytes);
	return 0;
}

static int parse_mode(const struct config_key *key, const char *name, const char *value,
		      char *base, char *problem, size_t problem_size)
{
	size_t length = strlen(value);

	(void)name;
	if (length == 0 || length > 4 || strspn(value, "01234567") != length)
		return problem_at(problem, problem_size,
				  "'%s' is not an octal mode (use e.g. 0666, 0660)", value);
	unsigned long mode = strtoul(value, NULL, 8);
	if (mode > key->max)
		return problem_at(problem, problem_size,
				  "'%s' is out of range (allowed: 0000 to %04" PRIo64 ")", value,
				  key->max);
	store_unsigned(base + key->offset, key->size, mode);
	return 0;
}

static int parse_enum(const struct config_key *key, const char *name, const char *value,
		      char *base, char *problem, size_t problem_size)
{
	char allowed[128] = "";
	size_t used = 0;

	(void)name;
	for (int i = 0; key->choices[i]; i++) {
		if (strcmp(value, key->choices[i]) == 0) {
			memcpy(base + key->offset, &i, sizeof(i));
			return 0;
		}
		used += (size_t)snprintf(allowed + used, sizeof(allowed) - used, "%s%s",
					 i ? ", " : "", key->choices[i]);
		if (used >= sizeof(allowed))
			break;
	}
	return problem_at(problem, problem_size, "unknown value '%s' (allowed: %s)", value,
			  allowed);
}

/* "127.0.0.1:9716", "0.0.0.0:9716", "[::1]:9716": a literal address, never a name. */
static int parse_listen(const struct config_key *key, const char *name, const char *value,
			char *base, char *problem, size_t problem_size)
{
	char address[64];
	const char *address_start = value, *port_text;
	size_t address_length;
	int family = AF_INET;
	unsigned char binary[sizeof(struct in6_addr)];
	uint64_t port;
	const char *end;

	(void)name;
	if (value[0] == '[') {
		const char *close = strchr(value, ']');
		if (!close || close[1] != ':')
			goto bad;
		family = AF_INET6;
		address_start = value + 1;
		address_length = (size_t)(close - address_start);
		port_text = close + 2;
	} else {
		const char *colon = strchr(value, ':');
		if (!colon || strchr(colon + 1, ':'))
			goto bad;
		address_length = (size_t)(colon - value);
		port_text = colon + 1;
	}
	if (address_length >= sizeof(address) || address_length >= key->size)
		goto bad;
	memcpy(address, address_start, address_length);
	address[address_length] = '\0';
	if (inet_pton(family, address, binary) != 1)
		goto bad;
	if (!parse_digits(port_text, &port, &end) || *end != '\0')
		goto bad;
	if (port < 1 || port > 65535)
		return problem_at(problem, problem_size,
				  "'%s' has no valid port (allowed: 1 to 65535)", value);
	memcpy(base + key->offset, address, address_length + 1);
	store_unsigned(base + key->aux_offset, sizeof(uint16_t), port);
	return 0;
bad:
	return problem_at(problem, problem_size,
			  "'%s' is not an address:port (use e.g. 127.0.0.1:9716, [::1]:9716, 0.0.0.0:9716)",
			  value);
}

/* Appends one entry to a list field; the caller has validated it. */
static int list_append(const struct config_key *key, const char *entry, char *base,
		       char *problem, size_t problem_size)
{
	size_t count;

	memcpy(&count, base + key->aux_offset, sizeof(count));
	if (count >= key->max)
		return problem_at(problem, problem_size,
				  "too many entries (allowed: at most %" PRIu64 ")", key->max);
	if (store_bounded_string(key, entry, base + key->offset + count * key->size, problem,
				 problem_size) < 0)
		return -1;
	count++;
	memcpy(base + key->aux_offset, &count, sizeof(count));
	return 0;
}

static bool list_contains(const struct config_key *key, const char *entry, const char *base)
{
	size_t count;

	memcpy(&count, base + key->aux_offset, sizeof(count));
	for (size_t i = 0; i < count; i++) {
		if (strcmp(base + key->offset + i * key->size, entry) == 0)
			return true;
	}
	return false;
}

/* "PROJECT_NAME, EXPERIMENT": tag names, each becoming a Prometheus label. */
/* entry without the spaces around it (cut in place). */
static char *trimmed(char *entry)
{
	char *last;

	while (isspace((unsigned char)*entry))
		entry++;
	last = entry + strlen(entry);
	while (last > entry && isspace((unsigned char)last[-1]))
		*--last = '\0';
	return entry;
}

/* Checks one entry of a comma-separated list; 0, or -1 with a problem. */
typedef int (*list_entry_check)(const char *entry, char *problem, size_t problem_size);

/* A comma-separated list, each entry trimmed, checked and listed once. */
static int parse_comma_list(const struct config_key *key, const char *value, char *base,
			    list_entry_check check, char *problem, size_t problem_size)
{
	char *copy = strdup(value);
	char *cursor = copy, *entry;
	int result = 0;

	if (!copy)
		return problem_at(problem, problem_size, "out of memory");
	while (result == 0 && (entry = strsep(&cursor, ",")) != NULL) {
		entry = trimmed(entry);
		if (entry[0] == '\0' && cursor == NULL && entry == copy)
			break; /* an empty value: an empty list */
		if (check(entry, problem, problem_size) != 0)
			result = -1;
		else if (list_contains(key, entry, base))
			result = problem_at(problem, problem_size, "'%s' is listed twice", entry);
		else
			result = list_append(key, entry, base, problem, problem_size);
	}
	free(copy);
	return result;
}

static int check_tag_name(const char *entry, char *problem, size_t problem_size)
{
	if (vnfs_tag_name_valid(entry))
		return 0;
	return problem_at(problem, problem_size,
			  "'%s' is not a tag name (allowed: letters, digits and '_', not starting with a digit, at most %d characters)",
			  entry, VNFS_TAG_NAME_MAX);
}

/* A job variable: "NAME" or "NAME:PART" (lib/environment.h). */
static int check_job_variable(const char *entry, char *problem, size_t problem_size)
{
	struct vnfs_environment_job_variable variable;

	return vnfs_environment_job_variable_parse(entry, &variable, problem, problem_size);
}

/* A tag variable: a variable's name, which is also the tag's. */
static int check_tag_variable(const char *entry, char *problem, size_t problem_size)
{
	if (strchr(entry, ':') != NULL)
		return problem_at(problem, problem_size, "a tag variable has no part (NAME only)");
	return check_job_variable(entry, problem, problem_size);
}

static int parse_tag_list(const struct config_key *key, const char *name, const char *value,
			  char *base, char *problem, size_t problem_size)
{
	(void)name;
	return parse_comma_list(key, value, base, check_tag_name, problem, problem_size);
}

/* [environment]'s lists of variables' names. */
static int parse_variable_list(const struct config_key *key, const char *name, const char *value,
			       char *base, char *problem, size_t problem_size)
{
	bool jobs = strcmp(key->name, "job_variables") == 0;

	(void)name;
	return parse_comma_list(key, value, base, jobs ? check_job_variable : check_tag_variable,
				problem, problem_size);
}

/* "Name: value", one header per line; Name is an HTTP token. */
static int parse_header_list(const struct config_key *key, const char *name, const char *value,
			     char *base, char *problem, size_t problem_size)
{
	static const char token_symbols[] = "!#$%&'*+-.^_`|~";
	size_t name_length = 0;

	(void)name;
	if (value[0] == '\0')
		return 0; /* "header =" as in etc/vnfs.conf: no header */
	while (isalnum((unsigned char)value[name_length]) ||
	       (value[name_length] && strchr(token_symbols, value[name_length])))
		name_length++;
	bool valid = name_length > 0 && value[name_length] == ':';
	for (const char *c = value; *c; c++) {
		if (iscntrl((unsigned char)*c))
			valid = false;
	}
	if (!valid)
		return problem_at(problem, problem_size,
				  "'%s' is not a header (use e.g. Authorization: Bearer TOKEN)", value);
	return list_append(key, value, base, problem, problem_size);
}

/* crypt(3)'s base64 alphabet: what follows the prefix of a hash. */
static bool crypt_base64(const char *text, size_t length)
{
	static const char alphabet[] = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				       "abcdefghijklmnopqrstuvwxyz";

	for (size_t i = 0; i < length; i++) {
		if (!text[i] || !strchr(alphabet, text[i]))
			return false;
	}
	return true;
}

/*
 * The shape of the hashes exporters take: bcrypt "$2b$NN$" (or $2y$, $2a$,
 * as htpasswd writes) with a cost 04-31 and 53 characters of salt and hash,
 * or yescrypt "$y$PARAMS$SALT$HASH" (mkpasswd's default).  The helper
 * checks with libxcrypt at start that it can compute the hash.
 */
static bool crypt_hash_valid(const char *hash)
{
	size_t length = strlen(hash);

	if (length == 60 && hash[0] == '$' && hash[1] == '2' && strchr("aby", hash[2]) &&
	    hash[2] != '\0' && hash[3] == '$' && isdigit((unsigned char)hash[4]) &&
	    isdigit((unsigned char)hash[5]) && hash[6] == '$') {
		int cost = (hash[4] - '0') * 10 + (hash[5] - '0');
		return cost >= 4 && cost <= 31 && crypt_base64(hash + 7, 53);
	}
	if (strncmp(hash, "$y$", 3) != 0)
		return false;
	/* Three non-empty fields after "$y$": parameters, salt, hash. */
	const char *field = hash + 3;
	for (int i = 0; i < 3; i++) {
		size_t field_length = strcspn(field, "$");
		if (field_length == 0 || !crypt_base64(field, field_length) ||
		    (i < 2) != (field[field_length] == '$'))
			return false;
		field += field_length + (i < 2);
	}
	return true;
}

/* Is a user of this name (the part before ':') already listed? */
static bool basic_auth_user_listed(const struct config_key *key, const char *entry,
				   size_t name_length, const char *base)
{
	size_t count;

	memcpy(&count, base + key->aux_offset, sizeof(count));
	for (size_t i = 0; i < count; i++) {
		const char *listed = base + key->offset + i * key->size;
		if (strncmp(listed, entry, name_length) == 0 && listed[name_length] == ':')
			return true;
	}
	return false;
}

static int add_basic_auth_user(const struct config_key *key, const char *entry, char *base,
			       char *problem, size_t problem_size)
{
	size_t name_length = strspn(entry, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					   "0123456789._@-");

	if (name_length == 0 || name_length > 64 || entry[name_length] != ':')
		return problem_at(problem, problem_size,
				  "'%.80s' is not NAME:HASH (NAME: 1 to 64 letters, digits, '.', '_', '@', '-')",
				  entry);
	/* The hash is not secret, but no use in a log either: only the name is shown. */
	if (!crypt_hash_valid(entry + name_length + 1))
		return problem_at(problem, problem_size,
				  "user '%.*s': the hash is not bcrypt ($2b$, $2y$) or yescrypt ($y$) "
				  "in crypt(3) form (make one with htpasswd -nBC 10 %.*s)",
				  (int)name_length, entry, (int)name_length, entry);
	if (basic_auth_user_listed(key, entry, name_length, base))
		return problem_at(problem, problem_size, "user '%.*s' is listed twice",
				  (int)name_length, entry);
	return list_append(key, entry, base, problem, problem_size);
}

/* "alice:$2b$10$..., bob:$y$j9T$...": users, separated by commas or spaces;
 * the key may also be repeated, one user per line. */
static int parse_basic_auth_list(const struct config_key *key, const char *name,
				 const char *value, char *base, char *problem, size_t problem_size)
{
	char *copy = strdup(value);
	char *cursor = copy, *entry;
	int result = 0;

	(void)name;
	if (!copy)
		return problem_at(problem, problem_size, "out of memory");
	while (result == 0 && (entry = strsep(&cursor, ", \t")) != NULL) {
		if (entry[0] != '\0')
			result = add_basic_auth_user(key, entry, base, problem, problem_size);
	}
	free(copy);
	return result;
}

/* The entry of property.NAME's NAME, or the count when NAME is not set yet. */
static size_t property_index(const struct config_key *key, const char *property,
			     const char *base)
{
	const struct vnfs_key_value *entries = (const struct vnfs_key_value *)(base + key->offset);
	size_t count, entry;

	memcpy(&count, base + key->aux_offset, sizeof(count));
	for (entry = 0; entry < count; entry++) {
		if (strcmp(entries[entry].key, property) == 0)
			break;
	}
	return entry;
}

/* property.NAME = VALUE, handed to librdkafka unchanged.  The loader refuses a
 * NAME given twice before it gets here, so every NAME is a new entry. */
static int parse_property(const struct config_key *key, const char *name, const char *value,
			  char *base, char *problem, size_t problem_size)
{
	const char *property = name + strlen(key->name);
	struct vnfs_key_value *entries = (struct vnfs_key_value *)(base + key->offset);
	size_t count;

	if (property[0] == '\0' || strspn(property, "abcdefghijklmnopqrstuvwxyz"
						  "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
					   strlen(property))
		return problem_at(problem, problem_size,
				  "'%s' is not a property name (use e.g. property.compression.codec)",
				  name);
	if (strlen(property) >= sizeof(entries[0].key))
		return problem_at(problem, problem_size,
				  "name of %zu characters is too long (allowed: at most %zu)",
				  strlen(property), sizeof(entries[0].key) - 1);
	if (strlen(value) >= sizeof(entries[0].value))
		return problem_at(problem, problem_size,
				  "value of %zu characters is too long (allowed: at most %zu)",
				  strlen(value), sizeof(entries[0].value) - 1);
	memcpy(&count, base + key->aux_offset, sizeof(count));
	if (count >= key->max)
		return problem_at(problem, problem_size,
				  "too many properties (allowed: at most %" PRIu64 ")", key->max);
	snprintf(entries[count].key, sizeof(entries[count].key), "%s", property);
	snprintf(entries[count].value, sizeof(entries[count].value), "%s", value);
	count++;
	memcpy(base + key->aux_offset, &count, sizeof(count));
	return 0;
}

/* Lookup ------------------------------------------------------------------- */

/* name: length bytes, not necessarily NUL-terminated (a header's, in its line). */
static const struct config_section *find_section_span(const char *name, size_t length)
{
	for (size_t i = 0; i < SECTION_COUNT; i++) {
		if (strlen(config_sections[i].name) == length &&
		    memcmp(config_sections[i].name, name, length) == 0)
			return &config_sections[i];
	}
	return NULL;
}

static const struct config_section *find_section(const char *name)
{
	return find_section_span(name, strlen(name));
}

static const struct config_key *find_key(const char *section, const char *name)
{
	for (size_t i = 0; i < KEY_COUNT; i++) {
		const struct config_key *key = &config_keys[i];

		if (strcmp(key->section, section) != 0)
			continue;
		if (key_is_prefix(key) ? strncmp(name, key->name, strlen(key->name)) == 0
				       : strcmp(name, key->name) == 0)
			return key;
	}
	return NULL;
}

static void list_sections(char *out, size_t size)
{
	size_t used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < SECTION_COUNT && used < size; i++)
		used += (size_t)snprintf(out + used, size - used, "%s%s", i ? ", " : "",
					 config_sections[i].name);
}

static void list_keys(const char *section, char *out, size_t size)
{
	size_t used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < KEY_COUNT && used < size; i++) {
		const struct config_key *key = &config_keys[i];

		if (strcmp(key->section, section) != 0)
			continue;
		used += (size_t)snprintf(out + used, size - used, "%s%s%s", used ? ", " : "",
					 key->name, key_is_prefix(key) ? "NAME" : "");
	}
}

/* Defaults ----------------------------------------------------------------- */

void vnfs_config_defaults(struct vnfs_config *config)
{
	char problem[256];

	memset(config, 0, sizeof(*config));
	for (size_t i = 0; i < KEY_COUNT; i++) {
		const struct config_key *key = &config_keys[i];

		if (!key->default_text || key_is_prefix(key))
			continue;
		if (key->parse(key, key->name, key->default_text, (char *)config, problem,
			       sizeof(problem)) < 0) {
			/* A broken built-in table is a bug the unit test catches. */
			fprintf(stderr, "vnfs: built-in default [%s] %s: %s\n", key->section,
				key->name, problem);
			abort();
		}
	}
}

/* Loading ------------------------------------------------------------------ */

struct load_state {
	struct vnfs_config *config;
	const char *path;
	FILE *file;
	char *line;                 /* getline() buffer */
	size_t line_capacity;
	unsigned line_number;       /* of the line inih is working on */
	unsigned error_line;        /* first error we found; 0 = none */
	char error[1024];
	unsigned key_line[KEY_COUNT]; /* where each key was last set; 0 = default */
	unsigned property_line[VNFS_CONFIG_MAX_PROPERTIES]; /* of each property.NAME */
	unsigned section_line[SECTION_COUNT]; /* of each section's header; 0 = none */
	bool key_since_header;      /* inih's prev_name is set: an indented line continues it */
};

static void record_error(struct load_state *state, const char *format, ...)
	__attribute__((format(printf, 2, 3)));

/* Keeps the first error only: later ones are often consequences of it. */
static void record_error(struct load_state *state, const char *format, ...)
{
	va_list arguments;

	if (state->error_line != 0)
		return;
	state->error_line = state->line_number ? state->line_number : 1;
	va_start(arguments, format);
	vsnprintf(state->error, sizeof(state->error), format, arguments);
	va_end(arguments);
}

/* Where inih's find_chars_or_comment() stops: at stop, or at a ';' after a blank. */
static size_t span_before_comment(const char *text, char stop)
{
	bool after_blank = false;
	size_t length = 0;

	for (; text[length] && text[length] != stop && !(after_blank && text[length] == ';');
	     length++)
		after_blank = isspace((unsigned char)text[length]);
	return length;
}

/*
 * The name of the section a line opens, by inih's rule, or NULL.  inih tells
 * its handler only of keys (Debian's libinih is built without
 * INI_CALL_HANDLER_ON_NEW_SECTION), so a repeated header is seen only here:
 * '[' first after blanks (and, on line 1, a UTF-8 BOM) and ']' before an
 * inline comment, unless the line is indented after a key, which inih reads
 * as that key's continuation.
 */
static const char *header_name(const struct load_state *state, const char *line,
			       size_t *length)
{
	const char *start = line;

	if (state->line_number == 1 && strncmp(start, "\xEF\xBB\xBF", 3) == 0)
		start += 3;
	while (isspace((unsigned char)*start))
		start++;
	if (*start != '[' || (start > line && state->key_since_header))
		return NULL;
	*length = span_before_comment(start + 1, ']');
	return start[1 + *length] == ']' ? start + 1 : NULL;
}

/* A known section's second header is an error: its keys belong in one place.
 * An unknown section is left to its first key, which names it as unknown. */
static void check_section_header(struct load_state *state, const char *line)
{
	size_t length;
	const char *name = header_name(state, line, &length);

	if (!name)
		return;
	state->key_since_header = false;
	const struct config_section *section = find_section_span(name, length);
	if (!section)
		return;
	unsigned *first = &state->section_line[section - config_sections];
	if (*first != 0) {
		record_error(state, "%s:%u: [%s]: section given twice (first at line %u); put its "
			     "keys in one section", state->path, state->line_number, section->name,
			     *first);
		return;
	}
	*first = state->line_number;
}

/*
 * inih's reader: reads whole lines so that one longer than inih's fixed buffer
 * is reported as such, instead of being split into pieces inih would parse as
 * separate (and misleading) lines.  It also tells the handler its line number.
 */
static char *read_line(char *buffer, int buffer_size, void *stream)
{
	struct load_state *state = stream;

	errno = 0;
	ssize_t length = getline(&state->line, &state->line_capacity, state->file);
	if (length < 0) {
		if (ferror(state->file)) {
			state->line_number++;
			record_error(state, "%s: cannot read: %s", state->path,
				     strerror(errno ? errno : EIO));
		}
		return NULL;
	}
	state->line_number++;
	/* inih needs room for "\r\n\0" after the longest line. */
	size_t content = (size_t)length;
	while (content > 0 && (state->line[content - 1] == '\n' || state->line[content - 1] == '\r'))
		content--;
	if (buffer_size < 3 || content > (size_t)buffer_size - 3 ||
	    (size_t)length > (size_t)buffer_size - 1) {
		record_error(state, "%s:%u: line is longer than %d characters", state->path,
			     state->line_number, buffer_size - 3);
		return NULL;
	}
	check_section_header(state, state->line);
	memcpy(buffer, state->line, (size_t)length + 1);
	return buffer;
}

/* The line where this key was given before, or 0; per NAME for property.NAME. */
static unsigned earlier_line(const struct load_state *state, const struct config_key *key,
			     const char *name)
{
	const char *base = (const char *)state->config;
	size_t count;

	if (!key_is_prefix(key))
		return state->key_line[key - config_keys];
	memcpy(&count, base + key->aux_offset, sizeof(count));
	size_t entry = property_index(key, name + strlen(key->name), base);
	return entry < count ? state->property_line[entry] : 0;
}

/* After a key was parsed: where it was given, for earlier_line() and messages. */
static void note_key_line(struct load_state *state, const struct config_key *key, unsigned line)
{
	size_t count;

	state->key_line[key - config_keys] = line;
	if (!key_is_prefix(key))
		return;
	/* parse_property() appended NAME as the last entry. */
	memcpy(&count, (const char *)state->config + key->aux_offset, sizeof(count));
	if (count > 0 && count <= VNFS_CONFIG_MAX_PROPERTIES)
		state->property_line[count - 1] = line;
}

/* A key given a second time; inih also hands an indented line on as the
 * continuation of the key above it, which is then given twice too. */
static void record_repeated_key(struct load_state *state, const char *section,
				const char *name, unsigned earlier)
{
	bool indented = isspace((unsigned char)state->line[0]);

	record_error(state, "%s:%u: [%s] %s: given twice (first at line %u)%s", state->path,
		     state->line_number, section, name, earlier,
		     indented ? "; an indented line continues the key above it" : "");
}

static int handle_key(void *user, const char *section, const char *name, const char *value)
{
	struct load_state *state = user;
	char problem[512], choices[512]; /* [helper]'s keys: 260 characters */

	if (!name)
		return 1; /* a section header, from an inih built to report them */
	/* inih keeps the name as prev_name; an empty one continues nothing. */
	state->key_since_header = name[0] != '\0';
	if (state->error_line)
		return 0; /* only the first error is reported */
	const char *path = state->path;
	unsigned line = state->line_number;

	if (section[0] == '\0') {
		list_sections(choices, sizeof(choices));
		record_error(state, "%s:%u: %s: key outside a section (sections: %s)", path, line,
			     name, choices);
		return 0;
	}
	const struct config_section *known = find_section(section);
	if (!known) {
		list_sections(choices, sizeof(choices));
		record_error(state, "%s:%u: [%s] %s: unknown section (sections: %s)", path, line,
			     section, name, choices);
		return 0;
	}
	const struct config_key *key = find_key(section, name);
	if (!key) {
		list_keys(section, choices, sizeof(choices));
		record_error(state, "%s:%u: [%s] %s: unknown key (keys in [%s]: %s)", path, line,
			     section, name, section, choices);
		return 0;
	}
	unsigned earlier = earlier_line(state, key, name);
	if (earlier != 0 && !key->repeats) {
		record_repeated_key(state, section, name, earlier);
		return 0;
	}
	if (key->list && earlier == 0) {
		/* The file's first line of a list replaces the default's entries
		 * (job_variables has some); a key that repeats adds on later lines. */
		size_t none = 0;

		memcpy((char *)state->config + key->aux_offset, &none, sizeof(none));
	}
	if (key->parse(key, name, value, (char *)state->config, problem, sizeof(problem)) < 0) {
		record_error(state, "%s:%u: [%s] %s: %s", path, line, section, name, problem);
		return 0;
	}
	if (!known->built && strcmp(key->name, "enabled") == 0 &&
	    *(bool *)((char *)state->config + key->offset)) {
		record_error(state, "%s:%u: [%s] %s: %s", path, line, section, name,
			     known->configure_hint);
		return 0;
	}
	note_key_line(state, key, line);
	return 1;
}

/* A section that is enabled but misses what it cannot work without. */
static void check_required_keys(struct load_state *state)
{
	const char *base = (const char *)state->config;

	for (size_t i = 0; i < KEY_COUNT; i++) {
		const struct config_key *required = &config_keys[i];

		if (!required->required_when || base[required->offset] != '\0')
			continue;
		const struct config_key *enabled = find_key(required->section,
							  required->required_when);
		if (!enabled || !*(const bool *)(base + enabled->offset))
			continue;
		unsigned line = state->key_line[enabled - config_keys];
		state->line_number = line;
		record_error(state, "%s:%u: [%s] %s: %s is enabled but %s is not set (use e.g. %s)",
			     state->path, line, required->section, enabled->name, required->section,
			     required->name, required->example);
		return;
	}
}

/*
 * [prometheus] TLS takes both files or neither.  Their lines are kept in the
 * config, so the helper can name them when it cannot read a file at start.
 */
static void check_prometheus_tls(struct load_state *state)
{
	struct vnfs_config *config = state->config;
	const struct config_key *cert = find_key("prometheus", "tls_cert_file");
	const struct config_key *key = find_key("prometheus", "tls_key_file");
	bool has_cert = config->prometheus.tls_cert_file[0] != '\0';
	bool has_key = config->prometheus.tls_key_file[0] != '\0';

	/* "tls_cert_file =" (no TLS) leaves the line 0, as the defaults have it. */
	config->prometheus.tls_cert_file_line = has_cert ? state->key_line[cert - config_keys] : 0;
	config->prometheus.tls_key_file_line = has_key ? state->key_line[key - config_keys] : 0;
	if (has_cert == has_key)
		return;
	const struct config_key *given = has_cert ? cert : key;
	const struct config_key *missing = has_cert ? key : cert;
	state->line_number = state->key_line[given - config_keys];
	record_error(state, "%s:%u: [prometheus] %s: TLS needs %s as well (or neither)",
		     state->path, state->line_number, given->name, missing->name);
}

/* Reads the file's line NUMBER again into state->line; its text trimmed, or NULL. */
static const char *reread_line(struct load_state *state, unsigned number)
{
	ssize_t length = -1;

	rewind(state->file);
	for (unsigned i = 0; i < number; i++) {
		length = getline(&state->line, &state->line_capacity, state->file);
		if (length < 0)
			return NULL;
	}
	while (length > 0 && isspace((unsigned char)state->line[length - 1]))
		state->line[--length] = '\0';
	const char *start = state->line;
	if (number == 1 && strncmp(start, "\xEF\xBB\xBF", 3) == 0)
		start += 3;
	while (isspace((unsigned char)*start))
		start++;
	return start;
}

/*
 * inih refuses two kinds of line: a '[' without its ']' (before an inline
 * comment), and any other that has no '=' or ':'.  It says only which line,
 * so the line is read again to quote it and say which.
 */
static void explain_syntax_error(struct load_state *state, unsigned number, char *error,
				 size_t error_size)
{
	const char *line = reread_line(state, number);

	if (!line)
		snprintf(error, error_size, "%s:%u: syntax error (the line cannot be read again)",
			 state->path, number);
	else if (line[0] == '[')
		snprintf(error, error_size, "%s:%u: '%s': a section header needs its closing ']'",
			 state->path, number, line);
	else
		snprintf(error, error_size, "%s:%u: '%s': not a key = value line", state->path,
			 number, line);
}

/* inih's result and the errors the handler recorded, as one message. */
static int finish_parse(struct load_state *state, int result, char *error, size_t error_size)
{
	if (result == -2) {
		snprintf(error, error_size, "%s: out of memory", state->path);
		return -1;
	}
	/* inih reports the first line it rejected: ours, or one it could not parse. */
	if (result > 0 && (state->error_line == 0 || (unsigned)result < state->error_line)) {
		explain_syntax_error(state, (unsigned)result, error, error_size);
		return -1;
	}
	if (state->error_line == 0)
		check_required_keys(state);
	if (state->error_line == 0)
		check_prometheus_tls(state);
	if (state->error_line != 0) {
		snprintf(error, error_size, "%s", state->error);
		return -1;
	}
	return 0;
}

static int parse_file(struct load_state *state, char *error, size_t error_size)
{
	int result = ini_parse_stream(read_line, state, handle_key, state);
	int status = finish_parse(state, result, error, error_size);

	free(state->line);
	state->line = NULL;
	return status;
}

int vnfs_config_load(struct vnfs_config *config, const char *path, bool missing_ok,
		     char *error, size_t error_size)
{
	struct load_state *state;
	int result;

	if (strlen(path) >= sizeof(config->source_path)) {
		snprintf(error, error_size, "%s: path is too long (at most %zu characters)", path,
			 sizeof(config->source_path) - 1);
		return -1;
	}
	state = calloc(1, sizeof(*state));
	if (!state || !(state->config = malloc(sizeof(*state->config)))) {
		free(state);
		snprintf(error, error_size, "%s: out of memory", path);
		return -1;
	}
	vnfs_config_defaults(state->config);
	state->path = path;
	state->file = fopen(path, "re");
	if (!state->file && errno == ENOENT && missing_ok) {
		result = 0;
	} else if (!state->file) {
		snprintf(error, error_size, "%s: cannot open: %s", path, strerror(errno));
		result = -1;
	} else {
		snprintf(state->config->source_path, sizeof(state->config->source_path), "%s",
			 path);
		result = parse_file(state, error, error_size);
		fclose(state->file);
	}
	/* On error *config is left as it was: a reload keeps the running setup. */
	if (result == 0)
		memcpy(config, state->config, sizeof(*config));
	free(state->config);
	free(state);
	return result;
}
