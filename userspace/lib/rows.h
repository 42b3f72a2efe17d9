/* SPDX-License-Identifier: GPL-2.0 */
#ifndef WPSTAT_ROWS_H
#define WPSTAT_ROWS_H

#include "wpstat_proc.h"

/*
 * Order of rows by file: device, inode, generation, btrfs subvolume (a
 * snapshot's files repeat the rest).  Inline: it is the
 * comparison of every sort and search over a table of up to millions of
 * rows.
 */
static inline int wpstat_row_key_cmp(const struct wpstat_row *a,
				     const struct wpstat_row *b)
{
	if (a->major != b->major)
		return a->major < b->major ? -1 : 1;
	if (a->minor != b->minor)
		return a->minor < b->minor ? -1 : 1;
	if (a->ino != b->ino)
		return a->ino < b->ino ? -1 : 1;
	if (a->gen != b->gen)
		return a->gen < b->gen ? -1 : 1;
	if (a->subvol != b->subvol)
		return a->subvol < b->subvol ? -1 : 1;
	return 0;
}

#endif
