#!/usr/bin/env bash
# The body of `make check`: host checks (checkpatch, packaging), then the
# selftest suites in a guest of each supported kernel, one summary, and the
# closing line "N passed, N failed, N skipped".  Exit status 1 on any failure.
#
# Every suite but the long ones runs on one kernel (WPSTAT_CHECK_FULL,
# default: the newest host-installed 6.12), split into WPSTAT_CHECK_SHARDS
# guests (default: 2) that run side by side; the suites that check what
# the kernel does (guest-check.sh's kernel set) run on the others given,
# by default only the oldest, 5.10, so that make check stays under 30
# minutes from a clean clone on 2 cores.  make check-kernels
# (WPSTAT_CHECK_FULL=all) runs every suite on every kernel, the long
# ones too, one guest each.
#
# Nothing fails for taking long.  Inside each guest a watchdog kills a
# suite that prints nothing for WPSTAT_HANG_SECS (default 600), as one
# failure (scripts/check/guest-check.sh); here a second one kills a guest
# whose results directory has not changed for that plus 300 s (its kernel
# hung, or the guest's watchdog did), as one failure naming the suite and
# test it was running.  The only bound on time is a backstop per guest,
# far above a working run (four hours; CI's less: guest_backstop).  A
# suite or guest that took longer than measured
# (selftests/suites.txt) is a "# slow:" line in the summary, with
# the ratio, not a failure.
#
# Environment: KVERS (kernels to test, default: every supported kernel,
#              host-installed and staged: scripts/vm/kernels.sh all; make
#              check's default, without SUITES: the full kernel and 5.10),
#              WPSTAT_CHECK_FULL (the kernel(s) that run every suite, or all),
#              WPSTAT_CHECK_SHARDS (guests that share a full kernel's suites,
#              default 2; 1 with SUITES and under check-kernels),
#              SUITES (guest suites, default: all; see scripts/check/guest-check.sh)
#              WPSTAT_STRESS=1 (long forms of the reliability suites: make stress)
#              WPSTAT_CHECK_JOBS (guests at once, default: one per core)
#              WPSTAT_SKIP_SUITES, WPSTAT_TIMING_SUITES (shape the default
#              list: see scripts/check/guest-check.sh)
#              WPSTAT_HANG_SECS (the silence that is a hang, default 600;
#              3600 under WPSTAT_STRESS)
#              WPSTAT_BACKSTOP_SECS (each guest's bound: guest_backstop)
#              WPSTAT_CHECK_PACKAGES (1: run the package test,
#              scripts/pkg/test.sh bookworm; default with the host checks
#              and without SUITES)
# For scripts/check/check-debug.sh, which runs the guest suites on another kernel
# next to a concurrent make check: WPSTAT_CHECK_OUT (results directory,
# default results/check), WPSTAT_CHECK_HOST=0 (no host checks),
# WPSTAT_CHECK_VM_ARGS (more vm-run.sh options), WPSTAT_CHECK_GUEST (the
# guest script, default scripts/check/guest-check.sh).
# Results: $out/KVER/*.tap (each suite's TAP; *.tap.times the same lines
# with the seconds since the suite began), $out/KVER.log (the guest's
# console: "guest-check: SUITE took N s"), $out/report.txt.

set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${WPSTAT_CHECK_OUT:-$top/results/check}
# Two runs into one results directory would delete each other's files
# under the running guests.
mkdir -p "$(dirname "$out")"
exec 9>"$out.lock"
flock -n 9 || { echo "check: another run is using $out (WPSTAT_CHECK_OUT= for a second one)" >&2; exit 2; }
rm -rf "$out" && mkdir -p "$out/host"
all_kvers=$("$top/scripts/vm/kernels.sh" all)
# install, DKMS and packaging are about the host's own kernels.
host_kvers=$(echo $("$top/scripts/vm/kernels.sh" installed))
full=${WPSTAT_CHECK_FULL:-$("$top/scripts/vm/kernels.sh" installed | grep '^6\.12\.' | tail -n 1)}
is_full() { [ "$full" = all ] || [[ " $full " == *" $1 "* ]]; }
# Space-separated: a newline in KVERS breaks make recipes that inherit it.
# make check: the full kernel and the oldest one, 5.10 (where a compat
# difference shows first); the rest are make check-kernels'.
if [ -n "${KVERS:-}" ] || [ "$full" = all ] || [ -n "${SUITES:-}" ]; then
	kvers=$(echo ${KVERS:-$all_kvers})
