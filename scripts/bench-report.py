#!/usr/bin/env python3
"""Render docs/benchmarks.md from the results of `make bench`.

    scripts/bench-report.py RESULTS_DIR KVER... > docs/benchmarks.md

RESULTS_DIR/<kver>/runs.csv and extra.txt come from scripts/guest-bench.sh.
Per workload, the added cost of a configuration is computed per round
against that round's baseline (the runs of one round are side by side in
time, so drift cancels) and divided by the number of probe hits that the
wpstat run of the same round counted; the tables give the median over the
rounds and the min-max range.
"""
import csv
import os
import statistics
import sys

CONFIGS = ["base", "floor", "wpstat", "bpftrace"]
WORKLOADS = ["W1", "W2", "W3"]
HITS = ["mkwrite", "fault_dirty", "mkclean", "stable", "bdp_ratelimited",
        "bdp", "tp_dirty", "tp_wait", "tp_bdp"]
TARGET_FLOOR = 1.3
TARGET_BPF = 0.5
TARGET_W2_LOSS = 3.0
TARGET_READ_S = 0.5


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def rng(xs, fmt="{:.0f}"):
    if not xs:
        return "-"
    return (fmt + "-" + fmt).format(min(xs), max(xs))


def load(d):
    runs = []
    with open(os.path.join(d, "runs.csv")) as f:
        for row in csv.DictReader(f):
            runs.append(row)
    extra = {}
    path = os.path.join(d, "extra.txt")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    extra.setdefault(k + "[]", []).append(v)
                    extra[k] = v
    return runs, extra


def analyse(runs):
    """{workload: {...}} with the numbers of the tables."""
    res = {}
    for w in WORKLOADS:
        by = {}  # (config, round) -> run
        for r in runs:
            if r["workload"] == w:
                by[(r["config"], int(r["round"]))] = r
        rounds = sorted({k[1] for k in by})
        ev = {rd: int(by[("wpstat", rd)]["events"]) for rd in rounds
              if ("wpstat", rd) in by and by[("wpstat", rd)]["events"]}
        events = med(list(ev.values()))
        a = {"rounds": len(rounds), "events": events, "cfg": {}}
        wp = [by[("wpstat", rd)] for rd in rounds if ("wpstat", rd) in by]
        a["ops"] = int(wp[0]["ops"]) if wp else 0
        a["hits"] = {h: med([int(x["hits_" + h]) for x in wp]) for h in HITS}
        a["counters"] = {c: med([int(x[c]) for x in wp])
                         for c in ["mkwrite_first", "mkwrite_wp",
                                   "mkclean_calls", "stable_calls",
                                   "dirtied", "bdp_calls", "bdp_fault_calls",
                                   "bdp_throttled", "wb_waits"]}
        for c in CONFIGS:
            nsop, added, added_ev, loss = [], [], [], []
            for rd in rounds:
                if (c, rd) not in by or ("base", rd) not in by:
                    continue
                x, b = by[(c, rd)], by[("base", rd)]
                wall, bwall = int(x["wall_ns"]), int(b["wall_ns"])
                nsop.append(wall / int(x["ops"]))
                added.append(wall - bwall)
                e = ev.get(rd, events)
                added_ev.append((wall - bwall) / e)
                loss.append(100.0 * (1 - bwall / wall))
            a["cfg"][c] = {"nsop": nsop, "added_ev": added_ev,
                           "wall": [int(by[(c, rd)]["wall_ns"])
                                    for rd in rounds if (c, rd) in by],
                           "loss": loss}
        res[w] = a
    return res


def ratio(a, b):
    if b is None or a is None or b <= 0:
        return float("nan")
    return a / b


def fmt_ratio(x):
    return "n/a" if x != x else "{:.2f}".format(x)


def verdict(ok, x=0.0):
    if x != x:
        return "not measurable (baseline noise)"
    return "met" if ok else "**missed**"


