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
 * the same inode is read back and counts again.  A new file that finds
 * the table full takes a marked row over at once, under the table's raw
 * spinlock (wpstat_table_recycle()).
 * When the table runs short of room (an eighth left, or an insert failed),
 * or a quarter of a half-full table is marked, compaction (process
 * context, wpstat_compact(); at most once a second and 0.5 % of a CPU, for
 * a 64th of the table or a full one) builds a new
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

/* Every counter of the .def, by its enum (both made from the same list). */
#define WPN(p) BIT(WPP_##p)
#define WPSTAT_COUNTER(id, nm, knd, need, lvl, hlp)			\
	[WPC_##id] = { .name = #nm, .help = hlp, .needs = need,		\
		       .level = WPL_##lvl, .kind = WPK_##knd },
const struct wpstat_counter_info wpstat_counters[WPC_NR] = {
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

/*
 * Bytes of preallocated memory per tracked inode: the entry, two index
 * slots and its place on the free list.
 */
size_t wpstat_entry_bytes(void)
{
	return wpstat_rows_bytes(sizeof(struct wpstat_entry)) + sizeof(u32);
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
	kvfree(t->free);
	kfree(t->gone);
	kfree(t);
}

/* Process context only: the last put frees the table. */
void wpstat_table_put(struct wpstat_table *t)
{
	if (t)
		wpstat_rows_put(&t->r);
}

static atomic64_t wpstat_table_serial = ATOMIC64_INIT(0);

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
	raw_spin_lock_init(&t->lock);
	ret = wpstat_rows_init(&t->r, max_entries, sizeof(struct wpstat_entry),
			       offsetof(struct wpstat_entry, valid),
			       from ? __GFP_NORETRY : 0, wpstat_table_release);
	t->entries = t->r.mem;
	t->free = kvmalloc_array(max_entries, sizeof(*t->free),
				 GFP_KERNEL | (from ? __GFP_NORETRY : 0));
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
	if (ret || !t->free || !t->gone || !t->sums_owner) {
		wpstat_table_put(t);
		return NULL;
	}
	t->sums = t->sums_owner->sums;
	t->serial = atomic64_inc_return(&wpstat_table_serial);
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
static struct wpstat_compact_pace wpstat_compact_pace;
static struct irq_work wpstat_compact_iw;

/*
 * Rows compaction would free: marked gone, reserved by an insert that
 * lost a race and never published, or given back after a take-over.
 */
static u32 wpstat_reclaimable(struct wpstat_table *t)
{
	u32 reserved = min_t(u32, atomic_read(&t->r.nr_reserved), t->r.max);

	return atomic_read(&t->nr_evicted) + reserved -
	       atomic_read(&t->nr_tracked);
}

/*
 * Whether the index holds so many slots of rows taken over that lookups
 * walk far, and inserts may find no empty slot: half of those no row
 * fills.  A compaction rebuilds the index without them.
 */
static bool notrace wpstat_table_tombs_many(struct wpstat_table *t)
{
	return READ_ONCE(t->tombs) >= (t->r.index_mask + 1 - t->r.max) / 2;
}

/*
 * A rebuild copies the whole table (28 MB at the default size) under the
 * mutex readers take: at most one a second, and only for a worthwhile
 * reclaim, a 64th of the table, unless it is full, or for an index
 * crowded with the slots of rows taken over.
 */
#define WPSTAT_COMPACT_INTERVAL	HZ

static bool wpstat_compact_worthwhile(struct wpstat_table *t)
{
	u32 reclaimable = wpstat_reclaimable(t);

	return (reclaimable &&
		(reclaimable >= max(t->r.max / 64, 1U) ||
		 atomic_read(&t->r.nr_reserved) >= t->r.max)) ||
	       wpstat_table_tombs_many(t);
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
	queue_delayed_work(wpstat_unbound_wq, &wpstat_compact_work,
			   wpstat_compact_delay(&wpstat_compact_pace));
}

/* Compactions since load, and their CPU time (the summary). */
u64 wpstat_compact_runs(void)
{
	return READ_ONCE(wpstat_compact_pace.runs);
}

u64 wpstat_compact_cpu_ns(void)
{
	return READ_ONCE(wpstat_compact_pace.cpu_ns);
}

/* ---- find, insert, take over ------------------------------------------------ */

/* An index slot whose row went to another inode: lookups pass it. */
#define WPSTAT_INDEX_TOMB	U32_MAX

static u32 notrace wpstat_key_hash(const struct wpstat_table *t,
				   const struct wpstat_key *key)
{
	return jhash2((const u32 *)key, sizeof(*key) / sizeof(u32), t->r.seed);
}

/* The "gone" slot of @dev: its own while there is room, else the last. */
static struct wpstat_gone *notrace wpstat_gone_of(struct wpstat_table *t,
						  u32 dev)
{
	int i;

	for (i = 0; i < WPSTAT_GONE_DEVS - 1; i++) {
		if (t->gone[i].dev == dev)
			return &t->gone[i];
		if (!t->gone[i].dev) {
			WRITE_ONCE(t->gone[i].dev, dev);
			return &t->gone[i];
		}
	}
	return &t->gone[WPSTAT_GONE_DEVS - 1];	/* dev 0: other filesystems */
}

/* @a and @b merged as counter @c merges. */
static u64 notrace wpstat_merge(enum wpstat_counter c, u64 a, u64 b)
{
	return wpstat_counters[c].kind == WPK_MAX ? max(a, b) : a + b;
}

/*
 * Add the counts of @e, a row of @dev, to @t's gone totals, and take them
 * out of @e (@take: the row is to be reused).  t->lock held.
 */
static void notrace wpstat_gone_add_locked(struct wpstat_table *t,
					   struct wpstat_entry *e, bool take)
{
	struct wpstat_gone *g = wpstat_gone_of(t, e->key.dev);
	int c;

	for (c = 0; c < WPC_NR; c++) {
		u64 v = take ? atomic64_xchg(&e->count[c], 0) :
			       atomic64_read(&e->count[c]);

		WRITE_ONCE(g->count[c], wpstat_merge(c, g->count[c], v));
	}
	WRITE_ONCE(g->inodes, g->inodes + 1);
}

/* Put @e, just marked gone, on @t's free list, once. */
static void notrace wpstat_free_list_add(struct wpstat_table *t,
					 struct wpstat_entry *e)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&t->lock, flags);
	/* Each row at most once: the list never holds more than max. */
	if (!e->listed) {
		e->listed = 1;
		t->free[t->nr_free++] = e - t->entries;
	}
	raw_spin_unlock_irqrestore(&t->lock, flags);
}

