// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat - load, control and read the wpstat kernel module.
 *
 * One file per group of commands (cmd_*.c), each defining its commands'
 * struct wpstat_cmd: name, handler and help.  The table below is the one
 * list of commands: dispatch, --help and the unknown-command error all
 * read it.
 *
 * Errors are one line on stderr starting "wpstat: "; exit status 1 for
 * run-time errors, 2 for usage errors (run: the command's own status).
 */
#include "wpstat_cli.h"

/* Where a command's help starts when its synopsis leaves room. */
#define HELP_COLUMN		22

static const struct wpstat_cmd *const commands[] = {
	&wpstat_cmd_load,
	&wpstat_cmd_unload,
	&wpstat_cmd_status,
	&wpstat_cmd_show,
	&wpstat_cmd_watch,
	&wpstat_cmd_run,
	&wpstat_cmd_stalls,
	&wpstat_cmd_top,
	&wpstat_cmd_diagnose,
	&wpstat_cmd_export,
	&wpstat_cmd_reset,
	&wpstat_cmd_enable,
	&wpstat_cmd_disable,
	&wpstat_cmd_filter,
	&wpstat_cmd_level,
	&wpstat_cmd_histogram,
};

/*
 * Each line of @text, the first @first columns in and the others @indent;
 * returns the column where the last line ends.
 */
static int print_lines(FILE *out, int first, int indent, const char *text)
{
	const char *nl;
	int col;

	for (;;) {
		nl = strchrnul(text, '\n');
		col = fprintf(out, "%*s%.*s", first, "", (int)(nl - text), text);
		if (!*nl)
			return col;
		fputc('\n', out);
		text = nl + 1;
		first = indent;
	}
}

/*
 * "  SYNOPSIS  help" when the synopsis is one short line, else the help
 * under it; help lines start at HELP_COLUMN.
 */
static void print_command_help(FILE *out, const struct wpstat_cmd *cmd)
{
	int col = print_lines(out, 2, 2, cmd->synopsis);

	if (strchr(cmd->synopsis, '\n') || col > HELP_COLUMN - 2) {
		fputc('\n', out);
		col = 0;
	}
	print_lines(out, HELP_COLUMN - col, HELP_COLUMN, cmd->help);
	fputc('\n', out);
}

static void usage(FILE *out)
{
	size_t i;

	fputs(
"Usage: wpstat COMMAND [OPTIONS]\n"
"\n"
"Per-inode counters of shared-mapping write faults (page_mkwrite), writeback\n"
"write-protection (folio_mkclean), stable-page waits and dirty balancing,\n"
"from the wpstat kernel module.\n"
"\n"
"Commands:\n", out);
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		print_command_help(out, commands[i]);
	fputs(
"\n"
"Options:\n"
"  -h, --help          show this help and exit\n"
"  --version           show the version and exit\n"
"\n"
"Exit status: 0 success, 1 run-time error, 2 usage error; run exits with the\n"
"command's status (126 not executable, 127 not found, 128+N killed by signal\n"
		   "N).  See wpstat(8).\n", out);
}

/* wpstat CMD --help: that command's synopsis and help only. */
static void command_usage(FILE *out, const struct wpstat_cmd *cmd)
{
	fputs("Usage: wpstat ", out);
	print_lines(out, 0, 14, cmd->synopsis);
	fputs("\n\n", out);
	print_lines(out, 0, 0, cmd->help);
	fputs("\n\nAll commands: wpstat --help.  See wpstat(8).\n", out);
}

static int unknown_command(const char *name)
{
	char list[256];
	size_t i, len = 0;

	for (i = 0; i < ARRAY_SIZE(commands) && len < sizeof(list); i++)
		len += snprintf(list + len, sizeof(list) - len, "%s%s",
				i ? ", " : "", commands[i]->name);
	return usage_error("unknown command '%s' (commands: %s; see wpstat --help)",
			   name, list);
}

int main(int argc, char **argv)
{
	static const char shortopts[] = "+:h";
	static const struct option longopts[] = {
		{ "help",	no_argument,		NULL, 'h' },
		{ "version",	no_argument,		NULL, 'V' },
		{ NULL,		0,			NULL, 0 },
	};
	const char *name;
	size_t i;
	int c, ret;

	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("wpstat %s\n", WPSTAT_VERSION);
			return 0;
		default:
			return option_error("", c, argv, shortopts);
		}
	}
	if (optind >= argc)
		return usage_error("no command given (see wpstat --help)");
	name = argv[optind];
	if (!strcmp(name, "help")) {
		usage(stdout);
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(commands); i++) {
		if (strcmp(name, commands[i]->name))
			continue;
		argc -= optind;
		argv += optind;
		optind = 0;	/* glibc: start afresh for the subcommand */
		ret = commands[i]->fn(argc, argv);
		if (ret == CMD_HELP) {
			command_usage(stdout, commands[i]);
			ret = 0;
		}
		if (fflush(stdout) && errno != EPIPE && !ret)
			ret = runtime_error("write error: %s", strerror(errno));
		return ret;
	}
	return unknown_command(name);
}
