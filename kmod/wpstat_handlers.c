// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_handlers.c - what runs when a probed function is entered or
 * returns, or a tracepoint fires; the enable switch and the filters.
 *
 * Every handler runs with preemption disabled (ftrace, kprobe or
 * tracepoint context): no sleeping, no allocation, no locks.  Inodes are
 * turned into a (dev, ino, generation) key at once and never remembered by
 * pointer.
 *
 * One file, over 800 lines: the handlers share __always_inline helpers
 * (key, filters, hit counts, caller ranges) that must sit in the same
 * translation unit to be inlined into each of them; a call per event is
 * what the cost work removed.
 *
 * What runs once per buffered write or store fault pays for an entry-only
 * callback and a table update, nothing more:
 *
 *   do_page_mkwrite        first vs write-protect from vmf->pte at entry;
 *                          a first write retried (FAULT_FLAG_TRIED) had to
 *                          have its page read in
 *   folio_mkclean          a call (its PTE count needs the return: timing)
 *   folio_wait_stable      a call; on a stable mapping, its caller's return
 *                          address is remembered (stable_site_learn())
 *   balance_dirty_pages_ratelimited_flags
 *                          a call; from a fault if its caller (parent_ip) is
 *                          fault_dirty_shared_page(); a per-CPU record says
 *                          for which inode, should balance_dirty_pages()
 *                          follow
 *   writeback_dirty_folio  tracepoint
 *
 * What runs only when a task is about to sleep may pay more:
 *
 *   balance_dirty_pages    kretprobe: the throttle, for the inode of the
 *                          per-CPU record if it is still the task's own;
 *                          pauses timed from the balance_dirty_pages
 *                          tracepoint to the next one or the return
 *   folio_wait_writeback   tracepoint: a writeback wait; a stable-page wait
 *                          if the stack shows it was tail-called from a
 *                          learned folio_wait_stable() call site
 *   folio_wait_bit         kretprobe: times that stable-page wait, or a
 *                          writeback wait in the write path
 *   writeback_start/_written  tracepoints: a flusher's pass and its reason,
 *                          for the trigger of the folio_mkclean calls in it
 *
 * Events of a task also count in its process's row of the stall table
 * (wpstat_stalls.c): faults, waits, pauses, with times where it blocks.
 *
 * Level "timing" times each shared-mapping write fault whole, with a
 * kretprobe on handle_mm_fault() (its retries joined), and moves
 * folio_mkclean to a kretprobe for mkclean_ptes.  Both mechanisms of
 * folio_mkclean count the same events: its entry-only and kretprobe
 * handlers count only while wpstat_counting_level names their level.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/page-flags.h>
#include <linux/pid.h>
#include <linux/sched/signal.h>
#include <linux/sched.h>
#include <linux/stacktrace.h>
#include <linux/timekeeping.h>
#include <asm/unistd.h>
#include <trace/events/sched.h>
#include <trace/events/writeback.h>

#include "wpstat.h"
#include "wpstat_compat.h"

bool wpstat_enabled = true;
module_param_named(enable, wpstat_enabled, bool, 0444);
MODULE_PARM_DESC(enable, "Count from load (default 1); toggled at run time through debugfs wpstat/control");

u32 wpstat_filter_dev;
struct pid *wpstat_filter_pid;
int wpstat_counting_level;
/*
 * A timed fault's return probe may be detached while the task is inside
 * (a switch to level counts): its WPT_FAULT is then stale, and is known
 * so by the epoch it was set in.
 */
unsigned int wpstat_level_epoch;
bool wpstat_wait_bit_attached;
unsigned long wpstat_entry_ip[WPP_NR];
struct wpstat_range wpstat_fault_dirty_range;
struct wpstat_range wpstat_mkwrite_range;

/* folio_wait_writeback() and folio_wait_stable() (5.10: the page ones). */
static struct wpstat_range fww_range, fws_range;

/* ---- filters and keys ------------------------------------------------- */

/*
 * The process filter holds a reference on the thread group's struct pid:
 * a number would follow an unrelated process once the pid is reused.
 */
static __always_inline bool wpstat_want_task(void)
{
	struct pid *want = READ_ONCE(wpstat_filter_pid);

	return READ_ONCE(wpstat_enabled) && (!want || task_tgid(current) == want);
}

/*
 * Process context: filter on @pid (a reference the caller passes on), or
 * on nothing.  The old reference is dropped once no handler can still be
 * comparing against it (they run with preemption disabled).
 */
void wpstat_set_filter_pid(struct pid *pid)
{
	struct pid *old = xchg(&wpstat_filter_pid, pid);

	if (old) {
		synchronize_rcu();
		put_pid(old);
	}
}

/*
 * Which mount a superblock is, for the key: its backing_dev_info's id,
 * unique for the system's life.  btrfs, FUSE and NFS set up a bdi per
 * mount; a block device's filesystems share the disk's, and tmpfs the
 * no-op one (tmpfs generations are random).
 */
static __always_inline u64 wpstat_sb_id(const struct super_block *sb)
{
	return READ_ONCE(sb->s_bdi)->id;
}

/* Fill @key for @inode; false if the device filter excludes it. */
static __always_inline bool wpstat_key_of(const struct inode *inode,
					  struct wpstat_key *key)
{
	u32 dev, want;

	if (!inode)
		return false;
	dev = inode->i_sb->s_dev;
	want = READ_ONCE(wpstat_filter_dev);
	if (want && dev != want)
		return false;
	key->dev = dev;
	key->ino = inode->i_ino;
	key->gen = inode->i_generation;
	key->sb = wpstat_sb_id(inode->i_sb);
	return true;
}