/*
 * Mark @e gone (its inode destroyed): reclaimable, and free to take
 * over; only if it is still in @state, live (its inode's row: not taken
 * over since it was found).
 */
static bool notrace wpstat_entry_mark_gone(struct wpstat_table *t,
					   struct wpstat_entry *e, u32 state)
{
	if (wpstat_row_kind(state) != WPSTAT_ROW_LIVE ||
	    cmpxchg(&e->state, state, state | WPSTAT_ROW_GONE) != state)
		return false;
	atomic_inc(&t->nr_evicted);
	wpstat_free_list_add(t, e);
	return true;
}

/* Take @e's index slot from its key (t->lock held): the key is about to change. */
static void notrace wpstat_unindex(struct wpstat_table *t,
				   struct wpstat_entry *e)
{
	u32 h = wpstat_key_hash(t, &e->key), nr = e - t->entries + 1, i;

	for (i = 0; i < WPSTAT_MAX_PROBE; i++) {
		u32 *slot = &t->r.index[(h + i) & t->r.index_mask];

		if (READ_ONCE(*slot) == nr) {
			WRITE_ONCE(*slot, WPSTAT_INDEX_TOMB);
			WRITE_ONCE(t->tombs, t->tombs + 1);
			return;
		}
	}
	WARN_ON_ONCE(1);	/* every published row has its slot */
}

