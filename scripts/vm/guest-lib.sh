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
# (slowdev_up()/slowdev_down() in selftests/kselftest/wpstat_test_dev.c: null_blk behind
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

# guest_zfs DEV DIR: Debian's ZFS for the running kernel, as make setup-zfs
# built it ($WPSTAT_ZFS_CACHE, scripts/zfs/setup-zfs.sh), loaded, with its
# zpool and zfs on PATH, and a pool "wpstat" on DEV mounted on DIR (no
# cache file: the root is read-only).  Says why and fails without a build.
guest_zfs() {
	local dev=$1 dir=$2 zdir dep
	zdir=$("$top/scripts/zfs/setup-zfs.sh" dir "$(uname -r)" 2>&1) || { echo "$zdir"; return 1; }
	if [ -d "$zdir/bin" ]; then
		# Another suite's build: wrappers that bring its own glibc and
		# libraries (setup-zfs.sh); bookworm's programs keep the root's.
		export PATH=$zdir/bin:$PATH
	else
		export PATH=$zdir/root/usr/sbin:$zdir/root/sbin:$PATH
		export LD_LIBRARY_PATH=$zdir/root/usr/lib/x86_64-linux-gnu:$zdir/root/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	fi
	# Every module of the build (2.1 has nine: spl, znvpair, icp, ...;
	# 2.3 two), each once its own dependencies are in.
	local pending=() next ko ready
	grep -q '^zfs ' /proc/modules || pending=("$zdir"/modules/*.ko)
	while [ ${#pending[@]} -gt 0 ]; do
		next=()
		for ko in "${pending[@]}"; do
			ready=1
			for dep in $(modinfo -F depends "$ko" | tr ',' ' '); do
				grep -q "^$dep " /proc/modules && continue
				if [ -f "$zdir/modules/$dep.ko" ]; then
					ready=0
					break
				fi
				modprobe "$dep" || return 1
			done
			if [ $ready = 1 ]; then
				insmod "$ko" || return 1
			else
				next+=("$ko")
			fi
		done
		[ ${#next[@]} -lt ${#pending[@]} ] ||
			{ echo "guest_zfs: no order loads ${next[*]}"; return 1; }
		pending=("${next[@]}")
	done
	mkdir -p "$dir"
	zpool create -f -o cachefile=none -O mountpoint="$dir" wpstat "$dev" || return 1
	echo "zfs: $(cat /sys/module/zfs/version 2>/dev/null) from $zdir, pool wpstat on $dev at $dir"
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

# guest_nfs_loopback EXPORT_DIR MOUNT_DIR: an NFSv4.2 server in this guest
# exporting EXPORT_DIR (a directory on a local filesystem) to 127.0.0.1,
# mounted on MOUNT_DIR over loopback.  The guest has no systemd and sees the
# host root read-only, so the state nfs-utils writes (/var/lib/nfs: etab,
# rmtab, v4recovery) goes to a tmpfs mounted over it, the export is given
# on exportfs's command line (no /etc/exports), and rpc.mountd (which
# answers nfsd's export upcalls; v4 needs no rpcbind) is started by hand;
# guest_nfs_loopback_down stops it.  NFSv3 is off (-N 3): no lockd, statd
# or rpcbind.  The v4 grace period (no OPEN or SETATTR until it ends,
# NFS4ERR_GRACE) is cut to nfsd's minimum, 10 s, and the function returns
# only once a file can be created on the mount.  On failure it prints the
# reason (the first failing step) and returns non-zero.
guest_nfs_loopback() {
	local export=$1 mnt=$2 i
	ip link set lo up || { echo "cannot bring lo up"; return 1; }
	modprobe nfsd 2>&1 || { echo "no nfsd module (CONFIG_NFSD)"; return 1; }
	modprobe nfsv4 2>&1 || { echo "no nfsv4 module (CONFIG_NFS_V4)"; return 1; }
	for i in rpc.nfsd rpc.mountd exportfs mount.nfs4; do
		command -v $i >/dev/null || { echo "no $i (nfs-kernel-server, nfs-common)"; return 1; }
	done
	mkdir -p "$export" "$mnt" || return 1
	grep -q ' /proc/fs/nfsd ' /proc/mounts ||
		mount -t nfsd nfsd /proc/fs/nfsd || { echo "cannot mount nfsd on /proc/fs/nfsd"; return 1; }
	grep -q ' /var/lib/nfs ' /proc/mounts ||
		mount -t tmpfs -o mode=0755 tmpfs /var/lib/nfs || return 1
	mkdir -p /var/lib/nfs/v4recovery /var/lib/nfs/rpc_pipefs || return 1
	: >/var/lib/nfs/etab
	: >/var/lib/nfs/rmtab
	# fsid=0: EXPORT_DIR is the v4 pseudo-root itself, mounted as "/".
	# Without it mountd builds a pseudo-root from the guest's / down, and
	# cannot export the 9p root and /tmp in it (no UUID): ENOENT.
	exportfs -i -o rw,sync,no_subtree_check,no_root_squash,insecure,fsid=0 \
		"127.0.0.1:$export" 2>&1 || { echo "exportfs failed"; return 1; }
	# In the foreground, so that its pid is ours to stop.
	rpc.mountd -F -N 3 >/var/lib/nfs/mountd.log 2>&1 &
	echo $! >/var/lib/nfs/mountd.pid
	rpc.nfsd -N 3 -U -G 10 -L 10 2 2>&1 || { echo "rpc.nfsd failed"; return 1; }
	mount -t nfs4 -o vers=4.2 127.0.0.1:/ "$mnt" 2>&1 ||
		{ echo "mount -t nfs4 127.0.0.1:/ ($export) failed"; return 1; }
	# The grace period: creating a file waits (the client retries) until
	# it is over.
	for i in $(seq 60); do
		(: >"$mnt/.nfs-ready") 2>/dev/null && break
		sleep 1
	done
	[ -e "$mnt/.nfs-ready" ] || { echo "no file can be created on $mnt after 60 s"; return 1; }
	rm -f "$mnt/.nfs-ready"
}

# guest_nfs_loopback_down MOUNT_DIR: undo guest_nfs_loopback.
guest_nfs_loopback_down() {
	umount "$1" 2>/dev/null || umount -l "$1" 2>/dev/null
	exportfs -ua 2>/dev/null
	rpc.nfsd 0 2>/dev/null
	[ ! -s /var/lib/nfs/mountd.pid ] || kill "$(cat /var/lib/nfs/mountd.pid)" 2>/dev/null
	return 0
}
