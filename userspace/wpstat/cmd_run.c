// SPDX-License-Identifier: GPL-2.0
#include "wpstat_cli.h"
#include "stalls.h"

/* ---- run ---------------------------------------------------------------- */

struct run_result {
	char **argv;
	pid_t pid;		/* the command's process */
	int exit_status;
	int signal;		/* 0 unless killed by one */
	uint64_t wall_ns;
	bool reset;
	struct col_sel files, stalls;	/* the tables' columns */
};

/*
 * The command's own stalls: the change of the stalls rows of its process
 * (rows are per process: its children have rows of their own, which are
 * not counted).  @err says why there are none to report, if so.
 */
struct run_stalls {
	bool have;
	const char *err;
	struct stall_list list;
	struct stall_sum total;
	uint64_t fault_first, fault_wp;
	bool have_fault_first, have_fault_wp;
};

/*
 * Why run reports no stalls, or NULL when @err is 0 and @s has every
 * column wpstat knows (read them).
 */
static const char *stalls_unavailable(int err,
				      const struct wpstat_stall_snapshot *s)
{
	static char why[128];
	const char *missing;

	switch (-err) {
	case 0:
		missing = stall_missing_column(s);
		if (!missing)
			return NULL;
		snprintf(why, sizeof(why), "%s has no column %s (module and wpstat of different versions?)",
			 WPSTAT_STALLS_PATH, missing);
		return why;
	case ENOENT:
		return "the module has no " WPSTAT_STALLS_PATH;
	case EPROTO:
		return WPSTAT_STALLS_PATH " has an unexpected format";
	default:
		return strerror(-err);
	}
}

static void run_stalls_total(struct run_stalls *rs)
{
	const struct stall_list *l = &rs->list;
	int first = l->cols.col[STALL_FAULT_FIRST];
	int wp = l->cols.col[STALL_FAULT_WP];
	size_t i;

	for (i = 0; i < l->n; i++) {
		const struct stall_item *it = &l->items[i];

		stall_sum_add(&rs->total, &l->cols, it->val, it->avail);
		if (first >= 0 && it->avail[first]) {
			rs->fault_first += it->val[first];
			rs->have_fault_first = true;
		}
		if (wp >= 0 && it->avail[wp]) {
			rs->fault_wp += it->val[wp];
			rs->have_fault_wp = true;
		}
	}
}

/*
 * The changes of the trigger columns over the files of @l, into @sum;
 * @have[t] false where the column is absent or reads "-".  Returns
 * whether any trigger column exists.
 */
static bool trigger_sums(const struct file_list *l, uint64_t *sum, bool *have)
{
	bool any = false;
	size_t t, i;
	int c;

	for (t = 0; t < NR_MKCLEAN_TRIGGERS; t++) {
		sum[t] = 0;
		have[t] = false;
		c = wpstat_counter_index(l->snap, mkclean_triggers[t].column);
		if (c < 0)
			continue;
		any = true;
		have[t] = true;
		for (i = 0; i < l->n; i++) {
			if (!l->rows[i].avail[c])
				have[t] = false;
			sum[t] += l->rows[i].val[c];
		}
	}
	return any;
}

/* "write-protected by: fsync 120, flusher-periodic 4", largest first. */
static void run_report_triggers(FILE *out, const struct file_list *l)
{
	uint64_t sum[NR_MKCLEAN_TRIGGERS];
	bool have[NR_MKCLEAN_TRIGGERS], done[NR_MKCLEAN_TRIGGERS] = { false };
	size_t t, best, shown = 0;

	if (!trigger_sums(l, sum, have))
		return;
	fputs("\n write-protected by:", out);
	for (;;) {
		for (t = 0, best = NR_MKCLEAN_TRIGGERS; t < NR_MKCLEAN_TRIGGERS; t++)
			if (!done[t] && have[t] && sum[t] &&
			    (best == NR_MKCLEAN_TRIGGERS || sum[t] > sum[best]))
				best = t;
		if (best == NR_MKCLEAN_TRIGGERS)
			break;
		fprintf(out, "%s %s %" PRIu64, shown++ ? "," : "",
			mkclean_triggers[best].name, sum[best]);
		done[best] = true;
	}
	fputs(shown ? "\n" : " nothing (no folio_mkclean call)\n", out);
}

