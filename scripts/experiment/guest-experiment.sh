#!/usr/bin/env bash
# Runs inside the guest (scripts/experiment/experiment.sh boots it, module loaded): the
# MappedByteBuffer-versus-FileChannel sweep with wpload, the RocketMQ
# strategies, and the Java version, every cell with its wpstat counter deltas
# and /proc/vmstat deltas.  Writes JSON lines to OUT/cells.jsonl and
# OUT/meta.json; scripts/experiment/experiment-report.py turns them into CSV, JSON,
# charts and docs/experiment.md.
#
#   guest-experiment.sh [--out DIR] [--size BYTES] [--units "64 128 ..."]
#                       [--slow-size BYTES] [--slow-delay MS]
#                       [--strategy-size BYTES] [--java-units "64 4096 ..."]
#                       [--java-cold-unit BYTES|none] [--ram-dir DIR]
#                       [--repeat N]
#                       [--parts "ram slow strategies java"]
#
# --repeat: run every part N times over (rounds, so that a burst of host
# noise hits one round, not every repeat of one cell; the report takes
# medians); the JVM repeats each unit size N times in one process.
# --ram-dir: an ext4 filesystem already mounted on a RAM disk, instead of
# making one (brd can be loaded only once, with one geometry).
#
# Parts:
#   ram         ext4 on a RAM disk; every unit size x mmap/write x write/read
#               x warm/cold; one pass, then msync(MS_SYNC)/fsync for writes
#               (MappedByteBuffer.put + force, FileChannel.write + force).
#   slow        ext4 on a memory-backed null_blk that completes one 4 KiB
#               request at a time after 0.25 ms (~16 MB/s), behind dm-delay
#               (every write bio completes --slow-delay ms late;
#               stable_writes=1, as on a device that checksums data in
#               flight), small dirty limits and a 1 s flusher interval, so
#               writeback runs while the workload writes; two write passes
#               per cell.
#   strategies  RocketMQ's strategies on the slow device: an append of
#               1000-byte messages with an asynchronous flush every 16
#               messages (sync_file_range(WRITE), like RocketMQ's flush
#               thread, which does not wait), plain and with each strategy.
#   java        scripts/experiment/MmapVsChannel.java on the RAM disk, under
#               `wpstat run`: writes (put + force, write + force), warm
#               for every --java-units size in one JVM, cold for 4 KiB
#               (one JVM each: only the first unit of a JVM can be cold).

set -u
top=${WPSTAT_TOP:?run through scripts/vm/vm-run.sh}
out=${WPSTAT_RESULTS:-}
size=256M
units="64 128 512 1K 2K 4K 8K 32K 64K 1M 32M 64M 512M"
slow_size=16M
slow_delay=10
strategy_size=16M
java_units=	# default: --units
java_cold_unit=4K
ram_dir=
repeat=3
round=1
parts="ram slow strategies java"

guest_args="$*"
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2; shift 2 ;;
	--size) size=$2; shift 2 ;;
	--units) units=$2; shift 2 ;;
	--slow-size) slow_size=$2; shift 2 ;;
	--slow-delay) slow_delay=$2; shift 2 ;;
	--strategy-size) strategy_size=$2; shift 2 ;;
	--java-units) java_units=$2; shift 2 ;;
	--parts) parts=$2; shift 2 ;;
	--java-cold-unit) java_cold_unit=$2; shift 2 ;;
	--ram-dir) ram_dir=$2; shift 2 ;;
	--repeat) repeat=$2; shift 2 ;;
	*) echo "guest-experiment: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[ -n "$out" ] || { echo "guest-experiment: no --out" >&2; exit 2; }
[ -n "$java_units" ] || java_units=$units
mkdir -p "$out"
cells=$out/cells.jsonl
: >"$cells"
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

