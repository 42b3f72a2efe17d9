# shellcheck shell=bash
# Set-up shared by the guest scripts: RAM disks, filesystems and the
# writeback sysctls.  Sourced (not run) inside the guest, as root, by
# scripts/check/guest-check.sh, scripts/bench/guest-bench.sh,
# scripts/experiment/guest-experiment.sh and scripts/demo/guest-demo.sh:
#
#   . "$top/scripts/vm/guest-lib.sh"
#
# Every function returns non-zero on failure and prints nothing of its own
# on success, so the callers keep their own error handling and logs.  The
# C selftests that need a slow device build it themselves
# (slowdev_up()/slowdev_down() in selftests/kselftest/wpstat_test.c: null_blk behind
# dm-delay).

# guest_ramdisks COUNT MIB: COUNT RAM disks /dev/ram0.. of MIB MiB each.
# brd allocates pages lazily, so a large size costs nothing until written;
# it takes one geometry per load, so a second call fails while it is loaded.
guest_ramdisks() {
	modprobe brd rd_nr="$1" rd_size=$(($2 * 1024))
}

# guest_mkfs FS DEV [MKFS_OPTION...]: a fresh FS (ext4, xfs, btrfs, f2fs) on
# DEV, quietly and over whatever DEV held before.  xfs insists on at least
# 300 MiB.
guest_mkfs() {
	local fs=$1 dev=$2
	shift 2
	case $fs in
	ext4) mkfs.ext4 -q -F "$@" "$dev" ;;
	xfs) mkfs.xfs -q -f "$@" "$dev" ;;
	btrfs) mkfs.btrfs -q -f "$@" "$dev" ;;
	f2fs) mkfs.f2fs -q -f "$@" "$dev" ;;
	*) echo "guest_mkfs: unknown filesystem '$fs'" >&2; return 2 ;;
	esac
}

# guest_mount DEV DIR [MOUNT_OPTION...]: mount DEV on DIR, made if missing.
# DEV "tmpfs" mounts a tmpfs.
guest_mount() {
	local dev=$1 dir=$2
	shift 2
	mkdir -p "$dir" || return 1
	if [ "$dev" = tmpfs ]; then
		mount -t tmpfs "$@" tmpfs "$dir"
	else
		mount "$@" "$dev" "$dir"
	fi
}

# guest_mkfs_mount FS DEV DIR [MOUNT_OPTION...]: guest_mkfs with no
# options, then guest_mount.
guest_mkfs_mount() {
	guest_mkfs "$1" "$2" && guest_mount "$2" "$3" "${@:4}"
}

# guest_sysctl NAME=VALUE...: set kernel parameters, quietly.
guest_sysctl() {
	sysctl -q -w "$@"
}

# guest_writeback_quiet: keep the flusher out of the way, so that only what
# a test or workload starts (msync, fsync, sync_file_range, sync) cleans
# pages.  Not dirty_writeback_centisecs=0: __mark_inode_dirty() then wakes
# the flusher at once (wb_wakeup_delayed() with a zero delay) and
# wb_check_background_flush() writes back any bdi over its own share of the
# background threshold, which is tiny for a RAM disk that has written
# little.  An hour-long interval keeps it asleep.
guest_writeback_quiet() {
	guest_sysctl vm.dirty_writeback_centisecs=360000 vm.dirty_expire_centisecs=360000
}
