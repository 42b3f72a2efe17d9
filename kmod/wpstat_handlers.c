// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_handlers.c - the entry-only callbacks (one ftrace_ops, whose
 * callback dispatches on the address), and the set-up of the handler
 * files: this one, wpstat_tracepoints.c, wpstat_kretprobes.c,
 * wpstat_floor.c and wpstat_probe_core.c, which share wpstat_probe.h
 * (the filters and keys, inlined into each handler).
 *
 * What runs once per store fault or folio clean pays for an entry-only
 * callback and a table update, nothing more; what runs once per buffered
 * write(2) at level counts is one tracepoint:
 *
 *   do_page_mkwrite        first vs write-protect from vmf->pte at entry;
 *                          a first write retried (FAULT_FLAG_TRIED) had to
 *                          have its page read in; the task's slot says for
 *                          which inode, should balance_dirty_pages() follow
 *   folio_mkclean          a call (its PTE count needs the return: timing)
 *   writeback_dirty_folio  tracepoint
 *
 * Level timing adds the per-call denominators, one callback per write:
 *
 *   folio_wait_stable      a call
 *   balance_dirty_pages_ratelimited_flags
 *                          a call; from a fault if its caller (parent_ip) is
 *                          fault_dirty_shared_page(); a per-CPU record of
 *                          its mapping, for balance_dirty_pages()
 *
 * What runs only when a task is about to sleep may pay more:
 *
 *   balance_dirty_pages    kretprobe: the throttle, for the inode of the
 *                          ratelimited call's record (timing), of a write
 *                          system call's descriptor, or of the task's write
 *                          fault (bdp_writer()); pauses timed from the
 *                          balance_dirty_pages tracepoint to the next one or
 *                          the return
 *   folio_wait_writeback   tracepoint: a writeback wait; a stable-page wait
 *                          if the stack shows it was tail-called from a
 *                          folio_wait_stable() call site
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

#include "wpstat_probe.h"

#include <linux/slab.h>

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
 * A write fault on @mapping's file: the inode's count and the process's
 * row; a read-in is counted in both too, with its time if @readin_ns (one
 * row each).  The row is left in the fault hint.  Returns where the
 * fault's count went.
 */