/*
 * A row of a destroyed inode, given to @key: its counts go to its
 * filesystem's gone totals, as a compaction would fold them, its slot
 * leaves its old key, and its key changes under its state.  It is not
 * in the index yet: wpstat_table_find() puts it in @key's.  NULL if no
 * row is free.
 *
 * So the table never refuses a file while it holds rows of gone ones: a
 * queue that deletes its expired segments and maps a new one at once
 * finds the new one counted from its first event, whether or not a
 * compaction ran in between.  An event counted through a pointer to the
 * row found before its inode was destroyed could land in the new file's
 * counts; no event is in flight for an inode being destroyed but one
 * keyed from a task's record of an earlier write (a throttle), at most
 * one, once.
 */
static struct wpstat_entry *notrace wpstat_table_recycle(struct wpstat_table *t,
							 const struct wpstat_key *key)
{
	struct wpstat_entry *e = NULL;
	unsigned long flags;
	bool kick;

	/* Nothing to take over: no lock for an untracked event. */
	if (!READ_ONCE(t->nr_free))
		return NULL;
	raw_spin_lock_irqsave(&t->lock, flags);
	while (t->nr_free) {
		u32 s, gen, kind;

		e = &t->entries[t->free[--t->nr_free]];
		s = READ_ONCE(e->state);
		gen = s & ~WPSTAT_ROW_KIND;
		kind = wpstat_row_kind(s);
		e->listed = 0;
		/* Revived since it was listed (its inode is back): not free. */
		if ((kind != WPSTAT_ROW_GONE && kind != WPSTAT_ROW_FREE) ||
		    cmpxchg(&e->state, s, gen | WPSTAT_ROW_TAKEN) != s) {
			e = NULL;
			continue;
		}
		/* Taken (a full barrier) before the key or counts change. */
		if (kind == WPSTAT_ROW_GONE) {
			atomic_dec(&t->nr_evicted);
			wpstat_unindex(t, e);
			wpstat_gone_add_locked(t, e, true);
		}
		e->key = *key;
		/* The key before the new state: wpstat_entry_is(). */
		smp_store_release(&e->state,
				  (gen + WPSTAT_ROW_NEXT) | WPSTAT_ROW_LIVE);
		WRITE_ONCE(t->recycled, t->recycled + 1);
		break;
	}
	kick = wpstat_table_tombs_many(t);
	raw_spin_unlock_irqrestore(&t->lock, flags);
	if (kick)
		wpstat_compact_kick(t);
	return e;
}

/*
 * A row taken over for a key that another CPU inserted first: free, with
 * no counts, for the next taker (it is in no index slot).
 */
static void notrace wpstat_table_give_back(struct wpstat_table *t,
					   struct wpstat_entry *e)
{
	u32 s = READ_ONCE(e->state);

	WRITE_ONCE(e->state, (s & ~WPSTAT_ROW_KIND) | WPSTAT_ROW_FREE);
	wpstat_free_list_add(t, e);
}

/*
 * A row for @key: one never used (lock-free), or, the table having none
 * left, one of a gone inode taken over.  @*fresh says which.
 */
static struct wpstat_entry *notrace wpstat_table_take(struct wpstat_table *t,
						      const struct wpstat_key *key,
						      bool *fresh)
{
	int n = atomic_fetch_add_unless(&t->r.nr_reserved, 1, t->r.max);
	struct wpstat_entry *e;

	*fresh = n < t->r.max;
	if (!*fresh)
		return wpstat_table_recycle(t, key);
	e = &t->entries[n];
	e->key = *key;
	return e;
}

