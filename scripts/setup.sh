#!/usr/bin/env bash
# Install what wpstat needs on a Debian 12 host, idempotently, as root:
# the QEMU/virtme-ng runner, the newest Debian 6.1 and 6.12 kernels with their
# headers, libkmod, bats, filesystem tools, and the kselftest headers and
# checkpatch taken out of Debian's linux-source package.
#
# Safe to run again: it only installs what is missing.
#
#   scripts/setup.sh [--flavours]
#
# --flavours also installs the newest 6.12 cloud and rt kernels with their
# headers (make check-flavours); plain make setup leaves them out.

set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
venv=$top/.venv
srcdir=$top/build/linux-src
log() { printf 'setup: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

flavours=0
case ${1:-} in
"") ;;
--flavours) flavours=1 ;;
*) die "usage: $0 [--flavours]" ;;
esac

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
	dmsetup util-linux dkms groff-base openjdk-17-jdk-headless bpftrace
	curl iproute2 prometheus prometheus-node-exporter liblmdb-dev lmdb-utils maven
	f2fs-tools libfuse3-dev fuse3 nfs-kernel-server"

missing=()
for p in $tools; do pkg_installed "$p" || missing+=("$p")
done

kernels=$("$top/scripts/vm/kernels.sh" installed || true)
want_kernels=()
have_61=0 have_612=0
for k in $kernels; do
	case $k in 6.1.0-*) have_61=1 ;; 6.12.*) have_612=1 ;; esac
done
if [ $have_61 = 0 ] || [ $have_612 = 0 ] || [ ${#missing[@]} -gt 0 ]; then
	refresh_lists
	for k in $("$top/scripts/vm/kernels.sh" available); do
		case $k in
		6.1.0-*) [ $have_61 = 1 ] && continue ;;
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
[ -n "$("$top/scripts/vm/kernels.sh" installed)" ] || die "no supported kernel installed"

# virtme-ng into a project-local venv; vng expects its helpers on PATH.
if [ ! -x "$venv/bin/vng" ]; then
	log "installing virtme-ng into $venv"
	python3 -m venv "$venv"
	"$venv/bin/pip" install -q --disable-pip-version-check 'virtme-ng>=1.30'
fi
# The bats suites validate `wpstat show --format prometheus` with a real parser.
if ! "$venv/bin/python3" -c 'import prometheus_client' 2>/dev/null; then
	"$venv/bin/pip" install -q --disable-pip-version-check prometheus_client
fi

# make experiment draws its charts with matplotlib.  Its font cache is
# built here, once: building it in a TCG guest takes minutes.
if ! "$venv/bin/python3" -c 'import matplotlib' 2>/dev/null; then
	"$venv/bin/pip" install -q --disable-pip-version-check matplotlib
fi
if ! ls "$top"/build/mplconfig/fontlist-*.json >/dev/null 2>&1; then
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
log "ready: kernels $(echo $("$top/scripts/vm/kernels.sh" installed))"
if [ $flavours = 1 ]; then
	[ "$("$top/scripts/vm/kernels.sh" flavours installed | wc -l)" = 2 ] ||
		die "the 6.12 cloud and rt kernels with headers are not both installable"
	log "ready: flavours $(echo $("$top/scripts/vm/kernels.sh" flavours installed))"
fi
