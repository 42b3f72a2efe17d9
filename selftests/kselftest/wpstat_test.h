/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the wpstat kselftests: reading one file's counters,
 * writing the control file, reloading the module, and the page-touching
 * workloads whose fault counts the tests predict.
 */
#ifndef WPSTAT_TEST_H
#define WPSTAT_TEST_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "wpstat_proc.h"

#define PAGE	4096UL

/* One file's counters, in /proc/wpstat/inodes column order; -1 = "-". */
struct wps {
	int64_t mkwrite_first, mkwrite_wp, mkwrite_ns;
	int64_t mkclean_calls, mkclean_ptes;
	int64_t stable_calls, stable_waits, stable_wait_ns, wb_waits;
	int64_t dirtied;
	int64_t bdp_calls, bdp_fault_calls, bdp_throttled, bdp_pauses;
	int64_t bdp_pause_ns;
};

static const char *const wps_names[] = {
	"mkwrite_first", "mkwrite_wp", "mkwrite_ns",
	"mkclean_calls", "mkclean_ptes",
	"stable_calls", "stable_waits", "stable_wait_ns", "wb_waits",
	"dirtied",
	"bdp_calls", "bdp_fault_calls", "bdp_throttled", "bdp_pauses",
	"bdp_pause_ns",
};

#define WPS_N	(sizeof(wps_names) / sizeof(wps_names[0]))

/* Read a whole small file into @buf; its length or -errno. */
static inline ssize_t wps_slurp(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, total = 0;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf + total, size - 1 - total)) > 0)
		total += n;
	close(fd);
	buf[total] = '\0';
	return n < 0 ? -errno : total;
}

/* A value from /proc/wpstat/summary, or -1. */
static inline int64_t wps_summary(const char *name)
{
	char buf[8192], *line, *save = NULL;
	size_t len = strlen(name);

	if (wps_slurp(WPSTAT_SUMMARY_PATH, buf, sizeof(buf)) < 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, name, len) && line[len] == ' ')
			return line[len + 1] == '-' ? -1 : strtoll(line + len + 1, NULL, 10);
	return -1;
}

static inline const char *wps_module(void)
{
	const char *m = getenv("WPSTAT_MODULE");

	return m ? m : "wpstat.ko";
}

static inline int wps_loaded(void)
{
	return access(WPSTAT_INODES_PATH, F_OK) == 0;
}

/* @r's counters into @w (0 where @r is NULL): 0 or -EPROTO. */
static inline int wps_from_row(const struct wpstat_snapshot *s,
			       const struct wpstat_row *r, struct wps *w)
{
	int64_t *v = (int64_t *)w;
	size_t i;

	memset(w, 0, sizeof(*w));
	for (i = 0; i < WPS_N; i++) {
		int c = wpstat_counter_index(s, wps_names[i]);

		if (c < 0)
			return -EPROTO;
		if (r)
			v[i] = r->avail[c] ? (int64_t)r->val[c] : -1;
	}
	return 0;
}

/*
 * Counters of the file named by @path, or (when @path is NULL) of the
 * one with @key, which may be gone: take the key with wpstat_fd_key()
 * while it is open.  0 where the file has no row yet (-1 for a counter
 * the module does not produce at all now).  Returns 0, or
 * -errno if the module's file cannot be read or parsed.
 */
static inline int wps_read_row(const char *path,
			       const struct wpstat_file_key *key, struct wps *w)
{
	struct wpstat_snapshot s;
	int ret;

	const struct wpstat_row *r;
	int64_t *v = (int64_t *)w;
	size_t i;

	memset(w, 0, sizeof(*w));
	ret = wpstat_snapshot_read(NULL, &s);
	if (ret)
		return ret;
	r = path ? wpstat_snapshot_find_path(&s, path) :
		   wpstat_snapshot_find_key(&s, key);
	ret = wps_from_row(&s, r, w);
	wpstat_snapshot_free(&s);
	/* No row: 0, or "-" where the module produces no such count now. */
	for (i = 0; !r && !ret && i < WPS_N; i++)
		if (wps_summary(wps_names[i]) < 0)
			v[i] = -1;
	return ret;
}

static inline int wps_read(const char *path, struct wps *w)
{
	return wps_read_row(path, NULL, w);
}

static inline int wps_read_key(const struct wpstat_file_key *key,
			       struct wps *w)
{
	return wps_read_row(NULL, key, w);
}

static inline struct wps wps_delta(const struct wps *after,
				   const struct wps *before)
{
	const int64_t *a = (const int64_t *)after, *b = (const int64_t *)before;
	struct wps d;
	int64_t *dv = (int64_t *)&d;
	size_t i;

	for (i = 0; i < WPS_N; i++)
		dv[i] = (a[i] < 0 || b[i] < 0) ? -1 : a[i] - b[i];
	return d;
}

