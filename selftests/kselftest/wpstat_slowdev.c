// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_slowdev: predictions that need writeback in flight, on a
 * memory-backed null_blk device behind dm-delay (writes complete
 * DELAY_MS late) or limited to about 2 MB/s (one 4 KiB request in flight,
 * each completing after 2 ms).
 *
 * Over 800 lines: seven fixtures, one per slow-device scenario, each
 * independent of the others.  They stay one suite (one binary, one line
 * of selftests/suites.txt, one device set-up path through wps-slowdev)
 * because the harness makes a suite one file (its fixture list is static
 * to the translation unit: kselftest_harness.h's __fixture_list); split,
 * they would be two suites, not two smaller files of one.
 *
 * Prediction 8, a store to a page whose writeback is in flight:
 *   ext4_page_mkwrite -> block_page_mkwrite and xfs iomap_page_mkwrite
 *   call folio_wait_stable(), which waits only if mapping_stable_writes():
 *   AS_STABLE_WRITES comes from SB_I_STABLE_WRITES, set at mount from
 *   the device's stable_writes (fs/super.c: bdev_stable_writes()).
 *   btrfs_page_mkwrite() calls folio_wait_writeback() itself, always.
 * Prediction 9, dirty throttling: past the dirty limits,
 *   balance_dirty_pages() pauses the dirtier (io_schedule_timeout), and
 *   the pause belongs to the file whose ratelimited call got there.
 * Prediction 21, the throttled writer writes back nothing itself: since
 *   IO-less dirty throttling (3.2) balance_dirty_pages() only wakes the
 *   flusher (wb_start_background_writeback()) and sleeps; the write bios
 *   are the flusher's (wb_workfn -> wb_writeback -> ext4_writepages ->
 *   submit_bio), seen by the block:block_bio_queue tracepoint, which
 *   fires in the submitting task (submit_bio_noacct_nocheck()).
 */
#include "wpstat_test.h"	/* first: it defines _GNU_SOURCE */
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <time.h>
#include <sys/resource.h>
#include "wpstat_faults.h"
#include "wpstat_harness.h"

#define DELAY_MS	200
#define NPAGES		16

FIXTURE(stable) {
	char path[256];
	int fd;
	char *map;
};

FIXTURE_VARIANT(stable) {
	const char *fs;
	int stable_writes;
	bool blocks;		/* the store waits for the writeback */
	bool stable_wait;	/* ... in folio_wait_stable() */
};

/* 8a: no stable writes: the store dirties the page under writeback. */
FIXTURE_VARIANT_ADD(stable, ext4_stable0) { .fs = "ext4" };
FIXTURE_VARIANT_ADD(stable, xfs_stable0) { .fs = "xfs" };
/* 8b: stable writes: folio_wait_stable() blocks until the I/O is done. */
FIXTURE_VARIANT_ADD(stable, ext4_stable1) {
	.fs = "ext4", .stable_writes = 1, .blocks = true, .stable_wait = true,
};
FIXTURE_VARIANT_ADD(stable, xfs_stable1) {
	.fs = "xfs", .stable_writes = 1, .blocks = true, .stable_wait = true,
};
/* 8c: btrfs_page_mkwrite() waits for writeback whatever the device says. */
FIXTURE_VARIANT_ADD(stable, btrfs_stable0) { .fs = "btrfs", .blocks = true };

FIXTURE_SETUP(stable)
{
	ASSERT_TRUE(wps_loaded());
	ASSERT_EQ(0, slowdev_up(variant->fs, "", DELAY_MS,
				variant->stable_writes))
		TH_LOG("cannot set up %s on null_blk", variant->fs);
	snprintf(self->path, sizeof(self->path), SLOW_DIR "/f");
	self->fd = open(self->path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ftruncate(self->fd, NPAGES * PAGE));
	self->map = mmap(NULL, NPAGES * PAGE, PROT_READ | PROT_WRITE,
			 MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->map);
}

FIXTURE_TEARDOWN(stable)
{
	munmap(self->map, NPAGES * PAGE);
	close(self->fd);
	slowdev_down();
}

/*
 * The harness's default 30 s covers set-up and teardown too: a fresh
 * null_blk, mkfs, dm-delay and mount, then umount and rmmod.  That fits
 * on Debian's kernels but took 35-45 s on the KASAN+lockdep kernel of
 * make check-debug under TCG, where every variant was killed, most in
 * teardown after their checks had passed.  The checks are unchanged.
 */
TEST_F(stable, store_while_writeback_in_flight)
{
	struct rusage ru0, ru1;
	uint64_t t0, store_ns;
	struct wps before, after, d;
	struct stall_row row;
	long slept;

	/* Dirty every page and give it blocks; then clean it once. */
	wps_store_pages(self->map, NPAGES, 1);
	ASSERT_EQ(0, fsync(self->fd));
	wps_store_pages(self->map, NPAGES, 2);
	ASSERT_EQ(0, wps_read(self->path, &before));

	/* Start writeback (mkclean write-protects), do not wait for it... */
	ASSERT_EQ(0, sync_file_range(self->fd, 0, 0, SYNC_FILE_RANGE_WRITE));
	/* ... and store at once: a write-protect fault on a page in flight. */
	ASSERT_EQ(0, getrusage(RUSAGE_THREAD, &ru0));
	t0 = wpstat_now_ns();
	*(volatile char *)self->map = 3;
	store_ns = wpstat_now_ns() - t0;
	ASSERT_EQ(0, getrusage(RUSAGE_THREAD, &ru1));
	slept = ru1.ru_nvcsw - ru0.ru_nvcsw;
	ASSERT_EQ(0, fsync(self->fd));
	ASSERT_EQ(0, wps_read(self->path, &after));
	d = wps_delta(&after, &before);

	TH_LOG("%s stable_writes=%d: store %.1f ms, slept %ld times, stable_calls %lld "
	       "stable_waits %lld stable_wait %.1f ms wb_waits %lld",
	       variant->fs, variant->stable_writes, store_ns / 1e6, slept,
	       (long long)d.stable_calls, (long long)d.stable_waits,
	       d.stable_wait_ns / 1e6, (long long)d.wb_waits);
	/* sync_file_range cleans all; the final fsync the re-stored page. */
	EXPECT_TIMED_EQ(NPAGES + 1, d.mkclean_ptes);
	EXPECT_EQ(1, d.mkwrite_wp);
	if (variant->blocks) {
		/* Waited for most of the device delay (or all of it). */
		EXPECT_LE(DELAY_MS / 2 * 1000000ULL, store_ns);
		EXPECT_LE(1, slept);
		EXPECT_LE(1, d.wb_waits);
	} else {
		/*
		 * Did not wait: the store never slept (a sleep is a voluntary
		 * switch; a preemption is not).  Not a time bound: a guest
		 * whose vCPU the host did not run for 150 ms saw one store
		 * take 153 ms without sleeping (trixie's 6.12, five guests
		 * on two cores).
		 */
		EXPECT_EQ(0, slept);
	}
	/*
	 * This process's row: the wait is its own, as a stable-page wait,
	 * or (btrfs) as a writeback wait below do_page_mkwrite; fsync's
	 * waits are not a write's and are in neither.
	 */
	ASSERT_EQ(1, stall_of(self->path, getpid(), &row));
	EXPECT_EQ(d.stable_waits, row.stable_waits);
	EXPECT_EQ(variant->blocks && !variant->stable_wait, row.wb_waits);
	if (variant->blocks && !variant->stable_wait)
		EXPECT_LE(DELAY_MS / 2 * 1000000LL, row.wb_ns);
	if (variant->stable_wait) {
		EXPECT_LE(1, d.stable_waits);
		EXPECT_LE(DELAY_MS / 2 * 1000000LL, d.stable_wait_ns);
		EXPECT_GE(DELAY_MS * 10 * 1000000LL, d.stable_wait_ns);
	} else {
		EXPECT_EQ(0, d.stable_waits);
		EXPECT_EQ(0, d.stable_wait_ns);
	}
}

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
	/* Timing's probes name the waits; slowdev runs at counts on most kernels. */
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

/*
 * Prediction 9: a long write loop on a ~2 MB/s device with
 * dirty_bytes = 4 MiB (dirty_background_bytes = 1 MiB) has to be paused
 * by balance_dirty_pages(); an idle neighbour file on the same device
 * gets none of it.  (null_blk's own mbps= limit stalled mkfs for minutes
 * here, hence the queue-depth-1 device.)
 */
#define THROTTLE_PAGES	(12 * 256)	/* 12 MiB */
#define THROTTLE_DEV	"irqmode=2 completion_nsec=2000000 hw_queue_depth=1 max_sectors=8"

/*
 * The machine's dirty limits, to put back as they were.  Each limit is
 * set either in bytes or as a ratio (writing one zeroes the other), and
 * the kernel refuses a dirty_bytes below two pages, 0 included: so the
 * one that was set is written back, never a 0.
 */
