// SPDX-License-Identifier: GPL-2.0
#include "wpstat_cli.h"
#include "diagnose.h"

/* ---- diagnose ----------------------------------------------------------- */

struct diagnose_opts {
	uint64_t interval;	/* ns; 0: since the last reset */
	uint64_t pid;
	const char *path;
	bool json;
	struct dir_list dirs;
};

static int diagnose_parse(int argc, char **argv, struct diagnose_opts *o)
{
	static const struct option longopts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "pid", required_argument, NULL, 'p' },
		{ "path", required_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ "resolve", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	static const char shortopts[] = ":i:p:f:jr:";
	struct stat st;
	int c, ret;

	memset(o, 0, sizeof(*o));
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			ret = parse_seconds("--interval", optarg,
					    WATCH_MAX_INTERVAL_S, &o->interval);
			break;
		case 'p':
			ret = parse_uint("--pid", optarg, 1, INT_MAX, &o->pid);
			break;
		case 'f':
			o->path = optarg;
			ret = stat(optarg, &st) ? usage_error("diagnose: --path %s: %s",
							      optarg, strerror(errno)) : 0;
			break;
		case 'j':
			o->json = true;
			ret = 0;
			break;
		case 'r':
			ret = dir_list_add(&o->dirs, optarg);
			break;
		default:
			ret = option_error("diagnose", c, argv, shortopts);
			break;
		}
		if (ret)
			return ret;
	}
	for (; optind < argc; optind++) {
		ret = dir_list_add(&o->dirs, argv[optind]);
		if (ret)
			return ret;
	}
	return check_resolve_dirs(o->dirs.dirs, o->dirs.n);
}

/* Keep only the rows of @key's file. */
static void stall_list_only_file(struct stall_list *l,
				 const struct wpstat_file_key *key)
{
	size_t i, n = 0;

	for (i = 0; i < l->n; i++) {
		const struct wpstat_row *r = &l->items[i].row->file;

		if (wpstat_row_is_file(r, key))
			l->items[n++] = l->items[i];
	}
	l->n = n;
}

/* ---- output ------------------------------------------------------------- */

static void print_evidence(FILE *out, const struct dx_evidence *e)
{
	char buf[64];

	if (!e->numeric)
		fprintf(out, "     %s: %s", e->name, e->text);
	else if (e->unit && !strcmp(e->unit, "ns"))
		fprintf(out, "     %s %s", e->name,
			wpstat_fmt_duration(buf, sizeof(buf), e->value));
	else
		fprintf(out, "     %s %" PRIu64, e->name, e->value);
	fprintf(out, "  [%s]\n", e->source);
}

static void diagnose_text(FILE *out, const struct dx_report *r,
			  const struct diagnose_opts *o, size_t nrows)
{
	char buf[64];
	int i, k;

	fprintf(out, "wpstat diagnose: %s stalled in %zu process x file row%s (%s)\n",
		r->timed ? wpstat_fmt_duration(buf, sizeof(buf), r->stall_ns) :
		"no time measured", nrows, nrows == 1 ? "" : "s",
		o->interval ? "over the interval" : "since the last reset");
	/* Only the time findings are notable; the info ones still print. */
	for (i = 0; i < r->n && r->f[i].share < 0; i++)
		;
	if (i == r->n)
		fputs("\nnothing notable\n", out);
	for (i = 0; i < r->n; i++) {
		const struct dx_finding *f = &r->f[i];

		fprintf(out, "\n%d. [%s", i + 1, dx_severity_name(f->severity));
		if (f->share >= 0)
			fprintf(out, " %.0f%%", 100 * f->share);
		fprintf(out, "] %s", f->title);
		if (f->pid) {
			fprintf(out, ": pid %" PRIu32 " (", f->pid);
			print_path_plain(out, f->comm);
			fputs(") on ", out);
			print_path_plain(out, f->file);
		}
		fputs("\n   evidence:\n", out);
		for (k = 0; k < f->nev; k++)
			print_evidence(out, &f->ev[k]);
		fprintf(out, "   mechanism: %s\n   remedies:\n", f->mechanism);
		for (k = 0; k < f->nrem; k++)
			fprintf(out, "     %c. %s\n        takes away: %s; costs: %s\n",
				'a' + k, f->rem[k].change, f->rem[k].effect,
				f->rem[k].cost);
	}
}

static void json_finding(FILE *out, const struct dx_finding *f)
{
	int k;

	fputs("{\"rule\": ", out);
	json_string(out, f->rule);
	fputs(", \"title\": ", out);
	json_string(out, f->title);
	fputs(", \"severity\": ", out);
	json_string(out, dx_severity_name(f->severity));
	fprintf(out, ", \"stall_ns\": %" PRIu64 ", \"share\": ", f->ns);
	if (f->share >= 0)
		fprintf(out, "%.4f", f->share);
	else
		fputs("null", out);
	fputs(", \"pid\": ", out);
	if (f->pid) {
		fprintf(out, "%" PRIu32 ", \"comm\": ", f->pid);
		json_string(out, f->comm);
		fputs(", \"file\": ", out);
		json_string(out, f->file);
	} else {
		fputs("null, \"comm\": null, \"file\": null", out);
	}
	fputs(", \"evidence\": [", out);
	for (k = 0; k < f->nev; k++) {
		const struct dx_evidence *e = &f->ev[k];

		fputs(k ? ", {\"name\": " : "{\"name\": ", out);
		json_string(out, e->name);
		fputs(", \"value\": ", out);
		if (e->numeric)
			fprintf(out, "%" PRIu64, e->value);
		else
			json_string(out, e->text);
		fputs(", \"unit\": ", out);
		json_string_or_null(out, e->unit);
		fputs(", \"source\": ", out);
		json_string(out, e->source);
		fputc('}', out);
	}
	fputs("], \"mechanism\": ", out);
	json_string(out, f->mechanism);
	fputs(", \"remedies\": [", out);
	for (k = 0; k < f->nrem; k++) {
		fputs(k ? ", {\"change\": " : "{\"change\": ", out);
		json_string(out, f->rem[k].change);
		fputs(", \"takes_away\": ", out);
		json_string(out, f->rem[k].effect);
		fputs(", \"cost\": ", out);
		json_string(out, f->rem[k].cost);
		fputc('}', out);
	}
	fputs("]}", out);
}

