// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_procfs.c - /proc/wpstat/{inodes,stalls,summary,gone,counters}: the
 * readers of the tables (wpstat_table.c, wpstat_stalls.c), which know
 * nothing of the files.
 *
 * /proc/wpstat/inodes is root-only (0400): per-file write activity of other
 * users is not theirs to see, as with /proc/PID/io.  The summary holds only
 * system-wide totals, like /proc/vmstat, and is world-readable, as are the
 * per-filesystem totals of reclaimed rows and the list of counters.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/kdev_t.h>

#include "wpstat.h"

static struct proc_dir_entry *wpstat_proc_dir;

static void wpstat_seq_counter(struct seq_file *m, enum wpstat_counter c,
			       u64 v)
{
	/*
	 * Not seq_printf(): a full table is max_inodes rows (65536 by
	 * default) of WPC_NR numbers each.
	 */
	if (wpstat_counter_available(c))
		seq_put_decimal_ull(m, " ", v);
	else
		seq_puts(m, " -");
}

/*
 * A table's columns after its first key columns, in its list's order: a
 * counter (>= 0), or one of the key's later columns (WPSTAT_COL_KEY()),
 * which stands in the list where it was appended.
 */
enum wpstat_key_column {
#define WPSTAT_COUNTER(...)
#define WPSTAT_KEY_COLUMN(id, ...)	WPSTAT_KEYCOL_##id,
#include "wpstat_counters.def"
#undef WPSTAT_KEY_COLUMN
#undef WPSTAT_COUNTER
	WPSTAT_KEYCOL_NR
};

#define WPSTAT_COL_KEY(k)	(-1 - (k))

