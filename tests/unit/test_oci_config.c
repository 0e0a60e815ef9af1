/*
 * test_oci_config.c — a container's identity from its OCI config.json
 * (lib/containers/oci_config.c): the exact fields of containerd's and
 * CRI-O's real files, the rules between the two annotation families,
 * hostile documents, and the safe read of the file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/containers/oci_config.h"
#include "lib/workload.h"
#include "tests/unit/oci_config_fixtures.h"

#define STATIC_UID "5d1b7e7c0a8f0e8d3c1b3e8a6b5f5d0e"

static const char *const wanted[] = {"JOB_ID", "PROJECT", "LSB_JOBID", "HOSTNAME", "JOB_ID"};
#define WANTED_COUNT (sizeof(wanted) / sizeof(wanted[0]))

/* The config is large (the cgroups path alone is 4 KiB): one per test. */
static struct vnfs_oci_config config;
static char error[512];

static int parse(const char *text, enum vnfs_oci_annotations family)
{
	error[0] = '\0';
	memset(&config, 0x5a, sizeof(config)); /* every field must be set */
	return vnfs_oci_config_parse(text, strlen(text), family, wanted, WANTED_COUNT, &config,
				     error, sizeof(error));
}

static void assert_env(size_t index, enum vnfs_oci_env_status status, const char *value)
{
	assert_int_equal(config.env[index].status, status);
	assert_string_equal(config.env[index].value, value);
}

static void assert_not_kubernetes(void)
{
	assert_false(config.kubernetes);
	assert_string_equal(config.namespace, "");
	assert_string_equal(config.pod_name, "");
	assert_string_equal(config.pod_uid, "");
	assert_string_equal(config.container_name, "");
	assert_int_equal(config.container_type, VNFS_CONTAINER_TYPE_NONE);
}

/* A refused config: the message, and nothing left in *config. */
static void assert_refused(const char *text, enum vnfs_oci_annotations family,
			   const char *message)
{
	assert_int_equal(parse(text, family), -1);
	assert_string_equal(error, message);
	assert_not_kubernetes();
	assert_string_equal(config.cgroups_path, "");
	assert_int_equal(config.env_count, 0);
}

static void assert_workload(const char *job, const char *part)
{
	char job_text[VNFS_WORKLOAD_JOB_MAX], part_text[VNFS_WORKLOAD_PART_MAX];

	assert_int_equal(vnfs_oci_workload_text(&config, job_text, sizeof(job_text), part_text,
						sizeof(part_text), error, sizeof(error)),
			 0);
	assert_string_equal(job_text, job);
	assert_string_equal(part_text, part);
}

static void test_containerd_container(void **state)
{
	(void)state;
	assert_int_equal(parse(containerd_container, VNFS_OCI_ANNOTATIONS_CONTAINERD), 0);
	assert_true(config.kubernetes);
	assert_string_equal(config.namespace, "analysis");
	assert_string_equal(config.pod_name, "writer-7d9c5b8f4-x2kqz");
	assert_string_equal(config.pod_uid, FIXTURE_POD_UID);
	assert_string_equal(config.container_name, "writer");
	assert_int_equal(config.container_type, VNFS_CONTAINER_TYPE_CONTAINER);
	assert_string_equal(config.cgroups_path,
			    "kubepods-besteffort-pod1c4b9f0e_5a3d_4b8e_9f1a_2b3c4d5e6f70.slice:"
			    "cri-containerd:" FIXTURE_CONTAINER_ID);
	assert_int_equal(config.env_count, WANTED_COUNT);
	assert_env(0, VNFS_OCI_ENV_SET, "run-17"); /* the first JOB_ID, as getenv sees */
	assert_env(1, VNFS_OCI_ENV_SET, "climate");
	assert_env(2, VNFS_OCI_ENV_UNSET, "");
	assert_env(3, VNFS_OCI_ENV_SET, "writer-7d9c5b8f4-x2kqz");
	assert_env(4, VNFS_OCI_ENV_SET, "run-17"); /* asked twice, the same first value */
	assert_workload("analysis/writer-7d9c5b8f4-x2kqz", "writer");

	/* EITHER finds the same; CRI-O's keys are not there. */
	assert_int_equal(parse(containerd_container, VNFS_OCI_ANNOTATIONS_EITHER), 0);
	assert_string_equal(config.container_name, "writer");
	assert_int_equal(parse(containerd_container, VNFS_OCI_ANNOTATIONS_CRIO), 0);
	assert_not_kubernetes();
	assert_string_equal(config.cgroups_path,
			    "kubepods-besteffort-pod1c4b9f0e_5a3d_4b8e_9f1a_2b3c4d5e6f70.slice:"
			    "cri-containerd:" FIXTURE_CONTAINER_ID);
	assert_env(0, VNFS_OCI_ENV_SET, "run-17");
}

