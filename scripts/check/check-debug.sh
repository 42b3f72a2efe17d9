#!/usr/bin/env bash
# The body of `make check-debug`: the module suites on a debug 6.12 kernel
# (KASAN, lockdep, kmemleak, might_sleep; scripts/check/debug-kernel.sh builds it
# once and caches it), in one guest, then a kmemleak pass after unloading
# the module.  Ends with "N passed, N failed, N skipped" like make check;
# exit status 1 on any failure, including any kernel report.
#
# Environment: SUITES (default: every ksft: suite and the bats suites but
#              experiment, which measures timings a KASAN kernel distorts
#              and takes long), WPSTAT_BACKSTOP_SECS (the guest's bound,
#              for a guest that never stops writing, default four hours:
#              KASAN+lockdep under TCG runs several times slower; a hang is
#              caught by silence, as in make check), WPSTAT_HANG_SECS
#              (that silence, default 1200 s here: twice make check's),
#              WPSTAT_CHECK_DEBUG_OUT (results, default results/check-debug).
# Needs make build done first (tools and selftests); builds only the module
# for the debug kernel, into build/kmod/<debug release>/.

set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
tree=$top/build/debug-kernel/linux-source-6.12
out=${WPSTAT_CHECK_DEBUG_OUT:-$top/results/check-debug}

die() { echo "check-debug: $*" >&2; exit 1; }

for f in "$top/build/bin/wpstat" "$top/build/bin/wpload" "$top/build/selftests/wpstat_iface"; do
	[ -x "$f" ] || die "$f missing: run make build first"
done

mkdir -p "$(dirname "$out")"
start=$(date +%s)
release=$("$top/scripts/check/debug-kernel.sh" | tail -n 1)
[ -n "$release" ] || die "scripts/check/debug-kernel.sh gave no kernel release"
echo "check-debug: debug kernel $release ready after $(($(date +%s) - start)) s" >&2

# The module for the debug tree, into its own build/kmod/$release: the
# Debian kernels' builds are left alone (a make check may be using them).
nice -n 19 make -s -C "$top/kmod" KVER="$release" KDIR="$tree" ||
	die "building wpstat.ko for $release failed"

# The default list is guest-check.sh's, at level counts only (the timing
# runs would double a run that already takes an hour) and without
# experiment.
export WPSTAT_SKIP_SUITES=${WPSTAT_SKIP_SUITES-bats:experiment}
export WPSTAT_TIMING_SUITES=${WPSTAT_TIMING_SUITES-}
echo "check-debug: suites: ${SUITES:-all but: $WPSTAT_SKIP_SUITES}" >&2

# check.sh runs the guest part: its own results directory (a concurrent
# make check keeps results/check), no host checks (they do not depend on
# the kernel), the debug tree booted with 3G (KASAN's shadow takes an
# eighth of it, kmemleak and lockdep more) and the kmemleak pass after the
# suites (scripts/check/guest-check-debug.sh).  Every suite, not only the
# kernel-facing set check.sh gives kernels other than its full one.
set +e
KVERS=$release SUITES=${SUITES:-} WPSTAT_CHECK_OUT=$out WPSTAT_CHECK_HOST=0 \
	WPSTAT_CHECK_FULL=all WPSTAT_HANG_SECS=${WPSTAT_HANG_SECS:-1200} \
	WPSTAT_CHECK_VM_ARGS="--kernel-dir $tree --memory 3G" \
	WPSTAT_CHECK_GUEST=$top/scripts/check/guest-check-debug.sh \
	WPSTAT_BACKSTOP_SECS=${WPSTAT_BACKSTOP_SECS:-14400} \
	"$top/scripts/check/check.sh" >"$out.txt"
rc=$?
set -e

# Point at every kernel report (the reason this target exists), then
# repeat check.sh's output so its summary line stays the last line.
reports=
for f in "$out/$release"/kernel-problems.txt "$out/$release"/*.kernel.txt \
	"$out/$release"/kmemleak.txt "$out/$release"/kmemleak-loaded.txt; do
	if [ -s "$f" ]; then reports+="$f "; fi
done
if [ -n "$reports" ]; then
	echo "check-debug: kernel reports (full log: $out/$release/dmesg.txt):" >&2
	printf '  %s\n' $reports >&2
fi
echo "check-debug: total $(($(date +%s) - start)) s" >&2
cat "$out.txt"
exit $rc
