// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_privacy: the module towards other users.
 *
 *   rel.nonroot_*                   nobody cannot control the module,
 *                                   read per-file counts, or load or
 *                                   unload it through the CLI.
 *   rel.no_kernel_addresses_in_output  no kernel address in any file,
 *                                   CLI output or kernel log line.
 *
 * Runs as root in a guest with wpstat.ko loaded, $WPSTAT_FS_DIR/ext4
 * mounted and the tools copied for nobody to $WPSTAT_NOBODY_DIR
 * (scripts/check/guest-check.sh, scripts/vm/guest-run.sh).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <sys/klog.h>
#include <sys/wait.h>

#include "wpstat_test.h"
#include "wpstat_harness.h"

#define NPAGES		16

/* ---- helpers ------------------------------------------------------------ */

/*
 * Run @argv (as nobody if @nobody, from /) with stdout and stderr into
 * @out.  Returns the wait status, or -1.  Commands run as nobody must be
 * the copies in $WPSTAT_NOBODY_DIR (nobody_path()): the checkout may be
 * private.
 */
static int run_cmd(char *const argv[], bool nobody, char *out, size_t outlen)
{
	size_t len = 0;
	int p[2], status;
	ssize_t n;
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(p[0]);
		dup2(p[1], 1);
		dup2(p[1], 2);
		if (nobody && (drop_privileges() || chdir("/")))
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], out + len, outlen - 1 - len)) > 0)
		len += n;
	out[len] = '\0';
	close(p[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

static const char *wpstat_bin(void)
{
	static char path[512];
	const char *top = getenv("WPSTAT_TOP");

	if (!top)
		return "wpstat";
	snprintf(path, sizeof(path), "%s/build/bin/wpstat", top);
	return path;
}

/*
 * @name ("bin/wpstat", "wpstat.ko") in the 0755 copy of the tools that
 * scripts/vm/guest-run.sh makes for unprivileged runs; NULL if unset.
 */
static const char *nobody_path(const char *name, char *buf, size_t len)
{
	const char *dir = getenv("WPSTAT_NOBODY_DIR");

	if (!dir)
		return NULL;
	snprintf(buf, len, "%s/%s", dir, name);
	return buf;
}

/*
 * Whether nobody can reach the copies: a set-up that cannot give nobody
 * the tools must fail saying so, not as a mysterious exit 127.
 */
static bool nobody_can_use(const char *bin, const char *module)
{
	int status;
	pid_t pid;

	if (!bin || !module)
		return false;
	pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0)
		_exit(drop_privileges() || access(bin, X_OK) ||
		      access(module, R_OK));
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0;
}

#define ASSERT_NOBODY_CAN_USE(bin, module)				\
	ASSERT_TRUE(nobody_can_use(bin, module))			\
		TH_LOG("set-up: nobody cannot execute %s or read %s "	\
		       "(WPSTAT_NOBODY_DIR: run through scripts/vm/vm-run.sh)", \
		       bin ?: "$WPSTAT_NOBODY_DIR/bin/wpstat",		\
		       module ?: "$WPSTAT_NOBODY_DIR/wpstat.ko")

/* rmmod, retried while something holds a module file open (EBUSY). */
static int rmmod_retry(void)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (!system("rmmod wpstat 2>/dev/null"))
			return 0;
		usleep(100 * 1000);
	}
	return -1;
}


/* ---- rel: other users, and what any reader can see --------------------- */

FIXTURE(rel) {
	struct wps_rel rel;
};

FIXTURE_SETUP(rel)
{
	WPS_REL_SETUP(&self->rel, NPAGES);
}

FIXTURE_TEARDOWN(rel)
{
	WPS_REL_TEARDOWN(&self->rel);
}

/*
 * Not root: the control file cannot be opened (debugfs is root-only), and
 * an fd root opened before dropping privileges cannot write either
 * (control_write checks CAP_SYS_ADMIN); per-inode counters and the other
 * debugfs files are unreadable, the system-wide summary is readable.
 */
