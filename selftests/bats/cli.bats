#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The wpstat command-line tool, what holds across its commands: help,
# version and usage errors, the refusals of a non-root user, and every
# command without the module.  One file per command beside it: cli_load
# (load, unload, level), cli_status, cli_show (show, and wpload's own
# output), cli_watch, cli_run, cli_control (reset, enable, disable,
# filter).
#
# Runs inside the guest as root with the module loaded (see
# scripts/check/guest-check.sh); tests that unload the module or load it with
# other parameters put the default one back (teardown, cli.bash), so the
# file ends with the module loaded as it found it.

bats_require_minimum_version 1.5.0

load helpers
load cli

@test "help and version" {
	run --separate-stderr wpstat --help
	assert_success
	assert_line --partial "Usage: wpstat COMMAND"
	for cmd in load unload status show watch run reset enable disable filter; do
		assert_line --regexp "^  ([a-z]+ \| )?$cmd( |\$)"
	done
	run --separate-stderr wpstat --version
	assert_success
	assert_output --regexp '^wpstat [0-9]+\.[0-9]+'
	# A command's --help is that command's alone.
	run --separate-stderr wpstat show --help
	assert_success
	assert_line --index 0 --partial "Usage: wpstat show "
	assert_line --partial "--all"
	refute_line --partial "Usage: wpstat COMMAND"
	refute_line --partial "export"
	run --separate-stderr wpstat stalls --help
	assert_success
	assert_line --index 0 --partial "Usage: wpstat stalls "
	refute_line --regexp "^ *(show|watch|export) "
}

@test "usage errors: one line on stderr, exit 2" {
	run --separate-stderr wpstat
	assert_failure 2
	assert_one_error
	run --separate-stderr wpstat frobnicate
	assert_failure 2
	assert_one_error
	[[ $stderr == *"unknown command 'frobnicate'"* ]]
	run --separate-stderr wpstat --bogus
	assert_failure 2
	assert_one_error
	run --separate-stderr wpstat status --bogus
	assert_failure 2
	assert_one_error
	[[ $stderr == *"unknown option '--bogus'"* ]]
	run --separate-stderr wpstat reset now
	assert_failure 2
	assert_one_error
}

@test "non-root: changing commands fail with one clear line, nothing changes" {
	local f before config cmd
	require_nobody_tools wpstat
	f=$(scratch_file ext4)
	write_file "$f"
	before=$(counter "$f" mkwrite_first)
	config=$(cat "$CONFIG")
	for cmd in reset disable enable "filter none" "filter pid 1" "filter dev 8:0" unload; do
		# shellcheck disable=SC2086 # words of the command
		run --separate-stderr as_nobody wpstat $cmd
		assert_failure 1
		assert_one_error
		[[ $stderr == *root* ]] || fail "'$cmd': no word of root: $stderr"
	done
	for cmd in show watch "run -- true"; do
		# shellcheck disable=SC2086
		run --separate-stderr as_nobody wpstat $cmd
		assert_failure 1
		assert_one_error
		[[ $stderr == *"root-only"* ]] || fail "'$cmd': $stderr"
	done
	[ "$(counter "$f" mkwrite_first)" = "$before" ]
	[ "$(cat "$CONFIG")" = "$config" ]
	module_loaded
	# status works, without what debugfs knows.
	run --separate-stderr as_nobody wpstat status --json
	assert_success
	jq -e '.loaded == true and .debugfs == "permission-denied" and .probes == null and
		.enabled == true' <<<"$output"
}

@test "non-root: load is refused and loads nothing" {
	require_nobody_tools wpstat
	rmmod wpstat
	run --separate-stderr as_nobody wpstat load --module "$WPSTAT_NOBODY_DIR/wpstat.ko"
	assert_failure 1
	assert_one_error
	[[ $stderr == *"operation not permitted (not root"* ]]
	refute module_loaded
}

@test "without the module: commands say so, run runs nothing" {
	rmmod wpstat
	for cmd in show watch reset enable disable "filter none"; do
		# shellcheck disable=SC2086
		run --separate-stderr wpstat $cmd
		assert_failure 1
		assert_one_error
		[[ $stderr == *"module not loaded"* ]] || fail "'$cmd': $stderr"
	done
	run --separate-stderr wpstat run -- touch "$BATS_TEST_TMPDIR/ran"
	assert_failure 1
	assert_one_error
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
}