static void test_containerd_sandbox(void **state)
{
	(void)state;
	assert_int_equal(parse(containerd_sandbox, VNFS_OCI_ANNOTATIONS_CONTAINERD), 0);
	assert_true(config.kubernetes);
	assert_string_equal(config.namespace, "analysis");
	assert_string_equal(config.pod_name, "writer-7d9c5b8f4-x2kqz");
	assert_string_equal(config.pod_uid, FIXTURE_POD_UID);
	assert_string_equal(config.container_name, "");
	assert_int_equal(config.container_type, VNFS_CONTAINER_TYPE_SANDBOX);
	assert_string_equal(config.cgroups_path,
			    "kubepods-besteffort-pod1c4b9f0e_5a3d_4b8e_9f1a_2b3c4d5e6f70.slice:"
			    "cri-containerd:" FIXTURE_SANDBOX_ID);
	assert_env(0, VNFS_OCI_ENV_UNSET, "");
	assert_workload("analysis/writer-7d9c5b8f4-x2kqz", "");
}

static void test_crio_container(void **state)
{
	(void)state;
	assert_int_equal(parse(crio_container, VNFS_OCI_ANNOTATIONS_CRIO), 0);
	assert_true(config.kubernetes);
	assert_string_equal(config.namespace, "kube-system");
	assert_string_equal(config.pod_name, "indexer-0");
	assert_string_equal(config.pod_uid, STATIC_UID);
	assert_string_equal(config.container_name, "indexer");
	assert_int_equal(config.container_type, VNFS_CONTAINER_TYPE_CONTAINER);
	assert_string_equal(config.cgroups_path,
			    "/kubepods/burstable/pod" STATIC_UID "/crio-" FIXTURE_CONTAINER_ID);
	assert_env(0, VNFS_OCI_ENV_UNSET, "");
	assert_env(1, VNFS_OCI_ENV_UNSET, "");
	assert_env(2, VNFS_OCI_ENV_SET, ""); /* set, and empty */
	assert_env(3, VNFS_OCI_ENV_SET, "indexer-0");
	assert_workload("kube-system/indexer-0", "indexer");

	assert_int_equal(parse(crio_container, VNFS_OCI_ANNOTATIONS_EITHER), 0);
	assert_string_equal(config.pod_name, "indexer-0");
	assert_int_equal(parse(crio_container, VNFS_OCI_ANNOTATIONS_CONTAINERD), 0);
	assert_not_kubernetes();
}

/* The two sources agree: CRI-O's cgroupfs cgroupsPath is the container's
 * cgroup, and says the same pod uid as the annotations. */
static void test_cgroups_path_agrees(void **state)
{
	struct vnfs_container_cgroup cgroup;

	(void)state;
	assert_int_equal(parse(crio_container, VNFS_OCI_ANNOTATIONS_CRIO), 0);
	assert_int_equal(vnfs_container_cgroup_parse(config.cgroups_path, &cgroup),
			 VNFS_CGROUP_CONTAINER);
	assert_int_equal(cgroup.runtime, VNFS_RUNTIME_CRIO);
	assert_true(cgroup.kubernetes);
	assert_int_equal(cgroup.qos, VNFS_QOS_BURSTABLE);
	assert_string_equal(cgroup.pod_uid, config.pod_uid);
	assert_string_equal(cgroup.container_id, FIXTURE_CONTAINER_ID);
}

static void test_crio_sandbox(void **state)
{
	(void)state;
	assert_int_equal(parse(crio_sandbox, VNFS_OCI_ANNOTATIONS_CRIO), 0);
	assert_true(config.kubernetes);
	assert_string_equal(config.namespace, "kube-system");
	assert_string_equal(config.pod_name, "indexer-0");
	assert_string_equal(config.container_name, ""); /* "POD" is not read */
	assert_int_equal(config.container_type, VNFS_CONTAINER_TYPE_SANDBOX);
	assert_int_equal(config.env_count, WANTED_COUNT);
	assert_env(3, VNFS_OCI_ENV_UNSET, ""); /* no process.env at all */
	assert_workload("kube-system/indexer-0", "");
}

static void test_plain_runc(void **state)
{
	char job[VNFS_WORKLOAD_JOB_MAX], part[VNFS_WORKLOAD_PART_MAX];

	(void)state;
	assert_int_equal(parse(plain_runc, VNFS_OCI_ANNOTATIONS_EITHER), 0);
	assert_not_kubernetes();
	assert_string_equal(config.cgroups_path,
			    "/kubepods/besteffort/pod" FIXTURE_POD_UID "/" FIXTURE_CONTAINER_ID);
	assert_int_equal(vnfs_oci_workload_text(&config, job, sizeof(job), part, sizeof(part),
						error, sizeof(error)),
			 -1);
	assert_string_equal(error, "not a Kubernetes container");
	assert_int_equal(parse("{}", VNFS_OCI_ANNOTATIONS_EITHER), 0);
	assert_not_kubernetes();
	assert_string_equal(config.cgroups_path, "");
	assert_int_equal(parse("{\"annotations\": {}}", VNFS_OCI_ANNOTATIONS_CONTAINERD), 0);
	assert_not_kubernetes();
}

