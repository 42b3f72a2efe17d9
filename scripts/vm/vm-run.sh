#!/usr/bin/env bash
# Boot a Debian kernel under QEMU (virtme-ng, TCG), load the wpstat module
# built for it, run a command inside, and bring the results back.
#
#   scripts/vm/vm-run.sh [--kver KVER | --kernel-dir DIR] [--no-load] [--results DIR]
#                     [--memory SIZE] [--cpus N] -- COMMAND [ARGS...]
#
# --kernel-dir boots a built kernel tree (the debug kernel of
# scripts/check/debug-kernel.sh) instead of /boot/vmlinuz-KVER, with its modules.
# --kver also takes an extra kernel staged under build/kernels by setup.sh.
# The guest sees the host root read-only over 9p; it may write only below
# the results directory.  The command's exit status is returned, and any
# kernel BUG/WARNING/Oops/lockdep/KASAN report in the guest's log makes the
# run fail regardless.  WPSTAT_VM_VERBOSE=1 also shows the guest console
# (kernel messages as they happen: for hangs); WPSTAT_VM_TIMEOUT bounds a
# run in seconds (default 1800); WPSTAT_VM_QEMU_OPTS adds QEMU options
# (make bench: -icount).  WPSTAT_STRESS, WPSTAT_FUZZ_SEED,
# WPSTAT_RELIAB_CYCLES, WPSTAT_SUITE_SET, WPSTAT_SHARD, WPSTAT_HANG_SECS,
# WPSTAT_ZFS_CACHE (make setup-zfs's builds), WPSTAT_KSFT_ARGS,
# WPSTAT_BATS_ARGS and WPSTAT_BROKER_SECS/_THREADS (wpstat_broker's soak),
# when not empty, and WPSTAT_TIMING_SUITES and WPSTAT_SKIP_SUITES, when set (empty:
# no suites), are passed on to the command in the guest.

set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
kver=
kdir=
load=1
results=
memory=2G
cpus=2

usage() {
	sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--kver) kver=$2; shift 2 ;;
	--kernel-dir) kdir=$2; shift 2 ;;
	--no-load) load=0; shift ;;
	--results) results=$2; shift 2 ;;
	--memory) memory=$2; shift 2 ;;
	--cpus) cpus=$2; shift 2 ;;
	--) shift; break ;;
	-h | --help) usage ;;
	*) echo "vm-run: unknown option '$1'" >&2; usage ;;
	esac
