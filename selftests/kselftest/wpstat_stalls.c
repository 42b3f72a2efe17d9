// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_stalls: who stalled on which file (/proc/wpstat/stalls), what
 * write-protected the pages (the mkclean_<trigger> columns of
 * /proc/wpstat/inodes), and the histogram scope.
 *
 * Predictions, from the kernel sources (6.1 and 6.12 alike):
 *  S1 A process that stores into a file while another process fsyncs it
 *     on a stable-writes device waits in folio_wait_stable() for the
 *     writeback the fsync started: the waits and their time (about the
 *     device's write delay) are in the storing process's row; the fsyncing
 *     process waits too, but in __filemap_fdatawait_range(), not in a
 *     write, so it has no wait.  fsync cleans every dirty page through
 *     folio_clear_dirty_for_io() -> folio_mkclean(), in the fsyncing
 *     task's fsync(2): NPAGES calls attributed to fsync.  Each write-
 *     protects the storer's one PTE of the page (the child forked after
 *     the mmap has none: fork copies no PTE of a shared file mapping,
 *     vma_needs_copy()), so at level timing the fsyncing process's row
 *     says it caused NPAGES write-protects (wp_caused, from
 *     folio_mkclean's return) and nothing else; at level counts, which
 *     does not see that return, it has no row.
 *  S2 The same pages cleaned by msync(2), sync_file_range(2), sync(2)
 *     (done by the flusher for the caller, wb_writeback() with
 *     WB_REASON_SYNC), or by nobody but the periodic flusher once they
 *     are older than dirty_expire_centisecs (wb_check_old_data_flush(),
 *     WB_REASON_PERIODIC): exactly NPAGES folio_mkclean calls, all with
 *     that trigger.
 *  S3 Every process that maps a file and stores into each page takes one
 *     first-write fault per page on its own PTEs (do_shared_fault; no PTE
 *     is shared between processes), whoever else touched the page: each
 *     row has fault_first == NPAGES, and the rows add up to the file's
 *     mkwrite_first and mkwrite_wp exactly.
 * The table's capacity (S4: overflow), its recycling of exited processes'
 * rows and reused pids: wpstat_stalls_recycle.  Dirty throttling by process
 * and file, and the flusher-background trigger of a throttled writer:
 * wpstat_throttle.
 */
#include "wpstat_test.h"
#include <sys/prctl.h>	/* first: it defines _GNU_SOURCE */

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include "wpstat_harness.h"

#define NPAGES		16
/*
 * S1's device delay: the storer must see the fsync's writeback before it
 * ends, so a host that does not run the guest for a while must not take
 * the whole window (200 ms once left 34 ms).
 */
#define DELAY_MS	1000
/* The summary's histogram_scope line, without the name. */
static void hist_scope(char *out, size_t size)
{
	if (wps_kv_value(WPSTAT_SUMMARY_PATH, "histogram_scope", out, size))
		out[0] = '\0';
}

/* Entries of histogram @name in debugfs wpstat/histograms. */
static int64_t hist_count(const char *name)
{
	char buf[16384], *line, *save = NULL, n[64];
	unsigned long long lo, hi, cnt;
	int64_t sum = 0;

	if (wps_slurp("/sys/kernel/debug/wpstat/histograms", buf, sizeof(buf)) < 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, "%63s %llu %llu %llu", n, &lo, &hi, &cnt) == 4 &&
		    !strcmp(n, name))
			sum += cnt;
	return sum;
}

/* ---- S1: a store stalled by another process's fsync ----------------------- */

FIXTURE(fsync_other) {
	char path[256];
};

FIXTURE_SETUP(fsync_other)
{
	ASSERT_TRUE(wps_loaded());
	ASSERT_EQ(0, slowdev_up("ext4", "", DELAY_MS, 1))
		TH_LOG("cannot set up ext4 on null_blk + dm-delay");
	snprintf(self->path, sizeof(self->path), SLOW_DIR "/shared");
}

FIXTURE_TEARDOWN(fsync_other)
{
	wps_control("histogram all");
	slowdev_down();
}

