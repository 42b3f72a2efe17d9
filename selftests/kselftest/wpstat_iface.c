// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_iface: the module's published interface.  /proc/wpstat formats,
 * control-file commands and their error handling, filters, reset,
 * enable/disable, unavailable probes shown as "-", the max_inodes bound
 * and permissions.  Levels under load and unloading: wpstat_levels.
 *
 * Runs as root in a guest with wpstat.ko loaded and $WPSTAT_FS_DIR/ext4
 * and $WPSTAT_FS_DIR/tmpfs mounted (scripts/check/guest-check.sh).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "wpstat_test.h"
#include "wpstat_harness.h"

#define HEADER "dev ino gen mkwrite_first mkwrite_wp mkwrite_ns " \
	"mkclean_calls mkclean_ptes stable_calls stable_waits " \
	"stable_wait_ns wb_waits dirtied bdp_calls bdp_fault_calls " \
	"bdp_throttled bdp_pauses bdp_pause_ns"
#define NPAGES	16

TEST(proc_header_is_published_interface)
{
	char buf[65536];

	ASSERT_TRUE(wps_loaded()) TH_LOG("wpstat is not loaded");
	ASSERT_LT(0, wps_slurp(WPSTAT_INODES_PATH, buf, sizeof(buf)));
	/* Published columns come first, in this order; more may follow. */
	ASSERT_EQ(0, strncmp(buf, HEADER, strlen(HEADER)));
	ASSERT_TRUE(buf[strlen(HEADER)] == '\n' || buf[strlen(HEADER)] == ' ');
}

/* The key's later columns (subvol), which the list places among its own. */
static const char *const key_columns[] = {
#define WPSTAT_COUNTER(...)
#define WPSTAT_KEY_COLUMN(id, name, ...)	#name,
#include "wpstat_counters.def"
#undef WPSTAT_KEY_COLUMN
#undef WPSTAT_COUNTER
};

TEST(rows_are_well_formed)
{
	char path[256], buf[1 << 20], *line, *save = NULL;
	int fd, ncols = 0, rows = 0;
	struct stat st;
	char want[64];

	fd = wps_scratch("ext4", "rows", NPAGES, path, sizeof(path));
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, touch_file(fd, NPAGES));
	ASSERT_EQ(0, fstat(fd, &st));
	snprintf(want, sizeof(want), "%u:%u %llu ", major(st.st_dev),
		 minor(st.st_dev), (unsigned long long)st.st_ino);

	ASSERT_LT(0, wps_slurp(WPSTAT_INODES_PATH, buf, sizeof(buf)));
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *tok, *s2 = NULL, *end;
		int n = 0;

		for (tok = strtok_r(line, " ", &s2); tok;
		     tok = strtok_r(NULL, " ", &s2), n++) {
			if (!rows)
				continue;
			if (n == 0) {
				unsigned int ma, mi;
				char c;

				ASSERT_EQ(2, sscanf(tok, "%u:%u%c", &ma, &mi, &c));
			} else if (strcmp(tok, "-")) {
				strtoull(tok, &end, 10);
				ASSERT_EQ('\0', *end) TH_LOG("bad field '%s'", tok);
			}
		}
		if (!rows)
			ncols = n;
		else
			ASSERT_EQ(ncols, n);
		rows++;
	}
	ASSERT_EQ(3 + (int)WPS_N + (int)ARRAY_SIZE(key_columns), ncols);
	ASSERT_LE(2, rows);
	/* And our file is there, under its stat() dev and inode number. */
	ASSERT_LT(0, wps_slurp(WPSTAT_INODES_PATH, buf, sizeof(buf)));
	ASSERT_NE(NULL, strstr(buf, want)) TH_LOG("no row '%s'", want);
	close(fd);
	unlink(path);
}

/*
 * A column made only by the zfs module's probes (a syncer's ZIL and
 * writeback waits) while that module is not loaded: it reads '-' at every
 * level.
 */
static bool zfs_column(const char *name)
{
	return !strncmp(name, "zil_", 4) || !strncmp(name, "sync_wb_", 8);
}

