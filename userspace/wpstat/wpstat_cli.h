/* SPDX-License-Identifier: GPL-2.0 */
#ifndef WPSTAT_CLI_H
#define WPSTAT_CLI_H

/*
 * What the wpstat CLI's files share: the command type, errors and option
 * helpers (common.c), file lists and path resolution (files.c), their
 * output (output.c).  Stalls have stalls.h.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "delta.h"
#include "fmt.h"
#include "json.h"
#include "rows.h"
#include "strout.h"
#include "file_key.h"
#include "wpstat_proc.h"

#define MODULE_NAME		"wpstat"
/* debian/changelog's first entry, passed on by userspace/Makefile. */
#ifndef WPSTAT_VERSION
#error "WPSTAT_VERSION unset: build with userspace/Makefile, which reads debian/changelog"
#endif
#define SYSFS_MODULE_DIR	"/sys/module/" MODULE_NAME
#define SYSFS_PARAMS_DIR	SYSFS_MODULE_DIR "/parameters"
#define DEBUGFS_MOUNT		"/sys/kernel/debug"
#define DEBUGFS_DIR		DEBUGFS_MOUNT "/wpstat"
#define DEBUGFS_PROBES		DEBUGFS_DIR "/probes"
#define DEBUGFS_CONFIG		DEBUGFS_DIR "/config"
#define DEBUGFS_MAGIC_NR	0x64626720
#define WATCH_DEFAULT_TOP	20
#define WATCH_MAX_INTERVAL_S	86400.0
/* --resolve walks no deeper (one open directory per level). */
#define RESOLVE_MAX_DEPTH	64
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

enum {
	EXIT_RUNTIME		= 1,
	EXIT_USAGE		= 2,
	EXIT_CANNOT_EXEC	= 126,
	EXIT_NOT_FOUND		= 127,
};

/* One line on stderr, "wpstat: " first; the exit status to return. */
#define usage_error(...)	fail(EXIT_USAGE, __VA_ARGS__)
#define runtime_error(...)	fail(EXIT_RUNTIME, __VA_ARGS__)

/* Sort fields that are not counters. */
enum {
	SORT_DEV = -1,
	SORT_INO = -2,
	SORT_GEN = -3,
};

/*
 * What is shown for one file: its row's own values (show), or the change
 * since an earlier snapshot (watch, run), kept in file_list.deltas.  Rows
 * are small: the table may hold millions.
 */
struct file_row {
	const struct wpstat_row *row;	/* identity; absolute values */
	const uint64_t *val;		/* shown values */
	const bool *avail;
	char *path;			/* resolved, or NULL */
};

struct file_list {
	const struct wpstat_snapshot *snap;	/* the counter names */
	size_t n;
	struct file_row *rows;
	struct wpstat_row *deltas;	/* backing store of val/avail, or NULL */
};

enum show_format { FMT_TABLE, FMT_JSON, FMT_PROMETHEUS };

/* Directories for --resolve: the option's value plus any operands after. */
struct dir_list {
	size_t n;
	char **dirs;
};

/* The options list_opts_parse() takes for a command. */
enum {
	LOPT_SORT_FIELD		= 1 << 0,	/* --sort FIELD: a column */
	LOPT_SORT_STALL		= 1 << 1,	/* --sort time|count */
	LOPT_TOP		= 1 << 2,	/* --top N: rows */
	LOPT_LIMIT		= 1 << 3,	/* --limit ROWS: rows */
	LOPT_PID		= 1 << 4,	/* --pid PID */
	LOPT_FORMAT		= 1 << 5,	/* --json, --format FMT */
	LOPT_INTERVAL		= 1 << 6,	/* --interval S, --count N */
	LOPT_IN_ORDER		= 1 << 7,	/* options end at an operand */
	LOPT_DIR_OPERANDS	= 1 << 8,	/* operands: more --resolve dirs */
	LOPT_COLUMNS		= 1 << 9,	/* -o COL,..., --all */
};

