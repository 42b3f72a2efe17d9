// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_stable: a store to a page whose writeback is in flight, and a
 * reset in the middle of such a wait.
 * On a memory-backed null_blk device behind dm-delay (writes, and
 * where a test says reads, complete late) or limited in throughput
 * (slowdev_up(), wpstat_test_dev.c; wps-slowdev for the bats suites).
 *
 * Prediction 8, a store to a page whose writeback is in flight:
 *   ext4_page_mkwrite -> block_page_mkwrite and xfs iomap_page_mkwrite
 *   call folio_wait_stable(), which waits only if mapping_stable_writes():
 *   AS_STABLE_WRITES comes from SB_I_STABLE_WRITES, set at mount from
 *   the device's stable_writes (fs/super.c: bdev_stable_writes()).
 *   btrfs_page_mkwrite() calls folio_wait_writeback() itself, always.
 */
#include "wpstat_test.h"	/* first: it defines _GNU_SOURCE */
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <time.h>
#include <sys/resource.h>
#include "wpstat_faults.h"
#include "wpstat_harness.h"

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
 * This thread's time on a CPU (CLOCK_THREAD_CPUTIME_ID: exact, where
 * schedstat's first field lags by up to a tick) plus its run delay
 * (schedstat's second field, brought up to date each time it is put on
 * a CPU).  What the wall clock spends beyond both, the thread slept.
 */
static int thread_busy_ns(uint64_t *ns)
{
	unsigned long long cpu_field, runq;
	struct timespec ts;
	char buf[128];

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) ||
	    wps_slurp("/proc/thread-self/schedstat", buf, sizeof(buf)) <= 0 ||
	    sscanf(buf, "%llu %llu", &cpu_field, &runq) != 2)
		return -1;
	*ns = ts.tv_sec * 1000000000ULL + ts.tv_nsec + runq;
	return 0;
}

/*
 * The harness's default 30 s covers set-up and teardown too: a fresh
 * null_blk, mkfs, dm-delay and mount, then umount and rmmod.  That fits
 * on Debian's kernels but took 35-45 s on the KASAN+lockdep kernel of
 * make check-debug under TCG, where every variant was killed, most in
 * teardown after their checks had passed.  The checks are unchanged.
 */
