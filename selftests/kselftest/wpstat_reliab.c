// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_reliab: the module stays right when files go away under it, under
 * many threads, against a hostile control file, and towards other users.
 *
 *   life.<fs>  a tracked file unlinked, truncated under a live mapping
 *              (SIGBUS), evicted and read back, and its inode number
 *              reused: rows keyed by (dev, ino, generation) keep their
 *              counts and are never merged.
 *   mt.<fs>    16 threads x 3 files of faults, msync and pwrite: each
 *              file's totals are the sum of what every thread did.
 *   rel.*      control-file fuzzing, non-root refusals, no kernel address
 *              in any output.
 *
 * WPSTAT_STRESS=1 (make stress) selects the long forms: more rounds, more
 * control writes, longer truncate races.  Runs as root in a guest with
 * wpstat.ko loaded and $WPSTAT_FS_DIR/{ext4,xfs,btrfs,tmpfs} mounted
 * (scripts/check/guest-check.sh).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <limits.h>
#include <dirent.h>
#include <grp.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <time.h>
#include <sys/klog.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "wpstat_test.h"
#include "kselftest_harness.h"

#define NPAGES		16
#define CONFIG_PATH	"/sys/kernel/debug/wpstat/config"

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

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -EIO;
}

/* Write back, then drop clean page cache, dentries and inodes. */
static int drop_caches(void)
{
	sync();
	return write_file("/proc/sys/vm/drop_caches", "3");
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

/*
 * Run @argv (as nobody if @nobody, from /) with stdout and stderr into
 * @out.  Returns the wait status, or -1.  Commands run as nobody must be
 * the copies in $WPSTAT_NOBODY_DIR (nobody_path()): the checkout may be
 * private.
 */
static int run_cmd(char *const argv[], bool nobody, char *out, size_t outlen)
{
	size_t len = 0;
	int p[2], status;
	ssize_t n;
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(p[0]);
		dup2(p[1], 1);
		dup2(p[1], 2);
		if (nobody && (drop_privileges() || chdir("/")))
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], out + len, outlen - 1 - len)) > 0)
		len += n;
	out[len] = '\0';
	close(p[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

static const char *wpstat_bin(void)
{
	static char path[512];
	const char *top = getenv("WPSTAT_TOP");

	if (!top)
		return "wpstat";
	snprintf(path, sizeof(path), "%s/build/bin/wpstat", top);
	return path;
}

/*
 * @name ("bin/wpstat", "wpstat.ko") in the 0755 copy of the tools that
 * scripts/vm/guest-run.sh makes for unprivileged runs; NULL if unset.
 */
static const char *nobody_path(const char *name, char *buf, size_t len)
{
	const char *dir = getenv("WPSTAT_NOBODY_DIR");

	if (!dir)
		return NULL;
	snprintf(buf, len, "%s/%s", dir, name);
	return buf;
}

/*
 * Whether nobody can reach the copies: a set-up that cannot give nobody
 * the tools must fail saying so, not as a mysterious exit 127.
 */
static bool nobody_can_use(const char *bin, const char *module)
{
	int status;
	pid_t pid;

	if (!bin || !module)
		return false;
	pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0)
		_exit(drop_privileges() || access(bin, X_OK) ||
		      access(module, R_OK));
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0;
}

#define ASSERT_NOBODY_CAN_USE(bin, module)				\
	ASSERT_TRUE(nobody_can_use(bin, module))			\
		TH_LOG("set-up: nobody cannot execute %s or read %s "	\
		       "(WPSTAT_NOBODY_DIR: run through scripts/vm/vm-run.sh)", \
		       bin ?: "$WPSTAT_NOBODY_DIR/bin/wpstat",		\
		       module ?: "$WPSTAT_NOBODY_DIR/wpstat.ko")

/* rmmod, retried while something holds a module file open (EBUSY). */
static int rmmod_retry(void)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (!system("rmmod wpstat 2>/dev/null"))
			return 0;
		usleep(100 * 1000);
	}
	return -1;
}

/* The current debugfs config: 0 or -errno. */
struct cfg {
	int enabled;
	char dev[32];
	char pid[32];
	char level[16];
};

static int read_config(struct cfg *c)
{
	struct wpstat_kvlist l;
	const char *e, *d, *p, *lv;
	int ret = wpstat_kv_read(CONFIG_PATH, &l);

	if (ret)
		return ret;
	e = wpstat_kv_get(&l, "enabled");
	d = wpstat_kv_get(&l, "filter_dev");
	p = wpstat_kv_get(&l, "filter_pid");
	lv = wpstat_kv_get(&l, "level");
	if (!e || !d || !p || !lv || (strcmp(e, "0") && strcmp(e, "1"))) {
		wpstat_kv_free(&l);
		return -EPROTO;
	}
	c->enabled = !strcmp(e, "1");
	snprintf(c->dev, sizeof(c->dev), "%s", d);
	snprintf(c->pid, sizeof(c->pid), "%s", p);
	snprintf(c->level, sizeof(c->level), "%s", lv);
	wpstat_kv_free(&l);
	return 0;
}

/* ---- life: files unlinked, truncated, evicted, reused ------------------- */

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
 */
#define EXPECT_PWRITE_CALLS(writes, calls) do {				\
		if (variant->pwrite_inexact) {				\
			EXPECT_LE((int64_t)(writes), (calls));		\
			EXPECT_GE(2 * (int64_t)(writes), (calls));	\
		} else {						\
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
TEST_F_TIMEOUT(life, unlink_while_tracked, 60)
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
	ASSERT_EQ(0, drop_caches());
	ASSERT_EQ(1, ino_rows(&key, key.have_gen, rows, gen, 2));
	ASSERT_EQ(0, wps_read_key(&key, &c));
	expect_same_counts(_metadata, &b, &c);
}

/*
 * ftruncate under a live shared mapping: a store beyond the new EOF gets
 * SIGBUS from the fault handler (filemap_fault / shmem_fault) before any
 * ->page_mkwrite; the PTEs below EOF keep counting as before, and pages
 * brought back by extending the file are first writes again.
 */
