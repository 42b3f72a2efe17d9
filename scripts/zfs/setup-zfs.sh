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
#              (scripts/zfs/guest-zfs.sh)
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
# REASON".  The guest's root is the host's (bookworm): zpool and zfs run
# there only when built against bookworm's libraries.
zfs_suite() {
	case $1 in
	6.1.0-*-amd64) echo bookworm ;;
	6.12.*+deb12-amd64) echo bookworm-backports ;;
	5.10.*)
		echo "not-yet bullseye's zfsutils-linux 2.0.3 needs libssl1.1 and bullseye's libraries, which the guest's root (the host's bookworm) lacks; running it from the bullseye chroot inside the guest is not built yet" ;;
	6.12.*+deb13-amd64)
		echo "not-yet trixie's zfsutils-linux needs trixie's glibc, newer than the guest's root (the host's bookworm); running it from the trixie chroot inside the guest is not built yet" ;;
	*+deb1[4-9]-amd64)
		echo "not-yet sid's zfsutils-linux needs sid's glibc, newer than the guest's root (the host's bookworm); running it from the sid chroot inside the guest is not built yet" ;;
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

build() {
	local kver=$1 suite=$2 version=$3 dest tmp src upstream linux t0=$SECONDS
	dest=$cache/$kver/zfs-$version
	if [ -f "$dest/built" ]; then
		log "$kver: ZFS $version ($suite) already built in $dest"
		return 0
	fi
	[ -f "/lib/modules/$kver/build/Makefile" ] ||
		die "$kver: no headers on the host (/lib/modules/$kver/build): run make setup"
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
	for f in "$tmp"/*.deb; do
		case $f in
		*/zfs-dkms_*) dpkg-deb -x "$f" "$tmp/dkms" ;;
		*) dpkg-deb -x "$f" "$dest/root" ;;
		esac
	done
	upstream=${version%%-*}
	src=$tmp/dkms/usr/src/zfs-$upstream
	[ -x "$src/configure" ] || die "$kver: no sources in zfs-dkms $version"
	# As dkms.conf does: the kernel's source tree where it is apart from
	# its build tree (Debian's -common headers), else the build tree.
	linux=/lib/modules/$kver/source
	[ -e "$linux" ] || linux=/lib/modules/$kver/build
	if ! (cd "$src" &&
		./configure --disable-dependency-tracking --prefix=/usr --with-config=kernel \
			--with-linux="$linux" --with-linux-obj="/lib/modules/$kver/build" \
			>"$dest/configure.log" 2>&1 &&
		make -j"$(nproc)" >"$dest/make.log" 2>&1); then
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
