// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_freshfs: files of a fresh btrfs whose keys an earlier file had.
 *
 *   remount.repeated_key_gets_a_new_row  a fresh btrfs on a loop device,
 *              mounted twice, repeats (dev, ino, gen): the second file's
 *              row does not take the first's counts.
 *
 *   snapshot.rows_of_their_own  a btrfs snapshot's file has its
 *              original's (dev, ino, gen): each has a row, exact, and the
 *              snapshot's eviction marks its own row gone, not the
 *              original's.
 *
 * Runs as root in a guest with wpstat.ko loaded
 * (scripts/check/guest-check.sh).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <time.h>
#include <sys/statfs.h>
#include <sys/wait.h>

#include "wpstat_test.h"
#include "wpstat_harness.h"

#define NPAGES		16

/* ---- a fresh filesystem where another was ------------------------------ */

/*
 * btrfs takes an anonymous s_dev, which the next mount reuses, and a fresh
 * btrfs gives its first file the same inode number and generation, so
 * (dev, ino, gen) repeats across unmount, mkfs and mount.  The old file's
 * row, marked gone at unmount, must not come back with the new file's
 * counts added to it: the new file's row holds only what the new file
 * did, the same as the old one for the same writes.  The same holds for
 * the writer's stall row (its key holds the superblock: without it one
 * process's row would count both files): its newest row for the file
 * holds only the second file's faults.
 */
#define REMOUNT_DIR	"/tmp/wpstat-remount"
#define REMOUNT_IMG	"/tmp/wpstat-remount.img"

FIXTURE(remount) {
	char loop[64];
	bool mounted;
};

/*
 * A fresh 256 MiB image @img on a free loop device (its name into @loop,
 * empty if none) and the directory @dir: 0, or -1.
 */
static int loop_attach(const char *img, const char *dir, char *loop,
		       size_t len)
{
	char cmd[300];
	FILE *p;

	loop[0] = '\0';
	if (sh("rm -f %s && truncate -s 256M %s && mkdir -p %s", img, img, dir))
		return -1;
	sh("modprobe loop 2>/dev/null");
	snprintf(cmd, sizeof(cmd), "losetup -f --show %s", img);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	if (!fgets(loop, len, p))
		loop[0] = '\0';
	pclose(p);
	loop[strcspn(loop, "\n")] = '\0';
	if (strncmp(loop, "/dev/loop", 9)) {
		loop[0] = '\0';
		return -1;
	}
	return 0;
}

static void loop_detach(const char *img, const char *dir, const char *loop,
			bool mounted)
{
	if (mounted)
		sh("umount %s", dir);
	if (loop[0])
		sh("losetup -d %s", loop);
	sh("rm -f %s; rmdir %s", img, dir);
}

FIXTURE_SETUP(remount)
{
	ASSERT_TRUE(wps_loaded());
	ASSERT_EQ(0, loop_attach(REMOUNT_IMG, REMOUNT_DIR, self->loop,
				 sizeof(self->loop)));
}

FIXTURE_TEARDOWN(remount)
{
	loop_detach(REMOUNT_IMG, REMOUNT_DIR, self->loop, self->mounted);
}

TEST_F(remount, repeated_key_gets_a_new_row)
{
	struct wpstat_file_key key[2];
	struct stall_row row[2];
	struct wps w[2];
	char path[256];
	int r, fd, nrows[2];

	snprintf(path, sizeof(path), "%s/f", REMOUNT_DIR);
	for (r = 0; r < 2; r++) {
		ASSERT_EQ(0, sh("mkfs.btrfs -q -f %s >/dev/null && mount %s %s",
				self->loop, self->loop, REMOUNT_DIR));
		self->mounted = true;
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, ftruncate(fd, NPAGES * PAGE));
		ASSERT_EQ(0, touch_file(fd, NPAGES));
		ASSERT_EQ(0, fsync(fd));
		ASSERT_EQ(0, wpstat_fd_key(fd, &key[r]));
		close(fd);
		ASSERT_EQ(0, wps_read_key(&key[r], &w[r]));
		/* This process's rows for the file: the last is the newest. */
		nrows[r] = stall_of(path, getpid(), &row[r]);
		ASSERT_EQ(0, sh("umount %s", REMOUNT_DIR));
		self->mounted = false;
		TH_LOG("mount %d: %u:%u ino %llu gen %u: mkwrite_first %lld, mkclean_calls %lld, dirtied %lld",
		       r + 1, key[r].major, key[r].minor,
		       (unsigned long long)key[r].ino, key[r].gen,
		       (long long)w[r].mkwrite_first,
		       (long long)w[r].mkclean_calls, (long long)w[r].dirtied);
	}
	if (key[0].major != key[1].major || key[0].minor != key[1].minor ||
	    key[0].ino != key[1].ino || key[0].gen != key[1].gen)
		SKIP(return, "the second btrfs gave its file another key (dev, ino or generation)");
	ASSERT_LT(0, w[0].dirtied);
	TH_LOG("stall rows of this process: %d then %d; faults %lld then %lld",
	       nrows[0], nrows[1], (long long)row[0].fault_first,
	       (long long)row[1].fault_first);
	ASSERT_LE(1, nrows[0]);
	ASSERT_LE(1, nrows[1]);
	EXPECT_EQ(w[0].mkwrite_first, row[0].fault_first);
	EXPECT_EQ(w[1].mkwrite_first, row[1].fault_first);
	EXPECT_EQ(w[0].mkwrite_first, w[1].mkwrite_first);
	EXPECT_EQ(w[0].mkclean_calls, w[1].mkclean_calls);
	EXPECT_EQ(w[0].dirtied, w[1].dirtied);
	EXPECT_EQ(w[0].bdp_calls, w[1].bdp_calls);
}

