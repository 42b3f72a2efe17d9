// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_probes.c - the kprobes, kretprobes and tracepoint probes.
 *
 * Every handler runs with preemption disabled (kprobe/ftrace or tracepoint
 * context): no sleeping, no allocation, no locks.  Inodes are turned into a
 * (dev, ino, generation) key at once and never remembered by pointer.
 *
 * Events that only make sense inside an outer call (the throttling done by
 * balance_dirty_pages() for one balance_dirty_pages_ratelimited_flags()
 * call, a writeback wait inside folio_wait_stable(), a ratelimited call made
 * from fault_dirty_shared_page()) are tied together through a small table
 * of per-task call contexts, owned and touched only by the task itself.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/fs.h>
#include <linux/hash.h>
#include <linux/kprobes.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/tracepoint.h>

#include "wpstat.h"
#include "wpstat_compat.h"

static char *skip_probes = "";
module_param(skip_probes, charp, 0444);
MODULE_PARM_DESC(skip_probes, "Comma-separated probes not to attach (see debugfs wpstat/probes); their columns read '-'");

/*
 * Benchmark floor: attach the very same probes (same maxactive, same
 * data_size) with handlers that return at once, so that the cost of the
 * probe machinery alone can be measured.  Nothing is counted: every
 * counter reads '-' and the summary says "floor 1".
 */
bool wpstat_floor;
module_param_named(floor, wpstat_floor, bool, 0444);
MODULE_PARM_DESC(floor, "Benchmark floor: same probes, empty handlers, nothing counted (default 0)");

/* ---- per-task call contexts ------------------------------------------- */

#define WPSTAT_TCTX_BITS	11
#define WPSTAT_TCTX_SLOTS	(1U << WPSTAT_TCTX_BITS)
#define WPSTAT_TCTX_PROBE	8

enum {
	WPT_FAULT	= 1,	/* inside fault_dirty_shared_page() */
	WPT_BDP		= 2,	/* inside balance_dirty_pages_ratelimited_flags() */
	WPT_STABLE	= 4,	/* inside folio_wait_stable() */
};

struct wpstat_tctx {
	unsigned long owner;	/* the task, as an identity: never dereferenced */
	unsigned int active;	/* WPT_* calls in progress */
	u64 stable_wait_start;	/* ns; 0 until folio_wait_stable() waits */
	bool bdp_async;		/* BDP_ASYNC: a traced pause is not slept */
	struct wpstat_key bdp_key;
	u64 pause_start;	/* ns; 0 when not in a throttle pause */
};

static struct wpstat_tctx *wpstat_tctx;
static atomic64_t wpstat_tctx_overflow = ATOMIC64_INIT(0);

static struct wpstat_tctx *tctx_find(void)
{
	unsigned long me = (unsigned long)current;
	u32 h = hash_long(me, WPSTAT_TCTX_BITS);
	u32 i;

	for (i = 0; i < WPSTAT_TCTX_PROBE; i++) {
		struct wpstat_tctx *c = &wpstat_tctx[(h + i) % WPSTAT_TCTX_SLOTS];

		if (READ_ONCE(c->owner) == me)
			return c;
	}
	return NULL;
}

/*
 * Find the current task's context, or claim one; NULL if none is free.
 * One pass finds both the task's own context and the first free one.
 */
static struct wpstat_tctx *tctx_get(void)
{
	unsigned long me = (unsigned long)current;
	u32 h = hash_long(me, WPSTAT_TCTX_BITS);
	struct wpstat_tctx *c;
	u32 i, free = WPSTAT_TCTX_PROBE;

	for (i = 0; i < WPSTAT_TCTX_PROBE; i++) {
		unsigned long owner;

		c = &wpstat_tctx[(h + i) % WPSTAT_TCTX_SLOTS];
		owner = READ_ONCE(c->owner);
		if (owner == me)
			return c;
		if (!owner && free == WPSTAT_TCTX_PROBE)
			free = i;
	}
	for (i = free; i < WPSTAT_TCTX_PROBE; i++) {
		c = &wpstat_tctx[(h + i) % WPSTAT_TCTX_SLOTS];
		if (!READ_ONCE(c->owner) && !cmpxchg(&c->owner, 0, me)) {
			c->active = 0;
			c->stable_wait_start = 0;
			c->pause_start = 0;
			return c;
		}
	}
	atomic64_inc(&wpstat_tctx_overflow);
	return NULL;
}

