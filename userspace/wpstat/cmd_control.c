// SPDX-License-Identifier: GPL-2.0
#include "wpstat_cli.h"

/* ---- control commands --------------------------------------------------- */

static int no_options(const char *cmd, int argc, char **argv, int nargs_max)
{
	static const char shortopts[] = "+:h";
	static const struct option longopts[] = {
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL,		0,			NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == 'h')
			return CMD_HELP;
		return option_error(cmd, c, argv, shortopts);
	}
	if (argc - optind > nargs_max)
		return usage_error("%s: unexpected argument '%s'", cmd,
				   argv[optind + nargs_max]);
	return 0;
}

/* reset, enable and disable take no argument and mean what they say. */
static int cmd_simple_control(int argc, char **argv)
{
	int ret = no_options(argv[0], argc, argv, 0);

	if (ret)
		return ret;
	return control_command(argv[0], NULL, NULL);
}

static int cmd_filter(int argc, char **argv)
{
	char cmd[96], einval[160], esrch[64];
	struct wpstat_file_key key;
	unsigned int maj, min;
	const char *what, *arg;
	uint64_t pid;
	int ret, nargs, err;

	ret = no_options("filter", argc, argv, 2);
	if (ret)
		return ret;
	nargs = argc - optind;
	what = nargs ? argv[optind] : NULL;
	arg = nargs > 1 ? argv[optind + 1] : NULL;
	if (!what)
		return usage_error("filter: expected dev MAJ:MIN, pid TGID, path FILE or none");
	if (!strcmp(what, "none")) {
		if (arg)
			return usage_error("filter none: unexpected argument '%s'", arg);
		return control_command("filter none", NULL, NULL);
	}
	if (strcmp(what, "dev") && strcmp(what, "pid") && strcmp(what, "path"))
		return usage_error("filter: unknown filter '%s' (expected dev, pid, path or none)",
				   what);
	if (!arg)
		return usage_error("filter %s: missing %s", what,
				   !strcmp(what, "dev") ? "MAJ:MIN" :
				   !strcmp(what, "pid") ? "TGID" : "FILE");
	if (!strcmp(what, "dev")) {
		if (!parse_dev(arg, &maj, &min))
			return usage_error("filter dev: invalid device '%s' (expected MAJ:MIN, e.g. 8:1)",
					   arg);
		snprintf(cmd, sizeof(cmd), "filter dev %u:%u", maj, min);
		snprintf(einval, sizeof(einval),
			 "the module rejected device %u:%u (it needs major < 4096, minor < 1048576, not 0:0)",
			 maj, min);
		return control_command(cmd, einval, NULL);
	}
	if (!strcmp(what, "pid")) {
		ret = parse_uint("filter pid", arg, 1, INT_MAX, &pid);
		if (ret)
			return ret;
		snprintf(cmd, sizeof(cmd), "filter pid %" PRIu64, pid);
		snprintf(esrch, sizeof(esrch), "no process with pid %" PRIu64, pid);
		return control_command(cmd, NULL, esrch);
	}
	err = wpstat_path_key(arg, &key);
	if (err)
		return runtime_error("filter path: %s: %s", arg, strerror(-err));
	snprintf(cmd, sizeof(cmd), "filter dev %u:%u", key.major, key.minor);
	snprintf(einval, sizeof(einval),
		 "the module cannot filter on device %u:%u, the filesystem holding %s",
		 key.major, key.minor, arg);
	ret = control_command(cmd, einval, NULL);
	if (!ret)
		printf("filtering on dev %u:%u (the filesystem holding %s)\n",
		       key.major, key.minor, arg);
	return ret;
}

