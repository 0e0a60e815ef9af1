/*
 * oci_config_fixtures.h — config.json files as containerd 1.6 and CRI-O
 * 1.27 write them for a Kubernetes pod (abridged: capabilities, mounts,
 * namespaces, masked paths and seccomp trimmed to a few entries each, every
 * field the parser reads kept as written).  The same texts seed
 * tests/fuzz/corpus-oci_config.
 */
#ifndef VNFS_OCI_CONFIG_FIXTURES_H
#define VNFS_OCI_CONFIG_FIXTURES_H

#define FIXTURE_CONTAINER_ID "3f8a6c1d9e2b4a7f8c5d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d"
#define FIXTURE_SANDBOX_ID "9d2e4f6a8b0c1d3e5f7a9b1c3d5e7f9a0b2c4d6e8f0a1b3c5d7e9f1a2b4c6d8e"
#define FIXTURE_POD_UID "1c4b9f0e-5a3d-4b8e-9f1a-2b3c4d5e6f70"
#define FIXTURE_PODMAN_ID "a4ab434a7d0a9e33a94e6c2990bf41c2740521d6eeeb6dfda37c603f7b9738c2"
#define FIXTURE_PODMAN_SHORT_ID "a4ab434a7d0a"

/* containerd's CRI plugin, systemd cgroup driver: an application container. */
static const char containerd_container[] =
	"{\n"
	"  \"ociVersion\": \"1.0.2-dev\",\n"
	"  \"process\": {\n"
	"    \"user\": {\"uid\": 1000, \"gid\": 1000, \"additionalGids\": [1000]},\n"
	"    \"args\": [\"/bin/sh\", \"-c\", \"dd if=/dev/zero of=/data/out bs=1M count=1 conv=fsync\"],\n"
	"    \"env\": [\n"
	"      \"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\",\n"
	"      \"HOSTNAME=writer-7d9c5b8f4-x2kqz\",\n"
	"      \"JOB_ID=run-17\",\n"
	"      \"PROJECT=climate\",\n"
	"      \"JOB_ID=run-18\",\n"
	"      \"KUBERNETES_SERVICE_HOST=10.96.0.1\",\n"
	"      \"KUBERNETES_PORT=tcp://10.96.0.1:443\"\n"
	"    ],\n"
	"    \"cwd\": \"/\",\n"
	"    \"capabilities\": {\n"
	"      \"bounding\": [\"CAP_CHOWN\", \"CAP_DAC_OVERRIDE\", \"CAP_KILL\"],\n"
	"      \"effective\": [\"CAP_CHOWN\", \"CAP_DAC_OVERRIDE\", \"CAP_KILL\"],\n"
	"      \"permitted\": [\"CAP_CHOWN\", \"CAP_DAC_OVERRIDE\", \"CAP_KILL\"]\n"
	"    },\n"
	"    \"apparmorProfile\": \"cri-containerd.apparmor.d\",\n"
	"    \"oomScoreAdj\": 1000\n"
	"  },\n"
	"  \"root\": {\"path\": \"rootfs\"},\n"
	"  \"mounts\": [\n"
	"    {\"destination\": \"/proc\", \"type\": \"proc\", \"source\": \"proc\", "
	"\"options\": [\"nosuid\", \"noexec\", \"nodev\"]},\n"
	"    {\"destination\": \"/data\", \"type\": \"bind\", \"source\": \"/mnt/nfs/climate\", "
	"\"options\": [\"rbind\", \"rprivate\", \"rw\"]}\n"
	"  ],\n"
	"  \"annotations\": {\n"
	"    \"io.kubernetes.cri.container-name\": \"writer\",\n"
	"    \"io.kubernetes.cri.container-type\": \"container\",\n"
	"    \"io.kubernetes.cri.image-name\": \"docker.io/library/busybox:1.36\",\n"
	"    \"io.kubernetes.cri.sandbox-id\": \"" FIXTURE_SANDBOX_ID "\",\n"
	"    \"io.kubernetes.cri.sandbox-name\": \"writer-7d9c5b8f4-x2kqz\",\n"
	"    \"io.kubernetes.cri.sandbox-namespace\": \"analysis\",\n"
	"    \"io.kubernetes.cri.sandbox-uid\": \"" FIXTURE_POD_UID "\"\n"
	"  },\n"
	"  \"linux\": {\n"
	"    \"resources\": {\n"
	"      \"devices\": [{\"allow\": false, \"access\": \"rwm\"}],\n"
	"      \"memory\": {\"limit\": 268435456},\n"
	"      \"cpu\": {\"shares\": 2, \"period\": 100000}\n"
	"    },\n"
	"    \"cgroupsPath\": \"kubepods-besteffort-pod1c4b9f0e_5a3d_4b8e_9f1a_2b3c4d5e6f70.slice:"
	"cri-containerd:" FIXTURE_CONTAINER_ID "\",\n"
	"    \"namespaces\": [\n"
	"      {\"type\": \"pid\"}, {\"type\": \"ipc\", \"path\": \"/proc/4242/ns/ipc\"},\n"
	"      {\"type\": \"mount\"}\n"
	"    ],\n"
	"    \"maskedPaths\": [\"/proc/acpi\", \"/proc/kcore\"],\n"
	"    \"readonlyPaths\": [\"/proc/bus\", \"/proc/sys\"]\n"
	"  }\n"
	"}\n";

