// SPDX-License-Identifier: GPL-2.0
#include "wpstat_cli.h"
#include "stalls.h"

/* ---- stalls: who stalled, on which file, why ---------------------------- */

/* Read /proc/wpstat/stalls, or say in one line why not. */
int read_stalls(struct wpstat_stall_snapshot *s)
{
	int err = wpstat_stalls_read(NULL, s);
	const char *missing;

	switch (-err) {
	case 0:
		missing = stall_missing_column(s);
		if (!missing)
			return 0;
		wpstat_stalls_free(s);
		return runtime_error("%s has no column %s (module and wpstat of different versions?)",
				     WPSTAT_STALLS_PATH, missing);
	case ENOENT:
		if (!module_interface_present())
			return module_not_loaded();
		return runtime_error("%s is missing: the loaded module has no per-process stalls (older than this wpstat?)",
				     WPSTAT_STALLS_PATH);
	case EACCES:
	case EPERM:
		return runtime_error("permission denied reading %s: per-process stalls are root-only (run as root)",
				     WPSTAT_STALLS_PATH);
	case EPROTO:
		return runtime_error("%s has an unexpected format (module and wpstat of different versions?)",
				     WPSTAT_STALLS_PATH);
	default:
		return runtime_error("cannot read %s: %s", WPSTAT_STALLS_PATH,
				     strerror(-err));
	}
}

