// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_broker: the module on a machine of many CPUs, left on under a
 * broker's rhythm (make check-scale boots it with 2, 32 and 64 vCPUs:
 * scripts/check/check-scale.sh).
 *
 *   memory.per_level  the module's memory at level counts and at level
 *              timing (ext4, xfs and jbd2 loaded: 2 and 8 return probes),
 *              measured from the kernel's own books: VmallocUsed and
 *              Percpu in /proc/meminfo, and /proc/vmallocinfo's areas of
 *              the module and of the return probes' pools (objpool), each
 *              against the same unloaded baseline.  Prints one
 *              "# scale-memory:" line per level, which check-scale.sh
 *              compares across CPU counts (at most 64 KiB per added CPU).
 *              Here: the module's own account (summary module_bytes,
 *              module_cpu_bytes) must be what the kernel measured, within
 *              the module's text and 10 %, and under 64 KiB a CPU.
 *   soak.rotation  default table sizes; 16 writer threads (more with
 *              WPSTAT_BROKER_THREADS) each rotate segment files: create,
 *              map, store a page each (first-write faults), msync, store
 *              again (write-protect faults), msync, unmap, and delete the
 *              oldest once it keeps 64.  For WPSTAT_BROKER_SECS (1800),
 *              and on until more files were made than max_inodes and
 *              max_stalls hold (WPSTAT_BROKER_MIN_FILES: fewer, to try
 *              it).  Each minute, with the writers running:
 *              every finished live file's row exact (first-write faults
 *              and cleans one per folio, write-protect faults one per
 *              page: wps_folios()), no untracked event, the stall rows
 *              adding up to the inode counters; at the end, memory no
 *              larger than after the first minute (VmallocUsed, 2 MiB of
 *              slack for a compaction's second table in flight) and the
 *              compaction workers under 1 % of one CPU.
 *
 * Runs as root in a guest with wpstat.ko loaded and $WPSTAT_FS_DIR/ext4
 * and xfs mounted (scripts/check/guest-check.sh).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/sysinfo.h>

#include "wpstat_test.h"
#include "wpstat_harness.h"

/* ---- memory ---------------------------------------------------------------- */

struct mem {
	long vmalloc_kb, percpu_kb;	/* /proc/meminfo */
	long long own_bytes;		/* vmallocinfo: areas of [wpstat] */
	long long pool_bytes;		/* vmallocinfo: kretprobe pools' areas */
};

static int mem_read(struct mem *m)
{
	FILE *f = fopen("/proc/vmallocinfo", "re");
	char line[1024];

	if (!f)
		return -1;
	memset(m, 0, sizeof(*m));
	while (fgets(line, sizeof(line), f)) {
		long long size;

		if (sscanf(line, "%*s %lld", &size) != 1)
			continue;
		if (strstr(line, "[wpstat]"))
			m->own_bytes += size;
		else if (strstr(line, "objpool") || strstr(line, "rethook"))
			m->pool_bytes += size;
	}
	fclose(f);
	m->vmalloc_kb = wps_meminfo_kb("VmallocUsed");
	m->percpu_kb = wps_meminfo_kb("Percpu");
	return m->vmalloc_kb < 0 || m->percpu_kb < 0 ? -1 : 0;
}

static long module_core_bytes(void)
{
	char buf[64];

	if (wps_slurp("/sys/module/wpstat/coresize", buf, sizeof(buf)) <= 0)
		return -1;
	return strtol(buf, NULL, 10);
}

FIXTURE(memory) {
	int unused;
};

FIXTURE_SETUP(memory)
{
	/* The probes of the journals and xfs attach only with them loaded. */
	ASSERT_EQ(0, system("modprobe ext4 && modprobe xfs && modprobe jbd2"));
}

FIXTURE_TEARDOWN(memory)
{
	wps_reload(NULL);
}

/* Load at @level and report what it took, against @base (unloaded). */
static void measure_level(struct __test_metadata *_metadata,
			  const struct mem *base, const char *level)
{
	long long bytes, cpu_bytes, cpus, krps, measured, core;
	char params[64];
	struct mem m;

	snprintf(params, sizeof(params), "level=%s", level);
	ASSERT_RELOAD(params);
	/* Let the module notifier attach the modules' probes. */
	usleep(200 * 1000);
	ASSERT_EQ(0, mem_read(&m));
	bytes = wps_summary("module_bytes");
	cpu_bytes = wps_summary("module_cpu_bytes");
	cpus = wps_summary("possible_cpus");
	krps = wps_summary("kretprobes");
	core = module_core_bytes();
	measured = (m.vmalloc_kb - base->vmalloc_kb +
		    m.percpu_kb - base->percpu_kb) * 1024LL;
	printf("# scale-memory: level=%s cpus=%lld nprocs=%d vmalloc_kb=%ld percpu_kb=%ld own_vmalloc=%lld pool_vmalloc=%lld module_bytes=%lld module_cpu_bytes=%lld kretprobes=%lld core=%lld\n",
	       level, cpus, get_nprocs(), m.vmalloc_kb - base->vmalloc_kb,
	       m.percpu_kb - base->percpu_kb, m.own_bytes - base->own_bytes,
	       m.pool_bytes - base->pool_bytes, bytes, cpu_bytes, krps, core);
	fflush(stdout);
	ASSERT_LT(0, bytes);
	ASSERT_LT(0, cpus);
	/* The per-CPU part: linear, and at most 64 KiB a CPU. */
	EXPECT_GE(64 * 1024, cpu_bytes);
	/*
	 * The account against the kernel's books: what vmalloc and the
	 * per-CPU allocator hold for it now (its text is vmalloc'd too;
	 * slab-sized parts are in neither) is its account, within 10 %.
	 */
	EXPECT_LE(measured, bytes + core + bytes / 10)
		TH_LOG("measured %lld bytes, the module says %lld (+%lld of text)",
		       measured, bytes, core);
	EXPECT_GE(measured, bytes - bytes / 10)
		TH_LOG("measured %lld bytes, the module says %lld",
		       measured, bytes);
}

TEST_F(memory, per_level)
{
	struct mem base;

	ASSERT_EQ(0, system("rmmod wpstat 2>/dev/null; true"));
	ASSERT_FALSE(wps_loaded());
	/* Freed vmalloc areas are purged lazily: let the count settle. */
	usleep(200 * 1000);
	ASSERT_EQ(0, mem_read(&base));
	measure_level(_metadata, &base, "counts");
	ASSERT_EQ(0, system("rmmod wpstat"));
	usleep(200 * 1000);
	ASSERT_EQ(0, mem_read(&base));
	measure_level(_metadata, &base, "timing");
	/* Whose areas the pools are, for the reader of this log. */
	if (system("grep -E 'objpool|rethook' /proc/vmallocinfo | sed 's/^/# pool area: /' | head -n 4"))
		TH_LOG("no return-probe pool in /proc/vmallocinfo");
}

/* ---- soak: a broker's segment rotation ------------------------------------- */

#define SEG_PAGES	4
#define SEG_KEEP	64	/* live segments per writer */

struct seg {
	struct wpstat_file_key key;
	long folios_first, folios_clean;	/* wps_folios() at each pass */
};

struct writer {
	pthread_t th;
	int id;
	const char *dir;
	volatile int *stop;
	pthread_mutex_t lock;		/* segs, head, made */
	struct seg segs[SEG_KEEP];	/* a ring: live segments, oldest at head */
	int head, nlive;
	long made;
	int err;
};

static void seg_path(char *path, size_t len, const struct writer *w, long n)
{
	snprintf(path, len, "%s/w%d.%ld", w->dir, w->id, n);
}

/* One segment, whole: create, two passes of stores each synced, close. */
static int seg_write(struct writer *w, long n, struct seg *s)
{
	char path[512], *map;
	int fd;

	seg_path(path, sizeof(path), w, n);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, SEG_PAGES * PAGE) || wpstat_fd_key(fd, &s->key)) {
		close(fd);
		return -EIO;
	}
	map = map_shared(fd, SEG_PAGES);
	close(fd);
	if (!map)
		return -ENOMEM;
	wps_store_pages(map, SEG_PAGES, 1);
	s->folios_first = wps_folios(map, SEG_PAGES);
	if (msync(map, SEG_PAGES * PAGE, MS_SYNC))
		goto fail;
	s->folios_clean = wps_folios(map, SEG_PAGES);
	wps_store_pages(map, SEG_PAGES, 2);
	if (msync(map, SEG_PAGES * PAGE, MS_SYNC))
		goto fail;
	munmap(map, SEG_PAGES * PAGE);
	return s->folios_first > 0 && s->folios_clean > 0 ? 0 : -ENODATA;
