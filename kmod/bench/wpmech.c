// SPDX-License-Identifier: GPL-2.0
/*
 * wpmech - what one attachment mechanism costs per call, for the table in
 * docs/results/benchmarks.md (make bench; the method: docs/benchmarks.md).
 * Not part of wpstat.ko.
 *
 * On load it calls a noinline function @calls times with nothing attached,
 * attaches @mech to it, calls it @calls times again, detaches, and leaves
 * the two loop times and the difference per call in the "result"
 * parameter.  Under QEMU's -icount (scripts/bench/bench.sh) a nanosecond is one
 * guest instruction, so the difference is instructions per call.
 *
 *   none         nothing (the two loops should agree)
 *   tracepoint   a tracepoint in the function, one probe
 *   ftrace       an ftrace_ops callback, argument registers only
 *                (struct ftrace_regs, 5.11+; refused on 5.10)
 *   ftrace_regs  the same with FTRACE_OPS_FL_SAVE_REGS (what wpstat uses
 *                on 5.10, where a callback gets arguments only that way)
 *   ftrace2      two ftrace_ops on the function: ftrace's list function
 *   kprobe       a kprobe (on the ftrace site: kprobe_ftrace_handler)
 *   ftrace_kprobe  an ftrace_ops and a kprobe on the function
 * (ftrace2 and ftrace_kprobe use the ops flags wpstat would: none where
 * there is struct ftrace_regs, FTRACE_OPS_FL_SAVE_REGS on 5.10.)
 *   kretprobe    a kretprobe (entry and return handler)
 *   kretprobe_refused  a kretprobe whose entry handler refuses the
 *                return (wpstat's lock point, outside a timed fault)
 *   kretprobe_int3, kretprobe_int3_refused  the same two on a function
 *                with no ftrace site (notrace): a breakpoint, timed before
 *                the kprobe optimizer runs.  The lock point on the static
 *                folio_wait_bit_common() is one until the optimizer makes
 *                it a jump ([OPTIMIZED] in kprobes/list): an upper bound
 *   fprobe       an fprobe with an entry handler only (6.12)
 *   fprobe_exit  an fprobe with entry and exit handlers (6.12)
 *
 * Every handler counts its calls, so a mechanism that silently did not
 * fire is reported as an error instead of as free; a mechanism this kernel
 * does not have is refused with EOPNOTSUPP (recorded as not available).
 *
 * The kernels' differences are wpstat's own: the feature probes of
 * kmod/Kbuild.common and the wrappers of kmod/wpstat_compat.h (the
 * ftrace callback's arguments and recursion guard, ftrace_free_filter(),
 * fprobe's handler registers, 6.16's DECLARE_TRACE()), so a callback
 * here is registered as wpstat registers its own.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ftrace.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#ifdef CONFIG_FPROBE
#include <linux/fprobe.h>
#endif

#include "wpstat_compat.h"

/* Declares trace_wpmech_tp() on every kernel. */
WPSTAT_DECLARE_TRACE_TP(wpmech, TP_PROTO(unsigned long x), TP_ARGS(x));
DEFINE_TRACE(wpmech_tp, TP_PROTO(unsigned long x), TP_ARGS(x));

static char *mech = "none";
module_param(mech, charp, 0444);
MODULE_PARM_DESC(mech, "none, tracepoint, ftrace, ftrace_regs, ftrace2, kprobe, ftrace_kprobe, kretprobe, fprobe, fprobe_exit");

static unsigned long calls = 1000000;
module_param(calls, ulong, 0444);
MODULE_PARM_DESC(calls, "Calls per loop (default 1000000)");

static char result[160];
module_param_string(result, result, sizeof(result), 0444);
MODULE_PARM_DESC(result, "mech calls base_ns attached_ns added_ns_per_call_x1000 hits");

static unsigned long hits;

static noinline void wpmech_target(unsigned long x)
{
	trace_wpmech_tp(x);
	barrier();
}

static unsigned long wpmech_sink;

/* No ftrace site: a kprobe on it is a breakpoint. */
static noinline notrace void wpmech_target_bare(unsigned long x)
{
	WRITE_ONCE(wpmech_sink, x);
	barrier();
}