/* ---- a btrfs snapshot ---------------------------------------------------- */

/*
 * A snapshot's files keep their original's inode numbers and generations
 * on the same superblock and bdi (btrfs_snapshot copies the subvolume's
 * tree): only the subvolume tells them apart (the module reads its root
 * id from btrfs's file handle, wpstat_btrfs_subvol(); the test from
 * name_to_handle_at(2)).  Before subvolumes were in the key, the two
 * files had one row holding both files' counts (24 first writes), and
 * evicting the snapshot's inode marked the original's row gone.
 *
 * The numbers: touch_file() maps @n pages afresh and stores once a page,
 * so each store is a first write (no PTE): mkwrite_first = dirtied = n,
 * and msync writes the n pages back as one range, with
 * wps_btrfs_mkclean_calls(n) folio_mkclean() calls (2n on 6.1 and 6.12,
 * n on 5.10, 3n - 1 on 7.2: wpstat_predict.c).  The original gets 16
 * pages, the snapshot's file 8, then one and 4 more, the original 4 more.
 */
#define SNAP_DIR	"/tmp/wpstat-snapshot"
#define SNAP_IMG	"/tmp/wpstat-snapshot.img"
#define SNAP_ORIG	(NPAGES)
#define SNAP_COPY	(NPAGES / 2)
#define SNAP_MORE	(NPAGES / 4)

FIXTURE(snapshot) {
	char loop[64];
	bool mounted;
	int fd;
};

FIXTURE_SETUP(snapshot)
{
	self->fd = -1;
	ASSERT_TRUE(wps_loaded());
	if (sh("command -v btrfs >/dev/null"))
		SKIP(return, "no btrfs command (btrfs-progs)");
	ASSERT_EQ(0, loop_attach(SNAP_IMG, SNAP_DIR, self->loop,
				 sizeof(self->loop)));
	ASSERT_EQ(0, sh("mkfs.btrfs -q -f %s >/dev/null && mount %s %s",
			self->loop, self->loop, SNAP_DIR));
	self->mounted = true;
}

FIXTURE_TEARDOWN(snapshot)
{
	if (self->fd >= 0)
		close(self->fd);
	loop_detach(SNAP_IMG, SNAP_DIR, self->loop, self->mounted);
}

