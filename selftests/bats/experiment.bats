#!/usr/bin/env bats
# make experiment, reduced: a small sweep through scripts/experiment/guest-experiment.sh,
# checking that every cell is there and that the counters are what the
# source analysis says they must be.  The cells go to the results
# directory, where make check renders the report from them on the host
# (scripts/check/test-experiment-report.sh).
#
# File 8 MiB = 2048 pages of 4 KiB on ext4 (the RAM-disk scratch fs); units
# 64 B, 4 KiB, 1 MiB, and 16 MiB, which does not fit and must be recorded as
# skipped.  Slow device: 2 MiB = 512 pages; strategies: 1 MiB = 256 pages.

load helpers

PAGES=2048
SLOW_PAGES=512
UNITS="64 4K 1M 16M"

setup_file() {
	[ -r /proc/wpstat/inodes ] || return 0	# each test fails in setup
	export OUT=$BATS_FILE_TMPDIR/exp
	bash "$WPSTAT_TOP/scripts/experiment/guest-experiment.sh" --out "$OUT/k" \
		--ram-dir "$WPSTAT_FS_DIR/ext4" --size 8M --units "$UNITS" \
		--slow-size 2M --strategy-size 1M --java-units "64 1M" \
		--java-cold-unit none --repeat 1 >"$BATS_FILE_TMPDIR/guest.log" 2>&1
	echo $? >"$BATS_FILE_TMPDIR/guest.rc"
	# Kept with the TAP files, for a failure's post-mortem.
	cp "$BATS_FILE_TMPDIR/guest.log" "${WPSTAT_RESULTS:-/tmp}/experiment-guest.log"
	# The report is rendered on the host (scripts/check/test-experiment-report.sh,
	# from make check): matplotlib takes minutes under TCG.
	mkdir -p "${WPSTAT_RESULTS:-/tmp}/experiment/k"
	cp "$OUT/k/cells.jsonl" "$OUT/k/meta.json" "${WPSTAT_RESULTS:-/tmp}/experiment/k/"
}

setup() {
	require_module
	CELLS=$OUT/k/cells.jsonl
}

# The cells of part $1 matching the jq condition $2, compact, one per line.
cells() {
	jq -c "select(.part == \"$1\")${2:+ | select($2)}" "$CELLS"
}

# Counter $3 of the one ram cell api $1, op $2, cache $4, unit $5.
ram() {
	jq -r "select(.part == \"ram\" and .api == \"$1\" and .op == \"$2\"
		and .cache == \"$4\" and .unit == $5) | .wpload.totals.counters.$3" "$CELLS"
}

@test "the sweep runs to the end and records every cell" {
	[ "$(cat "$BATS_FILE_TMPDIR/guest.rc")" = 0 ] ||
		fail "guest-experiment failed: $(tail -n 5 "$BATS_FILE_TMPDIR/guest.log")"
	# ram: 4 units x {mmap, write} x {write, read} x {warm, cold}
	[ "$(cells ram | wc -l)" = 32 ]
	# the 16 MiB unit is larger than the 8 MiB file: recorded, not run
	[ "$(cells ram '.skipped' | wc -l)" = 8 ]
	[ "$(cells ram '.rc == 0 and .wpload.totals.bytes == 8388608' | wc -l)" = 24 ]
	# slow: 4 units x {mmap, write}, 16 MiB skipped; strategies: 5
	[ "$(cells slow '.rc == 0 and .wpload.totals.passes == 2' | wc -l)" = 6 ]
	[ "$(cells strategies '.rc == 0' | wc -l)" = 5 ]
	# java: 2 units x {MappedByteBuffer, FileChannel}, warm
	[ "$(cells java '.rc == 0 and .java.ns > 0' | wc -l)" = 4 ]
	# every measured cell has counters and the /proc/vmstat deltas
	[ "$(jq -c 'select(.wpload) | select(.wpload.totals.counters == null or .vmstat.pgfault == null)' "$CELLS" | wc -l)" = 0 ]
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
	[ "$(cells ram '.api == "mmap" and .op == "read" and .cache == "cold" and .unit == 4096' | jq .vmstat.pgfault)" -ge $((PAGES / 16)) ]
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
	jv() {
		jq -r "select(.part == \"java\" and .java.api == \"$1\" and .java.unit == $2) | .java.counters.$3" "$CELLS"
	}
	for u in 64 1048576; do
		# load() then put(): read-only PTEs, one write-protect fault per page
		[ "$(jv mmap $u mkwrite_wp)" = $PAGES ]
		[ "$(jv channel $u mkwrite_first)" = 0 ]
		[ "$(jv channel $u mkwrite_wp)" = 0 ]
		[ "$(jv channel $u dirtied)" = $PAGES ]
	done
	# wpstat run reported the same file, with at least these counts
	[ "$(cells java '.java.api == "mmap"' | jq -s "map(.wpstat_run.files[] | select((.path // \"\") | endswith(\"java.dat\")) | .counters.mkwrite_wp) | min")" -ge $PAGES ]
}
