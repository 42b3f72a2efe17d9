#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# fio, Debian's standard I/O benchmark, as a real mmap writer under
# wpstat: what fio measures and what wpstat says of fio's row must
# agree.  The scenario: fio --ioengine=mmap --rw=randwrite --bs=4k on
# ext4 over a device whose reads and writes complete 10 ms late and which
# asks for stable pages (null_blk behind dm-delay, stable_writes 1:
# wps-slowdev), at level timing.  fio runs its job as a thread
# (--thread), so its stores are one process's: one stall row for the
# file.  For random I/O fio's mmap engine advises the mapping
# MADV_RANDOM (posix_madvise), so a fault reads its own page only, and
# its random map touches each block of the file once per pass over it.
# Runs inside the guest as root with the module loaded (guest-check.sh).

bats_require_minimum_version 1.5.0

load helpers

SLOW=/tmp/wpstat-slow
FIO_FILE=$SLOW/fio.dat
DELAY_MS=10

setup_file() {
	grep -q '^wpstat ' /proc/modules || insmod "$WPSTAT_MODULE"
}

setup() {
	require_module
	command -v fio >/dev/null || fail "fio is not installed (make setup installs Debian's fio)"
	wpstat_control filter none
	wpstat_control enable
	wpstat level timing >/dev/null
	FSYNC_PID=
	wps-slowdev up ext4 $DELAY_MS 1 "" $DELAY_MS || fail "cannot set up the slow device"
}

teardown() {
	[ -z "${FSYNC_PID:-}" ] || kill "$FSYNC_PID" 2>/dev/null || true
	wps-slowdev down
	wpstat level counts >/dev/null
}

# The file, $1 bytes, written through write(2) and fsynced: every block on
# the device.
make_file() {
	dd if=/dev/urandom of="$FIO_FILE" bs="$1" count=1 conv=fsync status=none ||
		fail "cannot write $FIO_FILE"
}

# fio's randwrite job over the file, its JSON in $BATS_TEST_TMPDIR/fio.json
# and fio's pid (the job is a thread) in FIO_PID; more options in "$@".
fio_run() {
	fio --name=wpstat --filename="$FIO_FILE" --bs=4k --rw=randwrite \
		--ioengine=mmap --thread --output-format=json "$@" \
		>"$BATS_TEST_TMPDIR/fio.json" 2>"$BATS_TEST_TMPDIR/fio.err" &
	FIO_PID=$!
	wait "$FIO_PID" || fail "fio failed: $(cat "$BATS_TEST_TMPDIR/fio.err")"
}

fio_json() {
	jq "$1" "$BATS_TEST_TMPDIR/fio.json"
}

# Column $1 of fio's stall row for the file (0 if none).
row() {
	wpstat stalls --json --pid "$FIO_PID" --resolve "$SLOW" |
		jq --arg f "$FIO_FILE" "[.stalls[] | select(.path == \$f) | .$1] | add // 0"
}