const struct stall_cause_info stall_causes[CAUSE_NR] = {
#define WPSTAT_STALL(...)
#define STALL_WHERE_IN		STALL_IN_FAULT
#define STALL_WHERE_OUT		STALL_OUTSIDE
#define STALL_WHERE_SELF	STALL_SELF
#define WPSTAT_STALL_CAUSE(id, name, unit, time, fault)		\
	[CAUSE_##id] = { #name, #unit, STALL_WHERE_##fault },
#include "wpstat_stalls.def"
#undef WPSTAT_STALL_CAUSE
#undef WPSTAT_STALL
};

/* A field's role from its kind and unit; an impossible pair is undefined. */
#define STALL_ROLE_SUM_EVENTS	STALL_EVENTS
#define STALL_ROLE_SUM_NS	STALL_NS
#define STALL_ROLE_MAX_NS	STALL_MAX_NS
#define STALL_ROLE_SUM_UNNAMED	STALL_UNNAMED_NS
#define STALL_ROLE_SUM_CPU	STALL_CPU_NS
#define STALL_ROLE_SUM_RUNQ	STALL_RUNQ_NS
#define STALL_ROLE_SUM_PTES	STALL_CAUSED_PTES

const struct stall_field_info stall_fields[STALL_NR] = {
#define WPSTAT_STALL(id, name, like, kind, unit, cause, help) \
	[STALL_##id] = { #name, CAUSE_##cause, STALL_ROLE_##kind##_##unit, help },
#include "wpstat_stalls.def"
#undef WPSTAT_STALL
};

/*
 * The first field of the module's list that @s has no column for, or
 * NULL.  Columns are found by name: a renamed one must fail loudly, not
 * read as a cause that never happened.
 */
const char *stall_missing_column(const struct wpstat_stall_snapshot *s)
{
	int f;

	for (f = 0; f < STALL_NR; f++)
		if (wpstat_counter_index(&s->cols, stall_fields[f].name) < 0)
			return stall_fields[f].name;
	return NULL;
}

static void stall_cols_find(const struct wpstat_snapshot *cols,
			    struct stall_cols *sc)
{
	int f;

	for (f = 0; f < STALL_NR; f++)
		sc->col[f] = wpstat_counter_index(cols, stall_fields[f].name);
}

void stall_sum_add(struct stall_sum *sum, const struct stall_cols *sc,
		   const uint64_t *val, const bool *avail)
{
	int f, k, c;

	for (f = 0; f < STALL_NR; f++) {
		c = sc->col[f];
		k = stall_fields[f].cause;
		if (c < 0 || !avail[c])
			continue;
		switch (stall_fields[f].role) {
		case STALL_EVENTS:
			sum->events[k] += val[c];
			break;
		case STALL_NS:
			sum->ns[k] += val[c];
			sum->have_ns[k] = true;
			break;
		case STALL_MAX_NS:
			if (!sum->have_max[k] || val[c] > sum->max_ns[k])
				sum->max_ns[k] = val[c];
			sum->have_max[k] = true;
			break;
		case STALL_UNNAMED_NS:
			sum->unnamed_ns += val[c];
			sum->have_unnamed = true;
			break;
		case STALL_CPU_NS:
			sum->cpu_ns += val[c];
			sum->have_cpu = true;
			break;
		case STALL_RUNQ_NS:
			sum->runq_ns += val[c];
			sum->have_runq = true;
			break;
		case STALL_CAUSED_PTES:
			sum->wp_caused += val[c];
			sum->have_wp_caused = true;
			break;
		}
	}
}

bool stall_have_time(const struct stall_sum *s)
{
	int k;

	for (k = 0; k < CAUSE_NR; k++)
		if (s->have_ns[k])
			return true;
	return false;
}

/* The time of the named waits, wherever they were: in faults or write(2). */
uint64_t stall_waits_ns(const struct stall_sum *s)
{
	uint64_t n = 0;
	int k;

	for (k = 0; k < CAUSE_FAULT; k++)
		n += s->ns[k];
	return n;
}

/*
 * Time in write faults that is not one of the waits counted on their
 * own: the module's unnamed time, measured fault by fault, where it has
 * it; else fault less the waits that can be made inside one (IN), exact
 * for a process that only stores to mappings (a stable, journal or pause
 * wait may also be in write(2)); a sync's own waits (OUT) never are.
 */
uint64_t stall_fault_own_ns(const struct stall_sum *s)
{
	uint64_t waits = 0;
	int k;

	for (k = 0; k < CAUSE_FAULT; k++)
		if (stall_causes[k].where == STALL_IN_FAULT)
			waits += s->ns[k];

	if (s->have_unnamed)
		return s->unnamed_ns;
	return s->ns[CAUSE_FAULT] > waits ? s->ns[CAUSE_FAULT] - waits : 0;
}

/*
 * Of the faults' unnamed time, what is neither on a CPU nor waiting for
 * one: a sleep no probe names.  The module caps each fault's CPU and run
 * delay at its unnamed time, so the sums leave no negative residue; a
 * delta across a reset could, and reads 0.  False without the columns.
 */
bool stall_fault_sleep_ns(const struct stall_sum *s, uint64_t *ns)
{
	uint64_t sched = s->cpu_ns + s->runq_ns;

	*ns = 0;
	if (!s->have_unnamed || !s->have_cpu || !s->have_runq)
		return false;
	*ns = s->unnamed_ns > sched ? s->unnamed_ns - sched : 0;
	return true;
}

/*
 * The time stalled.  Adding fault_ns to the waits would count twice the
 * waits made inside write faults (all read-in and wb waits, and the
 * stable, journal and pause waits of a store to a mapping).  So: the
 * waits, and the faults' own (unnamed) time.
 */
uint64_t stall_total_ns(const struct stall_sum *s)
{
	return stall_waits_ns(s) + stall_fault_own_ns(s);
}

static uint64_t stall_events(const struct stall_sum *s)
{
	uint64_t n = 0;
	int k;

	for (k = 0; k < CAUSE_NR; k++)
		n += s->events[k];
	return n;
}

/* The worst single stall of any cause; false if no maximum is known. */
bool stall_worst_ns(const struct stall_sum *s, uint64_t *worst)
{
	bool have = false;
	int k;

	*worst = 0;
	for (k = 0; k < CAUSE_NR; k++) {
		if (!s->have_max[k])
			continue;
		have = true;
		if (s->max_ns[k] > *worst)
			*worst = s->max_ns[k];
	}
	return have;
}

/*
 * The cause with the most time of its own (fault: less the waits inside
 * it).  Without any time (no timing probe, or no wait lasted a
 * nanosecond), the wait or pause with the most events; else "faults":
 * only faults were seen; "none" for a row of no wait and no fault (a
 * process that only synced the file: wp_caused).
 */
const char *stall_dominant(const struct stall_sum *s)
{
	uint64_t own[CAUSE_NR], best = 0;
	int k, found = -1;

	for (k = 0; k < CAUSE_FAULT; k++)
		own[k] = s->ns[k];
	own[CAUSE_FAULT] = stall_fault_own_ns(s);
	for (k = 0; k < CAUSE_NR; k++) {
		if (own[k] > best) {
			best = own[k];
			found = k;
		}
	}
	if (found < 0) {
		for (k = 0; k < CAUSE_NR; k++) {
			if (k != CAUSE_FAULT && s->events[k] > best) {
				best = s->events[k];
				found = k;
			}
		}
	}
	if (found < 0 && !s->events[CAUSE_FAULT] && !s->ns[CAUSE_FAULT])
		return "none";
	return found < 0 ? "faults" : stall_causes[found].name;
}

void stall_list_free(struct stall_list *l)
{
	size_t i;

	for (i = 0; i < l->nfiles; i++)
		free(l->files[i].path);
	free(l->files);
	free(l->items);
	free(l->deltas);
	memset(l, 0, sizeof(*l));
}

/* The module's key of a row: process, then file. */
static int stall_key_cmp(const struct wpstat_stall_row *a,
			 const struct wpstat_stall_row *b)
{
	if (a->tgid != b->tgid)
		return a->tgid < b->tgid ? -1 : 1;
	return wpstat_row_key_cmp(&a->file, &b->file);
}

static int stall_row_ptr_cmp(const void *a, const void *b)
{
	return stall_key_cmp(*(const struct wpstat_stall_row *const *)a,
			     *(const struct wpstat_stall_row *const *)b);
}

/*
 * The rows of @after (of process @pid only, if not 0) as they are
 * (@before NULL), or only those that changed since @before, with their
 * change.  Rows are matched on tgid, dev, inode and generation.
 */
int stall_list_build(const struct wpstat_stall_snapshot *before,
		     const struct wpstat_stall_snapshot *after,
		     uint64_t pid, struct stall_list *l)
{
	const struct wpstat_stall_row **index = NULL;
	int bcol[WPSTAT_MAX_COUNTERS];
	size_t i, nafter = after->nrows ? after->nrows : 1;

	memset(l, 0, sizeof(*l));
	l->snap = after;
	stall_cols_find(&after->cols, &l->cols);
	l->items = calloc(nafter, sizeof(*l->items));
	if (!l->items)
		goto nomem;
	if (before) {
		l->deltas = calloc(nafter, sizeof(*l->deltas));
		index = malloc((before->nrows ? before->nrows : 1) *
			       sizeof(*index));
		if (!l->deltas || !index)
			goto nomem;
		for (i = 0; i < before->nrows; i++)
			index[i] = &before->rows[i];
		qsort(index, before->nrows, sizeof(*index), stall_row_ptr_cmp);
		/* Columns by name: a reloaded module may have others. */
		wpstat_column_map(&after->cols, &before->cols, bcol);
	}
	for (i = 0; i < after->nrows; i++) {
		const struct wpstat_stall_row *a = &after->rows[i];
		struct stall_item *it = &l->items[l->n];

		if (pid && a->tgid != pid)
			continue;
		it->row = a;
		it->val = a->file.val;
		it->avail = a->file.avail;
		if (before) {
			const struct wpstat_stall_row **hit;
			struct wpstat_row *d = &l->deltas[l->n];

			hit = bsearch(&a, index, before->nrows, sizeof(*index),
				      stall_row_ptr_cmp);
			if (!wpstat_row_delta(&after->cols, &a->file,
					     hit ? &(*hit)->file : NULL, bcol, d))
				continue;
			it->val = d->val;
			it->avail = d->avail;
		}
		stall_sum_add(&it->sum, &l->cols, it->val, it->avail);
		it->stall_ns = stall_total_ns(&it->sum);
		it->events = stall_events(&it->sum);
		l->n++;
	}
	free(index);
	return 0;
nomem:
	free(index);
	stall_list_free(l);
	return -ENOMEM;
}

/* Largest first, by time or by events, then the other; then by key. */
static int stall_item_cmp(const void *pa, const void *pb, void *psort)
{
	const struct stall_item *a = pa, *b = pb;
	bool by_count = *(const enum stall_sort *)psort == STALL_SORT_COUNT;
	uint64_t a1 = by_count ? a->events : a->stall_ns;
	uint64_t b1 = by_count ? b->events : b->stall_ns;
	uint64_t a2 = by_count ? a->stall_ns : a->events;
	uint64_t b2 = by_count ? b->stall_ns : b->events;

	if (a1 != b1)
		return a1 > b1 ? -1 : 1;
	if (a2 != b2)
		return a2 > b2 ? -1 : 1;
	return stall_key_cmp(a->row, b->row);
}

void stall_list_sort(struct stall_list *l, enum stall_sort sort)
{
	qsort_r(l->items, l->n, sizeof(*l->items), stall_item_cmp, &sort);
}

static int file_row_key_cmp(const void *a, const void *b)
{
	return wpstat_row_key_cmp(((const struct file_row *)a)->row,
		       ((const struct file_row *)b)->row);
}

/*
 * Paths for the files of the first @limit items: each file once, from
 * @known (a file list that has paths already, may be NULL), then from
 * @cache (top) or a fresh search (named files, mappings, @dirs).
 */
void stall_list_resolve(struct stall_list *l, size_t limit,
			const struct file_list *known,
			struct path_cache *cache, char *const *named,
			char *const *dirs, size_t ndirs)
{
	size_t i, j, n = l->n < limit ? l->n : limit;

	l->files = calloc(n ? n : 1, sizeof(*l->files));
	if (!l->files)
		return;		/* out of memory: stay with dev:ino */
	for (i = 0; i < n; i++)
		l->files[i].row = &l->items[i].row->file;
	qsort(l->files, n, sizeof(*l->files), file_row_key_cmp);
	for (i = j = 0; i < n; i++)	/* unique */
		if (!j || wpstat_row_key_cmp(l->files[j - 1].row, l->files[i].row))
			l->files[j++] = l->files[i];
	l->nfiles = j;
	for (i = 0; known && i < l->nfiles; i++) {
		const struct file_row *k;

		for (j = 0, k = NULL; j < known->n && !k; j++)
			if (known->rows[j].path &&
			    !wpstat_row_key_cmp(known->rows[j].row, l->files[i].row))
				k = &known->rows[j];
		if (k)
			l->files[i].path = strdup(k->path);
	}
	if (cache)
		resolve_cached(cache, l->files, l->nfiles, dirs, ndirs);
	else
		resolve_paths(l->files, l->nfiles, named, dirs, ndirs);
	for (i = 0; i < n; i++) {
		struct file_row key = { .row = &l->items[i].row->file };
		const struct file_row *f;

		f = bsearch(&key, l->files, l->nfiles, sizeof(*l->files),
			    file_row_key_cmp);
		l->items[i].path = f ? f->path : NULL;
	}
}

/* ---- cgroup ids to paths ------------------------------------------------ */

static struct cgroup_entry *cgroup_map_find(const struct cgroup_map *m,
					    uint64_t id)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->e[i].id == id)
			return &m->e[i];
	return NULL;
}

