#!/usr/bin/env bash
# Does a separate log device shorten an msync's ZIL commit on this
# kernel's ZFS?  diagnose offers one for a syncer's zil finding, and
# wpstat_zfs and zfs.bats assert that it halves a commit; on trixie's 2.3.9
# and sid's 2.4.4 some loaded runs saw the opposite (docs/fs/zfs.md, "Not
# yet").  This measures it alone, many times, with ZFS's own counters of
# where the log blocks went (/proc/spl/kstat/zfs/zil: normal or slog
# metaslab), to tell a slow log device from one ZFS did not use.
#
# Run in a guest (ZFS from make setup-zfs; no wpstat needed):
#   scripts/vm/vm-run.sh --kver KVER --no-load --results DIR -- \
#       scripts/zfs/slog-experiment.sh [ROUNDS [MSYNCS]]
#
# Each round makes the slow pool (null_blk behind a 20 ms dm-delay,
# wps-slowdev, as the suites do) and measures MSYNCS msyncs (default 20)
# of 32 stored pages, timed one by one: as it is; with /dev/ram7 added as
# its log while in use, as wpstat_zfs does; and made afresh with the log.
# Prints a line per round and pool, and the medians.

set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
rounds=${1:-5}
msyncs=${2:-20}
slowdev=$top/build/bin/wps-slowdev
. "$top/scripts/vm/guest-lib.sh"

[ -x "$slowdev" ] || { echo "slog-experiment: $slowdev missing: make build" >&2; exit 2; }
guest_ramdisks 8 320
guest_zfs /dev/ram6 /tmp/wpstat/zfs >/dev/null
echo "# ZFS $(cat /sys/module/zfs/version) on $(uname -r), $rounds rounds of $msyncs msyncs of 32 pages"

zil() { awk '$1 ~ /^zil_/ { print $1, $3 }' /proc/spl/kstat/zfs/zil; }

# msync timings in ms, one per line, of MSYNCS store-and-msync passes.
msync_times() {
	python3 - "$1" "$msyncs" <<-'EOF'
	import mmap, os, sys, time
	path, n = sys.argv[1], int(sys.argv[2])
	pages = 32
	fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
	os.ftruncate(fd, pages * 4096)
	m = mmap.mmap(fd, pages * 4096, mmap.MAP_SHARED)
	m.flush()
	for i in range(n):
	    for p in range(pages):
	        m[p * 4096] = (i + p) % 256
	    t = time.monotonic_ns()
	    m.flush()
	    print((time.monotonic_ns() - t) / 1e6)
	EOF
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

: >/tmp/slog.none
: >/tmp/slog.log
: >/tmp/slog.added

# One pass of MSYNCS msyncs on the pool as it is now, reported as POOL.
measure() {
	local pool=$1 m
	zil >/tmp/zil.before
	msync_times /tmp/wpstat-slow/data >/tmp/times
	zil >/tmp/zil.after
	m=$(median </tmp/times)
	echo "$m" >>/tmp/slog.$pool
	printf 'round %d %-5s msync median %s ms (min %s, max %s); log blocks: %s\n' "$r" "$pool" "$m" \
		"$(sort -n /tmp/times | head -n 1)" "$(sort -n /tmp/times | tail -n 1)" \
		"$(join /tmp/zil.before /tmp/zil.after | awk '$3 != $2 && ($1 ~ /metaslab_(normal|slog)_count|commit_(count|stall_count|suspend_count)|itx_(copied|needcopy|indirect)_count/) { printf "%s %d ", substr($1, 5), $3 - $2 }')"
}

# none: the slow pool as it is; log: a fresh pool made with its log
# device; added: wpstat_zfs's sequence, the log device added to the pool
# in use (after sync=disabled and back), a zpool sync, one pass to warm.
for r in $(seq 1 "$rounds"); do
	"$slowdev" up zfs 20 0 >/dev/null
	measure none
	zfs set sync=disabled wpslow
	msync_times /tmp/wpstat-slow/data >/dev/null
	zfs set sync=standard wpslow
	zpool add -f wpslow log /dev/ram7
	zpool sync wpslow
	msync_times /tmp/wpstat-slow/data >/dev/null
	measure added
	"$slowdev" down
	"$slowdev" up zfs 20 0 >/dev/null
	zpool add -f wpslow log /dev/ram7
	zpool sync wpslow
	measure log
	"$slowdev" down
done
echo "medians over rounds: none $(median </tmp/slog.none) ms, added to the pool in use $(median </tmp/slog.added) ms, fresh pool with its log $(median </tmp/slog.log) ms"
