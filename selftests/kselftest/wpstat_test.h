/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the wpstat kselftests (wpstat_test*.c, in an archive
 * every test binary links): reading one file's counters and the stalls
 * file, writing the control file, reloading the module, the page-touching
 * workloads whose fault counts the tests predict, and a slow device.
 *
 * What needs the harness (ASSERT_*, TH_LOG, _metadata) is a macro here:
 * kselftest_harness.h defines globals and may be included by one
 * translation unit of a binary only, the test's.
 */
#ifndef WPSTAT_TEST_H
#define WPSTAT_TEST_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>

#include "fmt.h"
#include "file_key.h"
#include "wpstat_proc.h"

#define PAGE	4096UL
/*
 * A scheduler tick, in ms: dm-delay releases a bio once jiffies reach its
 * submission's + msecs_to_jiffies(delay) (dm-delay.c, delay_bio()), which
 * may be up to a tick before delay ms have passed.  HZ=250 in Debian's
 * amd64 kernels, all five (CONFIG_HZ in their configs).
 */
#define WPS_TICK_MS	4
#define CONFIG_PATH	"/sys/kernel/debug/wpstat/config"
#define NOBODY	65534

/*
 * One file's counters, in /proc/wpstat/inodes column order; -1 = "-".
 * The fields are the module's counter list (uapi/wpstat_counters.def), so
 * a counter the module gains is here, and in wps_names[], without an edit.
 * Maxima (kind MAX) are the worst single event: a delta of two reads is
 * meaningless, read them directly.
 */
struct wps {
#define WPSTAT_COUNTER(id, name, kind, needs, level, help)	int64_t name;
#include "wpstat_counters.def"
#undef WPSTAT_COUNTER
};

#define WPS_N	(sizeof(struct wps) / sizeof(int64_t))

/* The counters' names, in the order of struct wps. */
extern const char *const wps_names[];

/* Read a whole small file into @buf; its length or -errno. */
ssize_t wps_slurp(const char *path, char *buf, size_t size);
/* Write @s into the file at @path (a sysctl, a module parameter): 0 or -errno. */
int wps_put(const char *path, const char *s);
/*
 * The value of @name in a "name value" file (/proc/wpstat/summary, debugfs
 * config: libwpstat's parser) into @buf: 0, -ENOENT or -errno.
 */
int wps_kv_value(const char *path, const char *name, char *buf, size_t len);
/* A value from /proc/wpstat/summary, or -1 (none, or "-"). */
int64_t wps_summary(const char *name);
/* The module file to load: $WPSTAT_MODULE, or wpstat.ko. */
const char *wps_module(void);
int wps_loaded(void);

/* @r's counters into @w (0 where @r is NULL): 0 or -EPROTO. */
int wps_from_row(const struct wpstat_snapshot *s, const struct wpstat_row *r,
		 struct wps *w);
/*
 * Counters of the file named by @path, or (when @path is NULL) of the
 * one with @key, which may be gone: take the key with wpstat_fd_key()
 * while it is open.  0 where the file has no row yet (-1 for a counter
 * the module does not produce at all now).  Returns 0, or
 * -errno if the module's file cannot be read or parsed.
 */
int wps_read_row(const char *path, const struct wpstat_file_key *key,
		 struct wps *w);
int wps_read(const char *path, struct wps *w);
int wps_read_key(const struct wpstat_file_key *key, struct wps *w);
/* Counter @i is a maximum (the worst single event), merged by max. */
int wps_is_max(size_t i);
/* Counts since @before; a maximum keeps its value @after. */
struct wps wps_delta(const struct wps *after, const struct wps *before);

/* True if the running kernel is at least @major.@minor. */
int wps_kernel_at_least(int major, int minor);
/*
 * folio_mkclean() calls btrfs makes writing back one contiguous dirty
 * range of @folios order-0 folios: once each on 5.10, twice since 6.1,
 * 3 * @folios - 1 on 7.2 (wpstat_predict.c says why, and asserts it).
 */
long wps_btrfs_mkclean_calls(long folios);
/*
 * True if the running kernel is built with KASAN (kasan_report in
 * /proc/kallsyms: make check-debug's kernel).  Its faults cost
 * milliseconds of CPU time, so a prediction that needs a writer faster
 * than the device, or fault time made mostly of waits, does not hold.
 */
int wps_kernel_sanitized(void);
/* Write one command to the control file: 0 or -errno. */
int wps_control_len(const char *cmd, size_t len);
int wps_control(const char *cmd);
/* WPSTAT_STRESS=1 (make stress): the long forms of the reliability tests. */
int wps_stress(void);
/*
 * The level the suites run at: $WPSTAT_LEVEL (guest-check.sh runs them at
 * both), "counts" when unset, as the module's default.
 */
