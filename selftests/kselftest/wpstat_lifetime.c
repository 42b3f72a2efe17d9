// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_lifetime: the module stays right when files go away under it.
 *
 *   life.<fs>  a tracked file unlinked, truncated under a live mapping
 *              (SIGBUS), evicted and read back, and its inode number
 *              reused: rows keyed by (dev, ino, generation) keep their
 *              counts and are never merged.
 *
 * A fresh filesystem's repeated keys and a btrfs snapshot's:
 * wpstat_freshfs.
 *
 * WPSTAT_STRESS=1 (make stress) selects longer truncate races.  Runs as
 * root in a guest with wpstat.ko loaded and
 * $WPSTAT_FS_DIR/{ext4,xfs,btrfs,tmpfs} mounted (scripts/check/guest-check.sh).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <time.h>
#include <sys/statfs.h>
#include <sys/wait.h>

#include "wpstat_test.h"
#include "wpstat_harness.h"

#define NPAGES		16

/* ---- helpers ------------------------------------------------------------ */

/*
 * One pass of both kinds over @fd: a store per page through a fresh
 * mapping with msync, a pwrite of @val per page, fsync.  0 or -errno.
 */
static int mmap_and_pwrite_pass(int fd, char val)
{
	int ret = touch_file(fd, NPAGES);

	if (!ret)
		ret = pwrite_pages(fd, 0, NPAGES, val);
	if (!ret && fsync(fd))
		ret = -errno;
	return ret;
}

/* How many of @fd's first @npages pages are in the page cache, or -errno. */
static int resident_pages(int fd, size_t npages)
{
	unsigned char vec[NPAGES];
	int n = 0;
	size_t i;
	void *m;

	if (npages > NPAGES)
		return -EINVAL;
	m = mmap(NULL, npages * PAGE, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	if (mincore(m, npages * PAGE, vec)) {
		n = -errno;
	} else {
		for (i = 0; i < npages; i++)
			n += vec[i] & 1;
	}
	munmap(m, npages * PAGE);
	return n;
}

/*
 * The rows with @key's device and inode number (and generation, if
 * @match_gen), in table order (the order the module first saw them):
 * their counters in @w and generations in @gen.  Returns how many, or
 * -errno.
 */
static int ino_rows(const struct wpstat_file_key *key, bool match_gen,
		    struct wps *w, uint32_t *gen, int max)
{
	struct wpstat_snapshot s;
	size_t i;
	int n = 0, ret;

	ret = wpstat_snapshot_read(NULL, &s);
	if (ret)
		return ret;
	for (i = 0; i < s.nrows; i++) {
		const struct wpstat_row *r = &s.rows[i];

		if (r->major != key->major || r->minor != key->minor ||
		    r->ino != key->ino || (match_gen && r->gen != key->gen))
			continue;
		if (n < max) {
			wps_from_row(&s, r, &w[n]);
			gen[n] = r->gen;
		}
		n++;
	}
	wpstat_snapshot_free(&s);
	return n;
}

/* ---- life: files unlinked, truncated, evicted, reused ------------------- */

/*
 * The rows a file these tests wrote has: one, but on tmpfs at level counts
 * none.  Without ->page_mkwrite, dirty accounting (noop_dirty_folio) or
 * writeback, nothing that level counts counts happens to a tmpfs file;
 * its ratelimited calls (bdp_calls) are level timing's.
 */
#define LIFE_ROWS(has_mkwrite) ((has_mkwrite) || wps_timing() == 1 ? 1 : 0)

FIXTURE(life) {
	char path[256];
	int fd;
	char *map;
};

/*
 * has_gen: FS_IOC_GETVERSION tells the generation (ext4, xfs, btrfs; not
 * tmpfs).  evictable: drop_caches empties the page cache of a clean file
 * (tmpfs pages are the file).  Only ext4, xfs and btrfs have ->page_mkwrite.
 * no_reuse: why a deleted file's inode number is not handed out again;
 * reuse_lags: why it may not be in time for the test.
 * pwrite_inexact: a page-sized pwrite may make more than one
 * balance_dirty_pages_ratelimited call: btrfs_buffered_write goes back to
 * "again:", before the call, when lock_and_cleanup_extent meets an
 * ordered extent that the writeback msync started is still completing.
 */
FIXTURE_VARIANT(life) {
	const char *fs;
	bool has_mkwrite;
	bool has_gen;
	bool evictable;
	const char *no_reuse;
	const char *reuse_lags;
	bool pwrite_inexact;
};

FIXTURE_VARIANT_ADD(life, ext4) {
	.fs = "ext4", .has_mkwrite = true, .has_gen = true, .evictable = true,
};
FIXTURE_VARIANT_ADD(life, xfs) {
	.fs = "xfs", .has_mkwrite = true, .has_gen = true, .evictable = true,
	.reuse_lags = "xfs frees it in deferred inactivation (xfs_inodegc), which had not run",
};
FIXTURE_VARIANT_ADD(life, btrfs) {
	.fs = "btrfs", .has_mkwrite = true, .has_gen = true, .evictable = true,
	.no_reuse = "btrfs object ids only grow (btrfs_get_free_objectid)",
	.pwrite_inexact = true,
};
FIXTURE_VARIANT_ADD(life, tmpfs) {
	.fs = "tmpfs",
	.no_reuse = "shmem_reserve_inode hands out next_ino++, never a freed number",
};

FIXTURE_SETUP(life)
{
	self->map = NULL;
	self->fd = -1;
	ASSERT_TRUE(wps_loaded()) TH_LOG("wpstat is not loaded");
	ASSERT_EQ(0, wps_control("filter none"));
	ASSERT_EQ(0, wps_control("enable"));
	self->fd = wps_scratch(variant->fs, "life", NPAGES, self->path,
			       sizeof(self->path));
	ASSERT_LE(0, self->fd) TH_LOG("no scratch file on %s", variant->fs);
}

FIXTURE_TEARDOWN(life)
{
	if (self->map)
		munmap(self->map, NPAGES * PAGE);
	if (self->fd >= 0)
		close(self->fd);
	unlink(self->path);
}

/*
 * Ratelimited calls made by @writes page-sized pwrites: exactly one each,
 * or where the filesystem may retry (pwrite_inexact), one to two each.
 * @calls is a difference of bdp_calls, which only level timing counts:
 * the check is for that level.
 */
#define EXPECT_PWRITE_CALLS(writes, calls) do {				\
		int __t = wps_timing();					\
									\
		ASSERT_LE(0, __t);					\
		if (__t && variant->pwrite_inexact) {			\
			EXPECT_LE((int64_t)(writes), (calls));		\
			EXPECT_GE(2 * (int64_t)(writes), (calls));	\
		} else if (__t) {					\
			EXPECT_EQ((int64_t)(writes), (calls));		\
		}							\
	} while (0)