TEST_F(rel, nonroot_cannot_control_or_read_inodes)
{
	static const char *const closed[] = {
		WPSTAT_INODES_PATH, CONFIG_PATH,
		"/sys/kernel/debug/wpstat/probes",
		"/sys/kernel/debug/wpstat/histograms",
	};
	char before[4096], after[4096];
	struct stat st;
	int cfd, status;
	pid_t child;

	/* Per-file activity is root's (like /proc/PID/io); totals are not. */
	ASSERT_EQ(0, stat(WPSTAT_INODES_PATH, &st));
	EXPECT_EQ(0400, st.st_mode & 07777);
	ASSERT_EQ(0, stat(WPSTAT_SUMMARY_PATH, &st));
	EXPECT_EQ(0444, st.st_mode & 07777);
	ASSERT_EQ(0, stat(WPSTAT_CONTROL_PATH, &st));
	EXPECT_EQ(0200, st.st_mode & 07777);
	ASSERT_LT(0, wps_slurp(CONFIG_PATH, before, sizeof(before)));
	cfd = open(WPSTAT_CONTROL_PATH, O_WRONLY);
	ASSERT_LE(0, cfd);
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		char buf[8192];
		size_t i;
		int fd;

		if (drop_privileges())
			_exit(10);
		fd = open(WPSTAT_CONTROL_PATH, O_WRONLY);
		if (fd >= 0 || (errno != EACCES && errno != EPERM))
			_exit(11);
		if (write(cfd, "disable", 7) != -1 || errno != EPERM)
			_exit(12);
		if (write(cfd, "filter none", 11) != -1 || errno != EPERM)
			_exit(13);
		for (i = 0; i < sizeof(closed) / sizeof(closed[0]); i++) {
			fd = open(closed[i], O_RDONLY);
			if (fd >= 0 || errno != EACCES)
				_exit(20 + i);
		}
		if (wps_slurp(WPSTAT_SUMMARY_PATH, buf, sizeof(buf)) <= 0 ||
		    !strstr(buf, "\nenabled 1\n"))
			_exit(30);
		_exit(0);
	}
	close(cfd);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	/* 11/12/13 control, 20+ a readable file (see closed[]), 30 summary */
	EXPECT_EQ(0, WEXITSTATUS(status));
	ASSERT_LT(0, wps_slurp(CONFIG_PATH, after, sizeof(after)));
	EXPECT_STREQ(before, after);
}

