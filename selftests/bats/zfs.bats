#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# wpstat diagnose on ZFS (make setup-zfs's build; guest-check.sh loads it
# and puts zpool and zfs on PATH for suites named *zfs*), at level timing:
# the writer-next-to-an-fsync scenario of diagnose.bats (scenarios.bash)
# on a pool on the slow device (null_blk behind a 20 ms dm-delay): its
# finding in ZFS's terms, and why it offers no remedy; the fsync loop's
# own ZIL waits, and the two remedies offered for them, each measured.
#
# What the scenario does on ZFS 2.3.2 (6.12), measured before these tests
# were written (docs/fs/zfs.md, two rounds each, the host loaded): the
# writer's fault time is mostly page-lock sleeps (47 to 90 % of it; most
# of the rest its own CPU time), rarely a DMU transaction wait
# (journal_waits 0-2 a run), never a stable-page wait, and no lock sleep
# at all with no syncer.  Lock time in 3 s: 234-351 ms as it is; 503-670
# ms with a separate log device (the syncs are quicker and come back
# sooner: 451-723 write-protects instead of 165-173); 150-523 ms with
# sync=disabled, sync=always, logbias=throughput, zfs_txg_timeout=1, a
# 4 MiB zfs_dirty_data_max or lazytime; 70-329 ms with an fsync every
# 300 ms or 2 s (an fsync here takes ~0.5 s: a ZIL commit per page its
# data-integrity pass writes).  None is a remedy; diagnose offers none.
# The fsync loop itself waits in ZIL commits (zil_waits, level timing):
# 40.3 ms a commit as it is, 11.2 ms with the log device (the first run
# of the test below; docs/fs/zfs.md).

bats_require_minimum_version 1.5.0

load helpers
load scenarios

setup_file() {
	grep -q '^wpstat ' /proc/modules || insmod "$WPSTAT_MODULE"
}

setup() {
	require_module
	if [ -e "$WPSTAT_FS_DIR/zfs.unavailable" ]; then
		skip "zfs not set up: $(head -n 1 "$WPSTAT_FS_DIR/zfs.unavailable")"
	fi
	command -v zpool >/dev/null || fail "ZFS is set up but zpool is not on PATH"
	wpstat_control filter none
	wpstat_control enable
	level_timing
	wpstat_control reset
	FSYNC_PID=
	WPLOAD_PID=
}

teardown() {
	[ -z "${FSYNC_PID:-}" ] || kill "$FSYNC_PID" 2>/dev/null || true
	[ -z "${WPLOAD_PID:-}" ] || kill "$WPLOAD_PID" 2>/dev/null || true
	wps-slowdev down
	module_loaded || insmod "$WPSTAT_MODULE"
	level_restore
}

# ZFS's count of log blocks written to the pool's normal or slog class
# (/proc/spl/kstat/zfs/zil, every version here).
zil_kstat() {
	awk -v k="zil_itx_metaslab_$1_count" '$1 == k { print $3; f = 1 } END { exit !f }' /proc/spl/kstat/zfs/zil ||
		fail "no zil_itx_metaslab_$1_count in /proc/spl/kstat/zfs/zil"
}

# The lock finding's stall time in $output (0 without one).
lock_ns() {
	jq -r '[.findings[] | select(.rule == "lock") | .stall_ns] | add // 0' <<<"$output"
}