static __always_inline bool wpstat_key_of_mapping(const struct address_space *mapping,
						  struct wpstat_key *key)
{
	return mapping && wpstat_key_of(mapping->host, key);
}

static __always_inline void wpstat_hit(enum wpstat_probe_id p)
{
	this_cpu_inc(wpstat_probe_stats->hits[p]);
}

static __always_inline bool wpstat_in_range(unsigned long addr,
				     const struct wpstat_range *r)
{
	return addr - r->start < r->size;
}

/* ---- stable-page waits: who called folio_wait_writeback()? ------------- */

/*
 * folio_wait_stable() tail-calls folio_wait_writeback() on both kernels, so
 * a stable-page wait shows on the stack as folio_wait_writeback() returning
 * straight into folio_wait_stable()'s caller.  The return addresses of
 * those callers are learned at folio_wait_stable() entry, for stable
 * mappings only (the only ones that wait).  Without a tail call the caller
 * would be folio_wait_stable() itself, which is recognised too.
 */
#define WPSTAT_STABLE_SITES	64
static unsigned long stable_sites[WPSTAT_STABLE_SITES];
static atomic64_t stable_sites_overflow = ATOMIC64_INIT(0);

static __always_inline bool stable_site_known(unsigned long ret)
{
	int i;

	for (i = 0; i < WPSTAT_STABLE_SITES; i++) {
		unsigned long s = READ_ONCE(stable_sites[i]);

		if (s == ret)
			return true;
		if (!s)
			return false;
	}
	return false;
}

static __always_inline void stable_site_learn(unsigned long ret)
{
	int i;

	for (i = 0; i < WPSTAT_STABLE_SITES; i++) {
		unsigned long s = READ_ONCE(stable_sites[i]);

		if (s == ret)
			return;
		if (!s) {
			s = cmpxchg(&stable_sites[i], 0, ret);
			if (!s || s == ret)
				return;
		}
	}
	atomic64_inc(&stable_sites_overflow);
}

u64 wpstat_stable_sites_overflow(void)
{
	return atomic64_read(&stable_sites_overflow);
}

#define WPSTAT_STACK_DEPTH	16

enum wpstat_wait_kind {
	WPW_OTHER,		/* fsync, truncate, ...: not a write's stall */
	WPW_STABLE,		/* folio_wait_stable(), on a stable mapping */
	WPW_WRITE,		/* other writeback wait in a write fault or write(2) */
};

/* A write system call: its writeback waits are the writer's stalls. */
static bool in_write_syscall(void)
{
	switch (wpstat_syscall_nr()) {
	case __NR_write:
	case __NR_pwrite64:
	case __NR_writev:
	case __NR_pwritev:
	case __NR_pwritev2:
		return true;
	}
	return false;
}

/*
 * Called from the folio_wait_writeback tracepoint: a task about to sleep.
 * A stable-page wait is folio_wait_writeback() returning into a
 * folio_wait_stable() call site, or, where the compiler inlined the
 * former into the latter (a KASAN build of 6.12), folio_wait_stable()'s
 * own frame; any other wait is the writer's if it is below
 * do_page_mkwrite() or in a write system call.
 */
static noinline enum wpstat_wait_kind wait_classify(bool stable_mapping)
{
	unsigned long entries[WPSTAT_STACK_DEPTH];
	unsigned int n, i;
	bool fww = false;

	n = stack_trace_save(entries, ARRAY_SIZE(entries), 0);
	for (i = 0; i < n; i++) {
		if (!fww && stable_mapping &&
		    wpstat_in_range(entries[i], &fws_range))
			return WPW_STABLE;
		if (!fww && i + 1 < n && wpstat_in_range(entries[i], &fww_range)) {
			fww = true;
			if (stable_mapping &&
			    (wpstat_in_range(entries[i + 1], &fws_range) ||
			     stable_site_known(entries[i + 1])))
				return WPW_STABLE;
		} else if (fww && wpstat_in_range(entries[i], &wpstat_mkwrite_range)) {
			return WPW_WRITE;
		}
	}
	return in_write_syscall() ? WPW_WRITE : WPW_OTHER;
}

/* ---- entry-only callbacks (one ftrace_ops, wpstat_entry()) ------------- */

/*
 * The key of @vmf's file if it is to be counted; *first: no PTE yet;
 * *readin: a first write whose page had to be read in.  A fault whose
 * page was not in the page cache (or was, locked for its read) drops
 * the mmap or VMA lock, waits for the read and asks for a retry
 * (filemap_fault(): VM_FAULT_RETRY, with VM_FAULT_MAJOR after a read);
 * the retry that gets here carries FAULT_FLAG_TRIED, which is also what
 * makes the kernel count the fault major (mm_account_fault()).
 * do_page_mkwrite() overwrites vmf->flags only inside.
 */
static __always_inline bool mkwrite_key(struct vm_fault *vmf,
					struct wpstat_key *key, bool *first,
					bool *readin)
{
	struct file *file = vmf->vma->vm_file;

	if (!file || !wpstat_want_task() ||
	    !wpstat_key_of_mapping(file->f_mapping, key))
		return false;
	*first = !wpstat_vmf_has_pte(vmf);
	*readin = *first && (READ_ONCE(vmf->flags) & FAULT_FLAG_TRIED);
	return true;
}

/*
 * A write fault: the inode's count and the process's row; a read-in
 * is counted in both too, with its time if @readin_ns (one row each).
 * Returns where the fault's count went.
 */
