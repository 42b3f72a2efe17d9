// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_ctlfuzz: the control file against a hostile writer.
 *
 *   rel.control_fuzz  random, near-miss and garbage control writes, each
 *                     result predicted by a model of the command grammar
 *                     (fz_model(): an independent oracle, on purpose not
 *                     shared with the module's parser), first from one
 *                     writer, then from several at once next to readers
 *                     and a workload.
 *
 * The grammar's model and the generator of writes are
 * wpstat_ctlfuzz_model.c (wpstat_ctlfuzz.h); the concurrent writers,
 * reader and workload are here with the test.
 * WPSTAT_STRESS=1 (make stress) selects 100,000 writes instead of 10,000.
 * WPSTAT_FUZZ_SEED repeats a run.  Runs as root in a guest with wpstat.ko
 * loaded and $WPSTAT_FS_DIR/ext4 mounted (scripts/check/guest-check.sh).
 */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "wpstat_test.h"
#include "wpstat_ctlfuzz.h"
#include "wpstat_harness.h"

#define NPAGES		16

/* ---- rel: the control file against random writers ---------------------- */

FIXTURE(rel) {
	struct wps_rel rel;
	pid_t kids[16];
	int nkids;
};

FIXTURE_SETUP(rel)
{
	self->nkids = 0;
	WPS_REL_SETUP(&self->rel, NPAGES);
}

FIXTURE_TEARDOWN(rel)
{
	int i;

	for (i = 0; i < self->nkids; i++) {
		if (self->kids[i] <= 0)
			continue;
		kill(self->kids[i], SIGKILL);
		waitpid(self->kids[i], NULL, 0);
	}
	WPS_REL_TEARDOWN(&self->rel);
}

/* Shared with the concurrent writers, reader and workload. */
struct fz_shared {
	volatile int stop;
	long writes, bad, reader_errors, reader_reads, touches;
	int first;
	char why[512];
};

static void fz_report(struct fz_shared *sh, const char *b, size_t len,
		      int expect, int got)
{
	__atomic_add_fetch(&sh->bad, 1, __ATOMIC_SEQ_CST);
	if (!__atomic_exchange_n(&sh->first, 1, __ATOMIC_SEQ_CST))
		fz_describe(sh->why, sizeof(sh->why), b, len, expect, got);
}

struct fz_writer {
	struct fz_shared *sh;
	int fd;
	long count;
	uint64_t seed;
	struct fz_ctx ctx;
};

/* A concurrent writer: each result must be one the model allows. */
static void *fz_writer_thread(void *arg)
{
	struct fz_writer *wr = arg;
	static __thread char b[FZ_BUF + 2];
	uint64_t r = wr->seed;
	long i;

	for (i = 0; i < wr->count; i++) {
		size_t len = fz_gen(&r, b, &wr->ctx);
		struct fz_verdict v = fz_model(b, len, &wr->ctx);
		int got = fz_write(wr->fd, b, len);

		__atomic_add_fetch(&wr->sh->writes, 1, __ATOMIC_SEQ_CST);
		if (!fz_accepts(v.expect, got))
			fz_report(wr->sh, b, len, v.expect, got);
	}
	return NULL;
}

/* A process of two writer threads sharing one open control file. */
static void fz_writer_proc(struct fz_shared *sh, long count, uint64_t seed,
			   long parent)
{
	struct fz_writer wr[2];
	pthread_t th[2];
	int fd = open(WPSTAT_CONTROL_PATH, O_WRONLY | O_CLOEXEC);
	int i;

	if (fd < 0)
		_exit(2);
	for (i = 0; i < 2; i++) {
		wr[i] = (struct fz_writer){
			.sh = sh, .fd = fd, .count = count / 2 + (i ? count % 2 : 0),
			.seed = seed * 2 + i + 1,
			.ctx = { .alive = { getpid(), parent, 1 },
				 .dead = { fz_dead_pid(), 0 } },
		};
		if (pthread_create(&th[i], NULL, fz_writer_thread, &wr[i]))
			_exit(3);
	}
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	_exit(0);
}

/* Reads every module file while the writers run; counts what fails. */
static void fz_reader_proc(struct fz_shared *sh)
{
	static const char *const debugfs[] = {
		CONFIG_PATH, "/sys/kernel/debug/wpstat/probes",
		"/sys/kernel/debug/wpstat/histograms",
	};
	static char buf[65536];
	struct wpstat_snapshot s;
	struct wpstat_kvlist l;
	struct cfg c;
	size_t i;

	while (!sh->stop) {
		if (wpstat_snapshot_read(NULL, &s)) {
			sh->reader_errors++;
		} else {
			if (s.ncounters < (int)WPS_N)
				sh->reader_errors++;
			wpstat_snapshot_free(&s);
		}
		if (wpstat_kv_read(WPSTAT_SUMMARY_PATH, &l)) {
			sh->reader_errors++;
		} else {
			if (!wpstat_kv_get(&l, "tracked_inodes"))
				sh->reader_errors++;
			wpstat_kv_free(&l);
		}
		if (read_config(&c))
			sh->reader_errors++;
		for (i = 0; i < 3; i++)
			if (wps_slurp(debugfs[i], buf, sizeof(buf)) <= 0)
				sh->reader_errors++;
		sh->reader_reads++;
	}
	_exit(0);
}

/* Faults and writeback on a file while filters flip under them. */
static void fz_workload_proc(struct fz_shared *sh, int fd)
{
	while (!sh->stop) {
		if (touch_file(fd, NPAGES))
			_exit(1);
		sh->touches++;
	}
	_exit(0);
}

/* A thread that waits, so that its id is alive but not a process's. */
struct park {
	int pipe[2];
	long tid;
};

static void *park_thread(void *arg)
{
	struct park *p = arg;
	char c;

	__atomic_store_n(&p->tid, syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	if (read(p->pipe[0], &c, 1) < 0)
		return NULL;
	return NULL;
}

/*
 * 10,000 control writes (100,000 with WPSTAT_STRESS): valid commands with
 * random blanks, near misses, printable and binary garbage, partial
 * commands, NUL bytes, mutations, commands padded to 64 and 65 bytes,
 * writes over 64 bytes and over 4 KiB, and Latin-1 bytes (0xa0 is a
 * space to the kernel's ctype: "\xa0disable" once disabled counting).  First 40% from one writer with a model of the config checked
 * every 16 writes, each write's result predicted exactly; then the rest
 * from 4 processes x 2 threads at once (one fd per process) while a reader
 * reads every module file and a workload faults.  Afterwards the config
 * follows valid commands again, counting works, and the ~0.3% of writes
 * that were "reset" freed every old table (vmallocinfo).
 * The harness's bound is for a hung test only: make check's suite budget
 * is tighter, and make stress's 100,000 writes took over 600 s on 5.10
 * beside two other guests.
 */
TEST_F(rel, control_fuzz)
{
	const long total = wps_stress() ? 100000 : 10000;
	const long seq = total * 4 / 10, conc = total - seq;
	uint64_t seed = fz_seed(), r = seed;
	static char b[FZ_BUF + 2];
	struct fz_state st = { .enabled = 1, .timing = wps_timing() == 1 };
	struct fz_shared *sh;
	struct fz_ctx ctx = { 0 };
	char why[256], cmd[64];
	long i, resets = 0, bad = 0;
	int fd, areas, status, k, timing;
	struct park park = { 0 };
	pthread_t parked;
	struct cfg c;
	struct wps w;

	TH_LOG("seed %#llx (WPSTAT_FUZZ_SEED to repeat), %ld writes",
	       (unsigned long long)seed, total);
	areas = wpstat_vmalloc_areas();
	ASSERT_LT(0, areas) TH_LOG("no [wpstat] area in /proc/vmallocinfo");
	ctx.alive[0] = getpid();
	ctx.alive[1] = 1;
	ctx.alive[2] = getppid();
	ctx.dead[0] = fz_dead_pid();
	/* A live thread's id names no process: ESRCH. */
	ASSERT_EQ(0, pipe(park.pipe));
	ASSERT_EQ(0, pthread_create(&parked, NULL, park_thread, &park));
	while (!__atomic_load_n(&park.tid, __ATOMIC_SEQ_CST))
		usleep(1000);
	ctx.dead[1] = park.tid;
	ASSERT_NE(0, ctx.dead[0]);
	ASSERT_EQ(0, fz_compare(&st, why, sizeof(why))) TH_LOG("%s", why);
	/* Latin-1: 0xa0 is printable and a space to the kernel's ctype. */
	EXPECT_EQ(-EINVAL, wps_control("\xa0" "disable"));
	EXPECT_EQ(-EINVAL, wps_control("enable\xa0"));
	EXPECT_EQ(-EINVAL, wps_control("filter\xa0none"));
	ASSERT_EQ(0, fz_compare(&st, why, sizeof(why))) TH_LOG("%s", why);
	ASSERT_EQ(0, touch_file(self->rel.probe_fd, NPAGES));

	/* Sequential: every result and the resulting state predicted. */
	fd = open(WPSTAT_CONTROL_PATH, O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	for (i = 0; i < seq; i++) {
		size_t len = fz_gen(&r, b, &ctx);
		struct fz_verdict v = fz_model(b, len, &ctx);
		int got = fz_write(fd, b, len);

		if (!fz_accepts(v.expect, got)) {
			fz_describe(why, sizeof(why), b, len, v.expect, got);
			if (bad++ < 5)
				TH_LOG("write %ld: %s", i, why);
		}
		if (!got && v.expect == FZ_ANY) {
			ASSERT_EQ(0, fz_resync(&st));
		} else if (!got) {
			fz_apply(&st, &v);
		}
		if (!got && v.cmd == C_RESET) {
			resets++;
			EXPECT_EQ(0, wps_summary("mkwrite_first") +
				  wps_summary("mkclean_calls"))
				TH_LOG("reset left counts");
		}
		if (i % 16 == 15 || i == seq - 1)
			ASSERT_EQ(0, fz_compare(&st, why, sizeof(why)))
				TH_LOG("after write %ld: %s", i, why);
		if (i % 500 == 499) {	/* and sometimes a fresh open */
			close(fd);
			fd = open(WPSTAT_CONTROL_PATH, O_WRONLY | O_CLOEXEC);
			ASSERT_LE(0, fd);
		}
	}
	close(fd);
	close(park.pipe[1]);
	pthread_join(parked, NULL);
	close(park.pipe[0]);
	EXPECT_EQ(0, bad);

	/* Concurrent: 4 processes x 2 threads, a reader and a workload. */
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	for (k = 0; k < 6; k++) {
		pid_t pid = fork();

		ASSERT_LE(0, pid);
		if (pid == 0) {
			if (k < 4)
				fz_writer_proc(sh, conc / 4 + (k ? 0 : conc % 4),
					       seed + k + 1, ctx.alive[0]);
			else if (k == 4)
				fz_reader_proc(sh);
			else
				fz_workload_proc(sh, self->rel.probe_fd);
		}
		self->kids[self->nkids++] = pid;
	}
	for (k = 0; k < 4; k++) {
		ASSERT_EQ(self->kids[k], waitpid(self->kids[k], &status, 0));
		self->kids[k] = 0;
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("writer %d: status %#x", k, status);
	}
	sh->stop = 1;
	for (k = 4; k < 6; k++) {
		ASSERT_EQ(self->kids[k], waitpid(self->kids[k], &status, 0));
		self->kids[k] = 0;
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("%s: status %#x", k == 4 ? "reader" : "workload",
			       status);
	}
	self->nkids = 0;
	TH_LOG("concurrent: %ld writes, %ld reader passes, %ld workload passes",
	       sh->writes, sh->reader_reads, sh->touches);
	EXPECT_EQ(conc, sh->writes);
	EXPECT_EQ(0, sh->bad) TH_LOG("%ld unexpected results, first: %s",
				     sh->bad, sh->why);
	EXPECT_EQ(0, sh->reader_errors);
	EXPECT_LT(0, sh->reader_reads);
	munmap(sh, sizeof(*sh));

	/* Whatever state the race left is well formed ... */
	ASSERT_EQ(0, read_config(&c));
	EXPECT_TRUE(!strcmp(c.dev, "none") || strchr(c.dev, ':')) TH_LOG("%s", c.dev);
	EXPECT_TRUE(!strcmp(c.pid, "none") || atol(c.pid) > 0) TH_LOG("%s", c.pid);

	/* ... and follows valid commands again, at the suite's level. */
	timing = !strcmp(wps_suite_level(), "timing");
	st = (struct fz_state){ .enabled = 0, .major = 8, .minor = 1,
				.pid = getpid(), .timing = timing };
	snprintf(cmd, sizeof(cmd), "level %s", wps_suite_level());
	ASSERT_EQ(0, wps_control(cmd));
	ASSERT_EQ(0, wps_control("disable"));
	ASSERT_EQ(0, wps_control("filter dev 8:1"));
	snprintf(cmd, sizeof(cmd), "filter pid %d", getpid());
	ASSERT_EQ(0, wps_control(cmd));
	EXPECT_EQ(0, fz_compare(&st, why, sizeof(why))) TH_LOG("%s", why);
	ASSERT_EQ(0, wps_control("filter none"));
	ASSERT_EQ(0, wps_control("enable"));
	st = (struct fz_state){ .enabled = 1, .timing = timing };
	EXPECT_EQ(0, fz_compare(&st, why, sizeof(why))) TH_LOG("%s", why);

	/* Counting works, and resets freed every old table. */
	ASSERT_EQ(0, wps_control("reset"));
	ASSERT_EQ(0, touch_file(self->rel.probe_fd, NPAGES));
	ASSERT_EQ(0, wps_read(self->rel.probe, &w));
	EXPECT_EQ(NPAGES, w.mkwrite_first);
	EXPECT_TIMED_EQ(NPAGES, w.mkclean_ptes);
	EXPECT_EQ(areas, wpstat_vmalloc_areas()) TH_LOG("%ld sequential resets",
							resets);
}

TEST_HARNESS_MAIN
