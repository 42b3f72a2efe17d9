// SPDX-License-Identifier: GPL-2.0
#include "wpstat.h"
#include "stalls.h"

/* ---- stalls ------------------------------------------------------------- */

static int parse_stall_sort(const char *arg, enum stall_sort *sort)
{
	if (!strcmp(arg, "time"))
		*sort = STALL_SORT_TIME;
	else if (!strcmp(arg, "count"))
		*sort = STALL_SORT_COUNT;
	else
		return usage_error("--sort: unknown order '%s' (expected time or count)",
				   arg);
	return 0;
}

static int cmd_stalls(int argc, char **argv)
{
	static const char shortopts[] = ":hjf:s:p:r:";
	static const struct option longopts[] = {
		{ "json",	no_argument,		NULL, 'j' },
		{ "format",	required_argument,	NULL, 'f' },
		{ "sort",	required_argument,	NULL, 's' },
		{ "pid",	required_argument,	NULL, 'p' },
		{ "resolve",	required_argument,	NULL, 'r' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL,		0,			NULL, 0 },
	};
	enum show_format format = FMT_TABLE;
	enum stall_sort sort = STALL_SORT_TIME;
	struct wpstat_kvlist summary = { 0 };
	struct cgroup_map cgroups = { 0 };
	struct wpstat_stall_snapshot snap;
	struct dir_list dirs = { 0 };
	const char *format_arg = NULL;
	struct stall_list list;
	uint64_t pid = 0;
	bool json = false;
	int c, ret;

	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		ret = 0;
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'f':
			format_arg = optarg;
			if (!strcmp(optarg, "table"))
				format = FMT_TABLE;
			else if (!strcmp(optarg, "json"))
				format = FMT_JSON;
			else if (!strcmp(optarg, "prometheus"))
				format = FMT_PROMETHEUS;
			else
				ret = usage_error("--format: unknown format '%s' (expected table, json or prometheus)",
						  optarg);
			break;
		case 's':
			ret = parse_stall_sort(optarg, &sort);
			break;
		case 'p':
			ret = parse_uint("--pid", optarg, 1, INT_MAX, &pid);
			break;
		case 'r':
			ret = dir_list_add(&dirs, optarg);
			break;
		case 'h':
			ret = CMD_HELP;
			goto out_dirs;
		default:
			ret = option_error("stalls", c, argv, shortopts);
		}
		if (ret)
			goto out_dirs;
	}
	if (json && format_arg && format != FMT_JSON) {
		ret = usage_error("--json and --format %s contradict each other",
				  format_arg);
		goto out_dirs;
	}
	if (json)
		format = FMT_JSON;
	for (; optind < argc; optind++) {
		if (!dirs.n) {
			ret = usage_error("stalls: unexpected argument '%s' (directories to resolve go after --resolve)",
					  argv[optind]);
			goto out_dirs;
		}
		ret = dir_list_add(&dirs, argv[optind]);
		if (ret)
			goto out_dirs;
	}
	ret = check_resolve_dirs(dirs.dirs, dirs.n);
	if (ret)
		goto out_dirs;

	ret = read_stalls(&snap);
	if (ret)
		goto out_dirs;
	if (stall_list_build(NULL, &snap, pid, &list)) {
		ret = runtime_error("out of memory");
		goto out_snap;
	}
	stall_list_sort(&list, sort);
	stall_list_resolve(&list, SIZE_MAX, NULL, NULL, NULL, dirs.dirs, dirs.n);
	cgroup_map_resolve(&cgroups, &list, SIZE_MAX);

	switch (format) {
	case FMT_TABLE:
		print_stall_table(stdout, &list, SIZE_MAX, "");
		break;
	case FMT_JSON:
		fputs("{\"kernel\": ", stdout);
		json_string(stdout, kernel_release());
		fputs(", \"stalls\": ", stdout);
		json_stalls(stdout, &list, SIZE_MAX, "");
		puts("}");
		break;
	case FMT_PROMETHEUS:
		wpstat_kv_read(WPSTAT_SUMMARY_PATH, &summary);	/* optional */
		print_stall_prometheus(stdout, &list, &summary);
		wpstat_kv_free(&summary);
		break;
	}
	ret = 0;
	cgroup_map_free(&cgroups);
	stall_list_free(&list);
out_snap:
	wpstat_stalls_free(&snap);
out_dirs:
	free(dirs.dirs);
	return ret;
}

