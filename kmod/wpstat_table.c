// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_table.c - the per-inode table, its per-CPU sums, and recycling.
 *
 * Probe handlers find or insert an inode's entry lock-free and add to its
 * atomic counters and to per-CPU sums that belong to the same table, so a
 * reset (which swaps in a fresh table under RCU) can never leave part of a
 * total behind.  Readers pin a table with a reference.
 *
 * Left loaded for weeks, the table would fill with rows of inodes long
 * gone.  A row is marked when its inode is destroyed (evicted from the
 * inode cache, which a deleted file is at its last close), and unmarked if
 * the same inode is read back and counts again.  When the table runs short
 * of room (an eighth left, or an insert failed), or a quarter of a
 * half-full table is marked, compaction (process context,
 * wpstat_compact(); at most once a second, for a 64th of the table or a
 * full one) builds a new
 * table with the live rows, swaps it in, waits for a grace period, then
 * adds every count of the old table that the new one lacks: live rows
 * keep every count, marked rows are folded into their filesystem's "gone"
 * totals.  The per-CPU sums are shared by the two tables, never moved, so
 * no total a reader sees ever goes back.  Counts of live tracked inodes
 * never change because of it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/irq_work.h>
#include <linux/jhash.h>
#include <linux/kdev_t.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "wpstat.h"
#include "wpstat_compat.h"

#define WPSTAT_MAX_INODES_LIMIT	(1U << 22)
/* Longest linear-probe run; the index is at most half full. */
#define WPSTAT_MAX_PROBE	64

unsigned int wpstat_max_inodes = 65536;
struct wpstat_table __rcu *wpstat_table;
/*
 * The table a compaction is moving rows out of, from just before the swap
 * until every row is moved: an inode destroyed meanwhile is marked in it
 * too, since its row may be moved after the new table was looked in.
 */
static struct wpstat_table __rcu *wpstat_table_moving;
static DEFINE_MUTEX(wpstat_table_mutex);	/* serialises table swaps */
struct wpstat_probe_stats __percpu *wpstat_probe_stats;

/*
 * Unsized: wpstat_table_init() checks that the list made every counter,
 * the last one included.
 */
