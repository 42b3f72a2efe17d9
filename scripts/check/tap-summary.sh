#!/usr/bin/env bash
# Count TAP results: tap-summary.sh LABEL FILE...
# Prints one line per test that did not pass, each failure followed by its
# diagnostics (at most 8 "# " lines, indented: the kselftest harness prints
# them before "not ok", bats after it), and, last, "P F S" counts.
# A suite whose plan (1..N) is missing or not met counts as failed, unless
# scripts/check/watchdog.sh killed it ("# wpstat-watchdog: killed"): that
# kill is one failure, counted where it is reported, and the tests it kept
# from running are not counted again.

label=$1
shift
awk -v label="$label" '
	function flush() {
		if (file == "" || killed)
			return
		if (plan < 0) {
			printf "FAIL %s %s: no TAP plan (suite crashed?)\n", label, name
			fail++
		} else if (seen < plan) {
			printf "FAIL %s %s: %d of %d tests did not report\n", label, name, plan - seen, plan
			fail += plan - seen
		}
	}
	function diag(line) {
		if (shown++ < 8)
			printf "    %s\n", substr(line, 1, 300)
	}
	FNR == 1 { flush(); file = FILENAME; name = FILENAME; sub(/.*\//, "", name); sub(/\.tap$/, "", name); plan = -1; seen = 0; nkept = 0; after = 0; killed = 0 }
	/^# wpstat-watchdog: killed/ { killed = 1 }
	/^1\.\.[0-9]+/ { if (plan < 0) plan = substr($1, 4) + 0; next }
	# The harness names the next test with "#  RUN": what follows is its own.
	/^#  RUN / { nkept = 0; after = 0; next }
	/^#/ {
		if (after)
			diag($0)
		else if (nkept < 8)
			kept[nkept++] = $0
		else {
			for (i = 1; i < 8; i++)
				kept[i - 1] = kept[i]
			kept[7] = $0
		}
		next
	}
	/^not ok / {
		seen++; fail++
		printf "FAIL %s %s: %s\n", label, name, $0
		shown = 0
		for (i = 0; i < nkept; i++)
			diag(kept[i])
		nkept = 0; after = 1
		next
	}
	/^ok / {
		seen++; nkept = 0; after = 0
		if (tolower($0) ~ /# skip/) { skip++; printf "SKIP %s %s: %s\n", label, name, $0 }
		else pass++
		next
	}
	END { flush(); printf "%d %d %d\n", pass, fail, skip }
' "$@"
