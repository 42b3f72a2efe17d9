"""A generated report as an index page and pages beside it (no
page of docs/ over 500 lines, selftests/host/test-doc-length.sh).

The reports (scripts/bench/bench-report.py, scripts/check/predictions-
report.py, scripts/experiment/experiment_render.py) render one Markdown
text as they always did, then split it here at its "## " headings: the
parts that are one kernel's or one prediction's become pages of their own
in a directory named after the index (benchmarks.md: benchmarks/), their
headings one level up and their relative links rebased, and the index
keeps the rest and lists the pages.  The split works on the text alone,
so an old one-page report splits into what a new run writes.

As a module:

    sys.path.insert(0, <top>/scripts/lib)
    import docpages
"""

import os
import re

MAX_LINES = 500     # selftests/host/test-doc-length.sh

FENCE = re.compile(r"^(```|~~~)")
LINK = re.compile(r"(!?\[[^\]]*\])\(([^)\s]+)\)")


def sections(text):
    """(preamble, [(heading, body)]): text split at its "## " headings
    (not inside fenced code); heading without the "## ", body the lines
    after it up to the next one."""
    pre, parts, cur, fenced = [], [], None, False
    for line in text.split("\n"):
        if FENCE.match(line):
            fenced = not fenced
        if not fenced and line.startswith("## "):
            cur = (line[3:].strip(), [])
            parts.append(cur)
        elif cur is None:
            pre.append(line)
        else:
            cur[1].append(line)
    return "\n".join(pre), [(h, "\n".join(b)) for h, b in parts]


def promote(text):
    """Every heading of text one level up (### to ##), outside code."""
    out, fenced = [], False
    for line in text.split("\n"):
        if FENCE.match(line):
            fenced = not fenced
        if not fenced and re.match(r"#{2,6} ", line):
            line = line[1:]
        out.append(line)
    return "\n".join(out)


def into(text, sub):
    """text, written for a page in DIR, made right for a page in DIR/sub:
    a relative link into sub/ loses that prefix, any other gains "../"
    (and the link text with it where it is the target itself)."""
    def fix(m):
        label, target = m.group(1), m.group(2)
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith(("#", "/")):
            return m.group(0)
        new = target[len(sub) + 1:] if target.startswith(sub + "/") else "../" + target
        if label in ("[%s]" % target, "![%s]" % target):
            label = label.replace(target, new)
        return "%s(%s)" % (label, new)
    parts = re.split(r"(`[^`\n]*`)", text)
    return "".join(p if p.startswith("`") else LINK.sub(fix, p) for p in parts)


def first_paragraph(body, starts=""):
    """The first paragraph of body (joined into one line) that starts
    with starts, or the first one."""
    paras = [" ".join(p.split("\n")).strip()
             for p in re.split(r"\n\s*\n", body.strip()) if p.strip()]
    hits = [p for p in paras if p.startswith(starts)] if starts else []
    return (hits or paras or [""])[0]


def page_name(name):
    """A page's file name from a kernel version or a number: the name
    itself where it is safe in a path and a link."""
    return re.sub(r"[^A-Za-z0-9.+_-]", "_", name) + ".md"


def write(directory, pages):
    """Write pages ({file name: text}) into directory, each through a
    temporary file, and remove the Markdown files there that an earlier
    run wrote and this one did not (a kernel no longer run); warn on
    stderr of a page over MAX_LINES."""
    import sys
    os.makedirs(directory, exist_ok=True)
    for name, text in pages.items():
        path = os.path.join(directory, name)
        if not text.endswith("\n"):
            text += "\n"
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(path + ".tmp", path)
        n = text.count("\n")
        if n > MAX_LINES:
            print("docpages: %s is %d lines, over the %d that "
                  "selftests/host/test-doc-length.sh allows" % (path, n, MAX_LINES),
                  file=sys.stderr)
    for name in os.listdir(directory):
        if name.endswith(".md") and name not in pages:
            os.remove(os.path.join(directory, name))
