#!/bin/sh
# check_installed_docs.sh — what vnfs-report --help and the man pages point
# a reader to is installed, and they name it where it is: make install of
# the documents and pages into a scratch DESTDIR, then every $(docdir)/NAME.md
# that --help or an installed page names must be there, no installed page
# may still say docs/NAME.md (the source tree's path), and docs/INSTALL.md
# must be installed (the package tests look for it).  Run from the build
# tree, as make check does.
status=0
fail() { echo "FAIL: $*"; status=1; }

# The sub-makes are make's own, not jobs of the make check that runs us.
run_make() { MAKEFLAGS= MFLAGS= ${MAKE:-make} -s --no-print-directory "$@"; }

dirs=$(run_make print-install-dirs) || { echo "FAIL: make print-install-dirs"; exit 1; }
docdir=$(echo "$dirs" | sed -n 's/^docdir=//p')
mandir=$(echo "$dirs" | sed -n 's/^mandir=//p')
[ -n "$docdir" ] && [ -n "$mandir" ] || { echo "FAIL: no docdir or mandir from make"; exit 1; }

scratch=$(mktemp -d "${TMPDIR:-/tmp}/vnfs-installed-docs.XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT
# One target per make: with -j, goals of one make may run together, and the
# pages must be installed before they are rewritten.
for target in install-dist_docDATA install-man install-man-docdir; do
	run_make "$target" DESTDIR="$scratch" > "$scratch/log" 2>&1 ||
		{ cat "$scratch/log"; echo "FAIL: make $target DESTDIR=$scratch"; exit 1; }
done

[ -f "$scratch$docdir/INSTALL.md" ] || fail "INSTALL.md is not installed in $docdir"

# Every document a text names in $(docdir) is installed there; the names
# are left in $scratch/named.
check_named() {
	what=$1 text=$2
	printf '%s\n' "$text" | grep -o "$docdir/[A-Za-z_]*\.md" | sort -u > "$scratch/named"
	while read -r name; do
		[ -f "$scratch$name" ] || fail "$what names $name, which make install does not install"
	done < "$scratch/named"
}

help=$(./vnfs-report --help) || fail "vnfs-report --help exited $?"
check_named "vnfs-report --help" "$help"
grep -qx "$docdir/JSON.md" "$scratch/named" || fail "vnfs-report --help does not name $docdir/JSON.md"
grep -qx "$docdir/REPORT.md" "$scratch/named" || fail "vnfs-report --help does not name $docdir/REPORT.md"
printf '%s\n' "$help" | grep -q 'docs/' && fail "vnfs-report --help names a source tree path (docs/...)"

pages=$(find "$scratch$mandir" -type f -name '*.[1-8]')
[ -n "$pages" ] || fail "no man page installed under $mandir"
for page in $pages; do
	name=${page#"$scratch"}
	body=$(grep -v '^\.\\"' "$page")
	check_named "$name" "$body"
	printf '%s\n' "$body" | grep -q 'docs/[A-Z]*\.md' &&
		fail "$name still names docs/NAME.md, not $docdir/NAME.md"
	# Each page points to at least one document (SEE ALSO).
	printf '%s\n' "$body" | grep -q "$docdir/[A-Z]*\.md" || fail "$name names no document in $docdir"
done

[ $status = 0 ] && echo "PASS: --help and the man pages name documents installed in $docdir"
exit $status
