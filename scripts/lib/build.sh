# scripts/lib/build.sh — one way to build vnfs for scripts/demo and
# scripts/check (sourced; $top is the source tree).
#
# Where: an in-tree configuration (./configure run in the source tree, as
# README.md's "From source" does) is reused as it is, since autoconf refuses
# an out-of-tree build beside it; otherwise the build is out of tree, in
# build/.  Quietly: the compiler's and make's output go to BUILD/build.log,
# and only its last lines are shown when a step fails.

# vnfs_build_dir: the directory to build in (printed).
vnfs_build_dir() {
	if [ -f "$top/config.status" ]; then
		echo "$top"
	else
		echo "$top/build"
	fi
}

# vnfs_build_step LOG DESCRIPTION COMMAND...: runs COMMAND with its output
# appended to LOG; on failure says what failed and shows LOG's last lines.
vnfs_build_step() {
	local log=$1 description=$2
	shift 2
	if ! "$@" >> "$log" 2>&1; then
		echo "build: $description failed; the last lines of $log:" >&2
		tail -n 30 "$log" >&2
		return 1
	fi
}

# vnfs_build BUILD_DIR: configures (once) and builds everything, and the
# test programs the guest suites run, into BUILD_DIR.
vnfs_build() {
	local build=$1 log=$1/build.log jobs
	jobs=$(nproc)
	mkdir -p "$build" || return 1
	: > "$log" || return 1
	echo "building in $build (details: $log)"
	if [ ! -x "$top/configure" ] || [ "$top/configure.ac" -nt "$top/configure" ]; then
		vnfs_build_step "$log" "autoreconf" autoreconf -fi "$top" || return 1
	fi
	if [ ! -f "$build/Makefile" ] || [ "$top/configure" -nt "$build/Makefile" ]; then
		vnfs_build_step "$log" "configure" \
			bash -c 'cd "$1" && "$2/configure" --enable-werror -q' _ "$build" "$top" || return 1
	fi
	vnfs_build_step "$log" "make" make -C "$build" -j"$jobs" -s || return 1
	# The test programs too (TESTS= builds them and runs none).
	vnfs_build_step "$log" "make check's programs" make -C "$build" -j"$jobs" -s check TESTS= ||
		return 1
}
