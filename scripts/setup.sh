#!/usr/bin/env bash
# Install what wpstat needs on a Debian 12 host, idempotently, as root:
# the QEMU/virtme-ng runner, the newest Debian 6.1 and 6.12 kernels with their
# headers, libkmod, bats, filesystem tools, and the kselftest headers and
# checkpatch taken out of Debian's linux-source package.  Then the extra
# kernels of other suites (bullseye 5.10, trixie 6.12, sid's newest), staged
# under build/ with a debootstrap chroot per suite to build for them: see
# scripts/vm/kernels.sh.
#
# Safe to run again: it only installs what is missing.
#
#   scripts/setup.sh [--flavours] [--long]
#   scripts/setup.sh --check
#   scripts/setup.sh --demo
#
# --flavours also installs the newest 6.12 cloud and rt kernels with their
# headers (make check-flavours); plain make setup leaves them out.
# --long also installs what only the long forms use: the JDK and Maven
# (bats:experiment, make experiment, make clients), bpftrace (make bench)
# and matplotlib (the experiment's charts); make check needs none of them.
# --check stages only the extra kernel make check boots (bullseye's 5.10):
# trixie's and sid's chroots are make check-kernels' (and make stress's,
# make bench's), which plain set-up stages.
# --demo installs only what make demo boots and builds: QEMU and
# virtme-ng, the newest 6.12 with its headers, the compiler and libkmod,
# jq and e2fsprogs; no other kernel, chroot, test tool or linux-source.

set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
venv=$top/.venv
srcdir=$top/build/linux-src
log() { printf 'setup: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

flavours=0
long=0
demo=0
check=0
for a in "$@"; do
	case $a in
	--flavours) flavours=1 ;;
	--long) long=1 ;;
	--demo) demo=1 ;;
	--check) check=1 ;;
	*) die "usage: $0 [--flavours] [--long] | --check | --demo" ;;
	esac
done
[ $demo = 0 ] || [ $flavours$long = 00 ] || die "--demo sets up the demo only: not with --flavours or --long"

[ "$(id -u)" = 0 ] || die "must run as root (it installs Debian packages)"
command -v apt-get >/dev/null || die "needs a Debian system with apt-get"

pkg_installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q '^install ok installed$'
}

# apt lists go stale quickly; refresh once per hour at most.
refresh_lists() {
	local stamp=/var/lib/apt/periodic/wpstat-update-stamp
	if [ -z "$(find "$stamp" -mmin -60 2>/dev/null)" ]; then
		log "apt-get update"
		apt-get update -qq >/dev/null
		mkdir -p "$(dirname "$stamp")" && touch "$stamp"
	fi
}

tools="qemu-system-x86 libkmod-dev kmod pkg-config bats bats-assert bats-support
	e2fsprogs xfsprogs btrfs-progs python3-venv jq busybox-static
	bc flex bison libelf-dev libssl-dev xz-utils linux-source-6.12
	dmsetup util-linux dkms groff-base
	curl iproute2 prometheus prometheus-node-exporter liblmdb-dev lmdb-utils
	f2fs-tools libfuse3-dev fuse3 nfs-kernel-server debootstrap fio
	dpkg-dev debhelper dh-dkms lintian apt-utils gpg gpgv file procps"
[ $long = 0 ] || tools="$tools openjdk-17-jdk-headless maven bpftrace"
# file: virtme-ng runs it on busybox (is_statically_linked); procps: the
# guest scripts' sysctl.  A minimal Debian (debootstrap) has neither.
[ $demo = 0 ] || tools="qemu-system-x86 python3-venv busybox-static kmod libkmod-dev
	pkg-config build-essential jq e2fsprogs util-linux file procps"

missing=()
for p in $tools; do pkg_installed "$p" || missing+=("$p")
done

kernels=$("$top/scripts/vm/kernels.sh" installed || true)
want_kernels=()
have_61=0 have_612=0
for k in $kernels; do
	case $k in 6.1.0-*) have_61=1 ;; 6.12.*) have_612=1 ;; esac
done
if { [ $have_61 = 0 ] && [ $demo = 0 ]; } || [ $have_612 = 0 ] || [ ${#missing[@]} -gt 0 ]; then
	refresh_lists
	for k in $("$top/scripts/vm/kernels.sh" available); do
		case $k in
		6.1.0-*) [ $have_61 = 1 ] || [ $demo = 1 ] && continue ;;
		6.12.*) [ $have_612 = 1 ] && continue ;;
		esac
		want_kernels+=("$k")
		missing+=("linux-image-$k" "linux-headers-$k")
	done
fi

