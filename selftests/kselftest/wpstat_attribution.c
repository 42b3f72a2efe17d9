// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_attribution: a dirty throttle is charged to the file whose write
 * entered balance_dirty_pages(), or to bdp_unattributed, never to another
 * file: a wrong file would send its user to the wrong writer.
 *
 * balance_dirty_pages() is called only by
 * balance_dirty_pages_ratelimited_flags() (5.10: _ratelimited()), once
 * current->nr_dirtied reaches the call's ratelimit: the task's
 * nr_dirtied_pause, or min(that, 32 >> (PAGE_SHIFT - 10)) = 8 pages when
 * the wb of the call's mapping has dirty_exceeded set (mm/page-writeback.c,
 * 5.10 to 6.12).  nr_dirtied grows when the task dirties a clean folio
 * (folio_account_dirtied()), not when it writes to a dirty one.  A fresh
 * task starts with nr_dirtied 0 and nr_dirtied_pause = 128 >> (PAGE_SHIFT
 * - 10) = 32 (copy_process()).
 *
 * The scenario, one fresh task T per round:
 *   1. T pwrite()s page 0 of file B (on the slow device, whose wb has
 *      dirty_exceeded set, below): page 0 is dirty; T's nr_dirtied is at
 *      most 1, under B's ratelimit of 8: no entry.
 *   2. T stores to A_PAGES (16) clean cached pages of file A, on an idle
 *      RAM disk of its own (its wb never exceeded): 16 dirtied, each
 *      fault's ratelimited call compares 16 or 17 with 32: no entry.
 *   3. T writes page 0 of B again, still dirty: nothing is dirtied, so no
 *      writeback_dirty_folio, and the call for B compares 16 or 17 with 8:
 *      one entry, B's.  Variants: mmap (a store through a shared mapping:
 *      fault_dirty_shared_page() calls the ratelimiter whenever the fs has
 *      ->page_mkwrite), copy_file_range (ext4 has no ->copy_file_range:
 *      do_splice_direct() -> iter_file_splice_write() ->
 *      generic_perform_write()), sendfile, splice (from a pipe).  On 6.12
 *      generic_perform_write() calls the ratelimiter before write_begin
 *      (mm/filemap.c), on 5.10 and 6.1 after write_end: either way with
 *      nothing dirtied for B.
 * Expected, each round: T makes 18 ratelimited calls (B's, A's 16, B's)
 * and enters balance_dirty_pages() once, from step 3's call; bdp_throttled
 * +1 on B, +0 on A, bdp_unattributed +0; T's dirty-throttling pauses, if
 * any, in T's stall row for B, none in its row for A.  Before the fix
 * (b47e040) level counts charged that entry to the file whose folio T
 * dirtied last (A), or, if T had left its CPU since, to nobody, on 5.10,
 * 6.1 and 6.12 (docs/testing.md has the runs); level timing names the
 * call's mapping from the call itself and was right.
 *
 * B's wb gets dirty_exceeded before each round: a writer W dirties FILL
 * pages of file D on B's filesystem under the default limits (free run),
 * then the limit is lowered below that: on kernels with the bdi's
 * strict_limit (6.2 on: 6.12 here) B's own limit (strict_limit 1,
 * max_ratio 1 %: BDI_CAP_STRICTLIMIT compares the wb's dirty pages with
 * the wb's own threshold), before that the global one (vm.dirty_bytes
 * 4 MiB: without strictlimit, dirty_exceeded also needs the global dirty
 * count over the global threshold).  W writes on until
 * balance_dirty_pages() pauses it (D's bdp_pauses moves), which sets
 * wb->dirty_exceeded, and stops.
 *   strict_limit: the limit stays lowered during the round.  W is paused
 *     again and again (pos_ratio 0 while the wb's dirty pages are over its
 *     threshold: the loop does not end) and every pass sets the flag: T's
 *     call finds it set and T is paused in turn, in B's stall row.
 *   vm.dirty_bytes: the limit is put back before the round (T's A faults
 *     must not meet a 4 MiB global limit); nothing enters
 *     balance_dirty_pages() for B's wb between W's last pass, which set
 *     the flag, and T's call, so it is still set; T's entry is in the free
 *     run zone: no pause.
 * The other inputs are pinned down too: the global dirty limits are the
 * defaults during the round (ratelimit_pages, the per-CPU count that also
 * forces an entry, is then thousands of pages: writeback_set_ratelimit());
 * dirty_throttle_leaks (the nr_dirtied of exited tasks, which a caller
 * under its ratelimit takes over) are drained on every CPU before T is
 * forked, by ratelimited calls of this process that dirty nothing.
 *
 * The witness: kprobe events on the ratelimited function (its mapping) and
 * on balance_dirty_pages(), and the writeback_dirty_folio (5.10:
 * writeback_dirty_page) and balance_dirty_pages (pause > 0) tracepoints,
 * all of T, in a tracefs instance of our own.  Every round checks the
 * module against it: entries after A's calls on A, after B's on B.  A
 * round in which the kernel did something else (no entry from step 3's
 * call, another entry, B's page cleaned and dirtied again before step 3)
 * is retried, at most ROUNDS more times, and said so.
 */
#include "wpstat_test.h"	/* first: it defines _GNU_SOURCE */

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/wait.h>
#include "wpstat_harness.h"

#define A_DEV		"/dev/ram6"	/* guest-check.sh leaves it unused */
#define A_DIR		"/tmp/wpstat-attr-a"
#define A_PAGES		16
/* B's device: about 2 MB/s (as wpstat_throttle's fixture). */
#define B_DEV		"irqmode=2 completion_nsec=2000000 hw_queue_depth=1 max_sectors=8"
#define FILL_PAGES	2048	/* 8 MiB of D per round */
#define EXCEED_MAX	8192	/* pages W writes at most waiting for a pause */
#define ROUNDS		3
#define GLOBAL_LIMIT	(4 << 20)

#define INST		TRACEFS "/instances/wpstat-attribution"
#define KP_RL		"wpstat_attr/bdp_rl"
#define KP_BDP		"wpstat_attr/bdp_entry"
#define EV_PAUSE	INST "/events/writeback/balance_dirty_pages"

enum how { BY_MMAP, BY_COPY_FILE_RANGE, BY_SENDFILE, BY_SPLICE };

/* ---- the witness ------------------------------------------------------- */

/*
 * The instance's events: the kprobes, the dirty tracepoint (named by
 * trace_setup()) and, last, the pause tracepoint.
 */
static char ev_dirty[160];

static const char *const trace_events[] = {
	INST "/events/" KP_RL, INST "/events/" KP_BDP, ev_dirty, EV_PAUSE,
};
#define EV_PAUSE_IDX	3

static int trace_setup(bool *mounted)
{
	int ret;

	if (wps_tracefs_mount(mounted))
		return -ENODEV;
	rmdir(INST);		/* a leftover of a killed run */
	append_file(TRACEFS "/kprobe_events", "-:" KP_BDP "\n");
	ret = wps_kprobe_bdp_ratelimited(KP_RL);
	if (ret)
		return ret;
	ret = append_file(TRACEFS "/kprobe_events",
			  "p:" KP_BDP " balance_dirty_pages\n");
	if (ret)
		return ret;
	if (mkdir(INST, 0700))
		return -errno;
	snprintf(ev_dirty, sizeof(ev_dirty), INST "/events/writeback/%s",
		 access(INST "/events/writeback/writeback_dirty_folio", F_OK) ?
		 "writeback_dirty_page" : "writeback_dirty_folio");
	/* One order for every CPU's events: T may move while it sleeps. */
	ret = put_file(INST "/trace_clock", "global");
	if (ret)
		return ret;
	return put_file(INST "/buffer_size_kb", "1024");
}

static void trace_teardown(bool mounted)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(trace_events); i++) {
		char path[256];

		snprintf(path, sizeof(path), "%s/enable", trace_events[i]);
		put_file(path, "0");
	}
	rmdir(INST);
	append_file(TRACEFS "/kprobe_events", "-:" KP_RL "\n");
	append_file(TRACEFS "/kprobe_events", "-:" KP_BDP "\n");
	if (mounted)
		sh("umount " TRACEFS);
}

