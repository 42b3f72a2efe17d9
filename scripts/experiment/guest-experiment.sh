#!/usr/bin/env bash
# Runs inside the guest (scripts/experiment/experiment.sh boots it, module loaded): the
# MappedByteBuffer-versus-FileChannel sweep with wpload, RocketMQ's
# strategies, and the Java version, every cell with its wpstat counter deltas
# and /proc/vmstat deltas.  Writes JSON lines to OUT/cells.jsonl, OUT/meta.json
# and OUT/rounds.done; scripts/experiment/experiment-report.py turns them into
# the CSV, charts and docs/results/experiment.md.
#
#   guest-experiment.sh [--out DIR] [--method "original kernel"]
#                       [--size BYTES] [--units "64 128 ..."]
#                       [--slow-size BYTES] [--slow-delay MS]
#                       [--strategy-size BYTES] [--rocketmq-messages N]
#                       [--java-units "64 4096 ..."]
#                       [--java-cold-units "4K 64M"|none] [--ram-dir DIR]
#                       [--repeat N] [--until N] [--resume]
#                       [--level timing|counts|keep]
#                       [--parts "ram slow strategies rocketmq java"]
#
# --until: stop after round N of --repeat (experiment.sh boots each kernel
# once per round, so that rounds alternate between kernels too).
# --level: the module's level for the run (default timing: mkwrite_ns, the
# time inside ->page_mkwrite, exists only there; keep: leave it as it is).
#
# Rounds: every part (and every method) runs once per round, rounds one
# after the other, so that a burst of host noise hits one sample of many
# cells rather than every sample of one cell; the methods alternate their
# order from round to round.  A finished round is appended to
# OUT/rounds.done ("ROUND SECONDS").  Every cell line has a "key" (what it
# measured) and a "clock" (epoch seconds when it ended); --resume keeps
# every cell already in OUT/cells.jsonl and runs only the missing ones, so
# a run of hours can be stopped at any time (the guest killed) and
# continued, losing at most the cell in flight.
#
# Methods (docs/results/experiment.md, "What is reproduced"):
#   original  as the analysis' benchmark: nothing flushes inside the timed
#             region (no msync/fsync/force; dirty limits above twice the
#             file, periodic writeback off, so nothing writes back during
#             a cell); hot mmap writes on a mapping warmed by a store per
#             page (+ mlock + MADV_WILLNEED), so no fault is left to take;
#             cold means a fresh sparse file (no data on disk).
#   kernel    writeback in the loop: each write pass ends with
#             msync(MS_SYNC)/fsync, timed; hot mmap writes on a mapping
#             warmed by a load per page (read-only PTEs); cold means an
#             existing file evicted from the page cache (fsync +
#             POSIX_FADV_DONTNEED).
# Warm reads are the same procedure under both methods and run once, under
# original when it runs.
#
# Parts:
#   ram         ext4 (4 KiB blocks) on a RAM disk; every unit size x
#               mmap/write x write/read x warm/cold, per method.
#   slow        (kernel method) ext4 on a memory-backed null_blk that
#               completes one 4 KiB request at a time after 0.25 ms
#               (~16 MB/s), behind dm-delay (every write bio completes
#               --slow-delay ms late; stable_writes=1, as on a device that
#               checksums data in flight), small dirty limits and a 1 s
#               flusher interval, so writeback runs while the workload
#               writes; two write passes per cell.
#   strategies  RocketMQ's strategies imitated by wpload on the slow device:
#               1000-byte appends, sync_file_range(WRITE) every 16, plain
#               and with each strategy; the kernel counters of each.
#   rocketmq    RocketMQ's own store (rocketmq-store, selftests/clients,
#               make clients-build) on the slow device with the kernel's
#               default writeback settings: ASYNC_FLUSH, its own flush
#               thread (FlushRealTimeService, force() every 500 ms) and,
#               with the transient store pool, its commit thread
#               (CommitRealTimeService, every 200 ms); the four settings
#               of warmMapedFileEnable x transientStorePoolEnable, one JVM
#               each, p50/p99/max of the puts and the commit log's counters.
#   java        scripts/experiment/MmapVsChannel.java on the RAM disk, under
#               `wpstat run`, per method: writes (MappedByteBuffer.put,
#               FileChannel.write; with force() timed under kernel), warm
#               for every --java-units size in one JVM, cold for each
#               --java-cold-units size in a JVM of its own (a cold file
#               can be cold only once).