const char *wps_suite_level(void);
/*
 * Unload (if loaded) and load the module with @params at the suite's
 * level (unless @params names one): the exit status.
 */
int wps_reload(const char *params);
/* Whether the loaded module runs at level timing (1), counts (0), or -1. */
int wps_timing(void);
/*
 * Whether the module's own counter list (/proc/wpstat/counters: name level
 * available help) says @name is produced only at level timing; -1 if the
 * list cannot be read or lacks @name.
 */
int wps_timing_only(const char *name);
/* Areas in /proc/vmallocinfo allocated by code of module [wpstat]. */
int wpstat_vmalloc_areas(void);
/* @key's value in /proc/meminfo (kB), or -1. */
long wps_meminfo_kb(const char *key);
/* Drop to nobody (no supplementary groups): 0 or -1. */
int drop_privileges(void);

/* Reload the module with @params (wps_reload()), or fail the test. */
#define ASSERT_RELOAD(params) do {					\
	const char *__params = (params);				\
									\
	ASSERT_EQ(0, wps_reload(__params))				\
		TH_LOG("reloading with '%s' failed", __params ?: "");	\
	ASSERT_TRUE(wps_loaded());					\
} while (0)

/*
 * A column only level timing produces (mkwrite_ns, mkclean_ptes, the
 * per-call denominators stable_calls, bdp_calls, bdp_fault_calls): equal
 * to @expected at level timing, '-' (-1) at level counts.
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

/* Likewise for bounds: @lo <= @actual <= @hi at level timing. */
#define EXPECT_TIMED_RANGE(lo, hi, actual) do {				\
	int __t = wps_timing();						\
									\
	ASSERT_LE(0, __t) TH_LOG("cannot read the module's level");	\
	if (__t) {							\
		EXPECT_LE(lo, actual);					\
		EXPECT_GE(hi, actual);					\
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
 * The counters of the file named by @path (or, with WPS_SINCE_KEY, keyed
 * by @key) since *@base, which becomes now: the delta.  Fails the test if
 * they cannot be read.  A GNU statement expression: usable as a value.
 */
#define WPS_SINCE_ROW(path, key, base) ({				\
	struct wps __now;						\
									\
	ASSERT_EQ(0, wps_read_row(path, key, &__now))			\
		TH_LOG("cannot read counters");				\
	struct wps __d = wps_delta(&__now, (base));			\
	*(base) = __now;						\
	__d;								\
})
#define WPS_SINCE(path, base)		WPS_SINCE_ROW(path, NULL, base)
#define WPS_SINCE_KEY(key, base)	WPS_SINCE_ROW(NULL, key, base)

/* ---- workloads ---------------------------------------------------------- */

/*
 * Scratch file of @npages under $WPSTAT_FS_DIR/@fs, made with ftruncate
 * (no page cached, no block allocated).  Returns the fd or -errno.
 */
int wps_scratch(const char *fs, const char *name, size_t npages,
		char *path, size_t pathlen);
/* Write back, then drop clean page cache, dentries and inodes: 0 or -errno. */
int wps_drop_caches(void);
/* One store to the first byte of each page. */
void wps_store_pages(char *map, size_t npages, char val);
/* One load from each page. */
unsigned long wps_load_pages(const char *map, size_t npages);
/*
 * The folio sizes the kernel really used, for predictions that must hold
 * with large folios (7.2's ext4, xfs) as with order-0 ones:
 * wps_store_pages_absent() stores like wps_store_pages() and returns how
 * many stores found no PTE (/proc/self/pagemap, read right before each
 * store): the first-write faults the kernel must take, whether a fault
 * maps one page or a whole folio.  wps_folios() counts the folios behind
 * @npages mapped pages (pagemap PFNs and /proc/kpageflags; root).  Both
 * return -errno on error.
 */
long wps_store_pages_absent(char *map, size_t npages, char val);
/*
 * The /proc/kpageflags word of the page mapped at @map (root), or 0 with
 * -errno in *@err; KPF_WRITEBACK (bit 8): under writeback now.
 */
#define WPS_KPF_WRITEBACK	(1ULL << 8)
uint64_t wps_page_flags(const char *map, int *err);
long wps_folios(const char *map, size_t npages);
/* wps_folios() of a file's first @npages pages, all cached, through a
 * read-only mapping of its own (read faults: no counter moves).
 */
long wps_file_folios(int fd, size_t npages);
/* A shared read-write mapping of @fd's first @npages pages, or NULL. */
char *map_shared(int fd, size_t npages);
/* One page-sized pwrite to each page of [first, first + n): 0 or -errno. */
int pwrite_pages(int fd, size_t first, size_t n, char val);
/* Map @fd, one store per page, msync, unmap: 0 or -errno. */
int touch_file(int fd, size_t npages);