static bool zfs_column_without_zfs(const char *name)
{
	return zfs_column(name) && access("/sys/module/zfs", F_OK);
}

TEST(summary_names_every_counter)
{
	static const char *const extra[] = {
		"tracked_inodes", "max_inodes", "untracked_events",
		"entry_bytes", "missed_mkwrite", "missed_mkclean",
		"missed_stable", "missed_bdp_ratelimited",
	};
	size_t i;

	for (i = 0; i < WPS_N; i++) {
		if (zfs_column_without_zfs(wps_names[i])) {
			EXPECT_EQ(-1, wps_summary(wps_names[i]))
				TH_LOG("%s", wps_names[i]);
		} else if (wps_timing_only(wps_names[i])) {
			EXPECT_TIMED_LT(-1, wps_summary(wps_names[i]));
		} else {
			EXPECT_LE(0, wps_summary(wps_names[i]))
				TH_LOG("%s", wps_names[i]);
		}
	}
	for (i = 0; i < sizeof(extra) / sizeof(extra[0]); i++)
		EXPECT_LE(0, wps_summary(extra[i])) TH_LOG("%s", extra[i]);
	EXPECT_EQ(65536, wps_summary("max_inodes"));
	EXPECT_LT(0, wps_summary("entry_bytes"));
}

TEST(control_rejects_bad_commands_and_changes_nothing)
{
	static const char *const bad[] = {
		"", "\n", "bogus", "resetx", "reset now", "RESET", "enable 1",
		"filter", "filter dev", "filter dev 8", "filter dev 8:",
		"filter dev :1", "filter dev a:b", "filter dev 0:0",
		"filter dev 4096:0", "filter dev 1:1048576", "filter dev 8:1x",
		"filter dev 8:1 8:2", "filter pid", "filter pid -1",
		"filter pid 0", "filter pid abc", "filter pid 1x",
		"filter pid 99999999999", "filter none x", "filter all",
		"enable\nreset", "reset\n\n", "re\tset",
		"filter dev 4294967304:1", "filter dev 8:4294967297",
		"filter dev 99999999999:1", "filter dev +8:1", "filter dev 8:+1",
		"filter dev 8:-1", "filter dev 8: 1",
		"level", "level fast", "level Counts", "LEVEL timing",
		"level counts timing", "level 0", "level timing\ncounts",
	};
	char before[4096], after[4096], huge[300], bin[] = { 'r', 0, 1, 2 };
	size_t i;

	ASSERT_LT(0, wps_slurp("/sys/kernel/debug/wpstat/config", before,
			       sizeof(before)));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		EXPECT_EQ(-EINVAL, wps_control(bad[i])) TH_LOG("'%s'", bad[i]);
	memset(huge, 'a', sizeof(huge));
	EXPECT_EQ(-EINVAL, wps_control_len(huge, sizeof(huge)));
	EXPECT_EQ(-EINVAL, wps_control_len(bin, sizeof(bin)));
	/* Well-formed but naming no process. */
	EXPECT_EQ(-ESRCH, wps_control("filter pid 4194303"));
	ASSERT_LT(0, wps_slurp("/sys/kernel/debug/wpstat/config", after,
			       sizeof(after)));
	EXPECT_STREQ(before, after);
	/* Commands are accepted with or without a trailing newline. */
	EXPECT_EQ(0, wps_control("enable\n"));
	EXPECT_EQ(0, wps_control("filter none"));
}

/*
 * The totals after a reset are the whole guest's: filter on the scratch
 * filesystem, or any other writer (the runner's TAP output going to its
 * results directory makes a dirty-balancing row) can land between the
 * reset and the reads.  touch_file()'s msync(MS_SYNC) leaves nothing of
 * this file to write back later.
 */
