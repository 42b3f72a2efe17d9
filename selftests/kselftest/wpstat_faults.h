/* SPDX-License-Identifier: GPL-2.0 */
/* The read-fault workloads and models of wpstat_predict (wpstat_faults.c). */
#ifndef WPSTAT_FAULTS_H
#define WPSTAT_FAULTS_H
#include "wpstat_test.h"

#define FA_NPAGES	256		/* 1 MiB: no PMD-sized folio */
#define FA_ALIGN	(2UL << 20)	/* one page table: PTRS_PER_PTE pages */
#define FA_PTRS		512		/* PTRS_PER_PTE on x86-64 */

/* Faults this process took in one pass (getrusage): minor and major. */
struct flt {
	long min, maj;
};

/* One pass over @npages pages: loads, or stores of @store (not 0). */
struct flt pass_faults(char *map, size_t npages, int store);
/* One load per page, first page first or last first; *@vm_majflt: vmstat's. */
struct flt load_pass(const char *map, size_t npages, bool backward,
		     long *vm_majflt);
/* A shared mapping @skew pages past a FA_ALIGN boundary, or NULL. */
char *map_shared_skewed(int fd, size_t npages, size_t skew);
/* Pages of the mapping in the page cache (mincore), or -1. */
long resident_pages(char *map, size_t npages);
/* /proc/vmstat's @name, or -1. */
long vmstat_get(const char *name);
/* Read faults of one load per cached page: a model of do_fault_around(). */
long fault_around_model(size_t npages, size_t skew, size_t ppf);
/* Misses of a backward pass with @ra_pages of read-around: a model. */
long readaround_backward_model(size_t npages, size_t ra_pages);
#endif