/* Every event of the instance on (1) or off (0), filtered to @pid. */
static int trace_switch(pid_t pid, int on)
{
	char path[256];
	size_t i;
	int ret;

	if (on && put_file(INST "/trace", "%s", ""))
		return -EIO;
	for (i = 0; i < ARRAY_SIZE(trace_events); i++) {
		if (on) {
			snprintf(path, sizeof(path), "%s/filter", trace_events[i]);
			ret = i == EV_PAUSE_IDX ?
			      put_file(path, "pause > 0 && common_pid == %d", pid) :
			      put_file(path, "common_pid == %d", pid);
			if (ret)
				return ret;
		}
		snprintf(path, sizeof(path), "%s/enable", trace_events[i]);
		ret = put_file(path, "%d", on);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * T's events, in order, as the kernel traced them.  T's first call is
 * B's (step 1): a call for another mapping is A's.  A dirtying is told
 * apart by the tracepoint's "bdi MAJ:MIN: ino=N" (both files may have the
 * same inode number, each on its own filesystem).
 */
struct witness {
	int calls;			/* ratelimited calls */
	int a_calls;			/* of them, A's */
	int before;			/* calls before B's first after A's */
	long orphans;			/* entries before any call */
	long after_a, after_b;		/* entries after A's calls, B's */
	long at_b;			/* entries after B's first call after A's */
	long b_between;			/* B dirtied between A's first call and it */
	long pauses;			/* pauses (> 0) traced */
	long in_buffer, written;
	/* The sequence: a or b per call, * per entry, + per dirtying of B. */
	char seq[160];
};

static void seq_add(struct witness *w, size_t *len, char c)
{
	if (*len + 1 < sizeof(w->seq))
		w->seq[(*len)++] = c;
}

static int witness_read(const char *b_dirty, struct witness *w)
{
	char line[512], b_map[24] = "", map[24];
	bool is_a = false, past = false;
	size_t len = 0;
	const char *m;
	FILE *f;

	memset(w, 0, sizeof(*w));
	w->before = -1;
	f = fopen(INST "/trace", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#') {
			sscanf(line, "# entries-in-buffer/entries-written: %ld/%ld",
			       &w->in_buffer, &w->written);
			continue;
		}
		if (strstr(line, " bdp_rl: ") && (m = strstr(line, " mapping="))) {
			sscanf(m, " mapping=%23s", map);
			if (!w->calls++)
				strcpy(b_map, map);
			is_a = strcmp(map, b_map);
			w->a_calls += is_a;
			if (!is_a && w->a_calls && w->before < 0) {
				w->before = w->calls - 1;
				past = true;
			}
			seq_add(w, &len, is_a ? 'a' : 'b');
		} else if (strstr(line, " bdp_entry: ")) {
			if (!w->calls)
				w->orphans++;
			else if (is_a)
				w->after_a++;
			else
				w->after_b++;
			if (w->calls && w->calls - 1 == w->before)
				w->at_b++;
			seq_add(w, &len, '*');
		} else if (strstr(line, b_dirty)) {
			if (w->a_calls && !past)
				w->b_between++;
			seq_add(w, &len, '+');
		} else if (strstr(line, " balance_dirty_pages: ")) {
			w->pauses++;
		}
	}
	fclose(f);
	return 0;
}