set -u
top=${WPSTAT_TOP:?run through scripts/vm/vm-run.sh}
out=${WPSTAT_RESULTS:-}
methods="original kernel"
size=1G
units="64 128 512 1K 2K 4K 8K 16K 32K 64K 1M 32M 64M 512M"
slow_size=16M
slow_delay=10
strategy_size=16M
rmq_messages=3000
java_units=	# default: --units
java_cold_units="4K 64M"
ram_dir=
repeat=5
resume=0
until_round=
level=timing
parts="ram slow strategies rocketmq java"

guest_args=$(printf '%q ' "$@")
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2; shift 2 ;;
	--method) methods=$2; shift 2 ;;
	--size) size=$2; shift 2 ;;
	--units) units=$2; shift 2 ;;
	--slow-size) slow_size=$2; shift 2 ;;
	--slow-delay) slow_delay=$2; shift 2 ;;
	--strategy-size) strategy_size=$2; shift 2 ;;
	--rocketmq-messages) rmq_messages=$2; shift 2 ;;
	--java-units) java_units=$2; shift 2 ;;
	--parts) parts=$2; shift 2 ;;
	--java-cold-units) java_cold_units=$2; shift 2 ;;
	--ram-dir) ram_dir=$2; shift 2 ;;
	--repeat) repeat=$2; shift 2 ;;
	--resume) resume=1; shift ;;
	--until) until_round=$2; shift 2 ;;
	--level) level=$2; shift 2 ;;
	*) echo "guest-experiment: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[ -n "$out" ] || { echo "guest-experiment: no --out" >&2; exit 2; }
for m in $methods; do
	case $m in
	original | kernel) ;;
	*) echo "guest-experiment: --method takes original and/or kernel, not '$m'" >&2; exit 2 ;;
	esac
done
[ -n "$methods" ] || { echo "guest-experiment: --method is empty" >&2; exit 2; }
[[ $repeat =~ ^[1-9][0-9]*$ ]] || { echo "guest-experiment: --repeat must be a positive number, not '$repeat'" >&2; exit 2; }
[ -n "$until_round" ] || until_round=$repeat
[[ $until_round =~ ^[1-9][0-9]*$ ]] && [ "$until_round" -le "$repeat" ] ||
	{ echo "guest-experiment: --until must be a round from 1 to --repeat ($repeat), not '$until_round'" >&2; exit 2; }
case $level in
counts | timing) "$top/build/bin/wpstat" level "$level" || exit 1 ;;
keep) ;;
*) echo "guest-experiment: --level takes timing, counts or keep, not '$level'" >&2; exit 2 ;;
esac
level=$(cat /sys/module/wpstat/parameters/level 2>/dev/null || echo unknown)
[ -n "$java_units" ] || java_units=$units
[ "$java_cold_units" = none ] && java_cold_units=
mkdir -p "$out"
cells=$out/cells.jsonl
wpload=$top/build/bin/wpload
mnt=/tmp/wpexp
# shellcheck source=scripts/vm/guest-lib.sh
. "$top/scripts/vm/guest-lib.sh"

bytes() {	# 4K -> 4096
	local n=${1%[KMGkmg]}
	case $1 in
	*[Kk]) echo $((n << 10)) ;;
	*[Mm]) echo $((n << 20)) ;;
	*[Gg]) echo $((n << 30)) ;;
	*) echo "$n" ;;
	esac
}

# The keys of the cells of this round already in $cells (--resume).
declare -A done_keys
load_done() {
	local k
	done_keys=()
	while read -r k; do
		[ -n "$k" ] && done_keys[$k]=1
	done < <(jq -r "select(.round == $round) | .key // empty" "$cells")
}
is_done() {
	[ -n "${done_keys[$1]:-}" ]
}

