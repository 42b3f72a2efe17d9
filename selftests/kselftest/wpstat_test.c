// SPDX-License-Identifier: GPL-2.0
/*
 * The wpstat kselftests' shared helpers (see wpstat_test.h), compiled once
 * and linked into every test binary.  No harness here: kselftest_harness.h
 * belongs to the test's own translation unit.
 */
#include "wpstat_test.h"

#include <grp.h>
#include <stdarg.h>
#include <time.h>

const char *const wps_names[] = {
#define WPSTAT_COUNTER(id, name, kind, needs, level, help)	#name,
#include "wpstat_counters.def"
#undef WPSTAT_COUNTER
};

_Static_assert(sizeof(wps_names) / sizeof(wps_names[0]) == WPS_N,
	       "struct wps and wps_names[] are both the .def's list");

/* Which counters are maxima: the .def's kind. */
#define WPS_KIND_SUM	0
#define WPS_KIND_MAX	1
static const unsigned char wps_kind_max[] = {
#define WPSTAT_COUNTER(id, name, kind, needs, level, help)	WPS_KIND_##kind,
#include "wpstat_counters.def"
#undef WPSTAT_COUNTER
};

int wps_put(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : n < 0 ? -errno : -EIO;
}

ssize_t wps_slurp(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, total = 0;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf + total, size - 1 - total)) > 0)
		total += n;
	close(fd);
	buf[total] = '\0';
	return n < 0 ? -errno : total;
}

int wps_kv_value(const char *path, const char *name, char *buf, size_t len)
{
	struct wpstat_kvlist l;
	const char *v;
	int ret = wpstat_kv_read(path, &l);

	if (ret)
		return ret;
	v = wpstat_kv_get(&l, name);
	if (v)
		snprintf(buf, len, "%s", v);
	wpstat_kv_free(&l);
	return v ? 0 : -ENOENT;
}

int64_t wps_summary(const char *name)
{
	char v[64];

	if (wps_kv_value(WPSTAT_SUMMARY_PATH, name, v, sizeof(v)) || v[0] == '-')
		return -1;
	return strtoll(v, NULL, 10);
}

const char *wps_module(void)
{
	const char *m = getenv("WPSTAT_MODULE");

	return m ? m : "wpstat.ko";
}

int wps_loaded(void)
{
	return access(WPSTAT_INODES_PATH, F_OK) == 0;
}

int wps_from_row(const struct wpstat_snapshot *s, const struct wpstat_row *r,
		 struct wps *w)
{
	int64_t *v = (int64_t *)w;
	size_t i;

	memset(w, 0, sizeof(*w));
	for (i = 0; i < WPS_N; i++) {
		int c = wpstat_counter_index(s, wps_names[i]);

		if (c < 0)
			return -EPROTO;
		if (r)
			v[i] = r->avail[c] ? (int64_t)r->val[c] : -1;
	}
	return 0;
}

int wps_read_row(const char *path, const struct wpstat_file_key *key,
		 struct wps *w)
{
	struct wpstat_snapshot s;
	const struct wpstat_row *r;
	int64_t *v = (int64_t *)w;
	size_t i;
	int ret;

	memset(w, 0, sizeof(*w));
	ret = wpstat_snapshot_read(NULL, &s);
	if (ret)
		return ret;
	r = path ? wpstat_snapshot_find_path(&s, path) :
		   wpstat_snapshot_find_key(&s, key);
	ret = wps_from_row(&s, r, w);
	wpstat_snapshot_free(&s);
	/* No row: 0, or "-" where the module produces no such count now. */
	for (i = 0; !r && !ret && i < WPS_N; i++)
		if (wps_summary(wps_names[i]) < 0)
			v[i] = -1;
	return ret;
}

int wps_read(const char *path, struct wps *w)
{
	return wps_read_row(path, NULL, w);
}

int wps_read_key(const struct wpstat_file_key *key, struct wps *w)
{
	return wps_read_row(NULL, key, w);
}

int wps_is_max(size_t i)
{
	return i < WPS_N && wps_kind_max[i];
}

struct wps wps_delta(const struct wps *after, const struct wps *before)
{
	const int64_t *a = (const int64_t *)after, *b = (const int64_t *)before;
	struct wps d;
	int64_t *dv = (int64_t *)&d;
	size_t i;

	for (i = 0; i < WPS_N; i++)
		dv[i] = (a[i] < 0 || b[i] < 0) ? -1 :
			wps_is_max(i) ? a[i] : a[i] - b[i];
	return d;
}