static __always_inline struct wpstat_gen mkwrite_count(const struct wpstat_key *key,
						       bool first, bool readin,
						       u64 readin_ns)
{
	struct wpstat_ref r = wpstat_lookup(key);
	struct wpstat_gen gen;

	wpstat_add(r, first ? WPC_MKWRITE_FIRST : WPC_MKWRITE_WP, 1);
	if (unlikely(readin)) {
		wpstat_add(r, WPC_READIN_WAITS, 1);
		if (readin_ns)
			wpstat_add_time(r, WPC_READIN_WAIT_NS,
					WPC_READIN_WAIT_MAX_NS, readin_ns);
	}
	gen.inodes = wpstat_ref_gen(r);
	gen.stalls = wpstat_stall_fault(key, first, readin, readin_ns);
	return gen;
}

/*
 * Whether the task is inside one of the timed calls @scope names
 * (WPT_FAULT: a write fault; WPT_MODIFIED: a write(2) scope); one left
 * by an earlier level is dropped.  The owner's context only, as every
 * tctx use.
 */
static bool in_scope(struct wpstat_tctx *c, unsigned int scope)
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
static void fault_wait_done(struct wpstat_tctx *c, u64 ns, u64 cpu0, u64 runq0)
{
	if (!in_scope(c, WPT_FAULT))
		return;
	c->fault_named_ns += ns;
	c->fault_wait_cpu += wpstat_task_cpu_ns() - cpu0;
	c->fault_wait_runq += wpstat_task_runq_ns() - runq0;
}

/*
 * Level timing: a fault whose handle_mm_fault() opened the task's scope
 * (fault_entry()) is counted with it, and its read-in timed: the time
 * from the fault's start to here, when it had to read its page.
 */
static noinline void mkwrite_timed(const struct wpstat_key *key, bool first,
				   bool readin)
{
	struct wpstat_tctx *c = wpstat_tctx_find();
	u64 readin_ns = 0;

	if (!in_scope(c, WPT_FAULT) || c->fault_mkwrite ||
	    !wpstat_key_equal(&c->fault_key, key)) {
		mkwrite_count(key, first, readin, 0);
		return;
	}
	if (readin) {
		/* Never 0: 0 says "not timed" to mkwrite_count(). */
		readin_ns = max_t(u64, ktime_get_ns() - c->fault_start, 1);
		fault_wait_done(c, readin_ns, c->fault_cpu0, c->fault_runq0);
	}
	c->fault_gen = mkwrite_count(key, first, readin, readin_ns);
	c->fault_mkwrite = true;
}

static __always_inline void mkwrite_enter(struct pt_regs *args)
{
	struct wpstat_key key;
	bool first, readin;

	wpstat_hit(WPP_MKWRITE);
	if (!mkwrite_key(wpstat_mkwrite_vmf(args), &key, &first, &readin))
		return;
	if (READ_ONCE(wpstat_counting_level) == WPL_TIMING)
		mkwrite_timed(&key, first, readin);
	else
		mkwrite_count(&key, first, readin, 0);
}

/* Writeback runs in kworkers: the task filter does not apply to mkclean. */
static __always_inline bool mkclean_key(struct pt_regs *args,
					struct wpstat_key *key)
{
	return READ_ONCE(wpstat_enabled) &&
	       wpstat_key_of_mapping(wpstat_mkclean_mapping(args), key);
}

/*
 * What started the writeback that is cleaning a folio: reclaim; for a
 * flusher, the reason of its pass (writeback_start); for any other task,
 * the system call it is in.
 */
static enum wpstat_counter mkclean_trigger(void)
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

/* A clean: the inode's counts; returns the generation they went to. */
static __always_inline u32 mkclean_count(const struct wpstat_key *key,
					 struct pt_regs *args)
{
	struct wpstat_ref r = wpstat_lookup(key);

	wpstat_add(r, WPC_MKCLEAN_CALLS, 1);
	wpstat_add(r, WPC_MKCLEAN_PAGES, wpstat_mkclean_nr_pages(args));
	wpstat_add(r, mkclean_trigger(), 1);
	return wpstat_ref_gen(r);
}

static __always_inline void mkclean_enter(struct pt_regs *args)
{
	struct wpstat_key key;

	wpstat_hit(WPP_MKCLEAN);
	if (READ_ONCE(wpstat_counting_level) == WPL_COUNTS &&
	    mkclean_key(args, &key))
		mkclean_count(&key, args);
}

static __always_inline void stable_enter(unsigned long parent_ip,
					 struct pt_regs *args)
{
	struct address_space *mapping;
	struct wpstat_key key;

	wpstat_hit(WPP_STABLE);
	mapping = wpstat_stable_mapping(args);
	if (wpstat_want_task() && wpstat_key_of_mapping(mapping, &key)) {
		wpstat_count(&key, WPC_STABLE_CALLS, 1);
		if (wpstat_mapping_stable_writes(mapping))
			stable_site_learn(parent_ip);
	}
}

/*
 * What the last balance_dirty_pages_ratelimited_flags() call on this CPU
 * was for.  balance_dirty_pages() is called only from there, so if the
 * record is the current task's and the task has not left the CPU since
 * (its context-switch count is unchanged), the record is of the call that
 * is throttling it.
 */
struct wpstat_bdp_record {
	unsigned long task;		/* identity, never dereferenced */
	unsigned long switches;
	struct wpstat_key key;
	bool counted;			/* the filters let the call count */
};
static struct wpstat_bdp_record __percpu *wpstat_bdp_record;

static __always_inline void bdp_rl_enter(unsigned long parent_ip,
					 struct pt_regs *args)
{
	struct wpstat_bdp_record *r = this_cpu_ptr(wpstat_bdp_record);
	struct wpstat_ref ref;