# The /proc/vmstat lines a cell reports the change of.
vmstat_keys="pgfault pgmajfault nr_dirtied nr_written pgpgin pgpgout"
declare -A vm0
# Through cat: bash's read on a regular file reads ahead and seeks back,
# and a seq_file regenerated at the seek offset can tear a line.
vmstat_snap() {
	local k v
	while read -r k v; do vm0[$k]=$v; done < <(cat /proc/vmstat)
}
vmstat_delta() {	# JSON object of changes since vmstat_snap
	local k v sep= json='{'
	declare -A now
	while read -r k v; do now[$k]=$v; done < <(cat /proc/vmstat)
	for k in $vmstat_keys; do
		[ -n "${now[$k]:-}" ] || continue
		json+="$sep\"$k\": $((now[$k] - vm0[$k]))"
		sep=', '
	done
	echo "$json}"
}

drop_file() {	# evict one file's pages (POSIX_FADV_DONTNEED via dd)
	sync "$1" && dd if="$1" iflag=nocache count=0 status=none
}

warm_file() {	# the whole file in the page cache
	cat "$1" >/dev/null
}

# The filesystem block size of DIR (ext4's, from statfs): the analysis'
# numbers assume 4 KiB blocks, one per page.
block_size() {
	stat -f -c %S "$1"
}

# The wpstat row of FILE (dev ino generation), as /proc/wpstat/inodes
# spells it: lsattr -v prints the generation the module keys on.
file_generation() {
	lsattr -v "$1" | awk '{ print $1 }'
}
file_key() {
	local dev
	dev=$(stat -c '%Hd:%Ld' "$1") && printf '%s %s %s\n' "$dev" \
		"$(stat -c %i "$1")" "$(file_generation "$1")"
}

# err_tail FILE: its last lines, fit for a JSON string.
err_tail() {
	tail -n 3 "$1" | tr '"\n\t' "'  "
}

# counters_json FILE: the file's /proc/wpstat/inodes row as a JSON object
# (null without a row): its counters (the module's list, /proc/wpstat/
# counters), not the key's later columns (subvol).
counters_json() {
	local key
	key=$(file_key "$1") || { echo null; return; }
	# shellcheck disable=SC2086
	set -- $key
	awk -v dev="$1" -v ino="$2" -v gen="$3" '
		NR == FNR { if (FNR > 1) counter[$1]; next }
		FNR == 1 { n = NF; for (i = 1; i <= NF; i++) col[i] = $i; next }
		$1 == dev && $2 == ino && $3 == gen {
			s = "{"
			for (i = 4; i <= n; i++)
				if ($i != "-" && col[i] in counter)
					s = s (s == "{" ? "" : ", ") "\"" col[i] "\": " $i
			row = s "}"
		}
		END { print (row == "" ? "null" : row) }' /proc/wpstat/counters /proc/wpstat/inodes
}

# cell PART METHOD API OP CACHE UNIT FILE SIZE [wpload options...]: one
# wpload run, one JSON line.
cell() {
	local part=$1 method=$2 api=$3 op=$4 cache=$5 unit=$6 file=$7 fsize=$8 mode json vm rc bs
	local key=$1/$2/$3/$4/$5/$(bytes "$6")
	shift 8
	is_done "$key" && return
	if [ "$(bytes "$unit")" -gt "$(bytes "$fsize")" ]; then
		printf '{"part": "%s", "method": "%s", "api": "%s", "op": "%s", "cache": "%s", "unit": %s, "size": %s, "round": %d, "key": "%s", "clock": %d, "skipped": "unit larger than the file"}\n' \
			"$part" "$method" "$api" "$op" "$cache" "$(bytes "$unit")" "$(bytes "$fsize")" "$round" "$key" "$(date +%s)" >>"$cells"
		return
	fi
	case $api/$op in
	mmap/write) mode=mmap ;;
	mmap/read) mode=mmap-read ;;
	write/write) mode=write ;;
	write/read) mode=read ;;
	esac
	bs=$(block_size "$(dirname "$file")")
	vmstat_snap
	json=$("$wpload" --file "$file" --size "$fsize" --chunk "$unit" \
		--mode "$mode" --no-latency --json "$@")
	rc=$?
	vm=$(vmstat_delta)
	json=$(jq -c . <<<"$json" 2>/dev/null) || json=
	[ -n "$json" ] || json=null
	printf '{"part": "%s", "method": "%s", "api": "%s", "op": "%s", "cache": "%s", "unit": %s, "size": %s, "round": %d, "key": "%s", "clock": %d, "block_size": %d, "args": "%s", "rc": %d, "vmstat": %s, "wpload": %s}\n' \
		"$part" "$method" "$api" "$op" "$cache" "$(bytes "$unit")" "$(bytes "$fsize")" \
		"$round" "$key" "$(date +%s)" "$bs" "$*" "$rc" "$vm" "$json" >>"$cells"
	echo "${SECONDS}s round $round $part $method $api $op $cache $unit: rc $rc" >&2
}

