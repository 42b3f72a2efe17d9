# shellcheck shell=bash
# TAP for the host checks (selftests/host/test-*.sh), sourced:
#   check DESCRIPTION COMMAND...   runs COMMAND, prints one TAP line, and
#                                  COMMAND's output as comments if it failed
# $n counts the checks (the plan is "1..$n" at the end), $failed the failures.
n=0
failed=0
check() {
	local what=$1 out
	shift
	n=$((n + 1))
	if out=$("$@" 2>&1); then
		echo "ok $n $what"
	else
		echo "not ok $n $what"
		printf '%s\n' "$out" | sed 's/^/# /'
		failed=$((failed + 1))
	fi
}
