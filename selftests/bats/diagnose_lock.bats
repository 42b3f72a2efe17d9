#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# wpstat diagnose's rules for a store that sleeps on a page's lock while
# another task reads the page, and for a FUSE server's slow WRITE waited
# for in the fault (unnamed time; wb from 6.14).
#
# Runs inside the guest as root with the module loaded (guest-check.sh).
# The slow device is the C suites' (wps-slowdev: null_blk, optionally
# behind dm-delay, mounted at /tmp/wpstat-slow).  Set-up and teardown:
# diagnose.bash.

bats_require_minimum_version 1.5.0

load helpers
load scenarios
load diagnose

# The unnamed rule's write-protect branch.  A store to a page whose WRITE
# a FUSE server has not answered waits in fuse_page_mkwrite ->
# fuse_wait_on_page_writeback (wait_event on fi->page_waitq), which no
# wpstat probe names (wpstat_fuse's prediction F2).  The scenario: the
# fsync loop sends the writer's 32 pages to a fuse-passthrough server
# that sleeps 50 ms in every WRITE, and the writer's next stores wait for
# the reply in their faults.  The bdi gets min_ratio 1, as in wpstat_fuse:
# a fresh FUSE bdi (strictlimit) would otherwise throttle every dirtying.
# Expected for the writer: an "unnamed" finding, not "first_write"
# (fault_wp > fault_first: 32 first-write faults, then one per page per
# fsync), that explains most of its stall time, with the off-CPU profile
# as its remedy; and the FUSE blind_spot finding.  From 6.14 FUSE keeps
# PG_writeback until the server replies (no temporary folio) and the
# fault waits in folio_wait_writeback: there the finding is "wb" instead
# (measured on 7.2: 99.8 % of the writer's stall time).
@test "diagnose: a FUSE server's slow WRITE, waited for in the fault, is unnamed time (wb from 6.14)" {
	local server=$WPSTAT_TOP/build/bin/fuse-passthrough f
	case $(uname -r) in
	5.10.*) skip "5.10's FUSE writeback is not investigated yet: wpstat_fuse once hung there in close() (selftests/suites.txt)" ;;
	esac
	[ -x "$server" ] || skip "no build/bin/fuse-passthrough (libfuse3-dev missing at build time?)"
	[ -e /dev/fuse ] || modprobe fuse || skip "no /dev/fuse"
	wpstat level timing >/dev/null
	FUSE_MNT=$WPSTAT_FS_DIR/fuse
	mkdir -p "$FUSE_MNT" "$WPSTAT_FS_DIR/ext4/fuse-backing"
	umount -l "$FUSE_MNT" 2>/dev/null || true
	"$server" --write-delay-ms 50 "$WPSTAT_FS_DIR/ext4/fuse-backing" "$FUSE_MNT" ||
		fail "cannot mount fuse-passthrough"
	echo 1 >"/sys/class/bdi/$(mountpoint -d "$FUSE_MNT")/min_ratio"
	f=$FUSE_MNT/$BATS_TEST_NAME.$$
	touch "$f"
	start_fsync_loop "$f"
	wpstat_control reset
	run_writer "$f"
	kill "$FSYNC_PID"
	wait "$FSYNC_PID" 2>/dev/null || true
	FSYNC_PID=
	run --separate-stderr wpstat diagnose --json --pid "$WPLOAD_PID" "$FUSE_MNT"
	assert_success
	echo "# $(jq -c '{stall_ns, f: [.findings[] | {rule, severity, share}]}' <<<"$output")" >&3
	local rule=unnamed
	case $(uname -r) in
	[7-9].* | 6.1[4-9].* | 6.[2-9][0-9].*) rule=wb ;;
	esac
	jq -e --argjson pid "$WPLOAD_PID" --arg rule "$rule" '
		([.findings[] | select(.rule == "first_write")] == []) and
		([.findings[] | select(.rule == "blind_spot")] | length == 1) and
		(if $rule == "wb" then
		 (.findings[0] | .rule == "wb" and .pid == $pid and .share >= 0.5) and
		 ([.findings[] | select(.rule == "unnamed")] == [])
		 else
		 (.findings[] | select(.rule == "unnamed") |
		 .pid == $pid and .share >= 0.5 and
		 ([.evidence[] | {(.name): .value}] | add |
		  .fault_wp > .fault_first and .fault_unnamed_ns > 0) and
		 (.remedies[0].change | test("off-CPU")))
		 end)' <<<"$output"
	rm -f "$f"
}

