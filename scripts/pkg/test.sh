#!/usr/bin/env bash
# The package test: what an operator does with wpstat's Debian packages,
# from apt-get install to apt-get purge, on a fresh root of each suite,
# booted.  One TAP file per suite, DIR/SUITE.tap; make check runs bookworm,
# make check-packages every suite.
#
#   scripts/pkg/test.sh [--out DIR] SUITE...      (default DIR results/packages)
#
# For a suite, in order (the root is scripts/pkg/root.sh's, copied; apt
# and DKMS run in it as a chroot, the guests boot its kernels with it,
# read-only, their writes going to an overlay):
#   1. make deb (lintian: no error or warning); bookworm: a second build
#      is byte-identical; a newer version (a changelog entry added) and
#      make repo of it, signed with a key made for the test.  bullseye's
#      packages are built in its build chroot (its glibc is older).
#   2. apt-get install ./wpstat-dkms_*.deb ./wpstat_*.deb: DKMS builds and
#      installs for the kernel with headers (dkms status, modinfo's version
#      and, where DKMS signs, its key); a kernel without headers (bookworm's
#      6.1) is named with the headers to install; the modprobe.d file is
#      there, the export service installed but not enabled, no
#      modules-load.d file.
#   3. bookworm: that kernel booted: wpstat load says apt install
#      wpstat-dkms and which headers.  Then its headers are installed: DKMS
#      builds for it unasked, and it boots: wpstat load (by name), the demo
#      workload's 256 first-write faults, 512 write-protect faults and 768
#      cleans, wpstat unload.
#   4. A kernel the sources cannot build for (a headers tree whose Makefile
#      fails), added as a kernel package's postinst adds one: DKMS's
#      make.log names the failure, the other kernels keep their modules,
#      the packages stay installed, nothing of wpstat for that kernel.
#   5. Upgrade: the repository as an apt source (signed-by its key),
#      apt-get update, apt-get install wpstat wpstat-dkms by name: the newer
#      version, built by DKMS.  The kernel with headers boots with the old
#      module (the one DKMS built in 2, kept) loaded, as it was when the
#      upgrade ran: wpstat load and status say the versions differ; after
#      wpstat unload and load the newer module is the one loaded; the demo
#      workload's counts; wpstat unload.
#   6. apt-get purge wpstat wpstat-dkms: nothing of wpstat left under
#      /lib/modules/*/updates, /usr/src, /var/lib/dkms, /etc or /usr (what
#      is left is listed).
# The roots are built once (build/pkgtest/roots); a run works on a copy in
# build/pkgtest/run/SUITE, removed after a run that passed
# (WPSTAT_PKG_KEEP=1 keeps it).  Logs: DIR/SUITE/.

set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/results/packages
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2; shift 2 ;;
	-*) echo "usage: $0 [--out DIR] SUITE..." >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || { echo "usage: $0 [--out DIR] SUITE..." >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)

# The packages' files, copied once (scripts/pkg/deb.sh's --from), so that
# the three builds of a suite see the same files whatever is edited
# meanwhile: the working tree's, or WPSTAT_PKG_REV's (a commit).
snapshot=$top/build/pkgtest/src.$$
trap 'rm -rf "$snapshot"' EXIT
rm -rf "$snapshot" && mkdir -p "$snapshot"
if [ -n "${WPSTAT_PKG_REV:-}" ]; then
	git -C "$top" archive --format=tar "$WPSTAT_PKG_REV" | tar -x -C "$snapshot" ||
		{ echo "pkgtest: git archive $WPSTAT_PKG_REV failed" >&2; exit 2; }
else
	(cd "$top" && git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do [ ! -e "$f" ] || printf '%s\0' "$f"; done |
		xargs -0 cp -P --parents -t "$snapshot")
fi
rev_args=(--from "$snapshot")
version=$(sed -n '1s/^[^ ]* .\([^ ]*\). .*/\1/p' "$snapshot/debian/changelog")
newer=$version+pkgtest1

