// SPDX-License-Identifier: GPL-2.0
/*
 * wpload - workload generator for wpstat.
 *
 * Stores to (or loads from) one file in fixed-size chunks, through a shared
 * mapping or with pwrite/pread, one pass over the whole file at a time.  For
 * every pass it reports the wall time, per-op latency percentiles, the time
 * spent syncing, and the change of the file's counters in /proc/wpstat/inodes
 * (page_mkwrite faults, folio_mkclean write-protects, stable-page waits, dirty
 * balancing), so the cost of each write-protect cycle can be put next to the
 * kernel events that caused it.
 *
 * Exit status: 0 success, 1 run-time failure, 2 usage error, 3 SIGBUS.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "fmt.h"
#include "json.h"
#include "wpstat_proc.h"

#define WPLOAD_MIN_CHUNK	64
#define WPLOAD_DEFAULT_CHUNK	4096
#define WPLOAD_MAX_THREADS	1024
#define WPLOAD_MAX_DURATION_S	1e9	/* keeps the duration in ns below 2^64 */
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

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

static const char *const mode_names[MODE_NR] = {
	[MODE_MMAP]		= "mmap",
	[MODE_WRITE]		= "write",
	[MODE_READ_THEN_WRITE]	= "read-then-write",
	[MODE_MMAP_READ]	= "mmap-read",
	[MODE_READ]		= "read",
};

enum wpload_sync {
	SYNC_NONE,
	SYNC_MSYNC,
	SYNC_MSYNC_ASYNC,
	SYNC_FSYNC,
	SYNC_SFR,
	SYNC_NR
};

static const char *const sync_names[SYNC_NR] = {
	[SYNC_NONE]		= "none",
	[SYNC_MSYNC]		= "msync",
	[SYNC_MSYNC_ASYNC]	= "msync-async",
	[SYNC_FSYNC]		= "fsync",
	[SYNC_SFR]		= "sfr",
};

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
	ADVICE_NR
};

/* JSON value of "warmup": false, or how the pages were touched. */
static const char *const warmup_json[] = {
	[WARMUP_NONE]	= "false",
	[WARMUP_READ]	= "\"read\"",
	[WARMUP_WRITE]	= "\"write\"",
};

static const char *const advice_names[ADVICE_NR] = {
	[ADVICE_NONE]		= "none",
	[ADVICE_RANDOM]		= "random",
	[ADVICE_SEQUENTIAL]	= "sequential",
	[ADVICE_WILLNEED]	= "willneed",
	[ADVICE_NOHUGEPAGE]	= "nohugepage",
};

static const int advice_values[ADVICE_NR] = {
	[ADVICE_RANDOM]		= MADV_RANDOM,
	[ADVICE_SEQUENTIAL]	= MADV_SEQUENTIAL,
	[ADVICE_WILLNEED]	= MADV_WILLNEED,
	[ADVICE_NOHUGEPAGE]	= MADV_NOHUGEPAGE,
};

struct wpload_opts {
	const char *path;
	const char *counters_path;
	uint64_t size;
	uint64_t chunk;			/* 0 until --chunk is seen */
	enum wpload_mode mode;
	enum wpload_sync sync;
	enum wpload_advice advice;
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
	enum wpload_warmup warmup;
	bool no_latency;
	bool no_create;
	bool json;
	bool quiet;
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
	uint64_t p50, p99, max;
	bool have_counters;
	struct wpload_counter_delta counters;
};

struct wpload_totals {
	uint64_t passes, wall_ns, sync_ns, ops, bytes;
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
	uint64_t run_start_ns, pass_start_ns;
	int before_ret;
	struct wpstat_snapshot before;
	struct wpload_totals totals;
	bool json_open;
	bool json_first_pass;
};

/*
 * SIGBUS recovery.  The handler can only reach per-thread state through TLS:
 * a thread points wpload_sigbus_env at its sigjmp_buf while it touches the
 * mapping, and the handler jumps back there with the faulting address.
 */
static __thread sigjmp_buf *volatile wpload_sigbus_env;
static __thread void *volatile wpload_sigbus_addr;

