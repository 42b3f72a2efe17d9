#!/usr/bin/env python3
"""Render the MappedByteBuffer-versus-FileChannel experiment.

Reads RESULTS/<kernel>/cells.jsonl and meta.json (from
scripts/experiment/guest-experiment.sh) and writes, under DOCS:
  experiment.md                    the report
  experiment/<kernel>/cells.csv    one row per cell, every counter
  experiment/<kernel>/cells.json   the same rows as a JSON array
  experiment/<kernel>/meta.json    kernel, date, machine, parameters
  experiment/<kernel>/*.svg        charts

The findings the report states are computed from the cells, and so is
whether this machine agrees with each finding of the original analysis.

  experiment-report.py --results DIR --docs DIR
"""

import argparse
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from experiment_cells import (COLUMNS, PAGE, aggregate, blocked_ns,  # noqa: E402
                              failed, measured, ms, spread, tput, unit_name)
from experiment_findings import findings  # noqa: E402
from experiment_outliers import outliers  # noqa: E402
from experiment_results import hours, load, overlap  # noqa: E402
from experiment_verdicts import MIN_ROUNDS, Judge  # noqa: E402

def chart(path, title, series, faults, fault_label):
    """Throughput lines on a log-x axis; fault counts on a second axis."""
    fig, ax = plt.subplots(figsize=(9, 5))
    styles = ["-o", "--o", "-s", "--s"]
    for i, (label, pts) in enumerate(series):
        if pts:
            xs, ys = zip(*pts)
            ax.plot(xs, ys, styles[i % len(styles)], label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("unit size (bytes per put/write/get/read)")
    ax.set_ylabel("throughput, MiB/s (log)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    if faults:
        ax2 = ax.twinx()
        width = 0.25
        for i, (label, pts) in enumerate(faults):
            if pts:
                xs, ys = zip(*pts)
                ax2.bar([x * 2 ** (width * (i - 0.5) * 2) for x in xs], ys,
                        width=[x * 0.35 for x in xs], alpha=0.25,
                        label=label, color="C%d" % (i + 4))
        ax2.set_ylabel(fault_label)
        ax2.set_yscale("symlog")
        h1, l1 = ax.get_legend_handles_labels()
        h2, l2 = ax2.get_legend_handles_labels()
        ax.legend(h1 + h2, l1 + l2, fontsize=8, loc="best")
    else:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)



def ratio_table(rows, op, method):
    """Markdown table: per unit, MiB/s of each api and cache, the mmap to
    syscall ratio, and where mmap's time went."""
    apis = ("mmap", "write")
    label = {"write": "write(2)" if op == "write" else "read(2)", "mmap": "mmap"}
    head = ["unit"] + ["%s %s MiB/s" % (label[a], c) for c in ("warm", "cold")
                       for a in apis] + ["mmap/syscall warm", "mmap/syscall cold"]
    if op == "write":
        head += ["mkwrite_ns mmap warm", "mkwrite_ns mmap cold",
                 "sync mmap warm", "blocked mmap warm"]
    head += ["pgmajfault mmap cold"]
    out = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    cells = {}
    for a in apis:
        for c in ("warm", "cold"):
            m = method
            if op == "read" and c == "warm":
                m = None
            cells[(a, c)] = {r["unit"]: r for r in rows
                             if r["part"] == "ram" and r["api"] == a and r["op"] == op
                             and r["cache"] == c and r["mib_s"] != ""
                             and (m is None or r["method"] == m)
                             and (m is not None or r["method"] in (method, "original"))}
    units = sorted({u for d in cells.values() for u in d})
    for u in units:
        vals = [tput(cells[(a, c)].get(u)) for c in ("warm", "cold") for a in apis]
        rat = []
        for c in ("warm", "cold"):
            m, s = cells[("mmap", c)].get(u), cells[("write", c)].get(u)
            rat.append("%.2f" % (m["mib_s"] / s["mib_s"]) if m and s else "-")
        mw, mc = cells[("mmap", "warm")].get(u), cells[("mmap", "cold")].get(u)
        extra = []
        if op == "write":
            extra = [ms(mw["mkwrite_ns"]) if mw else "-",
                     ms(mc["mkwrite_ns"]) if mc else "-",
                     ms(mw["sync_ns"]) if mw else "-",
                     ms(blocked_ns(mw)) if mw else "-"]
        extra.append(str(mc["vm_pgmajfault"]) if mc else "-")
        out.append("| %s | %s |" % (unit_name(u), " | ".join(vals + rat + extra)))
    skipped = sorted({r["unit"] for r in rows if r["part"] == "ram"
                      and r["skipped"] and not failed(r)})
    if skipped:
        out += ["", "Not measured (unit larger than the file): "
                + ", ".join(unit_name(u) for u in skipped) + "."]
    return "\n".join(out)


def counter_table(rows, part, columns, key_cols):
    out = ["| " + " | ".join(key_cols + columns) + " |",
           "|---" * (len(key_cols) + len(columns)) + "|"]
    for r in rows:
        if r["part"] != part or (r["skipped"] and not failed(r)):
            continue
        keys = [unit_name(r[k]) if k == "unit" else str(r[k]) for k in key_cols]
        vals = []
        for c in columns:
            v = r.get(c, "")
            if c == "mib_s":
                v = tput(r) if v != "" else "failed"
            elif c == "blocked":
                v = ms(blocked_ns(r)) if r["mib_s"] != "" else ""
            elif c.endswith("_ns") and v != "":
                v = ms(v)
            vals.append(str(v))
        out.append("| " + " | ".join(keys + vals) + " |")
    return "\n".join(out)


def rocketmq_table(rows):
    rm = [r for r in rows if r["part"] == "rocketmq"]
    if not rm:
        return ""
    out = ["| setting | rounds | p50 ms | p99 ms | worst put ms (after the "
           "first) | first put ms | mkwrite_first | mkwrite_wp | mkwrite_ns | "
           "mkclean_calls | stable_waits | stable_wait_ns | bdp_pauses |",
           "|---" * 13 + "|"]

    def rng(r, k):
        v = spread(r, k)
        return "%.2f (%.2f-%.2f)" % (v[2] / 1e6, v[0] / 1e6, v[1] / 1e6) if v else "-"
    for r in sorted(rm, key=lambda r: r["cache"]):
        out.append("| %s | %d%s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["cache"], r["runs"], " (+%d failed)" % r["failed"] if r["failed"] else "",
            rng(r, "p50_ns"), rng(r, "p99_ns"), rng(r, "max_ns"), rng(r, "first_ns"),
            r["mkwrite_first"], r["mkwrite_wp"], ms(r["mkwrite_ns"]),
            r["mkclean_calls"], r["stable_waits"], ms(r["stable_wait_ns"]),
            r["bdp_pauses"]))
    return "\n".join(out)


