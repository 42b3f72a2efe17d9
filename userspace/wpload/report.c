// SPDX-License-Identifier: GPL-2.0
/*
 * report.c - what wpload prints: the header, one line (or JSON object) per
 * pass with its latency percentiles and the change of the file's counters
 * in /proc/wpstat/inodes over the pass, and the totals.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "delta.h"
#include "fmt.h"
#include "json.h"
#include "wpload.h"

/* The advice of --madvise, comma-separated, in the order applied. */
static void print_advice(FILE *out, unsigned int mask)
{
	const char *sep = "";
	int a;

	for (a = 1; a < ADVICE_NR; a++) {
		if (!(mask & (1U << a)))
			continue;
		fprintf(out, "%s%s", sep, advice_names[a]);
		sep = ",";
	}
}

/* JSON value of "warmup": false, or how the pages were touched. */
static const char *const warmup_json[] = {
	[WARMUP_NONE]	= "false",
	[WARMUP_READ]	= "\"read\"",
	[WARMUP_WRITE]	= "\"write\"",
};

/* ---- counters ---------------------------------------------------------- */

void probe_counters(struct wpload_run *run)
{
	struct wpstat_snapshot s;
	int ret;

	ret = wpstat_snapshot_read(run->opt->counters_path, &s);
	if (!ret) {
		run->counters = COUNTERS_ON;
		wpstat_snapshot_free(&s);
	} else if (ret == -ENOENT) {
		run->counters = COUNTERS_NO_MODULE;
	} else {
		run->counters = COUNTERS_UNREADABLE;
		fprintf(stderr, "wpload: cannot read %s: %s; counters not reported\n",
			run->opt->counters_path,
			ret == -EPROTO ? "unexpected format" : strerror(-ret));
	}
}

/* Worker 0, just before a pass starts. */
void counters_before(struct wpload_run *run)
{
	if (run->counters == COUNTERS_ON)
		run->before_ret = wpstat_snapshot_read(run->opt->counters_path,
						       &run->before);
}

void counters_before_free(struct wpload_run *run)
{
	if (run->counters == COUNTERS_ON && !run->before_ret)
		wpstat_snapshot_free(&run->before);
}

/*
 * @s's row for the file, or if it has none a stand-in in @tmp: the file
 * has counted nothing yet, so every counter is 0, and available where its
 * column is ("-" marks a whole column, so any row tells).
 */
static const struct wpstat_row *file_row(const struct wpstat_snapshot *s,
					 const struct wpstat_file_key *key,
					 struct wpstat_row *tmp)
{
	const struct wpstat_row *row = wpstat_snapshot_find_key(s, key);
	int c;

	if (row)
		return row;
	memset(tmp, 0, sizeof(*tmp));
	for (c = 0; c < s->ncounters; c++)
		tmp->avail[c] = !s->nrows || s->rows[0].avail[c];
	return tmp;
}

/*
 * The file's counters over the pass.  What a counter that went down means
 * (a reset during the pass) is wpstat_row_delta()'s rule; a counter is
 * reported only if it was available both before and after.
 */
static void counters_delta(const struct wpload_run *run,
			   const struct wpstat_snapshot *before,
			   const struct wpstat_snapshot *after,
			   struct wpload_counter_delta *d)
{
	struct wpstat_row btmp, atmp, delta;
	const struct wpstat_row *b, *a;
	int bcol[WPSTAT_MAX_COUNTERS];
	int i;

	b = file_row(before, &run->key, &btmp);
	a = file_row(after, &run->key, &atmp);
	wpstat_column_map(after, before, bcol);
	wpstat_row_delta(after, a, b, bcol, &delta);
	d->n = after->ncounters;
	for (i = 0; i < after->ncounters; i++) {
		d->names[i] = after->names[i];
		d->avail[i] = delta.avail[i] && bcol[i] >= 0 &&
			      b->avail[bcol[i]];
		d->val[i] = d->avail[i] ? delta.val[i] : 0;
	}
}

static void totals_add_counters(struct wpload_totals *t,
				const struct wpload_counter_delta *d)
{
	int i, j;

	for (i = 0; i < d->n; i++) {
		for (j = 0; j < t->ncounters; j++)
			if (!strcmp(t->names[j], d->names[i]))
				break;
		if (j == t->ncounters) {
			if (j == WPSTAT_MAX_COUNTERS)
				continue;
			t->names[j] = strdup(d->names[i]);
			if (!t->names[j])
				continue;
			t->avail[j] = true;
			t->ncounters++;
		}
		if (wpstat_counter_is_max(d->names[i]))	/* worst of all passes */
			t->sum[j] = t->sum[j] > d->val[i] ? t->sum[j] : d->val[i];
		else
			t->sum[j] += d->val[i];
		t->avail[j] &= d->avail[i];
	}
}

/* ---- output ------------------------------------------------------------ */

