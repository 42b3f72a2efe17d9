"""One kernel's section of docs/results/benchmarks.md
(scripts/bench/bench-report.py):
the run, time per op, the events, the added cost and throughput loss of
each configuration, and what is attached at each level.  The mechanisms,
the floors, memory and the targets come from bench_mechanisms.py and
bench_targets.py; kernel_section() puts them in the page's order.
"""
import functools
import os

from bench_mechanisms import floor_section, kind_mech, mech_costs, \
    mechanisms_section
from bench_results import CONFIGS, LEVELS, NAN, PER_FAULT, PER_INODE, PER_WAIT, \
    TIMING_OWN, WORKLOADS, Costs, analyse, fmt_pct, fmt_ratio, med, parse_enabled, \
    parse_kprobes, parse_probes, points_of, pos, ratio, rng
from bench_targets import extras_section, targets_section

OP = {"W1": "a page stored, msync included", "W2": "a 4 KiB write",
      "W3": "a file opened, written and closed",
      "W4": "a page fault on anonymous memory (a store to an untouched "
            "page, its share of mmap and munmap included)",
      "W5": "an inode destroyed (pipes and socket pairs closed): what "
            "every CPU of a busy machine does, none of wpstat's business",
      "W6": "an uncached 4 KiB page read from a slow device, written back "
            "and waited for, by a process that maps nothing: a reader's "
            "and a syncer's page-bit sleeps, none of them a write fault's"}


class KernelRun:
    """One kernel's results and what the sections compute from them."""

    def __init__(self, kver, d, runs, mech, extra):
        self.kver, self.d, self.mech, self.extra = kver, d, mech, extra
        self.ran = {r["config"] for r in runs}
        self.configs = [c for c in CONFIGS if c in self.ran]
        self.res = analyse(runs, self.configs, extra["time_basis"])
        self.points = points_of(runs)
        self.icount = extra.get("clock") == "icount"
        # The workloads that ran (results from before W4 or W5 lack them).
        self.workloads = [w for w in WORKLOADS if self.res[w]["rounds"]]
        # The level whose runs counted the events, None if neither ran.
        self.src = next((self.res[w]["ev_src"] for w in self.workloads
                         if self.res[w]["ev_src"] and w not in PER_FAULT),
                        None)
        self.costs = {w: Costs(self.res[w], self.icount) for w in WORKLOADS}
        self.others = [c for c in self.configs if c != "base"]

    @functools.cached_property
    def probes(self):
        """{level: debugfs wpstat/probes at that level, or None}."""
        return {lv: parse_probes(os.path.join(self.d, "probes-{}.txt".format(lv)))
                for lv in LEVELS}

    @functools.cached_property
    def kprobes(self):
        """{level: debugfs kprobes/list at that level, or None}."""
        return {lv: parse_kprobes(os.path.join(self.d, "kprobes-{}.txt".format(lv)))
                for lv in LEVELS}

    @functools.cached_property
    def enabled(self):
        """{level: enabled_functions at that level, or None}."""
        return {lv: parse_enabled(os.path.join(self.d, "enabled-{}.txt".format(lv)))
                for lv in LEVELS}


def kernel_section(kver, d, runs, mech, extra):
    """(Markdown, summary) of one kernel; the summary, for the comparison
    across kernels, is None without runs."""
    k = KernelRun(kver, d, runs, mech, extra)
    out = run_section(k)
    if not k.configs:
        out.append("No runs in runs.csv.\n")
        return "\n".join(out), None
    out += time_section(k)
    out += events_section(k)
    out += added_cost_section(k)
    out += loss_section(k)
    out += fault_section(k)
    out += inode_section(k)
    out += new_points_section(k)
    out += ab_section(k)
    out += attachments_section(k)
    out += mechanisms_section(mech)
    cost = mech_costs(mech)
    kmech = kind_mech(cost)
    summary = {"cost": cost, "costs": k.costs, "ran": k.ran,
               "icount": k.icount, "kmech": kmech,
               "rounds": extra.get("rounds", "?"),
               "new_points": new_points(k), "fault": side_ratios(k, "W4"),
               "inode": side_ratios(k, "W5")}
    out += floor_section(k, cost, kmech)
    out += extras_section(extra)
    out += targets_section(k)
    return "\n".join(out), summary


