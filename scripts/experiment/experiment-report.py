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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
import wpstat_counters  # noqa: E402

# The module's counters (kmod/wpstat_counters.def), in /proc column order.
COUNTERS = wpstat_counters.names()
# guest-experiment.sh's vmstat_keys.
VMSTAT = ["pgfault", "pgmajfault", "nr_dirtied", "nr_written", "pgpgin",
          "pgpgout"]
COLUMNS = (["kernel", "part", "api", "op", "cache", "unit", "size", "round",
             "passes",
            "wall_ns", "sync_ns", "ops", "bytes", "mib_s", "skipped"]
           + COUNTERS + ["vm_" + k for k in VMSTAT])
PAGE = 4096


def unit_name(n):
    for shift, suffix in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return "%d %s" % (n >> shift, suffix)
    return "%d B" % n


def unknown(kernel, cell, what, have, known, source):
    """A counter or vmstat field the report has no column for is an error:
    a column dropped without a word would look like a counter that never
    moved."""
    extra = sorted(set(have) - set(known))
    if extra:
        sys.exit("experiment-report: %s: %s %s in a %s cell: not in %s"
                 % (kernel, what, ", ".join(extra), cell.get("part", "?"),
                    source))


def flatten(kernel, cell):
    """One CSV row from a cell of any part."""
    row = dict.fromkeys(COLUMNS, "")
    row["kernel"] = kernel
    if cell.get("part") == "java" and "java" not in cell:
        row.update(part="java", api=cell.get("api", ""), op=cell.get("op", ""),
                   cache=cell.get("cache", ""), unit=int(cell.get("units", 0)),
                   skipped="failed (rc %s): %s" % (cell.get("rc"),
                                                   cell.get("error", "")))
        return row
    if cell.get("part") == "java":
        j = cell["java"]
        row.update(part="java", api=j["api"], op=j["op"],
                   cache=j.get("cache", ""), unit=j["unit"], passes=1,
                   round=j.get("round", 1),
                   size=j.get("size", ""), skipped=j.get("skipped", ""))
        if "ns" in j:
            row.update(wall_ns=j["ns"], sync_ns=j["force_ns"],
                       bytes=j["size"],
                       mib_s=round(j["size"] / 2**20 / (j["ns"] / 1e9), 2))
        counters = j.get("counters") or {}
        unknown(kernel, cell, "counter", counters, COUNTERS,
                "kmod/wpstat_counters.def")
        row.update(counters)
        return row
    for k in ("part", "api", "op", "cache", "unit", "size", "skipped"):
        row[k] = cell.get(k, "")
    row["round"] = cell.get("round", 1)
    w = cell.get("wpload")
    if w and w.get("totals"):
        t = w["totals"]
        row.update(passes=t["passes"], wall_ns=t["wall_ns"],
                   sync_ns=t["sync_ns"], ops=t["ops"], bytes=t["bytes"])
        if t["wall_ns"]:
            row["mib_s"] = round(t["bytes"] / 2**20 / (t["wall_ns"] / 1e9), 2)
        counters = t.get("counters") or {}
        unknown(kernel, cell, "counter", counters, COUNTERS,
                "kmod/wpstat_counters.def")
        for k, v in counters.items():
            row[k] = "" if v is None else v
    elif not row["skipped"]:
        row["skipped"] = "failed (rc %s)" % cell.get("rc")
    vmstat = cell.get("vmstat") or {}
    unknown(kernel, cell, "vmstat field", vmstat, VMSTAT,
            "experiment-report.py's VMSTAT")
    for k, v in vmstat.items():
        row["vm_" + k] = v
    return row


