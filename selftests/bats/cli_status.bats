#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The wpstat command-line tool: status, in text and JSON.
#
# Runs inside the guest as root with the module loaded (see
# scripts/check/guest-check.sh); tests that unload the module or load it with
# other parameters put the default one back (teardown, cli.bash), so the
# file ends with the module loaded as it found it.

bats_require_minimum_version 1.5.0

load helpers
load cli

@test "status: text" {
	run --separate-stderr wpstat status
	assert_success
	assert_line --regexp '^module: +loaded'
	assert_line --regexp "^kernel: +$(uname -r | sed 's/[.+]/\\&/g')\$"
	assert_line --regexp "^parameters: .*max_inodes=$WPSTAT_DEFAULT_MAX_INODES"
	assert_line --regexp '^counting: +enabled'
	assert_line --regexp '^filters: +dev none, pid none'
	assert_line --regexp '^probes: +[0-9]+ of [0-9]+ attached: mkwrite'
	assert_line --regexp '^inodes: +[0-9]+ tracked of [0-9]+'
	# /sys/devices/system/cpu/possible: "0-N" (or "0").
	assert_line --regexp "^memory: +[0-9.]+ MiB, of which [0-9.]+ KiB for each of $(awk -F- '{ print $NF + 1 }' /sys/devices/system/cpu/possible) possible CPUs\$"
}

@test "status --json: valid, and agrees with sysfs and debugfs" {
	local nprobes timing off
	wpstat_control disable
	wpstat_control filter pid $$
	run --separate-stderr wpstat status --json
	assert_success
	nprobes=$(grep -vc -e '^probe ' -e '^#' /sys/kernel/debug/wpstat/probes)
	# At level counts every timing counter reads "-": the module's own
	# list (/proc/wpstat/counters: name, level, ...) says which they are.
	timing=$(awk '$2 == "timing" { print $1 }' /proc/wpstat/counters | jq -R . | jq -sc .)
	[ "$timing" != "[]" ]
	# Off at level counts: the points uapi/wpstat_probes.def gives no
	# mechanism at counts, in its order (read by the lists' one reader).
	off=$(wpstat_lists --fields probes WPSTAT_PROBE name --where counts=NONE | jq -R . | jq -sc .)
	[ "$off" != "[]" ]
	jq -e --arg k "$(uname -r)" --arg mi "$WPSTAT_DEFAULT_MAX_INODES" \
		--argjson pid $$ --argjson n "$nprobes" --argjson timing "$timing" \
		--argjson off "$off" '
		.loaded == true and .kernel == $k and .enabled == false and
		.parameters.max_inodes == $mi and .max_inodes == ($mi | tonumber) and
		(.tracked_inodes | type) == "number" and .debugfs == "ok" and
		.filter == {"dev": null, "pid": $pid, "pid_exited": false} and
		(.probes | length) == $n and
		(.probes_attached | length) + (.probes_unavailable | length) +
			(.probes_off | length) == $n and
		(.probes_attached | index("mkwrite")) != null and
		.probes_off == $off and
		.level == "counts" and
		.counters_unavailable == $timing and
		.counters_timing_only == $timing and
		.module_bytes > .module_cpu_bytes * .possible_cpus and
		.module_cpu_bytes > 0 and .possible_cpus >= 1' <<<"$output"
}

@test "status with probes skipped: unavailable probes and counters" {
	local timing unavailable
	rmmod wpstat
	wpstat load --module "$WPSTAT_MODULE" skip_probes=bdp,tp_bdp
	run --separate-stderr wpstat status --json
	assert_success
	# Unavailable: the timing counters, and the four that only the
	# skipped balance_dirty_pages probes feed, in the module's order.
	timing=$(awk '$2 == "timing" { print $1 }' /proc/wpstat/counters | jq -R . | jq -sc .)
	unavailable=$(awk '$2 == "timing" || $1 ~ /^bdp_(throttled|pauses|pause_ns|pause_max_ns)$/ { print $1 }' \
		/proc/wpstat/counters | jq -R . | jq -sc .)
	[ "$(jq length <<<"$unavailable")" = $(($(jq length <<<"$timing") + 4)) ]
	jq -e --argjson timing "$timing" --argjson unavailable "$unavailable" '
		.probes_unavailable == ["bdp", "tp_bdp"] and
		([.probes[] | select(.status == "skipped") | .name] == ["bdp", "tp_bdp"]) and
		.counters_unavailable == $unavailable and
		.counters_timing_only == $timing' <<<"$output"
	run --separate-stderr wpstat status
	assert_success
	assert_line --regexp '^unavailable: bdp \(balance_dirty_pages, skipped\) tp_bdp'
	assert_line --partial "bdp_throttled, bdp_pauses, bdp_pause_ns"
}

@test "status when the module is not loaded" {
	rmmod wpstat
	run --separate-stderr wpstat status
	assert_success
	assert_line --regexp '^module: +not loaded'
	run --separate-stderr wpstat status --json
	assert_success
	jq -e '.loaded == false' <<<"$output"
}
