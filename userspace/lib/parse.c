// SPDX-License-Identifier: GPL-2.0
/* parse.c - numbers from the command line; see parse.h. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "parse.h"

int wpstat_parse_uint(const char *arg, uint64_t min, uint64_t max,
		      uint64_t *out)
{
	unsigned long long v;
	char *end;

	/* strtoull() alone would take a sign or leading space. */
	if (!isdigit((unsigned char)arg[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v > max)
		return -ERANGE;
	if (v < min)
		return -EDOM;
	*out = v;
	return 0;
}