TEST_F(stable, store_while_writeback_in_flight)
{
	struct rusage ru0, ru1;
	uint64_t t_sfr, t0, store_ns, busy0, busy1, sleep_ns;
	int64_t wait_ns;
	struct wps before, after, d;
	struct stall_row row;
	long slept;

	/* Dirty every page and give it blocks; then clean it once. */
	wps_store_pages(self->map, NPAGES, 1);
	ASSERT_EQ(0, fsync(self->fd));
	wps_store_pages(self->map, NPAGES, 2);
	ASSERT_EQ(0, wps_read(self->path, &before));

	/* Start writeback (mkclean write-protects), do not wait for it... */
	t_sfr = wpstat_now_ns();
	ASSERT_EQ(0, sync_file_range(self->fd, 0, 0, SYNC_FILE_RANGE_WRITE));
	/* ... and store at once: a write-protect fault on a page in flight. */
	ASSERT_EQ(0, getrusage(RUSAGE_THREAD, &ru0));
	ASSERT_EQ(0, thread_busy_ns(&busy0));
	t0 = wpstat_now_ns();
	*(volatile char *)self->map = 3;
	store_ns = wpstat_now_ns() - t0;
	ASSERT_EQ(0, thread_busy_ns(&busy1));
	ASSERT_EQ(0, getrusage(RUSAGE_THREAD, &ru1));
	slept = ru1.ru_nvcsw - ru0.ru_nvcsw;
	/* Both reads of busy are outside the store: at most all of it. */
	sleep_ns = store_ns > busy1 - busy0 ? store_ns - (busy1 - busy0) : 0;
	ASSERT_EQ(0, fsync(self->fd));
	ASSERT_EQ(0, wps_read(self->path, &after));
	d = wps_delta(&after, &before);

	TH_LOG("%s stable_writes=%d: sync_file_range %.1f ms, store %.1f ms (asleep %.1f), "
	       "slept %ld times, stable_calls %lld stable_waits %lld stable_wait %.1f ms wb_waits %lld",
	       variant->fs, variant->stable_writes, (t0 - t_sfr) / 1e6,
	       store_ns / 1e6, sleep_ns / 1e6, slept,
	       (long long)d.stable_calls, (long long)d.stable_waits,
	       d.stable_wait_ns / 1e6, (long long)d.wb_waits);
	/* sync_file_range cleans all; the final fsync the re-stored page. */
	EXPECT_TIMED_EQ(NPAGES + 1, d.mkclean_ptes);
	EXPECT_EQ(1, d.mkwrite_wp);
	if (variant->blocks) {
		/* Waited for most of the device delay (or all of it). */
		EXPECT_LE(DELAY_MS / 2 * 1000000ULL, store_ns);
		EXPECT_LE(1, slept);
		EXPECT_LE(1, d.wb_waits);
	} else {
		/*
		 * Did not wait: the store never slept (a sleep is a voluntary
		 * switch; a preemption is not).  Not a time bound: a guest
		 * whose vCPU the host did not run for 150 ms saw one store
		 * take 153 ms without sleeping (trixie's 6.12, five guests
		 * on two cores).
		 */
		EXPECT_EQ(0, slept);
	}
	/*
	 * This process's row: the wait is its own, as a stable-page wait,
	 * or (btrfs) as a writeback wait below do_page_mkwrite; fsync's
	 * waits are not a write's and are in neither.
	 */
	ASSERT_EQ(1, stall_of(self->path, getpid(), &row));
	TH_LOG("row: fault %.1f ms, stable %.1f, wb %.1f (%lld), lock %.1f (%lld), "
	       "journal %.1f, readin %.1f, unnamed %.1f (cpu %.1f, runq %.1f)",
	       row.fault_ns / 1e6, row.stable_ns / 1e6, row.wb_ns / 1e6,
	       (long long)row.wb_waits, row.lock_ns / 1e6,
	       (long long)row.lock_waits, row.journal_ns / 1e6,
	       row.readin_ns / 1e6, row.fault_unnamed_ns / 1e6,
	       row.fault_cpu_ns / 1e6, row.fault_runq_ns / 1e6);
	EXPECT_EQ(d.stable_waits, row.stable_waits);
	EXPECT_EQ(variant->blocks && !variant->stable_wait, row.wb_waits);
	/*
	 * The wait holds most of what the store slept, and lies inside the
	 * store.  Most of the sleep, not most of the device delay: a host
	 * that does not run the guest's vCPU between the store's start and
	 * its wait (QEMU TCG has no steal clock: inside the guest that
	 * looks like the store's CPU time) leaves less of the delay to wait
	 * for.  A clean-clone make check beside bench guests (6.12 guests at
	 * 2.1-2.7 times their time) saw btrfs's store take 211 ms and its
	 * writeback wait 84.  Measured here under load (6.12, 20 runs, up to
	 * 2 busy loops in the guest and 3 on the host): the wait was 0.96-1.17
	 * of the sleep; btrfs's store sometimes sleeps a few ms more after
	 * it, on its ordered extent, a sleep no probe names.  The wait can
	 * exceed the sleep by the run delay after its wake-up.
	 */
	wait_ns = variant->stable_wait ? d.stable_wait_ns : row.wb_ns;
	if (variant->blocks) {
		EXPECT_LE((int64_t)sleep_ns / 2, wait_ns);
		EXPECT_GE((int64_t)store_ns, wait_ns);
	}
	if (variant->stable_wait) {
		EXPECT_LE(1, d.stable_waits);
		EXPECT_GE(DELAY_MS * 10 * 1000000LL, d.stable_wait_ns);
	} else {
		EXPECT_EQ(0, d.stable_waits);
		EXPECT_EQ(0, d.stable_wait_ns);
	}
}

/* ---- a reset in the middle of a wait ------------------------------------- */

/*
 * A wait is counted where it starts (the folio_wait_writeback
 * tracepoint, stable_waits) and timed where it ends (folio_wait_bit()'s
 * return, stable_wait_ns); an event's time goes only to the tables its
 * count went to, so a wait that straddles a reset cannot leave its count
 * in the old tables and its time in the new ones (stable_waits 0,
 * stable_wait_ns about a second).  A store waits about a second for its
 * page's writeback (stable writes, a 1 s device), and a reset comes after
 * 300 ms.
 * Expected: after the wait the new tables hold nothing of it (no wait,
 * no fault, no time: the inode row and the storer's stall row, if any,
 * all zero), and the file's stall rows add up to its inode row.
 */
