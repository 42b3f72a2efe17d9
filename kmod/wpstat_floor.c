// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_floor.c - make bench's floor (module parameter floor=1): the
 * same attachment points with handlers that return at once, and the same
 * kretprobe instance sizes, so that what the mechanisms alone cost can be
 * measured.  Nothing is counted.
 */
#include "wpstat_probe.h"

#include <linux/jbd2.h>

static void notrace floor_entry(WPSTAT_FTRACE_CB_PROTO)
{
}

static int floor_krp_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	return 0;	/* arm the return probe, as the real handlers do */
}
NOKPROBE_SYMBOL(floor_krp_entry);

static int floor_krp_return(struct kretprobe_instance *ri,
			    struct pt_regs *regs)
{
	return 0;
}
NOKPROBE_SYMBOL(floor_krp_return);

static void notrace floor_tp_folio(WPSTAT_TP_FOLIO_PROTO)
{
}

static void notrace floor_tp_bdp(WPSTAT_TP_BDP_PROTO)
{
}

static void notrace floor_tp_exit(WPSTAT_TP_EXIT_PROTO)
{
}

static void notrace floor_tp_wb(WPSTAT_TP_WB_WORK_PROTO)
{
}

static void notrace floor_tp_jbd2_start(WPSTAT_TP_JBD2_START_PROTO)
{
}

/*
 * Every point of wpstat_probes.def, by each mechanism it has at some
 * level: the empty handlers, with the real handlers' data_size (the same
 * instance pools, krp_size_<id>) and a probe of each tracepoint's
 * prototype (floor_tp_<id>).
 */
#define floor_tp_TP_DIRTY	floor_tp_folio
#define floor_tp_TP_WAIT	floor_tp_folio
#define floor_tp_TP_BDP		floor_tp_bdp
#define floor_tp_TP_WB_START	floor_tp_wb
#define floor_tp_TP_WB_WRITTEN	floor_tp_wb
#define floor_tp_TP_EXIT	floor_tp_exit
#define floor_tp_TP_JBD2_START	floor_tp_jbd2_start
#define floor_ftrace_item(id)						\
	[WPP_##id].ftrace = floor_entry,
#define floor_krp_item(id)						\
	[WPP_##id].krp_entry = floor_krp_entry,				\
	[WPP_##id].krp_return = floor_krp_return,			\
	[WPP_##id].krp_data_size = krp_size_##id,
#define floor_tp_item(id)						\
	[WPP_##id].tp = floor_tp_##id,
const struct wpstat_handler_set wpstat_floor_handlers[WPP_NR] = {
#define WPSTAT_PROBE(id, ...)						\
	WPSTAT_HANDLERS_OF(FTRACE, floor_ftrace_item, id, __VA_ARGS__)
#include "wpstat_probes.def"
#undef WPSTAT_PROBE
#define WPSTAT_PROBE(id, ...)						\
	WPSTAT_HANDLERS_OF(KRETPROBE, floor_krp_item, id, __VA_ARGS__)
#include "wpstat_probes.def"
#undef WPSTAT_PROBE
#define WPSTAT_PROBE(id, ...)						\
	WPSTAT_HANDLERS_OF(TRACEPOINT, floor_tp_item, id, __VA_ARGS__)
#include "wpstat_probes.def"
#undef WPSTAT_PROBE
};

