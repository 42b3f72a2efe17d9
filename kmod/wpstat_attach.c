// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_attach.c - the attachment registry: which mechanism each point
 * uses at each level (wpstat_probes.def), attaching and detaching them,
 * switching levels at run time, skip_probes and the benchmark floor.
 *
 * Every entry-only point shares one ftrace_ops, filtered on the points'
 * addresses, whose callback dispatches on the ip (wpstat_entry()): one
 * registration, one unregistration (each of which waits for RCU-tasks).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ftrace.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/rcupdate_wait.h>
#include <linux/slab.h>
#include <linux/stop_machine.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#include "wpstat.h"
#include "wpstat_compat.h"

enum wpstat_mech { WPM_NONE, WPM_FTRACE, WPM_KRETPROBE, WPM_TRACEPOINT,
		   WPM_SYMBOL };

static const char * const wpstat_mech_names[] = {
	[WPM_NONE] = "none",
	[WPM_FTRACE] = "ftrace",
	[WPM_KRETPROBE] = "kretprobe",
	[WPM_TRACEPOINT] = "tracepoint",
	[WPM_SYMBOL] = "symbol",
};

static const char * const wpstat_level_names[WPL_NR] = {
	[WPL_COUNTS] = "counts",
	[WPL_TIMING] = "timing",
};

struct wpstat_probe {
	const char *name;
	const char *target;
	const char *home;	/* "vmlinux" or the target's module */
	enum wpstat_mech mech[WPL_NR];
	unsigned long addr;	/* FTRACE ip / SYMBOL address, once resolved */
	unsigned int on;	/* BIT(mechanism) of what is attached now */
	int err;		/* why the current level's is not; -ECANCELED: skipped */
	struct kretprobe krp;
	struct tracepoint *tp;
	void *tp_func;
	struct tracepoint *mod_tp; /* a module's tracepoint, while it is there */
	u64 missed_base;	/* kretprobe misses before a detach */
};

/* A mechanism's name, after expanding a WPSTAT_MECH_* choice. */
#define WPSTAT_MECH(m)		__WPSTAT_MECH(m)
#define __WPSTAT_MECH(m)	WPM_##m
#define WPSTAT_PROBE(id, nm, tgt, hm, counts, timing)			\
	[WPP_##id] = { .name = #nm, .target = __stringify(tgt),		\
		       .home = #hm,						\
		       .mech = { [WPL_COUNTS] = WPSTAT_MECH(counts),	\
				 [WPL_TIMING] = WPSTAT_MECH(timing) } },
static struct wpstat_probe wpstat_probes[WPP_NR] = {
#include "wpstat_probes.def"
#undef WPSTAT_PROBE
};

/* SYMBOL points and the range each fills. */
static struct wpstat_range *const wpstat_symbol_ranges[WPP_NR] = {
	[WPP_FAULT_DIRTY] = &wpstat_fault_dirty_range,
};

static DEFINE_MUTEX(wpstat_attach_mutex);	/* attach, detach, switch */
/*
 * Set once wpstat_attach_init() has attached every point and cleared when
 * wpstat_attach_exit() starts, under the mutex: a level switch outside
 * that window would attach points the init or exit path also attaches or
 * detaches (a kretprobe registered twice, its instance pool lost).
 */
static bool wpstat_attach_ready;
static enum wpstat_level wpstat_level = WPL_COUNTS;
static u32 wpstat_attached_mask;	/* points attached at wpstat_level */

/* ---- module parameters -------------------------------------------------- */

static char *skip_probes = "";
module_param(skip_probes, charp, 0444);
MODULE_PARM_DESC(skip_probes, "Comma-separated probes not to attach (see debugfs wpstat/probes); their columns read '-'");

/*
 * Benchmark floor: attach the very same points with handlers that return
 * at once, so that the cost of the mechanisms alone can be measured.
 * Nothing is counted: every counter reads '-' and the summary says
 * "floor 1".
 */
static bool wpstat_floor;
module_param_named(floor, wpstat_floor, bool, 0444);
MODULE_PARM_DESC(floor, "Benchmark floor: same probes, empty handlers, nothing counted (default 0)");

const char *wpstat_level_name(enum wpstat_level level)
{
	return level < WPL_NR ? wpstat_level_names[level] : "?";
}

