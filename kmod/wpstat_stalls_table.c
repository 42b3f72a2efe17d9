// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_stalls_table.c - the stall table itself: its preallocated rows
 * and their lock-free insert, recycling (compaction), reset and summary.
 * wpstat_stalls.c counts events into it.
 *
 * The table is preallocated (max_stalls rows) and keeps what is live and
 * recent: compaction (process context, kicked when the table runs short
 * of room) rebuilds it with the rows of live processes on live files as
 * they are; a row whose file is gone (its inode destroyed: deleted,
 * evicted, unmounted) goes to its device's row (ino 0, tgid 0), and one
 * of an exited process to its file's "exited" row (tgid 0).  If those
 * leave less than half the table free, the oldest exited rows (by their
 * latest event) go to their device's row too, and an event that finds
 * the table full before the next compaction goes to its device's row.
 * The last rows (WPSTAT_STALLS_DEV_RESERVE) are kept for device rows, so
 * that such an event finds one however fast the table filled: the rows
 * of a file, its device's rows among them, still add up to the inode
 * counters, and a new process x file pair finds a row as long as the
 * live pairs fit.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cgroup.h>
#include <linux/jhash.h>
#include <linux/kdev_t.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/irq_work.h>
#include <linux/pid.h>
#include <linux/proc_fs.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/workqueue.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "wpstat.h"
#include "wpstat_compat.h"

#define WPSTAT_STALLS_LIMIT	(1U << 20)
#define WPSTAT_STALL_PROBE	32
/* Kick a compaction once this full, if a process or an inode died since. */
#define WPSTAT_STALLS_DEATH_FILL(max)	((max) / 4)
/*
 * Rows only device rows (ino 0, tgid 0) may take: one per 64, 1 to 64 of
 * them (none in a table of one row), for as many devices written at once.
 */
#define WPSTAT_STALLS_DEV_RESERVE(max)	\
	((max) > 1 ? clamp_t(u32, (max) / 64, 1, 64) : 0)

unsigned int wpstat_max_stalls = 4096;
struct wpstat_stalls __rcu *wpstat_stalls;
static DEFINE_MUTEX(wpstat_stalls_mutex);	/* serialises swaps and pins */

static struct wpstat_rows_param max_stalls_param = {
	.val = &wpstat_max_stalls,
	.limit = WPSTAT_STALLS_LIMIT,
};
/* Fixed at load: the table is preallocated to this size. */
module_param_cb(max_stalls, &wpstat_rows_param_ops, &max_stalls_param, 0444);
MODULE_PARM_DESC(max_stalls, "Process x file rows of /proc/wpstat/stalls (1..1048576, default 4096)");

static void wpstat_stalls_release(struct wpstat_rows *r)
{
	kfree(container_of(r, struct wpstat_stalls, r));
}

void wpstat_stalls_put(struct wpstat_stalls *s)
{
	if (s)
		wpstat_rows_put(&s->r);
}

/* An empty table; compaction's (@gfp_extra __GFP_NORETRY) may give up. */
static struct wpstat_stalls *wpstat_stalls_alloc(u32 max_rows, gfp_t gfp_extra)
{
	struct wpstat_stalls *s = kzalloc(sizeof(*s), GFP_KERNEL);

	if (!s)
		return NULL;
	if (wpstat_rows_init(&s->r, max_rows, sizeof(struct wpstat_stall),
			     offsetof(struct wpstat_stall, valid), gfp_extra,
			     wpstat_stalls_release)) {
		wpstat_stalls_put(s);
		return NULL;
	}
	s->rows = s->r.mem;
	return s;
}

/* A reference to the current table, for a reader that may sleep. */
struct wpstat_stalls *wpstat_stalls_pin(void)
{
	struct wpstat_stalls *s;

	mutex_lock(&wpstat_stalls_mutex);
	s = rcu_dereference_protected(wpstat_stalls,
				      lockdep_is_held(&wpstat_stalls_mutex));
	if (s)
		kref_get(&s->r.ref);
	mutex_unlock(&wpstat_stalls_mutex);
	return s;
}

