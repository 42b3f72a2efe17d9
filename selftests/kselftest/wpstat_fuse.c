// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_fuse: what wpstat counts for a MAP_SHARED writer on FUSE, and
 * what it cannot see there (docs/fs/fuse.md).
 *
 * The file lives on a FUSE mount of build/bin/fuse-passthrough (from
 * selftests/fs/fuse-passthrough.c), which mirrors a directory on the ext4
 * RAM disk; the counters read are the FUSE inode's (dev = the FUSE
 * superblock's anonymous s_dev), not the backing ext4 file's.  Variants:
 * the server asks for FUSE_CAP_WRITEBACK_CACHE or not.  mmap stores go
 * through the page cache either way; the variants differ in write(2)
 * (fuse_cache_write_iter: generic_perform_write with it, the write-through
 * fuse_perform_write without it) and in who owns mtime.
 *
 * FUSE on Debian's 6.1 and 6.12 (fs/fuse/file.c, the same shape on both;
 * 6.12 has the folio names):
 *   store, no PTE:   do_shared_fault -> do_page_mkwrite (mkwrite_first)
 *       -> fuse_page_mkwrite: lock_page, fuse_wait_on_page_writeback
 *       (wait_event on fi->page_waitq until fuse_page_is_writeback() is
 *       false: FUSE's own list of WRITE requests, fi->writepages); never
 *       folio_wait_stable -> finish_fault -> fault_dirty_shared_page ->
 *       folio_mark_dirty (filemap_dirty_folio: dirtied) and
 *       balance_dirty_pages_ratelimited (bdp_fault_calls)
 *   writeback:       fuse_writepages -> write_cache_pages (6.12: via
 *       writeback_iter/folio_prepare_writeback) -> folio_clear_dirty_for_io
 *       -> folio_mkclean (one per order-0 folio: FUSE sets no large folios
 *       on either kernel) -> fuse_writepages_fill: folio_start_writeback,
 *       copy into a temporary page (NR_WRITEBACK_TEMP), and
 *       fuse_writepages_send: queue the WRITE, then end_page_writeback at
 *       once.  PG_writeback lasts only while the request is queued, never
 *       while the server works: nobody ever waits on it
 *       (writeback:folio_wait_writeback, wb_waits, stays 0); the wait for
 *       the server is on fi->page_waitq, in fuse_page_mkwrite (a store),
 *       fuse_sync_writes (fsync, msync), fuse_launder_folio.
 *   store on a write-protected PTE: do_wp_page -> wp_page_shared ->
 *       do_page_mkwrite (mkwrite_wp) -> fuse_page_mkwrite as above.
 *   munmap:          fuse_vma_close -> write_inode_now(inode, 1): the
 *       mapping's dirty pages are written back when it is unmapped.
 */
#include "wpstat_test.h"	/* first: it defines _GNU_SOURCE */

#include <sys/mount.h>
#include <sys/statfs.h>
#include "wpstat_harness.h"

#define NPAGES		64
#define FUSE_MAGIC	0x65735546	/* FUSE_SUPER_MAGIC */
/* The server's sleep per WRITE in the in-flight test. */
#define DELAY_MS	300

FIXTURE(fuse) {
	char mnt[256];
	char backing[256];
	struct wps_fs_file f;		/* counted by key: see SINCE() */
	bool mounted;
};

FIXTURE_VARIANT(fuse) {
	bool writeback_cache;
};

FIXTURE_VARIANT_ADD(fuse, writeback_cache_off) {
	.writeback_cache = false,
};
FIXTURE_VARIANT_ADD(fuse, writeback_cache_on) {
	.writeback_cache = true,
};

static const char *server_path(void)
{
	static char path[512];
	const char *top = getenv("WPSTAT_TOP");

	snprintf(path, sizeof(path), "%s/build/bin/fuse-passthrough",
		 top ? top : ".");
	return path;
}

/*
 * Why FUSE cannot be tested here, or NULL: /dev/fuse (fuse.ko on 6.1,
 * built in on 6.12), the server binary, the ext4 scratch to back it.
 */
static const char *fuse_missing(void)
{
	const char *dir = getenv("WPSTAT_FS_DIR");
	char ext4[256];
	struct statfs sf;

	if (access("/dev/fuse", R_OK | W_OK)) {
		sh("modprobe fuse >/dev/null 2>&1");
		if (access("/dev/fuse", R_OK | W_OK))
			return "no /dev/fuse (modprobe fuse failed: CONFIG_FUSE_FS?)";
	}
	if (access(server_path(), X_OK))
		return "no build/bin/fuse-passthrough (libfuse3-dev missing at build time?)";
	snprintf(ext4, sizeof(ext4), "%s/ext4", dir ? dir : "/tmp/wpstat");
	if (statfs(ext4, &sf) || sf.f_type != 0xEF53)
		return "no ext4 scratch filesystem to back the FUSE mount";
	return NULL;
}

/*
 * Mount the server on $WPSTAT_FS_DIR/fuse: 0 or -1.
 *
 * @reserve: give the new bdi a 1% share of the dirty threshold
 * (/sys/class/bdi/MAJ:MIN/min_ratio, its max_ratio being 1: fuse_bdi_init).
 * FUSE's bdi has BDI_CAP_STRICTLIMIT, so balance_dirty_pages() compares
 * the wb's own dirty pages with the wb's own threshold, and a fresh mount's
 * threshold is about 0 (__wb_calc_thresh: its share of completed writeout,
 * none yet, plus min_ratio, 0): every entry is outside the free-run zone
 * and calls wb_start_background_writeback(), so the flusher cleans pages
 * right behind the writer (the fresh_mount test shows it).  With 1%
 * (~3 MiB here) 64 dirty pages stay in free run and only the test cleans.
 */
static int fuse_up(FIXTURE_DATA(fuse) *self, bool writeback_cache,
		   int delay_ms, bool reserve)
{
	const char *dir = getenv("WPSTAT_FS_DIR");
	struct statfs sf;
	struct stat st;

	if (!dir)
		dir = "/tmp/wpstat";
	snprintf(self->mnt, sizeof(self->mnt), "%s/fuse", dir);
	snprintf(self->backing, sizeof(self->backing), "%s/ext4/fuse-backing",
		 dir);
	mkdir(self->mnt, 0755);
	mkdir(self->backing, 0755);
	umount2(self->mnt, MNT_DETACH);	/* a leftover of a killed run */
	/* fuse_main daemonises after the mount: it is there on return. */
	if (sh("%s %s--write-delay-ms %d %s %s", server_path(),
	       writeback_cache ? "--writeback-cache " : "", delay_ms,
	       self->backing, self->mnt))
		return -1;
	if (statfs(self->mnt, &sf) || sf.f_type != FUSE_MAGIC)
		return -1;
	self->mounted = true;
	if (reserve) {
		if (stat(self->mnt, &st))
			return -1;
		if (sh("echo 1 >/sys/class/bdi/%u:%u/min_ratio",
		       major(st.st_dev), minor(st.st_dev)))
			return -1;
	}
	return 0;
}

FIXTURE_SETUP(fuse)
{
	const char *why;

	wps_fs_file_init(&self->f);
	self->mounted = false;
	ASSERT_TRUE(wps_loaded()) TH_LOG("wpstat is not loaded");
	why = fuse_missing();
	if (why)
		SKIP(return, "%s", why);
}

FIXTURE_TEARDOWN(fuse)
{
	/*
	 * The file stays (each test's has its own name): every test mounts
	 * FUSE afresh, on the same anonymous dev, and a new file given the
	 * deleted one's inode number would repeat its (dev, ino, gen) on a
	 * new mount, a new row the module keeps apart (the key holds the
	 * mount) while the old one is still listed: setup's reading would
	 * take the old file's counts.
	 */
	wps_fs_file_release(&self->f, true);
	if (self->mounted) {
		/* The daemon exits when its mount goes. */
		if (umount(self->mnt))
			umount2(self->mnt, MNT_DETACH);
	}
}

/* Mount, make the file (through FUSE) and map it. */
#define SET_UP(delay_ms, n, reserve) do {				\
	ASSERT_EQ(0, fuse_up(self, variant->writeback_cache, delay_ms,	\
			     reserve))					\
		TH_LOG("cannot mount %s", server_path());		\
	WPS_FS_FILE_OPEN(&self->f, "fuse", "fuse", (n),			\
			 WPS_FS_MAP | WPS_FS_BY_KEY, NULL);		\
} while (0)

