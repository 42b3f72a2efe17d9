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

set -euo pipefail

# Newest version among "linux-headers-<kver>" names matching a pattern.
newest_with_headers() {
	local pattern=$1
	apt-cache search --names-only "^linux-headers-${pattern}\$" 2>/dev/null |
		awk '{print $1}' | sed 's/^linux-headers-//' | sort -V | tail -n 1
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
*)
	echo "usage: $0 available|installed|flavours [available|installed]" >&2
	exit 2
	;;
esac
