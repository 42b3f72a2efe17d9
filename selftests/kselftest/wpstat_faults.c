// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_faults.c - the read-fault side of wpstat_predict: passes that
 * count their own faults (getrusage, /proc/vmstat), a mapping placed
 * against a page-table boundary, and the models of do_fault_around() and
 * of mmap read-around that predictions 19 and 23 compare the kernel with.
 * No harness here: the tests assert, these only measure and compute.
 */
#include "wpstat_faults.h"

#include <sys/resource.h>

/* One pass of loads (@store 0) or stores: the faults it alone took. */
struct flt pass_faults(char *map, size_t npages, int store)
{
	struct rusage a, b;

	/*
	 * The pass's own code and getrusage() fault in first (the harness's
	 * fork does not copy file PTEs), so that only the pass is counted.
	 */
	wps_load_pages(map, 0);
	wps_store_pages(map, 0, 0);
	getrusage(RUSAGE_SELF, &a);
	getrusage(RUSAGE_SELF, &a);
	if (store)
		wps_store_pages(map, npages, store);
	else
		wps_load_pages(map, npages);
	getrusage(RUSAGE_SELF, &b);
	return (struct flt){ b.ru_minflt - a.ru_minflt,
			     b.ru_majflt - a.ru_majflt };
}


/*
 * A shared read-write mapping of @fd's first @npages pages at @skew pages
 * past a FA_ALIGN boundary, or NULL.
 */
char *map_shared_skewed(int fd, size_t npages, size_t skew)
{
	size_t len = npages * PAGE, resv = len + FA_ALIGN + skew * PAGE;
	char *r = mmap(NULL, resv, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	char *a, *m;

	if (r == MAP_FAILED)
		return NULL;
	a = (char *)(((uintptr_t)r + FA_ALIGN - 1) & ~(FA_ALIGN - 1)) +
	    skew * PAGE;
	m = mmap(a, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
		 0);
	if (m == MAP_FAILED) {
		munmap(r, resv);
		return NULL;
	}
	if (a > r)
		munmap(r, a - r);
	if (r + resv > a + len)
		munmap(a + len, r + resv - (a + len));
	return m;
}

/*
 * The read faults a pass of one load per page takes over a mapping of
 * @npages fully cached pages, @skew pages past a page-table boundary,
 * with fault_around_bytes / PAGE = @ppf: a model of do_fault_around().
 * Each fault maps (filemap_map_pages, every page cached and uptodate,
 * PTEs already present skipped) the window that starts at the faulting
 * address aligned down to @ppf pages, clamped to the VMA's start, and
 * runs @ppf pages from there, clamped to the VMA's and the page table's
 * end (6.1: address & mask, max vm_start, end_pgoff = min3(...); 6.12:
 * from_pte = max(ALIGN_DOWN(pte_off, nr_pages), ...), to_pte = min3(...)).
 * @ppf == 1: should_fault_around() is false, one fault per page.
 */
long fault_around_model(size_t npages, size_t skew, size_t ppf)
{
	char mapped[FA_NPAGES] = { 0 };
	size_t i, va, from, to, j;
	long faults = 0;

	for (i = 0; i < npages && i < FA_NPAGES; i++) {
		if (mapped[i])
			continue;
		faults++;
		va = skew + i;
		from = va / ppf * ppf;
		if (from < skew)
			from = skew;
		to = from + ppf;
		if (to > (va / FA_PTRS + 1) * FA_PTRS)
			to = (va / FA_PTRS + 1) * FA_PTRS;
		if (to > skew + npages)
			to = skew + npages;
		for (j = from; j < to; j++)
			mapped[j - skew] = 1;
	}
	return faults;
}

/* Pages of [map, map + npages pages) in the page cache (mincore). */
long resident_pages(char *map, size_t npages)
{
	unsigned char vec[FA_NPAGES];
	long n = 0;
	size_t i;

	if (npages > FA_NPAGES || mincore(map, npages * PAGE, vec))
		return -1;
	for (i = 0; i < npages; i++)
		n += vec[i] & 1;
	return n;
}

/*
 * Major faults of a load per page, last page first, over a mapping of
 * @npages uncached pages, with @ra_pages of mmap read-around: a model of
 * do_sync_mmap_readahead().  A fault on an uncached page with no
 * VM_SEQ_READ/VM_RAND_READ reads ra_pages pages from max(0, index -
 * ra_pages / 2), to EOF at most, and skips the pages already cached.
 * Going down, only the pages below the fault are new, so the next fault
 * comes ra_pages / 2 + 1 pages lower; the PG_readahead mark that would
 * start async readahead (ra_pages / 4 from the window's end) is set only
 * on a page the window adds, which is never above the fault.
 */
long readaround_backward_model(size_t npages, size_t ra_pages)
{
	char cached[FA_NPAGES] = { 0 };
	size_t p, start, end, j;
	long faults = 0;

	for (p = npages < FA_NPAGES ? npages : FA_NPAGES; p-- > 0; ) {
		if (cached[p])
			continue;
		faults++;
		start = p > ra_pages / 2 ? p - ra_pages / 2 : 0;
		end = start + ra_pages < npages ? start + ra_pages : npages;
		for (j = start; j < end; j++)
			cached[j] = 1;
	}
	return faults;
}

/* /proc/vmstat's @name, or -1. */
long vmstat_get(const char *name)
{
	size_t len = strlen(name);
	char line[128];
	long val = -1;
	FILE *f = fopen("/proc/vmstat", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, len) && line[len] == ' ') {
			val = strtol(line + len + 1, NULL, 10);
			break;
		}
	fclose(f);
	return val;
}

/*
 * Faults of one load per page of @map, first page first or last first:
 * getrusage's (this process) and /proc/vmstat's pgmajfault (the system;
 * nothing else runs in the guest).
 */
struct flt load_pass(const char *map, size_t npages, bool backward,
			    long *vm_majflt)
{
	struct rusage a, b;
	long vm;
	size_t i;

	wps_load_pages(map, 0);
	vmstat_get("pgmajfault");
	getrusage(RUSAGE_SELF, &a);
	vm = vmstat_get("pgmajfault");
	getrusage(RUSAGE_SELF, &a);
	for (i = 0; i < npages; i++)
		wps_load_pages(map + (backward ? npages - 1 - i : i) * PAGE, 1);
	getrusage(RUSAGE_SELF, &b);
	*vm_majflt = vmstat_get("pgmajfault") - vm;
	return (struct flt){ b.ru_minflt - a.ru_minflt,
			     b.ru_majflt - a.ru_majflt };
}

