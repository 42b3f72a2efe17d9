/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wpstat_probe.h - what the probe handlers share (wpstat_handlers.c,
 * wpstat_tracepoints.c, wpstat_kretprobes.c, wpstat_floor.c,
 * wpstat_probe_core.c): the filters and the key of a file, inlined into
 * every handler (a call per event is what the cost work removed), the
 * kretprobes' instance data (the floor's handlers use the same sizes),
 * and the few calls from one handler file into another.
 *
 * Every handler runs with preemption disabled (ftrace, kprobe or
 * tracepoint context): no sleeping, no allocation, and one lock only, a
 * raw spinlock to insert a new file's row (wpstat_table.c).  Inodes are
 * turned into a (dev, ino, generation, mount) key at once and never
 * remembered by pointer.
 */
#ifndef _WPSTAT_PROBE_H
#define _WPSTAT_PROBE_H

#include <linux/fs.h>
#include <linux/hash.h>
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

#include "wpstat.h"
#include "wpstat_compat.h"

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
 * Which mount a superblock is, for the key: its backing_dev_info's id,
 * unique for the system's life.  btrfs, FUSE and NFS set up a bdi per
 * mount; a block device's filesystems share the disk's, and tmpfs the
 * no-op one (tmpfs generations are random).
 */
static __always_inline u32 wpstat_sb_id(const struct super_block *sb)
{
	return READ_ONCE(sb->s_bdi)->id;
}

u64 wpstat_btrfs_subvol(const struct inode *inode);	/* wpstat_probe_core.c */

/*
 * @inode's key, whoever's it is.  Only btrfs has subvolumes sharing a
 * superblock; elsewhere the test costs a load and a compare.
 */
static __always_inline void wpstat_key_fill(const struct inode *inode,
					    struct wpstat_key *key)
{
	const struct super_block *sb = inode->i_sb;

	key->dev = sb->s_dev;
	key->ino = inode->i_ino;
	key->gen = inode->i_generation;
	key->sb = wpstat_sb_id(sb);
	if (unlikely(sb->s_magic == BTRFS_SUPER_MAGIC))
		key->sb |= wpstat_btrfs_subvol(inode) << 32;
}

/* Fill @key for @inode; false if the device filter excludes it. */
static __always_inline bool wpstat_key_of(const struct inode *inode,
					  struct wpstat_key *key)
{
	u32 want;

	if (!inode)
		return false;
	want = READ_ONCE(wpstat_filter_dev);
	if (want && inode->i_sb->s_dev != want)
		return false;
	wpstat_key_fill(inode, key);
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

/* ---- wpstat_probe_core.c ------------------------------------------------ */

enum wpstat_wait_kind {
	WPW_OTHER,		/* fsync, truncate, ...: not a write's stall */
	WPW_STABLE,		/* folio_wait_stable(), on a stable mapping */
	WPW_WRITE,		/* other writeback wait in a write fault or write(2) */
	WPW_SYNC,		/* in a timed ZFS fsync, for the synced file */
};

enum wpstat_wait_kind wpstat_wait_classify(struct address_space *mapping);
bool wpstat_write_fd_key(struct wpstat_key *key, bool *counted, bool copies);
bool wpstat_write_syscall(void);
int wpstat_probe_core_init(void);

/* ---- wpstat_kretprobes.c ------------------------------------------------ */

bool wpstat_in_scope(struct wpstat_tctx *c, unsigned int scope);
bool wpstat_sync_in_scope(struct wpstat_tctx *c);
void wpstat_fault_wait_done(struct wpstat_tctx *c, u64 ns, u64 cpu0, u64 runq0);
void wpstat_fault_locks_decide(struct wpstat_tctx *c, bool readin);
void wpstat_bdp_close_pause(struct wpstat_tctx *c, u64 now);
enum wpstat_counter wpstat_mkclean_trigger(void);

/*
 * What the last balance_dirty_pages_ratelimited_flags() call on this CPU
 * was for: level timing's entry callback on it writes it.
 * balance_dirty_pages() is called only from there, so if the record is the
 * current task's and the task has not left the CPU since (its
 * context-switch count is unchanged), the record is of the call that is
 * throttling it.
 */
struct wpstat_bdp_record {
	unsigned long task;		/* identity, never dereferenced */
	unsigned long switches;
	struct wpstat_key key;
	bool counted;			/* the filters let the call count */
};
extern struct wpstat_bdp_record __percpu *wpstat_bdp_record;

/*
 * The row do_page_mkwrite()'s callback counted the current write fault
 * in, for the points the fault reaches after it: the dirty tracepoint
 * (->page_mkwrite() or the fault's finish marks the folio dirty a few
 * calls later) and, at level timing, folio_wait_stable() and the
 * ratelimited call.  They count in that row without building the key and
 * looking it up again: one lookup per fault instead of two (four at
 * timing).  Per CPU, written only there (task context, preemption
 * disabled), task last: a handler nested on the CPU sees the old record
 * or the new one whole.  Trusted for the same task and mapping while the
 * task has completed no fault since (wpstat_task_faults()), the table is
 * the same and the row's state unchanged: its inode is then not
 * destroyed, so the mapping's address is still that inode's.  task and
 * mapping are identities, never dereferenced.  A point reached on
 * another CPU (->page_mkwrite() slept and the task moved) looks up.
 */
struct wpstat_fault_hint {
	unsigned long task;
	unsigned long mapping;
	unsigned long faults;		/* wpstat_task_faults() at the fault */
	u64 table;			/* its serial: an address can be reused */
	struct wpstat_entry *e;
	u32 state;			/* e->state, live, at the fault */
};
DECLARE_PER_CPU(struct wpstat_fault_hint, wpstat_fault_hint);

/* The fault counted in @r is for @mapping's inode. */
static __always_inline void wpstat_fault_hint_set(const struct address_space *mapping,
						  struct wpstat_ref r)
{
	struct wpstat_fault_hint *h = this_cpu_ptr(&wpstat_fault_hint);
	u32 state;