static void usage(FILE *out)
{
	fputs(
"Usage: wpload --file PATH --size BYTES [options]\n"
"\n"
"Store to (or load from) PATH in chunks, one pass over the file at a time, and\n"
"report per pass the wall time, per-op latency, sync time and the change of\n"
"the file's wpstat counters (/proc/wpstat/inodes).\n"
"\n"
"BYTES and SIZE take an optional K, M or G suffix (powers of 1024).\n"
"\n"
"File:\n"
"  --file PATH            target file; created (mode 0644) if missing, and\n"
"                         truncated or extended to --size if its size differs\n"
"  --size BYTES           file size, > 0 and at least one chunk\n"
"  --no-create            fail if PATH does not exist\n"
"  --cold                 before the first pass (and before mapping): fsync,\n"
"                         then POSIX_FADV_DONTNEED the whole file\n"
"\n"
"Workload:\n"
"  --mode MODE            what one op does to one chunk (default mmap):\n"
"                           mmap             memcpy into a shared mapping\n"
"                           read-then-write  as mmap, but each pass first loads\n"
"                                            one byte of every page, so every\n"
"                                            store hits a present read-only PTE\n"
"                           write            pwrite(2)\n"
"                           mmap-read        memcpy out of the mapping\n"
"                           read             pread(2)\n"
"  --chunk BYTES          bytes per op, 64 up to --size (default 4096, or\n"
"                         --size if smaller); the last chunk may be partial\n"
"  --passes N             passes over the file (default 1)\n"
"  --duration SECONDS     repeat passes until SECONDS have passed (at least\n"
"                         one pass; with --passes, stop at N passes at most)\n"
"  --threads N            N threads, each owning a contiguous range of whole\n"
"                         chunks; a barrier starts and ends every pass\n"
"                         (default 1)\n"
"\n"
"Syncing:\n"
"  --sync METHOD          after each pass (done once, by thread 0):\n"
"                           none         nothing (default)\n"
"                           msync        msync(MS_SYNC) of the whole mapping\n"
"                           msync-async  msync(MS_ASYNC) of the whole mapping\n"
"                           fsync        fsync(2)\n"
"                           sfr          sync_file_range(SYNC_FILE_RANGE_WRITE)\n"
"                         msync and msync-async need an mmap mode\n"
"  --sync-every K         also sync after every K ops of each thread (needs\n"
"                         --sync)\n"
"\n"
"Mapping (mmap, read-then-write and mmap-read modes only):\n"
"  --private              MAP_PRIVATE instead of MAP_SHARED\n"
"  --populate             MAP_POPULATE\n"
"  --mlock                mlock(2) the mapping after mmap\n"
"  --madvise ADVICE       madvise(2) the mapping: random, sequential,\n"
"                         willneed or nohugepage\n"
"  --warmup[=HOW]         RocketMQ-style warm-up: touch every page, mlock the\n"
"                         mapping, then MADV_WILLNEED.  HOW is read (default:\n"
"                         load a byte per page, as MappedByteBuffer.load())\n"
"                         or write (store a zero per page, as RocketMQ's\n"
"                         warmMappedFile(); the pages start the pass dirty;\n"
"                         a store mode is needed)\n"
"\n"
"Write mode only:\n"
"  --write-buffer SIZE    RocketMQ-style transient store: copy chunks into an\n"
"                         anonymous SIZE-byte buffer per thread and pwrite it\n"
"                         each time it fills, plus once at the end of the\n"
"                         pass; an op's latency includes the commit it causes\n"
"\n"
"Output:\n"
"  --json                 one JSON object on stdout instead of the text table\n"
"  --quiet                print only the totals line (not with --json)\n"
"  --no-latency           do not time single ops (two clock reads per op\n"
"                         dwarf a 64-byte memcpy); latencies are reported\n"
"                         as 0 (text) or null (JSON)\n"
"  --counters PATH        counters file (default " WPSTAT_INODES_PATH ")\n"
"  -h, --help             show this help and exit\n"
"\n"
"Exit status: 0 success, 1 run-time failure, 2 usage error, 3 SIGBUS (the\n"
"file became shorter than the mapping).\n", out);
}

/* ---- errors and small helpers ----------------------------------------- */

static int usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("wpload: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return WPLOAD_EXIT_USAGE;
}

