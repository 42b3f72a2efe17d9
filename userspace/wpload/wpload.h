/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wpload's shared state: the options (options.c), the run and its workers
 * (workload.c, main.c) and what a pass reports (report.c).
 */
#ifndef WPLOAD_H
#define WPLOAD_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "file_key.h"
#include "wpstat_proc.h"

#define WPLOAD_MIN_CHUNK	64
#define WPLOAD_DEFAULT_CHUNK	4096
#define WPLOAD_MAX_THREADS	1024
#define WPLOAD_MAX_DURATION_S	1e9	/* keeps the duration in ns below 2^64 */

enum {
	WPLOAD_EXIT_OK		= 0,
	WPLOAD_EXIT_FAIL	= 1,
	WPLOAD_EXIT_USAGE	= 2,
	WPLOAD_EXIT_SIGBUS	= 3,
	WPLOAD_CONTINUE		= -1,	/* parse_args(): go on and run */
};

enum wpload_mode {
	MODE_MMAP,
	MODE_WRITE,
	MODE_READ_THEN_WRITE,
	MODE_MMAP_READ,
	MODE_READ,
	MODE_NR
};

extern const char *const mode_names[MODE_NR];

enum wpload_sync {
	SYNC_NONE,
	SYNC_MSYNC,
	SYNC_MSYNC_ASYNC,
	SYNC_FSYNC,
	SYNC_SFR,
	SYNC_NR
};

extern const char *const sync_names[SYNC_NR];

/* --warmup: how the pages are touched before mlock and MADV_WILLNEED. */
enum wpload_warmup {
	WARMUP_NONE,
	WARMUP_READ,	/* load a byte per page: PTEs present but read-only */
	WARMUP_WRITE,	/* store a zero per page, as RocketMQ's warmMappedFile() */
};

enum wpload_advice {
	ADVICE_NONE,
	ADVICE_RANDOM,
	ADVICE_SEQUENTIAL,
	ADVICE_WILLNEED,
	ADVICE_NOHUGEPAGE,
	ADVICE_POPULATE_WRITE,
	ADVICE_NR
};

extern const char *const advice_names[ADVICE_NR];

struct wpload_opts {
	const char *path;
	const char *counters_path;
	uint64_t size;
	uint64_t chunk;			/* 0 until --chunk is seen */
	enum wpload_mode mode;
	enum wpload_sync sync;
	unsigned int advice;		/* BIT(ADVICE_*) of each given, in order */
	uint64_t passes;
	bool passes_given;		/* with --duration: an upper bound */
	uint64_t duration_ns;		/* 0: run exactly --passes passes */
	uint64_t sync_every;		/* 0: sync only after each pass */
	uint64_t write_buffer;		/* 0: no staging buffer */
	unsigned int threads;
	bool mlock;
	bool populate;
	bool private_map;
	bool cold;
	const char *start_file;		/* --start-file: wait for its removal */
	enum wpload_warmup warmup;
	bool no_latency;
	bool no_create;
	bool json;
	bool quiet;
	bool verbose;		/* every counter on each text line */
};

/* What the counters file told us when we first looked. */
enum wpload_counters {
	COUNTERS_ON,
	COUNTERS_NO_MODULE,		/* inodes file missing */
	COUNTERS_UNREADABLE,		/* present, but EACCES or bad format */
};

struct wpload_worker {
	struct wpload_run *run;
	unsigned int id;
	pthread_t thread;
	bool started;
	uint64_t nr_chunks;
	uint64_t start, end;		/* byte range [start, end) of the file */
	uint64_t *lat;			/* nr_chunks samples, a slice of run->lat */
	char *buf;			/* one chunk: source of stores, sink of loads */
	char *wbuf;			/* --write-buffer staging area, or NULL */
	size_t wbuf_cap, wbuf_fill;
	uint64_t wbuf_off;		/* file offset of wbuf[0] */
	/* This pass; read by worker 0 after the end-of-pass barrier. */
	uint64_t ops, bytes, sync_ns;
};

/* Counter deltas of one pass; names point into the "after" snapshot. */
struct wpload_counter_delta {
	int n;
	const char *names[WPSTAT_MAX_COUNTERS];
	uint64_t val[WPSTAT_MAX_COUNTERS];
	bool avail[WPSTAT_MAX_COUNTERS];
};

struct wpload_pass_result {
	uint64_t pass, wall_ns, sync_ns, ops, bytes;
	uint64_t cpu_ns;		/* the process's CPU time in the pass */
	uint64_t p50, p99, max;
	bool have_counters;
	struct wpload_counter_delta counters;
};

struct wpload_totals {
	uint64_t passes, wall_ns, sync_ns, ops, bytes, cpu_ns;
	int ncounters;			/* 0: no pass reported counters */
	char *names[WPSTAT_MAX_COUNTERS];
	uint64_t sum[WPSTAT_MAX_COUNTERS];
	bool avail[WPSTAT_MAX_COUNTERS];
};

struct wpload_run {
	const struct wpload_opts *opt;
	int fd;
	struct wpstat_file_key key;	/* how wpstat names the file */
	char *map;			/* NULL in the write and read modes */
	size_t page_size;
	uint64_t nchunks;
	uint64_t *lat;			/* one latency sample per chunk */
	struct wpload_worker *workers;
	bool barrier_ready;
	pthread_barrier_t barrier;

	/* Start gate, so a failed pthread_create() leaves nobody stuck. */
	pthread_mutex_t launch_lock;
	pthread_cond_t launch_cond;
	int launch;			/* 0 wait, 1 run, -1 give up */

	/* Written by worker 0 before the start barrier, read after it. */
	bool stop;
	uint64_t pass;			/* 1-based number of the current pass */

	/* First failure wins; the others are consequences of it. */
	pthread_mutex_t error_lock;
	int error_exit;
	char error_msg[512];

	/* Reporting; only worker 0 touches these. */
	enum wpload_counters counters;
	uint64_t run_start_ns, pass_start_ns, pass_start_cpu_ns;
	int before_ret;
	struct wpstat_snapshot before;
	struct wpload_totals totals;
	bool json_open;
	bool json_first_pass;
};

static inline uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static inline bool mode_maps(enum wpload_mode mode)
{
	return mode == MODE_MMAP || mode == MODE_READ_THEN_WRITE ||
	       mode == MODE_MMAP_READ;
}

static inline bool mode_stores(enum wpload_mode mode)
{
	return mode == MODE_MMAP || mode == MODE_READ_THEN_WRITE ||
	       mode == MODE_WRITE;
}

/* options.c: the command line into @opt; WPLOAD_CONTINUE or an exit status. */
int parse_args(int argc, char **argv, struct wpload_opts *opt);

/* workload.c */
int run_fail(struct wpload_run *run, int exit_code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool run_failed(struct wpload_run *run);
void sigbus_handler(int sig, siginfo_t *si, void *ucontext);
int run_init(struct wpload_run *run, const struct wpload_opts *opt);
void run_destroy(struct wpload_run *run);
int sync_file(struct wpload_run *run, uint64_t *ns);
void worker_pass(struct wpload_worker *w);

/* report.c */
void probe_counters(struct wpload_run *run);
void counters_before(struct wpload_run *run);
void report_pass(struct wpload_run *run, struct wpload_pass_result *r);
void counters_before_free(struct wpload_run *run);
void print_header(struct wpload_run *run);
void print_totals(struct wpload_run *run);

#endif
