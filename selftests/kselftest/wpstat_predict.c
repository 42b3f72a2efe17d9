// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_predict: the kernel behaves as a reading of its source predicts.
 *
 * Each test states the numbers it expects and the kernel functions they
 * come from.  Unless a test says otherwise: one thread, a file of
 * NPAGES 4 KiB pages made with ftruncate (nothing cached), one store per
 * page, periodic writeback disabled by guest-check.sh
 * (vm.dirty_writeback_centisecs=0), and only this file's counters read.
 *
 * The call chains (mm/memory.c, mm/page-writeback.c, mm/rmap.c):
 *   first store, no PTE:  do_shared_fault -> do_page_mkwrite (vmf->pte
 *       NULL: mkwrite_first) -> finish_fault -> fault_dirty_shared_page
 *       -> balance_dirty_pages_ratelimited (bdp_fault_calls)
 *   writeback start:      folio_clear_dirty_for_io -> folio_mkclean
 *       (returns the PTEs it write-protected: mkclean_ptes)
 *   store on a read-only PTE: do_wp_page -> wp_page_shared ->
 *       do_page_mkwrite (vmf->pte set: mkwrite_wp)
 */
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "wpstat_test.h"
#include "kselftest_harness.h"

#define NPAGES	64

/*
 * Filesystems, mounted by guest-check.sh.  has_mkwrite: the mapping has
 * ->page_mkwrite (ext4_page_mkwrite, xfs_write_fault/iomap_page_mkwrite,
 * btrfs_page_mkwrite); shmem has none, and no writeback, so tmpfs is never
 * write-notified.  large_folios: xfs maps its page cache with large folios
 * (mapping_set_large_folios in xfs_setup_inode), so one folio_mkclean or
 * one dirtying may cover several pages; ext4 and btrfs use order-0 folios.
 * mkclean_per_folio: folio_mkclean calls per order-0 folio written back;
 * btrfs clears each folio dirty twice, in extent_write_cache_pages() and
 * again in extent_writepage_io() -> btrfs_folio_clear_dirty() (6.1:
 * __extent_writepage_io() -> btrfs_page_clear_dirty()), and
 * folio_clear_dirty_for_io() calls folio_mkclean() every time; the second
 * call finds no writable PTE and returns 0.
 * stable_per_write_61/_612: folio_wait_stable calls per page-sized
 * write(2) on a cached page: ext4 on 6.1 waits twice in
 * ext4_da_write_begin() (grab_cache_page_write_begin() with FGP_STABLE,
 * then wait_for_stable_page()), once on 6.12 (FGP_WRITEBEGIN); xfs once
 * (iomap_write_begin, FGP_STABLE); btrfs on 6.1 waits with
 * wait_on_page_writeback() in prepare_pages() and never calls
 * folio_wait_stable, on 6.12 prepare_one_folio() uses FGP_STABLE;
 * shmem_write_begin() never waits.
 */
FIXTURE(pred) {
	char path[256];
	int fd;
	char *map;
	struct wps base;
};

FIXTURE_VARIANT(pred) {
	const char *fs;
	bool has_mkwrite;
	bool large_folios;
	int mkclean_per_folio;
	int stable_per_write_61;
	int stable_per_write_612;
};

FIXTURE_VARIANT_ADD(pred, ext4) {
	.fs = "ext4", .has_mkwrite = true, .mkclean_per_folio = 1,
	.stable_per_write_61 = 2, .stable_per_write_612 = 1,
};
FIXTURE_VARIANT_ADD(pred, xfs) {
	.fs = "xfs", .has_mkwrite = true, .large_folios = true,
	.mkclean_per_folio = 1,
	.stable_per_write_61 = 1, .stable_per_write_612 = 1,
};
FIXTURE_VARIANT_ADD(pred, btrfs) {
	.fs = "btrfs", .has_mkwrite = true, .mkclean_per_folio = 2,
	.stable_per_write_61 = 0, .stable_per_write_612 = 1,
};
FIXTURE_VARIANT_ADD(pred, tmpfs) {
	.fs = "tmpfs", .has_mkwrite = false,
};