def run_section(k):
    """The kernel's heading, its run (date, clock, times), and what did not
    run or left attachments behind."""
    extra = k.extra
    out = []
    # alt-* run only when asked for (BENCH_ALT): not missing otherwise.
    missing = [c for c in CONFIGS
               if c not in k.ran and not c.startswith("alt-")]
    starts = []
    for bt in ("bt-kprobe", "bt-kfunc"):
        v = extra.get("start_ms_{}[]".format(bt), [])
        if v:
            starts.append("{} {} s".format(bt, "/".join(
                "{:.0f}".format(int(x) / 1000) for x in v)))
    out.append("## {}\n".format(k.kver))
    nr = extra.get("rounds", "?")
    out.append("Run {}, {} vCPU, {} round{}, clock: {}, time: {}; the guest took {} s "
               "of host time, the rounds {:.0f} s of guest time{}{}.\n".format(
                   extra.get("date", "?"), extra.get("cpus", "?"),
                   nr, "" if nr == "1" else "s", extra.get("clock", "?"),
                   "the workload's CPU time" if extra.get("time_basis") == "cpu_ns"
                   else "elapsed",
                   extra.get("guest_seconds", "?"),
                   int(extra.get("rounds_ms", "0")) / 1000,
                   ", the mechanism part {:.0f} s".format(
                       int(extra["mech_ms"]) / 1000) if "mech_ms" in extra else "",
                   "; bpftrace took {} of guest time to start, per round".format(
                       ", ".join(starts)) if starts else ""))
    for key in sorted(extra):
        if key.startswith("leftover_") and not key.endswith("[]"):
            out.append("**{} left attachments behind** ({} lines of kprobes "
                       "and `enabled_functions`, in `leftover-{}.txt`): the "
                       "configuration after it did not start clean.\n".format(
                           key[9:], extra[key], key[9:]))
    if "alt_rev" in extra:
        out.append("**alt-counts and alt-timing** load the module of revision "
                   "`{}` (`BENCH_ALT`), the others this tree's: an A/B of "
                   "that change in one run.\n".format(extra["alt_rev"]))
    if extra.get("bt_unattached"):
        out.append("**Left out: {}**. These runs began before bpftrace had "
                   "attached its probes (the runs of `make bench` before "
                   "2026-11-26 did): they measured bpftrace starting, not "
                   "its probes.\n".format(extra["bt_unattached"]))
    skipped = {key[8:]: v for key, v in extra.items()
               if key.startswith("skipped_") and not key.endswith("[]")}
    for c in sorted(skipped):
        out.append("**{} skipped on this kernel**: {} (`{}.log`).\n".format(
            c, skipped[c], c))
    missing = [c for c in missing if c not in skipped and
               c not in extra.get("bt_unattached", "").split()]
    if missing:
        out.append("Not run (`BENCH_CONFIGS`): {}; what needs them is left "
                   "out below.\n".format(", ".join(missing)))
    if "base" not in k.ran:
        out.append("No `base` runs: no added cost, loss or target can be "
                   "computed.\n")
    absent = [w for w in WORKLOADS if w not in k.workloads]
    if absent and k.configs:
        out.append("No {} runs in `runs.csv` (results from before {} "
                   "part of the benchmark): {} left out below.\n".format(
                       ", ".join(absent),
                       "it was" if len(absent) == 1 else "they were",
                       "it is" if len(absent) == 1 else "they are"))
    return out


def time_section(k):
    """Time per op of each configuration: median and range over rounds."""
    out = ["### Time per op (median, min-max over rounds)\n"]
    out.append("One op: " + "; ".join("{}: {}".format(w, OP[w])
                                      for w in k.workloads) + ".\n")
    out.append("| workload | " + " | ".join(k.configs) + " |")
    out.append("|---|" + "---:|" * len(k.configs))
    for w in k.workloads:
        cells = []
        for c in k.configs:
            v = k.res[w]["cfg"][c]["nsop"]
            cells.append("{:.0f} ns ({})".format(med(v), rng(v)) if v else "-")
        out.append("| {} | {} |".format(w, " | ".join(cells)))
    out.append("")
    return out


