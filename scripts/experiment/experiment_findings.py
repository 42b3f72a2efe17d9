"""The findings of the experiment's report: each claim of the original
analysis, judged from the cells, with the counters that explain the
verdict.  One function per claim; findings() runs them in the report's
order.
"""

from experiment_cells import (PAGE, blocked_ns, by_unit, fmt, median, ms,
                              spread, unit_name)
from experiment_outliers import RA_PAGES, backward_units
from experiment_verdicts import (MIN_ROUNDS, claim_over_units, java_cells,
                                 ratios, reconcile)

PREFAULT = ("a warm mapping (pre-faulted, mlocked) writes without page "
            "faults")
COLD_WRITES = "cold cache: mmap wins at every unit size (writes)"


def findings(rows, meta, judge):
    """(claim, method, verdict, explanation) computed from the cells."""
    methods = meta.get("methods", "kernel").split()
    orig = "original" if "original" in methods else "kernel"
    have = {r["part"] for r in rows}
    res = []
    if "ram" not in have:
        res += claims_without_ram(methods, orig)
    res += small_unit_claims(rows, orig, judge)
    if "ram" in have:
        res += large_unit_claims(rows, orig, judge)
    for method in methods:
        res += cold_write_claim(rows, method, judge)
    for method in methods:
        res += prefault_claim(rows, meta, method, judge)
    res += writeback_claim(rows, meta, judge)
    res += rocketmq_claim(rows, judge)
    if "ram" in have:
        res += unjudged_claims(res, methods, orig)
    return res


def cells(rows, part, method, api, op, cache):
    """{unit: cell} of one row of cells."""
    return by_unit(rows, part=part, method=method, api=api, op=op, cache=cache)


def faults(r):
    """A cell's write faults: first writes and write-protect faults."""
    return (r["mkwrite_first"] or 0) + (r["mkwrite_wp"] or 0)


def claims_without_ram(methods, orig):
    """The RAM-disk claims, unjudged: the page must show what is still to be
    judged rather than drop them."""
    why = "not run yet: the data has no RAM-disk cells (part ram)"
    return [(claim, method, "no data", why) for claim, method in (
        ("mmap wins clearly below ~4 KiB (reads, warm cache)", orig),
        ("mmap wins clearly below ~8 KiB (writes, warm cache)", orig),
        ("read()/write() overtakes mmap at 64 MiB and beyond (writes)", orig),
        ("read()/write() overtakes mmap at 64 MiB and beyond (reads)", orig),
        (COLD_WRITES, orig),
        (PREFAULT, " and ".join(methods)))]


def small_unit_claims(rows, orig, judge):
    """mmap wins clearly below ~4 KiB (reads) and ~8 KiB (writes), warm
    cache; the writes in C and with the JDK."""
    res = []
    for op, small, what in (("read", 4096, "reads"), ("write", 8192, "writes")):
        m = cells(rows, "ram", orig, "mmap", op, "warm")
        s = cells(rows, "ram", orig, "write", op, "warm")
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
            expl += ("; in this method's hot pass mmap takes %s write "
                     "faults (the warm-up took them)" % faults(m[units[0]]))
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
    return res


def large_unit_claims(rows, orig, judge):
    """read()/write() overtakes mmap at 64 MiB and beyond, writes (C and
    JDK) and reads."""
    res = []
    for op in ("write", "read"):
        m = cells(rows, "ram", orig, "mmap", op, "warm")
        s = cells(rows, "ram", orig, "write", op, "warm")
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
                    expl += large_write_disagreement(m, s, jm, jc, jb[0])
        res.append((claim, orig, verdict, expl))
    return res


def large_write_disagreement(m, s, jm, jc, u):
    """Where C and the JDK disagree on large writes: the counters of both at
    unit u."""
    return (" At %s the C mmap pass took %s write faults and "
            "%s in page_mkwrite, the JDK's %s and %s; C's "
            "write(2) made %s calls, FileChannel %s "
            "dirty-balancing calls." % (
                unit_name(u), faults(m[u]), ms(m[u]["mkwrite_ns"]),
                faults(jm[u]), ms(jm[u]["mkwrite_ns"]),
                s[u]["ops"], jc[u]["bdp_calls"]))


def cold_write_claim(rows, method, judge):
    """Cold writes: mmap wins at every size, C and JDK, under one method."""
    m = cells(rows, "ram", method, "mmap", "write", "cold")
    s = cells(rows, "ram", method, "write", "write", "cold")
    units = sorted(set(m) & set(s))
    if not units:
        return []
    cv = claim_over_units(judge, m, s, units, "mmap", "write(2)")
    expl = "C: %s. %s." % (cv[1], cold_write_how(method, m, s, units[0]))
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
    return [(COLD_WRITES, method, reconcile(cv, jv), expl)]


def cold_write_how(method, m, s, u):
    """What a cold write costs each api under the method, from the pages
    read in (pgpgin) and the first-write faults at the smallest unit u."""
    if method == "original":
        return ("fresh sparse file: mmap takes a first-write fault per "
                "page (%s at %s), each mapping a zeroed page over a hole; "
                "write(2) fills pages with no read below a page either "
                "(pgpgin %s)" % (m[u]["mkwrite_first"], unit_name(u),
                                 s[u]["vm_pgpgin"]))
    return ("evicted file with data: mmap reads every page back "
            "(pgpgin %s at %s) before its first-write fault; "
            "write(2) of whole pages reads none (pgpgin %s at 4 KiB), "
            "below a page it must (pgpgin %s at %s); every cell ends "
            "with msync/fsync, timed" % (
                m[u]["vm_pgpgin"], unit_name(u),
                s.get(4096, {}).get("vm_pgpgin", "-"),
                s[u]["vm_pgpgin"], unit_name(u)))