#define CD_NAMESPACE "\"io.kubernetes.cri.sandbox-namespace\": "
#define CD_NAME "\"io.kubernetes.cri.sandbox-name\": "
#define CD_UID "\"io.kubernetes.cri.sandbox-uid\": "
#define CD_CONTAINER "\"io.kubernetes.cri.container-name\": "
#define CD_TYPE "\"io.kubernetes.cri.container-type\": "
#define CRIO_NAMESPACE "\"io.kubernetes.pod.namespace\": "
#define CRIO_NAME "\"io.kubernetes.pod.name\": "
#define CRIO_CONTAINER "\"io.kubernetes.container.name\": "
#define CRIO_TYPE "\"io.kubernetes.cri-o.ContainerType\": "
#define CD_REST CD_NAME "\"p\", " CD_CONTAINER "\"c\", " CD_TYPE "\"container\""

/* {"annotations": {ANNOTATIONS}} */
static int parse_annotations(const char *annotations, enum vnfs_oci_annotations family)
{
	char text[2048];

	snprintf(text, sizeof(text), "{\"annotations\": {%s}}", annotations);
	return parse(text, family);
}

static void assert_annotations_refused(const char *annotations, const char *message)
{
	char text[2048];

	snprintf(text, sizeof(text), "{\"annotations\": {%s}}", annotations);
	assert_refused(text, VNFS_OCI_ANNOTATIONS_CONTAINERD, message);
}

#define LABEL_RULE "a DNS label (1 to 63 of a-z, 0-9 and '-', alphanumeric at both ends)"
#define SUBDOMAIN_RULE "a DNS subdomain (1 to 253 bytes of DNS labels joined by '.')"
#define SIXTY_THREE "abcdefghij" "abcdefghij" "abcdefghij" "abcdefghij" "abcdefghij" \
	"abcdefghij" "abc"

static void test_kubernetes_names(void **state)
{
	char pod_name[300], job[VNFS_WORKLOAD_JOB_MAX], annotations[1024];

	(void)state;
	assert_int_equal(parse_annotations(CD_NAMESPACE "\"" SIXTY_THREE "\", " CD_REST,
					   VNFS_OCI_ANNOTATIONS_CONTAINERD),
			 0);
	assert_string_equal(config.namespace, SIXTY_THREE);
	assert_string_equal(config.pod_uid, ""); /* optional */
	assert_annotations_refused(CD_NAMESPACE "\"" SIXTY_THREE "d\", " CD_REST,
				   "config.json: annotation io.kubernetes.cri.sandbox-namespace "
				   "(64 bytes) is not " LABEL_RULE);
	/* Not labels: as JSON, and the bytes they decode to. */
	static const struct {
		const char *json;
		size_t bytes;
	} bad_labels[] = {{"\"\"", 0},        {"\"Analysis\"", 8}, {"\"-a\"", 2},
			  {"\"a-\"", 2},      {"\"a b\"", 3},      {"\"a.b\"", 3},
			  {"\"a_b\"", 3},     {"\"caf\\u00e9\"", 5}, {"\"a\\nb\"", 3},
			  {"\"\\u001b[31m\"", 5}};
	for (size_t i = 0; i < sizeof(bad_labels) / sizeof(bad_labels[0]); i++) {
		char expected[256];

		snprintf(annotations, sizeof(annotations), CD_NAMESPACE "%s, " CD_REST,
			 bad_labels[i].json);
		assert_int_equal(parse_annotations(annotations, VNFS_OCI_ANNOTATIONS_CONTAINERD),
				 -1);
		snprintf(expected, sizeof(expected),
			 "config.json: annotation io.kubernetes.cri.sandbox-namespace (%zu bytes) "
			 "is not " LABEL_RULE,
			 bad_labels[i].bytes);
		assert_string_equal(error, expected);
	}
	/* Pod names: subdomains of 253 bytes at most. */
	memset(pod_name, 'a', 253);
	pod_name[253] = '\0';
	pod_name[100] = '.';
	snprintf(annotations, sizeof(annotations),
		 CD_NAMESPACE "\"ns\", " CD_NAME "\"%s\", " CD_CONTAINER "\"c\", " CD_TYPE
			      "\"container\"",
		 pod_name);
	assert_int_equal(parse_annotations(annotations, VNFS_OCI_ANNOTATIONS_CONTAINERD), 0);
	assert_string_equal(config.pod_name, pod_name);
	snprintf(job, sizeof(job), "ns/%s", pod_name);
	assert_workload(job, "c");
	strcat(pod_name, "a");
	snprintf(annotations, sizeof(annotations),
		 CD_NAMESPACE "\"ns\", " CD_NAME "\"%s\", " CD_CONTAINER "\"c\", " CD_TYPE
			      "\"container\"",
		 pod_name);
	assert_annotations_refused(annotations, "config.json: annotation "
						"io.kubernetes.cri.sandbox-name (254 bytes) is "
						"not " SUBDOMAIN_RULE);
	static const char *const bad_subdomains[] = {"\"a..b\"", "\".a\"", "\"a.\"", "\"a.-b\"",
						     "\"a/b\"", "\"A\""};
	for (size_t i = 0; i < sizeof(bad_subdomains) / sizeof(bad_subdomains[0]); i++) {
		snprintf(annotations, sizeof(annotations),
			 CD_NAMESPACE "\"ns\", " CD_NAME "%s, " CD_CONTAINER "\"c\", " CD_TYPE
				      "\"container\"",
			 bad_subdomains[i]);
		assert_int_equal(parse_annotations(annotations, VNFS_OCI_ANNOTATIONS_CONTAINERD),
				 -1);
	}
	assert_int_equal(parse_annotations(CD_NAMESPACE "\"ns\", " CD_NAME "\"web.v2-1.x\", "
					   CD_CONTAINER "\"c\", " CD_TYPE "\"container\"",
					   VNFS_OCI_ANNOTATIONS_CONTAINERD),
			 0);
	assert_string_equal(config.pod_name, "web.v2-1.x");
	/* Container names are labels too; uids are as the cgroup parser has them. */
	assert_annotations_refused(CD_NAMESPACE "\"ns\", " CD_NAME "\"p\", " CD_CONTAINER
				   "\"POD\", " CD_TYPE "\"container\"",
				   "config.json: annotation io.kubernetes.cri.container-name (3 "
				   "bytes) is not " LABEL_RULE);
	assert_annotations_refused(CD_NAMESPACE "\"ns\", " CD_UID
				   "\"1C4B9F0E-5A3D-4B8E-9F1A-2B3C4D5E6F70\", " CD_REST,
				   "config.json: annotation io.kubernetes.cri.sandbox-uid (36 bytes) "
				   "is not a pod uid (8-4-4-4-12 or 32 lowercase hex digits)");
	assert_annotations_refused(CD_NAMESPACE "\"ns\", " CD_UID "\"" FIXTURE_POD_UID "0\", " CD_REST,
				   "config.json: annotation io.kubernetes.cri.sandbox-uid (37 bytes) "
				   "is not a pod uid (8-4-4-4-12 or 32 lowercase hex digits)");
}