struct dirty_limits {
	long long bytes, bg_bytes, ratio, bg_ratio;
};

static long long vm_sysctl(const char *name)
{
	char path[64], buf[64];

	snprintf(path, sizeof(path), "/proc/sys/vm/%s", name);
	return wps_slurp(path, buf, sizeof(buf)) > 0 ? atoll(buf) : -1;
}

static int dirty_limits_save(struct dirty_limits *d)
{
	d->bytes = vm_sysctl("dirty_bytes");
	d->bg_bytes = vm_sysctl("dirty_background_bytes");
	d->ratio = vm_sysctl("dirty_ratio");
	d->bg_ratio = vm_sysctl("dirty_background_ratio");
	return d->bytes < 0 || d->bg_bytes < 0 || d->ratio < 0 ||
	       d->bg_ratio < 0 ? -1 : 0;
}

static void dirty_limits_restore(const struct dirty_limits *d)
{
	if (d->bytes)
		sh("sysctl -q vm.dirty_bytes=%lld", d->bytes);
	else
		sh("sysctl -q vm.dirty_ratio=%lld", d->ratio);
	if (d->bg_bytes)
		sh("sysctl -q vm.dirty_background_bytes=%lld", d->bg_bytes);
	else
		sh("sysctl -q vm.dirty_background_ratio=%lld", d->bg_ratio);
}

FIXTURE(throttle) {
	char path[256], idle[256];
	int fd, idle_fd;
	struct dirty_limits saved;
	bool mounted_tracefs;
};

/*
 * An independent witness of who submits the writes: block:block_bio_queue
 * in a tracefs instance of our own (its own buffer, event switch and
 * filter; removed in teardown), filtered to the null_blk device.
 */
#define TRACEFS		"/sys/kernel/tracing"
#define BIO_TRACE	TRACEFS "/instances/wpstat-throttle"
#define BIO_EVENT	BIO_TRACE "/events/block/block_bio_queue"
/*
 * And of the pauses: writeback:balance_dirty_pages in the same instance,
 * filtered to the writer's pauses.  Its prototype changed in 6.15 (a
 * dirty_throttle_control in place of five limits); a probe of the old
 * shape read pause from another slot and counted 1,016 where this
 * counted 499 (7.2), so the two must agree exactly on every kernel.
 */
#define BDP_EVENT	BIO_TRACE "/events/writeback/balance_dirty_pages"
/*
 * And of the throttles: a kprobe event on balance_dirty_pages() (entered
 * only from the ratelimited call, outside the free-run zone), the
 * writer's entries.  Each is the module's bdp_throttled on the file or,
 * where the task left its CPU between the call and the entry, a
 * bdp_unattributed: never neither.
 */
#define BDP_KPROBE	"wpstat_test/bdp_entry"
#define BDP_KPROBE_EVENT BIO_TRACE "/events/" BDP_KPROBE
/* And of the ratelimited calls, with their mapping (one test's). */
#define BDP_RL_KPROBE	"wpstat_test/bdp_rl"
#define BDP_RL_KPROBE_EVENT BIO_TRACE "/events/" BDP_RL_KPROBE

struct bio_census {
	long writer_w, writer_r;	/* bios the writer submitted */
	long flusher_w, flusher_sectors; /* write bios of kworker threads */
	long other_w;			/* jbd2 and anyone else */
	long in_buffer, written;	/* entries-in-buffer/entries-written */
	char others[160];		/* who the others were */
};

static int put_file(const char *path, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int put_file(const char *path, const char *fmt, ...)
{
	char buf[128];
	va_list ap;
	int fd, n, ret = 0;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, n) != n)
		ret = -errno ?: -EIO;
	close(fd);
	return ret;
}

/* Appends @text to a tracefs control file (kprobe_events): 0 or -errno. */
static int append_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC), ret = 0;
	ssize_t n = strlen(text);

	if (fd < 0)
		return -errno;
	if (write(fd, text, n) != n)
		ret = -errno ?: -EIO;
	close(fd);
	return ret;
}

/* The instance, its event filtered to @dir's device, not yet enabled. */
static int bio_trace_setup(const char *dir, bool *mounted)
{
	struct stat st;
	int ret;

	*mounted = false;
	if (access(TRACEFS "/instances", F_OK)) {
		if (sh("mount -t tracefs nodev " TRACEFS))
			return -ENODEV;
		*mounted = true;
	}
	rmdir(BIO_TRACE);		/* a leftover of a killed run */
	if (mkdir(BIO_TRACE, 0700))
		return -errno;
	if (stat(dir, &st))
		return -errno;
	/* The event's dev is the kernel's dev_t: MKDEV() = major << 20. */
	ret = put_file(BIO_EVENT "/filter", "dev == %u",
		       major(st.st_dev) << 20 | minor(st.st_dev));
	if (ret)
		return ret;
	append_file(TRACEFS "/kprobe_events", "-:" BDP_KPROBE "\n");
	ret = append_file(TRACEFS "/kprobe_events",
			  "p:" BDP_KPROBE " balance_dirty_pages\n");
	if (ret)
		return ret;
	return put_file(BIO_TRACE "/buffer_size_kb", "4096");
}

static void bio_trace_teardown(bool mounted)
{
	put_file(BIO_EVENT "/enable", "0");
	put_file(BDP_EVENT "/enable", "0");
	put_file(BDP_KPROBE_EVENT "/enable", "0");
	put_file(BDP_RL_KPROBE_EVENT "/enable", "0");
	rmdir(BIO_TRACE);
	append_file(TRACEFS "/kprobe_events", "-:" BDP_KPROBE "\n");
	append_file(TRACEFS "/kprobe_events", "-:" BDP_RL_KPROBE "\n");
	if (mounted)
		sh("umount " TRACEFS);
}

