#!/usr/bin/env bats
# RocketMQ's commit log, on RocketMQ's own code: rocketmq-store 5.3.1
# (selftests/clients/java/pom.xml) driven without a broker by
# wpstat.clients.RocketmqAppend, a DefaultMessageStore with flushDiskType
# ASYNC_FLUSH and its own services (AllocateMappedFileService,
# FlushRealTimeService, CommitRealTimeService).  One test per setting of
# warmMapedFileEnable x transientStorePoolEnable; each runs one JVM of
# $ROUNDS rounds, a fresh store on the ext4 RAM disk each round, and checks
# the commit-log file's counters of every round against what RocketMQ's
# source and the kernel's fault path say (docs/clients/rocketmq.md).
#
# Per round: $MSGS messages of 1 KiB body (1128 B in the log), one put
# every $PACE us (a producer's pace; slower if a put takes longer), into a
# 16 MiB commit-log file (4096 pages; the messages fill about 414 of
# them).  The round spans several of FlushRealTimeService's 500 ms sleeps
# (flushCommitLogTimed: Thread.sleep(flushIntervalCommitLog)).  Writeback is
# quiet (guest_writeback_quiet): only RocketMQ's force() cleans pages.
#
# Names in the JSON a round prints: pages = ceil(wrote / 4096), the
# commit-log pages the appends touched; file_pages = 4096; flushes = times
# the file's flushed position advanced while the appends ran (a monitor
# thread polls it every ms; flushes are >= 500 ms apart; the position is
# set when force() returns), flushes_total = the same up to the end of the
# store's shutdown() (a flush still running, and the final flush(0));
# first_flush_page = pages touched when the first advance was seen (-1:
# none during the appends).  Latencies are reported (TAP "# " lines and
# $WPSTAT_RESULTS/rocketmq/), never asserted.

load ../bats/helpers

ROUNDS=${WPSTAT_RMQ_ROUNDS:-5}
MSGS=${WPSTAT_RMQ_MSGS:-1500}
PACE=${WPSTAT_RMQ_PACE_US:-1000}
FILE_SIZE=16M
FILE_PAGES=4096
COLS="mkwrite_first mkwrite_wp mkclean_calls mkclean_msync mkclean_fsync dirtied stable_waits bdp_throttled bdp_pauses"

setup() {
	require_module
	[ -d "$WPSTAT_TOP/build/clients/java/classes" ] ||
		fail "set-up: build/clients/java is not built (make clients-build)"
	RES=${WPSTAT_RESULTS:-$BATS_FILE_TMPDIR}/rocketmq
	mkdir -p "$RES"
}

# The /proc/wpstat/inodes column $2 of file $1, matched on dev, inode AND
# generation: the pre-allocated next file AllocateMappedFileService warms
# and shutdown() deletes may hand its inode number to the next round's
# commit log, and its row (4096 warm-up faults) stays.  lsattr -v prints
# the generation (FS_IOC_GETVERSION, as the module reads it).
counter_gen() {
	local file=$1 name=$2 dev ino gen
	dev=$(sb_dev "$file") || return 1
	ino=$(stat -c %i "$file") || return 1
	gen=$(lsattr -v "$file" | awk '{ print $1 }') || return 1
	awk -v dev="$dev" -v ino="$ino" -v gen="$gen" -v name="$name" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 == dev && $2 == ino && $3 == gen { v = $(col[name]) }
		END { print (v == "" ? 0 : v) }' /proc/wpstat/inodes
}

