"""The experiment's cells as rows: one flat row (a CSV line) per cell and
round, of every part, and one row per cell with the spread of its rounds;
and how a cell's numbers are written in the report.

Used by experiment-report.py and its modules (experiment_*.py).
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
import wpstat_counters  # noqa: E402

# The module's counters (uapi/wpstat_counters.def), in /proc column order.
COUNTERS = wpstat_counters.names()
# guest-experiment.sh's vmstat_keys.
VMSTAT = ["pgfault", "pgmajfault", "nr_dirtied", "nr_written", "pgpgin",
          "pgpgout"]
COLUMNS = (["kernel", "part", "method", "api", "op", "cache", "unit",
            "size", "round", "block_size", "passes",
            "wall_ns", "sync_ns", "ops", "bytes", "mib_s", "skipped",
            "p50_ns", "p99_ns", "max_ns", "first_ns"]
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


def add_counters(kernel, cell, row, counters):
    counters = counters or {}
    unknown(kernel, cell, "counter", counters, COUNTERS,
            "uapi/wpstat_counters.def")
    for k, v in counters.items():
        row[k] = "" if v is None else v


def add_vmstat(kernel, cell, row):
    vmstat = cell.get("vmstat") or {}
    unknown(kernel, cell, "vmstat field", vmstat, VMSTAT,
            "experiment-report.py's VMSTAT")
    for k, v in vmstat.items():
        row["vm_" + k] = v


def flatten(kernel, cell):
    """One CSV row from a cell of any part."""
    row = dict.fromkeys(COLUMNS, "")
    row["kernel"] = kernel
    row["method"] = cell.get("method", "kernel")
    row["round"] = cell.get("round", 1)
    row["block_size"] = cell.get("block_size", "")
    part = cell.get("part")
    if part == "java":
        return java_row(kernel, cell, row)
    if part == "rocketmq":
        return rocketmq_row(kernel, cell, row)
    return wpload_row(kernel, cell, row)


def java_row(kernel, cell, row):
    """A JDK cell: MmapVsChannel's numbers, or the error of a JVM that did
    not report."""
    if "java" not in cell:
        row.update(part="java", api=cell.get("api", ""), op=cell.get("op", ""),
                   cache=cell.get("cache", ""), unit=int(cell.get("units", 0)),
                   skipped="failed (rc %s): %s" % (cell.get("rc"),
                                                   cell.get("error", "")))
        return row
    j = cell["java"]
    row.update(part="java", api=j["api"], op=j["op"],
               method=cell.get("method", j.get("method", "kernel")),
               cache=j.get("cache", ""), unit=j["unit"], passes=1,
               round=cell.get("round", j.get("round", 1)),
               size=j.get("size", ""), skipped=j.get("skipped", ""))
    if "ns" in j:
        row.update(wall_ns=j["ns"], sync_ns=j["force_ns"],
                   bytes=j["size"],
                   mib_s=round(j["size"] / 2**20 / (j["ns"] / 1e9), 2))
    if cell.get("rc"):
        row["skipped"] = "failed (rc %s)" % cell["rc"]
        row["mib_s"] = ""
    add_counters(kernel, cell, row, j.get("counters"))
    return written_back(row)


def rocketmq_row(kernel, cell, row):
    """A RocketMQ cell: the store's own latencies, one setting of warm-up
    and pool."""
    row.update(part="rocketmq", api="store", op="write",
               cache="warm %s, pool %s" % (cell.get("warm"), cell.get("pool")),
               unit=1024, passes=1)
    m = cell.get("rocketmq")
    if cell.get("rc") or not m:
        row["skipped"] = "failed (rc %s): %s" % (cell.get("rc"),
                                                cell.get("error", ""))
    else:
        # max_rest_ns: the worst put after the first, which waits for
        # the store to make its first file.
        row.update(wall_ns=m["elapsed_ns"], ops=m["messages"],
                   bytes=m["bytes"], size=m["file_size"],
                   p50_ns=m["p50_ns"], p99_ns=m["p99_ns"],
                   max_ns=m["max_rest_ns"], first_ns=m["first_ns"],
                   mib_s=round(m["bytes"] / 2**20 / (m["elapsed_ns"] / 1e9), 2))
    add_counters(kernel, cell, row, cell.get("counters"))
    add_vmstat(kernel, cell, row)
    return row


def wpload_row(kernel, cell, row):
    """A cell of wpload (parts ram, slow, strategies): its totals over the
    measured passes."""
    for k in ("part", "api", "op", "cache", "unit", "size", "skipped"):
        row[k] = cell.get(k, "")
    w = cell.get("wpload")
    if w and w.get("totals") and not cell.get("rc"):
        t = w["totals"]
        row.update(passes=t["passes"], wall_ns=t["wall_ns"],
                   sync_ns=t["sync_ns"], ops=t["ops"], bytes=t["bytes"])
        if t["wall_ns"]:
            row["mib_s"] = round(t["bytes"] / 2**20 / (t["wall_ns"] / 1e9), 2)
        add_counters(kernel, cell, row, t.get("counters"))
    elif not row["skipped"]:
        row["skipped"] = "failed (rc %s)" % cell.get("rc")
    add_vmstat(kernel, cell, row)
    return written_back(row)


def written_back(row):
    """The original method rules out writeback inside a cell (dirty limits
    above the files, no flush): a write cell that cleaned pages anyway
    (ext4's free-space writeback on a small filesystem, say) measured
    something else, and counts as a failed round."""
    if (row["method"] == "original" and row["op"] == "write"
            and row["part"] in ("ram", "java") and not row["skipped"]
            and isinstance(row["mkclean_calls"], int) and row["mkclean_calls"] > 0):
        row["skipped"] = ("failed (original method, yet %d pages written "
                          "back during the cell)" % row["mkclean_calls"])
        row["mib_s"] = ""
    return row


def failed(r):
    return str(r["skipped"]).startswith("failed")


def median(xs):
    xs = sorted(xs)
    return xs[(len(xs) - 1) // 2] if xs else None


def spread(r, k):
    """(min, max, median) of column k over a cell's rounds, or None."""
    v = [s[k] for s in r["samples"] if s[k] != ""]
    return (min(v), max(v), median(v)) if v else None


def aggregate(rows):
    """One row per cell: the round with the median throughput, with the
    spread of all good rounds in mib_s_min/mib_s_max, their number in runs,
    the failed rounds in failed, and every round in samples."""
    groups = {}
    for r in rows:
        key = (r["part"], r["method"], r["api"], r["op"], r["cache"], r["unit"])
        groups.setdefault(key, []).append(r)
    out = []
    for runs in groups.values():
        ok = sorted((r for r in runs if r["mib_s"] != ""),
                    key=lambda r: r["mib_s"])
        nfail = sum(1 for r in runs if failed(r))
        if not ok:
            out.append(dict(runs[0], runs=0, failed=nfail, mib_s_min="",
                            mib_s_max="", samples=[]))
            continue
        med = ok[(len(ok) - 1) // 2]
        out.append(dict(med, runs=len(ok), failed=nfail,
                        mib_s_min=ok[0]["mib_s"], mib_s_max=ok[-1]["mib_s"],
                        samples=sorted(runs, key=lambda r: r["round"])))
    return out


def measured(rows, **want):
    """Rows matching want that have a throughput, sorted by unit."""
    out = [r for r in rows if r["mib_s"] != "" and
           all(r[k] == v for k, v in want.items())]
    return sorted(out, key=lambda r: r["unit"])


def by_unit(rows, **want):
    return {r["unit"]: r for r in measured(rows, **want)}


def fmt(v):
    return ("%.2f" if v < 10 else "%.0f") % v


def tput(r):
    """Median MiB/s, with the range and number of the good rounds."""
    if r is None or r["mib_s"] == "":
        return "-"
    if r.get("runs", 1) > 1:
        return "%s (%s-%s, %d)" % (fmt(r["mib_s"]), fmt(r["mib_s_min"]),
                                   fmt(r["mib_s_max"]), r["runs"])
    return "%s (1)" % fmt(r["mib_s"])


def ms(ns):
    """ns as ms; "-" where the counter was not kept (mkwrite_ns exists only
    at level timing)."""
    return "-" if ns in ("", None) else "%.1f ms" % (ns / 1e6)


def blocked_ns(r):
    return (r["stable_wait_ns"] or 0) + (r["bdp_pause_ns"] or 0)


def cell_name(r):
    """A cell as the report names it: part, method, api, op, cache, unit
    and its rounds."""
    rounds = "%d good rounds%s" % (r["runs"], ", %d failed" % r["failed"]
                                    if r["failed"] else "")
    if r["part"] == "rocketmq":
        return "RocketMQ %s (%s)" % (r["cache"], rounds)
    what = {"ram": "RAM disk", "slow": "slow device", "java": "JDK",
            "strategies": "strategies", "rocketmq": "RocketMQ"}[r["part"]]
    api = r["api"]
    if r["part"] != "java" and api == "write":
        api = "write(2)" if r["op"] == "write" else "read(2)"
    return "%s %s %s %s %s %s (%s)" % (what, r["method"], api, r["op"],
                                       r["cache"], unit_name(r["unit"]), rounds)

