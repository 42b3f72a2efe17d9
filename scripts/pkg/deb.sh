#!/usr/bin/env bash
# make deb: wpstat's Debian packages from this checkout, with
# dpkg-buildpackage -us -uc -b, then lintian on the .changes (no error, no
# warning, or this fails).
#
#   scripts/pkg/deb.sh [--out DIR] [--version VERSION] [--chroot SUITE]
#                      [--rev REV | --from DIR] [--no-lintian]
#
# The checkout's files (tracked and untracked, as git status sees them) are
# copied to DIR/wpstat-VERSION, which is built, so the checkout stays clean
# and dpkg-buildpackage's output (wpstat-dkms_VERSION_all.deb,
# wpstat_VERSION_ARCH.deb, .buildinfo, .changes) lands in DIR (default
# build/deb).  Two builds of the same files give the same .debs.
#
# --rev builds a commit's files instead of the working tree's
# (WPSTAT_PKG_REV in scripts/pkg/test.sh); --from, a copy made before
# (the package test builds its three from one copy, so that an edit
# meanwhile cannot tell two builds apart).
# --version adds a changelog entry for VERSION to the copy (the package
# test's newer version), dated one second after the current top entry.
# --chroot builds inside setup.sh's build chroot of SUITE
# (build/chroot/SUITE, with its build dependencies installed there): the
# tools then link against that suite's libraries, as bullseye needs.

set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/deb
version=
suite=
rev=
from=
lintian=1
die() { printf 'deb: %s\n' "$*" >&2; exit 1; }

while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2; shift 2 ;;
	--version) version=$2; shift 2 ;;
	--chroot) suite=$2; shift 2 ;;
	--rev) rev=$2; shift 2 ;;
	--from) from=$(cd "$2" && pwd) || die "no directory $2"; shift 2 ;;
	--no-lintian) lintian=0; shift ;;
	*) die "usage: $0 [--out DIR] [--version VERSION] [--chroot SUITE] [--rev REV | --from DIR] [--no-lintian]" ;;
	esac
done

command -v dpkg-buildpackage >/dev/null || die "dpkg-buildpackage missing: make setup (dpkg-dev, debhelper, dh-dkms)"
[ $lintian = 0 ] || command -v lintian >/dev/null || die "lintian missing: make setup"
changelog_version() { sed -n '1s/^[^ ]* .\([^ ]*\). .*/\1/p' "$1"; }
if [ -n "$rev" ]; then
	current=$(git -C "$top" show "$rev:debian/changelog" | changelog_version /dev/stdin)
elif [ -n "$from" ]; then
	current=$(changelog_version "$from/debian/changelog")
else
	current=$(changelog_version "$top/debian/changelog")
fi
[ -n "$current" ] || die "no version in debian/changelog"
version=${version:-$current}
mkdir -p "$out"
out=$(cd "$out" && pwd)
src=$out/wpstat-$version

rm -rf "$src"
mkdir -p "$src"
if [ -n "$rev" ]; then
	git -C "$top" archive --format=tar "$rev" | tar -x -C "$src" || die "git archive $rev failed"
elif [ -n "$from" ]; then
	cp -a "$from/." "$src/" || die "copying $from to $src failed"
else
	# A file deleted but not yet committed is still in git's list: skip it.
	(cd "$top" && git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do [ ! -e "$f" ] || printf '%s\0' "$f"; done |
		xargs -0 cp -P --parents -t "$src") || die "copying the checkout to $src failed"
fi
if [ "$version" != "$current" ]; then
	date=$(sed -n 's/^ -- .*>  //p' "$src/debian/changelog" | head -n 1)
	date=$(date -R -u -d "@$(($(date -d "$date" +%s) + 1))")
	{
		printf 'wpstat (%s) unstable; urgency=medium\n\n' "$version"
		printf '  * A newer version, built by the package test.\n\n'
		printf ' -- %s  %s\n\n' "$(sed -n 's/^ -- \(.*>\)  .*/\1/p' "$src/debian/changelog" | head -n 1)" "$date"
		cat "$src/debian/changelog"
	} >"$src/changelog.new"
	mv "$src/changelog.new" "$src/debian/changelog"
fi
[ "$(changelog_version "$src/debian/changelog")" = "$version" ] || die "changelog of $src is not at $version"

rm -f "$out"/wpstat*_"$version"_*.deb "$out"/wpstat_"$version"_*.changes "$out"/wpstat_"$version"_*.buildinfo
log=$out/wpstat_$version.build.log
build=(dpkg-buildpackage -us -uc -b)
if [ -n "$suite" ]; then
	root=$top/build/chroot/$suite
	[ -x "$root/usr/bin/env" ] || die "no build chroot $root (make setup)"
	deps=(build-essential debhelper dkms libkmod-dev pkgconf dpkg-dev)
	if [ "$("$top/scripts/vm/chroot-run.sh" "$root" -- dpkg-query -W -f '${Status}\n' "${deps[@]}" 2>/dev/null |
		grep -c '^install ok installed$')" != ${#deps[@]} ]; then
		"$top/scripts/vm/chroot-run.sh" "$root" -- apt-get update -qq >/dev/null
		"$top/scripts/vm/chroot-run.sh" "$root" -- env DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq --no-install-recommends "${deps[@]}" >"$log" 2>&1 ||
			{ tail -n 20 "$log" >&2; die "$suite: installing the build dependencies failed"; }
		"$top/scripts/vm/chroot-run.sh" "$root" -- apt-get clean
	fi
	build=("$top/scripts/vm/chroot-run.sh" "$root" --bind "$out" -- bash -c "cd '$src' && ${build[*]}")
fi
if ! (cd "$src" && "${build[@]}") >"$log" 2>&1; then
	tail -n 30 "$log" >&2
	die "dpkg-buildpackage failed (log: $log)"
fi
changes=$(ls "$out"/wpstat_"$version"_*.changes)
if [ $lintian = 1 ]; then
	# Any error or warning fails; info tags are shown, not fatal.
	rc=0
	lintian --fail-on error,warning --display-info "$changes" >"$out/lintian.txt" 2>&1 || rc=$?
	sed -i '/^running with root privileges/d' "$out/lintian.txt"
	sed 's/^/deb: lintian: /' "$out/lintian.txt" >&2
	[ $rc = 0 ] || die "lintian reports errors or warnings on $changes (exit $rc)"
fi
ls "$out"/wpstat*_"$version"_*.deb
