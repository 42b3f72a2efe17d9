// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_kretprobes.c - the return-probe handlers, and the timed scopes
 * they keep in each task's context: a write fault, timed whole from its
 * first handle_mm_fault() (level timing); the journal waits of a write
 * fault or a write system call; a throttle in
 * balance_dirty_pages() and its pauses; a writeback wait announced by its
 * tracepoint and timed in folio_wait_bit(); a write fault's sleeps on its
 * page's lock; folio_mkclean()'s PTE count (level timing).  They run only
 * where a task may sleep, and once per fault at level timing.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "wpstat_probe.h"

/*
 * What the last balance_dirty_pages_ratelimited_flags() call on each CPU
 * was for (level timing: bdp_rl_enter() records it), and each task's
 * latest write fault (fault_note()); bdp_writer() reads them.
 */
struct wpstat_bdp_record __percpu *wpstat_bdp_record;
struct wpstat_fault_rec *wpstat_fault_recs;

/*
 * Whether the task is inside one of the timed calls @scope names
 * (WPT_FAULT: a write fault); one left by an earlier level is dropped.
 * The owner's context only, as every tctx use.
 */
bool wpstat_in_scope(struct wpstat_tctx *c, unsigned int scope)
{
	if (!c || !(c->active & scope))
		return false;
	if (c->fault_epoch == READ_ONCE(wpstat_level_epoch))
		return true;
	wpstat_tctx_put(c, scope);
	return false;
}

/*
 * A named wait of @ns inside the task's write fault (if it is in one)
 * ended: its time, and the CPU and runqueue time inside it (from @cpu0
 * and @runq0, read where it began), are not the fault's unnamed time.
 */
void wpstat_fault_wait_done(struct wpstat_tctx *c, u64 ns, u64 cpu0, u64 runq0)
{
	if (!wpstat_in_scope(c, WPT_FAULT))
		return;
	c->fault_named_ns += ns;
	c->fault_wait_cpu += wpstat_task_cpu_ns() - cpu0;
	c->fault_wait_runq += wpstat_task_runq_ns() - runq0;
}

/*
 * What started the writeback that is cleaning a folio: reclaim; for a
 * flusher, the reason of its pass (writeback_start); for any other task,
 * the system call it is in.
 */
enum wpstat_counter wpstat_mkclean_trigger(void)
{
	unsigned int flags = current->flags;
	struct wpstat_tctx *c;

	if (flags & (PF_KSWAPD | PF_MEMALLOC))
		return WPC_MKCLEAN_RECLAIM;
	if (flags & PF_KTHREAD) {
		c = wpstat_tctx_find();
		if (!c || !(c->active & WPT_WB))
			return WPC_MKCLEAN_OTHER;
		switch (c->wb_reason) {
		case WB_REASON_PERIODIC:
			return WPC_MKCLEAN_FLUSHER_PERIODIC;
		case WB_REASON_BACKGROUND:
			return WPC_MKCLEAN_FLUSHER_BACKGROUND;
		case WB_REASON_SYNC:
			return WPC_MKCLEAN_SYNC;
		case WB_REASON_VMSCAN:
			return WPC_MKCLEAN_RECLAIM;
		}
		return WPC_MKCLEAN_OTHER;
	}
	switch (wpstat_syscall_nr()) {
	case __NR_msync:
		return WPC_MKCLEAN_MSYNC;
	case __NR_fsync:
	case __NR_fdatasync:
		return WPC_MKCLEAN_FSYNC;
	case __NR_sync_file_range:
		return WPC_MKCLEAN_SYNC_FILE_RANGE;
	case __NR_sync:
	case __NR_syncfs:
		return WPC_MKCLEAN_SYNC;
	}
	return WPC_MKCLEAN_OTHER;
}

/*
 * A write fault's scope is over (at @end): its whole time, and the part
 * of it in no named wait, go to the file if do_page_mkwrite() counted
 * it, in the tables its count went to.  A fault that never got there
 * (no ->page_mkwrite, an error) is no mkwrite fault: nothing is added.
 */