#define WPN(p) BIT(WPP_##p)
#define WPSTAT_COUNTER(id, nm, knd, need, lvl, hlp)			\
	[WPC_##id] = { .name = #nm, .help = hlp, .needs = need,		\
		       .level = WPL_##lvl, .kind = WPK_##knd },
const struct wpstat_counter_info wpstat_counters[] = {
#include "wpstat_counters.def"
};
#undef WPSTAT_COUNTER
#undef WPN

static struct wpstat_rows_param max_inodes_param = {
	.val = &wpstat_max_inodes,
	.limit = WPSTAT_MAX_INODES_LIMIT,
};
/* Fixed at load: the table is preallocated to this size. */
module_param_cb(max_inodes, &wpstat_rows_param_ops, &max_inodes_param, 0444);
MODULE_PARM_DESC(max_inodes, "Inodes tracked individually (1..4194304, default 65536)");

/* Bytes of preallocated memory per tracked inode (entry + two index slots). */
size_t wpstat_entry_bytes(void)
{
	return wpstat_rows_bytes(sizeof(struct wpstat_entry));
}

/* The per-CPU sums of a table and of every table compacted from it. */
struct wpstat_sums_owner {
	struct kref ref;
	struct wpstat_sums __percpu *sums;
};

static void wpstat_sums_release(struct kref *ref)
{
	struct wpstat_sums_owner *o =
		container_of(ref, struct wpstat_sums_owner, ref);

	free_percpu(o->sums);
	kfree(o);
}

static void wpstat_table_release(struct wpstat_rows *r)
{
	struct wpstat_table *t = container_of(r, struct wpstat_table, r);

	if (t->sums_owner)
		kref_put(&t->sums_owner->ref, wpstat_sums_release);
	kfree(t->gone);
	kfree(t);
}

/* Process context only: the last put frees the table. */
void wpstat_table_put(struct wpstat_table *t)
{
	if (t)
		wpstat_rows_put(&t->r);
}

/*
 * An empty table with @from's sums (compaction, which may give up:
 * __GFP_NORETRY), or fresh ones (NULL).
 */
static struct wpstat_table *wpstat_table_alloc(u32 max_entries,
					       struct wpstat_table *from)
{
	struct wpstat_table *t;
	int ret;

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return NULL;
	ret = wpstat_rows_init(&t->r, max_entries, sizeof(struct wpstat_entry),
			       offsetof(struct wpstat_entry, valid),
			       from ? __GFP_NORETRY : 0, wpstat_table_release);
	t->entries = t->r.mem;
	t->gone = kcalloc(WPSTAT_GONE_DEVS, sizeof(*t->gone), GFP_KERNEL);
	if (from) {
		t->sums_owner = from->sums_owner;
		kref_get(&t->sums_owner->ref);
	} else {
		t->sums_owner = kzalloc(sizeof(*t->sums_owner), GFP_KERNEL);
		if (t->sums_owner) {
			kref_init(&t->sums_owner->ref);
			t->sums_owner->sums = alloc_percpu(struct wpstat_sums);
			if (!t->sums_owner->sums) {
				kfree(t->sums_owner);
				t->sums_owner = NULL;
			}
		}
	}
	if (ret || !t->gone || !t->sums_owner) {
		wpstat_table_put(t);
		return NULL;
	}
	t->sums = t->sums_owner->sums;
	return t;
}

/* A reference to the current table, for a reader that may sleep. */
struct wpstat_table *wpstat_table_pin(void)
{
	struct wpstat_table *t;

	mutex_lock(&wpstat_table_mutex);
	t = rcu_dereference_protected(wpstat_table,
				      lockdep_is_held(&wpstat_table_mutex));
	if (t)
		kref_get(&t->r.ref);
	mutex_unlock(&wpstat_table_mutex);
	return t;
}

/* ---- compaction, kicked from probe context ------------------------------ */

static unsigned long wpstat_compact_pending;
static struct delayed_work wpstat_compact_work;
static unsigned long wpstat_compact_last;	/* jiffies of the last run */
static struct irq_work wpstat_compact_iw;

/* Rows compaction would free: marked gone, or reserved and never published. */
static u32 wpstat_reclaimable(struct wpstat_table *t)
{
	u32 reserved = min_t(u32, atomic_read(&t->r.nr_reserved), t->r.max);

	return atomic_read(&t->nr_evicted) + reserved -
	       atomic_read(&t->nr_tracked);
}

/*
 * A rebuild copies the whole table (15 MB at the default size) under the
 * mutex readers take: at most one a second, and only for a worthwhile
 * reclaim, a 64th of the table, unless it is full.
 */
#define WPSTAT_COMPACT_INTERVAL	HZ

static bool wpstat_compact_worthwhile(struct wpstat_table *t)
{
	u32 reclaimable = wpstat_reclaimable(t);

	return reclaimable &&
	       (reclaimable >= max(t->r.max / 64, 1U) ||
		atomic_read(&t->r.nr_reserved) >= t->r.max);
}

/* Any context: queue a compaction (irq_work, then a work item) once. */
static void notrace wpstat_compact_kick(struct wpstat_table *t)
{
	if (wpstat_compact_worthwhile(t) &&
	    wpstat_compact_request(&wpstat_compact_pending))
		irq_work_queue(&wpstat_compact_iw);
}

static void wpstat_compact_irq_work(struct irq_work *iw)
{
	unsigned long next = READ_ONCE(wpstat_compact_last) +
			     WPSTAT_COMPACT_INTERVAL;

	queue_delayed_work(wpstat_unbound_wq, &wpstat_compact_work,
			   time_before(jiffies, next) ? next - jiffies : 0);
}

/* ---- find or insert ------------------------------------------------------- */

/*
 * Find @key, or insert it if @insert.  Safe in any context: no locks, no
 * allocation.  NULL when absent (!@insert), or when the table is full or
 * the probe run exhausted; a compaction is then kicked if it could help.
 */
static struct wpstat_entry *notrace wpstat_table_find(struct wpstat_table *t,
					      const struct wpstat_key *key,
					      bool insert)
{
	struct wpstat_entry *mine = NULL;
	u32 h = jhash2((const u32 *)key, sizeof(*key) / sizeof(u32), t->r.seed);
	u32 i, slot_nr;

	for (i = 0; i < WPSTAT_MAX_PROBE; i++) {
		u32 *slot = &t->r.index[(h + i) & t->r.index_mask];
		/* Pairs with cmpxchg() below: see the key before using it. */
		u32 cur = smp_load_acquire(slot);

		if (!cur) {
			if (!insert)
				return NULL;
			if (!mine) {
				int n = atomic_fetch_add_unless(&t->r.nr_reserved,
								1, t->r.max);

				if (n >= t->r.max)
					break;
				mine = &t->entries[n];
				mine->key = *key;
			}
			slot_nr = mine - t->entries + 1;
			/* Full barrier: the key is visible before the slot. */
			cur = cmpxchg(slot, 0, slot_nr);
			if (!cur) {
				/* Readers of valid entries see key and counters. */
				smp_store_release(&mine->valid, 1);
				atomic_inc(&t->nr_tracked);
				if (t->r.max - atomic_read(&t->r.nr_reserved) <
				    t->r.max / 8 + 1)
					wpstat_compact_kick(t);
				return mine;
			}
		}
		if (wpstat_key_equal(&t->entries[cur - 1].key, key)) {
			/*
			 * Lost a race to insert the same key: our reserved
			 * entry stays unpublished (valid == 0) until the
			 * next compaction reclaims it.
			 */
			if (mine)
				wpstat_compact_kick(t);
			return &t->entries[cur - 1];
		}
	}
	if (insert)
		wpstat_compact_kick(t);
	return NULL;
}

/*
 * Process context (stall-table compaction): whether @key's inode is
 * gone: its row marked so, or no longer in the table (a compaction
 * folded it into the gone totals; a row that never found room reads the
 * same).  A row in the table a compaction is moving from counts too.
 */
bool wpstat_inode_gone(const struct wpstat_key *key)
{
	struct wpstat_table *t, *old;
	struct wpstat_entry *e;
	bool gone = true;

	rcu_read_lock();
	t = rcu_dereference(wpstat_table);
	old = rcu_dereference(wpstat_table_moving);
	e = t ? wpstat_table_find(t, key, false) : NULL;
	if (!e && old && old != t)
		e = wpstat_table_find(old, key, false);
	/* Pairs with the release in wpstat_table_find(): a published row. */
	if (e && smp_load_acquire(&e->valid))
		gone = READ_ONCE(e->evicted);
	rcu_read_unlock();
	return gone;
}

/* An event for a row marked gone: its inode is back (read in again). */
void notrace wpstat_revive(struct wpstat_table *t, struct wpstat_entry *e)
{
	if (cmpxchg(&e->evicted, 1, 0) == 1)
		atomic_dec(&t->nr_evicted);
}

struct wpstat_last __percpu *wpstat_last;

/*
 * wpstat_lookup()'s slow path (wpstat.h has the fast one: the entry this
 * CPU found last): hash, find or insert, and remember the entry.
 */
struct wpstat_ref notrace wpstat_lookup_slow(struct wpstat_table *t,
				     const struct wpstat_key *key)
{
	struct wpstat_ref r = { t, NULL };
	struct wpstat_last *last = this_cpu_ptr(wpstat_last);
	struct wpstat_entry *e;

	if (unlikely(!t))
		return r;
	e = wpstat_table_find(t, key, true);
	if (unlikely(!e)) {
		this_cpu_inc(t->sums->untracked_events);
		return r;
	}
	WRITE_ONCE(last->table, t);
	WRITE_ONCE(last->idx, (u32)(e - t->entries));
	if (unlikely(READ_ONCE(e->evicted)))
		wpstat_revive(t, e);
	r.e = e;
	return r;
}

/*
 * Probe context: a throttle whose write could not be named.  Kept with
 * the table's sums, so that a reset clears it with the totals it is
 * part of (a diagnosis reads it against them).
 */
void notrace wpstat_count_bdp_unattributed(void)
{
	struct wpstat_table *t = rcu_dereference_sched(wpstat_table);

	if (t)
		this_cpu_inc(t->sums->bdp_unattributed);
}

/*
 * Probe context: @key's inode is being destroyed.  Its row, if any, is
 * marked so that a compaction may fold it into the "gone" totals.
 */
void notrace wpstat_mark_gone(const struct wpstat_key *key)
{
	struct wpstat_table *t = rcu_dereference_sched(wpstat_table);
	struct wpstat_table *old = rcu_dereference_sched(wpstat_table_moving);
	struct wpstat_entry *e;

	if (!t)
		return;
	/*
	 * A compaction is moving rows: mark the old row first, then look in
	 * the new table.  The mover publishes the new row, then reads the
	 * old row's mark (wpstat_move_row()): with a full barrier on each
	 * side, one of the two sees the other's write.
	 */
	if (old && old != t) {
		e = wpstat_table_find(old, key, false);
		/* Pairs with the release in wpstat_table_find(). */
		if (e && smp_load_acquire(&e->valid))
			cmpxchg(&e->evicted, 0, 1);
		/* Mark before look: pairs with wpstat_move_row()'s. */
		smp_mb();
	}
	e = wpstat_table_find(t, key, false);
	/* Pairs with the release in wpstat_table_find(): a published row. */
	if (!e || !smp_load_acquire(&e->valid) || cmpxchg(&e->evicted, 0, 1))
		return;
	/*
	 * Reclaim early once a quarter of a half-full table is gone (a
	 * build, a log rotation, a wave of temporary files), so that the
	 * files that come next find room.
	 */
	if (atomic_inc_return(&t->nr_evicted) >= t->r.max / 4 &&
	    atomic_read(&t->r.nr_reserved) >= t->r.max / 2)
		wpstat_compact_kick(t);
}

/* The sum (or @max) over CPUs of the u64 at @offset in struct wpstat_sums. */
u64 wpstat_sums_read(struct wpstat_table *t, size_t offset, bool max)
{
	u64 sum = 0, v;
	int cpu;

	if (!t)
		return 0;
	for_each_possible_cpu(cpu) {
		v = *(u64 *)((char *)per_cpu_ptr(t->sums, cpu) + offset);
		sum = max ? max(sum, v) : sum + v;
	}
	return sum;
}

/* @a and @b merged as counter @c merges. */
static u64 wpstat_merge(enum wpstat_counter c, u64 a, u64 b)
{
	return wpstat_counters[c].kind == WPK_MAX ? max(a, b) : a + b;
}

/* Likewise for the module-wide probe statistics. */
u64 wpstat_probe_stat(size_t offset)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += *(u64 *)((char *)per_cpu_ptr(wpstat_probe_stats, cpu) + offset);
	return sum;
}

