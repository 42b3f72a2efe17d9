// SPDX-License-Identifier: GPL-2.0
#include "wpstat_cli.h"

/* ---- output: table, JSON, Prometheus ------------------------------------ */

static void print_file_name(FILE *out, const struct file_row *f)
{
	if (f->path)
		print_path_plain(out, f->path);
	else
		fprintf(out, "%u:%u:%" PRIu64, f->row->major, f->row->minor,
			f->row->ino);
}

/* A count for a person: exact below 10000, then 12.3k, 4.5M, 6.7G. */
const char *fmt_count(char *buf, size_t len, uint64_t v)
{
	if (v < 10000)
		snprintf(buf, len, "%" PRIu64, v);
	else if (v < 10000000)
		snprintf(buf, len, "%.1fk", v / 1e3);
	else if (v < 10000000000ULL)
		snprintf(buf, len, "%.1fM", v / 1e6);
	else
		snprintf(buf, len, "%.1fG", v / 1e9);
	return buf;
}

/* The column is the counter's own name: WPC_MKCLEAN_<id>'s. */
#define WPSTAT_COUNTER(id, name, ...) static const char col_##id[] = #name;
#include "wpstat_counters.def"
#undef WPSTAT_COUNTER

const struct mkclean_trigger mkclean_triggers[NR_MKCLEAN_TRIGGERS] = {
#define WPSTAT_COUNTER(...)
#define WPSTAT_MKCLEAN_TRIGGER(id, nm) [TRIG_##id] = { col_MKCLEAN_##id, #nm },
#include "wpstat_counters.def"
#undef WPSTAT_MKCLEAN_TRIGGER
#undef WPSTAT_COUNTER
};

/* What a person reads first: faults, cleans and by what, stall time. */
static const char *const file_cols_default =
	"mkwrite_first,mkwrite_wp,mkclean_calls,cleaned_by,stall,worst";

static const struct {
	const char *name;
	int id;
} file_cols_computed[] = {
	{ "cleaned_by", ICOL_CLEANED_BY },
	{ "stall", ICOL_STALL },
	{ "worst", ICOL_WORST },
};

static const char *file_col_name(const struct wpstat_snapshot *s, int col)
{
	size_t i;

	if (col < s->ncounters)
		return s->names[col];
	for (i = 0; i < ARRAY_SIZE(file_cols_computed); i++)
		if (file_cols_computed[i].id == col)
			return file_cols_computed[i].name;
	return "?";
}

static int file_col_of(const void *snap, const char *name)
{
	const struct wpstat_snapshot *s = snap;
	size_t i;
	int c = wpstat_counter_index(s, name);

	if (c >= 0)
		return c;
	for (i = 0; i < ARRAY_SIZE(file_cols_computed); i++)
		if (!strcmp(file_cols_computed[i].name, name))
			return file_cols_computed[i].id;
	return -1;
}

/*
 * The columns of a file table: @spec (-o), every counter (@all: the
 * module's own table), or the defaults (those the module has).
 */
int file_cols_select(const struct wpstat_snapshot *s, const char *spec,
		     bool all, struct col_sel *sel)
{
	int c;

	if (all) {
		sel->n = 0;
		for (c = 0; c < s->ncounters && sel->n < MAX_TABLE_COLS; c++)
			sel->col[sel->n++] = c;
		return 0;
	}
	return col_sel_parse(spec ? spec : file_cols_default, !spec,
			     file_col_of, s,
			     "the counters of /proc/wpstat/counters, and cleaned_by, stall, worst",
			     sel);
}

/*
 * The stall column: the same number as the stalls table's stall, from
 * the inode counters: the named waits' times, wherever they were (in a
 * fault or in write(2)), and the write faults' unnamed time, one counter
 * per cause (the time of uapi/wpstat_stalls.def's WPSTAT_STALL_CAUSE).
 * Adding mkwrite_ns instead would count twice the waits inside the
 * faults.
 */
