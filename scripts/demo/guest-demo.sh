#!/usr/bin/env bash
# Inside the demo guest: a 1 MiB file on ext4 over a RAM disk, written
# through a shared mapping in three passes with msync after each; then
# what the kernel did, from wpstat's counters for the file, each number
# beside the one the kernel source predicts (docs/results/predictions/1.md).
set -euo pipefail
# shellcheck source=scripts/vm/guest-lib.sh
. "$WPSTAT_TOP/scripts/vm/guest-lib.sh"
guest_ramdisks 1 64
guest_mkfs_mount ext4 /dev/ram0 /tmp/demo
# No periodic writeback: only msync cleans pages.
guest_writeback_quiet
# Count the demo's filesystem only, from now on.  Otherwise the table has
# a second row with no name: /dev/ram0's own page cache, which mkfs.ext4
# wrote and fsynced (the kernel's block-device inode: dev 0:N of its
# internal bdev filesystem, mounted nowhere, and ino the device number).
wpstat filter path /tmp/demo >/dev/null
wpstat reset >/dev/null

echo "== The workload: 256 pages of a shared mapping, one store per page, msync after each of 3 passes"
wpload --file /tmp/demo/data --size 1M --passes 3 --sync msync

# The paths come from --resolve: ask once with it.
wpstat show --json --resolve /tmp/demo >/tmp/demo.json
counter() {
	jq -r --arg p /tmp/demo/data ".inodes[] | select(.path == \$p) | .counters.$1" /tmp/demo.json
}
first=$(counter mkwrite_first)
wp=$(counter mkwrite_wp)
msync=$(counter mkclean_msync)
verdict() { [ "$1" = "$2" ] && echo "as predicted" || echo "predicted $2"; }

echo
echo "== What the kernel did (wpstat's counters for /tmp/demo/data)"
printf '  %4s first-write faults in pass 1: no PTE yet, into ->page_mkwrite (%s)\n' \
	"$first" "$(verdict "$first" 256)"
printf '  %4s pages write-protected by the 3 msyncs (folio_mkclean) (%s)\n' \
	"$msync" "$(verdict "$msync" 768)"
printf '  %4s write-protect faults in passes 2-3: read-only PTEs again (%s)\n' \
	"$wp" "$(verdict "$wp" 512)"
echo
echo "== wpstat show --resolve /tmp/demo (the module counts only /tmp/demo's filesystem: wpstat filter path)"
wpstat show --resolve /tmp/demo --top 3
echo
echo "Next: 'make readme-session' (a writer stalled by another process's fsync),"
echo "'wpstat show --all' for every counter, docs/interface.md for what each means."