/* ---- accounting: rows + gone + untracked = totals ------------------------ */

/* Per counter: the summary total, the sum over rows, over gone lines. */
struct wps_account {
	int64_t total[WPS_N], rows[WPS_N], gone[WPS_N];
	int64_t nrows, gone_inodes;
};

/*
 * A consistent account (counting disabled: nothing inserted or taken
 * over meanwhile): re-read until no compaction moved rows between the
 * reads.  0, or -1.
 */
int wps_read_account(struct wps_account *a);
/*
 * The counters whose rows and gone lines (a maximum: the largest) do not
 * make their total, each said in @why; how many.
 */
int wps_account_check(const struct wps_account *a, char *why, size_t len);

#define EXPECT_ACCOUNTED(a) do {					\
	char __why[2048] = "";						\
									\
	EXPECT_EQ(0, wps_account_check((a), __why, sizeof(__why)))	\
		TH_LOG("%s", __why);					\
} while (0)

/* ---- /proc/wpstat/stalls ------------------------------------------------ */

#define STALLS_PATH	WPSTAT_STALLS_PATH

/*
 * One row of /proc/wpstat/stalls, fields by header name; -1 for "-".  The
 * causes are the module's list (uapi/wpstat_stalls.def), so a field the
 * module gains is here without an edit: read_stalls() refuses a header
 * whose causes are not these, in order.
 */
struct stall_row {
	long tgid;
	unsigned int major, minor;
	unsigned long long ino;
	unsigned int gen;
	unsigned long long subvol;	/* btrfs subvolume, else 0 */
	char comm[64];
#define WPSTAT_STALL(id, name, ...)	int64_t name;
#include "wpstat_stalls.def"
#undef WPSTAT_STALL
};

/*
 * Every row of the stalls file for @path's inode (all of them if @path is
 * NULL) into @rows (at most @max): the number found, or -1.
 */
int read_stalls(const char *path, struct stall_row *rows, int max);
/* @tgid's row for @path, zero if none; the number of such rows (0 or 1). */
int stall_of(const char *path, long tgid, struct stall_row *out);

/* ---- the filesystem suites ---------------------------------------------- */

/*
 * Whether guest-check.sh could not mount $WPSTAT_FS_DIR/@name for
 * wpstat_fs or wpstat_nfs: 1 with the first line of its NAME.unavailable
 * (why) in @why, else 0.
 */
int wps_fs_unavailable(const char *name, char *why, size_t len);
/*
 * The file a filesystem suite (wpstat_fs, wpstat_fuse, wpstat_nfs) maps
 * and counts; each one's FIXTURE holds one, opened by WPS_FS_FILE_OPEN()
 * and ended by wps_fs_file_release().  Its counters are read by path
 * (@counted: the file itself, or overlayfs's upper file) or, on FUSE and
 * NFS, by the key of the open fd: a close there writes back (fuse_flush,
 * nfs_file_flush), so reading by path would move what is counted.
 */
struct wps_fs_file {
	char path[256];		/* where the test opens and maps it */
	char counted[300];	/* whose row holds its counts; "": by key */
	int fd;
	char *map;		/* NULL until mapped */
	size_t npages;
	struct wps base;	/* the counters at the last WPS_FS_SINCE() */
	struct wpstat_file_key key;
};

enum wps_fs_how {
	WPS_FS_MAP = 1,		/* map it shared, read-write */
	WPS_FS_RANDOM = 2,	/* ... with MADV_RANDOM: no fault readahead */
	WPS_FS_BY_KEY = 4,	/* count by the fd's key, not by path */
};

/* Before setup can fail: nothing to release yet. */
void wps_fs_file_init(struct wps_fs_file *f);
/*
 * A scratch file of @npages (wps_scratch(@fs, @name)), set up as @how
 * says; @upper, if set, is the directory under $WPSTAT_FS_DIR whose file
 * of the same name holds the counts.  NULL, or what failed.
 */
const char *wps_fs_file_open(struct wps_fs_file *f, const char *fs,
			     const char *name, size_t npages, unsigned int how,
			     const char *upper);
/* Unmap and close; unlink too unless @keep (FUSE: see wpstat_fuse.c). */
void wps_fs_file_release(struct wps_fs_file *f, bool keep);

#define WPS_FS_FILE_OPEN(f, fs, name, npages, how, upper) do {			const char *__why = wps_fs_file_open(f, fs, name, npages, how, upper); 										ASSERT_EQ(NULL, __why) TH_LOG("%s on %s", __why, fs);		} while (0)

/* The file's counters since the previous call (see WPS_SINCE_ROW). */
#define WPS_FS_SINCE(f)								WPS_SINCE_ROW((f)->counted[0] ? (f)->counted : NULL,				      (f)->counted[0] ? NULL : &(f)->key, &(f)->base)