/* A new entry for @id, path unknown; NULL when out of memory. */
static struct cgroup_entry *cgroup_map_add(struct cgroup_map *m, uint64_t id)
{
	struct cgroup_entry *e;

	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 16;

		e = realloc(m->e, cap * sizeof(*e));
		if (!e)
			return NULL;
		m->e = e;
		m->cap = cap;
	}
	e = &m->e[m->n++];
	e->id = id;
	e->path = NULL;
	return e;
}

void cgroup_map_free(struct cgroup_map *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		free(m->e[i].path);
	free(m->e);
	free(m->mount);
	memset(m, 0, sizeof(*m));
}

/*
 * /sys/fs/cgroup where it is the cgroup2 mount (unified hierarchy), else
 * the first cgroup2 mount in mountinfo (hybrid: /sys/fs/cgroup/unified).
 */
static char *cgroup2_mount(void)
{
	char *line = NULL, *found = NULL;
	struct statfs sfs;
	size_t n = 0;
	FILE *f;

	if (!statfs(CGROUP2_DEFAULT_MOUNT, &sfs) &&
	    (unsigned long)sfs.f_type == CGROUP2_SUPER_MAGIC_NR)
		return strdup(CGROUP2_DEFAULT_MOUNT);
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return NULL;
	while (!found && getline(&line, &n, f) > 0) {
		char mnt[PATH_MAX], *sep;
		int pos = 0;

		/* id parent dev root mountpoint opts... - fstype ... */
		sep = strstr(line, " - cgroup2 ");
		if (!sep || sscanf(line, "%*s %*s %*s %*s %n", &pos) != 0 ||
		    !pos)
			continue;
		line[pos + strcspn(line + pos, " ")] = '\0';
		wpstat_unescape_octal(mnt, sizeof(mnt), line + pos);
		found = strdup(mnt);
	}
	free(line);
	fclose(f);
	return found;
}

