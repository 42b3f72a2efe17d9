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

void json_u64_or_null(FILE *out, uint64_t v, bool have)
{
	if (have)
		fprintf(out, "%" PRIu64, v);
	else
		fputs("null", out);
}

static void prom_byte(FILE *out, unsigned char c)
{
	if (c == '\\')
		fputs("\\\\", out);
	else if (c == '"')
		fputs("\\\"", out);
	else if (c == '\n')
		fputs("\\n", out);
	else
		fputc(c, out);
}

/* Prometheus escapes only \\, " and newline; U+FFFD goes as UTF-8. */
void prom_label_value(FILE *out, const char *s)
{
	utf8_quoted(out, s, "\xef\xbf\xbd", prom_byte);
}
