// SPDX-License-Identifier: GPL-2.0
#include "wpstat_cli.h"
#include "parse.h"

/*
 * What every command uses: errors, option and number parsing, the module's
 * state, reading its tables and writing its control file.
 */

/* One line on stderr; returns @code for the caller to pass on. */
int fail(int code, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("wpstat: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

/* One line for what getopt_long() rejected (opterr is 0); @cmd may be "". */
int option_error(const char *cmd, int c, char *const *argv,
		 const char *shortopts)
{
	const char *arg = argv[optind - 1], *sep = *cmd ? ": " : "";

	if (c == ':')
		return usage_error("%s%soption '%s' needs a value", cmd, sep, arg);
	if (optopt > 0 && optopt < 128 && !strchr(shortopts, optopt))
		return usage_error("%s%sunknown option '-%c' (see wpstat --help)",
				   cmd, sep, optopt);
	if (optopt == 0)
		return usage_error("%s%sunknown option '%s' (see wpstat --help)",
				   cmd, sep, arg);
	return usage_error("%s%soption '%s' takes no value", cmd, sep, arg);
}

/* ---- small helpers ------------------------------------------------------ */

const char *kernel_release(void)
{
	static struct utsname uts;	/* filled once; read-only after */

	if (!uts.release[0] && uname(&uts))
		return "unknown";
	return uts.release;
}

/* A decimal integer in [min, max]; "1e3", "-1", " 5" and "0x10" are not. */
int parse_uint(const char *what, const char *arg, uint64_t min,
	       uint64_t max, uint64_t *out)
{
	switch (wpstat_parse_uint(arg, min, max, out)) {
	case 0:
		return 0;
	case -ERANGE:
		return usage_error("%s: '%s' is too large (at most %" PRIu64 ")",
				   what, arg, max);
	case -EDOM:
		return usage_error("%s: must be at least %" PRIu64 " (got %s)",
				   what, min, arg);
	default:
		return usage_error("%s: invalid number '%s'", what, arg);
	}
}

/* Seconds as a positive decimal number, at most @max. */
int parse_seconds(const char *what, const char *arg, double max,
		  uint64_t *out_ns)
{
	char *end;
	double s;

	if (!isdigit((unsigned char)arg[0]) && arg[0] != '.')
		return usage_error("%s: invalid number of seconds '%s'", what, arg);
	errno = 0;
	s = strtod(arg, &end);
	if (*end || errno)
		return usage_error("%s: invalid number of seconds '%s'", what, arg);
	if (s <= 0 || s > max)
		return usage_error("%s: must be more than 0 and at most %.0f seconds (got %s)",
				   what, max, arg);
	*out_ns = (uint64_t)(s * 1e9);
	if (!*out_ns)
		*out_ns = 1;
	return 0;
}

/* "MAJ:MIN" as two decimal numbers, nothing else. */
bool parse_dev(const char *arg, unsigned int *maj, unsigned int *min)
{
	unsigned long a, b;
	char *end;

	if (!isdigit((unsigned char)arg[0]))
		return false;
	errno = 0;
	a = strtoul(arg, &end, 10);
	if (*end != ':' || !isdigit((unsigned char)end[1]))
		return false;
	b = strtoul(end + 1, &end, 10);
	if (*end || errno || a > UINT_MAX || b > UINT_MAX)
		return false;
	*maj = a;
	*min = b;
	return true;
}

/* Whole first line of a small file, without the newline; NULL on error. */
char *read_first_line(const char *path)
{
	char *line = NULL;
	size_t n = 0;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return NULL;
	if (getline(&line, &n, f) < 0) {
		free(line);
		line = strdup("");
	} else {
		line[strcspn(line, "\n")] = '\0';
	}
	fclose(f);
	return line;
}

/* ---- human units -------------------------------------------------------- */

/* A path for a terminal: control characters would corrupt the table. */
void print_path_plain(FILE *out, const char *s)
{
	for (; *s; s++)
		fputc(iscntrl((unsigned char)*s) ? '?' : *s, out);
}

/* ---- module state and debugfs ------------------------------------------- */

bool module_interface_present(void)
{
	return access(WPSTAT_SUMMARY_PATH, F_OK) == 0;
}

bool debugfs_mounted(void)
{
	struct statfs sfs;

	return statfs(DEBUGFS_MOUNT, &sfs) == 0 &&
	       (unsigned long)sfs.f_type == DEBUGFS_MAGIC_NR;
}

int module_not_loaded(void)
{
	return runtime_error("module not loaded (load it with 'wpstat load')");
}

/*
 * The loaded module's version (/sys/module/wpstat/version, malloc'd), or
 * NULL when it is not loaded or has none.  After a package upgrade the old
 * module stays loaded until it is reloaded: module_version_note() says so
 * on stderr and returns true when the two versions differ.
 */
char *module_version(void)
{
	return read_first_line(SYSFS_MODULE_DIR "/version");
}

bool module_version_note(void)
{
	char *v;
	bool differs;

	if (access(SYSFS_MODULE_DIR, F_OK))
		return false;
	v = module_version();
	differs = !v || strcmp(v, WPSTAT_VERSION);
	if (differs) {
		fflush(stdout);
		fprintf(stderr, "wpstat: the loaded module is version %s, this wpstat %s: 'wpstat unload && wpstat load' loads the installed one\n",
			v ? v : "(none)", WPSTAT_VERSION);
	}
	free(v);
	return differs;
}

/* Why a debugfs file of the module could not be opened, as one line. */
static int debugfs_error(const char *path, int err)
{
	if (!module_interface_present())
		return module_not_loaded();
	if ((err == EACCES || err == EPERM) && geteuid() != 0)
		return runtime_error("permission denied: %s is root-only (run as root)",
				     path);
	if (err == EACCES || err == EPERM)
		return runtime_error("%s: %s (debugfs restricted by kernel lockdown?)",
				     path, strerror(err));
	if (err == ENOENT && !debugfs_mounted())
		return runtime_error("debugfs is not mounted (mount -t debugfs none %s)",
				     DEBUGFS_MOUNT);
	if (err == ENOENT)
		return runtime_error("%s is missing: the module was built without CONFIG_WPSTAT_DEBUGFS",
				     path);
	return runtime_error("%s: %s", path, strerror(err));
}

/* Read /proc/wpstat/inodes, or say in one line why not. */
int read_snapshot(struct wpstat_snapshot *s)
{
	int err = wpstat_snapshot_read(NULL, s);

	switch (-err) {
	case 0:
		return 0;
	case ENOENT:
		return module_not_loaded();
	case EACCES:
	case EPERM:
		return runtime_error("permission denied reading %s: per-file counters are root-only (run as root)",
				     WPSTAT_INODES_PATH);
	case EPROTO:
		return runtime_error("%s has an unexpected format (module and wpstat of different versions?)",
				     WPSTAT_INODES_PATH);
	default:
		return runtime_error("cannot read %s: %s", WPSTAT_INODES_PATH,
				     strerror(-err));
	}
}

/*
 * Send one command to debugfs wpstat/control.  @einval and @esrch, when
 * given, say what those errors mean for this command.
 */
int control_command(const char *cmd, const char *einval,
		    const char *esrch)
{
	size_t len = strlen(cmd);
	ssize_t n;
	int fd, err;

	if (!module_interface_present())
		return module_not_loaded();
	fd = open(WPSTAT_CONTROL_PATH, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return debugfs_error(WPSTAT_CONTROL_PATH, errno);
	n = write(fd, cmd, len);
	err = errno;
	close(fd);
	if (n == (ssize_t)len)
		return 0;
	if (n >= 0)
		return runtime_error("short write of '%s' to %s", cmd,
				     WPSTAT_CONTROL_PATH);
	switch (err) {
	case EINVAL:
		if (einval)
			return runtime_error("%s", einval);
		return runtime_error("the module rejected '%s' (invalid argument)",
				     cmd);
	case ESRCH:
		if (esrch)
			return runtime_error("%s", esrch);
		return runtime_error("'%s': no such process", cmd);
	case EPERM:
	case EACCES:
		return runtime_error("permission denied: '%s' needs CAP_SYS_ADMIN (run as root)",
				     cmd);
	case ENOENT:
	case ENODEV:
		return module_not_loaded();
	case ENOMEM:
		return runtime_error("'%s': out of memory in the kernel", cmd);
	default:
		return runtime_error("'%s': %s", cmd, strerror(err));
	}
}

int dir_list_add(struct dir_list *d, char *dir)
{
	char **dirs = realloc(d->dirs, (d->n + 1) * sizeof(*dirs));

	if (!dirs)
		return runtime_error("out of memory");
	d->dirs = dirs;
	d->dirs[d->n++] = dir;
	return 0;
}

/* Set by SIGINT/SIGTERM: watch ends cleanly at the next wake-up. */
static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* SIGINT and SIGTERM end an interval loop (watch, top, export) cleanly. */
void catch_stop_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;	/* no SA_RESTART: wake the sleep */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* Sleep until @deadline (CLOCK_MONOTONIC ns); false if asked to stop. */
bool sleep_until(uint64_t deadline)
{
	struct timespec ts = {
		.tv_sec = deadline / NSEC_PER_SEC,
		.tv_nsec = deadline % NSEC_PER_SEC,
	};

	while (!stop_requested) {
		int err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
					  NULL);

		if (!err)
			return !stop_requested;
		if (err != EINTR)
			return false;
	}
	return false;
}