/* ---- W, the writer that puts B's wb over its limit --------------------- */

static volatile sig_atomic_t w_stop;

/* D's bdp_pauses, or -1. */
static int64_t d_pauses(const char *d)
{
	struct wps w;

	return wps_read(d, &w) ? -1 : w.bdp_pauses;
}

/*
 * W's loop: 'f' dirties FILL_PAGES more pages of D; 'x' dirties pages of
 * D until balance_dirty_pages() has paused it (a pwrite() it slept in, and
 * D's bdp_pauses moved), and replies 'p' (or 'n': EXCEED_MAX pages and no
 * pause).  W never exits on its own: its nr_dirtied would leak to the
 * next caller on its CPU.
 */
static void __attribute__((noreturn))
writer_loop(int cmd, int rep, int dfd, const char *d)
{
	static char buf[PAGE];
	struct rusage r0, r1;
	unsigned long next = 0, n;
	int64_t p0;
	char c, ok;

	memset(buf, 7, sizeof(buf));
	while (read(cmd, &c, 1) == 1) {
		ok = 'n';
		if (c == 'f') {
			for (n = 0; n < FILL_PAGES; n++)
				if (pwrite(dfd, buf, PAGE, next++ * PAGE) != (ssize_t)PAGE)
					_exit(2);
			ok = 'p';
		} else if (c == 'x') {
			p0 = d_pauses(d);
			for (n = 0; n < EXCEED_MAX && ok == 'n'; n++) {
				getrusage(RUSAGE_THREAD, &r0);
				if (pwrite(dfd, buf, PAGE, next++ * PAGE) != (ssize_t)PAGE)
					_exit(2);
				getrusage(RUSAGE_THREAD, &r1);
				if (r1.ru_nvcsw != r0.ru_nvcsw && d_pauses(d) > p0)
					ok = 'p';
			}
		}
		if (write(rep, &ok, 1) != 1)
			_exit(2);
	}
	_exit(0);
}

