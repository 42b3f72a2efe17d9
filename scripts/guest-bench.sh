#!/usr/bin/env bash
# Runs inside the guest (scripts/bench.sh -> vm-run.sh --no-load): the
# benchmark of wpstat's cost per event.  Leaves in $WPSTAT_RESULTS:
#   runs.csv      one line per (round, configuration, workload) run
#   extra.txt     key=value lines: memory per inode, /proc/wpstat/inodes
#                 read time with a full table, overflow behaviour
#   perf-*.txt    profiles (BENCH_PERF=1)
#
# Configurations: base (no module), floor (insmod floor=1: the same probes,
# empty handlers), wpstat (insmod), bpftrace (scripts/bench/wpstat.bt).
# In each round every configuration is set up once, in an order rotated by
# one per round, and runs W1, W2, W3 once each:
#   W1  wpload mmap rewrite of a 4 MiB ext4 file, msync after each pass
#   W2  wpload pwrite(2) of 4 KiB chunks over a cached, clean 16 MiB file
#   W3  wpfiles: open + 4 KiB pwrite + close of each of 10,000 files
# Every run starts after sync(1) and a pause, with clean pages and idle
# writeback; the module is loaded afresh each round, so W3 inserts every
# file into an empty table.  One unrecorded warm-up round (base) first.
#
# Tunables (environment): BENCH_ROUNDS (5), BENCH_W1_PASSES (8),
# BENCH_W2_MIB (16), BENCH_W3_FILES (10000), BENCH_FILL (65536),
# BENCH_OVERFLOW_MAX (2000), BENCH_PERF (0), BENCH_EXTRAS (1: memory,
# overflow and read-time measurements).

set -u
top=${WPSTAT_TOP:?run through scripts/vm-run.sh}
out=${WPSTAT_RESULTS:?}
module=${WPSTAT_MODULE:?}
rounds=${BENCH_ROUNDS:-5}
w1_passes=${BENCH_W1_PASSES:-8}
w2_mib=${BENCH_W2_MIB:-16}
w3_files=${BENCH_W3_FILES:-10000}
fill=${BENCH_FILL:-65536}
overflow_max=${BENCH_OVERFLOW_MAX:-2000}
bt_script=$top/scripts/bench/wpstat.bt
dbg=/sys/kernel/debug/wpstat
mnt=/tmp/bench
nocount=/nonexistent/wpstat-inodes	# wpload: same user-space work everywhere
export BPFTRACE_MAP_KEYS_MAX=65536

log() { printf 'guest-bench: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
ms() { echo $(($(date +%s%N) / 1000000)); }
kv() { printf '%s=%s\n' "$1" "$2" >>"$out/extra.txt"; }
loaded() { grep -q '^wpstat ' /proc/modules; }

# ---- scratch filesystems ---------------------------------------------------
# ram0: the workloads' ext4; ram1: an ext4 with room for $fill small files.
setup() {
	modprobe brd rd_nr=2 rd_size=$((400 * 1024)) || return 1
	mkdir -p $mnt/ext4 $mnt/fill
	# No lazy inode-table init thread, and no journal commit by timer
	# in the middle of a run (sync commits before every run).
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 /dev/ram0 &&
		mount -o commit=600 /dev/ram0 $mnt/ext4 || return 1
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 -b 1024 \
		-N $((fill + 4096)) /dev/ram1 &&
		mount -o commit=600 /dev/ram1 $mnt/fill || return 1
	# Only what a run starts cleans pages (see selftests/run-guest.sh).
	sysctl -q vm.dirty_writeback_centisecs=360000 vm.dirty_expire_centisecs=360000
	wpload --file $mnt/ext4/w1 --size 4M --mode write --quiet --counters $nocount &&
	wpload --file $mnt/ext4/w2 --size ${w2_mib}M --mode write --quiet --counters $nocount &&
	mkdir -p $mnt/ext4/w3 && wpfiles create $mnt/ext4/w3 "$w3_files" >/dev/null || return 1
	sync
}

# ---- configurations --------------------------------------------------------
bt_pid=
cfg_enter() {
	case $1 in
	base) ;;
	floor) insmod "$module" floor=1 || die "insmod floor=1" ;;
	wpstat) insmod "$module" || die "insmod" ;;
	bpftrace)
		local t0 i
		t0=$(ms)
		: >"$out/bpftrace.log"
		bpftrace "$bt_script" >>"$out/bpftrace.log" 2>&1 &
		bt_pid=$!
		for i in $(seq 1 1500); do
			grep -q '^Attaching' "$out/bpftrace.log" && break
			kill -0 $bt_pid 2>/dev/null || break
			sleep 0.2
		done
		kill -0 $bt_pid 2>/dev/null && grep -q '^Attaching' "$out/bpftrace.log" ||
			die "bpftrace did not start: $(cat "$out/bpftrace.log")"
		sleep 1	# attaching is printed before the probes are
		kv bpftrace_start_ms "$(($(ms) - t0))"
		;;
	esac
}

cfg_leave() {
	case $1 in
	floor | wpstat) rmmod wpstat || die "rmmod" ;;
	bpftrace)
		# SIGKILL: no map printing at exit; closing the perf events
		# detaches every probe before the process is reaped.
		kill -9 $bt_pid
		wait $bt_pid 2>/dev/null
		bt_pid=
		;;
	esac
}

