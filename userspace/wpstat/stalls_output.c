// SPDX-License-Identifier: GPL-2.0
#include "wpstat_cli.h"
#include "stalls.h"

/* ---- stalls output ------------------------------------------------------ */

/*
 * The table's columns, the file last; text columns are left-aligned.
 * After the stall, one column per cause (its time), in the module's
 * order (uapi/wpstat_stalls.def): SC_CAUSE0 + CAUSE_<id>.
 */
enum {
	SC_PID, SC_COMM, SC_CAUSE, SC_STALL,
	SC_CAUSE0,
	SC_UNNAMED = SC_CAUSE0 + CAUSE_NR, SC_CPU, SC_RUNQ, SC_SLEEP, SC_WORST,
	SC_EVENTS,
	SC_FAULT_FIRST,
	SC_FAULT_WP, SC_WP_CAUSED, SC_CGROUP, SC_NR,
};

static const struct {
	const char *name;
	bool left;
} stall_table_cols[SC_NR] = {
	[SC_PID] = { "pid", false },
	[SC_COMM] = { "comm", true },
	[SC_CAUSE] = { "cause", true },
	[SC_STALL] = { "stall", false },
#define WPSTAT_STALL(...)
#define WPSTAT_STALL_CAUSE(id, name, ...) \
	[SC_CAUSE0 + CAUSE_##id] = { #name, false },
#include "wpstat_stalls.def"
#undef WPSTAT_STALL_CAUSE
#undef WPSTAT_STALL
	[SC_UNNAMED] = { "unnamed", false },
	[SC_CPU] = { "cpu", false },
	[SC_RUNQ] = { "runq", false },
	[SC_SLEEP] = { "sleep", false },
	[SC_WORST] = { "worst", false },
	[SC_EVENTS] = { "events", false },
	[SC_FAULT_FIRST] = { "fault_first", false },
	[SC_FAULT_WP] = { "fault_wp", false },
	[SC_WP_CAUSED] = { "wp_caused", false },
	[SC_CGROUP] = { "cgroup", true },
};

/* Cell @col of item @it as text; @buf holds at least PATH_MAX bytes. */
static const char *stall_cell(char *buf, size_t len, const struct stall_list *l,
			      const struct stall_item *it, int col)
{
	const struct stall_sum *s = &it->sum;
	uint64_t worst;
	int c, k;
	char *p;

	if (col >= SC_CAUSE0 && col < SC_CAUSE0 + CAUSE_NR) {
		k = col - SC_CAUSE0;
		if (!s->have_ns[k])
			return "-";
		return wpstat_fmt_duration(buf, len, s->ns[k]);
	}
	switch (col) {
	case SC_PID:
		snprintf(buf, len, "%" PRIu32, it->row->tgid);
		return buf;
	case SC_COMM:
		snprintf(buf, len, "%s", it->row->comm);
		for (p = buf; *p; p++)	/* a tab or newline would break rows */
			if (iscntrl((unsigned char)*p))
				*p = '?';
		return buf;
	case SC_CAUSE:
		return stall_dominant(s);
	case SC_STALL:
		if (!stall_have_time(s))
			return "-";
		return wpstat_fmt_duration(buf, len, it->stall_ns);
	case SC_UNNAMED:
		if (!s->have_unnamed)
			return "-";
		return wpstat_fmt_duration(buf, len, s->unnamed_ns);
	case SC_CPU:
		if (!s->have_cpu)
			return "-";
		return wpstat_fmt_duration(buf, len, s->cpu_ns);
	case SC_RUNQ:
		if (!s->have_runq)
			return "-";
		return wpstat_fmt_duration(buf, len, s->runq_ns);
	case SC_SLEEP:
		if (!stall_fault_sleep_ns(s, &worst))
			return "-";
		return wpstat_fmt_duration(buf, len, worst);
	case SC_WORST:
		if (!stall_worst_ns(s, &worst))
			return "-";
		return wpstat_fmt_duration(buf, len, worst);
	case SC_EVENTS:
		return fmt_count(buf, len, it->events);
	case SC_FAULT_FIRST:
	case SC_FAULT_WP:
		c = l->cols.col[col == SC_FAULT_WP ? STALL_FAULT_WP :
				STALL_FAULT_FIRST];
		if (c < 0 || !it->avail[c])
			return "-";
		return fmt_count(buf, len, it->val[c]);
	case SC_WP_CAUSED:
		if (!s->have_wp_caused)
			return "-";
		return fmt_count(buf, len, s->wp_caused);
	case SC_CGROUP:
		if (!it->cgroup_path)
			return "-";
		snprintf(buf, len, "%s", it->cgroup_path);
		for (p = buf; *p; p++)
			if (iscntrl((unsigned char)*p))
				*p = '?';
		return buf;
	}
	return "?";
}

static void print_stall_file(FILE *out, const struct stall_item *it)
{
	if (it->path)
		print_path_plain(out, it->path);
	else if (!it->row->file.ino)	/* gone, aged out or spilt over */
		fprintf(out, "(device %u:%u: files without a row)", it->row->file.major,
			it->row->file.minor);
	else
		fprintf(out, "%u:%u:%" PRIu64, it->row->file.major,
			it->row->file.minor, it->row->file.ino);
}

/* What a person reads first: who, why, how long, and the faults. */
static const char *const stall_cols_default =
	"pid,comm,cause,stall,worst,fault_first,fault_wp";

static int stall_col_of(const void *ctx __attribute__((unused)), const char *name)
{
	int c;

	for (c = 0; c < SC_NR; c++)
		if (!strcmp(stall_table_cols[c].name, name))
			return c;
	return -1;
}

/* The columns of a stall table: @spec (-o), all (@all) or the defaults. */
int stall_cols_select(const char *spec, bool all, struct col_sel *sel)
{
	char known[512] = "";
	size_t len;
	int c;

	_Static_assert(SC_NR <= MAX_TABLE_COLS, "a stall table fits --all");
	if (all) {
		sel->n = 0;
		for (c = 0; c < SC_NR; c++)
			sel->col[sel->n++] = c;
		return 0;
	}
	for (c = 0; c < SC_NR; c++) {
		len = strlen(known);
		snprintf(known + len, sizeof(known) - len, "%s%s",
			 c ? ", " : "", stall_table_cols[c].name);
	}
	return col_sel_parse(spec ? spec : stall_cols_default, false,
			     stall_col_of, NULL, known, sel);
}

/* The chosen columns aligned under their names, the file last; @indent first. */
void print_stall_table(FILE *out, const struct stall_list *l, size_t limit,
		       const char *indent, const struct col_sel *sel)
{
	size_t width[MAX_TABLE_COLS], i, n = l->n < limit ? l->n : limit, w;
	char buf[PATH_MAX];
	int k, c;

	for (k = 0; k < sel->n; k++) {
		c = sel->col[k];
		width[k] = strlen(stall_table_cols[c].name);
		for (i = 0; i < n; i++) {
			w = strlen(stall_cell(buf, sizeof(buf), l,
					      &l->items[i], c));
			if (w > width[k])
				width[k] = w;
		}
	}
	fputs(indent, out);
	for (k = 0; k < sel->n; k++) {
		c = sel->col[k];
		fprintf(out, "%*s ", stall_table_cols[c].left ?
			-(int)width[k] : (int)width[k],
			stall_table_cols[c].name);
	}
	fputs("file\n", out);
	for (i = 0; i < n; i++) {
		fputs(indent, out);
		for (k = 0; k < sel->n; k++) {
			c = sel->col[k];
			fprintf(out, "%*s ", stall_table_cols[c].left ?
				-(int)width[k] : (int)width[k],
				stall_cell(buf, sizeof(buf), l, &l->items[i], c));
		}
		print_stall_file(out, &l->items[i]);
		fputc('\n', out);
	}
}

/* Every column of the row as the module gave it, plus what wpstat adds. */
static void json_stall(FILE *out, const struct stall_list *l,
		       const struct stall_item *it)
{
	const struct wpstat_snapshot *cols = &l->snap->cols;
	const struct wpstat_stall_row *r = it->row;
	uint64_t sleep;
	int c;

	fprintf(out, "{\"tgid\": %" PRIu32 ", \"comm\": ", r->tgid);
	json_string(out, r->comm);
	fprintf(out, ", \"dev\": \"%u:%u\", \"ino\": %" PRIu64 ", \"gen\": %"
		PRIu32 ", \"subvol\": %" PRIu64 ", \"cgroup\": %" PRIu64,
		r->file.major, r->file.minor, r->file.ino, r->file.gen,
		r->file.subvol, r->cgroup);
	for (c = 0; c < cols->ncounters; c++) {
		fputs(", ", out);
		json_string(out, cols->names[c]);
		if (it->avail[c])
			fprintf(out, ": %" PRIu64, it->val[c]);
		else
			fputs(": null", out);
	}
	fputs(", \"path\": ", out);
	json_string_or_null(out, it->path);
	fputs(", \"cgroup_path\": ", out);
	json_string_or_null(out, it->cgroup_path);
	if (stall_have_time(&it->sum))
		fprintf(out, ", \"stall_ns\": %" PRIu64, it->stall_ns);
	else
		fputs(", \"stall_ns\": null", out);
	/* Derived: the unnamed time less its CPU and run delay. */
	fputs(", \"fault_sleep_ns\": ", out);
	if (stall_fault_sleep_ns(&it->sum, &sleep))
		fprintf(out, "%" PRIu64, sleep);
	else
		fputs("null", out);
	fputs(", \"dominant_cause\": ", out);
	json_string(out, stall_dominant(&it->sum));
	fputc('}', out);
}

void json_stalls(FILE *out, const struct stall_list *l, size_t limit,
		 const char *indent)
{
	size_t i, n = l->n < limit ? l->n : limit;

	fputc('[', out);
	for (i = 0; i < n; i++) {
		fprintf(out, "%s\n%s  ", i ? "," : "", indent);
		json_stall(out, l, &l->items[i]);
	}
	if (n)
		fprintf(out, "\n%s", indent);
	fputc(']', out);
}

/* # HELP of a stalls column; a newer module's others get a generic line. */
static const char *stall_help_of(const char *name)
{
	size_t i;

	for (i = 0; i < STALL_NR; i++)
		if (!strcmp(stall_fields[i].name, name))
			return stall_fields[i].help;
	return NULL;
}

/*
 * One series per process and file: pid and comm, the file (dev, ino, gen
 * and its path when found) and the cgroup's path when found.  Rows of
 * exited processes stay until a reset, and so do their series.
 */
static void prom_stall_labels(FILE *out, const struct stall_item *it)
{
	const struct wpstat_stall_row *r = it->row;
	char num[32];

	fprintf(out, "{pid=\"%" PRIu32 "\",comm=", r->tgid);
	prom_label_value(out, r->comm);
	snprintf(num, sizeof(num), "%u:%u", r->file.major, r->file.minor);
	fputs(",dev=", out);
	prom_label_value(out, num);
	fprintf(out, ",ino=\"%" PRIu64 "\",gen=\"%" PRIu32 "\"", r->file.ino,
		r->file.gen);
	prom_subvol_label(out, &r->file);
	if (it->path) {
		fputs(",path=", out);
		prom_label_value(out, it->path);
	}
	if (it->cgroup_path) {
		fputs(",cgroup=", out);
		prom_label_value(out, it->cgroup_path);
	}
	fputc('}', out);
}

void print_stall_prometheus(FILE *out, const struct stall_list *l,
			    const struct wpstat_kvlist *summary)
{
	const struct wpstat_snapshot *cols = &l->snap->cols;
	char metric[128];
	size_t i;
	int c;

	for (c = 0; c < cols->ncounters; c++) {
		const char *name = cols->names[c], *help = stall_help_of(name);
		bool any = false;

		for (i = 0; i < l->n && !any; i++)
			any = l->items[i].avail[c];
		if (!any)
			continue;
		prom_metric_name(metric, sizeof(metric), "wpstat_stall_", name);
		fprintf(out, "# HELP %s %s", metric,
			help ? help : "wpstat stall counter ");
		if (!help)
			fputs(name, out);
		fprintf(out, " (per process and file).\n# TYPE %s %s\n", metric,
			prom_type(name));
		for (i = 0; i < l->n; i++) {
			const struct stall_item *it = &l->items[i];

			if (!it->avail[c])
				continue;
			fputs(metric, out);
			prom_stall_labels(out, it);
			prom_value(out, name, it->val[c]);
		}
	}
	prom_gauge(out, summary, "stall_rows", "wpstat_stall_rows", "gauge",
		   "Process-and-file rows in the module's stalls table.");
	prom_gauge(out, summary, "max_stalls", "wpstat_stall_max_rows", "gauge",
		   "Size of the module's stalls table.");
	prom_gauge(out, summary, "stall_overflow_events",
		   "wpstat_stall_overflow_events_total", "counter",
		   "Stall events not counted per process and file because the table was full.");
}
