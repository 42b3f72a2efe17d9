/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wpstat.h - shared definitions of the wpstat module.
 *
 * The module's parts, each in its own file, call each other in this
 * order only, each calling only those below it (no circle; checked by
 * selftests/host/test-kmod-layers.sh on the built objects):
 *
 *   wpstat_main.c      init and exit
 *   wpstat_debugfs.c   debugfs wpstat/ and the control parser (reset)
 *   wpstat_procfs.c    /proc/wpstat/{inodes,stalls,summary,gone,counters}
 *   wpstat_attach.c    attachment registry: levels, skip_probes, floor
 *   wpstat_handlers.c  the entry-only callbacks; the handlers' set-up
 *   wpstat_tracepoints.c  the tracepoint probes
 *   wpstat_kretprobes.c   the return-probe handlers and tasks' timed scopes
 *   wpstat_floor.c     make bench's floor: the same points, empty handlers
 *   wpstat_probe_core.c   switches, filters, caller ranges, wait classes
 *   wpstat_stalls.c    events into the process x file stall table
 *   wpstat_stalls_table.c  that table: rows, recycling, reset, summary
 *   wpstat_tctx.c      per-task call contexts
 *   wpstat_table.c     the inode table and the per-CPU statistics
 *   wpstat_hist.c      the duration histograms
 *   wpstat_rows.c      the row store both tables are made of
 */
#ifndef _WPSTAT_H
#define _WPSTAT_H

#include <linux/types.h>
#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/ftrace.h>
#include <linux/kprobes.h>
#include <linux/kref.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>

/* Levels: what is attached, and so what it costs (wpstat_attach.c). */
enum wpstat_level {
	WPL_COUNTS,	/* entry-only callbacks and tracepoints: the default */
	WPL_TIMING,	/* adds return hooks for the _ns columns */
	WPL_NR
};

/* Attachment points (wpstat_probes.def). */
enum wpstat_probe_id {
#define WPSTAT_PROBE(id, ...) WPP_##id,
#include "wpstat_probes.def"
#undef WPSTAT_PROBE
	WPP_NR
};

/* Per-inode counters, in the column order of /proc/wpstat/inodes. */
enum wpstat_counter {
#define WPSTAT_COUNTER(id, ...) WPC_##id,
#include "wpstat_counters.def"
#undef WPSTAT_COUNTER
	WPC_NR
};

/* How a counter merges events, rows and CPUs. */
enum wpstat_kind {
	WPK_SUM,		/* added up */
	WPK_MAX,		/* the worst single event */
};

struct wpstat_counter_info {
	const char *name;	/* column and summary name */
	const char *help;
	u32 needs;		/* BIT(WPP_*) of the points it is made from */
	u8 level;		/* the lowest level that produces it */
	u8 kind;		/* enum wpstat_kind */
};

/* Unsized: its BUILD_BUG_ON (wpstat_table.c) sees what the .def made. */
extern const struct wpstat_counter_info wpstat_counters[WPC_NR];

/* Log2-ns duration histograms. */
enum wpstat_hist_id {
	WPH_MKWRITE,
	WPH_STABLE_WAIT,
	WPH_BDP_PAUSE,
	WPH_NR
};
#define WPSTAT_HIST_BUCKETS	64

/*
 * An inode is named by (s_dev, i_ino, i_generation), never by pointer: the
 * inode may be evicted and its memory reused long before anyone reads us.
 */
/*
 * A file: (dev, ino, generation), the mount it is on (its bdi's id),
 * which /proc does not show, and on btrfs its subvolume.  btrfs, FUSE
 * and NFS get an anonymous s_dev that the next mount reuses, and inode
 * numbers and generations that a fresh filesystem repeats; with the
 * mount, a file of the next mount gets a row of its own instead of
 * reviving the old one.  A btrfs snapshot's files keep the original's
 * inode numbers and generations on the same superblock: the subvolume
 * (its root id, 0 elsewhere) keeps them apart.
 *
 * Both share one word, sb: the bdi id's low 32 bits below, the
 * subvolume's above (wpstat_key_fill()), so that every handler copies
 * and compares 24 bytes, not 32.  Two keys collide only where both
 * numbers pass 2^32: four billion bdis registered (a mount, a loop
 * device) between two mounts of one anonymous s_dev whose files repeat
 * the same inode number and generation, or four billion subvolumes made
 * on one btrfs (a root id is the filesystem's highest plus one).
 */
struct wpstat_key {
	u64 ino;
	u32 dev;
	u32 gen;
	u64 sb;
};

/* The subvolume of a key's sb word (a stall key's too). */
static __always_inline u64 wpstat_sb_subvol(u64 sb)
{
	return sb >> 32;
}

/*
 * A row.  A row of a destroyed inode may be taken over for another inode
 * (wpstat_table.c, wpstat_table_recycle()): its state counts the times,
 * so a lock-free reader that sees the same state before and after it
 * read the key read one key, not two halves.
 */
struct wpstat_entry {
	struct wpstat_key key;
	int valid;			/* published; set once, never cleared */
	u32 state;			/* WPSTAT_ROW_*, + WPSTAT_ROW_NEXT per taking */
	u32 listed;			/* on the table's free list (its lock) */
	atomic64_t count[WPC_NR];
};