# ---- one run ---------------------------------------------------------------
hits() { awk 'NR > 1 { printf "%s%s", sep, $5; sep = " " }' $dbg/probes; }
summary_vals() {
	awk '$1 ~ /^(mkwrite_first|mkwrite_wp|mkclean_calls|mkclean_ptes|stable_calls|stable_waits|wb_waits|dirtied|bdp_calls|bdp_fault_calls|bdp_throttled|bdp_pauses|untracked_events)$/ { printf "%s%s", sep, $2; sep = " " }' /proc/wpstat/summary
}

run_workload() {
	case $1 in
	W1) wpload --file $mnt/ext4/w1 --size 4M --passes "$w1_passes" \
		--sync msync --json --counters $nocount | jq -r '"\(.totals.wall_ns) \(.totals.ops)"' ;;
	W2) wpload --file $mnt/ext4/w2 --size ${w2_mib}M --mode write \
		--json --counters $nocount | jq -r '"\(.totals.wall_ns) \(.totals.ops)"' ;;
	W3) wpfiles touch $mnt/ext4/w3 "$w3_files" | jq -r '"\(.wall_ns) \(.files)"' ;;
	esac
}

# runs.csv: the hits of every probe (events) and the main counters, both
# only known in the wpstat configuration ("" elsewhere).
csv_header() {
	echo "kernel,round,slot,config,workload,wall_ns,ops,events,hits_mkwrite,hits_fault_dirty,hits_mkclean,hits_stable,hits_bdp_ratelimited,hits_bdp,hits_tp_dirty,hits_tp_wait,hits_tp_bdp,mkwrite_first,mkwrite_wp,mkclean_calls,mkclean_ptes,stable_calls,stable_waits,wb_waits,dirtied,bdp_calls,bdp_fault_calls,bdp_throttled,bdp_pauses,untracked_events" >"$out/runs.csv"
}

# Clean pages, and let deferred work (freeing a module's table or
# bpftrace's maps, writeback completions) finish before the clock starts.
settle() {
	sync
	sleep 1
}

one_run() {
	local round=$1 slot=$2 cfg=$3 w=$4 res h0 h1 s0 s1 ev=
	local -a a b
	settle
	# No reset: the module was loaded for this round, so its table is
	# fresh and W3 inserts every file.
	if [ "$cfg" = wpstat ]; then
		h0=$(hits)
		s0=$(summary_vals)
	fi
	res=$(run_workload "$w") || die "$w failed in $cfg"
	[ -n "$res" ] || die "$w gave no result in $cfg"
	if [ "$cfg" = wpstat ]; then
		h1=$(hits)
		s1=$(summary_vals)
		a=($h0 $s0)
		b=($h1 $s1)
		local i sum=0 d=()
		for i in "${!a[@]}"; do
			d+=($((b[i] - a[i])))
			[ "$i" -lt 9 ] && sum=$((sum + b[i] - a[i]))
		done
		ev="$sum,$(IFS=,; echo "${d[*]}")"
	else
		ev=",,,,,,,,,,,,,,,,,,,,,,"
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
	rmmod wpstat
	umount $mnt/fill && mkfs.ext4 -q -F /dev/ram1 >/dev/null	# 65536 files: faster than rm
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
# runs on instruction time) of W1 and W2 in the floor and wpstat configurations:
# where the handlers' instructions go.
profile() {
	local cfg w
	for cfg in floor wpstat; do
		cfg_enter $cfg
		for w in W1 W2; do
			settle
			perf record -q -e cpu-clock -F 20000 -o /tmp/perf.data -- \
				"$0" --run-workload $w >/dev/null 2>"$out/perf-$cfg-$w.err"
			perf report -i /tmp/perf.data --no-children --sort sym \
				--percent-limit 0.5 --stdio 2>/dev/null | grep -v '^$' |
				head -60 >"$out/perf-$cfg-$w.txt"
			rm -f /tmp/perf.data
		done
		cfg_leave $cfg
	done
}

# ---- main ------------------------------------------------------------------
export PATH=$top/build/bin:$PATH
if [ "${1:-}" = --run-workload ]; then	# for perf record
	run_workload "$2"
	exit
fi
rm -f "$out/extra.txt" "$out/runs.csv"
loaded && rmmod wpstat
mount -t debugfs none /sys/kernel/debug 2>/dev/null
setup >"$out/setup.log" 2>&1 || die "setup failed: $(cat "$out/setup.log")"
kv kernel "$(uname -r)"
kv date "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
kv cpus "$(nproc)"
kv bpftrace "$(bpftrace --version 2>&1)"
kv rounds "$rounds"
kv clock "${BENCH_CLOCK:-wall}"
kv w1 "4 MiB mmap, $w1_passes passes, msync"
kv w2 "${w2_mib} MiB pwrite 4 KiB"
kv w3 "$w3_files files"

csv_header
configs=(base floor wpstat bpftrace)
t_start=$(ms)
log "warm-up"
for w in W1 W2 W3; do
	settle
	run_workload $w >/dev/null || die "warm-up $w"
done
for ((r = 0; r < rounds; r++)); do
	for ((s = 0; s < ${#configs[@]}; s++)); do
		cfg=${configs[$(((s + r) % ${#configs[@]}))]}
		log "round $((r + 1))/$rounds: $cfg"
		cfg_enter $cfg
		for w in W1 W2 W3; do
			one_run $((r + 1)) $s $cfg $w
		done
		cfg_leave $cfg
	done
done
kv rounds_ms "$(($(ms) - t_start))"

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