def aggregate(rows):
    """One row per cell: the round with the median throughput, with the
    spread of all rounds in mib_s_min/mib_s_max and their number in runs."""
    groups = {}
    for r in rows:
        key = (r["part"], r["api"], r["op"], r["cache"], r["unit"])
        groups.setdefault(key, []).append(r)
    out = []
    for runs in groups.values():
        ok = sorted((r for r in runs if r["mib_s"] != ""),
                    key=lambda r: r["mib_s"])
        if not ok:
            out.append(dict(runs[0], runs=0, mib_s_min="", mib_s_max=""))
            continue
        med = ok[(len(ok) - 1) // 2]
        out.append(dict(med, runs=len(ok), mib_s_min=ok[0]["mib_s"],
                        mib_s_max=ok[-1]["mib_s"]))
    return out


def load(results):
    kernels = {}
    for k in sorted(os.listdir(results)):
        d = os.path.join(results, k)
        path = os.path.join(d, "cells.jsonl")
        if not os.path.isfile(path):
            continue
        with open(path) as f:
            cells = [json.loads(line) for line in f if line.strip()]
        with open(os.path.join(d, "meta.json")) as f:
            meta = json.load(f)
        kernels[k] = (meta, cells, [flatten(k, c) for c in cells])
    return kernels


def measured(rows, **want):
    """Rows matching want that have a throughput, sorted by unit."""
    out = [r for r in rows if r["mib_s"] != "" and
           all(r[k] == v for k, v in want.items())]
    return sorted(out, key=lambda r: r["unit"])


def by_unit(rows, **want):
    return {r["unit"]: r for r in measured(rows, **want)}


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


def tput(r):
    """Median MiB/s, with the range of the rounds when there were several."""
    f = "%.2f" if r["mib_s"] < 10 else "%.0f"
    if r.get("runs", 1) > 1:
        return (f + " (" + f + "-" + f + ")") % (r["mib_s"], r["mib_s_min"],
                                                 r["mib_s_max"])
    return f % r["mib_s"]


def ratio_table(rows, op):
    """Markdown table: per unit, MiB/s of each api and cache, and the ratio."""
    apis = ("mmap", "write")
    label = {"write": "write(2)" if op == "write" else "read(2)",
             "mmap": "mmap"}
    out = ["| unit | " + " | ".join(
        "%s %s MiB/s" % (label[a], c) for c in ("warm", "cold") for a in apis)
        + " | mmap/syscall warm | mmap/syscall cold | pgfault mmap warm"
        " | pgmajfault mmap cold |",
        "|---" * 9 + "|"]
    cells = {(a, c): by_unit(rows, part="ram", api=a, op=op, cache=c)
             for a in apis for c in ("warm", "cold")}
    units = sorted({u for d in cells.values() for u in d})
    for u in units:
        vals = []
        for c in ("warm", "cold"):
            for a in apis:
                r = cells[(a, c)].get(u)
                vals.append(tput(r) if r else "-")
        ratios = []
        for c in ("warm", "cold"):
            m, s = cells[("mmap", c)].get(u), cells[("write", c)].get(u)
            ratios.append("%.2f" % (m["mib_s"] / s["mib_s"]) if m and s else "-")
        mw = cells[("mmap", "warm")].get(u)
        mc = cells[("mmap", "cold")].get(u)
        out.append("| %s | %s | %s | %s | %s |" % (
            unit_name(u), " | ".join(vals), " | ".join(ratios),
            mw["vm_pgfault"] if mw else "-", mc["vm_pgmajfault"] if mc else "-"))
    skipped = sorted({r["unit"] for r in rows if r["part"] == "ram"
                      and r["skipped"]})
    if skipped:
        out.append("")
        out.append("Not measured (unit larger than the file): "
                   + ", ".join(unit_name(u) for u in skipped) + ".")
    return "\n".join(out)


def crossover(rows, op, cache):
    """Smallest unit from which the syscall is at least as fast as mmap for
    every larger unit too, or None; and the largest unit where mmap wins."""
    m = by_unit(rows, part="ram", api="mmap", op=op, cache=cache)
    s = by_unit(rows, part="ram", api="write", op=op, cache=cache)
    units = sorted(set(m) & set(s))
    wins = [u for u in units if m[u]["mib_s"] > s[u]["mib_s"]]
    cross = None
    for i, u in enumerate(units):
        if all(s[v]["mib_s"] >= m[v]["mib_s"] for v in units[i:]):
            cross = u
            break
    return units, wins, cross, m, s


def counter_table(rows, part, columns, key_cols):
    out = ["| " + " | ".join(key_cols + columns) + " |",
           "|---" * (len(key_cols) + len(columns)) + "|"]
    for r in rows:
        if r["part"] != part or r["skipped"]:
            continue
        keys = []
        for k in key_cols:
            v = r[k]
            keys.append(unit_name(v) if k == "unit" else str(v))
        vals = []
        for c in columns:
            v = r[c]
            if c == "mib_s" and v != "":
                v = tput(r)
            elif c.endswith("_ns") and v != "":
                v = "%.1f ms" % (v / 1e6)
            vals.append(str(v))
        out.append("| " + " | ".join(keys + vals) + " |")
    return "\n".join(out)


def findings(rows, meta):
    """(claim, verdict, explanation) triples computed from the cells."""
    res = []
    pages = meta["size"] // PAGE

    for op, small, what in (("read", 4096, "reads"), ("write", 8192, "writes")):
        units, wins, cross, m, s = crossover(rows, op, "warm")
        if not units:
            continue
        call = "read(2)" if op == "read" else "write(2)"
        small_units = [u for u in units if u < small]
        small_win = small_units and all(u in wins for u in small_units)
        ratios = ", ".join("%s %.2f" % (unit_name(u), m[u]["mib_s"] / s[u]["mib_s"])
                           for u in units if u <= 64 << 10)
        expl = ("mmap/%s throughput: %s. Below a page, %s pays one system "
                "call per unit (%s calls at %s) while mmap pays per page "
                "at most, whatever the unit" % (
                    call, ratios, call, s[units[0]]["ops"], unit_name(units[0])))
        if op == "write":
            mw = m[units[0]]
            expl += (": %s write faults (mkwrite_first + mkwrite_wp) for %d "
                     "pages. From one page up, both pay one kernel entry per "
                     "page (write(2): bdp_calls = %s at 4 KiB; mmap: a "
                     "write fault with its own dirty-balancing call, "
                     "bdp_fault_calls = %s)%s." % (
                         mw["mkwrite_first"] + mw["mkwrite_wp"]
                         if mw["mkwrite_first"] != "" else "-",
                         meta["size"] // PAGE,
                         s.get(4096, {}).get("bdp_calls", "-"),
                         m.get(4096, {}).get("bdp_fault_calls", "-"),
                         ", and the fault is the dearer entry" if 4096 in m and 4096 in s
                         and m[4096]["mib_s"] < s[4096]["mib_s"] else ""))
        else:
            expl += ("; the warm mapping is mlocked, so a read is a plain "
                     "memcpy (%s page faults in the whole process)." %
                     m[units[0]]["vm_pgfault"])
        res.append((
            "mmap wins clearly below ~%s (%s, warm cache)" % (unit_name(small), what),
            "agrees" if small_win else "disagrees", expl))

    # Large units: does read()/write() overtake mmap at 64 MiB and beyond?
    for op in ("write", "read"):
        units, wins, cross, m, s = crossover(rows, op, "warm")
        big = [u for u in units if u >= 64 << 20]
        if not big:
            res.append(("read()/write() overtakes mmap at 64 MiB and beyond "
                        "(%ss)" % op, "not measured",
                        "no unit of 64 MiB or more fits the file (--size)"))
            continue
        overtakes = all(s[u]["mib_s"] >= m[u]["mib_s"] for u in big)
        mw = m[big[0]]
        expl = ("at %s: mmap %.0f MiB/s, %s %.0f MiB/s; crossover %s. " % (
            unit_name(big[0]), mw["mib_s"], op, s[big[0]]["mib_s"],
            unit_name(cross) if cross else "none (mmap stays ahead)"))
        if op == "write":
            expl += ("mmap's cost here is per page, not per unit: %s "
                     "write faults (mkwrite_first + mkwrite_wp) and %s "
                     "pgfault for %d pages at every unit size, while "
                     "write(2)'s per-call cost vanishes at large units." % (
                         mw["mkwrite_first"] + mw["mkwrite_wp"]
                         if mw["mkwrite_first"] != "" else "-",
                         mw["vm_pgfault"], pages))
        else:
            expl += ("The measured pass has no faults left to pay: the "
                     "per-page costs the original blames (faults, page-table "
                     "population) went into the warm-up (%s faults in the "
                     "whole process, start-up included). What remains is "
                     "the copy, and read(2) adds a page-cache lookup per "
                     "folio to it. TLB misses cost differently under TCG's "
                     "software TLB than on hardware, so this cell cannot "
                     "confirm or refute that part." % mw["vm_pgfault"])
        res.append(("read()/write() overtakes mmap at 64 MiB and beyond "
                    "(%ss)" % op, "agrees" if overtakes else "disagrees", expl))

    # Pre-faulting does not remove write faults.
    mw = by_unit(rows, part="ram", api="mmap", op="write", cache="warm")
    if mw:
        r = next(iter(mw.values()))
        res.append((
            "a warm mapping (pre-faulted, mlocked) writes without page faults",
            "disagrees" if r["mkwrite_wp"] else "agrees",
            "The original's warm case pre-faults the mapping to take "
            "faults out of the measurement; for writes it cannot. "
            "Pre-faulting by reading maps the pages read-only: with the "
            "file warm and mlocked, a pass still took mkwrite_wp = %s for "
            "%d pages (each first store is a write-protect fault through "
            "->page_mkwrite, then a dirty-balancing call) and %s pgfault "
            "in the process. RocketMQ's writing warm-up avoids this only "
            "until writeback cleans the pages (see the strategies "
            "below)." % (
                r["mkwrite_wp"], pages, r["vm_pgfault"])))

    # Writeback hurts writes, mmap more.  On a device-bound run both go at
    # the device's pace, so the comparison is where the time went: the
    # share of each pass spent blocked in stable-page waits and in
    # dirty-balancing pauses.
    slow_m = by_unit(rows, part="slow", api="mmap", op="write", cache="warm")
    slow_s = by_unit(rows, part="slow", api="write", op="write", cache="warm")
    units = sorted(set(slow_m) & set(slow_s))
    if units:
        def blocked(r):
            return ((r["stable_wait_ns"] or 0) + (r["bdp_pause_ns"] or 0)) / r["wall_ns"]

        def med(xs):
            xs = sorted(xs)
            return xs[(len(xs) - 1) // 2]

        bm = med([blocked(slow_m[u]) for u in units])
        bs = med([blocked(slow_s[u]) for u in units])
        tm = med([slow_m[u]["mib_s"] for u in units])
        ts = med([slow_s[u]["mib_s"] for u in units])
        ram_m = by_unit(rows, part="ram", api="mmap", op="write", cache="warm")
        ram_s = by_unit(rows, part="ram", api="write", op="write", cache="warm")
        rm = med([ram_m[u]["mib_s"] for u in units if u in ram_m] or [0])
        rs = med([ram_s[u]["mib_s"] for u in units if u in ram_s] or [0])
        if bm > 1.1 * bs:
            verdict = "agrees"
        elif bm * 1.1 < bs:
            verdict = "disagrees"
        else:
            verdict = "inconclusive (within 10%)"
        small = [u for u in units if u < PAGE]
        big = [u for u in units if u >= PAGE]
        pages = meta["slow_size"] // PAGE
        wp = med([slow_m[u]["mkwrite_wp"] for u in units])

        def total(d, us, k):
            return sum((d[u][k] or 0) for u in us)
        expl = ("Both run at the device's pace (median mmap %.1f MiB/s, "
                "write(2) %.1f MiB/s, against %.0f and %.0f on the RAM "
                "disk), so what differs is where the time goes. Median "
                "share of a pass spent blocked (stable_wait_ns + "
                "bdp_pause_ns): mmap %.0f%%, write(2) %.0f%%. mmap: every "
                "page cleaned between or during the passes is "
                "write-protected again (median mkwrite_wp %s for %d page "
                "writes; more than that means a page was cleaned under a "
                "store and faulted twice), and a store to a page still "
                "under writeback waits in folio_wait_stable() (%s waits, "
                "%.0f ms over all unit sizes). " % (
                    tm, ts, rm, rs, bm * 100, bs * 100, wp, 2 * pages,
                    total(slow_m, units, "stable_waits"),
                    total(slow_m, units, "stable_wait_ns") / 1e6))
        if small:
            expl += ("write(2) below a page returns to the same page "
                     "and waits for it the same way (%s waits, %.0f ms at "
                     "%s); " % (
                         total(slow_s, small, "stable_waits"),
                         total(slow_s, small, "stable_wait_ns") / 1e6,
                         "-".join(unit_name(u) for u in (small[0], small[-1]))))
        if big:
            expl += ("from one page up write(2) never comes back to a page "
                     "under writeback (%s stable waits) and is paused by "
                     "dirty balancing instead (%s pauses, %.0f ms, against "
                     "mmap's %s pauses, %.0f ms)." % (
                         total(slow_s, big, "stable_waits"),
                         total(slow_s, big, "bdp_pauses"),
                         total(slow_s, big, "bdp_pause_ns") / 1e6,
                         total(slow_m, big, "bdp_pauses"),
                         total(slow_m, big, "bdp_pause_ns") / 1e6))
        res.append(("writes suffer while writeback runs, mmap more than write()",
                    verdict, expl))
    return res


def strategy_section(rows):
    strat = [r for r in rows if r["part"] == "strategies" and not r["skipped"]]
    if not strat:
        return "", []
    cols = ["mib_s", "mkwrite_first", "mkwrite_wp", "mkclean_calls",
            "stable_calls", "stable_waits", "stable_wait_ns", "bdp_calls",
            "bdp_throttled", "bdp_pauses", "vm_pgfault"]
    table = counter_table(rows, "strategies", cols, ["api", "cache"])
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
            "- **RocketMQ's warm-up (a store per page)** leaves the pages "
            "dirty and writable, yet the pass took mkwrite_wp = %s for %d "
            "pages (without warm-up: %s first-write + %s write-protect "
            "faults): the first flush, a sync_file_range over the file, "
            "cleaned and write-protected every warmed page, so each took "
            "a write-protect fault at its first store, and again after "
            "any flush that caught it part-filled. Warm-up cannot prevent "
            "write-protect faults after writeback, nor the stable-page "
            "waits (%s, without it %s)." % (
                ww["mkwrite_wp"], ww["size"] // PAGE, p["mkwrite_first"],
                p["mkwrite_wp"], ww["stable_waits"], p["stable_waits"]))
    wp, wb = get.get(("write", "plain")), get.get(("write", "write-buffer"))
    if wp and wb:
        notes.append(
            "- **The write buffer** removes the page faults (mkwrite 0, "
            "pgfault %s) and most system calls: bdp_calls %s -> %s and "
            "stable_calls %s -> %s (one per page per commit instead of one "
            "per message). It cannot remove the stable-page waits: a "
            "commit into the page the previous flush left under writeback "
            "waits like a store does (stable_waits %s, %.1f ms)." % (
                wb["vm_pgfault"], wp["bdp_calls"], wb["bdp_calls"],
                wp["stable_calls"], wb["stable_calls"], wb["stable_waits"],
                (wb["stable_wait_ns"] or 0) / 1e6))
    return table, notes


def java_section(rows):
    jr = [r for r in rows if r["part"] == "java"]
    if not jr:
        return ""
    cols = ["mib_s", "mkwrite_first", "mkwrite_wp", "mkclean_calls",
            "dirtied", "bdp_calls", "stable_calls"]
    out = [counter_table(rows, "java", cols, ["api", "cache", "unit"])]
    return "\n".join(out)


def render(kernels, docs):
    outdir = os.path.join(docs, "experiment")
    os.makedirs(outdir, exist_ok=True)
    md = ["# MappedByteBuffer versus FileChannel, with kernel counters",
          "",
          "Generated by `make experiment` (`scripts/experiment/experiment.sh`, "
          "`scripts/experiment/guest-experiment.sh`, `scripts/experiment/experiment-report.py`); "
          "do not edit by hand. Every number below comes from the run "
          "whose kernel, date and machine are listed; the per-cell data "
          "(CSV and JSON, with every wpstat counter and the /proc/vmstat "
          "deltas) are next to the charts in `docs/experiment/<kernel>/`.",
          "",
          "The original analysis (JDK 17 on Linux 5.4) wrote and read a "
          "1 GiB file in units from 64 B to 512 MiB with MappedByteBuffer "
          "(`put` + `force`) and FileChannel (`write` + `force`), with the "
          "file in the page cache (pre-faulted, mlocked) and not. Here "
          "`wpload` does the same in C (`--mode mmap|write|mmap-read|read`, "
          "one pass, then `msync(MS_SYNC)` or `fsync`; warm: the file read "
          "into the cache and, for mmap, `--warmup`: a load per page, "
          "`mlock`, `MADV_WILLNEED`; cold: `fsync` + `POSIX_FADV_DONTNEED`), "
          "in a 2-vCPU TCG guest on ext4 over a RAM disk, and "
          "`scripts/experiment/MmapVsChannel.java` repeats the write side with the "
          "JDK. Absolute numbers are those of an emulated CPU (tens of "
          "times slower than hardware); the comparisons are between cells "
          "of one run.",
          ""]
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
        rows = aggregate(rows)

        md += ["## Kernel %s" % kernel, "",
               "Run %s on %s, %d vCPU, %d MiB guest memory, %s. File %s "
               "(RAM disk), %s (slow device: write delay %d ms, "
               "stable_writes=1), %s (strategies)." % (
                   meta["date"], meta["cpu"], meta["cpus"],
                   meta["mem_kib"] // 1024, meta.get("java", ""),
                   unit_name(meta["size"]), unit_name(meta["slow_size"]),
                   meta["slow_delay_ms"], unit_name(meta["strategy_size"])),
               "",
               "Reproduce: `make experiment%s%s`." % (
                   "" if kernel.startswith("6.12.") else " KVER=" + kernel,
                   " EXPERIMENT_ARGS='%s'" % meta["args"]
                   if meta.get("args") else ""),
               "",
               "Throughput is bytes over the pass's wall time, the closing "
               "`msync`/`fsync` included; each cell is the median of %d "
               "rounds (their range in brackets), and its counters are "
               "those of the median round. wpstat counters cover the "
               "measured pass(es) only; the `vm_*` (/proc/vmstat) deltas "
               "cover the whole wpload process, its warm-up and start-up "
               "(about 450 faults) included." % meta.get("repeat", 1),
               ""]
        short = sorted({r["part"] for r in rows
                        if r["runs"] and r["runs"] < meta.get("repeat", 1)})
        if short:
            md += ["**This run is incomplete:** it ended before its last "
                   "round (the guest's time limit), so some cells of %s "
                   "have fewer rounds than %d; a value without a range "
                   "comes from a single round. Column `round` of the CSV "
                   "has every sample." % (", ".join(short),
                                          meta.get("repeat", 1)), ""]

        charts = []
        for op in ("write", "read"):
            series, faults = [], []
            for api in ("mmap", "write"):
                for cache in ("warm", "cold"):
                    pts = [(r["unit"], r["mib_s"]) for r in measured(
                        rows, part="ram", api=api, op=op, cache=cache)]
                    name = "mmap" if api == "mmap" else (
                        "write(2)" if op == "write" else "read(2)")
                    series.append(("%s %s" % (name, cache), pts))
            for cache in ("warm", "cold"):
                pts = [(r["unit"], r["vm_pgfault"]) for r in measured(
                    rows, part="ram", api="mmap", op=op, cache=cache)]
                faults.append(("page faults, mmap %s" % cache, pts))
            name = "ram-%s.svg" % op
            chart(os.path.join(kdir, name),
                  "%ss, ext4 on a RAM disk, %s (%s)" % (
                      op.capitalize(), unit_name(meta["size"]), kernel),
                  series, faults, "page faults per pass (/proc/vmstat pgfault)")
            charts.append((op, name))
        slow = [(api, [(r["unit"], r["mib_s"]) for r in measured(
            rows, part="slow", api=api, op="write", cache="warm")])
            for api in ("mmap", "write")]
        if any(p for _, p in slow):
            faults = [("stable waits, %s" % a, [(r["unit"], r["stable_waits"])
                       for r in measured(rows, part="slow", api=a, op="write",
                                         cache="warm")])
                      for a in ("mmap", "write")]
            chart(os.path.join(kdir, "slow-write.svg"),
                  "Writes while writeback runs (slow device, %s)" % kernel,
                  [("mmap" if a == "mmap" else "write(2)", p) for a, p in slow],
                  faults, "stable-page waits")
            charts.append(("slow", "slow-write.svg"))
        java = [(api, [(r["unit"], r["mib_s"]) for r in measured(
            rows, part="java", api=api, op="write", cache="warm")])
            for api in ("mmap", "channel")]
        if any(p for _, p in java):
            faults = [("mkwrite faults, MappedByteBuffer",
                       [(r["unit"], (r["mkwrite_first"] or 0) + (r["mkwrite_wp"] or 0))
                        for r in measured(rows, part="java", api="mmap",
                                          op="write", cache="warm")])]
            chart(os.path.join(kdir, "java-write.svg"),
                  "JDK: MappedByteBuffer.put+force vs FileChannel.write+force (%s)"
                  % kernel,
                  [("MappedByteBuffer" if a == "mmap" else "FileChannel", p)
                   for a, p in java], faults, "mkwrite faults per pass")
            charts.append(("java", "java-write.svg"))

        md += ["### Where this machine agrees and disagrees with the original", "",
               "| original finding | here | why, from the counters |",
               "|---|---|---|"]
        for claim, verdict, expl in findings(rows, meta):
            md.append("| %s | **%s** | %s |" % (claim, verdict, expl))
        md.append("")
        for op, name in charts:
            md += ["![%s](experiment/%s/%s)" % (op, kernel, name), ""]
        for op in ("write", "read"):
            md += ["### %ss on the RAM disk" % op.capitalize(), "",
                   ratio_table(rows, op), ""]
        md += ["Counters of the write cells (per pass):", "",
               counter_table(
                   [r for r in rows if r["op"] == "write"], "ram",
                   ["mib_s", "mkwrite_first", "mkwrite_wp", "mkclean_calls",
                    "stable_calls", "dirtied", "bdp_calls", "bdp_throttled",
                    "vm_pgfault", "vm_pgmajfault"],
                   ["api", "cache", "unit"]), ""]
        if any(r["part"] == "slow" for r in rows):
            md += ["### Writes while writeback runs (slow device)", "",
                   "Two passes per cell, `msync`/`fsync` after each; "
                   "dirty_background_bytes 2 MiB, dirty_bytes 8 MiB, "
                   "flusher every second.", "",
                   counter_table(rows, "slow",
                                 ["mib_s", "mkwrite_first", "mkwrite_wp",
                                  "mkclean_calls", "stable_waits",
                                  "stable_wait_ns", "bdp_throttled",
                                  "bdp_pauses", "bdp_pause_ns"],
                                 ["api", "unit"]), ""]
        table, notes = strategy_section(rows)
        if table:
            md += ["### RocketMQ's strategies (slow device)", "",
                   "An append of 1000-byte messages with an asynchronous flush "
                   "(`sync_file_range(SYNC_FILE_RANGE_WRITE)`, which starts "
                   "writeback and does not wait, like RocketMQ's flush "
                   "thread) every 16 messages. `cache` names the strategy: "
                   "`plain`; `warmup-read` (`--warmup=read`: "
                   "MappedByteBuffer.load() + mlock + MADV_WILLNEED); "
                   "`warmup-write` (`--warmup=write`: a store per page, as "
                   "RocketMQ's warmMappedFile(), + mlock + MADV_WILLNEED); "
                   "`write-buffer` (`--write-buffer 16K`: RocketMQ's "
                   "transient store pool, committed with pwrite).", "",
                   table, ""] + notes + [""]
        jt = java_section(rows)
        if jt:
            md += ["### The JDK version", "",
                   "`java -XX:-UsePerfData scripts/experiment/MmapVsChannel.java` "
                   "under `wpstat run`; the per-unit counters are the file's "
                   "row of /proc/wpstat/inodes read by the program around "
                   "each unit size (warm: `load()` on the buffer first).", "",
                   jt, ""]
    with open(os.path.join(docs, "experiment.md"), "w") as f:
        f.write("\n".join(md))
    return os.path.join(docs, "experiment.md")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", required=True)
    ap.add_argument("--docs", required=True)
    args = ap.parse_args()
    kernels = load(args.results)
    if not kernels:
        sys.exit("experiment-report: no cells.jsonl under %s" % args.results)
    print(render(kernels, args.docs))


if __name__ == "__main__":
    main()
