// SPDX-License-Identifier: GPL-2.0
/*
 * memcpy-order: in which order does this machine's memcpy() touch the pages
 * of a mapping, for wpload's copies (a page-aligned buffer to or from a
 * page-aligned mapping)?  The experiment report uses the answer to explain
 * cold mmap cells with thousands of major faults: a copy that runs backward
 * defeats mmap readahead (see BACKWARD_COPY in experiment_outliers.py).
 *
 *   cc -O2 -o /tmp/memcpy-order scripts/experiment/memcpy-order.c
 *   /tmp/memcpy-order [SIZE...]
 *   scripts/vm/vm-run.sh --no-load --cpus 2 -- /tmp/memcpy-order
 *
 * The answer depends on the CPU and on how many there are (glibc sizes its
 * thresholds from the caches per thread): run it where the workload runs,
 * here in a guest like the experiment's.
 *
 * SIZE in bytes with an optional K, M or G suffix; the default is the
 * experiment's units from 64 KiB up.  One line per size and direction:
 * the first pages touched, and "forward" or "backward".
 *
 * Each page of the mapping starts PROT_NONE; the SIGSEGV handler records
 * the page and opens it, so the record is the order of first touches.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_TOUCHES	8

static char *watched;
static size_t page_size;
/* Written by the signal handler in the middle of memcpy(). */
static volatile long touches[MAX_TOUCHES];
static volatile long nr_touches;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	long page = ((char *)si->si_addr - watched) / (long)page_size;

	if (nr_touches < MAX_TOUCHES)
		touches[nr_touches] = page;
	nr_touches++;
	/* Async-signal-safe; a failure here faults again and loops, visibly. */
	mprotect(watched + page * page_size, page_size, PROT_READ | PROT_WRITE);
}

static int parse_size(const char *arg, size_t *size)
{
	unsigned long long v;
	unsigned int shift;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || *arg == '-')
		return -1;
	shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
	if (shift)
		end++;
	if (*end || !v || v > (~0ULL >> shift))
		return -1;
	v <<= shift;
	if (v > SIZE_MAX)
		return -1;
	*size = v;
	return 0;
}

/* Copy @size bytes into (to_map) or out of the watched mapping. */
static int probe(size_t size, int to_map)
{
	const char *dir = to_map ? "write" : "read";
	char *map, *buf;
	long n;
	int err;

	map = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		fprintf(stderr, "memcpy-order: mmap of %zu bytes: %s\n", size,
			strerror(errno));
		return -1;
	}
	err = posix_memalign((void **)&buf, page_size, size);
	if (err) {
		fprintf(stderr, "memcpy-order: %zu-byte buffer: %s\n", size,
			strerror(err));
		munmap(map, size);
		return -1;
	}
	/* Populate both first: only the order of the copy's touches counts. */
	memset(buf, 0, size);
	memset(map, 1, size);
	watched = map;
	nr_touches = 0;
	mprotect(map, size, PROT_NONE);
	if (to_map)
		memcpy(map, buf, size);
	else
		memcpy(buf, map, size);

	printf("%-5s %10zu bytes: pages", dir, size);
	for (n = 0; n < nr_touches && n < MAX_TOUCHES; n++)
		printf(" %ld", touches[n]);
	/* A read loads its first vector up front; the loop's order follows. */
	printf("%s: %s\n", nr_touches > MAX_TOUCHES ? " ..." : "",
	       nr_touches >= 3 && touches[2] < touches[1] ?
	       "backward" : "forward");
	munmap(map, size);
	free(buf);
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: memcpy-order [SIZE...]\n"
		"Print the order in which memcpy() touches the pages of a mapping,\n"
		"copying to and from a page-aligned buffer (SIZE bytes, K/M/G).\n");
}

int main(int argc, char **argv)
{
	static const char *const units[] = { "64K", "1M", "32M", "64M" };
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO };
	const char *const *args;
	int c, nargs, i, to_map;
	size_t size;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 0;
		}
		usage(stderr);
		return 2;
	}
	args = (const char *const *)argv + optind;
	nargs = argc - optind;
	if (!nargs) {
		args = units;
		nargs = sizeof(units) / sizeof(units[0]);
	}
	page_size = sysconf(_SC_PAGESIZE);
	/* Every size is checked before any output. */
	for (i = 0; i < nargs; i++) {
		if (parse_size(args[i], &size) || size < 3 * page_size) {
			fprintf(stderr,
				"memcpy-order: bad size '%s': give at least 3 pages, in bytes with K, M or G\n",
				args[i]);
			return 2;
		}
	}
	if (sigaction(SIGSEGV, &sa, NULL)) {
		perror("memcpy-order: sigaction");
		return 1;
	}
	for (to_map = 0; to_map < 2; to_map++) {
		for (i = 0; i < nargs; i++) {
			parse_size(args[i], &size);
			if (probe(size, to_map))
				return 1;
		}
	}
	return 0;
}