def events_section(k):
    """The events per run, the denominator of every cost per event."""
    out = ["### Events per run (the denominator)\n"]
    if k.src is None:
        out.append("Neither counts nor timing ran: no events, so no cost per "
                   "event below.\n")
        return out
    per_inode = [w for w in k.workloads if w in PER_INODE]
    per_wait = [w for w in k.workloads if w in PER_WAIT]
    instead = ["; for {}, the hits of {} instead".format(
        w, ", ".join(k.extra.get("event_points_" + w,
                                 {"W5": "evict"}.get(w, "?")).split()))
        for w in per_inode + per_wait]
    out.append("Probe hits of the fast-path points ({}) in the {} run of "
               "each round, median{}; the same number divides every "
               "configuration's added time in that round.\n".format(
                   ", ".join(k.extra.get("event_points", "?").split()), k.src,
                   "".join(instead)))
    out.append("| workload | ops | events | per op |")
    out.append("|---|---:|---:|---:|")
    for w in k.workloads:
        a = k.res[w]
        if w in PER_FAULT:
            out.append("| {} | {} | {:.0f} faults | 1 |".format(
                w, a["ops"], a["events"]))
            continue
        out.append("| {} | {} | {:.0f} | {:.2f} |".format(
            w, a["ops"], a["events"],
            a["events"] / a["ops"] if a["ops"] else NAN))
    out.append("")
    per_fault = [w for w in k.workloads if w in PER_FAULT]
    if per_fault:
        out.append("{}: the denominator is the page faults the process "
                   "took in its loop (`getrusage`), median over its runs: "
                   "none of the fast-path points fires on an anonymous "
                   "fault, so its cost \"per event\" below is per fault. "
                   "At level timing the `fault` point fires on each "
                   "(the hits tables).\n".format(", ".join(per_fault)))
    if per_inode:
        out.append("{}: the events are the `evict` point's hits "
                   "(`__destroy_inode`, one per inode destroyed: a pipe's, "
                   "each socket's of a pair), so its cost per event is per "
                   "inode destroyed; they count the inodes the workload's "
                   "shell pipeline destroys too, a few a run.\n".format(
                       ", ".join(per_inode)))
    if per_wait:
        out.append("{}: the events are its writeback waits (the `tp_wait` "
                   "point's hits), one an op; each op also sleeps once "
                   "for its read, which only level timing's `lock` point "
                   "sees (the hits tables).\n".format(", ".join(per_wait)))
    return out


def added_cost_section(k):
    """Added cost per event over the baseline, and the ratios of those
    costs between configurations."""
    out = ["### Added cost per event over the baseline (ns)\n"]
    if k.icount:
        # Under -icount a run's own instructions are (nearly) fixed and
        # interference from other guest activity only adds: the fastest of
        # the rounds is the estimate.  The median of the per-round
        # differences (which wall-clock runs need) follows in brackets.
        out.append("From the fastest run of each configuration (instruction "
                   "time: interference only adds); in brackets the median of "
                   "the per-round differences.\n")
    else:
        out.append("Median of the per-round differences (min-max).\n")
    if "base" not in k.ran or k.src is None or not k.others:
        out.append("Not computed: {}.\n".format(
            "no base runs" if "base" not in k.ran else
            "no events (neither counts nor timing ran)" if k.src is None else
            "only base ran"))
        return out
    out.append("| workload | " + " | ".join(k.others) + " |")
    out.append("|---|" + "---:|" * len(k.others))
    for w in k.workloads:
        c_ = k.costs[w]
        if k.icount:
            cells = ["{:.0f} ({:.0f})".format(c_.fastest(c), c_.median(c))
                     for c in k.others]
        else:
            cells = ["{:.0f} ({})".format(c_.median(c),
                                          rng(k.res[w]["cfg"][c]["added_ev"]))
                     for c in k.others]
        out.append("| {} | {} |".format(w, " | ".join(cells)))
    out.append("")
    return out + cost_ratios(k)


