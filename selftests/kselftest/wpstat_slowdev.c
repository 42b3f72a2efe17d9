// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_slowdev: predictions that need writeback in flight, on a
 * memory-backed null_blk device behind dm-delay (writes complete
 * DELAY_MS late) or limited to about 2 MB/s (one 4 KiB request in flight,
 * each completing after 2 ms).
 *
 * Prediction 8, a store to a page whose writeback is in flight:
 *   ext4_page_mkwrite -> block_page_mkwrite and xfs iomap_page_mkwrite
 *   call folio_wait_stable(), which waits only if mapping_stable_writes():
 *   AS_STABLE_WRITES comes from SB_I_STABLE_WRITES, set at mount from
 *   the device's stable_writes (fs/super.c: bdev_stable_writes()).
 *   btrfs_page_mkwrite() calls folio_wait_writeback() itself, always.
 * Prediction 9, dirty throttling: past the dirty limits,
 *   balance_dirty_pages() pauses the dirtier (io_schedule_timeout), and
 *   the pause belongs to the file whose ratelimited call got there.
 */
#include "wpstat_test.h"	/* first: it defines _GNU_SOURCE */
#include "kselftest_harness.h"

#define DELAY_MS	200
#define NPAGES		16

FIXTURE(stable) {
	char path[256];
	int fd;
	char *map;
};

FIXTURE_VARIANT(stable) {
	const char *fs;
	int stable_writes;
	bool blocks;		/* the store waits for the writeback */
	bool stable_wait;	/* ... in folio_wait_stable() */
};

/* 8a: no stable writes: the store dirties the page under writeback. */
FIXTURE_VARIANT_ADD(stable, ext4_stable0) { .fs = "ext4" };
FIXTURE_VARIANT_ADD(stable, xfs_stable0) { .fs = "xfs" };
/* 8b: stable writes: folio_wait_stable() blocks until the I/O is done. */
FIXTURE_VARIANT_ADD(stable, ext4_stable1) {
	.fs = "ext4", .stable_writes = 1, .blocks = true, .stable_wait = true,
};
FIXTURE_VARIANT_ADD(stable, xfs_stable1) {
	.fs = "xfs", .stable_writes = 1, .blocks = true, .stable_wait = true,
};
/* 8c: btrfs_page_mkwrite() waits for writeback whatever the device says. */
FIXTURE_VARIANT_ADD(stable, btrfs_stable0) { .fs = "btrfs", .blocks = true };

FIXTURE_SETUP(stable)
{
	ASSERT_TRUE(wps_loaded());
	ASSERT_EQ(0, slowdev_up(variant->fs, "", DELAY_MS,
				variant->stable_writes))
		TH_LOG("cannot set up %s on null_blk", variant->fs);
	snprintf(self->path, sizeof(self->path), SLOW_DIR "/f");
	self->fd = open(self->path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ftruncate(self->fd, NPAGES * PAGE));
	self->map = mmap(NULL, NPAGES * PAGE, PROT_READ | PROT_WRITE,
			 MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->map);
}

FIXTURE_TEARDOWN(stable)
{
	munmap(self->map, NPAGES * PAGE);
	close(self->fd);
	slowdev_down();
}

/*
 * The harness's default 30 s covers set-up and teardown too: a fresh
 * null_blk, mkfs, dm-delay and mount, then umount and rmmod.  That fits
 * on Debian's kernels but took 35-45 s on the KASAN+lockdep kernel of
 * make check-debug under TCG, where every variant was killed, most in
 * teardown after their checks had passed.  The checks are unchanged.
 */