/*
 * Find @key (*@state: the row's state when found), or insert it if
 * @insert.  Any context, no allocation; a lock only to take a gone
 * inode's row over.  Every insert claims an empty index slot with
 * cmpxchg, never a slot a taken-over row left (WPSTAT_INDEX_TOMB: a
 * lookup walks past it; a compaction empties them), so two CPUs
 * inserting one key meet at the same slot and one of them finds the
 * other's row.  NULL when absent (!@insert), or when no row is left
 * for a new key or the probe run is exhausted; a compaction is then
 * kicked if it could help.
 */
static struct wpstat_entry *notrace wpstat_table_find(struct wpstat_table *t,
						      const struct wpstat_key *key,
						      bool insert, u32 *state)
{
	u32 h = wpstat_key_hash(t, key), i;
	struct wpstat_entry *mine = NULL;
	bool fresh = false;

	for (i = 0; i < WPSTAT_MAX_PROBE; i++) {
		u32 *slot = &t->r.index[(h + i) & t->r.index_mask];
		/* Pairs with cmpxchg() below: see the key before using it. */
		u32 cur = smp_load_acquire(slot);

		if (!cur) {
			if (!insert)
				return NULL;
			if (!mine) {
				mine = wpstat_table_take(t, key, &fresh);
				if (!mine)
					break;
			}
			/* Full barrier: the key is visible before the slot. */
			cur = cmpxchg(slot, 0, (u32)(mine - t->entries) + 1);
			if (!cur) {
				if (fresh) {
					/* Readers of valid rows see key and counts. */
					smp_store_release(&mine->valid, 1);
					atomic_inc(&t->nr_tracked);
				}
				*state = READ_ONCE(mine->state);
				if (t->r.max - atomic_read(&t->r.nr_reserved) <
				    t->r.max / 8 + 1)
					wpstat_compact_kick(t);
				return mine;
			}
		}
		if (cur != WPSTAT_INDEX_TOMB &&
		    wpstat_entry_is(&t->entries[cur - 1], key, state)) {
			/*
			 * Lost a race to insert the same key: a reserved row
			 * stays unpublished (valid 0) until the next
			 * compaction reclaims it; a taken-over one is free
			 * for the next taker.
			 */
			if (mine && fresh)
				wpstat_compact_kick(t);
			else if (mine)
				wpstat_table_give_back(t, mine);
			return &t->entries[cur - 1];
		}
	}
	if (mine && !fresh)
		wpstat_table_give_back(t, mine);
	if (insert)
		wpstat_compact_kick(t);
	return NULL;
}

/*
 * Process context (stall-table compaction): whether @key's inode is
 * gone: its row marked so, or no longer in the table (a compaction
 * folded it into the gone totals, or another inode took the row over; a
 * row that never found room reads the same).  A row in the table a
 * compaction is moving from counts too.
 */
bool wpstat_inode_gone(const struct wpstat_key *key)
{
	struct wpstat_table *t, *old;
	struct wpstat_entry *e;
	bool gone = true;
	u32 s;

	rcu_read_lock();
	t = rcu_dereference(wpstat_table);
	old = rcu_dereference(wpstat_table_moving);
	e = t ? wpstat_table_find(t, key, false, &s) : NULL;
	if (!e && old && old != t)
		e = wpstat_table_find(old, key, false, &s);
	if (e)
		gone = wpstat_row_kind(s) != WPSTAT_ROW_LIVE;
	rcu_read_unlock();
	return gone;
}

/*
 * An event for @e's inode, whose row was found gone in @state: its inode
 * is back (read in again).  False if the row is no longer its: another
 * inode took it over since.
 */
static bool notrace wpstat_revive(struct wpstat_table *t,
				  struct wpstat_entry *e, u32 state)
{
	u32 live = (state & ~WPSTAT_ROW_KIND) | WPSTAT_ROW_LIVE;
	u32 old = cmpxchg(&e->state, state, live);

	if (old != state)		/* revived by another CPU, or taken */
		return old == live;
	atomic_dec(&t->nr_evicted);
	return true;
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
	u32 s;