# The lock rule.  A store to a page another task is reading: the reader
# (dd, one 128 KiB read: a single readahead window, the whole file) put
# the file's 32 pages in the page cache locked until the read ends,
# LOCK_DELAY ms late (dm-delay on reads); the writer's first store faults,
# filemap_fault() finds page 0 and sleeps for its lock
# (__folio_lock_killable()), then the fault is retried; the rest of the
# pages are read by then.  From 6.4 the retry (per-VMA locks) is no major
# fault and the sleep is a lock wait (wpstat_faultwait's lockwait holds the
# counts); on 5.10 and 6.1 every retry carries FAULT_FLAG_TRIED, a major
# fault, and the same sleep is a read-in (the readin rule's).
# Expected from 6.4: diagnose's first finding for the writer is "lock",
# at least one lock wait, none longer than LOCK_DELAY and a tick (the
# store comes some time into the read: wpload polls its start file), no
# remedy, with the reason (docs/interface.md, "diagnose"): waiting for a
# read is what the store must do; the writeback case was measured on ZFS,
# where no setting helped (zfs.bats).  The reader is seen asleep in its
# read (its wchan) before the writer stores; a read that ends first (a
# guest descheduled for LOCK_DELAY) is tried again, 5 times at most.
# LOCK_DELAY is the window between seeing the reader asleep and the
# store: one pass of the wchan poll (a fork of sleep), the rm of the start
# file and wpload's 10 ms poll.  Under TCG on a busy host a fork costs
# 100-200 ms: with 300 ms the store came after the read in 5 of 5 tries
# on 6.12 (measured 2026-12-07: dd's read took 1 s, 0.3 s of it the
# delay, and the store found every page read).  With 2 s, and wchan read
# without a fork, the store came 0.15-0.2 s into the read (6.12, 7.2):
# room for a guest several times slower.
LOCK_DELAY=2000

@test "diagnose: a store to a page another task is reading sleeps on its lock: a lock finding" {
	local f=$SLOW/lock go=$BATS_TEST_TMPDIR/go reader try waits=0 wchan
	wps_kernel_at_least 6 4 ||
		skip "before 6.4 the retried fault is major: its lock sleep is a read-in (wpstat_faultwait lockwait)"
	wpstat level timing >/dev/null
	wps-slowdev up ext4 0 0 "" $LOCK_DELAY || fail "cannot set up the slow device"
	wpload --file "$f" --size 128K --mode write --passes 1 --quiet >/dev/null ||
		fail "cannot write the file"
	for try in 1 2 3 4 5; do
		wpload_ready "$go" --file "$f" --size 128K --passes 1 --no-create --cold --quiet
		wpstat_control reset
		dd if="$f" of=/dev/null bs=128K count=1 status=none &
		reader=$!
		for _ in $(seq 3000); do
			# read, not cat: no fork between seeing the sleep and the go.
			wchan=
			read -r wchan 2>/dev/null <"/proc/$reader/wchan" || true
			[ "$wchan" = folio_wait_bit_common ] && break
			kill -0 "$reader" 2>/dev/null || break
			sleep 0.01
		done
		rm -f "$go"
		wait "$WPLOAD_PID" || fail "wpload failed: $(cat "$BATS_TEST_TMPDIR/wpload.out")"
		wait "$reader"
		waits=$(writer_stall lock_waits)
		echo "# try $try: lock_waits $waits, readin_waits $(writer_stall readin_waits)" >&3
		[ "$waits" -ge 1 ] && break
	done
	[ "$waits" -ge 1 ] || fail "no store met the reader's lock in 5 tries"
	run --separate-stderr wpstat diagnose --json --pid "$WPLOAD_PID" "$SLOW"
	assert_success
	echo "# $(jq -c '{stall_ns, f: [.findings[] | {rule, share}], lock: [.findings[] | select(.rule == "lock") | {file, evidence, remedies}]}' <<<"$output")" >&3
	jq -e --argjson pid "$WPLOAD_PID" --arg f "$f" --argjson delay $LOCK_DELAY \
		--argjson tick "$WPS_TICK_MS" '
		def ev(n): [.evidence[] | select(.name == n) | .value] | first;
		.findings[0] | .rule == "lock" and .pid == $pid and .file == $f and
		ev("lock_waits") >= 1 and ev("lock_ns") > 0 and
		ev("lock_max_ns") <= ($delay + $tick) * 1000000 and
		(.mechanism | test("folio_wait_bit_common")) and
		.remedies == [] and (ev("not_remedies") | test("none measured"))' <<<"$output"
}
