/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wpstat_compat.h - every difference between the kernels wpstat supports
 * (Debian 11's 5.10, 6.1, 6.12 and sid's 7.2) lives here, modelled on
 * lttng-modules' wrapper/, and so does every access to a probed function's
 * arguments.
 *
 * Kbuild feature-probes the installed headers and passes WPSTAT_HAVE_*.
 * What headers cannot show (prototypes of static functions) is described
 * at the point of use; the probes only rely on what all versions share.
 */
#ifndef _WPSTAT_COMPAT_H
#define _WPSTAT_COMPAT_H

#include <linux/ftrace.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/backing-dev-defs.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/pagemap.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/uaccess.h>
#include <linux/writeback.h>
#include <asm/syscall.h>
#ifdef WPSTAT_HAVE_FTRACE_RECURSION_TRYLOCK
#include <linux/trace_recursion.h>
#endif

/*
 * ftrace_ops callbacks.  Declare one as
 *   void notrace cb(WPSTAT_FTRACE_CB_PROTO)
 * and register its ops with WPSTAT_FTRACE_OPS_FLAGS.
 *
 * 5.11 and later: the callback gets struct ftrace_regs, whose argument
 * registers are valid without FTRACE_OPS_FL_SAVE_REGS
 * (DYNAMIC_FTRACE_WITH_ARGS), and protects itself from recursion with
 * ftrace_test_recursion_trylock(), which also disables preemption.
 *
 * 5.10: the callback gets a struct pt_regs, NULL unless the ops asks for
 * FTRACE_OPS_FL_SAVE_REGS (full registers, through ftrace_regs_caller:
 * DYNAMIC_FTRACE_WITH_REGS; the cost is measured by make bench).  An ops
 * without FTRACE_OPS_FL_RECURSION_SAFE is called through ftrace's assist
 * function, which does the recursion test and disables preemption: the
 * trylock below has nothing left to do, and a recursion is dropped there
 * without the callback seeing it (missed_* stays 0 for those points).
 */
#ifdef WPSTAT_HAVE_FTRACE_REGS
#define WPSTAT_FTRACE_CB_PROTO						\
	unsigned long ip, unsigned long parent_ip,			\
	struct ftrace_ops *op, struct ftrace_regs *fregs
#define WPSTAT_FTRACE_OPS_FLAGS	0
#else
#define WPSTAT_FTRACE_CB_PROTO						\
	unsigned long ip, unsigned long parent_ip,			\
	struct ftrace_ops *op, struct pt_regs *fregs
#define WPSTAT_FTRACE_OPS_FLAGS	FTRACE_OPS_FL_SAVE_REGS
#endif

#ifdef WPSTAT_HAVE_FTRACE_RECURSION_TRYLOCK
#define wpstat_ftrace_trylock(ip, parent_ip)	\
	ftrace_test_recursion_trylock(ip, parent_ip)
#define wpstat_ftrace_unlock(bit)	ftrace_test_recursion_unlock(bit)
#else
static __always_inline int wpstat_ftrace_trylock(unsigned long ip,
						 unsigned long parent_ip)
{
	return 0;
}

static __always_inline void wpstat_ftrace_unlock(int bit)
{
}
#endif

/*
 * Arguments at function entry.  An ftrace_ops callback registered without
 * FTRACE_OPS_FL_SAVE_REGS still gets the argument registers
 * (DYNAMIC_FTRACE_WITH_ARGS, 6.1 and later), in a pt_regs inside struct
 * ftrace_regs: 6.12 reaches it through arch_ftrace_regs(), 6.1 has it as
 * the only member.  Only the argument registers, ip and sp of that pt_regs
 * are valid: use it for the accessors below, nothing else.  5.10 hands the
 * callback its full pt_regs (SAVE_REGS, above).  x86-64 only, like the
 * module.
 */
#ifdef WPSTAT_HAVE_FTRACE_REGS
static __always_inline struct pt_regs *
wpstat_fregs_args(struct ftrace_regs *fregs)
{
#ifdef WPSTAT_HAVE_ARCH_FTRACE_REGS
	return &arch_ftrace_regs(fregs)->regs;
#else
	return &fregs->regs;
#endif
}
#else
static __always_inline struct pt_regs *wpstat_fregs_args(struct pt_regs *regs)
{
	return regs;
}
#endif