# After writer_next_to_fsync: the fsync loop's zil finding (diagnose of
# every row, the one of pid $SYNC_PID) in ZIL, and from its evidence the
# commits' mean time in ZIL_MEAN_NS (0 without one).  The loop syncs
# back to back, so its total ZIL time is most of the run whatever a
# commit costs: a remedy shows in the time of each commit.
syncer_zil() {
	local out
	out=$(wpstat diagnose --json "$SLOW") || fail "wpstat diagnose failed: $out"
	ZIL=$(jq -c --argjson pid "$SYNC_PID" '[.findings[] | select(.rule == "zil" and .pid == $pid)]' <<<"$out")
	ZIL_MEAN_NS=$(jq -r '[.[0].evidence[]? | {(.name): .value}] | add // {} |
		if (.zil_waits // 0) > 0 then (.zil_ns / .zil_waits | floor) else 0 end' <<<"$ZIL")
}

# Expected: a lock finding (the writer's faults slept on the page lock
# while the fsync's writeback held it: 60-100 sleeps, 28-78 % of the
# stall time, measured), whose mechanism is ZFS's writeback
# (zfs_putpage), whose evidence names the ZFS version and what was
# measured not to help, and which offers no remedy.
@test "diagnose on ZFS: a writer next to an fsync loop waits on page locks, in ZFS's terms" {
	FS=zfs writer_next_to_fsync 0
	jq -e --arg ver "$(cat /sys/module/zfs/version)" '
		[.findings[] | select(.rule == "lock")] | length == 1 and
		all(.[]; (.mechanism | test("zfs_putpage")) and
		    ([.evidence[] | select(.name == "zfs" and (.value | startswith($ver)))] | length == 1) and
		    ([.evidence[] | select(.name == "not_remedies" and (.value | test("SLOG")))] | length == 1) and
		    ([.evidence[] | select(.name == "write_protected_by" and (.value | startswith("fsync")))] | length == 1) and
		    .remedies == [])' \
		<<<"$output" >/dev/null ||
		fail "no lock finding in ZFS's terms: $(jq -c '[.findings[] | {rule, mechanism, evidence, remedies: [.remedies[].change]}]' <<<"$output")"
	# A DMU transaction wait in the faults is rare here (0-2 a run; once a
	# journal finding of 7.5 % on a loaded host): where there is one, it
	# is named as ZFS's (dmu_tx_assign), and nothing is offered: no remedy
	# was measured on ZFS (lazytime, fewer or moved fsyncs).
	jq -e 'all(.findings[] | select(.rule == "journal");
		(.mechanism | test("dmu_tx_assign")) and
		([.evidence[] | select(.name == "lazytime" and (.value | startswith("not offered on ZFS")))] | length == 1) and
		([.evidence[] | select(.name == "not_remedies")] | length == 1) and
		.remedies == [])' <<<"$output" >/dev/null ||
		fail "a journal finding not in ZFS's terms: $(jq -c '[.findings[] | select(.rule == "journal")]' <<<"$output")"
	# Whatever else is found on ZFS offers only what was measured there
	# (ZFS's mmap path is unlike any other filesystem's, so a remedy
	# measured elsewhere proves nothing on it): the zil finding's two
	# remedies (the next tests), the CPU finding's (no filesystem in it)
	# and wpstat's own limits; the unnamed finding keeps only its
	# profiling step.  Every other finding (read-in,
	# throttle, first-write: their remedies were measured on ext4, xfs and
	# btrfs) says why it offers none.
	jq -e 'all(.findings[] | select(.rule | IN("zil", "runq", "limits", "blind_spot") | not);
		(.remedies | length) <= (if .rule == "unnamed" then 1 else 0 end) and
		([.evidence[] | select(.name == "not_remedies")] | length == 1))' \
		<<<"$output" >/dev/null ||
		fail "a finding on ZFS offers remedies never measured there: $(jq -c '[.findings[] | {rule, remedies: [.remedies[].change], evidence: [.evidence[] | select(.name == "not_remedies")]}]' <<<"$output")"
}