# cell PART API OP CACHE UNIT FILE SIZE [wpload options...]: one wpload run.
cell() {
	local part=$1 api=$2 op=$3 cache=$4 unit=$5 file=$6 fsize=$7 mode json vm rc
	shift 7
	if [ "$(bytes "$unit")" -gt "$(bytes "$fsize")" ]; then
		printf '{"part": "%s", "api": "%s", "op": "%s", "cache": "%s", "unit": %s, "size": %s, "round": %d, "skipped": "unit larger than the file"}\n' \
			"$part" "$api" "$op" "$cache" "$(bytes "$unit")" "$(bytes "$fsize")" $round >>"$cells"
		return
	fi
	case $api/$op in
	mmap/write) mode=mmap ;;
	mmap/read) mode=mmap-read ;;
	write/write) mode=write ;;
	write/read) mode=read ;;
	esac
	if [ "$cache" = warm ]; then
		warm_file "$file"
	fi
	vmstat_snap
	json=$("$wpload" --file "$file" --size "$fsize" --chunk "$unit" \
		--mode "$mode" --no-create --no-latency --json "$@")
	rc=$?
	vm=$(vmstat_delta)
	json=$(jq -c . <<<"$json" 2>/dev/null) || json=
	[ -n "$json" ] || json=null
	printf '{"part": "%s", "api": "%s", "op": "%s", "cache": "%s", "unit": %s, "size": %s, "round": %d, "args": "%s", "rc": %d, "vmstat": %s, "wpload": %s}\n' \
		"$part" "$api" "$op" "$cache" "$(bytes "$unit")" "$(bytes "$fsize")" \
		$round "$*" "$rc" "$vm" "$json" >>"$cells"
	echo "${SECONDS}s round $round cell $part $api $op $cache $unit: rc $rc" >&2
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
	local mib=$(( $(bytes "$size") / 1048576 * 11 / 10 + 64 ))
	guest_ramdisks 1 $mib && guest_mkfs_mount ext4 /dev/ram0 $ram
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
		guest_mkfs ext4 /dev/nullb0 &&
		modprobe dm-delay &&
		dmsetup create --noudevsync wpexp --table \
			"0 $(blockdev --getsz /dev/nullb0) delay /dev/nullb0 0 0 /dev/nullb0 0 $slow_delay" &&
		dmsetup mknodes wpexp &&
		echo 1 >"/sys/dev/block/$(dmsetup info -c --noheadings -o major,minor --separator : wpexp | tr -d ' ')/queue/stable_writes" &&
		guest_mount /dev/mapper/wpexp $mnt/slow
}

# Writeback out of the way (as in the selftests) for the RAM disk, where
# every cell ends with its own msync or fsync, with the default dirty
# limits back (setting a ratio clears the *_bytes form sysctl_busy set);
# busy for the slow device.
sysctl_quiet() {
	guest_writeback_quiet &&
		guest_sysctl vm.dirty_background_ratio=10 vm.dirty_ratio=20
}
sysctl_busy() {
	guest_sysctl vm.dirty_writeback_centisecs=100 vm.dirty_expire_centisecs=100 \
		vm.dirty_background_bytes=$((2 << 20)) vm.dirty_bytes=$((8 << 20))
}

cat >"$out/meta.json" <<EOF
{"kernel": "$(uname -r)", "date": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
 "cpu": "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)",
 "cpus": $(nproc), "mem_kib": $(sed -n 's/^MemTotal: *\([0-9]*\).*/\1/p' /proc/meminfo),
 "size": $(bytes "$size"), "slow_size": $(bytes "$slow_size"),
 "slow_delay_ms": $slow_delay, "strategy_size": $(bytes "$strategy_size"),
 "units": "$units", "java_units": "$java_units", "parts": "$parts",
 "repeat": $repeat, "args": "$(sed 's/"/\\"/g' <<<"$guest_args")",
 "java": "$(java -version 2>&1 | head -n 1 | sed 's/"/\\"/g')"}
EOF