def strategy_notes(rows):
    strat = [r for r in rows if r["part"] == "strategies" and r["mib_s"] != ""]
    get = {(r["api"], r["cache"]): r for r in strat}
    notes = []
    p, wr, ww = (get.get(("mmap", k)) for k in ("plain", "warmup-read",
                                                  "warmup-write"))
    if p and wr:
        notes.append(
            "- **Warm-up by reading** turns first-write faults into "
            "write-protect faults (mkwrite_first %s -> %s, mkwrite_wp %s -> "
            "%s): the page is present, but read-only." % (
                p["mkwrite_first"], wr["mkwrite_first"], p["mkwrite_wp"],
                wr["mkwrite_wp"]))
    if p and ww:
        notes.append(
            "- **A store per page as warm-up** leaves the pages dirty and "
            "writable, yet the pass took mkwrite_wp = %s for %d pages: the "
            "first flush cleaned and write-protected every warmed page. "
            "Warm-up cannot prevent write-protect faults after writeback, "
            "nor the stable-page waits (%s, without it %s)." % (
                ww["mkwrite_wp"], ww["size"] // PAGE, ww["stable_waits"],
                p["stable_waits"]))
    wp, wb = get.get(("write", "plain")), get.get(("write", "write-buffer"))
    if wp and wb:
        notes.append(
            "- **The write buffer** removes the page faults and most system "
            "calls (bdp_calls %s -> %s), not the stable-page waits "
            "(stable_waits %s, %.1f ms)." % (
                wp["bdp_calls"], wb["bdp_calls"], wb["stable_waits"],
                (wb["stable_wait_ns"] or 0) / 1e6))
    return notes


