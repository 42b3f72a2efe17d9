#!/usr/bin/env bash
# Resolve the Debian kernel versions wpstat supports, from apt's lists or from
# what is installed.  Sourced by setup.sh, the Makefile and the QEMU runner, so
# that no point release is hard-coded anywhere.
#
#   kernels.sh available   newest 6.1 and 6.12 amd64 kernels that have headers
#   kernels.sh installed   supported kernels with image + headers installed
#   kernels.sh flavours [available|installed]
#                          the newest 6.12 cloud and rt kernels (make
#                          check-flavours), default: installed
#
# Extra kernels come from other Debian suites: bullseye's 5.10, trixie's 6.12
# and sid's newest.  They are never installed on the host: setup.sh stages
# each image and modules under build/kernels/KVER and its headers and
# compiler in a debootstrap chroot build/chroot/SUITE (scripts/vm/kbuild.sh
# builds there).  Their apt lists are the project's own, under
# build/apt/SUITE, never the host's sources.
#
#   kernels.sh extra suites            the suites extra kernels come from
#   kernels.sh extra available [SUITE] newest kernel with headers of each
#                                      suite (or of one), from build/apt
#   kernels.sh extra installed         the staged extra kernels whose headers
#                                      are in their chroot, one per suite
#   kernels.sh extra sources SUITE     the suite's sources.list lines
#   kernels.sh extra apt SUITE apt-get|apt-cache ARGS...
#                                      run apt with the suite's own config
#                                      (zfs-SUITE: that suite's contrib)
#   kernels.sh all                     installed + extra installed, by version
#   kernels.sh image KVER              the image to boot: /boot/vmlinuz-KVER
#                                      or a staged one; fails if neither
#   kernels.sh chroot KVER             the chroot that builds for KVER, or
#                                      nothing when the host has its headers

set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
mirror=http://deb.debian.org/debian
security=http://deb.debian.org/debian-security

# Newest kernel whose "linux-headers-<kver>" name matches a pattern and
# whose image and headers both have an installation candidate.  After a
# point release the archive can carry the headers and the unsigned image a
# day before the signed linux-image-<kver> (6.1.0-57, November 2026): that
# kernel cannot be installed yet, so the one before it is the newest.
# APT: the apt-cache to ask (the host's, or a suite's own configuration).
newest_installable() {
	local pattern=$1 kvers installable kver
	shift
	kvers=$("$@" search --names-only "^linux-headers-${pattern}\$" 2>/dev/null |
		awk '{print $1}' | sed 's/^linux-headers-//' | sort -rV)
	[ -n "$kvers" ] || return 0
	# One policy call for all of them: "pkg:" then "  Candidate: ver".
	installable=$("$@" policy $(for kver in $kvers; do echo "linux-image-$kver linux-headers-$kver"; done) 2>/dev/null |
		awk '/^[^ ]/ { p = $1; sub(/:$/, "", p) }
		     /^ *Candidate:/ && $2 != "(none)" { ok[p] = 1 }
		     END { for (p in ok) print p }')
	for kver in $kvers; do
		grep -qx "linux-image-$kver" <<<"$installable" &&
			grep -qx "linux-headers-$kver" <<<"$installable" &&
			{ echo "$kver"; return 0; }
	done
	return 0
}

newest_with_headers() {
	newest_installable "$1" apt-cache
}

available() {
	newest_with_headers '6\.1\.0-[0-9]+-amd64'
	newest_with_headers '6\.12\.[0-9]+\+deb[0-9]+-amd64'
}

installed() {
	local kver
	for kver in $(ls /boot 2>/dev/null | sed -n 's/^vmlinuz-//p' | sort -V); do
		case $kver in
		6.1.0-*-amd64 | 6.12.*-amd64) ;;
		*) continue ;;
		esac
		case $kver in *-rt-amd64 | *-cloud-amd64) continue ;; esac
		[ -e "/lib/modules/$kver/build/Makefile" ] || continue
		echo "$kver"
	done
}

# Debian's other 6.12 flavours, tested by make check-flavours only.
flavours_available() {
	newest_with_headers '6\.12\.[0-9]+\+deb[0-9]+-cloud-amd64'
	newest_with_headers '6\.12\.[0-9]+\+deb[0-9]+-rt-amd64'
}

flavours_installed() {
	local flavour kver
	for flavour in cloud rt; do
		for kver in $(ls /boot 2>/dev/null | sed -n "s/^vmlinuz-\(6\.12\..*-$flavour-amd64\)\$/\1/p" |
			sort -rV); do
			[ -e "/lib/modules/$kver/build/Makefile" ] || continue
			echo "$kver"
			break
		done
	done
}

# Extra kernels: one per suite.  sid's is whatever series sid ships (7.2
# when this was written): sid keeps no older series, so pinning one would
# break a fresh setup at sid's next upload.
extra_suites="bullseye trixie sid"

extra_pattern() {
	case $1 in
	bullseye) echo '5\.10\.0-[0-9]+-amd64' ;;
	trixie) echo '6\.12\.[0-9]+\+deb13-amd64' ;;
	sid) echo '[0-9]+\.[0-9]+\.[0-9]+\+deb[0-9]+-amd64' ;;
	zfs-*) extra_sources "$1" >/dev/null ;;
	*) echo "kernels.sh: unknown suite '$1'" >&2; return 2 ;;
	esac
}

