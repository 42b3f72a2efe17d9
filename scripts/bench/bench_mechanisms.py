"""The attachment mechanisms of docs/results/benchmarks.md
(scripts/bench/bench-report.py):
what each costs per call on one kernel (wpmech.ko, mech.csv), and each
level's floor (empty handlers) predicted from those costs and the probe
hits per op, against the floor measured.
"""
from bench_results import FLOOR, LEVELS, fmt_ratio, mech_table, med, \
    ratio, rng

MECHS = ["none", "tracepoint", "ftrace", "ftrace_regs", "ftrace2", "kprobe",
         "ftrace_kprobe", "kretprobe", "kretprobe_refused", "kretprobe_int3",
         "kretprobe_int3_refused", "fprobe", "fprobe_exit"]
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
    "kretprobe_refused": "a kretprobe whose entry handler refuses the "
                         "return (wpstat's `lock` point outside a timed "
                         "fault)",
    "kretprobe_int3": "a kretprobe on a function with no ftrace site: a "
                      "breakpoint, before the kprobe optimizer makes it a "
                      "jump (as it does the `lock` point on the static "
                      "`folio_wait_bit_common()`)",
    "kretprobe_int3_refused": "the same, its return refused: an upper bound "
                              "of what the `lock` point costs every page-bit "
                              "sleep outside a timed fault",
    "fprobe": "an fprobe, entry handler only",
    "fprobe_exit": "an fprobe with entry and exit handlers",
}
# The wpmech measurement that stands for each kind of attachment point in
# debugfs wpstat/probes ("symbol" points attach nothing).
KIND_MECH = {"ftrace": "ftrace", "kretprobe": "kretprobe",
             "tracepoint": "tracepoint"}
KIND_NAME = {"ftrace": "ftrace callbacks", "kretprobe": "kretprobe hits",
             "tracepoint": "tracepoint hits"}


def kind_mech(cost):
    """wpmech's stand-in for each kind of point on one kernel: wpstat's
    ftrace points take the args-only ftrace_ops where the kernel has one,
    else (5.10, where wpmech refuses "ftrace") the SAVE_REGS one."""
    m = dict(KIND_MECH)
    if "ftrace" not in cost and "ftrace_regs" in cost:
        m["ftrace"] = "ftrace_regs"
    return m


def measured(fast, pred):
    """The measured floor per op, and how it compares with the parts."""
    if fast != fast:
        return "nothing measured"
    if fast <= 0:
        return "{:.0f} measured (below the baseline: noise larger than " \
               "the floor)".format(fast)
    return "{:.0f} measured ({}x)".format(fast, fmt_ratio(ratio(fast, pred)))


def mech_costs(mech):
    """{mechanism: median instructions per call}, those wpmech measured."""
    mt = mech_table(mech)
    return {m: med(mt[m]["added"]) for m in MECHS + sorted(set(mt) - set(MECHS))
            if m in mt and mt[m]["added"]}


def mechanisms_section(mech):
    """Instructions added per call by each mechanism."""
    out = ["### Attachment mechanisms (wpmech.ko)\n"]
    mt = mech_table(mech)
    if not mt:
        out.append("Not measured (`BENCH_MECH=0`, or no `wpmech.ko`).\n")
        return out
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
            cell = "{:.0f} ({})".format(med(x["added"]), rng(x["added"]))
        else:
            cell = "absent on this kernel (insmod refused it: `mech.log`)"
        out.append("| {} | {} | {} | {} | {} |".format(
            m, MECH_WHAT.get(m, ""), cell,
            "{:.0f}".format(med(x["hits"])) if x["hits"] else "-",
            len(x["added"])))
    out.append("")
    return out


def floor_section(k, cost, kmech):
    """Each level's floor from the parts: a table per level and workload,
    a sentence per level (W2, and W1 where it has one); none without
    mechanism costs or base runs."""
    if not (cost and "base" in k.ran):
        return []
    out = []
    rows, sentences = floor_rows(k, cost, kmech)
    if rows:
        out.append("Each level's floor (empty handlers) from these parts: "
                   "hits per op of each kind of point (from the level's "
                   "own run) times that mechanism's instructions per call, "
                   "against the floor's measured added time per op "
                   "({}):\n".format("fastest runs, per-round median in "
                                    "brackets" if k.icount else "median"))
        out.append("| level | workload | ftrace callbacks/op | kretprobe hits/op | tracepoint hits/op | from the parts | floor measured | measured/parts |")
        out.append("|---|---|---:|---:|---:|---:|---:|---:|")
        for lv, w, pk, pred, fast, mid in rows:
            out.append("| {} | {} | {:.2f} | {:.2f} | {:.2f} | {:.0f} | {:.0f} ({:.0f}) | {} |".format(
                lv, w, pk.get("ftrace", 0), pk.get("kretprobe", 0),
                pk.get("tracepoint", 0), pred, fast, mid,
                fmt_ratio(ratio(fast, pred)) if fast > 0 else
                "n/a (noise)"))
        out.append("")
        sentences += floor_sentences(rows, cost, kmech)
    if sentences:
        out.append(" ".join(sentences) + "\n")
    return out


def floor_rows(k, cost, kmech):
    """(rows, sentences): per level and workload (level, workload, hits per
    op of each kind of point, the floor predicted, measured fastest and
    median); a sentence for each level that cannot be explained."""
    rows, sentences = [], []
    for lv in LEVELS:
        fl = FLOOR[lv]
        probes = k.probes.get(lv)
        if fl not in k.ran or probes is None:
            sentences.append("level={}: not explained ({} missing).".format(
                lv, fl if fl not in k.ran else "probes-{}.txt".format(lv)))
            continue
        kind = {p["probe"]: p["kind"] for p in probes}
        for w in k.workloads:
            h = k.res[w]["hits"].get(lv)
            if not h:
                continue
            per_kind = {}
            for p, v in h.items():
                kd = kind.get(p)
                if kd in KIND_MECH and v == v:
                    per_kind[kd] = per_kind.get(kd, 0.0) + v
            if any(kmech[kd] not in cost for kd in per_kind):
                continue
            pred = sum(v * cost[kmech[kd]] for kd, v in per_kind.items())
            fast, mid = k.costs[w].added_per_op(fl)
            rows.append((lv, w, per_kind, pred, fast, mid))
    return rows, sentences


def floor_sentences(rows, cost, kmech):
    """Per level: what a W2 write fires from the mechanisms alone against
    the floor measured; W1's numbers too where it has a row."""
    sentences = []
    for lv in LEVELS:
        mine = {w: (pk, pred, fast) for l, w, pk, pred, fast, _ in rows
                if l == lv}
        if "W2" not in mine:
            continue
        pk, pred, fast = mine["W2"]
        parts = " + ".join(
            "{:.2f} {} x {:.0f}".format(pk[kd], KIND_NAME[kd] + (
                " (SAVE_REGS)" if kmech[kd] == "ftrace_regs" else ""),
                                        cost[kmech[kd]])
            for kd in ("ftrace", "kretprobe", "tracepoint")
            if pk.get(kd, 0) >= 0.005)
        text = ("Level {}: a W2 write fires {} = {:.0f} instructions "
                "per op from the mechanisms alone, against {} for "
                "floor-{}".format(lv, parts or "nothing", pred,
                                  measured(fast, pred), lv))
        if "W1" in mine:
            _, p1, f1 = mine["W1"]
            text += "; on W1, {:.0f} against {}".format(
                p1, measured(f1, p1))
        sentences.append(text + ".")
    return sentences