/* "name value" for each counter of @d that moved, into @buf. */
const char *wps_delta_text(const struct wps *d, char *buf, size_t len);
#define WPS_LOG_DELTA(what, d) do {						char __text[2048];																TH_LOG("%s: %s", what, wps_delta_text(d, __text, sizeof(__text))); } while (0)

/* ---- the reliability fixtures ------------------------------------------- */

/*
 * The common part of FIXTURE(rel) in wpstat_ctlfuzz and wpstat_privacy:
 * the module loaded, unfiltered and enabled, and a scratch file of
 * @npages on ext4 to probe it with.  A fixture holds a struct wps_rel and
 * whatever else its tests need.
 */
struct wps_rel {
	char probe[256];
	int probe_fd;
};

#define WPS_REL_SETUP(r, npages) do {					\
	struct wps_rel *__r = (r);					\
									\
	__r->probe_fd = -1;						\
	ASSERT_TRUE(wps_loaded()) TH_LOG("wpstat is not loaded");	\
	ASSERT_EQ(0, wps_control("filter none"));			\
	ASSERT_EQ(0, wps_control("enable"));				\
	__r->probe_fd = wps_scratch("ext4", "rel", (npages), __r->probe, \
				    sizeof(__r->probe));		\
	ASSERT_LE(0, __r->probe_fd);					\
} while (0)

/*
 * Load the module back if a test unloaded it (and failed), unfilter,
 * enable, remove the probe file: 0, or -1 if the module stayed out.
 */
int wps_rel_restore(struct wps_rel *r);
#define WPS_REL_TEARDOWN(r) do {					\
	if (wps_rel_restore(r))						\
		TH_LOG("could not load the module back");		\
} while (0)

/* ---- a slow device ------------------------------------------------------ */

/*
 * For the tests that need writeback in flight: a memory-backed null_blk
 * device, optionally behind dm-delay, with a filesystem mounted at SLOW_DIR.
 */
#define SLOW_DIR	"/tmp/wpstat-slow"

/*
 * A forked child's loop: fsync(@fd), sleep @gap_ms, until @end_ns
 * (wpstat_now_ns()); exits 0, or 2 when an fsync fails.
 */
void wps_fsync_loop(int fd, uint64_t end_ns, long gap_ms)
	__attribute__((noreturn));
/* system() of a printf-formatted command. */
int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* tracefs, for the suites that set kprobes and trace instances of their own. */
#define TRACEFS		"/sys/kernel/tracing"
/* Mount tracefs unless it is (*@mounted: this call did): 0 or -ENODEV. */
int wps_tracefs_mount(bool *mounted);
/* Write a printf-formatted line over a control file: 0 or -errno. */
int put_file(const char *path, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Append @text to a control file (kprobe_events): 0 or -errno. */
int append_file(const char *path, const char *text);
/*
 * The kprobe event @event (group/name) on
 * balance_dirty_pages_ratelimited_flags(), _ratelimited() on 5.10, with
 * its mapping argument, replacing one of that name: 0 or -errno.
 */
int wps_kprobe_bdp_ratelimited(const char *event);
void slowdev_down(void);
/*
 * Filesystem @fs on a fresh null_blk device with @params, mounted at
 * SLOW_DIR ("zfs": a pool wpslow, with guest-check's zpool on PATH).  With @write_delay_ms, mount it through dm-delay: mkfs and
 * reads stay fast, every write bio completes @write_delay_ms late.
 * stable_writes is read by the filesystem at mount only (fs/super.c), so
 * it is set on the device to be mounted before mounting.
 */
int slowdev_up(const char *fs, const char *params, int write_delay_ms,
	       int stable_writes);
/* The same, reads too completing @read_delay_ms late (once mounted). */
int slowdev_up_rw(const char *fs, const char *params, int read_delay_ms,
		  int write_delay_ms, int stable_writes);

/*
 * null_blk's parameters for a device of about 2 MB/s: one 4 KiB request
 * in flight, each completing after 2 ms (null_blk's own mbps= limit
 * stalled mkfs for minutes).  Dirty throttling's device.
 */
#define SLOWDEV_2MBPS	"irqmode=2 completion_nsec=2000000 hw_queue_depth=1 max_sectors=8"

/*
 * The machine's dirty limits, to put back as they were.  Each limit is
 * set either in bytes or as a ratio (writing one zeroes the other), and
 * the kernel refuses a dirty_bytes below two pages, 0 included: so the
 * one that was set is written back, never a 0.
 */
struct dirty_limits {
	long long bytes, bg_bytes, ratio, bg_ratio;
};

/* The four limits now: 0, or -1 when one cannot be read. */
int dirty_limits_save(struct dirty_limits *d);
void dirty_limits_restore(const struct dirty_limits *d);

#endif