/* Lines of @event in the instance's buffer, or -errno. */
static long trace_count(const char *event)
{
	char line[512], tag[64];
	long n = 0;
	FILE *f;

	snprintf(tag, sizeof(tag), " %s: ", event);
	f = fopen(BIO_TRACE "/trace", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		n += line[0] != '#' && strstr(line, tag);
	fclose(f);
	return n;
}

/*
 * Count the traced bios by submitter.  A line is
 * "  comm-pid  [cpu] flags  ts: block_bio_queue: maj,min RWBS sector + n [comm]".
 */
static int bio_census(pid_t writer, struct bio_census *c)
{
	char line[512], rwbs[16], comm[64];
	unsigned int maj, min, nr;
	unsigned long long sector;
	FILE *f;

	memset(c, 0, sizeof(*c));
	f = fopen(BIO_TRACE "/trace", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *ev = strstr(line, "block_bio_queue: ");
		char *p, *cpu = NULL;
		long pid;
		bool w;

		if (line[0] == '#') {
			sscanf(line, "# entries-in-buffer/entries-written: %ld/%ld",
			       &c->in_buffer, &c->written);
			continue;
		}
		if (!ev || sscanf(ev + 17, "%u,%u %15s %llu + %u [%63[^]]]",
				  &maj, &min, rwbs, &sector, &nr, comm) != 6)
			continue;
		/* The pid ends just before the " [cpu]" field. */
		for (p = line; p < ev && !cpu; p++)
			if (p[0] == '[' && p[1] >= '0' && p[1] <= '9')
				cpu = p;
		if (!cpu)
			continue;
		for (p = cpu; p > line && p[-1] == ' '; p--)
			;
		while (p > line && p[-1] >= '0' && p[-1] <= '9')
			p--;
		pid = strtol(p, NULL, 10);
		w = strchr(rwbs, 'W');
		if (pid == writer) {
			if (w)
				c->writer_w++;
			else
				c->writer_r++;
		} else if (w && !strncmp(comm, "kworker/", 8)) {
			c->flusher_w++;
			c->flusher_sectors += nr;
		} else if (w) {
			c->other_w++;
			if (!strstr(c->others, comm) &&
			    strlen(c->others) + strlen(comm) + 2 < sizeof(c->others)) {
				strcat(c->others, " ");
				strcat(c->others, comm);
			}
		}
	}
	fclose(f);
	return 0;
}

FIXTURE_VARIANT(throttle) {
	bool use_mmap;
};

FIXTURE_VARIANT_ADD(throttle, pwrite) { .use_mmap = false };
FIXTURE_VARIANT_ADD(throttle, mmap) { .use_mmap = true };

FIXTURE_SETUP(throttle)
{
	char buf[PAGE];

	ASSERT_TRUE(wps_loaded());
	ASSERT_EQ(0, slowdev_up("ext4", THROTTLE_DEV, 0, 0));
	ASSERT_EQ(0, dirty_limits_save(&self->saved));
	ASSERT_EQ(0, sh("sysctl -q vm.dirty_bytes=%d vm.dirty_background_bytes=%d",
			4 << 20, 1 << 20));
	snprintf(self->path, sizeof(self->path), SLOW_DIR "/busy");
	snprintf(self->idle, sizeof(self->idle), SLOW_DIR "/idle");
	self->fd = open(self->path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	self->idle_fd = open(self->idle, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	ASSERT_LE(0, self->fd);
	ASSERT_LE(0, self->idle_fd);
	/* The neighbour has been written once, so it has a row. */
	memset(buf, 1, sizeof(buf));
	ASSERT_EQ(PAGE, pwrite(self->idle_fd, buf, PAGE, 0));
	ASSERT_EQ(0, fsync(self->idle_fd));
	ASSERT_EQ(0, bio_trace_setup(SLOW_DIR, &self->mounted_tracefs))
		TH_LOG("no tracefs instance with block:block_bio_queue");
}

FIXTURE_TEARDOWN(throttle)
{
	bio_trace_teardown(self->mounted_tracefs);
	close(self->fd);
	close(self->idle_fd);
	dirty_limits_restore(&self->saved);
	slowdev_down();
}

TEST_F(throttle, long_write_loop_is_paused)
{
	struct wps busy0, busy1, idle0, idle1, d, di;
	struct stall_row row, none;
	struct bio_census bios;
	char buf[PAGE];
	size_t i;
	int64_t unattributed0, unattributed;
	char *map = NULL;
	long absent = 0;
	bool paused;

	memset(buf, 2, sizeof(buf));
	ASSERT_EQ(0, ftruncate(self->fd, THROTTLE_PAGES * PAGE));
	if (variant->use_mmap) {
		map = mmap(NULL, THROTTLE_PAGES * PAGE, PROT_READ | PROT_WRITE,
			   MAP_SHARED, self->fd, 0);
		ASSERT_NE(MAP_FAILED, map);
	}
	ASSERT_EQ(0, wps_read(self->path, &busy0));
	ASSERT_EQ(0, wps_read(self->idle, &idle0));
	/*
	 * The window of prediction 21: the write loop only.  Set-up's fsync,
	 * ftruncate and mmap are before it; the counter reads (which do not
	 * flush) and the census after it.
	 */
	ASSERT_EQ(0, put_file(BDP_EVENT "/filter", "pause > 0 && common_pid == %d",
			      getpid()));
	ASSERT_EQ(0, put_file(BDP_KPROBE_EVENT "/filter", "common_pid == %d",
			      getpid()));
	unattributed0 = wps_summary("bdp_unattributed");
	ASSERT_EQ(0, put_file(BDP_KPROBE_EVENT "/enable", "1"));
	ASSERT_EQ(0, put_file(BDP_EVENT "/enable", "1"));
	ASSERT_EQ(0, put_file(BIO_EVENT "/enable", "1"));
	if (variant->use_mmap) {
		absent = wps_store_pages_absent(map, THROTTLE_PAGES, 2);
		ASSERT_LT(0, absent);
	} else {
		for (i = 0; i < THROTTLE_PAGES; i++)
			ASSERT_EQ(PAGE, pwrite(self->fd, buf, PAGE, i * PAGE));
	}
	ASSERT_EQ(0, put_file(BIO_EVENT "/enable", "0"));
	ASSERT_EQ(0, put_file(BDP_EVENT "/enable", "0"));
	ASSERT_EQ(0, put_file(BDP_KPROBE_EVENT "/enable", "0"));
	unattributed = wps_summary("bdp_unattributed") - unattributed0;
	if (map)
		munmap(map, THROTTLE_PAGES * PAGE);
	ASSERT_EQ(0, wps_read(self->path, &busy1));
	ASSERT_EQ(0, wps_read(self->idle, &idle1));
	d = wps_delta(&busy1, &busy0);
	di = wps_delta(&idle1, &idle0);
	TH_LOG("%s: bdp_calls %lld throttled %lld pauses %lld pause %.1f ms "
	       "mkwrite_first %lld mkwrite_wp %lld",
	       variant->use_mmap ? "mmap" : "pwrite", (long long)d.bdp_calls,
	       (long long)d.bdp_throttled, (long long)d.bdp_pauses,
	       d.bdp_pause_ns / 1e6, (long long)d.mkwrite_first,
	       (long long)d.mkwrite_wp);

	if (variant->use_mmap) {
		/*
		 * One store per page, but a page can fault twice: the
		 * first fault's balance_dirty_pages() pause happens before
		 * the store retires, and background writeback may clean
		 * and write-protect that page meanwhile, so the store takes
		 * a write-protect fault.  Every fault still dirties and
		 * balances exactly once (fault_dirty_shared_page).  First-
		 * write faults: one per store that found no PTE (per page
		 * on order-0 folios, per folio where a fault maps it whole:
		 * 7.2).
		 */
		EXPECT_EQ(absent, d.mkwrite_first);
		EXPECT_TIMED_EQ(d.mkwrite_first + d.mkwrite_wp, d.bdp_fault_calls);
		EXPECT_EQ(d.bdp_fault_calls, d.bdp_calls);
	} else {
		EXPECT_TIMED_EQ(THROTTLE_PAGES, d.bdp_calls);
		EXPECT_EQ(0, d.mkwrite_first + d.mkwrite_wp);
	}
	EXPECT_LT(0, d.bdp_throttled);
	/*
	 * The pauses need a writer that dirties faster than the device
	 * cleans.  Under KASAN a write fault costs about 2 ms of CPU time,
	 * about the device's speed, and the mmap writer is paused seldom
	 * or never (check-debug, 2026-11-26: 224 throttles and 0 pauses,
	 * the tracer agreeing; 209 and 34, 0.7 s, in the next run); every
	 * exact check below still holds there.
	 */
	paused = !(variant->use_mmap && wps_kernel_sanitized());
	if (!paused)
		TH_LOG("KASAN kernel: a pause is predicted for production kernels only");
	if (paused)	/* not an else: EXPECT_* is not one statement */
		EXPECT_LT(0, d.bdp_pauses);
	/*
	 * Every pause the tracepoint itself reported, no more, no fewer;
	 * an unattributed throttle's pauses have no file to go to
	 * (docs/interface.md), so with one there may be fewer.
	 */
	if (!unattributed) {
		EXPECT_EQ(trace_count("balance_dirty_pages"), d.bdp_pauses);
	} else {
		EXPECT_GE(trace_count("balance_dirty_pages"), d.bdp_pauses);
	}
	/* Every entry the kprobe saw: attributed, or said to be not. */
	TH_LOG("balance_dirty_pages entries: %ld traced, %lld throttled + %lld unattributed",
	       trace_count("bdp_entry"), (long long)d.bdp_throttled,
	       (long long)unattributed);
	EXPECT_EQ(trace_count("bdp_entry"), d.bdp_throttled + unattributed);
	/* 12 MiB at ~2 MB/s with 4 MiB allowed dirty: seconds of pauses. */
	if (paused)
		EXPECT_LT(1000000000LL, d.bdp_pause_ns);
	/*
	 * The pauses are this process's, on this file: its stall row has
	 * them all, the neighbour file has no row; the pages were cleaned
	 * by the background flusher that balance_dirty_pages() started
	 * over dirty_background_bytes, and every clean has a trigger.
	 */
	ASSERT_EQ(1, stall_of(self->path, getpid(), &row));
	EXPECT_EQ(0, stall_of(self->idle, getpid(), &none));
	EXPECT_EQ(d.bdp_pauses, row.pauses);
	EXPECT_EQ(d.bdp_pause_ns, row.pause_ns);
	/*
	 * Level timing times a write fault whole, its dirty balancing
	 * included: a pure storer's pauses are inside its faults, named,
	 * and the fault's time is its named waits and its unnamed time, to
	 * the nanosecond.
	 */
	if (variant->use_mmap && wps_timing() > 0) {
		TH_LOG("mmap: fault %.1f ms: pause %.1f ms, readin %.1f ms, stable %.1f ms, wb %.1f ms, journal %.1f ms, unnamed %.1f ms",
		       row.fault_ns / 1e6, row.pause_ns / 1e6, row.readin_ns / 1e6,
		       row.stable_ns / 1e6, row.wb_ns / 1e6, row.journal_ns / 1e6,
		       row.fault_unnamed_ns / 1e6);
		EXPECT_EQ(row.fault_ns - row.fault_unnamed_ns,
			  row.stable_ns + row.wb_ns + row.journal_ns +
			  row.pause_ns + row.readin_ns + row.lock_ns);
		EXPECT_LE(row.pause_ns, row.fault_ns);
		EXPECT_LE(row.fault_cpu_ns + row.fault_runq_ns,
			  row.fault_unnamed_ns);
	}
	if (paused)
		EXPECT_LT(0, row.pause_max_ns);
	EXPECT_GE(row.pause_ns, row.pause_max_ns);
	EXPECT_EQ(row.pause_max_ns, busy1.bdp_pause_max_ns);
	EXPECT_LT(0, d.mkclean_flusher_background);
	EXPECT_EQ(d.mkclean_calls, d.mkclean_msync + d.mkclean_fsync +
		  d.mkclean_sync_file_range + d.mkclean_sync +
		  d.mkclean_flusher_periodic + d.mkclean_flusher_background +
		  d.mkclean_reclaim + d.mkclean_other);
	EXPECT_TIMED_EQ(0, di.bdp_calls);
	EXPECT_EQ(0, di.bdp_throttled);
	EXPECT_EQ(0, di.bdp_pauses);
	EXPECT_EQ(0, di.bdp_pause_ns);

	/*
	 * Prediction 21: paused (above) yet no writeback of its own.  On
	 * 6.1 and 6.12 balance_dirty_pages() calls only
	 * wb_start_background_writeback() (a wakeup of wb_workfn) and
	 * io_schedule_timeout(); the 5.4-era claim that the throttled task
	 * writes pages back itself predicts write bios with its pid.  The
	 * witness: every write bio to the device in the window, by
	 * submitter.  For a 12 MiB loop to finish under the 4 MiB limit
	 * (dirty + writeback pages count against it) about 8 MiB must have
	 * been written back; ext4 marks pages writeback a bio (up to 1 MiB)
	 * before queueing it, so the flusher (a kworker) queued at least
	 * half the file; jbd2 may add its commits.
	 */
	ASSERT_EQ(0, bio_census(getpid(), &bios));
	TH_LOG("%s: write bios in the loop: writer (pid %d) %ld, flusher %ld "
	       "(%ld KiB), others %ld (%s); writer reads %ld; trace entries "
	       "%ld/%ld; mkclean_calls %lld background %lld periodic %lld",
	       variant->use_mmap ? "mmap" : "pwrite", getpid(), bios.writer_w,
	       bios.flusher_w, bios.flusher_sectors / 2, bios.other_w,
	       bios.others[0] ? bios.others + 1 : "none", bios.writer_r,
	       bios.in_buffer, bios.written, (long long)d.mkclean_calls,
	       (long long)d.mkclean_flusher_background,
	       (long long)d.mkclean_flusher_periodic);
	/* Nothing dropped: else a writer bio could have been lost. */
	EXPECT_EQ(bios.written, bios.in_buffer);
	EXPECT_LT(0, bios.written);
	EXPECT_EQ(0, bios.writer_w);
	EXPECT_LT(0, bios.flusher_w);
	EXPECT_LE(THROTTLE_PAGES / 2 * 8L, bios.flusher_sectors);
	/*
	 * wpstat's view of the same window: every folio_mkclean on the file
	 * was the flusher's (background, or periodic if it woke for that);
	 * none by msync, fsync, sync_file_range, sync, reclaim or unknown.
	 */
	EXPECT_LT(0, d.mkclean_calls);
	EXPECT_EQ(d.mkclean_calls, d.mkclean_flusher_background +
		  d.mkclean_flusher_periodic);
	EXPECT_EQ(0, d.mkclean_msync + d.mkclean_fsync +
		  d.mkclean_sync_file_range + d.mkclean_sync +
		  d.mkclean_reclaim + d.mkclean_other);
}

/*
 * A writer that alternates between two files: a 4 KiB pwrite of a new
 * page of the slow device's file (A) and a rewrite of one page of a file
 * on another device (B).  Each pwrite makes one ratelimited call for its
 * file, and balance_dirty_pages() is entered from some of them: which
 * ones depends on the kernel (6.12 makes the call before write_begin, so
 * after A's dirtying comes B's call; 5.10 and 6.1 after write_end) and on
 * each device's limits (a wb over its limit lowers its calls' ratelimit).
 * Whatever the kernel does, each entry is the file of the call it came
 * from (balance_dirty_pages_ratelimited(mapping)), at both levels: at
 * counts the folio the task dirtied last is not that (on 6.12 it is A's
 * when B's call enters).  The witness: kprobe events on the ratelimited
 * function (its mapping) and on balance_dirty_pages(), in order; each
 * entry belongs to the call traced before it.
 * Expected: bdp_throttled of A and B equal the traced entries after A's
 * and B's calls, less what bdp_unattributed took; both files get some
 * on every kernel measured (6.1: 232 and 5 of 237; 6.12: 131 and 149).
 */

/*
 * The entries traced after a call for the first mapping the buffer names
 * (A's: the loop starts with A) and after a call for another; an entry
 * with no call before it is an orphan.  0 or -errno.
 */
static int entries_by_call(long *a, long *b, long *orphans)
{
	char line[512], first[32] = "", cur[32] = "";
	const char *m;
	FILE *f;

	*a = *b = *orphans = 0;
	f = fopen(BIO_TRACE "/trace", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		m = strstr(line, " mapping=");
		if (strstr(line, " bdp_rl: ") && m) {
			sscanf(m, " mapping=%31s", cur);
			if (!first[0])
				strcpy(first, cur);	/* the loop starts with A */
		} else if (strstr(line, " bdp_entry: ")) {
			if (!cur[0])
				(*orphans)++;
			else if (!strcmp(cur, first))
				(*a)++;
			else
				(*b)++;
		}
	}
	fclose(f);
	return 0;
}

TEST_F(throttle, alternating_writer_throttles_the_file_of_the_call)
{
	struct wps a0, a1, b0, b1, da, db;
	char buf[PAGE], bpath[256];
	int64_t unattributed0, unattributed;
	long traced_a, traced_b, orphans;
	int bfd, ret;
	size_t i;

	if (variant->use_mmap)
		SKIP(return, "the alternation is of write(2)s: the pwrite variant runs it");
	append_file(TRACEFS "/kprobe_events", "-:" BDP_RL_KPROBE "\n");
	ret = append_file(TRACEFS "/kprobe_events", "p:" BDP_RL_KPROBE
			  " balance_dirty_pages_ratelimited_flags mapping=%di:x64\n");
	if (ret)	/* 5.10: no _flags variant */
		ret = append_file(TRACEFS "/kprobe_events", "p:" BDP_RL_KPROBE
				  " balance_dirty_pages_ratelimited mapping=%di:x64\n");
	ASSERT_EQ(0, ret) TH_LOG("no kprobe event on the ratelimited function");
	bfd = wps_scratch("ext4", "alternate", 1, bpath, sizeof(bpath));
	ASSERT_LE(0, bfd);
	memset(buf, 3, sizeof(buf));
	ASSERT_EQ(PAGE, pwrite(bfd, buf, PAGE, 0));
	ASSERT_EQ(0, ftruncate(self->fd, THROTTLE_PAGES * PAGE));
	ASSERT_EQ(0, wps_read(self->path, &a0));
	ASSERT_EQ(0, wps_read(bpath, &b0));
	ASSERT_EQ(0, put_file(BDP_KPROBE_EVENT "/filter", "common_pid == %d",
			      getpid()));
	ASSERT_EQ(0, put_file(BDP_RL_KPROBE_EVENT "/filter", "common_pid == %d",
			      getpid()));
	unattributed0 = wps_summary("bdp_unattributed");
	ASSERT_EQ(0, put_file(BDP_RL_KPROBE_EVENT "/enable", "1"));
	ASSERT_EQ(0, put_file(BDP_KPROBE_EVENT "/enable", "1"));
	for (i = 0; i < THROTTLE_PAGES; i++) {
		ASSERT_EQ(PAGE, pwrite(self->fd, buf, PAGE, i * PAGE));
		ASSERT_EQ(PAGE, pwrite(bfd, buf, PAGE, 0));
	}
	ASSERT_EQ(0, put_file(BDP_KPROBE_EVENT "/enable", "0"));
	ASSERT_EQ(0, put_file(BDP_RL_KPROBE_EVENT "/enable", "0"));
	unattributed = wps_summary("bdp_unattributed") - unattributed0;
	ASSERT_EQ(0, wps_read(self->path, &a1));
	ASSERT_EQ(0, wps_read(bpath, &b1));
	close(bfd);
	unlink(bpath);
	ASSERT_EQ(0, entries_by_call(&traced_a, &traced_b, &orphans));
	da = wps_delta(&a1, &a0);
	db = wps_delta(&b1, &b0);
	TH_LOG("entries traced after A's calls %ld, after B's %ld; counted A %lld, B %lld, %lld unattributed",
	       traced_a, traced_b, (long long)da.bdp_throttled,
	       (long long)db.bdp_throttled, (long long)unattributed);
	/* The buffer held every event: each entry follows a call. */
	ASSERT_EQ(0, orphans);
	EXPECT_LT(0, traced_a + traced_b);
	EXPECT_LE(da.bdp_throttled, traced_a);
	EXPECT_LE(db.bdp_throttled, traced_b);
	EXPECT_EQ(traced_a + traced_b,
		  da.bdp_throttled + db.bdp_throttled + unattributed);
}

/* ---- the whole write fault: a store that waits for its page's read ------- */

/*
 * A store to a page that is not in the page cache faults, and
 * filemap_fault() reads the page (here READIN_DELAY_MS late: dm-delay on
 * reads), dropping the mmap or VMA lock to wait, and has the fault
 * retried (VM_FAULT_RETRY; the retry carries FAULT_FLAG_TRIED, which
 * makes mm_account_fault() count it major); only the retry runs
 * page_mkwrite.  With MADV_RANDOM there is no read-around: each of the
 * READIN_PAGES stores reads its own page.
 * Expected:
 *   cold: readin_waits == mkwrite_first == READIN_PAGES, in the inode
 *   row and the writer's stall row, and ru_majflt moves by as many (the
 *   kernel's own count); at level timing each read-in is at least the
 *   device's delay less a tick (readin_ns >= READIN_PAGES *
 *   (READIN_DELAY_MS - WPS_TICK_MS)), the
 *   fault time holds it (fault_ns >= readin_ns), and fault_ns less the
 *   unnamed time is the named waits to the nanosecond.
 *   warm (every page read first): no read-in, the same first-write
 *   faults; ru_majflt does not move, except on 5.10, whose
 *   fault_dirty_shared_page() drops the mmap lock for dirty balancing
 *   and has every shared write fault retried (FAULT_FLAG_TRIED).
 */
#define READIN_PAGES	16
#define READIN_DELAY_MS	50

FIXTURE(readin) {
	char path[256];
	int fd;
};

FIXTURE_VARIANT(readin) {
	bool cold;
};

FIXTURE_VARIANT_ADD(readin, cold) { .cold = true };
FIXTURE_VARIANT_ADD(readin, warm) { .cold = false };

FIXTURE_SETUP(readin)
{
	unsigned char vec[READIN_PAGES];
	char buf[PAGE], *m;
	int i, resident = 0;

	ASSERT_TRUE(wps_loaded());
	ASSERT_EQ(0, slowdev_up_rw("ext4", "", READIN_DELAY_MS, 0, 0))
		TH_LOG("cannot set up ext4 on null_blk behind dm-delay");
	snprintf(self->path, sizeof(self->path), SLOW_DIR "/readin");
	self->fd = open(self->path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	ASSERT_LE(0, self->fd);
	/* Blocks allocated and written: a read-in reads the device. */
	ASSERT_EQ(0, pwrite_pages(self->fd, 0, READIN_PAGES, 1));
	ASSERT_EQ(0, fsync(self->fd));
	if (variant->cold) {
		ASSERT_EQ(0, posix_fadvise(self->fd, 0, 0, POSIX_FADV_DONTNEED));
	} else {
		for (i = 0; i < READIN_PAGES; i++)
			ASSERT_EQ(PAGE, pread(self->fd, buf, PAGE, i * PAGE));
	}
	m = mmap(NULL, READIN_PAGES * PAGE, PROT_READ, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	ASSERT_EQ(0, mincore(m, READIN_PAGES * PAGE, vec));
	munmap(m, READIN_PAGES * PAGE);
	for (i = 0; i < READIN_PAGES; i++)
		resident += vec[i] & 1;
	ASSERT_EQ(variant->cold ? 0 : READIN_PAGES, resident);
}

FIXTURE_TEARDOWN(readin)
{
	close(self->fd);
	slowdev_down();
}

TEST_F(readin, store_waits_for_its_page)
{
	const int64_t n = variant->cold ? READIN_PAGES : 0;
	struct rusage ru0, ru1;
	struct wps before, d;
	struct stall_row row;
	long majflt;
	char *map;

	map = mmap(NULL, READIN_PAGES * PAGE, PROT_READ | PROT_WRITE,
		   MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, madvise(map, READIN_PAGES * PAGE, MADV_RANDOM));
	ASSERT_EQ(0, wps_read(self->path, &before));
	ASSERT_EQ(0, getrusage(RUSAGE_SELF, &ru0));
	wps_store_pages(map, READIN_PAGES, 2);
	ASSERT_EQ(0, getrusage(RUSAGE_SELF, &ru1));
	majflt = ru1.ru_majflt - ru0.ru_majflt;
	d = WPS_SINCE(self->path, &before);
	ASSERT_EQ(1, stall_of(self->path, getpid(), &row));
	if (wps_timing() > 0)
		TH_LOG("%s: %lld first-write faults, %lld read-ins (%.1f ms, worst %.1f ms), fault %.1f ms, unnamed %.1f ms; ru_majflt %ld",
		       variant->cold ? "cold" : "warm",
		       (long long)d.mkwrite_first, (long long)d.readin_waits,
		       row.readin_ns / 1e6, row.readin_max_ns / 1e6,
		       row.fault_ns / 1e6, row.fault_unnamed_ns / 1e6, majflt);
	else	/* no times at level counts */
		TH_LOG("%s: %lld first-write faults, %lld read-ins; ru_majflt %ld",
		       variant->cold ? "cold" : "warm",
		       (long long)d.mkwrite_first, (long long)d.readin_waits,
		       majflt);
	EXPECT_EQ(READIN_PAGES, d.mkwrite_first);
	EXPECT_EQ(0, d.mkwrite_wp);
	EXPECT_EQ(n, d.readin_waits);
	EXPECT_EQ(READIN_PAGES, row.fault_first);
	EXPECT_EQ(n, row.readin_waits);
	if (variant->cold || wps_kernel_at_least(5, 11))
		EXPECT_EQ(READIN_PAGES * variant->cold, majflt);
	if (wps_timing() > 0) {
		EXPECT_EQ(d.readin_wait_ns, row.readin_ns);
		/* Each read: the device's delay, less a tick (WPS_TICK_MS). */
		EXPECT_LE(n * (READIN_DELAY_MS - WPS_TICK_MS) * 1000000LL,
			  row.readin_ns);
		if (variant->cold)
			EXPECT_LE((READIN_DELAY_MS - WPS_TICK_MS) * 1000000LL,
				  row.readin_max_ns);
		EXPECT_LE(row.readin_ns, row.fault_ns);
		EXPECT_EQ(row.fault_ns - row.fault_unnamed_ns,
			  row.stable_ns + row.wb_ns + row.journal_ns +
			  row.pause_ns + row.readin_ns + row.lock_ns);
		EXPECT_LE(row.fault_cpu_ns + row.fault_runq_ns,
			  row.fault_unnamed_ns);
		EXPECT_EQ(d.mkwrite_ns, row.fault_ns);
		/* The sleep for its own read is the read-in's, not a lock's. */
		EXPECT_EQ(0, row.lock_waits);
	} else {
		EXPECT_EQ(-1, d.readin_wait_ns);
		EXPECT_EQ(-1, row.readin_ns);
	}
	munmap(map, READIN_PAGES * PAGE);
}

/* ---- the whole write fault: a store that waits for another's read -------- */

/*
 * A store to a page another task is reading (it is in the page cache,
 * locked until the read ends: here LOCK_DELAY_MS late, dm-delay on
 * reads) faults, and filemap_fault() finds the page and sleeps for its
 * lock (lock_folio_maybe_drop_mmap() -> __folio_lock_killable(), having
 * dropped the mmap or VMA lock), then has the fault retried
 * (VM_FAULT_RETRY, without VM_FAULT_MAJOR: it read nothing itself).
 * How the kernel retries decides what the fault is:
 *   6.4 and later (per-VMA locks, x86's do_user_addr_fault()): the
 *     retry under mmap_lock carries FAULT_FLAG_TRIED only after a major
 *     fault, so this one stays minor: lock_waits == LOCK_PAGES at level
 *     timing, readin_waits 0, ru_majflt 0;
 *   5.10 and 6.1: every retry carries FAULT_FLAG_TRIED, which makes it
 *     major (mm_account_fault()) and a read-in to wpstat:
 *     readin_waits == ru_majflt == LOCK_PAGES, lock_waits 0 (a sleep on
 *     the lock before a read-in is the read-in's time).  On 5.10
 *     ru_majflt witnesses nothing here: it counts a store made after the
 *     read too, whose fault_dirty_shared_page() has it retried (see
 *     readin above; seen 2026-11-29, 4 of 4, with readin_waits 0, as it
 *     should be); readin_waits is the check there.
 * Either way the sleep is named, and fault_ns less the unnamed time is
 * the named waits to the nanosecond.  Each store follows its reader into
 * the read (the reader's thread asleep on the page: its wchan); the read
 * has LOCK_DELAY_MS to run, the store needs microseconds.  ru_majflt is
 * taken around each store alone, so that no other fault of this program
 * (its text, its threads' stacks) is counted with the stores'.
 */
#define LOCK_PAGES	4
#define LOCK_DELAY_MS	300
#define LOCK_TRIES	20	/* reads of one page that end unseen, at most */

FIXTURE(lockwait) {
	char path[256];
	int fd;
};

FIXTURE_SETUP(lockwait)
{
	ASSERT_TRUE(wps_loaded());
	ASSERT_EQ(0, slowdev_up_rw("ext4", "", LOCK_DELAY_MS, 0, 0))
		TH_LOG("cannot set up ext4 on null_blk behind dm-delay");
	snprintf(self->path, sizeof(self->path), SLOW_DIR "/lockwait");
	self->fd = open(self->path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, pwrite_pages(self->fd, 0, LOCK_PAGES, 1));
	ASSERT_EQ(0, fsync(self->fd));
	ASSERT_EQ(0, posix_fadvise(self->fd, 0, 0, POSIX_FADV_DONTNEED));
}

FIXTURE_TEARDOWN(lockwait)
{
	close(self->fd);
	slowdev_down();
}

struct page_reader {
	int fd;
	off_t off;
	volatile pid_t tid;
	ssize_t got;
	bool done;
};

/* One page by pread(2), no read-around (POSIX_FADV_RANDOM on its fd). */
static void *read_one_page(void *arg)
{
	struct page_reader *r = arg;
	char buf[PAGE];

	r->tid = gettid();
	r->got = pread(r->fd, buf, PAGE, r->off);
	__atomic_store_n(&r->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* Whether page @i of @map is in the page cache; an error says yes. */
static bool page_cached(char *map, int i)
{
	return resident_pages(map + (size_t)i * PAGE, 1) != 0;
}

/*
 * Whether reader thread @tid sleeps in its read, for the page it put in
 * the cache and locked: its wchan is the page wait
 * (folio_wait_bit_common), not a fault on this program's text or any
 * other sleep.  Before 5.16 x86's wchan needs frame pointers, which
 * Debian's ORC kernels lack (it reads 0): there, its stack (root only)
 * waits on a page bit inside the buffered read.  Not mincore(): it shows
 * a page only once uptodate, after the read.
 */
static bool reader_asleep_in_read(pid_t tid)
{
	char path[64], buf[4096];

	if (wps_kernel_at_least(5, 16)) {
		snprintf(path, sizeof(path), "/proc/self/task/%d/wchan", tid);
		return wps_slurp(path, buf, sizeof(buf)) > 0 &&
		       !strncmp(buf, "folio_wait_bit_common", 21);
	}
	snprintf(path, sizeof(path), "/proc/self/task/%d/stack", tid);
	return wps_slurp(path, buf, sizeof(buf)) > 0 &&
	       strstr(buf, "wait_on_page_bit") &&
	       strstr(buf, "generic_file_buffered_read");
}

TEST_F(lockwait, store_waits_for_another_tasks_read)
{
	const bool vma_lock = wps_kernel_at_least(6, 4);
	const int64_t locks = vma_lock ? LOCK_PAGES : 0;
	const int64_t readins = vma_lock ? 0 : LOCK_PAGES;
	struct page_reader r = { 0 };
	struct rusage ru0, ru1;
	long majflt = 0;
	struct wps before, d;
	struct stall_row row;
	pthread_t reader;
	char *map, path[64];
	int i;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", self->fd);
	r.fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, r.fd);
	ASSERT_EQ(0, posix_fadvise(r.fd, 0, 0, POSIX_FADV_RANDOM));
	map = mmap(NULL, LOCK_PAGES * PAGE, PROT_READ | PROT_WRITE,
		   MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, madvise(map, LOCK_PAGES * PAGE, MADV_RANDOM));
	/* Run each helper once so that none faults on its text in the loop. */
	(void)page_cached(map, 0);
	(void)reader_asleep_in_read(gettid());
	ASSERT_EQ(0, getrusage(RUSAGE_THREAD, &ru0));
	ASSERT_EQ(0, getrusage(RUSAGE_THREAD, &ru1));
	ASSERT_EQ(0, wps_read(self->path, &before));
	for (i = 0; i < LOCK_PAGES; i++) {
		bool asleep = false;
		int tries;

		for (tries = 0; !asleep; tries++) {
			ASSERT_GT(LOCK_TRIES, tries)
				TH_LOG("page %d: %d reads ended before this thread saw them asleep",
				       i, tries);
			/*
			 * The page must be read, not found (the debug kernel's
			 * reader of page 1 of 4 once never slept: most likely its
			 * page was cached; 2026-11-29).
			 */
			if (page_cached(map, i))
				ASSERT_EQ(0, posix_fadvise(self->fd, (off_t)i * PAGE, PAGE,
							   POSIX_FADV_DONTNEED));
			ASSERT_FALSE(page_cached(map, i))
				TH_LOG("page %d stays in the page cache", i);
			r.off = (off_t)i * PAGE;
			r.tid = 0;
			r.done = false;
			ASSERT_EQ(0, pthread_create(&reader, NULL, read_one_page, &r));
			/*
			 * Store once the reader sleeps in its read: the page is in
			 * the cache, locked for LOCK_DELAY_MS.  A read that ends
			 * unseen (a guest descheduled for that long) is tried again.
			 */
			while (!__atomic_load_n(&r.done, __ATOMIC_ACQUIRE)) {
				if (r.tid && reader_asleep_in_read(r.tid)) {
					asleep = true;
					break;
				}
				usleep(1000);
			}
			if (asleep) {
				ASSERT_EQ(0, getrusage(RUSAGE_THREAD, &ru0));
				map[i * PAGE] = 2;
				ASSERT_EQ(0, getrusage(RUSAGE_THREAD, &ru1));
				majflt += ru1.ru_majflt - ru0.ru_majflt;
			}
			ASSERT_EQ(0, pthread_join(reader, NULL));
			ASSERT_EQ(PAGE, r.got);
			if (!asleep)
				TH_LOG("page %d: the read ended unseen; again", i);
		}
	}
	d = WPS_SINCE(self->path, &before);
	ASSERT_EQ(1, stall_of(self->path, getpid(), &row));
	TH_LOG("%lld first-write faults: %lld page-lock sleeps (%.1f ms, worst %.1f ms), %lld read-ins (%.1f ms); fault %.1f ms, unnamed %.1f ms; the stores' ru_majflt %ld",
	       (long long)d.mkwrite_first, (long long)row.lock_waits,
	       row.lock_ns / 1e6, row.lock_max_ns / 1e6,
	       (long long)row.readin_waits, row.readin_ns / 1e6,
	       row.fault_ns / 1e6, row.fault_unnamed_ns / 1e6, majflt);
	EXPECT_EQ(LOCK_PAGES, d.mkwrite_first);
	EXPECT_EQ(0, d.mkwrite_wp);
	EXPECT_EQ(readins, d.readin_waits);
	EXPECT_EQ(readins, row.readin_waits);
	/* The kernel's own count of the stores' major faults, store by store. */
	EXPECT_EQ(readins, majflt);
	if (wps_timing() > 0) {
		EXPECT_EQ(locks, d.lock_waits);
		EXPECT_EQ(locks, row.lock_waits);
		EXPECT_EQ(d.lock_wait_ns, row.lock_ns);
		if (vma_lock) {
			EXPECT_LT(0, row.lock_ns);
			EXPECT_LE(row.lock_max_ns, row.lock_ns);
			EXPECT_LE(row.lock_ns, row.fault_ns);
		} else {
			EXPECT_LT(0, row.readin_ns);
		}
		EXPECT_EQ(row.fault_ns - row.fault_unnamed_ns,
			  row.stable_ns + row.wb_ns + row.journal_ns +
			  row.pause_ns + row.readin_ns + row.lock_ns);
	} else {
		EXPECT_EQ(-1, d.lock_waits);
		EXPECT_EQ(-1, row.lock_ns);
	}
	munmap(map, LOCK_PAGES * PAGE);
	close(r.fd);
}

/* ---- a reset in the middle of a wait ------------------------------------- */

/*
 * A wait is counted where it starts (the folio_wait_writeback
 * tracepoint, stable_waits) and timed where it ends (folio_wait_bit()'s
 * return, stable_wait_ns); an event's time goes only to the tables its
 * count went to, so a wait that straddles a reset cannot leave its count
 * in the old tables and its time in the new ones (stable_waits 0,
 * stable_wait_ns about a second).  A store waits about a second for its
 * page's writeback (stable writes, a 1 s device), and a reset comes after
 * 300 ms.
 * Expected: after the wait the new tables hold nothing of it (no wait,
 * no fault, no time: the inode row and the storer's stall row, if any,
 * all zero), and the file's stall rows add up to its inode row.
 */
#define STRADDLE_DELAY_MS	1000
#define STRADDLE_PAGES		4

FIXTURE(straddle) {
	char path[256];
	int fd;
	char *map;
};

FIXTURE_SETUP(straddle)
{
	ASSERT_TRUE(wps_loaded());
	ASSERT_EQ(0, slowdev_up("ext4", "", STRADDLE_DELAY_MS, 1))
		TH_LOG("cannot set up ext4 on null_blk behind dm-delay");
	snprintf(self->path, sizeof(self->path), SLOW_DIR "/straddle");
	self->fd = open(self->path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ftruncate(self->fd, STRADDLE_PAGES * PAGE));
	self->map = map_shared(self->fd, STRADDLE_PAGES);
	ASSERT_NE(NULL, self->map);
}

FIXTURE_TEARDOWN(straddle)
{
	munmap(self->map, STRADDLE_PAGES * PAGE);
	close(self->fd);
	slowdev_down();
}

TEST_F(straddle, reset_during_a_stable_wait)
{
	struct stall_row rows[8];
	int64_t faults = 0, waits = 0, wait_ns = 0, fault_ns = 0;
	uint64_t t0, waited;
	struct wps w;
	int status, n, i;
	pid_t storer;

	wps_store_pages(self->map, STRADDLE_PAGES, 1);
	ASSERT_EQ(0, fsync(self->fd));
	wps_store_pages(self->map, STRADDLE_PAGES, 2);
	/* Writeback in flight for a second; the storer meets it at once. */
	ASSERT_EQ(0, sync_file_range(self->fd, 0, 0, SYNC_FILE_RANGE_WRITE));
	t0 = wpstat_now_ns();
	storer = fork();
	ASSERT_LE(0, storer);
	if (!storer) {
		*(volatile char *)self->map = 3;
		_exit(0);
	}
	usleep(300 * 1000);
	ASSERT_EQ(0, wps_control("reset"));
	ASSERT_EQ(storer, waitpid(storer, &status, 0));
	waited = wpstat_now_ns() - t0;
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	ASSERT_EQ(0, wps_read(self->path, &w));
	n = read_stalls(self->path, rows, 8);
	ASSERT_LE(0, n);
	for (i = 0; i < n; i++) {
		TH_LOG("row: tgid %ld faults %lld stable %lld %.1f ms fault %.1f ms",
		       rows[i].tgid, (long long)(rows[i].fault_first + rows[i].fault_wp),
		       (long long)rows[i].stable_waits, rows[i].stable_ns / 1e6,
		       rows[i].fault_ns / 1e6);
		faults += rows[i].fault_first + rows[i].fault_wp;
		waits += rows[i].stable_waits;
		wait_ns += rows[i].stable_ns;
		fault_ns += rows[i].fault_ns > 0 ? rows[i].fault_ns : 0;
	}
	TH_LOG("store took %.1f ms; after the reset: stable_waits %lld, stable_wait_ns %.1f ms, mkwrite_wp %lld, mkwrite_ns %.1f ms",
	       waited / 1e6, (long long)w.stable_waits, w.stable_wait_ns / 1e6,
	       (long long)w.mkwrite_wp, w.mkwrite_ns / 1e6);
	/* The store did wait across the reset. */
	ASSERT_LE(STRADDLE_DELAY_MS / 2 * 1000000ULL, waited);
	EXPECT_EQ(0, w.stable_waits);
	EXPECT_EQ(0, w.stable_wait_ns);
	EXPECT_EQ(0, w.mkwrite_first + w.mkwrite_wp);
	EXPECT_EQ(0, faults);
	EXPECT_EQ(0, waits);
	EXPECT_EQ(0, wait_ns);
	EXPECT_EQ(0, fault_ns);
	if (wps_timing() > 0)
		EXPECT_EQ(0, w.mkwrite_ns);
}

/* ---- a level switch while tasks sleep inside timed scopes ----------------- */

/*
 * A task asleep inside a timed scope (a write fault) when level timing's
 * return probes are unregistered never runs their return handler, and
 * nothing at level counts would clear the scope: its task context would
 * stay held until the thread exited.  The switch drops every such scope
 * under stop_machine().  SCOPE_THREADS writer threads, each storing to a
 * shared mapping of a file of its own, are throttled in
 * balance_dirty_pages() inside their write faults
 * (fault_dirty_shared_page) at level timing; the level goes to counts;
 * the writers stop storing and stay alive.
 * Expected: task_contexts_used falls back to what other tasks hold (a
 * handful), not SCOPE_THREADS (where it stays if the switch keeps the
 * scopes).
 */
#define SCOPE_THREADS	1000
#define SCOPE_SPARE	32
#define SCOPE_PAGES	64	/* per writer: 250 MiB, 64x the dirty limit */

struct scope_writers {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool go, stop, release;
	int parked;
};

/*
 * Each writer's mapping is made, and every thread created (its stack is
 * an mmap() too), before any writer stores: an mmap() takes the mm's lock
 * for writing, and queued behind a thousand faults asleep in dirty
 * throttling it stalled every later fault (5.10: hung tasks).
 */
struct scope_writer {
	struct scope_writers *all;
	int fd;
	char *map;
};

static void *scope_writer_fn(void *arg)
{
	struct scope_writer *w = arg;
	struct scope_writers *all = w->all;
	unsigned int i = 0;

	pthread_mutex_lock(&all->lock);
	while (!all->go)
		pthread_cond_wait(&all->cond, &all->lock);
	pthread_mutex_unlock(&all->lock);
	while (!__atomic_load_n(&all->stop, __ATOMIC_RELAXED))
		w->map[(i++ % SCOPE_PAGES) * PAGE] = 5;
	pthread_mutex_lock(&all->lock);
	all->parked++;
	pthread_cond_broadcast(&all->cond);
	while (!all->release)
		pthread_cond_wait(&all->cond, &all->lock);
	pthread_mutex_unlock(&all->lock);
	return NULL;
}

FIXTURE(scopes) {
	struct dirty_limits saved;
	bool switched;
};

FIXTURE_SETUP(scopes)
{
	/*
	 * A thousand sleepers inside their faults: as many return-probe
	 * instances (the default, 256, follows 256 at once; the rest would
	 * be counted in missed_fault, untimed and holding no scope).
	 */
	ASSERT_RELOAD("krp_instances=1024");
	ASSERT_LE(0, wps_timing());
	self->switched = false;
	ASSERT_EQ(0, slowdev_up("ext4", THROTTLE_DEV, 0, 0));
	ASSERT_EQ(0, dirty_limits_save(&self->saved));
	ASSERT_EQ(0, sh("sysctl -q vm.dirty_bytes=%d vm.dirty_background_bytes=%d",
			4 << 20, 1 << 20));
	if (!wps_timing()) {
		ASSERT_EQ(0, wps_control("level timing"));
		self->switched = true;
	}
}

FIXTURE_TEARDOWN(scopes)
{
	dirty_limits_restore(&self->saved);
	slowdev_down();
	wps_reload(NULL);
}

TEST_F(scopes, level_switch_releases_sleepers_contexts)
{
	static struct scope_writer w[SCOPE_THREADS];
	static pthread_t tid[SCOPE_THREADS];
	struct scope_writers all = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
	};
	int64_t used_throttled, used_after, throttled0;
	pthread_attr_t attr;
	char path[300];
	int i, started = 0, tries;

	throttled0 = wps_summary("bdp_throttled");
	ASSERT_EQ(0, pthread_attr_init(&attr));
	ASSERT_EQ(0, pthread_attr_setstacksize(&attr, 64 * 1024));
	for (i = 0; i < SCOPE_THREADS; i++) {
		snprintf(path, sizeof(path), SLOW_DIR "/w%d", i);
		w[i].all = &all;
		w[i].fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		ASSERT_LE(0, w[i].fd);
		ASSERT_EQ(0, ftruncate(w[i].fd, SCOPE_PAGES * PAGE));
		w[i].map = mmap(NULL, SCOPE_PAGES * PAGE, PROT_READ | PROT_WRITE,
				MAP_SHARED, w[i].fd, 0);
		ASSERT_NE(MAP_FAILED, w[i].map);
	}
	for (i = 0; i < SCOPE_THREADS; i++) {
		if (pthread_create(&tid[i], &attr, scope_writer_fn, &w[i]))
			break;
		started++;
	}
	pthread_mutex_lock(&all.lock);
	all.go = true;
	pthread_cond_broadcast(&all.cond);
	pthread_mutex_unlock(&all.lock);
	ASSERT_LE(SCOPE_THREADS / 2, started);
	/* Until most of them sleep in dirty throttling, inside their scopes. */
	for (tries = 0; tries < 60; tries++) {
		sleep(1);
		used_throttled = wps_summary("task_contexts_used");
		if (used_throttled >= started / 2 &&
		    wps_summary("bdp_throttled") - throttled0 >= started)
			break;
	}
	TH_LOG("%d writers: %lld contexts used at level timing, %lld throttles",
	       started, (long long)used_throttled,
	       (long long)(wps_summary("bdp_throttled") - throttled0));
	EXPECT_LE(started / 2, used_throttled);
	ASSERT_EQ(0, wps_control("level counts"));
	/* Stop storing; every writer leaves its fault and parks, alive. */
	__atomic_store_n(&all.stop, true, __ATOMIC_RELAXED);
	pthread_mutex_lock(&all.lock);
	while (all.parked < started)
		pthread_cond_wait(&all.cond, &all.lock);
	pthread_mutex_unlock(&all.lock);
	sleep(1);
	used_after = wps_summary("task_contexts_used");
	TH_LOG("all %d parked at level counts: %lld contexts used",
	       started, (long long)used_after);
	EXPECT_GE(SCOPE_SPARE, used_after)
		TH_LOG("the writers' scopes were left holding their contexts");
	pthread_mutex_lock(&all.lock);
	all.release = true;
	pthread_cond_broadcast(&all.cond);
	pthread_mutex_unlock(&all.lock);
	for (i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	for (i = 0; i < SCOPE_THREADS; i++) {
		munmap(w[i].map, SCOPE_PAGES * PAGE);
		close(w[i].fd);
	}
	if (!self->switched)
		ASSERT_EQ(0, wps_control("level timing"));
}

/* ---- a write fault that waits for a CPU ----------------------------------- */

/*
 * What is left of a fault's time after its named waits is its CPU time,
 * its time runnable but not running, and other sleep.
 * A writer and two busy loops share one CPU (all pinned to CPU 0, nice
 * 0): the scheduler gives each about a third of it, so of the time the
 * writer spends in its faults beyond their waits, about two thirds are
 * spent runnable while a busy loop runs (sched_info.run_delay) and a
 * third on the CPU.  The writer never sleeps (a task that sleeps and
 * wakes is run at once, ahead of the busy loops): it maps a cached
 * 64-page file whose pages are dirty already, stores to each page (a
 * first-write fault each, no I/O, no dirtying, no wait), unmaps it, and
 * again, for CONTENTION_MS; its faults are most of its CPU time.
 * That is on a quiet host.  A host that also takes the guest's CPU away
 * (other guests beside it) makes the stolen time look like the writer's
 * CPU time inside the guest (QEMU TCG gives it no steal clock): measured
 * beside four other guests on 6.1, runq 447 ms and cpu 555 ms of 1003.
 * Expected (level timing): cpu + runq <= unnamed, each within the
 * writer's own totals (/proc/PID/schedstat); beside the loops the
 * run delay is at least a quarter of the unnamed time, and per fault at
 * least twice what it is alone on the CPU (CFS gives the writer a third
 * of CPU 0 beside two loops: each fault's CPU time comes with about twice
 * as much waiting).  Alone on a quiet host the faults have less run
 * delay than CPU time, but that is the host's doing, not asserted: the
 * debug kernel beside another debug guest gave runq 1184 ms, cpu 960.
 * Per fault, not as a share of the unnamed time: a host that took the
 * guest's CPU 7 to 12 times over (make check beside six other guests)
 * gave the writer alone on 5.10 625 ms of run delay in 1587 ms, a share
 * 0.39 against 0.65 beside the loops, while per fault it was 34 against
 * 178 us.
 * (A first version msynced after each pass instead: its sleeps gave it
 * the CPU back at every wake-up, and the busy loops delayed it less than
 * its own CPU time on 6.1.)
 */
#define CONTENTION_PAGES	64
#define CONTENTION_MS		3000

static void pin_to_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		_exit(3);
}

static void contention_writer(const char *path, uint64_t end_ns)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	char *m;

	pin_to_cpu0();
	if (fd < 0)
		_exit(2);
	while (wpstat_now_ns() < end_ns) {
		m = mmap(NULL, CONTENTION_PAGES * PAGE, PROT_READ | PROT_WRITE,
			 MAP_SHARED, fd, 0);
		if (m == MAP_FAILED)
			_exit(2);
		wps_store_pages(m, CONTENTION_PAGES, 1);
		munmap(m, CONTENTION_PAGES * PAGE);
	}
	_exit(0);
}

static void busy_loop(uint64_t end_ns)
{
	pin_to_cpu0();
	while (wpstat_now_ns() < end_ns)
		;
	_exit(0);
}

FIXTURE(contention) {
	char path[256];
	bool switched;
};

FIXTURE_SETUP(contention)
{
	int fd;

	ASSERT_TRUE(wps_loaded());
	ASSERT_LE(0, wps_timing());
	self->switched = false;
	if (sysconf(_SC_NPROCESSORS_ONLN) < 1)
		SKIP(return, "no CPU count");
	fd = wps_scratch("ext4", "contention", CONTENTION_PAGES, self->path,
			 sizeof(self->path));
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pwrite_pages(fd, 0, CONTENTION_PAGES, 1));
	ASSERT_EQ(0, fsync(fd));
	/* Dirty again: the writer's faults dirty nothing, start no writeback. */
	ASSERT_EQ(0, pwrite_pages(fd, 0, CONTENTION_PAGES, 2));
	close(fd);
	if (!wps_timing()) {
		ASSERT_EQ(0, wps_control("level timing"));
		self->switched = true;
	}
}

FIXTURE_TEARDOWN(contention)
{
	unlink(self->path);
	if (self->switched)
		wps_control("level counts");
}

/* A task's whole CPU time and run delay, from /proc/PID/schedstat. */
struct task_times {
	unsigned long long cpu_ns, runq_ns;
};

/*
 * Run the writer (with @hogs busy loops beside it): its stall row, and its
 * own totals, read while it is a zombie (waitid WNOWAIT): final, as the
 * scheduler accounted them at its last switch.
 */
static int contention_run(struct __test_metadata *_metadata,
			  FIXTURE_DATA(contention) *self, int hogs,
			  struct stall_row *row, struct task_times *total)
{
	uint64_t end = wpstat_now_ns() + CONTENTION_MS * 1000000ULL;
	char path[64], buf[128];
	pid_t writer, hog[2];
	siginfo_t info = { 0 };
	int i, status;

	for (i = 0; i < hogs; i++) {
		hog[i] = fork();
		if (!hog[i])
			busy_loop(end + 200 * 1000000ULL);
	}
	writer = fork();
	if (!writer)
		contention_writer(self->path, end);
	snprintf(path, sizeof(path), "/proc/%d/schedstat", writer);
	if (waitid(P_PID, writer, &info, WEXITED | WNOWAIT) ||
	    wps_slurp(path, buf, sizeof(buf)) <= 0 ||
	    sscanf(buf, "%llu %llu", &total->cpu_ns, &total->runq_ns) != 2)
		return -1;
	if (waitpid(writer, &status, 0) != writer ||
	    !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	for (i = 0; i < hogs; i++)
		waitpid(hog[i], NULL, 0);
	return stall_of(self->path, writer, row) == 1 ? 0 : -1;
}

TEST_F(contention, fault_waits_for_a_cpu)
{
	struct stall_row alone, shared;
	struct task_times alone_total, shared_total;

	ASSERT_EQ(0, contention_run(_metadata, self, 0, &alone, &alone_total));
	ASSERT_EQ(0, contention_run(_metadata, self, 2, &shared, &shared_total));
	TH_LOG("alone: %lld faults, fault %.1f ms, unnamed %.1f ms: cpu %.1f, runq %.1f (the writer's own: %.1f, %.1f)",
	       (long long)alone.fault_first, alone.fault_ns / 1e6,
	       alone.fault_unnamed_ns / 1e6, alone.fault_cpu_ns / 1e6,
	       alone.fault_runq_ns / 1e6, alone_total.cpu_ns / 1e6,
	       alone_total.runq_ns / 1e6);
	TH_LOG("beside two busy loops: %lld faults, fault %.1f ms, unnamed %.1f ms: cpu %.1f, runq %.1f (the writer's own: %.1f, %.1f)",
	       (long long)shared.fault_first, shared.fault_ns / 1e6,
	       shared.fault_unnamed_ns / 1e6, shared.fault_cpu_ns / 1e6,
	       shared.fault_runq_ns / 1e6, shared_total.cpu_ns / 1e6,
	       shared_total.runq_ns / 1e6);
	/* Within the writer's own totals (1 ms: local_clock against the rq clock). */
	EXPECT_LE(alone.fault_cpu_ns, alone_total.cpu_ns + 1000000);
	EXPECT_LE(alone.fault_runq_ns, alone_total.runq_ns + 1000000);
	EXPECT_LE(shared.fault_cpu_ns, shared_total.cpu_ns + 1000000);
	EXPECT_LE(shared.fault_runq_ns, shared_total.runq_ns + 1000000);
	ASSERT_LT(0, alone.fault_first);
	ASSERT_LT(0, shared.fault_first);
	EXPECT_LE(alone.fault_cpu_ns + alone.fault_runq_ns,
		  alone.fault_unnamed_ns);
	EXPECT_LE(shared.fault_cpu_ns + shared.fault_runq_ns,
		  shared.fault_unnamed_ns);
	EXPECT_GT(shared.fault_runq_ns * 4, shared.fault_unnamed_ns);
	ASSERT_LT(0, alone.fault_unnamed_ns);
	ASSERT_LT(0, shared.fault_unnamed_ns);
	EXPECT_GT((double)shared.fault_runq_ns /
		  (shared.fault_first + shared.fault_wp),
		  2.0 * alone.fault_runq_ns / (alone.fault_first + alone.fault_wp));
}

TEST_HARNESS_MAIN
