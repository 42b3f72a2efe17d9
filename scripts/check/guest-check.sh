#!/usr/bin/env bash
# Runs inside the guest (through scripts/vm/vm-run.sh, module already loaded):
# prepares the scratch filesystems, runs every kselftest binary and every
# bats file, and leaves one TAP file per suite in $WPSTAT_RESULTS.
#
#   guest-check.sh [SUITE...]   suites: ksft:NAME or bats:NAME, each with an
#                               optional @LEVEL (counts, timing); default:
#                               the set WPSTAT_SUITE_SET of the registry,
#                               selftests/suites.txt, in its order
#
# WPSTAT_SKIP_SUITES: suites (as above, with @LEVEL where not counts) left
# out of the default list, space-separated; scripts/check/check-debug.sh
# leaves out bats:experiment.
# WPSTAT_KSFT_ARGS: arguments for every kselftest binary, e.g. "-f churn"
# (the harness's fixture, variant and test filters) to run one test;
# WPSTAT_BATS_ARGS: the same for bats, e.g. "--filter xfs".
# WPSTAT_SUITE_SET: which default list (scripts/check/check.sh picks it;
# the sets are selftests/suites.txt's):
#   all     every suite of sets kernel, full and long (make check-kernels,
#           on every kernel)
#   check   sets kernel and full (make check's one kernel that runs
#           everything else: the newest bookworm 6.12)
#   kernel  set kernel, the suites that check what the kernel does: make
#           check on 5.10
# WPSTAT_SHARD: I/N, run only part I of N of the default list
# (scripts/check/suites.sh shard: parts of about equal measured time), so
# that N guests of one kernel run it side by side (make check).
# WPSTAT_TIMING_SUITES, when set: the suites of sets all and check to run
# again at level timing, instead of the registry's @timing lines (empty:
# none; scripts/check/check-debug.sh).
#
# Each suite runs under scripts/check/watchdog.sh, which kills it only
# when its output has not changed for $WPSTAT_HANG_SECS (default 600 s):
# that is one failed test, naming the test that was running and the last
# line it printed, and the rest still run.  No suite is killed for its
# time: a slow machine makes a slow run, not a failed one.  Its output
# with the seconds since it began before each line is left in
# NAME.tap.times; this script's log says how long it took and its longest
# silence.  While a suite runs, $WPSTAT_RESULTS/running names it for the
# host's watchdog (scripts/check/check.sh), which watches the whole guest.

set -u
top=${WPSTAT_TOP:?run through scripts/vm/vm-run.sh}
results=${WPSTAT_RESULTS:?}
fsdir=/tmp/wpstat
export WPSTAT_FS_DIR=$fsdir

# shellcheck source=scripts/vm/guest-lib.sh
. "$top/scripts/vm/guest-lib.sh"

# Scratch filesystems on RAM disks.  xfs insists on at least 300 MiB.
# /dev/ram7 stays free: zfs.bats's log device.
setup_fs() {
	guest_ramdisks 8 320 || return 1
	guest_mkfs_mount ext4 /dev/ram0 $fsdir/ext4 || return 1
	guest_mkfs_mount xfs /dev/ram1 $fsdir/xfs || return 1
	guest_mkfs_mount btrfs /dev/ram2 $fsdir/btrfs || return 1
	guest_mount tmpfs $fsdir/tmpfs
}

