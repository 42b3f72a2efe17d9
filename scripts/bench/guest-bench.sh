#!/usr/bin/env bash
# Runs inside the guest (scripts/bench/bench.sh -> vm-run.sh --no-load): the
# benchmark of wpstat's cost per event.  Leaves in $WPSTAT_RESULTS:
#   runs.csv      one line per (round, configuration, workload) run
#   mech.csv      one line per (round, mechanism): wpmech.ko's loop times
#   extra.txt     key=value lines: memory per inode, /proc/wpstat/inodes
#                 read time with a full table, overflow behaviour
#   enabled-<config>.txt, kprobes-<config>.txt, probes-<config>.txt
#                 /sys/kernel/tracing/enabled_functions, debugfs
#                 kprobes/list and wpstat/probes after the first round's
#                 runs (module configurations): what is attached where
#   perf-*.txt    profiles (BENCH_PERF=1)
#
# Configurations: base (no module), floor-counts and floor-timing (insmod
# floor=1 level=...: the same attachments, empty handlers), counts and
# timing (insmod level=...), timing-skip (level=timing without the points
# only level timing attaches, skip_probes=$timing_own: timing minus it is
# what they cost),
# bt-kprobe (scripts/bench/wpstat.bt: kprobes, kretprobes) and bt-kfunc
# (scripts/bench/wpstat-kfunc.bt: BPF trampolines); alt-counts and
# alt-timing, only when asked for, load BENCH_ALT_MODULE instead (another
# revision's module: bench.sh's BENCH_ALT), so that a change is measured
# beside what it changes.  In each round every configuration is set up
# once, in an order rotated by one per round, and runs W1, W2, W3, W4, W5,
# W6 once each:
#   W1  wpload mmap rewrite of a 4 MiB ext4 file, msync after each pass
#       (its pages cached in order-0 folios: one fault per store)
#   W2  wpload pwrite(2) of 4 KiB chunks over a cached, clean 16 MiB file
#   W3  wpfiles: open + 4 KiB pwrite + close of each of 10,000 files
#   W4  wpfiles anon: a store to each page of a 16 MiB anonymous mapping,
#       then munmap, 8 times: page faults that are none of wpstat's
#       business, for what level timing's probe on every fault costs
#   W5  wpfiles pipes: create and close a pipe and a socket pair, 8,000
#       times: 24,000 inodes destroyed (__destroy_inode, the evict
#       point), none of them wpstat's, as a busy broker destroys them all
#       day; its events are the evict point's hits
#   W6  wpfiles waits: 2,000 pages of a file on a slow device (ext4 on
#       null_blk behind dm-delay, 1 ms each way) read uncached, dirtied
#       by a writer process, written back and waited for, by a process
#       that maps and writes nothing: the page-bit sleeps of a reader and
#       a syncer, for what level timing's probe on every such sleep costs
#       them; its events are the writeback waits (tp_wait's hits), one an
#       op
# Every run starts after sync(1) and a pause, with clean pages and idle
# writeback; the module is loaded afresh each round, so W3 inserts every
# file into an empty table.  One unrecorded warm-up round (base) first.
# After the rounds, the mechanism part (BENCH_MECH=1): wpmech.ko times a
# loop of calls with nothing and then with each attachment mechanism.
#
# Tunables (environment): BENCH_ROUNDS (5), BENCH_CONFIGS (all eight, in
# the order above; a subset such as "base counts bt-kfunc" runs only
# those), BENCH_W1_PASSES (8), BENCH_W2_MIB (16), BENCH_W3_FILES (10000),
# BENCH_W4_PAGES (4096), BENCH_W4_PASSES (8), BENCH_W5_PAIRS (8000: a
# base run about as long as W3's), BENCH_W5_PASSES (1), BENCH_W6_OPS (2000),
# BENCH_FILL (65536), BENCH_OVERFLOW_MAX (2000), BENCH_PERF (0),
# BENCH_EXTRAS (1: memory, overflow and read-time measurements),
# BENCH_MECH (1), BENCH_MECH_CALLS (200000: calls per loop).