/* A level's number from its name, or -EINVAL. */
int wpstat_level_parse(const char *s)
{
	int l = sysfs_match_string(wpstat_level_names, s);

	return l < 0 ? -EINVAL : l;
}

static int level_param_set(const char *val, const struct kernel_param *kp)
{
	int l = wpstat_level_parse(val);

	if (l < 0) {
		pr_err("level must be counts or timing\n");
		return l;
	}
	wpstat_level = l;
	return 0;
}

static int level_param_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", wpstat_level_name(READ_ONCE(wpstat_level)));
}

static const struct kernel_param_ops level_param_ops = {
	.set = level_param_set,
	.get = level_param_get,
};

/* Chosen at load; debugfs control "level ..." switches at run time. */
module_param_cb(level, &level_param_ops, NULL, 0444);
MODULE_PARM_DESC(level, "counts (default: entry-only callbacks and tracepoints) or timing (adds return probes for mkwrite_ns and mkclean_ptes)");

/*
 * Return-probe instances per kretprobe: how many calls of its function it
 * follows at once (tasks asleep in it); an entry that finds none free is
 * not counted (missed_<probe>).  A number, not one per CPU: since 6.7 a
 * kretprobe's pool (rethook's objpool) gives every possible CPU a ring
 * with room for all of its instances, so its memory is CPUs x instances,
 * linear in CPUs only while the instances are not.  256 fill a page a
 * CPU (wpstat_krp_pool_bytes()).
 */
static unsigned int wpstat_krp_instances = 256;
static struct wpstat_rows_param krp_instances_param = {
	.val = &wpstat_krp_instances,
	.limit = 65536,
};
module_param_cb(krp_instances, &wpstat_rows_param_ops, &krp_instances_param,
		0444);
MODULE_PARM_DESC(krp_instances, "Calls each return probe follows at once (1..65536, default 256); more are counted in missed_<probe>");

bool wpstat_floor_mode(void)
{
	return wpstat_floor;
}

enum wpstat_level wpstat_get_level(void)
{
	return READ_ONCE(wpstat_level);
}

/* ---- the shared entry-only ftrace_ops ----------------------------------- */

static struct ftrace_ops wpstat_entry_ops = {
	.flags = WPSTAT_FTRACE_OPS_FLAGS,
};
static unsigned int wpstat_entry_nr_ips;	/* addresses in its filter */
static bool wpstat_entry_registered;

static int entry_ops_add(unsigned long ip)
{
	int ret = ftrace_set_filter_ip(&wpstat_entry_ops, ip, 0, 0);

	if (!ret)
		wpstat_entry_nr_ips++;
	return ret;
}

/*
 * Never leave the ops registered with an empty filter: an empty filter
 * traces every function in the kernel.
 */
static void entry_ops_remove(unsigned long ip)
{
	if (wpstat_entry_nr_ips == 1 && wpstat_entry_registered) {
		unregister_ftrace_function(&wpstat_entry_ops);
		wpstat_entry_registered = false;
	}
	ftrace_set_filter_ip(&wpstat_entry_ops, ip, 1, 0);
	wpstat_entry_nr_ips--;
}

static int entry_ops_register(void)
{
	int ret;

	if (wpstat_entry_registered || !wpstat_entry_nr_ips)
		return 0;
	/* All entry points share one callback (real or floor). */
	wpstat_entry_ops.func = wpstat_floor ?
		wpstat_floor_handlers[WPP_BDP_RL].ftrace :
		wpstat_entry_handlers[WPP_BDP_RL].ftrace;
	ret = register_ftrace_function(&wpstat_entry_ops);
	if (!ret)
		wpstat_entry_registered = true;
	return ret;
}

/*
 * The memory of the kretprobes attached now (*@nkrp of them): bytes in
 * all, of which *@cpu bytes per possible CPU (wpstat_krp_pool_bytes()).
 */
size_t wpstat_attach_bytes(size_t *cpu, unsigned int *nkrp)
{
	size_t bytes = 0;
	int p;

	*nkrp = 0;
	/* No lock: the summary's reader must not wait for a level switch. */
	for (p = 0; p < WPP_NR; p++)
		if (READ_ONCE(wpstat_probes[p].on) & BIT(WPM_KRETPROBE)) {
			bytes += wpstat_krp_pool_bytes(wpstat_krp_instances,
						       wpstat_probes[p].krp.data_size,
						       cpu);
			(*nkrp)++;
		}
	return bytes;
}