TEST_F_TIMEOUT(life, truncate_under_mapping_sigbus, 60)
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
		EXPECT_EQ(b.mkwrite_first + b.mkwrite_wp, b.bdp_fault_calls);
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
TEST_F_TIMEOUT(life, truncate_races_faults, 120)
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
		EXPECT_GE(w.mkwrite_first + w.mkwrite_wp, w.bdp_fault_calls);
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
TEST_F_TIMEOUT(life, evicted_and_reread_same_row, 60)
{
	const int64_t n = variant->has_mkwrite ? NPAGES : 0;
	struct wpstat_file_key k1, k2;
	struct wps w, rows[2];
	uint32_t gen[2];

	ASSERT_EQ(0, wpstat_fd_key(self->fd, &k1));
	ASSERT_EQ(0, mmap_and_pwrite_pass(self->fd, 1));
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, drop_caches());

	self->fd = open(self->path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	if (variant->evictable)
		EXPECT_EQ(0, resident_pages(self->fd, NPAGES))
			TH_LOG("drop_caches left pages of %s cached", self->path);
	ASSERT_EQ(0, wpstat_fd_key(self->fd, &k2));
	EXPECT_EQ(k1.major, k2.major);
	EXPECT_EQ(k1.minor, k2.minor);
	EXPECT_EQ(k1.ino, k2.ino);
	EXPECT_EQ(k1.gen, k2.gen);

	ASSERT_EQ(0, mmap_and_pwrite_pass(self->fd, 2));
	ASSERT_EQ(1, ino_rows(&k2, k2.have_gen, rows, gen, 2))
		TH_LOG("the file has several rows");
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
TEST_F_TIMEOUT(life, reused_inode_number_gets_own_row, 90)
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

/* ---- mt: 16 threads x 3 files, exact per-file sums ---------------------- */

#define MT_THREADS	16
#define MT_FILES	3
#define MT_SLOT		16	/* pages per thread per file: 64 KiB apart */
#define MT_PWRITE_AT	10	/* its pwrite pages start here in its slot */

/* What thread @t does per file and round: K mapped pages, J pwrites. */
static int mt_k(int t)
{
	return 1 + t % 8;
}

static int mt_j(int t)
{
	return 1 + t % 3;
}

struct mt_shared {
	pthread_barrier_t start;
	int fd[MT_FILES];
	char *map[MT_FILES];
	int rounds;
};

struct mt_thread {
	struct mt_shared *sh;
	pthread_t th;
	int t;
	int err;
};

/*
 * Per round and file: store once to each of its K pages (a fault each:
 * a first write in round 1, a write-protect fault after), pwrite its J
 * pages, msync its own pages.
 */
static void *mt_worker(void *arg)
{
	struct mt_thread *me = arg;
	struct mt_shared *sh = me->sh;
	size_t slot = (size_t)me->t * MT_SLOT;
	int r, f;

	pthread_barrier_wait(&sh->start);
	for (r = 0; r < sh->rounds && !me->err; r++) {
		for (f = 0; f < MT_FILES && !me->err; f++) {
			char *mine = sh->map[f] + slot * PAGE;

			wps_store_pages(mine, mt_k(me->t), r + 1);
			me->err = pwrite_pages(sh->fd[f], slot + MT_PWRITE_AT,
					       mt_j(me->t), r);
			if (!me->err && msync(mine, mt_k(me->t) * PAGE, MS_SYNC))
				me->err = -errno;
		}
	}
	return NULL;
}

FIXTURE(mt) {
	char path[MT_FILES][256];
	struct mt_shared sh;
};

/*
 * faults_exact: msync writes back only the range asked for
 * (ext4_sync_file and xfs_file_fsync -> file_write_and_wait_range), so
 * nobody cleans another thread's pages and every round costs each page
 * exactly one fault.  btrfs_sync_file widens every fsync to the whole
 * file, so a thread may clean a page between another thread's fault and
 * the retried store, which then faults again: the sum is a lower bound
 * there, and the invariants below still hold exactly.
 * pwrite_exact: one balance_dirty_pages_ratelimited call per page-sized
 * pwrite (generic_perform_write).  Not with writeback running elsewhere in
 * the file: iomap_write_begin finds the cached mapping stale
 * (xfs_iomap_valid: the extent sequence moved) and iomap_write_iter
 * calls it again for the same bytes; btrfs_buffered_write goes back to
 * "again:", before the call, when lock_and_cleanup_extent meets an
 * ordered extent.  There it is a lower bound.
 */
FIXTURE_VARIANT(mt) {
	const char *fs;
	bool faults_exact;
	bool pwrite_exact;
};

FIXTURE_VARIANT_ADD(mt, ext4) {
	.fs = "ext4", .faults_exact = true, .pwrite_exact = true,
};
FIXTURE_VARIANT_ADD(mt, xfs) {
	.fs = "xfs", .faults_exact = true, .pwrite_exact = false,
};
FIXTURE_VARIANT_ADD(mt, btrfs) {
	.fs = "btrfs", .faults_exact = false, .pwrite_exact = false,
};

FIXTURE_SETUP(mt)
{
	size_t len = MT_THREADS * MT_SLOT * PAGE;
	char name[16];
	int f;

	for (f = 0; f < MT_FILES; f++) {
		self->sh.fd[f] = -1;
		self->sh.map[f] = NULL;
	}
	ASSERT_TRUE(wps_loaded()) TH_LOG("wpstat is not loaded");
	ASSERT_EQ(0, wps_control("filter none"));
	ASSERT_EQ(0, wps_control("enable"));
	for (f = 0; f < MT_FILES; f++) {
		snprintf(name, sizeof(name), "mt%d", f);
		self->sh.fd[f] = wps_scratch(variant->fs, name,
					     MT_THREADS * MT_SLOT,
					     self->path[f], sizeof(self->path[f]));
		ASSERT_LE(0, self->sh.fd[f]);
		self->sh.map[f] = map_shared(self->sh.fd[f], MT_THREADS * MT_SLOT);
		ASSERT_NE(NULL, self->sh.map[f]);
		/* No readahead: order-0 folios, none shared by two threads. */
		ASSERT_EQ(0, madvise(self->sh.map[f], len, MADV_RANDOM));
	}
}

FIXTURE_TEARDOWN(mt)
{
	int f;

	for (f = 0; f < MT_FILES; f++) {
		if (self->sh.map[f])
			munmap(self->sh.map[f], MT_THREADS * MT_SLOT * PAGE);
		if (self->sh.fd[f] >= 0)
			close(self->sh.fd[f]);
		unlink(self->path[f]);
	}
}

TEST_F_TIMEOUT(mt, threads_sum_exactly, 300)
{
	struct mt_thread th[MT_THREADS];
	struct wpstat_file_key key[MT_FILES];
	struct wps base[MT_FILES], now, d;
	int64_t k_sum = 0, j_sum = 0, faults;
	int t, f, rounds = wps_stress() ? 16 : 4;

	for (t = 0; t < MT_THREADS; t++) {
		k_sum += mt_k(t);
		j_sum += mt_j(t);
	}
	/* Cache each pwrite page first: every later pwrite finds it. */
	for (f = 0; f < MT_FILES; f++) {
		for (t = 0; t < MT_THREADS; t++)
			ASSERT_EQ(0, pwrite_pages(self->sh.fd[f],
						  t * MT_SLOT + MT_PWRITE_AT,
						  mt_j(t), 0));
		ASSERT_EQ(0, fsync(self->sh.fd[f]));
		ASSERT_EQ(0, wpstat_fd_key(self->sh.fd[f], &key[f]));
		ASSERT_EQ(0, wps_read_key(&key[f], &base[f]));
	}

	self->sh.rounds = rounds;
	ASSERT_EQ(0, pthread_barrier_init(&self->sh.start, NULL, MT_THREADS));
	for (t = 0; t < MT_THREADS; t++) {
		th[t] = (struct mt_thread){ .sh = &self->sh, .t = t };
		ASSERT_EQ(0, pthread_create(&th[t].th, NULL, mt_worker, &th[t]));
	}
	for (t = 0; t < MT_THREADS; t++) {
		ASSERT_EQ(0, pthread_join(th[t].th, NULL));
		EXPECT_EQ(0, th[t].err) TH_LOG("thread %d failed", t);
	}
	pthread_barrier_destroy(&self->sh.start);

	for (f = 0; f < MT_FILES; f++) {
		ASSERT_EQ(0, msync(self->sh.map[f], MT_THREADS * MT_SLOT * PAGE,
				   MS_SYNC));
		ASSERT_EQ(0, wps_read_key(&key[f], &now));
		d = wps_delta(&now, &base[f]);
		faults = d.mkwrite_first + d.mkwrite_wp;
		TH_LOG("file %d: %lld first, %lld wp (threads did %lld stores)",
		       f, (long long)d.mkwrite_first, (long long)d.mkwrite_wp,
		       (long long)(k_sum * rounds));
		/* A mapping's page takes one first write, ever. */
		EXPECT_EQ(k_sum, d.mkwrite_first);
		if (variant->faults_exact) {
			EXPECT_EQ(k_sum * (rounds - 1), d.mkwrite_wp);
		} else {
			EXPECT_LE(k_sum * (rounds - 1), d.mkwrite_wp);
		}
		/* Each fault makes one PTE writable, cleaned once by msync. */
		EXPECT_TIMED_EQ(faults, d.mkclean_ptes);
		EXPECT_EQ(faults, d.bdp_fault_calls);
		/* One ratelimited call per fault and per page-sized pwrite. */
		if (variant->pwrite_exact) {
			EXPECT_EQ(faults + j_sum * rounds, d.bdp_calls);
		} else {
			EXPECT_LE(faults + j_sum * rounds, d.bdp_calls);
		}
	}
}

/* ---- rel: control fuzzing, permissions, kernel addresses ---------------- */

FIXTURE(rel) {
	pid_t kids[16];
	int nkids;
	char probe[256];
	int probe_fd;
};

FIXTURE_SETUP(rel)
{
	self->nkids = 0;
	self->probe_fd = -1;
	ASSERT_TRUE(wps_loaded()) TH_LOG("wpstat is not loaded");
	ASSERT_EQ(0, wps_control("filter none"));
	ASSERT_EQ(0, wps_control("enable"));
	self->probe_fd = wps_scratch("ext4", "rel", NPAGES, self->probe,
				     sizeof(self->probe));
	ASSERT_LE(0, self->probe_fd);
}

FIXTURE_TEARDOWN(rel)
{
	int i;

	for (i = 0; i < self->nkids; i++) {
		if (self->kids[i] <= 0)
			continue;
		kill(self->kids[i], SIGKILL);
		waitpid(self->kids[i], NULL, 0);
	}
	if (!wps_loaded() && system("insmod \"$WPSTAT_MODULE\""))
		TH_LOG("could not load the module back");
	wps_control("filter none");
	wps_control("enable");
	if (self->probe_fd >= 0)
		close(self->probe_fd);
	unlink(self->probe);
}

/*
 * A model of the control parser (wpstat_debugfs.c), to predict each write's
 * result.  Expectations: 0 (success), EINVAL, ESRCH and FZ_PID (a well-formed
 * pid whose existence the writer does not know: success or ESRCH); FZ_ANY
 * (success or EINVAL) is left for what the model cannot predict, today
 * nothing: device numbers are read with kstrtouint, which refuses what
 * does not fit instead of wrapping.  Only printable ASCII and tabs, and one final
 * newline, pass: not Latin-1, where 0xa0 is printable and a space.
 */
#define FZ_PID		-1
#define FZ_ANY		-2
#define FZ_MAX		(4096 + 16)	/* WPSTAT_CONTROL_MAX: PATH_MAX + 16 */
#define FZ_BUF		8192

enum fz_cmd {
	C_NONE, C_RESET, C_ENABLE, C_DISABLE, C_FNONE, C_FDEV_NONE,
	C_FPID_NONE, C_FDEV, C_FPID, C_LEVEL,
};

struct fz_verdict {
	int expect;
	enum fz_cmd cmd;
	unsigned int major, minor;
	long pid;
	int timing;		/* C_LEVEL: 1 for timing, 0 for counts */
};

/* Pids a writer knows to exist or not to. */
struct fz_ctx {
	long alive[3];
	long dead[2];
};

static bool fz_kspace(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static bool fz_digits(const char *s, size_t *n)
{
	*n = strspn(s, "0123456789");
	return *n > 0;
}

/* The @n digits at @s as kstrtouint() reads them: false on overflow. */
static bool fz_u32(const char *s, size_t n, unsigned int *out)
{
	unsigned long long v = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		v = v * 10 + (s[i] - '0');
		if (v > UINT_MAX)
			return false;
	}
	*out = v;
	return true;
}

static struct fz_verdict fz_model(const char *buf, size_t len,
				  const struct fz_ctx *ctx)
{
	struct fz_verdict v = { .expect = EINVAL, .cmd = C_NONE };
	char s[FZ_MAX + 1], *p, *end, *words[4], *w;
	int n = 0;
	size_t i;

	if (len == 0 || len > FZ_MAX)
		return v;
	for (i = 0; i < len; i++) {
		unsigned char c = buf[i];

		if (c == '\n' && i == len - 1)
			break;
		if (c != '\t' && (c < 0x20 || c > 0x7e))
			return v;
	}
	memcpy(s, buf, len);
	s[len] = '\0';
	for (end = s + len; end > s && fz_kspace(end[-1]); end--)
		;
	*end = '\0';
	for (p = s; fz_kspace(*p); p++)
		;
	while ((w = strsep(&p, " \t")) != NULL) {
		if (!*w)
			continue;
		if (n == 4)
			return v;
		words[n++] = w;
	}
	if (n == 1 && !strcmp(words[0], "reset"))
		v.cmd = C_RESET;
	else if (n == 1 && !strcmp(words[0], "enable"))
		v.cmd = C_ENABLE;
	else if (n == 1 && !strcmp(words[0], "disable"))
		v.cmd = C_DISABLE;
	else if (n == 2 && !strcmp(words[0], "filter") && !strcmp(words[1], "none"))
		v.cmd = C_FNONE;
	else if (n == 2 && !strcmp(words[0], "level") &&
		 (!strcmp(words[1], "counts") || !strcmp(words[1], "timing"))) {
		v.cmd = C_LEVEL;
		v.timing = !strcmp(words[1], "timing");
	}
	if (v.cmd != C_NONE) {
		v.expect = 0;
		return v;
	}
	if (n != 3 || strcmp(words[0], "filter"))
		return v;
	if (!strcmp(words[1], "dev")) {
		size_t a, b;
		char *colon;

		if (!strcmp(words[2], "none")) {
			v.cmd = C_FDEV_NONE;
			v.expect = 0;
			return v;
		}
		/* Digits, a colon, digits, nothing more; kstrtouint each. */
		colon = words[2] + strspn(words[2], "0123456789");
		if (!fz_digits(words[2], &a) || *colon != ':' ||
		    !fz_digits(colon + 1, &b) || colon[1 + b])
			return v;
		if (!fz_u32(words[2], a, &v.major) ||
		    !fz_u32(colon + 1, b, &v.minor))
			return v;	/* kstrtouint: -ERANGE */
		if (v.major >= 1U << 12 || v.minor >= 1U << 20 ||
		    (!v.major && !v.minor))
			return v;
		v.cmd = C_FDEV;
		v.expect = 0;
		return v;
	}
	if (!strcmp(words[1], "pid")) {
		const char *d = words[2];
		size_t nd;

		if (!strcmp(d, "none")) {
			v.cmd = C_FPID_NONE;
			v.expect = 0;
			return v;
		}
		/* kstrtoint(, 10): an optional sign, digits, nothing more. */
		if (*d == '+' || *d == '-')
			d++;
		if (!fz_digits(d, &nd) || d[nd] || words[2][0] == '-')
			return v;
		d += strspn(d, "0");
		if (strlen(d) > 10)	/* -ERANGE */
			return v;
		v.pid = strtol(d, NULL, 10);
		if (v.pid <= 0 || v.pid > 0x7fffffff)
			return v;
		v.cmd = C_FPID;
		v.expect = FZ_PID;
		for (i = 0; i < 3; i++)
			if (ctx->alive[i] && v.pid == ctx->alive[i])
				v.expect = 0;
		for (i = 0; i < 2; i++)
			if (ctx->dead[i] && v.pid == ctx->dead[i])
				v.expect = ESRCH;
		return v;
	}
	return v;
}

static bool fz_accepts(int expect, int err)
{
	switch (expect) {
	case FZ_PID:
		return err == 0 || err == ESRCH;
	case FZ_ANY:
		return err == 0 || err == EINVAL || err == ESRCH;
	default:
		return err == expect;
	}
}

static uint64_t fz_next(uint64_t *s)	/* xorshift64* */
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

#define FZ_RND(s, n)	((size_t)(fz_next(s) % (n)))

static size_t fz_seps(uint64_t *r, char *b, size_t max)
{
	size_t n = FZ_RND(r, 3), i;

	for (i = 0; i < n && i < max; i++)
		b[i] = FZ_RND(r, 3) ? ' ' : '\t';
	return i;
}

/* A filter's value: "none" 1 in 6, @rare 1 in 6, else @common. */
static void fz_filter_value(uint64_t *r, char w[24], const char *rare,
			    const char *common)
{
	switch (FZ_RND(r, 6)) {
	case 0:
		strcpy(w, "none");
		break;
	case 1:
		strcpy(w, rare);
		break;
	default:
		strcpy(w, common);
	}
}

/* A command the module accepts (or ESRCH for a known-dead pid). */
static size_t fz_valid(uint64_t *r, char *b, const struct fz_ctx *ctx)
{
	char w[3][24], rare[24], common[24];
	size_t len = 0;
	int n = 1, i;

	switch (FZ_RND(r, 16)) {
	case 0:
		/* Rarely a level switch: each one waits for RCU-tasks. */
		if (!FZ_RND(r, 4)) {
			strcpy(w[0], "level");
			strcpy(w[1], FZ_RND(r, 2) ? "timing" : "counts");
			n = 2;
			break;
		}
		strcpy(w[0], FZ_RND(r, 8) ? "enable" : "reset");
		break;
	case 1: case 2:
		strcpy(w[0], "enable");
		break;
	case 3: case 4:
		strcpy(w[0], "disable");
		break;
	case 5:
		strcpy(w[0], "filter");
		strcpy(w[1], "none");
		n = 2;
		break;
	case 6: case 7: case 8: case 9:
		strcpy(w[0], "filter");
		strcpy(w[1], "dev");
		n = 3;
		snprintf(rare, sizeof(rare), "%s",
			 FZ_RND(r, 2) ? "4095:1048575" : "0:1");
		snprintf(common, sizeof(common), "%zu:%zu",
			 1 + FZ_RND(r, 4095), FZ_RND(r, 1 << 20));
		fz_filter_value(r, w[2], rare, common);
		break;
	default:
		strcpy(w[0], "filter");
		strcpy(w[1], "pid");
		n = 3;
		snprintf(rare, sizeof(rare), "%ld",
			 ctx->dead[FZ_RND(r, 2)] ?: ctx->dead[0]);
		snprintf(common, sizeof(common), "%ld",
			 ctx->alive[FZ_RND(r, 3)] ?: ctx->alive[0]);
		fz_filter_value(r, w[2], rare, common);
	}
	len += fz_seps(r, b + len, 2);
	for (i = 0; i < n; i++) {
		if (i)
			b[len++] = ' ';
		len += fz_seps(r, b + len, 2);
		memcpy(b + len, w[i], strlen(w[i]));
		len += strlen(w[i]);
	}
	len += fz_seps(r, b + len, 2);
	if (FZ_RND(r, 2))
		b[len++] = '\n';
	return len;
}

/* One fuzz write's bytes into @b (FZ_BUF long): its length. */
static size_t fz_gen(uint64_t *r, char *b, const struct fz_ctx *ctx)
{
	static const char near[] = " \t\n:+-0123456789abcdefilnoprstuvxz";
	static const unsigned char odd[] = {
		0, '\n', '\t', '\r', 0x7f, 0x80, 0x85, 0x9f, 0xa0, 0xff, ':',
		' ', '-', '+', '9',
	};
	size_t len, i;

	switch (FZ_RND(r, 20)) {
	case 0: case 1: case 2: case 3: case 4: case 5:	/* valid */
		return fz_valid(r, b, ctx);
	case 6: case 7:		/* near misses: the parser's own alphabet */
		len = 1 + FZ_RND(r, FZ_MAX);
		for (i = 0; i < len; i++)
			b[i] = near[FZ_RND(r, sizeof(near) - 1)];
		return len;
	case 8:			/* any printable */
		len = 1 + FZ_RND(r, FZ_MAX);
		for (i = 0; i < len; i++)
			b[i] = 0x20 + FZ_RND(r, 0x5f);
		return len;
	case 9:			/* binary */
		len = FZ_RND(r, 100);
		for (i = 0; i < len; i++)
			b[i] = fz_next(r);
		return len;
	case 10: case 11:	/* partial command */
		len = fz_valid(r, b, ctx);
		return len > 1 ? 1 + FZ_RND(r, len - 1) : len;
	case 12:		/* NUL inside or after a command */
		len = fz_valid(r, b, ctx);
		i = FZ_RND(r, len + 1);
		memmove(b + i + 1, b + i, len - i);
		b[i] = '\0';
		return len + 1;
	case 13: case 14: case 15:	/* mutated command */
		len = fz_valid(r, b, ctx);
		for (i = 1 + FZ_RND(r, 2); i > 0; i--) {
			size_t at = FZ_RND(r, len);
			unsigned char c = FZ_RND(r, 2) ? odd[FZ_RND(r, sizeof(odd))] :
					  near[FZ_RND(r, sizeof(near) - 1)];

			switch (FZ_RND(r, 3)) {
			case 0:
				b[at] = c;
				break;
			case 1:
				memmove(b + at + 1, b + at, len - at);
				b[at] = c;
				len++;
				break;
			default:
				if (len > 1) {
					memmove(b + at, b + at + 1, len - at - 1);
					len--;
				}
			}
		}
		return len;
	case 16:		/* a command padded to exactly 64 or 65 bytes */
		len = fz_valid(r, b, ctx);
		if (b[len - 1] == '\n')
			len--;
		i = FZ_RND(r, 2) ? FZ_MAX : FZ_MAX + 1;
		memset(b + len, ' ', i - len);
		return i;
	case 17:		/* overlong, a quarter far over */
		len = FZ_RND(r, 4) ? FZ_MAX + 1 + FZ_RND(r, 64) :
		      FZ_MAX + 1 + FZ_RND(r, FZ_BUF - FZ_MAX - 1);
		i = fz_valid(r, b, ctx);
		memset(b + i, FZ_RND(r, 2) ? ' ' : 'a', len - i);
		return len;
	default:		/* Latin-1 around a command: 0xa0 is a space there */
		len = fz_valid(r, b + 1, ctx) + 1;
		b[0] = FZ_RND(r, 2) ? 0xa0 : 0xe9;
		b[len++] = 0xa0;
		return len;
	}
}

/* One write: 0 or the errno; EIO for a short write. */
static int fz_write(int fd, const char *b, size_t len)
{
	ssize_t n = write(fd, b, len);

	if (n < 0)
		return errno;
	return n == (ssize_t)len ? 0 : EIO;
}

static void fz_describe(char *out, size_t outlen, const char *b, size_t len,
			int expect, int got)
{
	size_t i, o;

	o = snprintf(out, outlen, "len %zu expect %d got %d: '", len, expect,
		     got);
	for (i = 0; i < len && i < 80 && o + 5 < outlen; i++) {
		unsigned char c = b[i];

		o += snprintf(out + o, outlen - o,
			      isprint(c) && c != '\\' ? "%c" : "\\x%02x", c);
	}
	if (o + 2 < outlen)
		snprintf(out + o, outlen - o, "'");
}

/* What the model says the config now is. */
struct fz_state {
	int enabled;
	unsigned int major, minor;	/* 0:0 none */
	long pid;			/* 0 none */
	int timing;			/* level */
};

static void fz_apply(struct fz_state *st, const struct fz_verdict *v)
{
	switch (v->cmd) {
	case C_ENABLE:
		st->enabled = 1;
		break;
	case C_DISABLE:
		st->enabled = 0;
		break;
	case C_FNONE:
		st->major = st->minor = 0;
		st->pid = 0;
		break;
	case C_FDEV_NONE:
		st->major = st->minor = 0;
		break;
	case C_FPID_NONE:
		st->pid = 0;
		break;
	case C_FDEV:
		st->major = v->major;
		st->minor = v->minor;
		break;
	case C_FPID:
		st->pid = v->pid;
		break;
	case C_LEVEL:
		st->timing = v->timing;
		break;
	default:
		break;
	}
}

/* 0 if the config equals @st, else -1 with the difference in @why. */
static int fz_compare(const struct fz_state *st, char *why, size_t len)
{
	char dev[32], pid[32];
	struct cfg c;

	if (read_config(&c)) {
		snprintf(why, len, "config unreadable or malformed");
		return -1;
	}
	if (st->major || st->minor)
		snprintf(dev, sizeof(dev), "%u:%u", st->major, st->minor);
	else
		strcpy(dev, "none");
	if (st->pid)
		snprintf(pid, sizeof(pid), "%ld", st->pid);
	else
		strcpy(pid, "none");
	if (c.enabled == st->enabled && !strcmp(c.dev, dev) &&
	    !strcmp(c.pid, pid) &&
	    !strcmp(c.level, st->timing ? "timing" : "counts"))
		return 0;
	snprintf(why, len,
		 "config enabled %d dev %s pid %s level %s, model %d %s %s %s",
		 c.enabled, c.dev, c.pid, c.level, st->enabled, dev, pid,
		 st->timing ? "timing" : "counts");
	return -1;
}

/* The model's state from the config, after a write it could not predict. */
static int fz_resync(struct fz_state *st)
{
	struct cfg c;

	if (read_config(&c))
		return -1;
	st->enabled = c.enabled;
	st->timing = !strcmp(c.level, "timing");
	st->major = st->minor = 0;
	st->pid = 0;
	if (strcmp(c.dev, "none") &&
	    sscanf(c.dev, "%u:%u", &st->major, &st->minor) != 2)
		return -1;
	if (strcmp(c.pid, "none") && sscanf(c.pid, "%ld", &st->pid) != 1)
		return -1;
	return 0;
}

static long fz_dead_pid(void)
{
	long p;

	for (p = 4194303; p > 1000; p--)
		if (kill(p, 0) && errno == ESRCH)
			return p;
	return 0;
}

static uint64_t fz_seed(void)
{
	const char *s = getenv("WPSTAT_FUZZ_SEED");
	struct timespec ts;

	if (s && *s)
		return strtoull(s, NULL, 0) ?: 1;
	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec << 20) ^ ts.tv_nsec ^ getpid();
}

