"""The tables of the experiment's report (Markdown): the RAM disk's
throughput per unit, any part's counters, RocketMQ's latencies, and the
notes on wpload's strategies.
"""

from experiment_cells import PAGE, blocked_ns, failed, ms, spread, tput, unit_name


def ratio_table(rows, op, method):
    """Markdown table: per unit, MiB/s of each api and cache, the mmap to
    syscall ratio, and where mmap's time went."""
    apis = ("mmap", "write")
    label = {"write": "write(2)" if op == "write" else "read(2)", "mmap": "mmap"}
    head = ["unit"] + ["%s %s MiB/s" % (label[a], c) for c in ("warm", "cold")
                       for a in apis] + ["mmap/syscall warm", "mmap/syscall cold"]
    if op == "write":
        head += ["mkwrite_ns mmap warm", "mkwrite_ns mmap cold",
                 "sync mmap warm", "blocked mmap warm"]
    head += ["pgmajfault mmap cold"]
    out = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    cells = ram_cells(rows, op, method, apis)
    units = sorted({u for d in cells.values() for u in d})
    for u in units:
        vals = [tput(cells[(a, c)].get(u)) for c in ("warm", "cold") for a in apis]
        rat = []
        for c in ("warm", "cold"):
            m, s = cells[("mmap", c)].get(u), cells[("write", c)].get(u)
            rat.append("%.2f" % (m["mib_s"] / s["mib_s"]) if m and s else "-")
        mw, mc = cells[("mmap", "warm")].get(u), cells[("mmap", "cold")].get(u)
        extra = []
        if op == "write":
            extra = [ms(mw["mkwrite_ns"]) if mw else "-",
                     ms(mc["mkwrite_ns"]) if mc else "-",
                     ms(mw["sync_ns"]) if mw else "-",
                     ms(blocked_ns(mw)) if mw else "-"]
        extra.append(str(mc["vm_pgmajfault"]) if mc else "-")
        out.append("| %s | %s |" % (unit_name(u), " | ".join(vals + rat + extra)))
    skipped = sorted({r["unit"] for r in rows if r["part"] == "ram"
                      and r["skipped"] and not failed(r)})
    if skipped:
        out += ["", "Not measured (unit larger than the file): "
                + ", ".join(unit_name(u) for u in skipped) + "."]
    return "\n".join(out)


def ram_cells(rows, op, method, apis):
    """{(api, cache): {unit: cell}} of the RAM disk's measured cells of op
    under method; warm reads under either method or original (one
    procedure for both, run once)."""
    cells = {}
    for a in apis:
        for c in ("warm", "cold"):
            m = method
            if op == "read" and c == "warm":
                m = None
            cells[(a, c)] = {r["unit"]: r for r in rows
                             if r["part"] == "ram" and r["api"] == a and r["op"] == op
                             and r["cache"] == c and r["mib_s"] != ""
                             and (m is None or r["method"] == m)
                             and (m is not None or r["method"] in (method, "original"))}
    return cells


def counter_table(rows, part, columns, key_cols):
    """Markdown table of a part's cells (failed ones included, those not
    measured left out): key_cols, then columns, times in ms."""
    out = ["| " + " | ".join(key_cols + columns) + " |",
           "|---" * (len(key_cols) + len(columns)) + "|"]
    for r in rows:
        if r["part"] != part or (r["skipped"] and not failed(r)):
            continue
        keys = [unit_name(r[k]) if k == "unit" else str(r[k]) for k in key_cols]
        vals = []
        for c in columns:
            v = r.get(c, "")
            if c == "mib_s":
                v = tput(r) if v != "" else "failed"
            elif c == "blocked":
                v = ms(blocked_ns(r)) if r["mib_s"] != "" else ""
            elif c.endswith("_ns") and v != "":
                v = ms(v)
            vals.append(str(v))
        out.append("| " + " | ".join(keys + vals) + " |")
    return "\n".join(out)


def rocketmq_table(rows):
    """Markdown table of RocketMQ's settings: latencies over the rounds,
    the median round's counters; "" without RocketMQ cells."""
    rm = [r for r in rows if r["part"] == "rocketmq"]
    if not rm:
        return ""
    out = ["| setting | rounds | p50 ms | p99 ms | worst put ms (after the "
           "first) | first put ms | mkwrite_first | mkwrite_wp | mkwrite_ns | "
           "mkclean_calls | stable_waits | stable_wait_ns | bdp_pauses |",
           "|---" * 13 + "|"]

    def rng(r, k):
        v = spread(r, k)
        return "%.2f (%.2f-%.2f)" % (v[2] / 1e6, v[0] / 1e6, v[1] / 1e6) if v else "-"
    for r in sorted(rm, key=lambda r: r["cache"]):
        out.append("| %s | %d%s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["cache"], r["runs"], " (+%d failed)" % r["failed"] if r["failed"] else "",
            rng(r, "p50_ns"), rng(r, "p99_ns"), rng(r, "max_ns"), rng(r, "first_ns"),
            r["mkwrite_first"], r["mkwrite_wp"], ms(r["mkwrite_ns"]),
            r["mkclean_calls"], r["stable_waits"], ms(r["stable_wait_ns"]),
            r["bdp_pauses"]))
    return "\n".join(out)


def strategy_notes(rows):
    """What the strategies' counters show, one Markdown item per
    comparison that the cells allow."""
    strat = [r for r in rows if r["part"] == "strategies" and r["mib_s"] != ""]
    get = {(r["api"], r["cache"]): r for r in strat}
    notes = []
    p, wr, ww = (get.get(("mmap", k)) for k in ("plain", "warmup-read",
                                                  "warmup-write"))
    if p and wr:
        notes.append(
            "- **Warm-up by reading** turns first-write faults into "
            "write-protect faults (mkwrite_first %s -> %s, mkwrite_wp %s -> "
            "%s): the page is present, but read-only." % (
                p["mkwrite_first"], wr["mkwrite_first"], p["mkwrite_wp"],
                wr["mkwrite_wp"]))
    if p and ww:
        notes.append(
            "- **A store per page as warm-up** leaves the pages dirty and "
            "writable, yet the pass took mkwrite_wp = %s for %d pages: the "
            "first flush cleaned and write-protected every warmed page. "
            "Warm-up cannot prevent write-protect faults after writeback, "
            "nor the stable-page waits (%s, without it %s)." % (
                ww["mkwrite_wp"], ww["size"] // PAGE, ww["stable_waits"],
                p["stable_waits"]))
    wp, wb = get.get(("write", "plain")), get.get(("write", "write-buffer"))
    if wp and wb:
        notes.append(
            "- **The write buffer** removes the page faults and most system "
            "calls (bdp_calls %s -> %s), not the stable-page waits "
            "(stable_waits %s, %.1f ms)." % (
                wp["bdp_calls"], wb["bdp_calls"], wb["stable_waits"],
                (wb["stable_wait_ns"] or 0) / 1e6))
    return notes
