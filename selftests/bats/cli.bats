#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The wpstat command-line tool: every subcommand, its output formats and
# its errors.  Runs inside the guest as root with the module loaded (see
# scripts/check/guest-check.sh); tests that unload the module or load it with
# other parameters put the default one back (teardown), so the file ends
# with the module loaded as it found it.

bats_require_minimum_version 1.5.0

load helpers

CONTROL=/sys/kernel/debug/wpstat/control
CONFIG=/sys/kernel/debug/wpstat/config
PY=${WPSTAT_TOP:-/work/main}/.venv/bin/python3

# ---- helpers -----------------------------------------------------------

module_param() {
	cat "/sys/module/wpstat/parameters/$1"
}

# Back to the module this file started with: loaded, default parameters,
# level counts.
restore_module() {
	if module_loaded && [ "$(module_param max_inodes)" = "$WPSTAT_DEFAULT_MAX_INODES" ] &&
	   [ -z "$(module_param skip_probes)" ]; then
		[ "$(module_param level)" = counts ] || echo "level counts" >"$CONTROL"
		return 0
	fi
	! module_loaded || rmmod wpstat
	insmod "$WPSTAT_MODULE"
}

# level_timing (helpers.bash): the columns only level timing produces
# (mkwrite_ns, mkclean_ptes) are what some tests format; teardown goes
# back to counts.

# Column $2 of the table row for file $1 ($output of `wpstat show`).
table_cell() {
	awk -v file="$1" -v name="$2" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) col = i; next }
		$NF == file { print $col; exit }' <<<"$output"
}

setup_file() {
	grep -q '^wpstat ' /proc/modules || insmod "$WPSTAT_MODULE"
	WPSTAT_DEFAULT_MAX_INODES=$(cat /sys/module/wpstat/parameters/max_inodes)
	export WPSTAT_DEFAULT_MAX_INODES
}

teardown_file() {
	restore_module
	wpstat_control filter none
	wpstat_control enable
}

setup() {
	require_module
	wpstat_control filter none
	wpstat_control enable
}