# Kernel fixes reach bullseye (LTS) and trixie through their security
# suites first; sid has none.
extra_sources() {
	case $1 in
	bullseye | trixie)
		echo "deb $mirror $1 main"
		echo "deb $mirror $1-updates main"
		echo "deb $security $1-security main"
		;;
	sid) echo "deb $mirror sid main" ;;
	# ZFS (scripts/zfs/setup-zfs.sh): contrib of the suite whose ZFS
	# goes with a kernel, alone, so that its version is apt's candidate.
	zfs-bullseye | zfs-bookworm | zfs-bookworm-backports | zfs-trixie | zfs-sid)
		echo "deb $mirror ${1#zfs-} contrib" ;;
	*) echo "kernels.sh: unknown suite '$1'" >&2; return 2 ;;
	esac
}

# apt with a configuration of the project's own: sources, lists and caches
# under build/apt/SUITE; the host's sources and state stay untouched, and
# signatures are checked against the host's Debian keyring, plus the newer
# one setup.sh stages in build/apt/keyrings when the host's lacks a key.
extra_apt() {
	local suite=$1 d=$top/build/apt/$1 keyrings=/usr/share/keyrings/debian-archive-keyring.gpg
	shift
	[ ! -f "$top/build/apt/keyrings/debian-archive-keyring.gpg" ] ||
		keyrings+=",$top/build/apt/keyrings/debian-archive-keyring.gpg"
	mkdir -p "$d/lists/partial" "$d/cache/archives/partial" "$d/sources.list.d"
	extra_sources "$suite" | sed "s|^deb |deb [signed-by=$keyrings] |" >"$d/sources.list.new"
	if cmp -s "$d/sources.list.new" "$d/sources.list"; then
		rm "$d/sources.list.new"
	else
		mv "$d/sources.list.new" "$d/sources.list"
	fi
	# Only the Packages indexes: no translations, no DEP-11 (appstream).
	"$@" -o Dir::Etc::SourceList="$d/sources.list" \
		-o Dir::Etc::SourceParts="$d/sources.list.d" \
		-o Dir::State::Lists="$d/lists" -o Dir::Cache="$d/cache" \
		-o Acquire::Languages=none \
		-o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false \
		-o Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false \
		-o Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false \
		-o Acquire::IndexTargets::deb::DEP-11-icons-hidpi::DefaultEnabled=false
}

extra_available() {
	local suite pattern
	for suite in ${1:-$extra_suites}; do
		pattern=$(extra_pattern "$suite")
		[ -d "$top/build/apt/$suite/lists" ] || continue
		newest_installable "$pattern" extra_apt "$suite" apt-cache
	done
}

# The image setup.sh staged: /boot/vmlinuz-KVER in the package up to 6.12,
# /usr/lib/modules/KVER/vmlinuz since (7.2).
staged_image() {
	local k=$top/build/kernels/$1 f
	for f in "$k/boot/vmlinuz-$1" "$k/usr/lib/modules/$1/vmlinuz" "$k/lib/modules/$1/vmlinuz"; do
		[ -f "$f" ] && { echo "$f"; return 0; }
	done
	return 1
}

# A staged kernel is usable once its image is there and its headers are in
# the chroot of its suite (build/kernels/KVER/suite).
extra_installed() {
	local suite kver
	for suite in $extra_suites; do
		for kver in $(ls "$top/build/kernels" 2>/dev/null | sort -rV); do
			[ "$(cat "$top/build/kernels/$kver/suite" 2>/dev/null)" = "$suite" ] || continue
			staged_image "$kver" >/dev/null || continue
			[ -f "$top/build/chroot/$suite/usr/src/linux-headers-$kver/Makefile" ] || continue
			echo "$kver"
			break
		done
	done | sort -V
}

extra_chroot() {
	local suite
	[ ! -e "/lib/modules/$1/build/Makefile" ] || return 0
	suite=$(cat "$top/build/kernels/$1/suite" 2>/dev/null) || return 0
	echo "$top/build/chroot/$suite"
}

case ${1:-installed} in
available) available ;;
installed) installed ;;
flavours)
	case ${2:-installed} in
	available) flavours_available ;;
	installed) flavours_installed ;;
	*) echo "usage: $0 flavours [available|installed]" >&2; exit 2 ;;
	esac
	;;
extra)
	case ${2:-} in
	suites) echo $extra_suites ;;
	available) extra_available "${3:-}" ;;
	installed) extra_installed ;;
	sources) extra_sources "${3:?suite}" ;;
	apt) extra_pattern "${3:?suite}" >/dev/null; extra_apt "$3" "${@:4}" ;;
	*) echo "usage: $0 extra suites|available [SUITE]|installed|sources SUITE|apt SUITE CMD..." >&2; exit 2 ;;
	esac
	;;
all) { installed; extra_installed; } | sort -V ;;
image)
	kver=${2:?kver}
	if [ -e "/boot/vmlinuz-$kver" ]; then
		echo "/boot/vmlinuz-$kver"
	else
		staged_image "$kver"
	fi
	;;
chroot) extra_chroot "${2:?kver}" ;;
*)
	echo "usage: $0 available|installed|flavours [available|installed]|extra ...|all|image KVER|chroot KVER" >&2
	exit 2
	;;
esac
