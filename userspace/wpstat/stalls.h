/* SPDX-License-Identifier: GPL-2.0 */
#ifndef WPSTAT_STALLS_H
#define WPSTAT_STALLS_H

#include "wpstat_cli.h"

#define TOP_DEFAULT_LIMIT	20
#define CGROUP2_DEFAULT_MOUNT	"/sys/fs/cgroup"
#define CGROUP2_SUPER_MAGIC_NR	0x63677270
#define CGROUP_WALK_MAX_DEPTH	64

/*
 * Why a task waited, and the columns that say how often and how long
 * (uapi/wpstat_stalls.def's WPSTAT_STALL_CAUSE list).  fault is the time
 * of the whole write fault, which includes the waits made in it (the
 * causes the .def marks IN); its unnamed part is the rest.  The waits
 * come first, the fault last (CAUSE_FAULT).
 */
enum stall_cause {
#define WPSTAT_STALL(...)
#define WPSTAT_STALL_CAUSE(id, ...) CAUSE_##id,
#include "wpstat_stalls.def"
#undef WPSTAT_STALL_CAUSE
#undef WPSTAT_STALL
	CAUSE_NR,
	CAUSE_NONE = CAUSE_NR	/* a field that is no wait (wp_caused) */
};
_Static_assert(CAUSE_FAULT == CAUSE_NR - 1,
	       "wpstat_stalls.def: the fault is the last cause, after the waits");

/* Where a cause's waits are made (the .def's fault attribute). */
enum stall_where { STALL_IN_FAULT, STALL_OUTSIDE, STALL_SELF };

struct stall_cause_info {
	const char *name;
	const char *unit;	/* what its events are, for the run report */
	enum stall_where where;
};

extern const struct stall_cause_info stall_causes[CAUSE_NR];

/* The module's stall fields (uapi/wpstat_stalls.def), in its order. */
enum stall_field {
#define WPSTAT_STALL(id, ...) STALL_##id,
#include "wpstat_stalls.def"
#undef WPSTAT_STALL
	STALL_NR
};

/* What a field says of its cause: how often, how long, the worst one. */
enum stall_role {
	STALL_EVENTS, STALL_NS, STALL_MAX_NS, STALL_UNNAMED_NS,
	STALL_CPU_NS,		/* of the unnamed time, on a CPU */
	STALL_RUNQ_NS,		/* of the unnamed time, waiting for a CPU */
	STALL_CAUSED_PTES,	/* PTEs the process's syncs write-protected */
};

struct stall_field_info {
	const char *name;	/* the /proc/wpstat/stalls column */
	enum stall_cause cause;
	enum stall_role role;
	const char *help;	/* # HELP of the Prometheus output */
};

extern const struct stall_field_info stall_fields[STALL_NR];

/* Where each field's column is in a stalls file; -1 if absent. */
struct stall_cols {
	int col[STALL_NR];
};

/* One row's stalls, or several rows' together, by cause. */
struct stall_sum {
	uint64_t events[CAUSE_NR];
	uint64_t ns[CAUSE_NR];
	uint64_t max_ns[CAUSE_NR];
	bool have_ns[CAUSE_NR];		/* the column reads a number */
	bool have_max[CAUSE_NR];
	uint64_t unnamed_ns;		/* of ns[CAUSE_FAULT], in no named wait */
	bool have_unnamed;
	uint64_t cpu_ns, runq_ns;	/* of unnamed_ns: on a CPU, waiting for one */
	bool have_cpu, have_runq;
	uint64_t wp_caused;		/* not a stall: what its syncs cleaned */
	bool have_wp_caused;
};

/*
 * One row to show: a stalls row's own values (stalls), or their change
 * since an earlier snapshot (top, run), kept in stall_list.deltas.
 */
struct stall_item {
	const struct wpstat_stall_row *row;	/* identity; absolute values */
	const uint64_t *val;			/* shown values */
	const bool *avail;
	struct stall_sum sum;			/* of the shown values */
	uint64_t stall_ns, events;
	const char *path;			/* in stall_list.files, or NULL */
	const char *cgroup_path;		/* in a cgroup_map, or NULL */
};

struct stall_list {
	const struct wpstat_stall_snapshot *snap;
	struct stall_cols cols;
	size_t n;
	struct stall_item *items;
	struct wpstat_row *deltas;	/* backing store of val/avail, or NULL */
	struct file_row *files;		/* distinct files shown, with paths */
	size_t nfiles;
};

enum stall_sort { STALL_SORT_TIME, STALL_SORT_COUNT };

/*
 * A cgroup v2 id is the inode number of the cgroup's directory under the
 * cgroup2 mount (kernfs), which readdir() returns as d_ino: one walk of
 * the tree, without a stat per entry, finds every id wanted.  Ids are
 * never reused, so a miss is remembered too.
 */
struct cgroup_map {
	size_t n, cap;
	struct cgroup_entry {
		uint64_t id;
		char *path;	/* from the mount, "/" for the root; NULL: gone */
	} *e;
	char *mount;		/* where cgroup2 is mounted, NULL if nowhere */
	bool mount_looked_up;
};

/* stalls.c */
int read_stalls(struct wpstat_stall_snapshot *s);
const char *stall_missing_column(const struct wpstat_stall_snapshot *s);
void stall_sum_add(struct stall_sum *sum, const struct stall_cols *sc,
		   const uint64_t *val, const bool *avail);
bool stall_have_time(const struct stall_sum *s);
uint64_t stall_total_ns(const struct stall_sum *s);
uint64_t stall_waits_ns(const struct stall_sum *s);
uint64_t stall_fault_own_ns(const struct stall_sum *s);
bool stall_fault_sleep_ns(const struct stall_sum *s, uint64_t *ns);
bool stall_worst_ns(const struct stall_sum *s, uint64_t *worst);
const char *stall_dominant(const struct stall_sum *s);
void stall_list_free(struct stall_list *l);
int stall_list_build(const struct wpstat_stall_snapshot *before,
		     const struct wpstat_stall_snapshot *after,
		     uint64_t pid, struct stall_list *l);
void stall_list_sort(struct stall_list *l, enum stall_sort sort);
void stall_list_resolve(struct stall_list *l, size_t limit,
			const struct file_list *known,
			struct path_cache *cache, char *const *named,
			char *const *dirs, size_t ndirs);
void cgroup_map_free(struct cgroup_map *m);
void cgroup_map_resolve(struct cgroup_map *m, struct stall_list *l,
			size_t limit);

/* stalls_output.c */
int stall_cols_select(const char *spec, bool all, struct col_sel *sel);
void print_stall_table(FILE *out, const struct stall_list *l,
		       size_t limit, const char *indent,
		       const struct col_sel *sel);
void json_stalls(FILE *out, const struct stall_list *l, size_t limit,
		 const char *indent);
void print_stall_prometheus(FILE *out, const struct stall_list *l,
			    const struct wpstat_kvlist *summary);

#endif