set -u
top=${WPSTAT_TOP:?run through scripts/vm/vm-run.sh}
out=${WPSTAT_RESULTS:?}
module=${WPSTAT_MODULE:?}
mech_module=$(dirname "$module")/bench/wpmech.ko
rounds=${BENCH_ROUNDS:-5}
all_configs="base floor-counts counts floor-timing timing timing-skip bt-kprobe bt-kfunc"
# The kretprobes only level timing attaches (NONE at level counts in
# uapi/wpstat_probes.def, read by scripts/lib/wpstat_counters.py): the
# whole write fault and the waits it times.  timing-skip loads level
# timing without them.
timing_own=$(python3 "$top/scripts/lib/wpstat_counters.py" --timing-own | paste -sd,)
[ -n "$timing_own" ] || { echo "guest-bench: no timing-only probe in the module's list (scripts/lib/wpstat_counters.py --timing-own)" >&2; exit 1; }
read -r -a configs <<<"${BENCH_CONFIGS:-$all_configs}"
# Named only, never by default: they need bench.sh's BENCH_ALT.
known_configs=$all_configs${BENCH_ALT_MODULE:+ alt-counts alt-timing}
mech_calls=${BENCH_MECH_CALLS:-200000}
# fprobe and fprobe_exit need CONFIG_FPROBE (6.12 has it, Debian's 6.1 not):
# there wpmech refuses them with EOPNOTSUPP and they are recorded as n/a.
mechs=(none tracepoint ftrace ftrace_regs ftrace2 kprobe ftrace_kprobe kretprobe kretprobe_refused
	kretprobe_int3 kretprobe_int3_refused fprobe fprobe_exit)
w1_passes=${BENCH_W1_PASSES:-8}
w2_mib=${BENCH_W2_MIB:-16}
w3_files=${BENCH_W3_FILES:-10000}
w4_pages=${BENCH_W4_PAGES:-4096}
w4_passes=${BENCH_W4_PASSES:-8}
w5_pairs=${BENCH_W5_PAIRS:-8000}
w5_passes=${BENCH_W5_PASSES:-1}
w6_ops=${BENCH_W6_OPS:-2000}
workloads="W1 W2 W3 W4 W5 W6"
fill=${BENCH_FILL:-65536}
overflow_max=${BENCH_OVERFLOW_MAX:-2000}
dbg=/sys/kernel/debug/wpstat
mnt=/tmp/bench
slow=/tmp/wpstat-slow	# wps-slowdev's mount point
nocount=/nonexistent/wpstat-inodes	# wpload: same user-space work everywhere
export BPFTRACE_MAP_KEYS_MAX=65536
# shellcheck source=scripts/vm/guest-lib.sh
. "$top/scripts/vm/guest-lib.sh"

# With the guest's uptime (instruction time under -icount): where a run's
# guest time went, next to the kernel log's timestamps.
log() { printf 'guest-bench: [%s] %s\n' "$(cut -d' ' -f1 /proc/uptime)" "$*" >&2; }
die() { log "error: $*"; exit 1; }
ms() { echo $(($(date +%s%N) / 1000000)); }
kv() { printf '%s=%s\n' "$1" "$2" >>"$out/extra.txt"; }
loaded() { grep -q '^wpstat ' /proc/modules; }

# ---- scratch filesystems ---------------------------------------------------
# ram0: the workloads' ext4; ram1: an ext4 with room for $fill small files.
setup() {
	guest_ramdisks 2 400 || return 1
	# No lazy inode-table init thread, and no journal commit by timer
	# in the middle of a run (sync commits before every run).
	guest_mkfs ext4 /dev/ram0 -E lazy_itable_init=0,lazy_journal_init=0 &&
		guest_mount /dev/ram0 $mnt/ext4 -o commit=600 || return 1
	guest_mkfs ext4 /dev/ram1 -E lazy_itable_init=0,lazy_journal_init=0 -b 1024 \
		-N $((fill + 4096)) &&
		guest_mount /dev/ram1 $mnt/fill -o commit=600 || return 1
	# Only what a run starts cleans pages.
	guest_writeback_quiet
	wpload --file $mnt/ext4/w1 --size 4M --mode write --quiet --counters $nocount &&
	# W1's pages in order-0 folios, so that every store takes its fault:
	# from 6.16 ext4 caches large folios (the written file: two of 2 MiB
	# on 7.2, one fault remapping 512 pages).  Evicted, then read back by
	# store faults without readahead (MADV_RANDOM), one page at a time;
	# ext4 caches order-0 folios before 6.16 anyway.
	wpload --file $mnt/ext4/w1 --size 4M --cold --madvise random,nohugepage \
		--sync msync --quiet --counters $nocount &&
	wpload --file $mnt/ext4/w2 --size ${w2_mib}M --mode write --quiet --counters $nocount &&
	mkdir -p $mnt/ext4/w3 && wpfiles create $mnt/ext4/w3 "$w3_files" >/dev/null || return 1
	# W6's slow device, as the suites make it (wps-slowdev, at $slow):
	# writes and reads complete 1 ms late, no stable pages.
	wps-slowdev up ext4 1 0 "" 1 || return 1
	sync
}