/* The counters nothing should change once a file is closed for good. */
static void expect_same_counts(struct __test_metadata *_metadata,
			       const struct wps *a, const struct wps *b)
{
	EXPECT_EQ(a->mkwrite_first, b->mkwrite_first);
	EXPECT_EQ(a->mkwrite_wp, b->mkwrite_wp);
	EXPECT_EQ(a->mkclean_ptes, b->mkclean_ptes);
	EXPECT_EQ(a->dirtied, b->dirtied);
	EXPECT_EQ(a->bdp_calls, b->bdp_calls);
	EXPECT_EQ(a->bdp_fault_calls, b->bdp_fault_calls);
}

/*
 * Unlinked while mapped: faults and writeback go on against the same row;
 * after the last close the inode is evicted and freed, and its row stays
 * with every count intact.
 */
TEST_F(life, unlink_while_tracked)
{
	const int64_t n = variant->has_mkwrite ? NPAGES : 0;
	struct wpstat_file_key key;
	struct wps a, b, c, rows[2];
	uint32_t gen[2];

	self->map = map_shared(self->fd, NPAGES);
	ASSERT_NE(NULL, self->map);
	ASSERT_EQ(0, wpstat_fd_key(self->fd, &key));
	ASSERT_EQ(variant->has_gen, key.have_gen);
	wps_store_pages(self->map, NPAGES, 1);
	ASSERT_EQ(0, msync(self->map, NPAGES * PAGE, MS_SYNC));
	ASSERT_EQ(0, unlink(self->path));

	wps_store_pages(self->map, NPAGES, 2);
	ASSERT_EQ(0, msync(self->map, NPAGES * PAGE, MS_SYNC));
	ASSERT_EQ(0, wps_read_key(&key, &a));
	EXPECT_EQ(n, a.mkwrite_first);
	EXPECT_EQ(n, a.mkwrite_wp);
	EXPECT_TIMED_EQ(2 * n, a.mkclean_ptes);
	ASSERT_EQ(0, pwrite_pages(self->fd, 0, NPAGES, 3));
	ASSERT_EQ(0, wps_read_key(&key, &b));
	/* One ratelimited call per page-sized write, unlinked or not. */
	EXPECT_PWRITE_CALLS(NPAGES, b.bdp_calls - a.bdp_calls);

	munmap(self->map, NPAGES * PAGE);
	self->map = NULL;
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, wps_drop_caches());
	ASSERT_EQ(LIFE_ROWS(variant->has_mkwrite),
		  ino_rows(&key, key.have_gen, rows, gen, 2));
	ASSERT_EQ(0, wps_read_key(&key, &c));
	expect_same_counts(_metadata, &b, &c);
}

