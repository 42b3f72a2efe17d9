// SPDX-License-Identifier: GPL-2.0
/*
 * workload.c - what wpload does to the file: open, resize and map it, warm
 * it up, give each worker its range of chunks, and run one pass of ops
 * (memcpy, pwrite or pread, each timed) with the syncs asked for.  A SIGBUS
 * from the mapping becomes an error of the run, not a crash.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fmt.h"
#include "wpload.h"

/* 5.14's; bookworm's glibc headers have it, older ones may not. */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23
#endif

static const int advice_values[ADVICE_NR] = {
	[ADVICE_RANDOM]		= MADV_RANDOM,
	[ADVICE_SEQUENTIAL]	= MADV_SEQUENTIAL,
	[ADVICE_WILLNEED]	= MADV_WILLNEED,
	[ADVICE_NOHUGEPAGE]	= MADV_NOHUGEPAGE,
	[ADVICE_POPULATE_WRITE]	= MADV_POPULATE_WRITE,
};

/*
 * SIGBUS recovery.  The handler can only reach per-thread state through TLS:
 * a thread points wpload_sigbus_env at its sigjmp_buf while it touches the
 * mapping, and the handler jumps back there with the faulting address.
 */
static __thread sigjmp_buf *volatile wpload_sigbus_env;
static __thread void *volatile wpload_sigbus_addr;

/* ---- errors ------------------------------------------------------------ */

/* Record the first failure of the run; returns -1 for the caller to pass on. */
int run_fail(struct wpload_run *run, int exit_code, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&run->error_lock);
	if (!run->error_exit) {
		run->error_exit = exit_code;
		va_start(ap, fmt);
		vsnprintf(run->error_msg, sizeof(run->error_msg), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&run->error_lock);
	return -1;
}

bool run_failed(struct wpload_run *run)
{
	bool failed;

	pthread_mutex_lock(&run->error_lock);
	failed = run->error_exit != 0;
	pthread_mutex_unlock(&run->error_lock);
	return failed;
}

/* ---- SIGBUS ------------------------------------------------------------ */

void sigbus_handler(int sig, siginfo_t *si, void *ucontext)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	(void)ucontext;
	if (!wpload_sigbus_env) {
		/* Not ours: let the faulting access re-fault and kill us. */
		sigaction(sig, &dfl, NULL);
		return;
	}
	wpload_sigbus_addr = si->si_addr;
	siglongjmp(*wpload_sigbus_env, 1);
}

static void report_sigbus(struct wpload_run *run, void *addr)
{
	const char *p = addr;
	uint64_t off;
	struct stat st;

	if (!run->map || p < run->map || p >= run->map + run->opt->size) {
		run_fail(run, WPLOAD_EXIT_SIGBUS,
			 "SIGBUS at address %p, outside the mapping", addr);
		return;
	}
	off = p - run->map;
	/* A page inside i_size can SIGBUS too, when the fs cannot back it. */
	if (!fstat(run->fd, &st) && (uint64_t)st.st_size > off)
		run_fail(run, WPLOAD_EXIT_SIGBUS,
			 "SIGBUS at offset %" PRIu64 ": the file system could not provide the page (out of space or I/O error?)",
			 off);
	else
		run_fail(run, WPLOAD_EXIT_SIGBUS,
			 "SIGBUS at offset %" PRIu64 ": the file is shorter than the mapping (truncated?)",
			 off);
}

/*
 * Run fn with SIGBUS turned into an error return.  sigsetjmp() saves the
 * signal mask (a syscall), so it is set up once per pass, never per op.
 */
static int run_guarded(struct wpload_run *run, int (*fn)(void *), void *arg)
{
	sigjmp_buf env;
	int ret;

	if (sigsetjmp(env, 1)) {
		wpload_sigbus_env = NULL;
		report_sigbus(run, wpload_sigbus_addr);
		return -1;
	}
	/* The fences keep the compiler from moving accesses out of the window. */
	wpload_sigbus_env = &env;
	atomic_signal_fence(memory_order_seq_cst);
	ret = fn(arg);
	atomic_signal_fence(memory_order_seq_cst);
	wpload_sigbus_env = NULL;
	return ret;
}

