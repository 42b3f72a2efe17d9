// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_table.c - the per-inode table and the per-CPU statistics.
 *
 * Probe handlers find or insert an inode's entry lock-free and add to its
 * atomic counters; readers pin a table with a reference; "reset" swaps in
 * a fresh table under RCU.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jhash.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "wpstat.h"

#define WPSTAT_MAX_INODES_LIMIT	(1U << 22)
/* Longest linear-probe run; the index is at most half full. */
#define WPSTAT_MAX_PROBE	64

unsigned int wpstat_max_inodes = 65536;
struct wpstat_table __rcu *wpstat_table;
static DEFINE_MUTEX(wpstat_table_mutex);	/* serialises table swaps */
DEFINE_PER_CPU(struct wpstat_stats, wpstat_stats);

#define WPN(p) BIT(WPP_##p)
#define WPSTAT_COUNTER(id, nm, need, lvl, hlp)				\
	[WPC_##id] = { .name = #nm, .help = hlp, .needs = need,		\
		       .level = WPL_##lvl },
const struct wpstat_counter_info wpstat_counters[WPC_NR] = {
#include "wpstat_counters.def"
};
#undef WPSTAT_COUNTER
#undef WPN

static int max_inodes_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int ret = kstrtouint(val, 0, &n);

	if (ret)
		return ret;
	if (n < 1 || n > WPSTAT_MAX_INODES_LIMIT) {
		pr_err("max_inodes must be between 1 and %u\n",
		       WPSTAT_MAX_INODES_LIMIT);
		return -EINVAL;
	}
	wpstat_max_inodes = n;
	return 0;
}

static const struct kernel_param_ops max_inodes_ops = {
	.set = max_inodes_set,
	.get = param_get_uint,
};

/* Fixed at load: the table is preallocated to this size. */
module_param_cb(max_inodes, &max_inodes_ops, &wpstat_max_inodes, 0444);
MODULE_PARM_DESC(max_inodes, "Inodes tracked individually (1..4194304, default 65536)");

/* Bytes of preallocated memory per tracked inode (entry + two index slots). */
size_t wpstat_entry_bytes(void)
{
	return sizeof(struct wpstat_entry) + 2 * sizeof(u32);
}

static void wpstat_table_release(struct kref *ref)
{
	struct wpstat_table *t = container_of(ref, struct wpstat_table, ref);

	vfree(t->entries);
	vfree(t->index);
	kfree(t);
}

/* Process context only: the last put frees the table. */
void wpstat_table_put(struct wpstat_table *t)
{
	if (t)
		kref_put(&t->ref, wpstat_table_release);
}

static struct wpstat_table *wpstat_table_alloc(u32 max_entries)
{
	struct wpstat_table *t;
	u32 index_size = roundup_pow_of_two(2 * max_entries);

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return NULL;
	kref_init(&t->ref);
	t->max_entries = max_entries;
	t->index_mask = index_size - 1;
	t->index = vzalloc(array_size(index_size, sizeof(u32)));
	t->entries = vzalloc(array_size(max_entries, sizeof(struct wpstat_entry)));
	if (!t->index || !t->entries) {
		wpstat_table_put(t);
		return NULL;
	}
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
		kref_get(&t->ref);
	mutex_unlock(&wpstat_table_mutex);
	return t;
}

/* Published entries of @t. */
u32 wpstat_table_tracked(struct wpstat_table *t)
{
	u32 tracked = 0, i, n;

	n = t ? min_t(u32, atomic_read(&t->nr_reserved), t->max_entries) : 0;
	for (i = 0; i < n; i++)	/* pairs with wpstat_table_find() */
		tracked += smp_load_acquire(&t->entries[i].valid);
	return tracked;
}

static bool wpstat_key_equal(const struct wpstat_key *a,
			     const struct wpstat_key *b)
{
	return a->ino == b->ino && a->dev == b->dev && a->gen == b->gen;
}

/*
 * Find or insert @key.  Safe in any context: no locks, no allocation.
 * Returns NULL when the table is full or the probe run is exhausted; the
 * caller then counts the event as untracked.
 */
static struct wpstat_entry *wpstat_table_find(struct wpstat_table *t,
					      const struct wpstat_key *key)
{
	struct wpstat_entry *mine = NULL;
	u32 h = jhash2((const u32 *)key, sizeof(*key) / sizeof(u32), 0);
	u32 i, slot_nr;

	for (i = 0; i < WPSTAT_MAX_PROBE; i++) {
		u32 *slot = &t->index[(h + i) & t->index_mask];
		/* Pairs with cmpxchg() below: see the key before using it. */
		u32 cur = smp_load_acquire(slot);

		if (!cur) {
			if (!mine) {
				int n = atomic_fetch_add_unless(&t->nr_reserved,
								1, t->max_entries);

				if (n >= t->max_entries)
					return NULL;
				mine = &t->entries[n];
				mine->key = *key;
			}
			slot_nr = mine - t->entries + 1;
			/* Full barrier: the key is visible before the slot. */
			cur = cmpxchg(slot, 0, slot_nr);
			if (!cur) {
				/* Readers of valid entries see key and counters. */
				smp_store_release(&mine->valid, 1);
				return mine;
			}
		}
		if (wpstat_key_equal(&t->entries[cur - 1].key, key)) {
			/*
			 * Lost a race to insert the same key: our reserved
			 * entry stays unpublished (valid == 0), one slot of
			 * the bound wasted until the next reset.
			 */
			return &t->entries[cur - 1];
		}
	}
	return NULL;
}