/*
 * ftrace_free_filter() is exported since 6.2 (and by Debian's 6.1).
 * Without it, the filter is emptied ip by ip (every attached point is
 * detached before the ops is freed): once empty, ftrace swaps the
 * allocated hash for its static EMPTY_HASH and frees it, so nothing is
 * left to free.
 */
#ifdef WPSTAT_HAVE_FTRACE_FREE_FILTER
#define wpstat_ftrace_free_filter(ops)	ftrace_free_filter(ops)
#else
static inline void wpstat_ftrace_free_filter(struct ftrace_ops *ops)
{
}
#endif

/*
 * make bench's wpmech.ko (kmod/bench) only: what wpstat itself does not
 * use, kept here so that the tree has one compat layer.  fprobe handlers
 * get struct ftrace_regs since 6.14, pt_regs before.  6.16's
 * DECLARE_TRACE(x) declares trace_x_tp(): WPSTAT_DECLARE_TRACE_TP(x)
 * declares trace_x_tp() on every kernel.
 */
#ifdef WPSTAT_HAVE_FPROBE_FTRACE_REGS
#define WPSTAT_FPROBE_REGS	ftrace_regs
#else
#define WPSTAT_FPROBE_REGS	pt_regs
#endif
#ifdef WPSTAT_HAVE_DECLARE_TRACE_TP
#define WPSTAT_DECLARE_TRACE_TP(name, proto, args)			\
	DECLARE_TRACE(name, PARAMS(proto), PARAMS(args))