TEST_F(fsync_other, store_waits_for_fsync_of_other_process)
{
	struct stall_row mine, theirs, any;
	struct wps before, after, d;
	uint64_t t0, t_fork, t_end;
	struct rusage ru0, ru1;
	int fd, i, status, err;
	pid_t syncer;
	char *map;
	char cmd[320];

	fd = open(self->path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, NPAGES * PAGE));
	map = mmap(NULL, NPAGES * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	/* Blocks allocated and clean, then dirty again: a fsync has work. */
	wps_store_pages(map, NPAGES, 1);
	ASSERT_EQ(0, fsync(fd));
	snprintf(cmd, sizeof(cmd), "histogram path %s", self->path);
	ASSERT_EQ(0, wps_control(cmd));
	wps_store_pages(map, NPAGES, 2);
	ASSERT_EQ(0, wps_read(self->path, &before));

	t_fork = wpstat_now_ns();
	syncer = fork();
	ASSERT_LE(0, syncer);
	if (!syncer) {
		int cfd = open(self->path, O_RDWR | O_CLOEXEC);

		_exit(cfd < 0 || fsync(cfd) ? 1 : 0);
	}
	/*
	 * Store once the fsync has put page 0 under writeback (cleaned and
	 * write-protected first): a condition, looked for in the page's own
	 * flags (cheap), not in wpstat's table; up to a minute.
	 */
	for (i = 0;; i++) {
		uint64_t flags = wps_page_flags(map, &err);

		ASSERT_EQ(0, err);
		if (flags & WPS_KPF_WRITEBACK)
			break;
		/* Ended unseen: this process did not run for DELAY_MS. */
		ASSERT_EQ(0, waitpid(syncer, &status, WNOHANG))
			TH_LOG("the fsync ended before page 0 was seen under writeback");
		ASSERT_GT(60000, i) TH_LOG("the fsync put page 0 under no writeback in a minute");
		usleep(1000);
	}
	ASSERT_EQ(0, getrusage(RUSAGE_THREAD, &ru0));
	t0 = wpstat_now_ns();
	*(volatile char *)map = 3;
	t_end = wpstat_now_ns();
	t0 = t_end - t0;
	ASSERT_EQ(0, getrusage(RUSAGE_THREAD, &ru1));
	/* After its wait, the page is dirty again and not under writeback. */
	EXPECT_EQ(0, wps_page_flags(map, &err) & WPS_KPF_WRITEBACK);
	EXPECT_EQ(0, err);
	ASSERT_EQ(syncer, waitpid(syncer, &status, 0));
	ASSERT_EQ(0, status);
	ASSERT_EQ(0, wps_read(self->path, &after));
	d = wps_delta(&after, &before);
	ASSERT_EQ(1, stall_of(self->path, getpid(), &mine));
	ASSERT_LE(0, stall_of(self->path, syncer, &theirs));
	TH_LOG("store %.1f ms; mine: stable_waits %lld stable %.1f ms max %.1f ms; "
	       "fsync triggers %lld of %lld mkclean calls",
	       t0 / 1e6, (long long)mine.stable_waits, mine.stable_ns / 1e6,
	       mine.stable_max_ns / 1e6, (long long)d.mkclean_fsync,
	       (long long)d.mkclean_calls);

	/*
	 * The fsyncing process waited for no write: its row (timing) holds
	 * only the NPAGES PTEs its fsync write-protected, all of them.
	 */
	if (wps_timing() == 1) {
		EXPECT_EQ(1, stall_of(self->path, syncer, &any));
		EXPECT_EQ(NPAGES, any.wp_caused);
		EXPECT_EQ(d.mkclean_ptes, any.wp_caused);
		EXPECT_EQ(0, any.fault_first + any.fault_wp + any.stable_waits +
			     any.wb_waits + any.pauses + any.journal_waits);
		/* Its own set-up fsync write-protected its NPAGES PTEs. */
		EXPECT_EQ(NPAGES, mine.wp_caused);
	} else {
		EXPECT_EQ(0, stall_of(self->path, syncer, &any));
	}
	/* NPAGES write-protects, all by the child's fsync(2). */
	EXPECT_EQ(NPAGES, d.mkclean_calls);
	EXPECT_EQ(NPAGES, d.mkclean_fsync);
	/* One store, one write-protect fault that waited for the I/O. */
	EXPECT_EQ(1, d.mkwrite_wp);
	EXPECT_EQ(1, d.stable_waits);
	EXPECT_EQ(1, mine.stable_waits);
	/*
	 * The store slept until the write ended, which dm-delay completes
	 * no sooner than DELAY_MS after the fsync (forked at t_fork)
	 * submitted it.  How much of the delay was left when the store
	 * came depends on how soon this process ran again (a loaded host
	 * left 34 ms of 200 ms), so the store's own time is not bounded below.
	 * Its wait was in folio_wait_stable(), unless the fault's mtime
	 * update met the fsync's journal commit first (ext4_page_mkwrite ->
	 * file_update_time, before block_page_mkwrite waits for the page):
	 * then the commit's wait held most of it (6.1, once beside another
	 * guest: a 695 ms store, a 0.1 ms stable wait).  Level timing names
	 * that journal wait; level counts does not time it.
	 */
	EXPECT_LE(1, ru1.ru_nvcsw - ru0.ru_nvcsw);
	/*
	 * The fsync's write: the device's delay.  dm-delay's timer runs on
	 * jiffies, which a starved guest catches up in bulk: 963 ms of 1000
	 * once, five guests on two cores (5.10).  Half is proof enough that
	 * the store waited for the delayed write.
	 */
	EXPECT_LE(DELAY_MS / 2 * 1000000ULL, t_end - t_fork);
	if (wps_timing() == 1) {
		EXPECT_LE(t0 / 2, (uint64_t)(mine.stable_ns + mine.journal_ns));
	} else if ((uint64_t)mine.stable_ns < t0 / 2) {
		TH_LOG("the store's wait was not its stable wait: the journal's, which level counts does not time");
	}
	EXPECT_GE((int64_t)t0, mine.stable_ns);
	EXPECT_EQ(mine.stable_ns, mine.stable_max_ns);
	EXPECT_EQ(d.stable_wait_ns, mine.stable_ns);
	EXPECT_EQ(mine.stable_max_ns, after.stable_wait_max_ns);
	/* This process's faults: 2 x NPAGES first/wp, then one more wp. */
	EXPECT_EQ(NPAGES, mine.fault_first);
	EXPECT_EQ(NPAGES + 1, mine.fault_wp);
	/* The histogram of this file has that wait (scope: this file). */
	EXPECT_EQ(1, hist_count("stable_wait_ns"));
	munmap(map, NPAGES * PAGE);
	close(fd);
}

