// SPDX-License-Identifier: GPL-2.0
/*
 * proc_parse - host unit test (TAP) of libwpstat's /proc/wpstat parsers:
 * no module needed, so make check runs it before booting a guest.  Each
 * case writes a file in the format the module prints and checks what
 * wpstat_snapshot_read() and wpstat_stalls_read() make of it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "delta.h"
#include "fmt.h"
#include "file_key.h"
#include "wpstat_proc.h"

static int ntest, nfail;

static void ok(int cond, const char *what)
{
	ntest++;
	if (!cond)
		nfail++;
	printf("%sok %d %s\n", cond ? "" : "not ", ntest, what);
}

static char path[] = "/tmp/wpstat-proc-parse.XXXXXX";

static void put(const char *text)
{
	FILE *f = fopen(path, "we");

	if (!f || fputs(text, f) < 0 || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static int read_inodes(const char *text, struct wpstat_snapshot *s)
{
	put(text);
	return wpstat_snapshot_read(path, s);
}

static void test_inodes(void)
{
	struct wpstat_snapshot s;
	int ret;

	ret = read_inodes("dev ino gen a b_ns c_max_ns\n"
			  "8:1 12 3 5 - 18446744073709551615\n"
			  "259:65536 4294967296 4294967295 0 7 0\n", &s);
	ok(ret == 0 && s.ncounters == 3 && s.nrows == 2, "two rows, three counters");
	if (!ret) {
		ok(s.rows[0].major == 8 && s.rows[0].minor == 1 &&
		   s.rows[0].ino == 12 && s.rows[0].gen == 3, "key of row 1");
		ok(s.rows[0].val[0] == 5 && s.rows[0].avail[0] &&
		   !s.rows[0].avail[1] && s.rows[0].val[2] == UINT64_MAX,
		   "'-' is unavailable, UINT64_MAX parses");
		ok(s.rows[1].major == 259 && s.rows[1].minor == 65536 &&
		   s.rows[1].ino == 4294967296ULL && s.rows[1].gen == UINT32_MAX,
		   "key of row 2: 64-bit ino, 32-bit gen");
		ok(wpstat_counter_index(&s, "c_max_ns") == 2 &&
		   wpstat_counter_index(&s, "nope") == -1, "columns by name");
		wpstat_snapshot_free(&s);
	}

	/* Each of these must be refused as a whole (-EPROTO). */
	static const struct {
		const char *what, *text;
	} bad[] = {
		{ "counter over 2^64-1", "dev ino gen a\n8:1 1 1 18446744073709551616\n" },
		{ "gen over 2^32-1", "dev ino gen a\n8:1 1 4294967296 0\n" },
		{ "minor over 2^32-1", "dev ino gen a\n8:4294967296 1 1 0\n" },
		{ "dev without ':'", "dev ino gen a\n8 1 1 0\n" },
		{ "dev with trailing junk", "dev ino gen a\n8:1x 1 1 0\n" },
		{ "negative counter", "dev ino gen a\n8:1 1 1 -5\n" },
		{ "counter with a sign", "dev ino gen a\n8:1 1 1 +5\n" },
		{ "too few columns", "dev ino gen a b\n8:1 1 1 0\n" },
		{ "too many columns", "dev ino gen a\n8:1 1 1 0 0\n" },
		{ "header without dev ino gen", "ino dev gen a\n8:1 1 1 0\n" },
		{ "empty file", "" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char what[128];

		ret = read_inodes(bad[i].text, &s);
		snprintf(what, sizeof(what), "refused: %s (%d)", bad[i].what, ret);
		ok(ret == -EPROTO, what);
		if (!ret)
			wpstat_snapshot_free(&s);
	}

	/*
	 * The key's subvol column stands where the module's list put it,
	 * counters after it included; a module without it reads subvol 0.
	 */
	ret = read_inodes("dev ino gen a subvol b\n"
			  "0:45 257 8 3 5 4\n"
			  "0:45 257 8 6 256 7\n", &s);
	ok(ret == 0 && s.ncounters == 2 && s.nrows == 2 &&
	   s.rows[0].subvol == 5 && s.rows[1].subvol == 256 &&
	   s.rows[0].val[1] == 4 && s.rows[1].val[0] == 6 &&
	   wpstat_counter_index(&s, "subvol") == -1,
	   "subvol: part of the key, not a counter, before a later counter");
	if (!ret) {
		struct wpstat_file_key key = {
			.major = 0, .minor = 45, .ino = 257, .gen = 8,
			.have_gen = true, .subvol = 256,
		};
		const struct wpstat_row *r = wpstat_snapshot_find_key(&s, &key);

		ok(r == &s.rows[1], "a snapshot's file finds its own row, not the original's");
		key.subvol = 5;
		r = wpstat_snapshot_find_key(&s, &key);
		ok(r == &s.rows[0], "the original finds its own row");
		wpstat_snapshot_free(&s);
	}
	ret = read_inodes("dev ino gen a subvol\n8:1 1 1 0 -\n", &s);
	ok(ret == -EPROTO, "refused: subvol not a number");
	if (!ret)
		wpstat_snapshot_free(&s);
	ret = read_inodes("dev ino gen a\n8:1 1 1 0\n", &s);
	ok(ret == 0 && s.nrows == 1 && s.rows[0].subvol == 0 && s.subvol_at == -1,
	   "a module without subvol: rows of subvol 0");
	if (!ret)
		wpstat_snapshot_free(&s);

	ret = read_inodes("dev ino gen a\n8:1  1\t1 0\n", &s);
	ok(ret == -EPROTO, "a tab is not a separator");
	if (!ret)
		wpstat_snapshot_free(&s);
	ret = read_inodes("dev ino gen a\n8:1  1   1 0\n", &s);
	ok(ret == 0 && s.nrows == 1 && s.rows[0].gen == 1,
	   "runs of spaces separate one column");
	if (!ret)
		wpstat_snapshot_free(&s);
}