#define STRADDLE_DELAY_MS	1000
#define STRADDLE_PAGES		4

FIXTURE(straddle) {
	char path[256];
	int fd;
	char *map;
};

FIXTURE_SETUP(straddle)
{
	ASSERT_TRUE(wps_loaded());
	ASSERT_EQ(0, slowdev_up("ext4", "", STRADDLE_DELAY_MS, 1))
		TH_LOG("cannot set up ext4 on null_blk behind dm-delay");
	snprintf(self->path, sizeof(self->path), SLOW_DIR "/straddle");
	self->fd = open(self->path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ftruncate(self->fd, STRADDLE_PAGES * PAGE));
	self->map = map_shared(self->fd, STRADDLE_PAGES);
	ASSERT_NE(NULL, self->map);
}

FIXTURE_TEARDOWN(straddle)
{
	munmap(self->map, STRADDLE_PAGES * PAGE);
	close(self->fd);
	slowdev_down();
}

TEST_F(straddle, reset_during_a_stable_wait)
{
	struct stall_row rows[8];
	int64_t faults = 0, waits = 0, wait_ns = 0, fault_ns = 0;
	uint64_t t0, waited;
	struct wps w;
	int status, n, i;
	pid_t storer;

	wps_store_pages(self->map, STRADDLE_PAGES, 1);
	ASSERT_EQ(0, fsync(self->fd));
	wps_store_pages(self->map, STRADDLE_PAGES, 2);
	/* Writeback in flight for a second; the storer meets it at once. */
	ASSERT_EQ(0, sync_file_range(self->fd, 0, 0, SYNC_FILE_RANGE_WRITE));
	t0 = wpstat_now_ns();
	storer = fork();
	ASSERT_LE(0, storer);
	if (!storer) {
		*(volatile char *)self->map = 3;
		_exit(0);
	}
	usleep(300 * 1000);
	ASSERT_EQ(0, wps_control("reset"));
	ASSERT_EQ(storer, waitpid(storer, &status, 0));
	waited = wpstat_now_ns() - t0;
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	ASSERT_EQ(0, wps_read(self->path, &w));
	n = read_stalls(self->path, rows, 8);
	ASSERT_LE(0, n);
	for (i = 0; i < n; i++) {
		TH_LOG("row: tgid %ld faults %lld stable %lld %.1f ms fault %.1f ms",
		       rows[i].tgid, (long long)(rows[i].fault_first + rows[i].fault_wp),
		       (long long)rows[i].stable_waits, rows[i].stable_ns / 1e6,
		       rows[i].fault_ns / 1e6);
		faults += rows[i].fault_first + rows[i].fault_wp;
		waits += rows[i].stable_waits;
		wait_ns += rows[i].stable_ns;
		fault_ns += rows[i].fault_ns > 0 ? rows[i].fault_ns : 0;
	}
	TH_LOG("store took %.1f ms; after the reset: stable_waits %lld, stable_wait_ns %.1f ms, mkwrite_wp %lld, mkwrite_ns %.1f ms",
	       waited / 1e6, (long long)w.stable_waits, w.stable_wait_ns / 1e6,
	       (long long)w.mkwrite_wp, w.mkwrite_ns / 1e6);
	/* The store did wait across the reset. */
	ASSERT_LE(STRADDLE_DELAY_MS / 2 * 1000000ULL, waited);
	EXPECT_EQ(0, w.stable_waits);
	EXPECT_EQ(0, w.stable_wait_ns);
	EXPECT_EQ(0, w.mkwrite_first + w.mkwrite_wp);
	EXPECT_EQ(0, faults);
	EXPECT_EQ(0, waits);
	EXPECT_EQ(0, wait_ns);
	EXPECT_EQ(0, fault_ns);
	if (wps_timing() > 0)
		EXPECT_EQ(0, w.mkwrite_ns);
}

TEST_HARNESS_MAIN