/* ---- the rows and their insert ---------------------------------------------- */

static void wpstat_stalls_kick(void);
static bool wpstat_stalls_deaths_new(void);

/*
 * Who the row's process is, recorded once per row: the current task's,
 * or for compaction (a kworker) the old row's @from.
 */
static void notrace stall_row_fill(struct wpstat_stall *r,
				   const struct wpstat_stall_key *key,
				   const struct wpstat_stall *from)
{
	struct task_struct *leader = current->group_leader;

	r->key = *key;
	r->last = from ? READ_ONCE(from->last) : jiffies;
	if (!key->tgid) {		/* compaction's exited or device row */
		strscpy(r->comm, key->ino ? "(exited)" : "(device)",
			TASK_COMM_LEN);
		r->cgroup = 0;
		return;
	}
	if (from) {
		memcpy(r->comm, from->comm, TASK_COMM_LEN);
		r->cgroup = from->cgroup;
		return;
	}
	/* As trace events copy comm: no lock, a racing rename is harmless. */
	memcpy(r->comm, leader->comm, TASK_COMM_LEN);
	r->comm[TASK_COMM_LEN - 1] = '\0';
#ifdef CONFIG_CGROUPS
	rcu_read_lock();
	r->cgroup = cgroup_id(task_dfl_cgroup(current));
	rcu_read_unlock();
#endif
}

/*
 * A row to fill for @key, or -1: a device row may take any row, other
 * keys all but the device rows' reserve.
 */
static __always_inline int stall_row_take(struct wpstat_stalls *s,
					  const struct wpstat_stall_key *key)
{
	u32 limit = s->r.max;
	int n = atomic_read(&s->r.nr_reserved);

	if (key->ino || key->tgid)
		limit -= WPSTAT_STALLS_DEV_RESERVE(s->r.max);
	do {
		if (n >= limit)
			return -1;
	} while (!atomic_try_cmpxchg(&s->r.nr_reserved, &n, n + 1));
	return n;
}

/*
 * The row of @key, inserted if new and @insert (as @from's process, if
 * not NULL, else as the current task's).  Lock-free and
 * allocation-free, as wpstat_table_find(); NULL when absent or the table
 * is full (a compaction is then kicked).  A row reserved by an insert
 * that lost a race to the same key stays unpublished until a compaction
 * or a reset.
 */
struct wpstat_stall *notrace wpstat_stall_find_key(struct wpstat_stalls *s,
						   const struct wpstat_stall_key *key,
						   bool insert,
						   const struct wpstat_stall *from)
{
	u32 h = jhash2((const u32 *)key, sizeof(*key) / sizeof(u32), s->r.seed);
	struct wpstat_stall *mine = NULL;
	u32 i;

	for (i = 0; i < WPSTAT_STALL_PROBE; i++) {
		u32 *slot = &s->r.index[(h + i) & s->r.index_mask];
		/* Pairs with cmpxchg() below: see the key before using it. */
		u32 cur = smp_load_acquire(slot);

		if (!cur) {
			if (!insert)
				return NULL;
			if (!mine) {
				int n = stall_row_take(s, key);

				if (n < 0)
					break;
				mine = &s->rows[n];
				stall_row_fill(mine, key, from);
			}
			/* Full barrier: the key is visible before the slot. */
			cur = cmpxchg(slot, 0, (u32)(mine - s->rows) + 1);
			if (!cur) {
				u32 used = atomic_read(&s->r.nr_reserved) +
					WPSTAT_STALLS_DEV_RESERVE(s->r.max);

				/* Readers of valid rows see key and counts. */
				smp_store_release(&mine->valid, 1);
				atomic_inc(&s->nr_rows);
				if (!key->ino && !key->tgid)
					WRITE_ONCE(s->dev_rows, true);
				/*
				 * An eighth left (the reserve counted as
				 * used): recycle before it is full; a quarter
				 * full: as soon as something died.
				 */
				if (s->r.max < used + s->r.max / 8 + 1 ||
				    (used >= WPSTAT_STALLS_DEATH_FILL(s->r.max) &&
				     wpstat_stalls_deaths_new()))
					wpstat_stalls_kick();
				return mine;
			}
		}
		if (wpstat_stall_key_equal(&s->rows[cur - 1].key, key))
			return &s->rows[cur - 1];
	}
	if (insert)
		wpstat_stalls_kick();
	return NULL;
}

