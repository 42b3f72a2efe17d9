// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_tctx.c - per-task call contexts.
 *
 * Events that only make sense inside an outer call (a pause traced in
 * balance_dirty_pages() for the inode whose write entered it, the folio
 * wait that follows a stable-page wait's tracepoint) are tied together
 * through a small table of contexts, each owned and touched only by its
 * task.  Only slow paths claim one: a task about to be throttled or to
 * sleep on writeback.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hash.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "wpstat.h"
#include "wpstat_compat.h"

#define WPSTAT_TCTX_BITS	11
#define WPSTAT_TCTX_SLOTS	(1U << WPSTAT_TCTX_BITS)
#define WPSTAT_TCTX_PROBE	8

static struct wpstat_tctx *wpstat_tctx;
static atomic64_t wpstat_tctx_overflow = ATOMIC64_INIT(0);
static atomic64_t wpstat_tctx_stale = ATOMIC64_INIT(0);
static atomic64_t wpstat_tctx_stale_wait = ATOMIC64_INIT(0);

/*
 * Whether @c, owned by the current task_struct, is this task's and not a
 * dead task's whose task_struct was reused: the exit tracepoint releases
 * contexts (wpstat_tctx_exit_task()), and the start time says so too.
 */
static bool notrace tctx_mine(struct wpstat_tctx *c)
{
	if (c->start == current->start_time)
		return true;
	/* A leftover of a task that died without release: take it over. */
	c->active = 0;
	c->pause_start = 0;
	c->wait_folio = NULL;
	c->start = current->start_time;
	atomic64_inc(&wpstat_tctx_stale);
	return true;
}

/*
 * A wait announced at the folio_wait_writeback tracepoint is entered at
 * once (folio_wait_bit(), no sleep in between).  One the task left its
 * CPU after without entering was never timed (a killable or netfs wait,
 * a missed kretprobe): drop it, so that the context is not held until
 * the task exits.
 */
static void notrace tctx_drop_stale_wait(struct wpstat_tctx *c)
{
	if ((c->active & WPT_WAIT) && !c->wait_entered &&
	    c->wait_switches != wpstat_task_switches(current)) {
		c->active &= ~WPT_WAIT;
		atomic64_inc(&wpstat_tctx_stale_wait);
	}
}

/* The current task's context, or NULL. */
struct wpstat_tctx *notrace wpstat_tctx_find(void)
{
	unsigned long me = (unsigned long)current;
	u32 h = hash_long(me, WPSTAT_TCTX_BITS);
	u32 i;

	for (i = 0; i < WPSTAT_TCTX_PROBE; i++) {
		struct wpstat_tctx *c = &wpstat_tctx[(h + i) % WPSTAT_TCTX_SLOTS];

		if (READ_ONCE(c->owner) == me && tctx_mine(c)) {
			tctx_drop_stale_wait(c);
			if (!c->active) {	/* nothing left: release it */
				smp_store_release(&c->owner, 0);
				return NULL;
			}
			return c;
		}
	}
	return NULL;
}

/*
 * Find the current task's context, or claim one; NULL if none is free.
 * One pass finds both the task's own context and the first free one.
 */
struct wpstat_tctx *notrace wpstat_tctx_get(void)
{
	unsigned long me = (unsigned long)current;
	u32 h = hash_long(me, WPSTAT_TCTX_BITS);
	struct wpstat_tctx *c;
	u32 i, free = WPSTAT_TCTX_PROBE;

	for (i = 0; i < WPSTAT_TCTX_PROBE; i++) {
		unsigned long owner;

		c = &wpstat_tctx[(h + i) % WPSTAT_TCTX_SLOTS];
		owner = READ_ONCE(c->owner);
		if (owner == me && tctx_mine(c)) {
			tctx_drop_stale_wait(c);
			return c;
		}
		if (!owner && free == WPSTAT_TCTX_PROBE)
			free = i;
	}
	for (i = free; i < WPSTAT_TCTX_PROBE; i++) {
		c = &wpstat_tctx[(h + i) % WPSTAT_TCTX_SLOTS];
		if (!READ_ONCE(c->owner) && !cmpxchg(&c->owner, 0, me)) {
			c->active = 0;
			c->pause_start = 0;
			c->wait_folio = NULL;
			c->start = current->start_time;
			return c;
		}
	}
	atomic64_inc(&wpstat_tctx_overflow);
	return NULL;
}

/* The call @bit is over; the context is released with the last one. */
void notrace wpstat_tctx_put(struct wpstat_tctx *c, unsigned int bit)
{
	c->active &= ~bit;
	if (!c->active) /* fields done with before another task claims it */
		smp_store_release(&c->owner, 0);
}

u64 wpstat_tctx_exhausted(void)
{
	return atomic64_read(&wpstat_tctx_overflow);
}

/* Contexts held now (a task inside a call that needs one), for /proc. */
u32 wpstat_tctx_used(void)
{
	u32 i, n = 0;

	for (i = 0; i < WPSTAT_TCTX_SLOTS; i++)
		n += !!READ_ONCE(wpstat_tctx[i].owner);
	return n;
}

/* Announced writeback waits dropped as never entered. */
u64 wpstat_tctx_stale_waits(void)
{
	return atomic64_read(&wpstat_tctx_stale_wait);
}

/* Contexts found left over by a task that died inside a probed call. */
u64 wpstat_tctx_stale_count(void)
{
	return atomic64_read(&wpstat_tctx_stale);
}

/*
 * The current task is exiting (sched_process_exit): release its context,
 * whatever call it died in (an oops inside balance_dirty_pages() never
 * returns to release it).
 */
void notrace wpstat_tctx_exit_task(void)
{
	struct wpstat_tctx *c = wpstat_tctx_find();

	if (c) {
		c->active = 0;
		/* Fields done with before another task claims it. */
		smp_store_release(&c->owner, 0);
	}
}

/*
 * Drop the @scopes of every task's context, and release the contexts
 * that held nothing else.  Only with no handler running anywhere
 * (stop_machine()): each context is otherwise touched by its owner only.
 */
void wpstat_tctx_drop_scopes(unsigned int scopes)
{
	u32 i;

	for (i = 0; i < WPSTAT_TCTX_SLOTS; i++) {
		struct wpstat_tctx *c = &wpstat_tctx[i];

		if (!c->owner || !(c->active & scopes))
			continue;
		c->active &= ~scopes;
		if (!c->active)
			c->owner = 0;
	}
}

size_t wpstat_tctx_bytes(void)
{
	return WPSTAT_TCTX_SLOTS * sizeof(struct wpstat_tctx);
}

int wpstat_tctx_init(void)
{
	/* Order 6 as one kmalloc: vmalloc where memory is fragmented. */
	wpstat_tctx = kvcalloc(WPSTAT_TCTX_SLOTS, sizeof(*wpstat_tctx),
			       GFP_KERNEL);
	return wpstat_tctx ? 0 : -ENOMEM;
}

/* After every handler is gone. */
void wpstat_tctx_exit(void)
{
	kvfree(wpstat_tctx);
	wpstat_tctx = NULL;
}
