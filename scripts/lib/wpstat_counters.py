#!/usr/bin/env python3
"""The one reader of the module's lists, uapi/wpstat_counters.def,
uapi/wpstat_stalls.def and uapi/wpstat_probes.def, for the reports, the
shell scripts and the tests: the .defs are the only copy of the names, and
no script parses them on its own.

The .def format: each entry is an X-macro call, WPSTAT_<KIND>(arg, ...),
at the start of a line (it may go on over several); its fields are named
by the call the .def's opening comment documents, e.g.
" * WPSTAT_PROBE(id, name, target, home, counts, timing)", so a field
added to a list is read once its comment says so.  Between the entries:
comments, blank lines, and "#ifdef WPSTAT_<KIND>" ... "#endif" around
entries of that kind only (so reading a kind's entries is what the C
preprocessor gives an includer that defines it).  Anything else is an
error, not an entry less.  Strings (help) are read as C literals;
WPN(P) | WPN(Q) (needs) as the probe ids P|Q.

As a module (scripts/experiment/experiment_cells.py, scripts/bench):

    sys.path.insert(0, <top>/scripts/lib)
    import wpstat_counters
    wpstat_counters.names()          # every counter, in /proc column order
    wpstat_counters.event_names()    # the ones that count events
    wpstat_counters.timing_own()     # the points only level timing attaches
    wpstat_counters.entries("probes", "WPSTAT_PROBE")   # records

From the shell, one item a line:

    wpstat_counters.py               the counters' names
    wpstat_counters.py --events      those that count events
    wpstat_counters.py --probes      the attachment points, as debugfs
                                     wpstat/probes names them
    wpstat_counters.py --timing-own  the points only level timing attaches
                                     (NONE at counts, a kretprobe at timing)
    wpstat_counters.py --columns inodes|stalls
                                     a /proc table's columns after its key's
                                     first ones: the list's entries, and the
                                     key's later columns where the list has them
    wpstat_counters.py --fields LIST KIND FIELD... [--where FIELD=VALUE]...
                                     the FIELDs of LIST's (counters, stalls,
                                     probes) WPSTAT_<KIND> entries, in order,
                                     space-separated (a list field joined by
                                     "|"); --where keeps the entries whose
                                     FIELD is VALUE
"""

import collections
import os
import re
import signal
import sys

DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", "..", "uapi"))
LISTS = ("counters", "stalls", "probes")
# The lists whose entries are columns of a /proc table (and gone's).
TABLES = {"inodes": ("counters", "WPSTAT_COUNTER"),
          "stalls": ("stalls", "WPSTAT_STALL")}

DEF = os.path.join(DIR, "wpstat_counters.def")
PROBES_DEF = os.path.join(DIR, "wpstat_probes.def")


def path_of(lst):
    """The .def file of a list name (counters, stalls, probes), or a path."""
    if lst in LISTS:
        return os.path.join(DIR, "wpstat_%s.def" % lst)
    return lst


def _blank_comments(text):
    """text with its comments replaced by spaces (newlines kept, so line
    numbers stay), strings left alone."""
    def blank(m):
        s = m.group(0)
        return s if s.startswith('"') else re.sub(r"[^\n]", " ", s)
    return re.sub(r'"(?:\\.|[^"\\\n])*"|/\*.*?\*/|//[^\n]*', blank, text,
                  flags=re.S)


def _split_args(body, where):
    """The top-level comma-separated arguments of a macro call's body."""
    args, depth, cur, i = [], 0, [], 0
    while i < len(body):
        c = body[i]
        if c == '"':
            m = re.compile(r'"(?:\\.|[^"\\])*"').match(body, i)
            if not m:
                raise ValueError("%s: an unterminated string" % where)
            cur.append(m.group(0))
            i = m.end()
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "," and depth == 0:
            args.append("".join(cur))
            cur = []
            i += 1
            continue
        cur.append(c)
        i += 1
    args.append("".join(cur))
    return [" ".join(a.split()) for a in args]


