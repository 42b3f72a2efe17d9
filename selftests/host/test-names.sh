#!/usr/bin/env bash
# Host check (TAP): what is written twice agrees with its source.  The
# counter and column names written outside the module agree with the
# module's own lists, uapi/wpstat_counters.def (the /proc/wpstat/inodes
# columns) and uapi/wpstat_stalls.def (the /proc/wpstat/stalls columns):
# the C tools and tests read names from /proc or include the .defs;
# these are the copies written for people (docs/interface.md and
# docs/stalls.md, the man
# page), which nothing else would check.  And no page carries a path of
# the machine it was generated on.

set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
# check DESCRIPTION COMMAND...: one TAP line
. "$top/scripts/lib/tap.sh"

# The lists, through their one reader (scripts/lib/wpstat_counters.py).
lists() {
	python3 "$top/scripts/lib/wpstat_counters.py" "$@"
}

def_counters() {
	lists --fields counters WPSTAT_COUNTER name
}

stall_columns() {
	lists --fields stalls WPSTAT_STALL name
}

# The line of a code block of docs/@1 that starts with @2.
doc_header() {
	grep -m1 "^$2 " "$top/docs/$1" | tr ' ' '\n'
}

same_list() {	# same_list NAME1 FILE1 NAME2 FILE2
	diff -u --label "$1" "$2" --label "$3" "$4"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
def_counters >"$tmp/def" 2>"$tmp/err" || true
stall_columns >"$tmp/stalls" 2>>"$tmp/err" || true

check "the module's lists are readable ($(wc -l <"$tmp/def") counters, $(wc -l <"$tmp/stalls") stall columns)" \
	bash -c '[ "$(wc -l <"$1")" -ge 20 ] && [ "$(wc -l <"$2")" -ge 10 ] || { cat "$3"; exit 1; }' _ "$tmp/def" "$tmp/stalls" "$tmp/err"
{ printf '%s\n' dev ino gen; lists --columns inodes; } >"$tmp/def-header"
doc_header interface.md "dev ino gen" >"$tmp/doc-inodes"
check "docs/interface.md's /proc/wpstat/inodes header is wpstat_counters.def's order" \
	same_list wpstat_counters.def "$tmp/def-header" docs/interface.md "$tmp/doc-inodes"
{ printf '%s\n' tgid comm dev ino gen cgroup; lists --columns stalls; } >"$tmp/stalls-header"
doc_header stalls.md "tgid comm dev ino gen cgroup" >"$tmp/doc-stalls"
check "docs/stalls.md's /proc/wpstat/stalls header is wpstat_stalls.def's order" \
	same_list wpstat_stalls.def "$tmp/stalls-header" docs/stalls.md "$tmp/doc-stalls"

# Every counter has a row in docs/interface.md's column table, every
# stall column one in docs/stalls.md's, and each is in the man page.
missing_from() {	# missing_from FILE PATTERN-PREFIX NAMES-FILE
	local file=$1 prefix=$2 name missing=
	while read -r name; do
		grep -q -E "${prefix}${name}([^a-z0-9_]|\$)" "$file" || missing+=" $name"
	done <"$3"
	[ -z "$missing" ] || { echo "not described in ${file#"$top"/}:$missing"; return 1; }
}
check "every counter has a row in docs/interface.md's inodes column table" \
	missing_from "$top/docs/interface.md" '^\| ([a-z0-9_]+, )*' "$tmp/def"
check "every stall column has a row in docs/stalls.md's column table" \
	missing_from "$top/docs/stalls.md" '^\| ([a-z0-9_]+, )*' "$tmp/stalls"
check "docs/interface.md's columns-by-level table is scripts/check/columns.sh's, from the .defs" \
	"$top/scripts/check/columns.sh" check
check "every counter is described in the wpstat(8) man page" \
	missing_from "$top/docs/man/wpstat.8" '(^|[^a-z0-9_])' "$tmp/def"
check "every stall column is described in the wpstat(8) man page" \
	missing_from "$top/docs/man/wpstat.8" '(^|[^a-z0-9_])' "$tmp/stalls"

# The waits a write fault's time holds are the causes wpstat_stalls.def
# marks IN: every list written for people of the waits the unnamed time
# is outside, "in none of the named waits (...)", names exactly those
# (the two unnamed columns' help in the .defs, interface.md, stalls.md and
# the man page: six lists).
lists --fields stalls WPSTAT_STALL_CAUSE name --where fault=IN | sort >"$tmp/in-fault"
{
	lists --fields counters WPSTAT_COUNTER help
	lists --fields stalls WPSTAT_STALL help
	cat "$top/docs/interface.md" "$top/docs/stalls.md" "$top/docs/man/wpstat.8"
} >"$tmp/named-waits-texts"
named_waits_lists() {	# named_waits_lists IN-FAULT TEXTS
	python3 - "$1" "$2" <<'PY'
import re, sys
want = sorted(open(sys.argv[1]).read().split())
text = " ".join(open(sys.argv[2]).read().split())
found = re.findall(r"none of the named waits \(([^)]*)\)", text)
bad = 0
for lst in found:
    names = sorted(n.strip(" `") for n in re.split(r"[;:]", lst)[0].split(","))
    if names != want:
        print("lists %s, not the IN causes %s: (%s)" % (" ".join(names), " ".join(want), lst))
        bad = 1
if len(found) < 6 or not want:
    print("%d lists of named waits found (6 expected), IN causes: %s" % (len(found), " ".join(want)))
    bad = 1
sys.exit(bad)
PY
}
check "every list of the named waits a fault holds is wpstat_stalls.def's IN causes" \
	named_waits_lists "$tmp/in-fault" "$tmp/named-waits-texts"
# A cause added to the .def as IN, and to no list, fails the check above.
{ cat "$tmp/in-fault"; echo throwaway; } | sort >"$tmp/in-fault-plus"
fails() { ! "$@" >/dev/null; }
check "a throwaway IN cause that no list names fails that check" \
	fails named_waits_lists "$tmp/in-fault-plus" "$tmp/named-waits-texts"

# A wait cause's three stall columns name, as like, the inode counters of
# the same waits, which the module's one call for a wait
# (wpstat_cause_wait()) writes beside them: an events SUM, the cause's
# time (a SUM named <x>_NS) and that time's MAX (<x>_MAX_NS).  The build
# checks the kinds; this, the names, where a reader looks for them.
lists --fields counters WPSTAT_COUNTER id kind >"$tmp/counter-kinds"
lists --fields stalls WPSTAT_STALL id like >"$tmp/stall-likes"
lists --fields stalls WPSTAT_STALL_CAUSE id time fault >"$tmp/causes"
cause_columns() {	# cause_columns COUNTER-KINDS STALL-LIKES CAUSES
	python3 - "$@" <<'PY'
import sys
kind = dict(l.split() for l in open(sys.argv[1]))
like = dict(l.split() for l in open(sys.argv[2]))
bad = 0
for cause, time, fault in (l.split() for l in open(sys.argv[3])):
    if fault == "SELF":
        continue
    want = {cause: None, cause + "_NS": time,
            cause + "_MAX": time[:-len("_NS")] + "_MAX_NS"}
    for col, counter in want.items():
        got = like.get(col)
        if got is None:
            print("cause %s has no stall column %s" % (cause, col))
            bad = 1
        elif counter is not None and got != counter:
            print("%s's like is %s, not %s" % (col, got, counter))
            bad = 1
        elif kind.get(got) != ("MAX" if col.endswith("_MAX") else "SUM"):
            print("%s's like %s is a %s" % (col, got, kind.get(got)))
            bad = 1
sys.exit(bad)
PY
}
check "every wait cause's stall columns name its events, its time and the time's MAX as like" \
	cause_columns "$tmp/counter-kinds" "$tmp/stall-likes" "$tmp/causes"
sed 's/^\(WB_MAX\) .*/\1 WB_WRITE_WAIT_NS/' "$tmp/stall-likes" >"$tmp/stall-likes-bad"
check "a MAX column whose like is its time, not the time's MAX, fails that check" \
	fails cause_columns "$tmp/counter-kinds" "$tmp/stall-likes-bad" "$tmp/causes"

# A path into a checkout (…/build/, …/selftests/, …/scripts/, …/kmod/,
# …/userspace/ after an absolute directory) is the machine's that wrote
# the page: generated pages must write them relative to the checkout.
# The system's own directories (/usr/lib/linux-kbuild-*/scripts/,
# /var/lib/dkms/*/build/) are every machine's, and may be named.
machine_paths() {
	grep -rnE "(^|[[:space:](\`'\"=])/[^[:space:]]+/(build|selftests|scripts|kmod|userspace)/" \
		"$top/README.md" "$top/docs" --include='*.md' |
		grep -vE "(^|[[:space:](\`'\"=])/(usr|var|lib|etc|opt)/[^[:space:]]+/(build|scripts)/" |
		sed "s|^$top/||"
}
machine_paths >"$tmp/paths" || true
check "no page in README.md or docs/ carries a path of the machine that wrote it" \
	bash -c '[ ! -s "$1" ] || { head -n 5 "$1"; exit 1; }' _ "$tmp/paths"

# Nor any file of the tree: the checkout's own path, or a home directory,
# is one machine's (the suites derive theirs from where they are).
git -C "$top" grep -nI -e "$top/" -e '/home/[a-z]' >"$tmp/tree-paths" 2>/dev/null || true
check "no tracked file names this checkout's path or a home directory" \
	bash -c '[ ! -s "$1" ] || { head -n 5 "$1"; exit 1; }' _ "$tmp/tree-paths"

# Nor does code, a test or a script cite an issue by number: it says the
# reason the issue gave (docs/ may keep history).
git -C "$top" grep -nIE -e 'issue #?[0-9]+' -e '(^|[^&0-9A-Za-z_])#[0-9]{2,3}\b' \
	-- kmod userspace selftests scripts uapi Makefile .ci >"$tmp/issue-refs" 2>/dev/null || true
check "no code, test or script cites an issue by number" \
	bash -c '[ ! -s "$1" ] || { head -n 5 "$1"; exit 1; }' _ "$tmp/issue-refs"

# The README is a map, not the manual: a screenful of pitch,
# session and commands, and a link to every page or directory of docs/.
readme_is_a_map() {
	local lines doc missing=
	lines=$(wc -l <"$top/README.md")
	[ "$lines" -le 250 ] || { echo "README.md has $lines lines, more than 250"; return 1; }
	for doc in "$top"/docs/*; do
		doc=${doc#"$top"/}
		grep -q "](${doc}[/)#]" "$top/README.md" || missing+=" $doc"
	done
	[ -z "$missing" ] || { echo "not linked from README.md:$missing"; return 1; }
}
check "README.md is at most 250 lines and links every page and directory of docs/" \
	readme_is_a_map

echo "1..$n"
[ "$failed" = 0 ]
