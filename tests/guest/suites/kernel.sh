#!/bin/bash
# tests/guest/suites/kernel.sh — one boot of a kernel of
# the matrix (scripts/check guest-kernel-*, docs/TESTBED.md): the suites
# whose outcome depends on the kernel, one after the other, each in its own
# process, sharing the NFS server and mounts:
#   smoke.sh              the NFS client's round trips on v3, v4.0, v4.1, v4.2
#   probes.sh MODE... --kernel-dependent
#                         every operation's hooks, method and exact counts, in
#                         each probe mode given (auto when none: 6.12 adds
#                         kprobe, the kprobes attached at once)
#   helper.sh counts      the helper's methods, logged and exported, and its
#                         exact counts per job over the socket
# A part that ends before its guest_done is a failure; the next still runs.
# The mounts stay from one part to the next (VNFS_SHARED_BOOT).
source /vnfs/src/tests/guest/lib/guest.sh
export VNFS_SHARED_BOOT=1
modes=("$@")
[ ${#modes[@]} -gt 0 ] || modes=(auto)
for mode in "${modes[@]}"; do
	case $mode in
	auto|kprobe) ;;
	*) fail "kernel.sh: unknown probe mode '$mode' (auto or kprobe)"; exit 1 ;;
	esac
done

# run_part SUITE [ARGUMENT...]
run_part() {
	local suite=$1 status
	shift
	rm -f "$VNFS_STATE/completed"
	mark "part-${suite%.sh}"
	bash "$VNFS_SRC/tests/guest/suites/$suite" "$@"
	status=$?
	if [ ! -e "$VNFS_STATE/completed" ]; then
		fail "$suite $*: ended with status $status before its guest_done"
	elif [ $status != 0 ]; then
		fail "$suite $*: exit status $status after its guest_done"
	fi
}

run_part smoke.sh
run_part probes.sh "${modes[@]}" --kernel-dependent
run_part helper.sh counts
unset VNFS_SHARED_BOOT
guest_umount_all_nfs
guest_done