# ---- configurations --------------------------------------------------------
bt_pid=

# bpftrace SCRIPT CONFIG: start it and return once its probes are attached.
bt_start() {
	local t0 i log=$out/$2.log
	t0=$(ms)
	: >"$log"
	bpftrace "$1" >>"$log" 2>&1 &
	bt_pid=$!
	# Ready when its last probe first fires (the scripts' interval probe,
	# attached after all the others): "Attaching N probes..." comes before
	# any is attached, and attaching them took 10 s of guest time on 6.12.
	for i in $(seq 1 1500); do
		grep -q '^wpstat-bt: ready' "$log" && break
		kill -0 $bt_pid 2>/dev/null || break
		sleep 0.2
	done
	if ! { kill -0 $bt_pid 2>/dev/null && grep -q '^wpstat-bt: ready' "$log"; }; then
		# A script bpftrace refuses on this kernel (5.10: see
		# bt_adapt) is skipped for the whole run, with bpftrace's
		# first error as the reason, instead of ending the benchmark.
		log "bpftrace ($2) did not start: $(cat "$log")"
		kill -9 $bt_pid 2>/dev/null
		wait $bt_pid 2>/dev/null
		bt_pid=
		kv "skipped_$2" "bpftrace did not start: $(grep -m 1 -E 'ERROR|error' "$log" | tr -s ' \t' ' ')"
		return 1
	fi
	kv start_ms_$2 "$(($(ms) - t0))"
	kv attached_$2 "$(wc -l </sys/kernel/debug/kprobes/list) kprobes, $(wc -l </sys/kernel/tracing/enabled_functions) ftrace sites"
}

# The bpftrace scripts name the functions and tracepoints of 6.x.  A
# kernel from before the folio conversions (5.10) has the page-era ones,
# as wpstat's module probes (kmod/wpstat_compat.h): page_mkclean,
# wait_for_stable_page (a struct page first, "page" to kfunc's args),
# balance_dirty_pages_ratelimited (no flags: never BDP_ASYNC) and the
# events writeback_dirty_page, wait_on_page_writeback (same fields).
# Each name is replaced only where this kernel lacks it and has the old
# one; the copy is what runs, and extra.txt says what was replaced.
# Debian's bpftrace 0.17 still refuses both on 5.10: the structs it makes
# of the writeback events there have an ino_t field it cannot resolve
# ("unknown type name 'ino_t'"), and a macro for it in the script turns
# its BTF types off.  bt_start then skips the configuration, saying why.
ksym() { grep -qE " [tTwW] $1\$" /proc/kallsyms; }
bt_adapt() {
	local src=$1 dst=/tmp/bench-bt/${1##*/} ev=/sys/kernel/tracing/events/writeback e=() why=
	mkdir -p /tmp/bench-bt
	if ! ksym folio_mkclean && ksym page_mkclean; then
		e+=(-e 's/folio_mkclean/page_mkclean/g')
		why+=" page_mkclean"
	fi
	if ! ksym folio_wait_stable && ksym wait_for_stable_page; then
		e+=(-e 's/folio_wait_stable/wait_for_stable_page/g')
		why+=" wait_for_stable_page"
	fi
	if [ ${#e[@]} != 0 ]; then
		e+=(-e 's/args->folio/args->page/g' -e 's/struct folio \*/struct page */g')
	fi
	if ! ksym balance_dirty_pages_ratelimited_flags; then
		e+=(-e 's/balance_dirty_pages_ratelimited_flags/balance_dirty_pages_ratelimited/g'
			-e 's/args->flags & 1/0/' -e 's/arg1 & 1/0/')
		why+=" balance_dirty_pages_ratelimited"
	fi
	if [ ! -d $ev/writeback_dirty_folio ] && [ -d $ev/writeback_dirty_page ]; then
		e+=(-e 's/writeback:writeback_dirty_folio/writeback:writeback_dirty_page/')
		why+=" writeback_dirty_page"
	fi
	if [ ! -d $ev/folio_wait_writeback ] && [ -d $ev/wait_on_page_writeback ]; then
		e+=(-e 's/writeback:folio_wait_writeback/writeback:wait_on_page_writeback/')
		why+=" wait_on_page_writeback"
	fi
	if [ ${#e[@]} = 0 ]; then
		cp "$src" "$dst"
	else
		sed "${e[@]}" "$src" >"$dst"
		kv "bt_page_era_${src##*/}" "${why# }"
	fi || return 1
	echo "$dst"
}

# insmod with these parameters, and check that the level asked for is the
# one in force (a module that ignored level= would make two configurations
# silently the same).
wp_load() {
	local lvl=$1 ko=$module
	shift
	if [ "${1:-}" = alt ]; then
		ko=${BENCH_ALT_MODULE:?alt configurations need BENCH_ALT (bench.sh)}
		shift
	fi
	insmod "$ko" level="$lvl" "$@" || die "insmod $ko level=$lvl $*"
	grep -qx "level $lvl" $dbg/config || die "module not at level $lvl: $(grep '^level' $dbg/config)"
}

cfg_enter() {
	case $1 in
	base) ;;
	floor-counts) wp_load counts floor=1 ;;
	counts) wp_load counts ;;
	floor-timing) wp_load timing floor=1 ;;
	timing) wp_load timing ;;
	timing-skip)
		wp_load timing skip_probes=$timing_own
		# A module that does not know the names would attach them.
		[ "$(awk '$1 == "fault" { print $4 }' $dbg/probes)" = skipped ] ||
			die "timing-skip: the fault point is not skipped: $(grep '^fault ' $dbg/probes)"
		;;
	alt-counts) wp_load counts alt ;;
	alt-timing) wp_load timing alt ;;
	bt-kprobe) bt_start "$bt_kprobe" "$1" ;;
	bt-kfunc) bt_start "$bt_kfunc" "$1" ;;
	*) die "unknown configuration $1" ;;
	esac
}

