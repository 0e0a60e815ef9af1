#!/bin/bash
# tests/guest/suites/probes.sh — the kernel side (bpf/vnfs.bpf.c) and its
# loader (helper/kernel/probes.c) on a real NFS client, through
# tests/guest/probe-driver: exact per-step counts for a known workload on
# NFS v3, v4.0, v4.1 and v4.2, with the probes attached by fentry (mode auto)
# and again by kprobe (forced); attribution to the nearest registered
# ancestor cgroup; unregistered I/O only in "unattributed"; the process and
# mount breakdowns; lock, setattr, link, symlink and listxattr; the map
# layout as bpftool sees it; pinned maps and links surviving a restart of
# the loader without losing a call; bounded rows under a name storm (a step
# makes at most 64 process/mount rows, the node at most 3,072 unattributed
# rows of their own, beyond them "[other]" rows, and the totals add up), the
# expiry of unattributed rows of removed cgroups and idle ones, and reads
# whose return a kretprobe did not report.
#
# Run: tests/guest/run --timeout 900 --build BUILD_DIR tests/guest/suites/probes.sh [MODE...] [--kernel-dependent]
# (BUILD_DIR holds tests/guest/probe-driver; without --build, the in-tree one.)
# MODEs: the probe modes the known workload runs in, auto and kprobe unless
# given (scripts/check's other kernels run auto only: docs/TESTBED.md).
# --kernel-dependent: only the sections whose outcome depends on the
# kernel; the name storms and the expiry run on the default kernel (see there).
# It takes 6-8 minutes under TCG: the workload runs twice on four mounts, and
# loading 56 fentry programs takes 10-25 s there (docs/PROBES.md).
#
# Slots: NFS version number i (0 for v3 .. 3 for v4.2) uses slot 2i for its
# writer cgroup and 2i+1 for its reader cgroup, so one load of the probes
# covers all four versions; slots 8, 9 test the ancestor rule, 10 restarts,
# 11 the remaining operations, 12 the name storm.
source /vnfs/src/tests/guest/lib/guest.sh

driver=$VNFS_BUILD/tests/guest/probe-driver
python=/usr/bin/python3
cgroups=$VNFS_CGROUP2_MOUNT/vnfs-probes
workload=/tmp/probe-workload.py
versions=($NFS_VERSIONS)
mib=1048576
modes=() kernel_dependent_only=0
for argument in "$@"; do
	case $argument in
	auto|kprobe) modes+=("$argument") ;;
	--kernel-dependent) kernel_dependent_only=1 ;;
	*) fail "probes.sh: unknown argument '$argument' (auto, kprobe or --kernel-dependent)"; exit 1 ;;
	esac
