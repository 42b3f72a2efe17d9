#!/usr/bin/env bash
# The body of `make clients-runs`: boot a guest (6.12 by default), run each
# real client under `wpstat run` (scripts/clients/guest-runs.sh), then
# write docs/results/clients-runs.md from what came back
# (scripts/clients/render-runs.py).
#
#   scripts/clients/runs.sh [--kver KVER] [--results DIR]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
kver=
results=$top/results/clients-runs

while [ $# -gt 0 ]; do
	case $1 in
	--kver) kver=$2; shift 2 ;;
	--results) results=$2; shift 2 ;;
	-h | --help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "clients-runs: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[ -n "$kver" ] || kver=$("$top/scripts/vm/kernels.sh" installed | grep '^6\.12\.' | tail -n 1)
[ -n "$kver" ] || { echo "clients-runs: no 6.12 kernel installed; run make setup" >&2; exit 2; }

rm -rf "$results"
mkdir -p "$results"
start=$(date +%s)
"$top/scripts/vm/vm-run.sh" --kver "$kver" --results "$results/$kver" -- \
	bash "$top/scripts/clients/guest-runs.sh" >"$results/$kver.log" 2>&1 || {
	echo "clients-runs: the guest failed; its log:" >&2
	tail -n 20 "$results/$kver.log" >&2
	exit 1
}
echo "clients-runs: $kver took $(($(date +%s) - start)) s" >&2
args=(--kver "$kver" --doc "$top/docs/results/clients-runs.md")
python3 "$top/scripts/clients/render-runs.py" "${args[@]}" "$results/$kver"