#define WPSTAT_ROW_LIVE		0
#define WPSTAT_ROW_GONE		1	/* its inode destroyed: reclaimable */
#define WPSTAT_ROW_TAKEN	2	/* being given to another inode */
#define WPSTAT_ROW_FREE		3	/* taken, not needed: no counts, no slot */
#define WPSTAT_ROW_KIND		3
#define WPSTAT_ROW_NEXT		4	/* the state's count of takings */

static __always_inline u32 wpstat_row_kind(u32 state)
{
	return state & WPSTAT_ROW_KIND;
}



/*
 * Per-CPU sums that belong to one table and the tables compaction builds
 * from it, so a reset swaps them too but a compaction never moves them:
 * totals only grow between resets.  For a WPK_MAX counter each CPU keeps
 * its own maximum.
 */
struct wpstat_sums {
	u64 total[WPC_NR];
	u64 untracked[WPC_NR];		/* the part of total without a row */
	u64 untracked_events;		/* lookups that found no slot */
	u64 bdp_unattributed;		/* throttles whose write was lost */
};

/*
 * What the histograms count: every event, one filesystem, or one file.
 * Changed only by swapping in new, empty histograms (wpstat_hist_scope()).
 */
enum wpstat_hist_scope_kind {
	WPHS_ALL,
	WPHS_DEV,
	WPHS_INODE,
};

struct wpstat_hist_scope {
	int kind;			/* enum wpstat_hist_scope_kind */
	u32 dev;			/* WPHS_DEV, WPHS_INODE */
	u64 ino;			/* WPHS_INODE */
	u32 gen;
	bool any_gen;			/* no generation given: any */
};

struct wpstat_hist_counts {
	u64 n[WPH_NR][WPSTAT_HIST_BUCKETS];
};

struct wpstat_hists {
	struct wpstat_hist_scope scope;
	struct wpstat_hist_counts __percpu *counts;
	struct rcu_head rcu;
};

/* Rows reclaimed from one filesystem (the last slot: all others). */
#define WPSTAT_GONE_DEVS	64
struct wpstat_gone {
	u32 dev;			/* 0: unused, or "other" in the last */
	u64 inodes;
	u64 count[WPC_NR];
};

/*
 * The preallocated row store of both tables (wpstat_rows.c): rows handed
 * out in order and never moved within a table, found through an
 * open-addressed index of row number + 1 (0 = empty), at most half full.
 * The allocation, the size parameter and the /proc read pass are shared;
 * each table's hot lookup is its own, over these fields.
 */
struct wpstat_rows {
	struct kref ref;
	u32 max;			/* rows */
	u32 index_mask;
	u32 seed;			/* of the index hash */
	u32 row_size;
	u32 valid_off;			/* of the row's int valid: published */
	atomic_t nr_reserved;		/* rows handed out */
	u32 *index;
	void *mem;			/* the rows */
	void (*release)(struct wpstat_rows *r);	/* the table's own parts */
};

/* A table's size parameter (wpstat_rows_param_ops): 1..limit rows. */
struct wpstat_rows_param {
	unsigned int *val;
	unsigned int limit;
};

/* ---- wpstat_hist.c ------------------------------------------------------ */
void wpstat_hist_add(enum wpstat_hist_id h, const struct wpstat_key *key,
		     u64 ns);
int wpstat_hist_set_scope(const struct wpstat_hist_scope *scope);
void wpstat_hist_scope_show(struct seq_file *m);
int wpstat_hist_read(struct wpstat_hist_counts *sum);
struct wpstat_hists *wpstat_hists_reset_prepare(void);
void wpstat_hists_reset_abort(struct wpstat_hists *new);
void wpstat_hists_reset_commit(struct wpstat_hists *new);
int wpstat_hist_init(void);
void wpstat_hist_exit(void);

/* ---- wpstat_rows.c ------------------------------------------------------ */
extern const struct kernel_param_ops wpstat_rows_param_ops;

int wpstat_rows_init(struct wpstat_rows *r, u32 max, size_t row_size,
		     size_t valid_off, gfp_t gfp_extra,
		     void (*release)(struct wpstat_rows *r));
void wpstat_rows_put(struct wpstat_rows *r);
size_t wpstat_rows_bytes(size_t row_size);
size_t wpstat_rows_mem(u32 max, size_t row_size);

/*
 * What each part of the module has allocated (the summary's
 * module_bytes): bytes in all, of which each adds to *@cpu the part a
 * possible CPU costs.
 */
size_t wpstat_table_bytes(size_t *cpu);
size_t wpstat_stalls_bytes(void);
size_t wpstat_stall_cpu_bytes(size_t *cpu);
size_t wpstat_hist_bytes(size_t *cpu);
size_t wpstat_tctx_bytes(void);
size_t wpstat_handlers_bytes(size_t *cpu);
size_t wpstat_attach_bytes(size_t *cpu, unsigned int *nkrp);

/*
 * A table's compaction requests (both tables): at most one compaction
 * queued or running (WPSTAT_COMPACT_QUEUED), and a request made while one
 * runs (WPSTAT_COMPACT_KICKED) makes it run once more.  Without that,
 * rows that died during a run held a full table until some later event
 * asked again, and that event found no row.
 */
#define WPSTAT_COMPACT_QUEUED	0
#define WPSTAT_COMPACT_KICKED	1

/*
 * Any context: true if the caller is to queue the compaction.  A full
 * table asks at every event, on every CPU: each bit is read before it is
 * written, so that asking again while a compaction is queued or running
 * writes nothing and the word's cache line stays shared.
 */
