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
#include <linux/namei.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <generated/utsrelease.h>

#include "wpstat.h"

static struct dentry *wpstat_debugfs_dir;
static DEFINE_MUTEX(wpstat_control_mutex);

/* ---- control ------------------------------------------------------------ */

/* Room for "histogram path " and a path. */
#define WPSTAT_CONTROL_MAX	(PATH_MAX + 16)

/* A decimal number with no sign, space or other decoration. */
static int control_uint(const char *s, unsigned int *v)
{
	return isdigit(s[0]) ? kstrtouint(s, 10, v) : -EINVAL;
}

/*
 * "MAJ:MIN" in decimal, each part checked against what a dev_t holds
 * (kstrtouint fails on overflow; sscanf("%u") would wrap 4294967304 to 8).
 * @rest: where a further ":..." part starts, or NULL if none is allowed.
 */
static int control_parse_dev(char *arg, u32 *dev, char **rest)
{
	unsigned int major, minor;
	char *colon = strchr(arg, ':'), *colon2;

	if (!colon)
		return -EINVAL;
	*colon = '\0';
	colon2 = strchr(colon + 1, ':');
	if (colon2) {
		if (!rest)
			return -EINVAL;
		*colon2 = '\0';
		*rest = colon2 + 1;
	} else if (rest) {
		*rest = NULL;
	}
	if (control_uint(arg, &major) || control_uint(colon + 1, &minor))
		return -EINVAL;
	if (major >= (1U << 12) || minor >= (1U << 20) || (!major && !minor))
		return -EINVAL;
	*dev = MKDEV(major, minor);
	return 0;
}

static int control_filter_dev(char *arg)
{
	u32 dev;
	int ret = control_parse_dev(arg, &dev, NULL);

	if (!ret)
		WRITE_ONCE(wpstat_filter_dev, dev);
	return ret;
}

/* "inode MAJ:MIN:INO[:GEN]"; without GEN, any generation of the inode. */
static int control_hist_inode(char *arg, struct wpstat_hist_scope *scope)
{
	char *rest, *gen;
	unsigned long long ino;
	unsigned int g = 0;

	if (control_parse_dev(arg, &scope->dev, &rest) || !rest)
		return -EINVAL;
	gen = strchr(rest, ':');
	if (gen) {
		*gen++ = '\0';
		if (control_uint(gen, &g))
			return -EINVAL;
	}
	if (!isdigit(rest[0]) || kstrtoull(rest, 10, &ino) || !ino)
		return -EINVAL;
	scope->kind = WPHS_INODE;
	scope->ino = ino;
	scope->gen = g;
	scope->any_gen = !gen;
	return 0;
}

/*
 * "path FILE": the file's inode as the kernel names it (an absolute path).
 * The inode events count on: d_real_inode() is overlayfs's upper (or, not
 * yet copied up, lower) inode, not the overlay's own.  Called without the
 * control mutex: a lookup that hangs (FUSE, NFS) holds up only its writer.
 */
static int control_hist_path(const char *path, struct wpstat_hist_scope *scope)
{
	struct inode *inode;
	struct path p;
	int ret;

	if (path[0] != '/')
		return -EINVAL;
	ret = kern_path(path, LOOKUP_FOLLOW, &p);
	if (ret)
		return ret;
	inode = d_real_inode(p.dentry);
	scope->kind = WPHS_INODE;
	scope->dev = inode->i_sb->s_dev;
	scope->ino = inode->i_ino;
	scope->gen = inode->i_generation;
	scope->any_gen = false;
	path_put(&p);
	return 0;
}