	if (unlikely(!t))
		return r;
	e = wpstat_table_find(t, key, true, &s);
	/* Taken over since it was found: find or make @key's row anew. */
	if (e && unlikely(wpstat_row_kind(s) != WPSTAT_ROW_LIVE) &&
	    !wpstat_revive(t, e, s))
		e = wpstat_table_find(t, key, true, &s);
	if (unlikely(!e)) {
		this_cpu_inc(t->sums->untracked_events);
		return r;
	}
	WRITE_ONCE(last->table, t);
	WRITE_ONCE(last->idx, (u32)(e - t->entries));
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
	u32 s;

	if (!t)
		return;
	/*
	 * A compaction is moving rows: mark the old row first, then look in
	 * the new table.  The mover publishes the new row, then reads the
	 * old row's mark (wpstat_move_row()): with a full barrier on each
	 * side, one of the two sees the other's write.
	 */
	if (old && old != t) {
		e = wpstat_table_find(old, key, false, &s);
		if (e)
			wpstat_entry_mark_gone(old, e, s);
		/* Mark before look: pairs with wpstat_move_row()'s. */
		smp_mb();
	}
	e = wpstat_table_find(t, key, false, &s);
	if (!e || !wpstat_entry_mark_gone(t, e, s))
		return;
	/*
	 * Fold early once a quarter of a half-full table is gone (a build, a
	 * log rotation, a wave of temporary files): the rows of gone files
	 * leave /proc/wpstat/inodes for their filesystem's gone totals.  New
	 * files need not wait for it: they take gone rows over.
	 */
	if (atomic_read(&t->nr_evicted) >= t->r.max / 4 &&
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

/* Fold @e's counts into the gone totals of its filesystem in @t. */
static void wpstat_fold_gone(struct wpstat_table *t, struct wpstat_entry *e)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&t->lock, flags);
	wpstat_gone_add_locked(t, e, false);
	raw_spin_unlock_irqrestore(&t->lock, flags);
}

/* Move every count of @e into its row in @t (or untracked, if none fits). */
static void wpstat_move_row(struct wpstat_table *t, struct wpstat_entry *to,
			    const struct wpstat_entry *e)
{
	u32 s;
	int c;

	if (!to)
		to = wpstat_table_find(t, &e->key, true, &s);
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
	if (to && wpstat_row_kind(READ_ONCE(e->state)) != WPSTAT_ROW_LIVE)
		wpstat_entry_mark_gone(t, to, READ_ONCE(to->state));
}

/*
 * Add to @new's gone totals what @old's gained since @snap was taken of
 * them: rows @old's inserts took over between the copy and the swap.
 */
static void wpstat_gone_merge(struct wpstat_table *new,
			      const struct wpstat_table *old,
			      const struct wpstat_gone *snap)
{
	unsigned long flags;
	int i, c;

	raw_spin_lock_irqsave(&new->lock, flags);
	for (i = 0; i < WPSTAT_GONE_DEVS; i++) {
		const struct wpstat_gone *o = &old->gone[i];
		struct wpstat_gone *g;

		if (o->inodes == snap[i].inodes)
			continue;
		g = wpstat_gone_of(new, o->dev);
		for (c = 0; c < WPC_NR; c++)
			WRITE_ONCE(g->count[c],
				   wpstat_counters[c].kind == WPK_MAX ?
				   max(g->count[c], o->count[c]) :
				   g->count[c] + o->count[c] - snap[i].count[c]);
		WRITE_ONCE(g->inodes, g->inodes + o->inodes - snap[i].inodes);
	}
	raw_spin_unlock_irqrestore(&new->lock, flags);
}

/* @e's key if it is a live row, read whole (its state in *@state). */
static bool wpstat_live_key(const struct wpstat_entry *e,
			    struct wpstat_key *key, u32 *state)
{
	/* Pairs with the release in wpstat_table_find(). */
	if (!smp_load_acquire(&e->valid))
		return false;
	/* Pairs with the release in wpstat_table_recycle(). */
	*state = smp_load_acquire(&e->state);
	*key = e->key;
	/* The key is read before the state is read again. */
	smp_rmb();
	return wpstat_row_kind(*state) == WPSTAT_ROW_LIVE &&
	       READ_ONCE(e->state) == *state;
}