# A separate log device, both ways: the same scenario with a RAM disk
# (/dev/ram7) as the pool's log (zpool add wpslow log), both runs here.
# The fsync loop's own waits are ZIL commits (zil_commit() in zpl_fsync:
# the pages' log records written to the 20 ms device): a zil finding,
# whose first remedy is the log device.  Expected: with it every log
# block goes to the RAM disk (ZFS's kstat), and a commit is shorter
# (quiet host: under half), so it is offered for them.  It is not
# offered for the writer's lock sleeps: the quicker syncs come back
# sooner and write-protect the pages more often, so the writer takes at
# least as many write-protect faults, each a chance to meet the lock.
# Its lock time went either way (quiet host: 503-670 ms with it against
# 234-351 without; 144 against 153; CI's loaded run 126 against 253),
# within the spread of runs without it (85-351 ms): one run of each
# cannot tell a change, so the time is printed and the count asserted.
# If a ZFS release changes where the log blocks go, a commit's length
# or the count, this fails.
@test "diagnose on ZFS: a log device shortens the syncer's ZIL waits (offered for them), not the writer's lock waits" {
	local base slog base_zil normal0 slog0 normal slog_blocks base_wp slog_wp
	FS=zfs writer_next_to_fsync 0
	base=$(lock_ns)
	base_wp=$(counter "$SLOW/data" mkwrite_wp)
	syncer_zil
	base_zil=$ZIL_MEAN_NS
	jq -e 'length == 1 and all(.[]; (.mechanism | test("zil_commit")) and
		(.remedies | length) == 2 and
		(.remedies[0].change | test("log device")) and
		(.remedies[0].change | test("zpool add wpslow log ")) and
		(.remedies[1].change | test("zfs set sync=disabled wpslow: ")) and
		(.remedies[1].cost | test("acknowledged data lost")))' <<<"$ZIL" >/dev/null ||
		fail "no zil finding for the fsync loop (pid $SYNC_PID) with its two remedies: $ZIL"
	wps-slowdev down
	[ -b /dev/ram7 ] || fail "no RAM disk /dev/ram7 (guest-check.sh keeps it free) for the log device"
	# The pool uses a new log device once a txg has synced its config
	# (wpstat_zfs's msync_waits_for_the_zil): zpool sync, or the first
	# commits wait for the txg (191 ms each on trixie's 2.3.9 without it).
	normal0=$(zil_kstat normal)
	slog0=$(zil_kstat slog)
	SCENARIO_SETUP="zpool add -f wpslow log /dev/ram7 && zpool sync wpslow" FS=zfs writer_next_to_fsync 0
	normal=$(zil_kstat normal)
	slog_blocks=$(zil_kstat slog)
	normal=$((normal - normal0)) slog_blocks=$((slog_blocks - slog0))
	slog=$(lock_ns)
	slog_wp=$(counter "$SLOW/data" mkwrite_wp)
	syncer_zil
	echo "# lock finding: $base ns without a log device, $slog ns with one; write-protect faults: $base_wp, then $slog_wp; the syncer's ZIL commits: $base_zil ns each, then $ZIL_MEAN_NS ns; log blocks with the device: $slog_blocks on it, $normal on the pool's" >&3
	[ "$base" -gt 0 ] || fail "no lock finding at all without a log device"
	[ "$slog_wp" -ge "$base_wp" ] ||
		fail "with the log device the writer took $slog_wp write-protect faults, $base_wp without: fewer cleans, so measure its lock time and offer it"
	[ "$base_zil" -gt 0 ] || fail "no ZIL commit in the fsync loop's zil finding without a log device"
	# Every log block went to the RAM disk: no commit waited for the
	# 20 ms device.  How much shorter a commit is, is a quiet host's
	# figure (scripts/zfs/slog-experiment.sh); one that starves the guest
	# stretches the commits' CPU time, which the device's delay was not.
	[ "$slog_blocks" -gt 0 ] && [ "$normal" = 0 ] ||
		fail "with the log device $slog_blocks log blocks went to it and $normal to the pool's devices"
	[ "$ZIL_MEAN_NS" -lt "$base_zil" ] ||
		fail "the log device did not shorten a ZIL commit ($base_zil ns, then $ZIL_MEAN_NS ns), and it is offered for them"
}