done
[ ${#modes[@]} -gt 0 ] || modes=(auto kprobe)

check "the probe driver is built ($driver)" test -x "$driver" || { guest_done; exit 0; }
guest_start_nfs || exit 1
guest_mount_all_nfs || exit 1
mountpoint -q /sys/fs/bpf || check "mount bpffs" mount -t bpf bpf /sys/fs/bpf

# ------------------------------------------------------------------ workload
# Plain system calls through Python's os module (no stdio buffering, no
# hidden stat calls), each part in its own process named by prctl so the
# process breakdown can be checked.
cat > "$workload" <<'EOF'
import ctypes, mmap, os, sys

def name_process(name):
    ctypes.CDLL(None).prctl(15, name.encode(), 0, 0, 0)  # PR_SET_NAME

def writer(directory):
    name_process("vnfs-writer")
    for i in range(10):
        os.close(os.open(f"{directory}/f{i}", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
    fd = os.open(f"{directory}/big", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    block = b"w" * 1048576
    for _ in range(8):
        assert os.write(fd, block) == len(block)
    os.fsync(fd)
    os.close(fd)
    for i in range(3):
        os.rename(f"{directory}/f{i}", f"{directory}/r{i}")
    for i in range(2):
        os.mkdir(f"{directory}/sub{i}")
        os.rmdir(f"{directory}/sub{i}")
    for name in [f"r{i}" for i in range(3)] + [f"f{i}" for i in range(3, 10)]:
        os.unlink(f"{directory}/{name}")

def reader(directory):
    name_process("vnfs-reader")
    fd = os.open(f"{directory}/data4m", os.O_RDONLY)
    while os.read(fd, 4096):
        pass
    os.close(fd)
    assert sorted(os.listdir(directory)) == ["data4m", "map1m"]
    os.stat(f"{directory}/data4m")
    try:
        os.close(os.open(f"{directory}/missing", os.O_RDONLY))
        sys.exit("missing file exists")
    except FileNotFoundError:
        pass
    fd = os.open(f"{directory}/map1m", os.O_RDONLY)
    mapping = mmap.mmap(fd, 1048576, prot=mmap.PROT_READ)
    touched = sum(mapping[offset] for offset in range(0, 1048576, 4096))
    assert touched == 256 * ord("m"), touched
    mapping.close()
    os.close(fd)

def stranger(directory):
    name_process("vnfs-stranger")
    fd = os.open(f"{directory}/stranger", os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    assert os.write(fd, b"s" * 65536) == 65536
    os.close(fd)
    fd = os.open(f"{directory}/stranger", os.O_RDONLY)
    assert len(os.read(fd, 131072)) == 65536
    os.close(fd)

def writes(path, count):
    name_process("vnfs-nested")
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    for _ in range(int(count)):
        assert os.write(fd, b"n" * 4096) == 4096
    os.close(fd)

def extras(directory):
    """The operations the main workload leaves out, once each or twice."""
    import fcntl
    name_process("vnfs-extras")
    fd = os.open(f"{directory}/extra", os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)                          # lock 1
    fcntl.flock(fd, fcntl.LOCK_UN)                          # lock 2
    fcntl.lockf(fd, fcntl.LOCK_EX)                          # lock 3
    fcntl.lockf(fd, fcntl.LOCK_UN)                          # lock 4
    os.ftruncate(fd, 4096)                                  # setattr 1
    os.close(fd)
    os.chmod(f"{directory}/extra", 0o600)                   # setattr 2
    os.link(f"{directory}/extra", f"{directory}/hard")      # link 1
    os.symlink("extra", f"{directory}/soft")                # symlink 1
    os.listxattr(f"{directory}/extra")                      # listxattr 1
    # Left open: the kernel flushes and releases it in exit_files, after
    # the task's exit drain, with PF_EXITING set (counted at once).
    leftover = os.open(f"{directory}/leftover", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    assert os.write(leftover, b"x" * 100) == 100            # write 1

def rename_storm(path, prefix, count):
    """One 4 KiB write per name: prefix-open opens, then prefix0000... each
    write once, so every name but the first makes one row of its own."""
    name_process(f"{prefix}-open")
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    for i in range(int(count)):
        name_process(f"{prefix}{i:04d}")
        assert os.write(fd, b"s" * 4096) == 4096
    os.close(fd)

def storm(cgroup, path, prefix, count, remove):
    """rename_storm in cgroup; with remove == "remove", the cgroup is
    removed afterwards (its unattributed rows then expire)."""
    ok = in_cgroup(cgroup, rename_storm, path, prefix, count)
    if remove == "remove":
        os.rmdir(cgroup)
    sys.exit(0 if ok else 1)

def in_cgroup(cgroup, part, *arguments):
    """Runs part in a child process moved into cgroup; True if it succeeded."""
    child = os.fork()
    if child == 0:
        try:
            with open(f"{cgroup}/cgroup.procs", "w") as procs:
                procs.write(str(os.getpid()))
            part(*arguments)
            os._exit(0)
        except BaseException as error:
            print(f"{part.__name__} {arguments}: {error!r}", file=sys.stderr)
            os._exit(1)
    return os.waitpid(child, 0)[1] == 0

def versions(cgroups, *numbers):
    """The per-version workload: writer, reader after dropping caches, and a
    process of an unregistered cgroup, for every NFS version given."""
    ok = True
    for version in numbers:
        mountpoint = f"/mnt/nfs/v{version}"
        ok &= in_cgroup(f"{cgroups}/v{version}-writer", writer, f"{mountpoint}/w")
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as drop:
            drop.write("3")
        ok &= in_cgroup(f"{cgroups}/v{version}-reader", reader, f"{mountpoint}/r")
        ok &= in_cgroup(f"{cgroups}/stranger", stranger, mountpoint)
    sys.exit(0 if ok else 1)

def nested(*cgroup_path_counts):
    """cgroup path count ...: writes() in each cgroup, one after the other."""
    ok = True
    for i in range(0, len(cgroup_path_counts), 3):
        cgroup, path, count = cgroup_path_counts[i:i + 3]
        ok &= in_cgroup(cgroup, writes, path, count)
    sys.exit(0 if ok else 1)

def other_operations(cgroup, directory):
    sys.exit(0 if in_cgroup(cgroup, extras, directory) else 1)

{"versions": versions, "nested": nested, "other_operations": other_operations,
 "storm": storm}[sys.argv[1]](*sys.argv[2:])
EOF

# prepare: fresh directories and input files on every mount, caches dropped.
prepare() {
	local version mountpoint
	for version in "${versions[@]}"; do
		mountpoint=$(nfs_mount_of "$version")
		rm -rf "$mountpoint/w" "$mountpoint/r" "$mountpoint/stranger"
		mkdir "$mountpoint/w" "$mountpoint/r" &&
			head -c $((4 * mib)) /dev/urandom > "$mountpoint/r/data4m" &&
			$python -c "import sys; sys.stdout.buffer.write(b'm' * 1048576)" > "$mountpoint/r/map1m" ||
			fail "prepare v$version"
	done
	guest_drop_caches
}

# ------------------------------------------------------------ result access
# Under emulation an exec costs tens of milliseconds (docs/TESTBED.md,
# "Writing a suite": /bin/true 114-146 ms beside two other guests, awk
# 220-260), and an awk per check was most of this suite's time.  So each
# driver output is read once, with bash builtins only, into results[], and
# the accessors below look there; a file is read again if it was written
# since.  A reading made inside a $(...) is lost with its subshell: each
# section reads its output first, in the suite's own shell.
declare -A results reading_of
readings=0
# read_results OUTPUT: its rows in results[], under the reading's number.
read_results() {
	local file=$1 reading=${reading_of[$1]-} kind slot key values
	if [ -n "$reading" ] && ! [ "$file" -nt "/tmp/probes-reading.$reading" ]; then
		return 0
	fi
	readings=$((readings + 1))
	reading=$readings
	: > "/tmp/probes-reading.$reading"
	reading_of[$file]=$reading
	while read -r kind slot key values; do
		case $kind in
		op) # key: operation; values: count errors time_ns bytes samples
			results[$reading|op|$slot|$key]=$values
			set -- $values
			add_result "$reading|total|$slot|count" "$1"
			add_result "$reading|total|$slot|errors" "$2"
			add_result "$reading|total|$slot|bytes" "$4" ;;
		size) # key: read|write; values: bucket count (in the order printed)
			set -- $values
			results[$reading|size|$slot|$key|$1]=$2
			results[$reading|sizes|$slot|$key]+="${results[$reading|sizes|$slot|$key]:+ }$1:$2" ;;
		process) # key: comm; values: read_ops read_bytes write_ops write_bytes other_ops
			results[$reading|process|$slot|$key]=$values
			results[$reading|comms|$slot]+="$key " ;;
		mount) # key: device; values: ops errors time_ns read_bytes write_bytes
			set -- $values
			results[$reading|devices|$slot]+="$key "
			add_result "$reading|mount|$slot|ops" "$1"
			add_result "$reading|mount|$slot|errors" "$2"
			add_result "$reading|mount|$slot|read_bytes" "$4"
			add_result "$reading|mount|$slot|write_bytes" "$5" ;;
		activity) results[$reading|activity|$slot]=$key ;;
		esac
	done < "$file"
}
add_result() { results[$1]=$(( ${results[$1]-0} + $2 )); }
# sorted WORDS: the words of the string in order, each followed by a
# space (as `sort | tr '\n' ' '` prints them), by insertion: rows are few.
sorted() {
	local words=() given word i
	read -r -a given <<< "$1"
	for word in "${given[@]}"; do
		i=${#words[@]}
		while [ $i -gt 0 ] && [[ $word < ${words[i - 1]} ]]; do
			words[i]=${words[i - 1]}
			i=$((i - 1))
		done
		words[i]=$word
	done
	[ ${#words[@]} -eq 0 ] || printf '%s ' "${words[@]}"
}
# op_value VARIABLE OUTPUT SLOT OPERATION FIELD: sets VARIABLE to FIELD
# (count, errors, time, bytes or samples: the latency histogram's total),
# or "missing" when the slot has no row of the operation.
op_value() {
	local -n into=$1
	local row fields
	read_results "$2"
	row=${results[${reading_of[$2]}|op|$3|$4]-}
	if [ -z "$row" ]; then
		into=missing
		return
	fi
	read -r -a fields <<< "$row"
	case $5 in
	count) into=${fields[0]} ;; errors) into=${fields[1]} ;; time) into=${fields[2]} ;;
	bytes) into=${fields[3]} ;; samples) into=${fields[4]} ;;
	esac
}
# op_field OUTPUT SLOT OPERATION FIELD: prints it.
op_field() {
	local value
	op_value value "$@"
	echo "$value"
}
# size_count OUTPUT SLOT read|write BUCKET
size_count() {
	read_results "$1"
	echo "${results[${reading_of[$1]}|size|$2|$3|$4]-0}"
}
# size_buckets OUTPUT SLOT read|write: "bucket:count ..." of the nonzero buckets
size_buckets() {
	read_results "$1"
	echo "${results[${reading_of[$1]}|sizes|$2|$3]-}"
}
slot_total() { # OUTPUT SLOT FIELD(count|errors|bytes): sum over operations
	read_results "$1"
	echo "${results[${reading_of[$1]}|total|$2|$3]-0}"
}
mount_total() { # OUTPUT SLOT FIELD(ops|errors|read_bytes|write_bytes)
	read_results "$1"
	echo "${results[${reading_of[$1]}|mount|$2|$3]-0}"
}
mount_devices() { # OUTPUT SLOT
	read_results "$1"
	sorted "${results[${reading_of[$1]}|devices|$2]-}"
}
process_line() { # OUTPUT SLOT COMM: "read_ops read_bytes write_ops write_bytes other_ops"
	read_results "$1"
	echo "${results[${reading_of[$1]}|process|$2|$3]-}"
}
process_fields() { # OUTPUT SLOT COMM FIRST LAST: fields FIRST to LAST (from 1) of its line
	local fields
	read_results "$1"
	read -r -a fields <<< "${results[${reading_of[$1]}|process|$2|$3]-}"
	echo "${fields[*]:$4 - 1:$5 - $4 + 1}"
}
process_comms() { # OUTPUT SLOT
	read_results "$1"
	sorted "${results[${reading_of[$1]}|comms|$2]-}"
}
step_activity() { # OUTPUT SLOT
	read_results "$1"
	echo "${results[${reading_of[$1]}|activity|$2]-}"
}

