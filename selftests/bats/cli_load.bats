#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The wpstat command-line tool: load, unload and level.
#
# Runs inside the guest as root with the module loaded (see
# scripts/check/guest-check.sh); tests that unload the module or load it with
# other parameters put the default one back (teardown, cli.bash), so the
# file ends with the module loaded as it found it.

bats_require_minimum_version 1.5.0

load helpers
load cli

@test "load: already loaded is not an error" {
	run --separate-stderr wpstat load
	assert_success
	assert_output --partial "already loaded"
	[ -z "$stderr" ]
	run --separate-stderr wpstat load max_inodes=5
	assert_success
	assert_output --partial "parameters not applied"
	[ "$(module_param max_inodes)" = "$WPSTAT_DEFAULT_MAX_INODES" ]
	module_loaded
}

@test "unload, then load --module through libkmod" {
	run --separate-stderr wpstat unload
	assert_success
	assert_output "unloaded wpstat"
	refute module_loaded
	[ ! -e /proc/wpstat/inodes ]
	run --separate-stderr wpstat load --module "$WPSTAT_MODULE"
	assert_success
	assert_output "loaded $WPSTAT_MODULE"
	grep -q '^wpstat ' /proc/modules
	[ -r /proc/wpstat/inodes ]
	[ -w "$CONTROL" ]
}

@test "load without --module: \$WPSTAT_MODULE, then the build tree" {
	rmmod wpstat
	run --separate-stderr wpstat load
	assert_success
	assert_output "loaded $WPSTAT_MODULE"
	module_loaded
	rmmod wpstat
	run --separate-stderr env WPSTAT_MODULE= wpstat load
	assert_success
	assert_output "loaded $(realpath "$WPSTAT_MODULE")"
	module_loaded
}

@test "load with parameters applies them" {
	rmmod wpstat
	run --separate-stderr wpstat load --module "$WPSTAT_MODULE" max_inodes=128 skip_probes=bdp
	assert_success
	assert_output "loaded $WPSTAT_MODULE max_inodes=128 skip_probes=bdp"
	[ "$(module_param max_inodes)" = 128 ]
	[ "$(module_param skip_probes)" = bdp ]
	[ "$(summary max_inodes)" = 128 ]
}

@test "load level=timing, then wpstat level switches without unloading" {
	local a b
	rmmod wpstat
	run --separate-stderr wpstat load --module "$WPSTAT_MODULE" level=timing
	assert_success
	[ "$(module_param level)" = timing ]
	run --separate-stderr wpstat level
	assert_success
	assert_output timing
	a=$(scratch_file ext4)
	write_file "$a"
	[ "$(counter "$a" mkwrite_first)" = 64 ]
	[ "$(counter "$a" mkclean_ptes)" = 128 ]
	run --separate-stderr wpstat level counts
	assert_success
	assert_output "level counts"
	[ "$(module_param level)" = counts ]
	# The table is kept; the timing-only columns now read "-".
	[ "$(counter "$a" mkwrite_first)" = 64 ]
	[ "$(counter "$a" mkwrite_wp)" = 64 ]
	[ "$(counter "$a" mkclean_ptes)" = - ]
	b=$(scratch_file ext4)
	write_file "$b"
	[ "$(counter "$b" mkwrite_first)" = 64 ]
	[ "$(counter "$b" mkwrite_wp)" = 64 ]
	[ "$(counter "$b" mkclean_calls)" = 128 ]
	run --separate-stderr wpstat status --json
	assert_success
	jq -e '.level == "counts"' <<<"$output"
	run --separate-stderr wpstat status
	assert_success
	assert_line "level:       counts"
	assert_line --partial "at level timing only (read '-'): mkwrite_ns, mkclean_ptes"
}

@test "level: a bad level or extra word is a usage error; nobody is refused" {
	run --separate-stderr wpstat level fast
	assert_failure 2
	assert_one_error
	[[ $stderr == *"unknown level 'fast' (expected counts or timing)"* ]]
	run --separate-stderr wpstat level counts timing
	assert_failure 2
	assert_one_error
	require_nobody_tools wpstat
	run --separate-stderr as_nobody wpstat level timing
	assert_failure 1
	assert_one_error
	[[ $stderr == *root* ]]
	[ "$(module_param level)" = counts ]
}

@test "load max_inodes=0: invalid parameter, clear message, nothing loaded" {
	rmmod wpstat
	run --separate-stderr wpstat load --module "$WPSTAT_MODULE" max_inodes=0
	assert_failure 1
	assert_one_error
	[[ $stderr == *"invalid module parameter (see dmesg)"* ]]
	refute module_loaded
	[ ! -e /proc/wpstat ]
}

@test "load: unknown or malformed parameter, missing file" {
	rmmod wpstat
	run --separate-stderr wpstat load --module "$WPSTAT_MODULE" max_inode=5
	assert_failure 2
	assert_one_error
	[[ $stderr == *"unknown module parameter 'max_inode'"*max_inodes* ]]
	run --separate-stderr wpstat load --module "$WPSTAT_MODULE" max_inodes
	assert_failure 2
	assert_one_error
	run --separate-stderr wpstat load --module /nonexistent/wpstat.ko
	assert_failure 1
	assert_one_error
	[[ $stderr == *"/nonexistent/wpstat.ko: No such file or directory"* ]]
	refute module_loaded
}

@test "unload when not loaded" {
	rmmod wpstat
	run --separate-stderr wpstat unload
	assert_failure 1
	assert_one_error
	[[ $stderr == *"module not loaded"* ]]
}

@test "unload while a debugfs file is open: in use, still loaded" {
	local fd
	exec {fd}<"$CONFIG"
	run --separate-stderr wpstat unload
	exec {fd}<&-
	assert_failure 1
	assert_one_error
	[[ $stderr == *"in use"* ]]
	module_loaded
}
