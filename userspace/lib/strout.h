/* SPDX-License-Identifier: GPL-2.0 */
#ifndef WPSTAT_STROUT_H
#define WPSTAT_STROUT_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

/* @s as a JSON string literal, or null when @s is NULL. */
void json_string_or_null(FILE *out, const char *s);
/* @v as a JSON number, or null when it is not @have. */
void json_u64_or_null(FILE *out, uint64_t v, bool have);

/*
 * @s as a quoted Prometheus label value (text exposition format): \\, \"
 * and \n escaped, invalid UTF-8 replaced by U+FFFD.
 */
void prom_label_value(FILE *out, const char *s);

#endif