# check_op OUTPUT SLOT LABEL OPERATION FIELD EXPECTED
check_op() {
	local value
	op_value value "$1" "$2" "$4" "$5"
	check_eq "$3: $4 $5" "$value" "$6"
}

# check_workload OUTPUT MODE: every assertion on one run of the workload.
check_workload() {
	local output=$1 mode=$2 index=0 version writer reader label device expected
	local read_total write_total op bytes
	read_results "$output" # here: in a $(...) its reading would be lost
	for version in "${versions[@]}"; do
		writer=$((2 * index)) reader=$((2 * index + 1))
		index=$((index + 1))
		label="$mode v$version writer (slot $writer)"
		device=$(mountpoint -d "$(nfs_mount_of "$version")")

		# Exact: one call per system call that reaches the client.
		check_op "$output" $writer "$label" write count 8
		check_op "$output" $writer "$label" write bytes $((8 * mib))
		check_op "$output" $writer "$label" write errors 0
		check_op "$output" $writer "$label" write samples 8
		check_eq "$label: write sizes all 1 MiB (bucket 20)" \
			"$(size_buckets "$output" $writer write)" "20:8"
		check_op "$output" $writer "$label" fsync count 1
		check_op "$output" $writer "$label" rename count 3
		check_op "$output" $writer "$label" rename errors 0
		check_op "$output" $writer "$label" mkdir count 2
		check_op "$output" $writer "$label" rmdir count 2
		check_op "$output" $writer "$label" unlink count 10
		check_op "$output" $writer "$label" unlink errors 0
		check_op "$output" $writer "$label" open count 11
		check_op "$output" $writer "$label" open errors 0
		check_op "$output" $writer "$label" close count 11
		check_op "$output" $writer "$label" flush count 11
		check_op "$output" $writer "$label" read count 0
		check_op "$output" $writer "$label" mmap_read count 0
		check_op "$output" $writer "$label" readdir count 0
		# NFSv3 creates through ->create; NFSv4 creates inside its OPEN
		# (->atomic_open), which counts as an open and a create: the same
		# counts on every version.
		check_op "$output" $writer "$label" create count 11
		check_eq "$label: no errors at all" "$(slot_total "$output" $writer errors)" 0
		# Bounded: lookup and access depend on the dentry and access caches
		# (an exclusive create's lookup is one call without an RPC; a
		# revalidated name needs none), so only their presence and a
		# ceiling are fixed.
		check_le "$label: lookup calls bounded" "$(op_field "$output" $writer lookup count)" 40
		check_ge "$label: access calls seen" "$(op_field "$output" $writer access count)" 1
		check_eq "$label: process breakdown is the writer alone" \
			"$(process_comms "$output" $writer)" "vnfs-writer "
		check_eq "$label: writer's data ops by process" \
			"$(process_fields "$output" $writer vnfs-writer 1 4)" "0 0 8 $((8 * mib))"
		check_eq "$label: mount breakdown is this mount ($device)" \
			"$(mount_devices "$output" $writer)" "$device "

		label="$mode v$version reader (slot $reader)"
		check_op "$output" $reader "$label" read count 1025
		check_op "$output" $reader "$label" read bytes $((4 * mib))
		check_op "$output" $reader "$label" read errors 0
		check_eq "$label: read sizes 1024 x 4 KiB (bucket 12) + EOF (bucket 0)" \
			"$(size_buckets "$output" $reader read)" "0:1 12:1024"
		check_op "$output" $reader "$label" readdir count 2
		check_op "$output" $reader "$label" mmap count 1
		# The page faults of the mapped 1 MiB file, and not the readahead
		# inside read(): exactly the file's size.
		check_op "$output" $reader "$label" mmap_read bytes $mib
		check_ge "$label: mmap_read calls" "$(op_field "$output" $reader mmap_read count)" 1
		check_op "$output" $reader "$label" write count 0
		check_op "$output" $reader "$label" close count 2
		# Python's mmap keeps a dup() of the descriptor: one more close().
		check_op "$output" $reader "$label" flush count 3
		# Opening a missing name: NFSv4 asks the server (OPEN fails,
		# counted as a failed open); NFSv3 learns it from LOOKUP and
		# never calls ->open.
		if [ "$version" = 3 ]; then
			check_op "$output" $reader "$label" open count 2
			check_op "$output" $reader "$label" open errors 0
		else
			check_op "$output" $reader "$label" open count 3
			check_op "$output" $reader "$label" open errors 1
		fi
		# stat() and mmap's fstat(): nfs_getattr once each; revalidation
		# RPCs are internal to it, so the count is exact but kept as a
		# bound in case a kernel adds an internal getattr.
		check_ge "$label: getattr calls" "$(op_field "$output" $reader getattr count)" 2
		check_le "$label: getattr calls bounded" "$(op_field "$output" $reader getattr count)" 6
		check_ge "$label: lookup calls seen" "$(op_field "$output" $reader lookup count)" 1
		check_eq "$label: process breakdown is the reader alone" \
			"$(process_comms "$output" $reader)" "vnfs-reader "
		check_eq "$label: reader's bytes by process (read + mmap_read)" \
			"$(process_fields "$output" $reader vnfs-reader 2 4)" "$((5 * mib)) 0 0"
		check_eq "$label: mount breakdown is this mount ($device)" \
			"$(mount_devices "$output" $reader)" "$device "

		for slot in $writer $reader; do
			check_eq "$mode v$version slot $slot: mount ops add up to the operations" \
				"$(mount_total "$output" $slot ops)" "$(slot_total "$output" $slot count)"
			check_eq "$mode v$version slot $slot: mount errors add up" \
				"$(mount_total "$output" $slot errors)" "$(slot_total "$output" $slot errors)"
			# The helper copies a step's counters only when its activity
			# moved: every call counted must have moved it, once.
			check_eq "$mode v$version slot $slot: step_activity is the calls counted" \
				"$(step_activity "$output" $slot)" \
				"$(slot_total "$output" $slot count)"
			read_total=$(( $(op_field "$output" $slot read bytes) + $(op_field "$output" $slot mmap_read bytes) ))
			write_total=$(op_field "$output" $slot write bytes)
			check_eq "$mode v$version slot $slot: mount read bytes add up" \
				"$(mount_total "$output" $slot read_bytes)" "$read_total"
			check_eq "$mode v$version slot $slot: mount write bytes add up" \
				"$(mount_total "$output" $slot write_bytes)" "$write_total"
			for op in read write open getattr; do
				[ "$(op_field "$output" $slot $op count)" = 0 ] && continue
				check_eq "$mode v$version slot $slot: $op timed once per call" \
					"$(op_field "$output" $slot $op samples)" "$(op_field "$output" $slot $op count)"
			done
		done
	done

	# Unregistered cgroup: only in unattributed, with its comm and bytes.
	local stranger_id
	stranger_id=$(stat -c %i "$cgroups/stranger")
	check_eq "$mode: unattributed holds only the unregistered cgroup" \
		"$(awk '$1 == "unattributed_bytes" { print $2 }' "$output" | sort -u | tr '\n' ' ')" "$stranger_id "
	check_eq "$mode: unattributed process name" \
		"$(awk '$1 == "unattributed_bytes" { print $4 }' "$output" | sort -u | tr '\n' ' ')" "vnfs-stranger "
	check_eq "$mode: unattributed write bytes (4 x 64 KiB)" \
		"$(awk '$1 == "unattributed_bytes" { total += $7 } END { print total + 0 }' "$output")" $((4 * 65536))
	check_eq "$mode: unattributed read bytes (4 x 64 KiB)" \
		"$(awk '$1 == "unattributed_bytes" { total += $6 } END { print total + 0 }' "$output")" $((4 * 65536))
	check_eq "$mode: unattributed write calls" \
		"$(awk '$1 == "unattributed" && $5 == "write" { total += $6 } END { print total + 0 }' "$output")" 4
	check_ge "$mode: health counters printed" "$(awk '$1 == "health"' "$output" | wc -l)" 12
	check_eq "$mode: health counters all zero (any that is not is named here)" \
		"$(awk '$1 == "health" && $3 != 0 { printf "%s ", $2 }' "$output")" ""
}

