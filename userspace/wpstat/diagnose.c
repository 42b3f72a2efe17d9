// SPDX-License-Identifier: GPL-2.0
#include "diagnose_rules.h"
#include "parse.h"

/*
 * The rules of wpstat diagnose.  Each stall cause of a process x file row
 * that holds at least DX_MIN_SHARE of the stall time is a finding; its
 * evidence is the row's numbers plus the settings that decide the
 * mechanism (the device's stable_writes, the dirty limits, the mount
 * options), read now.  The kernel functions named are those of Linux 6.12;
 * 5.10 has the page-based names (wait_for_stable_page()).
 */


static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* ---- the rules ---------------------------------------------------------- */

/* The loaded ZFS's version and the file's mount, as evidence. */
static void dx_ev_zfs(struct dx_finding *f, const struct dx_mount *m)
{
	char version[64];

	if (dx_read_setting("/sys/module/zfs/version", version, sizeof(version)))
		dx_ev_text(f, "zfs", "/sys/module/zfs/version", "%s; %s on %s",
			   version, m->point, m->options);
}

/*
 * On ZFS a finding offers only remedies seen to help there: ZFS's mmap
 * path differs from every other filesystem's (no page_mkwrite of its own,
 * no stable pages, writeback held until the ZIL or the txg commits), so
 * a remedy measured elsewhere is no evidence for it.  A rule whose
 * remedies were measured on other filesystems keeps its first @keep
 * (those that change nothing of the filesystem's) and says why it offers
 * no more.
 */
static void dx_zfs_unmeasured(struct dx_finding *f, const struct stall_item *it,
			      int keep, const char *why)
{
	struct dx_mount m;

	memset(&m, 0, sizeof(m));
	if (!dx_mount_of(it->row->file.major, it->row->file.minor, &m) ||
	    strcmp(m.fstype, "zfs"))
		return;
	dx_ev_zfs(f, &m);
	dx_ev_text(f, "not_remedies", "docs/fs/zfs.md", "%s", why);
	if (f->nrem > keep)
		f->nrem = keep;
}

static void rule_stable(struct dx_report *r, const struct dx_input *in,
			const struct stall_item *it, uint64_t ns)
{
	enum dx_where where = dx_where_of(in->stalls, it, CAUSE_STABLE);
	struct dx_finding *f = dx_finding_new(r, "stable",
		where == DX_IN_WRITES ?
		"write(2) calls waited for pages under writeback (stable pages)" :
		where == DX_IN_BOTH ?
		"stores and write(2) calls waited for pages under writeback (stable pages)" :
		"stores waited for pages under writeback (stable pages)", ns);
	char val[32] = "?", path[PATH_MAX];
	const struct stall_list *l = in->stalls;

	if (!f)
		return;
	dx_finding_of_item(f, it);
	f->mechanism = "folio_wait_stable() (mm/page-writeback.c) makes a store to a page under writeback wait for the write to complete when the device asks for stable pages (its queue's stable_writes, read at mount: SB_I_STABLE_WRITES)";
	dx_ev_cause(f, l, it, STALL_STABLE, STALL_STABLE_NS);
	if (dx_queue_attr(it->row->file.major, it->row->file.minor,
		       "stable_writes", val, sizeof(val), path, sizeof(path)))
		dx_ev_text(f, "stable_writes", "sysfs", "%s (%s)", val, path);
	else
		dx_ev_text(f, "stable_writes", "sysfs", "not a block device's (%u:%u)",
			it->row->file.major, it->row->file.minor);
	if (!strcmp(val, "1"))
		dx_remedy(f, "every stable-page wait", "data may change while the device reads it: only where nothing checksums it in flight (no T10 PI/DIF, no iSCSI data digest, not under md RAID parity)",
		       "echo 0 > %s, then remount (the flag is read at mount)", path);
	dx_triggers(f, in, it, where);
	if (where == DX_IN_WRITES)
		dx_remedy(f, "the wait", "a copy, and the data reaches the file later",
		       "write to pages not under writeback: gather small writes in an application buffer and write it once, or append instead of rewriting the pages just synced");
	else
		dx_remedy(f, "the wait, not the fault", "a copy per write",
		       "write(2) the data instead of storing to the mapping: a write into the page cache waits the same way, but an application buffer does not");
}

static void rule_wb(struct dx_report *r, const struct dx_input *in,
		    const struct stall_item *it, uint64_t ns)
{
	struct dx_finding *f = dx_finding_new(r, "wb",
		"write faults waited for writeback below page_mkwrite", ns);
	const struct stall_list *l = in->stalls;

	if (!f)
		return;
	dx_finding_of_item(f, it);
	f->mechanism = "a wait for a page's writeback in the write path that is not a stable-page wait: btrfs_page_mkwrite() (fs/btrfs/inode.c) calls folio_wait_writeback() itself, whatever the device, since btrfs checksums what it writes; a write(2) waits there where the filesystem's write_begin does";
	dx_ev_cause(f, l, it, STALL_WB, STALL_WB_NS);
	dx_triggers(f, in, it, dx_where_of(l, it, CAUSE_WB));
	dx_remedy(f, "the wait (nodatacow files are not checksummed, but btrfs still waits)", "no checksums, no snapshots' sharing for the file",
	       "chattr +C on an empty file (nodatacow), or keep hot mapped files off btrfs");
}

/*
 * The tightest memory.max or memory.high on the way from the writer's
 * cgroup to the root, as evidence, into @where and @limit; false if none
 * is set (or the cgroup is unknown).  balance_dirty_pages() also limits a
 * task against its memcg's domain (mdtc: mem_cgroup_wb_stats() and the
 * dirty ratios of what the cgroup may still use), so a small limit
 * throttles a writer long before the global limits.
 */
