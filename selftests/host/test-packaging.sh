#!/usr/bin/env bash
# Host-side packaging tests (TAP), run by check.sh: make install/uninstall
# into a staging tree, a DKMS build in private trees for every kernel, and
# man pages that render without warnings.  Nothing outside /tmp changes.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
kvers=$(echo ${KVERS:-$("$top/scripts/vm/kernels.sh" installed)})
export KVERS=$kvers	# for make: space-separated, no newline
tmp=$(mktemp -d /tmp/wpstat-pkg.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
n=0
declare -a lines
ok() { n=$((n + 1)); lines+=("ok $n $1"); }
not_ok() { n=$((n + 1)); lines+=("not ok $n $1"); [ -z "${2:-}" ] || lines+=("# $2"); }
check() { local name=$1; shift; if "$@" >>"$tmp/log" 2>&1; then ok "$name"; else not_ok "$name" "$(tail -n 3 "$tmp/log" | tr '\n' ' ')"; fi; }

# vermagic of a (possibly compressed) module must name kernel $2.
vermagic_is() { modinfo -F vermagic "$1" | grep -q "^$2 "; }

stage=$tmp/stage
check "make install DESTDIR" make -s -C "$top" install DESTDIR="$stage" PREFIX=/usr
for k in $kvers; do
	ko=$(ls "$stage/lib/modules/$k/extra/"wpstat.ko* 2>/dev/null | head -n 1)
	check "installed module for $k has vermagic $k" vermagic_is "${ko:-/nonexistent}" "$k"
done
check "wpstat installed to sbin" test -x "$stage/usr/sbin/wpstat"
check "wpload installed to bin" test -x "$stage/usr/bin/wpload"
check "man pages installed" test -f "$stage/usr/share/man/man8/wpstat.8" -a -f "$stage/usr/share/man/man1/wpload.1"
check "modules-load.d and modprobe.d snippets installed, every line commented (off by default)" \
	bash -c "for f in '$stage/etc/modules-load.d/wpstat.conf' '$stage/etc/modprobe.d/wpstat.conf'; do \
		test -f \$f && ! grep -v '^#' \$f | grep -q . || exit 1; done"
unit=$stage/usr/lib/systemd/system/wpstat-export.service
check "wpstat-export.service installed, naming the installed wpstat" \
	grep -q '^ExecStart=/usr/sbin/wpstat export ' "$unit"
# verify checks that ExecStart exists: point it at the built binary.
if command -v systemd-analyze >/dev/null; then
	sed "s|^ExecStart=/usr/sbin/wpstat|ExecStart=$top/build/bin/wpstat|" "$unit" >"$tmp/wpstat-export.service"
	check "wpstat-export.service: systemd-analyze verify prints nothing" \
		bash -c "out=\$(SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no '$tmp/wpstat-export.service' 2>&1) && [ -z \"\$out\" ] || { echo \"\$out\"; exit 1; }"
else
	ok "wpstat-export.service: systemd-analyze verify # SKIP no systemd-analyze on this host"
fi
echo '# edited' >"$stage/etc/modprobe.d/wpstat.conf"
check "make install keeps an edited modprobe.d snippet" \
	bash -c "make -s -C '$top' install DESTDIR='$stage' PREFIX=/usr && grep -qx '# edited' '$stage/etc/modprobe.d/wpstat.conf'"
check "make uninstall DESTDIR removes every file" \
	bash -c "make -s -C '$top' uninstall DESTDIR='$stage' PREFIX=/usr && \
		[ -z \"\$(find '$stage' -type f -name 'wp*')\" ]"

# DKMS in private trees: the system's /var/lib/dkms is not touched.  The
# version is debian/changelog's, written over dkms.conf's #MODULE_VERSION#
# as the package's dh_dkms -V does.
v=$(sed -n '1s/^[^ ]* .\([^ ]*\). .*/\1/p' "$top/debian/changelog")
src=$tmp/src dkmstree=$tmp/dkms
mkdir -p "$src/wpstat-$v" "$dkmstree"
(cd "$top" && git ls-files -z | xargs -0 cp --parents -t "$src/wpstat-$v")
sed -i "s/#MODULE_VERSION#/$v/" "$src/wpstat-$v/dkms.conf"
check "dkms add" dkms add -m wpstat -v "$v" --sourcetree "$src" --dkmstree "$dkmstree"
for k in $kvers; do
	check "dkms build for $k" dkms build -m wpstat -v "$v" -k "$k" \
		--sourcetree "$src" --dkmstree "$dkmstree"
	ko=$(ls "$dkmstree/wpstat/$v/$k/x86_64/module/"wpstat.ko* 2>/dev/null | head -n 1)
	check "dkms module for $k has vermagic $k" vermagic_is "${ko:-/nonexistent}" "$k"
	check "dkms module for $k has version $v" bash -c "[ \"\$(modinfo -F version '${ko:-/nonexistent}')\" = '$v' ]"
done

for page in "$top/docs/man/wpstat.8" "$top/docs/man/wpload.1"; do
	check "man page $(basename "$page") renders without warnings" \
		bash -c "out=\$(groff -man -Tutf8 -ww -z '$page' 2>&1) && [ -z \"\$out\" ]"
done

echo "1..$n"
printf '%s\n' "${lines[@]}"