/*
 * Counters since the previous call, by the key of the test's own fd: never
 * wps_read(path), which opens and closes the file to learn its key, and a
 * close on FUSE is fuse_flush -> write_inode_now(inode, 1): it would write
 * back (and write-protect) what the test is counting (see close_flushes).
 */
#define SINCE() WPS_FS_SINCE(&self->f)

/* The row is the FUSE inode's: its dev is the FUSE superblock's. */
static void check_dev(struct __test_metadata *_metadata, int fd,
		      const char *mnt)
{
	struct stat st, backing;

	ASSERT_EQ(0, fstat(fd, &st));
	ASSERT_EQ(0, stat(mnt, &backing));
	EXPECT_EQ(st.st_dev, backing.st_dev);
}

/*
 * Prediction F1: the same per-page faults as ext4; msync write-protects
 * through folio_mkclean; FUSE never calls folio_wait_stable and nobody
 * waits on PG_writeback; munmap writes back (fuse_vma_close).
 */
TEST_F(fuse, store_msync_store_store)
{
	uint64_t t0, msync_ns;
	struct wps d;

	SET_UP(0, NPAGES, true);
	check_dev(_metadata, self->f.fd, self->mnt);

	/*
	 * Pass 1: no PTE (filemap_fault reads the page: FUSE_READ; no
	 * fault-around on a write fault) -> do_page_mkwrite, vmf->pte NULL.
	 */
	wps_store_pages(self->f.map, NPAGES, 1);
	d = SINCE();
	WPS_LOG_DELTA("pass 1", &d);
	EXPECT_EQ(NPAGES, d.mkwrite_first);
	EXPECT_EQ(0, d.mkwrite_wp);
	/* fault_dirty_shared_page: one ratelimited call per fault. */
	EXPECT_TIMED_EQ(NPAGES, d.bdp_fault_calls);
	/* filemap_dirty_folio, order-0 folios: one clean->dirty each. */
	EXPECT_EQ(NPAGES, d.dirtied);
	/* fuse_page_mkwrite waits on fi->page_waitq, not folio_wait_stable. */
	EXPECT_TIMED_EQ(0, d.stable_calls);
	EXPECT_EQ(0, d.mkclean_calls);

	/*
	 * msync(MS_SYNC) -> vfs_fsync_range -> fuse_fsync ->
	 * file_write_and_wait_range -> fuse_writepages -> write_cache_pages
	 * -> folio_clear_dirty_for_io -> folio_mkclean: one per page, each
	 * write-protecting the one PTE.  fuse_writepages_send ends
	 * PG_writeback before filemap_fdatawait looks, so no
	 * folio_wait_writeback; fuse_sync_writes waits for the replies.
	 */
	t0 = wpstat_now_ns();
	ASSERT_EQ(0, msync(self->f.map, NPAGES * PAGE, MS_SYNC));
	msync_ns = wpstat_now_ns() - t0;
	d = SINCE();
	WPS_LOG_DELTA("msync", &d);
	EXPECT_EQ(NPAGES, d.mkclean_calls);
	EXPECT_EQ(NPAGES, d.mkclean_msync);
	EXPECT_TIMED_EQ(NPAGES, d.mkclean_ptes);
	EXPECT_EQ(0, d.wb_waits);
	EXPECT_TIMED_EQ(0, d.stable_calls);
	EXPECT_EQ(0, d.mkwrite_first + d.mkwrite_wp);
	TH_LOG("writeback_cache=%d: msync of %d pages %.1f ms",
	       variant->writeback_cache, NPAGES, msync_ns / 1e6);

	/* Pass 2: present read-only PTEs: do_wp_page -> do_page_mkwrite. */
	wps_store_pages(self->f.map, NPAGES, 2);
	d = SINCE();
	WPS_LOG_DELTA("pass 2", &d);
	EXPECT_EQ(0, d.mkwrite_first);
	EXPECT_EQ(NPAGES, d.mkwrite_wp);
	EXPECT_TIMED_EQ(NPAGES, d.bdp_fault_calls);
	EXPECT_EQ(NPAGES, d.dirtied);
	EXPECT_TIMED_EQ(0, d.stable_calls);
	EXPECT_EQ(0, d.wb_waits);
	/*
	 * balance_dirty_pages: FUSE's bdi has BDI_CAP_STRICTLIMIT and a 1%
	 * max_ratio (fuse_bdi_init), so it may be entered (every
	 * nr_dirtied_pause pages, 32 at first) and may pause; not predicted
	 * exactly, bounded by the dirtyings.
	 */
	EXPECT_GE(NPAGES, d.bdp_throttled);
	TH_LOG("writeback_cache=%d: pass 2 bdp_throttled %lld bdp_pauses %lld",
	       variant->writeback_cache, (long long)d.bdp_throttled,
	       (long long)d.bdp_pauses);

	/* Pass 3, no writeback in between: writable PTEs, no faults. */
	wps_store_pages(self->f.map, NPAGES, 3);
	d = SINCE();
	WPS_LOG_DELTA("pass 3", &d);
	EXPECT_EQ(0, d.mkwrite_first + d.mkwrite_wp);
	EXPECT_TIMED_EQ(0, d.bdp_fault_calls);
	EXPECT_EQ(0, d.mkclean_calls);
	EXPECT_EQ(0, d.dirtied);

	/*
	 * munmap -> remove_vma -> fuse_vma_close -> write_inode_now(inode, 1)
	 * -> fuse_writepages: the N pages dirty since pass 2 are cleaned,
	 * by munmap(2), which is none of the named triggers: mkclean_other.
	 * (The PTEs are gone by then: zap_page_range runs first; so
	 * mkclean_ptes is 0.)
	 */
	ASSERT_EQ(0, munmap(self->f.map, NPAGES * PAGE));
	self->f.map = NULL;
	d = SINCE();
	WPS_LOG_DELTA("munmap", &d);
	EXPECT_EQ(NPAGES, d.mkclean_calls);
	EXPECT_EQ(NPAGES, d.mkclean_other);
	EXPECT_TIMED_EQ(0, d.mkclean_ptes);
	EXPECT_EQ(0, d.wb_waits);
}

