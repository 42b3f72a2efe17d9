#!/usr/bin/env bash
# Runs inside a guest booted by scripts/pkg/boot.sh, on the package test's
# root: what an operator does with the installed packages, one step per
# argument, each step's output, status and findings written under the
# results directory (/mnt/wpstat/STEP.*) for scripts/pkg/test.sh to check.
# Nothing here decides pass or fail.
#
#   guest.sh STEP...
#     version          wpstat --version
#     load             wpstat load (no path: libkmod finds it by name)
#     load-file=FILE   wpstat load --module FILE (a module kept from before
#                      an upgrade, standing for one loaded then)
#     status           wpstat status
#     demo             make demo's workload: 256 pages of a shared mapping on
#                      ext4 over a RAM disk, one store per page, msync after
#                      each of 3 passes; wpstat's counters for the file:
#                      first-write and write-protect faults, folios cleaned
#                      by msync, folio_mkclean calls, pages cleaned
#     unload           wpstat unload
set -u
res=/mnt/wpstat
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t debugfs none /sys/kernel/debug 2>/dev/null
# shellcheck source=scripts/vm/guest-lib.sh
. "$res/guest-lib.sh"

run() {	# NAME CMD...: NAME.out, NAME.err, NAME.rc
	local name=$1
	shift
	"$@" >"$res/$name.out" 2>"$res/$name.err"
	echo $? >"$res/$name.rc"
}

n=0
for step in "$@"; do
	n=$((n + 1))
	name=$(printf '%02d-%s' $n "${step%%=*}")
	case $step in
	version) run "$name" wpstat --version ;;
	load)
		run "$name" wpstat load
		cat /sys/module/wpstat/version >"$res/$name.modversion" 2>/dev/null
		;;
	load-file=*)
		run "$name" wpstat load --module "${step#load-file=}"
		cat /sys/module/wpstat/version >"$res/$name.modversion" 2>/dev/null
		;;
	status) run "$name" wpstat status ;;
	demo)
		{
			guest_ramdisks 1 64 && guest_mkfs_mount ext4 /dev/ram0 /tmp/demo &&
				guest_writeback_quiet &&
				wpload --file /tmp/demo/data --size 1M --passes 3 --sync msync --quiet &&
				wpstat show --json --resolve /tmp/demo >"$res/$name.json"
		} >"$res/$name.out" 2>"$res/$name.err"
		echo $? >"$res/$name.rc"
		for c in mkwrite_first mkwrite_wp mkclean_msync mkclean_calls mkclean_pages; do
			printf '%s ' "$(jq -r '.inodes[] | select(.path == "/tmp/demo/data") | .counters.'$c \
				"$res/$name.json" 2>/dev/null)"
		done >"$res/$name.counts"
		umount /tmp/demo && rmmod brd
		;;
	unload)
		run "$name" wpstat unload
		[ ! -d /sys/module/wpstat ]
		echo $? >"$res/$name.gone"
		;;
	*) echo "guest.sh: unknown step '$step'" >"$res/$name.err" ;;
	esac
done
dmesg >"$res/dmesg.txt"
echo done >"$res/guest-done"
sync
