#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The wpstat command-line tool: show (tables, columns, JSON, Prometheus),
# and wpload's own output.
#
# Runs inside the guest as root with the module loaded (see
# scripts/check/guest-check.sh); tests that unload the module or load it with
# other parameters put the default one back (teardown, cli.bash), so the
# file ends with the module loaded as it found it.

bats_require_minimum_version 1.5.0

load helpers
load cli

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