# ----------------------------------------------------------------- the runs
kernel_functions=/tmp/kernel-functions.txt
awk '$2 == "t" || $2 == "T" { print $3 }' /proc/kallsyms | sort -u > "$kernel_functions"
# kprobe.multi (5.18) needs a kernel built with fprobe, whose link type is
# then in its BTF: Debian's 6.1 has none, its 6.12 has.  There mode kprobe
# attaches every function at once (helper/kernel/kprobe_multi.c).
kprobes_at_once=0
bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null |
	grep -q "STRUCT 'bpf_kprobe_multi_link'" && kprobes_at_once=1
say "kprobes at once (kprobe.multi): $kprobes_at_once"
# Without it, from 5.15 (BPF cookies on perf links, whose type is then in
# the BTF), each function's kprobe pair is its own two links to the two
# generic programs, told the function by the cookie
# (helper/kernel/kprobe_cookies.c): 6.1.  5.10 takes each slot's own pair.
kprobes_by_cookie=0
[ $kprobes_at_once = 0 ] && bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null |
	grep -q "STRUCT 'bpf_perf_link'" && kprobes_by_cookie=1
say "kprobes by cookie: $kprobes_by_cookie"
mkdir -p "$cgroups/stranger" || fail "mkdir cgroups"
registrations=()
index=0
for version in "${versions[@]}"; do
	mkdir -p "$cgroups/v$version-writer" "$cgroups/v$version-reader"
	registrations+=(--register "$cgroups/v$version-writer=$((2 * index))"
		--register "$cgroups/v$version-reader=$((2 * index + 1))")
	index=$((index + 1))
done

for mode in "${modes[@]}"; do
	prepare
	output=$VNFS_OUT/driver-$mode.txt
	say "workload with probes in mode $mode"
	check "$mode: driver and workload ran" \
		"$driver" --mode $mode "${registrations[@]}" -- $python "$workload" versions "$cgroups" "${versions[@]}" \
		> "$output" 2> "$VNFS_OUT/driver-$mode.err"
	grep -E '^probe-driver: (info|warning|error)' "$VNFS_OUT/driver-$mode.err" | head -40
	grep '^timing' "$output"
	# auto: fentry, where the nfs module has BTF (from 5.11 on).
	expected=kprobe
	[ $mode = auto ] && [ -e /sys/kernel/btf/nfs ] && expected=fentry
	check_eq "$mode: every operation attached by $expected" \
		"$(awk '$1 == "method" { print $3 }' "$output" | sort -u | tr '\n' ' ')" "$expected "
	# Relocated against the kernel types copied out of its BTF
	# (helper/kernel/core_btf.c), not libbpf's search: the exact counts
	# below then hold for that copy.
	check "$mode: the probes were relocated against the copied kernel types" \
		grep -Eq '^probe-driver: info: CO-RE: relocating against [1-9][0-9]* kernel types' \
		"$VNFS_OUT/driver-$mode.err"
	check_ge "$mode: the driver lists the hook table" "$(grep -c '^hooked ' "$output")" 1
	check_eq "$mode: the driver reports every function of the table" \
		"$(grep -c '^hook ' "$output")" "$(grep -c '^hooked ' "$output")"
	# The hooked functions differ between kernels (docs/PROBES.md): each one
	# the kernel has (/proc/kallsyms) attaches; the loader reports each one it
	# lacks as "skipped (not in this kernel)", its own words for an absent
	# function, which this asserts exactly.
	check_eq "$mode: each hooked function the kernel has attached by $expected, each it lacks reported absent" \
		"$(awk '$1 == "hook" { sub(/:$/, "", $2); $1 = ""; print }' "$output" |
			while read -r function method; do
				if grep -qx -- "$function" "$kernel_functions"; then
					# ("kprobe after fentry: REASON" in mode auto without module BTF)
					[ "${method%% *}" = "$expected" ] || echo "$function: $method"
				else
					[ "$method" = "skipped (not in this kernel)" ] || echo "$function: $method"
				fi
			done)" ""
	if [ $mode = kprobe ]; then
		# Each function the kernel has, by one of two links or a pair of its own.
		at_once=$(awk '$1 == "hook" && $3 == "kprobe" && $4 == "(at" && $5 == "once)"' "$output" | wc -l)
		attached=$(awk '$1 == "hook" && $3 == "kprobe"' "$output" | wc -l)
		if [ $kprobes_at_once = 1 ]; then
			check_eq "kprobe: every function attached at once" "$at_once" "$attached"
			check_eq "kprobe: the loader says so, with their number" \
				"$(grep -Ec "info: kprobes: $attached functions attached at once \(kprobe.multi\) in [0-9]+ ms" \
					"$VNFS_OUT/driver-$mode.err")" 1
		else
			check_eq "kprobe: a pair of kprobes per function (no kprobe.multi here)" "$at_once" 0
			by_cookie=$(awk '$1 == "hook" && $3 == "kprobe" && $4 == "(by" && $5 == "cookie)"' "$output" | wc -l)
			expected_by_cookie=0
			[ $kprobes_by_cookie = 1 ] && expected_by_cookie=$attached
			check_eq "kprobe: pairs to the generic programs, by cookie, on every function ($kprobes_by_cookie) or none" \
				"$by_cookie" "$expected_by_cookie"
		fi
	fi
	check_workload "$output" $mode
	mark "workload-$mode"
