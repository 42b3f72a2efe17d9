/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wpstat_compat.h - every difference between the kernels wpstat supports
 * (Debian 6.1 and 6.12) lives here, modelled on lttng-modules' wrapper/.
 *
 * Kbuild feature-probes the installed headers and passes WPSTAT_HAVE_*.
 * What headers cannot show (prototypes of static functions) is described
 * at the point of use; the probes only rely on what all versions share.
 */
#ifndef _WPSTAT_COMPAT_H
#define _WPSTAT_COMPAT_H

#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/writeback.h>

/*
 * do_page_mkwrite() is static in mm/memory.c:
 *   6.1:  vm_fault_t do_page_mkwrite(struct vm_fault *vmf)
 *   6.5+: vm_fault_t do_page_mkwrite(struct vm_fault *vmf, struct folio *folio)
 * wpstat only needs the first argument, which is the same on both.
 */
static inline struct vm_fault *wpstat_mkwrite_vmf(struct pt_regs *regs)
{
	return (struct vm_fault *)regs_get_kernel_argument(regs, 0);
}

/*
 * Present-PTE test for the mkwrite kind.  Both kernels leave vmf->pte NULL
 * on the do_shared_fault() path (handle_pte_fault() clears it when the PTE
 * is none) and non-NULL, already unmapped, on the wp_page_shared() path.
 * The pointer is only compared, never dereferenced.
 */
static inline bool wpstat_vmf_has_pte(const struct vm_fault *vmf)
{
	return READ_ONCE(vmf->pte) != NULL;
}

/*
 * balance_dirty_pages_ratelimited_flags() grew BDP_ASYNC for io_uring in
 * 6.0; an async caller is told -EAGAIN instead of sleeping, so its traced
 * "pause" is not a sleep.
 */
#ifdef BDP_ASYNC
#define WPSTAT_BDP_ASYNC	BDP_ASYNC
#else
#define WPSTAT_BDP_ASYNC	0
#endif

/*
 * writeback:balance_dirty_pages has the same prototype on 6.1 and 6.12
 * (include/trace/events/writeback.h).  Keep the probe signature here so
 * that a kernel which changes it is handled in one place.
 */
#define WPSTAT_TP_BDP_PROTO						\
	void *data, struct bdi_writeback *wb, unsigned long thresh,	\
	unsigned long bg_thresh, unsigned long dirty,			\
	unsigned long bdi_thresh, unsigned long bdi_dirty,		\
	unsigned long dirty_ratelimit, unsigned long task_ratelimit,	\
	unsigned long dirtied, unsigned long period, long pause,	\
	unsigned long start_time

/* writeback:writeback_dirty_folio and writeback:folio_wait_writeback. */
#define WPSTAT_TP_FOLIO_PROTO						\
	void *data, struct folio *folio, struct address_space *mapping

/*
 * folio_mapping() is exported on both kernels; Kbuild checks the
 * declaration so a kernel without it fails at build time, not at load.
 */
#ifndef WPSTAT_HAVE_FOLIO_MAPPING
#error "kernel headers lack folio_mapping(): unsupported kernel"
#endif

#endif /* _WPSTAT_COMPAT_H */
