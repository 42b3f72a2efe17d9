"""Reading the experiment's results directories: each kernel's cells,
meta.json and rounds.done, merged over the batches of one run (each
--results a separate `make experiment`), and the guest time each batch
took, from the clocks of its cells.
"""

import datetime
import json
import os
import re

from experiment_cells import flatten

# Which parts each meta field describes: a run in several batches (each
# --results a separate make experiment, e.g. the devices first) takes it
# from the batch that ran them.
META_PARTS = {"size": ("ram", "java"), "java_units": ("java",),
              "java_cold_units": ("java",), "units": ("ram", "slow"),
              "slow_size": ("slow",), "slow_delay_ms": ("slow", "strategies", "rocketmq"),
              "strategy_size": ("strategies", "rocketmq"),
              "rocketmq_messages": ("rocketmq",)}


def load(results_dirs):
    """{kernel: (meta, cells, rows)}, merged over every results directory;
    meta["batches"] has each directory's parts, arguments and rounds."""
    kernels = {}
    for results in results_dirs:
        for k in sorted(os.listdir(results)):
            d = os.path.join(results, k)
            if not os.path.isfile(os.path.join(d, "cells.jsonl")):
                continue
            meta, cells, batch = read_batch(d)
            rows = [flatten(k, c) for c in cells]
            if k not in kernels:
                meta["batches"] = [batch]
                kernels[k] = (meta, cells, rows)
            else:
                merge_batch(kernels[k], meta, cells, rows, batch)
    return kernels


def read_batch(d):
    """(meta, cells, batch) of one kernel's directory of one batch; meta
    gains rounds_done, batch is what meta["batches"] keeps of it."""
    with open(os.path.join(d, "cells.jsonl")) as f:
        cells = [json.loads(line) for line in f if line.strip()]
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    rounds = []
    try:
        with open(os.path.join(d, "rounds.done")) as f:
            rounds = [tuple(int(x) for x in line.split()[:2])
                      for line in f if line.strip()]
    except OSError:
        pass
    meta["rounds_done"] = rounds
    # What a user passes again: not where the guest wrote, nor how
    # experiment.sh split the run into boots.
    args = re.sub(r"--(resume|until \S+|out \S+|ram-dir \S+|level keep)\s*", "",
                  meta.get("args", "")).strip()
    spans = boots(meta, cells)
    batch = {"parts": meta.get("parts", ""), "args": args,
             "repeat": meta.get("repeat", 1), "rounds_done": rounds,
             "date": meta["date"], "resumed": meta.get("resumed", []),
             "duration": duration(meta, spans), "boots": spans}
    return meta, cells, batch


def merge_batch(kernel, meta, cells, rows, batch):
    """Add a later batch to a kernel's (meta, cells, rows): its cells, and
    the meta fields of the parts it ran."""
    m0, c0, r0 = kernel
    m0["batches"].append(batch)
    c0.extend(cells)
    r0.extend(rows)
    parts = batch["parts"].split()
    for key, want in META_PARTS.items():
        if key in meta and any(p in parts for p in want):
            m0[key] = meta[key]
    m0["methods"] = " ".join(dict.fromkeys(
        m0.get("methods", "").split() + meta.get("methods", "").split()))


def boots(meta, cells):
    """[(start, last cell's clock)] per boot that left cells: the first and
    each --resume, in guest time (the guest's clock is the host's)."""
    def epoch(d):
        return int(datetime.datetime.strptime(d, "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=datetime.timezone.utc).timestamp())
    starts = [epoch(meta["date"])] + [epoch(r["date"]) for r in meta.get("resumed", [])]
    clocks = sorted(c["clock"] for c in cells if c.get("clock"))
    spans = []
    for i, t0 in enumerate(starts):
        t1 = starts[i + 1] if i + 1 < len(starts) else float("inf")
        mine = [c for c in clocks if t0 <= c < t1]
        if mine:
            spans.append((t0, mine[-1]))
    return spans


def hours(secs):
    return "%d h %02d min" % (secs // 3600, secs % 3600 // 60)


def duration(meta, spans):
    """Guest time the run took: per boot (the first and each --resume), from
    its start to the clock of its last cell (spans, from boots())."""
    nboots = 1 + len(meta.get("resumed", []))
    secs = sum(t1 - t0 for t0, t1 in spans)
    rounds = meta.get("rounds_done", [])
    return "%d of %d rounds finished, %s of guest time%s" % (
        len(rounds), meta.get("repeat", 1), hours(secs),
        " over %d boots (stopped and resumed)" % nboots if nboots > 1 else "")


def overlap(a, b):
    """Seconds two kernels' boots ran at the same time."""
    return sum(max(0, min(a1, b1) - max(a0, b0)) for a0, a1 in a for b0, b1 in b)
