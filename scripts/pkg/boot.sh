#!/usr/bin/env bash
# Boot a kernel of a package-test root with that root (virtme-ng --root,
# TCG): the root is exported read-only and virtme-ng's init puts a tmpfs
# overlay over each directory the guest writes (/etc, /usr, /var, /tmp...),
# so nothing written in the guest reaches the root.  RESULTS is the
# guest's /mnt/wpstat, where scripts/pkg/guest.sh runs STEPs and leaves
# their output.
#
#   scripts/pkg/boot.sh ROOT KVER RESULTS STEP...
#
# Exit 0 once the guest ran every step, 125 if it did not finish (console:
# RESULTS/console.log); RESULTS/kernel-problems.txt lists any BUG, WARNING,
# Oops, lockdep or KASAN line of its kernel log.  WPSTAT_PKG_BOOT_TIMEOUT
# bounds the guest (seconds, default 900).

set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 4 ] || { echo "usage: $0 ROOT KVER RESULTS STEP..." >&2; exit 2; }
root=$(cd "$1" && pwd)
kver=$2
results=$3
shift 3

image=
for f in "$root/boot/vmlinuz-$kver" "$root/usr/lib/modules/$kver/vmlinuz"; do
	[ -f "$f" ] && { image=$f; break; }
done
[ -n "$image" ] || { echo "boot: no image of $kver in $root" >&2; exit 2; }
# The mount point must exist in the root: the guest cannot create it there.
[ -d "$root/mnt/wpstat" ] || { echo "boot: $root has no /mnt/wpstat" >&2; exit 2; }
mkdir -p "$results"
results=$(cd "$results" && pwd)
rm -f "$results/guest-done" "$results/dmesg.txt" "$results/kernel-problems.txt"
cp "$top/scripts/pkg/guest.sh" "$top/scripts/vm/guest-lib.sh" "$results/"

export PATH=$top/.venv/bin:$PATH
# Single-threaded TCG, as scripts/vm/vm-run.sh (see there why).
timeout --kill-after=30 "${WPSTAT_PKG_BOOT_TIMEOUT:-900}" \
	vng --run "$image" --root "$root" --disable-kvm --memory 2G --cpus 2 \
	--rwdir "/mnt/wpstat=$results" --qemu-opts="-accel tcg,thread=single" \
	--exec "bash /mnt/wpstat/guest.sh $*" >"$results/console.log" 2>&1
rc=$?
if [ ! -f "$results/guest-done" ]; then
	echo "boot: the guest did not finish (vng exit $rc); console: $results/console.log" >&2
	exit 125
fi
# virtme-ng-init logs to the kernel log too: its "WARNING: failed to run"
# a tool the root lacks (ip, systemd-tmpfiles) is not the kernel's.
grep -E -n -f "$top/scripts/vm/kernel-problems.ere" "$results/dmesg.txt" |
	grep -v '^[0-9]*:\[ *[0-9.]*\] virtme-ng-init: ' >"$results/kernel-problems.txt"
exit 0
