#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# wpstat diagnose's rules for first-write faults on a fresh file and for
# stores that wait for their pages to be read in: each scenario must
# produce its finding, and each remedy applied in the guest (a prefault
# pass, MADV_POPULATE_WRITE, MADV_WILLNEED, MAP_POPULATE, a cached file)
# must take it away.
#
# Runs inside the guest as root with the module loaded (guest-check.sh).
# The slow device is the C suites' (wps-slowdev: null_blk, optionally
# behind dm-delay, mounted at /tmp/wpstat-slow).  Set-up and teardown:
# diagnose.bash.

bats_require_minimum_version 1.5.0

load helpers
load scenarios
load diagnose

# First writes: one pass over a fresh 1 MiB file on the RAM disk; nothing
# waits for writeback (brd has no stable pages, nothing is written back),
# so the stall time is page_mkwrite's own work on fresh pages (a journal
# commit of jbd2's 5 s timer may add a wait: not more than half).  Where
# ext4 maps large folios (7.x: since 6.16) a few faults cover the file and
# may not add up to the millisecond below which nothing is notable.
@test "diagnose: first-write faults on a fresh file" {
	local f
	wpstat level timing >/dev/null
	f=$(scratch_file ext4)
	wpload --file "$f" --size 1M --passes 1 --quiet >/dev/null &
	WPLOAD_PID=$!
	wait "$WPLOAD_PID"
	run --separate-stderr wpstat diagnose --json --pid "$WPLOAD_PID"
	assert_success
	echo "# $(jq -c '{stall_ns, f: [.findings[] | {rule, share}]}' <<<"$output")" >&3
	jq -e 'if .stall_ns >= 1000000 then
		(.findings[0] | .rule == "first_write" and .share > 0.5 and
		 (.evidence[] | select(.name == "fault_first") | .value > 0) and
		 (.remedies[0].change | startswith("prefault")) and
		 (.remedies[1].change | startswith("fallocate(2)")))
		else .findings == [] end' <<<"$output"
}

# The first-write rule's prefault remedy, applied: once a process has
# stored to every page, its PTEs are writable and dirty, and nothing
# write-protects them again until writeback cleans the pages (the guest
# disables periodic writeback, brd has nothing to throttle): further
# stores to the same pages take no fault at all (do_wp_page is reached
# only through a read-only PTE), so an interval after the prefault pass
# has no first-write finding, and no fault of the writer.
@test "diagnose: after a prefault pass (the first-write remedy) no first-write faults" {
	local f first
	wpstat level timing >/dev/null
	f=$(scratch_file ext4)
	# Killed below: long enough that no slow host outlives it.
	wpload --file "$f" --size 1M --duration 3600 >"$f.log" &
	WPLOAD_PID=$!
	# The prefault: the first pass, a first-write fault per page (per
	# folio where ext4 maps large ones, 7.x).
	for _ in $(seq 600); do
		grep -q '^pass 1:' "$f.log" && break
		sleep 0.05
	done
	grep -q '^pass 1:' "$f.log" || fail "no first pass: $(cat "$f.log")"
	first=$(counter "$f" mkwrite_first)
	run --separate-stderr wpstat diagnose --json --interval 2 --pid "$WPLOAD_PID"
	assert_success
	# Passes went on meanwhile, storing to every page, and took no fault.
	[ "$(grep -c '^pass ' "$f.log")" -ge 2 ] || fail "one pass only: $(cat "$f.log")"
	[ "$first" -gt 0 ]
	[ "$(counter "$f" mkwrite_first)" = "$first" ]
	[ "$(counter "$f" mkwrite_wp)" = 0 ]
	kill -0 "$WPLOAD_PID" || fail "wpload ended before its passes were checked"
	kill "$WPLOAD_PID"
	wait "$WPLOAD_PID" 2>/dev/null || true
	echo "# $(jq -c '{stall_ns, f: [.findings[] | {rule, share}]}' <<<"$output")" >&3
	jq -e '[.findings[] | select(.rule == "first_write")] == []' <<<"$output"
}

# The read-in rule.  wpload stores once to every page of a
# 64-page file (256 KiB) whose pages are dropped from the page cache
# (--cold: fsync, then POSIX_FADV_DONTNEED), with MADV_RANDOM (no
# read-around), on ext4 over a device whose reads complete 20 ms late:
# each store's fault reads its page first (filemap_fault(), the lock
# dropped, the fault retried) before page_mkwrite: 64 read-ins of at
# least 20 ms, nearly all of the writer's stall time.  wpload's
# --start-file lets the counters be reset once the file is set up, so
# that only the pass is diagnosed (a remedy's own faults, as
# MADV_POPULATE_WRITE's, come before it).
READIN_DELAY=20