static bool cgroup_limit(struct dx_finding *f, const struct dx_input *in,
			 const struct stall_item *it, char *where,
			 size_t wlen, uint64_t *limit)
{
	static const char *const files[] = { "memory.max", "memory.high" };
	char path[2 * PATH_MAX + 32], dir[PATH_MAX], val[32], *slash;
	bool found = false;
	uint64_t v;
	size_t i;

	if (!it->cgroup_path || !in->cgroup_mount)
		return false;
	snprintf(dir, sizeof(dir), "%s", it->cgroup_path);
	for (;;) {
		for (i = 0; i < 2; i++) {
			snprintf(path, sizeof(path), "%s%s/%s",
				 in->cgroup_mount, strcmp(dir, "/") ? dir : "",
				 files[i]);
			if (dx_read_setting(path, val, sizeof(val)) &&
			    !wpstat_parse_uint(val, 0, UINT64_MAX, &v) && (!found || v < *limit)) {
				*limit = v;
				snprintf(where, wlen, "%s %s", dir, files[i]);
				found = true;
			}
		}
		slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			break;
		*slash = '\0';
	}
	if (found)
		dx_ev_text(f, "cgroup", "cgroup2 memory.max, memory.high",
			"%s: %" PRIu64 " bytes at %s (the tightest up to the root)",
			it->cgroup_path, *limit, where);
	else
		dx_ev_text(f, "cgroup", "cgroup2 memory.max, memory.high",
			"%s: no memory.max or memory.high up to the root (the global limits apply)",
			it->cgroup_path);
	return found;
}

/*
 * Whether the device is slower than the writer, over an interval: any
 * pause means the writer dirtied past the freerun point faster than
 * writeback cleaned, and balance_dirty_pages() then paces it to the
 * device's write bandwidth; the share of the interval it was paused, and
 * the file's pages dirtied and cleaned per second (dirtied_pages,
 * mkclean_pages: folio_mkclean runs for every folio writeback cleans),
 * say by how much.  Since a reset there is no time to divide by.
 */
static void device_pace(struct dx_finding *f, const struct dx_input *in,
			const struct stall_item *it)
{
	const double mb = (double)sysconf(_SC_PAGESIZE) / (1 << 20);
	uint64_t pause = dx_item_val(in->stalls, it, STALL_PAUSE_NS);
	double secs = in->window_ns / 1e9;
	char paused[96];

	if (!in->window_ns)
		return;
	/*
	 * A pause counts whole in the interval where it ends, and a
	 * process's threads' pauses add up: the sum can exceed the interval,
	 * and the share is then said as all of it.
	 */
	if (pause >= in->window_ns)
		snprintf(paused, sizeof(paused),
			 "paused all of the %.1f s (%.1f s of pauses ended in it)",
			 secs, pause / 1e9);
	else
		snprintf(paused, sizeof(paused), "paused %.0f %% of the %.1f s",
			 100.0 * pause / in->window_ns, secs);
	/* Only rule_throttle calls this, for a row that paused: always yes. */
	dx_ev_text(f, "device_slower", "/proc/wpstat/stalls pause_ns; /proc/wpstat/inodes dirtied_pages, mkclean_pages",
		"yes: %s; the file's pages dirtied %.2f MiB/s, cleaned by writeback %.2f MiB/s",
		paused, dx_file_val(in->files, it, "dirtied_pages") * mb / secs,
		dx_file_val(in->files, it, "mkclean_pages") * mb / secs);
}

static void rule_throttle(struct dx_report *r, const struct dx_input *in,
			  const struct stall_item *it, uint64_t ns)
{
	struct dx_finding *f = dx_finding_new(r, "throttle",
		"dirty throttling paused the writer", ns);
	const struct stall_list *l = in->stalls;
	char ratio[32] = "?", bytes[32] = "?", bg[32] = "?", bgb[32] = "?";
	char path[PATH_MAX], maxr[32], strict[32], where[PATH_MAX + 16];
	uint64_t limit = 0;
	bool capped;

	if (!f)
		return;
	dx_finding_of_item(f, it);
	f->mechanism = "balance_dirty_pages() (mm/page-writeback.c) sleeps a task that dirties pages once the dirty pages pass the freerun point (halfway between the background and the dirty limit), longer the further over the setpoint and the slower the device writes";
	dx_ev_cause(f, l, it, STALL_PAUSE, STALL_PAUSE_NS);
	dx_read_setting("/proc/sys/vm/dirty_ratio", ratio, sizeof(ratio));
	dx_read_setting("/proc/sys/vm/dirty_bytes", bytes, sizeof(bytes));
	dx_read_setting("/proc/sys/vm/dirty_background_ratio", bg, sizeof(bg));
	dx_read_setting("/proc/sys/vm/dirty_background_bytes", bgb, sizeof(bgb));
	dx_ev_text(f, "dirty_limits", "/proc/sys/vm",
		"dirty_bytes %s, dirty_ratio %s, dirty_background_bytes %s, dirty_background_ratio %s (bytes win when not 0)",
		bytes, ratio, bgb, bg);
	snprintf(path, sizeof(path), "/sys/class/bdi/%u:%u/max_ratio",
		 it->row->file.major, it->row->file.minor);
	if (dx_read_setting(path, maxr, sizeof(maxr))) {
		snprintf(path, sizeof(path), "/sys/class/bdi/%u:%u/strict_limit",
			 it->row->file.major, it->row->file.minor);
		if (!dx_read_setting(path, strict, sizeof(strict)))
			snprintf(strict, sizeof(strict), "?");
		dx_ev_text(f, "bdi", "/sys/class/bdi",
			"max_ratio %s, strict_limit %s", maxr, strict);
	}
	device_pace(f, in, it);
	capped = cgroup_limit(f, in, it, where, sizeof(where), &limit);
	dx_remedy(f, "pauses until the device catches up", "more dirty memory; longer fsync and a larger loss on a crash",
	       "sysctl vm.dirty_bytes=<larger> vm.dirty_background_bytes=<a quarter of it> (now %s and %s; 0: the ratios apply)",
	       bytes, bgb);
	dx_remedy(f, "the cause: the writer dirties faster than the device writes", "hardware, or the workload's shape",
	       "a faster device, or fewer dirtied pages: store to fewer distinct pages per second, or write the data once instead of rewriting it");
	if (capped)
		dx_remedy(f, "throttling inside the cgroup", "the cgroup's memory",
		       "raise %s (now %" PRIu64 "): the writer's dirty limit is a share of what its cgroup may use",
		       where, limit);
	dx_zfs_unmeasured(f, it, 0,
		"none offered on ZFS: the dirty limits, a faster device and the cgroup's memory were measured on ext4 (diagnose.bats); a mapped ZFS file's pages are throttled by balance_dirty_pages() like any page cache, but ZFS writes them back through its own DMU and ZIL, and no remedy was measured there");
}