static void run_report_stalls(FILE *out, const struct run_result *r,
			      const struct run_stalls *rs)
{
	const struct stall_sum *s = &rs->total;
	uint64_t sleep;
	char buf[32];
	int k;

	if (!rs->have) {
		fprintf(out, "\n stalls: not available (%s)\n", rs->err);
		return;
	}
	fprintf(out, "\n stalls of pid %d", (int)r->pid);
	if (!rs->list.n) {
		fputs(": none\n", out);
		return;
	}
	fputs(" (", out);
	print_path_plain(out, rs->list.items[0].row->comm);
	fprintf(out, "): %s, dominant cause %s\n",
		stall_have_time(s) ? wpstat_fmt_duration(buf, sizeof(buf),
						  stall_total_ns(s)) :
		"no time measured", stall_dominant(s));
	for (k = 0; k < CAUSE_NR; k++) {
		fprintf(out, "   %-7s %8s in %" PRIu64 " %s",
			stall_causes[k].name,
			s->have_ns[k] ? wpstat_fmt_duration(buf, sizeof(buf), s->ns[k]) :
			"-", s->events[k], stall_causes[k].unit);
		if (k == CAUSE_FAULT && rs->have_fault_first &&
		    rs->have_fault_wp)
			fprintf(out, " (%" PRIu64 " first, %" PRIu64 " write-protect)",
				rs->fault_first, rs->fault_wp);
		if (k == CAUSE_FAULT && s->have_unnamed)
			fprintf(out, ", unnamed %s",
				wpstat_fmt_duration(buf, sizeof(buf),
						    s->unnamed_ns));
		if (k == CAUSE_FAULT && s->have_cpu && s->have_runq) {
			fprintf(out, " (cpu %s", wpstat_fmt_duration(buf, sizeof(buf),
								     s->cpu_ns));
			fprintf(out, ", runq %s",
				wpstat_fmt_duration(buf, sizeof(buf), s->runq_ns));
			if (stall_fault_sleep_ns(s, &sleep))
				fprintf(out, ", sleep %s",
					wpstat_fmt_duration(buf, sizeof(buf), sleep));
			fputc(')', out);
		}
		if (s->have_max[k])
			fprintf(out, ", worst %s",
				wpstat_fmt_duration(buf, sizeof(buf), s->max_ns[k]));
		fputc('\n', out);
	}
	fputc('\n', out);
	print_stall_table(out, &rs->list, SIZE_MAX, "", &r->stalls);
}

static void run_report_text(FILE *out, const struct run_result *r,
			    const struct file_list *l,
			    const struct run_stalls *rs)
{
	int i;

	fputs("\n wpstat run:", out);
	for (i = 0; r->argv[i]; i++) {
		fputc(' ', out);
		print_path_plain(out, r->argv[i]);
	}
	fputs("\n\n", out);
	if (l->n)
		print_table(out, l, SIZE_MAX, &r->files);
	else
		fputs(" no counter changed\n", out);
	run_report_triggers(out, l);
	run_report_stalls(out, r, rs);
	fprintf(out, "\n %.6f s wall time, exit status %d", r->wall_ns / 1e9,
		r->exit_status);
	if (r->signal)
		fprintf(out, " (killed by signal %d, %s)", r->signal,
			strsignal(r->signal));
	fputs("\n\n", out);
}

/* {"msync": N, ...}: the triggers' changes over the run's files. */
static void json_triggers(FILE *out, const struct file_list *l)
{
	uint64_t sum[NR_MKCLEAN_TRIGGERS];
	bool have[NR_MKCLEAN_TRIGGERS];
	size_t t;

	if (!trigger_sums(l, sum, have)) {
		fputs("null", out);
		return;
	}
	fputc('{', out);
	for (t = 0; t < NR_MKCLEAN_TRIGGERS; t++) {
		fprintf(out, "%s\"%s\": ", t ? ", " : "",
			mkclean_triggers[t].name);
		json_u64_or_null(out, sum[t], have[t]);
	}
	fputc('}', out);
}

static void json_run_stalls(FILE *out, const struct run_result *r,
			    const struct run_stalls *rs)
{
	const struct stall_sum *s = &rs->total;
	uint64_t sleep;
	bool have;
	int k;

	if (!rs->have) {
		fputs("null", out);
		return;
	}
	fprintf(out, "{\"pid\": %d, \"rows\": ", (int)r->pid);
	json_stalls(out, &rs->list, SIZE_MAX, " ");
	fputs(", \"by_cause\": {", out);
	for (k = 0; k < CAUSE_NR; k++) {
		fprintf(out, "%s\"%s\": {\"events\": %" PRIu64, k ? ", " : "",
			stall_causes[k].name, s->events[k]);
		if (k == CAUSE_FAULT) {
			fputs(", \"first\": ", out);
			json_u64_or_null(out, rs->fault_first,
					 rs->have_fault_first);
			fputs(", \"wp\": ", out);
			json_u64_or_null(out, rs->fault_wp, rs->have_fault_wp);
			fputs(", \"unnamed_ns\": ", out);
			json_u64_or_null(out, s->unnamed_ns, s->have_unnamed);
			fputs(", \"cpu_ns\": ", out);
			json_u64_or_null(out, s->cpu_ns, s->have_cpu);
			fputs(", \"runq_ns\": ", out);
			json_u64_or_null(out, s->runq_ns, s->have_runq);
			fputs(", \"sleep_ns\": ", out);
			have = stall_fault_sleep_ns(s, &sleep);
			json_u64_or_null(out, sleep, have);
		}
		fputs(", \"ns\": ", out);
		json_u64_or_null(out, s->ns[k], s->have_ns[k]);
		fputs(", \"max_ns\": ", out);
		json_u64_or_null(out, s->max_ns[k], s->have_max[k]);
		fputc('}', out);
	}
	fputs("}, \"stall_ns\": ", out);
	json_u64_or_null(out, stall_total_ns(s), stall_have_time(s));
	fputs(", \"dominant_cause\": ", out);
	json_string_or_null(out, rs->list.n ? stall_dominant(s) : NULL);
	fputc('}', out);
}