# The cloud and rt flavours, only when asked: one of each, the newest with
# headers, unless one is installed already.
if [ $flavours = 1 ]; then
	have=$("$top/scripts/vm/kernels.sh" flavours installed)
	want=()
	for f in cloud rt; do
		grep -q -- "-$f-amd64\$" <<<"$have" || want+=("$f")
	done
	if [ ${#want[@]} -gt 0 ]; then
		refresh_lists
		for k in $("$top/scripts/vm/kernels.sh" flavours available); do
			for f in "${want[@]}"; do
				case $k in *-"$f"-amd64) missing+=("linux-image-$k" "linux-headers-$k") ;; esac
			done
		done
	fi
fi

if [ ${#missing[@]} -gt 0 ]; then
	log "installing: ${missing[*]}"
	# INITRD=No: the guests boot the kernel through virtme-ng, which builds
	# its own initramfs; generating Debian's would only cost minutes.
	DEBIAN_FRONTEND=noninteractive INITRD=No \
		apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# bookworm's 6.12 comes from bookworm-security (linux 6.12.*+deb12): a
# machine whose apt sources lack it (a minimal debootstrap) has no 6.12
# to install, and the host's sources are the administrator's to change.
if ! "$top/scripts/vm/kernels.sh" installed | grep -q '^6\.12\.'; then
	grep -q '^6\.12\.' < <(printf '%s\n' "${want_kernels[@]}") ||
		die "no 6.12 kernel in apt's lists: bookworm's (linux-image-6.12.*+deb12-amd64, with its headers) comes from bookworm-security; add 'deb http://deb.debian.org/debian-security bookworm-security main' to the apt sources and rerun"
fi
[ -n "$("$top/scripts/vm/kernels.sh" installed)" ] || die "no supported kernel installed"

# virtme-ng into a project-local venv; vng expects its helpers on PATH.
if [ ! -x "$venv/bin/vng" ]; then
	log "installing virtme-ng into $venv"
	python3 -m venv "$venv"
	"$venv/bin/pip" install -q --disable-pip-version-check 'virtme-ng>=1.30'
fi
if [ $demo = 1 ]; then
	k=$("$top/scripts/vm/kernels.sh" installed | grep '^6\.12\.' | tail -n 1)
	[ -n "$k" ] || die "no 6.12 kernel with headers installed for the demo"
	log "ready for the demo: kernel $k"
	exit 0
fi

# The bats suites validate `wpstat show --format prometheus` with a real parser.
if ! "$venv/bin/python3" -c 'import prometheus_client' 2>/dev/null; then
	"$venv/bin/pip" install -q --disable-pip-version-check prometheus_client
fi

# make experiment draws its charts with matplotlib.  Its font cache is
# built here, once: building it in a TCG guest takes minutes.
if [ $long = 1 ] && ! "$venv/bin/python3" -c 'import matplotlib' 2>/dev/null; then
	"$venv/bin/pip" install -q --disable-pip-version-check matplotlib
fi
if [ $long = 1 ] && ! ls "$top"/build/mplconfig/fontlist-*.json >/dev/null 2>&1; then
	mkdir -p "$top/build/mplconfig"
	MPLCONFIGDIR=$top/build/mplconfig "$venv/bin/python3" -c 'import matplotlib.pyplot' 2>/dev/null
fi

# kselftest headers and checkpatch come from Debian's linux-source, never
# from copies committed here.
if [ ! -f "$srcdir/tools/testing/selftests/kselftest_harness.h" ] ||
   [ ! -f "$srcdir/scripts/checkpatch.pl" ]; then
	tarball=$(ls /usr/src/linux-source-6.12.tar.* 2>/dev/null | head -n 1)
	[ -n "$tarball" ] || die "linux-source-6.12 tarball not found in /usr/src"
	log "extracting kselftest headers and checkpatch from $tarball"
	rm -rf "$srcdir" && mkdir -p "$srcdir"
	tar -xf "$tarball" -C "$srcdir" --strip-components=1 --wildcards \
		'*/tools/testing/selftests/kselftest.h' \
		'*/tools/testing/selftests/kselftest_harness.h' \
		'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
		'*/scripts/const_structs.checkpatch'
fi

# The extra kernels, one per suite: the image and modules unpacked (never
# installed) into build/kernels/KVER, the headers and the gcc that built
# them in a minimal chroot build/chroot/SUITE.  bullseye's 5.10 gets a
# chroot too, although bookworm's gcc-12 builds it: its own gcc-10 gives
# the warnings its users get, and every extra kernel builds the same way.
# All of it through apt configurations of the project's own (build/apt):
# the host's sources are never touched.  A suite whose kernel is staged is
# left alone, without touching the network, like the host kernels above.
kernels=$top/scripts/vm/kernels.sh
host_keyring=/usr/share/keyrings/debian-archive-keyring.gpg
keyring_dir=$top/build/apt/keyrings
since() { echo "$((SECONDS - $1)) s"; }

# bookworm's keyring verifies all three suites today (sid is signed with the
# 12/bookworm and 13/trixie keys).  Once sid is signed only with keys newer
# than the host's, take the keyring from the stable suite's updates, which
# the host's keyring still verifies (a signed Release names the package's
# hash), and check with both.
stage_keyring() {
	local tmp
	[ ! -f "$keyring_dir/debian-archive-keyring.gpg" ] || return 1
	log "the host's Debian keyring cannot verify a suite: taking trixie's"
	"$kernels" extra apt trixie apt-get update -qq >/dev/null
	tmp=$(mktemp -d)
	chown _apt "$tmp" 2>/dev/null || true
	(cd "$tmp" && "$kernels" extra apt trixie apt-get download -qq debian-archive-keyring >/dev/null)
	dpkg-deb -x "$tmp"/debian-archive-keyring_*.deb "$tmp/x"
	mkdir -p "$keyring_dir"
	cp "$tmp/x/usr/share/keyrings/debian-archive-keyring.gpg" "$keyring_dir/"
	rm -rf "$tmp"
}

extra_update() {
	local out
	out=$("$kernels" extra apt "$1" apt-get update -qq 2>&1) && return 0
	if grep -Eq 'NO_PUBKEY|EXPKEYSIG|KEYEXPIRED|is not signed' <<<"$out" && stage_keyring; then
		out=$("$kernels" extra apt "$1" apt-get update -qq 2>&1) && return 0
	fi
	printf '%s\n' "$out" >&2
	die "apt-get update failed for $1"
}

# The image package and, since 7.2 split it, the packages of the same
# kernel it depends on (linux-binary-, linux-modules-, linux-base-KVER):
# downloaded into build/apt/SUITE/debs, unpacked into build/kernels/KVER.
stage_kernel() {
	local suite=$1 kver=$2 debs=$top/build/apt/$1/debs dest=$top/build/kernels/$2 pkgs f tmp
	pkgs=$("$kernels" extra apt "$suite" apt-cache depends --no-recommends --no-suggests \
		--no-conflicts --no-breaks --no-replaces --no-enhances "linux-image-$kver" |
		awk -v k="-$kver" '{ n = $NF } n ~ /^linux-/ && n !~ /^linux-headers-/ &&
			substr(n, length(n) - length(k) + 1) == k { print n }' | sort -u)
	# apt downloads as _apt, who cannot enter a checkout in a 0700
	# directory (.ci/run makes one): download in /tmp, then move.
	tmp=$(mktemp -d /tmp/wpstat-debs.XXXXXX)
	chown _apt "$tmp" 2>/dev/null || true
	(cd "$tmp" && "$kernels" extra apt "$suite" apt-get download -qq $pkgs >/dev/null)
	mkdir -p "$debs" && mv "$tmp"/*.deb "$debs/" && rmdir "$tmp"
	rm -rf "$dest.new" && mkdir -p "$dest.new"
	for f in $pkgs; do
		dpkg-deb -x "$debs/${f}_"*.deb "$dest.new"
	done
	# vng runs depmod when modules.dep is missing; do it once here rather
	# than in two guests booting at the same time.  -b: the tree that holds
	# lib/modules (usr/ from 7.2 on).
	if [ -d "$dest.new/usr/lib/modules/$kver" ]; then
		depmod -b "$dest.new/usr" "$kver"
	else
		depmod -b "$dest.new" "$kver"
	fi
	echo "$suite" >"$dest.new/suite"
	rm -rf "$dest" && mv "$dest.new" "$dest"
	"$kernels" image "$kver" >/dev/null || die "no kernel image in the packages of $kver"
}

# A minimal chroot of the suite (created once), then the kernel's headers,
# make and libc6-dev in it with the chroot's own apt.  The image packages
# downloaded above are handed to it, as trixie's headers depend on the
# image.  INITRD=No: no initramfs is needed there.
chroot_headers() {
	local suite=$1 kver=$2 root=$top/build/chroot/$1 keyring=$host_keyring t
	if [ ! -f "$root/.wpstat-debootstrap" ]; then
		t=$SECONDS
		[ ! -f "$keyring_dir/debian-archive-keyring.gpg" ] || keyring=$keyring_dir/debian-archive-keyring.gpg
		# --one-file-system: never into a mount a killed run left behind.
		rm -rf --one-file-system "$root"
		mkdir -p "$root"
		# In a mount namespace of its own: its /proc and /sys mounts
		# vanish with it even when it fails half-way.
		if ! unshare --mount --propagation private debootstrap --variant=minbase \
			--keyring="$keyring" "$suite" "$root" http://deb.debian.org/debian \
			>"$root.debootstrap.log" 2>&1; then
			tail -n 20 "$root.debootstrap.log" >&2
			die "debootstrap of $suite failed (log: $root.debootstrap.log)"
		fi
		"$kernels" extra sources "$suite" >"$root/etc/apt/sources.list"
		cp /etc/resolv.conf "$root/etc/resolv.conf"
		touch "$root/.wpstat-debootstrap"
		log "$suite: chroot created in $(since $t)"
	fi
	t=$SECONDS
	# The chroot's apt follows the host's on Release freshness: a machine
	# whose mirror serves sid's Release past its Valid-Until turns the check
	# off, and so must the chroot.  Signatures are checked all the same.
	apt-config dump | grep -E '^Acquire::Check-(Valid-Until|Date) ' \
		>"$root/etc/apt/apt.conf.d/99wpstat-host" || true
	mkdir -p "$root/var/cache/apt/archives"
	cp "$top/build/apt/$suite/debs/"*.deb "$root/var/cache/apt/archives/" 2>/dev/null || true
	"$top/scripts/vm/chroot-run.sh" "$root" -- apt-get update -qq >/dev/null
	"$top/scripts/vm/chroot-run.sh" "$root" -- env DEBIAN_FRONTEND=noninteractive INITRD=No \
		apt-get install -y -qq --no-install-recommends make gcc libc6-dev "linux-headers-$kver" \
		>"$root.apt.log" 2>&1 || { tail -n 20 "$root.apt.log" >&2; die "$suite: installing linux-headers-$kver failed"; }
	"$top/scripts/vm/chroot-run.sh" "$root" -- apt-get clean
	[ -f "$root/usr/src/linux-headers-$kver/Makefile" ] || die "$suite: no headers for $kver in $root"
	log "$suite: headers of $kver installed in $(since $t)"
}

# A trivial module built through kbuild.sh, as make module builds wpstat:
# proves the chroot's compiler and objtool work before anything relies on it.
check_toolchain() {
	local kver=$1 tmp
	tmp=$(mktemp -d /tmp/wpstat-hello.XXXXXX)
	cat >"$tmp/hello.c" <<-'EOF'
	#include <linux/module.h>
	static int __init hello_init(void) { return 0; }
	static void __exit hello_exit(void) { }
	module_init(hello_init);
	module_exit(hello_exit);
	MODULE_DESCRIPTION("kbuild.sh toolchain check");
	MODULE_LICENSE("GPL");
	EOF
	echo 'obj-m := hello.o' >"$tmp/Kbuild"
	"$top/scripts/vm/kbuild.sh" "$kver" "$tmp" || die "$kver: a trivial module does not build"
	[ -f "$tmp/hello.ko" ] || die "$kver: a trivial module built no hello.ko"
	rm -rf "$tmp"
}

for suite in $("$kernels" extra suites); do
	[ $check = 0 ] || [ "$suite" = bullseye ] || continue
	have=
	for k in $("$kernels" extra installed); do
		if [ "$(cat "$top/build/kernels/$k/suite")" = "$suite" ]; then have=$k; fi
	done
	[ -z "$have" ] || continue
	t0=$SECONDS
	extra_update "$suite"
	kver=$("$kernels" extra available "$suite")
	[ -n "$kver" ] || die "$suite: no amd64 kernel with headers found"
	t=$SECONDS
	stage_kernel "$suite" "$kver"
	log "$suite: $kver downloaded and staged in $(since $t)"
	chroot_headers "$suite" "$kver"
	t=$SECONDS
	check_toolchain "$kver"
	log "$suite: a trivial module builds for $kver ($(since $t))"
	rm -rf "$top/build/apt/$suite/debs"
	log "$suite: $kver ready in $(since $t0) ($(du -sh --one-file-system "$top/build/chroot/$suite" | cut -f1) chroot, $(du -sh "$top/build/kernels/$kver" | cut -f1) kernel)"
done

log "ready: kernels $(echo $("$top/scripts/vm/kernels.sh" installed))"
log "ready: extra kernels $(echo $("$kernels" extra installed))"
if [ $flavours = 1 ]; then
	[ "$("$top/scripts/vm/kernels.sh" flavours installed | wc -l)" = 2 ] ||
		die "the 6.12 cloud and rt kernels with headers are not both installable"
	log "ready: flavours $(echo $("$top/scripts/vm/kernels.sh" flavours installed))"
fi
