// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_output.c - /proc/wpstat/{inodes,summary} and debugfs wpstat/.
 *
 * /proc/wpstat/inodes is root-only (0400): per-file write activity of other
 * users is not theirs to see, as with /proc/PID/io.  The summary holds only
 * system-wide totals, like /proc/vmstat, and is world-readable.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/kdev_t.h>
#include <linux/pid.h>
#include <linux/proc_fs.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <generated/utsrelease.h>

#include "wpstat.h"

static struct proc_dir_entry *wpstat_proc_dir;
static struct dentry *wpstat_debugfs_dir;
static DEFINE_MUTEX(wpstat_control_mutex);

static void wpstat_seq_counter(struct seq_file *m, enum wpstat_counter c,
			       u64 v)
{
	/* Not seq_printf(): a full table is 65536 rows of 15 numbers. */
	if (wpstat_counter_available(c))
		seq_put_decimal_ull(m, " ", v);
	else
		seq_puts(m, " -");
}

/* ---- /proc/wpstat/inodes ------------------------------------------------ */

/* *pos is 0 for the header, entry index + 1 afterwards. */
static void *inodes_find(struct wpstat_table *t, loff_t *pos)
{
	u32 n = min_t(u32, atomic_read(&t->nr_reserved), t->max_entries);
	loff_t i;

	for (i = *pos - 1; i < n; i++) {
		/* Pairs with the release in wpstat_table_find(). */
		if (smp_load_acquire(&t->entries[i].valid)) {
			*pos = i + 1;
			return &t->entries[i];
		}
	}
	*pos = n + 1;
	return NULL;
}

/* The whole read walks the table pinned at open (inodes_open). */
static void *inodes_start(struct seq_file *m, loff_t *pos)
{
	struct wpstat_table *t = m->private;

	if (!t)
		return NULL;
	if (*pos == 0)
		return SEQ_START_TOKEN;
	return inodes_find(t, pos);
}

static void *inodes_next(struct seq_file *m, void *v, loff_t *pos)
{
	++*pos;
	return inodes_find(m->private, pos);
}

static void inodes_stop(struct seq_file *m, void *v)
{
}

static int inodes_show(struct seq_file *m, void *v)
{
	struct wpstat_entry *e = v;
	int c;

	if (v == SEQ_START_TOKEN) {
		seq_puts(m, "dev ino gen");
		for (c = 0; c < WPC_NR; c++)
			seq_printf(m, " %s", wpstat_counter_names[c]);
		seq_putc(m, '\n');
		return 0;
	}
	seq_put_decimal_ull(m, "", MAJOR(e->key.dev));
	seq_put_decimal_ull(m, ":", MINOR(e->key.dev));
	seq_put_decimal_ull(m, " ", e->key.ino);
	seq_put_decimal_ull(m, " ", e->key.gen);
	for (c = 0; c < WPC_NR; c++)
		wpstat_seq_counter(m, c, atomic64_read(&e->count[c]));
	seq_putc(m, '\n');
	return 0;
}

static const struct seq_operations inodes_seq_ops = {
	.start = inodes_start,
	.next = inodes_next,
	.stop = inodes_stop,
	.show = inodes_show,
};

/* ---- /proc/wpstat/summary ----------------------------------------------- */

static u64 wpstat_sum(size_t offset)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += *(u64 *)((char *)per_cpu_ptr(&wpstat_stats, cpu) + offset);
	return sum;
}

#define WPSTAT_SUM(field) wpstat_sum(offsetof(struct wpstat_stats, field))

static int summary_show(struct seq_file *m, void *v)
{
	struct wpstat_table *t;
	u32 tracked = 0, i, n;
	int c, p;

	for (c = 0; c < WPC_NR; c++) {
		seq_puts(m, wpstat_counter_names[c]);
		wpstat_seq_counter(m, c, WPSTAT_SUM(total[c]));
		seq_putc(m, '\n');
	}

	t = wpstat_table_pin();
	n = t ? min_t(u32, atomic_read(&t->nr_reserved), t->max_entries) : 0;
	for (i = 0; i < n; i++)	/* pairs with wpstat_table_find() */
		tracked += smp_load_acquire(&t->entries[i].valid);
	wpstat_table_put(t);

	seq_printf(m, "tracked_inodes %u\n", tracked);
	seq_printf(m, "max_inodes %u\n", wpstat_max_inodes);
	seq_printf(m, "untracked_events %llu\n", WPSTAT_SUM(untracked));
	seq_printf(m, "entry_bytes %zu\n", wpstat_entry_bytes());
	seq_printf(m, "enabled %d\n", READ_ONCE(wpstat_enabled));
	seq_printf(m, "floor %d\n", wpstat_floor);
	seq_printf(m, "task_contexts_exhausted %llu\n", wpstat_tctx_exhausted());
	for (p = 0; p < WPP_NR; p++)
		seq_printf(m, "missed_%s %llu\n", wpstat_probe_name(p),
			   wpstat_probe_missed(p));
	return 0;
}