INTRO = [
    "# MappedByteBuffer versus FileChannel, with kernel counters",
    "",
    "Generated by `make experiment` (`scripts/experiment/experiment.sh`, "
    "`scripts/experiment/guest-experiment.sh`, "
    "`scripts/experiment/experiment-report.py`); do not edit by hand. Every "
    "number below comes from the run whose kernel, date and machine are "
    "listed; the per-cell data (CSV and JSON, every round, with every wpstat "
    "counter and the /proc/vmstat deltas) are next to the charts in "
    "`docs/experiment/<kernel>/`.",
    "",
    "## What is reproduced, and how it differs",
    "",
    "The analysis reads the Linux 5.4 source; its benchmark (JDK 17) ran on "
    "macOS. It wrote and read a 1 GiB file in units from 64 B to 512 MiB "
    "with MappedByteBuffer and FileChannel, timed `put`/`write` without "
    "`force()`, with the file in the page cache (the mapping pre-faulted and "
    "mlocked) and not, cold meaning a fresh sparse file. Here the same "
    "sweep runs on Linux (Debian's 6.1 and 6.12) in a 2-vCPU TCG guest, on "
    "ext4 with 4 KiB blocks (checked in every cell: `block_size`) over a RAM "
    "disk, in C (`wpload`) and with the JDK "
    "(`scripts/experiment/MmapVsChannel.java`, writes), under two methods:",
    "",
    "- **original**, as that benchmark: nothing flushes inside the timed "
    "region (dirty limits above twice the file, periodic writeback off, "
    "and the filesystem over three times the file, so that ext4's "
    "free-space writeback, which starts when delayed allocation has "
    "reserved half the free blocks, never runs: nothing is written back "
    "or throttled during a cell, and a write cell that cleaned a page "
    "counts as a failed round); a hot mmap "
    "write runs on a mapping warmed by a store per page (+ `mlock` + "
    "`MADV_WILLNEED`; the JDK: `load()` and one `put` pass), so no fault is "
    "left; cold is a fresh sparse file (wpload creates it; the JDK's driver "
    "truncates one before the JVM). The seed's throughput claims are "
    "judged under this method.",
    "- **kernel**, with writeback in the loop: every write pass ends with "
    "`msync(MS_SYNC)`/`fsync` (`force()`), timed; a hot mapping is warmed "
    "by a load per page (read-only PTEs), so every first store is a "
    "write-protect fault; cold is the existing file evicted (`fsync` + "
    "`POSIX_FADV_DONTNEED`), so a cold mmap reads every page back and a "
    "whole-page `write(2)` reads none. The kernel-path claims (faults "
    "after writeback, stable pages, throttling) are judged under it.",
    "",
    "Warm reads are one procedure for both methods and run once, under "
    "original. Absolute numbers are those of an emulated CPU (tens of times "
    "slower than hardware); comparisons are between cells of one run, whose "
    "rounds are interleaved (every cell once per round, the methods "
    "alternating which goes first).",
    "",
    "**How verdicts are made.** A cell is its rounds' median with their "
    "range and count: `median (min-max, rounds)`. A cell with fewer than "
    "%d good rounds, or with a failed round, gives no verdict, and is listed "
    "below its kernel's findings. A comparison says *clearly* only where "
    "the two cells' ranges do not overlap; a claim over several units "
    "*agrees clearly* only if every unit does. The C and the JDK runs of a "
    "claim give one verdict when they agree; when they do not, the "
    "disagreement is the verdict, with the counters of both. Rounds more "
    "than twice or under half their cell's median are listed as outliers, "
    "each explained by the counter that moved with it or marked "
    "unexplained." % MIN_ROUNDS,
    ""]