else
	kvers=$(echo $(for k in $all_kvers; do
		is_full "$k" || [[ $k == 5.10.* ]] && echo "$k"; done))
fi
# A full kernel's guests (make check): "KVER-partI", each running part I
# of its suites (guest-check.sh's WPSTAT_SHARD); any other guest: "KVER".
if [ "$full" = all ] || [ -n "${SUITES:-}" ]; then
	shards=${WPSTAT_CHECK_SHARDS:-1}
else
	shards=${WPSTAT_CHECK_SHARDS:-2}
fi
case $shards in '' | *[!0-9]* | 0) echo "check: WPSTAT_CHECK_SHARDS='$shards': a number of guests, 1 or more" >&2; exit 2 ;; esac
guest_labels() {	# KVER: its guests' labels
	local i
	if is_full "$1" && [ "$shards" -gt 1 ]; then
		for ((i = 1; i <= shards; i++)); do echo "$1-part$i"; done
	else
		echo "$1"
	fi
}
label_kver() { echo "${1%-part[0-9]*}"; }	# LABEL: its kernel

# Suites not yet ready on a kernel (selftests/suites.txt's not-yet
# lines): left out of make check there and reported as skipped, with the
# reason.  Not under make check-kernels, nor when SUITES names the suites.
not_yet() {	# KVER: "SUITE REASON" lines
	[ "$full" != all ] && [ -z "${SUITES:-}" ] || return 0
	"$top/scripts/check/suites.sh" not-yet "$1"
}
pass=0 fail=0 skip=0
report=$out/report.txt
: >"$report"

add_counts() {	# "P F S" from tap-summary's last line
	local p f s
	read -r p f s <<<"$1"
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
}

summarise() {	# LABEL DIR: count the TAP files of one run
	local label=$1 dir=$2 files lines
	files=$(ls "$dir"/*.tap 2>/dev/null)
	if [ -z "$files" ]; then
		echo "FAIL $label: no test results came back" >>"$report"
		fail=$((fail + 1))
		return
	fi
	# shellcheck disable=SC2086
	lines=$("$top/scripts/check/tap-summary.sh" "$label" $files)
	printf '%s\n' "$lines" | sed '$d' >>"$report"
	add_counts "$(printf '%s\n' "$lines" | tail -n 1)"
}

# The host's checks run beside the guests (started after the first guest,
# below) and are summarised first.
host_checks() {
	# checkpatch from Debian's linux-source: one TAP test per kmod/ and uapi/ file.
	checkpatch=$top/build/linux-src/scripts/checkpatch.pl
	{
		files=("$top"/kmod/*.c "$top"/kmod/*.h "$top"/uapi/*.def "$top"/kmod/bench/*.c)
		echo "1..${#files[@]}"
		n=0
		for f in "${files[@]}"; do
			n=$((n + 1))
			if perl "$checkpatch" --no-tree -f --quiet --terse "$f" >"$out/host/cp.txt" 2>&1; then
				echo "ok $n checkpatch ${f#"$top"/}"
			else
				echo "not ok $n checkpatch ${f#"$top"/}"
				sed 's/^/# /' "$out/host/cp.txt"
			fi
		done
	} >"$out/host/checkpatch.tap"
	# libwpstat's parsers, deltas and formatting (selftests/host/lib).
	for t in "$top"/build/lib/tests/*; do
		"$t" >"$out/host/lib-${t##*/}.tap" 2>&1
	done
	# Every selftests/host/test-NAME.sh into NAME.tap (each one's first
	# comment says what it checks): a new one runs without being listed.
	local t name
	for t in "$top"/selftests/host/test-*.sh; do
		name=${t##*/test-}
		name=${name%.sh}
		case $name in
		# Renders the guests' experiment results: run after them, below.
		experiment-report) ;;
		# make install/uninstall and DKMS for the host's own kernels; its
		# builds' output apart from the TAP.
		packaging) KVERS="$host_kvers" "$t" >"$out/host/$name.tap" 2>"$out/host/$name.log" ;;
		*) "$t" >"$out/host/$name.tap" 2>&1 ;;
		esac
	done
	echo "check: host checks took $SECONDS s" >&2
}

