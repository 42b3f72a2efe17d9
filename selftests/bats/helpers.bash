# Shared helpers for the bats suites (load with: load helpers).
# They run inside the guest (scripts/check/guest-check.sh): root, wpstat.ko
# loaded, scratch filesystems under $WPSTAT_FS_DIR/{ext4,xfs,btrfs,tmpfs}.

bats_load_library bats-support
bats_load_library bats-assert

# The checkout the suites are in: guest-run.sh exports it; run by hand, the
# suites find it from their own place (selftests/bats, selftests/clients).
WPSTAT_TOP=${WPSTAT_TOP:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
# The checkout's Python (scripts/setup.sh's .venv: prometheus_client).
PY=$WPSTAT_TOP/.venv/bin/python3
WPSTAT_FS_DIR=${WPSTAT_FS_DIR:-/tmp/wpstat}
# A scheduler tick, in ms: dm-delay releases a bio up to a tick before its
# delay has passed (msecs_to_jiffies, dm-delay.c); HZ=250 in Debian's
# amd64 kernels (selftests/kselftest/wpstat_test.h: WPS_TICK_MS).
WPS_TICK_MS=4
PATH=$WPSTAT_TOP/build/bin:$PATH

# The module's lists (uapi/*.def), through their one reader:
# scripts/lib/wpstat_counters.py's options (--fields LIST KIND FIELD...).
wpstat_lists() {
	python3 "$WPSTAT_TOP/scripts/lib/wpstat_counters.py" "$@"
}

# Fail (not skip) when the module is missing: a test that passes without
# the module proves nothing.
require_module() {
	[ -r /proc/wpstat/inodes ] || fail "wpstat module not loaded"
}

module_loaded() {
	grep -q '^wpstat ' /proc/modules
}

# A fresh scratch file path on filesystem $1 (the file is not created).
scratch_file() {
	local f=$WPSTAT_FS_DIR/$1/${BATS_TEST_NAME:-t}.$$.$RANDOM
	rm -f "$f"
	echo "$f"
}

# Superblock dev "MAJ:MIN" of the filesystem holding $1, as the module
# prints it (mountinfo; st_dev differs on btrfs).
sb_dev() {
	local id
	id=$(stat -c %m "$1") || return 1
	awk -v mp="$id" '$5 == mp { print $3; exit }' /proc/self/mountinfo
}

# The /proc/wpstat/inodes value of counter $2 for file $1 (dev + ino; the
# newest row wins).  Prints 0 when the file has no row.
counter() {
	local file=$1 name=$2 dev ino
	dev=$(sb_dev "$file") || return 1
	ino=$(stat -c %i "$file") || return 1
	awk -v dev="$dev" -v ino="$ino" -v name="$name" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 == dev && $2 == ino { v = $(col[name]) }
		END { print (v == "" ? 0 : v) }' /proc/wpstat/inodes
}

# The counter columns of /proc/wpstat/inodes, one a line, in its order:
# the header's columns that the module's counter list names (not the
# key's: dev ino gen, and subvol where the list put it).
inodes_counter_names() {
	awk 'NR == FNR { if (FNR > 1) counter[$1]; next }
		{ for (i = 1; i <= NF; i++) if ($i in counter) print $i; exit }' \
		/proc/wpstat/counters /proc/wpstat/inodes
}

# A value from /proc/wpstat/summary.
summary() {
	awk -v n="$1" '$1 == n { print $2 }' /proc/wpstat/summary
}

# Whether the running kernel is at least version $1.$2.
wps_kernel_at_least() {
	local ma mi
	IFS=. read -r ma mi _ <<<"$(uname -r)"
	mi=${mi%%[!0-9]*}
	[ "$ma" -gt "$1" ] || { [ "$ma" -eq "$1" ] && [ "$mi" -ge "$2" ]; }
}

# True on a KASAN kernel (kasan_report in /proc/kallsyms: make
# check-debug's), whose faults cost milliseconds of CPU time: a share of
# time predicted for production kernels does not hold there.
wps_kernel_sanitized() {
	grep -qw kasan_report /proc/kallsyms
}

# The loaded module's level: counts or timing.
module_level() {
	cat /sys/module/wpstat/parameters/level
}

# What a column only level timing produces (mkwrite_ns, mkclean_ptes) must
# read: $1 at level timing, $2 at level counts (default null, as in JSON;
# "-" in /proc/wpstat/inodes).
timed() {
	if [ "$(module_level)" = timing ]; then echo "$1"; else echo "${2:-null}"; fi
}

# For a test that asserts a per-call denominator (stable_calls, bdp_calls,
# bdp_fault_calls), which only level timing counts: switch to it.  The
# file's teardown calls level_restore.
level_timing() {
	wpstat level timing >/dev/null || fail "wpstat level timing failed"
}

# Back to the level the suite runs at (guest-check.sh's $WPSTAT_LEVEL).
level_restore() {
	[ "$(module_level 2>/dev/null)" = "${WPSTAT_LEVEL:-counts}" ] ||
		wpstat_control level "${WPSTAT_LEVEL:-counts}"
}

wpstat_control() {
	echo "$*" >/sys/kernel/debug/wpstat/control
}

# File $1 (256 KiB, 64 pages) written by wpload through a shared mapping
# in $2 passes (default 2), synced after each with $3 (default msync).
write_file() {
	wpload --file "$1" --size 256K --passes "${2:-2}" --sync "${3:-msync}" --quiet >/dev/null
}

# wpload's two passes over a 256 KiB file $1, each synced with msync, under
# `wpstat run --json`: $status and $stderr as `run` leaves them, RUN_ROW the
# report's row for $1 (empty if none) and RUN_DELTAS its deltas.
run_wpload() {
	local f=$1 json=$BATS_TEST_TMPDIR/run.json
	run --separate-stderr wpstat run --json --output "$json" -- \
		wpload --file "$f" --size 256K --passes 2 --sync msync --quiet
	RUN_ROW=$(jq -c --arg p "$f" '[.files[] | select(.path == $p)][0] // empty' "$json" 2>/dev/null)
	RUN_DELTAS=$(jq -c '.deltas // empty' <<<"${RUN_ROW:-null}")
}

# After `run --separate-stderr`: nothing on stdout, exactly one line on
# stderr, and it starts with "wpstat: ".
assert_one_error() {
	[ -z "$output" ] || fail "expected nothing on stdout, got: $output"
	[ "${#stderr_lines[@]}" -eq 1 ] ||
		fail "expected one line on stderr, got ${#stderr_lines[@]}: $stderr"
	[[ ${stderr_lines[0]} == "wpstat: "* ]] ||
		fail "stderr does not start with 'wpstat: ': $stderr"
}

# jq expression $2 applied to wpload JSON in $1.
jqv() {
	jq -r "$2" <<<"$1"
}

# The counters of the row for path $2 in `wpstat show --json` output $1.
row_of() {
	jq -c --arg p "$2" '[.inodes[] | select(.path == $p)] | .[0].counters // empty' <<<"$1"
}

# Skip unless guest-check.sh mounted $WPSTAT_FS_DIR/$1 (NAME.unavailable
# holds why not).
need_fs() {
	local why=$WPSTAT_FS_DIR/$1.unavailable
	[ ! -e "$why" ] || skip "$1 not mounted: $(head -n 1 "$why")"
}

# ---- running as an unprivileged user -------------------------------------
# scripts/vm/guest-run.sh copies the tools and the module to $WPSTAT_NOBODY_DIR (0755,
# on tmpfs): the checkout may be private (/root is 0700), and a test of a
# refusal must fail on the refusal, not on "cannot execute".

# Fail the test, saying why, unless nobody can run the copy of tool $1 (and
# read the module copy).  Call it before `run ... as_nobody`.
require_nobody_tools() {
	local tool=${1:-wpstat}
	[ -n "${WPSTAT_NOBODY_DIR:-}" ] ||
		fail "set-up: WPSTAT_NOBODY_DIR is unset (run the suites through scripts/vm/vm-run.sh)"
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		test -x "$WPSTAT_NOBODY_DIR/bin/$tool" -a -r "$WPSTAT_NOBODY_DIR/wpstat.ko" ||
		fail "set-up: nobody cannot execute $WPSTAT_NOBODY_DIR/bin/$tool or read $WPSTAT_NOBODY_DIR/wpstat.ko"
}

# Run "$@" as nobody (uid and gid 65534, no groups) with the copies first
# on PATH, from /, which nobody can always enter.
as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		env -C / PATH="$WPSTAT_NOBODY_DIR/bin:/usr/sbin:/usr/bin:/sbin:/bin" "$@"
}
