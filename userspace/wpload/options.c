// SPDX-License-Identifier: GPL-2.0
/*
 * options.c - wpload's command line: the usage text, the option table and
 * the checks that turn a combination making no sense into a usage error.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "wpload.h"

const char *const mode_names[MODE_NR] = {
	[MODE_MMAP]		= "mmap",
	[MODE_WRITE]		= "write",
	[MODE_READ_THEN_WRITE]	= "read-then-write",
	[MODE_MMAP_READ]	= "mmap-read",
	[MODE_READ]		= "read",
};

const char *const sync_names[SYNC_NR] = {
	[SYNC_NONE]		= "none",
	[SYNC_MSYNC]		= "msync",
	[SYNC_MSYNC_ASYNC]	= "msync-async",
	[SYNC_FSYNC]		= "fsync",
	[SYNC_SFR]		= "sfr",
};

const char *const advice_names[ADVICE_NR] = {
	[ADVICE_NONE]		= "none",
	[ADVICE_RANDOM]		= "random",
	[ADVICE_SEQUENTIAL]	= "sequential",
	[ADVICE_WILLNEED]	= "willneed",
	[ADVICE_NOHUGEPAGE]	= "nohugepage",
	[ADVICE_POPULATE_WRITE]	= "populate-write",
};

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
"  --start-file PATH      once set up (opened, mapped, advised, warmed up),\n"
"                         create PATH and start the first pass only when\n"
"                         it is removed: another process may reset or read\n"
"                         counters in between\n"
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
"  --madvise ADVICE[,...] madvise(2) the mapping, in this order: random,\n"
"                         sequential, willneed, nohugepage or\n"
"                         populate-write (MADV_POPULATE_WRITE, 5.14+:\n"
"                         fault every page in writable, before the passes)\n"
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
"  --verbose              every counter on each line (default: first-write\n"
"                         and write-protect faults, cleans, and stable-page\n"
"                         waits and throttling pauses when there are any)\n"
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
	OPT_START_FILE,
	OPT_THREADS,
	OPT_WARMUP,
	OPT_NO_LATENCY,
	OPT_WRITE_BUFFER,
	OPT_NO_CREATE,
	OPT_JSON,
	OPT_QUIET,
	OPT_VERBOSE,
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
	{ "start-file",		required_argument,	NULL, OPT_START_FILE },
	{ "threads",		required_argument,	NULL, OPT_THREADS },
	{ "warmup",		optional_argument,	NULL, OPT_WARMUP },
	{ "no-latency",		no_argument,		NULL, OPT_NO_LATENCY },
	{ "write-buffer",	required_argument,	NULL, OPT_WRITE_BUFFER },
	{ "no-create",		no_argument,		NULL, OPT_NO_CREATE },
	{ "json",		no_argument,		NULL, OPT_JSON },
	{ "quiet",		no_argument,		NULL, OPT_QUIET },
	{ "verbose",		no_argument,		NULL, OPT_VERBOSE },
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
	switch (wpstat_parse_uint(arg, min, max, out)) {
	case 0:
		return 0;
	case -ERANGE:
		return usage_error("--%s: '%s' is too large (at most %" PRIu64 ")",
				   name, arg, max);
	case -EDOM:
		return usage_error("--%s must be at least %" PRIu64, name, min);
	default:
		return usage_error("--%s: invalid number '%s'", name, arg);
	}
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

/* --madvise A,B,...: each a name of advice_names[], once. */
static int parse_advice(const char *arg, unsigned int *mask)
{
	char list[128], *tok, *save = NULL;
	int choice = 0;

	if (snprintf(list, sizeof(list), "%s", arg) >= (int)sizeof(list))
		return usage_error("--madvise: '%s' is too long", arg);
	*mask = 0;
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (parse_choice("madvise", tok, advice_names, 1, ADVICE_NR,
				 &choice))
			return -1;
		if (*mask & (1U << choice))
			return usage_error("--madvise: '%s' given twice", tok);
		*mask |= 1U << choice;
	}
	if (!*mask)
		return usage_error("--madvise: no advice given");
	return 0;
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

int parse_args(int argc, char **argv, struct wpload_opts *opt)
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
	opt->advice = 0;
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
			if (parse_advice(optarg, &opt->advice))
				return WPLOAD_EXIT_USAGE;
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
		case OPT_START_FILE:
			if (!*optarg)
				return usage_error("--start-file: empty path");
			opt->start_file = optarg;
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
		case OPT_VERBOSE:
			opt->verbose = true;
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