/* containerd's pause container for the same pod. */
static const char containerd_sandbox[] =
	"{\n"
	"  \"ociVersion\": \"1.0.2-dev\",\n"
	"  \"process\": {\n"
	"    \"user\": {\"uid\": 65535, \"gid\": 65535},\n"
	"    \"args\": [\"/pause\"],\n"
	"    \"env\": [\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\"],\n"
	"    \"cwd\": \"/\"\n"
	"  },\n"
	"  \"root\": {\"path\": \"rootfs\", \"readonly\": true},\n"
	"  \"hostname\": \"writer-7d9c5b8f4-x2kqz\",\n"
	"  \"annotations\": {\n"
	"    \"io.kubernetes.cri.container-type\": \"sandbox\",\n"
	"    \"io.kubernetes.cri.sandbox-id\": \"" FIXTURE_SANDBOX_ID "\",\n"
	"    \"io.kubernetes.cri.sandbox-log-directory\": \"/var/log/pods/"
	"analysis_writer-7d9c5b8f4-x2kqz_" FIXTURE_POD_UID "\",\n"
	"    \"io.kubernetes.cri.sandbox-name\": \"writer-7d9c5b8f4-x2kqz\",\n"
	"    \"io.kubernetes.cri.sandbox-namespace\": \"analysis\",\n"
	"    \"io.kubernetes.cri.sandbox-uid\": \"" FIXTURE_POD_UID "\"\n"
	"  },\n"
	"  \"linux\": {\n"
	"    \"resources\": {\"cpu\": {\"shares\": 2}},\n"
	"    \"cgroupsPath\": \"kubepods-besteffort-pod1c4b9f0e_5a3d_4b8e_9f1a_2b3c4d5e6f70.slice:"
	"cri-containerd:" FIXTURE_SANDBOX_ID "\",\n"
	"    \"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"ipc\"}, {\"type\": \"uts\"}]\n"
	"  }\n"
	"}\n";

/* CRI-O, cgroupfs driver, a pod in kube-system; CRI-O repeats the labels as
 * annotations and adds its own. */
static const char crio_container[] =
	"{\n"
	"  \"ociVersion\": \"1.0.2-dev\",\n"
	"  \"process\": {\n"
	"    \"user\": {\"uid\": 0, \"gid\": 0},\n"
	"    \"args\": [\"/usr/local/bin/indexer\", \"--once\"],\n"
	"    \"env\": [\n"
	"      \"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\",\n"
	"      \"TERM=xterm\",\n"
	"      \"HOSTNAME=indexer-0\",\n"
	"      \"LSB_JOBID=\"\n"
	"    ],\n"
	"    \"cwd\": \"/work\",\n"
	"    \"selinuxLabel\": \"system_u:system_r:container_t:s0:c4,c13\"\n"
	"  },\n"
	"  \"root\": {\"path\": \"/var/lib/containers/storage/overlay/0a1b/merged\"},\n"
	"  \"hostname\": \"indexer-0\",\n"
	"  \"annotations\": {\n"
	"    \"io.container.manager\": \"cri-o\",\n"
	"    \"io.kubernetes.container.hash\": \"5f3b0c2a\",\n"
	"    \"io.kubernetes.container.name\": \"indexer\",\n"
	"    \"io.kubernetes.container.restartCount\": \"0\",\n"
	"    \"io.kubernetes.cri-o.ContainerID\": \"" FIXTURE_CONTAINER_ID "\",\n"
	"    \"io.kubernetes.cri-o.ContainerType\": \"container\",\n"
	"    \"io.kubernetes.cri-o.Labels\": \"{\\\"io.kubernetes.container.name\\\":\\\"indexer\\\","
	"\\\"io.kubernetes.pod.name\\\":\\\"indexer-0\\\"}\",\n"
	"    \"io.kubernetes.cri-o.Name\": \"k8s_indexer_indexer-0_kube-system_"
	"5d1b7e7c0a8f0e8d3c1b3e8a6b5f5d0e_0\",\n"
	"    \"io.kubernetes.cri-o.SandboxID\": \"" FIXTURE_SANDBOX_ID "\",\n"
	"    \"io.kubernetes.pod.name\": \"indexer-0\",\n"
	"    \"io.kubernetes.pod.namespace\": \"kube-system\",\n"
	"    \"io.kubernetes.pod.terminationGracePeriod\": \"30\",\n"
	"    \"io.kubernetes.pod.uid\": \"5d1b7e7c0a8f0e8d3c1b3e8a6b5f5d0e\",\n"
	"    \"kubernetes.io/config.seen\": \"2026-12-01T10:00:00.000000000Z\"\n"
	"  },\n"
	"  \"linux\": {\n"
	"    \"resources\": {\"pids\": {\"limit\": 4096}},\n"
	"    \"cgroupsPath\": \"/kubepods/burstable/pod5d1b7e7c0a8f0e8d3c1b3e8a6b5f5d0e/crio-"
	FIXTURE_CONTAINER_ID "\",\n"
	"    \"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"network\", "
	"\"path\": \"/var/run/netns/0f1e\"}]\n"
	"  }\n"
	"}\n";

