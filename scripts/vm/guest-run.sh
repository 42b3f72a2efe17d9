#!/usr/bin/env bash
# Runs inside the guest (see vm-run.sh): load the module, run the command,
# unload, and leave rc and the kernel log in the results directory.
results=$1
load=$2
module=$3
top=$(cd "$(dirname "$0")/../.." && pwd)

export PATH=$top/build/bin:$top/.venv/bin:/usr/sbin:/usr/bin:/sbin:/bin
export WPSTAT_TOP=$top WPSTAT_RESULTS=$results WPSTAT_MODULE=$module

# Tests that run the tools as an unprivileged user (nobody) use copies in a
# 0755 directory on the guest's tmpfs: the checkout may sit where other
# users cannot enter (root's home is 0700 on Debian), and the guest sees the
# host's permissions over 9p.  Without the copies such a test would prove
# only that nobody cannot reach the checkout (exit 127), not the refusal it
# is meant to show.
nobody_dir=/run/wpstat-nobody
rm -rf "$nobody_dir"
mkdir -p -m 0755 "$nobody_dir/bin"
for f in "$top"/build/bin/*; do
	[ -f "$f" ] && install -m 0755 "$f" "$nobody_dir/bin/"
done
[ ! -f "$module" ] || install -m 0644 "$module" "$nobody_dir/wpstat.ko"
export WPSTAT_NOBODY_DIR=$nobody_dir
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