# run_setting WARM POOL: one JVM, $ROUNDS rounds; leaves one JSON line per
# round in $RES/WARM-POOL.jsonl: the driver's line plus .counters, the
# commit-log file's /proc/wpstat/inodes columns after the store's shutdown
# (its last flush), read before the files are removed.
run_setting() {
	local warm=$1 pool=$2 dir line path c v json
	dir=$WPSTAT_FS_DIR/ext4/rocketmq-$warm-$pool
	OUT=$RES/$warm-$pool.jsonl
	rm -rf "$dir" "$OUT"
	mkdir -p "$dir"
	TMPDIR=$BATS_TEST_TMPDIR "$WPSTAT_TOP/selftests/clients/rocketmq-run.sh" \
		--dir "$dir" --messages "$MSGS" --size 1K --pace-us "$PACE" \
		--warm "$warm" --transient-pool "$pool" --file-size "$FILE_SIZE" \
		--rounds "$ROUNDS" >"$BATS_TEST_TMPDIR/out" 2>"$RES/$warm-$pool.stderr" ||
		fail "RocketmqAppend failed: $(tail -n 20 "$RES/$warm-$pool.stderr")"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/out")" = "$ROUNDS" ] ||
		fail "expected $ROUNDS JSON lines, got: $(cat "$BATS_TEST_TMPDIR/out")"
	while read -r line; do
		# The messages fit in the first file: one commit-log file a round.
		[ "$(jq '.files | length' <<<"$line")" = 1 ] ||
			fail "more than one commit-log file: $line"
		path=$(jq -r '.files[0].path' <<<"$line")
		[ -f "$path" ] || fail "commit log $path is gone"
		json={
		for c in $COLS; do
			v=$(counter_gen "$path" "$c")
			[[ $v =~ ^[0-9]+$ ]] || fail "counter $c of $path reads '$v'"
			json+="\"$c\":$v,"
		done
		json=${json%,}}
		jq -c --argjson c "$json" --argjson fp "$FILE_PAGES" \
			'. + {counters: $c, pages: .files[0].pages, file_pages: $fp}' <<<"$line" >>"$OUT"
	done <"$BATS_TEST_TMPDIR/out"
	rm -rf "$dir"
	report
}

# The latency and the counts of every round, as TAP comments.
report() {
	jq -r '"# round \(.round): p50 \(.p50_ns / 1000 | floor) us, p99 \(.p99_ns / 1000 | floor) us, max \(.max_ns / 1000 | floor) us (first put \(.first_ns / 1000 | floor) us, max of the rest \(.max_rest_ns / 1000 | floor) us); \(.messages) msgs in \(.elapsed_ns / 1000000 | floor) ms; pages \(.pages), flushes \(.flushes) (\(.flushes_total) by shutdown), first flush at page \(.first_flush_page), commits \(.commits); " + (.counters | to_entries | map("\(.key) \(.value)") | join(", "))' "$OUT" >&3
}

# check ROUND_JSON JQ_CONDITION WHY: fail with the round and the reason
# unless the condition holds.
check() {
	[ "$(jq -r "$2" <<<"$1")" = true ] ||
		fail "round $(jq -c '{round, pages, flushes, flushes_total, first_flush_page, commits, counters}' <<<"$1"): expected $2 ($3)"
}

# What every round must show, whatever the setting.
check_common() {
	local r=$1
	check "$r" '.flushes_total >= 2' "FlushRealTimeService flushed during the round, not only at shutdown"
	check "$r" '.counters.mkclean_calls == .counters.dirtied' \
		"every page dirtied is cleaned exactly once by the flush that follows it or by the shutdown's flush(0)"
	check "$r" '.counters.stable_waits == 0' "the RAM disk does not require stable pages"
}

@test "warm off, pool off: one first-write fault per appended page, write-protect faults only for the page a flush finds half-written" {
	run_setting off off
	while read -r r; do
		check_common "$r"
		# DefaultMappedFile#appendMessagesInner stores through the
		# MappedByteBuffer; nothing touched the file before: do_shared_fault.
		check "$r" '.flushes >= 2' "the appends span at least two of FlushRealTimeService's flushes, or this tests nothing"
		check "$r" '.counters.mkwrite_first == .pages' "one first-write fault per appended page"
		# FlushRealTimeService -> MappedByteBuffer.force() = msync cleans the
		# pages written so far; only the page the appender is inside is
		# stored to again: at most one do_wp_page per flush (and only if
		# the writeback reaches that page before the appender leaves it).
		check "$r" '.counters.mkwrite_wp <= .flushes_total' "at most one write-protect fault per flush"
		check "$r" '.counters.dirtied == .counters.mkwrite_first + .counters.mkwrite_wp' "every dirtying is a write fault"
		check "$r" '.counters.mkclean_msync == .counters.mkclean_calls' "only force() (msync) cleans the file"
	done <"$OUT"
}