/* level: print the current level, or switch to another without unloading. */
static int cmd_level(int argc, char **argv)
{
	char cmd[32], einval[96];
	const char *level;
	char *cur;
	int ret;

	ret = no_options("level", argc, argv, 1);
	if (ret)
		return ret;
	if (optind == argc) {
		if (!module_interface_present())
			return module_not_loaded();
		cur = read_first_line(SYSFS_PARAMS_DIR "/level");
		if (!cur)
			return runtime_error("cannot read %s: %s",
					     SYSFS_PARAMS_DIR "/level",
					     strerror(errno));
		printf("%s\n", cur);
		free(cur);
		return 0;
	}
	level = argv[optind];
	if (strcmp(level, "counts") && strcmp(level, "timing"))
		return usage_error("level: unknown level '%s' (expected counts or timing)",
				   level);
	snprintf(cmd, sizeof(cmd), "level %s", level);
	snprintf(einval, sizeof(einval),
		 "the module rejected level %s (see the kernel log)", level);
	ret = control_command(cmd, einval, NULL);
	if (!ret)
		printf("level %s\n", level);
	return ret;
}

/* "MAJ:MIN:INO[:GEN]" as decimal numbers, nothing else. */
static bool parse_inode_key(const char *arg, struct wpstat_file_key *key)
{
	unsigned long long v[4];
	const char *p = arg;
	char *end;
	int n = 0;

	for (;;) {
		if (n == 4 || !isdigit((unsigned char)*p))
			return false;
		errno = 0;
		v[n++] = strtoull(p, &end, 10);
		if (errno)
			return false;
		if (!*end)
			break;
		if (*end != ':')
			return false;
		p = end + 1;
	}
	if (n < 3 || v[0] > UINT_MAX || v[1] > UINT_MAX ||
	    (n == 4 && v[3] > UINT32_MAX))
		return false;
	key->major = v[0];
	key->minor = v[1];
	key->ino = v[2];
	key->gen = n == 4 ? v[3] : 0;
	key->have_gen = n == 4;
	return true;
}

/*
 * The control file takes one line of printable ASCII, split into words at
 * blanks: a path with a blank or another byte cannot be passed.
 */
static bool control_word_ok(const char *s)
{
	for (; *s; s++)
		if (!isascii((unsigned char)*s) || !isgraph((unsigned char)*s))
			return false;
	return true;
}