# ---- TAP -------------------------------------------------------------------
n=0 failed=0
tap=
ok() { n=$((n + 1)); echo "ok $n $1" >>"$tap"; }
not_ok() {	# NAME [DIAGNOSTICS...]
	local name=$1
	shift
	n=$((n + 1)) failed=$((failed + 1))
	echo "not ok $n $name" >>"$tap"
	printf '%s\n' "$@" | sed 's/^/# /' | head -n 20 >>"$tap"
}
skip() { n=$((n + 1)); echo "ok $n $1 # SKIP $2" >>"$tap"; }
note() { echo "# $*" >>"$tap"; echo "pkgtest $suite: $*" >&2; }
# check NAME CMD...: a test that passes when CMD does; its output is the
# diagnostics otherwise.
check() {
	local name=$1 o
	shift
	if o=$("$@" 2>&1); then ok "$name"; else not_ok "$name" "$o"; fi
}
# A file contains an extended regular expression.
has() { grep -Eq -- "$2" "$1" || { echo "no /$2/ in $1:"; tail -n 8 "$1"; return 1; }; }
hasnt() { ! grep -En -- "$2" "$1" || { echo "/$2/ in $1"; return 1; }; }
is() { [ "$1" = "$2" ] || { echo "got '$1', expected '$2'"; return 1; }; }
nonempty() { [ -n "$1" ] || { echo "$2"; return 1; }; }
phase() { note "$1 ($((SECONDS - phase_t)) s)"; phase_t=$SECONDS; }

# ---- the root ----------------------------------------------------------------
in_root() { "$top/scripts/vm/chroot-run.sh" "$root" -- env DEBIAN_FRONTEND=noninteractive "$@"; }
# dkms status of wpstat VERSION for KVER says installed (2.8's "wpstat, V,
# K, arch: installed" or 3.x's "wpstat/V, K, arch: installed").
dkms_installed() {
	local o
	o=$(in_root dkms status wpstat 2>&1)
	grep -Eq "^wpstat[,/] ?$(ere "$1"), $(ere "$2"), [^:]*: installed" <<<"$o" ||
		{ echo "dkms status: $o"; return 1; }
}
ere() { sed 's/[].+*?^$()[{}|\\]/\\&/g' <<<"$1"; }
module_file() { ls "$root/lib/modules/$1/updates/dkms/"wpstat.ko* 2>/dev/null | head -n 1; }
pkg_status() { in_root dpkg-query -W -f '${Status} ${Version}' "$1" 2>&1; }
# The module's modinfo field, read with the root's own modinfo.
modinfo_field() { in_root modinfo -F "$2" "${1#"$root"}" 2>/dev/null; }
module_version_is() {
	local f
	f=$(module_file "$1")
	[ -n "$f" ] || { echo "no wpstat.ko under /lib/modules/$1/updates/dkms"; return 1; }
	is "$(modinfo_field "$f" version)" "$2"
}
# Guest step files: scripts/pkg/guest.sh's NN-STEP.*
step() { ls "$1"/[0-9][0-9]-"$2".rc 2>/dev/null | sed -n "${3:-1}p" | sed 's/\.rc$//'; }
load_by_name_re() { echo "^loaded (/usr)?/lib/modules/$(ere "$1")/updates/dkms/wpstat\.ko(\.[a-z]+)?\$"; }

boot() {	# NAME KVER STEP...: boot, and check it finished cleanly
	local name=$1 kver=$2 res=$work/results/$1
	shift 2
	local t=$SECONDS
	rm -rf "$res"
	mkdir -p "$res"
	[ ! -d "$work/results/old" ] || cp -a "$work/results/old" "$res/old"
	if "$top/scripts/pkg/boot.sh" "$root" "$kver" "$res" "$@" >"$logs/boot-$name.log" 2>&1; then
		ok "$kver boots with the root and runs: $*"
		check "$kver: no BUG, WARNING, Oops, lockdep or KASAN line in the kernel log" \
			bash -c "! [ -s '$res/kernel-problems.txt' ] || { head -n 10 '$res/kernel-problems.txt'; exit 1; }"
	else
		not_ok "$kver boots with the root and runs: $*" "$(cat "$logs/boot-$name.log")" \
			"$(tail -n 15 "$res/console.log" 2>/dev/null)"
	fi
	note "boot $name ($kver) took $((SECONDS - t)) s"
	cp -a "$res" "$logs/guest-$name" 2>/dev/null
	g=$res
}

