#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The wpstat command-line tool: watch.
#
# Runs inside the guest as root with the module loaded (see
# scripts/check/guest-check.sh); tests that unload the module or load it with
# other parameters put the default one back (teardown, cli.bash), so the
# file ends with the module loaded as it found it.

bats_require_minimum_version 1.5.0

load helpers
load cli

@test "watch --count 2: two reports, the workload's file, no screen clearing" {
	local f writer
	f=$(scratch_file ext4)
	# The writer runs until watch is done, so a slow host that starts it
	# late still puts the file in a report (one delayed wpload missed both
	# 1.5 s intervals in CI).
	(while :; do write_file "$f" 1; sleep 0.2; done) &
	writer=$!
	run --separate-stderr wpstat watch --count 2 --interval 1.5 --resolve "$WPSTAT_FS_DIR/ext4"
	kill "$writer"
	wait "$writer" || true
	assert_success
	[ "$(grep -c '^wpstat watch' <<<"$output")" -eq 2 ]
	assert_line --regexp " $f\$"
	refute_output --partial $'\e['
}

@test "watch: SIGINT ends it cleanly with status 0" {
	local pid rc=0
	wpstat watch --interval 0.2 >"$BATS_TEST_TMPDIR/watch.out" 2>&1 &
	pid=$!
	sleep 1.5
	kill -INT "$pid"
	wait "$pid" || rc=$?
	[ "$rc" -eq 0 ] || fail "watch exited $rc: $(cat "$BATS_TEST_TMPDIR/watch.out")"
	grep -q '^wpstat watch' "$BATS_TEST_TMPDIR/watch.out"
}

@test "watch: bad arguments" {
	run --separate-stderr wpstat watch --interval 0
	assert_failure 2
	assert_one_error
	run --separate-stderr wpstat watch --count -1
	assert_failure 2
	assert_one_error
	run --separate-stderr wpstat watch --sort nosuch --count 1
	assert_failure 2
	assert_one_error
}