long wps_btrfs_mkclean_calls(long folios)
{
	if (wps_kernel_at_least(6, 13))
		return 3 * folios - 1;
	return wps_kernel_at_least(6, 1) ? 2 * folios : folios;
}

int wps_kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return 0;
	return ma > major || (ma == major && mi >= minor);
}

int wps_kernel_sanitized(void)
{
	static int sanitized = -1;
	char line[256];
	FILE *f;

	if (sanitized >= 0)
		return sanitized;
	sanitized = 0;
	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *name = strrchr(line, ' ');

		if (name && !strcmp(name + 1, "kasan_report\n")) {
			sanitized = 1;
			break;
		}
	}
	fclose(f);
	return sanitized;
}

int wps_control_len(const char *cmd, size_t len)
{
	int fd = open(WPSTAT_CONTROL_PATH, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int err;

	if (fd < 0)
		return -errno;
	n = write(fd, cmd, len);
	err = errno;
	close(fd);
	if (n < 0)
		return -err;
	return n == (ssize_t)len ? 0 : -EIO;
}

int wps_control(const char *cmd)
{
	return wps_control_len(cmd, strlen(cmd));
}

int wps_stress(void)
{
	const char *s = getenv("WPSTAT_STRESS");

	return s && *s && strcmp(s, "0");
}

const char *wps_suite_level(void)
{
	const char *l = getenv("WPSTAT_LEVEL");

	return l && *l ? l : "counts";
}

int wps_reload(const char *params)
{
	char cmd[512];

	if (wps_loaded() && system("rmmod wpstat"))
		return -1;
	snprintf(cmd, sizeof(cmd), "insmod %s %s%s %s 2>/dev/null",
		 wps_module(), params && strstr(params, "level=") ? "" : "level=",
		 params && strstr(params, "level=") ? "" : wps_suite_level(),
		 params ? params : "");
	return system(cmd);
}

int wps_timing(void)
{
	char buf[32];
	int fd = open("/sys/module/wpstat/parameters/level", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return !strncmp(buf, "timing", 6) ? 1 : !strncmp(buf, "counts", 6) ? 0 : -1;
}

int wps_timing_only(const char *name)
{
	char v[256];

	if (wps_kv_value(WPSTAT_COUNTERS_PATH, name, v, sizeof(v)))
		return -1;
	return !strncmp(v, "timing ", 7);
}

long wps_meminfo_kb(const char *key)
{
	char buf[8192], *p;
	size_t len = strlen(key);

	if (wps_slurp("/proc/meminfo", buf, sizeof(buf)) <= 0)
		return -1;
	for (p = buf; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, key, len) && p[len] == ':')
			return strtol(p + len + 1, NULL, 10);
	return -1;
}

int wpstat_vmalloc_areas(void)
{
	FILE *f = fopen("/proc/vmallocinfo", "re");
	char line[1024];
	int n = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, "[wpstat]") != NULL;
	fclose(f);
	return n;
}

int drop_privileges(void)
{
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		return -1;
	return 0;
}

/* ---- workloads ---------------------------------------------------------- */

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

/* ---- /proc/wpstat/stalls ------------------------------------------------ */

/* struct stall_row's causes, in its order and the file's. */
static const char *const stall_names[] = {
#define WPSTAT_STALL(id, name, ...)	#name,
#include "wpstat_stalls.def"
#undef WPSTAT_STALL
};
#define STALL_N	(sizeof(stall_names) / sizeof(stall_names[0]))

/* The key's later column of the stalls file, as the module's list names it. */
static const char *const stall_subvol_name[] = {
#define WPSTAT_STALL(...)
#define WPSTAT_KEY_COLUMN(id, name, ...)	#name,
#include "wpstat_stalls.def"
#undef WPSTAT_KEY_COLUMN
#undef WPSTAT_STALL
};
_Static_assert(sizeof(stall_subvol_name) == sizeof(char *),
	       "read_stalls() reads subvol, and no other key column");
#define STALL_KEY_COLS	6	/* ---- accounting ----------------------------------------------------------- */

/* Counts add up; a maximum is the largest of its parts. */
static void account_merge(int64_t *acc, int i, int64_t v)
{
	if (!wps_is_max(i))
		*acc += v;
	else if (v > *acc)
		*acc = v;
}