/*
 * The columns a table shows, in order: indices into its command's column
 * list (for a file table, a counter's index or an ICOL_* below).  Chosen
 * by -o NAME,... or --all, else the command's few defaults.
 */
#define MAX_TABLE_COLS		64
struct col_sel {
	int n;
	int col[MAX_TABLE_COLS];
};
/* A file table's columns computed from several counters. */
enum {
	ICOL_CLEANED_BY = 1000,	/* the mkclean_<trigger> with the most */
	ICOL_STALL,		/* the named waits + the faults' unnamed time */
	ICOL_WORST,		/* the largest of every maximum (kind MAX) */
};
struct list_opts {
	unsigned int flags;		/* LOPT_*: set by the caller */
	const char *columns;		/* -o, or NULL */
	bool all_columns;		/* --all */
	const char *sort_field;		/* LOPT_SORT_FIELD */
	bool sort_by_count;		/* LOPT_SORT_STALL */
	uint64_t rows;			/* LOPT_TOP, LOPT_LIMIT */
	uint64_t pid;			/* 0: every process */
	enum show_format format;
	uint64_t interval, count;	/* ns; 0: no end */
	struct dir_list dirs;		/* --resolve */
};

/*
 * Paths found for keys in earlier intervals, hits and misses alike, so a
 * --resolve walk is done once per file and not once per interval.
 */
struct path_cache {
	size_t n, cap;
	struct path_cache_entry {
		struct wpstat_row key;	/* dev, ino, gen, subvol only */
		char *path;		/* NULL: not found */
	} *e;
};

/*
 * A command: wpstat NAME [ARGS].  The handler gets argv from NAME on and
 * returns the exit status, or CMD_HELP for --help (main prints the help).
 * help is printed under the synopsis, or beside it when that is short.
 */
struct wpstat_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *synopsis;	/* without "wpstat "; may span lines */
	const char *help;	/* lines of at most 56 columns */
};

#define CMD_HELP		(-1)

extern const struct wpstat_cmd wpstat_cmd_load;
extern const struct wpstat_cmd wpstat_cmd_unload;
extern const struct wpstat_cmd wpstat_cmd_status;
extern const struct wpstat_cmd wpstat_cmd_show;
extern const struct wpstat_cmd wpstat_cmd_watch;
extern const struct wpstat_cmd wpstat_cmd_run;
extern const struct wpstat_cmd wpstat_cmd_stalls;
extern const struct wpstat_cmd wpstat_cmd_top;
extern const struct wpstat_cmd wpstat_cmd_diagnose;
extern const struct wpstat_cmd wpstat_cmd_export;
extern const struct wpstat_cmd wpstat_cmd_reset;
extern const struct wpstat_cmd wpstat_cmd_enable;
extern const struct wpstat_cmd wpstat_cmd_disable;
extern const struct wpstat_cmd wpstat_cmd_filter;
extern const struct wpstat_cmd wpstat_cmd_level;
extern const struct wpstat_cmd wpstat_cmd_histogram;