static void test_missing_fields(void **state)
{
	(void)state;
	assert_annotations_refused(CD_NAMESPACE "\"ns\", " CD_CONTAINER "\"c\", " CD_TYPE
				   "\"container\"",
				   "config.json: annotation io.kubernetes.cri.sandbox-name is "
				   "missing (containerd annotations name a namespace)");
	assert_annotations_refused(CD_NAMESPACE "\"ns\", " CD_NAME "\"p\", " CD_TYPE "\"container\"",
				   "config.json: annotation io.kubernetes.cri.container-name is "
				   "missing (containerd annotations name a namespace)");
	assert_annotations_refused(CD_NAMESPACE "\"ns\", " CD_NAME "\"p\", " CD_CONTAINER "\"c\"",
				   "config.json: annotation io.kubernetes.cri.container-type is "
				   "missing");
	assert_annotations_refused(CD_NAMESPACE "\"ns\", " CD_NAME "\"p\", " CD_CONTAINER "\"c\", "
				   CD_TYPE "\"Container\"",
				   "config.json: annotation io.kubernetes.cri.container-type is "
				   "neither \"sandbox\" nor \"container\"");
	/* A sandbox needs no container name. */
	assert_int_equal(parse_annotations(CD_NAMESPACE "\"ns\", " CD_NAME "\"p\", " CD_TYPE
					   "\"sandbox\"",
					   VNFS_OCI_ANNOTATIONS_CONTAINERD),
			 0);
	assert_int_equal(config.container_type, VNFS_CONTAINER_TYPE_SANDBOX);
	/* No namespace: whatever else is there, not Kubernetes. */
	assert_int_equal(parse_annotations(CD_NAME "\"p\", " CD_CONTAINER "\"Not A Label\", " CD_TYPE
					   "\"junk\"",
					   VNFS_OCI_ANNOTATIONS_CONTAINERD),
			 0);
	assert_not_kubernetes();
}

