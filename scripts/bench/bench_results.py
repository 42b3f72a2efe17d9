"""The numbers of `make bench` (scripts/bench/bench-report.py): reading a
kernel's results (runs.csv, mech.csv, extra.txt, the probes and
enabled_functions snapshots) and what the tables compute from them, the
added cost per event and the throughput loss of each configuration.
"""
import csv
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
import wpstat_counters  # noqa: E402

# alt-counts and alt-timing: the module of another revision (BENCH_ALT);
# timing-skip: level timing without the points only it attaches
# (TIMING_OWN).
CONFIGS = ["base", "floor-counts", "counts", "floor-timing", "timing",
           "timing-skip", "alt-counts", "alt-timing", "bt-kprobe", "bt-kfunc"]
LEVELS = ["counts", "timing"]
FLOOR = {"counts": "floor-counts", "timing": "floor-timing"}
WORKLOADS = ["W1", "W2", "W3", "W4", "W5", "W6"]
# Workloads whose denominator is their own ops, the page faults the
# process took (getrusage), not probe hits: no fast-path point fires on
# an anonymous fault.
PER_FAULT = ("W4",)
# Workloads whose events are the hits of the evict point (__destroy_inode)
# instead of the fast-path points' (guest-bench.sh's events_of): each of
# W5's ops destroys an inode (a pipe's, a socket's) and nothing else of
# wpstat's fires.  Results from before W5 have no such runs.
PER_INODE = ("W5",)
# W6's events are its writeback waits (the tp_wait point's hits), one an
# op beside its read's wait: no fast-path point fires in a process that
# maps nothing and only waits.  Results from before W6 have no such runs.
PER_WAIT = ("W6",)
# The points only level timing attaches (NONE at level counts in
# uapi/wpstat_probes.def, read by scripts/lib/wpstat_counters.py; the
# configuration timing-skip leaves them out): the write fault timed
# whole, and the journal waits of faults and write(2).
TIMING_OWN = wpstat_counters.timing_own()

NAN = float("nan")


def med(xs):
    return statistics.median(xs) if xs else NAN


def rng(xs, fmt="{:.0f}"):
    if not xs:
        return "-"
    return (fmt + "-" + fmt).format(min(xs), max(xs))


def num(s):
    """An int from a CSV field, None if empty or not a number."""
    try:
        return int(s)
    except (TypeError, ValueError):
        return None


def load(d):
    """(runs, mech, extra) of a kernel's results directory d: the rows of
    runs.csv and mech.csv (none without it), and extra.txt's key=value
    lines, the last value of each key and, under key + "[]", all of them."""
    runs = []
    with open(os.path.join(d, "runs.csv")) as f:
        for row in csv.DictReader(f):
            runs.append(row)
    mech = []
    path = os.path.join(d, "mech.csv")
    if os.path.exists(path):
        with open(path) as f:
            mech = list(csv.DictReader(f))
    extra = {}
    path = os.path.join(d, "extra.txt")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    extra.setdefault(k + "[]", []).append(v)
                    extra[k] = v
    # Until 2026-11-26 a bpftrace configuration's runs began once bpftrace
    # printed "Attaching N probes...", before any probe was attached (10 s
    # of guest time on 6.12): they measured its start-up, not its probes.
    # Runs since record what was attached (attached_<config>); runs
    # without that record are left out, and the page says so.
    stale = sorted({r["config"] for r in runs if r["config"].startswith("bt-")
                    and "attached_" + r["config"] not in extra})
    if stale:
        extra["bt_unattached"] = " ".join(stale)
        runs = [r for r in runs if r["config"] not in stale]
    # The runs.csv column every table reads a run's time from.
    extra["time_basis"] = time_key(runs, extra)
    return runs, mech, extra


def points_of(runs):
    """The attachment points, in the order of runs.csv's hits_ columns."""
    if not runs:
        return []
    return [k[5:] for k in runs[0].keys() if k.startswith("hits_")]


