// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_fs: the prediction of wpstat_predict's store_msync_store_store
 * (pass 1 first-write faults, msync write-protects, pass 2 write-protect
 * faults, pass 3 nothing) and of write(2) + fsync, on the filesystems
 * guest-check.sh mounts for this suite: ext4 with data=journal, ext4 with
 * nodelalloc, f2fs, and overlayfs over ext4.  A filesystem guest-check
 * could not mount ($WPSTAT_FS_DIR/NAME.unavailable) skips with its reason.
 *
 * The same on every one of them, on 6.1 and 6.12: pass 1 takes N
 * first-write faults (do_shared_fault -> do_page_mkwrite) and N ratelimited
 * calls (fault_dirty_shared_page); each msync(MS_SYNC) write-protects the
 * N pages once for msync (folio_clear_dirty_for_io -> folio_mkclean);
 * pass 2 takes N write-protect faults (do_wp_page -> wp_page_shared); pass
 * 3 takes nothing; write(2) takes no fault and one ratelimited call per
 * page (generic_perform_write).  What differs, and why:
 *
 *   ext4 data=journal (ext4_page_mkwrite's journalled branch: no
 *   block_page_mkwrite, so no folio_wait_stable on a fault):
 *     6.1: msync writes each page into the journal
 *       (__ext4_journalled_writepage), and the commit that
 *       ext4_sync_file() forces refiles the buffers as dirty for the
 *       checkpoint (__jbd2_journal_refile_buffer -> mark_buffer_dirty):
 *       N more dirtyings after the clean.  Pass 2's faults find the
 *       pages already dirty: no dirtying.  write(2) journals the data
 *       without dirtying the page (ext4_journalled_write_end); fsync's
 *       commit dirties it for the checkpoint, and the next fsync writes
 *       it back.
 *     6.12 (the data=journal rework of 6.5): ext4_do_writepages() commits
 *       first (ext4_fc_commit), and the commit write-protects the pages
 *       itself (ext4_journalled_submit_inode_data_buffers ->
 *       write_cache_pages: N folio_mkclean from jbd2, counted
 *       mkclean_other), then refiles them dirty; msync's own pass
 *       checkpoints them (N for msync).  Two cleans per page per msync.
 *       write(2) dirties the page as usual (ext4_write_end ->
 *       block_write_end), and fsync cleans it once.
 *   ext4 nodelalloc (ext4_page_mkwrite's non-delalloc branch:
 *     block_page_mkwrite -> folio_wait_stable once per fault; the write
 *     path ext4_write_begin waits in __filemap_get_folio(FGP_STABLE) for a
 *     cached page and again with folio_wait_stable: 1 per write to a new
 *     page, 2 to a cached one, from 6.1 to 7.2; 5.10 waits twice on a new
 *     page too, stable_new_510).
 *   f2fs: f2fs_vm_page_mkwrite() and f2fs_write_begin() wait with
 *     f2fs_wait_on_page_writeback(), which calls folio_wait_stable only
 *     when the page is under writeback: no stable_calls here.
 *   overlayfs over ext4: ovl_mmap() maps the upper (real) file, so the
 *     faults and cleans are ext4's (delalloc: one folio_wait_stable per
 *     fault; per write(2) to a new page 1 on 6.1 (ext4_da_write_begin ->
 *     wait_for_stable_page), 0 on 6.12 (only __filemap_get_folio's
 *     FGP_STABLE wait, which a folio it creates skips); to a cached page
 *     2 on 6.1, 1 on 6.12, as wpstat_predict), counted against the upper
 *     inode, which libwpstat finds from the merged path (upperdir).
 */
#include "wpstat_test.h"
#include "wpstat_harness.h"

#define NPAGES	64

FIXTURE(fs) {
	struct wps_fs_file f;
};

/*
 * name: the directory under $WPSTAT_FS_DIR.  upper: overlayfs; the file's
 * pages belong to the upper ext4 inode (ovl_mmap() maps the real file), so
 * its counts are read from the upper directory.
 */
FIXTURE_VARIANT(fs) {
	const char *name;
	const char *upper;
	bool journal;		/* data=journal: the cases above */
	int stable_fault;	/* folio_wait_stable calls per fault */
	int stable_new_61;	/* ... per write(2) to a page not cached, 6.1 */
	int stable_new_612;	/* ... and 6.12 */
	int stable_new_510;	/* ... and 5.10 (no FGP_STABLE: every page) */
	int stable_cached_61;	/* ... per write(2) to a cached page, 6.1 */
	int stable_cached_612;	/* ... and 6.12 */
};