static int run_fail(struct wpload_run *run, int exit_code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Record the first failure of the run; returns -1 for the caller to pass on. */
static int run_fail(struct wpload_run *run, int exit_code, const char *fmt, ...)
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

static bool run_failed(struct wpload_run *run)
{
	bool failed;

	pthread_mutex_lock(&run->error_lock);
	failed = run->error_exit != 0;
	pthread_mutex_unlock(&run->error_lock);
	return failed;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static bool mode_maps(enum wpload_mode mode)
{
	return mode == MODE_MMAP || mode == MODE_READ_THEN_WRITE ||
	       mode == MODE_MMAP_READ;
}

static bool mode_stores(enum wpload_mode mode)
{
	return mode == MODE_MMAP || mode == MODE_READ_THEN_WRITE ||
	       mode == MODE_WRITE;
}

/* ---- command line ------------------------------------------------------ */

enum {
	OPT_FILE = 256,
	OPT_SIZE,
	OPT_CHUNK,
	OPT_MODE,
	OPT_PASSES,
	OPT_DURATION,
	OPT_SYNC,
	OPT_SYNC_EVERY,
	OPT_MLOCK,
	OPT_POPULATE,
	OPT_MADVISE,
	OPT_PRIVATE,
	OPT_COLD,
	OPT_THREADS,
	OPT_WARMUP,
	OPT_NO_LATENCY,
	OPT_WRITE_BUFFER,
	OPT_NO_CREATE,
	OPT_JSON,
	OPT_QUIET,
	OPT_COUNTERS,
};

static const struct option long_options[] = {
	{ "file",		required_argument,	NULL, OPT_FILE },
	{ "size",		required_argument,	NULL, OPT_SIZE },
	{ "chunk",		required_argument,	NULL, OPT_CHUNK },
	{ "mode",		required_argument,	NULL, OPT_MODE },
	{ "passes",		required_argument,	NULL, OPT_PASSES },
	{ "duration",		required_argument,	NULL, OPT_DURATION },
	{ "sync",		required_argument,	NULL, OPT_SYNC },
	{ "sync-every",		required_argument,	NULL, OPT_SYNC_EVERY },
	{ "mlock",		no_argument,		NULL, OPT_MLOCK },
	{ "populate",		no_argument,		NULL, OPT_POPULATE },
	{ "madvise",		required_argument,	NULL, OPT_MADVISE },
	{ "private",		no_argument,		NULL, OPT_PRIVATE },
	{ "cold",		no_argument,		NULL, OPT_COLD },
	{ "threads",		required_argument,	NULL, OPT_THREADS },
	{ "warmup",		optional_argument,	NULL, OPT_WARMUP },
	{ "no-latency",		no_argument,		NULL, OPT_NO_LATENCY },
	{ "write-buffer",	required_argument,	NULL, OPT_WRITE_BUFFER },
	{ "no-create",		no_argument,		NULL, OPT_NO_CREATE },
	{ "json",		no_argument,		NULL, OPT_JSON },
	{ "quiet",		no_argument,		NULL, OPT_QUIET },
	{ "counters",		required_argument,	NULL, OPT_COUNTERS },
	{ "help",		no_argument,		NULL, 'h' },
	{ NULL,			0,			NULL, 0 },
};

static const char *option_name(int val)
{
	const struct option *o;

	for (o = long_options; o->name; o++)
		if (o->val == val)
			return o->name;
	return "?";
}

/*
 * A byte count: decimal digits and an optional K/M/G suffix (powers of 1024).
 * strtoull() alone would take "-1", " 5" and "0x10"; insist on a leading
 * digit and nothing after the suffix.
 */
static int parse_bytes(const char *name, const char *arg, uint64_t max,
		       uint64_t *out)
{
	unsigned int shift = 0;
	unsigned long long v;
	char *end;

	if (!isdigit((unsigned char)arg[0]))
		goto invalid;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno == ERANGE)
		goto too_large;
	switch (*end) {
	case 'k': case 'K':
		shift = 10;
		end++;
		break;
	case 'm': case 'M':
		shift = 20;
		end++;
		break;
	case 'g': case 'G':
		shift = 30;
		end++;
		break;
	}
	if (*end)
		goto invalid;
	if (v > (max >> shift))
		goto too_large;
	if (!v)
		return usage_error("--%s must be greater than 0", name);
	*out = (uint64_t)v << shift;
	return 0;
invalid:
	return usage_error("--%s: invalid size '%s' (expected a positive number with an optional K, M or G suffix)",
			   name, arg);
too_large:
	return usage_error("--%s: '%s' is too large (at most %" PRIu64 " bytes)",
			   name, arg, max);
}

/* A plain decimal count in [min, max]. */
static int parse_count(const char *name, const char *arg, uint64_t min,
		       uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!isdigit((unsigned char)arg[0]))
		goto invalid;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (*end)
		goto invalid;
	if (errno == ERANGE || v > max)
		return usage_error("--%s: '%s' is too large (at most %" PRIu64 ")",
				   name, arg, max);
	if (v < min)
		return usage_error("--%s must be at least %" PRIu64, name, min);
	*out = v;
	return 0;
invalid:
	return usage_error("--%s: invalid number '%s'", name, arg);
}

static int parse_duration(const char *arg, uint64_t *out_ns)
{
	char *end;
	double s;

	if (!isdigit((unsigned char)arg[0]) && arg[0] != '.')
		goto invalid;
	errno = 0;
	s = strtod(arg, &end);
	if (*end || errno || !isfinite(s))
		goto invalid;
	if (s <= 0)
		return usage_error("--duration must be greater than 0");
	if (s > WPLOAD_MAX_DURATION_S)
		return usage_error("--duration: '%s' is too large (at most %.0f seconds)",
				   arg, WPLOAD_MAX_DURATION_S);
	*out_ns = (uint64_t)ceil(s * 1e9);
	return 0;
invalid:
	return usage_error("--duration: invalid number of seconds '%s'", arg);
}

/* Index of arg in names[0..n), or a usage error listing the choices. */
static int parse_choice(const char *name, const char *arg,
			const char *const *names, int first, int n, int *out)
{
	char list[256] = "";
	size_t len = 0;
	int i;

	for (i = first; i < n; i++) {
		if (!strcmp(arg, names[i])) {
			*out = i;
			return 0;
		}
		len += snprintf(list + len, sizeof(list) - len, "%s%s",
				i == first ? "" : i == n - 1 ? " or " : ", ",
				names[i]);
	}
	return usage_error("--%s: unknown value '%s' (expected %s)", name, arg,
			   list);
}