static __always_inline struct wpstat_gen
mkwrite_count(const struct address_space *mapping, const struct wpstat_key *key,
	      bool first, bool readin, u64 readin_ns)
{
	struct wpstat_ref r = wpstat_lookup(key);
	struct wpstat_gen gen;

	wpstat_fault_hint_set(mapping, r);
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
 * Level timing: a fault whose handle_mm_fault() opened the task's scope
 * (fault_entry()) is counted with it, and its read-in timed: the time
 * from the fault's start to here, when it had to read its page.
 */
static noinline void mkwrite_timed(const struct address_space *mapping,
				   const struct wpstat_key *key, bool first,
				   bool readin)
{
	struct wpstat_tctx *c = wpstat_tctx_find();
	u64 readin_ns = 0;

	if (!wpstat_in_scope(c, WPT_FAULT) || c->fault_mkwrite ||
	    !wpstat_key_equal(&c->fault_key, key)) {
		mkwrite_count(mapping, key, first, readin, 0);
		return;
	}
	/*
	 * The read-in is the one IN cause not counted by wpstat_cause_wait():
	 * it is counted with the fault's own event, in one row of each table
	 * (mkwrite_count(), the level counts fault path's too), so only its
	 * fault part is done here.
	 */
	if (readin) {
		/* Never 0: 0 says "not timed" to mkwrite_count(). */
		readin_ns = max_t(u64, ktime_get_ns() - c->fault_start, 1);
		wpstat_fault_wait_done(c, readin_ns, c->fault_cpu0, c->fault_runq0);
	}
	c->fault_gen = mkwrite_count(mapping, key, first, readin, readin_ns);
	wpstat_fault_locks_decide(c, readin);
	c->fault_mkwrite = true;
}

/*
 * The task's write fault is for @key (@counted: the filters let it count),
 * should it enter balance_dirty_pages() (wpstat_fault_rec).  A slot
 * another task is filling is left to it.
 */
static __always_inline void fault_note(const struct wpstat_key *key,
				       bool counted)
{
	struct wpstat_fault_rec *r = wpstat_fault_rec_mine();
	unsigned long seq;

	if (!wpstat_fault_rec_begin(r, &seq))
		return;
	r->task = (unsigned long)current;
	r->faults = wpstat_task_faults();
	r->counted = counted;
	if (counted)
		r->key = *key;
	wpstat_fault_rec_end(r, seq);
}

static __always_inline void mkwrite_enter(struct pt_regs *args)
{
	struct vm_fault *vmf = wpstat_mkwrite_vmf(args);
	struct wpstat_key key;
	bool first, readin, counted;

	wpstat_hit(WPP_MKWRITE);
	counted = mkwrite_key(vmf, &key, &first, &readin);
	fault_note(&key, counted);
	if (!counted)
		return;
	if (READ_ONCE(wpstat_counting_level) == WPL_TIMING)
		mkwrite_timed(vmf->vma->vm_file->f_mapping, &key, first, readin);
	else
		mkwrite_count(vmf->vma->vm_file->f_mapping, &key, first,
			      readin, 0);
}



/*
 * The row of the last file whose folio was cleaned on this CPU, by its
 * mapping: writeback cleans a file's folios in a run, and the next clean
 * of the same mapping counts in that row without building the key and
 * looking it up again.  Written and read only here, at level counts, in
 * task context (folio_mkclean() takes a sleeping lock), preemption
 * disabled: no handler nested on the CPU writes it.  Trusted while the
 * table is the same, the row's state unchanged and the device filter
 * too: the row's inode is then not destroyed (__destroy_inode() marks its
 * row gone), so the mapping's address is still that inode's; mapping is
 * an identity, never dereferenced.  Should the evict callback ever be
 * refused by the recursion guard, a row could outlive its inode unmarked:
 * the hint is then never trusted again (mapping_hints_off).
 */
struct mkclean_hint {
	unsigned long mapping;
	u64 table;			/* its serial: an address can be reused */
	struct wpstat_entry *e;
	u32 state;
	u32 filter_dev;
};
static DEFINE_PER_CPU(struct mkclean_hint, mkclean_hint);
static bool mapping_hints_off;

/* A clean of @mapping's folio: its row, or no table (filtered). */
static noinline struct wpstat_ref mkclean_lookup(const struct address_space *mapping)
{
	struct mkclean_hint *h = this_cpu_ptr(&mkclean_hint);
	struct wpstat_key key;
	struct wpstat_ref r;
	u32 state;

	h->mapping = 0;
	if (!wpstat_key_of_mapping(mapping, &key))
		return (struct wpstat_ref){ NULL, NULL };
	r = wpstat_lookup(&key);
	if (likely(r.e)) {
		state = READ_ONCE(r.e->state);
		if (wpstat_row_kind(state) == WPSTAT_ROW_LIVE) {
			h->table = r.t->serial;
			h->e = r.e;
			h->state = state;
			h->filter_dev = READ_ONCE(wpstat_filter_dev);
			h->mapping = (unsigned long)mapping;
		}
	}
	return r;
}

static __always_inline void mkclean_enter(struct pt_regs *args)
{
	struct mkclean_hint *h = this_cpu_ptr(&mkclean_hint);
	struct address_space *mapping;
	struct wpstat_ref r;

	wpstat_hit(WPP_MKCLEAN);
	/* Writeback runs in kworkers: the task filter does not apply. */
	if (READ_ONCE(wpstat_counting_level) != WPL_COUNTS ||
	    !READ_ONCE(wpstat_enabled))
		return;
	mapping = wpstat_mkclean_mapping(args);
	r.t = rcu_dereference_sched(wpstat_table);
	/*
	 * The table first, by its serial: h->e is read only if it is the
	 * current one's (a freed table's address may be the current one's).
	 * The generation too: FS_IOC_SETVERSION changes it in place.
	 */
	if (mapping && h->mapping == (unsigned long)mapping && r.t &&
	    h->table == r.t->serial && READ_ONCE(h->e->state) == h->state &&
	    h->e->key.gen == mapping->host->i_generation &&
	    h->filter_dev == READ_ONCE(wpstat_filter_dev) &&
	    !READ_ONCE(mapping_hints_off)) {
		r.e = h->e;
	} else {
		r = mkclean_lookup(mapping);
		if (!r.t)
			return;
	}
	wpstat_mkclean_add(r, args);
}

static __always_inline void stable_enter(struct pt_regs *args)
{
	struct address_space *mapping = wpstat_stable_mapping(args);
	struct wpstat_key key;
	struct wpstat_ref r;

	wpstat_hit(WPP_STABLE);
	/* In a write fault's ->page_mkwrite(): the fault's row. */
	r.e = wpstat_fault_hint_row(mapping, &r.t);
	if (r.e)
		wpstat_add(r, WPC_STABLE_CALLS, 1);
	else if (wpstat_want_task() && wpstat_key_of_mapping(mapping, &key))
		wpstat_count(&key, WPC_STABLE_CALLS, 1);
}

static __always_inline void bdp_rl_enter(unsigned long parent_ip,
					 struct pt_regs *args)
{
	struct address_space *mapping;
	struct wpstat_bdp_record *r;
	struct wpstat_ref ref;

	wpstat_hit(WPP_BDP_RL);
	if (!in_task())		/* only a task's write is throttled */
		return;
	r = this_cpu_ptr(wpstat_bdp_record);
	r->task = (unsigned long)current;
	r->switches = wpstat_task_switches(current);
	mapping = wpstat_bdp_rl_mapping(args);
	r->counted = wpstat_want_task() &&
		     wpstat_key_of_mapping(mapping, &r->key);
	if (!r->counted)
		return;
	/* From a write fault: the fault's row. */
	ref.e = wpstat_fault_hint_row(mapping, &ref.t);
	if (!ref.e)
		ref = wpstat_lookup(&r->key);
	wpstat_add(ref, WPC_BDP_CALLS, 1);
	/* balance_dirty_pages_ratelimited() tail-calls the _flags variant. */
	if (wpstat_in_range(parent_ip, &wpstat_fault_dirty_range))
		wpstat_add(ref, WPC_BDP_FAULT_CALLS, 1);
}

/*
 * jbd2__journal_start(), level timing: a start inside a write fault or a
 * write system call is timed until jbd2's handle-start tracepoint, at
 * the end of the same call (tp_jbd2_start()), in the task's context.  A
 * nested start (the task holds a handle) returns before the tracepoint:
 * it is left alone.  A start that fails fires none; the task's next
 * start takes its place.
 */
static __always_inline void jbd2_start_enter(void)
{
	struct wpstat_tctx *c;
	bool fault;

	wpstat_hit(WPP_JBD2_START);
	if (journal_level_off() || current->journal_info)
		return;
	c = wpstat_tctx_find();
	if (!journal_timed(c, &fault)) {
		/* A failed start's, which no tracepoint must end. */
		if (c && (c->active & WPT_JOURNAL))
			wpstat_tctx_put(c, WPT_JOURNAL);
		return;
	}
	if (!c)
		c = wpstat_tctx_get();
	if (!c)
		return;
	c->journal_fault = fault;
	c->journal_nvcsw = READ_ONCE(current->nvcsw);
	wait_start_now(&c->journal_w);
	c->active |= WPT_JOURNAL;
}

/*
 * __destroy_inode(): the inode leaves the inode cache (a deleted file at
 * its last close, or any inode evicted).  Its row becomes reclaimable; an
 * event for the same (dev, ino, generation) later takes it back.  Not
 * filtered by process or device: a row is marked whoever destroys the
 * inode.  Sockets, pipes and anonymous inodes (no file type: eventfd,
 * io_uring, dma-buf) are destroyed by the thousand a second on a busy
 * machine and never have a row (no page cache is written through them):
 * wpstat_entry() lets them go before the recursion guard, at the cost
 * of a load and a compare, no lookup and no shared write (make bench's
 * W5).
 */
static __always_inline bool evict_may_have_row(const struct inode *inode)
{
	umode_t type = READ_ONCE(inode->i_mode) & S_IFMT;

	return type && type != S_IFSOCK && type != S_IFIFO;
}

static __always_inline void evict_enter(struct pt_regs *args)
{
	struct wpstat_key key;
	struct inode *inode = wpstat_inode_arg(args);

	wpstat_key_fill(inode, &key);
	wpstat_mark_gone(&key);
	wpstat_stalls_note_death();
}

/* The entry-only points but for the inodes wpstat_entry() lets go. */
static noinline void notrace wpstat_entry_counted(unsigned long ip,
						  unsigned long parent_ip,
						  struct pt_regs *args)
{
	int bit, p;

	bit = wpstat_ftrace_trylock(ip, parent_ip);
	if (unlikely(bit < 0)) {
		for (p = 0; p < WPP_NR; p++)
			if (ip == wpstat_entry_ip[p])
				this_cpu_inc(wpstat_probe_stats->missed[p]);
		if (ip == wpstat_entry_ip[WPP_EVICT])
			WRITE_ONCE(mapping_hints_off, true);
		return;
	}
	/* A store's points first: bdp_rl and stable are level timing's. */
	if (ip == wpstat_entry_ip[WPP_MKWRITE])
		mkwrite_enter(args);
	else if (ip == wpstat_entry_ip[WPP_MKCLEAN])
		mkclean_enter(args);
	else if (ip == wpstat_entry_ip[WPP_BDP_RL])
		bdp_rl_enter(parent_ip, args);
	else if (ip == wpstat_entry_ip[WPP_STABLE])
		stable_enter(args);
	else if (ip == wpstat_entry_ip[WPP_JBD2_START])
		jbd2_start_enter();
	else if (ip == wpstat_entry_ip[WPP_EVICT])
		evict_enter(args);	/* counted in its hits below */
	else
		WARN_ONCE(1, "wpstat: no entry handler for %pS\n", (void *)ip);
	wpstat_ftrace_unlock(bit);
}

/*
 * The one ftrace_ops callback of every entry-only attachment point
 * (wpstat_attach.c filters it on their addresses).  Every inode the
 * system destroys comes here first, and most have no row: reading the
 * inode's type calls nothing a recursion guard would protect, and this
 * function is small enough to need no stack frame, so such an inode
 * costs a few instructions (make bench's W5); the rest is a tail call.
 */
static void notrace wpstat_entry(WPSTAT_FTRACE_CB_PROTO)
{
	struct pt_regs *args = wpstat_fregs_args(fregs);

	if (ip == wpstat_entry_ip[WPP_EVICT]) {
		wpstat_hit(WPP_EVICT);
		if (!evict_may_have_row(wpstat_inode_arg(args)))
			return;
	}
	wpstat_entry_counted(ip, parent_ip, args);
}

/*
 * The entry-only points' callback (wpstat_attach.c filters it on them),
 * for each probe wpstat_probes.def gives an ftrace entry; its dispatch,
 * wpstat_entry_counted(), warns once of an address it has no branch for.
 */
#define entry_item(id)							\
	[WPP_##id] = { .ftrace = wpstat_entry },
const struct wpstat_handler_set wpstat_entry_handlers[WPP_NR] = {
#define WPSTAT_PROBE(id, ...)						\
	WPSTAT_HANDLERS_OF(FTRACE, entry_item, id, __VA_ARGS__)
#include "wpstat_probes.def"
#undef WPSTAT_PROBE
};

/* ---- set-up --------------------------------------------------------------- */

#define WPSTAT_FAULT_RECS	(1U << WPSTAT_FAULT_REC_BITS)

size_t wpstat_handlers_bytes(size_t *cpu)
{
	size_t per_cpu = sizeof(struct wpstat_bdp_record) +
			 sizeof(struct wpstat_fault_hint) +
			 sizeof(struct mkclean_hint);

	*cpu += per_cpu;
	return per_cpu * num_possible_cpus() +
	       sizeof(struct wpstat_fault_rec) * WPSTAT_FAULT_RECS;
}

int wpstat_handlers_init(void)
{
	int ret = wpstat_probe_core_init();

	if (ret)
		return ret;
	wpstat_fault_recs = kvcalloc(WPSTAT_FAULT_RECS,
				     sizeof(*wpstat_fault_recs), GFP_KERNEL);
	wpstat_bdp_record = alloc_percpu(struct wpstat_bdp_record);
	if (!wpstat_fault_recs || !wpstat_bdp_record) {
		wpstat_handlers_exit();
		return -ENOMEM;
	}
	return 0;
}

/* After every handler is gone. */
void wpstat_handlers_exit(void)
{
	free_percpu(wpstat_bdp_record);
	wpstat_bdp_record = NULL;
	kvfree(wpstat_fault_recs);
	wpstat_fault_recs = NULL;
	put_pid(xchg(&wpstat_filter_pid, NULL));
}