done
[ $# -gt 0 ] || { echo "vm-run: no command given" >&2; usage; }

if [ -n "$kdir" ]; then
	# A built tree: vng boots its bzImage with the modules of its
	# .virtme_mods (made by scripts/check/debug-kernel.sh).
	[ -f "$kdir/arch/x86/boot/bzImage" ] && [ -f "$kdir/include/config/kernel.release" ] ||
		{ echo "vm-run: $kdir is not a built kernel tree" >&2; exit 2; }
	kdir=$(cd "$kdir" && pwd)
	kver=$(cat "$kdir/include/config/kernel.release")
elif [ -z "$kver" ]; then
	kver=$("$top/scripts/vm/kernels.sh" installed | grep '^6\.12\.' | tail -n 1)
fi
# /boot/vmlinuz-KVER, or an extra kernel staged under build/kernels: vng
# finds its modules beside the image.
kimg=$kdir
[ -n "$kimg" ] || kimg=$("$top/scripts/vm/kernels.sh" image "$kver") ||
	{ echo "vm-run: no /boot/vmlinuz-$kver nor a staged $kver; run make setup" >&2; exit 2; }
module=$top/build/kmod/$kver/wpstat.ko
if [ $load = 1 ] && [ ! -f "$module" ]; then
	echo "vm-run: $module not built; run make build" >&2
	exit 2
fi
vng=$top/.venv/bin/vng
[ -x "$vng" ] || { echo "vm-run: virtme-ng missing; run make setup" >&2; exit 2; }

[ -n "$results" ] || results=$(mktemp -d /tmp/wpstat-vm.XXXXXX)
mkdir -p "$results"
results=$(cd "$results" && pwd)
rm -f "$results/rc" "$results/dmesg.txt"

# The command is handed over in a file so no quoting survives two shells.
{
	WPSTAT_ZFS_CACHE=$("$top/scripts/zfs/setup-zfs.sh" cache)
	# The guest does not inherit the host's environment: what its scripts
	# read is handed over here (WPSTAT_*_ARGS: guest-check.sh's filters).
	for v in WPSTAT_STRESS WPSTAT_FUZZ_SEED WPSTAT_RELIAB_CYCLES WPSTAT_SUITE_SET \
		WPSTAT_SHARD WPSTAT_HANG_SECS WPSTAT_ZFS_CACHE WPSTAT_KSFT_ARGS WPSTAT_BATS_ARGS \
		WPSTAT_BROKER_SECS WPSTAT_BROKER_THREADS WPSTAT_BROKER_MIN_FILES; do
		[ -z "${!v:-}" ] || printf '%s=%q ' "$v" "${!v}"
	done
	# scripts/check/guest-check.sh's suite lists: empty is a list.
	for v in WPSTAT_TIMING_SUITES WPSTAT_SKIP_SUITES; do
		[ -z "${!v+set}" ] || printf '%s=%q ' "$v" "${!v}"
	done
	printf '%q ' "$@"
} >"$results/cmd"

export PATH=$top/.venv/bin:$PATH
# A kernel without 9p (Debian's cloud flavour) boots on a virtio-fs root:
# vng needs a Rust-style virtiofsd; without one, QEMU's C one through
# scripts/vm/virtiofsd-c.
config=/boot/config-$kver
if [ -z "$kdir" ] && [ -f "$config" ] && ! grep -Eq '^CONFIG_NET_9P_VIRTIO=[ym]' "$config" &&
   grep -Eq '^CONFIG_VIRTIO_FS=[ym]' "$config" &&
   ! { command -v virtiofsd >/dev/null && virtiofsd --help 2>&1 | grep -q -- --shared-dir; }; then
	export PATH=$top/scripts/vm/virtiofsd-c:$PATH
	export WPSTAT_VIRTIOFSD_LOG=$results/virtiofsd.log
fi
# Single-threaded TCG: with one host thread per vCPU (QEMU 7.2's default),
# a vCPU kept executing a stale int3 that text_poke_bp() had already
# removed when a kprobe on an ftrace site was unregistered, and both vCPUs
# spun in the int3 handler forever (soft lockup at the probed function).
# Guest concurrency is unchanged; vCPUs interleave on one host thread.
set +e
timeout --kill-after=30 "${WPSTAT_VM_TIMEOUT:-1800}" \
	"$vng" --run "$kimg" --disable-kvm \
	--memory "$memory" --cpus "$cpus" --rwdir "$results" \
	${WPSTAT_VM_VERBOSE:+--verbose} --qemu-opts="-accel tcg,thread=single${WPSTAT_VM_QEMU_OPTS:+ $WPSTAT_VM_QEMU_OPTS}" \
	--exec "bash $top/scripts/vm/guest-run.sh $results $load $module"
vng_rc=$?
set -e

rc=$(cat "$results/rc" 2>/dev/null || echo "")
if [ -z "$rc" ]; then
	echo "vm-run: guest did not finish (vng exit $vng_rc)" >&2
	rc=125
fi
if [ -f "$results/dmesg.txt" ]; then
	# kernel-problems.ere, one line (grep -f takes every line, even an
	# empty one, as a pattern), is shared with the guest's per-suite scans.
	# lockdep's reports start with WARNING: or BUG:; "lockdep is turned
	# off" follows them, while a bare "lockdep" would match the boot line
	# of a lockdep kernel, "RCU lockdep checking is enabled.".  Not the
	# guest init's own warnings in the log ("virtme-ng-init: WARNING:
	# failed to run: "ip"" on a host without iproute2): user space's.
	if grep -E -n -f "$top/scripts/vm/kernel-problems.ere" "$results/dmesg.txt" |
		grep -v '\] virtme-ng-init: ' >"$results/kernel-problems.txt"; then
		echo "vm-run: kernel reported problems on $kver:" >&2
		head -n 40 "$results/kernel-problems.txt" >&2
		[ "$rc" != 0 ] || rc=124
	fi
else
	echo "vm-run: no kernel log came back from the guest" >&2
	[ "$rc" != 0 ] || rc=125
fi
exit "$rc"
