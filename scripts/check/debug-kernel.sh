#!/usr/bin/env bash
# Build (once) a debug 6.12 kernel for the wpstat module suites: KASAN,
# lockdep, kmemleak, might_sleep checks, from Debian's linux-source-6.12.
#
#   scripts/check/debug-kernel.sh [--print-release | --force]
#
# The tree is build/debug-kernel/linux-source-6.12 (build/ is not
# committed); its modules are prepared for virtme-ng in the tree's
# .virtme_mods (scripts/vm/vm-run.sh --kernel-dir boots the tree).
# The config is virtme-ng's defconfig plus scripts/check/debug-kernel.config.
# The build is skipped when the bzImage exists and neither the fragment,
# the source tarball nor the compiler changed since it was made (hash
# stamp build/debug-kernel/stamp; --force rebuilds).  Always built
# with nice -n 19 and at most -j2: other QEMU guests share this host.
# The kernel release is printed on the last line of output.
# --print-release prints it without building (fails if not built yet).

set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
tarball=${WPSTAT_DEBUG_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
fragment=$top/scripts/check/debug-kernel.config
dir=$top/build/debug-kernel
tree=$dir/linux-source-6.12
stamp=$dir/stamp
log=$dir/build.log
jobs=${WPSTAT_DEBUG_JOBS:-2}
[ "$jobs" -le 2 ] || jobs=2	# never more: the host runs other guests

# Debian's kernels keep balance_dirty_pages() out of line: a kallsyms
# symbol, which wpstat's bdp probe (bdp_throttled) attaches to.  With this
# config gcc inlines it into its only caller,
# balance_dirty_pages_ratelimited_flags(), and the probe would not attach;
# keep it out of line so the debug kernel exercises the same probes.
kmake=(CFLAGS_page-writeback.o=-fno-inline-functions-called-once)

die() { echo "debug-kernel: $*" >&2; exit 1; }
say() { echo "debug-kernel: $*" >&2; }

release() { make -s -C "$tree" kernelrelease; }

force=0
case ${1:-} in
--print-release)
	[ -f "$tree/arch/x86/boot/bzImage" ] || die "not built yet: run scripts/check/debug-kernel.sh"
	release
	exit 0
	;;
--force) force=1 ;;
'') ;;
*) die "usage: $0 [--print-release | --force]" ;;
esac

[ -f "$tarball" ] || die "no $tarball: apt-get install linux-source-6.12 (scripts/setup.sh installs it)"
[ -f "$fragment" ] || die "no $fragment"
# scripts/setup.sh (make check-debug runs it first) installs what a kernel
# build needs; say so when this script is run on its own without it.
for t in gcc make bc bison flex; do
	command -v $t >/dev/null || die "'$t' missing: run scripts/setup.sh"
done
for h in /usr/include/libelf.h /usr/include/openssl/ssl.h; do
	[ -f $h ] || die "$h missing: run scripts/setup.sh"
done
configkernel=$top/.venv/bin/virtme-configkernel
[ -x "$configkernel" ] || die "virtme-ng missing in .venv: run scripts/setup.sh"

# The stamp names what the build was made from.  The tarball is hashed by
# content (a point-release upgrade keeps its name), the fragment likewise,
# and the compiler and extra make variables.
src_want=$(sha256sum <"$tarball" | cut -d' ' -f1)
want=$( {
	echo "$src_want"
	sha256sum <"$fragment"
	gcc --version | head -n 1
	printf '%s\n' "${kmake[@]}"
} | sha256sum | cut -d' ' -f1)

# The modules as virtme-ng wants them (symlinks plus depmod, with
# modules.builtin), made here rather than at boot so that the guest run
# never writes into the tree: modprobe brd/null_blk/dm-delay then works
# with parameters, and modprobe of a built-in filesystem is a no-op.
prep_mods() {
	[ -f "$tree/.virtme_mods/lib/modules/0.0.0/modules.dep" ] &&
		[ "$tree/.virtme_mods/lib/modules/0.0.0/modules.dep" -nt "$tree/modules.order" ] && return 0
	(cd "$tree" && PATH=$top/.venv/bin:$PATH virtme-prep-kdir-mods) >>"$log" 2>&1 ||
		{ tail -n 20 "$log" >&2; die "virtme-prep-kdir-mods failed; full log: $log"; }
}

if [ $force = 0 ] && [ -f "$tree/arch/x86/boot/bzImage" ] &&
	[ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
	say "up to date (stamp $stamp)"
	prep_mods
	release
	exit 0
fi

mkdir -p "$dir"
rm -f "$stamp"
start=$(date +%s)

# Re-extract only when the tarball changed: an existing tree with its
# objects makes a fragment change an incremental rebuild.
if [ ! -f "$tree/Makefile" ] || [ "$(cat "$dir/source.sha256" 2>/dev/null)" != "$src_want" ]; then
	say "extracting $tarball"
	rm -rf "$tree" "$dir/source.sha256"
	nice -n 19 tar -xJf "$tarball" -C "$dir" ||
		die "extracting $tarball failed"
	[ -f "$tree/Makefile" ] || die "$tarball did not contain linux-source-6.12/"
	echo "$src_want" >"$dir/source.sha256"
fi

say "configuring (virtme-ng defconfig + $(basename "$fragment"))"
# virtme-configkernel runs defconfig, appends virtme's needs and our
# fragment, and runs olddefconfig.  It forces DWARF debug info after the
# fragment; reapply the fragment and drop debug info (kallsyms symbolizes
# splats; DWARF would double the build time and size).
(
	cd "$tree"
	rm -f .config
	PATH=$top/.venv/bin:$PATH nice -n 19 "$configkernel" --defconfig --custom "$fragment"
	scripts/kconfig/merge_config.sh -m .config "$fragment"
	scripts/config --disable DEBUG_INFO --disable DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT \
		--disable DEBUG_INFO_DWARF4 --disable DEBUG_INFO_DWARF5 --enable DEBUG_INFO_NONE
	nice -n 19 make olddefconfig
) >"$log" 2>&1 || { tail -n 30 "$log" >&2; die "configuring failed; full log: $log"; }

# Kconfig silently drops what it cannot satisfy: check every request.
bad=0
while IFS= read -r line; do
	case $line in
	CONFIG_*=*)
		grep -qxF "$line" "$tree/.config" || {
			say "config: wanted '$line', got '$(grep -E "^(# )?${line%%=*}[= ]" "$tree/.config" || echo unset)'"
			bad=1
		}
		;;
	"# CONFIG_"*" is not set")
		opt=${line#\# }; opt=${opt%% *}
		! grep -qE "^$opt=" "$tree/.config" || { say "config: wanted $opt off, it is on"; bad=1; }
		;;
	esac
done <"$fragment"
[ $bad = 0 ] || die "the config fragment did not apply (see above); tree: $tree"

say "building with nice -n 19 make -j$jobs (log: $log); this takes a while"
nice -n 19 make -C "$tree" -j"$jobs" "${kmake[@]}" bzImage modules >>"$log" 2>&1 ||
	{ tail -n 40 "$log" >&2; die "kernel build failed; full log: $log"; }

prep_mods
echo "$want" >"$stamp"
say "built in $(( $(date +%s) - start )) s"
release