/* histogram: which events the debugfs histograms count (and clear them). */
static int cmd_histogram(int argc, char **argv)
{
	char cmd[PATH_MAX + 32], einval[PATH_MAX + 160];
	struct wpstat_kvlist summary;
	struct wpstat_file_key key;
	const char *what, *arg, *scope;
	unsigned int maj, min;
	char *abs = NULL;
	int ret, nargs, err;

	ret = no_options("histogram", argc, argv, 2);
	if (ret)
		return ret;
	nargs = argc - optind;
	what = nargs ? argv[optind] : NULL;
	arg = nargs > 1 ? argv[optind + 1] : NULL;
	if (!what)
		return usage_error("histogram: expected all, dev MAJ:MIN, inode MAJ:MIN:INO[:GEN] or path FILE");
	if (!strcmp(what, "all")) {
		if (arg)
			return usage_error("histogram all: unexpected argument '%s'",
					   arg);
		snprintf(cmd, sizeof(cmd), "histogram all");
		einval[0] = '\0';
	} else if (strcmp(what, "dev") && strcmp(what, "inode") &&
		   strcmp(what, "path")) {
		return usage_error("histogram: unknown scope '%s' (expected all, dev, inode or path)",
				   what);
	} else if (!arg) {
		return usage_error("histogram %s: missing %s", what,
				   !strcmp(what, "dev") ? "MAJ:MIN" :
				   !strcmp(what, "inode") ? "MAJ:MIN:INO[:GEN]" :
				   "FILE");
	} else if (!strcmp(what, "dev")) {
		if (!parse_dev(arg, &maj, &min))
			return usage_error("histogram dev: invalid device '%s' (expected MAJ:MIN, e.g. 8:1)",
					   arg);
		snprintf(cmd, sizeof(cmd), "histogram dev %u:%u", maj, min);
		snprintf(einval, sizeof(einval),
			 "the module rejected device %u:%u (it needs major < 4096, minor < 1048576, not 0:0)",
			 maj, min);
	} else if (!strcmp(what, "inode")) {
		if (!parse_inode_key(arg, &key))
			return usage_error("histogram inode: invalid inode '%s' (expected MAJ:MIN:INO[:GEN], e.g. 8:1:12 or 8:1:12:3405691582)",
					   arg);
		ret = snprintf(cmd, sizeof(cmd), "histogram inode %u:%u:%" PRIu64,
			       key.major, key.minor, key.ino);
		if (key.have_gen)
			snprintf(cmd + ret, sizeof(cmd) - ret, ":%" PRIu32,
				 key.gen);
		snprintf(einval, sizeof(einval),
			 "the module rejected inode %s (device major < 4096, minor < 1048576, not 0:0)",
			 arg);
	} else {
		/* The kernel looks the path up itself: give it an absolute one. */
		abs = realpath(arg, NULL);
		if (!abs)
			return runtime_error("histogram path: %s: %s", arg,
					     strerror(errno));
		if (!control_word_ok(abs)) {
			err = wpstat_path_key(abs, &key);
			free(abs);
			if (err)
				return runtime_error("histogram path: %s: %s", arg,
						     strerror(-err));
			ret = snprintf(cmd, sizeof(cmd), "%u:%u:%" PRIu64,
				       key.major, key.minor, key.ino);
			if (key.have_gen)
				snprintf(cmd + ret, sizeof(cmd) - ret, ":%" PRIu32,
					 key.gen);
			return usage_error("histogram path: '%s' has a blank or a byte that is not printable ASCII, which the control file cannot carry; name it by inode: wpstat histogram inode %s",
					   arg, cmd);
		}
		snprintf(cmd, sizeof(cmd), "histogram path %s", abs);
		snprintf(einval, sizeof(einval),
			 "the module rejected 'histogram path %s' (path too long for the control file, or not a file it can look up)",
			 abs);
	}
	ret = control_command(cmd, einval[0] ? einval : NULL, NULL);
	if (!ret) {
		/* What the module made of it, e.g. the path's inode. */
		if (wpstat_kv_read(WPSTAT_SUMMARY_PATH, &summary))
			memset(&summary, 0, sizeof(summary));
		scope = wpstat_kv_get(&summary, "histogram_scope");
		printf("histogram scope: %s\n", scope ? scope : cmd + 10);
		wpstat_kv_free(&summary);
	}
	free(abs);
	return ret;
}

const struct wpstat_cmd wpstat_cmd_reset = {
	"reset", cmd_simple_control, "reset",
	"clear every counter and the stalls table",
};

const struct wpstat_cmd wpstat_cmd_enable = {
	"enable", cmd_simple_control, "enable", "start counting",
};

const struct wpstat_cmd wpstat_cmd_disable = {
	"disable", cmd_simple_control, "disable", "stop counting",
};

const struct wpstat_cmd wpstat_cmd_filter = {
	"filter", cmd_filter,
	"filter dev MAJ:MIN | filter pid TGID | filter path FILE | filter none",
	"count only one filesystem and/or one process",
};

const struct wpstat_cmd wpstat_cmd_level = {
	"level", cmd_level, "level [counts|timing]",
	"show or switch what is attached: counts (default,\n"
	"cheapest) or timing (adds return probes: the columns\n"
	"/proc/wpstat/counters lists at level timing, the fault\n"
	"and wait times among them)",
};

const struct wpstat_cmd wpstat_cmd_histogram = {
	"histogram", cmd_histogram,
	"histogram all | histogram dev MAJ:MIN | histogram inode MAJ:MIN:INO[:GEN]\n"
	"    | histogram path FILE",
	"which events the debugfs histograms count (clears\n"
	"them)",
};