/* ---- top ---------------------------------------------------------------- */

static int cmd_top(int argc, char **argv)
{
	static const char shortopts[] = "+:hi:c:n:r:";
	static const struct option longopts[] = {
		{ "interval",	required_argument,	NULL, 'i' },
		{ "count",	required_argument,	NULL, 'c' },
		{ "limit",	required_argument,	NULL, 'n' },
		{ "resolve",	required_argument,	NULL, 'r' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL,		0,			NULL, 0 },
	};
	uint64_t interval = NSEC_PER_SEC, limit = TOP_DEFAULT_LIMIT, count = 0;
	struct wpstat_stall_snapshot prev, cur;
	struct cgroup_map cgroups = { 0 };
	struct path_cache cache = { 0 };
	struct dir_list dirs = { 0 };
	bool tty = isatty(STDOUT_FILENO);
	uint64_t iter, deadline;
	struct sigaction sa;
	int c, ret;

	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		ret = 0;
		switch (c) {
		case 'i':
			ret = parse_seconds("--interval", optarg,
					    WATCH_MAX_INTERVAL_S, &interval);
			break;
		case 'c':
			ret = parse_uint("--count", optarg, 1, UINT64_MAX, &count);
			break;
		case 'n':
			ret = parse_uint("--limit", optarg, 1, SIZE_MAX, &limit);
			break;
		case 'r':
			ret = dir_list_add(&dirs, optarg);
			break;
		case 'h':
			ret = CMD_HELP;
			goto out_dirs;
		default:
			ret = option_error("top", c, argv, shortopts);
		}
		if (ret)
			goto out_dirs;
	}
	for (; optind < argc; optind++) {
		if (!dirs.n) {
			ret = usage_error("top: unexpected argument '%s' (directories to resolve go after --resolve)",
					  argv[optind]);
			goto out_dirs;
		}
		ret = dir_list_add(&dirs, argv[optind]);
		if (ret)
			goto out_dirs;
	}
	ret = check_resolve_dirs(dirs.dirs, dirs.n);
	if (ret)
		goto out_dirs;
	ret = read_stalls(&prev);
	if (ret)
		goto out_dirs;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;	/* no SA_RESTART: wake the sleep */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	deadline = wpstat_now_ns();
	for (iter = 0; !count || iter < count; iter++) {
		struct stall_list list;
		char when[32];
		time_t t;

		deadline += interval;
		if (!sleep_until(deadline))
			break;
		ret = read_stalls(&cur);
		if (ret)
			goto out_prev;
		if (stall_list_build(&prev, &cur, 0, &list)) {
			wpstat_stalls_free(&cur);
			ret = runtime_error("out of memory");
			goto out_prev;
		}
		stall_list_sort(&list, STALL_SORT_TIME);
		stall_list_resolve(&list, limit, NULL, &cache, NULL, dirs.dirs,
				   dirs.n);
		cgroup_map_resolve(&cgroups, &list, limit);
		t = time(NULL);
		strftime(when, sizeof(when), "%H:%M:%S", localtime(&t));
		if (tty)
			fputs("\033[H\033[2J", stdout);
		printf("wpstat top  %s  interval %.3gs  %zu row%s changed",
		       when, interval / 1e9, list.n, list.n == 1 ? "" : "s");
		if (list.n > limit)
			printf(" (top %" PRIu64 " by stall time)", limit);
		putchar('\n');
		if (list.n)
			print_stall_table(stdout, &list, limit, "");
		putchar('\n');
		fflush(stdout);
		stall_list_free(&list);
		wpstat_stalls_free(&prev);
		prev = cur;
	}
	ret = 0;
out_prev:
	wpstat_stalls_free(&prev);
	path_cache_free(&cache);
	cgroup_map_free(&cgroups);
out_dirs:
	free(dirs.dirs);
	return ret;
}

const struct wpstat_cmd wpstat_cmd_stalls = {
	"stalls", cmd_stalls,
	"stalls [--sort time|count] [--pid PID]\n"
	"       [--json | --format table|json|prometheus] [--resolve DIR...]",
	"who stalled, on which file, why: one row per process\n"
	"and file, most stall time first",
};

const struct wpstat_cmd wpstat_cmd_top = {
	"top", cmd_top,
	"top [--interval S] [--count N] [--limit ROWS] [--resolve DIR...]",
	"the stalls of each interval, most stall time first",
};
