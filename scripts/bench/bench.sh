#!/usr/bin/env bash
# The body of `make bench`: boot each supported kernel's guest once, run
# scripts/bench/guest-bench.sh inside (all configurations side by side), keep the
# raw results in results/bench/<kernel>/ and render docs/results/benchmarks.md
# (the tables; docs/benchmarks.md, written by hand, says what they measure).
#
# Environment: KVERS (kernels, default: every kernel make module builds
#   for, scripts/vm/kernels.sh all: the host's 6.1 and 6.12 and the staged
#   5.10, trixie 6.12 and sid kernels), BENCH_JOBS (guests at once,
#   default: one per host core),
#   BENCH_ROUNDS, BENCH_CONFIGS (a subset of the configurations, e.g.
#   "base counts bt-kfunc"), BENCH_W1_PASSES, BENCH_W2_MIB, BENCH_W3_FILES,
#   BENCH_W4_PAGES, BENCH_W4_PASSES, BENCH_W5_PAIRS, BENCH_W5_PASSES, BENCH_W6_OPS,
#   BENCH_FILL, BENCH_OVERFLOW_MAX,
#   BENCH_PERF, BENCH_EXTRAS, BENCH_MECH (0: no mechanism part),
#   BENCH_MECH_CALLS (see scripts/bench/guest-bench.sh),
#   BENCH_CLOCK (icount, the default, or wall: see below),
#   BENCH_TIME (cpu, the default: a run's time is the workload process's
#   own CPU time, which leaves out other tasks and idle time; wall: its
#   elapsed time, as before 2026-11-26),
#   BENCH_DOC (output, default docs/results/benchmarks.md; "-" for stdout only),
#   BENCH_ALT (a git revision: its kmod/ is built for each kernel into
#   build/bench-alt/<kernel>/kmod/, and the configurations alt-counts and
#   alt-timing, which must be named in BENCH_CONFIGS, load it; an A/B of
#   a handler change inside one run).

set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/results/bench
kvers=$(echo ${KVERS:-$("$top/scripts/vm/kernels.sh" all)})
doc=${BENCH_DOC:-$top/docs/results/benchmarks.md}
[ -n "$kvers" ] || { echo "bench: no supported kernel installed (make setup)" >&2; exit 1; }
# bpftrace only for its own configurations (all of them by default).
case " ${BENCH_CONFIGS:-bt-} " in
*" bt-"*) command -v bpftrace >/dev/null ||
	{ echo "bench: bpftrace missing (make setup), needed for bt-kprobe and bt-kfunc" >&2; exit 1; } ;;
esac

benv=()
for v in BENCH_ROUNDS BENCH_CONFIGS BENCH_W1_PASSES BENCH_W2_MIB BENCH_W3_FILES \
	BENCH_W4_PAGES BENCH_W4_PASSES BENCH_W5_PAIRS BENCH_W5_PASSES BENCH_W6_OPS BENCH_FILL BENCH_OVERFLOW_MAX BENCH_PERF \
	BENCH_EXTRAS BENCH_MECH BENCH_MECH_CALLS BENCH_TIME; do
	[ -n "${!v:-}" ] && benv+=("$v=${!v}")
done

# Instruction counting: the guest's clock advances by one nanosecond per
# guest instruction (-icount shift=0) and skips idle time (sleep=off), so a
# run's time no longer depends on what else this host runs; BENCH_CLOCK=wall
# measures host time instead (noisy under TCG).
case ${BENCH_TIME:-cpu} in
cpu | wall) ;;
*) echo "bench: BENCH_TIME must be cpu or wall" >&2; exit 2 ;;
esac
case ${BENCH_CLOCK:-icount} in
icount) export WPSTAT_VM_QEMU_OPTS="-icount shift=0,sleep=off" ;;
wall) unset WPSTAT_VM_QEMU_OPTS ;;
*) echo "bench: BENCH_CLOCK must be icount or wall" >&2; exit 2 ;;
esac
benv+=("BENCH_CLOCK=${BENCH_CLOCK:-icount}")

# wpmech.ko (the mechanism part) for each kernel, with that kernel's
# compiler (in its chroot for the staged ones), as make module builds
# wpstat.ko.  One that does not build is removed, not left stale: the
# guest then skips the part and the page says it was not measured.
mkdir -p "$out"
if [ "${BENCH_MECH:-1}" = 1 ]; then
	for k in $kvers; do
		if ! "$top/scripts/vm/kbuild.sh" "$k" --bench >"$out/$k.wpmech-build.log" 2>&1; then
			echo "bench: wpmech.ko does not build for $k (results/bench/$k.wpmech-build.log): no mechanism part there" >&2
			rm -f "$top/build/kmod/$k/bench/wpmech.ko"
		fi
	done
fi