/* ---- recycling: rows of exited processes and of gone files ---------------- */

static unsigned long wpstat_stalls_pending;	/* wpstat_compact_request() */
static struct delayed_work wpstat_stalls_work;
static struct irq_work wpstat_stalls_iw;

/*
 * Whether a process exited or an inode was destroyed since the last
 * compaction looked: with none, a table of live rows has nothing to give
 * back, and is not scanned again.  A flag, read before it is written:
 * exits and inode destructions happen on every CPU all the time, and
 * once it is set they only read it.
 */
static bool wpstat_stalls_death;

/* Any context: a process exited or an inode was destroyed. */
void notrace wpstat_stalls_note_death(void)
{
	/*
	 * The death (an exit, a marked row) before the flag is read: pairs
	 * with the compaction's clear before its scan, so that a death
	 * either sets the flag again or is seen by the scan.
	 */
	smp_mb();
	if (!READ_ONCE(wpstat_stalls_death))
		WRITE_ONCE(wpstat_stalls_death, true);
}

static bool notrace wpstat_stalls_deaths_new(void)
{
	return READ_ONCE(wpstat_stalls_death);
}

/*
 * The shortest interval between two compactions: each scans every row
 * (a pid and an inode lookup each), so about a second for the largest
 * table, a few jiffies for the default, and at least one.
 */
static unsigned long wpstat_stalls_interval(u32 max_rows)
{
	return clamp_t(unsigned long, (u64)max_rows * HZ / WPSTAT_STALLS_LIMIT,
		       1, HZ);
}

/*
 * Runs since load, their CPU time, and the earliest the next may start
 * (WPSTAT_COMPACT_DUTY).  A scan that finds nothing to move (more live
 * pairs than rows, while processes exit all the time) is not repeated
 * for a second: until then a new pair's events go to its device's row,
 * as with any full table.
 */
static struct wpstat_compact_pace wpstat_stalls_pace;
#define WPSTAT_STALLS_IDLE_INTERVAL	HZ

/* Any context: queue a compaction. */
static void notrace wpstat_stalls_kick(void)
{
	if (wpstat_compact_request(&wpstat_stalls_pending))
		irq_work_queue(&wpstat_stalls_iw);
}

static void wpstat_stalls_irq_work(struct irq_work *iw)
{
	queue_delayed_work(wpstat_unbound_wq, &wpstat_stalls_work,
			   wpstat_compact_delay(&wpstat_stalls_pace));
}

/* Whether the process of @k is alive: its tgid, with the same leader. */
static bool stall_process_alive(const struct wpstat_stall_key *k)
{
	struct task_struct *t;
	bool alive;

	rcu_read_lock();
	t = pid_task(find_pid_ns(k->tgid, &init_pid_ns), PIDTYPE_TGID);
	alive = t && t->group_leader->start_time == k->start;
	rcu_read_unlock();
	return alive;
}

/* Whether the file of @k is gone (its inode destroyed), as the inode table says. */
static bool stall_file_gone(const struct wpstat_stall_key *k)
{
	struct wpstat_key ik = {
		.ino = k->ino, .dev = k->dev, .gen = k->gen, .sb = k->sb,
	};

	return wpstat_inode_gone(&ik);
}

/* The device row of @k's device: what is left of its gone files. */
static struct wpstat_stall_key stall_dev_key(const struct wpstat_stall_key *k)
{
	return (struct wpstat_stall_key){ .dev = k->dev };
}

/*
 * Where a row goes: itself while its process lives and its file does;
 * its device's row once its file is gone; else its file's exited row.
 * A device row stays.
 */