/* ---- setup ------------------------------------------------------------- */

static int mlock_mapping(struct wpload_run *run, const char *why)
{
	if (!mlock(run->map, run->opt->size))
		return 0;
	if (errno == EPERM || errno == ENOMEM)
		return run_fail(run, WPLOAD_EXIT_FAIL,
				"mlock of %" PRIu64 " bytes (%s) failed: %s; raise RLIMIT_MEMLOCK (ulimit -l) or run with CAP_IPC_LOCK",
				run->opt->size, why, strerror(errno));
	return run_fail(run, WPLOAD_EXIT_FAIL, "mlock (%s): %s", why,
			strerror(errno));
}

/* Load one byte of every page overlapping [start, end) of the mapping. */
static void touch_pages(const char *map, uint64_t start, uint64_t end,
			size_t page_size)
{
	uint64_t off;

	for (off = start; off < end; off = (off / page_size + 1) * page_size)
		(void)*(const volatile char *)(map + off);
}

static int warmup_touch(void *arg)
{
	struct wpload_run *run = arg;
	uint64_t off;

	if (run->opt->warmup == WARMUP_READ) {
		touch_pages(run->map, 0, run->opt->size, run->page_size);
		return 0;
	}
	for (off = 0; off < run->opt->size; off += run->page_size)
		*(volatile char *)(run->map + off) = 0;
	return 0;
}

