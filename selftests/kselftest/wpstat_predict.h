/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fixture of the wpstat_predict* suites (wpstat_predict.c: stores
 * and their faults; _read.c: read faults, read-around and warm-ups;
 * _copy.c: the kernel's copies): the kernel behaves as a reading of its
 * source predicts, on four filesystems.  Included by each of them once,
 * as its harness (it defines the fixture); the read-fault workloads and
 * models are in wpstat_faults.c.
 *
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
#ifndef WPSTAT_PREDICT_H
#define WPSTAT_PREDICT_H

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
static inline bool btrfs_per_folio(void)
{
	return wps_kernel_at_least(6, 13);
}

/*
 * 5.10, the page era of the 5.4 analysis (measured there; the kernels
 * between 5.10 and 6.1 are not tested).
 */
static inline bool page_era(void)
{
	return !wps_kernel_at_least(6, 1);
}

/* balance_dirty_pages_ratelimited once per batch, not per folio. */
#define bdp_batched(v)	((v)->bdp_per_batch && !btrfs_per_folio())

/* folio_mkclean() calls for one contiguous dirty range of @folios folios. */
static inline long mkclean_calls_of(const FIXTURE_VARIANT(pred) *v, long folios)
{
	if (v->bdp_per_batch)				/* btrfs */
		return wps_btrfs_mkclean_calls(folios);
	if (page_era())
		return folios * v->mkclean_per_folio_510;
	return folios * v->mkclean_per_folio;
}

#define FAB_PATH	"/sys/kernel/debug/fault_around_bytes"

/* mm/memory.c's fault_around_bytes (debugfs), or -errno. */
static inline long fab_get(void)
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
static inline int write_long(const char *path, long val)
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

static inline int fab_set(long val)
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

static inline char *map_file(int fd, int flags)
{
	char *map = mmap(NULL, NPAGES * PAGE, PROT_READ | PROT_WRITE, flags,
			 fd, 0);

	return map == MAP_FAILED ? NULL : map;
}

/* Counters accumulated since the previous call. */
#define SINCE() WPS_SINCE(self->path, &self->base)

#endif