# sync=disabled, diagnose's second remedy for the zil finding (never the
# first: its cost is acknowledged data lost on a crash): zil_commit()
# returns at once (zl_sync == ZFS_SYNC_DISABLED).  Expected: no zil
# finding for the fsync loop, and no ZIL wait counted for the file.
@test "diagnose on ZFS: sync=disabled leaves the syncer no ZIL wait" {
	SCENARIO_SETUP="zfs set sync=disabled wpslow" FS=zfs writer_next_to_fsync 0
	syncer_zil
	[ "$ZIL" = "[]" ] || fail "a zil finding with sync=disabled: $ZIL"
	[ "$(counter "$SLOW/data" zil_waits)" = 0 ] ||
		fail "zil_waits $(counter "$SLOW/data" zil_waits) with sync=disabled"
}

# openzfs #12662 through diagnose (wpstat_zfs's
# msync_meets_writeback_held_until_the_txg counts it): a process stores to
# 32 pages of a mapped file, a zpool sync restarts the txg clock
# (zfs_txg_timeout 4 s), sync_file_range(WRITE) starts writeback, and its
# msync then waits.  Expected by the loaded ZFS (docs/fs/zfs.md): before
# 2.2 the writeback stays until the txg, about 4 s, and the process gets a
# sync_wb finding whose one remedy is ZFS 2.2 or later (measured there:
# the same msync 30 ms with 2.3.2); from 2.2 no sync_wb finding.
@test "diagnose on ZFS: an msync that meets writeback held until the txg (openzfs #12662)" {
	local f=$WPSTAT_FS_DIR/zfs/held.$$ saved pid out old
	saved=$(cat /sys/module/zfs/parameters/zfs_txg_timeout)
	echo 4 >/sys/module/zfs/parameters/zfs_txg_timeout
	python3 - "$f" <<-'PY' &
	import ctypes, mmap, os, subprocess, sys
	fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
	os.ftruncate(fd, 32 * 4096)
	m = mmap.mmap(fd, 32 * 4096)
	for i in range(32):
	    m[i * 4096] = 1
	subprocess.run(["zpool", "sync", "wpstat"], check=True)
	# SYNC_FILE_RANGE_WRITE; bookworm's Python 3.11 has no os.sync_file_range.
	if ctypes.CDLL(None, use_errno=True).sync_file_range(fd, ctypes.c_int64(0), ctypes.c_int64(0), 2):
	    sys.exit("sync_file_range: " + os.strerror(ctypes.get_errno()))
	m.flush()
	PY
	pid=$!
	wait "$pid" || { echo "$saved" >/sys/module/zfs/parameters/zfs_txg_timeout; fail "the msync process failed"; }
	echo "$saved" >/sys/module/zfs/parameters/zfs_txg_timeout
	out=$(wpstat diagnose --json --pid "$pid" "$WPSTAT_FS_DIR/zfs") || fail "wpstat diagnose failed: $out"
	echo "# ZFS $(cat /sys/module/zfs/version): $(jq -c '[.findings[] | {rule, stall_ns, remedies: [.remedies[].change]}]' <<<"$out")" >&3
	old=$(awk -F. '{ print ($1 < 2 || ($1 == 2 && $2 < 2)) ? 1 : 0 }' /sys/module/zfs/version)
	if [ "$old" = 1 ]; then
		jq -e '[.findings[] | select(.rule == "sync_wb")] | length == 1 and
			all(.[]; .stall_ns >= 1000000000 and (.mechanism | test("12662")) and
			    (.remedies | length) == 1 and (.remedies[0].change | test("ZFS 2.2 or later")))' \
			<<<"$out" >/dev/null || fail "no sync_wb finding of >= 1 s offering ZFS 2.2: $out"
	else
		jq -e '[.findings[] | select(.rule == "sync_wb")] == []' <<<"$out" >/dev/null ||
			fail "a sync_wb finding on ZFS $(cat /sys/module/zfs/version), which commits first: $out"
	fi
}