def analyse(runs, configs, key):
    """{workload: {...}} with the numbers of the tables; a run's time is
    its runs.csv column @key (extra["time_basis"])."""
    points = points_of(runs)
    res = {}
    for w in WORKLOADS:
        by = {}  # (config, round) -> run
        for r in runs:
            if r["workload"] == w:
                by[(r["config"], int(r["round"]))] = r
        rounds = sorted({k[1] for k in by})
        if w in PER_FAULT:
            # Its ops are its faults: the same in every configuration
            # but for a stray fault or two, so their median divides the
            # added time of every configuration (as events do).
            src, ev = "faults", {}
            events = med([int(r["ops"]) for r in by.values()])
        else:
            src, ev = events_of_rounds(by, rounds)
            events = med(list(ev.values()))
        ops = next((int(r["ops"]) for r in by.values()), 0)
        a = {"rounds": rounds, "events": events, "ev_src": src, "ops": ops,
             "cfg": {}, "hits": hits_per_op(by, rounds, points)}
        for c in configs:
            a["cfg"][c] = config_numbers(by, rounds, c, ev, events, key)
        res[w] = a
    return res


def events_of_rounds(by, rounds):
    """(level, {round: events}): the events of a round are its timing
    run's (the same denominator for every configuration), where every
    fast-path point fires; the counts run's if timing did not run (it
    leaves the per-write denominators' points off: fewer hits)."""
    src = next((c for c in ("timing", "counts")
                if any(num(by[k]["events"]) is not None
                       for k in by if k[0] == c)), None)
    ev = {}
    if src:
        ev = {rd: num(by[(src, rd)]["events"]) for rd in rounds
              if (src, rd) in by and num(by[(src, rd)]["events"])}
    return src, ev


def hits_per_op(by, rounds, points):
    """Probe hits per op at each level, per point (median over rounds)."""
    hits = {}
    for lv in LEVELS:
        xs = [by[(lv, rd)] for rd in rounds if (lv, rd) in by]
        if xs:
            hits[lv] = {
                p: med([num(x["hits_" + p]) / int(x["ops"]) for x in xs
                        if num(x["hits_" + p]) is not None])
                for p in points}
    return hits


def time_key(runs, extra):
    """The runs.csv column a run's time is read from: cpu_ns (the
    workload process's CPU time) where the run recorded it and BENCH_TIME
    was not wall, else wall_ns (results from before cpu_ns existed)."""
    if extra.get("time", "cpu") == "cpu" and runs and \
            all(num(r.get("cpu_ns")) for r in runs):
        return "cpu_ns"
    return "wall_ns"


def config_numbers(by, rounds, c, ev, events, key):
    """One configuration's runs of a workload: ns per op, wall time and
    round of each; against the same round's base, the loss in % and the
    added ns per event."""
    nsop, added_ev, loss, wall, rds = [], [], [], [], []
    for rd in rounds:
        if (c, rd) not in by:
            continue
        x = by[(c, rd)]
        wall.append(int(x[key]))
        nsop.append(int(x[key]) / int(x["ops"]))
        rds.append(rd)
        if ("base", rd) not in by:
            continue
        bwall = int(by[("base", rd)][key])
        loss.append(100.0 * (1 - bwall / int(x[key])))
        e = ev.get(rd, events)
        if e == e and e:
            added_ev.append((int(x[key]) - bwall) / e)
    return {"nsop": nsop, "added_ev": added_ev, "wall": wall,
            "loss": loss, "rounds": rds}


def pos(x):
    """x if it is a cost above the baseline, else NaN (noise)."""
    return x if x == x and x > 0 else NAN


def ratio(a, b):
    if b is None or a is None or a != a or b != b or b <= 0:
        return NAN
    return a / b


def fmt_ratio(x):
    return "n/a" if x != x else "{:.2f}".format(x)


def fmt_pct(x):
    return "n/a" if x != x else "{:.1f}%".format(x)


def verdict(ok, x=0.0):
    if x != x:
        return "not measurable (baseline noise)"
    return "met" if ok else "**missed**"


