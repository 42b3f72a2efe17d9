// SPDX-License-Identifier: GPL-2.0
#include "wpstat.h"

/* ---- output: table, JSON, Prometheus ------------------------------------ */

static void print_file_name(FILE *out, const struct file_row *f)
{
	if (f->path)
		print_path_plain(out, f->path);
	else
		fprintf(out, "%u:%u:%" PRIu64, f->row->major, f->row->minor,
			f->row->ino);
}

/* Counters right-aligned under their names, the file last. */
void print_table(FILE *out, const struct file_list *l, size_t limit)
{
	const struct wpstat_snapshot *s = l->snap;
	size_t width[WPSTAT_MAX_COUNTERS];
	size_t i, n = l->n < limit ? l->n : limit;
	char buf[32];
	int c;

	for (c = 0; c < s->ncounters; c++) {
		width[c] = strlen(s->names[c]);
		for (i = 0; i < n; i++) {
			const struct file_row *f = &l->rows[i];
			size_t w = strlen(wpstat_fmt_counter(buf, sizeof(buf),
						      s->names[c], f->val[c],
						      f->avail[c]));

			if (w > width[c])
				width[c] = w;
		}
	}
	for (c = 0; c < s->ncounters; c++)
		fprintf(out, "%*s ", (int)width[c], s->names[c]);
	fputs("file\n", out);
	for (i = 0; i < n; i++) {
		const struct file_row *f = &l->rows[i];

		for (c = 0; c < s->ncounters; c++)
			fprintf(out, "%*s ", (int)width[c],
				wpstat_fmt_counter(buf, sizeof(buf), s->names[c],
					    f->val[c], f->avail[c]));
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
		", \"path\": ", f->row->major, f->row->minor, f->row->ino,
		f->row->gen);
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

void prom_labels(FILE *out, const struct file_row *f)
{
	char num[32];

	snprintf(num, sizeof(num), "%u:%u", f->row->major, f->row->minor);
	fputs("{dev=", out);
	prom_label_value(out, num);
	fprintf(out, ",ino=\"%" PRIu64 "\",gen=\"%" PRIu32 "\"", f->row->ino,
		f->row->gen);
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
}
