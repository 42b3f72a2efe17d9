// SPDX-License-Identifier: GPL-2.0
/* fmt.c - number and time formatting shared by wpstat and wpload. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fmt.h"

uint64_t wpstat_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/*
 * CPU time of every thread of this process, user and system: unlike the
 * clock above, it leaves out other tasks' work and idle time.
 */
uint64_t wpstat_process_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

bool wpstat_counter_is_ns(const char *name)
{
	size_t len = strlen(name);

	return len > 3 && !strcmp(name + len - 3, "_ns");
}

const char *wpstat_fmt_duration(char *buf, size_t len, uint64_t ns)
{
	if (ns == 0)
		snprintf(buf, len, "0");
	else if (ns < 1000)
		snprintf(buf, len, "%" PRIu64 "ns", ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else if (ns < NSEC_PER_SEC)
		snprintf(buf, len, "%.2fms", ns / 1e6);
	else
		snprintf(buf, len, "%.2fs", ns / 1e9);
	return buf;
}

const char *wpstat_fmt_bytes(char *buf, size_t len, uint64_t bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned int u = 0;
	double v = bytes;

	while (v >= 1024 && u < sizeof(units) / sizeof(units[0]) - 1) {
		v /= 1024;
		u++;
	}
	if (v == floor(v))
		snprintf(buf, len, "%.0f%s", v, units[u]);
	else
		snprintf(buf, len, "%.1f%s", v, units[u]);
	return buf;
}
