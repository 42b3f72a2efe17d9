#!/usr/bin/env bash
# Host check (TAP): scripts/check/watchdog.sh, which make check runs every
# guest suite under (and every guest), kills a suite that goes silent and
# never one that is slow but still printing.  Fake suites, a hang limit of
# a few seconds, no guest: about 30 s.
#
#   test-watchdog.sh

set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
wd=$top/scripts/check/watchdog.sh
tmp=$(mktemp -d /tmp/wpstat-test-watchdog.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# check DESCRIPTION COMMAND...: one TAP line
. "$top/scripts/lib/tap.sh"

# A process of the fake suite, found by its unique name (exec -a).
alive() {	# TAG
	pgrep -f -- "$1" >/dev/null
}

echo "1..9"

# 1. A kselftest-like suite prints, then its test sleeps and never prints
# again (a child in a process group of its own, as the harness makes):
# killed after the hang limit, naming the test and its last line; the
# sleeper does not survive.
silent() {
	local tag=wpstat-wd-silent-$$ rc
	"$wd" --hang 3 --label ksft:fake --out "$tmp/silent.tap" -- bash -c '
		echo "TAP version 13"; echo "1..3"
		echo "#  RUN           fake.one ..."; echo "ok 1 fake.one"
		echo "#  RUN           fake.two ..."; echo "# fake.c:12:two: waiting for writeback"
		set -m; (exec -a '"$tag"' sleep 300) & wait' 2>"$tmp/silent.err"
	rc=$?
	[ $rc = 124 ] || { echo "exit $rc, not 124"; return 1; }
	grep -q '^not ok - ksft:fake hung: nothing written for [0-9]* s (hang limit 3 s), killed; running test fake.two; last line: "# fake.c:12:two: waiting for writeback"$' "$tmp/silent.tap" ||
		{ echo "no not-ok line naming the test:"; cat "$tmp/silent.tap"; return 1; }
	grep -q '^# wpstat-watchdog: killed' "$tmp/silent.tap" || { echo "no marker"; return 1; }
	sleep 1
	! alive "$tag" || { echo "the test's process survived"; return 1; }
	# One failure: the kill; the third test, which never ran, is not counted.
	[ "$("$top/scripts/check/tap-summary.sh" x "$tmp/silent.tap" | tail -n 1)" = "1 1 0" ] ||
		{ "$top/scripts/check/tap-summary.sh" x "$tmp/silent.tap"; return 1; }
}
check "a suite silent for the hang limit is killed as one failure, naming its test and last line" silent

# 2. A suite much slower than the hang limit that prints every second is
# left alone: its own exit status, every line it printed.
slow() {
	local rc
	SECONDS=0
	"$wd" --hang 4 --label ksft:slow --out "$tmp/slow.tap" -- bash -c '
		echo "1..1"; for i in $(seq 12); do echo "# step $i"; sleep 1; done
		echo "ok 1 slow.all"; exit 3' 2>"$tmp/slow.err"
	rc=$?
	[ $rc = 3 ] || { echo "exit $rc, not the suite's 3"; cat "$tmp/slow.err"; return 1; }
	[ $SECONDS -ge 12 ] || { echo "ended after $SECONDS s"; return 1; }
	grep -q '^ok 1 slow.all$' "$tmp/slow.tap" && ! grep -q 'wpstat-watchdog' "$tmp/slow.tap" ||
		{ cat "$tmp/slow.tap"; return 1; }
	grep -q '^watchdog: ksft:slow longest silence [0-9] s after: ' "$tmp/slow.err" ||
		{ cat "$tmp/slow.err"; return 1; }
	[ "$(wc -l <"$tmp/slow.tap")" = 14 ] || { echo "lines lost"; return 1; }
}
check "a suite three times longer than the hang limit but printing is not killed" slow

# 3. A command that ends by itself is waited for, not polled: no delay.
quick() {
	SECONDS=0
	"$wd" --hang 600 --out "$tmp/quick.tap" -- true 2>/dev/null || return 1
	[ $SECONDS -le 1 ] || { echo "took $SECONDS s"; return 1; }
}
check "a quick suite ends when it ends" quick

# 4. A bats suite through the formatter make check uses: the test that
# hangs is named, and bats' own TAP is unchanged otherwise.
bats_hang() {
	local tag=wpstat-wd-bats-$$
	command -v bats >/dev/null || { echo "no bats"; return 1; }
	cat >"$tmp/fake.bats" <<-EOF
	@test "first passes" {
		true
	}
	@test "second hangs" {
		(exec -a $tag sleep 300)
	}
	@test "third never runs" {
		true
	}
	EOF
	"$wd" --hang 3 --label bats:fake --out "$tmp/bats.tap" -- \
		bats --formatter "$top/scripts/check/bats-format-tap-run" "$tmp/fake.bats" 2>/dev/null
	[ $? = 124 ] || { echo "not killed"; cat "$tmp/bats.tap"; return 1; }
	grep -q '^ok 1 first passes$' "$tmp/bats.tap" &&
		grep -q '^not ok - bats:fake hung: .*; running test second hangs; last line: ' "$tmp/bats.tap" ||
		{ cat "$tmp/bats.tap"; return 1; }
	sleep 1
	! alive "$tag" || { echo "the test's sleep survived"; return 1; }
}
check "a hung bats test is named" bats_hang

# 5. The backstop kills what prints forever; exit 125.
backstop() {
	"$wd" --hang 0 --total 3 --label forever --out "$tmp/forever.tap" -- \
		bash -c 'while :; do echo "# still here"; sleep 0.3; done' 2>/dev/null
	[ $? = 125 ] || return 1
	grep -q '^not ok - forever still running after [0-9]* s, killed by the backstop of 3 s' "$tmp/forever.tap" ||
		{ tail -n 3 "$tmp/forever.tap"; return 1; }
}
check "the backstop kills a suite that never stops printing" backstop

# 6. The host's side: a "guest" whose results directory stops changing is
# killed; the reason names the suite from the running file; that suite's
# TAP gets the marker only (the guest's failure is the one counted).
guest() {
	local res=$tmp/guest
	mkdir -p "$res"
	"$wd" --hang 3 --label "guest fake" --watch "$res" --running "$res/running" --why "$tmp/why" -- \
		bash -c 'r=$1
			printf "1..2\n#  RUN           s.t1 ...\nok 1 s.t1\n" >"$r/a.tap"
			for i in 1 2 3 4 5; do echo "# $i" >>"$r/a.tap"; sleep 1; done
			printf "1..4\n#  RUN           s.hung ...\n" >"$r/b.tap"
			echo "ksft:b $r/b.tap" >"$r/running"
			sleep 300' _ "$res" >/dev/null 2>&1
	[ $? = 124 ] || { echo "not killed"; return 1; }
	grep -q '^guest fake hung: .*; ksft:b, running test s.hung; last line: "#  RUN           s.hung ..."$' "$tmp/why" ||
		{ cat "$tmp/why"; return 1; }
	grep -q '^# wpstat-watchdog: killed' "$res/b.tap" && ! grep -q '^not ok' "$res/b.tap" ||
		{ cat "$res/b.tap"; return 1; }
	[ "$("$top/scripts/check/tap-summary.sh" x "$res/b.tap" | tail -n 1)" = "0 0 0" ] || return 1
}
check "a guest whose results stop changing is killed, naming the suite and test" guest

# 7. Changes to any watched file are progress: a guest that writes only
# its kernel log now and then is not killed.
guest_alive() {
	local res=$tmp/alive
	mkdir -p "$res"
	"$wd" --hang 3 --label "guest alive" --watch "$res" --running "$res/running" -- \
		bash -c 'for i in $(seq 8); do echo "[$i] kernel" >>"$1/dmesg-live.txt"; sleep 1; done' _ "$res" \
		>/dev/null 2>&1 || return 1
}
check "a guest whose kernel log still grows is not killed" guest_alive

# 8. --times: each line with the seconds since the start.
times() {
	"$wd" --hang 5 --out "$tmp/t.tap" --times "$tmp/t.times" -- \
		bash -c 'echo "1..1"; sleep 3; echo "ok 1 t"' 2>/dev/null || return 1
	awk '$2 == "1..1" { a = $1 } $2 == "ok" { b = $1 } END { exit !(a <= 1 && b - a >= 2) }' "$tmp/t.times" ||
		{ cat "$tmp/t.times"; return 1; }
}
check "the times file says how long each line took to come" times

# 9. The guest's suite writes only to its TMPDIR, which the host does not
# watch: the inner watchdog's heartbeat keeps the outer one from taking
# the guest for hung.
nested() {
	local res=$tmp/nested priv=$tmp/nested-tmp
	mkdir -p "$res" "$priv"
	"$wd" --hang 3 --label "guest nested" --watch "$res" -- \
		"$wd" --hang 3 --label inner --out "$res/s.tap" --watch "$priv" --heartbeat "$res/running" -- \
		bash -c 'echo "1..1"; for i in $(seq 8); do echo $i >>"$1/progress"; sleep 1; done; echo "ok 1 s"' _ "$priv" \
		>/dev/null 2>&1 || { echo "killed"; return 1; }
	grep -q '^ok 1 s$' "$res/s.tap" || return 1
}
check "progress the host cannot see reaches it through the guest watchdog's heartbeat" nested