static void test_families(void **state)
{
	(void)state;
	/* The caller's family only: a user's pass-through annotations of the
	 * other family are not read, even when they would be refused. */
	assert_int_equal(parse_annotations(CD_NAMESPACE "\"ns\", " CD_REST ", " CRIO_NAMESPACE
					   "\"Other Namespace\", " CRIO_NAME "7",
					   VNFS_OCI_ANNOTATIONS_CONTAINERD),
			 0);
	assert_string_equal(config.namespace, "ns");
	assert_string_equal(config.pod_name, "p");
	/* EITHER with both: they must agree on every field. */
	assert_int_equal(parse_annotations(CD_NAMESPACE "\"ns\", " CD_REST ", " CRIO_NAMESPACE
					   "\"ns\", " CRIO_NAME "\"p\", " CRIO_CONTAINER "\"c\", "
					   CRIO_TYPE "\"container\"",
					   VNFS_OCI_ANNOTATIONS_EITHER),
			 0);
	assert_string_equal(config.container_name, "c");
	assert_refused("{\"annotations\": {" CD_NAMESPACE "\"ns\", " CD_REST ", " CRIO_NAMESPACE
		       "\"ns\", " CRIO_NAME "\"other\", " CRIO_CONTAINER "\"c\", " CRIO_TYPE
		       "\"container\"}}",
		       VNFS_OCI_ANNOTATIONS_EITHER,
		       "config.json: the containerd and CRI-O annotations disagree "
		       "(io.kubernetes.cri.sandbox-name, io.kubernetes.pod.name)");
	assert_refused("{\"annotations\": {" CD_NAMESPACE "\"ns\", " CD_REST ", " CRIO_NAMESPACE
		       "\"ns\", " CRIO_NAME "\"p\", " CRIO_CONTAINER "\"c\"}}",
		       VNFS_OCI_ANNOTATIONS_EITHER,
		       "config.json: the containerd and CRI-O annotations disagree "
		       "(io.kubernetes.cri.container-type, io.kubernetes.cri-o.ContainerType)");
	/* EITHER with one family's namespace: the other's stray keys are ignored. */
	assert_int_equal(parse_annotations(CD_NAMESPACE "\"ns\", " CD_REST ", " CRIO_NAME
					   "\"other\"",
					   VNFS_OCI_ANNOTATIONS_EITHER),
			 0);
	assert_string_equal(config.pod_name, "p");
	assert_refused("{}", (enum vnfs_oci_annotations)7, "unknown annotation family 7");
}

static void test_wrong_types(void **state)
{
	(void)state;
	assert_refused("[]", VNFS_OCI_ANNOTATIONS_EITHER,
		       "config.json: the document is not an object");
	assert_refused("\"text\"", VNFS_OCI_ANNOTATIONS_EITHER,
		       "config.json: the document is not an object");
	assert_refused("{\"annotations\": [\"io.kubernetes.cri.sandbox-namespace\"]}",
		       VNFS_OCI_ANNOTATIONS_EITHER, "config.json: annotations is not an object");
	assert_refused("{\"annotations\": {" CD_NAMESPACE "42}}", VNFS_OCI_ANNOTATIONS_CONTAINERD,
		       "config.json: annotations.io.kubernetes.cri.sandbox-namespace is not a "
		       "string");
	assert_refused("{\"annotations\": {" CD_NAMESPACE "null}}",
		       VNFS_OCI_ANNOTATIONS_CONTAINERD,
		       "config.json: annotations.io.kubernetes.cri.sandbox-namespace is not a "
		       "string");
	assert_refused("{\"annotations\": {" CRIO_NAME "{\"a\": 1}}}", VNFS_OCI_ANNOTATIONS_EITHER,
		       "config.json: annotations.io.kubernetes.pod.name is not a string");
	assert_refused("{\"linux\": \"x\"}", VNFS_OCI_ANNOTATIONS_EITHER,
		       "config.json: linux is not an object");
	assert_refused("{\"linux\": {\"cgroupsPath\": [\"/a\"]}}", VNFS_OCI_ANNOTATIONS_EITHER,
		       "config.json: linux.cgroupsPath is not a string");
	assert_refused("{\"process\": []}", VNFS_OCI_ANNOTATIONS_EITHER,
		       "config.json: process is not an object");
	assert_refused("{\"process\": {\"env\": \"JOB_ID=1\"}}", VNFS_OCI_ANNOTATIONS_EITHER,
		       "config.json: process.env is not an array");
	assert_refused("{\"process\": {\"env\": [\"A=1\", 2]}}", VNFS_OCI_ANNOTATIONS_EITHER,
		       "config.json: process.env[1] is not a string");
	/* Types of what is not read do not matter. */
	assert_int_equal(parse("{\"hostname\": 5, \"annotations\": {\"x\": 1}, "
			       "\"process\": {\"args\": 7}}",
			       VNFS_OCI_ANNOTATIONS_EITHER),
			 0);
}

