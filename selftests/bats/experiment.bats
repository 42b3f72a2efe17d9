#!/usr/bin/env bats
# make experiment, reduced: a small sweep through scripts/experiment/guest-experiment.sh,
# both methods, one round, checking that every cell is there and that the
# counters are what the source analysis says they must be.  The cells go to
# the results directory, where make check renders the report from them on
# the host (selftests/host/test-experiment-report.sh): with one round it must
# refuse every verdict.
#
# File 8 MiB = 2048 pages of 4 KiB on ext4 with 4 KiB blocks (a loop device
# on the tmpfs scratch fs: the RAM-disk scratch ext4 is too small for
# mke2fs to give it 4 KiB blocks, and brd can be loaded once); units 64 B,
# 4 KiB, 1 MiB, and 16 MiB, which does not fit and must be recorded as
# skipped.  Slow device: 2 MiB = 512 pages; strategies: 1 MiB = 256 pages.
# RocketMQ's own store (part rocketmq) needs the Maven build of make
# clients; it is checked by make clients (selftests/clients/rocketmq.bats).

load helpers

PAGES=2048
SLOW_PAGES=512
UNITS="64 4K 1M 16M"

setup_file() {
	[ -r /proc/wpstat/inodes ] || return 0	# each test fails in setup
	export OUT=$BATS_FILE_TMPDIR/exp
	export RAM=$BATS_FILE_TMPDIR/ram
	local img=$WPSTAT_FS_DIR/tmpfs/experiment.img
	mkdir -p "$RAM"
	rm -f "$img"
	truncate -s 64M "$img"
	{ modprobe loop && mkfs.ext4 -q -F -b 4096 "$img" &&
		mount -o loop "$img" "$RAM"; } >"$BATS_FILE_TMPDIR/guest.log" 2>&1 || {
		echo "set-up: no 4 KiB-block ext4 on a loop device" >>"$BATS_FILE_TMPDIR/guest.log"
		echo 1 >"$BATS_FILE_TMPDIR/guest.rc"
		return 0
	}
	# Level timing, the experiment's default: its tables use the per-call
	# denominators (bdp_calls), which level counts leaves out.
	bash "$WPSTAT_TOP/scripts/experiment/guest-experiment.sh" --out "$OUT/k" \
		--ram-dir "$RAM" --size 8M --units "$UNITS" \
		--slow-size 2M --strategy-size 1M --java-units "64 1M" \
		--java-cold-units 4K --repeat 1 --parts "ram slow strategies java" \
		--level timing \
		>"$BATS_FILE_TMPDIR/guest.log" 2>&1
	echo $? >"$BATS_FILE_TMPDIR/guest.rc"
	umount "$RAM"
	rm -f "$img"
	# Kept with the TAP files, for a failure's post-mortem.
	cp "$BATS_FILE_TMPDIR/guest.log" "${WPSTAT_RESULTS:-/tmp}/experiment-guest.log"
	# The report is rendered on the host (selftests/host/test-experiment-report.sh,
	# from make check): matplotlib takes minutes under TCG.
	mkdir -p "${WPSTAT_RESULTS:-/tmp}/experiment/k"
	cp "$OUT/k/cells.jsonl" "$OUT/k/meta.json" "$OUT/k/rounds.done" "${WPSTAT_RESULTS:-/tmp}/experiment/k/"
}

setup() {
	require_module
	CELLS=$OUT/k/cells.jsonl
}

# The cells of part $1 matching the jq condition $2, compact, one per line.
cells() {
	jq -c "select(.part == \"$1\")${2:+ | select($2)}" "$CELLS"
}

# Counter $3 of the one ram cell api $1, op $2, cache $4, unit $5, method
# $6 (default kernel).
ram() {
	jq -r "select(.part == \"ram\" and .method == \"${6:-kernel}\" and .api == \"$1\"
		and .op == \"$2\" and .cache == \"$4\" and .unit == $5) | .wpload.totals.counters.$3" "$CELLS"
}

