// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat export: the counters as a node_exporter textfile, DIR/wpstat.prom,
 * written whole or not at all (a temporary file renamed over it), once or
 * every --interval.
 *
 * The number of series is bounded whatever the table holds: per-inode
 * series only for the --top N files with the most stall time (wpstat
 * show's stall column; then the most write-protect faults), one "other"
 * series per filesystem for the rest of its files, and per-filesystem
 * totals.  Both "other" and the totals include the rows the module
 * recycled (/proc/wpstat/gone), so that for every summed counter
 *
 *   sum by (dev) (wpstat_X_total) == wpstat_fs_X_total
 *   sum (wpstat_fs_X_total) == the module's total
 *
 * (Past 255 filesystems the rest fold into dev="other", in the totals and
 * "other" alike; a top file there keeps its own dev label.)
 *
 * A file that enters or leaves the top N moves its counts between its own
 * series and its filesystem's "other": per-file rates are for the files
 * that stay on top; per-filesystem totals never go back.
 */
#include "wpstat_cli.h"

#define EXPORT_DEFAULT_DIR	"/var/lib/prometheus/node-exporter"
#define EXPORT_FILE		"wpstat.prom"
#define EXPORT_DEFAULT_TOP	20
#define EXPORT_MAX_TOP		10000
#define EXPORT_MAX_DEVS		256

struct export_opts {
	const char *dir;
	uint64_t top;
	uint64_t interval;	/* ns; 0: once */
	uint64_t count;		/* writes; 0: until a signal */
	struct dir_list dirs;	/* --resolve */
};

/* A filesystem's totals, or the rest of its files that are not on top. */
struct dev_sum {
	char dev[24];			/* "MAJ:MIN", "other", "untracked" */
	struct wpstat_row sum;		/* val/avail by the inodes columns */
};

struct dev_sums {
	size_t n;
	struct dev_sum d[EXPORT_MAX_DEVS];
};

struct export_ctx {
	const struct export_opts *o;
	struct path_cache cache;
	struct stall_parts_at stall;	/* what ranks a file for --top first */
	int wp_col;
};

static void dev_name(char *buf, size_t len, const struct wpstat_row *r)
{
	snprintf(buf, len, "%u:%u", r->major, r->minor);
}

/*
 * @dev's sums in @ds, made if new.  With @fold, past EXPORT_MAX_DEVS - 1
 * filesystems the rest share the last slot, "other", as /proc/wpstat/gone
 * does past its 63: counts are never dropped.  The totals fold; the
 * "other" series take the totals' keys, so they never need to.
 */
static struct dev_sum *dev_sum_get(struct dev_sums *ds, const char *dev,
				   bool fold)
{
	size_t i;

	for (i = 0; i < ds->n; i++)
		if (!strcmp(ds->d[i].dev, dev))
			return &ds->d[i];
	if (fold && ds->n >= EXPORT_MAX_DEVS - 1 && strcmp(dev, "other"))
		return dev_sum_get(ds, "other", fold);
	if (ds->n == EXPORT_MAX_DEVS)	/* not with the totals' keys */
		return &ds->d[ds->n - 1];
	memset(&ds->d[ds->n], 0, sizeof(ds->d[0]));
	snprintf(ds->d[ds->n].dev, sizeof(ds->d[0].dev), "%s", dev);
	return &ds->d[ds->n++];
}

/* Add @val/@avail (columns of @s) into @d: sums add, maxima take the max. */
static void dev_sum_add(struct dev_sum *d, const struct wpstat_snapshot *s,
			const uint64_t *val, const bool *avail)
{
	int c;

	for (c = 0; c < s->ncounters; c++) {
		if (!avail[c])
			continue;
		d->sum.avail[c] = true;
		if (s->max[c])
			d->sum.val[c] = d->sum.val[c] > val[c] ? d->sum.val[c] : val[c];
		else
			d->sum.val[c] += val[c];
	}
}

/*
 * What ranks a file for --top first: its stall time, wpstat show's stall
 * column (every cause's time the level counts: at level counts the
 * stable-page, writeback and dirty-throttling waits).
 */
static uint64_t stall_ns(const struct export_ctx *x, const struct file_row *f)
{
	bool any = false;

	return file_stall_ns(&x->stall, f, &any);
}

static uint64_t wp_faults(const struct export_ctx *x, const struct file_row *f)
{
	return x->wp_col >= 0 && f->avail[x->wp_col] ? f->val[x->wp_col] : 0;
}

static int rank_cmp(const void *pa, const void *pb, void *px)
{
	const struct file_row *a = pa, *b = pb;
	const struct export_ctx *x = px;
	uint64_t sa = stall_ns(x, a), sb = stall_ns(x, b);

	if (sa != sb)
		return sa > sb ? -1 : 1;
	sa = wp_faults(x, a);
	sb = wp_faults(x, b);
	if (sa != sb)
		return sa > sb ? -1 : 1;
	return wpstat_row_key_cmp(a->row, b->row);	/* stable across writes */
}

static void prom_family(FILE *out, const char *metric, const char *counter,
			const char *scope)
{
	const char *help = help_of(counter);

	fprintf(out, "# HELP %s %s (%s).\n# TYPE %s %s\n", metric,
		help ? help : counter, scope, metric, prom_type(counter));
}

/*
 * The page: per-file families (top files, then each filesystem's other),
 * per-filesystem families, then the module's gauges.
 */
static void write_page(FILE *out, const struct wpstat_snapshot *s,
		       const struct file_list *l, size_t top,
		       const struct dev_sums *other,
		       const struct dev_sums *fs,
		       const struct wpstat_kvlist *summary)
{
	char metric[128], fsmetric[128];
	size_t i;
	int c;

	fputs("# HELP wpstat_module_loaded 1 if the wpstat module was loaded when this file was written.\n"
	      "# TYPE wpstat_module_loaded gauge\nwpstat_module_loaded 1\n", out);
	for (c = 0; c < s->ncounters; c++) {
		bool any = false;

		for (i = 0; i < fs->n && !any; i++)
			any = fs->d[i].sum.avail[c];
		if (!any)	/* not produced at this level, or not attached */
			continue;
		prom_metric_name(metric, sizeof(metric), "wpstat_", s->names[c]);
		prom_family(out, metric, s->names[c],
			    "per file: the top files by stall time, as wpstat show's stall column; ino=\"other\": the rest of the filesystem");
		prom_file_samples(out, metric, l, top, c);
		for (i = 0; i < other->n; i++) {
			if (!other->d[i].sum.avail[c])
				continue;
			fputs(metric, out);
			fputs("{dev=", out);
			prom_label_value(out, other->d[i].dev);
			fputs(",ino=\"other\"}", out);
			prom_value(out, s->names[c], other->d[i].sum.val[c]);
		}
		prom_metric_name(fsmetric, sizeof(fsmetric), "wpstat_fs_",
				 s->names[c]);
		prom_family(out, fsmetric, s->names[c],
			    "per filesystem, recycled rows included; dev=\"untracked\": events no row counted");
		for (i = 0; i < fs->n; i++) {
			if (!fs->d[i].sum.avail[c])
				continue;
			fputs(fsmetric, out);
			fputs("{dev=", out);
			prom_label_value(out, fs->d[i].dev);
			fputc('}', out);
			prom_value(out, s->names[c], fs->d[i].sum.val[c]);
		}
	}
	prom_module_gauges(out, summary);
}

/*
 * The lines of /proc/wpstat/gone, matched by column name, into both the
 * filesystem totals and the "other" series: what no row shows any more is
 * no top file's.  Without gone (an older module) both are the rows alone.
 */
static void add_gone(struct dev_sums *fs, struct dev_sums *other,
		     const struct wpstat_snapshot *s)
{
	struct wpstat_gone_snapshot g;
	int map[WPSTAT_MAX_COUNTERS];
	uint64_t val[WPSTAT_MAX_COUNTERS];
	bool avail[WPSTAT_MAX_COUNTERS];
	size_t i;
	int c;

	if (wpstat_gone_read(NULL, &g))
		return;
	wpstat_column_map(s, &g.cols, map);
	for (i = 0; i < g.nrows; i++) {
		const struct wpstat_gone_row *r = &g.rows[i];
		struct dev_sum *t;
		char dev[24];

		if (r->kind == WPSTAT_GONE_DEV)
			dev_name(dev, sizeof(dev), &r->counts);
		else
			snprintf(dev, sizeof(dev), "%s",
				 r->kind == WPSTAT_GONE_OTHER ? "other" : "untracked");
		for (c = 0; c < s->ncounters; c++) {
			avail[c] = map[c] >= 0 && r->counts.avail[map[c]];
			val[c] = avail[c] ? r->counts.val[map[c]] : 0;
		}
		t = dev_sum_get(fs, dev, true);
		dev_sum_add(t, s, val, avail);
		dev_sum_add(dev_sum_get(other, t->dev, false), s, val, avail);
	}
	wpstat_gone_free(&g);
}

/* A page for the module absent: only that, so the file does not go stale. */
static void write_absent(FILE *out)
{
	fputs("# HELP wpstat_module_loaded 1 if the wpstat module was loaded when this file was written.\n"
	      "# TYPE wpstat_module_loaded gauge\nwpstat_module_loaded 0\n", out);
}

/* DIR/wpstat.prom from a temporary file in DIR: 0 or -errno. */
static int write_file(struct export_ctx *x, bool loaded,
		      const struct wpstat_snapshot *s, const struct file_list *l,
		      size_t top, const struct dev_sums *other,
		      const struct dev_sums *fs,
		      const struct wpstat_kvlist *summary)
{
	char tmp[PATH_MAX], dst[PATH_MAX];
	FILE *out;
	int fd, err;

	/* node_exporter reads *.prom only: the temporary name is not one. */
	if (snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", x->o->dir, EXPORT_FILE) >=
	    (int)sizeof(tmp) ||
	    snprintf(dst, sizeof(dst), "%s/%s", x->o->dir, EXPORT_FILE) >=
	    (int)sizeof(dst))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* node_exporter runs as its own user: it must read the file. */
	if (fchmod(fd, 0644) || !(out = fdopen(fd, "w"))) {
		err = -errno;
		close(fd);
		unlink(tmp);
		return err;
	}
	if (loaded)
		write_page(out, s, l, top, other, fs, summary);
	else
		write_absent(out);
	err = ferror(out) ? -EIO : 0;
	if (fclose(out) && !err)
		err = -errno;
	if (!err && rename(tmp, dst))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

/*
 * The module's table swaps (resets and compactions), from the summary, or
 * -1 (an older module, or none loaded).
 */
static long long table_swaps(void)
{
	struct wpstat_kvlist kv = { 0 };
	const char *v = NULL;
	long long n = -1;

	if (!wpstat_kv_read(WPSTAT_SUMMARY_PATH, &kv))
		v = wpstat_kv_get(&kv, "table_swaps");
	if (v)
		n = strtoll(v, NULL, 10);
	wpstat_kv_free(&kv);
	return n;
}

/*
 * Reads of inodes and gone that a table swap fell between are read again:
 * a compaction folds rows into gone, so they would count twice.
 */
#define EXPORT_READ_TRIES	5

/* One write: 0, or the exit status of an error already reported. */
static int export_once(struct export_ctx *x, bool *was_loaded)
{
	struct wpstat_kvlist summary = { 0 };
	struct dev_sums *other, *fs;
	struct wpstat_snapshot s;
	struct file_list l = { 0 };
	size_t i, top = 0;
	long long swaps;
	int ret, tries = 0;
	const char *v;
	bool loaded;

	other = calloc(1, sizeof(*other));
	fs = calloc(1, sizeof(*fs));
	if (!other || !fs) {
		ret = runtime_error("out of memory");
		goto out_free;
	}
again:
	swaps = table_swaps();
	ret = wpstat_snapshot_read(NULL, &s);
	loaded = !ret;
	if (ret && ret != -ENOENT) {
		ret = runtime_error("cannot read %s: %s", WPSTAT_INODES_PATH,
				    ret == -EPROTO ? "unexpected format" :
				    strerror(-ret));
		goto out_free;
	}
	if (loaded) {
		if (file_list_build(NULL, &s, &l)) {
			ret = runtime_error("out of memory");
			goto out_snap;
		}
		stall_parts_find(&s, &x->stall);
		x->wp_col = wpstat_counter_index(&s, "mkwrite_wp");
		qsort_r(l.rows, l.n, sizeof(*l.rows), rank_cmp, x);
		top = l.n < x->o->top ? l.n : x->o->top;
		resolve_cached(&x->cache, l.rows, top, x->o->dirs.dirs,
			       x->o->dirs.n);
		for (i = 0; i < l.n; i++) {
			struct dev_sum *t;
			char dev[24];

			dev_name(dev, sizeof(dev), l.rows[i].row);
			t = dev_sum_get(fs, dev, true);
			dev_sum_add(t, &s, l.rows[i].val, l.rows[i].avail);
			/* Grouped as the totals are, past the last slot too. */
			if (i >= top)
				dev_sum_add(dev_sum_get(other, t->dev, false), &s,
					    l.rows[i].val, l.rows[i].avail);
		}
		add_gone(fs, other, &s);
		wpstat_kv_read(WPSTAT_SUMMARY_PATH, &summary);	/* optional */
		v = wpstat_kv_get(&summary, "table_swaps");
		if (swaps >= 0 && ++tries < EXPORT_READ_TRIES &&
		    (!v || swaps != strtoll(v, NULL, 10))) {
			wpstat_kv_free(&summary);
			memset(&summary, 0, sizeof(summary));
			file_list_free(&l);
			wpstat_snapshot_free(&s);
			memset(&l, 0, sizeof(l));
			memset(other, 0, sizeof(*other));
			memset(fs, 0, sizeof(*fs));
			top = 0;
			goto again;
		}
	}
	ret = write_file(x, loaded, &s, &l, top, other, fs, &summary);
	if (ret) {
		ret = runtime_error("cannot write %s/%s: %s", x->o->dir,
				    EXPORT_FILE, strerror(-ret));
	} else if (loaded != *was_loaded) {
		/* Said once per change, not once per interval. */
		if (!loaded)
			fprintf(stderr, "wpstat: module not loaded: %s/%s says wpstat_module_loaded 0\n",
				x->o->dir, EXPORT_FILE);
		*was_loaded = loaded;
	}
	wpstat_kv_free(&summary);
	file_list_free(&l);
out_snap:
	if (loaded)
		wpstat_snapshot_free(&s);
out_free:
	free(other);
	free(fs);
	return ret;
}

static int parse_export_args(int argc, char **argv, struct export_opts *o)
{
	static const struct option longopts[] = {
		{ "dir",	required_argument,	NULL, 'd' },
		{ "interval",	required_argument,	NULL, 'i' },
		{ "count",	required_argument,	NULL, 'c' },
		{ "top",	required_argument,	NULL, 't' },
		{ "resolve",	required_argument,	NULL, 'r' },
		{ "help",	no_argument,		NULL, 'h' },
		{ }
	};
	static const char shortopts[] = "+:d:i:c:t:r:h";
	bool counted = false;
	struct stat st;
	int c, ret;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->dir = optarg;
			break;
		case 'i':
			ret = parse_seconds("--interval", optarg,
					    WATCH_MAX_INTERVAL_S, &o->interval);
			if (ret)
				return ret;
			break;
		case 'c':
			ret = parse_uint("--count", optarg, 1, UINT64_MAX,
					 &o->count);
			if (ret)
				return ret;
			counted = true;
			break;
		case 't':
			ret = parse_uint("--top", optarg, 0, EXPORT_MAX_TOP,
					 &o->top);
			if (ret)
				return ret;
			break;
		case 'r':
			if (dir_list_add(&o->dirs, optarg))
				return runtime_error("out of memory");
			break;
		case 'h':
			return CMD_HELP;
		default:
			return option_error("export", c, argv, shortopts);
		}
	}
	if (optind < argc)
		return usage_error("export: unexpected argument '%s'", argv[optind]);
	if (counted && !o->interval)
		return usage_error("export: --count needs --interval");
	ret = check_resolve_dirs(o->dirs.dirs, o->dirs.n);
	if (ret)
		return ret;
	/* Said now, not after the first interval. */
	if (stat(o->dir, &st))
		return runtime_error("export: %s: %s%s", o->dir, strerror(errno),
				     errno == ENOENT ? " (node_exporter's textfile directory: --dir)" : "");
	if (!S_ISDIR(st.st_mode))
		return runtime_error("export: %s: not a directory", o->dir);
	if (access(o->dir, W_OK))
		return runtime_error("export: %s: %s", o->dir, strerror(errno));
	return 0;
}