static void test_hostile_text(void **state)
{
	(void)state;
	/* NUL inside a string. */
	assert_refused("{\"annotations\": {" CD_NAMESPACE "\"ns\\u0000x\", " CD_REST "}}",
		       VNFS_OCI_ANNOTATIONS_CONTAINERD,
		       "config.json: annotations.io.kubernetes.cri.sandbox-namespace holds a NUL "
		       "character");
	assert_refused("{\"linux\": {\"cgroupsPath\": \"/a\\u0000/b\"}}",
		       VNFS_OCI_ANNOTATIONS_EITHER,
		       "config.json: linux.cgroupsPath holds a NUL character");
	/* A NUL in a key: json-c would read the key as the runtime's. */
	assert_refused("{\"annotations\": {" CD_NAMESPACE "\"ns\", " CD_REST ", "
		       "\"io.kubernetes.cri.sandbox-namespace\\u0000x\": \"evil\"}}",
		       VNFS_OCI_ANNOTATIONS_CONTAINERD,
		       "config.json: an object key holds \\u0000 (json-c would cut the key there)");
	assert_refused("{\"annotations\": {'io.kubernetes.cri.sandbox-name\\u0000' \n: \"evil\"}}",
		       VNFS_OCI_ANNOTATIONS_CONTAINERD,
		       "config.json: an object key holds \\u0000 (json-c would cut the key there)");
	assert_refused("{\"a\": {\"x\": 1, \"k\\\"\\u0000\": 2}}", VNFS_OCI_ANNOTATIONS_EITHER,
		       "config.json: an object key holds \\u0000 (json-c would cut the key there)");
	/* In a value not read, or spelled with an escaped backslash, it is no NUL
	 * in a key. */
	assert_int_equal(parse("{\"annotations\": {\"user\": \"a\\u0000b\", \"k\\\\u0000\": 1}, "
			       "\"v\": [\"\\u0000\"]}",
			       VNFS_OCI_ANNOTATIONS_EITHER),
			 0);
	/* A raw NUL byte in a key or a value (length covers it). */
	assert_int_equal(vnfs_oci_config_parse("{\"k\0x\": 1}", 10, VNFS_OCI_ANNOTATIONS_EITHER,
					       NULL, 0, &config, error, sizeof(error)),
			 -1);
	assert_int_equal(vnfs_oci_config_parse("{\"a\": \"x\0\"}", 10, VNFS_OCI_ANNOTATIONS_EITHER,
					       NULL, 0, &config, error, sizeof(error)),
			 -1);
	/* Not UTF-8: a Go runtime never writes it. */
	assert_int_equal(parse("{\"annotations\": {" CD_NAMESPACE "\"n\xff\xfe\"}}",
			       VNFS_OCI_ANNOTATIONS_CONTAINERD),
			 -1);
	assert_string_equal(error, "config.json: invalid JSON at byte 58: invalid utf-8 string");
	assert_int_equal(parse("{\"x\": \"\xe2\x82\"}", VNFS_OCI_ANNOTATIONS_EITHER), -1);
	/* json-c checks the sequences' shape only: an overlong '/' passes it,
	 * and is then refused by the rule of the field it is in. */
	assert_refused("{\"annotations\": {" CD_NAMESPACE "\"a\xc0\xaf" "b\", " CD_REST "}}",
		       VNFS_OCI_ANNOTATIONS_CONTAINERD,
		       "config.json: annotation io.kubernetes.cri.sandbox-namespace (4 bytes) is "
		       "not " LABEL_RULE);
	/* Escapes that spell control bytes are valid JSON but no DNS label. */
	assert_refused("{\"linux\": {\"cgroupsPath\": \"/a b\"}}", VNFS_OCI_ANNOTATIONS_EITHER,
		       "config.json: linux.cgroupsPath (4 bytes) is not printable ASCII without "
		       "spaces, shorter than 4096 bytes");
	assert_refused("{\"linux\": {\"cgroupsPath\": \"/a\\u001b[2J\"}}",
		       VNFS_OCI_ANNOTATIONS_EITHER,
		       "config.json: linux.cgroupsPath (6 bytes) is not printable ASCII without "
		       "spaces, shorter than 4096 bytes");
	/* Not JSON, trailing data, truncated, lenient forms the strict tokener refuses. */
	assert_refused("{\"a\": 1} x", VNFS_OCI_ANNOTATIONS_EITHER,
		       "config.json: invalid JSON at byte 9: unexpected character");
	assert_int_equal(parse("{\"a\": 1} \n", VNFS_OCI_ANNOTATIONS_EITHER), 0);
	assert_refused("{\"annotations\": {", VNFS_OCI_ANNOTATIONS_EITHER,
		       "config.json: invalid JSON at byte 17: the document is truncated");
	assert_refused("", VNFS_OCI_ANNOTATIONS_EITHER,
		       "config.json: invalid JSON at byte 0: the document is truncated");
	/* Not pinned: json-c 0.16 takes '...' strings even when strict, later
	 * versions refuse them; no runtime writes them either way. */
	assert_int_equal(parse("{\"a\": 1,}", VNFS_OCI_ANNOTATIONS_EITHER), -1);
}