/* common.c */
int fail(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int option_error(const char *cmd, int c, char *const *argv,
		 const char *shortopts);
const char *kernel_release(void);
int parse_uint(const char *what, const char *arg, uint64_t min,
	       uint64_t max, uint64_t *out);
int parse_seconds(const char *what, const char *arg, double max,
		  uint64_t *out_ns);
bool parse_dev(const char *arg, unsigned int *maj, unsigned int *min);
char *read_first_line(const char *path);
void print_path_plain(FILE *out, const char *s);
bool module_interface_present(void);
bool debugfs_mounted(void);
int module_not_loaded(void);
char *module_version(void);
bool module_version_note(void);
int read_snapshot(struct wpstat_snapshot *s);
int control_command(const char *cmd, const char *einval,
		    const char *esrch);
int dir_list_add(struct dir_list *d, char *dir);
void catch_stop_signals(void);
bool sleep_until(uint64_t deadline);

/* files.c */
void file_list_free(struct file_list *l);
int file_list_build(const struct wpstat_snapshot *before,
		    const struct wpstat_snapshot *after,
		    struct file_list *l);
int parse_sort_field(const struct wpstat_snapshot *s,
		     const char *field, int *col);
void file_list_sort(struct file_list *l, int col);
void resolve_paths(struct file_row *rows, size_t n, char *const *named,
		   char *const *dirs, size_t ndirs);
int check_resolve_dirs(char *const *dirs, size_t ndirs);
void path_cache_free(struct path_cache *pc);
void resolve_cached(struct path_cache *pc, struct file_row *rows,
		    size_t n, char *const *dirs, size_t ndirs);

/* list_opts.c */
int list_opts_parse(const char *cmd, int argc, char **argv,
		    struct list_opts *o);
int col_sel_parse(const char *spec, bool lenient,
		  int (*lookup)(const void *ctx, const char *name),
		  const void *ctx, const char *known, struct col_sel *sel);

/* output.c */
/*
 * What started the writeback that write-protected pages: the
 * mkclean_<trigger> counters (uapi/wpstat_counters.def's
 * WPSTAT_MKCLEAN_TRIGGER list), TRIG_<id> in its order.
 */
enum mkclean_trigger_id {
#define WPSTAT_COUNTER(...)
#define WPSTAT_MKCLEAN_TRIGGER(id, ...) TRIG_##id,
#include "wpstat_counters.def"
#undef WPSTAT_MKCLEAN_TRIGGER
#undef WPSTAT_COUNTER
	NR_MKCLEAN_TRIGGERS
};
extern const struct mkclean_trigger {
	const char *column;
	const char *name;	/* as run and cleaned_by print it */
} mkclean_triggers[NR_MKCLEAN_TRIGGERS];
/*
 * A file's stall, as the stall column and the stalls table have it: the
 * time of each cause of wpstat_stalls.def (the named waits and the
 * write faults' unnamed time) summed; wpstat export --top ranks by it
 * too.  stall_parts_find() finds the causes' columns in a snapshot once;
 * file_stall_ns() sets *@any when one of them is available.
 */
struct stall_parts_at {
	size_t n;
	int col[WPSTAT_MAX_COUNTERS];	/* -1: absent */
};
void stall_parts_find(const struct wpstat_snapshot *s,
		      struct stall_parts_at *at);
uint64_t file_stall_ns(const struct stall_parts_at *at,
		       const struct file_row *f, bool *any);
int file_cols_select(const struct wpstat_snapshot *s, const char *spec,
		     bool all, struct col_sel *sel);
void print_table(FILE *out, const struct file_list *l, size_t limit,
		 const struct col_sel *sel);
const char *fmt_count(char *buf, size_t len, uint64_t v);
void json_files(FILE *out, const struct file_list *l, size_t limit,
		bool deltas);
const char *help_of(const char *counter);
void prom_metric_name(char *buf, size_t len, const char *prefix,
		      const char *counter);
const char *prom_type(const char *counter);
void prom_value(FILE *out, const char *counter, uint64_t v);
/* {dev="MAJ:MIN",ino="N",gen="N"[,path="..."]} */
void prom_subvol_label(FILE *out, const struct wpstat_row *r);
void prom_labels(FILE *out, const struct file_row *f);
void prom_gauge(FILE *out, const struct wpstat_kvlist *summary,
		const char *key, const char *metric, const char *type,
		const char *help);
void prom_file_samples(FILE *out, const char *metric,
		       const struct file_list *l, size_t n, int c);
void prom_module_gauges(FILE *out, const struct wpstat_kvlist *summary);
void print_prometheus(FILE *out, const struct file_list *l,
		      size_t limit, const struct wpstat_kvlist *summary);

#endif
