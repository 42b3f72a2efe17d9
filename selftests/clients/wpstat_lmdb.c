// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_lmdb: LMDB (Debian's liblmdb, 0.9.24) under wpstat, one
 * prediction per way LMDB writes its data file, on ext4 (order-0 folios,
 * ext4_page_mkwrite) with periodic writeback off (guest-check.sh), so that
 * only LMDB's own syncs clean pages.
 *
 * What LMDB does (libraries/liblmdb/mdb.c at LMDB_0.9.24):
 *   mdb_env_open() on a new file: mdb_env_init_meta() pwrite()s the two
 *       meta pages (0 and 1); with MDB_WRITEMAP mdb_env_map() ftruncate()s
 *       the file to the map size and maps it PROT_READ|PROT_WRITE,
 *       MAP_SHARED, otherwise PROT_READ.
 *   mdb_page_alloc(): pages are taken from the free list (freed at least
 *       two transactions ago) or from the end of the file (mt_next_pgno);
 *       with MDB_WRITEMAP the page is the mapping itself, so the first
 *       store to it is a fault.
 *   mdb_txn_commit(): mdb_freelist_save(), mdb_page_flush() (with
 *       MDB_WRITEMAP it only clears LMDB's dirty flags; otherwise
 *       pwritev() of every dirty page), mdb_env_sync(env, 0) (MDB_WRITEMAP:
 *       msync(MS_SYNC) of the whole map; otherwise fdatasync()), then
 *       mdb_env_write_meta() (MDB_WRITEMAP: stores into meta page
 *       txnid & 1 and msync()s that page; otherwise pwrite() of the meta
 *       to the O_DSYNC descriptor).  MDB_NOSYNC skips both syncs.
 *
 * What the kernel does with that (see wpstat_predict.c for the chains):
 *   a store to a page with no PTE takes a first-write fault, a store to a
 *   read-only PTE (mapped by a read or fault-around, or write-protected by
 *   writeback) a write-protect fault; either runs ext4_page_mkwrite and
 *   then fault_dirty_shared_page() -> balance_dirty_pages_ratelimited()
 *   (one bdp_fault_calls each) and dirties the folio (one "dirtied",
 *   writeback:writeback_dirty_folio).  msync/fdatasync write back every
 *   dirty folio: one folio_mkclean each, write-protecting the writable
 *   PTE of the one mapping (mkclean_ptes, level timing).
 */
#include <lmdb.h>

#include "wpstat_test.h"
#include "wpstat_harness.h"

#define TXNS		20	/* commits, as the py-lmdb writer this repeats */
#define PUTS		200	/* of 200 puts each */
#define VALUE_SIZE	100
#define WARMUP		6	/* rewrite transactions before the steady state */
#define MAPSIZE		(16UL << 20)

/* An LMDB call that must succeed. */
#define MDB_OK(call) do {						\
	int __rc = (call);						\
									\
	ASSERT_EQ(MDB_SUCCESS, __rc) TH_LOG("%s: %s", #call,		\
					    mdb_strerror(__rc));	\
} while (0)

FIXTURE(lmdb) {
	char dir[256];
	char data[300];
	MDB_env *env;
	MDB_dbi dbi;
};

/*
 * writemap: MDB_WRITEMAP, synchronous commits (py-lmdb's writemap=True).
 * nosync: MDB_WRITEMAP | MDB_NOSYNC, the application syncs when it likes.
 * pwrite: LMDB's default: a read-only map, pages written with pwrite().
 */
FIXTURE_VARIANT(lmdb) {
	unsigned int flags;
};

FIXTURE_VARIANT_ADD(lmdb, writemap) { .flags = MDB_WRITEMAP };
FIXTURE_VARIANT_ADD(lmdb, nosync) { .flags = MDB_WRITEMAP | MDB_NOSYNC };
FIXTURE_VARIANT_ADD(lmdb, pwrite) { .flags = 0 };

/*
 * A new environment in $WPSTAT_FS_DIR/ext4/lmdb.PID.@name with @flags, its
 * main database open.  The meta pages mdb_env_init_meta() wrote with
 * pwrite() are dirty: they are cleaned here, so that every page a
 * measured commit cleans is one a measured transaction dirtied.
 * 0, or -1 with the reason on stderr.
 */