struct cgroup_walk {
	struct cgroup_map *map;
	size_t wanted;		/* entries still without a path */
	char path[PATH_MAX];	/* from the mount, without a trailing '/' */
};

static void cgroup_walk_found(struct cgroup_walk *w, uint64_t ino)
{
	struct cgroup_entry *e = cgroup_map_find(w->map, ino);

	if (!e || e->path)
		return;
	e->path = strdup(w->path[0] ? w->path : "/");
	if (e->path && w->wanted)	/* or one not found by an earlier walk */
		w->wanted--;
}

/* Every directory under @fd (taken), depth first; w->path names it. */
static void cgroup_walk_dir(struct cgroup_walk *w, int fd, int depth)
{
	size_t len = strlen(w->path);
	struct dirent *de;
	DIR *dir;

	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return;
	}
	while (w->wanted && (de = readdir(dir))) {
		uint64_t ino = de->d_ino;
		struct stat st;
		int sub;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (de->d_type == DT_UNKNOWN) {
			if (fstatat(dirfd(dir), de->d_name, &st,
				    AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode))
				continue;
			ino = st.st_ino;
		} else if (de->d_type != DT_DIR) {
			continue;
		}
		if (snprintf(w->path + len, sizeof(w->path) - len, "/%s",
			     de->d_name) >= (int)(sizeof(w->path) - len))
			continue;
		cgroup_walk_found(w, ino);
		if (depth < CGROUP_WALK_MAX_DEPTH) {
			sub = openat(dirfd(dir), de->d_name,
				     O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
				     O_CLOEXEC);
			if (sub >= 0)
				cgroup_walk_dir(w, sub, depth + 1);
		}
		w->path[len] = '\0';
	}
	closedir(dir);
}