/* Exit status of a run_cmd() status: -1 if it did not exit. */
static int exit_code(int status)
{
	return status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static bool clear_refusal(const char *out)
{
	return !strncmp(out, "wpstat: ", 8) &&
	       (strstr(out, "not permitted") || strstr(out, "ermission denied") ||
		strstr(out, "root"));
}

/* `wpstat load` and `wpstat unload` as nobody fail, say why, change nothing. */
TEST_F(rel, nonroot_cli_cannot_load_or_unload)
{
	char bin[512], module[512], out[4096];
	const char *nbin = nobody_path("bin/wpstat", bin, sizeof(bin));
	const char *nmod = nobody_path("wpstat.ko", module, sizeof(module));
	char *unload[] = { (char *)nbin, "unload", NULL };
	char *load[] = { (char *)nbin, "load", "--module", (char *)nmod, NULL };
	char *load_any[] = { (char *)nbin, "load", NULL };
	char *root_load[] = { (char *)wpstat_bin(), "load", "--module",
			      (char *)wps_module(), NULL };
	int st;

	ASSERT_NOBODY_CAN_USE(nbin, nmod);
	st = run_cmd(unload, true, out, sizeof(out));
	EXPECT_EQ(1, exit_code(st)) TH_LOG("unload as nobody: %s", out);
	EXPECT_TRUE(clear_refusal(out)) TH_LOG("unload as nobody said: %s", out);
	ASSERT_TRUE(wps_loaded()) TH_LOG("nobody unloaded the module");

	ASSERT_EQ(0, rmmod_retry());
	ASSERT_FALSE(wps_loaded());
	st = run_cmd(load, true, out, sizeof(out));
	EXPECT_EQ(1, exit_code(st)) TH_LOG("load as nobody: %s", out);
	EXPECT_TRUE(clear_refusal(out)) TH_LOG("load as nobody said: %s", out);
	EXPECT_FALSE(wps_loaded());
	st = run_cmd(load_any, true, out, sizeof(out));
	EXPECT_NE(0, exit_code(st)) TH_LOG("load as nobody: %s", out);
	EXPECT_FALSE(wps_loaded());

	/* And root can. */
	st = run_cmd(root_load, false, out, sizeof(out));
	EXPECT_EQ(0, exit_code(st)) TH_LOG("load as root: %s", out);
	ASSERT_TRUE(wps_loaded());
}

/*
 * Something that looks like a kernel address in @text: a 0x number of 8+
 * hex digits, 8+ hex digits with a letter (raw %px or hashed %p), a
 * zero-padded decimal of 8+ digits not after a '.' (a hashed %p without
 * letters; not the fraction of a decimal number), a
 * decimal at or above 0xffff800000000000, or "(____ptrval____)".  Copies
 * the token into @tok and returns it, or NULL.
 */
static const char *find_kaddr(const char *text, char *tok, size_t toklen)
{
	const char *p = text;

	if (strstr(text, "ptrval"))
		return snprintf(tok, toklen, "ptrval"), tok;
	while (*p) {
		const char *s = p, *h;
		bool hex = true, dec = true, letter = false, frac;
		size_t n;

		if (!isalnum((unsigned char)*p)) {
			p++;
			continue;
		}
		frac = p > text && p[-1] == '.';
		while (isalnum((unsigned char)*p))
			p++;
		n = p - s;
		h = s;
		if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
			h = s + 2;
		for (const char *q = h; q < p; q++) {
			hex &= isxdigit((unsigned char)*q) != 0;
			dec &= isdigit((unsigned char)*q) != 0;
			letter |= isalpha((unsigned char)*q) != 0;
		}
		if ((h != s && hex && p - h >= 8) ||
		    (h == s && hex && letter && n >= 8) ||
		    (dec && n >= 8 && s[0] == '0' && !frac) ||
		    (dec && n >= 19 &&
		     strtoull(s, NULL, 10) >= 0xffff800000000000ULL)) {
			snprintf(tok, toklen, "%.*s", (int)n, s);
			return tok;
		}
	}
	return NULL;
}

static void expect_no_kaddr(struct __test_metadata *_metadata,
			    const char *what, const char *text)
{
	char tok[64];

	EXPECT_EQ(NULL, find_kaddr(text, tok, sizeof(tok)))
		TH_LOG("%s shows '%s'", what, tok);
}

/* Every readable regular file under @dir: how many were scanned. */
static int scan_dir(struct __test_metadata *_metadata, const char *dir,
		    char *buf, size_t len)
{
	struct dirent *de;
	char path[512];
	struct stat st;
	int n = 0;
	DIR *d = opendir(dir);

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		if (!(st.st_mode & 0444)) {	/* control: write-only */
			EXPECT_EQ(0200, st.st_mode & 0777) TH_LOG("%s", path);
			continue;
		}
		EXPECT_LT(0, wps_slurp(path, buf, len)) TH_LOG("%s", path);
		expect_no_kaddr(_metadata, path, buf);
		n++;
	}
	closedir(d);
	return n;
}

/*
 * No kernel address anywhere: every file in /proc/wpstat, debugfs wpstat/
 * and the module's parameters, what the CLI prints (status, show in every
 * format, as root and as nobody), and the module's kernel log lines.
 */
