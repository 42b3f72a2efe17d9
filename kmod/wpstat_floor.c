// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_floor.c - make bench's floor (module parameter floor=1): the
 * same attachment points with handlers that return at once, and the same
 * kretprobe instance sizes, so that what the mechanisms alone cost can be
 * measured.  Nothing is counted.
 */
#include "wpstat_probe.h"

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

/* Same data_size as the real handlers: the same instance pools. */
#define FLOOR_KRP(id, size)						\
	[id] = { .ftrace = floor_entry, .krp_entry = floor_krp_entry,	\
		 .krp_return = floor_krp_return, .krp_data_size = size }

const struct wpstat_handler_set wpstat_floor_handlers[WPP_NR] = {
	FLOOR_KRP(WPP_FAULT, 0),
	[WPP_MKWRITE] = { .ftrace = floor_entry },
	FLOOR_KRP(WPP_MKCLEAN, sizeof(struct mkclean_data)),
	[WPP_STABLE] = { .ftrace = floor_entry },
	[WPP_BDP_RL] = { .ftrace = floor_entry },
	[WPP_EVICT] = { .ftrace = floor_entry },
	FLOOR_KRP(WPP_BDP, 0),
	FLOOR_KRP(WPP_WAIT_BIT, sizeof(struct wait_start)),
	[WPP_TP_DIRTY] = { .tp = floor_tp_folio },
	[WPP_TP_WAIT] = { .tp = floor_tp_folio },
	[WPP_TP_BDP] = { .tp = floor_tp_bdp },
	[WPP_TP_WB_START] = { .tp = floor_tp_wb },
	[WPP_TP_WB_WRITTEN] = { .tp = floor_tp_wb },
	[WPP_TP_EXIT] = { .tp = floor_tp_exit },
	FLOOR_KRP(WPP_JBD2_START, sizeof(struct journal_data)),
	FLOOR_KRP(WPP_JBD2_ACCESS, sizeof(struct journal_data)),
	FLOOR_KRP(WPP_XFS_TIME, sizeof(struct journal_data)),
	FLOOR_KRP(WPP_ZFS_TX, sizeof(struct journal_data)),
	FLOOR_KRP(WPP_LOCK, sizeof(struct sleep_data)),
	FLOOR_KRP(WPP_ZFS_FSYNC, 0),
	FLOOR_KRP(WPP_ZIL_COMMIT, sizeof(struct sleep_data)),
};

