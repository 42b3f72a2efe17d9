/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Number and time formatting shared by wpstat and wpload, so that the two
 * tools print a duration or a size the same way.
 */
#ifndef WPSTAT_FMT_H
#define WPSTAT_FMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NSEC_PER_SEC	UINT64_C(1000000000)

/* CLOCK_MONOTONIC in ns. */
uint64_t wpstat_now_ns(void);
uint64_t wpstat_process_cpu_ns(void);
/* Whether a counter is a time in ns (its name ends in _ns). */
bool wpstat_counter_is_ns(const char *name);
/* "850ns", "12.3us", "4.56ms", "1.23s"; "0" for nothing at all. */
const char *wpstat_fmt_duration(char *buf, size_t len, uint64_t ns);
/* "256KiB"-style size; exact multiples lose the ".0". */
const char *wpstat_fmt_bytes(char *buf, size_t len, uint64_t bytes);

#endif