def _value(arg):
    """An argument as the scripts want it: a C string's text, the probe
    ids of WPN(P) | WPN(Q) as a tuple, anything else as written."""
    if arg.startswith('"'):
        parts = re.findall(r'"((?:\\.|[^"\\])*)"', arg)
        return re.sub(r"\\(.)", r"\1", "".join(parts))
    if re.fullmatch(r"WPN\(\w+\)(?: ?\| ?WPN\(\w+\))*", arg):
        return tuple(re.findall(r"WPN\((\w+)\)", arg))
    return arg


def _signatures(text, path):
    """{KIND: field names} from the calls the opening comment documents."""
    sigs = {}
    for kind, fields in re.findall(r"^\s*\*\s+(WPSTAT_\w+)\(([a-z_, ]+)\)",
                                   text, re.M):
        fields = tuple(f.strip() for f in fields.split(","))
        if sigs.setdefault(kind, fields) != fields:
            raise ValueError("%s: %s is documented twice, as (%s) and (%s)"
                             % (path, kind, ", ".join(sigs[kind]),
                                ", ".join(fields)))
    return sigs


_cache = {}


def read(lst):
    """[(line, KIND, [arg, ...])] of a .def, every entry in its order, and
    {KIND: field names}."""
    path = path_of(lst)
    if path in _cache:
        return _cache[path]
    with open(path) as f:
        text = f.read()
    sigs = _signatures(text, path)
    lines = _blank_comments(text).split("\n")
    out, guard, i = [], None, 0
    while i < len(lines):
        line, no = lines[i].strip(), i + 1
        i += 1
        if not line:
            continue
        m = re.fullmatch(r"#\s*ifdef\s+(WPSTAT_\w+)", line)
        if m and guard is None:
            guard = m.group(1)
            continue
        if re.fullmatch(r"#\s*endif", line) and guard is not None:
            guard = None
            continue
        m = re.match(r"(WPSTAT_\w+)\(", line)
        if not m:
            raise ValueError("%s:%d: not an entry, a comment or an #ifdef "
                             "of one kind: %s" % (path, no, line))
        kind = m.group(1)
        if guard is not None and kind != guard:
            raise ValueError("%s:%d: a %s entry inside #ifdef %s"
                             % (path, no, kind, guard))
        # The call, to its closing parenthesis, over as many lines as it takes.
        call, depth, pos = line, 0, None
        while pos is None:
            depth, instr, k = 0, False, 0
            while k < len(call):
                c = call[k]
                if instr:
                    if c == "\\":
                        k += 1
                    elif c == '"':
                        instr = False
                elif c == '"':
                    instr = True
                elif c == "(":
                    depth += 1
                elif c == ")":
                    depth -= 1
                    if depth == 0:
                        pos = k
                        break
                k += 1
            if pos is None:
                if i >= len(lines):
                    raise ValueError("%s:%d: %s( is never closed"
                                     % (path, no, kind))
                call += " " + lines[i].strip()
                i += 1
        if call[pos + 1:].strip():
            raise ValueError("%s:%d: text after the %s entry: %s"
                             % (path, no, kind, call[pos + 1:].strip()))
        args = _split_args(call[len(kind) + 1:pos], "%s:%d" % (path, no))
        if kind not in sigs:
            raise ValueError("%s:%d: %s is not documented in the file's "
                             "opening comment (%s(field, ...))"
                             % (path, no, kind, kind))
        if len(args) != len(sigs[kind]):
            raise ValueError("%s:%d: %s has %d fields; the opening comment "
                             "documents %d (%s)"
                             % (path, no, kind, len(args), len(sigs[kind]),
                                ", ".join(sigs[kind])))
        out.append((no, kind, args))
    if guard is not None:
        raise ValueError("%s: #ifdef %s is never closed" % (path, guard))
    _cache[path] = (out, sigs)
    return out, sigs


