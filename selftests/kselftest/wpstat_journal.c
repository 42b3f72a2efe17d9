// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_journal: write faults and write(2)s that wait for the
 * filesystem's journal while another process fsyncs the file.
 * On a memory-backed null_blk device behind dm-delay (writes, and
 * where a test says reads, complete late) or limited in throughput
 * (slowdev_up(), wpstat_test_dev.c; wps-slowdev for the bats suites).
 */
#include "wpstat_test.h"	/* first: it defines _GNU_SOURCE */
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <time.h>
#include <sys/resource.h>
#include "wpstat_faults.h"
#include "wpstat_harness.h"

/*
 * The journal inside a write fault: a process stores to a mapped 32-page
 * file on ext4 (data=ordered, delalloc) over a 20 ms dm-delay with
 * stable_writes=1 while another fsyncs the file every 30 ms.  Each store
 * after an fsync takes a write-protect fault; ext4_page_mkwrite() first
 * updates mtime (file_update_time -> ext4_dirty_inode ->
 * jbd2__journal_start, then ext4_reserve_inode_write ->
 * jbd2_journal_get_write_access on the inode table buffer), and while the
 * fsync's commit writes that buffer to the journal it is BH_Shadow:
 * do_get_write_access() sleeps in wait_on_bit_io() until the journal
 * write, 20 ms late, completes.  Then block_page_mkwrite ->
 * folio_wait_stable() waits for the page's own writeback.
 * Expected, for the storer's row at level timing:
 *   the named waits, with the unnamed time's CPU and runqueue parts,
 *   >= 90 % of fault_ns: what remains is sleep wpstat does not name.
 *   Measured before the CPU and runqueue split: 6.1 stable 49 %,
 *   journal 48 %; 7.2 stable 97 %, journal 0, its commits not meeting
 *   the faults' mtime updates here; under two other guests on the
 *   host's two cores, 69.6 % named by waits alone.  With the split:
 *   80.6 to 92.8 %.  The rest was the page lock, which writeback holds
 *   while its block mapping waits for the journal: with lock_ns,
 *   99.9 % (6.12: 15 sleeps, 278 ms of 1029) and 100.0 % (7.2: 20,
 *   33 ms of 699), beside two other guests (2026-11-28);
 *   fault_cpu_ns + fault_runq_ns <= fault_unnamed_ns;
 *   fault_ns - fault_unnamed_ns == stable_ns + wb_ns + journal_ns +
 *   pause_ns + readin_ns + lock_ns, to the nanosecond: a fault is timed whole
 *   (handle_mm_fault(), its dirty balancing included), a pure storer's
 *   waits are all inside its faults, and the unnamed time is the fault's
 *   time less them, fault by fault.
 * The fsyncer never faults: its row (level timing, which this fixture
 * sets) holds only the PTEs its fsyncs write-protected (wp_caused, at
 * least one; the storer syncs nothing, so none of its own), whatever its
 * own journal waits; in the pwrite variant nothing maps the file, its
 * fsyncs write-protect nothing, and it has no row.
 *
 * Variant pwrite: the writer pwrite()s a byte to each page in turn
 * instead.  ext4_buffered_write_iter -> ext4_write_checks ->
 * file_modified() updates mtime through the same ext4_dirty_inode(), and
 * meets the same commits: journal_waits >= 1 in its row, no faults
 * (measured: 34 waits, 674 ms in 3 s on 5.10; 33, 618 ms on 7.2).  A
 * journal call that slept in a write system call is the writer's,
 * whichever function of the write made it: 6.1's file_modified()
 * tail-calls file_modified_flags(), and 7.2's time update runs in
 * file_update_time_flags(), so no one frame marks it on every kernel.
 *
 * Variant xfs_pwrite: the pwrite writer on xfs.  xfs_file_write_checks()
 * ends in kiocb_modified() (6.0 on; file_modified() on 5.10), and its
 * copy loop is iomap_file_buffered_write(): the time update's
 * transaction (xfs_vn_update_time) takes XFS_ILOCK_EXCL, which the fsync
 * holds shared across its synchronous log force (xfs_fsync_flush_log)
 * through 6.17: journal_waits >= 1, as on ext4 (the second review found
 * 0 on 6.1 and later when only file_modified() was a write's scope).
 * 6.18 ("xfs: rework datasync tracking and execution") reads the commit
 * sequence under ili_lock and forces the log without the inode lock, so
 * on 7.2 the writer's time update waits for no log force: at most a
 * short wait, now and then (measured: none beside 17 stable waits; one
 * of 0.4 ms beside 39 stable waits of 760 ms), where a writer that meets
 * the fsync's log force waits about as long for it as for stable pages
 * (ext4 on 7.2: 557 ms beside 610).  So its journal time is under a
 * quarter of its stable-wait time.
 *
 * Variant append: the writer appends a byte at a time with pwrite(), on
 * ext4 mounted lazytime, which leaves the mtime update to the inode's
 * timestamps alone (I_DIRTY_TIME: no ext4_dirty_inode) where no i_version
 * increment is forced (5.10, 6.1, 7.2; 6.2-7.1 force it and journal the
 * mtime anyway).  Each append grows the size, dirtied in the copy loop,
 * generic_perform_write's ->write_end: generic_write_end ->
 * mark_inode_dirty -> ext4_dirty_inode (5.10, 6.1), ext4_da_do_write_end's
 * i_disksize update once the fsync has allocated the tail block (6.3
 * on); either takes the same journal access during the fsync's commits.
 * So journal_waits >= 1 in its row; counting only the mtime update's
 * waits found none on 5.10, 6.1 and 7.2.
 *
 * Variant overlay_pwrite: the pwrite writer through overlayfs over the
 * same ext4 (lower, upper and work directories on it).  The write goes
 * to the upper ext4 file (ovl_write_iter -> backing_file_write_iter ->
 * vfs_iter_write), whose time update meets the same commits; the
 * descriptor names the overlay file, whose mapping writes nothing back,
 * so the wait is charged to the upper file (d_real()): journal_waits >= 1
 * in the upper file's row.
 */
