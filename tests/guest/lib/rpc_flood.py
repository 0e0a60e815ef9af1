#!/usr/bin/env python3
"""rpc_flood.py — a local user making as many RPC rows of no workload as it
can: it moves itself through cgroups of its own (a delegated subtree, as
systemd gives each user) and in each sends RPCs of a dozen procedures, each
a new row under that cgroup's id.

  rpc_flood.py SUBTREE DIRECTORY OWNERS

SUBTREE: a cgroup directory the user owns, with the process already inside
it; DIRECTORY: a directory of the user's on the NFS mount.  Makes OWNERS
cgroups SUBTREE/owner-N (left in place: their rows live while they do) and
prints "owners=N".
"""
import os
import sys


def procedures(directory):
    """MKDIR (v3) or CREATE (v4), OPEN or CREATE, WRITE, COMMIT, CLOSE,
    SETATTR, LINK, SYMLINK, RENAME, READDIR, LOOKUP, REMOVE (no READLINK:
    the client keeps a symlink's target from its creation)."""
    os.mkdir(directory)
    path = os.path.join(directory, "file")
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
    os.write(fd, b"x" * 4096)
    os.fsync(fd)
    os.close(fd)
    os.chmod(path, 0o644)
    os.link(path, path + ".link")
    os.symlink("file", path + ".symlink")
    os.rename(path + ".link", path + ".renamed")
    os.listdir(directory)
    try:
        os.stat(os.path.join(directory, "absent"))
    except FileNotFoundError:
        pass
    for name in ("file", "file.renamed", "file.symlink"):
        os.unlink(os.path.join(directory, name))
    os.rmdir(directory)


def main():
    subtree, directory, owners = sys.argv[1], sys.argv[2], int(sys.argv[3])
    for number in range(owners):
        cgroup = os.path.join(subtree, f"owner-{number}")
        os.mkdir(cgroup)
        with open(os.path.join(cgroup, "cgroup.procs"), "w") as procs:
            procs.write(str(os.getpid()))
        procedures(os.path.join(directory, f"owner-{number}"))
    print(f"owners={owners}")


if __name__ == "__main__":
    main()
