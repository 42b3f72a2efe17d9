#!/usr/bin/env bash
# Host check (TAP): kmod/'s files call each other only downwards, in the
# order kmod/wpstat.h lists them (no circle).  The calls are read from
# the built objects of one kernel (undefined symbols of each wpstat_*.o
# that another defines), so a new call up the list fails here.
#
#   test-kmod-layers.sh [KVER]   default: the first built kernel

set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
kver=${1:-$(ls "$top/build/kmod" 2>/dev/null | head -n 1)}
dir=$top/build/kmod/$kver

# The order: the "wpstat_X.c" lines of wpstat.h's opening comment.
mapfile -t order < <(sed -n '1,/^#ifndef/s/^ \*   \(wpstat_[a-z_]*\)\.c .*/\1/p' "$top/kmod/wpstat.h")
if [ ${#order[@]} -lt 5 ] || ! ls "$dir"/wpstat_*.o >/dev/null 2>&1; then
	echo "not ok 1 kmod layers: no order in kmod/wpstat.h (${#order[@]}) or no objects in $dir"
	exit 0
fi
declare -A rank defs
for i in "${!order[@]}"; do rank[${order[$i]}]=$i; done

for o in "$dir"/wpstat_*.o; do
	f=$(basename "$o" .o)
	[ "$f" = wpstat.mod ] && continue
	while read -r sym; do defs[$sym]=$f; done < <(nm --defined-only "$o" | awk '$2 ~ /[TDBR]/ { print $3 }')
done

n=0
failed=0
for o in "$dir"/wpstat_*.o; do
	f=$(basename "$o" .o)
	[ "$f" = wpstat.mod ] && continue
	n=$((n + 1))
	if [ -z "${rank[$f]+x}" ]; then
		echo "not ok $n $f.c is not in kmod/wpstat.h's list of the module's parts"
		failed=$((failed + 1))
		continue
	fi
	bad=
	while read -r sym; do
		to=${defs[$sym]:-}
		[ -n "$to" ] && [ "$to" != "$f" ] || continue
		if [ "${rank[$to]:-0}" -le "${rank[$f]}" ]; then
			bad+=" $to.c:$sym"
		fi
	done < <(nm -u "$o" | awk '{ print $2 }')
	if [ -z "$bad" ]; then
		echo "ok $n $f.c calls only the files below it ($kver)"
	else
		echo "not ok $n $f.c calls up the list:$bad"
		failed=$((failed + 1))
	fi
done
echo "1..$n"