static __always_inline bool wpstat_compact_request(unsigned long *bits)
{
	if (!test_bit(WPSTAT_COMPACT_KICKED, bits))
		set_bit(WPSTAT_COMPACT_KICKED, bits);
	/*
	 * KICKED before QUEUED is read: pairs with wpstat_compact_end(),
	 * which clears QUEUED before it reads KICKED, so a request that
	 * sees QUEUED still set is seen by the run that clears it.
	 */
	smp_mb();
	if (test_bit(WPSTAT_COMPACT_QUEUED, bits))
		return false;
	return !test_and_set_bit(WPSTAT_COMPACT_QUEUED, bits);
}

/* The work item, before it compacts. */
static inline void wpstat_compact_begin(unsigned long *bits)
{
	clear_bit(WPSTAT_COMPACT_KICKED, bits);
	/* A request after this is seen by the run's reads of the table. */
	smp_mb__after_atomic();
}

/*
 * The work item, after: true if it is to queue itself once more (itself,
 * not through the irq_work: cancel_delayed_work_sync() at exit stops a
 * work item that queues itself).
 */
static inline bool wpstat_compact_end(unsigned long *bits)
{
	clear_bit(WPSTAT_COMPACT_QUEUED, bits);
	/* Pairs with the request's test_and_set_bit(): one of us queues. */
	smp_mb__after_atomic();
	return test_bit(WPSTAT_COMPACT_KICKED, bits) &&
	       !test_and_set_bit(WPSTAT_COMPACT_QUEUED, bits);
}

/*
 * A table's compaction pace (both tables): runs since load, their CPU
 * time, and the earliest the next may start.  After a run of d ns of CPU
 * the next waits WPSTAT_COMPACT_DUTY - 1 times as long (and at least the
 * table's own interval), so each table's compaction takes at most 0.5 %
 * of one CPU, the two at most 1 %, whatever kicks them: a churn of files,
 * processes exiting all the time, more live rows than room.  Written by
 * the work item (the table's mutex held), read anywhere.
 */
#define WPSTAT_COMPACT_DUTY	200
struct wpstat_compact_pace {
	unsigned long next;		/* jiffies */
	u64 runs;
	u64 cpu_ns;
};

void wpstat_compact_paced(struct wpstat_compact_pace *p, u64 cpu0,
			  unsigned long min_interval);
unsigned long wpstat_compact_delay(const struct wpstat_compact_pace *p);

/*
 * The inode table: a row store of entries.  Probes insert lock-free
 * with cmpxchg and never allocate; a new file takes a gone file's row
 * over, under the table's raw spinlock, when the table is full; reset and
 * compaction swap in a new
 * table under RCU (wpstat_table.c).  Readers pin the table they started
 * on with a reference, so a swap during a long read cannot mix two tables.
 */
struct wpstat_sums_owner;

struct wpstat_table {
	struct wpstat_rows r;
	struct wpstat_entry *entries;	/* r.mem */
	u32 reset_gen;			/* resets since load; kept by compaction */
	/*
	 * This table's own number, never another's for the module's life: a
	 * per-CPU hint names its table by it, as a freed table's address
	 * can be the next one's.
	 */
	u64 serial;
	atomic_t nr_tracked;		/* of them published */
	atomic_t nr_evicted;		/* of them marked gone */
	/*
	 * Taking rows over, the free list and the gone totals: any context,
	 * so interrupts are off while it is held.  Lookups and inserts of
	 * rows never used take no lock.
	 */
	raw_spinlock_t lock;
	u32 *free;			/* rows marked gone or free, each listed once */
	u32 nr_free;
	u32 tombs;			/* index slots rows taken over left */
	u64 recycled;			/* rows taken over since the last reset */
	u64 compactions;		/* since the last reset */
	struct wpstat_gone *gone;	/* [WPSTAT_GONE_DEVS] */
	struct wpstat_sums __percpu *sums;
	struct wpstat_sums_owner *sums_owner;	/* shared by compactions */
};

/* Where a handler's event is counted: a table, and a row or none. */
struct wpstat_ref {
	struct wpstat_table *t;
	struct wpstat_entry *e;		/* NULL: no slot (untracked) */
};

/* Per-CPU statistics of the attachment points, for the module's life. */
struct wpstat_probe_stats {
	u64 hits[WPP_NR];
	u64 missed[WPP_NR];		/* ftrace recursion guard refusals */
};

/* ---- wpstat_table.c ---------------------------------------------------- */
extern unsigned int wpstat_max_inodes;
extern struct wpstat_table __rcu *wpstat_table;
extern struct wpstat_probe_stats __percpu *wpstat_probe_stats;

int wpstat_table_init(void);
void wpstat_table_exit(void);
struct wpstat_table *wpstat_table_pin(void);
void wpstat_table_put(struct wpstat_table *t);
size_t wpstat_entry_bytes(void);
struct wpstat_hists;
/* A reset's new inode table and histograms (wpstat_table.c). */
struct wpstat_table_reset {
	struct wpstat_table *table;
	struct wpstat_hists *hists;
};
int wpstat_table_reset_prepare(struct wpstat_table_reset *r);
void wpstat_table_reset_commit(struct wpstat_table_reset *r);
void wpstat_table_reset_abort(struct wpstat_table_reset *r);
int wpstat_compact(void);
u64 wpstat_compact_runs(void);
u64 wpstat_compact_cpu_ns(void);
bool wpstat_inode_gone(const struct wpstat_key *key);
struct wpstat_ref wpstat_lookup_slow(struct wpstat_table *t,
				     const struct wpstat_key *key);

