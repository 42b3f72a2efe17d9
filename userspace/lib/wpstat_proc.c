// SPDX-License-Identifier: GPL-2.0
/* Parser for /proc/wpstat/inodes; see wpstat_proc.h.  File keys: file_key.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wpstat_proc.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static const char *const inodes_fixed[] = { "dev", "ino", "gen" };
/*
 * The key's later columns, from the module's list, each where the list
 * put it: struct wpstat_row has a field for each, so the parser knows
 * them all (the assertion fails on one it would take for a counter).
 */
static const char *const later_key_columns[] = {
#define WPSTAT_COUNTER(...)
#define WPSTAT_KEY_COLUMN(id, name, ...)	#name,
#include "wpstat_counters.def"
#undef WPSTAT_KEY_COLUMN
#undef WPSTAT_COUNTER
};
_Static_assert(ARRAY_SIZE(later_key_columns) == 1,
	       "parse_counters() reads subvol, and no other key column");
static const char *const stalls_fixed[] = {
	"tgid", "comm", "dev", "ino", "gen", "cgroup",
};

/*
 * The next token of a line split at spaces and newlines, as strtok_r(@s,
 * " \n", @save) would return it.  A full table has 65,536 rows of ~30
 * columns: strtok_r and strtoull were two thirds of `wpstat show`'s time.
 */
static char *next_token(char *s, char **save)
{
	char *tok = s ? s : *save;

	while (*tok == ' ' || *tok == '\n')
		tok++;
	if (!*tok) {
		*save = tok;
		return NULL;
	}
	s = tok;
	while (*s && *s != ' ' && *s != '\n')
		s++;
	if (*s)
		*s++ = '\0';
	*save = s;
	return tok;
}

/*
 * A header line: the @nfixed columns in @fixed, in that order, then the
 * counter names, kept in @s.
 */
static int parse_header(char *line, const char *const *fixed, int nfixed,
			struct wpstat_snapshot *s)
{
	char *save = NULL, *tok;
	int i = 0;

	s->subvol_at = -1;
	for (tok = next_token(line, &save); tok;
	     tok = next_token(NULL, &save), i++) {
		if (i < nfixed) {
			if (strcmp(tok, fixed[i]))
				return -EPROTO;
			continue;
		}
		if (!strcmp(tok, later_key_columns[0]) && s->subvol_at < 0) {
			s->subvol_at = s->ncounters;
			continue;
		}
		if (s->ncounters == WPSTAT_MAX_COUNTERS)
			return -EPROTO;
		s->names[s->ncounters] = strdup(tok);
		if (!s->names[s->ncounters])
			return -ENOMEM;
		s->max[s->ncounters] = wpstat_counter_is_max(tok);
		s->ncounters++;
	}
	return i < nfixed ? -EPROTO : 0;
}

/* A decimal number at @p, at most @max; *@end is set past its digits. */
static int parse_decimal(const char *p, uint64_t max, uint64_t *v,
			 const char **end)
{
	uint64_t x = 0;

	if (*p < '0' || *p > '9')
		return -EPROTO;
	for (; *p >= '0' && *p <= '9'; p++)
		if (__builtin_mul_overflow(x, 10, &x) ||
		    __builtin_add_overflow(x, (uint64_t)(*p - '0'), &x))
			return -EPROTO;
	if (x > max)
		return -EPROTO;
	*v = x;
	*end = p;
	return 0;
}

/* A decimal number that is the whole token, at most @max. */
static int parse_u64(const char *tok, uint64_t max, uint64_t *v)
{
	const char *end;

	if (!tok || parse_decimal(tok, max, v, &end) || *end)
		return -EPROTO;
	return 0;
}

/* "MAJ:MIN", the whole token, into @r's major and minor. */
static int parse_dev_token(const char *tok, struct wpstat_row *r)
{
	const char *end;
	uint64_t v;

	if (!tok || parse_decimal(tok, UINT32_MAX, &v, &end) || *end != ':')
		return -EPROTO;
	r->major = v;
	if (parse_u64(end + 1, UINT32_MAX, &v))
		return -EPROTO;
	r->minor = v;
	return 0;
}

/* "MAJ:MIN ino gen" into @r: @tok, then the next two tokens. */
static int parse_file_key(const char *tok, char **save, struct wpstat_row *r)
{
	uint64_t v;

	if (parse_dev_token(tok, r))
		return -EPROTO;
	if (parse_u64(next_token(NULL, save), UINT64_MAX, &r->ino))
		return -EPROTO;
	if (parse_u64(next_token(NULL, save), UINT32_MAX, &v))
		return -EPROTO;
	r->gen = v;
	return 0;
}