static void test_stalls(void)
{
	struct wpstat_stall_snapshot s;
	int ret;

	put("tgid comm dev ino gen cgroup stable_waits stable_ns subvol\n"
	    "42 a\\040b 8:1 12 0 7 3 1500 257\n");
	ret = wpstat_stalls_read(path, &s);
	ok(ret == 0 && s.nrows == 1 && s.cols.ncounters == 2, "one stall row");
	if (!ret) {
		ok(s.rows[0].tgid == 42 && !strcmp(s.rows[0].comm, "a b") &&
		   s.rows[0].cgroup == 7 && s.rows[0].file.ino == 12 &&
		   s.rows[0].file.val[1] == 1500 && s.rows[0].file.subvol == 257,
		   "stall row: tgid, unescaped comm, cgroup, counters, subvol");
		wpstat_stalls_free(&s);
	}
}

static void test_gone(void)
{
	struct wpstat_gone_snapshot s;
	int ret;

	put("dev inodes a b_ns\n"
	    "8:1 3 10 -\n"
	    "other 2 4 -\n"
	    "untracked - 7 -\n");
	ret = wpstat_gone_read(path, &s);
	ok(ret == 0 && s.nrows == 3 && s.cols.ncounters == 2, "gone: three rows");
	if (!ret) {
		ok(s.rows[0].kind == WPSTAT_GONE_DEV && s.rows[0].counts.major == 8 &&
		   s.rows[0].counts.minor == 1 && s.rows[0].inodes == 3 &&
		   s.rows[0].counts.val[0] == 10 && !s.rows[0].counts.avail[1] &&
		   s.rows[1].kind == WPSTAT_GONE_OTHER && s.rows[1].inodes == 2 &&
		   s.rows[2].kind == WPSTAT_GONE_UNTRACKED &&
		   s.rows[2].counts.val[0] == 7, "gone: dev, other and untracked rows");
		wpstat_gone_free(&s);
	}
	put("dev inodes a\nuntracked 5 7\n");
	ret = wpstat_gone_read(path, &s);
	ok(ret == -EPROTO, "gone: untracked with an inode count is refused");
	if (!ret)
		wpstat_gone_free(&s);
}

static void test_delta(void)
{
	struct wpstat_snapshot cols = { .ncounters = 3,
					.names = { "a", "b", "c_max_ns" },
					.max = { false, false, true } };
	struct wpstat_row b = { .val = { 10, 20, 9 }, .avail = { 1, 1, 1 } };
	struct wpstat_row a = { .val = { 15, 20, 4 }, .avail = { 1, 1, 1 } };
	struct wpstat_row d;
	int bcol[] = { 0, 1, 2 };

	ok(wpstat_row_delta(&cols, &a, &b, bcol, &d) &&
	   d.val[0] == 5 && d.val[1] == 0 && d.val[2] == 4,
	   "delta: sums subtract, a maximum keeps its value after");
	a.val[0] = 3;	/* went down: a reset, so all of the row is new */
	a.val[1] = 25;
	ok(wpstat_row_delta(&cols, &a, &b, bcol, &d) &&
	   d.val[0] == 3 && d.val[1] == 25, "delta: a counter that went down restarts the row");
	a = b;
	a.val[2] = 99;
	ok(!wpstat_row_delta(&cols, &a, &b, bcol, &d),
	   "delta: a changed maximum alone is no change");
}

