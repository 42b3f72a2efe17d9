#!/usr/bin/env bash
# Host check (TAP): no page under docs/ is over 500 lines: a
# reader finds a page's point without scrolling a notebook.  A hand-kept
# page that grows splits by date or topic behind an index (docs/results/
# runs.md, bench-notes.md); a generated one is written as an index and
# pages (per kernel, per prediction) by its generator.

set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
# check DESCRIPTION COMMAND...: one TAP line
. "$top/scripts/lib/tap.sh"
max=500

# short_enough FILE: at most $max lines.
short_enough() {
	local lines
	lines=$(wc -l <"$1")
	[ "$lines" -le "$max" ] || { echo "$lines lines (at most $max)"; return 1; }
}

while IFS= read -r f; do
	check "${f#"$top"/} is at most $max lines" short_enough "$f"
done < <(find "$top/docs" -name '*.md' | sort)

echo "1..$n"
[ "$failed" = 0 ]