#else
#define WPSTAT_DECLARE_TRACE_TP(name, proto, args)			\
	DECLARE_TRACE(name##_tp, PARAMS(proto), PARAMS(args))
#endif

/*
 * The probed functions and tracepoints, by kernel: wpstat_probes.def
 * names them through these, so debugfs wpstat/probes shows the real
 * target.  5.10 has the page-based functions; the folio conversions
 * (5.16-6.0) renamed them one by one, hence one Kbuild probe each.
 */
#ifdef WPSTAT_HAVE_FOLIO_MKCLEAN
#define WPSTAT_TARGET_MKCLEAN		folio_mkclean
#else
#define WPSTAT_TARGET_MKCLEAN		page_mkclean
#endif
#ifdef WPSTAT_HAVE_FOLIO_WAIT_STABLE
#define WPSTAT_TARGET_STABLE		folio_wait_stable
#else
#define WPSTAT_TARGET_STABLE		wait_for_stable_page
#endif
/*
 * From the folio conversion to 7.x, wait_for_stable_page() stays as a
 * wrapper that tail-calls folio_wait_stable() (mm/folio-compat.c), and
 * some callers still call it (6.1's block_page_mkwrite(), so ext4's
 * faults): a call to it is a stable-page call too.
 */
#if defined(WPSTAT_HAVE_FOLIO_WAIT_STABLE) && defined(WPSTAT_HAVE_WAIT_FOR_STABLE_PAGE)
#define WPSTAT_STABLE_WRAPPER_ADDR	((unsigned long)wait_for_stable_page)
#else
#define WPSTAT_STABLE_WRAPPER_ADDR	0UL
#endif
/*
 * Call depth tracking (6.2+, CONFIG_CALL_THUNKS) may point a direct call
 * at a thunk in the padding before the function (CONFIG_CALL_PADDING: its
 * __pfx_ symbol).  Without that padding the bytes before a function are
 * another's: 6.1 packs wait_on_page_writeback() right before
 * wait_for_stable_page().
 */
#ifdef CONFIG_CALL_PADDING
#define WPSTAT_CALL_PADDING		CONFIG_FUNCTION_PADDING_BYTES
#else
#define WPSTAT_CALL_PADDING		0
#endif
#ifdef WPSTAT_HAVE_FOLIO_WAIT_WRITEBACK
#define WPSTAT_FN_WAIT_WRITEBACK	folio_wait_writeback
#else
#define WPSTAT_FN_WAIT_WRITEBACK	wait_on_page_writeback
#endif
#ifdef WPSTAT_HAVE_FOLIO_WAIT_BIT
#define WPSTAT_TARGET_WAIT_BIT		folio_wait_bit
#else
#define WPSTAT_TARGET_WAIT_BIT		wait_on_page_bit
#endif
/*
 * Where every wait for a page bit sleeps, the page lock's included (its
 * slow paths, __folio_lock{,_killable}(), are inlined into filemap_fault()
 * on 6.12; this one is not): static in mm/filemap.c, folio_wait_bit_common()
 * from 5.16, wait_on_page_bit_common() before.
 */
#ifdef WPSTAT_HAVE_FOLIO_WAIT_BIT
#define WPSTAT_TARGET_BIT_WAIT		folio_wait_bit_common
#else
#define WPSTAT_TARGET_BIT_WAIT		wait_on_page_bit_common
#endif
#ifdef WPSTAT_HAVE_BDP_RATELIMITED_FLAGS
#define WPSTAT_TARGET_BDP_RL		balance_dirty_pages_ratelimited_flags
#else
#define WPSTAT_TARGET_BDP_RL		balance_dirty_pages_ratelimited
#endif
#ifdef WPSTAT_HAVE_TP_DIRTY_FOLIO
#define WPSTAT_TP_DIRTY			writeback_dirty_folio
#else
#define WPSTAT_TP_DIRTY			writeback_dirty_page
#endif
#ifdef WPSTAT_HAVE_TP_FOLIO_WAIT_WRITEBACK
#define WPSTAT_TP_WAIT			folio_wait_writeback
#else
#define WPSTAT_TP_WAIT			wait_on_page_writeback
#endif

/* check_trace_callback_type_<tracepoint>(), the name macro-expanded first. */
#define wpstat_check_tp_type(tp, fn)	__wpstat_check_tp_type(tp, fn)
#define __wpstat_check_tp_type(tp, fn)	check_trace_callback_type_##tp(fn)

#define wpstat_arg(regs, n)	regs_get_kernel_argument(regs, n)

/*
 * do_page_mkwrite() is static in mm/memory.c:
 *   5.10, 6.1: vm_fault_t do_page_mkwrite(struct vm_fault *vmf)
 *   6.5+:      vm_fault_t do_page_mkwrite(struct vm_fault *vmf, struct folio *folio)
 * wpstat only needs the first argument, which is the same in both.
 */
#define wpstat_mkwrite_vmf(p)	((struct vm_fault *)wpstat_arg(p, 0))

/*
 * Present-PTE test for the mkwrite kind.  5.10 to 7.2 leave vmf->pte NULL
 * on the do_shared_fault() path (handle_pte_fault() clears it when the PTE
 * is none) and non-NULL, already unmapped, on the wp_page_shared() path.
 * The pointer is only compared, never dereferenced.
 */
static inline bool wpstat_vmf_has_pte(const struct vm_fault *vmf)
{
	return READ_ONCE(vmf->pte) != NULL;
}

/*
 * The address_space of a page-cache folio, without a call: folio_mapping()
 * is exported, but every buffered write would pay for the call.  A folio
 * whose mapping carries flags (anonymous, KSM, movable) has no file and
 * yields NULL, as does one with no mapping; the folios of the points that
 * use this (folio_wait_stable, folio_mkclean) are page-cache folios,
 * where folio->mapping is the mapping itself (same on every kernel).
 */
#ifdef FOLIO_MAPPING_FLAGS		/* renamed in 6.17 */
#define WPSTAT_MAPPING_FLAGS	FOLIO_MAPPING_FLAGS
#else
#define WPSTAT_MAPPING_FLAGS	PAGE_MAPPING_FLAGS
#endif

static __always_inline struct address_space *
wpstat_mapping_of(const unsigned long m)
{
	return m & WPSTAT_MAPPING_FLAGS ? NULL : (struct address_space *)m;
}

#define wpstat_folio_file_mapping(folio)				\
	wpstat_mapping_of((unsigned long)READ_ONCE((folio)->mapping))

/*
 * The same for a struct page: the mapping is the head page's (5.10's
 * page_mapping() does the same; a tail's ->mapping is not one).
 */
#define wpstat_page_file_mapping(page)					\
	wpstat_mapping_of((unsigned long)READ_ONCE(compound_head(page)->mapping))

/*
 * The file of the page or folio that folio_mkclean() / page_mkclean() and
 * folio_wait_stable() / wait_for_stable_page() are called for (the first
 * argument of each).
 */
#ifdef WPSTAT_HAVE_FOLIO_MKCLEAN
#define wpstat_mkclean_mapping(p)					\
	wpstat_folio_file_mapping((struct folio *)wpstat_arg(p, 0))
#else
#define wpstat_mkclean_mapping(p)					\
	wpstat_page_file_mapping((struct page *)wpstat_arg(p, 0))
#endif

/*
 * The pages of that folio (mkclean_pages, dirtied_pages): a large folio
 * is cleaned and dirtied at once.  5.10 passes the head page of a
 * compound page, or a lone page.  And whether a process maps it: one
 * no process maps has no PTE to clean.
 */
#ifdef WPSTAT_HAVE_FOLIO_MKCLEAN
#define wpstat_mkclean_nr_pages(p)					\
	folio_nr_pages((struct folio *)wpstat_arg(p, 0))
#define wpstat_mkclean_mapped(p)					\
	folio_mapped((struct folio *)wpstat_arg(p, 0))
#else
#define wpstat_mkclean_nr_pages(p)					\
	thp_nr_pages((struct page *)wpstat_arg(p, 0))
#define wpstat_mkclean_mapped(p)					\
	page_mapped((struct page *)wpstat_arg(p, 0))
#endif
#ifdef WPSTAT_HAVE_FOLIO_WAIT_STABLE
#define wpstat_stable_mapping(p)					\
	wpstat_folio_file_mapping((struct folio *)wpstat_arg(p, 0))
#else
#define wpstat_stable_mapping(p)					\
	wpstat_page_file_mapping((struct page *)wpstat_arg(p, 0))
#endif

/*
 * Whether writes to @mapping wait for writeback to finish (stable pages).
 * Without mapping_stable_writes() (AS_STABLE_WRITES), the superblock says
 * so, as 5.10's wait_for_stable_page() reads it.
 */
#ifdef WPSTAT_HAVE_MAPPING_STABLE_WRITES
#define wpstat_mapping_stable_writes(mapping)	mapping_stable_writes(mapping)
#else
static inline bool
wpstat_mapping_stable_writes(const struct address_space *mapping)
{
	return mapping->host->i_sb->s_iflags & SB_I_STABLE_WRITES;
}
#endif

/*
 * vm_fault_t handle_mm_fault(struct vm_area_struct *vma,
 *			      unsigned long address, unsigned int flags,
 *			      struct pt_regs *regs), the same from 5.9 to 7.2.
 */
#define wpstat_fault_vma(p)	((struct vm_area_struct *)wpstat_arg(p, 0))
#define wpstat_fault_address(p)	((unsigned long)wpstat_arg(p, 1))
#define wpstat_fault_flags(p)	((unsigned int)wpstat_arg(p, 2))

/*
 * The dentry whose inode holds a stacked (overlayfs) file's pages: the
 * upper file once the write copied it up.  d_real() takes what to
 * resolve since 6.8 (D_REAL_METADATA: no lazy lookup of lower data,
 * which may sleep), the inode to match before (NULL: the upper if any).
 */
#ifdef WPSTAT_HAVE_D_REAL_TYPE
#define wpstat_d_real(dentry)	d_real(dentry, D_REAL_METADATA)
#else
#define wpstat_d_real(dentry)	d_real(dentry, NULL)
#endif

/*
 * The unbound system workqueue, for the tables' compaction: system_dfl_wq
 * where the kernel has the name (7.x warns on system_unbound_wq).
 */
#ifdef WPSTAT_HAVE_SYSTEM_DFL_WQ
#define wpstat_unbound_wq	system_dfl_wq
#else
#define wpstat_unbound_wq	system_unbound_wq
#endif

/*
 * folio_wait_bit_common(struct folio *folio, int bit_nr, ...), 5.10's
 * wait_on_page_bit_common(wait_queue_head_t *q, struct page *page,
 * int bit_nr, ...): the bit, and the page's mapping as an identity only
 * (a truncate may be taking the page out of it: never followed).
 */
#ifdef WPSTAT_HAVE_FOLIO_WAIT_BIT
#define wpstat_bit_wait_nr(p)		((int)wpstat_arg(p, 1))
#define wpstat_bit_wait_mapping(p)	\
	((const void *)READ_ONCE(((struct folio *)wpstat_arg(p, 0))->mapping))
#else
#define wpstat_bit_wait_nr(p)		((int)wpstat_arg(p, 2))
#define wpstat_bit_wait_mapping(p)	\
	((const void *)READ_ONCE(compound_head((struct page *)wpstat_arg(p, 1))->mapping))
#endif

/* __destroy_inode(struct inode *inode), 5.10 to 7.2 (fs/inode.c). */
#define wpstat_inode_arg(p)	((struct inode *)wpstat_arg(p, 0))

/*
 * folio_wait_bit(struct folio *folio, int bit_nr), 5.10's
 * wait_on_page_bit(struct page *page, int bit_nr): the folio or page only
 * as an identity, compared with the one the wait tracepoint passed.
 */
#define wpstat_wait_bit_folio(p)	((const void *)wpstat_arg(p, 0))
#define wpstat_wait_bit_nr(p)		((int)wpstat_arg(p, 1))

/*
 * balance_dirty_pages_ratelimited_flags(struct address_space *mapping,
 *					 unsigned int flags) since 6.0;
 * balance_dirty_pages_ratelimited(struct address_space *mapping) before.
 */
#define wpstat_bdp_rl_mapping(p) ((struct address_space *)wpstat_arg(p, 0))

/*
 * balance_dirty_pages_ratelimited_flags() grew BDP_ASYNC for io_uring in
 * 6.0; an async caller is told -EAGAIN instead of sleeping, so its traced
 * "pause" is not a sleep.  The same commit gave the static
 *   int balance_dirty_pages(struct bdi_writeback *wb,
 *			     unsigned long pages_dirtied, unsigned int flags)
 * its flags; before it (5.10) there are two arguments and no async caller.
 */
#ifdef BDP_ASYNC
#define WPSTAT_BDP_ASYNC	BDP_ASYNC
#define wpstat_bdp_flags(p)	((unsigned int)wpstat_arg(p, 2))
#else
#define WPSTAT_BDP_ASYNC	0
static __always_inline unsigned int wpstat_bdp_flags(struct pt_regs *regs)
{
	return 0;
}
#endif

/*
 * writeback:balance_dirty_pages (include/trace/events/writeback.h): 6.15
 * (and 6.14.y stable) replaced the five limits before dirty_ratelimit by
 * one struct dirty_throttle_control pointer.  A probe of the old shape
 * still registers there and reads pause from the wrong slot, so the
 * shape is taken from the headers (Kbuild) and checked against the
 * tracepoint's own declaration (wpstat_check_tp_types()).  Only pause is
 * read, by name.
 */
#ifdef WPSTAT_HAVE_TP_BDP_DTC
struct dirty_throttle_control;
#define WPSTAT_TP_BDP_PROTO						\
	void *data, struct bdi_writeback *wb,				\
	struct dirty_throttle_control *dtc,				\
	unsigned long dirty_ratelimit, unsigned long task_ratelimit,	\
	unsigned long dirtied, unsigned long period, long pause,	\
	unsigned long start_time
#else
#define WPSTAT_TP_BDP_PROTO						\
	void *data, struct bdi_writeback *wb, unsigned long thresh,	\
	unsigned long bg_thresh, unsigned long dirty,			\
	unsigned long bdi_thresh, unsigned long bdi_dirty,		\
	unsigned long dirty_ratelimit, unsigned long task_ratelimit,	\
	unsigned long dirtied, unsigned long period, long pause,	\
	unsigned long start_time
#endif

/*
 * writeback:writeback_dirty_folio and writeback:folio_wait_writeback; on
 * 5.10 writeback:writeback_dirty_page and writeback:wait_on_page_writeback,
 * whose first argument is the struct page (named folio here all the same:
 * the handlers use it only as an identity).  Both events are of one class,
 * converted to folios at once.
 */
#ifdef WPSTAT_HAVE_TP_DIRTY_FOLIO
#define WPSTAT_TP_FOLIO_PROTO						\
	void *data, struct folio *folio, struct address_space *mapping
#define wpstat_tp_folio_nr_pages(folio)	folio_nr_pages(folio)
#else
#define WPSTAT_TP_FOLIO_PROTO						\
	void *data, struct page *folio, struct address_space *mapping
#define wpstat_tp_folio_nr_pages(page)	thp_nr_pages(page)
#endif

/*
 * writeback:writeback_start and writeback:writeback_written, traced by a
 * flusher in wb_writeback() around each pass that writes pages.  struct
 * wb_writeback_work is private to fs/fs-writeback.c, so no header can
 * be probed for it: its head up to reason is the same from 5.10 to 7.2
 * (nr_pages, sb, sync_mode, six one-bit fields, reason), and only reason
 * is read, after wpstat_wb_work_plausible() has checked that the head
 * holds what the kernel puts there.
 */
struct wb_writeback_work;
#define WPSTAT_TP_WB_WORK_PROTO						\
	void *data, struct bdi_writeback *wb, struct wb_writeback_work *work

struct wpstat_wb_work_head {
	long nr_pages;
	struct super_block *sb;
	enum writeback_sync_modes sync_mode;
	unsigned int bits;
	enum wb_reason reason;
};

#define WPSTAT_WB_FOR_KUPDATE	BIT(1)
#define WPSTAT_WB_FOR_BACKGROUND	BIT(3)
#define WPSTAT_WB_FOR_SYNC	BIT(4)
#define WPSTAT_WB_BITS		(BIT(6) - 1)

/*
 * Whether @work's head reads as the kernel fills it: a sync mode, no bit
 * past the six flags, a reason in range, the flags that only one reason
 * or mode sets (for_kupdate: the periodic pass; for_background: the
 * background pass; for_sync: sync(2), WB_SYNC_ALL), and a superblock, if
 * any, of @wb's device (read without faulting).  A layout change moves
 * these fields, and one pass that fails turns the reason off for good.
 */
static inline bool wpstat_wb_work_plausible(const struct bdi_writeback *wb,
					    const struct wb_writeback_work *work)
{
	const struct wpstat_wb_work_head *h = (const void *)work;
	unsigned int mode = READ_ONCE(h->sync_mode);
	unsigned int reason = READ_ONCE(h->reason);
	unsigned int bits = READ_ONCE(h->bits);
	struct super_block *sb = READ_ONCE(h->sb);
	struct backing_dev_info *bdi;

	if (mode > WB_SYNC_ALL || bits & ~WPSTAT_WB_BITS ||
	    reason >= WB_REASON_MAX)
		return false;
	if ((bits & WPSTAT_WB_FOR_KUPDATE && reason != WB_REASON_PERIODIC) ||
	    (bits & WPSTAT_WB_FOR_BACKGROUND && reason != WB_REASON_BACKGROUND) ||
	    (bits & WPSTAT_WB_FOR_SYNC && mode != WB_SYNC_ALL))
		return false;
	if (!sb)
		return true;
	return !copy_from_kernel_nofault(&bdi, &sb->s_bdi, sizeof(bdi)) &&
	       bdi == wb->bdi;
}

static inline int wpstat_wb_work_reason(const struct wb_writeback_work *work)
{
	return READ_ONCE(((const struct wpstat_wb_work_head *)work)->reason);
}

/*
 * The system call the current task is in, or -1: a kernel thread, a
 * 32-bit call (other numbers) or no call (a fault).  x86-64 numbers.
 */
static __always_inline long wpstat_syscall_nr(void)
{
	if (current->flags & PF_KTHREAD || in_ia32_syscall())
		return -1;
	return syscall_get_nr(current, task_pt_regs(current));
}

/*
 * The current task's time on a CPU, and its time runnable but not
 * running (sched_info.run_delay, added when it is switched in: exact
 * while it runs; CONFIG_SCHED_INFO, which every Debian kernel has).  The
 * same fields from 5.10 to 7.2.
 *
 * The CPU time is what task_sched_runtime() (not exported) computes:
 * se.sum_exec_runtime, brought up to date at every switch and tick, plus
 * the time since (exec_start, in the rq's task clock).  Without IRQ or
 * paravirt steal time accounting (Debian's kernels have neither) that
 * clock is the CPU's sched_clock, which local_clock() reads; with them
 * it falls behind it, and the sum alone is used: up to a tick behind.
 */
static __always_inline u64 wpstat_task_cpu_ns(void)
{
	u64 sum = READ_ONCE(current->se.sum_exec_runtime);
#if !defined(CONFIG_IRQ_TIME_ACCOUNTING) && !defined(CONFIG_PARAVIRT_TIME_ACCOUNTING)
	u64 start = READ_ONCE(current->se.exec_start), now = local_clock();

	if (now > start)
		sum += now - start;
#endif
	return sum;
}

#ifdef CONFIG_SCHED_INFO
static __always_inline u64 wpstat_task_runq_ns(void)
{
	return READ_ONCE(current->sched_info.run_delay);
}
#else
static __always_inline u64 wpstat_task_runq_ns(void)
{
	return 0;
}
#endif

/* sched:sched_process_exit: 6.16 added group_dead. */
#ifdef WPSTAT_HAVE_TP_EXIT_GROUP_DEAD
#define WPSTAT_TP_EXIT_PROTO	void *data, struct task_struct *p, bool group_dead
#else
#define WPSTAT_TP_EXIT_PROTO	void *data, struct task_struct *p
#endif

/*
 * jbd2:jbd2_handle_start: one prototype from 5.10 to 7.2 (tid_t since
 * 5.10's own headers), kept here with the others that could change.
 */
#define WPSTAT_TP_JBD2_START_PROTO					\
	void *data, dev_t dev, tid_t tid, unsigned int type,		\
	unsigned int line_no, int requested_blocks

/*
 * Context switches of @t, voluntary or not: a value that changes whenever
 * the task leaves its CPU, so a per-CPU record made by the task is known
 * to be its own latest if the count still matches.  The same fields from
 * 5.10 to 7.2.
 */
static inline unsigned long wpstat_task_switches(const struct task_struct *t)
{
	return READ_ONCE(t->nvcsw) + READ_ONCE(t->nivcsw);
}

/*
 * The page faults the current task has completed: mm_account_fault(), at
 * the end of handle_mm_fault(), adds one to min_flt or maj_flt for every
 * fault that neither failed (VM_FAULT_ERROR) nor asked for a retry
 * (VM_FAULT_RETRY), GUP's included, after the fault's dirty balancing
 * (fault_dirty_shared_page()); the task's own count, written by the task
 * only.  The same fields and rule from 5.10 (mm/memory.c, since 5.9) to
 * 7.2; 6.4 only moved the PGFAULT event before the error test.
 */
static __always_inline unsigned long wpstat_task_faults(void)
{
	return READ_ONCE(current->min_flt) + READ_ONCE(current->maj_flt);
}

/*
 * The entry-only callbacks read arguments from ftrace_regs without
 * SAVE_REGS, or (5.10) from the saved pt_regs; stable-page waits are
 * recognised from a stack trace.
 */
#ifdef WPSTAT_HAVE_FTRACE_REGS
#if !defined(CONFIG_DYNAMIC_FTRACE_WITH_ARGS)
#error "wpstat needs DYNAMIC_FTRACE_WITH_ARGS"
#endif
#elif !defined(CONFIG_DYNAMIC_FTRACE_WITH_REGS)
#error "wpstat needs DYNAMIC_FTRACE_WITH_REGS"
#endif
#ifndef CONFIG_STACKTRACE
#error "wpstat needs STACKTRACE"
#endif

/*
 * The memory of a kretprobe of @n instances of @data_size bytes of data:
 * bytes in all, and in *@cpu what one more possible CPU adds.  Since 6.7
 * (lib/objpool.c: rethook_alloc() -> objpool_init()) each possible CPU
 * gets one allocation, vmalloc'd (whole pages), of a ring of
 * roundup_pow_of_two(@n) pointers and its share of the instances: each
 * CPU adds a ring, CPUs x @n pointers in all.  Before, one list of @n
 * instances, whatever the CPUs.
 */
#ifdef WPSTAT_HAVE_OBJPOOL
#include <linux/objpool.h>
static inline size_t wpstat_krp_pool_bytes(u32 n, size_t data_size,
					   size_t *cpu)
{
	size_t obj = ALIGN(sizeof(struct kretprobe_instance) + data_size,
			   sizeof(long));
	u32 cpus = num_possible_cpus();
	size_t ring = sizeof(struct objpool_slot) +
		      sizeof(void *) * roundup_pow_of_two(n);

	*cpu += PAGE_ALIGN(ring);
	return PAGE_ALIGN(ring + obj * DIV_ROUND_UP(n, cpus)) * cpus;
}
#else
static inline size_t wpstat_krp_pool_bytes(u32 n, size_t data_size,
					   size_t *cpu)
{
	return (size_t)n * (sizeof(struct kretprobe_instance) + data_size);
}
#endif

#endif /* _WPSTAT_COMPAT_H */