TEST(reset_forgets_inodes_and_totals)
{
	struct wpstat_file_key k;
	struct wps w;
	char path[256], cmd[64];
	int fd = wps_scratch("ext4", "reset", NPAGES, path, sizeof(path));

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, wpstat_fd_key(fd, &k));
	snprintf(cmd, sizeof(cmd), "filter dev %u:%u", k.major, k.minor);
	ASSERT_EQ(0, wps_control(cmd));
	ASSERT_EQ(0, touch_file(fd, NPAGES));
	ASSERT_EQ(0, wps_read(path, &w));
	ASSERT_EQ(NPAGES, w.mkwrite_first);
	ASSERT_LE(1, wps_summary("tracked_inodes"));

	ASSERT_EQ(0, wps_control("reset"));
	ASSERT_EQ(0, wps_read(path, &w));
	EXPECT_EQ(0, w.mkwrite_first);
	EXPECT_TIMED_EQ(0, w.mkclean_ptes);
	EXPECT_EQ(0, wps_summary("mkwrite_first"));
	EXPECT_EQ(0, wps_summary("tracked_inodes"));
	ASSERT_EQ(0, wps_control("filter none"));
	close(fd);
	unlink(path);
}

/*
 * A CPU remembers the row of the file it cleaned last.  Two resets free
 * that row's table, and the second one's new table often takes the freed
 * table's address: the next clean of the file on the same CPU must count
 * in the new table, never read the freed one's rows (an oops at level
 * counts before tables had serials).  One task on one CPU, so the cleans
 * (msync, in the task) and the resets share the CPU's remembered row and
 * its slab.  Expected: each round's msync cleans each of the NPAGES
 * stored pages once, and only the last round is in the table.
 */
TEST(resets_between_cleans_on_one_cpu)
{
	cpu_set_t one, all;
	struct wps w;
	char path[256];
	int fd = wps_scratch("ext4", "reset-hint", NPAGES, path, sizeof(path));
	int round;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(all), &all));
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
	for (round = 0; round < 8; round++) {
		ASSERT_EQ(0, touch_file(fd, NPAGES));
		ASSERT_EQ(0, wps_control("reset"));
		ASSERT_EQ(0, wps_control("reset"));
	}
	ASSERT_EQ(0, touch_file(fd, NPAGES));
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(all), &all));
	ASSERT_EQ(0, wps_read(path, &w));
	EXPECT_EQ(NPAGES, w.mkwrite_first + w.mkwrite_wp);
	EXPECT_EQ(NPAGES, w.mkclean_calls);
	close(fd);
	unlink(path);
}

