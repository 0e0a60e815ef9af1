#!/usr/bin/env bash
# containers.sh — Kubernetes containers run by a real OCI runtime (runc),
# registered by their own hooks (vnfs-register --oci-hook): createRuntime
# registers each before its process runs its command, poststop ends it, the
# sandbox's poststop finishes the pod.  Exact counts on NFS v4.2 with no
# late binding: the container writes at once, and every call is its own.
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
enabled = false
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

kill -TERM $HELPER_PID
wait $HELPER_PID
check_eq "helper exit status after SIGTERM" $? 0
check "no sanitizer report in the helper's log" bash -c "! grep -qE 'Sanitizer|runtime error' $VNFS_OUT/helper.log"
guest_done
