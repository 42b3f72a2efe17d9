#!/usr/bin/env bash
# The body of `make experiment`: boot a guest per kernel (every installed
# one by default) and round, run the MappedByteBuffer-versus-FileChannel
# experiment in it
# (scripts/experiment/guest-experiment.sh), then render the CSV, charts and
# docs/results/experiment.md from the results
# (scripts/experiment/experiment-report.py).
#
#   scripts/experiment/experiment.sh [--kver KVER | --all-kernels] [--results DIR]
#                         [--docs DIR] [--resume] [--report-only]
#                         [--also-results DIR]... [GUEST OPTIONS...]
#
# GUEST OPTIONS go to guest-experiment.sh (--method, --size, --units,
# --parts, --repeat, ...).  --docs is where the report goes (default:
# docs/results/ of this tree).  --resume continues a stopped run in --results from its
# last finished round on each kernel (a kernel whose rounds are all done is
# not booted again); --report-only renders the report from --results.
# --also-results adds the cells of another run to the report (a run made
# in batches of parts, e.g. the devices first: --parts "slow strategies
# rocketmq" --results results/experiment-devices).
# The full run (1 GiB, 5 rounds, both methods, the two host-installed
# kernels, bookworm's 6.1 and 6.12: kernels.sh installed) takes many
# hours under TCG: docs/results/experiment.md says how long the committed one took.
# One `experiment.sh --kver K --resume` per kernel at once halves the wait;
# the guests then share the host, and the report says so.

set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
kvers=
results=$top/results/experiment
docs=$top/docs/results
guest_args=()
size=1G
repeat=5
parts="ram slow strategies rocketmq java"
resume=0
report_only=0
also=()

while [ $# -gt 0 ]; do
	case $1 in
	--kver) kvers=$2; shift 2 ;;
	--all-kernels) kvers=$("$top/scripts/vm/kernels.sh" installed | xargs); shift ;;
	--results) results=$2; shift 2 ;;
	--docs) docs=$2; shift 2 ;;
	--size) size=$2; guest_args+=("$1" "$2"); shift 2 ;;
	--repeat) repeat=$2; shift 2 ;;
	--parts) parts=$2; guest_args+=("$1" "$2"); shift 2 ;;
	--resume) resume=1; shift ;;
	--report-only) report_only=1; shift ;;
	--also-results) also+=(--results "$2"); shift 2 ;;
	-h | --help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) guest_args+=("$1"); shift ;;
	esac
done
[ -n "$kvers" ] || kvers=$("$top/scripts/vm/kernels.sh" installed | xargs)
[ -n "$kvers" ] || { echo "experiment: no kernel installed; run make setup" >&2; exit 2; }
report() {
	MPLCONFIGDIR=$top/build/mplconfig "$top/.venv/bin/python" \
		"$top/scripts/experiment/experiment-report.py" --results "$results" "${also[@]}" --docs "$docs"
}
if [ $report_only = 1 ]; then
	report
	exit
fi
# RocketMQ's store comes from Maven (selftests/clients/java/pom.xml).
if [[ " $parts " == *" rocketmq "* ]] && [ ! -d "$top/build/clients/java/lib" ]; then
	make -C "$top/selftests/clients" java >&2 || {
		echo "experiment: cannot build RocketMQ's driver (make clients-build); leave rocketmq out of --parts to run without it" >&2
		exit 2
	}
fi

# The RAM disk holds the file once and the page cache once more, and the
# original method's fresh file a third time (dirty, never written back);
# mlock pins the cached copy.  Give the guest three times the file plus
# 2 GiB (the JVM, RocketMQ's store).
case $size in
*[Gg]) mib=$(( ${size%?} << 10 )) ;;
*[Mm]) mib=${size%?} ;;
*[Kk]) mib=$(( ${size%?} >> 10 )) ;;
*) mib=$(( size >> 20 )) ;;
esac
memory=$(( mib * 3 + 2048 ))
[ "$memory" -ge 2048 ] || memory=2048
memory=${memory}M

# The full sweep takes hours under TCG: lift vm-run's 30-minute cap (a
# stopped run goes on with --resume).
export WPSTAT_VM_TIMEOUT=${WPSTAT_VM_TIMEOUT:-86400}

[ $resume = 1 ] || rm -rf "$results"
mkdir -p "$results"
rc=0
# Round by round across the kernels (one boot per kernel and round, each
# going on from the cells it has: --resume), so that every kernel has
# rounds early in a run of hours and host noise spreads over both.
for ((r = 1; r <= repeat; r++)); do
	for k in $kvers; do
		done_rounds=0
		[ -f "$results/$k/rounds.done" ] && done_rounds=$(wc -l <"$results/$k/rounds.done")
		[ "$done_rounds" -ge "$r" ] && continue
		resume_arg=--resume
		[ -s "$results/$k/meta.json" ] || resume_arg=
		echo "experiment: $k round $r of $repeat, guest memory $memory" >&2
		start=$(date +%s)
		"$top/scripts/vm/vm-run.sh" --kver "$k" --memory "$memory" --results "$results/$k" -- \
			bash "$top/scripts/experiment/guest-experiment.sh" "${guest_args[@]}" \
			--repeat "$repeat" $resume_arg --until "$r" >>"$results/$k.log" 2>&1 || {
			# A failed cell is recorded as such; go on, and render what
			# came back: the report lists failed cells and refuses
			# their verdicts.
			echo "experiment: the guest run on $k (round $r) failed; see $results/$k.log" >&2
			tail -n 20 "$results/$k.log" >&2
			rc=1
		}
		echo "experiment: $k round $r took $(($(date +%s) - start)) s" >&2
	done
done
report || rc=1
exit $rc