static __always_inline bool wpstat_key_equal(const struct wpstat_key *a,
					     const struct wpstat_key *b)
{
	return a->ino == b->ino && a->dev == b->dev && a->gen == b->gen &&
	       a->sb == b->sb;
}

/*
 * Whether @e is @key's row, live or gone, as a lock-free reader sees it:
 * not being taken, and the same state across the key's read (*@state).
 */
static __always_inline bool wpstat_entry_is(const struct wpstat_entry *e,
					    const struct wpstat_key *key,
					    u32 *state)
{
	/* Pairs with the release in wpstat_table_recycle(). */
	u32 s = smp_load_acquire(&e->state);

	if (wpstat_row_kind(s) == WPSTAT_ROW_TAKEN ||
	    !wpstat_key_equal(&e->key, key))
		return false;
	/* The key is read before the state is read again. */
	smp_rmb();
	*state = s;
	return READ_ONCE(e->state) == s;
}

/*
 * The entry each CPU found last: a writer streams events for one inode, so
 * most lookups skip the hash.  Only probe handlers use it, with preemption
 * disabled; one nested in another (an interrupt) may overwrite the pair
 * half-way, so a hit is trusted only after checking it against the
 * current table: index in range, published, same key.  Never dereferenced
 * for another table, so a stale pair is harmless after a swap.
 */
struct wpstat_last {
	struct wpstat_table *table;
	u32 idx;			/* into table->entries */
};
extern struct wpstat_last __percpu *wpstat_last;

/*
 * Called from probe handlers, which run with preemption disabled: an RCU
 * read-side section that the synchronize_rcu() of a table swap waits for.
 * The result names the table the event is counted in; its entry is NULL
 * when the inode found no slot (counted as untracked).  Inline: it runs
 * for every event, and the usual answer is the entry of the last one.
 */
static __always_inline struct wpstat_ref wpstat_lookup(const struct wpstat_key *key)
{
	struct wpstat_table *t = rcu_dereference_sched(wpstat_table);
	struct wpstat_last *last = this_cpu_ptr(wpstat_last);
	u32 idx = READ_ONCE(last->idx);

	if (likely(READ_ONCE(last->table) == t && t && idx < t->r.max)) {
		struct wpstat_entry *e = &t->entries[idx];
		u32 s;

		if (likely(wpstat_entry_is(e, key, &s) &&
			   wpstat_row_kind(s) == WPSTAT_ROW_LIVE))
			return (struct wpstat_ref){ t, e };
	}
	return wpstat_lookup_slow(t, key);
}

static __always_inline void wpstat_add(struct wpstat_ref r,
				       enum wpstat_counter c, u64 delta)
{
	if (unlikely(!r.t))
		return;
	if (likely(r.e))
		atomic64_add(delta, &r.e->count[c]);
	else
		this_cpu_add(r.t->sums->untracked[c], delta);
	this_cpu_add(r.t->sums->total[c], delta);
}

static __always_inline void wpstat_count(const struct wpstat_key *key,
					 enum wpstat_counter c, u64 delta)
{
	wpstat_add(wpstat_lookup(key), c, delta);
}

/*
 * Which reset's tables an event was counted in.  An event counted where
 * it starts and timed where it ends (a wait, a pause, a fault) adds its
 * time only to the tables its count went to: a reset in between drops
 * the time instead of splitting the event across two tables.  Compaction
 * keeps the generation, and moves counts and times alike.
 */
struct wpstat_gen {
	u32 inodes;
	u32 stalls;
};

static __always_inline u32 wpstat_ref_gen(struct wpstat_ref r)
{
	return r.t ? r.t->reset_gen : 0;
}

/* Raise @v to at least @x; any context. */
static inline void wpstat_atomic_max(atomic64_t *v, u64 x)
{
	s64 old = atomic64_read(v);

	while ((u64)old < x && !atomic64_try_cmpxchg(v, &old, x))
		;
}

/*
 * Timed calls, waits or pauses of @ns in all ended, the longest @longest:
 * add @ns to counter @sum and raise the WPK_MAX counter @max of @r's row
 * to @longest.  Slow paths only.
 */
static inline void wpstat_add_times(struct wpstat_ref r, enum wpstat_counter sum,
				    enum wpstat_counter max, u64 ns, u64 longest)
{
	struct wpstat_sums *sums;

	if (unlikely(!r.t))
		return;
	wpstat_add(r, sum, ns);
	sums = this_cpu_ptr(r.t->sums);
	if (likely(r.e))
		wpstat_atomic_max(&r.e->count[max], longest);
	else if (sums->untracked[max] < longest)
		sums->untracked[max] = longest;
	if (sums->total[max] < longest)
		sums->total[max] = longest;
}

/* One timed call, wait or pause of @ns ended. */
static inline void wpstat_add_time(struct wpstat_ref r, enum wpstat_counter sum,
				   enum wpstat_counter max, u64 ns)
{
	wpstat_add_times(r, sum, max, ns, ns);
}

