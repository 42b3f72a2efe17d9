#!/usr/bin/env bash
# Count TAP results: tap-summary.sh LABEL FILE...
# Prints one line per test that did not pass and, last, "P F S" counts.
# A suite whose plan (1..N) is missing or not met counts as failed.

label=$1
shift
awk -v label="$label" '
	function flush() {
		if (file == "")
			return
		if (plan < 0) {
			printf "FAIL %s %s: no TAP plan (suite crashed?)\n", label, name
			fail++
		} else if (seen < plan) {
			printf "FAIL %s %s: %d of %d tests did not report\n", label, name, plan - seen, plan
			fail += plan - seen
		}
	}
	FNR == 1 { flush(); file = FILENAME; name = FILENAME; sub(/.*\//, "", name); sub(/\.tap$/, "", name); plan = -1; seen = 0 }
	/^1\.\.[0-9]+/ { if (plan < 0) plan = substr($1, 4) + 0; next }
	/^not ok / { seen++; fail++; printf "FAIL %s %s: %s\n", label, name, $0; next }
	/^ok / {
		seen++
		if (tolower($0) ~ /# skip/) { skip++; printf "SKIP %s %s: %s\n", label, name, $0 }
		else pass++
		next
	}
	END { flush(); printf "%d %d %d\n", pass, fail, skip }
' "$@"