/* Combinations that make no sense are usage errors, not silent no-ops. */
static int check_args(struct wpload_opts *opt, int mapping_opts_seen)
{
	uint64_t nchunks;

	if (!opt->path)
		return usage_error("--file is required (see wpload --help)");
	if (!opt->size)
		return usage_error("--size is required (see wpload --help)");
	if (!opt->chunk) {
		if (opt->size < WPLOAD_MIN_CHUNK)
			return usage_error("--size: %" PRIu64 " bytes is less than the minimum chunk of %d bytes",
					   opt->size, WPLOAD_MIN_CHUNK);
		opt->chunk = min_u64(WPLOAD_DEFAULT_CHUNK, opt->size);
	} else if (opt->chunk > opt->size) {
		return usage_error("--chunk: %" PRIu64 " bytes is more than --size (%" PRIu64 " bytes)",
				   opt->chunk, opt->size);
	}
	if (!mode_maps(opt->mode) &&
	    (opt->sync == SYNC_MSYNC || opt->sync == SYNC_MSYNC_ASYNC))
		return usage_error("--sync %s needs a mapping; --mode %s has none (use fsync or sfr)",
				   sync_names[opt->sync], mode_names[opt->mode]);
	if (opt->sync_every && opt->sync == SYNC_NONE)
		return usage_error("--sync-every needs a --sync method");
	if (!mode_maps(opt->mode) && mapping_opts_seen)
		return usage_error("--%s needs a mapping; --mode %s has none",
				   option_name(mapping_opts_seen),
				   mode_names[opt->mode]);
	if (opt->write_buffer && opt->mode != MODE_WRITE)
		return usage_error("--write-buffer works only with --mode write");
	if (opt->warmup == WARMUP_WRITE && !mode_stores(opt->mode))
		return usage_error("--warmup=write stores into the file; --mode %s only reads it",
				   mode_names[opt->mode]);
	if (opt->json && opt->quiet)
		return usage_error("--quiet and --json cannot be combined");
	nchunks = (opt->size + opt->chunk - 1) / opt->chunk;
	if (opt->threads > nchunks)
		return usage_error("--threads: %u threads but only %" PRIu64 " chunk%s to share",
				   opt->threads, nchunks, nchunks == 1 ? "" : "s");
	return WPLOAD_CONTINUE;
}