	WRITE_ONCE(h->task, 0);
	if (unlikely(!r.e))
		return;
	state = READ_ONCE(r.e->state);
	if (unlikely(wpstat_row_kind(state) != WPSTAT_ROW_LIVE))
		return;
	barrier();
	h->mapping = (unsigned long)mapping;
	h->faults = wpstat_task_faults();
	h->table = r.t->serial;
	h->e = r.e;
	h->state = state;
	barrier();
	WRITE_ONCE(h->task, (unsigned long)current);
}

/*
 * The row of the current task's write fault if it is on @mapping's file,
 * from the hint (see above), in table *@t; NULL: look it up.
 */
static __always_inline struct wpstat_entry *
wpstat_fault_hint_row(const struct address_space *mapping,
		      struct wpstat_table **t)
{
	struct wpstat_fault_hint *h = this_cpu_ptr(&wpstat_fault_hint);

	if (READ_ONCE(h->task) != (unsigned long)current ||
	    h->mapping != (unsigned long)mapping)
		return NULL;
	*t = rcu_dereference_sched(wpstat_table);
	if (unlikely(!*t) || h->table != (*t)->serial ||
	    h->faults != wpstat_task_faults() ||
	    READ_ONCE(h->e->state) != h->state)
		return NULL;
	return h->e;
}

/*
 * Each task's latest write fault that reached do_page_mkwrite(), in a
 * slot of a table indexed by a hash of the task: do_page_mkwrite()'s
 * entry callback fills it at both levels, for a balance_dirty_pages()
 * entry inside the same fault (bdp_writer()).  Not per CPU: ->page_mkwrite
 * often sleeps (a stable page, the journal, the page lock) and the task
 * may come back on another CPU, or after another task faulted on this
 * one.  The fault is still the one throttling if the slot is the task's
 * and the task has completed no fault since (wpstat_task_faults():
 * mm_account_fault() counts a fault after its dirty balancing).  Tasks
 * whose hashes collide take the slot from each other: the loser's throttle
 * is unattributed, never given another task's file.  seq is odd while a
 * writer fills the slot; a second writer that finds it so leaves it.
 */
struct wpstat_fault_rec {
	unsigned long seq;
	unsigned long task;		/* identity, never dereferenced */
	unsigned long faults;		/* wpstat_task_faults() at the fault */
	struct wpstat_key key;
	bool counted;			/* the filters let the fault count */
} ____cacheline_aligned;

#define WPSTAT_FAULT_REC_BITS	10
extern struct wpstat_fault_rec *wpstat_fault_recs;

static __always_inline struct wpstat_fault_rec *wpstat_fault_rec_mine(void)
{
	return &wpstat_fault_recs[hash_ptr(current, WPSTAT_FAULT_REC_BITS)];
}

/*
 * Start filling slot @r (*@seq: its sequence before): false if another
 * task is filling it; wpstat_fault_rec_end() ends it.
 */
static __always_inline bool wpstat_fault_rec_begin(struct wpstat_fault_rec *r,
						   unsigned long *seq)
{
	*seq = READ_ONCE(r->seq);
	return !(*seq & 1) && cmpxchg(&r->seq, *seq, *seq + 1) == *seq;
}

static __always_inline void wpstat_fault_rec_end(struct wpstat_fault_rec *r,
						 unsigned long seq)
{
	/* The fields before the even sequence (fault_writer() reads them). */
	smp_store_release(&r->seq, seq + 2);
}

/*
 * The current task is exiting: its slot stops naming it, so that a task
 * given the same task_struct later never takes it for its own.
 */
static __always_inline void wpstat_fault_rec_exit_task(void)
{
	struct wpstat_fault_rec *r = wpstat_fault_rec_mine();
	unsigned long seq;

	if (READ_ONCE(r->task) != (unsigned long)current ||
	    !wpstat_fault_rec_begin(r, &seq))
		return;
	if (r->task == (unsigned long)current)
		r->task = 0;
	wpstat_fault_rec_end(r, seq);
}

/* Writeback runs in kworkers: the task filter does not apply to mkclean. */
static __always_inline bool wpstat_mkclean_key(struct pt_regs *args,
					struct wpstat_key *key)
{
	return READ_ONCE(wpstat_enabled) &&
	       wpstat_key_of_mapping(wpstat_mkclean_mapping(args), key);
}

/* A clean, counted in @r. */
static __always_inline void wpstat_mkclean_add(struct wpstat_ref r,
					       struct pt_regs *args)
{
	wpstat_add(r, WPC_MKCLEAN_CALLS, 1);
	wpstat_add(r, WPC_MKCLEAN_PAGES, wpstat_mkclean_nr_pages(args));
	wpstat_add(r, wpstat_mkclean_trigger(), 1);
}

/* A clean: the inode's counts; returns the generation they went to. */
static __always_inline u32 wpstat_mkclean_count(const struct wpstat_key *key,
					 struct pt_regs *args)
{
	struct wpstat_ref r = wpstat_lookup(key);

