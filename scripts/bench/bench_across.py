"""The kernels of a `make bench` run side by side
(docs/results/benchmarks.md's
"Across kernels", scripts/bench/bench-report.py), from the summary each
kernel's section leaves (bench_kernel.kernel_section).
"""
from bench_mechanisms import MECHS
from bench_results import WORKLOADS, fmt_ratio, pos, ratio


def across(kvers, summary):
    """The kernels of this run side by side: each mechanism's cost, what
    SAVE_REGS adds to an ftrace_ops callback, and wpstat's added cost per
    event on each kernel as a ratio to one 6.12's.  summary: {kernel:
    what its section left}."""
    ks = [k for k in kvers if k in summary]
    if len(ks) < 2:
        return ""
    ref = next((k for k in ks if k.startswith("6.12.")), ks[-1])
    out = ["## Across kernels\n",
           "The sections above side by side ({} rounds each; in instruction "
           "time a kernel's figures do not depend on what ran beside it). "
           "Ratios are to {}.\n".format(
               "/".join(sorted({summary[k]["rounds"] for k in ks})), ref)]
    out += mechanisms_table(ks, summary)
    out += callback_text(ks, ref, summary)
    out += added_cost_table(ks, ref, summary)
    out += new_points_table(ks, summary)
    return "\n".join(out)


def mechanisms_table(ks, summary):
    """Each mechanism's instructions per call on each kernel; what
    SAVE_REGS costs; which callback wpstat's ftrace points get."""
    out = ["**Mechanisms**, instructions per call (wpmech.ko, median "
           "over rounds); *absent*: the kernel has no such mechanism "
           "(wpmech refused it), not a cost of zero.\n"]
    out.append("| mechanism | " + " | ".join(ks) + " |")
    out.append("|---|" + "---:|" * len(ks))
    for m in MECHS:
        if not any(m in summary[k]["cost"] for k in ks):
            continue
        out.append("| {} | {} |".format(m, " | ".join(
            "{:.0f}".format(summary[k]["cost"][m]) if m in summary[k]["cost"]
            else "absent" for k in ks)))

    def regs_ratio(k):
        c = summary[k]["cost"]
        if "ftrace" in c and "ftrace_regs" in c:
            return "{} (+{:.0f})".format(
                fmt_ratio(ratio(c["ftrace_regs"], c["ftrace"])),
                c["ftrace_regs"] - c["ftrace"])
        return "n/a (no args-only ftrace)" if "ftrace_regs" in c else "n/a"

    def wp_cb(k):
        m = summary[k]["kmech"]["ftrace"]
        c = summary[k]["cost"]
        return "{} {:.0f}".format(m, c[m]) if m in c else "-"
    out.append("| SAVE_REGS / args-only (ftrace_regs / ftrace) | {} |".format(
        " | ".join(regs_ratio(k) for k in ks)))
    out.append("| wpstat's ftrace callback | {} |".format(
        " | ".join(wp_cb(k) for k in ks)))
    out.append("")
    return out


def callback_text(ks, ref, summary):
    """What SAVE_REGS costs on the reference kernel, and what wpstat's
    callbacks cost on a kernel that has only SAVE_REGS ones."""
    rc = summary[ref]["cost"]
    rm = summary[ref]["kmech"]["ftrace"]
    text = []
    if "ftrace" in rc and "ftrace_regs" in rc:
        text.append("On {}, `FTRACE_OPS_FL_SAVE_REGS` makes a callback cost "
                    "{:.0f} instructions instead of {:.0f} args-only: {}x.".format(
                        ref, rc["ftrace_regs"], rc["ftrace"],
                        fmt_ratio(ratio(rc["ftrace_regs"], rc["ftrace"]))))
    for k in [k for k in ks if k != ref]:
        km = summary[k]["kmech"]["ftrace"]
        kc = summary[k]["cost"]
        if km != rm and km in kc and rm in rc:
            text.append("On {}, wpstat's callbacks are `{}` ones: {:.0f} "
                        "instructions, {}x {}'s `{}` callback ({:.0f}).".format(
                            k, km, kc[km],
                            fmt_ratio(ratio(kc[km], rc[rm])), ref, rm, rc[rm]))
    return [" ".join(text) + "\n"] if text else []


