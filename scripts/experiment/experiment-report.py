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
import functools
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from experiment_cells import (COLUMNS, PAGE, aggregate, blocked_ns,  # noqa: E402
                              by_unit, cell_name, failed, fmt, measured,
                              median, ms, spread, tput, unit_name)
from experiment_results import hours, load, overlap  # noqa: E402

# A cell gives a verdict only with at least this many good rounds and no
# failed one.
MIN_ROUNDS = 3


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



class Judge:
    """Compares cells; remembers every cell refused for too few rounds."""

    def __init__(self):
        self.refused = {}

    def usable(self, r):
        if r is None:
            return False
        if r["runs"] >= MIN_ROUNDS and not r["failed"]:
            return True
        self.refused[cell_name(r)] = True
        return False

    def compare(self, a, b):
        """'a' or 'b' (the faster by median) and whether clearly: the
        ranges of their rounds do not overlap.  None if either cell has too
        few rounds."""
        ua, ub = self.usable(a), self.usable(b)
        if not (ua and ub):
            return None
        if a["mib_s_min"] > b["mib_s_max"]:
            return "a", True
        if b["mib_s_min"] > a["mib_s_max"]:
            return "b", True
        return ("a" if a["mib_s"] >= b["mib_s"] else "b"), False


def claim_over_units(judge, a, b, units, a_name, b_name):
    """Verdict on 'a is faster than b at every unit of units'."""
    outcome = {}
    for u in units:
        c = judge.compare(a.get(u), b.get(u))
        if c is not None:
            outcome[u] = c
    untested = [u for u in units if u not in outcome]
    if not outcome:
        return "no verdict", "fewer than %d good rounds in every cell" % MIN_ROUNDS
    clearly_a = [u for u, c in outcome.items() if c == ("a", True)]
    clearly_b = [u for u, c in outcome.items() if c == ("b", True)]
    lean_a = [u for u, c in outcome.items() if c == ("a", False)]
    lean_b = [u for u, c in outcome.items() if c == ("b", False)]

    def names(us):
        return ", ".join(unit_name(u) for u in sorted(us))
    parts = []
    if clearly_a:
        parts.append("%s clearly ahead at %s" % (a_name, names(clearly_a)))
    if lean_a:
        parts.append("%s ahead, ranges overlapping, at %s" % (a_name, names(lean_a)))
    if lean_b:
        parts.append("%s ahead, ranges overlapping, at %s" % (b_name, names(lean_b)))
    if clearly_b:
        parts.append("%s clearly ahead at %s" % (b_name, names(clearly_b)))
    if untested:
        parts.append("not judged (too few rounds) at %s" % names(untested))
    if clearly_b:
        verdict = "disagrees"
    elif lean_b:
        verdict = "inconclusive"
    elif lean_a:
        verdict = "agrees, not clearly"
    else:
        verdict = "agrees clearly"
    if untested:
        verdict += " (partly judged)"
    return verdict, "; ".join(parts)


def ratios(a, b, units):
    return ", ".join("%s %.2f" % (unit_name(u), a[u]["mib_s"] / b[u]["mib_s"])
                     for u in units if u in a and u in b)


def java_cells(rows, method, cache):
    return ({r["unit"]: r for r in measured(rows, part="java", method=method,
                                            api="mmap", cache=cache)},
            {r["unit"]: r for r in measured(rows, part="java", method=method,
                                            api="channel", cache=cache)})


def reconcile(c_verdict, j_verdict):
    """One verdict from the C run and the JDK run of a claim."""
    if j_verdict is None or j_verdict[0] == "no verdict":
        return c_verdict[0]
    if c_verdict[0] == "no verdict":
        return "%s (JDK only)" % j_verdict[0]
    cv, jv = c_verdict[0].split(" (")[0], j_verdict[0].split(" (")[0]
    if cv.split(",")[0] == jv.split(",")[0]:
        return c_verdict[0] if "not" in c_verdict[0] or "partly" in c_verdict[0] else j_verdict[0]
    return "C and JDK disagree (C: %s; JDK: %s)" % (c_verdict[0], j_verdict[0])


