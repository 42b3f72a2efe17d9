# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The writer-next-to-an-fsync scenario of wpstat diagnose's tests
# (diagnose.bats, and zfs.bats on a ZFS pool), loaded after helpers.bash:
# wpload stores to every page of a 32-page shared mapping for 3 s while
# another process fsyncs the file every 30 ms, on the slow device
# (wps-slowdev: null_blk behind a 20 ms dm-delay, at /tmp/wpstat-slow).

SLOW=/tmp/wpstat-slow
# The system's python3 runs the fsync loop (helpers.bash's PY is the
# checkout's venv).
SYS_PY=/usr/bin/python3

# The fsync loop of the scenario, in the background: FSYNC_PID.  It
# fsyncs once before saying it is ready, so the writer meets a rhythm.
# SYNC_GAP_MS: its pause between syncs (default 30); SYNC_MODE=sync:
# sync(2) instead of fsync.
start_fsync_loop() {
	local f=$1
	rm -f "$f.ready"
	"$SYS_PY" "$WPSTAT_TOP/scripts/lib/fsync-loop.py" "$f" "${SYNC_GAP_MS:-30}" ${SYNC_MODE:+"$SYNC_MODE"} &
	FSYNC_PID=$!
	for _ in $(seq 600); do
		[ -e "$f.ready" ] && return 0
		sleep 0.1
	done
	fail "the fsync loop did not start"
}

# The writer of the scenario, 3 s of stores: WPLOAD_PID (its rows stay).
run_writer() {
	wpload --file "$1" --size 128K --duration 3 --mode "${WRITER_MODE:-mmap}" --quiet >/dev/null &
	WPLOAD_PID=$!
	wait "$WPLOAD_PID"
}

# The whole scenario on ${FS:-ext4} over a 20 ms dm-delay with
# stable_writes $1 (and mount option $2; SCENARIO_SETUP: a command run on
# the fresh filesystem, as zfs.bats's zpool add), then `wpstat diagnose
# --json --pid` of the writer in $output; the fsync loop was SYNC_PID.
writer_next_to_fsync() {
	wps-slowdev up "${FS:-ext4}" 20 "$1" || fail "cannot set up the slow device"
	[ -z "${2:-}" ] || mount -o "remount,$2" "$SLOW" || fail "remount $2"
	[ -z "${SCENARIO_SETUP:-}" ] || sh -c "$SCENARIO_SETUP" || fail "$SCENARIO_SETUP failed"
	touch "$SLOW/data"
	start_fsync_loop "$SLOW/data"
	wpstat_control reset
	run_writer "$SLOW/data"
	kill "$FSYNC_PID"
	wait "$FSYNC_PID" 2>/dev/null || true
	SYNC_PID=$FSYNC_PID
	FSYNC_PID=
	run --separate-stderr wpstat diagnose --json --pid "$WPLOAD_PID" "$SLOW"
	assert_success
	echo "# $(jq -c '[.findings[] | {rule, severity, share}]' <<<"$output")" >&3
}

# The rules of the findings in $output, sorted, space-separated.
rules() {
	jq -r '[.findings[].rule] | sort | join(" ")' <<<"$output"
}