/*
 * Why lazytime does not keep the mtime update's journal wait out of a
 * write fault of @fstype on this kernel, or NULL if it does.  Under
 * lazytime generic_update_time() marks the inode I_DIRTY_TIME, and
 * __mark_inode_dirty() calls ->dirty_inode (ext4's journal;
 * xfs_fs_dirty_inode()'s transaction) only for I_DIRTY_INODE.  But ext4
 * keeps i_version always since 6.2 (ext4_init_fs_context: SB_I_VERSION),
 * as xfs v5 always did, and an mtime change forces its increment (6.12:
 * inode_update_timestamps()), which adds I_DIRTY_SYNC, until
 * inode_update_cmtime() stopped forcing it for a pure time update (7.2
 * has it; 7.0 and 7.1 are taken to lack it).  Measured with the
 * writer-next-to-an-fsync scenario: ext4 loses its journal waits under
 * lazytime on 5.10, 6.1 and 7.2 and keeps them on 6.12; xfs loses them
 * on 5.10, keeps them on 6.12, and on 6.1 the same time moves to the
 * inode lock of the fault's block mapping (xfs_ilock_for_iomap), where
 * wpstat does not name it; xfs on 7.2 has no such waits.
 */
static const char *lazytime_no_help(const char *fstype)
{
	int major = 0, minor = 0;
	bool forced;

	if (sscanf(kernel_release(), "%d.%d", &major, &minor) != 2)
		return NULL;
	forced = major == 6 ? minor >= 2 : major == 7 && minor < 2;
	if (forced)
		return "ext4 (since 6.2) and xfs keep i_version always and an mtime change forces its increment, which journals the inode";
	if (!strcmp(fstype, "xfs") && major == 6)
		return "on xfs the fault then waits for the same inode lock in its block mapping (xfs_ilock_for_iomap), as measured on 6.1";
	return NULL;
}

static void rule_journal(struct dx_report *r, const struct dx_input *in,
			 const struct stall_item *it, uint64_t ns)
{
	enum dx_where where = dx_where_of(in->stalls, it, CAUSE_JOURNAL);
	char title[96];
	struct dx_finding *f;
	const struct stall_list *l = in->stalls;
	const char *no_help;
	struct dx_mount m;
	bool lazy = false;

	snprintf(title, sizeof(title), "%s waited for the filesystem journal",
		 dx_where_subject(where));
	f = dx_finding_new(r, "journal", title, ns);
	if (!f)
		return;
	dx_finding_of_item(f, it);
	dx_ev_cause(f, l, it, STALL_JOURNAL, STALL_JOURNAL_NS);
	memset(&m, 0, sizeof(m));
	if (dx_mount_of(it->row->file.major, it->row->file.minor, &m)) {
		lazy = dx_has_option(m.options, "lazytime");
		dx_ev_text(f, "mount", "/proc/self/mountinfo", "%s on %s: %s",
			m.fstype, m.point, m.options);
	}
	if (!strcmp(m.fstype, "zfs"))
		f->mechanism = "ZFS's counterpart of a journal: the fault's mtime update (file_update_time -> zfs_dirty_inode) and zfs_write() assign a DMU transaction (dmu_tx_assign(), module/zfs/dmu_tx.c), which sleeps while the open txg is full (dmu_tx_wait) or the dirty data is over zfs_delay_min_dirty_percent of zfs_dirty_data_max (dmu_tx_delay)";
	else if (!strcmp(m.fstype, "xfs"))
		f->mechanism = "xfs_vn_update_time() (fs/xfs/xfs_iops.c), the mtime update of a write fault (__xfs_filemap_fault -> file_update_time) and of write(2) (file_modified()), logs it in a transaction of its own: it sleeps for log space (xfs_trans_alloc) or for the inode lock (xfs_ilock(XFS_ILOCK_EXCL)) while an fsync holds it to force the log";
	else
		f->mechanism = "ext4_page_mkwrite(), and write(2) in file_modified(), update mtime (file_update_time -> ext4_dirty_inode), as write(2) updates the size of a file it grows (generic_perform_write -> write_end), which takes journal write access to the inode's buffer (jbd2_journal_get_write_access -> do_get_write_access, fs/jbd2/transaction.c) and sleeps while a commit, such as an fsync's, is writing that buffer, or waits for a locked transaction (start_this_handle)";
	no_help = lazytime_no_help(m.fstype);
	if (!strcmp(m.fstype, "zfs"))
		dx_ev_text(f, "lazytime", "zfs.bats, docs/fs/zfs.md",
			   "not offered on ZFS: not seen to help there (in the writer-next-to-an-fsync scenario the faults slept in dmu_tx_assign() too rarely, 0-2 times a run, for lazytime to show an effect)");
	else if (no_help)
		dx_ev_text(f, "lazytime", "fs/inode.c", "no help on %s: %s",
			kernel_release(), no_help);
	else if (!lazy)
		dx_remedy(f, where == DX_IN_WRITES ?
		       "the mtime update's journal access in write(2)" :
		       "the mtime update's journal access in the fault",
		       "mtime reaches the disk lazily (within a day, or with the next other inode change or fsync)",
		       "mount -o remount,lazytime %s", m.point[0] ? m.point : "<the mount point>");
	dx_triggers(f, in, it, where);
	dx_remedy(f, where == DX_IN_WRITES ? "the commits the writer's write(2) calls meet" :
	       "the commits the writer's faults meet", "the data of the two is synced apart",
	       "move the fsync off the file being %s (fsync a different file, or sync on a schedule the writer does not share)",
	       where == DX_IN_WRITES ? "written" : "stored to");
	if (!strcmp(m.fstype, "zfs")) {
		/* None of them measured on ZFS: offered nowhere untested. */
		dx_ev_text(f, "not_remedies", "zfs.bats, docs/fs/zfs.md",
			   "none offered on ZFS: the scenario's faults slept in dmu_tx_assign() 0-2 times a run, too rarely to measure a remedy (fewer fsyncs, moving the fsync away, lazytime)");
		f->nrem = 0;
	}
}