static void fault_close(struct wpstat_tctx *c, u64 end)
{
	u64 ns = end - c->fault_start, unnamed, cpu, runq;
	struct wpstat_ref r;

	if (c->fault_mkwrite) {
		unnamed = ns - min(ns, c->fault_named_ns);
		/*
		 * Of the unnamed time, the part on a CPU and the part
		 * waiting for one: the task's totals over the fault less
		 * those inside the named waits.  The CPU time is up to a
		 * tick behind at either end: never more than what is left.
		 */
		runq = wpstat_task_runq_ns() - c->fault_runq0;
		runq -= min(runq, c->fault_wait_runq);
		runq = min(runq, unnamed);
		cpu = wpstat_task_cpu_ns() - c->fault_cpu0;
		cpu -= min(cpu, c->fault_wait_cpu);
		cpu = min(cpu, unnamed - runq);
		/* One lookup in each table for the four times. */
		r = wpstat_lookup(&c->fault_key);
		if (likely(r.t && r.t->reset_gen == c->fault_gen.inodes)) {
			wpstat_add_time(r, WPC_MKWRITE_NS, WPC_MKWRITE_MAX_NS,
					ns);
			wpstat_add(r, WPC_MKWRITE_UNNAMED_NS, unnamed);
			wpstat_add(r, WPC_MKWRITE_CPU_NS, cpu);
			wpstat_add(r, WPC_MKWRITE_RUNQ_NS, runq);
		}
		wpstat_stall_fault_times(&c->fault_key, c->fault_gen.stalls,
					 ns, unnamed, cpu, runq);
		wpstat_hist_add(WPH_MKWRITE, &c->fault_key, ns);
	}
	wpstat_tctx_put(c, WPT_FAULT);
}

/*
 * A fault that asked for a retry and was not retried (a signal took the
 * task back to user space first): closed at its last return, so that a
 * counted fault keeps its time.
 */
static void fault_drop_pending(struct wpstat_tctx *c)
{
	if (wpstat_in_scope(c, WPT_FAULT) && c->fault_retry)
		fault_close(c, c->fault_end);
}

/*
 * handle_mm_fault(), level timing: a write fault on a shared file
 * mapping opens the task's fault scope, which the waits inside it (the
 * causes uapi/wpstat_stalls.def marks IN) add their time to
 * (wpstat_cause_wait(), wpstat_fault_wait_done()).  A fault whose page
 * had to be read in returns VM_FAULT_RETRY after the read and is retried
 * at once at the same address (FAULT_FLAG_TRIED): the retry continues the
 * scope, so the fault is timed from its first attempt.  Any other fault
 * returns at once (no instance, no return probe).
 */
static int fault_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct vm_area_struct *vma = wpstat_fault_vma(regs);
	unsigned long addr = wpstat_fault_address(regs) & PAGE_MASK;
	struct wpstat_tctx *c;
	struct wpstat_key key;

	wpstat_hit(WPP_FAULT);
	if (!(wpstat_fault_flags(regs) & FAULT_FLAG_WRITE) ||
	    !(READ_ONCE(vma->vm_flags) & VM_SHARED) || !vma->vm_file ||
	    READ_ONCE(wpstat_counting_level) != WPL_TIMING ||
	    !wpstat_want_task() ||
	    !wpstat_key_of_mapping(vma->vm_file->f_mapping, &key))
		return 1;
	c = wpstat_tctx_get();
	if (!c)
		return 1;
	if (wpstat_in_scope(c, WPT_FAULT) && c->fault_retry &&
	    c->fault_addr == addr && wpstat_key_equal(&c->fault_key, &key)) {
		c->fault_retry = false;		/* the same fault, again */
		return 0;
	}
	fault_drop_pending(c);
	c = wpstat_tctx_get();	/* closing the old scope may release it */
	if (!c)
		return 1;
	c->active |= WPT_FAULT;
	c->fault_key = key;
	c->fault_addr = addr;
	c->fault_named_ns = 0;
	c->fault_retry = false;
	c->fault_mkwrite = false;
	c->fault_epoch = READ_ONCE(wpstat_level_epoch);
	c->fault_wait_cpu = 0;
	c->fault_wait_runq = 0;
	c->fault_mapping = vma->vm_file->f_mapping;
	c->lock_n = 0;
	c->lock_ns = 0;
	c->lock_max = 0;
	c->lock_cpu = 0;
	c->lock_runq = 0;
	c->fault_cpu0 = wpstat_task_cpu_ns();
	c->fault_runq0 = wpstat_task_runq_ns();
	c->fault_start = ktime_get_ns();
	return 0;
}
NOKPROBE_SYMBOL(fault_entry);

