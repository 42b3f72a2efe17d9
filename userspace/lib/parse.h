/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Numbers from the command line, shared by the tools.  A parser says what
 * is wrong and leaves the message, which names the option, to the tool.
 */
#ifndef WPSTAT_PARSE_H
#define WPSTAT_PARSE_H

#include <stdint.h>

/*
 * A decimal integer in [@min, @max] that is the whole of @arg: "-1", " 5",
 * "0x10" and "1e3" are not.  Returns 0, -EINVAL (not such a number),
 * -ERANGE (above @max) or -EDOM (below @min); @out is set only on 0.
 */
int wpstat_parse_uint(const char *arg, uint64_t min, uint64_t max,
		      uint64_t *out);

#endif