void print_header(struct wpload_run *run)
{
	const struct wpload_opts *opt = run->opt;
	char size[32], chunk[32], wbuf[32];
	FILE *out = stdout;

	if (opt->json) {
		fputs("{\"file\": ", out);
		json_string(out, opt->path);
		fprintf(out, ", \"size\": %" PRIu64 ", \"chunk\": %" PRIu64
			", \"mode\": \"%s\", \"sync\": \"%s\", \"threads\": %u"
			", \"private\": %s, \"module_loaded\": %s",
			opt->size, opt->chunk, mode_names[opt->mode],
			sync_names[opt->sync], opt->threads,
			opt->private_map ? "true" : "false",
			run->counters != COUNTERS_NO_MODULE ? "true" : "false");
		if (opt->sync_every)
			fprintf(out, ", \"sync_every\": %" PRIu64, opt->sync_every);
		if (opt->write_buffer)
			fprintf(out, ", \"write_buffer\": %" PRIu64,
				opt->write_buffer);
		if (opt->advice) {
			fputs(", \"madvise\": \"", out);
			print_advice(out, opt->advice);
			fputc('"', out);
		}
		fprintf(out, ", \"mlock\": %s, \"populate\": %s, \"cold\": %s, \"warmup\": %s",
			opt->mlock ? "true" : "false",
			opt->populate ? "true" : "false",
			opt->cold ? "true" : "false",
			warmup_json[opt->warmup]);
		fprintf(out, ", \"latency\": %s",
			opt->no_latency ? "false" : "true");
		fputs(", \"passes\": [", out);
		run->json_open = true;
		return;
	}
	if (opt->quiet)
		return;
	printf("wpload: %s  size %s  chunk %s  mode %s  sync %s", opt->path,
	       wpstat_fmt_bytes(size, sizeof(size), opt->size),
	       wpstat_fmt_bytes(chunk, sizeof(chunk), opt->chunk),
	       mode_names[opt->mode], sync_names[opt->sync]);
	if (opt->sync_every)
		printf(" every %" PRIu64 " ops", opt->sync_every);
	if (opt->duration_ns)
		printf("  duration %g s", opt->duration_ns / 1e9);
	if (!opt->duration_ns || opt->passes_given)
		printf("  passes %" PRIu64, opt->passes);
	printf("  threads %u", opt->threads);
	if (opt->private_map)
		fputs("  private", stdout);
	if (opt->populate)
		fputs("  populate", stdout);
	if (opt->mlock)
		fputs("  mlock", stdout);
	if (opt->advice) {
		fputs("  madvise ", stdout);
		print_advice(stdout, opt->advice);
	}
	if (opt->cold)
		fputs("  cold", stdout);
	if (opt->warmup)
		printf("  warmup=%s", opt->warmup == WARMUP_READ ? "read" : "write");
	if (opt->no_latency)
		fputs("  no-latency", stdout);
	if (opt->write_buffer)
		printf("  write-buffer %s",
		       wpstat_fmt_bytes(wbuf, sizeof(wbuf), opt->write_buffer));
	putchar('\n');
	fflush(stdout);
}

static void json_counters(const char *const *names, const uint64_t *val,
			  const bool *avail, int n)
{
	int i;

	putchar('{');
	for (i = 0; i < n; i++) {
		if (i)
			fputs(", ", stdout);
		json_string(stdout, names[i]);
		if (avail[i])
			printf(": %" PRIu64, val[i]);
		else
			fputs(": null", stdout);
	}
	putchar('}');
}

/*
 * The counters on a text line: every one (@verbose), or the few a person
 * reads first, named shortly, the waits only when there were any.
 */
static void text_counters(const char *const *names, const uint64_t *val,
			  const bool *avail, int n, bool verbose)
{
	static const struct {
		const char *name, *label;
		bool always;
	} brief[] = {
		{ "mkwrite_first", "first", true },
		{ "mkwrite_wp", "wp", true },
		{ "mkclean_calls", "cleaned", true },
		{ "stable_waits", "stable-waits", false },
		{ "bdp_pauses", "pauses", false },
	};
	size_t b;
	int i;

	for (i = 0; verbose && i < n; i++) {
		fputs(i ? " " : "  ", stdout);
		if (avail[i])
			printf("%s=%" PRIu64, names[i], val[i]);
		else
			printf("%s=-", names[i]);
	}
	if (verbose)
		return;
	fputs(" |", stdout);
	for (b = 0; b < sizeof(brief) / sizeof(brief[0]); b++)
		for (i = 0; i < n; i++) {
			if (strcmp(names[i], brief[b].name) ||
			    (!brief[b].always && (!avail[i] || !val[i])))
				continue;
			if (avail[i])
				printf(" %s %" PRIu64, brief[b].label, val[i]);
			else
				printf(" %s -", brief[b].label);
		}
}

