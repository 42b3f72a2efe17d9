// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_predict: the kernel behaves as a reading of its source predicts.
 *
 * One file, long, because its tests share one fixture (four filesystems)
 * and each test's comment carries its derivation; the read-fault
 * workloads and models are in wpstat_faults.c.
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
#include "wpstat_test.h"	/* first: it defines _GNU_SOURCE (splice) */
#include "wpstat_faults.h"
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "wpstat_harness.h"

#ifndef FICLONE
#define FICLONE	_IOW(0x94, 9, int)
#endif

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
 * call finds no writable PTE and returns 0.  7.2's btrfs adds a third:
 * extent_write_cache_pages() calls folio_mkclean() on each folio it locks
 * for writeback ("revoke writable mmap PTEs before using the data"), and
 * lock_delalloc_folios() on every other folio of the delalloc range, so a
 * range of n folios written in one go takes 3n - 1 (mkclean_calls_of()).
 * stable_per_write_61/_612: folio_wait_stable calls per page-sized
 * write(2) on a cached page: ext4 on 6.1 waits twice in
 * ext4_da_write_begin() (grab_cache_page_write_begin() with FGP_STABLE,
 * then wait_for_stable_page()), once on 6.12 (FGP_WRITEBEGIN); xfs once
 * (iomap_write_begin, FGP_STABLE); btrfs on 6.1 waits with
 * wait_on_page_writeback() in prepare_pages() and never calls
 * folio_wait_stable, on 6.12 prepare_one_folio() uses FGP_STABLE;
 * shmem_write_begin() never waits.
 * stable_new_61: the same per page-sized write to a page not yet cached:
 * __filemap_get_folio() calls folio_wait_stable() for FGP_STABLE only on
 * a folio it found, so only ext4 on 6.1 (wait_for_stable_page() after
 * grab_cache_page_write_begin(), unconditional) checks a new page.
 * stable_new_510: the same on 5.10, whose grab_cache_page_write_begin()
 * calls wait_for_stable_page() on every page, new or cached (there is no
 * FGP_STABLE): ext4 twice (again in ext4_da_write_begin), xfs once
 * (iomap), btrfs never (prepare_pages).
 * mkclean_per_folio_510: 5.10's btrfs clears a page dirty once, in
 * extent_write_cache_pages(); the second clear came with subpage support.
 * reflink: ->remap_file_range (xfs_file_remap_range, btrfs_remap_file_range),
 * which vfs_copy_file_range() tries first on the same superblock.
 * bdp_per_batch: btrfs_buffered_write() calls
 * balance_dirty_pages_ratelimited_flags() once per batch of nrptrs pages,
 * nrptrs = max(8, min(pages left, 512, nr_dirtied_pause - nr_dirtied)),
 * not once per folio as generic_perform_write() and iomap_write_iter() do;
 * and when lock_and_cleanup_extent() finds an ordered extent still in the
 * batch's range (the previous fsync's, not yet finished) it releases the
 * pages, waits for it and returns -EAGAIN: "goto again" balances and
 * prepares the batch once more, each page through folio_wait_stable()
 * again (6.12; seen once in a CI run: 80 stable calls for 64 pages).
 * 7.2's btrfs_buffered_write() goes folio by folio instead
 * (copy_one_range(): one balance_dirty_pages_ratelimited_flags() per
 * folio), like the others: bdp_batched() says which applies.
 */
FIXTURE(pred) {
	char path[256];
	int fd;
	char *map;
	struct wps base;
	/* fault_around_bytes to restore in teardown, or -1. */
	long fab_saved;
	/* A second scratch file (fd2 -1 if none), removed in teardown. */
	char path2[256];
	int fd2;
	/* The device's read_ahead_kb to restore in teardown, or -1. */
	char ra_path[96];
	long ra_saved;
};

FIXTURE_VARIANT(pred) {
	const char *fs;
	bool has_mkwrite;
	bool large_folios;
	int mkclean_per_folio;
	int stable_per_write_61;
	int stable_per_write_612;
	int stable_new_61;
	int stable_new_510;
	int mkclean_per_folio_510;
	bool reflink;
	bool bdp_per_batch;
};

FIXTURE_VARIANT_ADD(pred, ext4) {
	.fs = "ext4", .has_mkwrite = true, .mkclean_per_folio = 1,
	.stable_per_write_61 = 2, .stable_per_write_612 = 1,
	.stable_new_61 = 1, .stable_new_510 = 2, .mkclean_per_folio_510 = 1,
};
FIXTURE_VARIANT_ADD(pred, xfs) {
	.fs = "xfs", .has_mkwrite = true, .large_folios = true,
	.mkclean_per_folio = 1,
	.stable_per_write_61 = 1, .stable_per_write_612 = 1, .reflink = true,
	.stable_new_510 = 1, .mkclean_per_folio_510 = 1,
};
FIXTURE_VARIANT_ADD(pred, btrfs) {
	.fs = "btrfs", .has_mkwrite = true, .mkclean_per_folio = 2,
	.stable_per_write_61 = 0, .stable_per_write_612 = 1, .reflink = true,
	.bdp_per_batch = true, .mkclean_per_folio_510 = 1,
};
FIXTURE_VARIANT_ADD(pred, tmpfs) {
	.fs = "tmpfs", .has_mkwrite = false,
};

/*
 * The kernels differ here only by release (not by a feature user space can
 * see): 6.1 and 6.12 are the batched btrfs, 7.2 the per-folio one; the
 * change came in between.
 */
static bool btrfs_per_folio(void)
{
	return wps_kernel_at_least(6, 13);
}

/*
 * 5.10, the page era of the 5.4 analysis (measured there; the kernels
 * between 5.10 and 6.1 are not tested).
 */
static bool page_era(void)
{
	return !wps_kernel_at_least(6, 1);
}

/* balance_dirty_pages_ratelimited once per batch, not per folio. */
#define bdp_batched(v)	((v)->bdp_per_batch && !btrfs_per_folio())