def cost_ratios(k):
    """The ratios of the added costs of pairs of configurations that ran."""
    pairs = [("counts", "floor-counts"), ("timing", "floor-timing"),
             ("counts", "bt-kfunc"), ("counts", "bt-kprobe"),
             ("timing", "bt-kprobe"), ("timing", "bt-kfunc"),
             ("bt-kfunc", "bt-kprobe")]
    pairs = [p for p in pairs if p[0] in k.ran and p[1] in k.ran]
    if not pairs:
        return []
    out = ["Ratios of those added costs{}:\n".format(
        " (fastest runs; medians in brackets)" if k.icount else "")]
    out.append("| workload | " + " | ".join(
        "{}/{}".format(*p) for p in pairs) + " |")
    out.append("|---|" + "---:|" * len(pairs))
    for w in k.workloads:
        c_ = k.costs[w]
        cells = []
        for x, y in pairs:
            r1 = ratio(pos(c_.main(x)), c_.main(y))
            r2 = ratio(pos(c_.median(x)), c_.median(y))
            cells.append("{} ({})".format(fmt_ratio(r1), fmt_ratio(r2))
                         if k.icount else fmt_ratio(r1))
        out.append("| {} | {} |".format(w, " | ".join(cells)))
    out.append("")
    return out


def loss_section(k):
    """Throughput loss of each configuration against the baseline."""
    out = ["### Throughput loss against the baseline\n"]
    if "base" not in k.ran or not k.others:
        out.append("Not computed: {}.\n".format(
            "no base runs" if "base" not in k.ran else "only base ran"))
        return out
    out.append("1 - base time / configuration time{}.\n".format(
        ", fastest runs (median of the per-round losses in brackets)"
        if k.icount else ", median of the per-round losses"))
    out.append("| workload | " + " | ".join(k.others) + " |")
    out.append("|---|" + "---:|" * len(k.others))
    for w in k.workloads:
        cells = []
        for c in k.others:
            l1, l2 = k.costs[w].loss(c)
            cells.append("{} ({})".format(fmt_pct(l1), fmt_pct(l2))
                         if k.icount else fmt_pct(l1))
        out.append("| {} | {} |".format(w, " | ".join(cells)))
    out.append("")
    return out


def ab_section(k):
    """BENCH_ALT: each alt-<level> against <level>, paired by round (the
    two ran side by side in it, so a round's drift cancels)."""
    out = []
    for lv in LEVELS:
        alt = "alt-" + lv
        if alt not in k.ran or lv not in k.ran:
            continue
        if not out:
            out.append("### A/B: revision {} against this tree\n".format(
                k.extra.get("alt_rev", "?")))
            out.append("Per round, alt time / this tree's time - 1 for the "
                       "same workload (negative: the revision is faster), "
                       "and the difference in ns per event; median over the "
                       "rounds, in brackets the range, then how many rounds "
                       "the revision was faster.\n")
            out.append("| level | workload | time | per event | faster in |")
            out.append("|---|---|---:|---:|---:|")
        for w in k.workloads:
            a = k.res[w]["cfg"]
            ta = dict(zip(a[alt]["rounds"], a[alt]["wall"]))
            tb = dict(zip(a[lv]["rounds"], a[lv]["wall"]))
            rds = sorted(set(ta) & set(tb))
            if not rds:
                continue
            rel = [100.0 * (ta[r] / tb[r] - 1) for r in rds]
            e = k.res[w]["events"]
            per_ev = [(ta[r] - tb[r]) / e for r in rds] if e == e and e else []
            span = "{:+.1f}% to {:+.1f}%".format(min(rel), max(rel))
            out.append("| {} | {} | {:+.1f}% ({}) | {} | {} of {} |".format(
                lv, w, med(rel), span,
                "{:+.0f} ns ({:+.0f} to {:+.0f})".format(
                    med(per_ev), min(per_ev), max(per_ev))
                if per_ev else "-",
                sum(1 for x in rel if x < 0), len(rel)))
    if out:
        out.append("")
    return out


def attachments_section(k):
    """At each level: every point, its mechanism and ftrace site; the probe
    hits per op."""
    out = ["### What is attached, and what fires per op, at each level\n"]
    for lv in LEVELS:
        probes, enabled = k.probes[lv], k.enabled[lv]
        out.append("**level={}**{}\n".format(
            lv, "" if lv in k.ran else " (not run)"))
        if probes is None and enabled is None:
            out.append("No `probes-{0}.txt` / `enabled-{0}.txt` (the {0} "
                       "configuration did not run).\n".format(lv))
            continue
        out += points_table(probes, enabled, k.kprobes[lv])
        if any(lv in k.res[w]["hits"] for w in k.workloads):
            out += hits_table(k, lv)
    return out