/* Shared with the concurrent writers, reader and workload. */
struct fz_shared {
	volatile int stop;
	long writes, bad, reader_errors, reader_reads, touches;
	int first;
	char why[512];
};

static void fz_report(struct fz_shared *sh, const char *b, size_t len,
		      int expect, int got)
{
	__atomic_add_fetch(&sh->bad, 1, __ATOMIC_SEQ_CST);
	if (!__atomic_exchange_n(&sh->first, 1, __ATOMIC_SEQ_CST))
		fz_describe(sh->why, sizeof(sh->why), b, len, expect, got);
}

struct fz_writer {
	struct fz_shared *sh;
	int fd;
	long count;
	uint64_t seed;
	struct fz_ctx ctx;
};

/* A concurrent writer: each result must be one the model allows. */
static void *fz_writer_thread(void *arg)
{
	struct fz_writer *wr = arg;
	static __thread char b[FZ_BUF + 2];
	uint64_t r = wr->seed;
	long i;

	for (i = 0; i < wr->count; i++) {
		size_t len = fz_gen(&r, b, &wr->ctx);
		struct fz_verdict v = fz_model(b, len, &wr->ctx);
		int got = fz_write(wr->fd, b, len);

		__atomic_add_fetch(&wr->sh->writes, 1, __ATOMIC_SEQ_CST);
		if (!fz_accepts(v.expect, got))
			fz_report(wr->sh, b, len, v.expect, got);
	}
	return NULL;
}