/* histogram all | dev MAJ:MIN | inode MAJ:MIN:INO[:GEN] (path: see caller) */
static int control_histogram(char **words, int n)
{
	struct wpstat_hist_scope scope = { .kind = WPHS_ALL };

	if (n == 2 && !strcmp(words[1], "all"))
		return wpstat_hist_set_scope(&scope);
	if (n != 3)
		return -EINVAL;
	if (!strcmp(words[1], "dev")) {
		if (control_parse_dev(words[2], &scope.dev, NULL))
			return -EINVAL;
		scope.kind = WPHS_DEV;
	} else if (!strcmp(words[1], "inode")) {
		if (control_hist_inode(words[2], &scope))
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	return wpstat_hist_set_scope(&scope);
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

/*
 * "reset": every table and the histograms at once, or, short of memory,
 * none (everything is allocated before anything is swapped).
 */
static int control_reset(void)
{
	struct wpstat_stalls *stalls = wpstat_stalls_reset_prepare();
	struct wpstat_table_reset r;

	if (wpstat_table_reset_prepare(&r) || !stalls) {
		wpstat_table_reset_abort(&r);
		wpstat_stalls_reset_abort(stalls);
		return -ENOMEM;
	}
	wpstat_table_reset_commit(&r);
	wpstat_stalls_reset_commit(stalls);
	return 0;
}

static const char hist_path[] = "histogram path ";

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
		return control_reset();
	if (n == 1 && !strcmp(words[0], "enable")) {
		WRITE_ONCE(wpstat_enabled, true);
		return 0;
	}
	if (n == 1 && !strcmp(words[0], "disable")) {
		WRITE_ONCE(wpstat_enabled, false);
		return 0;
	}
	if (n >= 2 && !strcmp(words[0], "histogram"))
		return control_histogram(words, n);
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
	struct wpstat_hist_scope scope;
	char *buf, *cmd;
	size_t i;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (len == 0 || len > WPSTAT_CONTROL_MAX)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, len);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	/*
	 * One command per write; binary, or a second line, is malformed.  So
	 * is any byte over 0x7f: the kernel's ctype is Latin-1, where 0xa0
	 * is printable and a space that strim() would cut off.
	 */
	for (i = 0; i < len; i++) {
		if (buf[i] == '\n' && i == len - 1)
			break;
		if (!isascii(buf[i]) || (!isprint(buf[i]) && buf[i] != '\t')) {
			kfree(buf);
			return -EINVAL;
		}
	}
	cmd = strim(buf);
	/* The one command whose argument may hold spaces: the rest is a path. */
	if (!strncmp(cmd, hist_path, sizeof(hist_path) - 1)) {
		ret = control_hist_path(skip_spaces(cmd + sizeof(hist_path) - 1),
					&scope);
		if (!ret) {
			mutex_lock(&wpstat_control_mutex);
			ret = wpstat_hist_set_scope(&scope);
			mutex_unlock(&wpstat_control_mutex);
		}
	} else {
		mutex_lock(&wpstat_control_mutex);
		ret = control_exec(cmd);
		mutex_unlock(&wpstat_control_mutex);
	}
	kfree(buf);
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
	struct wpstat_hist_counts *counts;
	int h, b;

	if (!IS_ENABLED(CONFIG_WPSTAT_HISTOGRAMS)) {
		seq_puts(m, "# histograms not built (CONFIG_WPSTAT_HISTOGRAMS=n)\n");
		return 0;
	}
	counts = kzalloc(sizeof(*counts), GFP_KERNEL);
	if (!counts)
		return -ENOMEM;
	wpstat_hist_read(counts);
	seq_puts(m, "histogram low_ns high_ns count\n");
	for (h = 0; h < WPH_NR; h++) {
		for (b = 0; b < WPSTAT_HIST_BUCKETS; b++) {
			if (counts->n[h][b])
				seq_printf(m, "%s %llu %llu %llu\n", names[h],
					   b ? 1ULL << b : 0, (2ULL << b) - 1,
					   counts->n[h][b]);
		}
	}
	kfree(counts);
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
	seq_puts(m, "histogram_scope ");
	wpstat_hist_scope_show(m);
	seq_putc(m, '\n');
	seq_printf(m, "max_stalls %u\n", wpstat_max_stalls);
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
		 "  histogram all | histogram dev MAJ:MIN\n"
		 "  histogram inode MAJ:MIN:INO[:GEN] | histogram path /ABSOLUTE/FILE\n"
		 "    (durations of that scope only; starts the histograms empty)\n"
		 "counters (/proc/wpstat/inodes columns; '-': not produced at this level or not attached;\n"
		 "          *_max_ns: the worst single event, not a sum):\n");
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
