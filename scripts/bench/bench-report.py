#!/usr/bin/env python3
"""Render docs/benchmarks.md from the results of `make bench`.

    scripts/bench/bench-report.py RESULTS_DIR KVER... > docs/benchmarks.md

RESULTS_DIR/<kver>/runs.csv, mech.csv, extra.txt, enabled-<config>.txt and
probes-<config>.txt come from scripts/bench/guest-bench.sh.  Per workload, the
added cost of a configuration is computed per round against that round's
baseline (the runs of one round are side by side in time, so drift
cancels) and divided by the events that the counts run of the same round
counted (the same denominator for every configuration); under instruction
time the fastest runs give the estimate and the median of the per-round
differences follows in brackets.  A configuration missing from runs.csv
(BENCH_CONFIGS) is left out of every table, and whatever needs it is
reported as not computed.
"""
import os
import sys

from bench_results import CONFIGS, FLOOR, LEVELS, NAN, WORKLOADS, Costs, \
    analyse, fmt_pct, fmt_ratio, load, mech_table, med, parse_enabled, \
    parse_probes, points_of, ratio, rng, verdict

OP = {"W1": "a page stored, msync included", "W2": "a 4 KiB write",
      "W3": "a file opened, written and closed"}
MECHS = ["none", "tracepoint", "ftrace", "ftrace_regs", "ftrace2", "kprobe",
         "ftrace_kprobe", "kretprobe", "fprobe", "fprobe_exit"]
MECH_WHAT = {
    "none": "nothing (the two loops should agree)",
    "tracepoint": "a tracepoint in the function, one probe",
    "ftrace": "an `ftrace_ops` callback, argument registers only "
              "(`struct ftrace_regs`, 5.11+: wpstat's ftrace points)",
    "ftrace_regs": "the same with `FTRACE_OPS_FL_SAVE_REGS` (wpstat's ftrace "
                   "points where there is no `struct ftrace_regs`: 5.10)",
    "ftrace2": "two `ftrace_ops` on one function: ftrace's list function",
    "kprobe": "a kprobe on the ftrace site (`kprobe_ftrace_handler`)",
    "ftrace_kprobe": "an `ftrace_ops` and a kprobe on one function",
    "kretprobe": "a kretprobe, entry and return handler",
    "fprobe": "an fprobe, entry handler only",
    "fprobe_exit": "an fprobe with entry and exit handlers",
}
# The wpmech measurement that stands for each kind of attachment point in
# debugfs wpstat/probes ("symbol" points attach nothing).
KIND_MECH = {"ftrace": "ftrace", "kretprobe": "kretprobe",
             "tracepoint": "tracepoint"}
KIND_NAME = {"ftrace": "ftrace callbacks", "kretprobe": "kretprobe hits",
             "tracepoint": "tracepoint hits"}
# What each kernel's section leaves for the comparison across kernels.
SUMMARY = {}


def kind_mech(cost):
    """wpmech's stand-in for each kind of point on one kernel: wpstat's
    ftrace points take the args-only ftrace_ops where the kernel has one,
    else (5.10, where wpmech refuses "ftrace") the SAVE_REGS one."""
    m = dict(KIND_MECH)
    if "ftrace" not in cost and "ftrace_regs" in cost:
        m["ftrace"] = "ftrace_regs"
    return m
TARGET_LOSS = {"W1": 5.0, "W2": 3.0, "W3": 2.0}   # level counts
TARGET_COUNTS_KFUNC = 0.5                          # W1, W2, W3
TARGET_TIMING_BT = 0.5                             # W1, W2; both scripts
TARGET_READ_S = 0.5