/* A process of two writer threads sharing one open control file. */
static void fz_writer_proc(struct fz_shared *sh, long count, uint64_t seed,
			   long parent)
{
	struct fz_writer wr[2];
	pthread_t th[2];
	int fd = open(WPSTAT_CONTROL_PATH, O_WRONLY | O_CLOEXEC);
	int i;

	if (fd < 0)
		_exit(2);
	for (i = 0; i < 2; i++) {
		wr[i] = (struct fz_writer){
			.sh = sh, .fd = fd, .count = count / 2 + (i ? count % 2 : 0),
			.seed = seed * 2 + i + 1,
			.ctx = { .alive = { getpid(), parent, 1 },
				 .dead = { fz_dead_pid(), 0 } },
		};
		if (pthread_create(&th[i], NULL, fz_writer_thread, &wr[i]))
			_exit(3);
	}
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	_exit(0);
}

/* Reads every module file while the writers run; counts what fails. */
static void fz_reader_proc(struct fz_shared *sh)
{
	static const char *const debugfs[] = {
		CONFIG_PATH, "/sys/kernel/debug/wpstat/probes",
		"/sys/kernel/debug/wpstat/histograms",
	};
	static char buf[65536];
	struct wpstat_snapshot s;
	struct wpstat_kvlist l;
	struct cfg c;
	size_t i;

	while (!sh->stop) {
		if (wpstat_snapshot_read(NULL, &s)) {
			sh->reader_errors++;
		} else {
			if (s.ncounters < (int)WPS_N)
				sh->reader_errors++;
			wpstat_snapshot_free(&s);
		}
		if (wpstat_kv_read(WPSTAT_SUMMARY_PATH, &l)) {
			sh->reader_errors++;
		} else {
			if (!wpstat_kv_get(&l, "tracked_inodes"))
				sh->reader_errors++;
			wpstat_kv_free(&l);
		}
		if (read_config(&c))
			sh->reader_errors++;
		for (i = 0; i < 3; i++)
			if (wps_slurp(debugfs[i], buf, sizeof(buf)) <= 0)
				sh->reader_errors++;
		sh->reader_reads++;
	}
	_exit(0);
}

