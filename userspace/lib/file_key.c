// SPDX-License-Identifier: GPL-2.0
/*
 * A file's key as the module names it (dev, inode, generation, btrfs
 * subvolume), from an open file or a path; see file_key.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/sysmacros.h>

#include "file_key.h"

/*
 * The module names a file by its superblock's s_dev, which is what
 * /proc/self/mountinfo shows; stat()'s st_dev can differ (btrfs reports a
 * per-subvolume anonymous device).  Find the mount by statx's mount id.
 */
static void sb_dev_of(int fd, const struct stat *st, unsigned int *maj,
		      unsigned int *min)
{
	struct statx stx;
	char *line = NULL;
	size_t n = 0;
	FILE *f;

	*maj = major(st->st_dev);
	*min = minor(st->st_dev);
	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) ||
	    !(stx.stx_mask & STATX_MNT_ID))
		return;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return;
	while (getline(&line, &n, f) > 0) {
		unsigned long long id;
		unsigned int a, b;

		if (sscanf(line, "%llu %*u %u:%u", &id, &a, &b) == 3 &&
		    id == stx.stx_mnt_id) {
			*maj = a;
			*min = b;
			break;
		}
	}
	free(line);
	fclose(f);
}

#define OVERLAYFS_MAGIC	0x794c7630

/*
 * Split overlayfs' layer list (lowerdir=A:B, with ':' and '\\' inside a
 * name escaped by a backslash, ovl_show_options()) at ':' in place; the
 * number of layers, at most @max, put in @layers.
 */
size_t wpstat_ovl_split_layers(char *list, char **layers, size_t max)
{
	size_t n = 0;
	char *s = list, *d = list;

	if (!*list || !max)
		return 0;
	layers[n++] = d;
	while (*s) {
		if (*s == '\\' && s[1]) {
			*d++ = s[1];
			s += 2;
		} else if (*s == ':') {
			*d++ = '\0';
			s++;
			if (*s == ':')	/* "::": the data-only layers follow */
				s++;
			if (n == max)
				return n;
			layers[n++] = d;
		} else {
			*d++ = *s++;
		}
	}
	*d = '\0';
	return n;
}

/*
 * The value of option @name= in a mountinfo super-options field (commas
 * separate options; a ',' inside a value is escaped by a backslash), into
 * @buf with its \ooo escapes undone: 0, or -ENOENT.
 */
int wpstat_mount_option(const char *opts, const char *name, char *buf,
			size_t len)
{
	size_t nlen = strlen(name);
	const char *s = opts, *end;
	char raw[PATH_MAX * 2];

	while (*s) {
		for (end = s; *end && *end != ','; end++)
			if (*end == '\\' && end[1])
				end++;
		if ((size_t)(end - s) > nlen && !strncmp(s, name, nlen) &&
		    s[nlen] == '=') {
			size_t vlen = end - s - nlen - 1;

			if (vlen >= sizeof(raw))
				vlen = sizeof(raw) - 1;
			memcpy(raw, s + nlen + 1, vlen);
			raw[vlen] = '\0';
			wpstat_unescape_octal(buf, len, raw);
			return 0;
		}
		s = *end ? end + 1 : end;
	}
	return -ENOENT;
}

/*
 * An overlayfs file's pages, faults and cleans are its real file's
 * (ovl_mmap() maps the upper or lower file), so the module counts the
 * real inode.  Find it: the file's path below the overlay mount's root,
 * looked up in upperdir, then in each lowerdir (mountinfo's options).
 * Returns an fd of the real file, or -errno.
 */