[ -n "$kvers" ] || { echo "FAIL: no supported kernel installed (make setup)" >>"$report"; fail=$((fail + 1)); }

# One guest per kernel, WPSTAT_CHECK_JOBS at a time (default: one per
# core).  vm-run.sh runs each guest's TCG on one host thread, so two
# guests on two cores take about as long as one; their results are
# summarised afterwards in kernel order.
# make stress's long forms have single tests that print nothing for half
# an hour (wpstat_longrun's 200 waves): an hour of silence there.
if [ -n "${WPSTAT_STRESS:-}" ] && [ "$WPSTAT_STRESS" != 0 ]; then
	hang=${WPSTAT_HANG_SECS:-3600}
else
	hang=${WPSTAT_HANG_SECS:-600}
fi
suites_sh=$top/scripts/check/suites.sh

measured() {	# SUITE: its measured seconds (selftests/suites.txt), or nothing
	"$suites_sh" seconds "$1"
}

# The measured time of a guest: its set's guest: line (guest:check,
# guest:kernel), or the sum of its suites' plus two minutes to boot (for
# SUITES, the set all, and a part of a set).
guest_measured() {	# SET [PART]
	local s sum=120 m list
	m=
	[ -n "${SUITES:-}" ] || [ -n "${2:-}" ] || m=$("$suites_sh" guest "$1")
	if [ -z "$m" ]; then
		list=${SUITES:-$("$suites_sh" list "$1")}
		# shellcheck disable=SC2086
		[ -z "${2:-}" ] || list=$("$suites_sh" shard "$2" "$shards" $list)
		for s in $list; do
			m=$(measured "${s%@counts}")
			sum=$((sum + ${m:-300}))
		done
		m=$sum
	fi
	echo "$m"
}

# A guest's backstop, for a guest that keeps writing without end (a hang
# stops the writing, and the watchdogs catch it long before): four hours,
# or four times the guest's measured time where that is more.  Not CI's
# 90 minutes: a clean-clone make check beside five other guests on this
# 2-core host ran bats:cli at a fifth of its quiet speed (1307 s against
# 244) and its 6.12 guest past 85 minutes, correct all the while.  CI,
# which knows its own limit, sets WPSTAT_BACKSTOP_SECS (.ci/run: 85
# minutes, so that it still gets a summary that names what ran).
guest_backstop() {	# SET [PART]
	local b=14400 m
	if [ -n "${WPSTAT_BACKSTOP_SECS:-}" ]; then
		echo "$WPSTAT_BACKSTOP_SECS"
		return
	fi
	m=$((4 * $(guest_measured "$1" "${2:-}")))
	[ $m -le $b ] || b=$m
	echo $b
}

guest_part() {	# LABEL: its part of its kernel's suites, or nothing
	local k
	k=$(label_kver "$1")
	[ "$1" = "$k" ] || echo "${1##*-part}"
}

