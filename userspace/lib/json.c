// SPDX-License-Identifier: GPL-2.0
/* JSON string output shared by wpstat and wpload. */
#include <stdint.h>
#include <stdio.h>

#include "json.h"

/* Length of the valid UTF-8 sequence at p, or 0 if p starts an invalid one. */
size_t utf8_seq_len(const unsigned char *p)
{
	uint32_t cp;
	size_t n, i;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		n = 2;
		cp = p[0] & 0x1f;
	} else if ((p[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		cp = p[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {	/* the terminating NUL fails this too */
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	/* Overlong forms, UTF-16 surrogates and code points past U+10FFFF. */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

/*
 * File names are bytes; JSON strings and Prometheus label values are
 * Unicode.  Valid UTF-8 passes through, any other byte becomes U+FFFD
 * (written as @invalid); @byte writes each one-byte character, escaped.
 */
void utf8_quoted(FILE *out, const char *s, const char *invalid,
		 void (*byte)(FILE *out, unsigned char c))
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	fputc('"', out);
	while (*p) {
		n = utf8_seq_len(p);
		if (n == 0) {
			fputs(invalid, out);
			p++;
		} else if (n > 1) {
			fwrite(p, 1, n, out);
			p += n;
		} else {
			byte(out, *p++);
		}
	}
	fputc('"', out);
}

static void json_byte(FILE *out, unsigned char c)
{
	switch (c) {
	case '"':
		fputs("\\\"", out);
		break;
	case '\\':
		fputs("\\\\", out);
		break;
	case '\n':
		fputs("\\n", out);
		break;
	case '\t':
		fputs("\\t", out);
		break;
	case '\r':
		fputs("\\r", out);
		break;
	default:
		if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
}

void json_string(FILE *out, const char *s)
{
	utf8_quoted(out, s, "\\ufffd", json_byte);
}
