// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_longrun: a table churned through many more files than it holds,
 * as a module left loaded for weeks meets it.
 *
 *   soak.waves        with max_inodes=4096, waves of files created,
 *                     written, deleted and dropped (21,000 files; 1,001,000
 *                     with WPSTAT_STRESS=1) while one long-lived hot file is
 *                     written between waves: the hot file's counts stay
 *                     exact, every wave's files get rows although the table
 *                     filled many times over, memory stays flat, and every
 *                     event is accounted: rows + gone + untracked = totals.
 *   churn.totals_never_decrease  with max_inodes=512, waves of 300 files
 *                     make compaction run again and again while a child
 *                     samples the summary and `wpstat export`: no total
 *                     and no per-filesystem series ever decreases.
 *
 * Resets under writers and readers: wpstat_resets; a pid filter and pid
 * reuse: wpstat_pidreuse.
 *
 * Runs as root in a guest with wpstat.ko loaded and $WPSTAT_FS_DIR/ext4
 * mounted (scripts/check/guest-check.sh); reloads the module and puts the
 * default one back.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "wpstat_test.h"
#include "wpstat_harness.h"

#define HOT_PAGES	16

/* ---- soak -------------------------------------------------------------- */

/*
 * Files per wave: as many as leave room in 4096 slots for the hot file and
 * the filesystem's own metadata rows (the block device's page cache).
 */
#define WAVE_FILES	3500

FIXTURE(soak) {
	char dir[256];
	char hot[256];
	int hot_fd;
	char *map;
};

FIXTURE_SETUP(soak)
{
	const char *fs = getenv("WPSTAT_FS_DIR");

	ASSERT_RELOAD("max_inodes=4096");
	snprintf(self->dir, sizeof(self->dir), "%s/ext4/soak.%d",
		 fs ? fs : "/tmp/wpstat", getpid());
	ASSERT_EQ(0, mkdir(self->dir, 0755));
	self->hot_fd = wps_scratch("ext4", "soak-hot", HOT_PAGES, self->hot,
				   sizeof(self->hot));
	ASSERT_LE(0, self->hot_fd);
	self->map = mmap(NULL, HOT_PAGES * PAGE, PROT_READ | PROT_WRITE,
			 MAP_SHARED, self->hot_fd, 0);
	ASSERT_NE(MAP_FAILED, self->map);
}

FIXTURE_TEARDOWN(soak)
{
	char cmd[512];

	wps_control("enable");
	if (self->map && self->map != MAP_FAILED)
		munmap(self->map, HOT_PAGES * PAGE);
	if (self->hot_fd >= 0)
		close(self->hot_fd);
	unlink(self->hot);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->dir);
	if (system(cmd))
		TH_LOG("could not remove %s", self->dir);
	wps_reload(NULL);
}

/* Wait until compaction has taken the marked rows (or @sec pass). */
static void settle_compaction(int sec)
{
	int i;

	for (i = 0; i < sec * 10; i++) {
		if (wps_summary("gone_marked_inodes") < 64)
			return;
		usleep(100 * 1000);
	}
}

/* True, and *logged restarted, once a minute has passed since *logged. */
static bool minute_since(uint64_t *logged)
{
	if (wpstat_now_ns() - *logged < 60ULL * 1000000000ULL)
		return false;
	*logged = wpstat_now_ns();
	return true;
}

/*
 * A line at least once a minute inside a wave too: on a KASAN+lockdep kernel
 * under TCG one wave of 3,500 files takes many minutes, and silence is what
 * the runners take for a hang.
 */
static void soak_heartbeat(uint64_t *logged, int wave, const char *what,
			   int done)
{
	if (!minute_since(logged))
		return;
	printf("# wave %d: %s %d of %d\n", wave, what, done, WAVE_FILES);
	fflush(stdout);
}