/* The counter columns of /proc/wpstat/gone ("dev inodes c..."), merged. */
static int account_read_gone(struct wps_account *a)
{
	static char buf[1 << 16];
	char *line, *save = NULL, *tok, *s2;
	int col[WPS_N + 2], ncol = 0, i;

	if (wps_slurp(WPSTAT_GONE_PATH, buf, sizeof(buf)) <= 0)
		return -1;
	line = strtok_r(buf, "\n", &save);
	for (tok = strtok_r(line, " ", &s2); tok; tok = strtok_r(NULL, " ", &s2)) {
		col[ncol] = -1;
		for (i = 0; i < (int)WPS_N; i++)
			if (!strcmp(tok, wps_names[i]))
				col[ncol] = i;
		if (++ncol == WPS_N + 2)
			break;
	}
	while ((line = strtok_r(NULL, "\n", &save))) {
		int c = 0;

		for (tok = strtok_r(line, " ", &s2); tok && c < ncol;
		     tok = strtok_r(NULL, " ", &s2), c++) {
			if (c == 1 && strcmp(tok, "-"))
				a->gone_inodes += strtoll(tok, NULL, 10);
			if (c >= 2 && col[c] >= 0 && strcmp(tok, "-"))
				account_merge(&a->gone[col[c]], col[c],
					      strtoll(tok, NULL, 10));
		}
	}
	return 0;
}

int wps_read_account(struct wps_account *a)
{
	struct wpstat_snapshot s;
	int64_t swaps;
	size_t r;
	int i, tries;

	for (tries = 0; tries < 20; tries++) {
		memset(a, 0, sizeof(*a));
		swaps = wps_summary("table_swaps") + wps_summary("recycled_inodes");
		if (wpstat_snapshot_read(NULL, &s))
			return -1;
		for (r = 0; r < s.nrows; r++) {
			for (i = 0; i < (int)WPS_N; i++) {
				int c = wpstat_counter_index(&s, wps_names[i]);

				if (c >= 0 && s.rows[r].avail[c])
					account_merge(&a->rows[i], i,
						      s.rows[r].val[c]);
			}
		}
		a->nrows = s.nrows;
		wpstat_snapshot_free(&s);
		if (account_read_gone(a))
			return -1;
		for (i = 0; i < (int)WPS_N; i++)
			a->total[i] = wps_summary(wps_names[i]);
		if (wps_summary("table_swaps") + wps_summary("recycled_inodes") == swaps)
			return 0;
	}
	return -1;
}

int wps_account_check(const struct wps_account *a, char *why, size_t len)
{
	size_t used = 0;
	int i, bad = 0;

	for (i = 0; i < (int)WPS_N; i++) {
		int64_t parts = wps_is_max(i) ?
			(a->rows[i] > a->gone[i] ? a->rows[i] : a->gone[i]) :
			a->rows[i] + a->gone[i];

		if (a->total[i] < 0 || a->total[i] == parts)	/* <0: not at this level */
			continue;
		bad++;
		if (used < len)
			used += snprintf(why + used, len - used,
					 "%s: total %lld, rows %lld, gone + untracked %lld; ",
					 wps_names[i], (long long)a->total[i],
					 (long long)a->rows[i], (long long)a->gone[i]);
	}
	return bad;
}

/* tgid comm dev ino gen cgroup */

_Static_assert(sizeof(struct stall_row) -
	       __builtin_offsetof(struct stall_row, fault_first) ==
	       STALL_N * sizeof(int64_t),
	       "struct stall_row has a field per name in stall_names[]");

int read_stalls(const char *path, struct stall_row *rows, int max)
{
	static char buf[1 << 20];
	char *line, *save = NULL, *tok, *s2;
	int col[64], ncol = 0, n = 0, c, next = 0, subvol = -1;
	struct wpstat_file_key key;

	/* The superblock's device: on btrfs stat()'s st_dev is not it. */
	if (path && wpstat_path_key(path, &key))
		return -1;
	if (wps_slurp(STALLS_PATH, buf, sizeof(buf)) <= 0)
		return -1;
	line = strtok_r(buf, "\n", &save);
	/* The published start of the header, then the causes by name. */
	if (!line || strncmp(line, "tgid comm dev ino gen cgroup ", 29))
		return -1;
	for (tok = strtok_r(line, " ", &s2); tok && ncol < 64;
	     tok = strtok_r(NULL, " ", &s2), ncol++) {
		col[ncol] = -1;
		if (ncol < STALL_KEY_COLS)
			continue;
		/*
		 * Exactly stall_names[], in order: the copy agrees with
		 * kmod's; and the key's subvol where the list appended it.
		 */
		if (!strcmp(tok, stall_subvol_name[0]) && subvol < 0) {
			subvol = ncol;
			continue;
		}
		if (next >= (int)STALL_N || strcmp(tok, stall_names[next]))
			return -1;
		col[ncol] = next++;
	}
	if (next != (int)STALL_N || subvol < 0)
		return -1;
	while ((line = strtok_r(NULL, "\n", &save)) && n < max) {
		struct stall_row r = { 0 };
		int64_t *v = &r.fault_first;

		for (c = 0, tok = strtok_r(line, " ", &s2); tok && c < ncol;
		     tok = strtok_r(NULL, " ", &s2), c++) {
			if (c == 0)
				r.tgid = atol(tok);
			else if (c == 1)
				snprintf(r.comm, sizeof(r.comm), "%s", tok);
			else if (c == 2)
				sscanf(tok, "%u:%u", &r.major, &r.minor);
			else if (c == 3)
				r.ino = strtoull(tok, NULL, 10);
			else if (c == 4)
				r.gen = strtoul(tok, NULL, 10);
			else if (c == subvol)
				r.subvol = strtoull(tok, NULL, 10);
			else if (col[c] >= 0)
				v[col[c]] = strcmp(tok, "-") ? strtoll(tok, NULL, 10) : -1;
		}
		/* A deleted file's row may share its inode number. */
		if (path && !wpstat_row_is_file(&(struct wpstat_row){
				.major = r.major, .minor = r.minor,
				.ino = r.ino, .gen = r.gen,
				.subvol = r.subvol }, &key))
			continue;
		rows[n++] = r;
	}
	return n;
}

