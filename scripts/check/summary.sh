# shellcheck shell=bash
# Sourced by the drivers that run scripts/check/check.sh more than once
# (check-flavours.sh, check-scale.sh) and sum its runs into one summary.
#   summary_add FILE LABEL   adds the run whose output is FILE: its
#                            closing "N passed, N failed, N skipped" to
#                            $pass/$fail/$skip and its report lines to
#                            report[]; a run without that line is one
#                            failure naming LABEL and FILE
#   summary_print HEADING    the report and the closing line; status 1 on
#                            any failure
pass=0 fail=0 skip=0
report=()

summary_add() {
	local file=$1 label=$2 last lines
	last=$(tail -n 1 "$file")
	if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped$ ]]; then
		pass=$((pass + BASH_REMATCH[1]))
		fail=$((fail + BASH_REMATCH[2]))
		skip=$((skip + BASH_REMATCH[3]))
		# Its report, without the heading and the closing line.
		mapfile -t lines < <(sed -n '/^== wpstat check/,$p' "$file" | sed '1d;$d')
		report+=("${lines[@]}")
	else
		report+=("FAIL $label: check.sh ended without a summary; see $file")
		fail=$((fail + 1))
	fi
}

summary_print() {
	echo
	echo "== $1"
	printf '%s\n' "${report[@]}"
	echo "$pass passed, $fail failed, $skip skipped"
	[ "$fail" = 0 ]
}