TEST_F(soak, waves)
{
	const int waves = wps_stress() ? 286 : 6;
	static struct wpstat_file_key keys[WAVE_FILES];
	struct wpstat_file_key hot_key;
	long vmalloc0 = 0, areas0 = 0;
	struct wpstat_snapshot s;
	char path[512], buf[PAGE];
	long untracked_files = 0;
	uint64_t logged = wpstat_now_ns();
	struct wps_account a;
	struct wps hot;
	int w, i, fd;

	memset(buf, 'w', sizeof(buf));
	ASSERT_EQ(0, wpstat_fd_key(self->hot_fd, &hot_key));
	for (w = 0; w < waves; w++) {
		size_t found = 0;

		/* The hot file: one store per page, msync. */
		wps_store_pages(self->map, HOT_PAGES, w + 1);
		ASSERT_EQ(0, msync(self->map, HOT_PAGES * PAGE, MS_SYNC));

		for (i = 0; i < WAVE_FILES; i++) {
			snprintf(path, sizeof(path), "%s/w%d.%d", self->dir, w, i);
			fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
			ASSERT_LE(0, fd);
			ASSERT_EQ(PAGE, pwrite(fd, buf, PAGE, 0));
			ASSERT_EQ(0, wpstat_fd_key(fd, &keys[i]));
			close(fd);
			soak_heartbeat(&logged, w, "created", i + 1);
		}
		/* Every file of the wave has a row, however full it was. */
		ASSERT_EQ(0, wpstat_snapshot_read(NULL, &s));
		for (i = 0; i < WAVE_FILES; i++)
			found += wpstat_snapshot_find_key(&s, &keys[i]) != NULL;
		wpstat_snapshot_free(&s);
		untracked_files += WAVE_FILES - found;
		/*
		 * The first waves, the last, any short one, and one a minute:
		 * a run is taken for hung after its hang limit of silence
		 * (make stress: an hour), however slow the machine.
		 */
		if (minute_since(&logged) || w < 3 || w == waves - 1 ||
		    found != WAVE_FILES) {
			logged = wpstat_now_ns();
			TH_LOG("wave %d: %zu of %d files tracked, %lld compactions, %lld reclaimed",
			       w, found, WAVE_FILES,
			       (long long)wps_summary("compactions"),
			       (long long)wps_summary("reclaimed_inodes"));
		}
		EXPECT_EQ(WAVE_FILES, found) TH_LOG("wave %d", w);

		for (i = 0; i < WAVE_FILES; i++) {
			snprintf(path, sizeof(path), "%s/w%d.%d", self->dir, w, i);
			ASSERT_EQ(0, unlink(path));
			soak_heartbeat(&logged, w, "unlinked", i + 1);
		}
		ASSERT_EQ(0, system("sync; echo 2 >/proc/sys/vm/drop_caches"));
		soak_heartbeat(&logged, w, "dropped caches after", WAVE_FILES);
		settle_compaction(30);
		if (w == 1) {	/* after the first reclaim: the steady state */
			vmalloc0 = wps_meminfo_kb("VmallocUsed");
			areas0 = wpstat_vmalloc_areas();
		}
	}
	EXPECT_EQ(0, untracked_files);
	EXPECT_LE(waves - 2, wps_summary("compactions"));
	EXPECT_LE((int64_t)(waves - 1) * WAVE_FILES,
		  wps_summary("reclaimed_inodes"));

	/* The hot file: wave 1 first writes, then one wp fault per page each. */
	ASSERT_EQ(0, wps_read_key(&hot_key, &hot));
	EXPECT_EQ(HOT_PAGES, hot.mkwrite_first);
	EXPECT_EQ(HOT_PAGES * (waves - 1), hot.mkwrite_wp);
	EXPECT_EQ(HOT_PAGES * waves, hot.mkclean_calls);
	EXPECT_EQ(HOT_PAGES * waves, hot.dirtied);
	EXPECT_TIMED_EQ(HOT_PAGES * waves, hot.bdp_fault_calls);

	/* Memory: table swaps free what they allocate. */
	EXPECT_EQ(areas0, wpstat_vmalloc_areas());
	EXPECT_GE(vmalloc0 + 1024, wps_meminfo_kb("VmallocUsed"))
		TH_LOG("VmallocUsed %ld -> %ld kB", vmalloc0,
		       wps_meminfo_kb("VmallocUsed"));

	/* Every event accounted, counter by counter. */
	ASSERT_EQ(0, wps_control("disable"));
	ASSERT_EQ(0, wps_read_account(&a));
	TH_LOG("%lld rows, %lld inodes gone", (long long)a.nrows,
	       (long long)a.gone_inodes);
	EXPECT_ACCOUNTED(&a);
	ASSERT_EQ(0, wps_control("enable"));
}

/* ---- totals during compaction ---------------------------------------------- */

/*
 * Series of a Prometheus page, by name and labels: the per-filesystem
 * totals (wpstat_fs_*, rows plus recycled rows) only ever grow.
 */
#define MAX_SERIES	512

struct series {
	int n;
	char name[MAX_SERIES][160];
	double val[MAX_SERIES];
};

/* Decreases of @path's wpstat_fs_ series against @s; @s updated. */
static int prom_decreases(const char *path, struct series *s, char *what,
			  size_t len)
{
	char line[512], *sp;
	int bad = 0, i;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		double v;

		if (strncmp(line, "wpstat_fs_", 10) || !(sp = strrchr(line, ' ')))
			continue;
		*sp = '\0';
		v = strtod(sp + 1, NULL);
		for (i = 0; i < s->n && strcmp(s->name[i], line); i++)
			;
		if (i == s->n) {
			if (s->n == MAX_SERIES)
				continue;
			snprintf(s->name[s->n++], sizeof(s->name[0]), "%.159s", line);
			s->val[i] = v;
		}
		if (v < s->val[i]) {
			if (!bad++)
				snprintf(what, len, "%.160s: %.0f after %.0f", line, v,
					 s->val[i]);
		}
		s->val[i] = v;
	}
	fclose(f);
	return bad;
}