FIXTURE_SETUP(pred)
{
	ASSERT_TRUE(wps_loaded()) TH_LOG("wpstat is not loaded");
	self->fd = wps_scratch(variant->fs, "pred", NPAGES, self->path,
			       sizeof(self->path));
	ASSERT_LE(0, self->fd) TH_LOG("no scratch file on %s", variant->fs);
	self->map = NULL;
}

FIXTURE_TEARDOWN(pred)
{
	if (self->map)
		munmap(self->map, NPAGES * PAGE);
	close(self->fd);
	unlink(self->path);
}

static char *map_file(int fd, int flags)
{
	char *map = mmap(NULL, NPAGES * PAGE, PROT_READ | PROT_WRITE, flags,
			 fd, 0);

	return map == MAP_FAILED ? NULL : map;
}

/* Counters accumulated since the previous call. */
#define SINCE() WPS_SINCE(self->path, &self->base)

/* Prediction 1 (ext4), 2 (btrfs, xfs) and 5 (tmpfs). */
TEST_F(pred, store_msync_store_store)
{
	struct wps d;

	self->map = map_file(self->fd, MAP_SHARED);
	ASSERT_NE(NULL, self->map);

	/* Pass 1: no PTEs, so every store is a first-write mkwrite. */
	wps_store_pages(self->map, NPAGES, 1);
	d = SINCE();
	if (variant->has_mkwrite) {
		EXPECT_EQ(NPAGES, d.mkwrite_first);
		EXPECT_EQ(0, d.mkwrite_wp);
		/* fault_dirty_shared_page: one ratelimited call per fault. */
		EXPECT_EQ(NPAGES, d.bdp_fault_calls);
		if (variant->large_folios) {
			EXPECT_LE(1, d.dirtied);
			EXPECT_GE(NPAGES, d.dirtied);
		} else {
			EXPECT_EQ(NPAGES, d.dirtied);
		}
	} else {
		/* shmem: no ->page_mkwrite, noop_dirty_folio accounts nothing. */
		EXPECT_EQ(0, d.mkwrite_first + d.mkwrite_wp);
		EXPECT_EQ(0, d.dirtied);
	}
	EXPECT_EQ(0, d.mkclean_calls);

	/* msync(MS_SYNC) writes back: mkclean write-protects every PTE. */
	ASSERT_EQ(0, msync(self->map, NPAGES * PAGE, MS_SYNC));
	d = SINCE();
	if (variant->has_mkwrite) {
		EXPECT_TIMED_EQ(NPAGES, d.mkclean_ptes);
		if (variant->large_folios) {
			EXPECT_LE(1, d.mkclean_calls);
			EXPECT_GE(NPAGES, d.mkclean_calls);
		} else {
			EXPECT_EQ(NPAGES * variant->mkclean_per_folio,
				  d.mkclean_calls);
		}
	} else {
		/* shmem has no writeback: msync never reaches folio_mkclean. */
		EXPECT_EQ(0, d.mkclean_calls);
		EXPECT_TIMED_EQ(0, d.mkclean_ptes);
	}
	EXPECT_EQ(0, d.mkwrite_first + d.mkwrite_wp);

	/* Pass 2: present read-only PTEs, so every store is write-protect. */
	wps_store_pages(self->map, NPAGES, 2);
	d = SINCE();
	EXPECT_EQ(0, d.mkwrite_first);
	EXPECT_EQ(variant->has_mkwrite ? NPAGES : 0, d.mkwrite_wp);
	EXPECT_EQ(variant->has_mkwrite ? NPAGES : 0, d.bdp_fault_calls);

	/* Pass 3, no writeback in between: PTEs are writable, no faults. */
	wps_store_pages(self->map, NPAGES, 3);
	d = SINCE();
	EXPECT_EQ(0, d.mkwrite_first);
	EXPECT_EQ(0, d.mkwrite_wp);
	EXPECT_EQ(0, d.bdp_fault_calls);
	EXPECT_EQ(0, d.mkclean_calls);
	EXPECT_EQ(0, d.dirtied);
}

/*
 * Prediction 3a: MAP_POPULATE populates a shared mapping with read faults
 * (populate_vma_page_range() sets FOLL_WRITE only for private writable
 * VMAs), so the first pass already takes write-protect faults.
 */
