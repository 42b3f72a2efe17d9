// SPDX-License-Identifier: GPL-2.0
#include "wpstat_cli.h"

/* ---- file lists: rows to print, with their values and paths ------------- */

void file_list_free(struct file_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->rows[i].path);
	free(l->rows);
	free(l->deltas);
	memset(l, 0, sizeof(*l));
}

static int row_ptr_cmp(const void *a, const void *b)
{
	return wpstat_row_key_cmp(*(const struct wpstat_row *const *)a,
		       *(const struct wpstat_row *const *)b);
}

/*
 * Every row of @after as it is (@before NULL), or only the rows that
 * changed since @before, with their change.  Rows are matched on dev,
 * inode and generation; a row new since @before counts from zero.
 */
int file_list_build(const struct wpstat_snapshot *before,
		    const struct wpstat_snapshot *after,
		    struct file_list *l)
{
	const struct wpstat_row **index = NULL, **prev = NULL;
	int bcol[WPSTAT_MAX_COUNTERS];
	struct wpstat_row scratch;
	size_t i, nchanged = 0;
	int pass;

	memset(l, 0, sizeof(*l));
	l->snap = after;
	if (!before) {
		l->rows = calloc(after->nrows ? after->nrows : 1,
				 sizeof(*l->rows));
		if (!l->rows)
			return -ENOMEM;
		for (i = 0; i < after->nrows; i++) {
			l->rows[i].row = &after->rows[i];
			l->rows[i].val = after->rows[i].val;
			l->rows[i].avail = after->rows[i].avail;
		}
		l->n = after->nrows;
		return 0;
	}

	index = malloc((before->nrows ? before->nrows : 1) * sizeof(*index));
	prev = calloc(after->nrows ? after->nrows : 1, sizeof(*prev));
	if (!index || !prev)
		goto nomem;
	for (i = 0; i < before->nrows; i++)
		index[i] = &before->rows[i];
	qsort(index, before->nrows, sizeof(*index), row_ptr_cmp);
	for (i = 0; i < after->nrows; i++) {
		const struct wpstat_row *a = &after->rows[i];
		const struct wpstat_row **hit;

		hit = bsearch(&a, index, before->nrows, sizeof(*index),
			      row_ptr_cmp);
		prev[i] = hit ? *hit : NULL;
	}
	/* Columns by name: a reloaded module may have others. */
	wpstat_column_map(after, before, bcol);

	/* Count the changed rows, then store just those. */
	for (pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			l->rows = calloc(nchanged ? nchanged : 1,
					 sizeof(*l->rows));
			l->deltas = calloc(nchanged ? nchanged : 1,
					   sizeof(*l->deltas));
			if (!l->rows || !l->deltas)
				goto nomem;
		}
		for (i = 0; i < after->nrows; i++) {
			struct wpstat_row *d;

			if (!wpstat_row_delta(after, &after->rows[i], prev[i],
					      bcol, &scratch))
				continue;
			if (!pass) {
				nchanged++;
				continue;
			}
			d = &l->deltas[l->n];
			*d = scratch;
			l->rows[l->n].row = &after->rows[i];
			l->rows[l->n].val = d->val;
			l->rows[l->n].avail = d->avail;
			l->n++;
		}
	}
	free(index);
	free(prev);
	return 0;
nomem:
	free(index);
	free(prev);
	free(l->rows);
	free(l->deltas);
	memset(l, 0, sizeof(*l));
	return -ENOMEM;
}

/* Field name -> column (counter index, or SORT_*), or a usage error. */
int parse_sort_field(const struct wpstat_snapshot *s,
		     const char *field, int *col)
{
	static const char *const fixed[] = { "dev", "ino", "gen" };
	char valid[1024];
	size_t len = 0;
	int i;

	for (i = 0; i < (int)ARRAY_SIZE(fixed); i++) {
		if (!strcmp(field, fixed[i])) {
			*col = -1 - i;
			return 0;
		}
	}
	*col = wpstat_counter_index(s, field);
	if (*col >= 0)
		return 0;
	valid[0] = '\0';
	for (i = 0; i < (int)ARRAY_SIZE(fixed) + s->ncounters; i++) {
		const char *name = i < (int)ARRAY_SIZE(fixed) ? fixed[i] :
				   s->names[i - ARRAY_SIZE(fixed)];

		if (len < sizeof(valid))
			len += snprintf(valid + len, sizeof(valid) - len,
					"%s%s", i ? ", " : "", name);
	}
	return usage_error("unknown field '%s' (valid: %s)", field, valid);
}