static int open_file(struct wpload_run *run)
{
	const struct wpload_opts *opt = run->opt;
	int flags = O_RDWR | O_CLOEXEC | (opt->no_create ? 0 : O_CREAT);
	struct stat st;
	int err;

	run->fd = open(opt->path, flags, 0644);
	if (run->fd < 0)
		return run_fail(run, WPLOAD_EXIT_FAIL, "cannot open %s: %s",
				opt->path, strerror(errno));
	if (fstat(run->fd, &st))
		return run_fail(run, WPLOAD_EXIT_FAIL, "cannot stat %s: %s",
				opt->path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return run_fail(run, WPLOAD_EXIT_FAIL,
				"%s is not a regular file", opt->path);
	/* The fd, not the path, names the file: it may be renamed under us. */
	err = wpstat_fd_key(run->fd, &run->key);
	if (err)
		return run_fail(run, WPLOAD_EXIT_FAIL, "cannot stat %s: %s",
				opt->path, strerror(-err));
	if ((uint64_t)st.st_size != opt->size && ftruncate(run->fd, opt->size))
		return run_fail(run, WPLOAD_EXIT_FAIL,
				"cannot resize %s to %" PRIu64 " bytes: %s",
				opt->path, opt->size, strerror(errno));
	if (opt->cold) {
		if (fsync(run->fd))
			return run_fail(run, WPLOAD_EXIT_FAIL, "fsync %s: %s",
					opt->path, strerror(errno));
		err = posix_fadvise(run->fd, 0, 0, POSIX_FADV_DONTNEED);
		if (err)
			return run_fail(run, WPLOAD_EXIT_FAIL,
					"posix_fadvise(POSIX_FADV_DONTNEED) %s: %s",
					opt->path, strerror(err));
	}
	return 0;
}

static int map_file(struct wpload_run *run)
{
	const struct wpload_opts *opt = run->opt;
	int prot = PROT_READ, flags, a;

	if (mode_stores(opt->mode))
		prot |= PROT_WRITE;
	flags = opt->private_map ? MAP_PRIVATE : MAP_SHARED;
	if (opt->populate)
		flags |= MAP_POPULATE;
	run->map = mmap(NULL, opt->size, prot, flags, run->fd, 0);
	if (run->map == MAP_FAILED) {
		run->map = NULL;
		return run_fail(run, WPLOAD_EXIT_FAIL,
				"mmap of %s (%" PRIu64 " bytes): %s", opt->path,
				opt->size, strerror(errno));
	}
	for (a = 1; a < ADVICE_NR; a++) {
		if (!(opt->advice & (1U << a)) ||
		    !madvise(run->map, opt->size, advice_values[a]))
			continue;
		return run_fail(run, WPLOAD_EXIT_FAIL,
				"madvise(%s) of the mapping: %s%s",
				advice_names[a], strerror(errno),
				a == ADVICE_POPULATE_WRITE && errno == EINVAL ?
				" (MADV_POPULATE_WRITE needs Linux 5.14)" : "");
	}
	if (opt->mlock && mlock_mapping(run, "--mlock"))
		return -1;
	if (opt->warmup) {
		if (run_guarded(run, warmup_touch, run) ||
		    mlock_mapping(run, "--warmup"))
			return -1;
		if (madvise(run->map, opt->size, MADV_WILLNEED))
			return run_fail(run, WPLOAD_EXIT_FAIL,
					"madvise(willneed) of the mapping (--warmup): %s",
					strerror(errno));
	}
	return 0;
}

/* Memory is touched here so that first-touch faults stay out of pass 1. */
static int setup_workers(struct wpload_run *run)
{
	const struct wpload_opts *opt = run->opt;
	uint64_t base = run->nchunks / opt->threads;
	uint64_t rem = run->nchunks % opt->threads;
	uint64_t first = 0;
	unsigned int i;
	int err;

	run->lat = malloc(run->nchunks * sizeof(*run->lat));
	if (!run->lat)
		return run_fail(run, WPLOAD_EXIT_FAIL,
				"cannot allocate %" PRIu64 " latency samples: %s",
				run->nchunks, strerror(errno));
	memset(run->lat, 0, run->nchunks * sizeof(*run->lat));

	run->workers = calloc(opt->threads, sizeof(*run->workers));
	if (!run->workers)
		return run_fail(run, WPLOAD_EXIT_FAIL,
				"cannot allocate thread state: %s",
				strerror(errno));
	for (i = 0; i < opt->threads; i++) {
		struct wpload_worker *w = &run->workers[i];

		w->run = run;
		w->id = i;
		/* Contiguous ranges of whole chunks; the first rem get one more. */
		w->nr_chunks = base + (i < rem);
		w->lat = run->lat + first;
		w->start = first * opt->chunk;
		first += w->nr_chunks;
		w->end = min_u64(first * opt->chunk, opt->size);

		err = posix_memalign((void **)&w->buf, run->page_size,
				     opt->chunk);
		if (err) {
			w->buf = NULL;
			return run_fail(run, WPLOAD_EXIT_FAIL,
					"cannot allocate a %" PRIu64 "-byte chunk buffer: %s",
					opt->chunk, strerror(err));
		}
		memset(w->buf, 0, opt->chunk);

		if (!opt->write_buffer)
			continue;
		/* A buffer larger than the range would never fill anyway. */
		w->wbuf_cap = min_u64(opt->write_buffer, w->end - w->start);
		w->wbuf = mmap(NULL, w->wbuf_cap, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (w->wbuf == MAP_FAILED) {
			w->wbuf = NULL;
			return run_fail(run, WPLOAD_EXIT_FAIL,
					"cannot map a %zu-byte write buffer: %s",
					w->wbuf_cap, strerror(errno));
		}
		memset(w->wbuf, 0, w->wbuf_cap);
	}
	return 0;
}

/* --start-file: say the set-up is done, and wait to be told to go. */
static int wait_start_file(struct wpload_run *run)
{
	const char *path = run->opt->start_file;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	if (fd < 0)
		return run_fail(run, WPLOAD_EXIT_FAIL, "--start-file %s: %s",
				path, strerror(errno));
	close(fd);
	while (!access(path, F_OK))
		usleep(10 * 1000);
	if (errno != ENOENT)
		return run_fail(run, WPLOAD_EXIT_FAIL, "--start-file %s: %s",
				path, strerror(errno));
	return 0;
}

int run_init(struct wpload_run *run, const struct wpload_opts *opt)
{
	int err;

	memset(run, 0, sizeof(*run));
	run->opt = opt;
	run->fd = -1;
	run->page_size = sysconf(_SC_PAGESIZE);
	run->nchunks = (opt->size + opt->chunk - 1) / opt->chunk;
	run->json_first_pass = true;
	pthread_mutex_init(&run->error_lock, NULL);
	pthread_mutex_init(&run->launch_lock, NULL);
	pthread_cond_init(&run->launch_cond, NULL);

	/* --cold happens in open_file(), so before the file is mapped. */
	if (open_file(run))
		return -1;
	if (mode_maps(opt->mode) && map_file(run))
		return -1;
	if (setup_workers(run))
		return -1;
	err = pthread_barrier_init(&run->barrier, NULL, opt->threads);
	if (err)
		return run_fail(run, WPLOAD_EXIT_FAIL,
				"pthread_barrier_init: %s", strerror(err));
	run->barrier_ready = true;
	if (opt->start_file && wait_start_file(run))
		return -1;
	probe_counters(run);
	return 0;
}

void run_destroy(struct wpload_run *run)
{
	unsigned int i;

	if (run->workers) {
		for (i = 0; i < run->opt->threads; i++) {
			free(run->workers[i].buf);
			if (run->workers[i].wbuf)
				munmap(run->workers[i].wbuf,
				       run->workers[i].wbuf_cap);
		}
		free(run->workers);
	}
	free(run->lat);
	if (run->map)
		munmap(run->map, run->opt->size);
	if (run->fd >= 0)
		close(run->fd);
	if (run->barrier_ready)
		pthread_barrier_destroy(&run->barrier);
	for (i = 0; i < (unsigned int)run->totals.ncounters; i++)
		free(run->totals.names[i]);
	pthread_cond_destroy(&run->launch_cond);
	pthread_mutex_destroy(&run->launch_lock);
	pthread_mutex_destroy(&run->error_lock);
}

/* ---- the ops ----------------------------------------------------------- */

int sync_file(struct wpload_run *run, uint64_t *ns)
{
	const struct wpload_opts *opt = run->opt;
	uint64_t t0 = wpstat_now_ns();
	const char *call = "";
	int ret = 0;

	switch (opt->sync) {
	case SYNC_NONE:
		return 0;
	case SYNC_MSYNC:
		call = "msync(MS_SYNC)";
		ret = msync(run->map, opt->size, MS_SYNC);
		break;
	case SYNC_MSYNC_ASYNC:
		call = "msync(MS_ASYNC)";
		ret = msync(run->map, opt->size, MS_ASYNC);
		break;
	case SYNC_FSYNC:
		call = "fsync";
		ret = fsync(run->fd);
		break;
	case SYNC_SFR:
		call = "sync_file_range";
		ret = sync_file_range(run->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
		break;
	case SYNC_NR:
		break;
	}
	*ns += wpstat_now_ns() - t0;
	if (ret)
		return run_fail(run, WPLOAD_EXIT_FAIL, "%s of %s: %s", call,
				opt->path, strerror(errno));
	return 0;
}

static int pwrite_full(struct wpload_run *run, const char *buf, size_t len,
		       uint64_t off)
{
	ssize_t n;

	while (len) {
		n = pwrite(run->fd, buf, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return run_fail(run, WPLOAD_EXIT_FAIL,
					"pwrite of %zu bytes to %s at offset %" PRIu64 ": %s",
					len, run->opt->path, off,
					n < 0 ? strerror(errno) : "nothing written");
		buf += n;
		len -= n;
		off += n;
	}
	return 0;
}

static int pread_full(struct wpload_run *run, char *buf, size_t len,
		      uint64_t off)
{
	ssize_t n;

	while (len) {
		n = pread(run->fd, buf, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return run_fail(run, WPLOAD_EXIT_FAIL,
					"pread of %zu bytes from %s at offset %" PRIu64 ": %s",
					len, run->opt->path, off,
					n < 0 ? strerror(errno) :
					"end of file (truncated?)");
		buf += n;
		len -= n;
		off += n;
	}
	return 0;
}

static int wbuf_commit(struct wpload_worker *w)
{
	int ret = 0;

	if (w->wbuf_fill)
		ret = pwrite_full(w->run, w->wbuf, w->wbuf_fill, w->wbuf_off);
	w->wbuf_fill = 0;
	return ret;
}

/*
 * Stage one chunk.  A worker's chunks are consecutive, so the buffer always
 * holds one contiguous file range; a chunk that straddles the end of the
 * buffer is split so that every commit is exactly wbuf_cap bytes.
 */
static int wbuf_store(struct wpload_worker *w, uint64_t off, size_t len)
{
	const char *src = w->buf;
	size_t n;

	while (len) {
		if (!w->wbuf_fill)
			w->wbuf_off = off;
		n = min_u64(len, w->wbuf_cap - w->wbuf_fill);
		memcpy(w->wbuf + w->wbuf_fill, src, n);
		w->wbuf_fill += n;
		src += n;
		off += n;
		len -= n;
		if (w->wbuf_fill == w->wbuf_cap && wbuf_commit(w))
			return -1;
	}
	return 0;
}

static int worker_op(struct wpload_worker *w, uint64_t off, size_t len)
{
	struct wpload_run *run = w->run;

	switch (run->opt->mode) {
	case MODE_MMAP:
	case MODE_READ_THEN_WRITE:
		memcpy(run->map + off, w->buf, len);
		return 0;
	case MODE_MMAP_READ:
		memcpy(w->buf, run->map + off, len);
		/* Nobody reads the copy: keep the compiler from dropping it. */
		__asm__ volatile("" : : "r"(w->buf) : "memory");
		return 0;
	case MODE_WRITE:
		if (w->wbuf)
			return wbuf_store(w, off, len);
		return pwrite_full(run, w->buf, len, off);
	case MODE_READ:
		return pread_full(run, w->buf, len, off);
	case MODE_NR:
		break;
	}
	return 0;
}

/* One pass over this worker's range; SIGBUS is caught by run_guarded(). */
static int worker_pass_ops(void *arg)
{
	struct wpload_worker *w = arg;
	struct wpload_run *run = w->run;
	const struct wpload_opts *opt = run->opt;
	uint64_t i, off = w->start, t0 = 0, t1;
	bool sync_now;
	size_t len;

	/* New data every pass, so each pass really rewrites the file. */
	if (mode_stores(opt->mode))
		memset(w->buf, 'a' + run->pass % 26, opt->chunk);
	if (opt->mode == MODE_READ_THEN_WRITE)
		touch_pages(run->map, w->start, w->end, run->page_size);

	for (i = 0; i < w->nr_chunks; i++, off += len) {
		len = min_u64(opt->chunk, opt->size - off);
		sync_now = opt->sync_every && (i + 1) % opt->sync_every == 0;

		if (!opt->no_latency)
			t0 = wpstat_now_ns();
		if (worker_op(w, off, len))
			return -1;
		/* Staged data must reach the file before a sync or pass end. */
		if (w->wbuf && (sync_now || i + 1 == w->nr_chunks) &&
		    wbuf_commit(w))
			return -1;
		if (!opt->no_latency) {
			t1 = wpstat_now_ns();
			w->lat[i] = t1 - t0;
		}
		w->ops++;
		w->bytes += len;
		if (sync_now && sync_file(run, &w->sync_ns))
			return -1;
	}
	return 0;
}

void worker_pass(struct wpload_worker *w)
{
	w->ops = 0;
	w->bytes = 0;
	w->sync_ns = 0;
	if (w->run->map)
		run_guarded(w->run, worker_pass_ops, w);
	else
		worker_pass_ops(w);
}