def tramp_summary(enabled):
    """One sentence: which trampolines serve how many ftrace sites, and
    whether any site has more than one user (ftrace's list function)."""
    if not enabled:
        return ""
    by = {}
    for e in enabled:
        k = (e["tramp"] or "no trampoline", e["callback"])
        by[k] = by.get(k, 0) + 1
    parts = ["`{}` calls `{}` for {} function{}".format(
        t, cb, n, "" if n == 1 else "s") for (t, cb), n in sorted(by.items())]
    shared = [e["func"] for e in enabled if int(e["refs"]) > 1]
    return " {} trampoline{}: {}. {}".format(
        len(by), "" if len(by) == 1 else "s", "; ".join(parts),
        "More than one user on {}: ftrace's list function there.".format(
            ", ".join(shared)) if shared else
        "Every site has one user (refcount 1), so no site goes through "
        "ftrace's list function.")


def measured(fast, pred):
    """The measured floor per op, and how it compares with the parts."""
    if fast != fast:
        return "nothing measured"
    if fast <= 0:
        return "{:.0f} measured (below the baseline: noise larger than " \
               "the floor)".format(fast)
    return "{:.0f} measured ({}x)".format(fast, fmt_ratio(ratio(fast, pred)))


def kernel_section(kver, d, runs, mech, extra):
    out = []
    ran = {r["config"] for r in runs}
    configs = [c for c in CONFIGS if c in ran]
    missing = [c for c in CONFIGS if c not in ran]
    res = analyse(runs, configs)
    points = points_of(runs)
    icount = extra.get("clock") == "icount"
    starts = []
    for bt in ("bt-kprobe", "bt-kfunc"):
        v = extra.get("start_ms_{}[]".format(bt), [])
        if v:
            starts.append("{} {} s".format(bt, "/".join(
                "{:.0f}".format(int(x) / 1000) for x in v)))
    out.append("## {}\n".format(kver))
    nr = extra.get("rounds", "?")
    out.append("Run {}, {} vCPU, {} round{}, clock: {}; the guest took {} s "
               "of host time, the rounds {:.0f} s of guest time{}{}.\n".format(
                   extra.get("date", "?"), extra.get("cpus", "?"),
                   nr, "" if nr == "1" else "s", extra.get("clock", "?"),
                   extra.get("guest_seconds", "?"),
                   int(extra.get("rounds_ms", "0")) / 1000,
                   ", the mechanism part {:.0f} s".format(
                       int(extra["mech_ms"]) / 1000) if "mech_ms" in extra else "",
                   "; bpftrace took {} of guest time to start, per round".format(
                       ", ".join(starts)) if starts else ""))
    for k in sorted(extra):
        if k.startswith("leftover_") and not k.endswith("[]"):
            out.append("**{} left attachments behind** ({} lines of kprobes "
                       "and `enabled_functions`, in `leftover-{}.txt`): the "
                       "configuration after it did not start clean.\n".format(
                           k[9:], extra[k], k[9:]))
    skipped = {k[8:]: v for k, v in extra.items()
               if k.startswith("skipped_") and not k.endswith("[]")}
    for c in sorted(skipped):
        out.append("**{} skipped on this kernel**: {} (`{}.log`).\n".format(
            c, skipped[c], c))
    missing = [c for c in missing if c not in skipped]
    if missing:
        out.append("Not run (`BENCH_CONFIGS`): {}; what needs them is left "
                   "out below.\n".format(", ".join(missing)))
    if "base" not in ran:
        out.append("No `base` runs: no added cost, loss or target can be "
                   "computed.\n")

    if not configs:
        out.append("No runs in runs.csv.\n")
        return "\n".join(out)

    # ---- time per op
    out.append("### Time per op (median, min-max over rounds)\n")
    out.append("One op: " + "; ".join("{}: {}".format(w, OP[w])
                                      for w in WORKLOADS) + ".\n")
    out.append("| workload | " + " | ".join(configs) + " |")
    out.append("|---|" + "---:|" * len(configs))
    for w in WORKLOADS:
        cells = []
        for c in configs:
            v = res[w]["cfg"][c]["nsop"]
            cells.append("{:.0f} ns ({})".format(med(v), rng(v)) if v else "-")
        out.append("| {} | {} |".format(w, " | ".join(cells)))
    out.append("")

    # ---- events
    out.append("### Events per run (the denominator)\n")
    src = next((res[w]["ev_src"] for w in WORKLOADS if res[w]["ev_src"]), None)
    if src is None:
        out.append("Neither counts nor timing ran: no events, so no cost per "
                   "event below.\n")
    else:
        out.append("Probe hits of the fast-path points ({}) in the {} run of "
                   "each round, median; the same number divides every "
                   "configuration's added time in that round.\n".format(
                       ", ".join(extra.get("event_points", "?").split()), src))
        out.append("| workload | ops | events | per op |")
        out.append("|---|---:|---:|---:|")
        for w in WORKLOADS:
            a = res[w]
            out.append("| {} | {} | {:.0f} | {:.2f} |".format(
                w, a["ops"], a["events"],
                a["events"] / a["ops"] if a["ops"] else NAN))
        out.append("")

    costs = {w: Costs(res[w], icount) for w in WORKLOADS}
    others = [c for c in configs if c != "base"]

    # ---- added cost per event
    out.append("### Added cost per event over the baseline (ns)\n")
    if icount:
        # Under -icount a run's own instructions are (nearly) fixed and
        # interference from other guest activity only adds: the fastest of
        # the rounds is the estimate.  The median of the per-round
        # differences (which wall-clock runs need) follows in brackets.
        out.append("From the fastest run of each configuration (instruction "
                   "time: interference only adds); in brackets the median of "
                   "the per-round differences.\n")
    else:
        out.append("Median of the per-round differences (min-max).\n")
    if "base" not in ran or src is None or not others:
        out.append("Not computed: {}.\n".format(
            "no base runs" if "base" not in ran else
            "no events (neither counts nor timing ran)" if src is None else
            "only base ran"))
    else:
        out.append("| workload | " + " | ".join(others) + " |")
        out.append("|---|" + "---:|" * len(others))
        for w in WORKLOADS:
            k = costs[w]
            if icount:
                cells = ["{:.0f} ({:.0f})".format(k.fastest(c), k.median(c))
                         for c in others]
            else:
                cells = ["{:.0f} ({})".format(k.median(c),
                                              rng(res[w]["cfg"][c]["added_ev"]))
                         for c in others]
            out.append("| {} | {} |".format(w, " | ".join(cells)))
        out.append("")
        pairs = [("counts", "floor-counts"), ("timing", "floor-timing"),
                 ("counts", "bt-kfunc"), ("counts", "bt-kprobe"),
                 ("timing", "bt-kprobe"), ("timing", "bt-kfunc"),
                 ("bt-kfunc", "bt-kprobe")]
        pairs = [p for p in pairs if p[0] in ran and p[1] in ran]
        if pairs:
            out.append("Ratios of those added costs{}:\n".format(
                " (fastest runs; medians in brackets)" if icount else ""))
            out.append("| workload | " + " | ".join(
                "{}/{}".format(*p) for p in pairs) + " |")
            out.append("|---|" + "---:|" * len(pairs))
            for w in WORKLOADS:
                k = costs[w]
                cells = []
                for x, y in pairs:
                    r1 = ratio(k.main(x), k.main(y))
                    r2 = ratio(k.median(x), k.median(y))
                    cells.append("{} ({})".format(fmt_ratio(r1), fmt_ratio(r2))
                                 if icount else fmt_ratio(r1))
                out.append("| {} | {} |".format(w, " | ".join(cells)))
            out.append("")

    # ---- throughput loss
    out.append("### Throughput loss against the baseline\n")
    if "base" not in ran or not others:
        out.append("Not computed: {}.\n".format(
            "no base runs" if "base" not in ran else "only base ran"))
    else:
        out.append("1 - base time / configuration time{}.\n".format(
            ", fastest runs (median of the per-round losses in brackets)"
            if icount else ", median of the per-round losses"))
        out.append("| workload | " + " | ".join(others) + " |")
        out.append("|---|" + "---:|" * len(others))
        for w in WORKLOADS:
            cells = []
            for c in others:
                l1, l2 = costs[w].loss(c)
                cells.append("{} ({})".format(fmt_pct(l1), fmt_pct(l2))
                             if icount else fmt_pct(l1))
            out.append("| {} | {} |".format(w, " | ".join(cells)))
        out.append("")

    # ---- attachments and hits per op, per level
    out.append("### What is attached, and what fires per op, at each level\n")
    probes_of = {}
    for lv in LEVELS:
        probes = parse_probes(os.path.join(d, "probes-{}.txt".format(lv)))
        enabled = parse_enabled(os.path.join(d, "enabled-{}.txt".format(lv)))
        probes_of[lv] = probes
        out.append("**level={}**{}\n".format(
            lv, "" if lv in ran else " (not run)"))
        if probes is None and enabled is None:
            out.append("No `probes-{0}.txt` / `enabled-{0}.txt` (the {0} "
                       "configuration did not run).\n".format(lv))
            continue
        out.append("Each point, its mechanism (debugfs `wpstat/probes`) "
                   "and, for functions, what `enabled_functions` shows at "
                   "its ftrace site: flags (R: registers saved, which "
                   "kprobes ask for), the trampoline the site calls, and "
                   "what that calls.{}\n".format(tramp_summary(enabled)))
        out.append("| point | target | kind | status | ftrace site: flags | trampoline | calls |")
        out.append("|---|---|---|---|---|---|---|")
        en = {e["func"]: e for e in (enabled or [])}
        seen = set()
        for p in probes or []:
            e = en.get(p["target"]) if p.get("kind") in ("ftrace", "kretprobe") else None
            if e:
                seen.add(e["func"])
            out.append("| {} | `{}` | {} | {} | {} | {} | {} |".format(
                p["probe"], p["target"], p["kind"], p["status"],
                (e["flags"] or "none") if e else "-",
                "`{}`".format(e["tramp"]) if e and e["tramp"] else
                ("ftrace caller" if e else "-"),
                "`{}`".format(e["callback"]) if e else "-"))
        for e in enabled or []:
            if e["func"] not in seen:
                out.append("| (other) | `{}` | - | - | {} | {} | `{}` |".format(
                    e["func"], e["flags"] or "none",
                    "`{}`".format(e["tramp"]) if e["tramp"] else "ftrace caller",
                    e["callback"]))
        out.append("")
        if not any(lv in res[w]["hits"] for w in WORKLOADS):
            continue
        out.append("Probe hits per op, level={} (median over rounds; a "
                   "kretprobe's entry and return are one hit):\n".format(lv))
        out.append("| workload | " + " | ".join(points) + " | all |")
        out.append("|---|" + "---:|" * (len(points) + 1))
        for w in WORKLOADS:
            h = res[w]["hits"].get(lv)
            if not h:
                continue
            tot = sum(v for v in h.values() if v == v)
            out.append("| {} | {} | {:.2f} |".format(w, " | ".join(
                "{:.2f}".format(h[p]) if h[p] == h[p] else "-"
                for p in points), tot))
        out.append("")

    # ---- mechanisms
    out.append("### Attachment mechanisms (wpmech.ko)\n")
    mt = mech_table(mech)
    cost = {}
    if not mt:
        out.append("Not measured (`BENCH_MECH=0`, or no `wpmech.ko`).\n")
    else:
        out.append("Instructions added per call of an empty noinline "
                   "function by each mechanism, with a handler that counts "
                   "its calls ({} calls per loop; median over rounds, "
                   "min-max).\n".format(mech[0]["calls"] if mech else "?"))
        out.append("| mechanism | what | instructions per call | handler calls per call | rounds |")
        out.append("|---|---|---:|---:|---:|")
        for m in MECHS + sorted(set(mt) - set(MECHS)):
            if m not in mt:
                continue
            x = mt[m]
            if x["added"]:
                cost[m] = med(x["added"])
                cell = "{:.0f} ({})".format(cost[m], rng(x["added"]))
            else:
                cell = "absent on this kernel (insmod refused it: `mech.log`)"
            out.append("| {} | {} | {} | {} | {} |".format(
                m, MECH_WHAT.get(m, ""), cell,
                "{:.0f}".format(med(x["hits"])) if x["hits"] else "-",
                len(x["added"])))
        out.append("")

    # ---- each level's floor from the parts
    kmech = kind_mech(cost)
    SUMMARY[kver] = {"cost": cost, "costs": costs, "ran": ran,
                     "icount": icount, "kmech": kmech,
                     "rounds": extra.get("rounds", "?")}
    if cost and "base" in ran:
        rows, sentences = [], []
        for lv in LEVELS:
            fl = FLOOR[lv]
            probes = probes_of.get(lv)
            if fl not in ran or probes is None:
                sentences.append("level={}: not explained ({} missing).".format(
                    lv, fl if fl not in ran else "probes-{}.txt".format(lv)))
                continue
            kind = {p["probe"]: p["kind"] for p in probes}
            for w in WORKLOADS:
                h = res[w]["hits"].get(lv)
                if not h:
                    continue
                per_kind = {}
                for p, v in h.items():
                    k = kind.get(p)
                    if k in KIND_MECH and v == v:
                        per_kind[k] = per_kind.get(k, 0.0) + v
                if any(kmech[k] not in cost for k in per_kind):
                    continue
                pred = sum(v * cost[kmech[k]] for k, v in per_kind.items())
                fast, mid = costs[w].added_per_op(fl)
                rows.append((lv, w, per_kind, pred, fast, mid))
        if rows:
            out.append("Each level's floor (empty handlers) from these parts: "
                       "hits per op of each kind of point (from the level's "
                       "own run) times that mechanism's instructions per call, "
                       "against the floor's measured added time per op "
                       "({}):\n".format("fastest runs, per-round median in "
                                        "brackets" if icount else "median"))
            out.append("| level | workload | ftrace callbacks/op | kretprobe hits/op | tracepoint hits/op | from the parts | floor measured | measured/parts |")
            out.append("|---|---|---:|---:|---:|---:|---:|---:|")
            for lv, w, pk, pred, fast, mid in rows:
                out.append("| {} | {} | {:.2f} | {:.2f} | {:.2f} | {:.0f} | {:.0f} ({:.0f}) | {} |".format(
                    lv, w, pk.get("ftrace", 0), pk.get("kretprobe", 0),
                    pk.get("tracepoint", 0), pred, fast, mid,
                    fmt_ratio(ratio(fast, pred)) if fast > 0 else
                    "n/a (noise)"))
            out.append("")
            for lv in LEVELS:
                mine = {w: (pk, pred, fast) for l, w, pk, pred, fast, _ in rows
                        if l == lv}
                if "W2" not in mine:
                    continue
                pk, pred, fast = mine["W2"]
                parts = " + ".join(
                    "{:.2f} {} x {:.0f}".format(pk[k], KIND_NAME[k] + (
                        " (SAVE_REGS)" if kmech[k] == "ftrace_regs" else ""),
                                                cost[kmech[k]])
                    for k in ("ftrace", "kretprobe", "tracepoint")
                    if pk.get(k, 0) >= 0.005)
                text = ("Level {}: a W2 write fires {} = {:.0f} instructions "
                        "per op from the mechanisms alone, against {} for "
                        "floor-{}".format(lv, parts or "nothing", pred,
                                          measured(fast, pred), lv))
                if "W1" in mine:
                    _, p1, f1 = mine["W1"]
                    text += "; on W1, {:.0f} against {}".format(
                        p1, measured(f1, p1))
                sentences.append(text + ".")
        if sentences:
            out.append(" ".join(sentences) + "\n")

    # ---- memory, reading, overflow (the default module: level counts)
    have_extras = "measured_bytes_per_inode" in extra or "fill_files" in extra
    reads = [float(v) for k, v in extra.items()
             if k.startswith("read_inodes_s_") and not k.endswith("[]") and v]
    read_s = med(reads) if reads else NAN
    unt = extra.get("overflow_untracked_events")
    exp = extra.get("overflow_untracked_expected")
    ov = {}
    for p in ("1", "2"):
        for k in ("vmalloc_kib", "slab_kib", "memavailable_kib"):
            b = extra.get("overflow_{}_before_{}".format(p, k))
            a = extra.get("overflow_{}_after_{}".format(p, k))
            if a is not None and b is not None:
                ov[(p, k)] = int(a) - int(b)
    out.append("### Memory, reading, overflow (level counts, the default)\n")
    if not have_extras:
        out.append("Not measured in this run (`BENCH_EXTRAS=0`).\n")
    else:
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
            ("`wpstat show --top 10` with the table full",
             "{:.3f} s (a second run: {} s user, {} s system)".format(
                 int(extra.get("wpstat_show_top10_ns", 0)) / 1e9,
                 extra.get("wpstat_show_top10_user_s", "?"),
                 extra.get("wpstat_show_top10_sys_s", "?"))),
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

    # ---- targets
    out.append("### Targets\n")
    out.append("| target | result | verdict | rounds |")
    out.append("|---|---|---|---|")

    def both(x, x2, ok, fmt=fmt_ratio, neg_is_noise=True):
        """Result and verdict from the fastest runs (x) and the medians (x2):
        one verdict if they agree, both if not.  A ratio that cannot be
        formed, or is negative, comes from a baseline as slow as the
        configuration: noise, not a measurement."""
        def v(r):
            if r != r or (neg_is_noise and r < 0):
                return verdict(False, NAN)
            return verdict(ok(r))
        if not icount:
            return fmt(x), v(x)
        a, b = v(x), v(x2)
        return ("{} (median: {})".format(fmt(x), fmt(x2)),
                a if a == b else "{} (fastest runs); {} (medians)".format(a, b))

    def row(name, need, result_verdict, nr, events=False):
        lack = [c for c in need if c not in ran]
        if lack:
            out.append("| {} | not computed: {} not run | - | 0 |".format(
                name, ", ".join(lack)))
        elif events and src is None:
            out.append("| {} | not computed: no events | - | 0 |".format(name))
        else:
            out.append("| {} | {} | {} | {} |".format(name, *result_verdict, nr))

    for w in WORKLOADS:
        k = costs[w]
        l1, l2 = k.loss("counts")
        f1, _ = k.loss("floor-counts")
        res_, ver = both(l1, l2, lambda r: r < TARGET_LOSS[w], fmt=fmt_pct,
                         neg_is_noise=False)
        if "floor-counts" in ran and f1 == f1:
            res_ += " (floor-counts alone: {})".format(fmt_pct(f1))
        row("level counts: {} throughput loss < {}%".format(w, TARGET_LOSS[w]),
            ["base", "counts"], (res_, ver), k.rounds("counts"))
    for w in WORKLOADS:
        k = costs[w]
        row("level counts: {} added cost <= {}x bt-kfunc's".format(
            w, TARGET_COUNTS_KFUNC), ["base", "counts", "bt-kfunc"],
            both(ratio(k.main("counts"), k.main("bt-kfunc")),
                 ratio(k.median("counts"), k.median("bt-kfunc")),
                 lambda r: r <= TARGET_COUNTS_KFUNC),
            k.rounds("counts", "bt-kfunc"), events=True)
    for w in ("W1", "W2"):
        k = costs[w]
        for bt in ("bt-kprobe", "bt-kfunc"):
            row("level timing: {} added cost <= {}x {}'s".format(
                w, TARGET_TIMING_BT, bt), ["base", "timing", bt],
                both(ratio(k.main("timing"), k.main(bt)),
                     ratio(k.median("timing"), k.median(bt)),
                     lambda r: r <= TARGET_TIMING_BT),
                k.rounds("timing", bt), events=True)
    if have_extras:
        out.append("| read of a full table < {} s | {:.3f} s ({} entries) | {} | 1 run, {} reads |".format(
            TARGET_READ_S, read_s, extra.get("fill_tracked_inodes", "?"),
            verdict(read_s < TARGET_READ_S), len(reads)))
        # Flat: no growth of the module's memory (vmalloc) nor of the slab
        # beyond noise while 8,000 inodes find no slot, twice.
        flat = all(ov.get((p, "vmalloc_kib"), 1) <= 0 and
                   ov.get((p, "slab_kib"), 1024) < 256 for p in ("1", "2"))
        out.append("| W3 past max_inodes: memory flat, overflow counted exactly | "
                   "VmallocUsed {}; untracked {} | {} | 1 run (2 passes) |".format(
                       "unchanged" if flat else "changed",
                       "exact" if unt == exp else "differs",
                       verdict(flat and unt == exp)))
    else:
        out.append("| read of a full table < {} s | not measured (`BENCH_EXTRAS=0`) | - | 0 |".format(TARGET_READ_S))
        out.append("| W3 past max_inodes: memory flat, overflow counted exactly | not measured (`BENCH_EXTRAS=0`) | - | 0 |")
    out.append("")
    return "\n".join(out)


