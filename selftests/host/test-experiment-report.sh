#!/usr/bin/env bash
# TAP: render the experiment report (scripts/experiment/experiment-report.py) from the
# reduced sweep each guest's experiment.bats left in RESULTS/<kernel>/
# experiment/, and check that the report (experiment.md, the index, and
# the kernel's page experiment/<kernel>.md), CSV and charts are complete
# (and that no second copy of the cells is written as JSON).
# Runs on the host from scripts/check/check.sh: matplotlib takes minutes in a
# TCG guest.
#
#   test-experiment-report.sh RESULTS KVER...
#
# Made-up cells: a counter the module's list (uapi/wpstat_counters.def)
# does not have makes the report fail, naming it, instead of dropping its
# column; and the verdict rules: "clearly" only where the rounds' ranges do
# not overlap, no verdict from a cell with fewer than 3 good rounds or from
# an original-method cell that wrote back; two kernels whose guests ran at
# the same time are said to have shared the host; a cold mmap cell's many
# major faults are put down to a backward copy only where the model fits.

top=$(cd "$(dirname "$0")/../.." && pwd)
results=$1
shift
echo "1..$(($# + 4))"
n=0
for k in "$@"; do
	n=$((n + 1))
	src=$results/$k/experiment
	out=$results/$k/experiment-report
	rm -rf "$out"
	why=
	if [ ! -s "$src/k/cells.jsonl" ]; then
		why="no cells from the guest (see bats:experiment of $k)"
	elif ! MPLCONFIGDIR=$top/build/mplconfig "$top/.venv/bin/python" \
		"$top/scripts/experiment/experiment-report.py" --results "$src" --docs "$out" \
		>"$results/$k/experiment-report.log" 2>&1; then
		why="experiment-report.py failed: $(tail -n 1 "$results/$k/experiment-report.log")"
	else
		cells=$(wc -l <"$src/k/cells.jsonl")
		# The index lists the kernel's page, which has its findings.
		md=$out/experiment/k.md
		if ! grep -q '](experiment/k\.md)' "$out/experiment.md" ||
			! grep -q '^# MappedByteBuffer versus FileChannel: kernel k$' "$md" ||
			! grep -q 'agrees and disagrees' "$md"; then
			why="experiment.md does not list experiment/k.md, or that page lacks the findings"
		# one round: every throughput verdict refused, the cells listed
		elif grep -qE '\| \*\*(agrees|disagrees|inconclusive|C and JDK)' "$md"; then
			why="a verdict from a one-round run: $(grep -m1 -E '\| \*\*(agrees|disagrees|inconclusive|C and JDK)' "$md" | cut -c1-160)"
		elif ! grep -q '^\*\*No verdict from these cells\*\*' "$md"; then
			why="the refused cells are not listed"
		# one CSV row per cell plus the header, and the rows only once
		elif [ "$(($(wc -l <"$out/experiment/k/cells.csv") - 1))" != "$cells" ]; then
			why="cells.csv does not have $cells rows"
		elif [ -e "$out/experiment/k/cells.json" ]; then
			why="cells.json written: the cells are in cells.csv already"
		else
			for c in ram-write-original ram-write-kernel ram-read-original \
				ram-read-kernel slow-write java-write; do
				grep -q '<svg' "$out/experiment/k/$c.svg" 2>/dev/null &&
					grep -q "](k/$c.svg)" "$md" ||
					{ why="chart $c.svg missing or not linked"; break; }
			done
		fi
	fi
	if [ -z "$why" ]; then
		echo "ok $n experiment report, CSV and charts complete ($k)"
	else
		echo "not ok $n experiment report ($k): $why"
	fi
done

# render_made_up: the report of the made-up cells in $src, into $src/docs;
# its output in $src/report.log.
render_made_up() {
	MPLCONFIGDIR=$top/build/mplconfig "$top/.venv/bin/python" \
		"$top/scripts/experiment/experiment-report.py" --results "$src" --docs "$src/docs" \
		>"$src/report.log" 2>&1
}

# made_up_meta DIR [KEY=JSON...]: the meta.json of made-up cells in DIR,
# the kernel named after DIR, with KEY set to JSON over the defaults.
made_up_meta() {
	local dir=$1 kv json
	shift
	json='{"kernel": "'"${dir##*/}"'", "date": "2026-01-01T00:00:00Z", "cpu": "made up",
	 "cpus": 1, "mem_kib": 1048576, "size": 8192, "slow_size": 8192, "slow_delay_ms": 10,
	 "strategy_size": 8192, "units": "4K", "java_units": "4K", "parts": "ram",
	 "repeat": 1, "args": "", "java": "none"}'
	for kv in "$@"; do
		json=$(jq -c --argjson v "${kv#*=}" ".${kv%%=*} = \$v" <<<"$json") || return 1
	done
	mkdir -p "$dir" && printf '%s\n' "$json" >"$dir/meta.json"
}

