#!/bin/bash
# tests/guest/suites/smoke.sh — the kernel NFS client on v3, v4.0, v4.1 and
# v4.2 against the guest's own nfsd: a 4 MiB random file written, caches
# dropped, read back and compared with the original and the server's copy;
# then mkdir, rename, stat (exact size), unlink, rmdir, each seen server-side.
# Runs in the guest: tests/guest/run tests/guest/suites/smoke.sh
source /vnfs/src/tests/guest/lib/guest.sh

size=$((4 * 1024 * 1024))
original=/tmp/smoke-original
check "stage 4 MiB of random data" dd if=/dev/urandom of="$original" bs=1M count=4 status=none
check_eq "staged file size" "$(stat -c %s "$original")" "$size"

guest_start_nfs || exit 1
guest_mount_all_nfs || exit 1

for version in $NFS_VERSIONS; do
	mountpoint=$(nfs_mount_of "$version")
	server=$(nfs_export_of "$version")
	say "NFS v$version: $mountpoint (server side $server)"

	check "v$version: write 4 MiB (fsync)" dd if="$original" of="$mountpoint/data" bs=1M conv=fsync status=none
	guest_drop_caches
	check "v$version: read back equals the original" cmp "$original" "$mountpoint/data"
	check "v$version: the server's copy equals the original" cmp "$original" "$server/data"

	check "v$version: mkdir" mkdir "$mountpoint/directory"
	check "v$version: rename into the directory" mv "$mountpoint/data" "$mountpoint/directory/renamed"
	check "v$version: the old name is gone" test ! -e "$mountpoint/data"
	check "v$version: the server sees the new name" test -f "$server/directory/renamed"
	guest_drop_caches
	check_eq "v$version: stat size after rename" "$(stat -c %s "$mountpoint/directory/renamed")" "$size"
	check "v$version: unlink" rm "$mountpoint/directory/renamed"
	check "v$version: rmdir" rmdir "$mountpoint/directory"
	check_eq "v$version: the server's directory is empty" "$(ls -A "$server")" ""
done
mark smoke-io

guest_umount_all_nfs
guest_done
