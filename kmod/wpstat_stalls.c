// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_stalls.c - who stalled on which file: one row per process and
 * inode, /proc/wpstat/stalls.
 *
 * A row is made by the first event of a process on a file (a write fault,
 * a wait, a pause) and counts each cause: its events, the time blocked and
 * the worst single stall.  Times are taken where the task blocks (a
 * writeback wait, a throttle pause); the fault's own duration only at
 * level timing, where do_page_mkwrite has a return probe.  The table is
 * preallocated (max_stalls rows) and only grows: rows of exited processes
 * stay until a reset swaps in an empty table.  Like the inode table it is
 * keyed by (dev, ino, generation), never by inode pointer, and by tgid.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cgroup.h>
#include <linux/jhash.h>
#include <linux/kdev_t.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/proc_fs.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "wpstat.h"

#define WPSTAT_STALLS_LIMIT	(1U << 20)
#define WPSTAT_STALL_PROBE	32

struct wpstat_stall_key {
	u64 ino;
	u32 dev;
	u32 gen;
	u32 tgid;
	u32 pad;			/* zero: the key is hashed as u32 words */
};

struct wpstat_stall {
	struct wpstat_stall_key key;
	int valid;			/* published; set once */
	char comm[TASK_COMM_LEN];	/* the thread group leader's, at insert */
	u64 cgroup;			/* cgroup v2 id at insert, 0 if none */
	atomic64_t count[WPS_NR];
};

struct wpstat_stalls {
	struct kref ref;
	u32 max_rows;
	u32 index_mask;
	atomic_t nr_reserved;		/* rows handed out */
	atomic_t nr_rows;		/* of them published */
	atomic64_t overflow;		/* counted events that found no row */
	u32 *index;			/* row number + 1, 0 = empty */
	struct wpstat_stall *rows;
};

/*
 * Each field's column name, and the inode counter whose sources it needs
 * (the column reads "-" without them): wpstat_stalls.def.
 */
static const struct {
	const char *name;
	enum wpstat_counter like;
} stall_fields[] = {
#define WPSTAT_STALL(id, nm, lk, ...)					\
	[WPS_##id] = { .name = #nm, .like = WPC_##lk },
#include "wpstat_stalls.def"
#undef WPSTAT_STALL
};

unsigned int wpstat_max_stalls = 4096;
static struct wpstat_stalls __rcu *wpstat_stalls;
static DEFINE_MUTEX(wpstat_stalls_mutex);	/* serialises swaps and pins */

static int max_stalls_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int ret = kstrtouint(val, 0, &n);

	if (ret)
		return ret;
	if (n < 1 || n > WPSTAT_STALLS_LIMIT) {
		pr_err("max_stalls must be between 1 and %u\n",
		       WPSTAT_STALLS_LIMIT);
		return -EINVAL;
	}
	wpstat_max_stalls = n;
	return 0;
}

static const struct kernel_param_ops max_stalls_ops = {
	.set = max_stalls_set,
	.get = param_get_uint,
};

/* Fixed at load: the table is preallocated to this size. */
module_param_cb(max_stalls, &max_stalls_ops, &wpstat_max_stalls, 0444);
MODULE_PARM_DESC(max_stalls, "Process x file rows of /proc/wpstat/stalls (1..1048576, default 4096)");

/* Bytes of preallocated memory per row (row + two index slots). */
static size_t wpstat_stall_row_bytes(void)
{
	return sizeof(struct wpstat_stall) + 2 * sizeof(u32);
}

static void wpstat_stalls_release(struct kref *ref)
{
	struct wpstat_stalls *s = container_of(ref, struct wpstat_stalls, ref);

	vfree(s->rows);
	vfree(s->index);
	kfree(s);
}

static void wpstat_stalls_put(struct wpstat_stalls *s)
{
	if (s)
		kref_put(&s->ref, wpstat_stalls_release);
}

static struct wpstat_stalls *wpstat_stalls_alloc(u32 max_rows)
{
	u32 index_size = roundup_pow_of_two(2 * max_rows);
	struct wpstat_stalls *s = kzalloc(sizeof(*s), GFP_KERNEL);

	if (!s)
		return NULL;
	kref_init(&s->ref);
	s->max_rows = max_rows;
	s->index_mask = index_size - 1;
	s->index = vzalloc(array_size(index_size, sizeof(u32)));
	s->rows = vzalloc(array_size(max_rows, sizeof(struct wpstat_stall)));
	if (!s->index || !s->rows) {
		wpstat_stalls_put(s);
		return NULL;
	}
	return s;
}

/* A reference to the current table, for a reader that may sleep. */
static struct wpstat_stalls *wpstat_stalls_pin(void)
{
	struct wpstat_stalls *s;