/* ---- attaching one mechanism -------------------------------------------- */

/* @p's handlers for mechanism @m: the floor's, or those of @m's file. */
static const struct wpstat_handler_set *handlers_of(enum wpstat_probe_id p,
						    enum wpstat_mech m)
{
	if (wpstat_floor)
		return &wpstat_floor_handlers[p];
	return m == WPM_KRETPROBE ? &wpstat_krp_handlers[p] :
	       m == WPM_TRACEPOINT ? &wpstat_tp_handlers[p] :
	       &wpstat_entry_handlers[p];
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

/* Whether @wp's target lives in a module (its home), not in vmlinux. */
static bool wpstat_in_module(const struct wpstat_probe *wp)
{
	return strcmp(wp->home, "vmlinux");
}

static bool wpstat_has_mech(const struct wpstat_probe *wp, enum wpstat_mech m)
{
	return wp->mech[WPL_COUNTS] == m || wp->mech[WPL_TIMING] == m;
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

/*
 * The address of every FTRACE and SYMBOL point, through a disabled kprobe
 * (static functions are not in any exported table).  A FTRACE point must
 * be an ftrace site: the kprobe says so with KPROBE_FLAG_FTRACE, and its
 * address is then the ip ftrace hands to callbacks (after endbr64 on IBT
 * kernels).  Unresolved points keep addr 0, as all do without memory for
 * the kprobes (too large for the stack).
 */
static void wpstat_resolve_addresses(void)
{
	struct kprobe *kps, *reg[WPP_NR];
	int p, n = 0;

	kps = kcalloc(WPP_NR, sizeof(*kps), GFP_KERNEL);
	if (!kps)
		return;
	for (p = 0; p < WPP_NR; p++) {
		struct wpstat_probe *wp = &wpstat_probes[p];
		bool ftrace = wpstat_has_mech(wp, WPM_FTRACE);

		if (!ftrace && !wpstat_has_mech(wp, WPM_SYMBOL))
			continue;
		kps[p].symbol_name = wp->target;
		kps[p].flags = KPROBE_FLAG_DISABLED;
		if (register_kprobe(&kps[p]))
			continue;
		reg[n++] = &kps[p];
		if (ftrace && !(kps[p].flags & KPROBE_FLAG_FTRACE))
			continue;
		wp->addr = (unsigned long)kps[p].addr;
	}
	if (n)
		unregister_kprobes(reg, n);
	kfree(kps);
	for (p = 0; p < WPP_NR; p++)
		if (wpstat_has_mech(&wpstat_probes[p], WPM_FTRACE))
			wpstat_entry_ip[p] = wpstat_probes[p].addr;
	/* Unknown (size 0): no wait is taken for one in a write fault. */
	if (wpstat_probes[WPP_MKWRITE].addr)
		wpstat_symbol_range(wpstat_probes[WPP_MKWRITE].addr,
				    &wpstat_mkwrite_range);
}

static int attach_mech(enum wpstat_probe_id p, enum wpstat_mech m)
{
	struct wpstat_probe *wp = &wpstat_probes[p];
	const struct wpstat_handler_set *h = handlers_of(p, m);
	struct tp_lookup l = { .name = wp->target };
	int ret;

	switch (m) {
	case WPM_NONE:		/* nothing at this level, and nothing wrong */
		return 0;
	case WPM_FTRACE:
		if (!wp->addr)
			return -ENOENT;
		ret = entry_ops_add(wp->addr);
		break;
	case WPM_KRETPROBE:
		memset(&wp->krp, 0, sizeof(wp->krp));
		wp->krp.kp.symbol_name = wp->target;
		wp->krp.entry_handler = h->krp_entry;
		wp->krp.handler = h->krp_return;
		wp->krp.data_size = h->krp_data_size;
		/* One instance per task in the function: krp_instances. */
		wp->krp.maxactive = wpstat_krp_instances;
		ret = register_kretprobe(&wp->krp);
		break;
	case WPM_TRACEPOINT:
		if (wpstat_in_module(wp))	/* wpstat_tp_module_event() */
			l.tp = wp->mod_tp;
		else
			for_each_kernel_tracepoint(tp_lookup_one, &l);
		if (!l.tp)
			return -ENOENT;
		wp->tp = l.tp;
		wp->tp_func = h->tp;
		ret = tracepoint_probe_register(l.tp, wp->tp_func, NULL);
		break;
	case WPM_SYMBOL:
		if (!wp->addr)
			return -ENOENT;
		ret = wpstat_symbol_range(wp->addr, wpstat_symbol_ranges[p]);
		break;
	default:
		return -EINVAL;
	}
	if (!ret)
		wp->on |= BIT(m);
	return ret;
}

/*
 * Undo attach_mech().  Kretprobes and tracepoints may be left for a batch
 * (@krps, @nkrp; tracepoint_synchronize_unregister()) by the caller.
 */
static void detach_mech(enum wpstat_probe_id p, enum wpstat_mech m,
			struct kretprobe **krps, int *nkrp)
{
	struct wpstat_probe *wp = &wpstat_probes[p];

	if (!(wp->on & BIT(m)))
		return;
	switch (m) {
	case WPM_FTRACE:
		entry_ops_remove(wp->addr);
		break;
	case WPM_KRETPROBE:
		wp->missed_base += wp->krp.nmissed + wp->krp.kp.nmissed;
		if (krps)
			krps[(*nkrp)++] = &wp->krp;
		else
			unregister_kretprobe(&wp->krp);
		break;
	case WPM_TRACEPOINT:
		tracepoint_probe_unregister(wp->tp, wp->tp_func, NULL);
		break;
	case WPM_SYMBOL:
		wpstat_symbol_ranges[p]->size = 0;
		break;
	default:
		break;
	}
	wp->on &= ~BIT(m);
}

static void wpstat_update_mask(void)
{
	u32 mask = 0;
	int p;

	for (p = 0; p < WPP_NR; p++) {
		struct wpstat_probe *wp = &wpstat_probes[p];

		if (wp->on & BIT(wp->mech[wpstat_level]))
			mask |= BIT(p);
	}
	WRITE_ONCE(wpstat_attached_mask, mask);
	WRITE_ONCE(wpstat_wait_bit_attached,
		   !wpstat_floor && (mask & BIT(WPP_WAIT_BIT)));
}

/* The columns that need @bit, comma-separated (kmalloc'd; NULL: none). */
static char *wpstat_columns_needing(u32 bit)
{
	size_t len = 1;
	char *cols;
	int c;

	for (c = 0; c < WPC_NR; c++)
		if (wpstat_counters[c].needs & bit)
			len += strlen(wpstat_counters[c].name) + 1;
	cols = kzalloc(len, GFP_KERNEL);
	if (!cols)
		return NULL;
	for (c = 0; c < WPC_NR; c++) {
		if (!(wpstat_counters[c].needs & bit))
			continue;
		if (cols[0])
			strlcat(cols, ",", len);
		strlcat(cols, wpstat_counters[c].name, len);
	}
	return cols;
}

static void wpstat_report_unavailable(struct wpstat_probe *wp, u32 bit)
{
	char *cols = wpstat_columns_needing(bit);
	const char *shown = cols ? cols : "(out of memory to list them)";

	if (wp->err == -ECANCELED)
		pr_info("probe %s (%s) skipped by request; unavailable: %s\n",
			wp->name, wp->target, shown);
	else
		pr_warn("probe %s (%s) not attached at level %s (error %d); unavailable: %s\n",
			wp->name, wp->target, wpstat_level_name(wpstat_level),
			wp->err, shown);
	kfree(cols);
}

/* ---- level switch ---------------------------------------------------------- */

/*
 * Under stop_machine(): no handler is running anywhere (they all run
 * with preemption disabled).  Leaving level timing, the fault, ZFS
 * sync and jbd2 start scopes of tasks asleep inside them are dropped
 * here: the probes that close them are about to go, and a scope nothing
 * closes would hold the task's context until it exits.
 */
static int wpstat_flip_level(void *data)
{
	int to = *(int *)data;

	WRITE_ONCE(wpstat_counting_level, to);
	WRITE_ONCE(wpstat_level_epoch, wpstat_level_epoch + 1);
	if (to != WPL_TIMING)
		wpstat_tctx_drop_scopes(WPT_FAULT | WPT_SYNC | WPT_JOURNAL);
	return 0;
}

/*
 * Move the points whose mechanism differs between the levels, exactly: an
 * event is counted by the old or the new handler, never both, never none.
 *   1. attach the new mechanisms; their handlers do not count yet
 *      (wpstat_counting_level still names the old level);
 *   2. synchronize_rcu_tasks(): no task is left inside a trampoline it
 *      entered before step 1, so every call from now on runs both;
 *   3. flip wpstat_counting_level under stop_machine(): the handlers of one
 *      call run back to back with preemption disabled, so none straddles
 *      the flip;
 *   4. detach the old mechanisms.
 * A failure in step 1 detaches what it attached and changes nothing.
 */
int wpstat_set_level(enum wpstat_level to)
{
	struct kretprobe *krps[WPP_NR];
	enum wpstat_level from;
	u32 moved = 0;
	int p, nkrp = 0, ret = 0;

	if (to >= WPL_NR)
		return -EINVAL;
	mutex_lock(&wpstat_attach_mutex);
	if (!wpstat_attach_ready) {
		pr_info("level %s refused: the module is still loading or unloading\n",
			wpstat_level_name(to));
		ret = -EBUSY;
		goto out;
	}
	from = wpstat_level;
	if (to == from)
		goto out;
	for (p = 0; p < WPP_NR; p++) {
		struct wpstat_probe *wp = &wpstat_probes[p];

		if (wp->err == -ECANCELED || wp->mech[from] == wp->mech[to])
			continue;
		ret = attach_mech(p, wp->mech[to]);
		if (ret && !(wp->on & BIT(wp->mech[from]))) {
			/* Not counting now either: it stays unavailable. */
			wp->err = ret;
			ret = 0;
			continue;
		}
		if (ret) {
			pr_warn("level %s: cannot attach %s (%s): error %d\n",
				wpstat_level_name(to), wp->name, wp->target, ret);
			goto unwind;
		}
		moved |= BIT(p);
	}
	ret = entry_ops_register();
	if (ret)
		goto unwind;

	synchronize_rcu_tasks();
	stop_machine(wpstat_flip_level, &to, NULL);

	for (p = 0; p < WPP_NR; p++)
		if (moved & BIT(p))
			detach_mech(p, wpstat_probes[p].mech[from], krps, &nkrp);
	if (nkrp)
		unregister_kretprobes(krps, nkrp);
	for (p = 0; p < WPP_NR; p++)
		if (moved & BIT(p))
			wpstat_probes[p].err = 0;
	WRITE_ONCE(wpstat_level, to);
	wpstat_update_mask();
	pr_info("level %s\n", wpstat_level_name(to));
	goto out;

unwind:
	for (p = 0; p < WPP_NR; p++)
		if (moved & BIT(p))
			detach_mech(p, wpstat_probes[p].mech[to], NULL, NULL);
	tracepoint_synchronize_unregister();
out:
	mutex_unlock(&wpstat_attach_mutex);
	return ret;
}

/* ---- points in modules ------------------------------------------------------ */

/*
 * The ftrace ip of @wp's target in @mod, which has just come live, or 0:
 * what wpstat_resolve_addresses() finds at load, for one point.
 */
static unsigned long wpstat_module_ftrace_ip(const struct wpstat_probe *wp,
					     struct module *mod)
{
	struct kprobe kp = {
		.symbol_name = wp->target,
		.flags = KPROBE_FLAG_DISABLED,
	};
	unsigned long ip = 0;

	if (register_kprobe(&kp))
		return 0;
	if ((kp.flags & KPROBE_FLAG_FTRACE) &&
	    within_module((unsigned long)kp.addr, mod))
		ip = (unsigned long)kp.addr;
	unregister_kprobe(&kp);
	return ip;
}

/*
 * @mod came live: a point of this level whose home it is, and that could
 * not attach, is tried again, and kept if its target is in @mod.  An
 * entry point's address is looked up first, whatever the level, for a
 * later switch to the level that uses it.
 */
static void wpstat_module_live(enum wpstat_probe_id p, struct module *mod)
{
	struct wpstat_probe *wp = &wpstat_probes[p];
	enum wpstat_mech m = wp->mech[wpstat_level];
	unsigned long where;
	int err;

	if (wp->err == -ECANCELED)
		return;
	if (wpstat_has_mech(wp, WPM_FTRACE) && !wp->addr) {
		wp->addr = wpstat_module_ftrace_ip(wp, mod);
		/* Set before the filter holds it; never cleared (below). */
		if (wp->addr)
			WRITE_ONCE(wpstat_entry_ip[p], wp->addr);
	}
	if (!wp->err || (m != WPM_KRETPROBE && m != WPM_FTRACE &&
			 m != WPM_TRACEPOINT))
		return;
	err = attach_mech(p, m);
	if (!err && m == WPM_FTRACE) {
		err = entry_ops_register();
		if (err)
			detach_mech(p, m, NULL, NULL);
	}
	if (err)
		return;
	where = m == WPM_KRETPROBE ? (unsigned long)wp->krp.kp.addr :
		m == WPM_FTRACE ? wp->addr : (unsigned long)wp->tp;
	if (!within_module(where, mod)) {
		/* Not this module's: it stays as it was reported. */
		detach_mech(p, m, NULL, NULL);
		return;
	}
	wp->err = 0;
	pr_info("probe %s (%s) attached: module %s loaded\n",
		wp->name, wp->target, mod->name);
}

/* @p's mechanism @m, in @mod, goes with it: not-found until it comes. */
static void wpstat_module_detach(enum wpstat_probe_id p, enum wpstat_mech m,
				 struct module *mod)
{
	struct wpstat_probe *wp = &wpstat_probes[p];

	detach_mech(p, m, NULL, NULL);
	wp->err = -ENOENT;
	pr_info("probe %s (%s) detached: module %s unloading\n",
		wp->name, wp->target, mod->name);
}

/*
 * @mod is going: a return or entry point in it is detached (kprobes would
 * leave a kretprobe gone, yet counted as attached, and never revive it;
 * ftrace would keep the ip in the filter, for whatever code comes there
 * next), and an entry point's address forgotten.  The dispatch's
 * wpstat_entry_ip keeps it: a call in flight may still carry it, and
 * nothing can call there once the module is gone.
 */
static void wpstat_module_going(enum wpstat_probe_id p, struct module *mod)
{
	struct wpstat_probe *wp = &wpstat_probes[p];
	enum wpstat_mech m = wp->mech[wpstat_level];

	if (wp->err == -ECANCELED)
		return;
	if (m == WPM_KRETPROBE && (wp->on & BIT(m)) &&
	    within_module((unsigned long)wp->krp.kp.addr, mod))
		wpstat_module_detach(p, m, mod);
	if (!wpstat_has_mech(wp, WPM_FTRACE) || !wp->addr ||
	    !within_module(wp->addr, mod))
		return;
	if (wp->on & BIT(WPM_FTRACE))
		wpstat_module_detach(p, WPM_FTRACE, mod);
	wp->addr = 0;
}

/*
 * The journal points live in modules (jbd2, xfs, zfs) that may come after
 * the level was set (xfs at its first mount) or go and come again.  Only
 * a module's own points are tried when it comes (each try registers and
 * unregisters a kprobe: a synchronize_rcu(), and a handler run in
 * between); its tracepoints were found as it came
 * (wpstat_tp_module_event()).
 */
static int wpstat_module_event(struct notifier_block *nb, unsigned long state,
			       void *data)
{
	struct module *mod = data;
	int p;

	if (state != MODULE_STATE_LIVE && state != MODULE_STATE_GOING)
		return NOTIFY_DONE;
	mutex_lock(&wpstat_attach_mutex);
	if (!wpstat_attach_ready)
		goto out;
	for (p = 0; p < WPP_NR; p++) {
		if (state == MODULE_STATE_GOING)
			wpstat_module_going(p, mod);
		else if (!strcmp(wpstat_probes[p].home, mod->name))
			wpstat_module_live(p, mod);
	}
	wpstat_update_mask();
out:
	mutex_unlock(&wpstat_attach_mutex);
	return NOTIFY_DONE;
}

static struct notifier_block wpstat_module_nb = {
	.notifier_call = wpstat_module_event,
};
static bool wpstat_module_nb_registered;

static struct tracepoint *wpstat_module_tracepoint(struct module *mod,
						   const char *name)
{
	unsigned int i;

	for (i = 0; i < mod->num_tracepoints; i++) {
		struct tracepoint *tp =
			tracepoint_ptr_deref(&mod->tracepoints_ptrs[i]);

		if (!strcmp(tp->name, name))
			return tp;
	}
	return NULL;
}

/*
 * A module with tracepoints comes (and, as this notifier registers, every
 * one loaded already) or goes.  Coming, the tracepoints of points whose
 * home it is are found for attach_mech(), by the module notifier once the
 * module is live or by a level switch.  Going, they are detached here,
 * before tracepoint_module_going() checks that no probe is left on them.
 */
static int wpstat_tp_module_event(struct notifier_block *nb,
				  unsigned long state, void *data)
{
	struct module *mod = ((struct tp_module *)data)->mod;
	int p;

	if (state != MODULE_STATE_COMING && state != MODULE_STATE_GOING)
		return NOTIFY_DONE;
	mutex_lock(&wpstat_attach_mutex);
	for (p = 0; p < WPP_NR; p++) {
		struct wpstat_probe *wp = &wpstat_probes[p];

		if (!wpstat_has_mech(wp, WPM_TRACEPOINT) ||
		    strcmp(wp->home, mod->name))
			continue;
		if (state == MODULE_STATE_COMING) {
			wp->mod_tp = wpstat_module_tracepoint(mod, wp->target);
			continue;
		}
		if (wp->on & BIT(WPM_TRACEPOINT))
			wpstat_module_detach(p, WPM_TRACEPOINT, mod);
		wp->mod_tp = NULL;
	}
	wpstat_update_mask();
	mutex_unlock(&wpstat_attach_mutex);
	return NOTIFY_OK;
}

static struct notifier_block wpstat_tp_module_nb = {
	.notifier_call = wpstat_tp_module_event,
};
static bool wpstat_tp_module_nb_registered;

/* ---- load and unload ------------------------------------------------------ */

int wpstat_attach_init(void)
{
	int p, ret;

	wpstat_counting_level = wpstat_level;
	wpstat_resolve_addresses();
	/*
	 * Before the points: a module that comes while they attach is then
	 * either found by the attach or handled by the notifier, which waits
	 * for the mutex and for wpstat_attach_ready.
	 */
	ret = register_module_notifier(&wpstat_module_nb);
	if (ret)
		pr_warn("no module notifier (error %d): journal points attach only with the level\n",
			ret);
	wpstat_module_nb_registered = !ret;
	/* Outside the mutex: its first calls (modules loaded now) take it. */
	ret = register_tracepoint_module_notifier(&wpstat_tp_module_nb);
	if (ret)
		pr_warn("no tracepoint module notifier (error %d): no tracepoint in a module attaches\n",
			ret);
	wpstat_tp_module_nb_registered = !ret;

	mutex_lock(&wpstat_attach_mutex);
	/*
	 * Inner points first: an outer call whose handlers are attached
	 * before the inner ones exist only costs a few uncounted events.
	 * The entry-only points go live together when the ops registers.
	 */
	for (p = WPP_NR - 1; p >= 0; p--) {
		struct wpstat_probe *wp = &wpstat_probes[p];

		if (wpstat_probe_skipped(wp->name))
			wp->err = -ECANCELED;
		else
			wp->err = attach_mech(p, wp->mech[wpstat_level]);
	}
	ret = entry_ops_register();
	for (p = 0; p < WPP_NR; p++) {
		struct wpstat_probe *wp = &wpstat_probes[p];

		/*
		 * Take the ip out of the filter too: a later level switch
		 * registers the ops again, and must not revive a point
		 * reported unavailable here.
		 */
		if (wp->mech[wpstat_level] == WPM_FTRACE && !wp->err && ret) {
			entry_ops_remove(wp->addr);
			wp->err = ret;
			wp->on &= ~BIT(WPM_FTRACE);
		}
		if (wp->err)
			wpstat_report_unavailable(wp, BIT(p));
	}
	wpstat_update_mask();
	wpstat_attach_ready = true;
	mutex_unlock(&wpstat_attach_mutex);
	return 0;
}

void wpstat_attach_exit(void)
{
	struct kretprobe *krps[WPP_NR];
	int p, nkrp = 0;

	/* Waits for a notification in flight (the chain's rwsem). */
	if (wpstat_module_nb_registered)
		unregister_module_notifier(&wpstat_module_nb);
	wpstat_module_nb_registered = false;
	mutex_lock(&wpstat_attach_mutex);
	wpstat_attach_ready = false;
	WRITE_ONCE(wpstat_attached_mask, 0);
	WRITE_ONCE(wpstat_wait_bit_attached, false);
	/* One grace period per kind, not one per point. */
	if (wpstat_entry_registered) {
		unregister_ftrace_function(&wpstat_entry_ops);
		wpstat_entry_registered = false;
	}
	for (p = 0; p < WPP_NR; p++) {
		enum wpstat_mech m;

		for (m = WPM_FTRACE; m <= WPM_SYMBOL; m++)
			detach_mech(p, m, krps, &nkrp);
	}
	if (nkrp)
		unregister_kretprobes(krps, nkrp);
	/* Tracepoint handlers may still run until this returns. */
	tracepoint_synchronize_unregister();
	wpstat_ftrace_free_filter(&wpstat_entry_ops);
	mutex_unlock(&wpstat_attach_mutex);
	/*
	 * Last: until every point is detached, a module going must still
	 * have its tracepoints detached before tracepoint_module_going()
	 * checks them.
	 */
	if (wpstat_tp_module_nb_registered)
		unregister_tracepoint_module_notifier(&wpstat_tp_module_nb);
	wpstat_tp_module_nb_registered = false;
}

/* ---- what is available, for /proc and debugfs ----------------------------- */

/*
 * The journal counters name every journal's probes in their needs, but
 * one filesystem's are enough: jbd2's pair (ext4), xfs's or ZFS's.
 */
static u32 wpstat_journal_any(u32 mask)
{
	const u32 jbd2 = BIT(WPP_JBD2_START) | BIT(WPP_JBD2_ACCESS);
	const u32 all = jbd2 | BIT(WPP_XFS_TIME) | BIT(WPP_ZFS_TX);

	if ((mask & jbd2) == jbd2 || (mask & (BIT(WPP_XFS_TIME) | BIT(WPP_ZFS_TX))))
		mask |= all;
	return mask;
}

bool wpstat_counter_available(enum wpstat_counter c)
{
	u32 need = wpstat_counters[c].needs;

	/* Floor mode counts nothing: no column may look like a real zero. */
	return !wpstat_floor &&
	       wpstat_counters[c].level <= READ_ONCE(wpstat_level) &&
	       (wpstat_journal_any(READ_ONCE(wpstat_attached_mask)) & need) == need;
}

const char *wpstat_probe_name(enum wpstat_probe_id p)
{
	return wpstat_probes[p].name;
}

u64 wpstat_probe_missed(enum wpstat_probe_id p)
{
	struct wpstat_probe *wp = &wpstat_probes[p];
	u64 n = wp->missed_base + WPSTAT_PROBE_STAT(missed[p]);

	if (wp->on & BIT(WPM_KRETPROBE))
		n += wp->krp.nmissed + wp->krp.kp.nmissed;
	return n;
}

void wpstat_probes_show(struct seq_file *m)
{
	int p;

	mutex_lock(&wpstat_attach_mutex);
	seq_puts(m, "probe target kind status hits missed\n");
	for (p = 0; p < WPP_NR; p++) {
		struct wpstat_probe *wp = &wpstat_probes[p];
		enum wpstat_mech mech = wp->mech[wpstat_level];

		seq_printf(m, "%s %s %s ", wp->name, wp->target,
			   wpstat_mech_names[mech]);
		if (mech == WPM_NONE)
			seq_puts(m, "off");
		else if (wp->on & BIT(mech))
			seq_puts(m, "attached");
		else if (wp->err == -ECANCELED)
			seq_puts(m, "skipped");
		else if (wp->err == -ENOENT)
			seq_puts(m, "not-found");
		else
			seq_printf(m, "error:%d", wp->err);
		seq_printf(m, " %llu %llu\n", WPSTAT_PROBE_STAT(hits[p]),
			   wpstat_probe_missed(p));
	}
	mutex_unlock(&wpstat_attach_mutex);
}