@test "the sweep runs to the end and records every cell" {
	[ "$(cat "$BATS_FILE_TMPDIR/guest.rc")" = 0 ] ||
		fail "guest-experiment failed: $(tail -n 5 "$BATS_FILE_TMPDIR/guest.log")"
	[ "$(wc -l <"$OUT/k/rounds.done")" = 1 ]
	# ram, original: 4 units x {mmap, write} x {write, read} x {warm,
	# cold}; kernel: the same without warm reads (one procedure for
	# both methods, run under original)
	[ "$(cells ram '.method == "original"' | wc -l)" = 32 ]
	[ "$(cells ram '.method == "kernel"' | wc -l)" = 24 ]
	[ "$(cells ram '.method == "kernel" and .op == "read" and .cache == "warm"' | wc -l)" = 0 ]
	# the 16 MiB unit is larger than the 8 MiB file: recorded, not run
	[ "$(cells ram '.skipped' | wc -l)" = 14 ]
	[ "$(cells ram '.rc == 0 and .wpload.totals.bytes == 8388608' | wc -l)" = 42 ]
	# every measured ram cell ran on 4 KiB blocks
	[ "$(cells ram '.wpload and .block_size != 4096' | wc -l)" = 0 ]
	# slow: 4 units x {mmap, write}, 16 MiB skipped; strategies: 5
	[ "$(cells slow '.rc == 0 and .wpload.totals.passes == 2' | wc -l)" = 6 ]
	[ "$(cells strategies '.rc == 0' | wc -l)" = 5 ]
	# java, per method: 2 units x {MappedByteBuffer, FileChannel} warm,
	# and 4 KiB cold (a JVM of its own), each with output
	[ "$(cells java '.rc == 0 and .java.ns > 0 and .java.cache == "warm"' | wc -l)" = 8 ]
	[ "$(cells java '.rc == 0 and .java.ns > 0 and .java.cache == "cold"' | wc -l)" = 4 ]
	[ "$(cells java '.error' | wc -l)" = 0 ]
	# every measured cell has counters and the /proc/vmstat deltas
	[ "$(jq -c 'select(.wpload) | select(.wpload.totals.counters == null or .vmstat.pgfault == null)' "$CELLS" | wc -l)" = 0 ]
}

@test "original method: nothing is written back inside a cell, and a warmed mapping takes no fault" {
	# No msync/fsync in the cell and dirty limits above twice the file:
	# folio_mkclean never runs (folio_clear_dirty_for_io is reached only
	# from writeback).
	[ "$(cells ram '.method == "original" and .wpload' | jq -s 'map(.wpload.totals.counters.mkclean_calls) | add')" = 0 ]
	[ "$(cells ram '.method == "original" and .wpload' | jq -s 'map(.wpload.totals.sync_ns // 0) | add')" = 0 ]
	for u in 64 4096 1048576; do
		# --warmup=write stored once per page (first-write faults,
		# before the pass): the PTEs are writable and dirty, so the
		# timed pass takes no fault and dirties nothing new.
		[ "$(ram mmap write mkwrite_first warm $u original)" = 0 ]
		[ "$(ram mmap write mkwrite_wp warm $u original)" = 0 ]
		[ "$(ram mmap write bdp_calls warm $u original)" = 0 ]
		# A fresh sparse file: no PTE, so one first-write fault per
		# page (do_shared_fault -> do_page_mkwrite), each dirtying it.
		[ "$(ram mmap write mkwrite_first cold $u original)" = $PAGES ]
		[ "$(ram mmap write mkwrite_wp cold $u original)" = 0 ]
		[ "$(ram mmap write dirtied cold $u original)" = $PAGES ]
		[ "$(ram write write dirtied cold $u original)" = $PAGES ]
	done
}

@test "cold means no data on disk under original, an evicted file under kernel" {
	pgpgin() {
		cells ram ".method == \"$1\" and .op == \"read\" and .cache == \"cold\" and .unit == 4096 and .api == \"$2\"" | jq .vmstat.pgpgin
	}
	# A hole reads as zeroes without I/O (ext4_mpage_readpages zeroes an
	# unmapped block); the evicted file is read back, 8 MiB = 8192 KiB.
	for api in mmap write; do
		[ "$(pgpgin original $api)" -lt 1024 ]
		[ "$(pgpgin kernel $api)" -ge 8192 ]
	done
}

@test "mmap writes: one write fault per page at every unit size" {
	# Cold (no PTE): do_shared_fault -> do_page_mkwrite, once per page.
	# Warm (--warmup read-touched the pages: read-only PTEs):
	# do_wp_page -> wp_page_shared -> do_page_mkwrite, once per page.
	for u in 64 4096 1048576; do
		[ "$(ram mmap write mkwrite_first cold $u)" = $PAGES ]
		[ "$(ram mmap write mkwrite_wp cold $u)" = 0 ]
		[ "$(ram mmap write mkwrite_first warm $u)" = 0 ]
		[ "$(ram mmap write mkwrite_wp warm $u)" = $PAGES ]
		# msync(MS_SYNC) writes back every page: folio_mkclean once per
		# folio on ext4 (ext4_bio_write_folio -> folio_clear_dirty_for_io)
		[ "$(ram mmap write mkclean_calls warm $u)" = $PAGES ]
		[ "$(ram mmap write dirtied cold $u)" = $PAGES ]
	done
}

@test "write(2): no faults, one dirty-balancing call per page of each call" {
	# generic_perform_write() calls balance_dirty_pages_ratelimited() once
	# per page-sized step: 64 B units -> one per call (131072 calls),
	# 4 KiB and 1 MiB -> one per page (2048).
	[ "$(ram write write bdp_calls warm 64)" = $((PAGES * 64)) ]
	[ "$(ram write write bdp_calls warm 4096)" = $PAGES ]
	[ "$(ram write write bdp_calls warm 1048576)" = $PAGES ]
	for u in 64 4096 1048576; do
		for c in warm cold; do
			[ "$(ram write write mkwrite_first $c $u)" = 0 ]
			[ "$(ram write write mkwrite_wp $c $u)" = 0 ]
			[ "$(ram write write dirtied $c $u)" = $PAGES ]
		done
	done
}