	wpstat_mkclean_add(r, args);
	return wpstat_ref_gen(r);
}

struct mkclean_data {
	struct wpstat_key key;
	u32 gen;		/* where its count went */
};

static __always_inline void wait_start_now(struct wait_start *w)
{
	w->cpu0 = wpstat_task_cpu_ns();
	w->runq0 = wpstat_task_runq_ns();
	w->start = ktime_get_ns();
}

/*
 * A wait of a stall cause that ended, for wpstat_cause_wait(): @n waits
 * counted now, @ns long in all, the longest @max (0: @ns, one wait), or
 * with @n 0 one wait counted where it began, in the tables of @gen; and
 * its @start, for the task's CPU and runqueue time in it.
 */
struct wpstat_wait {
	u64 n;
	u64 ns;
	u64 max;
	struct wpstat_gen gen;
	struct wait_start start;
};

/*
 * A wait of @cause ended (wpstat_stalls.def's WPSTAT_STALL_CAUSE, IN or
 * OUT): the one call of its handler, which writes both tables, the
 * inode row of @key's file (its events, time and max counters: the
 * cause's time and its stall fields' like counters) and
 * the current process's row for it (the cause's columns), in one row of
 * each so that no reset splits a count from its time; with @n 0 only the
 * time, to the rows the count made as the wait began
 * (wpstat_cause_begin()).  A wait made inside a write fault (IN), with
 * @c, the task's context, given: first taken out of the fault's unnamed
 * time if the task is in a timed fault (wpstat_fault_wait_done()).  @c
 * NULL: the caller knows the wait is in no fault, or has done that part.
 */
static inline void wpstat_cause_wait(struct wpstat_tctx *c,
				     const struct wpstat_key *key,
				     enum wpstat_cause cause,
				     struct wpstat_wait w)
{
	const struct wpstat_cause_info *ci = &wpstat_causes[cause];
	enum wpstat_counter events = wpstat_stall_fields[ci->stall_events].like;
	enum wpstat_counter max_c = wpstat_stall_fields[ci->stall_ns + 1].like;
	u64 max = w.max ? w.max : w.ns;
	struct wpstat_ref r;