# The filesystems of the per-filesystem suite (wpstat_fs), each on its own:
# one that cannot be made leaves $fsdir/NAME.unavailable with the reason,
# and the suite skips its variant with that reason.  overlay: lower, upper
# and work directories on the ext4 scratch filesystem.
setup_more_fs() {
	local why
	try_fs() {
		local name=$1
		shift
		if ! why=$("$@" 2>&1); then
			echo "${why:-$* failed}" | head -n 3 >"$fsdir/$name.unavailable"
		fi
	}
	# commit=300: jbd2's periodic commit (5 s) writes these modes' data
	# pages back itself; on a guest slowed enough (a debug kernel on a
	# loaded host) it cleaned them in the middle of wpstat_fs's store pass.
	try_fs ext4-journal guest_mkfs_mount ext4 /dev/ram3 $fsdir/ext4-journal -o data=journal,commit=300
	try_fs ext4-nodelalloc guest_mkfs_mount ext4 /dev/ram4 $fsdir/ext4-nodelalloc -o nodelalloc,commit=300
	try_fs f2fs guest_mkfs_mount f2fs /dev/ram5 $fsdir/f2fs
	mkdir -p $fsdir/ext4/.ovl/lower $fsdir/ext4/.ovl/upper $fsdir/ext4/.ovl/work
	try_fs overlay guest_mount overlay $fsdir/overlay -t overlay \
		-o lowerdir=$fsdir/ext4/.ovl/lower,upperdir=$fsdir/ext4/.ovl/upper,workdir=$fsdir/ext4/.ovl/work
	echo "not set up: no ZFS suite in this run" >"$fsdir/zfs.unavailable"
	# NFSv4.2 over loopback (guest_nfs_loopback), exporting a directory
	# of the ext4 scratch filesystem, for wpstat_nfs and nfs.bats.  Only
	# when they run: the server's grace period costs each boot 10 s.
	case " $* " in
	"  " | *nfs*) try_fs nfs guest_nfs_loopback $fsdir/ext4/nfs-export $fsdir/nfs ;;
	*) echo "not set up: no NFS suite in this run" >"$fsdir/nfs.unavailable" ;;
	esac
}

# The suite lists are selftests/suites.txt's (scripts/check/suites.sh):
# its sets, with WPSTAT_TIMING_SUITES, where set, for the level-timing
# reruns of the check and all sets.
suites=("$@")
suite_set=${WPSTAT_SUITE_SET:-all}
if [ ${#suites[@]} = 0 ]; then
	case $suite_set in
	all | check | kernel) ;;
	*) echo "guest-check: no suite set '$suite_set' (all, check, kernel)" >&2; exit 2 ;;
	esac
	for s in $("$top/scripts/check/suites.sh" list "$suite_set"); do
		[ "$suite_set" = kernel ] || [ -z "${WPSTAT_TIMING_SUITES+set}" ] ||
			[ "${s%@timing}" = "$s" ] || continue
		suites+=("$s")
	done
	if [ "$suite_set" != kernel ] && [ -n "${WPSTAT_TIMING_SUITES+set}" ]; then
		for s in $WPSTAT_TIMING_SUITES; do
			suites+=("$s@timing")
		done
	fi
