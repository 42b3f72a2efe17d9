#!/usr/bin/env bats
# The CLI on NFSv4 over loopback (guest-check.sh mounts it on
# $WPSTAT_FS_DIR/nfs with guest_nfs_loopback, exporting a directory of the
# ext4 scratch filesystem): NFS files found by their client path and
# counted as the NFS client inode (the NFS superblock's dev), filter path
# on the client superblock, wpstat run as docs/fs/nfs.md predicts.  The
# suite skips with the reason when NFS could not be set up.

bats_require_minimum_version 1.5.0

load helpers

setup() {
	require_module
	wpstat_control filter none
	need_fs nfs
	[ "$(stat -f -c %T "$WPSTAT_FS_DIR/nfs")" = nfs ] || fail "$WPSTAT_FS_DIR/nfs is not NFS"
}

teardown() {
	wpstat_control filter none
	level_restore
}

# Pages per folio differ (6.12 gives NFS large folios on readahead), so the
# suite checks what is per PTE (faults) exactly and per folio as bounds.

@test "nfs: show --resolve names the file by its client path, with the client inode's counts" {
	local f
	f=$(scratch_file nfs)
	# NFS rows carry no generation and the server reuses inode numbers:
	# a new file may continue an old file's row.  Counts are deltas.
	: >"$f"
	local b_first b_wp
	b_first=$(counter "$f" mkwrite_first)
	b_wp=$(counter "$f" mkwrite_wp)
	write_file "$f"
	run --separate-stderr wpstat show --json --resolve "$WPSTAT_FS_DIR/nfs"
	assert_success
	# wpload's 2 passes of 64 pages, each synced with msync.
	[ "$(($(row_of "$output" "$f" | jq .mkwrite_first) - b_first))" = 64 ] || fail "row: $(row_of "$output" "$f")"
	[ "$(($(row_of "$output" "$f" | jq .mkwrite_wp) - b_wp))" = 64 ]
	# The row is the client's: its dev is the NFS superblock's, not ext4's.
	[ "$(sb_dev "$f")" != "$(sb_dev "$WPSTAT_FS_DIR/ext4")" ]
	[ "$(($(counter "$f" mkwrite_wp) - b_wp))" = 64 ]
	# The server's file (the same inode number on the ext4 export) took
	# nfsd's writes, no faults.
	local srv=$WPSTAT_FS_DIR/ext4/nfs-export/${f##*/}
	[ -f "$srv" ] || fail "no exported file $srv"
	[ "$(counter "$srv" mkwrite_first)" = 0 ]
}

@test "nfs: filter path on a client path filters on the NFS superblock's dev" {
	local f dev
	f=$(scratch_file nfs)
	: >"$f"
	local b x0
	b=$(counter "$f" mkwrite_first)
	dev=$(sb_dev "$f")
	run --separate-stderr wpstat filter path "$f"
	assert_success
	[ "$output" = "filtering on dev $dev (the filesystem holding $f)" ] || fail "$output"
	grep -qx "filter_dev $dev" /sys/kernel/debug/wpstat/config
	write_file "$f"
	[ "$(($(counter "$f" mkwrite_first) - b))" = 64 ]
	local x
	x=$(scratch_file ext4)
	write_file "$x"
	[ "$(counter "$x" mkwrite_first)" = 0 ]
}

@test "nfs: wpstat run: 64 first-write and 64 write-protect faults, no stable-page call from nfs_vm_page_mkwrite" {
	local f c
	f=$(scratch_file nfs)
	level_timing
	run_wpload "$f"
	assert_success
	c=$RUN_DELTAS
	[ "$(jq .mkwrite_first <<<"$c")" = 64 ] || fail "counters: $c"
	[ "$(jq .mkwrite_wp <<<"$c")" = 64 ]
	[ "$(jq .bdp_fault_calls <<<"$c")" = 128 ]
	# nfs_vm_page_mkwrite waits with folio_wait_writeback, never _stable.
	[ "$(jq .stable_calls <<<"$c")" = 0 ]
	# One clean per folio per msync: 64 each on 6.1, fewer on 6.12.
	local m
	m=$(jq .mkclean_msync <<<"$c")
	case $(uname -r) in
	6.1.*) [ "$m" = 128 ] || fail "mkclean_msync $m" ;;
	*) [ "$m" -ge 2 ] && [ "$m" -le 128 ] || fail "mkclean_msync $m" ;;
	esac
}