/* ---- the fixture ------------------------------------------------------- */

FIXTURE(attr) {
	char a[256], b[256], d[256], s[256], drain[256], bdi[128];
	char b_dirty[64];	/* B's dirtying, as the tracepoint says it */
	int afd, bfd, dfd, sfd, drainfd;
	bool strict;		/* the bdi has strict_limit: B's own limit */
	bool lowered, a_mounted, mounted_tracefs;
	long long saved_bytes, saved_ratio;
	pid_t w;
	int wcmd, wrep;
};

FIXTURE_VARIANT(attr) {
	enum how how;
};

FIXTURE_VARIANT_ADD(attr, mmap) { .how = BY_MMAP };
FIXTURE_VARIANT_ADD(attr, copy_file_range) { .how = BY_COPY_FILE_RANGE };
FIXTURE_VARIANT_ADD(attr, sendfile) { .how = BY_SENDFILE };
FIXTURE_VARIANT_ADD(attr, splice) { .how = BY_SPLICE };

static long long vm_sysctl(const char *name)
{
	char path[64], buf[64];

	snprintf(path, sizeof(path), "/proc/sys/vm/%s", name);
	return wps_slurp(path, buf, sizeof(buf)) > 0 ? atoll(buf) : -1;
}

/* B's limit below its dirty pages: 0 or -1. */
static int limit_lower(FIXTURE_DATA(attr) *self)
{
	int ret;

	self->lowered = true;
	if (self->strict) {
		ret = sh("echo 1 > %s/strict_limit && echo 1 > %s/max_ratio",
			 self->bdi, self->bdi);
	} else {
		ret = sh("sysctl -q vm.dirty_bytes=%d", GLOBAL_LIMIT);
	}
	return ret ? -1 : 0;
}

/* The limits as they were (the writeback_set_ratelimit() of a sysctl). */
static void limit_restore(FIXTURE_DATA(attr) *self)
{
	if (!self->lowered)
		return;
	self->lowered = false;
	if (self->strict)
		sh("echo 0 > %s/strict_limit; echo 100 > %s/max_ratio",
		   self->bdi, self->bdi);
	else if (self->saved_bytes)
		sh("sysctl -q vm.dirty_bytes=%lld", self->saved_bytes);
	else
		sh("sysctl -q vm.dirty_ratio=%lld", self->saved_ratio);
}

/* W's reply: 'p', 'n', or 0 if W is gone. */
static char writer_reply(FIXTURE_DATA(attr) *self)
{
	char r = 0;

	return read(self->wrep, &r, 1) == 1 ? r : 0;
}

/* A command to W and its reply. */
static char writer_do(FIXTURE_DATA(attr) *self, char c)
{
	return write(self->wcmd, &c, 1) == 1 ? writer_reply(self) : 0;
}

/*
 * W's 'x', returning once balance_dirty_pages() has paused W (D's
 * bdp_pauses moved), which may be before W's pwrite() returns: with
 * strict_limit W stays inside, paused again and again, until the wb's
 * dirty pages are under its threshold.  *@replied: W's reply was read.
 */