	mutex_lock(&wpstat_stalls_mutex);
	s = rcu_dereference_protected(wpstat_stalls,
				      lockdep_is_held(&wpstat_stalls_mutex));
	if (s)
		kref_get(&s->ref);
	mutex_unlock(&wpstat_stalls_mutex);
	return s;
}

/* ---- probe context ---------------------------------------------------------- */

static __always_inline bool stall_key_equal(const struct wpstat_stall_key *a,
					    const struct wpstat_stall_key *b)
{
	return a->ino == b->ino && a->dev == b->dev && a->gen == b->gen &&
	       a->tgid == b->tgid;
}

/* Who the current task is, recorded once per row. */
static void stall_row_fill(struct wpstat_stall *r,
			   const struct wpstat_stall_key *key)
{
	struct task_struct *leader = current->group_leader;

	r->key = *key;
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
 * The current process's row for @key's file, inserted if new and
 * @insert.  Lock-free and allocation-free, as wpstat_table_find(); NULL
 * when absent or the table is full.  A row reserved by an insert that
 * lost a race to the same key stays unpublished (the table only grows; a
 * reset frees it).
 */
static struct wpstat_stall *stall_find(struct wpstat_stalls *s,
				       const struct wpstat_key *ikey,
				       bool insert)
{
	struct wpstat_stall_key key = {
		.ino = ikey->ino, .dev = ikey->dev, .gen = ikey->gen,
		.tgid = task_tgid_nr(current),
	};
	u32 h = jhash2((const u32 *)&key, sizeof(key) / sizeof(u32), 0);
	struct wpstat_stall *mine = NULL;
	u32 i;

	for (i = 0; i < WPSTAT_STALL_PROBE; i++) {
		u32 *slot = &s->index[(h + i) & s->index_mask];
		/* Pairs with cmpxchg() below: see the key before using it. */
		u32 cur = smp_load_acquire(slot);

		if (!cur) {
			if (!insert)
				return NULL;
			if (!mine) {
				int n = atomic_fetch_add_unless(&s->nr_reserved,
								1, s->max_rows);

				if (n >= s->max_rows)
					return NULL;
				mine = &s->rows[n];
				stall_row_fill(mine, &key);
			}
			/* Full barrier: the key is visible before the slot. */
			cur = cmpxchg(slot, 0, (u32)(mine - s->rows) + 1);
			if (!cur) {
				/* Readers of valid rows see key and counts. */
				smp_store_release(&mine->valid, 1);
				atomic_inc(&s->nr_rows);
				return mine;
			}
		}
		if (stall_key_equal(&s->rows[cur - 1].key, &key))
			return &s->rows[cur - 1];
	}
	return NULL;
}

/*
 * An event of cause @f (a count field): the current process's row for
 * @key's file, made if new.  Its time, added when its wait or pause ends
 * (wpstat_stall_time()), goes to the row the count made; an event that
 * found no row is counted once, as an overflow.
 */
void wpstat_stall_add(const struct wpstat_key *key, enum wpstat_stall_field f,
		      u64 delta)
{
	struct wpstat_stalls *s = rcu_dereference_sched(wpstat_stalls);
	struct wpstat_stall *r;

	if (unlikely(!s))
		return;
	r = stall_find(s, key, true);
	if (likely(r))
		atomic64_add(delta, &r->count[f]);
	else
		atomic64_inc(&s->overflow);
}

/*
 * An event's time of @ns ended: add it to @ns_field and raise the maximum
 * after it, in the row its count made.
 */
void wpstat_stall_time(const struct wpstat_key *key,
		       enum wpstat_stall_field ns_field, u64 ns)
{
	struct wpstat_stalls *s = rcu_dereference_sched(wpstat_stalls);
	struct wpstat_stall *r;

	BUILD_BUG_ON(ARRAY_SIZE(stall_fields) != WPS_NR);
	BUILD_BUG_ON(WPS_FAULT_MAX - WPS_FAULT_NS != 1 ||
		     WPS_STABLE_MAX - WPS_STABLE_NS != 1 ||
		     WPS_WB_MAX - WPS_WB_NS != 1 ||
		     WPS_PAUSE_MAX - WPS_PAUSE_NS != 1);
	if (unlikely(!s))
		return;
	r = stall_find(s, key, false);
	if (likely(r)) {
		atomic64_add(ns, &r->count[ns_field]);
		wpstat_atomic_max(&r->count[ns_field + 1], ns);
	}
}

/* ---- reset, summary, /proc/wpstat/stalls ------------------------------------ */

int wpstat_stalls_reset(void)
{
	struct wpstat_stalls *new, *old;

	new = wpstat_stalls_alloc(wpstat_max_stalls);
	if (!new)
		return -ENOMEM;
	mutex_lock(&wpstat_stalls_mutex);
	old = rcu_replace_pointer(wpstat_stalls, new,
				  lockdep_is_held(&wpstat_stalls_mutex));
	mutex_unlock(&wpstat_stalls_mutex);
	/* Every handler runs with preemption disabled: an RCU reader. */
	synchronize_rcu();
	wpstat_stalls_put(old);
	return 0;
}

/* Lines of the world-readable summary: totals only, no row. */
void wpstat_stalls_summary(struct seq_file *m)
{
	struct wpstat_stalls *s;

	rcu_read_lock();
	s = rcu_dereference(wpstat_stalls);
	seq_printf(m, "stall_rows %u\n", s ? atomic_read(&s->nr_rows) : 0);
	seq_printf(m, "max_stalls %u\n", s ? s->max_rows : 0);
	seq_printf(m, "stall_overflow_events %lld\n",
		   s ? atomic64_read(&s->overflow) : 0);
	rcu_read_unlock();
	seq_printf(m, "stall_row_bytes %zu\n", wpstat_stall_row_bytes());
}

/* *pos is 0 for the header, row index + 1 afterwards. */
static void *stalls_find(struct wpstat_stalls *s, loff_t *pos)
{
	u32 n = min_t(u32, atomic_read(&s->nr_reserved), s->max_rows);
	loff_t i;

	for (i = *pos - 1; i < n; i++) {
		/* Pairs with the release in stall_find(). */
		if (smp_load_acquire(&s->rows[i].valid)) {
			*pos = i + 1;
			return &s->rows[i];
		}
	}
	*pos = n + 1;
	return NULL;
}

static void *stalls_start(struct seq_file *m, loff_t *pos)
{
	if (!m->private)
		return NULL;
	return *pos ? stalls_find(m->private, pos) : SEQ_START_TOKEN;
}

static void *stalls_next(struct seq_file *m, void *v, loff_t *pos)
{
	++*pos;
	return stalls_find(m->private, pos);
}

static void stalls_stop(struct seq_file *m, void *v)
{
}

static int stalls_show(struct seq_file *m, void *v)
{
	struct wpstat_stall *r = v;
	int f;

	if (v == SEQ_START_TOKEN) {
		seq_puts(m, "tgid comm dev ino gen cgroup");
		for (f = 0; f < WPS_NR; f++)
			seq_printf(m, " %s", stall_fields[f].name);
		seq_putc(m, '\n');
		return 0;
	}
	seq_put_decimal_ull(m, "", r->key.tgid);
	seq_putc(m, ' ');
	/* A comm may hold anything: keep one row a line of fields. */
	seq_escape(m, r->comm[0] ? r->comm : "-", " \t\n\\");
	seq_put_decimal_ull(m, " ", MAJOR(r->key.dev));
	seq_put_decimal_ull(m, ":", MINOR(r->key.dev));
	seq_put_decimal_ull(m, " ", r->key.ino);
	seq_put_decimal_ull(m, " ", r->key.gen);
	seq_put_decimal_ull(m, " ", r->cgroup);
	for (f = 0; f < WPS_NR; f++) {
		if (wpstat_counter_available(stall_fields[f].like))
			seq_put_decimal_ull(m, " ", atomic64_read(&r->count[f]));
		else
			seq_puts(m, " -");
	}
	seq_putc(m, '\n');
	return 0;
}

static const struct seq_operations stalls_seq_ops = {
	.start = stalls_start,
	.next = stalls_next,
	.stop = stalls_stop,
	.show = stalls_show,
};

/* The whole read walks the table pinned at open. */
static int stalls_open(struct inode *inode, struct file *file)
{
	int ret = seq_open(file, &stalls_seq_ops);

	if (!ret)
		((struct seq_file *)file->private_data)->private =
			wpstat_stalls_pin();
	return ret;
}

static int stalls_release(struct inode *inode, struct file *file)
{
	wpstat_stalls_put(((struct seq_file *)file->private_data)->private);
	return seq_release(inode, file);
}

static const struct proc_ops stalls_proc_ops = {
	.proc_open = stalls_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = stalls_release,
};

/* Root only, like /proc/wpstat/inodes: other users' processes and files. */
int wpstat_stalls_proc_init(struct proc_dir_entry *dir)
{
	return proc_create("stalls", 0400, dir, &stalls_proc_ops) ? 0 : -ENOMEM;
}

int wpstat_stalls_init(void)
{
	struct wpstat_stalls *s = wpstat_stalls_alloc(wpstat_max_stalls);

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
	struct wpstat_stalls *s = rcu_dereference_protected(wpstat_stalls, 1);

	RCU_INIT_POINTER(wpstat_stalls, NULL);
	synchronize_rcu();
	wpstat_stalls_put(s);
}
