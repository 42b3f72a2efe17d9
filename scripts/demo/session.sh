#!/usr/bin/env bash
# make readme-session: boot the newest 6.12, run scripts/demo/guest-session.sh
# (a writer stalled by another process's fsync) and put its real output
# into README.md between the session markers.  The raw output stays in
# results/session/session.txt.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
kver=$("$top/scripts/vm/kernels.sh" installed | grep '^6\.12\.' | tail -n 1)
[ -n "$kver" ] || { echo "session: no 6.12 kernel installed; run make setup" >&2; exit 1; }
out=$top/results/session
rm -rf "$out" && mkdir -p "$out"
"$top/scripts/vm/vm-run.sh" --kver "$kver" --results "$out" -- \
	bash "$top/scripts/demo/guest-session.sh" >"$out/session.txt"
grep -q '^\$ wpstat stalls' "$out/session.txt" ||
	{ echo "session: no wpstat stalls output in $out/session.txt" >&2; exit 1; }
python3 - "$top/README.md" "$out/session.txt" "$kver" <<'PY'
import re, sys
readme, session, kver = sys.argv[1:]
text = open(readme).read()
body = re.sub(r"\n{3,}", "\n\n", open(session).read().strip("\n"))
block = ("<!-- session:begin (make readme-session; do not edit) -->\n"
         f"Debian's {kver} in QEMU; `make readme-session` reran it:\n\n"
         f"```\n{body}\n```\n<!-- session:end -->")
new, n = re.subn(r"<!-- session:begin.*?<!-- session:end -->", lambda m: block,
                 text, flags=re.S)
if n != 1:
    sys.exit("session: README.md has no session markers")
open(readme, "w").write(new)
PY
echo "session: README.md updated from $kver" >&2