/*
 * ftruncate under a live shared mapping: a store beyond the new EOF gets
 * SIGBUS from the fault handler (filemap_fault / shmem_fault) before any
 * ->page_mkwrite; the PTEs below EOF keep counting as before, and pages
 * brought back by extending the file are first writes again.
 */
TEST_F(life, truncate_under_mapping_sigbus)
{
	const int64_t n = variant->has_mkwrite ? NPAGES : 0;
	const size_t half = NPAGES / 2;
	struct wpstat_file_key key;
	struct wps a, b;
	int status;
	pid_t child;

	self->map = map_shared(self->fd, NPAGES);
	ASSERT_NE(NULL, self->map);
	ASSERT_EQ(0, wpstat_fd_key(self->fd, &key));
	wps_store_pages(self->map, NPAGES, 1);
	ASSERT_EQ(0, msync(self->map, NPAGES * PAGE, MS_SYNC));
	ASSERT_EQ(0, ftruncate(self->fd, half * PAGE));

	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		*(volatile char *)(self->map + (NPAGES - 1) * PAGE) = 9;
		_exit(0);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status)) TH_LOG("store beyond EOF: no signal");
	EXPECT_EQ(SIGBUS, WTERMSIG(status));

	/* Below EOF: the PTEs msync write-protected are still there. */
	wps_store_pages(self->map, half, 2);
	ASSERT_EQ(0, wps_read_key(&key, &a));
	EXPECT_EQ(n, a.mkwrite_first);
	EXPECT_EQ(n / 2, a.mkwrite_wp);

	/* Extended again: truncation zapped the upper PTEs. */
	ASSERT_EQ(0, ftruncate(self->fd, NPAGES * PAGE));
	wps_store_pages(self->map, NPAGES, 3);
	ASSERT_EQ(0, msync(self->map, NPAGES * PAGE, MS_SYNC));
	ASSERT_EQ(0, wps_read_key(&key, &b));
	EXPECT_EQ(n + n / 2, b.mkwrite_first);
	EXPECT_EQ(n / 2, b.mkwrite_wp);
	EXPECT_TIMED_EQ(2 * n, b.mkclean_ptes);
	/* shmem dirties in fault_dirty_shared_page without ->page_mkwrite. */
	if (variant->has_mkwrite)
		EXPECT_TIMED_EQ(b.mkwrite_first + b.mkwrite_wp, b.bdp_fault_calls);
}

struct race {
	volatile int stop;
	long stores, sigbus;
};

static sigjmp_buf race_env;

static void race_sigbus(int sig)
{
	siglongjmp(race_env, 1);
}

/*
 * A writer stores through its mapping while the file is truncated to zero
 * and extended again, and written back, over and over: faults race with
 * truncation (->page_mkwrite finds the folio gone and returns NOPAGE, or
 * the fault SIGBUSes).  Nothing may crash, and the counts stay coherent:
 * no more PTEs cleaned, and no more ratelimited calls from faults, than
 * mkwrite faults counted.
 */
