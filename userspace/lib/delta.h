/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The change of a /proc/wpstat row between two snapshots: the one place
 * that decides what a counter that went down means (a reset in between).
 */
#ifndef WPSTAT_DELTA_H
#define WPSTAT_DELTA_H

#include <stdbool.h>

#include "wpstat_proc.h"

/*
 * The change of row @a since @b (NULL: the row is new) into @d, key
 * included.  @cols names @a's counter columns; @bcol maps them to @b's
 * (-1: not in @b; may be NULL when @b is).  A reset zeroes every counter
 * at once, so if any summed counter is lower than in @b the whole row
 * counts from zero.  A maximum (@cols->max[]) keeps its value
 * after and alone does not make a row changed.  Returns whether a summed
 * counter changed.
 */
bool wpstat_row_delta(const struct wpstat_snapshot *cols,
		      const struct wpstat_row *a, const struct wpstat_row *b,
		      const int *bcol, struct wpstat_row *d);

/*
 * For each counter column of @after, its column in @before or -1, into
 * @bcol (WPSTAT_MAX_COUNTERS entries).
 */
void wpstat_column_map(const struct wpstat_snapshot *after,
		       const struct wpstat_snapshot *before, int *bcol);

#endif