static int parse_args(int argc, char **argv, struct wpload_opts *opt)
{
	/* Largest file we can both address and pass as an off_t. */
	const uint64_t max_size = min_u64(SIZE_MAX, INT64_MAX);
	int mapping_opt = 0;	/* last option that needs a mapping */
	uint64_t v;
	int c, choice;

	memset(opt, 0, sizeof(*opt));
	opt->counters_path = WPSTAT_INODES_PATH;
	opt->mode = MODE_MMAP;
	opt->sync = SYNC_NONE;
	opt->advice = ADVICE_NONE;
	opt->passes = 1;
	opt->threads = 1;

	opterr = 0;	/* one line of our own instead of getopt's */
	while ((c = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return WPLOAD_EXIT_OK;
		case OPT_FILE:
			opt->path = optarg;
			break;
		case OPT_SIZE:
			if (parse_bytes("size", optarg, max_size, &opt->size))
				return WPLOAD_EXIT_USAGE;
			break;
		case OPT_CHUNK:
			if (parse_bytes("chunk", optarg, max_size, &opt->chunk))
				return WPLOAD_EXIT_USAGE;
			if (opt->chunk < WPLOAD_MIN_CHUNK)
				return usage_error("--chunk: %" PRIu64 " bytes is less than the minimum of %d",
						   opt->chunk, WPLOAD_MIN_CHUNK);
			break;
		case OPT_MODE:
			if (parse_choice("mode", optarg, mode_names, 0, MODE_NR,
					 &choice))
				return WPLOAD_EXIT_USAGE;
			opt->mode = choice;
			break;
		case OPT_PASSES:
			if (parse_count("passes", optarg, 1, UINT32_MAX,
					&opt->passes))
				return WPLOAD_EXIT_USAGE;
			opt->passes_given = true;
			break;
		case OPT_DURATION:
			if (parse_duration(optarg, &opt->duration_ns))
				return WPLOAD_EXIT_USAGE;
			break;
		case OPT_SYNC:
			if (parse_choice("sync", optarg, sync_names, 0, SYNC_NR,
					 &choice))
				return WPLOAD_EXIT_USAGE;
			opt->sync = choice;
			break;
		case OPT_SYNC_EVERY:
			if (parse_count("sync-every", optarg, 1, UINT64_MAX,
					&opt->sync_every))
				return WPLOAD_EXIT_USAGE;
			break;
		case OPT_MADVISE:
			if (parse_choice("madvise", optarg, advice_names, 1,
					 ADVICE_NR, &choice))
				return WPLOAD_EXIT_USAGE;
			opt->advice = choice;
			mapping_opt = c;
			break;
		case OPT_THREADS:
			if (parse_count("threads", optarg, 1, WPLOAD_MAX_THREADS,
					&v))
				return WPLOAD_EXIT_USAGE;
			opt->threads = v;
			break;
		case OPT_WRITE_BUFFER:
			if (parse_bytes("write-buffer", optarg, SIZE_MAX,
					&opt->write_buffer))
				return WPLOAD_EXIT_USAGE;
			break;
		case OPT_MLOCK:
			opt->mlock = true;
			mapping_opt = c;
			break;
		case OPT_POPULATE:
			opt->populate = true;
			mapping_opt = c;
			break;
		case OPT_PRIVATE:
			opt->private_map = true;
			mapping_opt = c;
			break;
		case OPT_WARMUP:
			if (!optarg || !strcmp(optarg, "read"))
				opt->warmup = WARMUP_READ;
			else if (!strcmp(optarg, "write"))
				opt->warmup = WARMUP_WRITE;
			else
				return usage_error("--warmup: '%s' is not read or write",
						   optarg);
			mapping_opt = c;
			break;
		case OPT_NO_LATENCY:
			opt->no_latency = true;
			break;
		case OPT_COLD:
			opt->cold = true;
			break;
		case OPT_NO_CREATE:
			opt->no_create = true;
			break;
		case OPT_JSON:
			opt->json = true;
			break;
		case OPT_QUIET:
			opt->quiet = true;
			break;
		case OPT_COUNTERS:
			opt->counters_path = optarg;
			break;
		case ':':
			return usage_error("%s needs an argument (see wpload --help)",
					   argv[optind - 1]);
		default:
			if (optopt && optopt < 256)
				return usage_error("unknown option '-%c' (see wpload --help)",
						   optopt);
			return usage_error("unknown option '%s' (see wpload --help)",
					   argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s' (see wpload --help)",
				   argv[optind]);
	return check_args(opt, mapping_opt);
}

/* ---- SIGBUS ------------------------------------------------------------ */

static void sigbus_handler(int sig, siginfo_t *si, void *ucontext)
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
	int prot = PROT_READ, flags;

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
	if (opt->advice != ADVICE_NONE &&
	    madvise(run->map, opt->size, advice_values[opt->advice]))
		return run_fail(run, WPLOAD_EXIT_FAIL,
				"madvise(%s) of the mapping: %s",
				advice_names[opt->advice], strerror(errno));
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

static void probe_counters(struct wpload_run *run)
{
	struct wpstat_snapshot s;
	int ret;

	ret = wpstat_snapshot_read(run->opt->counters_path, &s);
	if (!ret) {
		run->counters = COUNTERS_ON;
		wpstat_snapshot_free(&s);
	} else if (ret == -ENOENT) {
		run->counters = COUNTERS_NO_MODULE;
	} else {
		run->counters = COUNTERS_UNREADABLE;
		fprintf(stderr, "wpload: cannot read %s: %s; counters not reported\n",
			run->opt->counters_path,
			ret == -EPROTO ? "unexpected format" : strerror(-ret));
	}
}

static int run_init(struct wpload_run *run, const struct wpload_opts *opt)
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
	probe_counters(run);
	return 0;
}

static void run_destroy(struct wpload_run *run)
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

static int sync_file(struct wpload_run *run, uint64_t *ns)
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

static void worker_pass(struct wpload_worker *w)
{
	w->ops = 0;
	w->bytes = 0;
	w->sync_ns = 0;
	if (w->run->map)
		run_guarded(w->run, worker_pass_ops, w);
	else
		worker_pass_ops(w);
}

/* ---- counters ---------------------------------------------------------- */

/*
 * The target's value of counter @name in @s: 0 if the file has no row yet.
 * Returns false if the counter is unavailable ("-" or no such column).
 */
static bool snapshot_value(const struct wpstat_snapshot *s,
			   const struct wpstat_row *row, const char *name,
			   uint64_t *val)
{
	int i = wpstat_counter_index(s, name);

	*val = 0;
	if (i < 0)
		return false;
	if (!row)	/* "-" marks a whole column, so any row tells */
		return !s->nrows || s->rows[0].avail[i];
	*val = row->val[i];
	return row->avail[i];
}

static void counters_delta(const struct wpload_run *run,
			   const struct wpstat_snapshot *before,
			   const struct wpstat_snapshot *after,
			   struct wpload_counter_delta *d)
{
	const struct wpstat_row *b, *a;
	uint64_t bv, av;
	bool avail;
	int i;

	b = wpstat_snapshot_find_key(before, &run->key);
	a = wpstat_snapshot_find_key(after, &run->key);
	d->n = after->ncounters;
	for (i = 0; i < after->ncounters; i++) {
		d->names[i] = after->names[i];
		avail = snapshot_value(before, b, after->names[i], &bv);
		avail &= snapshot_value(after, a, after->names[i], &av);
		d->avail[i] = avail;
		/*
		 * Going backwards means the table was reset during the pass.
		 * A maximum (the worst single event) is its value after.
		 */
		if (wpstat_counter_is_max(after->names[i]))
			d->val[i] = avail ? av : 0;
		else
			d->val[i] = !avail ? 0 : av >= bv ? av - bv : av;
	}
}

static void totals_add_counters(struct wpload_totals *t,
				const struct wpload_counter_delta *d)
{
	int i, j;

	for (i = 0; i < d->n; i++) {
		for (j = 0; j < t->ncounters; j++)
			if (!strcmp(t->names[j], d->names[i]))
				break;
		if (j == t->ncounters) {
			if (j == WPSTAT_MAX_COUNTERS)
				continue;
			t->names[j] = strdup(d->names[i]);
			if (!t->names[j])
				continue;
			t->avail[j] = true;
			t->ncounters++;
		}
		if (wpstat_counter_is_max(d->names[i]))	/* worst of all passes */
			t->sum[j] = t->sum[j] > d->val[i] ? t->sum[j] : d->val[i];
		else
			t->sum[j] += d->val[i];
		t->avail[j] &= d->avail[i];
	}
}

/* ---- output ------------------------------------------------------------ */

static void print_header(struct wpload_run *run)
{
	const struct wpload_opts *opt = run->opt;
	char size[32], chunk[32], wbuf[32];
	FILE *out = stdout;

	if (opt->json) {
		fputs("{\"file\": ", out);
		json_string(out, opt->path);
		fprintf(out, ", \"size\": %" PRIu64 ", \"chunk\": %" PRIu64
			", \"mode\": \"%s\", \"sync\": \"%s\", \"threads\": %u"
			", \"private\": %s, \"module_loaded\": %s",
			opt->size, opt->chunk, mode_names[opt->mode],
			sync_names[opt->sync], opt->threads,
			opt->private_map ? "true" : "false",
			run->counters != COUNTERS_NO_MODULE ? "true" : "false");
		if (opt->sync_every)
			fprintf(out, ", \"sync_every\": %" PRIu64, opt->sync_every);
		if (opt->write_buffer)
			fprintf(out, ", \"write_buffer\": %" PRIu64,
				opt->write_buffer);
		if (opt->advice != ADVICE_NONE)
			fprintf(out, ", \"madvise\": \"%s\"",
				advice_names[opt->advice]);
		fprintf(out, ", \"mlock\": %s, \"populate\": %s, \"cold\": %s, \"warmup\": %s",
			opt->mlock ? "true" : "false",
			opt->populate ? "true" : "false",
			opt->cold ? "true" : "false",
			warmup_json[opt->warmup]);
		fprintf(out, ", \"latency\": %s",
			opt->no_latency ? "false" : "true");
		fputs(", \"passes\": [", out);
		run->json_open = true;
		return;
	}
	if (opt->quiet)
		return;
	printf("wpload: %s  size %s  chunk %s  mode %s  sync %s", opt->path,
	       wpstat_fmt_bytes(size, sizeof(size), opt->size),
	       wpstat_fmt_bytes(chunk, sizeof(chunk), opt->chunk),
	       mode_names[opt->mode], sync_names[opt->sync]);
	if (opt->sync_every)
		printf(" every %" PRIu64 " ops", opt->sync_every);
	if (opt->duration_ns)
		printf("  duration %g s", opt->duration_ns / 1e9);
	if (!opt->duration_ns || opt->passes_given)
		printf("  passes %" PRIu64, opt->passes);
	printf("  threads %u", opt->threads);
	if (opt->private_map)
		fputs("  private", stdout);
	if (opt->populate)
		fputs("  populate", stdout);
	if (opt->mlock)
		fputs("  mlock", stdout);
	if (opt->advice != ADVICE_NONE)
		printf("  madvise %s", advice_names[opt->advice]);
	if (opt->cold)
		fputs("  cold", stdout);
	if (opt->warmup)
		printf("  warmup=%s", opt->warmup == WARMUP_READ ? "read" : "write");
	if (opt->no_latency)
		fputs("  no-latency", stdout);
	if (opt->write_buffer)
		printf("  write-buffer %s",
		       wpstat_fmt_bytes(wbuf, sizeof(wbuf), opt->write_buffer));
	putchar('\n');
	fflush(stdout);
}

static void json_counters(const char *const *names, const uint64_t *val,
			  const bool *avail, int n)
{
	int i;

	putchar('{');
	for (i = 0; i < n; i++) {
		if (i)
			fputs(", ", stdout);
		json_string(stdout, names[i]);
		if (avail[i])
			printf(": %" PRIu64, val[i]);
		else
			fputs(": null", stdout);
	}
	putchar('}');
}

static void text_counters(const char *const *names, const uint64_t *val,
			  const bool *avail, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		fputs(i ? " " : "  ", stdout);
		if (avail[i])
			printf("%s=%" PRIu64, names[i], val[i]);
		else
			printf("%s=-", names[i]);
	}
}