/* MADV_POPULATE_WRITE came in 5.14. */
static bool have_populate_write(void)
{
	int major = 0, minor = 0;

	if (sscanf(kernel_release(), "%d.%d", &major, &minor) != 2)
		return true;
	return major > 5 || (major == 5 && minor >= 14);
}

static void rule_readin(struct dx_report *r, const struct dx_input *in,
			const struct stall_item *it, uint64_t ns)
{
	struct dx_finding *f = dx_finding_new(r, "readin",
		"stores waited for their pages to be read in (major write faults)", ns);
	const struct stall_list *l = in->stalls;
	char val[32], path[PATH_MAX];

	if (!f)
		return;
	dx_finding_of_item(f, it);
	f->mechanism = "a store to a page of the mapping that is not in the page cache faults, and filemap_fault() (mm/filemap.c) reads the page in, dropping the mmap lock to wait for the device, and has the fault retried (FAULT_FLAG_TRIED: a major fault) before ->page_mkwrite can run; a file larger than memory, just opened, or evicted (fio drops its file's cache at start) pays a read per page, or per readahead window";
	dx_ev_cause(f, l, it, STALL_READIN, STALL_READIN_NS);
	dx_ev_num(f, "fault_first", dx_item_val(l, it, STALL_FAULT_FIRST), "events",
	       "/proc/wpstat/stalls");
	if (dx_queue_attr(it->row->file.major, it->row->file.minor,
		       "read_ahead_kb", val, sizeof(val), path, sizeof(path)))
		dx_ev_text(f, "read_ahead_kb", "sysfs", "%s (%s): a fault reads around it unless the mapping is MADV_RANDOM", val, path);
	/* Each measured in diagnose.bats before it is offered here. */
	if (have_populate_write())
		dx_remedy(f, "the read and the first-write fault: the pages come in writable and dirty", "the read time and the memory up front; every populated page is dirtied and written back",
		       "madvise(MADV_POPULATE_WRITE) the range before storing to it (5.14+)");
	else
		dx_remedy(f, "the read and the fault", "the time, moved earlier",
		       "store once to every page ahead of use (MADV_POPULATE_WRITE needs 5.14, this is %s)",
		       kernel_release());
	dx_remedy(f, "the read wait, if issued early enough; the first-write fault stays", "the memory; the reads move earlier",
	       "madvise(MADV_WILLNEED) or readahead(2) the range ahead of use: each call reads at most the larger of read_ahead_kb and the device's optimal I/O size (force_page_cache_ra()), so call it per window, or raise read_ahead_kb");
	dx_remedy(f, "the read wait: mmap reads the pages in", "mmap takes the read time; a shared mapping's pages are mapped read-only, so each first store still takes a write-protect fault",
	       "mmap with MAP_POPULATE");
	dx_remedy(f, "reads of pages evicted since their last use", "memory",
	       "keep the file cached: more memory (or a cgroup memory.high above the file), or mlock(2) the mapping");
	if (!strncmp(it->row->comm, "fio", 3))
		dx_remedy(f, "the read of pages already cached", "the run no longer measures a cold file",
		       "fio --invalidate=0: fio drops the file's page cache before each run by default");
	dx_zfs_unmeasured(f, it, 0,
		"none offered on ZFS: prefaulting, readahead, MAP_POPULATE and keeping the file cached were measured on ext4 (diagnose.bats), not on ZFS, whose page cache is filled from its own ARC (zpl_read_folio -> dmu_read), apart from the kernel's readahead and memory accounting");
}

/*
 * Page-lock sleeps inside write faults.  No remedy is offered: the
 * triggers' (sync less often) was measured only on ZFS, and a store to a
 * page another task is reading (diagnose.bats) can only wait.  On ZFS, in the
 * writer-next-to-an-fsync scenario (ZFS 2.3.2 on 6.12, docs/fs/zfs.md)
 * none of a separate log device, sync=disabled or =always,
 * logbias=throughput, zfs_txg_timeout=1, a small zfs_dirty_data_max,
 * lazytime or a sparser fsync loop took the waits below the run-to-run
 * spread; a log device left them as long or longer (its quicker syncs
 * come back sooner).  The finding says so instead (zfs.bats holds the
 * log-device case).
 */