/*
 * Prediction F2, the blind spot: a store to a page whose WRITE the server
 * has not answered yet blocks in fuse_page_mkwrite ->
 * fuse_wait_on_page_writeback (wait_event on fi->page_waitq) for as long
 * as the server takes.  No folio_wait_stable call (stable_calls 0), no
 * PG_writeback wait (wb_waits 0, in the inode row and in the process's
 * stalls row): only mkwrite_ns (level timing) holds the time.  An fsync
 * behind a slow WRITE likewise waits in fuse_sync_writes, not in
 * folio_wait_writeback.
 */
TEST_F(fuse, store_while_fuse_writeback_in_flight)
{
	uint64_t t0, store_ns, fsync_ns;
	struct stall_row row;
	struct wps d;

	SET_UP(DELAY_MS, 4, true);
	/* Dirty every page (4 first-write faults), then clean and send them. */
	wps_store_pages(self->f.map, self->f.npages, 1);
	d = SINCE();
	WPS_LOG_DELTA("4 stores", &d);
	/*
	 * sync_file_range(WRITE) is WB_SYNC_NONE: fuse_writepages
	 * write-protects (folio_mkclean) and queues one WRITE for the four
	 * pages, ends PG_writeback, returns; the server sleeps DELAY_MS.
	 */
	ASSERT_EQ(0, sync_file_range(self->f.fd, 0, 0, SYNC_FILE_RANGE_WRITE));
	t0 = wpstat_now_ns();
	*(volatile char *)self->f.map = 2;	/* write-protect fault, waits */
	store_ns = wpstat_now_ns() - t0;
	d = SINCE();

	TH_LOG("writeback_cache=%d: store %.1f ms, mkwrite_wp %lld mkwrite_ns %.1f ms "
	       "stable_calls %lld stable_waits %lld wb_waits %lld",
	       variant->writeback_cache, store_ns / 1e6,
	       (long long)d.mkwrite_wp,
	       d.mkwrite_ns < 0 ? -1.0 : d.mkwrite_ns / 1e6,
	       (long long)d.stable_calls, (long long)d.stable_waits,
	       (long long)d.wb_waits);
	EXPECT_EQ(self->f.npages, d.mkclean_calls);
	EXPECT_EQ(self->f.npages, d.mkclean_sync_file_range);
	EXPECT_EQ(1, d.mkwrite_wp);
	EXPECT_EQ(0, d.mkwrite_first);
	/* The store waited for (most of) the server's sleep... */
	EXPECT_LE(DELAY_MS / 2 * 1000000ULL, store_ns);
	/* ... and no stable-page or writeback counter saw it. */
	EXPECT_TIMED_EQ(0, d.stable_calls);
	EXPECT_EQ(0, d.stable_waits);
	EXPECT_EQ(0, d.wb_waits);
	/* do_page_mkwrite's return probe holds the time (timing only). */
	EXPECT_TIMED_LT(DELAY_MS / 2 * 1000000LL, d.mkwrite_ns);
	EXPECT_TIMED_LT(DELAY_MS / 2 * 1000000LL, d.mkwrite_max_ns);

	/*
	 * fsync: fuse_fsync -> file_write_and_wait_range sends the re-dirtied
	 * page (one mkclean, by fsync), then fuse_sync_writes waits DELAY_MS
	 * for the reply on fi->page_waitq: no folio_wait_writeback.
	 */
	t0 = wpstat_now_ns();
	ASSERT_EQ(0, fsync(self->f.fd));
	fsync_ns = wpstat_now_ns() - t0;
	d = SINCE();
	TH_LOG("writeback_cache=%d: fsync %.1f ms, mkclean_fsync %lld wb_waits %lld",
	       variant->writeback_cache, fsync_ns / 1e6,
	       (long long)d.mkclean_fsync, (long long)d.wb_waits);
	EXPECT_EQ(1, d.mkclean_fsync);
	EXPECT_LE(DELAY_MS / 2 * 1000000ULL, fsync_ns);
	EXPECT_EQ(0, d.wb_waits);
	EXPECT_EQ(0, d.stable_waits);

	/*
	 * The process's stalls row: a write-protect fault, no wait named
	 * (read last: stall_of opens and closes the file, a flush).
	 */
	ASSERT_EQ(1, stall_of(self->f.path, getpid(), &row));
	EXPECT_EQ(1, row.fault_wp);
	EXPECT_EQ(0, row.stable_waits);
	EXPECT_EQ(0, row.wb_waits);
	EXPECT_TIMED_LT(DELAY_MS / 2 * 1000000LL, row.fault_ns);
}