int stall_of(const char *path, long tgid, struct stall_row *out)
{
	struct stall_row rows[64];
	int n = read_stalls(path, rows, 64), i, found = 0;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < n; i++) {
		if (rows[i].tgid == tgid) {
			*out = rows[i];
			found++;
		}
	}
	return n < 0 ? -1 : found;
}

/* ---- the filesystem suites ---------------------------------------------- */

int wps_fs_unavailable(const char *name, char *why, size_t len)
{
	const char *dir = getenv("WPSTAT_FS_DIR");
	char path[300];

	snprintf(path, sizeof(path), "%s/%s.unavailable",
		 dir ? dir : "/tmp/wpstat", name);
	if (wps_slurp(path, why, len) <= 0)
		return 0;
	why[strcspn(why, "\n")] = 0;
	return 1;
}

void wps_fs_file_init(struct wps_fs_file *f)
{
	memset(f, 0, sizeof(*f));
	f->fd = -1;
}

const char *wps_fs_file_open(struct wps_fs_file *f, const char *fs,
			     const char *name, size_t npages, unsigned int how,
			     const char *upper)
{
	const char *dir = getenv("WPSTAT_FS_DIR");

	f->npages = npages;
	f->fd = wps_scratch(fs, name, npages, f->path, sizeof(f->path));
	if (f->fd < 0)
		return "cannot make the scratch file";
	if (how & WPS_FS_MAP) {
		f->map = map_shared(f->fd, npages);
		if (!f->map)
			return "cannot map the scratch file";
		if ((how & WPS_FS_RANDOM) &&
		    madvise(f->map, npages * PAGE, MADV_RANDOM))
			return "madvise(MADV_RANDOM) failed";
	}
	if (how & WPS_FS_BY_KEY) {
		f->counted[0] = '\0';
		if (wpstat_fd_key(f->fd, &f->key))
			return "cannot read the file's key";
		return wps_read_key(&f->key, &f->base) ?
			"cannot read the file's counters" : NULL;
	}
	if (upper)
		snprintf(f->counted, sizeof(f->counted), "%s/%s/%s",
			 dir ? dir : "/tmp/wpstat", upper,
			 strrchr(f->path, '/') + 1);
	else
		snprintf(f->counted, sizeof(f->counted), "%s", f->path);
	return wps_read(f->counted, &f->base) ?
		"cannot read the file's counters" : NULL;
}

void wps_fs_file_release(struct wps_fs_file *f, bool keep)
{
	if (f->map)
		munmap(f->map, f->npages * PAGE);
	f->map = NULL;
	if (f->fd >= 0) {
		close(f->fd);
		if (!keep)
			unlink(f->path);
	}
	f->fd = -1;
}

const char *wps_delta_text(const struct wps *d, char *buf, size_t len)
{
	const int64_t *v = (const int64_t *)d;
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < WPS_N && n < len; i++)
		if (v[i] > 0)
			n += snprintf(buf + n, len - n, "%s%s %lld", n ? " " : "",
				      wps_names[i], (long long)v[i]);
	if (!buf[0])
		snprintf(buf, len, "nothing");
	return buf;
}

/* ---- the reliability fixtures ------------------------------------------- */