static void rule_lock(struct dx_report *r, const struct dx_input *in,
		      const struct stall_item *it, uint64_t ns)
{
	struct dx_finding *f = dx_finding_new(r, "lock",
		"write faults slept on their page's lock, held by another task", ns);
	const struct stall_list *l = in->stalls;
	struct dx_mount m;

	if (!f)
		return;
	dx_finding_of_item(f, it);
	f->mechanism = "a write fault locks its page: filemap_fault() (mm/filemap.c) to map it, filemap_page_mkwrite() and the filesystems' page_mkwrite to dirty it; while another task holds the lock the fault sleeps for it (folio_wait_bit_common()): writeback holds it from folio_clear_dirty_for_io() until the I/O is set up, and so does a truncate; a fault that slept there before its page was read in is counted as the read-in instead";
	dx_ev_cause(f, l, it, STALL_LOCK, STALL_LOCK_NS);
	memset(&m, 0, sizeof(m));
	dx_mount_of(it->row->file.major, it->row->file.minor, &m);
	dx_triggers(f, in, it, dx_where_of(l, it, CAUSE_LOCK));
	if (strcmp(m.fstype, "zfs")) {
		/* Who synced is evidence; fewer syncs is no measured remedy here. */
		f->nrem = 0;
		dx_ev_text(f, "not_remedies", "diagnose.bats, zfs.bats, docs/testing.md",
			   "none measured: a store waits for whoever holds its page's lock; for another task's read (diagnose.bats) the page must be read before it is written, and for writeback setting up its I/O, fewer syncs was measured only on ZFS, where it left these sleeps within the spread");
		return;
	}
	f->mechanism = "ZFS has no page_mkwrite of its own: a store to a mapped ZFS file faults into filemap_page_mkwrite(), which locks the page; ZFS writes mapped pages back through write_cache_pages() and zfs_putpage() (module/os/linux/zfs/zfs_vnops_os.c), which hold the page's lock while they clean it, give it up to take the file's range lock (zfs_rangelock_enter) and take it again to clean it once more and start its writeback; a store to a page being synced sleeps for that lock (folio_wait_bit_common()); with no sync running there were no such sleeps";
	dx_ev_zfs(f, &m);
	dx_ev_text(f, "not_remedies", "zfs.bats, docs/fs/zfs.md",
		   "measured with ZFS 2.3.2 and not offered: a log device (SLOG) made the syncs quicker and the pages write-protected 3-5x as often, and these waits longer on a quiet host, shorter on loaded ones; sync=disabled, sync=always, logbias=throughput, zfs_txg_timeout=1, a small zfs_dirty_data_max, lazytime and fewer fsyncs left them within the spread");
	/* Fewer fsyncs, dx_triggers()' remedy, was among them. */
	f->nrem = 0;
}

/*
 * A process's own fsync, fdatasync or msync of a ZFS file slept in ZIL
 * commits (zil_commit()): the syncer waited for ZFS's intent log, not for
 * the writers.  Each remedy was measured in zfs.bats before it was
 * offered: the scenario's syncs, their ZIL waits with and without it.
 */
static void rule_zil(struct dx_report *r, const struct dx_input *in,
		     const struct stall_item *it, uint64_t ns)
{
	struct dx_finding *f = dx_finding_new(r, "zil",
		"syncs of the file waited for ZFS's intent log (ZIL commits)", ns);
	const struct stall_list *l = in->stalls;
	struct dx_mount m;
	int pool_len;

	if (!f)
		return;
	dx_finding_of_item(f, it);
	f->mechanism = "fsync, fdatasync and msync of a ZFS file go to zpl_fsync() (module/os/linux/zfs/zpl_file.c): zpl_writepages() writes the dirty pages (zfs_putpage()) in a non-sync pass, commits the intent log once (zil_commit()), and in its sync pass commits again for each page dirtied meanwhile; zfs_fsync() commits once more; each commit writes the log blocks and waits for them (zil_commit_waiter) on the pool's log device, or its data devices without one";
	dx_ev_cause(f, l, it, STALL_ZIL, STALL_ZIL_NS);
	memset(&m, 0, sizeof(m));
	dx_mount_of(it->row->file.major, it->row->file.minor, &m);
	dx_ev_zfs(f, &m);
	/* The mount's source is the dataset, pool/name. */
	if (!m.source[0])
		snprintf(m.source, sizeof(m.source), "<dataset>");
	pool_len = strcspn(m.source, "/");
	dx_remedy(f, "most of each commit's wait: the log records go to the log device, not the pool's data devices (a process that syncs back to back then syncs more often)",
		  "a device that keeps what it acknowledged through a power loss (a log device lost with the pool's last seconds loses acknowledged sync writes); the writers storing to the synced pages meet write-protect faults and page-lock sleeps more often, as the syncs return sooner",
		  "add a fast log device (SLOG) to the pool: zpool add %.*s log <device>",
		  pool_len, m.source);
	dx_remedy(f, "every ZIL commit of the dataset",
		  "acknowledged data lost on a crash: fsync and msync return before anything is on disk; the last seconds of every application's sync writes on the dataset are lost, not only this file's",
		  "zfs set sync=disabled %s: only for data that can be rebuilt", m.source);
}

/*
 * A process's own fsync, fdatasync or msync of a ZFS file waited for the
 * file's writeback (openzfs #12662): pages a WB_SYNC_NONE pass (the
 * flusher, sync_file_range) wrote stay under writeback until the ZIL or
 * the txg commits them.  The remedy was measured in wpstat_zfs
 * (msync_meets_writeback_held_until_the_txg): seconds before 2.2, one
 * ZIL commit's time after.
 */
static void rule_sync_wb(struct dx_report *r, const struct dx_input *in,
			 const struct stall_item *it, uint64_t ns)
{
	struct dx_finding *f = dx_finding_new(r, "sync_wb",
		"syncs of the file waited for writeback ZFS ends only at a commit", ns);
	const struct stall_list *l = in->stalls;
	char version[64];
	int major = 0, minor = 0;
	struct dx_mount m;

	if (!f)
		return;
	dx_finding_of_item(f, it);
	f->mechanism = "a writeback that does not wait (the flusher's, sync_file_range(SYNC_FILE_RANGE_WRITE)) hands each page to ZFS (zfs_putpage()), which logs it and leaves PG_writeback set until the ZIL or the txg commits it (zfs_putpage_commit_cb), up to zfs_txg_timeout later; an fsync or msync of the file meanwhile waits for it in filemap_write_and_wait_range() (folio_wait_writeback()), before ZFS 2.2 without committing the ZIL first (openzfs #12662)";
	dx_ev_cause(f, l, it, STALL_SYNC_WB, STALL_SYNC_WB_NS);
	memset(&m, 0, sizeof(m));
	dx_mount_of(it->row->file.major, it->row->file.minor, &m);
	dx_ev_zfs(f, &m);
	if (dx_read_setting("/sys/module/zfs/version", version, sizeof(version)) &&
	    sscanf(version, "%d.%d", &major, &minor) == 2 &&
	    (major < 2 || (major == 2 && minor < 2))) {
		dx_remedy(f, "the wait for the txg: the sync commits the ZIL first, which ends the writeback (one commit's time instead of up to zfs_txg_timeout)",
			  "a newer ZFS module and tools than the distribution's (Debian: bookworm-backports has 2.3)",
			  "ZFS 2.2 or later (openzfs #12790, the fix of #12662; this is %s)", version);
		return;
	}
	dx_ev_text(f, "not_remedies", "wpstat_zfs, docs/fs/zfs.md",
		   "none measured for ZFS 2.2 and later, which already commits the ZIL before it waits when a writeback of the file is in flight (z_async_writes_cnt)");
}