static int fault_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	vm_fault_t ret = (vm_fault_t)regs_return_value(regs);
	struct wpstat_tctx *c = wpstat_tctx_find();
	u64 now;

	if (!wpstat_in_scope(c, WPT_FAULT) || c->fault_retry)
		return 0;
	now = ktime_get_ns();
	if (ret & VM_FAULT_RETRY) {
		c->fault_retry = true;
		c->fault_end = now;
		return 0;
	}
	fault_close(c, now);
	return 0;
}
NOKPROBE_SYMBOL(fault_return);

/*
 * A clean, counted at entry; its return only for the PTEs it cleans.  A
 * folio no process maps has none (folio_mkclean() returns 0 at once), and
 * none can map it meanwhile: the caller holds its lock, which a fault
 * needs to map it.  Most cleans of a machine are of such folios (files
 * written with write(2)): their return is refused, which saves the
 * return trampoline (make bench's W6).
 */
static int mkclean_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct mkclean_data *d = (void *)ri->data;

	wpstat_hit(WPP_MKCLEAN);
	if (READ_ONCE(wpstat_counting_level) != WPL_TIMING ||
	    !wpstat_mkclean_key(regs, &d->key))
		return 1;
	d->gen = wpstat_mkclean_count(&d->key, regs);
	return !wpstat_mkclean_mapped(regs);
}
NOKPROBE_SYMBOL(mkclean_entry);

/*
 * The PTEs a clean write-protected, and, when a process cleaned them in
 * its own system call (msync, fsync: not a flusher, not reclaim), that
 * process's share: its stall row for the file says who set up the
 * write-protect faults of every process storing to it.
 */
static int mkclean_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct mkclean_data *d = (void *)ri->data;
	int ptes = (int)regs_return_value(regs);

	if (ptes <= 0)
		return 0;
	wpstat_count_gen(&d->key, WPC_MKCLEAN_PTES, ptes, d->gen);
	if (!(current->flags & (PF_KTHREAD | PF_MEMALLOC)) &&
	    wpstat_want_task())
		wpstat_stall_add(&d->key, WPS_WP_CAUSED, ptes);
	return 0;
}
NOKPROBE_SYMBOL(mkclean_return);

/* A throttle pause ended: its time, also a named wait of a fault it is in. */
void wpstat_bdp_close_pause(struct wpstat_tctx *c, u64 now)
{
	u64 ns;

	if (!c->pause_start)
		return;
	ns = now - c->pause_start;
	c->pause_start = 0;
	/* Counted as it began (tp_balance_dirty_pages()). */
	wpstat_cause_wait(c, &c->bdp_key, WPCA_PAUSE, (struct wpstat_wait){
		.ns = ns, .gen = c->pause_gen,
		.start = { .cpu0 = c->pause_cpu0, .runq0 = c->pause_runq0 },
	});
	wpstat_hist_add(WPH_BDP_PAUSE, &c->bdp_key, ns);
}

/*
 * The task's latest write fault, if it is the one throttling now: the
 * slot is the task's, whole, and the task has completed no fault since
 * it was written (mm_account_fault() counts a fault after its dirty
 * balancing).  Not if the fault failed or was not retried and the task
 * enters balance_dirty_pages() elsewhere before it completes another
 * (docs/testing.md).
 */