static const char *const stall_parts[] = {
#define WPSTAT_STALL(...)
#define WPSTAT_STALL_CAUSE(id, name, unit, time, ...) col_##time,
#include "wpstat_stalls.def"
#undef WPSTAT_STALL_CAUSE
#undef WPSTAT_STALL
};
_Static_assert(ARRAY_SIZE(stall_parts) <= WPSTAT_MAX_COUNTERS,
	       "struct stall_parts_at holds every cause's column");

/*
 * Where the counters the computed columns read are in a snapshot (-1:
 * absent), looked up once per table rather than once per cell.
 */
struct file_cols_at {
	int trigger[NR_MKCLEAN_TRIGGERS];
	struct stall_parts_at stall;	/* the stall column's */
	int max_ns[WPSTAT_MAX_COUNTERS];	/* the worst column's */
	int nmax;
};

static void file_cols_at(const struct wpstat_snapshot *s,
			 struct file_cols_at *at)
{
	size_t i;
	int c;

	for (i = 0; i < NR_MKCLEAN_TRIGGERS; i++)
		at->trigger[i] = wpstat_counter_index(s, mkclean_triggers[i].column);
	stall_parts_find(s, &at->stall);
	/* worst: every maximum the module has (kind MAX in its lists). */
	at->nmax = 0;
	for (c = 0; c < s->ncounters; c++)
		if (wpstat_counter_is_max(s->names[c]))
			at->max_ns[at->nmax++] = c;
}

/* @f's counter at @c, 0 if absent or unavailable; *@any set if present. */
static uint64_t value_at(const struct file_row *f, int c, bool *any)
{
	if (c < 0 || !f->avail[c])
		return 0;
	*any = true;
	return f->val[c];
}

void stall_parts_find(const struct wpstat_snapshot *s,
		      struct stall_parts_at *at)
{
	for (at->n = 0; at->n < ARRAY_SIZE(stall_parts); at->n++)
		at->col[at->n] = wpstat_counter_index(s, stall_parts[at->n]);
}

uint64_t file_stall_ns(const struct stall_parts_at *at,
		       const struct file_row *f, bool *any)
{
	uint64_t ns = 0;
	size_t i;

	for (i = 0; i < at->n; i++)
		ns += value_at(f, at->col[i], any);
	return ns;
}

/* Cell @col of @f as text. */
static const char *file_cell(char *buf, size_t len, const struct file_list *l,
			     const struct file_cols_at *at,
			     const struct file_row *f, int col)
{
	const char *name = file_col_name(l->snap, col);
	uint64_t v, best = 0;
	bool any = false;
	size_t i;

	if (col < l->snap->ncounters) {
		if (!f->avail[col])
			return "-";
		if (wpstat_counter_is_ns(name))
			return wpstat_fmt_duration(buf, len, f->val[col]);
		return fmt_count(buf, len, f->val[col]);
	}
	switch (col) {
	case ICOL_CLEANED_BY:
		snprintf(buf, len, "-");
		for (i = 0; i < NR_MKCLEAN_TRIGGERS; i++) {
			v = value_at(f, at->trigger[i], &any);
			if (v > best) {
				best = v;
				snprintf(buf, len, "%s", mkclean_triggers[i].name);
			}
		}
		return buf;
	case ICOL_STALL:
		v = file_stall_ns(&at->stall, f, &any);
		return any ? wpstat_fmt_duration(buf, len, v) : "-";
	case ICOL_WORST:
		for (i = 0; i < (size_t)at->nmax; i++) {
			v = value_at(f, at->max_ns[i], &any);
			best = v > best ? v : best;
		}
		return any ? wpstat_fmt_duration(buf, len, best) : "-";
	}
	return "?";
}

