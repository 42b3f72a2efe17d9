// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_predict: stores to a shared mapping and the faults they take:
 * a read of an uncached page, write-protect faults after msync, populate,
 * mlock, private mappings, msync(MS_ASYNC), write(2)'s path, and two
 * processes' faults attributed exactly.  The fixture, the conventions and
 * the call chains: wpstat_predict.h.
 */
#include "wpstat_predict.h"

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

TEST_HARNESS_MAIN