# A cold file: each of fio's writes faults on a page not in the page
# cache, reads it (10 ms), and only then runs page_mkwrite.
# Expected: 256 writes (--io_size 1M of the 4 MiB file), each one
# first-write fault and one read-in (no page twice: fio's random map; no
# read-around: MADV_RANDOM), no write-protect fault; the faults' time
# (whole: read-in included) is at most fio's own total completion
# latency of its writes (a memcpy each, the fault inside it) and, on a
# production kernel, at least 90 % of it;
# diagnose's first finding is the read-in.  When only do_page_mkwrite was
# timed, after the read-in, this scenario measured 3.6 s in fio and
# 137 ms in wpstat.  ext4 caches large folios from 6.16: a read may bring
# in a page fio writes later, whose fault then reads nothing (7.2: 254
# read-ins of 256), so there at least 90 % of the writes read their page.
@test "fio cold: each write reads its page in, and the faults hold fio's latency" {
	make_file 4M
	echo 3 >/proc/sys/vm/drop_caches
	wpstat_control reset
	fio_run --size=4M --io_size=1M
	local ios clat readins
	ios=$(fio_json '.jobs[0].write.total_ios')
	clat=$(fio_json '.jobs[0].write.clat_ns.mean * .jobs[0].write.total_ios | floor')
	echo "# fio: $ios writes, $((clat / 1000000)) ms in all; wpstat: first $(row fault_first) wp $(row fault_wp) readin $(row readin_waits) ($(($(row readin_ns) / 1000000)) ms) fault $(($(row fault_ns) / 1000000)) ms" >&3
	[ "$ios" = 256 ] || fail "fio wrote $ios times"
	[ "$(row fault_first)" = 256 ]
	[ "$(row fault_wp)" = 0 ]
	readins=$(row readin_waits)
	if wps_kernel_at_least 6 16; then
		[ "$readins" -le 256 ]
		[ $((readins * 10)) -ge $((256 * 9)) ]
	else
		[ "$readins" = 256 ]
	fi
	[ "$(row readin_ns)" -ge $((readins * (DELAY_MS - WPS_TICK_MS) * 1000000)) ]
	# The faults happen inside fio's writes: never more time than fio's.
	[ "$(row fault_ns)" -le "$clat" ] ||
		fail "faults $(row fault_ns) ns, more than fio's $clat ns"
	# On a KASAN kernel a fault's own CPU time grows and fio's time
	# around it too (check-debug: 62 ms a fault and 7 ms outside, 89.4 %).
	if wps_kernel_sanitized; then
		echo "# KASAN kernel: the >= 90 % share is for production kernels" >&3
	else
		[ $(( $(row fault_ns) * 10 )) -ge $((clat * 9)) ] ||
			fail "faults $(row fault_ns) ns of fio's $clat ns"
	fi
	run --separate-stderr wpstat diagnose --json --pid "$FIO_PID" "$SLOW"
	assert_success
	jq -e --argjson pid "$FIO_PID" '.findings[0] | .rule == "readin" and .pid == $pid and
		([.remedies[].change | select(startswith("fio --invalidate=0"))] | length == 1)' <<<"$output"
}

# A cached file, fio msyncing the mapping after every write (--fsync=1:
# its mmap engine's sync is msync(MS_SYNC) of the whole mapping): each
# msync cleans the page just written and write-protects its PTE.  fio
# writes twice the file's 256 KiB at random offsets with no random map
# (--norandommap: with a map, fio closes the file once every block is
# done, leaves its mapping behind and maps it again, so a second pass
# would start on fresh PTEs).
# Expected: 128 writes on one mapping; the first write to each page a
# first-write fault, every later one a write-protect fault (the page was
# msynced since): first-write faults = the distinct pages fio wrote (from
# its own I/O log), write-protect faults = the rest, as many faults as
# writes; no read-in.  ext4 caches large folios from 6.16, and a
# first-write fault maps the whole folio writable: there the first-write
# faults are the folios fio touched, at least 1 and at most the pages
# (7.2: 1 for 59 pages), and still one fault per write (each msync
# write-protects the folio's every PTE).
@test "fio warm, msync after every write: one fault per write, first on each page, then write-protect" {
	make_file 256K
	cat "$FIO_FILE" >/dev/null
	wpstat_control reset
	fio_run --size=256K --io_size=512K --norandommap --fsync=1 --invalidate=0 \
		--write_iolog="$BATS_TEST_TMPDIR/fio.log"
	local ios pages
	ios=$(fio_json '.jobs[0].write.total_ios')
	pages=$(awk '$3 == "write" { print $4 }' "$BATS_TEST_TMPDIR/fio.log" | sort -u | wc -l)
	echo "# fio: $ios writes to $pages pages, $(fio_json '.jobs[0].sync.total_ios') msyncs; wpstat: first $(row fault_first) wp $(row fault_wp) readin $(row readin_waits)" >&3
	[ "$ios" = 128 ]
	[ "$pages" -gt 0 ]
	[ "$pages" -lt 128 ]
	if wps_kernel_at_least 6 16; then
		[ "$(row fault_first)" -ge 1 ]
		[ "$(row fault_first)" -le "$pages" ]
		[ $(($(row fault_first) + $(row fault_wp))) = "$ios" ]
	else
		[ "$(row fault_first)" = "$pages" ]
		[ "$(row fault_wp)" = $((ios - pages)) ]
	fi
	[ "$(row readin_waits)" = 0 ]
}

