// SPDX-License-Identifier: GPL-2.0
/*
 * fuse-passthrough: a small FUSE server for the wpstat FUSE suite
 * (selftests/kselftest/wpstat_fuse.c).  It mirrors a backing directory
 * (in the guest, a directory on the ext4 RAM disk), with two knobs the
 * predictions need:
 *
 *   --writeback-cache    ask for FUSE_CAP_WRITEBACK_CACHE at FUSE_INIT
 *                        (without it the kernel writes write(2) through);
 *                        mmap stores go through the page cache either way
 *   --write-delay-ms N   sleep N ms in every WRITE before answering, so a
 *                        writeback the kernel sent stays in flight (on
 *                        fi->writepages) that long
 *
 * Usage: fuse-passthrough [--writeback-cache] [--write-delay-ms N]
 *                         BACKING_DIR MOUNTPOINT
 * It mounts, then daemonises (fuse_main without -f): when the command
 * returns 0 the mount is there.  Unmount with umount(8); the daemon exits.
 *
 * Attributes are cached for an hour and FUSE_CAP_AUTO_INVAL_DATA is turned
 * off, so that nothing but the test drops the page cache: without
 * writeback_cache, fuse_writepage_end() invalidates the cached mtime, and a
 * later stat would compare it with the backing file's and, under
 * auto_inval_data, call invalidate_inode_pages2() (fuse_change_attributes),
 * unmapping the pages the test counts faults on.
 */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/time.h>

static int backing = -1;
static int writeback_cache;
static long write_delay_ms;

/* The path relative to the backing directory ("." for the root). */
static const char *rel(const char *path)
{
	while (*path == '/')
		path++;
	return *path ? path : ".";
}

static void *pt_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	cfg->use_ino = 1;
	cfg->attr_timeout = 3600;
	cfg->entry_timeout = 3600;
	cfg->negative_timeout = 0;
	/* Keep the page cache across opens (no FOPEN_KEEP_CACHE otherwise). */
	cfg->kernel_cache = 1;
	if (writeback_cache)
		conn->want |= FUSE_CAP_WRITEBACK_CACHE;
	else
		conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
	conn->want &= ~FUSE_CAP_AUTO_INVAL_DATA;
	return NULL;
}

static int pt_getattr(const char *path, struct stat *st,
		      struct fuse_file_info *fi)
{
	int r = fi ? fstat(fi->fh, st)
		   : fstatat(backing, rel(path), st, AT_SYMLINK_NOFOLLOW);

	return r ? -errno : 0;
}

static int pt_readdir(const char *path, void *buf, fuse_fill_dir_t fill,
		      off_t off, struct fuse_file_info *fi,
		      enum fuse_readdir_flags flags)
{
	struct dirent *de;
	DIR *d;
	int fd = openat(backing, rel(path), O_RDONLY | O_DIRECTORY);

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d)))
		if (fill(buf, de->d_name, NULL, 0, 0))
			break;
	closedir(d);
	return 0;
}

static int pt_open(const char *path, struct fuse_file_info *fi)
{
	/*
	 * With writeback_cache the kernel may read pages of a file opened
	 * write-only: open the backing file read-write (as libfuse's
	 * passthrough example does).
	 */
	int flags = fi->flags & ~(O_ACCMODE | O_APPEND);
	int fd = openat(backing, rel(path), flags | O_RDWR);

	if (fd < 0)
		return -errno;
	fi->fh = fd;
	fi->keep_cache = 1;
	return 0;
}

static int pt_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	int flags = fi->flags & ~(O_ACCMODE | O_APPEND);
	int fd = openat(backing, rel(path), flags | O_RDWR | O_CREAT, mode);

	if (fd < 0)
		return -errno;
	fi->fh = fd;
	return 0;
}

static int pt_read(const char *path, char *buf, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	ssize_t n = pread(fi->fh, buf, size, off);

	return n < 0 ? -errno : (int)n;
}