	wpstat_hit(WPP_BDP_RL);
	r->task = (unsigned long)current;
	r->switches = wpstat_task_switches(current);
	r->counted = wpstat_want_task() &&
		     wpstat_key_of_mapping(wpstat_bdp_rl_mapping(args), &r->key);
	if (!r->counted)
		return;
	ref = wpstat_lookup(&r->key);
	wpstat_add(ref, WPC_BDP_CALLS, 1);
	/* balance_dirty_pages_ratelimited() tail-calls the _flags variant. */
	if (wpstat_in_range(parent_ip, &wpstat_fault_dirty_range))
		wpstat_add(ref, WPC_BDP_FAULT_CALLS, 1);
}

/*
 * __destroy_inode(): the inode leaves the inode cache (a deleted file at
 * its last close, or any inode evicted).  Its row becomes reclaimable; an
 * event for the same (dev, ino, generation) later takes it back.  Not
 * filtered: a row is marked whoever destroys the inode.
 */
static __always_inline void evict_enter(struct pt_regs *args)
{
	struct wpstat_key key;
	struct inode *inode = wpstat_inode_arg(args);

	wpstat_hit(WPP_EVICT);
	key.dev = inode->i_sb->s_dev;
	key.ino = inode->i_ino;
	key.gen = inode->i_generation;
	key.sb = wpstat_sb_id(inode->i_sb);
	wpstat_mark_gone(&key);
	wpstat_stalls_note_death();
}

/*
 * The one ftrace_ops callback of every entry-only attachment point
 * (wpstat_attach.c filters it on their addresses), most frequent first.
 */
static void notrace wpstat_entry(WPSTAT_FTRACE_CB_PROTO)
{
	int bit = wpstat_ftrace_trylock(ip, parent_ip);
	struct pt_regs *args = wpstat_fregs_args(fregs);
	int p;

	if (unlikely(bit < 0)) {
		for (p = 0; p < WPP_NR; p++)
			if (ip == wpstat_entry_ip[p])
				this_cpu_inc(wpstat_probe_stats->missed[p]);
		return;
	}
	if (ip == wpstat_entry_ip[WPP_BDP_RL])
		bdp_rl_enter(parent_ip, args);
	else if (ip == wpstat_entry_ip[WPP_STABLE])
		stable_enter(parent_ip, args);
	else if (ip == wpstat_entry_ip[WPP_MKWRITE])
		mkwrite_enter(args);
	else if (ip == wpstat_entry_ip[WPP_MKCLEAN])
		mkclean_enter(args);
	else if (ip == wpstat_entry_ip[WPP_EVICT])
		evict_enter(args);
	wpstat_ftrace_unlock(bit);
}

/* ---- kretprobes --------------------------------------------------------- */

/*
 * A write fault's scope is over (at @end): its whole time, and the part
 * of it in no named wait, go to the file if do_page_mkwrite() counted
 * it, in the tables its count went to.  A fault that never got there
 * (no ->page_mkwrite, an error) is no mkwrite fault: nothing is added.
 */
static void fault_close(struct wpstat_tctx *c, u64 end)
{
	u64 ns = end - c->fault_start, unnamed, cpu, runq;

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
		wpstat_count_time(&c->fault_key, WPC_MKWRITE_NS,
				  WPC_MKWRITE_MAX_NS, ns, c->fault_gen.inodes);
		wpstat_stall_time(&c->fault_key, WPS_FAULT_NS, ns,
				  c->fault_gen.stalls);
		wpstat_hist_add(WPH_MKWRITE, &c->fault_key, ns);
		wpstat_count_gen(&c->fault_key, WPC_MKWRITE_UNNAMED_NS, unnamed,
				 c->fault_gen.inodes);
		wpstat_stall_ns(&c->fault_key, WPS_FAULT_UNNAMED_NS, unnamed,
				c->fault_gen.stalls);
		wpstat_count_gen(&c->fault_key, WPC_MKWRITE_CPU_NS, cpu,
				 c->fault_gen.inodes);
		wpstat_stall_ns(&c->fault_key, WPS_FAULT_CPU_NS, cpu,
				c->fault_gen.stalls);
		wpstat_count_gen(&c->fault_key, WPC_MKWRITE_RUNQ_NS, runq,
				 c->fault_gen.inodes);
		wpstat_stall_ns(&c->fault_key, WPS_FAULT_RUNQ_NS, runq,
				c->fault_gen.stalls);
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
	if (in_scope(c, WPT_FAULT) && c->fault_retry)
		fault_close(c, c->fault_end);
}

/*
 * handle_mm_fault(), level timing: a write fault on a shared file
 * mapping opens the task's fault scope, which the waits inside it
 * (read-in, stable page, writeback, journal, dirty-throttle pause) add
 * their time to.  A fault whose page had to be read in returns
 * VM_FAULT_RETRY after the read and is retried at once at the same
 * address (FAULT_FLAG_TRIED): the retry continues the scope, so the
 * fault is timed from its first attempt.  Any other fault returns at
 * once (no instance, no return probe).
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
	if (in_scope(c, WPT_FAULT) && c->fault_retry &&
	    c->fault_addr == addr && wpstat_key_equal(&c->fault_key, &key)) {
		c->fault_retry = false;		/* the same fault, again */
		return 0;
	}
	fault_drop_pending(c);
	c = wpstat_tctx_get();	/* closing the old scope may release it */
	if (!c)
		return 1;
	/* Not in a write(2) scope either: a fault there only reads. */
	c->active = (c->active & ~WPT_MODIFIED) | WPT_FAULT;
	c->fault_key = key;
	c->fault_addr = addr;
	c->fault_named_ns = 0;
	c->fault_retry = false;
	c->fault_mkwrite = false;
	c->fault_epoch = READ_ONCE(wpstat_level_epoch);
	c->fault_wait_cpu = 0;
	c->fault_wait_runq = 0;
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

	if (!in_scope(c, WPT_FAULT) || c->fault_retry)
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

