#!/usr/bin/env bash
# containers.sh — Kubernetes containers run by real runtimes, counted
# exactly on NFS v4.2 two ways:
#   1. runc, with vnfs-register --oci-hook as the containers' own hooks:
#      createRuntime registers each before its process runs its command,
#      poststop ends it, the sandbox's poststop finishes the pod.  No late
#      binding: the container writes at once, and every call is its own.
#   2. containerd (its k8s.io namespace, the annotations and cgroup paths
#      kubelet's CRI plugin gives), with no hook at all: the helper
#      discovers each container from containerd's state, folds the calls it
#      made before into it, ends it when its cgroup goes and finishes its
#      pod when the pod's cgroup goes.  Two pods in two namespaces, one per
#      cgroup driver's naming; one container writes before and after it is
#      discovered, one does all its I/O and exits before.
#   3. podman outside Kubernetes (crun, cgroupfs, vfs storage on tmpfs): the
#      helper names the container as podman's store does, and finishes it
#      when its cgroup goes.
#   4. docker outside Kubernetes (Debian's docker.io, cgroupfs, vfs storage
#      on tmpfs): the helper names each container from Docker's own record
#      (config.v2.json, hostconfig.json), under Docker's default cgroup
#      parent and under one given with --cgroup-parent, a container that
#      does its I/O and exits before its first call is seen included.
source /vnfs/src/tests/guest/lib/guest.sh

BUILD=${VNFS_BUILD:-/vnfs/src}
HELPER=$BUILD/vnfs-helper
SEND=$BUILD/tests/tools/vnfs-send
REGISTER=$BUILD/vnfs-register
RUN=/run/vnfs-containers
SOCKET=$RUN/vnfs.sock
MIB=1048576
POD_UID=1c4b9f0e-5a3d-4b8e-9f1a-2b3c4d5e6f70
TRAINER=3f8a6c1d9e2b4a7f8c5d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d
SANDBOX=9d2e4f6a8b0c1d3e5f7a9b1c3d5e7f9a0b2c4d6e8f0a1b3c5d7e9f1a2b4c6d8e
PLAIN=5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e
POD=ml/resnet-7f9c
CGROUP_ROOT=${VNFS_CGROUP2_MOUNT:-/sys/fs/cgroup}

check "runc is installed" command -v runc
mkdir -p $RUN/rootfs/bin $RUN/rootfs/data $RUN/rootfs/proc $RUN/rootfs/dev $RUN/rootfs/sys
cp "$(command -v busybox)" $RUN/rootfs/bin/busybox
cat > $RUN/vnfs.conf <<CONF
[helper]
socket = $SOCKET
state_dir = $RUN/state
report_dir = $RUN/reports
interval = 1s
[sqlite]
path = $RUN/history.db
[prometheus]
listen = 127.0.0.1:9717
[containers]
tag_variables = JOB_NAME
podman_storage = /run/containers-graph
docker_data_root = /run/docker-data
CONF
"$HELPER" --config $RUN/vnfs.conf > $VNFS_OUT/helper.log 2>&1 &
HELPER_PID=$!
until_ok 60 grep -q 'ready:' $VNFS_OUT/helper.log || { fail "helper not ready"; tail $VNFS_OUT/helper.log; exit 1; }

guest_start_nfs || exit 1
mount_dir=$(nfs_mount_of 4.2)
guest_mount_nfs 4.2 "$mount_dir" || exit 1
mkdir -p "$mount_dir/pod"