def kernel_section(kver, runs, extra):
    out = []
    res = analyse(runs)
    out.append("## {}\n".format(kver))
    out.append("Run {}, {} vCPU, {} rounds, clock: {}; the guest took {} s "
               "of host time, the rounds {:.0f} s of guest time; bpftrace "
               "took {} s of guest time to start, per round.\n".format(
                   extra.get("date", "?"), extra.get("cpus", "?"),
                   extra.get("rounds", "?"), extra.get("clock", "?"),
                   extra.get("guest_seconds", "?"),
                   int(extra.get("rounds_ms", "0")) / 1000,
                   "/".join("{:.0f}".format(int(v) / 1000)
                            for v in extra.get("bpftrace_start_ms[]", [])) or "?"))

    out.append("### Events per run (wpstat's probe hits, median)\n")
    out.append("| workload | ops | probe hits | per op | mkwrite | fault_dirty | mkclean | stable | bdp_ratelimited | bdp | tp_dirty | tp_wait | tp_bdp |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for w in WORKLOADS:
        a = res[w]
        out.append("| {} | {} | {:.0f} | {:.2f} | {} |".format(
            w, a["ops"], a["events"], a["events"] / a["ops"] if a["ops"] else 0,
            " | ".join("{:.0f}".format(a["hits"][h]) for h in HITS)))
    out.append("")

    out.append("### Time per op (median, min-max over rounds)\n")
    out.append("One op: a page stored (W1, msync included), a 4 KiB write "
               "(W2), a file opened, written and closed (W3).\n")
    out.append("| workload | " + " | ".join(CONFIGS) + " |")
    out.append("|---|" + "---:|" * len(CONFIGS))
    for w in WORKLOADS:
        cells = []
        for c in CONFIGS:
            v = res[w]["cfg"][c]["nsop"]
            cells.append("{:.0f} ns ({})".format(med(v), rng(v)))
        out.append("| {} | {} |".format(w, " | ".join(cells)))
    out.append("")

    # Under -icount a run's own instructions are (nearly) fixed and
    # interference from other guest activity only adds: the fastest of the
    # rounds is the estimate.  The median of the per-round differences
    # (which wall-clock runs need) follows in brackets.
    icount = extra.get("clock") == "icount"
    out.append("### Added cost per event over the baseline (ns)\n")
    if icount:
        out.append("From the fastest run of each configuration (instruction "
                   "time: interference only adds); in brackets the median of "
                   "the per-round differences.\n")
    else:
        out.append("Median of the per-round differences (min-max).\n")
    out.append("| workload | floor | wpstat | bpftrace | wpstat/floor | "
               "wpstat/bpftrace | throughput loss (wpstat; floor) |")
    out.append("|---|---:|---:|---:|---:|---:|---:|")
    summary = {}
    for w in WORKLOADS:
        cf = res[w]["cfg"]
        mm = {c: med(cf[c]["added_ev"]) for c in ["floor", "wpstat", "bpftrace"]}
        bmin = min(cf["base"]["wall"])
        mn = {c: (min(cf[c]["wall"]) - bmin) / res[w]["events"]
              for c in ["floor", "wpstat", "bpftrace"]}
        m = mn if icount else mm
        rf, rb = ratio(m["wpstat"], m["floor"]), ratio(m["wpstat"], m["bpftrace"])
        rf2, rb2 = ratio(mm["wpstat"], mm["floor"]), ratio(mm["wpstat"], mm["bpftrace"])
        if icount:
            loss = 100.0 * (1 - bmin / min(cf["wpstat"]["wall"]))
            floss = 100.0 * (1 - bmin / min(cf["floor"]["wall"]))
        else:
            loss, floss = med(cf["wpstat"]["loss"]), med(cf["floor"]["loss"])
        summary[w] = (m, rf, rb, loss, floss, rf2, rb2, icount)
        if icount:
            cells = ["{:.0f} ({:.0f})".format(mn[c], mm[c])
                     for c in ["floor", "wpstat", "bpftrace"]]
            rcells = ["{} ({})".format(fmt_ratio(rf), fmt_ratio(rf2)),
                      "{} ({})".format(fmt_ratio(rb), fmt_ratio(rb2))]
        else:
            cells = ["{:.0f} ({})".format(mm[c], rng(cf[c]["added_ev"]))
                     for c in ["floor", "wpstat", "bpftrace"]]
            rcells = [fmt_ratio(rf), fmt_ratio(rb)]
        lcell = "{:.1f}%; {:.1f}%".format(loss, floss)
        out.append("| {} | {} | {} | {} |".format(
            w, " | ".join(cells), " | ".join(rcells), lcell))
    out.append("")

    out.append("### Memory, reading, overflow\n")
    reads = [float(v) for k, v in extra.items()
             if k.startswith("read_inodes_s_") and not k.endswith("[]") and v]
    read_s = med(reads) if reads else float("nan")
    lines = [
        ("entry_bytes (summary)", extra.get("entry_bytes", "?")),
        ("bytes per inode, measured (VmallocUsed, max_inodes 1024 vs 262144)",
         extra.get("measured_bytes_per_inode", "?")),
        ("table filled with", "{} files created ({} s); tracked_inodes {}".format(
            extra.get("fill_files", "?"),
            "{:.0f}".format(int(extra.get("fill_ms", 0)) / 1000),
            extra.get("fill_tracked_inodes", "?"))),
        ("read of `/proc/wpstat/inodes` with the table full (`dd`, 128 KiB reads)",
         "{:.3f} s (median of 3: {}; {} lines)".format(
             read_s, ", ".join("{:.3f}".format(r) for r in reads),
             extra.get("read_inodes_lines", "?"))),
        ("`wpstat show --top 10` with the table full", "{:.3f} s".format(
            int(extra.get("wpstat_show_top10_ns", 0)) / 1e9)),
    ]
    ov = {}
    for p in ("1", "2"):
        for k in ("vmalloc_kib", "slab_kib", "memavailable_kib"):
            b = extra.get("overflow_{}_before_{}".format(p, k))
            a = extra.get("overflow_{}_after_{}".format(p, k))
            if a is not None and b is not None:
                ov[(p, k)] = int(a) - int(b)
    unt = extra.get("overflow_untracked_events")
    exp = extra.get("overflow_untracked_expected")
    lines += [
        ("W3 past max_inodes", "max_inodes {}, {} files touched twice; "
         "tracked_inodes {}".format(extra.get("overflow_max_inodes", "?"),
                                    extra.get("overflow_files", "?"),
                                    extra.get("overflow_tracked_inodes", "?"))),
        ("memory change per touch of all files (VmallocUsed / Slab / MemAvailable, KiB)",
         "; ".join("pass {}: {:+d} / {:+d} / {:+d}".format(
             p, ov.get((p, "vmalloc_kib"), 0), ov.get((p, "slab_kib"), 0),
             ov.get((p, "memavailable_kib"), 0)) for p in ("1", "2"))),
        ("untracked_events vs lookups without a slot (totals minus table rows)",
         "{} vs {} ({})".format(unt, exp, "exact" if unt == exp else
                                 "**differ**")),
    ]
    out.append("| what | value |")
    out.append("|---|---|")
    for k, v in lines:
        out.append("| {} | {} |".format(k, v))
    out.append("")

    out.append("### Targets\n")
    out.append("| target | result | verdict |")
    out.append("|---|---|---|")
    def both(x, x2, ic, limit):
        v = lambda r: verdict(0 <= r <= limit, r if r >= 0 else float("nan"))
        if not ic:
            return fmt_ratio(x), v(x)
        a, b = v(x), v(x2)
        return ("{} (median: {})".format(fmt_ratio(x), fmt_ratio(x2)),
                a if a == b else "{} (fastest runs); {} (medians)".format(a, b))

    for w in WORKLOADS:
        m, rf, rb, loss, floss, rf2, rb2, ic = summary[w]
        out.append("| {} wpstat <= {}x floor's added cost | {} | {} |".format(
            w, TARGET_FLOOR, *both(rf, rf2, ic, TARGET_FLOOR)))
        out.append("| {} wpstat <= {}x bpftrace's added cost | {} | {} |".format(
            w, TARGET_BPF, *both(rb, rb2, ic, TARGET_BPF)))
    loss, floss = summary["W2"][3], summary["W2"][4]
    out.append("| W2 throughput loss < {}% | {:.1f}% (the floor alone: {:.1f}%) | {} |".format(
        TARGET_W2_LOSS, loss, floss, verdict(loss < TARGET_W2_LOSS)))
    out.append("| read of a full table < {} s | {:.3f} s ({} entries) | {} |".format(
        TARGET_READ_S, read_s, extra.get("fill_tracked_inodes", "?"),
        verdict(read_s < TARGET_READ_S)))
    # Flat: no growth of the module's memory (vmalloc) nor of the slab
    # beyond noise while 8,000 inodes find no slot, twice.
    flat = all(ov.get((p, "vmalloc_kib"), 1) <= 0 and
               ov.get((p, "slab_kib"), 1024) < 256 for p in ("1", "2"))
    out.append("| W3 past max_inodes: memory flat, overflow counted exactly | "
               "VmallocUsed {}; untracked {} | {} |".format(
                   "unchanged" if flat else "changed",
                   "exact" if unt == exp else "differs",
                   verdict(flat and unt == exp)))
    out.append("")
    return "\n".join(out), summary


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    base = sys.argv[1]
    header = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "bench", "benchmarks-head.md")
    with open(header) as f:
        print(f.read().rstrip("\n") + "\n")
    for k in sys.argv[2:]:
        d = os.path.join(base, k)
        if not os.path.exists(os.path.join(d, "runs.csv")):
            print("## {}\n\nNo results (runs.csv missing).\n".format(k))
            continue
        runs, extra = load(d)
        text, _ = kernel_section(k, runs, extra)
        print(text)
    tail = os.path.join(os.path.dirname(header), "benchmarks-tail.md")
    if os.path.exists(tail):
        with open(tail) as f:
            print(f.read().rstrip("\n"))


if __name__ == "__main__":
    main()
