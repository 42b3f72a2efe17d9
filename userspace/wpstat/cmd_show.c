// SPDX-License-Identifier: GPL-2.0
#include "wpstat.h"

/* ---- show --------------------------------------------------------------- */

/* ---- watch -------------------------------------------------------------- */

static int cmd_show(int argc, char **argv)
{
	static const char shortopts[] = ":hjs:n:f:r:";
	static const struct option longopts[] = {
		{ "sort",	required_argument,	NULL, 's' },
		{ "top",	required_argument,	NULL, 'n' },
		{ "json",	no_argument,		NULL, 'j' },
		{ "format",	required_argument,	NULL, 'f' },
		{ "resolve",	required_argument,	NULL, 'r' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL,		0,			NULL, 0 },
	};
	enum show_format format = FMT_TABLE;
	const char *sort = "mkwrite_wp", *format_arg = NULL;
	struct wpstat_kvlist summary = { 0 };
	struct dir_list dirs = { 0 };
	struct wpstat_snapshot snap;
	struct file_list list;
	uint64_t top = SIZE_MAX;
	bool json = false;
	int c, col, ret;

	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			sort = optarg;
			break;
		case 'n':
			ret = parse_uint("--top", optarg, 1, SIZE_MAX, &top);
			if (ret)
				goto out_dirs;
			break;
		case 'j':
			json = true;
			break;
		case 'f':
			format_arg = optarg;
			if (!strcmp(optarg, "table")) {
				format = FMT_TABLE;
			} else if (!strcmp(optarg, "json")) {
				format = FMT_JSON;
			} else if (!strcmp(optarg, "prometheus")) {
				format = FMT_PROMETHEUS;
			} else {
				ret = usage_error("--format: unknown format '%s' (expected table, json or prometheus)",
						  optarg);
				goto out_dirs;
			}
			break;
		case 'r':
			ret = dir_list_add(&dirs, optarg);
			if (ret)
				goto out_dirs;
			break;
		case 'h':
			ret = CMD_HELP;
			goto out_dirs;
		default:
			ret = option_error("show", c, argv, shortopts);
			goto out_dirs;
		}
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
			ret = usage_error("show: unexpected argument '%s' (directories to resolve go after --resolve)",
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

	ret = read_snapshot(&snap);
	if (ret)
		goto out_dirs;
	ret = parse_sort_field(&snap, sort, &col);
	if (ret)
		goto out_snap;
	if (file_list_build(NULL, &snap, &list)) {
		ret = runtime_error("out of memory");
		goto out_snap;
	}
	file_list_sort(&list, col);
	/* Only the rows shown are worth a path. */
	resolve_paths(list.rows, list.n < top ? list.n : top, NULL, dirs.dirs,
		      dirs.n);

	switch (format) {
	case FMT_TABLE:
		print_table(stdout, &list, top);
		break;
	case FMT_JSON:
		fputs("{\"kernel\": ", stdout);
		json_string(stdout, kernel_release());
		fputs(", \"inodes\": ", stdout);
		json_files(stdout, &list, top, false);
		puts("}");
		break;
	case FMT_PROMETHEUS:
		wpstat_kv_read(WPSTAT_SUMMARY_PATH, &summary);	/* optional */
		print_prometheus(stdout, &list, top, &summary);
		wpstat_kv_free(&summary);
		break;
	}
	ret = 0;
	file_list_free(&list);
out_snap:
	wpstat_snapshot_free(&snap);
out_dirs:
	free(dirs.dirs);
	return ret;
}

