/*
 * docker_fixtures.h — a container's config.v2.json and hostconfig.json as
 * Debian 12's docker.io (20.10) writes them in <data-root>/containers/<id>/
 * for `docker run --name trainer-d -e JOB_NAME=resnet -v /mnt/nfs:/data`
 * (abridged: network, mount and host settings trimmed to a few members
 * each, every member the parser reads kept as written; hostconfig's
 * CgroupParent a parameter).  The same texts seed
 * tests/fuzz/corpus-docker_state.
 */
#ifndef VNFS_DOCKER_FIXTURES_H
#define VNFS_DOCKER_FIXTURES_H

#define FIXTURE_DOCKER_ID "c0ffee5a8e2b4d7f9a1c3e5b7d9f1a3c5e7b9d1f3a5c7e9b1d3f5a7c9e1b3d5f"
#define FIXTURE_DOCKER_SHORT_ID "c0ffee5a8e2b"

static const char docker_config_v2[] =
	"{\"StreamConfig\":{},\"State\":{\"Running\":true,\"Paused\":false,\"Restarting\":false,"
	"\"OOMKilled\":false,\"RemovalInProgress\":false,\"Dead\":false,\"Pid\":4242,"
	"\"ExitCode\":0,\"Error\":\"\",\"StartedAt\":\"2026-12-02T05:22:13.104Z\","
	"\"FinishedAt\":\"0001-01-01T00:00:00Z\",\"Health\":null},"
	"\"ID\":\"" FIXTURE_DOCKER_ID "\",\"Created\":\"2026-12-02T05:22:12.919Z\","
	"\"Managed\":false,\"Path\":\"/bin/sh\",\"Args\":[\"-c\",\"dd if=/dev/zero of=/data/out "
	"bs=1M count=1\"],\"Config\":{\"Hostname\":\"" FIXTURE_DOCKER_SHORT_ID "\","
	"\"Domainname\":\"\",\"User\":\"\",\"AttachStdin\":false,\"AttachStdout\":false,"
	"\"AttachStderr\":false,\"Tty\":false,\"OpenStdin\":false,\"StdinOnce\":false,"
	"\"Env\":[\"JOB_NAME=resnet\",\"PROJECT=climate\",\"UNSET_HERE\","
	"\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\"],"
	"\"Cmd\":[\"/bin/sh\",\"-c\",\"dd if=/dev/zero of=/data/out bs=1M count=1\"],"
	"\"Image\":\"debian:12\",\"Volumes\":null,\"WorkingDir\":\"\",\"Entrypoint\":null,"
	"\"OnBuild\":null,\"Labels\":{\"org.example.team\":\"ml\"}},"
	"\"Image\":\"sha256:6f1a5b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8\","
	"\"NetworkSettings\":{\"Bridge\":\"\",\"HairpinMode\":false,\"Networks\":{\"bridge\":"
	"{\"IPAMConfig\":null,\"Links\":null,\"Aliases\":null,\"Gateway\":\"172.17.0.1\","
	"\"IPAddress\":\"172.17.0.2\",\"IPPrefixLen\":16,\"MacAddress\":\"02:42:ac:11:00:02\","
	"\"DriverOpts\":null}},\"Service\":null,\"Ports\":{},"
	"\"SandboxKey\":\"/var/run/docker/netns/1a2b3c4d5e6f\"},"
	"\"LogPath\":\"/var/lib/docker/containers/" FIXTURE_DOCKER_ID "/" FIXTURE_DOCKER_ID
	"-json.log\",\"Name\":\"/trainer-d\",\"Driver\":\"overlay2\",\"OS\":\"linux\","
	"\"MountLabel\":\"\",\"ProcessLabel\":\"\",\"RestartCount\":0,"
	"\"HasBeenStartedBefore\":false,\"HasBeenManuallyStopped\":false,"
	"\"MountPoints\":{\"/data\":{\"Source\":\"/mnt/nfs\",\"Destination\":\"/data\","
	"\"RW\":true,\"Name\":\"\",\"Driver\":\"\",\"Type\":\"bind\",\"Propagation\":\"rprivate\","
	"\"Spec\":{\"Type\":\"bind\",\"Source\":\"/mnt/nfs\",\"Target\":\"/data\"},"
	"\"SkipMountpointCreation\":false}},\"SecretReferences\":null,"
	"\"ConfigReferences\":null,\"AppArmorProfile\":\"docker-default\","
	"\"HostnamePath\":\"/var/lib/docker/containers/" FIXTURE_DOCKER_ID "/hostname\","
	"\"SeccompProfile\":\"\",\"NoNewPrivileges\":false}";

/* hostconfig.json with CgroupParent parent (a string literal, "" for the
 * default). */
#define DOCKER_HOST_CONFIG(parent)                                                       \
	"{\"Binds\":[\"/mnt/nfs:/data\"],\"ContainerIDFile\":\"\",\"LogConfig\":{\"Type\":" \
	"\"json-file\",\"Config\":{}},\"NetworkMode\":\"default\",\"PortBindings\":{},"     \
	"\"RestartPolicy\":{\"Name\":\"no\",\"MaximumRetryCount\":0},\"AutoRemove\":false,"  \
	"\"VolumeDriver\":\"\",\"VolumesFrom\":null,\"CapAdd\":null,\"CapDrop\":null,"       \
	"\"CgroupnsMode\":\"private\",\"Dns\":[],\"DnsOptions\":[],\"DnsSearch\":[],"        \
	"\"ExtraHosts\":null,\"GroupAdd\":null,\"IpcMode\":\"private\",\"Cgroup\":\"\","     \
	"\"Links\":null,\"OomScoreAdj\":0,\"PidMode\":\"\",\"Privileged\":false,"            \
	"\"ReadonlyRootfs\":false,\"SecurityOpt\":null,\"Runtime\":\"runc\","                \
	"\"ConsoleSize\":[0,0],\"Isolation\":\"\",\"CpuShares\":0,\"Memory\":0,"             \
	"\"NanoCpus\":0,\"CgroupParent\":\"" parent "\",\"BlkioWeight\":0,"                  \
	"\"Devices\":[],\"DeviceCgroupRules\":null,\"DeviceRequests\":null,"                 \
	"\"MaskedPaths\":[\"/proc/asound\",\"/proc/acpi\"],"                                  \
	"\"ReadonlyPaths\":[\"/proc/bus\",\"/proc/fs\"]}"

static const char docker_host_config[] = DOCKER_HOST_CONFIG("");
static const char docker_host_config_nested[] = DOCKER_HOST_CONFIG("/vnfs-docker/nested");
static const char docker_host_config_slice[] = DOCKER_HOST_CONFIG("foo-bar.slice");

#endif /* VNFS_DOCKER_FIXTURES_H */