done

# ------------------------------------------------ nearest registered ancestor
# parent (slot 8) with children: child (slot 9, registered) and other
# (unregistered): the child's calls go to the child, other's to the parent.
parent=$cgroups/parent
mkdir -p "$parent/child" "$parent/other" "$parent/other/deeper"
m=$(nfs_mount_of 4.2)
output=$VNFS_OUT/driver-ancestor.txt
check "ancestor: driver and workload ran" \
	"$driver" --register "$parent=8" --register "$parent/child=9" -- $python "$workload" nested \
	"$parent/child" "$m/child" 2 "$parent/other" "$m/other" 3 "$parent/other/deeper" "$m/deeper" 5 \
	> "$output" 2> "$VNFS_OUT/driver-ancestor.err"
read_results "$output" # here: in a $(...) its reading would be lost
check_eq "ancestor: registered child keeps its own writes" "$(op_field "$output" 9 write count)" 2
check_eq "ancestor: unregistered children count for the registered parent" \
	"$(op_field "$output" 8 write count)" 8
check_eq "ancestor: no unattributed calls" \
	"$(awk '$1 == "unattributed_bytes"' "$output" | wc -l)" 0
mark ancestor

# -------------------------------------------------- the remaining operations
# lock (flock and POSIX), setattr (ftruncate, chmod), link, symlink and
# listxattr, once or twice each, in slot 11 on v4.2.
mkdir -p "$cgroups/extras" "$m/extras"
output=$VNFS_OUT/driver-extras.txt
check "extras: driver and workload ran" \
	"$driver" --register "$cgroups/extras=11" -- $python "$workload" other_operations \
	"$cgroups/extras" "$m/extras" > "$output" 2> "$VNFS_OUT/driver-extras.err"
check_op "$output" 11 "extras (slot 11)" lock count 4
check_op "$output" 11 "extras (slot 11)" lock errors 0
check_op "$output" 11 "extras (slot 11)" setattr count 2
check_op "$output" 11 "extras (slot 11)" setattr errors 0
check_op "$output" 11 "extras (slot 11)" link count 1
check_op "$output" 11 "extras (slot 11)" symlink count 1
check_op "$output" 11 "extras (slot 11)" listxattr count 1
check_op "$output" 11 "extras (slot 11)" listxattr errors 0
check_op "$output" 11 "extras (slot 11)" open count 2
check_op "$output" 11 "extras (slot 11)" write count 1
check_op "$output" 11 "extras (slot 11)" write bytes 100
# The file left open is flushed and released by the kernel at exit.
check_op "$output" 11 "extras (slot 11)" flush count 2
check_op "$output" 11 "extras (slot 11)" close count 2
mark extras