make_file() {	# PATH SIZE: written and on disk, so reads find data
	rm -f "$1"
	"$wpload" --file "$1" --size "$2" --chunk 1M --mode write --sync fsync \
		--quiet >/dev/null || return 1
	drop_file "$1"
}

ram_up() {
	if [ -n "$ram_dir" ]; then
		ram=$ram_dir
		return 0
	fi
	ram=$mnt/ram
	mountpoint -q $ram && return 0
	if grep -q '^brd ' /proc/modules; then
		echo "guest-experiment: brd is already loaded; pass --ram-dir" >&2
		return 1
	fi
	# The file, and a fresh one beside it for the original method's cold
	# cells: never written back (it is deleted dirty), so brd never
	# allocates its pages.  But ext4 reserves its blocks (delalloc), and
	# once the reserved blocks pass half the free ones,
	# ext4_nonda_switch() writes back every dirty inode of the filesystem
	# (WB_REASON_FS_FREE_SPACE): the free space must stay above twice the
	# fresh file, or writeback runs inside the cell.
	local mib=$(( $(bytes "$size") / 1048576 * 33 / 10 + 128 ))
	# mke2fs picks 1 KiB blocks below 512 MiB ("small" in mke2fs.conf).
	guest_ramdisks 1 $mib && guest_mkfs ext4 /dev/ram0 -b 4096 &&
		guest_mount /dev/ram0 $ram
}

# Leave the guest as we found it for whatever runs next.
cleanup() {
	if mountpoint -q $mnt/slow; then
		umount $mnt/slow
		dmsetup remove --noudevsync wpexp
		rmmod null_blk
	fi
	if mountpoint -q $mnt/ram; then
		umount $mnt/ram
		rmmod brd
	fi
	sysctl_quiet
}
trap cleanup EXIT

slow_up() {
	mountpoint -q $mnt/slow && return 0
	if grep -q '^null_blk ' /proc/modules; then
		echo "guest-experiment: null_blk is already loaded" >&2
		return 1
	fi
	local gb=$(( ($(bytes "$slow_size") > $(bytes "$strategy_size") ? $(bytes "$slow_size") : $(bytes "$strategy_size")) * 3 / 1073741824 + 1 ))
	# One 4 KiB request at a time, each completing after a timer:
	# about 16 MB/s, well below what the guest dirties, so writeback
	# lags and dirty balancing throttles.
	modprobe null_blk nr_devices=1 memory_backed=1 gb=$gb bs=4096 \
		irqmode=2 completion_nsec=250000 hw_queue_depth=1 max_sectors=8 &&
		guest_mkfs ext4 /dev/nullb0 -b 4096 &&
		modprobe dm-delay &&
		dmsetup create --noudevsync wpexp --table \
			"0 $(blockdev --getsz /dev/nullb0) delay /dev/nullb0 0 0 /dev/nullb0 0 $slow_delay" &&
		dmsetup mknodes wpexp &&
		echo 1 >"/sys/dev/block/$(dmsetup info -c --noheadings -o major,minor --separator : wpexp | tr -d ' ')/queue/stable_writes" &&
		guest_mount /dev/mapper/wpexp $mnt/slow
}