static void tctx_put(struct wpstat_tctx *c, unsigned int bit)
{
	c->active &= ~bit;
	if (!c->active) /* fields done with before another task claims it */
		smp_store_release(&c->owner, 0);
}

/* ---- filters and keys ------------------------------------------------- */

static bool wpstat_want_task(void)
{
	pid_t tgid = READ_ONCE(wpstat_filter_tgid);

	return READ_ONCE(wpstat_enabled) && (!tgid || current->tgid == tgid);
}

/* Fill @key for @inode; false if the device filter excludes it. */
static bool wpstat_key_of(const struct inode *inode, struct wpstat_key *key)
{
	u32 dev;

	if (!inode)
		return false;
	dev = inode->i_sb->s_dev;
	if (READ_ONCE(wpstat_filter_dev) && dev != READ_ONCE(wpstat_filter_dev))
		return false;
	key->dev = dev;
	key->ino = inode->i_ino;
	key->gen = inode->i_generation;
	return true;
}

static bool wpstat_key_of_mapping(const struct address_space *mapping,
				  struct wpstat_key *key)
{
	return mapping && wpstat_key_of(mapping->host, key);
}

static inline void wpstat_hit(enum wpstat_probe_id p)
{
	this_cpu_inc(wpstat_stats.hits[p]);
}

/* ---- do_page_mkwrite ---------------------------------------------------- */

struct mkwrite_data {
	struct wpstat_key key;
	u64 start;
	bool first;
};

static int mkwrite_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct mkwrite_data *d = (void *)ri->data;
	struct vm_fault *vmf = wpstat_mkwrite_vmf(regs);
	struct file *file = vmf->vma->vm_file;

	wpstat_hit(WPP_MKWRITE);
	if (!file || !wpstat_want_task() ||
	    !wpstat_key_of_mapping(file->f_mapping, &d->key))
		return 1;
	d->first = !wpstat_vmf_has_pte(vmf);
	d->start = ktime_get_ns();
	return 0;
}

static int mkwrite_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct mkwrite_data *d = (void *)ri->data;
	u64 ns = ktime_get_ns() - d->start;
	struct wpstat_entry *e;

	e = wpstat_lookup(&d->key);
	wpstat_add(e, d->first ? WPC_MKWRITE_FIRST : WPC_MKWRITE_WP, 1);
	wpstat_add(e, WPC_MKWRITE_NS, ns);
	wpstat_hist_add(WPH_MKWRITE, ns);
	return 0;
}

/* ---- fault_dirty_shared_page: marks ratelimited calls made by faults ---- */

static int fault_dirty_entry(struct kretprobe_instance *ri,
			     struct pt_regs *regs)
{
	struct wpstat_tctx *c;

	wpstat_hit(WPP_FAULT_DIRTY);
	if (!READ_ONCE(wpstat_enabled))
		return 1;
	c = tctx_get();
	if (!c || (c->active & WPT_FAULT))
		return 1;
	c->active |= WPT_FAULT;
	return 0;
}

static int fault_dirty_return(struct kretprobe_instance *ri,
			      struct pt_regs *regs)
{
	struct wpstat_tctx *c = tctx_find();

	if (c)
		tctx_put(c, WPT_FAULT);
	return 0;
}

/* ---- folio_mkclean ------------------------------------------------------ */

static int mkclean_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct wpstat_key *key = (void *)ri->data;
	struct folio *folio = (struct folio *)regs_get_kernel_argument(regs, 0);

	wpstat_hit(WPP_MKCLEAN);
	/* Writeback runs in kworkers: the task filter does not apply here. */
	if (!READ_ONCE(wpstat_enabled) ||
	    !wpstat_key_of_mapping(folio_mapping(folio), key))
		return 1;
	return 0;
}

static int mkclean_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct wpstat_key *key = (void *)ri->data;
	int ptes = (int)regs_return_value(regs);
	struct wpstat_entry *e;

	e = wpstat_lookup(key);
	wpstat_add(e, WPC_MKCLEAN_CALLS, 1);
	if (ptes > 0)
		wpstat_add(e, WPC_MKCLEAN_PTES, ptes);
	return 0;
}

