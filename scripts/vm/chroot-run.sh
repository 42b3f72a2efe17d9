#!/usr/bin/env bash
# Run a command inside one of setup.sh's debootstrap chroots (build/chroot/SUITE)
# with /proc mounted (objtool and some maintainer scripts need it) and each
# --bind DIR visible at the same absolute path, so that paths kbuild writes
# into its Makefiles mean the same inside and out.
#
#   scripts/vm/chroot-run.sh ROOT [--bind DIR]... -- COMMAND [ARGS...]
#
# Everything runs in a private mount namespace: the mounts are taken down by
# the trap below and, should this shell be killed, vanish with the namespace,
# so nothing stays mounted under build/ (where rm -rf would walk into it).
# The command gets a clean environment; pass variables with env VAR=... .

set -euo pipefail

die() { printf 'chroot-run: %s\n' "$*" >&2; exit 2; }

[ $# -ge 1 ] || die "usage: $0 ROOT [--bind DIR]... -- COMMAND [ARGS...]"
root=$(cd "$1" && pwd) || die "no chroot at $1"
shift
binds=()
while [ $# -gt 0 ] && [ "$1" = --bind ]; do
	[ $# -ge 2 ] || die "--bind needs a directory"
	d=$(cd "$2" && pwd) || die "no directory $2"
	binds+=("$d")
	shift 2
done
[ "${1:-}" = -- ] && shift
[ $# -gt 0 ] || die "no command given"
[ -x "$root/usr/bin/env" ] || die "$root is not a chroot"

if [ "${WPSTAT_CHROOT_NS:-}" != "$root" ]; then
	args=()
	for d in "${binds[@]}"; do args+=(--bind "$d"); done
	WPSTAT_CHROOT_NS=$root exec unshare --mount --propagation private \
		"$0" "$root" "${args[@]}" -- "$@"
fi

mounted=()
cleanup() {
	local i
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount "${mounted[i]}" || umount -l "${mounted[i]}"
	done
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

mount -t proc proc "$root/proc"
mounted+=("$root/proc")
for d in "${binds[@]}"; do
	mkdir -p "$root$d"
	mount --bind "$d" "$root$d"
	mounted+=("$root$d")
done

chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
	LANG=C.UTF-8 TERM="${TERM:-dumb}" "$@"