/* Map @n pages of @path afresh, store to each, msync; 0 or -errno. */
static int snapshot_write(const char *path, int n)
{
	int fd = open(path, O_RDWR | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = touch_file(fd, n);
	close(fd);
	return ret;
}

TEST_F(snapshot, rows_of_their_own)
{
	struct wpstat_file_key orig, copy;
	struct stall_row st[2];
	int64_t gone[4];
	struct wps w[2];
	int i;

	self->fd = open(SNAP_DIR "/f", O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ftruncate(self->fd, NPAGES * PAGE));
	ASSERT_EQ(0, touch_file(self->fd, SNAP_ORIG));
	ASSERT_EQ(0, fsync(self->fd));
	ASSERT_EQ(0, sh("btrfs -q subvolume snapshot %s %s/snap >/dev/null",
			SNAP_DIR, SNAP_DIR));
	ASSERT_EQ(0, snapshot_write(SNAP_DIR "/snap/f", SNAP_COPY));
	ASSERT_EQ(0, wpstat_fd_key(self->fd, &orig));
	ASSERT_EQ(0, wpstat_path_key(SNAP_DIR "/snap/f", &copy));
	TH_LOG("original %u:%u ino %llu gen %u subvol %llu; snapshot's subvol %llu",
	       orig.major, orig.minor, (unsigned long long)orig.ino, orig.gen,
	       (unsigned long long)orig.subvol, (unsigned long long)copy.subvol);
	/* The premise: the same (dev, ino, gen), told apart by subvolume. */
	ASSERT_EQ(orig.major, copy.major);
	ASSERT_EQ(orig.minor, copy.minor);
	ASSERT_EQ(orig.ino, copy.ino);
	ASSERT_EQ(orig.gen, copy.gen);
	ASSERT_NE(0, orig.subvol);
	ASSERT_NE(0, copy.subvol);
	ASSERT_NE(orig.subvol, copy.subvol);

	/*
	 * Two rows, each exactly its own file's (one row would hold 24
	 * first writes for both keys).  An earlier fresh btrfs's gone rows
	 * may repeat (dev, ino, gen, subvol) with another mount's sb, which
	 * /proc does not show: the newest row of a key is its file's.
	 */
	ASSERT_EQ(0, wps_read_key(&orig, &w[0]));
	ASSERT_EQ(0, wps_read_key(&copy, &w[1]));
	TH_LOG("rows: original mkwrite_first %lld mkclean_calls %lld dirtied %lld; snapshot %lld %lld %lld",
	       (long long)w[0].mkwrite_first, (long long)w[0].mkclean_calls,
	       (long long)w[0].dirtied, (long long)w[1].mkwrite_first,
	       (long long)w[1].mkclean_calls, (long long)w[1].dirtied);
	EXPECT_EQ(SNAP_ORIG, w[0].mkwrite_first);
	EXPECT_EQ(0, w[0].mkwrite_wp);
	EXPECT_EQ(wps_btrfs_mkclean_calls(SNAP_ORIG), w[0].mkclean_calls);
	EXPECT_EQ(SNAP_ORIG, w[0].dirtied);
	EXPECT_EQ(SNAP_COPY, w[1].mkwrite_first);
	EXPECT_EQ(0, w[1].mkwrite_wp);
	EXPECT_EQ(wps_btrfs_mkclean_calls(SNAP_COPY), w[1].mkclean_calls);
	EXPECT_EQ(SNAP_COPY, w[1].dirtied);

	/*
	 * The stall table keys its rows as the inode table does: this
	 * process has a row for each file, each with its own faults.  When
	 * the stall key's compare left the subvolume out, the snapshot's
	 * faults went to the original's row (the CPU's last: 24 first
	 * writes), and the snapshot's file had none.
	 */
	ASSERT_EQ(1, stall_of(SNAP_DIR "/f", getpid(), &st[0]));
	ASSERT_EQ(1, stall_of(SNAP_DIR "/snap/f", getpid(), &st[1]));
	TH_LOG("stall rows: original fault_first %lld (subvol %llu); snapshot %lld (subvol %llu)",
	       (long long)st[0].fault_first, st[0].subvol,
	       (long long)st[1].fault_first, st[1].subvol);
	EXPECT_EQ(SNAP_ORIG, st[0].fault_first);
	EXPECT_EQ(SNAP_COPY, st[1].fault_first);

	/*
	 * Evict the snapshot's inode (closed, clean) while the original's
	 * stays open: its row is marked gone, one more gone row (the first
	 * drop_caches takes the rest of the machine's; the write brings
	 * the snapshot's file back).  The original's row is not: writing
	 * the original takes no gone row back (the count stays), writing
	 * the snapshot's file again does (one fewer), and its row counts
	 * on.  A gone count can only move by other files' evictions
	 * meanwhile: none here but ours.
	 */
	ASSERT_EQ(0, wps_drop_caches());
	ASSERT_EQ(0, snapshot_write(SNAP_DIR "/snap/f", 1));
	gone[0] = wps_summary("gone_marked_inodes");
	ASSERT_EQ(0, wps_drop_caches());
	for (i = 0; i < 5 && wps_summary("gone_marked_inodes") == gone[0]; i++) {
		usleep(200 * 1000);
		ASSERT_EQ(0, wps_drop_caches());
	}
	gone[1] = wps_summary("gone_marked_inodes");
	ASSERT_EQ(0, touch_file(self->fd, SNAP_MORE));
	gone[2] = wps_summary("gone_marked_inodes");
	ASSERT_EQ(0, snapshot_write(SNAP_DIR "/snap/f", SNAP_MORE));
	gone[3] = wps_summary("gone_marked_inodes");
	TH_LOG("gone rows: %lld, snapshot evicted %lld, original written %lld, snapshot written %lld",
	       (long long)gone[0], (long long)gone[1], (long long)gone[2],
	       (long long)gone[3]);
	EXPECT_EQ(gone[0] + 1, gone[1]);
	EXPECT_EQ(gone[1], gone[2]);
	EXPECT_EQ(gone[2] - 1, gone[3]);
	ASSERT_EQ(0, wps_read_key(&orig, &w[0]));
	ASSERT_EQ(0, wps_read_key(&copy, &w[1]));
	EXPECT_EQ(SNAP_ORIG + SNAP_MORE, w[0].mkwrite_first);
	EXPECT_EQ(wps_btrfs_mkclean_calls(SNAP_ORIG) + wps_btrfs_mkclean_calls(SNAP_MORE),
		  w[0].mkclean_calls);
	EXPECT_EQ(SNAP_COPY + 1 + SNAP_MORE, w[1].mkwrite_first);
	EXPECT_EQ(wps_btrfs_mkclean_calls(SNAP_COPY) + wps_btrfs_mkclean_calls(1) + wps_btrfs_mkclean_calls(SNAP_MORE),
		  w[1].mkclean_calls);
}

TEST_HARNESS_MAIN