/* ---- swapping tables: reset and compaction -------------------------------- */

/*
 * Resets and compactions since load: a reader of more than one file
 * (inodes, then gone) that sees it unchanged read one table.
 */
static u64 wpstat_table_swaps;

u64 wpstat_table_swap_count(void)
{
	return READ_ONCE(wpstat_table_swaps);
}

/* Swap in @new (mutex held); the old table once no handler can use it. */
static struct wpstat_table *wpstat_table_swap(struct wpstat_table *new)
{
	struct wpstat_table *old;

	WRITE_ONCE(wpstat_table_swaps, wpstat_table_swaps + 1);
	old = rcu_replace_pointer(wpstat_table, new,
				  lockdep_is_held(&wpstat_table_mutex));
	/* Every handler runs with preemption disabled: an RCU reader. */
	synchronize_rcu();
	return old;
}

/*
 * Start counting from zero, in two steps so that the control layer can
 * reset every table at once or, short of memory, none: a fresh inode
 * table with fresh sums and fresh histograms of the same scope (the
 * control mutex keeps the scope), then the swap.  An event counted in
 * one table and timed after the swap adds its time to none (struct
 * wpstat_gen): no row has a time without its count.
 */
int wpstat_table_reset_prepare(struct wpstat_table_reset *r)
{
	r->table = wpstat_table_alloc(wpstat_max_inodes, NULL);
	r->hists = wpstat_hists_reset_prepare();
	return r->table && r->hists ? 0 : -ENOMEM;
}