static const char *const wpstat_key_column_names[WPSTAT_KEYCOL_NR] = {
#define WPSTAT_COUNTER(...)
#define WPSTAT_KEY_COLUMN(id, name, ...)				\
	[WPSTAT_KEYCOL_##id] = #name,
#include "wpstat_counters.def"
#undef WPSTAT_KEY_COLUMN
#undef WPSTAT_COUNTER
};

static const s8 inodes_columns[] = {
#define WPSTAT_COUNTER(id, ...)		WPC_##id,
#define WPSTAT_KEY_COLUMN(id, ...)	WPSTAT_COL_KEY(WPSTAT_KEYCOL_##id),
#include "wpstat_counters.def"
#undef WPSTAT_KEY_COLUMN
#undef WPSTAT_COUNTER
};

static const s8 stalls_columns[] = {
#define WPSTAT_STALL(id, ...)		WPS_##id,
#define WPSTAT_KEY_COLUMN(id, ...)	WPSTAT_COL_KEY(WPSTAT_KEYCOL_##id),
#include "wpstat_stalls.def"
#undef WPSTAT_KEY_COLUMN
#undef WPSTAT_STALL
};

/* ---- a read pass over a table's rows (struct wpstat_rows) ---------------- */

/* *pos is 0 for the header, row index + 1 afterwards. */
static void *rows_find(struct wpstat_rows *r, loff_t *pos)
{
	u32 n = min_t(u32, atomic_read(&r->nr_reserved), r->max);
	loff_t i;

	for (i = *pos - 1; i < n; i++) {
		void *row = r->mem + i * r->row_size;

		/* Pairs with the release in the table's insert. */
		if (smp_load_acquire((int *)(row + r->valid_off))) {
			*pos = i + 1;
			return row;
		}
	}
	*pos = n + 1;
	return NULL;
}

/*
 * A read pass walks one table, pinned at its start (the header, *pos 0:
 * the first read, or after a seek to 0) and let go at its end, so a
 * poller that keeps its descriptor reads the current table every pass
 * and holds none between passes.  m->private: the pinned row store.
 */
static void *rows_start(struct seq_file *m, loff_t *pos,
			struct wpstat_rows *(*pin)(void))
{
	if (*pos == 0) {
		if (m->private)
			wpstat_rows_put(m->private);
		m->private = pin();
	}
	if (!m->private)
		return NULL;
	return *pos ? rows_find(m->private, pos) : SEQ_START_TOKEN;
}

static void *rows_next(struct seq_file *m, void *v, loff_t *pos)
{
	++*pos;
	return rows_find(m->private, pos);
}

static void rows_stop(struct seq_file *m, void *v)
{
	if (!v && m->private) {		/* the end of the pass */
		wpstat_rows_put(m->private);
		m->private = NULL;
	}
}

static int rows_release(struct inode *inode, struct file *file)
{
	struct seq_file *m = file->private_data;

	if (m->private)
		wpstat_rows_put(m->private);
	return seq_release(inode, file);
}

/* ---- /proc/wpstat/inodes ------------------------------------------------ */

static struct wpstat_rows *inodes_pin(void)
{
	struct wpstat_table *t = wpstat_table_pin();

	return t ? &t->r : NULL;
}

static void *inodes_start(struct seq_file *m, loff_t *pos)
{
	return rows_start(m, pos, inodes_pin);
}

static int inodes_show(struct seq_file *m, void *v)
{
	struct wpstat_entry *e = v;
	u64 count[WPC_NR];
	struct wpstat_key key;
	u32 state;
	int c, i;

	if (v == SEQ_START_TOKEN) {
		seq_puts(m, "dev ino gen");
		for (i = 0; i < ARRAY_SIZE(inodes_columns); i++) {
			c = inodes_columns[i];
			seq_printf(m, " %s", c < 0 ? wpstat_key_column_names[-1 - c] :
				   wpstat_counters[c].name);
		}
		seq_putc(m, '\n');
		return 0;
	}
	/*
	 * A row given to another inode while it is read (its state counts
	 * the takings) would show one file's key with the other's counts:
	 * skip it, as the pass would have had it been read a moment later
	 * or earlier.
	 */
	/* Pairs with the release in wpstat_table_recycle(). */
	state = smp_load_acquire(&e->state);
	key = e->key;
	for (c = 0; c < WPC_NR; c++)
		count[c] = atomic64_read(&e->count[c]);
	/* Key and counts read before the state is read again. */
	smp_rmb();
	if (wpstat_row_kind(state) == WPSTAT_ROW_TAKEN ||
	    wpstat_row_kind(state) == WPSTAT_ROW_FREE ||
	    (READ_ONCE(e->state) & ~WPSTAT_ROW_KIND) !=
	    (state & ~WPSTAT_ROW_KIND))
		return SEQ_SKIP;
	seq_put_decimal_ull(m, "", MAJOR(key.dev));
	seq_put_decimal_ull(m, ":", MINOR(key.dev));
	seq_put_decimal_ull(m, " ", key.ino);
	seq_put_decimal_ull(m, " ", key.gen);
	for (i = 0; i < ARRAY_SIZE(inodes_columns); i++) {
		c = inodes_columns[i];
		if (c == WPSTAT_COL_KEY(WPSTAT_KEYCOL_SUBVOL))
			seq_put_decimal_ull(m, " ", wpstat_sb_subvol(key.sb));
		else
			wpstat_seq_counter(m, c, count[c]);
	}
	seq_putc(m, '\n');
	return 0;
}

static const struct seq_operations inodes_seq_ops = {
	.start = inodes_start,
	.next = rows_next,
	.stop = rows_stop,
	.show = inodes_show,
};

static int inodes_open(struct inode *inode, struct file *file)
{
	return seq_open(file, &inodes_seq_ops);
}

static const struct proc_ops inodes_proc_ops = {
	.proc_open = inodes_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = rows_release,
};

/* ---- /proc/wpstat/stalls (the table: wpstat_stalls.c) -------------------- */

static struct wpstat_rows *stalls_pin(void)
{
	struct wpstat_stalls *s = wpstat_stalls_pin();

	return s ? &s->r : NULL;
}

static void *stalls_start(struct seq_file *m, loff_t *pos)
{
	return rows_start(m, pos, stalls_pin);
}

static int stalls_show(struct seq_file *m, void *v)
{
	struct wpstat_stall *r = v;
	int f, i;

	if (v == SEQ_START_TOKEN) {
		seq_puts(m, "tgid comm dev ino gen cgroup");
		for (i = 0; i < ARRAY_SIZE(stalls_columns); i++) {
			f = stalls_columns[i];
			seq_printf(m, " %s", f < 0 ? wpstat_key_column_names[-1 - f] :
				   wpstat_stall_fields[f].name);
		}
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
	for (i = 0; i < ARRAY_SIZE(stalls_columns); i++) {
		f = stalls_columns[i];
		if (f == WPSTAT_COL_KEY(WPSTAT_KEYCOL_SUBVOL))
			seq_put_decimal_ull(m, " ", wpstat_sb_subvol(r->key.sb));
		else if (wpstat_counter_available(wpstat_stall_fields[f].like))
			seq_put_decimal_ull(m, " ", atomic64_read(&r->count[f]));
		else
			seq_puts(m, " -");
	}
	seq_putc(m, '\n');
	return 0;
}

static const struct seq_operations stalls_seq_ops = {
	.start = stalls_start,
	.next = rows_next,
	.stop = rows_stop,
	.show = stalls_show,
};

static int stalls_open(struct inode *inode, struct file *file)
{
	return seq_open(file, &stalls_seq_ops);
}

static const struct proc_ops stalls_proc_ops = {
	.proc_open = stalls_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = rows_release,
};

/* Root only, like /proc/wpstat/inodes: other users' processes and files. */
static int wpstat_stalls_proc_init(struct proc_dir_entry *dir)
{
	return proc_create("stalls", 0400, dir, &stalls_proc_ops) ? 0 : -ENOMEM;
}


/* ---- /proc/wpstat/summary ----------------------------------------------- */

/*
 * World-readable and cheap: no lock a reader could hold against a reset,
 * no walk of the table; the table cannot be freed inside the RCU section.
 */
static int summary_show(struct seq_file *m, void *v)
{
	struct wpstat_table *t;
	u64 total[WPC_NR], untracked, unattributed, reclaimed = 0, compactions;
	u64 recycled;
	size_t bytes, cpu = 0;
	unsigned int nkrp;
	u32 tracked, evicted;
	int c, p, i;

	rcu_read_lock();
	t = rcu_dereference(wpstat_table);
	for (c = 0; c < WPC_NR; c++)
		total[c] = WPSTAT_COUNTER_SUMS(t, total, c);
	untracked = WPSTAT_SUMS(t, untracked_events);
	unattributed = WPSTAT_SUMS(t, bdp_unattributed);
	tracked = t ? atomic_read(&t->nr_tracked) : 0;
	evicted = t ? atomic_read(&t->nr_evicted) : 0;
	compactions = t ? t->compactions : 0;
	recycled = t ? READ_ONCE(t->recycled) : 0;
	for (i = 0; t && i < WPSTAT_GONE_DEVS; i++)
		reclaimed += READ_ONCE(t->gone[i].inodes);
	rcu_read_unlock();

	for (c = 0; c < WPC_NR; c++) {
		seq_puts(m, wpstat_counters[c].name);
		wpstat_seq_counter(m, c, total[c]);
		seq_putc(m, '\n');
	}
	seq_printf(m, "tracked_inodes %u\n", tracked);
	seq_printf(m, "max_inodes %u\n", wpstat_max_inodes);
	seq_printf(m, "untracked_events %llu\n", untracked);
	seq_printf(m, "entry_bytes %zu\n", wpstat_entry_bytes());
	seq_printf(m, "enabled %d\n", READ_ONCE(wpstat_enabled));
	seq_printf(m, "floor %d\n", wpstat_floor_mode());
	seq_printf(m, "task_contexts_exhausted %llu\n", wpstat_tctx_exhausted());
	for (p = 0; p < WPP_NR; p++)
		seq_printf(m, "missed_%s %llu\n", wpstat_probe_name(p),
			   wpstat_probe_missed(p));
	seq_printf(m, "bdp_unattributed %llu\n", unattributed);
	seq_printf(m, "gone_marked_inodes %u\n", evicted);
	seq_printf(m, "reclaimed_inodes %llu\n", reclaimed);
	seq_printf(m, "recycled_inodes %llu\n", recycled);
	seq_printf(m, "compactions %llu\n", compactions);
	seq_printf(m, "compaction_runs %llu\n", wpstat_compact_runs());
	seq_printf(m, "compaction_cpu_ns %llu\n", wpstat_compact_cpu_ns());
	seq_printf(m, "table_swaps %llu\n", wpstat_table_swap_count());
	seq_printf(m, "task_contexts_stale %llu\n", wpstat_tctx_stale_count());
	seq_printf(m, "task_context_waits_dropped %llu\n",
		   wpstat_tctx_stale_waits());
	seq_printf(m, "task_contexts_used %u\n", wpstat_tctx_used());
	seq_printf(m, "wb_work_checked %llu\n", wpstat_wb_work_checked());
	bytes = wpstat_table_bytes(&cpu) + wpstat_stalls_bytes() +
		wpstat_stall_cpu_bytes(&cpu) +
		wpstat_hist_bytes(&cpu) + wpstat_tctx_bytes() +
		wpstat_handlers_bytes(&cpu) + wpstat_attach_bytes(&cpu, &nkrp);
	seq_printf(m, "module_bytes %zu\n", bytes);
	seq_printf(m, "module_cpu_bytes %zu\n", cpu);
	seq_printf(m, "possible_cpus %u\n", num_possible_cpus());
	seq_printf(m, "kretprobes %u\n", nkrp);
	seq_printf(m, "wb_work_layout_off %d\n", wpstat_wb_work_off());
	wpstat_stalls_summary(m);
	seq_puts(m, "histogram_scope ");
	wpstat_hist_scope_show(m);
	seq_putc(m, '\n');
	return 0;
}

static int summary_open(struct inode *inode, struct file *file)
{
	return single_open(file, summary_show, NULL);
}

static const struct proc_ops summary_proc_ops = {
	.proc_open = summary_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = single_release,
};

/* ---- /proc/wpstat/gone --------------------------------------------------- */

/*
 * Where the counts are that no row shows: per filesystem, the rows that
 * compaction reclaimed (inodes destroyed), then "untracked", what found no
 * slot at all.  The rows of /proc/wpstat/inodes plus these lines add up to
 * the summary's totals, counter by counter.
 */
static int gone_show(struct seq_file *m, void *v)
{
	struct wpstat_table *t = wpstat_table_pin();
	int c, i;

	seq_puts(m, "dev inodes");
	for (c = 0; c < WPC_NR; c++)
		seq_printf(m, " %s", wpstat_counters[c].name);
	seq_putc(m, '\n');
	for (i = 0; t && i < WPSTAT_GONE_DEVS; i++) {
		const struct wpstat_gone *g = &t->gone[i];

		if (!READ_ONCE(g->inodes))
			continue;
		if (g->dev)
			seq_printf(m, "%u:%u", MAJOR(g->dev), MINOR(g->dev));
		else
			seq_puts(m, "other");
		seq_put_decimal_ull(m, " ", READ_ONCE(g->inodes));
		for (c = 0; c < WPC_NR; c++)
			wpstat_seq_counter(m, c, READ_ONCE(g->count[c]));
		seq_putc(m, '\n');
	}
	seq_puts(m, "untracked -");
	for (c = 0; c < WPC_NR; c++)
		wpstat_seq_counter(m, c, WPSTAT_COUNTER_SUMS(t, untracked, c));
	seq_putc(m, '\n');
	wpstat_table_put(t);
	return 0;
}

static int gone_open(struct inode *inode, struct file *file)
{
	return single_open(file, gone_show, NULL);
}

static const struct proc_ops gone_proc_ops = {
	.proc_open = gone_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = single_release,
};

/* ---- /proc/wpstat/counters ---------------------------------------------- */

/*
 * The module's counter list, for tools to check theirs against: name, the
 * level that produces it, whether it is produced now, and what it counts.
 */
static int counters_show(struct seq_file *m, void *v)
{
	int c;

	seq_puts(m, "name level available help\n");
	for (c = 0; c < WPC_NR; c++)
		seq_printf(m, "%s %s %d %s\n", wpstat_counters[c].name,
			   wpstat_level_name(wpstat_counters[c].level),
			   wpstat_counter_available(c), wpstat_counters[c].help);
	return 0;
}

static int counters_open(struct inode *inode, struct file *file)
{
	return single_open(file, counters_show, NULL);
}

static const struct proc_ops counters_proc_ops = {
	.proc_open = counters_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = single_release,
};

int wpstat_proc_init(void)
{
	wpstat_proc_dir = proc_mkdir("wpstat", NULL);
	if (!wpstat_proc_dir)
		return -ENOMEM;
	if (!proc_create("inodes", 0400, wpstat_proc_dir, &inodes_proc_ops) ||
	    !proc_create("summary", 0444, wpstat_proc_dir, &summary_proc_ops) ||
	    !proc_create("counters", 0444, wpstat_proc_dir, &counters_proc_ops) ||
	    !proc_create("gone", 0444, wpstat_proc_dir, &gone_proc_ops) ||
	    wpstat_stalls_proc_init(wpstat_proc_dir)) {
		proc_remove(wpstat_proc_dir);
		return -ENOMEM;
	}
	return 0;
}

void wpstat_proc_exit(void)
{
	proc_remove(wpstat_proc_dir);
}