	if (ci->in_fault && c)
		wpstat_fault_wait_done(c, w.ns, w.start.cpu0, w.start.runq0);
	if (!w.n) {
		wpstat_count_time(key, ci->time, max_c, w.ns, w.gen.inodes);
		wpstat_stall_time(key, ci->stall_ns, w.ns, w.gen.stalls);
		return;
	}
	r = wpstat_lookup(key);
	wpstat_add(r, events, w.n);
	wpstat_add_times(r, ci->time, max_c, w.ns, max);
	wpstat_stall_events(key, ci->stall_events, ci->stall_ns, w.n, w.ns, max);
}

/*
 * A wait of @cause begins, timed where it ends (wpstat_cause_wait() with
 * n 0): its count in @r, @key's inode row, and in the process's row.
 * Returns the tables they went to, for its time.
 */
static __always_inline struct wpstat_gen
wpstat_cause_begin(struct wpstat_ref r, const struct wpstat_key *key,
		   enum wpstat_cause cause)
{
	enum wpstat_stall_field f = wpstat_causes[cause].stall_events;
	struct wpstat_gen gen;

	wpstat_add(r, wpstat_stall_fields[f].like, 1);
	gen.inodes = wpstat_ref_gen(r);
	gen.stalls = wpstat_stall_add(key, f, 1);
	return gen;
}

/* The cause of a writeback wait, by its kind (never OTHER). */
static const enum wpstat_cause wpstat_wait_causes[] __maybe_unused = {
	[WPW_STABLE] = WPCA_STABLE,
	[WPW_WRITE] = WPCA_WB,
	[WPW_SYNC] = WPCA_SYNC_WB,
};

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
	bool fault;		/* inside the task's timed write fault */
};

/*
 * Whether a journal call beginning now is one to time, at level timing
 * (its points are attached before the level flips and detached after:
 * wpstat_set_level()): inside the task's write fault (*@fault), or inside
 * a write system call of a task the filter wants.  Reclaim in the call
 * (an inode evicted: ext4_evict_inode) is not the write's, and a fault
 * waiting for its retry is over once the task goes on.
 */
static __always_inline bool journal_timed(struct wpstat_tctx *c, bool *fault)
{
	*fault = wpstat_in_scope(c, WPT_FAULT) && !c->fault_retry;
	return *fault || (wpstat_write_syscall() && wpstat_want_task());
}

static __always_inline bool journal_level_off(void)
{
	return READ_ONCE(wpstat_counting_level) != WPL_TIMING ||
	       (current->flags & PF_MEMALLOC);
}

/*
 * A timed journal call that began at @w, with the task's voluntary
 * switches at @nvcsw, is over: a wait if the task slept in it, for the
 * fault's file (@fault: the task's context @c, found here if NULL) or
 * the write's descriptor's.
 */
static __always_inline void journal_end(struct wpstat_tctx *c, bool fault,
					const struct wait_start *w,
					unsigned long nvcsw)
{
	u64 ns = ktime_get_ns() - w->start;
	struct wpstat_key key;
	bool counted;

	if (READ_ONCE(current->nvcsw) == nvcsw)
		return;
	if (fault) {
		if (!c)
			c = wpstat_tctx_find();
		if (!wpstat_in_scope(c, WPT_FAULT))
			return;
		key = c->fault_key;
	} else {
		if (!wpstat_write_fd_key(&key, &counted, false) || !counted)
			return;
		c = NULL;	/* in write(2), in no fault */
	}
	wpstat_cause_wait(c, &key, WPCA_JOURNAL,
			  (struct wpstat_wait){ .n = 1, .ns = ns, .start = *w });
}

/*
 * A call that is a wait if the task slept in it (its voluntary context
 * switches moved): the page lock's slow path inside a timed write fault,
 * a ZIL commit inside a timed ZFS fsync.
 */
struct sleep_data {
	struct wait_start w;
	unsigned long nvcsw;
};

/*
 * Each kretprobe point's instance data, for its real handlers and the
 * floor's (the same pools): krp_size_<id>, one per probe the .def gives
 * a kretprobe at some level (WPSTAT_HANDLERS_OF, wpstat.h).
 */
#define krp_size_FAULT		0
#define krp_size_MKCLEAN	sizeof(struct mkclean_data)
#define krp_size_BDP		0
#define krp_size_WAIT_BIT	sizeof(struct wait_start)
#define krp_size_JBD2_ACCESS	sizeof(struct journal_data)
#define krp_size_XFS_TIME	sizeof(struct journal_data)
#define krp_size_ZFS_TX		sizeof(struct journal_data)
#define krp_size_LOCK		sizeof(struct sleep_data)
#define krp_size_ZFS_FSYNC	0
#define krp_size_ZIL_COMMIT	sizeof(struct sleep_data)

#endif /* _WPSTAT_PROBE_H */
