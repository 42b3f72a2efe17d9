// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_nfs: what wpstat counts for a MAP_SHARED writer on NFS, and what
 * it cannot see there (docs/fs/nfs.md).
 *
 * The file lives on an NFSv4.2 mount over loopback inside the guest
 * ($WPSTAT_FS_DIR/nfs, guest_nfs_loopback in scripts/vm/guest-lib.sh: nfsd
 * exporting a directory of the ext4 RAM disk).  The counters read are the
 * NFS client inode's (dev = the NFS superblock's anonymous s_dev); the
 * server's writes land on the exported ext4 file, another row.
 *
 * NFS on Debian's 6.1 and 6.12 (fs/nfs/file.c, fs/nfs/write.c):
 *   store, no PTE:   do_shared_fault -> do_page_mkwrite (mkwrite_first) ->
 *       nfs_vm_page_mkwrite: wait_on_bit_action(NFS_INO_INVALIDATING),
 *       lock, folio_wait_writeback (its tracepoint: wb_waits; never
 *       folio_wait_stable although NFS sets SB_I_STABLE_WRITES:
 *       stable_calls 0), nfs_flush_incompatible (nfs_wb_folio: a
 *       synchronous WRITE + COMMIT when another open context or lock
 *       owner has a request on the page), nfs_update_folio (6.1
 *       nfs_updatepage) -> nfs_mark_request_dirty -> filemap_dirty_folio
 *       (dirtied, one per folio) -> finish_fault -> fault_dirty_shared_page
 *       -> balance_dirty_pages_ratelimited (bdp_fault_calls).
 *   folios:          6.1: order 0.  6.12: nfs_fhget sets
 *       mapping_set_large_folios, so readahead on a fault makes large
 *       folios: one dirtying and one mkclean cover several pages, faults
 *       stay per PTE.  MADV_RANDOM (variant madv_random) turns the
 *       fault's readahead off (do_sync_mmap_readahead): order-0 folios on
 *       every kernel the suite runs on (5.10 to 7.2), exact counts.
 *   writeback:       nfs_writepages -> write_cache_pages (6.12
 *       writeback_iter) -> folio_clear_dirty_for_io -> folio_mkclean ->
 *       nfs_do_writepage -> nfs_page_async_flush: folio_start_writeback
 *       until the WRITE reply (nfs_end_page_writeback).  WB_SYNC_NONE
 *       writes UNSTABLE (wb_priority), WB_SYNC_ALL FLUSH_COND_STABLE; an
 *       UNSTABLE page is clean and off writeback but waits on the inode's
 *       commit list for a COMMIT.
 *   fsync, msync:    nfs_file_fsync -> file_write_and_wait_range (the
 *       above, then folio_wait_writeback: wb_waits) ->
 *       nfs_file_fsync_commit -> nfs_commit_inode(FLUSH_SYNC): a COMMIT
 *       RPC waited for in nfs_commit_inode (wait_on_commit): no counter.
 *   close(2):        nfs_file_flush, for a descriptor opened for writing
 *       only: nfs_wb_all -> filemap_write_and_wait (folio_mkclean,
 *       mkclean_other) + nfs_commit_inode(FLUSH_SYNC).
 */
#include "wpstat_test.h"	/* first: it defines _GNU_SOURCE */

#include <sys/statfs.h>
#include "wpstat_harness.h"

#define NPAGES		64
#define NFS_MAGIC	0x6969	/* NFS_SUPER_MAGIC */
/* netem delay on lo, each way: an RPC takes two of them. */
#define DELAY_MS	100
#define MS		1000000ULL

FIXTURE(nfs) {
	struct wps_fs_file f;		/* counted by key: see SINCE() */
	bool netem;
};

FIXTURE_VARIANT(nfs) {
	/* madvise(MADV_RANDOM) on the mapping: no fault readahead. */
	bool random;
};

FIXTURE_VARIANT_ADD(nfs, readahead) {
	.random = false,
};
FIXTURE_VARIANT_ADD(nfs, madv_random) {
	.random = true,
};