fail:
	munmap(map, SEG_PAGES * PAGE);
	return -errno;
}

static void *writer_run(void *arg)
{
	struct writer *w = arg;
	char path[512];
	struct seg s;

	while (!*w->stop && !w->err) {
		memset(&s, 0, sizeof(s));
		w->err = seg_write(w, w->made, &s);
		if (w->err)
			break;
		pthread_mutex_lock(&w->lock);
		if (w->nlive == SEG_KEEP) {	/* delete the oldest */
			seg_path(path, sizeof(path), w, w->made - SEG_KEEP);
			if (unlink(path))
				w->err = -errno;
			w->head = (w->head + 1) % SEG_KEEP;
			w->nlive--;
		}
		w->segs[(w->head + w->nlive) % SEG_KEEP] = s;
		w->nlive++;
		w->made++;
		pthread_mutex_unlock(&w->lock);
	}
	return NULL;
}

/*
 * Every live segment's row, exact; the number checked.  The writers are
 * held (each finishes its segment, then waits for its lock) while the
 * table is read: no segment is deleted, its row perhaps given to a new
 * file, between the read and the check.
 */
static int check_segments(struct __test_metadata *_metadata,
			  struct writer *ws, int n)
{
	const int pages = SEG_PAGES;
	struct wpstat_snapshot snap;
	int i, k, checked = 0, bad = 0, ret;