def pos(x):
    """x if it is a cost above the baseline, else NaN (noise)."""
    return x if x == x and x > 0 else NAN


def across(kvers):
    """The kernels of this run side by side: each mechanism's cost, what
    SAVE_REGS adds to an ftrace_ops callback, and wpstat's added cost per
    event on each kernel as a ratio to one 6.12's."""
    ks = [k for k in kvers if k in SUMMARY]
    if len(ks) < 2:
        return ""
    ref = next((k for k in ks if k.startswith("6.12.")), ks[-1])
    others = [k for k in ks if k != ref]
    out = ["## Across kernels\n",
           "The sections above side by side ({} rounds each; in instruction "
           "time a kernel's figures do not depend on what ran beside it). "
           "Ratios are to {}.\n".format(
               "/".join(sorted({SUMMARY[k]["rounds"] for k in ks})), ref)]
    out.append("**Mechanisms**, instructions per call (wpmech.ko, median "
               "over rounds); *absent*: the kernel has no such mechanism "
               "(wpmech refused it), not a cost of zero.\n")
    out.append("| mechanism | " + " | ".join(ks) + " |")
    out.append("|---|" + "---:|" * len(ks))
    for m in MECHS:
        if not any(m in SUMMARY[k]["cost"] for k in ks):
            continue
        out.append("| {} | {} |".format(m, " | ".join(
            "{:.0f}".format(SUMMARY[k]["cost"][m]) if m in SUMMARY[k]["cost"]
            else "absent" for k in ks)))

    def regs_ratio(k):
        c = SUMMARY[k]["cost"]
        if "ftrace" in c and "ftrace_regs" in c:
            return "{} (+{:.0f})".format(
                fmt_ratio(ratio(c["ftrace_regs"], c["ftrace"])),
                c["ftrace_regs"] - c["ftrace"])
        return "n/a (no args-only ftrace)" if "ftrace_regs" in c else "n/a"

    def wp_cb(k):
        m = SUMMARY[k]["kmech"]["ftrace"]
        c = SUMMARY[k]["cost"]
        return "{} {:.0f}".format(m, c[m]) if m in c else "-"
    out.append("| SAVE_REGS / args-only (ftrace_regs / ftrace) | {} |".format(
        " | ".join(regs_ratio(k) for k in ks)))
    out.append("| wpstat's ftrace callback | {} |".format(
        " | ".join(wp_cb(k) for k in ks)))
    out.append("")
    rc = SUMMARY[ref]["cost"]
    rm = SUMMARY[ref]["kmech"]["ftrace"]
    text = []
    if "ftrace" in rc and "ftrace_regs" in rc:
        text.append("On {}, `FTRACE_OPS_FL_SAVE_REGS` makes a callback cost "
                    "{:.0f} instructions instead of {:.0f} args-only: {}x.".format(
                        ref, rc["ftrace_regs"], rc["ftrace"],
                        fmt_ratio(ratio(rc["ftrace_regs"], rc["ftrace"]))))
    for k in others:
        km = SUMMARY[k]["kmech"]["ftrace"]
        kc = SUMMARY[k]["cost"]
        if km != rm and km in kc and rm in rc:
            text.append("On {}, wpstat's callbacks are `{}` ones: {:.0f} "
                        "instructions, {}x {}'s `{}` callback ({:.0f}).".format(
                            k, km, kc[km],
                            fmt_ratio(ratio(kc[km], rc[rm])), ref, rm, rc[rm]))
    if text:
        out.append(" ".join(text) + "\n")

    cfgs = [c for c in ("floor-counts", "counts", "floor-timing", "timing")
            if all(c in SUMMARY[k]["ran"] and "base" in SUMMARY[k]["ran"]
                   for k in ks)]
    if not cfgs:
        return "\n".join(out)
    icount = all(SUMMARY[k]["icount"] for k in ks)
    out.append("**wpstat's added cost per event** over each kernel's own "
               "baseline ({}), and its ratio to {}'s. The events are each "
               "kernel's own fast-path probe hits (per op they differ: see "
               "each section's events table).\n".format(
                   "fastest runs, per-round medians in brackets" if icount
                   else "medians", ref))
    out.append("| workload | config | " + " | ".join(ks) + " | " + " | ".join(
        "{} / {}".format(k.split("-")[0], ref.split("-")[0]) for k in others) + " |")
    out.append("|---|---|" + "---:|" * (len(ks) + len(others)))
    for w in WORKLOADS:
        for c in cfgs:
            cells = []
            for k in ks:
                k_ = SUMMARY[k]["costs"][w]
                cells.append("{:.0f} ({:.0f})".format(k_.main(c), k_.median(c))
                             if icount else "{:.0f}".format(k_.main(c)))
            r = SUMMARY[ref]["costs"][w]
            for k in others:
                k_ = SUMMARY[k]["costs"][w]
                r1 = ratio(pos(k_.main(c)), r.main(c))
                r2 = ratio(pos(k_.median(c)), r.median(c))
                cells.append("{} ({})".format(fmt_ratio(r1), fmt_ratio(r2))
                             if icount else fmt_ratio(r1))
            out.append("| {} | {} | {} |".format(w, c, " | ".join(cells)))
    out.append("")
    out.append("A ratio is n/a where either cost is at or below its "
               "baseline (noise larger than the cost).\n")
    return "\n".join(out)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    base = sys.argv[1]
    header = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "benchmarks-head.md")
    with open(header) as f:
        print(f.read().rstrip("\n") + "\n")
    for k in sys.argv[2:]:
        d = os.path.join(base, k)
        if not os.path.exists(os.path.join(d, "runs.csv")):
            print("## {}\n\nNo results (runs.csv missing).\n".format(k))
            continue
        runs, mech, extra = load(d)
        print(kernel_section(k, d, runs, mech, extra))
    a = across(sys.argv[2:])
    if a:
        print(a)
    tail = os.path.join(os.path.dirname(header), "benchmarks-tail.md")
    if os.path.exists(tail):
        with open(tail) as f:
            print(f.read().rstrip("\n"))


if __name__ == "__main__":
    main()