FIXTURE_VARIANT_ADD(fs, ext4_journal) {
	.name = "ext4-journal", .journal = true,
	.stable_new_61 = 1, .stable_new_612 = 1, .stable_new_510 = 2,
	.stable_cached_61 = 2, .stable_cached_612 = 2,
};
FIXTURE_VARIANT_ADD(fs, ext4_nodelalloc) {
	.name = "ext4-nodelalloc", .stable_fault = 1,
	.stable_new_61 = 1, .stable_new_612 = 1, .stable_new_510 = 2,
	.stable_cached_61 = 2, .stable_cached_612 = 2,
};
FIXTURE_VARIANT_ADD(fs, f2fs) { .name = "f2fs" };
FIXTURE_VARIANT_ADD(fs, overlay) {
	.name = "overlay", .upper = "ext4/.ovl/upper", .stable_fault = 1,
	.stable_new_61 = 1, .stable_new_612 = 0, .stable_new_510 = 2,
	.stable_cached_61 = 2, .stable_cached_612 = 1,
};

/*
 * folio_wait_stable calls per fault.  7.2's ext4_block_page_mkwrite()
 * waits after its journal stop on the journalled branch too (6.1 and
 * 6.12's ext4_page_mkwrite() did not); the change came after 6.12.
 */
static int stable_per_fault(const FIXTURE_VARIANT(fs) *v)
{
	return v->journal && wps_kernel_at_least(6, 13) ? 1 : v->stable_fault;
}

/* jbd2's commit write-protects journalled pages itself (6.5 and later). */
static bool commit_protects(void)
{
	return wps_kernel_at_least(6, 5);
}

FIXTURE_SETUP(fs)
{
	char why[512];

	wps_fs_file_init(&self->f);
	ASSERT_TRUE(wps_loaded()) TH_LOG("wpstat is not loaded");
	ASSERT_NE(NULL, getenv("WPSTAT_FS_DIR"))
		TH_LOG("WPSTAT_FS_DIR unset: run through guest-check.sh");
	if (wps_fs_unavailable(variant->name, why, sizeof(why)))
		SKIP(return, "%s not mounted: %s", variant->name, why);
	WPS_FS_FILE_OPEN(&self->f, variant->name, "fs", NPAGES, 0,
			 variant->upper);
}

FIXTURE_TEARDOWN(fs)
{
	wps_fs_file_release(&self->f, false);
}

#define SINCE() WPS_FS_SINCE(&self->f)

/*
 * Per page on order-0 folios; where a filesystem uses large folios (ext4
 * since 6.16, not with data=journal) a first-write fault may map a whole
 * folio, and dirtying and cleaning go folio by folio: the numbers come
 * from the stores that found no PTE and the folios counted (see
 * wpstat_predict.c).
 */
TEST_F(fs, store_msync_store_store)
{
	bool old_journal = variant->journal && !commit_protects();
	bool new_journal = variant->journal && commit_protects();
	int stable = stable_per_fault(variant);
	long absent, folios;
	struct wps d;
	int round;

	self->f.map = map_shared(self->f.fd, NPAGES);
	ASSERT_NE(NULL, self->f.map);
	absent = wps_store_pages_absent(self->f.map, NPAGES, 1);
	folios = wps_folios(self->f.map, NPAGES);
	ASSERT_LT(0, absent);
	ASSERT_LT(0, folios);
	d = SINCE();
	WPS_LOG_DELTA("pass 1", &d);
	TH_LOG("%d pages in %ld folios, %ld stores found no PTE", NPAGES,
	       folios, absent);
	EXPECT_EQ(absent, d.mkwrite_first);
	EXPECT_EQ(0, d.mkwrite_wp);
	EXPECT_TIMED_EQ(absent, d.bdp_fault_calls);
	EXPECT_EQ(folios, d.dirtied);
	EXPECT_TIMED_EQ(absent * stable, d.stable_calls);

	for (round = 0; round < 2; round++) {
		ASSERT_EQ(0, msync(self->f.map, NPAGES * PAGE, MS_SYNC));
		d = SINCE();
		WPS_LOG_DELTA("msync", &d);
		EXPECT_EQ(folios, d.mkclean_msync);
		EXPECT_EQ(new_journal ? folios : 0, d.mkclean_other);
		EXPECT_EQ(new_journal ? 2 * folios : folios, d.mkclean_calls);
		EXPECT_EQ(variant->journal ? folios : 0, d.dirtied);
		EXPECT_TIMED_EQ(NPAGES, d.mkclean_ptes);
		if (round)
			break;

		wps_store_pages(self->f.map, NPAGES, 2);
		d = SINCE();
		WPS_LOG_DELTA("pass 2", &d);
		EXPECT_EQ(0, d.mkwrite_first);
		EXPECT_EQ(NPAGES, d.mkwrite_wp);
		EXPECT_TIMED_EQ(NPAGES, d.bdp_fault_calls);
		EXPECT_EQ(old_journal ? 0 : folios, d.dirtied);
		EXPECT_TIMED_EQ(NPAGES * stable, d.stable_calls);

		wps_store_pages(self->f.map, NPAGES, 3);
		d = SINCE();
		EXPECT_EQ(0, d.mkwrite_first + d.mkwrite_wp);
		EXPECT_EQ(0, d.mkclean_calls);
		EXPECT_EQ(0, d.dirtied);
	}
}