cfg_leave() {
	case $1 in
	floor-counts | counts | floor-timing | timing | timing-skip | alt-*) rmmod wpstat || die "rmmod" ;;
	bt-*)
		# SIGKILL: no map printing at exit; closing the perf events and
		# BPF links detaches every probe before the process is reaped.
		kill -9 $bt_pid
		wait $bt_pid 2>/dev/null
		bt_pid=
		bt_gone "$1"
		;;
	esac
}

# The next configuration must start with nothing of bpftrace's left: no
# kprobe, and no ftrace site (kprobes on ftrace sites, BPF trampolines'
# direct calls).  Releasing a BPF trampoline may lag the process's exit.
bt_gone() {
	local i
	for i in $(seq 1 50); do
		[ ! -s /sys/kernel/debug/kprobes/list ] &&
			[ ! -s /sys/kernel/tracing/enabled_functions ] && return
		sleep 0.2
	done
	log "warning: $1 left attachments behind"
	kv leftover_$1 "$(cat /sys/kernel/debug/kprobes/list /sys/kernel/tracing/enabled_functions | wc -l)"
	cat /sys/kernel/debug/kprobes/list /sys/kernel/tracing/enabled_functions >"$out/leftover-$1.txt"
}

# What a module configuration attached, once (the first round): the
# functions ftrace calls something at (with the ops' trampoline and the
# callback: wpstat's ftrace_ops, or kprobe_ftrace_handler for kretprobes),
# the kprobes (a breakpoint where there is no ftrace site) and the
# module's own list of points.
save_attachments() {
	cat /sys/kernel/tracing/enabled_functions >"$out/enabled-$1.txt" 2>&1
	cat /sys/kernel/debug/kprobes/list >"$out/kprobes-$1.txt" 2>&1
	cat $dbg/probes >"$out/probes-$1.txt"
}

# ---- one run ---------------------------------------------------------------
# runs.csv: the hits of every attachment point and the event counters
# (every counter of uapi/wpstat_counters.def that counts events, not ns;
# then the summary's untracked_events), both only known in the counts and
# timing configurations ("" elsewhere, and "" for what the level does not
# produce or the module does not list).  The points are those of
# uapi/wpstat_probes.def, in its order (set in counter_columns); values
# are taken by name, so a module with more or fewer points still fills the
# right columns.
points=
all_counters=	# every counter, for the names used below
csv_cols=
csv_blank=
# The events of a run (the denominator of the cost per event): the hits
# of the points on the fast path, which fire about once per page or write.
# Left out: the slow path (bdp, wait_bit, tp_wait, tp_bdp fire only where a
# task is throttled or waits for writeback: a few per run, in the hits
# columns), evict (inode destruction: W1-W4 destroy none in their loops)
# and tp_exit (process exits: outside the timed loop), and fault_dirty,
# which is only looked up.  W5's events are evict's hits instead: each op
# destroys an inode and nothing else of wpstat's fires.  W6's are its
# writeback waits (tp_wait), one an op beside its read's wait.
event_points="mkwrite mkclean stable bdp_ratelimited tp_dirty"
w5_event_points="evict"
w6_event_points="tp_wait"

