#!/usr/bin/env bash
# Runs inside the guest (see vm-run.sh): load the module, run the command,
# unload, and leave rc and the kernel log in the results directory.
results=$1
load=$2
module=$3
top=$(cd "$(dirname "$0")/.." && pwd)

export PATH=$top/build/bin:$top/.venv/bin:/usr/sbin:/usr/bin:/sbin:/bin
export WPSTAT_TOP=$top WPSTAT_RESULTS=$results WPSTAT_MODULE=$module
mount -t debugfs none /sys/kernel/debug 2>/dev/null
# A live copy of the kernel log, for when the guest hangs and never gets
# to the final dmesg below.
dmesg -w >"$results/dmesg-live.txt" 2>&1 &
echo 60 >/proc/sys/kernel/hung_task_timeout_secs 2>/dev/null

rc=0
if [ "$load" = 1 ]; then
	insmod "$module" || rc=126
fi
if [ $rc = 0 ]; then
	cd "$results" && eval "$(cat "$results/cmd")"
	rc=$?
fi
if [ "$load" = 1 ] && grep -q '^wpstat ' /proc/modules; then
	rmmod wpstat || { echo "guest-run: rmmod wpstat failed" >&2; [ $rc != 0 ] || rc=1; }
fi
dmesg >"$results/dmesg.txt"
echo $rc >"$results/rc"
sync