/*
 * Counters sort largest first, with unavailable ones last; dev, ino and
 * gen sort ascending.  Ties go by dev, inode and generation.
 */
static int file_row_cmp(const void *pa, const void *pb, void *pcol)
{
	const struct file_row *a = pa, *b = pb;
	int col = *(const int *)pcol;

	if (col >= 0) {
		if (a->avail[col] != b->avail[col])
			return a->avail[col] ? -1 : 1;
		if (a->val[col] != b->val[col])
			return a->val[col] > b->val[col] ? -1 : 1;
	} else if (col == SORT_GEN && a->row->gen != b->row->gen) {
		return a->row->gen < b->row->gen ? -1 : 1;
	} else if (col == SORT_INO && a->row->ino != b->row->ino) {
		return a->row->ino < b->row->ino ? -1 : 1;
	}
	return wpstat_row_key_cmp(a->row, b->row);
}

void file_list_sort(struct file_list *l, int col)
{
	qsort_r(l->rows, l->n, sizeof(*l->rows), file_row_cmp, &col);
}

/* ---- resolving inodes to paths ------------------------------------------ */

/*
 * Rows without a path, sorted by (dev, ino), and the inode numbers alone
 * so that a directory walk can skip most files without opening them.
 */
struct resolver {
	struct file_row **by_key;
	size_t n;
	size_t unresolved;
	uint64_t *inos;
	size_t ninos;
};