/* ---- S2: triggers ----------------------------------------------------------- */

enum trigger { T_MSYNC, T_SFR, T_SYNC, T_SYNCFS, T_PERIODIC };

FIXTURE(trigger) {
	char path[256];
	int fd;
	char *map;
	char saved_expire[32], saved_interval[32];
};

FIXTURE_VARIANT(trigger) {
	enum trigger how;
	const char *column;
};

FIXTURE_VARIANT_ADD(trigger, msync) { T_MSYNC, "mkclean_msync" };
FIXTURE_VARIANT_ADD(trigger, sync_file_range) { T_SFR, "mkclean_sync_file_range" };
FIXTURE_VARIANT_ADD(trigger, sync) { T_SYNC, "mkclean_sync" };
FIXTURE_VARIANT_ADD(trigger, syncfs) { T_SYNCFS, "mkclean_sync" };
FIXTURE_VARIANT_ADD(trigger, flusher_periodic) { T_PERIODIC, "mkclean_flusher_periodic" };

FIXTURE_SETUP(trigger)
{
	ASSERT_TRUE(wps_loaded());
	ASSERT_LT(0, wps_slurp("/proc/sys/vm/dirty_expire_centisecs",
			       self->saved_expire, sizeof(self->saved_expire)));
	ASSERT_LT(0, wps_slurp("/proc/sys/vm/dirty_writeback_centisecs",
			       self->saved_interval, sizeof(self->saved_interval)));
	self->fd = wps_scratch("ext4", "trigger", NPAGES, self->path,
			       sizeof(self->path));
	ASSERT_LE(0, self->fd);
	self->map = mmap(NULL, NPAGES * PAGE, PROT_READ | PROT_WRITE,
			 MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->map);
	/* Blocks allocated, pages clean: later passes only clean our stores. */
	wps_store_pages(self->map, NPAGES, 1);
	ASSERT_EQ(0, fsync(self->fd));
}

FIXTURE_TEARDOWN(trigger)
{
	munmap(self->map, NPAGES * PAGE);
	close(self->fd);
	unlink(self->path);
	sh("sysctl -q vm.dirty_expire_centisecs=%d vm.dirty_writeback_centisecs=%d",
	   atoi(self->saved_expire), atoi(self->saved_interval));
}

/* A mkclean_<trigger> column of @w by name. */
static int64_t column(const struct wps *w, const char *name)
{
	size_t i;

	for (i = 0; i < WPS_N; i++)
		if (!strcmp(wps_names[i], name))
			return ((const int64_t *)w)[i];
	return -2;
}

