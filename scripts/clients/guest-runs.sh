#!/usr/bin/env bash
# Runs inside the guest (through scripts/clients/runs.sh): each real client
# under `wpstat run` on a fresh ext4 RAM disk, periodic writeback off, one
# report per client in $WPSTAT_RESULTS/NAME.txt (the client's own stdout
# first, then wpstat run's report).  A client whose build is missing
# (make clients-build) gets a NAME.missing file saying so.
set -u
top=${WPSTAT_TOP:?run through scripts/vm/vm-run.sh}
results=${WPSTAT_RESULTS:?}
dir=/tmp/wpstat-clients
bin=$top/build/bin

# shellcheck source=scripts/vm/guest-lib.sh
. "$top/scripts/vm/guest-lib.sh"
guest_ramdisks 1 320 && guest_mkfs_mount ext4 /dev/ram0 "$dir" || exit 1
guest_writeback_quiet

# run NAME CMD...: CMD in a directory of its own under $dir, under
# wpstat run at the module's default level, resolving its files.
run() {
	local name=$1 wd=$dir/$1
	shift
	mkdir -p "$wd"
	echo "guest-runs: $name" >&2
	(cd "$wd" && "$bin/wpstat" run --reset --all --resolve "$wd" --output "$results/$name.report" -- "$@") \
		>"$results/$name.out" 2>"$results/$name.err"
	echo "exit $?" >>"$results/$name.err"
	rm -rf "$wd"
}

run lmdb-writemap "$bin/lmdb-commits" --writemap db
run lmdb-nosync "$bin/lmdb-commits" --writemap --nosync db
run lmdb-pwrite "$bin/lmdb-commits" db

jrun=$top/selftests/clients/jrun.sh
if [ -f "$top/build/clients/java/.built" ] && [ -x "$jrun" ]; then
	# As selftests/clients/chronicle.bats: 1000 appends of 1020 bytes,
	# the driver's fdatasync after 500.
	for p in off on; do
		run chronicle-pretouch-$p "$jrun" wpstat.clients.ChronicleAppend --dir q \
			--messages 1000 --size 1020 --fsync-after 500 --pretouch $p
	done
	# As selftests/clients/rocketmq.bats, one round: 1500 puts of 1 KiB
	# paced 1 ms apart into a 16 MiB commit log, ASYNC_FLUSH.
	for warm in off on; do
		for pool in off on; do
			TMPDIR=/tmp run "rocketmq-warm-$warm-pool-$pool" \
				"$top/selftests/clients/rocketmq-run.sh" --dir store \
				--messages 1500 --size 1K --pace-us 1000 --file-size 16M \
				--warm $warm --transient-pool $pool
		done
	done
else
	echo "build/clients/java is not built: run make clients-build" >"$results/java.missing"
fi
exit 0