/*
 * Runqueue time inside write faults: the faulting task was runnable and
 * another had its CPU.  Not I/O: the fault's own work waited for the
 * scheduler.
 */
static void rule_runq(struct dx_report *r, const struct dx_input *in,
		      const struct stall_item *it, uint64_t ns)
{
	struct dx_finding *f = dx_finding_new(r, "runq",
		"write faults waited for a CPU (CPU contention, not I/O)", ns);
	const struct stall_list *l = in->stalls;
	char load[64];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (!f)
		return;
	dx_finding_of_item(f, it);
	f->mechanism = "the faulting task was runnable while another task ran on its CPU: the scheduler's run delay (sched_info.run_delay, kernel/sched/stats.h) inside the fault, outside every named wait";
	dx_ev_num(f, "fault_runq_ns", ns, "ns", "/proc/wpstat/stalls");
	dx_ev_num(f, "fault_cpu_ns", dx_item_val(l, it, STALL_FAULT_CPU_NS), "ns",
	       "/proc/wpstat/stalls");
	dx_ev_num(f, "fault_unnamed_ns", dx_item_val(l, it, STALL_FAULT_UNNAMED_NS),
	       "ns", "/proc/wpstat/stalls");
	if (dx_read_setting("/proc/loadavg", load, sizeof(load)))
		dx_ev_text(f, "load", "/proc/loadavg", "%s on %ld CPUs", load, cpus);
	/* Measured in diagnose.bats: a CPU of its own takes it away. */
	dx_remedy(f, "the run delay", "a CPU kept for the writer",
	       "give the writer a CPU of its own: taskset or a cpuset for it, and move the competing tasks off that CPU");
	dx_remedy(f, "its share of the delay", "the others' CPU time",
	       "raise the writer's scheduling weight (nice -n -5, or cgroup cpu.weight), or cap the competitors (cpu.max)");
}

/* The row's write faults, and their evidence. */
static uint64_t dx_fault_evidence(struct dx_finding *f, const struct stall_list *l,
				  const struct stall_item *it)
{
	uint64_t first = dx_item_val(l, it, STALL_FAULT_FIRST);
	uint64_t wp = dx_item_val(l, it, STALL_FAULT_WP);

	dx_ev_num(f, "fault_first", first, "events", "/proc/wpstat/stalls");
	dx_ev_num(f, "fault_wp", wp, "events", "/proc/wpstat/stalls");
	dx_ev_num(f, "fault_ns", dx_item_val(l, it, STALL_FAULT_NS), "ns",
		  "/proc/wpstat/stalls");
	return first + wp;
}

static void rule_first_write(struct dx_report *r, const struct dx_input *in,
			     const struct stall_item *it, uint64_t ns)
{
	const struct stall_list *l = in->stalls;
	struct dx_finding *f = dx_finding_new(r, "first_write",
		"first-write faults on fresh pages of the file", ns);

	if (!f)
		return;
	dx_finding_of_item(f, it);
	f->mechanism = "the first store to a page not yet written allocates or reserves its blocks in ->page_mkwrite (ext4: block_page_mkwrite -> ext4_da_get_block_prep; xfs: iomap_page_mkwrite; btrfs: btrfs_delalloc_reserve_space), and a hole is zero-filled first";
	/* Measured (docs/filesystems.md, diagnose.bats): prefault removes them, fallocate trims ext4's. */
	if (have_populate_write())
		dx_remedy(f, "the faults themselves, while the process is not latency-bound", "the time, moved earlier; every populated page is dirtied",
		       "prefault: madvise(MADV_POPULATE_WRITE) the range ahead of use (5.14+), or store once to every page (MAP_POPULATE maps a shared mapping's pages read-only, so the first store still faults; mlock does not prevent write-protect faults either)");
	else
		dx_remedy(f, "the faults themselves, while the process is not latency-bound", "the time, moved earlier",
		       "prefault: store once to every page ahead of use (MADV_POPULATE_WRITE needs 5.14, this is %s; MAP_POPULATE maps a shared mapping's pages read-only, so the first store still faults; mlock does not prevent write-protect faults either)",
		       kernel_release());
	dx_remedy(f, "the block reservation inside each fault (ext4: about a third of a first-write fault's time; xfs, btrfs: no measurable change)",
	       "the space, allocated up front",
	       "fallocate(2) the file before mapping it (posix_fallocate; a sparse ftruncate allocates nothing)");
	dx_zfs_unmeasured(f, it, 0,
		"none offered on ZFS: prefaulting was measured on ext4, xfs and btrfs (diagnose.bats), not on ZFS; fallocate(2) allocates nothing there (copy-on-write: zpl_fallocate() only checks the free space and extends the size)");
	dx_fault_evidence(f, l, it);
	dx_ev_num(f, "fault_unnamed_ns", dx_item_val(l, it, STALL_FAULT_UNNAMED_NS),
	       "ns", "/proc/wpstat/stalls");
}

/*
 * Write-protect faults whose time is the CPU's: each costs the
 * filesystem's ->page_mkwrite work, the PTE update and the kernel's entry
 * and exit, and writeback sets up one per page it cleans.  Its remedies
 * cut the faults: the trigger's (measured in diagnose.bats: msync less
 * often), and write(2) instead of stores (fio.bats: no fault at all).
 */