/*
 * Folios the N pages of one pass occupy.  6.1, or no readahead: N.
 * 6.12 with readahead: fewer (large folios), not predicted exactly:
 * page_cache_ra_order's orders depend on the readahead window.
 */
static bool order0(const FIXTURE_VARIANT(nfs) *variant)
{
	return variant->random || !wps_kernel_at_least(6, 12);
}

FIXTURE_SETUP(nfs)
{
	const char *dir = getenv("WPSTAT_FS_DIR");
	char why[512], path[300];
	struct statfs sf;

	wps_fs_file_init(&self->f);
	self->netem = false;
	ASSERT_TRUE(wps_loaded()) TH_LOG("wpstat is not loaded");
	ASSERT_NE(NULL, dir) TH_LOG("WPSTAT_FS_DIR unset: run through guest-check.sh");
	if (wps_fs_unavailable("nfs", why, sizeof(why)))
		SKIP(return, "nfs not mounted: %s", why);
	snprintf(path, sizeof(path), "%s/nfs", dir);
	ASSERT_EQ(0, statfs(path, &sf));
	ASSERT_EQ(NFS_MAGIC, sf.f_type) TH_LOG("%s is not an NFS mount", path);
}

FIXTURE_TEARDOWN(nfs)
{
	wps_fs_file_release(&self->f, false);
	if (self->netem)
		sh("tc qdisc del dev lo root 2>/dev/null");
}

/* Make the file (ftruncate: SETATTR), map it, key it by the fd. */
#define SET_UP(n)							\
	WPS_FS_FILE_OPEN(&self->f, "nfs", "nfs", (n), WPS_FS_MAP |	\
			 (variant->random ? WPS_FS_RANDOM : 0) | WPS_FS_BY_KEY, \
			 NULL)

/*
 * Counters since the previous call, by the key of the test's own fd (no
 * open/close of the file: a close of a writable NFS descriptor writes
 * back, nfs_file_flush).
 */
#define SINCE() WPS_FS_SINCE(&self->f)

/* The number of folios: exactly N when order0(), else 1..N. */
#define EXPECT_FOLIOS(n, actual) do {					\
	if (order0(variant)) {						\
		EXPECT_EQ((int64_t)(n), actual);			\
	} else {							\
		EXPECT_LE(1, actual);					\
		EXPECT_GE((int64_t)(n), actual);			\
	}								\
} while (0)

/*
 * Prediction N1: store / msync / store / store.  Faults per PTE as on
 * ext4; no folio_wait_stable from nfs_vm_page_mkwrite; msync cleans each
 * folio once and waits for the WRITE with folio_wait_writeback.
 */