# Writeback out of the way (as in the selftests) for the RAM disk under the
# kernel method, where every cell ends with its own msync or fsync, with
# the default dirty limits back (setting a ratio clears the *_bytes form
# the others set); under the original method, also dirty limits above
# twice the file (the file and a fresh one may both be dirty), so that
# nothing is written back or throttled during a cell; busy for the slow
# device; the kernel's defaults for RocketMQ.
sysctl_quiet() {
	guest_writeback_quiet &&
		guest_sysctl vm.dirty_background_ratio=10 vm.dirty_ratio=20
}
sysctl_original() {
	local b=$(( 2 * $(bytes "$size") + (64 << 20) ))
	guest_writeback_quiet &&
		guest_sysctl vm.dirty_background_bytes=$b vm.dirty_bytes=$((b + (64 << 20)))
}
sysctl_busy() {
	guest_sysctl vm.dirty_writeback_centisecs=100 vm.dirty_expire_centisecs=100 \
		vm.dirty_background_bytes=$((2 << 20)) vm.dirty_bytes=$((8 << 20))
}
sysctl_default() {
	guest_sysctl vm.dirty_writeback_centisecs=500 vm.dirty_expire_centisecs=3000 \
		vm.dirty_background_ratio=10 vm.dirty_ratio=20
}

# ram_cells METHOD: the RAM-disk sweep of one method in one round.  The
# file $f is on disk and clean when it starts, and again when it ends.
ram_cells() {
	local method=$1 unit op api fresh=$ram/fresh.dat
	local -a sync_opts warmup
	[ "$method" = original ] && sysctl_original || sysctl_quiet
	for unit in $units; do
		for op in write read; do
			for api in mmap write; do
				# kernel: a write pass ends with msync/fsync, timed.
				sync_opts=()
				if [ "$method" = kernel ] && [ $op = write ]; then
					[ $api = mmap ] && sync_opts=(--sync msync) || sync_opts=(--sync fsync)
				fi
				# Hot mmap: a mapping warmed by a load per page,
				# or under original for writes by a store per page
				# (then no fault is left), mlocked.
				warmup=()
				if [ $api = mmap ]; then
					[ "$method" = original ] && [ $op = write ] &&
						warmup=(--warmup=write) || warmup=(--warmup)
				fi
				# Warm reads are one procedure for both methods:
				# they run under original when it runs.
				if [ "$method" = original ] || [ $op = write ] ||
					[[ " $methods " != *" original "* ]]; then
					is_done "ram/$method/$api/$op/warm/$(bytes "$unit")" || warm_file "$f"
					cell ram "$method" $api $op warm "$unit" "$f" "$size" \
						--no-create "${sync_opts[@]}" "${warmup[@]}"
				fi
				if [ "$method" = kernel ]; then
					cell ram "$method" $api $op cold "$unit" "$f" "$size" \
						--no-create --cold "${sync_opts[@]}"
				else
					# Cold: a fresh sparse file (wpload creates it
					# at --size: a hole, no data, no block).
					rm -f "$fresh"
					cell ram "$method" $api $op cold "$unit" "$fresh" "$size"
					rm -f "$fresh"
				fi
			done
		done
	done
	if [ "$method" = original ]; then
		# Clean again, outside any cell, for whatever runs next.
		sync "$f"
		sysctl_quiet
	fi
}