static struct wpstat_stall_key stall_target(const struct wpstat_stall_key *k)
{
	struct wpstat_stall_key t = *k;

	if (!k->ino)
		return t;
	if (stall_file_gone(k))
		return stall_dev_key(k);
	if (k->tgid && !stall_process_alive(k)) {
		t.tgid = 0;
		t.start = 0;
	}
	return t;
}

/* Add @from's counts to @to: sums add, maxima merge; the latest event. */
static void stall_move_counts(struct wpstat_stall *to,
			      const struct wpstat_stall *from)
{
	unsigned long last = READ_ONCE(from->last);
	int f;

	for (f = 0; f < WPS_NR; f++) {
		u64 v = atomic64_read(&from->count[f]);

		if (wpstat_stall_fields[f].max)
			wpstat_atomic_max(&to->count[f], v);
		else if (v)
			atomic64_add(v, &to->count[f]);
	}
	if (time_after(last, READ_ONCE(to->last)))
		WRITE_ONCE(to->last, last);
}

/* The events a row counted (its event fields and PTEs, not its times). */
static u64 stall_events(const struct wpstat_stall *r)
{
	u64 n = 0;
	int f;

	for (f = 0; f < WPS_NR; f++)
		if (wpstat_stall_fields[f].events)
			n += atomic64_read(&r->count[f]);
	return n;
}

/*
 * Whether a rebuild would move any row of @s, scanning from the start
 * and stopping at the first; with no death since the last compaction
 * saw them, none can move.
 */
static bool stall_anything_to_move(struct wpstat_stalls *s, u32 n)
{
	struct wpstat_stall_key k;
	u32 i;

	for (i = 0; i < n; i++) {
		struct wpstat_stall *r = &s->rows[i];

		/* Pairs with the release in wpstat_stall_find_key(). */
		if (!smp_load_acquire(&r->valid))
			continue;
		k = stall_target(&r->key);
		if (!wpstat_stall_key_equal(&k, &r->key))
			return true;
		if (!(i % 256))
			cond_resched();
	}
	return false;
}

/* For the oldest-first fold: an exited row of the first pass, and its age. */
struct stall_age {
	unsigned long last;
	u32 row;
};

static int stall_age_cmp(const void *a, const void *b)
{
	const struct stall_age *x = a, *y = b;

	if (x->last == y->last)
		return 0;
	return time_before(x->last, y->last) ? -1 : 1;
}

/* A row of @from going to @to: an exited process's, or a gone file's. */
static void stall_count_fold(const struct wpstat_stall_key *from,
			     const struct wpstat_stall_key *to,
			     u64 *exited, u64 *gone)
{
	if (from->tgid && !to->tgid && to->ino)
		(*exited)++;
	if (from->ino && !to->ino)
		(*gone)++;
}

/*
 * The old table's rows mapped into @new (map[i]: row + 1, 0: none),
 * through stall_target(); an exited row of @aged (a first pass whose
 * marked rows are too old to keep: aged[row]) goes to its device's row.
 * @targets[i] keeps each target, so that a second pass needs no pid or
 * inode lookup.
 */
static void stall_map_rows(struct wpstat_stalls *old, u32 n0,
			   struct wpstat_stalls *new, u32 *map,
			   struct wpstat_stall_key *targets,
			   struct wpstat_stalls *first, const bool *aged,
			   u64 *exited, u64 *gone)
{
	struct wpstat_stall *to;
	u32 i;

	for (i = 0; i < n0; i++) {
		struct wpstat_stall *r = &old->rows[i];
		struct wpstat_stall_key k;

		map[i] = 0;
		/* Pairs with the release in wpstat_stall_find_key(). */
		if (!smp_load_acquire(&r->valid))
			continue;
		if (!first) {
			k = stall_target(&r->key);
			targets[i] = k;
			stall_count_fold(&r->key, &k, exited, gone);
		} else {
			/* A row made since the first pass has no target yet. */
			k = targets[i].dev ? targets[i] : stall_target(&r->key);
			if (k.ino && !k.tgid) {
				to = wpstat_stall_find_key(first, &k, false, NULL);
				if (to && aged[to - first->rows])
					k = stall_dev_key(&k);
			}
		}
		to = wpstat_stall_find_key(new, &k, true, r);
		if (to) {
			map[i] = to - new->rows + 1;
			if (time_after(READ_ONCE(r->last), to->last))
				to->last = READ_ONCE(r->last);
		}
		if (!(i % 256))
			cond_resched();
	}
}

