// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_stalls.c - who stalled on which file: the events of the probe
 * handlers, counted into the current process's row for the file
 * (wpstat_stalls_table.c has the table, /proc/wpstat/stalls).
 *
 * A row is made by the first event of a process on a file (a write fault,
 * a wait, a pause) and counts each cause: its events, the time blocked and
 * the worst single stall.  Times are taken where the task blocks (a
 * writeback wait, a throttle pause); the fault's own duration only at
 * level timing, where handle_mm_fault() has a return probe.  Like the
 * inode table it is keyed by the file (dev, ino, generation and mount),
 * never by inode pointer, and by process: tgid and the leader's start
 * time, so that a reused pid is a new process.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/percpu.h>
#include <linux/sched.h>

#include "wpstat.h"

DEFINE_PER_CPU(struct wpstat_stall_last, wpstat_stall_last);

/* The per-CPU last rows (the summary's module_bytes). */
size_t wpstat_stall_cpu_bytes(size_t *cpu)
{
	*cpu += sizeof(struct wpstat_stall_last);
	return sizeof(struct wpstat_stall_last) * num_possible_cpus();
}

/* The current process's row for @ikey's file. */
static __always_inline struct wpstat_stall *
stall_find(struct wpstat_stalls *s, const struct wpstat_key *ikey, bool insert)
{
	struct wpstat_stall_last *last = this_cpu_ptr(&wpstat_stall_last);
	struct wpstat_stall_key key = {
		.ino = ikey->ino, .dev = ikey->dev, .gen = ikey->gen,
		.sb = ikey->sb, .tgid = task_tgid_nr(current),
		.start = current->group_leader->start_time,
	};
	u32 idx = READ_ONCE(last->idx);
	struct wpstat_stall *r;

	if (likely(READ_ONCE(last->table) == s && idx < s->r.max)) {
		r = &s->rows[idx];
		/* Pairs with the release in wpstat_stall_find_key(). */
		if (likely(smp_load_acquire(&r->valid) &&
			   wpstat_stall_row_is(r, ikey, key.tgid, key.start)))
			return r;
	}
	r = wpstat_stall_find_key(s, &key, insert, NULL);
	if (r) {
		WRITE_ONCE(last->table, s);
		WRITE_ONCE(last->idx, (u32)(r - s->rows));
	}
	return r;
}

/*
 * The current process's row for @ikey's file, made if @insert; with the
 * table full (a compaction is on its way), its device's row, made if
 * @insert in the rows kept for those: the event still adds up in the
 * file's device, and only what finds neither is an overflow.  Without
 * @insert (an event's time), the device's row only if the table has one.
 */
static __always_inline struct wpstat_stall *
stall_row(struct wpstat_stalls *s, const struct wpstat_key *ikey, bool insert)
{
	struct wpstat_stall_key dev = { .dev = ikey->dev };
	struct wpstat_stall *r = stall_find(s, ikey, insert);

	if (likely(r) || (!insert && !READ_ONCE(s->dev_rows)))
		return r;
	return wpstat_stall_find_key(s, &dev, insert, NULL);
}

/*
 * An event of cause @f (a count field): the current process's row for
 * @key's file, made if new.  Its time, added when its wait or pause ends
 * (wpstat_stall_time()), goes to the row the count made, if the table is
 * still of the generation returned here.  What found no row is an
 * overflow: one per event (@delta PTEs for wp_caused).
 */
u32 notrace wpstat_stall_add(const struct wpstat_key *key,
			     enum wpstat_stall_field f, u64 delta)
{
	struct wpstat_stalls *s = rcu_dereference_sched(wpstat_stalls);
	struct wpstat_stall *r;

	if (unlikely(!s))
		return 0;
	r = stall_row(s, key, true);
	if (likely(r)) {
		atomic64_add(delta, &r->count[f]);
		wpstat_stall_touch(r);
	} else {
		atomic64_add(f == WPS_WP_CAUSED ? delta : 1, &s->overflow);
	}
	return s->reset_gen;
}