static int file_row_ptr_cmp(const void *a, const void *b)
{
	return wpstat_row_key_cmp((*(struct file_row *const *)a)->row,
		       (*(struct file_row *const *)b)->row);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int resolver_init(struct resolver *r, struct file_row *rows, size_t n)
{
	size_t i, j;

	memset(r, 0, sizeof(*r));
	r->by_key = malloc((n ? n : 1) * sizeof(*r->by_key));
	r->inos = malloc((n ? n : 1) * sizeof(*r->inos));
	if (!r->by_key || !r->inos) {
		free(r->by_key);
		free(r->inos);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		if (rows[i].path)
			continue;
		r->by_key[r->n++] = &rows[i];
		r->inos[r->ninos++] = rows[i].row->ino;
	}
	r->unresolved = r->n;
	qsort(r->by_key, r->n, sizeof(*r->by_key), file_row_ptr_cmp);
	qsort(r->inos, r->ninos, sizeof(*r->inos), u64_cmp);
	for (i = j = 0; i < r->ninos; i++)	/* unique */
		if (!j || r->inos[j - 1] != r->inos[i])
			r->inos[j++] = r->inos[i];
	r->ninos = j;
	return 0;
}

static void resolver_free(struct resolver *r)
{
	free(r->by_key);
	free(r->inos);
	memset(r, 0, sizeof(*r));
}

static bool resolver_wants_ino(const struct resolver *r, uint64_t ino)
{
	return bsearch(&ino, r->inos, r->ninos, sizeof(ino), u64_cmp) != NULL;
}

/*
 * The row a file key names: dev, inode, generation and subvolume; without a
 * generation (tmpfs), the newest row for dev and inode, the one the module
 * appended last.  NULL if that row has a path already.
 */
static struct file_row *resolver_match(const struct resolver *r,
				       const struct wpstat_file_key *key)
{
	struct file_row *found = NULL;
	size_t lo = 0, hi = r->n;

	while (lo < hi) {	/* first row with (dev, ino) >= key */
		size_t mid = lo + (hi - lo) / 2;
		const struct wpstat_row *m = r->by_key[mid]->row;

		if (m->major < key->major ||
		    (m->major == key->major && (m->minor < key->minor ||
		     (m->minor == key->minor && m->ino < key->ino))))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < r->n; lo++) {
		struct file_row *f = r->by_key[lo];

		if (f->row->major != key->major || f->row->minor != key->minor ||
		    f->row->ino != key->ino)
			break;
		if (!wpstat_row_is_file(f->row, key))
			continue;
		if (key->have_gen)
			found = f;
		else if (!found || f->row > found->row)
			found = f;
	}
	return found && !found->path ? found : NULL;
}

static void resolver_assign(struct resolver *r, struct file_row *f,
			    const char *path)
{
	f->path = strdup(path);
	if (f->path)
		r->unresolved--;
}

/* A file named on a command line (run's arguments): only if it exists. */
static void resolve_named_file(struct resolver *r, const char *path)
{
	struct wpstat_file_key key;
	struct file_row *f;
	struct statx stx;
	char *abs;

	if (wpstat_statx_quiet(AT_FDCWD, path, 0, &stx) ||
	    !S_ISREG(stx.stx_mode) || !resolver_wants_ino(r, stx.stx_ino) ||
	    wpstat_path_key(path, &key))
		return;
	f = resolver_match(r, &key);
	if (!f)
		return;
	abs = realpath(path, NULL);
	resolver_assign(r, f, abs ? abs : path);
	free(abs);
}

/*
 * /proc/PID/maps names a mapped file by its superblock's s_dev and inode:
 * the module's own key, less the generation.  Where the path opens to the
 * same inode (here, or under the process's root), its generation is known.
 */
static void resolve_map_line(struct resolver *r, const char *pid, char *line)
{
	static const char deleted[] = " (deleted)";
	struct wpstat_file_key key = { 0 }, seen;
	unsigned long long ino;
	unsigned int maj, min;
	char alt[PATH_MAX + 32];
	struct file_row *f;
	char *path, *s, *d;
	size_t len;
	int pos = 0;

	if (sscanf(line, "%*x-%*x %*s %*x %x:%x %llu %n", &maj, &min, &ino,
		   &pos) != 3 || !pos || !ino)
		return;
	path = line + pos;
	path[strcspn(path, "\n")] = '\0';
	len = strlen(path);
	if (path[0] != '/' || (len > sizeof(deleted) - 1 &&
	    !strcmp(path + len - (sizeof(deleted) - 1), deleted)))
		return;
	if (!resolver_wants_ino(r, ino))
		return;
	for (s = d = path; *s; d++) {	/* seq_file_path() escapes '\n' */
		if (!strncmp(s, "\\012", 4)) {
			*d = '\n';
			s += 4;
		} else {
			*d = *s++;
		}
	}
	*d = '\0';

	key.major = maj;
	key.minor = min;
	key.ino = ino;
	if (!resolver_match(r, &key))
		return;
	snprintf(alt, sizeof(alt), "/proc/%s/root%s", pid, path);
	if ((!wpstat_path_key(path, &seen) || !wpstat_path_key(alt, &seen)) &&
	    seen.major == maj && seen.minor == min && seen.ino == ino)
		key = seen;
	f = resolver_match(r, &key);
	if (f)
		resolver_assign(r, f, path);
}

static void resolve_from_maps(struct resolver *r)
{
	char path[64], *line = NULL;
	struct dirent *de;
	size_t cap = 0;
	DIR *proc;

	proc = opendir("/proc");
	if (!proc)
		return;
	while (r->unresolved && (de = readdir(proc))) {
		FILE *maps;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (snprintf(path, sizeof(path), "/proc/%s/maps",
			     de->d_name) >= (int)sizeof(path))
			continue;
		maps = fopen(path, "re");
		if (!maps)
			continue;	/* gone, or not ours to read */
		while (r->unresolved && getline(&line, &cap, maps) > 0)
			resolve_map_line(r, de->d_name, line);
		fclose(maps);
	}
	free(line);
	closedir(proc);
}

/*
 * Walk the tree under @path (@len bytes of @path[PATH_MAX]) on device
 * @dev only, as nftw(FTW_PHYS | FTW_MOUNT) would, but never with stat(), which
 * writes a dirty NFS file back (wpstat_statx_quiet):
 * each regular file whose inode a row wants is keyed (wpstat_path_key:
 * through O_PATH on FUSE and NFS) and named by its path.
 */
static void resolve_walk(struct resolver *r, char *path, size_t len,
			 dev_t dev, int depth)
{
	struct dirent *de;
	DIR *dir;
	int dfd;

	if (depth > RESOLVE_MAX_DEPTH)
		return;
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dfd < 0)
		return;
	dir = fdopendir(dfd);
	if (!dir) {
		close(dfd);
		return;
	}
	while (r->unresolved && (de = readdir(dir))) {
		struct wpstat_file_key key;
		struct file_row *f;
		struct statx stx;
		size_t nlen = strlen(de->d_name);

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (de->d_type != DT_UNKNOWN && de->d_type != DT_REG &&
		    de->d_type != DT_DIR)
			continue;
		if (len + 1 + nlen >= PATH_MAX ||
		    wpstat_statx_quiet(dirfd(dir), de->d_name, AT_SYMLINK_NOFOLLOW, &stx) ||
		    makedev(stx.stx_dev_major, stx.stx_dev_minor) != dev)
			continue;
		path[len] = '/';
		memcpy(path + len + 1, de->d_name, nlen + 1);
		if (S_ISDIR(stx.stx_mode)) {
			resolve_walk(r, path, len + 1 + nlen, dev, depth + 1);
		} else if (S_ISREG(stx.stx_mode) &&
			   resolver_wants_ino(r, stx.stx_ino) &&
			   !wpstat_path_key(path, &key)) {
			f = resolver_match(r, &key);
			if (f)
				resolver_assign(r, f, path);
		}
		path[len] = '\0';
	}
	closedir(dir);
}