# The event points of workload $1.
events_of() {
	case $1 in
	W5) echo "$w5_event_points" ;;
	W6) echo "$w6_event_points" ;;
	*) echo "$event_points" ;;
	esac
}

# Set all_counters, csv_cols and csv_blank (not at start-up: the script is
# also what perf profiles, through --run-workload).
counter_columns() {
	local lib=$top/scripts/lib/wpstat_counters.py ev_counters p
	all_counters=$(python3 "$lib" | xargs)
	ev_counters=$(python3 "$lib" --events | xargs)
	points=$(python3 "$lib" --probes | xargs)
	if [ -z "$all_counters" ] || [ -z "$ev_counters" ] || [ -z "$points" ]; then
		die "cannot read the counter and probe names ($lib)"
	fi
	# The events' points must be points of the module.
	for p in $event_points $w5_event_points $w6_event_points; do
		[[ " $points " == *" $p "* ]] || die "event point $p is not in wpstat_probes.def"
	done
	csv_cols="$(for p in $points; do printf 'hits_%s ' "$p"; done)$ev_counters untracked_events"
	csv_blank=$(for c in $csv_cols; do printf ,; done)	# events and every column empty
}

csv_header() {
	echo "kernel,round,slot,config,workload,wall_ns,ops,cpu_ns,events,${csv_cols// /,}" >"$out/runs.csv"
}

# name value lines: every point's hits (hits_<point>) and the summary.
snapshot() {
	{
		awk 'NR > 1 { print "hits_" $1, $5 }' $dbg/probes
		cat /proc/wpstat/summary
	} >"$1"
}

# The CSV fields "events,<csv_cols>" from two snapshots ($1, $2) with the
# events the hits of the points $3: differences, "" where a value is
# missing or not a number ("-": not at this level).
snapshot_diff() {
	awk -v cols="$csv_cols" -v evp="$3" '
		FNR == NR { a[$1] = $2; next }
		{ b[$1] = $2 }
		END {
			num = "^[0-9]+$"
			n = split(cols, c, " ")
			for (i = 1; i <= n; i++) {
				k = c[i]
				d[k] = (k in a) && (k in b) && a[k] ~ num && b[k] ~ num ? b[k] - a[k] : ""
			}
			m = split(evp, e, " ")
			for (i = 1; i <= m; i++)
				ev += d["hits_" e[i]]
			line = ev
			for (i = 1; i <= n; i++)
				line = line "," d[c[i]]
			print line
		}' "$1" "$2"
}

run_workload() {
	case $1 in
	# MADV_RANDOM: a page reclaim took is read back order-0 by its fault;
	# MADV_NOHUGEPAGE: khugepaged does not collapse the mapped pages into
	# a large folio between runs (7.2 kept firing 82 events a run with
	# MADV_RANDOM alone).
	W1) wpload --file $mnt/ext4/w1 --size 4M --passes "$w1_passes" \
		--madvise random,nohugepage --sync msync --json --counters $nocount |
		jq -r '"\(.totals.wall_ns) \(.totals.ops) \(.totals.cpu_ns)"' ;;
	W2) wpload --file $mnt/ext4/w2 --size ${w2_mib}M --mode write \
		--json --counters $nocount |
		jq -r '"\(.totals.wall_ns) \(.totals.ops) \(.totals.cpu_ns)"' ;;
	W3) wpfiles touch $mnt/ext4/w3 "$w3_files" | jq -r '"\(.wall_ns) \(.files) \(.cpu_ns)"' ;;
	# Its ops are the faults it took (getrusage), one per page touched
	# unless huge pages or a reclaim got in the way.
	W4) wpfiles anon "$w4_pages" --passes "$w4_passes" |
		jq -r '"\(.wall_ns) \(.faults) \(.cpu_ns)"' ;;
	# Its ops are the inodes it destroyed: one per pipe, two per socket
	# pair.
	W5) wpfiles pipes "$w5_pairs" --passes "$w5_passes" |
		jq -r '"\(.wall_ns) \(.inodes) \(.cpu_ns)"' ;;
	# Its ops are its pages read, written back and waited for.
	W6) wpfiles waits $slow/w6 "$w6_ops" | jq -r '"\(.wall_ns) \(.ops) \(.cpu_ns)"' ;;
	esac
}

# Clean pages, and let deferred work (freeing a module's table or
# bpftrace's maps, writeback completions) finish before the clock starts.
settle() {
	sync
	sleep 1
}

