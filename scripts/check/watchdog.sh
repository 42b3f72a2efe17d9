#!/usr/bin/env bash
# Run a command and kill it only when it has gone silent: a hang is a
# command whose output (and every other file it is told to watch) has not
# changed for the hang limit.  A command that is slow but still writes is
# never killed for its time, however long it takes, short of the backstop.
#
#   watchdog.sh [--out FILE] [--watch PATH]... [--hang SECS] [--total SECS]
#               [--label NAME] [--tap FILE] [--running FILE] [--why FILE]
#               [--times FILE] [--heartbeat FILE] [--poll SECS]
#               -- COMMAND [ARGS...]
#
# --out FILE      the command's stdout and stderr go to FILE (otherwise the
#                 watchdog's own); FILE is watched, and is the TAP stream
#                 described and marked on a kill unless --tap says otherwise
# --watch PATH    also progress: a change of size or mtime of PATH, or of
#                 any file below it (a directory); repeatable
# --hang SECS     the silence that is a hang (default $WPSTAT_HANG_SECS, or
#                 600); 0: none
# --total SECS    the backstop: kill after SECS in all, output or not
#                 (default 0: none); for a command that writes forever
# --label NAME    names the command in the messages
# --tap FILE      the TAP stream to describe on a kill: the test it was
#                 running and its last line; after a kill it gets a
#                 "not ok - ..." line and the marker below
# --running FILE  a file whose first line is "SUITE TAPFILE" while a suite
#                 runs (scripts/check/guest-check.sh writes one): on a kill
#                 the message names SUITE and describes TAPFILE, which gets
#                 the marker only (the caller counts the failure; the host
#                 side of make check uses this for a whole guest)
# --why FILE      on a kill, the one-line reason is written here too
# --times FILE    each new line of --out, as it is seen, goes to FILE after
#                 the seconds since the start: how long each test took, to
#                 the poll's resolution
# --heartbeat FILE  touched whenever progress is seen: a watchdog further
#                 out that watches FILE sees this one's progress (the
#                 guest's suites write to their TMPDIR, which the host
#                 does not see)
# --poll SECS     how often to look (default: 5, or less for a short limit)
#
# On a kill: TERM, then KILL after 10 s, to every process of the command's
# session and every descendant (the kselftest harness puts each test in a
# process group of its own); a process that cannot die (uninterruptible
# sleep: the usual hang) is left behind, not waited for.  The marker line
# "# wpstat-watchdog: killed" tells scripts/check/tap-summary.sh that the
# tests after it did not run because of the one failure already counted.
#
# Exit status: the command's own; 124 if killed for silence, 125 if killed
# by the backstop.  When the command ends by itself, the longest silence
# goes to stderr: "watchdog: LABEL longest silence N s after: LINE", the
# line (of --out) that was the last for those N seconds.

set -u
set +m

hang=${WPSTAT_HANG_SECS:-600}
total=0
out=
tap=
label=command
why=
running=
times=
heartbeat=
poll=
watch=()

usage() {
	sed -n '2,40p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2; shift 2 ;;
	--watch) watch+=("$2"); shift 2 ;;
	--hang) hang=$2; shift 2 ;;
	--total) total=$2; shift 2 ;;
	--label) label=$2; shift 2 ;;
	--tap) tap=$2; shift 2 ;;
	--running) running=$2; shift 2 ;;
	--why) why=$2; shift 2 ;;
	--times) times=$2; shift 2 ;;
	--heartbeat) heartbeat=$2; shift 2 ;;
	--poll) poll=$2; shift 2 ;;
	--) shift; break ;;
	-h | --help) usage ;;
	*) echo "watchdog: unknown option '$1'" >&2; usage ;;
	esac
