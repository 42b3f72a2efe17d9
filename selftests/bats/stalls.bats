#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The wpstat commands for "who stalled, on which file, why":
# stalls, top, run's stall report and write-protect triggers, histogram,
# and the status lines they add.  Runs inside the guest as root with the
# module loaded (see scripts/check/guest-check.sh), normally at level counts.
#
# The workload is wpload on the ext4 scratch filesystem: a 256 KiB file is
# 64 pages, so two passes of stores with a sync after each take 64
# first-write faults (pass 1 maps every page), and the sync write-protects
# the 64 PTEs, so pass 2 takes 64 write-protect faults; each sync cleans 64
# folios, 128 folio_mkclean calls in all.  guest-check.sh keeps the flusher
# asleep (dirty_expire and dirty_writeback at an hour), so the test's own
# syncs are the only writeback.  brd does not ask for stable pages and 64
# dirty pages are far below any dirty threshold, so no wait and no pause
# is expected: at level counts (no fault time) the dominant cause is
# "faults".

bats_require_minimum_version 1.5.0

load helpers

# ---- helpers -----------------------------------------------------------

# The summary's histogram scope: the rest of its line ("all", "dev 8:1").
histogram_scope() {
	sed -n 's/^histogram_scope //p' /proc/wpstat/summary
}

# Run wpload "$@" to the end as a process of its own and leave its pid in
# WPLOAD_PID: its stalls rows are keyed by that pid, and stay after it
# exits.  (A simple command sent to the background is exec'd by the forked
# shell, so $! is wpload's pid.)
wpload_pid() {
	wpload "$@" --quiet >/dev/null &
	WPLOAD_PID=$!
	wait "$WPLOAD_PID"
}

setup_file() {
	grep -q '^wpstat ' /proc/modules || insmod "$WPSTAT_MODULE"
}

teardown_file() {
	module_loaded || insmod "$WPSTAT_MODULE"
	wpstat_control histogram all
	wpstat_control filter none
	wpstat_control enable
}

setup() {
	require_module
	[ -r /proc/wpstat/stalls ] || fail "the module has no /proc/wpstat/stalls"
	wpstat_control filter none
	wpstat_control enable
	wpstat_control histogram all
	# Earlier suites may have filled the stalls table (max_stalls rows,
	# one per process and file): each test starts from an empty one.
	wpstat_control reset
}