# A cached file, another process fdatasyncing it every 30 ms (data
# written back, no journal commit for an mtime), fio storing for 3 s: the
# fdatasyncs write-protect fio's pages, and a store to a page still under
# writeback waits for it (stable pages).
# Expected (production kernels): a stable finding for fio, naming
# fdatasync's pid as the one that synced. Ranked above it only findings
# a busy host inflates: the faults' own CPU time (cpu), their wait for a
# CPU (runq), and the page lock the syncer holds while it sets its
# writeback up (lock, naming the syncer too). Those are CPU time; the
# stable wait is the device's.
# On a quiet host the stable wait comes first (60 %, then cpu 21 %, lock
# 18 %); with the host's two cores shared by four or five guests cpu came first
# (48 %) once and lock (57 %) once, the stable wait second both times.
@test "fio warm beside an fdatasync loop: a stable finding, and the syncer named" {
	make_file 256K
	cat "$FIO_FILE" >/dev/null
	rm -f "$FIO_FILE.ready"
	/usr/bin/python3 "$WPSTAT_TOP/scripts/lib/fsync-loop.py" "$FIO_FILE" 30 fdatasync &
	FSYNC_PID=$!
	for _ in $(seq 600); do
		[ -e "$FIO_FILE.ready" ] && break
		sleep 0.1
	done
	[ -e "$FIO_FILE.ready" ] || fail "the fdatasync loop did not start"
	wpstat_control reset
	fio_run --size=256K --time_based --runtime=3 --invalidate=0
	kill "$FSYNC_PID"
	wait "$FSYNC_PID" 2>/dev/null || true
	run --separate-stderr wpstat diagnose --json --pid "$FIO_PID" "$SLOW"
	assert_success
	echo "# $(jq -c '[.findings[] | {rule, share}]' <<<"$output")" >&3
	# On a KASAN kernel fio's own faults cost milliseconds of CPU time
	# (check-debug: first-write 64 %, run queue 36 %, no stable wait in
	# 3 s): whether there is a stable finding is for production kernels;
	# a stable finding, if any, still names the syncer.
	local fios='def fios: .pid == $pid and
		any(.evidence[]; .name == "synced_by" and (.value | startswith("pid \($sync) ")));'
	if wps_kernel_sanitized; then
		echo "# KASAN kernel: the stable finding is predicted for production kernels" >&3
		jq -e --argjson pid "$FIO_PID" --arg sync "$FSYNC_PID" \
			"$fios"' all(.findings[] | select(.rule == "stable"); fios)' <<<"$output"
	else
		jq -e --argjson pid "$FIO_PID" --arg sync "$FSYNC_PID" \
			"$fios"' .findings as $f
			| ([$f[].rule] | index("stable")) as $i
			| $i != null and ($f[$i] | fios)
			  and all($f[:$i][]; .rule == "cpu" or .rule == "runq"
				or (.rule == "lock" and fios))' <<<"$output"
	fi
	FSYNC_PID=
}

# fio's faults expected from its own I/O log ($1) when it msyncs the
# mapping after every $2 writes: in each run of $2 writes, the first store
# to a page faults (first-write if no earlier run wrote it, else
# write-protect: the msync before cleaned and write-protected it) and its
# later ones do not (the PTE is writable and dirty until the next msync).
# Prints "first write-protect".
predicted_faults() {
	awk -v every="$2" '$3 == "write" {
		page = int($4 / 4096)
		if (n % every == 0)
			delete in_run
		n++
		if (page in in_run)
			next
		in_run[page] = 1
		if (page in seen)
			wp++
		else
			first++
		seen[page] = 1
	} END { print first + 0, wp + 0 }' "$1"
}