static int open_env(const char *name, unsigned int flags, char *dir,
		    size_t dirlen, char *data, size_t datalen, MDB_env **env,
		    MDB_dbi *dbi)
{
	const char *fs = getenv("WPSTAT_FS_DIR");
	const char *what = "mdb_env_create";
	MDB_txn *txn;
	int rc;

	if (!fs) {
		fprintf(stderr, "WPSTAT_FS_DIR unset: run through guest-check.sh\n");
		return -1;
	}
	snprintf(dir, dirlen, "%s/ext4/lmdb.%d.%s", fs, getpid(), name);
	snprintf(data, datalen, "%s/data.mdb", dir);
	if (mkdir(dir, 0700)) {
		fprintf(stderr, "mkdir %s: %m\n", dir);
		return -1;
	}
	rc = mdb_env_create(env);
	if (!rc && (what = "mdb_env_set_mapsize"))
		rc = mdb_env_set_mapsize(*env, MAPSIZE);
	if (!rc && (what = "mdb_env_open"))
		rc = mdb_env_open(*env, dir, flags, 0600);
	if (!rc && (what = "mdb_txn_begin"))
		rc = mdb_txn_begin(*env, NULL, 0, &txn);
	if (!rc && (what = "mdb_dbi_open")) {
		rc = mdb_dbi_open(txn, NULL, 0, dbi);
		if (rc)
			mdb_txn_abort(txn);
		else if ((what = "mdb_txn_commit"))
			rc = mdb_txn_commit(txn);
	}
	if (!rc && (what = "mdb_env_sync"))
		rc = mdb_env_sync(*env, 1);
	if (rc) {
		fprintf(stderr, "%s: %s\n", what, mdb_strerror(rc));
		return -1;
	}
	return 0;
}

static void close_env(MDB_env *env, const char *dir, const char *data)
{
	char path[640];

	if (env)
		mdb_env_close(env);
	snprintf(path, sizeof(path), "%s/lock.mdb", dir);
	unlink(path);
	unlink(data);
	rmdir(dir);
}

FIXTURE_SETUP(lmdb)
{
	ASSERT_TRUE(wps_loaded()) TH_LOG("wpstat module not loaded");
	ASSERT_EQ(0, open_env(_metadata->name, variant->flags, self->dir,
			      sizeof(self->dir), self->data, sizeof(self->data),
			      &self->env, &self->dbi));
}

FIXTURE_TEARDOWN(lmdb)
{
	close_env(self->env, self->dir, self->data);
}

/* One write transaction: @n puts of keys [first, first + n), committed. */
static int put_txn(MDB_env *env, MDB_dbi dbi, int first, int n, char fill)
{
	char kbuf[16], vbuf[VALUE_SIZE];
	MDB_val key = { 0, kbuf }, val = { sizeof(vbuf), vbuf };
	MDB_txn *txn;
	int i, rc;

	rc = mdb_txn_begin(env, NULL, 0, &txn);
	if (rc)
		return rc;
	memset(vbuf, fill, sizeof(vbuf));
	for (i = first; i < first + n; i++) {
		key.mv_size = snprintf(kbuf, sizeof(kbuf), "k%08d", i);
		rc = mdb_put(txn, dbi, &key, &val, 0);
		if (rc) {
			mdb_txn_abort(txn);
			return rc;
		}
	}
	return mdb_txn_commit(txn);
}

/* The last page LMDB has used: the file's extent in pages, less one. */
static size_t last_pgno(MDB_env *env)
{
	MDB_envinfo info;

	return mdb_env_info(env, &info) ? 0 : info.me_last_pgno;
}

/*
 * Dirty pages of @path's mapping in this process, from /proc/self/smaps
 * (Shared_Dirty + Private_Dirty: the page table walk's count, independent
 * of wpstat), or -1.
 */
static long smaps_dirty_pages(const char *path)
{
	char line[512];
	long kb = 0, v;
	unsigned long start, end;
	bool in = false;
	FILE *f = fopen("/proc/self/smaps", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		/* A mapping's header: "start-end perms offset dev inode path". */
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2) {
			in = strstr(line, path) != NULL;
			continue;
		}
		if (in && (sscanf(line, "Shared_Dirty: %ld kB", &v) == 1 ||
			   sscanf(line, "Private_Dirty: %ld kB", &v) == 1))
			kb += v;
	}
	fclose(f);
	return kb / 4;
}