/* A counter's kind is the module's lists', never its name's suffix. */
static void test_kind(void)
{
	struct wpstat_stall_snapshot st;
	struct wpstat_snapshot s;
	int ret;

	ok(wpstat_counter_is_max("mkwrite_max_ns") &&
	   wpstat_counter_is_max("bdp_pause_max_ns") &&
	   !wpstat_counter_is_max("mkwrite_ns") &&
	   !wpstat_counter_is_max("mkwrite_wp"),
	   "kind: the inode counters' from wpstat_counters.def");
	ok(wpstat_counter_is_max("fault_max_ns") &&
	   wpstat_counter_is_max("pause_max_ns") &&
	   !wpstat_counter_is_max("pause_ns") &&
	   !wpstat_counter_is_max("fault_first"),
	   "kind: the stall fields' from wpstat_stalls.def");
	ok(!wpstat_counter_is_max("newer_max_ns") &&
	   !wpstat_counter_is_max("newer_max"),
	   "kind: a column in neither list is a sum, whatever its suffix");
	ret = read_inodes("dev ino gen mkwrite_wp mkwrite_max_ns x_max_ns\n"
			  "8:1 12 3 5 6 7\n", &s);
	ok(ret == 0 && !s.max[0] && s.max[1] && !s.max[2],
	   "kind: the inodes reader keeps it per column");
	if (!ret)
		wpstat_snapshot_free(&s);
	put("tgid comm dev ino gen cgroup fault_wp fault_max_ns\n"
	    "1 a 8:1 12 3 0 5 6\n");
	ret = wpstat_stalls_read(path, &st);
	ok(ret == 0 && !st.cols.max[0] && st.cols.max[1],
	   "kind: the stalls reader keeps it per column");
	if (!ret)
		wpstat_stalls_free(&st);
}

static void test_fmt(void)
{
	char buf[32];

	ok(!strcmp(wpstat_fmt_duration(buf, sizeof(buf), 0), "0") &&
	   !strcmp(wpstat_fmt_duration(buf, sizeof(buf), 850), "850ns") &&
	   !strcmp(wpstat_fmt_duration(buf, sizeof(buf), 12345), "12.3us") &&
	   !strcmp(wpstat_fmt_duration(buf, sizeof(buf), 4560000), "4.56ms") &&
	   !strcmp(wpstat_fmt_duration(buf, sizeof(buf), 1230000000), "1.23s"),
	   "durations: 0, 850ns, 12.3us, 4.56ms, 1.23s");
	ok(!strcmp(wpstat_fmt_bytes(buf, sizeof(buf), 262144), "256KiB") &&
	   !strcmp(wpstat_fmt_bytes(buf, sizeof(buf), 1536), "1.5KiB"),
	   "sizes: 256KiB, 1.5KiB");
}

/* overlayfs: the real file is found through mountinfo's options. */
static void test_overlay_options(void)
{
	static const char opts[] =
		"rw,lowerdir=/l\\:1:/l2::/data,upperdir=/u\\054x,workdir=/w,uuid=on";
	char buf[256], list[256], *layers[4];
	size_t n;

	ok(!wpstat_mount_option(opts, "upperdir", buf, sizeof(buf)) &&
	   !strcmp(buf, "/u,x"), "upperdir: \\054 unescaped to ','");
	ok(!wpstat_mount_option(opts, "workdir", buf, sizeof(buf)) &&
	   !strcmp(buf, "/w"), "workdir");
	ok(wpstat_mount_option(opts, "upper", buf, sizeof(buf)) == -ENOENT &&
	   wpstat_mount_option(opts, "index", buf, sizeof(buf)) == -ENOENT,
	   "an option's prefix or a missing option: -ENOENT");
	ok(!wpstat_mount_option(opts, "lowerdir", list, sizeof(list)) &&
	   !strcmp(list, "/l\\:1:/l2::/data"), "lowerdir kept raw");
	n = wpstat_ovl_split_layers(list, layers, 4);
	ok(n == 3 && !strcmp(layers[0], "/l:1") && !strcmp(layers[1], "/l2") &&
	   !strcmp(layers[2], "/data"),
	   "layers split at ':' and '::', an escaped ':' kept");
	strcpy(list, "/a:/b:/c");
	ok(wpstat_ovl_split_layers(list, layers, 2) == 2 &&
	   !strcmp(layers[1], "/b"), "at most @max layers");
}

int main(void)
{
	int fd = mkstemp(path);

	if (fd < 0) {
		perror("mkstemp");
		return 1;
	}
	close(fd);
	test_inodes();
	test_stalls();
	test_gone();
	test_delta();
	test_kind();
	test_fmt();
	test_overlay_options();
	unlink(path);
	printf("1..%d\n", ntest);
	return nfail != 0;
}