/* ---- folio_wait_stable -------------------------------------------------- */

struct stable_data {
	struct wpstat_key key;
	bool have_ctx;
};

static int stable_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct stable_data *d = (void *)ri->data;
	struct folio *folio = (struct folio *)regs_get_kernel_argument(regs, 0);
	struct wpstat_tctx *c;

	wpstat_hit(WPP_STABLE);
	if (!wpstat_want_task() ||
	    !wpstat_key_of_mapping(folio_mapping(folio), &d->key))
		return 1;
	c = tctx_get();
	d->have_ctx = c && !(c->active & WPT_STABLE);
	if (d->have_ctx) {
		c->active |= WPT_STABLE;
		c->stable_wait_start = 0;
	}
	return 0;
}

static int stable_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct stable_data *d = (void *)ri->data;
	struct wpstat_entry *e;
	bool blocked = false;
	u64 ns = 0;

	/*
	 * Timed from the first writeback wait (tp_wait_writeback), not from
	 * entry: most calls do not wait, and then read no clock at all.
	 */
	if (d->have_ctx) {
		struct wpstat_tctx *c = tctx_find();

		if (c) {
			blocked = c->stable_wait_start != 0;
			if (blocked)
				ns = ktime_get_ns() - c->stable_wait_start;
			tctx_put(c, WPT_STABLE);
		}
	}
	e = wpstat_lookup(&d->key);
	wpstat_add(e, WPC_STABLE_CALLS, 1);
	if (blocked) {
		wpstat_add(e, WPC_STABLE_WAITS, 1);
		wpstat_add(e, WPC_STABLE_WAIT_NS, ns);
	}
	if (blocked)
		wpstat_hist_add(WPH_STABLE_WAIT, ns);
	return 0;
}

/* ---- balance_dirty_pages_ratelimited_flags ------------------------------ */

static void bdp_close_pause(struct wpstat_tctx *c, u64 now)
{
	u64 ns;

	if (!c->pause_start)
		return;
	ns = now - c->pause_start;
	c->pause_start = 0;
	wpstat_count(&c->bdp_key, WPC_BDP_PAUSE_NS, ns);
	wpstat_hist_add(WPH_BDP_PAUSE, ns);
}

static int bdp_rl_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct address_space *mapping =
		(struct address_space *)regs_get_kernel_argument(regs, 0);
	unsigned int flags = regs_get_kernel_argument(regs, 1);
	struct wpstat_entry *e;
	struct wpstat_tctx *c;
	struct wpstat_key key;
	bool from_fault;

	wpstat_hit(WPP_BDP_RL);
	/* Filtered-out writes pay for no task-context scan. */
	if (!wpstat_want_task() || !wpstat_key_of_mapping(mapping, &key))
		return 1;
	c = tctx_find();
	from_fault = c && (c->active & WPT_FAULT);

	e = wpstat_lookup(&key);
	wpstat_add(e, WPC_BDP_CALLS, 1);
	if (from_fault)
		wpstat_add(e, WPC_BDP_FAULT_CALLS, 1);

	/* Remember whom balance_dirty_pages() throttles on this call's behalf. */
	c = c ?: tctx_get();
	if (!c || (c->active & WPT_BDP))
		return 1;
	c->active |= WPT_BDP;
	c->bdp_key = key;
	c->bdp_async = flags & WPSTAT_BDP_ASYNC;
	c->pause_start = 0;
	return 0;
}

static int bdp_rl_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct wpstat_tctx *c = tctx_find();

	if (c) {
		bdp_close_pause(c, ktime_get_ns());
		tctx_put(c, WPT_BDP);
	}
	return 0;
}

/* ---- balance_dirty_pages: entered only outside the free-run zone ------- */

static int bdp_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct wpstat_tctx *c;

	wpstat_hit(WPP_BDP);
	c = tctx_find();
	if (c && (c->active & WPT_BDP))
		wpstat_count(&c->bdp_key, WPC_BDP_THROTTLED, 1);
	return 0;
}

/* ---- tracepoints -------------------------------------------------------- */