static void rule_cpu(struct dx_report *r, const struct dx_input *in,
		     const struct stall_item *it, uint64_t ns)
{
	const struct stall_list *l = in->stalls;
	struct dx_finding *f;
	char title[128], each[32];
	uint64_t faults = dx_item_val(l, it, STALL_FAULT_FIRST) +
			  dx_item_val(l, it, STALL_FAULT_WP);

	snprintf(title, sizeof(title), "write faults cost CPU: %" PRIu64 " faults x %s each",
		 faults, wpstat_fmt_duration(each, sizeof(each),
					     faults ? ns / faults : 0));
	f = dx_finding_new(r, "cpu", title, ns);
	if (!f)
		return;
	dx_finding_of_item(f, it);
	f->mechanism = "each store to a page writeback has cleaned takes a write-protect fault (wp_page_shared(), mm/memory.c): the filesystem's ->page_mkwrite (ext4_page_mkwrite(): a journal handle for the mtime update, the buffers' dirtying; iomap_page_mkwrite() on xfs), the PTE made writable and dirty, dirty balancing, and the kernel's entry and exit; the time is on the CPU, not in a wait, and there is one fault per page per clean (folio_mkclean())";
	dx_fault_evidence(f, l, it);
	dx_ev_num(f, "fault_cpu_ns", dx_item_val(l, it, STALL_FAULT_CPU_NS), "ns",
		  "/proc/wpstat/stalls");
	dx_ev_num(f, "per_fault_cpu_ns", faults ? ns / faults : 0, "ns",
		  "fault_cpu_ns / (fault_first + fault_wp)");
	/* Fewer cleans, fewer faults: the trigger's remedy. */
	dx_triggers(f, in, it, DX_IN_FAULTS);
	dx_remedy(f, "every fault: a write(2) into the page cache takes none", "a copy and a system call per write; the code's stores become calls",
		  "write(2) or pwrite(2) the data instead of storing to the mapping (keep the mapping for reads)");
	dx_zfs_unmeasured(f, it, 0,
		"none offered on ZFS: fewer syncs and write(2) were measured on ext4 (fio.bats, diagnose.bats), not on ZFS");
}

/* The causes a fault's time holds (the .def's IN ones), named. */
static const char *dx_in_fault_causes(void)
{
	static char list[128];
	size_t len;
	int k;

	if (list[0])
		return list;
	for (k = 0; k < CAUSE_FAULT; k++) {
		if (stall_causes[k].where != STALL_IN_FAULT)
			continue;
		len = strlen(list);
		snprintf(list + len, sizeof(list) - len, "%s%s", len ? ", " : "",
			 stall_causes[k].name);
	}
	return list;
}

/* The residue: faults slept, and no probe says for what. */
static void rule_unnamed(struct dx_report *r, const struct dx_input *in,
			 const struct stall_item *it, uint64_t ns, bool have_sleep)
{
	static char mechanism[512];	/* the same text each time */
	const struct stall_list *l = in->stalls;
	struct dx_finding *f;
	uint64_t sleep;

	f = dx_finding_new(r, "unnamed", have_sleep ?
		"write faults slept in a wait wpstat does not name" :
		"time in write faults outside the named waits (its CPU time not measured)", ns);
	if (!f)
		return;
	snprintf(mechanism, sizeof(mechanism), have_sleep ?
		 "the part of the write faults' time off the CPU and not waiting for one, outside the waits wpstat names (%s): a sleep below ->page_mkwrite that no probe covers, such as FUSE's wait for its server's reply" :
		 "the part of the write faults' time outside the waits wpstat names (%s): the filesystem's own work in ->page_mkwrite, the fault's CPU time, or a wait it does not probe (this module gives no CPU time to tell them apart)",
		 dx_in_fault_causes());
	f->mechanism = mechanism;
	dx_remedy(f, "an unnamed wait, once named", "none",
	       "profile the faulting thread off-CPU (perf sched timehist, or offcputime) to name the wait");
	/* Write-protect faults: whatever their time is, writeback made them. */
	dx_triggers(f, in, it, DX_IN_FAULTS);
	dx_zfs_unmeasured(f, it, 1,
		"on ZFS only the profiling step: the triggers' remedies were measured on ext4 and xfs; fewer fsyncs left ZFS's page-lock sleeps within the spread (zfs.bats)");
	dx_finding_of_item(f, it);
	dx_fault_evidence(f, l, it);
	dx_ev_num(f, "fault_unnamed_ns", dx_item_val(l, it, STALL_FAULT_UNNAMED_NS),
	       "ns", "/proc/wpstat/stalls");
	if (stall_fault_sleep_ns(&it->sum, &sleep))
		dx_ev_num(f, "fault_sleep_ns", sleep, "ns",
			  "fault_unnamed_ns - fault_cpu_ns - fault_runq_ns");
}

/* What wpstat itself could not see, from the summary and the level. */
static void rule_limits(struct dx_report *r, const struct dx_input *in)
{
	static const char bounded[] =
		"wpstat's tables are preallocated and bounded; what does not fit is counted, not kept";
	static const struct {
		const char *key, *what, *mechanism, *cost, *change;
	} lost[] = {
		{ "untracked_events", "events found no row: the inode table was full",
		  bounded, "memory", "wpstat unload; wpstat load max_inodes=<larger>" },
		{ "stall_overflow_events", "events found no stall row: the stall table was full",
		  bounded, "memory", "wpstat unload; wpstat load max_stalls=<larger>" },
		/* Cleared by a reset with the totals, so it is this run's. */
		{ "bdp_unattributed", "dirty throttles whose file could not be named",
		  "the throttled task left its CPU between balance_dirty_pages_ratelimited() and balance_dirty_pages() (it slept creating a cgroup's writeback structure, or was preempted): the throttle counts in no file's or process's row",
		  "none", "nothing to change: the stall rows' throttle counts are that much short" },
	};
	const char *v;
	struct dx_finding *f;
	size_t i;

	if (in->level && !strcmp(in->level, "counts")) {
		f = dx_finding_new(r, "limits", "no stall time at level counts", 0);
		if (f) {
			f->severity = DX_INFO;
			f->share = -1;
			f->mechanism = "level counts attaches entry probes only: faults, waits and pauses are counted, but fault and journal times need the return probes of level timing";
			dx_ev_text(f, "level", "/sys/module/wpstat/parameters/level", "counts");
			dx_remedy(f, "findings ranked by time", "a few hundred ns per write fault",
			       "wpstat level timing, then run the workload again");
		}
	}
	for (i = 0; i < ARRAY_SIZE(lost); i++) {
		uint64_t n;

		v = wpstat_kv_get(in->summary, lost[i].key);
		if (!v || !isdigit((unsigned char)v[0]))
			continue;
		n = strtoull(v, NULL, 10);
		if (!n)
			continue;
		f = dx_finding_new(r, "limits", lost[i].what, 0);
		if (!f)
			return;
		f->severity = DX_INFO;
		f->share = -1;
		f->mechanism = lost[i].mechanism;
		dx_ev_num(f, lost[i].key, n, "events", "/proc/wpstat/summary");
		dx_remedy(f, "the loss", lost[i].cost, "%s", lost[i].change);
	}
}

