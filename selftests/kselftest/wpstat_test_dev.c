// SPDX-License-Identifier: GPL-2.0
/*
 * The kselftests' filesystems and devices: the filesystem suites'
 * files, the reliability fixtures' restore, and the slow device
 * (null_blk, optionally behind dm-delay; wps-slowdev is its command).
 * Part of the shared helpers (wpstat_test.h), linked into
 * every test binary that uses them (libwpstat_test.a).
 */
#include "wpstat_test.h"

#include <stdarg.h>
#include <time.h>

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

int wps_tracefs_mount(bool *mounted)
{
	*mounted = false;
	if (!access(TRACEFS "/instances", F_OK))
		return 0;
	if (sh("mount -t tracefs nodev " TRACEFS))
		return -ENODEV;
	*mounted = true;
	return 0;
}

int put_file(const char *path, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int fd, n, ret = 0;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, n) != n)
		ret = -errno ?: -EIO;
	close(fd);
	return ret;
}

int wps_kprobe_bdp_ratelimited(const char *event)
{
	static const char *const fn[] = {
		"balance_dirty_pages_ratelimited_flags",
		"balance_dirty_pages_ratelimited",	/* 5.10 */
	};
	char line[160];
	int ret = -ENOENT;
	size_t i;

	snprintf(line, sizeof(line), "-:%s\n", event);
	append_file(TRACEFS "/kprobe_events", line);
	for (i = 0; ret && i < sizeof(fn) / sizeof(fn[0]); i++) {
		snprintf(line, sizeof(line), "p:%s %s mapping=%%di:x64\n",
			 event, fn[i]);
		ret = append_file(TRACEFS "/kprobe_events", line);
	}
	return ret;
}

int append_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC), ret = 0;
	ssize_t n = strlen(text);

	if (fd < 0)
		return -errno;
	if (write(fd, text, n) != n)
		ret = -errno ?: -EIO;
	close(fd);
	return ret;
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

/* ---- dirty limits --------------------------------------------------------- */

static long long vm_sysctl(const char *name)
{
	char path[64], buf[64];

	snprintf(path, sizeof(path), "/proc/sys/vm/%s", name);
	return wps_slurp(path, buf, sizeof(buf)) > 0 ? atoll(buf) : -1;
}

int dirty_limits_save(struct dirty_limits *d)
{
	d->bytes = vm_sysctl("dirty_bytes");
	d->bg_bytes = vm_sysctl("dirty_background_bytes");
	d->ratio = vm_sysctl("dirty_ratio");
	d->bg_ratio = vm_sysctl("dirty_background_ratio");
	return d->bytes < 0 || d->bg_bytes < 0 || d->ratio < 0 ||
	       d->bg_ratio < 0 ? -1 : 0;
}

void dirty_limits_restore(const struct dirty_limits *d)
{
	if (d->bytes)
		sh("sysctl -q vm.dirty_bytes=%lld", d->bytes);
	else
		sh("sysctl -q vm.dirty_ratio=%lld", d->ratio);
	if (d->bg_bytes)
		sh("sysctl -q vm.dirty_background_bytes=%lld", d->bg_bytes);
	else
		sh("sysctl -q vm.dirty_background_ratio=%lld", d->bg_ratio);
}