static bool fault_writer(struct wpstat_key *key, bool *counted)
{
	struct wpstat_fault_rec *r = wpstat_fault_rec_mine();
	/* Pairs with wpstat_fault_rec_end(): the fields after the sequence. */
	unsigned long seq = smp_load_acquire(&r->seq);
	bool mine;

	if (seq & 1)
		return false;
	mine = READ_ONCE(r->task) == (unsigned long)current &&
	       READ_ONCE(r->faults) == wpstat_task_faults();
	*key = r->key;
	*counted = READ_ONCE(r->counted);
	smp_rmb();	/* the fields before the sequence again */
	return mine && READ_ONCE(r->seq) == seq;
}

/*
 * Whose write entered balance_dirty_pages(), which only
 * balance_dirty_pages_ratelimited_flags() calls:
 *  - level timing: the mapping of that call, recorded at its entry, if
 *    the task has not left the CPU since (it may sleep creating a cgroup
 *    wb, and another task on the CPU take the record);
 *  - in a write system call (write(2) and its forms, sendfile, splice,
 *    copy_file_range), the file it writes to, by its descriptor;
 *  - in a write fault, the file of the task's latest one (fault_writer());
 *  - else nobody's (io_uring, io-wq, a kernel thread, a fault on a file
 *    without ->page_mkwrite): false, and the throttle is unattributed.
 * Never the folio the task dirtied last: a fault on a page already dirty
 * dirties nothing before its call, and 6.12's generic_perform_write()
 * makes its call before write_begin, so the last folio dirtied is the
 * previous write's, maybe of another file.
 */
static bool bdp_writer(struct wpstat_key *key, bool *counted)
{
	struct wpstat_bdp_record *r = this_cpu_ptr(wpstat_bdp_record);

	if (r->task == (unsigned long)current &&
	    r->switches == wpstat_task_switches(current)) {
		*key = r->key;
		*counted = r->counted;
		return true;
	}
	return wpstat_write_fd_key(key, counted, true) ||
	       fault_writer(key, counted);
}

/* balance_dirty_pages(): entered only outside the free-run zone. */
static int bdp_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct wpstat_tctx *c;
	struct wpstat_key key;
	bool counted;

	wpstat_hit(WPP_BDP);
	if (!bdp_writer(&key, &counted)) {
		/* Whose write it is, is lost: said so if it would count. */
		if (wpstat_want_task())
			wpstat_count_bdp_unattributed();
		return 1;
	}
	if (!counted)
		return 1;
	wpstat_count(&key, WPC_BDP_THROTTLED, 1);
	c = wpstat_tctx_get();
	if (!c || (c->active & WPT_BDP))
		return 1;
	c->active |= WPT_BDP;
	c->bdp_key = key;
	c->bdp_async = wpstat_bdp_flags(regs) & WPSTAT_BDP_ASYNC;
	c->pause_start = 0;
	return 0;
}
NOKPROBE_SYMBOL(bdp_entry);

static int bdp_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct wpstat_tctx *c = wpstat_tctx_find();

	if (c && (c->active & WPT_BDP)) {
		wpstat_bdp_close_pause(c, ktime_get_ns());
		wpstat_tctx_put(c, WPT_BDP);
	}
	return 0;
}
NOKPROBE_SYMBOL(bdp_return);

/* folio_wait_bit(): only a wait announced by the tracepoint. */

static int wait_bit_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct wpstat_tctx *c;

	wpstat_hit(WPP_WAIT_BIT);
	if (wpstat_wait_bit_nr(regs) != PG_writeback)
		return 1;
	c = wpstat_tctx_find();
	if (!c || !(c->active & WPT_WAIT) ||
	    c->wait_folio != wpstat_wait_bit_folio(regs))
		return 1;
	c->wait_entered = true;
	wait_start_now((void *)ri->data);
	return 0;
}
NOKPROBE_SYMBOL(wait_bit_entry);