def findings(rows, meta, judge):
    """(claim, method, verdict, explanation) computed from the cells."""
    res = []
    methods = meta.get("methods", "kernel").split()
    orig = "original" if "original" in methods else "kernel"

    def cells(part, method, api, op, cache):
        return by_unit(rows, part=part, method=method, api=api, op=op, cache=cache)

    have = {r["part"] for r in rows}
    if "ram" not in have:
        # Say so rather than drop the claims: the page must show what is
        # still to be judged.
        why = "not run yet: the data has no RAM-disk cells (part ram)"
        for claim, method in (
                ("mmap wins clearly below ~4 KiB (reads, warm cache)", orig),
                ("mmap wins clearly below ~8 KiB (writes, warm cache)", orig),
                ("read()/write() overtakes mmap at 64 MiB and beyond (writes)", orig),
                ("read()/write() overtakes mmap at 64 MiB and beyond (reads)", orig),
                ("cold cache: mmap wins at every unit size (writes)", orig),
                ("a warm mapping (pre-faulted, mlocked) writes without page "
                 "faults", " and ".join(methods))):
            res.append((claim, method, "no data", why))

    # Small units, warm cache.
    for op, small, what in (("read", 4096, "reads"), ("write", 8192, "writes")):
        m = cells("ram", orig, "mmap", op, "warm")
        s = cells("ram", orig, "write", op, "warm")
        units = sorted(u for u in set(m) & set(s) if u < small)
        if not units:
            continue
        call = "read(2)" if op == "read" else "write(2)"
        cv = claim_over_units(judge, m, s, units, "mmap", call)
        expl = ("C: %s. mmap/%s medians: %s. Below a page, %s pays one "
                "system call per unit (%s calls at %s) while mmap pays per "
                "page at most" % (cv[1], call, ratios(m, s, units), call,
                                  s[units[0]]["ops"], unit_name(units[0])))
        if op == "write":
            mw = m[units[0]]
            expl += ("; in this method's hot pass mmap takes %s write "
                     "faults (the warm-up took them)" % (
                         (mw["mkwrite_first"] or 0) + (mw["mkwrite_wp"] or 0)))
            jm, jc = java_cells(rows, orig, "warm")
            ju = sorted(u for u in set(jm) & set(jc) if u < small)
            jv = claim_over_units(judge, jm, jc, ju, "MappedByteBuffer",
                                  "FileChannel") if ju else None
            if jv:
                expl += ". JDK: %s (ratios %s)" % (jv[1], ratios(jm, jc, ju))
            verdict = reconcile(cv, jv)
        else:
            verdict = cv[0]
        res.append(("mmap wins clearly below ~%s (%s, warm cache)"
                    % (unit_name(small), what), orig, verdict, expl + "."))

    # Large units.
    for op in ("write", "read") if "ram" in have else ():
        m = cells("ram", orig, "mmap", op, "warm")
        s = cells("ram", orig, "write", op, "warm")
        big = sorted(u for u in set(m) & set(s) if u >= 64 << 20)
        claim = "read()/write() overtakes mmap at 64 MiB and beyond (%ss)" % op
        if not big:
            res.append((claim, orig, "not measured",
                        "no unit of 64 MiB or more fits the file (--size)"))
            continue
        call = "read(2)" if op == "read" else "write(2)"
        cv = claim_over_units(judge, s, m, big, call, "mmap")
        expl = "C: %s (medians: %s)." % (cv[1], "; ".join(
            "%s mmap %s, %s %s MiB/s" % (unit_name(u), fmt(m[u]["mib_s"]), call,
                                         fmt(s[u]["mib_s"])) for u in big))
        verdict = cv[0]
        if op == "write":
            jm, jc = java_cells(rows, orig, "warm")
            jb = sorted(u for u in set(jm) & set(jc) if u >= 64 << 20)
            if jb:
                jv = claim_over_units(judge, jc, jm, jb, "FileChannel",
                                      "MappedByteBuffer")
                expl += " JDK: %s." % jv[1]
                verdict = reconcile(cv, jv)
                if verdict.startswith("C and JDK"):
                    u = jb[0]
                    expl += (" At %s the C mmap pass took %s write faults and "
                             "%s in page_mkwrite, the JDK's %s and %s; C's "
                             "write(2) made %s calls, FileChannel %s "
                             "dirty-balancing calls." % (
                                 unit_name(u),
                                 (m[u]["mkwrite_first"] or 0) + (m[u]["mkwrite_wp"] or 0),
                                 ms(m[u]["mkwrite_ns"]),
                                 (jm[u]["mkwrite_first"] or 0) + (jm[u]["mkwrite_wp"] or 0),
                                 ms(jm[u]["mkwrite_ns"]),
                                 s[u]["ops"], jc[u]["bdp_calls"]))
        res.append((claim, orig, verdict, expl))

    # Cold writes: mmap wins at every size.
    for method in methods:
        m = cells("ram", method, "mmap", "write", "cold")
        s = cells("ram", method, "write", "write", "cold")
        units = sorted(set(m) & set(s))
        if not units:
            continue
        cv = claim_over_units(judge, m, s, units, "mmap", "write(2)")
        u = units[0]
        if method == "original":
            how = ("fresh sparse file: mmap takes a first-write fault per "
                   "page (%s at %s), each mapping a zeroed page over a hole; "
                   "write(2) fills pages with no read below a page either "
                   "(pgpgin %s)" % (m[u]["mkwrite_first"], unit_name(u),
                                    s[u]["vm_pgpgin"]))
        else:
            how = ("evicted file with data: mmap reads every page back "
                   "(pgpgin %s at %s) before its first-write fault; "
                   "write(2) of whole pages reads none (pgpgin %s at 4 KiB), "
                   "below a page it must (pgpgin %s at %s); every cell ends "
                   "with msync/fsync, timed" % (
                       m[u]["vm_pgpgin"], unit_name(u),
                       s.get(4096, {}).get("vm_pgpgin", "-"),
                       s[u]["vm_pgpgin"], unit_name(u)))
        expl = "C: %s. %s." % (cv[1], how)
        back = backward_units(m)
        if back:
            expl += (" At %s the C mmap pass copies backward and misses the "
                     "page cache every %d pages (see the outliers), so there "
                     "mmap also pays for the copy's direction." % (
                         ", ".join(unit_name(x) for x in back),
                         RA_PAGES // 2 + 1))
        jm, jc = java_cells(rows, method, "cold")
        ju = sorted(set(jm) & set(jc))
        jv = None
        if ju:
            jv = claim_over_units(judge, jm, jc, ju, "MappedByteBuffer", "FileChannel")
            expl += " JDK (%s): %s." % (", ".join(unit_name(x) for x in ju), jv[1])
        res.append(("cold cache: mmap wins at every unit size (writes)",
                    method, reconcile(cv, jv), expl))

    # Pre-faulting.
    for method in methods:
        mw = cells("ram", method, "mmap", "write", "warm")
        if not mw:
            continue
        good = [r for r in mw.values() if judge.usable(r)]
        if not good:
            res.append(("a warm mapping (pre-faulted, mlocked) writes without "
                        "page faults", method, "no verdict",
                        "fewer than %d good rounds" % MIN_ROUNDS))
            continue
        faults = sorted({(s["mkwrite_first"] or 0) + (s["mkwrite_wp"] or 0)
                         for r in good for s in r["samples"] if s["mib_s"] != ""})
        pages = meta["size"] // PAGE
        if method == "original":
            expl = ("The warm-up stores once per page (first-write faults, "
                    "before the timed pass) and nothing writes back during "
                    "the cell: the pass took %s write faults in every round "
                    "of every unit for %d pages. Only a store warm-up does "
                    "this; a load warm-up maps pages read-only "
                    "(populate_vma_page_range asks FOLL_WRITE only of "
                    "private mappings)." % ("/".join(map(str, faults)), pages))
        else:
            expl = ("The warm-up loads every page (read-only PTEs) and "
                    "mlocks them, and every cell ends with msync, whose "
                    "folio_mkclean write-protects every page again: the pass "
                    "took %s write faults (mkwrite_wp) per round for %d pages, "
                    "each through ->page_mkwrite and a dirty-balancing call."
                    % ("/".join(map(str, faults)), pages))
        res.append(("a warm mapping (pre-faulted, mlocked) writes without "
                    "page faults", method,
                    "agrees" if faults == [0] else "disagrees", expl))

    # Writeback hurts writes, mmap more.
    slow_m = cells("slow", "kernel", "mmap", "write", "warm")
    slow_s = cells("slow", "kernel", "write", "write", "warm")
    units = sorted(set(slow_m) & set(slow_s))
    if units:
        cv = claim_over_units(judge, slow_s, slow_m, units, "write(2)", "mmap")

        def share(r):
            return blocked_ns(r) / r["wall_ns"]
        bm = median([share(slow_m[u]) for u in units])
        bs = median([share(slow_s[u]) for u in units])

        def sync_share(r):
            return (r["sync_ns"] or 0) / r["wall_ns"]
        ym = median([sync_share(slow_m[u]) for u in units])
        ys = median([sync_share(slow_s[u]) for u in units])
        small = [u for u in units if u < PAGE]
        big = [u for u in units if u >= PAGE]

        def total(d, us, k):
            return sum((d[u][k] or 0) for u in us)
        expl = ("Throughput: %s. Where the time goes (median share of a pass "
                "blocked in stable_wait_ns + bdp_pause_ns): mmap %.0f%%, "
                "write(2) %.0f%%; in the closing msync/fsync, which waits "
                "for the device too: mmap %.0f%%, write(2) %.0f%%; time in page_mkwrite (mkwrite_ns, which "
                "holds mmap's stable-page waits) %s over all units. mmap: "
                "every page cleaned between or during the passes is "
                "write-protected again (median mkwrite_wp %s for %d page "
                "writes) and a store to a page under writeback waits in "
                "folio_wait_stable() (%s waits, %.0f ms over all units). " % (
                    cv[1], bm * 100, bs * 100, ym * 100, ys * 100,
                    ms(total(slow_m, units, "mkwrite_ns"))
                    if any(slow_m[u]["mkwrite_ns"] != "" for u in units) else "-",
                    median([slow_m[u]["mkwrite_wp"] for u in units]),
                    2 * meta["slow_size"] // PAGE,
                    total(slow_m, units, "stable_waits"),
                    total(slow_m, units, "stable_wait_ns") / 1e6))
        if small:
            expl += ("write(2) below a page returns to the page it left "
                     "under writeback and waits the same way (%s waits, "
                     "%.0f ms); " % (total(slow_s, small, "stable_waits"),
                                     total(slow_s, small, "stable_wait_ns") / 1e6))
        if big:
            expl += ("from one page up write(2) is paused by dirty balancing "
                     "instead (%s pauses, %.0f ms; mmap %s, %.0f ms)." % (
                         total(slow_s, big, "bdp_pauses"),
                         total(slow_s, big, "bdp_pause_ns") / 1e6,
                         total(slow_m, big, "bdp_pauses"),
                         total(slow_m, big, "bdp_pause_ns") / 1e6))
        res.append(("writes suffer while writeback runs, mmap more than "
                    "write() (throughput)", "kernel", cv[0], expl))

    # RocketMQ: the write buffer's claim is about spikes.
    rm = {r["cache"]: r for r in rows if r["part"] == "rocketmq"}
    off, on = rm.get("warm off, pool off"), rm.get("warm off, pool on")
    if off and on:
        if judge.usable(off) and judge.usable(on):
            p_off, p_on = spread(off, "p99_ns"), spread(on, "p99_ns")
            x_off, x_on = spread(off, "max_ns"), spread(on, "max_ns")

            def lower(a, b):
                if a[1] < b[0]:
                    return "clearly lower"
                if a[2] < b[2]:
                    return "lower, ranges overlapping"
                return "not lower"
            pv, xv = lower(p_on, p_off), lower(x_on, x_off)
            verdict = ("agrees clearly" if pv == xv == "clearly lower" else
                       "disagrees" if pv == "not lower" and xv == "not lower"
                       else "agrees, not clearly" if "not" not in pv + xv
                       else "inconclusive")
            expl = ("p99 with the pool %.2f ms (%.2f-%.2f) against %.2f ms "
                    "(%.2f-%.2f) without: %s; worst put after the first "
                    "%.1f ms (%.1f-%.1f) against %.1f ms (%.1f-%.1f): %s. "
                    "Stable-page waits on the commit log: %s with the pool, "
                    "%s without; write faults %s and %s." % (
                        p_on[2] / 1e6, p_on[0] / 1e6, p_on[1] / 1e6,
                        p_off[2] / 1e6, p_off[0] / 1e6, p_off[1] / 1e6, pv,
                        x_on[2] / 1e6, x_on[0] / 1e6, x_on[1] / 1e6,
                        x_off[2] / 1e6, x_off[0] / 1e6, x_off[1] / 1e6, xv,
                        on["stable_waits"], off["stable_waits"],
                        (on["mkwrite_first"] or 0) + (on["mkwrite_wp"] or 0),
                        (off["mkwrite_first"] or 0) + (off["mkwrite_wp"] or 0)))
        else:
            verdict, expl = "no verdict", "fewer than %d good rounds" % MIN_ROUNDS
        res.append(("RocketMQ's transient store pool (write buffer) removes "
                    "append latency spikes", "RocketMQ's own", verdict, expl))
    # A claim whose cells failed in every round has no cell above: keep
    # it on the page, unjudged.
    if "ram" in have:
        shown = {(c, m) for c, m, _, _ in res}
        for claim, claim_methods in (
                ("mmap wins clearly below ~4 KiB (reads, warm cache)", [orig]),
                ("mmap wins clearly below ~8 KiB (writes, warm cache)", [orig]),
                ("cold cache: mmap wins at every unit size (writes)", methods),
                ("a warm mapping (pre-faulted, mlocked) writes without page "
                 "faults", methods)):
            res += [(claim, m, "no verdict", "no cell of this claim has a good "
                     "round: see the failed runs") for m in claim_methods
                    if (claim, m) not in shown]
    return res


def outliers(agg):
    """Rounds whose throughput is under half or over twice their cell's
    median, explained from the counters where a counter moved with them;
    and cells whose major faults stand out from their row of units."""
    out = []
    checks = (("mkwrite_ns", "time in page_mkwrite"),
              ("stable_wait_ns", "stable-page waits"),
              ("bdp_pause_ns", "dirty-balancing pauses"),
              ("sync_ns", "the closing msync/fsync"),
              ("vm_pgmajfault", "major faults"),
              ("vm_pgpgin", "KiB read from disk"))
    for r in agg:
        if r["runs"] < 3:
            continue
        for s in r["samples"]:
            if s["mib_s"] == "" or s is r:
                continue
            if not (s["mib_s"] < r["mib_s"] / 2 or s["mib_s"] > r["mib_s"] * 2):
                continue
            why = []
            slower = s["mib_s"] < r["mib_s"]
            for k, label in checks:
                a, b = s[k] or 0, r[k] or 0
                if k.endswith("_ns"):
                    # a change worth the time the round lost or gained
                    diff = abs(s["wall_ns"] - r["wall_ns"])
                    if (a - b if slower else b - a) > diff / 2:
                        why.append("%s %s against %s" % (label, ms(a), ms(b)))
                elif (a > 4 * b + 100) if slower else (b > 4 * a + 100):
                    why.append("%s %s against %s" % (label, a, b))
            out.append("- %s, round %s: %s MiB/s against a median of %s: %s." % (
                cell_name(r), s["round"], fmt(s["mib_s"]), fmt(r["mib_s"]),
                "; ".join(why) if why else
                "unexplained: no counter moved with it (host noise under TCG?)"))
    rows = {}
    for r in agg:
        if r["part"] in ("ram", "slow") and r["vm_pgmajfault"] != "":
            rows.setdefault((r["part"], r["method"], r["api"], r["op"],
                             r["cache"]), []).append(r)
    backward = False
    for group in rows.values():
        for r, base in many_major_faults(group):
            is_backward, why = major_faults_why(r, base)
            backward |= is_backward
            out.append("- %s: %s major faults in its median round against "
                       "%s at the other units; %s." % (
                           cell_name(r), r["vm_pgmajfault"], base, why))
    if backward:
        out.append(BACKWARD_COPY % (RA_PAGES // 2 + 1, RA_PAGES))
    return out


# mmap read-around: a major fault on a page with no readahead state reads
# ra_pages pages centred on it (do_sync_mmap_readahead() in mm/filemap.c,
# 6.1 and 6.12 alike); 32 for read_ahead_kb 128, the RAM disk's default.
RA_PAGES = 32


# The outliers and the cold-write verdict both ask, for the same cells.
@functools.lru_cache(maxsize=None)
def backward_major_faults(file_pages, unit_pages, op):
    """Major faults of a cold pass that copies each unit backward, as
    glibc's memcpy does for page-aligned buffers of some sizes (see
    scripts/experiment/memcpy-order.c): the loads of a read touch the unit's
    first page and then run down from its last, the stores of a write run
    down from its last.  Every fault reads RA_PAGES around it, of which only
    the ones below are new; the PG_readahead mark that would start async
    readahead sits above, where the copy has already been."""
    cached = bytearray(file_pages)
    faults = 0
    for first in range(0, file_pages, unit_pages):
        last = min(first + unit_pages, file_pages) - 1
        order = range(last, first - 1, -1)
        if op == "read":
            order = [first] + list(range(last, first, -1))
        for p in order:
            if not cached[p]:
                faults += 1
                start = max(0, p - RA_PAGES // 2)
                end = min(file_pages, start + RA_PAGES)
                cached[start:end] = b"\x01" * (end - start)
    return faults


def many_major_faults(row):
    """(cell, base) for each cell of @row (cells differing only in unit)
    whose major faults stand out from the row's median, base."""
    majs = [r["vm_pgmajfault"] for r in row if r["vm_pgmajfault"] != ""]
    if not majs:
        return []
    base = median(majs)
    return [(r, base) for r in row
            if r["vm_pgmajfault"] != "" and r["vm_pgmajfault"] > 10 * base + 100]


def major_faults_why(r, base):
    """(a backward copy?, why) for a cold mmap cell that took many more
    major faults than the @base of its row: a backward copy if the
    read-around model predicts the excess to 1%; otherwise unexplained."""
    if r["cache"] != "cold" or r["api"] != "mmap" or not r["size"] \
            or r["unit"] < RA_PAGES * PAGE:
        return False, "unexplained"
    model = backward_major_faults(r["size"] // PAGE, r["unit"] // PAGE, r["op"])
    extra = r["vm_pgmajfault"] - base
    if abs(extra - model) > model / 100:
        return False, ("unexplained: not a backward copy either, whose "
                       "read-around predicts %d more than the other units, "
                       "not %d" % (model, extra))
    return True, ("a backward copy (below): the read-around model predicts "
                  "%d more than the other units, %d here; this cell's "
                  "throughput is that of the backward copy, not of mmap" % (
                      model, extra))


def backward_units(by_unit):
    """The units of one row of cells ({unit: cell}) whose major faults a
    backward copy explains."""
    return sorted(r["unit"] for r, base in many_major_faults(by_unit.values())
                  if major_faults_why(r, base)[0])


BACKWARD_COPY = (
    "- *Backward copies.* wpload's memcpy (glibc) copies a unit between its "
    "page-aligned buffer and the mapping backward, last page first, when the "
    "unit lies between glibc's `rep movsb` and non-temporal thresholds (its "
    "rule against 4K aliasing). In these 2-vCPU guests (QEMU's TCG `max` "
    "CPU, Debian 12's glibc) it copies 512 KiB and 1 MiB backward, 64 KiB "
    "and 8 MiB up forward, so of this sweep's units 1 MiB only "
    "(`scripts/experiment/memcpy-order.c` shows the order on any machine). "
    "A cold mapping copied backward faults every %d pages: each "
    "major fault reads %d pages centred on it (do_sync_mmap_readahead() in "
    "mm/filemap.c), of which only those below are new, and the PG_readahead "
    "mark that would start async readahead lies above, where the copy has "
    "been. Copied forward, as at the other units, readahead stays ahead. "
    "Prediction 23 in docs/predictions.md checks both on 6.1 and 6.12 "
    "(`pred.ext4.cold_mmap_read_around`), counting major faults as here, "
    "by /proc/vmstat's pgmajfault; getrusage on 6.1 also counts every "
    "readahead mark met.")


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
