/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A file's identity as the module keys it: the superblock's dev (from
 * /proc/self/mountinfo, not stat()'s st_dev), inode, generation and btrfs
 * subvolume, found from an open file or a path without changing what the
 * file counts; an overlayfs file is keyed by its real file.  And the
 * lookups of a snapshot's row by that key.
 */
#ifndef WPSTAT_FILE_KEY_H
#define WPSTAT_FILE_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wpstat_proc.h"

/* How the module names a file: superblock dev, inode, generation. */
struct wpstat_file_key {
	unsigned int major, minor;
	uint64_t ino;
	uint32_t gen;
	bool have_gen;		/* the filesystem reports generations */
	uint64_t subvol;	/* btrfs subvolume id (file handle), else 0 */
};

/*
 * Whether @r is the row of @key's file: device, inode, generation where
 * the filesystem tells it, and subvolume (a btrfs snapshot's files keep
 * the original's inode numbers and generations), 0 on either side being
 * none or not told.
 */
static inline bool wpstat_row_is_file(const struct wpstat_row *r,
				      const struct wpstat_file_key *key)
{
	return r->major == key->major && r->minor == key->minor &&
	       r->ino == key->ino && (!key->have_gen || r->gen == key->gen) &&
	       (!r->subvol || !key->subvol || r->subvol == key->subvol);
}

/*
 * Fill @key for an open file or a path: 0 or -errno.  A file on overlayfs
 * gets its real (upper, else lower) file's key: the inode the module
 * counts, since ovl_mmap() maps the real file.
 */
int wpstat_fd_key(int fd, struct wpstat_file_key *key);
int wpstat_path_key(const char *path, struct wpstat_file_key *key);
/*
 * statx() of type, mode and inode (and the device, always filled) with
 * AT_STATX_DONT_SYNC, and so without stat()'s side effect on NFS:
 * nfs_getattr() writes a dirty file back before reporting mtime or ctime,
 * write-protecting its writer's pages.  @flags: AT_EMPTY_PATH,
 * AT_SYMLINK_NOFOLLOW.  0 or -errno.
 */
struct statx;
int wpstat_statx_quiet(int dirfd, const char *path, int flags,
		       struct statx *stx);
/* Helpers of the overlayfs lookup, exposed for the unit tests. */
int wpstat_mount_option(const char *opts, const char *name, char *buf,
			size_t len);
size_t wpstat_ovl_split_layers(char *list, char **layers, size_t max);
const struct wpstat_row *wpstat_snapshot_find_key(const struct wpstat_snapshot *s,
						  const struct wpstat_file_key *key);
/* The row for a file path (dev, inode and generation), or NULL. */
const struct wpstat_row *wpstat_snapshot_find_path(const struct wpstat_snapshot *s,
						   const char *path);

#endif
