// SPDX-License-Identifier: GPL-2.0
/* delta.c - the change of a /proc/wpstat row between two snapshots. */
#include <string.h>

#include "delta.h"

bool wpstat_row_delta(const struct wpstat_snapshot *cols,
		      const struct wpstat_row *a, const struct wpstat_row *b,
		      const int *bcol, struct wpstat_row *d)
{
	bool restart = !b, changed = false;
	int c;

	for (c = 0; c < cols->ncounters && !restart; c++)
		if (a->avail[c] && bcol[c] >= 0 && b->avail[bcol[c]] &&
		    !cols->max[c] &&
		    b->val[bcol[c]] > a->val[c])
			restart = true;
	memset(d, 0, sizeof(*d));
	d->major = a->major;
	d->minor = a->minor;
	d->ino = a->ino;
	d->gen = a->gen;
	d->subvol = a->subvol;
	for (c = 0; c < cols->ncounters; c++) {
		bool max = cols->max[c];
		uint64_t v = a->val[c];

		d->avail[c] = a->avail[c];
		if (!a->avail[c])
			continue;
		if (!restart && !max && bcol[c] >= 0 && b->avail[bcol[c]])
			v -= b->val[bcol[c]];
		d->val[c] = v;
		changed |= !max && v;
	}
	return changed;
}

void wpstat_column_map(const struct wpstat_snapshot *after,
		       const struct wpstat_snapshot *before, int *bcol)
{
	int c;

	for (c = 0; c < after->ncounters; c++)
		bcol[c] = wpstat_counter_index(before, after->names[c]);
}