def points_table(probes, enabled, kprobes=None):
    """Each point, its mechanism (debugfs wpstat/probes) and what
    enabled_functions shows at its ftrace site (a kretprobe without one
    is a breakpoint, as debugfs kprobes/list says); then the sites no
    point names."""
    out = ["Each point, its mechanism (debugfs `wpstat/probes`) "
           "and, for functions, what `enabled_functions` shows at "
           "its ftrace site: flags (R: registers saved, which "
           "kprobes ask for), the trampoline the site calls, and "
           "what that calls; a kretprobe that `kprobes/list` shows "
           "without `[FTRACE]` is a breakpoint (int3) instead.{}\n".format(
               tramp_summary(enabled))]
    out.append("| point | target | kind | status | ftrace site: flags | trampoline | calls |")
    out.append("|---|---|---|---|---|---|---|")
    en = {e["func"]: e for e in (enabled or [])}
    seen = set()
    for p in probes or []:
        e = en.get(p["target"]) if p.get("kind") in ("ftrace", "kretprobe") else None
        if e:
            seen.add(e["func"])
        kp = (kprobes or {}).get(p["target"])
        if not e and p.get("kind") == "kretprobe" and kp and not kp["ftrace"]:
            out.append("| {} | `{}` | {} | {} | no ftrace site | breakpoint "
                       "(int3){} | `pre_handler_kretprobe` |".format(
                           p["probe"], p["target"], p["kind"], p["status"],
                           ", in module {}".format(kp["module"])
                           if kp["module"] else ""))
            continue
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
    return out


def tramp_summary(enabled):
    """One sentence: which trampolines serve how many ftrace sites, and
    whether any site has more than one user (ftrace's list function)."""
    if not enabled:
        return ""
    by = {}
    for e in enabled:
        key = (e["tramp"] or "no trampoline", e["callback"])
        by[key] = by.get(key, 0) + 1
    parts = ["`{}` calls `{}` for {} function{}".format(
        t, cb, n, "" if n == 1 else "s") for (t, cb), n in sorted(by.items())]
    shared = [e["func"] for e in enabled if int(e["refs"]) > 1]
    return " {} trampoline{}: {}. {}".format(
        len(by), "" if len(by) == 1 else "s", "; ".join(parts),
        "More than one user on {}: ftrace's list function there.".format(
            ", ".join(shared)) if shared else
        "Every site has one user (refcount 1), so no site goes through "
        "ftrace's list function.")


def hits_table(k, lv):
    """Probe hits per op at level lv, per point and in all; "-" for a
    point not attached at that level (off, skipped, not found)."""
    status = {p["probe"]: p["status"] for p in (k.probes.get(lv) or [])}
    out = ["Probe hits per op, level={} (median over rounds; a "
           "kretprobe's entry and return are one hit, and an entry "
           "that refuses its return, as the `fault` point's for any "
           "fault but a shared-mapping write, is one hit too; \"-\": "
           "not attached at this level). Hits are counted system-wide "
           "from the workload's start to its end, its start-up "
           "included, while its time is its loop's alone: a W2 "
           "process's own faults are its start-up.\n".format(lv)]
    out.append("| workload | " + " | ".join(k.points) + " | all |")
    out.append("|---|" + "---:|" * (len(k.points) + 1))
    for w in k.workloads:
        h = k.res[w]["hits"].get(lv)
        if not h:
            continue
        tot = sum(v for v in h.values() if v == v)
        out.append("| {} | {} | {:.2f} |".format(w, " | ".join(
            "{:.2f}".format(h[p]) if h[p] == h[p] and
            status.get(p, "attached") == "attached" else "-"
            for p in k.points), tot))
    out.append("")
    return out