static void print_pass(struct wpload_run *run, const struct wpload_pass_result *r)
{
	const struct wpload_opts *opt = run->opt;
	char wall[32], p50[32], p99[32], max[32], sync[32];

	if (opt->json) {
		printf("%s\n  {\"pass\": %" PRIu64 ", \"wall_ns\": %" PRIu64
		       ", \"sync_ns\": %" PRIu64 ", \"ops\": %" PRIu64
		       ", \"bytes\": %" PRIu64 ", \"lat_ns\": ",
		       run->json_first_pass ? "" : ",", r->pass, r->wall_ns,
		       r->sync_ns, r->ops, r->bytes);
		if (opt->no_latency)
			fputs("null", stdout);
		else
			printf("{\"p50\": %" PRIu64 ", \"p99\": %" PRIu64
			       ", \"max\": %" PRIu64 "}", r->p50, r->p99, r->max);
		fputs(", \"counters\": ", stdout);
		run->json_first_pass = false;
		if (r->have_counters)
			json_counters(r->counters.names, r->counters.val,
				      r->counters.avail, r->counters.n);
		else
			fputs("null", stdout);
		putchar('}');
		return;
	}
	if (opt->quiet)
		return;
	printf("pass %" PRIu64 ": %s  %" PRIu64 " ops  p50 %s  p99 %s  max %s  sync %s",
	       r->pass, wpstat_fmt_duration(wall, sizeof(wall), r->wall_ns), r->ops,
	       wpstat_fmt_duration(p50, sizeof(p50), r->p50), wpstat_fmt_duration(p99, sizeof(p99), r->p99),
	       wpstat_fmt_duration(max, sizeof(max), r->max),
	       wpstat_fmt_duration(sync, sizeof(sync), r->sync_ns));
	if (r->have_counters)
		text_counters(r->counters.names, r->counters.val,
			      r->counters.avail, r->counters.n);
	putchar('\n');
	fflush(stdout);
}