/* wpstat_stall_fault() (wpstat.h) but for its row found last. */
u32 notrace wpstat_stall_fault_slow(const struct wpstat_key *key, bool first,
				    bool readin, u64 readin_ns)
{
	struct wpstat_stalls *s = rcu_dereference_sched(wpstat_stalls);
	struct wpstat_stall *r;

	if (unlikely(!s))
		return 0;
	r = stall_row(s, key, true);
	if (unlikely(!r)) {
		atomic64_add(1 + readin, &s->overflow);
		return s->reset_gen;
	}
	atomic64_inc(&r->count[first ? WPS_FAULT_FIRST : WPS_FAULT_WP]);
	if (unlikely(readin)) {
		atomic64_inc(&r->count[WPS_READIN]);
		if (readin_ns) {
			atomic64_add(readin_ns, &r->count[WPS_READIN_NS]);
			wpstat_atomic_max(&r->count[WPS_READIN_MAX], readin_ns);
		}
	}
	wpstat_stall_touch(r);
	return s->reset_gen;
}

/*
 * @n events of cause @f that ended at once, @ns long in all, the longest
 * @max: their count, time and maximum (@ns_field and the field after it)
 * in one row.
 */
void notrace wpstat_stall_events(const struct wpstat_key *key,
				 enum wpstat_stall_field f,
				 enum wpstat_stall_field ns_field, u64 n, u64 ns,
				 u64 max)
{
	struct wpstat_stalls *s = rcu_dereference_sched(wpstat_stalls);
	struct wpstat_stall *r;

	if (unlikely(!s))
		return;
	r = stall_row(s, key, true);
	if (unlikely(!r)) {
		atomic64_add(n, &s->overflow);
		return;
	}
	atomic64_add(n, &r->count[f]);
	atomic64_add(ns, &r->count[ns_field]);
	wpstat_atomic_max(&r->count[ns_field + 1], max);
	wpstat_stall_touch(r);
}

/*
 * An event's time of @ns ended: add it to @ns_field and raise the maximum
 * after it, in the row its count made, if that is in this table (of
 * generation @gen): after a reset the time is dropped with the count.
 */
void notrace wpstat_stall_time(const struct wpstat_key *key,
			       enum wpstat_stall_field ns_field, u64 ns, u32 gen)
{
	struct wpstat_stalls *s = rcu_dereference_sched(wpstat_stalls);
	struct wpstat_stall *r;

	if (unlikely(!s || s->reset_gen != gen))
		return;
	r = stall_row(s, key, false);
	if (likely(r)) {
		atomic64_add(ns, &r->count[ns_field]);
		wpstat_atomic_max(&r->count[ns_field + 1], ns);
	}
}

/*
 * A timed write fault ended: its time @ns (and the maximum), its unnamed
 * part and of that the CPU and runqueue parts, in one row, the one its
 * count made if that is in this table (of generation @gen).
 */
void notrace wpstat_stall_fault_times(const struct wpstat_key *key, u32 gen,
				      u64 ns, u64 unnamed, u64 cpu, u64 runq)
{
	struct wpstat_stalls *s = rcu_dereference_sched(wpstat_stalls);
	struct wpstat_stall *r;

	if (unlikely(!s || s->reset_gen != gen))
		return;
	r = stall_row(s, key, false);
	if (unlikely(!r))
		return;
	atomic64_add(ns, &r->count[WPS_FAULT_NS]);
	wpstat_atomic_max(&r->count[WPS_FAULT_NS + 1], ns);
	atomic64_add(unnamed, &r->count[WPS_FAULT_UNNAMED_NS]);
	atomic64_add(cpu, &r->count[WPS_FAULT_CPU_NS]);
	atomic64_add(runq, &r->count[WPS_FAULT_RUNQ_NS]);
}