teardown() {
	module_loaded || insmod "$WPSTAT_MODULE"
	[ "$(module_level)" = counts ] || wpstat_control level counts
	rm -f "$WPSTAT_FS_DIR"/*/"$BATS_TEST_NAME".*
	if [ -n "${CGROUP_DIR:-}" ]; then
		rmdir "$CGROUP_DIR" || true
	fi
	if [ -n "${CGROUP_MOUNT:-}" ]; then
		umount "$CGROUP_MOUNT" || true
	fi
}

# ---- help --------------------------------------------------------------

@test "help lists stalls, top and histogram" {
	local cmd
	run --separate-stderr wpstat --help
	assert_success
	for cmd in stalls top histogram; do
		assert_line --regexp "^  $cmd( |\$)"
	done
	run --separate-stderr wpstat frobnicate
	assert_failure 2
	[[ $stderr == *stalls*top*histogram* ]]
}

# ---- stalls ------------------------------------------------------------

@test "stalls --json: wpload's row for its file has the inode's fault counts (a)" {
	local f pid rows want_ns causes
	f=$(scratch_file ext4)
	wpload_pid --file "$f" --size 256K --passes 2 --sync fsync
	pid=$WPLOAD_PID
	run --separate-stderr wpstat stalls --json --resolve "$WPSTAT_FS_DIR/ext4"
	assert_success
	[ -z "$stderr" ]
	jq -e --arg k "$(uname -r)" '.kernel == $k and (.stalls | type) == "array"' <<<"$output"
	rows=$(jq -c --arg f "$f" --argjson pid "$pid" \
		'[.stalls[] | select(.tgid == $pid and .path == $f)]' <<<"$output")
	[ "$(jq length <<<"$rows")" = 1 ] || fail "expected one row for pid $pid and $f: $output"
	# wpload was the file's only writer (a fresh file), so its row has
	# every fault the inode table counted for the file: 64 and 64.
	want_ns=$([ "$(module_level)" = timing ] && echo number || echo null)
	jq -e --arg dev "$(sb_dev "$f")" --argjson ino "$(stat -c %i "$f")" \
		--argjson first "$(counter "$f" mkwrite_first)" \
		--argjson wp "$(counter "$f" mkwrite_wp)" --arg ns "$want_ns" '.[0] |
		.comm == "wpload" and .dev == $dev and .ino == $ino and
		(.gen | type) == "number" and (.cgroup | type) == "number" and
		.fault_first == $first and .fault_wp == $wp and
		.fault_first == 64 and .fault_wp == 64 and
		(.fault_ns | type) == $ns and (.fault_max_ns | type) == $ns and
		(.stable_waits | type) == "number" and (.pauses | type) == "number" and
		(.stall_ns | type) == "number" and
		(.dominant_cause | IN("stable", "wb", "pause", "journal", "readin", "lock", "zil", "sync_wb", "fault", "faults"))' <<<"$rows"
	# At level counts fault_ns reads '-': the stall time is the waits and
	# pauses, which are disjoint, and with no time the dominant cause is
	# the wait with the most events ("faults" if none waited).  A store to
	# a hole of the fresh file reads its page in first: readin_waits.
	if [ "$want_ns" = null ]; then
		jq -e '.[0] | .stall_ns == (.stable_ns // 0) + (.wb_ns // 0) + (.pause_ns // 0) and
			({stable: .stable_waits, wb: .wb_waits, pause: .pauses,
			  journal: (.journal_waits // 0), readin: .readin_waits}) as $ev |
			([$ev[]] | max) as $most |
			if $most == 0 then .dominant_cause == "faults"
			else $ev[.dominant_cause] == $most end' <<<"$rows"
	fi
	# The table: pid, comm first, the file last; a person's columns by
	# default, -o picks, --all has every one.
	run --separate-stderr wpstat stalls --resolve "$WPSTAT_FS_DIR/ext4"
	assert_success
	[ "$(awk 'NR == 1 { $1 = $1; print; exit }' <<<"$output")" = \
		"pid comm cause stall worst fault_first fault_wp file" ] || fail "header: ${lines[0]}"
	assert_line --regexp "^ *$pid wpload .* $f\$"
	# --all: a column per cause, in uapi/wpstat_stalls.def's order, after
	# the stall and before the fault's own parts.
	causes=$(wpstat_lists --fields stalls WPSTAT_STALL_CAUSE name | sed 's/^/ /' | tr -d '\n')
	[[ $causes == *" readin"* ]] || fail "no causes read from wpstat_stalls.def: '$causes'"
	run --separate-stderr wpstat stalls --all --resolve "$WPSTAT_FS_DIR/ext4"
	assert_success
	[ "$(awk 'NR == 1 { $1 = $1; print; exit }' <<<"$output")" = \
		"pid comm cause stall$causes unnamed cpu runq sleep worst events fault_first fault_wp wp_caused cgroup file" ] ||
		fail "header: ${lines[0]}"
	run --separate-stderr wpstat stalls -o pid,fault_first --pid "$pid"
	assert_success
	assert_line --index 0 --regexp '^ *pid +fault_first +file$'
	assert_line --index 1 --regexp "^ *$pid +64 +[^ ]+\$"
	run --separate-stderr wpstat stalls -o pid,nosuch
	assert_failure 2
	[[ $stderr == *"unknown column 'nosuch'"* ]] || fail "$stderr"
	run --separate-stderr wpstat top --count 1 --interval 0.1 -o nosuch
	assert_failure 2
	[[ $stderr == *"unknown column 'nosuch'"* ]] || fail "$stderr"
}

@test "stalls: rows of exited processes stay; reset empties the table" {
	local f
	f=$(scratch_file ext4)
	wpload_pid --file "$f" --size 256K --passes 1 --sync fsync
	run --separate-stderr wpstat stalls --json --pid "$WPLOAD_PID"
	assert_success
	jq -e '(.stalls | length) == 1 and .stalls[0].fault_first == 64' <<<"$output"
	[ "$(summary stall_rows)" -ge 1 ]
	run --separate-stderr wpstat reset
	assert_success
	run --separate-stderr wpstat stalls --json
	assert_success
	jq -e '.stalls == []' <<<"$output"
	[ "$(summary stall_rows)" = 0 ]
	run --separate-stderr wpstat stalls
	assert_success
	[ "${#lines[@]}" -eq 1 ]
	[[ ${lines[0]} == *pid*comm*file ]]
}

@test "stalls: the cgroup id maps to the cgroup's path" {
	local f mnt pid
	f=$(scratch_file ext4)
	# wpstat looks at /sys/fs/cgroup, else the first cgroup2 mount.
	if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then
		mnt=/sys/fs/cgroup
	else
		CGROUP_MOUNT=$BATS_TEST_TMPDIR/cgroup2
		mkdir -p "$CGROUP_MOUNT"
		mount -t cgroup2 none "$CGROUP_MOUNT" || fail "cannot mount cgroup2"
		mnt=$CGROUP_MOUNT
	fi
	CGROUP_DIR=$mnt/wpstat-stalls.$$
	mkdir "$CGROUP_DIR"
	# The row takes the cgroup of the task at its first event: move the
	# shell into the cgroup, then exec wpload (same pid).
	bash -c 'echo $$ >"$1/cgroup.procs" && exec wpload --file "$2" --size 256K --passes 1 --sync fsync --quiet' \
		_ "$CGROUP_DIR" "$f" >/dev/null &
	pid=$!
	wait "$pid"
	run --separate-stderr wpstat stalls --json --pid "$pid"
	assert_success
	jq -e --argjson id "$(stat -c %i "$CGROUP_DIR")" --arg p "/wpstat-stalls.$$" '
		(.stalls | length) == 1 and .stalls[0].cgroup == $id and
		.stalls[0].cgroup_path == $p' <<<"$output"
	run --separate-stderr wpstat stalls -o pid,cgroup --pid "$pid"
	assert_success
	assert_line --regexp " /wpstat-stalls\\.$$ +[^ ]+\$"
}

@test "stalls --pid and --sort" {
	local a b pa pb
	a=$(scratch_file ext4)
	b=$(scratch_file ext4)
	wpload_pid --file "$a" --size 256K --passes 3 --sync msync	# 64 + 128 faults
	pa=$WPLOAD_PID
	wpload_pid --file "$b" --size 256K --passes 1 --sync msync	# 64 faults
	pb=$WPLOAD_PID
	run --separate-stderr wpstat stalls --json --pid "$pa"
	assert_success
	jq -e --argjson pid "$pa" '(.stalls | length) == 1 and
		.stalls[0].tgid == $pid and .stalls[0].fault_first == 64 and
		.stalls[0].fault_wp == 128' <<<"$output"
	run --separate-stderr wpstat stalls --json --sort count
	assert_success
	jq -e '[.stalls[] | (.fault_first // 0) + (.fault_wp // 0) + (.stable_waits // 0) +
		(.wb_waits // 0) + (.pauses // 0)] as $e | $e == ($e | sort | reverse)' <<<"$output"
	jq -e --argjson a "$pa" --argjson b "$pb" '
		([.stalls[].tgid] | index($a)) < ([.stalls[].tgid] | index($b))' <<<"$output"
	run --separate-stderr wpstat stalls --json --sort time
	assert_success
	jq -e '[.stalls[] | .stall_ns // 0] as $t | $t == ($t | sort | reverse)' <<<"$output"
	# A process without rows is no error.
	run --separate-stderr wpstat stalls --json --pid "$(( $(cat /proc/sys/kernel/pid_max) - 1 ))"
	assert_success
	jq -e '.stalls == []' <<<"$output"
}

@test "stalls --format prometheus: sample lines parse, labels escaped (b)" {
	local f pid name link line
	"$PY" -c 'import prometheus_client' ||
		fail "prometheus_client missing: $PY -m pip install prometheus_client"
	f=$(scratch_file ext4)
	# comm is the name the program was exec'd by: one with a quote, a
	# space and a backslash, which the module writes as \040 and \134 and
	# the label must carry as \" and \\.
	name='wp"l d\x'
	link=$BATS_TEST_TMPDIR/$name
	ln -s "$(command -v wpload)" "$link"
	"$link" --file "$f" --size 256K --passes 2 --sync fsync --quiet >/dev/null &
	pid=$!
	wait "$pid"
	run --separate-stderr wpstat stalls --json --pid "$pid"
	assert_success
	jq -e --arg n "$name" '.stalls[0].comm == $n' <<<"$output"
	wpstat stalls --format prometheus --resolve "$WPSTAT_FS_DIR/ext4" >"$BATS_TEST_TMPDIR/stalls.prom"
	# Every line is a # HELP or # TYPE line or a sample: name{labels} value.
	while IFS= read -r line; do
		[[ $line =~ ^#\ (HELP|TYPE)\ wpstat_[a-z_]+\  ]] && continue
		[[ $line =~ ^wpstat_[a-z_]+(\{.*\})?\ [0-9]+(\.[0-9]+)?$ ]] ||
			fail "not a sample line: $line"
	done <"$BATS_TEST_TMPDIR/stalls.prom"
	grep -q '^# TYPE wpstat_stall_fault_first_total counter$' "$BATS_TEST_TMPDIR/stalls.prom"
	grep -q '^# TYPE wpstat_stall_stable_waits_total counter$' "$BATS_TEST_TMPDIR/stalls.prom"
	grep -q '^# TYPE wpstat_stall_pauses_total counter$' "$BATS_TEST_TMPDIR/stalls.prom"
	grep -q '^# TYPE wpstat_stall_pause_seconds_total counter$' "$BATS_TEST_TMPDIR/stalls.prom"
	grep -q '^# TYPE wpstat_stall_pause_max_seconds gauge$' "$BATS_TEST_TMPDIR/stalls.prom"
	grep -q '^# TYPE wpstat_stall_rows gauge$' "$BATS_TEST_TMPDIR/stalls.prom"
	"$PY" - "$BATS_TEST_TMPDIR/stalls.prom" "$pid" "$name" "$f" "$(sb_dev "$f")" \
		"$(stat -c %i "$f")" "$(module_level)" <<'EOF'
import sys
from prometheus_client.parser import text_string_to_metric_families

text = open(sys.argv[1], encoding="utf-8").read()
pid, comm, path, dev, ino, level = sys.argv[2:8]
families = list(text_string_to_metric_families(text))
assert families, "no metric families"
samples = {}
for fam in families:
    assert fam.name.startswith("wpstat_"), fam.name
    assert fam.documentation, "no HELP for " + fam.name
    if fam.name.endswith("_max_seconds"):
        assert fam.type == "gauge", (fam.name, fam.type)
    for s in fam.samples:
        if s.labels.get("pid") == pid:
            assert s.labels["comm"] == comm, s.labels
            assert s.labels["path"] == path, s.labels
            assert s.labels["dev"] == dev and s.labels["ino"] == ino, s.labels
            assert "gen" in s.labels, s.labels
            samples[s.name] = s.value
assert samples.get("wpstat_stall_fault_first_total") == 64, samples
assert samples.get("wpstat_stall_fault_wp_total") == 64, samples
assert not any(n.endswith("_ns_total") or n.endswith("_ns") for n in samples), samples
# fault_ns is timed at level timing only; at counts it has no series.
assert ("wpstat_stall_fault_seconds_total" in samples) == (level == "timing"), samples
EOF
}

@test "stalls at level timing: fault_ns is timed, stall_ns counts the waits inside faults once" {
	local f
	wpstat level timing >/dev/null
	f=$(scratch_file ext4)
	wpload_pid --file "$f" --size 256K --passes 2 --sync fsync
	run --separate-stderr wpstat stalls --json --pid "$WPLOAD_PID"
	assert_success
	# The stable, wb and journal waits of a store are made inside
	# page_mkwrite, and the read-in of a hole's page before it, so fault_ns
	# holds them already: stall = pause + the waits + the rest of the
	# fault time (unnamed), which the module measures fault by fault.  jbd2
	# is loaded (the ext4 scratch mount) when the level is set, so the
	# journal columns are numbers.  The dominant cause has the most time
	# of its own (the fault's: its unnamed time).
	jq -e '(.stalls | length) == 1 and (.stalls[0] |
		.fault_ns > 0 and .fault_max_ns > 0 and .fault_max_ns <= .fault_ns and
		(.journal_ns | type) == "number" and
		.fault_unnamed_ns > 0 and
		.fault_ns - .fault_unnamed_ns == .stable_ns + .wb_ns + .journal_ns + .readin_ns + .lock_ns and
		.stall_ns == .pause_ns + .stable_ns + .wb_ns + .journal_ns + .readin_ns + .lock_ns + .fault_unnamed_ns and
		.fault_sleep_ns == .fault_unnamed_ns - .fault_cpu_ns - .fault_runq_ns and .fault_sleep_ns >= 0 and
		({stable: .stable_ns, wb: .wb_ns, pause: .pause_ns, journal: .journal_ns,
		  readin: .readin_ns, lock: .lock_ns, fault: .fault_unnamed_ns}) as $own |
		$own[.dominant_cause] == ([$own[]] | max))' <<<"$output"
	run --separate-stderr wpstat stalls --pid "$WPLOAD_PID" -o pid,journal,fault,unnamed,cpu,runq,sleep
	assert_success
	[[ "${lines[0]}" =~ ^\ *pid\ +journal\ +fault\ +unnamed\ +cpu\ +runq\ +sleep\ +file$ ]] || fail "header: ${lines[0]}"
	[[ "${lines[1]}" != *" - "* ]] || fail "a column reads '-' at level timing: ${lines[1]}"
}

@test "stalls: bad arguments are usage errors" {
	local a
	for a in "--sort size" "--pid 0" "--pid x" "--format xml" "--json --format table" \
		 "extra" "--bogus"; do
		# shellcheck disable=SC2086 # words of the arguments
		run --separate-stderr wpstat stalls $a
		assert_failure 2
		assert_one_error
	done
	run --separate-stderr wpstat stalls --resolve /nonexistent
	assert_failure 1
	assert_one_error
}

# ---- run ---------------------------------------------------------------

@test "run --json: the command's own faults and what write-protected its file (c)" {
	local f out ns
	f=$(scratch_file ext4)
	out=$BATS_TEST_TMPDIR/run.json
	run --separate-stderr wpstat run --json --output "$out" -- \
		wpload --file "$f" --size 256K --passes 2 --sync msync --quiet
	assert_success
	# The keys run had before are still there.
	jq -e --arg f "$f" '.command[0] == "wpload" and .exit_status == 0 and
		.signal == null and .wall_ns > 0 and .reset == false and
		([.files[] | select(.path == $f)] | length) == 1' "$out"
	# Both msyncs cleaned 64 folios each: 128 folio_mkclean calls, all
	# started by msync (the flusher sleeps); the triggers add up to
	# mkclean_calls.
	jq -e --arg f "$f" '.write_protected_by.msync == 128 and
		([.write_protected_by[]] | add) == 128 and
		(.files[] | select(.path == $f) |
		 .deltas.mkclean_calls == 128 and .deltas.mkclean_msync == 128)' "$out"
	# wpload is the process run started: its one row, 64 + 64 faults.
	ns=$([ "$(module_level)" = timing ] && echo number || echo null)
	jq -e --arg f "$f" --arg ns "$ns" '.stalls.pid > 0 and
		(.stalls.rows | length) == 1 and
		.stalls.rows[0].tgid == .stalls.pid and .stalls.rows[0].comm == "wpload" and
		.stalls.rows[0].path == $f and .stalls.rows[0].fault_first == 64 and
		.stalls.rows[0].fault_wp == 64 and
		.stalls.by_cause.fault.first == 64 and .stalls.by_cause.fault.wp == 64 and
		.stalls.by_cause.fault.events == 128 and
		(.stalls.by_cause.fault.ns | type) == $ns and
		(.stalls.by_cause | keys) == ["fault", "journal", "lock", "pause", "readin", "stable", "sync_wb", "wb", "zil"] and
		(.stalls.stall_ns | type) == "number" and
		# Most own time (the fault: its unnamed time); with no time (level
		# counts) the wait with most events, "faults" if none waited.
		(.stalls.by_cause as $c | .stalls.dominant_cause as $d |
		 if $ns == "null" then
			([$c | to_entries[] | select(.key != "fault") | .value.events] | max) as $most |
			(if $most == 0 then $d == "faults" else $c[$d].events == $most end)
		 else
			([$c | to_entries[] | if .key == "fault" then .value.unnamed_ns else .value.ns end] | max) as $most |
			(if $d == "fault" then $c.fault.unnamed_ns else $c[$d].ns end) == $most
		 end)' "$out"
}

@test "run: text report has the triggers and the command's stalls" {
	local f
	f=$(scratch_file ext4)
	run --separate-stderr wpstat run -- wpload --file "$f" --size 256K --passes 2 --sync msync --quiet
	assert_success
	[[ $stderr == *"write-protected by: msync 128"* ]] || fail "no trigger line: $stderr"
	[[ $stderr =~ "stalls of pid "[0-9]+" (wpload): " ]] || fail "no stalls line: $stderr"
	[[ $stderr == *" in 128 faults (64 first, 64 write-protect)"* ]] ||
		fail "no fault line: $stderr"
}

@test "run: only the command's own process counts, not what it starts" {
	local f out
	f=$(scratch_file ext4)
	out=$BATS_TEST_TMPDIR/run.json
	# sh runs wpload as a child (the '; true' keeps it from exec'ing it):
	# the faults are the child's, with a pid run does not know.
	# shellcheck disable=SC2016 # $1 is sh's
	run --separate-stderr wpstat run --json --output "$out" -- \
		sh -c 'wpload --file "$1" --size 256K --passes 2 --sync msync --quiet >/dev/null; true' _ "$f"
	assert_success
	jq -e --arg f "$f" '.stalls.rows == [] and .stalls.by_cause.fault.events == 0 and
		.write_protected_by.msync == 128 and
		(.files[] | select(.path == $f) | .deltas.mkwrite_first == 64)' "$out"
}

# ---- top ---------------------------------------------------------------

@test "top --count 3 --interval 1: three blocks, the writer's row, no screen clearing (d)" {
	local f out=$BATS_TEST_TMPDIR/top.out pid i rc=0 writer
	f=$(scratch_file ext4)
	wpstat top --count 3 --interval 1 --resolve "$WPSTAT_FS_DIR/ext4" >"$out" 2>&1 &
	pid=$!
	# The writer starts once the first block is out, so after top's first
	# read however slow the guest: its row is new in a later interval.
	# It writes until top is done: one wpload that had not faulted within
	# the two intervals left (a loaded host) showed "0 rows changed".
	for i in $(seq 100); do
		grep -q '^wpstat top ' "$out" && break
		sleep 0.1
	done
	(while :; do write_file "$f"; sleep 0.2; done) &
	writer=$!
	wait "$pid" || rc=$?
	kill "$writer"
	wait "$writer" || true
	run cat "$out"
	[ "$rc" -eq 0 ] || fail "top exited $rc: $output"
	[ "$(grep -c '^wpstat top ' <<<"$output")" -eq 3 ] || fail "expected three blocks: $output"
	assert_line --regexp '^wpstat top  [0-9]{2}:[0-9]{2}:[0-9]{2}  interval 1s  [0-9]+ rows? changed'
	assert_line --regexp "^ *[0-9]+ wpload .* $f\$"
	refute_output --partial $'\e['
}

@test "top: bad arguments; SIGINT ends it with status 0" {
	local pid rc=0
	run --separate-stderr wpstat top --interval 0
	assert_failure 2
	assert_one_error
	run --separate-stderr wpstat top --limit 0
	assert_failure 2
	assert_one_error
	run --separate-stderr wpstat top --count x
	assert_failure 2
	assert_one_error
	run --separate-stderr wpstat top extra
	assert_failure 2
	assert_one_error
	wpstat top --interval 0.2 >"$BATS_TEST_TMPDIR/top.out" 2>&1 &
	pid=$!
	sleep 1.5
	kill -INT "$pid"
	wait "$pid" || rc=$?
	[ "$rc" -eq 0 ] || fail "top exited $rc: $(cat "$BATS_TEST_TMPDIR/top.out")"
	grep -q '^wpstat top' "$BATS_TEST_TMPDIR/top.out"
}

# ---- histogram and status ----------------------------------------------

@test "histogram: bad arguments change nothing; dev, inode and path show in status (e)" {
	local a dev f ino odd
	[ "$(histogram_scope)" = all ]
	for a in "" "frob" "all extra" "dev" "dev 8" "dev 8:x" "dev sda1" "dev 8:1 extra" \
		 "inode" "inode 8:1" "inode 8:1:x" "inode 8:1:-1" "inode 8:1:12:7:9" \
		 "inode 8:1:12:4294967296" "path" "--bogus"; do
		# shellcheck disable=SC2086 # words of the arguments
		run --separate-stderr wpstat histogram $a
		assert_failure 2
		assert_one_error
		[ "$(histogram_scope)" = all ] || fail "'histogram $a' changed the scope"
	done
	run --separate-stderr wpstat histogram path /nonexistent/file
	assert_failure 1
	assert_one_error
	# A path the control file cannot carry (a blank): refused here, with
	# the inode command that names the same file.
	dev=$(sb_dev "$WPSTAT_FS_DIR/ext4")
	odd="$WPSTAT_FS_DIR/ext4/$BATS_TEST_NAME.a b"
	touch "$odd"
	run --separate-stderr wpstat histogram path "$odd"
	assert_failure 2
	assert_one_error
	[[ $stderr == *"wpstat histogram inode $dev:$(stat -c %i "$odd")"* ]] || fail "$stderr"
	[ "$(histogram_scope)" = all ]

	run --separate-stderr wpstat histogram dev "$dev"
	assert_success
	assert_output "histogram scope: dev $dev"
	[ "$(histogram_scope)" = "dev $dev" ]
	run --separate-stderr wpstat status
	assert_success
	assert_line "histograms:  dev $dev"
	assert_line --regexp '^stalls: +[0-9]+ rows of [0-9]+ \([0-9]+ bytes each\), [0-9]+ overflow events$'
	run --separate-stderr wpstat status --json
	assert_success
	jq -e --arg s "dev $dev" '.histogram_scope == $s and
		(.stall_rows | type) == "number" and .max_stalls > 0 and
		(.stall_overflow_events | type) == "number" and .stall_row_bytes > 0' <<<"$output"

	# path: the module looks the file up; the summary names its inode.
	f=$(scratch_file ext4)
	touch "$f"
	ino=$(stat -c %i "$f")
	run --separate-stderr wpstat histogram path "$f"
	assert_success
	[[ $(histogram_scope) =~ ^inode\ $dev:$ino:[0-9]+$ ]] || fail "scope: $(histogram_scope)"
	assert_output "histogram scope: $(histogram_scope)"
	run --separate-stderr wpstat histogram inode "$dev:$ino"
	assert_success
	[ "$(histogram_scope)" = "inode $dev:$ino" ]	# no GEN: any generation
	run --separate-stderr wpstat histogram all
	assert_success
	[ "$(histogram_scope)" = all ]
}

# ---- permissions and a missing module ----------------------------------

@test "non-root: stalls, top and histogram are refused with one clear line (f)" {
	local f cmd
	require_nobody_tools wpstat
	f=$(scratch_file ext4)
	write_file "$f"
	for cmd in stalls "stalls --json" "stalls --format prometheus" "top --count 1 --interval 0.1"; do
		# shellcheck disable=SC2086 # words of the command
		run --separate-stderr as_nobody wpstat $cmd
		assert_failure 1
		assert_one_error
		[[ $stderr == *"root-only"* ]] || fail "'$cmd': $stderr"
	done
	run --separate-stderr as_nobody wpstat histogram dev "$(sb_dev "$f")"
	assert_failure 1
	assert_one_error
	[[ $stderr == *root* ]] || fail "histogram: $stderr"
	[ "$(histogram_scope)" = all ]
	# status still works, and shows what the summary (world-readable) has.
	run --separate-stderr as_nobody wpstat status --json
	assert_success
	jq -e '.histogram_scope == "all" and (.stall_rows | type) == "number"' <<<"$output"
}

@test "without the module: stalls, top and histogram say so" {
	local cmd
	rmmod wpstat
	for cmd in stalls "top --count 1" "histogram all"; do
		# shellcheck disable=SC2086
		run --separate-stderr wpstat $cmd
		assert_failure 1
		assert_one_error
		[[ $stderr == *"module not loaded"* ]] || fail "'$cmd': $stderr"
	done
}
