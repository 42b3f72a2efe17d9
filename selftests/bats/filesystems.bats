#!/usr/bin/env bats
# The CLI on the filesystems of wpstat_fs (guest-check.sh mounts them) and
# on FUSE: overlayfs files found and filtered by the path the application
# used (the merged path), counted as their upper ext4 inode; f2fs, ext4
# data=journal and nodelalloc, and FUSE counted as the kernel source
# predicts, through wpstat run (docs/filesystems.md).
# A filesystem guest-check could not mount skips with its reason.

bats_require_minimum_version 1.5.0

load helpers

setup() {
	require_module
	wpstat_control filter none
}

teardown() {
	wpstat_control filter none
	fuse_unmount
	level_restore
}

@test "overlayfs: show --resolve names the file by its merged path, with the upper inode's counts" {
	local f up
	need_fs overlay
	f=$(scratch_file overlay)
	write_file "$f"
	up=$WPSTAT_FS_DIR/ext4/.ovl/upper/${f##*/}
	[ -f "$up" ] || fail "no upper file $up"
	run --separate-stderr wpstat show --json --resolve "$WPSTAT_FS_DIR/overlay"
	assert_success
	# wpload's 2 passes of 64 pages, each synced with msync: 64 + 64 faults.
	[ "$(row_of "$output" "$f" | jq .mkwrite_first)" = 64 ] || fail "row: $(row_of "$output" "$f")"
	[ "$(row_of "$output" "$f" | jq .mkwrite_wp)" = 64 ]
	[ "$(row_of "$output" "$f" | jq .mkclean_msync)" = 128 ]
	# The same row is the upper file's: counter() keys the upper path.
	[ "$(counter "$up" mkwrite_wp)" = 64 ]
}

@test "overlayfs: filter path on a merged path filters on the upper filesystem's device" {
	local f dev
	need_fs overlay
	f=$(scratch_file overlay)
	: >"$f"
	dev=$(sb_dev "$WPSTAT_FS_DIR/ext4")
	run --separate-stderr wpstat filter path "$f"
	assert_success
	[ "$output" = "filtering on dev $dev (the filesystem holding $f)" ] || fail "$output"
	grep -qx "filter_dev $dev" /sys/kernel/debug/wpstat/config
	# An ext4 file counts; a file on another filesystem does not.
	write_file "$f"
	[ "$(counter "$WPSTAT_FS_DIR/ext4/.ovl/upper/${f##*/}" mkwrite_first)" = 64 ]
	local x
	x=$(scratch_file xfs)
	write_file "$x"
	[ "$(counter "$x" mkwrite_first)" = 0 ]
}

@test "wpstat run on f2fs: 64 first-write, 64 write-protect faults, 128 msync cleans" {
	local f
	need_fs f2fs
	f=$(scratch_file f2fs)
	level_timing
	run_wpload "$f"
	assert_success
	local c
	c=$RUN_DELTAS
	[ "$(jq .mkwrite_first <<<"$c")" = 64 ] || fail "counters: $c"
	[ "$(jq .mkwrite_wp <<<"$c")" = 64 ]
	[ "$(jq .mkclean_msync <<<"$c")" = 128 ]
	# f2fs_vm_page_mkwrite waits only on a page under writeback.
	[ "$(jq .stable_calls <<<"$c")" = 0 ]
}

@test "wpstat run on ext4 data=journal: every msync cleans each page twice on 6.12 (jbd2 commit + checkpoint), once on 6.1" {
	local f want
	need_fs ext4-journal
	f=$(scratch_file ext4-journal)
	run_wpload "$f"
	assert_success
	local c
	c=$RUN_DELTAS
	case $(uname -r) in
	6.1.*) want=128 ;;
	*) want=256 ;;
	esac
	[ "$(jq .mkwrite_first <<<"$c")" = 64 ] || fail "counters: $c"
	[ "$(jq .mkwrite_wp <<<"$c")" = 64 ]
	[ "$(jq .mkclean_msync <<<"$c")" = 128 ]
	[ "$(jq .mkclean_calls <<<"$c")" = $want ]
}

@test "wpstat run on ext4 nodelalloc: 64/64 faults, 128 msync cleans, one folio_wait_stable per fault" {
	local f c
	need_fs ext4-nodelalloc
	f=$(scratch_file ext4-nodelalloc)
	level_timing
	run_wpload "$f"
	assert_success
	c=$RUN_DELTAS
	[ "$(jq .mkwrite_first <<<"$c")" = 64 ] || fail "counters: $c"
	[ "$(jq .mkwrite_wp <<<"$c")" = 64 ]
	[ "$(jq .mkclean_msync <<<"$c")" = 128 ]
	# ext4_page_mkwrite without delalloc: block_page_mkwrite ->
	# folio_wait_stable, once per fault; no wait without stable writes.
	[ "$(jq .stable_calls <<<"$c")" = 128 ]
	[ "$(jq .stable_waits <<<"$c")" = 0 ]
}

# The FUSE passthrough server of wpstat_fuse, mounted for one test.
fuse_mount() {
	local server=$WPSTAT_TOP/build/bin/fuse-passthrough
	[ -x "$server" ] || skip "no build/bin/fuse-passthrough (libfuse3-dev missing at build time)"
	[ -e /dev/fuse ] || modprobe fuse 2>/dev/null || true
	[ -e /dev/fuse ] || skip "no /dev/fuse (modprobe fuse failed)"
	FUSE_MNT=$WPSTAT_FS_DIR/fuse-bats
	FUSE_BACKING=$WPSTAT_FS_DIR/ext4/fuse-bats-backing
	mkdir -p "$FUSE_MNT" "$FUSE_BACKING"
	"$server" "$FUSE_BACKING" "$FUSE_MNT" || fail "fuse-passthrough did not mount"
	[ "$(stat -f -c %T "$FUSE_MNT")" = fuseblk ] || [ "$(stat -f -c %t "$FUSE_MNT")" = 65735546 ] ||
		fail "$FUSE_MNT is not a FUSE mount"
}

fuse_unmount() {
	[ -z "${FUSE_MNT:-}" ] || umount "$FUSE_MNT" 2>/dev/null || umount -l "$FUSE_MNT" 2>/dev/null || true
}

@test "FUSE: wpstat run counts the FUSE inode's faults, and no stable-page or writeback wait (fuse_page_mkwrite waits on its own queue)" {
	local f c dev
	fuse_mount
	f=$FUSE_MNT/run.$$
	dev=$(sb_dev "$FUSE_MNT")
	level_timing
	run_wpload "$f"
	fuse_unmount_status=$status
	c=$RUN_ROW
	fuse_unmount
	[ "$fuse_unmount_status" = 0 ] || fail "wpload failed: $stderr"
	[ -n "$c" ] || fail "no row named $f: $(cat "$BATS_TEST_TMPDIR/run.json")"
	# The row is the FUSE superblock's, not the backing ext4 file's.
	[ "$(jq -r '.dev' <<<"$c")" = "$dev" ] || fail "row: $c"
	# Pass 1: one first-write fault per page (do_shared_fault).  Pass 2
	# after msync: every page write-protected, so at least 64 wp faults
	# (more if the fresh mount's strictlimit flusher cleaned pages behind
	# the writer: docs/fs/fuse.md F3).
	[ "$(jq .deltas.mkwrite_first <<<"$c")" = 64 ] || fail "row: $c"
	[ "$(jq .deltas.mkwrite_wp <<<"$c")" -ge 64 ]
	[ "$(jq .deltas.mkclean_msync <<<"$c")" -ge 64 ]
	# FUSE never calls folio_wait_stable and ends PG_writeback before the
	# server answers: nothing for the wait counters to see.
	[ "$(jq .deltas.stable_calls <<<"$c")" = 0 ]
	[ "$(jq .deltas.wb_waits <<<"$c")" = 0 ]
}
