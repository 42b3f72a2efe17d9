// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_hist.c - log2-ns histograms of the fault, stable-wait and
 * throttle-pause durations (debugfs wpstat/histograms), of every event,
 * one filesystem or one file (the scope).
 */
#include <linux/types.h>
#include <linux/kdev_t.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "wpstat.h"

/*
 * The histograms and their scope, swapped as one under RCU: a reset or a
 * new scope starts from empty histograms, and no event is counted under
 * a scope it does not belong to.
 */
static struct wpstat_hists __rcu *wpstat_hists;
static DEFINE_MUTEX(wpstat_hists_mutex);

static struct wpstat_hists *wpstat_hists_alloc(const struct wpstat_hist_scope *scope)
{
	struct wpstat_hists *h = kzalloc(sizeof(*h), GFP_KERNEL);

	if (!h)
		return NULL;
	h->scope = *scope;
	if (IS_ENABLED(CONFIG_WPSTAT_HISTOGRAMS)) {
		h->counts = alloc_percpu(struct wpstat_hist_counts);
		if (!h->counts) {
			kfree(h);
			return NULL;
		}
	}
	return h;
}

size_t wpstat_hist_bytes(size_t *cpu)
{
	size_t per = IS_ENABLED(CONFIG_WPSTAT_HISTOGRAMS) ?
		     sizeof(struct wpstat_hist_counts) : 0;

	*cpu += per;
	return sizeof(struct wpstat_hists) + per * num_possible_cpus();
}

static void wpstat_hists_free(struct wpstat_hists *h)
{
	if (!h)
		return;
	free_percpu(h->counts);
	kfree(h);
}

static void wpstat_hists_free_rcu(struct rcu_head *rcu)
{
	wpstat_hists_free(container_of(rcu, struct wpstat_hists, rcu));
}

/* Probe context: one duration of @key's file, if the scope wants it. */
void notrace wpstat_hist_add(enum wpstat_hist_id id, const struct wpstat_key *key,
		     u64 ns)
{
	struct wpstat_hists *h = rcu_dereference_sched(wpstat_hists);
	unsigned int b = ns ? fls64(ns) - 1 : 0;

	if (!IS_ENABLED(CONFIG_WPSTAT_HISTOGRAMS) || !h || !h->counts)
		return;
	switch (h->scope.kind) {
	case WPHS_INODE:
		if (key->ino != h->scope.ino ||
		    (!h->scope.any_gen && key->gen != h->scope.gen))
			return;
		fallthrough;
	case WPHS_DEV:
		if (key->dev != h->scope.dev)
			return;
	}
	this_cpu_inc(h->counts->n[id][b]);
}

/* Swap in @new (wpstat_hists_mutex held); the old ones go after RCU. */
static void wpstat_hists_swap(struct wpstat_hists *new)
{
	struct wpstat_hists *old;

	old = rcu_replace_pointer(wpstat_hists, new,
				  lockdep_is_held(&wpstat_hists_mutex));
	/* Readers and handlers use them only inside RCU read sections. */
	call_rcu(&old->rcu, wpstat_hists_free_rcu);
}

/* Process context: start empty histograms under @scope (NULL: the same). */
int wpstat_hist_set_scope(const struct wpstat_hist_scope *scope)
{
	struct wpstat_hists *new, *old;

	mutex_lock(&wpstat_hists_mutex);
	old = rcu_dereference_protected(wpstat_hists,
					lockdep_is_held(&wpstat_hists_mutex));
	new = wpstat_hists_alloc(scope ? scope : &old->scope);
	if (new)
		wpstat_hists_swap(new);
	mutex_unlock(&wpstat_hists_mutex);
	return new ? 0 : -ENOMEM;
}

/* "all", "dev MAJ:MIN" or "inode MAJ:MIN:INO:GEN", no newline. */
void wpstat_hist_scope_show(struct seq_file *m)
{
	struct wpstat_hists *h;

	rcu_read_lock();
	h = rcu_dereference(wpstat_hists);
	if (!h || h->scope.kind == WPHS_ALL) {
		seq_puts(m, "all");
	} else {
		seq_printf(m, "%s %u:%u", h->scope.kind == WPHS_DEV ?
			   "dev" : "inode", MAJOR(h->scope.dev),
			   MINOR(h->scope.dev));
		if (h->scope.kind == WPHS_INODE)
			seq_printf(m, ":%llu", h->scope.ino);
		if (h->scope.kind == WPHS_INODE && !h->scope.any_gen)
			seq_printf(m, ":%u", h->scope.gen);
	}
	rcu_read_unlock();
}

/* The counts of every CPU, added into @sum; -ENODATA if not built. */
int wpstat_hist_read(struct wpstat_hist_counts *sum)
{
	struct wpstat_hists *h;
	int cpu, i, b;

	if (!IS_ENABLED(CONFIG_WPSTAT_HISTOGRAMS))
		return -ENODATA;
	rcu_read_lock();
	h = rcu_dereference(wpstat_hists);
	for_each_possible_cpu(cpu)
		for (i = 0; i < WPH_NR; i++)
			for (b = 0; b < WPSTAT_HIST_BUCKETS; b++)
				sum->n[i][b] += per_cpu_ptr(h->counts, cpu)->n[i][b];
	rcu_read_unlock();
	return 0;
}

/* A reset's histograms, of the scope in force, made before anything changes. */
struct wpstat_hists *wpstat_hists_reset_prepare(void)
{
	struct wpstat_hists *cur, *new;

	mutex_lock(&wpstat_hists_mutex);
	cur = rcu_dereference_protected(wpstat_hists,
					lockdep_is_held(&wpstat_hists_mutex));
	new = wpstat_hists_alloc(&cur->scope);
	mutex_unlock(&wpstat_hists_mutex);
	return new;
}

void wpstat_hists_reset_abort(struct wpstat_hists *new)
{
	wpstat_hists_free(new);
}

void wpstat_hists_reset_commit(struct wpstat_hists *new)
{
	mutex_lock(&wpstat_hists_mutex);
	wpstat_hists_swap(new);
	mutex_unlock(&wpstat_hists_mutex);
}

int wpstat_hist_init(void)
{
	struct wpstat_hist_scope all = { .kind = WPHS_ALL };
	struct wpstat_hists *h = wpstat_hists_alloc(&all);

	if (!h)
		return -ENOMEM;
	rcu_assign_pointer(wpstat_hists, h);
	return 0;
}

/* After every handler and reader is gone. */
void wpstat_hist_exit(void)
{
	/* After the call_rcu() callbacks of scope changes. */
	rcu_barrier();
	wpstat_hists_free(rcu_dereference_protected(wpstat_hists, 1));
	RCU_INIT_POINTER(wpstat_hists, NULL);
}
