// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_debugfs.c - debugfs wpstat/: the control file and its parser,
 * the probe status, histograms, configuration and help.
 *
 * Only root (CAP_SYS_ADMIN) may write control; the other files are 0400
 * (debugfs itself is root-only).  A bad command fails with EINVAL and
 * changes nothing.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/kdev_t.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <generated/utsrelease.h>

#include "wpstat.h"

static struct dentry *wpstat_debugfs_dir;
static DEFINE_MUTEX(wpstat_control_mutex);

/* ---- control ------------------------------------------------------------ */

#define WPSTAT_CONTROL_MAX	64

/*
 * "MAJ:MIN" in decimal, each part checked against what a dev_t holds
 * (kstrtouint fails on overflow; sscanf("%u") would wrap 4294967304 to 8).
 */
static int control_filter_dev(char *arg)
{
	unsigned int major, minor;
	char *colon = strchr(arg, ':');

	if (!colon)
		return -EINVAL;
	*colon = '\0';
	if (!isdigit(arg[0]) || !isdigit(colon[1]) ||
	    kstrtouint(arg, 10, &major) || kstrtouint(colon + 1, 10, &minor))
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
	/* The writer names a TGID in its own namespace. */
	rcu_read_lock();
	pid = find_vpid(nr);
	if (pid && pid_task(pid, PIDTYPE_TGID))
		pid = get_pid(pid);
	else
		pid = NULL;
	rcu_read_unlock();
	if (!pid)
		return -ESRCH;
	wpstat_set_filter_pid(pid);
	return 0;
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
	if (n == 2 && !strcmp(words[0], "level")) {
		int level = wpstat_level_parse(words[1]);

		return level < 0 ? level : wpstat_set_level(level);
	}
	if (n == 2 && !strcmp(words[0], "filter") && !strcmp(words[1], "none")) {
		WRITE_ONCE(wpstat_filter_dev, 0);
		wpstat_set_filter_pid(NULL);
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
			wpstat_set_filter_pid(NULL);
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

/* ---- probes, histograms, config, help ----------------------------------- */

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
	struct wpstat_table *t;
	int h, b;

	if (!IS_ENABLED(CONFIG_WPSTAT_HISTOGRAMS)) {
		seq_puts(m, "# histograms not built (CONFIG_WPSTAT_HISTOGRAMS=n)\n");
		return 0;
	}
	seq_puts(m, "histogram low_ns high_ns count\n");
	t = wpstat_table_pin();
	for (h = 0; h < WPH_NR; h++) {
		for (b = 0; b < WPSTAT_HIST_BUCKETS; b++) {
			u64 n = WPSTAT_SUMS(t, hist[h][b]);

			if (n)
				seq_printf(m, "%s %llu %llu %llu\n", names[h],
					   b ? 1ULL << b : 0, (2ULL << b) - 1, n);
		}
	}
	wpstat_table_put(t);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(histograms);

static int config_show(struct seq_file *m, void *v)
{
	u32 dev = READ_ONCE(wpstat_filter_dev);
	struct pid *pid;

	seq_printf(m, "kernel %s\n", UTS_RELEASE);
	seq_printf(m, "max_inodes %u\n", wpstat_max_inodes);
	seq_printf(m, "entry_bytes %zu\n", wpstat_entry_bytes());
	seq_printf(m, "enabled %d\n", READ_ONCE(wpstat_enabled));
	seq_printf(m, "floor %d\n", wpstat_floor_mode());
	if (dev)
		seq_printf(m, "filter_dev %u:%u\n", MAJOR(dev), MINOR(dev));
	else
		seq_puts(m, "filter_dev none\n");
	/*
	 * The global TGID of the process filtered on; once it has exited the
	 * filter matches nothing (the number may name another process now).
	 */
	rcu_read_lock();
	pid = READ_ONCE(wpstat_filter_pid);
	if (pid)
		seq_printf(m, "filter_pid %d\nfilter_pid_alive %d\n", pid_nr(pid),
			   pid_task(pid, PIDTYPE_TGID) != NULL);
	else
		seq_puts(m, "filter_pid none\n");
	rcu_read_unlock();
	seq_printf(m, "histograms %s\n",
		   IS_ENABLED(CONFIG_WPSTAT_HISTOGRAMS) ? "y" : "n");
	seq_printf(m, "level %s\n", wpstat_level_name(wpstat_get_level()));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(config);

/* The control grammar and every counter, from the one counter list. */
static int help_show(struct seq_file *m, void *v)
{
	int c;

	seq_puts(m,
		 "control (one command per write):\n"
		 "  reset | enable | disable | level counts|timing\n"
		 "  filter dev MAJ:MIN | filter pid TGID\n"
		 "  filter dev none | filter pid none | filter none\n"
		 "counters (/proc/wpstat/inodes columns; '-': not produced at this level or not attached):\n");
	for (c = 0; c < WPC_NR; c++)
		seq_printf(m, "  %-16s %s%s\n", wpstat_counters[c].name,
			   wpstat_counters[c].help,
			   wpstat_counters[c].level == WPL_TIMING ?
			   " [level timing]" : "");
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(help);

void wpstat_debugfs_init(void)
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
	debugfs_create_file("help", 0400, wpstat_debugfs_dir, NULL,
			    &help_fops);
}

void wpstat_debugfs_exit(void)
{
	debugfs_remove(wpstat_debugfs_dir);
}