TEST_F(trigger, every_clean_has_its_trigger)
{
	bool flusher = variant->how == T_SYNC || variant->how == T_SYNCFS ||
		       variant->how == T_PERIODIC;
	int64_t checked = wps_summary("wb_work_checked");
	struct wps before, after, d;
	int i;

	ASSERT_LE(0, checked);
	if (variant->how == T_PERIODIC)
		ASSERT_EQ(0, sh("sysctl -q vm.dirty_expire_centisecs=100 "
				"vm.dirty_writeback_centisecs=100"));
	ASSERT_EQ(0, wps_read(self->path, &before));
	wps_store_pages(self->map, NPAGES, 2);
	switch (variant->how) {
	case T_MSYNC:
		ASSERT_EQ(0, msync(self->map, NPAGES * PAGE, MS_SYNC));
		break;
	case T_SFR:
		ASSERT_EQ(0, sync_file_range(self->fd, 0, 0,
					     SYNC_FILE_RANGE_WAIT_BEFORE |
					     SYNC_FILE_RANGE_WRITE |
					     SYNC_FILE_RANGE_WAIT_AFTER));
		break;
	case T_SYNC:
		sync();
		break;
	case T_SYNCFS:
		ASSERT_EQ(0, syncfs(self->fd));
		break;
	case T_PERIODIC:
		/* Nothing: the flusher's next pass after 1 s of age. */
		for (i = 0; i < 300; i++) {
			ASSERT_EQ(0, wps_read(self->path, &after));
			if (after.mkclean_calls - before.mkclean_calls >= NPAGES)
				break;
			usleep(100000);
		}
		break;
	}
	ASSERT_EQ(0, wps_read(self->path, &after));
	d = wps_delta(&after, &before);
	TH_LOG("%s: mkclean_calls %lld, %s %lld, other %lld", variant->column,
	       (long long)d.mkclean_calls, variant->column,
	       (long long)column(&d, variant->column), (long long)d.mkclean_other);
	EXPECT_EQ(NPAGES, d.mkclean_calls);
	EXPECT_EQ(NPAGES, column(&d, variant->column));
	/* The triggers add up to the calls. */
	EXPECT_EQ(d.mkclean_calls, d.mkclean_msync + d.mkclean_fsync +
		  d.mkclean_sync_file_range + d.mkclean_sync +
		  d.mkclean_flusher_periodic + d.mkclean_flusher_background +
		  d.mkclean_reclaim + d.mkclean_other);
	/*
	 * A flusher pass's reason comes from struct wb_writeback_work,
	 * private to fs/fs-writeback.c: the module read it only after the
	 * pass's work item passed its layout check (kmod/wpstat_compat.h).
	 */
	if (flusher)
		EXPECT_LT(checked, wps_summary("wb_work_checked"));
	EXPECT_EQ(0, wps_summary("wb_work_layout_off"));
}

/* ---- S3: 4 processes x 2 files add up to the inode totals ----------------- */

#define NPROC	4