TEST_F(pred, populate_starts_read_only)
{
	struct wps d;

	if (!variant->has_mkwrite)
		SKIP(return, "%s has no page_mkwrite: nothing to populate read-only",
		     variant->fs);
	self->map = map_file(self->fd, MAP_SHARED | MAP_POPULATE);
	ASSERT_NE(NULL, self->map);
	SINCE();
	wps_store_pages(self->map, NPAGES, 1);
	d = SINCE();
	EXPECT_EQ(0, d.mkwrite_first);
	EXPECT_EQ(NPAGES, d.mkwrite_wp);

	ASSERT_EQ(0, msync(self->map, NPAGES * PAGE, MS_SYNC));
	wps_store_pages(self->map, NPAGES, 2);
	d = SINCE();
	EXPECT_TIMED_EQ(NPAGES, d.mkclean_ptes);
	EXPECT_EQ(NPAGES, d.mkwrite_wp);
}

/*
 * Prediction 3b: mlock() populates like MAP_POPULATE (read-only for a
 * shared mapping) and does not stop writeback from write-protecting the
 * locked PTEs: every rewrite after msync is a write-protect fault.
 */
TEST_F(pred, mlock_does_not_prevent_wp_faults)
{
	struct wps d;

	if (!variant->has_mkwrite)
		SKIP(return, "%s has no page_mkwrite", variant->fs);
	self->map = map_file(self->fd, MAP_SHARED);
	ASSERT_NE(NULL, self->map);
	ASSERT_EQ(0, mlock(self->map, NPAGES * PAGE));
	SINCE();
	wps_store_pages(self->map, NPAGES, 1);
	d = SINCE();
	EXPECT_EQ(0, d.mkwrite_first);
	EXPECT_EQ(NPAGES, d.mkwrite_wp);

	ASSERT_EQ(0, msync(self->map, NPAGES * PAGE, MS_SYNC));
	wps_store_pages(self->map, NPAGES, 2);
	d = SINCE();
	EXPECT_TIMED_EQ(NPAGES, d.mkclean_ptes);
	EXPECT_EQ(NPAGES, d.mkwrite_wp);
	munlock(self->map, NPAGES * PAGE);
}

/*
 * Prediction 4: MAP_PRIVATE is never write-notify (vma_wants_writenotify()
 * requires VM_SHARED); stores copy on write into anonymous pages, msync
 * does not write them back, and folio_mkclean skips private VMAs.
 */
TEST_F(pred, private_mapping_never_notifies)
{
	struct wps d;

	self->map = map_file(self->fd, MAP_PRIVATE);
	ASSERT_NE(NULL, self->map);
	wps_store_pages(self->map, NPAGES, 1);
	ASSERT_EQ(0, msync(self->map, NPAGES * PAGE, MS_SYNC));
	wps_store_pages(self->map, NPAGES, 2);
	d = SINCE();
	EXPECT_EQ(0, d.mkwrite_first);
	EXPECT_EQ(0, d.mkwrite_wp);
	EXPECT_EQ(0, d.mkclean_calls);
	EXPECT_TIMED_EQ(0, d.mkclean_ptes);
	EXPECT_EQ(0, d.dirtied);
	EXPECT_EQ(0, d.bdp_fault_calls);
}

/*
 * Prediction 7: msync(MS_ASYNC) has started no I/O since 2.6.19
 * (mm/msync.c only fsyncs for MS_SYNC), so nothing is cleaned and the
 * next pass finds its PTEs still writable.
 */
TEST_F(pred, msync_async_starts_no_writeback)
{
	struct wps d;

	self->map = map_file(self->fd, MAP_SHARED);
	ASSERT_NE(NULL, self->map);
	wps_store_pages(self->map, NPAGES, 1);
	SINCE();
	ASSERT_EQ(0, msync(self->map, NPAGES * PAGE, MS_ASYNC));
	wps_store_pages(self->map, NPAGES, 2);
	d = SINCE();
	EXPECT_EQ(0, d.mkclean_calls);
	EXPECT_TIMED_EQ(0, d.mkclean_ptes);
	EXPECT_EQ(0, d.mkwrite_first);
	EXPECT_EQ(0, d.mkwrite_wp);
}

