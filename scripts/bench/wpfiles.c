// SPDX-License-Identifier: GPL-2.0
/*
 * wpfiles - touch many files once each, from one process: the benchmark's
 * W3 workload (every file is a new inode for wpstat's table, so each run
 * exercises the insert path), and the filler for the /proc/wpstat/inodes
 * read-time measurement; W4, page faults that are none of wpstat's
 * business (anonymous memory), for what a probe on every fault costs; and
 * W5, inodes destroyed by the thousand (pipes and socket pairs), for what
 * the probe on __destroy_inode costs a machine that does nothing else; and
 * W6, reads and writes that wait for a slow device, in a process that maps
 * nothing, for what level timing's probes on every page-bit sleep cost it.
 *
 *   wpfiles create DIR N [--size BYTES]   create DIR/f0000000.. f(N-1)
 *   wpfiles touch DIR N [--size BYTES] [--mode write|mmap]
 *   wpfiles anon PAGES [--passes P]
 *   wpfiles pipes N [--passes P]
 *   wpfiles waits FILE N
 *
 * "create" makes N files of BYTES (default 4096) written with pwrite.
 * "touch" opens each existing file, stores BYTES at offset 0 (pwrite, or
 * memcpy into a MAP_SHARED mapping), and closes it.  Both print one JSON
 * line: {"op": ..., "files": N, "bytes": B, "wall_ns": T, "cpu_ns": C},
 * where T is the time of the whole loop (open, store, close; no sync) and
 * C this process's CPU time in it.
 *
 * "anon" maps PAGES pages of anonymous private memory (no huge pages:
 * MADV_NOHUGEPAGE), stores one byte to each page (one write fault each,
 * which allocates and zeroes the page), and unmaps them, P times
 * (default 8).  It prints {"op": "anon", "pages": N, "passes": P,
 * "faults": F, "wall_ns": T, "cpu_ns": C}, F being the page faults this
 * process took in the loop (getrusage: minor and major), T and C the
 * loop's time as above (mmap, stores, munmap).
 *
 * "pipes" creates a pipe (pipe2) and closes both ends, then a socket pair
 * (socketpair, AF_UNIX, SOCK_STREAM) and closes both ends, N times, P
 * times over (default 1).  Each pipe is one inode (pipefs) and each
 * socket pair two (sockfs), and each is destroyed (__destroy_inode) by
 * the close of its last end, in this process: a broker's connections and
 * wake-up pipes, none of them of wpstat's business.  It prints {"op":
 * "pipes", "pairs": N, "passes": P, "inodes": I, "wall_ns": T, "cpu_ns":
 * C}, I being the inodes created (and destroyed) in the loop, 3 * N * P.
 *
 * "waits" makes FILE 1 MiB (256 pages) of written, synced data, turns its
 * readahead off (POSIX_FADV_RANDOM) and drops it from the page cache, and
 * starts a writer process.  Then, a pass of up to 256 pages at a time
 * until N pages are done: it reads each page, uncached (pread: the read
 * waits for the device, asleep on the page's lock), has the writer dirty
 * them all (pwrite, in the writer: not this process's time), then writes
 * each back and waits for it (sync_file_range: asleep on PG_writeback)
 * and drops it again (POSIX_FADV_DONTNEED).  It maps nothing and writes
 * nothing itself: none of it is a write fault or a write(2).  It prints
 * {"op": "waits", "ops": N, "wall_ns": T, "cpu_ns": C}.
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
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WPFILES_MAX_FILES	(1U << 24)
#define WPFILES_MAX_BYTES	(1U << 20)
#define WPFILES_MAX_PAGES	(1U << 20)
#define WPFILES_MAX_PASSES	(1U << 16)
#define WPFILES_MAX_PAIRS	(1U << 24)

static void usage(FILE *out)
{
	fputs("Usage: wpfiles create DIR N [--size BYTES]\n"
	      "       wpfiles touch DIR N [--size BYTES] [--mode write|mmap]\n"
	      "       wpfiles anon PAGES [--passes P]\n"
	      "       wpfiles pipes N [--passes P]\n"
	      "       wpfiles waits FILE N\n"
	      "create: N files DIR/f0000000.. of BYTES (default 4096) each.\n"
	      "touch:  store BYTES at offset 0 of each of them once (pwrite,\n"
	      "        or memcpy into a shared mapping), one open/close each.\n"
	      "Prints {\"op\", \"files\", \"bytes\", \"wall_ns\", \"cpu_ns\"} as JSON.\n"
	      "anon:   map PAGES pages of anonymous memory, store a byte to each\n"
	      "        (a fault each), unmap; P times (default 8).  Prints\n"
	      "        {\"op\", \"pages\", \"passes\", \"faults\", \"wall_ns\", \"cpu_ns\"}.\n"
	      "pipes:  create and close a pipe, then a socket pair, N times; P\n"
	      "        times over (default 1): 3 inodes destroyed each time.\n"
	      "        Prints {\"op\", \"pairs\", \"passes\", \"inodes\", \"wall_ns\",\n"
	      "        \"cpu_ns\"}.\n"
	      "waits:  N pages of FILE (1 MiB, made and dropped from the cache\n"
	      "        first) read uncached, dirtied by a writer process, written\n"
	      "        back and waited for.  Prints {\"op\", \"ops\", \"wall_ns\",\n"
	      "        \"cpu_ns\"}.\n",
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

/* This process's page faults so far (minor and major). */
static uint64_t faults_now(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (uint64_t)ru.ru_minflt + (uint64_t)ru.ru_majflt;
}

