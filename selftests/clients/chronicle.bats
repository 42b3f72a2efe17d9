#!/usr/bin/env bats
# Chronicle Queue (net.openhft:chronicle-queue 5.22.28, pinned in
# java/pom.xml) appending through its own mapping, with and without its
# pretoucher, on ext4 in the guest (flusher quiet: only the fdatasync the
# driver makes cleans pages).  The driver is
# java/src/main/java/wpstat/clients/ChronicleAppend.java; it reads the cycle
# file's /proc/wpstat/inodes row around every phase (pretouch, append,
# fsync, pretouch_after, append_after) and prints the deltas.  The numbers,
# the source functions and the measured output: docs/clients/chronicle.md.
#
# Layout, from the source (SingleChronicleQueueStore/SCQIndexing, roll cycle
# FAST_DAILY: indexCount 4096, indexSpacing 256): page 0 holds the store
# header (with writePosition, rewritten by every append:
# StoreAppender#writeBytes -> store.writePosition) and the start of the
# index2index array (32 KiB); the first index array (32 KiB) follows; the
# first excerpt's header is at 65800 (page 16).  Each excerpt is a 4-byte
# header + the payload: 1020-byte payloads make 1024-byte excerpts, 4 a page,
# and no excerpt header ever starts a page (65800 % 4096 = 264), so every
# data page is first touched by the payload copy, a plain store.  500
# excerpts write 2 index entries (messages 0 and 256) into one index page.
#
# Counting faults: under the guest's single-threaded TCG a LOCK CMPXCHG is
# emulated as a load then a store, so a page first touched by a CAS (the
# pretoucher's compareAndSwapLong(page, 0, 0), Chronicle's header and index
# CASes) takes a read fault and then a write-protect fault: mkwrite_wp where
# real hardware would count mkwrite_first.  The predictions therefore pin
# first + wp (= pages dirtied) for such pages, and first or wp alone only
# where the kind does not depend on the CPU (plain stores; pages whose
# writable PTE an fsync write-protected).

load ../bats/helpers

P=4096
SIZE=1020
EXC=$((SIZE + 4))
MSGS=1000
HALF=500

# ChronicleAppend into a fresh queue directory on ext4; JSON into $1.
chronicle() {
	local out=$1
	shift
	local dir=$WPSTAT_FS_DIR/ext4/chronicle.$$.$RANDOM
	"$WPSTAT_TOP/selftests/clients/jrun.sh" wpstat.clients.ChronicleAppend \
		--dir "$dir" --messages $MSGS --size $SIZE --fsync-after $HALF "$@" \
		>"$out" 2>"$out.err" || { cat "$out.err" >&2; return 1; }
}

setup_file() {
	[ -r /proc/wpstat/inodes ] || return 0 # each test fails in require_module
	chronicle "$BATS_FILE_TMPDIR/off.json"
	chronicle "$BATS_FILE_TMPDIR/on.json" --pretouch on
	chronicle "$BATS_FILE_TMPDIR/every.json" --pretouch on --pretouch-every 64
}

setup() {
	require_module
}

# jq expression $2 on run $1 (off, on, every).
j() {
	jq -r "$2" "$BATS_FILE_TMPDIR/$1.json"
}

# Counter $3 of phase $2 in run $1 (0 when the phase had no delta).
ph() {
	j "$1" ".phases.$2.$3 // 0"
}

# Faults (first + wp) of phase $2 in run $1.
faults() {
	echo $(($(ph "$1" "$2" mkwrite_first) + $(ph "$1" "$2" mkwrite_wp)))
}

# The run's positions (the same in every run: same sizes, same layout).
positions() {
	first_hdr=$(($(j "$1" .first_end_pos) - EXC))
	half_end=$(j "$1" .fsync_end_pos)
	last_end=$(j "$1" .last_end_pos)
	# Data pages of the first 500 excerpts, and the new pages of the next 500.
	data1=$(((half_end - 1) / P - first_hdr / P + 1))
	new2=$(((last_end - 1) / P - (half_end - 1) / P))
	# The page the fsync cut in two (written before and after it).
	partial=$((half_end % P != 0))
}

@test "chronicle: the layout the predictions assume (first excerpt at 65800, 1024-byte excerpts, one cycle file)" {
	positions off
	[ "$first_hdr" = 65800 ] || fail "first excerpt at $first_hdr"
	[ "$half_end" = $((first_hdr + HALF * EXC)) ] || fail "500th excerpt ends at $half_end"
	[ "$last_end" = $((first_hdr + MSGS * EXC)) ] || fail "1000th excerpt ends at $last_end"
	[ "$data1" = 126 ] && [ "$new2" = 125 ] && [ "$partial" = 1 ] ||
		fail "data1=$data1 new2=$new2 partial=$partial"
	[ "$(j off '.queue_file | endswith("/20260101F.cq4")')" = true ]
}

# StoreAppender#writeBytes: writeHeader (CAS on the excerpt header),
# wireBytes.write (payload), updateHeader, store.writePosition (page 0),
# writeIndexForPosition (every 256th message: the index page).  No
# pretoucher: every page is faulted by the appender, once (nothing cleans
# it): 126 data pages + page 0 + the index page = 128, the 126 data pages
# first-write faults (plain stores, no PTE).
@test "chronicle: no pretoucher, 500 appends fault each page they dirty once: 126 data + header + index = 128" {
	positions off
	[ "$(ph off append dirtied)" = $((data1 + 2)) ] || fail "dirtied $(ph off append dirtied)"
	[ "$(faults off append)" = $((data1 + 2)) ] || fail "faults $(faults off append)"
	[ "$(ph off append mkwrite_first)" -ge "$data1" ] || fail "first $(ph off append mkwrite_first)"
}