teardown() {
	restore_module
	rm -f "$WPSTAT_FS_DIR"/*/"$BATS_TEST_NAME".*
}

# ---- global ------------------------------------------------------------

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

# ---- load / unload -----------------------------------------------------

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

# ---- status ------------------------------------------------------------

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
	# Off at level counts: the points kmod/wpstat_probes.def gives no
	# mechanism at counts (its fifth field), in its order.
	off=$(awk -F'[(,)]' '/^WPSTAT_PROBE\(/ { gsub(/ /, "", $3); gsub(/ /, "", $6); if ($6 == "NONE") print $3 }' \
		"$WPSTAT_TOP/kmod/wpstat_probes.def" | jq -R . | jq -sc .)
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

# ---- show --------------------------------------------------------------

@test "show: table with human units, paths from --resolve" {
	local f ns
	level_timing
	f=$(scratch_file ext4)
	write_file "$f"
	run --separate-stderr wpstat show --all --resolve "$WPSTAT_FS_DIR/ext4"
	assert_success
	[[ ${lines[0]} == *mkwrite_first*mkwrite_wp*mkwrite_ns*mkclean_ptes*file ]]
	[ "$(table_cell "$f" mkwrite_first)" = 64 ]
	[ "$(table_cell "$f" mkwrite_wp)" = 64 ]
	[ "$(table_cell "$f" mkclean_ptes)" = 128 ]
	[ "$(table_cell "$f" dirtied)" = "$(counter "$f" dirtied)" ]
	ns=$(table_cell "$f" mkwrite_ns)
	[[ $ns =~ ^([0-9]+ns|[0-9]+\.[0-9](us)|[0-9]+\.[0-9][0-9](ms|s))$ ]] ||
		fail "mkwrite_ns cell '$ns' is not in human units"
}

@test "show at level counts: the timing columns read -, the rest count" {
	local f
	[ "$(wpstat level)" = counts ]
	f=$(scratch_file ext4)
	write_file "$f"
	run --separate-stderr wpstat show --all --resolve "$WPSTAT_FS_DIR/ext4"
	assert_success
	[ "$(table_cell "$f" mkwrite_first)" = 64 ]
	[ "$(table_cell "$f" mkwrite_wp)" = 64 ]
	[ "$(table_cell "$f" mkclean_calls)" = 128 ]
	[ "$(table_cell "$f" mkwrite_ns)" = - ]
	[ "$(table_cell "$f" mkclean_ptes)" = - ]
}

@test "show: unresolved files are named dev:ino" {
	local f
	f=$(scratch_file ext4)
	write_file "$f"
	run --separate-stderr wpstat show
	assert_success
	assert_line --regexp " $(sb_dev "$f"):$(stat -c %i "$f")\$"
}

@test "show --sort and --top" {
	local a b
	wpstat reset
	a=$(scratch_file ext4)
	b=$(scratch_file ext4)
	write_file "$a" 3	# mkwrite_wp 128
	write_file "$b" 2	# mkwrite_wp 64
	run --separate-stderr wpstat show --top 1 --resolve "$WPSTAT_FS_DIR/ext4"
	assert_success
	[ "${#lines[@]}" -eq 2 ]
	[[ ${lines[1]} == *" $a" ]]
	run --separate-stderr wpstat show --sort mkwrite_wp --json --resolve "$WPSTAT_FS_DIR/ext4"
	assert_success
	jq -e --arg a "$a" --arg b "$b" '
		[.inodes[].counters.mkwrite_wp] as $v | $v == ($v | sort | reverse) and
		.inodes[0].path == $a and .inodes[1].path == $b and
		.inodes[0].counters.mkwrite_wp == 128' <<<"$output"
	run --separate-stderr wpstat show --sort ino --json
	assert_success
	jq -e '[.inodes[].ino] as $v | $v == ($v | sort)' <<<"$output"
	run --separate-stderr wpstat show --sort mkwrite_first --top 2 --json
	assert_success
	jq -e '(.inodes | length) == 2 and .inodes[0].counters.mkwrite_first >= .inodes[1].counters.mkwrite_first' <<<"$output"
}

@test "show: bad field, bad number, bad format, bad directory" {
	run --separate-stderr wpstat show --sort nosuch
	assert_failure 2
	assert_one_error
	[[ $stderr == *"unknown field 'nosuch'"*mkwrite_first*mkwrite_wp*bdp_pause_ns* ]]
	run --separate-stderr wpstat show --top 0
	assert_failure 2
	assert_one_error
	run --separate-stderr wpstat show --top ten
	assert_failure 2
	assert_one_error
	run --separate-stderr wpstat show --format xml
	assert_failure 2
	assert_one_error
	run --separate-stderr wpstat show --json --format prometheus
	assert_failure 2
	assert_one_error
	run --separate-stderr wpstat show --resolve /nonexistent
	assert_failure 1
	assert_one_error
}

@test "show --json: valid, and equal to /proc/wpstat/inodes for the file" {
	local f names name want
	f=$(scratch_file ext4)
	write_file "$f"
	run --separate-stderr wpstat show --json --resolve "$WPSTAT_FS_DIR/ext4"
	assert_success
	jq -e --arg k "$(uname -r)" '.kernel == $k and (.inodes | type) == "array"' <<<"$output"
	jq -e --arg f "$f" --arg dev "$(sb_dev "$f")" --argjson ino "$(stat -c %i "$f")" '
		[.inodes[] | select(.path == $f)] | length == 1 and
		.[0].dev == $dev and .[0].ino == $ino and (.[0].gen | type) == "number" and
		.[0].subvol == 0' <<<"$output"
	names=$(inodes_counter_names)
	for name in $names; do
		want=$(counter "$f" "$name")
		[ "$want" = - ] && want=null
		assert_equal "$(jq -r --arg f "$f" --arg n "$name" \
			'.inodes[] | select(.path == $f) | .counters[$n]' <<<"$output")" "$want"
	done
	[ "$(jq -r --arg f "$f" '.inodes[] | select(.path == $f) | .counters.mkwrite_wp' <<<"$output")" = 64 ]
}

# The header of table $output, its fields separated by one space.
table_header() {
	awk 'NR == 1 { $1 = $1; print; exit }' <<<"$output"
}

@test "show: a person's columns by default, within 100 columns; -o picks; --all has every counter" {
	local f line file
	f=$(scratch_file ext4)
	write_file "$f"
	run --separate-stderr wpstat show --resolve "$WPSTAT_FS_DIR/ext4"
	assert_success
	[ "$(table_header)" = "mkwrite_first mkwrite_wp mkclean_calls cleaned_by stall worst file" ] ||
		fail "header: ${lines[0]}"
	# write_file: 2 passes of 64 pages, msync after each.
	[ "$(table_cell "$f" mkwrite_first)" = 64 ]
	[ "$(table_cell "$f" mkwrite_wp)" = 64 ]
	[ "$(table_cell "$f" mkclean_calls)" = 128 ]
	[ "$(table_cell "$f" cleaned_by)" = msync ]
	# The columns before the file leave 30 of 100 for its path.
	for line in "${lines[@]}"; do
		file=${line##* }
		[ $((${#line} - ${#file})) -le 70 ] || fail "too wide: $line"
	done
	run --separate-stderr wpstat show -o mkwrite_wp,dirtied,stall --resolve "$WPSTAT_FS_DIR/ext4"
	assert_success
	[ "$(table_header)" = "mkwrite_wp dirtied stall file" ]
	[ "$(table_cell "$f" dirtied)" = "$(counter "$f" dirtied)" ]
	run --separate-stderr wpstat show --all --top 1
	assert_success
	[ "$(table_header)" = "$(inodes_counter_names | paste -s -d ' ') file" ]
}

@test "show -o: an unknown column, no column, -o with --all or JSON: usage errors" {
	run --separate-stderr wpstat show -o mkwrite_wp,nosuch
	assert_failure 2
	assert_one_error
	[[ $stderr == *"unknown column 'nosuch'"* ]]
	run --separate-stderr wpstat show -o ,
	assert_failure 2
	assert_one_error
	run --separate-stderr wpstat show -o mkwrite_wp --all
	assert_failure 2
	assert_one_error
	run --separate-stderr wpstat show --json -o mkwrite_wp
	assert_failure 2
	assert_one_error
	run --separate-stderr wpstat watch --count 1 --interval 0.1 -o nosuch
	assert_failure 2
	assert_one_error
}

@test "counts in tables read as 12.3k; exact in JSON" {
	local f
	f=$(scratch_file ext4)
	# 10240 pages: 10240 first-write faults, above the exact range.
	wpload --file "$f" --size 40M --passes 1 --quiet >/dev/null
	run --separate-stderr wpstat show -o mkwrite_first --resolve "$WPSTAT_FS_DIR/ext4"
	assert_success
	[ "$(table_cell "$f" mkwrite_first)" = 10.2k ]
	run --separate-stderr wpstat show --json --resolve "$WPSTAT_FS_DIR/ext4"
	assert_success
	[ "$(row_of "$output" "$f" | jq .mkwrite_first)" = 10240 ]
	rm -f "$f"
}

@test "wpload: one short line per pass; --verbose has every counter" {
	local f n
	f=$(scratch_file ext4)
	run --separate-stderr wpload --file "$f" --size 256K --passes 2 --sync msync
	assert_success
	assert_line --regexp '^pass 1: .* \| first 64 wp 0 cleaned 64$'
	assert_line --regexp '^pass 2: .* \| first 0 wp 64 cleaned 64$'
	assert_line --regexp '^total: 2 passes .* \| first 64 wp 64 cleaned 128$'
	run --separate-stderr wpload --file "$f" --size 256K --passes 1 --verbose
	assert_success
	n=$(inodes_counter_names | wc -l)
	[ "$(grep '^pass 1:' <<<"$output" | grep -o '[a-z_]*=' | wc -l)" -eq "$n" ]
}

# cpu_ns is the process's own CPU time over a pass (make bench times
# with it): positive, no more than the pass's elapsed time with one
# writer thread (the main thread waits at the barrier meanwhile; 1 ms
# for the two clocks' different sources), and the totals' is the sum.
@test "wpload --json: cpu_ns, the process's CPU time per pass, and its total" {
	local f
	f=$(scratch_file ext4)
	run --separate-stderr wpload --file "$f" --size 1M --passes 3 --mode write --json
	assert_success
	jq -e '(.passes | length) == 3 and
		all(.passes[]; .cpu_ns > 0 and .cpu_ns <= .wall_ns + 1000000) and
		.totals.cpu_ns == ([.passes[].cpu_ns] | add)' <<<"$output"
}

@test "show: unavailable counters are '-' in tables, null in JSON, absent in Prometheus" {
	local f
	rmmod wpstat
	wpstat load --module "$WPSTAT_MODULE" skip_probes=bdp
	f=$(scratch_file ext4)
	write_file "$f"
	run --separate-stderr wpstat show --all --resolve "$WPSTAT_FS_DIR/ext4"
	assert_success
	[ "$(table_cell "$f" bdp_throttled)" = - ]
	[ "$(table_cell "$f" mkwrite_first)" = 64 ]
	run --separate-stderr wpstat show --json --resolve "$WPSTAT_FS_DIR/ext4"
	assert_success
	jq -e --arg f "$f" '.inodes[] | select(.path == $f) |
		.counters.bdp_throttled == null and .counters.mkwrite_first == 64' <<<"$output"
	run --separate-stderr wpstat show --format prometheus
	assert_success
	refute_output --partial wpstat_bdp_throttled
	assert_output --partial wpstat_mkwrite_first_total
}

@test "show --format prometheus: parsed by prometheus_client, escaped labels" {
	local f
	"$PY" -c 'import prometheus_client' ||
		fail "prometheus_client missing: $PY -m pip install prometheus_client"
	level_timing
	f=$WPSTAT_FS_DIR/ext4/$BATS_TEST_NAME.$$.'we"ird\name'$'\n''line2'
	write_file "$f"
	wpstat show --format prometheus --resolve "$WPSTAT_FS_DIR/ext4" >"$BATS_TEST_TMPDIR/metrics.prom"
	"$PY" - "$BATS_TEST_TMPDIR/metrics.prom" "$f" "$(sb_dev "$f")" \
		"$(stat -c %i "$f")" "$(counter "$f" mkwrite_ns)" <<'EOF'
import sys
from prometheus_client.parser import text_string_to_metric_families

text = open(sys.argv[1], encoding="utf-8").read()
path, dev, ino, mkwrite_ns = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
families = list(text_string_to_metric_families(text))
assert families, "no metric families"
samples = {}
for fam in families:
    assert fam.name.startswith("wpstat_"), fam.name
    assert fam.documentation, "no HELP for " + fam.name
    assert fam.type in ("counter", "gauge"), (fam.name, fam.type)
    for s in fam.samples:
        if s.labels.get("path") == path:
            assert s.labels["dev"] == dev and s.labels["ino"] == ino, s.labels
            samples[s.name] = s.value
assert samples.get("wpstat_mkwrite_first_total") == 64, samples
assert samples.get("wpstat_mkwrite_wp_total") == 64, samples
assert samples.get("wpstat_mkclean_ptes_total") == 128, samples
assert abs(samples["wpstat_mkwrite_seconds_total"] - mkwrite_ns / 1e9) < 1e-9, samples
assert not any(n.endswith("_ns_total") for n in samples), samples
# The module's own gauges: what it holds, and rows taken over.
module = {f.name: f.samples[0].value for f in families if not f.samples[0].labels}
assert module.get("wpstat_module_bytes", 0) > 0, module
assert module.get("wpstat_recycled_inodes", -1) >= 0, module
EOF
	grep -q '^# TYPE wpstat_mkwrite_seconds_total counter$' "$BATS_TEST_TMPDIR/metrics.prom"
}

# ---- watch -------------------------------------------------------------

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

# ---- run ---------------------------------------------------------------

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

# ---- control -----------------------------------------------------------

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

# ---- permissions and a missing module ----------------------------------

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