/* The same for @key's row, if it is in the tables of generation @gen. */
static inline void wpstat_count_time(const struct wpstat_key *key,
				     enum wpstat_counter sum,
				     enum wpstat_counter max, u64 ns, u32 gen)
{
	struct wpstat_ref r = wpstat_lookup(key);

	if (likely(r.t && r.t->reset_gen == gen))
		wpstat_add_time(r, sum, max, ns);
}

/* Counter @c of @key's row, if it is in the tables of generation @gen. */
static inline void wpstat_count_gen(const struct wpstat_key *key,
				    enum wpstat_counter c, u64 delta, u32 gen)
{
	struct wpstat_ref r = wpstat_lookup(key);

	if (likely(r.t && r.t->reset_gen == gen))
		wpstat_add(r, c, delta);
}

void wpstat_mark_gone(const struct wpstat_key *key);
void wpstat_count_bdp_unattributed(void);
u64 wpstat_sums_read(struct wpstat_table *t, size_t offset, bool max);
u64 wpstat_table_swap_count(void);
#define WPSTAT_SUMS(t, field) \
	wpstat_sums_read(t, offsetof(struct wpstat_sums, field), false)
/* Counter @c's per-CPU @array (total or untracked), merged as @c merges. */
#define WPSTAT_COUNTER_SUMS(t, array, c) \
	wpstat_sums_read(t, offsetof(struct wpstat_sums, array[c]), \
			 wpstat_counters[c].kind == WPK_MAX)
u64 wpstat_probe_stat(size_t offset);
#define WPSTAT_PROBE_STAT(field) \
	wpstat_probe_stat(offsetof(struct wpstat_probe_stats, field))

/* ---- wpstat_stalls.c, wpstat_stalls_table.c ------------------------------- */

/*
 * The causes a process x file row counts, in /proc/wpstat/stalls order
 * (wpstat_stalls.def); each _MAX right after its _NS (wpstat_stall_time()).
 */
enum wpstat_stall_field {
#define WPSTAT_STALL(id, ...) WPS_##id,
#include "wpstat_stalls.def"
#undef WPSTAT_STALL
	WPS_NR
};

/*
 * Each field's column name, the inode counter whose sources it needs (the
 * column reads "-" without them; for a wait cause's three fields, the
 * inode counters of the same waits) and how it merges:
 * wpstat_stalls.def.  Static, so that a handler's look-up of a constant
 * field is a constant (wpstat_cause_wait()).
 */