/*
 * Prediction F4: on FUSE every close(2) of any descriptor of the file
 * writes its dirty pages back: fuse_flush -> write_inode_now(inode, 1)
 * (WB_SYNC_ALL: fuse_writepages -> folio_mkclean), then fuse_sync_writes;
 * unless the server opened it FOPEN_NOFLUSH without writeback_cache, which
 * this one does not.  So a reader that opens and closes the file (a
 * backup, an indexer; not wpstat, see below) write-protects the
 * writer's pages: its next stores are write-protect faults.
 */
TEST_F(fuse, close_of_another_fd_writes_back)
{
	struct wps d;
	int fd2;

	SET_UP(0, NPAGES, true);
	wps_store_pages(self->f.map, NPAGES, 1);
	SINCE();
	fd2 = open(self->f.path, O_RDONLY);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, close(fd2));
	d = SINCE();
	WPS_LOG_DELTA("open+close", &d);
	EXPECT_EQ(NPAGES, d.mkclean_calls);
	EXPECT_EQ(NPAGES, d.mkclean_other);	/* close(2): no named trigger */
	EXPECT_TIMED_EQ(NPAGES, d.mkclean_ptes);
	wps_store_pages(self->f.map, NPAGES, 2);
	d = SINCE();
	EXPECT_EQ(NPAGES, d.mkwrite_wp);
}

