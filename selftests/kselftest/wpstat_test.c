// SPDX-License-Identifier: GPL-2.0
/*
 * The wpstat kselftests' shared helpers (see wpstat_test.h): the module,
 * its counters and its control file.  The others, by topic:
 * wpstat_test_work.c (workloads), wpstat_test_rows.c (the stalls file
 * and the accounting of rows gone), wpstat_test_dev.c (filesystems and
 * the slow device).  Compiled once into libwpstat_test.a, from which
 * each test binary links what it uses.  No harness here:
 * kselftest_harness.h belongs to the test's own translation unit.
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

/* WPS_N counts struct wps by size: it must hold nothing but the counters. */
_Static_assert(sizeof(wps_names) / sizeof(wps_names[0]) == WPS_N,
	       "struct wps holds one int64_t per counter and nothing else");

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