class Costs:
    """Added cost per event and throughput loss of each configuration of
    one workload: from the fastest runs (icount) or per-round medians."""

    def __init__(self, a, icount):
        self.a, self.icount = a, icount
        cf = a["cfg"]
        self.has_base = "base" in cf and cf["base"]["wall"]
        self.bmin = min(cf["base"]["wall"]) if self.has_base else None

    def present(self, c):
        return c in self.a["cfg"] and bool(self.a["cfg"][c]["wall"])

    def fastest(self, c):
        """Added ns per event, fastest run against the fastest base."""
        e = self.a["events"]
        if not (self.has_base and self.present(c)) or e != e or not e:
            return NAN
        return (min(self.a["cfg"][c]["wall"]) - self.bmin) / e

    def median(self, c):
        if not self.present(c):
            return NAN
        return med(self.a["cfg"][c]["added_ev"])

    def main(self, c):
        return self.fastest(c) if self.icount else self.median(c)

    def loss(self, c):
        """(estimate, median of per-round losses), in %."""
        if not (self.has_base and self.present(c)):
            return NAN, NAN
        m = med(self.a["cfg"][c]["loss"])
        if not self.icount:
            return m, m
        return 100.0 * (1 - self.bmin / min(self.a["cfg"][c]["wall"])), m

    def added_per_op(self, c):
        """(fastest, median) added ns per op over base."""
        if not (self.has_base and self.present(c)):
            return NAN, NAN
        cf = self.a["cfg"]
        ops = self.a["ops"]
        fast = (min(cf[c]["wall"]) - self.bmin) / ops
        bw = dict(zip(cf["base"]["rounds"], cf["base"]["wall"]))
        per = [(x - bw[rd]) / ops for rd, x in zip(cf[c]["rounds"], cf[c]["wall"])
               if rd in bw]
        return (fast if self.icount else med(per)), med(per)

    def rounds(self, *cs):
        """Rounds in which base and every configuration in cs ran."""
        sets = [set(self.a["cfg"][c]["rounds"]) if self.present(c) else set()
                for c in ("base",) + cs]
        return len(set.intersection(*sets))


def parse_enabled(path):
    """enabled_functions lines: (function, refs, flags, trampoline,
    callback); a module's function ("jbd2__journal_start [jbd2] (1)") by
    its name alone."""
    out = []
    if not os.path.exists(path):
        return None
    strip = lambda s: re.sub(r"\+0x[0-9a-f]+/0x[0-9a-f]+", "", s).strip()
    with open(path) as f:
        for line in f:
            m = re.match(r"^(\S+)(?: \[\S+\])? \((\d+)\)([^\t]*)(.*)$",
                         line.rstrip("\n"))
            if not m:
                continue
            rest = m.group(4)
            t = re.search(r"tramp: (\S+) \(([^)]*)\)", rest)
            cb = re.search(r"->(\S+(?: \[\S+\])?)", rest)
            out.append({"func": m.group(1), "refs": m.group(2),
                        "flags": " ".join(m.group(3).split()),
                        "tramp": t.group(1) if t else "",
                        "callback": strip(cb.group(1)) if cb else
                        (strip(t.group(2)) if t else "")})
    return out


def parse_kprobes(path):
    """debugfs kprobes/list ("ADDR  r  func+0x4  [module ]flags"):
    {function: {"ftrace": on an ftrace site, "module": its module or ""}},
    None without the file."""
    if not os.path.exists(path):
        return None
    out = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"^\S+\s+[krp]\s+([^+\s]+)\+\S+\s*(\w*)\s*(.*)$",
                         line.strip())
            if not m:
                continue
            out[m.group(1)] = {"ftrace": "[FTRACE]" in m.group(3),
                               "module": m.group(2)}
    return out


def parse_probes(path):
    """debugfs wpstat/probes: [{probe, target, kind, status, hits, missed}]."""
    if not os.path.exists(path):
        return None
    with open(path) as f:
        lines = [l.split() for l in f if l.strip()]
    if not lines:
        return None
    head = lines[0]
    return [dict(zip(head, l)) for l in lines[1:] if len(l) == len(head)]


def mech_table(mech):
    """{mech: {"added": [instructions per call per round], "na": n, ...}}."""
    res = {}
    for r in mech:
        m = res.setdefault(r["mech"], {"added": [], "na": 0, "hits": [],
                                       "calls": r["calls"]})
        x = num(r["added_x1000"])
        if x is None:
            m["na"] += 1
        else:
            m["added"].append(x / 1000.0)
            if num(r["hits"]) is not None:
                m["hits"].append(num(r["hits"]) / int(r["calls"]))
    return res