one_run() {
	local round=$1 slot=$2 cfg=$3 w=$4 res ev counting=0
	settle
	# No reset: the module was loaded for this round, so its table is
	# fresh and W3 inserts every file.
	case $cfg in
	counts | timing | timing-skip | alt-counts | alt-timing) counting=1 ;;
	esac
	[ $counting = 0 ] || snapshot /tmp/bench-snap0
	res=$(run_workload "$w") || die "$w failed in $cfg"
	[ -n "$res" ] || die "$w gave no result in $cfg"
	if [ $counting = 1 ]; then
		snapshot /tmp/bench-snap1
		ev=$(snapshot_diff /tmp/bench-snap0 /tmp/bench-snap1 "$(events_of "$w")")
	else
		ev=$csv_blank
	fi
	echo "$(uname -r),$round,$slot,$cfg,$w,${res// /,},$ev" >>"$out/runs.csv"
}

# ---- extras ----------------------------------------------------------------
meminfo() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
sum_val() { awk -v k="$1" '$1 == k { print $2 }' /proc/wpstat/summary; }

# Bytes per tracked inode: the table is preallocated (vzalloc), so compare
# the vmalloc use of two loads with different max_inodes.
memory_per_inode() {
	local small=1024 big=262144 v0 v1
	insmod "$module" max_inodes=$small || die insmod
	v0=$(meminfo VmallocUsed)
	rmmod wpstat
	insmod "$module" max_inodes=$big || die insmod
	v1=$(meminfo VmallocUsed)
	kv entry_bytes "$(sum_val entry_bytes)"
	rmmod wpstat
	kv vmalloc_kib_max_inodes_$small "$v0"
	kv vmalloc_kib_max_inodes_$big "$v1"
	kv measured_bytes_per_inode "$(((v1 - v0) * 1024 / (big - small)))"
}

# Fill a max_inodes=$fill table with that many files, then time reading it.
read_full_table() {
	local t0 t1 i n
	insmod "$module" max_inodes="$fill" || die insmod
	t0=$(ms)
	# Creating and writing each file dirties it: one new inode each.
	wpfiles create $mnt/fill "$fill" --size 1 >/dev/null || die "fill"
	kv fill_files "$fill"
	kv fill_ms "$(($(ms) - t0))"
	kv fill_tracked_inodes "$(sum_val tracked_inodes)"
	kv fill_untracked_events "$(sum_val untracked_events)"
	# dd times its own copy loop (no exec or loading in the interval);
	# 128 KiB reads, like cat.
	for i in 1 2 3; do
		kv read_inodes_s_$i "$(LC_ALL=C dd if=/proc/wpstat/inodes of=/dev/null bs=128k 2>&1 |
			sed -n 's/.*copied, \([0-9.e-]*\) s.*/\1/p')"
	done
	kv read_inodes_lines "$(wc -l </proc/wpstat/inodes)"
	t0=$(date +%s%N)
	wpstat show --top 10 >/dev/null 2>&1
	kv wpstat_show_top10_ns "$(($(date +%s%N) - t0))"
	# The same again split by `time`: the user part is the CLI's parsing and
	# sorting, the system part mostly the kernel's rendering of the table.
	local TIMEFORMAT='%U %S' us
	us=$({ time wpstat show --top 10 >/dev/null 2>&1; } 2>&1)
	kv wpstat_show_top10_user_s "${us% *}"
	kv wpstat_show_top10_sys_s "${us#* }"
	rmmod wpstat
	umount $mnt/fill && guest_mkfs ext4 /dev/ram1 >/dev/null	# 65536 files: faster than rm
}

