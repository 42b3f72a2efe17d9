/* SPDX-License-Identifier: GPL-2.0 */
#ifndef WPSTAT_JSON_H
#define WPSTAT_JSON_H

#include <stddef.h>
#include <stdio.h>

/* Length of the valid UTF-8 sequence at @p, or 0 if @p starts an invalid one. */
size_t utf8_seq_len(const unsigned char *p);

/* @s quoted, as UTF-8 with U+FFFD for invalid bytes: see json.c. */
void utf8_quoted(FILE *out, const char *s, const char *invalid,
		 void (*byte)(FILE *out, unsigned char c));

/* Write @s as a JSON string literal (quoted, escaped, valid UTF-8). */
void json_string(FILE *out, const char *s);

#endif