/* True if the running kernel is at least @major.@minor. */
static inline int wps_kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return 0;
	return ma > major || (ma == major && mi >= minor);
}

/* Write one command to the control file: 0 or -errno. */
static inline int wps_control_len(const char *cmd, size_t len)
{
	int fd = open(WPSTAT_CONTROL_PATH, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int err;

	if (fd < 0)
		return -errno;
	n = write(fd, cmd, len);
	err = errno;
	close(fd);
	if (n < 0)
		return -err;
	return n == (ssize_t)len ? 0 : -EIO;
}

static inline int wps_control(const char *cmd)
{
	return wps_control_len(cmd, strlen(cmd));
}

/* WPSTAT_STRESS=1 (make stress): the long forms of the reliability tests. */
static inline int wps_stress(void)
{
	const char *s = getenv("WPSTAT_STRESS");

	return s && *s && strcmp(s, "0");
}


/*
 * The level the suites run at: $WPSTAT_LEVEL (run-guest.sh runs them at
 * both), "counts" when unset, as the module's default.
 */
static inline const char *wps_suite_level(void)
{
	const char *l = getenv("WPSTAT_LEVEL");

	return l && *l ? l : "counts";
}

/*
 * Unload (if loaded) and load the module with @params at the suite's
 * level (unless @params names one): the exit status.
 */
static inline int wps_reload(const char *params)
{
	char cmd[512];

	if (wps_loaded() && system("rmmod wpstat"))
		return -1;
	snprintf(cmd, sizeof(cmd), "insmod %s %s%s %s 2>/dev/null",
		 wps_module(), params && strstr(params, "level=") ? "" : "level=",
		 params && strstr(params, "level=") ? "" : wps_suite_level(),
		 params ? params : "");
	return system(cmd);
}

/* Whether the loaded module runs at level timing (1), counts (0), or -1. */
static inline int wps_timing(void)
{
	char buf[32];
	int fd = open("/sys/module/wpstat/parameters/level", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return !strncmp(buf, "timing", 6) ? 1 : !strncmp(buf, "counts", 6) ? 0 : -1;
}

/*
 * Whether the module's own counter list (/proc/wpstat/counters: name level
 * available help) says @name is produced only at level timing; -1 if the
 * list cannot be read or lacks @name.
 */
static inline int wps_timing_only(const char *name)
{
	char buf[8192], *line, *save = NULL;
	size_t len = strlen(name);

	if (wps_slurp(WPSTAT_COUNTERS_PATH, buf, sizeof(buf)) < 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, name, len) && line[len] == ' ')
			return !strncmp(line + len + 1, "timing ", 7);
	return -1;
}

/*
 * A column only level timing produces (mkwrite_ns, mkclean_ptes): equal to
 * @expected at level timing, '-' (-1) at level counts.
 */
#define EXPECT_TIMED_EQ(expected, actual) do {				\
	int __t = wps_timing();						\
									\
	ASSERT_LE(0, __t) TH_LOG("cannot read the module's level");	\
	if (__t) {							\
		EXPECT_EQ(expected, actual);				\
	} else {							\
		EXPECT_EQ(-1, actual) TH_LOG("%s at level counts", #actual); \
	}								\
} while (0)

/* Likewise for a lower bound: @bound < @actual at level timing. */
#define EXPECT_TIMED_LT(bound, actual) do {				\
	int __t = wps_timing();						\
									\
	ASSERT_LE(0, __t) TH_LOG("cannot read the module's level");	\
	if (__t) {							\
		EXPECT_LT(bound, actual);				\
	} else {							\
		EXPECT_EQ(-1, actual) TH_LOG("%s at level counts", #actual); \
	}								\
} while (0)

/*
 * Scratch file of @npages under $WPSTAT_FS_DIR/@fs, made with ftruncate
 * (no page cached, no block allocated).  Returns the fd or -errno.
 */
static inline int wps_scratch(const char *fs, const char *name, size_t npages,
			      char *path, size_t pathlen)
{
	const char *dir = getenv("WPSTAT_FS_DIR");
	int fd;

	snprintf(path, pathlen, "%s/%s/%s.%d", dir ? dir : "/tmp/wpstat", fs,
		 name, getpid());
	unlink(path);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, npages * PAGE)) {
		close(fd);
		return -errno;
	}
	return fd;
}

/* One store to the first byte of each page. */
static inline void wps_store_pages(char *map, size_t npages, char val)
{
	size_t i;

	for (i = 0; i < npages; i++)
		*(volatile char *)(map + i * PAGE) = val;
}

/* One load from each page. */
static inline unsigned long wps_load_pages(const char *map, size_t npages)
{
	unsigned long sum = 0;
	size_t i;

	for (i = 0; i < npages; i++)
		sum += *(const volatile char *)(map + i * PAGE);
	return sum;
}

#endif