# One ram cell whose counters are mkwrite_first and $1, rendered into
# $src/docs; the exit status is the report's, its output in $src/report.log.
made_up_report() {
	rm -rf "$src" && made_up_meta "$src/k"
	printf '%s\n' '{"part": "ram", "api": "mmap", "op": "write", "cache": "warm", "unit": 4096, "size": 8192, "round": 1, "rc": 0, "vmstat": {"pgfault": 2}, "wpload": {"totals": {"passes": 1, "wall_ns": 1000, "sync_ns": 0, "ops": 2, "bytes": 8192, "counters": {"mkwrite_first": 2, "'"$1"'": 1}}}}' >"$src/k/cells.jsonl"
	render_made_up
}

n=$((n + 1))
t="experiment report fails on a counter not in uapi/wpstat_counters.def"
src=$results/unknown-counter
if ! made_up_report mkwrite_wp; then
	echo "not ok $n $t: the made-up cell with known counters failed: $(tail -n 1 "$src/report.log")"
elif made_up_report no_such_counter; then
	echo "not ok $n $t: it exited 0"
elif ! grep -q 'counter no_such_counter in a ram cell: not in uapi/wpstat_counters.def' "$src/report.log"; then
	echo "not ok $n $t: failed without naming the counter: $(tail -n 1 "$src/report.log")"
else
	echo "ok $n $t"
fi

# verdict_report "MMAP_MIBS" "WRITE_MIBS" [MKCLEAN]: one original-method unit
# (64 B, warm write) per api, one round per throughput given (MiB/s), the
# write(2) rounds with MKCLEAN pages written back (default 0); the claim
# line of the rendered report on stdout.
verdict_report() {
	local api mibs r=0 v mkclean
	rm -rf "$src" && made_up_meta "$src/k" size=1048576 units='"64"' \
		java_units='"64"' methods='"original"' repeat=3
	for api in mmap write; do
		[ $api = mmap ] && mibs=$1 || mibs=$2
		[ $api = mmap ] && mkclean=0 || mkclean=${3:-0}
		r=0
		for v in $mibs; do
			r=$((r + 1))
			printf '{"part": "ram", "method": "original", "api": "%s", "op": "write", "cache": "warm", "unit": 64, "size": 1048576, "round": %d, "block_size": 4096, "rc": 0, "vmstat": {"pgfault": 2}, "wpload": {"totals": {"passes": 1, "wall_ns": %d, "sync_ns": 0, "ops": 16384, "bytes": 1048576, "counters": {"mkwrite_first": 0, "mkwrite_wp": 0, "mkclean_calls": %d}}}}\n' \
				$api $r $((1000000000 / v)) "$mkclean" >>"$src/k/cells.jsonl"
		done
	done
	render_made_up || return 1
	grep 'mmap wins clearly below ~8 KiB' "$src/docs/experiment/k.md"
}

n=$((n + 1))
t="experiment verdicts: clearly only without overlap, none from under 3 rounds or from writeback under original"
src=$results/verdicts
if ! l=$(verdict_report "10 11 12" "5 6 7") || [[ $l != *"**agrees clearly**"* ]]; then
	echo "not ok $n $t: disjoint ranges: ${l:-$(tail -n 1 "$src/report.log")}"
elif ! l=$(verdict_report "10 11 12" "5 6 13") || [[ $l != *"**agrees, not clearly**"* ]]; then
	echo "not ok $n $t: overlapping ranges: ${l:-$(tail -n 1 "$src/report.log")}"
elif ! l=$(verdict_report "5 6 7" "10 11 12") || [[ $l != *"**disagrees**"* ]]; then
	echo "not ok $n $t: write(2) ahead: ${l:-$(tail -n 1 "$src/report.log")}"
elif ! l=$(verdict_report "10 11" "5 6") || [[ $l != *"**no verdict**"* ]] ||
	! grep -q '^- RAM disk original mmap write warm 64 B (2 good rounds)' "$src/docs/experiment/k.md"; then
	echo "not ok $n $t: two rounds: ${l:-$(tail -n 1 "$src/report.log")}"
# The original method promises no writeback inside a cell: a round that
# cleaned pages anyway is a failed one; a claim whose rounds all failed
# stays on the page, unjudged.
elif ! l=$(verdict_report "10 11 12" "5 6 7" 3) || [[ $l != *"**no verdict**"* ]] ||
	! grep -q '^\*\*Failed runs\*\* (3): ram original write warm 64 B round 1: failed (original method, yet 3 pages written back' "$src/docs/experiment/k.md"; then
	echo "not ok $n $t: writeback in original-method cells: ${l:-$(tail -n 1 "$src/report.log")}"
else
	echo "ok $n $t"
fi

