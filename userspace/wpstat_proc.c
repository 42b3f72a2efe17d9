// SPDX-License-Identifier: GPL-2.0
/* Parser for /proc/wpstat/inodes; see wpstat_proc.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "wpstat_proc.h"

static int parse_header(char *line, struct wpstat_snapshot *s)
{
	static const char *const fixed[] = { "dev", "ino", "gen" };
	char *save = NULL, *tok;
	int i = 0;

	for (tok = strtok_r(line, " \n", &save); tok;
	     tok = strtok_r(NULL, " \n", &save), i++) {
		if (i < 3) {
			if (strcmp(tok, fixed[i]))
				return -EPROTO;
			continue;
		}
		if (s->ncounters == WPSTAT_MAX_COUNTERS)
			return -EPROTO;
		s->names[s->ncounters] = strdup(tok);
		if (!s->names[s->ncounters])
			return -ENOMEM;
		s->ncounters++;
	}
	return i < 3 ? -EPROTO : 0;
}

static int parse_row(char *line, const struct wpstat_snapshot *s,
		     struct wpstat_row *r)
{
	char *save = NULL, *tok, *end;
	int i;

	memset(r, 0, sizeof(*r));
	tok = strtok_r(line, " \n", &save);
	if (!tok || sscanf(tok, "%u:%u", &r->major, &r->minor) != 2)
		return -EPROTO;
	tok = strtok_r(NULL, " \n", &save);
	if (!tok)
		return -EPROTO;
	r->ino = strtoull(tok, &end, 10);
	if (*end)
		return -EPROTO;
	tok = strtok_r(NULL, " \n", &save);
	if (!tok)
		return -EPROTO;
	r->gen = strtoul(tok, &end, 10);
	if (*end)
		return -EPROTO;
	for (i = 0; i < s->ncounters; i++) {
		tok = strtok_r(NULL, " \n", &save);
		if (!tok)
			return -EPROTO;
		if (!strcmp(tok, "-"))
			continue;
		r->val[i] = strtoull(tok, &end, 10);
		if (*end)
			return -EPROTO;
		r->avail[i] = true;
	}
	return strtok_r(NULL, " \n", &save) ? -EPROTO : 0;
}

int wpstat_snapshot_read(const char *path, struct wpstat_snapshot *s)
{
	size_t cap = 0, n = 0;
	char *line = NULL;
	FILE *f;
	int ret = 0;

	memset(s, 0, sizeof(*s));
	f = fopen(path ? path : WPSTAT_INODES_PATH, "re");
	if (!f)
		return -errno;
	if (getline(&line, &n, f) < 0) {
		ret = -EPROTO;
		goto out;
	}
	ret = parse_header(line, s);
	while (!ret && getline(&line, &n, f) > 0) {
		if (s->nrows == cap) {
			struct wpstat_row *rows;

			cap = cap ? 2 * cap : 64;
			rows = realloc(s->rows, cap * sizeof(*rows));
			if (!rows) {
				ret = -ENOMEM;
				break;
			}
			s->rows = rows;
		}
		ret = parse_row(line, s, &s->rows[s->nrows]);
		if (!ret)
			s->nrows++;
	}
out:
	free(line);
	fclose(f);
	if (ret)
		wpstat_snapshot_free(s);
	return ret;
}

void wpstat_snapshot_free(struct wpstat_snapshot *s)
{
	int i;

	for (i = 0; i < s->ncounters; i++)
		free(s->names[i]);
	free(s->rows);
	memset(s, 0, sizeof(*s));
}

int wpstat_counter_index(const struct wpstat_snapshot *s, const char *name)
{
	int i;

	for (i = 0; i < s->ncounters; i++)
		if (!strcmp(s->names[i], name))
			return i;
	return -1;
}

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

int wpstat_fd_key(int fd, struct wpstat_file_key *key)
{
	struct stat st;
	int gen = 0;

	if (fstat(fd, &st))
		return -errno;
	sb_dev_of(fd, &st, &key->major, &key->minor);
	key->ino = st.st_ino;
	key->have_gen = ioctl(fd, FS_IOC_GETVERSION, &gen) == 0;
	key->gen = gen;
	return 0;
}

int wpstat_path_key(const char *path, struct wpstat_file_key *key)
{
	int fd, ret;

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
 * the module appends rows in the order it first sees them.
 */
const struct wpstat_row *wpstat_snapshot_find_key(const struct wpstat_snapshot *s,
						  const struct wpstat_file_key *key)
{
	const struct wpstat_row *found = NULL;
	size_t i;

	for (i = 0; i < s->nrows; i++) {
		const struct wpstat_row *r = &s->rows[i];

		if (r->major != key->major || r->minor != key->minor ||
		    r->ino != key->ino)
			continue;
		if (key->have_gen && r->gen != key->gen)
			continue;
		found = r;
	}
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

int wpstat_kv_read(const char *path, struct wpstat_kvlist *l)
{
	size_t cap = 0, n = 0;
	char *line = NULL;
	int ret = 0;
	FILE *f;

	memset(l, 0, sizeof(*l));
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &n, f) > 0) {
		char *name, *value, *end;

		line[strcspn(line, "\n")] = '\0';
		name = line + strspn(line, " \t");
		if (!*name || *name == '#')
			continue;
		value = name + strcspn(name, " \t");
		if (*value)
			*value++ = '\0';
		value += strspn(value, " \t");
		end = value + strlen(value);
		while (end > value && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		if (l->n == cap) {
			struct wpstat_kv *kv;

			cap = cap ? 2 * cap : 32;
			kv = realloc(l->kv, cap * sizeof(*kv));
			if (!kv) {
				ret = -ENOMEM;
				break;
			}
			l->kv = kv;
		}
		l->kv[l->n].name = strdup(name);
		l->kv[l->n].value = strdup(value);
		if (!l->kv[l->n].name || !l->kv[l->n].value) {
			free(l->kv[l->n].name);
			free(l->kv[l->n].value);
			ret = -ENOMEM;
			break;
		}
		l->n++;
	}
	if (!ret && ferror(f))
		ret = -EIO;
	free(line);
	fclose(f);
	if (ret)
		wpstat_kv_free(l);
	return ret;
}

void wpstat_kv_free(struct wpstat_kvlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->kv[i].name);
		free(l->kv[i].value);
	}
	free(l->kv);
	memset(l, 0, sizeof(*l));
}

const char *wpstat_kv_get(const struct wpstat_kvlist *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->kv[i].name, name))
			return l->kv[i].value;
	return NULL;
}