static char writer_exceed(FIXTURE_DATA(attr) *self, bool *replied)
{
	struct pollfd pfd = { .fd = self->wrep, .events = POLLIN };
	int64_t p0 = d_pauses(self->d);

	*replied = false;
	if (p0 < 0 || write(self->wcmd, "x", 1) != 1)
		return 0;
	for (;;) {
		if (poll(&pfd, 1, 20) > 0) {
			*replied = true;
			return writer_reply(self);
		}
		if (d_pauses(self->d) > p0)
			return 'p';
	}
}

/*
 * The nr_dirtied of exited tasks (dirty_throttle_leaks, per CPU) taken
 * over by this process on every CPU: ratelimited calls that dirty nothing
 * (page 0 of the drain file stays dirty), each taking up to its
 * ratelimit's worth, entering balance_dirty_pages() (free run) when full.
 */
static int drain_leaks(FIXTURE_DATA(attr) *self)
{
	cpu_set_t all, one;
	int cpu, i;

	if (sched_getaffinity(0, sizeof(all), &all))
		return -1;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &all))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			return -1;
		for (i = 0; i < 256; i++)
			if (pwrite(self->drainfd, "d", 1, 0) != 1)
				return -1;
	}
	return sched_setaffinity(0, sizeof(all), &all);
}