struct mkclean_data {
	struct wpstat_key key;
	u32 gen;		/* where its count went */
};

static int mkclean_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct mkclean_data *d = (void *)ri->data;

	wpstat_hit(WPP_MKCLEAN);
	if (READ_ONCE(wpstat_counting_level) != WPL_TIMING ||
	    !mkclean_key(regs, &d->key))
		return 1;
	d->gen = mkclean_count(&d->key, regs);
	return 0;
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
static void bdp_close_pause(struct wpstat_tctx *c, u64 now)
{
	u64 ns;

	if (!c->pause_start)
		return;
	ns = now - c->pause_start;
	c->pause_start = 0;
	wpstat_count_time(&c->bdp_key, WPC_BDP_PAUSE_NS, WPC_BDP_PAUSE_MAX_NS,
			  ns, c->pause_gen.inodes);
	wpstat_stall_time(&c->bdp_key, WPS_PAUSE_NS, ns, c->pause_gen.stalls);
	wpstat_hist_add(WPH_BDP_PAUSE, &c->bdp_key, ns);
	fault_wait_done(c, ns, c->pause_cpu0, c->pause_runq0);
}

/* balance_dirty_pages(): entered only outside the free-run zone. */
static int bdp_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct wpstat_bdp_record *r = this_cpu_ptr(wpstat_bdp_record);
	struct wpstat_tctx *c;

	wpstat_hit(WPP_BDP);
	if (r->task != (unsigned long)current ||
	    r->switches != wpstat_task_switches(current)) {
		/*
		 * The task left the CPU since its ratelimited call (it slept
		 * creating a cgroup wb, or was preempted and another task's
		 * call took the record): whose write this is, is lost, and
		 * said so if the task filter would have counted it.
		 */
		if (wpstat_want_task())
			wpstat_count_bdp_unattributed();
		return 1;
	}
	if (!r->counted)
		return 1;
	wpstat_count(&r->key, WPC_BDP_THROTTLED, 1);
	c = wpstat_tctx_get();
	if (!c || (c->active & WPT_BDP))
		return 1;
	c->active |= WPT_BDP;
	c->bdp_key = r->key;
	c->bdp_async = wpstat_bdp_flags(regs) & WPSTAT_BDP_ASYNC;
	c->pause_start = 0;
	return 0;
}
NOKPROBE_SYMBOL(bdp_entry);

static int bdp_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct wpstat_tctx *c = wpstat_tctx_find();

	if (c && (c->active & WPT_BDP)) {
		bdp_close_pause(c, ktime_get_ns());
		wpstat_tctx_put(c, WPT_BDP);
	}
	return 0;
}
NOKPROBE_SYMBOL(bdp_return);

/* folio_wait_bit(): only a wait announced by the tracepoint. */
/* A timed wait's start: when, and the task's CPU and runqueue time then. */
struct wait_start {
	u64 start;
	u64 cpu0;
	u64 runq0;
};

static __always_inline void wait_start_now(struct wait_start *w)
{
	w->cpu0 = wpstat_task_cpu_ns();
	w->runq0 = wpstat_task_runq_ns();
	w->start = ktime_get_ns();
}

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
		fault_wait_done(c, ns, w->cpu0, w->runq0);
		if (c->wait_stable) {
			wpstat_count_time(&c->wait_key, WPC_STABLE_WAIT_NS,
					  WPC_STABLE_WAIT_MAX_NS, ns,
					  c->wait_gen.inodes);
			wpstat_stall_time(&c->wait_key, WPS_STABLE_NS, ns,
					  c->wait_gen.stalls);
			wpstat_hist_add(WPH_STABLE_WAIT, &c->wait_key, ns);
		} else {
			wpstat_count_time(&c->wait_key, WPC_WB_WRITE_WAIT_NS,
					  WPC_WB_WRITE_WAIT_MAX_NS, ns,
					  c->wait_gen.inodes);
			wpstat_stall_time(&c->wait_key, WPS_WB_NS, ns,
					  c->wait_gen.stalls);
		}
		wpstat_tctx_put(c, WPT_WAIT);
	}
	return 0;
}
NOKPROBE_SYMBOL(wait_bit_return);

/*
 * jbd2__journal_start() and jbd2_journal_get_write_access() inside a timed
 * write fault: a call in which the task slept (its voluntary context
 * switches moved) waited for the journal, e.g. ext4_page_mkwrite()'s mtime
 * update (ext4_dirty_inode) on the inode buffer a commit is writing
 * (do_get_write_access: BH_Shadow, lock_buffer), or for a locked or full
 * transaction (start_this_handle).  Calls that did not sleep are not waits.
 */
struct journal_data {
	struct wait_start w;
	unsigned long nvcsw;
};

/*
 * The write(2) scopes (WPT_MODIFIED), whose journal waits go to the file's
 * row; never inside a fault, nor one inside the other:
 *   file_modified(): write(2) and its kin update mtime here, before the
 *     copy (ext4_write_checks), through the same ext4_dirty_inode() as
 *     the fault;
 *   generic_perform_write(): the copy loop, whose ->write_begin starts a
 *     handle per page without delalloc (ext4_write_begin), and whose
 *     ->write_end dirties the inode when the size grows: generic_write_end
 *     -> mark_inode_dirty (5.10, 6.1), ext4_da_do_write_end's i_disksize
 *     update (6.3 on).  xfs and btrfs have loops of their own.
 */
