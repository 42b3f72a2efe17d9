// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_scopes: a level switch while a thousand tasks sleep inside
 * timed scopes (write faults throttled in balance_dirty_pages()).
 * On a memory-backed null_blk device behind dm-delay (writes, and
 * where a test says reads, complete late) or limited in throughput
 * (slowdev_up(), wpstat_test_dev.c; wps-slowdev for the bats suites).
 */
#include "wpstat_test.h"	/* first: it defines _GNU_SOURCE */
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <time.h>
#include <sys/resource.h>
#include "wpstat_faults.h"
#include "wpstat_harness.h"

/* ---- a level switch while tasks sleep inside timed scopes ----------------- */

/*
 * A task asleep inside a timed scope (a write fault) when level timing's
 * return probes are unregistered never runs their return handler, and
 * nothing at level counts would clear the scope: its task context would
 * stay held until the thread exited.  The switch drops every such scope
 * under stop_machine().  SCOPE_THREADS writer threads, each storing to a
 * shared mapping of a file of its own, are throttled in
 * balance_dirty_pages() inside their write faults
 * (fault_dirty_shared_page) at level timing; the level goes to counts;
 * the writers stop storing and stay alive.
 * Expected: task_contexts_used falls back to what other tasks hold (a
 * handful), not SCOPE_THREADS (where it stays if the switch keeps the
 * scopes).
 */
#define SCOPE_THREADS	1000
#define SCOPE_SPARE	32
#define SCOPE_PAGES	64	/* per writer: 250 MiB, 64x the dirty limit */

struct scope_writers {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool go, stop, release;
	int parked;
};

/*
 * Each writer's mapping is made, and every thread created (its stack is
 * an mmap() too), before any writer stores: an mmap() takes the mm's lock
 * for writing, and queued behind a thousand faults asleep in dirty
 * throttling it stalled every later fault (5.10: hung tasks).
 */
struct scope_writer {
	struct scope_writers *all;
	int fd;
	char *map;
};

static void *scope_writer_fn(void *arg)
{
	struct scope_writer *w = arg;
	struct scope_writers *all = w->all;
	unsigned int i = 0;

	pthread_mutex_lock(&all->lock);
	while (!all->go)
		pthread_cond_wait(&all->cond, &all->lock);
	pthread_mutex_unlock(&all->lock);
	while (!__atomic_load_n(&all->stop, __ATOMIC_RELAXED))
		w->map[(i++ % SCOPE_PAGES) * PAGE] = 5;
	pthread_mutex_lock(&all->lock);
	all->parked++;
	pthread_cond_broadcast(&all->cond);
	while (!all->release)
		pthread_cond_wait(&all->cond, &all->lock);
	pthread_mutex_unlock(&all->lock);
	return NULL;
}

FIXTURE(scopes) {
	struct dirty_limits saved;
	bool switched;
};

FIXTURE_SETUP(scopes)
{
	/*
	 * A thousand sleepers inside their faults: as many return-probe
	 * instances (the default, 256, follows 256 at once; the rest would
	 * be counted in missed_fault, untimed and holding no scope).
	 */
	ASSERT_RELOAD("krp_instances=1024");
	ASSERT_LE(0, wps_timing());
	self->switched = false;
	ASSERT_EQ(0, slowdev_up("ext4", SLOWDEV_2MBPS, 0, 0));
	ASSERT_EQ(0, dirty_limits_save(&self->saved));
	ASSERT_EQ(0, sh("sysctl -q vm.dirty_bytes=%d vm.dirty_background_bytes=%d",
			4 << 20, 1 << 20));
	if (!wps_timing()) {
		ASSERT_EQ(0, wps_control("level timing"));
		self->switched = true;
	}
}

FIXTURE_TEARDOWN(scopes)
{
	dirty_limits_restore(&self->saved);
	slowdev_down();
	wps_reload(NULL);
}

TEST_F(scopes, level_switch_releases_sleepers_contexts)
{
	static struct scope_writer w[SCOPE_THREADS];
	static pthread_t tid[SCOPE_THREADS];
	struct scope_writers all = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
	};
	int64_t used_throttled, used_after, throttled0;
	pthread_attr_t attr;
	char path[300];
	int i, started = 0, tries;

	throttled0 = wps_summary("bdp_throttled");
	ASSERT_EQ(0, pthread_attr_init(&attr));
	ASSERT_EQ(0, pthread_attr_setstacksize(&attr, 64 * 1024));
	for (i = 0; i < SCOPE_THREADS; i++) {
		snprintf(path, sizeof(path), SLOW_DIR "/w%d", i);
		w[i].all = &all;
		w[i].fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		ASSERT_LE(0, w[i].fd);
		ASSERT_EQ(0, ftruncate(w[i].fd, SCOPE_PAGES * PAGE));
		w[i].map = mmap(NULL, SCOPE_PAGES * PAGE, PROT_READ | PROT_WRITE,
				MAP_SHARED, w[i].fd, 0);
		ASSERT_NE(MAP_FAILED, w[i].map);
	}
	for (i = 0; i < SCOPE_THREADS; i++) {
		if (pthread_create(&tid[i], &attr, scope_writer_fn, &w[i]))
			break;
		started++;
	}
	pthread_mutex_lock(&all.lock);
	all.go = true;
	pthread_cond_broadcast(&all.cond);
	pthread_mutex_unlock(&all.lock);
	ASSERT_LE(SCOPE_THREADS / 2, started);
	/* Until most of them sleep in dirty throttling, inside their scopes. */
	for (tries = 0; tries < 60; tries++) {
		sleep(1);
		used_throttled = wps_summary("task_contexts_used");
		if (used_throttled >= started / 2 &&
		    wps_summary("bdp_throttled") - throttled0 >= started)
			break;
	}
	TH_LOG("%d writers: %lld contexts used at level timing, %lld throttles",
	       started, (long long)used_throttled,
	       (long long)(wps_summary("bdp_throttled") - throttled0));
	EXPECT_LE(started / 2, used_throttled);
	ASSERT_EQ(0, wps_control("level counts"));
	/* Stop storing; every writer leaves its fault and parks, alive. */
	__atomic_store_n(&all.stop, true, __ATOMIC_RELAXED);
	pthread_mutex_lock(&all.lock);
	while (all.parked < started)
		pthread_cond_wait(&all.cond, &all.lock);
	pthread_mutex_unlock(&all.lock);
	sleep(1);
	used_after = wps_summary("task_contexts_used");
	TH_LOG("all %d parked at level counts: %lld contexts used",
	       started, (long long)used_after);
	EXPECT_GE(SCOPE_SPARE, used_after)
		TH_LOG("the writers' scopes were left holding their contexts");
	pthread_mutex_lock(&all.lock);
	all.release = true;
	pthread_cond_broadcast(&all.cond);
	pthread_mutex_unlock(&all.lock);
	for (i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	for (i = 0; i < SCOPE_THREADS; i++) {
		munmap(w[i].map, SCOPE_PAGES * PAGE);
		close(w[i].fd);
	}
	if (!self->switched)
		ASSERT_EQ(0, wps_control("level timing"));
}

TEST_HARNESS_MAIN