TEST_F(rel, no_kernel_addresses_in_output)
{
	static const char *const bad[] = {
		"x ffff888003a1c000 y", "at 0xffffffffc0a01234", "0x1234abcd",
		"ptr 00000000e4f1b2a7", "ptr 0000000012345678",
		"18446612682071343104", "(____ptrval____)",
	};
	static const char *const good[] = {
		"mkwrite_ns 123456789012345\n", "kernel 6.12.117+deb12-amd64",
		"254:0 12 3735928559 16", "bdp_pause_ns 18446744073",
		"wpstat_mkwrite_seconds_total 0.000000000",
	};
	static const char *const cli[][4] = {
		{ "status" }, { "status", "--json" }, { "show" },
		{ "show", "--json" }, { "show", "--format", "prometheus" },
		{ "stalls" }, { "stalls", "--json" },
		{ "stalls", "--format", "prometheus" },
	};
	static char buf[1 << 20];
	char tok[64], what[128], bin[512], module[512];
	const char *nbin = nobody_path("bin/wpstat", bin, sizeof(bin));
	char *argv[6];
	int i, j, n, st, len;

	ASSERT_NOBODY_CAN_USE(nbin,
			      nobody_path("wpstat.ko", module, sizeof(module)));

	/* The detector itself. */
	for (i = 0; i < (int)(sizeof(bad) / sizeof(bad[0])); i++)
		ASSERT_NE(NULL, find_kaddr(bad[i], tok, sizeof(tok))) TH_LOG("%s", bad[i]);
	for (i = 0; i < (int)(sizeof(good) / sizeof(good[0])); i++)
		ASSERT_EQ(NULL, find_kaddr(good[i], tok, sizeof(tok))) TH_LOG("%s", good[i]);

	/* Something in every column and histogram. */
	ASSERT_EQ(0, touch_file(self->rel.probe_fd, NPAGES));
	ASSERT_EQ(0, touch_file(self->rel.probe_fd, NPAGES));
	ASSERT_EQ(0, pwrite_pages(self->rel.probe_fd, 0, NPAGES, 1));
	ASSERT_EQ(0, fsync(self->rel.probe_fd));

	n = scan_dir(_metadata, "/proc/wpstat", buf, sizeof(buf));
	EXPECT_EQ(5, n) TH_LOG("inodes, summary, gone, counters and stalls");
	n = scan_dir(_metadata, "/sys/kernel/debug/wpstat", buf, sizeof(buf));
	EXPECT_LE(3, n) TH_LOG("config, probes, histograms");
	n = scan_dir(_metadata, "/sys/module/wpstat/parameters", buf, sizeof(buf));
	EXPECT_LE(3, n);

	for (j = 0; j < 2; j++) {
		for (i = 0; i < (int)(sizeof(cli) / sizeof(cli[0])); i++) {
			int a;

			argv[0] = (char *)(j ? nbin : wpstat_bin());
			for (a = 0; a < 4 && cli[i][a]; a++)
				argv[a + 1] = (char *)cli[i][a];
			argv[a + 1] = NULL;
			st = run_cmd(argv, j, buf, sizeof(buf));
			snprintf(what, sizeof(what), "wpstat %s %s%s(%s)",
				 cli[i][0], cli[i][1] ?: "",
				 cli[i][1] ? " " : "", j ? "nobody" : "root");
			/* nobody may run status; show is root-only */
			if (!j || i < 2) {
				EXPECT_EQ(0, exit_code(st)) TH_LOG("%s: %s", what, buf);
				EXPECT_LT(10, (int)strlen(buf)) TH_LOG("%s", what);
			}
			expect_no_kaddr(_metadata, what, buf);
		}
	}

	/* The module's own kernel log lines. */
	len = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	ASSERT_LT(0, len);
	if (len > (int)sizeof(buf) - 1)
		len = sizeof(buf) - 1;
	len = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, len);
	ASSERT_LT(0, len);
	buf[len] = '\0';
	n = 0;
	for (char *save = NULL, *line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		/* The timestamp's digits are no address; skip "[ 12.345]". */
		char *msg = line[0] == '[' && strchr(line, ']') ?
			    strchr(line, ']') + 1 : line;

		if (!strstr(msg, "wpstat"))
			continue;
		n++;
		expect_no_kaddr(_metadata, "kernel log", msg);
	}
	EXPECT_LT(0, n) TH_LOG("no wpstat line in the kernel log");
}

TEST_HARNESS_MAIN