FIXTURE_SETUP(attr)
{
	int cmd[2], rep[2];
	char path[160];
	struct stat st;

	self->w = -1;
	self->afd = self->bfd = self->dfd = self->sfd = self->drainfd = -1;
	ASSERT_TRUE(wps_loaded());
	self->saved_bytes = vm_sysctl("dirty_bytes");
	self->saved_ratio = vm_sysctl("dirty_ratio");
	ASSERT_LE(0, self->saved_bytes);
	ASSERT_LE(0, self->saved_ratio);

	/* A: a RAM disk of its own, whose wb nothing has ever throttled. */
	ASSERT_EQ(0, access(A_DEV, F_OK))
		TH_LOG("no RAM disk %s (guest-check.sh's guest_ramdisks 8)", A_DEV);
	sh("umount " A_DIR " 2>/dev/null");
	ASSERT_EQ(0, sh("mkfs.ext4 -q -F " A_DEV " >/dev/null 2>&1 && mkdir -p "
			A_DIR " && mount " A_DEV " " A_DIR));
	self->a_mounted = true;
	snprintf(self->a, sizeof(self->a), A_DIR "/a");
	snprintf(self->drain, sizeof(self->drain), A_DIR "/drain");
	self->afd = open(self->a, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	self->drainfd = open(self->drain, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	ASSERT_LE(0, self->afd);
	ASSERT_LE(0, self->drainfd);
	ASSERT_EQ(0, pwrite_pages(self->afd, 0, A_PAGES, 1));
	ASSERT_EQ(0, fsync(self->afd));

	/* B, its source S, and W's file D on the slow device. */
	ASSERT_EQ(0, slowdev_up("ext4", B_DEV, 0, 0))
		TH_LOG("cannot set up ext4 on a slow null_blk");
	snprintf(self->b, sizeof(self->b), SLOW_DIR "/b");
	snprintf(self->s, sizeof(self->s), SLOW_DIR "/s");
	snprintf(self->d, sizeof(self->d), SLOW_DIR "/d");
	self->bfd = open(self->b, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	self->sfd = open(self->s, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	self->dfd = open(self->d, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	ASSERT_LE(0, self->bfd);
	ASSERT_LE(0, self->sfd);
	ASSERT_LE(0, self->dfd);
	ASSERT_EQ(0, pwrite_pages(self->bfd, 0, 1, 2));
	ASSERT_EQ(0, pwrite_pages(self->sfd, 0, 1, 3));
	ASSERT_EQ(0, fsync(self->bfd));
	ASSERT_EQ(0, fsync(self->sfd));
	ASSERT_EQ(0, fstat(self->bfd, &st));
	snprintf(self->b_dirty, sizeof(self->b_dirty), " bdi %u:%u: ino=%llu ",
		 major(st.st_dev), minor(st.st_dev),
		 (unsigned long long)st.st_ino);
	snprintf(self->bdi, sizeof(self->bdi), "/sys/class/bdi/%u:%u",
		 major(st.st_dev), minor(st.st_dev));
	ASSERT_EQ(0, access(self->bdi, F_OK)) TH_LOG("no %s", self->bdi);
	snprintf(path, sizeof(path), "%s/strict_limit", self->bdi);
	self->strict = !access(path, F_OK);

	ASSERT_EQ(0, trace_setup(&self->mounted_tracefs))
		TH_LOG("no tracefs instance with kprobe events");

	ASSERT_EQ(0, pipe2(cmd, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(rep, O_CLOEXEC));
	self->w = fork();
	ASSERT_LE(0, self->w);
	if (!self->w) {
		close(cmd[1]);
		close(rep[0]);
		writer_loop(cmd[0], rep[1], self->dfd, self->d);
	}
	close(cmd[0]);
	close(rep[1]);
	self->wcmd = cmd[1];
	self->wrep = rep[0];
	TH_LOG("B's limit: %s", self->strict ?
	       "the bdi's own (strict_limit 1, max_ratio 1)" :
	       "the global one (vm.dirty_bytes 4 MiB)");
}

FIXTURE_TEARDOWN(attr)
{
	if (self->w > 0) {
		kill(self->w, SIGKILL);
		waitpid(self->w, NULL, 0);
		close(self->wcmd);
		close(self->wrep);
	}
	limit_restore(self);
	trace_teardown(self->mounted_tracefs);
	close(self->afd);
	close(self->drainfd);
	close(self->bfd);
	close(self->sfd);
	close(self->dfd);
	if (self->a_mounted)
		sh("umount " A_DIR);
	slowdev_down();
}

/* T: steps 1 to 3 of the scenario (top of the file); exits 0, or 2. */
static void __attribute__((noreturn))
round_task(FIXTURE_DATA(attr) *self, enum how how, int go, int done)
{
	static char buf[PAGE];
	loff_t off_in = 0, off_out = 0;
	char *a, *b, c;
	int p[2];

	memset(buf, 4, sizeof(buf));
	a = map_shared(self->afd, A_PAGES);
	b = map_shared(self->bfd, 1);
	if (!a || !b || pipe(p) || read(go, &c, 1) != 1)
		_exit(2);
	/* 1 */
	if (pwrite(self->bfd, buf, PAGE, 0) != (ssize_t)PAGE)
		_exit(2);
	/* 2 */
	wps_store_pages(a, A_PAGES, 5);
	/* 3 */
	switch (how) {
	case BY_MMAP:
		*(volatile char *)b = 6;
		break;
	case BY_COPY_FILE_RANGE:
		if (copy_file_range(self->sfd, &off_in, self->bfd, &off_out,
				    PAGE, 0) != (ssize_t)PAGE)
			_exit(2);
		break;
	case BY_SENDFILE:
		if (lseek(self->bfd, 0, SEEK_SET) ||
		    sendfile(self->bfd, self->sfd, &off_in, PAGE) != (ssize_t)PAGE)
			_exit(2);
		break;
	case BY_SPLICE:
		if (write(p[1], buf, PAGE) != (ssize_t)PAGE ||
		    splice(p[0], NULL, self->bfd, &off_out, PAGE, 0) != (ssize_t)PAGE)
			_exit(2);
		break;
	}
	/* Its rows are read while it lives: then wait to be let go. */
	if (write(done, "d", 1) != 1 || read(go, &c, 1) != 1)
		_exit(2);
	_exit(0);
}

/* One round: true if the kernel did what the scenario says. */
static bool one_round(struct __test_metadata *_metadata,
		      FIXTURE_DATA(attr) *self, enum how how, int attempt)
{
	struct wps a0, a1, b0, b1, da, db;
	struct stall_row ra, rb;
	int go[2], done[2], status;
	int64_t un0, un1;
	struct witness w;
	bool pure, replied;
	pid_t t;
	char c;

	ASSERT_EQ('p', writer_do(self, 'f')) TH_LOG("W could not fill D");
	ASSERT_EQ(0, fsync(self->afd));		/* A clean again */
	ASSERT_EQ(0, drain_leaks(self));
	ASSERT_EQ(0, limit_lower(self));
	ASSERT_EQ('p', writer_exceed(self, &replied))
		TH_LOG("W was never paused: B's wb not over its limit");
	if (!self->strict) {
		/* W stops at its pwrite()'s return: nothing enters after. */
		limit_restore(self);
		if (!replied)
			ASSERT_EQ('p', writer_reply(self));
		replied = true;
	}

	ASSERT_EQ(0, pipe2(go, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(done, O_CLOEXEC));
	t = fork();
	ASSERT_LE(0, t);
	if (!t)
		round_task(self, how, go[0], done[1]);
	ASSERT_EQ(0, trace_switch(t, 1));
	ASSERT_EQ(0, wps_read(self->a, &a0));
	ASSERT_EQ(0, wps_read(self->b, &b0));
	un0 = wps_summary("bdp_unattributed");
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(1, read(done[0], &c, 1)) TH_LOG("T failed before its writes");
	ASSERT_EQ(0, trace_switch(t, 0));
	ASSERT_EQ(0, wps_read(self->a, &a1));
	ASSERT_EQ(0, wps_read(self->b, &b1));
	un1 = wps_summary("bdp_unattributed");
	ASSERT_LE(0, stall_of(self->a, t, &ra));
	ASSERT_LE(0, stall_of(self->b, t, &rb));
	ASSERT_EQ(1, write(go[1], "e", 1));
	ASSERT_EQ(t, waitpid(t, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);
	limit_restore(self);
	if (!replied)
		ASSERT_EQ('p', writer_reply(self));
	ASSERT_EQ(0, witness_read(self->b_dirty, &w));

	da = wps_delta(&a1, &a0);
	db = wps_delta(&b1, &b0);
	TH_LOG("round %d: T's calls %d (%s: a, b a call for A, B; * an entry; "
	       "+ B dirtied), entries after A's %ld, after B's %ld (after step "
	       "3's %ld), pauses %ld; bdp_throttled A %lld B %lld, "
	       "unattributed %lld; pauses in T's rows: A %lld B %lld",
	       attempt, w.calls, w.seq, w.after_a, w.after_b, w.at_b,
	       w.pauses, (long long)da.bdp_throttled,
	       (long long)db.bdp_throttled, (long long)(un1 - un0),
	       (long long)ra.pauses, (long long)rb.pauses);
	/* The buffer held every event, each entry after a call. */
	EXPECT_EQ(w.written, w.in_buffer);
	EXPECT_EQ(0, w.orphans);
	/*
	 * Whatever the kernel did, each entry is the file of the call it
	 * came from, and every pause the tracepoint reported is in that
	 * file's row.
	 */
	EXPECT_EQ(w.after_a, da.bdp_throttled);
	EXPECT_EQ(w.after_b, db.bdp_throttled);
	EXPECT_EQ(0, un1 - un0);
	if (w.after_a) {
		EXPECT_EQ(w.pauses, ra.pauses + rb.pauses);
	} else {
		EXPECT_EQ(0, ra.pauses);
		EXPECT_EQ(w.pauses, rb.pauses);
	}
	/*
	 * What the scenario predicts: one call per page written, B's then
	 * A's 16, then B's of step 3, which dirtied nothing and is the one
	 * entry.  A store may call again after it: while T sleeps in that
	 * entry, writeback may clean B's page and write-protect T's PTE, so
	 * the store faults again when it is retried (docs/testing.md, what
	 * the tests found); that fault dirties the page, and its call does
	 * not enter (nr_dirtied restarts from 0 after a pause).
	 */
	pure = w.before == 1 + A_PAGES && w.a_calls == A_PAGES &&
	       w.at_b == 1 && w.after_a + w.after_b == 1 && w.b_between == 0;
	if (!pure)
		TH_LOG("round %d: not the scenario (b+ then 16 a+ then b*): retried",
		       attempt);
	return pure;
}

TEST_F(attr, throttle_goes_to_the_file_written)
{
	int attempt, pure = 0;

	for (attempt = 1; attempt <= 2 * ROUNDS && pure < ROUNDS; attempt++) {
		pure += one_round(_metadata, self, variant->how, attempt);
		if (_metadata->exit_code != KSFT_PASS)
			return;
	}
	EXPECT_EQ(ROUNDS, pure);
}

TEST_HARNESS_MAIN
