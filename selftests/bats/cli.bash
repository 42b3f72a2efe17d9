# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# What the wpstat command-line suites share (cli*.bats, one file per
# command), loaded after helpers.bash: the module's parameters, the
# module put back as the file found it, a table's cells, and the set-up
# and teardown of each test.

CONTROL=/sys/kernel/debug/wpstat/control
CONFIG=/sys/kernel/debug/wpstat/config

module_param() {
	cat "/sys/module/wpstat/parameters/$1"
}

# Back to the module this file started with: loaded, default parameters,
# level counts.
restore_module() {
	if module_loaded && [ "$(module_param max_inodes)" = "$WPSTAT_DEFAULT_MAX_INODES" ] &&
	   [ -z "$(module_param skip_probes)" ]; then
		[ "$(module_param level)" = counts ] || echo "level counts" >"$CONTROL"
		return 0
	fi
	! module_loaded || rmmod wpstat
	insmod "$WPSTAT_MODULE"
}

# level_timing (helpers.bash): the columns only level timing produces
# (mkwrite_ns, mkclean_ptes) are what some tests format; teardown goes
# back to counts.

# Column $2 of the table row for file $1 ($output of `wpstat show`).
table_cell() {
	awk -v file="$1" -v name="$2" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) col = i; next }
		$NF == file { print $col; exit }' <<<"$output"
}

setup_file() {
	grep -q '^wpstat ' /proc/modules || insmod "$WPSTAT_MODULE"
	WPSTAT_DEFAULT_MAX_INODES=$(cat /sys/module/wpstat/parameters/max_inodes)
	export WPSTAT_DEFAULT_MAX_INODES
}

teardown_file() {
	restore_module
	wpstat_control filter none
	wpstat_control enable
}

setup() {
	require_module
	wpstat_control filter none
	wpstat_control enable
}

teardown() {
	restore_module
	rm -f "$WPSTAT_FS_DIR"/*/"$BATS_TEST_NAME".*
}
