// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_predict_copy: the kernel's copies (copy_file_range, sendfile,
 * splice) dirty the destination like write(2), and a reflink (FICLONE)
 * dirties nothing.  The fixture, the conventions and the call chains:
 * wpstat_predict.h.
 */
#include "wpstat_predict.h"

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
