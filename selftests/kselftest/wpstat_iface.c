// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_iface: the module's published interface.  /proc/wpstat formats,
 * control-file commands and their error handling, filters, reset,
 * enable/disable, unavailable probes shown as "-", the max_inodes bound,
 * permissions, levels (the same counts at both, switched exactly under
 * load), and unloading while workloads run.
 *
 * Runs as root in a guest with wpstat.ko loaded and $WPSTAT_FS_DIR/ext4
 * and $WPSTAT_FS_DIR/tmpfs mounted (scripts/check/guest-check.sh).
 *
 * Over 800 lines: the interface is one suite (one binary, one line of
 * selftests/suites.txt), and the harness makes a suite one file: its
 * fixture list is static to the translation unit (kselftest_harness.h:
 * __fixture_list), so tests in a second file would not be run.
 */
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

/*
 * What the kernel made of the file: the first pass's stores that found no
 * PTE (its first-write faults), the folios behind the pages, and the
 * writeback waits counted by the end of the first pass.
 *
 * Only the first msync can wait: its writeback allocates the blocks as
 * unwritten extents (dioread_nolock, ext4's default since 5.6), and
 * ext4_end_bio() then leaves end_page_writeback() to the
 * ext4-rsv-conversion worker, which msync's fdatawait may reach first
 * (seen once on 5.10, with level switches holding the worker back).
 * Later passes rewrite written blocks: brd completes the bio inline and
 * the pages leave writeback before the wait looks.
 */
struct pass_shape {
	long absent, folios, first_wb_waits;
};

static int first_wb_waits(const char *path, struct pass_shape *shape)
{
	struct wps w;
	int ret = wps_read(path, &w);

	if (!ret)
		shape->first_wb_waits = w.wb_waits;
	return ret;
}

/*
 * Store to every page of a fresh @npages file, msync, @passes times, or
 * (@passes 0) until *@stop, at least twice: the passes done, or -errno.
 */
static int passes_file(const char *tag, size_t npages, int passes,
		       const volatile int *stop, struct wpstat_file_key *key,
		       struct pass_shape *shape)
{
	char path[256];
	char *map;
	int fd, p = 0, ret = 0;

	fd = wps_scratch("ext4", tag, npages, path, sizeof(path));
	if (fd < 0)
		return fd;
	map = mmap(NULL, npages * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
		   fd, 0);
	if (map == MAP_FAILED) {
		ret = -errno;
		goto out;
	}
	for (p = 0; !ret && (passes ? p < passes : p < 2 || !*stop); p++) {
		if (p) {
			wps_store_pages(map, npages, p + 1);
		} else {
			shape->absent = wps_store_pages_absent(map, npages, 1);
			shape->folios = wps_folios(map, npages);
			if (shape->absent <= 0 || shape->folios <= 0)
				ret = -EIO;
		}
		if (!ret && msync(map, npages * PAGE, MS_SYNC))
			ret = -errno;
		if (!ret && !p)
			ret = first_wb_waits(path, shape);
	}
	munmap(map, npages * PAGE);
	if (!ret)
		ret = wpstat_fd_key(fd, key);
out:
	close(fd);
	unlink(path);
	return ret ? ret : p;
}

/*
 * What each store-and-msync pass of @npages pages does on ext4 (see
 * wpstat_predict.c for the kernel functions): pass 1 faults where a store
 * finds no PTE (mkwrite_first: every page on order-0 folios, one per
 * folio where a fault maps the whole large folio, 7.2), later passes on
 * each PTE msync write-protected (mkwrite_wp); every fault checks stable
 * pages once and makes one ratelimited call; every pass dirties and
 * cleans each folio once.
 */
static void expect_passes(struct __test_metadata *_metadata,
			  const struct wps *w, long npages, long passes,
			  const struct pass_shape *shape)
{
	long faults = shape->absent + npages * (passes - 1);

	TH_LOG("%ld pages in %ld folios, %ld first-write faults, %ld writeback waits in the first pass",
	       npages, shape->folios, shape->absent, shape->first_wb_waits);
	EXPECT_EQ(shape->absent, w->mkwrite_first);
	EXPECT_EQ(npages * (passes - 1), w->mkwrite_wp);
	EXPECT_EQ(shape->folios * passes, w->mkclean_calls);
	EXPECT_TIMED_EQ(faults, w->stable_calls);
	EXPECT_EQ(shape->folios * passes, w->dirtied);
	/* The folios tile the file: their pages are the file's. */
	EXPECT_EQ(npages * passes, w->mkclean_pages);
	EXPECT_EQ(npages * passes, w->dirtied_pages);
	EXPECT_TIMED_EQ(faults, w->bdp_calls);
	EXPECT_TIMED_EQ(faults, w->bdp_fault_calls);
	EXPECT_EQ(0, w->stable_waits);
	/* At most one wait a folio, all in the first pass (see pass_shape). */
	EXPECT_GE(shape->folios, shape->first_wb_waits);
	EXPECT_EQ(shape->first_wb_waits, w->wb_waits);
}