static void run_report_json(FILE *out, const struct run_result *r,
			    const struct file_list *l,
			    const struct run_stalls *rs)
{
	int i;

	fputs("{\"command\": [", out);
	for (i = 0; r->argv[i]; i++) {
		fputs(i ? ", " : "", out);
		json_string(out, r->argv[i]);
	}
	fprintf(out, "], \"exit_status\": %d, \"signal\": ", r->exit_status);
	if (r->signal)
		fprintf(out, "%d", r->signal);
	else
		fputs("null", out);
	fprintf(out, ", \"wall_ns\": %" PRIu64 ", \"reset\": %s, \"kernel\": ",
		r->wall_ns, r->reset ? "true" : "false");
	json_string(out, kernel_release());
	fputs(", \"files\": ", out);
	json_files(out, l, SIZE_MAX, true);
	fputs(", \"write_protected_by\": ", out);
	json_triggers(out, l);
	fputs(", \"stalls\": ", out);
	json_run_stalls(out, r, rs);
	fputs("}\n", out);
}

/*
 * Fork and exec @argv; wait for it.  Returns its exit status, or -1 after
 * an error message when it could not be started (*exec_failed: the exit
 * code to use).
 */
static int run_child(char **argv, struct run_result *r, int *exec_failed)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_int, old_quit;
	int errpipe[2], child_errno = 0, status;
	uint64_t start;
	ssize_t n;
	pid_t pid;

	*exec_failed = 0;
	if (pipe2(errpipe, O_CLOEXEC)) {
		*exec_failed = runtime_error("pipe: %s", strerror(errno));
		return -1;
	}
	/* Like perf stat: ^C goes to the command, and we still report. */
	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	fflush(NULL);
	start = wpstat_now_ns();
	pid = fork();
	if (pid == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		close(errpipe[0]);
		execvp(argv[0], argv);
		child_errno = errno;
		n = write(errpipe[1], &child_errno, sizeof(child_errno));
		(void)n;
		_exit(EXIT_NOT_FOUND);
	}
	close(errpipe[1]);
	r->pid = pid;
	if (pid < 0) {
		close(errpipe[0]);
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		*exec_failed = runtime_error("fork: %s", strerror(errno));
		return -1;
	}
	do {
		n = read(errpipe[0], &child_errno, sizeof(child_errno));
	} while (n < 0 && errno == EINTR);
	close(errpipe[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	r->wall_ns = wpstat_now_ns() - start;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);

	if (n == sizeof(child_errno)) {
		if (child_errno == ENOENT)
			*exec_failed = fail(EXIT_NOT_FOUND, "%s: command not found",
					    argv[0]);
		else
			*exec_failed = fail(EXIT_CANNOT_EXEC, "%s: %s", argv[0],
					    strerror(child_errno));
		return -1;
	}
	if (WIFSIGNALED(status)) {
		r->signal = WTERMSIG(status);
		return 128 + r->signal;
	}
	return WEXITSTATUS(status);
}