# bundle ID TYPE ARGS_JSON [ANNOTATIONS]: a runc bundle in $RUN/ID whose
# container runs ARGS in the pod's cgroup (cgroupfs driver's name), with
# the NFS directory at /data and vnfs-register as its hooks.
bundle() {
	local id=$1 type=$2 args=$3 annotations=${4-kubernetes} dir=$RUN/$1 hook
	mkdir -p "$dir"
	(cd "$dir" && runc spec) || return 1
	hook="{\"path\":\"$REGISTER\",\"args\":[\"vnfs-register\",\"--oci-hook\",\"--socket\",\"$SOCKET\"]}"
	jq --arg id "$id" --arg type "$type" --argjson args "$args" --arg nfs "$mount_dir/pod" \
		--arg uid "$POD_UID" --argjson hook "$hook" --arg annotations "$annotations" '
		.process.terminal = false | .process.args = $args |
		.root = {"path": "'"$RUN"'/rootfs", "readonly": true} |
		.mounts += [{"destination": "/data", "type": "bind", "source": $nfs,
			     "options": ["rbind", "rw"]}] |
		.linux.cgroupsPath = "/kubepods/besteffort/pod\($uid)/\($id)" |
		.hooks = {"createRuntime": [$hook], "poststop": [$hook]} |
		if $annotations == "kubernetes" then .annotations = {
			"io.kubernetes.cri.container-type": $type,
			"io.kubernetes.cri.container-name": (if $type == "container" then "trainer" else "" end),
			"io.kubernetes.cri.sandbox-name": "resnet-7f9c",
			"io.kubernetes.cri.sandbox-namespace": "ml",
			"io.kubernetes.cri.sandbox-uid": $uid} else . end' \
		"$dir/config.json" > "$dir/config.new" && mv "$dir/config.new" "$dir/config.json"
}
list_count() { "$SEND" "$SOCKET" '{"v":1,"type":"list"}' | jq '.jobs | length'; }
query_pod() { "$SEND" "$SOCKET" "{\"v\":1,\"type\":\"query\",\"source\":\"kubernetes\",\"job\":\"$POD\"}"; }

mark containers
# The pod's sandbox first, as kubelet starts it: registered as the pod itself.
bundle $SANDBOX sandbox '["/bin/busybox","sleep","600"]' || fail "sandbox bundle"
runc run --detach --bundle $RUN/$SANDBOX $SANDBOX > $VNFS_OUT/runc-sandbox.log 2>&1
check_eq "runc runs the sandbox" $? 0
check_eq "the sandbox's hook registered the pod: one step" "$(list_count)" 1

# The trainer writes 2 MiB at once: counted from its first call.
bundle $TRAINER container \
	'["/bin/busybox","dd","if=/dev/zero","of=/data/out","bs=1048576","count=2","conv=fsync"]' ||
	fail "trainer bundle"
runc run --bundle $RUN/$TRAINER $TRAINER > $VNFS_OUT/runc-trainer.log 2>&1
check_eq "runc runs the trainer to its end" $? 0
check_eq "the trainer wrote its file" "$(stat -c %s "$mount_dir/pod/out")" $((2 * MIB))
pod=$(query_pod)
echo "$pod" > $VNFS_OUT/query-pod.json
check_eq "pod $POD: its steps, the sandbox and the trainer" \
	"$(jq -c '[.job.steps[] | .part // ""] | sort' <<< "$pod")" '["","trainer"]'
check_eq "the trainer's write bytes, exactly" \
	"$(jq '[.job.steps[] | select(.part == "trainer") | .operations.write.bytes] | add' <<< "$pod")" $((2 * MIB))
check_eq "the trainer's write calls, exactly" \
	"$(jq '[.job.steps[] | select(.part == "trainer") | .operations.write.count] | add' <<< "$pod")" 2
check_eq "the trainer's fsync" \
	"$(jq '[.job.steps[] | select(.part == "trainer") | .operations.fsync.count] | add' <<< "$pod")" 1
check "the trainer's poststop hook ended it" \
	jq -e '.job.steps[] | select(.part == "trainer") | .end_time != null' <<< "$pod"

# A container without Kubernetes' annotations is no pod's: its hook
# registers nothing (runc keeps a hook's output to itself) and the container
# runs all the same.
bundle $PLAIN container '["/bin/busybox","true"]' none || fail "plain bundle"
runc run --bundle $RUN/$PLAIN $PLAIN > $VNFS_OUT/runc-plain.log 2>&1
check_eq "runc runs a plain container, its hooks succeeding" $? 0
check_eq "still two steps" "$(list_count)" 2

# The sandbox stops: the pod's end, so its job finishes (report, history).
runc kill $SANDBOX KILL
until_ok 30 bash -c "runc state $SANDBOX | jq -e '.status == \"stopped\"' > /dev/null"
runc delete $SANDBOX
check_eq "the pod finished: no step left" "$(list_count)" 0
check_eq "the history holds the pod's two steps, finished" \
	"$(sqlite3 $RUN/history.db "SELECT count(*) FROM steps WHERE source = 'kubernetes' AND job = '$POD' AND finished = 1")" 2
check_eq "vnfs-report -j kubernetes:$POD: the trainer's write bytes" \
	"$("$BUILD/vnfs-report" --database $RUN/history.db --socket $SOCKET -j kubernetes:$POD --json | jq '.jobs[0].operations.write.bytes')" \
	$((2 * MIB))
