#!/usr/bin/env bash
# make repo: a flat apt repository of wpstat's packages, for a fleet.
#
#   scripts/pkg/repo.sh [--out DIR] [--key KEYID] [DEB...]
#
# DIR (default build/repo) gets the .debs (default: build/deb's, as make
# deb left them), Packages, Packages.gz and Release (apt-ftparchive).  With
# --key, a gpg key the operator owns signs the Release file (InRelease and
# Release.gpg) and its public part is written to DIR/wpstat-archive-keyring.gpg,
# for the machines' signed-by.  Machines then use, for DIR served at URL
# (file:/srv/wpstat for a copy on the machine, or http://...):
#
#   deb [signed-by=/etc/apt/keyrings/wpstat-archive-keyring.gpg] URL ./
#
# An unsigned repository needs [trusted=yes] instead: only for a test.

set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/repo
key=
die() { printf 'repo: %s\n' "$*" >&2; exit 1; }

while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2; shift 2 ;;
	--key) key=$2; shift 2 ;;
	--) shift; break ;;
	-*) die "usage: $0 [--out DIR] [--key KEYID] [DEB...]" ;;
	*) break ;;
	esac
done
debs=("$@")
if [ ${#debs[@]} = 0 ]; then
	mapfile -t debs < <(ls "$top"/build/deb/wpstat*.deb 2>/dev/null)
	[ ${#debs[@]} -gt 0 ] || die "no packages in build/deb: run make deb first"
fi
command -v apt-ftparchive >/dev/null || die "apt-ftparchive missing (apt-get install apt-utils)"

rm -rf "$out"
mkdir -p "$out"
cp "${debs[@]}" "$out/"
cd "$out"
apt-ftparchive packages . >Packages
gzip -9n <Packages >Packages.gz
apt-ftparchive -o APT::FTPArchive::Release::Origin=wpstat \
	-o APT::FTPArchive::Release::Label=wpstat \
	-o APT::FTPArchive::Release::Description="wpstat packages" \
	release . >Release.new
mv Release.new Release
if [ -n "$key" ]; then
	gpg --batch --yes --local-user "$key" --clearsign -o InRelease Release
	gpg --batch --yes --local-user "$key" --detach-sign --armor -o Release.gpg Release
	gpg --batch --yes --export "$key" >wpstat-archive-keyring.gpg
fi
ls "$out"