/* The int3 mechanisms probe wpmech_target_bare, the rest wpmech_target. */
static bool wpmech_bare(void)
{
	return strstr(mech, "int3");
}

static void wpmech_tp_probe(void *data, unsigned long x)
{
	hits++;
}

static void notrace wpmech_ftrace(WPSTAT_FTRACE_CB_PROTO)
{
	int bit = wpstat_ftrace_trylock(ip, parent_ip);

	if (bit < 0)
		return;
	hits++;
	wpstat_ftrace_unlock(bit);
}

static struct ftrace_ops wpmech_ops[2] = {
	{ .func = wpmech_ftrace },
	{ .func = wpmech_ftrace },
};

static int wpmech_kprobe_pre(struct kprobe *p, struct pt_regs *regs)
{
	hits++;
	return 0;
}
NOKPROBE_SYMBOL(wpmech_kprobe_pre);

static struct kprobe wpmech_kp = {
	.symbol_name = "wpmech_target",
	.pre_handler = wpmech_kprobe_pre,
};

static int wpmech_krp_entry(struct kretprobe_instance *ri,
			    struct pt_regs *regs)
{
	hits++;
	return 0;
}
NOKPROBE_SYMBOL(wpmech_krp_entry);

/* Non-zero: the kretprobe does not take the function's return. */
static int wpmech_krp_refuse(struct kretprobe_instance *ri,
			     struct pt_regs *regs)
{
	hits++;
	return 1;
}
NOKPROBE_SYMBOL(wpmech_krp_refuse);

static int wpmech_krp_return(struct kretprobe_instance *ri,
			     struct pt_regs *regs)
{
	return 0;
}
NOKPROBE_SYMBOL(wpmech_krp_return);

static struct kretprobe wpmech_krp = {
	.kp.symbol_name = "wpmech_target",
	.entry_handler = wpmech_krp_entry,
	.handler = wpmech_krp_return,
	.maxactive = 64,
};

#ifdef CONFIG_FPROBE
static int wpmech_fp_entry(struct fprobe *fp, unsigned long entry_ip,
			   unsigned long ret_ip, struct WPSTAT_FPROBE_REGS *regs,
			   void *data)
{
	hits++;
	return 0;
}

static void wpmech_fp_exit(struct fprobe *fp, unsigned long entry_ip,
			   unsigned long ret_ip, struct WPSTAT_FPROBE_REGS *regs,
			   void *data)
{
}

static struct fprobe wpmech_fp;
#endif

static int wpmech_ops_add(struct ftrace_ops *ops, unsigned long flags)
{
	int ret;

	ops->flags = flags;
	ret = ftrace_set_filter(ops, (unsigned char *)"wpmech_target",
				strlen("wpmech_target"), 1);
	return ret ?: register_ftrace_function(ops);
}

static void wpmech_ops_del(struct ftrace_ops *ops)
{
	unregister_ftrace_function(ops);
	/*
	 * Empty the filter, which frees its hash where ftrace_free_filter()
	 * is not exported (wpstat_ftrace_free_filter() then does nothing).
	 */
	ftrace_set_filter(ops, NULL, 0, 1);
	wpstat_ftrace_free_filter(ops);
}