/* CRI-O's infra container: "POD" is no DNS label, and is not read. */
static const char crio_sandbox[] =
	"{\n"
	"  \"ociVersion\": \"1.0.2-dev\",\n"
	"  \"process\": {\"args\": [\"/pause\"], \"cwd\": \"/\"},\n"
	"  \"annotations\": {\n"
	"    \"io.kubernetes.container.name\": \"POD\",\n"
	"    \"io.kubernetes.cri-o.ContainerType\": \"sandbox\",\n"
	"    \"io.kubernetes.pod.name\": \"indexer-0\",\n"
	"    \"io.kubernetes.pod.namespace\": \"kube-system\",\n"
	"    \"io.kubernetes.pod.uid\": \"5d1b7e7c0a8f0e8d3c1b3e8a6b5f5d0e\"\n"
	"  },\n"
	"  \"linux\": {\"cgroupsPath\": \"/kubepods/burstable/pod5d1b7e7c0a8f0e8d3c1b3e8a6b5f5d0e/"
	"crio-" FIXTURE_SANDBOX_ID "\"}\n"
	"}\n";

/* `runc spec` edited by hand, as the guest suites run it: no annotations. */
static const char plain_runc[] =
	"{\"ociVersion\": \"1.0.2-dev\", \"process\": {\"terminal\": false, \"args\": [\"sh\"], "
	"\"env\": [\"PATH=/usr/bin:/bin\", \"TERM=xterm\"], \"cwd\": \"/\"}, "
	"\"root\": {\"path\": \"rootfs\", \"readonly\": true}, \"hostname\": \"runc\", "
	"\"linux\": {\"cgroupsPath\": \"/kubepods/besteffort/pod" FIXTURE_POD_UID "/"
	FIXTURE_CONTAINER_ID "\"}}";

/* podman 4.3's config of `podman run --name trainer-7 --cgroup-parent
 * /machine --env JOB_NAME=x1` with the cgroupfs manager (measured in the
 * test guest): no Kubernetes names, though CRI-O's prefix appears. */
static const char podman_container[] =
	"{\"ociVersion\": \"1.0.2-dev\", \"process\": {\"args\": [\"/bin/busybox\", \"sleep\", \"30\"], "
	"\"env\": [\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\", "
	"\"TERM=xterm\", \"JOB_NAME=x1\", \"HOSTNAME=" FIXTURE_PODMAN_SHORT_ID "\"], \"cwd\": \"/\"}, "
	"\"annotations\": {\"io.container.manager\": \"libpod\", "
	"\"io.kubernetes.cri-o.Created\": \"2026-12-02T05:22:12.919622392Z\", "
	"\"io.kubernetes.cri-o.TTY\": \"false\", \"io.podman.annotations.autoremove\": \"FALSE\", "
	"\"org.opencontainers.image.stopSignal\": \"15\"}, "
	"\"linux\": {\"cgroupsPath\": \"/machine/libpod-" FIXTURE_PODMAN_ID "\"}}";

/* containers/storage's containers.json beside it: two containers. */
static const char podman_containers_json[] =
	"[{\"id\":\"" FIXTURE_SANDBOX_ID "\",\"names\":[\"other\"],\"image\":\"\",\"layer\":\"x\"},"
	"{\"id\":\"" FIXTURE_PODMAN_ID "\",\"names\":[\"trainer-7\"],\"image\":\"\","
	"\"layer\":\"cd1a0565ef376ce587a2d306133dea1bf6568d68c55cdabeb5dce8614831ad9c\","
	"\"metadata\":\"{\\\"image-name\\\":\\\"\\\",\\\"name\\\":\\\"trainer-7\\\"}\","
	"\"created\":\"2026-12-02T05:22:12.96091047Z\",\"flags\":{\"MountLabel\":\"\",\"ProcessLabel\":\"\"}}]\n";

#endif /* VNFS_OCI_CONFIG_FIXTURES_H */
