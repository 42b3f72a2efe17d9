#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# wpstat export, scraped for real: the textfile it writes,
# Debian's prometheus-node-exporter serving it over loopback, and a
# Prometheus server scraping that node_exporter and answering PromQL.
# Runs inside the guest as root with the module loaded, like every suite.
#
# The workload is wpload on the ext4 scratch filesystem, whose counts the
# prediction suites establish: a 256 KiB file is 64 pages; one pass of
# stores then msync takes 64 first-write faults (mkwrite_first) and cleans
# 64 folios, all for msync (mkclean_msync); a later pass that first loads
# a byte of every page (--mode read-then-write) finds 64 present read-only
# PTEs: 64 write-protect faults (mkwrite_wp).  guest-check.sh keeps the
# flusher asleep, so the test's own syncs are the only writeback.

bats_require_minimum_version 1.5.0

load helpers

NODE_PORT=19100
PROM_PORT=19090
DASHBOARD=$WPSTAT_TOP/docs/grafana/wpstat.json

# ---- helpers -----------------------------------------------------------

# A 64-page file written once and msync'ed: 64 first-write faults, its
# PTEs write-protected and its folios clean.
write_once() {
	wpload --file "$1" --size 256K --passes 1 --sync msync --quiet >/dev/null
}

# One pass that loads every page first: 64 write-protect faults.
rewrite() {
	wpload --file "$1" --size 256K --mode read-then-write --passes 1 \
		--sync msync --quiet >/dev/null
}

# Wait up to $1 seconds (of wall time: a probe may itself take a second
# in the guest) for "$@" (after $1) to succeed.
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.2
	done
}