static void test_depth_and_size(void **state)
{
	size_t depth = 1000, size = VNFS_OCI_CONFIG_SIZE_MAX + 1;
	char *text = malloc(size + 1);

	(void)state;
	assert_non_null(text);
	/* Nested junk: refused at the depth limit, not followed down. */
	memset(text, '[', depth);
	memset(text + depth, ']', depth);
	memcpy(text, "{\"a\":", 5);
	text[2 * depth - 1] = '}';
	text[2 * depth] = '\0';
	assert_int_equal(parse(text, VNFS_OCI_ANNOTATIONS_EITHER), -1);
	assert_string_equal(error, "config.json: invalid JSON at byte 20: nesting too deep");
	/* 16 levels is the limit: 15 below the document still parse. */
	assert_int_equal(parse("{\"a\":[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]}", VNFS_OCI_ANNOTATIONS_EITHER), 0);

	/* One byte over the size limit, however well formed. */
	memset(text, ' ', size);
	text[0] = '{';
	text[size - 1] = '}';
	text[size] = '\0';
	assert_refused(text, VNFS_OCI_ANNOTATIONS_EITHER,
		       "config.json: 1048577 bytes, more than the 1048576 allowed");
	text[size - 2] = '}';
	assert_int_equal(vnfs_oci_config_parse(text, size - 1, VNFS_OCI_ANNOTATIONS_EITHER, NULL, 0,
					       &config, error, sizeof(error)),
			 0);

	/* A cgroups path of 4095 bytes is kept, of 4096 refused. */
	memset(text, 'a', 8192);
	memcpy(text, "{\"linux\": {\"cgroupsPath\": \"/", 28);
	memcpy(text + 28 + 4094, "\"}}", 4);
	assert_int_equal(parse(text, VNFS_OCI_ANNOTATIONS_EITHER), 0);
	assert_int_equal(strlen(config.cgroups_path), 4095);
	memset(text + 28 + 4094, 'a', 3);
	memcpy(text + 28 + 4095, "\"}}", 4);
	assert_refused(text, VNFS_OCI_ANNOTATIONS_EITHER,
		       "config.json: linux.cgroupsPath (4096 bytes) is not printable ASCII "
		       "without spaces, shorter than 4096 bytes");
	free(text);
}

static void test_duplicate_keys(void **state)
{
	(void)state;
	/* The last counts, as json-c keeps it. */
	assert_int_equal(parse_annotations(CD_NAMESPACE "\"first\", " CD_REST ", " CD_NAMESPACE
					   "\"second\"",
					   VNFS_OCI_ANNOTATIONS_CONTAINERD),
			 0);
	assert_string_equal(config.namespace, "second");
	assert_int_equal(parse("{\"annotations\": {" CD_NAMESPACE "\"first\", " CD_REST "}, "
			       "\"annotations\": {}}",
			       VNFS_OCI_ANNOTATIONS_CONTAINERD),
			 0);
	assert_not_kubernetes();
	assert_int_equal(parse("{\"linux\": {\"cgroupsPath\": \"/a\"}, \"linux\": {\"cgroupsPath\": "
			       "\"/b\"}}",
			       VNFS_OCI_ANNOTATIONS_EITHER),
			 0);
	assert_string_equal(config.cgroups_path, "/b");
}

static void test_environment(void **state)
{
	char text[2048], long_value[VNFS_OCI_ENV_VALUE_SIZE + 8];

	(void)state;
	/* The first entry decides, even when refused. */
	memset(long_value, 'v', sizeof(long_value) - 1);
	long_value[sizeof(long_value) - 1] = '\0';
	snprintf(text, sizeof(text),
		 "{\"process\": {\"env\": [\"JOB_ID\", \"JOB_ID_X=1\", \"PROJECT=a\\u0000b\", "
		 "\"PROJECT=later\", \"LSB_JOBID=%s\", \"LSB_JOBID=short\", \"=x\", \"\", "
		 "\"JOB_ID=a=b c\", \"HOSTNAME=%.256s\"]}}",
		 long_value, long_value);
	assert_int_equal(parse(text, VNFS_OCI_ANNOTATIONS_EITHER), 0);
	assert_env(0, VNFS_OCI_ENV_SET, "a=b c"); /* the caller checks it for where it goes */
	assert_env(1, VNFS_OCI_ENV_REFUSED, "");
	assert_env(2, VNFS_OCI_ENV_REFUSED, "");
	assert_int_equal(config.env[3].status, VNFS_OCI_ENV_SET);
	assert_int_equal(strlen(config.env[3].value), 256);
	assert_env(4, VNFS_OCI_ENV_SET, "a=b c");

	/* The names asked for are checked and bounded. */
	static const char *const bad[] = {"JOB_ID", "1X"};
	static const char *many[VNFS_OCI_ENV_WANTED_MAX + 1];

	assert_int_equal(vnfs_oci_config_parse("{}", 2, VNFS_OCI_ANNOTATIONS_EITHER, bad, 2,
					       &config, error, sizeof(error)),
			 -1);
	assert_string_equal(error, "environment variable 1: a name is letters, digits and '_' "
				   "(not starting with a digit)");
	for (size_t i = 0; i < VNFS_OCI_ENV_WANTED_MAX + 1; i++)
		many[i] = "A";
	assert_int_equal(vnfs_oci_config_parse("{}", 2, VNFS_OCI_ANNOTATIONS_EITHER, many,
					       VNFS_OCI_ENV_WANTED_MAX + 1, &config, error,
					       sizeof(error)),
			 -1);
	assert_string_equal(error, "33 environment variables asked for, at most 32");
	assert_int_equal(vnfs_oci_config_parse("{\"process\": {\"env\": [\"A=1\"]}}", 29,
					       VNFS_OCI_ANNOTATIONS_EITHER, many,
					       VNFS_OCI_ENV_WANTED_MAX, &config, error,
					       sizeof(error)),
			 0);
	assert_int_equal(config.env_count, VNFS_OCI_ENV_WANTED_MAX);
	assert_string_equal(config.env[VNFS_OCI_ENV_WANTED_MAX - 1].value, "1");
}

