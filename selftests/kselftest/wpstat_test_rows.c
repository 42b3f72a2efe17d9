// SPDX-License-Identifier: GPL-2.0
/*
 * The kselftests' readers of /proc/wpstat/stalls and of the accounting
 * of rows gone (exited processes' and recycled rows' sums).
 * Part of the shared helpers (wpstat_test.h), linked into
 * every test binary that uses them (libwpstat_test.a).
 */
#include "wpstat_test.h"

/* struct stall_row's causes, in its order and the file's. */
static const char *const stall_names[] = {
#define WPSTAT_STALL(id, name, ...)	#name,
#include "wpstat_stalls.def"
#undef WPSTAT_STALL
};
#define STALL_N	(sizeof(stall_names) / sizeof(stall_names[0]))

/* The key's later column of the stalls file, as the module's list names it. */
static const char *const stall_subvol_name[] = {
#define WPSTAT_STALL(...)
#define WPSTAT_KEY_COLUMN(id, name, ...)	#name,
#include "wpstat_stalls.def"
#undef WPSTAT_KEY_COLUMN
#undef WPSTAT_STALL
};
_Static_assert(sizeof(stall_subvol_name) == sizeof(char *),
	       "read_stalls() reads subvol, and no other key column");
#define STALL_KEY_COLS	6

/* ---- accounting ----------------------------------------------------------- */

/* Counts add up; a maximum is the largest of its parts. */
static void account_merge(int64_t *acc, int i, int64_t v)
{
	if (!wps_is_max(i))
		*acc += v;
	else if (v > *acc)
		*acc = v;
}

/* The counter columns of /proc/wpstat/gone ("dev inodes c..."), merged. */
static int account_read_gone(struct wps_account *a)
{
	static char buf[1 << 16];
	char *line, *save = NULL, *tok, *s2;
	int col[WPS_N + 2], ncol = 0, i;

	if (wps_slurp(WPSTAT_GONE_PATH, buf, sizeof(buf)) <= 0)
		return -1;
	line = strtok_r(buf, "\n", &save);
	for (tok = strtok_r(line, " ", &s2); tok; tok = strtok_r(NULL, " ", &s2)) {
		col[ncol] = -1;
		for (i = 0; i < (int)WPS_N; i++)
			if (!strcmp(tok, wps_names[i]))
				col[ncol] = i;
		if (++ncol == WPS_N + 2)
			break;
	}
	while ((line = strtok_r(NULL, "\n", &save))) {
		int c = 0;

		for (tok = strtok_r(line, " ", &s2); tok && c < ncol;
		     tok = strtok_r(NULL, " ", &s2), c++) {
			if (c == 1 && strcmp(tok, "-"))
				a->gone_inodes += strtoll(tok, NULL, 10);
			if (c >= 2 && col[c] >= 0 && strcmp(tok, "-"))
				account_merge(&a->gone[col[c]], col[c],
					      strtoll(tok, NULL, 10));
		}
	}
	return 0;
}

int wps_read_account(struct wps_account *a)
{
	struct wpstat_snapshot s;
	int64_t swaps;
	size_t r;
	int i, tries;

	for (tries = 0; tries < 20; tries++) {
		memset(a, 0, sizeof(*a));
		swaps = wps_summary("table_swaps") + wps_summary("recycled_inodes");
		if (wpstat_snapshot_read(NULL, &s))
			return -1;
		for (r = 0; r < s.nrows; r++) {
			for (i = 0; i < (int)WPS_N; i++) {
				int c = wpstat_counter_index(&s, wps_names[i]);

				if (c >= 0 && s.rows[r].avail[c])
					account_merge(&a->rows[i], i,
						      s.rows[r].val[c]);
			}
		}
		a->nrows = s.nrows;
		wpstat_snapshot_free(&s);
		if (account_read_gone(a))
			return -1;
		for (i = 0; i < (int)WPS_N; i++)
			a->total[i] = wps_summary(wps_names[i]);
		if (wps_summary("table_swaps") + wps_summary("recycled_inodes") == swaps)
			return 0;
	}
	return -1;
}