static void resolve_tree(struct resolver *r, const char *top)
{
	char path[PATH_MAX];
	struct statx stx;
	size_t len = strlen(top);

	if (len >= sizeof(path) || wpstat_statx_quiet(AT_FDCWD, top, AT_SYMLINK_NOFOLLOW, &stx))
		return;
	memcpy(path, top, len + 1);
	while (len > 1 && path[len - 1] == '/')
		path[--len] = '\0';
	if (S_ISDIR(stx.stx_mode))
		resolve_walk(r, path, len, makedev(stx.stx_dev_major,
						   stx.stx_dev_minor), 0);
}

/*
 * Give paths to the rows of @rows that have none, from: the files named
 * in @named (NULL-terminated, may be NULL), the files mapped by running
 * processes, and the trees under @dirs (each walked on its own filesystem).
 */
void resolve_paths(struct file_row *rows, size_t n, char *const *named,
		   char *const *dirs, size_t ndirs)
{
	struct resolver r;
	size_t i;

	if (resolver_init(&r, rows, n))
		return;		/* out of memory: stay with dev:ino */
	for (i = 0; named && named[i] && r.unresolved; i++) {
		const char *eq = strchr(named[i], '=');

		resolve_named_file(&r, named[i]);
		if (named[i][0] == '-' && eq)	/* --file=PATH */
			resolve_named_file(&r, eq + 1);
	}
	if (r.unresolved)
		resolve_from_maps(&r);
	for (i = 0; i < ndirs && r.unresolved; i++)
		resolve_tree(&r, dirs[i]);
	resolver_free(&r);
}

int check_resolve_dirs(char *const *dirs, size_t ndirs)
{
	struct stat st;
	size_t i;

	for (i = 0; i < ndirs; i++)
		if (stat(dirs[i], &st))
			return runtime_error("--resolve %s: %s", dirs[i],
					     strerror(errno));
	return 0;
}

static struct path_cache_entry *path_cache_find(struct path_cache *pc,
						const struct wpstat_row *key)
{
	size_t i;

	for (i = 0; i < pc->n; i++)
		if (!wpstat_row_key_cmp(&pc->e[i].key, key))
			return &pc->e[i];
	return NULL;
}

static void path_cache_add(struct path_cache *pc, const struct wpstat_row *key,
			   const char *path)
{
	struct path_cache_entry *e;

	if (pc->n == pc->cap) {
		size_t cap = pc->cap ? 2 * pc->cap : 64;

		e = realloc(pc->e, cap * sizeof(*e));
		if (!e)
			return;
		pc->e = e;
		pc->cap = cap;
	}
	e = &pc->e[pc->n++];
	memset(&e->key, 0, sizeof(e->key));
	e->key.major = key->major;
	e->key.minor = key->minor;
	e->key.ino = key->ino;
	e->key.gen = key->gen;
	e->key.subvol = key->subvol;
	e->path = path ? strdup(path) : NULL;
}

void path_cache_free(struct path_cache *pc)
{
	size_t i;

	for (i = 0; i < pc->n; i++)
		free(pc->e[i].path);
	free(pc->e);
	memset(pc, 0, sizeof(*pc));
}

void resolve_cached(struct path_cache *pc, struct file_row *rows,
		    size_t n, char *const *dirs, size_t ndirs)
{
	bool missing = false;
	size_t i;

	for (i = 0; i < n; i++) {
		struct path_cache_entry *e = path_cache_find(pc, rows[i].row);

		if (!e)
			missing = true;
		else if (e->path)
			rows[i].path = strdup(e->path);
	}
	if (!missing)
		return;
	resolve_paths(rows, n, NULL, dirs, ndirs);
	for (i = 0; i < n; i++)
		if (!path_cache_find(pc, rows[i].row))
			path_cache_add(pc, rows[i].row, rows[i].path);
}