rc=0
for round in $(seq "$repeat"); do
	for part in $parts; do
		case $part in
		ram)
			sysctl_quiet
			ram_up || { echo "guest-experiment: RAM disk set-up failed" >&2; rc=1; continue; }
			f=$ram/sweep.dat
			make_file "$f" "$size" || { rc=1; continue; }
			for unit in $units; do
				for op in write read; do
					for api in mmap write; do
						sync_opt=
						[ $op = write ] && { [ $api = mmap ] && sync_opt="--sync msync" || sync_opt="--sync fsync"; }
						# shellcheck disable=SC2086
						cell ram $api $op warm "$unit" "$f" "$size" $sync_opt \
							$([ $api = mmap ] && echo --warmup)
						# shellcheck disable=SC2086
						cell ram $api $op cold "$unit" "$f" "$size" $sync_opt --cold
					done
				done
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
					cell slow mmap write warm "$unit" "$f" "$slow_size" \
						--passes 2 --sync msync --warmup
					cell slow write write warm "$unit" "$f" "$slow_size" \
						--passes 2 --sync fsync
				done
			else
				f=$mnt/slow/commitlog.dat
				make_file "$f" "$strategy_size" || { rc=1; continue; }
				common="--sync sfr --sync-every 16"
				# shellcheck disable=SC2086
				{
					cell strategies mmap write plain 1000 "$f" "$strategy_size" $common
					cell strategies mmap write warmup-read 1000 "$f" "$strategy_size" $common --warmup=read
					cell strategies mmap write warmup-write 1000 "$f" "$strategy_size" $common --warmup=write
					cell strategies write write plain 1000 "$f" "$strategy_size" $common
					cell strategies write write write-buffer 1000 "$f" "$strategy_size" $common --write-buffer 16K
				}
			fi
			sysctl_quiet
			rm -f "$f"
			;;
		java)
			[ "$round" = 1 ] || continue	# the JVM repeats by itself
			sysctl_quiet
			ram_up || { rc=1; continue; }
			f=$ram/java.dat
			make_file "$f" "$size" || { rc=1; continue; }
			ju=$(for u in $java_units; do bytes "$u"; done | paste -sd,)
			for op in write; do
				for api in mmap channel; do
					for cache in warm cold; do
						list=$ju
						if [ $cache = cold ]; then
							[ "$java_cold_unit" = none ] && continue
							list=$(bytes $java_cold_unit)
						fi
						for u in $list; do
							drop_file "$f"
							vmstat_snap
							run=$out/java-run.json
							"$top/build/bin/wpstat" run --json -o "$run" -- \
								java -XX:-UsePerfData -Xmx1g "$top/scripts/experiment/MmapVsChannel.java" \
								--file "$f" --size "$size" --api $api --op $op \
								--cache $cache --units "$u" \
							--repeat "$([ $cache = warm ] && echo "$repeat" || echo 1)" \
							>"$out/java-cells.txt"
							jrc=$?
							vm=$(vmstat_delta)
							while read -r line; do
								printf '{"part": "java", "rc": %d, "vmstat_process": %s, "wpstat_run": %s, "java": %s}\n' \
									"$jrc" "$vm" "$(jq -c . "$run" 2>/dev/null || echo null)" "$line" >>"$cells"
							done <"$out/java-cells.txt"
							[ -s "$out/java-cells.txt" ] || {
								printf '{"part": "java", "rc": %d, "api": "%s", "op": "%s", "cache": "%s", "units": "%s", "error": "no output"}\n' \
									"$jrc" $api $op $cache "$u" >>"$cells"
								rc=1
							}
							echo "${SECONDS}s java $api $op $cache $u: rc $jrc" >&2
						done
					done
				done
			done
			rm -f "$f" "$out/java-cells.txt" "$out/java-run.json"
			;;
		*)
			echo "guest-experiment: unknown part '$part'" >&2
			rc=2
			;;
		esac
	done
done
exit $rc