/* ---- debugfs wpstat/control --------------------------------------------- */

#define WPSTAT_CONTROL_MAX	64

static int control_filter_dev(const char *arg)
{
	unsigned int major, minor;
	char tail;

	if (sscanf(arg, "%u:%u%c", &major, &minor, &tail) != 2)
		return -EINVAL;
	if (major >= (1U << 12) || minor >= (1U << 20) || (!major && !minor))
		return -EINVAL;
	WRITE_ONCE(wpstat_filter_dev, MKDEV(major, minor));
	return 0;
}

static int control_filter_pid(const char *arg)
{
	struct pid *pid;
	int nr, ret;

	ret = kstrtoint(arg, 10, &nr);
	if (ret || nr <= 0)
		return -EINVAL;
	/* The writer names a TGID in its own namespace; probes see global ones. */
	rcu_read_lock();
	pid = find_vpid(nr);
	ret = pid && pid_task(pid, PIDTYPE_TGID) ? 0 : -ESRCH;
	if (!ret)
		WRITE_ONCE(wpstat_filter_tgid, pid_nr(pid));
	rcu_read_unlock();
	return ret;
}

static int control_exec(char *cmd)
{
	char *words[4];
	int n = 0;
	char *w;

	while ((w = strsep(&cmd, " \t")) != NULL) {
		if (!*w)
			continue;
		if (n == ARRAY_SIZE(words))
			return -EINVAL;
		words[n++] = w;
	}
	if (n == 1 && !strcmp(words[0], "reset"))
		return wpstat_reset();
	if (n == 1 && !strcmp(words[0], "enable")) {
		WRITE_ONCE(wpstat_enabled, true);
		return 0;
	}
	if (n == 1 && !strcmp(words[0], "disable")) {
		WRITE_ONCE(wpstat_enabled, false);
		return 0;
	}
	if (n == 2 && !strcmp(words[0], "filter") && !strcmp(words[1], "none")) {
		WRITE_ONCE(wpstat_filter_dev, 0);
		WRITE_ONCE(wpstat_filter_tgid, 0);
		return 0;
	}
	if (n == 3 && !strcmp(words[0], "filter") && !strcmp(words[1], "dev")) {
		if (!strcmp(words[2], "none")) {
			WRITE_ONCE(wpstat_filter_dev, 0);
			return 0;
		}
		return control_filter_dev(words[2]);
	}
	if (n == 3 && !strcmp(words[0], "filter") && !strcmp(words[1], "pid")) {
		if (!strcmp(words[2], "none")) {
			WRITE_ONCE(wpstat_filter_tgid, 0);
			return 0;
		}
		return control_filter_pid(words[2]);
	}
	return -EINVAL;
}

static ssize_t control_write(struct file *file, const char __user *ubuf,
			     size_t len, loff_t *ppos)
{
	char buf[WPSTAT_CONTROL_MAX + 1];
	size_t i;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (len == 0 || len > WPSTAT_CONTROL_MAX)
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	/*
	 * One command per write; binary, or a second line, is malformed.  So
	 * is any byte over 0x7f: the kernel's ctype is Latin-1, where 0xa0
	 * is printable and a space that strim() would cut off.
	 */
	for (i = 0; i < len; i++) {
		if (buf[i] == '\n' && i == len - 1)
			break;
		if (!isascii(buf[i]) || (!isprint(buf[i]) && buf[i] != '\t'))
			return -EINVAL;
	}
	mutex_lock(&wpstat_control_mutex);
	ret = control_exec(strim(buf));
	mutex_unlock(&wpstat_control_mutex);
	return ret ? ret : len;
}

static const struct file_operations control_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = control_write,
	.llseek = noop_llseek,
};