def added_cost_table(ks, ref, summary):
    """wpstat's added cost per event on each kernel, and its ratio to the
    reference kernel's; only the configurations every kernel ran."""
    others = [k for k in ks if k != ref]
    cfgs = [c for c in ("floor-counts", "counts", "floor-timing", "timing",
                        "timing-skip")
            if all(c in summary[k]["ran"] and "base" in summary[k]["ran"]
                   for k in ks)]
    # The workloads every kernel ran (results from before W4 or W5 lack
    # them).
    wls = [w for w in WORKLOADS
           if all(summary[k]["costs"][w].a["rounds"] for k in ks)]
    if not cfgs:
        return []
    icount = all(summary[k]["icount"] for k in ks)
    out = ["**wpstat's added cost per event** over each kernel's own "
           "baseline ({}), and its ratio to {}'s. The events are each "
           "kernel's own fast-path probe hits (per op they differ: see "
           "each section's events table); W4's are its page faults, "
           "W5's the inodes it destroyed (the evict point's hits).\n".format(
               "fastest runs, per-round medians in brackets" if icount
               else "medians", ref)]
    out.append("| workload | config | " + " | ".join(ks) + " | " + " | ".join(
        "{} / {}".format(k.split("-")[0], ref.split("-")[0]) for k in others) + " |")
    out.append("|---|---|" + "---:|" * (len(ks) + len(others)))
    for w in wls:
        for c in cfgs:
            cells = []
            for k in ks:
                k_ = summary[k]["costs"][w]
                cells.append("{:.0f} ({:.0f})".format(k_.main(c), k_.median(c))
                             if icount else "{:.0f}".format(k_.main(c)))
            r = summary[ref]["costs"][w]
            for k in others:
                k_ = summary[k]["costs"][w]
                r1 = ratio(pos(k_.main(c)), r.main(c))
                r2 = ratio(pos(k_.median(c)), r.median(c))
                cells.append("{} ({})".format(fmt_ratio(r1), fmt_ratio(r2))
                             if icount else fmt_ratio(r1))
            out.append("| {} | {} | {} |".format(w, c, " | ".join(cells)))
    out.append("")
    out.append("A ratio is n/a where either cost is at or below its "
               "baseline (noise larger than the cost).\n")
    return out


def new_points_table(ks, summary):
    """What the points only level timing attaches cost on each kernel:
    per op, timing less timing-skip paired by round, with their share of
    timing's time; and W4, every page fault, and W5, every inode
    destroyed: level counts' and level timing's time against the
    baseline's, paired by round."""
    ks = [k for k in ks if summary[k].get("new_points") or
          summary[k].get("fault") or summary[k].get("inode")]
    if not ks:
        return []
    wls = [w for w in WORKLOADS
           if all(w in summary[k]["new_points"] for k in ks)]
    out = ["**Level timing's own points on each kernel** (the whole write "
           "fault, the journal waits): per op, timing "
           "less timing-skip (the same level without them), median of "
           "the per-round differences, with their share of timing's "
           "time; for W4, every page fault, and W5, every inode "
           "destroyed, each level's time / the baseline's, paired by "
           "round (median, the range, the rounds).\n"]
    out.append("| workload | what | " + " | ".join(ks) + " |")
    out.append("|---|---|" + "---:|" * len(ks))
    for w in wls:
        cells = []
        for k in ks:
            n = summary[k]["new_points"][w]
            d, sh = n["paired"], n["share"]
            cells.append("{:.0f} ({:.1f}%)".format(d[0], sh[0]) if d and sh
                         else "-")
        out.append("| {} | timing's own points, per op | {} |".format(
            w, " | ".join(cells)))
    for w, part, what in (("W4", "fault", "fault"),
                          ("W5", "inode", "inode destroyed")):
        for c in ("counts", "timing"):
            if not any(c in summary[k].get(part, {}) for k in ks):
                continue
            cells = []
            for k in ks:
                r = summary[k].get(part, {}).get(c)
                cells.append("{:.3f}x ({:.3f}-{:.3f}, {} round{})".format(
                    r["ratio"][0], r["ratio"][1], r["ratio"][2], r["rounds"],
                    "" if r["rounds"] == 1 else "s") if r else "-")
            out.append("| {} | level {}: time per {} / base's | {} |".format(
                w, c, what, " | ".join(cells)))
    out.append("")
    return out
