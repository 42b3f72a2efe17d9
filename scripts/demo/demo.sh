#!/usr/bin/env bash
# The body of `make demo`: boot the newest 6.12 kernel, load wpstat, run a
# default mmap workload on an ext4 RAM disk and print the counters.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
kver=$("$top/scripts/vm/kernels.sh" installed | grep '^6\.12\.' | tail -n 1)
[ -n "$kver" ] || { echo "demo: no 6.12 kernel installed; run make setup" >&2; exit 1; }
echo "demo: booting $kver under QEMU (TCG, about 20 s)..." >&2
exec "$top/scripts/vm/vm-run.sh" --kver "$kver" --results "$top/results/demo" -- \
	bash "$top/scripts/demo/guest-demo.sh"
