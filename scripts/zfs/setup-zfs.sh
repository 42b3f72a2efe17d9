#!/usr/bin/env bash
# make setup-zfs: Debian's ZFS built for the kernels wpstat boots, each
# kernel with the ZFS of its own suite (zfs-dkms and zfsutils-linux from
# contrib, through the project's apt configurations: scripts/vm/kernels.sh
# extra apt zfs-SUITE).  Never part of make setup or make check: a build
# takes ~7.5 minutes per kernel on 2 cores.
#
#   setup-zfs.sh [KVER...]   build for these kernels (default: every kernel
#                            kernels.sh all lists); a kernel ZFS is not yet
#                            ready on is listed with the reason
#   setup-zfs.sh plan [KVER...]
#                            KVER SUITE VERSION, or KVER not-yet REASON
#   setup-zfs.sh dir KVER    the cached build of KVER (fails if none)
#   setup-zfs.sh cache       the cache directory (scripts/vm/vm-run.sh hands
#                            it to the guest, whose $HOME may differ)
#
# The result is cached outside the clone, so that a fresh clone on the
# same machine reuses it: $WPSTAT_ZFS_CACHE, default
# ${XDG_CACHE_HOME:-$HOME/.cache}/wpstat/zfs, as KVER/zfs-VERSION/ with
#   modules/   spl.ko and zfs.ko, built from zfs-dkms's sources the way
#              DKMS builds them (its dkms.conf's configure line)
#   root/      zfsutils-linux and its ZFS libraries, unpacked, never
#              installed: the guest runs zpool and zfs from here
#              (guest_zfs in scripts/vm/guest-lib.sh)
#   bin/       for a suite other than the guest root's bookworm (bullseye,
#              trixie, sid): zpool and zfs wrappers that run them with the
#              suite's own glibc and libraries, unpacked into root/ too
#              (the dynamic loader named explicitly, --library-path); the
#              modules build in the suite's chroot, with its compiler
#   built      written last: VERSION, the suite, the date
# A kernel that already has a build of its suite's current version is
# left alone.

set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
kernels=$top/scripts/vm/kernels.sh
cache=${WPSTAT_ZFS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wpstat/zfs}
log() { printf 'setup-zfs: %s\n' "$*"; }
die() { printf 'setup-zfs: %s\n' "$*" >&2; exit 2; }

# The suite whose ZFS a user of the kernel runs with it, or "not-yet
# REASON".  The guest's root is the host's (bookworm): a suite's zpool and
# zfs run there with that suite's own libraries (bin/, above).
zfs_suite() {
	case $1 in
	6.1.0-*-amd64) echo bookworm ;;
	6.12.*+deb12-amd64) echo bookworm-backports ;;
	5.10.*) echo bullseye ;;
	6.12.*+deb13-amd64) echo trixie ;;
	*+deb1[4-9]-amd64) echo sid ;;
	*) die "no kernel '$1' wpstat boots (scripts/vm/kernels.sh all lists them)" ;;
	esac
}

# zfs-dkms's version in the suite (apt's candidate of its own list).
zfs_version() {
	"$kernels" extra apt "zfs-$1" apt-cache policy zfs-dkms 2>/dev/null |
		awk '$1 == "Candidate:" && $2 != "(none)" { print $2 }'
}

update_lists() {
	local stamp=$top/build/apt/zfs-$1/updated
	if [ -z "$(find "$stamp" -mmin -60 2>/dev/null)" ]; then
		"$kernels" extra apt "zfs-$1" apt-get update -qq ||
			die "apt-get update failed for $1's contrib"
		touch "$stamp"
	fi
}

plan() {
	local kver suite
	for kver in "$@"; do
		suite=$(zfs_suite "$kver") || exit 2
		case $suite in
		not-yet*) echo "$kver $suite" ;;
		*)
			update_lists "$suite"
			echo "$kver $suite $(zfs_version "$suite")"
			;;
		esac
	done
}

# The newest complete build of KVER.
cached_dir() {
	local d
	d=$(ls -d "$cache/$1"/zfs-*/built 2>/dev/null | sort -V | tail -n 1)
	[ -n "$d" ] || return 1
	dirname "$d"
}

