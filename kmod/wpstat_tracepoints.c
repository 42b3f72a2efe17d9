// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_tracepoints.c - the tracepoint probes: a folio dirtied, a task
 * about to wait for writeback (classified by its stack, announced to
 * folio_wait_bit()'s return probe), a throttle's pauses, a flusher's pass
 * and its reason, a task's exit.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "wpstat_probe.h"

#include <trace/events/sched.h>
#include <trace/events/writeback.h>
#include <trace/events/jbd2.h>

/*
 * Where a dirtied folio of @mapping counts: no table if the filters
 * exclude it.  Inline: a call would cost write(2)'s dirtying more than
 * the key's stack canary costs the fault's (make bench's W2 and W1).
 */
static __always_inline struct wpstat_ref tp_dirty_lookup(const struct address_space *mapping)
{
	struct wpstat_key key;

	/* Folios are dirtied by whoever writes: the task filter applies. */
	if (!wpstat_want_task() || !wpstat_key_of_mapping(mapping, &key))
		return (struct wpstat_ref){ NULL, NULL };
	return wpstat_lookup(&key);
}

/*
 * A folio went clean to dirty (folio_account_dirtied()).  Not whose
 * throttle follows: a fault on a page already dirty dirties nothing, and
 * 6.12's write(2) calls the ratelimiter before it dirties (bdp_writer()
 * says who).
 */
static void notrace tp_dirty_folio(WPSTAT_TP_FOLIO_PROTO)
{
	struct wpstat_ref r;

	wpstat_hit(WPP_TP_DIRTY);
	/* A write fault's folio: the row its do_page_mkwrite() found. */
	r.e = wpstat_fault_hint_row(mapping, &r.t);
	if (!r.e) {
		r = tp_dirty_lookup(mapping);
		if (!r.t)
			return;
	}
	wpstat_add(r, WPC_DIRTIED, 1);
	wpstat_add(r, WPC_DIRTIED_PAGES, wpstat_tp_folio_nr_pages(folio));
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
	kind = wpstat_wait_classify(mapping);
	if (kind == WPW_OTHER) {
		/*
		 * A ZFS sync of the file waiting for its pages' writeback,
		 * which ZFS ends only when the ZIL or the txg commits them
		 * (openzfs #12662: 2.1's zpl_fsync() waits before it commits).
		 */
		c = wpstat_tctx_find();
		if (!wpstat_sync_in_scope(c) ||
		    !wpstat_key_equal(&c->sync_key, &key)) {
			wpstat_add(r, WPC_WB_WAITS, 1);
			return;
		}
		kind = WPW_SYNC;
	}
	/*
	 * wb_waits counts every writeback wait, any caller: the wb cause's
	 * own count (wpstat_cause_begin() adds it), and the others' here.
	 */
	if (kind != WPW_WRITE)
		wpstat_add(r, WPC_WB_WAITS, 1);
	/*
	 * Its count, in both tables; its time (stable_wait_ns,
	 * wb_write_wait_ns or sync_wb_wait_ns) goes to the same rows.
	 */
	gen = wpstat_cause_begin(r, &key, wpstat_wait_causes[kind]);
	/* Announce the wait to folio_wait_bit()'s kretprobe, which times it. */
	if (!READ_ONCE(wpstat_wait_bit_attached))
		return;
	c = wpstat_tctx_get();
	if (!c)
		return;
	c->active |= WPT_WAIT;
	c->wait_entered = false;
	c->wait_switches = wpstat_task_switches(current);
	c->wait_kind = kind;
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
	wpstat_bdp_close_pause(c, now);
	if (pause > 0 && !c->bdp_async) {
		c->pause_gen = wpstat_cause_begin(wpstat_lookup(&c->bdp_key),
						  &c->bdp_key, WPCA_PAUSE);
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

/*
 * jbd2's handle start got its handle (the end of jbd2__journal_start(),
 * or of jbd2_journal_start_reserved(), which no entry opened): a start
 * its entry timed (jbd2_start_enter()) is over.
 */
static void notrace tp_jbd2_start(WPSTAT_TP_JBD2_START_PROTO)
{
	struct wpstat_tctx *c;

	wpstat_hit(WPP_TP_JBD2_START);
	c = wpstat_tctx_find();
	if (!c || !(c->active & WPT_JOURNAL))
		return;
	journal_end(c, c->journal_fault, &c->journal_w, c->journal_nvcsw);
	wpstat_tctx_put(c, WPT_JOURNAL);
}

/* A task exits: whatever call it was in, its context is released. */
static void notrace tp_process_exit(WPSTAT_TP_EXIT_PROTO)
{
	wpstat_hit(WPP_TP_EXIT);
	/*
	 * The last thread of its process (do_exit() counts it out of
	 * signal->live before this tracepoint): the stall table may fold
	 * the process's rows.  Other threads' exits free no row.
	 */
	if (!atomic_read(&p->signal->live))
		wpstat_stalls_note_death();
	if (p == current) {
		wpstat_tctx_exit_task();
		wpstat_fault_rec_exit_task();
	}
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
	check_trace_callback_type_jbd2_handle_start(tp_jbd2_start);
}


/*
 * The tracepoint points' probes (wpstat_attach.c registers them), one
 * tp_<id> for each probe wpstat_probes.def gives a tracepoint.
 */
#define tp_TP_DIRTY		tp_dirty_folio
#define tp_TP_WAIT		tp_wait_writeback
#define tp_TP_BDP		tp_balance_dirty_pages
#define tp_TP_WB_START		tp_wb_start
#define tp_TP_WB_WRITTEN	tp_wb_written
#define tp_TP_EXIT		tp_process_exit
#define tp_TP_JBD2_START	tp_jbd2_start
#define tp_item(id)							\
	[WPP_##id] = { .tp = tp_##id },
const struct wpstat_handler_set wpstat_tp_handlers[WPP_NR] = {
#define WPSTAT_PROBE(id, ...)						\
	WPSTAT_HANDLERS_OF(TRACEPOINT, tp_item, id, __VA_ARGS__)
#include "wpstat_probes.def"
#undef WPSTAT_PROBE
};
