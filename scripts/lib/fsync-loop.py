#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""fsync-loop.py FILE [MS [sync|fdatasync]]: the other process of the
writer-next-to-an-fsync scenario (scripts/demo/guest-session.sh,
selftests/bats/diagnose.bats, selftests/bats/fio.bats).  fsync FILE once,
create FILE.ready so the writer can start (python3 takes seconds to start
under TCG), then fsync every MS (default 30) ms until killed; with "sync",
sync(2) instead of each later fsync; with "fdatasync", fdatasync(2), which
writes the data back but commits no journal transaction for an mtime
alone."""
import os
import sys
import time

fd = os.open(sys.argv[1], os.O_RDONLY)
gap = (int(sys.argv[2]) if len(sys.argv) > 2 else 30) / 1000.0
os.fsync(fd)
open(sys.argv[1] + ".ready", "w").close()
mode = sys.argv[3] if len(sys.argv) > 3 else "fsync"
if mode not in ("fsync", "sync", "fdatasync"):
    sys.exit("fsync-loop.py: mode must be sync or fdatasync, not " + mode)
while True:
    if mode == "sync":
        os.sync()
    elif mode == "fdatasync":
        os.fdatasync(fd)
    else:
        os.fsync(fd)
    time.sleep(gap)