# The libraries the unpacked ZFS packages in DIR link, with all they need
# in turn, from SUITE's main (zfs-SUITE's lists hold only contrib).  With
# an empty dpkg status (DIR/no-status): the host's installed versions
# would otherwise be the candidates where they are newer (bookworm's
# over bullseye's), and no bullseye list has them.
runtime_libs() {
	local suite=$1 dir=$2 deps
	deps=$(for f in "$dir"/*.deb; do dpkg-deb -f "$f" Depends; done |
		tr ',|' '\n\n' | sed 's/(.*//; s/:any//; s/ //g' | grep -E '^(lib|zlib)' |
		grep -Ev '^lib(zfs|zpool|nvpair|uutil)[0-9]' | sort -u)
	"$kernels" extra apt "$suite" apt-cache -o Dir::State::status="$dir/no-status" \
		depends --recurse --no-recommends \
		--no-suggests --no-conflicts --no-breaks --no-replaces --no-enhances \
		$deps libc6 2>/dev/null | grep -E '^(lib|zlib)' | sort -u
}

# bin/zpool, bin/zfs: each runs the suite's own binary with the suite's
# own dynamic loader and libraries from root/ (the guest's /lib is
# bookworm's).  Paths relative to the wrapper: the guest sees the cache
# at the host's path, a later clone elsewhere too.
write_wrappers() {
	local dest=$1 ldso prog path out
	# The file, not a link: bullseye's /lib64 one is absolute (the host's).
	ldso=$(cd "$dest/root" && find . \( -name 'ld-linux-x86-64.so.2' -o -name 'ld-2.*.so' \) \
		-type f | sed 's|^\./||' | awk 'NR == 1')
	[ -n "$ldso" ] || die "no dynamic loader among $dest/root's libraries"
	mkdir -p "$dest/bin"
	for prog in zpool zfs; do
		path=sbin/$prog
		[ -f "$dest/root/$path" ] || path=usr/sbin/$prog
		[ -f "$dest/root/$path" ] || die "no $prog in $dest/root"
		cat >"$dest/bin/$prog" <<-EOF
		#!/bin/sh
		# $prog of ZFS $version from $suite, with $suite's glibc and libraries.
		d=\$(cd "\$(dirname "\$0")/../root" && pwd)
		exec "\$d/$ldso" --library-path "\$d/usr/lib/x86_64-linux-gnu:\$d/lib/x86_64-linux-gnu" "\$d/$path" "\$@"
		EOF
		chmod +x "$dest/bin/$prog"
		# Every library resolved within root/ (running needs the module).
		out=$("$dest/root/$ldso" --library-path \
			"$dest/root/usr/lib/x86_64-linux-gnu:$dest/root/lib/x86_64-linux-gnu" \
			--list "$dest/root/$path" 2>&1) && ! grep -q 'not found' <<<"$out" ||
			die "$prog of $suite cannot run with its libraries: $(grep 'not found' <<<"$out" | head -n 3)"
	done
}