/*
 * In the first pass's table @s, mark the oldest exited rows so that the
 * rows left fit in half the table: those go to their device's row
 * instead.  Returns how many, or -ENOMEM.
 */
static int stall_mark_aged(struct wpstat_stalls *s, bool *aged)
{
	u32 n = atomic_read(&s->nr_rows), keep = s->r.max / 2;
	u32 i, nold = 0, fold;
	struct stall_age *age;

	if (n <= keep)
		return 0;
	age = kvcalloc(n, sizeof(*age), GFP_KERNEL | __GFP_NORETRY);
	if (!age)
		return -ENOMEM;
	for (i = 0; i < min_t(u32, atomic_read(&s->r.nr_reserved), s->r.max); i++) {
		struct wpstat_stall *r = &s->rows[i];

		if (r->valid && r->key.ino && !r->key.tgid && nold < n)
			age[nold++] = (struct stall_age){ r->last, i };
	}
	sort(age, nold, sizeof(*age), stall_age_cmp, NULL);
	/* The device rows they go to may be new rows too. */
	fold = min(nold, 2 * (n - keep) + 1);
	for (i = 0; i < fold; i++)
		aged[age[i].row] = true;
	kvfree(age);
	return fold;
}

/*
 * Rebuild the table: live pairs as they are, the rest folded (see the
 * top of this file).  The rows are made before the swap, the counts moved
 * after a grace period (the old table is final then).  Each old row maps
 * to at most one new row, so they all fit; only a row made in the old
 * table between the two steps may find none, and its events count as
 * overflow.
 */
