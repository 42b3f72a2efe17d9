#!/usr/bin/env bash
# Runs inside the debug-kernel guest (scripts/check/check-debug.sh, through
# vm-run.sh, module already loaded): the module suites of
# scripts/check/guest-check.sh, then a kmemleak pass, reported as one more TAP
# suite (kmemleak.tap) in $WPSTAT_RESULTS with the raw reports beside it.
#
#   guest-check-debug.sh [SUITE...]

set -u
top=${WPSTAT_TOP:?run through scripts/vm/vm-run.sh}
results=${WPSTAT_RESULTS:?}
kml=/sys/kernel/debug/kmemleak

# An object is reported once it stayed unreferenced and unchanged for
# kmemleak's minimum age (5 s): two scans that far apart.
kmemleak_scan() {
	echo scan >$kml
	sleep 6
	echo scan >$kml
}

# Whatever kmemleak suspects after boot is not the module's doing: scan
# and clear, so later reports hold only what the suites left behind.
if [ -w $kml ]; then
	kmemleak_scan
	echo clear >$kml
fi

bash "$top/scripts/check/guest-check.sh" "$@"

{
	echo "1..1"
	t="kmemleak after the suites and rmmod wpstat"
	if [ ! -w $kml ]; then
		echo "ok 1 $t # SKIP no $kml"
	else
		# While the module is loaded its symbols resolve: what it lost
		# during the suites shows as wpstat_* frames here.
		kmemleak_scan
		cat $kml >"$results/kmemleak-loaded.txt"
		# What it never freed is unreferenced only once it is gone; its
		# frames then print as bare module-area addresses (0xffffffffa...
		# and up; the kernel image is at 0xffffffff8...).  guest-run.sh
		# skips its own rmmod when the module is not loaded.
		if grep -q '^wpstat ' /proc/modules && ! rmmod wpstat; then
			echo "not ok 1 $t: rmmod failed"
		else
			kmemleak_scan
			cat $kml >"$results/kmemleak.txt"
			n=$(grep -c '^unreferenced object' "$results/kmemleak.txt")
			mine=$(cat "$results/kmemleak-loaded.txt" "$results/kmemleak.txt" |
				awk '/^unreferenced object/ { o = $3 }
				/wpstat/ || ($1 ~ /^0x[0-9a-f]+$/ && length($1) == 18 && $1 >= "0xffffffffa0000000") { m[o] = 1 }
				END { print length(m) }')
			if [ "$n" = 0 ] && [ "$mine" = 0 ]; then
				echo "ok 1 $t: no suspected leaks"
			elif [ "$mine" != 0 ]; then
				echo "not ok 1 $t: $mine suspected leaks allocated from wpstat or an unloaded module (kmemleak*.txt)"
			else
				# Leaks whose allocation never went through a
				# module are the kernel's (reported, not counted).
				echo "ok 1 $t: $n suspected leaks, none from a module (kmemleak.txt)"
			fi
		fi
	fi
} >"$results/kmemleak.tap"
exit 0