@test "warm on, pool off: warm-up takes every first-write fault, the first flush write-protects the whole file, every page appended after it faults again" {
	run_setting on off
	while read -r r; do
		check_common "$r"
		# AllocateMappedFileService -> DefaultMappedFile#warmMappedFile:
		# one zero byte per page, no force() under ASYNC_FLUSH, then mlock
		# (populates read-only: no write faults).  The first put waits for it.
		check "$r" '.counters.mkwrite_first == .file_pages' "warmMappedFile faulted every page of the file, the appender none"
		# The first force() is msync over the whole 16 MiB mapping: all
		# file_pages dirty pages cleaned and write-protected.
		check "$r" '.counters.mkclean_calls >= .file_pages' "the first flush cleans every warmed page"
		# So every page first appended after it takes do_wp_page, plus at
		# most one more per flush for the half-written page.
		check "$r" 'if .first_flush_page >= 0 then .counters.mkwrite_wp >= .pages - .first_flush_page else true end' "every page appended after the first flush ended takes a write-protect fault"
		check "$r" '.counters.mkwrite_wp <= .pages + .flushes_total' "no more than one per appended page plus one per flush"
		check "$r" '.counters.mkwrite_wp > 0' "warm-up does not spare the appender its faults"
		check "$r" '.counters.dirtied == .counters.mkwrite_first + .counters.mkwrite_wp' "every dirtying is a write fault"
		check "$r" '.counters.mkclean_msync == .counters.mkclean_calls' "only force() (msync) cleans the file"
	done <"$OUT"
}

@test "warm off, pool on: no write fault at all on the commit log; write(2) dirties it, fdatasync cleans it" {
	run_setting off on
	while read -r r; do
		check_common "$r"
		# appendMessagesInner stores into the pool's direct buffer;
		# CommitRealTimeService -> DefaultMappedFile#commit0 ->
		# FileChannel.write after position() = write(2): no page fault, no mkwrite.
		check "$r" '.counters.mkwrite_first == 0 and .counters.mkwrite_wp == 0' "no store through the mapping"
		check "$r" '.flushes >= 2' "the appends span at least two of FlushRealTimeService's flushes, or this tests nothing"
		check "$r" '.commits >= 2' "CommitRealTimeService committed (200 ms period)"
		check "$r" '.counters.dirtied >= .pages' "write(2) dirtied every appended page"
		# flush with a writeBuffer: FileChannel.force(false) = fdatasync.
		check "$r" '.counters.mkclean_fsync == .counters.mkclean_calls and .counters.mkclean_msync == 0' "only fdatasync cleans the file"
	done <"$OUT"
}

@test "warm on, pool on: warm-up's first-write faults only, no write-protect fault after the flushes" {
	run_setting on on
	while read -r r; do
		check_common "$r"
		# warmMappedFile still writes the mapping (it ignores the pool);
		# appends go through write(2), so the cleaned PTEs are never stored to.
		check "$r" '.counters.mkwrite_first == .file_pages' "warmMappedFile faulted every page"
		check "$r" '.counters.mkwrite_wp == 0' "no store through the mapping after the warm-up"
		check "$r" '.commits >= 2' "CommitRealTimeService committed (200 ms period)"
		check "$r" '.counters.mkclean_calls >= .file_pages' "the first fdatasync cleans every warmed page"
		check "$r" '.counters.mkclean_fsync == .counters.mkclean_calls and .counters.mkclean_msync == 0' "only fdatasync cleans the file"
	done <"$OUT"
}
