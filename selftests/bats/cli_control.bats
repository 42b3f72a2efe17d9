#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The wpstat command-line tool: reset, enable, disable and the filters.
#
# Runs inside the guest as root with the module loaded (see
# scripts/check/guest-check.sh); tests that unload the module or load it with
# other parameters put the default one back (teardown, cli.bash), so the
# file ends with the module loaded as it found it.

bats_require_minimum_version 1.5.0

load helpers
load cli

@test "reset clears every counter" {
	local f
	f=$(scratch_file ext4)
	write_file "$f"
	[ "$(counter "$f" mkwrite_first)" = 64 ]
	run --separate-stderr wpstat reset
	assert_success
	assert_output ""
	[ -z "$stderr" ]
	[ "$(counter "$f" mkwrite_first)" = 0 ]
	[ "$(counter "$f" mkclean_ptes)" = 0 ]
}

@test "disable stops counting, enable starts again" {
	local f g
	f=$(scratch_file ext4)
	g=$(scratch_file ext4)
	run --separate-stderr wpstat disable
	assert_success
	[ "$(summary enabled)" = 0 ]
	grep -qx 'enabled 0' "$CONFIG"
	write_file "$f"
	[ "$(counter "$f" mkwrite_first)" = 0 ]
	run --separate-stderr wpstat enable
	assert_success
	[ "$(summary enabled)" = 1 ]
	write_file "$g"
	[ "$(counter "$g" mkwrite_first)" = 64 ]
}

@test "filter dev: only that filesystem counts" {
	local e x dev
	e=$(scratch_file ext4)
	x=$(scratch_file xfs)
	dev=$(sb_dev "$WPSTAT_FS_DIR/xfs")
	run --separate-stderr wpstat filter dev "$dev"
	assert_success
	grep -qx "filter_dev $dev" "$CONFIG"
	write_file "$e"
	write_file "$x"
	[ "$(counter "$e" mkwrite_first)" = 0 ]
	[ "$(counter "$x" mkwrite_first)" -gt 0 ]
	run --separate-stderr wpstat status --json
	jq -e --arg d "$dev" '.filter.dev == $d' <<<"$output"
}

@test "filter path: the filesystem holding the file" {
	local f
	f=$(scratch_file btrfs)
	touch "$f"
	run --separate-stderr wpstat filter path "$f"
	assert_success
	assert_output --partial "dev $(sb_dev "$f")"
	grep -qx "filter_dev $(sb_dev "$f")" "$CONFIG"
}

@test "filter pid: only that process counts; filter none clears both" {
	local f g
	f=$(scratch_file ext4)
	g=$(scratch_file ext4)
	run --separate-stderr wpstat filter pid $$
	assert_success
	grep -qx "filter_pid $$" "$CONFIG"
	write_file "$f"		# another process
	[ "$(counter "$f" mkwrite_first)" = 0 ]
	# The shell that sets the filter becomes the workload: same TGID.
	bash -c 'wpstat filter pid $$ && exec wpload --file "$1" --size 256K --passes 1 --sync msync --quiet' _ "$g" >/dev/null
	[ "$(counter "$g" mkwrite_first)" = 64 ]
	# That process has exited: the filter matches nothing, and says so.
	grep -qx 'filter_pid_alive 0' "$CONFIG"
	run --separate-stderr wpstat status
	assert_line --regexp '^filters: .* \(exited: matches nothing\)$'
	run --separate-stderr wpstat status --json
	jq -e '.filter.pid_exited == true' <<<"$output"
	wpstat filter dev "$(sb_dev "$g")"
	run --separate-stderr wpstat filter none
	assert_success
	grep -qx 'filter_pid none' "$CONFIG"
	grep -qx 'filter_dev none' "$CONFIG"
}

@test "filter: bad input is rejected and changes nothing" {
	local before nopid
	wpstat filter pid $$
	before=$(cat "$CONFIG")
	nopid=$(( $(cat /proc/sys/kernel/pid_max) - 1 ))
	while [ -d "/proc/$nopid" ]; do nopid=$((nopid - 1)); done

	run --separate-stderr wpstat filter
	assert_failure 2
	assert_one_error
	run --separate-stderr wpstat filter inode 12
	assert_failure 2
	assert_one_error
	run --separate-stderr wpstat filter dev sda1
	assert_failure 2
	assert_one_error
	run --separate-stderr wpstat filter dev
	assert_failure 2
	assert_one_error
	run --separate-stderr wpstat filter pid 0
	assert_failure 2
	assert_one_error
	run --separate-stderr wpstat filter pid 12x
	assert_failure 2
	assert_one_error
	# Well-formed, but the module says no.
	run --separate-stderr wpstat filter dev 0:0
	assert_failure 1
	assert_one_error
	[[ $stderr == *"rejected device 0:0"* ]]
	run --separate-stderr wpstat filter dev 5000:1
	assert_failure 1
	assert_one_error
	run --separate-stderr wpstat filter pid "$nopid"
	assert_failure 1
	assert_one_error
	[[ $stderr == *"no process with pid $nopid"* ]]
	run --separate-stderr wpstat filter path /nonexistent/file
	assert_failure 1
	assert_one_error
	[ "$(cat "$CONFIG")" = "$before" ]
}
