# tests/package/lib.sh — what the package tests share: the check counters and
# their closing line, and the one dist tarball (and .deb) that deb-test and
# rpm-test both use, so a scripts/check run builds the tree for packages once.
#
# Sourced, not run.  Work files live in $VNFS_PACKAGE_WORK (default
# /var/tmp/vnfs-package): the tarball, the builds, the packages and logs.
# The tarball and .deb are rebuilt whenever the tree changed since they were
# made (VNFS_PACKAGE_REUSE=1 keeps them).

package_work=${VNFS_PACKAGE_WORK:-/var/tmp/vnfs-package}
passed=0
failed=0

pass() { passed=$((passed + 1)); echo "PASS: $1"; }
fail() { failed=$((failed + 1)); echo "FAIL: $1"; }

# check DESCRIPTION COMMAND...: passes when COMMAND exits 0.
check() {
	local description=$1
	shift
	if "$@"; then
		pass "$description"
	else
		fail "$description (exit status $?)"
	fi
}

# check_eq DESCRIPTION ACTUAL EXPECTED
check_eq() {
	if [ "$2" == "$3" ]; then
		pass "$1"
	else
		fail "$1: got '$2', expected '$3'"
	fi
}

# finish: the closing line; the exit status says whether anything failed.
# A run that checked nothing has failed too.
finish() {
	[ $((passed + failed)) -gt 0 ] || fail "no check ran"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}

# abort MESSAGE: a step the remaining checks depend on failed.
abort() {
	fail "$1"
	finish
	exit 1
}

# show_log FILE: the end of a build log, for a failure's diagnosis.
show_log() {
	echo "---- last lines of $1:"
	tail -n 40 "$1"
	echo "----"
}

# The source tree: the first argument, else the tree this script is in.
package_source_tree() {
	local tree=${1:-$(dirname "${BASH_SOURCE[0]}")/../..}
	(cd "$tree" && pwd -P)
}

package_version() {
	sed -n 's/^AC_INIT(\[vnfs\], \[\([^]]*\)\].*/\1/p' "$1/configure.ac"
}

# _stale FILE TREE: succeeds when a source file of TREE is newer than FILE
# (build trees, guest results and VCS data do not count).  With
# VNFS_PACKAGE_REUSE=1 an existing FILE is always reused (while iterating on
# one package test in a tree that others keep editing).
_stale() {
	local file=$1 tree=$2 newer
	[ -f "$file" ] || return 0
	[ "${VNFS_PACKAGE_REUSE:-0}" = 1 ] && return 1
	newer=$(find "$tree" \( -name 'build' -o -name 'build-*' -o -name '.git' -o -name 'autom4te.cache' \
		-o -path "$tree/tests/guest/out" \) -prune -o -type f -newer "$file" -print -quit)
	[ -n "$newer" ]
}

# package_tarball TREE: prints the path of vnfs-VERSION.tar.gz made by
# `make dist` from TREE, building it only when the tree changed since.
# The work directory is the machine's: a tarball another checkout made (a
# fresh clone's files are older than it) is never taken for this one's;
# $tarball.tree names the tree it came from.
package_tarball() {
	local tree=$1 version tarball build log
	version=$(package_version "$tree")
	[ -n "$version" ] || { echo "lib.sh: no version in $tree/configure.ac" >&2; return 1; }
	tarball=$package_work/vnfs-$version.tar.gz
	if _stale "$tarball" "$tree" || [ "$(cat "$tarball.tree" 2> /dev/null)" != "$tree" ]; then
		build=$package_work/dist-build
		log=$package_work/dist.log
		rm -rf -- "$build" "$tarball" && mkdir -p "$build" || return 1
		echo "lib.sh: make dist from $tree (log: $log)" >&2
		# A tree configured in place cannot be configured again out of
		# tree: its own configuration makes the tarball then.
		if [ -f "$tree/config.status" ]; then
			(make -C "$tree" -j"$(nproc)" dist && mv "$tree/vnfs-$version.tar.gz" "$build/") > "$log" 2>&1
		else
			(cd "$build" && "$tree/configure" -q --disable-tests && make -j"$(nproc)" dist) > "$log" 2>&1
		fi
		if [ $? != 0 ]; then
			show_log "$log" >&2
			return 1
		fi
		mv "$build/vnfs-$version.tar.gz" "$tarball" || return 1
		echo "$tree" > "$tarball.tree" || return 1
		rm -rf -- "$build"
	fi
	echo "$tarball"
}

# package_deb TREE: prints the path of the .deb built with dpkg-buildpackage
# from the dist tarball with contrib/debian as debian/ (tests skipped: the
# unit tests run elsewhere), building it only when the tarball is newer.
package_deb() {
	local tree=$1 tarball version deb_dir source log deb
	tarball=$(package_tarball "$tree") || return 1
	version=$(package_version "$tree")
	deb_dir=$package_work/deb
	deb=$(ls "$deb_dir"/vnfs_"$version"-*_*.deb 2> /dev/null | head -n 1)
	if [ -z "$deb" ] || { [ "${VNFS_PACKAGE_REUSE:-0}" != 1 ] && [ "$tarball" -nt "$deb" ]; } ||
		_stale "$deb" "$tree/contrib/debian"; then
		log=$package_work/deb.log
		rm -rf -- "$deb_dir" && mkdir -p "$deb_dir" || return 1
		tar -xzf "$tarball" -C "$deb_dir" || return 1
		source=$deb_dir/vnfs-$version
		ln -s "$tarball" "$deb_dir/vnfs_$version.orig.tar.gz" || return 1
		cp -r "$tree/contrib/debian" "$source/debian" || return 1
		echo "lib.sh: dpkg-buildpackage in $source (log: $log)" >&2
		if ! (cd "$source" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" \
			dpkg-buildpackage -us -uc -b -Pnocheck) > "$log" 2>&1; then
			show_log "$log" >&2
			return 1
		fi
		deb=$(ls "$deb_dir"/vnfs_"$version"-*_*.deb 2> /dev/null | head -n 1)
		[ -n "$deb" ] || { echo "lib.sh: dpkg-buildpackage made no .deb" >&2; return 1; }
	fi
	echo "$deb"
}