static int64_t faults(const struct wps *d)
{
	return d->mkwrite_first + d->mkwrite_wp;
}

/*
 * TXNS transactions of PUTS new keys each (a py-lmdb writer's workload).
 *
 * writemap: every commit's msync cleans exactly the pages its transaction
 * dirtied, and each of those took exactly one fault: per transaction,
 * first + wp == mkclean_calls == mkclean_msync == dirtied ==
 * bdp_fault_calls.  Over the run, first-write faults == last_pgno - 1:
 * pages 2..last_pgno, each allocated once from the end of the file and
 * stored to before anything read it; the meta pages were mapped by the
 * first transaction's read of them (mdb_env_pick_meta), so their stores
 * are write-protect faults.  Every transaction takes at least one
 * write-protect fault: its meta page, cleaned by the commit before last.
 * The PTEs write-protected (level timing) == mkclean_calls: one
 * mapping, one writable PTE per dirty page.
 *
 * nosync: no commit syncs, so nothing is cleaned (mkclean 0) and a page
 * written again in a later transaction takes no second fault: the run's
 * faults == the mapping's dirty pages (smaps) == dirtied.  Then
 * mdb_env_sync(env, 1) msyncs: mkclean_msync == those dirty pages, and
 * the next transaction takes write-protect faults on what it writes
 * again, which the next sync cleans.
 *
 * pwrite: the map is read-only, so no fault ever reaches page_mkwrite;
 * every page a commit pwrite()s is dirtied and cleaned by that commit
 * (fdatasync, and the O_DSYNC meta write): per transaction mkclean_calls
 * == dirtied > 0, with no writable PTE to write-protect (mkclean_ptes 0).
 */
TEST_F(lmdb, commits)
{
	struct wps before, after, d, total = { 0 };
	bool writemap = variant->flags & MDB_WRITEMAP;
	bool nosync = variant->flags & MDB_NOSYNC;
	size_t last0 = last_pgno(self->env);
	int t;

	ASSERT_EQ(0, wps_read(self->data, &before));
	for (t = 0; t < TXNS; t++) {
		struct wps b = after;

		if (t == 0)
			b = before;
		MDB_OK(put_txn(self->env, self->dbi, t * PUTS, PUTS, 'a' + t));
		ASSERT_EQ(0, wps_read(self->data, &after));
		d = wps_delta(&after, &b);
		total.mkwrite_first += d.mkwrite_first;
		total.mkwrite_wp += d.mkwrite_wp;
		total.mkclean_calls += d.mkclean_calls;
		total.dirtied += d.dirtied;
		/* Level timing's column: '-' (-1) at counts stays -1. */
		total.bdp_fault_calls = d.bdp_fault_calls < 0 ? -1 :
			total.bdp_fault_calls + d.bdp_fault_calls;
		if (writemap && !nosync) {
			EXPECT_LT(0, faults(&d));
			EXPECT_LE(1, d.mkwrite_wp) TH_LOG("txn %d: no meta page fault", t);
			EXPECT_EQ(faults(&d), d.mkclean_calls) TH_LOG("txn %d", t);
			EXPECT_EQ(d.mkclean_calls, d.mkclean_msync) TH_LOG("txn %d", t);
			EXPECT_EQ(faults(&d), d.dirtied) TH_LOG("txn %d", t);
			EXPECT_TIMED_EQ(faults(&d), d.bdp_fault_calls);
			EXPECT_TIMED_EQ(d.mkclean_calls, d.mkclean_ptes);
		} else if (nosync) {
			EXPECT_EQ(0, d.mkclean_calls) TH_LOG("txn %d", t);
		} else {
			EXPECT_EQ(0, faults(&d)) TH_LOG("txn %d", t);
			EXPECT_TIMED_EQ(0, d.bdp_fault_calls);
			EXPECT_LT(0, d.dirtied) TH_LOG("txn %d", t);
			EXPECT_EQ(d.dirtied, d.mkclean_calls) TH_LOG("txn %d", t);
			EXPECT_TIMED_EQ(0, d.mkclean_ptes);
		}
	}
	TH_LOG("%s: %d txns: last_pgno %zu -> %zu; first %lld wp %lld mkclean %lld dirtied %lld",
	       variant->flags == MDB_WRITEMAP ? "writemap" : nosync ? "nosync" : "pwrite",
	       TXNS, last0, last_pgno(self->env),
	       (long long)total.mkwrite_first, (long long)total.mkwrite_wp,
	       (long long)total.mkclean_calls, (long long)total.dirtied);

	if (writemap && !nosync)
		EXPECT_EQ((int64_t)last_pgno(self->env) - 1, total.mkwrite_first);
	if (nosync) {
		long dirty = smaps_dirty_pages(self->data);

		ASSERT_LT(0, dirty) TH_LOG("no dirty pages in smaps for %s", self->data);
		EXPECT_EQ(dirty, faults(&total));
		EXPECT_EQ(dirty, total.dirtied);
		EXPECT_TIMED_EQ(dirty, total.bdp_fault_calls);

		/* The application's own sync cleans them all. */
		ASSERT_EQ(0, wps_read(self->data, &before));
		MDB_OK(mdb_env_sync(self->env, 1));
		ASSERT_EQ(0, wps_read(self->data, &after));
		d = wps_delta(&after, &before);
		EXPECT_EQ(dirty, d.mkclean_calls);
		EXPECT_EQ(dirty, d.mkclean_msync);
		EXPECT_TIMED_EQ(dirty, d.mkclean_ptes);
		EXPECT_EQ(0, smaps_dirty_pages(self->data));

		/* Rewriting the first keys faults again, write-protected. */
		MDB_OK(put_txn(self->env, self->dbi, 0, PUTS, 'z'));
		ASSERT_EQ(0, wps_read(self->data, &before));
		d = wps_delta(&before, &after);
		dirty = smaps_dirty_pages(self->data);
		EXPECT_LT(0, d.mkwrite_wp);
		EXPECT_EQ(dirty, faults(&d));
		EXPECT_EQ(0, d.mkclean_calls);
		MDB_OK(mdb_env_sync(self->env, 1));
		ASSERT_EQ(0, wps_read(self->data, &after));
		d = wps_delta(&after, &before);
		EXPECT_EQ(dirty, d.mkclean_msync);
	}
	if (!writemap) {
		EXPECT_EQ(0, faults(&total));
		EXPECT_TIMED_EQ(0, total.bdp_fault_calls);
	}
}

