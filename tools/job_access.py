#!/usr/bin/env python3
"""Lets job runs reach a checkout's interpreter and runtime when the server runs as root.

With `job_user = auto` (the default) a server running as root starts every job run as an
unprivileged uid of its own whose shared group is `job_uid_base` (1000000000 by default). A run
must be able to execute the interpreter and read the awsglue runtime: a checkout under a folder
only root may enter (`/root` is 0700 on Debian) is out of its reach, and the server refuses to
start saying so. This tool grants that group *search* permission (x, not read: names cannot be
listed) on each folder above the given paths that others cannot search, through a POSIX ACL
entry, leaving every other permission as it is. `make build` runs it as root for the checkout.

    tools/job_access.py [--group GID] PATH...
"""
import argparse
import os
import struct
import sys

DEFAULT_GROUP = 1000000000
_ACL_USER_OBJ, _ACL_GROUP_OBJ, _ACL_GROUP, _ACL_MASK, _ACL_OTHER = 0x01, 0x04, 0x08, 0x10, 0x20
_UNDEFINED_ID = 0xFFFFFFFF


def acl_xattr(mode, group_perm, group=DEFAULT_GROUP):
    """Linux's POSIX ACL xattr value: `mode`'s owner, group and other bits plus `group` with
    `group_perm` (rwx bits)."""
    entries = [(_ACL_USER_OBJ, (mode >> 6) & 7, _UNDEFINED_ID),
               (_ACL_GROUP_OBJ, (mode >> 3) & 7, _UNDEFINED_ID),
               (_ACL_GROUP, group_perm, group),
               (_ACL_MASK, ((mode >> 3) & 7) | group_perm, _UNDEFINED_ID),
               (_ACL_OTHER, mode & 7, _UNDEFINED_ID)]
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries)


def grant_search(paths, group=DEFAULT_GROUP, log=None):
    """Grants `group` search permission on every folder above each of `paths` (and the path
    itself if it is a folder) that others cannot search. Returns the folders changed."""
    changed = []
    for path in paths:
        folder = os.path.realpath(path)
        if not os.path.isdir(folder):
            folder = os.path.dirname(folder)
        while folder not in ("/", ""):
            mode = os.stat(folder).st_mode
            if not mode & 0o001 and folder not in changed:
                os.setxattr(folder, "system.posix_acl_access", acl_xattr(mode, 1, group))
                changed.append(folder)
                if log:
                    log(f"== job runs may now search {folder} (group {group}, x only)")
            folder = os.path.dirname(folder)
    return changed


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--group", type=int, default=DEFAULT_GROUP,
                        help="the job runs' shared group, the server's job_uid_base [%(default)s]")
    parser.add_argument("paths", nargs="+", help="files or folders job runs must reach")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        return 0  # without root, runs are the server's own user: nothing to open
    grant_search(args.paths, args.group, log=print)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