#define JOURNAL_PAGES		32
#define JOURNAL_DELAY_MS	20
#define JOURNAL_FSYNC_MS	30
#define JOURNAL_RUN_MS		3000

FIXTURE(journal) {
	char path[256];		/* the file the writer opens */
	char row_path[256];	/* the file its rows are of (overlay: upper) */
	int fd;
	bool switched;		/* the test set level timing: set it back */
	bool overlay;		/* mounted SLOW_DIR/merged */
};

FIXTURE_VARIANT(journal) {
	const char *fs;		/* ext4 if NULL */
	bool pwrite;
	bool append;		/* pwrite() appends, on ext4 mounted lazytime */
	bool overlay;		/* through overlayfs over the ext4 */
};

FIXTURE_VARIANT_ADD(journal, mmap) { .pwrite = false };
FIXTURE_VARIANT_ADD(journal, pwrite) { .pwrite = true };
FIXTURE_VARIANT_ADD(journal, xfs_pwrite) { .fs = "xfs", .pwrite = true };
FIXTURE_VARIANT_ADD(journal, append) { .pwrite = true, .append = true };
FIXTURE_VARIANT_ADD(journal, overlay_pwrite) { .pwrite = true, .overlay = true };

FIXTURE_SETUP(journal)
{
	ASSERT_TRUE(wps_loaded());
	ASSERT_LE(0, wps_timing());
	/* Timing's probes name the waits; counts is the level on most kernels. */
	if (!wps_timing()) {
		ASSERT_EQ(0, wps_control("level timing"));
		self->switched = true;
	}
	ASSERT_EQ(0, slowdev_up(variant->fs ?: "ext4", "", JOURNAL_DELAY_MS, 1))
		TH_LOG("cannot set up %s on null_blk behind dm-delay",
		       variant->fs ?: "ext4");
	if (variant->append)
		ASSERT_EQ(0, sh("mount -o remount,lazytime " SLOW_DIR));
	snprintf(self->path, sizeof(self->path), SLOW_DIR "/journal");
	snprintf(self->row_path, sizeof(self->row_path), "%s", self->path);
	if (variant->overlay) {
		ASSERT_EQ(0, sh("mkdir -p " SLOW_DIR "/lower " SLOW_DIR "/upper "
				SLOW_DIR "/work " SLOW_DIR "/merged && "
				"mount -t overlay overlay -o lowerdir=" SLOW_DIR
				"/lower,upperdir=" SLOW_DIR "/upper,workdir="
				SLOW_DIR "/work " SLOW_DIR "/merged"))
			TH_LOG("cannot mount overlayfs over %s", SLOW_DIR);
		self->overlay = true;
		snprintf(self->path, sizeof(self->path), SLOW_DIR "/merged/journal");
		snprintf(self->row_path, sizeof(self->row_path),
			 SLOW_DIR "/upper/journal");
	}
	self->fd = open(self->path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ftruncate(self->fd, JOURNAL_PAGES * PAGE));
	/* Blocks allocated and clean: the run's faults are write-protect ones. */
	ASSERT_EQ(0, pwrite_pages(self->fd, 0, JOURNAL_PAGES, 1));
	ASSERT_EQ(0, fsync(self->fd));
}

FIXTURE_TEARDOWN(journal)
{
	close(self->fd);
	if (self->overlay)
		sh("umount " SLOW_DIR "/merged");
	slowdev_down();
	if (self->switched)
		wps_control("level counts");
}