	for (i = 0; i < n; i++)
		pthread_mutex_lock(&ws[i].lock);
	ret = wpstat_snapshot_read(NULL, &snap);
	for (i = 0; !ret && i < n; i++) {
		for (k = 0; k < ws[i].nlive; k++) {
			const struct seg *s = &ws[i].segs[(ws[i].head + k) % SEG_KEEP];
			const struct wpstat_row *r;
			struct wps v;

			r = wpstat_snapshot_find_key(&snap, &s->key);
			checked++;
			if (!r || wps_from_row(&snap, r, &v)) {
				if (bad++ < 5)
					TH_LOG("writer %d: segment %ld has no row",
					       i, ws[i].made - ws[i].nlive + k);
				continue;
			}
			if (v.mkwrite_first != s->folios_first ||
			    v.mkwrite_wp != pages ||
			    v.mkclean_calls != s->folios_first + s->folios_clean) {
				if (bad++ < 5)
					TH_LOG("writer %d: segment %ld: first %lld (want %ld) wp %lld (want %d) mkclean %lld (want %ld)",
					       i, ws[i].made - ws[i].nlive + k,
					       (long long)v.mkwrite_first, s->folios_first,
					       (long long)v.mkwrite_wp, pages,
					       (long long)v.mkclean_calls,
					       s->folios_first + s->folios_clean);
			}
		}
	}
	if (!ret)
		wpstat_snapshot_free(&snap);
	for (i = 0; i < n; i++)
		pthread_mutex_unlock(&ws[i].lock);
	EXPECT_EQ(0, ret);
	EXPECT_EQ(0, bad) TH_LOG("%d of %d live segments wrong", bad, checked);
	return checked;
}

/*
 * The stall rows' faults, all processes, against the inode counters:
 * equal once the writers stopped (@exact); while they run, at least the
 * totals read before them.
 */
static void check_stall_sums(struct __test_metadata *_metadata, bool exact)
{
	static struct stall_row rows[1 << 16];
	int64_t faults = 0, want;
	int n, i;

	want = wps_summary("mkwrite_first") + wps_summary("mkwrite_wp");
	n = read_stalls(NULL, rows, 1 << 16);
	ASSERT_LE(0, n);
	for (i = 0; i < n; i++)
		faults += rows[i].fault_first + rows[i].fault_wp;
	if (exact) {
		EXPECT_EQ(want, faults);
	} else {
		EXPECT_LE(want, faults);
	}
	EXPECT_EQ(0, wps_summary("stall_overflow_events"));
}

/* The smallest VmallocUsed of five readings: one may meet a compaction. */
static long vmalloc_floor_kb(void)
{
	long min = -1, v;
	int i;

	for (i = 0; i < 5; i++) {
		v = wps_meminfo_kb("VmallocUsed");
		if (min < 0 || v < min)
			min = v;
		usleep(200 * 1000);
	}
	return min;
}

FIXTURE(soak) {
	char dir[256];
};

FIXTURE_SETUP(soak)
{
	const char *fs = getenv("WPSTAT_FS_DIR");

	ASSERT_RELOAD(NULL);
	snprintf(self->dir, sizeof(self->dir), "%s/ext4/broker.%d",
		 fs ? fs : "/tmp/wpstat", getpid());
	ASSERT_EQ(0, mkdir(self->dir, 0755));
}