# BENCH_ALT: the revision's kmod/, as git has it (not the work tree), built
# for each kernel with kbuild.sh (in the kernel's chroot where needed).
alt_rev=
if [ -n "${BENCH_ALT:-}" ]; then
	alt_rev=$(git -C "$top" rev-parse --short --verify "${BENCH_ALT}^{commit}") ||
		{ echo "bench: BENCH_ALT=$BENCH_ALT is not a revision of $top" >&2; exit 2; }
	case " ${BENCH_CONFIGS:-} " in
	*" alt-"*) ;;
	*) echo "bench: BENCH_ALT needs alt-counts or alt-timing in BENCH_CONFIGS" >&2; exit 2 ;;
	esac
	for k in $kvers; do
		# The revision's kmod/, and its uapi/ beside it where it has
		# one (kmod/Kbuild finds the .defs there).
		d=$top/build/bench-alt/$k/kmod
		paths=(kmod)
		[ -z "$(git -C "$top" ls-tree -d "$alt_rev" uapi)" ] || paths+=(uapi)
		# kmod/Makefile writes the version header; a build of the
		# bare directory (M=) needs its own, naming the revision.
		rm -rf "${d%/kmod}" && mkdir -p "${d%/kmod}" &&
			git -C "$top" archive "$alt_rev" "${paths[@]}" | tar -x -C "${d%/kmod}" &&
			echo "#define WPSTAT_VERSION \"alt-$alt_rev\"" >"$d/wpstat_version.h" &&
			"$top/scripts/vm/kbuild.sh" "$k" "$d" >"$out/$k.alt-build.log" 2>&1 ||
			{ echo "bench: $alt_rev's module does not build for $k ($out/$k.alt-build.log)" >&2; exit 1; }
	done
fi

one_kernel() {
	local k=$1 start r cpus=2 alt=()
	[ -z "$alt_rev" ] ||
		alt=(BENCH_ALT_REV="$alt_rev" BENCH_ALT_MODULE="$top/build/bench-alt/$k/kmod/wpstat.ko")
	# One vCPU under -icount: with two, whatever the other vCPU runs
	# advances the shared instruction clock (and QEMU 7.2 with -icount
	# hangs 6.1 bringing up a second vCPU).  The workloads are
	# single-threaded.
	[ "${BENCH_CLOCK:-icount}" = icount ] && cpus=1
	echo "bench: booting $k ($cpus vCPU)" >&2
	start=$(date +%s)
	rm -rf "${out:?}/$k" && mkdir -p "$out/$k"
	# A bound for a guest that hangs, not a budget: a kernel's guest takes
	# 21-25 min alone, and 50 beside a make check (2026-11-28: 5.10 was
	# stopped at 3000 s reading its full table, every round done).
	WPSTAT_VM_TIMEOUT=${WPSTAT_VM_TIMEOUT:-10800} \
		"$top/scripts/vm/vm-run.sh" --kver "$k" --cpus $cpus --no-load --results "$out/$k" -- \
		env "${benv[@]}" "${alt[@]}" bash "$top/scripts/bench/guest-bench.sh" >"$out/$k.log" 2>&1
	r=$?
	echo "bench: $k took $(($(date +%s) - start)) s (guest exit $r)" >&2
	echo "guest_seconds=$(($(date +%s) - start))" >>"$out/$k/extra.txt"
	[ $r = 0 ] || tail -n 20 "$out/$k.log" >&2
	return $r
}

# With -icount a guest's timings do not depend on the host's load, so the
# kernels run side by side, BENCH_JOBS at a time (one guest per host core).
rc=0
t_all=$(date +%s)
pids=()
jobs_max=${BENCH_JOBS:-$(nproc)}
for k in $kvers; do
	if [ "${BENCH_CLOCK:-icount}" = icount ]; then
		while [ "$(jobs -pr | wc -l)" -ge "$jobs_max" ]; do
			sleep 5
		done
		one_kernel "$k" &
		pids+=($!)
	else
		one_kernel "$k" || rc=1
	fi
done
for p in "${pids[@]}"; do
	wait "$p" || rc=1
done
echo "bench: all kernels took $(($(date +%s) - t_all)) s" >&2

# A report that cannot be rendered fails the run: the page is its result.
if [ "$doc" = - ]; then
	"$top/.venv/bin/python3" "$top/scripts/bench/bench-report.py" "$out" $kvers || rc=1
elif "$top/.venv/bin/python3" "$top/scripts/bench/bench-report.py" "$out" $kvers >"$doc.tmp"; then
	mv "$doc.tmp" "$doc" && echo "bench: wrote ${doc#"$top"/}" >&2
else
	echo "bench: the report failed; $doc left as it was" >&2
	rm -f "$doc.tmp"
	rc=1
fi
exit $rc
