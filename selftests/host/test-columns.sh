#!/usr/bin/env bash
# Host check (TAP): the /proc tables' columns are append only.  Tools
# that read /proc/wpstat/inodes or /proc/wpstat/stalls by position, and
# every saved table, rely on a column staying where it was under its
# name.  The columns a module prints are its key columns
# (kmod/wpstat_procfs.c's header line) and then one per entry of its list,
# in order (a later key column, WPSTAT_KEY_COLUMN, where the list has
# it): uapi/wpstat_counters.def for inodes (and gone),
# uapi/wpstat_stalls.def for stalls, read by their one reader
# (scripts/lib/wpstat_counters.py).  Each table's columns are
# recorded, one a line, in selftests/host/columns-inodes.txt and
# columns-stalls.txt.
#
# Fails when a recorded column moved, was renamed or was removed, naming
# it; a new column must come after every recorded one.  A new column at
# the end fails too until it is recorded:
#
#   test-columns.sh            check (TAP on stdout)
#   test-columns.sh --update   append the new columns to the records; refuses
#                              while a recorded column is not where it was

set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
update=0
[ "${1:-}" = --update ] && update=1

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The key columns: the header string wpstat_procfs.c's show function ($1)
# prints before the list's names.
key_columns() {
	awk -v fn="$1" '
		$0 ~ "^static int " fn "\\(" { inside = 1 }
		inside && /seq_puts\(m, "/ {
			sub(/.*seq_puts\(m, "/, ""); sub(/".*/, ""); print; exit
		}
		inside && /^}/ { exit }
	' "$top/kmod/wpstat_procfs.c" | tr ' ' '\n'
}

# The current columns of table $1 into $tmp/$1: the key's first ones,
# then the list's, read by the lists' one reader (the key's later
# columns, WPSTAT_KEY_COLUMN, where the list has them).
current() {
	key_columns "$1_show"
	python3 "$top/scripts/lib/wpstat_counters.py" --columns "$1"
} >"$tmp/$1"

# The recorded columns of table $1 (comment lines left out).
recorded() {
	grep -v -e '^#' -e '^$' "$top/selftests/host/columns-$1.txt"
}

# Every recorded column of $1 at its recorded position; prints, naming
# them, the columns that came in among the recorded ones, and those that
# were removed or renamed or moved.
in_place() {
	local table=$1 i=0 name at moved=0 bad=0
	local -a now
	mapfile -t now <"$tmp/$table"
	recorded "$table" >"$tmp/$table.rec"
	while read -r name; do
		i=$((i + 1))
		grep -q -x -F -- "$name" "$tmp/$table.rec" && continue
		[ "$i" -le "$(wc -l <"$tmp/$table.rec")" ] || continue
		echo "column $i, $name, is new among the recorded ones: a new column goes after the last recorded one, $(tail -n 1 "$tmp/$table.rec")"
		bad=1
	done <"$tmp/$table"
	i=0
	while read -r name; do
		i=$((i + 1))
		[ "${now[$((i - 1))]:-}" = "$name" ] && continue
		bad=1
		at=$(grep -n -x -F -- "$name" "$tmp/$table" | cut -d: -f1 | head -n 1)
		if [ -z "$at" ]; then
			echo "column $i, $name, was removed or renamed (column $i is now ${now[$((i - 1))]:-none})"
		elif [ $moved -lt 3 ]; then
			echo "column $i, $name, moved to $at"
			moved=$((moved + 1))
		else
			moved=$((moved + 1))
		fi
	done <"$tmp/$table.rec"
	[ $moved -le 3 ] || echo "($((moved - 3)) more recorded columns moved)"
	[ $bad = 0 ] || {
		echo "/proc/wpstat/$table is a published interface: a new column goes at the end of kmod's list; none moves, is renamed or removed"
		return 1
	}
}

# The columns of $1 that the record does not have; fails if there are any.
new_columns() {
	local table=$1
	recorded "$table" >"$tmp/$table.rec"
	grep -v -x -F -f "$tmp/$table.rec" "$tmp/$table" >"$tmp/$table.new" || true
	[ -s "$tmp/$table.new" ] || return 0
	echo "not yet recorded: $(paste -s -d ' ' "$tmp/$table.new")"
	echo "once they are at the end and meant to stay, record them: selftests/host/test-columns.sh --update (appends them to selftests/host/columns-$table.txt), and commit the record with them"
	return 1
}

# check DESCRIPTION COMMAND...: one TAP line
. "$top/scripts/lib/tap.sh"

for table in inodes stalls; do
	current $table
	keys=$(grep -c . <<<"$(key_columns "${table}_show")" || true)
	if [ "$keys" -lt 3 ] || [ "$(wc -l <"$tmp/$table")" -le "$keys" ]; then
		check "/proc/wpstat/$table: its columns are readable" \
			bash -c "echo 'no key columns in kmod/wpstat_procfs.c ${table}_show(), or no names from its .def'; exit 1"
		continue
	fi
	if [ $update = 1 ]; then
		if ! in_place $table >&2; then
			echo "test-columns: not updating selftests/host/columns-$table.txt" >&2
			exit 1
		fi
		new_columns $table >/dev/null ||
			cat "$tmp/$table.new" >>"$top/selftests/host/columns-$table.txt"
		echo "test-columns: selftests/host/columns-$table.txt: $(recorded $table | wc -l) columns" >&2
		continue
	fi
	check "/proc/wpstat/$table: every recorded column is where it was ($(recorded $table | wc -l) in selftests/host/columns-$table.txt)" \
		in_place $table
	check "/proc/wpstat/$table: every column is recorded ($(wc -l <"$tmp/$table") now)" \
		new_columns $table
done

[ $update = 1 ] && exit 0
echo "1..$n"
[ "$failed" = 0 ]