/* The " MAJ:MIN INO " prefix of @fd's row is in @fd_inodes's next pass. */
static int row_in_pass(int inodes, int fd)
{
	static char buf[1 << 20];
	struct wpstat_file_key k;
	char row[96];
	ssize_t n, len = 0;

	if (wpstat_fd_key(fd, &k) || lseek(inodes, 0, SEEK_SET))
		return -1;
	while ((n = read(inodes, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	if (n < 0)
		return -1;
	buf[len] = '\0';
	snprintf(row, sizeof(row), "\n%u:%u %llu ", k.major, k.minor,
		 (unsigned long long)k.ino);
	return strstr(buf, row) != NULL;
}

/*
 * A poller that keeps /proc/wpstat/inodes open and seeks back to 0 reads
 * the current table each pass, not the one of its first read (a table
 * pinned at open would stay frozen and allocated).
 */
TEST(kept_descriptor_reads_the_current_table)
{
	char a[256], b[256];
	int fa = wps_scratch("ext4", "pass-a", NPAGES, a, sizeof(a));
	int fb = wps_scratch("ext4", "pass-b", NPAGES, b, sizeof(b));
	int inodes = open(WPSTAT_INODES_PATH, O_RDONLY | O_CLOEXEC);

	ASSERT_LE(0, fa);
	ASSERT_LE(0, fb);
	ASSERT_LE(0, inodes);
	ASSERT_EQ(0, touch_file(fa, NPAGES));
	EXPECT_EQ(1, row_in_pass(inodes, fa));
	/* A reset swaps in a new table; b's row is only in that one. */
	ASSERT_EQ(0, wps_control("reset"));
	ASSERT_EQ(0, touch_file(fb, NPAGES));
	EXPECT_EQ(1, row_in_pass(inodes, fb));
	EXPECT_EQ(0, row_in_pass(inodes, fa));
	close(inodes);
	close(fa);
	close(fb);
	unlink(a);
	unlink(b);
}

TEST(disable_stops_counting_enable_resumes)
{
	struct wps a, b;
	char path[256];
	int fd = wps_scratch("ext4", "disable", NPAGES, path, sizeof(path));

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, wps_control("disable"));
	ASSERT_EQ(0, touch_file(fd, NPAGES));
	ASSERT_EQ(0, wps_read(path, &a));
	ASSERT_EQ(0, wps_control("enable"));
	EXPECT_EQ(0, a.mkwrite_first);
	EXPECT_TIMED_EQ(0, a.mkclean_ptes);
	ASSERT_EQ(0, touch_file(fd, NPAGES));
	ASSERT_EQ(0, wps_read(path, &b));
	/* A fresh mapping has no PTEs: every store is a first write. */
	EXPECT_EQ(NPAGES, b.mkwrite_first);
	EXPECT_TIMED_EQ(NPAGES, b.mkclean_ptes);
	close(fd);
	unlink(path);
}

TEST(filter_dev_counts_only_that_device)
{
	char ext4[256], tmp[256], cmd[64];
	int fe = wps_scratch("ext4", "fdev", NPAGES, ext4, sizeof(ext4));
	int ft = wps_scratch("tmpfs", "fdev", NPAGES, tmp, sizeof(tmp));
	struct stat st_ext4, st_tmp;
	struct wps w;

	ASSERT_LE(0, fe);
	ASSERT_LE(0, ft);
	ASSERT_EQ(0, fstat(fe, &st_ext4));
	ASSERT_EQ(0, fstat(ft, &st_tmp));

	/* Filter on tmpfs: the ext4 file's faults must not be counted. */
	snprintf(cmd, sizeof(cmd), "filter dev %u:%u", major(st_tmp.st_dev),
		 minor(st_tmp.st_dev));
	ASSERT_EQ(0, wps_control(cmd));
	ASSERT_EQ(0, touch_file(fe, NPAGES));
	ASSERT_EQ(0, wps_read(ext4, &w));
	EXPECT_EQ(0, w.mkwrite_first);
	EXPECT_TIMED_EQ(0, w.mkclean_ptes);

	snprintf(cmd, sizeof(cmd), "filter dev %u:%u", major(st_ext4.st_dev),
		 minor(st_ext4.st_dev));
	ASSERT_EQ(0, wps_control(cmd));
	ASSERT_EQ(0, touch_file(fe, NPAGES));
	ASSERT_EQ(0, wps_control("filter none"));
	ASSERT_EQ(0, wps_read(ext4, &w));
	EXPECT_EQ(NPAGES, w.mkwrite_first);
	EXPECT_TIMED_EQ(NPAGES, w.mkclean_ptes);
	close(fe);
	close(ft);
	unlink(ext4);
	unlink(tmp);
}

TEST(filter_pid_counts_only_that_process)
{
	char mine[256], theirs[256], cmd[64];
	int fm = wps_scratch("ext4", "fpid-parent", NPAGES, mine, sizeof(mine));
	int ft = wps_scratch("ext4", "fpid-child", NPAGES, theirs, sizeof(theirs));
	int go[2], status;
	struct wps wm, wt;
	pid_t child;
	char c;

	ASSERT_LE(0, fm);
	ASSERT_LE(0, ft);
	ASSERT_EQ(0, pipe(go));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		_exit(touch_file(ft, NPAGES) ? 1 : 0);
	}
	snprintf(cmd, sizeof(cmd), "filter pid %d", child);
	ASSERT_EQ(0, wps_control(cmd));
	ASSERT_EQ(0, touch_file(fm, NPAGES));	/* ours: not counted */
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_EQ(0, wps_control("filter none"));
	ASSERT_EQ(0, status);

	ASSERT_EQ(0, wps_read(mine, &wm));
	ASSERT_EQ(0, wps_read(theirs, &wt));
	EXPECT_EQ(0, wm.mkwrite_first + wm.mkwrite_wp);
	EXPECT_EQ(NPAGES, wt.mkwrite_first);
	EXPECT_TIMED_EQ(NPAGES, wt.bdp_fault_calls);
	close(fm);
	close(ft);
	unlink(mine);
	unlink(theirs);
}

/*
 * Whether @probe's line in the debugfs probes file ("probe target kind
 * status hits missed") shows @kind and @status.  The target is not
 * compared: it is the kernel's own (folio_mkclean; page_mkclean on 5.10).
 */
static bool probe_is(const char *buf, const char *probe, const char *kind,
		     const char *status)
{
	char name[64], target[64], k[32], st[32];
	const char *p;

	for (p = buf; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (sscanf(p, "%63s %63s %31s %31s", name, target, k, st) == 4 &&
		    !strcmp(name, probe))
			return !strcmp(k, kind) && !strcmp(st, status);
	return false;
}

TEST(unavailable_probe_reads_dash_not_zero)
{
	char buf[8192], path[256];
	const char *mech;
	struct wps w;
	int fd;

	ASSERT_RELOAD("skip_probes=mkclean");
	fd = wps_scratch("ext4", "dash", NPAGES, path, sizeof(path));
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, touch_file(fd, NPAGES));
	ASSERT_EQ(0, wps_read(path, &w));
	EXPECT_EQ(-1, w.mkclean_calls);
	EXPECT_EQ(-1, w.mkclean_ptes);
	EXPECT_EQ(NPAGES, w.mkwrite_first);
	EXPECT_EQ(-1, wps_summary("mkclean_ptes"));
	ASSERT_LT(0, wps_slurp("/sys/kernel/debug/wpstat/probes", buf,
			       sizeof(buf)));
	/*
	 * folio_mkclean: an entry-only callback at level counts, a
	 * kretprobe at level timing; do_page_mkwrite: entry-only at both
	 * (the fault is timed whole at handle_mm_fault, level timing).
	 */
	mech = wps_timing() ? "kretprobe" : "ftrace";
	EXPECT_TRUE(probe_is(buf, "mkclean", mech, "skipped")) TH_LOG("%s", buf);
	EXPECT_TRUE(probe_is(buf, "mkwrite", "ftrace", "attached")) TH_LOG("%s", buf);
	EXPECT_TRUE(probe_is(buf, "fault", wps_timing() ? "kretprobe" : "none",
			     wps_timing() ? "attached" : "off")) TH_LOG("%s", buf);
	close(fd);
	unlink(path);
	ASSERT_RELOAD(NULL);
}

/*
 * /proc/wpstat/counters is the module's own counter list: the same names
 * in the same order as the columns of /proc/wpstat/inodes, each with the
 * lowest level that produces it (the fault times, mkclean_ptes and the
 * journal waits need return probes: level timing) and whether it is
 * produced now (jbd2 is loaded: the guest mounted ext4 before; the ZIL
 * waits only once the zfs module is).
 */
TEST(counters_file_lists_every_column)
{
	char buf[8192], *line, *save = NULL, name[64], level[16];
	int avail, n = 0;

	ASSERT_LT(0, wps_slurp(WPSTAT_COUNTERS_PATH, buf, sizeof(buf)));
	line = strtok_r(buf, "\n", &save);
	ASSERT_STREQ("name level available help", line);
	while ((line = strtok_r(NULL, "\n", &save))) {
		bool timing_only;

		ASSERT_EQ(3, sscanf(line, "%63s %15s %d", name, level, &avail))
			TH_LOG("%s", line);
		ASSERT_GT(WPS_N, n) TH_LOG("more counters than columns");
		EXPECT_STREQ(wps_names[n], name);
		/*
		 * Times, the PTE count, what a return probe names, and the
		 * per-call denominators: their only source is a callback on
		 * every write(2), which level counts does not pay for.
		 */
		timing_only = !strcmp(name, "mkwrite_ns") ||
			      !strcmp(name, "stable_calls") ||
			      !strcmp(name, "bdp_calls") ||
			      !strcmp(name, "bdp_fault_calls") ||
			      !strcmp(name, "mkclean_ptes") ||
			      !strcmp(name, "mkwrite_max_ns") ||
			      !strncmp(name, "journal_", 8) ||
			      !strcmp(name, "mkwrite_unnamed_ns") ||
			      !strcmp(name, "readin_wait_ns") ||
			      !strcmp(name, "readin_wait_max_ns") ||
			      !strcmp(name, "mkwrite_cpu_ns") ||
			      !strcmp(name, "mkwrite_runq_ns") ||
			      !strncmp(name, "lock_", 5) ||
			      zfs_column(name);
		EXPECT_STREQ(timing_only ? "timing" : "counts", level);
		EXPECT_EQ(avail, wps_summary(name) >= 0) TH_LOG("%s", name);
		/* ZFS's own probes attach when its module arrives. */
		EXPECT_EQ((!timing_only || wps_timing() == 1) &&
			  !zfs_column_without_zfs(name), avail)
			TH_LOG("%s", name);
		n++;
	}
	EXPECT_EQ(WPS_N, n);
}

/* A level switch to the level in force, or to a bad one, changes nothing. */
TEST(level_commands)
{
	const char *suite = wps_suite_level();
	char before[4096], after[4096], cmd[32];

	ASSERT_EQ(!strcmp(suite, "timing"), wps_timing());
	ASSERT_LT(0, wps_slurp("/sys/kernel/debug/wpstat/config", before,
			       sizeof(before)));
	ASSERT_NE(NULL, strstr(before, suite));
	snprintf(cmd, sizeof(cmd), "level %s\n", suite);
	EXPECT_EQ(0, wps_control(cmd));
	EXPECT_EQ(-EINVAL, wps_control("level nonsense"));
	ASSERT_LT(0, wps_slurp("/sys/kernel/debug/wpstat/config", after,
			       sizeof(after)));
	EXPECT_STREQ(before, after);
}

TEST(max_inodes_bounds_the_table)
{
	char path[10][256], cmd[32];
	int i, fd;

	ASSERT_RELOAD("max_inodes=4");
	EXPECT_EQ(4, wps_summary("max_inodes"));
	/* Only this process: another writer's fault would add to the total. */
	snprintf(cmd, sizeof(cmd), "filter pid %d", getpid());
	ASSERT_EQ(0, wps_control(cmd));
	for (i = 0; i < 10; i++) {
		char name[16];

		snprintf(name, sizeof(name), "bound%d", i);
		fd = wps_scratch("ext4", name, 1, path[i], sizeof(path[i]));
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, touch_file(fd, 1));
		close(fd);
	}
	EXPECT_EQ(4, wps_summary("tracked_inodes"));
	EXPECT_LT(0, wps_summary("untracked_events"));
	/* Totals still count every inode's events: one first write each. */
	EXPECT_EQ(10, wps_summary("mkwrite_first"));
	for (i = 0; i < 10; i++)
		unlink(path[i]);
	ASSERT_EQ(0, wps_control("filter none"));
	ASSERT_RELOAD(NULL);
}

TEST(bad_module_parameters_are_refused)
{
	EXPECT_NE(0, wps_reload("max_inodes=0"));
	EXPECT_FALSE(wps_loaded());
	EXPECT_NE(0, wps_reload("max_inodes=99999999"));
	EXPECT_FALSE(wps_loaded());
	ASSERT_RELOAD(NULL);
}

TEST(only_root_controls_and_reads_inodes)
{
	int status;
	pid_t child = fork();

	ASSERT_LE(0, child);
	if (child == 0) {
		char buf[4096];

		if (setgid(65534) || setuid(65534))
			_exit(10);
		if (wps_control("reset") != -EACCES)
			_exit(11);
		if (wps_slurp(WPSTAT_INODES_PATH, buf, sizeof(buf)) != -EACCES)
			_exit(12);
		/* System-wide totals are public, like /proc/vmstat. */
		if (wps_slurp(WPSTAT_SUMMARY_PATH, buf, sizeof(buf)) <= 0)
			_exit(13);
		_exit(0);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
