/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Parser for /proc/wpstat/inodes, shared by wpstat and wpload (and of
 * stalls, gone and summary).  A file's key, to find its row: file_key.h.
 *
 * The file's first line names the columns; the first three are always
 * "dev ino gen" and the rest are counters.  Columns are found by name, so
 * counters the module adds later need no change here.  A counter whose
 * probe is not attached reads "-" and is reported as unavailable.
 */
#ifndef WPSTAT_PROC_H
#define WPSTAT_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WPSTAT_INODES_PATH	"/proc/wpstat/inodes"
#define WPSTAT_SUMMARY_PATH	"/proc/wpstat/summary"
#define WPSTAT_COUNTERS_PATH	"/proc/wpstat/counters"
#define WPSTAT_GONE_PATH	"/proc/wpstat/gone"
#define WPSTAT_STALLS_PATH	"/proc/wpstat/stalls"
#define WPSTAT_CONTROL_PATH	"/sys/kernel/debug/wpstat/control"
#define WPSTAT_MAX_COUNTERS	64

struct wpstat_row {
	unsigned int major, minor;
	uint64_t ino;
	uint32_t gen;
	uint64_t subvol;	/* btrfs subvolume id; 0: none or not told */
	uint64_t val[WPSTAT_MAX_COUNTERS];
	bool avail[WPSTAT_MAX_COUNTERS];	/* false where the file says "-" */
};

struct wpstat_snapshot {
	int ncounters;
	char *names[WPSTAT_MAX_COUNTERS];	/* counter columns, after gen */
	bool max[WPSTAT_MAX_COUNTERS];		/* wpstat_counter_is_max(name) */
	/*
	 * The key's subvol column, appended after the counters: how many
	 * counter columns come before it, or -1 (a module without it).
	 */
	int subvol_at;
	size_t nrows;
	struct wpstat_row *rows;
};

/* Returns 0, or -errno (-ENOENT: module not loaded, -EPROTO: bad format). */
int wpstat_snapshot_read(const char *path, struct wpstat_snapshot *s);
void wpstat_snapshot_free(struct wpstat_snapshot *s);
/* Index of a counter column by name, or -1. */
int wpstat_counter_index(const struct wpstat_snapshot *s, const char *name);
/*
 * Whether a counter is a maximum (kind MAX in the module's lists,
 * uapi/wpstat_counters.def and uapi/wpstat_stalls.def): the worst single
 * event, which is neither summed nor subtracted.  A column neither list
 * names (a newer module's) is taken as a sum.  The readers keep the
 * answer per column in a snapshot's max[].
 */
bool wpstat_counter_is_max(const char *name);

/*
 * /proc/wpstat/stalls: "tgid comm dev ino gen cgroup", then counter
 * columns, one row per process and file.  The file's key and the counters
 * are a struct wpstat_row, so code for /proc/wpstat/inodes rows works on
 * them; the counter names are in @cols, which has no rows of its own.
 */
#define WPSTAT_COMM_MAX		64	/* comm, unescaped, with its NUL */

struct wpstat_stall_row {
	struct wpstat_row file;
	uint32_t tgid;
	uint64_t cgroup;		/* cgroup v2 id, 0 if unknown */
	char comm[WPSTAT_COMM_MAX];	/* the bytes, \ooo escapes undone */
};

struct wpstat_stall_snapshot {
	struct wpstat_snapshot cols;	/* counter names only */
	size_t nrows;
	struct wpstat_stall_row *rows;
};

/* As wpstat_snapshot_read(), for /proc/wpstat/stalls (@path NULL). */
int wpstat_stalls_read(const char *path, struct wpstat_stall_snapshot *s);
void wpstat_stalls_free(struct wpstat_stall_snapshot *s);
/*
 * /proc/wpstat/gone: "dev inodes", then the counter columns; one row per
 * filesystem whose rows were recycled (dev "other" past the module's
 * limit of filesystems), then "untracked -": the events no row counted.
 * With the rows of /proc/wpstat/inodes they add up to the summary.
 */
enum wpstat_gone_kind { WPSTAT_GONE_DEV, WPSTAT_GONE_OTHER, WPSTAT_GONE_UNTRACKED };

struct wpstat_gone_row {
	enum wpstat_gone_kind kind;
	struct wpstat_row counts;	/* major:minor set for WPSTAT_GONE_DEV */
	uint64_t inodes;		/* rows recycled; 0 for untracked */
};

struct wpstat_gone_snapshot {
	struct wpstat_snapshot cols;	/* counter names only */
	size_t nrows;
	struct wpstat_gone_row *rows;
};

/* As wpstat_snapshot_read(), for /proc/wpstat/gone (@path NULL). */
int wpstat_gone_read(const char *path, struct wpstat_gone_snapshot *s);
void wpstat_gone_free(struct wpstat_gone_snapshot *s);
/* Undo seq_escape()'s \ooo octal escapes; @dst is always terminated. */
void wpstat_unescape_octal(char *dst, size_t len, const char *src);

/*
 * "name value" lines, as in /proc/wpstat/summary and debugfs wpstat/config.
 * Lines starting with '#' are skipped; the value is the rest of the line.
 */
struct wpstat_kv {
	char *name;
	char *value;
};

struct wpstat_kvlist {
	size_t n;
	struct wpstat_kv *kv;
};

/* Returns 0 or -errno; on error @l is left empty. */
int wpstat_kv_read(const char *path, struct wpstat_kvlist *l);
void wpstat_kv_free(struct wpstat_kvlist *l);
/* The value of @name, or NULL. */
const char *wpstat_kv_get(const struct wpstat_kvlist *l, const char *name);

#endif