static int cmd_watch(int argc, char **argv)
{
	static const char shortopts[] = "+:hi:n:c:s:r:";
	static const struct option longopts[] = {
		{ "interval",	required_argument,	NULL, 'i' },
		{ "top",	required_argument,	NULL, 'n' },
		{ "count",	required_argument,	NULL, 'c' },
		{ "sort",	required_argument,	NULL, 's' },
		{ "resolve",	required_argument,	NULL, 'r' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL,		0,			NULL, 0 },
	};
	struct wpstat_snapshot prev, cur;
	struct path_cache cache = { 0 };
	struct dir_list dirs = { 0 };
	uint64_t interval = NSEC_PER_SEC, top = WATCH_DEFAULT_TOP, count = 0;
	uint64_t iter, deadline;
	const char *sort = "mkwrite_wp";
	struct sigaction sa;
	bool tty = isatty(STDOUT_FILENO);
	int c, col, ret;

	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		ret = 0;
		switch (c) {
		case 'i':
			ret = parse_seconds("--interval", optarg,
					    WATCH_MAX_INTERVAL_S, &interval);
			break;
		case 'n':
			ret = parse_uint("--top", optarg, 1, SIZE_MAX, &top);
			break;
		case 'c':
			ret = parse_uint("--count", optarg, 1, UINT64_MAX, &count);
			break;
		case 's':
			sort = optarg;
			break;
		case 'r':
			ret = dir_list_add(&dirs, optarg);
			break;
		case 'h':
			free(dirs.dirs);
			return CMD_HELP;
		default:
			ret = option_error("watch", c, argv, shortopts);
		}
		if (ret)
			goto out_dirs;
	}
	if (optind < argc) {
		ret = usage_error("watch: unexpected argument '%s'", argv[optind]);
		goto out_dirs;
	}
	ret = check_resolve_dirs(dirs.dirs, dirs.n);
	if (ret)
		goto out_dirs;
	ret = read_snapshot(&prev);
	if (ret)
		goto out_dirs;
	ret = parse_sort_field(&prev, sort, &col);
	if (ret)
		goto out_prev;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;	/* no SA_RESTART: wake the sleep */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	deadline = wpstat_now_ns();
	for (iter = 0; !count || iter < count; iter++) {
		struct file_list list;
		char when[32];
		time_t t;

		deadline += interval;
		if (!sleep_until(deadline))
			break;
		ret = read_snapshot(&cur);
		if (ret)
			goto out_prev;
		if (file_list_build(&prev, &cur, &list)) {
			wpstat_snapshot_free(&cur);
			ret = runtime_error("out of memory");
			goto out_prev;
		}
		/* The sort field may have gone if the module was reloaded. */
		if (col >= 0 && col >= cur.ncounters)
			col = SORT_DEV;
		file_list_sort(&list, col);
		resolve_cached(&cache, list.rows, list.n < top ? list.n : top,
			       dirs.dirs, dirs.n);
		t = time(NULL);
		strftime(when, sizeof(when), "%H:%M:%S", localtime(&t));
		if (tty)
			fputs("\033[H\033[2J", stdout);
		printf("wpstat watch  %s  interval %.3gs  %zu file%s changed",
		       when, interval / 1e9, list.n, list.n == 1 ? "" : "s");
		if (list.n > top)
			printf(" (top %" PRIu64 " by %s)", top, sort);
		putchar('\n');
		if (list.n)
			print_table(stdout, &list, top);
		putchar('\n');
		fflush(stdout);
		file_list_free(&list);
		wpstat_snapshot_free(&prev);
		prev = cur;
	}
	ret = 0;
out_prev:
	wpstat_snapshot_free(&prev);
	path_cache_free(&cache);
out_dirs:
	free(dirs.dirs);
	return ret;
}

const struct wpstat_cmd wpstat_cmd_show = {
	"show", cmd_show,
	"show [--sort FIELD] [--top N] [--json | --format table|json|prometheus]\n"
	"     [--resolve DIR...]",
	"the counters of every tracked inode (default sort:\n"
	"mkwrite_wp, largest first)",
};

const struct wpstat_cmd wpstat_cmd_watch = {
	"watch", cmd_watch,
	"watch [--interval S] [--top N] [--count N] [--sort FIELD] [--resolve DIR]",
	"what changed in each interval, top-style",
};
