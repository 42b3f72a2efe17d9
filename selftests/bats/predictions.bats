#!/usr/bin/env bats
# Predictions, end to end through wpload's own JSON report: the counter
# deltas wpload reads per pass must be what the source analysis predicts
# (see selftests/kselftest/wpstat_predict.c for the call chains, and
# docs/results/predictions.md).  64 pages of 4 KiB, one store per page.

bats_require_minimum_version 1.5.0

load helpers

N=64

setup() {
	require_module
}

# wpload ... --json on filesystem $1; the rest are wpload options.
wpload_json() {
	local fs=$1
	shift
	F=$(scratch_file "$fs")
	run --separate-stderr wpload --file "$F" --size $((N * 4096)) --json "$@"
	assert_success
	[ "$(jqv "$output" .module_loaded)" = true ] || fail "module not seen by wpload"
	JSON=$output
}

# Counter $2 of pass $1 (1-based) in $JSON.
pass_counter() {
	jqv "$JSON" ".passes[$(($1 - 1))].counters.$2"
}

@test "ext4 mmap: first pass first-write, msync cleans, then write-protect" {
	wpload_json ext4 --mode mmap --passes 3 --sync msync
	# Pass 1: no PTEs (do_shared_fault), then msync cleans all N PTEs.
	[ "$(pass_counter 1 mkwrite_first)" = $N ]
	[ "$(pass_counter 1 mkwrite_wp)" = 0 ]
	[ "$(pass_counter 1 mkclean_ptes)" = "$(timed $N)" ]
	[ "$(pass_counter 1 bdp_fault_calls)" = "$(timed $N)" ]
	# Passes 2 and 3: read-only PTEs (do_wp_page -> wp_page_shared).
	for p in 2 3; do
		[ "$(pass_counter $p mkwrite_first)" = 0 ]
		[ "$(pass_counter $p mkwrite_wp)" = $N ]
		[ "$(pass_counter $p mkclean_ptes)" = "$(timed $N)" ]
	done
	# Each pass dirtied every (order-0) folio once.
	[ "$(jqv "$JSON" .totals.counters.dirtied)" = $((3 * N)) ]
}

@test "ext4 mmap without writeback: later passes take no fault" {
	wpload_json ext4 --mode mmap --passes 3 --sync none
	[ "$(pass_counter 1 mkwrite_first)" = $N ]
	[ "$(pass_counter 2 mkwrite_wp)" = 0 ]
	[ "$(pass_counter 3 mkwrite_wp)" = 0 ]
	[ "$(jqv "$JSON" .totals.counters.mkclean_calls)" = 0 ]
}

@test "msync(MS_ASYNC) starts no writeback, so no later faults" {
	wpload_json ext4 --mode mmap --passes 2 --sync msync-async
	[ "$(jqv "$JSON" .totals.counters.mkclean_calls)" = 0 ]
	[ "$(pass_counter 2 mkwrite_first)" = 0 ]
	[ "$(pass_counter 2 mkwrite_wp)" = 0 ]
}

@test "MAP_POPULATE starts read-only: first pass is all write-protect" {
	wpload_json ext4 --mode mmap --populate --passes 2 --sync msync
	[ "$(pass_counter 1 mkwrite_first)" = 0 ]
	[ "$(pass_counter 1 mkwrite_wp)" = $N ]
	[ "$(pass_counter 2 mkwrite_wp)" = $N ]
}

@test "mlock does not save you: write-protect faults after every msync" {
	wpload_json ext4 --mode mmap --mlock --passes 3 --sync msync
	for p in 1 2 3; do
		[ "$(pass_counter $p mkwrite_wp)" = $N ]
		[ "$(pass_counter $p mkclean_ptes)" = "$(timed $N)" ]
	done
}

@test "RocketMQ warm-up (touch, mlock, WILLNEED) does not prevent them either" {
	wpload_json ext4 --mode mmap --warmup --passes 2 --sync msync
	[ "$(pass_counter 1 mkwrite_first)" = 0 ]
	[ "$(pass_counter 1 mkwrite_wp)" = $N ]
	[ "$(pass_counter 2 mkwrite_wp)" = $N ]
}

@test "read-then-write: a read fault leaves a read-only PTE" {
	wpload_json ext4 --mode read-then-write --passes 1
	[ "$(pass_counter 1 mkwrite_first)" = 0 ]
	[ "$(pass_counter 1 mkwrite_wp)" = $N ]
}