void wpstat_table_reset_abort(struct wpstat_table_reset *r)
{
	wpstat_hists_reset_abort(r->hists);
	wpstat_table_put(r->table);
}

void wpstat_table_reset_commit(struct wpstat_table_reset *r)
{
	struct wpstat_table *old;

	wpstat_hists_reset_commit(r->hists);
	mutex_lock(&wpstat_table_mutex);
	old = rcu_dereference_protected(wpstat_table,
					lockdep_is_held(&wpstat_table_mutex));
	/* Before it is published: an event's generation is its table's. */
	r->table->reset_gen = old ? old->reset_gen + 1 : 1;
	old = wpstat_table_swap(r->table);
	mutex_unlock(&wpstat_table_mutex);
	wpstat_table_put(old);
}

/* The "gone" slot of @dev: its own while there is room, else the last. */
static struct wpstat_gone *wpstat_gone_of(struct wpstat_table *t, u32 dev)
{
	int i;

	for (i = 0; i < WPSTAT_GONE_DEVS - 1; i++) {
		if (t->gone[i].dev == dev)
			return &t->gone[i];
		if (!t->gone[i].dev) {
			t->gone[i].dev = dev;
			return &t->gone[i];
		}
	}
	return &t->gone[WPSTAT_GONE_DEVS - 1];	/* dev 0: other filesystems */
}

