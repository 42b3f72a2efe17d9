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
#include <sys/sysmacros.h>
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
	/* mkclean_calls by trigger; they add up to mkclean_calls */
	int64_t mkclean_msync, mkclean_fsync, mkclean_sync_file_range;
	int64_t mkclean_sync, mkclean_flusher_periodic;
	int64_t mkclean_flusher_background, mkclean_reclaim, mkclean_other;
	/* maxima: a delta of two reads is meaningless, read them directly */
	int64_t mkwrite_max_ns, stable_wait_max_ns, bdp_pause_max_ns;
};

static const char *const wps_names[] = {
	"mkwrite_first", "mkwrite_wp", "mkwrite_ns",
	"mkclean_calls", "mkclean_ptes",
	"stable_calls", "stable_waits", "stable_wait_ns", "wb_waits",
	"dirtied",
	"bdp_calls", "bdp_fault_calls", "bdp_throttled", "bdp_pauses",
	"bdp_pause_ns",
	"mkclean_msync", "mkclean_fsync", "mkclean_sync_file_range",
	"mkclean_sync", "mkclean_flusher_periodic",
	"mkclean_flusher_background", "mkclean_reclaim", "mkclean_other",
	"mkwrite_max_ns", "stable_wait_max_ns", "bdp_pause_max_ns",
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

/* A maximum (the worst single event), merged by max, never added. */
static inline int wps_is_max(size_t i)
{
	const char *n = wps_names[i];
	size_t len = strlen(n);

	return len > 7 && !strcmp(n + len - 7, "_max_ns");
}

/* Counts since @before; a maximum keeps its value @after. */
static inline struct wps wps_delta(const struct wps *after,
				   const struct wps *before)
{
	const int64_t *a = (const int64_t *)after, *b = (const int64_t *)before;
	struct wps d;
	int64_t *dv = (int64_t *)&d;
	size_t i;

	for (i = 0; i < WPS_N; i++)
		dv[i] = (a[i] < 0 || b[i] < 0) ? -1 :
			wps_is_max(i) ? a[i] : a[i] - b[i];
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
 * The level the suites run at: $WPSTAT_LEVEL (guest-check.sh runs them at
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

/* ---- /proc/wpstat/stalls ---------------------------------------------- */

#define STALLS_PATH	"/proc/wpstat/stalls"

/* One row of /proc/wpstat/stalls, fields by header name; -1 for "-". */
struct stall_row {
	long tgid;
	unsigned int major, minor;
	unsigned long long ino;
	unsigned int gen;
	char comm[64];
	int64_t fault_first, fault_wp, fault_ns, fault_max_ns;
	int64_t stable_waits, stable_ns, stable_max_ns;
	int64_t wb_waits, wb_ns, wb_max_ns;
	int64_t pauses, pause_ns, pause_max_ns;
};

static const char *const stall_names[] = {
	"fault_first", "fault_wp", "fault_ns", "fault_max_ns",
	"stable_waits", "stable_ns", "stable_max_ns",
	"wb_waits", "wb_ns", "wb_max_ns",
	"pauses", "pause_ns", "pause_max_ns",
};
#define STALL_N	(sizeof(stall_names) / sizeof(stall_names[0]))

/*
 * Every row of the stalls file for @path's inode (all of them if @path is
 * NULL) into @rows (at most @max): the number found, or -1.
 */
static inline int read_stalls(const char *path, struct stall_row *rows, int max)
{
	static char buf[1 << 20];
	char *line, *save = NULL, *tok, *s2;
	int col[64], ncol = 0, n = 0, i, c;
	struct wpstat_file_key key;

	/* The superblock's device: on btrfs stat()'s st_dev is not it. */
	if (path && wpstat_path_key(path, &key))
		return -1;
	if (wps_slurp(STALLS_PATH, buf, sizeof(buf)) <= 0)
		return -1;
	line = strtok_r(buf, "\n", &save);
	/* The published start of the header, then the causes by name. */
	if (!line || strncmp(line, "tgid comm dev ino gen cgroup ", 29))
		return -1;
	for (tok = strtok_r(line, " ", &s2); tok && ncol < 64;
	     tok = strtok_r(NULL, " ", &s2), ncol++) {
		col[ncol] = -1;
		for (i = 0; i < (int)STALL_N; i++)
			if (!strcmp(tok, stall_names[i]))
				col[ncol] = i;
	}
	while ((line = strtok_r(NULL, "\n", &save)) && n < max) {
		struct stall_row r = { 0 };
		int64_t *v = &r.fault_first;

		for (c = 0, tok = strtok_r(line, " ", &s2); tok && c < ncol;
		     tok = strtok_r(NULL, " ", &s2), c++) {
			if (c == 0)
				r.tgid = atol(tok);
			else if (c == 1)
				snprintf(r.comm, sizeof(r.comm), "%s", tok);
			else if (c == 2)
				sscanf(tok, "%u:%u", &r.major, &r.minor);
			else if (c == 3)
				r.ino = strtoull(tok, NULL, 10);
			else if (c == 4)
				r.gen = strtoul(tok, NULL, 10);
			else if (col[c] >= 0)
				v[col[c]] = strcmp(tok, "-") ? strtoll(tok, NULL, 10) : -1;
		}
		/* A deleted file's row may share its inode number. */
		if (path && (r.ino != key.ino || r.major != key.major ||
			     r.minor != key.minor ||
			     (key.have_gen && r.gen != key.gen)))
			continue;
		rows[n++] = r;
	}
	return n;
}

/* @tgid's row for @path, zero if none; the number of such rows (0 or 1). */
static inline int stall_of(const char *path, long tgid, struct stall_row *out)
{
	struct stall_row rows[64];
	int n = read_stalls(path, rows, 64), i, found = 0;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < n; i++) {
		if (rows[i].tgid == tgid) {
			*out = rows[i];
			found++;
		}
	}
	return n < 0 ? -1 : found;
}

#endif
