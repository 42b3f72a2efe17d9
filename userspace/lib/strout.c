// SPDX-License-Identifier: GPL-2.0
/* Strings into JSON and Prometheus output. */
#include "json.h"
#include "strout.h"

void json_string_or_null(FILE *out, const char *s)
{
	if (s)
		json_string(out, s);
	else
		fputs("null", out);
}

void prom_label_value(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	fputc('"', out);
	while (*p) {
		n = utf8_seq_len(p);
		if (n == 0) {
			fputs("\xef\xbf\xbd", out);
			p++;
			continue;
		}
		if (*p == '\\')
			fputs("\\\\", out);
		else if (*p == '"')
			fputs("\\\"", out);
		else if (*p == '\n')
			fputs("\\n", out);
		else
			fwrite(p, 1, n, out);
		p += n;
	}
	fputc('"', out);
}