# rocketmq_cells: RocketMQ's store, one JVM per setting, one round.
rocketmq_cells() {
	local warm pool dir path line c jrc key tmp=$out/rocketmq-tmp
	mkdir -p "$tmp"
	for setting in "off off" "on off" "off on" "on on"; do
		read -r warm pool <<<"$setting"
		key=rocketmq/$warm/$pool
		is_done "$key" && continue
		dir=$mnt/slow/rocketmq
		rm -rf "$dir"
		mkdir -p "$dir"
		vmstat_snap
		TMPDIR=$tmp "$top/selftests/clients/rocketmq-run.sh" \
			--dir "$dir" --messages "$rmq_messages" --size 1K \
			--warm "$warm" --transient-pool "$pool" \
			--file-size "$strategy_size" --rounds 1 \
			>"$tmp/out" 2>"$tmp/err"
		jrc=$?
		vm=$(vmstat_delta)
		line=$(jq -c . "$tmp/out" 2>/dev/null | head -n 1)
		c=null
		if [ -n "$line" ]; then
			path=$(jq -r '.files[0].path // empty' <<<"$line")
			[ -n "$path" ] && [ -f "$path" ] && c=$(counters_json "$path")
		else
			line=null
		fi
		printf '{"part": "rocketmq", "method": "kernel", "warm": "%s", "pool": "%s", "round": %d, "key": "%s", "clock": %d, "rc": %d, "block_size": %d, "vmstat": %s, "rocketmq": %s, "counters": %s%s}\n' \
			"$warm" "$pool" "$round" "$key" "$(date +%s)" "$jrc" "$(block_size $mnt/slow)" "$vm" "$line" "$c" \
			"$([ "$line" = null ] && printf ', "error": "%s"' "$(err_tail "$tmp/err")")" >>"$cells"
		echo "${SECONDS}s round $round rocketmq warm $warm pool $pool: rc $jrc" >&2
		rm -rf "$dir"
	done
	rm -rf "$tmp"
}

# java_cells METHOD: MmapVsChannel.java on the RAM disk, one round.
java_cells() {
	local method=$1 api cache u list jf run jrc line key
	local ju
	ju=$(for u in $java_units; do bytes "$u"; done | paste -sd,)
	[ "$method" = original ] && sysctl_original || sysctl_quiet
	for api in mmap channel; do
		for cache in warm cold; do
			if [ $cache = warm ]; then
				list=$ju
			else
				list=$(for u in $java_cold_units; do bytes "$u"; done)
			fi
			for u in $list; do
				key=java/$method/$api/$cache/$u
				is_done "$key" && continue
				jf=$f
				if [ $cache = cold ] && [ "$method" = original ]; then
					# a fresh sparse file, made before the JVM
					jf=$ram/java-fresh.dat
					rm -f "$jf"
					truncate -s "$(bytes "$size")" "$jf"
				else
					drop_file "$f"
				fi
				vmstat_snap
				run=$out/java-run.json
				"$top/build/bin/wpstat" run --json --output "$run" -- \
					java -XX:-UsePerfData -Xmx1g "$top/scripts/experiment/MmapVsChannel.java" \
					--file "$jf" --size "$size" --api $api --op write \
					--cache $cache --units "$u" --method "$method" \
					--generation "$(file_generation "$jf")" \
					>"$out/java-cells.txt" 2>"$out/java-err.txt"
				jrc=$?
				vm=$(vmstat_delta)
				while read -r line; do
					printf '{"part": "java", "method": "%s", "round": %d, "key": "%s", "clock": %d, "rc": %d, "block_size": %d, "vmstat_process": %s, "wpstat_run": %s, "java": %s}\n' \
						"$method" "$round" "$key" "$(date +%s)" "$jrc" "$(block_size "$ram")" "$vm" \
						"$(jq -c . "$run" 2>/dev/null || echo null)" "$line" >>"$cells"
				done <"$out/java-cells.txt"
				[ -s "$out/java-cells.txt" ] || {
					printf '{"part": "java", "method": "%s", "round": %d, "key": "%s", "clock": %d, "rc": %d, "api": "%s", "op": "write", "cache": "%s", "units": "%s", "error": "%s"}\n' \
						"$method" "$round" "$key" "$(date +%s)" "$jrc" $api $cache "$u" \
						"$(err_tail "$out/java-err.txt")" >>"$cells"
					rc=1
				}
				echo "${SECONDS}s round $round java $method $api write $cache $u: rc $jrc" >&2
				[ "$jf" = "$f" ] || rm -f "$jf"
			done
		done
	done
	[ "$method" = original ] && sync "$f"
	sysctl_quiet
	rm -f "$out/java-cells.txt" "$out/java-run.json" "$out/java-err.txt"
}

