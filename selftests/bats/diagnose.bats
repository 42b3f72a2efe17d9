#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# wpstat diagnose: for each rule, a scenario that must produce
# its finding and, where a remedy can be applied in the guest, the same
# scenario with the remedy applied, where the finding must be gone.
# Runs inside the guest as root with the module loaded (guest-check.sh).
#
# The slow device is the C suites' (wps-slowdev: null_blk, optionally
# behind dm-delay, mounted at /tmp/wpstat-slow).  The writer-next-to-an-
# fsync scenario is the README session's: wpload stores to every page of a
# 32-page shared mapping in a loop while another process fsyncs the file
# every 30 ms, on ext4 over a 20 ms dm-delay.  Each fsync write-protects
# the pages (folio_mkclean), so each next store faults; the fault waits
# for the page's writeback when the device asks for stable pages
# (folio_wait_stable), and for the journal when ext4_page_mkwrite's mtime
# update (ext4_dirty_inode) meets the fsync's commit on the inode buffer
# (do_get_write_access).

bats_require_minimum_version 1.5.0

load helpers
load scenarios

# The scenario until the writer has a journal finding, at most 3 times:
# whether a fault's mtime update meets a commit on the inode's buffer is
# a race.  The journal's share was 15-37 % in 18 runs on 6.12, and once,
# in CI with stable waits at 86 %, under the 5 % of a finding.  The tests
# that read what the journal finding says need one.
writer_next_to_fsync_journal() {
	local attempt
	for attempt in 1 2 3; do
		writer_next_to_fsync "$@"
		jq -e 'any(.findings[]; .rule == "journal")' <<<"$output" >/dev/null && return 0
		echo "# attempt $attempt: no journal finding" >&3
		wps-slowdev down
	done
}

# 12 MiB written with pwrite(2) to $SLOW/big from a reset (in cgroup
# directory $1 if given), then `wpstat diagnose --json --pid` of the
# writer in $output.
throttled_writer() {
	rm -f "$SLOW/big"
	wpstat_control reset
	# The row takes the task's cgroup at its first event: move, then exec.
	bash -c '[ -z "$1" ] || echo $$ >"$1/cgroup.procs" || exit 1
		exec wpload --file "$2" --size 12M --mode write --passes 1 --quiet' \
		_ "${1:-}" "$SLOW/big" >/dev/null &
	WPLOAD_PID=$!
	wait "$WPLOAD_PID"
	run --separate-stderr wpstat diagnose --json --pid "$WPLOAD_PID"
	assert_success
}

# Counter $1 (a /proc/wpstat/stalls column: readin_waits, fault_wp, ...)
# of the writer's stall rows (WPLOAD_PID), summed over its files.
writer_stall() {
	wpstat stalls --json --pid "$WPLOAD_PID" |
		jq --arg c "$1" '[.stalls[] | .[$c]] | add // 0'
}

setup_file() {
	grep -q '^wpstat ' /proc/modules || insmod "$WPSTAT_MODULE"
}

setup() {
	require_module
	wpstat_control filter none
	wpstat_control enable
	wpstat_control reset
	FSYNC_PID=
	WPLOAD_PID=
	XFS_REMOUNT=
	FUSE_MNT=
}

