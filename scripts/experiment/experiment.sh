#!/usr/bin/env bash
# The body of `make experiment`: boot a guest (6.12 by default), run the
# MappedByteBuffer-versus-FileChannel experiment in it
# (scripts/experiment/guest-experiment.sh), then render CSV, JSON, charts and
# docs/experiment.md from the results (scripts/experiment/experiment-report.py).
#
#   scripts/experiment/experiment.sh [--kver KVER | --all-kernels] [--results DIR]
#                         [--docs DIR] [GUEST OPTIONS...]
#
# GUEST OPTIONS go to guest-experiment.sh (--size, --units, --parts, ...).
# --docs is where the report goes (default: docs/ of this tree).

set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
kvers=
results=$top/results/experiment
docs=$top/docs
guest_args=()
size=256M

while [ $# -gt 0 ]; do
	case $1 in
	--kver) kvers=$2; shift 2 ;;
	--all-kernels) kvers=$("$top/scripts/vm/kernels.sh" installed | xargs); shift ;;
	--results) results=$2; shift 2 ;;
	--docs) docs=$2; shift 2 ;;
	--size) size=$2; guest_args+=("$1" "$2"); shift 2 ;;
	-h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) guest_args+=("$1"); shift ;;
	esac
done
[ -n "$kvers" ] || kvers=$("$top/scripts/vm/kernels.sh" installed | grep '^6\.12\.' | tail -n 1)
[ -n "$kvers" ] || { echo "experiment: no 6.12 kernel installed; run make setup" >&2; exit 2; }

# The RAM disk holds the file once and the page cache once more; mlock
# pins it on top.  Give the guest three times the file plus 1 GiB.
case $size in
*[Gg]) mib=$(( ${size%?} << 10 )) ;;
*[Mm]) mib=${size%?} ;;
*[Kk]) mib=$(( ${size%?} >> 10 )) ;;
*) mib=$(( size >> 20 )) ;;
esac
memory=$(( mib * 3 + 1024 ))
[ "$memory" -ge 2048 ] || memory=2048
memory=${memory}M

# The full sweep takes over an hour under TCG: lift vm-run's 30-minute cap.
export WPSTAT_VM_TIMEOUT=${WPSTAT_VM_TIMEOUT:-14400}

rm -rf "$results"
mkdir -p "$results"
rc=0
for k in $kvers; do
	echo "experiment: $k, guest memory $memory" >&2
	start=$(date +%s)
	"$top/scripts/vm/vm-run.sh" --kver "$k" --memory "$memory" --results "$results/$k" -- \
		bash "$top/scripts/experiment/guest-experiment.sh" "${guest_args[@]}" \
		>"$results/$k.log" 2>&1 || {
		# Render what came back all the same: the report says which
		# cells have fewer rounds.
		echo "experiment: the guest run on $k failed; see $results/$k.log" >&2
		tail -n 20 "$results/$k.log" >&2
		rc=1
	}
	echo "experiment: $k took $(($(date +%s) - start)) s" >&2
done
MPLCONFIGDIR=$top/build/mplconfig "$top/.venv/bin/python" "$top/scripts/experiment/experiment-report.py" --results "$results" --docs "$docs" || rc=1
exit $rc