/*
 * The counter columns, the rest of the line: a number or "-" each, and
 * the subvolume where the header has it.
 */
static int parse_counters(char **save, const struct wpstat_snapshot *s,
			  struct wpstat_row *r)
{
	char *tok;
	int i;

	for (i = 0; i <= s->ncounters; i++) {
		if (i == s->subvol_at &&
		    parse_u64(next_token(NULL, save), UINT64_MAX, &r->subvol))
			return -EPROTO;
		if (i == s->ncounters)
			break;
		tok = next_token(NULL, save);
		if (!tok)
			return -EPROTO;
		if (!strcmp(tok, "-"))
			continue;
		if (parse_u64(tok, UINT64_MAX, &r->val[i]))
			return -EPROTO;
		r->avail[i] = true;
	}
	return next_token(NULL, save) ? -EPROTO : 0;
}

static int parse_row(char *line, const struct wpstat_snapshot *s, void *row)
{
	struct wpstat_row *r = row;
	char *save = NULL, *tok;
	int ret;

	memset(r, 0, sizeof(*r));
	tok = next_token(line, &save);
	ret = parse_file_key(tok, &save, r);
	return ret ? ret : parse_counters(&save, s, r);
}

/*
 * A table file: a header line naming the fixed columns and the counters
 * (into @cols), then one row per line, each parsed by @parse into the next
 * of *@rows (@size bytes each).  *@rows and *@nrows are set, on error too,
 * for the caller to free.  @read_errors: a read error after the header is
 * an error (-EIO), not the end of the table.
 */
static int read_table(const char *path, const char *const *fixed,
		      size_t nfixed, struct wpstat_snapshot *cols,
		      void **rows, size_t *nrows, size_t size,
		      int (*parse)(char *line, const struct wpstat_snapshot *cols,
				   void *row),
		      bool read_errors)
{
	size_t cap = 0, n = 0;
	char *line = NULL, *grown;
	FILE *f;
	int ret = 0;

	*rows = NULL;
	*nrows = 0;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (getline(&line, &n, f) < 0) {
		ret = -EPROTO;
		goto out;
	}
	ret = parse_header(line, fixed, nfixed, cols);
	while (!ret && getline(&line, &n, f) > 0) {
		if (*nrows == cap) {
			cap = cap ? 2 * cap : 64;
			grown = realloc(*rows, cap * size);
			if (!grown) {
				ret = -ENOMEM;
				break;
			}
			*rows = grown;
		}
		ret = parse(line, cols, (char *)*rows + *nrows * size);
		if (!ret)
			(*nrows)++;
	}
	if (read_errors && !ret && ferror(f))
		ret = -EIO;
out:
	free(line);
	fclose(f);
	return ret;
}

int wpstat_snapshot_read(const char *path, struct wpstat_snapshot *s)
{
	void *rows;
	int ret;

	memset(s, 0, sizeof(*s));
	ret = read_table(path ? path : WPSTAT_INODES_PATH, inodes_fixed,
			 ARRAY_SIZE(inodes_fixed), s, &rows, &s->nrows,
			 sizeof(*s->rows), parse_row, false);
	s->rows = rows;
	if (ret)
		wpstat_snapshot_free(s);
	return ret;
}

/*
 * seq_escape() writes the bytes it escapes as \ooo (three octal digits).
 * A backslash not followed by three octal digits is kept as it is.
 */
void wpstat_unescape_octal(char *dst, size_t len, const char *src)
{
	size_t n = 0;

	if (!len)
		return;
	while (*src && n + 1 < len) {
		if (src[0] == '\\' && src[1] >= '0' && src[1] <= '3' &&
		    src[2] >= '0' && src[2] <= '7' &&
		    src[3] >= '0' && src[3] <= '7') {
			dst[n++] = (src[1] - '0') << 6 | (src[2] - '0') << 3 |
				   (src[3] - '0');
			src += 4;
		} else {
			dst[n++] = *src++;
		}
	}
	dst[n] = '\0';
}

/* "tgid comm dev ino gen cgroup" and the counters. */
static int parse_stall_row(char *line, const struct wpstat_snapshot *cols,
			   void *row)
{
	struct wpstat_stall_row *r = row;
	char *save = NULL, *tok;
	uint64_t v;
	int ret;

	memset(r, 0, sizeof(*r));
	if (parse_u64(next_token(line, &save), UINT32_MAX, &v))
		return -EPROTO;
	r->tgid = v;
	tok = next_token(NULL, &save);
	if (!tok)
		return -EPROTO;
	wpstat_unescape_octal(r->comm, sizeof(r->comm), tok);
	tok = next_token(NULL, &save);
	ret = parse_file_key(tok, &save, &r->file);
	if (ret)
		return ret;
	if (parse_u64(next_token(NULL, &save), UINT64_MAX, &r->cgroup))
		return -EPROTO;
	return parse_counters(&save, cols, &r->file);
}