static __always_inline int write_scope_entry(struct file *file)
{
	struct wpstat_tctx *c;
	struct wpstat_key key;

	if (!wpstat_want_task() || !file ||
	    !wpstat_key_of(file_inode(file), &key))
		return 1;
	c = wpstat_tctx_get();
	if (!c)
		return 1;
	fault_drop_pending(c);	/* a fault a signal interrupted is over */
	if (in_scope(c, WPT_FAULT | WPT_MODIFIED))
		return 1;
	c = wpstat_tctx_get();	/* dropping a stale scope may release it */
	if (!c)
		return 1;
	c->active |= WPT_MODIFIED;
	c->fault_key = key;
	c->fault_epoch = READ_ONCE(wpstat_level_epoch);
	return 0;
}

static int modified_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	wpstat_hit(WPP_FILE_MODIFIED);
	return write_scope_entry(wpstat_file_arg(regs));
}
NOKPROBE_SYMBOL(modified_entry);

/* xfs's write checks (6.0 on) end here: file_modified_flags() is static. */
static int kiocb_modified_entry(struct kretprobe_instance *ri,
				struct pt_regs *regs)
{
	wpstat_hit(WPP_KIOCB_MODIFIED);
	return write_scope_entry(wpstat_kiocb_file(regs));
}
NOKPROBE_SYMBOL(kiocb_modified_entry);

static int perform_write_entry(struct kretprobe_instance *ri,
			       struct pt_regs *regs)
{
	wpstat_hit(WPP_PERFORM_WRITE);
	return write_scope_entry(wpstat_perform_write_file(regs));
}
NOKPROBE_SYMBOL(perform_write_entry);

static int modified_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct wpstat_tctx *c = wpstat_tctx_find();

	if (c && (c->active & WPT_MODIFIED))
		wpstat_tctx_put(c, WPT_MODIFIED);
	return 0;
}
NOKPROBE_SYMBOL(modified_return);

static int journal_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct journal_data *d = (void *)ri->data;

	/* Reclaim in the scope (an inode evicted: ext4_evict_inode) is not it. */
	if ((current->flags & PF_MEMALLOC) ||
	    !in_scope(wpstat_tctx_find(), WPT_FAULT | WPT_MODIFIED))
		return 1;
	d->nvcsw = READ_ONCE(current->nvcsw);
	wait_start_now(&d->w);
	return 0;
}
NOKPROBE_SYMBOL(journal_entry);

static int jbd2_start_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	wpstat_hit(WPP_JBD2_START);
	return journal_entry(ri, regs);
}
NOKPROBE_SYMBOL(jbd2_start_entry);

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

static int journal_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct journal_data *d = (void *)ri->data;
	u64 ns = ktime_get_ns() - d->w.start;
	struct wpstat_tctx *c;
	struct wpstat_ref r;

	if (READ_ONCE(current->nvcsw) == d->nvcsw)
		return 0;
	c = wpstat_tctx_find();
	if (!in_scope(c, WPT_FAULT | WPT_MODIFIED))
		return 0;
	fault_wait_done(c, ns, d->w.cpu0, d->w.runq0);
	/* Count and time in one row of each table: no reset splits them. */
	r = wpstat_lookup(&c->fault_key);
	wpstat_add(r, WPC_JOURNAL_WAITS, 1);
	wpstat_add_time(r, WPC_JOURNAL_WAIT_NS, WPC_JOURNAL_WAIT_MAX_NS, ns);
	wpstat_stall_event(&c->fault_key, WPS_JOURNAL, WPS_JOURNAL_NS, ns);
	return 0;
}
NOKPROBE_SYMBOL(journal_return);

/* ---- tracepoints -------------------------------------------------------- */

static void notrace tp_dirty_folio(WPSTAT_TP_FOLIO_PROTO)
{
	struct wpstat_ref r;
	struct wpstat_key key;

	wpstat_hit(WPP_TP_DIRTY);
	/* Folios are dirtied by whoever writes: the task filter applies. */
	if (wpstat_want_task() && wpstat_key_of_mapping(mapping, &key)) {
		r = wpstat_lookup(&key);
		wpstat_add(r, WPC_DIRTIED, 1);
		wpstat_add(r, WPC_DIRTIED_PAGES, wpstat_tp_folio_nr_pages(folio));
	}
}

/* Traced once per loop in folio_wait_writeback(), right before it sleeps. */
static void notrace tp_wait_writeback(WPSTAT_TP_FOLIO_PROTO)
{
	enum wpstat_wait_kind kind;
	struct wpstat_tctx *c;
	struct wpstat_key key;
	struct wpstat_gen gen;
	struct wpstat_ref r;

	wpstat_hit(WPP_TP_WAIT);
	if (!wpstat_want_task() || !wpstat_key_of_mapping(mapping, &key))
		return;
	r = wpstat_lookup(&key);
	wpstat_add(r, WPC_WB_WAITS, 1);
	kind = wait_classify(wpstat_mapping_stable_writes(mapping));
	if (kind == WPW_OTHER)
		return;
	if (kind == WPW_STABLE)
		wpstat_add(r, WPC_STABLE_WAITS, 1);
	/* The time goes to this row: stable_wait_ns or wb_write_wait_ns. */
	gen.inodes = wpstat_ref_gen(r);
	gen.stalls = wpstat_stall_add(&key, kind == WPW_STABLE ? WPS_STABLE :
				      WPS_WB, 1);
	/* Announce the wait to folio_wait_bit()'s kretprobe, which times it. */
	if (!READ_ONCE(wpstat_wait_bit_attached))
		return;
	c = wpstat_tctx_get();
	if (!c)
		return;
	c->active |= WPT_WAIT;
	c->wait_entered = false;
	c->wait_switches = wpstat_task_switches(current);
	c->wait_stable = kind == WPW_STABLE;
	c->wait_folio = folio;
	c->wait_key = key;
	c->wait_gen = gen;
}