TEST_F(life, truncate_races_faults)
{
	const int seconds = wps_stress() ? 20 : 2;
	struct wpstat_file_key key;
	struct race *rc;
	struct timespec t0, t;
	struct wps w;
	int status, i = 0;
	pid_t child;

	rc = mmap(NULL, sizeof(*rc), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, rc);
	ASSERT_EQ(0, wpstat_fd_key(self->fd, &key));
	self->map = map_shared(self->fd, NPAGES);
	ASSERT_NE(NULL, self->map);

	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		volatile size_t p = 0;

		signal(SIGBUS, race_sigbus);
		while (!rc->stop) {
			if (sigsetjmp(race_env, 1)) {
				rc->sigbus++;
				p++;
				continue;
			}
			for (; p < 1000000000UL && !rc->stop; p++) {
				*(volatile char *)(self->map + (p % NPAGES) * PAGE) = 1;
				rc->stores++;
			}
		}
		_exit(0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		ASSERT_EQ(0, ftruncate(self->fd, 0));
		usleep(500);
		ASSERT_EQ(0, ftruncate(self->fd, NPAGES * PAGE));
		usleep(1000);
		if (++i % 4 == 0)
			ASSERT_EQ(0, fsync(self->fd));
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < seconds);
	rc->stop = 1;
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("writer died of signal %d",
					      WTERMSIG(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, msync(self->map, NPAGES * PAGE, MS_SYNC));
	TH_LOG("%d truncations, %ld stores, %ld SIGBUS", i, rc->stores,
	       rc->sigbus);
	EXPECT_LT(0, rc->sigbus) TH_LOG("the race never reached the SIGBUS path");
	ASSERT_EQ(0, wps_read_key(&key, &w));
	if (variant->has_mkwrite) {
		EXPECT_LT(0, w.mkwrite_first);
		EXPECT_GE(w.mkwrite_first + w.mkwrite_wp, w.mkclean_ptes);
		EXPECT_TIMED_RANGE(0, w.mkwrite_first + w.mkwrite_wp,
				   w.bdp_fault_calls);
	} else {
		EXPECT_EQ(0, w.mkwrite_first + w.mkwrite_wp);
		EXPECT_TIMED_EQ(0, w.mkclean_ptes);
	}
	munmap(rc, sizeof(*rc));
}

/*
 * Closed, written back and evicted (drop_caches), then opened again: the
 * inode is read back from disk with the same (dev, ino, generation), and
 * counting goes on in the one row it had.
 */
TEST_F(life, evicted_and_reread_same_row)
{
	const int64_t n = variant->has_mkwrite ? NPAGES : 0;
	struct wpstat_file_key k1, k2;
	struct wps w, rows[2];
	uint32_t gen[2];
	int i;

	ASSERT_EQ(0, wpstat_fd_key(self->fd, &k1));
	ASSERT_EQ(0, mmap_and_pwrite_pass(self->fd, 1));
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, wps_drop_caches());

	self->fd = open(self->path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	/*
	 * A folio still in another CPU's LRU batch holds a reference that
	 * drop_caches does not drain (5.10, once: 7 pages left): try again.
	 */
	for (i = 0; variant->evictable && i < 5 &&
	     resident_pages(self->fd, NPAGES) > 0; i++) {
		usleep(200 * 1000);
		ASSERT_EQ(0, wps_drop_caches());
	}
	if (variant->evictable)
		EXPECT_EQ(0, resident_pages(self->fd, NPAGES))
			TH_LOG("drop_caches left pages of %s cached", self->path);
	ASSERT_EQ(0, wpstat_fd_key(self->fd, &k2));
	EXPECT_EQ(k1.major, k2.major);
	EXPECT_EQ(k1.minor, k2.minor);
	EXPECT_EQ(k1.ino, k2.ino);
	EXPECT_EQ(k1.gen, k2.gen);

	ASSERT_EQ(0, mmap_and_pwrite_pass(self->fd, 2));
	ASSERT_EQ(LIFE_ROWS(variant->has_mkwrite),
		  ino_rows(&k2, k2.have_gen, rows, gen, 2))
		TH_LOG("the file has several rows, or none");
	ASSERT_EQ(0, wps_read_key(&k2, &w));
	/* A new mapping has no PTEs: each pass is first writes again. */
	EXPECT_EQ(2 * n, w.mkwrite_first);
	EXPECT_EQ(0, w.mkwrite_wp);
	EXPECT_TIMED_EQ(2 * n, w.mkclean_ptes);
	EXPECT_PWRITE_CALLS(2 * NPAGES, w.bdp_calls - w.bdp_fault_calls);
}

#define REUSE_TRIES	64

/*
 * Let the filesystem free what was deleted in @dir: write back, and have
 * xfs run its deferred inactivation (xfs_inodegc), which only statfs
 * expedites (xfs_fs_statfs -> xfs_inodegc_push; syncfs does not on 6.1).
 */
static void settle_deleted(const char *dir)
{
	struct statfs sfs;

	sync();
	statfs(dir, &sfs);
	usleep(100 * 1000);
}

/*
 * Delete a tracked file and create files until one gets its inode number
 * (ext4 takes the lowest free bit of the group's bitmap; xfs hands out the
 * freed inode of the chunk once background inactivation has freed it;
 * btrfs object ids and tmpfs inode numbers only grow, so those skip).  The
 * new file's generation differs, and it gets a row of its own: the old
 * row keeps the old counts and the new one counts only the new file.
 */
TEST_F(life, reused_inode_number_gets_own_row)
{
	const int64_t n = variant->has_mkwrite ? NPAGES : 0;
	char paths[REUSE_TRIES][256], name[32], dir[256];
	int fds[REUSE_TRIES], tries, i, found = -1, nrows;
	bool rows_ok;
	struct wpstat_file_key old, new;
	struct wps before, rows[4];
	uint32_t gen[4];

	ASSERT_EQ(0, wpstat_fd_key(self->fd, &old));
	ASSERT_EQ(0, mmap_and_pwrite_pass(self->fd, 1));
	ASSERT_EQ(0, wps_read_key(&old, &before));
	EXPECT_PWRITE_CALLS(NPAGES, before.bdp_calls - before.bdp_fault_calls);
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, unlink(self->path));
	snprintf(dir, sizeof(dir), "%s", self->path);
	*strrchr(dir, '/') = '\0';
	settle_deleted(dir);

	for (tries = 0; tries < REUSE_TRIES; tries++) {
		struct stat st;

		snprintf(name, sizeof(name), "reuse%d", tries);
		fds[tries] = wps_scratch(variant->fs, name, NPAGES,
					 paths[tries], sizeof(paths[0]));
		ASSERT_LE(0, fds[tries]);
		ASSERT_EQ(0, fstat(fds[tries], &st));
		if (st.st_ino == old.ino) {
			found = tries++;
			break;
		}
		if (tries % 8 == 7)
			settle_deleted(dir);
	}
	if (found < 0) {
		for (i = 0; i < tries; i++) {
			close(fds[i]);
			unlink(paths[i]);
		}
		if (variant->no_reuse || variant->reuse_lags)
			SKIP(return, "%d new files, none got the deleted inode number %llu: %s",
			     REUSE_TRIES, (unsigned long long)old.ino,
			     variant->no_reuse ?: variant->reuse_lags);
		ASSERT_LE(0, found) TH_LOG("%s did not reuse inode %llu in %d creates",
					   variant->fs, (unsigned long long)old.ino,
					   REUSE_TRIES);
	}

	ASSERT_EQ(0, wpstat_fd_key(fds[found], &new));
	TH_LOG("inode %llu reused after %d creates: generation %u, was %u",
	       (unsigned long long)new.ino, found + 1, new.gen, old.gen);
	if (variant->has_gen)
		EXPECT_NE(old.gen, new.gen);
	ASSERT_EQ(0, touch_file(fds[found], NPAGES / 2));
	ASSERT_EQ(0, pwrite_pages(fds[found], 0, 3, 1));
	ASSERT_EQ(0, fsync(fds[found]));

	/*
	 * Earlier tests may have left rows for this inode number too: with
	 * generations, pick the two by key; without, the last two rows.
	 */
	if (variant->has_gen) {
		nrows = ino_rows(&old, true, &rows[0], &gen[0], 1) +
			2 * ino_rows(&new, true, &rows[1], &gen[1], 1);
		rows_ok = nrows == 3;
	} else {
		nrows = ino_rows(&new, false, rows, gen, 4);
		rows_ok = nrows >= 2 && nrows <= 4;
		if (rows_ok) {
			rows[0] = rows[nrows - 2];
			rows[1] = rows[nrows - 1];
			gen[0] = gen[nrows - 2];
			gen[1] = gen[nrows - 1];
		}
	}
	for (i = 0; i < tries; i++) {
		close(fds[i]);
		unlink(paths[i]);
	}
	ASSERT_TRUE(rows_ok) TH_LOG("old and new file merged or lost (%d)", nrows);
	EXPECT_NE(gen[0], gen[1]);
	/* The old row: untouched. */
	expect_same_counts(_metadata, &before, &rows[0]);
	/* The new one: only what the new file did. */
	EXPECT_EQ(n / 2, rows[1].mkwrite_first);
	EXPECT_EQ(0, rows[1].mkwrite_wp);
	EXPECT_TIMED_EQ(n / 2, rows[1].mkclean_ptes);
	EXPECT_PWRITE_CALLS(3, rows[1].bdp_calls - rows[1].bdp_fault_calls);
}

TEST_HARNESS_MAIN