int wps_account_check(const struct wps_account *a, char *why, size_t len)
{
	size_t used = 0;
	int i, bad = 0;

	for (i = 0; i < (int)WPS_N; i++) {
		int64_t parts = wps_is_max(i) ?
			(a->rows[i] > a->gone[i] ? a->rows[i] : a->gone[i]) :
			a->rows[i] + a->gone[i];

		if (a->total[i] < 0 || a->total[i] == parts)	/* <0: not at this level */
			continue;
		bad++;
		if (used < len)
			used += snprintf(why + used, len - used,
					 "%s: total %lld, rows %lld, gone + untracked %lld; ",
					 wps_names[i], (long long)a->total[i],
					 (long long)a->rows[i], (long long)a->gone[i]);
	}
	return bad;
}

/* tgid comm dev ino gen cgroup */

_Static_assert(sizeof(struct stall_row) -
	       __builtin_offsetof(struct stall_row, fault_first) ==
	       STALL_N * sizeof(int64_t),
	       "struct stall_row has a field per name in stall_names[]");

int read_stalls(const char *path, struct stall_row *rows, int max)
{
	static char buf[1 << 20];
	char *line, *save = NULL, *tok, *s2;
	int col[64], ncol = 0, n = 0, c, next = 0, subvol = -1;
	struct wpstat_file_key key;

	/* The superblock's device: on btrfs stat()'s st_dev is not it. */
	if (path && wpstat_path_key(path, &key))
		return -1;
	if (wps_slurp(STALLS_PATH, buf, sizeof(buf)) <= 0)
		return -1;
	line = strtok_r(buf, "\n", &save);
	/* The published start of the header, then the causes by name. */
	if (!line || strncmp(line, "tgid comm dev ino gen cgroup ", 29))
		return -1;
	for (tok = strtok_r(line, " ", &s2); tok && ncol < 64;
	     tok = strtok_r(NULL, " ", &s2), ncol++) {
		col[ncol] = -1;
		if (ncol < STALL_KEY_COLS)
			continue;
		/*
		 * Exactly stall_names[], in order: the copy agrees with
		 * kmod's; and the key's subvol where the list appended it.
		 */
		if (!strcmp(tok, stall_subvol_name[0]) && subvol < 0) {
			subvol = ncol;
			continue;
		}
		if (next >= (int)STALL_N || strcmp(tok, stall_names[next]))
			return -1;
		col[ncol] = next++;
	}
	if (next != (int)STALL_N || subvol < 0)
		return -1;
	while ((line = strtok_r(NULL, "\n", &save)) && n < max) {
		struct stall_row r = { 0 };
		int64_t *v = &r.fault_first;

		for (c = 0, tok = strtok_r(line, " ", &s2); tok && c < ncol;
		     tok = strtok_r(NULL, " ", &s2), c++) {
			if (c == 0)
				r.tgid = atol(tok);
			else if (c == 1)
				snprintf(r.comm, sizeof(r.comm), "%s", tok);
			else if (c == 2)
				sscanf(tok, "%u:%u", &r.major, &r.minor);
			else if (c == 3)
				r.ino = strtoull(tok, NULL, 10);
			else if (c == 4)
				r.gen = strtoul(tok, NULL, 10);
			else if (c == subvol)
				r.subvol = strtoull(tok, NULL, 10);
			else if (col[c] >= 0)
				v[col[c]] = strcmp(tok, "-") ? strtoll(tok, NULL, 10) : -1;
		}
		/* A deleted file's row may share its inode number. */
		if (path && !wpstat_row_is_file(&(struct wpstat_row){
				.major = r.major, .minor = r.minor,
				.ino = r.ino, .gen = r.gen,
				.subvol = r.subvol }, &key))
			continue;
		rows[n++] = r;
	}
	return n;
}

int stall_of(const char *path, long tgid, struct stall_row *out)
{
	struct stall_row rows[64];
	int n = read_stalls(path, rows, 64), i, found = 0;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < n; i++) {
		if (rows[i].tgid == tgid) {
			*out = rows[i];
			found++;
		}
	}
	return n < 0 ? -1 : found;
}