/*
 * Rebuild the table without the rows of destroyed inodes (folded into the
 * gone totals), and its index without the slots of rows taken over.
 * While the new table is built, events still land in the old one; after
 * the swap and a grace period the old table is final, and every count in
 * it that the new one lacks is added there.  A row the old table gave to
 * another inode in between is moved by its new key (its seq changed), and
 * the row the first pass made for the old key is marked gone.  Readers
 * wait on the mutex, so no reader sees a row between the swap and the
 * transfer; the summary reads the sums, which the new table shares with
 * the old.
 */
int wpstat_compact(void)
{
	struct wpstat_table *old, *new;
	u64 cpu0 = wpstat_task_cpu_ns(), recycled0;
	struct wpstat_gone *snap = NULL;
	u32 i, n, n0, s, *map = NULL;
	struct wpstat_entry *to;
	unsigned long flags;
	struct wpstat_key key;
	int ret = 0;

	mutex_lock(&wpstat_table_mutex);
	old = rcu_dereference_protected(wpstat_table,
					lockdep_is_held(&wpstat_table_mutex));
	if (!old || !wpstat_compact_worthwhile(old))
		goto out;
	new = wpstat_table_alloc(old->r.max, old);
	n0 = min_t(u32, atomic_read(&old->r.nr_reserved), old->r.max);
	/* map[i]: row + 1 in @new (0: none); map[n0 + i]: its state then. */
	map = kvcalloc(2 * max_t(u32, n0, 1), sizeof(*map), GFP_KERNEL);
	snap = kcalloc(WPSTAT_GONE_DEVS, sizeof(*snap), GFP_KERNEL);
	if (!new || !map || !snap) {
		wpstat_table_put(new);
		ret = -ENOMEM;
		goto paced;
	}
	/* The live rows, by key; the counts come after the swap. */
	for (i = 0; i < n0; i++) {
		if (!wpstat_live_key(&old->entries[i], &key, &map[n0 + i]))
			continue;
		to = wpstat_table_find(new, &key, true, &s);
		map[i] = to ? to - new->entries + 1 : 0;
	}
	raw_spin_lock_irqsave(&old->lock, flags);
	memcpy(new->gone, old->gone, WPSTAT_GONE_DEVS * sizeof(*new->gone));
	memcpy(snap, old->gone, WPSTAT_GONE_DEVS * sizeof(*snap));
	recycled0 = old->recycled;
	raw_spin_unlock_irqrestore(&old->lock, flags);
	new->recycled = recycled0;
	new->compactions = old->compactions + 1;
	new->reset_gen = old->reset_gen;

	rcu_assign_pointer(wpstat_table_moving, old);
	wpstat_table_swap(new);

	/* The old table is final: move what the new one does not have. */
	wpstat_gone_merge(new, old, snap);
	raw_spin_lock_irqsave(&new->lock, flags);
	WRITE_ONCE(new->recycled, new->recycled + old->recycled - recycled0);
	raw_spin_unlock_irqrestore(&new->lock, flags);
	n = min_t(u32, atomic_read(&old->r.nr_reserved), old->r.max);
	for (i = 0; i < n; i++) {
		struct wpstat_entry *e = &old->entries[i];
		bool mapped = i < n0 && map[i];

		/* Pairs with the release in wpstat_table_find(). */
		if (!smp_load_acquire(&e->valid))
			continue;
		s = READ_ONCE(e->state);
		if (mapped && (s & ~WPSTAT_ROW_KIND) !=
			      (map[n0 + i] & ~WPSTAT_ROW_KIND)) {
			/* Taken over since the first pass: its inode is gone. */
			to = &new->entries[map[i] - 1];
			wpstat_entry_mark_gone(new, to, READ_ONCE(to->state));
			mapped = false;
		}
		/* Given back after a take-over: no file's, no counts. */
		if (wpstat_row_kind(s) == WPSTAT_ROW_FREE)
			continue;
		if (!mapped && wpstat_row_kind(s) != WPSTAT_ROW_LIVE)
			wpstat_fold_gone(new, e);
		else
			wpstat_move_row(new, mapped ?
					&new->entries[map[i] - 1] : NULL, e);
		cond_resched();
	}
	RCU_INIT_POINTER(wpstat_table_moving, NULL);
	synchronize_rcu();	/* no wpstat_mark_gone() still in @old */
	wpstat_table_put(old);
paced:
	kfree(snap);
	kvfree(map);
	wpstat_compact_paced(&wpstat_compact_pace, cpu0,
			     WPSTAT_COMPACT_INTERVAL);
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
				   wpstat_compact_delay(&wpstat_compact_pace));
}