/* ---- debugfs wpstat/{probes,histograms,config} -------------------------- */

static int probes_show(struct seq_file *m, void *v)
{
	wpstat_probes_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(probes);

static int histograms_show(struct seq_file *m, void *v)
{
	static const char * const names[WPH_NR] = {
		[WPH_MKWRITE] = "mkwrite_ns",
		[WPH_STABLE_WAIT] = "stable_wait_ns",
		[WPH_BDP_PAUSE] = "bdp_pause_ns",
	};
	int h, b;

	if (!IS_ENABLED(CONFIG_WPSTAT_HISTOGRAMS)) {
		seq_puts(m, "# histograms not built (CONFIG_WPSTAT_HISTOGRAMS=n)\n");
		return 0;
	}
	seq_puts(m, "histogram low_ns high_ns count\n");
	for (h = 0; h < WPH_NR; h++) {
		for (b = 0; b < WPSTAT_HIST_BUCKETS; b++) {
			u64 n = WPSTAT_SUM(hist[h][b]);

			if (n)
				seq_printf(m, "%s %llu %llu %llu\n", names[h],
					   b ? 1ULL << b : 0, (2ULL << b) - 1, n);
		}
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(histograms);

static int config_show(struct seq_file *m, void *v)
{
	u32 dev = READ_ONCE(wpstat_filter_dev);

	seq_printf(m, "kernel %s\n", UTS_RELEASE);
	seq_printf(m, "max_inodes %u\n", wpstat_max_inodes);
	seq_printf(m, "entry_bytes %zu\n", wpstat_entry_bytes());
	seq_printf(m, "enabled %d\n", READ_ONCE(wpstat_enabled));
	seq_printf(m, "floor %d\n", wpstat_floor);
	if (dev)
		seq_printf(m, "filter_dev %u:%u\n", MAJOR(dev), MINOR(dev));
	else
		seq_puts(m, "filter_dev none\n");
	/* The global TGID: probes compare against current->tgid. */
	if (READ_ONCE(wpstat_filter_tgid))
		seq_printf(m, "filter_pid %d\n", READ_ONCE(wpstat_filter_tgid));
	else
		seq_puts(m, "filter_pid none\n");
	seq_printf(m, "histograms %s\n",
		   IS_ENABLED(CONFIG_WPSTAT_HISTOGRAMS) ? "y" : "n");
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(config);

static int inodes_open(struct inode *inode, struct file *file)
{
	int ret = seq_open(file, &inodes_seq_ops);

	if (!ret)
		((struct seq_file *)file->private_data)->private =
			wpstat_table_pin();
	return ret;
}

static int inodes_release(struct inode *inode, struct file *file)
{
	wpstat_table_put(((struct seq_file *)file->private_data)->private);
	return seq_release(inode, file);
}

static const struct proc_ops inodes_proc_ops = {
	.proc_open = inodes_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = inodes_release,
};

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

static void wpstat_debugfs_init(void)
{
	if (!IS_ENABLED(CONFIG_WPSTAT_DEBUGFS))
		return;
	/* debugfs failures are not fatal: /proc still works. */
	wpstat_debugfs_dir = debugfs_create_dir("wpstat", NULL);
	debugfs_create_file("control", 0200, wpstat_debugfs_dir, NULL,
			    &control_fops);
	debugfs_create_file("probes", 0400, wpstat_debugfs_dir, NULL,
			    &probes_fops);
	debugfs_create_file("histograms", 0400, wpstat_debugfs_dir, NULL,
			    &histograms_fops);
	debugfs_create_file("config", 0400, wpstat_debugfs_dir, NULL,
			    &config_fops);
}

int wpstat_output_init(void)
{
	wpstat_proc_dir = proc_mkdir("wpstat", NULL);
	if (!wpstat_proc_dir)
		return -ENOMEM;
	if (!proc_create("inodes", 0400, wpstat_proc_dir, &inodes_proc_ops) ||
	    !proc_create("summary", 0444, wpstat_proc_dir, &summary_proc_ops)) {
		proc_remove(wpstat_proc_dir);
		return -ENOMEM;
	}
	wpstat_debugfs_init();
	return 0;
}

void wpstat_output_exit(void)
{
	debugfs_remove(wpstat_debugfs_dir);
	proc_remove(wpstat_proc_dir);
}
