#!/usr/bin/env python3
"""Render the clients' `wpstat run` reports (scripts/clients/guest-runs.sh)
into docs/results/clients-runs.md.  Paths into this checkout are written relative
to it: the page must not carry the machine it was generated on.

Each run gets its command, the client's own output, wpstat run's report as
printed, and one sentence of diagnosis whose numbers are read from that
report (the file table, by header name).
A run that is missing or failed is listed as such, never left out.
"""
import argparse
import os
import re
import sys

# (name, client, setting, main file (the end of its path), diagnosis
# template).  Template fields: first, wp,
# faults, mkclean, by (its mkclean_<trigger> columns), file, stable_waits,
# bdp_pauses, dirtied: of the client's main file (the row whose path ends
# so; failing that, the one with the most faults, then cleans).
RUNS = [
    ("lmdb-writemap", "LMDB", "MDB_WRITEMAP, 20 commits of 200 puts", "/data.mdb",
     "{wp} of the {faults} faults on {file} are write-protect faults, and all {mkclean} "
     "cleans were made by msync ({by}): every commit's msync write-protects the pages the "
     "next transaction writes again."),
    ("lmdb-nosync", "LMDB", "MDB_WRITEMAP | MDB_NOSYNC", "/data.mdb",
     "No commit syncs: {mkclean} cleans, and {faults} faults, one per page LMDB wrote "
     "({first} of them first writes), however often it wrote the page again."),
    ("lmdb-pwrite", "LMDB", "default (pwrite)", "/data.mdb",
     "No fault at all ({faults}): LMDB writes with pwrite() and its fdatasync cleans "
     "{mkclean} pages, none of them mapped writable."),
    ("chronicle-pretouch-off", "Chronicle Queue",
     "1000 appends of 1020 bytes, fdatasync after 500, no pretoucher", ".cq4",
     "The appender faults once on every page it dirties, {faults} faults ({first} "
     "first-write, {wp} write-protect) for {dirtied} dirtied pages of {file}; the "
     "fdatasync write-protects {mkclean} ({by})."),
    ("chronicle-pretouch-on", "Chronicle Queue", "the same, with its pretoucher", ".cq4",
     "{faults} faults for {dirtied} dirtied pages of {file} and {mkclean} cleans ({by}): the "
     "pretoucher takes the first writes off the appender, but every pretouched page the "
     "fdatasync cleans faults again when the appender reaches it (under TCG a pretouch "
     "compare-and-swap counts as a write-protect fault, see docs/clients/chronicle.md)."),
]
ROCKETMQ = {
    ("off", "off"):
        "One first-write fault per page the appender fills ({first}), and {wp} write-protect: "
        "the flush thread's msync ({by}) seldom catches a page still being filled.",
    ("off", "on"):
        "No fault at all ({faults}): with the transient pool the commit log is written with "
        "write(2) (commit0), and the flush cleans {mkclean} pages ({by}).",
    ("on", "off"):
        "The warm-up takes {first} first-write faults, one per page of the file, and its "
        "whole-file flush write-protects them before the appender gets there: the appender "
        "still takes {wp} write-protect faults ({by}).",
    ("on", "on"):
        "The warm-up's {first} first-write faults buy nothing: the appender writes with "
        "write(2), so no write-protect fault follows ({wp}); {mkclean} cleans ({by}).",
}
for warm in ("off", "on"):
    for pool in ("off", "on"):
        RUNS.append((
            f"rocketmq-warm-{warm}-pool-{pool}", "RocketMQ commit log",
            f"warmMapedFileEnable {warm}, transientStorePoolEnable {pool}, ASYNC_FLUSH",
            "/commitlog/00000000000000000000", ROCKETMQ[(warm, pool)]))

# The mkclean_<trigger> columns, in the order wpstat run prints them.
TRIGGERS = ["msync", "fsync", "sync_file_range", "sync", "flusher_periodic",
            "flusher_background", "reclaim", "other"]


def parse_report(text):
    """The file table's rows as dicts, by header name."""
    rows, header = [], None
    for line in text.splitlines():
        fields = line.split()
        if not fields:
            header = None
            continue
        if fields[0] == "mkwrite_first":
            header = fields
            continue
        if header and len(fields) == len(header) and re.fullmatch(r"\d+|-", fields[0]):
            rows.append(dict(zip(header, fields)))
            continue
    return rows


def num(row, name):
    v = row.get(name, "0")
    return int(v) if v.isdigit() else 0


def diagnose(template, rows, suffix):
    if not rows:
        return "wpstat saw no file of this client change."
    named = [r for r in rows if r.get("file", "").endswith(suffix)]
    main = max(named or rows,
               key=lambda r: (num(r, "mkwrite_first") + num(r, "mkwrite_wp"),
                              num(r, "mkclean_calls")))
    first, wp = num(main, "mkwrite_first"), num(main, "mkwrite_wp")
    by = ", ".join(f"{t} {num(main, 'mkclean_' + t)}" for t in TRIGGERS
                   if num(main, "mkclean_" + t)) or "nothing"
    return template.format(
        first=first, wp=wp, faults=first + wp, mkclean=num(main, "mkclean_calls"),
        by=by, file="`" + os.path.basename(main.get("file", "?")) + "`",
        stable_waits=num(main, "stable_waits"), bdp_pauses=num(main, "bdp_pauses"),
        dirtied=num(main, "dirtied"))


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def render(resdir, kver):
    out = [f"Run on {kver}, module level counts, ext4 on a RAM disk, periodic writeback off. "
           "Every number in a sentence is read from the report above it.", ""]
    missing = read(os.path.join(resdir, "java.missing"))
    for name, client, setting, suffix, template in RUNS:
        report = read(os.path.join(resdir, name + ".report"))
        err = read(os.path.join(resdir, name + ".err")) or ""
        out.append(f"#### {client}: {setting}")
        out.append("")
        if report is None:
            why = missing.strip() if missing and not name.startswith("lmdb") else \
                "no report came back: " + (err.strip().splitlines() or ["?"])[-1]
            out += [f"Not run: {why}.", ""]
            continue
        status = re.search(r"^exit (\d+)$", err, re.M)
        client_out = (read(os.path.join(resdir, name + ".out")) or "").strip()
        rows = parse_report(report)
        out.append("```")
        if client_out:
            out.append(client_out)
        out.append(report.strip("\n"))
        out.append("```")
        out.append("")
        if status and status.group(1) != "0":
            out += [f"The run failed (exit {status.group(1)}): no diagnosis.", ""]
        else:
            out += [diagnose(template, rows, suffix), ""]
    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return "\n".join(out).replace(top + "/", "")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--kver", required=True)
    ap.add_argument("--doc", required=True)
    ap.add_argument("resdir")
    a = ap.parse_args()
    body = render(a.resdir, a.kver)
    with open(a.doc, "w", encoding="utf-8") as f:
        f.write("Generated by `make clients-runs` (scripts/clients/runs.sh, "
                "scripts/clients/render-runs.py); do not edit.\n\n"
                "# What wpstat shows for real software\n\n"
                "The clients and what is predicted for each: "
                "[../clients/index.md](../clients/index.md).\n\n"
                + body + "\n")

if __name__ == "__main__":
    main()