def entries(lst, kind, where=None):
    """The KIND entries of a list, in its order, as records whose fields
    the .def's comment names; where: {field: value} they must match (a
    list field by its "|"-joined form)."""
    found, sigs = read(lst)
    if kind not in sigs:
        raise ValueError("%s: no %s documented" % (path_of(lst), kind))
    rec = collections.namedtuple(kind.lower(), sigs[kind])
    rows = [rec(*[_value(a) for a in args])
            for _, k, args in found if k == kind]
    if not rows:
        raise ValueError("%s: no %s entry" % (path_of(lst), kind))
    for field, value in (where or {}).items():
        if field not in sigs[kind]:
            raise ValueError("%s: %s has no field %s (%s)"
                             % (path_of(lst), kind, field,
                                ", ".join(sigs[kind])))
        rows = [r for r in rows if text(getattr(r, field)) == value]
    return rows


def text(value):
    """A field as the shell scripts get it."""
    return "|".join(value) if isinstance(value, tuple) else value


def counters(path=DEF):
    """Every counter of the .def, in its order (the /proc column order)."""
    return entries(path, "WPSTAT_COUNTER")


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
    """The attachment points of wpstat_probes.def, in its order."""
    return [p.name for p in entries(path, "WPSTAT_PROBE")]


def timing_own(path=PROBES_DEF):
    """The points only level timing attaches: nothing at level counts, a
    kretprobe at level timing (make bench's configuration timing-skip
    loads level timing without them)."""
    return [p.name for p in entries(path, "WPSTAT_PROBE",
                                    {"counts": "NONE", "timing": "KRETPROBE"})]


def columns(table):
    """The columns of /proc/wpstat/TABLE after the key's first ones, in
    the order the module prints them: one per entry of its list, and the
    key's later columns (WPSTAT_KEY_COLUMN) where the list has them."""
    lst, kind = TABLES[table]
    found, _ = read(lst)
    cols = [args[1] for _, k, args in found
            if k in (kind, "WPSTAT_KEY_COLUMN")]
    if not cols:
        raise ValueError("%s: no %s entry" % (path_of(lst), kind))
    return cols


USAGE = ("usage: wpstat_counters.py [--events | --probes | --timing-own |"
         " --columns inodes|stalls |"
         " --fields LIST KIND FIELD... [--where FIELD=VALUE]...]")


def main(argv):
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)   # | head: no traceback
    lists = {(): names, ("--events",): event_names,
             ("--probes",): probe_names, ("--timing-own",): timing_own}
    try:
        if tuple(argv) in lists:
            out = lists[tuple(argv)]()
        elif len(argv) == 2 and argv[0] == "--columns" and argv[1] in TABLES:
            out = columns(argv[1])
        elif len(argv) >= 4 and argv[0] == "--fields" and argv[1] in LISTS:
            where, fields, rest = {}, [], argv[3:]
            while rest:
                if rest[0] == "--where" and len(rest) > 1 and "=" in rest[1]:
                    field, value = rest[1].split("=", 1)
                    where[field] = value
                    rest = rest[2:]
                elif not rest[0].startswith("-"):
                    fields.append(rest[0])
                    rest = rest[1:]
                else:
                    sys.exit(USAGE)
            if not fields:
                sys.exit(USAGE)
            rows = entries(argv[1], argv[2], where)
            sig = read(argv[1])[1][argv[2]]
            for f in fields:
                if f not in sig:
                    raise ValueError("%s: %s has no field %s (%s)"
                                     % (path_of(argv[1]), argv[2], f,
                                        ", ".join(sig)))
            out = [" ".join(text(getattr(r, f)) for f in fields) for r in rows]
        else:
            sys.exit(USAGE)
    except (OSError, ValueError) as e:
        sys.exit("wpstat_counters.py: %s" % e)
    for n in out:
        print(n)


if __name__ == "__main__":
    main(sys.argv[1:])