def render(kernels, docs):
    outdir = os.path.join(docs, "experiment")
    os.makedirs(outdir, exist_ok=True)
    md = list(INTRO)
    for kernel, (meta, cells, rows) in kernels.items():
        kdir = os.path.join(outdir, kernel)
        os.makedirs(kdir, exist_ok=True)
        with open(os.path.join(kdir, "cells.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS)
            w.writeheader()
            w.writerows(rows)
        with open(os.path.join(kdir, "cells.json"), "w") as f:
            json.dump(rows, f, indent=1)
            f.write("\n")
        with open(os.path.join(kdir, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1)
            f.write("\n")
        blocks = sorted({r["block_size"] for r in rows
                         if r["part"] in ("ram", "java") and r["block_size"] != ""})
        slow_blocks = sorted({r["block_size"] for r in rows if r["part"] in
                              ("slow", "strategies", "rocketmq")
                              and r["block_size"] != ""})
        agg = aggregate(rows)
        methods = meta.get("methods", "kernel").split()
        judge = Judge()
        found = findings(agg, meta, judge)

        md += ["## Kernel %s" % kernel, "",
               "Run %s on %s, %d vCPU, %d MiB guest memory, %s. File %s on "
               "the RAM disk (ext4, block size %s) when part ram runs, %s on the slow device "
               "(ext4, block size %s; write delay %d ms, stable_writes=1), %s commit-log file for "
               "the strategies and RocketMQ. Methods: %s. %s" % (
                   meta["date"], meta["cpu"], meta["cpus"],
                   meta["mem_kib"] // 1024, meta.get("java", ""),
                   unit_name(meta["size"]),
                   "/".join(str(b) for b in blocks) if blocks else "not recorded",
                   unit_name(meta["slow_size"]),
                   "/".join(str(b) for b in slow_blocks) if slow_blocks else "not recorded",
                   meta["slow_delay_ms"],
                   unit_name(meta["strategy_size"]), ", ".join(methods),
                   " ".join("Parts %s: %s." % (b["parts"], b["duration"])
                            for b in meta["batches"])),
               ""]
        # Kernels run side by side (experiment.sh --kver each, to halve a
        # run of hours) share the host's CPUs: say so, from the clocks.
        mine = [s for b in meta["batches"] for s in b["boots"]]
        shared = [(k, overlap(mine, [s for b in m["batches"] for s in b["boots"]]))
                  for k, (m, _, _) in kernels.items() if k != kernel]
        shared = [(k, secs) for k, secs in shared if secs > 0]
        if shared:
            md += ["**This guest shared the host** with %s for %s of its "
                   "%s of guest time (their cells' clocks overlap): absolute numbers are "
                   "not comparable across kernels. The cells a verdict "
                   "compares ran in one guest and round." % (
                       " and ".join("the %s guest" % k for k, _ in shared),
                       hours(max(secs for _, secs in shared)),
                       hours(sum(t1 - t0 for t0, t1 in mine))), ""]
        if (blocks and blocks != [PAGE]) or (slow_blocks and slow_blocks != [PAGE]):
            md += ["**Block size is not 4 KiB** (%s): a page holds several "
                   "blocks, so sub-page writes and reads of an evicted file "
                   "differ from the analysis' setting." %
                   "/".join(map(str, sorted(set(blocks + slow_blocks)))), ""]
        md += ["Reproduce: %s." % "; then ".join(
                   "`make experiment%s%s`" % (
                       "" if len(kernels) > 1 else " KVER=" + kernel,
                       " EXPERIMENT_ARGS='%s'" % b["args"] if b["args"] else "")
                   for b in meta["batches"]),
               "",
               "Module level: %s%s. wpstat counters cover the measured pass(es) only; the `vm_*` "
               "(/proc/vmstat) deltas cover the whole wpload process, its "
               "warm-up and start-up (about 450 faults) included." % (
                   meta.get("level", "not recorded"),
                   "" if meta.get("level") == "timing" else
                   " (mkwrite_ns, the time inside ->page_mkwrite, is kept only "
                   "at level timing)"), ""]

        md += ["### Where this machine agrees and disagrees with the original", "",
               "| original finding | method | here | why, from the counters |",
               "|---|---|---|---|"]
        for claim, method, verdict, expl in found:
            md.append("| %s | %s | **%s** | %s |" % (claim, method, verdict, expl))
        md.append("")
        if judge.refused:
            md += ["**No verdict from these cells** (fewer than %d good "
                   "rounds, or a failed round):" % MIN_ROUNDS, ""]
            md += ["- %s" % c for c in sorted(judge.refused)] + [""]
        failed_rows = [r for r in rows if failed(r)]
        if failed_rows:
            md += ["**Failed runs** (%d): %s." % (len(failed_rows), "; ".join(
                "%s %s %s %s %s round %s: %s" % (
                    r["part"], r["method"], r["api"], r["cache"],
                    unit_name(r["unit"]) if r["unit"] != "" else "", r["round"],
                    r["skipped"]) for r in failed_rows[:20])), ""]
        odd = outliers(agg)
        if odd:
            md += ["### Outliers", ""] + odd + [""]

        for method in methods if any(r["part"] == "ram" for r in agg) else ():
            for op in ("write", "read"):
                series, faults = [], []
                for api in ("mmap", "write"):
                    for cache in ("warm", "cold"):
                        m = "original" if (op == "read" and cache == "warm"
                                           and "original" in methods) else method
                        pts = [(r["unit"], r["mib_s"]) for r in measured(
                            agg, part="ram", method=m, api=api, op=op, cache=cache)]
                        name = "mmap" if api == "mmap" else (
                            "write(2)" if op == "write" else "read(2)")
                        series.append(("%s %s" % (name, cache), pts))
                for cache in ("warm", "cold"):
                    pts = [(r["unit"], r["vm_pgfault"]) for r in measured(
                        agg, part="ram", method=method, api="mmap", op=op,
                        cache=cache)]
                    faults.append(("page faults, mmap %s" % cache, pts))
                name = "ram-%s-%s.svg" % (op, method)
                chart(os.path.join(kdir, name),
                      "%ss, ext4 on a RAM disk, %s, method %s (%s)" % (
                          op.capitalize(), unit_name(meta["size"]), method, kernel),
                      series, faults, "page faults per pass (/proc/vmstat pgfault)")
                md += ["### %ss on the RAM disk, method %s" % (op.capitalize(), method),
                       "", "![%s %s](experiment/%s/%s)" % (op, method, kernel, name), "",
                       ratio_table(agg, op, method), ""]
            md += ["Counters of the write cells, method %s (median round, "
                   "per pass; blocked = stable_wait_ns + bdp_pause_ns):" % method, "",
                   counter_table(
                       [r for r in agg if r["op"] == "write" and r["method"] == method],
                       "ram",
                       ["mib_s", "mkwrite_first", "mkwrite_wp", "mkwrite_ns",
                        "mkclean_calls", "stable_calls", "dirtied", "bdp_calls",
                        "bdp_throttled", "blocked", "sync_ns", "vm_pgfault",
                        "vm_pgmajfault"],
                       ["api", "cache", "unit"]), ""]
        if any(r["part"] == "slow" for r in agg):
            slow = [(api, [(r["unit"], r["mib_s"]) for r in measured(
                agg, part="slow", api=api, op="write", cache="warm")])
                for api in ("mmap", "write")]
            faults = [("stable waits, %s" % a, [(r["unit"], r["stable_waits"])
                       for r in measured(agg, part="slow", api=a, op="write",
                                         cache="warm")])
                      for a in ("mmap", "write")]
            chart(os.path.join(kdir, "slow-write.svg"),
                  "Writes while writeback runs (slow device, %s)" % kernel,
                  [("mmap" if a == "mmap" else "write(2)", p) for a, p in slow],
                  faults, "stable-page waits")
            md += ["### Writes while writeback runs (slow device, method kernel)", "",
                   "Two passes per cell, `msync`/`fsync` after each; "
                   "dirty_background_bytes 2 MiB, dirty_bytes 8 MiB, "
                   "flusher every second.", "",
                   "![slow](experiment/%s/slow-write.svg)" % kernel, "",
                   counter_table(agg, "slow",
                                 ["mib_s", "mkwrite_first", "mkwrite_wp",
                                  "mkwrite_ns", "mkclean_calls", "stable_waits",
                                  "stable_wait_ns", "bdp_throttled",
                                  "bdp_pauses", "bdp_pause_ns", "blocked"],
                                 ["api", "unit"]), ""]
        rt = rocketmq_table(agg)
        if rt:
            md += ["### RocketMQ's strategies, as RocketMQ runs them (slow device)", "",
                   "RocketMQ's own store (rocketmq-store 5.3.1, "
                   "`selftests/clients/`), one JVM per setting and round: a "
                   "DefaultMessageStore with ASYNC_FLUSH, %d puts of 1 KiB "
                   "messages as fast as they go, its own threads: "
                   "FlushRealTimeService (`force()` of the mapping every "
                   "500 ms, flushIntervalCommitLog) and, with the transient "
                   "store pool, CommitRealTimeService (a `write(2)` of the "
                   "pool buffer every 200 ms, commitIntervalCommitLog, then "
                   "the flush's `fdatasync`); warm-up is "
                   "warmMapedFileEnable (a store per page of each new file, "
                   "mlock). The kernel's default writeback settings. "
                   "Latencies: median over the rounds (range); counters: "
                   "the commit log's, median round." % meta.get("rocketmq_messages", 0),
                   "", rt, ""]
        table = counter_table(agg, "strategies",
                              ["mib_s", "mkwrite_first", "mkwrite_wp", "mkwrite_ns",
                               "mkclean_calls", "stable_calls", "stable_waits",
                               "stable_wait_ns", "bdp_calls", "bdp_pauses"],
                              ["api", "cache"])
        if any(r["part"] == "strategies" for r in agg):
            md += ["### The strategies imitated by wpload (slow device)", "",
                   "1000-byte appends with `sync_file_range(WRITE)` every 16: "
                   "`plain`; `warmup-read` (a load per page + mlock); "
                   "`warmup-write` (a store per page + mlock); `write-buffer` "
                   "(16 KiB staged, committed with pwrite).", "",
                   table, ""] + strategy_notes(agg) + [""]
        if any(r["part"] == "java" for r in agg):
            java = [("%s %s %s" % ("MappedByteBuffer" if a == "mmap" else "FileChannel",
                                   m, "warm"),
                     [(r["unit"], r["mib_s"]) for r in measured(
                         agg, part="java", method=m, api=a, cache="warm")])
                    for m in methods for a in ("mmap", "channel")]
            chart(os.path.join(kdir, "java-write.svg"),
                  "JDK writes, warm (%s)" % kernel, java, [], "")
            md += ["### The JDK version", "",
                   "`java -XX:-UsePerfData scripts/experiment/MmapVsChannel.java` "
                   "under `wpstat run`, one JVM per method, API and round "
                   "(warm, every unit) or per cold unit; the counters are the "
                   "file's row of /proc/wpstat/inodes, read by the program "
                   "around each unit.", "",
                   "![java](experiment/%s/java-write.svg)" % kernel, "",
                   counter_table(agg, "java",
                                 ["mib_s", "mkwrite_first", "mkwrite_wp",
                                  "mkwrite_ns", "mkclean_calls", "dirtied",
                                  "bdp_calls", "stable_calls", "sync_ns"],
                                 ["method", "api", "cache", "unit"]), ""]
    with open(os.path.join(docs, "experiment.md"), "w") as f:
        f.write("\n".join(md))
    return os.path.join(docs, "experiment.md")


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