# side_by_side_report START2: kernels k1 (boot 00:00, one cell at 00:10) and
# k2 (boot at START2, one cell 10 minutes later) on 2026-01-01; prints the
# lines of the report that say a guest shared the host.
side_by_side_report() {
	local k start clock
	rm -rf "$src" && mkdir -p "$src"
	for k in k1 k2; do
		[ $k = k1 ] && start=00:00:00 || start=$1
		clock=$(($(date -u -d "2026-01-01T$start" +%s) + 600))
		made_up_meta "$src/$k" date="\"2026-01-01T${start}Z\"" cpus=2
		printf '{"part": "ram", "api": "mmap", "op": "write", "cache": "warm", "unit": 4096, "size": 8192, "round": 1, "clock": %d, "rc": 0, "vmstat": {"pgfault": 2}, "wpload": {"totals": {"passes": 1, "wall_ns": 1000, "sync_ns": 0, "ops": 2, "bytes": 8192, "counters": {"mkwrite_first": 2}}}}\n' \
			"$clock" >"$src/$k/cells.jsonl"
	done
	render_made_up || return 1
	cat "$src"/docs/experiment/*.md | grep '^\*\*This guest shared the host\*\*'
}

n=$((n + 1))
t="experiment report says when two kernels' guests ran at the same time"
src=$results/side-by-side
# k2 boots 4 minutes after k1, both run 10 minutes: 6 minutes shared.
if ! l=$(side_by_side_report 00:04:00) || [ "$(wc -l <<<"$l")" != 2 ] ||
	[[ $l != *"with the k2 guest for 0 h 06 min of its 0 h 10 min"* ]]; then
	echo "not ok $n $t: overlapping boots: ${l:-$(tail -n 1 "$src/report.log")}"
elif l=$(side_by_side_report 00:20:00); then
	echo "not ok $n $t: one after the other, yet: $l"
elif ! grep -q '^# MappedByteBuffer versus FileChannel: kernel k2$' "$src/docs/experiment/k2.md" ||
	! grep -q '](experiment/k2\.md)' "$src/docs/experiment.md"; then
	echo "not ok $n $t: one after the other: $(tail -n 1 "$src/report.log")"
else
	echo "ok $n $t"
fi

# major_faults_report MAJFLT: cold original-method mmap reads of a 32 MiB
# file, units 64 KiB (15 major faults) and 1 MiB (MAJFLT); the outlier
# lines of the rendered report on stdout.
major_faults_report() {
	local unit majflt
	rm -rf "$src" && made_up_meta "$src/k" size=33554432 units='"64K 1M"' \
		methods='"original"'
	for unit in 65536 1048576; do
		[ $unit = 65536 ] && majflt=15 || majflt=$1
		printf '{"part": "ram", "method": "original", "api": "mmap", "op": "read", "cache": "cold", "unit": %d, "size": 33554432, "round": 1, "block_size": 4096, "rc": 0, "vmstat": {"pgfault": 8192, "pgmajfault": %d}, "wpload": {"totals": {"passes": 1, "wall_ns": 1000000000, "sync_ns": 0, "ops": %d, "bytes": 33554432, "counters": {}}}}\n' \
			$unit "$majflt" $((33554432 / unit)) >>"$src/k/cells.jsonl"
	done
	render_made_up || return 1
	grep -E '^- (RAM disk .*major faults|\*Backward copies)' "$src/docs/experiment/k.md"
}

n=$((n + 1))
t="experiment report explains a cold mmap cell's major faults by a backward copy only where the read-around model predicts them"
src=$results/major-faults
mo=$results/memcpy-order
# Read backward, 32 units of 256 pages: 15 faults a unit, 480 (the model in
# experiment_outliers.py; every fault reads 16 pages below and itself).
if ! l=$(major_faults_report 495) ||
	[[ $l != *"1 MiB (1 good rounds): 495 major faults in its median round against 15 at the other units; a backward copy (below): the read-around model predicts 480 more than the other units, 480 here"* ]] ||
	[[ $l != *"*Backward copies.*"* ]]; then
	echo "not ok $n $t: 480 more: ${l:-$(tail -n 1 "$src/report.log")}"
elif ! l=$(major_faults_report 2015) ||
	[[ $l != *"unexplained: not a backward copy either, whose read-around predicts 480 more than the other units, not 2000"* ]] ||
	[[ $l == *"*Backward copies.*"* ]]; then
	echo "not ok $n $t: 2000 more: ${l:-$(tail -n 1 "$src/report.log")}"
# The probe the explanation points to: builds, runs, refuses a bad size.
elif ! cc -O2 -Wall -o "$mo" "$top/scripts/experiment/memcpy-order.c" 2>"$mo.log" ||
	[ "$("$mo" 64K 1M | grep -cE '^(read|write) +[0-9]+ bytes: pages [0-9 ]+(\.\.\.)?: (forward|backward)$')" != 4 ]; then
	echo "not ok $n $t: memcpy-order: $(head -n 3 "$mo.log") $("$mo" 64K 1M 2>&1 | head -n 2)"
elif "$mo" 1X >/dev/null 2>&1; then
	echo "not ok $n $t: memcpy-order accepted the size 1X"
else
	echo "ok $n $t"
fi