/* Filesystems where a store's real waits are not where wpstat looks. */
static void rule_blind_spots(struct dx_report *r, const struct dx_input *in)
{
	const struct stall_list *l = in->stalls;
	struct dx_finding *f;
	struct dx_mount m;
	size_t i;

	for (i = 0; i < l->n; i++) {
		const struct stall_item *it = &l->items[i];

		if (!dx_mount_of(it->row->file.major, it->row->file.minor, &m))
			continue;
		if (strcmp(m.fstype, "nfs") && strcmp(m.fstype, "nfs4") &&
		    strncmp(m.fstype, "fuse", 4))
			continue;
		f = dx_finding_new(r, "blind_spot", "a network or FUSE filesystem: part of the cost is not seen", 0);
		if (!f)
			return;
		f->severity = DX_INFO;
		f->share = -1;
		dx_finding_of_item(f, it);
		f->mechanism = "NFS writes back at close and on fsync (close-to-open) and FUSE through its daemon: the waits of those flushes are in close(2), fsync(2) or the daemon, not in the write fault";
		dx_ev_text(f, "mount", "/proc/self/mountinfo", "%s on %s", m.fstype, m.point);
		dx_remedy(f, "nothing: says what the numbers cannot show", "none",
		       "time close(2) and fsync(2) in the application, or trace the daemon");
		return;
	}
}

static int finding_cmp(const void *pa, const void *pb)
{
	const struct dx_finding *a = pa, *b = pb;

	if (a->severity != b->severity)
		return a->severity > b->severity ? -1 : 1;
	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return 0;
}

/*
 * The rule of each cause of uapi/wpstat_stalls.def: dx_rule_<id>, so a
 * cause added there without one here does not build.  The fault's own
 * time has rules of its own (dx_fault_own, below).
 */
typedef void dx_rule_fn(struct dx_report *r, const struct dx_input *in,
			const struct stall_item *it, uint64_t ns);
#define dx_rule_STABLE	rule_stable
#define dx_rule_WB	rule_wb
#define dx_rule_PAUSE	rule_throttle
#define dx_rule_JOURNAL	rule_journal
#define dx_rule_READIN	rule_readin
#define dx_rule_LOCK	rule_lock
#define dx_rule_ZIL	rule_zil
#define dx_rule_SYNC_WB	rule_sync_wb
#define dx_rule_FAULT	NULL
static dx_rule_fn *const dx_rules[CAUSE_NR] = {
#define WPSTAT_STALL(...)
#define WPSTAT_STALL_CAUSE(id, ...) [CAUSE_##id] = dx_rule_##id,
#include "wpstat_stalls.def"
#undef WPSTAT_STALL_CAUSE
#undef WPSTAT_STALL
};

/*
 * The faults' own time, outside the named waits: its run delay (rule_runq),
 * then, where first-write faults are the most, the first writes' work;
 * else its CPU time (rule_cpu) and what is left, a sleep no probe names
 * (rule_unnamed).  Without the CPU column the rest is unnamed as a whole.
 */
static void dx_fault_own(struct dx_report *r, const struct dx_input *in,
			 const struct stall_item *it, uint64_t min)
{
	const struct stall_sum *s = &it->sum;
	uint64_t own = stall_fault_own_ns(s);
	uint64_t runq = s->have_runq ? min_u64(s->runq_ns, own) : 0;
	uint64_t rest = own - runq, cpu, sleep;

	if (runq >= min && runq)
		rule_runq(r, in, it, runq);
	if (!rest)
		return;
	if (dx_item_val(in->stalls, it, STALL_FAULT_FIRST) >=
	    dx_item_val(in->stalls, it, STALL_FAULT_WP)) {
		if (rest >= min)
			rule_first_write(r, in, it, rest);
		return;
	}
	if (!s->have_cpu) {
		if (rest >= min)
			rule_unnamed(r, in, it, rest, false);
		return;
	}
	cpu = min_u64(s->cpu_ns, rest);
	sleep = rest - cpu;
	if (cpu >= min && cpu)
		rule_cpu(r, in, it, cpu);
	if (sleep >= min && sleep)
		rule_unnamed(r, in, it, sleep, true);
}

void dx_diagnose(const struct dx_input *in, struct dx_report *r)
{
	const struct stall_list *l = in->stalls;
	size_t i;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < l->n; i++) {
		r->stall_ns += l->items[i].stall_ns;
		r->timed |= stall_have_time(&l->items[i].sum);
	}
	if (r->stall_ns < DX_MIN_STALL_NS)
		r->stall_ns = 0;
	for (i = 0; r->stall_ns && i < l->n; i++) {
		const struct stall_item *it = &l->items[i];
		const struct stall_sum *s = &it->sum;
		uint64_t min = (uint64_t)(DX_MIN_SHARE * r->stall_ns);

		int k;

		for (k = 0; k < CAUSE_FAULT; k++)
			if (dx_rules[k] && s->ns[k] >= min && s->ns[k])
				dx_rules[k](r, in, it, s->ns[k]);
		dx_fault_own(r, in, it, min);
	}
	rule_blind_spots(r, in);
	rule_limits(r, in);
	qsort(r->f, r->n, sizeof(r->f[0]), finding_cmp);
}