TEST_F(nfs, store_msync_store_store)
{
	struct wps d;
	int64_t folios;

	SET_UP(NPAGES);
	/* Pass 1: filemap_fault reads (READ), then do_page_mkwrite, no PTE. */
	wps_store_pages(self->f.map, NPAGES, 1);
	d = SINCE();
	WPS_LOG_DELTA("pass 1", &d);
	EXPECT_EQ(NPAGES, d.mkwrite_first);
	EXPECT_EQ(0, d.mkwrite_wp);
	/* fault_dirty_shared_page: one ratelimited call per fault. */
	EXPECT_TIMED_EQ(NPAGES, d.bdp_fault_calls);
	/* nfs_mark_request_dirty -> filemap_dirty_folio: once per folio. */
	EXPECT_FOLIOS(NPAGES, d.dirtied);
	folios = d.dirtied;
	/* nfs_vm_page_mkwrite calls folio_wait_writeback, not _stable. */
	EXPECT_TIMED_EQ(0, d.stable_calls);
	EXPECT_EQ(0, d.wb_waits);	/* nothing under writeback yet */
	/*
	 * Without readahead each fault reads its page with nfs_read_folio
	 * (6.1 nfs_read_folio too), which first calls nfs_wb_folio ->
	 * folio_clear_dirty_for_io -> folio_mkclean on the new, clean,
	 * unmapped folio: one mkclean per page that write-protects nothing
	 * (mkclean_other, mkclean_ptes 0).  nfs_readahead does not.
	 */
	if (variant->random) {
		EXPECT_EQ(NPAGES, d.mkclean_calls);
		EXPECT_EQ(NPAGES, d.mkclean_other);
		EXPECT_TIMED_EQ(0, d.mkclean_ptes);
	} else {
		EXPECT_EQ(0, d.mkclean_calls);
	}

	/*
	 * msync(MS_SYNC) -> nfs_file_fsync -> file_write_and_wait_range ->
	 * nfs_writepages -> folio_clear_dirty_for_io -> folio_mkclean: one
	 * per dirty folio, N PTEs write-protected in all; then
	 * __filemap_fdatawait_range -> folio_wait_writeback for the folios
	 * whose WRITE has not been answered (0..folios: a race with the
	 * reply); then nfs_commit_inode, no counter.
	 */
	ASSERT_EQ(0, msync(self->f.map, NPAGES * PAGE, MS_SYNC));
	d = SINCE();
	WPS_LOG_DELTA("msync", &d);
	EXPECT_EQ(folios, d.mkclean_calls);
	EXPECT_EQ(folios, d.mkclean_msync);
	EXPECT_TIMED_EQ(NPAGES, d.mkclean_ptes);
	EXPECT_GE(folios, d.wb_waits);
	EXPECT_TIMED_EQ(0, d.stable_calls);
	EXPECT_EQ(0, d.dirtied);
	EXPECT_EQ(0, d.mkwrite_first + d.mkwrite_wp);

	/* Pass 2: present read-only PTEs: do_wp_page -> do_page_mkwrite. */
	wps_store_pages(self->f.map, NPAGES, 2);
	d = SINCE();
	WPS_LOG_DELTA("pass 2", &d);
	EXPECT_EQ(0, d.mkwrite_first);
	EXPECT_EQ(NPAGES, d.mkwrite_wp);
	EXPECT_TIMED_EQ(NPAGES, d.bdp_fault_calls);
	EXPECT_EQ(folios, d.dirtied);
	EXPECT_TIMED_EQ(0, d.stable_calls);
	EXPECT_EQ(0, d.wb_waits);	/* msync waited for every WRITE */

	/* Pass 3: writable PTEs, no faults. */
	wps_store_pages(self->f.map, NPAGES, 3);
	d = SINCE();
	EXPECT_EQ(0, d.mkwrite_first + d.mkwrite_wp);
	EXPECT_TIMED_EQ(0, d.bdp_fault_calls);
	EXPECT_EQ(0, d.mkclean_calls);
	EXPECT_EQ(0, d.dirtied);

	/* msync again: the same folios, once each. */
	ASSERT_EQ(0, msync(self->f.map, NPAGES * PAGE, MS_SYNC));
	d = SINCE();
	WPS_LOG_DELTA("msync 2", &d);
	EXPECT_EQ(folios, d.mkclean_msync);
	EXPECT_EQ(folios, d.mkclean_calls);
	EXPECT_TIMED_EQ(NPAGES, d.mkclean_ptes);
}

/*
 * Prediction N2: write(2) + fsync.  nfs_write_begin gets the folio with
 * FGP_WRITEBEGIN (6.1 grab_cache_page_write_begin; 6.12
 * __filemap_get_folio with fgf_set_order(4096) = order 0), whose
 * FGP_STABLE calls folio_wait_stable only on a folio already cached: 0
 * per write to a new page, 1 to a cached one; nothing is under writeback
 * after fsync, so no wait.  nfs_write_end -> nfs_update_folio dirties it
 * (dirtied); generic_perform_write -> balance_dirty_pages_ratelimited.
 * No fault; the mapping in the fixture is not touched.
 */