static int cmd_run(int argc, char **argv)
{
	static const char shortopts[] = "+:hjo:ar:";
	static const struct option longopts[] = {
		{ "json",	no_argument,		NULL, 'j' },
		{ "reset",	no_argument,		NULL, 'R' },
		{ "output",	required_argument,	NULL, 'O' },
		{ "columns",	required_argument,	NULL, 'o' },
		{ "all",	no_argument,		NULL, 'a' },
		{ "resolve",	required_argument,	NULL, 'r' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL,		0,			NULL, 0 },
	};
	struct wpstat_stall_snapshot stalls_before = { 0 }, stalls_after = { 0 };
	struct wpstat_snapshot before, after;
	struct run_stalls stalls = { 0 };
	struct cgroup_map cgroups = { 0 };
	struct run_result result = { 0 };
	struct dir_list dirs = { 0 };
	const char *output = NULL, *columns = NULL;
	struct file_list list;
	bool all = false;
	FILE *out = stderr;
	bool json = false;
	int c, ret, exec_failed;

	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		ret = 0;
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'R':
			result.reset = true;
			break;
		case 'O':
			output = optarg;
			break;
		case 'o':
			columns = optarg;
			break;
		case 'a':
			all = true;
			break;
		case 'r':
			ret = dir_list_add(&dirs, optarg);
			break;
		case 'h':
			free(dirs.dirs);
			return CMD_HELP;
		default:
			ret = option_error("run", c, argv, shortopts);
		}
		if (ret)
			goto out_dirs;
	}
	if (optind >= argc) {
		ret = usage_error("run: no command given (wpstat run [--json] [--reset] -- CMD [ARGS...])");
		goto out_dirs;
	}
	result.argv = argv + optind;
	if (columns && all)
		ret = usage_error("run: -o and --all contradict each other");
	else if ((columns || all) && json)
		ret = usage_error("run: -o and --all choose table columns; JSON has every field");
	else
		ret = stall_cols_select(NULL, all, &result.stalls);
	if (!ret)
		ret = check_resolve_dirs(dirs.dirs, dirs.n);
	if (ret)
		goto out_dirs;
	/* Before anything runs, so that no failure wastes the run. */
	ret = result.reset ? control_command("reset", NULL, NULL) : 0;
	if (ret)
		goto out_dirs;
	ret = read_snapshot(&before);
	if (ret)
		goto out_dirs;
	/* The columns, known to exist only now, before CMD runs. */
	ret = file_cols_select(&before, columns, all, &result.files);
	if (ret)
		goto out_before;
	/* Optional: a module without per-process stalls still runs CMD. */
	stalls.err = stalls_unavailable(wpstat_stalls_read(NULL, &stalls_before),
					&stalls_before);
	stalls.have = !stalls.err;
	if (output) {
		out = fopen(output, "we");
		if (!out) {
			ret = runtime_error("--output %s: %s", output,
					    strerror(errno));
			goto out_before;
		}
	}

	result.exit_status = run_child(result.argv, &result, &exec_failed);
	if (result.exit_status < 0) {
		ret = exec_failed;
		goto out_file;
	}
	ret = result.exit_status;
	if (read_snapshot(&after)) {
		ret = ret ? ret : EXIT_RUNTIME;
		goto out_file;
	}
	if (stalls.have) {
		stalls.err = stalls_unavailable(wpstat_stalls_read(NULL,
								   &stalls_after),
						&stalls_after);
		stalls.have = !stalls.err;
	}
	if (stalls.have && stall_list_build(&stalls_before, &stalls_after,
					    result.pid, &stalls.list)) {
		stalls.have = false;
		stalls.err = "out of memory";
	}
	if (file_list_build(&before, &after, &list)) {
		ret = runtime_error("out of memory");
		goto out_after;
	}
	file_list_sort(&list, wpstat_counter_index(&after, "mkwrite_wp") >= 0 ?
		       wpstat_counter_index(&after, "mkwrite_wp") : SORT_DEV);
	/* The command has exited: its own arguments name its files best. */
	resolve_paths(list.rows, list.n, result.argv, dirs.dirs, dirs.n);
	if (stalls.have) {
		stall_list_sort(&stalls.list, STALL_SORT_TIME);
		stall_list_resolve(&stalls.list, SIZE_MAX, &list, NULL,
				   result.argv, dirs.dirs, dirs.n);
		cgroup_map_resolve(&cgroups, &stalls.list, SIZE_MAX);
		run_stalls_total(&stalls);
	}
	if (json)
		run_report_json(out, &result, &list, &stalls);
	else
		run_report_text(out, &result, &list, &stalls);
	file_list_free(&list);
	if (fflush(out) || ferror(out))
		ret = runtime_error("writing the report: %s", strerror(errno));
out_after:
	wpstat_snapshot_free(&after);
out_file:
	if (out != stderr && fclose(out) && !ret)
		ret = runtime_error("--output %s: %s", output, strerror(errno));
out_before:
	wpstat_snapshot_free(&before);
	/* All zeroed unless filled: freeing them is always right. */
	stall_list_free(&stalls.list);
	cgroup_map_free(&cgroups);
	wpstat_stalls_free(&stalls_before);
	wpstat_stalls_free(&stalls_after);
out_dirs:
	free(dirs.dirs);
	return ret;
}

const struct wpstat_cmd wpstat_cmd_run = {
	"run", cmd_run,
	"run [--json] [--reset] [--output FILE] [-o COL,... | --all]\n"
	"    [--resolve DIR] -- CMD [ARGS...]",
	"run CMD and report the counters it changed, what\n"
	"write-protected its files, its own stalls, its wall\n"
	"time and exit status (report on stderr, or FILE);\n"
	"-o: the file table's columns (as show); --all: every\n"
	"column of both tables",
};