/*
 * One workload at each level: every count column the same, the timing
 * columns '-' at counts and measured at timing.  Ends at the suite level.
 */
TEST(count_columns_agree_across_levels)
{
	const char *levels[] = { "counts", "timing" };
	struct wpstat_file_key key;
	struct pass_shape shape;
	char cmd[32];
	struct wps w[2];
	int l;

	for (l = 0; l < 2; l++) {
		snprintf(cmd, sizeof(cmd), "level %s", levels[l]);
		ASSERT_EQ(0, wps_control(cmd));
		ASSERT_EQ(l, wps_timing());
		ASSERT_EQ(3, passes_file(levels[l], NPAGES, 3, NULL, &key,
					 &shape));
		ASSERT_EQ(0, wps_read_key(&key, &w[l]));
		expect_passes(_metadata, &w[l], NPAGES, 3, &shape);
	}
	EXPECT_EQ(-1, w[0].mkwrite_ns);
	EXPECT_EQ(-1, w[0].mkclean_ptes);
	EXPECT_LT(0, w[1].mkwrite_ns);
	EXPECT_EQ(NPAGES * 3, w[1].mkclean_ptes);
	snprintf(cmd, sizeof(cmd), "level %s", wps_suite_level());
	ASSERT_EQ(0, wps_control(cmd));
}

/*
 * Switching levels 20 times while a writer faults and msyncs: every event
 * counted exactly once, by one level's handler or the other's
 * (wpstat_set_level(): attach, RCU-tasks, flip under stop_machine, detach).
 */
FIXTURE(level) {
};

FIXTURE_SETUP(level)
{
}

/* Whatever happened, the next test runs at the suite's level. */
FIXTURE_TEARDOWN(level)
{
	char cmd[32];

	snprintf(cmd, sizeof(cmd), "level %s", wps_suite_level());
	wps_control(cmd);
}

struct switch_result {
	int stop;
	int passes;
	struct wpstat_file_key key;
	struct pass_shape shape;
};

TEST_F(level, switch_under_load_counts_exactly)
{
	const long npages = 64;
	struct switch_result *res;
	int status, i;
	char cmd[32];
	struct wps w;
	pid_t child;

	res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, res);
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		res->passes = passes_file("switch", npages, 0, &res->stop,
					  &res->key, &res->shape);
		_exit(res->passes > 0 ? 0 : 1);
	}
	for (i = 0; i < 20; i++) {
		snprintf(cmd, sizeof(cmd), "level %s", i % 2 ? "counts" : "timing");
		EXPECT_EQ(0, wps_control(cmd)) TH_LOG("%s", cmd);
	}
	res->stop = 1;
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("writer: %d", res->passes);
	TH_LOG("20 level switches during %d passes of %ld pages", res->passes,
	       npages);
	ASSERT_EQ(0, wps_read_key(&res->key, &w));
	expect_passes(_metadata, &w, npages, res->passes, &res->shape);
	munmap(res, sizeof(*res));
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

/*
 * Writers that keep faulting, cleaning and throttling until killed; they
 * die with the test process too, should it time out or be killed.
 */
static pid_t start_writer(const char *fs, int use_mmap, char *path, size_t len)
{
	pid_t parent = getpid();
	int fd = wps_scratch(fs, use_mmap ? "unload-mmap" : "unload-pwrite",
			     64, path, len);
	pid_t pid;

	if (fd < 0)
		return -1;
	pid = fork();
	if (pid)
		return close(fd), pid;
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(1);
	for (;;) {
		char buf[PAGE] = { 1 };
		size_t i;

		if (use_mmap) {
			touch_file(fd, 64);
			continue;
		}
		for (i = 0; i < 64; i++)
			if (pwrite(fd, buf, PAGE, i * PAGE) != PAGE)
				_exit(1);
		fsync(fd);
	}
}

#define NWRITERS	3

FIXTURE(unload) {
	char path[NWRITERS][256];
	pid_t writer[NWRITERS];
};

FIXTURE_SETUP(unload)
{
	static const struct { const char *fs; int use_mmap; } w[NWRITERS] = {
		{ "ext4", 1 }, { "ext4", 0 }, { "xfs", 1 },
	};
	int i;

	for (i = 0; i < NWRITERS; i++) {
		self->writer[i] = start_writer(w[i].fs, w[i].use_mmap,
					       self->path[i],
					       sizeof(self->path[i]));
		ASSERT_LT(0, self->writer[i]);
	}
}