/*
 * Prediction 6: write(2) takes no fault.  generic_perform_write (ext4,
 * tmpfs), iomap_write_iter (xfs) and btrfs_buffered_write each make one
 * balance_dirty_pages_ratelimited call per page-sized write here, and
 * write_begin checks each cached folio for a stable page as the variant
 * says (stable_per_write_*, above).  Writeback started
 * by fsync still write-protects an existing mapping's PTEs.
 */
TEST_F(pred, write_syscall_path)
{
	char buf[PAGE];
	struct wps d;
	size_t i;

	memset(buf, 7, sizeof(buf));
	for (i = 0; i < NPAGES; i++)	/* cache every page, then clean */
		ASSERT_EQ(PAGE, pwrite(self->fd, buf, PAGE, i * PAGE));
	ASSERT_EQ(0, fsync(self->fd));
	SINCE();

	for (i = 0; i < NPAGES; i++)
		ASSERT_EQ(PAGE, pwrite(self->fd, buf, PAGE, i * PAGE));
	d = SINCE();
	EXPECT_EQ(0, d.mkwrite_first);
	EXPECT_EQ(0, d.mkwrite_wp);
	EXPECT_EQ(0, d.bdp_fault_calls);
	EXPECT_EQ(NPAGES, d.bdp_calls);
	EXPECT_EQ(NPAGES * (wps_kernel_at_least(6, 12) ?
			    variant->stable_per_write_612 :
			    variant->stable_per_write_61), d.stable_calls);

	/* A mapping written through, then fsync: its PTEs are cleaned. */
	self->map = map_file(self->fd, MAP_SHARED);
	ASSERT_NE(NULL, self->map);
	wps_store_pages(self->map, NPAGES, 1);
	for (i = 0; i < NPAGES; i++)
		ASSERT_EQ(PAGE, pwrite(self->fd, buf, PAGE, i * PAGE));
	ASSERT_EQ(0, fsync(self->fd));
	SINCE();
	wps_store_pages(self->map, NPAGES, 2);
	d = SINCE();
	EXPECT_EQ(variant->has_mkwrite ? NPAGES : 0, d.mkwrite_wp);
	EXPECT_EQ(0, d.mkwrite_first);
}

/*
 * Prediction 10: two processes writing two files at once each get their
 * own exact counts: per pass of K, NPAGES faults, and NPAGES PTEs cleaned
 * by each msync.  Counted to the wrong inode, or twice, this fails.
 */
TEST_F(pred, two_processes_exact_attribution)
{
	const int passes = 4;
	char other[256];
	int fd2, status, p;
	struct wps a, b;
	pid_t kids[2];

	if (!variant->has_mkwrite)
		SKIP(return, "%s has no page_mkwrite", variant->fs);
	fd2 = wps_scratch(variant->fs, "pred-other", NPAGES, other,
			  sizeof(other));
	ASSERT_LE(0, fd2);
	for (p = 0; p < 2; p++) {
		kids[p] = fork();
		ASSERT_LE(0, kids[p]);
		if (kids[p] == 0) {
			char *m = map_file(p ? fd2 : self->fd, MAP_SHARED);
			int i;

			if (!m)
				_exit(1);
			for (i = 0; i < passes; i++) {
				wps_store_pages(m, NPAGES, i);
				if (msync(m, NPAGES * PAGE, MS_SYNC))
					_exit(1);
			}
			_exit(0);
		}
	}
	for (p = 0; p < 2; p++) {
		ASSERT_EQ(kids[p], waitpid(kids[p], &status, 0));
		ASSERT_EQ(0, status);
	}
	ASSERT_EQ(0, wps_read(self->path, &a));
	ASSERT_EQ(0, wps_read(other, &b));
	EXPECT_EQ(NPAGES, a.mkwrite_first);
	EXPECT_EQ(NPAGES, b.mkwrite_first);
	EXPECT_EQ(NPAGES * (passes - 1), a.mkwrite_wp);
	EXPECT_EQ(NPAGES * (passes - 1), b.mkwrite_wp);
	EXPECT_TIMED_EQ(NPAGES * passes, a.mkclean_ptes);
	EXPECT_TIMED_EQ(NPAGES * passes, b.mkclean_ptes);
	EXPECT_EQ(NPAGES * passes, a.bdp_fault_calls);
	EXPECT_EQ(NPAGES * passes, b.bdp_fault_calls);
	close(fd2);
	unlink(other);
}

TEST_HARNESS_MAIN