# What Prometheus and the exporter say when a scrape check fails: the
# target's health and last error, the series' raw samples, and the
# export's lines for file $1.
prom_state() {
	echo "targets: $(curl -sf "http://127.0.0.1:$PROM_PORT/api/v1/targets" |
		jq -c '[.data.activeTargets[] | {health, lastError, lastScrape, lastScrapeDuration}]')"
	echo "samples: $(promql "${2}[5m]" | jq -c '.data.result[0].values // []')"
	echo "export lines: $(grep -h -F "path=\"$1\"" "$TEXTFILE_DIR"/*.prom 2>/dev/null | head -3)"
	echo "export log: $(tail -3 "$BATS_FILE_TMPDIR/export.log")"
}

# Whether PromQL $1 has at least $2 samples in the last 5 minutes.
has_samples() {
	local n
	n=$(promql_value "count_over_time(${1}[5m])")
	[ "${n:-0}" -ge "$2" ]
}

# Whether PromQL $1's one sample is $2.
value_is() {
	[ "$(promql_value "$1")" = "$2" ]
}

# PromQL instant query $1 (at time $2, optional) over the HTTP API: the
# JSON answer on stdout.
promql() {
	curl -sfG "http://127.0.0.1:$PROM_PORT/api/v1/query" \
		--data-urlencode "query=$1" ${2:+--data-urlencode "time=$2"}
}

# The value of the one sample PromQL $1 returns, or nothing.
promql_value() {
	promql "$1" | jq -r '.data.result[0].value[1] // empty'
}

# The checks every written page must pass, in Python with the same parser
# the CLI tests use: every family documented and typed, no _ns left, and
# for each summed counter the per-file series of a filesystem (its top
# files and "other") add up to its wpstat_fs_ total.
check_page() {
	"$PY" - "$1" <<'EOF'
import sys
from collections import defaultdict
from prometheus_client.parser import text_string_to_metric_families

fams = {f.name: f for f in text_string_to_metric_families(open(sys.argv[1]).read())}
assert fams, "no metric families"
for f in fams.values():
    assert f.name.startswith("wpstat_"), f.name
    assert f.documentation, "no HELP for " + f.name
    assert f.type in ("counter", "gauge"), (f.name, f.type)
    assert "_ns" not in f.name, f.name
checked = 0
for name, f in fams.items():
    if name.startswith("wpstat_fs_") or f.type != "counter" or not f.samples:
        continue
    if not any("ino" in s.labels for s in f.samples):
        continue        # a module gauge or counter, not per file
    fs = fams["wpstat_fs_" + name[len("wpstat_"):]]
    per_dev = defaultdict(float)
    for s in f.samples:
        per_dev[s.labels["dev"]] += s.value
    totals = {s.labels["dev"]: s.value for s in fs.samples}
    assert set(per_dev) == set(totals), (name, per_dev, totals)
    for dev, v in per_dev.items():
        assert abs(v - totals[dev]) < 1e-6, (name, dev, v, totals[dev])
    checked += 1
assert checked >= 10, "only %d families checked" % checked
EOF
}

# The value of metric $2 with labels path=$3 in page $1 (Python parser).
page_value() {
	"$PY" - "$@" <<'EOF'
import sys
from prometheus_client.parser import text_string_to_metric_families

page, name, path = sys.argv[1:4]
for f in text_string_to_metric_families(open(page).read()):
    for s in f.samples:
        if s.name == name and s.labels.get("path") == path:
            print(int(s.value) if s.value == int(s.value) else s.value)
EOF
}

setup_file() {
	local bin
	for bin in prometheus-node-exporter prometheus promtool curl jq ip; do
		command -v "$bin" >/dev/null ||
			fail "set-up: $bin missing (scripts/setup.sh installs it)"
	done
	grep -q '^wpstat ' /proc/modules || insmod "$WPSTAT_MODULE"
	# vng's guest may leave loopback down; node_exporter and Prometheus
	# talk over it.
	ip link set lo up
	export TEXTFILE_DIR=$BATS_FILE_TMPDIR/textfile
	mkdir -p "$TEXTFILE_DIR"
}

teardown_file() {
	local pidfile
	for pidfile in "$BATS_FILE_TMPDIR"/*.pid; do
		[ -e "$pidfile" ] || continue
		kill "$(cat "$pidfile")" 2>/dev/null || true
	done
	grep -q '^wpstat ' /proc/modules || insmod "$WPSTAT_MODULE"
}

# ---- the file ----------------------------------------------------------

@test "export: wpstat.prom passes promtool and carries the workload's exact counts" {
	require_module
	local f d
	f=$(scratch_file ext4)
	d=$BATS_TEST_TMPDIR/tf
	mkdir "$d"
	write_once "$f"
	rewrite "$f"
	run --separate-stderr wpstat export --dir "$d" --resolve "$WPSTAT_FS_DIR/ext4"
	[ "$status" -eq 0 ] || fail "export failed ($status): $stderr"
	[ -z "$output" ] || fail "export printed: $output"
	# Whole or nothing: the file and no temporary left beside it, readable
	# by node_exporter's user.
	[ "$(ls -A "$d")" = wpstat.prom ] || fail "directory holds: $(ls -A "$d")"
	[ "$(stat -c %a "$d/wpstat.prom")" = 644 ] || fail "mode $(stat -c %a "$d/wpstat.prom")"
	run promtool check metrics <"$d/wpstat.prom"
	[ "$status" -eq 0 ] || fail "promtool: $output"
	check_page "$d/wpstat.prom"
	[ "$(page_value "$d/wpstat.prom" wpstat_mkwrite_first_total "$f")" = 64 ]
	[ "$(page_value "$d/wpstat.prom" wpstat_mkwrite_wp_total "$f")" = 64 ]
	[ "$(page_value "$d/wpstat.prom" wpstat_mkclean_msync_total "$f")" = 128 ]
	[ "$(page_value "$d/wpstat.prom" wpstat_mkclean_calls_total "$f")" = 128 ]
	grep -qx 'wpstat_module_loaded 1' "$d/wpstat.prom"
	# dev and ino always, as the module names the file.
	grep -q "^wpstat_mkwrite_wp_total{dev=\"$(sb_dev "$f")\",ino=\"$(stat -c %i "$f")\",gen=\"[0-9]*\",path=\"$f\"} 64\$" \
		"$d/wpstat.prom" || fail "no series with dev, ino, gen and path for $f"
}

@test "export --top N: N files by stall time then write-protect faults, the rest in other" {
	require_module
	local d i f files=() pages
	d=$BATS_TEST_TMPDIR/tf
	mkdir "$d" "$BATS_TEST_TMPDIR/files"
	wpstat reset
	# 12 files of 1..12 pages, each written then rewritten: file i takes
	# i write-protect faults and no stall (brd has no stable pages), so
	# the top 5 are the files of 12, 11, 10, 9 and 8 pages.
	for i in $(seq 1 12); do
		f=$WPSTAT_FS_DIR/ext4/top-$i.$$
		files+=("$f")
		wpload --file "$f" --size $((i * 4))K --passes 1 --sync msync --quiet >/dev/null
		wpload --file "$f" --size $((i * 4))K --mode read-then-write --passes 1 \
			--sync msync --quiet >/dev/null
	done
	run --separate-stderr wpstat export --dir "$d" --top 5 --resolve "$WPSTAT_FS_DIR/ext4"
	[ "$status" -eq 0 ] || fail "export failed: $stderr"
	check_page "$d/wpstat.prom"
	for i in $(seq 1 12); do
		pages=$(page_value "$d/wpstat.prom" wpstat_mkwrite_wp_total "${files[i - 1]}")
		if [ "$i" -ge 8 ]; then
			[ "$pages" = "$i" ] || fail "file of $i pages: '$pages' write-protect faults exported"
		else
			[ -z "$pages" ] || fail "file of $i pages has its own series (not in the top 5)"
		fi
	done
	# Series per family: 5 files, one "other" per filesystem with rows.
	local series others
	series=$(grep -c '^wpstat_mkwrite_wp_total{' "$d/wpstat.prom")
	others=$(grep -c '^wpstat_mkwrite_wp_total{.*ino="other"' "$d/wpstat.prom")
	[ "$((series - others))" -eq 5 ] || fail "$((series - others)) per-file series, not 5"
	# The 7 files below the top: 1 + ... + 7 = 28 faults in ext4's other.
	grep -qx "wpstat_mkwrite_wp_total{dev=\"$(sb_dev "${files[0]}")\",ino=\"other\"} 28" "$d/wpstat.prom" ||
		fail "ext4's other: $(grep 'wpstat_mkwrite_wp_total{.*other' "$d/wpstat.prom")"
	rm -f "${files[@]}"
}

@test "export: bad input is one line on stderr, a usage or run-time status, and no file" {
	local d=$BATS_TEST_TMPDIR/tf
	mkdir "$d"
	run --separate-stderr wpstat export --dir "$d/missing"
	[ "$status" -eq 1 ] && [[ $stderr == "wpstat: export: $d/missing: No such file or directory"* ]] ||
		fail "missing dir: $status $stderr"
	touch "$d/plain"
	run --separate-stderr wpstat export --dir "$d/plain"
	[ "$status" -eq 1 ] && [ "$stderr" = "wpstat: export: $d/plain: not a directory" ] ||
		fail "not a dir: $status $stderr"
	run --separate-stderr wpstat export --dir "$d" --count 3
	[ "$status" -eq 2 ] && [ "$stderr" = "wpstat: export: --count needs --interval" ] ||
		fail "count: $status $stderr"
	run --separate-stderr wpstat export --dir "$d" --top 10001
	[ "$status" -eq 2 ] && [[ $stderr == "wpstat: --top: '10001' is too large"* ]] ||
		fail "top: $status $stderr"
	run --separate-stderr wpstat export --dir "$d" --interval 0
	[ "$status" -eq 2 ] || fail "interval 0: $status $stderr"
	run --separate-stderr wpstat export --dir "$d" extra
	[ "$status" -eq 2 ] && [ "$stderr" = "wpstat: export: unexpected argument 'extra'" ] ||
		fail "operand: $status $stderr"
	[ "$(ls -A "$d")" = plain ] || fail "something was written: $(ls -A "$d")"
}

@test "export without the module: the file says wpstat_module_loaded 0, exit status 1" {
	local d=$BATS_TEST_TMPDIR/tf
	mkdir "$d"
	rmmod wpstat
	run --separate-stderr wpstat export --dir "$d"
	insmod "$WPSTAT_MODULE"
	[ "$status" -eq 1 ] || fail "status $status"
	[ "$stderr" = "wpstat: module not loaded: $d/wpstat.prom says wpstat_module_loaded 0" ] ||
		fail "stderr: $stderr"
	run promtool check metrics <"$d/wpstat.prom"
	[ "$status" -eq 0 ] || fail "promtool: $output"
	[ "$(grep -v '^#' "$d/wpstat.prom")" = "wpstat_module_loaded 0" ] ||
		fail "page: $(cat "$d/wpstat.prom")"
}

@test "export --interval rewrites the file with new counts; SIGTERM ends it with status 0" {
	require_module
	local d=$BATS_TEST_TMPDIR/tf f pid rc=0
	mkdir "$d"
	f=$(scratch_file ext4)
	write_once "$f"
	wpstat export --dir "$d" --interval 0.2 --top 10000 --resolve "$WPSTAT_FS_DIR/ext4" \
		>"$BATS_TEST_TMPDIR/export.out" 2>&1 &
	pid=$!
	wait_for 30 test -s "$d/wpstat.prom" || fail "no file after 30 s"
	[ "$(page_value "$d/wpstat.prom" wpstat_mkwrite_wp_total "$f")" = 0 ] ||
		fail "before: $(grep "$f" "$d/wpstat.prom")"
	rewrite "$f"
	# A later write of the file sees the 64 write-protect faults.
	wait_for 30 eval '[ "$(page_value "$d/wpstat.prom" wpstat_mkwrite_wp_total "$f")" = 64 ]' ||
		fail "after: $(grep "$f" "$d/wpstat.prom")"
	kill -TERM "$pid"
	wait "$pid" || rc=$?
	[ "$rc" -eq 0 ] || fail "export exited $rc: $(cat "$BATS_TEST_TMPDIR/export.out")"
	[ ! -s "$BATS_TEST_TMPDIR/export.out" ] || fail "export printed: $(cat "$BATS_TEST_TMPDIR/export.out")"
	[ "$(ls -A "$d")" = wpstat.prom ] || fail "left behind: $(ls -A "$d")"
}

# ---- node_exporter and Prometheus --------------------------------------

@test "node_exporter's textfile collector serves the export: curl and promtool" {
	require_module
	local f metrics
	f=$WPSTAT_FS_DIR/ext4/scraped.$$
	write_once "$f"
	rewrite "$f"
	wpstat export --dir "$TEXTFILE_DIR" --resolve "$WPSTAT_FS_DIR/ext4"
	prometheus-node-exporter --web.listen-address="127.0.0.1:$NODE_PORT" \
		--collector.disable-defaults --collector.textfile \
		--collector.textfile.directory="$TEXTFILE_DIR" \
		>"$BATS_FILE_TMPDIR/node.log" 2>&1 &
	echo $! >"$BATS_FILE_TMPDIR/node.pid"
	wait_for 30 curl -sf -o /dev/null "http://127.0.0.1:$NODE_PORT/metrics" ||
		fail "node_exporter did not answer: $(cat "$BATS_FILE_TMPDIR/node.log")"
	metrics=$(curl -sf "http://127.0.0.1:$NODE_PORT/metrics")
	run promtool check metrics <<<"$metrics"
	[ "$status" -eq 0 ] || fail "promtool on node_exporter's page: $output"
	grep -qx 'node_textfile_scrape_error 0' <<<"$metrics" ||
		fail "textfile collector error: $(grep node_textfile <<<"$metrics")"
	grep -q "^wpstat_mkwrite_wp_total{dev=\"[0-9:]*\",gen=\"[0-9]*\",ino=\"$(stat -c %i "$f")\",path=\"$f\"} 64\$" <<<"$metrics" ||
		fail "no wpstat_mkwrite_wp_total 64 for $f: $(grep "$f" <<<"$metrics" | head -5)"
	echo "$f" >"$BATS_FILE_TMPDIR/scraped-file"
}

@test "Prometheus scrapes node_exporter; rate() of the file's write-protect faults is 64 / window" {
	require_module
	[ -s "$BATS_FILE_TMPDIR/node.pid" ] || fail "node_exporter was not started by the test before"
	local g sel t_last window=120 samples got iv
	g=$WPSTAT_FS_DIR/ext4/promql.$$
	# Only this test's rows in the textfile: the guest's earlier suites
	# left thousands, each a dozen series node_exporter parses per scrape.
	wpstat reset
	write_once "$g"	# mkwrite_wp 0, pages clean and write-protected
	# Every file its own series (--top at its maximum): at 0 write-protect
	# faults and no stall, g would rank below the earlier tests' files.
	wpstat export --dir "$TEXTFILE_DIR" --interval 1 --top 10000 \
		--resolve "$WPSTAT_FS_DIR/ext4" \
		>"$BATS_FILE_TMPDIR/export.log" 2>&1 &
	echo $! >"$BATS_FILE_TMPDIR/export.pid"
	# A scrape may take 10 s (its timeout can be no longer than its
	# interval): node_exporter's scrape took 3.04 s under a loaded host
	# (three guests on two cores) and several times that on a KASAN kernel
	# (make check-debug).  Still 12 scrapes in the window.
	iv=10
	cat >"$BATS_FILE_TMPDIR/prometheus.yml" <<-EOF
	global:
	  scrape_interval: ${iv}s
	  scrape_timeout: ${iv}s
	  evaluation_interval: ${iv}s
	scrape_configs:
	  - job_name: node
	    static_configs:
	      - targets: ['127.0.0.1:$NODE_PORT']
	EOF
	prometheus --config.file="$BATS_FILE_TMPDIR/prometheus.yml" \
		--storage.tsdb.path="$BATS_FILE_TMPDIR/tsdb" \
		--web.listen-address="127.0.0.1:$PROM_PORT" \
		>"$BATS_FILE_TMPDIR/prometheus.log" 2>&1 &
	echo $! >"$BATS_FILE_TMPDIR/prometheus.pid"
	sel="wpstat_mkwrite_wp_total{path=\"$g\"}"
	# Three scrapes of the file at 0 write-protect faults, then the pass
	# that takes 64, then a scrape that shows them.
	wait_for 120 has_samples "$sel" 3 ||
		fail "Prometheus has no 3 samples of $sel (up $(promql_value up), last scrape $(promql_value scrape_duration_seconds) s): $(prom_state "$g" "$sel") $(tail -5 "$BATS_FILE_TMPDIR/prometheus.log")"
	[ "$(promql_value "$sel")" = 0 ] ||
		fail "before the pass: '$(promql_value "$sel")' (up $(promql_value up), last scrape $(promql_value scrape_duration_seconds) s)"
	rewrite "$g"
	wait_for 60 value_is "$sel" 64 ||
		fail "Prometheus never saw 64: $(promql_value "$sel")"
	# Evaluate at the newest sample's own time.  The window then ends on a
	# sample and starts before the series' first one, which is 0, so
	# Prometheus extrapolates neither way (a counter is never extrapolated
	# below zero) and rate() is exactly 64 / window.
	samples=$(promql "${sel}[${window}s]" | jq -c '.data.result[0].values')
	t_last=$(jq -r '.[-1][0]' <<<"$samples")
	[ "$(jq -r '.[0][1]' <<<"$samples")" = 0 ] || fail "first sample: $samples"
	[ "$(jq -r '.[-1][1]' <<<"$samples")" = 64 ] || fail "last sample: $samples"
	got=$(promql "rate(${sel}[${window}s])" "$t_last" | jq -r '.data.result[0].value[1]')
	"$PY" -c "import sys; got, want = float(sys.argv[1]), 64 / $window
assert abs(got - want) < 1e-9, (got, want)" "$got" ||
		fail "rate(${sel}[${window}s]) at $t_last = $got, want 64/$window"
	got=$(promql "increase(${sel}[${window}s])" "$t_last" | jq -r '.data.result[0].value[1]')
	[ "$got" = 64 ] || fail "increase() = $got, want 64"
	# The filesystem total moved by the same 64 in the same window.
	got=$(promql "increase(wpstat_fs_mkwrite_wp_total{dev=\"$(sb_dev "$g")\"}[${window}s])" "$t_last" |
		jq -r '.data.result[0].value[1]')
	"$PY" -c "import sys; assert float(sys.argv[1]) >= 64, sys.argv[1]" "$got" ||
		fail "filesystem increase $got < 64"
}

@test "the Grafana dashboard uses only metric names this Prometheus has" {
	[ -s "$BATS_FILE_TMPDIR/prometheus.pid" ] || fail "Prometheus was not started by the test before"
	local have used missing
	have=$(curl -sf "http://127.0.0.1:$PROM_PORT/api/v1/label/__name__/values" | jq -r '.data[]')
	used=$(jq -r '.panels[].targets[].expr, .templating.list[].query | strings' "$DASHBOARD" |
		grep -o 'wpstat_[a-z_]*' | sort -u)
	[ "$(wc -l <<<"$used")" -ge 10 ] || fail "dashboard uses only: $used"
	missing=$(comm -23 <(echo "$used") <(echo "$have" | sort -u))
	[ -z "$missing" ] || fail "dashboard metrics Prometheus never saw: $missing"
}