int wps_rel_restore(struct wps_rel *r)
{
	int ret = 0;

	if (!wps_loaded() && system("insmod \"$WPSTAT_MODULE\""))
		ret = -1;
	wps_control("filter none");
	wps_control("enable");
	if (r->probe_fd >= 0)
		close(r->probe_fd);
	unlink(r->probe);
	return ret;
}

/* ---- a slow device ------------------------------------------------------ */

int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

#define NULLB_CONFIG	"/sys/kernel/config/nullb/nullb0"

void wps_fsync_loop(int fd, uint64_t end_ns, long gap_ms)
{
	const struct timespec gap = { gap_ms / 1000, gap_ms % 1000 * 1000000L };

	while (wpstat_now_ns() < end_ns) {
		if (fsync(fd))
			_exit(2);
		nanosleep(&gap, NULL);
	}
	_exit(0);
}

void slowdev_down(void)
{
	sh("umount " SLOW_DIR " 2>/dev/null; "
	   "zpool destroy -f wpslow >/dev/null 2>&1; "
	   "dmsetup remove --noudevsync wpslow 2>/dev/null; "
	   "rmdir " NULLB_CONFIG " 2>/dev/null; "
	   "rmmod null_blk 2>/dev/null");
}

/*
 * /dev/nullb0, 1 GiB in memory with 4 KiB blocks, and @params ("k=v ...",
 * null_blk's names).  As module parameters where memory_backed is one;
 * through configfs otherwise (5.10 has it only there), where the same
 * names are attributes, but for max_sectors (5.10: none; the queue's
 * max_sectors_kb then).
 */
static int nullb_up(const char *params)
{
	if (sh("modprobe null_blk nr_devices=0"))
		return -1;
	if (!sh("test -e /sys/module/null_blk/parameters/memory_backed")) {
		sh("rmmod null_blk");
		return sh("modprobe null_blk nr_devices=1 memory_backed=1 gb=1 bs=4096 %s",
			  params);
	}
	return sh("d=" NULLB_CONFIG "; ms=; "
		  "{ mountpoint -q /sys/kernel/config || "
		  "mount -t configfs none /sys/kernel/config; } && mkdir $d && "
		  "echo 1 > $d/memory_backed && echo 1024 > $d/size && "
		  "echo 4096 > $d/blocksize && "
		  "for kv in %s; do "
		  "case $kv in max_sectors=*) [ -e $d/max_sectors ] || "
		  "{ ms=${kv#*=}; continue; } ;; esac; "
		  "echo ${kv#*=} > $d/${kv%%%%=*} || exit 1; done && "
		  "echo 1 > $d/power && "
		  "{ [ -z \"$ms\" ] || "
		  "echo $((ms / 2)) > /sys/block/nullb0/queue/max_sectors_kb; }",
		  params);
}

int slowdev_up(const char *fs, const char *params, int write_delay_ms,
	       int stable_writes)
{
	return slowdev_up_rw(fs, params, 0, write_delay_ms, stable_writes);
}

int slowdev_up_rw(const char *fs, const char *params, int read_delay_ms,
		  int write_delay_ms, int stable_writes)
{
	const char *dev = "/dev/nullb0";
	bool zfs = !strcmp(fs, "zfs");
	struct stat st;

	slowdev_down();
	if (nullb_up(params))
		return -1;
	if (!zfs && sh("mkfs.%s -q %s /dev/nullb0 >/dev/null 2>&1", fs,
		       !strcmp(fs, "ext4") ? "-F -E lazy_itable_init=1,lazy_journal_init=1" : "-f"))
		return -1;
	if (read_delay_ms || write_delay_ms) {
		if (sh("modprobe dm-delay && dmsetup create --noudevsync wpslow "
		       "--table \"0 $(blockdev --getsz /dev/nullb0) delay "
		       "/dev/nullb0 0 %d /dev/nullb0 0 %d\" && dmsetup mknodes wpslow",
		       read_delay_ms, write_delay_ms))
			return -1;
		dev = "/dev/mapper/wpslow";
	}
	if (stat(dev, &st))
		return -1;
	if (sh("echo %d > /sys/dev/block/%u:%u/queue/stable_writes",
	       stable_writes, major(st.st_rdev), minor(st.st_rdev)))
		return -1;
	/* ZFS: a pool on the device (zpool from guest-check's guest_zfs). */
	if (zfs)
		return sh("zpool create -f -o cachefile=none -O mountpoint=" SLOW_DIR
			  " wpslow %s", dev);
	return sh("mkdir -p " SLOW_DIR " && mount %s " SLOW_DIR, dev);
}