static void tp_dirty_folio(WPSTAT_TP_FOLIO_PROTO)
{
	struct wpstat_key key;

	wpstat_hit(WPP_TP_DIRTY);
	/* Folios are dirtied by whoever writes: the task filter applies. */
	if (wpstat_want_task() && wpstat_key_of_mapping(mapping, &key))
		wpstat_count(&key, WPC_DIRTIED, 1);
}

static void tp_wait_writeback(WPSTAT_TP_FOLIO_PROTO)
{
	struct wpstat_tctx *c = tctx_find();
	struct wpstat_key key;

	wpstat_hit(WPP_TP_WAIT);
	if (c && (c->active & WPT_STABLE) && !c->stable_wait_start)
		c->stable_wait_start = ktime_get_ns();
	if (wpstat_want_task() && wpstat_key_of_mapping(mapping, &key))
		wpstat_count(&key, WPC_WB_WAITS, 1);
}

/*
 * Traced once per loop in balance_dirty_pages(): with pause > 0 right
 * before io_schedule_timeout(pause), with pause <= 0 when it lets the task
 * go.  A pause lasts until the next trace or the ratelimited call returns.
 */
static void tp_balance_dirty_pages(WPSTAT_TP_BDP_PROTO)
{
	struct wpstat_tctx *c = tctx_find();
	u64 now;

	wpstat_hit(WPP_TP_BDP);
	if (!c || !(c->active & WPT_BDP))
		return;
	now = ktime_get_ns();
	bdp_close_pause(c, now);
	if (pause > 0 && !c->bdp_async) {
		wpstat_count(&c->bdp_key, WPC_BDP_PAUSES, 1);
		c->pause_start = now;
	}
}

/* ---- floor mode: the same attachments, empty handlers ------------------ */

static int floor_krp_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	return 0;	/* arm the return probe, as the real handlers do */
}

static int floor_krp_return(struct kretprobe_instance *ri,
			    struct pt_regs *regs)
{
	return 0;
}

static int floor_kp_pre(struct kprobe *p, struct pt_regs *regs)
{
	return 0;
}

static void floor_tp_folio(WPSTAT_TP_FOLIO_PROTO)
{
}

static void floor_tp_bdp(WPSTAT_TP_BDP_PROTO)
{
}

/* ---- registration ------------------------------------------------------- */

enum wpstat_probe_kind { WPK_KRETPROBE, WPK_KPROBE, WPK_TRACEPOINT };

struct wpstat_probe {
	const char *name;
	const char *target;
	enum wpstat_probe_kind kind;
	struct kretprobe krp;
	struct kprobe kp;
	void *tp_func;
	struct tracepoint *tp;
	bool attached;
	int err;		/* why not attached; -ECANCELED: skip_probes */
};

#define WPSTAT_KRETPROBE(id, nm, sym, entry, ret, dsize)		\
	[id] = { .name = nm, .target = sym, .kind = WPK_KRETPROBE,	\
		 .krp = { .entry_handler = entry, .handler = ret,	\
			  .data_size = dsize } }

static struct wpstat_probe wpstat_probes[WPP_NR] = {
	WPSTAT_KRETPROBE(WPP_MKWRITE, "mkwrite", "do_page_mkwrite",
			 mkwrite_entry, mkwrite_return,
			 sizeof(struct mkwrite_data)),
	WPSTAT_KRETPROBE(WPP_FAULT_DIRTY, "fault_dirty",
			 "fault_dirty_shared_page",
			 fault_dirty_entry, fault_dirty_return, 0),
	WPSTAT_KRETPROBE(WPP_MKCLEAN, "mkclean", "folio_mkclean",
			 mkclean_entry, mkclean_return,
			 sizeof(struct wpstat_key)),
	WPSTAT_KRETPROBE(WPP_STABLE, "stable", "folio_wait_stable",
			 stable_entry, stable_return,
			 sizeof(struct stable_data)),
	WPSTAT_KRETPROBE(WPP_BDP_RL, "bdp_ratelimited",
			 "balance_dirty_pages_ratelimited_flags",
			 bdp_rl_entry, bdp_rl_return, 0),
	[WPP_BDP] = { .name = "bdp", .target = "balance_dirty_pages",
		      .kind = WPK_KPROBE, .kp = { .pre_handler = bdp_pre } },
	[WPP_TP_DIRTY] = { .name = "tp_dirty", .target = "writeback_dirty_folio",
			   .kind = WPK_TRACEPOINT, .tp_func = tp_dirty_folio },
	[WPP_TP_WAIT] = { .name = "tp_wait", .target = "folio_wait_writeback",
			  .kind = WPK_TRACEPOINT, .tp_func = tp_wait_writeback },
	[WPP_TP_BDP] = { .name = "tp_bdp", .target = "balance_dirty_pages",
			 .kind = WPK_TRACEPOINT,
			 .tp_func = tp_balance_dirty_pages },
};

