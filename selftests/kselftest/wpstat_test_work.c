// SPDX-License-Identifier: GPL-2.0
/*
 * The kselftests' workloads: scratch files, stores and loads to mappings,
 * the folios behind a mapping (pagemap, kpageflags).
 * Part of the shared helpers (wpstat_test.h), linked into
 * every test binary that uses them (libwpstat_test.a).
 */
#include "wpstat_test.h"

#include <time.h>

int wps_scratch(const char *fs, const char *name, size_t npages,
		char *path, size_t pathlen)
{
	const char *dir = getenv("WPSTAT_FS_DIR");
	int fd;

	snprintf(path, pathlen, "%s/%s/%s.%d", dir ? dir : "/tmp/wpstat", fs,
		 name, getpid());
	unlink(path);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, npages * PAGE)) {
		close(fd);
		return -errno;
	}
	return fd;
}

int wps_drop_caches(void)
{
	sync();
	return wps_put("/proc/sys/vm/drop_caches", "3");
}

void wps_store_pages(char *map, size_t npages, char val)
{
	size_t i;

	for (i = 0; i < npages; i++)
		*(volatile char *)(map + i * PAGE) = val;
}

/* /proc/self/pagemap entries of @npages pages at @map into @pm. */
static int pagemap_read(const char *map, size_t npages, uint64_t *pm)
{
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	off_t off = (uintptr_t)map / PAGE * sizeof(uint64_t);
	ssize_t want = npages * sizeof(uint64_t), n;

	if (fd < 0)
		return -errno;
	n = pread(fd, pm, want, off);
	close(fd);
	return n == want ? 0 : n < 0 ? -errno : -EIO;
}

#define PM_PRESENT	(1ULL << 63)
#define PM_PFN_MASK	((1ULL << 55) - 1)
#define KPF_HEAD	(1ULL << 15)
#define KPF_TAIL	(1ULL << 16)

long wps_store_pages_absent(char *map, size_t npages, char val)
{
	long absent = 0;
	size_t i;

	for (i = 0; i < npages; i++) {
		uint64_t pm;
		int ret = pagemap_read(map + i * PAGE, 1, &pm);

		if (ret)
			return ret;
		absent += !(pm & PM_PRESENT);
		*(volatile char *)(map + i * PAGE) = val;
	}
	return absent;
}

uint64_t wps_page_flags(const char *map, int *err)
{
	uint64_t pm, flags = 0;
	int fd;

	*err = pagemap_read(map, 1, &pm);
	if (*err)
		return 0;
	if (!(pm & PM_PRESENT) || !(pm & PM_PFN_MASK)) {
		*err = -ENODATA;	/* not mapped, or PFNs hidden */
		return 0;
	}
	fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*err = -errno;
		return 0;
	}
	if (pread(fd, &flags, sizeof(flags), (pm & PM_PFN_MASK) * sizeof(flags)) !=
	    sizeof(flags))
		*err = -EIO;
	close(fd);
	return flags;
}

long wps_folios(const char *map, size_t npages)
{
	uint64_t *pm = calloc(npages, sizeof(*pm));
	long folios = 0;
	int fd = -1, ret;
	size_t i;

	if (!pm)
		return -ENOMEM;
	ret = pagemap_read(map, npages, pm);
	if (!ret) {
		fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			ret = -errno;
	}
	for (i = 0; !ret && i < npages; i++) {
		uint64_t pfn = pm[i] & PM_PFN_MASK, flags;

		if (!(pm[i] & PM_PRESENT) || !pfn) {
			ret = -ENODATA;	/* not mapped, or PFNs hidden */
			break;
		}
		if (pread(fd, &flags, sizeof(flags), pfn * sizeof(flags)) !=
		    sizeof(flags)) {
			ret = -EIO;
			break;
		}
		/* A tail continues the folio of the page before it. */
		folios += i == 0 || !(flags & KPF_TAIL);
	}
	if (fd >= 0)
		close(fd);
	free(pm);
	return ret ? ret : folios;
}

long wps_file_folios(int fd, size_t npages)
{
	char *m = mmap(NULL, npages * PAGE, PROT_READ, MAP_SHARED | MAP_POPULATE,
		       fd, 0);
	long n;

	if (m == MAP_FAILED)
		return -errno;
	n = wps_folios(m, npages);
	munmap(m, npages * PAGE);
	return n;
}

unsigned long wps_load_pages(const char *map, size_t npages)
{
	unsigned long sum = 0;
	size_t i;

	for (i = 0; i < npages; i++)
		sum += *(const volatile char *)(map + i * PAGE);
	return sum;
}

char *map_shared(int fd, size_t npages)
{
	char *m = mmap(NULL, npages * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
		       fd, 0);

	return m == MAP_FAILED ? NULL : m;
}

int pwrite_pages(int fd, size_t first, size_t n, char val)
{
	char buf[PAGE];
	size_t i;

	memset(buf, val, sizeof(buf));
	for (i = 0; i < n; i++)
		if (pwrite(fd, buf, PAGE, (first + i) * PAGE) != (ssize_t)PAGE)
			return errno ? -errno : -EIO;
	return 0;
}

int touch_file(int fd, size_t npages)
{
	char *map = map_shared(fd, npages);
	int ret = 0;

	if (!map)
		return -errno;
	wps_store_pages(map, npages, 1);
	if (msync(map, npages * PAGE, MS_SYNC))
		ret = -errno;
	munmap(map, npages * PAGE);
	return ret;
}