static int wait_bit_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct wait_start *w = (void *)ri->data;
	u64 ns = ktime_get_ns() - w->start;
	struct wpstat_tctx *c = wpstat_tctx_find();

	if (c && (c->active & WPT_WAIT)) {
		/* Counted as it began (tp_wait_writeback()). */
		wpstat_cause_wait(c, &c->wait_key,
				  wpstat_wait_causes[c->wait_kind],
				  (struct wpstat_wait){
					.ns = ns, .gen = c->wait_gen, .start = *w,
				  });
		if (c->wait_kind == WPW_STABLE)
			wpstat_hist_add(WPH_STABLE_WAIT, &c->wait_key, ns);
		wpstat_tctx_put(c, WPT_WAIT);
	}
	return 0;
}
NOKPROBE_SYMBOL(wait_bit_return);

/*
 * A journal call (jbd2's buffer write access, xfs's time update, ZFS's
 * transaction assignment; jbd2's handle start is timed the same way
 * between its entry and its tracepoint, jbd2_start_enter() and
 * tp_jbd2_start()), level timing: timed if it is inside the task's write fault,
 * or inside a write system call, whose file is then the descriptor's.
 * In write(2) the usual ones are the time update before the copy
 * (file_modified() -> ext4_dirty_inode(), xfs's kiocb_modified() ->
 * xfs_vn_update_time()) and the copy loop's: ->write_begin's handle per
 * page without delalloc (ext4_write_begin), ->write_end's size update
 * when the file grows (generic_write_end -> mark_inode_dirty on 5.10
 * and 6.1, ext4_da_do_write_end's i_disksize update from 6.3); an
 * O_SYNC write's own writeback too.  No probe on those: every write(2)
 * would pay for it, and which of them keeps a frame on the stack is the
 * compiler's choice (6.1's file_modified() tail-calls
 * file_modified_flags()).
 */
static int journal_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct journal_data *d = (void *)ri->data;

	if (journal_level_off() || !journal_timed(wpstat_tctx_find(), &d->fault))
		return 1;
	d->nvcsw = READ_ONCE(current->nvcsw);
	wait_start_now(&d->w);
	return 0;
}
NOKPROBE_SYMBOL(journal_entry);

static int jbd2_access_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	wpstat_hit(WPP_JBD2_ACCESS);
	return journal_entry(ri, regs);
}
NOKPROBE_SYMBOL(jbd2_access_entry);

/*
 * xfs_vn_update_time(): xfs's mtime update in the fault (and in
 * file_modified), a transaction of its own: it sleeps for log space
 * (xfs_trans_alloc -> xfs_log_reserve) or for the inode lock
 * (xfs_ilock(XFS_ILOCK_EXCL)) while an fsync's log force holds it.
 */
static int xfs_time_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	wpstat_hit(WPP_XFS_TIME);
	return journal_entry(ri, regs);
}
NOKPROBE_SYMBOL(xfs_time_entry);

/*
 * dmu_tx_assign(): ZFS's time update in the fault (zfs_dirty_inode) and
 * zfs_write()'s transaction wait for a txg with room (dmu_tx_wait) or
 * sleep in the dirty-data throttle (dmu_tx_delay).
 */
static int zfs_tx_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	wpstat_hit(WPP_ZFS_TX);
	return journal_entry(ri, regs);
}
NOKPROBE_SYMBOL(zfs_tx_entry);

static int journal_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct journal_data *d = (void *)ri->data;

	journal_end(NULL, d->fault, &d->w, d->nvcsw);
	return 0;
}
NOKPROBE_SYMBOL(journal_return);

/*
 * The task is inside a ZFS fsync opened at this level; a scope left by an
 * earlier level is dropped (as wpstat_in_scope() does for faults).
 */