check "the pod's report file" test -s "$RUN/reports/kubernetes-ml%2Fresnet-7f9c/$(hostname).json"

# ---------------------------------------------------------------- containerd
# The daemon with its root and state on tmpfs and the plugins the guest
# cannot run (CRI, snapshotters needing modules) disabled.  Its state is
# where the helper looks: /run/containerd/io.containerd.runtime.v2.task.
mark containerd
check "containerd is installed" command -v containerd
cat > $RUN/containerd.toml <<CONF
version = 2
root = "/run/containerd-root"
state = "/run/containerd"
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "/run/containerd/containerd.sock"
CONF
containerd --config $RUN/containerd.toml > $VNFS_OUT/containerd.log 2>&1 &
CONTAINERD_PID=$!
until_ok 60 ctr version > /dev/null 2>&1 || fail "containerd did not come up"
mkdir -p "$mount_dir/vision" "$mount_dir/nlp"

VISION_UID=7b2a9c4e-1d3f-4e5a-8b6c-9d0e1f2a3b4c
NLP_UID=2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f
VISION_TRAINER=a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90
NLP_TOKENIZER=0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0
# The cgroupfs driver's name, burstable; the systemd driver's, best effort
# (created as plain directories: the guest runs no systemd).
VISION_CGROUP=/kubepods/burstable/pod$VISION_UID/$VISION_TRAINER
NLP_SLICE=/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod${NLP_UID//-/_}.slice
NLP_CGROUP=$NLP_SLICE/cri-containerd-$NLP_TOKENIZER.scope

# ctr_run ID CGROUP NAMESPACE POD CONTAINER POD_UID NFS_DIR ARGS...: runs a
# container as kubelet's CRI plugin would have containerd run it.
ctr_run() {
	local id=$1 cgroup=$2 namespace=$3 pod=$4 container=$5 uid=$6 dir=$7
	shift 7
	ctr -n k8s.io run --rootfs --cgroup "$cgroup" \
		--annotation io.kubernetes.cri.container-type=container \
		--annotation io.kubernetes.cri.container-name="$container" \
		--annotation io.kubernetes.cri.sandbox-name="$pod" \
		--annotation io.kubernetes.cri.sandbox-namespace="$namespace" \
		--annotation io.kubernetes.cri.sandbox-uid="$uid" \
		--env JOB_NAME="$namespace-$container" \
		--mount type=bind,src="$dir",dst=/data,options=rbind:rw \
		"$@"
}
query_job() { "$SEND" "$SOCKET" "{\"v\":1,\"type\":\"query\",\"source\":\"kubernetes\",\"job\":\"$1\"}"; }
listed() { "$SEND" "$SOCKET" '{"v":1,"type":"list"}' | jq -e --arg job "$1" '[.jobs[] | select(.job == $job)] | length > 0' > /dev/null; }
not_listed() { ! listed "$1"; }
ended() { query_job "$1" | jq -e '.job.steps[0].end_time != null' > /dev/null; }

# vision/train-a1: 2 MiB written before the helper can know it, then,
# once it is listed, 1 MiB more.
ctr_run $VISION_TRAINER $VISION_CGROUP vision train-a1 trainer $VISION_UID "$mount_dir/vision" \
	--detach $RUN/rootfs $VISION_TRAINER /bin/busybox sh -c \
	'dd if=/dev/zero of=/data/out bs=1048576 count=2 conv=fsync 2> /dev/null &&
	 until [ -e /data/go ]; do sleep 0.1; done &&
	 dd if=/dev/zero of=/data/out bs=1048576 count=1 seek=2 conv=notrunc,fsync 2> /dev/null' \
	> $VNFS_OUT/ctr-vision.log 2>&1
check_eq "containerd runs vision/train-a1's trainer" $? 0
check "the helper knew vision/train-a1's trainer as its cgroup was made" \
	until_ok 60 grep -q "cgroup $VISION_CGROUP made: kubernetes pod vision/train-a1 container trainer" $VNFS_OUT/helper.log
# nlp/bert-b2: 1 MiB written, and exited, before the helper knows it
# (containerd keeps the task, and its state, until it is deleted).
ctr_run $NLP_TOKENIZER $NLP_CGROUP nlp bert-b2 tokenizer $NLP_UID "$mount_dir/nlp" \
	$RUN/rootfs $NLP_TOKENIZER /bin/busybox dd if=/dev/zero of=/data/tokens bs=1048576 count=1 \
	conv=fsync > $VNFS_OUT/ctr-nlp.log 2>&1
check_eq "containerd runs nlp/bert-b2's tokenizer to its end" $? 0
check_eq "the tokenizer wrote its file" "$(stat -c %s "$mount_dir/nlp/tokens")" $MIB

# nlp/bert-b2's second container, run with --rm: containerd deletes its
# task, state and cgroup the moment it exits.
# run_detokenizer ID NAME: it runs as container ID, waits to be known (the
# helper judged its cgroup as it was made), then writes 1 MiB to
# /data/NAME and exits; returns ctr's exit status.
run_detokenizer() {
	local id=$1 name=$2 cgroup=$NLP_SLICE/cri-containerd-$1.scope pid
	ctr_run "$id" "$cgroup" nlp bert-b2 detokenizer $NLP_UID "$mount_dir/nlp" \
		--rm $RUN/rootfs "$id" /bin/busybox sh -c \
		"until [ -e /data/go-$name ]; do sleep 0.1; done &&
		 dd if=/dev/zero of=/data/$name bs=1048576 count=1 conv=fsync 2> /dev/null" \
		> $VNFS_OUT/ctr-nlp-$name.log 2>&1 &
	pid=$!
	check "the helper knew nlp/bert-b2's detokenizer ($name) as its cgroup was made" \
		until_ok 60 grep -q "cgroup $cgroup made: kubernetes pod nlp/bert-b2 container detokenizer" $VNFS_OUT/helper.log
	touch "$mount_dir/nlp/go-$name"
	wait $pid
}
NLP_SHORT=5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d
NLP_SHORT_CGROUP=$NLP_SLICE/cri-containerd-$NLP_SHORT.scope
run_detokenizer $NLP_SHORT short
check_eq "containerd ran the detokenizer and removed it (--rm)" $? 0
check "its state is gone with it" test ! -e /run/containerd/io.containerd.runtime.v2.task/k8s.io/$NLP_SHORT
check "its cgroup is gone with it" test ! -e "$CGROUP_ROOT$NLP_SHORT_CGROUP"
short_ended() { query_job nlp/bert-b2 | jq -e '[.job.steps[] | select(.part == "detokenizer") | .end_time != null] == [true]' > /dev/null; }
check "nlp/bert-b2's detokenizer counted, and ended" until_ok 30 short_ended
# Kubernetes restarts a container with a new id and a new cgroup, in the
# same pod, by the same name: it runs again as the same step, its counts
# going on from where they were (1 MiB more).
NLP_RESTART=6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f
NLP_RESTART_CGROUP=$NLP_SLICE/cri-containerd-$NLP_RESTART.scope
run_detokenizer $NLP_RESTART restart
check_eq "containerd ran the restarted detokenizer" $? 0
check "the restarted detokenizer registered again, in its step" \
	until_ok 30 grep -q "restarted: registered again kubernetes pod nlp/bert-b2 container detokenizer" $VNFS_OUT/helper.log
check "the restarted detokenizer counted, and ended" until_ok 30 short_ended

check "the helper discovered vision/train-a1" until_ok 30 listed vision/train-a1
check "the helper discovered nlp/bert-b2 after its container exited" until_ok 30 listed nlp/bert-b2
check "the tokenizer registered at its first calls, made before: folded in" \
	until_ok 30 grep -q "discovered kubernetes pod nlp/bert-b2 container tokenizer" $VNFS_OUT/helper.log
touch "$mount_dir/vision/go"
until_ok 60 bash -c "ctr -n k8s.io task ls | grep -q '^$VISION_TRAINER .*STOPPED'"
check_eq "the trainer wrote its file" "$(stat -c %s "$mount_dir/vision/out")" $((3 * MIB))
# One interval for the last calls to reach the query's read.
vision=$(query_job vision/train-a1)
echo "$vision" > $VNFS_OUT/query-vision.json
check_eq "vision/train-a1: one step, its trainer" \
	"$(jq -c '[.job.steps[].part]' <<< "$vision")" '["trainer"]'
check_eq "vision/train-a1 trainer: write bytes before and after it was registered, exactly" \
	"$(jq '.job.steps[0].operations.write.bytes' <<< "$vision")" $((3 * MIB))
check_eq "vision/train-a1 trainer: write calls, exactly" \
	"$(jq '.job.steps[0].operations.write.count' <<< "$vision")" 3
check_eq "vision/train-a1 trainer: fsync calls, exactly" \
	"$(jq '.job.steps[0].operations.fsync.count' <<< "$vision")" 2
check_eq "vision/train-a1 trainer: its JOB_NAME variable as a tag" \
	"$(jq -r '.job.steps[0].tags.JOB_NAME' <<< "$vision")" vision-trainer
check_eq "vision/train-a1 trainer: its cgroup, the cgroupfs driver's" \
	"$(jq -r '.job.steps[0].cgroup_path' <<< "$vision")" $VISION_CGROUP
nlp=$(query_job nlp/bert-b2)
echo "$nlp" > $VNFS_OUT/query-nlp.json
tokenizer() { jq "[.job.steps[] | select(.part == \"tokenizer\") | $1] | .[0]" <<< "$nlp"; }
detokenizer() { jq "[.job.steps[] | select(.part == \"detokenizer\") | $1] | .[0]" <<< "$nlp"; }
check_eq "nlp/bert-b2: two steps" "$(jq -c '[.job.steps[].part] | sort' <<< "$nlp")" '["detokenizer","tokenizer"]'
check_eq "nlp/bert-b2 tokenizer (exited before it was registered): write bytes, exactly" \
	"$(tokenizer .operations.write.bytes)" $MIB
check_eq "nlp/bert-b2 tokenizer: write calls, exactly" "$(tokenizer .operations.write.count)" 1
check_eq "nlp/bert-b2 tokenizer: fsync calls, exactly" "$(tokenizer .operations.fsync.count)" 1
check_eq "nlp/bert-b2 tokenizer: its cgroup, the systemd driver's" \
	"$(tokenizer .cgroup_path)" "\"$NLP_CGROUP\""
check_eq "nlp/bert-b2 detokenizer (deleted at its exit, then restarted): write bytes of both runs, exactly" \
	"$(detokenizer .operations.write.bytes)" $((2 * MIB))
check_eq "nlp/bert-b2 detokenizer: write calls, exactly" "$(detokenizer .operations.write.count)" 2
check_eq "nlp/bert-b2 detokenizer: fsync calls, exactly" "$(detokenizer .operations.fsync.count)" 2
check_eq "nlp/bert-b2 detokenizer: its cgroup, the restarted one's" \
	"$(detokenizer .cgroup_path)" "\"$NLP_RESTART_CGROUP\""

# A cgroup made to look like a container of vision/train-a1 (its pod's
# directory, a 64-hex name no runtime knows), with a writer in it: no pod's.
LOOKALIKE=/kubepods/burstable/pod$VISION_UID/$(printf 'e%.0s' {1..64})
mkdir -p "$CGROUP_ROOT$LOOKALIKE"
sh -c "echo \$\$ > $CGROUP_ROOT$LOOKALIKE/cgroup.procs &&
	exec dd if=/dev/zero of=$mount_dir/vision/lookalike bs=1048576 count=1 conv=fsync 2> /dev/null"
# The data the check decides on: the look-alike's write is in /metrics as
# unattributed (its row existed at that collection), and one more interval
# has been collected since, whose discovery pass ran before it: a (wrong)
# discovery of the row would have been made by then.
# lookalike_seen PATH: whether the cgroup at PATH has unattributed writes.
lookalike_seen() {
	curl -sf http://127.0.0.1:9717/metrics |
		awk -v id="$(stat -c %i "$CGROUP_ROOT$1")" '$1 ~ "^vnfs_unattributed_write_bytes_total[{]cgroup_id=\"" id "\"" {found = 1} END {exit !found}'
}
check "the look-alike's write is counted, unattributed" until_ok 60 lookalike_seen "$LOOKALIKE"
check "an interval was collected since" until_ok 60 collected_beyond 127.0.0.1:9717 "$(helper_collections 127.0.0.1:9717)"
check_eq "a look-alike cgroup is not vision/train-a1's: still one step" \
	"$(query_job vision/train-a1 | jq '.job.steps | length')" 1
rmdir "$CGROUP_ROOT$LOOKALIKE"

# Each call once: the pods' in their series, and the node's unattributed
# write bytes only the look-alike's (the pods' were folded out of them).
curl -sf http://127.0.0.1:9717/metrics > $VNFS_OUT/metrics.txt
check_eq "/metrics: vision/train-a1's trainer wrote 3 MiB" \
	"$(grep -E '^vnfs_write_bytes_total\{pod="vision/train-a1",container="trainer",' $VNFS_OUT/metrics.txt | awk '{print $2}')" \
	$((3 * MIB))
check_eq "/metrics: unattributed write bytes are the look-alike's 1 MiB alone" \
	"$(awk '/^vnfs_unattributed_write_bytes_total\{/ {sum += $2} END {print sum + 0}' $VNFS_OUT/metrics.txt)" \
	$MIB

# The tasks deleted: the containers' cgroups go, their steps end; the pods'
# cgroups removed, as kubelet does: the pods finish.
ctr -n k8s.io task delete $VISION_TRAINER > /dev/null
ctr -n k8s.io task delete $NLP_TOKENIZER > /dev/null
ctr -n k8s.io container delete $VISION_TRAINER $NLP_TOKENIZER
check "vision/train-a1's trainer ended when its cgroup went" until_ok 30 ended vision/train-a1
rmdir "$CGROUP_ROOT/kubepods/burstable/pod$VISION_UID" "$CGROUP_ROOT$NLP_SLICE"
check "vision/train-a1 finished when its pod's cgroup went" until_ok 30 not_listed vision/train-a1
check "nlp/bert-b2 finished when its pod's cgroup went" until_ok 30 not_listed nlp/bert-b2
check_eq "the history holds the pods' three steps, finished" \
	"$(sqlite3 $RUN/history.db "SELECT count(*) FROM steps WHERE source = 'kubernetes' AND job IN ('vision/train-a1', 'nlp/bert-b2') AND finished = 1")" 3
check_eq "vnfs-report -j kubernetes:vision/train-a1: its write bytes" \
	"$("$BUILD/vnfs-report" --database $RUN/history.db --socket $SOCKET -j kubernetes:vision/train-a1 --json | jq '.jobs[0].operations.write.bytes')" \
	$((3 * MIB))
check "nlp/bert-b2's report file" test -s "$RUN/reports/kubernetes-nlp%2Fbert-b2/$(hostname).json"
kill -TERM $CONTAINERD_PID
wait $CONTAINERD_PID

# ---------------------------------------------------------------- podman
mark podman
check "podman is installed" command -v podman
cat > $RUN/podman-containers.conf <<CONF
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
runtime = "crun"
CONF
cat > $RUN/podman-storage.conf <<CONF
[storage]
driver = "vfs"
runroot = "/run/containers/storage"
graphroot = "/run/containers-graph"
CONF
export CONTAINERS_CONF=$RUN/podman-containers.conf CONTAINERS_STORAGE_CONF=$RUN/podman-storage.conf
mkdir -p "$mount_dir/podman"
# 1 MiB before the helper can know it, then, once it is listed, 1 MiB more.
podman run -d --name trainer-7 --cgroup-parent /machine --network none --env JOB_NAME=podman-run \
	--volume "$mount_dir/podman:/data" --rootfs $RUN/rootfs /bin/busybox sh -c \
	'dd if=/dev/zero of=/data/out bs=1048576 count=1 conv=fsync 2> /dev/null &&
	 until [ -e /data/go ]; do sleep 0.1; done &&
	 dd if=/dev/zero of=/data/out bs=1048576 count=1 seek=1 conv=notrunc,fsync 2> /dev/null' \
	> $VNFS_OUT/podman-run.log 2>&1
check_eq "podman runs trainer-7" $? 0
podman_id=$(podman inspect -f '{{.Id}}' trainer-7)
check "the helper discovered podman's trainer-7" until_ok 30 listed trainer-7
touch "$mount_dir/podman/go"
until_ok 60 bash -c "podman inspect -f '{{.State.Status}}' trainer-7 | grep -qx exited"
check_eq "trainer-7 wrote its file" "$(stat -c %s "$mount_dir/podman/out")" $((2 * MIB))
query_container() { "$SEND" "$SOCKET" '{"v":1,"type":"query","source":"container","job":"trainer-7"}'; }
podman_query=$(query_container)
echo "$podman_query" > $VNFS_OUT/query-podman.json
check_eq "trainer-7: one step, its short id" \
	"$(jq -r '[.job.steps[].part] | join(",")' <<< "$podman_query")" "${podman_id:0:12}"
check_eq "trainer-7: write bytes before and after discovery, exactly" \
	"$(jq '.job.steps[0].operations.write.bytes' <<< "$podman_query")" $((2 * MIB))
check_eq "trainer-7: write calls, exactly" \
	"$(jq '.job.steps[0].operations.write.count' <<< "$podman_query")" 2
check_eq "trainer-7: its JOB_NAME variable as a tag" \
	"$(jq -r '.job.steps[0].tags.JOB_NAME' <<< "$podman_query")" podman-run
# podman removes the container's cgroup when the container exits: it
# finishes then, a job of its own.
check "trainer-7 finished when its cgroup went" until_ok 30 not_listed trainer-7
check_eq "the history holds trainer-7, finished" \
	"$(sqlite3 $RUN/history.db "SELECT count(*) FROM steps WHERE source = 'container' AND job = 'trainer-7' AND finished = 1")" 1
check_eq "vnfs-report -j container:trainer-7: its write bytes" \
	"$("$BUILD/vnfs-report" --database $RUN/history.db --socket $SOCKET -j container:trainer-7 --json | jq '.jobs[0].operations.write.bytes')" \
	$((2 * MIB))
podman rm -f trainer-7 > /dev/null

# ---------------------------------------------------------------- docker
# dockerd with its data, state and socket on tmpfs, no networking (the
# guest loads no bridge or netfilter module) and the cgroupfs driver (no
# systemd in the guest).  /etc/docker is on the read-only root: a tmpfs
# over it takes the key dockerd writes there.  /usr/bin/docker is Debian's
# client; the host's /usr/local/bin may shadow it with another.
mark docker
check "docker is installed" test -x /usr/sbin/dockerd
DOCKER_SOCKET=unix:///run/docker-exec/docker.sock
docker_cli() { /usr/bin/docker -H $DOCKER_SOCKET "$@"; }
mkdir -p /etc/docker /run/docker-exec && mount -t tmpfs tmpfs /etc/docker
/usr/sbin/dockerd -H $DOCKER_SOCKET --data-root /run/docker-data --exec-root /run/docker-exec \
	--pidfile /run/docker-exec/dockerd.pid --iptables=false --ip6tables=false \
	--ip-forward=false --ip-masq=false --bridge=none --storage-driver=vfs \
	--exec-opt native.cgroupdriver=cgroupfs > $VNFS_OUT/dockerd.log 2>&1 &
DOCKERD_PID=$!
check "dockerd came up" until_ok 120 docker_cli version
tar -C $RUN/rootfs -c . | docker_cli import - vnfs-busybox > $VNFS_OUT/docker-import.log 2>&1
check_eq "docker imports the busybox root as an image" $? 0
mkdir -p "$mount_dir/docker"
docker_query() { "$SEND" "$SOCKET" "{\"v\":1,\"type\":\"query\",\"source\":\"container\",\"job\":\"$1\"}"; }

# trainer-d, under Docker's own parent (/docker/<id>): 1 MiB when it
# starts, then, once the helper lists it, 1 MiB more.
docker_cli run -d --name trainer-d --network none --env JOB_NAME=docker-run \
	--volume "$mount_dir/docker:/data" vnfs-busybox /bin/busybox sh -c \
	'dd if=/dev/zero of=/data/trainer bs=1048576 count=1 conv=fsync 2> /dev/null &&
	 until [ -e /data/go ]; do sleep 0.1; done &&
	 dd if=/dev/zero of=/data/trainer bs=1048576 count=1 seek=1 conv=notrunc,fsync 2> /dev/null' \
	> $VNFS_OUT/docker-trainer.log 2>&1
check_eq "docker runs trainer-d" $? 0
trainer_id=$(docker_cli inspect -f '{{.Id}}' trainer-d)
check "trainer-d's cgroup is Docker's default" test -d "$CGROUP_ROOT/docker/$trainer_id"
check "the helper discovered docker's trainer-d" until_ok 60 listed trainer-d
touch "$mount_dir/docker/go"
check "trainer-d exited" until_ok 60 bash -c "[ \"\$(/usr/bin/docker -H $DOCKER_SOCKET inspect -f '{{.State.Status}}' trainer-d)\" = exited ]"
check_eq "trainer-d wrote its file" "$(stat -c %s "$mount_dir/docker/trainer")" $((2 * MIB))
trainer_query=$(docker_query trainer-d)
echo "$trainer_query" > $VNFS_OUT/query-docker-trainer.json
check_eq "trainer-d: one step, its short id" \
	"$(jq -r '[.job.steps[].part] | join(",")' <<< "$trainer_query")" "${trainer_id:0:12}"
check_eq "trainer-d: write bytes before and after discovery, exactly" \
	"$(jq '.job.steps[0].operations.write.bytes' <<< "$trainer_query")" $((2 * MIB))
check_eq "trainer-d: write calls, exactly" \
	"$(jq '.job.steps[0].operations.write.count' <<< "$trainer_query")" 2
check_eq "trainer-d: fsync calls, exactly" \
	"$(jq '.job.steps[0].operations.fsync.count' <<< "$trainer_query")" 2
check_eq "trainer-d: its JOB_NAME variable as a tag" \
	"$(jq -r '.job.steps[0].tags.JOB_NAME' <<< "$trainer_query")" docker-run
check "trainer-d finished when its cgroup went" until_ok 30 not_listed trainer-d

# loader-d, under a parent of the admin's (--cgroup-parent), writes 1 MiB
# and exits at once: the helper knows it from its cgroup's making, while
# Docker keeps its record of the stopped container.
docker_cli run --name loader-d --network none --cgroup-parent /vnfs-docker \
	--volume "$mount_dir/docker:/data" vnfs-busybox /bin/busybox dd if=/dev/zero \
	of=/data/loader bs=1048576 count=1 conv=fsync > $VNFS_OUT/docker-loader.log 2>&1
check_eq "docker runs loader-d to its end" $? 0
loader_id=$(docker_cli inspect -f '{{.Id}}' loader-d)
check "the helper knew loader-d as its cgroup was made" \
	until_ok 60 grep -q "cgroup /vnfs-docker/$loader_id made: container loader-d" $VNFS_OUT/helper.log
check_eq "loader-d wrote its file" "$(stat -c %s "$mount_dir/docker/loader")" $MIB
check "loader-d finished when its cgroup went" until_ok 60 bash -c \
	"sqlite3 $RUN/history.db \"SELECT finished FROM steps WHERE source = 'container' AND job = 'loader-d'\" | grep -qx 1"
loader_query=$("$BUILD/vnfs-report" --database $RUN/history.db --socket $SOCKET -j container:loader-d --json)
echo "$loader_query" > $VNFS_OUT/report-docker-loader.json
check_eq "loader-d: write bytes, exactly" "$(jq '.jobs[0].operations.write.bytes' <<< "$loader_query")" $MIB
check_eq "loader-d: write calls, exactly" "$(jq '.jobs[0].operations.write.count' <<< "$loader_query")" 1
check_eq "loader-d: fsync calls, exactly" "$(jq '.jobs[0].operations.fsync.count' <<< "$loader_query")" 1
check_eq "the history holds trainer-d, finished, with its bytes" \
	"$(sqlite3 $RUN/history.db "SELECT o.bytes FROM steps s JOIN step_operations o ON o.step = s.id WHERE s.source = 'container' AND s.job = 'trainer-d' AND s.finished = 1 AND o.operation = 'write'")" $((2 * MIB))

# A cgroup named like a Docker container's, made by hand, with a real
# container's id under a parent Docker did not give it: Docker's record
# names another cgroup, so it is no container (the data decided on, as for
# the pods' look-alike above).
DOCKER_LOOKALIKE=/vnfs-fake-docker/$trainer_id
mkdir -p "$CGROUP_ROOT$DOCKER_LOOKALIKE"
sh -c "echo \$\$ > $CGROUP_ROOT$DOCKER_LOOKALIKE/cgroup.procs &&
	exec dd if=/dev/zero of=$mount_dir/docker/lookalike bs=4096 count=1 conv=fsync 2> /dev/null"
check "the docker look-alike's write is counted, unattributed" until_ok 60 lookalike_seen "$DOCKER_LOOKALIKE"
check "an interval was collected since" until_ok 60 collected_beyond 127.0.0.1:9717 "$(helper_collections 127.0.0.1:9717)"
check_eq "a docker look-alike is no container: trainer-d is still one step, in the history" \
	"$(sqlite3 $RUN/history.db "SELECT count(*) FROM steps WHERE source = 'container' AND job = 'trainer-d'")" 1
check "nor is it listed" not_listed trainer-d
rmdir "$CGROUP_ROOT$DOCKER_LOOKALIKE" "$CGROUP_ROOT/vnfs-fake-docker"
docker_cli rm -f trainer-d loader-d > /dev/null
kill -TERM $DOCKERD_PID
wait $DOCKERD_PID

kill -TERM $HELPER_PID
wait $HELPER_PID
check_eq "helper exit status after SIGTERM" $? 0
check "no sanitizer report in the helper's log" bash -c "! grep -qE 'Sanitizer|runtime error' $VNFS_OUT/helper.log"
guest_done