TEST_F_TIMEOUT(stable, store_while_writeback_in_flight, 120)
{
	uint64_t t0, store_ns;
	struct wps before, after, d;
	struct stall_row row;

	/* Dirty every page and give it blocks; then clean it once. */
	wps_store_pages(self->map, NPAGES, 1);
	ASSERT_EQ(0, fsync(self->fd));
	wps_store_pages(self->map, NPAGES, 2);
	ASSERT_EQ(0, wps_read(self->path, &before));

	/* Start writeback (mkclean write-protects), do not wait for it... */
	ASSERT_EQ(0, sync_file_range(self->fd, 0, 0, SYNC_FILE_RANGE_WRITE));
	/* ... and store at once: a write-protect fault on a page in flight. */
	t0 = wpstat_now_ns();
	*(volatile char *)self->map = 3;
	store_ns = wpstat_now_ns() - t0;
	ASSERT_EQ(0, fsync(self->fd));
	ASSERT_EQ(0, wps_read(self->path, &after));
	d = wps_delta(&after, &before);

	TH_LOG("%s stable_writes=%d: store %.1f ms, stable_calls %lld "
	       "stable_waits %lld stable_wait %.1f ms wb_waits %lld",
	       variant->fs, variant->stable_writes, store_ns / 1e6,
	       (long long)d.stable_calls, (long long)d.stable_waits,
	       d.stable_wait_ns / 1e6, (long long)d.wb_waits);
	/* sync_file_range cleans all; the final fsync the re-stored page. */
	EXPECT_TIMED_EQ(NPAGES + 1, d.mkclean_ptes);
	EXPECT_EQ(1, d.mkwrite_wp);
	if (variant->blocks) {
		/* Waited for most of the device delay (or all of it). */
		EXPECT_LE(DELAY_MS / 2 * 1000000ULL, store_ns);
		EXPECT_LE(1, d.wb_waits);
	} else {
		EXPECT_GT(DELAY_MS / 2 * 1000000ULL, store_ns);
	}
	/*
	 * This process's row: the wait is its own, as a stable-page wait,
	 * or (btrfs) as a writeback wait below do_page_mkwrite; fsync's
	 * waits are not a write's and are in neither.
	 */
	ASSERT_EQ(1, stall_of(self->path, getpid(), &row));
	EXPECT_EQ(d.stable_waits, row.stable_waits);
	EXPECT_EQ(variant->blocks && !variant->stable_wait, row.wb_waits);
	if (variant->blocks && !variant->stable_wait)
		EXPECT_LE(DELAY_MS / 2 * 1000000LL, row.wb_ns);
	if (variant->stable_wait) {
		EXPECT_LE(1, d.stable_waits);
		EXPECT_LE(DELAY_MS / 2 * 1000000LL, d.stable_wait_ns);
		EXPECT_GE(DELAY_MS * 10 * 1000000LL, d.stable_wait_ns);
	} else {
		EXPECT_EQ(0, d.stable_waits);
		EXPECT_EQ(0, d.stable_wait_ns);
	}
}

/*
 * Prediction 9: a long write loop on a ~2 MB/s device with
 * dirty_bytes = 4 MiB (dirty_background_bytes = 1 MiB) has to be paused
 * by balance_dirty_pages(); an idle neighbour file on the same device
 * gets none of it.  (null_blk's own mbps= limit stalled mkfs for minutes
 * here, hence the queue-depth-1 device.)
 */
#define THROTTLE_PAGES	(12 * 256)	/* 12 MiB */
#define THROTTLE_DEV	"irqmode=2 completion_nsec=2000000 hw_queue_depth=1 max_sectors=8"

FIXTURE(throttle) {
	char path[256], idle[256];
	int fd, idle_fd;
	char saved_bytes[64], saved_bg[64];
};

FIXTURE_VARIANT(throttle) {
	bool use_mmap;
};

FIXTURE_VARIANT_ADD(throttle, pwrite) { .use_mmap = false };
FIXTURE_VARIANT_ADD(throttle, mmap) { .use_mmap = true };