/*
 * Rewriting the same PUTS keys, TXNS times after WARMUP transactions.
 * LMDB reuses the pages freed two transactions back (mdb_page_alloc()
 * takes free-list entries older than the oldest reader, here the last
 * committed transaction), so the file stops growing: last_pgno stays put.
 * With MDB_WRITEMAP every page a transaction writes was written and
 * cleaned before, so all its faults are write-protect faults (first-write
 * 0) and the commit cleans exactly them: wp == mkclean_msync.  This is
 * the cycle of the analysis: each commit's msync write-protects what the
 * next transaction must fault on again.  With pwrite() no faults at all;
 * with MDB_NOSYNC nothing is cleaned, and every reused page is still
 * writable from the warm-up: no fault and no mkclean.
 */
TEST_F(lmdb, rewrites)
{
	struct wps before, after, d;
	bool nosync = variant->flags & MDB_NOSYNC;
	size_t last;
	int t;

	for (t = 0; t < WARMUP; t++)
		MDB_OK(put_txn(self->env, self->dbi, 0, PUTS, 'a' + t));
	last = last_pgno(self->env);
	ASSERT_EQ(0, wps_read(self->data, &before));
	for (t = 0; t < TXNS; t++) {
		MDB_OK(put_txn(self->env, self->dbi, 0, PUTS, 'A' + t));
		ASSERT_EQ(0, wps_read(self->data, &after));
		d = wps_delta(&after, &before);
		before = after;
		EXPECT_EQ(last, last_pgno(self->env)) TH_LOG("txn %d: the file grew", t);
		EXPECT_EQ(0, d.mkwrite_first) TH_LOG("txn %d", t);
		if (variant->flags == MDB_WRITEMAP) {
			EXPECT_LT(0, d.mkwrite_wp) TH_LOG("txn %d", t);
			EXPECT_EQ(d.mkwrite_wp, d.mkclean_msync) TH_LOG("txn %d", t);
			EXPECT_EQ(d.mkwrite_wp, d.mkclean_calls) TH_LOG("txn %d", t);
		} else if (nosync) {
			EXPECT_EQ(0, d.mkclean_calls) TH_LOG("txn %d", t);
			EXPECT_EQ(0, d.mkwrite_wp) TH_LOG("txn %d", t);
		} else {
			EXPECT_EQ(0, d.mkwrite_wp) TH_LOG("txn %d", t);
		}
		if (t == TXNS - 1)
			TH_LOG("last txn: last_pgno %zu wp %lld mkclean %lld",
			       last, (long long)d.mkwrite_wp,
			       (long long)d.mkclean_calls);
	}
}

