#!/usr/bin/env bash
# make check-zfs: the ZFS suites (selftests/suites.txt, set zfs) on every
# kernel that make setup-zfs built ZFS for, one guest each, through
# scripts/check/check.sh.  A kernel ZFS is not yet ready on is listed with
# the reason; a kernel it could be built for but was not fails, naming
# make setup-zfs.  KVERS=... chooses kernels.

set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
setup_zfs=$top/scripts/zfs/setup-zfs.sh
kvers=()
missing=()
for kver in ${KVERS:-$("$top/scripts/vm/kernels.sh" all)}; do
	if why=$("$setup_zfs" dir "$kver" 2>&1 >/dev/null); then
		kvers+=("$kver")
	else
		case $why in
		"ZFS not yet"*) echo "check-zfs: $why" ;;
		"setup-zfs: no kernel"*) echo "check-zfs: ${why#setup-zfs: }" >&2; exit 2 ;;
		*) missing+=("$kver") ;;
		esac
	fi
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "check-zfs: no ZFS build for ${missing[*]} in $("$setup_zfs" cache): run make setup-zfs" >&2
	exit 2
fi
[ ${#kvers[@]} -gt 0 ] || { echo "check-zfs: no kernel to run on" >&2; exit 2; }
KVERS="${kvers[*]}" SUITES="$("$top/scripts/check/suites.sh" list zfs | xargs)" \
	WPSTAT_CHECK_HOST=0 WPSTAT_CHECK_PACKAGES=0 \
	exec "$top/scripts/check/check.sh"