@test "reads change no write counter, and mmap reads fault" {
	[ "$(jq -c 'select(.part == "ram" and .op == "read" and .wpload) |
		.wpload.totals.counters | select(.mkwrite_first + .mkwrite_wp + .dirtied + .bdp_calls > 0)' "$CELLS" | wc -l)" = 0 ]
	# a cold mapping must fault pages in (fault-around maps up to 16 at once)
	[ "$(cells ram '.method == "kernel" and .api == "mmap" and .op == "read" and .cache == "cold" and .unit == 4096' | jq .vmstat.pgfault)" -ge $((PAGES / 16)) ]
}

@test "writeback between passes: every page write-protected again" {
	# Pass 1 after the read warm-up and pass 2 after msync each fault every
	# page once; writeback running during a pass can only add faults.
	for u in 64 4096 1048576; do
		wp=$(jq -r "select(.part == \"slow\" and .api == \"mmap\" and .unit == $u) | .wpload.totals.counters.mkwrite_wp" "$CELLS")
		[ "$wp" -ge $((2 * SLOW_PAGES)) ]
	done
}

@test "RocketMQ strategies: what warm-up and the write buffer cannot remove" {
	strat() {
		jq -r "select(.part == \"strategies\" and .api == \"$1\" and .cache == \"$2\") | .wpload.totals.counters.$3" "$CELLS"
	}
	# An asynchronous flush every 16 messages of 1000 B leaves the page
	# holding the last message under writeback; stable_writes=1 makes the
	# next store (fault or write(2)) wait for it in folio_wait_stable().
	for s in "mmap plain" "mmap warmup-read" "mmap warmup-write" \
		 "write plain" "write write-buffer"; do
		# shellcheck disable=SC2086
		[ "$(strat $s stable_waits)" -gt 0 ]
	done
	# The writing warm-up leaves pages dirty, but the first flush cleans
	# and write-protects them all: write-protect faults remain.
	[ "$(strat mmap warmup-write mkwrite_wp)" -gt 0 ]
	[ "$(strat mmap warmup-write mkwrite_first)" = 0 ]
	# Read warm-up turns every first-write fault into a write-protect one.
	[ "$(strat mmap warmup-read mkwrite_first)" = 0 ]
	[ "$(strat mmap warmup-read mkwrite_wp)" -ge 256 ]
	# The write buffer batches 16 messages per pwrite: fewer calls.
	[ "$(strat write write-buffer bdp_calls)" -lt "$(strat write plain bdp_calls)" ]
	[ "$(strat write write-buffer mkwrite_wp)" = 0 ]
}

@test "JDK: MappedByteBuffer faults once per page, FileChannel never" {
	# jv API UNIT COUNTER [METHOD [CACHE]]
	jv() {
		jq -r "select(.part == \"java\" and .method == \"${4:-kernel}\" and .java.cache == \"${5:-warm}\" and .java.api == \"$1\" and .java.unit == $2) | .java.counters.$3" "$CELLS"
	}
	for u in 64 1048576; do
		# load() then put(): read-only PTEs, one write-protect fault per page
		[ "$(jv mmap $u mkwrite_wp)" = $PAGES ]
		[ "$(jv channel $u mkwrite_first)" = 0 ]
		[ "$(jv channel $u mkwrite_wp)" = 0 ]
		[ "$(jv channel $u dirtied)" = $PAGES ]
	done
	for m in kernel original; do
		# cold: no PTE (evicted file or fresh sparse file), one
		# first-write fault per page
		[ "$(jv mmap 4096 mkwrite_first $m cold)" = $PAGES ]
		[ "$(jv mmap 4096 mkwrite_wp $m cold)" = 0 ]
		[ "$(jv channel 4096 mkwrite_first $m cold)" = 0 ]
		[ "$(jv channel 4096 dirtied $m cold)" = $PAGES ]
	done
	# original: the warm buffer was written over once before the pass
	[ "$(jv mmap 64 mkwrite_wp original)" = 0 ]
	[ "$(jv mmap 64 mkwrite_first original)" = 0 ]
	[ "$(jq -r 'select(.part == "java" and .method == "original") | .java.force_ns' "$CELLS" | sort -u)" = 0 ]
	# wpstat run reported the same file, with at least these counts
	[ "$(cells java '.java.api == "mmap" and .method == "kernel" and .java.cache == "warm"' | jq -s "map(.wpstat_run.files[] | select((.path // \"\") | endswith(\"java.dat\")) | .counters.mkwrite_wp) | min")" -ge $PAGES ]
}