#define P(x) BIT(WPP_##x)
/* The probes each counter depends on. */
static const u32 wpstat_counter_needs[WPC_NR] = {
	[WPC_MKWRITE_FIRST]	= P(MKWRITE),
	[WPC_MKWRITE_WP]	= P(MKWRITE),
	[WPC_MKWRITE_NS]	= P(MKWRITE),
	[WPC_MKCLEAN_CALLS]	= P(MKCLEAN),
	[WPC_MKCLEAN_PTES]	= P(MKCLEAN),
	[WPC_STABLE_CALLS]	= P(STABLE),
	[WPC_STABLE_WAITS]	= P(STABLE) | P(TP_WAIT),
	[WPC_STABLE_WAIT_NS]	= P(STABLE) | P(TP_WAIT),
	[WPC_WB_WAITS]		= P(TP_WAIT),
	[WPC_DIRTIED]		= P(TP_DIRTY),
	[WPC_BDP_CALLS]		= P(BDP_RL),
	[WPC_BDP_FAULT_CALLS]	= P(BDP_RL) | P(FAULT_DIRTY),
	[WPC_BDP_THROTTLED]	= P(BDP_RL) | P(BDP),
	[WPC_BDP_PAUSES]	= P(BDP_RL) | P(TP_BDP),
	[WPC_BDP_PAUSE_NS]	= P(BDP_RL) | P(TP_BDP),
};
#undef P

static u32 wpstat_attached_mask;

bool wpstat_counter_available(enum wpstat_counter c)
{
	u32 need = wpstat_counter_needs[c];

	/* Floor mode counts nothing: no column may look like a real zero. */
	return !wpstat_floor &&
	       (READ_ONCE(wpstat_attached_mask) & need) == need;
}

const char *wpstat_probe_name(enum wpstat_probe_id p)
{
	return wpstat_probes[p].name;
}

u64 wpstat_probe_missed(enum wpstat_probe_id p)
{
	struct wpstat_probe *wp = &wpstat_probes[p];

	switch (wp->kind) {
	case WPK_KRETPROBE:
		return wp->krp.nmissed + wp->krp.kp.nmissed;
	case WPK_KPROBE:
		return wp->kp.nmissed;
	default:
		return 0;
	}
}

struct tp_lookup {
	const char *name;
	struct tracepoint *tp;
};

static void tp_lookup_one(struct tracepoint *tp, void *priv)
{
	struct tp_lookup *l = priv;

	if (!strcmp(tp->name, l->name))
		l->tp = tp;
}

static bool wpstat_probe_skipped(const char *name)
{
	size_t len = strlen(name);
	const char *s = skip_probes;

	while (s && *s) {
		const char *end = strchrnul(s, ',');

		if (end - s == len && !strncmp(s, name, len))
			return true;
		s = *end ? end + 1 : end;
	}
	return false;
}

static int wpstat_probe_attach(struct wpstat_probe *wp)
{
	struct tp_lookup l = { .name = wp->target };

	if (wpstat_probe_skipped(wp->name))
		return -ECANCELED;
	if (wpstat_floor) {
		wp->krp.entry_handler = floor_krp_entry;
		wp->krp.handler = floor_krp_return;
		wp->kp.pre_handler = floor_kp_pre;
		wp->tp_func = wp->tp_func == tp_balance_dirty_pages ?
			      (void *)floor_tp_bdp : (void *)floor_tp_folio;
	}

	switch (wp->kind) {
	case WPK_KRETPROBE:
		wp->krp.kp.symbol_name = wp->target;
		/* Handlers of sleeping functions stay in flight: size for it. */
		wp->krp.maxactive = max_t(int, 64, 16 * num_possible_cpus());
		return register_kretprobe(&wp->krp);
	case WPK_KPROBE:
		wp->kp.symbol_name = wp->target;
		return register_kprobe(&wp->kp);
	case WPK_TRACEPOINT:
		for_each_kernel_tracepoint(tp_lookup_one, &l);
		if (!l.tp)
			return -ENOENT;
		wp->tp = l.tp;
		return tracepoint_probe_register(l.tp, wp->tp_func, NULL);
	}
	return -EINVAL;
}