FIXTURE_SETUP(throttle)
{
	char buf[PAGE];

	ASSERT_TRUE(wps_loaded());
	ASSERT_EQ(0, slowdev_up("ext4", THROTTLE_DEV, 0, 0));
	ASSERT_LT(0, wps_slurp("/proc/sys/vm/dirty_bytes", self->saved_bytes,
			       sizeof(self->saved_bytes)));
	ASSERT_LT(0, wps_slurp("/proc/sys/vm/dirty_background_bytes",
			       self->saved_bg, sizeof(self->saved_bg)));
	ASSERT_EQ(0, sh("sysctl -q vm.dirty_bytes=%d vm.dirty_background_bytes=%d",
			4 << 20, 1 << 20));
	snprintf(self->path, sizeof(self->path), SLOW_DIR "/busy");
	snprintf(self->idle, sizeof(self->idle), SLOW_DIR "/idle");
	self->fd = open(self->path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	self->idle_fd = open(self->idle, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	ASSERT_LE(0, self->fd);
	ASSERT_LE(0, self->idle_fd);
	/* The neighbour has been written once, so it has a row. */
	memset(buf, 1, sizeof(buf));
	ASSERT_EQ(PAGE, pwrite(self->idle_fd, buf, PAGE, 0));
	ASSERT_EQ(0, fsync(self->idle_fd));
}

FIXTURE_TEARDOWN(throttle)
{
	close(self->fd);
	close(self->idle_fd);
	/* A ratio setting of 0 in *_bytes means "use the ratio". */
	sh("sysctl -q vm.dirty_bytes=%lld vm.dirty_background_bytes=%lld",
	   atoll(self->saved_bytes), atoll(self->saved_bg));
	sh("sysctl -q vm.dirty_ratio=20 vm.dirty_background_ratio=10");
	slowdev_down();
}

TEST_F_TIMEOUT(throttle, long_write_loop_is_paused, 240)
{
	struct wps busy0, busy1, idle0, idle1, d, di;
	struct stall_row row, none;
	char buf[PAGE];
	size_t i;

	memset(buf, 2, sizeof(buf));
	ASSERT_EQ(0, ftruncate(self->fd, THROTTLE_PAGES * PAGE));
	ASSERT_EQ(0, wps_read(self->path, &busy0));
	ASSERT_EQ(0, wps_read(self->idle, &idle0));
	if (variant->use_mmap) {
		char *map = mmap(NULL, THROTTLE_PAGES * PAGE,
				 PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);

		ASSERT_NE(MAP_FAILED, map);
		wps_store_pages(map, THROTTLE_PAGES, 2);
		munmap(map, THROTTLE_PAGES * PAGE);
	} else {
		for (i = 0; i < THROTTLE_PAGES; i++)
			ASSERT_EQ(PAGE, pwrite(self->fd, buf, PAGE, i * PAGE));
	}
	ASSERT_EQ(0, wps_read(self->path, &busy1));
	ASSERT_EQ(0, wps_read(self->idle, &idle1));
	d = wps_delta(&busy1, &busy0);
	di = wps_delta(&idle1, &idle0);
	TH_LOG("%s: bdp_calls %lld throttled %lld pauses %lld pause %.1f ms "
	       "mkwrite_first %lld mkwrite_wp %lld",
	       variant->use_mmap ? "mmap" : "pwrite", (long long)d.bdp_calls,
	       (long long)d.bdp_throttled, (long long)d.bdp_pauses,
	       d.bdp_pause_ns / 1e6, (long long)d.mkwrite_first,
	       (long long)d.mkwrite_wp);

	if (variant->use_mmap) {
		/*
		 * One store per page, but a page can fault twice: the
		 * first fault's balance_dirty_pages() pause happens before
		 * the store retires, and background writeback may clean
		 * and write-protect that page meanwhile, so the store takes
		 * a write-protect fault.  Every fault still dirties and
		 * balances exactly once (fault_dirty_shared_page).
		 */
		EXPECT_EQ(THROTTLE_PAGES, d.mkwrite_first);
		EXPECT_EQ(d.mkwrite_first + d.mkwrite_wp, d.bdp_fault_calls);
		EXPECT_EQ(d.bdp_fault_calls, d.bdp_calls);
	} else {
		EXPECT_EQ(THROTTLE_PAGES, d.bdp_calls);
		EXPECT_EQ(0, d.mkwrite_first + d.mkwrite_wp);
	}
	EXPECT_LT(0, d.bdp_throttled);
	EXPECT_LT(0, d.bdp_pauses);
	/* 12 MiB at ~2 MB/s with 4 MiB allowed dirty: seconds of pauses. */
	EXPECT_LT(1000000000LL, d.bdp_pause_ns);
	/*
	 * The pauses are this process's, on this file (issue 13): the row
	 * has them all, the neighbour file has no row; the pages were
	 * cleaned by the background flusher that balance_dirty_pages()
	 * started over dirty_background_bytes, and every clean has a
	 * trigger.
	 */
	ASSERT_EQ(1, stall_of(self->path, getpid(), &row));
	EXPECT_EQ(0, stall_of(self->idle, getpid(), &none));
	EXPECT_EQ(d.bdp_pauses, row.pauses);
	EXPECT_EQ(d.bdp_pause_ns, row.pause_ns);
	EXPECT_LT(0, row.pause_max_ns);
	EXPECT_GE(row.pause_ns, row.pause_max_ns);
	EXPECT_EQ(row.pause_max_ns, busy1.bdp_pause_max_ns);
	EXPECT_LT(0, d.mkclean_flusher_background);
	EXPECT_EQ(d.mkclean_calls, d.mkclean_msync + d.mkclean_fsync +
		  d.mkclean_sync_file_range + d.mkclean_sync +
		  d.mkclean_flusher_periodic + d.mkclean_flusher_background +
		  d.mkclean_reclaim + d.mkclean_other);
	EXPECT_EQ(0, di.bdp_calls);
	EXPECT_EQ(0, di.bdp_throttled);
	EXPECT_EQ(0, di.bdp_pauses);
	EXPECT_EQ(0, di.bdp_pause_ns);
}

TEST_HARNESS_MAIN