TEST_F(nfs, write_fsync)
{
	struct wps d;

	SET_UP(NPAGES);
	ASSERT_EQ(0, pwrite_pages(self->f.fd, 0, NPAGES, 1));
	d = SINCE();
	WPS_LOG_DELTA("pwrite 1", &d);
	EXPECT_EQ(0, d.mkwrite_first + d.mkwrite_wp);
	EXPECT_TIMED_EQ(NPAGES, d.bdp_calls);
	EXPECT_TIMED_EQ(0, d.stable_calls);
	EXPECT_EQ(NPAGES, d.dirtied);

	/* fsync: N order-0 folios cleaned (no PTE), WRITE, COMMIT. */
	ASSERT_EQ(0, fsync(self->f.fd));
	d = SINCE();
	WPS_LOG_DELTA("fsync", &d);
	EXPECT_EQ(NPAGES, d.mkclean_fsync);
	EXPECT_EQ(NPAGES, d.mkclean_calls);
	EXPECT_TIMED_EQ(0, d.mkclean_ptes);
	EXPECT_GE(NPAGES, d.wb_waits);

	ASSERT_EQ(0, pwrite_pages(self->f.fd, 0, NPAGES, 2));
	d = SINCE();
	WPS_LOG_DELTA("pwrite 2", &d);
	EXPECT_TIMED_EQ(NPAGES, d.bdp_calls);
	/* FGP_STABLE on a cached folio: folio_wait_stable, nothing to wait. */
	EXPECT_TIMED_EQ(NPAGES, d.stable_calls);
	EXPECT_EQ(0, d.stable_waits);
	EXPECT_EQ(NPAGES, d.dirtied);

	ASSERT_EQ(0, fsync(self->f.fd));
	d = SINCE();
	WPS_LOG_DELTA("fsync 2", &d);
	EXPECT_EQ(NPAGES, d.mkclean_fsync);
	EXPECT_EQ(NPAGES, d.mkclean_calls);
}

/*
 * Prediction N3: close(2) of a descriptor opened for writing writes the
 * file back (nfs_file_flush -> nfs_wb_all: folio_mkclean of every dirty
 * folio, none of the named triggers: mkclean_other), so the writer's next
 * stores are write-protect faults; a read-only descriptor's close does
 * nothing (nfs_file_flush returns at once without FMODE_WRITE).
 */
TEST_F(nfs, close_of_a_writable_fd_writes_back)
{
	struct wps d;
	int64_t folios;
	int fd2;

	SET_UP(NPAGES);
	wps_store_pages(self->f.map, NPAGES, 1);
	d = SINCE();
	folios = d.dirtied;

	fd2 = open(self->f.path, O_RDONLY);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, close(fd2));
	d = SINCE();
	WPS_LOG_DELTA("open+close O_RDONLY", &d);
	EXPECT_EQ(0, d.mkclean_calls);

	fd2 = open(self->f.path, O_RDWR);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, close(fd2));
	d = SINCE();
	WPS_LOG_DELTA("open+close O_RDWR", &d);
	EXPECT_EQ(folios, d.mkclean_calls);
	EXPECT_EQ(folios, d.mkclean_other);
	EXPECT_TIMED_EQ(NPAGES, d.mkclean_ptes);

	wps_store_pages(self->f.map, NPAGES, 2);
	d = SINCE();
	EXPECT_EQ(NPAGES, d.mkwrite_wp);
}

/*
 * wpstat's lookup by path (wpstat_path_key: show --resolve, filter path,
 * wps_read) keys an NFS file through an O_PATH descriptor, whose close
 * never reaches nfs_file_flush: looking the file up cleans nothing.
 */
