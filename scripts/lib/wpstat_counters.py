#!/usr/bin/env python3
"""The per-inode counters of kmod/wpstat_counters.def, for the reports and
the shell scripts: the module's list is the only copy of the names.

As a module (scripts/experiment/experiment_cells.py):

    sys.path.insert(0, <top>/scripts/lib)
    import wpstat_counters
    wpstat_counters.names()          # every counter, in /proc column order
    wpstat_counters.event_names()    # the ones that count events

From the shell (scripts/bench/guest-bench.sh):

    python3 scripts/lib/wpstat_counters.py [--events | --probes]

prints the names, one per line (--probes: the attachment points of
kmod/wpstat_probes.def, as debugfs wpstat/probes names them).
"""

import collections
import os
import re
import sys

DEF = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", "..", "kmod", "wpstat_counters.def"))

PROBES_DEF = os.path.join(os.path.dirname(DEF), "wpstat_probes.def")

Counter = collections.namedtuple("Counter", "id name kind level")

# WPSTAT_COUNTER(id, name, kind, needs, level, help); needs is
# "WPN(p) | WPN(q)", without commas.
_ENTRY = re.compile(r"^WPSTAT_COUNTER\(\s*(\w+)\s*,\s*(\w+)\s*,\s*(SUM|MAX)\s*,"
                    r"[^,]*,\s*(COUNTS|TIMING)\s*,", re.M)


def counters(path=DEF):
    """Every counter of the .def, in its order (the /proc column order).
    An entry the pattern does not read is an error, not a counter less."""
    with open(path) as f:
        text = f.read()
    found = [Counter(*m.groups()) for m in _ENTRY.finditer(text)]
    written = len(re.findall(r"^WPSTAT_COUNTER\(", text, re.M))
    if not found or len(found) != written:
        raise ValueError("%s: read %d of its %d WPSTAT_COUNTER entries"
                         % (path, len(found), written))
    return found


def names(path=DEF):
    return [c.name for c in counters(path)]


def is_ns(name):
    """A duration in ns (userspace/lib/fmt.c: wpstat_counter_is_ns)."""
    return len(name) > 3 and name.endswith("_ns")


def event_names(path=DEF):
    """The counters that count events: added up, not nanoseconds (neither
    the *_ns sums nor the *_max_ns maxima)."""
    return [c.name for c in counters(path)
            if c.kind == "SUM" and not is_ns(c.name)]


def probe_names(path=PROBES_DEF):
    """The attachment points of wpstat_probes.def, in its order:
    WPSTAT_PROBE(id, name, target, counts, timing)."""
    with open(path) as f:
        text = f.read()
    found = re.findall(r"^WPSTAT_PROBE\(\s*\w+\s*,\s*(\w+)\s*,", text, re.M)
    written = len(re.findall(r"^WPSTAT_PROBE\(", text, re.M))
    if not found or len(found) != written:
        raise ValueError("%s: read %d of its %d WPSTAT_PROBE entries"
                         % (path, len(found), written))
    return found


def main(argv):
    lists = {(): names, ("--events",): event_names, ("--probes",): probe_names}
    if tuple(argv) not in lists:
        sys.exit("usage: wpstat_counters.py [--events | --probes]")
    for n in lists[tuple(argv)]():
        print(n)


if __name__ == "__main__":
    main(sys.argv[1:])