/*
 * wpstat's own lookup by path (wpstat_path_key: show --resolve, filter
 * path, wps_read) keys a FUSE file through an O_PATH descriptor, which
 * fuse_flush never sees: looking the file up cleans nothing, and the next
 * stores take no fault.  The same key as the test's own fd, less the
 * generation FUSE does not report.
 */
TEST_F(fuse, path_lookup_does_not_write_back)
{
	struct wpstat_file_key key;
	struct wps d, byname;

	SET_UP(0, NPAGES, true);
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

/*
 * Prediction F3: on a fresh FUSE mount with the default bdi limits the
 * flusher cleans pages behind a writer that never asked for writeback.
 * Every dirtying fault's balance_dirty_pages_ratelimited enters
 * balance_dirty_pages (the strictlimit wb threshold is ~0, so
 * dirty_poll_interval() keeps nr_dirtied_pause tiny), which, outside free
 * run, calls wb_start_background_writeback(): WB_REASON_BACKGROUND passes
 * (mkclean_flusher_background) write-protect what was just stored.  How
 * many depends on when the flusher runs: bounds only.
 */
TEST_F(fuse, fresh_mount_flusher_cleans_behind_writer)
{
	struct wps d;

	SET_UP(0, NPAGES, false);
	wps_store_pages(self->f.map, NPAGES, 1);
	d = SINCE();
	WPS_LOG_DELTA("64 stores", &d);
	TH_LOG("writeback_cache=%d: %d stores: mkwrite_first %lld mkwrite_wp %lld "
	       "bdp_throttled %lld bdp_pauses %lld mkclean_flusher_background %lld",
	       variant->writeback_cache, NPAGES, (long long)d.mkwrite_first,
	       (long long)d.mkwrite_wp, (long long)d.bdp_throttled,
	       (long long)d.bdp_pauses, (long long)d.mkclean_flusher_background);
	/*
	 * One fault per store, plus a write-protect fault where the flusher
	 * cleaned a page between finish_fault() and the retried store.
	 */
	EXPECT_LE(NPAGES, d.mkwrite_first + d.mkwrite_wp);
	EXPECT_TIMED_EQ(d.mkwrite_first + d.mkwrite_wp, d.bdp_fault_calls);
	EXPECT_LE(1, d.bdp_throttled);
	EXPECT_LE(1, d.mkclean_flusher_background);
	EXPECT_EQ(d.mkclean_calls, d.mkclean_flusher_background);
}

TEST_HARNESS_MAIN