# The steady state of a mapped file rewritten and synced all day: a warm
# 256 KiB file (64 pages), fio storing 512 times at random offsets
# (--norandommap: pages come back) and msyncing after every 16 writes.
# Each msync waits for its writeback (10 ms), so no store meets a page
# under writeback: the faults wait for nothing, their time is
# ->page_mkwrite's work and the fault's entry and exit, on the CPU.
# Expected: first-write and write-protect faults as predicted from fio's
# I/O log (predicted_faults; about 64 and 390), no read-in; diagnose's
# first finding for fio is "cpu" (write faults cost CPU), more than half
# of its stall time, its title the fault count and the cost of each, its
# remedies cutting faults: msync less often (the trigger is fio's own
# msync) and write(2) instead of stores, never an off-CPU profile; an
# "unnamed" finding, if any, is the faults' sleep that neither the CPU
# nor the run queue accounts for.  Both remedies applied, then: msync
# every 256 writes makes the faults the pages each run touches (about
# 2 x 63: predicted the same way), and write(2) (fio's psync engine)
# takes none while the module counts its dirtied pages.  ext4 caches
# large folios from 6.16 and a fault maps a whole folio: there the
# faults are at most the prediction.
@test "fio warm, msync every 16 writes: faults cost CPU, and the remedies cut them" {
	make_file 256K
	cat "$FIO_FILE" >/dev/null
	msync_every() {
		wpstat_control reset
		fio_run --size=256K --io_size=2M --norandommap --fsync="$1" --invalidate=0 \
			--write_iolog="$BATS_TEST_TMPDIR/fio-$1.log"
		[ "$(fio_json '.jobs[0].write.total_ios')" = 512 ]
		read -r want_first want_wp < <(predicted_faults "$BATS_TEST_TMPDIR/fio-$1.log" "$1")
		first=$(row fault_first)
		wp=$(row fault_wp)
		echo "# msync every $1: predicted first $want_first wp $want_wp; wpstat first $first wp $wp, cpu $(row fault_cpu_ns) runq $(row fault_runq_ns) unnamed $(row fault_unnamed_ns) of fault $(row fault_ns) ns" >&3
		[ "$want_wp" -gt 0 ]
		if wps_kernel_at_least 6 16; then
			[ "$first" -ge 1 ] && [ $((first + wp)) -le $((want_first + want_wp)) ]
		else
			[ "$first" = "$want_first" ] && [ "$wp" = "$want_wp" ]
		fi
		[ "$(row readin_waits)" = 0 ]
	}
	local first wp want_first want_wp faults16
	msync_every 16
	faults16=$((first + wp))
	run --separate-stderr wpstat diagnose --json --pid "$FIO_PID" "$SLOW"
	assert_success
	echo "# $(jq -c '[.findings[] | {rule, title, share}]' <<<"$output")" >&3
	local sanitized=false
	wps_kernel_sanitized && sanitized=true
	jq -e --argjson pid "$FIO_PID" --argjson faults "$faults16" --argjson sanitized $sanitized '
		def ev(n): [.evidence[] | select(.name == n) | .value] | first;
		(.findings | map(select(.rule == "cpu")) | length == 1) and
		(.findings[] | select(.rule == "cpu") |
		 .pid == $pid and
		 (.title | startswith("write faults cost CPU: \($faults) faults x ")) and
		 ev("per_fault_cpu_ns") > 0 and ev("fault_cpu_ns") >= .ns and
		 ([.remedies[].change | select(startswith("msync(MS_SYNC) less often"))] | length == 1) and
		 ([.remedies[].change | select(startswith("write(2) or pwrite(2)"))] | length == 1) and
		 ([.remedies[].change | select(test("off-CPU"))] == [])) and
		($sanitized or (.findings[0] | .rule == "cpu" and .share > 0.5)) and
		all(.findings[] | select(.rule == "unnamed"); .ns == ev("fault_sleep_ns"))' <<<"$output"
	# Remedy: msync less often.
	msync_every 256
	echo "# faults: $faults16 with an msync per 16 writes, $((first + wp)) per 256" >&3
	[ $(((first + wp) * 2)) -le "$faults16" ]
	# Remedy: write(2) instead of stores.
	wpstat_control reset
	fio --name=wpstat --filename="$FIO_FILE" --bs=4k --rw=randwrite --ioengine=psync \
		--thread --size=256K --io_size=2M --norandommap --fsync=16 --invalidate=0 \
		--output-format=json >"$BATS_TEST_TMPDIR/fio.json" 2>"$BATS_TEST_TMPDIR/fio.err" &
	FIO_PID=$!
	wait "$FIO_PID" || fail "fio failed: $(cat "$BATS_TEST_TMPDIR/fio.err")"
	[ "$(fio_json '.jobs[0].write.total_ios')" = 512 ]
	echo "# write(2): $(counter "$FIO_FILE" dirtied) pages dirtied, faults $(counter "$FIO_FILE" mkwrite_first) + $(counter "$FIO_FILE" mkwrite_wp)" >&3
	[ "$(counter "$FIO_FILE" dirtied)" -gt 0 ]
	[ "$(counter "$FIO_FILE" mkwrite_first)" = 0 ]
	[ "$(counter "$FIO_FILE" mkwrite_wp)" = 0 ]
}