void wpstat_add(struct wpstat_entry *e, enum wpstat_counter c, u64 delta)
{
	if (e)
		atomic64_add(delta, &e->count[c]);
	this_cpu_add(wpstat_stats.total[c], delta);
}

/*
 * The entry each CPU found last: a writer streams events for one inode, so
 * most lookups skip the hash.  Only probe handlers use it, with preemption
 * disabled; one nested in another (an interrupt) may overwrite the pair
 * half-way, so a hit is trusted only after checking it against the
 * current table: index in range, published, same key.  Never dereferenced
 * for another table, so a stale pair is harmless after a reset.
 */
struct wpstat_last {
	struct wpstat_table *table;
	u32 idx;			/* into table->entries */
};
static DEFINE_PER_CPU(struct wpstat_last, wpstat_last);

/*
 * Called from probe handlers, which run with preemption disabled: an RCU
 * read-side section that the synchronize_rcu() of a reset waits for.
 * A NULL result is counted as untracked.
 */
struct wpstat_entry *wpstat_lookup(const struct wpstat_key *key)
{
	struct wpstat_table *t = rcu_dereference_sched(wpstat_table);
	struct wpstat_entry *e;
	u32 idx;

	if (unlikely(!t))
		goto untracked;
	idx = this_cpu_read(wpstat_last.idx);
	if (this_cpu_read(wpstat_last.table) == t && idx < t->max_entries) {
		e = &t->entries[idx];
		/* Pairs with the release in wpstat_table_find(). */
		if (smp_load_acquire(&e->valid) && wpstat_key_equal(&e->key, key))
			return e;
	}
	e = wpstat_table_find(t, key);
	if (unlikely(!e))
		goto untracked;
	this_cpu_write(wpstat_last.table, t);
	this_cpu_write(wpstat_last.idx, (u32)(e - t->entries));
	return e;
untracked:
	this_cpu_inc(wpstat_stats.untracked);
	return NULL;
}

void wpstat_count(const struct wpstat_key *key, enum wpstat_counter c,
		  u64 delta)
{
	wpstat_add(wpstat_lookup(key), c, delta);
}

void wpstat_hist_add(enum wpstat_hist_id h, u64 ns)
{
	unsigned int b = ns ? fls64(ns) - 1 : 0;

	if (!IS_ENABLED(CONFIG_WPSTAT_HISTOGRAMS))
		return;
	this_cpu_inc(wpstat_stats.hist[h][b]);
}

/* The sum over CPUs of the u64 at @offset in struct wpstat_stats. */
u64 wpstat_stat_sum(size_t offset)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += *(u64 *)((char *)per_cpu_ptr(&wpstat_stats, cpu) + offset);
	return sum;
}

/*
 * Start counting from zero.  A fresh table is swapped in and the old one
 * released after a grace period, so probes never see freed memory; readers
 * still holding it finish on it.  Events racing with the reset may land on
 * either side of it.
 */
int wpstat_reset(void)
{
	struct wpstat_table *new, *old;
	int cpu;

	new = wpstat_table_alloc(wpstat_max_inodes);
	if (!new)
		return -ENOMEM;

	mutex_lock(&wpstat_table_mutex);
	old = rcu_replace_pointer(wpstat_table, new,
				  lockdep_is_held(&wpstat_table_mutex));
	for_each_possible_cpu(cpu) {
		struct wpstat_stats *s = per_cpu_ptr(&wpstat_stats, cpu);

		memset(s->total, 0, sizeof(s->total));
		memset(s->hist, 0, sizeof(s->hist));
		WRITE_ONCE(s->untracked, 0);
	}
	mutex_unlock(&wpstat_table_mutex);

	synchronize_rcu();
	wpstat_table_put(old);
	return 0;
}

int wpstat_table_init(void)
{
	struct wpstat_table *t;

	t = wpstat_table_alloc(wpstat_max_inodes);
	if (!t) {
		pr_err("cannot allocate a table for %u inodes\n",
		       wpstat_max_inodes);
		return -ENOMEM;
	}
	rcu_assign_pointer(wpstat_table, t);
	return 0;
}

/* After every handler is gone (wpstat_attach_exit()). */
void wpstat_table_exit(void)
{
	struct wpstat_table *t = rcu_dereference_protected(wpstat_table, 1);

	RCU_INIT_POINTER(wpstat_table, NULL);
	synchronize_rcu();
	wpstat_table_put(t);
}