TEST_F(nfs, path_lookup_does_not_write_back)
{
	struct wpstat_file_key key;
	struct wps d, byname;

	SET_UP(NPAGES);
	wps_store_pages(self->f.map, NPAGES, 1);
	SINCE();
	ASSERT_EQ(0, wpstat_path_key(self->f.path, &key));
	EXPECT_EQ(self->f.key.major, key.major);
	EXPECT_EQ(self->f.key.minor, key.minor);
	EXPECT_EQ(self->f.key.ino, key.ino);
	ASSERT_EQ(0, wps_read(self->f.path, &byname));
	d = SINCE();
	EXPECT_EQ(0, d.mkclean_calls);
	EXPECT_EQ(self->f.base.mkwrite_first, byname.mkwrite_first);
	wps_store_pages(self->f.map, NPAGES, 2);
	d = SINCE();
	EXPECT_EQ(0, d.mkwrite_wp);
	EXPECT_EQ(0, d.mkwrite_first);
}

/* Delay every packet on lo by DELAY_MS: an RPC takes 2 * DELAY_MS. */
static int netem_on(void)
{
	return sh("modprobe sch_netem 2>/dev/null; "
		  "tc qdisc replace dev lo root netem delay %dms", DELAY_MS);
}

/*
 * Prediction N4, what is seen and what is not, with every RPC slowed to
 * 2 * DELAY_MS (netem on lo).
 *   - A store to a page whose WRITE is in flight waits in
 *     nfs_vm_page_mkwrite -> folio_wait_writeback: wb_waits sees it (and
 *     the stalls row's wb_waits, wb_ns); stable_waits does not
 *     (no folio_wait_stable).
 *   - fsync and close(2) of a writable descriptor with nothing dirty
 *     and nothing under writeback: no counter moves; whatever they wait
 *     for (a COMMIT in nfs_commit_inode(FLUSH_SYNC), if one is owed)
 *     is invisible to wpstat.  Logged, not asserted: here no COMMIT was
 *     owed (see below).
 */