# The cold pass, wpload's extra arguments in "$@"; its diagnosis in $output.
cold_writer() {
	local go=$BATS_TEST_TMPDIR/go
	wps-slowdev up ext4 0 0 "" $READIN_DELAY || fail "cannot set up the slow device"
	# MADV_WILLNEED reads at most one readahead window a call.
	[ -z "${RA_KB:-}" ] ||
		echo "$RA_KB" >"/sys/dev/block/$(sb_dev "$SLOW")/queue/read_ahead_kb" ||
		fail "cannot set read_ahead_kb"
	# The data, written through write(2): blocks allocated and on the device.
	wpload --file "$SLOW/cold" --size 256K --mode write --passes 1 --quiet >/dev/null ||
		fail "cannot write the file"
	wpload_ready "$go" --file "$SLOW/cold" --size 256K --passes 1 --quiet "$@"
	# Reads started by a remedy (MADV_WILLNEED) finish within this.
	sleep "${SETTLE:-0}"
	wpstat_control reset
	rm -f "$go"
	wait "$WPLOAD_PID" || fail "wpload failed: $(cat "$BATS_TEST_TMPDIR/wpload.out")"
	run --separate-stderr wpstat diagnose --json --pid "$WPLOAD_PID" "$SLOW"
	assert_success
	echo "# $(jq -c '{stall_ns, f: [.findings[] | {rule, share}]}' <<<"$output")" >&3
}

@test "diagnose: stores to a cold file wait for their pages to be read in" {
	wpstat level timing >/dev/null
	cold_writer --cold --madvise random
	# Each read: the device's delay, less a tick at most (WPS_TICK_MS).
	jq -e --argjson pid "$WPLOAD_PID" --arg f "$SLOW/cold" --argjson delay $READIN_DELAY \
		--argjson tick "$WPS_TICK_MS" \
		--argjson pw "$(wps_kernel_at_least 5 14 && echo true || echo false)" '
		.findings[0] | .rule == "readin" and .pid == $pid and .file == $f and
		.share >= 0.5 and
		(.evidence[] | select(.name == "readin_waits") | .value == 64) and
		(.evidence[] | select(.name == "readin_ns") | .value >= 64 * ($delay - $tick) * 1000000) and
		(.mechanism | test("filemap_fault")) and
		(if $pw then (.remedies[0].change | startswith("madvise(MADV_POPULATE_WRITE)"))
		 else (.remedies[0].change | test("needs 5.14")) end) and
		([.remedies[].change | select(startswith("madvise(MADV_WILLNEED)"))] | length == 1) and
		([.remedies[].change | select(startswith("mmap with MAP_POPULATE"))] | length == 1)' <<<"$output"
	run --separate-stderr wpstat diagnose --pid "$WPLOAD_PID" "$SLOW"
	assert_success
	assert_line --regexp '^1\. \[high [0-9]+%\] stores waited for their pages to be read in'
}

# Its first remedy, applied: MADV_POPULATE_WRITE (5.14) faults every page
# in writable before the pass (reading it first), so the pass's stores
# take no fault at all: no read-in in the pass, no finding.
@test "diagnose: after MADV_POPULATE_WRITE (the read-in remedy) the pass reads nothing in" {
	wps_kernel_at_least 5 14 || skip "MADV_POPULATE_WRITE needs 5.14; this is $(uname -r): diagnose offers a store per page instead"
	wpstat level timing >/dev/null
	cold_writer --cold --madvise random,populate-write
	[ "$(writer_stall readin_waits)" = 0 ] || fail "read-ins in the pass: $(writer_stall readin_waits)"
	jq -e '[.findings[] | select(.rule == "readin")] == []' <<<"$output"
}

# MADV_WILLNEED: the reads are started before the pass (and finish within
# the two seconds the test gives them); the stores then take first-write
# faults on cached pages: no read-in.  One call reads at most one
# readahead window (force_page_cache_ra(): read_ahead_kb, or the device's
# optimal I/O size if larger; measured: 32 of the 64 pages with the
# default 128 KiB), so the window is made the file's size, as the
# remedy's text says.
@test "diagnose: after MADV_WILLNEED (a read-in remedy) the pass reads nothing in" {
	wpstat level timing >/dev/null
	RA_KB=256 SETTLE=2 cold_writer --cold --madvise random,willneed
	[ "$(writer_stall readin_waits)" = 0 ] || fail "read-ins in the pass: $(writer_stall readin_waits)"
	jq -e '[.findings[] | select(.rule == "readin")] == []' <<<"$output"
}

# MAP_POPULATE: mmap reads the pages in and maps them read-only; the
# stores take write-protect faults, none of which reads.
@test "diagnose: with MAP_POPULATE (a read-in remedy) the stores take write-protect faults, no read-in" {
	wpstat level timing >/dev/null
	cold_writer --cold --madvise random --populate
	[ "$(writer_stall readin_waits)" = 0 ] || fail "read-ins in the pass: $(writer_stall readin_waits)"
	[ "$(writer_stall fault_wp)" = 64 ]
	jq -e '[.findings[] | select(.rule == "readin")] == []' <<<"$output"
}

# Keeping the file cached (no --cold: the write(2) that made it left its
# pages in the page cache): first-write faults, no read-in.
@test "diagnose: a cached file (keep it cached: a read-in remedy) has no read-in" {
	wpstat level timing >/dev/null
	cold_writer --madvise random
	[ "$(writer_stall readin_waits)" = 0 ] || fail "read-ins in the pass: $(writer_stall readin_waits)"
	jq -e '[.findings[] | select(.rule == "readin")] == []' <<<"$output"
}
