#!/usr/bin/env bash
# The body of `make check-scale`: the module on many CPUs.  For each
# kernel (default: the newest bookworm 6.12 and sid's 7.2, whose kretprobe
# pools are per-CPU objpools), a guest of each vCPU count in
# WPSTAT_SCALE_CPUS (default "2 32 64": real vCPUs, since 6.12 ignores
# possible_cpus= and maxcpus= here) runs wpstat_broker's memory test; the
# largest of the first kernel also runs its 30-minute broker soak.  Then
# scripts/check/scale-report.py compares the memory across CPU counts:
# the module may grow by at most 64 KiB per added CPU at either level.
# It writes docs/results/scale.md and ends "N passed, N failed, N skipped".
#
# Environment: KVERS (kernels), WPSTAT_SCALE_CPUS (vCPU counts),
#              WPSTAT_BROKER_SECS (the soak's length, default 1800),
#              WPSTAT_SCALE_SOAK=0 (no soak), WPSTAT_CHECK_OUT (results,
#              default results/check-scale), WPSTAT_SCALE_REPORT (the
#              report, default docs/results/scale.md; empty: none)
#
# A 64-vCPU guest boots in about 5 minutes under TCG on 2 cores; a run of
# its two kernels (6.12 and 7.2) with the soak takes about an hour.

set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${WPSTAT_CHECK_OUT:-$top/results/check-scale}
cpus_list=${WPSTAT_SCALE_CPUS:-2 32 64}
report_md=${WPSTAT_SCALE_REPORT-$top/docs/results/scale.md}
default_kvers() {
	local k612 k72
	k612=$("$top/scripts/vm/kernels.sh" installed | grep '^6\.12\..*+deb12' | tail -n 1)
	k72=$("$top/scripts/vm/kernels.sh" all | grep '^7\.' | tail -n 1)
	echo $k612 $k72
}
kvers=$(echo ${KVERS:-$(default_kvers)})
max_cpus=$(echo $cpus_list | tr ' ' '\n' | sort -n | tail -n 1)
# shellcheck source=scripts/check/summary.sh
. "$top/scripts/check/summary.sh"

rm -rf "$out" && mkdir -p "$out"
[ -n "$kvers" ] || { echo "check-scale: no kernel: run make setup" >&2; exit 2; }

first=1
for k in $kvers; do
	for n in $cpus_list; do
		args="-f memory"
		# The soak in the largest guest of the first kernel only.
		if [ $first = 1 ] && [ "$n" = "$max_cpus" ] && [ "${WPSTAT_SCALE_SOAK:-1}" != 0 ]; then
			args="-f memory -f soak"
		fi
		run=$out/$k-$n
		echo "check-scale: $k with $n vCPUs ($args)" >&2
		start=$(date +%s)
		# Memory for the per-CPU areas and the 8 ramdisks' pages.
		KVERS=$k WPSTAT_CHECK_HOST=0 WPSTAT_CHECK_OUT=$run WPSTAT_CHECK_SHARDS=1 \
			WPSTAT_CHECK_VM_ARGS="--cpus $n --memory 4G" WPSTAT_KSFT_ARGS="$args" \
			WPSTAT_BROKER_SECS=${WPSTAT_BROKER_SECS:-1800} \
			SUITES=ksft:wpstat_broker "$top/scripts/check/check.sh" >"$run.summary" 2>&1
		echo "check-scale: $k with $n vCPUs took $(($(date +%s) - start)) s" >&2
		summary_add "$run.summary" "$k ($n vCPUs)"
	done
	first=0
done

# Across CPU counts: the growth per added CPU, one result per kernel and level.
if python3 "$top/scripts/check/scale-report.py" --out "$out" \
	${report_md:+--markdown "$report_md"} $kvers >"$out/scale.txt"; then
	:
fi
while read -r verdict rest; do
	case $verdict in
	PASS) pass=$((pass + 1)) ;;
	FAIL) fail=$((fail + 1)); report+=("FAIL $rest") ;;
	esac
done <"$out/scale.txt"

cat "$out/scale.txt"
summary_print "wpstat check-scale: kernels: $kvers; vCPUs: $cpus_list"