TEST_F(nfs, writeback_wait_seen_commit_not)
{
	uint64_t t0, sfr_ns, store_ns, fsync_ns, close_ns, rclose_ns;
	struct stall_row row;
	struct wps d;
	int fd2;

	/*
	 * netem first: system() forks, and the child's copy of an open NFS
	 * descriptor is closed at its exec or exit: filp_close ->
	 * nfs_file_flush -> nfs_wb_all, a write-back (and COMMIT) of the
	 * test's pages by tc.  So no fork while the file is open.
	 */
	if (netem_on())
		SKIP(return, "no netem on lo (sch_netem, tc)");
	self->netem = true;
	SET_UP(4);
	/* Read (slowly) and dirty the 4 pages. */
	wps_store_pages(self->f.map, self->f.npages, 1);
	SINCE();

	/* WB_SYNC_NONE: folio_mkclean + one UNSTABLE WRITE sent, no wait. */
	t0 = wpstat_now_ns();
	ASSERT_EQ(0, sync_file_range(self->f.fd, 0, 0, SYNC_FILE_RANGE_WRITE));
	sfr_ns = wpstat_now_ns() - t0;
	t0 = wpstat_now_ns();
	*(volatile char *)self->f.map = 2;	/* write-protect fault, waits */
	store_ns = wpstat_now_ns() - t0;
	d = SINCE();
	WPS_LOG_DELTA("sfr + store", &d);
	TH_LOG("sync_file_range(WRITE) %.1f ms, store %.1f ms, mkwrite_ns %.1f ms",
	       sfr_ns / 1e6, store_ns / 1e6,
	       d.mkwrite_ns < 0 ? -1.0 : d.mkwrite_ns / 1e6);
	EXPECT_EQ(1, d.mkwrite_wp);
	EXPECT_LE(1, d.mkclean_sync_file_range);
	EXPECT_GE((int64_t)self->f.npages, d.mkclean_sync_file_range);
	/* The store waited for the WRITE reply, in folio_wait_writeback. */
	EXPECT_LE(DELAY_MS * MS, store_ns);
	EXPECT_LE(1, d.wb_waits);
	EXPECT_TIMED_EQ(0, d.stable_calls);
	EXPECT_EQ(0, d.stable_waits);
	EXPECT_TIMED_LT(DELAY_MS * (int64_t)MS, d.mkwrite_ns);

	/*
	 * Write the re-dirtied page and wait for every WRITE reply: all 4
	 * pages are now clean, off writeback, UNSTABLE on the commit list.
	 */
	ASSERT_EQ(0, sync_file_range(self->f.fd, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE |
				     SYNC_FILE_RANGE_WRITE |
				     SYNC_FILE_RANGE_WAIT_AFTER));
	d = SINCE();
	WPS_LOG_DELTA("sfr wait", &d);

	/* fsync: no folio to clean or wait for; one COMMIT round trip. */
	t0 = wpstat_now_ns();
	ASSERT_EQ(0, fsync(self->f.fd));
	fsync_ns = wpstat_now_ns() - t0;
	d = SINCE();
	WPS_LOG_DELTA("fsync (COMMIT only)", &d);
	TH_LOG("fsync with nothing dirty: %.1f ms", fsync_ns / 1e6);
	/*
	 * Not asserted: a COMMIT wait.  Measured 0.1 ms: nfs_writepages
	 * sends an asynchronous COMMIT itself when its WRITEs complete
	 * (nfs_io_completion_commit), and the WB_SYNC_ALL write above went
	 * FILE_SYNC (FLUSH_COND_STABLE, one RPC), so nothing was left to
	 * commit.  When there is, nfs_commit_inode(FLUSH_SYNC) ->
	 * wait_on_commit sleeps with no counter (docs/fs/nfs.md).
	 */
	EXPECT_EQ(0, d.mkclean_calls);
	EXPECT_EQ(0, d.wb_waits);
	EXPECT_EQ(0, d.stable_waits);
	EXPECT_EQ(0, d.bdp_pauses);

	/* Again UNSTABLE pages, then close a second, writable descriptor. */
	*(volatile char *)self->f.map = 3;
	ASSERT_EQ(0, sync_file_range(self->f.fd, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE |
				     SYNC_FILE_RANGE_WRITE |
				     SYNC_FILE_RANGE_WAIT_AFTER));
	fd2 = open(self->f.path, O_RDONLY);
	ASSERT_LE(0, fd2);
	t0 = wpstat_now_ns();
	ASSERT_EQ(0, close(fd2));
	rclose_ns = wpstat_now_ns() - t0;
	fd2 = open(self->f.path, O_RDWR);
	ASSERT_LE(0, fd2);
	SINCE();
	t0 = wpstat_now_ns();
	ASSERT_EQ(0, close(fd2));
	close_ns = wpstat_now_ns() - t0;
	d = SINCE();
	WPS_LOG_DELTA("close O_RDWR (COMMIT only)", &d);
	TH_LOG("close: O_RDONLY %.1f ms, O_RDWR %.1f ms", rclose_ns / 1e6,
	       close_ns / 1e6);
	EXPECT_GT(DELAY_MS * MS, rclose_ns);
	EXPECT_EQ(0, d.mkclean_calls);
	EXPECT_EQ(0, d.wb_waits);

	/*
	 * The process's stalls row holds the store's writeback wait, and
	 * nothing for the two COMMITs (stall_of keys by O_PATH: no flush).
	 */
	ASSERT_EQ(1, stall_of(self->f.path, getpid(), &row));
	TH_LOG("stalls row: fault_wp %lld wb_waits %lld wb_ns %.1f ms fault_ns %.1f ms",
	       (long long)row.fault_wp, (long long)row.wb_waits,
	       row.wb_ns < 0 ? -1.0 : row.wb_ns / 1e6,
	       row.fault_ns < 0 ? -1.0 : row.fault_ns / 1e6);
	EXPECT_LE(1, row.wb_waits);
	EXPECT_EQ(0, row.stable_waits);
	/* Timed at both levels: the wait's return probe (a task sleeps). */
	EXPECT_LE(DELAY_MS * (int64_t)MS, row.wb_ns);
}

TEST_HARNESS_MAIN