static int cmd_export(int argc, char **argv)
{
	struct export_opts o = {
		.dir = EXPORT_DEFAULT_DIR,
		.top = EXPORT_DEFAULT_TOP,
	};
	struct export_ctx x = { .o = &o };
	bool was_loaded = true;
	uint64_t iter, deadline;
	int ret;

	ret = parse_export_args(argc, argv, &o);
	if (ret)
		goto out;
	if (!o.interval) {
		ret = export_once(&x, &was_loaded);
		/* A one-off export without the module says so in its status. */
		if (!ret && !was_loaded)
			ret = EXIT_RUNTIME;
		goto out;
	}
	catch_stop_signals();
	deadline = wpstat_now_ns();
	for (iter = 0; !o.count || iter < o.count; iter++) {
		if (iter) {
			deadline += o.interval;
			if (!sleep_until(deadline))
				break;
		}
		/* A failed write is said and retried: the service stays up. */
		export_once(&x, &was_loaded);
	}
	ret = 0;
out:
	path_cache_free(&x.cache);
	free(o.dirs.dirs);
	return ret;
}

const struct wpstat_cmd wpstat_cmd_export = {
	"export", cmd_export,
	"export [--dir DIR] [--interval S [--count N]] [--top N]\n"
	"       [--resolve DIR...]",
	"write DIR/wpstat.prom for node_exporter's textfile\n"
	"collector, once or every S seconds: series for the\n"
	"top N files by stall time (default 20), an \"other\"\n"
	"series and totals per filesystem (default DIR\n"
	EXPORT_DEFAULT_DIR ")",
};