/*
 * Compaction under a reader: files come and go in waves on a table of 512
 * rows, so compaction rebuilds the table again and again, while a child
 * reads the summary every few ms and writes `wpstat export` pages.  Every
 * summary total and every per-filesystem series of the page must only
 * grow: Prometheus takes a decrease of a counter for a restart.  (Review
 * items 2 and 3: the summary once read the new table's sums before the old
 * ones were moved in; export read inodes and gone from two tables.)
 */
FIXTURE(churn) {
	char dir[256], prom[256];
};

FIXTURE_SETUP(churn)
{
	const char *fs = getenv("WPSTAT_FS_DIR");

	ASSERT_RELOAD("max_inodes=512");
	snprintf(self->dir, sizeof(self->dir), "%s/ext4/churn.%d",
		 fs ? fs : "/tmp/wpstat", getpid());
	ASSERT_EQ(0, mkdir(self->dir, 0755));
	snprintf(self->prom, sizeof(self->prom), "/tmp/wpstat-churn.%d",
		 getpid());
	ASSERT_EQ(0, mkdir(self->prom, 0755));
}

FIXTURE_TEARDOWN(churn)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", self->dir, self->prom);
	if (system(cmd))
		TH_LOG("could not remove %s", self->dir);
	wps_reload(NULL);
}

TEST_F(churn, totals_never_decrease)
{
	const int waves = wps_stress() ? 200 : 6;
	struct sampler {
		int stop;
		long samples, pages;
		long decreases, page_decreases, errors;
		char what[256];
	} *sm;
	int64_t compactions0 = wps_summary("compactions");
	uint64_t logged = wpstat_now_ns();
	char path[512], buf[PAGE];
	int w, i, fd, status;
	pid_t kid;

	sm = mmap(NULL, sizeof(*sm), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sm);
	ASSERT_LE(0, compactions0);
	kid = fork();
	ASSERT_LE(0, kid);
	if (!kid) {
		static struct series series;
		int64_t last[WPS_N] = { 0 };
		char cmd[700], prom[600];
		const char *top = getenv("WPSTAT_TOP");

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		snprintf(cmd, sizeof(cmd),
			 "%s/build/bin/wpstat export --dir %s 2>/dev/null",
			 top ? top : "/nonexistent", self->prom);
		snprintf(prom, sizeof(prom), "%s/wpstat.prom", self->prom);
		while (!sm->stop) {
			for (i = 0; i < (int)WPS_N; i++) {
				int64_t v = wps_summary(wps_names[i]);

				if (v < 0)	/* "-": not at this level */
					continue;
				if (v < last[i]) {
					if (!sm->decreases++)
						snprintf(sm->what, sizeof(sm->what),
							 "summary %s: %lld after %lld",
							 wps_names[i], (long long)v,
							 (long long)last[i]);
				}
				if (v > last[i])
					last[i] = v;
			}
			sm->samples++;
			if (sm->samples % 8 == 0) {
				int d;

				if (system(cmd)) {
					sm->errors++;
					continue;
				}
				d = prom_decreases(prom, &series, sm->what,
						   sizeof(sm->what));
				if (d < 0)
					sm->errors++;
				else
					sm->page_decreases += d;
				sm->pages++;
			}
			usleep(2000);
		}
		_exit(0);
	}
	memset(buf, 'c', sizeof(buf));
	for (w = 0; w < waves; w++) {
		for (i = 0; i < 300; i++) {
			snprintf(path, sizeof(path), "%s/w%d.%d", self->dir, w, i);
			fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
			ASSERT_LE(0, fd);
			ASSERT_EQ(PAGE, pwrite(fd, buf, PAGE, 0));
			close(fd);
		}
		for (i = 0; i < 300; i++) {
			snprintf(path, sizeof(path), "%s/w%d.%d", self->dir, w, i);
			ASSERT_EQ(0, unlink(path));
		}
		ASSERT_EQ(0, system("sync; echo 2 >/proc/sys/vm/drop_caches"));
		settle_compaction(30);
		/* A line a minute: silence is what the runners take for a hang. */
		if (minute_since(&logged)) {
			printf("# churn: wave %d of %d, %ld summary samples\n",
			       w + 1, waves, sm->samples);
			fflush(stdout);
		}
	}
	sm->stop = 1;
	ASSERT_EQ(kid, waitpid(kid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	TH_LOG("%d waves of 300 files: %lld compactions; %ld summary samples, %ld export pages, %ld errors",
	       waves, (long long)(wps_summary("compactions") - compactions0),
	       sm->samples, sm->pages, sm->errors);
	/* Each wave marks 300 of 512 rows gone: at least one compaction. */
	EXPECT_LE(waves - 2, wps_summary("compactions") - compactions0);
	EXPECT_LT(10 * waves, sm->samples);
	EXPECT_LT(waves, sm->pages);
	EXPECT_EQ(0, sm->errors);
	EXPECT_EQ(0, sm->decreases) TH_LOG("%s", sm->what);
	EXPECT_EQ(0, sm->page_decreases) TH_LOG("%s", sm->what);
	munmap(sm, sizeof(*sm));
}

TEST_HARNESS_MAIN
