#!/usr/bin/env bash
# Inside the demo guest: a 1 MiB file on ext4 over a RAM disk, written
# through a shared mapping in three passes with msync after each, then the
# counters wpstat kept for it.
set -euo pipefail
modprobe brd rd_nr=1 rd_size=65536
mkfs.ext4 -q /dev/ram0
mkdir -p /tmp/demo && mount /dev/ram0 /tmp/demo
# No periodic writeback: only msync cleans pages (see scripts/check/guest-check.sh).
sysctl -q vm.dirty_writeback_centisecs=360000

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