run_guest() {	# LABEL: boot its kernel, run its suites, leave rc and seconds
	local g=$1 k part start rc set=kernel skips backstop
	k=$(label_kver "$g")
	part=$(guest_part "$g")
	start=$(date +%s)
	if [ "$full" = all ]; then
		set=all
	elif is_full "$k"; then
		set=check
	fi
	skips="${WPSTAT_SKIP_SUITES:-} $(not_yet "$k" | cut -d' ' -f1 | xargs)"
	backstop=$(guest_backstop $set "$part")
	echo "$set" >"$out/$g.set"
	# The guest's own watchdog catches a hung suite; this one a hung
	# guest: nothing new in its results directory (the suites' TAP files,
	# the live kernel log) for the hang limit and 300 s more.  vm-run.sh's
	# own bound stays above the backstop, which says what was running.
	# Appended to: QEMU opens the log anew (/proc/self/fd/1, at offset 0)
	# for the guest's output, and what the runner and the watchdog say
	# after it must not overwrite its start.
	: >"$out/$g.log"
	# shellcheck disable=SC2086
	WPSTAT_SKIP_SUITES=$skips WPSTAT_SUITE_SET=$set WPSTAT_HANG_SECS=$hang \
		WPSTAT_SHARD=${part:+$part/$shards} WPSTAT_VM_TIMEOUT=$((backstop + 600)) \
		"$top/scripts/check/watchdog.sh" --label "guest $g" --hang $((hang + 300)) \
		--total "$backstop" --watch "$out/$g" --running "$out/$g/running" \
		--why "$out/$g.why" -- \
		"$top/scripts/vm/vm-run.sh" --kver "$k" --results "$out/$g" ${WPSTAT_CHECK_VM_ARGS:-} -- \
		bash "${WPSTAT_CHECK_GUEST:-$top/scripts/check/guest-check.sh}" ${SUITES:-} >>"$out/$g.log" 2>&1
	rc=$?
	echo "$rc $(($(date +%s) - start))" >"$out/$g.status"
	# Once per kernel: in its first part.
	[ "${part:-1}" != 1 ] || not_yet "$k" | while read -r suite reason; do
		printf '1..1\nok 1 %s # SKIP not yet on %s: %s\n' "$suite" "$k" "$reason" \
			>"$out/$g/not-yet-${suite//[:\/]/-}.tap"
	done
	echo "check: $g took $(($(date +%s) - start)) s (guest exit $rc)" >&2
}

# "# slow:" lines for what took longer than measured (by 10 s at least:
# less is noise), and the longest silence, against the hang limit: how
# much slower a machine could be before a suite is taken for hung.
slow_notes() {	# LABEL
	local k=$1 set secs m
	awk -v k="$k" -v times="$suites_sh times" -v hang="$hang" '
		BEGIN { while ((times | getline l) > 0) { split(l, f, " "); m[f[1]] = f[2] } }
		/^guest-check: .* took [0-9]+ s/ {
			s = $2; t = $4; key = s; sub(/@counts$/, "", key)
			if ((key in m) && t - m[key] >= 10)
				printf "# slow: %s %s took %d s, measured %d s (%.1fx)\n", k, s, t, m[key], t / m[key]
			if (match($0, /longest silence [0-9]+ s/)) {
				q = substr($0, RSTART + 16, RLENGTH - 18) + 0
				if (q > qmax) { qmax = q; qs = s }
			}
		}
		END { if (qs != "") printf "# longest silence on %s: %d s, in %s (hang limit %d s)\n", k, qmax, qs, hang }
	' "$out/$k.log" 2>/dev/null
	read -r _ secs <"$out/$k.status" 2>/dev/null || return 0
	set=$(cat "$out/$k.set" 2>/dev/null)
	m=$(guest_measured "$set" "$(guest_part "$k")")
	if [ -n "$m" ] && [ "$secs" -ge $((m + 10)) ] 2>/dev/null; then
		awk -v k="$k" -v t="$secs" -v m="$m" -v set="$set" \
			'BEGIN { printf "# slow: %s the whole guest (%s) took %d s, measured %d s (%.1fx)\n", k, set, t, m, t / m }'
	fi
}

max_jobs=${WPSTAT_CHECK_JOBS:-$(nproc)}
# The longest guests first, so that the short ones fill in beside them.
order=$(for k in $kvers; do ! is_full "$k" || guest_labels "$k"; done
	for k in $kvers; do is_full "$k" || guest_labels "$k"; done)
guests=()
host_pid=
running() {	# guests still running
	local p n=0
	for p in "${guests[@]}"; do
		! kill -0 "$p" 2>/dev/null || n=$((n + 1))
	done
	echo $n
}
for k in $order; do
	while [ "$(running)" -ge "$max_jobs" ]; do
		wait -n
	done
	echo "check: booting $k" >&2
	run_guest "$k" &
	guests+=($!)
	if [ -z "$host_pid" ] && [ "${WPSTAT_CHECK_HOST:-1}" != 0 ]; then
		(SECONDS=0; host_checks) &
		host_pid=$!
	fi