/* Totals, and for JSON the end of the object (with the error, if any). */
static void print_totals(struct wpload_run *run)
{
	const struct wpload_totals *t = &run->totals;
	const struct wpload_opts *opt = run->opt;
	char wall[32], bytes[32], sync[32];

	if (opt->json) {
		if (!run->json_open)
			return;
		printf("\n ], \"totals\": {\"passes\": %" PRIu64 ", \"wall_ns\": %" PRIu64
		       ", \"sync_ns\": %" PRIu64 ", \"ops\": %" PRIu64
		       ", \"bytes\": %" PRIu64 ", \"counters\": ",
		       t->passes, t->wall_ns, t->sync_ns, t->ops, t->bytes);
		if (t->ncounters)
			json_counters((const char *const *)t->names, t->sum,
				      t->avail, t->ncounters);
		else
			fputs("null", stdout);
		putchar('}');
		if (run->error_exit) {
			fputs(", \"error\": ", stdout);
			json_string(stdout, run->error_msg);
		}
		puts("}");
		return;
	}
	if (run->error_exit)
		return;
	printf("total: %" PRIu64 " pass%s  %s  %" PRIu64 " ops  %s  sync %s",
	       t->passes, t->passes == 1 ? "" : "es",
	       wpstat_fmt_duration(wall, sizeof(wall), t->wall_ns), t->ops,
	       wpstat_fmt_bytes(bytes, sizeof(bytes), t->bytes),
	       wpstat_fmt_duration(sync, sizeof(sync), t->sync_ns));
	if (run->counters == COUNTERS_NO_MODULE)
		fputs("  (wpstat module not loaded)", stdout);
	else if (run->counters == COUNTERS_UNREADABLE)
		fputs("  (counters unreadable)", stdout);
	else
		text_counters((const char *const *)t->names, t->sum, t->avail,
			      t->ncounters);
	putchar('\n');
}

/* ---- the pass loop ----------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted samples. */
static uint64_t percentile(const uint64_t *sorted, uint64_t n, unsigned int p)
{
	uint64_t rank = (n * p + 99) / 100;

	return sorted[rank ? rank - 1 : 0];
}

/* Worker 0, before the start barrier: go on?  Then snapshot and start. */
static void pass_begin(struct wpload_run *run)
{
	const struct wpload_opts *opt = run->opt;
	uint64_t now = wpstat_now_ns();

	if (!run->pass)
		run->run_start_ns = now;
	if (run_failed(run))
		run->stop = true;
	else if (!run->pass)
		run->stop = false;
	else if (opt->duration_ns)
		run->stop = now - run->run_start_ns >= opt->duration_ns ||
			    (opt->passes_given && run->pass >= opt->passes);
	else
		run->stop = run->pass >= opt->passes;
	if (run->stop)
		return;

	run->pass++;
	if (run->counters == COUNTERS_ON)
		run->before_ret = wpstat_snapshot_read(opt->counters_path,
						       &run->before);
	run->pass_start_ns = wpstat_now_ns();
}