fi
if [ -z "${*}" ]; then
	for s in ${WPSTAT_SKIP_SUITES:-}; do
		for i in "${!suites[@]}"; do
			[ "${suites[$i]}" != "$s" ] || unset "suites[$i]"
		done
	done
	if [ -n "${WPSTAT_SHARD:-}" ] && [ ${#suites[@]} -gt 0 ]; then
		mapfile -t suites < <("$top/scripts/check/suites.sh" shard \
			"${WPSTAT_SHARD%/*}" "${WPSTAT_SHARD#*/}" "${suites[@]}")
	fi
fi
suites=("${suites[@]}")

# Only what a test starts (msync, fsync, sync_file_range) cleans pages.
guest_writeback_quiet

if ! setup_fs >"$results/setup.log" 2>&1; then
	echo "guest-check: scratch filesystem set-up failed:" >&2
	cat "$results/setup.log" >&2
fi
setup_more_fs "${suites[@]}" >>"$results/setup.log" 2>&1

# ZFS (wpstat_zfs): make setup-zfs's build for this kernel, loaded just
# before the first ZFS suite (the registry lists them last): a guest with
# ZFS loaded ran every other suite of its part 3 to 4 times slower (its
# ARC and txg threads in a 2 GiB guest).  Without a build the suite skips
# naming make setup-zfs.  Not in a subshell: its PATH and LD_LIBRARY_PATH
# (zpool, zfs) stay for the suites (slowdev_up's pools).
zfs_set_up=0
setup_zfs() {
	[ $zfs_set_up = 0 ] || return 0
	zfs_set_up=1
	rm -f "$fsdir/zfs.unavailable"
	guest_zfs /dev/ram6 $fsdir/zfs >"$fsdir/zfs.log" 2>&1 ||
		head -n 3 "$fsdir/zfs.log" >"$fsdir/zfs.unavailable"
	cat "$fsdir/zfs.log" >>"$results/setup.log"
}

# What fails a suite when it shows up in the kernel log while it runs.
problems=$top/scripts/vm/kernel-problems.ere
hang=${WPSTAT_HANG_SECS:-600}
wdlog=/tmp/wpstat-watchdog.log

for s in "${suites[@]}"; do
	name=${s#*:}
	level=counts
	case $name in *@*) level=${name#*@} name=${name%@*} ;; esac
	# One TAP file per suite and level: NAME.tap, NAME@timing.tap
	# (clients/NAME: clients-NAME.tap).
	tap=${name//\//-}
	[ "$level" = counts ] || tap=$tap@$level
	case $name in *zfs*) setup_zfs ;; esac
	echo "guest-check: $s" >&2
	echo "guest-check: begin $s" >/dev/kmsg
	start=$(date +%s)
	export WPSTAT_LEVEL=$level
	# A suite killed mid-way (the watchdog, the harness's timeout) leaves
	# its filter or a disable behind: the next one starts from neither.
	echo "filter none" >/sys/kernel/debug/wpstat/control
	echo enable >/sys/kernel/debug/wpstat/control
	if ! echo "level $level" >/sys/kernel/debug/wpstat/control; then
		echo "not ok - guest-check could not switch the module to level $level" >"$results/$tap.tap"
		continue
	fi
	case $s in
	ksft:*) cmd=(bash -c 'cd /tmp && exec "$0" "$@"' "$top/build/selftests/$name" ${WPSTAT_KSFT_ARGS:-}) ;;
	# bats:clients/NAME: a suite outside selftests/bats (make clients).
	# The formatter is bats' TAP with a "#  RUN" line as each test begins.
	bats:*/*) cmd=(bats --formatter "$top/scripts/check/bats-format-tap-run" ${WPSTAT_BATS_ARGS:-} "$top/selftests/$name.bats") ;;
	bats:*) cmd=(bats --formatter "$top/scripts/check/bats-format-tap-run" ${WPSTAT_BATS_ARGS:-} "$top/selftests/bats/$name.bats") ;;
	*) echo "guest-check: unknown suite '$s'" >&2; continue ;;
	esac
	echo "$s $results/$tap.tap" >"$results/running"
	# A TMPDIR of the suite's own (on /tmp, as /tmp is), watched too:
	# what bats keeps there (each test's output as it runs, the files of
	# BATS_FILE_TMPDIR: experiment.bats' sweep log, export.bats' files)
	# is progress that its TAP does not show until the test ends.  The
	# running file is touched at each sign of it, for the host.
	TMPDIR=$(mktemp -d /tmp/wpstat-suite.XXXXXX) && chmod 1777 "$TMPDIR"
	export TMPDIR
	"$top/scripts/check/watchdog.sh" --label "$s" --hang "$hang" \
		--out "$results/$tap.tap" --times "$results/$tap.tap.times" --watch "$TMPDIR" \
		--heartbeat "$results/running" -- \
		"${cmd[@]}" 2>"$wdlog"
	rc=$?
	rm -rf --one-file-system "$TMPDIR"
	export TMPDIR=/tmp
	rm -f "$results/running"
	took=$(($(date +%s) - start))
	if [ $rc = 124 ] || [ $rc = 125 ]; then
		sed 's/^watchdog: /guest-check: /' "$wdlog" >&2
		silence=killed
	else
		silence=$(sed -n 's/^watchdog: .* \(longest silence [0-9]* s\) after: .*/\1/p' "$wdlog")
	fi
	echo "guest-check: $s took $took s (${silence:-?})" >&2
	# The kernel log since the suite began: a report is one more failed
	# test of that suite (scripts/vm/vm-run.sh also fails the whole run).
	if dmesg | awk -v m="guest-check: begin $s" 'index($0, m) { n = NR } { l[NR] = $0 }
		END { for (i = n + 1; n && i <= NR; i++) print l[i] }' |
		grep -E -f "$problems" >"$results/$tap.kernel.txt"; then
		echo "not ok - kernel log during $s: $(head -n 1 "$results/$tap.kernel.txt")" >>"$results/$tap.tap"
	else
		rm -f "$results/$tap.kernel.txt"
	fi
	# A suite that unloaded the module and failed to reload it must not
	# take the rest down with it; the next suite starts at level counts.
	grep -q '^wpstat ' /proc/modules || insmod "$WPSTAT_MODULE"
	echo "level counts" >/sys/kernel/debug/wpstat/control
done
exit 0
