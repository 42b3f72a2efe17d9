"""The outliers of the experiment's report: rounds far from their cell's
median, each explained by the counter that moved with it; and cells whose
major faults stand out from their row of units, explained by a backward
copy where the read-around model (backward_major_faults) predicts them.
"""

import functools

from experiment_cells import PAGE, cell_name, fmt, median, ms

# What may explain a round's throughput: (column, how the report names it).
EXPLAINERS = (("mkwrite_ns", "time in page_mkwrite"),
              ("stable_wait_ns", "stable-page waits"),
              ("bdp_pause_ns", "dirty-balancing pauses"),
              ("sync_ns", "the closing msync/fsync"),
              ("vm_pgmajfault", "major faults"),
              ("vm_pgpgin", "KiB read from disk"))


def outliers(agg):
    """Rounds whose throughput is under half or over twice their cell's
    median, explained from the counters where a counter moved with them;
    and cells whose major faults stand out from their row of units."""
    return round_outliers(agg) + major_fault_outliers(agg)


def round_outliers(agg):
    """A line per round under half or over twice its cell's median (cells
    of 3 good rounds or more)."""
    out = []
    for r in agg:
        if r["runs"] < 3:
            continue
        for s in r["samples"]:
            if s["mib_s"] == "" or s is r:
                continue
            if not (s["mib_s"] < r["mib_s"] / 2 or s["mib_s"] > r["mib_s"] * 2):
                continue
            why = outlier_why(s, r)
            out.append("- %s, round %s: %s MiB/s against a median of %s: %s." % (
                cell_name(r), s["round"], fmt(s["mib_s"]), fmt(r["mib_s"]),
                "; ".join(why) if why else
                "unexplained: no counter moved with it (host noise under TCG?)"))
    return out


def outlier_why(s, r):
    """The counters of round s that moved with its throughput, against its
    cell's median round r: a time worth half the wall time lost or gained,
    a count over 4 times (and 100) the other's."""
    why = []
    slower = s["mib_s"] < r["mib_s"]
    for k, label in EXPLAINERS:
        a, b = s[k] or 0, r[k] or 0
        if k.endswith("_ns"):
            # a change worth the time the round lost or gained
            diff = abs(s["wall_ns"] - r["wall_ns"])
            if (a - b if slower else b - a) > diff / 2:
                why.append("%s %s against %s" % (label, ms(a), ms(b)))
        elif (a > 4 * b + 100) if slower else (b > 4 * a + 100):
            why.append("%s %s against %s" % (label, a, b))
    return why


def major_fault_outliers(agg):
    """A line per RAM-disk or slow-device cell whose major faults stand out
    from its row of units; the backward-copy note if one is explained so."""
    out = []
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
    "Prediction 23 in docs/results/predictions.md checks both on every kernel "
    "from 5.10 to 7.2 (`pred.ext4.cold_mmap_read_around`), counting major "
    "faults as here, by /proc/vmstat's pgmajfault; getrusage before 6.7 "
    "(5.10, 6.1) also counts every readahead mark met.")