/* Fold @e's counts into the gone totals of its filesystem (mutex held). */
static void wpstat_fold_gone(struct wpstat_table *t, const struct wpstat_entry *e)
{
	struct wpstat_gone *g = wpstat_gone_of(t, e->key.dev);
	int c;

	for (c = 0; c < WPC_NR; c++)
		WRITE_ONCE(g->count[c], wpstat_merge(c, g->count[c],
						     atomic64_read(&e->count[c])));
	WRITE_ONCE(g->inodes, g->inodes + 1);
}

/* Move every count of @e into its row in @t (or untracked, if none fits). */
static void wpstat_move_row(struct wpstat_table *t, struct wpstat_entry *to,
			    const struct wpstat_entry *e)
{
	int c;

	if (!to)
		to = wpstat_table_find(t, &e->key, true);
	for (c = 0; c < WPC_NR; c++) {
		u64 v = atomic64_read(&e->count[c]);
		u64 *u;

		if (!v)
			continue;
		if (to && wpstat_counters[c].kind == WPK_MAX) {
			wpstat_atomic_max(&to->count[c], v);
		} else if (to) {
			atomic64_add(v, &to->count[c]);
		} else {
			/*
			 * @t is live and this unbound worker preemptible
			 * (always so on PREEMPT_RT): no migration and no
			 * other task's handler between the read and the
			 * write of this CPU's sum.
			 */
			preempt_disable();
			u = this_cpu_ptr(&t->sums->untracked[c]);
			*u = wpstat_merge(c, *u, v);
			preempt_enable();
		}
	}
	/* Pairs with wpstat_mark_gone(): the new row is published first. */
	smp_mb();
	if (to && READ_ONCE(e->evicted) && !cmpxchg(&to->evicted, 0, 1))
		atomic_inc(&t->nr_evicted);
}

/*
 * Rebuild the table without the rows of destroyed inodes (folded into the
 * gone totals) and without reserved entries that were never published.
 * While the new table is built, events still land in the old one; after
 * the swap and a grace period the old table is final, and every count in
 * it that the new one lacks is added there.  Readers wait on the mutex, so
 * no reader sees a row between the swap and the transfer; the summary
 * reads the sums, which the new table shares with the old.
 */