bool wpstat_sync_in_scope(struct wpstat_tctx *c)
{
	if (!c || !(c->active & WPT_SYNC))
		return false;
	if (c->sync_epoch == READ_ONCE(wpstat_level_epoch))
		return true;
	wpstat_tctx_put(c, WPT_SYNC);
	return false;
}

/*
 * zpl_fsync(), ZFS's ->fsync (fsync, fdatasync; msync through
 * vfs_fsync_range()), level timing: the task's sync scope, for the file,
 * which the ZIL commits inside it are counted to.
 */
static int zfs_fsync_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct file *file = (struct file *)wpstat_arg(regs, 0);
	struct wpstat_tctx *c;
	struct wpstat_key key;

	wpstat_hit(WPP_ZFS_FSYNC);
	if (READ_ONCE(wpstat_counting_level) != WPL_TIMING || !file ||
	    !wpstat_want_task() ||
	    !wpstat_key_of_mapping(READ_ONCE(file->f_mapping), &key))
		return 1;
	if (wpstat_sync_in_scope(wpstat_tctx_find()))
		return 1;
	c = wpstat_tctx_get();
	if (!c)
		return 1;
	c->active |= WPT_SYNC;
	c->sync_key = key;
	c->sync_epoch = READ_ONCE(wpstat_level_epoch);
	return 0;
}
NOKPROBE_SYMBOL(zfs_fsync_entry);

static int zfs_fsync_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct wpstat_tctx *c = wpstat_tctx_find();

	if (c && (c->active & WPT_SYNC))
		wpstat_tctx_put(c, WPT_SYNC);
	return 0;
}
NOKPROBE_SYMBOL(zfs_fsync_return);

/*
 * zil_commit(zilog, foid) inside the task's sync scope, for its file
 * (a ZFS inode's number is its object id): zfs_fsync()'s commit, and
 * zfs_putpage()'s per page of the sync writeback before it.
 */
static int zil_commit_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct sleep_data *d = (void *)ri->data;
	struct wpstat_tctx *c;

	wpstat_hit(WPP_ZIL_COMMIT);
	c = wpstat_tctx_find();
	if (!wpstat_sync_in_scope(c) || wpstat_arg(regs, 1) != c->sync_key.ino)
		return 1;
	d->nvcsw = READ_ONCE(current->nvcsw);
	wait_start_now(&d->w);
	return 0;
}
NOKPROBE_SYMBOL(zil_commit_entry);

/* A commit in which the task slept is a wait; count and time in one row. */
static int zil_commit_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct sleep_data *d = (void *)ri->data;
	u64 ns = ktime_get_ns() - d->w.start;
	struct wpstat_tctx *c;

	if (READ_ONCE(current->nvcsw) == d->nvcsw)
		return 0;
	c = wpstat_tctx_find();
	if (!wpstat_sync_in_scope(c))
		return 0;
	wpstat_cause_wait(c, &c->sync_key, WPCA_ZIL,
			  (struct wpstat_wait){ .n = 1, .ns = ns, .start = d->w });
	return 0;
}
NOKPROBE_SYMBOL(zil_commit_return);

/*
 * do_page_mkwrite() was reached: the page-lock sleeps held back before it
 * were the read's if the fault read its page in (@readin: the read-in's
 * time covers them), else waits for another holder, counted now.
 */
void wpstat_fault_locks_decide(struct wpstat_tctx *c, bool readin)
{
	if (!c->lock_n)
		return;
	if (!readin) {
		/*
		 * The fault part by hand (no task context passed below): the
		 * waits' CPU and runqueue times were taken as they ended.
		 */
		c->fault_named_ns += c->lock_ns;
		c->fault_wait_cpu += c->lock_cpu;
		c->fault_wait_runq += c->lock_runq;
		wpstat_cause_wait(NULL, &c->fault_key, WPCA_LOCK,
				  (struct wpstat_wait){
					.n = c->lock_n, .ns = c->lock_ns,
					.max = c->lock_max,
				  });
	}
	c->lock_n = 0;
}

