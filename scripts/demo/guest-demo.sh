#!/usr/bin/env bash
# Inside the demo guest: a 1 MiB file on ext4 over a RAM disk, written
# through a shared mapping in three passes with msync after each, then the
# counters wpstat kept for it.
set -euo pipefail
# shellcheck source=scripts/vm/guest-lib.sh
. "$WPSTAT_TOP/scripts/vm/guest-lib.sh"
guest_ramdisks 1 64
guest_mkfs_mount ext4 /dev/ram0 /tmp/demo
# No periodic writeback: only msync cleans pages.
guest_writeback_quiet

cat <<'TXT'

== wpload: 256 pages, one store per page, msync(MS_SYNC) after each pass
   Expect pass 1: 256 first-write faults; passes 2-3: 256 write-protect
   faults each, because msync's writeback write-protected every PTE.
TXT
wpload --file /tmp/demo/data --size 1M --passes 3 --sync msync

echo
echo "== wpstat show --resolve /tmp/demo"
wpstat show --resolve /tmp/demo --top 5
echo
echo "== /proc/wpstat/summary"
cat /proc/wpstat/summary