static void diagnose_json(FILE *out, const struct dx_report *r,
			  const struct diagnose_opts *o, const char *level,
			  size_t nrows)
{
	int i;

	fputs("{\"kernel\": ", out);
	json_string(out, kernel_release());
	fputs(", \"level\": ", out);
	json_string_or_null(out, level);
	fputs(", \"window_ns\": ", out);
	json_u64_or_null(out, o->interval, o->interval != 0);
	fprintf(out, ", \"rows\": %zu, \"stall_ns\": ", nrows);
	json_u64_or_null(out, r->stall_ns, r->timed);
	fputs(", \"findings\": [", out);
	for (i = 0; i < r->n; i++) {
		fputs(i ? ", " : "", out);
		json_finding(out, &r->f[i]);
	}
	fputs("]}\n", out);
}

/* ---- the command -------------------------------------------------------- */

static int cmd_diagnose(int argc, char **argv)
{
	struct wpstat_stall_snapshot s0, s1;
	struct wpstat_snapshot i0, i1;
	struct wpstat_kvlist summary = { 0 };
	struct wpstat_file_key key;
	struct stall_list stalls, everyone = { 0 };
	struct cgroup_map cgroups = { 0 };
	struct file_list files;
	struct diagnose_opts o;
	struct dx_report *rep;
	struct dx_input in;
	char *level = NULL, *named[2] = { NULL, NULL };
	int ret;

	ret = diagnose_parse(argc, argv, &o);
	if (ret)
		goto out_dirs;
	if (o.path && wpstat_path_key(o.path, &key)) {
		ret = runtime_error("diagnose: --path %s: cannot tell its inode",
				    o.path);
		goto out_dirs;
	}
	ret = read_stalls(&s0);
	if (ret)
		goto out_dirs;
	ret = read_snapshot(&i0);
	if (ret)
		goto out_s0;
	if (o.interval) {
		catch_stop_signals();
		sleep_until(wpstat_now_ns() + o.interval);
		ret = read_stalls(&s1);
		if (ret)
			goto out_i0;
		ret = read_snapshot(&i1);
		if (ret)
			goto out_s1;
	}
	rep = calloc(1, sizeof(*rep));
	if (!rep || stall_list_build(o.interval ? &s0 : NULL,
				     o.interval ? &s1 : &s0, o.pid, &stalls)) {
		free(rep);
		ret = runtime_error("out of memory");
		goto out_i1;
	}
	/* Who synced a file may be another process than --pid's. */
	if (o.pid && stall_list_build(o.interval ? &s0 : NULL,
				      o.interval ? &s1 : &s0, 0, &everyone)) {
		ret = runtime_error("out of memory");
		goto out_stalls;
	}
	if (file_list_build(o.interval ? &i0 : NULL, o.interval ? &i1 : &i0,
			    &files)) {
		ret = runtime_error("out of memory");
		goto out_stalls;
	}
	if (o.path)
		stall_list_only_file(&stalls, &key);
	stall_list_sort(&stalls, STALL_SORT_TIME);
	named[0] = (char *)o.path;
	stall_list_resolve(&stalls, SIZE_MAX, NULL, NULL, named, o.dirs.dirs,
			   o.dirs.n);
	cgroup_map_resolve(&cgroups, &stalls, SIZE_MAX);
	wpstat_kv_read(WPSTAT_SUMMARY_PATH, &summary);	/* optional */
	level = read_first_line(SYSFS_PARAMS_DIR "/level");

	in = (struct dx_input){ .stalls = &stalls,
				.everyone = o.pid ? &everyone : &stalls,
				.cgroup_mount = cgroups.mount,
				.files = &files,
				.summary = &summary, .level = level,
				.window_ns = o.interval };
	dx_diagnose(&in, rep);
	if (o.json)
		diagnose_json(stdout, rep, &o, level, stalls.n);
	else
		diagnose_text(stdout, rep, &o, stalls.n);
	ret = 0;
	free(level);
	cgroup_map_free(&cgroups);
	wpstat_kv_free(&summary);
	file_list_free(&files);
out_stalls:
	if (o.pid)
		stall_list_free(&everyone);
	stall_list_free(&stalls);
	free(rep);
out_i1:
	if (o.interval)
		wpstat_snapshot_free(&i1);
out_s1:
	if (o.interval)
		wpstat_stalls_free(&s1);
out_i0:
	wpstat_snapshot_free(&i0);
out_s0:
	wpstat_stalls_free(&s0);
out_dirs:
	free(o.dirs.dirs);
	return ret;
}

const struct wpstat_cmd wpstat_cmd_diagnose = {
	"diagnose", cmd_diagnose,
	"diagnose [--interval S] [--pid PID] [--path FILE] [--json]\n"
	"         [--resolve DIR...]",
	"findings from the stall table: each cause that holds\n"
	"5 % or more of the stall time (since the last reset, or\n"
	"over --interval), with its evidence, the kernel\n"
	"mechanism and ranked remedies; what wpstat could not\n"
	"see; \"nothing notable\" when nothing stalled",
};