done
if [ -z "$host_pid" ] && [ "${WPSTAT_CHECK_HOST:-1}" != 0 ]; then
	(SECONDS=0; host_checks) &
fi
# The package test (scripts/pkg/test.sh): bookworm's packages from apt-get
# install to purge in a root of their own, its kernels booted one at a
# time, so it takes a guest slot.  With the host checks, not with SUITES=
# (make stress, clients); WPSTAT_CHECK_PACKAGES=0/1 decides otherwise.
pkg_default=0
[ -n "${SUITES:-}" ] || [ "${WPSTAT_CHECK_HOST:-1}" = 0 ] || pkg_default=1
if [ "${WPSTAT_CHECK_PACKAGES:-$pkg_default}" = 1 ]; then
	while [ "$(running)" -ge "$max_jobs" ]; do
		wait -n
	done
	echo "check: package test (bookworm)" >&2
	(SECONDS=0; "$top/scripts/pkg/test.sh" --out "$out/packages" bookworm >"$out/packages.log" 2>&1
		echo "check: package test took $SECONDS s" >&2) &
	guests+=($!)
fi
wait
[ "${WPSTAT_CHECK_HOST:-1}" = 0 ] || summarise host "$out/host"
[ ! -d "$out/packages" ] || summarise packages "$out/packages"

for k in $(for k in $kvers; do guest_labels "$k"; done); do
	read -r rc secs <"$out/$k.status" 2>/dev/null || rc=125 secs=?
	# The runner fails on kernel BUG/WARNING/Oops/lockdep/KASAN reports.
	if [ "$rc" = 0 ]; then
		pass=$((pass + 1))
	elif [ -s "$out/$k.why" ]; then
		# Killed by the watchdog or the backstop: one failure, saying
		# what it was running; the suite it cut short is not counted
		# again (tap-summary.sh).
		fail=$((fail + 1))
		echo "FAIL $k: $(cat "$out/$k.why"); see $out/$k.log" >>"$report"
		if grep -E -m 1 -f "$top/scripts/vm/kernel-problems.ere" "$out/$k/dmesg-live.txt" \
			>"$out/$k.problem" 2>/dev/null; then
			echo "    kernel log: $(cut -c 1-200 "$out/$k.problem")" >>"$report"
		fi
		tail -n 10 "$out/$k.log" | sed 's/^/    /' >>"$report"
	else
		fail=$((fail + 1))
		echo "FAIL $k: guest run failed (exit $rc after $secs s); see $out/$k.log" >>"$report"
		tail -n 20 "$out/$k.log" | sed 's/^/    /' >>"$report"
	fi
	summarise "$k" "$out/$k"
	slow_notes "$k" >>"$report"
done

# The experiment report is rendered here, on the host, from the reduced
# sweep bats:experiment ran in each guest that ran every suite (make
# check-kernels: make check leaves it out).
ran_experiment=0
case " ${SUITES:-} " in
*" bats:experiment "*) ran_experiment=1 ;;
esac
if [ -z "${SUITES:-}" ] && [ "$full" = all ]; then
	case " ${WPSTAT_SKIP_SUITES:-} " in
	*" bats:experiment "*) ;;
	*) ran_experiment=1 ;;
	esac
fi
exp_kvers=
for k in $kvers; do
	! is_full "$k" || exp_kvers+=" $k"
done
if [ -n "${SUITES:-}" ]; then
	exp_kvers=$kvers
fi
if [ $ran_experiment = 1 ] && [ -n "$exp_kvers" ]; then
	mkdir -p "$out/host-report"
	# shellcheck disable=SC2086
	"$top/selftests/host/test-experiment-report.sh" "$out" $exp_kvers >"$out/host-report/experiment-report.tap"
	summarise host-report "$out/host-report"
fi

echo
echo "== wpstat check: kernels: $(echo $kvers) (every suite on: $full)"
cat "$report"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