# The demo's counts (scripts/demo/guest-demo.sh, docs/results/predictions/1.md):
# 256 pages stored to in 3 passes, msync after each: 256 first-write
# faults, 512 write-protect faults, 768 pages cleaned.  On order-0 folios
# (one folio_mkclean per page) each count is per page.  Where ext4 gives
# the file large folios (7.2) the first pass faults once per store that
# finds no PTE, and a fault maps a whole folio: fewer than 256 first-write
# faults, at least one per folio; msync cleans folios (mkclean_msync), but
# 768 pages all the same (mkclean_pages), and every page's PTE is
# write-protected and faulted again: 512 write-protect faults still.
large_folio_counts() {	# FIRST WP MSYNC CALLS PAGES
	[ "$2" = 512 ] && [ "$5" = 768 ] && [ "$3" = "$4" ] &&
		[ "$1" -ge $(($4 / 3)) ] && [ "$1" -lt 256 ] ||
		{ echo "first $1 wp $2 msync $3 calls $4 pages $5"; return 1; }
}
demo_checks() {	# DIR KVER
	local s first wp msync calls pages
	s=$(step "$1" demo)
	check "$2: demo workload ran (wpload, wpstat show)" is "$(cat "$s.rc" 2>/dev/null)" 0
	read -r first wp msync calls pages <"$s.counts" 2>/dev/null
	if [ "${calls:-}" = "${pages:-}" ]; then
		check "$2: demo counts: 256 first-write faults, 512 write-protect faults, 768 pages cleaned by msync" \
			is "${first:-} ${wp:-} ${msync:-}" "256 512 768"
	else
		check "$2: demo counts, large folios ($calls folio cleans for $pages pages): 512 write-protect faults, 768 pages cleaned by msync, $first first-write faults (one or more per folio, fewer than 256)" \
			large_folio_counts "$first" "$wp" "$msync" "$calls" "$pages"
	fi
}
unload_checks() {	# DIR KVER [NTH]
	local s
	s=$(step "$1" unload "${3:-1}")
	check "$2: wpstat unload unloads it" bash -c "[ \"\$(cat '$s.rc')\" = 0 ] && [ \"\$(cat '$s.gone')\" = 0 ] || cat '$s.out' '$s.err'"
}

