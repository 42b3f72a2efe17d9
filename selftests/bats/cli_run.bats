#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The wpstat command-line tool: run -- COMMAND.
#
# Runs inside the guest as root with the module loaded (see
# scripts/check/guest-check.sh); tests that unload the module or load it with
# other parameters put the default one back (teardown, cli.bash), so the
# file ends with the module loaded as it found it.

bats_require_minimum_version 1.5.0

load helpers
load cli

@test "run --json -- wpload: deltas equal wpload's totals, 64/64/128 on ext4" {
	local f out c mine theirs
	level_timing
	f=$(scratch_file ext4)
	out=$BATS_TEST_TMPDIR/run.json
	run --separate-stderr wpstat run --json --output "$out" -- \
		wpload --file "$f" --size 256K --passes 2 --sync msync --json
	assert_success
	[ -z "$stderr" ]
	jq -e --arg f "$f" '.command[0] == "wpload" and .command[2] == $f and
		.exit_status == 0 and .signal == null and .wall_ns > 0 and
		.reset == false and ([.files[] | select(.path == $f)] | length) == 1' "$out"
	for c in mkwrite_first mkwrite_wp mkclean_ptes; do
		theirs=$(jq -r ".totals.counters.$c" <<<"$output")
		mine=$(jq -r --arg f "$f" ".files[] | select(.path == \$f) | .deltas.$c" "$out")
		assert_equal "$mine" "$theirs"
	done
	jq -e --arg f "$f" '.files[] | select(.path == $f) |
		.deltas.mkwrite_first == 64 and .deltas.mkwrite_wp == 64 and
		.deltas.mkclean_ptes == 128' "$out"
	# Only rows that changed.
	jq -e '[.files[] | .deltas | [.[] | select(. != null and . > 0)] | length] | all(. > 0)' "$out"
}

@test "run: text report on stderr, the command's output untouched" {
	local f
	f=$(scratch_file ext4)
	run --separate-stderr wpstat run -- wpload --file "$f" --size 256K --passes 2 --sync msync --quiet
	assert_success
	assert_output --regexp '^total: 2 passes'
	[[ $stderr == *"wpstat run: wpload --file $f --size 256K"* ]]
	[[ $stderr == *"wall time, exit status 0"* ]]
	grep -q " $f\$" <<<"$stderr" || fail "no row for $f: $stderr"
}

@test "run: exit status of the command" {
	run wpstat run -- false
	assert_failure 1
	assert_output --partial "exit status 1"
	run wpstat run -- sh -c 'exit 3'
	assert_failure 3
	run wpstat run -- sh -c 'kill -TERM $$'
	assert_failure 143
	assert_output --partial "killed by signal 15"
	run --separate-stderr wpstat run --json --output "$BATS_TEST_TMPDIR/r.json" -- sh -c 'exit 5'
	assert_failure 5
	jq -e '.exit_status == 5 and (.files | type) == "array"' "$BATS_TEST_TMPDIR/r.json"
	run -127 --separate-stderr wpstat run -- /nonexistent/command
	assert_failure 127
	assert_one_error
	[[ $stderr == *"/nonexistent/command: command not found"* ]]
	touch "$BATS_TEST_TMPDIR/not-executable"
	run -126 --separate-stderr wpstat run -- "$BATS_TEST_TMPDIR/not-executable"
	assert_failure 126
	assert_one_error
	run --separate-stderr wpstat run --json
	assert_failure 2
	assert_one_error
}

@test "run --reset: counters restart with the command" {
	local f out
	f=$(scratch_file ext4)
	write_file "$f" 2
	out=$BATS_TEST_TMPDIR/run.json
	run --separate-stderr wpstat run --reset --json --output "$out" -- \
		wpload --file "$f" --size 256K --passes 1 --sync msync --quiet
	assert_success
	jq -e --arg f "$f" '.reset == true and (.files[] | select(.path == $f) |
		.counters == .deltas and .deltas.mkwrite_first == 64 and
		.deltas.mkwrite_wp == 0)' "$out"
	[ "$(counter "$f" mkwrite_wp)" = 0 ]
}