first_round=1
if [ "$resume" = 1 ] && [ -s "$out/meta.json" ]; then
	last=$(awk 'END { print $1 + 0 }' "$out/rounds.done" 2>/dev/null)
	first_round=$((${last:-0} + 1))
	echo "guest-experiment: resuming in round $first_round" >&2
	jq -c --arg k "$(uname -r)" --arg d "$(date -u +%Y-%m-%dT%H:%M:%SZ)" --argjson r "$first_round" \
		'.resumed += [{"date": $d, "round": $r, "kernel": $k}]' "$out/meta.json" >"$out/meta.tmp" &&
		mv "$out/meta.tmp" "$out/meta.json"
else
	: >"$cells"
	: >"$out/rounds.done"
	cat >"$out/meta.json" <<META
{"kernel": "$(uname -r)", "date": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
 "cpu": "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)",
 "cpus": $(nproc), "mem_kib": $(sed -n 's/^MemTotal: *\([0-9]*\).*/\1/p' /proc/meminfo),
 "methods": "$methods", "level": "$level",
 "size": $(bytes "$size"), "slow_size": $(bytes "$slow_size"),
 "slow_delay_ms": $slow_delay, "strategy_size": $(bytes "$strategy_size"),
 "rocketmq_messages": $rmq_messages,
 "units": "$units", "java_units": "$java_units", "java_cold_units": "$java_cold_units",
 "parts": "$parts", "repeat": $repeat, "args": $(jq -Rn --arg a "$guest_args" '$a'),
 "java": "$(java -version 2>&1 | head -n 1 | sed 's/"/\\"/g')", "resumed": []}
META
fi

rc=0
for ((round = first_round; round <= until_round; round++)); do
	round_start=$SECONDS
	load_done
	# Alternate the methods' order, so neither always runs first.
	ordered=$methods
	(( round % 2 == 0 )) && ordered=$(tr ' ' '\n' <<<"$methods" | tac | xargs)
	for part in $parts; do
		case $part in
		ram | java)
			ram_up || { echo "guest-experiment: RAM disk set-up failed" >&2; rc=1; continue; }
			f=$ram/$part.dat
			make_file "$f" "$size" || { rc=1; continue; }
			for method in $ordered; do
				${part}_cells "$method"
			done
			rm -f "$f"
			;;
		slow | strategies)
			slow_up || { echo "guest-experiment: slow device set-up failed" >&2; rc=1; continue; }
			sysctl_busy
			if [ $part = slow ]; then
				f=$mnt/slow/sweep.dat
				make_file "$f" "$slow_size" || { rc=1; continue; }
				for unit in $units; do
					cell slow kernel mmap write warm "$unit" "$f" "$slow_size" \
						--no-create --passes 2 --sync msync --warmup
					cell slow kernel write write warm "$unit" "$f" "$slow_size" \
						--no-create --passes 2 --sync fsync
				done
			else
				f=$mnt/slow/commitlog.dat
				make_file "$f" "$strategy_size" || { rc=1; continue; }
				common="--no-create --sync sfr --sync-every 16"
				# shellcheck disable=SC2086
				{
					cell strategies kernel mmap write plain 1000 "$f" "$strategy_size" $common
					cell strategies kernel mmap write warmup-read 1000 "$f" "$strategy_size" $common --warmup=read
					cell strategies kernel mmap write warmup-write 1000 "$f" "$strategy_size" $common --warmup=write
					cell strategies kernel write write plain 1000 "$f" "$strategy_size" $common
					cell strategies kernel write write write-buffer 1000 "$f" "$strategy_size" $common --write-buffer 16K
				}
			fi
			sysctl_quiet
			rm -f "$f"
			;;
		rocketmq)
			slow_up || { echo "guest-experiment: slow device set-up failed" >&2; rc=1; continue; }
			sysctl_default
			rocketmq_cells
			sysctl_quiet
			;;
		*)
			echo "guest-experiment: unknown part '$part'" >&2
			rc=2
			;;
		esac
	done
	echo "$round $((SECONDS - round_start))" >>"$out/rounds.done"
	echo "${SECONDS}s round $round done in $((SECONDS - round_start)) s" >&2
done
exit $rc