int wpstat_stalls_read(const char *path, struct wpstat_stall_snapshot *s)
{
	void *rows;
	int ret;

	memset(s, 0, sizeof(*s));
	ret = read_table(path ? path : WPSTAT_STALLS_PATH, stalls_fixed,
			 ARRAY_SIZE(stalls_fixed), &s->cols, &rows, &s->nrows,
			 sizeof(*s->rows), parse_stall_row, true);
	s->rows = rows;
	if (ret)
		wpstat_stalls_free(s);
	return ret;
}

void wpstat_stalls_free(struct wpstat_stall_snapshot *s)
{
	wpstat_snapshot_free(&s->cols);
	free(s->rows);
	memset(s, 0, sizeof(*s));
}

static const char *const gone_fixed[] = { "dev", "inodes" };

/* "MAJ:MIN N", "other N" or "untracked -", then the counters. */
static int parse_gone_row(char *line, const struct wpstat_snapshot *cols,
			  void *row)
{
	struct wpstat_gone_row *r = row;
	char *save = NULL, *tok, *num;

	memset(r, 0, sizeof(*r));
	tok = next_token(line, &save);
	num = next_token(NULL, &save);
	if (!tok || !num)
		return -EPROTO;
	if (!strcmp(tok, "untracked")) {
		r->kind = WPSTAT_GONE_UNTRACKED;
		if (strcmp(num, "-"))
			return -EPROTO;
	} else {
		if (!strcmp(tok, "other")) {
			r->kind = WPSTAT_GONE_OTHER;
		} else {
			r->kind = WPSTAT_GONE_DEV;
			if (parse_dev_token(tok, &r->counts))
				return -EPROTO;
		}
		if (parse_u64(num, UINT64_MAX, &r->inodes))
			return -EPROTO;
	}
	return parse_counters(&save, cols, &r->counts);
}

int wpstat_gone_read(const char *path, struct wpstat_gone_snapshot *s)
{
	void *rows;
	int ret;

	memset(s, 0, sizeof(*s));
	ret = read_table(path ? path : WPSTAT_GONE_PATH, gone_fixed,
			 ARRAY_SIZE(gone_fixed), &s->cols, &rows, &s->nrows,
			 sizeof(*s->rows), parse_gone_row, true);
	s->rows = rows;
	if (ret)
		wpstat_gone_free(s);
	return ret;
}

void wpstat_gone_free(struct wpstat_gone_snapshot *s)
{
	wpstat_snapshot_free(&s->cols);
	free(s->rows);
	memset(s, 0, sizeof(*s));
}

/* Every column the module's lists name, and whether it is a maximum. */
#define WPSTAT_KIND_SUM	false
#define WPSTAT_KIND_MAX	true
static const struct {
	const char *name;
	bool max;
} counter_kinds[] = {
#define WPSTAT_COUNTER(id, name, kind, ...)	{ #name, WPSTAT_KIND_##kind },
#include "wpstat_counters.def"
#undef WPSTAT_COUNTER
#define WPSTAT_STALL(id, name, like, kind, ...)	{ #name, WPSTAT_KIND_##kind },
#include "wpstat_stalls.def"
#undef WPSTAT_STALL
};

/*
 * A header with more than WPSTAT_MAX_COUNTERS names reads as -EPROTO:
 * the module's own lists must fit, each table's.
 */
enum {
#define WPSTAT_COUNTER(id, ...) LIB_WPC_##id,
#include "wpstat_counters.def"
#undef WPSTAT_COUNTER
	LIB_WPC_NR
};
enum {
#define WPSTAT_STALL(id, ...) LIB_WPS_##id,
#include "wpstat_stalls.def"
#undef WPSTAT_STALL
	LIB_WPS_NR
};
_Static_assert(LIB_WPC_NR <= WPSTAT_MAX_COUNTERS,
	       "wpstat_counters.def has more counters than WPSTAT_MAX_COUNTERS");
_Static_assert(LIB_WPS_NR <= WPSTAT_MAX_COUNTERS,
	       "wpstat_stalls.def has more columns than WPSTAT_MAX_COUNTERS");

bool wpstat_counter_is_max(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(counter_kinds); i++)
		if (!strcmp(counter_kinds[i].name, name))
			return counter_kinds[i].max;
	return false;
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