def fault_section(k):
    """W4 side by side: each configuration's time per fault against the
    baseline's of the same round (the runs of a round run one after the
    other, so drift cancels), as a ratio, with the rounds it rests on."""
    if "W4" not in k.workloads or "base" not in k.ran:
        return []
    rows = side_ratios(k, "W4")
    if not rows:
        return []
    out = ["### Every page fault (W4), side by side\n"]
    t, c = rows.get("timing"), rows.get("counts")
    lead = []
    for name, r in (("level timing", t), ("level counts", c)):
        if r:
            lead.append("{} makes an anonymous page fault take {:.3f}x the "
                        "baseline's time ({:.3f}-{:.3f}, {} round{})".format(
                            name, r["ratio"][0], r["ratio"][1], r["ratio"][2],
                            r["rounds"], "" if r["rounds"] == 1 else "s"))
    if lead:
        out.append("W4's faults are none of wpstat's business (anonymous "
                   "memory, nothing shared), so what a configuration adds "
                   "to them is what every other process's faults pay while "
                   "it is loaded: {}.\n".format("; ".join(lead)))
    out.append("Per configuration: time per fault (median over rounds); "
               "its time / base's time in the same round (paired: the "
               "two ran side by side), median over the rounds with the "
               "range; the rounds paired; the added time per fault "
               "and the loss{}. floor-timing arms `handle_mm_fault`'s "
               "return probe on every fault, which the real handler "
               "refuses: on W4 it is no floor.\n".format(
                   ", fastest runs" if k.icount else ", medians"))
    out += side_table(k, "W4", rows, "fault")
    return out


def inode_section(k):
    """W5 side by side, as W4: each configuration's time per inode
    destroyed against the baseline's of the same round, as a ratio, with
    the rounds it rests on; level counts is judged on it (the targets)."""
    if "W5" not in k.workloads or "base" not in k.ran:
        return []
    rows = side_ratios(k, "W5")
    if not rows:
        return []
    out = ["### Inodes destroyed (W5), side by side\n"]
    lead = []
    for name, r in (("level counts", rows.get("counts")),
                    ("level timing", rows.get("timing"))):
        if r:
            lead.append("{} makes destroying an inode take {:.3f}x the "
                        "baseline's time ({:.3f}-{:.3f}, {} round{})".format(
                            name, r["ratio"][0], r["ratio"][1], r["ratio"][2],
                            r["rounds"], "" if r["rounds"] == 1 else "s"))
    if lead:
        out.append("W5's inodes (pipes, sockets) are none of wpstat's "
                   "business: the `evict` point (`__destroy_inode`) reads "
                   "each one's type and returns, and that is what every "
                   "pipe and socket closed on the machine pays while the "
                   "module is loaded: {}.\n".format("; ".join(lead)))
    out.append("Per configuration: time per inode destroyed (median over "
               "rounds, its creation included); its time / base's time in "
               "the same round (paired), median over the rounds with the "
               "range; the rounds paired; the added time per inode and the "
               "loss{}.\n".format(", fastest runs" if k.icount else ", medians"))
    out += side_table(k, "W5", rows, "inode")
    return out


def side_table(k, w, rows, op):
    """The side-by-side table of workload w (W4, W5) from side_ratios():
    each configuration's time per op against base's, paired by round."""
    cf = k.res[w]["cfg"]
    out = ["| config | ns per {0} | / base, paired by round | rounds "
           "| added per {0} | loss |".format(op),
           "|---|---:|---:|---:|---:|---:|",
           "| base | {:.0f} | 1 | {} | 0 | 0 |".format(
               med(cf["base"]["nsop"]), len(cf["base"]["rounds"]))]
    for c in k.others:
        r = rows.get(c)
        if not r:
            continue
        out.append("| {} | {:.0f} | {:.3f} ({:.3f}-{:.3f}) | {} | {:.0f} | {} |".format(
            c, med(cf[c]["nsop"]), r["ratio"][0], r["ratio"][1],
            r["ratio"][2], r["rounds"], r["added"], fmt_pct(r["loss"])))
    out.append("")
    return out


def side_ratios(k, w):
    """{config: workload w's numbers against base} (W4, W5): the time
    ratio paired by round (median, min, max), the rounds, added ns per op
    and the loss (fastest runs under instruction time); {} without w or
    base."""
    if w not in k.workloads or "base" not in k.ran:
        return {}
    c_ = k.costs[w]
    res = {}
    for c in k.others:
        r = paired(k, w, c, "base", how="ratio")
        if not r:
            continue
        res[c] = {"ratio": r, "rounds": c_.rounds(c),
                  "added": c_.added_per_op(c)[0], "loss": c_.loss(c)[0]}
    return res