int wpstat_compact(void)
{
	struct wpstat_table *old, *new;
	u32 i, n, n0, *map;
	int ret = 0;

	mutex_lock(&wpstat_table_mutex);
	old = rcu_dereference_protected(wpstat_table,
					lockdep_is_held(&wpstat_table_mutex));
	if (!old || !wpstat_compact_worthwhile(old))
		goto out;
	WRITE_ONCE(wpstat_compact_last, jiffies);
	new = wpstat_table_alloc(old->r.max, old);
	n0 = min_t(u32, atomic_read(&old->r.nr_reserved), old->r.max);
	map = kvcalloc(max_t(u32, n0, 1), sizeof(*map), GFP_KERNEL);
	if (!new || !map) {
		kvfree(map);
		wpstat_table_put(new);
		ret = -ENOMEM;
		goto out;
	}
	/* The live rows, by key; the counts come after the swap. */
	for (i = 0; i < n0; i++) {
		struct wpstat_entry *e = &old->entries[i], *to;

		/* Pairs with the release in wpstat_table_find(). */
		if (!smp_load_acquire(&e->valid) || READ_ONCE(e->evicted))
			continue;
		to = wpstat_table_find(new, &e->key, true);
		map[i] = to ? to - new->entries + 1 : 0;
	}
	memcpy(new->gone, old->gone, WPSTAT_GONE_DEVS * sizeof(*new->gone));
	new->compactions = old->compactions + 1;
	new->reset_gen = old->reset_gen;

	rcu_assign_pointer(wpstat_table_moving, old);
	wpstat_table_swap(new);

	/* The old table is final: move what the new one does not have. */
	n = min_t(u32, atomic_read(&old->r.nr_reserved), old->r.max);
	for (i = 0; i < n; i++) {
		struct wpstat_entry *e = &old->entries[i];
		bool mapped = i < n0 && map[i];

		/* Pairs with the release in wpstat_table_find(). */
		if (!smp_load_acquire(&e->valid))
			continue;
		if (!mapped && READ_ONCE(e->evicted))
			wpstat_fold_gone(new, e);
		else
			wpstat_move_row(new, mapped ?
					&new->entries[map[i] - 1] : NULL, e);
		cond_resched();
	}
	RCU_INIT_POINTER(wpstat_table_moving, NULL);
	synchronize_rcu();	/* no wpstat_mark_gone() still in @old */
	kvfree(map);
	wpstat_table_put(old);
out:
	mutex_unlock(&wpstat_table_mutex);
	return ret;
}

/*
 * A kick while a compaction ran (an eviction wave's threshold) runs it
 * again, if it is still worth it then (wpstat_compact() looks first).
 */
static void wpstat_compact_workfn(struct work_struct *work)
{
	int ret;

	wpstat_compact_begin(&wpstat_compact_pending);
	ret = wpstat_compact();
	if (ret)
		pr_warn_ratelimited("compaction failed: %d\n", ret);
	if (wpstat_compact_end(&wpstat_compact_pending))
		queue_delayed_work(wpstat_unbound_wq, &wpstat_compact_work,
				   WPSTAT_COMPACT_INTERVAL);
}

int wpstat_table_init(void)
{
	struct wpstat_table *t;
	int hist_err;

	BUILD_BUG_ON(ARRAY_SIZE(wpstat_counters) != WPC_NR);

	init_irq_work(&wpstat_compact_iw, wpstat_compact_irq_work);
	INIT_DELAYED_WORK(&wpstat_compact_work, wpstat_compact_workfn);
	wpstat_compact_last = jiffies - WPSTAT_COMPACT_INTERVAL;
	wpstat_probe_stats = alloc_percpu(struct wpstat_probe_stats);
	wpstat_last = alloc_percpu(struct wpstat_last);
	t = wpstat_table_alloc(wpstat_max_inodes, NULL);
	hist_err = wpstat_hist_init();
	if (!wpstat_probe_stats || !wpstat_last || !t || hist_err) {
		pr_err("cannot allocate a table for %u inodes\n",
		       wpstat_max_inodes);
		if (!hist_err)
			wpstat_hist_exit();
		wpstat_table_put(t);
		free_percpu(wpstat_last);
		free_percpu(wpstat_probe_stats);
		return -ENOMEM;
	}
	rcu_assign_pointer(wpstat_table, t);
	return 0;
}

/* After every handler is gone (wpstat_attach_exit()): none can kick. */
void wpstat_table_exit(void)
{
	struct wpstat_table *t;

	irq_work_sync(&wpstat_compact_iw);
	cancel_delayed_work_sync(&wpstat_compact_work);
	t = rcu_dereference_protected(wpstat_table, 1);
	RCU_INIT_POINTER(wpstat_table, NULL);
	synchronize_rcu();
	wpstat_table_put(t);
	wpstat_hist_exit();
	free_percpu(wpstat_last);
	free_percpu(wpstat_probe_stats);
}