/* Write @value to /proc/sys/vm/@name: 0 or -errno. */
static int vm_sysctl(const char *name, const char *value)
{
	char path[128];
	int fd, rc = 0;

	snprintf(path, sizeof(path), "/proc/sys/vm/%s", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, value, strlen(value)) != (ssize_t)strlen(value))
		rc = -errno;
	close(fd);
	return rc;
}

/*
 * MDB_NOSYNC's other cleaner: the flusher.  With dirty_expire_centisecs
 * and dirty_writeback_centisecs at 100, wb_check_old_data_flush() writes
 * back the pages dirty for over a second (WB_REASON_PERIODIC): it cleans
 * exactly the mapping's dirty pages (smaps), all counted as
 * mkclean_flusher_periodic, and the next transaction write-protect
 * faults on the pages it writes again.  The sysctls are restored after.
 */
FIXTURE(nosync) {
	char dir[256];
	char data[300];
	MDB_env *env;
	MDB_dbi dbi;
};

FIXTURE_SETUP(nosync)
{
	ASSERT_TRUE(wps_loaded()) TH_LOG("wpstat module not loaded");
	ASSERT_EQ(0, open_env(_metadata->name, MDB_WRITEMAP | MDB_NOSYNC,
			      self->dir, sizeof(self->dir), self->data,
			      sizeof(self->data), &self->env, &self->dbi));
}

FIXTURE_TEARDOWN(nosync)
{
	close_env(self->env, self->dir, self->data);
}

TEST_F(nosync, flusher_cleans)
{
	char expire[32], interval[32];
	struct wps before, after, d;
	long dirty;
	int t, i;

	ASSERT_LT(0, wps_slurp("/proc/sys/vm/dirty_expire_centisecs",
			       expire, sizeof(expire)));
	ASSERT_LT(0, wps_slurp("/proc/sys/vm/dirty_writeback_centisecs",
			       interval, sizeof(interval)));
	for (t = 0; t < TXNS; t++)
		MDB_OK(put_txn(self->env, self->dbi, t * PUTS, PUTS, 'a'));
	dirty = smaps_dirty_pages(self->data);
	ASSERT_LT(0, dirty);
	ASSERT_EQ(0, wps_read(self->data, &before));
	ASSERT_EQ(0, vm_sysctl("dirty_expire_centisecs", "100"));
	ASSERT_EQ(0, vm_sysctl("dirty_writeback_centisecs", "100"));
	for (i = 0; i < 300; i++) {
		ASSERT_EQ(0, wps_read(self->data, &after));
		if (after.mkclean_calls - before.mkclean_calls >= dirty)
			break;
		usleep(100000);
	}
	vm_sysctl("dirty_expire_centisecs", expire);
	vm_sysctl("dirty_writeback_centisecs", interval);
	d = wps_delta(&after, &before);
	TH_LOG("flusher: %ld dirty pages, mkclean_flusher_periodic %lld",
	       dirty, (long long)d.mkclean_flusher_periodic);
	EXPECT_EQ(dirty, d.mkclean_calls);
	EXPECT_EQ(dirty, d.mkclean_flusher_periodic);
	EXPECT_EQ(0, smaps_dirty_pages(self->data));

	MDB_OK(put_txn(self->env, self->dbi, 0, PUTS, 'b'));
	ASSERT_EQ(0, wps_read(self->data, &before));
	d = wps_delta(&before, &after);
	EXPECT_LT(0, d.mkwrite_wp);
	EXPECT_EQ(smaps_dirty_pages(self->data), faults(&d));
}

TEST_HARNESS_MAIN