done
[ $# -gt 0 ] || { echo "watchdog: no command given" >&2; usage; }
[ -z "$out" ] || watch+=("$out")
[ -n "$tap" ] || tap=$out
if [ -z "$poll" ]; then
	poll=5
	for l in $hang $total; do
		[ "$l" = 0 ] || [ $((l / 4)) -ge "$poll" ] || poll=$((l / 4))
	done
	[ "$poll" -ge 1 ] || poll=1
fi

# Everything the command is made of: its session (setsid below makes the
# command's first process its leader) and its descendants, wherever they
# moved.  Never this script or its sleeper.
members() {
	ps -e -o pid=,ppid=,sid= | awk -v root="$pid" -v self=$$ -v sleeper="${sleeper:-0}" '
		{ parent[$1] = $2; sid[$1] = $3; pids[++n] = $1 }
		END {
			in_tree[root] = 1
			do {
				grew = 0
				for (i = 1; i <= n; i++) {
					p = pids[i]
					if (!(p in in_tree) && (parent[p] in in_tree || sid[p] == root)) {
						in_tree[p] = 1; grew = 1
					}
				}
			} while (grew)
			for (p in in_tree)
				if (p != self && p != sleeper && (p in parent))
					print p
		}'
}

kill_all() {
	local sig=$1 p
	for p in $(members); do
		kill "-$sig" "$p" 2>/dev/null
	done
}

# The size and mtime of every watched file: any change is progress.
signature() {
	local p
	for p in "${watch[@]}"; do
		find "$p" -type f -printf '%s %T@ %p\n' 2>/dev/null
	done | cksum
}

# "running TEST; last line: LINE" from a TAP stream: the test is the last
# "#  RUN" line (the kselftest harness, and bats through
# scripts/check/bats-format-tap-run) that no "ok"/"not ok" line followed.
describe() {	# TAPFILE
	local f=$1 test last
	[ -n "$f" ] && [ -f "$f" ] || { echo "no output"; return; }
	test=$(awk '
		/^#  RUN / { t = $0; sub(/^#  RUN +/, "", t); sub(/ \.\.\.$/, "", t); open = 1; next }
		/^(not )?ok / { open = 0; after = $0 }
		END {
			if (open) print "test " t
			else if (after != "") print "between tests, after \"" after "\""
			else print "before its first test"
		}' "$f")
	last=$(grep -v '^[[:space:]]*$' "$f" | tail -n 1 | cut -c 1-200)
	echo "running $test; last line: \"$last\""
}

# The bytes of --out from OFFSET up to END, a line each with ELAPSED
# before it, to --times.
timeline() {	# OFFSET END ELAPSED
	[ -n "$times" ] && [ -n "$out" ] && [ "$2" -gt "$1" ] || return 0
	head -c "$2" "$out" 2>/dev/null | tail -c +$(($1 + 1)) | awk -v t="$3" '{ print t " " $0 }' >>"$times"
}

size_of() {
	[ -n "$out" ] || { echo 0; return; }
	stat -c %s "$out" 2>/dev/null || echo 0
}

last_line() {
	[ -n "$out" ] || return 0
	grep -v '^[[:space:]]*$' "$out" 2>/dev/null | tail -n 1 | cut -c 1-200
}

mark() {	# TAPFILE [NOT-OK-TEXT]
	local f=$1
	[ -n "$f" ] || return 0
	{
		[ -z "${2:-}" ] || echo "not ok - $2"
		echo "# wpstat-watchdog: killed; the tests after this did not run"
	} >>"$f"
}

# Before the command starts, so that its first lines are a change.
[ -z "$out" ] || : >"$out"
prev=$(signature)
if [ -n "$out" ]; then
	setsid "$@" >"$out" 2>&1 &
else
	setsid "$@" &
fi
pid=$!

start=$SECONDS
last=$SECONDS
longest=0
longest_after=
offset=0
line=
killed=
sleeper=
[ -z "$times" ] || : >"$times"
while :; do
	sleep "$poll" &
	sleeper=$!
	wait -n "$pid" "$sleeper" 2>/dev/null
	if ! kill -0 "$pid" 2>/dev/null; then
		kill "$sleeper" 2>/dev/null
		wait "$sleeper" 2>/dev/null
		break
	fi
	wait "$sleeper" 2>/dev/null
	sleeper=
	now=$SECONDS
	cur=$(signature)
	if [ "$cur" != "$prev" ]; then
		prev=$cur
		if [ $((now - last)) -gt "$longest" ]; then
			longest=$((now - last))
			longest_after=$line
		fi
		last=$now
		end=$(size_of)
		timeline "$offset" "$end" $((now - start))
		offset=$end
		line=$(last_line)
		[ -z "$heartbeat" ] || touch "$heartbeat" 2>/dev/null
	fi
	if [ "$hang" != 0 ] && [ $((now - last)) -ge "$hang" ]; then
		killed=hang
		break
	fi
	if [ "$total" != 0 ] && [ $((now - start)) -ge "$total" ]; then
		killed=total
		break
	fi
done

if [ -z "$killed" ]; then
	wait "$pid"
	rc=$?
	now=$SECONDS
	if [ $((now - last)) -gt "$longest" ]; then
		longest=$((now - last))
		longest_after=$line
	fi
	timeline "$offset" "$(size_of)" $((now - start))
	if [ -n "$out" ]; then
		echo "watchdog: $label longest silence $longest s after: ${longest_after:-(the start)}" >&2
	else
		echo "watchdog: $label longest silence $longest s" >&2
	fi
	exit $rc
fi

# Describe before killing: the kill itself may add lines.
timeline "$offset" "$(size_of)" $((now - start))
suite=
if [ -n "$running" ]; then
	tap=
	[ ! -s "$running" ] || read -r suite tap <"$running"
	if [ -n "$suite" ]; then
		what="$suite, $(describe "$tap")"
	else
		what="no suite running (booting, setting up, or between suites)"
	fi
else
	what=$(describe "$tap")
fi
if [ $killed = hang ]; then
	msg="$label hung: nothing written for $((now - last)) s (hang limit $hang s), killed; $what"
	rc=124
else
	msg="$label still running after $((now - start)) s, killed by the backstop of $total s; $what"
	rc=125
fi
echo "watchdog: $msg" >&2
[ -z "$why" ] || echo "$msg" >"$why"

kill_all TERM
for _ in $(seq 20); do
	[ -n "$(members)" ] || break
	sleep 0.5
done
kill_all KILL
for _ in $(seq 20); do
	[ -n "$(members)" ] || break
	sleep 0.5
done
left=$(members | xargs)
[ -z "$left" ] || echo "watchdog: left behind, unkillable: $(ps -o pid=,stat=,wchan:32=,args= -p "${left// /,}" 2>/dev/null | cut -c 1-120 | tr '\n' ';')" >&2

if [ -n "$running" ]; then
	mark "$tap"
else
	mark "$tap" "$msg"
fi
exit $rc
