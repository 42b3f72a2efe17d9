// SPDX-License-Identifier: GPL-2.0
/*
 * wpstat_pidreuse: a pid filter and the pid's reuse.
 *
 *   filter.pid_reuse  a pid filter on a process that exits does not follow
 *                     the next process that gets the same pid (forced with
 *                     ns_last_pid in a pid namespace).
 *
 * Runs as root in a guest with wpstat.ko loaded and $WPSTAT_FS_DIR/ext4
 * mounted (scripts/check/guest-check.sh); reloads the module and puts the
 * default one back.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "wpstat_test.h"
#include "wpstat_harness.h"

#define HOT_PAGES	16

/* ---- pid filter and pid reuse --------------------------------------------- */

/* Store to @npages of a fresh ext4 file and msync; its key in @key. */
static int touch_new_file(const char *tag, struct wpstat_file_key *key)
{
	char path[256];
	char *map;
	int fd = wps_scratch("ext4", tag, 4, path, sizeof(path));

	if (fd < 0)
		return fd;
	map = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	wps_store_pages(map, 4, 1);
	msync(map, 4 * PAGE, MS_SYNC);
	munmap(map, 4 * PAGE);
	wpstat_fd_key(fd, key);
	close(fd);
	unlink(path);
	return 0;
}

struct reuse_result {
	pid_t first, second;		/* pids inside the namespace */
	struct wpstat_file_key first_key, second_key;
	int filter_ret;
	int step;
};

/* A child of the namespace's init that touches a file and exits. */
static pid_t spawn_toucher(const char *tag, struct wpstat_file_key *key,
			   int go_fd)
{
	pid_t pid = fork();
	char c;

	if (pid == 0) {
		if (go_fd >= 0 && read(go_fd, &c, 1) != 1)
			_exit(2);
		_exit(touch_new_file(tag, key) ? 1 : 0);
	}
	return pid;
}

/*
 * Runs as pid 1 of a new pid namespace: filter on its child (pid 2), let
 * the child write and exit, set ns_last_pid to 1 and fork again: the new
 * child is pid 2 as well.
 */
static int reuse_init(struct reuse_result *res)
{
	int go[2], status;
	char cmd[64];
	FILE *f;

	if (pipe(go))
		return 10;
	res->first = spawn_toucher("reuse-first", &res->first_key, go[0]);
	if (res->first < 0)
		return 11;
	snprintf(cmd, sizeof(cmd), "filter pid %d", res->first);
	res->filter_ret = wps_control(cmd);
	if (write(go[1], "g", 1) != 1)
		return 12;
	if (waitpid(res->first, &status, 0) != res->first || status)
		return 13;
	res->step = 1;
	f = fopen("/proc/sys/kernel/ns_last_pid", "we");
	if (!f || fprintf(f, "%d", res->first - 1) < 0 || fclose(f))
		return 14;
	res->second = spawn_toucher("reuse-second", &res->second_key, -1);
	if (res->second < 0 || waitpid(res->second, &status, 0) != res->second ||
	    status)
		return 15;
	res->step = 2;
	return 0;
}

TEST(pid_filter_does_not_follow_a_reused_pid)
{
	struct reuse_result *res;
	struct wps w1, w2;
	int status;
	pid_t outer;

	/* ns_last_pid exists only with CONFIG_CHECKPOINT_RESTORE. */
	if (access("/proc/sys/kernel/ns_last_pid", W_OK))
		SKIP(return, "no writable /proc/sys/kernel/ns_last_pid (a kernel without CONFIG_CHECKPOINT_RESTORE): a pid cannot be forced");
	res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, res);
	outer = fork();
	ASSERT_LE(0, outer);
	if (outer == 0) {
		pid_t init;

		if (unshare(CLONE_NEWPID))
			_exit(20);
		init = fork();	/* pid 1 of the new namespace */
		if (init == 0)
			_exit(reuse_init(res));
		_exit(waitpid(init, &status, 0) == init && WIFEXITED(status) ?
		      WEXITSTATUS(status) : 21);
	}
	ASSERT_EQ(outer, waitpid(outer, &status, 0));
	wps_control("filter none");
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status)) TH_LOG("namespace set-up failed at step %d",
						 res->step);
	ASSERT_EQ(0, res->filter_ret);
	ASSERT_EQ(res->first, res->second) TH_LOG("ns_last_pid did not force the pid");
	ASSERT_EQ(0, wps_read_key(&res->first_key, &w1));
	ASSERT_EQ(0, wps_read_key(&res->second_key, &w2));
	/* The filtered process was counted, its namesake was not. */
	EXPECT_EQ(4, w1.mkwrite_first);
	EXPECT_EQ(0, w2.mkwrite_first);
	EXPECT_EQ(0, w2.dirtied);
	munmap(res, sizeof(*res));
}

TEST_HARNESS_MAIN
