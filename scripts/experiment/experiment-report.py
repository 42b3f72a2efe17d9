#!/usr/bin/env python3
"""Render the MappedByteBuffer-versus-FileChannel experiment.

Reads RESULTS/<kernel>/cells.jsonl and meta.json (from
scripts/experiment/guest-experiment.sh) and writes, under DOCS
(`make experiment`: docs/results/):
  experiment.md                    the report's index: what is
                                   reproduced, how verdicts are made,
                                   a line per kernel
  experiment/<kernel>.md           a kernel's run: findings, charts,
                                   counters (a page of its own: no page
                                   of docs/ is over 500 lines)
  experiment/<kernel>/cells.csv    one row per cell and round, every counter
  experiment/<kernel>/meta.json    kernel, date, machine, parameters
  experiment/<kernel>/*.svg        charts

The findings the report states are computed from the cells, and so is
whether this machine agrees with each finding of the original analysis.

  experiment-report.py --results DIR --docs DIR

The work is done by the modules beside this script:
  experiment_results.py   reads the results directories, merges batches
  experiment_cells.py     a cell as a CSV row; rounds aggregated per cell
  experiment_verdicts.py  how two cells, and a claim over units, are judged
  experiment_findings.py  the claims of the original analysis, one rule each
  experiment_outliers.py  rounds far from their median; major faults
  experiment_tables.py    the Markdown tables
  experiment_render.py    experiment.md and the kernels' pages, the data
                          files and the charts
"""

import argparse
import sys

from experiment_render import render
from experiment_results import load


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", required=True, action="append",
                    help="a results directory (RESULTS/<kernel>/cells.jsonl); "
                    "several are merged per kernel")
    ap.add_argument("--docs", required=True)
    args = ap.parse_args()
    kernels = load(args.results)
    if not kernels:
        sys.exit("experiment-report: no cells.jsonl under %s" % ", ".join(args.results))
    print(render(kernels, args.docs))


if __name__ == "__main__":
    main()