static void wpstat_stalls_compact(void)
{
	struct wpstat_stalls *old, *new, *first = NULL;
	struct wpstat_stall_key *targets = NULL, k;
	u64 exited = 0, gone = 0, late_exited = 0, late_gone = 0, ov0;
	u32 i, n0, n, *map = NULL;
	bool *aged = NULL;
	unsigned long interval = wpstat_stalls_interval(wpstat_max_stalls);
	u64 cpu0 = wpstat_task_cpu_ns();
	bool death;
	int nfold = 0;

	mutex_lock(&wpstat_stalls_mutex);
	death = READ_ONCE(wpstat_stalls_death);
	WRITE_ONCE(wpstat_stalls_death, false);
	/* Pairs with wpstat_stalls_note_death(): clear, then scan. */
	smp_mb();
	old = rcu_dereference_protected(wpstat_stalls,
					lockdep_is_held(&wpstat_stalls_mutex));
	if (!old || !death)	/* nothing died since the last look */
		goto out;
	n0 = min_t(u32, atomic_read(&old->r.nr_reserved), old->r.max);
	if (!stall_anything_to_move(old, n0)) {
		interval = WPSTAT_STALLS_IDLE_INTERVAL;
		goto scanned;
	}
	new = wpstat_stalls_alloc(old->r.max, __GFP_NORETRY);
	map = kvcalloc(max_t(u32, n0, 1), sizeof(*map), GFP_KERNEL | __GFP_NORETRY);
	targets = kvcalloc(max_t(u32, n0, 1), sizeof(*targets),
			   GFP_KERNEL | __GFP_NORETRY);
	if (!new || !map || !targets)
		goto nomem;
	stall_map_rows(old, n0, new, map, targets, NULL, NULL, &exited, &gone);
	/* Less than half left: a second pass folds the oldest exited rows. */
	if (atomic_read(&new->nr_rows) > new->r.max / 2) {
		first = new;
		aged = kvcalloc(first->r.max, sizeof(*aged),
				GFP_KERNEL | __GFP_NORETRY);
		new = wpstat_stalls_alloc(old->r.max, __GFP_NORETRY);
		nfold = aged ? stall_mark_aged(first, aged) : -ENOMEM;
		if (!new || nfold < 0)
			goto nomem;
		stall_map_rows(old, n0, new, map, targets, first, aged, NULL,
			       NULL);
	}
	new->reset_gen = old->reset_gen;
	new->compactions = old->compactions + 1;
	new->exited = old->exited + exited;
	new->gone = old->gone + gone;
	new->aged = old->aged + nfold;
	ov0 = atomic64_read(&old->overflow);
	atomic64_set(&new->overflow, ov0);
	old = rcu_replace_pointer(wpstat_stalls, new,
				  lockdep_is_held(&wpstat_stalls_mutex));
	/* Every handler runs with preemption disabled: an RCU reader. */
	synchronize_rcu();
	n = min_t(u32, atomic_read(&old->r.nr_reserved), old->r.max);
	for (i = 0; i < n; i++) {
		struct wpstat_stall *r = &old->rows[i], *to;

		/* Pairs with the release in wpstat_stall_find_key(). */
		if (!smp_load_acquire(&r->valid))
			continue;
		if (i < n0 && map[i]) {
			to = &new->rows[map[i] - 1];
		} else {
			k = stall_target(&r->key);
			/* Made after the first pass passed its slot. */
			if (i >= n0 || !targets[i].dev)
				stall_count_fold(&r->key, &k, &late_exited,
						 &late_gone);
			to = wpstat_stall_find_key(new, &k, true, r);
		}
		if (to)
			stall_move_counts(to, r);
		else		/* its events found no row after all */
			atomic64_add(stall_events(r), &new->overflow);
		if (!(i % 256))
			cond_resched();
	}
	/* Events that found no row in the old table since ov0. */
	atomic64_add(atomic64_read(&old->overflow) - ov0, &new->overflow);
	WRITE_ONCE(new->exited, new->exited + late_exited);
	WRITE_ONCE(new->gone, new->gone + late_gone);
	wpstat_stalls_put(old);
	goto done;
nomem:
	wpstat_stalls_put(new);
	/* The deaths are still to be looked at: the next run tries again. */
	WRITE_ONCE(wpstat_stalls_death, true);
	pr_warn_ratelimited("stalls compaction: out of memory\n");
done:
	wpstat_stalls_put(first);
	kvfree(aged);
	kvfree(targets);
	kvfree(map);
scanned:
	wpstat_compact_paced(&wpstat_stalls_pace, cpu0, interval);
out:
	mutex_unlock(&wpstat_stalls_mutex);
}

/*
 * A kick while a compaction ran runs it again (wpstat_compact_end()):
 * the last files of a churn die during a run.  The run's own inserts
 * kick too; a second run with no new death returns at once.
 */
static void wpstat_stalls_workfn(struct work_struct *work)
{
	wpstat_compact_begin(&wpstat_stalls_pending);
	wpstat_stalls_compact();
	if (wpstat_compact_end(&wpstat_stalls_pending))
		queue_delayed_work(wpstat_unbound_wq, &wpstat_stalls_work,
				   wpstat_compact_delay(&wpstat_stalls_pace));
}

/* ---- reset and summary --------------------------------------------------------- */

/*
 * A reset in two steps, so that the control layer allocates everything
 * before it changes anything: an empty table, then the swap (which takes
 * it, or wpstat_stalls_put() drops it).
 */
struct wpstat_stalls *wpstat_stalls_reset_prepare(void)
{
	return wpstat_stalls_alloc(wpstat_max_stalls, 0);
}

void wpstat_stalls_reset_abort(struct wpstat_stalls *new)
{
	wpstat_stalls_put(new);
}

