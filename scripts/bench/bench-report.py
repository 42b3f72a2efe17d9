#!/usr/bin/env python3
"""Render docs/benchmarks.md from the results of `make bench`.

    scripts/bench/bench-report.py RESULTS_DIR KVER... > docs/benchmarks.md

RESULTS_DIR/<kver>/runs.csv, mech.csv, extra.txt, enabled-<config>.txt and
probes-<config>.txt come from scripts/bench/guest-bench.sh.  Per workload, the
added cost of a configuration is computed per round against that round's
baseline (the runs of one round are side by side in time, so drift
cancels) and divided by the events that the counts run of the same round
counted (the same denominator for every configuration); under instruction
time the fastest runs give the estimate and the median of the per-round
differences follows in brackets.  A configuration missing from runs.csv
(BENCH_CONFIGS) is left out of every table, and whatever needs it is
reported as not computed.
"""
# The work is done by the modules beside this script (this docstring is
# the usage message, so they are named here):
#   bench_results.py     reads a kernel's results; costs and losses
#   bench_kernel.py      a kernel's section: run, time, events, costs,
#                        what is attached
#   bench_mechanisms.py  wpmech's mechanisms and each level's floor
#   bench_targets.py     memory, reading, overflow; the targets
#   bench_across.py      the kernels side by side
import os
import sys

from bench_across import across
from bench_kernel import kernel_section
from bench_results import load


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    base = sys.argv[1]
    # What each kernel's section leaves for the comparison across kernels.
    summary = {}
    header = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "benchmarks-head.md")
    with open(header) as f:
        print(f.read().rstrip("\n") + "\n")
    for k in sys.argv[2:]:
        d = os.path.join(base, k)
        if not os.path.exists(os.path.join(d, "runs.csv")):
            print("## {}\n\nNo results (runs.csv missing).\n".format(k))
            continue
        runs, mech, extra = load(d)
        text, left = kernel_section(k, d, runs, mech, extra)
        if left is not None:
            summary[k] = left
        print(text)
    a = across(sys.argv[2:], summary)
    if a:
        print(a)
    tail = os.path.join(os.path.dirname(header), "benchmarks-tail.md")
    if os.path.exists(tail):
        with open(tail) as f:
            print(f.read().rstrip("\n"))


if __name__ == "__main__":
    main()
