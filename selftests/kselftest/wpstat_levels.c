// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_levels: the module's levels and its life under load: the same
 * counts at both levels, switches under load counted exactly, a level
 * written while the module loads, unloading while workloads run.
 *
 * Runs as root in a guest with wpstat.ko loaded and $WPSTAT_FS_DIR/ext4
 * and $WPSTAT_FS_DIR/tmpfs mounted (scripts/check/guest-check.sh).
 */
#include <signal.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "wpstat_test.h"
#include "wpstat_harness.h"

#define NPAGES	16

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
