// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_rows.c - the cold half shared by both tables (wpstat_table.c, the
 * inodes; wpstat_stalls.c, process x file): the row store's allocation and
 * release, and the size parameters.  The /proc read pass over a row store
 * is in wpstat_procfs.c.  Each table keeps its own hot lookup, inline, over
 * the store's fields.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "wpstat.h"
#include "wpstat_compat.h"

/*
 * Index slots for @max rows: at least twice as many, so a full table's
 * index is half empty, and at least 4,096, so that a small table's
 * lookups stay short while the slots of rows taken over accumulate
 * between two compactions (wpstat_table.c).
 */
static u32 wpstat_rows_index_size(u32 max)
{
	return roundup_pow_of_two(max_t(u32, 2 * max, 4096));
}

static void wpstat_rows_release(struct kref *ref)
{
	struct wpstat_rows *r = container_of(ref, struct wpstat_rows, ref);

	kvfree(r->mem);
	kvfree(r->index);
	r->release(r);
}

/* Process context only: the last put frees the table. */
void wpstat_rows_put(struct wpstat_rows *r)
{
	kref_put(&r->ref, wpstat_rows_release);
}

/*
 * An empty store of @max rows of @row_size bytes, each with an int
 * "valid" at @valid_off, holding one reference that @release (the
 * table's own parts and the table) ends.  On -ENOMEM the caller puts it.
 * Compaction passes __GFP_NORETRY in @gfp_extra: its rebuild gives up
 * rather than push the system into reclaim, and is tried again later.
 */
int wpstat_rows_init(struct wpstat_rows *r, u32 max, size_t row_size,
		     size_t valid_off, gfp_t gfp_extra,
		     void (*release)(struct wpstat_rows *r))
{
	gfp_t gfp = GFP_KERNEL | __GFP_ZERO | gfp_extra;
	u32 index_size = wpstat_rows_index_size(max);

	kref_init(&r->ref);
	r->release = release;
	r->max = max;
	r->row_size = row_size;
	r->valid_off = valid_off;
	r->index_mask = index_size - 1;
	/* Keys are easy to choose (tmpfs inode numbers, pids): no fixed runs. */
	r->seed = get_random_u32();
	r->index = kvmalloc(array_size(index_size, sizeof(u32)), gfp);
	r->mem = kvmalloc(array_size(max, row_size), gfp);
	return r->index && r->mem ? 0 : -ENOMEM;
}

/* The memory of a store of @max rows of @row_size bytes and its index. */
size_t wpstat_rows_mem(u32 max, size_t row_size)
{
	return (size_t)max * row_size +
	       (size_t)wpstat_rows_index_size(max) * sizeof(u32);
}

/* Bytes of preallocated memory per row: the row and two index slots. */
size_t wpstat_rows_bytes(size_t row_size)
{
	return row_size + 2 * sizeof(u32);
}

/*
 * A run that started when its task had used @cpu0 ns of CPU has ended:
 * count it, and set the earliest start of the next.  The mutex of the
 * table is held.
 */
void wpstat_compact_paced(struct wpstat_compact_pace *p, u64 cpu0,
			  unsigned long min_interval)
{
	u64 ns = wpstat_task_cpu_ns() - cpu0;
	unsigned long wait = nsecs_to_jiffies(ns * (WPSTAT_COMPACT_DUTY - 1));

	WRITE_ONCE(p->runs, p->runs + 1);
	WRITE_ONCE(p->cpu_ns, p->cpu_ns + ns);
	WRITE_ONCE(p->next, jiffies + max(wait, min_interval));
}

/* Any context: jiffies from now until the next run may start. */
unsigned long wpstat_compact_delay(const struct wpstat_compact_pace *p)
{
	unsigned long next = READ_ONCE(p->next);

	return time_before(jiffies, next) ? next - jiffies : 0;
}

/* A table's size: 1..limit rows, fixed at load (wpstat_rows_param). */
static int wpstat_rows_param_set(const char *val, const struct kernel_param *kp)
{
	const struct wpstat_rows_param *p = kp->arg;
	unsigned int n;
	int ret = kstrtouint(val, 0, &n);

	if (ret)
		return ret;
	if (n < 1 || n > p->limit) {
		pr_err("%s must be between 1 and %u\n", kp->name, p->limit);
		return -EINVAL;
	}
	*p->val = n;
	return 0;
}

static int wpstat_rows_param_get(char *buffer, const struct kernel_param *kp)
{
	const struct wpstat_rows_param *p = kp->arg;

	return scnprintf(buffer, PAGE_SIZE, "%u\n", *p->val);
}

const struct kernel_param_ops wpstat_rows_param_ops = {
	.set = wpstat_rows_param_set,
	.get = wpstat_rows_param_get,
};
