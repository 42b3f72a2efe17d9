#!/usr/bin/env bash
# Build an out-of-tree module for one kernel, with that kernel's compiler.
#
#   scripts/vm/kbuild.sh KVER        wpstat: kmod/Makefile into build/kmod/KVER
#   scripts/vm/kbuild.sh KVER --bench
#                                    make bench's wpmech.ko: kmod/bench/Makefile
#                                    into build/kmod/KVER/bench
#   scripts/vm/kbuild.sh KVER DIR    any module source DIR (a Kbuild or
#                                    Makefile with obj-m), built in place
#
# A kernel whose headers the host has (/lib/modules/KVER/build: the bookworm
# kernels, the flavours) builds on the host, as it always did.  An extra
# kernel staged by setup.sh (kernels.sh extra) builds inside its suite's
# chroot, whose gcc is the one that built it: bookworm's gcc-12 cannot build
# trixie's 6.12 or sid's kernels.  The project directory (and DIR) appear at
# the same absolute path in there, so build/kmod/KVER/wpstat.ko lands where
# vm-run.sh looks for it.  Quiet on success but for compiler warnings.

set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
die() { printf 'kbuild: %s\n' "$*" >&2; exit 2; }

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: $0 KVER [DIR|--bench]"
kver=$1
dir=
bench=0
if [ "${2:-}" = --bench ]; then
	bench=1
elif [ $# = 2 ]; then
	dir=$(cd "$2" && pwd) || die "no directory $2"
fi

if [ $bench = 1 ]; then
	cmd=(make -s -C "$top/kmod/bench" KVER="$kver")
elif [ -n "$dir" ]; then
	cmd=(make -s -C "/lib/modules/$kver/build" M="$dir" modules)
else
	cmd=(make -s -C "$top/kmod" KVER="$kver")
fi

root=$("$top/scripts/vm/kernels.sh" chroot "$kver")
if [ -z "$root" ]; then
	if [ -n "$dir" ] && [ ! -f "/lib/modules/$kver/build/Makefile" ]; then
		die "no headers for $kver on the host nor in a chroot; run scripts/setup.sh"
	fi
	exec "${cmd[@]}"
fi

[ -f "$root/usr/src/linux-headers-$kver/Makefile" ] ||
	die "no headers for $kver in $root; run scripts/setup.sh"
binds=(--bind "$top")
case $dir in
"" | "$top" | "$top"/*) ;;
*) binds+=(--bind "$dir") ;;
esac
# chroot-run.sh clears the environment: keep make's flags (-n, -s, the
# jobserver of a make -j that runs this) as the host build does.
exec "$top/scripts/vm/chroot-run.sh" "$root" "${binds[@]}" -- \
	env ${MAKEFLAGS:+MAKEFLAGS="$MAKEFLAGS"} "${cmd[@]}"
