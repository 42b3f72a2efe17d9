#!/usr/bin/env bats
# The CLI on the filesystems of wpstat_fs (guest-check.sh mounts them):
# overlayfs files found and filtered by the path the application used
# (the merged path), counted as their upper ext4 inode; f2fs and ext4
# data=journal counted as the kernel source predicts, through wpstat run.
# A filesystem guest-check could not mount skips with its reason.

load helpers

setup() {
	require_module
	wpstat_control filter none
}

teardown() {
	wpstat_control filter none
}

# Skip unless guest-check mounted $1 (NAME.unavailable holds why not).
need_fs() {
	local why=$WPSTAT_FS_DIR/$1.unavailable
	[ ! -e "$why" ] || skip "$1 not mounted: $(head -n 1 "$why")"
}

# The counters of the row for path $2 in `wpstat show --json` output $1.
row_of() {
	jq -c --arg p "$2" '[.inodes[] | select(.path == $p)] | .[0].counters // empty' <<<"$1"
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
	run --separate-stderr wpstat run --json -o "$BATS_TEST_TMPDIR/run.json" -- \
		wpload --file "$f" --size 256K --passes 2 --sync msync --quiet
	assert_success
	local c
	c=$(jq -c --arg p "$f" '[.files[] | select(.path == $p)][0].deltas' "$BATS_TEST_TMPDIR/run.json")
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
	run --separate-stderr wpstat run --json -o "$BATS_TEST_TMPDIR/run.json" -- \
		wpload --file "$f" --size 256K --passes 2 --sync msync --quiet
	assert_success
	local c
	c=$(jq -c --arg p "$f" '[.files[] | select(.path == $p)][0].deltas' "$BATS_TEST_TMPDIR/run.json")
	case $(uname -r) in
	6.1.*) want=128 ;;
	*) want=256 ;;
	esac
	[ "$(jq .mkwrite_first <<<"$c")" = 64 ] || fail "counters: $c"
	[ "$(jq .mkwrite_wp <<<"$c")" = 64 ]
	[ "$(jq .mkclean_msync <<<"$c")" = 128 ]
	[ "$(jq .mkclean_calls <<<"$c")" = $want ]
}
