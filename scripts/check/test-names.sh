#!/usr/bin/env bash
# Host check (TAP): what is written twice agrees with its source.  The
# counter and column names written outside the module agree with the
# module's own lists, kmod/wpstat_counters.def (the /proc/wpstat/inodes
# columns) and kmod/wpstat_stalls.def (the /proc/wpstat/stalls columns):
# the C tools and tests read names from /proc or include the .defs;
# these are the copies written for people (README, man page), which nothing
# else would check.  And the README's copy of the filesystem matrix is
# docs/filesystems.md's.

set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
n=0
failed=0

check() {	# check DESCRIPTION COMMAND...: one TAP line
	local what=$1
	shift
	n=$((n + 1))
	if out=$("$@" 2>&1); then
		echo "ok $n $what"
	else
		echo "not ok $n $what"
		printf '%s\n' "$out" | sed 's/^/# /'
		failed=$((failed + 1))
	fi
}

def_counters() {
	sed -n 's/^WPSTAT_COUNTER([A-Z0-9_]*, *\([a-z0-9_]*\),.*/\1/p' "$top/kmod/wpstat_counters.def"
}

stall_columns() {
	sed -n 's/^WPSTAT_STALL([A-Z0-9_]*, *\([a-z0-9_]*\),.*/\1/p' "$top/kmod/wpstat_stalls.def"
}

# The line of README.md's code block that starts with @1.
readme_header() {
	grep -m1 "^$1 " "$top/README.md" | tr ' ' '\n'
}

same_list() {	# same_list NAME1 FILE1 NAME2 FILE2
	diff -u --label "$1" "$2" --label "$3" "$4"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
def_counters >"$tmp/def"
stall_columns >"$tmp/stalls"

check "kmod lists are readable ($(wc -l <"$tmp/def") counters, $(wc -l <"$tmp/stalls") stall columns)" \
	test "$(wc -l <"$tmp/def")" -ge 20 -a "$(wc -l <"$tmp/stalls")" -ge 10
python3 "$top/scripts/lib/wpstat_counters.py" >"$tmp/py"
check "scripts/lib/wpstat_counters.py (the reports' list) reads the same names" \
	same_list wpstat_counters.def "$tmp/def" wpstat_counters.py "$tmp/py"
{ printf '%s\n' dev ino gen; cat "$tmp/def"; } >"$tmp/def-header"
readme_header "dev ino gen" >"$tmp/readme-inodes"
check "README's /proc/wpstat/inodes header is wpstat_counters.def's order" \
	same_list wpstat_counters.def "$tmp/def-header" README.md "$tmp/readme-inodes"
{ printf '%s\n' tgid comm dev ino gen cgroup; cat "$tmp/stalls"; } >"$tmp/stalls-header"
readme_header "tgid comm dev ino gen cgroup" >"$tmp/readme-stalls"
check "README's /proc/wpstat/stalls header is wpstat_stalls.def's order" \
	same_list wpstat_stalls.def "$tmp/stalls-header" README.md "$tmp/readme-stalls"

# Every counter has a row in README's column table, and is in the man page.
missing_from() {	# missing_from FILE PATTERN-PREFIX NAMES-FILE
	local file=$1 prefix=$2 name missing=
	while read -r name; do
		grep -q -E "${prefix}${name}([^a-z0-9_]|\$)" "$file" || missing+=" $name"
	done <"$3"
	[ -z "$missing" ] || { echo "not described in ${file#"$top"/}:$missing"; return 1; }
}
check "every counter has a row in README's inodes column table" \
	missing_from "$top/README.md" '^\| ([a-z0-9_]+, )*' "$tmp/def"
check "every stall column has a row in README's stalls column table" \
	missing_from "$top/README.md" '^\| ([a-z0-9_]+, )*' "$tmp/stalls"
check "every counter is described in the wpstat(8) man page" \
	missing_from "$top/docs/man/wpstat.8" '(^|[^a-z0-9_])' "$tmp/def"
check "every stall column is described in the wpstat(8) man page" \
	missing_from "$top/docs/man/wpstat.8" '(^|[^a-z0-9_])' "$tmp/stalls"

# The filesystem matrix: docs/filesystems.md's table under "## The matrix",
# copied into README.md between the fs-matrix markers (links there point
# into docs/).
doc_matrix() {
	awk '/^## The matrix/ { on = 1; next } on && /^\|/ { print; seen = 1; next } seen { exit }' \
		"$top/docs/filesystems.md" | sed 's|](fs/|](docs/fs/|g'
}
readme_matrix() {
	sed -n '/<!-- fs-matrix:begin/,/<!-- fs-matrix:end -->/p' "$top/README.md" | grep '^|'
}
check "README's filesystem matrix is docs/filesystems.md's" \
	bash -c '[ -n "$1" ] && [ "$1" = "$2" ] || { diff <(echo "$1") <(echo "$2"); exit 1; }' _ \
	"$(doc_matrix)" "$(readme_matrix)"

echo "1..$n"
[ "$failed" = 0 ]