static void print_pass(struct wpload_run *run, const struct wpload_pass_result *r)
{
	const struct wpload_opts *opt = run->opt;
	char wall[32], p50[32], p99[32], max[32], sync[32];

	if (opt->json) {
		printf("%s\n  {\"pass\": %" PRIu64 ", \"wall_ns\": %" PRIu64
		       ", \"cpu_ns\": %" PRIu64
		       ", \"sync_ns\": %" PRIu64 ", \"ops\": %" PRIu64
		       ", \"bytes\": %" PRIu64 ", \"lat_ns\": ",
		       run->json_first_pass ? "" : ",", r->pass, r->wall_ns,
		       r->cpu_ns, r->sync_ns, r->ops, r->bytes);
		if (opt->no_latency)
			fputs("null", stdout);
		else
			printf("{\"p50\": %" PRIu64 ", \"p99\": %" PRIu64
			       ", \"max\": %" PRIu64 "}", r->p50, r->p99, r->max);
		fputs(", \"counters\": ", stdout);
		run->json_first_pass = false;
		if (r->have_counters)
			json_counters(r->counters.names, r->counters.val,
				      r->counters.avail, r->counters.n);
		else
			fputs("null", stdout);
		putchar('}');
		return;
	}
	if (opt->quiet)
		return;
	printf("pass %" PRIu64 ": %s %" PRIu64 " ops p50 %s p99 %s max %s sync %s",
	       r->pass, wpstat_fmt_duration(wall, sizeof(wall), r->wall_ns), r->ops,
	       wpstat_fmt_duration(p50, sizeof(p50), r->p50), wpstat_fmt_duration(p99, sizeof(p99), r->p99),
	       wpstat_fmt_duration(max, sizeof(max), r->max),
	       wpstat_fmt_duration(sync, sizeof(sync), r->sync_ns));
	if (r->have_counters)
		text_counters(r->counters.names, r->counters.val,
			      r->counters.avail, r->counters.n, opt->verbose);
	putchar('\n');
	fflush(stdout);
}

/* Totals, and for JSON the end of the object (with the error, if any). */
void print_totals(struct wpload_run *run)
{
	const struct wpload_totals *t = &run->totals;
	const struct wpload_opts *opt = run->opt;
	char wall[32], bytes[32], sync[32];

	if (opt->json) {
		if (!run->json_open)
			return;
		printf("\n ], \"totals\": {\"passes\": %" PRIu64 ", \"wall_ns\": %" PRIu64
		       ", \"cpu_ns\": %" PRIu64
		       ", \"sync_ns\": %" PRIu64 ", \"ops\": %" PRIu64
		       ", \"bytes\": %" PRIu64 ", \"counters\": ",
		       t->passes, t->wall_ns, t->cpu_ns, t->sync_ns, t->ops, t->bytes);
		if (t->ncounters)
			json_counters((const char *const *)t->names, t->sum,
				      t->avail, t->ncounters);
		else
			fputs("null", stdout);
		putchar('}');
		if (run->error_exit) {
			fputs(", \"error\": ", stdout);
			json_string(stdout, run->error_msg);
		}
		puts("}");
		return;
	}
	if (run->error_exit)
		return;
	printf("total: %" PRIu64 " pass%s %s %" PRIu64 " ops %s sync %s",
	       t->passes, t->passes == 1 ? "" : "es",
	       wpstat_fmt_duration(wall, sizeof(wall), t->wall_ns), t->ops,
	       wpstat_fmt_bytes(bytes, sizeof(bytes), t->bytes),
	       wpstat_fmt_duration(sync, sizeof(sync), t->sync_ns));
	if (run->counters == COUNTERS_NO_MODULE)
		fputs("  (wpstat module not loaded)", stdout);
	else if (run->counters == COUNTERS_UNREADABLE)
		fputs("  (counters unreadable)", stdout);
	else
		text_counters((const char *const *)t->names, t->sum, t->avail,
			      t->ncounters, opt->verbose);
	putchar('\n');
}

/* ---- one pass ---------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted samples. */
static uint64_t percentile(const uint64_t *sorted, uint64_t n, unsigned int p)
{
	uint64_t rank = (n * p + 99) / 100;

	return sorted[rank ? rank - 1 : 0];
}

/*
 * Worker 0, after a pass that went well, with @r's times and sums filled
 * in: its counters and percentiles, printed and added to the totals.
 */
void report_pass(struct wpload_run *run, struct wpload_pass_result *r)
{
	const struct wpload_opts *opt = run->opt;
	struct wpload_totals *t = &run->totals;
	struct wpstat_snapshot after;
	int after_ret = -1;

	if (run->counters == COUNTERS_ON) {
		after_ret = wpstat_snapshot_read(opt->counters_path, &after);
		if (!run->before_ret && !after_ret) {
			counters_delta(run, &run->before, &after, &r->counters);
			r->have_counters = true;
		}
	}
	/* Every worker stored its samples into its slice of run->lat. */
	if (!opt->no_latency)
		qsort(run->lat, r->ops, sizeof(*run->lat), cmp_u64);
	r->p50 = percentile(run->lat, r->ops, 50);
	r->p99 = percentile(run->lat, r->ops, 99);
	r->max = run->lat[r->ops - 1];

	print_pass(run, r);
	t->passes++;
	t->wall_ns += r->wall_ns;
	t->cpu_ns += r->cpu_ns;
	t->sync_ns += r->sync_ns;
	t->ops += r->ops;
	t->bytes += r->bytes;
	if (r->have_counters)
		totals_add_counters(t, &r->counters);
	if (!after_ret)
		wpstat_snapshot_free(&after);
}