static int pt_write(const char *path, const char *buf, size_t size,
		    off_t off, struct fuse_file_info *fi)
{
	ssize_t n;

	if (write_delay_ms > 0) {
		struct timespec ts = {
			.tv_sec = write_delay_ms / 1000,
			.tv_nsec = (write_delay_ms % 1000) * 1000000L,
		};

		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	n = pwrite(fi->fh, buf, size, off);
	return n < 0 ? -errno : (int)n;
}

static int pt_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	int r;

	if (fi)
		return ftruncate(fi->fh, size) ? -errno : 0;
	r = openat(backing, rel(path), O_WRONLY);
	if (r < 0)
		return -errno;
	if (ftruncate(r, size)) {
		int e = errno;

		close(r);
		return -e;
	}
	close(r);
	return 0;
}

static int pt_utimens(const char *path, const struct timespec tv[2],
		      struct fuse_file_info *fi)
{
	int r = fi ? futimens(fi->fh, tv)
		   : utimensat(backing, rel(path), tv, AT_SYMLINK_NOFOLLOW);

	return r ? -errno : 0;
}

static int pt_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	int r = fi ? fchmod(fi->fh, mode) : fchmodat(backing, rel(path), mode, 0);

	return r ? -errno : 0;
}

static int pt_unlink(const char *path)
{
	return unlinkat(backing, rel(path), 0) ? -errno : 0;
}

static int pt_mkdir(const char *path, mode_t mode)
{
	return mkdirat(backing, rel(path), mode) ? -errno : 0;
}

static int pt_rmdir(const char *path)
{
	return unlinkat(backing, rel(path), AT_REMOVEDIR) ? -errno : 0;
}

static int pt_release(const char *path, struct fuse_file_info *fi)
{
	close(fi->fh);
	return 0;
}

static int pt_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	int r = datasync ? fdatasync(fi->fh) : fsync(fi->fh);

	return r ? -errno : 0;
}

static int pt_statfs(const char *path, struct statvfs *st)
{
	return fstatvfs(backing, st) ? -errno : 0;
}

static const struct fuse_operations ops = {
	.init = pt_init,
	.getattr = pt_getattr,
	.readdir = pt_readdir,
	.open = pt_open,
	.create = pt_create,
	.read = pt_read,
	.write = pt_write,
	.truncate = pt_truncate,
	.utimens = pt_utimens,
	.chmod = pt_chmod,
	.unlink = pt_unlink,
	.mkdir = pt_mkdir,
	.rmdir = pt_rmdir,
	.release = pt_release,
	.fsync = pt_fsync,
	.statfs = pt_statfs,
};

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [--writeback-cache] [--write-delay-ms N] BACKING_DIR MOUNTPOINT\n",
		prog);
	exit(2);
}

int main(int argc, char **argv)
{
	char *fargv[8];
	int i, fargc = 0;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--writeback-cache")) {
			writeback_cache = 1;
		} else if (!strcmp(argv[i], "--write-delay-ms") && i + 1 < argc) {
			char *end;

			write_delay_ms = strtol(argv[++i], &end, 10);
			if (*end || write_delay_ms < 0)
				usage(argv[0]);
		} else {
			usage(argv[0]);
		}
	}
	if (argc - i != 2)
		usage(argv[0]);
	backing = open(argv[i], O_RDONLY | O_DIRECTORY);
	if (backing < 0) {
		perror(argv[i]);
		return 1;
	}
	fargv[fargc++] = argv[0];
	fargv[fargc++] = argv[i + 1];
	/* Root mounts it; default_permissions lets the kernel check modes. */
	fargv[fargc++] = "-o";
	fargv[fargc++] = "default_permissions,fsname=wpstat-fuse,subtype=passthrough";
	fargv[fargc] = NULL;
	umask(0);
	return fuse_main(fargc, fargv, &ops, NULL);
}