/*
 * Traced once per loop in balance_dirty_pages(): with pause > 0 right
 * before io_schedule_timeout(pause), with pause <= 0 when it lets the task
 * go.  A pause lasts until the next trace or balance_dirty_pages() returns.
 */
static void notrace tp_balance_dirty_pages(WPSTAT_TP_BDP_PROTO)
{
	struct wpstat_tctx *c = wpstat_tctx_find();
	u64 now;

	wpstat_hit(WPP_TP_BDP);
	if (!c || !(c->active & WPT_BDP))
		return;
	now = ktime_get_ns();
	bdp_close_pause(c, now);
	if (pause > 0 && !c->bdp_async) {
		struct wpstat_ref r = wpstat_lookup(&c->bdp_key);

		wpstat_add(r, WPC_BDP_PAUSES, 1);
		c->pause_gen.inodes = wpstat_ref_gen(r);
		c->pause_gen.stalls = wpstat_stall_add(&c->bdp_key, WPS_PAUSE, 1);
		c->pause_cpu0 = wpstat_task_cpu_ns();
		c->pause_runq0 = wpstat_task_runq_ns();
		c->pause_start = now;
	}
}

/*
 * Flusher passes whose work item's head was checked (plausible), and
 * whether one was not: then no reason is read again until unload, and
 * the flusher's mkcleans count as mkclean_other.
 */
static atomic64_t wb_work_checked = ATOMIC64_INIT(0);
static bool wb_work_off;

u64 wpstat_wb_work_checked(void)
{
	return atomic64_read(&wb_work_checked);
}

bool wpstat_wb_work_off(void)
{
	return READ_ONCE(wb_work_off);
}

static int notrace wb_work_reason(struct bdi_writeback *wb,
				  struct wb_writeback_work *work)
{
	if (READ_ONCE(wb_work_off))
		return -1;
	if (!wpstat_wb_work_plausible(wb, work)) {
		WRITE_ONCE(wb_work_off, true);
		pr_warn_once("struct wb_writeback_work: unknown layout, the flusher's reasons are off (mkclean_other)\n");
		return -1;
	}
	atomic64_inc(&wb_work_checked);
	return wpstat_wb_work_reason(work);
}

/* A flusher starts a pass: its reason is the trigger of its mkcleans. */
static void notrace tp_wb_start(WPSTAT_TP_WB_WORK_PROTO)
{
	struct wpstat_tctx *c;

	wpstat_hit(WPP_TP_WB_START);
	c = wpstat_tctx_get();
	if (!c)
		return;
	c->active |= WPT_WB;
	c->wb_reason = wb_work_reason(wb, work);
}

static void notrace tp_wb_written(WPSTAT_TP_WB_WORK_PROTO)
{
	struct wpstat_tctx *c = wpstat_tctx_find();

	wpstat_hit(WPP_TP_WB_WRITTEN);
	if (c && (c->active & WPT_WB))
		wpstat_tctx_put(c, WPT_WB);
}

/* A task exits: whatever call it was in, its context is released. */
static void notrace tp_process_exit(WPSTAT_TP_EXIT_PROTO)
{
	wpstat_hit(WPP_TP_EXIT);
	/* Its process may be gone: the stall table may fold its rows. */
	wpstat_stalls_note_death();
	if (p == current)
		wpstat_tctx_exit_task();
}

/*
 * The probes are registered by address (the tracepoints are not exported),
 * so nothing else compares their prototypes with the kernel's: a changed
 * tracepoint would register and read its arguments from the wrong slots.
 * The kernel's own check_trace_callback_type_*() make every mismatch a
 * build error (-Werror=incompatible-pointer-types) instead.
 */
static void __maybe_unused wpstat_check_tp_types(void)
{
	wpstat_check_tp_type(WPSTAT_TP_DIRTY, tp_dirty_folio);
	wpstat_check_tp_type(WPSTAT_TP_WAIT, tp_wait_writeback);
	check_trace_callback_type_balance_dirty_pages(tp_balance_dirty_pages);
	check_trace_callback_type_writeback_start(tp_wb_start);
	check_trace_callback_type_writeback_written(tp_wb_written);
	check_trace_callback_type_sched_process_exit(tp_process_exit);
}

