// SPDX-License-Identifier: GPL-2.0
/*
 * wpfiles - touch many files once each, from one process: the benchmark's
 * W3 workload (every file is a new inode for wpstat's table, so each run
 * exercises the insert path), and the filler for the /proc/wpstat/inodes
 * read-time measurement.
 *
 *   wpfiles create DIR N [--size BYTES]   create DIR/f0000000.. f(N-1)
 *   wpfiles touch DIR N [--size BYTES] [--mode write|mmap]
 *
 * "create" makes N files of BYTES (default 4096) written with pwrite.
 * "touch" opens each existing file, stores BYTES at offset 0 (pwrite, or
 * memcpy into a MAP_SHARED mapping), and closes it.  Both print one JSON
 * line: {"op": ..., "files": N, "bytes": B, "wall_ns": T, "cpu_ns": C},
 * where T is the time of the whole loop (open, store, close; no sync) and
 * C this process's CPU time in it.
 *
 * Exit status: 0 success, 1 run-time failure, 2 usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define WPFILES_MAX_FILES	(1U << 24)
#define WPFILES_MAX_BYTES	(1U << 20)

static void usage(FILE *out)
{
	fputs("Usage: wpfiles create DIR N [--size BYTES]\n"
	      "       wpfiles touch DIR N [--size BYTES] [--mode write|mmap]\n"
	      "create: N files DIR/f0000000.. of BYTES (default 4096) each.\n"
	      "touch:  store BYTES at offset 0 of each of them once (pwrite,\n"
	      "        or memcpy into a shared mapping), one open/close each.\n"
	      "Prints {\"op\", \"files\", \"bytes\", \"wall_ns\", \"cpu_ns\"} as JSON.\n",
	      out);
}

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* This process's CPU time: leaves out other tasks and idle time. */
static uint64_t cpu_ns(void)
{
	return clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

static int parse_u32(const char *s, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || v == 0 || v > max)
		return -1;
	if (*end == 'K' || *end == 'k') {
		v *= 1024;
		end++;
	}
	if (*end || v > max)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int store_one(const char *path, const char *buf, size_t len,
		     int create, int use_mmap)
{
	int fd = open(path, create ? O_RDWR | O_CREAT | O_TRUNC : O_RDWR, 0644);
	ssize_t n;

	if (fd < 0) {
		fprintf(stderr, "wpfiles: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (use_mmap) {
		char *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
				 fd, 0);

		if (map == MAP_FAILED) {
			fprintf(stderr, "wpfiles: mmap %s: %s\n", path,
				strerror(errno));
			close(fd);
			return -1;
		}
		memcpy(map, buf, len);
		munmap(map, len);
	} else {
		n = pwrite(fd, buf, len, 0);
		if (n != (ssize_t)len) {
			fprintf(stderr, "wpfiles: write %s: %s\n", path,
				n < 0 ? strerror(errno) : "short write");
			close(fd);
			return -1;
		}
	}
	return close(fd);
}

int main(int argc, char **argv)
{
	uint32_t nfiles, size = 4096, i;
	int create, use_mmap = 0, a;
	char path[4096], *buf;
	uint64_t t0, t1, c0, c1;

	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (argc < 4 || (strcmp(argv[1], "create") && strcmp(argv[1], "touch")) ||
	    parse_u32(argv[3], WPFILES_MAX_FILES, &nfiles)) {
		usage(stderr);
		return 2;
	}
	create = !strcmp(argv[1], "create");
	for (a = 4; a < argc; a++) {
		if (!strcmp(argv[a], "--size") && a + 1 < argc) {
			if (parse_u32(argv[++a], WPFILES_MAX_BYTES, &size)) {
				usage(stderr);
				return 2;
			}
		} else if (!create && !strcmp(argv[a], "--mode") && a + 1 < argc) {
			a++;
			if (!strcmp(argv[a], "mmap")) {
				use_mmap = 1;
			} else if (strcmp(argv[a], "write")) {
				usage(stderr);
				return 2;
			}
		} else {
			usage(stderr);
			return 2;
		}
	}
	buf = malloc(size);
	if (!buf) {
		perror("wpfiles: malloc");
		return 1;
	}
	/* New data every run, so each touch really rewrites the page. */
	memset(buf, 'a' + (int)(now_ns() % 26), size);

	c0 = cpu_ns();
	t0 = now_ns();
	for (i = 0; i < nfiles; i++) {
		snprintf(path, sizeof(path), "%s/f%07" PRIu32, argv[2], i);
		if (store_one(path, buf, size, create, use_mmap)) {
			free(buf);
			return 1;
		}
	}
	t1 = now_ns();
	c1 = cpu_ns();
	printf("{\"op\": \"%s\", \"files\": %" PRIu32 ", \"bytes\": %" PRIu32
	       ", \"mode\": \"%s\", \"wall_ns\": %" PRIu64 ", \"cpu_ns\": %" PRIu64 "}\n",
	       argv[1], nfiles, size, use_mmap ? "mmap" : "write", t1 - t0, c1 - c0);
	free(buf);
	return 0;
}
