// SPDX-License-Identifier: GPL-2.0
#include "wpstat_cli.h"
#include "stalls.h"

/* ---- stalls ------------------------------------------------------------- */

static int cmd_stalls(int argc, char **argv)
{
	struct list_opts o = {
		.flags = LOPT_FORMAT | LOPT_SORT_STALL | LOPT_PID |
			 LOPT_DIR_OPERANDS | LOPT_COLUMNS,
	};
	struct wpstat_kvlist summary = { 0 };
	struct col_sel sel;
	struct cgroup_map cgroups = { 0 };
	struct wpstat_stall_snapshot snap;
	struct stall_list list;
	int ret;

	ret = list_opts_parse("stalls", argc, argv, &o);
	if (ret)
		return ret;
	ret = stall_cols_select(o.columns, o.all_columns, &sel);
	if (ret)
		goto out_dirs;

	ret = read_stalls(&snap);
	if (ret)
		goto out_dirs;
	if (stall_list_build(NULL, &snap, o.pid, &list)) {
		ret = runtime_error("out of memory");
		goto out_snap;
	}
	stall_list_sort(&list, o.sort_by_count ? STALL_SORT_COUNT :
					       STALL_SORT_TIME);
	stall_list_resolve(&list, SIZE_MAX, NULL, NULL, NULL, o.dirs.dirs,
			   o.dirs.n);
	cgroup_map_resolve(&cgroups, &list, SIZE_MAX);

	switch (o.format) {
	case FMT_TABLE:
		print_stall_table(stdout, &list, SIZE_MAX, "", &sel);
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
	free(o.dirs.dirs);
	return ret;
}

/* ---- top ---------------------------------------------------------------- */

static int cmd_top(int argc, char **argv)
{
	struct list_opts o = {
		.flags = LOPT_INTERVAL | LOPT_LIMIT | LOPT_IN_ORDER |
			 LOPT_DIR_OPERANDS | LOPT_COLUMNS,
		.rows = TOP_DEFAULT_LIMIT,
		.interval = NSEC_PER_SEC,
	};
	struct col_sel sel;
	struct wpstat_stall_snapshot prev, cur;
	struct cgroup_map cgroups = { 0 };
	struct path_cache cache = { 0 };
	bool tty = isatty(STDOUT_FILENO);
	uint64_t iter, deadline;
	int ret;

	ret = list_opts_parse("top", argc, argv, &o);
	if (ret)
		return ret;
	ret = stall_cols_select(o.columns, o.all_columns, &sel);
	if (ret)
		goto out_dirs;
	ret = read_stalls(&prev);
	if (ret)
		goto out_dirs;

	catch_stop_signals();

	deadline = wpstat_now_ns();
	for (iter = 0; !o.count || iter < o.count; iter++) {
		struct stall_list list;
		char when[32];
		time_t t;

		deadline += o.interval;
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
		stall_list_resolve(&list, o.rows, NULL, &cache, NULL, o.dirs.dirs,
				   o.dirs.n);
		cgroup_map_resolve(&cgroups, &list, o.rows);
		t = time(NULL);
		strftime(when, sizeof(when), "%H:%M:%S", localtime(&t));
		if (tty)
			fputs("\033[H\033[2J", stdout);
		printf("wpstat top  %s  interval %.3gs  %zu row%s changed",
		       when, o.interval / 1e9, list.n, list.n == 1 ? "" : "s");
		if (list.n > o.rows)
			printf(" (top %" PRIu64 " by stall time)", o.rows);
		putchar('\n');
		if (list.n)
			print_stall_table(stdout, &list, o.rows, "", &sel);
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
	free(o.dirs.dirs);
	return ret;
}

const struct wpstat_cmd wpstat_cmd_stalls = {
	"stalls", cmd_stalls,
	"stalls [--sort time|count] [--pid PID] [-o COL,... | --all]\n"
	"       [--json | --format table|json|prometheus] [--resolve DIR...]",
	"who stalled, on which file, why: one row per process\n"
	"and file, most stall time first; columns pid, comm,\n"
	"cause, stall, worst, fault_first, fault_wp unless -o\n"
	"names others (stable, wb, pause, journal, fault,\n"
	"unnamed, cpu, runq, sleep, events, cgroup) or --all",
};

const struct wpstat_cmd wpstat_cmd_top = {
	"top", cmd_top,
	"top [--interval S] [--count N] [--limit ROWS] [-o COL,... | --all]\n"
	"    [--resolve DIR...]",
	"the stalls of each interval, most stall time first\n"
	"(columns as stalls)",
};