teardown() {
	reg_trace_stop 2>/dev/null || true
	if [ -n "${XFS_REMOUNT:-}" ]; then
		modprobe xfs
		mount "$XFS_REMOUNT" "$WPSTAT_FS_DIR/xfs"
		XFS_REMOUNT=
	fi
	[ -z "${FSYNC_PID:-}" ] || kill "$FSYNC_PID" 2>/dev/null || true
	[ -z "${WPLOAD_PID:-}" ] || kill "$WPLOAD_PID" 2>/dev/null || true
	if [ -n "${FUSE_MNT:-}" ]; then
		{ sleep 0.5; umount "$FUSE_MNT"; } 2>/dev/null || umount -l "$FUSE_MNT" 2>/dev/null || true
		FUSE_MNT=
	fi
	wps-slowdev down
	[ -z "${CGROUP_DIR:-}" ] || rmdir "$CGROUP_DIR" 2>/dev/null || true
	CGROUP_DIR=
	module_loaded || insmod "$WPSTAT_MODULE"
	[ "$(module_level)" = counts ] || wpstat_control level counts
	if [ -n "${SAVED_DIRTY:-}" ]; then
		# A *_bytes of 0 is refused (the ratio was in force): the
		# ratios after them put it back.
		# shellcheck disable=SC2086
		sysctl -q $SAVED_DIRTY 2>/dev/null || true
		SAVED_DIRTY=
	fi
	rm -f "$WPSTAT_FS_DIR"/*/"$BATS_TEST_NAME".*
}

@test "diagnose: bad arguments are usage errors" {
	local args
	for args in "--interval 0" "--interval x" "--pid 0" "--pid x" \
		"--path /nonexistent" "--bogus" "--json=1"; do
		# shellcheck disable=SC2086
		run --separate-stderr wpstat diagnose $args
		[ "$status" -eq 2 ] || fail "diagnose $args: status $status"
		assert_one_error
	done
}

@test "diagnose: nothing notable when nothing stalled" {
	wpstat level timing >/dev/null
	wpstat_control reset
	run --separate-stderr wpstat diagnose
	assert_success
	assert_line "nothing notable"
	run --separate-stderr wpstat diagnose --json
	assert_success
	jq -e '.findings == [] and .level == "timing"' <<<"$output"
}

@test "diagnose at level counts: no times, and the way to get them" {
	local f
	f=$(scratch_file ext4)
	wpload --file "$f" --size 256K --passes 2 --sync fsync --quiet >/dev/null
	run --separate-stderr wpstat diagnose --json
	assert_success
	jq -e '.level == "counts" and
		([.findings[] | select(.share != null)] == []) and
		any(.findings[]; .rule == "limits" and
		    (.remedies[0].change | startswith("wpstat level timing")))' <<<"$output"
}

# Expected from the source (see the top): the writer's stall time is in
# stable-page waits and journal waits, each a finding of its own with the
# device's stable_writes (1) and the trigger (fsync) as evidence.  The
# journal's share was 48 % on 6.1 and 8 % on 7.2 (whose stable waits took
# 88 %): required up to 6.x, and checked where it is found on 7.x.
# On a KASAN kernel under TCG the writer's faults cost tens of ms of CPU
# time and it waits for a vCPU besides (check-debug, 2026-12-06: run
# queue 44 %, unnamed 42 %, journal 11 %, stable under the 5 % of a
# finding): there the stable waits must be counted in the writer's rows,
# and a stable finding, if any, is checked whole.
@test "diagnose: a writer next to an fsync loop gets stable and journal findings" {
	local need_journal=true sanitized=false waits
	wpstat level timing >/dev/null
	case $(uname -r) in 5.* | 6.*) ;; *) need_journal=false ;; esac
	if $need_journal; then writer_next_to_fsync_journal 1; else writer_next_to_fsync 1; fi
	if wps_kernel_sanitized; then
		sanitized=true
		waits=$(writer_stall stable_waits)
		echo "# KASAN kernel: the stable finding's share is for production kernels; the writer's stable waits: $waits" >&3
		[ "$waits" -gt 0 ] || fail "no stable wait counted for the writer"
	fi
	# Who synced: the fsync loop's row says its fsyncs write-protected
	# the writer's PTEs (wp_caused); the writer synced nothing itself.
	jq -e --argjson pid "$WPLOAD_PID" --arg f "$SLOW/data" --argjson need $need_journal \
		--arg sync "$SYNC_PID" --argjson sanitized $sanitized '
		def stable_ok: .pid == $pid and .file == $f and .share >= 0.05 and
		 any(.evidence[]; .name == "stable_writes" and (.value | startswith("1 "))) and
		 any(.evidence[]; .name == "write_protected_by" and (.value | test("fsync"))) and
		 any(.evidence[]; .name == "synced_by" and (.value |
		  startswith("pid \($sync) (python3) ") and (test("itself") | not))) and
		 ([.remedies[].change | select(test("^fsync the file less often"))] |
		  length == 1 and (.[0] | test("the syncs are pid \($sync).s, not its own"))) and
		 (.remedies[0].change | startswith("echo 0 > /sys/dev/block/"));
		.stall_ns > 0 and
		([.findings[] | select(.share != null) | .share] | add) <= 1.0001 and
		(if $sanitized then all(.findings[] | select(.rule == "stable"); stable_ok)
		 else any(.findings[]; .rule == "stable" and stable_ok) end) and
		([.findings[] | select(.rule == "journal")] | length >= (if $need then 1 else 0 end)) and
		([.findings[] | select(.rule == "journal") |
		  .pid == $pid and .share >= 0.05 and
		  (.evidence[] | select(.name == "journal_waits") | .value > 0) and
		  (.mechanism | test("do_get_write_access"))] | all)' <<<"$output" ||
		fail "diagnose: $output"
	$sanitized && [[ " $(rules) " != *" stable "* ]] && return 0
	run --separate-stderr wpstat diagnose --pid "$WPLOAD_PID" "$SLOW"
	assert_success
	assert_line --regexp '^[0-9]+\. \[(high|medium|low) [0-9]+%\] stores waited for pages under writeback'
	assert_line --regexp '^   mechanism: folio_wait_stable\(\)'
}

# Write-protects by another process's sync(2): ksys_sync() hands the
# writeback to the flusher (WB_REASON_SYNC), so a kworker cleans the pages
# (mkclean_sync) and no process's own sync is seen (no wp_caused, no
# synced_by).  The fsync scenario with sync(2) every 30 ms instead.
# Expected: a finding whose top trigger is sync, with the remedy to find
# the sync(2) or syncfs(2) caller, and no synced_by.
@test "diagnose: another process's sync(2): the trigger is sync, and its caller is to be found" {
	wpstat level timing >/dev/null
	SYNC_MODE=sync writer_next_to_fsync 1
	jq -e --argjson pid "$WPLOAD_PID" '
		[.findings[] | select(.pid == $pid and
		 (.evidence[] | select(.name == "write_protected_by") | .value | startswith("sync ")) and
		 ([.evidence[] | select(.name == "synced_by")] == []) and
		 ([.remedies[].change | select(startswith("find what calls sync(2)"))] | length == 1))] |
		length >= 1' <<<"$output"
}

# The stable rule's first remedy, applied: with stable_writes 0 at mount,
# folio_wait_stable() does not wait (mapping_stable_writes() is false), so
# the same scenario has no stable finding.
@test "diagnose: with stable_writes 0 (its remedy) the stable finding is gone" {
	wpstat level timing >/dev/null
	writer_next_to_fsync 0
	[[ " $(rules) " != *" stable "* ]] || fail "rules: $(rules)"
	# ext4 waits for writeback only through folio_wait_stable().
	[[ " $(rules) " != *" wb "* ]] || fail "rules: $(rules)"
	jq -e '.stall_ns != null' <<<"$output"
}

# btrfs_page_mkwrite() waits for a page's writeback itself, stable_writes
# 0 or not: the same scenario on btrfs has a wb finding, and no stable one.
# On a KASAN kernel under TCG (check-debug, 2026-12-06: unnamed 67 %, run
# queue 30 %, the wb waits under a finding's 5 %) the wb waits must be
# counted in the writer's rows, and a wb finding, if any, is checked.
@test "diagnose: btrfs waits for writeback in its page_mkwrite: a wb finding" {
	local sanitized=false waits
	wpstat level timing >/dev/null
	FS=btrfs writer_next_to_fsync 0
	if wps_kernel_sanitized; then
		sanitized=true
		waits=$(writer_stall wb_waits)
		echo "# KASAN kernel: the wb finding's share is for production kernels; the writer's wb waits: $waits" >&3
		[ "$waits" -gt 0 ] || fail "no wb wait counted for the writer"
	fi
	jq -e --argjson pid "$WPLOAD_PID" --argjson sanitized $sanitized '
		def wb_ok: .pid == $pid and .share >= 0.05 and
		 (.mechanism | test("btrfs_page_mkwrite"));
		(if $sanitized then all(.findings[] | select(.rule == "wb"); wb_ok)
		 else any(.findings[]; .rule == "wb" and wb_ok) end) and
		([.findings[] | select(.rule == "stable")] == [])' <<<"$output" ||
		fail "diagnose: $output"
}

# The journal rule's remedy, lazytime, applied (a remount, as a user
# would): under lazytime generic_update_time() marks the inode
# I_DIRTY_TIME, and __mark_inode_dirty() calls ext4_dirty_inode() (the
# journal) only for I_DIRTY_INODE, so the mtime update in the fault no
# longer meets the commits: the finding must be gone.  Not from 6.2 until
# 7.2: ext4 keeps i_version always (ext4_init_fs_context: SB_I_VERSION)
# and an mtime change forces its increment (6.12: inode_update_timestamps),
# which adds I_DIRTY_SYNC; measured there, the journal share stayed at
# 40 % once and fell under 5 % once, so diagnose does not offer lazytime
# there, and this test says so instead of asserting either.
@test "diagnose: lazytime (the journal remedy) takes the journal finding away" {
	case $(uname -r) in
	6.[2-9].* | 6.[1-9][0-9].* | 7.[01].*)
		skip "lazytime does not keep ext4's mtime update out of the journal on $(uname -r) (forced i_version increment): diagnose does not offer it" ;;
	esac
	wpstat level timing >/dev/null
	writer_next_to_fsync 1 lazytime
	[[ " $(rules) " != *" journal "* ]] || fail "journal finding with lazytime on $(uname -r): $(rules)"
	jq -e '.stall_ns != null' <<<"$output"
}

# ... and where it does not help, diagnose says so rather than offer it.
@test "diagnose: where lazytime cannot help, the journal finding says so" {
	case $(uname -r) in
	6.[2-9].* | 6.[1-9][0-9].* | 7.[01].*) ;;
	*) skip "lazytime helps on $(uname -r): the test above applies it" ;;
	esac
	wpstat level timing >/dev/null
	writer_next_to_fsync_journal 1
	jq -e '[.findings[] | select(.rule == "journal")] | length >= 1 and
		all(.[]; (.evidence[] | select(.name == "lazytime") | .value | startswith("no help")) and
		    ([.remedies[].change | select(test("lazytime"))] == []))' <<<"$output"
}

# xfs logs a write fault's mtime update in a transaction of its own
# (xfs_vn_update_time: log space, then the inode lock an fsync holds while
# it forces the log), which wpstat times as a journal wait.  Measured in
# this scenario: half the fault time on 5.10, 6.1 and 6.12 (named in all
# 91-98 %), none on 7.2.  lazytime (generic_update_time, no transaction)
# takes the wait away on 5.10; on 6.1 the same time moves to the fault's
# block mapping (xfs_ilock_for_iomap), and from 6.2 the forced i_version
# increment journals the inode anyway: diagnose offers it on 5.x only.
@test "diagnose: on xfs the journal finding is xfs_vn_update_time's; lazytime where it helps" {
	case $(uname -r) in
	7.*) skip "xfs's time update does not wait here on $(uname -r) (measured: journal 0 of 767 ms)" ;;
	esac
	wpstat level timing >/dev/null
	FS=xfs writer_next_to_fsync_journal 1
	jq -e --argjson pid "$WPLOAD_PID" --argjson five "$([[ $(uname -r) == 5.* ]] && echo true || echo false)" '
		.findings[] | select(.rule == "journal") |
		.pid == $pid and .share >= 0.05 and
		(.mechanism | test("xfs_vn_update_time")) and
		(.evidence[] | select(.name == "journal_waits") | .value > 0) and
		(if $five then ([.remedies[].change | select(test("remount,lazytime"))] | length == 1)
		 else ((.evidence[] | select(.name == "lazytime") | .value | startswith("no help")) and
		       ([.remedies[].change | select(test("lazytime"))] == [])) end)' <<<"$output"
	[[ $(uname -r) == 5.* ]] || return 0
	wps-slowdev down
	FS=xfs writer_next_to_fsync 1 lazytime
	[[ " $(rules) " != *" journal "* ]] || fail "journal finding on xfs with lazytime: $(rules)"
}

# The status of probe $1 in debugfs wpstat/probes, and its hits.
probe_status() {
	awk -v p="$1" '$1 == p { print $4 }' /sys/kernel/debug/wpstat/probes
}
probe_hits() {
	awk -v p="$1" '$1 == p { print $5 }' /sys/kernel/debug/wpstat/probes
}

# A module that is not loaded and can be, for a load that concerns no
# probe of wpstat's.
unloaded_module() {
	local m
	for m in dummy tun veth ifb nlmon; do
		grep -q "^$m " /proc/modules && continue
		modprobe -n "$m" 2>/dev/null && { echo "$m"; return 0; }
	done
	return 1
}

# register_kretprobe() calls, counted by a kprobe event in a tracefs
# instance of the test's own (removed by reg_trace_stop and teardown).
REG_TRACE=/sys/kernel/tracing/instances/wpstat-reg
reg_trace_start() {
	reg_trace_stop
	echo 'p:wpstat_test/reg register_kretprobe' >>/sys/kernel/tracing/kprobe_events ||
		fail "cannot add a kprobe event on register_kretprobe"
	mkdir "$REG_TRACE"
	echo 1 >"$REG_TRACE/events/wpstat_test/reg/enable"
}
reg_trace_count() {
	grep -c ' reg: ' "$REG_TRACE/trace" || true
}
reg_trace_stop() {
	[ -d "$REG_TRACE" ] && { echo 0 >"$REG_TRACE/events/wpstat_test/reg/enable"; rmdir "$REG_TRACE"; }
	echo '-:wpstat_test/reg' >>/sys/kernel/tracing/kprobe_events 2>/dev/null || true
}

# xfs is a module, loaded at its first mount: an agent that loads wpstat
# and sets level timing at boot meets it later.  wpstat's module notifier
# attaches xfs_time's kretprobe when xfs comes live and detaches it when
# xfs goes (wpstat_attach.c); without it the probe stays not-found, and
# after an unload kprobes would leave it "gone" but reported attached.
# Each mapped store's fault updates mtime through xfs_vn_update_time, so
# three passes over a fresh 16-page file must hit it (one update can
# cover several faults: the timestamp's granularity).
@test "xfs loaded after level timing: its journal probe attaches with it and goes with it" {
	grep -q '^xfs ' /proc/modules || skip "xfs is not a loaded module here"
	wpstat level timing >/dev/null
	wps-slowdev down
	XFS_REMOUNT=$(findmnt -n -o SOURCE "$WPSTAT_FS_DIR/xfs") ||
		skip "no scratch xfs to unmount"
	[ "$(findmnt -n -t xfs -o TARGET | wc -l)" = 1 ] ||
		skip "another xfs is mounted: $(findmnt -n -t xfs -o TARGET | tr '\n' ' ')"
	umount "$WPSTAT_FS_DIR/xfs"
	modprobe -r xfs || skip "xfs cannot be unloaded: $(lsmod | grep '^xfs ')"
	[ "$(probe_status xfs_time)" = not-found ] ||
		fail "xfs_time with xfs unloaded: $(probe_status xfs_time)"

	# Only the module a probe's target lives in retries it: another
	# module's arrival makes wpstat call no register_kretprobe(), which a
	# kprobe event of our own counts; xfs's arrival makes it call one,
	# for xfs_time.
	local other
	other=$(unloaded_module) || skip "no unloaded module to load here (dummy, tun, veth, ifb, nlmon)"
	reg_trace_start
	modprobe "$other"
	[ "$(reg_trace_count)" = 0 ] ||
		fail "loading $other made $(reg_trace_count) register_kretprobe() calls"
	modprobe -r "$other" || true
	modprobe xfs
	[ "$(reg_trace_count)" -ge 1 ] || fail "loading xfs retried nothing"
	reg_trace_stop
	[ "$(probe_status xfs_time)" = attached ] ||
		fail "xfs_time after modprobe xfs: $(probe_status xfs_time)"
	mount "$XFS_REMOUNT" "$WPSTAT_FS_DIR/xfs"
	XFS_REMOUNT=
	local f hits
	f=$(scratch_file xfs)
	hits=$(probe_hits xfs_time)
	wpload --file "$f" --size 64K --passes 3 --sync msync --quiet >/dev/null
	[ "$(probe_hits xfs_time)" -gt "$hits" ] ||
		fail "no xfs_vn_update_time call seen: hits $hits -> $(probe_hits xfs_time)"
	dmesg | grep -q 'probe xfs_time (xfs_vn_update_time) attached: module xfs loaded' ||
		fail "no kernel log line for the attach"
	rm -f "$f"

	# Gone with xfs, and back with it: a second load is a new module.
	XFS_REMOUNT=$(findmnt -n -o SOURCE "$WPSTAT_FS_DIR/xfs")
	umount "$WPSTAT_FS_DIR/xfs"
	modprobe -r xfs
	[ "$(probe_status xfs_time)" = not-found ] ||
		fail "xfs_time after rmmod xfs: $(probe_status xfs_time)"
	modprobe xfs
	mount "$XFS_REMOUNT" "$WPSTAT_FS_DIR/xfs"
	XFS_REMOUNT=
	[ "$(probe_status xfs_time)" = attached ] ||
		fail "xfs_time after the second modprobe: $(probe_status xfs_time)"
	hits=$(probe_hits xfs_time)
	f=$(scratch_file xfs)
	wpload --file "$f" --size 64K --passes 3 --sync msync --quiet >/dev/null
	[ "$(probe_hits xfs_time)" -gt "$hits" ] ||
		fail "xfs_time counts nothing after xfs came back"
}

# Dirty throttling: 12 MiB written with pwrite(2) to a ~2 MB/s device with
# dirty_bytes 4 MiB (dirty_background_bytes 1 MiB) pauses the writer in
# balance_dirty_pages() (the freerun point is 2.5 MiB); with dirty_bytes
# 64 MiB (16 MiB) the freerun point, 40 MiB, is never reached: no pause.
# The limits in force include the writer's cgroup: balance_dirty_pages()
# also throttles against its memcg's domain (a share of what the cgroup
# may use), so the first writer runs in a cgroup with memory.max 512 MiB,
# where the memory controller is there, and the evidence must name that
# limit and the remedy raise it (512 MiB does not bind here, the global
# 4 MiB does: this checks what is read, not which limit throttled).
@test "diagnose: dirty throttling, its cgroup limit, a device slower than the writer, and the remedy, larger dirty limits" {
	local mnt=/sys/fs/cgroup
	SAVED_DIRTY="vm.dirty_bytes=$(cat /proc/sys/vm/dirty_bytes) vm.dirty_background_bytes=$(cat /proc/sys/vm/dirty_background_bytes) vm.dirty_ratio=$(cat /proc/sys/vm/dirty_ratio) vm.dirty_background_ratio=$(cat /proc/sys/vm/dirty_background_ratio)"
	wpstat level timing >/dev/null
	wps-slowdev up ext4 0 0 "irqmode=2 completion_nsec=2000000 hw_queue_depth=1 max_sectors=8" ||
		fail "cannot set up the slow device"
	sysctl -q vm.dirty_bytes=$((4 << 20)) vm.dirty_background_bytes=$((1 << 20))
	if [ "$(stat -f -c %T $mnt)" = cgroup2fs ] && grep -qw memory $mnt/cgroup.controllers &&
	   { grep -qw memory $mnt/cgroup.subtree_control || echo +memory >$mnt/cgroup.subtree_control; }; then
		CGROUP_DIR=$mnt/wpstat-diag.$$
		mkdir "$CGROUP_DIR"
		echo $((512 << 20)) >"$CGROUP_DIR/memory.max"
	else
		echo "# no cgroup2 memory controller at $mnt: the cgroup evidence is not checked" >&3
	fi
	throttled_writer "${CGROUP_DIR:-}"
	jq -e --arg cg "/wpstat-diag.$$" --argjson in_cg "$([ -n "${CGROUP_DIR:-}" ] && echo true || echo false)" '
		.findings[] | select(.rule == "throttle") | .share >= 0.05 and
		(.evidence[] | select(.name == "dirty_limits") | .value | startswith("dirty_bytes 4194304,")) and
		(if $in_cg then
			(.evidence[] | select(.name == "cgroup") | .value ==
				"\($cg): 536870912 bytes at \($cg) memory.max (the tightest up to the root)") and
			([.remedies[].change | select(startswith("raise \($cg) memory.max (now 536870912)"))] | length == 1)
		 else true end)' <<<"$output"

	# Over an interval inside the next run: is the device the slower?
	# Past the freerun point (2.5 MiB, dirtied in well under a second)
	# balance_dirty_pages() paces the writer to the device's ~2 MB/s: it
	# sleeps much of seconds 1-5 (a tenth at least is asserted), and
	# writeback cleans about as fast as it dirties (measured: 6.12 paused
	# 97 %, dirtied 1.53 MiB/s, cleaned 1.88; 5.10 44 %, 2.00, 1.79).
	# The first run's last 4 MiB are written out first (sync), so the
	# flusher starts on this file alone; a CI guest once cleaned none of
	# it in a 2 s window, paused throughout: the window is 4 s of a 24 MiB
	# run (~10 s at 2 MB/s), and the first run's leftovers are gone.
	sync -f "$SLOW"
	rm -f "$SLOW/big"
	wpload --file "$SLOW/big" --size 24M --mode write --passes 1 --quiet >/dev/null &
	WPLOAD_PID=$!
	sleep 1
	run --separate-stderr wpstat diagnose --json --interval 4 --pid "$WPLOAD_PID"
	wait "$WPLOAD_PID"
	assert_success
	echo "# $(jq -c '[.findings[] | select(.rule == "throttle") | .evidence[] | select(.name == "device_slower") | .value]' <<<"$output")" >&3
	# A pause counts whole in the window where it ends: more than the
	# window reads "paused all of the 4.0 s", never over 100 %.
	# On a KASAN kernel under TCG writeback started on none of the
	# file's pages in the window (check-debug, 2026-12-06: paused 105 %,
	# dirtied and cleaned 0.00 MiB/s): the cleaning rate is for
	# production kernels there; the pause is checked on every kernel.
	local sanitized=false
	if wps_kernel_sanitized; then
		sanitized=true
		echo "# KASAN kernel: writeback's pace in the window is for production kernels" >&3
	fi
	jq -e --argjson sanitized $sanitized '.findings[] | select(.rule == "throttle") | .evidence[] |
		select(.name == "device_slower") | .value |
		test("^yes: paused ([0-9]+ % of|all of) the 4.0 s") and
		(if test("paused all of") then true
		 else (capture("paused (?<p>[0-9]+) %").p | tonumber | . >= 10 and . < 100) end) and
		($sanitized or (capture("cleaned by writeback (?<c>[0-9.]+) MiB/s").c | tonumber > 0))' <<<"$output"

	sysctl -q vm.dirty_bytes=$((64 << 20)) vm.dirty_background_bytes=$((16 << 20))
	throttled_writer
	[[ " $(rules) " != *" throttle "* ]] || fail "throttled with 64 MiB dirty_bytes: $(rules)"
}

# A writer on the slow ext4 (20 ms dm-delay, stable_writes 1): wpload
# on $SLOW/data with the options given, then `wpstat diagnose --json
# --pid` of it in $output.
slow_writer() {
	wps-slowdev up ext4 20 1 || fail "cannot set up the slow device"
	wpstat_control reset
	wpload --file "$SLOW/data" --quiet "$@" >/dev/null &
	WPLOAD_PID=$!
	wait "$WPLOAD_PID"
	run --separate-stderr wpstat diagnose --json --pid "$WPLOAD_PID" "$SLOW"
	assert_success
	echo "# $(jq -c '{stall_ns, f: [.findings[] | {rule, share, wp: ([.evidence[] | select(.name == "write_protected_by") | .value] | first)}]}' <<<"$output")" >&3
	wps-slowdev down
}

# The findings' write-protect triggers and remedies, from $output.
triggers_of() {
	jq -r '[.findings[].evidence[] | select(.name == "write_protected_by") | .value] | join("; ")' <<<"$output"
}

# Write-protects by the writer's own msync, and their remedy, msync less
# often, applied.  The writer stores 512 bytes at a time to a 16-page
# mapping on the RAM disk, 4 passes, and msync(MS_SYNC)s after every
# store: each msync cleans the page just stored to and write-protects it,
# so each next store to it faults again (4 x 16 x 8 stores: 16 first-write
# faults, 496 write-protect ones on 4 KiB folios).  Expected: a finding
# whose trigger is msync, synced by the process itself, with
# "msync(MS_SYNC) less often" among its remedies (the faults' time is the
# filesystem's own work, an unnamed finding, or a journal one).  Applied:
# an msync after every 8 stores, once per page: 48 write-protect faults,
# a tenth; at least 4 times fewer are asserted (large folios would change
# the counts, not the ratio).  Not the stall time: with 48 faults of ~20 us
# one that meets a jbd2 timer commit weighs as much as the rest (measured
# 13.3 ms -> 1.4 ms on 7.2, 11.8 ms -> 7.8 ms on 6.1).
@test "diagnose: the writer's own msync; msync less often (its remedy) cuts its faults" {
	local f before_wp after_wp before after
	wpstat level timing >/dev/null
	f=$(scratch_file ext4)
	own_msync_writer() {
		rm -f "$f"
		wpstat_control reset
		wpload --file "$f" --size 64K --chunk 512 --passes 4 --sync msync --sync-every "$1" --quiet >/dev/null &
		WPLOAD_PID=$!
		wait "$WPLOAD_PID"
		run --separate-stderr wpstat diagnose --json --pid "$WPLOAD_PID"
		assert_success
		echo "# $(jq -c '{stall_ns, f: [.findings[] | {rule, share, wp: ([.evidence[] | select(.name == "write_protected_by") | .value] | first)}]}' <<<"$output")" >&3
	}
	own_msync_writer 1
	before=$(jq '.stall_ns // 0' <<<"$output")
	before_wp=$(counter "$f" mkwrite_wp)
	jq -e --argjson pid "$WPLOAD_PID" '
		[.findings[] | select(.pid == $pid and
		 (.evidence[] | select(.name == "write_protected_by") | .value | startswith("msync ")) and
		 (.evidence[] | select(.name == "synced_by") | .value | test("itself")) and
		 ([.remedies[].change | select(startswith("msync(MS_SYNC) less often"))] | length == 1))] |
		length >= 1' <<<"$output"
	own_msync_writer 8
	after=$(jq '.stall_ns // 0' <<<"$output")
	after_wp=$(counter "$f" mkwrite_wp)
	echo "# msync after every store: $before_wp wp faults, $before ns; after every 8: $after_wp, $after ns" >&3
	[ "$after_wp" -gt 0 ] && [ $((after_wp * 4)) -le "$before_wp" ] ||
		fail "write-protect faults: $before_wp with an msync per store, $after_wp per 8"
}

# Write-protects by the periodic flusher, and their remedy, a longer
# dirty_expire_centisecs, applied.  The writer stores to its 32 pages in a
# loop for 4 s and never syncs; with dirty_writeback_centisecs 50 and
# dirty_expire_centisecs 100 the flusher wakes every 0.5 s and writes back
# an inode dirtied over 1 s ago (wb_check_old_data_flush: for_kupdate), so
# the stores after it fault and wait for those writes.  Expected: a finding
# whose top trigger is flusher-periodic, with the dirty_expire remedy.
# Applied: dirty_expire_centisecs 6000, a minute, longer than the run:
# no flusher-periodic write-protect is left (measured on 6.12: 128 before,
# 0 after, stall 107 ms then 34 ms).  What stays is the same wakeups'
# background check (wb_check_background_flush: a fresh bdi's share of the
# background threshold is tiny), which the remedy does not claim.
@test "diagnose: the periodic flusher; a longer dirty_expire_centisecs (its remedy) stops it" {
	SAVED_DIRTY="vm.dirty_writeback_centisecs=$(cat /proc/sys/vm/dirty_writeback_centisecs) vm.dirty_expire_centisecs=$(cat /proc/sys/vm/dirty_expire_centisecs)"
	wpstat level timing >/dev/null
	sysctl -q vm.dirty_writeback_centisecs=50 vm.dirty_expire_centisecs=100
	slow_writer --size 128K --duration 4
	jq -e '[.findings[] |
		(.evidence[] | select(.name == "write_protected_by") | .value | startswith("flusher-periodic ")) and
		([.remedies[].change | select(startswith("sysctl vm.dirty_expire_centisecs="))] | length == 1)] |
		any' <<<"$output"
	sysctl -q vm.dirty_expire_centisecs=6000
	slow_writer --size 128K --duration 4
	[[ "$(triggers_of)" != *flusher-periodic* ]] ||
		fail "periodic write-protects with a one-minute expiry: $(triggers_of)"
}

# Write-protects by background writeback, and their remedy, a larger
# dirty_background_bytes, applied.  The writer stores to a 4 MiB file in
# passes for 4 s and never syncs (the flusher's own wakeups are an hour
# apart here: guest_writeback_quiet).  Dirtying new pages calls
# balance_dirty_pages_ratelimited(), and with dirty_background_bytes 64 KiB
# the dirty pages are over the background threshold at once:
# wb_start_background_writeback(), whose writes clean the pages the next
# pass stores to again.  Expected: a finding whose top trigger is
# flusher-background, with the dirty_background_bytes remedy.  Applied:
# dirty_background_bytes 64 MiB, above all the file: background writeback
# never starts: no flusher-background write-protect.
# On a KASAN kernel under TCG the writer may take no write-protect fault
# in the 4 s (check-debug, 2026-12-06: first-write 70 %, run queue 30 %,
# no finding with a trigger): where it took none, the first half is for
# production kernels and says so; the remedy half runs on every kernel.
@test "diagnose: background writeback; a larger dirty_background_bytes (its remedy) stops it" {
	local wp
	SAVED_DIRTY="vm.dirty_background_bytes=$(cat /proc/sys/vm/dirty_background_bytes) vm.dirty_background_ratio=$(cat /proc/sys/vm/dirty_background_ratio)"
	wpstat level timing >/dev/null
	sysctl -q vm.dirty_background_bytes=65536
	slow_writer --size 4M --duration 4
	wp=$(writer_stall fault_wp)
	if wps_kernel_sanitized && [ "$wp" = 0 ]; then
		echo "# KASAN kernel: no write-protect fault in the 4 s ($(rules)): background writeback's finding is for production kernels" >&3
	else
		jq -e '[.findings[] |
			(.evidence[] | select(.name == "write_protected_by") | .value | startswith("flusher-background ")) and
			([.remedies[].change | select(startswith("sysctl vm.dirty_background_bytes="))] | length == 1)] |
			any' <<<"$output" || fail "write-protect faults $wp; diagnose: $output"
	fi
	sysctl -q vm.dirty_background_bytes=$((64 << 20))
	slow_writer --size 4M --duration 4
	[[ "$(triggers_of)" != *flusher-background* ]] ||
		fail "background write-protects with dirty_background_bytes 64 MiB: $(triggers_of)"
}

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
	rm -f "$go"
	wpload --file "$SLOW/cold" --size 256K --passes 1 --quiet --start-file "$go" "$@" \
		>"$BATS_TEST_TMPDIR/wpload.out" 2>&1 &
	WPLOAD_PID=$!
	for _ in $(seq 3000); do
		[ -e "$go" ] && break
		kill -0 "$WPLOAD_PID" 2>/dev/null || break
		sleep 0.1
	done
	[ -e "$go" ] || fail "wpload did not get ready: $(cat "$BATS_TEST_TMPDIR/wpload.out")"
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

# A finding's words follow where the wait was: a process that
# writes with pwrite(2) next to the fsync loop takes no fault, so its
# journal waits are write(2)'s, and the finding and its remedies say so,
# and nothing about storing to pages or faults.
@test "diagnose: journal waits in write(2) are worded as a write's" {
	wpstat level timing >/dev/null
	WRITER_MODE=write writer_next_to_fsync_journal 1
	echo "# $(jq -c '[.findings[] | select(.rule == "journal") | {title, r: [.remedies[].change]}]' <<<"$output")" >&3
	jq -e '[.findings[] | select(.rule == "journal")] | length >= 1 and
		all(.[]; (.title | startswith("write(2) calls waited for the filesystem journal")) and
		    ([.remedies[].change | select(test("storing|stores|the fault"))] == []))' <<<"$output"
	run --separate-stderr wpstat diagnose --pid "$WPLOAD_PID" "$SLOW"
	assert_success
	refute_output --partial "write faults waited for the filesystem journal"
}

# The lock rule.  A store to a page another task is reading: the reader
# (dd, one 128 KiB read: a single readahead window, the whole file) put
# the file's 32 pages in the page cache locked until the read ends,
# LOCK_DELAY ms late (dm-delay on reads); the writer's first store faults,
# filemap_fault() finds page 0 and sleeps for its lock
# (__folio_lock_killable()), then the fault is retried; the rest of the
# pages are read by then.  From 6.4 the retry (per-VMA locks) is no major
# fault and the sleep is a lock wait (wpstat_slowdev's lockwait holds the
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
LOCK_DELAY=300

@test "diagnose: a store to a page another task is reading sleeps on its lock: a lock finding" {
	local f=$SLOW/lock go=$BATS_TEST_TMPDIR/go reader try waits=0
	wps_kernel_at_least 6 4 ||
		skip "before 6.4 the retried fault is major: its lock sleep is a read-in (wpstat_slowdev lockwait)"
	wpstat level timing >/dev/null
	wps-slowdev up ext4 0 0 "" $LOCK_DELAY || fail "cannot set up the slow device"
	wpload --file "$f" --size 128K --mode write --passes 1 --quiet >/dev/null ||
		fail "cannot write the file"
	for try in 1 2 3 4 5; do
		rm -f "$go"
		wpload --file "$f" --size 128K --passes 1 --no-create --cold --quiet \
			--start-file "$go" >"$BATS_TEST_TMPDIR/wpload.out" 2>&1 &
		WPLOAD_PID=$!
		for _ in $(seq 3000); do
			[ -e "$go" ] && break
			kill -0 "$WPLOAD_PID" 2>/dev/null || break
			sleep 0.1
		done
		[ -e "$go" ] || fail "wpload did not get ready: $(cat "$BATS_TEST_TMPDIR/wpload.out")"
		wpstat_control reset
		dd if="$f" of=/dev/null bs=128K count=1 status=none &
		reader=$!
		for _ in $(seq 3000); do
			[ "$(cat "/proc/$reader/wchan" 2>/dev/null)" = folio_wait_bit_common ] && break
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