/* Worker 0, after the end barrier: sync, snapshot, report. */
static void pass_end(struct wpload_run *run)
{
	const struct wpload_opts *opt = run->opt;
	struct wpload_pass_result r = { .pass = run->pass };
	struct wpload_totals *t = &run->totals;
	struct wpstat_snapshot after;
	unsigned int i;
	int after_ret = -1;

	if (!run_failed(run) && !sync_file(run, &r.sync_ns)) {
		r.wall_ns = wpstat_now_ns() - run->pass_start_ns;
		for (i = 0; i < opt->threads; i++) {
			r.ops += run->workers[i].ops;
			r.bytes += run->workers[i].bytes;
			r.sync_ns += run->workers[i].sync_ns;
		}
		if (run->counters == COUNTERS_ON) {
			after_ret = wpstat_snapshot_read(opt->counters_path,
							 &after);
			if (!run->before_ret && !after_ret) {
				counters_delta(run, &run->before, &after,
					       &r.counters);
				r.have_counters = true;
			}
		}
		/* Every worker stored its samples into its slice of run->lat. */
		if (!opt->no_latency)
			qsort(run->lat, r.ops, sizeof(*run->lat), cmp_u64);
		r.p50 = percentile(run->lat, r.ops, 50);
		r.p99 = percentile(run->lat, r.ops, 99);
		r.max = run->lat[r.ops - 1];

		print_pass(run, &r);
		t->passes++;
		t->wall_ns += r.wall_ns;
		t->sync_ns += r.sync_ns;
		t->ops += r.ops;
		t->bytes += r.bytes;
		if (r.have_counters)
			totals_add_counters(t, &r.counters);
		if (!after_ret)
			wpstat_snapshot_free(&after);
	}
	if (run->counters == COUNTERS_ON && !run->before_ret)
		wpstat_snapshot_free(&run->before);
}

static void worker_loop(struct wpload_worker *w)
{
	struct wpload_run *run = w->run;

	for (;;) {
		if (w->id == 0)
			pass_begin(run);
		pthread_barrier_wait(&run->barrier);
		if (run->stop)
			break;
		worker_pass(w);
		pthread_barrier_wait(&run->barrier);
		if (w->id == 0)
			pass_end(run);
	}
}

static void *worker_thread(void *arg)
{
	struct wpload_worker *w = arg;
	struct wpload_run *run = w->run;
	int launch;

	pthread_mutex_lock(&run->launch_lock);
	while (!run->launch)
		pthread_cond_wait(&run->launch_cond, &run->launch_lock);
	launch = run->launch;
	pthread_mutex_unlock(&run->launch_lock);
	if (launch > 0)
		worker_loop(w);
	return NULL;
}

static void run_launch(struct wpload_run *run, int launch)
{
	pthread_mutex_lock(&run->launch_lock);
	run->launch = launch;
	pthread_cond_broadcast(&run->launch_cond);
	pthread_mutex_unlock(&run->launch_lock);
}

/* The calling thread is worker 0. */
static void run_workers(struct wpload_run *run)
{
	unsigned int i;
	int err;

	for (i = 1; i < run->opt->threads; i++) {
		struct wpload_worker *w = &run->workers[i];

		err = pthread_create(&w->thread, NULL, worker_thread, w);
		if (err) {
			run_fail(run, WPLOAD_EXIT_FAIL,
				 "cannot create thread %u: %s", i,
				 strerror(err));
			break;
		}
		w->started = true;
	}
	if (run->error_exit) {
		run_launch(run, -1);
	} else {
		print_header(run);
		run_launch(run, 1);
		worker_loop(&run->workers[0]);
	}
	for (i = 1; i < run->opt->threads; i++)
		if (run->workers[i].started)
			pthread_join(run->workers[i].thread, NULL);
}

int main(int argc, char **argv)
{
	struct sigaction sa = {
		.sa_sigaction = sigbus_handler,
		.sa_flags = SA_SIGINFO,
	};
	struct wpload_opts opt;
	struct wpload_run run;
	int ret;

	ret = parse_args(argc, argv, &opt);
	if (ret != WPLOAD_CONTINUE)
		return ret;

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL)) {
		fprintf(stderr, "wpload: sigaction(SIGBUS): %s\n",
			strerror(errno));
		return WPLOAD_EXIT_FAIL;
	}

	if (!run_init(&run, &opt))
		run_workers(&run);
	print_totals(&run);
	ret = run.error_exit;
	if (ret)
		fprintf(stderr, "wpload: %s\n", run.error_msg);
	run_destroy(&run);

	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "wpload: error writing the output: %s\n",
			strerror(errno));
		if (!ret)
			ret = WPLOAD_EXIT_FAIL;
	}
	return ret;
}