/* folio_mkclean() calls for one contiguous dirty range of @folios folios. */
static long mkclean_calls_of(const FIXTURE_VARIANT(pred) *v, long folios)
{
	if (v->bdp_per_batch)				/* btrfs */
		return wps_btrfs_mkclean_calls(folios);
	if (page_era())
		return folios * v->mkclean_per_folio_510;
	return folios * v->mkclean_per_folio;
}

#define FAB_PATH	"/sys/kernel/debug/fault_around_bytes"

/* mm/memory.c's fault_around_bytes (debugfs), or -errno. */
static long fab_get(void)
{
	char buf[32];
	ssize_t n = wps_slurp(FAB_PATH, buf, sizeof(buf));
	struct statfs st;

	/* Mount debugfs if it is not (CONFIG_DEBUG_FS may be off: ENODEV). */
	if (n == -ENOENT && (statfs("/sys/kernel/debug", &st) ||
			     st.f_type != DEBUGFS_MAGIC)) {
		if (mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL))
			return -errno;
		n = wps_slurp(FAB_PATH, buf, sizeof(buf));
	}
	if (n < 0)
		return n;
	return n ? strtol(buf, NULL, 10) : -EINVAL;
}

/* Write @val to the sysfs or debugfs file @path: 0 or -errno. */
static int write_long(const char *path, long val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (dprintf(fd, "%ld\n", val) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static int fab_set(long val)
{
	return write_long(FAB_PATH, val);
}

FIXTURE_SETUP(pred)
{
	ASSERT_TRUE(wps_loaded()) TH_LOG("wpstat is not loaded");
	self->fd = wps_scratch(variant->fs, "pred", NPAGES, self->path,
			       sizeof(self->path));
	ASSERT_LE(0, self->fd) TH_LOG("no scratch file on %s", variant->fs);
	self->map = NULL;
	self->fab_saved = -1;
	self->fd2 = -1;
	self->ra_saved = -1;
}

FIXTURE_TEARDOWN(pred)
{
	if (self->map)
		munmap(self->map, NPAGES * PAGE);
	close(self->fd);
	unlink(self->path);
	if (self->fd2 >= 0) {
		close(self->fd2);
		unlink(self->path2);
	}
	if (self->fab_saved >= 0 && fab_set(self->fab_saved))
		TH_LOG("could not restore fault_around_bytes to %ld",
		       self->fab_saved);
	if (self->ra_saved >= 0 && write_long(self->ra_path, self->ra_saved))
		TH_LOG("could not restore %s to %ld", self->ra_path,
		       self->ra_saved);
}

static char *map_file(int fd, int flags)
{
	char *map = mmap(NULL, NPAGES * PAGE, PROT_READ | PROT_WRITE, flags,
			 fd, 0);

	return map == MAP_FAILED ? NULL : map;
}

/* Counters accumulated since the previous call. */
#define SINCE() WPS_SINCE(self->path, &self->base)

/*
 * Prediction 22: a store to a page of a shared mapping that is
 * not in the page cache faults, and filemap_fault() reads the page in
 * before page_mkwrite can run: it drops the mmap or VMA lock, waits for
 * the read, and has the fault retried with FAULT_FLAG_TRIED (a major
 * fault), which do_page_mkwrite() sees.  With MADV_RANDOM there is no
 * read-around (do_sync_mmap_readahead() returns at once) and the folio is
 * allocated at the fault's own index, of the mapping's smallest order: a
 * page each, on every filesystem here.
 * Expected: on a written, fsynced and dropped file (mincore: nothing
 * resident), NPAGES stores take NPAGES first-write faults, each a read-in
 * (readin_waits == NPAGES); mapped again with every page cached, the same
 * stores take NPAGES first-write faults and no read-in.  tmpfs has no
 * ->page_mkwrite: none of either.
 */
TEST_F(pred, store_reads_uncached_page)
{
	const long n = variant->has_mkwrite ? NPAGES : 0;
	unsigned char vec[NPAGES];
	struct wps d;
	int i, resident = 0;

	ASSERT_EQ(0, pwrite_pages(self->fd, 0, NPAGES, 1));
	ASSERT_EQ(0, fsync(self->fd));
	ASSERT_EQ(0, posix_fadvise(self->fd, 0, 0, POSIX_FADV_DONTNEED));
	self->map = map_file(self->fd, MAP_SHARED);
	ASSERT_NE(NULL, self->map);
	ASSERT_EQ(0, madvise(self->map, NPAGES * PAGE, MADV_RANDOM));
	ASSERT_EQ(0, mincore(self->map, NPAGES * PAGE, vec));
	for (i = 0; i < NPAGES; i++)
		resident += vec[i] & 1;
	if (variant->has_mkwrite)
		ASSERT_EQ(0, resident);
	ASSERT_EQ(0, wps_read(self->path, &self->base));
	wps_store_pages(self->map, NPAGES, 2);
	d = SINCE();
	TH_LOG("%s cold: mkwrite_first %lld readin_waits %lld",
	       variant->fs, (long long)d.mkwrite_first,
	       (long long)d.readin_waits);
	EXPECT_EQ(n, d.mkwrite_first);
	EXPECT_EQ(n, d.readin_waits);

	/* Every page cached now (and written back): no read-in. */
	ASSERT_EQ(0, msync(self->map, NPAGES * PAGE, MS_SYNC));
	munmap(self->map, NPAGES * PAGE);
	self->map = map_file(self->fd, MAP_SHARED);
	ASSERT_NE(NULL, self->map);
	ASSERT_EQ(0, madvise(self->map, NPAGES * PAGE, MADV_RANDOM));
	d = SINCE();
	wps_store_pages(self->map, NPAGES, 3);
	d = SINCE();
	TH_LOG("%s warm: mkwrite_first %lld readin_waits %lld",
	       variant->fs, (long long)d.mkwrite_first,
	       (long long)d.readin_waits);
	EXPECT_EQ(n, d.mkwrite_first);
	EXPECT_EQ(0, d.readin_waits);
}

/*
 * Prediction 1 (ext4), 2 (btrfs, xfs) and 5 (tmpfs).  Per page on order-0
 * folios (ext4 and btrfs up to 6.15); where the page cache uses large
 * folios (xfs; ext4 since 6.16) the expected numbers come from what the
 * kernel did, measured here: a first-write fault may map a whole folio
 * (finish_fault() maps every page of the folio since 6.16), so the stores
 * that found no PTE are the faults; dirtying and folio_mkclean() go folio
 * by folio; write-protect faults and the PTEs folio_mkclean() write-
 * protects stay per page.
 */
TEST_F(pred, store_msync_store_store)
{
	long absent, folios;
	struct wps d;

	self->map = map_file(self->fd, MAP_SHARED);
	ASSERT_NE(NULL, self->map);

	/* Pass 1: no PTEs, so every fault is a first-write mkwrite. */
	absent = wps_store_pages_absent(self->map, NPAGES, 1);
	ASSERT_LT(0, absent);
	folios = variant->has_mkwrite ? wps_folios(self->map, NPAGES) : NPAGES;
	ASSERT_LT(0, folios) TH_LOG("folios behind the mapping: error %ld", folios);
	TH_LOG("%s: %d pages in %ld folios; %ld stores found no PTE",
	       variant->fs, NPAGES, folios, absent);
	if (!variant->large_folios && !wps_kernel_at_least(6, 16))
		EXPECT_EQ(NPAGES, folios);
	d = SINCE();
	if (variant->has_mkwrite) {
		EXPECT_EQ(absent, d.mkwrite_first);
		EXPECT_EQ(0, d.mkwrite_wp);
		/* fault_dirty_shared_page: one ratelimited call per fault. */
		EXPECT_TIMED_EQ(absent, d.bdp_fault_calls);
		/* writeback_dirty_folio: each folio once, clean to dirty. */
		EXPECT_EQ(folios, d.dirtied);
		/* The folios tile the file: their pages are its pages. */
		EXPECT_EQ(NPAGES, d.dirtied_pages);
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
		EXPECT_EQ(mkclean_calls_of(variant, folios), d.mkclean_calls);
		/*
		 * Order-0 folios: a page per call.  One call per folio: the
		 * file's pages.  (btrfs's extra calls on large folios are
		 * not predicted page by page.)
		 */
		if (folios == NPAGES) {
			EXPECT_EQ(d.mkclean_calls, d.mkclean_pages);
		} else if (d.mkclean_calls == folios) {
			EXPECT_EQ(NPAGES, d.mkclean_pages);
		}
	} else {
		EXPECT_EQ(0, d.mkclean_calls);
		EXPECT_TIMED_EQ(0, d.mkclean_ptes);
	}
	EXPECT_EQ(0, d.mkwrite_first + d.mkwrite_wp);

	/* Pass 2: present read-only PTEs, so every store is write-protect. */
	wps_store_pages(self->map, NPAGES, 2);
	d = SINCE();
	EXPECT_EQ(0, d.mkwrite_first);
	EXPECT_EQ(variant->has_mkwrite ? NPAGES : 0, d.mkwrite_wp);
	EXPECT_TIMED_EQ(variant->has_mkwrite ? NPAGES : 0, d.bdp_fault_calls);

	/* Pass 3, no writeback in between: PTEs are writable, no faults. */
	wps_store_pages(self->map, NPAGES, 3);
	d = SINCE();
	EXPECT_EQ(0, d.mkwrite_first);
	EXPECT_EQ(0, d.mkwrite_wp);
	EXPECT_TIMED_EQ(0, d.bdp_fault_calls);
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
	EXPECT_TIMED_EQ(0, d.bdp_fault_calls);
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
	EXPECT_TIMED_EQ(0, d.bdp_fault_calls);
	EXPECT_TIMED_EQ(NPAGES, d.bdp_calls);
	EXPECT_TIMED_EQ(NPAGES * (wps_kernel_at_least(6, 12) ?
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
	long *absent;	/* per child: first pass's stores that found no PTE */

	if (!variant->has_mkwrite)
		SKIP(return, "%s has no page_mkwrite", variant->fs);
	fd2 = wps_scratch(variant->fs, "pred-other", NPAGES, other,
			  sizeof(other));
	ASSERT_LE(0, fd2);
	absent = mmap(NULL, 2 * sizeof(*absent), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, absent);
	for (p = 0; p < 2; p++) {
		kids[p] = fork();
		ASSERT_LE(0, kids[p]);
		if (kids[p] == 0) {
			char *m = map_file(p ? fd2 : self->fd, MAP_SHARED);
			int i;

			if (!m)
				_exit(1);
			for (i = 0; i < passes; i++) {
				if (i)
					wps_store_pages(m, NPAGES, i);
				else
					absent[p] = wps_store_pages_absent(m, NPAGES, i);
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
	/*
	 * First pass: one fault per store that found no PTE (every page on
	 * order-0 folios; one per folio where a fault maps the whole folio,
	 * 6.16+ with large folios); later passes: one per page.
	 */
	ASSERT_LT(0, absent[0]);
	ASSERT_LT(0, absent[1]);
	EXPECT_EQ(absent[0], a.mkwrite_first);
	EXPECT_EQ(absent[1], b.mkwrite_first);
	EXPECT_EQ(NPAGES * (passes - 1), a.mkwrite_wp);
	EXPECT_EQ(NPAGES * (passes - 1), b.mkwrite_wp);
	EXPECT_TIMED_EQ(NPAGES * passes, a.mkclean_ptes);
	EXPECT_TIMED_EQ(NPAGES * passes, b.mkclean_ptes);
	EXPECT_TIMED_EQ(absent[0] + NPAGES * (passes - 1), a.bdp_fault_calls);
	EXPECT_TIMED_EQ(absent[1] + NPAGES * (passes - 1), b.bdp_fault_calls);
	munmap(absent, 2 * sizeof(*absent));
	close(fd2);
	unlink(other);
}

/*
 * Prediction 19: read faults on a shared mapping of a fully cached file
 * come one per fault_around_bytes.  do_read_fault -> should_fault_around
 * -> do_fault_around -> ->map_pages = filemap_map_pages maps every cached,
 * uptodate, unlocked page of the window (next_uptodate_folio skips
 * PG_readahead folios, so the file is cached by pwrite, not by read).
 * FA_NPAGES = 256 pages, mapping 2 MiB-aligned, at the default 65536
 * (16 pages): 256 / 16 = 16 faults.  One page past the alignment: the
 * first window runs 16 pages from vm_start (pages 0-15), the second fault
 * (page 16, VA page 17) maps VA 16-31 of which only VA 17-31 were not
 * mapped, and so on: 17 faults.  fault_around_bytes = 4096:
 * should_fault_around() is false, every load faults through __do_fault ->
 * filemap_fault -> finish_fault: 256 faults.  Faults counted by getrusage
 * (mm_account_fault: minor, as every page is cached); wpstat must see no
 * mkwrite (do_read_fault never calls do_page_mkwrite) and nothing
 * dirtied.  shmem's vm_ops have .map_pages = filemap_map_pages too, and
 * tmpfs pages written by pwrite are uptodate: tmpfs takes the same
 * faults.
 */
TEST_F(pred, read_fault_around)
{
	static const struct {
		long fab;	/* 0: the kernel's current value */
		size_t skew;
	} cases[] = { { 0, 0 }, { 0, 1 }, { PAGE, 0 } };
	long fab = fab_get(), resident, expected;
	size_t c, ppf;
	struct flt f;
	struct wps d;
	char *m;

	if (fab < 0)
		SKIP(return, "no %s (%s): debugfs or the kernel lacks it",
		     FAB_PATH, strerror((int)-fab));
	self->fab_saved = fab;
	ASSERT_EQ(0, ftruncate(self->fd, FA_NPAGES * PAGE));
	ASSERT_EQ(0, pwrite_pages(self->fd, 0, FA_NPAGES, 1));
	ASSERT_EQ(0, fsync(self->fd));
	SINCE();

	for (c = 0; c < ARRAY_SIZE(cases); c++) {
		long set = cases[c].fab ?: fab;

		ASSERT_EQ(0, fab_set(set));
		ASSERT_EQ(set, fab_get());
		ppf = set / PAGE;
		expected = fault_around_model(FA_NPAGES, cases[c].skew, ppf);
		m = map_shared_skewed(self->fd, FA_NPAGES, cases[c].skew);
		ASSERT_NE(NULL, m);
		resident = resident_pages(m, FA_NPAGES);
		f = pass_faults(m, FA_NPAGES, 0);
		/* At once, in case the test dies before teardown. */
		ASSERT_EQ(0, fab_set(fab));
		d = SINCE();
		ASSERT_EQ(0, munmap(m, FA_NPAGES * PAGE));
		TH_LOG("%s: fault_around_bytes %ld, mapping %zu page(s) past 2 MiB: %d pages cached, %ld minor + %ld major faults for %d pages (predicted %ld), mkwrite %lld, dirtied %lld",
		       variant->fs, set, cases[c].skew, (int)resident, f.min,
		       f.maj, FA_NPAGES, expected,
		       (long long)(d.mkwrite_first + d.mkwrite_wp),
		       (long long)d.dirtied);
		EXPECT_EQ(FA_NPAGES, resident);
		EXPECT_EQ(expected, f.min);
		EXPECT_EQ(0, f.maj);
		EXPECT_EQ(0, d.mkwrite_first);
		EXPECT_EQ(0, d.mkwrite_wp);
		EXPECT_TIMED_EQ(0, d.bdp_fault_calls);
		EXPECT_EQ(0, d.dirtied);
	}
	/* The stated numbers at the default (and on any kernel). */
	EXPECT_EQ(16, fault_around_model(FA_NPAGES, 0, 16));
	EXPECT_EQ(17, fault_around_model(FA_NPAGES, 1, 16));
	EXPECT_EQ(FA_NPAGES, fault_around_model(FA_NPAGES, 0, 1));
}

/*
 * Prediction 23: on a cold shared mapping, the direction of a pass decides
 * its page-cache misses (the experiment's cold 1 MiB mmap cells, which
 * glibc's memcpy copies backward: docs/results/experiment.md), and the kernel
 * decides which faults getrusage calls major.
 *
 * filemap_fault on an uncached page counts PGMAJFAULT and calls
 * do_sync_mmap_readahead: read-around of ra_pages (the bdi's, from
 * read_ahead_kb at open: file_ra_state_init) from index - ra_pages / 2,
 * trimmed to EOF (do_page_cache_ra), with PG_readahead ra_pages / 4 pages
 * before the window's end.  Forward, the first fault is the only miss: the
 * pass reaches each mark on a cached page and do_async_mmap_readahead ->
 * page_cache_async_ra reads the next ra_pages, marked on their first page,
 * before the pass gets there (a RAM disk completes reads at once).
 * Backward, each window adds only the pages below its fault: over
 * FA_NPAGES = 256 pages, read_ahead_kb 128 (32 pages) misses every 17
 * pages, 16 times; read_ahead_kb 64, every 9, 29 times
 * (readaround_backward_model).  /proc/vmstat's pgmajfault counts these
 * misses, on every kernel from 5.10 to 7.2.
 *
 * getrusage's ru_majflt (mm_account_fault; also perf's major-faults) counts
 * a fault major when it missed or when it is the retry of one that dropped
 * its lock (FAULT_FLAG_TRIED), and do_async_mmap_readahead drops the lock
 * for every mark it meets (maybe_unlock_mmap_for_io).  Before 6.7 (5.10,
 * 6.1) the fault retries with FAULT_FLAG_TRIED after any VM_FAULT_RETRY
 * (arch/x86/mm/fault.c), so each mark met is one more major fault:
 * forward, the first window's mark and one per later window, npages /
 * ra_pages in all (9 and 17); backward, the one mark the first window,
 * trimmed to EOF, leaves in the file (17, 30).
 * From 6.7 (6.12, 7.2) the fault is taken under the VMA lock first, and
 * FAULT_FLAG_TRIED is set for the retry only if the first try returned
 * VM_FAULT_MAJOR (per-VMA-lock read faults came in 6.7): ru_majflt equals
 * the misses.
 *
 * The file is written, fsynced and dropped (POSIX_FADV_DONTNEED, checked
 * with mincore), and each pass opens it afresh, so that its ra_pages is
 * the one just set.  ext4 only: over a RAM disk its bdi is the device's;
 * xfs reads around in large folios, btrfs has a bdi of its own, and
 * shmem_fault never reads ahead.
 */
TEST_F(pred, cold_mmap_read_around)
{
	static const long ra_kb[] = { 128, 64 };
	/* FAULT_FLAG_TRIED only after a VM_FAULT_MAJOR try (VMA lock). */
	bool retry_counted = !wps_kernel_at_least(6, 7);
	long resident, misses, majflt, saved, vm, ra;
	char buf[32], *m;
	struct stat st;
	struct flt f;
	size_t c;
	int b, fd;

	if (strcmp(variant->fs, "ext4"))
		SKIP(return, "modelled on ext4 over a RAM disk (the device's read_ahead_kb); xfs reads around in large folios, btrfs has a bdi of its own, shmem_fault never reads ahead");
	ASSERT_EQ(0, fstat(self->fd, &st));
	snprintf(self->ra_path, sizeof(self->ra_path),
		 "/sys/dev/block/%u:%u/queue/read_ahead_kb",
		 major(st.st_dev), minor(st.st_dev));
	if (wps_slurp(self->ra_path, buf, sizeof(buf)) <= 0)
		SKIP(return, "no %s: the scratch ext4 is not on a whole disk",
		     self->ra_path);
	ASSERT_LE(0, vmstat_get("pgmajfault"));
	saved = strtol(buf, NULL, 10);
	self->ra_saved = saved;
	ASSERT_EQ(0, ftruncate(self->fd, FA_NPAGES * PAGE));
	ASSERT_EQ(0, pwrite_pages(self->fd, 0, FA_NPAGES, 1));
	ASSERT_EQ(0, fsync(self->fd));

	for (c = 0; c < ARRAY_SIZE(ra_kb); c++) {
		ra = ra_kb[c] * 1024 / PAGE;
		for (b = 0; b < 2; b++) {
			ASSERT_EQ(0, write_long(self->ra_path, ra_kb[c]));
			ASSERT_EQ(0, posix_fadvise(self->fd, 0, 0,
						   POSIX_FADV_DONTNEED));
			fd = open(self->path, O_RDONLY | O_CLOEXEC);
			ASSERT_LE(0, fd);
			m = mmap(NULL, FA_NPAGES * PAGE, PROT_READ, MAP_SHARED,
				 fd, 0);
			ASSERT_NE(MAP_FAILED, m);
			resident = resident_pages(m, FA_NPAGES);
			f = load_pass(m, FA_NPAGES, b, &vm);
			/* At once, in case the test dies before teardown. */
			ASSERT_EQ(0, write_long(self->ra_path, saved));
			ASSERT_EQ(0, munmap(m, FA_NPAGES * PAGE));
			close(fd);
			misses = b ? readaround_backward_model(FA_NPAGES, ra) : 1;
			majflt = misses;
			if (retry_counted)
				majflt += b ? 1 : FA_NPAGES / ra;
			TH_LOG("%s: read_ahead_kb %ld, %s: %ld pages cached before; pgmajfault %ld (predicted %ld), getrusage %ld major (predicted %ld) + %ld minor, for %d pages",
			       variant->fs, ra_kb[c],
			       b ? "last page first" : "first page first",
			       resident, vm, misses, f.maj, majflt, f.min,
			       FA_NPAGES);
			EXPECT_EQ(0, resident);
			EXPECT_EQ(misses, vm);
			EXPECT_EQ(majflt, f.maj);
		}
	}
	/* The stated numbers (and on any kernel). */
	EXPECT_EQ(16, readaround_backward_model(FA_NPAGES, 32));
	EXPECT_EQ(29, readaround_backward_model(FA_NPAGES, 16));
}

/*
 * @d dirtied, for the pages mapped at @map: one per folio, counted
 * (wps_folios): order-0 folios on ext4 and btrfs up to 6.15, large ones
 * on xfs (readahead) and on ext4 since 6.16.
 */
#define EXPECT_DIRTIED_FOLIOS(d, map, npages) do {			\
	long __f = wps_folios((map), (npages));				\
									\
	EXPECT_LT(0, __f);						\
	EXPECT_EQ(__f, (d).dirtied);					\
} while (0)

/*
 * Prediction 20: two warm-ups of a MAP_SHARED writable mapping, side by
 * side, before the first writeback.  mlock() populates through
 * populate_vma_page_range(), which asks for FOLL_WRITE only for private
 * writable VMAs: read faults, read-only PTEs (write-notify:
 * vma_wants_writenotify, ->page_mkwrite), no mkwrite, nothing dirtied.
 * RocketMQ's warmMappedFile stores once per page instead: NPAGES
 * first-write faults (do_shared_fault -> do_page_mkwrite, vmf->pte NULL)
 * that leave writable dirty PTEs.  Measured pass, one store per page:
 * mlock-only NPAGES write-protect faults (do_wp_page -> wp_page_shared),
 * store-warmed 0.  msync(MS_SYNC) write-protects NPAGES PTEs in each
 * (folio_mkclean), and the next pass takes NPAGES write-protect faults in
 * both.  getrusage counts the same faults independently of wpstat.
 * tmpfs: no ->page_mkwrite and a noop bdi (mapping_can_writeback false),
 * so no write-notify: vm_page_prot keeps the write bit, the PTEs mlock
 * installs are writable, and neither the measured pass nor the pass
 * after msync (shmem has no writeback) faults at all.
 */
TEST_F(pred, warmup_mlock_only_vs_store_per_page)
{
	const long n = NPAGES, wp = variant->has_mkwrite ? NPAGES : 0;
	struct flt fm, fs;
	struct wps bm, bs, dm, ds;
	char *mm, *ms;

	self->fd2 = wps_scratch(variant->fs, "pred-store", NPAGES,
				self->path2, sizeof(self->path2));
	ASSERT_LE(0, self->fd2);
	self->map = map_file(self->fd, MAP_SHARED);
	mm = self->map;
	ASSERT_NE(NULL, mm);
	ms = map_file(self->fd2, MAP_SHARED);
	ASSERT_NE(NULL, ms);
	memset(&bm, 0, sizeof(bm));
	memset(&bs, 0, sizeof(bs));
	WPS_SINCE(self->path, &bm);
	WPS_SINCE(self->path2, &bs);

	/* Warm-up. */
	ASSERT_EQ(0, mlock(mm, NPAGES * PAGE));
	fs = pass_faults(ms, NPAGES, 1);
	dm = WPS_SINCE(self->path, &bm);
	ds = WPS_SINCE(self->path2, &bs);
	TH_LOG("%s warm-up: mlock-only mkwrite first %lld wp %lld dirtied %lld; store per page mkwrite first %lld wp %lld dirtied %lld, %ld faults",
	       variant->fs, (long long)dm.mkwrite_first,
	       (long long)dm.mkwrite_wp, (long long)dm.dirtied,
	       (long long)ds.mkwrite_first, (long long)ds.mkwrite_wp,
	       (long long)ds.dirtied, fs.min + fs.maj);
	EXPECT_EQ(0, dm.mkwrite_first + dm.mkwrite_wp);
	EXPECT_EQ(0, dm.dirtied);
	/*
	 * Every page is new (ftruncate): each store faults, tmpfs too, unless
	 * a fault mapped the whole large folio the store landed in (6.16+):
	 * then one fault per folio.  getrusage counts them on its own.
	 */
	EXPECT_GE(n, fs.min + fs.maj);
	EXPECT_LE(wps_folios(ms, NPAGES), fs.min + fs.maj);
	if (!variant->large_folios && !wps_kernel_at_least(6, 16))
		EXPECT_EQ(n, fs.min + fs.maj);
	EXPECT_EQ(wp ? fs.min + fs.maj : 0, ds.mkwrite_first);
	EXPECT_EQ(0, ds.mkwrite_wp);
	/* xfs: the first-write faults' readahead makes large folios. */
	if (wp)
		EXPECT_DIRTIED_FOLIOS(ds, ms, NPAGES);
	else
		EXPECT_EQ(0, ds.dirtied);

	/* Measured pass: one store per page in each. */
	fm = pass_faults(mm, NPAGES, 2);
	fs = pass_faults(ms, NPAGES, 2);
	dm = WPS_SINCE(self->path, &bm);
	ds = WPS_SINCE(self->path2, &bs);
	TH_LOG("%s measured pass: mlock-only %ld faults, mkwrite first %lld wp %lld dirtied %lld; store per page %ld faults, mkwrite first %lld wp %lld dirtied %lld",
	       variant->fs, fm.min + fm.maj, (long long)dm.mkwrite_first,
	       (long long)dm.mkwrite_wp, (long long)dm.dirtied,
	       fs.min + fs.maj, (long long)ds.mkwrite_first,
	       (long long)ds.mkwrite_wp, (long long)ds.dirtied);
	EXPECT_EQ(0, dm.mkwrite_first);
	EXPECT_EQ(wp, dm.mkwrite_wp);
	/*
	 * getrusage: 5.10's fault_dirty_shared_page() drops mmap_lock for
	 * balance_dirty_pages_ratelimited() and returns VM_FAULT_RETRY; the
	 * retried fault (FAULT_FLAG_TRIED) is accounted major by
	 * mm_account_fault().  6.1 and later complete it (VM_FAULT_COMPLETED):
	 * one minor fault.
	 */
	EXPECT_EQ(wp, fm.min + fm.maj);
	if (!page_era())
		EXPECT_EQ(0, fm.maj);
	EXPECT_EQ(0, ds.mkwrite_first + ds.mkwrite_wp);
	EXPECT_EQ(0, fs.min + fs.maj);
	EXPECT_EQ(0, ds.dirtied);
	/* xfs: mlock's read faults read ahead into large folios. */
	if (wp)
		EXPECT_DIRTIED_FOLIOS(dm, mm, NPAGES);
	else
		EXPECT_EQ(0, dm.dirtied);

	/* After writeback: both write-protected, both fault again. */
	ASSERT_EQ(0, msync(mm, NPAGES * PAGE, MS_SYNC));
	ASSERT_EQ(0, msync(ms, NPAGES * PAGE, MS_SYNC));
	dm = WPS_SINCE(self->path, &bm);
	ds = WPS_SINCE(self->path2, &bs);
	EXPECT_TIMED_EQ(wp, dm.mkclean_ptes);
	EXPECT_TIMED_EQ(wp, ds.mkclean_ptes);
	fm = pass_faults(mm, NPAGES, 3);
	fs = pass_faults(ms, NPAGES, 3);
	dm = WPS_SINCE(self->path, &bm);
	ds = WPS_SINCE(self->path2, &bs);
	TH_LOG("%s after msync: mlock-only %ld faults, mkwrite wp %lld; store per page %ld faults, mkwrite wp %lld",
	       variant->fs, fm.min + fm.maj, (long long)dm.mkwrite_wp,
	       fs.min + fs.maj, (long long)ds.mkwrite_wp);
	EXPECT_EQ(0, dm.mkwrite_first + ds.mkwrite_first);
	EXPECT_EQ(wp, dm.mkwrite_wp);
	EXPECT_EQ(wp, ds.mkwrite_wp);
	EXPECT_EQ(wp, fm.min + fm.maj);
	EXPECT_EQ(wp, fs.min + fs.maj);

	munlock(mm, NPAGES * PAGE);
	munmap(ms, NPAGES * PAGE);
}

/*
 * Prediction 22: file-to-file copies dirty their destination like write(2).
 *
 * copy_file_range (no ->remap_file_range: ext4, tmpfs): 6.1
 *   vfs_copy_file_range -> generic_copy_file_range -> do_splice_direct;
 *   6.12 vfs_copy_file_range (same sb) -> do_splice_direct.
 * sendfile: do_sendfile -> do_splice_direct.  Both read the source into an
 *   internal pipe of PIPE_DEF_BUFFERS (16) pages (splice_direct_to_actor)
 *   and write it with ->splice_write = iter_file_splice_write.
 * splice from a pipe: do_splice -> do_splice_from -> iter_file_splice_write,
 *   one bvec per pipe buffer, up to pipe->max_usage (here NPAGES).
 * iter_file_splice_write -> vfs_iter_write -> ->write_iter, the write(2)
 *   path from there on: ext4_buffered_write_iter / shmem_file_write_iter ->
 *   generic_perform_write, xfs_file_buffered_write -> iomap_write_iter,
 *   btrfs_buffered_write: write_begin with FGP_STABLE (folio_wait_stable
 *   on each cached folio), the copy, write_end (dirty), and
 *   balance_dirty_pages_ratelimited per folio iteration.
 * So on a cached, clean destination each method's counters equal those of
 * one pwrite(2) of the NPAGES pages: dirtied NPAGES (0 on tmpfs:
 * noop_dirty_folio), bdp_calls NPAGES (btrfs: one per batch, between
 * NPAGES / pages-per-write and NPAGES / 8), stable_calls NPAGES times
 * stable_per_write_*, no mkwrite.  The destination is cached with
 * page-sized writes, so even xfs on 6.12 has order-0 folios there (below
 * for a fresh destination).
 * On xfs and btrfs copy_file_range reflinks instead (->remap_file_range
 * first on the same sb): the destination's blocks are shared and its page
 * cache range dropped (generic_remap_file_range_prep writes back and
 * waits, then truncate_inode_pages_range), nothing is dirtied or balanced.
 */
static void log_copy(struct __test_metadata *_metadata, const char *fs,
		     const char *how, const struct wps *d)
{
	TH_LOG("%s %s: dirtied %lld bdp_calls %lld stable_calls %lld "
	       "mkwrite %lld", fs, how, (long long)d->dirtied,
	       (long long)d->bdp_calls, (long long)d->stable_calls,
	       (long long)(d->mkwrite_first + d->mkwrite_wp));
}

/* @d against the pwrite baseline @pw and the stated numbers. */
#define EXPECT_LIKE_WRITE(d, pw, pages_per_write) do {			\
	EXPECT_EQ(0, (d).mkwrite_first + (d).mkwrite_wp);		\
	EXPECT_TIMED_EQ(0, (d).bdp_fault_calls);				\
	EXPECT_EQ((pw).dirtied, (d).dirtied);				\
	EXPECT_EQ(variant->has_mkwrite ? NPAGES : 0, (d).dirtied);	\
	if (bdp_batched(variant)) {					\
		/* a batch may be prepared twice: see bdp_per_batch */	\
		EXPECT_TIMED_RANGE(NPAGES * stable_per_write,		\
				   2 * NPAGES * stable_per_write,	\
				   (d).stable_calls);			\
		EXPECT_TIMED_RANGE(NPAGES / (pages_per_write), NPAGES / 4, \
				   (d).bdp_calls);			\
	} else {							\
		EXPECT_EQ((pw).stable_calls, (d).stable_calls);	\
		EXPECT_TIMED_EQ(NPAGES * stable_per_write, (d).stable_calls);	\
		EXPECT_EQ((pw).bdp_calls, (d).bdp_calls);		\
		EXPECT_TIMED_EQ(NPAGES, (d).bdp_calls);			\
	}								\
} while (0)

#define EXPECT_NOTHING_DIRTIED(d) do {					\
	EXPECT_EQ(0, (d).dirtied);					\
	EXPECT_TIMED_EQ(0, (d).bdp_calls);					\
	EXPECT_TIMED_EQ(0, (d).stable_calls);				\
	EXPECT_EQ(0, (d).mkwrite_first + (d).mkwrite_wp);		\
} while (0)

/*
 * The files of a copy: a source of NPAGES written pages, on disk, and the
 * fixture's file as the destination, every page cached (order 0, written
 * a page at a time) and clean.  Returns the source's fd, or -1.
 */
static int copy_files(FIXTURE_DATA(pred) *self, const char *fs, char *src,
		      size_t len)
{
	int sfd = wps_scratch(fs, "pred-src", NPAGES, src, len);

	if (sfd < 0)
		return -1;
	if (pwrite_pages(sfd, 0, NPAGES, 5) || fsync(sfd) ||
	    pwrite_pages(self->fd, 0, NPAGES, 7) || fsync(self->fd)) {
		close(sfd);
		unlink(src);
		return -1;
	}
	return sfd;
}

TEST_F(pred, copies_dirty_like_write)
{
	int stable_per_write = wps_kernel_at_least(6, 12) ?
		variant->stable_per_write_612 : variant->stable_per_write_61;
	char src[256], fresh[256], *buf;
	struct wps pw, d, fbase;
	int sfd, ffd, pfd[2];
	loff_t in, out;
	ssize_t n;
	size_t left;

	buf = malloc(NPAGES * PAGE);
	ASSERT_NE(NULL, buf);
	memset(buf, 9, NPAGES * PAGE);
	sfd = copy_files(self, variant->fs, src, sizeof(src));
	ASSERT_LE(0, sfd);
	SINCE();

	/* Baseline: one pwrite(2) of the NPAGES pages. */
	ASSERT_EQ(NPAGES * PAGE, pwrite(self->fd, buf, NPAGES * PAGE, 0));
	pw = SINCE();
	log_copy(_metadata, variant->fs, "pwrite", &pw);
	EXPECT_LIKE_WRITE(pw, pw, NPAGES);
	ASSERT_EQ(0, fsync(self->fd));
	SINCE();

	/* splice(2) from a pipe holding the NPAGES pages. */
	ASSERT_EQ(0, pipe2(pfd, O_CLOEXEC));
	ASSERT_LE((int)(NPAGES * PAGE), fcntl(pfd[1], F_SETPIPE_SZ,
					      (int)(NPAGES * PAGE)));
	ASSERT_EQ(NPAGES * PAGE, write(pfd[1], buf, NPAGES * PAGE));
	for (out = 0, left = NPAGES * PAGE; left; left -= n) {
		n = splice(pfd[0], NULL, self->fd, &out, left, 0);
		ASSERT_LT(0, n);
	}
	close(pfd[0]);
	close(pfd[1]);
	d = SINCE();
	log_copy(_metadata, variant->fs, "splice", &d);
	EXPECT_LIKE_WRITE(d, pw, NPAGES);
	ASSERT_EQ(0, fsync(self->fd));
	SINCE();

	/* sendfile(2) to the file (at its offset, 0). */
	ASSERT_EQ(0, lseek(self->fd, 0, SEEK_SET));
	for (in = 0, left = NPAGES * PAGE; left; left -= n) {
		n = sendfile(self->fd, sfd, &in, left);
		ASSERT_LT(0, n);
	}
	d = SINCE();
	log_copy(_metadata, variant->fs, "sendfile", &d);
	EXPECT_LIKE_WRITE(d, pw, 16);
	ASSERT_EQ(0, fsync(self->fd));
	SINCE();

	/*
	 * A fresh destination (nothing cached): on xfs 6.12
	 * iomap_write_iter asks iomap_get_folio() for a folio of the
	 * write's length (fgf_set_order(len), len up to the 64 KiB that
	 * iter_file_splice_write passes from the 16-page pipe), so it
	 * dirties large folios: dirtied counts folios (writeback_dirty_folio
	 * fires once per folio), one balance_dirty_pages_ratelimited per
	 * folio, so bdp_calls = dirtied, between NPAGES / 16 and NPAGES.
	 * xfs on 6.1 (iomap_write_begin: __filemap_get_folio without an
	 * order), ext4 and btrfs make order-0 folios: NPAGES.  No folio was
	 * there to wait on: stable_calls 0 but ext4 6.1's (stable_new_61).
	 */
	ffd = wps_scratch(variant->fs, "pred-fresh", NPAGES, fresh,
			  sizeof(fresh));
	ASSERT_LE(0, ffd);
	ASSERT_EQ(0, wps_read(fresh, &fbase));
	for (in = 0, left = NPAGES * PAGE; left; left -= n) {
		n = sendfile(ffd, sfd, &in, left);
		ASSERT_LT(0, n);
	}
	d = WPS_SINCE(fresh, &fbase);
	log_copy(_metadata, variant->fs, "sendfile to an uncached file", &d);
	EXPECT_EQ(0, d.mkwrite_first + d.mkwrite_wp);
	EXPECT_TIMED_EQ(wps_kernel_at_least(6, 12) ? 0 : page_era() ?
			NPAGES * variant->stable_new_510 :
			NPAGES * variant->stable_new_61, d.stable_calls);
	if (!variant->has_mkwrite) {
		EXPECT_EQ(0, d.dirtied);
		EXPECT_TIMED_EQ(NPAGES, d.bdp_calls);
	} else {
		/* The folios the writes made, counted: one dirtying each. */
		long folios = wps_file_folios(ffd, NPAGES);

		TH_LOG("%s: the fresh copy is %ld folios", variant->fs, folios);
		ASSERT_LT(0, folios);
		if (!variant->large_folios && !wps_kernel_at_least(6, 16))
			EXPECT_EQ(NPAGES, folios);
		EXPECT_EQ(folios, d.dirtied);
		if (bdp_batched(variant)) {
			EXPECT_TIMED_RANGE(NPAGES / 16, NPAGES / 8, d.bdp_calls);
		} else {
			/* one balance_dirty_pages_ratelimited per folio */
			EXPECT_TIMED_EQ(folios, d.bdp_calls);
		}
	}
	close(ffd);
	unlink(fresh);

	/* copy_file_range(2): a copy, or on xfs and btrfs a reflink. */
	for (in = out = 0, left = NPAGES * PAGE; left; left -= n) {
		n = copy_file_range(sfd, &in, self->fd, &out, left, 0);
		ASSERT_LT(0, n);
	}
	d = SINCE();
	log_copy(_metadata, variant->fs, variant->reflink ?
		 "copy_file_range (reflink)" : "copy_file_range", &d);
	if (variant->reflink) {
		EXPECT_NOTHING_DIRTIED(d);
	} else {
		EXPECT_LIKE_WRITE(d, pw, 16);
	}
	close(sfd);
	unlink(src);
	free(buf);
}

/*
 * Prediction 22, reflink: ioctl(FICLONE) -> ioctl_file_clone ->
 * vfs_clone_file_range -> ->remap_file_range shares the source's extents
 * and drops the destination's cached pages (no copy through the page
 * cache): nothing dirtied, balanced or waited on in the destination.
 * ext4 and tmpfs have no ->remap_file_range: do_clone_file_range()
 * returns -EOPNOTSUPP.
 */
TEST_F(pred, ficlone_dirties_nothing)
{
	char src[256];
	struct wps d;
	int sfd, ret, err;

	sfd = copy_files(self, variant->fs, src, sizeof(src));
	ASSERT_LE(0, sfd);
	SINCE();
	ret = ioctl(self->fd, FICLONE, sfd);
	err = ret ? errno : 0;	/* before the counter reads */
	d = SINCE();
	log_copy(_metadata, variant->fs, ret ? "FICLONE (refused)" : "FICLONE",
		 &d);
	if (variant->reflink) {
		EXPECT_EQ(0, ret) TH_LOG("FICLONE: %s", strerror(err));
	} else {
		EXPECT_EQ(-1, ret);
		EXPECT_EQ(EOPNOTSUPP, err) TH_LOG("FICLONE: %s", strerror(err));
	}
	EXPECT_NOTHING_DIRTIED(d);
	EXPECT_EQ(0, d.mkclean_calls);
	close(sfd);
	unlink(src);
}

TEST_HARNESS_MAIN
