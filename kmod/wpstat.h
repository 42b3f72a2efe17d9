/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wpstat.h - shared definitions of the wpstat module.
 */
#ifndef _WPSTAT_H
#define _WPSTAT_H

#include <linux/types.h>
#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>

/* Per-inode counters, in the column order of /proc/wpstat/inodes. */
enum wpstat_counter {
	WPC_MKWRITE_FIRST,
	WPC_MKWRITE_WP,
	WPC_MKWRITE_NS,
	WPC_MKCLEAN_CALLS,
	WPC_MKCLEAN_PTES,
	WPC_STABLE_CALLS,
	WPC_STABLE_WAITS,
	WPC_STABLE_WAIT_NS,
	WPC_WB_WAITS,
	WPC_DIRTIED,
	WPC_BDP_CALLS,
	WPC_BDP_FAULT_CALLS,
	WPC_BDP_THROTTLED,
	WPC_BDP_PAUSES,
	WPC_BDP_PAUSE_NS,
	WPC_NR
};

extern const char * const wpstat_counter_names[WPC_NR];

/* Attachment points; a counter is valid only if all its probes attached. */
enum wpstat_probe_id {
	WPP_MKWRITE,		/* kretprobe do_page_mkwrite */
	WPP_FAULT_DIRTY,	/* kretprobe fault_dirty_shared_page */
	WPP_MKCLEAN,		/* kretprobe folio_mkclean */
	WPP_STABLE,		/* kretprobe folio_wait_stable */
	WPP_BDP_RL,		/* kretprobe balance_dirty_pages_ratelimited_flags */
	WPP_BDP,		/* kprobe balance_dirty_pages */
	WPP_TP_DIRTY,		/* tracepoint writeback_dirty_folio */
	WPP_TP_WAIT,		/* tracepoint folio_wait_writeback */
	WPP_TP_BDP,		/* tracepoint balance_dirty_pages */
	WPP_NR
};

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
struct wpstat_key {
	u64 ino;
	u32 dev;
	u32 gen;
};

struct wpstat_entry {
	struct wpstat_key key;
	int valid;			/* published; set once, never cleared */
	atomic64_t count[WPC_NR];
};

/*
 * A bounded, preallocated, insert-only table: an open-addressed index of
 * u32 slot numbers (0 = empty) over a dense entry array.  Probes insert
 * lock-free with cmpxchg and never allocate; "reset" swaps in a fresh table
 * under RCU.  Readers pin the table they started on with a reference, so a
 * reset during a long read cannot mix two tables.
 */
struct wpstat_table {
	struct kref ref;
	u32 max_entries;
	u32 index_mask;
	atomic_t nr_reserved;
	u32 *index;
	struct wpstat_entry *entries;
};

struct wpstat_stats {
	u64 total[WPC_NR];
	u64 untracked;
	u64 hits[WPP_NR];
	u64 hist[WPH_NR][WPSTAT_HIST_BUCKETS];
};

/* wpstat_main.c */
extern unsigned int wpstat_max_inodes;
extern bool wpstat_enabled;
extern u32 wpstat_filter_dev;		/* 0: any device */
extern pid_t wpstat_filter_tgid;	/* 0: any process */
extern bool wpstat_floor;		/* benchmark floor: empty handlers */
extern struct wpstat_table __rcu *wpstat_table;
extern struct mutex wpstat_table_mutex;	/* serialises table swaps */
DECLARE_PER_CPU(struct wpstat_stats, wpstat_stats);

struct wpstat_table *wpstat_table_alloc(u32 max_entries);
struct wpstat_table *wpstat_table_pin(void);
void wpstat_table_put(struct wpstat_table *t);
struct wpstat_entry *wpstat_table_find(struct wpstat_table *t,
				       const struct wpstat_key *key);
int wpstat_reset(void);
void wpstat_count(const struct wpstat_key *key, enum wpstat_counter c,
		  u64 delta);
struct wpstat_entry *wpstat_lookup(const struct wpstat_key *key);
void wpstat_add(struct wpstat_entry *e, enum wpstat_counter c, u64 delta);
void wpstat_hist_add(enum wpstat_hist_id h, u64 ns);
size_t wpstat_entry_bytes(void);

/* wpstat_probes.c */
int wpstat_probes_register(void);
void wpstat_probes_unregister(void);
bool wpstat_counter_available(enum wpstat_counter c);
void wpstat_probes_show(struct seq_file *m);
u64 wpstat_probe_missed(enum wpstat_probe_id p);
u64 wpstat_tctx_exhausted(void);
const char *wpstat_probe_name(enum wpstat_probe_id p);

/* wpstat_output.c */
int wpstat_output_init(void);
void wpstat_output_exit(void);

#endif /* _WPSTAT_H */