build() {
	local kver=$1 suite=$2 version=$3 dest tmp src upstream linux root
	local t0=$SECONDS run=()
	dest=$cache/$kver/zfs-$version
	if [ -f "$dest/built" ]; then
		log "$kver: ZFS $version ($suite) already built in $dest"
		return 0
	fi
	# A kernel of another suite builds in that suite's chroot, with its
	# compiler, as scripts/vm/kbuild.sh builds wpstat.
	root=$("$kernels" chroot "$kver")
	if [ -n "$root" ]; then
		[ -f "$root/usr/src/linux-headers-$kver/Makefile" ] ||
			die "$kver: no headers in $root: run make setup"
	else
		[ -f "/lib/modules/$kver/build/Makefile" ] ||
			die "$kver: no headers on the host (/lib/modules/$kver/build): run make setup"
	fi
	log "$kver: ZFS $version from $suite's contrib into $dest (~7.5 min on 2 cores)"
	rm -rf "$dest" && mkdir -p "$dest/modules" "$dest/root"
	# apt downloads as _apt, who cannot enter a 0700 directory.
	tmp=$(mktemp -d /tmp/wpstat-zfs.XXXXXX)
	chown _apt "$tmp" 2>/dev/null || true
	(cd "$tmp" && "$kernels" extra apt "zfs-$suite" apt-get download -qq \
		"zfs-dkms=$version" "zfsutils-linux=$version" "libzfs*linux=$version" \
		"libzpool*linux=$version" "libnvpair*linux=$version" \
		"libuutil*linux=$version" >/dev/null) ||
		{ rm -rf "$tmp"; die "$kver: downloading ZFS $version from $suite failed"; }
	if [ -n "$root" ]; then
		mkdir "$tmp/libs" && chown _apt "$tmp/libs" 2>/dev/null || true
		: >"$tmp/no-status"
		(cd "$tmp/libs" && "$kernels" extra apt "$suite" apt-get \
			-o Dir::State::status="$tmp/no-status" download -qq \
			$(runtime_libs "$suite" "$tmp") >/dev/null) ||
			{ rm -rf "$tmp"; die "$kver: downloading $suite's libraries for ZFS failed"; }
		for f in "$tmp"/libs/*.deb; do dpkg-deb -x "$f" "$dest/root"; done
	fi
	for f in "$tmp"/*.deb; do
		case $f in
		*/zfs-dkms_*) dpkg-deb -x "$f" "$tmp/dkms" ;;
		*) dpkg-deb -x "$f" "$dest/root" ;;
		esac
	done
	[ -z "$root" ] || write_wrappers "$dest"
	upstream=${version%%-*}
	src=$tmp/dkms/usr/src/zfs-$upstream
	[ -x "$src/configure" ] || die "$kver: no sources in zfs-dkms $version"
	if [ -n "$root" ]; then
		run=("$top/scripts/vm/chroot-run.sh" "$root" --bind "$tmp" --bind "$dest" --)
		# What zfs-dkms depends on to build, beyond the headers setup
		# installed: 2.0.3's configure reads mmzone.h's enums with a
		# Perl script that needs more than perl-base (Getopt::Std).
		"${run[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends perl file >"$dest/apt.log" 2>&1 ||
			{ tail -n 20 "$dest/apt.log" >&2; rm -rf "$tmp"; die "$kver: installing perl in $root failed"; }
	fi
	# As dkms.conf does: the kernel's source tree where it is apart from
	# its build tree (Debian's -common headers), else the build tree.
	# (Asked inside the chroot: bullseye's links are absolute.)
	linux=/lib/modules/$kver/source
	"${run[@]}" test -e "$linux" || linux=/lib/modules/$kver/build
	if ! "${run[@]}" sh -c 'cd "$1" &&
		./configure --disable-dependency-tracking --prefix=/usr --with-config=kernel \
			--with-linux="$2" --with-linux-obj="/lib/modules/$3/build" \
			>"$4/configure.log" 2>&1 &&
		make -j"$5" >"$4/make.log" 2>&1' sh "$src" "$linux" "$kver" "$dest" "$(nproc)"; then
		tail -n 20 "$dest/configure.log" "$dest/make.log" >&2 2>/dev/null || true
		rm -rf "$tmp"
		die "$kver: building ZFS $version failed (logs in $dest)"
	fi
	find "$src/module" -name '*.ko' -exec cp {} "$dest/modules/" \;
	# As DKMS does: 105 MiB of zfs.ko is debug information.
	strip --strip-debug "$dest/modules/"*.ko
	[ -f "$dest/modules/zfs.ko" ] && [ -f "$dest/modules/spl.ko" ] ||
		die "$kver: ZFS $version built no zfs.ko and spl.ko"
	rm -rf "$tmp"
	printf 'version %s\nsuite %s\nbuilt %s\n' "$version" "$suite" "$(date -u +%F)" >"$dest/built"
	log "$kver: ZFS $version built in $((SECONDS - t0)) s"
}

case ${1:-} in
plan)
	shift
	[ $# -gt 0 ] || set -- $("$kernels" all)
	plan "$@"
	;;
dir)
	[ $# = 2 ] || die "usage: $0 dir KVER"
	suite=$(zfs_suite "$2") || exit 2
	case $suite in
	not-yet*) echo "ZFS not yet on $2: ${suite#not-yet }" >&2; exit 1 ;;
	esac
	cached_dir "$2" || { echo "no ZFS build for $2 in $cache: run make setup-zfs" >&2; exit 1; }
	;;
cache) echo "$cache" ;;
-*) die "usage: $0 [KVER...] | plan [KVER...] | dir KVER | cache" ;;
*)
	[ $# -gt 0 ] || set -- $("$kernels" all)
	[ $# -gt 0 ] || die "no kernel set up: run make setup first"
	plan "$@" | while read -r kver suite rest; do
		case $suite in
		not-yet) log "$kver: not yet: $rest" ;;
		*)
			[ -n "$rest" ] || die "$kver: no zfs-dkms in $suite's contrib"
			build "$kver" "$suite" "$rest"
			;;
		esac
	done
	;;
esac