FIXTURE_TEARDOWN(soak)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->dir);
	if (system(cmd))
		TH_LOG("could not remove %s", self->dir);
}

static long env_long(const char *name, long dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtol(v, NULL, 10) : dflt;
}

TEST_F(soak, rotation)
{
	const long secs = env_long("WPSTAT_BROKER_SECS", 1800);
	const int nw = env_long("WPSTAT_BROKER_THREADS", 16);
	const int64_t max_inodes = wps_summary("max_inodes");
	const int64_t max_stalls = wps_summary("max_stalls");
	/* A short run to try the test: WPSTAT_BROKER_MIN_FILES=1000. */
	const int64_t min_files = env_long("WPSTAT_BROKER_MIN_FILES",
					   (max_inodes > max_stalls ?
					    max_inodes : max_stalls) + 1);
	int64_t cpu0, cpu1, runs0, runs, made = 0;
	uint64_t t0 = wpstat_now_ns(), t1;
	long vm_first = -1, vm_end;
	volatile int stop = 0;
	struct writer *ws;
	int i, minute = 0;

	ws = calloc(nw, sizeof(*ws));
	ASSERT_NE(NULL, ws);
	cpu0 = wps_summary("compaction_cpu_ns") +
	       wps_summary("stall_compaction_cpu_ns");
	runs0 = wps_summary("compaction_runs") +
		wps_summary("stall_compaction_runs");
	for (i = 0; i < nw; i++) {
		ws[i].id = i;
		ws[i].dir = self->dir;
		ws[i].stop = &stop;
		pthread_mutex_init(&ws[i].lock, NULL);
		ASSERT_EQ(0, pthread_create(&ws[i].th, NULL, writer_run, &ws[i]));
	}
	for (;;) {
		sleep(60);
		minute++;
		for (made = 0, i = 0; i < nw; i++) {
			ASSERT_EQ(0, ws[i].err) TH_LOG("writer %d", i);
			made += ws[i].made;
		}
		t1 = wpstat_now_ns();
		printf("# minute %d: %lld files made, %lld rows, %lld gone, %lld taken over, %lld compactions, %lld stall rows, %lld untracked events\n",
		       minute, (long long)made,
		       (long long)wps_summary("tracked_inodes"),
		       (long long)wps_summary("gone_marked_inodes"),
		       (long long)wps_summary("recycled_inodes"),
		       (long long)wps_summary("compaction_runs"),
		       (long long)wps_summary("stall_rows"),
		       (long long)wps_summary("untracked_events"));
		fflush(stdout);
		check_segments(_metadata, ws, nw);
		check_stall_sums(_metadata, false);
		EXPECT_EQ(0, wps_summary("untracked_events"));
		if (minute == 1)
			vm_first = vmalloc_floor_kb();
		if (t1 - t0 >= secs * 1000000000ULL && made >= min_files)
			break;
	}
	stop = 1;
	for (i = 0; i < nw; i++)
		pthread_join(ws[i].th, NULL);
	t1 = wpstat_now_ns();
	cpu1 = wps_summary("compaction_cpu_ns") +
	       wps_summary("stall_compaction_cpu_ns");
	runs = wps_summary("compaction_runs") +
	       wps_summary("stall_compaction_runs") - runs0;
	vm_end = vmalloc_floor_kb();
	TH_LOG("%lld files in %.0f s by %d writers; compaction: %lld runs, CPU %.1f ms (%.4f %% of one CPU; inode table %.1f ms); VmallocUsed %ld -> %ld kB",
	       (long long)made, (t1 - t0) / 1e9, nw, (long long)runs,
	       (cpu1 - cpu0) / 1e6, 100.0 * (cpu1 - cpu0) / (double)(t1 - t0),
	       wps_summary("compaction_cpu_ns") / 1e6, vm_first, vm_end);
	EXPECT_LE(min_files, made);
	EXPECT_LE(1, check_segments(_metadata, ws, nw));
	check_stall_sums(_metadata, true);
	EXPECT_EQ(0, wps_summary("untracked_events"));
	EXPECT_GE(vm_first + 2048, vm_end);
	/*
	 * Each table's pace keeps it under 0.5 % (a run of d, then 199 d
	 * with none), so the two under 1 %; a last run's wait may fall
	 * after the end: one run's worth of slack.
	 */
	EXPECT_LT(cpu1 - cpu0, (int64_t)(t1 - t0) / 100 +
				(runs ? (cpu1 - cpu0) / runs : 0));
	free(ws);
}

TEST_HARNESS_MAIN
