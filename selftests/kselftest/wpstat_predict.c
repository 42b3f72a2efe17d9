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
#include "wpstat_test.h"	/* first: it defines _GNU_SOURCE (splice) */
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "kselftest_harness.h"

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
 * call finds no writable PTE and returns 0.
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
 * reflink: ->remap_file_range (xfs_file_remap_range, btrfs_remap_file_range),
 * which vfs_copy_file_range() tries first on the same superblock.
 * bdp_per_batch: btrfs_buffered_write() calls
 * balance_dirty_pages_ratelimited_flags() once per batch of nrptrs pages,
 * nrptrs = max(8, min(pages left, 512, nr_dirtied_pause - nr_dirtied)),
 * not once per folio as generic_perform_write() and iomap_write_iter() do.
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
	int stable_new_61;
	bool reflink;
	bool bdp_per_batch;
};

FIXTURE_VARIANT_ADD(pred, ext4) {
	.fs = "ext4", .has_mkwrite = true, .mkclean_per_folio = 1,
	.stable_per_write_61 = 2, .stable_per_write_612 = 1,
	.stable_new_61 = 1,
};
FIXTURE_VARIANT_ADD(pred, xfs) {
	.fs = "xfs", .has_mkwrite = true, .large_folios = true,
	.mkclean_per_folio = 1,
	.stable_per_write_61 = 1, .stable_per_write_612 = 1, .reflink = true,
};
FIXTURE_VARIANT_ADD(pred, btrfs) {
	.fs = "btrfs", .has_mkwrite = true, .mkclean_per_folio = 2,
	.stable_per_write_61 = 0, .stable_per_write_612 = 1, .reflink = true,
	.bdp_per_batch = true,
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
	EXPECT_EQ(0, (d).bdp_fault_calls);				\
	EXPECT_EQ((pw).dirtied, (d).dirtied);				\
	EXPECT_EQ(variant->has_mkwrite ? NPAGES : 0, (d).dirtied);	\
	EXPECT_EQ((pw).stable_calls, (d).stable_calls);		\
	EXPECT_EQ(NPAGES * stable_per_write, (d).stable_calls);	\
	if (variant->bdp_per_batch) {					\
		EXPECT_LE(NPAGES / (pages_per_write), (d).bdp_calls);	\
		EXPECT_GE(NPAGES / 8, (d).bdp_calls);			\
	} else {							\
		EXPECT_EQ((pw).bdp_calls, (d).bdp_calls);		\
		EXPECT_EQ(NPAGES, (d).bdp_calls);			\
	}								\
} while (0)

#define EXPECT_NOTHING_DIRTIED(d) do {					\
	EXPECT_EQ(0, (d).dirtied);					\
	EXPECT_EQ(0, (d).bdp_calls);					\
	EXPECT_EQ(0, (d).stable_calls);				\
	EXPECT_EQ(0, (d).mkwrite_first + (d).mkwrite_wp);		\
} while (0)

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
	sfd = wps_scratch(variant->fs, "pred-src", NPAGES, src, sizeof(src));
	ASSERT_LE(0, sfd);
	ASSERT_EQ(0, pwrite_pages(sfd, 0, NPAGES, 5));
	ASSERT_EQ(0, fsync(sfd));
	/* The destination: every page cached (order 0) and clean. */
	ASSERT_EQ(0, pwrite_pages(self->fd, 0, NPAGES, 7));
	ASSERT_EQ(0, fsync(self->fd));
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
	EXPECT_EQ(wps_kernel_at_least(6, 12) ? 0 :
		  NPAGES * variant->stable_new_61, d.stable_calls);
	if (!variant->has_mkwrite) {
		EXPECT_EQ(0, d.dirtied);
		EXPECT_EQ(NPAGES, d.bdp_calls);
	} else if (variant->large_folios && wps_kernel_at_least(6, 12)) {
		EXPECT_LE(NPAGES / 16, d.dirtied);
		EXPECT_GE(NPAGES, d.dirtied);
		EXPECT_EQ(d.dirtied, d.bdp_calls);
	} else {
		EXPECT_EQ(NPAGES, d.dirtied);
		if (variant->bdp_per_batch) {
			EXPECT_LE(NPAGES / 16, d.bdp_calls);
			EXPECT_GE(NPAGES / 8, d.bdp_calls);
		} else {
			EXPECT_EQ(NPAGES, d.bdp_calls);
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

	sfd = wps_scratch(variant->fs, "pred-src", NPAGES, src, sizeof(src));
	ASSERT_LE(0, sfd);
	ASSERT_EQ(0, pwrite_pages(sfd, 0, NPAGES, 5));
	ASSERT_EQ(0, fsync(sfd));
	ASSERT_EQ(0, pwrite_pages(self->fd, 0, NPAGES, 7));
	ASSERT_EQ(0, fsync(self->fd));
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