# Counter $3 of the row dev $1, inode $2, read without stat(1): a stat of
# an NFS file writes it back (nfs_getattr -> filemap_write_and_wait).
row_counter() {
	awk -v dev="$1" -v ino="$2" -v name="$3" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 == dev && $2 == ino { v = $(col[name]) }
		END { print (v == "" ? 0 : v) }' /proc/wpstat/inodes
}

# A writer that holds $1 open in a process of its own: every child of
# the test's shell (each $(...) and run) inherits the shell's descriptors
# and closing its copy flushes the file (nfs_file_flush), so the shell
# must hold none.  It writes 16 KiB, says "ready", closes the file when it
# reads a line and says "closed".
writer_script='import os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CLOEXEC)
os.write(fd, bytes(16384))
print("ready", flush=True)
sys.stdin.readline()
os.close(fd)
print("closed", flush=True)
sys.stdin.readline()'

@test "nfs: looking a file up by path (filter path, show --resolve) does not write it back; closing it does" {
	local f dev ino before after line
	f=$(scratch_file nfs)
	: >"$f"
	dev=$(sb_dev "$f")
	ino=$(stat -c %i "$f")
	coproc WRITER { python3 -c "$writer_script" "$f"; }
	read -r -t 60 -u "${WRITER[0]}" line && [ "$line" = ready ] || fail "writer did not start"
	[ "$(row_counter "$dev" "$ino" dirtied)" -gt 0 ] || fail "the writer dirtied nothing"
	before=$(row_counter "$dev" "$ino" mkclean_calls)
	run --separate-stderr wpstat filter path "$f"
	assert_success
	wpstat_control filter none
	# The --resolve walk asks statx for type and inode only, with
	# AT_STATX_DONT_SYNC: nfs_getattr does not flush for that.
	run --separate-stderr wpstat show --json --resolve "$WPSTAT_FS_DIR/nfs"
	assert_success
	jq -e --arg p "$f" '[.inodes[] | select(.path == $p)] | length == 1' <<<"$output" ||
		fail "show --resolve did not name $f"
	after=$(row_counter "$dev" "$ino" mkclean_calls)
	[ "$before" = "$after" ] || fail "lookups cleaned: mkclean_calls $before -> $after"
	# close(2) of the writable descriptor: nfs_file_flush -> nfs_wb_all.
	echo >&"${WRITER[1]}"
	read -r -t 60 -u "${WRITER[0]}" line && [ "$line" = closed ] || fail "writer did not close"
	after=$(row_counter "$dev" "$ino" mkclean_calls)
	echo >&"${WRITER[1]}"
	wait "$WRITER_PID" || true
	[ "$after" -gt "$before" ] || fail "close cleaned nothing: $before -> $after"
}

# wpstat diagnose's blind-spot rule: NFS writes back at close and on
# fsync (close-to-open: nfs_file_flush, nfs_file_fsync), so what a writer
# waits for there is in close(2) and fsync(2), which wpstat does not time;
# a row on an NFS file gets a finding that says so, of severity info
# (no share of the stall time).  On ext4 the same workload gets none.
@test "nfs: diagnose says what it cannot see on NFS, and not on ext4" {
	local f pid
	f=$(scratch_file nfs)
	wpstat_control reset
	wpload --file "$f" --size 256K --passes 2 --sync msync --quiet >/dev/null &
	pid=$!
	wait "$pid"
	run --separate-stderr wpstat diagnose --json --pid "$pid" "$WPSTAT_FS_DIR/nfs"
	assert_success
	jq -e --argjson pid "$pid" '[.findings[] | select(.rule == "blind_spot")] |
		length == 1 and .[0].pid == $pid and .[0].severity == "info" and
		.[0].share == null and
		(.[0].evidence[] | select(.name == "mount") | .value | startswith("nfs"))' <<<"$output"
	f=$(scratch_file ext4)
	wpload --file "$f" --size 256K --passes 2 --sync msync --quiet >/dev/null &
	pid=$!
	wait "$pid"
	run --separate-stderr wpstat diagnose --json --pid "$pid"
	assert_success
	jq -e '[.findings[] | select(.rule == "blind_spot")] == []' <<<"$output"
}