# FileChannel.force(false) -> fdatasync -> ext4 writeback -> folio_mkclean
# on every dirty page (128), each mapped writable by the appender. After it,
# the next 500 appends: page 0 (writePosition), the index page (entries 512
# and 768) and the page the fsync cut in two are present read-only:
# 3 write-protect faults; the 125 new pages are first-write faults.
@test "chronicle: no pretoucher, fdatasync cleans all 128; the next 500 appends take 3 wp + 125 first" {
	positions off
	[ "$(ph off fsync mkclean_calls)" = $((data1 + 2)) ] || fail "mkclean $(ph off fsync mkclean_calls)"
	[ "$(ph off append_after mkwrite_wp)" = $((partial + 2)) ] || fail "wp $(ph off append_after mkwrite_wp)"
	[ "$(ph off append_after mkwrite_first)" = "$new2" ] || fail "first $(ph off append_after mkwrite_first)"
}

# Pretoucher#execute -> PretoucherState#pretouch: the first call only
# records the write position (a fresh store: 0); the second touches every
# page from it to position + max(HEAD_ROOM = 1 MiB, 4 * averageMove):
# pages 0..255, one compareAndSwapLong each = 256 faults and 256 dirtied
# pages.  The appender's 500 excerpts lie in pages 0..141, all already
# mapped writable in the same MappedFile chunk (the queue's
# mappedFileCache shares one MappedFile per path): 0 faults.
@test "chronicle: pretoucher takes 256 faults for 1 MiB ahead; the appender's 500 appends then take 0" {
	[ "$(ph on pretouch dirtied)" = 256 ] || fail "pretouch dirtied $(ph on pretouch dirtied)"
	[ "$(faults on pretouch)" = 256 ] || fail "pretouch faults $(faults on pretouch)"
	[ "$(faults on append)" = 0 ] || fail "append faults $(faults on append)"
	[ "$(ph on append dirtied)" = 0 ] || fail "append dirtied $(ph on append dirtied)"
}

# What it does not prevent: the fdatasync cleans all 256 pretouched pages,
# 114 of them (142..255) not yet written by the appender.  PretoucherState
# never goes back (lastTouchedPage only grows), so the next 500 appends
# take a write-protect fault on each of pages 141..255 they reach (115),
# page 0 and the index page: 117 wp, and first-write faults on the 11 new
# pages 256..266: 128 faults, exactly as many as without the pretoucher.
@test "chronicle: pretoucher, after fdatasync (256 cleaned) the appender takes 117 wp + 11 first = 128, as without it" {
	positions on
	local reach=$(((last_end - 1) / P))
	local wp=$((256 - (half_end - 1) / P + 2)) first=$((reach - 255))
	[ "$(ph on fsync mkclean_calls)" = 256 ] || fail "mkclean $(ph on fsync mkclean_calls)"
	[ "$wp" = 117 ] && [ "$first" = 11 ] || fail "arithmetic: wp=$wp first=$first"
	[ "$(ph on append_after mkwrite_wp)" = "$wp" ] || fail "wp $(ph on append_after mkwrite_wp)"
	[ "$(ph on append_after mkwrite_first)" = "$first" ] || fail "first $(ph on append_after mkwrite_first)"
	[ "$(faults on append_after)" = "$(faults off append_after)" ] || fail "not as many as without"
}

# Pretouching every 64 messages keeps the appender fault-free until the
# fdatasync, which cleans everything the pretoucher and the appender
# dirtied; after it every page the appender writes (141..266, page 0, the
# index page: 128) was pretouched and is now write-protected: 128 wp,
# 0 first.  The pretoucher's later calls only touch new pages beyond.
@test "chronicle: pretoucher every 64 messages, after fdatasync all 128 of the appender's faults are wp" {
	[ "$(faults every append)" = 0 ] || fail "append faults before fsync $(faults every append)"
	[ "$(ph every fsync mkclean_calls)" = "$(ph every pretouch dirtied)" ] ||
		fail "mkclean $(ph every fsync mkclean_calls) != pretouched $(ph every pretouch dirtied)"
	[ "$(ph every append_after mkwrite_first)" = 0 ] || fail "first $(ph every append_after mkwrite_first)"
	[ "$(ph every append_after mkwrite_wp)" = 128 ] || fail "wp $(ph every append_after mkwrite_wp)"
	[ "$(faults every pretouch_after)" = "$(ph every pretouch_after dirtied)" ] ||
		fail "pretouch_after re-touched cleaned pages"
}

# Chronicle (5.22.28) never syncs on its own (no msync/fsync in
# StoreAppender; MicroToucher's msync is MS_ASYNC, a no-op, and not used
# here): every mkclean on the cycle file is the driver's fdatasync, and the
# file's row agrees with the sum of the driver's phases.
@test "chronicle: every mkclean is the driver's fdatasync; the inode row matches the phases" {
	local r f
	for r in off on every; do
		f=$(j $r .queue_file)
		[ "$(counter "$f" mkclean_calls)" = "$(counter "$f" mkclean_fsync)" ] || fail "$r: other mkclean"
		[ "$(counter "$f" mkclean_msync)" = 0 ] || fail "$r: msync"
		[ "$(counter "$f" mkclean_calls)" = "$(ph $r fsync mkclean_calls)" ] || fail "$r: mkclean row"
		[ "$(counter "$f" mkwrite_wp)" = "$(j $r '[.phases[].mkwrite_wp] | add')" ] || fail "$r: wp row"
		[ "$(counter "$f" mkwrite_first)" = "$(j $r '[.phases[].mkwrite_first] | add')" ] || fail "$r: first row"
	done
}