void wpstat_stalls_reset_commit(struct wpstat_stalls *new)
{
	struct wpstat_stalls *old;

	mutex_lock(&wpstat_stalls_mutex);
	old = rcu_dereference_protected(wpstat_stalls,
					lockdep_is_held(&wpstat_stalls_mutex));
	/* Before it is published: an event's generation is its table's. */
	new->reset_gen = old ? old->reset_gen + 1 : 1;
	old = rcu_replace_pointer(wpstat_stalls, new,
				  lockdep_is_held(&wpstat_stalls_mutex));
	mutex_unlock(&wpstat_stalls_mutex);
	/* Every handler runs with preemption disabled: an RCU reader. */
	synchronize_rcu();
	wpstat_stalls_put(old);
}

/* Lines of the world-readable summary: totals only, no row. */
void wpstat_stalls_summary(struct seq_file *m)
{
	struct wpstat_stalls *s;

	rcu_read_lock();
	s = rcu_dereference(wpstat_stalls);
	seq_printf(m, "stall_rows %u\n", s ? atomic_read(&s->nr_rows) : 0);
	seq_printf(m, "max_stalls %u\n", s ? s->r.max : 0);
	seq_printf(m, "stall_overflow_events %lld\n",
		   s ? atomic64_read(&s->overflow) : 0);
	seq_printf(m, "stall_compactions %llu\n", s ? s->compactions : 0);
	seq_printf(m, "stall_rows_exited %llu\n", s ? s->exited : 0);
	seq_printf(m, "stall_rows_gone %llu\n", s ? s->gone : 0);
	seq_printf(m, "stall_rows_aged %llu\n", s ? s->aged : 0);
	rcu_read_unlock();
	seq_printf(m, "stall_compaction_runs %llu\n",
		   READ_ONCE(wpstat_stalls_pace.runs));
	seq_printf(m, "stall_compaction_cpu_ns %llu\n",
		   READ_ONCE(wpstat_stalls_pace.cpu_ns));
	seq_printf(m, "stall_row_bytes %zu\n", wpstat_rows_bytes(sizeof(struct wpstat_stall)));
}

/*
 * Each cause's maximum is right after its time, which wpstat_stall_time()
 * raises as field + 1: a cause of the list where it is not makes a
 * negative index here, a build error.
 */
static const char wpstat_stall_max_after_ns[] __maybe_unused = {
#define WPSTAT_STALL(...)
#define WPSTAT_STALL_CAUSE(id, ...) \
	[WPS_##id##_NS + 1 == WPS_##id##_MAX ? 0 : -1] = 0,
#include "wpstat_stalls.def"
#undef WPSTAT_STALL_CAUSE
#undef WPSTAT_STALL
};

size_t wpstat_stalls_bytes(void)
{
	return sizeof(struct wpstat_stalls) +
	       wpstat_rows_mem(wpstat_max_stalls, sizeof(struct wpstat_stall));
}

int wpstat_stalls_init(void)
{
	struct wpstat_stalls *s;

	s = wpstat_stalls_alloc(wpstat_max_stalls, 0);

	init_irq_work(&wpstat_stalls_iw, wpstat_stalls_irq_work);
	INIT_DELAYED_WORK(&wpstat_stalls_work, wpstat_stalls_workfn);
	wpstat_stalls_pace.next = jiffies;
	if (!s) {
		pr_err("cannot allocate %u stall rows\n", wpstat_max_stalls);
		return -ENOMEM;
	}
	rcu_assign_pointer(wpstat_stalls, s);
	return 0;
}

/* After every handler and reader is gone. */
void wpstat_stalls_exit(void)
{
	struct wpstat_stalls *s;

	/* After every handler is gone: none can kick. */
	irq_work_sync(&wpstat_stalls_iw);
	cancel_delayed_work_sync(&wpstat_stalls_work);
	s = rcu_dereference_protected(wpstat_stalls, 1);
	RCU_INIT_POINTER(wpstat_stalls, NULL);
	synchronize_rcu();
	wpstat_stalls_put(s);
}