# The bounds (name storms) and the expiry: the same BPF code and maps on
# every kernel and in the legacy build (which differs in a task's state and
# its batch), so --kernel-dependent leaves them to the default kernel's run.
if [ $kernel_dependent_only = 0 ]; then
	# ------------------------------------------- bounded rows under a name storm
	# Issue 13: a process renaming itself in a loop filled breakdown_stats
	# (16,384 rows) and unattributed_stats (4,096).  A step makes at most
	# VNFS_MAX_BREAKDOWN_ENTRIES_PER_STEP (64) rows of its own; its calls beyond
	# go to its "[other]" row and still add up.  Health counter indices are enum
	# vnfs_health_counter: 1 breakdown full, 2 unattributed full, 5 calls in a
	# step's [other] row, 6 in a uid's [other] row, 7 rows expired.
	health_of() { # OUTPUT INDEX
		awk -v index_="$2" '$1 == "health" && $2 == index_ { print $3 }' "$1"
	}
	process_rows() { # OUTPUT SLOT: process rows of the slot
		awk -v slot="$2" '$1 == "process" && $2 == slot' "$1" | wc -l
	}
	process_sum() { # OUTPUT SLOT COLUMN(4 read_ops .. 8 other_ops; 0: all ops)
		awk -v slot="$2" -v column="$3" '$1 == "process" && $2 == slot {
			total += column ? $column : $4 + $6 + $8 } END { print total + 0 }' "$1"
	}
	mkdir -p "$cgroups/storm" "$m/storm"
	output=$VNFS_OUT/driver-storm.txt
	say "name storm: one step renames itself 200 times"
	check "storm: driver and workload ran" \
		"$driver" --register "$cgroups/storm=12" -- $python "$workload" storm \
		"$cgroups/storm" "$m/storm/file" storm 200 keep > "$output" 2> "$VNFS_OUT/driver-storm.err"
	read_results "$output"
	# storm-open, then storm0000 .. storm0062: 64 rows; storm0063 .. storm0199
	# (137 writes) and the close at exit in [other].
	check_eq "storm: 64 rows of its own and one [other] row" "$(process_rows "$output" 12)" 65
	check_eq "storm: the 64th row is storm0062's" "$(process_fields "$output" 12 storm0062 3 3)" 1
	check_eq "storm: storm0063 has no row" "$(process_line "$output" 12 storm0063)" ""
	check_eq "storm: [other] has the 137 writes beyond the bound" \
		"$(process_fields "$output" 12 '[other]' 3 4)" "137 $((137 * 4096))"
	check_op "$output" 12 "storm (slot 12)" write count 200
	check_eq "storm: write calls over the process rows = the step's" \
		"$(process_sum "$output" 12 6)" "$(op_field "$output" 12 write count)"
	check_eq "storm: write bytes over the process rows = the step's" \
		"$(process_sum "$output" 12 7)" "$(op_field "$output" 12 write bytes)"
	check_eq "storm: all calls over the process rows = the step's" \
		"$(process_sum "$output" 12 0)" "$(slot_total "$output" 12 count)"
	check_eq "storm: all calls over the mount rows = the step's" \
		"$(mount_total "$output" 12 ops)" "$(slot_total "$output" 12 count)"
	check_eq "storm: health counts the [other] row's calls" "$(health_of "$output" 5)" \
		"$(process_line "$output" 12 '[other]' | awk '{ print $1 + $3 + $5 }')"
	check_eq "storm: breakdown_stats never full" "$(health_of "$output" 1)" 0
	mark storm

	# Unattributed: 3,300 names in an unregistered cgroup.  The node keeps
	# VNFS_MAX_UNATTRIBUTED_NAMED_ENTRIES (3,072) rows of their own: ustorm-open
	# and ustorm0000 .. ustorm3070; the 229 writes beyond go to uid 0's
	# {0, 0, [other]} row.  Then the cgroup is removed and one expiry pass folds
	# its 3,072 rows into uid 0's [expired] row: the totals stay.
	unattributed_rows() { # OUTPUT [CGROUP_ID]
		awk -v id="$2" '$1 == "unattributed_bytes" && (id == "" || $2 == id)' "$1" | wc -l
	}
	unattributed_calls() { # OUTPUT OPERATION [CGROUP_ID COMM]
		awk -v op="$2" -v id="$3" -v comm="$4" '$1 == "unattributed" && $5 == op &&
			(id == "" || ($2 == id && $4 == comm)) { total += $6 } END { print total + 0 }' "$1"
	}
	unattributed_row_calls() { # OUTPUT CGROUP_ID COMM: all calls of one row
		awk -v id="$2" -v comm="$3" '$1 == "unattributed" && $2 == id && $4 == comm {
			total += $6 } END { print total + 0 }' "$1"
	}
	mkdir -p "$cgroups/ustorm"
	ustorm_id=$(stat -c %i "$cgroups/ustorm")
	output=$VNFS_OUT/driver-ustorm.txt
	say "name storm: an unregistered process renames itself 3,300 times"
	check "ustorm: driver and workload ran" \
		"$driver" -- $python "$workload" storm "$cgroups/ustorm" "$m/storm/ufile" ustorm 3300 keep \
		> "$output" 2> "$VNFS_OUT/driver-ustorm.err"
	check_eq "ustorm: 3,072 rows of their own" "$(unattributed_rows "$output" "$ustorm_id")" 3072
	check_eq "ustorm: and one [other] row, nothing else" "$(unattributed_rows "$output")" 3073
	check_eq "ustorm: ustorm3070 has the last row" \
		"$(unattributed_calls "$output" write "$ustorm_id" ustorm3070)" 1
	check_eq "ustorm: ustorm3071 has none" "$(unattributed_calls "$output" write "$ustorm_id" ustorm3071)" 0
	check_eq "ustorm: [other] has the 229 writes beyond" "$(unattributed_calls "$output" write 0 '[other]')" 229
	check_eq "ustorm: every write counted once" "$(unattributed_calls "$output" write)" 3300
	check_eq "ustorm: health counts the [other] row's calls" "$(health_of "$output" 6)" \
		"$(unattributed_row_calls "$output" 0 '[other]')"
	check_eq "ustorm: unattributed_stats never full" "$(health_of "$output" 2)" 0

	mkdir -p "$cgroups/gone"
	gone_id=$(stat -c %i "$cgroups/gone")
	output=$VNFS_OUT/driver-expire.txt
	say "expiry: the storm's cgroup removed, its rows folded"
	check "expire: driver and workload ran" \
		"$driver" --expire-idle-ms 900000 -- $python "$workload" storm "$cgroups/gone" \
		"$m/storm/gfile" gone 3300 remove > "$output" 2> "$VNFS_OUT/driver-expire.err"
	check "expire: the cgroup is gone" test ! -e "$cgroups/gone"
	check_eq "expire: 3,072 rows folded as of a removed cgroup, none idle, none kept" \
		"$(awk '$1 == "expired" { print $2, $3, $4 }' "$output")" "3072 0 0"
	check_eq "expire: no row of the cgroup left" "$(unattributed_rows "$output" "$gone_id")" 0
	check_eq "expire: [other] and [expired] rows remain" \
		"$(awk '$1 == "unattributed_bytes" { print $2, $3, $4 }' "$output" | sort | tr '\n' ' ')" \
		"0 0 [expired] 0 0 [other] "
	check_eq "expire: [expired] has the 3,071 writes of the folded rows" \
		"$(unattributed_calls "$output" write 0 '[expired]')" 3071
	check_eq "expire: every write still counted once" "$(unattributed_calls "$output" write)" 3300
	check_eq "expire: health counts the expired rows" "$(health_of "$output" 7)" 3072
	check_eq "expire: unattributed_stats never full" "$(health_of "$output" 2)" 0

	# Idle rows: with an idle time of 0 every row of a cgroup that still exists
	# is folded as idle (the [other] row too: it has no cgroup to be gone).
	output=$VNFS_OUT/driver-idle.txt
	check "idle: driver and workload ran" \
		"$driver" --expire-idle-ms 0 -- $python "$workload" storm "$cgroups/ustorm" \
		"$m/storm/ifile" idle 5 keep > "$output" 2> "$VNFS_OUT/driver-idle.err"
	check_eq "idle: idle-open and idle0000 .. idle0004 folded as idle" \
		"$(awk '$1 == "expired" { print $2, $3, $4 }' "$output")" "0 6 0"
	check_eq "idle: only the [expired] row remains" \
		"$(awk '$1 == "unattributed_bytes" { print $2, $3, $4 }' "$output" | tr '\n' ' ')" "0 0 [expired] "
	check_eq "idle: [expired] has the 5 writes" "$(unattributed_calls "$output" write 0 '[expired]')" 5
	check_eq "idle: health counts the expired rows" "$(health_of "$output" 7)" 6
	mark expire
fi

# ------------------------------------ returns the kernel does not report
# A kretprobe follows at most maxactive calls of its function in progress
# at once.  The helper makes its return probes in tracefs with the room
# kprobe_calls_in_flight asks (1024 by default; kretprobe_events.c); libbpf
# alone would take the kernel's default, max(10, 2 x possible CPUs).
# 16 readers, each of its own cold file, all held inside nfs_file_read
# (the loopback dropping every packet until all 16 are there):
# - with room for 10 calls, 6 returns go unreported: those calls count
#   nowhere, and their threads' read depth stays raised.  Then, one reader
#   at a time (so that no other return is missed), each reads its file
#   again and closes it: that read is another read system call than the
#   lost one, so the depth starts anew (bpf/vnfs.bpf.c,
#   forget_missed_exit), the read is counted and timed, and the loss is
#   told (health 13, vnfs_helper_missed_exits_total), and the kernel's
#   own count for nfs_file_read says 6 too (kprobe_profile, exported as
#   vnfs_helper_kernel_missed_returns_total{function});
# - with the default room, no return is lost: 32 reads, none missed.
# Kernels with kprobe.multi size their return pool otherwise; the default
# kernel (6.1) attaches a pair each.
missed_readers=16
if [ $kernel_dependent_only = 0 ] && [ $kprobes_at_once = 0 ]; then
	mkdir -p "$cgroups/missed" "$m/missed"
	for ((i = 1; i <= missed_readers; i++)); do
		head -c 65536 /dev/urandom > "$m/missed/f$i" || fail "missed: file $i"
	done
	cat > /tmp/missed-reader.py <<'EOF_READER'
import os, sys, time

def wait_for(path):
    while not os.path.exists(path):
        time.sleep(0.05)