TEST_F(fs, write_fsync)
{
	bool old_journal = variant->journal && !commit_protects();
	bool k612 = wps_kernel_at_least(6, 12);
	/* 5.10: grab_cache_page_write_begin() waits on every page. */
	int new = k612 ? variant->stable_new_612 :
		  wps_kernel_at_least(6, 1) ? variant->stable_new_61 :
		  variant->stable_new_510;
	int cached = k612 ? variant->stable_cached_612 : variant->stable_cached_61;
	struct wps d;

	ASSERT_EQ(0, pwrite_pages(self->f.fd, 0, NPAGES, 1));
	d = SINCE();
	WPS_LOG_DELTA("pwrite 1", &d);
	EXPECT_EQ(0, d.mkwrite_first + d.mkwrite_wp);
	EXPECT_TIMED_EQ(NPAGES, d.bdp_calls);
	EXPECT_TIMED_EQ(NPAGES * new, d.stable_calls);
	EXPECT_EQ(old_journal ? 0 : NPAGES, d.dirtied);

	ASSERT_EQ(0, fsync(self->f.fd));
	d = SINCE();
	WPS_LOG_DELTA("fsync", &d);
	EXPECT_EQ(old_journal ? 0 : NPAGES, d.mkclean_fsync);
	EXPECT_EQ(d.mkclean_fsync, d.mkclean_calls);
	EXPECT_EQ(old_journal ? NPAGES : 0, d.dirtied);
	EXPECT_TIMED_EQ(0, d.mkclean_ptes);

	ASSERT_EQ(0, pwrite_pages(self->f.fd, 0, NPAGES, 2));
	d = SINCE();
	WPS_LOG_DELTA("pwrite 2", &d);
	EXPECT_TIMED_EQ(NPAGES, d.bdp_calls);
	EXPECT_TIMED_EQ(NPAGES * cached, d.stable_calls);
	EXPECT_EQ(old_journal ? 0 : NPAGES, d.dirtied);

	ASSERT_EQ(0, fsync(self->f.fd));
	d = SINCE();
	WPS_LOG_DELTA("fsync 2", &d);
	EXPECT_EQ(NPAGES, d.mkclean_fsync);
	EXPECT_EQ(NPAGES, d.mkclean_calls);
	EXPECT_EQ(old_journal ? NPAGES : 0, d.dirtied);
}

/*
 * The file the test opened is counted as the inode that holds its pages.
 * overlayfs: the page cache, the faults and the cleans are the upper ext4
 * inode's (ovl_mmap() maps the real file), and libwpstat keys the merged
 * path by that real file (wpstat_fd_key: upperdir or lowerdir from
 * mountinfo), so the path the application used finds the upper inode's
 * row: the same dev, inode and generation, the same counts.
 */
TEST_F(fs, counted_against_the_real_inode)
{
	struct wpstat_file_key merged, real;
	struct wps mine, upper;
	long absent, folios;
	struct stat st;

	self->f.map = map_shared(self->f.fd, NPAGES);
	ASSERT_NE(NULL, self->f.map);
	absent = wps_store_pages_absent(self->f.map, NPAGES, 1);
	folios = wps_folios(self->f.map, NPAGES);
	ASSERT_LT(0, absent);
	ASSERT_LT(0, folios);
	ASSERT_EQ(0, msync(self->f.map, NPAGES * PAGE, MS_SYNC));
	ASSERT_EQ(0, wps_read(self->f.path, &mine));
	EXPECT_EQ(absent, mine.mkwrite_first - self->f.base.mkwrite_first);
	EXPECT_EQ(folios, mine.mkclean_msync - self->f.base.mkclean_msync);
	if (!variant->upper)
		return;
	ASSERT_EQ(0, stat(self->f.counted, &st))
		TH_LOG("no upper file %s", self->f.counted);
	ASSERT_EQ(0, wps_read(self->f.counted, &upper));
	EXPECT_EQ(0, memcmp(&mine, &upper, sizeof(mine)));
	ASSERT_EQ(0, wpstat_path_key(self->f.path, &merged));
	ASSERT_EQ(0, wpstat_path_key(self->f.counted, &real));
	EXPECT_EQ(real.major, merged.major);
	EXPECT_EQ(real.minor, merged.minor);
	EXPECT_EQ(real.ino, merged.ino);
	EXPECT_EQ(real.gen, merged.gen);
	EXPECT_TRUE(merged.have_gen);
}

TEST_HARNESS_MAIN