TEST(rows_add_up_to_inode_totals)
{
	char path[2][256];
	struct wps before[2], after[2];
	pid_t kids[NPROC];
	int fd[2], f, k, status;
	/*
	 * 5.10 (measured, one run of four, level timing): one of the four
	 * processes took a 17th first-write fault for its 16 pages, and the
	 * rows and the inode agreed on it (65 = 65).  The kernel's reason is
	 * not found yet; the sums below stay exact there too.
	 */
	bool extra_first_ok = !wps_kernel_at_least(6, 1);

	ASSERT_TRUE(wps_loaded());
	for (f = 0; f < 2; f++) {
		fd[f] = wps_scratch("ext4", f ? "sum1" : "sum0", NPAGES, path[f],
				    sizeof(path[f]));
		ASSERT_LE(0, fd[f]);
		ASSERT_EQ(0, wps_read(path[f], &before[f]));
	}
	for (k = 0; k < NPROC; k++) {
		kids[k] = fork();
		ASSERT_LE(0, kids[k]);
		if (!kids[k]) {
			int round;

			/* Two rounds per file: first-write, then (after msync) wp. */
			for (f = 0; f < 2; f++) {
				char *m = mmap(NULL, NPAGES * PAGE,
					       PROT_READ | PROT_WRITE,
					       MAP_SHARED, fd[f], 0);

				if (m == MAP_FAILED)
					_exit(1);
				for (round = 0; round < 2; round++) {
					wps_store_pages(m, NPAGES, round + k);
					msync(m, NPAGES * PAGE, MS_SYNC);
				}
				munmap(m, NPAGES * PAGE);
			}
			_exit(0);
		}
	}
	for (k = 0; k < NPROC; k++) {
		ASSERT_EQ(kids[k], waitpid(kids[k], &status, 0));
		ASSERT_EQ(0, status);
	}
	for (f = 0; f < 2; f++) {
		struct stall_row rows[64];
		int64_t first = 0, wp = 0, stable = 0, pauses = 0;
		struct wps d;
		int n, i;

		ASSERT_EQ(0, wps_read(path[f], &after[f]));
		d = wps_delta(&after[f], &before[f]);
		n = read_stalls(path[f], rows, 64);
		ASSERT_EQ(NPROC, n) TH_LOG("rows for file %d", f);
		for (i = 0; i < n; i++) {
			for (k = 0; k < NPROC && rows[i].tgid != kids[k]; k++)
				;
			EXPECT_GT(NPROC, k) TH_LOG("row of pid %ld", rows[i].tgid);
			if (extra_first_ok) {
				EXPECT_LE(NPAGES, rows[i].fault_first);
			} else {
				EXPECT_EQ(NPAGES, rows[i].fault_first);
			}
			first += rows[i].fault_first;
			wp += rows[i].fault_wp;
			stable += rows[i].stable_waits;
			pauses += rows[i].pauses;
		}
		TH_LOG("file %d: first %lld wp %lld (inode %lld %lld)", f,
		       (long long)first, (long long)wp,
		       (long long)d.mkwrite_first, (long long)d.mkwrite_wp);
		if (extra_first_ok) {
			EXPECT_LE(NPROC * NPAGES, d.mkwrite_first);
		} else {
			EXPECT_EQ(NPROC * NPAGES, d.mkwrite_first);
		}
		/* The point of the test: the rows add up to the inode's. */
		EXPECT_EQ(d.mkwrite_first, first);
		EXPECT_EQ(d.mkwrite_wp, wp);
		EXPECT_LE(NPAGES, wp);	/* at least the last msync's victims */
		EXPECT_EQ(d.stable_waits, stable);
		EXPECT_EQ(d.bdp_pauses, pauses);
		close(fd[f]);
		unlink(path[f]);
	}
}

/* ---- histogram scope commands ------------------------------------------------ */

TEST(histogram_commands)
{
	static const char *const bad[] = {
		"histogram", "histogram dev", "histogram dev 8",
		"histogram dev 0:0", "histogram dev 8:1:2", "histogram dev 4096:0",
		"histogram dev -8:1", "histogram inode 8:1", "histogram inode 8:1:0",
		"histogram inode 8:1:x", "histogram inode 8:1:5:x",
		"histogram inode 8:1:5:4294967296", "histogram all now",
		"histogram files", "histogram path relative/file",
		"histogram path /nonexistent/wpstat", "histogram path",
	};
	char before[128], now[128], path[256], want[320];
	struct stat st;
	size_t i;
	int fd;

	ASSERT_TRUE(wps_loaded());
	ASSERT_EQ(0, wps_control("histogram dev 7:3"));
	hist_scope(before, sizeof(before));
	EXPECT_STREQ("dev 7:3", before);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_NE(0, wps_control(bad[i])) TH_LOG("'%s' accepted", bad[i]);
		hist_scope(now, sizeof(now));
		EXPECT_STREQ(before, now) TH_LOG("after '%s'", bad[i]);
	}
	fd = wps_scratch("ext4", "hist", 1, path, sizeof(path));
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fstat(fd, &st));
	snprintf(want, sizeof(want), "histogram path %s", path);
	ASSERT_EQ(0, wps_control(want));
	hist_scope(now, sizeof(now));
	snprintf(want, sizeof(want), "inode %u:%u:%llu:", major(st.st_dev),
		 minor(st.st_dev), (unsigned long long)st.st_ino);
	EXPECT_EQ(0, strncmp(now, want, strlen(want))) TH_LOG("%s", now);
	snprintf(want, sizeof(want), "histogram inode %u:%u:%llu",
		 major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino);
	ASSERT_EQ(0, wps_control(want));
	hist_scope(now, sizeof(now));
	/* No generation given: any generation, and the scope says so. */
	EXPECT_STREQ(want + strlen("histogram "), now);
	ASSERT_EQ(0, wps_control("histogram all"));
	hist_scope(now, sizeof(now));
	EXPECT_STREQ("all", now);
	close(fd);
	unlink(path);
}

/* Root only, like the inodes file: other users' processes and files. */
TEST(stalls_file_is_root_only)
{
	struct stat st;

	ASSERT_EQ(0, stat(STALLS_PATH, &st));
	EXPECT_EQ(0400, st.st_mode & 0777);
}

TEST_HARNESS_MAIN