# W3 with a table smaller than the file set: memory must stay flat and
# every event of an inode without a slot must be counted as untracked.
overflow() {
	local pass rows tot exp
	insmod "$module" max_inodes="$overflow_max" || die insmod
	sync
	echo reset >$dbg/control
	for pass in 1 2; do
		kv overflow_${pass}_before_vmalloc_kib "$(meminfo VmallocUsed)"
		kv overflow_${pass}_before_slab_kib "$(meminfo Slab)"
		kv overflow_${pass}_before_memavailable_kib "$(meminfo MemAvailable)"
		wpfiles touch $mnt/ext4/w3 "$w3_files" >/dev/null || die W3
		kv overflow_${pass}_after_vmalloc_kib "$(meminfo VmallocUsed)"
		kv overflow_${pass}_after_slab_kib "$(meminfo Slab)"
		kv overflow_${pass}_after_memavailable_kib "$(meminfo MemAvailable)"
		sync
	done
	kv overflow_max_inodes "$overflow_max"
	kv overflow_files "$w3_files"
	kv overflow_tracked_inodes "$(sum_val tracked_inodes)"
	kv overflow_untracked_events "$(sum_val untracked_events)"
	# One table lookup per: mkwrite (first or wp), mkclean call, stable
	# call, wb wait, dirtied folio, ratelimited call, throttled entry, and
	# two per pause (the pause and its length).  Lookups that found no
	# slot = the summary totals minus the sum over the table's rows.
	local c
	for c in mkwrite_first mkwrite_wp mkclean_calls stable_calls wb_waits dirtied bdp_calls bdp_throttled bdp_pauses; do
		case " $all_counters " in
		*" $c "*) ;;
		*) die "overflow: counter $c is not in uapi/wpstat_counters.def" ;;
		esac
	done
	tot=$(awk '{ v[$1] = $2 } END { print v["mkwrite_first"] + v["mkwrite_wp"] + v["mkclean_calls"] + v["stable_calls"] + v["wb_waits"] + v["dirtied"] + v["bdp_calls"] + v["bdp_throttled"] + 2 * v["bdp_pauses"] }' /proc/wpstat/summary)
	rows=$(awk 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		{ s += $c["mkwrite_first"] + $c["mkwrite_wp"] + $c["mkclean_calls"] + $c["stable_calls"] + $c["wb_waits"] + $c["dirtied"] + $c["bdp_calls"] + $c["bdp_throttled"] + 2 * $c["bdp_pauses"] }
		END { print s + 0 }' /proc/wpstat/inodes)
	exp=$((tot - rows))
	kv overflow_lookups_total "$tot"
	kv overflow_lookups_in_rows "$rows"
	kv overflow_untracked_expected "$exp"
	rmmod wpstat
}

# Flat perf profiles (cpu-clock: TCG has no PMU; under -icount its timer
# runs on instruction time) of W1, W2, W4 and W5 in the module's
# configurations: where the handlers' instructions go.  Only wpload's
# samples, as shares of its own: the rest of the recorded tree is this
# script's start-up (its python3), which buried the handlers under the
# 0.5 % cut.
profile() {
	local cfg w
	for cfg in floor-counts counts floor-timing timing; do
		cfg_enter $cfg
		for w in W1 W2 W4 W5; do
			settle
			perf record -q -e cpu-clock -F 20000 -o /tmp/perf.data -- \
				"$0" --run-workload $w >/dev/null 2>"$out/perf-$cfg-$w.err"
			perf report -i /tmp/perf.data --comm wpload \
				--percentage relative --no-children --sort sym \
				--percent-limit 0.2 --stdio 2>/dev/null |
				grep -v '^$' | head -60 >"$out/perf-$cfg-$w.txt"
			rm -f /tmp/perf.data
		done
		cfg_leave $cfg
	done
}

# ---- attachment mechanisms -------------------------------------------------
# wpmech.ko calls a noinline function $mech_calls times with nothing
# attached, then with one mechanism, and leaves both loop times in its
# "result" parameter; it does all of it in its init, so it is loaded and
# unloaded once per measurement.  Under -icount the difference per call is
# instructions added by that mechanism: the parts each level's floor is made
# of.  The order rotates by one per round, like the configurations.
mech_csv() { echo "$*" | tr ' ' , >>"$out/mech.csv"; }