/* Faults and writeback on a file while filters flip under them. */
static void fz_workload_proc(struct fz_shared *sh, int fd)
{
	while (!sh->stop) {
		if (touch_file(fd, NPAGES))
			_exit(1);
		sh->touches++;
	}
	_exit(0);
}

/* A thread that waits, so that its id is alive but not a process's. */
struct park {
	int pipe[2];
	long tid;
};

static void *park_thread(void *arg)
{
	struct park *p = arg;
	char c;

	__atomic_store_n(&p->tid, syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	if (read(p->pipe[0], &c, 1) < 0)
		return NULL;
	return NULL;
}

/*
 * 10,000 control writes (100,000 with WPSTAT_STRESS): valid commands with
 * random blanks, near misses, printable and binary garbage, partial
 * commands, NUL bytes, mutations, commands padded to 64 and 65 bytes,
 * writes over 64 bytes and over 4 KiB, and Latin-1 bytes (0xa0 is a
 * space to the kernel's ctype: "\xa0disable" once disabled counting).  First 40% from one writer with a model of the config checked
 * every 16 writes, each write's result predicted exactly; then the rest
 * from 4 processes x 2 threads at once (one fd per process) while a reader
 * reads every module file and a workload faults.  Afterwards the config
 * follows valid commands again, counting works, and the ~0.3% of writes
 * that were "reset" freed every old table (vmallocinfo).
 */
TEST_F_TIMEOUT(rel, control_fuzz, 600)
{
	const long total = wps_stress() ? 100000 : 10000;
	const long seq = total * 4 / 10, conc = total - seq;
	uint64_t seed = fz_seed(), r = seed;
	static char b[FZ_BUF + 2];
	struct fz_state st = { .enabled = 1, .timing = wps_timing() == 1 };
	struct fz_shared *sh;
	struct fz_ctx ctx = { 0 };
	char why[256], cmd[64];
	long i, resets = 0, bad = 0;
	int fd, areas, status, k, timing;
	struct park park = { 0 };
	pthread_t parked;
	struct cfg c;
	struct wps w;

	TH_LOG("seed %#llx (WPSTAT_FUZZ_SEED to repeat), %ld writes",
	       (unsigned long long)seed, total);
	areas = wpstat_vmalloc_areas();
	ASSERT_LT(0, areas) TH_LOG("no [wpstat] area in /proc/vmallocinfo");
	ctx.alive[0] = getpid();
	ctx.alive[1] = 1;
	ctx.alive[2] = getppid();
	ctx.dead[0] = fz_dead_pid();
	/* A live thread's id names no process: ESRCH. */
	ASSERT_EQ(0, pipe(park.pipe));
	ASSERT_EQ(0, pthread_create(&parked, NULL, park_thread, &park));
	while (!__atomic_load_n(&park.tid, __ATOMIC_SEQ_CST))
		usleep(1000);
	ctx.dead[1] = park.tid;
	ASSERT_NE(0, ctx.dead[0]);
	ASSERT_EQ(0, fz_compare(&st, why, sizeof(why))) TH_LOG("%s", why);
	/* Latin-1: 0xa0 is printable and a space to the kernel's ctype. */
	EXPECT_EQ(-EINVAL, wps_control("\xa0" "disable"));
	EXPECT_EQ(-EINVAL, wps_control("enable\xa0"));
	EXPECT_EQ(-EINVAL, wps_control("filter\xa0none"));
	ASSERT_EQ(0, fz_compare(&st, why, sizeof(why))) TH_LOG("%s", why);
	ASSERT_EQ(0, touch_file(self->probe_fd, NPAGES));

	/* Sequential: every result and the resulting state predicted. */
	fd = open(WPSTAT_CONTROL_PATH, O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	for (i = 0; i < seq; i++) {
		size_t len = fz_gen(&r, b, &ctx);
		struct fz_verdict v = fz_model(b, len, &ctx);
		int got = fz_write(fd, b, len);

		if (!fz_accepts(v.expect, got)) {
			fz_describe(why, sizeof(why), b, len, v.expect, got);
			if (bad++ < 5)
				TH_LOG("write %ld: %s", i, why);
		}
		if (!got && v.expect == FZ_ANY) {
			ASSERT_EQ(0, fz_resync(&st));
		} else if (!got) {
			fz_apply(&st, &v);
		}
		if (!got && v.cmd == C_RESET) {
			resets++;
			EXPECT_EQ(0, wps_summary("mkwrite_first") +
				  wps_summary("mkclean_calls"))
				TH_LOG("reset left counts");
		}
		if (i % 16 == 15 || i == seq - 1)
			ASSERT_EQ(0, fz_compare(&st, why, sizeof(why)))
				TH_LOG("after write %ld: %s", i, why);
		if (i % 500 == 499) {	/* and sometimes a fresh open */
			close(fd);
			fd = open(WPSTAT_CONTROL_PATH, O_WRONLY | O_CLOEXEC);
			ASSERT_LE(0, fd);
		}
	}
	close(fd);
	close(park.pipe[1]);
	pthread_join(parked, NULL);
	close(park.pipe[0]);
	EXPECT_EQ(0, bad);

	/* Concurrent: 4 processes x 2 threads, a reader and a workload. */
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	for (k = 0; k < 6; k++) {
		pid_t pid = fork();

		ASSERT_LE(0, pid);
		if (pid == 0) {
			if (k < 4)
				fz_writer_proc(sh, conc / 4 + (k ? 0 : conc % 4),
					       seed + k + 1, ctx.alive[0]);
			else if (k == 4)
				fz_reader_proc(sh);
			else
				fz_workload_proc(sh, self->probe_fd);
		}
		self->kids[self->nkids++] = pid;
	}
	for (k = 0; k < 4; k++) {
		ASSERT_EQ(self->kids[k], waitpid(self->kids[k], &status, 0));
		self->kids[k] = 0;
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("writer %d: status %#x", k, status);
	}
	sh->stop = 1;
	for (k = 4; k < 6; k++) {
		ASSERT_EQ(self->kids[k], waitpid(self->kids[k], &status, 0));
		self->kids[k] = 0;
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("%s: status %#x", k == 4 ? "reader" : "workload",
			       status);
	}
	self->nkids = 0;
	TH_LOG("concurrent: %ld writes, %ld reader passes, %ld workload passes",
	       sh->writes, sh->reader_reads, sh->touches);
	EXPECT_EQ(conc, sh->writes);
	EXPECT_EQ(0, sh->bad) TH_LOG("%ld unexpected results, first: %s",
				     sh->bad, sh->why);
	EXPECT_EQ(0, sh->reader_errors);
	EXPECT_LT(0, sh->reader_reads);
	munmap(sh, sizeof(*sh));

	/* Whatever state the race left is well formed ... */
	ASSERT_EQ(0, read_config(&c));
	EXPECT_TRUE(!strcmp(c.dev, "none") || strchr(c.dev, ':')) TH_LOG("%s", c.dev);
	EXPECT_TRUE(!strcmp(c.pid, "none") || atol(c.pid) > 0) TH_LOG("%s", c.pid);

	/* ... and follows valid commands again, at the suite's level. */
	timing = !strcmp(wps_suite_level(), "timing");
	st = (struct fz_state){ .enabled = 0, .major = 8, .minor = 1,
				.pid = getpid(), .timing = timing };
	snprintf(cmd, sizeof(cmd), "level %s", wps_suite_level());
	ASSERT_EQ(0, wps_control(cmd));
	ASSERT_EQ(0, wps_control("disable"));
	ASSERT_EQ(0, wps_control("filter dev 8:1"));
	snprintf(cmd, sizeof(cmd), "filter pid %d", getpid());
	ASSERT_EQ(0, wps_control(cmd));
	EXPECT_EQ(0, fz_compare(&st, why, sizeof(why))) TH_LOG("%s", why);
	ASSERT_EQ(0, wps_control("filter none"));
	ASSERT_EQ(0, wps_control("enable"));
	st = (struct fz_state){ .enabled = 1, .timing = timing };
	EXPECT_EQ(0, fz_compare(&st, why, sizeof(why))) TH_LOG("%s", why);

	/* Counting works, and resets freed every old table. */
	ASSERT_EQ(0, wps_control("reset"));
	ASSERT_EQ(0, touch_file(self->probe_fd, NPAGES));
	ASSERT_EQ(0, wps_read(self->probe, &w));
	EXPECT_EQ(NPAGES, w.mkwrite_first);
	EXPECT_TIMED_EQ(NPAGES, w.mkclean_ptes);
	EXPECT_EQ(areas, wpstat_vmalloc_areas()) TH_LOG("%ld sequential resets",
							resets);
}

/*
 * Not root: the control file cannot be opened (debugfs is root-only), and
 * an fd root opened before dropping privileges cannot write either
 * (control_write checks CAP_SYS_ADMIN); per-inode counters and the other
 * debugfs files are unreadable, the system-wide summary is readable.
 */
TEST_F_TIMEOUT(rel, nonroot_cannot_control_or_read_inodes, 60)
{
	static const char *const closed[] = {
		WPSTAT_INODES_PATH, CONFIG_PATH,
		"/sys/kernel/debug/wpstat/probes",
		"/sys/kernel/debug/wpstat/histograms",
	};
	char before[4096], after[4096];
	struct stat st;
	int cfd, status;
	pid_t child;

	/* Per-file activity is root's (like /proc/PID/io); totals are not. */
	ASSERT_EQ(0, stat(WPSTAT_INODES_PATH, &st));
	EXPECT_EQ(0400, st.st_mode & 07777);
	ASSERT_EQ(0, stat(WPSTAT_SUMMARY_PATH, &st));
	EXPECT_EQ(0444, st.st_mode & 07777);
	ASSERT_EQ(0, stat(WPSTAT_CONTROL_PATH, &st));
	EXPECT_EQ(0200, st.st_mode & 07777);
	ASSERT_LT(0, wps_slurp(CONFIG_PATH, before, sizeof(before)));
	cfd = open(WPSTAT_CONTROL_PATH, O_WRONLY);
	ASSERT_LE(0, cfd);
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		char buf[8192];
		size_t i;
		int fd;

		if (drop_privileges())
			_exit(10);
		fd = open(WPSTAT_CONTROL_PATH, O_WRONLY);
		if (fd >= 0 || (errno != EACCES && errno != EPERM))
			_exit(11);
		if (write(cfd, "disable", 7) != -1 || errno != EPERM)
			_exit(12);
		if (write(cfd, "filter none", 11) != -1 || errno != EPERM)
			_exit(13);
		for (i = 0; i < sizeof(closed) / sizeof(closed[0]); i++) {
			fd = open(closed[i], O_RDONLY);
			if (fd >= 0 || errno != EACCES)
				_exit(20 + i);
		}
		if (wps_slurp(WPSTAT_SUMMARY_PATH, buf, sizeof(buf)) <= 0 ||
		    !strstr(buf, "\nenabled 1\n"))
			_exit(30);
		_exit(0);
	}
	close(cfd);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	/* 11/12/13 control, 20+ a readable file (see closed[]), 30 summary */
	EXPECT_EQ(0, WEXITSTATUS(status));
	ASSERT_LT(0, wps_slurp(CONFIG_PATH, after, sizeof(after)));
	EXPECT_STREQ(before, after);
}

/* Exit status of a run_cmd() status: -1 if it did not exit. */
static int exit_code(int status)
{
	return status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static bool clear_refusal(const char *out)
{
	return !strncmp(out, "wpstat: ", 8) &&
	       (strstr(out, "not permitted") || strstr(out, "ermission denied") ||
		strstr(out, "root"));
}

/* `wpstat load` and `wpstat unload` as nobody fail, say why, change nothing. */
TEST_F_TIMEOUT(rel, nonroot_cli_cannot_load_or_unload, 90)
{
	char bin[512], module[512], out[4096];
	const char *nbin = nobody_path("bin/wpstat", bin, sizeof(bin));
	const char *nmod = nobody_path("wpstat.ko", module, sizeof(module));
	char *unload[] = { (char *)nbin, "unload", NULL };
	char *load[] = { (char *)nbin, "load", "--module", (char *)nmod, NULL };
	char *load_any[] = { (char *)nbin, "load", NULL };
	char *root_load[] = { (char *)wpstat_bin(), "load", "--module",
			      (char *)wps_module(), NULL };
	int st;

	ASSERT_NOBODY_CAN_USE(nbin, nmod);
	st = run_cmd(unload, true, out, sizeof(out));
	EXPECT_EQ(1, exit_code(st)) TH_LOG("unload as nobody: %s", out);
	EXPECT_TRUE(clear_refusal(out)) TH_LOG("unload as nobody said: %s", out);
	ASSERT_TRUE(wps_loaded()) TH_LOG("nobody unloaded the module");

	ASSERT_EQ(0, rmmod_retry());
	ASSERT_FALSE(wps_loaded());
	st = run_cmd(load, true, out, sizeof(out));
	EXPECT_EQ(1, exit_code(st)) TH_LOG("load as nobody: %s", out);
	EXPECT_TRUE(clear_refusal(out)) TH_LOG("load as nobody said: %s", out);
	EXPECT_FALSE(wps_loaded());
	st = run_cmd(load_any, true, out, sizeof(out));
	EXPECT_NE(0, exit_code(st)) TH_LOG("load as nobody: %s", out);
	EXPECT_FALSE(wps_loaded());

	/* And root can. */
	st = run_cmd(root_load, false, out, sizeof(out));
	EXPECT_EQ(0, exit_code(st)) TH_LOG("load as root: %s", out);
	ASSERT_TRUE(wps_loaded());
}

/*
 * Something that looks like a kernel address in @text: a 0x number of 8+
 * hex digits, 8+ hex digits with a letter (raw %px or hashed %p), a
 * zero-padded decimal of 8+ digits not after a '.' (a hashed %p without
 * letters; not the fraction of a decimal number), a
 * decimal at or above 0xffff800000000000, or "(____ptrval____)".  Copies
 * the token into @tok and returns it, or NULL.
 */
static const char *find_kaddr(const char *text, char *tok, size_t toklen)
{
	const char *p = text;

	if (strstr(text, "ptrval"))
		return snprintf(tok, toklen, "ptrval"), tok;
	while (*p) {
		const char *s = p, *h;
		bool hex = true, dec = true, letter = false, frac;
		size_t n;

		if (!isalnum((unsigned char)*p)) {
			p++;
			continue;
		}
		frac = p > text && p[-1] == '.';
		while (isalnum((unsigned char)*p))
			p++;
		n = p - s;
		h = s;
		if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
			h = s + 2;
		for (const char *q = h; q < p; q++) {
			hex &= isxdigit((unsigned char)*q) != 0;
			dec &= isdigit((unsigned char)*q) != 0;
			letter |= isalpha((unsigned char)*q) != 0;
		}
		if ((h != s && hex && p - h >= 8) ||
		    (h == s && hex && letter && n >= 8) ||
		    (dec && n >= 8 && s[0] == '0' && !frac) ||
		    (dec && n >= 19 &&
		     strtoull(s, NULL, 10) >= 0xffff800000000000ULL)) {
			snprintf(tok, toklen, "%.*s", (int)n, s);
			return tok;
		}
	}
	return NULL;
}

static void expect_no_kaddr(struct __test_metadata *_metadata,
			    const char *what, const char *text)
{
	char tok[64];

	EXPECT_EQ(NULL, find_kaddr(text, tok, sizeof(tok)))
		TH_LOG("%s shows '%s'", what, tok);
}

/* Every readable regular file under @dir: how many were scanned. */
static int scan_dir(struct __test_metadata *_metadata, const char *dir,
		    char *buf, size_t len)
{
	struct dirent *de;
	char path[512];
	struct stat st;
	int n = 0;
	DIR *d = opendir(dir);

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		if (!(st.st_mode & 0444)) {	/* control: write-only */
			EXPECT_EQ(0200, st.st_mode & 0777) TH_LOG("%s", path);
			continue;
		}
		EXPECT_LT(0, wps_slurp(path, buf, len)) TH_LOG("%s", path);
		expect_no_kaddr(_metadata, path, buf);
		n++;
	}
	closedir(d);
	return n;
}

/*
 * No kernel address anywhere: every file in /proc/wpstat, debugfs wpstat/
 * and the module's parameters, what the CLI prints (status, show in every
 * format, as root and as nobody), and the module's kernel log lines.
 */
TEST_F_TIMEOUT(rel, no_kernel_addresses_in_output, 90)
{
	static const char *const bad[] = {
		"x ffff888003a1c000 y", "at 0xffffffffc0a01234", "0x1234abcd",
		"ptr 00000000e4f1b2a7", "ptr 0000000012345678",
		"18446612682071343104", "(____ptrval____)",
	};
	static const char *const good[] = {
		"mkwrite_ns 123456789012345\n", "kernel 6.12.117+deb12-amd64",
		"254:0 12 3735928559 16", "bdp_pause_ns 18446744073",
		"wpstat_mkwrite_seconds_total 0.000000000",
	};
	static const char *const cli[][4] = {
		{ "status" }, { "status", "--json" }, { "show" },
		{ "show", "--json" }, { "show", "--format", "prometheus" },
		{ "stalls" }, { "stalls", "--json" },
		{ "stalls", "--format", "prometheus" },
	};
	static char buf[1 << 20];
	char tok[64], what[128], bin[512], module[512];
	const char *nbin = nobody_path("bin/wpstat", bin, sizeof(bin));
	char *argv[6];
	int i, j, n, st, len;

	ASSERT_NOBODY_CAN_USE(nbin,
			      nobody_path("wpstat.ko", module, sizeof(module)));

	/* The detector itself. */
	for (i = 0; i < (int)(sizeof(bad) / sizeof(bad[0])); i++)
		ASSERT_NE(NULL, find_kaddr(bad[i], tok, sizeof(tok))) TH_LOG("%s", bad[i]);
	for (i = 0; i < (int)(sizeof(good) / sizeof(good[0])); i++)
		ASSERT_EQ(NULL, find_kaddr(good[i], tok, sizeof(tok))) TH_LOG("%s", good[i]);

	/* Something in every column and histogram. */
	ASSERT_EQ(0, touch_file(self->probe_fd, NPAGES));
	ASSERT_EQ(0, touch_file(self->probe_fd, NPAGES));
	ASSERT_EQ(0, pwrite_pages(self->probe_fd, 0, NPAGES, 1));
	ASSERT_EQ(0, fsync(self->probe_fd));

	n = scan_dir(_metadata, "/proc/wpstat", buf, sizeof(buf));
	EXPECT_EQ(5, n) TH_LOG("inodes, summary, gone, counters and stalls");
	n = scan_dir(_metadata, "/sys/kernel/debug/wpstat", buf, sizeof(buf));
	EXPECT_LE(3, n) TH_LOG("config, probes, histograms");
	n = scan_dir(_metadata, "/sys/module/wpstat/parameters", buf, sizeof(buf));
	EXPECT_LE(3, n);

	for (j = 0; j < 2; j++) {
		for (i = 0; i < (int)(sizeof(cli) / sizeof(cli[0])); i++) {
			int a;

			argv[0] = (char *)(j ? nbin : wpstat_bin());
			for (a = 0; a < 4 && cli[i][a]; a++)
				argv[a + 1] = (char *)cli[i][a];
			argv[a + 1] = NULL;
			st = run_cmd(argv, j, buf, sizeof(buf));
			snprintf(what, sizeof(what), "wpstat %s %s%s(%s)",
				 cli[i][0], cli[i][1] ?: "",
				 cli[i][1] ? " " : "", j ? "nobody" : "root");
			/* nobody may run status; show is root-only */
			if (!j || i < 2) {
				EXPECT_EQ(0, exit_code(st)) TH_LOG("%s: %s", what, buf);
				EXPECT_LT(10, (int)strlen(buf)) TH_LOG("%s", what);
			}
			expect_no_kaddr(_metadata, what, buf);
		}
	}

	/* The module's own kernel log lines. */
	len = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	ASSERT_LT(0, len);
	if (len > (int)sizeof(buf) - 1)
		len = sizeof(buf) - 1;
	len = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, len);
	ASSERT_LT(0, len);
	buf[len] = '\0';
	n = 0;
	for (char *save = NULL, *line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		/* The timestamp's digits are no address; skip "[ 12.345]". */
		char *msg = line[0] == '[' && strchr(line, ']') ?
			    strchr(line, ']') + 1 : line;

		if (!strstr(msg, "wpstat"))
			continue;
		n++;
		expect_no_kaddr(_metadata, "kernel log", msg);
	}
	EXPECT_LT(0, n) TH_LOG("no wpstat line in the kernel log");
}

TEST_HARNESS_MAIN