size_t wpstat_table_bytes(size_t *cpu)
{
	size_t per = sizeof(struct wpstat_sums) +
		     sizeof(struct wpstat_probe_stats) +
		     sizeof(struct wpstat_last);

	*cpu += per;
	return sizeof(struct wpstat_table) +
	       wpstat_rows_mem(wpstat_max_inodes, sizeof(struct wpstat_entry)) +
	       (size_t)wpstat_max_inodes * sizeof(u32) +	/* free list */
	       WPSTAT_GONE_DEVS * sizeof(struct wpstat_gone) +
	       per * num_possible_cpus();
}

/*
 * What wpstat_cause_wait() takes from the .defs, checked at build time
 * (the tables are constants here, so each condition folds): a cause's
 * stall fields are its events, an NS sum and the MAX after it, whose
 * like counters are of the same kinds and read "-" together; a wait
 * cause's NS field mirrors its time counter, a SUM.  Returns 0.
 */
static __always_inline int wpstat_cause_check(enum wpstat_cause cause)
{
	const struct wpstat_cause_info *ci = &wpstat_causes[cause];
	const struct wpstat_stall_field_info *ns = &wpstat_stall_fields[ci->stall_ns];
	const struct wpstat_stall_field_info *max = ns + 1;
	const struct wpstat_counter_info *ns_c = &wpstat_counters[ns->like];
	const struct wpstat_counter_info *max_c = &wpstat_counters[max->like];

	BUILD_BUG_ON_MSG(ns->max || ns->events || !max->max,
			 "a cause's stall fields are not its NS, then its MAX");
	BUILD_BUG_ON_MSG(ns_c->kind != WPK_SUM || max_c->kind != WPK_MAX,
			 "a cause's NS or MAX field's like counter is not of its kind");
	BUILD_BUG_ON_MSG(max_c->needs != ns_c->needs || max_c->level != ns_c->level,
			 "a cause's MAX field's like counter is made from other points than its NS field's");
	if (!ci->wait)
		return 0;
	BUILD_BUG_ON_MSG(ns->like != ci->time,
			 "a wait cause's NS field's like counter is not its time");
	BUILD_BUG_ON_MSG(!wpstat_stall_fields[ci->stall_events].events ||
			 wpstat_counters[wpstat_stall_fields[ci->stall_events].like].kind != WPK_SUM,
			 "a wait cause's events field or its like counter does not count events");
	return 0;
}

int wpstat_table_init(void)
{
	int causes_checked[] __maybe_unused = {
#define WPSTAT_STALL(...)
#define WPSTAT_STALL_CAUSE(id, ...) wpstat_cause_check(WPCA_##id),
#include "wpstat_stalls.def"
#undef WPSTAT_STALL_CAUSE
#undef WPSTAT_STALL
	};
	struct wpstat_table *t;
	int hist_err;

	init_irq_work(&wpstat_compact_iw, wpstat_compact_irq_work);
	INIT_DELAYED_WORK(&wpstat_compact_work, wpstat_compact_workfn);
	wpstat_compact_pace.next = jiffies;
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
