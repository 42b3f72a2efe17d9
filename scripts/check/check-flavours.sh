#!/usr/bin/env bash
# The body of `make check-flavours`: the interface and prediction suites on
# Debian's newest 6.12 cloud and rt kernels (scripts/vm/kernels.sh
# flavours), one scripts/check/check.sh run per kernel, then one summary
# ending "N passed, N failed, N skipped".  Exit status 1 on any failure.
#
# Environment: KVERS (kernels, default: the installed flavours),
#              SUITES (default: the interface and prediction suites),
#              WPSTAT_CHECK_OUT (results, default results/check-flavours)
#
# A kernel virtme-ng cannot boot is a failure with its reason, not a skip:
# vng mounts the host's root over 9p, or over virtio-fs; the cloud kernel
# has no 9p, and vm-run.sh then gives vng QEMU's C virtiofsd through a
# shim (scripts/vm/virtiofsd-c).

set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${WPSTAT_CHECK_OUT:-$top/results/check-flavours}
kvers=$(echo ${KVERS:-$("$top/scripts/vm/kernels.sh" flavours installed)})
suites=${SUITES-ksft:wpstat_iface ksft:wpstat_levels ksft:wpstat_predict ksft:wpstat_predict_read ksft:wpstat_predict_copy bats:predictions}
# shellcheck source=scripts/check/summary.sh
. "$top/scripts/check/summary.sh"

mkdir -p "$out"

# Why vng cannot boot KVER with the host's root, or nothing.
unbootable() {
	local config=/boot/config-$1 virtiofsd
	[ -f "$config" ] || { echo "no $config"; return; }
	if grep -Eq '^CONFIG_NET_9P_VIRTIO=[ym]' "$config" &&
	   grep -Eq '^CONFIG_9P_FS=[ym]' "$config"; then
		return
	fi
	if grep -Eq '^CONFIG_VIRTIO_FS=[ym]' "$config"; then
		# vm-run.sh drives QEMU's C virtiofsd through scripts/vm/virtiofsd-c.
		[ -x /usr/lib/qemu/virtiofsd ] && return
		echo "cannot boot under virtme-ng: no 9p in this kernel (CONFIG_NET_9P unset)" \
			"and no /usr/lib/qemu/virtiofsd for its virtio-fs root"
		return
	fi
	echo "cannot boot under virtme-ng: neither 9p nor virtio-fs in this kernel"
}

[ -n "$kvers" ] || { report+=("FAIL: no cloud or rt kernel installed (scripts/setup.sh --flavours)"); fail=1; }
for k in $kvers; do
	why=$(unbootable "$k")
	if [ -n "$why" ]; then
		report+=("FAIL $k: $why")
		fail=$((fail + 1))
		continue
	fi
	echo "check-flavours: $k" >&2
	start=$(date +%s)
	KVERS=$k WPSTAT_CHECK_HOST=0 WPSTAT_CHECK_OUT=$out/$k SUITES=$suites \
		"$top/scripts/check/check.sh" >"$out/$k.summary" 2>&1
	echo "check-flavours: $k took $(($(date +%s) - start)) s" >&2
	summary_add "$out/$k.summary" "$k"
done

summary_print "wpstat check-flavours: kernels: $kvers"