static int ovl_real_fd(int fd)
{
	char link[64], path[PATH_MAX], root[PATH_MAX], cand[PATH_MAX * 3 + 8];
	char *line = NULL, *layers[64], opts_val[PATH_MAX * 2];
	const char *rel = NULL;
	struct statx stx;
	size_t n = 0, i, nl;
	ssize_t len;
	int ret = -ENOENT;
	FILE *f;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = readlink(link, path, sizeof(path) - 1);
	if (len <= 0)
		return -errno;
	path[len] = '\0';
	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) ||
	    !(stx.stx_mask & STATX_MNT_ID))
		return -ENOTSUP;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	while (ret == -ENOENT && getline(&line, &n, f) > 0) {
		unsigned long long id;
		char *sep, *opts;
		int pos = 0;

		if (sscanf(line, "%llu %*u %*u:%*u %*s %n", &id, &pos) != 1 ||
		    id != stx.stx_mnt_id || !pos)
			continue;
		/* mount point, then " - overlay SOURCE SUPER-OPTIONS" */
		line[pos + strcspn(line + pos, " ")] = '\0';
		wpstat_unescape_octal(root, sizeof(root), line + pos);
		sep = strstr(line + pos + strlen(line + pos) + 1, " - ");
		if (!sep)
			break;
		opts = strrchr(sep, ' ');
		opts[strcspn(opts, "\n")] = '\0';
		opts++;
		len = strlen(root);
		if (strcmp(root, "/") && (strncmp(path, root, len) ||
					  (path[len] && path[len] != '/')))
			break;
		rel = strcmp(root, "/") ? path + len : path;
		nl = 0;
		if (!wpstat_mount_option(opts, "upperdir", opts_val,
					 sizeof(opts_val))) {
			snprintf(cand, sizeof(cand), "%s%s", opts_val, rel);
			ret = open(cand, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
			if (ret < 0)
				ret = -ENOENT;
		}
		if (ret >= 0 || wpstat_mount_option(opts, "lowerdir", opts_val,
						    sizeof(opts_val)))
			break;
		nl = wpstat_ovl_split_layers(opts_val, layers, 64);
		for (i = 0; i < nl && ret < 0; i++) {
			snprintf(cand, sizeof(cand), "%s%s", layers[i], rel);
			ret = open(cand, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
			if (ret < 0)
				ret = -ENOENT;
		}
	}
	free(line);
	fclose(f);
	return ret;
}

int wpstat_statx_quiet(int dirfd, const char *path, int flags,
		       struct statx *stx)
{
	return statx(dirfd, path, flags | AT_STATX_DONT_SYNC,
		     STATX_TYPE | STATX_MODE | STATX_INO, stx) ? -errno : 0;
}

/*
 * A btrfs file's subvolume, as the module reads it: the root id of the
 * file handle btrfs gives NFS (FILEID_BTRFS_WITHOUT_PARENT, 0x4d: u64
 * object id, u64 root id, u32 generation).  name_to_handle_at() needs no
 * privilege; statx's STATX_SUBVOL is only 6.10's.  0 if it cannot tell.
 */
#define FILEID_BTRFS_WITHOUT_PARENT	0x4d

static uint64_t btrfs_subvol_of(int fd)
{
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} h;
	uint64_t root;
	int mnt;

	h.fh.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(fd, "", &h.fh, &mnt, AT_EMPTY_PATH) ||
	    h.fh.handle_type != FILEID_BTRFS_WITHOUT_PARENT ||
	    h.fh.handle_bytes < 2 * sizeof(root))
		return 0;
	memcpy(&root, h.fh.f_handle + sizeof(root), sizeof(root));
	return root;
}

static int fd_key(int fd, struct wpstat_file_key *key, int depth)
{
	struct statfs sfs;
	struct statx stx;
	struct stat st;
	int gen = 0, ret;
	bool have_sfs;

	ret = wpstat_statx_quiet(fd, "", AT_EMPTY_PATH, &stx);
	if (ret)
		return ret;
	memset(&st, 0, sizeof(st));
	st.st_mode = stx.stx_mode;
	st.st_ino = stx.stx_ino;
	st.st_dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	have_sfs = S_ISREG(st.st_mode) && !fstatfs(fd, &sfs);
	if (depth < 4 && have_sfs && sfs.f_type == OVERLAYFS_MAGIC) {
		int real = ovl_real_fd(fd);

		if (real >= 0) {
			int ret = fd_key(real, key, depth + 1);

			close(real);
			return ret;
		}
	}
	sb_dev_of(fd, &st, &key->major, &key->minor);
	key->ino = st.st_ino;
	key->have_gen = ioctl(fd, FS_IOC_GETVERSION, &gen) == 0;
	key->gen = gen;
	key->subvol = have_sfs && sfs.f_type == BTRFS_SUPER_MAGIC ?
		      btrfs_subvol_of(fd) : 0;
	return 0;
}

/* An overlayfs file is keyed by its real (upper or lower) file. */
int wpstat_fd_key(int fd, struct wpstat_file_key *key)
{
	return fd_key(fd, key, 0);
}

#define FUSE_MAGIC	0x65735546
#define NFS_MAGIC	0x6969

/*
 * Looking a file up must not change what it counts.  Closing a FUSE or
 * NFS file writes its dirty pages back (fuse_flush -> write_inode_now,
 * nfs_file_flush -> nfs_wb_all) and so write-protects the writer's
 * pages: those are keyed through an O_PATH descriptor, which is never
 * flushed, without a generation (neither reports one to
 * FS_IOC_GETVERSION).  Others are opened read-only for the generation.
 */
int wpstat_path_key(const char *path, struct wpstat_file_key *key)
{
	struct statfs sfs;
	int fd, ret;

	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (!fstatfs(fd, &sfs) &&
	    (sfs.f_type == FUSE_MAGIC || sfs.f_type == NFS_MAGIC)) {
		ret = wpstat_fd_key(fd, key);
		close(fd);
		return ret;
	}
	close(fd);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	ret = wpstat_fd_key(fd, key);
	close(fd);
	return ret;
}

/*
 * An inode number is reused once a file is deleted, so rows are matched on
 * the generation too (FS_IOC_GETVERSION: ext4, xfs, btrfs).  Where the
 * filesystem cannot tell it (tmpfs), the newest row for dev and inode wins:
 * the module appends rows in the order it first sees them.  A btrfs
 * snapshot's file differs from its original only by subvolume.
 */
const struct wpstat_row *wpstat_snapshot_find_key(const struct wpstat_snapshot *s,
						  const struct wpstat_file_key *key)
{
	const struct wpstat_row *found = NULL;
	size_t i;

	for (i = 0; i < s->nrows; i++)
		if (wpstat_row_is_file(&s->rows[i], key))
			found = &s->rows[i];
	return found;
}

const struct wpstat_row *wpstat_snapshot_find_path(const struct wpstat_snapshot *s,
						   const char *path)
{
	struct wpstat_file_key key;

	if (wpstat_path_key(path, &key))
		return NULL;
	return wpstat_snapshot_find_key(s, &key);
}