/* Store (or pwrite) to each page in turn, or append, until @end_ns. */
static void journal_storer(int fd, uint64_t end_ns, bool use_pwrite,
			   bool append)
{
	char *map = use_pwrite ? NULL :
		    mmap(NULL, JOURNAL_PAGES * PAGE, PROT_READ | PROT_WRITE,
			 MAP_SHARED, fd, 0);
	unsigned int i = 0;
	char c;

	if (map == MAP_FAILED)
		_exit(2);
	for (; wpstat_now_ns() < end_ns; i++) {
		c = (char)i;
		if (append) {
			if (pwrite(fd, &c, 1, (off_t)JOURNAL_PAGES * PAGE + i) != 1)
				_exit(2);
		} else if (!map) {
			if (pwrite(fd, &c, 1, (off_t)(i % JOURNAL_PAGES) * PAGE) != 1)
				_exit(2);
		} else {
			map[(i % JOURNAL_PAGES) * PAGE] = c;
		}
	}
	_exit(0);
}

TEST_F(journal, fsync_neighbour_stalls_are_named)
{
	uint64_t end = wpstat_now_ns() + JOURNAL_RUN_MS * 1000000ULL;
	struct stall_row st, fs;
	pid_t storer, fsyncer;
	int64_t named;
	int status;

	if (wps_summary("journal_waits") < 0)
		SKIP(return, "journal_waits reads '-': jbd2's probes are not attached (debugfs wpstat/probes)");
	storer = fork();
	ASSERT_LE(0, storer);
	if (!storer)
		journal_storer(self->fd, end, variant->pwrite, variant->append);
	fsyncer = fork();
	ASSERT_LE(0, fsyncer);
	if (!fsyncer)
		wps_fsync_loop(self->fd, end, JOURNAL_FSYNC_MS);
	ASSERT_EQ(storer, waitpid(storer, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	ASSERT_EQ(fsyncer, waitpid(fsyncer, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));

	ASSERT_EQ(1, stall_of(self->row_path, storer, &st));
	/* Nothing maps the file in the pwrite variant: no PTE, no row. */
	EXPECT_EQ(variant->pwrite ? 0 : 1, stall_of(self->row_path, fsyncer, &fs));
	EXPECT_EQ(0, fs.fault_first + fs.fault_wp + fs.stable_waits +
		     fs.wb_waits + fs.pauses + fs.journal_waits);
	EXPECT_EQ(0, st.wp_caused);
	if (!variant->pwrite)
		EXPECT_LE(1, fs.wp_caused);
	/* Every wait of a pure storer is inside one of its faults. */
	named = st.stable_ns + st.wb_ns + st.journal_ns + st.pause_ns +
		st.readin_ns + st.lock_ns;
	TH_LOG("storer: %lld wp faults, fault %.1f ms: stable %lld waits "
	       "%.1f ms, wb %lld %.1f ms, journal %lld %.1f ms (worst "
	       "%.1f ms), lock %lld %.1f ms, unnamed %.1f ms (cpu %.1f, "
	       "runq %.1f): %.1f %% named",
	       (long long)st.fault_wp, st.fault_ns / 1e6,
	       (long long)st.stable_waits, st.stable_ns / 1e6,
	       (long long)st.wb_waits, st.wb_ns / 1e6,
	       (long long)st.journal_waits, st.journal_ns / 1e6,
	       st.journal_max_ns / 1e6, (long long)st.lock_waits,
	       st.lock_ns / 1e6, st.fault_unnamed_ns / 1e6,
	       st.fault_cpu_ns / 1e6, st.fault_runq_ns / 1e6,
	       st.fault_ns > 0 ? 100.0 * (named + st.fault_cpu_ns +
					  st.fault_runq_ns) / st.fault_ns : 0);
	EXPECT_LE(st.journal_max_ns, st.journal_ns);
	if (variant->pwrite) {
		EXPECT_EQ(0, st.fault_first + st.fault_wp);
		if (variant->fs && !strcmp(variant->fs, "xfs") &&
		    wps_kernel_at_least(6, 18)) {
			EXPECT_LT(4 * st.journal_ns, st.stable_ns);
		} else {
			EXPECT_LE(1, st.journal_waits);
		}
		EXPECT_EQ(0, st.fault_ns);
		return;
	}
	EXPECT_LE(1, st.fault_wp);
	EXPECT_EQ(st.fault_ns - st.fault_unnamed_ns, named);
	EXPECT_LE(st.fault_cpu_ns + st.fault_runq_ns, st.fault_unnamed_ns);
	/*
	 * The 90 % holds where a fault's own CPU time is microseconds.
	 * Under KASAN it is about 2 ms a fault (check-debug, 2026-11-26:
	 * 419 faults, 939 ms unnamed, 38.9 % named), so only the identity
	 * above is checked there.
	 */
	if (wps_kernel_sanitized())
		TH_LOG("KASAN kernel: the >= 90 %% named check is for production kernels");
	else
		EXPECT_LE(st.fault_ns * 90,
			  (named + st.fault_cpu_ns + st.fault_runq_ns) * 100);
}

TEST_HARNESS_MAIN