# ---- one suite -----------------------------------------------------------------
run_suite() {
	local t0=$SECONDS f o s kb bad_out h
	phase_t=$SECONDS
	tap=$out/$suite.tap
	logs=$out/$suite
	work=$top/build/pkgtest/run/$suite
	root=$work/root
	rm -rf "$logs" && mkdir -p "$logs"
	: >"$tap"
	# One run of a suite at a time uses its work directory.
	mkdir -p "$top/build/pkgtest/run"
	exec 7>"$top/build/pkgtest/run/$suite.lock"
	flock 7
	rm -rf --one-file-system "$work" && mkdir -p "$work/results"
	# bullseye's glibc is older than bookworm's: its packages are built there.
	local chroot_args=()
	[ "$suite" != bullseye ] || chroot_args=(--chroot bullseye)

	# 1. Packages, reproducibility, a newer version, the repository.
	if "$top/scripts/pkg/deb.sh" --out "$work/deb" "${rev_args[@]}" "${chroot_args[@]}" >"$logs/deb.log" 2>&1; then
		ok "make deb builds wpstat-dkms and wpstat $version; lintian: no error or warning"
	else
		not_ok "make deb builds wpstat-dkms and wpstat $version; lintian: no error or warning" "$(tail -n 15 "$logs/deb.log")"
		return
	fi
	grep '^deb: lintian: ' "$logs/deb.log" | sed 's/^deb: /# /' >>"$tap"
	if [ "$suite" = bookworm ]; then
		if "$top/scripts/pkg/deb.sh" --out "$work/deb2" "${rev_args[@]}" --no-lintian >"$logs/deb2.log" 2>&1; then
			check "two builds in a row give byte-identical .debs" \
				bash -c "cd '$work/deb' && sha256sum wpstat*.deb | (cd '$work/deb2' && sha256sum -c --quiet -)"
		else
			not_ok "two builds in a row give byte-identical .debs" "$(tail -n 5 "$logs/deb2.log")"
		fi
	fi
	check "a newer version $newer builds (changelog entry added)" \
		"$top/scripts/pkg/deb.sh" --out "$work/deb-new" --version "$newer" --no-lintian "${rev_args[@]}" "${chroot_args[@]}"
	export GNUPGHOME=$work/gnupg
	mkdir -p -m 0700 "$GNUPGHOME"
	gpg --batch --passphrase '' --quick-gen-key "wpstat package test <pkgtest@wpstat.invalid>" \
		rsa3072 sign 1d >"$logs/gpg.log" 2>&1
	check "make repo: a flat repository of $newer, Release signed with the operator's key" \
		bash -c "'$top/scripts/pkg/repo.sh' --out '$work/repo' --key pkgtest@wpstat.invalid '$work'/deb-new/*.deb >'$logs/repo.log' 2>&1 &&
			gpgv --keyring '$work/repo/wpstat-archive-keyring.gpg' '$work/repo/InRelease' 2>&1 &&
			[ -s '$work/repo/Packages.gz' ]"
	phase "packages built"

	# 2. A fresh root, and the packages installed into it.
	local base
	if ! base=$("$top/scripts/pkg/root.sh" "$suite" 2>"$logs/root.log"); then
		not_ok "a root of $suite with a kernel, its headers and its compiler" "$(tail -n 10 "$logs/root.log")"
		return
	fi
	cp -a "$base" "$root"
	local kboot kbare klater
	# shellcheck disable=SC1091
	. <(sed -n 's/^\(boot\|bare\|later\)=/k&/p' "$root/.wpstat-kernels")
	ok "a fresh root of $suite: kernel $kboot with headers${kbare:+, $kbare without}"
	phase "root copied"
	mkdir -p "$root/tmp/wpstat-debs"
	cp "$work"/deb/wpstat*.deb "$root/tmp/wpstat-debs/"
	in_root bash -c 'cd /tmp/wpstat-debs && apt-get install -y --no-install-recommends ./wpstat-dkms_*.deb ./wpstat_*.deb' \
		>"$logs/install.log" 2>&1
	check "apt-get install ./wpstat-dkms_*.deb ./wpstat_*.deb succeeds" is "$?" 0
	rm -rf "$root/tmp/wpstat-debs"
	for f in wpstat wpstat-dkms; do
		check "$f $version is installed" is "$(pkg_status $f)" "install ok installed $version"
	done
	check "dkms status: wpstat $version installed for $kboot" dkms_installed "$version" "$kboot"
	check "modinfo: the module for $kboot is version $version" module_version_is "$kboot" "$version"
	f=$(module_file "$kboot")
	if [ -x "$root/usr/bin/openssl" ] && [ -f "$root/var/lib/dkms/mok.pub" ]; then
		check "modinfo: signed with DKMS's key (signer: DKMS module signing key)" \
			is "$(modinfo_field "$f" signer)" "DKMS module signing key"
	else
		skip "modinfo: signed with DKMS's key" \
			"$suite's DKMS $(in_root dpkg-query -W -f '${Version}' dkms) does not sign (no /var/lib/dkms/mok.pub)"
	fi
	if [ -n "$kbare" ]; then
		check "a kernel without headers ($kbare): apt succeeds and names linux-headers-$kbare" \
			has "$logs/install.log" "apt install linux-headers-$(ere "$kbare")"
		check "no module for $kbare (no headers)" bash -c "[ -z '$(module_file "$kbare")' ]"
	fi
	check "/etc/modprobe.d/wpstat.conf installed, every line a comment" \
		bash -c "[ -f '$root/etc/modprobe.d/wpstat.conf' ] && ! grep -v '^#' '$root/etc/modprobe.d/wpstat.conf' | grep -q ."
	check "no modules-load.d file: loading at boot is the operator's choice" \
		bash -c "! ls '$root'/etc/modules-load.d/*wpstat* '$root'/usr/lib/modules-load.d/*wpstat* 2>/dev/null"
	check "wpstat-export.service installed, not enabled" \
		bash -c "[ -f '$root/lib/systemd/system/wpstat-export.service' ] &&
			! ls '$root'/etc/systemd/system/*.wants/wpstat-export.service 2>/dev/null"
	# The module DKMS built now, kept to stand for the one loaded when the
	# upgrade below runs.
	mkdir -p "$work/results/old"
	[ -z "$f" ] || cp "$f" "$work/results/old/"
	phase "installed"

	# 3. A kernel without headers, booted; then its headers, added later.
	if [ -n "$kbare" ]; then
		boot noheaders "$kbare" load
		s=$(step "$g" load)
		check "$kbare without headers: wpstat load fails, saying apt install wpstat-dkms and linux-headers-$kbare" \
			bash -c "[ \"\$(cat '$s.rc' 2>/dev/null)\" = 1 ] &&
				grep -q 'apt install wpstat-dkms linux-headers-$(ere "$kbare")' '$s.err' || cat '$s.out' '$s.err'"
		phase "kernel without headers booted"
	fi
	if [ -n "$klater" ]; then
		in_root apt-get install -y --no-install-recommends "linux-headers-$klater" >"$logs/later.log" 2>&1
		check "a kernel added later: apt-get install linux-headers-$klater succeeds" is "$?" 0
		check "DKMS built wpstat $version for $klater with no command from the user" dkms_installed "$version" "$klater"
		check "modinfo: the module for $klater is version $version" module_version_is "$klater" "$version"
		phase "headers of $klater installed"
		boot later "$klater" version load demo unload
		check "$klater: wpstat --version says $version" is "$(cat "$(step "$g" version).out" 2>/dev/null)" "wpstat $version"
		s=$(step "$g" load)
		check "$klater: wpstat load finds the module by name (libkmod, no path)" \
			bash -c "[ \"\$(cat '$s.rc' 2>/dev/null)\" = 0 ] && grep -Eq '$(load_by_name_re "$klater")' '$s.out' || cat '$s.out' '$s.err'"
		check "$klater: the loaded module is version $version" is "$(cat "$s.modversion" 2>/dev/null)" "$version"
		demo_checks "$g" "$klater"
		unload_checks "$g" "$klater"
		phase "$klater booted"
	else
		skip "a kernel added later" "one kernel of $suite is used; bookworm's test adds one"
	fi

	# 4. A kernel the sources cannot build for, added the way a kernel's
	# headers package adds one: its postinst runs the header_postinst.d hooks.
	kb=6.99.0-wpstat-broken
	mkdir -p "$root/lib/modules/$kb/kernel" "$root/usr/src/linux-headers-$kb/include"
	ln -s "/usr/src/linux-headers-$kb" "$root/lib/modules/$kb/build"
	printf '%s\n' "# The package test's headers of a kernel that no module builds for." \
		"modules:" '	$(error this kernel (a test fixture) cannot build out-of-tree modules)' \
		>"$root/usr/src/linux-headers-$kb/Makefile"
	in_root run-parts --report --exit-on-error --arg="$kb" /etc/kernel/header_postinst.d \
		>"$logs/broken.log" 2>&1
	# DKMS 3 fails the kernel's installation (bookworm: autoinstall exits
	# 11), bullseye's 2.8 only reports: either way the message and the log.
	note "the kernel hooks for $kb exited $? ($(in_root dpkg-query -W -f '${Version}' dkms 2>/dev/null))"
	check "a kernel the sources cannot build for: DKMS's message points to make.log" \
		has "$logs/broken.log" "make\.log"
	check "DKMS's make.log names the failure" \
		has "$root/var/lib/dkms/wpstat/$version/build/make.log" "this kernel \(a test fixture\) cannot build"
	check "nothing of wpstat for $kb (no module, no dkms state)" \
		bash -c "! ls -A '$root/lib/modules/$kb/updates' 2>/dev/null | grep -q . &&
			! '$top/scripts/vm/chroot-run.sh' '$root' -- dkms status wpstat 2>/dev/null | grep -F '$kb'"
	for h in $kboot $klater; do
		check "$h keeps its module" nonempty "$(module_file "$h")" "no wpstat.ko for $h"
		check "dkms status: $h still installed" dkms_installed "$version" "$h"
	done
	for f in wpstat wpstat-dkms; do
		check "$f stays installed and configured" is "$(pkg_status $f)" "install ok installed $version"
	done
	rm -rf "$root/lib/modules/$kb" "$root/usr/src/linux-headers-$kb"
	phase "unbuildable kernel"

	# 5. Upgrade by name from the repository.
	mkdir -p "$root/srv" "$root/etc/apt/keyrings"
	cp -a "$work/repo" "$root/srv/wpstat"
	cp "$work/repo/wpstat-archive-keyring.gpg" "$root/etc/apt/keyrings/"
	echo "deb [signed-by=/etc/apt/keyrings/wpstat-archive-keyring.gpg] file:/srv/wpstat ./" \
		>"$root/etc/apt/sources.list.d/wpstat.list"
	in_root apt-get update >"$logs/update.log" 2>&1
	check "apt-get update with the repository (file: source, signed-by): no error" is "$?" 0
	check "apt-get update: the repository's signature is good" hasnt "$logs/update.log" "NO_PUBKEY|not signed|insecure|^W: .*wpstat|^E:"
	in_root apt-get install -y --no-install-recommends wpstat wpstat-dkms >"$logs/upgrade.log" 2>&1
	check "upgrade: apt-get install wpstat wpstat-dkms succeeds" is "$?" 0
	check "upgrade: both came from the repository" has "$logs/upgrade.log" "file:/srv/wpstat \./ wpstat-dkms $(ere "$newer")"
	for f in wpstat wpstat-dkms; do
		check "upgrade: $f $newer is installed" is "$(pkg_status $f)" "install ok installed $newer"
	done
	check "upgrade: DKMS built $newer for $kboot" dkms_installed "$newer" "$kboot"
	check "upgrade: the module for $kboot is version $newer" module_version_is "$kboot" "$newer"
	check "upgrade: $version is gone from DKMS" \
		bash -c "! '$top/scripts/vm/chroot-run.sh' '$root' -- dkms status wpstat 2>&1 | grep -E '(, |/)$(ere "$version"), '"
	phase "upgraded"
	f=$(ls "$work/results/old/" 2>/dev/null | head -n 1)
	boot upgrade "$kboot" "load-file=/mnt/wpstat/old/$f" status unload load version demo unload
	s=$(step "$g" load-file)
	check "$kboot: the old module ($version) loads, as it was loaded during the upgrade" \
		bash -c "[ \"\$(cat '$s.rc' 2>/dev/null)\" = 0 ] && [ \"\$(cat '$s.modversion')\" = '$version' ] || cat '$s.out' '$s.err'"
	check "wpstat load says the loaded module's version differs from its own" \
		has "$s.err" "the loaded module is version $(ere "$version"), this wpstat $(ere "$newer")"
	s=$(step "$g" status)
	check "wpstat status says the versions differ" \
		bash -c "grep -q '^version: *module $version, wpstat $newer (differ' '$s.out' &&
			grep -q 'the loaded module is version $version' '$s.err' || cat '$s.out' '$s.err'"
	unload_checks "$g" "$kboot"
	s=$(step "$g" load)
	check "$kboot: wpstat load finds the module by name (libkmod, no path)" \
		bash -c "[ \"\$(cat '$s.rc' 2>/dev/null)\" = 0 ] && grep -Eq '$(load_by_name_re "$kboot")' '$s.out' || cat '$s.out' '$s.err'"
	check "after a reload the newer module ($newer) is the one loaded, and wpstat says nothing of versions" \
		bash -c "[ \"\$(cat '$s.modversion' 2>/dev/null)\" = '$newer' ] && ! grep -q 'version' '$s.err' || cat '$s.modversion' '$s.err'"
	check "$kboot: wpstat --version says $newer" is "$(cat "$(step "$g" version).out" 2>/dev/null)" "wpstat $newer"
	demo_checks "$g" "$kboot"
	unload_checks "$g" "$kboot" 2
	phase "$kboot booted after the upgrade"

	# 6. Purge.  The repository's source and key are the operator's files.
	rm -rf "$root/etc/apt/sources.list.d/wpstat.list" "$root/etc/apt/keyrings/wpstat-archive-keyring.gpg" "$root/srv/wpstat"
	in_root apt-get purge -y wpstat wpstat-dkms >"$logs/purge.log" 2>&1
	check "apt-get purge wpstat wpstat-dkms succeeds" is "$?" 0
	o=$(cd "$root" && find lib/modules/*/updates usr/src var/lib/dkms etc usr -iname '*wpstat*' 2>/dev/null; \
		ls -d var/lib/dkms/wpstat 2>/dev/null)
	echo "# left after purge: ${o:-nothing}" | tr '\n' ' ' >>"$tap"
	echo >>"$tap"
	check "purge leaves no wpstat file under /lib/modules/*/updates, /usr/src, /var/lib/dkms, /etc, /usr" is "$o" ""
	check "dpkg knows no wpstat package any more" \
		bash -c "! '$top/scripts/vm/chroot-run.sh' '$root' -- dpkg-query -W -f '\${db:Status-Abbrev}\n' wpstat wpstat-dkms 2>/dev/null | grep -q ."
	phase "purged"
	note "suite $suite took $((SECONDS - t0)) s"
}

rc=0
for suite in "$@"; do
	n=0 failed=0
	SECONDS=0
	run_suite
	# The repository key's agent, started by gpg in the work directory.
	[ -z "${GNUPGHOME:-}" ] || gpgconf --kill gpg-agent 2>/dev/null
	unset GNUPGHOME
	# The plan comes last (TAP allows it): a suite that stopped early still
	# reports what it ran.
	echo "1..$n" >>"$tap"
	if [ $failed = 0 ] && [ "${WPSTAT_PKG_KEEP:-0}" = 0 ]; then
		rm -rf --one-file-system "$top/build/pkgtest/run/$suite"
	fi
	exec 7>&-
	echo "pkgtest $suite: $((n - failed)) of $n passed in $SECONDS s ($tap)" >&2
	[ $failed = 0 ] || rc=1
done
exit $rc