/*
 * folio_wait_bit_common() for PG_locked, level timing: timed if it is
 * inside the task's write fault and for a page of the fault's file.
 * filemap_fault() waits there for a page another task holds, or for its
 * own read (the lock is held until the read ends).  Reclaim in the fault
 * locks other files' pages: not it.
 */
static int lock_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct sleep_data *d = (void *)ri->data;
	struct wpstat_tctx *c;

	wpstat_hit(WPP_LOCK);
	if (wpstat_bit_wait_nr(regs) != PG_locked ||
	    (current->flags & PF_MEMALLOC))
		return 1;
	c = wpstat_tctx_find();
	if (!wpstat_in_scope(c, WPT_FAULT) || c->fault_retry ||
	    wpstat_bit_wait_mapping(regs) != c->fault_mapping)
		return 1;
	d->nvcsw = READ_ONCE(current->nvcsw);
	wait_start_now(&d->w);
	return 0;
}
NOKPROBE_SYMBOL(lock_entry);

/*
 * A sleep (the task switched out on its own) is a wait; a lock freed
 * before the task slept is not.  Before do_page_mkwrite() it is held
 * back in the task's context (wpstat_fault_locks_decide()).
 */
static int lock_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct sleep_data *d = (void *)ri->data;
	u64 ns = ktime_get_ns() - d->w.start;
	struct wpstat_tctx *c;

	if (READ_ONCE(current->nvcsw) == d->nvcsw)
		return 0;
	c = wpstat_tctx_find();
	if (!wpstat_in_scope(c, WPT_FAULT))
		return 0;
	if (c->fault_mkwrite) {
		wpstat_cause_wait(c, &c->fault_key, WPCA_LOCK,
				  (struct wpstat_wait){
					.n = 1, .ns = ns, .start = d->w,
				  });
		return 0;
	}
	c->lock_n++;
	c->lock_ns += ns;
	c->lock_max = max(c->lock_max, ns);
	c->lock_cpu += wpstat_task_cpu_ns() - d->w.cpu0;
	c->lock_runq += wpstat_task_runq_ns() - d->w.runq0;
	return 0;
}
NOKPROBE_SYMBOL(lock_return);

/*
 * The kretprobe points' handlers (wpstat_attach.c registers them), one
 * krp_<id> for each probe wpstat_probes.def gives a kretprobe.
 */
#define KRP(entry, ret, id)						\
	{ .krp_entry = entry, .krp_return = ret, .krp_data_size = krp_size_##id }
#define krp_FAULT		KRP(fault_entry, fault_return, FAULT)
#define krp_MKCLEAN		KRP(mkclean_entry, mkclean_return, MKCLEAN)
#define krp_BDP			KRP(bdp_entry, bdp_return, BDP)
#define krp_WAIT_BIT		KRP(wait_bit_entry, wait_bit_return, WAIT_BIT)
#define krp_JBD2_ACCESS		KRP(jbd2_access_entry, journal_return, JBD2_ACCESS)
#define krp_XFS_TIME		KRP(xfs_time_entry, journal_return, XFS_TIME)
#define krp_ZFS_TX		KRP(zfs_tx_entry, journal_return, ZFS_TX)
#define krp_LOCK		KRP(lock_entry, lock_return, LOCK)
#define krp_ZFS_FSYNC		KRP(zfs_fsync_entry, zfs_fsync_return, ZFS_FSYNC)
#define krp_ZIL_COMMIT		KRP(zil_commit_entry, zil_commit_return, ZIL_COMMIT)
#define krp_item(id)							\
	[WPP_##id] = krp_##id,
const struct wpstat_handler_set wpstat_krp_handlers[WPP_NR] = {
#define WPSTAT_PROBE(id, ...)						\
	WPSTAT_HANDLERS_OF(KRETPROBE, krp_item, id, __VA_ARGS__)
#include "wpstat_probes.def"
#undef WPSTAT_PROBE
};