/* The chosen columns right-aligned under their names, the file last. */
void print_table(FILE *out, const struct file_list *l, size_t limit,
		 const struct col_sel *sel)
{
	size_t width[MAX_TABLE_COLS];
	size_t i, n = l->n < limit ? l->n : limit;
	struct file_cols_at at;
	char buf[64];
	int k;

	file_cols_at(l->snap, &at);
	for (k = 0; k < sel->n; k++) {
		width[k] = strlen(file_col_name(l->snap, sel->col[k]));
		for (i = 0; i < n; i++) {
			size_t w = strlen(file_cell(buf, sizeof(buf), l, &at,
						    &l->rows[i], sel->col[k]));

			if (w > width[k])
				width[k] = w;
		}
	}
	for (k = 0; k < sel->n; k++)
		fprintf(out, "%*s ", (int)width[k],
			file_col_name(l->snap, sel->col[k]));
	fputs("file\n", out);
	for (i = 0; i < n; i++) {
		const struct file_row *f = &l->rows[i];

		for (k = 0; k < sel->n; k++)
			fprintf(out, "%*s ", (int)width[k],
				file_cell(buf, sizeof(buf), l, &at, f,
					  sel->col[k]));
		print_file_name(out, f);
		fputc('\n', out);
	}
}

static void json_counters(FILE *out, const struct wpstat_snapshot *s,
			  const uint64_t *val, const bool *avail)
{
	int c;

	fputc('{', out);
	for (c = 0; c < s->ncounters; c++) {
		if (c)
			fputs(", ", out);
		json_string(out, s->names[c]);
		if (avail[c])
			fprintf(out, ": %" PRIu64, val[c]);
		else
			fputs(": null", out);
	}
	fputc('}', out);
}

/* One file; with @deltas, "counters" are the totals and "deltas" the change. */
static void json_file(FILE *out, const struct wpstat_snapshot *s,
		      const struct file_row *f, bool deltas)
{
	fprintf(out, "{\"dev\": \"%u:%u\", \"ino\": %" PRIu64 ", \"gen\": %" PRIu32
		", \"subvol\": %" PRIu64 ", \"path\": ", f->row->major,
		f->row->minor, f->row->ino, f->row->gen, f->row->subvol);
	json_string_or_null(out, f->path);
	fputs(", \"counters\": ", out);
	if (deltas) {
		json_counters(out, s, f->row->val, f->row->avail);
		fputs(", \"deltas\": ", out);
	}
	json_counters(out, s, f->val, f->avail);
	fputc('}', out);
}

void json_files(FILE *out, const struct file_list *l, size_t limit,
		bool deltas)
{
	size_t i, n = l->n < limit ? l->n : limit;

	fputc('[', out);
	for (i = 0; i < n; i++) {
		fputs(i ? ",\n  " : "\n  ", out);
		json_file(out, l->snap, &l->rows[i], deltas);
	}
	fputs(n ? "\n ]" : "]", out);
}

/*
 * What each counter means, for # HELP: the module's own list, so a counter
 * added there has its line here.  A newer module's extra counters get a
 * generic line.
 */
static const struct {
	const char *name;
	const char *help;
} counter_help[] = {
#define WPSTAT_COUNTER(id, name, kind, needs, level, help) { #name, help },
#include "wpstat_counters.def"
#undef WPSTAT_COUNTER
};

const char *help_of(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(counter_help); i++)
		if (!strcmp(counter_help[i].name, name))
			return counter_help[i].help;
	return NULL;
}

/*
 * <prefix><name>_total, or <prefix><name less _ns>_seconds_total; a
 * maximum is a gauge: <prefix><name less _ns>_seconds, no _total.
 */
void prom_metric_name(char *buf, size_t len, const char *prefix,
		      const char *counter)
{
	size_t n = strlen(counter), i, p;
	bool ns = wpstat_counter_is_ns(counter);

	if (ns)
		n -= 3;
	p = snprintf(buf, len, "%s", prefix);
	for (i = 0; i < n && p + 1 < len; i++, p++)
		buf[p] = isalnum((unsigned char)counter[i]) ? counter[i] : '_';
	buf[p] = '\0';
	strncat(buf, wpstat_counter_is_max(counter) ? (ns ? "_seconds" : "") :
		ns ? "_seconds_total" : "_total", len - p - 1);
}

const char *prom_type(const char *counter)
{
	return wpstat_counter_is_max(counter) ? "gauge" : "counter";
}

