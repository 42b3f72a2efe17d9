// SPDX-License-Identifier: GPL-2.0
/*
 * strings - host unit test (TAP) of libwpstat's quoting: file names are
 * bytes, JSON strings and Prometheus label values are Unicode.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "strout.h"

static int ntest, nfail;

static void check(void (*fn)(FILE *, const char *), const char *in,
		  const char *want, const char *what)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int good;

	fn(f, in);
	fclose(f);
	good = !strcmp(buf, want);
	ntest++;
	nfail += !good;
	printf("%sok %d %s\n", good ? "" : "not ", ntest, what);
	if (!good)
		printf("# got %s, want %s\n", buf, want);
	free(buf);
}

int main(void)
{
	check(json_string, "a\"b\\c\nd\te\rf", "\"a\\\"b\\\\c\\nd\\te\\rf\"",
	      "json: quote, backslash, newline, tab, CR escaped");
	check(json_string, "\x01\x7f", "\"\\u0001\\u007f\"", "json: control bytes as \\u00XX");
	check(json_string, "caf\xc3\xa9 \xe2\x82\xac", "\"caf\xc3\xa9 \xe2\x82\xac\"",
	      "json: valid UTF-8 passes through");
	check(json_string, "a\xff" "b\xc3", "\"a\\ufffdb\\ufffd\"",
	      "json: invalid and truncated UTF-8 become \\ufffd");
	check(prom_label_value, "a\"b\\c\nd\te", "\"a\\\"b\\\\c\\nd\te\"",
	      "prometheus: only backslash, quote and newline escaped");
	check(prom_label_value, "x\xffy", "\"x\xef\xbf\xbdy\"",
	      "prometheus: an invalid byte becomes U+FFFD as UTF-8");
	check(json_string_or_null, NULL, "null", "json_string_or_null(NULL)");
	printf("1..%d\n", ntest);
	return nfail != 0;
}
