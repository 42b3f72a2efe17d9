#!/usr/bin/env bash
# Inside the session guest (scripts/demo/session.sh): a writer stalled by
# another process's fsync.  ext4 on a null_blk RAM disk behind dm-delay
# (20 ms per write) with stable_writes=1; one process stores to every page
# of a 32-page shared mapping in a loop (wpload) while another fsyncs the
# same file every 30 ms.  Level timing, so that fault time is measured.
# Prints the commands a user would type, each followed by its real
# output, for the README.
set -euo pipefail
# shellcheck source=scripts/vm/guest-lib.sh
. "$WPSTAT_TOP/scripts/vm/guest-lib.sh"
dir=/tmp/db
file=$dir/data
guest_writeback_quiet

modprobe null_blk nr_devices=1 memory_backed=1 gb=1 bs=4096 2>/dev/null ||
	{ echo "session: no null_blk" >&2; exit 1; }
mkfs.ext4 -q -F -E lazy_itable_init=1,lazy_journal_init=1 /dev/nullb0
modprobe dm-delay
dmsetup create --noudevsync slow --table \
	"0 $(blockdev --getsz /dev/nullb0) delay /dev/nullb0 0 0 /dev/nullb0 0 20"
dmsetup mknodes slow
echo 1 >"/sys/dev/block/$((16#$(stat -L -c %t /dev/mapper/slow))):$((16#$(stat -L -c %T /dev/mapper/slow)))/queue/stable_writes"
mkdir -p $dir
mount /dev/mapper/slow $dir

wpstat level timing >/dev/null
wpstat reset >/dev/null
# The other process: fsync the file every 30 ms until killed; the writer
# starts once it has (python3 takes seconds to start under TCG).
touch $file
python3 "$WPSTAT_TOP/scripts/lib/fsync-loop.py" $file &
syncer=$!
for _ in $(seq 600); do [ -e $file.ready ] && break; sleep 0.1; done
[ -e $file.ready ] || { echo "session: the fsync loop did not start" >&2; exit 1; }

say() { printf '\n$ %s\n' "$*"; "$@" 2>&1; }
cd $dir
wpload --file data --size 128K --duration 4 --quiet >/dev/null &
writer=$!
sleep 1
say wpstat top --interval 2 --count 1 --resolve $dir
wait $writer
say wpstat stalls --resolve $dir
say wpstat diagnose --pid $writer $dir
say wpstat run -- wpload --file data --size 128K --duration 2 --quiet
kill $syncer