@test "MAP_PRIVATE: no mkwrite, no mkclean, nothing dirtied in the file" {
	wpload_json ext4 --mode mmap --private --passes 2 --sync msync
	for c in mkwrite_first mkwrite_wp mkclean_calls dirtied; do
		[ "$(jqv "$JSON" .totals.counters.$c)" = 0 ] || fail "$c"
	done
	[ "$(jqv "$JSON" .totals.counters.mkclean_ptes)" = "$(timed 0)" ]
}

@test "tmpfs: no page_mkwrite and no writeback, even after msync" {
	wpload_json tmpfs --mode mmap --passes 2 --sync msync
	for c in mkwrite_first mkwrite_wp mkclean_calls dirtied; do
		[ "$(jqv "$JSON" .totals.counters.$c)" = 0 ] || fail "$c"
	done
	[ "$(jqv "$JSON" .totals.counters.mkclean_ptes)" = "$(timed 0)" ]
}

@test "write(2): no fault, one ratelimited call per write, stable checks" {
	wpload_json ext4 --mode write --passes 2 --sync fsync
	for p in 1 2; do
		[ "$(pass_counter $p mkwrite_first)" = 0 ]
		[ "$(pass_counter $p mkwrite_wp)" = 0 ]
		[ "$(pass_counter $p bdp_fault_calls)" = "$(timed 0)" ]
		[ "$(pass_counter $p bdp_calls)" = "$(timed $N)" ]
	done
	# Pass 2 writes cached folios: write_begin waits for stability on
	# each (once on 6.12, twice on 6.1: see wpstat_predict.c).
	if [ "$(module_level)" = timing ]; then
		[ "$(pass_counter 2 stable_calls)" -ge $N ]
	else
		[ "$(pass_counter 2 stable_calls)" = null ]
	fi
}

@test "xfs: same faults per page; mkclean may cover several pages per call" {
	wpload_json xfs --mode mmap --passes 2 --sync msync
	[ "$(pass_counter 1 mkwrite_first)" = $N ]
	[ "$(pass_counter 2 mkwrite_wp)" = $N ]
	[ "$(pass_counter 2 mkclean_ptes)" = "$(timed $N)" ]
	[ "$(pass_counter 2 mkclean_calls)" -le $N ]
}

@test "btrfs: same faults per page; two folio_mkclean calls per folio" {
	wpload_json btrfs --mode mmap --passes 2 --sync msync
	[ "$(pass_counter 1 mkwrite_first)" = $N ]
	[ "$(pass_counter 2 mkwrite_wp)" = $N ]
	[ "$(pass_counter 2 mkclean_ptes)" = "$(timed $N)" ]
	[ "$(pass_counter 2 mkclean_calls)" = $((2 * N)) ]
}

@test "two processes at once: each file gets exactly its own counts" {
	local a b ja jb
	a=$(scratch_file ext4)
	b=$(scratch_file ext4)
	wpload --file "$a" --size $((N * 4096)) --passes 4 --sync msync --json >"$BATS_TEST_TMPDIR/a" &
	wpload --file "$b" --size $((N * 4096)) --passes 4 --sync msync --json >"$BATS_TEST_TMPDIR/b" &
	wait
	for f in "$a" "$b"; do
		[ "$(counter "$f" mkwrite_first)" = $N ]
		[ "$(counter "$f" mkwrite_wp)" = $((3 * N)) ]
		[ "$(counter "$f" mkclean_ptes)" = "$(timed $((4 * N)) -)" ]
	done
	# And wpload's own per-file view agrees with the table.
	ja=$(cat "$BATS_TEST_TMPDIR/a")
	[ "$(jqv "$ja" .totals.counters.mkwrite_wp)" = $((3 * N)) ]
}

@test "threads: per-inode totals are the sum of what each thread caused" {
	wpload_json ext4 --mode mmap --threads 4 --passes 3 --sync msync
	[ "$(jqv "$JSON" .totals.counters.mkwrite_first)" = $N ]
	[ "$(jqv "$JSON" .totals.counters.mkwrite_wp)" = $((2 * N)) ]
	[ "$(jqv "$JSON" .totals.counters.mkclean_ptes)" = "$(timed $((3 * N)))" ]
}