static int wpmech_attach(void)
{
	int ret;

	if (!strcmp(mech, "none"))
		return 0;
	if (!strcmp(mech, "tracepoint"))
		return register_trace_wpmech_tp(wpmech_tp_probe, NULL);
	if (!strcmp(mech, "ftrace")) {
#ifdef WPSTAT_HAVE_FTRACE_REGS
		return wpmech_ops_add(&wpmech_ops[0], 0);
#else
		pr_info("ftrace: no struct ftrace_regs: a callback gets arguments only with SAVE_REGS (ftrace_regs)\n");
		return -EOPNOTSUPP;
#endif
	}
	if (!strcmp(mech, "ftrace_regs"))
		return wpmech_ops_add(&wpmech_ops[0], FTRACE_OPS_FL_SAVE_REGS);
	if (!strcmp(mech, "ftrace2")) {
		ret = wpmech_ops_add(&wpmech_ops[0], WPSTAT_FTRACE_OPS_FLAGS);
		if (ret)
			return ret;
		ret = wpmech_ops_add(&wpmech_ops[1], WPSTAT_FTRACE_OPS_FLAGS);
		if (ret)
			wpmech_ops_del(&wpmech_ops[0]);
		return ret;
	}
	if (!strcmp(mech, "kprobe"))
		return register_kprobe(&wpmech_kp);
	if (!strcmp(mech, "ftrace_kprobe")) {
		ret = wpmech_ops_add(&wpmech_ops[0], WPSTAT_FTRACE_OPS_FLAGS);
		if (ret)
			return ret;
		ret = register_kprobe(&wpmech_kp);
		if (ret)
			wpmech_ops_del(&wpmech_ops[0]);
		return ret;
	}
	if (!strcmp(mech, "kretprobe") || !strcmp(mech, "kretprobe_refused") ||
	    !strcmp(mech, "kretprobe_int3") ||
	    !strcmp(mech, "kretprobe_int3_refused")) {
		if (wpmech_bare())
			wpmech_krp.kp.symbol_name = "wpmech_target_bare";
		if (strstr(mech, "refused"))
			wpmech_krp.entry_handler = wpmech_krp_refuse;
		return register_kretprobe(&wpmech_krp);
	}
#ifdef CONFIG_FPROBE
	if (!strcmp(mech, "fprobe") || !strcmp(mech, "fprobe_exit")) {
		wpmech_fp.entry_handler = wpmech_fp_entry;
		if (!strcmp(mech, "fprobe_exit"))
			wpmech_fp.exit_handler = wpmech_fp_exit;
		return register_fprobe(&wpmech_fp, "wpmech_target", NULL);
	}
#endif
	return -EOPNOTSUPP;
}

static void wpmech_detach(void)
{
	if (!strcmp(mech, "tracepoint")) {
		unregister_trace_wpmech_tp(wpmech_tp_probe, NULL);
		tracepoint_synchronize_unregister();
	} else if (!strcmp(mech, "ftrace") || !strcmp(mech, "ftrace_regs")) {
		wpmech_ops_del(&wpmech_ops[0]);
	} else if (!strcmp(mech, "ftrace2")) {
		wpmech_ops_del(&wpmech_ops[1]);
		wpmech_ops_del(&wpmech_ops[0]);
	} else if (!strcmp(mech, "kprobe")) {
		unregister_kprobe(&wpmech_kp);
	} else if (!strcmp(mech, "ftrace_kprobe")) {
		unregister_kprobe(&wpmech_kp);
		wpmech_ops_del(&wpmech_ops[0]);
	} else if (!strncmp(mech, "kretprobe", 9)) {
		unregister_kretprobe(&wpmech_krp);
#ifdef CONFIG_FPROBE
	} else if (!strncmp(mech, "fprobe", 6)) {
		unregister_fprobe(&wpmech_fp);
#endif
	}
}

static u64 wpmech_loop(void)
{
	u64 start = ktime_get_ns();
	unsigned long i;

	if (wpmech_bare()) {
		for (i = 0; i < calls; i++)
			wpmech_target_bare(i);
		return ktime_get_ns() - start;
	}
	for (i = 0; i < calls; i++)
		wpmech_target(i);
	return ktime_get_ns() - start;
}

static int __init wpmech_init(void)
{
	u64 base, attached;
	int ret;

	if (!calls)
		return -EINVAL;
	base = wpmech_loop();
	ret = wpmech_attach();
	if (ret) {
		pr_err("cannot attach %s: %d\n", mech, ret);
		return ret;
	}
	attached = wpmech_loop();
	wpmech_detach();
	if (strcmp(mech, "none") && hits < calls) {
		pr_err("%s fired %lu times for %lu calls\n", mech, hits, calls);
		return -EIO;
	}
	snprintf(result, sizeof(result), "%s %lu %llu %llu %lld %lu", mech,
		 calls, base, attached,
		 div64_s64(((s64)attached - (s64)base) * 1000, calls), hits);
	pr_info("%s\n", result);
	return 0;
}

static void __exit wpmech_exit(void)
{
}

module_init(wpmech_init);
module_exit(wpmech_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Cost per call of tracepoints, ftrace_ops, kprobes, kretprobes and fprobes");
MODULE_AUTHOR("wpstat developers");