static void wpstat_report_unavailable(struct wpstat_probe *wp, u32 bit)
{
	char cols[256] = "";
	int c;

	for (c = 0; c < WPC_NR; c++) {
		if (!(wpstat_counter_needs[c] & bit))
			continue;
		if (cols[0])
			strlcat(cols, ",", sizeof(cols));
		strlcat(cols, wpstat_counter_names[c], sizeof(cols));
	}
	if (wp->err == -ECANCELED)
		pr_info("probe %s (%s) skipped by request; unavailable: %s\n",
			wp->name, wp->target, cols);
	else
		pr_warn("probe %s (%s) not attached (error %d); unavailable: %s\n",
			wp->name, wp->target, wp->err, cols);
}

int wpstat_probes_register(void)
{
	int p;

	wpstat_tctx = kcalloc(WPSTAT_TCTX_SLOTS, sizeof(*wpstat_tctx),
			      GFP_KERNEL);
	if (!wpstat_tctx)
		return -ENOMEM;

	/*
	 * Inner probes first: an outer call whose return probe is attached
	 * before the inner ones exist only costs a few uncounted events.
	 */
	for (p = WPP_NR - 1; p >= 0; p--) {
		struct wpstat_probe *wp = &wpstat_probes[p];

		wp->err = wpstat_probe_attach(wp);
		wp->attached = !wp->err;
		if (wp->attached)
			wpstat_attached_mask |= BIT(p);
		else
			wpstat_report_unavailable(wp, BIT(p));
	}
	return 0;
}

void wpstat_probes_unregister(void)
{
	struct kretprobe *krps[WPP_NR];
	struct kprobe *kps[WPP_NR];
	int p, nkrp = 0, nkp = 0;

	WRITE_ONCE(wpstat_attached_mask, 0);
	/*
	 * Each unregister_k*probe() waits for a grace period: in one batch
	 * per kind, unload waits for two, not one per probe.
	 */
	for (p = 0; p < WPP_NR; p++) {
		struct wpstat_probe *wp = &wpstat_probes[p];

		if (!wp->attached)
			continue;
		if (wp->kind == WPK_KRETPROBE)
			krps[nkrp++] = &wp->krp;
		else if (wp->kind == WPK_KPROBE)
			kps[nkp++] = &wp->kp;
		else
			tracepoint_probe_unregister(wp->tp, wp->tp_func, NULL);
		wp->attached = false;
	}
	if (nkrp)
		unregister_kretprobes(krps, nkrp);
	if (nkp)
		unregister_kprobes(kps, nkp);
	/* Tracepoint handlers may still run until this returns. */
	tracepoint_synchronize_unregister();
	kfree(wpstat_tctx);
	wpstat_tctx = NULL;
}

void wpstat_probes_show(struct seq_file *m)
{
	static const char * const kinds[] = {
		[WPK_KRETPROBE] = "kretprobe",
		[WPK_KPROBE] = "kprobe",
		[WPK_TRACEPOINT] = "tracepoint",
	};
	int p, cpu;

	seq_puts(m, "probe target kind status hits missed\n");
	for (p = 0; p < WPP_NR; p++) {
		struct wpstat_probe *wp = &wpstat_probes[p];
		u64 hits = 0;

		for_each_possible_cpu(cpu)
			hits += per_cpu(wpstat_stats.hits[p], cpu);
		seq_printf(m, "%s %s %s ", wp->name, wp->target,
			   kinds[wp->kind]);
		if (wp->attached)
			seq_puts(m, "attached");
		else if (wp->err == -ECANCELED)
			seq_puts(m, "skipped");
		else if (wp->err == -ENOENT)
			seq_puts(m, "not-found");
		else
			seq_printf(m, "error:%d", wp->err);
		seq_printf(m, " %llu %llu\n", hits, wpstat_probe_missed(p));
	}
}

u64 wpstat_tctx_exhausted(void)
{
	return atomic64_read(&wpstat_tctx_overflow);
}
