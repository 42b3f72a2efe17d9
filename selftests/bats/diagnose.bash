# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# What the wpstat diagnose suites share (diagnose*.bats: one file per
# family of rules), loaded after helpers.bash and scenarios.bash: the
# per-test set-up and the teardown that undoes what any of their
# scenarios leaves (the fsync loop, the writer, a remounted xfs, a FUSE
# mount, the slow device, a cgroup, the dirty limits, a tracefs instance).

# Counter $1 (a /proc/wpstat/stalls column: readin_waits, fault_wp, ...)
# of the writer's stall rows (WPLOAD_PID), summed over its files.
writer_stall() {
	wpstat stalls --json --pid "$WPLOAD_PID" |
		jq --arg c "$1" '[.stalls[] | .[$c]] | add // 0'
}

# wpload "${@:2}" in the background (WPLOAD_PID; its output in
# $BATS_TEST_TMPDIR/wpload.out), once it is set up and waits for its
# start file $1 to be removed.
wpload_ready() {
	local go=$1
	shift
	rm -f "$go"
	wpload "$@" --start-file "$go" >"$BATS_TEST_TMPDIR/wpload.out" 2>&1 &
	WPLOAD_PID=$!
	for _ in $(seq 3000); do
		[ -e "$go" ] && break
		kill -0 "$WPLOAD_PID" 2>/dev/null || break
		sleep 0.1
	done
	[ -e "$go" ] || fail "wpload did not get ready: $(cat "$BATS_TEST_TMPDIR/wpload.out")"
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
	EXT4_REMOUNT=
	FUSE_MNT=
}

# Every ext4 the guest mounted (guest-check.sh) and what sits on the
# scratch one (its overlay, its NFS export), taken down so that ext4 and
# jbd2 can be unloaded; ext4_all_up puts them back, from the test or its
# teardown.  Fails, saying why in EXT4_DOWN_WHY, if jbd2 stays.
ext4_all_down() {
	EXT4_MOUNTS=$(findmnt -n -l -t ext4 -o SOURCE,TARGET,OPTIONS)
	EXT4_OVL=
	EXT4_NFS=
	EXT4_REMOUNT=1
	if findmnt -n "$WPSTAT_FS_DIR/nfs" >/dev/null; then
		EXT4_NFS=1
		guest_nfs_loopback_down "$WPSTAT_FS_DIR/nfs"
	fi
	if findmnt -n -t overlay "$WPSTAT_FS_DIR/overlay" >/dev/null; then
		EXT4_OVL=1
		umount "$WPSTAT_FS_DIR/overlay"
	fi
	local src tgt opts
	while read -r src tgt opts; do
		[ -z "$tgt" ] || umount "$tgt" ||
			{ EXT4_DOWN_WHY="cannot unmount $tgt: $(fuser -vm "$tgt" 2>&1 | tr '\n' ' ')"; return 1; }
	done < <(tac <<<"$EXT4_MOUNTS")
	modprobe -r ext4 2>/dev/null
	! grep -q '^jbd2 ' /proc/modules ||
		{ EXT4_DOWN_WHY="jbd2 stays loaded: $(grep -E '^(jbd2|ext4) ' /proc/modules | tr '\n' ' ')"; return 1; }
}

ext4_all_up() {
	local src tgt opts
	modprobe ext4
	while read -r src tgt opts; do
		[ -z "$tgt" ] || findmnt -n "$tgt" >/dev/null ||
			mount -t ext4 -o "$opts" "$src" "$tgt" || return 1
	done <<<"$EXT4_MOUNTS"
	if [ -n "$EXT4_OVL" ]; then
		local o=$WPSTAT_FS_DIR/ext4/.ovl
		mount -t overlay overlay "$WPSTAT_FS_DIR/overlay" \
			-o "lowerdir=$o/lower,upperdir=$o/upper,workdir=$o/work" || return 1
	fi
	if [ -n "$EXT4_NFS" ]; then
		# 3>&-: rpc.mountd stays in the background, and bats waits
		# for every holder of its TAP descriptor to close it.
		guest_nfs_loopback "$WPSTAT_FS_DIR/ext4/nfs-export" "$WPSTAT_FS_DIR/nfs" >&2 3>&- ||
			return 1
	fi
	EXT4_REMOUNT=
}

teardown() {
	reg_trace_stop 2>/dev/null || true
	[ -z "${EXT4_REMOUNT:-}" ] || ext4_all_up || true
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