FIXTURE_TEARDOWN(unload)
{
	int i, status;

	for (i = 0; i < NWRITERS; i++) {
		if (self->writer[i] <= 0)
			continue;
		kill(self->writer[i], SIGKILL);
		waitpid(self->writer[i], &status, 0);
		unlink(self->path[i]);
	}
	if (!wps_loaded())
		wps_reload(NULL);
}

/*
 * Five unloads under three writers.  Under TCG with a loaded host a cycle
 * (RCU grace periods while probes come and go) took up to 8 s: the
 * harness's default 30 s was too short.
 */
TEST_F(unload, while_workloads_run)
{
	int i, status;

	for (i = 0; i < 5; i++) {
		usleep(300 * 1000);
		ASSERT_EQ(0, system("rmmod wpstat"));
		ASSERT_FALSE(wps_loaded());
		usleep(100 * 1000);
		ASSERT_RELOAD(NULL);
	}
	usleep(300 * 1000);
	/* The writers never noticed, and the fresh module sees them. */
	for (i = 0; i < NWRITERS; i++)
		ASSERT_EQ(0, waitpid(self->writer[i], &status, WNOHANG))
			TH_LOG("writer %d died while the module was reloaded", i);
	EXPECT_LT(0, wps_summary("mkwrite_wp") + wps_summary("mkwrite_first"));
	/* The pwrite writer's fsync cleans its pages: it dirties them again. */
	EXPECT_LT(0, wps_summary("dirtied"));
}

/*
 * An agent that switches the level the moment the control file appears,
 * while the module loads under the writers.  On b0bd212 the control file
 * existed before wpstat_attach_init(): a switch to timing that won the
 * race registered the kretprobes, init memset and registered them again,
 * and the next write fault oopsed in pre_handler_kretprobe (the guest's
 * kernel log check fails the suite on that).  Every write must now switch
 * the level or be refused with EBUSY; the module must end with the same
 * points attached and the writers alive.
 */
static int level_agent(const char *cmd)
{
	struct timespec t0, t;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		ret = wps_control(cmd);
		if (!ret)
			return 0;
		if (ret != -ENOENT && ret != -EBUSY)
			return 2;	/* neither absent nor refused: wrong */
		clock_gettime(CLOCK_MONOTONIC, &t);
		/*
		 * A bound for a module that never loads, not a measure: a KASAN
		 * kernel beside five guests took over 60 s to get there.
		 */
	} while (t.tv_sec - t0.tv_sec < 600);
	return 3;
}

/* Points the debugfs probes file lists as attached, or -1. */
static int probes_attached(void)
{
	char buf[8192], *p = buf;
	int n = 0;

	if (wps_slurp("/sys/kernel/debug/wpstat/probes", buf, sizeof(buf)) <= 0)
		return -1;
	while ((p = strstr(p, " attached "))) {
		n++;
		p++;
	}
	return n;
}

TEST_F(unload, level_written_while_loading)
{
	int i, status, rounds = wps_stress() ? 50 : 4;
	int attached = probes_attached();
	const char *other = wps_timing() ? "level counts" : "level timing";
	char level[32];

	snprintf(level, sizeof(level), "level %s", wps_suite_level());
	ASSERT_LT(0, attached);
	for (i = 0; i < rounds; i++) {
		pid_t agent;

		ASSERT_EQ(0, system("rmmod wpstat"));
		agent = fork();
		ASSERT_LE(0, agent);
		if (!agent)
			_exit(level_agent(other));
		usleep(i * 20 * 1000);	/* vary where in the load it lands */
		EXPECT_EQ(0, wps_reload(NULL));
		ASSERT_EQ(agent, waitpid(agent, &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		ASSERT_EQ(0, WEXITSTATUS(status))
			TH_LOG("round %d: '%s' failed with neither success nor EBUSY (2) or never got through (3)",
			       i, other);
		ASSERT_TRUE(wps_loaded());
		usleep(300 * 1000);	/* write faults through the new level */
		ASSERT_EQ(0, wps_control(level));
		EXPECT_EQ(attached, probes_attached())
			TH_LOG("round %d: points attached before the load and after the switches", i);
	}
	for (i = 0; i < NWRITERS; i++)
		ASSERT_EQ(0, waitpid(self->writer[i], &status, WNOHANG))
			TH_LOG("writer %d died while the level was switched", i);
	EXPECT_LT(0, wps_summary("mkwrite_wp") + wps_summary("mkwrite_first"));
}

TEST_HARNESS_MAIN
