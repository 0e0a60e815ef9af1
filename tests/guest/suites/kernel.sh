#!/bin/bash
# tests/guest/suites/kernel.sh — one boot of a kernel of
# the matrix (scripts/check guest-kernel-*, docs/TESTBED.md): the suites
# whose outcome depends on the kernel, one after the other, each in its own
# process, sharing the NFS server and mounts:
#   smoke.sh              the NFS client's round trips on v3, v4.0, v4.1, v4.2
#   probes.sh auto --kernel-dependent
#                         every operation's hooks, method and exact counts
#   helper.sh counts      the helper's methods, logged and exported, and its
#                         exact counts per job over the socket
# A part that ends before its guest_done is a failure; the next still runs.
# The mounts stay from one part to the next (VNFS_SHARED_BOOT).
source /vnfs/src/tests/guest/lib/guest.sh
export VNFS_SHARED_BOOT=1
[ $# = 0 ] || { fail "kernel.sh takes no arguments (got: $*)"; exit 1; }

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
run_part probes.sh auto --kernel-dependent
run_part helper.sh counts
unset VNFS_SHARED_BOOT
guest_umount_all_nfs
guest_done
