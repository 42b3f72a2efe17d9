#!/usr/bin/env bash
# TAP: render the experiment report (scripts/experiment/experiment-report.py) from the
# reduced sweep each guest's experiment.bats left in RESULTS/<kernel>/
# experiment/, and check that the report, CSV, JSON and charts are complete.
# Runs on the host from scripts/check/check.sh: matplotlib takes minutes in a
# TCG guest.
#
#   test-experiment-report.sh RESULTS KVER...

top=$(cd "$(dirname "$0")/../.." && pwd)
results=$1
shift
echo "1..$#"
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
		md=$out/experiment.md
		if ! grep -q '^## Kernel k$' "$md" || ! grep -q 'agrees and disagrees' "$md"; then
			why="experiment.md lacks the kernel section or the findings"
		# one CSV row per cell plus the header, one JSON object per cell
		elif [ "$(($(wc -l <"$out/experiment/k/cells.csv") - 1))" != "$cells" ]; then
			why="cells.csv does not have $cells rows"
		elif [ "$(jq length "$out/experiment/k/cells.json")" != "$cells" ]; then
			why="cells.json does not have $cells objects"
		else
			for c in ram-write ram-read slow-write java-write; do
				grep -q '<svg' "$out/experiment/k/$c.svg" 2>/dev/null &&
					grep -q "experiment/k/$c.svg" "$md" ||
					{ why="chart $c.svg missing or not linked"; break; }
			done
		fi
	fi
	if [ -z "$why" ]; then
		echo "ok $n experiment report, CSV, JSON and charts complete ($k)"
	else
		echo "not ok $n experiment report ($k): $why"
	fi
done