def prefault_claim(rows, meta, method, judge):
    """A warm mapping (pre-faulted, mlocked) writes without page faults:
    the write faults of every good round of the warm mmap write cells."""
    mw = cells(rows, "ram", method, "mmap", "write", "warm")
    if not mw:
        return []
    good = [r for r in mw.values() if judge.usable(r)]
    if not good:
        return [(PREFAULT, method, "no verdict",
                 "fewer than %d good rounds" % MIN_ROUNDS)]
    counts = sorted({faults(s) for r in good for s in r["samples"]
                     if s["mib_s"] != ""})
    pages = meta["size"] // PAGE
    if method == "original":
        expl = ("The warm-up stores once per page (first-write faults, "
                "before the timed pass) and nothing writes back during "
                "the cell: the pass took %s write faults in every round "
                "of every unit for %d pages. Only a store warm-up does "
                "this; a load warm-up maps pages read-only "
                "(populate_vma_page_range asks FOLL_WRITE only of "
                "private mappings)." % ("/".join(map(str, counts)), pages))
    else:
        expl = ("The warm-up loads every page (read-only PTEs) and "
                "mlocks them, and every cell ends with msync, whose "
                "folio_mkclean write-protects every page again: the pass "
                "took %s write faults (mkwrite_wp) per round for %d pages, "
                "each through ->page_mkwrite and a dirty-balancing call."
                % ("/".join(map(str, counts)), pages))
    return [(PREFAULT, method, "agrees" if counts == [0] else "disagrees",
             expl)]


def writeback_claim(rows, meta, judge):
    """Writes suffer while writeback runs, mmap more than write(): the slow
    device's cells, and where their time went."""
    slow_m = cells(rows, "slow", "kernel", "mmap", "write", "warm")
    slow_s = cells(rows, "slow", "kernel", "write", "write", "warm")
    units = sorted(set(slow_m) & set(slow_s))
    if not units:
        return []
    cv = claim_over_units(judge, slow_s, slow_m, units, "write(2)", "mmap")
    expl = writeback_time(cv, meta, slow_m, slow_s, units)
    small = [u for u in units if u < PAGE]
    big = [u for u in units if u >= PAGE]
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
    return [("writes suffer while writeback runs, mmap more than "
             "write() (throughput)", "kernel", cv[0], expl)]


def total(d, us, k):
    """Column k summed over the cells of d ({unit: cell}) at units us."""
    return sum((d[u][k] or 0) for u in us)


def writeback_time(cv, meta, slow_m, slow_s, units):
    """The verdict's reasons, and where the passes' time went on the slow
    device: blocked, in the closing msync/fsync, in page_mkwrite."""
    def share(r):
        return blocked_ns(r) / r["wall_ns"]
    bm = median([share(slow_m[u]) for u in units])
    bs = median([share(slow_s[u]) for u in units])

    def sync_share(r):
        return (r["sync_ns"] or 0) / r["wall_ns"]
    ym = median([sync_share(slow_m[u]) for u in units])
    ys = median([sync_share(slow_s[u]) for u in units])
    return ("Throughput: %s. Where the time goes (median share of a pass "
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


def rocketmq_claim(rows, judge):
    """RocketMQ's write buffer (transient store pool) removes append
    latency spikes: its claim is about spikes, so p99 and the worst put,
    not throughput."""
    rm = {r["cache"]: r for r in rows if r["part"] == "rocketmq"}
    off, on = rm.get("warm off, pool off"), rm.get("warm off, pool on")
    if not (off and on):
        return []
    if judge.usable(off) and judge.usable(on):
        verdict, expl = rocketmq_spikes(off, on)
    else:
        verdict, expl = "no verdict", "fewer than %d good rounds" % MIN_ROUNDS
    return [("RocketMQ's transient store pool (write buffer) removes "
             "append latency spikes", "RocketMQ's own", verdict, expl)]


def lower(a, b):
    """Whether spread a (min, max, median) is lower than spread b."""
    if a[1] < b[0]:
        return "clearly lower"
    if a[2] < b[2]:
        return "lower, ranges overlapping"
    return "not lower"


def rocketmq_spikes(off, on):
    """(verdict, explanation): are p99 and the worst put after the first
    lower with the pool (on) than without (off)?"""
    p_off, p_on = spread(off, "p99_ns"), spread(on, "p99_ns")
    x_off, x_on = spread(off, "max_ns"), spread(on, "max_ns")
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
                faults(on), faults(off)))
    return verdict, expl


def unjudged_claims(res, methods, orig):
    """A claim whose cells failed in every round has no cell above: keep it
    on the page, unjudged."""
    shown = {(c, m) for c, m, _, _ in res}
    out = []
    for claim, claim_methods in (
            ("mmap wins clearly below ~4 KiB (reads, warm cache)", [orig]),
            ("mmap wins clearly below ~8 KiB (writes, warm cache)", [orig]),
            (COLD_WRITES, methods),
            (PREFAULT, methods)):
        out += [(claim, m, "no verdict", "no cell of this claim has a good "
                 "round: see the failed runs") for m in claim_methods
                if (claim, m) not in shown]
    return out
