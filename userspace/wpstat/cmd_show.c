// SPDX-License-Identifier: GPL-2.0
#include "wpstat_cli.h"

/* ---- show --------------------------------------------------------------- */

static int cmd_show(int argc, char **argv)
{
	struct list_opts o = {
		.flags = LOPT_SORT_FIELD | LOPT_TOP | LOPT_FORMAT |
			 LOPT_DIR_OPERANDS | LOPT_COLUMNS,
		.sort_field = "mkwrite_wp",
		.rows = SIZE_MAX,
	};
	struct wpstat_kvlist summary = { 0 };
	struct col_sel sel;
	struct wpstat_snapshot snap;
	struct file_list list;
	int col, ret;

	ret = list_opts_parse("show", argc, argv, &o);
	if (ret)
		return ret;

	ret = read_snapshot(&snap);
	if (ret)
		goto out_dirs;
	ret = parse_sort_field(&snap, o.sort_field, &col);
	if (!ret)
		ret = file_cols_select(&snap, o.columns, o.all_columns, &sel);
	if (ret)
		goto out_snap;
	if (file_list_build(NULL, &snap, &list)) {
		ret = runtime_error("out of memory");
		goto out_snap;
	}
	file_list_sort(&list, col);
	/* Only the rows shown are worth a path. */
	resolve_paths(list.rows, list.n < o.rows ? list.n : o.rows, NULL,
		      o.dirs.dirs, o.dirs.n);

	switch (o.format) {
	case FMT_TABLE:
		print_table(stdout, &list, o.rows, &sel);
		break;
	case FMT_JSON:
		fputs("{\"kernel\": ", stdout);
		json_string(stdout, kernel_release());
		fputs(", \"inodes\": ", stdout);
		json_files(stdout, &list, o.rows, false);
		puts("}");
		break;
	case FMT_PROMETHEUS:
		wpstat_kv_read(WPSTAT_SUMMARY_PATH, &summary);	/* optional */
		print_prometheus(stdout, &list, o.rows, &summary);
		wpstat_kv_free(&summary);
		break;
	}
	ret = 0;
	file_list_free(&list);
out_snap:
	wpstat_snapshot_free(&snap);
out_dirs:
	free(o.dirs.dirs);
	return ret;
}

/* ---- watch -------------------------------------------------------------- */

static int cmd_watch(int argc, char **argv)
{
	struct list_opts o = {
		.flags = LOPT_INTERVAL | LOPT_TOP | LOPT_SORT_FIELD |
			 LOPT_IN_ORDER | LOPT_COLUMNS,
		.sort_field = "mkwrite_wp",
		.rows = WATCH_DEFAULT_TOP,
		.interval = NSEC_PER_SEC,
	};
	struct wpstat_snapshot prev, cur;
	struct path_cache cache = { 0 };
	struct col_sel sel;
	uint64_t iter, deadline;
	bool tty = isatty(STDOUT_FILENO);
	int col, ret;

	ret = list_opts_parse("watch", argc, argv, &o);
	if (ret)
		return ret;
	ret = read_snapshot(&prev);
	if (ret)
		goto out_dirs;
	ret = parse_sort_field(&prev, o.sort_field, &col);
	if (!ret)
		ret = file_cols_select(&prev, o.columns, o.all_columns, &sel);
	if (ret)
		goto out_prev;

	catch_stop_signals();

	deadline = wpstat_now_ns();
	for (iter = 0; !o.count || iter < o.count; iter++) {
		struct file_list list;
		char when[32];
		time_t t;

		deadline += o.interval;
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
		resolve_cached(&cache, list.rows,
			       list.n < o.rows ? list.n : o.rows, o.dirs.dirs,
			       o.dirs.n);
		t = time(NULL);
		strftime(when, sizeof(when), "%H:%M:%S", localtime(&t));
		if (tty)
			fputs("\033[H\033[2J", stdout);
		printf("wpstat watch  %s  interval %.3gs  %zu file%s changed",
		       when, o.interval / 1e9, list.n, list.n == 1 ? "" : "s");
		if (list.n > o.rows)
			printf(" (top %" PRIu64 " by %s)", o.rows, o.sort_field);
		putchar('\n');
		/* A reloaded module may have other columns: ask again. */
		if (file_cols_select(&cur, o.columns, o.all_columns, &sel)) {
			file_list_free(&list);
			wpstat_snapshot_free(&cur);
			ret = EXIT_USAGE;
			goto out_prev;
		}
		if (list.n)
			print_table(stdout, &list, o.rows, &sel);
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
	free(o.dirs.dirs);
	return ret;
}

const struct wpstat_cmd wpstat_cmd_show = {
	"show", cmd_show,
	"show [--sort FIELD] [--top N] [-o COL,... | --all]\n"
	"     [--json | --format table|json|prometheus] [--resolve DIR...]",
	"the counters of every tracked inode (default sort:\n"
	"mkwrite_wp, largest first); columns mkwrite_first,\n"
	"mkwrite_wp, mkclean_calls, cleaned_by (the trigger\n"
	"that cleaned most), stall, worst unless -o names\n"
	"others (any counter) or --all (every counter)",
};

const struct wpstat_cmd wpstat_cmd_watch = {
	"watch", cmd_watch,
	"watch [--interval S] [--top N] [--count N] [--sort FIELD]\n"
	"      [-o COL,... | --all] [--resolve DIR]",
	"what changed in each interval, top-style (columns\n"
	"as show)",
};