/* Paths for the cgroups of the first @limit items; one walk at most. */
void cgroup_map_resolve(struct cgroup_map *m, struct stall_list *l,
			size_t limit)
{
	struct cgroup_walk *w;
	size_t i, n = l->n < limit ? l->n : limit, wanted = 0;
	struct stat st;
	int fd;

	for (i = 0; i < n; i++) {
		uint64_t id = l->items[i].row->cgroup;

		if (id && !cgroup_map_find(m, id) && cgroup_map_add(m, id))
			wanted++;
	}
	if (!m->mount_looked_up) {
		m->mount = cgroup2_mount();
		m->mount_looked_up = true;
	}
	w = wanted && m->mount ? calloc(1, sizeof(*w)) : NULL;
	if (w) {
		w->map = m;
		w->wanted = wanted;
		fd = open(m->mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0 && !fstat(fd, &st)) {
			cgroup_walk_found(w, st.st_ino);	/* the root */
			cgroup_walk_dir(w, fd, 0);
		} else if (fd >= 0) {
			close(fd);
		}
		free(w);
	}
	for (i = 0; i < n; i++) {
		const struct cgroup_entry *e;

		e = cgroup_map_find(m, l->items[i].row->cgroup);
		l->items[i].cgroup_path = e ? e->path : NULL;
	}
}