struct wpstat_stall_field_info {
	const char *name;
	enum wpstat_counter like;
	bool max;			/* merged by maximum (compaction) */
	bool events;			/* counts events (not ns) */
};
#define WPSTAT_UNIT_EVENTS_EVENTS	true
#define WPSTAT_UNIT_EVENTS_NS		false
#define WPSTAT_UNIT_EVENTS_UNNAMED	false
#define WPSTAT_UNIT_EVENTS_PTES		true
#define WPSTAT_UNIT_EVENTS_CPU		false
#define WPSTAT_UNIT_EVENTS_RUNQ		false
static const struct wpstat_stall_field_info wpstat_stall_fields[WPS_NR] __maybe_unused = {
#define WPSTAT_STALL(id, nm, lk, knd, unit, ...)			\
	[WPS_##id] = { .name = #nm, .like = WPC_##lk,			\
		       .max = WPK_##knd == WPK_MAX,			\
		       .events = WPSTAT_UNIT_EVENTS_##unit },
#include "wpstat_stalls.def"
#undef WPSTAT_STALL
};

/* The stall causes (wpstat_stalls.def's WPSTAT_STALL_CAUSE), WPCA_<id>. */
enum wpstat_cause {
#define WPSTAT_STALL(...)
#define WPSTAT_STALL_CAUSE(id, ...) WPCA_##id,
#include "wpstat_stalls.def"
#undef WPSTAT_STALL_CAUSE
#undef WPSTAT_STALL
	WPCA_NR
};

/*
 * A cause from wpstat_stalls.def: its name and the word for its events,
 * the inode counter of its time, its stall fields (events, and ns, whose
 * maximum is the field after it), whether it is a wait (IN or OUT: not
 * SELF, the fault itself) and whether it is made in a fault (IN).  Its
 * events and maximum in the inode row are its fields' like counters.  A
 * cause of another kind than IN, OUT or SELF does not build.
 */
struct wpstat_cause_info {
	const char *name;
	const char *unit;
	enum wpstat_counter time;
	enum wpstat_stall_field stall_events, stall_ns;
	bool wait;
	bool in_fault;
};
#define WPSTAT_CAUSE_FAULT_IN(id)					\
	.wait = true, .in_fault = true,					\
	.stall_events = WPS_##id, .stall_ns = WPS_##id##_NS
#define WPSTAT_CAUSE_FAULT_OUT(id)					\
	.wait = true, .stall_events = WPS_##id, .stall_ns = WPS_##id##_NS
#define WPSTAT_CAUSE_FAULT_SELF(id)	.stall_ns = WPS_##id##_NS
static const struct wpstat_cause_info wpstat_causes[WPCA_NR] __maybe_unused = {
#define WPSTAT_STALL(...)
#define WPSTAT_STALL_CAUSE(id, nm, unt, tm, fault)			\
	[WPCA_##id] = { .name = #nm, .unit = #unt, .time = WPC_##tm,	\
			WPSTAT_CAUSE_FAULT_##fault(id) },
#include "wpstat_stalls.def"
#undef WPSTAT_STALL_CAUSE
#undef WPSTAT_STALL
};

/*
 * One row: a process and a file.  A row whose tgid is 0 holds what the
 * file's exited processes did (compaction folds their rows into it).
 */
/*
 * One row's key: the file as the inode table keys it (mount included:
 * a remounted btrfs, FUSE or NFS reuses dev, inode numbers and
 * generations) and the process.  A row of tgid 0 holds what the file's
 * exited processes did; one of ino 0 (and sb 0), what was done to the
 * device's files that are gone (compaction folds both).
 */
struct wpstat_stall_key {
	u64 ino;
	u32 dev;
	u32 gen;
	u64 sb;				/* and subvolume, as wpstat_key's */
	u32 tgid;			/* 0: the file's exited processes */
	u32 pad;			/* zero: the key is hashed as u32 words */
	u64 start;			/* the leader's start_time: a reused pid differs */
};

struct wpstat_stall {
	struct wpstat_stall_key key;
	int valid;			/* published; set once */
	unsigned long last;		/* jiffies of its latest event: compaction folds oldest first */
	char comm[TASK_COMM_LEN];	/* the thread group leader's, at insert */
	u64 cgroup;			/* cgroup v2 id at insert, 0 if none */
	atomic64_t count[WPS_NR];
};

struct wpstat_stalls {
	struct wpstat_rows r;
	struct wpstat_stall *rows;	/* r.mem */
	u32 reset_gen;			/* as the inode table's */
	atomic_t nr_rows;		/* of them published */
	atomic64_t overflow;		/* counted events that found no row */
	u64 compactions;		/* since the last reset */
	u64 exited;			/* process rows folded into exited rows */
	u64 gone;			/* rows of gone files folded into device rows */
	bool dev_rows;			/* it has a device row (ino 0): a full table's spill */
	u64 aged;			/* exited rows folded into device rows for room */
};


extern unsigned int wpstat_max_stalls;
extern struct wpstat_stalls __rcu *wpstat_stalls;
struct proc_dir_entry;	/* 5.10's seq_file.h does not declare it */

static __always_inline bool wpstat_stall_key_equal(const struct wpstat_stall_key *a,
					    const struct wpstat_stall_key *b)
{
	return a->ino == b->ino && a->dev == b->dev && a->gen == b->gen &&
	       a->sb == b->sb && a->tgid == b->tgid && a->start == b->start;
}

/*
 * The row each CPU found last, as the inode table's wpstat_last: a writer
 * takes its faults on one file in a run, so most events skip the hash.
 * A nested handler may overwrite the pair half-way, so a hit is trusted
 * only after checking it against the current table: index in range,
 * published, same key.  Never dereferenced for another table.
 */
struct wpstat_stall_last {
	struct wpstat_stalls *table;
	u32 idx;			/* into table->rows */
};
DECLARE_PER_CPU(struct wpstat_stall_last, wpstat_stall_last);

/*
 * Whether published row @r is the file of @ikey's and the process of
 * @tgid and leader's start @start: the key compared field by field, with
 * no stall key built.
 */
static __always_inline bool wpstat_stall_row_is(const struct wpstat_stall *r,
						const struct wpstat_key *ikey,
						u32 tgid, u64 start)
{
	return r->key.ino == ikey->ino && r->key.dev == ikey->dev &&
	       r->key.gen == ikey->gen && r->key.sb == ikey->sb &&
	       r->key.tgid == tgid && r->key.start == start;
}

/* A row has an event now: compaction folds the oldest history first. */
static __always_inline void wpstat_stall_touch(struct wpstat_stall *r)
{
	unsigned long now = jiffies;

	if (READ_ONCE(r->last) != now)
		WRITE_ONCE(r->last, now);
}


struct wpstat_stall *wpstat_stall_find_key(struct wpstat_stalls *s,
					   const struct wpstat_stall_key *key,
					   bool insert,
					   const struct wpstat_stall *from);

int wpstat_stalls_init(void);
void wpstat_stalls_exit(void);
struct wpstat_stalls *wpstat_stalls_pin(void);
void wpstat_stalls_put(struct wpstat_stalls *s);
struct wpstat_stalls *wpstat_stalls_reset_prepare(void);
void wpstat_stalls_reset_commit(struct wpstat_stalls *new);
void wpstat_stalls_reset_abort(struct wpstat_stalls *new);
u32 wpstat_stall_add(const struct wpstat_key *key, enum wpstat_stall_field f,
		     u64 delta);
u32 wpstat_stall_fault_slow(const struct wpstat_key *key, bool first,
			    bool readin, u64 readin_ns);

/*
 * A write fault (@first or write-protect) and, if it had to, its read-in
 * (@readin, timed if @readin_ns), in the current process's row for @key's
 * file: one event, or two with the read-in, as wpstat_stall_add() counts
 * them.  Returns the generation of the table they went to.  Inline, for a
 * fault without a read-in in the row of the CPU's last event: one per
 * stored page in a writer's run (make bench's W1); the rest out of line.
 */
static __always_inline u32 wpstat_stall_fault(const struct wpstat_key *key,
					      bool first, bool readin,
					      u64 readin_ns)
{
	struct wpstat_stalls *s = rcu_dereference_sched(wpstat_stalls);
	struct wpstat_stall_last *last = this_cpu_ptr(&wpstat_stall_last);
	u32 idx = READ_ONCE(last->idx);
	struct wpstat_stall *r;

	if (likely(s && !readin && READ_ONCE(last->table) == s &&
		   idx < s->r.max)) {
		r = &s->rows[idx];
		/* Pairs with the release in wpstat_stall_find_key(). */
		if (likely(smp_load_acquire(&r->valid) &&
			   wpstat_stall_row_is(r, key, task_tgid_nr(current),
					       current->group_leader->start_time))) {
			atomic64_inc(&r->count[first ? WPS_FAULT_FIRST :
						      WPS_FAULT_WP]);
			wpstat_stall_touch(r);
			return s->reset_gen;
		}
	}
	return wpstat_stall_fault_slow(key, first, readin, readin_ns);
}
void wpstat_stall_events(const struct wpstat_key *key,
			 enum wpstat_stall_field f,
			 enum wpstat_stall_field ns_field, u64 n, u64 ns, u64 max);
void wpstat_stall_time(const struct wpstat_key *key,
		       enum wpstat_stall_field ns_field, u64 ns, u32 gen);
void wpstat_stall_fault_times(const struct wpstat_key *key, u32 gen, u64 ns,
			      u64 unnamed, u64 cpu, u64 runq);
void wpstat_stalls_note_death(void);
void wpstat_stalls_summary(struct seq_file *m);

/* ---- wpstat_tctx.c ------------------------------------------------------ */

/* Calls in progress that a task's later events must be joined to. */
enum {
	WPT_BDP		= 1,	/* inside balance_dirty_pages() */
	WPT_WAIT	= 2,	/* about to wait for writeback (wait_stable says where) */
	WPT_WB		= 4,	/* a flusher inside wb_writeback() (wb_reason says why) */
	WPT_FAULT	= 8,	/* inside a timed write fault (fault_key) */
	WPT_SYNC	= 16,	/* inside a timed ZFS fsync (sync_key) */
	WPT_JOURNAL	= 32,	/* inside a timed jbd2 handle start (journal_*) */
};

/* A timed wait's start: when, and the task's CPU and runqueue time then. */
struct wait_start {
	u64 start;
	u64 cpu0;
	u64 runq0;
};

struct wpstat_tctx {
	unsigned long owner;	/* the task, as an identity: never dereferenced */
	unsigned int active;	/* WPT_* calls in progress */
	bool bdp_async;		/* BDP_ASYNC: a traced pause is not slept */
	u8 wait_kind;		/* WPT_WAIT: enum wpstat_wait_kind, never OTHER */
	int wb_reason;		/* WPT_WB: enum wb_reason of the work */
	struct wpstat_key bdp_key;
	u64 pause_start;	/* ns; 0 when not in a throttle pause */
	const void *wait_folio;	/* the folio of a WPT_WAIT wait: identity */
	unsigned long wait_switches; /* the task's switches when announced */
	bool wait_entered;	/* folio_wait_bit() entered for it */
	struct wpstat_key wait_key;
	struct wpstat_gen wait_gen;	/* WPT_WAIT: where its count went */
	struct wpstat_gen pause_gen;	/* pause_start: likewise */
	struct wpstat_key fault_key;
	u64 fault_named_ns;	/* WPT_FAULT: of its time, in named waits */
	unsigned int fault_epoch; /* WPT_FAULT: wpstat_level_epoch at entry */
	u64 fault_start;	/* WPT_FAULT: the first handle_mm_fault() */
	u64 fault_cpu0;		/* WPT_FAULT: the task's CPU time then */
	u64 fault_runq0;	/* WPT_FAULT: its runqueue time then */
	u64 fault_wait_cpu;	/* WPT_FAULT: CPU time inside named waits */
	u64 fault_wait_runq;	/* WPT_FAULT: runqueue time inside them */
	u64 pause_cpu0;		/* pause_start: the task's CPU time then */
	u64 pause_runq0;	/* pause_start: its runqueue time then */
	u64 fault_end;		/* WPT_FAULT: the return of the latest one */
	unsigned long fault_addr; /* WPT_FAULT: its page */
	bool fault_retry;	/* WPT_FAULT: the latest attempt asked for a retry */
	bool fault_mkwrite;	/* WPT_FAULT: do_page_mkwrite() counted it */
	const void *fault_mapping; /* WPT_FAULT: its file's pages: identity */
	/*
	 * WPT_FAULT: page-lock waits before do_page_mkwrite(), held until it
	 * says whether the fault read its page in (then they were the read)
	 */
	u32 lock_n;
	u64 lock_ns, lock_max, lock_cpu, lock_runq;
	struct wpstat_gen fault_gen;	/* WPT_FAULT: where its count went */
	struct wpstat_key sync_key;	/* WPT_SYNC: the file being synced */
	unsigned int sync_epoch; /* WPT_SYNC: wpstat_level_epoch at entry */
	bool journal_fault;	/* WPT_JOURNAL: the start is the fault's */
	unsigned long journal_nvcsw; /* WPT_JOURNAL: voluntary switches then */
	struct wait_start journal_w;	/* WPT_JOURNAL: when it began */
	u64 start;		/* the owner's start_time: a reused task_struct differs */
};

int wpstat_tctx_init(void);
void wpstat_tctx_exit(void);
struct wpstat_tctx *wpstat_tctx_find(void);
struct wpstat_tctx *wpstat_tctx_get(void);
void wpstat_tctx_put(struct wpstat_tctx *c, unsigned int bit);
u64 wpstat_tctx_exhausted(void);
u64 wpstat_tctx_stale_count(void);
u64 wpstat_tctx_stale_waits(void);
u32 wpstat_tctx_used(void);
void wpstat_tctx_exit_task(void);
void wpstat_tctx_drop_scopes(unsigned int scopes);

/* ---- wpstat_handlers.c -------------------------------------------------- */
extern bool wpstat_enabled;
extern u32 wpstat_filter_dev;		/* 0: any device */
extern struct pid *wpstat_filter_pid;	/* NULL: any process */
void wpstat_set_filter_pid(struct pid *pid);

/* The handlers of one attachment point, by mechanism. */
struct wpstat_handler_set {
	ftrace_func_t ftrace;
	kretprobe_handler_t krp_entry;
	kretprobe_handler_t krp_return;
	size_t krp_data_size;
	void *tp;
};

/*
 * The handler tables, made from wpstat_probes.def: the table of mechanism
 * @mech has @item(id) for every probe whose counts or timing mechanism is
 * @mech, and nothing for the others (WPSTAT_PROBE(id, ...) passes the
 * .def's line on: WPSTAT_HANDLERS_OF(mech, item, id, __VA_ARGS__)).  The items name the probe's own
 * handlers (krp_<id>, tp_<id>, krp_size_<id>), so a probe the .def gives a
 * kretprobe or a tracepoint without them in the handler file does not
 * build.  WPSTAT_USES() is 1 or 0 (__is_defined(), linux/kconfig.h).
 */
#define WPSTAT_USES_FTRACE_FTRACE		1
#define WPSTAT_USES_KRETPROBE_KRETPROBE		1
#define WPSTAT_USES_TRACEPOINT_TRACEPOINT	1
#define WPSTAT_USES(mech, m)	__is_defined(WPSTAT_USES_##mech##_##m)
#define WPSTAT_HANDLERS_OF(mech, item, id, name, target, home, counts, timing) \
	__WPSTAT_HANDLERS_OF(WPSTAT_USES(mech, counts),			\
			     WPSTAT_USES(mech, timing), item, id, name, target, home)
#define __WPSTAT_HANDLERS_OF(c, t, ...)	___WPSTAT_HANDLERS_OF(c, t, __VA_ARGS__)
#define ___WPSTAT_HANDLERS_OF(c, t, ...)	WPSTAT_HANDLERS_OF_##c##t(__VA_ARGS__)
#define WPSTAT_HANDLERS_OF_00(...)
#define WPSTAT_HANDLERS_OF_01(item, id, ...)	item(id)
#define WPSTAT_HANDLERS_OF_10(item, id, ...)	item(id)
#define WPSTAT_HANDLERS_OF_11(item, id, ...)	item(id)

/* Each mechanism's handlers, in the file of its kind; the floor's. */
extern const struct wpstat_handler_set wpstat_entry_handlers[WPP_NR];
extern const struct wpstat_handler_set wpstat_krp_handlers[WPP_NR];
extern const struct wpstat_handler_set wpstat_tp_handlers[WPP_NR];
extern const struct wpstat_handler_set wpstat_floor_handlers[WPP_NR];

/*
 * The level whose handlers count on the functions that change mechanism
 * between levels; flipped only under stop_machine() (wpstat_attach.c).
 */
extern int wpstat_counting_level;
extern unsigned int wpstat_level_epoch;	/* level switches so far */

/* Whether folio_wait_bit()'s kretprobe is there to time stable waits. */
extern bool wpstat_wait_bit_attached;

/* The ftrace ip of each entry-only point: wpstat_entry() dispatches on it. */
extern unsigned long wpstat_entry_ip[WPP_NR];

/* Address ranges of functions recognised as callers (SYMBOL points). */
struct wpstat_range {
	unsigned long start;
	unsigned long size;
};
extern struct wpstat_range wpstat_fault_dirty_range;
/* do_page_mkwrite(): a wait below it is a wait in a write fault. */
extern struct wpstat_range wpstat_mkwrite_range;

int wpstat_symbol_range(unsigned long addr, struct wpstat_range *r);
int wpstat_handlers_init(void);
void wpstat_handlers_exit(void);
u64 wpstat_wb_work_checked(void);
bool wpstat_wb_work_off(void);

/* ---- wpstat_attach.c ---------------------------------------------------- */
int wpstat_attach_init(void);
void wpstat_attach_exit(void);
int wpstat_set_level(enum wpstat_level level);
enum wpstat_level wpstat_get_level(void);
const char *wpstat_level_name(enum wpstat_level level);
int wpstat_level_parse(const char *s);
bool wpstat_floor_mode(void);
bool wpstat_counter_available(enum wpstat_counter c);
void wpstat_probes_show(struct seq_file *m);
u64 wpstat_probe_missed(enum wpstat_probe_id p);
const char *wpstat_probe_name(enum wpstat_probe_id p);

/* ---- wpstat_procfs.c / wpstat_debugfs.c --------------------------------- */
int wpstat_proc_init(void);
void wpstat_proc_exit(void);
void wpstat_debugfs_init(void);
void wpstat_debugfs_exit(void);

#endif /* _WPSTAT_H */