path, signals, number = sys.argv[1:4]
fd = os.open(path, os.O_RDONLY)
open(f"{signals}/ready{number}", "w").close()
wait_for(f"{signals}/go")
assert len(os.read(fd, 65536)) == 65536
open(f"{signals}/first{number}", "w").close()
wait_for(f"{signals}/next{number}")
os.lseek(fd, 0, 0)
assert len(os.read(fd, 65536)) == 65536
os.close(fd)
EOF_READER
	# missed_signals COUNT PATTERN: COUNT files in /tmp/missed match PATTERN.
	missed_signals() { [ "$(ls /tmp/missed | grep -c "$2")" = "$1" ]; }
	# missed_held PID...: every one of them is inside nfs_file_read.
	missed_held() { [ "$(grep -l nfs_file_read $(printf '/proc/%s/stack ' "$@") 2> /dev/null | wc -l)" = $# ]; }
	# missed_workload: inside the driver, in the cgroup of slot 13.
	missed_workload() {
		local i pids=() held=0 status=0
		echo $BASHPID > "$cgroups/missed/cgroup.procs"
		rm -rf /tmp/missed && mkdir /tmp/missed
		grep ' nfs_file_read$' /sys/kernel/tracing/kprobe_events > /tmp/missed/events
		grep -c '^r[0-9]*:vnfs/' /sys/kernel/tracing/kprobe_events > /tmp/missed/return_events
		# One open at a time: 16 in flight at once would lose returns too.
		for ((i = 1; i <= missed_readers; i++)); do
			$python /tmp/missed-reader.py "$m/missed/f$i" /tmp/missed $i &
			pids+=($!)
			until_ok 120 test -e /tmp/missed/ready$i || return 1
		done
		tc qdisc add dev lo root netem loss 100% || return 1
		touch /tmp/missed/go
		until_ok 120 missed_held "${pids[@]}" && held=$missed_readers
		tc qdisc del dev lo root
		echo "missed: all $missed_readers readers inside nfs_file_read at once: $([ $held = $missed_readers ] && echo yes || echo no)"
		[ $held = $missed_readers ] || status=1
		until_ok 120 missed_signals $missed_readers '^first' || status=1
		for ((i = 1; i <= missed_readers; i++)); do
			touch /tmp/missed/next$i
			wait ${pids[i - 1]} || status=1
		done
		return $status
	}
	export -f missed_workload missed_signals missed_held until_ok pause
	export cgroups m python missed_readers
	# missed_run NAME CALLS_IN_FLIGHT: the readers under a driver whose
	# return probes follow CALLS_IN_FLIGHT calls (default: the default's).
	missed_run() {
		local name=$1 room=$2 lost output=$VNFS_OUT/driver-$1.txt
		local room_option=() shown_room=1024
		[ "$room" = default ] || { room_option=(--kprobe-calls-in-flight "$room"); shown_room=$room; }
		lost=$((missed_readers > shown_room ? missed_readers - shown_room : 0))
		guest_drop_caches
		check "$name: driver and the $missed_readers readers ran, all held in nfs_file_read at once" \
			"$driver" --mode kprobe "${room_option[@]}" --register "$cgroups/missed=13" \
			-- bash -c missed_workload > "$output" 2> "$VNFS_OUT/driver-$name.err"
		check_eq "$name: the return probe of nfs_file_read follows $shown_room calls, made in tracefs" \
			"$(sed -E 's/_[0-9]+ / /' /tmp/missed/events)" "r$shown_room:vnfs/nfs_file_read nfs_file_read"
		check_eq "$name: the kretprobe missed $lost returns, counted as missed exits" \
			"$(health_of "$output" 13)" $lost
		# The kernel's own count, per return probe (kprobe_profile), which
		# the helper exports as vnfs_helper_kernel_missed_returns_total.
		check_eq "$name: the kernel's count of nfs_file_read's missed returns" \
			"$(awk '$1 == "missed_return" && $2 == "nfs_file_read" { print $3 }' "$output")" $lost
		check_eq "$name: a count for each of the $(cat /tmp/missed/return_events) return probes in tracefs" \
			"$(grep -c '^missed_return ' "$output")" "$(cat /tmp/missed/return_events)"
		check_eq "$name: no other function's return missed" \
			"$(awk '$1 == "missed_return" && $2 != "nfs_file_read" && $3 != 0' "$output" | wc -l)" 0
		check_op "$output" 13 "$name (slot 13)" read count $((2 * missed_readers - lost))
		check_op "$output" 13 "$name (slot 13)" read bytes $(((2 * missed_readers - lost) * 65536))
		check_op "$output" 13 "$name (slot 13)" read samples $((2 * missed_readers - lost))
		check_op "$output" 13 "$name (slot 13)" open count $missed_readers
		check_op "$output" 13 "$name (slot 13)" close count $missed_readers
		check_eq "$name: the driver gone, its return events are too" \
			"$(grep -c ':vnfs/' /sys/kernel/tracing/kprobe_events)" 0
	}
	missed_run missed 10
	missed_run missed-default default
	mark missed
fi

# ------------------------------------------------- map layout in the kernel
# What bpftool sees while the probes are loaded (memlock per map is kept in
# the results for docs/PROBES.md's memory figure).
maps=$VNFS_OUT/bpftool-maps.txt
programs=$VNFS_OUT/bpftool-programs.txt
links=$VNFS_OUT/bpftool-links.txt
check "maps: listed while the probes are loaded" \
	"$driver" --mode kprobe -- bash -c "bpftool map show > $maps && bpftool prog show > $programs && bpftool link show > $links" \
	> "$VNFS_OUT/driver-maps.txt" 2> "$VNFS_OUT/driver-maps.err"
# The kprobe path's programs as the kernel has them: where pairs go by
# cookie (6.1), the two generic programs (bpftool names them from BTF), one
# perf link to each per kprobed function, and no slot's own program; else
# (5.10) a kprobe and a kretprobe program per function.
kprobed=$(awk '$1 == "hook" && $3 == "kprobe"' "$VNFS_OUT/driver-maps.txt" | wc -l)
# program_id NAME: the id of the loaded program of that name.
program_id() { awk -v name="$1" '$3 == "name" && $4 == name { sub(/:$/, "", $1); print $1 }' "$programs"; }
# links_to ID: perf links to that program.
links_to() { [ -n "$1" ] && awk -v id="$1" '$2 == "perf_event" && $3 == "prog" && $4 == id' "$links" | wc -l || echo 0; }
slots_own=$(awk '$3 == "name" && $4 ~ /^kr?e?t?probe_[0-9]+$/' "$programs" | wc -l)
if [ $kprobes_by_cookie = 1 ]; then
	check_eq "programs: the generic pair, a link to each per kprobed function ($kprobed), no slot's own" \
		"$(program_id kprobe_cookie_entry | wc -l) $(program_id kretprobe_cookie_exit | wc -l) $(links_to "$(program_id kprobe_cookie_entry)") $(links_to "$(program_id kretprobe_cookie_exit)") $slots_own" \
		"1 1 $kprobed $kprobed 0"
elif [ $kprobes_at_once = 0 ]; then
	check_eq "programs: each kprobed function's own pair ($kprobed), no generic one" \
		"$slots_own $(program_id kprobe_cookie_entry | wc -l)" "$((2 * kprobed)) 0"
fi
check "programs: some function was kprobed" test "$kprobed" -gt 0
check_eq "maps: step_stats is an array of 1024 x struct vnfs_step_stats, not mmapable (ABI 6)" \
	"$(awk '$3 == "name" && $4 == "step_stats" { flags = $6; getline; print $1, $2, $3, $4, $5, $6, flags }' "$maps")" \
	"key 4B value 7552B max_entries 1024 0x0"
check_eq "maps: breakdown_entries counts rows per slot (1024 x u64)" \
	"$(awk '$3 == "name" && $4 == "breakdown_entri" { getline; print $1, $2, $3, $4, $5, $6 }' "$maps")" \
	"key 4B value 8B max_entries 1024"
check_eq "maps: unattributed_entries is one mmapable u64" \
	"$(awk '$3 == "name" && $4 == "unattributed_en" { flags = $6; getline; print $1, $2, $3, $4, $5, $6, flags }' "$maps")" \
	"key 4B value 8B max_entries 1 0x400"
# Task storage is 5.11's: before, the legacy build keeps it in a hash map.
task_state_type=task_storage
kernel_before 5 11 && task_state_type=hash
check_eq "maps: task_state is $task_state_type" \
	"$(awk '$3 == "name" && $4 == "task_state" { print $2 }' "$maps")" "$task_state_type"
mark maps

# --------------------------------------------------- pinned restart, no loss
# Load with pins, count one write, exit keeping the pins; a write while no
# loader runs; load again (reusing maps and links) and count a third: slot
# 10 has all three, and its registration survived without re-registering.
pins=/sys/fs/bpf/vnfs-probes-test
mkdir -p "$cgroups/restart"
restart_write() { # N: one 4 KiB write from the restart cgroup
	echo "$python $workload nested $cgroups/restart $m/restart-$1 1"
}
check "restart: first loader counts and keeps its pins" \
	"$driver" --pin-dir "$pins" --keep-pins --register "$cgroups/restart=10" -- $(restart_write 1) \
	> "$VNFS_OUT/driver-restart1.txt" 2> "$VNFS_OUT/driver-restart1.err"
# Kprobes (no module BTF) have perf-event links before 5.15, which cannot be
# pinned: there the maps are, and the loss is said at start.
links_pinnable=0
[ -e /sys/kernel/btf/nfs ] && links_pinnable=1
if [ $links_pinnable = 1 ]; then
	check "restart: pinned maps and links exist" test -e "$pins/step_stats" \
		-a -e "$pins/links/nfs_file_write-entry" -a -e "$pins/links/sched_process_exit-drain"
else
	check "restart: pinned maps exist" test -e "$pins/step_stats"
	check_eq "restart: the loader says the links cannot be pinned" \
		"$(grep -c 'hooked functions (.*) cannot be pinned' "$VNFS_OUT/driver-restart1.err")" 1
fi
check_eq "restart: a fresh pin directory is not taken for another ABI's" \
	"$(grep -c 'replacing' "$VNFS_OUT/driver-restart1.err")" 0
check "restart: a write while no loader runs" $(restart_write 2)
output=$VNFS_OUT/driver-restart2.txt
check "restart: second loader reuses the pins" \
	"$driver" --pin-dir "$pins" --show 10 -- $(restart_write 3) \
	> "$output" 2> "$VNFS_OUT/driver-restart2.err"
if [ $links_pinnable = 1 ]; then
	check_eq "restart: every write counted across the restart" "$(op_field "$output" 10 write count)" 3
	check_eq "restart: links were reused" \
		"$(awk '$1 == "hook" && $2 == "nfs_file_write:" { print $3, $4 }' "$output")" "fentry (reused)"
else
	check_eq "restart: the writes while a loader ran counted, across the restart" \
		"$(op_field "$output" 10 write count)" 2
	check_eq "restart: links made anew" \
		"$(awk '$1 == "hook" && $2 == "nfs_file_write:" { print $3 }' "$output")" "kprobe"
fi
check "restart: pins removed at the end" test ! -e "$pins"
check_eq "restart: no return event of the kprobe path left" \
	"$(grep -c ':vnfs/' /sys/kernel/tracing/kprobe_events)" 0
mark restart

# The same on the kprobe path.  A pair per function (6.1): the return
# probes are kprobe events in tracefs (kretprobe_events.c), held by their
# pinned links while no loader runs, taken over with them, and removed with
# the pins.  Every function at once (6.12): the two links pinned under
# their set's name, taken over by a loader of the same set.
if [ $links_pinnable = 1 ]; then
	output=$VNFS_OUT/driver-restart-kprobe1.txt
	check "restart kprobe: first loader counts and keeps its pins" \
		"$driver" --mode kprobe --pin-dir "$pins" --keep-pins --register "$cgroups/restart=10" \
		-- $(restart_write 4) > "$output" 2> "$VNFS_OUT/driver-restart-kprobe1.err"
	if [ $kprobes_at_once = 1 ]; then
		reused="kprobe (at once) (reused)"
		check_eq "restart kprobe: two links pinned, and none per function" \
			"$(cd "$pins/links" && ls | grep -E '^kprobe-multi-[0-9a-f]{16}-(entry|exit)$' | wc -l) $(ls "$pins/links" | grep -c '^nfs')" "2 0"
	else
		reused="kprobe (reused)"
		kprobed=$(awk '$1 == "hook" && $3 == "kprobe"' "$output" | wc -l)
		check "restart kprobe: functions attached by kprobe ($kprobed)" test "$kprobed" -gt 0
		check_eq "restart kprobe: a return event for 1024 calls per function, kept while pinned" \
			"$(grep -c '^r1024:vnfs/' /sys/kernel/tracing/kprobe_events)" "$kprobed"
	fi
	check "restart kprobe: a write while no loader runs" $(restart_write 5)
	output=$VNFS_OUT/driver-restart-kprobe2.txt
	check "restart kprobe: second loader reuses the pins" \
		"$driver" --mode kprobe --pin-dir "$pins" --show 10 -- $(restart_write 6) \
		> "$output" 2> "$VNFS_OUT/driver-restart-kprobe2.err"
	check_eq "restart kprobe: every write counted across the restart" \
		"$(op_field "$output" 10 write count)" 3
	check_eq "restart kprobe: the links were reused" \
		"$(awk '$1 == "hook" && $2 == "nfs_file_write:" { $1 = $2 = ""; print substr($0, 3) }' "$output")" \
		"$reused"
	check "restart kprobe: pins removed at the end" test ! -e "$pins"
	check_eq "restart kprobe: no return event left" \
		"$(grep -c ':vnfs/' /sys/kernel/tracing/kprobe_events)" 0
	mark restart-kprobe
fi

guest_umount_all_nfs
guest_done
