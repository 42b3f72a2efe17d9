"""How the experiment's report judges a claim: a cell takes part only with
enough good rounds (Judge), two cells compare "clearly" only where their
rounds' ranges do not overlap, a claim over several units sums up the
units, and the C and the JDK runs of a claim give one verdict.
"""

from experiment_cells import cell_name, measured, unit_name

# A cell gives a verdict only with at least this many good rounds and no
# failed one.
MIN_ROUNDS = 3


class Judge:
    """Compares cells; remembers every cell refused for too few rounds."""

    def __init__(self):
        self.refused = {}

    def usable(self, r):
        if r is None:
            return False
        if r["runs"] >= MIN_ROUNDS and not r["failed"]:
            return True
        self.refused[cell_name(r)] = True
        return False

    def compare(self, a, b):
        """'a' or 'b' (the faster by median) and whether clearly: the
        ranges of their rounds do not overlap.  None if either cell has too
        few rounds."""
        ua, ub = self.usable(a), self.usable(b)
        if not (ua and ub):
            return None
        if a["mib_s_min"] > b["mib_s_max"]:
            return "a", True
        if b["mib_s_min"] > a["mib_s_max"]:
            return "b", True
        return ("a" if a["mib_s"] >= b["mib_s"] else "b"), False


def claim_over_units(judge, a, b, units, a_name, b_name):
    """Verdict on 'a is faster than b at every unit of units'."""
    outcome = {}
    for u in units:
        c = judge.compare(a.get(u), b.get(u))
        if c is not None:
            outcome[u] = c
    untested = [u for u in units if u not in outcome]
    if not outcome:
        return "no verdict", "fewer than %d good rounds in every cell" % MIN_ROUNDS
    clearly_a = [u for u, c in outcome.items() if c == ("a", True)]
    clearly_b = [u for u, c in outcome.items() if c == ("b", True)]
    lean_a = [u for u, c in outcome.items() if c == ("a", False)]
    lean_b = [u for u, c in outcome.items() if c == ("b", False)]

    def names(us):
        return ", ".join(unit_name(u) for u in sorted(us))
    parts = []
    if clearly_a:
        parts.append("%s clearly ahead at %s" % (a_name, names(clearly_a)))
    if lean_a:
        parts.append("%s ahead, ranges overlapping, at %s" % (a_name, names(lean_a)))
    if lean_b:
        parts.append("%s ahead, ranges overlapping, at %s" % (b_name, names(lean_b)))
    if clearly_b:
        parts.append("%s clearly ahead at %s" % (b_name, names(clearly_b)))
    if untested:
        parts.append("not judged (too few rounds) at %s" % names(untested))
    if clearly_b:
        verdict = "disagrees"
    elif lean_b:
        verdict = "inconclusive"
    elif lean_a:
        verdict = "agrees, not clearly"
    else:
        verdict = "agrees clearly"
    if untested:
        verdict += " (partly judged)"
    return verdict, "; ".join(parts)


def ratios(a, b, units):
    """a's median throughput over b's at each unit both have."""
    return ", ".join("%s %.2f" % (unit_name(u), a[u]["mib_s"] / b[u]["mib_s"])
                     for u in units if u in a and u in b)


def java_cells(rows, method, cache):
    """The JDK's write cells of a method and cache by unit:
    (MappedByteBuffer, FileChannel)."""
    return ({r["unit"]: r for r in measured(rows, part="java", method=method,
                                            api="mmap", cache=cache)},
            {r["unit"]: r for r in measured(rows, part="java", method=method,
                                            api="channel", cache=cache)})


def reconcile(c_verdict, j_verdict):
    """One verdict from the C run and the JDK run of a claim."""
    if j_verdict is None or j_verdict[0] == "no verdict":
        return c_verdict[0]
    if c_verdict[0] == "no verdict":
        return "%s (JDK only)" % j_verdict[0]
    cv, jv = c_verdict[0].split(" (")[0], j_verdict[0].split(" (")[0]
    if cv.split(",")[0] == jv.split(",")[0]:
        return c_verdict[0] if "not" in c_verdict[0] or "partly" in c_verdict[0] else j_verdict[0]
    return "C and JDK disagree (C: %s; JDK: %s)" % (c_verdict[0], j_verdict[0])