def new_points_section(k):
    """What the points only level timing attaches cost: timing against
    timing-skip (the same level without them), paired by round; and,
    beside it, what counts, timing-skip and timing add over base."""
    out = ["### What level timing's own points cost\n"]
    out.append("Level timing attaches kretprobes that level counts does "
               "not: on `handle_mm_fault` (the `fault` point: every page "
               "fault of every process enters it; its entry handler "
               "refuses the return probe for any fault but a write to a "
               "shared file mapping) and on the calls whose "
               "waits it times ({}). **timing-skip** loads level timing without "
               "them (`skip_probes=`): timing less timing-skip is what "
               "they cost. Level counts attaches none of them. Per op{}; "
               "W4's op is one fault, W5's one inode destroyed.\n".format(
                   ", ".join("`{}`".format(p) for p in TIMING_OWN[1:]),
                   ", fastest runs (median of the per-round differences "
                   "in brackets)" if k.icount else
                   ", median of the per-round differences"))
    need = [c for c in ("base", "counts", "timing", "timing-skip")
            if c not in k.ran]
    if need:
        out.append("Not computed: {} not run.\n".format(", ".join(need)))
        return out
    out.append("| workload | their hits per op (timing) | counts, added per op | "
               "timing-skip, added per op | timing, added per op | "
               "their cost per op (timing - timing-skip) | their "
               "share of timing's time | rounds | timing's loss against base |")
    out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for w, n in new_points(k).items():
        named = ", ".join("{} {:.2f}".format(p, v) for p, v in n["hits"]
                          if v >= 0.005)
        cells = ["{:.0f} ({:.0f})".format(*n[c]) if k.icount
                 else "{:.0f}".format(n[c][0])
                 for c in ("counts", "timing-skip", "timing")]
        d, share, (l1, l2) = n["paired"], n["share"], n["loss"]
        out.append("| {} | {} | {} | {} | {} | {} | {} |".format(
            w, named or "none", " | ".join(cells),
            "{:.0f} ({:.0f} to {:.0f})".format(*d) if d else "-",
            "{:.1f}% ({:.1f} to {:.1f})".format(*share) if share else "-",
            n["rounds"],
            "{} ({})".format(fmt_pct(l1), fmt_pct(l2)) if k.icount
            else fmt_pct(l1)))
    out.append("")
    out.append("Their cost per op and their share pair each timing run "
               "with the timing-skip run of its round (median; in "
               "brackets the range over the rounds counted); the share "
               "is 1 - timing-skip's time / timing's.\n")
    return out


def new_points(k):
    """{workload: the numbers of the table of timing's own points}, empty
    unless base, counts, timing and timing-skip ran: added per op
    (fastest, median) of counts, timing-skip and timing, the points'
    paired cost and share and the rounds paired, the losses of timing
    and counts, and the points' hits per op at level timing."""
    if any(c not in k.ran for c in ("base", "counts", "timing", "timing-skip")):
        return {}
    res = {}
    for w in k.workloads:
        c_ = k.costs[w]
        h = k.res[w]["hits"].get("timing") or {}
        n = {c: c_.added_per_op(c) for c in ("counts", "timing-skip", "timing")}
        n["paired"] = paired(k, w, "timing", "timing-skip")
        n["share"] = paired(k, w, "timing", "timing-skip", how="share")
        cf = k.res[w]["cfg"]
        n["rounds"] = len(set(cf["timing"]["rounds"]) &
                          set(cf["timing-skip"]["rounds"]))
        n["loss"] = c_.loss("timing")
        n["loss_counts"] = c_.loss("counts")
        n["hits"] = [(p, h[p]) for p in TIMING_OWN if p in h and h[p] == h[p]]
        res[w] = n
    return res


def paired(k, w, a, b, how="diff"):
    """(median, min, max) over the rounds both ran of: a's time less b's
    per op (diff), 1 - b's time / a's in % (share), or a's time / b's
    (ratio); None without paired rounds."""
    cf = k.res[w]["cfg"]
    if a not in cf or b not in cf:
        return None
    ta = dict(zip(cf[a]["rounds"], cf[a]["wall"]))
    tb = dict(zip(cf[b]["rounds"], cf[b]["wall"]))
    rds = sorted(set(ta) & set(tb))
    ops = k.res[w]["ops"]
    if not rds or not ops:
        return None
    f = {"diff": lambda x, y: (x - y) / ops,
         "share": lambda x, y: 100.0 * (1 - y / x),
         "ratio": lambda x, y: x / y}[how]
    xs = [f(ta[r], tb[r]) for r in rds]
    return med(xs), min(xs), max(xs)