/* A value, nanoseconds as seconds. */
void prom_value(FILE *out, const char *counter, uint64_t v)
{
	if (wpstat_counter_is_ns(counter))
		fprintf(out, " %" PRIu64 ".%09" PRIu64 "\n", v / NSEC_PER_SEC,
			v % NSEC_PER_SEC);
	else
		fprintf(out, " %" PRIu64 "\n", v);
}

/*
 * btrfs's rows carry their subvolume: a snapshot's files have the
 * original's dev, ino and gen, and two series may not share labels.
 * Other files' series keep the labels they always had.
 */
void prom_subvol_label(FILE *out, const struct wpstat_row *r)
{
	if (r->subvol)
		fprintf(out, ",subvol=\"%" PRIu64 "\"", r->subvol);
}

void prom_labels(FILE *out, const struct file_row *f)
{
	char num[32];

	snprintf(num, sizeof(num), "%u:%u", f->row->major, f->row->minor);
	fputs("{dev=", out);
	prom_label_value(out, num);
	fprintf(out, ",ino=\"%" PRIu64 "\",gen=\"%" PRIu32 "\"", f->row->ino,
		f->row->gen);
	prom_subvol_label(out, f->row);
	if (f->path) {
		fputs(",path=", out);
		prom_label_value(out, f->path);
	}
	fputc('}', out);
}

void prom_gauge(FILE *out, const struct wpstat_kvlist *summary,
		const char *key, const char *metric, const char *type,
		const char *help)
{
	const char *v = wpstat_kv_get(summary, key);

	if (!v || !isdigit((unsigned char)v[0]))
		return;
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n%s %s\n", metric, help,
		metric, type, metric, v);
}

/* Column @c of the first @n rows of @l as samples of @metric. */
void prom_file_samples(FILE *out, const char *metric,
		       const struct file_list *l, size_t n, int c)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct file_row *f = &l->rows[i];

		if (!f->avail[c])
			continue;
		fputs(metric, out);
		prom_labels(out, f);
		prom_value(out, l->snap->names[c], f->val[c]);
	}
}

/*
 * node_exporter textfile-collector format.  Unavailable counters have no
 * samples, and a counter unavailable everywhere no family.  The inode's
 * generation is a label too: without it a reused inode number would give
 * two series the same labels.
 */
void print_prometheus(FILE *out, const struct file_list *l,
		      size_t limit, const struct wpstat_kvlist *summary)
{
	const struct wpstat_snapshot *s = l->snap;
	size_t i, n = l->n < limit ? l->n : limit;
	char metric[128];
	int c;

	for (c = 0; c < s->ncounters; c++) {
		const char *help = help_of(s->names[c]);
		bool any = false;

		for (i = 0; i < n && !any; i++)
			any = l->rows[i].avail[c];
		if (!any)
			continue;
		prom_metric_name(metric, sizeof(metric), "wpstat_", s->names[c]);
		fprintf(out, "# HELP %s %s", metric, help ? help : "wpstat counter ");
		if (!help)
			fputs(s->names[c], out);
		fprintf(out, " (per file).\n# TYPE %s %s\n", metric,
			prom_type(s->names[c]));
		prom_file_samples(out, metric, l, n, c);
	}
	prom_module_gauges(out, summary);
}

/* The module's own state from /proc/wpstat/summary. */
void prom_module_gauges(FILE *out, const struct wpstat_kvlist *summary)
{
	prom_gauge(out, summary, "tracked_inodes", "wpstat_tracked_inodes",
		   "gauge", "Inodes with a row in the module's table.");
	prom_gauge(out, summary, "max_inodes", "wpstat_max_inodes", "gauge",
		   "Size of the module's inode table.");
	prom_gauge(out, summary, "untracked_events",
		   "wpstat_untracked_events_total", "counter",
		   "Events not counted per file because the table was full.");
	prom_gauge(out, summary, "enabled", "wpstat_enabled", "gauge",
		   "1 while the module counts.");
	prom_gauge(out, summary, "recycled_inodes",
		   "wpstat_recycled_inodes_total", "counter",
		   "Rows a new file took over from a gone one (the table was full).");
	prom_gauge(out, summary, "module_bytes", "wpstat_module_bytes",
		   "gauge", "Memory the module holds.");
}