/* A scratch directory standing in for a runtime's state directory. */
struct scratch {
	char path[64];
	int fd;
};

static void scratch_make(struct scratch *scratch)
{
	snprintf(scratch->path, sizeof(scratch->path), "/tmp/vnfs-oci-test.XXXXXX");
	assert_non_null(mkdtemp(scratch->path));
	scratch->fd = open(scratch->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(scratch->fd >= 0);
}

static void write_file(const struct scratch *scratch, const char *name, const char *text)
{
	int fd = openat(scratch->fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(close(fd), 0);
}

static void assert_read_refused(const struct scratch *scratch, const char *name,
				const char *message)
{
	char *text = NULL;
	size_t length = 0;

	assert_int_equal(vnfs_oci_config_read(scratch->fd, name, &text, &length, error,
					      sizeof(error)),
			 -1);
	assert_string_equal(error, message);
	assert_null(text);
}

static void test_read_file(void **state)
{
	struct scratch scratch;
	char *text = NULL;
	size_t length = 0;
	int fd;

	(void)state;
	scratch_make(&scratch);
	write_file(&scratch, "config.json", crio_container);
	assert_int_equal(vnfs_oci_config_read(scratch.fd, "config.json", &text, &length, error,
					      sizeof(error)),
			 0);
	assert_int_equal(length, strlen(crio_container));
	assert_string_equal(text, crio_container);
	assert_int_equal(vnfs_oci_config_parse(text, length, VNFS_OCI_ANNOTATIONS_CRIO, NULL, 0,
					       &config, error, sizeof(error)),
			 0);
	assert_string_equal(config.pod_name, "indexer-0");
	free(text);
	write_file(&scratch, "empty.json", "");
	text = NULL;
	assert_int_equal(vnfs_oci_config_read(scratch.fd, "empty.json", &text, &length, error,
					      sizeof(error)),
			 0);
	assert_int_equal(length, 0);
	assert_string_equal(text, "");
	free(text);

	/* A link is not followed, a FIFO not waited on, a directory not read. */
	assert_int_equal(symlinkat("config.json", scratch.fd, "link.json"), 0);
	assert_read_refused(&scratch, "link.json",
			    "link.json: cannot open: Too many levels of symbolic links");
	assert_int_equal(mkfifoat(scratch.fd, "fifo.json", 0600), 0);
	assert_read_refused(&scratch, "fifo.json", "fifo.json: not a regular file");
	assert_int_equal(mkdirat(scratch.fd, "directory.json", 0700), 0);
	assert_read_refused(&scratch, "directory.json", "directory.json: not a regular file");
	assert_read_refused(&scratch, "missing.json",
			    "missing.json: cannot open: No such file or directory");
	/* Too large (sparse: no disk used). */
	fd = openat(scratch.fd, "large.json", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, VNFS_OCI_CONFIG_SIZE_MAX + 1), 0);
	assert_int_equal(close(fd), 0);
	assert_read_refused(&scratch, "large.json",
			    "large.json: 1048577 bytes, more than the 1048576 allowed");
	/* One name, not a path. */
	assert_read_refused(&scratch, "directory.json/../config.json",
			    "'directory.json/../config.json' is not one file name");
	assert_read_refused(&scratch, "..", "'..' is not one file name");
	assert_read_refused(&scratch, "", "'' is not one file name");

	static const char *const names[] = {"config.json", "empty.json", "link.json",
					    "fifo.json", "large.json"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		assert_int_equal(unlinkat(scratch.fd, names[i], 0), 0);
	assert_int_equal(unlinkat(scratch.fd, "directory.json", AT_REMOVEDIR), 0);
	assert_int_equal(close(scratch.fd), 0);
	assert_int_equal(rmdir(scratch.path), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_containerd_container),
		cmocka_unit_test(test_containerd_sandbox),
		cmocka_unit_test(test_crio_container),
		cmocka_unit_test(test_crio_sandbox),
		cmocka_unit_test(test_cgroups_path_agrees),
		cmocka_unit_test(test_plain_runc),
		cmocka_unit_test(test_kubernetes_names),
		cmocka_unit_test(test_missing_fields),
		cmocka_unit_test(test_families),
		cmocka_unit_test(test_wrong_types),
		cmocka_unit_test(test_hostile_text),
		cmocka_unit_test(test_depth_and_size),
		cmocka_unit_test(test_duplicate_keys),
		cmocka_unit_test(test_environment),
		cmocka_unit_test(test_read_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