/*
 * "wpfiles MODE N [--passes P]": N (1..@max) into *@n, P into *@passes
 * (left at its default without the option); nonzero after printing the
 * usage.
 */
static int parse_count_passes(int argc, char **argv, uint32_t max,
			      uint32_t *n, uint32_t *passes)
{
	int a;

	if (argc < 3 || parse_u32(argv[2], max, n))
		goto usage;
	for (a = 3; a < argc; a++) {
		if (strcmp(argv[a], "--passes") || a + 1 >= argc ||
		    parse_u32(argv[a + 1], WPFILES_MAX_PASSES, passes))
			goto usage;
		a++;
	}
	return 0;
usage:
	usage(stderr);
	return -1;
}

/*
 * W4: anonymous write faults, none of them on a file.  A fresh mapping
 * each pass, so every store faults; no huge pages, so one fault is one
 * page.
 */
static int anon_faults(int argc, char **argv)
{
	uint32_t pages, passes = 8, p, i;
	uint64_t t0, t1, c0, c1, f0, f1;
	long psz = sysconf(_SC_PAGESIZE);
	size_t len;
	char *map;

	if (parse_count_passes(argc, argv, WPFILES_MAX_PAGES, &pages, &passes))
		return 2;
	len = (size_t)pages * (size_t)psz;
	f0 = faults_now();
	c0 = cpu_ns();
	t0 = now_ns();
	for (p = 0; p < passes; p++) {
		map = mmap(NULL, len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (map == MAP_FAILED) {
			perror("wpfiles: mmap");
			return 1;
		}
		/* EINVAL without CONFIG_TRANSPARENT_HUGEPAGE: no huge pages anyway. */
		if (madvise(map, len, MADV_NOHUGEPAGE) && errno != EINVAL) {
			perror("wpfiles: madvise");
			return 1;
		}
		for (i = 0; i < pages; i++)
			((volatile char *)map)[(size_t)i * (size_t)psz] = (char)(p + 1);
		munmap(map, len);
	}
	t1 = now_ns();
	c1 = cpu_ns();
	f1 = faults_now();
	printf("{\"op\": \"anon\", \"pages\": %" PRIu32 ", \"passes\": %" PRIu32
	       ", \"faults\": %" PRIu64 ", \"wall_ns\": %" PRIu64
	       ", \"cpu_ns\": %" PRIu64 "}\n",
	       pages, passes, f1 - f0, t1 - t0, c1 - c0);
	return 0;
}

/* Both ends of a pipe or a socket pair, closed at once. */
static int close_both(const int fd[2], const char *what)
{
	int e0 = close(fd[0]), e1 = close(fd[1]);

	if (e0 || e1) {
		fprintf(stderr, "wpfiles: close %s: %s\n", what, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * W5: inodes destroyed, none of them wpstat's.  Every close of the last
 * end of a pipe or a socket frees its inode in the closing task (the
 * final fput runs as task work before close returns to user space), so
 * __destroy_inode fires inside this loop, as often as the inodes are
 * made.  No data is sent: the inode, not the buffer, is what is measured.
 */
static int pipe_inodes(int argc, char **argv)
{
	uint32_t pairs, passes = 1, p, i;
	uint64_t t0, t1, c0, c1, inodes = 0;
	int fd[2];

	if (parse_count_passes(argc, argv, WPFILES_MAX_PAIRS, &pairs, &passes))
		return 2;
	c0 = cpu_ns();
	t0 = now_ns();
	for (p = 0; p < passes; p++) {
		for (i = 0; i < pairs; i++) {
			if (pipe2(fd, O_CLOEXEC)) {
				perror("wpfiles: pipe2");
				return 1;
			}
			if (close_both(fd, "pipe"))
				return 1;
			inodes++;	/* one pipefs inode for both ends */
			if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fd)) {
				perror("wpfiles: socketpair");
				return 1;
			}
			if (close_both(fd, "socketpair"))
				return 1;
			inodes += 2;	/* a sockfs inode per socket */
		}
	}
	t1 = now_ns();
	c1 = cpu_ns();
	printf("{\"op\": \"pipes\", \"pairs\": %" PRIu32 ", \"passes\": %" PRIu32
	       ", \"inodes\": %" PRIu64 ", \"wall_ns\": %" PRIu64
	       ", \"cpu_ns\": %" PRIu64 "}\n",
	       pairs, passes, inodes, t1 - t0, c1 - c0);
	return 0;
}

#define WAITS_PAGES	256

/* Write every page of @fd's first WAITS_PAGES with @buf; 0 or -1. */
static int write_pages(int fd, const char *buf, size_t len)
{
	uint32_t i;

	for (i = 0; i < WAITS_PAGES; i++)
		if (pwrite(fd, buf, len, (off_t)i * len) != (ssize_t)len)
			return -1;
	return 0;
}

/*
 * The writer of W6, a process of its own (its CPU time is not the
 * measured one's): dirties every page each time it reads a byte from
 * @cmd, and answers with a byte on @ack; exits at end of file.
 */
static int waits_writer(int fd, int cmd, int ack, const char *buf, size_t len)
{
	char c;

	while (read(cmd, &c, 1) == 1)
		if (write_pages(fd, buf, len) || write(ack, &c, 1) != 1)
			return 1;
	return 0;
}

/*
 * W6: sleeps for a page bit that are no write fault's, in a process that
 * maps nothing and writes nothing: buffered reads waiting for their pages
 * to be read in (a page is locked until its read ends), and writeback
 * waits for pages another process dirtied.  A pass reads each page of
 * the file uncached, has the writer dirty them all, then writes each
 * back and waits for it, page by page; an op is a page.
 */
static int page_waits(int argc, char **argv)
{
	const int flags = SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
			  SYNC_FILE_RANGE_WAIT_AFTER;
	uint64_t t0, t1, c0, c1;
	static char buf[4096];
	int fd, cmd[2], ack[2];
	uint32_t ops, done, i;
	pid_t writer;
	off_t off;
	char c = 'w';

	if (argc != 4 || parse_u32(argv[3], WPFILES_MAX_FILES, &ops)) {
		usage(stderr);
		return 2;
	}
	fd = open(argv[2], O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror("wpfiles: open");
		return 1;
	}
	memset(buf, 'w', sizeof(buf));
	/* Written, clean, out of the cache, and no readahead brings it back. */
	if (write_pages(fd, buf, sizeof(buf)) || fsync(fd) ||
	    posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM) ||
	    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)) {
		perror("wpfiles: set-up");
		return 1;
	}
	if (pipe2(cmd, O_CLOEXEC) || pipe2(ack, O_CLOEXEC)) {
		perror("wpfiles: pipe2");
		return 1;
	}
	writer = fork();
	if (writer < 0) {
		perror("wpfiles: fork");
		return 1;
	}
	if (!writer) {
		close(cmd[1]);
		close(ack[0]);
		_exit(waits_writer(fd, cmd[0], ack[1], buf, sizeof(buf)));
	}
	close(cmd[0]);
	close(ack[1]);
	c0 = cpu_ns();
	t0 = now_ns();
	for (done = 0; done < ops; done += i) {
		for (i = 0; i < WAITS_PAGES && done + i < ops; i++)
			if (pread(fd, buf, sizeof(buf), (off_t)i * sizeof(buf)) !=
			    (ssize_t)sizeof(buf))
				goto fail;
		if (write(cmd[1], &c, 1) != 1 || read(ack[0], &c, 1) != 1)
			goto fail;
		for (i = 0; i < WAITS_PAGES && done + i < ops; i++) {
			off = (off_t)i * sizeof(buf);
			if (sync_file_range(fd, off, sizeof(buf), flags) ||
			    posix_fadvise(fd, off, sizeof(buf), POSIX_FADV_DONTNEED))
				goto fail;
		}
		/* A last, short pass: the pages past it clean and out too. */
		if (i < WAITS_PAGES &&
		    (sync_file_range(fd, 0, 0, flags) ||
		     posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)))
			goto fail;
	}
	t1 = now_ns();
	c1 = cpu_ns();
	close(cmd[1]);
	close(ack[0]);
	waitpid(writer, NULL, 0);
	close(fd);
	printf("{\"op\": \"waits\", \"ops\": %" PRIu32 ", \"wall_ns\": %" PRIu64
	       ", \"cpu_ns\": %" PRIu64 "}\n", ops, t1 - t0, c1 - c0);
	return 0;
fail:
	perror("wpfiles: waits");
	close(cmd[1]);
	waitpid(writer, NULL, 0);
	return 1;
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
	if (argc >= 2 && !strcmp(argv[1], "anon"))
		return anon_faults(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "waits"))
		return page_waits(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "pipes"))
		return pipe_inodes(argc, argv);
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
