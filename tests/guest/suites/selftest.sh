#!/bin/bash
# tests/guest/suites/selftest.sh MODE [ARG...] — suites that go wrong on
# purpose, booted by tests/guest/test-runner to prove the runner reports
# each as a failure; `pass` is the control.  Every mode first passes one
# check, so the counts below are exact.
#   fail   the helpers' pass and fail paths: 11 checks pass, exactly 7 fail
#          (expects the arguments: fail 'two words' '' last), the 7th
#          guest.sh's own of the kernel's log, given a warning's first line
#          through /dev/kmsg
#   abort  exits with status 3 in the middle, before guest_done
#   hang   sleeps past the runner's timeout
#   panic  crashes the kernel (sysrq c)
#   pass   7 checks, all passing (cgroup layout, /var/lib skeleton, and
#          guest.sh's own of the kernel's log)
source /vnfs/src/tests/guest/lib/guest.sh

# check_cgroup_layout: two checks that the cgroup mounts match --cgroup.
check_cgroup_layout() {
	check_eq "cgroup2 is mounted at $VNFS_CGROUP2_MOUNT" "$(stat -f -c %T "$VNFS_CGROUP2_MOUNT")" cgroup2fs
	case $VNFS_CGROUP_MODE in
	v2) check_eq "pure v2: /proc/self/cgroup is '0::/'" "$(cat /proc/self/cgroup)" "0::/" ;;
	hybrid) check_eq "hybrid: memory is a cgroup v1 hierarchy" "$(stat -f -c %T /sys/fs/cgroup/memory)" cgroupfs ;;
	*) fail "unknown VNFS_CGROUP_MODE '$VNFS_CGROUP_MODE'" ;;
	esac
}

mode=${1:-}
check "selftest: the guest runs a suite" test -d "$VNFS_SRC/tests/guest"

case $mode in
fail)
	check_eq "arguments arrive intact" "$#|${2-unset}|${3-unset}|${4-unset}" "4|two words||last"
	check_eq "equal strings" "same" "same"
	check_le "3 <= 5" 3 5
	check_le "5 <= 5" 5 5
	check_ge "7 >= -2" 7 -2
	( check "a check in a subshell counts" true )
	flag=/tmp/selftest-flag
	(sleep 0.3; : > "$flag") &
	check "until_ok sees a file appear" until_ok 5 test -e "$flag"
	check_eq "as_user runs as $VNFS_TEST_USER" "$(as_user "$VNFS_TEST_USER" id -u)" "$(id -u "$VNFS_TEST_USER")"
	check_cgroup_layout
	# The failures, each with a message the test-runner looks for.
	check_eq "intended mismatch" "actual-value" "expected-value"
	check_le "intended 6 <= 5" 6 5
	check_ge "intended 4 >= 5" 4 5
	check_le "intended non-integer" 1x 5
	check "intended false" false
	check "intended until_ok timeout" until_ok 1 false
	echo '------------[ cut here ]------------' > /dev/kmsg
	echo 'intended kernel warning' > /dev/kmsg
	guest_done
	;;
abort)
	say "exiting with status 3 before guest_done"
	exit 3
	check "never reached" true
	guest_done
	;;
hang)
	say "sleeping past the timeout"
	sleep 100000
	guest_done
	;;
panic)
	say "crashing the kernel"
	echo c > /proc/sysrq-trigger
	sleep 30
	guest_done
	;;
pass)
	check_eq "equal strings" "same" "same"
	check_ge "uptime is positive" "$(cut -d. -f1 /proc/uptime)" 0
	check_cgroup_layout
	check_eq "/var/lib/munge keeps its owner on the tmpfs" "$(stat -c %U /var/lib/munge)" munge
	guest_done
	;;
*)
	fail "selftest: unknown MODE '$mode' (fail, abort, hang, panic or pass)"
	guest_done
	;;
esac
