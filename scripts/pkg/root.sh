#!/usr/bin/env bash
# The package test's root of a Debian suite, as a machine of that suite
# would have it before wpstat: a minimal debootstrap with a kernel image,
# its headers and the compiler they depend on, bootable by virtme-ng
# (busybox-static for its initramfs) and with what the test runs in the
# guest (jq, e2fsprogs, procps, openssl for DKMS's signing key).  dkms is
# not installed: apt brings it in as wpstat-dkms's dependency.  Its .debs,
# and those of any kernel the test installs later, are downloaded into the
# root's apt cache, so the test itself needs no network.
#
#   scripts/pkg/root.sh SUITE      prints the root's directory
#
# Built once into build/pkgtest/roots/SUITE and reused while its recipe
# (the kernels below) is the same; the test works on a copy.  Kernels, by
# suite (KVER: scripts/vm/kernels.sh):
#   bookworm  the host's 6.12 (image + headers) and the host's 6.1, image
#             only: its headers come later, in the test (a kernel added
#             later; before that, a kernel without headers)
#   bullseye, trixie, sid   the kernel make setup staged for the suite
#             (scripts/vm/kernels.sh extra installed), or, once the archive
#             has dropped it, the suite's newest with headers
# Everything goes through the root's own apt (sources of that suite), never
# the host's.

set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
kernels=$top/scripts/vm/kernels.sh
log() { printf 'pkg-root: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

suite=${1:?usage: $0 SUITE}
case $suite in
bookworm | bullseye | trixie | sid) ;;
*) die "unknown suite '$suite'" ;;
esac
roots=$top/build/pkgtest/roots
root=$roots/$suite
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ ! -f "$top/build/apt/keyrings/debian-archive-keyring.gpg" ] ||
	keyring=$top/build/apt/keyrings/debian-archive-keyring.gpg

# The kernels: "boot" ones get image and headers, "bare" ones the image
# only, "later" ones have their headers downloaded for the test.
boot= bare= later=
case $suite in
bookworm)
	boot=$("$kernels" installed | grep '^6\.12\.' | tail -n 1)
	bare=$("$kernels" installed | grep '^6\.1\.' | tail -n 1)
	later=$bare
	;;
*)
	for k in $("$kernels" extra installed); do
		[ "$(cat "$top/build/kernels/$k/suite")" != "$suite" ] || boot=$k
	done
	;;
esac
recipe="wpstat package-test root 2: $suite boot=$boot bare=$bare later=$later"

# One builder at a time (make check and make check-packages may both ask).
mkdir -p "$roots"
exec 8>"$roots/$suite.lock"
flock 8
if [ -f "$root/.wpstat-pkgroot" ] && [ "$(cat "$root/.wpstat-pkgroot")" = "$recipe" ]; then
	echo "$root"
	exit 0
fi

sources() {
	case $1 in
	bookworm)
		echo "deb http://deb.debian.org/debian bookworm main"
		echo "deb http://deb.debian.org/debian bookworm-updates main"
		echo "deb http://deb.debian.org/debian-security bookworm-security main"
		;;
	*) "$kernels" extra sources "$1" ;;
	esac
}

in_root() { "$top/scripts/vm/chroot-run.sh" "$root" -- env DEBIAN_FRONTEND=noninteractive INITRD=No "$@"; }

t0=$SECONDS
log "$suite: building $root"
# --one-file-system: never into a mount a killed run left behind.
rm -rf --one-file-system "$root" "$root.new"
mkdir -p "$roots"
if ! unshare --mount --propagation private debootstrap --variant=minbase \
	--keyring="$keyring" "$suite" "$root.new" http://deb.debian.org/debian \
	>"$root.debootstrap.log" 2>&1; then
	tail -n 20 "$root.debootstrap.log" >&2
	die "debootstrap of $suite failed (log: $root.debootstrap.log)"
fi
mv "$root.new" "$root"
sources "$suite" >"$root/etc/apt/sources.list"
cp /etc/resolv.conf "$root/etc/resolv.conf"
echo wpstat-pkgtest >"$root/etc/hostname"
# As setup.sh's chroots: follow the host on Release freshness.
apt-config dump | grep -E '^Acquire::Check-(Valid-Until|Date) ' \
	>"$root/etc/apt/apt.conf.d/99host-freshness" || true
in_root apt-get update -qq >/dev/null

# A kernel the archive no longer has: the suite's newest with headers.
resolve() {
	local k=$1
	if [ -n "$k" ] && ! in_root apt-cache show "linux-headers-$k" >/dev/null 2>&1; then
		case $suite in
		bookworm) die "bookworm's archive has no linux-headers-$k any more: run make setup" ;;
		esac
		k=$("$kernels" extra available "$suite")
		log "$suite: $1 is gone from the archive, using $k"
	fi
	echo "$k"
}
boot=$(resolve "$boot")
bare=$(resolve "$bare")
later=$(resolve "$later")
[ -n "$boot" ] || die "$suite: no kernel (make setup stages one per suite)"

pkgs=(busybox-static kmod jq e2fsprogs procps openssl "linux-image-$boot" "linux-headers-$boot")
[ -z "$bare" ] || pkgs+=("linux-image-$bare")
log "$suite: installing ${pkgs[*]}"
in_root apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >"$root.apt.log" 2>&1 ||
	{ tail -n 20 "$root.apt.log" >&2; die "$suite: apt-get install failed (log: $root.apt.log)"; }
in_root apt-get clean
# What the test installs later, downloaded now.
dl=(dkms)
[ -z "$later" ] || dl+=("linux-headers-$later")
in_root apt-get install -y -qq --no-install-recommends --download-only "${dl[@]}" >>"$root.apt.log" 2>&1 ||
	{ tail -n 20 "$root.apt.log" >&2; die "$suite: downloading ${dl[*]} failed"; }
[ -f "$root/usr/src/linux-headers-$boot/Makefile" ] || die "$suite: no headers for $boot in $root"
[ -x "$root/bin/busybox" ] || die "$suite: no busybox in $root"
# The test's results directory is mounted here in the guest.
mkdir -p "$root/mnt/wpstat"
echo "$recipe" >"$root/.wpstat-pkgroot"
printf 'boot=%s\nbare=%s\nlater=%s\n' "$boot" "$bare" "$later" >"$root/.wpstat-kernels"
log "$suite: root ready in $((SECONDS - t0)) s ($(du -sh --one-file-system "$root" | cut -f1))"
echo "$root"
