/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A slow device for the kselftests that need writeback in flight: a
 * memory-backed null_blk device, optionally behind dm-delay, with a
 * filesystem mounted at SLOW_DIR.
 */
#ifndef WPSTAT_SLOWDEV_H
#define WPSTAT_SLOWDEV_H

#include "wpstat_test.h"	/* first: it defines _GNU_SOURCE */

#include <stdarg.h>
#include <time.h>
#include <sys/sysmacros.h>

#define SLOW_DIR	"/tmp/wpstat-slow"

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static inline int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static inline void slowdev_down(void)
{
	sh("umount " SLOW_DIR " 2>/dev/null; "
	   "dmsetup remove --noudevsync wpslow 2>/dev/null; "
	   "rmmod null_blk 2>/dev/null");
}

/*
 * Filesystem @fs on a fresh null_blk device with @params, mounted at
 * SLOW_DIR.  With @write_delay_ms, mount it through dm-delay: mkfs and
 * reads stay fast, every write bio completes @write_delay_ms late.
 * stable_writes is read by the filesystem at mount only (fs/super.c), so
 * it is set on the device to be mounted before mounting.
 */
static inline int slowdev_up(const char *fs, const char *params, int write_delay_ms,
		      int stable_writes)
{
	const char *dev = "/dev/nullb0";
	struct stat st;

	slowdev_down();
	if (sh("modprobe null_blk nr_devices=1 memory_backed=1 gb=1 bs=4096 %s",
	       params))
		return -1;
	if (sh("mkfs.%s -q %s /dev/nullb0 >/dev/null 2>&1", fs,
	       !strcmp(fs, "ext4") ? "-F -E lazy_itable_init=1,lazy_journal_init=1" : "-f"))
		return -1;
	if (write_delay_ms) {
		if (sh("modprobe dm-delay && dmsetup create --noudevsync wpslow "
		       "--table \"0 $(blockdev --getsz /dev/nullb0) delay "
		       "/dev/nullb0 0 0 /dev/nullb0 0 %d\" && dmsetup mknodes wpslow",
		       write_delay_ms))
			return -1;
		dev = "/dev/mapper/wpslow";
	}
	if (stat(dev, &st))
		return -1;
	if (sh("echo %d > /sys/dev/block/%u:%u/queue/stable_writes",
	       stable_writes, major(st.st_rdev), minor(st.st_rdev)))
		return -1;
	return sh("mkdir -p " SLOW_DIR " && mount %s " SLOW_DIR, dev);
}

#endif