const struct wpstat_handler_set wpstat_handlers[WPP_NR] = {
	[WPP_FAULT] = { .krp_entry = fault_entry, .krp_return = fault_return },
	[WPP_MKWRITE] = { .ftrace = wpstat_entry },
	[WPP_MKCLEAN] = { .ftrace = wpstat_entry, .krp_entry = mkclean_entry,
			  .krp_return = mkclean_return,
			  .krp_data_size = sizeof(struct mkclean_data) },
	[WPP_STABLE] = { .ftrace = wpstat_entry },
	[WPP_BDP_RL] = { .ftrace = wpstat_entry },
	[WPP_EVICT] = { .ftrace = wpstat_entry },
	[WPP_BDP] = { .krp_entry = bdp_entry, .krp_return = bdp_return },
	[WPP_WAIT_BIT] = { .krp_entry = wait_bit_entry,
			   .krp_return = wait_bit_return,
			   .krp_data_size = sizeof(struct wait_start) },
	[WPP_TP_DIRTY] = { .tp = tp_dirty_folio },
	[WPP_TP_WAIT] = { .tp = tp_wait_writeback },
	[WPP_TP_BDP] = { .tp = tp_balance_dirty_pages },
	[WPP_TP_WB_START] = { .tp = tp_wb_start },
	[WPP_TP_WB_WRITTEN] = { .tp = tp_wb_written },
	[WPP_TP_EXIT] = { .tp = tp_process_exit },
	[WPP_PERFORM_WRITE] = { .krp_entry = perform_write_entry,
				.krp_return = modified_return },
	[WPP_FILE_MODIFIED] = { .krp_entry = modified_entry,
				.krp_return = modified_return },
	[WPP_KIOCB_MODIFIED] = { .krp_entry = kiocb_modified_entry,
				 .krp_return = modified_return },
	[WPP_JBD2_START] = { .krp_entry = jbd2_start_entry,
			     .krp_return = journal_return,
			     .krp_data_size = sizeof(struct journal_data) },
	[WPP_JBD2_ACCESS] = { .krp_entry = jbd2_access_entry,
			      .krp_return = journal_return,
			      .krp_data_size = sizeof(struct journal_data) },
	[WPP_XFS_TIME] = { .krp_entry = xfs_time_entry,
			   .krp_return = journal_return,
			   .krp_data_size = sizeof(struct journal_data) },
};

/* ---- floor mode: the same attachments, empty handlers ------------------ */

static void notrace floor_entry(WPSTAT_FTRACE_CB_PROTO)
{
}

static int floor_krp_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	return 0;	/* arm the return probe, as the real handlers do */
}
NOKPROBE_SYMBOL(floor_krp_entry);

static int floor_krp_return(struct kretprobe_instance *ri,
			    struct pt_regs *regs)
{
	return 0;
}
NOKPROBE_SYMBOL(floor_krp_return);

static void notrace floor_tp_folio(WPSTAT_TP_FOLIO_PROTO)
{
}

static void notrace floor_tp_bdp(WPSTAT_TP_BDP_PROTO)
{
}

static void notrace floor_tp_exit(WPSTAT_TP_EXIT_PROTO)
{
}

static void notrace floor_tp_wb(WPSTAT_TP_WB_WORK_PROTO)
{
}

/* Same data_size as the real handlers: the same instance pools. */
#define FLOOR_KRP(id, size)						\
	[id] = { .ftrace = floor_entry, .krp_entry = floor_krp_entry,	\
		 .krp_return = floor_krp_return, .krp_data_size = size }

const struct wpstat_handler_set wpstat_floor_handlers[WPP_NR] = {
	FLOOR_KRP(WPP_FAULT, 0),
	[WPP_MKWRITE] = { .ftrace = floor_entry },
	FLOOR_KRP(WPP_MKCLEAN, sizeof(struct mkclean_data)),
	[WPP_STABLE] = { .ftrace = floor_entry },
	[WPP_BDP_RL] = { .ftrace = floor_entry },
	[WPP_EVICT] = { .ftrace = floor_entry },
	FLOOR_KRP(WPP_BDP, 0),
	FLOOR_KRP(WPP_WAIT_BIT, sizeof(struct wait_start)),
	[WPP_TP_DIRTY] = { .tp = floor_tp_folio },
	[WPP_TP_WAIT] = { .tp = floor_tp_folio },
	[WPP_TP_BDP] = { .tp = floor_tp_bdp },
	[WPP_TP_WB_START] = { .tp = floor_tp_wb },
	[WPP_TP_WB_WRITTEN] = { .tp = floor_tp_wb },
	[WPP_TP_EXIT] = { .tp = floor_tp_exit },
	FLOOR_KRP(WPP_FILE_MODIFIED, 0),
	FLOOR_KRP(WPP_KIOCB_MODIFIED, 0),
	FLOOR_KRP(WPP_PERFORM_WRITE, 0),
	FLOOR_KRP(WPP_JBD2_START, sizeof(struct journal_data)),
	FLOOR_KRP(WPP_JBD2_ACCESS, sizeof(struct journal_data)),
	FLOOR_KRP(WPP_XFS_TIME, sizeof(struct journal_data)),
};

/* ---- set-up --------------------------------------------------------------- */

/*
 * The function around @addr, from kallsyms' "name+0xoff/0xsize": its
 * start and size.  -ENOENT if @addr is in no known function.
 */
int wpstat_symbol_range(unsigned long addr, struct wpstat_range *r)
{
	char buf[KSYM_SYMBOL_LEN];
	unsigned long off, size;
	char *plus;

	sprint_symbol(buf, addr);
	plus = strrchr(buf, '+');
	if (!plus || sscanf(plus, "+%lx/%lx", &off, &size) != 2 || !size)
		return -ENOENT;
	r->start = addr - off;
	r->size = size;
	return 0;
}

int wpstat_handlers_init(void)
{
	int ret;

	ret = wpstat_symbol_range((unsigned long)WPSTAT_FN_WAIT_WRITEBACK,
				  &fww_range);
	if (!ret)
		ret = wpstat_symbol_range((unsigned long)WPSTAT_TARGET_STABLE,
					  &fws_range);
	if (ret) {
		pr_err("cannot find %s/%s in kallsyms\n",
		       __stringify(WPSTAT_FN_WAIT_WRITEBACK),
		       __stringify(WPSTAT_TARGET_STABLE));
		return ret;
	}
	wpstat_bdp_record = alloc_percpu(struct wpstat_bdp_record);
	return wpstat_bdp_record ? 0 : -ENOMEM;
}

/* After every handler is gone. */
void wpstat_handlers_exit(void)
{
	free_percpu(wpstat_bdp_record);
	wpstat_bdp_record = NULL;
	put_pid(xchg(&wpstat_filter_pid, NULL));
}
