// SPDX-License-Identifier: GPL-2.0
#include "wpstat_cli.h"

/*
 * The options of the commands that list rows (show, watch, stalls, top):
 * one parser, each command naming the options it takes.  The option
 * table and the short options are built from that choice, so each
 * command accepts, abbreviates and rejects exactly its own options.
 */

static const struct list_opt {
	struct option opt;
	unsigned int flags;	/* any of these takes the option */
} list_opts_all[] = {
	{ { "interval",	required_argument,	NULL, 'i' }, LOPT_INTERVAL },
	{ { "count",	required_argument,	NULL, 'c' }, LOPT_INTERVAL },
	{ { "top",	required_argument,	NULL, 'n' }, LOPT_TOP },
	{ { "limit",	required_argument,	NULL, 'n' }, LOPT_LIMIT },
	{ { "sort",	required_argument,	NULL, 's' },
	  LOPT_SORT_FIELD | LOPT_SORT_STALL },
	{ { "pid",	required_argument,	NULL, 'p' }, LOPT_PID },
	{ { "json",	no_argument,		NULL, 'j' }, LOPT_FORMAT },
	{ { "format",	required_argument,	NULL, 'f' }, LOPT_FORMAT },
	{ { "columns",	required_argument,	NULL, 'o' }, LOPT_COLUMNS },
	{ { "all",	no_argument,		NULL, 'a' }, LOPT_COLUMNS },
	{ { "resolve",	required_argument,	NULL, 'r' }, ~0u },
	{ { "help",	no_argument,		NULL, 'h' }, ~0u },
};

static int parse_format(const char *arg, enum show_format *format)
{
	if (!strcmp(arg, "table"))
		*format = FMT_TABLE;
	else if (!strcmp(arg, "json"))
		*format = FMT_JSON;
	else if (!strcmp(arg, "prometheus"))
		*format = FMT_PROMETHEUS;
	else
		return usage_error("--format: unknown format '%s' (expected table, json or prometheus)",
				   arg);
	return 0;
}

static int parse_stall_sort(const char *arg, bool *by_count)
{
	if (!strcmp(arg, "time"))
		*by_count = false;
	else if (!strcmp(arg, "count"))
		*by_count = true;
	else
		return usage_error("--sort: unknown order '%s' (expected time or count)",
				   arg);
	return 0;
}

/* One option of @o's command; 0, or the exit status of a usage error. */
static int list_opt_set(struct list_opts *o, int c, const char **format_arg,
			bool *json)
{
	switch (c) {
	case 'i':
		return parse_seconds("--interval", optarg, WATCH_MAX_INTERVAL_S,
				     &o->interval);
	case 'c':
		return parse_uint("--count", optarg, 1, UINT64_MAX, &o->count);
	case 'n':
		return parse_uint(o->flags & LOPT_LIMIT ? "--limit" : "--top",
				  optarg, 1, SIZE_MAX, &o->rows);
	case 's':
		if (o->flags & LOPT_SORT_STALL)
			return parse_stall_sort(optarg, &o->sort_by_count);
		o->sort_field = optarg;
		return 0;
	case 'p':
		return parse_uint("--pid", optarg, 1, INT_MAX, &o->pid);
	case 'j':
		*json = true;
		return 0;
	case 'f':
		*format_arg = optarg;
		return parse_format(optarg, &o->format);
	case 'o':
		o->columns = optarg;
		return 0;
	case 'a':
		o->all_columns = true;
		return 0;
	case 'r':
		return dir_list_add(&o->dirs, optarg);
	}
	return -1;
}

/*
 * Parse @argv into @o, whose defaults and flags (LOPT_*) the caller has
 * set.  Returns 0, CMD_HELP or an exit status; o->dirs is freed unless 0.
 */
int list_opts_parse(const char *cmd, int argc, char **argv,
		    struct list_opts *o)
{
	struct option longopts[ARRAY_SIZE(list_opts_all) + 1];
	char shortopts[2 * ARRAY_SIZE(list_opts_all) + 4] = "", *p = shortopts;
	const char *format_arg = NULL;
	bool json = false;
	size_t i, n = 0;
	int c, ret;

	if (o->flags & LOPT_IN_ORDER)
		*p++ = '+';
	*p++ = ':';
	for (i = 0; i < ARRAY_SIZE(list_opts_all); i++) {
		const struct option *opt = &list_opts_all[i].opt;

		if (!(list_opts_all[i].flags & o->flags))
			continue;
		longopts[n++] = *opt;
		if (strchr(shortopts, opt->val))
			continue;
		*p++ = opt->val;
		if (opt->has_arg == required_argument)
			*p++ = ':';
	}
	memset(&longopts[n], 0, sizeof(longopts[n]));

	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == 'h') {
			ret = CMD_HELP;
			goto err;
		}
		ret = list_opt_set(o, c, &format_arg, &json);
		if (ret < 0)
			ret = option_error(cmd, c, argv, shortopts);
		if (ret)
			goto err;
	}
	if (json && format_arg && o->format != FMT_JSON) {
		ret = usage_error("--json and --format %s contradict each other",
				  format_arg);
		goto err;
	}
	if (json)
		o->format = FMT_JSON;
	if (o->columns && o->all_columns) {
		ret = usage_error("%s: -o and --all contradict each other", cmd);
		goto err;
	}
	if ((o->columns || o->all_columns) && o->format != FMT_TABLE) {
		ret = usage_error("%s: -o and --all choose table columns; JSON and Prometheus have every field",
				  cmd);
		goto err;
	}
	for (; optind < argc; optind++) {
		if (!(o->flags & LOPT_DIR_OPERANDS)) {
			ret = usage_error("%s: unexpected argument '%s'", cmd,
					  argv[optind]);
			goto err;
		}
		if (!o->dirs.n) {
			ret = usage_error("%s: unexpected argument '%s' (directories to resolve go after --resolve)",
					  cmd, argv[optind]);
			goto err;
		}
		ret = dir_list_add(&o->dirs, argv[optind]);
		if (ret)
			goto err;
	}
	ret = check_resolve_dirs(o->dirs.dirs, o->dirs.n);
	if (ret)
		goto err;
	return 0;
err:
	free(o->dirs.dirs);
	o->dirs.dirs = NULL;
	o->dirs.n = 0;
	return ret;
}

/*
 * The names of @spec (comma-separated) into @sel, through @lookup (a
 * column's id, or -1 for a name it does not know).  An unknown name is a
 * usage error that lists @known, unless @lenient (a command's defaults
 * on an older module, which lacks one: left out).
 */
int col_sel_parse(const char *spec, bool lenient,
		  int (*lookup)(const void *ctx, const char *name),
		  const void *ctx, const char *known, struct col_sel *sel)
{
	char *list, *name, *save = NULL;
	int c, ret = 0;

	sel->n = 0;
	list = strdup(spec);
	if (!list)
		return runtime_error("out of memory");
	for (name = strtok_r(list, ",", &save); name && !ret;
	     name = strtok_r(NULL, ",", &save)) {
		c = lookup(ctx, name);
		if (c < 0 && lenient)
			continue;
		if (c < 0)
			ret = usage_error("-o: unknown column '%s' (columns: %s)",
					  name, known);
		else if (sel->n == MAX_TABLE_COLS)
			ret = usage_error("-o: more than %d columns",
					  MAX_TABLE_COLS);
		else
			sel->col[sel->n++] = c;
	}
	if (!ret && !sel->n)
		ret = usage_error("-o: no column given");
	free(list);
	return ret;
}
