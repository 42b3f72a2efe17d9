// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_predict_read: read faults of a shared mapping (fault-around,
 * a cold mapping's read-around) and two warm-ups before the first
 * writeback (mlock against a store per page).  The fixture, the
 * conventions and the call chains: wpstat_predict.h.
 */
#include "wpstat_predict.h"

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

TEST_HARNESS_MAIN