mech_part() {
	local r i m res err
	[ -f "$mech_module" ] || { log "no $mech_module: mechanism part skipped"; return; }
	echo "kernel,round,mech,calls,base_ns,attached_ns,added_x1000,hits" >"$out/mech.csv"
	: >"$out/mech.log"
	for ((r = 0; r < rounds; r++)); do
		log "mechanisms, round $((r + 1))/$rounds"
		for ((i = 0; i < ${#mechs[@]}; i++)); do
			m=${mechs[$(((i + r) % ${#mechs[@]}))]}
			if err=$(insmod "$mech_module" mech="$m" calls="$mech_calls" 2>&1); then
				res=$(cat /sys/module/wpmech/parameters/result)
				rmmod wpmech || die "rmmod wpmech"
				# "mech calls base_ns attached_ns added_x1000 hits"
				set -- $res
				[ "$1" = "$m" ] && [ $# = 6 ] || die "wpmech $m: result '$res'"
				mech_csv "$(uname -r)" $((r + 1)) "$res"
			else
				# EOPNOTSUPP: not in this kernel (fprobe on 6.1
				# and 5.10, args-only ftrace on 5.10); wpmech says
				# why in the kernel log.
				echo "$m: $err" >>"$out/mech.log"
				dmesg | grep -E "wpmech: ($m: |cannot attach $m:)" |
					tail -n 2 >>"$out/mech.log"
				mech_csv "$(uname -r)" $((r + 1)) "$m" "$mech_calls" n/a n/a n/a n/a
			fi
		done
	done
}

# ---- main ------------------------------------------------------------------
export PATH=$top/build/bin:$PATH
if [ "${1:-}" = --run-workload ]; then	# for perf record
	run_workload "$2"
	exit
fi
rm -f "$out/extra.txt" "$out/runs.csv" "$out/mech.csv" "$out/mech.log" "$out"/enabled-*.txt \
	"$out"/kprobes-*.txt "$out"/probes-*.txt "$out"/leftover-*.txt
for c in "${configs[@]}"; do
	case " $known_configs " in
	*" $c "*) ;;
	*) die "BENCH_CONFIGS: unknown configuration '$c' (known: $known_configs)" ;;
	esac
done
loaded && rmmod wpstat
mount -t debugfs none /sys/kernel/debug 2>/dev/null
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
# Load copies made now: make build may replace build/kmod while this runs
# (the host's tree is shared live), and every round must load the same
# module.
mkdir -p /tmp/bench-ko
cp "$module" /tmp/bench-ko/wpstat.ko && module=/tmp/bench-ko/wpstat.ko || die "no $module"
if [ -f "$mech_module" ]; then
	cp "$mech_module" /tmp/bench-ko/wpmech.ko && mech_module=/tmp/bench-ko/wpmech.ko
fi
bt_kprobe=$(bt_adapt "$top/scripts/bench/wpstat.bt") &&
	bt_kfunc=$(bt_adapt "$top/scripts/bench/wpstat-kfunc.bt") || die "cannot copy the bpftrace scripts"
counter_columns
setup >"$out/setup.log" 2>&1 || die "setup failed: $(cat "$out/setup.log")"
kv kernel "$(uname -r)"
kv date "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
kv cpus "$(nproc)"
kv bpftrace "$(bpftrace --version 2>&1)"
kv rounds "$rounds"
kv configs "${configs[*]}"
kv event_points "$event_points"
kv event_points_W5 "$w5_event_points"
kv event_points_W6 "$w6_event_points"
kv clock "${BENCH_CLOCK:-wall}"
kv time "${BENCH_TIME:-cpu}"
kv w1 "4 MiB mmap, $w1_passes passes, msync"
kv w2 "${w2_mib} MiB pwrite 4 KiB"
kv w3 "$w3_files files"
kv w4 "$w4_pages pages anonymous, $w4_passes passes"
kv w5 "$w5_pairs pipes and socket pairs, $w5_passes passes"
kv w6 "$w6_ops pages read, written and waited for on a 1 ms device"
[ -z "${BENCH_ALT_REV:-}" ] || kv alt_rev "$BENCH_ALT_REV"

csv_header
declare -A skipped=()	# configurations that could not start here
t_start=$(ms)
log "warm-up"
for w in $workloads; do
	settle
	run_workload $w >/dev/null || die "warm-up $w"
done
for ((r = 0; r < rounds; r++)); do
	for ((s = 0; s < ${#configs[@]}; s++)); do
		cfg=${configs[$(((s + r) % ${#configs[@]}))]}
		[ -z "${skipped[$cfg]:-}" ] || continue
		log "round $((r + 1))/$rounds: $cfg"
		if ! cfg_enter $cfg; then
			skipped[$cfg]=1
			continue
		fi
		for w in $workloads; do
			one_run $((r + 1)) $s $cfg $w
		done
		case $cfg in
		counts | timing | timing-skip | alt-*) [ $r = 0 ] && save_attachments $cfg ;;
		esac
		cfg_leave $cfg
	done
done
kv rounds_ms "$(($(ms) - t_start))"

if [ "${BENCH_MECH:-1}" = 1 ]; then
	t_start=$(ms)
	mech_part
	kv mech_ms "$(($(ms) - t_start))"
fi

if [ "${BENCH_EXTRAS:-1}" = 1 ]; then
	log "memory per inode"
	memory_per_inode
	log "W3 past max_inodes"
	overflow
	log "reading a full table ($fill inodes)"
	read_full_table
fi
if [ "${BENCH_PERF:-0}" = 1 ]; then
	log "perf profiles"
	profile
fi
log "done"
